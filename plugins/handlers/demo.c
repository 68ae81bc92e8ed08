/*  demo.c -- the shipped demo handlers, as XXL-JOB's SampleXxlJob.

    demoJobHandler      logs its param and a few beats, succeeds
    shardingJobHandler  logs "shard index = i, total = n", succeeds
    demoJobHandler2     a per-job lifecycle, as XXL-JOB's
                        @XxlJob(value = "demoJobHandler2", init = "init",
                        destroy = "destroy"): its init logs and makes the
                        job's state (a run counter), each run logs how
                        many runs the job had on this agent since init,
                        its destroy frees the state

    demoJobHandler is marked XXL_HANDLER_IN_PROCESS: harmless and quick, it
    runs on a worker thread inside the agent.  shardingJobHandler runs the
    default way, isolated in an xxl-runner process, to show both modes.
*/

#include <xxl/handler.h>
#include <stdlib.h>

static int
s_demo (xxl_run_t *run)
{
    xxl_run_log (run, "XXL-JOB, Hello World.");
    xxl_run_log (run, "param: %s", xxl_run_param (run));
    for (int beat = 0; beat < 5 && !xxl_run_cancelled (run); beat++)
        xxl_run_log (run, "beat at: %d", beat);
    return xxl_run_success (run, NULL);
}

static int
s_sharding (xxl_run_t *run)
{
    int index = xxl_run_shard_index (run);
    int total = xxl_run_shard_total (run);
    xxl_run_log (run, "shard index = %d, total = %d", index, total);
    for (int i = 0; i < total && !xxl_run_cancelled (run); i++) {
        if (i == index)
            xxl_run_log (run, "shard %d: matches, processing", i);
        else
            xxl_run_log (run, "shard %d: skipped", i);
    }
    return xxl_run_success (run, NULL);
}

//  demoJobHandler2's job state, made by its init for one job id
typedef struct {
    long runs;
} demo2_t;

//  Before the job's first run on this agent, inside that run: its log
//  gets the line
static int
s_demo2_init (xxl_run_t *run, void **job_state)
{
    demo2_t *job = (demo2_t *) calloc (1, sizeof (demo2_t));
    if (!job) {
        xxl_run_fail (run, "out of memory");
        return -1;
    }
    xxl_run_log (run, "init: job %lld", (long long) xxl_run_job_id (run));
    *job_state = job;
    return 0;
}

static int
s_demo2 (xxl_run_t *run)
{
    demo2_t *job = (demo2_t *) xxl_run_job_state (run);
    if (!job)                           //  an agent without lifecycles
        return xxl_run_fail (run, "job state missing: this agent ran no init");
    job->runs++;
    xxl_run_log (run, "XXL-JOB, Hello World.");
    xxl_run_log (run, "run %ld of this job since its init", job->runs);
    return xxl_run_success (run, NULL);
}

//  When the job's queue is retired (idle, replaced, the agent stopping)
static void
s_demo2_destroy (int64_t job_id, void *plugin_state, void *job_state)
{
    (void) job_id;
    (void) plugin_state;
    free (job_state);
}

static const xxl_handler_t s_handlers [] = {
    { "demoJobHandler", s_demo, XXL_HANDLER_IN_PROCESS },
    { "shardingJobHandler", s_sharding, 0 },
    { "demoJobHandler2", s_demo2, XXL_HANDLER_IN_PROCESS },
    { NULL, NULL, 0 }
};

//  Lifecycles run in the agent's process: their handlers are flagged
//  XXL_HANDLER_IN_PROCESS
static const xxl_handler_lifecycle_t s_lifecycle [] = {
    { "demoJobHandler2", s_demo2_init, s_demo2_destroy },
    { NULL, NULL, NULL }
};

XXL_HANDLER_PLUGIN2 ("demo", "1.0", NULL, NULL, s_handlers, s_lifecycle)
