/*  test_handler_init.c -- per-job handler lifecycles (xxl/handler.h's
    xxl_handler_lifecycle_t, as XXL-JOB's @XxlJob(init, destroy)) on the
    agent's executor, with tests/plugins/lifecycle.c, which records every
    init, run and destroy in a file:

    - init runs once before the first run of a job, inside that run (its
      log), not again for the next run, separately per job id; the runs
      see the state init made (xxl_run_job_state);
    - an init that fails fails the run that caused it ("job init failed:
      ...", the handler not called) and the next run tries again; an
      init that returns past the run's timeout: the run times out (502),
      the handler not called, the job ready for its next run;
    - destroy runs once when the job's queue is retired: replaced (another
      handler), killed (after the killed run returned, never during it),
      reaped idle, the plugin file replaced (before the new code's init),
      the executor stopped; a handler with only a destroy gets it too;
    - a plugin built against the first descriptor (size
      XXL_HANDLER_PLUGIN_SIZE_V1) loads and runs as before: what lies past
      its size is never read;
    - a lifecycle on a handler that is not XXL_HANDLER_IN_PROCESS, or
      naming a handler the plugin lacks, refuses the plugin, with a clear
      log line.

    Environment: XXL_TEST_PLUGINS = folder with the built test plugins
    (lifecycle.so, lifecycle_v1.so, lifecycle_isolated.so,
    lifecycle_unknown.so).  Last line: "N passed, M failed".
*/

#define _GNU_SOURCE
#include "xxl_executor.h"
#include "xxl_handlers.h"
#include "xxl_logread.h"

#include <czmq.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "xxl_test_agent.h"

static char s_dir [256];
static char s_records [512];
static char s_plugin_dir [600];
static const char *s_plugins;
static int64_t s_next_log_id = 5000;

static int64_t
s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

//  Copies a built plugin into the plugins folder as name, atomically (a
//  new file: a rescan loads it afresh)
static int
s_install (const char *built, const char *name)
{
    char command [2048];
    snprintf (command, sizeof command, "cp '%s/%s' '%s/.%s.tmp' && mv '%s/.%s.tmp' '%s/%s'",
              s_plugins, built, s_plugin_dir, name, s_plugin_dir, name, s_plugin_dir, name);
    return system (command);
}

static char *
s_slurp (const char *path)
{
    FILE *file = fopen (path, "r");
    if (!file)
        return strdup ("");
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream (&text, &size);
    char buf [4096];
    size_t got;
    while ((got = fread (buf, 1, sizeof buf, file)) > 0)
        fwrite (buf, 1, got, out);
    fclose (out);
    fclose (file);
    return text;
}

//  How many record lines equal line
static int
s_count (const char *line)
{
    char *text = s_slurp (s_records);
    int count = 0;
    size_t len = strlen (line);
    for (char *at = text; at && *at; ) {
        char *end = strchr (at, '\n');
        size_t size = end? (size_t) (end - at): strlen (at);
        if (size == len && memcmp (at, line, len) == 0)
            count++;
        at = end? end + 1: NULL;
    }
    free (text);
    return count;
}

//  The index of the first (last: the last) record line equal to line, -1
//  if none
static int
s_find (const char *line, int last)
{
    char *text = s_slurp (s_records);
    int index = 0, found = -1;
    size_t len = strlen (line);
    for (char *at = text; at && *at && (last || found < 0); index++) {
        char *end = strchr (at, '\n');
        size_t size = end? (size_t) (end - at): strlen (at);
        if (size == len && memcmp (at, line, len) == 0)
            found = index;
        at = end? end + 1: NULL;
    }
    free (text);
    return found;
}

static int s_index (const char *line) { return s_find (line, 0); }
static int s_last (const char *line) { return s_find (line, 1); }

//  Waits up to ms for a record line (the destroy of a retired queue runs
//  on a pool thread); 1 once it is there
static int
s_wait_record (const char *line, int ms)
{
    int64_t until = s_now () + ms;
    while (s_count (line) == 0) {
        if (s_now () >= until)
            return 0;
        poll (NULL, 0, 5);
    }
    return 1;
}

static int
s_records_have (const char *part)
{
    char *text = s_slurp (s_records);
    int found = strstr (text, part) != NULL;
    free (text);
    return found;
}

static int s_result (xxl_executor_t *executor, const xxl_trigger_t *trigger, char *msg,
                     size_t msglen);

//  Runs handler for job_id and waits for its result; the result's code,
//  its message in msg (or the refusal's), -1 when refused or no result
static int
s_run (xxl_executor_t *executor, int64_t job_id, const char *handler, const char *param,
       char *msg, size_t msglen, int64_t *log_id_p)
{
    xxl_trigger_t trigger = { 0 };
    trigger.job_id = job_id;
    int64_t log_id = trigger.log_id = s_next_log_id++;
    if (log_id_p)
        *log_id_p = log_id;
    trigger.log_date_time = (int64_t) time (NULL) * 1000;
    trigger.handler = handler;
    trigger.params = param;
    trigger.glue_type = "BEAN";
    trigger.shard_total = 1;
    return s_result (executor, &trigger, msg, msglen);
}

//  Runs trigger and waits for its result: as s_run
static int
s_result (xxl_executor_t *executor, const xxl_trigger_t *trigger, char *msg, size_t msglen)
{
    int64_t log_id = trigger->log_id;
    if (xxl_executor_run (executor, trigger, msg, msglen))
        return -1;
    int64_t until = s_now () + 10000;
    while (s_now () < until) {
        xxl_result_t result;
        while (xxl_executor_take (executor, &result) == 0) {
            int code = result.code;
            int mine = result.log_id == log_id;
            if (mine)
                snprintf (msg, msglen, "%s", result.msg? result.msg: "");
            free (result.msg);
            if (mine)
                return code;
        }
        struct pollfd item = { xxl_executor_fd (executor), POLLIN, 0 };
        poll (&item, 1, 100);
    }
    snprintf (msg, msglen, "no result");
    return -1;
}

static xxl_executor_t *
s_executor (xxl_handlers_t *handlers, int idle_reap_s)
{
    xxl_executor_config_t config = { 0 };
    config.logdir = s_dir;
    config.idle_reap_s = idle_reap_s;
    return xxl_executor_new (&config, handlers);
}

static int
s_log_has (int64_t log_id, const char *text)
{
    int to_line;
    char err [256];
    char *content = xxl_logread_max (s_dir, log_id, (int64_t) time (NULL) * 1000, 1,
                                     1024 * 1024, &to_line, err, sizeof err);
    int found = content && strstr (content, text);
    free (content);
    return found;
}

int
main (void)
{
    if (xxl_test_agent_start (s_dir, sizeof s_dir, "handler-init"))
        return xxl_test_done ();
    s_plugins = xxl_test_agent_plugins ();
    snprintf (s_records, sizeof s_records, "%s/records", s_dir);
    setenv ("XXL_TEST_LIFE_LOG", s_records, 1);
    snprintf (s_plugin_dir, sizeof s_plugin_dir, "%s/plugins", s_dir);
    char logpath [600];
    snprintf (logpath, sizeof logpath, "%s/agent.log", s_dir);
    FILE *logfile = fopen (logpath, "w");
    zsys_set_logstream (logfile);
    char command [1024];
    snprintf (command, sizeof command, "mkdir -p '%s'", s_plugin_dir);
    XXL_CHECK (system (command) == 0);
    XXL_CHECK (s_install ("lifecycle.so", "lifecycle.so") == 0);
    XXL_CHECK (s_install ("lifecycle_v1.so", "lifecycle_v1.so") == 0);
    XXL_CHECK (s_install ("lifecycle_isolated.so", "lifecycle_isolated.so") == 0);
    XXL_CHECK (s_install ("lifecycle_unknown.so", "lifecycle_unknown.so") == 0);

    //  Loading: the allowed lifecycles load, the bad ones refuse their
    //  plugin with a clear line
    xxl_handlers_t *handlers = xxl_handlers_new (s_plugin_dir);
    fflush (logfile);
    char *log = s_slurp (logpath);
    XXL_CHECK_MSG (xxl_handlers_exists (handlers, "lifeJobHandler")
               &&  xxl_handlers_exists (handlers, "lifeDestroyOnlyJobHandler"),
                   "a plugin with lifecycles on in-process handlers loads");
    XXL_CHECK_MSG (xxl_handlers_exists (handlers, "oldLifeJobHandler"),
                   "a plugin with the first descriptor's size loads");
    XXL_CHECK_MSG (!xxl_handlers_exists (handlers, "lifeIsolatedJobHandler"),
                   "a lifecycle on an isolated handler refuses its plugin");
    XXL_CHECK_HAS (log, "handler 'lifeIsolatedJobHandler' has a lifecycle (init/destroy) but"
                        " is not flagged XXL_HANDLER_IN_PROCESS");
    XXL_CHECK_MSG (!xxl_handlers_exists (handlers, "lifeKnownJobHandler"),
                   "a lifecycle naming no handler of the plugin refuses it");
    XXL_CHECK_HAS (log, "names handler 'lifeNoSuchJobHandler', which is not in the plugin's"
                        " handler table");
    free (log);
    if (!xxl_handlers_exists (handlers, "lifeJobHandler")) {
        xxl_handlers_destroy (&handlers);
        return xxl_test_done ();
    }

    char msg [256];
    int64_t log_id;
    xxl_trigger_t trigger;
    xxl_executor_t *executor = s_executor (handlers, 90);
    XXL_CHECK (executor != NULL);

    //  Init once before the first run of a job, per job id; the runs share
    //  the state it made
    printf ("  init once per job\n");
    XXL_CHECK_INT (s_run (executor, 1, "lifeJobHandler", "", msg, sizeof msg, &log_id), 200);
    XXL_CHECK_STR (msg, "runs=1");
    XXL_CHECK_INT (s_run (executor, 1, "lifeJobHandler", "", msg, sizeof msg, NULL), 200);
    XXL_CHECK_STR (msg, "runs=2");
    XXL_CHECK_INT (s_run (executor, 2, "lifeJobHandler", "", msg, sizeof msg, NULL), 200);
    XXL_CHECK_STR (msg, "runs=1");
    XXL_CHECK_INT (s_count ("init 1"), 1);
    XXL_CHECK_INT (s_count ("run 1"), 2);
    XXL_CHECK_INT (s_count ("init 2"), 1);
    XXL_CHECK_MSG (s_index ("init 1") >= 0 && s_index ("init 1") < s_index ("run 1"),
                   "init before the first run");
    XXL_CHECK_INT (s_count ("destroy 1") + s_count ("destroy 2"), 0);
    XXL_CHECK_MSG (s_log_has (log_id, "init: job 1 ready"), "init writes in the first run's log");

    //  A failed init fails its run, without the handler; the next run
    //  tries again
    printf ("  init failure\n");
    XXL_CHECK_INT (s_run (executor, 3, "lifeJobHandler", "fail-init", msg, sizeof msg, NULL), 500);
    XXL_CHECK_STR (msg, "job init failed: refused on purpose");
    XXL_CHECK_INT (s_count ("run 3"), 0);
    XXL_CHECK_INT (s_run (executor, 3, "lifeJobHandler", "", msg, sizeof msg, NULL), 200);
    XXL_CHECK_STR (msg, "runs=1");
    XXL_CHECK_INT (s_count ("init 3"), 2);
    XXL_CHECK_INT (s_count ("init-fail 3"), 1);

    //  An init that overran the run's timeout without looking at
    //  cancelled(): the run times out, its handler is not called; the job
    //  is ready for its next run (init succeeded)
    printf ("  init past the timeout\n");
    trigger = (xxl_trigger_t) { 0 };
    trigger.job_id = 9;
    trigger.log_id = s_next_log_id++;
    trigger.log_date_time = (int64_t) time (NULL) * 1000;
    trigger.handler = "lifeJobHandler";
    trigger.params = "slow-init";
    trigger.glue_type = "BEAN";
    trigger.timeout_s = 1;
    XXL_CHECK_INT (s_result (executor, &trigger, msg, sizeof msg), 502);
    XXL_CHECK_INT (s_count ("init-slow 9"), 1);
    XXL_CHECK_MSG (s_count ("run 9") == 0, "no handler call after the run's timeout passed in init");
    XXL_CHECK_INT (s_run (executor, 9, "lifeJobHandler", "", msg, sizeof msg, NULL), 200);
    XXL_CHECK_STR (msg, "runs=1");
    XXL_CHECK_INT (s_count ("init 9"), 1);

    //  The old descriptor: loads, runs, nothing past its size is read
    printf ("  first descriptor\n");
    XXL_CHECK_INT (s_run (executor, 4, "oldLifeJobHandler", "", msg, sizeof msg, NULL), 200);
    XXL_CHECK_STR (msg, "job_state=none");
    XXL_CHECK_INT (s_run (executor, 4, "oldLifeJobHandler", "", msg, sizeof msg, NULL), 200);
    XXL_CHECK_MSG (!s_records_have ("trap"), "nothing past the descriptor's size was read");

    //  Another handler for job 1 replaces its (idle) queue: destroy, once
    printf ("  replaced queue\n");
    XXL_CHECK_INT (s_run (executor, 1, "lifePlainJobHandler", "", msg, sizeof msg, NULL), 200);
    XXL_CHECK_MSG (s_wait_record ("destroy 1", 10000), "destroy of a replaced queue");
    XXL_CHECK_STR (msg, "no job state");

    //  A kill: destroy after the killed run returned, never during it
    printf ("  killed\n");
    trigger = (xxl_trigger_t) { 0 };
    trigger.job_id = 5;
    int64_t wait_id = trigger.log_id = s_next_log_id++;
    trigger.log_date_time = (int64_t) time (NULL) * 1000;
    trigger.handler = "lifeJobHandler";
    trigger.params = "wait";
    trigger.glue_type = "BEAN";
    XXL_CHECK (xxl_executor_run (executor, &trigger, msg, sizeof msg) == 0);
    XXL_CHECK_MSG (s_wait_record ("run 5", 10000), "the waiting run started");
    XXL_CHECK (xxl_executor_kill (executor, 5, "killed by the test") == 0);
    XXL_CHECK_MSG (s_wait_record ("destroy 5", 10000), "destroy of a killed queue");
    XXL_CHECK_MSG (s_last ("end 5") >= 0 && s_last ("end 5") < s_index ("destroy 5"),
                   "destroy after the killed run returned");
    (void) wait_id;

    //  A handler with only a destroy
    XXL_CHECK_INT (s_run (executor, 6, "lifeDestroyOnlyJobHandler", "", msg, sizeof msg, NULL), 200);

    //  The plugin file replaced: at the job's next run, the old code's
    //  destroy, then the new code's init, then the run
    printf ("  plugin replaced\n");
    XXL_CHECK_INT (s_run (executor, 8, "lifeJobHandler", "", msg, sizeof msg, NULL), 200);
    XXL_CHECK (s_install ("lifecycle.so", "lifecycle.so") == 0);
    XXL_CHECK (xxl_handlers_rescan (handlers) >= 1);
    XXL_CHECK_INT (s_run (executor, 8, "lifeJobHandler", "", msg, sizeof msg, NULL), 200);
    XXL_CHECK_STR (msg, "runs=1");
    XXL_CHECK_INT (s_count ("init 8"), 2);
    XXL_CHECK_INT (s_count ("destroy 8"), 1);
    XXL_CHECK_MSG (s_index ("destroy 8") >= 0 && s_index ("destroy 8") < s_last ("init 8")
               &&  s_last ("init 8") < s_last ("run 8"),
                   "the old code's destroy, then the new code's init, then the run");

    //  Stop: every open lifecycle's destroy, once, before stop returns;
    //  none for the old descriptor's job
    printf ("  executor stop\n");
    xxl_executor_destroy (&executor);
    XXL_CHECK_INT (s_count ("destroy 1"), 1);
    XXL_CHECK_INT (s_count ("destroy 2"), 1);
    XXL_CHECK_INT (s_count ("destroy 3"), 1);
    XXL_CHECK_INT (s_count ("destroy 5"), 1);
    XXL_CHECK_INT (s_count ("destroy-only 6"), 1);
    XXL_CHECK_INT (s_count ("destroy 8"), 2);
    XXL_CHECK_INT (s_count ("destroy 9"), 1);
    XXL_CHECK_MSG (!s_records_have ("trap"), "the old descriptor's trap never ran");

    //  Reaped idle: destroy; the next run inits afresh
    printf ("  idle reaped\n");
    executor = s_executor (handlers, 1);
    XXL_CHECK_INT (s_run (executor, 7, "lifeJobHandler", "", msg, sizeof msg, NULL), 200);
    XXL_CHECK_MSG (s_wait_record ("destroy 7", 15000), "destroy of a queue reaped idle");
    XXL_CHECK_INT (s_run (executor, 7, "lifeJobHandler", "", msg, sizeof msg, NULL), 200);
    XXL_CHECK_STR (msg, "runs=1");
    XXL_CHECK_INT (s_count ("init 7"), 2);
    xxl_executor_destroy (&executor);
    XXL_CHECK_INT (s_count ("destroy 7"), 2);

    char *records = s_slurp (s_records);
    XXL_CHECK_LACKS (records, "bad ");
    free (records);

    xxl_handlers_destroy (&handlers);
    zsys_set_logstream (NULL);
    fclose (logfile);
    xxl_test_rmtree (s_dir);
    return xxl_test_done ();
}
