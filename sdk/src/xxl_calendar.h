/*  =========================================================================
    xxl_calendar - times a schedule skips (Quartz's HolidayCalendar and
    CronCalendar), internal

    A calendar excludes instants: those whose local date, in the
    calendar's time zone, is one of its dates (HolidayCalendar), and those
    whose second a cron expression matches in that zone (CronCalendar:
    CronExpression.isSatisfiedBy); with both, an instant either excludes
    is excluded (a CronCalendar whose base calendar is the
    HolidayCalendar).  xxl_calendar_next walks a schedule's fire times and
    returns the first one the calendar does not exclude, as Quartz's
    CronTrigger with a calendar does (computeFirstFireTime, triggered),
    but gives up past XXL_CALENDAR_HORIZON_MS or XXL_CALENDAR_TRIES fire
    times with a reason, where Quartz would search up to its year limit.
    tests/calendar/fixture.txt is Quartz 2.3.2's answers it must match.

    Thread safety: as xxl_cron (read-only calls may share one object).
    =========================================================================
*/

#ifndef XXL_CALENDAR_H_INCLUDED
#define XXL_CALENDAR_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

//  At most this many dates in one calendar
#define XXL_CALENDAR_DATES_MAX 10000
//  xxl_calendar_next gives up past this span after `after` (5 years) ...
#define XXL_CALENDAR_HORIZON_MS (5LL * 366 * 86400 * 1000)
//  ... or after this many excluded fire times in a row
#define XXL_CALENDAR_TRIES 1000000
//  xxl_calendar_next's answer when it gave up
#define XXL_CALENDAR_EXHAUSTED (-2)

typedef struct _xxl_calendar_t xxl_calendar_t;

//  A calendar from its dates (text: "YYYY-MM-DD" dates separated by
//  commas, spaces or line ends; '#' starts a comment to the end of its
//  line; NULL or "" none), its cron expression (Quartz's syntax; NULL or
//  "" none) and its time zone (IANA name; NULL or "" UTC).  A calendar
//  that excludes nothing (no dates, no expression) is valid.  NULL with a
//  one-line reason in err on any error (a malformed or impossible date,
//  too many dates, an invalid expression, an unknown zone).
xxl_calendar_t *
    xxl_calendar_new (const char *dates, const char *exclude_cron, const char *tz,
                      char *err, size_t errlen);

void
    xxl_calendar_destroy (xxl_calendar_t **self_p);

//  1 when the calendar excludes instant ms (epoch milliseconds), else 0
int
    xxl_calendar_excludes (xxl_calendar_t *self, int64_t ms);

//  A schedule's next fire strictly after `after`, or -1 when it has none
typedef int64_t (xxl_calendar_next_fn) (void *arg, int64_t after);

//  The first fire time of `next` strictly after `after` that the calendar
//  does not exclude (however far); -1 when `next` ran out first;
//  XXL_CALENDAR_EXHAUSTED when it excludes every fire time up to the first
//  one past XXL_CALENDAR_HORIZON_MS after `after` (that one too), or
//  XXL_CALENDAR_TRIES of them in a row, with the reason in why (if not
//  NULL).  A NULL calendar excludes nothing.
int64_t
    xxl_calendar_next (xxl_calendar_t *self, xxl_calendar_next_fn *next, void *arg,
                       int64_t after, char *why, size_t whylen);

//  The dates, sorted, each once, comma-separated ("" none).  Owned by
//  the object.
const char *
    xxl_calendar_dates (xxl_calendar_t *self);

//  How many dates
size_t
    xxl_calendar_date_count (xxl_calendar_t *self);

#endif
