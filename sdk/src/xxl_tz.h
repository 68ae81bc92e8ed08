/*  =========================================================================
    xxl_tz - IANA time zones from TZif files, for the cron engine (internal)

    Loads /usr/share/zoneinfo/<name> (or $TZDIR/<name>): the 64-bit data of
    TZif version 2+ files up to the end of 2037 (as Java keeps them), then
    the POSIX TZ footer rule expanded into explicit transitions up to year
    XXL_TZ_LAST_YEAR. Loaded zones live in a process-wide cache behind a
    mutex and are immutable, so lookups need no locking; the cache is freed
    when the process exits (no thread may use a zone then).
    Offset lookups follow java.util.GregorianCalendar with a
    sun.util.calendar.ZoneInfo zone, because the cron engine must reproduce
    Quartz: a UTC instant maps to the offset in force at that instant; a
    wall-clock (local) time maps to the offset after the last transition
    whose wall-clock start (transition instant + new offset) is at or before
    it, so a time in a spring-forward gap is read with the old offset (it
    lands after the gap) and a time in a fall-back overlap resolves to the
    later of its two instants.
    =========================================================================
*/

#ifndef XXL_TZ_H_INCLUDED
#define XXL_TZ_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#define XXL_TZ_LAST_YEAR 2500

typedef struct _xxl_tz_t xxl_tz_t;

//  Lookup memo owned by the caller (e.g. on its stack): remembers the last
//  interval in which the offset is constant. Zero it before first use.
typedef struct {
    int64_t utc_lo, utc_hi;     //  [lo, hi) in UTC seconds; lo > hi = empty
    int32_t utc_off;
    int64_t wall_lo, wall_hi;   //  same, in wall-clock seconds
    int32_t wall_off;
} xxl_tz_memo_t;

//  Returns the zone named name (IANA name such as "Europe/London"; NULL, ""
//  and "UTC" give built-in UTC). The zone belongs to the process-wide cache:
//  never free it; it stays valid until exit. Returns NULL when the name is
//  malformed or no readable TZif file exists for it, writing a one-line
//  reason into err (if err != NULL).
const xxl_tz_t *
    xxl_tz_get (const char *name, char *err, size_t errlen);

//  Builds a zone from the bytes of a TZif file, outside the cache (for the
//  fuzz target and tests): the caller frees it with xxl_tz_free.  Returns
//  NULL with a one-line reason when the bytes are malformed or unsupported.
//  Its name is "" .
xxl_tz_t *
    xxl_tz_parse (const void *data, size_t size, char *err, size_t errlen);
void
    xxl_tz_free (xxl_tz_t **self_p);

//  The zone's name ("UTC" for the built-in zone).
const char *
    xxl_tz_name (const xxl_tz_t *self);

//  UTC offset in seconds in force at utc (epoch seconds). memo may be NULL.
int32_t
    xxl_tz_offset_utc (const xxl_tz_t *self, int64_t utc, xxl_tz_memo_t *memo);

//  Offset in seconds to subtract from wall (local seconds since the epoch,
//  as if the zone were UTC) to get the instant, resolved as Java does (see
//  above). memo may be NULL.
int32_t
    xxl_tz_offset_wall (const xxl_tz_t *self, int64_t wall, xxl_tz_memo_t *memo);

//  Proleptic Gregorian helpers. Days are counted from 1970-01-01.
static inline int64_t
xxl_tz_floordiv (int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}

static inline int
xxl_tz_is_leap (int64_t year)
{
    return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
}

static inline int
xxl_tz_month_days (int64_t year, int month)    //  month 1..12
{
    static const int len [12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    return month == 2 && xxl_tz_is_leap (year)? 29: len [month - 1];
}

static inline int64_t
xxl_tz_days_from_civil (int64_t y, int m, int64_t d)    //  m 1..12, d any
{
    y -= m <= 2;
    int64_t era = xxl_tz_floordiv (y, 400);
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2? -3: 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static inline void
xxl_tz_civil_from_days (int64_t z, int64_t *y_p, int *m_p, int *d_p)
{
    z += 719468;
    int64_t era = xxl_tz_floordiv (z, 146097);
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int d = (int) (doy - (153 * mp + 2) / 5 + 1);
    int m = (int) (mp < 10? mp + 3: mp - 9);
    *y_p = yoe + era * 400 + (m <= 2);
    *m_p = m;
    *d_p = d;
}

#endif
