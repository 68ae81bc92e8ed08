/*  xxl_plans.c -- the lifetimes of the planner's plans and job snapshots.

    A snapshot (snap_t) is a job as the planner last read it, shared by
    its planned triggers (plan_t) by reference count; a plan leaves the
    planner's table when sent, dropped or voided, and its snapshot goes
    once nothing planned refers to it and the job is not due soon.
    Contract in xxl_planner.h.
*/

#include "xxl_engine.h"
#include "xxl_calendar.h"

//  True when the planner has no reason to keep a job's snapshot cached: it
//  does not fire again soon and none of its plans waits to be sent.  A
//  snapshot with plans stays cached until the last of them left, so that
//  a stop, update or removal of its job (engine_plan_forget) and a lost
//  lease find and cancel them: a job that fires a minute later is no
//  longer kept between its fires, and its prepared RUN must not leave
//  after the job changed
bool
engine_snap_idle (server_t *self, const snap_t *snap, int64_t now)
{
    return zlistx_size (snap->plan_ids) == 0
        && (snap->job.trigger_status != 1
            || snap->job.trigger_next_time > now + 2 * self->config.preread_ms);
}

//  After a plan of job_id left (sent): its cached snapshot goes once idle
void
engine_snap_settle (server_t *self, int64_t job_id)
{
    snap_t *snap = (snap_t *) zhashx_lookup (self->planner.snaps, &job_id);
    if (snap && engine_snap_idle (self, snap, engine_now ()))
        zhashx_delete (self->planner.snaps, &job_id);
}

//  Drops one reference to a job snapshot
void
engine_snap_release (snap_t **snap_p)
{
    snap_t *snap = *snap_p;
    if (snap && --snap->refs == 0) {
        zlistx_destroy (&snap->plan_ids);
        xxl_schedule_destroy (&snap->schedule);
        xxl_calendar_destroy (&snap->calendar);
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

//  The planner's state, made at the actor's start and freed at its stop
void
engine_plan_start (server_t *self)
{
    self->planner.waiting = engine_id_map (engine_free_item);
    self->planner.plans = engine_id_map (engine_plan_destructor);
    self->planner.fire_batches = zlistx_new ();
    zlistx_set_destructor (self->planner.fire_batches, engine_batch_destructor);
    self->planner.instants = engine_id_map (NULL);
    self->planner.taking = zlistx_new ();
    self->planner.fire_later = zlistx_new ();
    self->planner.turn_plans = zlistx_new ();
    self->planner.unprepared = zlistx_new ();
    self->planner.snaps = engine_id_map (engine_snap_destructor);
    self->planner.snaps_limit = XXL_SNAPS_CAP;
    self->planner.timer = xxl_timer_new ();
    //  zmq_poll's timeout counts whole milliseconds from when it is
    //  computed; the fires wake on this instead, to the microsecond
    self->planner.timer_fd = timerfd_create (CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
    self->planner.timer_armed = -1;
    self->planner.asks = engine_id_map (engine_free_item);
    self->planner.ask_jobs = engine_id_map (engine_free_item);
    //  A fire is planned by the first scan that finds it within the
    //  window: a window no longer than the scans' period finds some late
    if (engine_plan_ahead (self) <= self->config.scan_ms)
        zsys_warning ("planner: the window of %" PRId64 " ms (planner/ahead, at most"
                      " planner/preread) is not above planner/scan (%d ms): fires will be"
                      " planned after their time and start late (docs/operations.md)",
                      engine_plan_ahead (self), self->config.scan_ms);
}

void
engine_plan_stop (server_t *self)
{
    xxl_timer_destroy (&self->planner.timer);
    if (self->planner.timer_fd >= 0)
        close (self->planner.timer_fd);
    zhashx_destroy (&self->planner.asks);
    zhashx_destroy (&self->planner.ask_jobs);
    zhashx_destroy (&self->planner.waiting);
    if (self->planner.instants) {
        instant_t *instant;
        while ((instant = (instant_t *) zhashx_first (self->planner.instants))) {
            zhashx_delete (self->planner.instants, &instant->when);
            engine_instant_destroy (&instant);
        }
        zhashx_destroy (&self->planner.instants);
    }
    zlistx_destroy (&self->planner.taking);
    zhashx_destroy (&self->planner.plans);
    zlistx_destroy (&self->planner.fire_batches);
    zlistx_destroy (&self->planner.fire_later);
    zlistx_destroy (&self->planner.turn_plans);
    zlistx_destroy (&self->planner.unprepared);
    zhashx_destroy (&self->planner.snaps);
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

bool
engine_plan_holds (server_t *self, int64_t log_id)
{
    return zhashx_lookup (self->planner.plans, &log_id) != NULL;
}

bool
engine_plan_asks (server_t *self, int64_t log_id)
{
    return zhashx_lookup (self->planner.asks, &log_id) != NULL;
}
