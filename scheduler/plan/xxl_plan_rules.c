/*  xxl_plan_rules.c -- the planner's decisions as pure functions
    (contract: xxl_plan_rules.h).
*/

#include <assert.h>
#include <string.h>
#include "xxl_plan_rules.h"
#include "xxl_engine_base.h"

bool
xxl_plan_in_window (int64_t next, int64_t now, int64_t ahead)
{
    assert (ahead >= 0);
    return next <= now + ahead && next != XXL_WAITING;
}

xxl_plan_step_t
xxl_plan_step (int64_t planned, int64_t now, int64_t preread, const char *misfire)
{
    assert (preread >= 0);
    if (now > planned + preread)
        return misfire && strcmp (misfire, "FIRE_ONCE_NOW") == 0
             ? XXL_PLAN_MISFIRE_NOW: XXL_PLAN_MISFIRE_SKIP;
    return XXL_PLAN_FIRE;
}

int64_t
xxl_plan_next_after (xxl_plan_step_t step, int64_t planned, int64_t now)
{
    return step == XXL_PLAN_FIRE? planned: now;
}

xxl_plan_walk_t
xxl_plan_walk (int64_t next, int64_t last, int64_t now, int64_t ahead, int64_t preread,
               const char *misfire, bool after_run, xxl_plan_next_fn *next_of, void *ctx,
               xxl_plan_fire_t *fires, size_t max)
{
    assert (ahead >= 0 && ahead <= preread && next_of && (fires || max == 0) && max <= 1000);
    xxl_plan_walk_t walk = { .next = next, .last = last };
    while (xxl_plan_in_window (walk.next, now, ahead) && walk.fires < max) {
        int64_t planned = walk.next;
        assert (walk.fires == 0 || planned > fires [walk.fires - 1].planned);
        xxl_plan_step_t step = xxl_plan_step (planned, now, preread, misfire);
        fires [walk.fires].step = step;
        fires [walk.fires++].planned = planned;
        walk.next = next_of (ctx, xxl_plan_next_after (step, planned, now));
        walk.last = planned;
        //  A run's end times the next fire; a fire skipped as a misfire
        //  made no run, so the next is its delay after now (next_of)
        if (after_run) {
            if (step != XXL_PLAN_MISFIRE_SKIP)
                walk.next = XXL_WAITING;
            break;
        }
        if (walk.next < 0)
            break;
    }
    walk.ended = walk.next < 0;
    return walk;
}

int64_t
xxl_plan_next_scan (size_t count, size_t batch, int64_t mono, int64_t scan_ms)
{
    assert (count <= batch);
    return count == batch? 0: mono + scan_ms;
}

xxl_fix_delay_t
xxl_plan_fix_delay (uint64_t held, bool any_waiting)
{
    const uint64_t all = ((uint64_t) 1 << XXL_STORE_SHARES) - 1;
    if ((held & all) != all)
        return XXL_FIXDELAY_SHARED;
    return any_waiting? XXL_FIXDELAY_LOOKUP: XXL_FIXDELAY_SKIP;
}

bool
xxl_plan_planner_fires (int64_t trigger_status, int64_t next_time, int64_t late_before)
{
    return trigger_status == 1 && next_time != XXL_WAITING && next_time < late_before;
}

bool
xxl_plan_recover_misfire (const char *misfire, bool planner_fires)
{
    return misfire && strcmp (misfire, "FIRE_ONCE_NOW") == 0 && !planner_fires;
}

bool
xxl_plan_row_unknown (const xxl_log_t *log, const xxl_lease_t *lease, int64_t now,
                      int64_t late_before, int64_t store_ahead)
{
    assert (log && lease);
    if (!log->executor_address || !*log->executor_address || log->trigger_code != 0
    ||  log->handle_code != 0 || log->schedule_time <= 0
    ||  log->schedule_time >= late_before || log->schedule_time <= lease->fired_sent
    ||  (log->trigger_type && strcmp (log->trigger_type, "BACKFILL") == 0))
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
