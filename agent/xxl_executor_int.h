/*  xxl_executor_int.h -- the executor's shared state, private to its parts.

    The executor (xxl_executor.h) is three files sharing these structures:
      - xxl_executor.c: the public API, the job queues (worker_t) in the
        map, accepting runs, holds, kills;
      - xxl_runpool.c: the pool of threads that serve READY queues, the
        manager that grows it and reaps idle queues;
      - xxl_runexec.c: one run's execution on a pool thread (in process,
        isolated in xxl-runner, or a GLUE script) and its result.
    Nothing outside these three includes this file.

    Locks, taken in this order when nested, none held while a run
    executes:
      - the executor mutex: the queue map, accepted logIds, creating and
        retiring queues, holds, stop (the agent thread, the manager);
      - each queue's lock: its runs, its running run, its state;
      - the pool lock: the ready and idle lists, thread counts;
      - the ledger's lock (xxl_ledger.h): in-flight logIds and finished
        results (briefly, at the end of each run and by the agent thread).
    A thread takes a READY queue from the list under the pool lock alone
    and then takes the queue's lock: a queue in the list is never freed
    by anyone else (a stop marks it, fails its runs and leaves the free to
    the thread that takes it; an IDLE queue is freed by its stopper).
    Idle threads wait each on its own condition (a LIFO stack: the most
    recently idle is woken first, the rest stay asleep and retire); the
    thousands of waiters a burst of blocking runs leaves behind sit in
    the kernel's futex hash, which
    Linux >= 6.16 gives each process sized by CPU count (16 buckets on 2
    CPUs): every futex operation of the process (any mutex handover) would
    walk chains of hundreds of them under a spinlock, so the executor asks
    for a private hash of XXL_FUTEX_SLOTS buckets (prctl PR_FUTEX_HASH;
    older kernels have one big shared hash and refuse the call, which is
    fine).  Threads hold no file descriptor while idle: each fd the process
    holds is copied by every spawn of a child and closed again by its exec.
*/

#ifndef XXL_EXECUTOR_INT_H_INCLUDED
#define XXL_EXECUTOR_INT_H_INCLUDED

#include "xxl_executor.h"
#include "xxl_glue.h"
#include "xxl_imap.h"
#include "xxl_ledger.h"
#include "xxl_logsink.h"
#include "xxl_runpack.h"
#include "xxl_spawner.h"

#include <pthread.h>
#include <time.h>

//  ---------------------------------------------------------------------
//  Runs and workers

typedef struct _worker_t worker_t;

enum { CANCEL_NONE = 0, CANCEL_KILL = 1, CANCEL_TIMEOUT = 2 };

typedef struct _run_t {
    xxl_run_t base;                     //  first: handlers get &base
    xxl_executor_t *executor;
    worker_t *worker;
    int64_t job_id, log_id, log_date_time, glue_updatetime;
    int64_t start_time;                 //  epoch ms its handler started (0: not)
    char *handler_name;                 //  these three in the run's own
    char *params;                       //  allocation, after it (glue_source
    char *glue_source;                  //  NULL for BEAN runs)
    int glue;
    int timeout_s, shard_index, shard_total;
    xxl_handler_ref_t ref;              //  BEAN runs
    xxl_logsink_t *log;
    int64_t deadline;                   //  monotonic ms, 0 = none
    int cancel;                         //  CANCEL_*, atomic
    char *kill_reason;                  //  under the worker's lock
    //  Under the worker's lock: the waits of xxl_run_sleep (any thread of
    //  the run's handler), made at the first, broadcast by a cancel
    pthread_cond_t sleep_wake;
    int sleep_ready;
    int result_set, result_code;
    char *result_msg;
    uint64_t seq;                       //  staged in this hold (0: none); may
                                        //  start once committed_seq >= seq
    struct _run_t *next;
} run_t;

//  A job's serial queue (XXL-JOB's JobThread without its thread): its
//  runs in order, the one running, and where it stands in the pool
enum { JOB_IDLE = 0, JOB_READY, JOB_SERVING };

struct _worker_t {
    xxl_executor_t *executor;
    int64_t job_id;
    char *handler_name;                 //  BEAN identity
    int glue;
    int64_t glue_updatetime;
    //  Under lock (stop is also set under it); in_map under the executor mutex
    pthread_mutex_t lock;
    run_t *head, *tail;
    run_t *running;
    int stop;
    int in_map;
    int state;                          //  JOB_*: IDLE (no thread has it, not
                                        //  listed), READY (in the pool's ready
                                        //  list), SERVING (one thread runs its
                                        //  queue)
    uint64_t listed_seq;                //  the hold it is listed to be readied at
    int wake_fd;                        //  eventfd while a child runs (else
                                        //  -1): wakes the wait on it (kill)
    //  The job's handler lifecycle (xxl/handler.h): open from a successful
    //  init (or, without init, the first run started) to its destroy.
    //  Only the thread serving the queue writes these (handed from one
    //  to the next through the queue's lock); a stopper reads life_open
    //  under that lock only while the queue is IDLE (no thread has it).
    //  A stopped IDLE queue with its lifecycle open is never freed by its
    //  stopper but readied, so that a pool thread runs the destroy
    //  (xxl_runexec_close) and frees it, off the stopper's locks.
    int life_open;
    xxl_handler_ref_t life_ref;         //  the plugin of the init, held open
    void *job_state;                    //  what init stored
    //  Under the pool lock
    struct _worker_t *ready_next;       //  the ready list (FIFO)
    struct _worker_t *idle_prev, *idle_next;
    int in_idle;                        //  in the idle list (oldest first)
    int64_t idle_since;                 //  monotonic ms its queue emptied
};

struct _xxl_executor_t {
    char *logdir;
    xxl_runpack_t *pack;                //  NULL: a file per run
    xxl_glue_t *glue;                   //  sources and interpreters
    int allow_glue;
    int in_process;
    int idle_reap_s;
    char *runner;
    xxl_spawner_t *spawner;             //  the runs' processes
    xxl_handlers_t *handlers;
    xxl_journal_t *journal;             //  accepted logIds (under the mutex)
    int own_journal;                    //  made here, in memory only

    pthread_mutex_t mutex;              //  see the head of this file
    pthread_condattr_t monotonic;       //  for every condition here
    int hold_wakes;                     //  xxl_executor_hold_wakes: the job ids
    int64_t *held_wakes;                //  whose worker a run was staged for,
    size_t held_count, held_max;        //  woken at the release
    uint64_t stage_seq;                 //  the current (or last) hold
    uint64_t committed_seq;             //  atomic: holds whose runs may start
    pthread_attr_t attr;
    xxl_imap_t *workers;                //  job id -> worker_t (current)
    int stopped;

    //  The pool (see the head of this file), under pool_lock
    pthread_mutex_t pool_lock;
    struct _idler_t *idle_top;          //  idle threads, most recently idle
    struct _idler_t *idle_bottom;       //  first (each waits on its own
                                        //  condition: xxl_runpool.c)
    struct _idler_t *idlers;            //  every idler made, freed by destroy
    struct _idler_t *idlers_free;       //  of which no thread has
    size_t idlers_spare;                //  the length of idlers_free
    pthread_cond_t pool_gone;           //  threads and jobs ended (stop)
    pthread_cond_t manager_wake;        //  the manager's wait
    worker_t *ready_head, *ready_tail;  //  jobs with a run to start, no thread
    size_t ready_count;
    worker_t *idle_head, *idle_tail;    //  IDLE jobs whose queue emptied, oldest
                                        //  first (staged runs may be queued)
    size_t threads;                     //  pool threads alive (or being made)
    size_t idle_threads;                //  of which waiting for a job (in
                                        //  the idle stack)
    size_t retiring;                    //  of which told to end, not yet gone
    size_t starting;                    //  of which made, not yet running:
                                        //  counted as idle (they will take
                                        //  a job at once)
    size_t looking;                     //  of which woken to take a ready
                                        //  job, not yet back under the lock:
                                        //  each covers one ready job
    uint64_t wakes;                     //  idle threads woken (IDLER_LOOK)
    uint64_t ready_lists;               //  times queues were put on the ready
                                        //  list (one lock for all of a release)
    uint64_t manager_calls;             //  signals of manager_wake by ready
    size_t threads_min, threads_max;
    size_t cpus;                        //  online CPUs (at least 1)
    size_t threads_peak;
    size_t waiting_max;                 //  ready jobs beyond idle threads, once
                                        //  no thread can be added
    int64_t spawn_failed;               //  monotonic ms of the last failed
                                        //  pthread_create (0: none)
    int thread_idle_ms;                 //  an extra idle thread ends after this
                                        //  (retired by the manager, oldest first)
    int64_t retire_busy_at;             //  monotonic ms before which no thread
                                        //  is retired while runs keep ending
    uint64_t retired_busy, retired_quiet;   //  threads told to end while runs
                                        //  kept ending, and once they had not
    size_t live_workers;                //  job queues allocated
    int pool_stop;                      //  stop: threads end once idle
    int manager_alive;
    uint64_t completed;                 //  atomic: runs ended, for the manager

    xxl_ledger_t *ledger;               //  log id -> run_t (queued or running),
                                        //  then its result until taken

    size_t active;                      //  atomic
    size_t pending;                     //  atomic
};

//  Monotonic ms
static inline int64_t
xxl_executor_mono_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

//  A run may start: not staged, or its hold was released
static inline int
xxl_executor_startable (xxl_executor_t *self, run_t *run)
{
    return !run->seq || run->seq <= __atomic_load_n (&self->committed_seq, __ATOMIC_ACQUIRE);
}

//  xxl_executor.c: frees a stopped queue (its thread's last act, or its
//  stopper's for an IDLE one) and takes a queue out of service (see there)
void xxl_executor_queue_free (xxl_executor_t *self, worker_t *worker);
void xxl_executor_queue_stop (xxl_executor_t *self, worker_t *worker, const char *reason);

#endif
