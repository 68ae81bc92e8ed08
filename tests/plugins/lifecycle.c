/*  lifecycle.c -- a test plugin with per-job lifecycles (xxl/handler.h),
    as XXL-JOB's @XxlJob(init, destroy).  Every call is appended as a line
    to the file named by XXL_TEST_LIFE_LOG (read at plugin load):

        init J          lifeJobHandler's init for job J (every attempt)
        init-fail J     ... which refused (param "fail-init")
        init-slow J     ... which took 1.5 s, not looking at cancelled()
                        (param "slow-init"), then succeeded
        run J           lifeJobHandler's run started
        end J           lifeJobHandler's run returns
        destroy J       lifeJobHandler's destroy, with the state init made
        destroy-only J  lifeDestroyOnlyJobHandler's destroy (it has no init)
        bad J what      a broken contract: a destroy during a run of its
                        state, a wrong job id or plugin state

    lifeJobHandler (in process) answers "runs=N": the runs of its job
    state so far; param "wait" runs until cancelled().  lifeIsolated...
    and lifeUnknown... are the plugin variants the agent must refuse:
    built with -DLIFE_ISOLATED (a lifecycle on a handler without
    XXL_HANDLER_IN_PROCESS) or -DLIFE_UNKNOWN (a lifecycle naming a
    handler the plugin does not have).
*/

#define _GNU_SOURCE
#include <xxl/handler.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char s_marker [] = "lifecycle plugin state";

typedef struct {
    int64_t job_id;
    int runs;
    int running;                        //  a run of this state is in its handler
} job_t;

static void
s_record (const char *format, ...)
{
    const char *path = getenv ("XXL_TEST_LIFE_LOG");
    if (!path)
        return;
    char line [256];
    va_list args;
    va_start (args, format);
    int size = vsnprintf (line, sizeof line - 1, format, args);
    va_end (args);
    if (size < 0 || size > (int) sizeof line - 2)
        return;
    line [size++] = '\n';
    int fd = open (path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0) {
        ssize_t written = write (fd, line, (size_t) size);
        (void) written;                 //  a short write: the test sees the line missing
        close (fd);
    }
}

static void *
s_plugin_init (const char **error)
{
    (void) error;
    return s_marker;
}

static int
s_init (xxl_run_t *run, void **job_state)
{
    int64_t job_id = xxl_run_job_id (run);
    s_record ("init %lld", (long long) job_id);
    if (xxl_run_state (run) != s_marker)
        s_record ("bad %lld init without the plugin state", (long long) job_id);
    if (strcmp (xxl_run_param (run), "fail-init") == 0) {
        s_record ("init-fail %lld", (long long) job_id);
        xxl_run_fail (run, "refused on purpose");
        return -1;
    }
    if (strcmp (xxl_run_param (run), "slow-init") == 0) {
        //  (a slow connection, say: the run's timeout passes meanwhile)
        struct timespec pause = { 1, 500 * 1000 * 1000 };
        nanosleep (&pause, NULL);
        s_record ("init-slow %lld", (long long) job_id);
    }
    job_t *job = (job_t *) calloc (1, sizeof (job_t));
    if (!job) {
        xxl_run_fail (run, "out of memory");
        return -1;
    }
    job->job_id = job_id;
    xxl_run_log (run, "init: job %lld ready", (long long) job_id);
    //  A successful init's result is not the run's
    xxl_run_fail (run, "init's own result");
    *job_state = job;
    return 0;
}

static void
s_destroy (int64_t job_id, void *plugin_state, void *job_state)
{
    job_t *job = (job_t *) job_state;
    if (plugin_state != s_marker)
        s_record ("bad %lld destroy without the plugin state", (long long) job_id);
    if (!job || job->job_id != job_id)
        s_record ("bad %lld destroy with another job's state", (long long) job_id);
    if (job && __atomic_load_n (&job->running, __ATOMIC_ACQUIRE))
        s_record ("bad %lld destroy during a run", (long long) job_id);
    s_record ("destroy %lld", (long long) job_id);
    free (job);
}

static int
s_life (xxl_run_t *run)
{
    int64_t job_id = xxl_run_job_id (run);
    job_t *job = (job_t *) xxl_run_job_state (run);
    if (!job || job->job_id != job_id)
        return xxl_run_fail (run, "no job state");
    __atomic_store_n (&job->running, 1, __ATOMIC_RELEASE);
    s_record ("run %lld", (long long) job_id);
    if (strcmp (xxl_run_param (run), "wait") == 0)
        while (!xxl_run_cancelled (run)) {
            struct timespec pause = { 0, 2 * 1000 * 1000 };
            nanosleep (&pause, NULL);
        }
    job->runs++;
    char msg [32];
    snprintf (msg, sizeof msg, "runs=%d", job->runs);
    s_record ("end %lld", (long long) job_id);
    __atomic_store_n (&job->running, 0, __ATOMIC_RELEASE);
    return xxl_run_success (run, msg);
}

static void __attribute__ ((unused))
s_destroy_only (int64_t job_id, void *plugin_state, void *job_state)
{
    if (plugin_state != s_marker || job_state)
        s_record ("bad %lld destroy-only with a state", (long long) job_id);
    s_record ("destroy-only %lld", (long long) job_id);
}

static int __attribute__ ((unused))
s_plain (xxl_run_t *run)
{
    return xxl_run_success (run, xxl_run_job_state (run)? "job state": "no job state");
}

#if defined (LIFE_ISOLATED)
static const xxl_handler_t s_handlers [] = {
    { "lifeIsolatedJobHandler", s_life, 0 },
    { NULL, NULL, 0 }
};
static const xxl_handler_lifecycle_t s_lifecycle [] = {
    { "lifeIsolatedJobHandler", s_init, s_destroy },
    { NULL, NULL, NULL }
};
XXL_HANDLER_PLUGIN2 ("life_isolated", "1.0", s_plugin_init, NULL, s_handlers, s_lifecycle)
#elif defined (LIFE_UNKNOWN)
static const xxl_handler_t s_handlers [] = {
    { "lifeKnownJobHandler", s_life, XXL_HANDLER_IN_PROCESS },
    { NULL, NULL, 0 }
};
static const xxl_handler_lifecycle_t s_lifecycle [] = {
    { "lifeKnownJobHandler", s_init, s_destroy },
    { "lifeNoSuchJobHandler", s_init, s_destroy },
    { NULL, NULL, NULL }
};
XXL_HANDLER_PLUGIN2 ("life_unknown", "1.0", s_plugin_init, NULL, s_handlers, s_lifecycle)
#else
static const xxl_handler_t s_handlers [] = {
    { "lifeJobHandler", s_life, XXL_HANDLER_IN_PROCESS },
    { "lifeDestroyOnlyJobHandler", s_plain, XXL_HANDLER_IN_PROCESS },
    { "lifePlainJobHandler", s_plain, XXL_HANDLER_IN_PROCESS },
    { NULL, NULL, 0 }
};
static const xxl_handler_lifecycle_t s_lifecycle [] = {
    { "lifeJobHandler", s_init, s_destroy },
    { "lifeDestroyOnlyJobHandler", NULL, s_destroy_only },
    { NULL, NULL, NULL }
};
XXL_HANDLER_PLUGIN2 ("lifecycle", "1.0", s_plugin_init, NULL, s_handlers, s_lifecycle)
#endif
