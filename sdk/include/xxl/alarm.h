/*  xxl/alarm.h -- the alarm plugin ABI.

    An alarm tells people (or programs) that a job run failed for good:
    after its final retry, the scheduler sends one alarm to each of the
    job's alarm targets (XXL-JOB's alarmEmail, generalised).  A target is
    "kind:destination" -- "webhook:https://chat.example/hook",
    "script:notify.sh", "email:ops@example.com" -- or, as in XXL-JOB, a
    plain email address, which means the "email" kind.  Every kind -- the
    shipped email, webhook and script and a user's own -- is an alarm
    plugin.

    An alarm plugin is a shared object that xxl-scheduler loads from its
    alarms folder with dlopen().  It exports exactly one symbol,
    XXL_ALARM_ENTRY ("xxl_alarm_plugin"), a function returning a pointer to
    a static xxl_alarm_plugin_t.  That descriptor starts with the ABI
    version and its own size, so the scheduler refuses a plugin built
    against another ABI with a clear log line instead of crashing.  One
    plugin may carry several kinds; kind names are unique across all loaded
    plugins (the first one loaded keeps a name).

    The host function table (xxl_alarm_host_t) is append-only: new members
    are only ever added at its end and its size field tells a plugin which
    members exist.  The same holds for xxl_alarm_t.

    Threads: the scheduler calls send from its alarm thread, never from
    its event loop, so send may block (SMTP, HTTP, a child process) --
    within a bound the plugin enforces (a timeout).  check may be called
    from any thread at the same time as send.  The plugin guards its state.

    Minimal plugin (a kind "log" that logs the alarm):

        #include <xxl/alarm.h>
        static int s_send (void *state, const xxl_alarm_host_t *host,
                           const xxl_alarm_t *alarm, const char *target,
                           char *err, size_t errlen) {
            xxl_alarm_log (host, XXL_ALARM_LOG_WARNING, "%s: %s", target, alarm->json);
            return 0;
        }
        static const xxl_alarm_kind_t s_kinds [] = {
            { "log", s_send, NULL, 0 },
            { NULL, NULL, NULL, 0 }
        };
        XXL_ALARM_PLUGIN ("log", "1.0", NULL, NULL, s_kinds)
*/

#ifndef XXL_ALARM_H_INCLUDED
#define XXL_ALARM_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

//  Bumped only on incompatible changes; appending members is compatible.
#define XXL_ALARM_ABI_VERSION   1
#define XXL_ALARM_ENTRY         "xxl_alarm_plugin"

//  Log levels for host->vlog (syslog numbering)
#define XXL_ALARM_LOG_ERROR     3
#define XXL_ALARM_LOG_WARNING   4
#define XXL_ALARM_LOG_INFO      6
#define XXL_ALARM_LOG_DEBUG     7

//  Host services.  Owned by the scheduler and valid from init to destroy.
//  All members are thread-safe.  Append-only: check `size` (with
//  XXL_ALARM_HOST_HAS) before using a member added after version 1.
typedef struct {
    uint32_t abi_version;               //  XXL_ALARM_ABI_VERSION of the host
    uint32_t size;                      //  sizeof (xxl_alarm_host_t) of the host
    //  Wall clock in epoch milliseconds (tests inject their own)
    int64_t (*now_ms) (void);
    //  Logs one line (printf format, no trailing newline) at a level
    void (*vlog) (int level, const char *format, va_list args);
    //  The scheduler's config value under "scheduler/alarm/<key>" (for
    //  example key "smtp_url" reads scheduler/alarm/smtp_url), or NULL when
    //  not set.  The string stays valid until the host is destroyed; the
    //  values do not change while plugins are loaded.  May be NULL (no
    //  config at all).  Pass config_ctx as ctx.
    const char *(*config) (void *ctx, const char *key);
    void *config_ctx;
} xxl_alarm_host_t;

//  1 when the host table h has member m
#define XXL_ALARM_HOST_HAS(h, m) \
    ((h) != NULL && (h)->size >= offsetof (xxl_alarm_host_t, m) + sizeof ((h)->m) \
     && (h)->m != NULL)

//  One alarm: a run that failed for good.  Owned by the scheduler and
//  valid only during the call.  Strings are never NULL (empty when
//  unknown), UTF-8 as stored.  Append-only, like the host table.
typedef struct {
    uint32_t size;                      //  sizeof (xxl_alarm_t) of the host
    int64_t job_id;
    const char *job_desc;               //  the job's description
    const char *app;                    //  its group's app name (appname)
    int64_t log_id;                     //  the failed run's log row
    int64_t trigger_time;               //  epoch ms
    int trigger_code;                   //  200 ok, 500 failed, 0 unknown
    const char *trigger_msg;
    int handle_code;                    //  200, 500, 502 timeout, 0 unfinished
    const char *handle_msg;
    const char *executor_address;       //  the agent that ran it ("" if none)
    int retry_count;                    //  attempts made (executorFailRetryCount)
    //  The whole alarm as one JSON object with XXL-JOB's camelCase keys:
    //  {"title":"xxl job alarm","jobId":..,"jobDesc":..,"appname":..,
    //   "logId":..,"triggerTime":..,"triggerCode":..,"triggerMsg":..,
    //   "handleCode":..,"handleMsg":..,"executorAddress":..,
    //   "executorFailRetryCount":..}  -- valid UTF-8, one line.
    const char *json;
} xxl_alarm_t;

//  Delivers one alarm to one target.  target is the destination: the part
//  after "kind:" ("http://host/hook" for "webhook:http://host/hook"), or
//  the whole address for a plain email address.  Returns 0 when
//  delivered, -1 when not, with the reason in err (NUL-terminated,
//  truncated to errlen, which is > 0; one line, no "failed:" prefix).
//  state is what the plugin's init returned (NULL without init).  May
//  block, within the plugin's own timeout.
typedef int (xxl_alarm_send_fn) (void *state, const xxl_alarm_host_t *host,
                                 const xxl_alarm_t *alarm, const char *target,
                                 char *err, size_t errlen);

//  Optional: validates a target's destination when a job is saved
//  (job add|update), and again before each send (the config may have
//  changed since), without sending anything and without blocking.
//  Returns 0 when valid, -1 with the reason in err; refused at send, the
//  target fails with that reason and send is not called.
typedef int (xxl_alarm_check_fn) (void *state, const xxl_alarm_host_t *host,
                                  const char *target, char *err, size_t errlen);

typedef struct {
    const char *name;                   //  the target scheme, e.g. "webhook":
                                        //  letters, digits, '_', '-', '.',
                                        //  starting with a letter, at most 32
    xxl_alarm_send_fn *send;            //  required
    xxl_alarm_check_fn *check;          //  optional (NULL: any non-empty target)
    uint32_t flags;                     //  none defined yet; 0
} xxl_alarm_kind_t;

//  The descriptor a plugin's entry point returns.  `kinds` ends with an
//  entry whose name is NULL.  `init` (optional) runs once at load with the
//  host table and returns the plugin state, or NULL with *error set to a
//  static string on failure, which refuses the plugin.  `destroy`
//  (optional) runs at unload with that state.
typedef struct {
    uint32_t abi_version;               //  XXL_ALARM_ABI_VERSION
    uint32_t size;                      //  sizeof (xxl_alarm_plugin_t)
    const char *name;                   //  plugin name, for log lines
    const char *version;                //  plugin's own version string
    void *(*init) (const xxl_alarm_host_t *host, const char **error);
    void (*destroy) (void *state);
    const xxl_alarm_kind_t *kinds;
} xxl_alarm_plugin_t;

typedef const xxl_alarm_plugin_t *(xxl_alarm_entry_fn) (void);

//  Convenience helpers for alarm plugin code

//  Logs one line through the host (no-op when the host has no vlog)
#if defined (__GNUC__)
__attribute__ ((format (printf, 3, 4)))
#endif
static inline void xxl_alarm_log (const xxl_alarm_host_t *host, int level,
                                  const char *format, ...)
{
    if (!XXL_ALARM_HOST_HAS (host, vlog))
        return;
    va_list args;
    va_start (args, format);
    host->vlog (level, format, args);
    va_end (args);
}

//  The config value under scheduler/alarm/<key>, or dflt when the host has
//  no config or the key is not set (or is empty).
static inline const char *xxl_alarm_config (const xxl_alarm_host_t *host,
                                            const char *key, const char *dflt)
{
    if (!XXL_ALARM_HOST_HAS (host, config))
        return dflt;
    const char *value = host->config (host->config_ctx, key);
    return value && *value? value: dflt;
}

//  The config value under scheduler/alarm/<key> as a number, or dflt when
//  not set or not a number
static inline long xxl_alarm_config_long (const xxl_alarm_host_t *host,
                                          const char *key, long dflt)
{
    const char *value = xxl_alarm_config (host, key, NULL);
    if (!value)
        return dflt;
    char *end = NULL;
    long number = strtol (value, &end, 10);
    return end && end != value && *end == 0? number: dflt;
}

//  Writes a reason into err (for send and check)
#if defined (__GNUC__)
__attribute__ ((format (printf, 3, 4)))
#endif
static inline void xxl_alarm_error (char *err, size_t errlen, const char *format, ...)
{
    if (!err || errlen == 0)
        return;
    va_list args;
    va_start (args, format);
    vsnprintf (err, errlen, format, args);
    va_end (args);
}

//  Declares the plugin's entry point (unmangled in C++ too).
#ifdef __cplusplus
#   define XXL_ALARM_EXTERN_C extern "C"
#else
#   define XXL_ALARM_EXTERN_C
#endif
#define XXL_ALARM_PLUGIN(pname, pversion, pinit, pdestroy, pkinds)      \
    XXL_ALARM_EXTERN_C const xxl_alarm_plugin_t *xxl_alarm_plugin (void); \
    __attribute__ ((visibility ("default")))                            \
    const xxl_alarm_plugin_t *xxl_alarm_plugin (void) {                 \
        static const xxl_alarm_plugin_t s_plugin = {                    \
            XXL_ALARM_ABI_VERSION, sizeof (xxl_alarm_plugin_t),         \
            (pname), (pversion), (pinit), (pdestroy), (pkinds)          \
        };                                                              \
        return &s_plugin;                                               \
    }

#ifdef __cplusplus
}
#endif

#endif
