/*  test_schedule.c -- the schedule types table (scheduler/plan/xxl_schedule.h):
    each type's conf check, next times, and whether it waits for a run.
*/

#include "xxl_schedule.h"
#include "xxl_test.h"

#include <string.h>

#define MS(s) ((int64_t) (s) * 1000)

int
main (void)
{
    char why [256];
    //  The table: four types by name, nothing else
    XXL_CHECK (strcmp (xxl_schedule_names (), "NONE, CRON, FIX_RATE, FIX_DELAY") == 0);
    const char *names [] = { "NONE", "CRON", "FIX_RATE", "FIX_DELAY" };
    for (size_t i = 0; i < 4; i++) {
        const xxl_schedule_type_t *type = xxl_schedule_type (names [i]);
        XXL_CHECK (type && strcmp (type->name, names [i]) == 0);
        XXL_CHECK (type && type->after_run == (i == 3));
    }
    XXL_CHECK (xxl_schedule_type ("cron") == NULL);         //  names are exact
    XXL_CHECK (xxl_schedule_type ("") == NULL);
    XXL_CHECK (xxl_schedule_type (NULL) == NULL);
    XXL_CHECK (xxl_schedule_new ("WEEKLY", "", "", why, sizeof why) == NULL);
    XXL_CHECK (strcmp (why, "unknown schedule type 'WEEKLY' (known: NONE, CRON, FIX_RATE,"
                            " FIX_DELAY)") == 0);

    //  NONE: any conf; never a next time
    xxl_schedule_t *none = xxl_schedule_new ("NONE", "whatever", "", why, sizeof why);
    XXL_CHECK (none && xxl_schedule_next (none, 0) == -1);
    xxl_schedule_destroy (&none);
    XXL_CHECK (none == NULL);

    //  CRON: a Quartz expression, strictly after, in the job's zone
    XXL_CHECK (xxl_schedule_new ("CRON", "* * *", "", why, sizeof why) == NULL);
    XXL_CHECK (strncmp (why, "invalid cron expression '* * *': ", 33) == 0);
    xxl_schedule_t *cron = xxl_schedule_new ("CRON", "0/5 * * * * ?", "", why, sizeof why);
    XXL_CHECK (cron);
    XXL_CHECK (cron && xxl_schedule_next (cron, MS (1000)) == MS (1005));
    XXL_CHECK (cron && xxl_schedule_next (cron, MS (1005)) == MS (1010));
    XXL_CHECK (cron && xxl_schedule_next (cron, MS (1005) - 1) == MS (1005));
    XXL_CHECK (cron && !xxl_schedule_type_of (cron)->after_run);
    xxl_schedule_destroy (&cron);
    //  Midnight in Shanghai is 16:00 UTC the day before
    cron = xxl_schedule_new ("CRON", "0 0 0 * * ?", "Asia/Shanghai", why, sizeof why);
    XXL_CHECK (cron && xxl_schedule_next (cron, MS (0)) == MS (16 * 3600));
    xxl_schedule_destroy (&cron);
    //  An expression whose times have ended: no next time
    cron = xxl_schedule_new ("CRON", "0 0 0 1 1 ? 2020", "", why, sizeof why);
    XXL_CHECK (cron && xxl_schedule_next (cron, MS (1700000000)) == -1);
    XXL_CHECK (cron && strcmp (xxl_schedule_type_of (cron)->ends,
                               "the cron expression has no time after") == 0);
    xxl_schedule_destroy (&cron);

    //  FIX_RATE and FIX_DELAY: whole seconds from 1 to ten years, in
    //  decimal digits only (a space or a sign was taken, and stored so)
    const char *bad [] = { "", "0", "-5", "1.5", "5s", "316224001", " 5", "5 ", "\t5", "+5",
                           "5\n", "0x10", "99999999999999999999", NULL };
    for (size_t i = 0; bad [i]; i++) {
        XXL_CHECK (xxl_schedule_new ("FIX_RATE", bad [i], "", why, sizeof why) == NULL);
        char expect [128];
        snprintf (expect, sizeof expect, "FIX_RATE needs a whole number of seconds from 1 to"
                  " 316224000 (ten years), not '%s'", bad [i]);
        XXL_CHECK (strcmp (why, expect) == 0);
        XXL_CHECK (xxl_schedule_new ("FIX_DELAY", bad [i], "", why, sizeof why) == NULL);
        XXL_CHECK (strncmp (why, "FIX_DELAY needs a whole number of seconds from 1 to 316224000",
                            61) == 0);
    }
    xxl_schedule_t *rate = xxl_schedule_new ("FIX_RATE", "316224000", "", why, sizeof why);
    XXL_CHECK (rate);                                       //  (ten years: the limit)
    xxl_schedule_destroy (&rate);
    rate = xxl_schedule_new ("FIX_RATE", "05", "", why, sizeof why);
    XXL_CHECK (rate && xxl_schedule_next (rate, MS (100)) == MS (105));    //  (digits)
    xxl_schedule_destroy (&rate);
    rate = xxl_schedule_new ("FIX_RATE", "30", "", why, sizeof why);
    XXL_CHECK (rate && xxl_schedule_next (rate, MS (100)) == MS (130));
    XXL_CHECK (rate && xxl_schedule_next (rate, INT64_MAX - 1) == -1);     //  no overflow
    XXL_CHECK (rate && !xxl_schedule_type_of (rate)->after_run);
    xxl_schedule_destroy (&rate);
    xxl_schedule_t *delay = xxl_schedule_new ("FIX_DELAY", "7", "", why, sizeof why);
    XXL_CHECK (delay && xxl_schedule_next (delay, MS (100)) == MS (107));
    XXL_CHECK (delay && xxl_schedule_type_of (delay)->after_run);
    xxl_schedule_destroy (&delay);
    xxl_schedule_destroy (&delay);                          //  (NULL: no-op)

    //  Daylight saving in Europe/Berlin, walked as the planner walks a
    //  started job (each next time after the one before, s_plan_job); the
    //  instants are the real Quartz 2.3.2's (CronExpression.getTimeAfter
    //  in that zone): a wall time in the spring-forward gap is skipped
    //  that day, one in the fall-back hour fires once, at its later
    //  (standard time) instant
    struct {
        const char *expr;
        int64_t after;                                      //  ms
        int64_t next [5];                                   //  s; 0 ends
    } dst [] = {
        //  daily 02:30: 2027-03-28 02:30 does not exist (02:00 CET -> 03:00 CEST)
        { "0 30 2 * * ?", 1806062400000LL,                  //  2027-03-26T12:00Z
          { 1806111000, 1806280200, 1806366600, 1806453000 } },
        //  daily 02:30: 2027-10-31 02:30 happens twice; fires at 01:30Z (CET)
        { "0 30 2 * * ?", 1824811200000LL,                  //  2027-10-29T12:00Z
          { 1824856200, 1824946200, 1825032600, 1825119000 } },
        //  hourly at :30 over the doubled hour: 00:30Z (02:30 CEST) fires not
        { "0 30 * * * ?", 1824933600000LL,                  //  2027-10-30T22:00Z
          { 1824935400, 1824939000, 1824946200, 1824949800, 1824953400 } },
        //  hourly at :30 over the gap: 01:30 CET, then 03:30 CEST
        { "0 30 * * * ?", 1806188400000LL,                  //  2027-03-27T23:00Z
          { 1806190200, 1806193800, 1806197400, 1806201000 } },
        //  weekly Sunday 02:30: the change day is skipped, the next Sunday fires
        { "0 30 2 ? * SUN", 1805592600000LL,                //  2027-03-21T01:30Z (a fire)
          { 1806798600, 1807403400 } },
        { "0 30 2 ? * SUN", 1824337800000LL,                //  2027-10-24T00:30Z (a fire)
          { 1824946200, 1825551000 } },
    };
    for (size_t i = 0; i < sizeof dst / sizeof dst [0]; i++) {
        xxl_schedule_t *berlin = xxl_schedule_new ("CRON", dst [i].expr, "Europe/Berlin",
                                                   why, sizeof why);
        XXL_CHECK (berlin);
        int64_t at = dst [i].after;
        for (size_t k = 0; berlin && k < 5 && dst [i].next [k]; k++) {
            at = xxl_schedule_next (berlin, at);
            if (at != MS (dst [i].next [k]))
                fprintf (stderr, "Europe/Berlin '%s' #%zu: %lld, Quartz %lld\n", dst [i].expr,
                         k, (long long) at, (long long) MS (dst [i].next [k]));
            XXL_CHECK (at == MS (dst [i].next [k]));
        }
        xxl_schedule_destroy (&berlin);
    }
    return xxl_test_done ();
}
