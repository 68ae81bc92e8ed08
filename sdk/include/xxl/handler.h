/*  xxl/handler.h -- the handler plugin ABI.

    A handler plugin is a shared object that an xxl-agent loads from its
    plugins folder with dlopen().  It exports exactly one symbol,
    XXL_HANDLER_ENTRY ("xxl_handler_plugin"), a function returning a
    pointer to a static xxl_handler_plugin_t.  That descriptor starts with
    the ABI version and its own size, so an agent can refuse a plugin built
    against another ABI with a clear message instead of crashing.  One
    plugin may carry several handlers; handler names are unique across all
    plugins an agent has loaded.

    The descriptor (xxl_handler_plugin_t) and the host function table
    (xxl_handler_host_t) reached through the run context are append-only:
    new members are only ever added at their end, and each one's size
    field tells the other side which members exist.  An agent reads a
    descriptor member only when the plugin's `size` covers it; a plugin
    built against an older, smaller descriptor loads and behaves as it
    did.  xxl_handler_t is an array element and never grows.

    A handler may have a per-job lifecycle, as XXL-JOB's
    @XxlJob(value, init, destroy): an init run before the first run of a
    job id on this agent and a destroy run when that job's queue is
    retired (xxl_handler_lifecycle_t below, docs/plugins.md).

    Minimal plugin:

        #include <xxl/handler.h>
        static int s_hello (xxl_run_t *run) {
            xxl_run_log (run, "param=%s", xxl_run_param (run));
            return xxl_run_success (run, "done");
        }
        static const xxl_handler_t s_handlers [] = {
            { "helloJobHandler", s_hello, 0 },
            { NULL, NULL, 0 }
        };
        XXL_HANDLER_PLUGIN ("hello", "1.0", NULL, NULL, s_handlers)
*/

#ifndef XXL_HANDLER_H_INCLUDED
#define XXL_HANDLER_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>
#include <time.h>                      //  clock_gettime, nanosleep (POSIX): xxl_run_sleep

#ifdef __cplusplus
extern "C" {
#endif

//  Bumped only on incompatible changes; appending members is compatible.
#define XXL_HANDLER_ABI_VERSION 1
#define XXL_HANDLER_ENTRY       "xxl_handler_plugin"

//  Result codes, as XXL-JOB's
#define XXL_CODE_SUCCESS    200
#define XXL_CODE_FAIL       500
#define XXL_CODE_TIMEOUT    502

typedef struct _xxl_run_t xxl_run_t;

//  Host services for a running handler.  Owned by the agent; valid only
//  during the handler call.  Append-only: check `size` before using a
//  member added after version 1.
typedef struct {
    uint32_t abi_version;               //  XXL_HANDLER_ABI_VERSION of the host
    uint32_t size;                      //  sizeof (xxl_handler_host_t) of the host
    //  Run parameters (strings are never NULL, "" when absent; valid
    //  for the duration of the call)
    const char *(*param) (xxl_run_t *run);
    int64_t (*job_id) (xxl_run_t *run);
    int64_t (*log_id) (xxl_run_t *run);
    int (*shard_index) (xxl_run_t *run);
    int (*shard_total) (xxl_run_t *run);
    //  Appends one time-stamped line to the run's log (printf format)
    void (*vlog) (xxl_run_t *run, const char *format, va_list args);
    //  Sets the run's result code and message (copied; message may be NULL)
    void (*set_result) (xxl_run_t *run, int code, const char *msg);
    //  1 once the run was killed or timed out: a handler should return soon
    int (*cancelled) (xxl_run_t *run);
    //  --- appended (check size: xxl_run_job_state does) ---
    //  The job state its lifecycle init stored (xxl_handler_lifecycle_t),
    //  NULL for a handler without one and on a host that runs no lifecycle
    void *(*job_state) (xxl_run_t *run);
    //  --- appended (check size: xxl_run_log_file does) ---
    //  The absolute path of the run's own log file (XXL-JOB's
    //  XxlJobHelper.getJobLogFileName), valid until the run ends; NULL if
    //  the file cannot be made.  See xxl_run_log_file.
    const char *(*log_file) (xxl_run_t *run);
    //  --- appended (check size: xxl_run_sleep does) ---
    //  Waits ms milliseconds, or less once the run is cancelled (killed or
    //  timed out); 1 when it is cancelled, else 0.  See xxl_run_sleep.
    int (*sleep) (xxl_run_t *run, int64_t ms);
} xxl_handler_host_t;

//  What a handler gets: the host table and an opaque run.
struct _xxl_run_t {
    const xxl_handler_host_t *host;
    void *plugin_state;                 //  what the plugin's init returned
};

//  A handler runs one trigger.  It returns 0 when it set (or accepts) its
//  result, -1 for failure with no message.  When it never calls
//  set_result, a return of 0 means success and -1 means failure.
typedef int (xxl_handler_fn) (xxl_run_t *run);

//  Handler flags
#define XXL_HANDLER_IN_PROCESS  1       //  Opt in to running in the agent process
                                        //  (fast; a crash takes the agent down)

typedef struct {
    const char *name;                   //  handler name, e.g. "demoJobHandler"
    xxl_handler_fn *fn;
    uint32_t flags;                     //  XXL_HANDLER_* flags
} xxl_handler_t;

//  A handler's per-job lifecycle, as XXL-JOB's @XxlJob(init, destroy),
//  which run in the job's JobThread as it starts and as it ends.  On an
//  agent each job id has a queue of its own (its runs one at a time, in
//  order); the lifecycle belongs to that queue:
//
//  - `init` (optional) runs once before the first run of a job id on this
//    agent, on the pool thread about to run it, inside that run (its log,
//    its timeout, its kill): run gives the job id (xxl_run_job_id), the
//    plugin state (xxl_run_state), the run's log (xxl_run_log) and
//    cancelled().  It may block.  It returns 0 when the job is ready,
//    storing in *job_state what the job's runs get from
//    xxl_run_job_state (NULL is fine); else -1, after xxl_run_fail (run,
//    why) if it has something to say.  A failed init fails the run that
//    caused it, code 500, handleMsg "job init failed: <why>", without
//    calling the handler, and the job's next run tries init again;
//    destroy is not called for a failed init.  A result a successful init
//    set is discarded.  An init that returns after the run was killed or
//    its timeout passed leaves the job ready, but the handler is not
//    called for that run (it ends killed, or timed out: 502).
//  - `destroy` (optional) runs once for each job whose init succeeded (or,
//    without init, whose first run started) when that job's queue is
//    retired: idle agent/idle_reap_s with nothing queued, replaced (the
//    handler or glue version changed, COVER_EARLY, a kill), the plugin
//    file replaced (before the new code's init, at the job's next run),
//    or the agent stopping (SIGTERM drain).  It runs on a pool thread
//    after the job's last run returned, never at the same time as a run of
//    that queue, never twice, with job_state as init left it, and may
//    block (the agent's stop waits 10 s at most for the pool).  An agent
//    killed (SIGKILL, a crash) runs no destroy.
//
//  Both run only in the agent's process: the handler MUST be flagged
//  XXL_HANDLER_IN_PROCESS (an isolated run's runner lives for one run),
//  else the agent refuses the plugin at load.  `handler` names a handler
//  of this plugin's own table; a name listed twice, or not in the table,
//  refuses the plugin too.  A replaced queue's destroy may overlap the new
//  queue's init and runs of the same job id (as XXL-JOB's old JobThread
//  ending while the new one starts); each has its own job_state.
typedef struct {
    const char *handler;                //  handler name; NULL ends the array
    int (*init) (xxl_run_t *run, void **job_state);
    void (*destroy) (int64_t job_id, void *plugin_state, void *job_state);
} xxl_handler_lifecycle_t;

//  The descriptor a plugin's entry point returns.  `handlers` ends with an
//  entry whose name is NULL.  `init` (optional) runs once at load and
//  returns the plugin state, or NULL with *error set to a static string on
//  failure, which refuses the plugin.  `destroy` (optional) runs at unload.
//  Members after `handlers` were appended: an agent reads one only when
//  `size` covers it, so a plugin built against an older header (size
//  XXL_HANDLER_PLUGIN_SIZE_V1) loads and runs as before.
typedef struct {
    uint32_t abi_version;               //  XXL_HANDLER_ABI_VERSION
    uint32_t size;                      //  sizeof (xxl_handler_plugin_t)
    const char *name;                   //  plugin name, for log lines
    const char *version;                //  plugin's own version string
    void *(*init) (const char **error);
    void (*destroy) (void *state);
    const xxl_handler_t *handlers;
    //  --- appended ---
    //  Per-job lifecycles (optional, NULL: none), ended by an entry whose
    //  handler is NULL
    const xxl_handler_lifecycle_t *lifecycle;
} xxl_handler_plugin_t;

//  The size of the first descriptor (up to `handlers`): the least an
//  agent accepts
#define XXL_HANDLER_PLUGIN_SIZE_V1  offsetof (xxl_handler_plugin_t, lifecycle)

typedef const xxl_handler_plugin_t *(xxl_handler_entry_fn) (void);

//  Convenience wrappers for handler code
static inline const char *xxl_run_param (xxl_run_t *run) { return run->host->param (run); }
static inline int64_t xxl_run_job_id (xxl_run_t *run) { return run->host->job_id (run); }
static inline int64_t xxl_run_log_id (xxl_run_t *run) { return run->host->log_id (run); }
static inline int xxl_run_shard_index (xxl_run_t *run) { return run->host->shard_index (run); }
static inline int xxl_run_shard_total (xxl_run_t *run) { return run->host->shard_total (run); }
static inline int xxl_run_cancelled (xxl_run_t *run) { return run->host->cancelled (run); }
static inline void *xxl_run_state (xxl_run_t *run) { return run->plugin_state; }
//  The job state the handler's lifecycle init stored; NULL without one,
//  or on an older agent (whose host table has no job_state, and which
//  ignores lifecycles: a handler that needs its init treats NULL as "not
//  initialised" and fails)
static inline void *xxl_run_job_state (xxl_run_t *run)
{
    if (run->host->size < offsetof (xxl_handler_host_t, job_state) + sizeof (void *)
    ||  !run->host->job_state)
        return NULL;
    return run->host->job_state (run);
}
//  The absolute path of the run's own log file, {logdir}/yyyy-mm-dd/
//  {logId}.log (XXL-JOB's XxlJobHelper.getJobLogFileName), valid until
//  the run ends.  Call it from the thread that runs the handler, as
//  xxl_run_log.  An in-process run's log is held in memory and goes to
//  the day's pack when it ends; this call moves it to a file of its own
//  at once, as a LOG request during the run does: the file is made with
//  the lines logged so far, and the run's later lines (xxl_run_log, the
//  end lines after the handler returns) are appended to it, so it holds
//  the run's whole log in order.  An isolated or GLUE run has its file
//  from its start: the same path.  Whole lines (each ending in "\n")
//  that the handler, or a child process it starts, appends to the file
//  opened with O_APPEND show in the run's log (LOG pages, xxl-ctl log,
//  the console) between the agent's own lines; the agent stamps none of
//  them.  NULL when the file cannot be made (e.g. the disk is full: the
//  agent logs the reason once, the run goes on and its log stays where
//  it was), and on an older agent whose host table has no log_file.
static inline const char *xxl_run_log_file (xxl_run_t *run)
{
    if (run->host->size < offsetof (xxl_handler_host_t, log_file) + sizeof (void *)
    ||  !run->host->log_file)
        return NULL;
    return run->host->log_file (run);
}
//  Waits ms milliseconds (XXL-JOB's Thread.sleep in a handler), and
//  returns early once the run is cancelled: a kill or the job's timeout
//  ends the wait at once, as Thread.interrupt() ends a Java handler's
//  sleep.  Returns 1 when the run is cancelled (at the call or during the
//  wait: the handler should then return soon), 0 when the time passed.
//  The wait uses no CPU and no file descriptor, so that thousands of runs
//  may wait at once; it is measured on the monotonic clock (a step of the
//  wall clock neither shortens nor stretches it).  ms <= 0 only reports
//  cancelled().  Any thread of the handler may call it while the handler
//  runs (not after it returned).  ms is capped at XXL_RUN_SLEEP_MAX_MS
//  (2^40, ~35 years).  On an
//  older agent whose host table has no sleep, the wait is made here, in
//  slices of 50 ms between calls to cancelled() (POSIX clocks: a plugin
//  built with strict -std=c99 and no _POSIX_C_SOURCE gets no wait there).
#define XXL_RUN_SLEEP_MAX_MS ((int64_t) 1 << 40)
static inline int xxl_run_sleep (xxl_run_t *run, int64_t ms)
{
    if (run->host->size >= offsetof (xxl_handler_host_t, sleep) + sizeof (void *)
    &&  run->host->sleep)
        return run->host->sleep (run, ms);
#if defined (CLOCK_MONOTONIC)
    if (ms > XXL_RUN_SLEEP_MAX_MS)      //  (no overflow below)
        ms = XXL_RUN_SLEEP_MAX_MS;
    struct timespec until;
    clock_gettime (CLOCK_MONOTONIC, &until);
    until.tv_sec += (time_t) (ms / 1000);
    until.tv_nsec += (long) (ms % 1000) * 1000000;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    while (!run->host->cancelled (run)) {
        struct timespec now;
        clock_gettime (CLOCK_MONOTONIC, &now);
        int64_t left = (int64_t) (until.tv_sec - now.tv_sec) * 1000000000
                     + (until.tv_nsec - now.tv_nsec);
        if (ms <= 0 || left <= 0)
            return 0;
        if (left > 50000000)
            left = 50000000;
        struct timespec slice = { 0, (long) left };
        nanosleep (&slice, NULL);
    }
    return 1;
#else
    (void) ms;                          //  (no POSIX clocks: no wait)
    return run->host->cancelled (run) != 0;
#endif
}
#if defined (__GNUC__)
__attribute__ ((format (printf, 2, 3)))
#endif
static inline void xxl_run_log (xxl_run_t *run, const char *format, ...)
{
    va_list args;
    va_start (args, format);
    run->host->vlog (run, format, args);
    va_end (args);
}
static inline int xxl_run_success (xxl_run_t *run, const char *msg)
{
    run->host->set_result (run, XXL_CODE_SUCCESS, msg);
    return 0;
}
static inline int xxl_run_fail (xxl_run_t *run, const char *msg)
{
    run->host->set_result (run, XXL_CODE_FAIL, msg);
    return 0;
}

//  Declares the plugin's entry point, with per-job lifecycles
//  (plifecycle: an xxl_handler_lifecycle_t array, or NULL)
#define XXL_HANDLER_PLUGIN2(pname, pversion, pinit, pdestroy, phandlers, plifecycle) \
    __attribute__ ((visibility ("default")))                            \
    const xxl_handler_plugin_t *xxl_handler_plugin (void) {             \
        static const xxl_handler_plugin_t s_plugin = {                  \
            XXL_HANDLER_ABI_VERSION, sizeof (xxl_handler_plugin_t),     \
            (pname), (pversion), (pinit), (pdestroy), (phandlers),      \
            (plifecycle)                                                \
        };                                                              \
        return &s_plugin;                                               \
    }

//  Declares the plugin's entry point, without lifecycles
#define XXL_HANDLER_PLUGIN(pname, pversion, pinit, pdestroy, phandlers)  \
    XXL_HANDLER_PLUGIN2 (pname, pversion, pinit, pdestroy, phandlers, NULL)

#ifdef __cplusplus
}
#endif

#endif
