/*  xxl_plan_rules.h -- the planner's decisions as pure functions.

    Contract: plain values in, a decision out.  No server_t, no store, no
    sockets, no clock read (the time is a parameter), no logging; the same
    inputs give the same output.  The planner (xxl_planner.c,
    xxl_recover.c) acts on what these say, in the order it always did.

    Times are epoch ms; XXL_WAITING (xxl_engine_base.h) is the next time of
    a FIX_DELAY job waiting for its run to end.

    xxl_plan_in_window (next, now, ahead)
        Whether a job's next fire is planned now: it is not waiting and is
        due by now + ahead.  Invariant: ahead >= 0.
    xxl_plan_step (planned, now, preread, misfire)
        What the planner does with one planned instant: fire it as planned
        (CRON, at planned; the next time is after planned), or, when now
        is more than preread past it (a misfire), fire once now as MISFIRE
        (FIRE_ONCE_NOW) or skip it (DO_NOTHING, any other strategy); after
        a misfire the next time is after now.  Invariant: preread >= 0.
    xxl_plan_next_after (step, planned, now)
        The instant the next fire time is computed strictly after.
    xxl_plan_walk (next, last, now, ahead, preread, misfire, after_run,
                   next_of, ctx, fires, max)
        The planning window of one job: from its next time, each instant
        up to now + ahead is a step (above, its misfire judged against
        preread) into fires, in order, up to max
        (at most 1000); next_of (ctx, after) gives the schedule's next
        time strictly after `after` (-1: none).  A schedule that runs after
        its run's end (after_run, FIX_DELAY) stops after one step and
        waits (next XXL_WAITING), unless that step was a skipped misfire
        (no run: the next is next_of (now)).  Out: the job's new next and
        last times, or ended (no next time: the job stops, last as walked).
        Invariants: 0 <= ahead <= preread; fires <= max; each fire's
        planned time is above the one before; last is the last fire's
        planned time (or as given).
    xxl_plan_next_scan (count, batch, mono, scan_ms)
        When the next scan is (monotonic ms): at once (0) when the last
        chunk was full (more are due), else scan_ms on.  count <= batch.
    xxl_plan_fix_delay (held, any_waiting)
        What a run's end does for FIX_DELAY, given the shares held and
        whether the waiting set has any job: while this scheduler does
        not hold every share, the store resumes any waiting job of the
        row (the store judges), then the job leaves the waiting set if the
        set has any; holding all, only a job in the waiting set is resumed
        (after leaving the set), and an empty set asks nothing.
    xxl_plan_planner_fires (trigger_status, next_time, late_before)
        Recovery: whether the planner's own misfire fires the job (it
        runs, is not waiting, and its next time is before late_before).
    xxl_plan_recover_misfire (misfire, planner_fires)
        Recovery: whether the outage gets one MISFIRE from recovery: only
        FIRE_ONCE_NOW, and only when the planner's misfire does not fire.
    xxl_plan_row_unknown (log fields, lease, now, late_before, store_ahead)
        Recovery: whether a recovered row must be asked about (see
        xxl_recover.c "Asking agents"); never a BACKFILL row, whose past
        schedule time is no plan (it is recovered as a manual trigger).
*/

#ifndef XXL_PLAN_RULES_H_INCLUDED
#define XXL_PLAN_RULES_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "xxl_store.h"

typedef enum {
    XXL_PLAN_FIRE,                      //  fire as planned (CRON)
    XXL_PLAN_MISFIRE_NOW,               //  too late: fire once now (MISFIRE)
    XXL_PLAN_MISFIRE_SKIP               //  too late: skip it (DO_NOTHING)
} xxl_plan_step_t;

typedef enum {
    XXL_FIXDELAY_SKIP,                  //  nothing to resume, nothing asked
    XXL_FIXDELAY_SHARED,                //  resume in the store; then forget the
                                        //  job when the waiting set has any
    XXL_FIXDELAY_LOOKUP                 //  alone: look the job up in the set;
                                        //  if there, forget it and resume
} xxl_fix_delay_t;

typedef struct {
    xxl_plan_step_t step;
    int64_t planned;
} xxl_plan_fire_t;

typedef struct {
    int64_t next;                       //  the job's next time (XXL_WAITING: waits)
    int64_t last;                       //  the job's last planned time
    size_t fires;                       //  steps written into fires
    bool ended;                         //  no next time: the job stops
} xxl_plan_walk_t;

//  The schedule's next time strictly after `after`, or -1
typedef int64_t (xxl_plan_next_fn) (void *ctx, int64_t after);

bool xxl_plan_in_window (int64_t next, int64_t now, int64_t ahead);
xxl_plan_step_t xxl_plan_step (int64_t planned, int64_t now, int64_t preread,
                               const char *misfire);
int64_t xxl_plan_next_after (xxl_plan_step_t step, int64_t planned, int64_t now);
xxl_plan_walk_t xxl_plan_walk (int64_t next, int64_t last, int64_t now, int64_t ahead,
                               int64_t preread, const char *misfire, bool after_run,
                               xxl_plan_next_fn *next_of, void *ctx, xxl_plan_fire_t *fires,
                               size_t max);
int64_t xxl_plan_next_scan (size_t count, size_t batch, int64_t mono, int64_t scan_ms);
xxl_fix_delay_t xxl_plan_fix_delay (uint64_t held, bool any_waiting);
bool xxl_plan_planner_fires (int64_t trigger_status, int64_t next_time, int64_t late_before);
bool xxl_plan_recover_misfire (const char *misfire, bool planner_fires);
bool xxl_plan_row_unknown (const xxl_log_t *log, const xxl_lease_t *lease, int64_t now,
                           int64_t late_before, int64_t store_ahead);

#endif
