/*  test_executor.c -- tests of agent/xxl_executor: BEAN runs isolated and
    in process, GLUE scripts (GLUE_PYTHON2's interpreter too), serial
    queues and block strategies, timeouts, kill, duplicate logIds, idle
    reaping, run log contents, results taken in batches (take_many), the
    held start lines of in-process runs made visible by log_sync, 2,000
    sleeping runs at once, and with a journal
    (xxl_journal.h): logIds refused after a restart, a held run (busy
    worker or idle) not started before its logId is on disk, each run's
    processes marked XXL_AGENT_RUN=LIFE.LOGID, and xxl_guard_reap killing
    the marked processes of a run.

    Environment: XXL_TEST_PLUGINS = folder holding test_handlers.so (built
    from tests/plugins/test_handlers.c; copied to a temp folder and loaded
    from there); XXL_RUNNER = the xxl-runner binary
    (default ./xxl-runner, then ../agent/xxl-runner).  XXL_BENCH=1 adds
    throughput figures.  Last line: "N passed, M failed".
*/

#define _GNU_SOURCE
#include "xxl_executor.h"
#include "xxl_executor_int.h"
#include "xxl_guard.h"
#include "xxl_handlers.h"
#include "xxl_journal.h"
#include "xxl_logread.h"
#include "xxl_runlog.h"
#include "xxl_runpack.h"

#include <czmq.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "xxl_test_agent.h"

static char s_logdir [256];
static xxl_handlers_t *s_handlers = NULL;

//  Results taken from the executor, kept until a test looks them up
#define STASH_MAX 8192
static xxl_result_t s_stash [STASH_MAX];
static int s_stash_size = 0;

static int64_t
s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
s_stash_clear (void)
{
    for (int i = 0; i < s_stash_size; i++)
        free (s_stash [i].msg);
    s_stash_size = 0;
}

static void
s_drain (xxl_executor_t *executor)
{
    xxl_result_t result;
    while (xxl_executor_take (executor, &result) == 0) {
        if (s_stash_size < STASH_MAX)
            s_stash [s_stash_size++] = result;
        else
            free (result.msg);
    }
}

//  Waits up to ms for the result of log_id; returns it (owned by the stash)
//  or NULL
static xxl_result_t *
s_wait (xxl_executor_t *executor, int64_t log_id, int ms)
{
    int64_t until = s_now () + ms;
    while (1) {
        s_drain (executor);
        for (int i = 0; i < s_stash_size; i++)
            if (s_stash [i].log_id == log_id)
                return &s_stash [i];
        int64_t left = until - s_now ();
        if (left <= 0)
            return NULL;
        struct pollfd item = { xxl_executor_fd (executor), POLLIN, 0 };
        poll (&item, 1, (int) (left > 100? 100: left));
    }
}

static int
s_msg_has (xxl_result_t *result, const char *text)
{
    return result && result->msg && strstr (result->msg, text);
}

static int64_t s_next_log_id = 1000;

static int
s_run (xxl_executor_t *executor, int64_t job_id, const char *handler, const char *param,
       const char *strategy, int timeout_s, int64_t *log_id, char *msg, size_t msglen)
{
    xxl_trigger_t trigger = { 0 };
    trigger.job_id = job_id;
    trigger.log_id = *log_id = s_next_log_id++;
    trigger.log_date_time = (int64_t) time (NULL) * 1000;
    trigger.handler = handler;
    trigger.params = param;
    trigger.block_strategy = strategy;
    trigger.glue_type = "BEAN";
    trigger.timeout_s = timeout_s;
    trigger.shard_index = 0;
    trigger.shard_total = 1;
    return xxl_executor_run (executor, &trigger, msg, msglen);
}

static int
s_glue (xxl_executor_t *executor, int64_t job_id, const char *type, const char *source,
        const char *param, int timeout_s, int64_t *log_id, char *msg, size_t msglen)
{
    xxl_trigger_t trigger = { 0 };
    trigger.job_id = job_id;
    trigger.log_id = *log_id = s_next_log_id++;
    trigger.log_date_time = (int64_t) time (NULL) * 1000;
    trigger.glue_type = type;
    trigger.glue_source = source;
    trigger.glue_updatetime = 1700000000000LL;
    trigger.params = param;
    trigger.timeout_s = timeout_s;
    trigger.shard_index = 2;
    trigger.shard_total = 5;
    return xxl_executor_run (executor, &trigger, msg, msglen);
}

static char *
s_log (int64_t log_id)
{
    int to_line;
    char err [256];
    return xxl_logread_max (s_logdir, log_id, (int64_t) time (NULL) * 1000, 1,
                                1024 * 1024, &to_line, err, sizeof err);
}

static int
s_log_has (int64_t log_id, const char *text)
{
    char *content = s_log (log_id);
    int found = content && strstr (content, text);
    free (content);
    return found;
}

static xxl_executor_t *
s_executor (int in_process, int allow_glue, int idle_reap_s)
{
    xxl_executor_config_t config = { 0 };
    config.logdir = s_logdir;
    config.in_process = in_process;
    config.allow_glue = allow_glue;
    config.idle_reap_s = idle_reap_s;
    config.interpreters [XXL_GLUE_PHP] = "no-such-interpreter-xxl";
    return xxl_executor_new (&config, s_handlers);
}

//  1 if the run has a log file of its own
static int
s_has_file (int64_t log_id)
{
    char path [512];
    return xxl_runlog_path (s_logdir, log_id, (int64_t) time (NULL) * 1000, path, sizeof path) == 0
        && access (path, F_OK) == 0;
}

static int
s_thread_count (void)
{
    int count = 0;
    DIR *dir = opendir ("/proc/self/task");
    struct dirent *entry;
    while (dir && (entry = readdir (dir)))
        if (entry->d_name [0] != '.')
            count++;
    if (dir)
        closedir (dir);
    return count;
}

//  An agent whose xxl-runner is not where it looks (run from a build or
//  a staged install) fails each isolated run naming the key to set, and
//  still runs in-process ones
static void
test_no_runner (void)
{
    printf ("  no runner\n");
    xxl_executor_config_t config = { 0 };
    config.logdir = s_logdir;
    config.idle_reap_s = 90;
    config.runner = "/nonexistent-xxl/xxl-runner";
    xxl_executor_t *executor = xxl_executor_new (&config, s_handlers);
    XXL_CHECK_MSG (executor != NULL, "executor with a missing runner");
    if (!executor)
        return;
    char msg [256];
    int64_t id;
    XXL_CHECK (s_run (executor, 71, "okJobHandler", "", NULL, 0, &id, msg, sizeof msg) == 0);
    xxl_result_t *result = s_wait (executor, id, 5000);
    XXL_CHECK_MSG (result && result->code == 500
                   && s_msg_has (result, "runner '/nonexistent-xxl/xxl-runner' not found")
                   && s_msg_has (result, "set agent/runner"),
                   "a missing runner names agent/runner: %s", result && result->msg? result->msg: "");
    xxl_executor_destroy (&executor);
    config.in_process = 1;
    executor = xxl_executor_new (&config, s_handlers);
    XXL_CHECK_MSG (executor != NULL, "in-process executor with a missing runner");
    if (!executor)
        return;
    XXL_CHECK (s_run (executor, 72, "okJobHandler", "", NULL, 0, &id, msg, sizeof msg) == 0);
    result = s_wait (executor, id, 5000);
    XXL_CHECK_MSG (result && result->code == 200, "in process, no runner is needed");
    xxl_executor_destroy (&executor);
}

static void
test_bean (xxl_executor_t *executor, const char *mode)
{
    char msg [256];
    int64_t id;
    xxl_result_t *result;

    printf ("  BEAN %s\n", mode);
    XXL_CHECK_MSG (s_run (executor, 1, "okJobHandler", "", NULL, 0, &id, msg, sizeof msg) == 0, "ok run refused: %s", msg);
    result = s_wait (executor, id, 5000);
    XXL_CHECK_MSG (result && result->code == 200 && s_msg_has (result, "ok"), "%s ok: %d %s", mode,
                   result? result->code: -1, result && result->msg? result->msg: "");
    XXL_CHECK_MSG (s_log_has (id, "xxl-job job execute start") && s_log_has (id, "handleCode=200"),
                   "%s log has start and end lines", mode);

    XXL_CHECK_MSG (s_run (executor, 2, "failJobHandler", "", NULL, 0, &id, msg, sizeof msg) == 0, "fail run refused");
    result = s_wait (executor, id, 5000);
    XXL_CHECK_MSG (result && result->code == 500 && s_msg_has (result, "failed on purpose"), "%s fail", mode);

    XXL_CHECK_MSG (s_run (executor, 3, "paramJobHandler", "hello world", NULL, 0, &id, msg, sizeof msg) == 0, "param run refused");
    result = s_wait (executor, id, 5000);
    XXL_CHECK_MSG (result && result->code == 200 && result->msg && streq (result->msg, "hello world"),
                   "%s param round trip: %s", mode, result && result->msg? result->msg: "");

    //  handleMsg capped at 15,000
    char *big = (char *) malloc (20001);
    memset (big, 'x', 20000);
    big [20000] = 0;
    XXL_CHECK_MSG (s_run (executor, 3, "paramJobHandler", big, NULL, 0, &id, msg, sizeof msg) == 0, "big param refused");
    free (big);
    result = s_wait (executor, id, 5000);
    XXL_CHECK_MSG (result && result->msg && strlen (result->msg) == XXL_EXECUTOR_MSG_MAX,
                   "%s handleMsg capped: %zu", mode, result && result->msg? strlen (result->msg): 0);

    XXL_CHECK_MSG (s_run (executor, 4, "logJobHandler", "5", NULL, 0, &id, msg, sizeof msg) == 0, "log run refused");
    result = s_wait (executor, id, 5000);
    XXL_CHECK_MSG (result && result->code == 200, "%s log handler", mode);
    XXL_CHECK_MSG (s_log_has (id, "log line 1\n") && s_log_has (id, "log line 5\n"), "%s handler lines in log", mode);

    //  Unknown handler, duplicate logId
    XXL_CHECK_MSG (s_run (executor, 5, "nopeJobHandler", "", NULL, 0, &id, msg, sizeof msg) == -1
        && streq (msg, "job handler [nopeJobHandler] not found."), "unknown handler: %s", msg);
    xxl_trigger_t trigger = { 0 };
    trigger.job_id = 6;
    int64_t dup_id = trigger.log_id = s_next_log_id++;
    trigger.handler = "okJobHandler";
    XXL_CHECK_MSG (xxl_executor_run (executor, &trigger, msg, sizeof msg) == 0, "first of a logId");
    XXL_CHECK_MSG (xxl_executor_run (executor, &trigger, msg, sizeof msg) == -1
        && strstr (msg, "already accepted"), "duplicate logId refused: %s", msg);
    result = s_wait (executor, dup_id, 5000);
    XXL_CHECK_MSG (result && result->code == 200, "duplicated logId ran once");
    XXL_CHECK_MSG (xxl_executor_run (executor, &trigger, msg, sizeof msg) == -1, "duplicate logId refused after the run");
    trigger.glue_type = "GLUE_NOSUCH";
    trigger.log_id = s_next_log_id++;
    XXL_CHECK_MSG (xxl_executor_run (executor, &trigger, msg, sizeof msg) == -1
        && strstr (msg, "is not valid"), "unknown glue type: %s", msg);
    trigger.glue_type = "GLUE_GROOVY";
    trigger.log_id = s_next_log_id++;
    XXL_CHECK_MSG (xxl_executor_run (executor, &trigger, msg, sizeof msg) == -1
        && strstr (msg, "GLUE_GROOVY runs only on a bridged XXL-JOB executor"),
        "GLUE_GROOVY refused by the native agent, clearly: %s", msg);
}

static void
test_isolation (xxl_executor_t *executor)
{
    char msg [256];
    int64_t id, id2;
    xxl_result_t *result;
    printf ("  isolation\n");

    XXL_CHECK_MSG (s_run (executor, 10, "crashJobHandler", "", NULL, 0, &id, msg, sizeof msg) == 0, "crash run");
    result = s_wait (executor, id, 5000);
    XXL_CHECK_MSG (result && result->code == 500 && s_msg_has (result, "SIGSEGV"),
                   "crash names the signal: %s", result && result->msg? result->msg: "");
    XXL_CHECK_MSG (s_log_has (id, "about to crash"), "crash handler's line in log");
    XXL_CHECK_MSG (s_run (executor, 10, "okJobHandler", "", NULL, 0, &id, msg, sizeof msg) == 0, "run after crash");
    result = s_wait (executor, id, 5000);
    XXL_CHECK_MSG (result && result->code == 200, "agent serves on after crash");

    //  Timeout stops a busy loop
    int64_t start = s_now ();
    XXL_CHECK_MSG (s_run (executor, 11, "spinJobHandler", "", NULL, 1, &id, msg, sizeof msg) == 0, "spin run");
    result = s_wait (executor, id, 5000);
    int64_t took = s_now () - start;
    XXL_CHECK_MSG (result && result->code == 502 && s_msg_has (result, "job execute timeout"),
                   "spin times out with 502: %d", result? result->code: -1);
    XXL_CHECK_MSG (took < 2000, "timeout within a second of the deadline (%lld ms)", (long long) took);

    //  Kill stops a busy loop, fails the queued ones
    XXL_CHECK_MSG (s_run (executor, 12, "spinJobHandler", "", NULL, 0, &id, msg, sizeof msg) == 0, "spin run 2");
    XXL_CHECK_MSG (s_run (executor, 12, "spinJobHandler", "", NULL, 0, &id2, msg, sizeof msg) == 0, "spin run queued");
    usleep (200 * 1000);
    XXL_CHECK_MSG (xxl_executor_busy (executor, 12) == 1, "busy while spinning");
    XXL_CHECK_MSG (xxl_executor_running (executor, id) && xxl_executor_running (executor, id2), "running/queued by logId");
    XXL_CHECK_MSG (xxl_executor_active (executor) == 1, "one active run");
    start = s_now ();
    XXL_CHECK_MSG (xxl_executor_kill (executor, 12, "killed by test") == 0, "kill spin");
    result = s_wait (executor, id2, 2000);
    XXL_CHECK_MSG (result && result->code == 500 && s_msg_has (result, "killed by test")
        && s_msg_has (result, "in the job queue"), "queued run failed by kill: %s",
                   result && result->msg? result->msg: "");
    result = s_wait (executor, id, 2000);
    took = s_now () - start;
    XXL_CHECK_MSG (result && result->code == 500 && s_msg_has (result, "killed by test [job running, killed]"),
                   "running run killed: %s", result && result->msg? result->msg: "");
    XXL_CHECK_MSG (took < 1000, "kill within a second (%lld ms)", (long long) took);
    XXL_CHECK_MSG (xxl_executor_busy (executor, 12) == 0, "not busy after kill");
    XXL_CHECK_MSG (!xxl_executor_running (executor, id), "logId not running after kill");
    XXL_CHECK_MSG (xxl_executor_kill (executor, 12, "again") == -1, "kill of an idle job answers -1");

    //  Shard values reach the handler
    xxl_trigger_t trigger = { 0 };
    trigger.job_id = 13;
    trigger.log_id = id = s_next_log_id++;
    trigger.handler = "shardJobHandler";
    trigger.shard_index = 3;
    trigger.shard_total = 7;
    XXL_CHECK_MSG (xxl_executor_run (executor, &trigger, msg, sizeof msg) == 0, "shard run");
    result = s_wait (executor, id, 5000);
    XXL_CHECK_MSG (result && result->msg && streq (result->msg, "shard 3/7"), "shard 3/7");
}

static void
test_queues (xxl_executor_t *executor, const char *sleeper)
{
    char msg [256];
    int64_t a, b, c;
    xxl_result_t *result, *result_b, *result_c;
    printf ("  queues with %s\n", sleeper);

    //  Serial: three runs one after the other
    int64_t start = s_now ();
    XXL_CHECK_MSG (s_run (executor, 20, sleeper, "300", "SERIAL_EXECUTION", 0, &a, msg, sizeof msg) == 0, "serial 1");
    XXL_CHECK_MSG (s_run (executor, 20, sleeper, "300", "SERIAL_EXECUTION", 0, &b, msg, sizeof msg) == 0, "serial 2");
    XXL_CHECK_MSG (s_run (executor, 20, sleeper, "300", "SERIAL_EXECUTION", 0, &c, msg, sizeof msg) == 0, "serial 3");
    XXL_CHECK_MSG (xxl_executor_busy (executor, 20) == 1, "serial job busy");
    result_c = s_wait (executor, c, 5000);
    int64_t took = s_now () - start;
    result = s_wait (executor, a, 100);
    result_b = s_wait (executor, b, 100);
    XXL_CHECK_MSG (result && result_b && result_c && result->code == 200 && result_b->code == 200
        && result_c->code == 200, "serial runs succeed");
    XXL_CHECK_MSG (result < result_b && result_b < result_c, "serial results in order");
    XXL_CHECK_MSG (took >= 880, "serial runs ran one after the other (%lld ms)", (long long) took);
    XXL_CHECK_MSG (xxl_executor_busy (executor, 20) == 0, "serial job idle");

    //  Discard later
    XXL_CHECK_MSG (s_run (executor, 21, sleeper, "500", "DISCARD_LATER", 0, &a, msg, sizeof msg) == 0, "discard 1");
    XXL_CHECK_MSG (s_run (executor, 21, sleeper, "500", "DISCARD_LATER", 0, &b, msg, sizeof msg) == -1
        && streq (msg, "block strategy effect: Discard Later"), "discard later refuses: %s", msg);
    result = s_wait (executor, a, 5000);
    XXL_CHECK_MSG (result && result->code == 200, "discard later first run succeeds");
    XXL_CHECK_MSG (s_run (executor, 21, sleeper, "10", "DISCARD_LATER", 0, &b, msg, sizeof msg) == 0,
                   "discard later accepts once idle");
    XXL_CHECK_MSG (s_wait (executor, b, 5000) != NULL, "discard later run 2 ends");

    //  Cover early
    XXL_CHECK_MSG (s_run (executor, 22, sleeper, "5000", "COVER_EARLY", 0, &a, msg, sizeof msg) == 0, "cover 1");
    usleep (100 * 1000);
    start = s_now ();
    XXL_CHECK_MSG (s_run (executor, 22, sleeper, "100", "COVER_EARLY", 0, &b, msg, sizeof msg) == 0, "cover 2");
    result = s_wait (executor, a, 3000);
    XXL_CHECK_MSG (result && result->code == 500 && s_msg_has (result, "block strategy effect: Cover Early"),
                   "cover early kills the first: %s", result && result->msg? result->msg: "");
    result = s_wait (executor, b, 3000);
    XXL_CHECK_MSG (result && result->code == 200, "cover early runs the second");
    XXL_CHECK_MSG (s_now () - start < 2000, "cover early is quick");

    //  A changed handler replaces the worker
    XXL_CHECK_MSG (s_run (executor, 23, sleeper, "5000", NULL, 0, &a, msg, sizeof msg) == 0, "change 1");
    usleep (100 * 1000);
    XXL_CHECK_MSG (s_run (executor, 23, "okJobHandler", "", NULL, 0, &b, msg, sizeof msg) == 0, "change 2");
    result = s_wait (executor, a, 3000);
    XXL_CHECK_MSG (result && result->code == 500 && s_msg_has (result, "change jobhandler"),
                   "changed handler kills the old run: %s", result && result->msg? result->msg: "");
    result = s_wait (executor, b, 3000);
    XXL_CHECK_MSG (result && result->code == 200, "changed handler runs");

    //  Timeout of a cooperative sleeper
    start = s_now ();
    XXL_CHECK_MSG (s_run (executor, 24, sleeper, "10000", NULL, 1, &a, msg, sizeof msg) == 0, "timeout run");
    result = s_wait (executor, a, 4000);
    took = s_now () - start;
    XXL_CHECK_MSG (result && result->code == 502 && s_msg_has (result, "job execute timeout"), "sleeper times out");
    XXL_CHECK_MSG (took < 1800, "sleeper timeout in time (%lld ms)", (long long) took);
    XXL_CHECK_MSG (s_log_has (a, "job execute timeout"), "timeout in log");

    //  Kill running and queued
    XXL_CHECK_MSG (s_run (executor, 25, sleeper, "10000", NULL, 0, &a, msg, sizeof msg) == 0, "kill 1");
    XXL_CHECK_MSG (s_run (executor, 25, sleeper, "10000", NULL, 0, &b, msg, sizeof msg) == 0, "kill 2");
    XXL_CHECK_MSG (s_run (executor, 25, sleeper, "10000", NULL, 0, &c, msg, sizeof msg) == 0, "kill 3");
    usleep (100 * 1000);
    start = s_now ();
    XXL_CHECK_MSG (xxl_executor_kill (executor, 25, "scheduling center kill job.") == 0, "kill");
    result = s_wait (executor, a, 2000);
    result_b = s_wait (executor, b, 100);
    result_c = s_wait (executor, c, 100);
    XXL_CHECK_MSG (result && result->code == 500 && s_msg_has (result, "[job running, killed]"), "running killed");
    XXL_CHECK_MSG (result_b && result_b->code == 500 && result_c && result_c->code == 500
        && s_msg_has (result_c, "[job not executed, in the job queue, killed.]"), "queued killed");
    XXL_CHECK_MSG (s_now () - start < 1000, "kill quick");
    XXL_CHECK_MSG (s_log_has (a, "[job running, killed]"), "kill reason in the log");
}

//  xxl_run_sleep: the time, or less once the run is killed or timed out
//  (in process: the kill signals the wait; isolated: the runner's SIGTERM)
static void
test_sleep (void)
{
    printf ("  sleep\n");
    const char *handlers [] = { "napInJobHandler", "napJobHandler" };
    for (int h = 0; h < 2; h++) {
        xxl_executor_t *executor = s_executor (0, 0, 90);
        XXL_CHECK_MSG (executor, "sleep: executor");
        if (!executor)
            return;
        char msg [256];
        int64_t id;
        int64_t job = 60 + h * 10;
        int64_t start = s_now ();
        XXL_CHECK_MSG (s_run (executor, job, handlers [h], "300", NULL, 0, &id, msg, sizeof msg) == 0,
                       "sleep %s: run", handlers [h]);
        xxl_result_t *result = s_wait (executor, id, 10000);
        int64_t took = s_now () - start;
        XXL_CHECK_MSG (result && result->code == 200 && s_msg_has (result, "napped"),
                       "sleep %s: 300 ms pass: %s", handlers [h], result && result->msg? result->msg: "");
        XXL_CHECK_MSG (took >= 300, "sleep %s: the whole 300 ms (%lld)", handlers [h], (long long) took);

        //  The job's timeout (1 s) ends a wait of a minute
        start = s_now ();
        XXL_CHECK_MSG (s_run (executor, job + 1, handlers [h], "60000", NULL, 1, &id, msg, sizeof msg) == 0,
                       "sleep %s: timeout run", handlers [h]);
        result = s_wait (executor, id, 10000);
        took = s_now () - start;
        XXL_CHECK_MSG (result && result->code == 502, "sleep %s: timed out 502: %d", handlers [h],
                       result? result->code: -1);
        XXL_CHECK_MSG (took < 3000, "sleep %s: a minute's wait ended by the 1 s timeout (%lld ms)",
                       handlers [h], (long long) took);

        //  A kill ends it at once
        XXL_CHECK_MSG (s_run (executor, job + 2, handlers [h], "60000", NULL, 0, &id, msg, sizeof msg) == 0,
                       "sleep %s: kill run", handlers [h]);
        for (int i = 0; i < 200 && !xxl_executor_busy (executor, job + 2); i++)
            usleep (10 * 1000);
        usleep (200 * 1000);            //  (into the handler's wait)
        start = s_now ();
        XXL_CHECK_MSG (xxl_executor_kill (executor, job + 2, "nap killed") == 0, "sleep %s: kill", handlers [h]);
        result = s_wait (executor, id, 10000);
        took = s_now () - start;
        XXL_CHECK_MSG (result && result->code == 500 && s_msg_has (result, "nap killed"),
                       "sleep %s: killed: %s", handlers [h], result && result->msg? result->msg: "");
        XXL_CHECK_MSG (took < 1000, "sleep %s: the kill ended the wait (%lld ms)", handlers [h],
                       (long long) took);

        //  A wait of "for ever" (INT64_MAX ms) still waits, until the timeout
        start = s_now ();
        XXL_CHECK_MSG (s_run (executor, job + 3, handlers [h], "9223372036854775807", NULL, 1, &id,
                              msg, sizeof msg) == 0, "sleep %s: forever run", handlers [h]);
        result = s_wait (executor, id, 10000);
        took = s_now () - start;
        XXL_CHECK_MSG (result && result->code == 502 && took >= 900,
                       "sleep %s: INT64_MAX ms waits until the 1 s timeout: %d after %lld ms",
                       handlers [h], result? result->code: -1, (long long) took);

        //  Two waits of one run at once (the handler's and a thread's): a
        //  kill ends both
        const char *pair = h == 0? "napPairInJobHandler": "napPairJobHandler";
        XXL_CHECK_MSG (s_run (executor, job + 4, pair, "60000", NULL, 0, &id, msg, sizeof msg) == 0,
                       "sleep %s: pair run", pair);
        for (int i = 0; i < 200 && !xxl_executor_busy (executor, job + 4); i++)
            usleep (10 * 1000);
        usleep (300 * 1000);
        start = s_now ();
        XXL_CHECK_MSG (xxl_executor_kill (executor, job + 4, "pair killed") == 0, "sleep %s: kill", pair);
        result = s_wait (executor, id, 10000);
        took = s_now () - start;
        XXL_CHECK_MSG (result && result->code == 500 && took < 1000,
                       "sleep %s: the kill ended both waits: %d %s after %lld ms", pair,
                       result? result->code: -1, result && result->msg? result->msg: "", (long long) took);
        XXL_CHECK_MSG (s_log_has (id, "nap pair: cancelled 2"),
                       "sleep %s: both waits returned 1 (the handler's log line)", pair);
        xxl_executor_destroy (&executor);
    }
}

static void
test_glue (void)
{
    printf ("  GLUE\n");
    char msg [256];
    int64_t id;
    xxl_result_t *result;
    xxl_executor_t *refuser = s_executor (0, 0, 90);
    XXL_CHECK_MSG (s_glue (refuser, 30, "GLUE_SHELL", "true", "", 0, &id, msg, sizeof msg) == -1
        && streq (msg, "glue type GLUE_SHELL not allowed on this agent"), "glue refused: %s", msg);
    xxl_executor_destroy (&refuser);

    xxl_executor_t *executor = s_executor (0, 1, 90);
    XXL_CHECK_MSG (s_glue (executor, 31, "GLUE_SHELL", "echo \"args: $1 $2 $3\"\necho oops >&2\nprintf no-newline\n",
                           "p1", 0, &id, msg, sizeof msg) == 0, "glue shell");
    result = s_wait (executor, id, 5000);
    XXL_CHECK_MSG (result && result->code == 200, "glue shell succeeds");
    XXL_CHECK_MSG (s_log_has (id, "args: p1 2 5\n"), "stdout, param and shard in log");
    XXL_CHECK_MSG (s_log_has (id, "oops\n"), "stderr in log");
    XXL_CHECK_MSG (s_log_has (id, "no-newline\n"), "log line completed");
    char path [512];
    snprintf (path, sizeof path, "%s/gluesource/31_1700000000000.sh", s_logdir);
    XXL_CHECK_MSG (access (path, R_OK) == 0, "glue source written to %s", path);

    XXL_CHECK_MSG (s_glue (executor, 32, "GLUE_SHELL", "exit 3", "", 0, &id, msg, sizeof msg) == 0, "exit 3");
    result = s_wait (executor, id, 5000);
    XXL_CHECK_MSG (result && result->code == 500 && s_msg_has (result, "exit code 3"), "exit code 3");

    XXL_CHECK_MSG (s_glue (executor, 33, "GLUE_SHELL", "kill -SEGV $$", "", 0, &id, msg, sizeof msg) == 0, "self kill");
    result = s_wait (executor, id, 5000);
    XXL_CHECK_MSG (result && result->code == 500 && s_msg_has (result, "killed by signal SIGSEGV"),
                   "signal named: %s", result && result->msg? result->msg: "");

    XXL_CHECK_MSG (s_glue (executor, 34, "GLUE_PHP", "<?php echo 1;", "", 0, &id, msg, sizeof msg) == 0, "php");
    result = s_wait (executor, id, 5000);
    XXL_CHECK_MSG (result && result->code == 500
        && s_msg_has (result, "interpreter 'no-such-interpreter-xxl' not found"),
                   "missing interpreter: %s", result && result->msg? result->msg: "");

    if (system ("command -v python3 >/dev/null 2>&1") == 0) {
        XXL_CHECK_MSG (s_glue (executor, 35, "GLUE_PYTHON", "import sys\nprint('py', sys.argv[1])\n", "x",
                               0, &id, msg, sizeof msg) == 0, "python");
        result = s_wait (executor, id, 10000);
        XXL_CHECK_MSG (result && result->code == 200 && s_log_has (id, "py x\n"), "glue python");
        //  A "#!" line names the interpreter, whatever the glue type;
        //  its words are split ("python3 -B" is two)
        XXL_CHECK_MSG (s_glue (executor, 135, "GLUE_SHELL",
                               "#!/usr/bin/env python3 -B\nimport sys\nprint('shebang-py', sys.argv[1], sys.flags.dont_write_bytecode)\n",
                               "y", 0, &id, msg, sizeof msg) == 0, "shebang python");
        result = s_wait (executor, id, 10000);
        XXL_CHECK_MSG (result && result->code == 200 && s_log_has (id, "shebang-py y 1\n"),
                       "GLUE_SHELL with #!/usr/bin/env python3 -B runs with python: %s",
                       result && result->msg? result->msg: "");
    }
    //  GLUE_SHELL runs with bash, as XXL-JOB's (sh, dash on Debian, knows
    //  neither arrays nor [[ ]])
    XXL_CHECK_MSG (s_glue (executor, 136, "GLUE_SHELL",
                           "arr=(a b c)\nif [[ ${#arr[@]} == 3 && $1 == p* ]]; then echo \"bash-ok ${arr[1]}\"; fi\n",
                           "p1", 0, &id, msg, sizeof msg) == 0, "bash script");
    result = s_wait (executor, id, 5000);
    XXL_CHECK_MSG (result && result->code == 200 && s_log_has (id, "bash-ok b\n"),
                   "a bash-only script succeeds: %s", result && result->msg? result->msg: "");
    XXL_CHECK_MSG (s_glue (executor, 137, "GLUE_SHELL", "#!/bin/bash\nset -o pipefail\nfalse | true\n",
                           "", 0, &id, msg, sizeof msg) == 0, "#!/bin/bash");
    result = s_wait (executor, id, 5000);
    XXL_CHECK_MSG (result && result->code == 500 && s_msg_has (result, "exit code 1"),
                   "#!/bin/bash honoured (pipefail): %s", result && result->msg? result->msg: "");
    //  A shebang naming a missing interpreter: a failed run saying which
    XXL_CHECK_MSG (s_glue (executor, 138, "GLUE_SHELL", "#!/usr/bin/no-such-interp-xxl -x\necho hi\n",
                           "", 0, &id, msg, sizeof msg) == 0, "missing shebang interpreter");
    result = s_wait (executor, id, 5000);
    XXL_CHECK_MSG (result && result->code == 500
        && s_msg_has (result, "interpreter '/usr/bin/no-such-interp-xxl' not found")
        && s_msg_has (result, "#!/usr/bin/no-such-interp-xxl -x)")
        && s_log_has (id, "interpreter '/usr/bin/no-such-interp-xxl' not found"),
                   "missing shebang interpreter named: %s", result && result->msg? result->msg: "");
    XXL_CHECK_MSG (s_glue (executor, 139, "GLUE_PYTHON", "#!/usr/bin/env -S no-such-interp-xxl -u\nprint(1)\n",
                           "", 0, &id, msg, sizeof msg) == 0, "missing env interpreter");
    result = s_wait (executor, id, 5000);
    XXL_CHECK_MSG (result && result->code == 500
        && s_msg_has (result, "interpreter 'no-such-interp-xxl' not found"),
                   "missing env interpreter named: %s", result && result->msg? result->msg: "");

    //  Timeout ends the whole group, children included
    char pidfile [512];
    snprintf (pidfile, sizeof pidfile, "%s/child.pid", s_logdir);
    char script [1024];
    snprintf (script, sizeof script,
              "trap '' TERM\nsleep 60 &\necho $! > %s\nwait\n", pidfile);
    int64_t start = s_now ();
    XXL_CHECK_MSG (s_glue (executor, 36, "GLUE_SHELL", script, "", 1, &id, msg, sizeof msg) == 0, "group");
    result = s_wait (executor, id, 5000);
    int64_t took = s_now () - start;
    XXL_CHECK_MSG (result && result->code == 502, "glue timeout 502");
    XXL_CHECK_MSG (took < 2500, "glue timeout in time (%lld ms)", (long long) took);
    FILE *file = fopen (pidfile, "r");
    int child = 0;
    if (file) {
        if (fscanf (file, "%d", &child) != 1)
            child = 0;
        fclose (file);
    }
    usleep (200 * 1000);
    char stat_path [64], state = 'X';
    snprintf (stat_path, sizeof stat_path, "/proc/%d/stat", child);
    file = child > 0? fopen (stat_path, "r"): NULL;
    if (file) {
        int pid;
        char comm [64];
        if (fscanf (file, "%d %63s %c", &pid, comm, &state) != 3)
            state = '?';
        fclose (file);
    }
    XXL_CHECK_MSG (child > 0 && (state == 'X' || state == 'Z'), "background child killed (state %c)", state);

    //  Kill of a script
    XXL_CHECK_MSG (s_glue (executor, 37, "GLUE_SHELL", "sleep 30", "", 0, &id, msg, sizeof msg) == 0, "sleep 30");
    usleep (200 * 1000);
    start = s_now ();
    XXL_CHECK_MSG (xxl_executor_kill (executor, 37, "stop it") == 0, "kill glue");
    result = s_wait (executor, id, 3000);
    XXL_CHECK_MSG (result && result->code == 500 && s_msg_has (result, "stop it"), "glue killed");
    XXL_CHECK_MSG (s_now () - start < 1000, "glue kill quick");

    //  A new glue version replaces the worker
    xxl_trigger_t trigger = { 0 };
    trigger.job_id = 38;
    trigger.log_id = id = s_next_log_id++;
    trigger.glue_type = "GLUE_SHELL";
    trigger.glue_source = "sleep 30";
    trigger.glue_updatetime = 1;
    XXL_CHECK_MSG (xxl_executor_run (executor, &trigger, msg, sizeof msg) == 0, "glue v1");
    usleep (100 * 1000);
    int64_t id2;
    trigger.log_id = id2 = s_next_log_id++;
    trigger.glue_source = "echo v2";
    trigger.glue_updatetime = 2;
    XXL_CHECK_MSG (xxl_executor_run (executor, &trigger, msg, sizeof msg) == 0, "glue v2");
    result = s_wait (executor, id, 3000);
    XXL_CHECK_MSG (result && result->code == 500 && s_msg_has (result, "change jobhandler or glue type"), "glue v1 replaced");
    result = s_wait (executor, id2, 3000);
    XXL_CHECK_MSG (result && result->code == 200 && s_log_has (id2, "v2\n"), "glue v2 ran");
    xxl_executor_destroy (&executor);
}

//  GLUE_PYTHON2 (XXL-JOB 3.2's GLUE(Python2)): python2 unless configured
//  otherwise, a .py source, the arguments of every GLUE type, the exit
//  code as the result; an interpreter that is not installed fails the run
//  and says which
static void
test_glue_python2 (void)
{
    printf ("  GLUE_PYTHON2\n");
    XXL_CHECK (xxl_glue_type ("GLUE_PYTHON2") == XXL_GLUE_PYTHON2);
    XXL_CHECK (streq (xxl_glue_name (XXL_GLUE_PYTHON2), "GLUE_PYTHON2"));
    char line [512], *words [XXL_GLUE_WORDS + 5], msg [256];
    xxl_glue_t *glue = xxl_glue_new (s_logdir, NULL);
    int count = glue? xxl_glue_command (glue, XXL_GLUE_PYTHON2, "print('x')\n", line, sizeof line,
                                        words, msg, sizeof msg): -1;
    const char *base = count == 1? strrchr (words [0], '/'): NULL;
    XXL_CHECK_MSG (count == 1 && streq (base? base + 1: words [0], "python2"),
                   "GLUE_PYTHON2 runs with python2 by default: %s", count == 1? words [0]: msg);
    xxl_glue_destroy (&glue);

    xxl_executor_config_t config = { 0 };
    config.logdir = s_logdir;
    config.allow_glue = 1;
    config.idle_reap_s = 90;
    int64_t id;
    xxl_result_t *result;
    //  Pointed at python3 (Debian 12 has no python2), a source for both runs
    config.interpreters [XXL_GLUE_PYTHON2] = "python3";
    xxl_executor_t *executor = xxl_executor_new (&config, s_handlers);
    if (system ("command -v python3 >/dev/null 2>&1") == 0) {
        XXL_CHECK_MSG (s_glue (executor, 140, "GLUE_PYTHON2",
                               "import sys\nprint(\"py2-ok %s %s/%s\" % tuple(sys.argv[1:4]))\n",
                               "p1", 0, &id, msg, sizeof msg) == 0, "GLUE_PYTHON2 accepted: %s", msg);
        result = s_wait (executor, id, 10000);
        XXL_CHECK_MSG (result && result->code == 200 && s_log_has (id, "py2-ok p1 2/5\n"),
                       "GLUE_PYTHON2 with python3 configured succeeds, param and shard in argv: %s",
                       result && result->msg? result->msg: "");
        char path [512];
        snprintf (path, sizeof path, "%s/gluesource/140_1700000000000.py", s_logdir);
        XXL_CHECK_MSG (access (path, R_OK) == 0, "GLUE_PYTHON2 source written to %s", path);
        XXL_CHECK_MSG (s_glue (executor, 141, "GLUE_PYTHON2", "import sys\nsys.exit(4)\n", "",
                               0, &id, msg, sizeof msg) == 0, "GLUE_PYTHON2 exit 4");
        result = s_wait (executor, id, 10000);
        XXL_CHECK_MSG (result && result->code == 500 && s_msg_has (result, "exit code 4"),
                       "GLUE_PYTHON2's exit code fails the run: %s", result && result->msg? result->msg: "");
    }
    xxl_executor_destroy (&executor);

    //  Not installed: a failed run naming it, in its result and its log
    config.interpreters [XXL_GLUE_PYTHON2] = "no-such-python2-xxl";
    executor = xxl_executor_new (&config, s_handlers);
    XXL_CHECK_MSG (s_glue (executor, 142, "GLUE_PYTHON2", "print('never')\n", "",
                           0, &id, msg, sizeof msg) == 0, "GLUE_PYTHON2 accepted: %s", msg);
    result = s_wait (executor, id, 5000);
    XXL_CHECK_MSG (result && result->code == 500
        && s_msg_has (result, "interpreter 'no-such-python2-xxl' not found")
        && s_log_has (id, "interpreter 'no-such-python2-xxl' not found"),
                   "GLUE_PYTHON2 without its interpreter fails, saying so: %s",
                   result && result->msg? result->msg: "");
    xxl_executor_destroy (&executor);
}

//  Open file descriptors of this process
static int
s_fd_count (void)
{
    DIR *dir = opendir ("/proc/self/fd");
    int count = 0;
    if (dir) {
        while (readdir (dir))
            count++;
        closedir (dir);
    }
    return count;
}

static void
test_reap_and_stop (void)
{
    printf ("  idle reaping, stop\n");
    char msg [256];
    int64_t id;
    xxl_executor_t *executor = s_executor (1, 0, 1);
    int before = s_thread_count ();
    int fds_before = s_fd_count ();
    for (int job = 0; job < 40; job++)
        s_run (executor, 100 + job, "okJobHandler", "", NULL, 0, &id, msg, sizeof msg);
    XXL_CHECK_MSG (s_wait (executor, id, 5000) != NULL, "40 jobs ran");
    //  A job's queue is memory, not a thread (the pool serves them)
    XXL_CHECK_MSG (xxl_executor_jobs (executor) == 40, "40 job queues known (%zu)",
                   xxl_executor_jobs (executor));
    //  Every fd is copied by each spawn of a child: idle workers hold none
    XXL_CHECK_MSG (s_fd_count () <= fds_before + 8, "idle workers hold no fd (%d -> %d)",
                   fds_before, s_fd_count ());
    usleep (1600 * 1000);
    XXL_CHECK_MSG (s_thread_count () <= before, "idle workers reaped (%d -> %d)", before, s_thread_count ());
    XXL_CHECK_MSG (xxl_executor_jobs (executor) == 0, "idle job queues reaped (%zu left)",
                   xxl_executor_jobs (executor));
    XXL_CHECK_MSG (s_run (executor, 100, "okJobHandler", "", NULL, 0, &id, msg, sizeof msg) == 0, "run after reap");
    XXL_CHECK_MSG (s_wait (executor, id, 5000) != NULL, "run after reap ends");

    //  stop kills running runs and keeps their results
    XXL_CHECK_MSG (s_run (executor, 200, "sleepJobHandler", "10000", NULL, 0, &id, msg, sizeof msg) == 0, "sleeper");
    usleep (100 * 1000);
    xxl_executor_stop (executor);
    xxl_result_t *result = s_wait (executor, id, 100);
    XXL_CHECK_MSG (result && result->code == 500 && s_msg_has (result, "executor stopped"), "stop kills and reports");
    XXL_CHECK_MSG (s_run (executor, 201, "okJobHandler", "", NULL, 0, &id, msg, sizeof msg) == -1, "stopped refuses");
    xxl_executor_destroy (&executor);
    XXL_CHECK_MSG (executor == NULL, "destroy nulls");
}

//  The process's futex hash, sized by the first executor (Linux >= 6.16;
//  older kernels refuse PR_FUTEX_HASH and keep one shared hash)
static void
test_futex_hash (void)
{
    int slots = prctl (78 /* PR_FUTEX_HASH */, 2 /* PR_FUTEX_HASH_GET_SLOTS */, 0, 0);
    if (slots < 0)
        printf ("  futex hash: not settable on this kernel, skipped\n");
    else
        XXL_CHECK_MSG (slots == 8192, "the executor sized the futex hash (%d buckets)", slots);
}

//  Held wakes: a run queued for an idle worker waits for the release, and
//  every held run then runs
static void
test_hold_wakes (void)
{
    printf ("  held wakes\n");
    char msg [256];
    int64_t id, ids [8];
    xxl_executor_t *executor = s_executor (1, 0, 90);
    //  Idle workers for jobs 300..303
    for (int job = 0; job < 4; job++)
        s_run (executor, 300 + job, "okJobHandler", "", NULL, 0, &id, msg, sizeof msg);
    XXL_CHECK_MSG (s_wait (executor, id, 5000) != NULL, "4 workers ran once");
    usleep (50 * 1000);
    xxl_executor_hold_wakes (executor, 1);
    for (int i = 0; i < 8; i++)
        s_run (executor, 300 + i % 4, "okJobHandler", "", NULL, 0, &ids [i], msg, sizeof msg);
    XXL_CHECK_MSG (s_wait (executor, ids [0], 300) == NULL && xxl_executor_active (executor) == 0,
                   "held: no run starts");
    xxl_executor_hold_wakes (executor, 0);
    int done = 0;
    for (int i = 0; i < 8; i++) {
        xxl_result_t *result = s_wait (executor, ids [i], 5000);
        done += result && result->code == 200;
    }
    XXL_CHECK_MSG (done == 8, "released: all 8 held runs succeed (%d)", done);
    //  Not held any more: a run starts at once
    XXL_CHECK_MSG (s_run (executor, 300, "okJobHandler", "", NULL, 0, &id, msg, sizeof msg) == 0
                   && s_wait (executor, id, 5000) != NULL, "after the release runs start as queued");
    xxl_executor_destroy (&executor);
}

static int
s_match_life (void *arg, const char *life, int64_t log_id)
{
    (void) log_id;
    return streq (life, (const char *) arg);
}

//  1 if the journal file shows log_id open for life (as another process
//  reads it)
static int
s_journaled (const char *path, const char *life, int64_t log_id)
{
    int64_t *ids = NULL;
    size_t count = 0;
    int found = 0;
    if (xxl_journal_read_open (path, life, &ids, &count) == 0)
        for (size_t i = 0; i < count; i++)
            found |= ids [i] == log_id;
    free (ids);
    return found;
}

static void
test_journal (void)
{
    printf ("  journal\n");
    char path [400], msg [256], life [48];
    snprintf (path, sizeof path, "%s/accepted.journal", s_logdir);
    xxl_journal_t *journal = xxl_journal_new (path, 0);
    XXL_CHECK_MSG (journal != NULL, "journal");
    if (!journal)
        return;
    snprintf (life, sizeof life, "%s", xxl_journal_life (journal));
    xxl_executor_config_t config = { 0 };
    config.logdir = s_logdir;
    config.allow_glue = 1;
    config.journal = journal;
    config.run_marker = life;
    xxl_executor_t *executor = xxl_executor_new (&config, s_handlers);
    //  Outside a hold: journaled at once
    int64_t first;
    XXL_CHECK_MSG (s_run (executor, 400, "okJobHandler", "", NULL, 0, &first, msg, sizeof msg) == 0,
                   "run: %s", msg);
    XXL_CHECK_MSG (s_wait (executor, first, 5000) != NULL, "it ran");
    XXL_CHECK_MSG (s_journaled (path, life, first), "its logId is on disk (open: no result spooled)");
    //  In a hold, the run of a busy worker and of an idle one wait for the
    //  release, which writes their logIds first
    int64_t busy, queued, idle;
    s_run (executor, 401, "sleepInJobHandler", "300", NULL, 0, &busy, msg, sizeof msg);
    s_run (executor, 402, "okJobHandler", "", NULL, 0, &idle, msg, sizeof msg);
    XXL_CHECK_MSG (s_wait (executor, idle, 5000) != NULL, "job 402 has an idle worker");
    xxl_executor_hold_wakes (executor, 1);
    s_run (executor, 401, "okJobHandler", "", NULL, 0, &queued, msg, sizeof msg);
    XXL_CHECK_MSG (s_run (executor, 402, "okJobHandler", "", NULL, 0, &idle, msg, sizeof msg) == 0,
                   "held run");
    usleep (500 * 1000);                //  the busy worker's run ended
    XXL_CHECK_MSG (s_wait (executor, busy, 100) != NULL, "the busy worker's run ended");
    XXL_CHECK_MSG (s_wait (executor, queued, 200) == NULL && s_wait (executor, idle, 1) == NULL,
                   "held: neither staged run started");
    XXL_CHECK_MSG (!s_journaled (path, life, queued) && !s_journaled (path, life, idle),
                   "held: their logIds are not written yet");
    xxl_executor_hold_wakes (executor, 0);
    XXL_CHECK_MSG (s_journaled (path, life, queued) && s_journaled (path, life, idle),
                   "released: both logIds written");
    XXL_CHECK_MSG (s_wait (executor, queued, 5000) != NULL && s_wait (executor, idle, 5000) != NULL,
                   "released: both ran");
    //  The marker in a run's environment
    int64_t marked;
    s_glue (executor, 403, "GLUE_SHELL", "echo \"marker=$XXL_AGENT_RUN\"", "", 0, &marked,
            msg, sizeof msg);
    XXL_CHECK_MSG (s_wait (executor, marked, 5000) != NULL, "marker run ran");
    char expect [96];
    snprintf (expect, sizeof expect, "marker=%s.%lld", life, (long long) marked);
    XXL_CHECK_MSG (s_log_has (marked, expect), "the run's environment has %s", expect);
    //  xxl_guard_reap kills a run's processes, found by their marker
    int64_t sleeper;
    s_glue (executor, 404, "GLUE_SHELL", "sleep 30 & sleep 30; wait", "", 0, &sleeper,
            msg, sizeof msg);
    usleep (300 * 1000);
    int64_t start = s_now ();
    int killed = xxl_guard_reap (s_match_life, life, 0);
    xxl_result_t *result = s_wait (executor, sleeper, 5000);
    XXL_CHECK_MSG (killed >= 1 && result && result->code == 500 && s_now () - start < 3000,
                   "reap killed the marked run (%d, %s)", killed, result? result->msg: "no result");
    XXL_CHECK_MSG (xxl_guard_reap (s_match_life, (void *) "1.2", 0) == 0, "another life's: none");
    xxl_executor_destroy (&executor);
    //  Restarted: every logId the journal holds is refused
    journal = (xxl_journal_destroy (&journal), usleep (3000), xxl_journal_new (path, 0));
    config.journal = journal;
    executor = xxl_executor_new (&config, s_handlers);
    xxl_trigger_t trigger = { 0 };
    trigger.job_id = 400;
    trigger.log_id = first;
    trigger.handler = "okJobHandler";
    XXL_CHECK_MSG (xxl_executor_run (executor, &trigger, msg, sizeof msg) == -1
                   && strstr (msg, "already accepted"), "after a restart: %s", msg);
    //  (idle was job 402's run: the same id for job 400 is another run's)
    trigger.log_id = idle;
    XXL_CHECK_MSG (xxl_executor_run (executor, &trigger, msg, sizeof msg) == -1
                   && strstr (msg, XXL_EXECUTOR_OTHER_RUN), "another job's id: %s", msg);
    trigger.job_id = 402;
    XXL_CHECK_MSG (xxl_executor_run (executor, &trigger, msg, sizeof msg) == -1
                   && strstr (msg, "already accepted"), "a held one too: %s", msg);
    xxl_executor_destroy (&executor);
    xxl_journal_destroy (&journal);
    s_stash_clear ();
}

//  1 if the executor's result fd polls readable now
static int
s_fd_readable (xxl_executor_t *executor)
{
    struct pollfd item = { xxl_executor_fd (executor), POLLIN, 0 };
    return poll (&item, 1, 0) == 1 && (item.revents & POLLIN);
}

static void
test_take_many (void)
{
    printf ("  take_many\n");
    char msg [256];
    xxl_executor_t *executor = s_executor (1, 0, 90);
    //  50 runs of one job (a serial queue: they finish in trigger order),
    //  then 30 runs over 30 jobs
    int64_t serial [50], spread [30];
    int accepted = 0;
    for (int i = 0; i < 50; i++)
        accepted += s_run (executor, 300, "okJobHandler", "", NULL, 0, &serial [i], msg, sizeof msg) == 0;
    int64_t until = s_now () + 5000;
    while (xxl_executor_pending (executor) > 0 && s_now () < until)
        usleep (5 * 1000);
    XXL_CHECK_MSG (accepted == 50 && xxl_executor_pending (executor) == 0, "take_many: 50 serial runs ended");
    XXL_CHECK_MSG (s_fd_readable (executor), "take_many: the fd says results wait");

    xxl_result_t results [64];
    XXL_CHECK_MSG (xxl_executor_take_many (executor, results, 0) == 0, "take_many: max 0 takes none");
    XXL_CHECK_MSG (xxl_executor_take_many (NULL, results, 8) == 0
        && xxl_executor_take_many (executor, NULL, 8) == 0, "take_many: NULL self or array");
    //  Bounded by max, oldest first, each once; the fd stays readable
    //  while results are left
    int taken = 0, in_order = 1, bounded = 1, readable_between = 1, ok = 1;
    size_t got;
    while ((got = xxl_executor_take_many (executor, results, 7)) > 0) {
        bounded = bounded && got <= 7;
        for (size_t i = 0; i < got; i++) {
            in_order = in_order && taken < 50 && results [i].log_id == serial [taken];
            ok = ok && results [i].code == 200 && results [i].msg && streq (results [i].msg, "ok");
            taken++;
            free (results [i].msg);
        }
        if (taken < 50)
            readable_between = readable_between && s_fd_readable (executor);
    }
    XXL_CHECK_MSG (taken == 50, "take_many: all 50 taken (%d)", taken);
    XXL_CHECK_MSG (bounded, "take_many: never more than max");
    XXL_CHECK_MSG (in_order, "take_many: in finish order, each once");
    XXL_CHECK_MSG (ok, "take_many: each result intact");
    XXL_CHECK_MSG (readable_between, "take_many: fd readable while results are left");
    XXL_CHECK_MSG (!s_fd_readable (executor), "take_many: fd quiet once all are taken");
    XXL_CHECK_MSG (xxl_executor_take_many (executor, results, 7) == 0, "take_many: none left");

    for (int i = 0; i < 30; i++)
        s_run (executor, 400 + i, "okJobHandler", "", NULL, 0, &spread [i], msg, sizeof msg);
    until = s_now () + 5000;
    while (xxl_executor_pending (executor) > 0 && s_now () < until)
        usleep (5 * 1000);
    int seen [30] = { 0 }, others = 0, total = 0;
    while ((got = xxl_executor_take_many (executor, results, 64)) > 0)
        for (size_t i = 0; i < got; i++, total++) {
            int64_t index = results [i].log_id - spread [0];
            if (index >= 0 && index < 30)
                seen [index]++;
            else
                others++;
            free (results [i].msg);
        }
    int once = others == 0 && total == 30;
    for (int i = 0; i < 30; i++)
        once = once && seen [i] == 1;
    XXL_CHECK_MSG (once, "take_many: 30 runs over 30 jobs, each result once (%d taken)", total);
    xxl_executor_destroy (&executor);
}

static void
test_log_sync (void)
{
    printf ("  log_sync\n");
    char msg [256];
    int64_t id;
    xxl_executor_t *executor = s_executor (1, 0, 90);
    //  A run that writes nothing for 2 s: its start lines are held in
    //  memory, and log_sync makes them appear in the file while it runs
    XXL_CHECK_MSG (s_run (executor, 500, "sleepJobHandler", "2000", NULL, 0, &id, msg, sizeof msg) == 0,
                   "log_sync: sleeper");
    int64_t start = s_now ();
    int shown = 0;
    while (!shown && s_now () - start < 1500) {
        int running = xxl_executor_log_sync (executor, id);
        if (!running)
            break;
        shown = s_log_has (id, "xxl-job job execute start")
             && s_log_has (id, "Handler: sleepJobHandler (BEAN, in process), Param: 2000");
        if (!shown)
            usleep (20 * 1000);
    }
    XXL_CHECK_MSG (shown, "log_sync: the start lines are in the file while the run runs");
    XXL_CHECK_MSG (xxl_executor_running (executor, id) && !s_log_has (id, "execute end"),
                   "log_sync: the run had not ended yet");
    XXL_CHECK_MSG (xxl_executor_log_sync (executor, id) == 1, "log_sync: again is harmless");
    xxl_result_t *result = s_wait (executor, id, 5000);
    XXL_CHECK_MSG (result && result->code == 200, "log_sync: the run ends ok");
    char *content = s_log (id);
    int starts = 0;
    for (const char *p = content; p && (p = strstr (p, "xxl-job job execute start")); p++)
        starts++;
    XXL_CHECK_MSG (starts == 1 && content && strstr (content, "handleCode=200")
        && strstr (content, "execute start") < strstr (content, "execute end"),
                   "log_sync: the log holds the start lines once, then the end lines");
    free (content);
    XXL_CHECK_MSG (xxl_executor_log_sync (executor, id) == 0, "log_sync: a finished run is not running");

    //  An unknown logId: 0, and no file made
    int64_t unknown = s_next_log_id++;
    XXL_CHECK_MSG (xxl_executor_log_sync (executor, unknown) == 0, "log_sync: unknown logId is not running");
    char *none = s_log (unknown);
    XXL_CHECK_MSG (none == NULL, "log_sync: no log file made for an unknown logId");
    free (none);
    XXL_CHECK_MSG (xxl_executor_log_sync (NULL, id) == 0, "log_sync: NULL self");
    xxl_executor_destroy (&executor);
}

//  An in-process executor with log_pack on (the agent's default)
static xxl_executor_config_t
s_pack_config (void)
{
    xxl_executor_config_t config = { 0 };
    config.logdir = s_logdir;
    config.in_process = 1;
    config.idle_reap_s = 90;
    config.log_pack = 1;
    return config;
}

//  log_pack: short in-process runs' logs go to the day's pack, readable
//  as soon as their result is taken; a long log, or one read while its run
//  ran, gets a file of its own; isolated runs keep theirs
static void
test_pack (void)
{
    printf ("  log_pack\n");
    char msg [256];
    int64_t id;
    xxl_executor_config_t config = s_pack_config ();
    xxl_executor_t *executor = xxl_executor_new (&config, s_handlers);
    XXL_CHECK_MSG (executor, "pack: executor");
    if (!executor)
        return;
    XXL_CHECK_MSG (s_run (executor, 600, "okJobHandler", "", NULL, 0, &id, msg, sizeof msg) == 0, "pack: ok run");
    xxl_result_t *result = s_wait (executor, id, 5000);
    XXL_CHECK_MSG (result && result->code == 200, "pack: ok run ends ok");
    XXL_CHECK_MSG (s_log_has (id, "xxl-job job execute start") && s_log_has (id, "handleCode=200"),
                   "pack: the taken result's log is readable, start and end lines");
    XXL_CHECK_MSG (!s_has_file (id), "pack: no file of its own");
    //  A handler's own lines are packed with the run
    XXL_CHECK_MSG (s_run (executor, 601, "logJobHandler", "3", NULL, 0, &id, msg, sizeof msg) == 0, "pack: log run");
    result = s_wait (executor, id, 5000);
    XXL_CHECK_MSG (result && result->code == 200 && s_log_has (id, "log line 3") && !s_has_file (id),
                   "pack: the handler's lines are in the pack");
    char *content = s_log (id);
    XXL_CHECK_MSG (content && strstr (content, "execute start") < strstr (content, "log line 1")
                           && strstr (content, "log line 3") < strstr (content, "execute end"),
                   "pack: lines in order");
    free (content);
    //  Over 64 KB: a file of its own, with every line
    XXL_CHECK_MSG (s_run (executor, 602, "logJobHandler", "3000", NULL, 0, &id, msg, sizeof msg) == 0, "pack: long log run");
    result = s_wait (executor, id, 10000);
    XXL_CHECK_MSG (result && result->code == 200 && s_has_file (id)
        && s_log_has (id, "log line 1\n") && s_log_has (id, "log line 3000")
        && s_log_has (id, "handleCode=200"), "pack: a log over 64 KB gets its own file, whole");
    //  Read while it runs: the file is made then, and keeps the rest
    XXL_CHECK_MSG (s_run (executor, 603, "sleepJobHandler", "500", NULL, 0, &id, msg, sizeof msg) == 0, "pack: sleeper");
    int64_t start = s_now ();
    while (!s_has_file (id) && s_now () - start < 3000) {
        xxl_executor_log_sync (executor, id);
        usleep (10 * 1000);
    }
    result = s_wait (executor, id, 5000);
    XXL_CHECK_MSG (result && result->code == 200 && s_has_file (id) && s_log_has (id, "execute start")
        && s_log_has (id, "handleCode=200"), "pack: a log read while running gets its own file");
    //  Isolated runs write their own file as before
    xxl_executor_destroy (&executor);
    config.in_process = 0;
    executor = xxl_executor_new (&config, s_handlers);
    XXL_CHECK_MSG (executor && s_run (executor, 605, "okJobHandler", "", NULL, 0, &id, msg, sizeof msg) == 0,
                   "pack: isolated run");
    result = s_wait (executor, id, 5000);
    XXL_CHECK_MSG (result && result->code == 200 && s_has_file (id) && s_log_has (id, "handleCode=200"),
                   "pack: an isolated run has its own file");
    xxl_executor_destroy (&executor);
}

//  1 if text holds each of lines [0..count) in that order
static int
s_in_order (const char *text, const char *lines [], int count)
{
    const char *at = text;
    for (int i = 0; at && i < count; i++) {
        at = strstr (at, lines [i]);
        if (at)
            at += strlen (lines [i]);
    }
    return at != NULL;
}

static const char *s_stub_log_file (xxl_run_t *run) { (void) run; return "/stub.log"; }

//  A handler's own log file (xxl_run_log_file, XXL-JOB's
//  XxlJobHelper.getJobLogFileName): lines it or its child appends there
//  show in the run's log between the agent's, in process (the held log
//  moved out of the pack) and isolated; a run that does not ask is packed
static void
test_log_file (void)
{
    printf ("  log_file\n");
    char msg [256], path [512];
    int64_t id;
    xxl_executor_config_t config = s_pack_config ();
    const char *lines [] = {
        "----------- xxl-job job execute start -----------\n",
        "----------- Handler: logFileInJobHandler (BEAN, in process), Param: ",
        "before the file\nfile line 1\nfile line 2\n", "] after the file\n",
        "----------- xxl-job job execute end(finish) -----------\n",
        "handleCode=200, handleMsg = /"
    };
    const int count = (int) (sizeof lines / sizeof lines [0]);
    const char *params [] = { "", "child" };
    for (int mode = 0; mode < 2; mode++) {
        config.in_process = mode == 0;
        lines [1] = mode == 0? "----------- Handler: logFileInJobHandler (BEAN, in process), Param: "
                             : "----------- Handler: logFileJobHandler (BEAN, isolated), Param: ";
        const char *label = mode == 0? "in process": "isolated";
        xxl_executor_t *executor = xxl_executor_new (&config, s_handlers);
        XXL_CHECK_MSG (executor, "log_file: executor");
        if (!executor)
            return;
        for (int p = 0; p < 2; p++) {
            XXL_CHECK_MSG (s_run (executor, 700 + mode, mode == 0? "logFileInJobHandler": "logFileJobHandler",
                                  params [p], NULL, 0, &id, msg, sizeof msg) == 0, "log_file: run");
            xxl_result_t *result = s_wait (executor, id, 5000);
            xxl_runlog_path (s_logdir, id, (int64_t) time (NULL) * 1000, path, sizeof path);
            XXL_CHECK_MSG (result && result->code == 200 && result->msg && streq (result->msg, path),
                           "log_file %s%s: the handler got the path of its file, {logdir}/date/logId.log: %d %s",
                           label, params [p], result? result->code: -1, result && result->msg? result->msg: "");
            XXL_CHECK_MSG (s_has_file (id), "log_file %s%s: a file of its own", label, params [p]);
            char *content = s_log (id);
            XXL_CHECK_MSG (content && s_in_order (content, lines, count),
                           "log_file %s%s: start lines, the handler's and its file lines, end lines, in order:\n%s",
                           label, params [p], content? content: "(none)");
            int starts = 0;
            for (const char *at = content; at && (at = strstr (at, "execute start")); at++)
                starts++;
            XXL_CHECK_MSG (starts == 1, "log_file %s%s: the start lines once", label, params [p]);
            free (content);
        }
        //  A run that does not ask keeps the hot path: into the pack
        XXL_CHECK_MSG (s_run (executor, 702, "logJobHandler", "2", NULL, 0, &id, msg, sizeof msg) == 0, "log_file: log run");
        xxl_result_t *result = s_wait (executor, id, 5000);
        XXL_CHECK_MSG (result && result->code == 200 && s_log_has (id, "log line 2")
            && s_has_file (id) == (mode == 1),
                       "log_file %s: a run that does not ask %s", label,
                       mode == 0? "is packed": "has its file, as every isolated run");
        //  A last line the handler left open: the end lines start a line
        XXL_CHECK_MSG (s_run (executor, 700 + mode, mode == 0? "logFileInJobHandler": "logFileJobHandler",
                              "open", NULL, 0, &id, msg, sizeof msg) == 0, "log_file: open run");
        result = s_wait (executor, id, 5000);
        char *content = s_log (id);
        const char *open_lines [] = {
            "before the file\nfile line 1\nfile line 2\n",
            "] ----------- xxl-job job execute end(finish) -----------\n", "handleCode=200"
        };
        XXL_CHECK_MSG (result && result->code == 200 && content && s_in_order (content, open_lines, 3),
                       "log_file %s: the end lines on a line of their own after an open last line:\n%s",
                       label, content? content: "(none)");
        free (content);
        xxl_executor_destroy (&executor);
    }

    //  The file cannot be made (its path is taken by a folder): NULL, the
    //  run goes on, its log held and packed as if never asked
    config.in_process = 1;
    xxl_executor_t *executor = xxl_executor_new (&config, s_handlers);
    int64_t date = (int64_t) time (NULL) * 1000;
    id = s_next_log_id;
    xxl_runlog_path (s_logdir, id, date, path, sizeof path);
    XXL_CHECK_MSG (zsys_dir_create ("%s", path) == 0, "log_file: a folder where the file would be");
    XXL_CHECK_MSG (s_run (executor, 703, "logFileInJobHandler", "", NULL, 0, &id, msg, sizeof msg) == 0
                   && id == s_next_log_id - 1, "log_file: unmakable run");
    xxl_result_t *result = s_wait (executor, id, 5000);
    XXL_CHECK_MSG (result && result->code == 500 && s_msg_has (result, "no log file"),
                   "log_file: NULL when the file cannot be made: %s", result && result->msg? result->msg: "");
    size_t packed_len = 0;
    char *packed = xxl_runpack_find (s_logdir, id, date, &packed_len);
    XXL_CHECK_MSG (packed && strstr (packed, "before the file") && strstr (packed, "handleCode=500"),
                   "log_file: the run's log went to the pack, whole");
    free (packed);
    xxl_executor_destroy (&executor);
    zsys_dir_delete ("%s", path);

    //  A host table that ends before log_file (an older agent): NULL,
    //  the member past its size never read
    xxl_handler_host_t host = { 0 };
    host.abi_version = XXL_HANDLER_ABI_VERSION;
    host.size = sizeof host;
    host.log_file = s_stub_log_file;
    xxl_run_t run = { &host, NULL };
    const char *full = xxl_run_log_file (&run);
    XXL_CHECK_MSG (full && streq (full, "/stub.log"), "log_file: a host with the member is called");
    host.size = offsetof (xxl_handler_host_t, log_file);
    XXL_CHECK_MSG (xxl_run_log_file (&run) == NULL, "log_file: NULL on an older host");
}

static xxl_executor_t *
s_executor_pool (int threads_max, int waiting_max)
{
    xxl_executor_config_t config = { 0 };
    config.logdir = s_logdir;
    config.in_process = 1;
    config.idle_reap_s = 90;
    config.threads_max = threads_max;
    config.waiting_max = waiting_max;
    return xxl_executor_new (&config, s_handlers);
}

//  Waits up to ms for `active` runs running at once
static int
s_wait_active (xxl_executor_t *executor, size_t active, int ms)
{
    int64_t until = s_now () + ms;
    while (xxl_executor_active (executor) != active)
        if (s_now () >= until)
            return 0;
        else
            usleep (5 * 1000);
    return 1;
}

//  A pool of 2 threads serving 20 jobs of 5 runs each: per job one run at
//  a time, in the order queued (each job's results come in logId order);
//  the pool never has more than its 2 threads
static void
test_pool_fifo (void)
{
    printf ("  pool of 2 threads, 20 jobs x 5 runs: FIFO per job\n");
    xxl_executor_t *executor = s_executor_pool (2, -1);
    char msg [256];
    int64_t id, first = s_next_log_id;
    int accepted = 0;
    for (int round = 0; round < 5; round++)
        for (int job = 0; job < 20; job++)
            accepted += s_run (executor, 400 + job, "sleepJobHandler", "2", NULL, 0,
                               &id, msg, sizeof msg) == 0;
    XXL_CHECK_MSG (accepted == 100, "100 runs accepted (%d): the waiting bound off (< 0)", accepted);
    int64_t last [20] = { 0 };
    int done = 0, in_order = 1;
    int64_t until = s_now () + 60000;
    while (done < 100 && s_now () < until) {
        xxl_result_t result;
        while (xxl_executor_take (executor, &result) == 0) {
            if (result.log_id >= first && result.log_id < first + 100) {
                int job = (int) ((result.log_id - first) % 20);
                if (result.log_id < last [job])
                    in_order = 0;
                last [job] = result.log_id;
                done += result.code == 200;
            }
            free (result.msg);
        }
        struct pollfd item = { xxl_executor_fd (executor), POLLIN, 0 };
        poll (&item, 1, 100);
    }
    size_t peak = 0;
    xxl_executor_threads (executor, &peak);
    XXL_CHECK_MSG (done == 100, "all 100 ran (%d)", done);
    XXL_CHECK_MSG (in_order, "each job's runs ended in the order they were queued");
    XXL_CHECK_MSG (peak <= 2, "at most 2 pool threads (peak %zu)", peak);
    xxl_executor_destroy (&executor);
}

//  After a burst the pool returns to its resting size, paced while runs
//  keep coming: 300 sleeping runs at once grow it to ~300 threads; then
//  empty runs one at a time on 2 jobs (each readies its queue, so each
//  wakes an idle thread) for 3 s, three times thread_idle_ms (1 s with
//  idle_reap_s 1).  The warm threads serve them; the others retire one
//  every RETIRE_BUSY_TICK_MS (25 ms) at most while the stream lasts (their
//  unmaps would take the stream's CPU), and the rest quickly once it
//  ended (to at most 30 beyond threads_min, the CPUs).  A wake that went to the idle threads in turn would keep every
//  one alive.
static void
test_pool_retire (void)
{
    printf ("  pool after a burst: 300 sleeping runs, then a stream of empty runs\n");
    xxl_executor_config_t config = { 0 };
    config.logdir = s_logdir;
    config.in_process = 1;
    config.idle_reap_s = 1;
    xxl_executor_t *executor = xxl_executor_new (&config, s_handlers);
    char msg [256];
    int64_t id, first = s_next_log_id;
    int accepted = 0, done = 0;
    for (int job = 0; job < 300; job++)
        accepted += s_run (executor, 2000 + job, "sleepInJobHandler", "300", NULL, 0,
                           &id, msg, sizeof msg) == 0;
    XXL_CHECK_MSG (accepted == 300, "300 sleeping runs accepted (%d)", accepted);
    int64_t until = s_now () + 60000;
    while (done < accepted && s_now () < until) {
        xxl_result_t result;
        while (xxl_executor_take (executor, &result) == 0) {
            done += result.log_id >= first && result.code == 200;
            free (result.msg);
        }
        struct pollfd item = { xxl_executor_fd (executor), POLLIN, 0 };
        poll (&item, 1, 100);
    }
    size_t peak = 0, after_burst = xxl_executor_threads (executor, &peak);
    XXL_CHECK_MSG (done == 300, "the 300 sleeping runs ended (%d)", done);
    //  The stream: each job's next run once its last ended
    int64_t stream_from = s_next_log_id, started = s_now (), stop = started + 3000;
    int streamed = 0, ok = 0, in_flight = 0;
    //  (the retirements while runs end, counted from 1.5 s into the
    //  stream, half a second after the burst's threads may first retire,
    //  under the pool lock with the time, as the manager counts them)
    int64_t window_from = 0;
    uint64_t busy_from = 0;
    for (int job = 0; job < 2; job++)
        in_flight += s_run (executor, 2400 + job, "emptyInJobHandler", "", NULL, 0,
                            &id, msg, sizeof msg) == 0;
    while (in_flight > 0) {
        if (!window_from && s_now () >= started + 1500) {
            pthread_mutex_lock (&executor->pool_lock);
            busy_from = executor->retired_busy;
            window_from = s_now ();
            pthread_mutex_unlock (&executor->pool_lock);
        }
        xxl_result_t result;
        while (xxl_executor_take (executor, &result) == 0) {
            if (result.log_id >= stream_from) {
                in_flight--;
                streamed++;
                ok += result.code == 200;
                if (s_now () < stop)
                    in_flight += s_run (executor, 2400 + streamed % 2, "emptyInJobHandler",
                                        "", NULL, 0, &id, msg, sizeof msg) == 0;
            }
            free (result.msg);
        }
        struct pollfd item = { xxl_executor_fd (executor), POLLIN, 0 };
        poll (&item, 1, 10);
    }
    pthread_mutex_lock (&executor->pool_lock);
    int64_t window_ms = s_now () - window_from;
    uint64_t busy = executor->retired_busy, quiet = executor->retired_quiet;
    pthread_mutex_unlock (&executor->pool_lock);
    size_t under_stream = xxl_executor_threads (executor, NULL);
    XXL_CHECK_MSG (streamed > 100 && ok == streamed, "the stream's runs ended 200 (%d of %d)",
                   ok, streamed);
    XXL_CHECK_MSG (peak >= 100, "the burst grew the pool (peak %zu, %zu after it)", peak,
                   after_burst);
    XXL_CHECK_MSG (window_from && busy >= 1 && busy - busy_from <= (uint64_t) (window_ms / 25 + 1),
                   "retired while runs kept ending, one each 25 ms at most: %" PRIu64
                   " in the stream's last %" PRId64 " ms (%" PRIu64 " in all; %" PRIu64
                   " at the quiet pace, where the stream stalled; %zu threads left)",
                   busy - busy_from, window_ms, busy, quiet, under_stream);
    //  Once it ended, the rest at the quiet pace (none left for it when
    //  stalls of the stream let the quiet pace take them all)
    size_t rest_max = executor->threads_min + 30;
    int64_t settle_until = s_now () + 10000;
    size_t resting = under_stream;
    while ((resting = xxl_executor_threads (executor, NULL)) > rest_max && s_now () < settle_until)
        usleep (10000);
    pthread_mutex_lock (&executor->pool_lock);
    uint64_t quiet_after = executor->retired_quiet - quiet;
    pthread_mutex_unlock (&executor->pool_lock);
    XXL_CHECK_MSG (resting <= rest_max && (quiet_after > 0 || under_stream <= rest_max),
                   "back to its resting size once the stream ended: %zu threads (peak %zu,"
                   " %zu when it ended, %" PRIu64 " retired at the quiet pace since)", resting,
                   peak, under_stream, quiet_after);
    xxl_executor_destroy (&executor);
}

//  Waits (10 s at most) until every pool thread is idle
static void
s_wait_settled (xxl_executor_t *executor)
{
    int64_t until = s_now () + 10000;
    while (s_now () < until) {
        pthread_mutex_lock (&executor->pool_lock);
        int settled = executor->idle_threads == executor->threads;
        pthread_mutex_unlock (&executor->pool_lock);
        if (settled)
            break;
        usleep (200);
    }
}

//  One run at a time, idle threads waiting: each run wakes one idle thread
//  and nothing else (not the manager, not a second thread the manager
//  would wake while the first is on its way: two extra switches a run)
static void
test_pool_one_wake (void)
{
    printf ("  one run at a time: one wake each\n");
    xxl_executor_t *executor = s_executor (1, 0, 0);
    char msg [256];
    int64_t id;
    //  (the pool's threads start and go idle first)
    XXL_CHECK (s_run (executor, 2600, "emptyInJobHandler", "", NULL, 0, &id, msg, sizeof msg) == 0);
    XXL_CHECK (s_wait (executor, id, 10000) != NULL);
    pthread_mutex_lock (&executor->pool_lock);
    uint64_t wakes = executor->wakes, calls = executor->manager_calls;
    pthread_mutex_unlock (&executor->pool_lock);
    int runs = 200, ok = 0;
    for (int i = 0; i < runs; i++) {
        s_wait_settled (executor);     //  (the last run's thread idle again)
        if (s_run (executor, 2600 + i % 2, "emptyInJobHandler", "", NULL, 0, &id, msg,
                   sizeof msg) == 0) {
            xxl_result_t *result = s_wait (executor, id, 10000);
            ok += result && result->code == 200;
        }
    }
    pthread_mutex_lock (&executor->pool_lock);
    wakes = executor->wakes - wakes;
    calls = executor->manager_calls - calls;
    pthread_mutex_unlock (&executor->pool_lock);
    XXL_CHECK_MSG (ok == runs, "the runs ended 200 (%d of %d)", ok, runs);
    XXL_CHECK_MSG (wakes == (uint64_t) runs, "one idle thread woken a run (%" PRIu64
                   " wakes for %d runs)", wakes, runs);
    XXL_CHECK_MSG (calls == 0, "the manager not woken for a run a thread took (%" PRIu64
                   " signals)", calls);
    s_stash_clear ();
    xxl_executor_destroy (&executor);
}

//  A hold's release lists every queue that got runs in it under one pool
//  lock and wakes at most one idle thread a CPU (a lock and a wake a queue
//  made the pool threads, taking queues off the list, block on the lock
//  and wake again): 64 idle jobs get 2 runs each in a hold; every run
//  ends 200, each job's in order
static void
test_pool_release (void)
{
    printf ("  a release of 64 queues: one listing, a wake a CPU at most\n");
    xxl_executor_t *executor = s_executor (1, 0, 0);
    char msg [256];
    int64_t id, ids [128];
    enum { JOBS = 64 };
    int ran = 0;
    for (int job = 0; job < JOBS; job++)
        if (s_run (executor, 2700 + job, "emptyInJobHandler", "", NULL, 0, &id, msg, sizeof msg) == 0)
            ran += s_wait (executor, id, 10000) != NULL;
    XXL_CHECK_MSG (ran == JOBS, "64 idle queues (%d)", ran);
    s_wait_settled (executor);
    pthread_mutex_lock (&executor->pool_lock);
    uint64_t lists = executor->ready_lists, wakes = executor->wakes;
    size_t cpus = executor->cpus;
    pthread_mutex_unlock (&executor->pool_lock);
    xxl_executor_hold_wakes (executor, 1);
    int accepted = 0;
    for (int i = 0; i < 2 * JOBS; i++)
        accepted += s_run (executor, 2700 + i % JOBS, "emptyInJobHandler", "", NULL, 0, &ids [i],
                           msg, sizeof msg) == 0;
    pthread_mutex_lock (&executor->pool_lock);
    uint64_t held_lists = executor->ready_lists - lists;
    pthread_mutex_unlock (&executor->pool_lock);
    xxl_executor_hold_wakes (executor, 0);
    pthread_mutex_lock (&executor->pool_lock);
    lists = executor->ready_lists - lists;
    wakes = executor->wakes - wakes;
    pthread_mutex_unlock (&executor->pool_lock);
    int ok = 0, in_order = 1;
    for (int i = 0; i < 2 * JOBS; i++) {
        xxl_result_t *result = s_wait (executor, ids [i], 10000);
        ok += result && result->code == 200;
    }
    //  Each job's results come in the order its runs were queued (the
    //  stash keeps the order results were taken in)
    for (int i = 0; i < JOBS; i++) {
        xxl_result_t *first = s_wait (executor, ids [i], 1), *second = s_wait (executor, ids [i + JOBS], 1);
        in_order = in_order && first && second && first < second;
    }
    XXL_CHECK_MSG (accepted == 2 * JOBS && ok == 2 * JOBS, "128 held runs ended 200 (%d of %d)",
                   ok, accepted);
    XXL_CHECK_MSG (in_order, "each job's runs in order");
    XXL_CHECK_MSG (held_lists == 0, "nothing listed while held (%" PRIu64 ")", held_lists);
    XXL_CHECK_MSG (lists == 1, "the release listed the 64 queues at once (%" PRIu64 " listings)",
                   lists);
    XXL_CHECK_MSG (wakes >= 1 && wakes <= cpus, "%" PRIu64 " idle threads woken for them (%zu CPUs)",
                   wakes, cpus);
    s_stash_clear ();
    xxl_executor_destroy (&executor);
}

//  Back-pressure: with 2 threads both in runs and 1 run waiting for one, a
//  run that needs a thread is refused "busy: ..." (nothing taken: the same
//  logId is accepted later); a run queued behind its own job's run needs
//  no thread and is taken
static void
test_pool_busy (void)
{
    printf ("  pool of 2 threads, 1 waiting: refusal busy\n");
    xxl_executor_t *executor = s_executor_pool (2, 1);
    char msg [256];
    int64_t a, b, c, d, a2;
    XXL_CHECK_MSG (s_run (executor, 500, "sleepJobHandler", "20000", NULL, 0, &a, msg, sizeof msg) == 0, "job 500 runs");
    XXL_CHECK_MSG (s_run (executor, 501, "sleepJobHandler", "20000", NULL, 0, &b, msg, sizeof msg) == 0, "job 501 runs");
    XXL_CHECK_MSG (s_wait_active (executor, 2, 10000), "both threads in a run");
    XXL_CHECK_MSG (!xxl_executor_full (executor, NULL, 0), "not full yet (nothing waits)");
    XXL_CHECK_MSG (s_run (executor, 502, "sleepJobHandler", "1", NULL, 0, &c, msg, sizeof msg) == 0,
                   "job 502 accepted: it waits for a thread (%s)", msg);
    XXL_CHECK_MSG (xxl_executor_full (executor, NULL, 0), "full: 1 run waits, waiting_max 1");
    XXL_CHECK_MSG (s_run (executor, 503, "sleepJobHandler", "1", NULL, 0, &d, msg, sizeof msg) == -1
        && strncmp (msg, XXL_EXECUTOR_BUSY_PREFIX, strlen (XXL_EXECUTOR_BUSY_PREFIX)) == 0,
                   "job 503 refused busy (%s)", msg);
    XXL_CHECK_MSG (!xxl_executor_running (executor, d) && !xxl_executor_busy (executor, 503),
                   "the refused run was not taken");
    XXL_CHECK_MSG (s_run (executor, 500, "sleepJobHandler", "1", NULL, 0, &a2, msg, sizeof msg) == 0,
                   "job 500's next run queues behind its running one (%s)", msg);
    //  Free the threads: the waiting run runs, then the refused logId is taken
    XXL_CHECK_MSG (xxl_executor_kill (executor, 501, "test") == 0, "kill job 501");
    xxl_result_t *result = s_wait (executor, c, 10000);
    XXL_CHECK_MSG (result && result->code == 200, "the waiting run ran once a thread was free");
    xxl_trigger_t trigger = { 0 };
    trigger.job_id = 503;
    trigger.log_id = d;
    trigger.log_date_time = (int64_t) time (NULL) * 1000;
    trigger.handler = "sleepJobHandler";
    trigger.params = "1";
    XXL_CHECK_MSG (xxl_executor_run (executor, &trigger, msg, sizeof msg) == 0,
                   "the refused logId is accepted when sent again (%s)", msg);
    result = s_wait (executor, d, 10000);
    XXL_CHECK_MSG (result && result->code == 200, "and runs");
    XXL_CHECK_MSG (xxl_executor_kill (executor, 500, "test") == 0, "kill job 500");
    result = s_wait (executor, a2, 10000);
    XXL_CHECK_MSG (result && result->code == 500 && s_msg_has (result, "in the job queue"),
                   "its queued run fails as killed in the queue");
    xxl_executor_destroy (&executor);
}

static void
test_scale (const char *handler, int count, int ms)
{
    char msg [256];
    xxl_executor_t *executor = s_executor (0, 0, 90);
    int64_t first = s_next_log_id, start = s_now (), id = 0;
    int accepted = 0;
    char param [16];
    snprintf (param, sizeof param, "%d", ms);
    for (int job = 0; job < count; job++)
        if (s_run (executor, 10000 + job, handler, param, NULL, 0, &id, msg, sizeof msg) == 0)
            accepted++;
    int64_t queued = s_now () - start;
    size_t max_active = 0;
    int done = 0;
    int64_t until = s_now () + 60000;
    while (done < count && s_now () < until) {
        size_t active = xxl_executor_active (executor);
        if (active > max_active)
            max_active = active;
        xxl_result_t result;
        while (xxl_executor_take (executor, &result) == 0) {
            if (result.log_id >= first && result.code == 200)
                done++;
            free (result.msg);
        }
        usleep (10 * 1000);
    }
    int64_t took = s_now () - start;
    XXL_CHECK_MSG (accepted == count && done == count, "%s: %d accepted, %d succeeded of %d", handler, accepted, done, count);
    XXL_CHECK_MSG (max_active >= (size_t) count * 9 / 10, "%s: %zu at once", handler, max_active);
    printf ("  %d sleeping runs (%s, %d ms): queued in %lld ms, all done in %lld ms, %zu at once\n",
            count, handler, ms, (long long) queued, (long long) took, max_active);
    xxl_executor_destroy (&executor);
}

static void
s_bench (const char *label, int in_process, int allow_glue, const char *handler,
         const char *glue, int count, int jobs)
{
    char msg [256];
    xxl_executor_t *executor = s_executor (in_process, allow_glue, 90);
    int64_t start = s_now ();
    int done = 0, sent = 0;
    while (done < count) {
        //  Keep a window of runs in flight
        while (sent < count && sent - done < 2000) {
            xxl_trigger_t trigger = { 0 };
            trigger.job_id = 50000 + sent % jobs;
            trigger.log_id = s_next_log_id++;
            trigger.log_date_time = (int64_t) time (NULL) * 1000;
            trigger.handler = handler;
            trigger.glue_type = glue;
            trigger.glue_source = "true";
            trigger.params = "";
            if (xxl_executor_run (executor, &trigger, msg, sizeof msg))
                break;
            sent++;
        }
        struct pollfd item = { xxl_executor_fd (executor), POLLIN, 0 };
        poll (&item, 1, 100);
        xxl_result_t result;
        while (xxl_executor_take (executor, &result) == 0) {
            done++;
            free (result.msg);
        }
    }
    int64_t took = s_now () - start;
    printf ("  bench %s: %d runs on %d jobs in %lld ms = %.0f runs/s\n", label, count, jobs,
            (long long) took, count * 1000.0 / (took? took: 1));
    xxl_executor_destroy (&executor);
}

int
main (void)
{
    if (xxl_test_agent_start (s_logdir, sizeof s_logdir, "executor"))
        return xxl_test_done ();
    const char *plugins = xxl_test_agent_plugins ();
    s_handlers = xxl_test_agent_handlers (s_logdir, plugins);
    XXL_CHECK_MSG (s_handlers && xxl_handlers_exists (s_handlers, "okJobHandler"),
                   "test handlers loaded from %s", plugins);
    if (s_handlers && xxl_handlers_exists (s_handlers, "okJobHandler")) {
        xxl_executor_t *executor = s_executor (0, 0, 90);
        XXL_CHECK_MSG (executor != NULL, "executor");
        test_bean (executor, "isolated");
        test_no_runner ();
        test_isolation (executor);
        test_queues (executor, "sleepJobHandler");
        xxl_executor_destroy (&executor);
        executor = s_executor (1, 0, 90);
        test_bean (executor, "in process");
        test_queues (executor, "sleepJobHandler");
        xxl_executor_destroy (&executor);
        executor = s_executor (0, 0, 90);
        test_queues (executor, "sleepInJobHandler");     //  flagged in-process
        xxl_executor_destroy (&executor);
        test_sleep ();
        test_glue ();
        test_glue_python2 ();
        test_reap_and_stop ();
        test_hold_wakes ();
        test_journal ();
        test_futex_hash ();
        test_take_many ();
        test_log_sync ();
        test_pack ();
        test_log_file ();
        test_pool_fifo ();
        test_pool_one_wake ();
        test_pool_release ();
        test_pool_busy ();
        test_pool_retire ();
        //  2000 threads: under a sanitizer on a busy machine they start at
        //  about 500 a second, so each run sleeps long enough for all to start
        test_scale ("sleepInJobHandler", 2000, 6000);
        //  Isolated runs start a process each: under a sanitizer on a busy
        //  machine 300 spawns can take seconds, so each run sleeps long
        //  enough that all have started before the first ends
        test_scale ("sleepJobHandler", getenv ("XXL_BENCH")? 2000: 300, getenv ("XXL_BENCH")? 5000: 6000);
        if (getenv ("XXL_BENCH")) {
            s_bench ("in-process empty BEAN, 1 job", 0, 0, "emptyInJobHandler", "BEAN", 200000, 1);
            s_bench ("in-process empty BEAN, 64 jobs", 0, 0, "emptyInJobHandler", "BEAN", 200000, 64);
            s_bench ("isolated empty BEAN, 64 jobs", 0, 0, "emptyJobHandler", "BEAN", 10000, 64);
            s_bench ("GLUE_SHELL true, 64 jobs", 0, 1, NULL, "GLUE_SHELL", 10000, 64);
        }
    }
    s_stash_clear ();
    xxl_handlers_destroy (&s_handlers);
    xxl_test_rmtree (s_logdir);
    return xxl_test_done ();
}
