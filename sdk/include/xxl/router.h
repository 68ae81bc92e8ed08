/*  xxl/router.h -- the router plugin ABI.

    A router picks, for one trigger of a job, the agent address that runs
    it, out of the sorted list of addresses registered for the job's group.
    Every routing strategy -- the shipped FIRST, LAST, ROUND, RANDOM,
    CONSISTENT_HASH, LEAST_FREQUENTLY_USED, LEAST_RECENTLY_USED, FAILOVER,
    BUSYOVER, SHARDING_BROADCAST and a user's own -- is a router plugin.

    A router plugin is a shared object that xxl-scheduler loads from its
    routers folder with dlopen().  It exports exactly one symbol,
    XXL_ROUTER_ENTRY ("xxl_router_plugin"), a function returning a pointer
    to a static xxl_router_plugin_t.  That descriptor starts with the ABI
    version and its own size, so the scheduler refuses a plugin built
    against another ABI with a clear log line instead of crashing.  One
    plugin may carry several routers; router names are unique across all
    loaded plugins (the first one loaded keeps a name).

    The host function table (xxl_router_host_t) is append-only: new members
    are only ever added at its end and its size field tells a plugin which
    members exist.  The same holds for xxl_route_call_t.

    State: the plugin's init returns its state (for example a mutex and a
    map from job id to per-job data); the scheduler passes it to every
    route call and to destroy.  Routes run concurrently on several
    scheduler threads, so a plugin guards its state itself.

    Minimal plugin:

        #include <xxl/router.h>
        static int s_second (void *state, const xxl_router_host_t *host,
                             xxl_route_call_t *call) {
            return call->count > 1? 1: 0;
        }
        static const xxl_router_t s_routers [] = {
            { "SECOND", s_second, 0 },
            { NULL, NULL, 0 }
        };
        XXL_ROUTER_PLUGIN ("second", "1.0", NULL, NULL, s_routers)
*/

#ifndef XXL_ROUTER_H_INCLUDED
#define XXL_ROUTER_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

//  Bumped only on incompatible changes; appending members is compatible.
#define XXL_ROUTER_ABI_VERSION  1
#define XXL_ROUTER_ENTRY        "xxl_router_plugin"

//  Probe kinds: what host->probe sends to an agent
#define XXL_PROBE_BEAT          1   //  is the agent alive?
#define XXL_PROBE_IDLE_BEAT     2   //  is the agent idle for this job?

//  Probe answers (besides the agent's own code)
#define XXL_PROBE_OK            200 //  alive / idle
#define XXL_PROBE_FAIL          500 //  failed / busy
#define XXL_PROBE_NO_ANSWER     (-1)//  no reply within the timeout

//  Log levels for host->vlog (syslog numbering)
#define XXL_ROUTER_LOG_ERROR    3
#define XXL_ROUTER_LOG_WARNING  4
#define XXL_ROUTER_LOG_INFO     6
#define XXL_ROUTER_LOG_DEBUG    7

//  A route's per-job state is reset every XXL_ROUTER_CACHE_MS, as XXL-JOB
//  does (ROUND, LFU, LRU).
#define XXL_ROUTER_CACHE_MS     (24LL * 3600 * 1000)

//  Host services.  Owned by the scheduler and valid from init to destroy.
//  All members are thread-safe.  Append-only: check `size` (with
//  XXL_ROUTER_HOST_HAS) before using a member added after version 1.
typedef struct {
    uint32_t abi_version;               //  XXL_ROUTER_ABI_VERSION of the host
    uint32_t size;                      //  sizeof (xxl_router_host_t) of the host
    //  Wall clock in epoch milliseconds (tests inject their own)
    int64_t (*now_ms) (void);
    //  A uniform random number in [0, bound); 0 when bound is 0
    uint32_t (*random) (uint32_t bound);
    //  Logs one line (printf format, no trailing newline) at a level
    void (*vlog) (int level, const char *format, va_list args);
    //  Sends BEAT or IDLE_BEAT (kind) for job_id to the agent at address
    //  and waits up to timeout_ms for its reply.  Returns the agent's code
    //  (200 alive/idle, 500 failed/busy) or -1 when no answer came.  Writes
    //  the agent's message or the reason for -1 into msg (NUL-terminated,
    //  truncated to msglen; msg may be NULL when msglen is 0).  host_ctx is
    //  the call's host_ctx, passed through unchanged.
    int (*probe) (void *host_ctx, const char *address, int kind,
                  int64_t job_id, int timeout_ms, char *msg, size_t msglen);
} xxl_router_host_t;

//  1 when the host table h has member m
#define XXL_ROUTER_HOST_HAS(h, m) \
    ((h) != NULL && (h)->size >= offsetof (xxl_router_host_t, m) + sizeof ((h)->m) \
     && (h)->m != NULL)

//  One route call: what the scheduler asks.  Owned by the scheduler and
//  valid only during the call.  Append-only, like the host table.
typedef struct {
    uint32_t size;                      //  sizeof (xxl_route_call_t) of the host
    int64_t job_id;
    int64_t log_id;                     //  the trigger's log row
    const char *const *addresses;       //  registered addresses, sorted, count > 0
    size_t count;
    int probe_timeout_ms;               //  timeout to pass to host->probe (> 0)
    void *host_ctx;                     //  opaque; pass to host->probe
    char *msg;                          //  message buffer, NUL-terminated, never NULL;
    size_t msglen;                      //  its size (> 0).  Text appended here goes
                                        //  into the log row's triggerMsg.
} xxl_route_call_t;

//  A route picks one address: it returns its index in call->addresses, or
//  -1 when it can pick none, with the reason appended to call->msg.  It
//  may append other text (probe results) to call->msg on success too.
//  state is what the plugin's init returned (NULL without init).
typedef int (xxl_router_fn) (void *state, const xxl_router_host_t *host,
                             xxl_route_call_t *call);

//  Router flags
#define XXL_ROUTER_BROADCAST    1       //  Not routed: the scheduler sends the
                                        //  trigger to every address, shard i/n
                                        //  to address i (fn may be NULL)
#define XXL_ROUTER_PROBES       2       //  fn calls host->probe and may block up
                                        //  to its timeout per address: the
                                        //  scheduler runs it on a trigger pool
                                        //  thread, never on its event loop.  A
                                        //  router without this flag must not
                                        //  block; it runs inline.

typedef struct {
    const char *name;                   //  route name, e.g. "ROUND": letters,
                                        //  digits, '_', '-', '.', at most 64
    xxl_router_fn *fn;
    uint32_t flags;                     //  XXL_ROUTER_* flags
} xxl_router_t;

//  The descriptor a plugin's entry point returns.  `routers` ends with an
//  entry whose name is NULL.  `init` (optional) runs once at load with the
//  host table and returns the plugin state, or NULL with *error set to a
//  static string on failure, which refuses the plugin.  `destroy`
//  (optional) runs at unload with that state.
typedef struct {
    uint32_t abi_version;               //  XXL_ROUTER_ABI_VERSION
    uint32_t size;                      //  sizeof (xxl_router_plugin_t)
    const char *name;                   //  plugin name, for log lines
    const char *version;                //  plugin's own version string
    void *(*init) (const xxl_router_host_t *host, const char **error);
    void (*destroy) (void *state);
    const xxl_router_t *routers;
} xxl_router_plugin_t;

typedef const xxl_router_plugin_t *(xxl_router_entry_fn) (void);

//  Convenience helpers for router code

//  Logs one line through the host (no-op when the host has no vlog)
#if defined (__GNUC__)
__attribute__ ((format (printf, 3, 4)))
#endif
static inline void xxl_router_log (const xxl_router_host_t *host, int level,
                                   const char *format, ...)
{
    if (!XXL_ROUTER_HOST_HAS (host, vlog))
        return;
    va_list args;
    va_start (args, format);
    host->vlog (level, format, args);
    va_end (args);
}

//  Appends formatted text to the call's message, truncating when full.
//  A new line goes before the text when the message is not empty.
#if defined (__GNUC__)
__attribute__ ((format (printf, 2, 3)))
#endif
static inline void xxl_route_msg (xxl_route_call_t *call, const char *format, ...)
{
    if (!call->msg || call->msglen == 0)
        return;
    size_t used = 0;
    while (used + 1 < call->msglen && call->msg [used])
        used++;
    if (used > 0 && used + 1 < call->msglen) {
        call->msg [used++] = '\n';
        call->msg [used] = 0;
    }
    if (used + 1 >= call->msglen)
        return;
    va_list args;
    va_start (args, format);
    vsnprintf (call->msg + used, call->msglen - used, format, args);
    va_end (args);
}

//  Declares the plugin's entry point.
#define XXL_ROUTER_PLUGIN(pname, pversion, pinit, pdestroy, prouters)    \
    const xxl_router_plugin_t *xxl_router_plugin (void);                \
    __attribute__ ((visibility ("default")))                            \
    const xxl_router_plugin_t *xxl_router_plugin (void) {               \
        static const xxl_router_plugin_t s_plugin = {                   \
            XXL_ROUTER_ABI_VERSION, sizeof (xxl_router_plugin_t),       \
            (pname), (pversion), (pinit), (pdestroy), (prouters)        \
        };                                                              \
        return &s_plugin;                                               \
    }

#ifdef __cplusplus
}
#endif

#endif
