/*  demo.c -- the shipped demo handlers, as XXL-JOB's SampleXxlJob.

    demoJobHandler      logs its param and a few beats, succeeds
    shardingJobHandler  logs "shard index = i, total = n", succeeds

    demoJobHandler is marked XXL_HANDLER_IN_PROCESS: harmless and quick, it
    runs on a worker thread inside the agent.  shardingJobHandler runs the
    default way, isolated in an xxl-runner process, to show both modes.
*/

#include <xxl/handler.h>

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

static const xxl_handler_t s_handlers [] = {
    { "demoJobHandler", s_demo, XXL_HANDLER_IN_PROCESS },
    { "shardingJobHandler", s_sharding, 0 },
    { NULL, NULL, 0 }
};

XXL_HANDLER_PLUGIN ("demo", "1.0", NULL, NULL, s_handlers)
