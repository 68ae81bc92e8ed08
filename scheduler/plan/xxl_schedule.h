/*  xxl_schedule.h -- the schedule types as a table: NONE, CRON, FIX_RATE,
    FIX_DELAY (DESIGN §3).

    A type says how its scheduleConf is checked and compiled, when a job of
    it fires next, and whether its next time is set when a run ends
    instead of when it fires.  An xxl_schedule_t is one job's schedule,
    compiled once (a cron expression parsed, a number of seconds read) and
    asked for next times as often as the planner likes.  No state but the
    constant table; any thread.
*/

#ifndef XXL_SCHEDULE_H_INCLUDED
#define XXL_SCHEDULE_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    const char *name;                   //  as users type it
    //  Compiles conf (in time zone tz, "" for UTC) into *state; 0, or -1
    //  with the reason users see in why
    int (*compile) (const char *name, const char *conf, const char *tz, void **state,
                    char *why, size_t whylen);
    //  The next fire strictly after `after` (epoch ms), or -1 when there is
    //  none; NULL for a type that never fires on its own (NONE)
    int64_t (*next) (void *state, int64_t after);
    void (*release) (void **state);
    //  What a type whose next returned -1 says before the instant (UTC ISO
    //  8601 and the zone's local time are appended by the caller)
    const char *ends;
    //  The next time is set when the run ends (FIX_DELAY), not at the fire
    bool after_run;
} xxl_schedule_type_t;

//  The type named `name`, or NULL when there is none such
const xxl_schedule_type_t *xxl_schedule_type (const char *name);
//  The names, as a list for messages: "NONE, CRON, FIX_RATE, FIX_DELAY"
const char *xxl_schedule_names (void);

typedef struct _xxl_schedule_t xxl_schedule_t;

//  Compiles a job's schedule.  NULL with the reason in why (an unknown
//  type: "unknown schedule type 'X' (known: ...)"; a bad conf: the type's
//  own words, e.g. "invalid cron expression '…': …").
xxl_schedule_t *xxl_schedule_new (const char *type, const char *conf, const char *tz,
                                  char *why, size_t whylen);
void xxl_schedule_destroy (xxl_schedule_t **self_p);
//  The next fire strictly after `after`, or -1: none (the type never
//  fires on its own, or its times ended)
int64_t xxl_schedule_next (xxl_schedule_t *self, int64_t after);
const xxl_schedule_type_t *xxl_schedule_type_of (xxl_schedule_t *self);

#endif
