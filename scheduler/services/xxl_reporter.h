/*  xxl_reporter.h -- the daily report's counts, made off the engine's thread.

    The report rows (XXL-JOB's xxl_job_log_report: per local day, the runs
    running, succeeded and failed) are counted from every log row of the
    day: a scan that grows with the day's runs (a second or more for a few
    million rows).  The reporter does it on a thread of its own, with a
    store handle of its own on the same store, so that the engine's loop
    never waits for it: the engine asks (xxl_reporter_ask), goes on, and
    takes the answer in a later turn (xxl_reporter_take), writing the rows
    itself in its transaction.

    MUST: asks and takes come from one thread (the engine's).  An ask
    made while another is being counted is counted after it (asks made
    meanwhile are counted once, together).  The counts are of what the
    store had committed when the count began: ask after the commit of the
    writes an answer must see.

    Each count is made per group (a run counts for its row's job_group):
    besides the answer, the reporter keeps the latest count's figures of
    each group, from which a caller whose reads are limited to some
    groups takes figures of those groups only (xxl_reporter_scoped).
*/

#ifndef XXL_REPORTER_H_INCLUDED
#define XXL_REPORTER_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "xxl_store.h"

//  Days counted per answer: today and the two before (XXL-JOB's
//  JobLogReportHelper refreshes three)
#define XXL_REPORT_DAYS 3

//  A REPORT without a range answers the newest 30 day rows; one with a
//  range, the rows of at most 366 days (docs/protocol.md: about 100 bytes
//  a row, far under the frame limit)
#define XXL_REPORT_ROWS 30
#define XXL_REPORT_RANGE_DAYS 366
//  The latest time a range may name: 9999-12-31T23:59:59.999Z (past it,
//  a local midnight is not computed)
#define XXL_REPORT_TIME_MAX 253402300799999LL

//  A REPORT's days: the local midnights from and to, both included;
//  from XXL_REPORT_NO_RANGE: no range (the newest XXL_REPORT_ROWS rows).
//  A midnight may be negative (the first day of 1970 east of UTC, the
//  30 days up to an early `to`): only the sentinel means no range
#define XXL_REPORT_NO_RANGE INT64_MIN
typedef struct {
    int64_t from, to;
} xxl_report_range_t;

typedef struct {
    int64_t day;                        //  local midnight, epoch ms
    int64_t running, suc, fail;
} xxl_report_day_t;

typedef struct {
    xxl_report_day_t days [XXL_REPORT_DAYS];
    int64_t now;                        //  epoch ms the count was asked at
    uint64_t generation;                //  covers every ask up to this one
    bool failed;                        //  the count failed (the store's error logged)
} xxl_report_t;

typedef struct _xxl_reporter_t xxl_reporter_t;

//  Opens its own handle on the store at url and starts its thread; NULL
//  (the reason in err) when the store cannot be opened
xxl_reporter_t *xxl_reporter_new (const char *url, char *err, size_t errlen);
//  Stops the thread (after the count in hand), closes, frees, nulls *self_p
void xxl_reporter_destroy (xxl_reporter_t **self_p);
//  Asks for the counts of the XXL_REPORT_DAYS days up to now (epoch ms);
//  returns the ask's generation (an answer of that generation or later
//  covers it)
uint64_t xxl_reporter_ask (xxl_reporter_t *self, int64_t now);
//  The latest answer not taken yet: true and *out filled, or false
bool xxl_reporter_take (xxl_reporter_t *self, xxl_report_t *out);
//  Whether an ask is not answered yet (the engine then wakes soon to take it)
bool xxl_reporter_busy (xxl_reporter_t *self);
//  The latest count summed over the `count` groups whose ids are in
//  groups (any order) only, when that count is of `generation` or later:
//  true and *out filled (its days, now and generation; failed when it
//  failed), else false (ask again later).  Does not take the answer.
bool xxl_reporter_scoped (xxl_reporter_t *self, uint64_t generation, const int64_t *groups,
                          size_t count, xxl_report_t *out);
//  The same, counted at once on store (a caller with no reporter: an
//  in-memory store); 0, or -1 when the store failed
int xxl_report_count_groups (xxl_store_t *store, int64_t now, const int64_t *groups,
                             size_t count, xxl_report_t *out);

//  Local midnight of the day holding ms, epoch ms
int64_t xxl_report_day_start (int64_t ms);
//  The days of a REPORT's from and to (epoch ms, -1 absent; both absent:
//  no range; to absent: now; from absent: the 30 days up to to's) into
//  *out: 0, or -1 with the reason in why (a 400: to before from, a time
//  past XXL_REPORT_TIME_MAX, more than XXL_REPORT_RANGE_DAYS days)
int xxl_report_range (int64_t from, int64_t to, int64_t now, xxl_report_range_t *out,
                      char *why, size_t whylen);

#endif
