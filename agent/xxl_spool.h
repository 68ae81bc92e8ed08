/*  xxl_spool.h -- the agent's durable queue of callback results.

    A result goes into the spool before the agent tries to deliver it, and
    leaves it only when a scheduler acknowledged it, so that no result is
    lost when no scheduler answers or the agent restarts.  Adds are fsync'd
    before they return (a batch shares one fsync); acks are written without
    fsync (a lost ack only re-delivers a result, and a repeated callback is a
    no-op on the scheduler).  The file format is described in xxl_spool.c.
    Not thread-safe: one thread (the agent loop) owns a spool.
*/

#ifndef XXL_SPOOL_H_INCLUDED
#define XXL_SPOOL_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include "xxl_executor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct _xxl_spool_t xxl_spool_t;

//  Opens or creates the spool file at path (its folder must exist) and
//  replays it: results added and not acked are pending again, in their
//  order.  A torn or corrupt tail (crash while writing) is logged and cut
//  off.  Returns NULL if the file cannot be opened or is not a spool.
xxl_spool_t *xxl_spool_new (const char *path);

//  Closes the spool (pending results stay on disk).  Nulls *self_p.
void xxl_spool_destroy (xxl_spool_t **self_p);

//  Adds one result (copied) and fsyncs.  A result with a logId already
//  pending replaces it.  Returns 0, or -1 if it could not be made durable
//  (it is then not pending either).
int xxl_spool_add (xxl_spool_t *self, const xxl_result_t *result);

//  Adds count results with one write and one fsync.  Returns 0 or -1 (none
//  added).
int xxl_spool_add_batch (xxl_spool_t *self, const xxl_result_t *results, size_t count);

//  Removes a pending result once a scheduler acknowledged it.  Returns 0, or
//  -1 if no result with that logId is pending.  Compacts the file when acked
//  records outnumber pending ones (and there are at least 65,536: a result
//  and its ack count two).
int xxl_spool_ack (xxl_spool_t *self, int64_t log_id);

//  Removes the pending results of count logIds at once: their ack records
//  go in one write (no fsync), and the file is compacted at most once.
//  logIds not pending are skipped.  Returns how many were removed.
size_t xxl_spool_ack_batch (xxl_spool_t *self, const int64_t *log_ids, size_t count);

//  1 if a result of that logId is pending, else 0.
int xxl_spool_pending (xxl_spool_t *self, int64_t log_id);

//  Number of pending results.
size_t xxl_spool_size (xxl_spool_t *self);

//  Iteration over pending results, oldest first; NULL at the end.  The
//  results belong to the spool and stay valid until they are acked or
//  replaced; add and ack may be called while iterating (an acked current
//  item is fine; iteration goes on from the next one).
const xxl_result_t *xxl_spool_first (xxl_spool_t *self);
const xxl_result_t *xxl_spool_next (xxl_spool_t *self);

//  Rewrites the file with pending results only (fsync'd, atomic rename;
//  with none pending, truncates it to its header).  Returns 0 or -1 (the
//  old file stays in use).
int xxl_spool_compact (xxl_spool_t *self);

#ifdef __cplusplus
}
#endif

#endif
