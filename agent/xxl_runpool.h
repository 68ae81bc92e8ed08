/*  xxl_runpool.h -- the executor's pool of threads.

    Part of the executor (xxl_executor_int.h).  Pool threads take READY
    job queues from a FIFO list and serve them (xxl_runexec_execute for
    each run); a manager thread grows the pool while queues wait and every
    thread is blocked in a run, and reaps queues idle too long.  The pool
    owns its half of xxl_executor_t: what pool_lock guards.  Called by
    xxl_executor.c only.
*/

#ifndef XXL_RUNPOOL_H_INCLUDED
#define XXL_RUNPOOL_H_INCLUDED

#include "xxl_executor_int.h"

//  Sets up the pool's locks, conditions and sizes from config (threads_max,
//  waiting_max; self->idle_reap_s already set).  Starts no thread.
void xxl_runpool_init (xxl_executor_t *self, const xxl_executor_config_t *config);

//  Starts threads_min pool threads and the manager; 0, or -1 (logged by
//  the caller; stop and destroy still work).
int xxl_runpool_start (xxl_executor_t *self);

//  Tells the pool to end and waits (at most 10 s) for every queue, pool
//  thread and the manager to be gone.  Caller has stopped every queue.
void xxl_runpool_stop (xxl_executor_t *self);

//  1 while a queue, a pool thread or the manager still lives
int xxl_runpool_alive (xxl_executor_t *self);

//  Destroys the pool's locks and conditions; MUST NOT be called while
//  xxl_runpool_alive
void xxl_runpool_destroy (xxl_executor_t *self);

//  An IDLE queue whose head may start goes to the ready list for a thread.
//  Caller holds the queue's lock.
void xxl_runpool_ready (xxl_executor_t *self, worker_t *worker);

//  Lists count queues on the ready list under one pool lock, as
//  xxl_runpool_ready would each (the wakes after the lock).  The caller
//  made each READY (it was IDLE with a startable head) under its lock and
//  released it, holds the executor mutex, and has nothing else listed
//  them since: a READY queue not yet listed is out of every other
//  thread's reach (only a thread taking it from the list serves it; only
//  a stopper under the mutex stops it).
void xxl_runpool_ready_many (xxl_executor_t *self, worker_t **workers, size_t count);

//  Takes a queue off the idle list (if on it).  Caller holds pool_lock.
void xxl_runpool_idle_unlink (xxl_executor_t *self, worker_t *worker);

//  1 (reason in msg) when a run that needs a thread cannot have one soon:
//  back-pressure.  Caller holds the executor mutex.
int xxl_runpool_full (xxl_executor_t *self, char *msg, size_t msglen);

#endif
