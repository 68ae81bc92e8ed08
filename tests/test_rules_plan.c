/*  test_rules_plan.c -- the planner's decisions (xxl_plan_rules.h), as
    pure functions, and the next fire times they walk (engine_next_time):

    - next fire per schedule type (CRON in its zone, FIX_RATE, FIX_DELAY,
      NONE), across Europe/Berlin's spring-forward gap and fall-back hour;
    - the planning window: which instants are planned now, their steps,
      FIX_RATE spacing, and when the next scan is; planner/ahead shorter
      than the pre-read writes fewer rows ahead and judges misfires
      against the pre-read still;
    - misfire after an outage: DO_NOTHING skips, FIRE_ONCE_NOW fires once,
      the next time after now; an outage inside the window is no misfire;
    - FIX_DELAY: the walk plans one run and waits; a run's end resumes it
      (the decision, then the store's delay_resume against an in-memory
      SQLite store: the next run at end + delay, only for a waiting job);
    - recovery: the outage's one MISFIRE, and which rows are asked about.
*/

#include "xxl_engine.h"
#include "xxl_plan_rules.h"
#include "xxl_test.h"

#define MS(s) ((int64_t) (s) * 1000)
#define PRE 5000                        //  the default misfire bound (pre-read), ms
#define AHEAD 3000                      //  the default planning window, ms

static xxl_job_t
s_job (const char *type, const char *conf, const char *tz, const char *misfire)
{
    xxl_job_t job = {
        .schedule_type = (char *) type, .schedule_conf = (char *) conf,
        .timezone = (char *) tz, .misfire_strategy = (char *) misfire,
    };
    return job;
}

//  The walk's next times, as the planner's snapshot gives them
static int64_t
s_next_of (void *ctx, int64_t after)
{
    char why [256];
    return engine_next_time ((const xxl_job_t *) ctx, after, why, sizeof why);
}

//  A walk with the window as long as the pre-read (planner/ahead =
//  planner/preread: XXL-JOB's single window)
static xxl_plan_walk_t
s_walk (xxl_job_t *job, int64_t next, int64_t last, int64_t now, xxl_plan_fire_t *fires)
{
    bool after_run = streq (job->schedule_type, "FIX_DELAY");
    return xxl_plan_walk (next, last, now, PRE, PRE, job->misfire_strategy, after_run, s_next_of,
                          job, fires, 1000);
}

//  The default window: rows written AHEAD ms ahead, misfires judged
//  against PRE
static xxl_plan_walk_t
s_walk_ahead (xxl_job_t *job, int64_t next, int64_t last, int64_t now, xxl_plan_fire_t *fires)
{
    return xxl_plan_walk (next, last, now, AHEAD, PRE, job->misfire_strategy, false, s_next_of,
                          job, fires, 1000);
}

static void
s_next_times (void)
{
    char why [256];
    //  Europe/Berlin 2027: 02:30 daily skips 2027-03-28 (the gap), and on
    //  2027-10-31 fires once at the later (CET) 02:30, 01:30Z (Quartz)
    xxl_job_t daily = s_job ("CRON", "0 30 2 * * ?", "Europe/Berlin", "DO_NOTHING");
    int64_t spring [] = { 1806111000, 1806280200, 1806366600 };
    int64_t at = 1806062400000LL;                       //  2027-03-26T12:00Z
    for (int i = 0; i < 3; i++) {
        at = engine_next_time (&daily, at, why, sizeof why);
        XXL_CHECK_INT (at, MS (spring [i]));
    }
    XXL_CHECK_INT (MS (spring [1]) - MS (spring [0]), 2 * 86400000LL - 3600000);
    at = engine_next_time (&daily, 1824811200000LL, why, sizeof why);  //  2027-10-29T12:00Z
    at = engine_next_time (&daily, at, why, sizeof why);
    XXL_CHECK_INT (at, MS (1824946200));                //  2027-10-31T01:30Z
    //  hourly :30 over the fall-back hour: 00:30Z (02:30 CEST) fires not
    xxl_job_t hourly = s_job ("CRON", "0 30 * * * ?", "Europe/Berlin", "DO_NOTHING");
    int64_t fall [] = { 1824935400, 1824939000, 1824946200, 1824949800 };
    at = 1824933600000LL;                               //  2027-10-30T22:00Z
    for (int i = 0; i < 4; i++) {
        at = engine_next_time (&hourly, at, why, sizeof why);
        XXL_CHECK_INT (at, MS (fall [i]));
    }
    //  Strictly after: an instant is not its own next
    xxl_job_t every = s_job ("CRON", "0/5 * * * * ?", "", "DO_NOTHING");
    XXL_CHECK_INT (engine_next_time (&every, MS (1005), why, sizeof why), MS (1010));
    XXL_CHECK_INT (engine_next_time (&every, MS (1005) - 1, why, sizeof why), MS (1005));
    //  FIX_RATE from the instant before; FIX_DELAY from the run's end
    xxl_job_t rate = s_job ("FIX_RATE", "1", "", "DO_NOTHING");
    XXL_CHECK_INT (engine_next_time (&rate, MS (100), why, sizeof why), MS (101));
    xxl_job_t delay = s_job ("FIX_DELAY", "7", "", "DO_NOTHING");
    XXL_CHECK_INT (engine_next_time (&delay, MS (100), why, sizeof why), MS (107));
    //  NONE and an ended cron: none, with the reason
    xxl_job_t none = s_job ("NONE", "", "", "DO_NOTHING");
    XXL_CHECK_INT (engine_next_time (&none, 0, why, sizeof why), -1);
    XXL_CHECK_HAS (why, "has no next time");
    xxl_job_t ended = s_job ("CRON", "0 0 0 1 1 ? 2020", "", "DO_NOTHING");
    XXL_CHECK_INT (engine_next_time (&ended, MS (1700000000), why, sizeof why), -1);
    XXL_CHECK_HAS (why, "the cron expression has no time after");
}

static void
s_window (void)
{
    int64_t now = MS (1000000);
    //  In the window: up to now + pre-read, inclusive; never a waiting job
    XXL_CHECK (xxl_plan_in_window (now + PRE, now, PRE));
    XXL_CHECK (!xxl_plan_in_window (now + PRE + 1, now, PRE));
    XXL_CHECK (xxl_plan_in_window (now - MS (3600), now, PRE));
    XXL_CHECK (!xxl_plan_in_window (XXL_WAITING, XXL_WAITING, PRE));
    XXL_CHECK (xxl_plan_in_window (now, now, 0));
    //  Steps: up to pre-read late is on time; a ms more is a misfire
    XXL_CHECK_INT (xxl_plan_step (now - PRE, now, PRE, "DO_NOTHING"), XXL_PLAN_FIRE);
    XXL_CHECK_INT (xxl_plan_step (now - PRE - 1, now, PRE, "DO_NOTHING"), XXL_PLAN_MISFIRE_SKIP);
    XXL_CHECK_INT (xxl_plan_step (now - PRE - 1, now, PRE, "FIRE_ONCE_NOW"), XXL_PLAN_MISFIRE_NOW);
    XXL_CHECK_INT (xxl_plan_step (now - PRE - 1, now, PRE, "fire_once_now"), XXL_PLAN_MISFIRE_SKIP);
    XXL_CHECK_INT (xxl_plan_step (now + PRE, now, PRE, "FIRE_ONCE_NOW"), XXL_PLAN_FIRE);
    XXL_CHECK_INT (xxl_plan_next_after (XXL_PLAN_FIRE, now - 7, now), now - 7);
    XXL_CHECK_INT (xxl_plan_next_after (XXL_PLAN_MISFIRE_NOW, now - 7, now), now);
    XXL_CHECK_INT (xxl_plan_next_after (XXL_PLAN_MISFIRE_SKIP, now - 7, now), now);
    //  Next scan: a full chunk scans again at once; else scan_ms on
    XXL_CHECK_INT (xxl_plan_next_scan (512, 512, 7000, 1000), 0);
    XXL_CHECK_INT (xxl_plan_next_scan (511, 512, 7000, 1000), 8000);
    XXL_CHECK_INT (xxl_plan_next_scan (0, 512, 7000, 1000), 8000);

    //  A one-second cron due now plans the six instants now .. now + 5 s
    xxl_plan_fire_t fires [1000];
    xxl_job_t second = s_job ("CRON", "* * * * * ?", "", "DO_NOTHING");
    xxl_plan_walk_t walk = s_walk (&second, now, now - 1000, now, fires);
    XXL_CHECK_INT (walk.fires, 6);
    for (size_t i = 0; i < walk.fires; i++)
        XXL_CHECK (fires [i].step == XXL_PLAN_FIRE && fires [i].planned == now + (int64_t) i * 1000);
    XXL_CHECK_INT (walk.last, now + PRE);
    XXL_CHECK_INT (walk.next, now + PRE + 1000);
    XXL_CHECK (!walk.ended);
    //  Not due yet: nothing planned, times kept
    walk = s_walk (&second, now + PRE + 1, 42, now, fires);
    XXL_CHECK (walk.fires == 0 && walk.next == now + PRE + 1 && walk.last == 42 && !walk.ended);
    //  FIX_RATE 1 s: planned a second apart from the first (test_planner.sh's
    //  "FIX_RATE fires about once a second")
    xxl_job_t rate = s_job ("FIX_RATE", "1", "", "DO_NOTHING");
    walk = s_walk (&rate, now + 400, 0, now, fires);
    XXL_CHECK_INT (walk.fires, 5);
    for (size_t i = 1; i < walk.fires; i++)
        XXL_CHECK_INT (fires [i].planned - fires [i - 1].planned, 1000);
    XXL_CHECK_INT (walk.next, now + 400 + 5000);
    //  At most max steps a walk (the planner's guard)
    xxl_job_t often = s_job ("CRON", "* * * * * ?", "", "DO_NOTHING");
    walk = xxl_plan_walk (now - 2000, 0, now, PRE, PRE, "DO_NOTHING", false, s_next_of, &often,
                          fires, 3);
    XXL_CHECK_INT (walk.fires, 3);
    //  An ended schedule: the job stops, last as walked
    xxl_job_t ended = s_job ("CRON", "0 0 0 1 1 ? 2020", "", "DO_NOTHING");
    int64_t later = MS (1700000000);                    //  (2023: past its 2020)
    walk = s_walk (&ended, later, 5, later, fires);
    XXL_CHECK (walk.ended);
    XXL_CHECK_INT (walk.fires, 1);
    XXL_CHECK_INT (walk.last, later);
}

//  An outage of `down` ms: the job was due at `due` and the scheduler
//  comes back at due + down
static void
s_misfire (void)
{
    xxl_plan_fire_t fires [1000];
    int64_t due = MS (2000000);
    xxl_job_t nothing = s_job ("CRON", "* * * * * ?", "", "DO_NOTHING");
    xxl_job_t once = s_job ("CRON", "* * * * * ?", "", "FIRE_ONCE_NOW");
    int64_t downs [] = { 7500, 60000, 3600000, 86400000 };
    for (size_t d = 0; d < sizeof downs / sizeof downs [0]; d++) {
        int64_t now = due + downs [d];
        //  DO_NOTHING: one skip, then the times after now from now on
        xxl_plan_walk_t walk = s_walk (&nothing, due, 0, now, fires);
        XXL_CHECK (walk.fires >= 1 && fires [0].step == XXL_PLAN_MISFIRE_SKIP
                   && fires [0].planned == due);
        size_t skips = 0, misfires = 0;
        for (size_t i = 0; i < walk.fires; i++) {
            skips += fires [i].step == XXL_PLAN_MISFIRE_SKIP;
            misfires += fires [i].step == XXL_PLAN_MISFIRE_NOW;
            XXL_CHECK (i == 0 || fires [i].planned > now);
        }
        XXL_CHECK_INT (skips, 1);
        XXL_CHECK_INT (misfires, 0);
        XXL_CHECK_INT (walk.fires, 1 + PRE / 1000);     //  then now+1 .. now+5 s
        //  FIRE_ONCE_NOW: exactly one MISFIRE, then on time
        walk = s_walk (&once, due, 0, now, fires);
        misfires = 0;
        for (size_t i = 0; i < walk.fires; i++)
            misfires += fires [i].step == XXL_PLAN_MISFIRE_NOW;
        XXL_CHECK_INT (misfires, 1);
        XXL_CHECK (fires [0].step == XXL_PLAN_MISFIRE_NOW && fires [0].planned == due);
        XXL_CHECK (walk.fires > 1 && fires [1].step == XXL_PLAN_FIRE && fires [1].planned > now);
    }
    //  An outage shorter than the window is no misfire: every second fires
    int64_t now = due + 4000;
    xxl_plan_walk_t walk = s_walk (&nothing, due, 0, now, fires);
    XXL_CHECK_INT (walk.fires, 10);
    for (size_t i = 0; i < walk.fires; i++)
        XXL_CHECK (fires [i].step == XXL_PLAN_FIRE);
    //  The default window (AHEAD < PRE): a one-second cron plans now ..
    //  now + 3 s, and the next scan goes on from there
    walk = s_walk_ahead (&nothing, now, now - 1000, now, fires);
    XXL_CHECK_INT (walk.fires, 1 + AHEAD / 1000);
    for (size_t i = 0; i < walk.fires; i++)
        XXL_CHECK (fires [i].step == XXL_PLAN_FIRE && fires [i].planned == now + (int64_t) i * 1000);
    XXL_CHECK_INT (walk.next, now + AHEAD + 1000);
    walk = s_walk_ahead (&nothing, now + AHEAD + 1, 42, now, fires);
    XXL_CHECK (walk.fires == 0 && walk.next == now + AHEAD + 1 && walk.last == 42);
    //  ... a fire late by more than AHEAD but not PRE is no misfire: it
    //  fires (CRON), as do the late seconds after it, then up to now + 3 s
    walk = s_walk_ahead (&nothing, due, 0, due + 4000, fires);
    XXL_CHECK_INT (walk.fires, 5 + AHEAD / 1000);
    for (size_t i = 0; i < walk.fires; i++)
        XXL_CHECK (fires [i].step == XXL_PLAN_FIRE && fires [i].planned == due + (int64_t) i * 1000);
    //  ... one late by more than PRE is: skipped (DO_NOTHING) or fired
    //  once now (FIRE_ONCE_NOW), then the seconds after now up to now + 3 s
    walk = s_walk_ahead (&nothing, due, 0, due + PRE + 500, fires);
    XXL_CHECK (walk.fires == 1 + AHEAD / 1000 && fires [0].step == XXL_PLAN_MISFIRE_SKIP);
    XXL_CHECK_INT (fires [walk.fires - 1].planned, due + PRE + AHEAD);
    walk = s_walk_ahead (&once, due, 0, due + PRE + 500, fires);
    XXL_CHECK (walk.fires == 1 + AHEAD / 1000 && fires [0].step == XXL_PLAN_MISFIRE_NOW);
    XXL_CHECK (fires [1].step == XXL_PLAN_FIRE && fires [1].planned == due + PRE + 1000);

    //  An hourly Berlin job down over the fall-back hour misfires once
    xxl_job_t hourly = s_job ("CRON", "0 30 * * * ?", "Europe/Berlin", "FIRE_ONCE_NOW");
    walk = s_walk (&hourly, MS (1824935400), 0, MS (1824946200) + 60000, fires);
    XXL_CHECK (walk.fires == 1 && fires [0].step == XXL_PLAN_MISFIRE_NOW);
    XXL_CHECK_INT (walk.next, MS (1824949800));

    //  Recovery: the planner fires when the next time is before the
    //  window's start; else FIRE_ONCE_NOW recovery keeps one MISFIRE
    int64_t late_before = MS (3000000);
    XXL_CHECK (xxl_plan_planner_fires (1, late_before - 1, late_before));
    XXL_CHECK (!xxl_plan_planner_fires (1, late_before, late_before));
    XXL_CHECK (!xxl_plan_planner_fires (0, late_before - 1, late_before));
    XXL_CHECK (!xxl_plan_planner_fires (1, XXL_WAITING, XXL_WAITING + 1));
    XXL_CHECK (xxl_plan_recover_misfire ("FIRE_ONCE_NOW", false));
    XXL_CHECK (!xxl_plan_recover_misfire ("FIRE_ONCE_NOW", true));
    XXL_CHECK (!xxl_plan_recover_misfire ("DO_NOTHING", false));
    XXL_CHECK (!xxl_plan_recover_misfire (NULL, false));
}

static void
s_asked (void)
{
    int64_t now = MS (5000000), late_before = now - PRE;
    xxl_lease_t lease = { .owner = "", .fired_until = now - 10000, .fired_sent = now - 60000 };
    xxl_log_t log = { .executor_address = "a:1", .schedule_time = now - 20000 };
    //  Routed ahead, past fired_sent, within fired_until: asked
    XXL_CHECK (xxl_plan_row_unknown (&log, &lease, now, late_before, 0));
    //  Past fired_until: never left
    log.schedule_time = now - 9000;
    XXL_CHECK (!xxl_plan_row_unknown (&log, &lease, now, late_before, 0));
    //  ... unless its fire time was written (sent through the store)
    log.trigger_time = log.schedule_time;
    XXL_CHECK (xxl_plan_row_unknown (&log, &lease, now, late_before, 0));
    //  Inside the window: it simply goes again
    log.schedule_time = late_before;
    XXL_CHECK (!xxl_plan_row_unknown (&log, &lease, now, late_before, 0));
    //  Known sent (at or before fired_sent), no address, answered: not asked
    log.schedule_time = lease.fired_sent;
    XXL_CHECK (!xxl_plan_row_unknown (&log, &lease, now, late_before, 0));
    log = (xxl_log_t) { .executor_address = "", .schedule_time = now - 20000 };
    XXL_CHECK (!xxl_plan_row_unknown (&log, &lease, now, late_before, 0));
    log = (xxl_log_t) { .executor_address = "a:1", .schedule_time = now - 20000, .trigger_code = 200 };
    XXL_CHECK (!xxl_plan_row_unknown (&log, &lease, now, late_before, 0));
    //  The previous owner's lease ran out before: it could not have sent
    //  after its expiry (on this clock: the store's minus store_ahead)
    log = (xxl_log_t) { .executor_address = "a:1", .schedule_time = now - 20000 };
    xxl_lease_t held = { .owner = "b", .expires = now - 30000, .fired_until = now - 10000,
                         .fired_sent = now - 60000 };
    XXL_CHECK (!xxl_plan_row_unknown (&log, &held, now, late_before, 0));
    XXL_CHECK (xxl_plan_row_unknown (&log, &held, now, late_before, -15000));
}

static void
s_fix_delay (void)
{
    const uint64_t all = ((uint64_t) 1 << XXL_STORE_SHARES) - 1;
    //  Sharing the store: the store judges, whatever the waiting set
    XXL_CHECK_INT (xxl_plan_fix_delay (0, false), XXL_FIXDELAY_SHARED);
    XXL_CHECK_INT (xxl_plan_fix_delay (all & ~1ull, true), XXL_FIXDELAY_SHARED);
    XXL_CHECK_INT (xxl_plan_fix_delay (1, true), XXL_FIXDELAY_SHARED);
    //  Alone: the waiting set decides; none waiting asks nothing
    XXL_CHECK_INT (xxl_plan_fix_delay (all, false), XXL_FIXDELAY_SKIP);
    XXL_CHECK_INT (xxl_plan_fix_delay (all, true), XXL_FIXDELAY_LOOKUP);
    XXL_CHECK_INT (xxl_plan_fix_delay (~0ull, true), XXL_FIXDELAY_LOOKUP);

    //  The walk plans one run and waits, whenever the scan comes
    xxl_plan_fire_t fires [1000];
    xxl_job_t delay = s_job ("FIX_DELAY", "1", "", "DO_NOTHING");
    int64_t now = MS (7000000);
    xxl_plan_walk_t walk = s_walk (&delay, now + 1000, 0, now, fires);
    XXL_CHECK (walk.fires == 1 && walk.next == XXL_WAITING && walk.last == now + 1000);
    walk = s_walk (&delay, XXL_WAITING, now + 1000, now + 60000, fires);
    XXL_CHECK (walk.fires == 0 && walk.next == XXL_WAITING && !walk.ended);
    //  Its fire found past the pre-read (a scheduler down, a wall clock
    //  stepped forward): DO_NOTHING skips it, and with no run to end, the
    //  next fire is the delay after now, not a wait for ever
    walk = s_walk (&delay, now + 1000, 0, now + 1000 + PRE + 1, fires);
    XXL_CHECK (walk.fires == 1 && fires [0].step == XXL_PLAN_MISFIRE_SKIP);
    XXL_CHECK_INT (walk.next, now + 1000 + PRE + 1 + 1000);
    XXL_CHECK (!walk.ended && walk.last == now + 1000);
    //  ... FIRE_ONCE_NOW runs it at once, and waits for that run's end
    xxl_job_t delay_now = s_job ("FIX_DELAY", "1", "", "FIRE_ONCE_NOW");
    walk = s_walk (&delay_now, now + 1000, 0, now + 1000 + PRE + 1, fires);
    XXL_CHECK (walk.fires == 1 && fires [0].step == XXL_PLAN_MISFIRE_NOW);
    XXL_CHECK (walk.next == XXL_WAITING && !walk.ended);

    //  The store's resume (the fake store: SQLite in memory): the waiting
    //  job's next run is the end + its delay; a second end, another
    //  job's row or a job not waiting changes nothing
    char err [256];
    xxl_store_t *store = xxl_store_new (":memory:", err, sizeof err);
    XXL_CHECK_MSG (store, "store: %s", err);
    if (!store)
        return;
    xxl_group_t group = { .app_name = "rules-app", .title = "rules", .address_type = 0,
                          .address_list = "" };
    int64_t gid = xxl_store_group_add (store, &group);
    xxl_job_t job = {
        .job_group = gid, .job_desc = "fd", .author = "", .alarm_email = "",
        .schedule_type = "FIX_DELAY", .schedule_conf = "3", .misfire_strategy = "DO_NOTHING",
        .executor_route_strategy = "FIRST", .executor_handler = "h", .executor_param = "",
        .executor_block_strategy = "SERIAL_EXECUTION", .glue_type = "BEAN", .glue_source = "",
        .glue_remark = "", .child_jobid = "", .timezone = "", .trigger_status = 1,
        .trigger_next_time = XXL_WAITING, .retry_backoff = 1
    };
    int64_t jid = xxl_store_job_add (store, &job);
    job.trigger_next_time = now;
    int64_t other = xxl_store_job_add (store, &job);
    XXL_CHECK (gid > 0 && jid > 0 && other > 0);
    xxl_log_t row = { .job_group = gid, .job_id = jid, .executor_handler = "h",
                      .executor_param = "", .trigger_time = now, .trigger_msg = "",
                      .trigger_type = "CRON", .schedule_time = now };
    XXL_CHECK (xxl_store_log_add (store, &row) == 0);
    xxl_log_t manual = row;
    manual.id = 0;
    manual.schedule_time = 0;
    manual.trigger_type = "MANUAL";
    XXL_CHECK (xxl_store_log_add (store, &manual) == 0);
    xxl_log_t not_waiting = row;
    not_waiting.id = 0;
    not_waiting.job_id = other;
    XXL_CHECK (xxl_store_log_add (store, &not_waiting) == 0);
    int64_t end = now + 8000;
    //  A manual run's end resumes nothing
    XXL_CHECK_INT (xxl_store_job_delay_resume (store, manual.id, end, XXL_WAITING), 0);
    XXL_CHECK_INT (xxl_store_job_delay_resume (store, row.id, end, XXL_WAITING), 1);
    xxl_job_t read;
    XXL_CHECK (xxl_store_job_load (store, jid, &read) == 0);
    XXL_CHECK_INT (read.trigger_next_time, end + 3000);
    xxl_job_free (&read);
    XXL_CHECK_INT (xxl_store_job_delay_resume (store, row.id, end + 500, XXL_WAITING), 0);
    XXL_CHECK_INT (xxl_store_job_delay_resume (store, not_waiting.id, end, XXL_WAITING), 0);
    XXL_CHECK (xxl_store_job_load (store, other, &read) == 0);
    XXL_CHECK_INT (read.trigger_next_time, now);
    xxl_job_free (&read);
    XXL_CHECK_INT (xxl_store_log_job_id (store, row.id), jid);
    xxl_store_destroy (&store);
}

int
main (void)
{
    s_next_times ();
    s_window ();
    s_misfire ();
    s_asked ();
    s_fix_delay ();
    return xxl_test_done ();
}
