/*  test_rules_admit.c -- a job's maxRunning slots as a pure function
    (runs/xxl_admit_rules.h): what each block strategy admits, fails and
    kills over the limit, and the allowed case under it.
*/

#include "xxl_admit_rules.h"
#include "xxl_test.h"

static void
s_check (const char *block, int64_t max, int64_t running, int64_t waiting, int64_t killing,
         int64_t admit, int64_t fail, int64_t kill, int covered)
{
    xxl_admit_t d = xxl_admit_decide (block, max, running, waiting, killing);
    XXL_CHECK_MSG (d.admit == admit && d.fail == fail && d.kill == kill && d.covered == covered,
                   "%s max %lld running %lld waiting %lld killing %lld: admit %lld fail %lld"
                   " kill %lld covered %d", block, (long long) max, (long long) running,
                   (long long) waiting, (long long) killing, (long long) d.admit,
                   (long long) d.fail, (long long) d.kill, d.covered);
}

int
main (void)
{
    const char *blocks [] = { "SERIAL_EXECUTION", "DISCARD_LATER", "COVER_EARLY" };
    //  Under the limit: every strategy starts what fits, nothing else
    for (int b = 0; b < 3; b++) {
        s_check (blocks [b], 1, 0, 1, 0, 1, 0, 0, b == 2);
        s_check (blocks [b], 3, 1, 2, 0, 2, 0, 0, b == 2);
        s_check (blocks [b], 3, 0, 0, 0, 0, 0, 0, 0);       //  (nothing waits)
    }
    //  No limit, or nothing waiting: nothing to decide
    s_check ("SERIAL_EXECUTION", 0, 5, 5, 0, 0, 0, 0, 0);
    //  SERIAL_EXECUTION: waits; the oldest first as slots free
    s_check ("SERIAL_EXECUTION", 1, 1, 4, 0, 0, 0, 0, 0);
    s_check ("SERIAL_EXECUTION", 3, 2, 4, 0, 1, 0, 0, 0);
    s_check ("SERIAL_EXECUTION", 3, 5, 4, 0, 0, 0, 0, 0);   //  (over: lowered limit)
    //  An unknown strategy waits as SERIAL_EXECUTION does
    s_check ("NEW_ONE", 1, 1, 2, 0, 0, 0, 0, 0);
    s_check (NULL, 1, 0, 2, 0, 1, 0, 0, 0);
    //  DISCARD_LATER: what does not fit fails
    s_check ("DISCARD_LATER", 1, 1, 3, 0, 0, 3, 0, 0);
    s_check ("DISCARD_LATER", 3, 1, 4, 0, 2, 2, 0, 0);
    //  COVER_EARLY: one kill per kept waiting row, the older ones covered
    s_check ("COVER_EARLY", 1, 1, 1, 0, 0, 0, 1, 1);
    s_check ("COVER_EARLY", 1, 1, 1, 1, 0, 0, 0, 1);        //  (its kill is under way)
    s_check ("COVER_EARLY", 1, 1, 3, 0, 0, 2, 1, 1);        //  the newest stays
    s_check ("COVER_EARLY", 3, 3, 2, 0, 0, 0, 2, 1);
    s_check ("COVER_EARLY", 3, 3, 2, 1, 0, 0, 1, 1);
    s_check ("COVER_EARLY", 3, 2, 2, 0, 1, 0, 1, 1);
    s_check ("COVER_EARLY", 3, 1, 5, 0, 2, 2, 1, 1);
    //  Invariants over a grid
    for (int b = 0; b < 3; b++)
        for (int64_t max = 1; max <= 4; max++)
            for (int64_t run = 0; run <= 6; run++)
                for (int64_t wait = 0; wait <= 6; wait++)
                    for (int64_t kill = 0; kill <= run; kill++) {
                        xxl_admit_t d = xxl_admit_decide (blocks [b], max, run, wait, kill);
                        int64_t free_slots = max > run? max - run: 0;
                        XXL_CHECK (d.admit <= free_slots);
                        XXL_CHECK (d.admit + d.fail <= wait);
                        XXL_CHECK (d.kill <= run - kill);
                        //  the admitted never exceed the limit
                        XXL_CHECK (run + d.admit <= (run > max? run: max));
                        if (b == 0)
                            XXL_CHECK (d.fail == 0 && d.kill == 0);
                    }
    return xxl_test_done ();
}
