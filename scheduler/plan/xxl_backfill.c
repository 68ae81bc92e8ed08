/*  xxl_backfill.c -- backfills (DESIGN §13, docs/operations.md "Backfill"):
    one run for each planned fire time of a job in a past range.

    A backfill is a store row (xxl_store_backfill_t) whose cursor is the
    last instant handled.  The holder of its job's share drives it: each
    tick (XXL_BACKFILL_TICK_MS) it reads the row inside the turn's
    transaction, makes the next instants' runs (engine_trigger, trigger type
    BACKFILL, schedule time the instant) as its pace allows, and writes the
    new cursor and counts in the same transaction: runs and cursor commit
    together or not at all, so a restart, a SIGKILL or a takeover goes on
    where the last commit left.  An instant that has its run already (made
    by the planner, an earlier or overlapping backfill, or a turn of this
    one) is refused by the log's unique (job, schedule time, shard): it is
    counted as skipped and made no second time.
    Instants: the job's schedule and calendar as they are when each is
    made (CRON: its fire times in the job's zone; FIX_RATE: the job's grid,
    anchor + k * rate, anchored on its next time, or the epoch when it has
    none), excluded times skipped as the planner skips them.
    MUST: make rows only inside the turn's transaction.
    Called by: the actor (engine_backfill_run, engine_backfill_wake), the
    api (engine_backfill_start).
*/

#include "xxl_engine.h"
#include "xxl_backfill_rules.h"
#include "xxl_calendar.h"
#include "xxl_commands.h"

#define XXL_BACKFILL_TICK_MS 100        //  running backfills go on this often
#define XXL_BACKFILL_IDLE_MS 1000       //  none running: looked for this often
#define XXL_BACKFILL_TURN    2000       //  instants made in one turn, at most (all backfills)
#define XXL_BACKFILL_BATCH   64         //  backfills read in one tick, at most
#define XXL_BACKFILL_TURN_MS 50         //  ... and the time a turn gives them, at most
                                        //  (a store that writes a row a round
                                        //  trip, PostgreSQL, makes fewer a turn)
#define XXL_BACKFILL_CHUNK_MIN 32       //  instants walked and looked up at once: the
#define XXL_BACKFILL_CHUNK_MAX 512      //  first chunk of a step, doubling up to this

//  The instants of one job
typedef struct {
    const xxl_job_t *job;
    xxl_schedule_t *schedule;
    xxl_calendar_t *calendar;
    int64_t anchor, rate;               //  FIX_RATE's grid (rate 0: not FIX_RATE)
    char why [256];
} walk_t;

static int64_t
s_plain_next (void *ctx, int64_t after)
{
    walk_t *walk = (walk_t *) ctx;
    if (walk->rate > 0)
        return xxl_backfill_grid (walk->anchor, walk->rate, after);
    return engine_schedule_next (walk->schedule, walk->job->timezone, after, walk->why,
                                 sizeof walk->why);
}

//  The next instant strictly after `after` that the calendar lets through;
//  -1 none (or the calendar gave up: no more within its horizon)
static int64_t
s_next (void *ctx, int64_t after)
{
    walk_t *walk = (walk_t *) ctx;
    int64_t next = xxl_calendar_next (walk->calendar, s_plain_next, walk, after, walk->why,
                                      sizeof walk->why);
    return next < 0? -1: next;
}

static int
s_walk_open (server_t *self, const xxl_job_t *job, walk_t *walk, char *why, size_t whylen)
{
    memset (walk, 0, sizeof *walk);
    walk->job = job;
    if (job->calendar && *job->calendar
    &&  engine_calendar_load (self, job->calendar, job->timezone, &walk->calendar, NULL, why,
                              whylen))
        return -1;
    walk->schedule = xxl_schedule_new (job->schedule_type, job->schedule_conf, job->timezone,
                                       why, whylen);
    if (!walk->schedule) {
        xxl_calendar_destroy (&walk->calendar);
        return -1;
    }
    if (streq (job->schedule_type, "FIX_RATE")) {
        walk->rate = atoll (job->schedule_conf) * 1000;
        walk->anchor = job->trigger_next_time > 0 && job->trigger_next_time != XXL_WAITING
                     ? job->trigger_next_time: 0;
    }
    return 0;
}

static void
s_walk_close (walk_t *walk)
{
    xxl_schedule_destroy (&walk->schedule);
    xxl_calendar_destroy (&walk->calendar);
}

int64_t
engine_backfill_start (server_t *self, const xxl_job_t *job, int64_t from, int64_t to,
                       int64_t per_second, const char *by, int *code, char *why,
                       size_t whylen)
{
    int64_t now = engine_now ();
    *code = XXL_BAD_REQUEST;
    if (xxl_backfill_check (job->schedule_type, from, to, now, why, whylen))
        return 0;
    walk_t walk;
    if (s_walk_open (self, job, &walk, why, whylen))
        return 0;
    int64_t total = xxl_backfill_count (s_next, &walk, from, to, XXL_BACKFILL_MAX);
    s_walk_close (&walk);
    if (total > XXL_BACKFILL_MAX) {
        snprintf (why, whylen, "from..to holds more than %d fire times of job %" PRId64
                  " (a backfill covers at most %d: split the range)", XXL_BACKFILL_MAX,
                  job->id, XXL_BACKFILL_MAX);
        return 0;
    }
    if (total == 0) {
        snprintf (why, whylen, "job %" PRId64 " has no planned fire time from %" PRId64
                  " to %" PRId64 " (its schedule%s)", job->id, from, to,
                  job->calendar && *job->calendar? " and calendar": "");
        return 0;
    }
    xxl_store_backfill_t row = {
        .job_id = job->id, .from_time = from, .to_time = to, .per_second = per_second,
        .cursor = from - 1, .total = total, .state = (char *) "RUNNING",
        .by = (char *) (by? by: ""), .msg = (char *) "", .add_time = now, .update_time = now
    };
    int64_t id = xxl_store_backfill_add (self->store, &row);
    if (id <= 0) {
        *code = XXL_FAILURE;
        snprintf (why, whylen, "%s", xxl_store_error (self->store));
        return 0;
    }
    self->planner.backfill_at = 0;      //  (its first instants at the next tick)
    *code = XXL_OK;
    return id;
}

//  Ends backfill id as FAILED with why (in this turn)
static void
s_fail (server_t *self, const xxl_store_backfill_t *row, const char *why)
{
    xxl_store_backfill_advance (self->store, row->id, row->cursor, row->cursor, 0, 0, "FAILED",
                                why, engine_now ());
    zsys_warning ("backfill %" PRId64 " of job %" PRId64 " failed: %s", row->id, row->job_id,
                  why);
}

//  Goes on with backfill id: at most budget instants, until the monotonic
//  ms `until`; the number handled
static int64_t
s_step (server_t *self, int64_t id, int64_t budget, int64_t until)
{
    xxl_store_backfill_t row;
    if (xxl_store_backfill_get (self->store, id, &row))
        return 0;
    if (!streq (row.state, "RUNNING") || !engine_lease_holds (self, row.job_id)) {
        xxl_store_backfill_free (&row);
        return 0;
    }
    int64_t now = engine_now ();
    int64_t mark;
    int64_t allow = xxl_backfill_allow (row.per_second, row.update_time, now, budget, &mark);
    xxl_job_t job;
    int rc = allow > 0? xxl_store_job_load (self->store, row.job_id, &job): -1;
    if (rc) {
        if (rc > 0)
            s_fail (self, &row, "its job was removed");
        xxl_store_backfill_free (&row);
        return 0;
    }
    char why [512];
    walk_t walk;
    if (xxl_backfill_check (job.schedule_type, row.from_time, row.to_time, row.to_time,
                            why, sizeof why)
    ||  s_walk_open (self, &job, &walk, why, sizeof why)) {
        char text [600];
        snprintf (text, sizeof text, "the job's schedule changed: %s", why);
        s_fail (self, &row, text);
        xxl_job_free (&job);
        xxl_store_backfill_free (&row);
        return 0;
    }
    char by [400];
    snprintf (by, sizeof by, "backfill %" PRId64 "%s%s%s", row.id, *row.by? " (": "", row.by,
              *row.by? ")": "");
    //  The instants of this step, a chunk at a time, and those of a chunk
    //  that have their run already (read at once, one statement a chunk,
    //  not refused one by one).  Chunks double from the first: a turn that
    //  runs out of time has walked and looked up little past where it
    //  stops, and a long one takes few statements.
    int64_t instants [XXL_BACKFILL_CHUNK_MAX], had [XXL_BACKFILL_CHUNK_MAX];
    int64_t at = row.cursor, made = 0, skipped = 0;
    int64_t handled = 0;
    size_t chunk = XXL_BACKFILL_CHUNK_MIN;
    bool stop = false;
    int64_t next = s_next (&walk, row.cursor);
    while (!stop && handled < allow && next >= 0 && next <= row.to_time) {
        if (handled > 0 && zclock_mono () >= until)
            break;                      //  (out of time: the rest next turn)
        size_t count = 0, had_count = 0;
        while (count < chunk && handled + (int64_t) count < allow
           &&  next >= 0 && next <= row.to_time) {
            instants [count++] = next;
            next = s_next (&walk, next);
        }
        if (xxl_store_backfill_made_times (self->store, row.job_id, instants, count, had,
                                           &had_count)) {
            next = instants [0];        //  (the store failed: not done; the commit fails too)
            break;
        }
        size_t h = 0;
        for (size_t i = 0; i < count; i++) {
            if (handled % 16 == 15 && zclock_mono () >= until) {
                next = instants [i];    //  (out of time: the rest next turn)
                stop = true;
                break;
            }
            while (h < had_count && had [h] < instants [i])
                h++;
            if (h < had_count && had [h] == instants [i])
                skipped++;
            else {
                trigger_args_t args = { .trigger_type = "BACKFILL", .fail_retry_count = -1,
                                        .shard_index = -1, .shard_total = -1,
                                        .schedule_time = instants [i], .by = by };
                int64_t ids [16];
                int rows = engine_trigger (self, &job, &args, ids, NULL, 16);
                if (rows > 0)
                    made++;
                else
                if (strstr (xxl_store_error (self->store), "UNIQUE"))
                    skipped++;          //  (made meanwhile: it has its run)
                else {
                    next = instants [i];    //  (the store failed: the commit will too)
                    stop = true;
                    break;
                }
            }
            at = instants [i];
            handled++;
        }
        if (chunk < XXL_BACKFILL_CHUNK_MAX)
            chunk *= 2;
    }
    //  The pace's mark moves by what was made (an early stop keeps the rest
    //  of the credit)
    if (handled < allow)
        xxl_backfill_allow (row.per_second, row.update_time, now, handled, &mark);
    bool done = next < 0 || next > row.to_time;
    xxl_store_backfill_advance (self->store, row.id, row.cursor, at, made, skipped,
                                done? "DONE": "RUNNING", NULL, mark);
    s_walk_close (&walk);
    xxl_job_free (&job);
    xxl_store_backfill_free (&row);
    return made + skipped;
}

void
engine_backfill_run (server_t *self, int64_t mono)
{
    if (mono < self->planner.backfill_at)
        return;
    int64_t ids [XXL_BACKFILL_BATCH];
    size_t count = 0;
    if (xxl_store_backfill_running_ids (self->store, self->planner.backfill_after, ids,
                                        XXL_BACKFILL_BATCH, &count)) {
        self->planner.backfill_at = mono + XXL_BACKFILL_IDLE_MS;
        return;
    }
    //  (past the last batch: from the first again)
    self->planner.backfill_after = count == XXL_BACKFILL_BATCH? ids [count - 1]: 0;
    self->planner.backfill_at = mono + (count? XXL_BACKFILL_TICK_MS: XXL_BACKFILL_IDLE_MS);
    //  (the turn's instants shared among them: one does not starve another)
    int64_t budget = XXL_BACKFILL_TURN;
    int64_t until = zclock_mono () + XXL_BACKFILL_TURN_MS;
    for (size_t i = 0; i < count && budget > 0; i++) {
        int64_t share = budget / (int64_t) (count - i);
        budget -= s_step (self, ids [i], share > 0? share: 1, until);
    }
}

int64_t
engine_backfill_wake (server_t *self)
{
    return self->planner.backfill_at;
}
