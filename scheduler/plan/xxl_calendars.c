/*  xxl_calendars.c -- a job's calendar (DESIGN §13): the fire times its
    schedule makes that the planner, `job next`, a start and recovery skip.

    A job names its calendar (job->calendar, "" none); the row is read
    from the store each time a job's times are computed (a planner snapshot
    keeps the compiled calendar while the row's update_time is unchanged),
    so that a calendar changed or removed takes effect at the next plan,
    on every scheduler of the store.  The evaluation itself is
    sdk/src/xxl_calendar.c's (Quartz's HolidayCalendar and CronCalendar).
    A calendar whose zone is "" is read in the job's zone.
*/

#include "xxl_engine.h"
#include "xxl_calendar.h"


//  The calendar named name compiled for a job of zone job_tz: 0 and
//  *calendar (*update_time its row's), 1 when no such calendar, -1 on a
//  store error or a row that does not compile (the reason in why)
int
engine_calendar_load (server_t *self, const char *name, const char *job_tz,
                      xxl_calendar_t **calendar, int64_t *update_time, char *why,
                      size_t whylen)
{
    *calendar = NULL;
    xxl_store_calendar_t row;
    int rc = xxl_store_calendar_get (self->store, name, &row);
    if (rc) {
        if (rc < 0)
            snprintf (why, whylen, "calendar '%s': %s", name, xxl_store_error (self->store));
        else
            snprintf (why, whylen, "calendar '%s' not found", name);
        return rc;
    }
    char reason [256];
    *calendar = xxl_calendar_new (row.dates, row.exclude_cron,
                                  *row.timezone? row.timezone: job_tz, reason, sizeof reason);
    if (!*calendar)
        snprintf (why, whylen, "calendar '%s': %s", name, reason);
    if (update_time)
        *update_time = row.update_time;
    xxl_store_calendar_free (&row);
    return *calendar? 0: -1;
}

//  A job's calendar as JOB_ADD / JOB_UPDATE give it: "" or a calendar
//  that exists, on a schedule that fires at its planned times (not
//  FIX_DELAY, whose next time follows its runs); 0, or -1 with why
int
engine_job_calendar_check (server_t *self, const xxl_job_t *job, char *why, size_t whylen)
{
    if (!job->calendar || !*job->calendar)
        return 0;
    if (streq (job->schedule_type, "FIX_DELAY")) {
        snprintf (why, whylen, "a calendar applies to CRON and FIX_RATE jobs, not FIX_DELAY"
                  " (give calendar '' for none)");
        return -1;
    }
    xxl_calendar_t *calendar = NULL;
    int rc = engine_calendar_load (self, job->calendar, job->timezone, &calendar, NULL, why,
                                   whylen);
    xxl_calendar_destroy (&calendar);
    if (rc > 0)
        snprintf (why, whylen, "calendar '%s' not found (xxl-ctl calendar list)", job->calendar);
    return rc? -1: 0;
}

typedef struct {
    xxl_schedule_t *schedule;
    const char *tz;
    char *why;
    size_t whylen;
} s_walk_t;

static int64_t
s_schedule_next (void *arg, int64_t after)
{
    s_walk_t *walk = (s_walk_t *) arg;
    return engine_schedule_next (walk->schedule, walk->tz, after, walk->why, walk->whylen);
}

//  The next fire of a compiled schedule strictly after `after` that
//  calendar (NULL: none) does not exclude, or -1 with the reason in why
//  (the schedule ended, or calendar `name` excludes every time it found)
int64_t
engine_calendar_next (xxl_calendar_t *calendar, const char *name, xxl_schedule_t *schedule,
                      const char *tz, int64_t after, char *why, size_t whylen)
{
    s_walk_t walk = { schedule, tz, why, whylen };
    char reason [256] = "";
    int64_t next = xxl_calendar_next (calendar, s_schedule_next, &walk, after, reason,
                                      sizeof reason);
    if (next == XXL_CALENDAR_EXHAUSTED) {
        snprintf (why, whylen, "calendar '%s': %s", name, reason);
        return -1;
    }
    return next;
}

int
engine_job_next_times (server_t *self, const xxl_job_t *job, int64_t after, int64_t *times,
                       int count, char *why, size_t whylen)
{
    xxl_calendar_t *calendar = NULL;
    if (job->calendar && *job->calendar
    &&  engine_calendar_load (self, job->calendar, job->timezone, &calendar, NULL, why, whylen))
        return -1;
    xxl_schedule_t *schedule = xxl_schedule_new (job->schedule_type, job->schedule_conf,
                                                 job->timezone, why, whylen);
    int made = schedule? 0: -1;
    for (; schedule && made < count; made++) {
        int64_t next = engine_calendar_next (calendar, job->calendar, schedule, job->timezone,
                                             after, why, whylen);
        if (next < 0)
            break;
        times [made] = after = next;
    }
    if (made == 0)
        made = -1;
    xxl_schedule_destroy (&schedule);
    xxl_calendar_destroy (&calendar);
    return made;
}

int64_t
engine_job_next (server_t *self, const xxl_job_t *job, int64_t after, char *why, size_t whylen)
{
    int64_t next;
    return engine_job_next_times (self, job, after, &next, 1, why, whylen) == 1? next: -1;
}

//  A snapshot's calendar, current: compiled again when its row changed;
//  0, 1 when the job's calendar is gone, -1 on a store error or a row
//  that does not compile (why says; the snapshot then keeps none)
int
engine_snap_calendar (server_t *self, snap_t *snap, char *why, size_t whylen)
{
    const xxl_job_t *job = &snap->job;
    if (!job->calendar || !*job->calendar) {
        xxl_calendar_destroy (&snap->calendar);
        return 0;
    }
    xxl_store_calendar_t row;
    int rc = xxl_store_calendar_get (self->store, job->calendar, &row);
    if (rc == 0 && snap->calendar && row.update_time == snap->calendar_time) {
        xxl_store_calendar_free (&row);
        return 0;
    }
    xxl_store_calendar_free (&row);
    xxl_calendar_destroy (&snap->calendar);
    return engine_calendar_load (self, job->calendar, job->timezone, &snap->calendar,
                                 &snap->calendar_time, why, whylen);
}
