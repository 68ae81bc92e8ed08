/*  xxl_runexec.c -- executes one run on a pool thread.

    Processes.  Isolated BEAN runs start xxl-runner (see
    xxl_runner_main.c), GLUE runs their interpreter (xxl_glue.h), both
    through xxl_spawner.h: in a process group of their own, the run's log
    as stdout and stderr.  The worker waits for the child with the wait's
    eventfd published in worker_t.wake_fd, which a kill writes; on kill or
    timeout the whole group is ended (SIGTERM, SIGKILL after
    XXL_EXECUTOR_GRACE_MS).

    Run logs.  Each run writes its log through its xxl_logsink.h: at once
    into its file for an isolated or GLUE run, held back in memory for an
    in-process one until a later write, a LOG request
    (xxl_executor_log_sync) or the handler asking for its file
    (xxl_run_log_file) makes the file, or the day's pack takes it.

    In-process BEAN runs call the handler on the worker thread; kill and
    timeout are cooperative through cancelled(), and a run that outlived
    its timeout reports 502 when the handler returns.

    Each spawned process gets XXL_AGENT_RUN=MARKER.LOGID (xxl_guard.h).

    Owns a run_t from the pool thread's take to its result: its log
    sink, its handler reference, its process.  MUST be called without the
    executor mutex or the pool lock; takes the run's queue lock only
    briefly (a kill's reason, publishing the wait's eventfd).  The result
    goes to the ledger (xxl_runexec_done) under the queue's lock, so that
    busy() never sees the job idle before its result is out.  Called by
    xxl_runpool.c (execute, done) and xxl_executor.c (cancel, free, done).
*/

#define _GNU_SOURCE
#include "xxl_runexec.h"

#include <assert.h>
#include <czmq.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

void
xxl_runexec_free (run_t *run)
{
    xxl_handlers_release (&run->ref);
    free (run->kill_reason);
    free (run->result_msg);
    xxl_logsink_destroy (&run->log);
    if (run->sleep_ready)
        pthread_cond_destroy (&run->sleep_wake);
    free (run);
}

//  Queues a result and frees the run.  Caller holds the run's worker lock
//  (so that busy() never sees the job idle before its result is out).
void
xxl_runexec_done (xxl_executor_t *self, run_t *run, int code, const char *msg)
{
    xxl_ledger_done (self->ledger, run->log_id, run->log_date_time, run->start_time, code, msg);
    __atomic_sub_fetch (&self->pending, 1, __ATOMIC_RELAXED);
    xxl_runexec_free (run);
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
void
xxl_runexec_cancel (run_t *run, int how, const char *reason)
{
    if (how == CANCEL_KILL && !run->kill_reason)
        run->kill_reason = strdup (reason? reason: "killed");
    int none = CANCEL_NONE;
    __atomic_compare_exchange_n (&run->cancel, &none, how, 0,
                                 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    if (run->worker)
        s_worker_wake (run->worker);
    if (run->sleep_ready)
        pthread_cond_broadcast (&run->sleep_wake);
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
    if (run->deadline && xxl_executor_mono_ms () >= run->deadline) {
        int none = CANCEL_NONE;
        __atomic_compare_exchange_n (&run->cancel, &none, CANCEL_TIMEOUT, 0,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
        return 1;
    }
    return 0;
}

//  The job state of the queue's open lifecycle (read by the thread
//  serving the queue: the one calling the handler)
static void *
s_host_job_state (xxl_run_t *base)
{
    worker_t *worker = ((run_t *) base)->worker;
    return worker && worker->life_open? worker->job_state: NULL;
}

//  The run's own log file: a held log moves to it (xxl_logsink_file)
static const char *
s_host_log_file (xxl_run_t *base)
{
    return xxl_logsink_file (((run_t *) base)->log);
}

//  Monotonic ns
static int64_t
s_mono_ns (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

//  xxl_run_sleep: a wait on the run's condition under the worker's lock,
//  which a cancel holds to broadcast it, so that a kill cannot come
//  between the check and the wait; the wait ends at the earlier of the
//  sleep's end and the run's deadline
static int
s_host_sleep (xxl_run_t *base, int64_t ms)
{
    run_t *run = (run_t *) base;
    worker_t *worker = run->worker;
    assert (worker);                    //  (every accepted run has its queue)
    if (ms > XXL_RUN_SLEEP_MAX_MS)
        ms = XXL_RUN_SLEEP_MAX_MS;
    int64_t until = s_mono_ns () + (ms > 0? ms: 0) * 1000000;
    pthread_mutex_lock (&worker->lock);
    if (!run->sleep_ready) {
        pthread_condattr_t attr;
        pthread_condattr_init (&attr);
        pthread_condattr_setclock (&attr, CLOCK_MONOTONIC);
        pthread_cond_init (&run->sleep_wake, &attr);
        pthread_condattr_destroy (&attr);
        run->sleep_ready = 1;
    }
    int cancelled;
    while (!(cancelled = s_host_cancelled (base)) && s_mono_ns () < until) {
        int64_t end = until;
        if (run->deadline && run->deadline * 1000000 < end)
            end = run->deadline * 1000000;
        struct timespec at = { (time_t) (end / 1000000000), (long) (end % 1000000000) };
        pthread_cond_timedwait (&run->sleep_wake, &worker->lock, &at);
    }
    pthread_mutex_unlock (&worker->lock);
    return cancelled;
}

static const xxl_handler_host_t s_host = {
    XXL_HANDLER_ABI_VERSION, sizeof (xxl_handler_host_t),
    s_host_param, s_host_job_id, s_host_log_id, s_host_shard_index, s_host_shard_total,
    s_host_vlog, s_host_set_result, s_host_cancelled, s_host_job_state, s_host_log_file,
    s_host_sleep
};

//  ---------------------------------------------------------------------
//  Handler lifecycles (xxl/handler.h): a job queue's init before its first
//  run, its destroy when it is retired.  worker_t's life_* members belong
//  to the thread serving the queue.

//  Opens the queue's lifecycle before the run, if its handler has one and
//  it is not open: init, on this thread, inside the run (its log, timeout
//  and kill).  0: open (or none); -1: init failed, the run's result says
//  why and the next run tries again.
static int
s_life_open (run_t *run)
{
    worker_t *worker = run->worker;
    const xxl_handler_lifecycle_t *life = run->ref.lifecycle;
    if (!life || !worker || worker->life_open)
        return 0;
    void *job_state = NULL;
    if (life->init && life->init (&run->base, &job_state) != 0) {
        char *msg = NULL;
        if (asprintf (&msg, "job init failed: %s",
                      run->result_set && run->result_msg && *run->result_msg
                      ? run->result_msg: "init returned -1") < 0)
            msg = NULL;
        xxl_logsink_lines (run->log, msg? msg: "job init failed", NULL);
        s_set_result (run, XXL_CODE_FAIL, msg? msg: "job init failed");
        free (msg);
        return -1;
    }
    //  What a successful init said is not the run's result
    run->result_set = 0;
    run->result_code = 0;
    free (run->result_msg);
    run->result_msg = NULL;
    xxl_handlers_dup (&run->ref, &worker->life_ref);
    worker->job_state = job_state;
    worker->life_open = 1;
    return 0;
}

void
xxl_runexec_close (worker_t *worker)
{
    if (!worker->life_open)
        return;
    const xxl_handler_lifecycle_t *life = worker->life_ref.lifecycle;
    if (life && life->destroy)
        life->destroy (worker->job_id, worker->life_ref.plugin_state, worker->job_state);
    worker->life_open = 0;
    worker->job_state = NULL;
    xxl_handlers_release (&worker->life_ref);
}

//  ---------------------------------------------------------------------
//  Execution

static void
s_run_in_process (run_t *run)
{
    run->base.host = &s_host;
    run->base.plugin_state = run->ref.plugin_state;
    if (s_life_open (run))
        return;                     //  init failed: the result says so
    //  (an init may have used up the run's time: then no handler call,
    //  as for a kill; s_host_cancelled marks the timeout)
    if (!s_host_cancelled (&run->base)) {
        int rc = run->ref.fn (&run->base);
        if (run->result_set) {
            if (rc != 0 && run->result_code == XXL_CODE_SUCCESS)
                run->result_code = XXL_CODE_FAIL;
        }
        else
            s_set_result (run, rc == 0? XXL_CODE_SUCCESS: XXL_CODE_FAIL, NULL);
    }
    //  A handler that overran its timeout without looking at cancelled()
    if (run->deadline && xxl_executor_mono_ms () >= run->deadline) {
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
            snprintf (msg, sizeof msg, "runner '%s' not found: set agent/runner to the"
                      " path of xxl-runner", self->runner);
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
void
xxl_runexec_execute (run_t *run)
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
        run->deadline = xxl_executor_mono_ms () + (int64_t) run->timeout_s * 1000;
    //  A lifecycle opened by another load of the plugin (its file was
    //  replaced) ends before this run: the old code's destroy, then the
    //  new code's init (s_life_open)
    int cancelled = __atomic_load_n (&run->cancel, __ATOMIC_ACQUIRE);
    if (!cancelled && run->worker && run->worker->life_open
    &&  run->ref.generation != run->worker->life_ref.generation)
        xxl_runexec_close (run->worker);
    if (cancelled)
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
