/*  =========================================================================
    xxl_cron - Quartz-compatible cron expressions

    Parses cron expressions exactly as Quartz 2.3's org.quartz.CronExpression
    does (the format XXL-JOB uses: "sec min hour day-of-month month
    day-of-week [year]") and computes the next fire time in a given IANA
    time zone, instant for instant as CronExpression.getNextValidTimeAfter,
    daylight-saving quirks included, so jobs migrated from XXL-JOB fire at
    the same moments. Deviations from Quartz (all on inputs Quartz itself
    cannot use) are listed in sdk/src/xxl_cron.c.

    Thread safety: distinct objects may be used concurrently; one object may
    be shared by threads calling only the read-only functions below. Time
    zones are loaded once per process and released at exit, so no thread
    may still be using this module while the process exits.
    =========================================================================
*/

#ifndef XXL_CRON_H_INCLUDED
#define XXL_CRON_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

//  Longest expression accepted, in bytes
#define XXL_CRON_EXPR_MAX 256

typedef struct _xxl_cron_t xxl_cron_t;

//  Parses a Quartz cron expression for time zone tz (IANA name such as
//  "Asia/Shanghai"; NULL or "" = UTC). Returns a new object owned by the
//  caller, or NULL on any error, writing a one-line reason into err (if err
//  is not NULL; truncated to errlen), e.g. "Support for specifying both a
//  day-of-week AND a day-of-month parameter is not implemented." or
//  "unknown time zone 'Mars/Base'".
xxl_cron_t *
    xxl_cron_new (const char *expr, const char *tz, char *err, size_t errlen);

//  Destroys the object and sets *self_p to NULL; does nothing if either is
//  NULL.
void
    xxl_cron_destroy (xxl_cron_t **self_p);

//  Returns the first fire time strictly after after_ms (epoch milliseconds),
//  in epoch milliseconds, or -1 if there is none (year field exhausted, the
//  expression never matches, or Quartz would loop forever). Same as Quartz's
//  getNextValidTimeAfter (new Date (after_ms)). Read-only.
int64_t
    xxl_cron_next (xxl_cron_t *self, int64_t after_ms);

//  For a time the expression matches (its second is a fire time: the
//  fire time after the second before it), the last millisecond of the
//  run of matching seconds it starts, as far as one step of the fields
//  can tell within one UTC offset: the contiguous seconds of its minute;
//  when every second matches, the contiguous minutes of its hour; when
//  every minute does too, the contiguous hours of its day.  Every instant
//  from ms to the answer matches.  For a time it does not match, or one
//  past half of int64_t's range either way, ms.
//  Read-only.  (A calendar's exclusion skips a run in one step with it.)
int64_t
    xxl_cron_match_until (xxl_cron_t *self, int64_t ms);

//  The expression as given. Read-only; owned by the object.
const char *
    xxl_cron_expr (xxl_cron_t *self);

//  The time zone name as given, or "UTC" when none was given. Read-only;
//  owned by the object.
const char *
    xxl_cron_tz (xxl_cron_t *self);

//  Returns 1 if tz names a time zone this system can load, else 0. NULL and
//  "" are valid (UTC).
int
    xxl_cron_tz_valid (const char *tz);

#ifdef __cplusplus
}
#endif

#endif
