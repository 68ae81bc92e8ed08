/*  xxl_cron_next.c -- the next fire time of a parsed expression
    (xxl_cron_next): CronExpression.getTimeAfter step for step, over an
    emulation of java.util.GregorianCalendar's lenient fields in a
    ZoneInfo zone (xxl_tz.h), which is what gives Quartz's daylight-saving
    behaviour.  It only reads the xxl_cron_t the parser filled
    (xxl_cron_parse.c), relying on what xxl_cron_int.h promises.
*/

#include "xxl_cron_int.h"

//  Search steps before giving up (Quartz would loop forever); legitimate
//  searches take well under a thousand.
#define XXL_CRON_MAX_STEPS 100000

//  -------------------------------------------------------------------------
//  Queries on the sets and years

//  Smallest member >= from (from >= 0), or -1 (Quartz: tailSet().first())
static inline int64_t
s_set_tail (const xxl_cron_set_t *set, int64_t from)
{
    if (from < 64) {
        uint64_t w = set->bits [0] & (~(uint64_t) 0 << from);
        if (w)
            return __builtin_ctzll (w);
        from = 64;
    }
    if (from < 128) {
        uint64_t w = set->bits [1] & (~(uint64_t) 0 << (from - 64));
        if (w)
            return 64 + __builtin_ctzll (w);
    }
    if (set->over != INT64_MAX && set->over >= from)
        return set->over;
    return -1;
}

//  Smallest year >= from, or -1
static int64_t
s_years_tail (const xxl_cron_t *self, int64_t from)
{
    int64_t best = -1;
    for (size_t i = 0; i < self->nyears; i++) {
        const xxl_cron_prog_t *p = &self->years [i];
        int64_t y;
        if (from <= p->start)
            y = p->start;
        else {
            if (from > p->stop)
                continue;
            y = p->start + (from - p->start + p->step - 1) / p->step * p->step;
            if (y > p->stop)
                continue;
        }
        if (best < 0 || y < best)
            best = y;
    }
    return best;
}

//  -------------------------------------------------------------------------
//  Emulation of a lenient java.util.GregorianCalendar in a ZoneInfo zone:
//  set() stores a raw field value; reading resolves the fields to an
//  instant (wall-clock lookup) and recomputes every field from it.

typedef struct {
    const xxl_tz_t *tz;
    xxl_tz_memo_t *memo;
    int64_t year;
    int month;                  //  0-based, like Calendar.MONTH
    int dom, hour, min, sec;
    int64_t time;               //  instant in seconds, valid when !dirty
    int64_t days;               //  local day number, valid when !dirty
    bool dirty;
    //  Date of the last resolution and its day number: most resolutions
    //  change only the time of day, so the civil conversions are skipped
    int64_t memo_year;
    int memo_month, memo_dom;   //  memo_month < 0: none
    int64_t memo_days;
} s_cal_t;

static inline void
s_cal_set_time (s_cal_t *cal, int64_t time)
{
    int64_t local = time + xxl_tz_offset_utc (cal->tz, time, cal->memo);
    int64_t days = xxl_tz_floordiv (local, 86400);
    int secs = (int) (local - days * 86400);
    if (days != cal->memo_days || cal->memo_month < 0) {
        int m, d;
        xxl_tz_civil_from_days (days, &cal->memo_year, &m, &d);
        cal->memo_month = m - 1;
        cal->memo_dom = d;
        cal->memo_days = days;
    }
    cal->year = cal->memo_year;
    cal->month = cal->memo_month;
    cal->dom = cal->memo_dom;
    cal->hour = secs / 3600;
    cal->min = secs / 60 % 60;
    cal->sec = secs % 60;
    cal->time = time;
    cal->days = days;
    cal->dirty = false;
}

//  Calendar.complete(): resolve the fields if any was set
static inline void
s_cal_complete (s_cal_t *cal)
{
    if (!cal->dirty)
        return;
    int64_t days;
    if (cal->year == cal->memo_year && cal->month == cal->memo_month
    &&  cal->dom == cal->memo_dom)
        days = cal->memo_days;
    else {
        int64_t year = cal->year + xxl_tz_floordiv (cal->month, 12);
        int month = (int) (cal->month - xxl_tz_floordiv (cal->month, 12) * 12);
        days = xxl_tz_days_from_civil (year, month + 1, 1) + cal->dom - 1;
    }
    int64_t wall = days * 86400 + (int64_t) cal->hour * 3600 + (int64_t) cal->min * 60 + cal->sec;
    s_cal_set_time (cal, wall - xxl_tz_offset_wall (cal->tz, wall, cal->memo));
}

static inline int64_t
s_cal_year (s_cal_t *cal)
{
    s_cal_complete (cal);
    return cal->year;
}

//  1-based month
static inline int
s_cal_month (s_cal_t *cal)
{
    s_cal_complete (cal);
    return cal->month + 1;
}

static inline int
s_cal_dom (s_cal_t *cal)
{
    s_cal_complete (cal);
    return cal->dom;
}

static inline int
s_cal_hour (s_cal_t *cal)
{
    s_cal_complete (cal);
    return cal->hour;
}

static inline int
s_cal_min (s_cal_t *cal)
{
    s_cal_complete (cal);
    return cal->min;
}

static inline int
s_cal_sec (s_cal_t *cal)
{
    s_cal_complete (cal);
    return cal->sec;
}

//  Calendar.DAY_OF_WEEK: 1 = Sunday .. 7 = Saturday
static inline int
s_cal_dow (s_cal_t *cal)
{
    s_cal_complete (cal);
    return (int) ((cal->days % 7 + 11) % 7) + 1;
}

//  Calendar.add (YEAR, 1)
static void
s_cal_add_year (s_cal_t *cal)
{
    s_cal_complete (cal);
    cal->year++;
    int len = xxl_tz_month_days (cal->year, cal->month + 1);
    if (cal->dom > len)
        cal->dom = len;
    cal->dirty = true;
}

#define SET(cal, field, value) ((cal)->field = (value), (cal)->dirty = true)

//  Quartz's setCalendarHour: step over an hour that does not exist
static void
s_cal_set_hour (s_cal_t *cal, int hour)
{
    SET (cal, hour, hour);
    if (s_cal_hour (cal) != hour && hour != 24)
        SET (cal, hour, hour + 1);
}

static inline int
s_last_day (int month, int64_t year)
{
    return xxl_tz_month_days (year, month);
}

//  The "W" probe of getTimeAfter: moves day to the nearest weekday of
//  month mon in year, and tells (via *before_p) whether that day at
//  hr:min:sec falls before the search start.
static int
s_weekday (s_cal_t *cl, int day, int mon, int64_t year, int hr, int min, int sec,
           int64_t start, bool *before_p)
{
    s_cal_t tcal = { cl->tz, cl->memo, year, mon - 1, day, 0, 0, 0, 0, 0, true, 0, -1, 0, 0 };
    int ldom = s_last_day (mon, year);
    int dow = s_cal_dow (&tcal);
    if (dow == 7 && day == 1)
        day += 2;
    else
    if (dow == 7)
        day -= 1;
    else
    if (dow == 1 && day == ldom)
        day -= 2;
    else
    if (dow == 1)
        day += 1;
    tcal.sec = sec;
    tcal.min = min;
    tcal.hour = hr;
    tcal.dom = day;
    tcal.month = mon - 1;
    tcal.dirty = true;
    s_cal_complete (&tcal);
    *before_p = tcal.time < start;
    return day;
}

//  CronExpression.getTimeAfter, step for step. The calendar's reads
//  (s_cal_xxx) and writes (SET) happen in the same order as Quartz's
//  get/set calls, since the lenient resolution depends on it.
int64_t
xxl_cron_next (xxl_cron_t *self, int64_t after_ms)
{
    const xxl_cron_set_t *seconds = &self->set [F_SEC];
    const xxl_cron_set_t *minutes = &self->set [F_MIN];
    const xxl_cron_set_t *hours = &self->set [F_HOUR];
    const xxl_cron_set_t *doms = &self->set [F_DOM];
    const xxl_cron_set_t *months = &self->set [F_MONTH];
    const xxl_cron_set_t *dows = &self->set [F_DOW];
    const bool dom_spec = !xxl_cron_set_has (doms, NO_SPEC);
    //  What the parser promises (xxl_cron_int.h)
    assert (dom_spec == xxl_cron_set_has (dows, NO_SPEC));
    assert (!xxl_cron_set_empty (seconds) && !xxl_cron_set_empty (minutes)
        &&  !xxl_cron_set_empty (hours) && !xxl_cron_set_empty (months));
    assert (dom_spec? self->lastday_of_month || !xxl_cron_set_empty (doms)
                    : !xxl_cron_set_empty (dows));

    if (after_ms > INT64_MAX - 1000)
        return -1;
    //  Quartz starts one second later and drops the milliseconds
    int64_t start = xxl_tz_floordiv (after_ms + 1000, 1000);
    xxl_tz_memo_t memo = { 0, 0, 0, 0, 0, 0 };
    s_cal_t cal = { self->tz, &memo, 0, 0, 0, 0, 0, 0, 0, 0, false, 0, -1, 0, 0 };
    s_cal_t *cl = &cal;
    s_cal_set_time (cl, start);
    cl->dirty = true;           //  set (MILLISECOND, 0)

    for (int step = 0; step < XXL_CRON_MAX_STEPS; step++) {
        if (s_cal_year (cl) > 2999)
            return -1;
        int64_t st;
        int t;
        int sec = s_cal_sec (cl);
        int min = s_cal_min (cl);
        //  Second
        if ((st = s_set_tail (seconds, sec)) >= 0)
            sec = (int) st;
        else {
            sec = (int) s_set_tail (seconds, 0);
            min++;
            SET (cl, min, min);
        }
        SET (cl, sec, sec);
        //  Minute
        min = s_cal_min (cl);
        int hr = s_cal_hour (cl);
        t = -1;
        if ((st = s_set_tail (minutes, min)) >= 0) {
            t = min;
            min = (int) st;
        }
        else {
            min = (int) s_set_tail (minutes, 0);
            hr++;
        }
        if (min != t) {
            SET (cl, sec, 0);
            SET (cl, min, min);
            s_cal_set_hour (cl, hr);
            continue;
        }
        SET (cl, min, min);
        //  Hour
        hr = s_cal_hour (cl);
        int day = s_cal_dom (cl);
        t = -1;
        if ((st = s_set_tail (hours, hr)) >= 0) {
            t = hr;
            hr = (int) st;
        }
        else {
            hr = (int) s_set_tail (hours, 0);
            day++;
        }
        if (hr != t) {
            SET (cl, sec, 0);
            SET (cl, min, 0);
            SET (cl, dom, day);
            s_cal_set_hour (cl, hr);
            continue;
        }
        SET (cl, hour, hr);
        //  Day
        day = s_cal_dom (cl);
        int mon = s_cal_month (cl);
        t = -1;
        int tmon = mon;
        if (dom_spec) {
            st = s_set_tail (doms, day);
            if (self->lastday_of_month && !self->nearest_weekday) {
                t = day;
                day = s_last_day (mon, s_cal_year (cl)) - self->lastday_offset;
                if (t > day) {
                    if (++mon > 12) {
                        mon = 1;
                        tmon = 3333;    //  forces the month test below
                        s_cal_add_year (cl);
                    }
                    day = 1;
                }
            }
            else
            if (self->nearest_weekday) {
                t = day;
                int64_t year = s_cal_year (cl);
                day = self->lastday_of_month
                    ? s_last_day (mon, year) - self->lastday_offset
                    : (int) s_set_tail (doms, 0);
                bool before;
                day = s_weekday (cl, day, mon, year, hr, min, sec, start, &before);
                if (before) {
                    day = self->lastday_of_month? 1: (int) s_set_tail (doms, 0);
                    mon++;
                }
            }
            else
            if (st >= 0) {
                t = day;
                day = (int) st;
                if (day > s_last_day (mon, s_cal_year (cl))) {
                    day = (int) s_set_tail (doms, 0);
                    mon++;
                }
            }
            else {
                day = (int) s_set_tail (doms, 0);
                mon++;
            }
            if (day != t || mon != tmon) {
                SET (cl, sec, 0);
                SET (cl, min, 0);
                SET (cl, hour, 0);
                SET (cl, dom, day);
                SET (cl, month, mon - 1);
                continue;
            }
        }
        else
        if (self->lastday_of_week) {
            //  Last given weekday of the month
            int dow = (int) s_set_tail (dows, 0);
            int cdow = s_cal_dow (cl);
            int add = 0;
            if (cdow < dow)
                add = dow - cdow;
            if (cdow > dow)
                add = dow + (7 - cdow);
            int ldom = s_last_day (mon, s_cal_year (cl));
            if (day + add > ldom) {
                SET (cl, sec, 0);
                SET (cl, min, 0);
                SET (cl, hour, 0);
                SET (cl, dom, 1);
                SET (cl, month, mon);
                continue;
            }
            while (day + add + 7 <= ldom)
                add += 7;
            day += add;
            if (add > 0) {
                SET (cl, sec, 0);
                SET (cl, min, 0);
                SET (cl, hour, 0);
                SET (cl, dom, day);
                SET (cl, month, mon - 1);
                continue;
            }
        }
        else
        if (self->nth_day_of_week) {
            //  The nth given weekday of the month
            int dow = (int) s_set_tail (dows, 0);
            int cdow = s_cal_dow (cl);
            int add = 0;
            if (cdow < dow)
                add = dow - cdow;
            else
            if (cdow > dow)
                add = dow + (7 - cdow);
            bool shifted = add > 0;
            day += add;
            int week = day / 7;
            if (day % 7 > 0)
                week++;
            add = (self->nth_day_of_week - week) * 7;
            day += add;
            if (add < 0 || day > s_last_day (mon, s_cal_year (cl))) {
                SET (cl, sec, 0);
                SET (cl, min, 0);
                SET (cl, hour, 0);
                SET (cl, dom, 1);
                SET (cl, month, mon);
                continue;
            }
            if (add > 0 || shifted) {
                SET (cl, sec, 0);
                SET (cl, min, 0);
                SET (cl, hour, 0);
                SET (cl, dom, day);
                SET (cl, month, mon - 1);
                continue;
            }
        }
        else {
            int cdow = s_cal_dow (cl);
            int dow = (int) s_set_tail (dows, 0);
            if ((st = s_set_tail (dows, cdow)) >= 0)
                dow = (int) st;
            int add = 0;
            if (cdow < dow)
                add = dow - cdow;
            if (cdow > dow)
                add = dow + (7 - cdow);
            if (day + add > s_last_day (mon, s_cal_year (cl))) {
                SET (cl, sec, 0);
                SET (cl, min, 0);
                SET (cl, hour, 0);
                SET (cl, dom, 1);
                SET (cl, month, mon);
                continue;
            }
            if (add > 0) {
                SET (cl, sec, 0);
                SET (cl, min, 0);
                SET (cl, hour, 0);
                SET (cl, dom, day + add);
                SET (cl, month, mon - 1);
                continue;
            }
        }
        SET (cl, dom, day);
        //  Month
        mon = s_cal_month (cl);
        int64_t year = s_cal_year (cl);
        t = -1;
        if (year > self->max_year)
            return -1;
        if ((st = s_set_tail (months, mon)) >= 0) {
            t = mon;
            mon = (int) st;
        }
        else {
            mon = (int) s_set_tail (months, 0);
            year++;
        }
        if (mon != t) {
            SET (cl, sec, 0);
            SET (cl, min, 0);
            SET (cl, hour, 0);
            SET (cl, dom, 1);
            SET (cl, month, mon - 1);
            SET (cl, year, year);
            continue;
        }
        SET (cl, month, mon - 1);
        //  Year
        year = s_cal_year (cl);
        int64_t y = s_years_tail (self, year);
        if (y < 0)
            return -1;
        if (y != year) {
            SET (cl, sec, 0);
            SET (cl, min, 0);
            SET (cl, hour, 0);
            SET (cl, dom, 1);
            SET (cl, month, 0);
            SET (cl, year, y);
            continue;
        }
        SET (cl, year, y);
        s_cal_complete (cl);
        return cl->time * 1000;
    }
    return -1;
}
