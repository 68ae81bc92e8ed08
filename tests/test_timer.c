/*  test_timer.c -- the planner's timer heap: order, ties, due-ness.
*/

#include "xxl_timer.h"
#include "xxl_test.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

int
main (void)
{
    xxl_timer_t *timer = xxl_timer_new ();
    XXL_CHECK (timer && xxl_timer_next (timer) == -1);
    int64_t id, when;
    XXL_CHECK (xxl_timer_pop_due (timer, 1000, &id, NULL) == -1);

    //  Random fire times come out in order; equal times by log id
    srand (42);
    for (int i = 0; i < 10000; i++)
        xxl_timer_push (timer, 1000 + rand () % 5000, i + 1);
    xxl_timer_push (timer, 2000, 20001);
    xxl_timer_push (timer, 2000, 20000);
    XXL_CHECK (xxl_timer_size (timer) == 10002);
    //  Nothing is due before the earliest time
    int64_t first = xxl_timer_next (timer);
    XXL_CHECK (first >= 1000 && first < 1100);
    XXL_CHECK (xxl_timer_pop_due (timer, first - 1, &id, NULL) == -1);
    int64_t previous_when = 0, previous_id = 0;
    int ordered = 1, count = 0, tie_ok = 1;
    while (xxl_timer_pop_due (timer, 6000, &id, &when) == 0) {
        if (when < previous_when || (when == previous_when && id < previous_id))
            ordered = 0;
        if (id == 20001 && previous_id != 20000 && previous_when == 2000)
            tie_ok = tie_ok && previous_id < 20001;
        previous_when = when;
        previous_id = id;
        count++;
    }
    XXL_CHECK (ordered);
    XXL_CHECK (tie_ok);
    XXL_CHECK (count == 10002);
    XXL_CHECK (xxl_timer_size (timer) == 0);

    //  Only what is due comes out
    xxl_timer_push (timer, 500, 1);
    xxl_timer_push (timer, 1500, 2);
    XXL_CHECK (xxl_timer_pop_due (timer, 1000, &id, NULL) == 0 && id == 1);
    XXL_CHECK (xxl_timer_pop_due (timer, 1000, &id, NULL) == -1);
    XXL_CHECK (xxl_timer_next (timer) == 1500);
    XXL_CHECK (xxl_timer_pop_due (timer, 1500, &id, NULL) == 0 && id == 2);

    //  A step of the wall clock moves the delays, not the instants: at
    //  wall 10,000, a fire planned at 12,000 and a retry 5 s on (15,000);
    //  the clock steps 30 s back: the retry is still 5 s away (-15,000),
    //  the fire still at 12,000; then 60 s forward
    xxl_timer_push (timer, 12000, 7);
    XXL_CHECK (xxl_timer_push_after (timer, 10000, 5000, 8) == 0);
    XXL_CHECK (xxl_timer_push_after (timer, 10000, 0, 9) == 0);
    XXL_CHECK (xxl_timer_next (timer) == 10000);
    xxl_timer_shift (timer, -30000);
    when = 0;
    XXL_CHECK (xxl_timer_pop_due (timer, -20000, &id, &when) == 0 && id == 9 && when == -20000);
    XXL_CHECK (xxl_timer_next (timer) == -15000);
    xxl_timer_shift (timer, 60000);
    XXL_CHECK (xxl_timer_next (timer) == 12000);
    XXL_CHECK (xxl_timer_pop_due (timer, 12000, &id, NULL) == 0 && id == 7);
    XXL_CHECK (xxl_timer_pop_due (timer, 44999, &id, NULL) == -1);
    XXL_CHECK (xxl_timer_pop_due (timer, 45000, &id, NULL) == 0 && id == 8);
    //  many entries stay a heap through a shift
    for (int i = 0; i < 1000; i++) {
        if (i % 2)
            xxl_timer_push (timer, 100000 + i, 1000 + i);
        else
            xxl_timer_push_after (timer, 100000, i, 1000 + i);
    }
    xxl_timer_shift (timer, 500);
    int64_t last = INT64_MIN;
    bool sorted = true;
    count = 0;
    while (xxl_timer_pop_due (timer, INT64_MAX, &id, &when) == 0) {
        sorted = sorted && when >= last;
        sorted = sorted && when == (id % 2? 100000 + id - 1000: 100500 + id - 1000);
        last = when;
        count++;
    }
    XXL_CHECK (sorted && count == 1000);
    xxl_timer_destroy (&timer);
    XXL_CHECK (timer == NULL);
    return xxl_test_done ();
}
