/*  xxl_fire.c -- the planner's fires: the timer, prepared fires, instants.

    Planned rows wait on the timer (a heap by fire time, woken by a
    timerfd to the microsecond).  A prepared fire (routed at planning, its
    RUN encoded) leaves at its instant with no store access: the instant's
    prebuilt batches are stamped and sent; a row that lost its preparation
    is dispatched the ordinary way.  Rows due that need the store wait for
    the next turn.  Contract in xxl_planner.h.
*/

#include "xxl_engine.h"

static bool s_job_has_agents (server_t *self, const xxl_job_t *job);
static void s_fire_free (plan_t *plan);

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
    bool connected = !xxl_routers_is_broadcast (engine_runs_routers (self), job.executor_route_strategy)
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
    if (xxl_store_lease_fired (self->store, engine_lease_held (self), until, 0) == 0)
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
    engine_snap_settle (self, taken->snap->job.id);
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
    //  (no plan of a share not held exists: engine_plan_on_lost, s_plan_fire)
    assert (!plan || engine_lease_holds (self, plan->snap->job.id));
    if (!plan || !plan->tp || plan->snap->cancelled || plan->turn == self->turn
    ||  plan->turn <= self->planner.foreign_turn || self->stopping || when > self->planner.fired_until
    ||  !xxl_registry_route (self->registry, plan->address, &rid_size)
    ||  !engine_address_fits (self, &plan->snap->job, plan->address)) {
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
    pending->job_id = plan->snap->job.id;
    pending->note = plan->note && *plan->note? strdup (plan->note): NULL;
    pending->presumed = engine_section_chars (plan->note, plan->address);
    pending->stamp = stamp;
    engine_run_queue (self, pending, plan->tp, plan->tp_size, stamp, self->planner.fire_batches);
    int64_t job_id = plan->snap->job.id;
    zhashx_delete (self->planner.plans, &log_id);
    engine_snap_settle (self, job_id);
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
    //  Schedulers sharing the store: a stop or edit another committed
    //  since this turn began (PostgreSQL lets one in mid-turn) sends no
    //  plan blind (as at the turn's start)
    int64_t next = xxl_timer_next (self->planner.timer);
    if (self->planner.foreign_turn > 0 && next >= 0 && next <= now) {
        int64_t version = xxl_store_data_version (self->store);
        if (version != self->data_version)
            self->planner.foreign_turn = self->turn;
        self->data_version = version;
    }
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
        engine_batch_close (self, batch, self->planner.fire_batches, true);
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

//  Waits for the next fire (due within the guard) and sends it.  The wait
//  is bounded on the monotonic clock by the time left when it began (and
//  2 ms for the clocks' rounding): a wall clock stepped back meanwhile
//  leaves the fire unsent (an instant stays due when the wall clock
//  reaches it again; a delay the loop's wall check moves by the step),
//  never holding the engine for the size of the step
void
engine_fire_wait (server_t *self)
{
    int64_t next = xxl_timer_next (self->planner.timer);
    int64_t left = next >= 0? next - engine_now (): 0;
    int64_t until = zclock_mono () + (left > 0? left: 0) + 2;
    while (next >= 0 && (left = next - engine_now ()) > 0) {
        int64_t budget = until - zclock_mono ();
        if (budget < 0)
            return;
        if (left > budget + 1)
            left = budget + 1;
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
    if (xxl_registry_route (self->registry, plan->address, &rid_size)
    &&  engine_address_fits (self, &plan->snap->job, plan->address)) {
        int64_t stamp = engine_now ();
        if (xxl_store_log_stamp (self->store, plan->log_id, stamp) != 1)
            return;                     //  cancelled by a scheduler sharing the store
        char why [256];
        pending_t *pending = engine_pending_new (self, plan->address, PENDING_RUN,
                                                 self->config.run_timeout_ms, why, sizeof why);
        if (!pending)
            return;                     //  (connected: cannot happen)
        pending->log_id = plan->log_id;
        pending->job_id = plan->snap->job.id;
        pending->note = plan->note && *plan->note? strdup (plan->note): NULL;
        pending->presumed = engine_section_chars (plan->note, plan->address);
        engine_run_queue (self, pending, plan->tp, plan->tp_size, stamp, NULL);
        return;
    }
    //  Its agent is gone (or lost the job's tags): take the address and
    //  section back, route again
    char *section = engine_section (plan->note, plan->address, XXL_OK, NULL);
    if (xxl_store_log_unroute (self->store, plan->log_id, section, 0) == 1)
        s_plan_dispatch (self, plan);
    zstr_free (&section);
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
    //  (rows wait for an agent while agents reconnect after a start, and
    //  while deaf: the store's agents heard by another scheduler only; a
    //  planned row of a share given up meanwhile is its new holder's)
    bool warming = zclock_mono () < self->warm_until || engine_lease_deaf (self);
    //  (no agent connected at all: no row has one, nothing to read per row;
    //  a deaf scheduler may hold many rows, each looked at every 100 ms)
    bool none = xxl_registry_size (self->registry) == 0;
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
        assert (!plan || engine_lease_holds (self, plan->snap->job.id));
        if (warming && (none || !(plan? !plan->sharded && s_job_has_agents (self, &plan->snap->job)
                                      : s_row_has_agents (self, log_id)))) {
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
            engine_snap_settle (self, job_id);
        }
        else
            engine_dispatch_row (self, log_id, NULL, NULL);
    }
    if (held) {
        for (item = zlistx_first (held); item; item = zlistx_next (held))
            xxl_timer_push_after (self->planner.timer, now, 100, (int64_t) (intptr_t) item);
        zlistx_destroy (&held);
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

void
engine_plan_on_long_work (server_t *self, const xxl_event_t *event)
{
    (void) event;
    engine_fire_check (self);
}

void
engine_plan_on_again (server_t *self, const xxl_event_t *event)
{
    xxl_timer_push_after (self->planner.timer, event->now, event->delay, event->log_id);
}
