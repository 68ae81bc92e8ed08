/*  xxl_runexec.h -- executes one run of the executor on a pool thread.

    Part of the executor (xxl_executor_int.h).  A run is executed in
    process (its handler called on the pool thread, cooperative kill and
    timeout through cancelled()), isolated in an xxl-runner process, or
    as a GLUE script under its interpreter; its outcome is left in the
    run (result_*), then handed to the ledger by xxl_runexec_done, which
    frees it.  A handler with a per-job lifecycle has its init run here,
    before the job's first in-process run, and its destroy when the queue
    is retired (xxl_runexec_close).  Callers: xxl_runpool.c (execute,
    done, close), xxl_executor.c (cancel, done, free).
*/

#ifndef XXL_RUNEXEC_H_INCLUDED
#define XXL_RUNEXEC_H_INCLUDED

#include "xxl_executor_int.h"

//  Executes run; MUST be called without the executor mutex, the pool
//  lock or the run's queue lock.  Leaves the outcome in run->result_*.
void xxl_runexec_execute (run_t *run);

//  Hands the run's result to the ledger and frees the run.  Caller holds
//  the run's queue lock (so that busy() never sees the job idle before
//  its result is out).
void xxl_runexec_done (xxl_executor_t *self, run_t *run, int code, const char *msg);

//  Cancels a running run (how: CANCEL_KILL with reason, or
//  CANCEL_TIMEOUT) and wakes its wait on a child.  Caller holds the run's
//  queue lock.
void xxl_runexec_cancel (run_t *run, int how, const char *reason);

//  Runs the destroy of the queue's handler lifecycle if it is open
//  (xxl/handler.h) and closes it, dropping its plugin reference.  Called
//  by the thread serving the queue, or its freer, with no lock held and
//  no run of the queue running.
void xxl_runexec_close (worker_t *worker);

//  Frees a run that was never queued, or is done
void xxl_runexec_free (run_t *run);

#endif
