/*  xxl_bridge_routes.h -- which executor each logId the bridge sent went to.

    A scheduler counts a CALLBACK item only from the connection of the
    address its run was sent to, so a result the bridge holds must go out
    on that executor's link, also after the bridge restarted.  The routes
    are an append-only text file: "S LOGID JOBID LOGDATETIME APP URL" when
    a run is sent (or "R LOGID APP URL", its job unknown), "D LOGID" when
    its result was acknowledged or it will have none.  Lines are buffered
    and written by xxl_bridge_routes_flush, with one write() and no fsync
    (as the journal: enough against a crash of the bridge); the bridge
    flushes before the calls it posted go on the wire, so a run's route
    is in the file before its executor can have it.  A "D" lost in a
    crash only leaves a route open (a restarted bridge asks the executor
    about it).  Replayed at start; rewritten with
    the open routes only once done ones outnumber them (and there are
    at least 10,000).  Not thread-safe: the bridge's loop owns it.  Called
    by xxl_bridge.c and xxl_bridge_exec.c; calls nothing of the bridge.
*/

#ifndef XXL_BRIDGE_ROUTES_H_INCLUDED
#define XXL_BRIDGE_ROUTES_H_INCLUDED

#include <czmq.h>

typedef struct _xxl_bridge_routes_t xxl_bridge_routes_t;

//  The decimal text of log_id into out (at least XXL_BRIDGE_ID_MAX bytes,
//  NUL-terminated): how the bridge's maps key a logId; its length.  (No
//  printf: it is made several times a run.)
#define XXL_BRIDGE_ID_MAX  24
size_t xxl_bridge_routes_id (int64_t log_id, char *out);

//  Opens (creates) and replays path; NULL when it cannot be opened.
//  A line that is not a route (a torn tail) is skipped.
xxl_bridge_routes_t *xxl_bridge_routes_new (const char *path);
void xxl_bridge_routes_destroy (xxl_bridge_routes_t **self_p);

//  Records that log_id goes to the executor key (APP "\t" URL) (buffered
//  until flush); 0 or -1 (out of memory: known in memory only)
int xxl_bridge_routes_add (xxl_bridge_routes_t *self, int64_t log_id, const char *key);

//  The same, with the run's job and logDateTime: a restarted bridge asks
//  the executor about the job of each open route (its lost-run check)
int xxl_bridge_routes_add_run (xxl_bridge_routes_t *self, int64_t log_id, const char *key,
                               int64_t job_id, int64_t log_date_time);

//  The open routes, in no order: the key (owned by self), or NULL at the
//  end; job_id is -1 for a route added without its job
const char *xxl_bridge_routes_first (xxl_bridge_routes_t *self, int64_t *log_id,
                                     int64_t *job_id, int64_t *log_date_time);
const char *xxl_bridge_routes_next (xxl_bridge_routes_t *self, int64_t *log_id,
                                    int64_t *job_id, int64_t *log_date_time);

//  The executor key of log_id, or NULL (owned by self)
const char *xxl_bridge_routes_get (xxl_bridge_routes_t *self, int64_t log_id);

//  Forgets log_id's route (nothing when none)
void xxl_bridge_routes_done (xxl_bridge_routes_t *self, int64_t log_id);

//  Writes the buffered lines with one write(); 0, or -1 when it failed
//  (what was not written stays buffered for the next flush).  destroy
//  flushes.
int xxl_bridge_routes_flush (xxl_bridge_routes_t *self);

//  Open routes
size_t xxl_bridge_routes_size (xxl_bridge_routes_t *self);

#endif
