/*  xxl/handler.h -- the handler plugin ABI.

    A handler plugin is a shared object that an xxl-agent loads from its
    plugins folder with dlopen().  It exports exactly one symbol,
    XXL_HANDLER_ENTRY ("xxl_handler_plugin"), a function returning a
    pointer to a static xxl_handler_plugin_t.  That descriptor starts with
    the ABI version and its own size, so an agent can refuse a plugin built
    against another ABI with a clear message instead of crashing.  One
    plugin may carry several handlers; handler names are unique across all
    plugins an agent has loaded.

    The host function table (xxl_handler_host_t) reached through the run
    context is append-only: new members are only ever added at its end and
    its size field tells a plugin which members exist.

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

//  The descriptor a plugin's entry point returns.  `handlers` ends with an
//  entry whose name is NULL.  `init` (optional) runs once at load and
//  returns the plugin state, or NULL with *error set to a static string on
//  failure, which refuses the plugin.  `destroy` (optional) runs at unload.
typedef struct {
    uint32_t abi_version;               //  XXL_HANDLER_ABI_VERSION
    uint32_t size;                      //  sizeof (xxl_handler_plugin_t)
    const char *name;                   //  plugin name, for log lines
    const char *version;                //  plugin's own version string
    void *(*init) (const char **error);
    void (*destroy) (void *state);
    const xxl_handler_t *handlers;
} xxl_handler_plugin_t;

typedef const xxl_handler_plugin_t *(xxl_handler_entry_fn) (void);

//  Convenience wrappers for handler code
static inline const char *xxl_run_param (xxl_run_t *run) { return run->host->param (run); }
static inline int64_t xxl_run_job_id (xxl_run_t *run) { return run->host->job_id (run); }
static inline int64_t xxl_run_log_id (xxl_run_t *run) { return run->host->log_id (run); }
static inline int xxl_run_shard_index (xxl_run_t *run) { return run->host->shard_index (run); }
static inline int xxl_run_shard_total (xxl_run_t *run) { return run->host->shard_total (run); }
static inline int xxl_run_cancelled (xxl_run_t *run) { return run->host->cancelled (run); }
static inline void *xxl_run_state (xxl_run_t *run) { return run->plugin_state; }
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

//  Declares the plugin's entry point.
#define XXL_HANDLER_PLUGIN(pname, pversion, pinit, pdestroy, phandlers)  \
    __attribute__ ((visibility ("default")))                            \
    const xxl_handler_plugin_t *xxl_handler_plugin (void) {             \
        static const xxl_handler_plugin_t s_plugin = {                  \
            XXL_HANDLER_ABI_VERSION, sizeof (xxl_handler_plugin_t),     \
            (pname), (pversion), (pinit), (pdestroy), (phandlers)       \
        };                                                              \
        return &s_plugin;                                               \
    }

#ifdef __cplusplus
}
#endif

#endif
