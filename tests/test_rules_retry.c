/*  test_rules_retry.c -- retry and backoff as pure functions: the
    attempt a retry is and its delay (runs/xxl_retry_rules.h), and
    the busy backoff of a run its agent refused (runs/xxl_run_rules.h):
    growth, caps, the spread by log id, which refusals are logged.
*/

#include "xxl_retry_rules.h"
#include "xxl_run_rules.h"
#include "xxl_test.h"

int
main (void)
{
    //  The attempt: retries used so far, never negative
    XXL_CHECK_INT (xxl_retry_attempt (3, 3), 0);
    XXL_CHECK_INT (xxl_retry_attempt (3, 1), 2);
    XXL_CHECK_INT (xxl_retry_attempt (1, 5), 0);            //  (the job's count was lowered)

    //  No backoff: the interval each time
    for (int64_t a = 0; a < 5; a++)
        XXL_CHECK_INT (xxl_retry_delay (10, 1, 0, a), 10);
    //  Backoff below 1 (0 from an old row) counts as 1
    XXL_CHECK_INT (xxl_retry_delay (10, 0, 0, 4), 10);
    XXL_CHECK_INT (xxl_retry_delay (10, 0.5, 0, 4), 10);
    //  Doubling: 5, 10, 20, 40
    int64_t doubled [] = { 5, 10, 20, 40 };
    for (int a = 0; a < 4; a++)
        XXL_CHECK_INT (xxl_retry_delay (5, 2, 0, a), doubled [a]);
    //  A fractional backoff: 10 x 1.5^3 = 33.75, truncated
    XXL_CHECK_INT (xxl_retry_delay (10, 1.5, 0, 3), 33);
    //  The cap: reached, and held
    XXL_CHECK_INT (xxl_retry_delay (5, 2, 30, 2), 20);
    XXL_CHECK_INT (xxl_retry_delay (5, 2, 30, 3), 30);
    XXL_CHECK_INT (xxl_retry_delay (5, 2, 30, 50), 30);
    XXL_CHECK_INT (xxl_retry_delay (45, 2, 30, 0), 30);     //  the first retry too
    //  No cap: growth stops past 1e9 (no overflow, never falls)
    int64_t previous = 0;
    for (int64_t a = 0; a < 200; a++) {
        int64_t delay = xxl_retry_delay (1, 10, 0, a);
        XXL_CHECK_MSG (delay >= previous && delay > 0, "attempt %lld: %lld", (long long) a,
                       (long long) delay);
        previous = delay;
    }
    XXL_CHECK (previous >= 1000000000 && previous <= 10000000000LL);
    //  At once: interval 0 stays 0 whatever the backoff
    XXL_CHECK_INT (xxl_retry_delay (0, 3, 0, 7), 0);

    //  The due instant counts from the failure, not from when the fail
    //  monitor saw it: a failure at 1,000 seen at 1,900 with a 2 s
    //  interval is due at 3,000 (the monitor's tick is not added)
    XXL_CHECK_INT (xxl_retry_due (1000, 2, 1900), 3000);
    XXL_CHECK_INT (xxl_retry_due (1000, 4, 1999), 5000);
    XXL_CHECK_INT (xxl_retry_due (1000, 5, 1000), 6000);
    //  Seen past its due instant: at once, never in the past
    XXL_CHECK_INT (xxl_retry_due (1000, 2, 9000), 9000);
    XXL_CHECK_INT (xxl_retry_due (1000, 0, 1500), 1500);
    //  An unknown failure time, or one ahead of now (a clock stepped
    //  back): the interval from now
    XXL_CHECK_INT (xxl_retry_due (0, 2, 5000), 7000);
    XXL_CHECK_INT (xxl_retry_due (9000, 2, 5000), 7000);
    XXL_CHECK_INT (xxl_retry_due (1000, -3, 1500), 1500);
    for (int64_t seen = 1000; seen < 20000; seen += 333) {
        int64_t due = xxl_retry_due (1000, 3, seen);
        XXL_CHECK_MSG (due >= seen && due <= (seen > 4000? seen: 4000),
                       "seen %lld: due %lld", (long long) seen, (long long) due);
    }

    //  Busy backoff with log id 0 (no spread): 100, 200, .. 3200, then
    //  the 5 s cap from the 7th refusal on
    int64_t busy [] = { 100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000 };
    for (int r = 1; r <= 9; r++)
        XXL_CHECK_INT (xxl_busy_delay (r, 0), busy [r - 1]);
    XXL_CHECK_INT (xxl_busy_delay (1000000, 0), 5000);
    //  The spread: log_id mod (delay / 4 + 1), below a quarter more
    XXL_CHECK_INT (xxl_busy_delay (1, 7), 107);
    XXL_CHECK_INT (xxl_busy_delay (1, 26), 100);            //  26 mod 26
    XXL_CHECK_INT (xxl_busy_delay (1, 25), 125);
    for (int64_t id = 1; id < 3000; id += 37)
        for (int r = 1; r <= 12; r++) {
            int64_t delay = xxl_busy_delay (r, id);
            int64_t base = busy [r < 9? r - 1: 8];
            XXL_CHECK_MSG (delay >= base && delay <= base + base / 4,
                           "refused %d, log %lld: %lld", r, (long long) id, (long long) delay);
        }
    //  Logged: the first refusal and every tenth
    XXL_CHECK (xxl_busy_says (1));
    XXL_CHECK (!xxl_busy_says (2) && !xxl_busy_says (9) && !xxl_busy_says (11));
    XXL_CHECK (xxl_busy_says (10) && xxl_busy_says (20));
    return xxl_test_done ();
}
