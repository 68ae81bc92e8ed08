/*  xxl_executor.c -- runs the triggers an agent receives.

    Queues and threads.  Each job id has a serial queue (worker_t, as
    XXL-JOB's JobThread but without a thread of its own: memory only),
    served by a pool of detached threads (small stack).  Invariants: a
    queue is IDLE (no thread has it), READY (in the pool's FIFO ready list,
    once) or SERVING (exactly one thread runs its runs, one at a time, in
    the order queued), so a job never has two runs at once and its runs
    keep their order.  A thread that takes a READY queue runs it until it
    is empty, its head is staged (below) or it is stopped, or, while
    other queues wait for a thread, for a slice (SERVE_SLICE_MS: the
    queue goes back to the ready list's tail, so a job whose runs keep
    coming does not hold a thread from the others); then it takes the
    next READY one, or waits idle; an extra idle thread ends after
    thread_idle_ms (threads_min stay).  Sizing: threads_min (the CPUs, at
    least 2) start with the executor; the manager thread adds threads
    while queues wait for one, no run ended for a tick (5 ms: every
    thread blocked in a run, as sleeping handlers are) and the machine
    has a CPU to spare (not: preempted threads; after 4 ticks even
    without one, so that other processes' load cannot starve sleeping
    runs), doubling the pool
    per tick, up to threads_max (configured, else sized to the machine:
    RLIMIT_NPROC, threads-max, max_map_count, memory).  Runs that end keep
    the pool at its size, so CPU-bound runs do not grow it, while each
    blocking run soon has a thread of its own.  When no thread can be had
    (threads_max, or pthread_create failing) and waiting_max queues wait
    beyond the idle threads, a run that needs a thread is refused "busy:
    ..." before anything of it is taken (back-pressure); one queued behind
    its job's own run needs none and is always taken.  The manager also
    reaps queues idle idle_reap_s (the idle list, oldest first; a queue
    there that got runs in a hold, not readied before the release, is
    not idle: the reaper only takes it off the list).

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
    Idle threads wait on one condition; the thousands of waiters a burst
    of blocking runs leaves behind sit in the kernel's futex hash, which
    Linux >= 6.16 gives each process sized by CPU count (16 buckets on 2
    CPUs): every futex operation of the process (any mutex handover) would
    walk chains of hundreds of them under a spinlock, so the executor asks
    for a private hash of XXL_FUTEX_SLOTS buckets (prctl PR_FUTEX_HASH;
    older kernels have one big shared hash and refuse the call, which is
    fine).  Threads hold no file descriptor while idle: each fd the process
    holds is copied by every spawn of a child and closed again by its exec.

    Replacing a queue (changed handler or glue version, COVER_EARLY, kill)
    takes it out of the map, fails its queued runs at once and cancels its
    running run; its thread frees it when the run returns, and stop()
    waits for every queue and thread to be gone.

    Processes.  Isolated BEAN runs start xxl-runner (see
    xxl_runner_main.c), GLUE runs their interpreter (xxl_glue.h), both
    through xxl_spawner.h: in a process group of their own, the run's log
    as stdout and stderr.  The worker waits for the child with the wait's
    eventfd published in worker_t.wake_fd, which a kill writes; on kill or
    timeout the whole group is ended (SIGTERM, SIGKILL after
    XXL_EXECUTOR_GRACE_MS).

    Accepted logIds.  The dedupe set is the journal's (xxl_journal.h: on
    disk with the agent's, in memory for an executor without one).  A run
    is journaled before it can start: outside a hold at once (one write);
    in a hold (xxl_executor_hold_wakes) it gets the hold's seq and is
    staged: its queue is not readied (a thread serving it leaves it IDLE
    at the staged run) until the release has flushed the journal and
    published committed_seq; the release then readies each queue that got
    runs, once.
    Each spawned process gets XXL_AGENT_RUN=MARKER.LOGID (xxl_guard.h).

    Run logs.  Each run writes its log through its xxl_logsink.h: at once
    into its file for an isolated or GLUE run, held back in memory for an
    in-process one until a later write or a LOG request
    (xxl_executor_log_sync) makes the file, or the day's pack takes it.

    In-process BEAN runs call the handler on the worker thread; kill and
    timeout are cooperative through cancelled(), and a run that outlived
    its timeout reports 502 when the handler returns.
*/

#define _GNU_SOURCE
#include "xxl_executor.h"
#include "xxl_glue.h"
#include "xxl_imap.h"
#include "xxl_ledger.h"
#include "xxl_logsink.h"
#include "xxl_runlog.h"
#include "xxl_runpack.h"
#include "xxl_spawner.h"

#include <czmq.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WORKER_STACK        (256 * 1024)
//  Buckets of the process's futex hash: ~1 sleeper per bucket at 8,000
//  idle workers, 512 KiB (see the head of this file)
#define XXL_FUTEX_SLOTS     8192
#ifndef PR_FUTEX_HASH
#   define PR_FUTEX_HASH            78
#   define PR_FUTEX_HASH_SET_SLOTS  1
#endif
#define STOP_WAIT_MS        10000       //  stop() gives up on runs after this
//  A thread serves one queue this long at most while other queues wait
//  for a thread (then they take turns)
#define SERVE_SLICE_MS      50

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
    char *handler_name;
    char *params;
    char *glue_source;
    int glue;
    int timeout_s, shard_index, shard_total;
    xxl_handler_ref_t ref;              //  BEAN runs
    xxl_logsink_t *log;
    int64_t deadline;                   //  monotonic ms, 0 = none
    int cancel;                         //  CANCEL_*, atomic
    char *kill_reason;                  //  under the worker's lock
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
    pthread_cond_t pool_wake;           //  idle threads wait here
    pthread_cond_t pool_gone;           //  threads and jobs ended (stop)
    pthread_cond_t manager_wake;        //  the manager's wait
    worker_t *ready_head, *ready_tail;  //  jobs with a run to start, no thread
    size_t ready_count;
    worker_t *idle_head, *idle_tail;    //  IDLE jobs whose queue emptied, oldest
                                        //  first (staged runs may be queued)
    size_t threads;                     //  pool threads alive (or being made)
    size_t idle_threads;                //  of which waiting for a job
    size_t starting;                    //  of which made, not yet running:
                                        //  counted as idle (they will take
                                        //  a job at once)
    size_t threads_min, threads_max;
    size_t cpus;                        //  online CPUs (at least 1)
    size_t threads_peak;
    size_t waiting_max;                 //  ready jobs beyond idle threads, once
                                        //  no thread can be added
    int64_t spawn_failed;               //  monotonic ms of the last failed
                                        //  pthread_create (0: none)
    int thread_idle_ms;                 //  an extra idle thread ends after this
    size_t live_workers;                //  job queues allocated
    int pool_stop;                      //  stop: threads end once idle
    int manager_alive;
    uint64_t completed;                 //  atomic: runs ended, for the manager

    xxl_ledger_t *ledger;               //  log id -> run_t (queued or running),
                                        //  then its result until taken

    size_t active;                      //  atomic
    size_t pending;                     //  atomic
};

static void s_execute (run_t *run);
static int s_wake_later (xxl_executor_t *self, int64_t job_id);

static int64_t
s_mono_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
s_run_free (run_t *run)
{
    xxl_handlers_release (&run->ref);
    free (run->handler_name);
    free (run->params);
    free (run->glue_source);
    free (run->kill_reason);
    free (run->result_msg);
    xxl_logsink_destroy (&run->log);
    free (run);
}

//  Queues a result and frees the run.  Caller holds the run's worker lock
//  (so that busy() never sees the job idle before its result is out).
static void
s_push_result (xxl_executor_t *self, run_t *run, int code, const char *msg)
{
    xxl_ledger_done (self->ledger, run->log_id, run->log_date_time, run->start_time, code, msg);
    __atomic_sub_fetch (&self->pending, 1, __ATOMIC_RELAXED);
    s_run_free (run);
}

//  Wakes the serving thread's wait on a child (kill); a wake that finds
//  none is harmless.  Caller holds the worker's lock.
static void
s_worker_wake (worker_t *worker)
{
    uint64_t one = 1;
    if (worker->wake_fd >= 0 && write (worker->wake_fd, &one, sizeof one) < 0)
        zsys_warning ("executor: eventfd write: %s", strerror (errno));
}

//  Cancels a running run with a reason; caller holds its worker's lock
static void
s_run_cancel (run_t *run, int how, const char *reason)
{
    if (how == CANCEL_KILL && !run->kill_reason)
        run->kill_reason = strdup (reason? reason: "killed");
    int none = CANCEL_NONE;
    __atomic_compare_exchange_n (&run->cancel, &none, how, 0,
                                 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    if (run->worker)
        s_worker_wake (run->worker);
}

//  The idle list: IDLE jobs whose queue emptied, oldest first, reaped from
//  its head; a job stays listed until it is readied (a run staged in a
//  hold does not ready it).  Caller holds the pool lock.
static void
s_idle_unlink (xxl_executor_t *self, worker_t *worker)
{
    if (!worker->in_idle)
        return;
    if (worker->idle_prev)
        worker->idle_prev->idle_next = worker->idle_next;
    else
        self->idle_head = worker->idle_next;
    if (worker->idle_next)
        worker->idle_next->idle_prev = worker->idle_prev;
    else
        self->idle_tail = worker->idle_prev;
    worker->idle_prev = worker->idle_next = NULL;
    worker->in_idle = 0;
}

static void
s_idle_append (xxl_executor_t *self, worker_t *worker)
{
    assert (!worker->in_idle);
    worker->idle_since = s_mono_ms ();
    worker->idle_prev = self->idle_tail;
    worker->idle_next = NULL;
    if (self->idle_tail)
        self->idle_tail->idle_next = worker;
    else
        self->idle_head = worker;
    self->idle_tail = worker;
    worker->in_idle = 1;
}

//  An IDLE job whose head may start goes to the ready list for a thread:
//  an idle thread is woken, else the manager is told (it adds threads
//  when the pool is stalled).  Caller holds the worker's lock.
static void
s_worker_ready (xxl_executor_t *self, worker_t *worker)
{
    assert (worker->state == JOB_IDLE);
    worker->state = JOB_READY;
    pthread_mutex_lock (&self->pool_lock);
    s_idle_unlink (self, worker);
    worker->ready_next = NULL;
    if (self->ready_tail)
        self->ready_tail->ready_next = worker;
    else
        self->ready_head = worker;
    self->ready_tail = worker;
    self->ready_count++;
    //  An idle thread is woken only while fewer threads are in runs than
    //  there are CPUs: otherwise a thread in a run takes the queue when its
    //  run ends (a wake per run would cost a switch each: the idle threads
    //  a burst of sleeping runs left behind made the e2e agent's CPU per
    //  run 14.3-15.7 us against 8.4-10.7), and the manager wakes or adds
    //  threads if none ends for a tick
    size_t busy = self->threads - self->idle_threads - self->starting;
    if (self->idle_threads > 0 && busy < self->cpus)
        pthread_cond_signal (&self->pool_wake);
    if (self->ready_count == 1)
        pthread_cond_signal (&self->manager_wake);     //  a backlog begins
    pthread_mutex_unlock (&self->pool_lock);
}

//  A run may start: not staged, or its hold was released
static int
s_startable (xxl_executor_t *self, run_t *run)
{
    return !run->seq || run->seq <= __atomic_load_n (&self->committed_seq, __ATOMIC_ACQUIRE);
}

static void
s_worker_free (xxl_executor_t *self, worker_t *worker)
{
    pthread_mutex_destroy (&worker->lock);
    free (worker->handler_name);
    free (worker);
    pthread_mutex_lock (&self->pool_lock);
    if (--self->live_workers == 0)
        pthread_cond_broadcast (&self->pool_gone);
    pthread_mutex_unlock (&self->pool_lock);
}

//  Takes a job's queue out of service: out of the map, queue failed,
//  running run cancelled.  An IDLE queue is freed now; a READY or SERVING
//  one by the pool thread that takes it or serves it.  Caller holds the
//  executor mutex and not the worker's lock.
static void
s_worker_stop (xxl_executor_t *self, worker_t *worker, const char *reason)
{
    if (worker->in_map) {
        xxl_imap_del (self->workers, worker->job_id);
        worker->in_map = 0;
    }
    pthread_mutex_lock (&worker->lock);
    worker->stop = 1;
    char msg [1024];
    snprintf (msg, sizeof msg, "%s [job not executed, in the job queue, killed.]", reason);
    while (worker->head) {
        run_t *run = worker->head;
        worker->head = run->next;
        xxl_runlog_append (self->logdir, run->log_id, run->log_date_time, msg);
        s_push_result (self, run, XXL_CODE_FAIL, msg);
    }
    worker->tail = NULL;
    if (worker->running)
        s_run_cancel (worker->running, CANCEL_KILL, reason);
    int free_now = worker->state == JOB_IDLE;
    if (free_now) {
        pthread_mutex_lock (&self->pool_lock);
        s_idle_unlink (self, worker);
        pthread_mutex_unlock (&self->pool_lock);
    }
    pthread_mutex_unlock (&worker->lock);
    if (free_now)
        s_worker_free (self, worker);
}

//  ---------------------------------------------------------------------
//  Host table for in-process handlers

static const char *s_host_param (xxl_run_t *base) { return ((run_t *) base)->params; }
static int64_t s_host_job_id (xxl_run_t *base) { return ((run_t *) base)->job_id; }
static int64_t s_host_log_id (xxl_run_t *base) { return ((run_t *) base)->log_id; }
static int s_host_shard_index (xxl_run_t *base) { return ((run_t *) base)->shard_index; }
static int s_host_shard_total (xxl_run_t *base) { return ((run_t *) base)->shard_total; }

static void
s_host_vlog (xxl_run_t *base, const char *format, va_list args)
{
    run_t *run = (run_t *) base;
    char *text = NULL;
    if (vasprintf (&text, format, args) >= 0) {
        xxl_logsink_lines (run->log, text, NULL);
        free (text);
    }
}

static void
s_set_result (run_t *run, int code, const char *msg)
{
    run->result_set = 1;
    run->result_code = code;
    free (run->result_msg);
    run->result_msg = xxl_ledger_msg_copy (msg);
}

static void
s_host_set_result (xxl_run_t *base, int code, const char *msg)
{
    s_set_result ((run_t *) base, code, msg);
}

static int
s_host_cancelled (xxl_run_t *base)
{
    run_t *run = (run_t *) base;
    if (__atomic_load_n (&run->cancel, __ATOMIC_ACQUIRE))
        return 1;
    if (run->deadline && s_mono_ms () >= run->deadline) {
        int none = CANCEL_NONE;
        __atomic_compare_exchange_n (&run->cancel, &none, CANCEL_TIMEOUT, 0,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
        return 1;
    }
    return 0;
}

static const xxl_handler_host_t s_host = {
    XXL_HANDLER_ABI_VERSION, sizeof (xxl_handler_host_t),
    s_host_param, s_host_job_id, s_host_log_id, s_host_shard_index, s_host_shard_total,
    s_host_vlog, s_host_set_result, s_host_cancelled
};

//  ---------------------------------------------------------------------
//  Execution

static void
s_run_in_process (run_t *run)
{
    run->base.host = &s_host;
    run->base.plugin_state = run->ref.plugin_state;
    int rc = run->ref.fn (&run->base);
    if (run->result_set) {
        if (rc != 0 && run->result_code == XXL_CODE_SUCCESS)
            run->result_code = XXL_CODE_FAIL;
    }
    else
        s_set_result (run, rc == 0? XXL_CODE_SUCCESS: XXL_CODE_FAIL, NULL);
    //  A handler that overran its timeout without looking at cancelled()
    if (run->deadline && s_mono_ms () >= run->deadline) {
        int none = CANCEL_NONE;
        __atomic_compare_exchange_n (&run->cancel, &none, CANCEL_TIMEOUT, 0,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    }
}

//  Worker thread: the wait's eventfd, published under the worker's lock
//  for a kill to write (s_worker_wake)
static void
s_publish_wake (void *arg, int wake_fd)
{
    worker_t *worker = (worker_t *) arg;
    pthread_mutex_lock (&worker->lock);
    worker->wake_fd = wake_fd;
    pthread_mutex_unlock (&worker->lock);
}

//  Waits for the child to end, handling kill and timeout.  Returns the wait
//  status.  Runs on the worker thread, without the mutex.
static int
s_wait_child (run_t *run, pid_t pid)
{
    xxl_spawner_watch_t watch = {
        &run->cancel, CANCEL_TIMEOUT, run->deadline, XXL_EXECUTOR_GRACE_MS,
        s_publish_wake, run->worker
    };
    return xxl_spawner_wait (pid, &watch);
}

static void
s_run_isolated (run_t *run)
{
    xxl_executor_t *self = run->executor;
    int pipe_fds [2];
    if (pipe2 (pipe_fds, O_CLOEXEC | O_NONBLOCK)) {
        char msg [256];
        snprintf (msg, sizeof msg, "cannot create result pipe: %s", strerror (errno));
        s_set_result (run, XXL_CODE_FAIL, msg);
        return;
    }
    char job_id [24], log_id [24], shard_index [16], shard_total [16];
    snprintf (job_id, sizeof job_id, "%lld", (long long) run->job_id);
    snprintf (log_id, sizeof log_id, "%lld", (long long) run->log_id);
    snprintf (shard_index, sizeof shard_index, "%d", run->shard_index);
    snprintf (shard_total, sizeof shard_total, "%d", run->shard_total);
    char *argv [] = {
        self->runner, run->handler_name, job_id, log_id, shard_index, shard_total,
        run->params, (char *) run->ref.plugin_path, NULL
    };
    int extra [2] = { pipe_fds [1], run->ref.plugin_fd };
    pid_t pid = xxl_spawner_start (self->spawner, argv, strchr (self->runner, '/') == NULL,
                                   run->log_id, xxl_logsink_fd (run->log), extra, 2);
    int spawn_errno = errno;
    close (pipe_fds [1]);
    if (pid < 0) {
        char msg [512];
        if (spawn_errno == ENOENT)
            snprintf (msg, sizeof msg, "runner '%s' not found", self->runner);
        else
            snprintf (msg, sizeof msg, "cannot start runner '%s': %s",
                      self->runner, strerror (spawn_errno));
        s_set_result (run, XXL_CODE_FAIL, msg);
        close (pipe_fds [0]);
        return;
    }
    int status = s_wait_child (run, pid);
    char buf [16 * 1024 + 1];
    ssize_t got = 0, n;
    while (got < (ssize_t) sizeof buf - 1
       && (n = read (pipe_fds [0], buf + got, sizeof buf - 1 - (size_t) got)) > 0)
        got += n;
    buf [got] = 0;
    close (pipe_fds [0]);
    char *space = got > 0? strchr (buf, ' '): NULL;
    if (space && status != XXL_SPAWNER_STATUS_LOST && WIFEXITED (status)) {
        *space = 0;
        int code = atoi (buf);
        s_set_result (run, code > 0? code: XXL_CODE_FAIL, space [1]? space + 1: NULL);
    }
    else {
        char how [64], msg [256];
        xxl_spawner_describe (status, how, sizeof how);
        if (status != XXL_SPAWNER_STATUS_LOST && WIFSIGNALED (status))
            snprintf (msg, sizeof msg, "handler crashed: %s", how);
        else
            snprintf (msg, sizeof msg, "handler process ended without a result: %s", how);
        s_set_result (run, XXL_CODE_FAIL, msg);
    }
}

static void
s_run_glue (run_t *run)
{
    xxl_executor_t *self = run->executor;
    char path [4096], msg [3200];
    if (xxl_glue_write (self->glue, run->glue, run->job_id, run->glue_updatetime,
                        run->glue_source, path, sizeof path, msg, sizeof msg)) {
        s_set_result (run, XXL_CODE_FAIL, msg);
        return;
    }
    char shard_index [16], shard_total [16];
    snprintf (shard_index, sizeof shard_index, "%d", run->shard_index);
    snprintf (shard_total, sizeof shard_total, "%d", run->shard_total);
    //  The interpreter (its "#!" line's words, or the type's), then the
    //  script and its arguments
    char line [512];
    char *argv [XXL_GLUE_WORDS + 5];
    int words = xxl_glue_command (self->glue, run->glue, run->glue_source,
                                  line, sizeof line, argv, msg, sizeof msg);
    if (words < 0) {
        xxl_logsink_lines (run->log, msg, NULL);
        s_set_result (run, XXL_CODE_FAIL, msg);
        return;
    }
    argv [words++] = path;
    argv [words++] = run->params;
    argv [words++] = shard_index;
    argv [words++] = shard_total;
    argv [words] = NULL;
    char *interpreter = argv [0];
    pid_t pid = xxl_spawner_start (self->spawner, argv, strchr (interpreter, '/') == NULL,
                                   run->log_id, xxl_logsink_fd (run->log), NULL, 0);
    if (pid < 0) {
        if (errno == ENOENT)
            snprintf (msg, sizeof msg, "interpreter '%.200s' not found", interpreter);
        else
            snprintf (msg, sizeof msg, "cannot start interpreter '%.200s': %s",
                      interpreter, strerror (errno));
        xxl_logsink_lines (run->log, msg, NULL);
        s_set_result (run, XXL_CODE_FAIL, msg);
        return;
    }
    int status = s_wait_child (run, pid);
    if (status != XXL_SPAWNER_STATUS_LOST && WIFEXITED (status) && WEXITSTATUS (status) == 0)
        s_set_result (run, XXL_CODE_SUCCESS, NULL);
    else {
        xxl_spawner_describe (status, msg, sizeof msg);
        s_set_result (run, XXL_CODE_FAIL, msg);
    }
}

//  Executes one run on the worker thread, without the mutex; leaves the
//  outcome in run->result_*
static void
s_execute (run_t *run)
{
    xxl_executor_t *self = run->executor;
    int in_process = run->glue == XXL_GLUE_BEAN
                  && (self->in_process || (run->ref.flags & XXL_HANDLER_IN_PROCESS));
    //  An in-process run's start lines are held back: its file is made by
    //  its next write (see xxl_logsink.h)
    xxl_logsink_start (run->log, in_process,
                       run->glue == XXL_GLUE_BEAN? run->handler_name: "script",
                       xxl_glue_name (run->glue),
                       run->glue == XXL_GLUE_BEAN? (in_process? "in process": "isolated"): NULL,
                       run->params, run->shard_index, run->shard_total);
    if (run->timeout_s > 0)
        run->deadline = s_mono_ms () + (int64_t) run->timeout_s * 1000;
    if (__atomic_load_n (&run->cancel, __ATOMIC_ACQUIRE))
        ;                           //  killed before it started
    else
    if (run->glue != XXL_GLUE_BEAN)
        s_run_glue (run);
    else
    if (in_process)
        s_run_in_process (run);
    else
        s_run_isolated (run);

    //  Kill and timeout override what the handler said
    int cancel = __atomic_load_n (&run->cancel, __ATOMIC_ACQUIRE);
    if (cancel == CANCEL_KILL) {
        pthread_mutex_lock (&run->worker->lock);
        char *msg = NULL;
        if (asprintf (&msg, "%s [job running, killed]",
                      run->kill_reason? run->kill_reason: "killed") < 0)
            msg = NULL;
        pthread_mutex_unlock (&run->worker->lock);
        s_set_result (run, XXL_CODE_FAIL, msg? msg: "killed");
        free (msg);
    }
    else
    if (cancel == CANCEL_TIMEOUT) {
        xxl_logsink_newline (run->log);
        xxl_logsink_lines (run->log, "----------- xxl-job job execute timeout", NULL);
        s_set_result (run, XXL_CODE_TIMEOUT, "job execute timeout ");
    }
    if (!run->result_set || run->result_code <= 0)
        s_set_result (run, XXL_CODE_FAIL, "job handle result lost.");
    if (!in_process)
        xxl_logsink_newline (run->log);     //  script or runner output may lack it
    //  The end lines; a log still held goes to the day's pack or its file
    xxl_logsink_end (run->log, run->result_code, run->result_msg);
    xxl_handlers_release (&run->ref);
}

//  Monotonic ms to a tick or so (CLOCK_MONOTONIC_COARSE: read once per
//  run, it costs less than the exact clock and a slice needs no more)
static int64_t
s_coarse_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC_COARSE, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

//  1 while a thread serving a queue may start its next run: its slice
//  (SERVE_SLICE_MS from *slice_end's start) is not over, or no other queue
//  waits for a thread (then a new slice begins).  Caller holds the
//  queue's lock.
static int
s_slice_left (xxl_executor_t *self, int64_t *slice_end)
{
    int64_t now = s_coarse_ms ();
    if (now < *slice_end)
        return 1;
    pthread_mutex_lock (&self->pool_lock);
    int waiting = self->ready_count > 0;
    pthread_mutex_unlock (&self->pool_lock);
    if (!waiting)
        *slice_end = now + SERVE_SLICE_MS;
    return !waiting;
}

//  Pool thread: runs the queue of a job it took from the ready list, in
//  order, until the queue is empty, its head is staged, the job is
//  stopped, or its slice is over while other queues wait (it then goes to
//  the ready list's tail).  The job's lock is held except while a run
//  executes.
static void
s_serve (xxl_executor_t *self, worker_t *worker)
{
    int64_t slice_end = s_coarse_ms () + SERVE_SLICE_MS;
    pthread_mutex_lock (&worker->lock);
    assert (worker->state == JOB_READY);
    worker->state = JOB_SERVING;
    while (!worker->stop && worker->head && s_startable (self, worker->head)
       &&  s_slice_left (self, &slice_end)) {
        run_t *run = worker->head;
        worker->head = run->next;
        if (!worker->head)
            worker->tail = NULL;
        run->next = NULL;
        worker->running = run;
        __atomic_add_fetch (&self->active, 1, __ATOMIC_RELAXED);
        pthread_mutex_unlock (&worker->lock);

        if (!__atomic_load_n (&run->cancel, __ATOMIC_ACQUIRE))
            run->start_time = zclock_time ();
        s_execute (run);

        pthread_mutex_lock (&worker->lock);
        worker->running = NULL;
        __atomic_sub_fetch (&self->active, 1, __ATOMIC_RELAXED);
        s_push_result (self, run, run->result_code, run->result_msg);
        __atomic_add_fetch (&self->completed, 1, __ATOMIC_RELAXED);
    }
    if (worker->stop) {
        //  Out of the map and of both lists: no other thread reaches it
        //  once its stopper released the lock we now hold
        pthread_mutex_unlock (&worker->lock);
        s_worker_free (self, worker);
        return;
    }
    //  Idle, or its head waits for its hold's release, which readies it
    //  (it stores committed_seq before it takes this lock, so either we
    //  saw the new value above or it sees JOB_IDLE)
    worker->state = JOB_IDLE;
    if (!worker->head) {
        pthread_mutex_lock (&self->pool_lock);
        s_idle_append (self, worker);
        pthread_mutex_unlock (&self->pool_lock);
    }
    else
    if (s_startable (self, worker->head))
        s_worker_ready (self, worker);      //  its slice is over: others' turn
    pthread_mutex_unlock (&worker->lock);
}

static void *
s_thread_main (void *arg)
{
    xxl_executor_t *self = (xxl_executor_t *) arg;
    pthread_mutex_lock (&self->pool_lock);
    assert (self->starting > 0);
    self->starting--;
    while (true) {
        worker_t *worker = self->ready_head;
        if (!worker) {
            if (self->pool_stop)
                break;
            //  Idle: an extra thread ends after thread_idle_ms
            int64_t until_ms = s_mono_ms () + self->thread_idle_ms;
            struct timespec until = { (time_t) (until_ms / 1000),
                                      (long) (until_ms % 1000) * 1000000 };
            self->idle_threads++;
            int rc = pthread_cond_timedwait (&self->pool_wake, &self->pool_lock, &until);
            self->idle_threads--;
            if (rc == ETIMEDOUT && !self->ready_head && self->threads > self->threads_min)
                break;
            continue;
        }
        self->ready_head = worker->ready_next;
        if (!self->ready_head)
            self->ready_tail = NULL;
        worker->ready_next = NULL;
        self->ready_count--;
        pthread_mutex_unlock (&self->pool_lock);
        s_serve (self, worker);
        pthread_mutex_lock (&self->pool_lock);
    }
    if (--self->threads == 0)
        pthread_cond_broadcast (&self->pool_gone);
    pthread_mutex_unlock (&self->pool_lock);
    return NULL;
}

//  Starts up to count pool threads; caller holds the pool lock, which is
//  released while they are made.  Returns how many started.  A failure
//  (EAGAIN: RLIMIT_NPROC, threads-max, memory) is remembered for the
//  back-pressure check (s_pool_full).
static size_t
s_spawn (xxl_executor_t *self, size_t count)
{
    if (self->threads + count > self->threads_max)
        count = self->threads_max > self->threads? self->threads_max - self->threads: 0;
    if (count == 0)
        return 0;
    self->threads += count;             //  reserved: they count as alive
    self->starting += count;
    pthread_mutex_unlock (&self->pool_lock);
    size_t made = 0;
    int rc = 0;
    for (; made < count; made++) {
        pthread_t thread;
        rc = pthread_create (&thread, &self->attr, s_thread_main, self);
        if (rc)
            break;
    }
    pthread_mutex_lock (&self->pool_lock);
    if (made < count) {
        self->threads -= count - made;
        self->starting -= count - made;
        if (self->spawn_failed == 0 || s_mono_ms () - self->spawn_failed > 1000)
            zsys_warning ("executor: cannot start a pool thread (%zu running): %s; runs wait"
                          " for one", self->threads, strerror (rc));
        self->spawn_failed = s_mono_ms ();
        if (self->threads == 0)
            pthread_cond_broadcast (&self->pool_gone);
    }
    if (self->threads > self->threads_peak)
        self->threads_peak = self->threads;
    return made;
}

//  Reaps the jobs idle idle_reap_s with an empty queue, oldest first.  A
//  listed job that got runs in a hold (staged: not readied, so still
//  listed) is not idle: it only leaves the list, and its release readies it.
static void
s_reap (xxl_executor_t *self)
{
    pthread_mutex_lock (&self->mutex);
    int64_t now = s_mono_ms ();
    while (!self->stopped) {
        pthread_mutex_lock (&self->pool_lock);
        worker_t *worker = self->idle_head;
        if (!worker || worker->idle_since + (int64_t) self->idle_reap_s * 1000 > now) {
            pthread_mutex_unlock (&self->pool_lock);
            break;
        }
        s_idle_unlink (self, worker);
        pthread_mutex_unlock (&self->pool_lock);
        //  IDLE: only a run queued or released under the executor mutex,
        //  which we hold, could give it runs or a thread
        pthread_mutex_lock (&worker->lock);
        assert (worker->state == JOB_IDLE);
        int staged = worker->head != NULL;
        pthread_mutex_unlock (&worker->lock);
        if (staged)
            continue;
        zsys_debug ("executor: job %lld worker idle, reaped", (long long) worker->job_id);
        s_worker_stop (self, worker, "executor idle times over limit.");
    }
    pthread_mutex_unlock (&self->mutex);
}

//  Manager thread: adds threads while jobs wait for one and the pool is
//  stalled (no run ended for a tick: every thread blocked in a run), so
//  that blocking handlers get a thread each; doubles the pool per tick at
//  most (up to threads_max).  Runs that end keep the pool at its size
//  (CPU-bound runs do not grow it).  Reaps idle jobs.
//  A tick: 1 ms grew the pool to 32 threads for CPU-bound no-op runs on
//  2 busy cores (both threads preempted for a millisecond at times), and
//  ran them 30 % slower than a thread per job; 5 ms kept it at 2 threads
//  (3.5x the runs/s of a thread per job), and 10,000 sleeping runs still
//  get their threads within 13 ticks
#define MANAGER_TICK_MS     5

//  1 when the machine has a CPU to spare now: fewer runnable tasks
//  (/proc/loadavg's running count, less this thread) than CPUs.  A pool
//  with no run ended for a tick is either blocked (sleeping runs: more
//  threads help) or preempted on a saturated machine (more threads only
//  add switches: the e2e bench grew the pool to ~500 threads so, and the
//  agent's CPU per run from 8.4-9.0 to 14.9-15.7 us); unknown: 1
static int
s_cpu_spare (size_t cpus)
{
    FILE *file = fopen ("/proc/loadavg", "r");
    if (!file)
        return 1;
    long running = 0, total = 0;
    int got = fscanf (file, "%*s %*s %*s %ld/%ld", &running, &total);
    fclose (file);
    return got != 2 || running - 1 < (long) cpus;
}

static void *
s_manager_main (void *arg)
{
    xxl_executor_t *self = (xxl_executor_t *) arg;
    int reap_every = self->idle_reap_s * 1000 / 4;
    reap_every = reap_every < 10? 10: reap_every > 1000? 1000: reap_every;
    int64_t next_reap = s_mono_ms () + reap_every;
    uint64_t seen = __atomic_load_n (&self->completed, __ATOMIC_RELAXED);
    int64_t progress_at = s_mono_ms ();     //  a run ended, or a backlog began
    int had_backlog = 0;
    pthread_mutex_lock (&self->pool_lock);
    while (!self->pool_stop) {
        int64_t now = s_mono_ms ();
        int backlog = self->ready_count > 0;
        uint64_t completed = __atomic_load_n (&self->completed, __ATOMIC_RELAXED);
        if (completed != seen || (backlog && !had_backlog)) {
            seen = completed;
            progress_at = now;
        }
        size_t busy = self->threads - self->idle_threads - self->starting;
        if (backlog && self->threads < self->threads_min)
            s_spawn (self, self->threads_min - self->threads);
        else
        if (backlog && self->idle_threads > 0 && busy < self->cpus)
            pthread_cond_signal (&self->pool_wake);         //  (a wake that raced)
        else
        if (backlog && now - progress_at >= MANAGER_TICK_MS
        &&  (s_cpu_spare (self->cpus) || now - progress_at >= 4 * MANAGER_TICK_MS)) {
            //  Stalled for a tick with a CPU to spare, or for 4 ticks on a
            //  saturated machine (other processes' load must not starve
            //  sleeping runs; a thread preempted that long is rare): the
            //  threads are blocked in their runs.  Idle threads take what waits first;
            //  for the rest the pool doubles (at most what waits)
            size_t waiting = self->ready_count;
            size_t taking = self->idle_threads + self->starting;
            for (size_t i = 0; i < self->idle_threads && i < waiting; i++)
                pthread_cond_signal (&self->pool_wake);
            waiting = waiting > taking? waiting - taking: 0;
            size_t add = self->threads > self->threads_min? self->threads: self->threads_min;
            if (waiting)
                s_spawn (self, add < waiting? add: waiting);
            progress_at = s_mono_ms ();
        }
        had_backlog = backlog;
        if (now >= next_reap) {
            pthread_mutex_unlock (&self->pool_lock);
            s_reap (self);
            pthread_mutex_lock (&self->pool_lock);
            next_reap = now + reap_every;
        }
        //  A tick while jobs wait, else until the next reap or a wake (a
        //  backlog begins: s_worker_ready)
        backlog = self->ready_count > 0;
        int64_t until_ms = backlog? s_mono_ms () + MANAGER_TICK_MS: next_reap;
        struct timespec until = { (time_t) (until_ms / 1000),
                                  (long) (until_ms % 1000) * 1000000 };
        if (!self->pool_stop)
            pthread_cond_timedwait (&self->manager_wake, &self->pool_lock, &until);
    }
    self->manager_alive = 0;
    pthread_cond_broadcast (&self->pool_gone);
    pthread_mutex_unlock (&self->pool_lock);
    return NULL;
}

//  1 when a run that needs a thread cannot have one soon: the pool is at
//  threads_max or could not grow in the last second, and waiting_max jobs
//  already wait beyond the idle threads (staged: the jobs listed in the
//  current hold count as waiting).  Caller holds the executor mutex.
static int
s_pool_full (xxl_executor_t *self, char *msg, size_t msglen)
{
    pthread_mutex_lock (&self->pool_lock);
    int64_t now = s_mono_ms ();
    int capped = self->threads >= self->threads_max
              || (self->spawn_failed && now - self->spawn_failed < 1000);
    size_t waiting = self->ready_count + self->held_count;
    size_t idle = self->idle_threads + self->starting;
    waiting = waiting > idle? waiting - idle: 0;
    int full = capped && waiting >= self->waiting_max;
    if (full)
        snprintf (msg, msglen, "busy: all %zu threads of the agent run, %s, and %zu run(s)"
                  " wait for one (agent/waiting_max %zu)", self->threads,
                  self->threads >= self->threads_max? "its agent/threads_max":
                  "no more can be started", waiting, self->waiting_max);
    pthread_mutex_unlock (&self->pool_lock);
    return full;
}

//  Creates a job's queue, registered in the map; caller holds the mutex.
//  NULL on failure.
static worker_t *
s_worker_new (xxl_executor_t *self, int64_t job_id, const char *handler_name,
              int glue, int64_t glue_updatetime)
{
    worker_t *worker = (worker_t *) calloc (1, sizeof (worker_t));
    if (!worker)
        return NULL;
    worker->executor = self;
    worker->job_id = job_id;
    worker->glue = glue;
    worker->glue_updatetime = glue_updatetime;
    worker->handler_name = strdup (handler_name? handler_name: "");
    worker->wake_fd = -1;
    worker->state = JOB_IDLE;
    pthread_mutex_init (&worker->lock, NULL);
    if (!worker->handler_name
    ||  xxl_imap_put (self->workers, job_id, worker)) {
        zsys_error ("executor: cannot create the queue of job %lld: %s",
                    (long long) job_id, strerror (errno));
        pthread_mutex_destroy (&worker->lock);
        free (worker->handler_name);
        free (worker);
        return NULL;
    }
    worker->in_map = 1;
    pthread_mutex_lock (&self->pool_lock);
    self->live_workers++;
    pthread_mutex_unlock (&self->pool_lock);
    return worker;
}

//  A futex hash of the process's own (see the head of this file), once
//  per process.  EINVAL before Linux 6.16, whose one shared hash is sized
//  for the whole machine: nothing to do there.
static void
s_futex_hash_size (void)
{
    if (prctl (PR_FUTEX_HASH, PR_FUTEX_HASH_SET_SLOTS, XXL_FUTEX_SLOTS, 0) < 0
    &&  errno != EINVAL)
        zsys_warning ("executor: cannot size the futex hash: %s", strerror (errno));
}

//  Remembers that job_id's idle worker is to be woken at the release of
//  xxl_executor_hold_wakes; caller holds the mutex.  -1 when out of memory
//  (the caller wakes it now).
static int
s_wake_later (xxl_executor_t *self, int64_t job_id)
{
    if (self->held_count == self->held_max) {
        size_t max = self->held_max? self->held_max * 2: 256;
        int64_t *ids = (int64_t *) realloc (self->held_wakes, max * sizeof (int64_t));
        if (!ids)
            return -1;
        self->held_wakes = ids;
        self->held_max = max;
    }
    self->held_wakes [self->held_count++] = job_id;
    return 0;
}

//  ---------------------------------------------------------------------
//  Public API

static char *
s_resolve_runner (const char *configured)
{
    if (configured && *configured)
        return strdup (configured);
    const char *env = getenv ("XXL_RUNNER");
    if (env && *env)
        return strdup (env);
#ifdef XXL_RUNNER_PATH
    return strdup (XXL_RUNNER_PATH);
#else
    return strdup ("xxl-runner");
#endif
}

//  threads_max when not configured: what the process may have, less a
//  margin for the agent's own threads and its children: half of
//  RLIMIT_NPROC (it counts the user's every process and thread) and of
//  kernel.threads-max, half of vm.max_map_count (a stack and its guard are
//  two mappings), and 128 KiB of available memory per thread (the stack
//  pages a run touches, the kernel's task); at most 65,536
static size_t
s_threads_auto (void)
{
    size_t limit = 65536;
    struct rlimit nproc;
    if (getrlimit (RLIMIT_NPROC, &nproc) == 0 && nproc.rlim_cur != RLIM_INFINITY
    &&  nproc.rlim_cur / 2 < limit)
        limit = (size_t) nproc.rlim_cur / 2;
    const char *files [] = { "/proc/sys/kernel/threads-max", "/proc/sys/vm/max_map_count" };
    for (size_t i = 0; i < 2; i++) {
        FILE *file = fopen (files [i], "r");
        unsigned long long value;
        if (file && fscanf (file, "%llu", &value) == 1 && value / 2 < limit)
            limit = (size_t) (value / 2);
        if (file)
            fclose (file);
    }
    long pages = sysconf (_SC_AVPHYS_PAGES), page = sysconf (_SC_PAGESIZE);
    if (pages > 0 && page > 0) {
        unsigned long long memory = (unsigned long long) pages * (unsigned long long) page;
        if (memory / (128 * 1024) < limit)
            limit = (size_t) (memory / (128 * 1024));
    }
    return limit > 16? limit - 16: 2;
}

xxl_executor_t *
xxl_executor_new (const xxl_executor_config_t *config, xxl_handlers_t *handlers)
{
    if (!config || !config->logdir || !*config->logdir) {
        zsys_error ("executor: no logdir configured");
        return NULL;
    }
    xxl_executor_t *self = (xxl_executor_t *) calloc (1, sizeof (xxl_executor_t));
    if (!self)
        return NULL;
    self->handlers = handlers;
    self->allow_glue = config->allow_glue;
    self->in_process = config->in_process;
    self->idle_reap_s = config->idle_reap_s > 0? config->idle_reap_s: 90;
    self->logdir = strdup (config->logdir);
    self->runner = s_resolve_runner (config->runner);
    self->journal = config->journal;
    if (!self->journal) {
        self->journal = xxl_journal_new (NULL, 0);
        self->own_journal = 1;
    }
    self->spawner = xxl_spawner_new (config->run_marker);
    if (self->logdir && config->log_pack)
        self->pack = xxl_runpack_new (self->logdir);
    int ok = self->logdir && self->runner && self->journal && self->spawner
          && (self->pack || !config->log_pack);
    if (ok) {
        self->glue = xxl_glue_new (self->logdir, config->interpreters);
        ok = self->glue != NULL;
    }
    //  Plain mutexes: with thousands of threads on few cores, spinning
    //  for a holder that is not running only burns the CPU it needs
    pthread_mutex_init (&self->mutex, NULL);
    pthread_condattr_init (&self->monotonic);
    pthread_condattr_setclock (&self->monotonic, CLOCK_MONOTONIC);
    static pthread_once_t futex_once = PTHREAD_ONCE_INIT;
    pthread_once (&futex_once, s_futex_hash_size);
    pthread_attr_init (&self->attr);
    pthread_attr_setstacksize (&self->attr, WORKER_STACK);
    pthread_attr_setdetachstate (&self->attr, PTHREAD_CREATE_DETACHED);
    pthread_mutex_init (&self->pool_lock, NULL);
    pthread_cond_init (&self->pool_wake, &self->monotonic);
    pthread_cond_init (&self->pool_gone, &self->monotonic);
    pthread_cond_init (&self->manager_wake, &self->monotonic);
    long cpus = sysconf (_SC_NPROCESSORS_ONLN);
    self->cpus = cpus > 1? (size_t) cpus: 1;
    self->threads_min = cpus > 2? (size_t) cpus: 2;
    self->threads_max = config->threads_max > 0? (size_t) config->threads_max
                                               : s_threads_auto ();
    if (self->threads_max < self->threads_min)
        self->threads_min = self->threads_max;
    self->waiting_max = config->waiting_max > 0? (size_t) config->waiting_max
                      : config->waiting_max < 0? SIZE_MAX: XXL_EXECUTOR_WAITING_MAX;
    self->thread_idle_ms = self->idle_reap_s < 10? self->idle_reap_s * 1000: 10000;
    if (ok) {
        self->workers = xxl_imap_new ();
        self->ledger = self->workers? xxl_ledger_new (): NULL;
        ok = self->ledger != NULL;
    }
    if (ok) {
        pthread_t thread;
        pthread_mutex_lock (&self->pool_lock);
        ok = s_spawn (self, self->threads_min) == self->threads_min
          && pthread_create (&thread, &self->attr, s_manager_main, self) == 0;
        self->manager_alive = ok;
        self->spawn_failed = 0;
        pthread_mutex_unlock (&self->pool_lock);
    }
    if (!ok) {
        zsys_error ("executor: cannot initialize: %s", strerror (errno));
        xxl_executor_destroy (&self);
        return NULL;
    }
    mkdir (self->logdir, 0755);
    //  Many runs at once need many fds (log, pidfd, pipe, eventfd each)
    struct rlimit limit;
    if (getrlimit (RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max;
        setrlimit (RLIMIT_NOFILE, &limit);
    }
    return self;
}

void
xxl_executor_stop (xxl_executor_t *self)
{
    xxl_executor_stop_why (self, NULL);
}

void
xxl_executor_stop_why (xxl_executor_t *self, const char *reason)
{
    if (!self || !self->workers)
        return;
    pthread_mutex_lock (&self->mutex);
    self->stopped = 1;
    //  Each stop takes its queue out of the map
    size_t cursor = 0;
    worker_t *worker;
    while ((worker = (worker_t *) xxl_imap_drain (self->workers, &cursor)))
        s_worker_stop (self, worker, reason? reason: "executor stopped");
    pthread_mutex_unlock (&self->mutex);
    //  The pool ends once the runs have: threads once idle, the manager
    struct timespec until;
    clock_gettime (CLOCK_MONOTONIC, &until);
    until.tv_sec += STOP_WAIT_MS / 1000;
    pthread_mutex_lock (&self->pool_lock);
    self->pool_stop = 1;
    pthread_cond_broadcast (&self->pool_wake);
    pthread_cond_signal (&self->manager_wake);
    while (self->live_workers > 0 || self->threads > 0 || self->manager_alive)
        if (pthread_cond_timedwait (&self->pool_gone, &self->pool_lock, &until) == ETIMEDOUT)
            break;
    if (self->live_workers > 0)
        zsys_error ("executor: %zu run(s) still running after %d s (in-process handlers "
                    "ignoring cancelled()?); leaving them", self->live_workers,
                    STOP_WAIT_MS / 1000);
    pthread_mutex_unlock (&self->pool_lock);
}

void
xxl_executor_destroy (xxl_executor_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    xxl_executor_t *self = *self_p;
    *self_p = NULL;
    xxl_executor_stop (self);
    pthread_mutex_lock (&self->pool_lock);
    int live = self->live_workers > 0 || self->threads > 0 || self->manager_alive;
    pthread_mutex_unlock (&self->pool_lock);
    if (live)
        return;                     //  threads still use it: leak rather than crash
    xxl_ledger_destroy (&self->ledger);
    xxl_imap_destroy (&self->workers);
    if (self->own_journal)
        xxl_journal_destroy (&self->journal);
    xxl_spawner_destroy (&self->spawner);
    pthread_attr_destroy (&self->attr);
    pthread_cond_destroy (&self->pool_wake);
    pthread_cond_destroy (&self->pool_gone);
    pthread_cond_destroy (&self->manager_wake);
    pthread_mutex_destroy (&self->pool_lock);
    pthread_condattr_destroy (&self->monotonic);
    free (self->held_wakes);
    pthread_mutex_destroy (&self->mutex);
    xxl_glue_destroy (&self->glue);
    free (self->runner);
    xxl_runpack_destroy (&self->pack);
    free (self->logdir);
    free (self);
}

int
xxl_executor_run (xxl_executor_t *self, const xxl_trigger_t *trigger, char *msg, size_t msglen)
{
    char dummy [8];
    if (!msg || !msglen) {
        msg = dummy;
        msglen = sizeof dummy;
    }
    msg [0] = 0;
    if (!self || !trigger) {
        snprintf (msg, msglen, "invalid trigger");
        return -1;
    }
    int glue = xxl_glue_type (trigger->glue_type);
    if (glue < 0) {
        snprintf (msg, msglen, "glueType[%.100s] is not valid.", trigger->glue_type);
        return -1;
    }
    if (glue != XXL_GLUE_BEAN && !self->allow_glue) {
        snprintf (msg, msglen, "glue type %s not allowed on this agent",
                  xxl_glue_name (glue));
        return -1;
    }
    const char *handler_name = glue == XXL_GLUE_BEAN
                             ? (trigger->handler? trigger->handler: "")
                             : "";
    const char *strategy = trigger->block_strategy? trigger->block_strategy: "";

    run_t *run = (run_t *) calloc (1, sizeof (run_t));
    if (!run) {
        snprintf (msg, msglen, "out of memory");
        return -1;
    }
    run->executor = self;
    run->job_id = trigger->job_id;
    run->log_id = trigger->log_id;
    run->log_date_time = trigger->log_date_time;
    run->glue_updatetime = trigger->glue_updatetime;
    run->glue = glue;
    run->timeout_s = trigger->timeout_s > 0? trigger->timeout_s: 0;
    run->shard_index = trigger->shard_index;
    run->shard_total = trigger->shard_total;
    run->handler_name = strdup (handler_name);
    run->params = strdup (trigger->params? trigger->params: "");
    if (glue != XXL_GLUE_BEAN)
        run->glue_source = strdup (trigger->glue_source? trigger->glue_source: "");
    run->log = xxl_logsink_new (self->logdir, self->pack, run->log_id, run->log_date_time);
    if (!run->handler_name || !run->params || (glue != XXL_GLUE_BEAN && !run->glue_source)
    ||  !run->log) {
        s_run_free (run);
        snprintf (msg, msglen, "out of memory");
        return -1;
    }
    if (glue == XXL_GLUE_BEAN
    &&  xxl_handlers_acquire (self->handlers, handler_name, &run->ref)) {
        snprintf (msg, msglen, "job handler [%.200s] not found.", handler_name);
        s_run_free (run);
        return -1;
    }

    pthread_mutex_lock (&self->mutex);
    int rc = -1;
    if (self->stopped) {
        snprintf (msg, msglen, "executor is stopping");
        goto done;
    }
    if (run->log_id > 0 && xxl_journal_seen (self->journal, run->log_id)) {
        snprintf (msg, msglen, "logId %lld already accepted", (long long) run->log_id);
        goto done;
    }
    //  A changed handler or glue version replaces the job's queue (the
    //  new one is idle: the block strategy has nothing to act on); on a
    //  busy queue DISCARD_LATER refuses the run, COVER_EARLY replaces it.
    //  Replaced only once the run is sure to be taken: a refused run
    //  leaves the job as it was.
    worker_t *worker = (worker_t *) xxl_imap_get (self->workers, run->job_id);
    const char *replace = NULL;
    if (worker
    && (worker->glue != glue || worker->glue_updatetime != run->glue_updatetime
        || strcmp (worker->handler_name, handler_name)))
        replace = "change jobhandler or glue type, and terminate the old job thread.";
    int busy = 0;
    if (worker && !replace) {
        pthread_mutex_lock (&worker->lock);
        busy = worker->running || worker->head;
        pthread_mutex_unlock (&worker->lock);
    }
    if (busy) {
        if (streq (strategy, "DISCARD_LATER")) {
            snprintf (msg, msglen, "block strategy effect: Discard Later");
            goto done;
        }
        if (streq (strategy, "COVER_EARLY"))
            replace = "block strategy effect: Cover Early";
    }
    //  A job with nothing queued or running (or a new queue) needs a
    //  thread for this run: refused when none can be had soon
    //  (back-pressure, s_pool_full)
    int idle = !worker || replace;
    if (!idle) {
        pthread_mutex_lock (&worker->lock);
        idle = worker->state == JOB_IDLE && !worker->head;
        pthread_mutex_unlock (&worker->lock);
    }
    if (idle && s_pool_full (self, msg, msglen))
        goto done;
    if (replace) {
        s_worker_stop (self, worker, replace);
        worker = NULL;
    }
    if (!worker) {
        worker = s_worker_new (self, run->job_id, handler_name, glue, run->glue_updatetime);
        if (!worker) {
            snprintf (msg, msglen, "busy: cannot make the job's queue: out of memory");
            goto done;
        }
    }
    if (run->log_id > 0) {
        //  Journaled before the run can start: now, or staged until the
        //  hold's release writes the whole hold's ids at once
        xxl_journal_accept (self->journal, run->log_id, run->log_date_time);
        if (self->hold_wakes)
            run->seq = self->stage_seq;
        else
            xxl_journal_flush (self->journal);
        xxl_ledger_add (self->ledger, run->log_id, run);
    }
    run->worker = worker;
    __atomic_add_fetch (&self->pending, 1, __ATOMIC_RELAXED);
    pthread_mutex_lock (&worker->lock);
    if (worker->tail)
        worker->tail->next = run;
    else
        worker->head = run;
    worker->tail = run;
    //  An idle job whose head may start goes to the ready list now; a
    //  READY or SERVING one finds the run in its queue.  In a hold, every
    //  job that got a run is listed (once) for the release, which readies
    //  it if it is idle then.
    if (worker->state == JOB_IDLE && s_startable (self, worker->head))
        s_worker_ready (self, worker);
    int list = self->hold_wakes && worker->listed_seq != self->stage_seq;
    if (list)
        worker->listed_seq = self->stage_seq;
    pthread_mutex_unlock (&worker->lock);
    if (list && s_wake_later (self, trigger->job_id)) {
        //  Out of memory for the list: release what is staged now
        xxl_journal_flush (self->journal);
        __atomic_store_n (&self->committed_seq, self->stage_seq, __ATOMIC_RELEASE);
        pthread_mutex_lock (&worker->lock);
        if (worker->state == JOB_IDLE && worker->head && s_startable (self, worker->head))
            s_worker_ready (self, worker);
        pthread_mutex_unlock (&worker->lock);
    }
    run = NULL;
    rc = 0;
done:
    pthread_mutex_unlock (&self->mutex);
    if (run)
        s_run_free (run);
    return rc;
}

void
xxl_executor_hold_wakes (xxl_executor_t *self, int hold)
{
    assert (self);
    pthread_mutex_lock (&self->mutex);
    if (!hold && self->hold_wakes) {
        //  The hold's logIds on disk, then its runs may start
        xxl_journal_flush (self->journal);
        __atomic_store_n (&self->committed_seq, self->stage_seq, __ATOMIC_RELEASE);
        //  The queue now in the map for each job (none is freed while we
        //  hold the mutex) goes to the ready list if it is IDLE: a
        //  serving thread that found its head staged checked
        //  committed_seq under its lock, so it either saw the new value
        //  and runs on, or left the queue IDLE for us
        for (size_t i = 0; i < self->held_count; i++) {
            worker_t *worker = (worker_t *) xxl_imap_get (self->workers, self->held_wakes [i]);
            if (!worker)
                continue;
            pthread_mutex_lock (&worker->lock);
            if (worker->state == JOB_IDLE && worker->head && s_startable (self, worker->head))
                s_worker_ready (self, worker);
            pthread_mutex_unlock (&worker->lock);
        }
        self->held_count = 0;
    }
    if (hold && !self->hold_wakes)
        self->stage_seq++;
    self->hold_wakes = hold;
    pthread_mutex_unlock (&self->mutex);
}

int
xxl_executor_kill (xxl_executor_t *self, int64_t job_id, const char *reason)
{
    if (!self)
        return -1;
    pthread_mutex_lock (&self->mutex);
    worker_t *worker = (worker_t *) xxl_imap_get (self->workers, job_id);
    int rc = -1;
    if (worker) {
        pthread_mutex_lock (&worker->lock);
        int busy = worker->running || worker->head;
        pthread_mutex_unlock (&worker->lock);
        if (busy) {
            s_worker_stop (self, worker, reason? reason: "scheduling center kill job.");
            rc = 0;
        }
    }
    pthread_mutex_unlock (&self->mutex);
    return rc;
}

size_t
xxl_executor_kill_all (xxl_executor_t *self, const char *reason)
{
    if (!self)
        return 0;
    assert (reason);
    size_t killed = 0, cursor = 0;
    pthread_mutex_lock (&self->mutex);
    worker_t *worker;
    //  (s_worker_stop takes each out of the map; idle ones are freed)
    while ((worker = (worker_t *) xxl_imap_drain (self->workers, &cursor))) {
        pthread_mutex_lock (&worker->lock);
        int busy = worker->running || worker->head;
        pthread_mutex_unlock (&worker->lock);
        s_worker_stop (self, worker, reason);
        killed += busy != 0;
    }
    pthread_mutex_unlock (&self->mutex);
    return killed;
}

int
xxl_executor_busy (xxl_executor_t *self, int64_t job_id)
{
    if (!self)
        return 0;
    pthread_mutex_lock (&self->mutex);
    worker_t *worker = (worker_t *) xxl_imap_get (self->workers, job_id);
    int busy = 0;
    if (worker) {
        pthread_mutex_lock (&worker->lock);
        busy = worker->running || worker->head;
        pthread_mutex_unlock (&worker->lock);
    }
    pthread_mutex_unlock (&self->mutex);
    return busy;
}

int
xxl_executor_running (xxl_executor_t *self, int64_t log_id)
{
    if (!self)
        return 0;
    return xxl_ledger_has (self->ledger, log_id);
}

//  Under the ledger's lock: claims the held log of a run in flight
static int
s_claim_log (void *item, void *arg)
{
    run_t *run = (run_t *) item;
    *(run_t **) arg = run;
    return xxl_logsink_claim (run->log);
}

int
xxl_executor_log_sync (xxl_executor_t *self, int64_t log_id)
{
    if (!self)
        return 0;
    //  Claimed, the run cannot end (and be freed) before the file is made:
    //  its worker waits for the making before its last line
    run_t *run = NULL;
    int claimed = xxl_ledger_visit (self->ledger, log_id, s_claim_log, &run);
    if (claimed == 1)
        xxl_logsink_make (run->log);
    if (self->pack)
        xxl_runpack_flush (self->pack);
    return claimed >= 0;
}

int
xxl_executor_fd (xxl_executor_t *self)
{
    return self && self->ledger? xxl_ledger_fd (self->ledger): -1;
}

int
xxl_executor_take (xxl_executor_t *self, xxl_result_t *result)
{
    return xxl_executor_take_many (self, result, 1) == 1? 0: -1;
}

size_t
xxl_executor_take_many (xxl_executor_t *self, xxl_result_t *results, size_t max)
{
    if (!self || !results || !max)
        return 0;
    size_t count = xxl_ledger_take (self->ledger, results, max);
    //  A run packs its log before it hands in its result: written after the
    //  take, every result taken has its log readable
    if (count && self->pack)
        xxl_runpack_flush (self->pack);
    return count;
}

size_t
xxl_executor_active (xxl_executor_t *self)
{
    if (!self)
        return 0;
    return __atomic_load_n (&self->active, __ATOMIC_RELAXED);
}

size_t
xxl_executor_pending (xxl_executor_t *self)
{
    if (!self)
        return 0;
    return __atomic_load_n (&self->pending, __ATOMIC_RELAXED);
}

int
xxl_executor_full (xxl_executor_t *self, char *msg, size_t msglen)
{
    if (!self)
        return 0;
    char dummy [8];
    if (!msg || !msglen) {
        msg = dummy;
        msglen = sizeof dummy;
    }
    pthread_mutex_lock (&self->mutex);
    int full = !self->stopped && s_pool_full (self, msg, msglen);
    pthread_mutex_unlock (&self->mutex);
    return full;
}

size_t
xxl_executor_jobs (xxl_executor_t *self)
{
    if (!self)
        return 0;
    pthread_mutex_lock (&self->pool_lock);
    size_t jobs = self->live_workers;
    pthread_mutex_unlock (&self->pool_lock);
    return jobs;
}

size_t
xxl_executor_threads (xxl_executor_t *self, size_t *peak)
{
    if (!self)
        return 0;
    pthread_mutex_lock (&self->pool_lock);
    size_t threads = self->threads;
    if (peak)
        *peak = self->threads_peak;
    pthread_mutex_unlock (&self->pool_lock);
    return threads;
}
