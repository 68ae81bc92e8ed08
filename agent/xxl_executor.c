/*  xxl_executor.c -- runs the triggers an agent receives.

    The executor's public API (xxl_executor.h) and its job queues.  Each
    job id has a serial queue (worker_t, as XXL-JOB's JobThread but
    without a thread of its own), in the map while it is the job's
    current one.  This file owns the map, the accepted logIds (the
    journal), holds, and each queue's life: made by a run that needs it
    (s_worker_new), stopped by a replacement, a kill, the reaper or stop
    (xxl_executor_queue_stop), freed by whoever has it last
    (xxl_executor_queue_free).  Serving queues is the pool's
    (xxl_runpool.h), executing a run is xxl_runexec.h's; the locks and
    their order are xxl_executor_int.h's.  Called by the agent thread;
    the pool's manager calls xxl_executor_queue_stop to reap.

    Replacing a queue (changed handler or glue version, COVER_EARLY, kill)
    takes it out of the map, fails its queued runs at once and cancels its
    running run; its thread frees it when the run returns, and stop()
    waits for every queue and thread to be gone.

    Accepted logIds.  The dedupe set is the journal's (xxl_journal.h: on
    disk with the agent's, in memory for an executor without one).  A run
    is journaled before it can start: outside a hold at once (one write);
    in a hold (xxl_executor_hold_wakes) it gets the hold's seq and is
    staged: its queue is not readied (a thread serving it leaves it IDLE
    at the staged run) until the release has flushed the journal and
    published committed_seq; the release then readies each queue that got
    runs, once.
*/

#define _GNU_SOURCE
#include "xxl_executor.h"
#include "xxl_executor_int.h"
#include "xxl_block_rules.h"
#include "xxl_runexec.h"
#include "xxl_runlog.h"
#include "xxl_runpool.h"

#include <czmq.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

//  ---------------------------------------------------------------------
//  Job queues

void
xxl_executor_queue_free (xxl_executor_t *self, worker_t *worker)
{
    assert (worker->stop && !worker->in_map && !worker->life_open);
    pthread_mutex_destroy (&worker->lock);
    free (worker->handler_name);
    free (worker);
    pthread_mutex_lock (&self->pool_lock);
    if (--self->live_workers == 0)
        pthread_cond_broadcast (&self->pool_gone);
    pthread_mutex_unlock (&self->pool_lock);
}

//  Takes a job's queue out of service: out of the map, queue failed,
//  running run cancelled.  An IDLE queue is freed now, unless its handler
//  lifecycle is open: it is readied for a pool thread to run its destroy
//  and free it, as a READY or SERVING one is by the pool thread that takes
//  it or serves it.  Caller holds the executor mutex and not the worker's
//  lock.
void
xxl_executor_queue_stop (xxl_executor_t *self, worker_t *worker, const char *reason)
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
        xxl_runexec_done (self, run, XXL_CODE_FAIL, msg);
    }
    worker->tail = NULL;
    if (worker->running)
        xxl_runexec_cancel (worker->running, CANCEL_KILL, reason);
    int free_now = worker->state == JOB_IDLE;
    if (free_now && worker->life_open) {
        //  Its destroy may block: a pool thread takes it from the ready
        //  list, runs the destroy and frees it (s_serve)
        xxl_runpool_ready (self, worker);
        free_now = 0;
    }
    else
    if (free_now) {
        pthread_mutex_lock (&self->pool_lock);
        xxl_runpool_idle_unlink (self, worker);
        pthread_mutex_unlock (&self->pool_lock);
    }
    pthread_mutex_unlock (&worker->lock);
    if (free_now)
        xxl_executor_queue_free (self, worker);
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
    xxl_runpool_init (self, config);
    if (ok) {
        self->workers = xxl_imap_new ();
        self->ledger = self->workers? xxl_ledger_new (): NULL;
        ok = self->ledger != NULL;
    }
    if (ok)
        ok = xxl_runpool_start (self) == 0;
    if (!ok) {
        zsys_error ("executor: cannot initialize: %s", strerror (errno));
        xxl_executor_destroy (&self);
        return NULL;
    }
    mkdir (self->logdir, XXL_RUNLOG_DIR_MODE);
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
        xxl_executor_queue_stop (self, worker, reason? reason: "executor stopped");
    pthread_mutex_unlock (&self->mutex);
    xxl_runpool_stop (self);
}

void
xxl_executor_destroy (xxl_executor_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    xxl_executor_t *self = *self_p;
    *self_p = NULL;
    xxl_executor_stop (self);
    if (xxl_runpool_alive (self))
        return;                     //  threads still use it: leak rather than crash
    xxl_ledger_destroy (&self->ledger);
    xxl_imap_destroy (&self->workers);
    if (self->own_journal)
        xxl_journal_destroy (&self->journal);
    xxl_spawner_destroy (&self->spawner);
    xxl_runpool_destroy (self);
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
    if (glue < 0 && streq (trigger->glue_type, "GLUE_GROOVY")) {
        snprintf (msg, msglen, "GLUE_GROOVY runs only on a bridged XXL-JOB executor"
                  " (xxl-bridge), not on xxl-agent");
        return -1;
    }
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

    //  One allocation: the run and its strings after it (freed with it)
    const char *params = trigger->params? trigger->params: "";
    const char *source = glue != XXL_GLUE_BEAN && trigger->glue_source? trigger->glue_source: "";
    size_t handler_size = strlen (handler_name) + 1, params_size = strlen (params) + 1;
    size_t source_size = glue != XXL_GLUE_BEAN? strlen (source) + 1: 0;
    run_t *run = (run_t *) calloc (1, sizeof (run_t) + handler_size + params_size + source_size);
    if (!run) {
        snprintf (msg, msglen, "out of memory");
        return -1;
    }
    run->handler_name = (char *) (run + 1);
    memcpy (run->handler_name, handler_name, handler_size);
    run->params = run->handler_name + handler_size;
    memcpy (run->params, params, params_size);
    if (glue != XXL_GLUE_BEAN) {
        run->glue_source = run->params + params_size;
        memcpy (run->glue_source, source, source_size);
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
    run->log = xxl_logsink_new (self->logdir, self->pack, run->log_id, run->log_date_time);
    if (!run->log) {
        xxl_runexec_free (run);
        snprintf (msg, msglen, "out of memory");
        return -1;
    }
    if (glue == XXL_GLUE_BEAN
    &&  xxl_handlers_acquire (self->handlers, handler_name, &run->ref)) {
        snprintf (msg, msglen, "job handler [%.200s] not found.", handler_name);
        xxl_runexec_free (run);
        return -1;
    }

    pthread_mutex_lock (&self->mutex);
    int rc = -1;
    if (self->stopped) {
        snprintf (msg, msglen, "executor is stopping");
        goto done;
    }
    int held = run->log_id > 0? xxl_journal_check (self->journal, run->log_id, run->job_id,
                                                   run->log_date_time)
                              : XXL_JOURNAL_NEW;
    if (held == XXL_JOURNAL_OTHER) {
        snprintf (msg, msglen, XXL_EXECUTOR_OTHER_RUN_FMT, (long long) run->log_id);
        goto done;
    }
    if (held == XXL_JOURNAL_SAME) {
        snprintf (msg, msglen, "logId %lld already accepted", (long long) run->log_id);
        goto done;
    }
    //  A changed handler or glue version replaces the job's queue (the
    //  new one is idle: the block strategy has nothing to act on); on a
    //  busy queue DISCARD_LATER refuses the run, COVER_EARLY replaces it.
    //  Replaced only once the run is sure to be taken: a refused run
    //  leaves the job as it was.
    //  (the decision: xxl_block_decide, xxl_block_rules.h)
    worker_t *worker = (worker_t *) xxl_imap_get (self->workers, run->job_id);
    bool changed = worker
                && (worker->glue != glue || worker->glue_updatetime != run->glue_updatetime
                    || strcmp (worker->handler_name, handler_name));
    bool busy = false;
    if (worker && !changed) {
        pthread_mutex_lock (&worker->lock);
        busy = worker->running || worker->head;
        pthread_mutex_unlock (&worker->lock);
    }
    xxl_block_t block = xxl_block_decide (worker != NULL, changed, busy, strategy);
    if (block.action == XXL_BLOCK_DISCARD) {
        snprintf (msg, msglen, "%s", block.why);
        goto done;
    }
    const char *replace = block.action == XXL_BLOCK_REPLACE? block.why: NULL;
    //  A job with nothing queued or running (or a new queue) needs a
    //  thread for this run: refused when none can be had soon
    //  (back-pressure, xxl_runpool_full)
    int idle = !worker || replace;
    if (!idle) {
        pthread_mutex_lock (&worker->lock);
        idle = worker->state == JOB_IDLE && !worker->head;
        pthread_mutex_unlock (&worker->lock);
    }
    if (idle && xxl_runpool_full (self, msg, msglen))
        goto done;
    if (replace) {
        xxl_executor_queue_stop (self, worker, replace);
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
        xxl_journal_accept (self->journal, run->log_id, run->job_id, run->log_date_time);
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
    if (worker->state == JOB_IDLE && xxl_executor_startable (self, worker->head))
        xxl_runpool_ready (self, worker);
    int list = self->hold_wakes && worker->listed_seq != self->stage_seq;
    if (list)
        worker->listed_seq = self->stage_seq;
    pthread_mutex_unlock (&worker->lock);
    if (list && s_wake_later (self, trigger->job_id)) {
        //  Out of memory for the list: release what is staged now
        xxl_journal_flush (self->journal);
        __atomic_store_n (&self->committed_seq, self->stage_seq, __ATOMIC_RELEASE);
        pthread_mutex_lock (&worker->lock);
        if (worker->state == JOB_IDLE && worker->head && xxl_executor_startable (self, worker->head))
            xxl_runpool_ready (self, worker);
        pthread_mutex_unlock (&worker->lock);
    }
    run = NULL;
    rc = 0;
done:
    pthread_mutex_unlock (&self->mutex);
    if (run)
        xxl_runexec_free (run);
    return rc;
}

//  Queues a release lists under one pool lock at most
#define RELEASE_CHUNK   256

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
        //  and runs on, or left the queue IDLE for us.  They are listed
        //  RELEASE_CHUNK at a time under one pool lock (a lock and a wake
        //  each made the pool threads, taking queues off the list, block
        //  on the lock and wake again: 0.8 context switches a run in the
        //  e2e bench)
        worker_t *ready [RELEASE_CHUNK];
        size_t readied = 0;
        for (size_t i = 0; i < self->held_count; i++) {
            worker_t *worker = (worker_t *) xxl_imap_get (self->workers, self->held_wakes [i]);
            if (!worker)
                continue;
            pthread_mutex_lock (&worker->lock);
            if (worker->state == JOB_IDLE && worker->head && xxl_executor_startable (self, worker->head)) {
                worker->state = JOB_READY;
                ready [readied++] = worker;
            }
            pthread_mutex_unlock (&worker->lock);
            if (readied == RELEASE_CHUNK) {
                xxl_runpool_ready_many (self, ready, readied);
                readied = 0;
            }
        }
        xxl_runpool_ready_many (self, ready, readied);
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
            xxl_executor_queue_stop (self, worker, reason? reason: "scheduling center kill job.");
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
    //  (xxl_executor_queue_stop takes each out of the map; idle ones are freed)
    while ((worker = (worker_t *) xxl_imap_drain (self->workers, &cursor))) {
        pthread_mutex_lock (&worker->lock);
        int busy = worker->running || worker->head;
        pthread_mutex_unlock (&worker->lock);
        xxl_executor_queue_stop (self, worker, reason);
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
    int full = !self->stopped && xxl_runpool_full (self, msg, msglen);
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

