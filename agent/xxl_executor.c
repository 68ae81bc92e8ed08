/*  xxl_executor.c -- runs the triggers an agent receives.

    Threads.  One detached worker thread per job id (small stack) owns the
    job's serial queue, as XXL-JOB's JobThread.  Three kinds of lock, taken
    in this order when nested, none held while a run executes:
      - the executor mutex: the worker map, accepted logIds, worker
        creation and retirement, stop (the agent thread, rarely a worker);
      - each worker's lock: its queue, its running run, its wait (the
        agent thread queueing, and that one worker);
      - the ledger's lock (xxl_ledger.h): in-flight logIds and finished
        results (briefly, by a worker at the end of each run and by the
        agent thread).
    So with thousands of jobs a worker's hot path (wake, pop, run, push the
    result) never touches a lock shared by all workers for longer than a
    list append, and an idle worker is woken only when its own queue gets
    a run.  An idle worker sleeps on its own condition variable, signalled
    only when its own queue gets a run.  Those thousands of sleepers sit in
    the kernel's futex hash, which Linux >= 6.16 gives each process sized by
    CPU count (16 buckets on 2 CPUs): every futex operation of the process
    (any mutex handover) would walk chains of hundreds of them under a
    spinlock, so the executor asks for a private hash of XXL_FUTEX_SLOTS
    buckets (prctl PR_FUTEX_HASH; older kernels have one big shared hash
    and refuse the call, which is fine).  Idle workers hold no file
    descriptor: each fd the process holds is copied by every spawn of a
    child and closed again by its exec.

    A worker that idles idle_reap_s seconds with an empty queue
    removes itself.  Replacing a worker (changed handler or glue version,
    COVER_EARLY, kill) takes it out of the map, fails its queue at once and
    cancels its running run; the thread ends on its own when the run
    returns, and a count of live workers lets stop() wait.

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
    in a hold (xxl_executor_hold_wakes) it gets the hold's seq and waits
    in its queue, not started by its worker (which then waits on its
    condition), until the release has flushed the journal and published
    committed_seq; the release then wakes the workers that got runs.
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

//  ---------------------------------------------------------------------
//  Runs and workers

typedef struct _worker_t worker_t;

enum { CANCEL_NONE = 0, CANCEL_KILL = 1, CANCEL_TIMEOUT = 2 };

typedef struct _run_t {
    xxl_run_t base;                     //  first: handlers get &base
    xxl_executor_t *executor;
    worker_t *worker;
    int64_t job_id, log_id, log_date_time, glue_updatetime;
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
    int waiting;                        //  idle on wake, not signalled yet
    uint64_t listed_seq;                //  the hold it is listed to be woken at
    pthread_cond_t wake;                //  wakes the idle wait (a run was
                                        //  queued, or stop)
    int wake_fd;                        //  eventfd while a child runs (else
                                        //  -1): wakes the wait on it (kill)
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
    pthread_cond_t workers_gone;
    pthread_condattr_t monotonic;       //  for every condition here
    int hold_wakes;                     //  xxl_executor_hold_wakes: the job ids
    int64_t *held_wakes;                //  whose worker a run was staged for,
    size_t held_count, held_max;        //  woken at the release
    uint64_t stage_seq;                 //  the current (or last) hold
    uint64_t committed_seq;             //  atomic: holds whose runs may start
    pthread_attr_t attr;
    xxl_imap_t *workers;                //  job id -> worker_t (current)
    size_t live_workers;
    int stopped;

    xxl_ledger_t *ledger;               //  log id -> run_t (queued or running),
                                        //  then its result until taken

    size_t active;                      //  atomic
    size_t pending;                     //  atomic
};

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
    xxl_ledger_done (self->ledger, run->log_id, run->log_date_time, code, msg);
    __atomic_sub_fetch (&self->pending, 1, __ATOMIC_RELAXED);
    s_run_free (run);
}

//  Wakes the worker from its idle wait or its wait on a child; a wake
//  that finds it busy is harmless (both waits re-check their state).
//  Caller holds the worker's lock.
static void
s_worker_wake (worker_t *worker)
{
    uint64_t one = 1;
    pthread_cond_signal (&worker->wake);
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

//  Takes a worker out of service: out of the map, queue failed, running run
//  cancelled.  The thread ends by itself.  Caller holds the executor mutex
//  and not the worker's lock.
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
    else
        s_worker_wake (worker);
    pthread_mutex_unlock (&worker->lock);
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

//  Worker thread: takes runs from its own queue, under its own lock; the
//  executor mutex only to retire itself (idle, or at its end)
static void *
s_worker_main (void *arg)
{
    worker_t *worker = (worker_t *) arg;
    xxl_executor_t *self = worker->executor;
    pthread_mutex_lock (&worker->lock);
    int64_t idle_since = s_mono_ms ();
    while (!worker->stop) {
        if (worker->head && worker->head->seq
        &&  worker->head->seq > __atomic_load_n (&self->committed_seq, __ATOMIC_ACQUIRE)) {
            //  Staged: its logId is not journaled yet.  The hold's release
            //  signals us (under our lock, so it cannot come before the wait)
            worker->waiting = 1;
            pthread_cond_wait (&worker->wake, &worker->lock);
            worker->waiting = 0;
            continue;
        }
        if (!worker->head) {
            int64_t reap_at = idle_since + (int64_t) self->idle_reap_s * 1000;
            if (s_mono_ms () >= reap_at) {
                //  Retire, in lock order; runs are queued under the
                //  executor mutex, so the queue cannot grow while it is held
                pthread_mutex_unlock (&worker->lock);
                pthread_mutex_lock (&self->mutex);
                pthread_mutex_lock (&worker->lock);
                int idle = !worker->stop && !worker->head;
                pthread_mutex_unlock (&worker->lock);
                if (idle) {
                    zsys_debug ("executor: job %lld worker idle, reaped", (long long) worker->job_id);
                    s_worker_stop (self, worker, "executor idle times over limit.");
                }
                pthread_mutex_unlock (&self->mutex);
                pthread_mutex_lock (&worker->lock);
                continue;
            }
            //  Idle: wait on our own condition (see the head of this file)
            struct timespec until;
            until.tv_sec = (time_t) ((reap_at + 1) / 1000);
            until.tv_nsec = (long) ((reap_at + 1) % 1000) * 1000000;
            worker->waiting = 1;
            pthread_cond_timedwait (&worker->wake, &worker->lock, &until);
            worker->waiting = 0;
            continue;
        }
        run_t *run = worker->head;
        worker->head = run->next;
        if (!worker->head)
            worker->tail = NULL;
        run->next = NULL;
        worker->running = run;
        __atomic_add_fetch (&self->active, 1, __ATOMIC_RELAXED);
        pthread_mutex_unlock (&worker->lock);

        s_execute (run);

        pthread_mutex_lock (&worker->lock);
        worker->running = NULL;
        __atomic_sub_fetch (&self->active, 1, __ATOMIC_RELAXED);
        s_push_result (self, run, run->result_code, run->result_msg);
        idle_since = s_mono_ms ();
    }
    //  Stopped: the queue was failed by whoever stopped us, and we are out
    //  of the map, so no other thread reaches this worker any more once
    //  that one released the executor mutex
    pthread_mutex_unlock (&worker->lock);
    pthread_mutex_lock (&self->mutex);
    pthread_mutex_destroy (&worker->lock);
    pthread_cond_destroy (&worker->wake);
    free (worker->handler_name);
    free (worker);
    if (--self->live_workers == 0)
        pthread_cond_broadcast (&self->workers_gone);
    pthread_mutex_unlock (&self->mutex);
    return NULL;
}

//  Creates and starts a worker, registered in the map; caller holds the
//  mutex.  NULL on failure.
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
    pthread_mutex_init (&worker->lock, NULL);
    pthread_cond_init (&worker->wake, &self->monotonic);
    if (!worker->handler_name
    ||  xxl_imap_put (self->workers, job_id, worker)) {
        zsys_error ("executor: cannot create worker for job %lld: %s",
                    (long long) job_id, strerror (errno));
        goto fail;
    }
    worker->in_map = 1;
    pthread_t thread;
    int rc = pthread_create (&thread, &self->attr, s_worker_main, worker);
    if (rc) {
        zsys_error ("executor: cannot start worker thread for job %lld: %s",
                    (long long) job_id, strerror (rc));
        xxl_imap_del (self->workers, job_id);
        goto fail;
    }
    self->live_workers++;
    return worker;
fail:
    pthread_mutex_destroy (&worker->lock);
    pthread_cond_destroy (&worker->wake);
    free (worker->handler_name);
    free (worker);
    return NULL;
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
    pthread_cond_init (&self->workers_gone, &self->monotonic);
    static pthread_once_t futex_once = PTHREAD_ONCE_INIT;
    pthread_once (&futex_once, s_futex_hash_size);
    pthread_attr_init (&self->attr);
    pthread_attr_setstacksize (&self->attr, WORKER_STACK);
    pthread_attr_setdetachstate (&self->attr, PTHREAD_CREATE_DETACHED);
    if (ok) {
        self->workers = xxl_imap_new ();
        self->ledger = self->workers? xxl_ledger_new (): NULL;
        ok = self->ledger != NULL;
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
    //  Each stop takes its worker out of the map
    size_t cursor = 0;
    worker_t *worker;
    while ((worker = (worker_t *) xxl_imap_drain (self->workers, &cursor)))
        s_worker_stop (self, worker, reason? reason: "executor stopped");
    struct timespec until;
    clock_gettime (CLOCK_MONOTONIC, &until);
    until.tv_sec += STOP_WAIT_MS / 1000;
    while (self->live_workers > 0)
        if (pthread_cond_timedwait (&self->workers_gone, &self->mutex, &until) == ETIMEDOUT)
            break;
    if (self->live_workers > 0)
        zsys_error ("executor: %zu run(s) still running after %d s (in-process handlers "
                    "ignoring cancelled()?); leaving them", self->live_workers,
                    STOP_WAIT_MS / 1000);
    pthread_mutex_unlock (&self->mutex);
}

void
xxl_executor_destroy (xxl_executor_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    xxl_executor_t *self = *self_p;
    *self_p = NULL;
    xxl_executor_stop (self);
    pthread_mutex_lock (&self->mutex);
    size_t live = self->live_workers;
    pthread_mutex_unlock (&self->mutex);
    if (live > 0)
        return;                     //  threads still use it: leak rather than crash
    xxl_ledger_destroy (&self->ledger);
    xxl_imap_destroy (&self->workers);
    if (self->own_journal)
        xxl_journal_destroy (&self->journal);
    xxl_spawner_destroy (&self->spawner);
    pthread_attr_destroy (&self->attr);
    pthread_cond_destroy (&self->workers_gone);
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
    worker_t *worker = (worker_t *) xxl_imap_get (self->workers, run->job_id);
    if (worker
    && (worker->glue != glue || worker->glue_updatetime != run->glue_updatetime
        || strcmp (worker->handler_name, handler_name))) {
        s_worker_stop (self, worker,
                       "change jobhandler or glue type, and terminate the old job thread.");
        worker = NULL;
    }
    int busy = 0;
    if (worker) {
        pthread_mutex_lock (&worker->lock);
        busy = worker->running || worker->head;
        pthread_mutex_unlock (&worker->lock);
    }
    if (busy) {
        if (streq (strategy, "DISCARD_LATER")) {
            snprintf (msg, msglen, "block strategy effect: Discard Later");
            goto done;
        }
        if (streq (strategy, "COVER_EARLY")) {
            s_worker_stop (self, worker, "block strategy effect: Cover Early");
            worker = NULL;
        }
    }
    if (!worker) {
        worker = s_worker_new (self, run->job_id, handler_name, glue, run->glue_updatetime);
        if (!worker) {
            snprintf (msg, msglen, "cannot start job thread");
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
    //  Wake this idle worker once (no other thread); a busy one finds the
    //  run in its queue.  Signalled once its lock is released, so that it
    //  does not wake only to sleep again on that lock; it cannot retire
    //  and free itself meanwhile, as that takes the executor mutex we hold.
    //  In a hold, every worker that got a run is listed (once) for the
    //  release, which wakes it if it waits then (its waiting flag is left
    //  for the release to see): idle, or a busy one that found its staged
    //  run and waits for it.
    int wake = 0;
    if (!self->hold_wakes) {
        wake = worker->waiting;
        worker->waiting = 0;
    }
    int list = self->hold_wakes && worker->listed_seq != self->stage_seq;
    if (list)
        worker->listed_seq = self->stage_seq;
    pthread_mutex_unlock (&worker->lock);
    if (list && s_wake_later (self, trigger->job_id)) {
        //  Out of memory for the list: release what is staged now
        xxl_journal_flush (self->journal);
        __atomic_store_n (&self->committed_seq, self->stage_seq, __ATOMIC_RELEASE);
        pthread_mutex_lock (&worker->lock);
        wake = worker->waiting;
        worker->waiting = 0;
        pthread_mutex_unlock (&worker->lock);
    }
    if (wake)
        pthread_cond_signal (&worker->wake);
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
        //  The worker now in the map for each job: one replaced meanwhile
        //  was woken by its stop, and none is freed while we hold the
        //  mutex.  Its waiting flag, read under its lock, tells whether
        //  it waits (idle, or on a staged run: it checked committed_seq
        //  under that lock before it waited, so it either saw the new
        //  value or waits now); signalled once the lock is released, so
        //  that it does not wake only to sleep on the lock
        for (size_t i = 0; i < self->held_count; i++) {
            worker_t *worker = (worker_t *) xxl_imap_get (self->workers, self->held_wakes [i]);
            if (!worker)
                continue;
            pthread_mutex_lock (&worker->lock);
            int waiting = worker->waiting;
            worker->waiting = 0;
            pthread_mutex_unlock (&worker->lock);
            if (waiting)
                pthread_cond_signal (&worker->wake);
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
