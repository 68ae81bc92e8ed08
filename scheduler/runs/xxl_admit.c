/*  xxl_admit.c -- a job's maxRunning slots across the cluster (DESIGN §13;
    the decision is xxl_admit_rules.c's, docs/design.md "maxRunning").

    Contract:
    -   A row of a job with a maxRunning is never sent where it is made
        (engine_trigger, the planner's fires, the timer, recovery): the
        gate (engine_admit_hold) leaves it in the store unsent, with no
        address.  So an acknowledged trigger over the limit is a row and
        survives any restart.
    -   Only the holder of the job's share admits: its pass, inside the
        turn's transaction (the store's write lock, which every scheduler
        of the store takes for its turn) and after the lease fence, counts
        the job's admitted rows with no result from the store, lists its
        waiting due rows oldest first, and acts on xxl_admit_decide:
        sends (engine_dispatch_row, the gate open), fails, kills.  Counting
        from the store each pass, under the lock, makes a takeover, a
        restart, a result written by another scheduler and the lost-run
        monitor all count: a slot frees when its row becomes final.
    -   A row admitted to a probing router has no address until the pool
        answers: it is held in `admitted` and counted running meanwhile.
        A row sent back by an agent (stopping, busy) loses its address and
        waits again (the gate drops it from `admitted`).
    -   COVER_EARLY kills the oldest running run (a KILL to its agent; its
        triggerMsg says so) and starts the newer one only once that run's
        row is final by its own result, which the agent sends once the run
        stopped (not by the KILL's answer): the limit holds at every
        instant.
    -   A row due once stays due: a pass takes the job's rows whose time
        has come on the wall clock as it reads now, and those an earlier
        pass found due (remembered per job, at most XXL_ADMIT_WAITING,
        in memory: a restart or a takeover forgets them), so a step back
        of the wall clock does not make a row that waited for its slot
        wait for its time a second time (tests/faults/slots_step.sh).
*/

#include "xxl_engine.h"
#include "xxl_admit_rules.h"
#include "xxl_commands.h"

#define XXL_ADMIT_WAITING 256           //  waiting rows a job's pass looks at
#define XXL_ADMIT_JOBS 1024             //  jobs with a maxRunning a pass looks at
#define XXL_ADMIT_RUNNING (XXL_MAX_RUNNING_MAX + 64)

void
engine_admit_start (server_t *self)
{
    self->runs.admitted = engine_id_map (engine_free_item);
    self->runs.killing = engine_id_map (engine_free_item);
    self->runs.slot_jobs = engine_id_map (engine_free_item);
    self->runs.due_rows = engine_id_map (engine_free_item);
    self->runs.admit_at = 0;
    self->runs.due_high = 0;
}

void
engine_admit_stop (server_t *self)
{
    zhashx_destroy (&self->runs.admitted);
    zhashx_destroy (&self->runs.killing);
    zhashx_destroy (&self->runs.slot_jobs);
    zhashx_destroy (&self->runs.due_rows);
}

static void
s_mark (zhashx_t *set, int64_t log_id, int64_t job_id)
{
    if (zhashx_lookup (set, &log_id))
        return;
    int64_t *item = (int64_t *) zmalloc (2 * sizeof (int64_t));
    item [0] = log_id;
    item [1] = job_id;
    zhashx_insert (set, &item [0], item);
}

bool
engine_admit_hold (server_t *self, const xxl_job_t *job, int64_t log_id)
{
    if (job->max_running <= 0 || self->runs.admitting)
        return false;
    //  (back to waiting: an agent gave it back)
    if (log_id > 0 && self->runs.admitted)
        zhashx_delete (self->runs.admitted, &log_id);
    self->runs.admit_at = 0;
    return true;
}

void
engine_admit_on_run (server_t *self, const xxl_event_t *event)
{
    (void) event;
    //  (a slot may have freed: the next pass is due; rows of jobs without
    //  a maxRunning cost one cheap query a turn at most)
    if (self->runs.admit_at > zclock_mono () + XXL_ADMIT_MS)
        return;                         //  (no job with a maxRunning held)
    self->runs.admit_at = 0;
}

int64_t
engine_admit_wake (server_t *self)
{
    return self->runs.admit_at;
}

//  Of the job's members of set: those in ids count (returned), the others
//  are forgotten (their rows moved on)
static int64_t
s_sync (zhashx_t *set, int64_t job_id, const int64_t *ids, size_t count)
{
    int64_t present = 0;
    int64_t gone [64];
    size_t gone_count = 0;
    for (int64_t *item = (int64_t *) zhashx_first (set); item;
         item = (int64_t *) zhashx_next (set)) {
        if (item [1] != job_id)
            continue;
        bool found = false;
        for (size_t i = 0; i < count && !found; i++)
            found = ids [i] == item [0];
        if (found)
            present++;
        else
        if (gone_count < 64)
            gone [gone_count++] = item [0];
    }
    for (size_t i = 0; i < gone_count; i++)
        zhashx_delete (set, &gone [i]);
    return present;
}

//  A job's waiting rows that its last pass found due, oldest first
typedef struct {
    int64_t job_id;                     //  (the key: first)
    size_t count;
    int64_t ids [];                     //  count of them
} due_rows_t;

static int
s_id_order (const void *a, const void *b)
{
    int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
    return (x > y) - (x < y);
}

//  The job's waiting rows that are due, oldest first (at most
//  XXL_ADMIT_WAITING): those whose time has come on the wall clock as it
//  reads now, and those an earlier pass found due, whose time a step
//  back put ahead of the clock again (the pass reads up to the latest
//  wall-clock time a pass judged by, and keeps of the rows between the
//  two only those).  The list is remembered as the job's.  -1: a store
//  error.
static int
s_waiting (server_t *self, int64_t job_id, int64_t *ids, size_t *count)
{
    int64_t now = engine_now ();
    due_rows_t *seen = (due_rows_t *) zhashx_lookup (self->runs.due_rows, &job_id);
    int64_t before = seen && self->runs.due_high > now? self->runs.due_high: now;
    if (xxl_store_log_slot_ids (self->store, job_id, 0, before, ids, XXL_ADMIT_WAITING,
                                count))
        return -1;
    if (before > now) {
        assert (seen);
        //  (the rows due now and those found due before, sorted: a search
        //  each, not a walk)
        int64_t known [2 * XXL_ADMIT_WAITING];
        size_t known_count = 0;
        if (xxl_store_log_slot_ids (self->store, job_id, 0, now, known, XXL_ADMIT_WAITING,
                                    &known_count))
            return -1;
        assert (seen->count <= XXL_ADMIT_WAITING);
        memcpy (known + known_count, seen->ids, seen->count * sizeof (int64_t));
        known_count += seen->count;
        qsort (known, known_count, sizeof (int64_t), s_id_order);
        size_t kept = 0;
        for (size_t i = 0; i < *count; i++)
            if (bsearch (&ids [i], known, known_count, sizeof (int64_t), s_id_order))
                ids [kept++] = ids [i];
        *count = kept;
    }
    if (now > self->runs.due_high)
        self->runs.due_high = now;
    if (seen && seen->count == *count && memcmp (seen->ids, ids, *count * sizeof (int64_t)) == 0)
        return 0;
    if (seen)
        zhashx_delete (self->runs.due_rows, &job_id);
    if (*count == 0)
        return 0;
    assert (*count <= XXL_ADMIT_WAITING);
    seen = (due_rows_t *) zmalloc (sizeof (due_rows_t) + *count * sizeof (int64_t));
    seen->job_id = job_id;
    seen->count = *count;
    memcpy (seen->ids, ids, *count * sizeof (int64_t));
    zhashx_insert (self->runs.due_rows, &seen->job_id, seen);
    return 0;
}

//  Fails a waiting row (never sent) with text
static void
s_fail (server_t *self, int64_t log_id, int64_t job_id, const char *text)
{
    if (xxl_store_log_fail_unsent (self->store, log_id, XXL_CODE_FAIL, text) == 1)
        engine_run_ended_job (self, log_id, job_id, XXL_END_TRIGGER, XXL_CODE_FAIL,
                              engine_now ());
}

//  Kills a running run to cover it; its row ends when its agent's answer
//  (or the run's own result, or the lost-run monitor) ends it
static void
s_kill (server_t *self, int64_t log_id, int64_t job_id, int64_t max_running)
{
    s_mark (self->runs.killing, log_id, job_id);
    xxl_log_t log;
    if (xxl_store_log_load (self->store, log_id, &log))
        return;
    char text [160];
    snprintf (text, sizeof text, "\nkilled: covered by a newer trigger (maxRunning %" PRId64
              ", block strategy COVER_EARLY)\n", max_running);
    if (*log.executor_address) {
        char reason [160];
        snprintf (reason, sizeof reason, "%.*s", (int) strlen (text) - 2, text + 1);
        engine_kill_send (self, log.executor_address, log_id, job_id, "cover", reason);
    }
    //  (an unanswered row's section stays last: its answer replaces it)
    int64_t before = log.trigger_code == 0? engine_section_last_chars (log.trigger_msg): 0;
    xxl_store_log_insert_trigger_msg (self->store, log_id, before, text);
    xxl_log_free (&log);
}

//  One job's pass: its slots counted from the store, its waiting rows
//  admitted, failed or covered.  fenced: whether this pass checked the
//  leases in the store already.
static void
s_admit_job (server_t *self, int64_t job_id, bool *fenced)
{
    int64_t waiting [XXL_ADMIT_WAITING];
    size_t count = 0;
    if (s_waiting (self, job_id, waiting, &count))
        return;
    //  Admitted rows a probing router still routes hold their slot
    int64_t pooled = s_sync (self->runs.admitted, job_id, waiting, count);
    size_t kept = 0;
    for (size_t i = 0; i < count; i++)
        if (!zhashx_lookup (self->runs.admitted, &waiting [i]))
            waiting [kept++] = waiting [i];
    count = kept;
    if (count == 0) {
        if (zhashx_size (self->runs.killing))
            s_sync (self->runs.killing, job_id, NULL, 0);
        return;
    }
    if (!*fenced) {
        //  Under the write lock, the share is still ours (a scheduler
        //  frozen past its lease admits nothing once it wakes)
        engine_lease_fence (self);
        *fenced = true;
    }
    if (!engine_lease_holds (self, job_id))
        return;
    xxl_job_t job;
    if (xxl_store_job_load (self->store, job_id, &job))
        return;
    static int64_t running [XXL_ADMIT_RUNNING];
    size_t running_count = 0;
    if (xxl_store_log_slot_ids (self->store, job_id, 1, 0, running, XXL_ADMIT_RUNNING,
                                &running_count)) {
        xxl_job_free (&job);
        return;
    }
    int64_t killing = s_sync (self->runs.killing, job_id, running, running_count);
    xxl_admit_t decision = xxl_admit_decide (job.executor_block_strategy, job.max_running,
                                             (int64_t) running_count + pooled,
                                             (int64_t) count, killing);
    size_t first_admit = decision.covered? (size_t) decision.fail: 0;
    size_t first_fail = decision.covered? 0: (size_t) decision.admit;
    char text [256];
    snprintf (text, sizeof text, "\n>>>>>>>>>>> Trigger <<<<<<<<<<<\ntrigger failed: %s"
              " (maxRunning %" PRId64 ", block strategy %s)\n",
              decision.covered? "covered by a newer trigger, max running reached"
                              : "max running reached",
              job.max_running, job.executor_block_strategy);
    for (size_t i = first_fail; i < first_fail + (size_t) decision.fail; i++)
        s_fail (self, waiting [i], job_id, text);
    for (size_t i = first_admit; i < first_admit + (size_t) decision.admit; i++) {
        self->runs.admitting = true;
        engine_dispatch_row (self, waiting [i], NULL, NULL);
        self->runs.admitting = false;
        s_mark (self->runs.admitted, waiting [i], job_id);
    }
    int64_t kills = decision.kill;
    for (size_t i = 0; i < running_count && kills > 0; i++)
        if (!zhashx_lookup (self->runs.killing, &running [i])) {
            s_kill (self, running [i], job_id, job.max_running);
            kills--;
        }
    xxl_job_free (&job);
}

//  Remembers the held jobs of `jobs` as this pass's; returns into gone
//  those of the last pass no longer listed, still held
static size_t
s_slot_jobs_gone (server_t *self, const int64_t *jobs, size_t count, int64_t *gone,
                  size_t max)
{
    size_t gone_count = 0;
    for (int64_t *item = (int64_t *) zhashx_first (self->runs.slot_jobs); item;
         item = (int64_t *) zhashx_next (self->runs.slot_jobs)) {
        bool found = false;
        for (size_t i = 0; i < count && !found; i++)
            found = jobs [i] == item [0];
        if (!found && gone_count < max && engine_lease_holds (self, item [0]))
            gone [gone_count++] = item [0];
    }
    zhashx_purge (self->runs.slot_jobs);
    for (size_t i = 0; i < count; i++)
        if (engine_lease_holds (self, jobs [i]))
            s_mark (self->runs.slot_jobs, jobs [i], jobs [i]);
    return gone_count;
}

//  Sends every waiting row of a job that no longer has a maxRunning
static void
s_release (server_t *self, int64_t job_id, bool *fenced)
{
    if (!*fenced) {
        engine_lease_fence (self);
        *fenced = true;
    }
    if (!engine_lease_holds (self, job_id))
        return;
    int64_t waiting [XXL_ADMIT_WAITING];
    size_t count = 0;
    if (s_waiting (self, job_id, waiting, &count))
        return;
    self->runs.admitting = true;
    for (size_t i = 0; i < count; i++)
        if (!zhashx_lookup (self->runs.admitted, &waiting [i]))
            engine_dispatch_row (self, waiting [i], NULL, NULL);
    self->runs.admitting = false;
    //  (more than a pass's worth: the next pass goes on)
    if (count == XXL_ADMIT_WAITING)
        s_mark (self->runs.slot_jobs, job_id, job_id);
    else
        zhashx_delete (self->runs.due_rows, &job_id);
}

//  A pass over the jobs with a maxRunning of the shares held (at most one
//  per XXL_ADMIT_MS while some are held, else per XXL_ADMIT_IDLE_MS, and
//  at once after a local trigger or run end)
void
engine_admit_run (server_t *self)
{
    int64_t now = zclock_mono ();
    if (now < self->runs.admit_at || self->stopping)
        return;
    self->runs.admit_at = now + XXL_ADMIT_IDLE_MS;
    if (now < self->warm_until) {
        //  (agents still reconnecting: nothing is admitted to be failed
        //  for want of them)
        self->runs.admit_at = self->warm_until;
        return;
    }
    int64_t jobs [XXL_ADMIT_JOBS];
    size_t count = 0;
    if (xxl_store_job_slot_ids (self->store, 0, jobs, XXL_ADMIT_JOBS, &count))
        return;
    bool fenced = false;
    for (size_t i = 0; i < count; i++) {
        if (!engine_lease_holds (self, jobs [i]))
            continue;
        self->runs.admit_at = now + XXL_ADMIT_MS;
        s_admit_job (self, jobs [i], &fenced);
    }
    //  A held job whose maxRunning went to 0 (or that went) since the last
    //  pass: its waiting rows go now, as any trigger's (the gate no longer
    //  holds them; a removed job's fail as such)
    int64_t gone [XXL_ADMIT_JOBS];
    size_t gone_count = s_slot_jobs_gone (self, jobs, count, gone, XXL_ADMIT_JOBS);
    for (size_t i = 0; i < gone_count; i++)
        s_release (self, gone [i], &fenced);
    //  (the rows found due of jobs whose share went: its holder's now)
    size_t stale = 0;
    for (due_rows_t *seen = (due_rows_t *) zhashx_first (self->runs.due_rows);
         seen && stale < XXL_ADMIT_JOBS; seen = (due_rows_t *) zhashx_next (self->runs.due_rows))
        if (!engine_lease_holds (self, seen->job_id))
            gone [stale++] = seen->job_id;
    for (size_t i = 0; i < stale; i++)
        zhashx_delete (self->runs.due_rows, &gone [i]);
}
