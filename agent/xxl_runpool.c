/*  xxl_runpool.c -- the executor's pool of threads.

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
    next READY one, or waits idle, on its own condition in a LIFO stack
    (the most recently idle is woken first; signalled after the waker
    released the pool lock, so that it does not wake to block on it: the
    idlers live as long as the pool); a hold's release lists all its
    queues under one pool lock (xxl_runpool_ready_many); the manager retires idle
    threads beyond threads_min once idle thread_idle_ms, oldest first,
    RETIRE_BATCH a tick at most, and one a RETIRE_BUSY_TICK_MS while runs
    keep ending (after a burst, the pool returns to its resting size while
    the runs that follow use its warm threads, and its unmaps do not take
    their CPU: fast once they stop).  Sizing: threads_min (the CPUs, at
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

    Owns the pool's half of xxl_executor_t (under pool_lock: the ready
    and idle lists, the thread counts) and its threads: the pool threads
    (s_thread_main, s_serve) and the manager (s_manager_main).  MUST take
    a READY queue off the list under pool_lock alone and only then its
    lock (the order of xxl_executor_int.h).  MUST NOT run a run itself:
    xxl_runexec_execute does, on the serving thread, with no lock held.
    Called by xxl_executor.c (init, start, stop, ready, full) and calls
    back into it only to stop and free queues (xxl_executor_queue_*).
*/

#define _GNU_SOURCE
#include "xxl_runpool.h"
#include "xxl_runexec.h"

#include <czmq.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
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
//  The manager retires idle threads once idle thread_idle_ms, at most
//  RETIRE_BATCH a tick (RETIRE_TICK_MS): 400 a second, while no run ended
//  for RETIRE_QUIET_MS (as the manager sees at its passes: a run that
//  ended during a longer wait counts as ended at its end); while runs keep
//  ending, one every RETIRE_BUSY_TICK_MS: 40 a second at most.  A thread's end costs ~200 us of CPU
//  with mimalloc (its heap given back, its stack unmapped), and each unmap
//  flushes the TLB of every CPU running the agent's other threads, which
//  then pay for it in their runs: 10,000 at once would take the CPU from
//  the runs that follow a burst, 400 a second cost them a fifth of their
//  rate, 40 a second under 1 % of a core
#define RETIRE_BATCH        4
#define RETIRE_TICK_MS      10
#define RETIRE_BUSY_TICK_MS 25
#define RETIRE_QUIET_MS     100

//  An idle pool thread's place on the pool's idle stack (under pool_lock),
//  LIFO, so the thread idle the shortest time (its stack and cache warm)
//  takes the next queue and the others stay asleep until the manager
//  retires them, oldest first.  A shared condition would wake its waiters
//  in about the order they came, keeping every thread a burst made alive
//  and cold.  Each thread has one while it lives; a thread that ends
//  leaves it on the pool's free list for the next thread, and the pool
//  frees them all when it is destroyed, so that a waker may signal an
//  idler's condition after it released the pool lock (the woken thread
//  then finds the lock free, instead of blocking on it once more): a
//  signal that comes after its thread ended wakes the next owner, which
//  waits again (its state is still IDLER_WAIT).
enum { IDLER_WAIT = 0, IDLER_LOOK, IDLER_END };
typedef struct _idler_t {
    pthread_cond_t wake;
    struct _idler_t *up, *down;         //  toward the top (newer), the bottom
    struct _idler_t *next;              //  every idler made (the pool's own list)
    struct _idler_t *free_next;         //  the free list
    int64_t since;                      //  monotonic ms it went idle
    int state;                          //  IDLER_*: set by its waker
    int owned;                          //  a thread has it (else free)
} idler_t;

//  Makes idlers until the free list holds `count`, on the calling thread
//  (the one that starts pool threads: the executor's starter or the
//  manager, which outlive them).  A pool thread never allocates its own:
//  with a per-thread allocator (mimalloc) a block it made and the pool
//  kept would keep its heap's memory alive after it ends, and every later
//  thread's end would walk those abandoned heaps.  Returns how many are
//  free (fewer than count when out of memory).  Caller holds the pool lock.
static size_t
s_idlers_reserve (xxl_executor_t *self, size_t count)
{
    while (self->idlers_spare < count) {
        idler_t *idler = (idler_t *) calloc (1, sizeof (idler_t));
        if (!idler)
            break;
        pthread_cond_init (&idler->wake, NULL);
        idler->next = self->idlers;
        self->idlers = idler;
        idler->free_next = self->idlers_free;
        self->idlers_free = idler;
        self->idlers_spare++;
    }
    return self->idlers_spare;
}

//  The idler of a thread that starts, reserved for it by s_spawn.  Caller
//  holds the pool lock.
static idler_t *
s_idler_take (xxl_executor_t *self)
{
    idler_t *idler = self->idlers_free;
    assert (idler && self->idlers_spare > 0);
    self->idlers_free = idler->free_next;
    self->idlers_spare--;
    idler->owned = 1;
    return idler;
}

//  Pushes a thread going idle on the stack.  Caller holds the pool lock.
static void
s_idler_push (xxl_executor_t *self, idler_t *idler)
{
    idler->state = IDLER_WAIT;
    idler->since = xxl_executor_mono_ms ();
    idler->up = NULL;
    idler->down = self->idle_top;
    if (self->idle_top)
        self->idle_top->up = idler;
    else
        self->idle_bottom = idler;
    self->idle_top = idler;
    self->idle_threads++;
}

//  Takes an idle thread off the stack and tells it IDLER_LOOK (take a
//  ready queue, or wait again) or IDLER_END; the caller signals its
//  condition (s_idler_signal), under the pool lock or after it.  Caller
//  holds the pool lock.
static idler_t *
s_idler_tell (xxl_executor_t *self, idler_t *idler, int state)
{
    assert (self->idle_threads > 0);
    if (idler->up)
        idler->up->down = idler->down;
    else
        self->idle_top = idler->down;
    if (idler->down)
        idler->down->up = idler->up;
    else
        self->idle_bottom = idler->up;
    idler->up = idler->down = NULL;
    self->idle_threads--;
    idler->state = state;
    if (state == IDLER_LOOK) {
        self->looking++;
        self->wakes++;
    }
    return idler;
}

static void
s_idler_signal (idler_t *idler)
{
    if (idler)
        pthread_cond_signal (&idler->wake);
}

//  Takes an idle thread off the stack and wakes it.  Caller holds the pool
//  lock.
static void
s_idler_wake (xxl_executor_t *self, idler_t *idler, int state)
{
    s_idler_signal (s_idler_tell (self, idler, state));
}

//  Wakes the most recently idle thread, if any.  Caller holds the pool lock.
static void
s_wake_one (xxl_executor_t *self)
{
    if (self->idle_top)
        s_idler_wake (self, self->idle_top, IDLER_LOOK);
}

//  Ready jobs that no woken thread is on its way to take.  Caller holds
//  the pool lock.
static size_t
s_uncovered (xxl_executor_t *self)
{
    return self->ready_count > self->looking? self->ready_count - self->looking: 0;
}

//  The idle list: IDLE jobs whose queue emptied, oldest first, reaped from
//  its head; a job stays listed until it is readied (a run staged in a
//  hold does not ready it).  Caller holds the pool lock.
void
xxl_runpool_idle_unlink (xxl_executor_t *self, worker_t *worker)
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
    worker->idle_since = xxl_executor_mono_ms ();
    worker->idle_prev = self->idle_tail;
    worker->idle_next = NULL;
    if (self->idle_tail)
        self->idle_tail->idle_next = worker;
    else
        self->idle_head = worker;
    self->idle_tail = worker;
    worker->in_idle = 1;
}

//  Puts a READY queue at the ready list's tail.  Caller holds the pool lock.
static void
s_list (xxl_executor_t *self, worker_t *worker)
{
    assert (worker->state == JOB_READY);
    xxl_runpool_idle_unlink (self, worker);
    worker->ready_next = NULL;
    if (self->ready_tail)
        self->ready_tail->ready_next = worker;
    else
        self->ready_head = worker;
    self->ready_tail = worker;
    self->ready_count++;
}

//  After queues were listed: tells idle threads to take them, into wake
//  [] (at most max; their conditions are signalled by the caller once it
//  released the pool lock, so that they do not wake to block on it), and
//  returns how many.  An idle thread is woken only while fewer threads are
//  in runs than there are CPUs: otherwise a thread in a run takes the
//  queue when its run ends (a wake per run would cost a switch each: the
//  idle threads a burst of sleeping runs left behind made the e2e agent's
//  CPU per run 14.3-15.7 us against 8.4-10.7), and the manager wakes or
//  adds threads if none ends for a tick.  (Threads woken and not yet back
//  count as busy: each takes a ready job.)  The manager hears of a
//  backlog no woken thread covers, once, as it begins (uncovered before:
//  none); a job a woken thread takes needs neither it nor a second thread
//  (a wake each: at one run at a time, the two extra switches delayed the
//  handler's start).  Caller holds the pool lock.
static size_t
s_wake_for_listed (xxl_executor_t *self, size_t uncovered_before, idler_t **wake, size_t max)
{
    size_t woken = 0;
    while (woken < max && self->idle_top && s_uncovered (self) > 0
       &&  self->threads - self->idle_threads - self->starting < self->cpus)
        wake [woken++] = s_idler_tell (self, self->idle_top, IDLER_LOOK);
    if (uncovered_before == 0 && s_uncovered (self) > 0) {
        self->manager_calls++;
        pthread_cond_signal (&self->manager_wake);     //  a backlog begins
    }
    return woken;
}

//  An IDLE job whose head may start goes to the ready list for a thread:
//  an idle thread is woken, else the manager is told (it adds threads
//  when the pool is stalled).  Caller holds the worker's lock.
void
xxl_runpool_ready (xxl_executor_t *self, worker_t *worker)
{
    assert (worker->state == JOB_IDLE);
    worker->state = JOB_READY;
    idler_t *wake = NULL;
    pthread_mutex_lock (&self->pool_lock);
    size_t uncovered = s_uncovered (self);
    s_list (self, worker);
    self->ready_lists++;
    s_wake_for_listed (self, uncovered, &wake, 1);
    pthread_mutex_unlock (&self->pool_lock);
    s_idler_signal (wake);
}

void
xxl_runpool_ready_many (xxl_executor_t *self, worker_t **workers, size_t count)
{
    if (count == 0)
        return;
    //  At most one thread a CPU is woken (s_wake_for_listed)
    idler_t *wake [64];
    size_t max = self->cpus < 64? self->cpus: 64;
    pthread_mutex_lock (&self->pool_lock);
    size_t uncovered = s_uncovered (self);
    for (size_t i = 0; i < count; i++)
        s_list (self, workers [i]);
    self->ready_lists++;
    size_t woken = s_wake_for_listed (self, uncovered, wake, max);
    pthread_mutex_unlock (&self->pool_lock);
    for (size_t i = 0; i < woken; i++)
        s_idler_signal (wake [i]);
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
    while (!worker->stop && worker->head && xxl_executor_startable (self, worker->head)
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
        xxl_runexec_execute (run);

        pthread_mutex_lock (&worker->lock);
        worker->running = NULL;
        __atomic_sub_fetch (&self->active, 1, __ATOMIC_RELAXED);
        xxl_runexec_done (self, run, run->result_code, run->result_msg);
        __atomic_add_fetch (&self->completed, 1, __ATOMIC_RELAXED);
    }
    if (worker->stop) {
        //  Out of the map and of both lists: no other thread reaches it
        //  once its stopper released the lock we now hold.  Its handler
        //  lifecycle's destroy runs here, after its last run
        pthread_mutex_unlock (&worker->lock);
        xxl_runexec_close (worker);
        xxl_executor_queue_free (self, worker);
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
    if (xxl_executor_startable (self, worker->head))
        xxl_runpool_ready (self, worker);      //  its slice is over: others' turn
    pthread_mutex_unlock (&worker->lock);
}

static void *
s_thread_main (void *arg)
{
    xxl_executor_t *self = (xxl_executor_t *) arg;
    pthread_mutex_lock (&self->pool_lock);
    assert (self->starting > 0);
    self->starting--;
    idler_t *idler = s_idler_take (self);
    for (;;) {
        worker_t *worker = self->ready_head;
        if (!worker) {
            if (self->pool_stop)
                break;
            //  Idle until woken: to look for a queue, or to end (an extra
            //  thread idle thread_idle_ms, retired by the manager)
            s_idler_push (self, idler);
            while (idler->state == IDLER_WAIT)
                pthread_cond_wait (&idler->wake, &self->pool_lock);
            if (idler->state == IDLER_LOOK) {
                assert (self->looking > 0);
                self->looking--;
            }
            if (idler->state == IDLER_END) {
                assert (self->retiring > 0);
                self->retiring--;
                break;
            }
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
    idler->owned = 0;
    idler->free_next = self->idlers_free;
    self->idlers_free = idler;
    self->idlers_spare++;
    if (--self->threads == 0)
        pthread_cond_broadcast (&self->pool_gone);
    pthread_mutex_unlock (&self->pool_lock);
    return NULL;
}

//  Retires idle threads beyond threads_min idle thread_idle_ms, oldest
//  first: at most RETIRE_BATCH; while runs keep ending (ending), one, and
//  none before retire_busy_at.  now: read under the pool lock, which the
//  caller holds.  Returns the monotonic ms at which the next may be due
//  (INT64_MAX: none).
static int64_t
s_retire (xxl_executor_t *self, int64_t now, int ending)
{
    size_t retired = 0;
    while (self->idle_bottom && self->threads - self->retiring > self->threads_min) {
        idler_t *oldest = self->idle_bottom;
        if (oldest->since + self->thread_idle_ms > now)
            return oldest->since + self->thread_idle_ms;
        if (ending && now < self->retire_busy_at)
            return self->retire_busy_at;
        if (retired == RETIRE_BATCH)
            return now + RETIRE_TICK_MS;
        self->retiring++;
        s_idler_wake (self, oldest, IDLER_END);
        retired++;
        if (ending) {
            self->retired_busy++;
            self->retire_busy_at = now + RETIRE_BUSY_TICK_MS;
        }
        else
            self->retired_quiet++;
    }
    return INT64_MAX;
}

//  Starts up to count pool threads; caller holds the pool lock, which is
//  released while they are made.  Returns how many started.  A failure
//  (EAGAIN: RLIMIT_NPROC, threads-max, memory) is remembered for the
//  back-pressure check (xxl_runpool_full).
static size_t
s_spawn (xxl_executor_t *self, size_t count)
{
    if (self->threads + count > self->threads_max)
        count = self->threads_max > self->threads? self->threads_max - self->threads: 0;
    if (count == 0)
        return 0;
    //  (each thread that starts takes an idler made here; fewer threads
    //  start when not all could be made: out of memory, as below)
    size_t asked = count;
    size_t spare = s_idlers_reserve (self, self->starting + count);
    count = spare > self->starting? spare - self->starting: 0;
    if (count > asked)
        count = asked;
    self->threads += count;             //  reserved: they count as alive
    self->starting += count;
    pthread_mutex_unlock (&self->pool_lock);
    size_t made = 0;
    int rc = count < asked? ENOMEM: 0;
    for (; made < count; made++) {
        pthread_t thread;
        int failed = pthread_create (&thread, &self->attr, s_thread_main, self);
        if (failed) {
            rc = failed;
            break;
        }
    }
    pthread_mutex_lock (&self->pool_lock);
    if (rc) {
        self->threads -= count - made;
        self->starting -= count - made;
        if (self->spawn_failed == 0 || xxl_executor_mono_ms () - self->spawn_failed > 1000)
            zsys_warning ("executor: cannot start a pool thread (%zu running): %s; runs wait"
                          " for one", self->threads, strerror (rc));
        self->spawn_failed = xxl_executor_mono_ms ();
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
    int64_t now = xxl_executor_mono_ms ();
    while (!self->stopped) {
        pthread_mutex_lock (&self->pool_lock);
        worker_t *worker = self->idle_head;
        if (!worker || worker->idle_since + (int64_t) self->idle_reap_s * 1000 > now) {
            pthread_mutex_unlock (&self->pool_lock);
            break;
        }
        xxl_runpool_idle_unlink (self, worker);
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
        xxl_executor_queue_stop (self, worker, "executor idle times over limit.");
    }
    pthread_mutex_unlock (&self->mutex);
}

//  Manager thread: adds threads while jobs wait for one and the pool is
//  stalled (no run ended for a tick: every thread blocked in a run), so
//  that blocking handlers get a thread each; doubles the pool per tick at
//  most (up to threads_max).  Runs that end keep the pool at its size
//  (CPU-bound runs do not grow it).  Retires idle threads (s_retire) and
//  reaps idle jobs.
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
    int64_t next_reap = xxl_executor_mono_ms () + reap_every;
    uint64_t seen = __atomic_load_n (&self->completed, __ATOMIC_RELAXED);
    int64_t progress_at = xxl_executor_mono_ms ();     //  a run ended, or a backlog began
    int64_t ended_at = 0;                               //  the manager saw that a run
                                                        //  ended (since its last pass)
    int had_backlog = 0;
    pthread_mutex_lock (&self->pool_lock);
    while (!self->pool_stop) {
        int64_t now = xxl_executor_mono_ms ();
        int backlog = self->ready_count > 0;
        uint64_t completed = __atomic_load_n (&self->completed, __ATOMIC_RELAXED);
        if (completed != seen)
            ended_at = now;
        if (completed != seen || (backlog && !had_backlog)) {
            seen = completed;
            progress_at = now;
        }
        size_t busy = self->threads - self->idle_threads - self->starting;
        if (backlog && self->threads < self->threads_min)
            s_spawn (self, self->threads_min - self->threads);
        else
        if (backlog && self->idle_threads > 0 && busy < self->cpus && s_uncovered (self) > 0)
            s_wake_one (self);                              //  (a wake that raced)
        else
        if (backlog && now - progress_at >= MANAGER_TICK_MS
        &&  (s_cpu_spare (self->cpus) || now - progress_at >= 4 * MANAGER_TICK_MS)) {
            //  Stalled for a tick with a CPU to spare, or for 4 ticks on a
            //  saturated machine (other processes' load must not starve
            //  sleeping runs; a thread preempted that long is rare): the
            //  threads are blocked in their runs.  Idle threads take what waits first;
            //  for the rest the pool doubles (at most what waits)
            size_t waiting = self->ready_count;
            size_t taking = self->idle_threads + self->starting + self->looking;
            size_t uncovered = s_uncovered (self);
            for (size_t i = 0; self->idle_top && i < uncovered; i++)
                s_wake_one (self);
            waiting = waiting > taking? waiting - taking: 0;
            size_t add = self->threads > self->threads_min? self->threads: self->threads_min;
            if (waiting)
                s_spawn (self, add < waiting? add: waiting);
            progress_at = xxl_executor_mono_ms ();
        }
        had_backlog = backlog;
        //  (a fresh clock: s_spawn may have released the lock since now)
        int64_t retire_now = xxl_executor_mono_ms ();
        int64_t next_retire = s_retire (self, retire_now,
                                        ended_at && retire_now - ended_at < RETIRE_QUIET_MS);
        if (now >= next_reap) {
            pthread_mutex_unlock (&self->pool_lock);
            s_reap (self);
            pthread_mutex_lock (&self->pool_lock);
            next_reap = now + reap_every;
        }
        //  A tick while jobs wait, else until the next reap or a wake (a
        //  backlog begins: xxl_runpool_ready)
        backlog = self->ready_count > 0;
        int64_t until_ms = backlog? xxl_executor_mono_ms () + MANAGER_TICK_MS: next_reap;
        if (next_retire < until_ms)
            until_ms = next_retire;
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
int
xxl_runpool_full (xxl_executor_t *self, char *msg, size_t msglen)
{
    pthread_mutex_lock (&self->pool_lock);
    int64_t now = xxl_executor_mono_ms ();
    int capped = self->threads >= self->threads_max
              || (self->spawn_failed && now - self->spawn_failed < 1000);
    size_t waiting = self->ready_count + self->held_count;
    size_t idle = self->idle_threads + self->starting + self->looking;
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

//  threads_max when not configured: what the process may have, less a
//  margin for the agent's own threads and its children: half of
//  RLIMIT_NPROC (it counts the user's every process and thread) and of
//  kernel.threads-max, half of vm.max_map_count (a stack and its guard are
//  two mappings), and 128 KiB of available memory per thread (the stack
//  pages a run touches, the kernel's task); at most 65,536
static size_t
s_threads_auto (const char **bound)
{
    size_t limit = 65536;
    *bound = "the agent's own cap";
    struct rlimit nproc;
    if (getrlimit (RLIMIT_NPROC, &nproc) == 0 && nproc.rlim_cur != RLIM_INFINITY
    &&  nproc.rlim_cur / 2 < limit) {
        limit = (size_t) nproc.rlim_cur / 2;
        *bound = "RLIMIT_NPROC (ulimit -u, systemd TasksMax=)";
    }
    const char *files [] = { "/proc/sys/kernel/threads-max", "/proc/sys/vm/max_map_count" };
    const char *names [] = { "kernel.threads-max", "vm.max_map_count" };
    for (size_t i = 0; i < 2; i++) {
        FILE *file = fopen (files [i], "r");
        unsigned long long value;
        if (file && fscanf (file, "%llu", &value) == 1 && value / 2 < limit) {
            limit = (size_t) (value / 2);
            *bound = names [i];
        }
        if (file)
            fclose (file);
    }
    long pages = sysconf (_SC_AVPHYS_PAGES), page = sysconf (_SC_PAGESIZE);
    if (pages > 0 && page > 0) {
        unsigned long long memory = (unsigned long long) pages * (unsigned long long) page;
        if (memory / (128 * 1024) < limit) {
            limit = (size_t) (memory / (128 * 1024));
            *bound = "available memory";
        }
    }
    return limit > 16? limit - 16: 2;
}

//  ---------------------------------------------------------------------
//  Life of the pool

void
xxl_runpool_init (xxl_executor_t *self, const xxl_executor_config_t *config)
{
    assert (self->idle_reap_s > 0);
    pthread_condattr_init (&self->monotonic);
    pthread_condattr_setclock (&self->monotonic, CLOCK_MONOTONIC);
    static pthread_once_t futex_once = PTHREAD_ONCE_INIT;
    pthread_once (&futex_once, s_futex_hash_size);
    pthread_attr_init (&self->attr);
    pthread_attr_setstacksize (&self->attr, WORKER_STACK);
    pthread_attr_setdetachstate (&self->attr, PTHREAD_CREATE_DETACHED);
    pthread_mutex_init (&self->pool_lock, NULL);
    pthread_cond_init (&self->pool_gone, &self->monotonic);
    pthread_cond_init (&self->manager_wake, &self->monotonic);
    long cpus = sysconf (_SC_NPROCESSORS_ONLN);
    self->cpus = cpus > 1? (size_t) cpus: 1;
    self->threads_min = cpus > 2? (size_t) cpus: 2;
    const char *bound = "agent/threads_max";
    self->threads_max = config->threads_max > 0? (size_t) config->threads_max
                                               : s_threads_auto (&bound);
    //  Said once at start: a burst of blocking runs beyond it waits for
    //  threads (and past waiting_max is refused "busy")
    if (config->threads_max <= 0 && self->threads_max < 10000)
        zsys_warning ("executor: at most %zu runs at once (pool threads, bound by %s)",
                      self->threads_max, bound);
    else
        zsys_info ("executor: at most %zu runs at once (pool threads, bound by %s)",
                   self->threads_max, bound);
    if (self->threads_max < self->threads_min)
        self->threads_min = self->threads_max;
    self->waiting_max = config->waiting_max > 0? (size_t) config->waiting_max
                      : config->waiting_max < 0? SIZE_MAX: XXL_EXECUTOR_WAITING_MAX;
    self->thread_idle_ms = self->idle_reap_s < 10? self->idle_reap_s * 1000: 10000;
}

int
xxl_runpool_start (xxl_executor_t *self)
{
    pthread_t thread;
    pthread_mutex_lock (&self->pool_lock);
    int ok = s_spawn (self, self->threads_min) == self->threads_min
          && pthread_create (&thread, &self->attr, s_manager_main, self) == 0;
    self->manager_alive = ok;
    self->spawn_failed = 0;
    pthread_mutex_unlock (&self->pool_lock);
    return ok? 0: -1;
}

void
xxl_runpool_stop (xxl_executor_t *self)
{
    //  The pool ends once the runs have: threads once idle, the manager
    struct timespec until;
    clock_gettime (CLOCK_MONOTONIC, &until);
    until.tv_sec += STOP_WAIT_MS / 1000;
    pthread_mutex_lock (&self->pool_lock);
    self->pool_stop = 1;
    while (self->idle_top)
        s_wake_one (self);
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

int
xxl_runpool_alive (xxl_executor_t *self)
{
    pthread_mutex_lock (&self->pool_lock);
    int live = self->live_workers > 0 || self->threads > 0 || self->manager_alive;
    pthread_mutex_unlock (&self->pool_lock);
    return live;
}

void
xxl_runpool_destroy (xxl_executor_t *self)
{
    assert (!xxl_runpool_alive (self));
    while (self->idlers) {
        idler_t *idler = self->idlers;
        self->idlers = idler->next;
        assert (!idler->owned);
        pthread_cond_destroy (&idler->wake);
        free (idler);
    }
    pthread_attr_destroy (&self->attr);
    pthread_cond_destroy (&self->pool_gone);
    pthread_cond_destroy (&self->manager_wake);
    pthread_mutex_destroy (&self->pool_lock);
    pthread_condattr_destroy (&self->monotonic);
}
