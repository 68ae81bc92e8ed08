/*  test_executor_stress.c -- liveness of agent/xxl_executor's pool under a
    random mix: many jobs; in-process runs that sleep, do nothing, spin
    until cancelled, or outlive their timeout; isolated runs (xxl-runner)
    and GLUE_SHELL scripts, some of them timing out (SIGTERM to their
    group); kills; SERIAL_EXECUTION, DISCARD_LATER and COVER_EARLY; a
    changed handler replacing a job's queue; runs queued in holds
    (xxl_executor_hold_wakes) that last long enough for the idle reaper to
    run inside them; bursts, then quiet long enough for the extra threads
    and the idle queues to age out (idle_reap_s 1: thread_idle_ms 1 s),
    then bursts again; pools of 2 and 3 threads (runs wait for one), of 8,
    and sized to the machine; hogs (a job per CPU whose queue of 1 ms runs
    is kept topped up); some rounds end in a stop while runs run and wait;
    in-process runs of a handler with a per-job lifecycle
    (tests/plugins/lifecycle.so: init before a job's first run, destroy
    when its queue is retired), some asking their init to fail.

    Checks: every accepted run gets exactly one result, and it is one its
    run may have (its handler's, or 500 with the reason of a kill, cover
    or replacement of its job after it was accepted, or of the stop;
    never anything else, such as the idle reaper's; a refused run
    disturbs nothing); a job's undisturbed runs end in the order queued;
    runs keep ending (no result for 15 s while runs are outstanding fails,
    with the runs and the pool's counts printed); and probes: a run queued
    on a pool left idle starts (ends) within 3 s, as does one queued right
    after a run of another job timed out, one queued while more runs than
    CPUs block in their runs, and one queued among the hogs.  The 3 s are
    a liveness bound, not a speed assertion (a probe takes milliseconds).
    Lifecycles: once every executor is gone, each job id had exactly one
    destroy per successful init, and the plugin saw no broken contract (a
    destroy during a run of its queue, another job's state).

    Random choices come from a seed, printed first; XXL_STRESS_SEED=N
    replays its sequence (thread timing still varies);
    XXL_STRESS_SECONDS (default 20) is how long it runs.  Environment as
    test_executor: XXL_TEST_PLUGINS (test_handlers.so, lifecycle.so),
    XXL_RUNNER.
    Last line: "N passed, M failed".
*/

#define _GNU_SOURCE
#include "xxl_executor.h"
#include "xxl_handlers.h"

#include <czmq.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "xxl_test_agent.h"

//  Stop at the first few failures' worth of detail
#define MAX_REPORTS     20

static int64_t
s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

//  xorshift64*: the sequence of choices, replayable from the seed
static uint64_t s_rng;

static uint32_t
s_rand (uint32_t bound)
{
    s_rng ^= s_rng >> 12;
    s_rng ^= s_rng << 25;
    s_rng ^= s_rng >> 27;
    return bound? (uint32_t) ((s_rng * 2685821657736338717ULL) >> 33) % bound: 0;
}

//  ---------------------------------------------------------------------
//  Jobs and runs

//  What a job runs (its identity: a run of another family on the same job
//  replaces its queue)
enum { FAM_SLEEP_IN, FAM_EMPTY_IN, FAM_SPIN_IN, FAM_ISOLATED, FAM_GLUE, FAM_LIFE, FAM_COUNT };

//  What a run is expected to do
enum {
    KIND_SLEEP,         //  sleepInJobHandler, short: 200
    KIND_SLEEP_TIMEOUT, //  sleepInJobHandler outliving timeout 1 s: 502
    KIND_EMPTY,         //  emptyInJobHandler: 200
    KIND_SPIN_TIMEOUT,  //  spinInJobHandler, timeout 1 s: 502
    KIND_ISO,           //  sleepJobHandler in xxl-runner, short: 200
    KIND_ISO_TIMEOUT,   //  sleepJobHandler in xxl-runner, timeout 1 s: 502
    KIND_GLUE,          //  GLUE_SHELL sleep, short: 200
    KIND_GLUE_TIMEOUT,  //  GLUE_SHELL sleep 5, timeout 1 s: 502
    KIND_LIFE,          //  lifeJobHandler (a lifecycle), in process: 200
    KIND_LIFE_FAIL      //  ... its init asked to fail: 500 when init ran, else 200
};

static const char *s_kind_names [] = {
    "sleep", "sleep-timeout", "empty", "spin-timeout", "isolated", "isolated-timeout",
    "glue", "glue-timeout", "life", "life-init-fails"
};

#define JOBS_MAX        400
#define RUNS_MAX        200000
#define JOB_BASE        7000

typedef struct {
    int family;
    int64_t disturbed;          //  how many kills, covers, replacements so far
    int64_t last_done;          //  logId of its last undisturbed result
    int64_t outstanding;        //  runs accepted, no result yet
} job_t;

//  The last ids are kept out of the random mix: the hogs and their probe
#define JOBS_RANDOM     (JOBS_MAX - 40)
#define JOB_HOG         (JOB_BASE + JOBS_MAX - 32)     //  up to 31 hogs
#define JOB_HOG_PROBE   (JOB_BASE + JOBS_MAX - 36)

typedef struct {
    int64_t job_id;
    int kind;
    int64_t disturbed_at_accept;
    int64_t accepted_ms;
    int done;
    int code;
    int64_t done_ms;
} run_rec_t;

static char s_logdir [256];
static xxl_handlers_t *s_handlers = NULL;
static job_t s_jobs [JOBS_MAX];
static run_rec_t *s_runs;
static int64_t s_log_base = 100000;
static int64_t s_next_log = 0;          //  index of the next logId
static int64_t s_outstanding = 0;       //  accepted, no result yet
static int64_t s_accepted = 0, s_refused = 0, s_results = 0;
static int s_reports = 0;
static int s_hog_ms = -1;               //  >= 0: what KIND_SLEEP sleeps
static int s_stopping = 0;              //  stop() under load: its reason allowed
static int64_t s_last_result_ms = 0;

static int
s_family_of (int kind)
{
    switch (kind) {
        case KIND_SLEEP: case KIND_SLEEP_TIMEOUT: return FAM_SLEEP_IN;
        case KIND_EMPTY: return FAM_EMPTY_IN;
        case KIND_SPIN_TIMEOUT: return FAM_SPIN_IN;
        case KIND_ISO: case KIND_ISO_TIMEOUT: return FAM_ISOLATED;
        case KIND_LIFE: case KIND_LIFE_FAIL: return FAM_LIFE;
        default: return FAM_GLUE;
    }
}

static job_t *
s_job (int64_t job_id)
{
    return &s_jobs [job_id - JOB_BASE];
}

//  Queues one run of kind on job_id with strategy; 0 accepted, -1 refused
//  (msg says why)
static int
s_trigger (xxl_executor_t *executor, int64_t job_id, int kind, const char *strategy,
           char *msg, size_t msglen)
{
    if (s_next_log >= RUNS_MAX) {
        snprintf (msg, msglen, "test: out of run records");
        return -1;
    }
    job_t *job = s_job (job_id);
    char param [32];
    xxl_trigger_t trigger = { 0 };
    trigger.job_id = job_id;
    trigger.log_id = s_log_base + s_next_log;
    trigger.log_date_time = (int64_t) time (NULL) * 1000;
    trigger.block_strategy = strategy;
    trigger.shard_total = 1;
    trigger.glue_type = "BEAN";
    trigger.params = param;
    int timeout = kind == KIND_SLEEP_TIMEOUT || kind == KIND_SPIN_TIMEOUT
               || kind == KIND_ISO_TIMEOUT || kind == KIND_GLUE_TIMEOUT;
    trigger.timeout_s = timeout? 1: s_rand (3) == 0? 30: 0;
    switch (kind) {
        case KIND_SLEEP:
            trigger.handler = "sleepInJobHandler";
            if (s_hog_ms >= 0)
                snprintf (param, sizeof param, "%d", s_hog_ms);
            else
                snprintf (param, sizeof param, "%u", s_rand (4) == 0? s_rand (400): s_rand (30));
            break;
        case KIND_SLEEP_TIMEOUT:
            trigger.handler = "sleepInJobHandler";
            snprintf (param, sizeof param, "5000");
            break;
        case KIND_EMPTY:
            trigger.handler = "emptyInJobHandler";
            param [0] = 0;
            break;
        case KIND_SPIN_TIMEOUT:
            trigger.handler = "spinInJobHandler";
            param [0] = 0;
            break;
        case KIND_ISO:
            trigger.handler = "sleepJobHandler";
            snprintf (param, sizeof param, "%u", s_rand (100));
            break;
        case KIND_ISO_TIMEOUT:
            trigger.handler = "sleepJobHandler";
            snprintf (param, sizeof param, "5000");
            break;
        case KIND_GLUE:
        case KIND_GLUE_TIMEOUT:
            trigger.glue_type = "GLUE_SHELL";
            trigger.glue_source = "sleep \"$1\"\n";
            trigger.glue_updatetime = 1700000000000LL;
            snprintf (param, sizeof param, kind == KIND_GLUE? "0.0%u": "5", s_rand (10));
            break;
        case KIND_LIFE:
        case KIND_LIFE_FAIL:
            trigger.handler = "lifeJobHandler";
            snprintf (param, sizeof param, "%s", kind == KIND_LIFE_FAIL? "fail-init": "");
            break;
    }
    int family = s_family_of (kind);
    //  Counted before the call: a run accepted onto another family's job
    //  replaces its queue, and a COVER_EARLY one covers it
    //  A refused run changes nothing: it neither replaces nor covers
    int64_t disturbed_before = job->disturbed;
    int replaces = family != job->family;
    int covers = strategy && streq (strategy, "COVER_EARLY");
    if (replaces || covers)
        job->disturbed++;
    int rc = xxl_executor_run (executor, &trigger, msg, msglen);
    if (rc) {
        job->disturbed = disturbed_before;
        s_refused++;
        return -1;
    }
    job->family = family;
    run_rec_t *rec = &s_runs [s_next_log++];
    rec->job_id = job_id;
    rec->kind = kind;
    rec->disturbed_at_accept = job->disturbed;
    rec->accepted_ms = s_now ();
    job->outstanding++;
    s_accepted++;
    s_outstanding++;
    return 0;
}

//  A result: the run's, once, and one the run may have
static void
s_check_result (const xxl_result_t *result)
{
    int64_t index = result->log_id - s_log_base;
    if (index < 0 || index >= s_next_log) {
        xxl_test_failed++;
        if (s_reports++ < MAX_REPORTS)
            printf ("FAIL: result for a logId never accepted: %" PRId64 " %d %s\n",
                    result->log_id, result->code, result->msg? result->msg: "");
        return;
    }
    run_rec_t *rec = &s_runs [index];
    if (rec->done) {
        xxl_test_failed++;
        if (s_reports++ < MAX_REPORTS)
            printf ("FAIL: second result for logId %" PRId64 ": %d %s\n",
                    result->log_id, result->code, result->msg? result->msg: "");
        return;
    }
    rec->done = 1;
    rec->code = result->code;
    rec->done_ms = s_now ();
    s_outstanding--;
    s_results++;
    s_last_result_ms = rec->done_ms;
    job_t *job = s_job (rec->job_id);
    job->outstanding--;
    int disturbed = job->disturbed > rec->disturbed_at_accept;
    int timeout = rec->kind == KIND_SLEEP_TIMEOUT || rec->kind == KIND_SPIN_TIMEOUT
               || rec->kind == KIND_ISO_TIMEOUT || rec->kind == KIND_GLUE_TIMEOUT;
    const char *msg = result->msg? result->msg: "";
    int ok = result->code == (timeout? 502: 200);
    if (!ok && rec->kind == KIND_LIFE_FAIL)
        ok = result->code == 500 && streq (msg, "job init failed: refused on purpose");
    if (!ok && disturbed && result->code == 500)
        ok = strstr (msg, "stress kill") || strstr (msg, "Cover Early")
          || strstr (msg, "change jobhandler");
    if (!ok && s_stopping && result->code == 500)
        ok = strstr (msg, "stress stop [job running, killed]")
          || strstr (msg, "stress stop [job not executed, in the job queue, killed.]");
    if (!ok) {
        xxl_test_failed++;
        if (s_reports++ < MAX_REPORTS)
            printf ("FAIL: logId %" PRId64 " (job %" PRId64 ", %s%s) ended %d \"%s\" after"
                    " %" PRId64 " ms\n", result->log_id, rec->job_id, s_kind_names [rec->kind],
                    disturbed? ", disturbed": "", result->code, msg,
                    rec->done_ms - rec->accepted_ms);
    }
    else
    if (!disturbed && !(s_stopping && result->code == 500)) {
        //  A job's undisturbed runs end in the order they were queued (a
        //  stop fails the queued ones before the running one ends)
        if (job->last_done > result->log_id) {
            xxl_test_failed++;
            if (s_reports++ < MAX_REPORTS)
                printf ("FAIL: job %" PRId64 ": logId %" PRId64 " ended after %" PRId64 "\n",
                        rec->job_id, job->last_done, result->log_id);
        }
        else
            job->last_done = result->log_id;
    }
}

static void
s_drain (xxl_executor_t *executor)
{
    xxl_result_t results [256];
    size_t count;
    while ((count = xxl_executor_take_many (executor, results, 256)) > 0)
        for (size_t i = 0; i < count; i++) {
            s_check_result (&results [i]);
            free (results [i].msg);
        }
}

//  Takes results for ms (polling the executor's fd)
static void
s_pump (xxl_executor_t *executor, int ms)
{
    int64_t until = s_now () + ms;
    do {
        s_drain (executor);
        int64_t left = until - s_now ();
        if (left <= 0)
            break;
        struct pollfd item = { xxl_executor_fd (executor), POLLIN, 0 };
        poll (&item, 1, (int) (left > 50? 50: left));
    } while (1);
    s_drain (executor);
}

static void
s_dump (xxl_executor_t *executor, const char *why)
{
    size_t peak = 0;
    size_t threads = xxl_executor_threads (executor, &peak);
    printf ("  %s: %" PRId64 " outstanding; pool: %zu threads (peak %zu), %zu active, %zu"
            " pending, %zu jobs\n", why, s_outstanding, threads, peak,
            xxl_executor_active (executor), xxl_executor_pending (executor),
            xxl_executor_jobs (executor));
    int shown = 0;
    int64_t now = s_now ();
    for (int64_t i = 0; i < s_next_log && shown < 20; i++)
        if (!s_runs [i].done) {
            run_rec_t *rec = &s_runs [i];
            printf ("    logId %" PRId64 " job %" PRId64 " %s, accepted %" PRId64 " ms ago,"
                    " %s, job busy %d\n", s_log_base + i, rec->job_id, s_kind_names [rec->kind],
                    now - rec->accepted_ms,
                    xxl_executor_running (executor, s_log_base + i)? "in flight": "not in flight",
                    xxl_executor_busy (executor, rec->job_id));
            shown++;
        }
}

//  Waits until every accepted run has its result; runs must keep ending:
//  15 s without a result while some are outstanding fails (the longest
//  run here ends within about 2 s: timeout 1 s, then 500 ms of grace)
static int
s_settle (xxl_executor_t *executor, const char *label)
{
    s_last_result_ms = s_now ();
    while (s_outstanding > 0) {
        s_pump (executor, 100);
        if (s_now () - s_last_result_ms > 15000) {
            s_dump (executor, label);
            XXL_CHECK_MSG (0, "%s: no result for 15 s, %" PRId64 " run(s) outstanding", label,
                           s_outstanding);
            return -1;
        }
    }
    return 0;
}

//  A probe: an empty in-process run on job_id ends within 3 s of being
//  queued; the other runs' results are taken meanwhile
static void
s_probe (xxl_executor_t *executor, int64_t job_id, const char *what)
{
    char msg [256];
    int64_t index = s_next_log;
    int64_t start = s_now ();
    if (s_trigger (executor, job_id, KIND_EMPTY, NULL, msg, sizeof msg)) {
        XXL_CHECK_MSG (0, "probe (%s) on job %" PRId64 " refused: %s", what, job_id, msg);
        return;
    }
    while (!s_runs [index].done && s_now () - start < 3000)
        s_pump (executor, 5);
    int64_t took = s_runs [index].done? s_runs [index].done_ms - start: -1;
    if (!s_runs [index].done)
        s_dump (executor, "probe not started");
    XXL_CHECK_MSG (s_runs [index].done, "probe (%s) on job %" PRId64 " ended within 3 s (%" PRId64
                   " ms)", what, job_id, took);
}

//  ---------------------------------------------------------------------
//  Lifecycles

static char s_life_records [512];

//  Once every executor is gone: per job id, one destroy per successful
//  init; no "bad" line (lifecycle.c's contract checks)
static void
s_check_lifecycles (void)
{
    static int inits [JOBS_MAX], fails [JOBS_MAX], destroys [JOBS_MAX];
    FILE *file = fopen (s_life_records, "r");
    char line [256];
    int bad = 0, total = 0;
    while (file && fgets (line, sizeof line, file)) {
        long long job_id;
        char what [32];
        if (sscanf (line, "%31s %lld", what, &job_id) != 2
        ||  job_id < JOB_BASE || job_id >= JOB_BASE + JOBS_MAX)
            continue;
        int index = (int) (job_id - JOB_BASE);
        if (streq (what, "init"))
            inits [index]++, total++;
        else
        if (streq (what, "init-fail"))
            fails [index]++;
        else
        if (streq (what, "destroy"))
            destroys [index]++;
        else
        if (streq (what, "bad") && bad++ < MAX_REPORTS)
            printf ("FAIL: lifecycle: %s", line);
    }
    if (file)
        fclose (file);
    XXL_CHECK_MSG (bad == 0, "%d broken lifecycle contract(s)", bad);
    int unpaired = 0;
    for (int i = 0; i < JOBS_MAX; i++)
        if (inits [i] - fails [i] != destroys [i] && unpaired++ < MAX_REPORTS)
            printf ("FAIL: job %d: %d init(s), %d failed, %d destroy(s)\n",
                    JOB_BASE + i, inits [i], fails [i], destroys [i]);
    XXL_CHECK_MSG (unpaired == 0, "%d job(s) without one destroy per successful init", unpaired);
    printf ("  lifecycles: %d init(s), each successful one destroyed once\n", total);
}

//  ---------------------------------------------------------------------
//  Rounds

static int
s_pick_kind (int processes)
{
    uint32_t dice = s_rand (100);
    if (dice < 40) return KIND_SLEEP;
    if (dice < 62) return KIND_EMPTY;
    if (dice < 69) return KIND_LIFE;
    if (dice < 70) return KIND_LIFE_FAIL;
    if (dice < 73) return KIND_SLEEP_TIMEOUT;
    if (dice < 75) return KIND_SPIN_TIMEOUT;
    if (!processes) return dice < 90? KIND_SLEEP: KIND_EMPTY;
    if (dice < 86) return KIND_ISO;
    if (dice < 87) return KIND_ISO_TIMEOUT;
    if (dice < 99) return KIND_GLUE;
    return KIND_GLUE_TIMEOUT;
}

static const char *
s_pick_strategy (void)
{
    uint32_t dice = s_rand (100);
    return dice < 70? (s_rand (2)? "SERIAL_EXECUTION": NULL)
         : dice < 85? "DISCARD_LATER": "COVER_EARLY";
}

//  A job to run kind on: mostly one of its family (same identity), at
//  times any (a changed handler replaces the job's queue)
static int64_t
s_pick_job (int kind, int jobs)
{
    int family = s_family_of (kind);
    for (int tries = 0; tries < 20; tries++) {
        int64_t job_id = JOB_BASE + s_rand ((uint32_t) jobs);
        if (s_job (job_id)->family == family || s_rand (50) == 0)
            return job_id;
    }
    return JOB_BASE + s_rand ((uint32_t) jobs);
}

//  One burst: count runs (processes among them or not), some of them in
//  holds that last up to 300 ms, some jobs killed
static void
s_burst (xxl_executor_t *executor, int count, int jobs, int processes)
{
    char msg [512];
    int held = 0;
    int64_t hold_until = 0;
    for (int i = 0; i < count; i++) {
        if (!held && s_rand (20) == 0) {
            xxl_executor_hold_wakes (executor, 1);
            held = 1;
            hold_until = s_now () + s_rand (300);
        }
        int kind = s_pick_kind (processes);
        int64_t job_id = s_pick_job (kind, jobs);
        if (s_trigger (executor, job_id, kind, s_pick_strategy (), msg, sizeof msg)
        &&  !strstr (msg, "Discard Later") && strncmp (msg, XXL_EXECUTOR_BUSY_PREFIX,
                                                       strlen (XXL_EXECUTOR_BUSY_PREFIX)))
            XXL_CHECK_MSG (0, "run refused for a reason other than the strategy or back-pressure: %s",
                           msg);
        if (s_rand (40) == 0) {
            int64_t victim = JOB_BASE + s_rand ((uint32_t) jobs);
            if (xxl_executor_kill (executor, victim, "stress kill") == 0)
                s_job (victim)->disturbed++;
        }
        uint32_t release = s_rand (4);     //  drawn always: the sequence replays
        if (held && s_now () >= hold_until && release == 0) {
            xxl_executor_hold_wakes (executor, 0);
            held = 0;
        }
        if (s_rand (8) == 0)
            s_pump (executor, s_rand (4) == 0? (int) s_rand (40): 0);
    }
    if (held) {
        while (s_now () < hold_until)
            s_pump (executor, 10);
        xxl_executor_hold_wakes (executor, 0);
    }
}

//  The test_sample_handlers case: a run of one job timed out, then a run
//  of another job must start at once
static void
s_after_timeout (xxl_executor_t *executor, int64_t job_id, int kind)
{
    char msg [256];
    int64_t index = s_next_log;
    if (s_trigger (executor, job_id, kind, NULL, msg, sizeof msg)) {
        XXL_CHECK_MSG (0, "timeout run refused: %s", msg);
        return;
    }
    int64_t until = s_now () + 10000;
    while (!s_runs [index].done && s_now () < until)
        s_pump (executor, 10);
    XXL_CHECK_MSG (s_runs [index].done && s_runs [index].code == 502, "%s run timed out (%d)",
                   s_kind_names [kind], s_runs [index].code);
    s_probe (executor, job_id + 1, "after a timeout");
}

//  Hogs: as many jobs as CPUs, each with a deep queue of runs of 1 ms kept
//  topped up (every pool thread may be serving one, runs ending all the
//  time, the CPUs not busy); a run of another job must still start
static void
s_hogs (xxl_executor_t *executor)
{
    char msg [256];
    int hogs = (int) sysconf (_SC_NPROCESSORS_ONLN);
    hogs = hogs < 1? 1: hogs > 31? 31: hogs;
    int64_t index = -1, start = 0;
    int64_t until = s_now () + 4000;
    while (s_now () < until) {
        for (int i = 0; i < hogs; i++)
            for (int more = 0; s_job (JOB_HOG + i)->outstanding < 1000 && more < 500; more++) {
                s_hog_ms = 1;
                int rc = s_trigger (executor, JOB_HOG + i, KIND_SLEEP, NULL, msg, sizeof msg);
                s_hog_ms = -1;
                if (rc)
                    break;
            }
        if (index < 0 && s_now () >= until - 3500) {
            index = s_next_log;
            start = s_now ();
            if (s_trigger (executor, JOB_HOG_PROBE, KIND_EMPTY, NULL, msg, sizeof msg))
                return;             //  refused busy (threads_max): nothing to probe
        }
        s_pump (executor, 2);
        if (index >= 0 && s_runs [index].done)
            break;
    }
    int done = index >= 0 && s_runs [index].done;
    if (!done)
        s_dump (executor, "probe not started");
    else
        printf ("    probe among %d hogs: %" PRId64 " ms\n", hogs, s_runs [index].done_ms - start);
    XXL_CHECK_MSG (done && s_runs [index].done_ms - start <= 3000, "probe among %d hogs ended within"
                   " 3 s (%" PRId64 " ms)", hogs, done? s_runs [index].done_ms - start: -1);
}

static void
s_round (int round, int64_t end_ms)
{
    static const int pools [] = { 0, 2, 3, 8, 0, 0 };
    int threads_max = pools [s_rand (6)];
    int waiting_max = s_rand (3) == 0? 1: s_rand (2)? -1: 0;
    int jobs = 8 + (int) s_rand (JOBS_RANDOM - 8);
    int processes = s_rand (3) != 0;
    xxl_executor_config_t config = { 0 };
    config.logdir = s_logdir;
    config.allow_glue = 1;
    config.idle_reap_s = 1;             //  threads idle 1 s end, queues idle 1 s reaped
    config.threads_max = threads_max;
    config.waiting_max = waiting_max;
    config.log_pack = s_rand (2);
    xxl_executor_t *executor = xxl_executor_new (&config, s_handlers);
    XXL_CHECK_MSG (executor != NULL, "executor");
    if (!executor)
        return;
    for (int i = 0; i < JOBS_MAX; i++)
        s_jobs [i] = (job_t) { i < JOBS_RANDOM? FAM_SLEEP_IN + (int) s_rand (FAM_COUNT)
                             : JOB_BASE + i < JOB_HOG? FAM_EMPTY_IN: FAM_SLEEP_IN, 0, 0, 0 };
    printf ("  round %d: threads_max %d, waiting_max %d, %d jobs, processes %s, log_pack %d\n",
            round, threads_max, waiting_max, jobs, processes? "yes": "no", config.log_pack);
    int bursts = 2 + (int) s_rand (4);
    for (int burst = 0; burst < bursts && s_now () < end_ms; burst++) {
        int count = 50 + (int) s_rand (processes? 200: 1500);
        if (threads_max && threads_max < 8)
            count = count / 4 + 20;         //  runs wait for 2 or 3 threads
        s_burst (executor, count, jobs, processes);
        if (s_settle (executor, "burst"))
            break;
        //  Quiet: extra threads (idle 1 s) and idle queues age out, or not
        int quiet = (int) s_rand (2600);
        s_pump (executor, quiet);
        int64_t probe_job = JOB_BASE + s_rand ((uint32_t) jobs);
        s_probe (executor, probe_job, quiet > 1200? "pool aged out": "pool quiet");
        //  Blocked: more sleeping runs than CPUs, then a run of another job
        if (threads_max == 0 || threads_max == 8) {
            char msg [256];
            int blockers = (int) sysconf (_SC_NPROCESSORS_ONLN) + 1 + (int) s_rand (3);
            if (threads_max && blockers > threads_max - 1)
                blockers = threads_max - 1;
            for (int i = 0; i < blockers; i++) {
                int64_t job_id = JOB_BASE + (i * 7 + (int) s_rand (7)) % jobs;
                if (s_job (job_id)->family != FAM_SLEEP_IN)
                    continue;
                s_trigger (executor, job_id, KIND_SLEEP_TIMEOUT, "COVER_EARLY", msg, sizeof msg);
            }
            //  A job of another family has no blocker in front of it
            int64_t free_job = JOB_BASE;
            while (free_job < JOB_BASE + jobs - 1 && s_job (free_job)->family == FAM_SLEEP_IN)
                free_job++;
            if (s_job (free_job)->family != FAM_SLEEP_IN)
                s_probe (executor, free_job, "runs blocked");
        }
        //  A timeout, then another job (test_sample_handlers' case)
        if (s_rand (3) == 0) {
            int kind = processes && s_rand (2)? KIND_ISO_TIMEOUT: KIND_SLEEP_TIMEOUT;
            int64_t job_id = JOB_BASE + s_rand ((uint32_t) jobs - 1);
            if (s_job (job_id)->family == s_family_of (kind)
            &&  s_job (job_id + 1)->family == FAM_EMPTY_IN)
                s_after_timeout (executor, job_id, kind);
        }
        if (burst == 0 || s_rand (3) == 0)
            s_hogs (executor);
        if (s_settle (executor, "after probes"))
            break;
    }
    if (s_rand (3) == 0 && !xxl_test_failed) {
        //  Stopped under load: every accepted run still gets its result
        //  (the running ones killed, the queued ones failed), taken after
        //  the stop
        s_burst (executor, 50 + (int) s_rand (300), jobs, processes);
        s_stopping = 1;
        int64_t start = s_now ();
        xxl_executor_stop_why (executor, "stress stop");
        s_drain (executor);
        printf ("    stopped under load in %" PRId64 " ms\n", s_now () - start);
        if (s_outstanding)
            s_dump (executor, "after stop");
        XXL_CHECK_MSG (s_outstanding == 0, "stop: every accepted run got its result (%" PRId64
                       " outstanding)", s_outstanding);
        s_stopping = 0;
    }
    xxl_executor_destroy (&executor);
    printf ("    %" PRId64 " runs accepted\n", s_next_log);
    //  Whatever a stop failed is taken by nobody: everything ended before
    XXL_CHECK_MSG (s_outstanding == 0, "round %d: every accepted run got its result (%" PRId64
                   " outstanding)", round, s_outstanding);
    s_outstanding = 0;
}

int
main (void)
{
    if (xxl_test_agent_start (s_logdir, sizeof s_logdir, "stress"))
        return xxl_test_done ();
    uint64_t seed = getenv ("XXL_STRESS_SEED")
                  ? strtoull (getenv ("XXL_STRESS_SEED"), NULL, 10)
                  : (uint64_t) time (NULL) ^ ((uint64_t) getpid () << 20);
    if (seed == 0)
        seed = 1;
    s_rng = seed;
    int seconds = getenv ("XXL_STRESS_SECONDS")? atoi (getenv ("XXL_STRESS_SECONDS")): 20;
    printf ("test_executor_stress: seed %" PRIu64 " (XXL_STRESS_SEED=%" PRIu64 " replays),"
            " %d s\n", seed, seed, seconds);
    const char *plugins = xxl_test_agent_plugins ();
    s_handlers = xxl_test_agent_handlers (s_logdir, plugins);
    snprintf (s_life_records, sizeof s_life_records, "%s/life.records", s_logdir);
    setenv ("XXL_TEST_LIFE_LOG", s_life_records, 1);
    char command [1024];
    snprintf (command, sizeof command, "cp '%s/lifecycle.so' '%s/plugins/'", plugins, s_logdir);
    XXL_CHECK_MSG (system (command) == 0 && xxl_handlers_rescan (s_handlers) == 1
               &&  xxl_handlers_exists (s_handlers, "lifeJobHandler"), "lifecycle.so loaded");
    s_runs = (run_rec_t *) calloc (RUNS_MAX, sizeof (run_rec_t));
    XXL_CHECK_MSG (s_handlers && xxl_handlers_exists (s_handlers, "sleepInJobHandler") && s_runs,
                   "test handlers loaded from %s", plugins);
    if (s_handlers && s_runs && xxl_handlers_exists (s_handlers, "sleepInJobHandler")) {
        int64_t end = s_now () + (int64_t) seconds * 1000;
        for (int round = 1; s_now () < end && !xxl_test_failed; round++) {
            s_round (round, end);
            //  Next round's logIds are new (a new executor remembers none)
            s_log_base += s_next_log;
            memset (s_runs, 0, (size_t) s_next_log * sizeof (run_rec_t));
            s_next_log = 0;
        }
        printf ("  %" PRId64 " runs accepted, %" PRId64 " refused (strategy, back-pressure),"
                " %" PRId64 " results\n", s_accepted, s_refused, s_results);
        s_check_lifecycles ();
    }
    xxl_handlers_destroy (&s_handlers);
    free (s_runs);
    if (xxl_test_rmtree (s_logdir))
        printf ("cannot remove %s\n", s_logdir);
    return xxl_test_done ();
}
