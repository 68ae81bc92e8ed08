/*  xxl_backfill_rules.c -- a backfill's decisions as pure functions
    (contract: xxl_backfill_rules.h).
*/

#include <assert.h>
#include <stdio.h>
#include <string.h>
#include "xxl_backfill_rules.h"

int
xxl_backfill_check (const char *schedule_type, int64_t from, int64_t to, int64_t now,
                    char *why, size_t whylen)
{
    if (!schedule_type || (strcmp (schedule_type, "CRON") && strcmp (schedule_type, "FIX_RATE"))) {
        snprintf (why, whylen, "schedule type %s has no planned fire times to backfill"
                  " (backfill takes CRON and FIX_RATE jobs)", schedule_type? schedule_type: "?");
        return -1;
    }
    if (from > to) {
        snprintf (why, whylen, "from (%lld) is after to (%lld)", (long long) from,
                  (long long) to);
        return -1;
    }
    if (to > now) {
        snprintf (why, whylen, "to (%lld) is in the future (now %lld): a backfill makes past"
                  " fire times, the planner makes the others", (long long) to,
                  (long long) now);
        return -1;
    }
    return 0;
}

int64_t
xxl_backfill_grid (int64_t anchor, int64_t rate, int64_t after)
{
    assert (rate > 0);
    //  k = floor ((after - anchor) / rate) + 1, in 128 bits (any anchor, any after)
    __int128 delta = (__int128) after - anchor;
    __int128 k = delta >= 0? delta / rate: -((-delta + rate - 1) / rate);
    __int128 next = (__int128) anchor + (k + 1) * rate;
    if (next <= after)
        next += rate;
    return next > INT64_MAX? -1: (int64_t) next;
}

int64_t
xxl_backfill_count (xxl_backfill_next_fn *next, void *ctx, int64_t from, int64_t to,
                    int64_t max)
{
    assert (next && max >= 0);
    int64_t count = 0;
    int64_t at = from > INT64_MIN? from - 1: from;
    while (count <= max) {
        at = next (ctx, at);
        if (at < 0 || at > to)
            break;
        count++;
    }
    return count;
}

int64_t
xxl_backfill_allow (int64_t per_second, int64_t last, int64_t now, int64_t cap,
                    int64_t *next_last)
{
    assert (per_second >= 1 && cap >= 0 && next_last);
    if (last < now - 1000)
        last = now - 1000;              //  (at most a second of credit)
    if (last > now)
        last = now;                     //  (a wall clock stepped back: paced from now)
    int64_t credit = now > last? now - last: 0;
    int64_t allow = per_second * credit / 1000;
    if (allow > cap)
        allow = cap;
    //  The mark moves by what was used; the fraction left stays credited
    *next_last = last + allow * 1000 / per_second;
    assert (allow <= per_second && (allow == 0 || *next_last <= now));
    return allow;
}
