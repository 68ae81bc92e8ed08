/*  xxl_ledger.h -- the executor's runs in flight and their results.

    A run accepted by the executor is in flight under its logId (queued or
    running) until its result is handed in; then the result waits, in the
    order runs ended, until the agent thread takes it.  Handing a result in
    takes its logId out of flight under the same lock: until the result is
    taken, a reader finds the run in flight or its result waiting, never
    neither.  An eventfd polls readable while results wait: it is written
    when the list goes from empty to not empty, and read back when a take
    empties it.

    Ownership: the items in flight are borrowed (the executor's runs); the
    ledger never frees them.  A result's msg is copied (capped to
    XXL_EXECUTOR_MSG_MAX bytes); a result taken belongs to the caller, who
    frees its msg.  Results not taken are freed with the ledger.
    Threads: thread-safe, one lock.  Every call holds it only to look up,
    add or unlink (no I/O but the eventfd's), so the executor's workers
    may hand results in while holding their own lock (the ledger's lock
    comes last in the executor's lock order).  xxl_ledger_visit calls its
    function under the lock.
    Errors: xxl_ledger_new returns NULL when out of memory or out of fds.
    A result that finds no memory is lost, with an error log line, and
    its logId leaves flight all the same; an item that finds no memory to
    go in flight is not in flight (xxl_ledger_has says 0).
*/

#ifndef XXL_LEDGER_H_INCLUDED
#define XXL_LEDGER_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include "xxl_executor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct _xxl_ledger_t xxl_ledger_t;

//  A copy of a run's result message as the ledger keeps it: at most
//  XXL_EXECUTOR_MSG_MAX bytes; NULL for NULL or when out of memory
char *xxl_ledger_msg_copy (const char *msg);

//  Creates an empty ledger and its eventfd.  NULL on failure.
xxl_ledger_t *xxl_ledger_new (void);

//  Frees the results not taken, closes the eventfd, frees the ledger.
//  Nulls *self_p.
void xxl_ledger_destroy (xxl_ledger_t **self_p);

//  The eventfd that polls readable while results wait.
int xxl_ledger_fd (xxl_ledger_t *self);

//  Puts item in flight under log_id (replacing any).
void xxl_ledger_add (xxl_ledger_t *self, int64_t log_id, void *item);

//  Hands in the result of log_id (msg may be NULL; start_time: epoch ms
//  its handler started, 0 when it never did) and takes log_id out of
//  flight.
void xxl_ledger_done (xxl_ledger_t *self, int64_t log_id, int64_t log_date_time,
                      int64_t start_time, int code, const char *msg);

//  1 if log_id is in flight, else 0.
int xxl_ledger_has (xxl_ledger_t *self, int64_t log_id);

//  Calls fn (item, arg) with the item in flight under log_id, under the
//  ledger's lock (so its result cannot be handed in meanwhile), and returns what fn
//  returns; -1 without a call when log_id is not in flight.
int xxl_ledger_visit (xxl_ledger_t *self, int64_t log_id,
                      int (*fn) (void *item, void *arg), void *arg);

//  Takes up to max results into results, oldest first; returns how many
//  (0 when none).  The caller frees each msg.
size_t xxl_ledger_take (xxl_ledger_t *self, xxl_result_t *results, size_t max);

#ifdef __cplusplus
}
#endif

#endif
