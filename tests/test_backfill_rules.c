/*  test_backfill_rules.c -- a backfill's pure decisions
    (xxl_backfill_rules.h) and the recovery rule that keeps its rows:

    - which schedules and ranges a backfill takes (NONE, FIX_DELAY, from
      after to, a range into the future: refused with their reasons);
    - the instants of a range: a cron's fire times in its zone (both ends
      included, across Europe/Berlin's fall-back hour), FIX_RATE's grid
      around any anchor, the count's cap (max + 1: the caller refuses);
    - pacing: a second of credit at most, the cap, fractions carried;
    - recovery never asks an agent about a BACKFILL row (its past schedule
      time is no lost plan), and the store's migration makes the table
      whose rows advance only from the cursor they were read at.
*/

#include "xxl_engine.h"
#include "xxl_backfill_rules.h"
#include "xxl_plan_rules.h"
#include "xxl_test.h"

static int64_t
s_cron_next (void *ctx, int64_t after)
{
    char why [256];
    return engine_next_time ((const xxl_job_t *) ctx, after, why, sizeof why);
}

typedef struct {
    int64_t anchor, rate;
} grid_t;

static int64_t
s_grid_next (void *ctx, int64_t after)
{
    grid_t *grid = (grid_t *) ctx;
    return xxl_backfill_grid (grid->anchor, grid->rate, after);
}

static void
s_check (void)
{
    char why [256];
    int64_t now = 1700000000000;
    XXL_CHECK (xxl_backfill_check ("CRON", now - 1000, now, now, why, sizeof why) == 0);
    XXL_CHECK (xxl_backfill_check ("FIX_RATE", now, now, now, why, sizeof why) == 0);
    XXL_CHECK (xxl_backfill_check ("NONE", now - 1000, now, now, why, sizeof why) == -1);
    XXL_CHECK (strstr (why, "NONE has no planned fire times"));
    XXL_CHECK (xxl_backfill_check ("FIX_DELAY", now - 1000, now, now, why, sizeof why) == -1);
    XXL_CHECK (xxl_backfill_check (NULL, now - 1000, now, now, why, sizeof why) == -1);
    XXL_CHECK (xxl_backfill_check ("CRON", now, now - 1, now, why, sizeof why) == -1);
    XXL_CHECK (strstr (why, "is after to"));
    XXL_CHECK (xxl_backfill_check ("CRON", now - 1000, now + 1, now, why, sizeof why) == -1);
    XXL_CHECK (strstr (why, "in the future"));
}

static void
s_instants (void)
{
    //  Every second: 11 instants in [10 s, 20 s], both ends included
    xxl_job_t every = { .schedule_type = (char *) "CRON", .schedule_conf = (char *) "* * * * * ?",
                        .timezone = (char *) "UTC" };
    XXL_CHECK_INT (xxl_backfill_count (s_cron_next, &every, 10000, 20000, 100), 11);
    //  ... a range between two seconds has none; one on a second has one
    XXL_CHECK_INT (xxl_backfill_count (s_cron_next, &every, 10001, 10999, 100), 0);
    XXL_CHECK_INT (xxl_backfill_count (s_cron_next, &every, 10000, 10000, 100), 1);
    //  A day of seconds, and the cap: max + 1 at most
    XXL_CHECK_INT (xxl_backfill_count (s_cron_next, &every, 0, 86399000, 1000000), 86400);
    XXL_CHECK_INT (xxl_backfill_count (s_cron_next, &every, 0, 86399000, 1000), 1001);
    //  02:30 daily in Europe/Berlin over the fall-back night of 2025-10-26
    //  (02:30 happens twice; Quartz fires the first) and the night before
    xxl_job_t berlin = { .schedule_type = (char *) "CRON", .schedule_conf = (char *) "0 30 2 * * ?",
                         .timezone = (char *) "Europe/Berlin" };
    int64_t from = 1761350400000;       //  2025-10-25T00:00Z
    int64_t to = 1761523200000;         //  2025-10-27T00:00Z
    XXL_CHECK_INT (xxl_backfill_count (s_cron_next, &berlin, from, to, 100), 2);
    //  FIX_RATE's grid: anchor + k * rate, either side of the anchor
    XXL_CHECK_INT (xxl_backfill_grid (5000, 3000, 5000), 8000);
    XXL_CHECK_INT (xxl_backfill_grid (5000, 3000, 4999), 5000);
    XXL_CHECK_INT (xxl_backfill_grid (5000, 3000, -1), 2000);
    XXL_CHECK_INT (xxl_backfill_grid (5000, 3000, -1001), -1000);
    XXL_CHECK_INT (xxl_backfill_grid (0, 1000, INT64_MAX - 1), -1);
    grid_t grid = { 1500, 1000 };
    //  [0, 10000]: 500, 1500, ..., 9500
    XXL_CHECK_INT (xxl_backfill_count (s_grid_next, &grid, 0, 10000, 100), 10);
    //  two overlapping ranges give the same instants where they overlap
    XXL_CHECK_INT (xxl_backfill_grid (1500, 1000, 4000 - 1), 4500);
    XXL_CHECK_INT (xxl_backfill_grid (1500, 1000, 4100 - 1), 4500);
}

static void
s_pace (void)
{
    int64_t mark;
    //  A second of credit at most: 100/s after 10 s idle gives 100
    XXL_CHECK_INT (xxl_backfill_allow (100, 0, 10000, 1000, &mark), 100);
    XXL_CHECK_INT (mark, 10000);
    //  100 ms at 100/s: 10
    XXL_CHECK_INT (xxl_backfill_allow (100, 10000, 10100, 1000, &mark), 10);
    XXL_CHECK_INT (mark, 10100);
    //  the cap holds, and the mark moves only as far as used
    XXL_CHECK_INT (xxl_backfill_allow (10000, 10000, 11000, 2000, &mark), 2000);
    XXL_CHECK_INT (mark, 10200);
    //  1/s over 100 ms ticks: nothing until a whole second is credited
    XXL_CHECK_INT (xxl_backfill_allow (1, 10000, 10900, 1000, &mark), 0);
    XXL_CHECK_INT (mark, 10000);
    XXL_CHECK_INT (xxl_backfill_allow (1, 10000, 11000, 1000, &mark), 1);
    XXL_CHECK_INT (mark, 11000);
    //  3/s: the fraction carries (333 ms an instant)
    XXL_CHECK_INT (xxl_backfill_allow (3, 10000, 10500, 1000, &mark), 1);
    XXL_CHECK_INT (mark, 10333);
    //  a clock that stepped back gives nothing at once, and the pace goes
    //  on from there: 100 ms later, 10 (not nothing until the mark's time)
    XXL_CHECK_INT (xxl_backfill_allow (100, 20000, 19000, 1000, &mark), 0);
    XXL_CHECK_INT (mark, 19000);
    XXL_CHECK_INT (xxl_backfill_allow (100, mark, 19100, 1000, &mark), 10);
}

static void
s_recovery (void)
{
    //  A routed, unsent row past the window, above fired_sent: asked about
    //  when it is a plan, never when it is a backfill's
    xxl_lease_t lease = { .share = 0, .fired_sent = 1000, .fired_until = 900000 };
    xxl_log_t log = { .executor_address = (char *) "a1", .schedule_time = 5000,
                      .trigger_time = 6000, .trigger_type = (char *) "CRON" };
    XXL_CHECK (xxl_plan_row_unknown (&log, &lease, 100000, 50000, 0));
    log.trigger_type = (char *) "BACKFILL";
    XXL_CHECK (!xxl_plan_row_unknown (&log, &lease, 100000, 50000, 0));
}

static void
s_store (void)
{
    char err [256];
    xxl_store_t *store = xxl_store_new (":memory:", err, sizeof err);
    XXL_CHECK (store);
    if (!store)
        return;
    xxl_store_backfill_t row = { .job_id = 7, .from_time = 1000, .to_time = 9000,
                                 .per_second = 10, .cursor = 999, .total = 9,
                                 .state = (char *) "RUNNING", .by = (char *) "key 'x' (admin)",
                                 .msg = (char *) "", .add_time = 1, .update_time = 1 };
    XXL_CHECK (xxl_store_begin (store) == 0);
    int64_t a = xxl_store_backfill_add (store, &row);
    int64_t b = xxl_store_backfill_add (store, &row);
    XXL_CHECK (a == 1 && b == 2);
    //  advance only from the cursor read, only while RUNNING
    XXL_CHECK_INT (xxl_store_backfill_advance (store, a, 999, 3000, 3, 0, "RUNNING", NULL, 5), 1);
    XXL_CHECK_INT (xxl_store_backfill_advance (store, a, 999, 4000, 1, 0, "RUNNING", NULL, 5), 0);
    XXL_CHECK_INT (xxl_store_backfill_advance (store, a, 3000, 9000, 4, 2, "DONE", "", 6), 1);
    XXL_CHECK_INT (xxl_store_backfill_advance (store, a, 9000, 9500, 1, 0, "RUNNING", NULL, 7), 0);
    xxl_store_backfill_t read;
    XXL_CHECK (xxl_store_backfill_get (store, a, &read) == 0);
    XXL_CHECK (read.made == 7 && read.skipped == 2 && read.cursor == 9000
               && streq (read.state, "DONE") && read.update_time == 6
               && streq (read.by, "key 'x' (admin)"));
    xxl_store_backfill_free (&read);
    XXL_CHECK_INT (xxl_store_backfill_get (store, 99, &read), 1);
    size_t count;
    int64_t ids [4];
    XXL_CHECK (xxl_store_backfill_running_ids (store, 0, ids, 4, &count) == 0 && count == 1
               && ids [0] == b);
    XXL_CHECK_INT (xxl_store_backfill_stop (store, b, "stopped", 8), 1);
    XXL_CHECK_INT (xxl_store_backfill_stop (store, b, "stopped", 9), 0);
    XXL_CHECK (xxl_store_backfill_running_ids (store, 0, ids, 4, &count) == 0 && count == 0);
    XXL_CHECK (xxl_store_commit (store) == 0);
    xxl_store_destroy (&store);
}

int
main (void)
{
    s_check ();
    s_instants ();
    s_pace ();
    s_recovery ();
    s_store ();
    return xxl_test_done ();
}
