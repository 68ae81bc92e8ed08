/*  xxl_alarms.h -- the scheduler's alarm plugins and alarm sender.

    Loads every alarm plugin (*.so) in a folder, checks each against the
    alarm ABI (sdk/include/xxl/alarm.h), validates jobs' alarm targets, and
    delivers alarms on a worker thread of its own.  A bad plugin -- not
    loadable, no xxl_alarm_plugin symbol, wrong ABI version, descriptor
    too small, invalid or duplicate kind name, failing init -- is refused
    with one clear log line through the host's vlog, and the others still
    load.  Files load in name order, so when two plugins register the same
    kind, the first file keeps it.

    Targets: a job's alarm targets are one string, comma-separated; each
    target is "kind:destination" or, for XXL-JOB compatibility, a plain
    email address (contains '@', no "kind:" prefix) meaning
    "email:address".  Spaces around targets are ignored, empty targets
    skipped; a destination cannot contain a comma.

    Sending: xxl_alarms_submit copies an alarm into a bounded queue and
    never blocks.  The worker thread delivers each alarm to all of its
    targets in turn (plugins bound each send with their own timeout) and
    queues one result per alarm.  xxl_alarms_fd is readable while results
    are pending; xxl_alarms_take pops one.  The engine polls the fd on its
    event loop.

    Shutdown: xxl_alarms_destroy lets the worker finish the send in flight
    (bounded by the kinds' timeouts) and go on with queued alarms until the
    drain time (xxl_alarms_set_drain_ms, 0 by default) is over; alarms
    still queued then are dropped with one log line, and untaken results
    are discarded.  The engine marks an alarm done only when it takes its
    result, so a dropped alarm is sent again after a restart.

    Loading and set_* calls must happen before submitting; after that,
    kinds, check_targets, submit, fd and take may be called from any
    thread.
*/

#ifndef XXL_ALARMS_H_INCLUDED
#define XXL_ALARMS_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include <xxl/alarm.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct _xxl_alarms_t xxl_alarms_t;

#define XXL_ALARMS_QUEUE_LIMIT      1000    //  default bound of the queue
#define XXL_ALARMS_MAX_TARGETS      32      //  per job
#define XXL_ALARMS_MAX_TARGET_LEN   2048    //  per target

//  Creates the alarm registry, loads the alarm plugins in dir (when dir
//  is not NULL) and starts the worker thread.  host is borrowed and must
//  outlive the registry (NULL: xxl_alarms_default_host ()).  Returns NULL
//  when host has the wrong ABI version or is too small, when dir cannot
//  be read (logged), or when out of resources.  Plugins that fail to load
//  are logged and skipped; that does not fail the registry.
xxl_alarms_t *
    xxl_alarms_new (const char *dir, const xxl_alarm_host_t *host);

//  Loads the alarm plugins in one more folder.  Returns the number of
//  plugins loaded from it, or -1 when dir cannot be read (logged).
int
    xxl_alarms_load (xxl_alarms_t *self, const char *dir);

//  Loads one plugin file.  Returns 0, or -1 when refused (logged).
int
    xxl_alarms_load_file (xxl_alarms_t *self, const char *path);

//  Stops the worker (see Shutdown above), unloads every plugin (calling
//  its destroy) and nulls *self_p.
void
    xxl_alarms_destroy (xxl_alarms_t **self_p);

//  Number of registered kinds.
size_t
    xxl_alarms_size (xxl_alarms_t *self);

//  All kind names, sorted and separated by ", " ("email, script, webhook",
//  "" when none).  The caller frees it; NULL when out of memory.
char *
    xxl_alarms_kinds (xxl_alarms_t *self);

//  1 when a kind of that name is loaded.
int
    xxl_alarms_has_kind (xxl_alarms_t *self, const char *kind);

//  Validates a job's alarm targets (job add|update): every target names a
//  loaded kind and passes that kind's check.  NULL or "" (no alarm) is
//  valid.  Returns 0, or -1 with the first problem in err, e.g.
//  "unknown alarm kind 'sms' in target 'sms:123'; known: email, script, webhook".
int
    xxl_alarms_check_targets (xxl_alarms_t *self, const char *targets,
                              char *err, size_t errlen);

//  Delivers alarm to every target now, on the calling thread (it may
//  block).  Returns 1 when all targets got it, 0 when one failed (an
//  invalid target counts as failed), -1 when out of memory.  *report_p
//  (when report_p is not NULL) receives the report, one line per target
//  ("webhook http://h/x: sent", "email a@b: failed: reason"), which the
//  caller frees.  alarm->json may be NULL: it is rendered then.
int
    xxl_alarms_send (xxl_alarms_t *self, const xxl_alarm_t *alarm,
                     const char *targets, char **report_p);

//  Queues alarm for the worker, copying it and targets.  Never blocks.
//  tag comes back with the result (the engine uses the log id).  Returns
//  0, or -1 when the queue is full, when shutting down, or when out of
//  memory.  alarm->json may be NULL: it is rendered then.
int
    xxl_alarms_submit (xxl_alarms_t *self, const xxl_alarm_t *alarm,
                       const char *targets, int64_t tag);

//  A file descriptor that polls readable (POLLIN) while results are
//  pending.  Owned by the registry; do not read or close it.
int
    xxl_alarms_fd (xxl_alarms_t *self);

//  Pops one result: its tag, *ok 1 when every target got the alarm, 0
//  otherwise, and the report (see xxl_alarms_send), which the caller
//  frees (report_p may be NULL).  Returns 0, or -1 when no result is
//  pending.  Never blocks.
int
    xxl_alarms_take (xxl_alarms_t *self, int64_t *tag, int *ok, char **report_p);

//  Alarms waiting in the queue (not counting the one being sent).
size_t
    xxl_alarms_queued (xxl_alarms_t *self);

//  Sets the queue bound (> 0; default XXL_ALARMS_QUEUE_LIMIT).
void
    xxl_alarms_set_queue_limit (xxl_alarms_t *self, size_t limit);

//  Sets how long destroy keeps sending queued alarms, in ms (>= 0).
void
    xxl_alarms_set_drain_ms (xxl_alarms_t *self, int drain_ms);

//  Renders alarm as its JSON object (see xxl_alarm_t.json): XXL-JOB's
//  camelCase keys, strings escaped, invalid UTF-8 replaced by U+FFFD.
//  alarm->json is ignored.  The caller frees it; NULL when out of memory.
char *
    xxl_alarms_json (const xxl_alarm_t *alarm);

//  A host table with the system clock, a vlog that writes to stderr and
//  no config.  The scheduler copies it and fills in config/config_ctx.
//  Static; never NULL.
const xxl_alarm_host_t *
    xxl_alarms_default_host (void);

#ifdef __cplusplus
}
#endif

#endif
