/*  =========================================================================
    xxl_calendar - times a schedule skips (see xxl_calendar.h)

    The dates are kept as sorted day numbers (days since 1970-01-01 of the
    proleptic Gregorian calendar), an instant's local date found with the
    zone's offset in force at it (as java.util.Calendar reads it), so that
    a date excludes exactly the instants Quartz's HolidayCalendar does: its
    getStartOfDayJavaCalendar maps both the date added and the instant
    asked about to the start of their local day, equal when the local dates
    are.  A fire on an excluded date lets the walk jump to the start of the
    next local day, and one the expression excludes to the end of the run
    of seconds it matches from there (the same answer as stepping, far
    fewer steps).
    =========================================================================
*/

#include "xxl_calendar.h"
#include "xxl_tz.h"
#include "xxl/cron.h"
#include "xxl/msg.h"

#include <assert.h>
#include <ctype.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct _xxl_calendar_t {
    const xxl_tz_t *zone;
    xxl_cron_t *cron;                   //  NULL: no expression
    int64_t *days;                      //  sorted, unique
    size_t count;
    char *text;                         //  the dates, normalized
};

static int
s_day_compare (const void *a, const void *b)
{
    int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
    return x < y? -1: x > y;
}

//  Reads the dates of text into self->days; 0 or -1 with the reason
static int
s_read_dates (xxl_calendar_t *self, const char *text, char *err, size_t errlen)
{
    size_t size = 0;
    const char *p = text;
    while (*p) {
        if (*p == '#') {
            while (*p && *p != '\n')
                p++;
            continue;
        }
        if (*p == ',' || isspace ((unsigned char) *p)) {
            p++;
            continue;
        }
        const char *start = p;
        while (*p && *p != ',' && *p != '#' && !isspace ((unsigned char) *p))
            p++;
        size_t length = (size_t) (p - start);
        int year = 0, month = 0, day = 0;
        bool shape = length == 10 && start [4] == '-' && start [7] == '-';
        for (size_t i = 0; shape && i < 10; i++)
            if (i != 4 && i != 7 && !isdigit ((unsigned char) start [i]))
                shape = false;
        if (shape) {
            year = atoi (start);
            month = atoi (start + 5);
            day = atoi (start + 8);
        }
        if (!shape || year < 1000 || month < 1 || month > 12 || day < 1
        ||  day > xxl_tz_month_days (year, month)) {
            char shown [200];
            snprintf (err, errlen, "date '%s' is not a date YYYY-MM-DD",
                      xxl_printable_n (start, length > 40? 40: length, shown, sizeof shown));
            return -1;
        }
        if (self->count == XXL_CALENDAR_DATES_MAX) {
            snprintf (err, errlen, "a calendar holds at most %d dates",
                      XXL_CALENDAR_DATES_MAX);
            return -1;
        }
        if (self->count == size) {
            size = size? size * 2: 64;
            int64_t *grown = (int64_t *) realloc (self->days, size * sizeof (int64_t));
            assert (grown);
            self->days = grown;
        }
        self->days [self->count++] = xxl_tz_days_from_civil (year, month, day);
    }
    if (self->count)
        qsort (self->days, self->count, sizeof (int64_t), s_day_compare);
    size_t unique = 0;
    for (size_t i = 0; i < self->count; i++)
        if (unique == 0 || self->days [unique - 1] != self->days [i])
            self->days [unique++] = self->days [i];
    self->count = unique;
    self->text = (char *) malloc (self->count * 11 + 1);
    assert (self->text);
    char *out = self->text;
    *out = 0;
    for (size_t i = 0; i < self->count; i++) {
        int64_t y;
        int m, d;
        xxl_tz_civil_from_days (self->days [i], &y, &m, &d);
        out += sprintf (out, "%s%04d-%02d-%02d", i? ",": "", (int) y, m, d);
    }
    return 0;
}

xxl_calendar_t *
xxl_calendar_new (const char *dates, const char *exclude_cron, const char *tz, char *err,
                  size_t errlen)
{
    char scratch [8];
    if (!err) {
        err = scratch;
        errlen = sizeof scratch;
    }
    xxl_calendar_t *self = (xxl_calendar_t *) calloc (1, sizeof (xxl_calendar_t));
    assert (self);
    self->zone = xxl_tz_get (tz, err, errlen);
    if (!self->zone) {
        xxl_calendar_destroy (&self);
        return NULL;
    }
    if (exclude_cron && *exclude_cron) {
        char reason [256];
        self->cron = xxl_cron_new (exclude_cron, tz, reason, sizeof reason);
        if (!self->cron) {
            char shown [500];
            snprintf (err, errlen, "invalid cron expression '%s': %s",
                      xxl_printable_n (exclude_cron, strnlen (exclude_cron, 100), shown,
                                       sizeof shown), reason);
            xxl_calendar_destroy (&self);
            return NULL;
        }
    }
    if (s_read_dates (self, dates? dates: "", err, errlen)) {
        xxl_calendar_destroy (&self);
        return NULL;
    }
    return self;
}

void
xxl_calendar_destroy (xxl_calendar_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    xxl_calendar_t *self = *self_p;
    xxl_cron_destroy (&self->cron);
    free (self->days);
    free (self->text);
    free (self);
    *self_p = NULL;
}

//  The local day number of instant ms
static int64_t
s_local_day (xxl_calendar_t *self, int64_t ms)
{
    int64_t offset = xxl_tz_offset_utc (self->zone, xxl_tz_floordiv (ms, 1000), NULL);
    return xxl_tz_floordiv (ms + offset * 1000, 86400000);
}

static bool
s_date_excluded (xxl_calendar_t *self, int64_t ms)
{
    if (!self->count)
        return false;
    int64_t day = s_local_day (self, ms);
    return bsearch (&day, self->days, self->count, sizeof (int64_t), s_day_compare) != NULL;
}

//  CronExpression.isSatisfiedBy: the instant's second is read as a
//  wall-clock time and back (java.util.Calendar's set of the milliseconds:
//  in a fall-back overlap, the later of the two instants), and the
//  expression's next time after it less one second must be it
static bool
s_cron_excluded (xxl_calendar_t *self, int64_t ms)
{
    if (!self->cron)
        return false;
    int64_t second = xxl_tz_floordiv (ms, 1000);
    int64_t wall = second + xxl_tz_offset_utc (self->zone, second, NULL);
    int64_t original = (wall - xxl_tz_offset_wall (self->zone, wall, NULL)) * 1000;
    return xxl_cron_next (self->cron, original - 1000) == original;
}

int
xxl_calendar_excludes (xxl_calendar_t *self, int64_t ms)
{
    assert (self);
    return s_date_excluded (self, ms) || s_cron_excluded (self, ms);
}

int64_t
xxl_calendar_next (xxl_calendar_t *self, xxl_calendar_next_fn *next, void *arg,
                   int64_t after, char *why, size_t whylen)
{
    int64_t fire = next (arg, after);
    if (!self)
        return fire;
    int64_t horizon = after + XXL_CALENDAR_HORIZON_MS;
    long tries = 0;
    for (; fire >= 0; tries++) {
        bool by_date = s_date_excluded (self, fire);
        if (!by_date && !s_cron_excluded (self, fire))
            return fire;
        //  (a fire past the horizon is still taken when not excluded)
        if (fire > horizon || tries >= XXL_CALENDAR_TRIES)
            break;
        int64_t from = fire;
        if (by_date) {
            //  Every instant before the next local day's start is on an
            //  excluded date too (an instant's date only grows, save in a
            //  fall-back overlap, which the check of each fire catches)
            int64_t wall = (s_local_day (self, fire) + 1) * 86400;
            int64_t start = (wall - xxl_tz_offset_wall (self->zone, wall, NULL)) * 1000;
            if (start - 1 > from)
                from = start - 1;
        }
        else {
            //  A run of seconds the expression matches goes in one step
            //  (its seconds, minutes or hours: xxl_cron_match_until)
            int64_t until = xxl_cron_match_until (self->cron, fire);
            if (until > from)
                from = until;
        }
        fire = next (arg, from);
    }
    if (fire < 0)
        return -1;
    if (why)
        snprintf (why, whylen, tries >= XXL_CALENDAR_TRIES
                  ? "the calendar excludes each of the next %d fire times"
                  : "the calendar excludes every fire time of the next 5 years (%d checked)",
                  tries >= XXL_CALENDAR_TRIES? XXL_CALENDAR_TRIES: (int) tries + 1);
    return XXL_CALENDAR_EXHAUSTED;
}

const char *
xxl_calendar_dates (xxl_calendar_t *self)
{
    assert (self);
    return self->text;
}

size_t
xxl_calendar_date_count (xxl_calendar_t *self)
{
    assert (self);
    return self->count;
}
