/*  xxl_reporter.c -- the daily report's counts, made off the engine's
    thread (xxl_reporter.h).

    State, under the mutex: `asked` (the latest ask's generation, and its
    time), `counted` (the generation of the answer made last), `ready`
    (an answer not taken yet).  The thread waits until asked > counted,
    takes the latest ask, counts outside the mutex, then publishes: the
    answer, and the count per group (`latest`, `by_group`), which stays
    until the next count replaces it.
*/

#include "xxl_reporter.h"
#include "xxl_store.h"

#include <assert.h>
#include <czmq.h>
#include <inttypes.h>
#include <pthread.h>
#include <time.h>

struct _xxl_reporter_t {
    char *url;
    xxl_store_t *store;                 //  the thread's own handle (NULL: opened again
                                        //  at the next count, after a failed one)
    pthread_t thread;
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    bool stop;
    uint64_t asked;                     //  generation of the latest ask
    int64_t asked_now;                  //  and its time
    uint64_t counted;                   //  generation of the latest answer made
    bool ready;                         //  answer holds one not taken
    xxl_report_t answer;
    //  The latest count (kept when taken) and its runs per group, each
    //  day's by group id (NULL and 0 when none or it failed)
    xxl_report_t latest;
    xxl_store_group_runs_t *by_group [XXL_REPORT_DAYS];
    size_t by_group_count [XXL_REPORT_DAYS];
};

int64_t
xxl_report_day_start (int64_t ms)
{
    time_t t = (time_t) (ms / 1000);
    struct tm tm;
    localtime_r (&t, &tm);
    tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
    tm.tm_isdst = -1;
    return (int64_t) mktime (&tm) * 1000;
}

int
xxl_report_range (int64_t from, int64_t to, int64_t now, xxl_report_range_t *out, char *why,
                  size_t whylen)
{
    *out = (xxl_report_range_t) { XXL_REPORT_NO_RANGE, XXL_REPORT_NO_RANGE };
    if (from < 0 && to < 0)
        return 0;
    if (to < 0)
        to = now;
    if (from > XXL_REPORT_TIME_MAX || to > XXL_REPORT_TIME_MAX) {
        snprintf (why, whylen, "%s (%" PRId64 ") is past 9999-12-31 (%lld)",
                  from > XXL_REPORT_TIME_MAX? "from": "to",
                  from > XXL_REPORT_TIME_MAX? from: to, XXL_REPORT_TIME_MAX);
        return -1;
    }
    if (from > to) {
        snprintf (why, whylen, "from (%" PRId64 ") is after to (%" PRId64 ")", from, to);
        return -1;
    }
    out->to = xxl_report_day_start (to);
    //  (noon: a day of 23 or 25 hours between them does not move the date)
    out->from = from < 0
              ? xxl_report_day_start (out->to + 12 * 3600000LL
                                      - (int64_t) (XXL_REPORT_ROWS - 1) * 86400000)
              : xxl_report_day_start (from);
    int64_t days = (out->to - out->from + 12 * 3600000LL) / 86400000 + 1;
    if (days > XXL_REPORT_RANGE_DAYS) {
        snprintf (why, whylen, "from..to spans %" PRId64 " days (a REPORT covers at most %d:"
                  " split the range)", days, XXL_REPORT_RANGE_DAYS);
        *out = (xxl_report_range_t) { XXL_REPORT_NO_RANGE, XXL_REPORT_NO_RANGE };
        return -1;
    }
    return 0;
}

//  Counts the days up to now on store into out, and each day's runs per
//  group into by_group (new arrays; all NULL when it fails); false when
//  the store failed
static bool
s_count_days (xxl_store_t *store, int64_t now, xxl_report_t *out,
              xxl_store_group_runs_t *by_group [XXL_REPORT_DAYS],
              size_t by_group_count [XXL_REPORT_DAYS])
{
    for (int back = 0; back < XXL_REPORT_DAYS; back++) {
        xxl_report_day_t *day = &out->days [back];
        day->day = xxl_report_day_start (now - (int64_t) back * 86400000);
        int64_t next = xxl_report_day_start (day->day + 36 * 3600000LL);
        if (xxl_store_report_count_groups (store, day->day, next, &by_group [back],
                                           &by_group_count [back])) {
            for (int i = 0; i < back; i++) {
                free (by_group [i]);
                by_group [i] = NULL;
                by_group_count [i] = 0;
            }
            return false;
        }
        day->running = day->suc = day->fail = 0;
        for (size_t i = 0; i < by_group_count [back]; i++) {
            day->running += by_group [back][i].running;
            day->suc += by_group [back][i].suc;
            day->fail += by_group [back][i].fail;
        }
    }
    return true;
}

//  out's days become the sums of by_group over the `count` groups in
//  groups only
static void
s_sum_groups (xxl_report_t *out, xxl_store_group_runs_t *const by_group [XXL_REPORT_DAYS],
              const size_t by_group_count [XXL_REPORT_DAYS], const int64_t *groups,
              size_t count)
{
    for (int back = 0; back < XXL_REPORT_DAYS; back++) {
        xxl_report_day_t *day = &out->days [back];
        day->running = day->suc = day->fail = 0;
        for (size_t i = 0; i < by_group_count [back]; i++) {
            const xxl_store_group_runs_t *row = &by_group [back][i];
            bool ours = false;
            for (size_t g = 0; g < count && !ours; g++)
                ours = groups [g] == row->group_id;
            if (ours) {
                day->running += row->running;
                day->suc += row->suc;
                day->fail += row->fail;
            }
        }
    }
}

//  Counts the days up to now into out, and per group; false when the
//  store failed
static bool
s_count (xxl_reporter_t *self, int64_t now, xxl_report_t *out,
         xxl_store_group_runs_t *by_group [XXL_REPORT_DAYS],
         size_t by_group_count [XXL_REPORT_DAYS])
{
    if (!self->store) {
        char err [256];
        self->store = xxl_store_side_new (self->url, err, sizeof err);
        if (!self->store) {
            zsys_warning ("report: cannot open the store: %s", err);
            return false;
        }
    }
    return s_count_days (self->store, now, out, by_group, by_group_count);
}

int
xxl_report_count_groups (xxl_store_t *store, int64_t now, const int64_t *groups, size_t count,
                         xxl_report_t *out)
{
    xxl_store_group_runs_t *by_group [XXL_REPORT_DAYS] = { NULL };
    size_t by_group_count [XXL_REPORT_DAYS] = { 0 };
    *out = (xxl_report_t) { .now = now };
    if (!s_count_days (store, now, out, by_group, by_group_count)) {
        out->failed = true;
        return -1;
    }
    s_sum_groups (out, by_group, by_group_count, groups, count);
    for (int back = 0; back < XXL_REPORT_DAYS; back++)
        free (by_group [back]);
    return 0;
}

static void *
s_run (void *args)
{
    xxl_reporter_t *self = (xxl_reporter_t *) args;
    pthread_mutex_lock (&self->mutex);
    while (!self->stop) {
        if (self->asked == self->counted) {
            pthread_cond_wait (&self->cond, &self->mutex);
            continue;
        }
        uint64_t generation = self->asked;
        int64_t now = self->asked_now;
        pthread_mutex_unlock (&self->mutex);
        xxl_report_t answer = { .now = now, .generation = generation };
        xxl_store_group_runs_t *by_group [XXL_REPORT_DAYS] = { NULL };
        size_t by_group_count [XXL_REPORT_DAYS] = { 0 };
        if (!s_count (self, now, &answer, by_group, by_group_count)) {
            answer.failed = true;
            if (self->store) {
                zsys_warning ("report: cannot count the days' runs: %s",
                              xxl_store_error (self->store));
                xxl_store_destroy (&self->store);
            }
        }
        pthread_mutex_lock (&self->mutex);
        self->answer = answer;
        self->ready = true;
        self->counted = generation;
        self->latest = answer;
        for (int back = 0; back < XXL_REPORT_DAYS; back++) {
            free (self->by_group [back]);
            self->by_group [back] = by_group [back];
            self->by_group_count [back] = by_group_count [back];
        }
    }
    pthread_mutex_unlock (&self->mutex);
    return NULL;
}

xxl_reporter_t *
xxl_reporter_new (const char *url, char *err, size_t errlen)
{
    xxl_reporter_t *self = (xxl_reporter_t *) zmalloc (sizeof (xxl_reporter_t));
    self->url = strdup (url);
    self->store = self->url? xxl_store_side_new (url, err, errlen): NULL;
    if (!self->store) {
        free (self->url);
        free (self);
        return NULL;
    }
    pthread_mutex_init (&self->mutex, NULL);
    pthread_cond_init (&self->cond, NULL);
    if (pthread_create (&self->thread, NULL, s_run, self)) {
        snprintf (err, errlen, "cannot start the report thread");
        xxl_store_destroy (&self->store);
        free (self->url);
        pthread_mutex_destroy (&self->mutex);
        pthread_cond_destroy (&self->cond);
        free (self);
        return NULL;
    }
    return self;
}

void
xxl_reporter_destroy (xxl_reporter_t **self_p)
{
    assert (self_p);
    xxl_reporter_t *self = *self_p;
    if (!self)
        return;
    pthread_mutex_lock (&self->mutex);
    self->stop = true;
    pthread_cond_signal (&self->cond);
    pthread_mutex_unlock (&self->mutex);
    pthread_join (self->thread, NULL);
    xxl_store_destroy (&self->store);
    for (int back = 0; back < XXL_REPORT_DAYS; back++)
        free (self->by_group [back]);
    free (self->url);
    pthread_mutex_destroy (&self->mutex);
    pthread_cond_destroy (&self->cond);
    free (self);
    *self_p = NULL;
}

uint64_t
xxl_reporter_ask (xxl_reporter_t *self, int64_t now)
{
    assert (self);
    pthread_mutex_lock (&self->mutex);
    uint64_t generation = ++self->asked;
    self->asked_now = now;
    pthread_cond_signal (&self->cond);
    pthread_mutex_unlock (&self->mutex);
    return generation;
}

bool
xxl_reporter_take (xxl_reporter_t *self, xxl_report_t *out)
{
    assert (self);
    pthread_mutex_lock (&self->mutex);
    bool ready = self->ready;
    if (ready) {
        *out = self->answer;
        self->ready = false;
    }
    pthread_mutex_unlock (&self->mutex);
    return ready;
}

bool
xxl_reporter_busy (xxl_reporter_t *self)
{
    assert (self);
    pthread_mutex_lock (&self->mutex);
    bool busy = self->asked != self->counted || self->ready;
    pthread_mutex_unlock (&self->mutex);
    return busy;
}

bool
xxl_reporter_scoped (xxl_reporter_t *self, uint64_t generation, const int64_t *groups,
                     size_t count, xxl_report_t *out)
{
    assert (self);
    pthread_mutex_lock (&self->mutex);
    bool ready = self->latest.generation >= generation && generation > 0;
    if (ready) {
        *out = self->latest;
        s_sum_groups (out, self->by_group, self->by_group_count, groups, count);
    }
    pthread_mutex_unlock (&self->mutex);
    return ready;
}
