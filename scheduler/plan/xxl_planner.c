/*  xxl_planner.c -- planned fires: scan, window, timer, fire.

    The planner reads jobs due within planner/ahead (at most
    planner/preread, the misfire bound), writes their
    rows ahead (under the store's write lock), prepares each fire's RUN and
    puts it on the timer; at the instant the prepared RUNs leave with no
    store access.  Misfires follow the job's strategy.  Recovery after a
    start decides what of the last run's rows goes again.
*/

#include "xxl_engine.h"
#include "xxl_plan_rules.h"

static void s_snap_cancel (server_t *self, snap_t *snap);
static void s_plan_encode (server_t *self, plan_t *plan);
static void s_plan_fire (server_t *self, snap_t *snap, const char *type, int64_t planned,
                         int64_t fire_at, int64_t now);
static int64_t s_snap_next (snap_t *snap, int64_t after, char *why, size_t whylen);
static bool s_plan_job (server_t *self, snap_t *snap, int64_t now);
static snap_t *s_snap_put (server_t *self, xxl_job_t *job);
static snap_t *s_snap_get (server_t *self, int64_t id, int64_t update_time);

//  Planner
//
//  Each scan reads the running jobs due within planner/ahead, and
//  for each planned instant writes the trigger's log row (with its
//  scheduleTime) in the same transaction that advances the job's next
//  fire time: an outbox.  Rows due now are sent at once; the others go
//  on the timer heap, prepared (routed) when planned where they can be
//  and sent when due.  A crash loses nothing: the
//  rows are in the store, and engine_recover takes them up again.

//  Remembers a FIX_DELAY job that waits for its run to end
void
engine_waiting_add (server_t *self, int64_t job_id)
{
    if (!zhashx_lookup (self->planner.waiting, &job_id)) {
        int64_t *key = (int64_t *) zmalloc (sizeof (int64_t));
        *key = job_id;
        zhashx_insert (self->planner.waiting, key, key);
    }
}

//  Reads every FIX_DELAY job the store has waiting for a run's end into
//  self->planner.waiting: at the start, and when shares are taken (a dead
//  scheduler's waiting jobs are this one's to resume once it holds every
//  share, when engine_fix_delay_release looks only there)
void
engine_waiting_load (server_t *self)
{
    int64_t waiting [4096], last = 0;
    size_t count = 0;
    do {
        if (xxl_store_job_marked_ids (self->store, XXL_WAITING, last, waiting, 4096, &count))
            return;
        for (size_t i = 0; i < count; i++)
            engine_waiting_add (self, last = waiting [i]);
    } while (count == 4096);
}

//  Marks a snapshot's plans void: none of them is sent, and the
//  instants' batches that hold some no longer go as built
static void
s_snap_cancel (server_t *self, snap_t *snap)
{
    snap->cancelled = true;
    for (void *item = zlistx_first (snap->plan_ids); item; item = zlistx_next (snap->plan_ids)) {
        int64_t log_id = (int64_t) (intptr_t) item;
        plan_t *plan = (plan_t *) zhashx_lookup (self->planner.plans, &log_id);
        if (plan && plan->prebuilt)
            plan->prebuilt->dirty = true;
    }
}

//  Unsent planned rows of a job (its schedule changed or it stopped);
//  `until`: rows planned up to then with an address have left (no
//  planned row goes before its time)
static void
s_plan_forget (server_t *self, int64_t job_id, int64_t until)
{
    //  This scheduler's plans of the job that were not sent: their rows go
    //  (their timer entries stay; when due they find nothing)
    snap_t *snap = (snap_t *) zhashx_lookup (self->planner.snaps, &job_id);
    if (snap) {
        s_snap_cancel (self, snap);     //  engine_fire sends none of its plans
        void *item;
        while ((item = zlistx_first (snap->plan_ids))) {
            int64_t log_id = (int64_t) (intptr_t) item;
            xxl_store_log_drop_unsent (self->store, log_id);
            //  (its destructor takes it off plan_ids)
            if (!zhashx_lookup (self->planner.plans, &log_id))
                zlistx_delete (snap->plan_ids, zlistx_cursor (snap->plan_ids));
            else
                zhashx_delete (self->planner.plans, &log_id);
        }
    }
    zhashx_delete (self->planner.snaps, &job_id);
    //  Any scheduler's unsent rows: no address yet, or not due yet
    xxl_store_job_drop_plans (self->store, job_id, until);
}

void
engine_plan_forget (server_t *self, int64_t job_id)
{
    //  (a row this scheduler sent has left, whatever a step back of the
    //  wall clock did to "now": until the clock is past where it stood
    //  before the step, such a row's time may lie ahead of it)
    int64_t now = engine_now ();
    int64_t sent = now < self->planner.back_until? engine_runs_sent_until (self, job_id): 0;
    s_plan_forget (self, job_id, sent > now? sent: now);
}

//  After a step of the wall clock: the FIX_DELAY jobs' fires planned and
//  not sent go `step` later.  Each such plan's row goes (as a stop's) and
//  its job's next time becomes the row's time plus the step, which the
//  scan plans again; a run in flight is not a plan (its end writes the
//  next time on the clock as it is then).  The jobs that wait for their
//  delay unplanned are job_delay_shift's.  The jobs stay in `waiting`
//  (harmless once planned again): if the turn's commit fails, the row
//  comes back with no plan in memory, the sweep sends it late, and its
//  end resumes the job.
static void
s_delay_replan (server_t *self, int64_t step)
{
    size_t count = 0, size = zhashx_size (self->planner.plans);
    int64_t *jobs = (int64_t *) malloc ((size? size: 1) * 2 * sizeof (int64_t));
    assert (jobs);
    int64_t *rows = jobs + (size? size: 1);
    for (plan_t *plan = (plan_t *) zhashx_first (self->planner.plans); plan;
         plan = (plan_t *) zhashx_next (self->planner.plans))
        if (!plan->snap->cancelled && streq (plan->snap->job.schedule_type, "FIX_DELAY")) {
            assert (count < size);
            jobs [count] = plan->snap->job.id;
            rows [count++] = plan->log_id;
        }
    for (size_t i = 0; i < count; i++) {
        xxl_log_t log;
        int64_t when = 0;
        if (xxl_store_log_load (self->store, rows [i], &log) == 0) {
            when = log.schedule_time;
            xxl_log_free (&log);
        }
        xxl_job_t job;
        if (when > 0 && xxl_store_job_load (self->store, jobs [i], &job) == 0) {
            int64_t delay_ms = atoll (job.schedule_conf) * 1000;
            xxl_job_free (&job);
            //  (the job's next time: `when + step`, written while its row
            //  is there and the job waits for it)
            xxl_store_job_delay_resume (self->store, rows [i], when + step - delay_ms,
                                        XXL_WAITING);
        }
        //  (a FIX_DELAY job with a plan has no run in flight)
        s_plan_forget (self, jobs [i], engine_now ());
    }
    free (jobs);
}

void
engine_plan_on_step (server_t *self, int64_t step)
{
    xxl_timer_shift (self->planner.timer, step);
    self->planner.delay_shift += step;
    self->planner.next_scan = 0;
    //  (rows sent before a step back may carry times up to where the
    //  clock stood: engine_plan_forget)
    int64_t before = engine_now () - step;
    if (step < 0 && before > self->planner.back_until)
        self->planner.back_until = before;
}

void
engine_plan_step_apply (server_t *self)
{
    if (!self->planner.delay_shift)
        return;
    //  (the waiting jobs' next times move, then the planned ones' fires;
    //  under the lease fence, as every write of the shares' jobs.  With no
    //  share, or none left this turn, nothing is this scheduler's to move:
    //  the step is dropped, not kept for shares taken later, whose jobs'
    //  times their holder wrote)
    if (!engine_lease_held (self) || !engine_lease_fence (self)) {
        self->planner.delay_shift = 0;
        return;
    }
    if (xxl_store_job_delay_shift (self->store, engine_lease_held (self),
                                   self->planner.delay_shift, XXL_WAITING) < 0)
        return;
    s_delay_replan (self, self->planner.delay_shift);
    self->planner.delay_shifted += self->planner.delay_shift;
    self->planner.delay_shift = 0;
}

//  The planner's handlers of the engine's events (xxl_events.h)
void
engine_plan_on_job (server_t *self, const xxl_event_t *event)
{
    if (event->what & XXL_CHANGED_PLANS)
        engine_plan_forget (self, event->job_id);
    if (event->what & XXL_CHANGED_SCHEDULE)
        self->planner.next_scan = 0;
}

void
engine_plan_on_run (server_t *self, const xxl_event_t *event)
{
    engine_fix_delay_release (self, event->log_id, event->now);
}

//  Shares given back deaf (xxl_lease_rules.h, xxl_lease_deaf), the lease
//  still ours in this transaction: the planned rows this scheduler has
//  RUNs of in flight may have left (into the partition: their agents may
//  take them once it heals), so their share's fired_sent is raised to
//  cover them.  The new holder's recovery then re-sends each to its own
//  agent, which refuses a logId it has (nothing runs twice), instead of
//  asking the agent about a row past the window and dropping it by the
//  misfire rule when it never had it (a planned second lost while this
//  scheduler still waits for its answer)
static void
s_given_sent (server_t *self, uint64_t mask)
{
    int64_t sent = 0;
    zhashx_t *flying = engine_runs_in_flight (self);
    for (void *item = zhashx_first (flying); item; item = zhashx_next (flying)) {
        xxl_log_t log;
        if (xxl_store_log_load (self->store, *(const int64_t *) zhashx_cursor (flying), &log))
            continue;
        if ((engine_share_bit (log.job_id) & mask) && log.trigger_code == 0
        &&  log.schedule_time > sent)
            sent = log.schedule_time;
        xxl_log_free (&log);
    }
    zhashx_destroy (&flying);
    if (sent > 0)
        xxl_store_lease_fired (self->store, mask, 0, sent);
}

//  Shares lost: the plans and snapshots of their jobs go, without a store
//  write (their rows are the new holder's); given back deaf, what this
//  scheduler may have sent of them is recorded first (s_given_sent).
//  Every plan of them goes, a cancelled snapshot's too (one a job's change
//  replaced is no longer in the cache): from here on no plan of a share
//  not held exists (the planner makes none: s_plan_fire), which the fires
//  assert
void
engine_plan_on_lost (server_t *self, const xxl_event_t *event)
{
    if (event->deaf)
        s_given_sent (self, event->mask);
    zlistx_t *gone = zlistx_new ();
    for (plan_t *plan = (plan_t *) zhashx_first (self->planner.plans); plan;
         plan = (plan_t *) zhashx_next (self->planner.plans))
        if (engine_share_bit (plan->snap->job.id) & event->mask)
            zlistx_add_end (gone, (void *) (intptr_t) plan->log_id);
    for (void *item = zlistx_first (gone); item; item = zlistx_next (gone)) {
        int64_t log_id = (int64_t) (intptr_t) item;
        zhashx_delete (self->planner.plans, &log_id);   //  (takes it off its plan_ids)
        (*event->count)++;
    }
    zlistx_purge (gone);
    for (snap_t *snap = (snap_t *) zhashx_first (self->planner.snaps); snap;
         snap = (snap_t *) zhashx_next (self->planner.snaps))
        if (engine_share_bit (snap->job.id) & event->mask)
            zlistx_add_end (gone, snap);
    for (snap_t *snap = (snap_t *) zlistx_first (gone); snap;
         snap = (snap_t *) zlistx_next (gone)) {
        snap->cancelled = true;
        int64_t id = snap->job.id;
        zhashx_delete (self->planner.snaps, &id);
    }
    zlistx_destroy (&gone);
}

//  After a FIX_DELAY job's scheduled run ended (or failed to start), its
//  next run comes `delay` seconds later.  self->planner.waiting holds the jobs
//  this scheduler's planner set waiting (and, from its start, every job
//  the store had waiting); a job another scheduler sharing the store
//  planned waits there only, and its run's result may come here: while
//  this scheduler does not hold every share, each result asks the store
//  (the resume changes nothing unless the row's job is a FIX_DELAY job
//  still waiting)
void
engine_fix_delay_release (server_t *self, int64_t log_id, int64_t now)
{
    xxl_fix_delay_t rule = xxl_plan_fix_delay (engine_lease_held (self),
                                               zhashx_size (self->planner.waiting) > 0);
    if (rule == XXL_FIXDELAY_SHARED) {
        xxl_store_job_delay_resume (self->store, log_id, now, XXL_WAITING);
        if (zhashx_size (self->planner.waiting)) {
            int64_t job_id = xxl_store_log_job_id (self->store, log_id);
            zhashx_delete (self->planner.waiting, &job_id);
        }
        return;
    }
    //  Alone, most callbacks belong to no waiting FIX_DELAY job: skip the query
    if (rule == XXL_FIXDELAY_SKIP)
        return;
    int64_t job_id = xxl_store_log_job_id (self->store, log_id);
    if (!zhashx_lookup (self->planner.waiting, &job_id))
        return;
    zhashx_delete (self->planner.waiting, &job_id);
    xxl_store_job_delay_resume (self->store, log_id, now, XXL_WAITING);
}

//  Encodes a prepared plan's TriggerParam into it
static void
s_plan_encode (server_t *self, plan_t *plan)
{
    size_t size;
    const unsigned char *tp = engine_encode_tp (self, &plan->snap->job, plan->log_id,
                                                plan->snap->job.executor_param, plan->shard_index,
                                                plan->shard_total, &size);
    plan->tp = (unsigned char *) malloc (size);
    if (plan->tp) {
        memcpy (plan->tp, tp, size);
        plan->tp_size = size;
    }
}

//  Prepares plans that were made unprepared (while agents reconnected
//  after a start, or with no agent connected) once routing can be done:
//  up to `budget` a turn, each fire still more than 50 ms away
void
engine_plan_prepare (server_t *self, int budget)
{
    if (zclock_mono () < self->warm_until)
        return;
    int64_t soon = engine_now () + 50;
    void *item;
    while (budget-- > 0 && (item = zlistx_first (self->planner.unprepared))) {
        if (budget % 64 == 0)
            engine_fire_check (self);
        int64_t log_id = (int64_t) (intptr_t) item;
        plan_t *plan = (plan_t *) zhashx_lookup (self->planner.plans, &log_id);
        zlistx_delete (self->planner.unprepared, zlistx_cursor (self->planner.unprepared));
        if (!plan || plan->tp || plan->snap->cancelled)
            continue;
        const xxl_job_t *job = &plan->snap->job;
        if (job->max_running > 0)
            continue;                   //  (routed when admitted: runs/xxl_admit.c)
        int64_t when = xxl_store_log_plan_time (self->store, log_id);
        if (when <= soon)
            continue;                   //  (gone, sent, or too close: fires as it is)
        const char *const *addresses;
        char **manual;
        size_t count = engine_job_addresses (self, job, &addresses, &manual);
        const char *address;
        char note [2048];
        size_t rid_size;
        if (engine_route_pick (self, job, log_id, plan->shard_index, plan->sharded, addresses, count,
                               &address, note, sizeof note) == ROUTE_ADDRESS
        &&  xxl_registry_route (self->registry, address, &rid_size)) {
            char *section = engine_section (note, address, XXL_OK, NULL);
            if (xxl_store_log_plan_route (self->store, log_id, address, section) == 1) {
                plan->address = strdup (address);
                plan->note = strdup (note);
                plan->turn = self->turn;
                s_plan_encode (self, plan);
                //  (a failed commit drops the plan: the row then fires by
                //  the store's path)
                zlistx_add_end (self->planner.turn_plans, (void *) (intptr_t) log_id);
            }
            zstr_free (&section);
        }
        if (manual)
            engine_free_addresses (manual, count);
    }
}

//  Writes one planned trigger; due ones go now, the others on the timer
//  with what their dispatch needs (plan_t).  A row that a non-probing
//  router can route now is written with its address and its TriggerParam
//  encoded: at its time engine_fire sends it without touching the store.
static void
s_plan_fire (server_t *self, snap_t *snap, const char *type, int64_t planned,
             int64_t fire_at, int64_t now)
{
    if (!engine_lease_holds (self, snap->job.id))
        return;                         //  (lost mid-scan: its next holder's)
    //  While agents reconnect after a start, everything goes by the timer,
    //  which holds a trigger until its group has an agent
    bool warming = zclock_mono () < self->warm_until;
    trigger_args_t args = { .trigger_type = type, .fail_retry_count = -1,
                            .shard_index = -1, .shard_total = -1,
                            .schedule_time = planned, .defer = fire_at > now || warming,
                            .planned_new = streq (type, "CRON") };
    args.prepare = args.defer && !warming;
    if (!args.defer)
        engine_fired_cover (self, now);
    //  (engine_trigger fills ids and prepared up to the rows it made:
    //  nothing past them is read)
    int64_t ids [1024];
    prepared_t prepared [1024];
    int made = engine_trigger (self, &snap->job, &args, ids, prepared, 1024);
    if (made < 0) {
        //  (jobId, scheduleTime) exists: another scheduler or an earlier
        //  turn planned it already
        return;
    }
    if (!engine_lease_holds (self, snap->job.id)) {
        //  The share was lost while the rows were written (a fire checked
        //  the lease meanwhile): the rows are its next holder's, whose
        //  recovery routes them at their time; no plan of them is kept
        //  here, where nothing would drop it (engine_plan_on_lost ran)
        for (int i = 0; i < made && i < 1024; i++) {
            free (prepared [i].address);
            free (prepared [i].note);
        }
        return;
    }
    if (args.unexpanded) {
        //  No plan: at its time engine_plan_due makes it one row per agent
        assert (made == 1 && args.defer && !prepared [0].address);
        xxl_timer_push (self->planner.timer, fire_at, ids [0]);
        return;
    }
    bool sharded = xxl_routers_is_broadcast (engine_runs_routers (self), snap->job.executor_route_strategy);
    for (int i = 0; i < made && i < 1024; i++) {
        if (!args.defer) {
            free (prepared [i].address);
            free (prepared [i].note);
            continue;
        }
        plan_t *plan = (plan_t *) zmalloc (sizeof (plan_t));
        plan->log_id = ids [i];
        plan->snap = snap;
        snap->refs++;
        plan->sharded = sharded;
        plan->shard_index = i;
        plan->shard_total = made;
        plan->turn = self->turn;
        plan->handle = zlistx_add_end (snap->plan_ids, (void *) (intptr_t) plan->log_id);
        plan->address = prepared [i].address;
        plan->note = prepared [i].note;
        if (plan->address)
            s_plan_encode (self, plan);
        else
            zlistx_add_end (self->planner.unprepared, (void *) (intptr_t) plan->log_id);
        zhashx_delete (self->planner.plans, &plan->log_id);
        zhashx_insert (self->planner.plans, &plan->log_id, plan);
        zlistx_add_end (self->planner.turn_plans, (void *) (intptr_t) plan->log_id);
        if (!engine_instant_add (self, plan, fire_at))
            xxl_timer_push (self->planner.timer, fire_at, ids [i]);
    }
}

//  Next fire time of a snapshot's job strictly after `after`, or -1
static int64_t
s_snap_next (snap_t *snap, int64_t after, char *why, size_t whylen)
{
    if (!snap->schedule)
        return engine_next_time (&snap->job, after, why, whylen);
    return engine_calendar_next (snap->calendar, snap->job.calendar, snap->schedule,
                                 snap->job.timezone, after, why, whylen);
}

typedef struct {
    snap_t *snap;
    char *why;
    size_t whylen;
} s_next_ctx_t;

static int64_t
s_walk_next (void *ctx, int64_t after)
{
    s_next_ctx_t *next = (s_next_ctx_t *) ctx;
    return s_snap_next (next->snap, after, next->why, next->whylen);
}

//  How far ahead the planner writes rows: planner/ahead, never past the
//  misfire bound planner/preread
int64_t
engine_plan_ahead (server_t *self)
{
    return self->config.ahead_ms < self->config.preread_ms? self->config.ahead_ms
                                                          : self->config.preread_ms;
}

//  Plans one job up to now + ahead (the instants as xxl_plan_walk says;
//  a fire more than preread late is a misfire); true when its next time
//  (in snap) is for the caller to save, in this transaction (after its
//  fires: engine_plan_scan)
static bool
s_plan_job (server_t *self, snap_t *snap, int64_t now)
{
    xxl_job_t *job = &snap->job;
    char why [512] = "";
    //  Its calendar as the store has it now (fires it excludes are never
    //  planned: not run, not misfires); gone: the job stops, unreadable:
    //  planned at the next scan
    int calendar = engine_snap_calendar (self, snap, why, sizeof why);
    if (calendar < 0) {
        zsys_warning ("planner: job %" PRId64 " not planned: %s", job->id, why);
        return false;
    }
    if (calendar > 0) {
        zsys_warning ("planner: job %" PRId64 " stopped: %s", job->id, why);
        xxl_store_job_halt (self->store, job->id, job->trigger_last_time);
        job->trigger_status = 0;
        return false;
    }
    s_next_ctx_t ctx = { snap, why, sizeof why };
    xxl_plan_fire_t fires [1000];
    bool after_run = snap->schedule && xxl_schedule_type_of (snap->schedule)->after_run;
    xxl_plan_walk_t walk = xxl_plan_walk (job->trigger_next_time, job->trigger_last_time, now,
                                          engine_plan_ahead (self), self->config.preread_ms,
                                          job->misfire_strategy,
                                          after_run, s_walk_next, &ctx, fires, 1000);
    for (size_t i = 0; i < walk.fires; i++) {
        int64_t planned = fires [i].planned;
        if (fires [i].step == XXL_PLAN_MISFIRE_NOW)
            s_plan_fire (self, snap, "MISFIRE", planned, now, now);
        else
        if (fires [i].step == XXL_PLAN_MISFIRE_SKIP) {
            //  (a scheduler that cannot keep up skips thousands a second:
            //  the lines are limited, xxl_fires_skipped_total counts all)
            self->metrics.fires_skipped++;
            char when [128];
            engine_info_limited (&self->planner.log_misfire, "planner: job %" PRId64
                                 " misfired at %s (%" PRId64 " ms late); DO_NOTHING", job->id,
                                 engine_iso_time (planned, job->timezone, when, sizeof when),
                                 now - planned);
        }
        else
            s_plan_fire (self, snap, "CRON", planned, planned, now);
    }
    if (walk.next == XXL_WAITING && after_run && walk.fires)
        engine_waiting_add (self, job->id);
    if (walk.ended) {
        zsys_warning ("planner: job %" PRId64 " stopped: %s", job->id, why);
        xxl_store_job_halt (self->store, job->id, walk.last);
        job->trigger_status = 0;
        return false;
    }
    job->trigger_last_time = walk.last;
    job->trigger_next_time = walk.next;
    return true;
}

//  Makes a snapshot of *job (taking its strings; *job is emptied) and
//  puts it in the cache in place of any older one
static snap_t *
s_snap_put (server_t *self, xxl_job_t *job)
{
    snap_t *old = (snap_t *) zhashx_lookup (self->planner.snaps, &job->id);
    if (old && old->job.update_time == job->update_time && !old->cancelled) {
        //  Unchanged: the plans that share it stay valid
        xxl_job_free (job);
        memset (job, 0, sizeof *job);
        old->read_at = zclock_mono ();
        return old;
    }
    if (old)
        s_snap_cancel (self, old);      //  changed: its unsent rows were deleted
    snap_t *snap = (snap_t *) zmalloc (sizeof (snap_t));
    snap->job = *job;
    memset (job, 0, sizeof *job);
    char why [256];
    snap->schedule = xxl_schedule_new (snap->job.schedule_type, snap->job.schedule_conf,
                                       snap->job.timezone, why, sizeof why);
    snap->refs = 1;                     //  the cache's
    snap->plan_ids = zlistx_new ();
    snap->read_at = zclock_mono ();
    //  Jobs triggered by hand join the cache too: keep it bounded.  The
    //  idle ones go at the limit (never those whose plans wait to be sent:
    //  engine_snap_idle); the limit is then half as much again as what
    //  stays, so that a cache of busy snapshots (a herd of more jobs than
    //  the cap, due at once) is walked once per half its size in puts, not
    //  at each put
    if (zhashx_size (self->planner.snaps) >= self->planner.snaps_limit) {
        zlistx_t *idle = zlistx_new ();
        for (snap_t *cached = (snap_t *) zhashx_first (self->planner.snaps); cached;
             cached = (snap_t *) zhashx_next (self->planner.snaps))
            if (zlistx_size (cached->plan_ids) == 0)
                zlistx_add_end (idle, cached);
        for (snap_t *cached = (snap_t *) zlistx_first (idle); cached;
             cached = (snap_t *) zlistx_next (idle)) {
            int64_t id = cached->job.id;
            zhashx_delete (self->planner.snaps, &id);
        }
        zlistx_destroy (&idle);
        size_t kept = zhashx_size (self->planner.snaps);
        self->planner.snaps_limit = kept + kept / 2 > XXL_SNAPS_CAP? kept + kept / 2: XXL_SNAPS_CAP;
    }
    //  (delete, then insert: the map's key points into the snapshot)
    zhashx_delete (self->planner.snaps, &snap->job.id);
    zhashx_insert (self->planner.snaps, &snap->job.id, snap);
    return snap;
}

//  The planner's snapshot of job id, read again when the job changed
//  since (update_time differs); NULL when the job is gone
static snap_t *
s_snap_get (server_t *self, int64_t id, int64_t update_time)
{
    snap_t *snap = (snap_t *) zhashx_lookup (self->planner.snaps, &id);
    if (snap && snap->job.update_time == update_time) {
        snap->read_at = zclock_mono ();
        return snap;
    }
    xxl_job_t job;
    if (xxl_store_job_load (self->store, id, &job)) {
        zhashx_delete (self->planner.snaps, &id);
        return NULL;
    }
    return s_snap_put (self, &job);
}

//  A job for a trigger: the cached snapshot when it was read or confirmed
//  current less than a second ago (this scheduler's own job writes drop
//  it at once; another scheduler's show within that second), else read
//  again.  Returns a snapshot the caller releases with engine_snap_release, or
//  NULL: *rc 1 when the job is absent, -1 on a store error.
snap_t *
engine_snap_fresh (server_t *self, int64_t id, int *rc)
{
    snap_t *snap = (snap_t *) zhashx_lookup (self->planner.snaps, &id);
    if (!snap || zclock_mono () - snap->read_at >= 1000) {
        xxl_job_t job;
        *rc = xxl_store_job_load (self->store, id, &job);
        if (*rc) {
            zhashx_delete (self->planner.snaps, &id);
            return NULL;
        }
        snap = s_snap_put (self, &job);
    }
    *rc = 0;
    snap->refs++;
    return snap;
}

//  Jobs planned per turn: a scan of many jobs goes in chunks of a few
//  milliseconds each, and due triggers fire in between
#define XXL_SCAN_BATCH 512
#define XXL_SCAN_MS 50

void
engine_plan_scan (server_t *self)
{
    int64_t now = engine_now ();
    int64_t started = zclock_mono ();
    size_t count = 0;
    xxl_store_due_t *rows = (xxl_store_due_t *) malloc (2 * XXL_SCAN_BATCH * sizeof (xxl_store_due_t));
    if (!rows)
        return;
    //  The chunk's next times, saved after its fires: a statement between
    //  two jobs' fires would write the rows the store keeps a few at a
    //  time (xxl_log_t.planned_new), and the next chunk's read must see them
    xxl_store_due_t *times = rows + XXL_SCAN_BATCH;
    //  Chunks of jobs for up to XXL_SCAN_MS a turn (fires go in between,
    //  engine_fire_check): a scan of many jobs keeps up without holding the
    //  turn's other work for long.  The schedule lock: one writer at a
    //  time (the store's write lock, xxl_store_begin, holds it).
    do {
        //  Only the jobs of the shares this scheduler holds, as the store
        //  says in this transaction (xxl_lease.c)
        if (count == 0 && !engine_lease_fence (self))
            break;
        xxl_store_job_due_in (self->store, engine_lease_held (self),
                              now + engine_plan_ahead (self), rows, XXL_SCAN_BATCH, &count);
        size_t timed = 0;
        for (size_t i = 0; i < count; i++) {
            engine_fire_check (self);
            xxl_store_due_t *row = rows + i;
            //  (a share lost since the chunk was read, its lease ended by
            //  a turn that stood still: its jobs are its new holder's)
            if (!engine_lease_holds (self, row->id))
                continue;
            snap_t *snap = s_snap_get (self, row->id, row->update_time);
            if (!snap)
                continue;
            snap->job.trigger_status = 1;
            snap->job.trigger_next_time = row->trigger_next_time;
            snap->job.trigger_last_time = row->trigger_last_time;
            if (s_plan_job (self, snap, now))
                times [timed++] = (xxl_store_due_t) { .id = row->id,
                    .trigger_last_time = snap->job.trigger_last_time,
                    .trigger_next_time = snap->job.trigger_next_time };
            //  Keep only jobs that fire again soon, or whose plans wait to
            //  be sent (engine_snap_settle drops them after); the rest are read
            //  again
            if (engine_snap_idle (self, snap, now))
                zhashx_delete (self->planner.snaps, &row->id);
        }
        //  (a job whose share went meanwhile keeps the times its rows were
        //  planned from: its next holder plans on from them, past the rows
        //  written here, which its recovery routes)
        for (size_t i = 0; i < timed; i++)
            if (engine_lease_holds (self, times [i].id))
                xxl_store_job_set_times (self->store, times [i].id, times [i].trigger_last_time,
                                         times [i].trigger_next_time);
    } while (count == XXL_SCAN_BATCH && zclock_mono () - started < XXL_SCAN_MS);
    free (rows);
    //  A full batch means more are due: scan again at once
    self->planner.next_scan = xxl_plan_next_scan (count, XXL_SCAN_BATCH, zclock_mono (),
                                                  self->config.scan_ms);
}

