/*  xxl_backfill_rules.h -- a backfill's decisions as pure functions
    (DESIGN §13; the engine's side is xxl_backfill.c).

    Contract: plain values in, a decision out: no server_t, no store, no
    clock read (the time is a parameter), no logging.  Times are epoch ms.

    xxl_backfill_check (schedule_type, from, to, now, max, why, whylen)
        Whether a backfill of a job of that schedule type over [from, to]
        may start at now: CRON and FIX_RATE have planned fire times (NONE
        fires by hand only, FIX_DELAY after each run's end: neither);
        from <= to; to <= now (a backfill makes past instants; the planner
        makes the future ones).  0, or -1 with the reason users see.
    xxl_backfill_grid (anchor, rate, after)
        FIX_RATE's planned times are anchor + k * rate (k any integer):
        the first of them strictly after `after`, or -1 past INT64_MAX.
        Invariant: rate > 0.
    xxl_backfill_count (next, ctx, from, to, max)
        How many instants next() gives in [from, to] (from included: the
        walk starts after from - 1), counting at most max + 1 of them (a
        caller refuses more than max); next answers -1 (none) or
        XXL_CALENDAR_EXHAUSTED (-2): the count ends there.
    xxl_backfill_allow (per_second, last, now, cap, *next_last)
        Pacing: the instants a backfill may make at now when its pace was
        last settled at `last` (credit for at most one second: no burst
        after a pause), at most cap; *next_last is the pace's new mark
        (the unused fraction of an instant stays credited; a mark past
        now, the wall clock stepped back, is taken as now).
        Invariants: per_second >= 1; result <= cap and <= per_second.
*/

#ifndef XXL_BACKFILL_RULES_H_INCLUDED
#define XXL_BACKFILL_RULES_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

typedef int64_t (xxl_backfill_next_fn) (void *ctx, int64_t after);

int xxl_backfill_check (const char *schedule_type, int64_t from, int64_t to, int64_t now,
                        char *why, size_t whylen);
int64_t xxl_backfill_grid (int64_t anchor, int64_t rate, int64_t after);
int64_t xxl_backfill_count (xxl_backfill_next_fn *next, void *ctx, int64_t from, int64_t to,
                            int64_t max);
int64_t xxl_backfill_allow (int64_t per_second, int64_t last, int64_t now, int64_t cap,
                            int64_t *next_last);

#endif
