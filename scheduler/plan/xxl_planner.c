/*  xxl_planner.c -- planned fires: scan, pre-read window, timer, fire.

    The planner reads jobs due within the pre-read window, writes their
    rows ahead (under the store's write lock), prepares each fire's RUN and
    puts it on the timer; at the instant the prepared RUNs leave with no
    store access.  Misfires follow the job's strategy.  Recovery after a
    start decides what of the last run's rows goes again.
*/

#include "xxl_engine.h"

static void s_fire_free (plan_t *plan);

static void s_snap_cancel (server_t *self, snap_t *snap);
static void s_plan_encode (server_t *self, plan_t *plan);
static void s_plan_fire (server_t *self, snap_t *snap, const char *type, int64_t planned,
                         int64_t fire_at, int64_t now);
static int64_t s_snap_next (snap_t *snap, int64_t after, char *why, size_t whylen);
static void s_plan_job (server_t *self, snap_t *snap, int64_t now);
static snap_t *s_snap_put (server_t *self, xxl_job_t *job);
static snap_t *s_snap_get (server_t *self, int64_t id, int64_t update_time);
static bool s_row_has_agents (server_t *self, int64_t log_id);
static void s_plan_dispatch (server_t *self, plan_t *plan);
static bool s_job_has_agents (server_t *self, const xxl_job_t *job);
static plan_t *s_plan_take (server_t *self, plan_t *plan);
static void s_fire_plan (server_t *self, int64_t log_id, int64_t when);
static void s_instant_fire (server_t *self, int64_t when);
static void s_plan_fallback (server_t *self, plan_t *plan);
static bool s_snap_idle (server_t *self, const snap_t *snap, int64_t now);
static void s_snap_settle (server_t *self, int64_t job_id);

//  Planner
//
//  Each scan reads the running jobs due within the pre-read window, and
//  for each planned instant writes the trigger's log row (with its
//  scheduleTime) in the same transaction that advances the job's next
//  fire time: an outbox.  Rows due now are routed at once; the others go
//  on the timer heap and are routed when due.  A crash loses nothing: the
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

//  True when the planner has no reason to keep a job's snapshot cached: it
//  does not fire again soon and none of its plans waits to be sent.  A
//  snapshot with plans stays cached until the last of them left, so that
//  a stop, update or removal of its job (engine_plan_forget) and a lost
//  lease find and cancel them: a job that fires a minute later is no
//  longer kept between its fires, and its prepared RUN must not leave
//  after the job changed
static bool
s_snap_idle (server_t *self, const snap_t *snap, int64_t now)
{
    return zlistx_size (snap->plan_ids) == 0
        && (snap->job.trigger_status != 1
            || snap->job.trigger_next_time > now + 2 * self->config.preread_ms);
}

//  After a plan of job_id left (sent): its cached snapshot goes once idle
static void
s_snap_settle (server_t *self, int64_t job_id)
{
    snap_t *snap = (snap_t *) zhashx_lookup (self->planner.snaps, &job_id);
    if (snap && s_snap_idle (self, snap, engine_now ()))
        zhashx_delete (self->planner.snaps, &job_id);
}

//  Unsent planned rows of a job (its schedule changed or it stopped)
void
engine_plan_forget (server_t *self, int64_t job_id)
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
    //  Any scheduler's unsent rows: no address yet, or not due yet (no
    //  planned row goes before its time)
    xxl_store_job_drop_plans (self->store, job_id, engine_now ());
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

void
engine_plan_on_again (server_t *self, const xxl_event_t *event)
{
    xxl_timer_push_after (self->planner.timer, event->now, event->delay, event->log_id);
}

void
engine_plan_on_long_work (server_t *self, const xxl_event_t *event)
{
    (void) event;
    engine_fire_check (self);
}

void
engine_plan_on_ask (server_t *self, const xxl_event_t *event)
{
    engine_ask_answer (self, event->pending, event->code, event->msg);
}

//  Shares taken: their waiting FIX_DELAY jobs (before the recovery, which
//  may end the runs they wait for); their rows: recovered by their own
//  fired marks, then covered as far as ours
void
engine_plan_on_taken (server_t *self, const xxl_event_t *event)
{
    engine_waiting_load (self);
    engine_recover (self, event->mask, event->leases);
    xxl_store_lease_fired (self->store, event->mask, self->planner.fired_until, 0);
}

//  Shares lost: the plans and snapshots of their jobs go, without a store
//  write (their rows are the new holder's)
void
engine_plan_on_lost (server_t *self, const xxl_event_t *event)
{
    zlistx_t *gone = zlistx_new ();
    for (snap_t *snap = (snap_t *) zhashx_first (self->planner.snaps); snap;
         snap = (snap_t *) zhashx_next (self->planner.snaps))
        if (engine_share_bit (snap->job.id) & event->mask)
            zlistx_add_end (gone, snap);
    for (snap_t *snap = (snap_t *) zlistx_first (gone); snap;
         snap = (snap_t *) zlistx_next (gone)) {
        snap->cancelled = true;
        void *item;
        while ((item = zlistx_first (snap->plan_ids))) {
            int64_t log_id = (int64_t) (intptr_t) item;
            if (zhashx_lookup (self->planner.plans, &log_id))
                zhashx_delete (self->planner.plans, &log_id);   //  (takes it off plan_ids)
            else
                zlistx_delete (snap->plan_ids, zlistx_cursor (snap->plan_ids));
            (*event->count)++;
        }
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
    const uint64_t all = ((uint64_t) 1 << XXL_STORE_SHARES) - 1;
    if ((self->leases.held & all) != all) {
        xxl_store_job_delay_resume (self->store, log_id, now, XXL_WAITING);
        if (zhashx_size (self->planner.waiting)) {
            int64_t job_id = xxl_store_log_job_id (self->store, log_id);
            zhashx_delete (self->planner.waiting, &job_id);
        }
        return;
    }
    //  Alone, most callbacks belong to no waiting FIX_DELAY job: skip the query
    if (zhashx_size (self->planner.waiting) == 0)
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
    //  While agents reconnect after a start, everything goes by the timer,
    //  which holds a trigger until its group has an agent
    bool warming = zclock_mono () < self->warm_until;
    trigger_args_t args = { .trigger_type = type, .fail_retry_count = -1,
                            .shard_index = -1, .shard_total = -1,
                            .schedule_time = planned, .defer = fire_at > now || warming };
    args.prepare = args.defer && !warming;
    if (!args.defer)
        engine_fired_cover (self, now);
    int64_t ids [1024];
    prepared_t prepared [1024];
    memset (prepared, 0, sizeof prepared);
    int made = engine_trigger (self, &snap->job, &args, ids, prepared, 1024);
    if (made < 0) {
        //  (jobId, scheduleTime) exists: another scheduler or an earlier
        //  turn planned it already
        return;
    }
    if (args.unexpanded) {
        //  No plan: at its time engine_plan_due makes it one row per agent
        assert (made == 1 && args.defer && !prepared [0].address);
        xxl_timer_push (self->planner.timer, fire_at, ids [0]);
        return;
    }
    bool sharded = xxl_routers_is_broadcast (self->runs.routers, snap->job.executor_route_strategy);
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
    return engine_schedule_next (snap->schedule, snap->job.timezone, after, why, whylen);
}

//  Plans one job up to now + pre-read; saves its next time
static void
s_plan_job (server_t *self, snap_t *snap, int64_t now)
{
    xxl_job_t *job = &snap->job;
    int64_t window = now + self->config.preread_ms;
    int64_t next = job->trigger_next_time;
    int64_t last = job->trigger_last_time;
    char why [512] = "";
    int guard = 0;
    while (next <= window && next != XXL_WAITING && guard++ < 1000) {
        int64_t planned = next;
        if (now > planned + self->config.preread_ms) {
            //  Misfire: too late to fire as planned
            if (streq (job->misfire_strategy, "FIRE_ONCE_NOW"))
                s_plan_fire (self, snap, "MISFIRE", planned, now, now);
            else
                zsys_info ("planner: job %" PRId64 " misfired at %" PRId64 " (%" PRId64
                           " ms late); DO_NOTHING", job->id, planned, now - planned);
            next = s_snap_next (snap, now, why, sizeof why);
        }
        else {
            s_plan_fire (self, snap, "CRON", planned, planned, now);
            next = s_snap_next (snap, planned, why, sizeof why);
        }
        last = planned;
        if (snap->schedule && xxl_schedule_type_of (snap->schedule)->after_run) {
            next = XXL_WAITING;
            engine_waiting_add (self, job->id);
            break;
        }
        if (next < 0)
            break;
    }
    if (next < 0) {
        zsys_warning ("planner: job %" PRId64 " stopped: %s", job->id, why);
        xxl_store_job_halt (self->store, job->id, last);
        job->trigger_status = 0;
        return;
    }
    job->trigger_last_time = last;
    job->trigger_next_time = next;
    xxl_store_job_set_times (self->store, job->id, last, next);
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
    //  Jobs triggered by hand join the cache too: keep it bounded
    if (zhashx_size (self->planner.snaps) >= 65536) {
        //  (never those whose plans wait to be sent: s_snap_idle)
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
    xxl_store_due_t *rows = (xxl_store_due_t *) malloc (XXL_SCAN_BATCH * sizeof (xxl_store_due_t));
    if (!rows)
        return;
    //  Chunks of jobs for up to XXL_SCAN_MS a turn (fires go in between,
    //  engine_fire_check): a scan of many jobs keeps up without holding the
    //  turn's other work for long.  The schedule lock: one writer at a
    //  time (the store's write lock, xxl_store_begin, holds it).
    do {
        //  Only the jobs of the shares this scheduler holds, as the store
        //  says in this transaction (xxl_lease.c)
        if (count == 0 && !engine_lease_fence (self))
            break;
        xxl_store_job_due_in (self->store, self->leases.held, now + self->config.preread_ms, rows,
                              XXL_SCAN_BATCH, &count);
        for (size_t i = 0; i < count; i++) {
            engine_fire_check (self);
            xxl_store_due_t *row = rows + i;
            snap_t *snap = s_snap_get (self, row->id, row->update_time);
            if (!snap)
                continue;
            snap->job.trigger_status = 1;
            snap->job.trigger_next_time = row->trigger_next_time;
            snap->job.trigger_last_time = row->trigger_last_time;
            s_plan_job (self, snap, now);
            //  Keep only jobs that fire again soon, or whose plans wait to
            //  be sent (s_snap_settle drops them after); the rest are read
            //  again
            if (s_snap_idle (self, snap, now))
                zhashx_delete (self->planner.snaps, &row->id);
        }
    } while (count == XXL_SCAN_BATCH && zclock_mono () - started < XXL_SCAN_MS);
    free (rows);
    //  A full batch means more are due: scan again at once
    self->planner.next_scan = count == XXL_SCAN_BATCH? 0: zclock_mono () + self->config.scan_ms;
}

//  1 when the job of a log row has an address to go to now (never for a
//  SHARDING_BROADCAST job: called while agents reconnect, when its rows wait
//  for all of them)
static bool
s_row_has_agents (server_t *self, int64_t log_id)
{
    int64_t job_id = xxl_store_log_job_id (self->store, log_id);
    xxl_job_t job;
    if (job_id <= 0 || xxl_store_job_load (self->store, job_id, &job))
        return true;                    //  let dispatch say what is wrong
    //  A broadcast row waits for all the agents (the warm-up's end), not
    //  for the first: shard i goes to the i-th address of the full list
    bool connected = !xxl_routers_is_broadcast (self->runs.routers, job.executor_route_strategy)
                  && s_job_has_agents (self, &job);
    xxl_job_free (&job);
    return connected;
}

//  Fires one planned row from its plan: routes it against the live
//  registry and sends its RUN, reading nothing from the store
static void
s_plan_dispatch (server_t *self, plan_t *plan)
{
    const xxl_job_t *job = &plan->snap->job;
    const char *const *addresses;
    char **manual;
    size_t count = engine_job_addresses (self, job, &addresses, &manual);
    int64_t stamp = engine_now ();
    engine_route_row (self, job, plan->log_id, stamp, job->executor_param, plan->shard_index,
                      plan->shard_total, plan->sharded, addresses, count, stamp);
    if (manual)
        engine_free_addresses (manual, count);
}

//  1 when a job has an address connected now
static bool
s_job_has_agents (server_t *self, const xxl_job_t *job)
{
    const char *const *addresses;
    char **manual;
    size_t count = engine_job_addresses (self, job, &addresses, &manual);
    bool connected = false;
    for (size_t i = 0; i < count && !connected; i++) {
        size_t size;
        connected = xxl_registry_route (self->registry, addresses [i], &size) != NULL;
    }
    if (manual)
        engine_free_addresses (manual, count);
    return connected;
}

//  Makes sure the held shares' fired_until covers rows planned up to `until` in this
//  turn's transaction: a row may be sent only once it is covered, so that
//  a restart tells rows that may have gone from rows that did not.
void
engine_fired_cover (server_t *self, int64_t until)
{
    if (until <= self->planner.fired_want)
        return;
    //  A second ahead, so that one write covers the next fires too and a
    //  long turn does not outrun it
    until += 1000;
    if (xxl_store_lease_fired (self->store, self->leases.held, until, 0) == 0)
        self->planner.fired_want = until;
}

//  Takes a plan out of self->planner.plans (and its job's list of unsent plans)
//  into a new plan_t that owns what it owned; the map's entry is freed
static plan_t *
s_plan_take (server_t *self, plan_t *plan)
{
    plan_t *taken = (plan_t *) malloc (sizeof (plan_t));
    assert (taken);
    *taken = *plan;
    if (plan->handle)
        zlistx_delete (plan->snap->plan_ids, plan->handle);
    taken->handle = NULL;
    taken->prebuilt = NULL;
    plan->handle = NULL;
    plan->prebuilt = NULL;
    plan->snap = NULL;
    plan->address = plan->note = NULL;
    plan->tp = NULL;
    int64_t log_id = plan->log_id;
    zhashx_delete (self->planner.plans, &log_id);
    s_snap_settle (self, taken->snap->job.id);
    return taken;
}

//  One due plan (log id) popped from the timer at its time `when`: sent
//  in this instant's batch for its agent when nothing holds it, else on
//  fire_later for engine_plan_due (not prepared, agent gone, job changed,
//  another scheduler writing, row not committed or not covered)
static void
s_fire_plan (server_t *self, int64_t log_id, int64_t when)
{
    plan_t *plan = (plan_t *) zhashx_lookup (self->planner.plans, &log_id);
    if (plan && plan->prebuilt) {
        //  (an instant's batch holds it already: that one no longer goes
        //  as built, and this is its only send)
        plan->prebuilt->fires [plan->slot].plan = NULL;
        plan->prebuilt->dirty = true;
        plan->prebuilt = NULL;
    }
    size_t rid_size;
    if (!plan || !plan->tp || plan->snap->cancelled || plan->turn == self->turn
    ||  plan->turn <= self->planner.foreign_turn || self->stopping || when > self->planner.fired_until
    ||  !xxl_registry_route (self->registry, plan->address, &rid_size)) {
        zlistx_add_end (self->planner.fire_later, (void *) (intptr_t) log_id);
        return;
    }
    //  Its time: when it joins the message that takes it (a batch
    //  leaves when full or after the last due row)
    int64_t stamp = engine_now ();
    if (when > self->planner.sent_max)
        self->planner.sent_max = when;
    int max = xxl_registry_run_batch (self->registry, plan->address);
    if (max >= 2) {
        //  The batch takes what the plan owns
        plan_t *taken = s_plan_take (self, plan);
        const void *rid = xxl_registry_route (self->registry, taken->address, &rid_size);
        engine_fire_queue (self, &taken, stamp, rid, rid_size, max);
        return;
    }
    char why [256];
    pending_t *pending = engine_pending_new (self, plan->address, PENDING_RUN,
                                             self->config.run_timeout_ms, why, sizeof why);
    if (!pending) {
        zlistx_add_end (self->planner.fire_later, (void *) (intptr_t) log_id);
        return;
    }
    pending->log_id = log_id;
    pending->note = plan->note && *plan->note? strdup (plan->note): NULL;
    pending->presumed = engine_section_chars (plan->note, plan->address);
    pending->stamp = stamp;
    engine_run_queue (self, pending, plan->tp, plan->tp_size, stamp, self->planner.fire_batches);
    int64_t job_id = plan->snap->job.id;
    zhashx_delete (self->planner.plans, &log_id);
    s_snap_settle (self, job_id);
}

//  Puts a prepared plan (in self->planner.plans, written this turn) into the
//  prebuilt batch of its instant for its agent: its TriggerParam joins
//  that message now, so that at `fire_at` the message only gets its
//  times and goes.  Returns false when its agent takes no batches or is
//  not connected (the plan then needs its own timer entry).
bool
engine_instant_add (server_t *self, plan_t *plan, int64_t fire_at)
{
    if (!plan->address || !plan->tp)
        return false;                   //  (unprepared: no agent to route to yet)
    size_t rid_size;
    const void *rid = xxl_registry_route (self->registry, plan->address, &rid_size);
    int max = rid? xxl_registry_run_batch (self->registry, plan->address): 0;
    if (max < 2 || !plan->tp)
        return false;
    instant_t *instant = (instant_t *) zhashx_lookup (self->planner.instants, &fire_at);
    if (!instant) {
        instant = (instant_t *) zmalloc (sizeof (instant_t));
        instant->when = fire_at;
        instant->batches = zlistx_new ();
        zlistx_set_destructor (instant->batches, engine_batch_destructor);
        if (xxl_timer_push (self->planner.timer, fire_at, 0)) {
            engine_instant_destroy (&instant);
            return false;
        }
        zhashx_insert (self->planner.instants, &instant->when, instant);
    }
    run_batch_t *batch = engine_batch_for (self, instant->batches, plan->address, rid, rid_size,
                                           max, s_fire_free);
    if (batch->count == 0) {
        batch->prebuilt = true;
        batch->min_turn = batch->max_turn = plan->turn;
    }
    if (plan->turn < batch->min_turn)
        batch->min_turn = plan->turn;
    if (plan->turn > batch->max_turn)
        batch->max_turn = plan->turn;
    unsigned char time [9];
    engine_pack_time (time, fire_at);        //  (replaced when it goes)
    xxl_enc_raw (batch->enc, plan->tp, plan->tp_size, 1);
    batch->fires [batch->count].offset = xxl_enc_size (batch->enc);
    xxl_enc_raw (batch->enc, time, sizeof time, 0);
    batch->fires [batch->count].plan = plan;
    batch->fires [batch->count].stamp = 0;
    plan->prebuilt = batch;
    plan->slot = batch->count;
    batch->count++;
    batch->bytes += plan->tp_size + sizeof time;
    return true;
}

//  The instant `when` has come: each of its prebuilt batches leaves as
//  built when all its rows are committed and covered, none of its plans
//  left it, and its agent is still on the same connection; the plans of
//  any other batch go one by one (s_fire_plan).  The batches that leave
//  get one time, taken once they are all ready, and go in a row; they
//  are put on self->planner.taking: engine_fire hands them their plans after.
static void
s_instant_fire (server_t *self, int64_t when)
{
    instant_t *instant = (instant_t *) zhashx_lookup (self->planner.instants, &when);
    if (!instant)
        return;
    zhashx_delete (self->planner.instants, &when);
    bool go = !self->stopping && when <= self->planner.fired_until;
    zlistx_t *later = NULL;
    run_batch_t *batch;
    for (batch = (run_batch_t *) zlistx_first (instant->batches); batch;
         batch = (run_batch_t *) zlistx_next (instant->batches)) {
        size_t rid_size = 0;
        const void *rid = go && !batch->dirty && batch->max_turn < self->turn
                       && batch->min_turn > self->planner.foreign_turn
                        ? xxl_registry_route (self->registry, batch->address, &rid_size): NULL;
        if (!rid || rid_size != batch->rid_size || memcmp (rid, batch->rid, rid_size)) {
            zlistx_detach_cur (instant->batches);
            if (!later)
                later = zlistx_new ();
            zlistx_add_end (later, batch);
        }
    }
    if (zlistx_size (instant->batches) && when > self->planner.sent_max)
        self->planner.sent_max = when;
    int64_t stamp = engine_now ();
    while ((batch = (run_batch_t *) zlistx_detach (instant->batches, NULL))) {
        engine_batch_send (self, batch, true, stamp);
        zlistx_add_end (self->planner.taking, batch);
    }
    //  The others one by one, as any due plan
    while (later && (batch = (run_batch_t *) zlistx_detach (later, NULL))) {
        for (size_t i = 0; i < batch->count; i++) {
            plan_t *plan = batch->fires [i].plan;
            batch->fires [i].plan = NULL;
            if (plan) {
                plan->prebuilt = NULL;
                s_fire_plan (self, plan->log_id, when);
            }
        }
        engine_batch_destroy (&batch);
    }
    zlistx_destroy (&later);
    engine_instant_destroy (&instant);
}

//  Sends the prepared fires whose time has come, with no store access:
//  their rows were committed with their address in an earlier turn and
//  the held shares' fired_until covers them.  Any other due row (not prepared, agent
//  gone, job changed, another scheduler writing) goes to fire_later for
//  engine_plan_due.  Callable anywhere in a turn.
void
engine_fire (server_t *self)
{
    //  (a turn held up past the leases' end, by a store call that hung,
    //  sends none of their plans: another may have taken them over)
    engine_lease_check (self);
    int64_t now = engine_now ();
    int64_t log_id, when;
    while (xxl_timer_pop_due (self->planner.timer, now, &log_id, &when) == 0) {
        //  (one observation per instant or plan: how late it leaves)
        xxl_histo_observe (&self->metrics.lateness, (zclock_usecs () / 1000.0 - when) / 1000.0);
        if (log_id == 0)
            s_instant_fire (self, when);
        else
            s_fire_plan (self, log_id, when);
    }
    run_batch_t *batch;
    while ((batch = (run_batch_t *) zlistx_first (self->planner.fire_batches)))
        engine_batch_close (self, batch, self->planner.fire_batches);
    //  What left prebuilt now owns its plans: they leave self->planner.plans
    while ((batch = (run_batch_t *) zlistx_detach (self->planner.taking, NULL))) {
        for (size_t i = 0; i < batch->count; i++)
            batch->fires [i].plan = s_plan_take (self, batch->fires [i].plan);
        batch->prebuilt = false;
    }
}

//  engine_fire when a fire is due: called between pieces of work in a turn
void
engine_fire_check (server_t *self)
{
    int64_t next = xxl_timer_next (self->planner.timer);
    if (next >= 0 && engine_now () >= next)
        engine_fire (self);
}

//  Arms the timerfd for wall-clock ms `when` (once per value)
void
engine_timer_arm (server_t *self, int64_t when)
{
    if (self->planner.timer_fd < 0 || when <= 0 || when == self->planner.timer_armed)
        return;
    struct itimerspec spec = { .it_value = { .tv_sec = (time_t) (when / 1000),
                                             .tv_nsec = (long) (when % 1000) * 1000000 } };
    if (timerfd_settime (self->planner.timer_fd, TFD_TIMER_ABSTIME, &spec, NULL) == 0)
        self->planner.timer_armed = when;
}

//  True when a prepared fire is due so soon that work which cannot stop
//  for it (a commit above all) would delay it: within twice the recent
//  commits' time, 2 to 20 ms.  (A fire fired_until does not cover yet
//  needs this turn's commit: it is not waited for.)
bool
engine_fire_near (server_t *self)
{
    int64_t next = xxl_timer_next (self->planner.timer);
    if (next < 0 || next > self->planner.fired_until)
        return false;
    int64_t guard = 2 + 2 * self->commit_us / 1000;
    return next - engine_now () <= (guard < 20? guard: 20);
}

//  True when a planned fire is due within ms
bool
engine_fire_within (server_t *self, int64_t ms)
{
    int64_t next = xxl_timer_next (self->planner.timer);
    return next >= 0 && next - engine_now () <= ms;
}

//  Waits for the next fire (due within the guard) and sends it
void
engine_fire_wait (server_t *self)
{
    int64_t next = xxl_timer_next (self->planner.timer);
    int64_t left;
    while (next >= 0 && (left = next - engine_now ()) > 0) {
        if (self->planner.timer_fd >= 0) {
            engine_timer_arm (self, next);
            struct pollfd item = { .fd = self->planner.timer_fd, .events = POLLIN };
            if (poll (&item, 1, (int) left + 1) > 0) {
                uint64_t expired;
                if (read (self->planner.timer_fd, &expired, sizeof expired) < 0) {
                    //  (not due after all: the loop checks the time)
                }
                self->planner.timer_armed = -1;
            }
        }
        else
            zclock_sleep ((int) left);
    }
    engine_fire (self);
}

//  A prepared row engine_fire could not send: sent now through the store (its
//  trigger time written first, the row checked still unsent), routed
//  again when its agent is gone, deleted when its job changed
static void
s_plan_fallback (server_t *self, plan_t *plan)
{
    if (plan->snap->cancelled) {
        xxl_store_log_drop_unsent (self->store, plan->log_id);
        return;
    }
    size_t rid_size;
    if (xxl_registry_route (self->registry, plan->address, &rid_size)) {
        int64_t stamp = engine_now ();
        if (xxl_store_log_stamp (self->store, plan->log_id, stamp) != 1)
            return;                     //  cancelled by a scheduler sharing the store
        char why [256];
        pending_t *pending = engine_pending_new (self, plan->address, PENDING_RUN,
                                                 self->config.run_timeout_ms, why, sizeof why);
        if (!pending)
            return;                     //  (connected: cannot happen)
        pending->log_id = plan->log_id;
        pending->note = plan->note && *plan->note? strdup (plan->note): NULL;
        pending->presumed = engine_section_chars (plan->note, plan->address);
        engine_run_queue (self, pending, plan->tp, plan->tp_size, stamp, self->runs.open_batches);
        return;
    }
    //  Its agent is gone: take the address and section back, route again
    if (xxl_store_log_unroute (self->store, plan->log_id,
                               engine_section_chars (plan->note, plan->address), 0) == 1)
        s_plan_dispatch (self, plan);
}

//  Sends the planned rows whose time has come: prepared ones by engine_fire,
//  the others here, at most XXL_DUE_BATCH a turn, so that agents' answers
//  are read in between
#define XXL_DUE_BATCH 4096
void
engine_plan_due (server_t *self)
{
    engine_fire (self);
    int64_t now = engine_now ();
    bool warming = zclock_mono () < self->warm_until;
    zlistx_t *held = NULL;
    int budget = XXL_DUE_BATCH;
    void *item;
    if (zlistx_size (self->planner.fire_later))
        engine_fired_cover (self, now);
    while (budget-- > 0 && (item = zlistx_detach (self->planner.fire_later, NULL))) {
        if (budget % 64 == 0)
            engine_fire_check (self);
        int64_t log_id = (int64_t) (intptr_t) item;
        plan_t *plan = (plan_t *) zhashx_lookup (self->planner.plans, &log_id);
        if (warming && !(plan? !plan->sharded && s_job_has_agents (self, &plan->snap->job)
                             : s_row_has_agents (self, log_id))) {
            if (!held)
                held = zlistx_new ();
            zlistx_add_end (held, item);
            continue;
        }
        //  A job stopped after planning: its unsent rows were deleted with
        //  their plans, and engine_dispatch_row finds nothing
        if (plan) {
            if (plan->tp)
                s_plan_fallback (self, plan);
            else
                s_plan_dispatch (self, plan);
            int64_t job_id = plan->snap->job.id;
            zhashx_delete (self->planner.plans, &log_id);
            s_snap_settle (self, job_id);
        }
        else
            engine_dispatch_row (self, log_id, NULL, NULL);
    }
    if (held) {
        for (item = zlistx_first (held); item; item = zlistx_next (held))
            xxl_timer_push (self->planner.timer, now + 100, (int64_t) (intptr_t) item);
        zlistx_destroy (&held);
    }
}

//  Asking agents.  A planned row routed ahead leaves at its instant with
//  no store write, and the commit after it raises its share's fired_sent;
//  a row sent through the store had its fire time committed before it
//  left.  So when the previous owner of a share stopped, a due row past
//  fired_sent may have left in its last turn or not.  While it is inside
//  the pre-read window it simply goes again (its agent refuses a logId it
//  has).  Past the window the misfire rule would judge it as never sent,
//  and DO_NOTHING would delete the row of a run that may have started (a
//  run with no row).  Such a row is asked about instead: a RUN to the
//  same agent whose expireTime is 1, long past, so that nothing can start
//  from it.  An agent that accepted the logId before
//  answers 200 "already accepted" (xxl-agent's journal; docs/protocol.md):
//  the row stays as a run and its result ends it.  One that never had it
//  refuses it "expired: ...": it never ran, and only then does the
//  misfire rule apply (DO_NOTHING drops it; FIRE_ONCE_NOW makes it the
//  outage's MISFIRE unless the outage has one).  An agent that does not
//  say: the row counts as sent, as a re-send's does.  One that does not
//  come back within lost_after (at least recovery_wait): the same, and it
//  is still asked should it come back later (for a day), so that a row it
//  never had does not wait for a result for ever.

//  Whether a recovered row must be asked about: routed, unanswered,
//  planned past its share's fired_sent and more than the window ago, and
//  either sent through the store (its fire time written) or routed ahead
//  within what the previous owner could have sent: fired_until, and not
//  after its lease ran out or now
static bool
s_row_unknown (const xxl_log_t *log, const xxl_lease_t *lease, int64_t now, int64_t late_before,
               int64_t store_ahead)
{
    if (!log->executor_address || !*log->executor_address || log->trigger_code != 0
    ||  log->handle_code != 0 || log->schedule_time <= 0
    ||  log->schedule_time >= late_before || log->schedule_time <= lease->fired_sent)
        return false;
    if (log->trigger_time >= log->schedule_time)
        return true;
    int64_t could = lease->fired_until;
    //  (the expiry is on the store's clock: on this scheduler's, store_ahead less)
    if (*lease->owner && lease->expires - store_ahead < could)
        could = lease->expires - store_ahead;
    if (now < could)
        could = now;
    return log->schedule_time <= could;
}

static void
s_ask_add (server_t *self, int64_t log_id, int64_t job_id)
{
    if (zhashx_lookup (self->planner.asks, &log_id))
        return;
    int64_t wait = self->config.lost_after_ms > self->config.recovery_wait_ms
                 ? self->config.lost_after_ms: self->config.recovery_wait_ms;
    xxl_ask_t *ask = (xxl_ask_t *) zmalloc (sizeof (xxl_ask_t));
    ask->log_id = log_id;
    ask->job_id = job_id;
    ask->deadline = zclock_mono () + wait;
    zhashx_insert (self->planner.asks, &ask->log_id, ask);
    int64_t *state = (int64_t *) zhashx_lookup (self->planner.ask_jobs, &job_id);
    if (!state) {
        state = (int64_t *) zmalloc (3 * sizeof (int64_t));
        state [0] = job_id;
        state [1] = -1;
        zhashx_insert (self->planner.ask_jobs, &state [0], state);
    }
    state [2]++;
}

//  The ask of log_id is over
static void
s_ask_forget (server_t *self, int64_t log_id)
{
    xxl_ask_t *ask = (xxl_ask_t *) zhashx_lookup (self->planner.asks, &log_id);
    if (!ask)
        return;
    int64_t job_id = ask->job_id;
    zhashx_delete (self->planner.asks, &log_id);
    int64_t *state = (int64_t *) zhashx_lookup (self->planner.ask_jobs, &job_id);
    if (state && --state [2] <= 0)
        zhashx_delete (self->planner.ask_jobs, &job_id);
}

//  Back on the re-send list, to be asked once its agent is connected
static void
s_ask_again (server_t *self, int64_t log_id, const char *address)
{
    engine_resend_add (self, log_id, address);
}

#define XXL_ASK_LATE_MS  (24 * 3600 * 1000)  //  a counted ask lives this long

//  The agent did not tell (it stayed away, gave no answer, or answered
//  something else): the row counts as sent, as a re-send's.  away: it
//  stayed away; it is still asked should it come back
static void
s_ask_unknown (server_t *self, int64_t log_id, const char *address, const char *what,
               bool away)
{
    char *why = zsys_sprintf ("\nasked after a restart whether agent %s took this run"
                              " before: %s; it may have, so it counts as sent: its result"
                              " ends it, or the lost-run monitor\n", address, what);
    int changed = xxl_store_log_accept (self->store, log_id, 0);
    if (changed == 1)
        xxl_store_log_append_trigger_msg (self->store, log_id, why);
    zstr_free (&why);
    if (changed < 0) {
        s_ask_again (self, log_id, address);
        return;
    }
    zsys_info ("planner: log %" PRId64 ": agent %s did not say whether it took it before"
               " (%s): counted as sent", log_id, address, what);
    xxl_ask_t *ask = (xxl_ask_t *) zhashx_lookup (self->planner.asks, &log_id);
    if (away && ask && changed == 1) {
        ask->counted = true;
        ask->deadline = zclock_mono () + XXL_ASK_LATE_MS;
        s_ask_again (self, log_id, address);
    }
    else
        s_ask_forget (self, log_id);
}

#define XXL_ASK_NOTE "asked after a scheduler restart whether the agent took it before" \
                     " (expireTime past: it cannot start now)\n"

//  Sends the ask of a row to address (connected): a single RUN whose
//  expireTime is 1, long past
static void
s_ask_send (server_t *self, int64_t log_id, const char *address)
{
    xxl_log_t log;
    int rc = xxl_store_log_load (self->store, log_id, &log);
    if (rc < 0) {
        s_ask_again (self, log_id, address);
        return;
    }
    xxl_ask_t *ask = (xxl_ask_t *) zhashx_lookup (self->planner.asks, &log_id);
    bool counted = ask && ask->counted;
    if (rc > 0 || log.trigger_code != (counted? XXL_OK: 0) || log.handle_code != 0
    ||  zhashx_lookup (self->runs.accepted_ids, &log_id) || !engine_lease_holds (self, log.job_id)) {
        //  Gone, answered (its agent's spooled result came first), or of a
        //  share this scheduler lost since (its new holder asks)
        if (rc == 0 && log.handle_code != 0 && !counted)
            zsys_info ("planner: log %" PRId64 ": its agent %s took it before the restart"
                       " (its result came first)", log_id, address);
        if (rc == 0)
            xxl_log_free (&log);
        s_ask_forget (self, log_id);
        return;
    }
    xxl_job_t job;
    if (xxl_store_job_load (self->store, log.job_id, &job)) {
        xxl_log_free (&log);
        s_ask_forget (self, log_id);
        engine_dispatch_row (self, log_id, address, NULL);     //  (fails it: job removed)
        return;
    }
    char *section = engine_section (XXL_ASK_NOTE, address, XXL_OK, NULL);
    int changed = xxl_store_log_route (self->store, log_id, 0, address, section);
    size_t rid_size;
    const void *rid = xxl_registry_route (self->registry, address, &rid_size);
    char why [256];
    pending_t *pending = changed == 1 && rid
                       ? engine_pending_new (self, address, PENDING_RUN,
                                             self->config.run_timeout_ms, why, sizeof why)
                       : NULL;
    if (pending) {
        pending->log_id = log_id;
        pending->note = strdup (XXL_ASK_NOTE);
        pending->presumed = engine_section_chars (XXL_ASK_NOTE, address);
        pending->ask = true;
        int index, total;
        engine_shard_of (log.executor_sharding_param, &index, &total);
        size_t size;
        const unsigned char *tp = engine_encode_tp (self, &job, log_id, log.executor_param,
                                                    index, total, &size);
        assert (size >= 5);
        //  The single form (engine_run_queue's), its expireTime as given:
        //  expire_offset stays 0, so the outbox leaves it as it is
        uint32_t keys = (uint32_t) tp [1] << 24 | (uint32_t) tp [2] << 16
                      | (uint32_t) tp [3] << 8 | tp [4];
        xxl_enc_request (self->enc, "RUN", pending->id);
        xxl_enc_raw (self->enc, tp + 5, size - 5, keys);
        unsigned char stamp [9];
        engine_pack_time (stamp, log.trigger_time);
        xxl_enc_raw (self->enc, stamp, sizeof stamp, 0);
        xxl_enc_kint (self->enc, "expireTime", 1);       //  (long past on any clock)
        engine_queue_agent (self, rid, rid_size, pending->id);
    }
    else
    if (changed < 0 || (changed == 1 && !rid))
        s_ask_again (self, log_id, address);  //  (the store failed: later)
    else
        s_ask_forget (self, log_id);
    zstr_free (&section);
    xxl_job_free (&job);
    xxl_log_free (&log);
}

//  The agent's answer to an ask (code 0: none; msg NULL then: the send
//  failed, the agent's connection had closed)
void
engine_ask_answer (server_t *self, pending_t *pending, int code, const char *msg)
{
    assert (pending->ask);
    int64_t log_id = pending->log_id;
    xxl_ask_t *ask = (xxl_ask_t *) zhashx_lookup (self->planner.asks, &log_id);
    if (!ask) {
        //  (forgotten meanwhile: a plain answer)
        engine_run_done (self, pending, code, msg);
        return;
    }
    if (code == XXL_OK) {
        //  It took it before (or, an agent that does not judge expireTime,
        //  now): a run, whose result ends it
        zsys_info ("planner: log %" PRId64 ": its agent %s took it before the restart (%s):"
                   " a run, its result ends it", log_id, pending->address, msg? msg: "200");
        s_ask_forget (self, log_id);
        engine_run_done (self, pending, code, msg);
        return;
    }
    if (code == 0 && !msg) {
        s_ask_again (self, log_id, pending->address);
        return;
    }
    if (code == 0 || !msg || strncmp (msg, "expired:", 8) != 0) {
        char what [300];
        if (code == 0)
            snprintf (what, sizeof what, "no answer within %d ms", self->config.run_timeout_ms);
        else
            snprintf (what, sizeof what, "it answered %d %.200s", code, msg? msg: "");
        s_ask_unknown (self, log_id, pending->address, what, false);
        return;
    }
    //  Refused as expired: it never ran, and the misfire rule applies now
    int64_t job_id = ask->job_id;
    if (!engine_lease_holds (self, job_id)) {
        s_ask_forget (self, log_id);    //  (its share's new holder asks)
        return;
    }
    if (ask->counted) {
        //  Counted as sent while its agent was away: unsent again, unless
        //  its result came meanwhile (the lost-run monitor)
        xxl_log_t row;
        int rc = xxl_store_log_load (self->store, log_id, &row);
        bool open = rc == 0 && row.trigger_code == XXL_OK && row.handle_code == 0;
        if (rc == 0)
            xxl_log_free (&row);
        if (!open || xxl_store_log_trigger_end (self->store, log_id, 0, 0, "", 0) != 1) {
            s_ask_forget (self, log_id);
            return;
        }
    }
    int64_t *state = (int64_t *) zhashx_lookup (self->planner.ask_jobs, &job_id);
    bool misfire = false;
    xxl_job_t job;
    if (xxl_store_job_load (self->store, job_id, &job) == 0) {
        misfire = state && state [1] == 1 && job.trigger_status == 1
               && streq (job.misfire_strategy, "FIRE_ONCE_NOW");
        if (misfire) {
            //  The outage's one MISFIRE; the job's next time, past by now,
            //  moves after now (as recovery's does)
            state [1] = 0;
            int64_t now = engine_now ();
            char why [256];
            int64_t next = job.trigger_next_time != XXL_WAITING && job.trigger_next_time <= now
                         ? engine_next_time (&job, now, why, sizeof why): 0;
            if (next > 0)
                xxl_store_job_set_times (self->store, job.id, job.trigger_last_time, next);
        }
        xxl_job_free (&job);
    }
    if (xxl_store_log_unroute (self->store, log_id, pending->presumed, 1) != 1) {
        s_ask_forget (self, log_id);    //  (answered meanwhile)
        return;
    }
    if (misfire) {
        xxl_store_recover_misfire (self->store, log_id);
        xxl_log_t row;
        if (xxl_store_log_load (self->store, log_id, &row) == 0) {
            char *text = engine_text_misfire (row.trigger_msg? row.trigger_msg: "");
            xxl_store_log_set_trigger_msg (self->store, log_id, text);
            zstr_free (&text);
            xxl_log_free (&row);
        }
        xxl_timer_push_after (self->planner.timer, engine_now (), 0, log_id);
    }
    else {
        engine_run_ended (self, log_id, XXL_END_TRIGGER, XXL_CODE_FAIL, engine_now ());
        xxl_store_log_drop_unsent (self->store, log_id);
    }
    zsys_info ("planner: log %" PRId64 ": its agent %s never took it (%s): %s", log_id,
               pending->address, msg, misfire? "it fires now as the outage's MISFIRE"
                                             : "dropped, as the misfire rule says");
    s_ask_forget (self, log_id);
}

//  When shares are taken (at start, or from a scheduler that stopped
//  renewing them): every trigger row of their jobs no agent acknowledged.
//  Never-sent rows are sent (or follow the misfire rule when too late);
//  rows that may have been sent go again to the same agent once it is
//  back (it refuses a logId it already accepted, so nothing runs twice).
//  leases: the shares' rows as read before the take (their fired marks).
void
engine_recover (server_t *self, uint64_t mask, const xxl_lease_t *leases)
{
    int64_t now = engine_now ();
    int64_t ids [4096];
    size_t count = 0, recovered = 0, dropped = 0, resent = 0, misfired = 0;
    int64_t after = 0;
    //  Never-sent rows planned more than the window ago: the job's misfire
    //  rule, once per job -- FIRE_ONCE_NOW keeps the latest as MISFIRE
    int64_t late_before = now - self->config.preread_ms;
    //  Rows a commit knows were fired with no store access, whose fire
    //  time was not written yet: they went at their planned time
    xxl_store_recover_stamp_fired_in (self->store, mask);
    //  Rows past the window that may have left in the previous owner's
    //  last turn: asked about (see "Asking agents"), not judged by the
    //  misfire rule here.  Their planned time becomes their trigger time,
    //  which takes them out of the unsent ones.
    size_t asked = 0;
    zlistx_t *ask_jobs = zlistx_new ();
    do {
        xxl_store_log_unsent_in (self->store, mask, after, ids, 4096, &count);
        for (size_t i = 0; i < count; i++) {
            after = ids [i];
            xxl_log_t log;
            if (xxl_store_log_load (self->store, ids [i], &log))
                continue;
            if (s_row_unknown (&log, &leases [log.job_id % XXL_STORE_SHARES], now, late_before,
                               self->leases.store_ahead)
            &&  (log.trigger_time >= log.schedule_time
                 || xxl_store_log_stamp (self->store, log.id, log.schedule_time) == 1)) {
                int64_t *state = (int64_t *) zhashx_lookup (self->planner.ask_jobs, &log.job_id);
                if (!state || state [1] == -1)
                    zlistx_add_end (ask_jobs, (void *) (intptr_t) log.job_id);
                s_ask_add (self, log.id, log.job_id);
                asked++;
            }
            xxl_log_free (&log);
        }
    } while (count == 4096);
    after = 0;
    //  Unsent: no address, or routed ahead and neither stamped nor known
    //  sent (one sent in the last turn before a stop is not known: see
    //  the second pass)
    xxl_store_recover_late_jobs_in (self->store, mask, late_before, ids, 4096, &count);
    for (size_t i = 0; i < count; i++) {
        xxl_job_t job;
        int64_t keep = 0;
        if (xxl_store_job_load (self->store, ids [i], &job) == 0) {
            //  Once per outage: when the job's next time is past the window
            //  too, the planner's misfire fires it once (s_plan_job), and
            //  these rows go
            bool planner_fires = job.trigger_status == 1 && job.trigger_next_time != XXL_WAITING
                              && job.trigger_next_time < late_before;
            if (streq (job.misfire_strategy, "FIRE_ONCE_NOW") && !planner_fires)
                keep = xxl_store_recover_late_last (self->store, job.id, late_before);
            //  The MISFIRE fired here is the outage's one: a next time
            //  that is past by now (the planner's first scan, a moment
            //  later, could find it past the window too) moves after now,
            //  as the planner's own misfire does
            char why [256];
            int64_t next = keep > 0 && job.trigger_status == 1 && job.trigger_next_time != XXL_WAITING
                         && job.trigger_next_time <= now
                         ? engine_next_time (&job, now, why, sizeof why): 0;
            if (next > 0)
                xxl_store_job_set_times (self->store, job.id, job.trigger_last_time, next);
            xxl_job_free (&job);
        }
        int64_t *state = (int64_t *) zhashx_lookup (self->planner.ask_jobs, &ids [i]);
        if (state && state [1] == -1 && keep > 0)
            state [1] = 0;              //  (this is the outage's MISFIRE)
        if (keep > 0) {
            //  The outage's misfire compensation: its type, and its text
            //  (xxl_trigger.c's)
            xxl_store_recover_misfire (self->store, keep);
            xxl_log_t row;
            if (xxl_store_log_load (self->store, keep, &row) == 0) {
                char *text = engine_text_misfire (row.trigger_msg? row.trigger_msg: "");
                xxl_store_log_set_trigger_msg (self->store, keep, text);
                zstr_free (&text);
                xxl_log_free (&row);
            }
            misfired++;
        }
        int gone = xxl_store_recover_drop_late (self->store, ids [i], late_before, keep);
        dropped += gone > 0? (size_t) gone: 0;
    }
    //  Jobs with rows asked about: a refused one is the outage's MISFIRE
    //  under FIRE_ONCE_NOW, unless recovery kept one above or the
    //  planner's own misfire fires the job
    for (void *item = zlistx_first (ask_jobs); item; item = zlistx_next (ask_jobs)) {
        int64_t job_id = (int64_t) (intptr_t) item;
        int64_t *state = (int64_t *) zhashx_lookup (self->planner.ask_jobs, &job_id);
        xxl_job_t job;
        if (!state || state [1] != -1)
            continue;
        state [1] = 0;
        if (xxl_store_job_load (self->store, job_id, &job) == 0) {
            bool planner_fires = job.trigger_status == 1 && job.trigger_next_time != XXL_WAITING
                              && job.trigger_next_time < late_before;
            state [1] = streq (job.misfire_strategy, "FIRE_ONCE_NOW") && !planner_fires;
            xxl_job_free (&job);
        }
    }
    zlistx_destroy (&ask_jobs);
    //  Due rows routed ahead that may have gone in the last turn (they go
    //  again to the same agent below): their planned time as trigger time
    xxl_store_recover_stamp_due_in (self->store, mask, now);
    do {
        xxl_store_log_unsent_in (self->store, mask, after, ids, 4096, &count);
        for (size_t i = 0; i < count; i++) {
            after = ids [i];
            xxl_log_t log;
            if (xxl_store_log_load (self->store, ids [i], &log))
                continue;
            //  Routed ahead, not known sent: not due yet, it cannot have
            //  gone; due, it may have gone in the last turn before the
            //  stop, so it goes to the same agent, which refuses a logId
            //  it has
            bool unsent = log.schedule_time > leases [log.job_id % XXL_STORE_SHARES].fired_sent
                       && log.trigger_time < log.schedule_time && log.schedule_time > now;
            if (*log.executor_address && !unsent) {
                //  (asked rows too: they are asked once their agent is back)
                engine_resend_add (self, log.id, log.executor_address);
                resent += !zhashx_lookup (self->planner.asks, &log.id);
            }
            else {
                if (*log.executor_address)
                    //  Routed ahead, never sent: route again at its time
                    xxl_store_log_clear_address (self->store, log.id);
                xxl_timer_push (self->planner.timer, log.schedule_time > now? log.schedule_time: now, log.id);
                recovered++;
            }
            xxl_log_free (&log);
        }
    } while (count == 4096);
    if (recovered || dropped || resent || asked)
        zsys_info ("planner: recovery: %zu unsent trigger(s) planned again (%zu as MISFIRE),"
                   " %zu to re-send to their agents when back, %zu dropped as misfired,"
                   " %zu past the window to ask their agents about (sent just before the"
                   " stop, or not)", recovered, misfired, resent, dropped, asked);
}

//  Re-sends rows put back (recovery, a failed store write) once their
//  agent is connected again; past the wait, fails them
void
engine_recover_resends (server_t *self)
{
    zlistx_t *due = zlistx_new ();
    int64_t now = zclock_mono ();
    for (xxl_resend_t *resend = (xxl_resend_t *) zlistx_first (self->runs.resends); resend;
         resend = (xxl_resend_t *) zlistx_next (self->runs.resends)) {
        size_t size;
        xxl_ask_t *ask = (xxl_ask_t *) zhashx_lookup (self->planner.asks, &resend->log_id);
        int64_t deadline = ask? ask->deadline: resend->deadline;
        if (xxl_registry_route (self->registry, resend->address, &size) || now >= deadline) {
            zlistx_detach_cur (self->runs.resends);
            zhashx_delete (self->runs.resend_ids, &resend->log_id);
            zlistx_add_end (due, resend);
        }
    }
    xxl_resend_t *resend;
    while ((resend = (xxl_resend_t *) zlistx_detach (due, NULL))) {
        size_t size;
        xxl_ask_t *ask;
        if (engine_run_in_flight (self, resend->log_id))
            ;                           //  (its RUN went meanwhile: that one counts)
        else
        if ((ask = (xxl_ask_t *) zhashx_lookup (self->planner.asks, &resend->log_id))) {
            if (xxl_registry_route (self->registry, resend->address, &size))
                s_ask_send (self, resend->log_id, resend->address);
            else
            if (ask->counted)
                s_ask_forget (self, resend->log_id);
            else {
                char what [128];
                snprintf (what, sizeof what, "it did not come back within %d ms",
                          self->config.lost_after_ms > self->config.recovery_wait_ms
                          ? self->config.lost_after_ms: self->config.recovery_wait_ms);
                s_ask_unknown (self, resend->log_id, resend->address, what, true);
            }
        }
        else
        if (xxl_registry_route (self->registry, resend->address, &size))
            engine_dispatch_row (self, resend->log_id, resend->address,
                                 "re-sent (after a scheduler restart or a failed store write)\n");
        else {
            //  The agent may hold the run already (the RUN may have left
            //  before the restart or the failed write): the trigger is not
            //  failed, which would let a retry run it a second time.  It
            //  counts as sent: the agent's result ends it, or, while the
            //  agent stays away, the lost-run monitor (lost_after)
            char *why = zsys_sprintf ("\nagent %s did not come back within %d ms: it may have"
                                      " taken the run before; its result ends it, or the"
                                      " lost-run monitor\n", resend->address,
                                      self->config.recovery_wait_ms);
            int changed = xxl_store_log_accept (self->store, resend->log_id, 0);
            if (changed == 1)
                xxl_store_log_append_trigger_msg (self->store, resend->log_id, why);
            if (changed < 0)
                engine_resend_add (self, resend->log_id, resend->address);
            zstr_free (&why);
        }
        void *item = resend;
        engine_resend_destroy (&item);
    }
    zlistx_destroy (&due);
}

//  Drops one reference to a job snapshot
void
engine_snap_release (snap_t **snap_p)
{
    snap_t *snap = *snap_p;
    if (snap && --snap->refs == 0) {
        zlistx_destroy (&snap->plan_ids);
        xxl_schedule_destroy (&snap->schedule);
        xxl_job_free (&snap->job);
        free (snap);
    }
    *snap_p = NULL;
}

void
engine_snap_destructor (void **item)
{
    engine_snap_release ((snap_t **) item);
}

void
engine_instant_destroy (instant_t **self_p)
{
    if (*self_p) {
        zlistx_destroy (&(*self_p)->batches);
        free (*self_p);
        *self_p = NULL;
    }
}

void
engine_plan_destructor (void **item)
{
    plan_t *plan = (plan_t *) *item;
    if (plan) {
        if (plan->prebuilt) {
            //  Its instant's batch cannot go as built any more
            plan->prebuilt->fires [plan->slot].plan = NULL;
            plan->prebuilt->dirty = true;
        }
        if (plan->handle)
            zlistx_delete (plan->snap->plan_ids, plan->handle);
        engine_snap_release (&plan->snap);
        free (plan->address);
        free (plan->note);
        free (plan->tp);
        free (plan);
        *item = NULL;
    }
}

//  A prepared fire's plan, freed with the batch that carried it
static void
s_fire_free (plan_t *plan)
{
    engine_plan_destructor ((void **) &plan);
}

//  Adds a prepared fire to this instant's batch for its agent (rid, max
//  items): its TriggerParam with logDateTime `stamp`.  Takes the plan.
void
engine_fire_queue (server_t *self, plan_t **plan_p, int64_t stamp, const void *rid,
                   size_t rid_size, int max)
{
    plan_t *plan = *plan_p;
    *plan_p = NULL;
    zlistx_t *open = self->planner.fire_batches;
    //  A batch with room for this agent (full ones wait for the end of the
    //  instant: all go together, so the agent's work does not slow the
    //  rest of the instant's fires)
    run_batch_t *batch = engine_batch_for (self, open, plan->address, rid, rid_size, max, s_fire_free);
    unsigned char time [9];
    engine_pack_time (time, stamp);
    xxl_enc_raw (batch->enc, plan->tp, plan->tp_size, 1);
    batch->fires [batch->count].offset = xxl_enc_size (batch->enc);
    xxl_enc_raw (batch->enc, time, sizeof time, 0);
    batch->fires [batch->count].plan = plan;
    batch->fires [batch->count].stamp = stamp;
    batch->count++;
    batch->bytes += plan->tp_size + sizeof time;
}
