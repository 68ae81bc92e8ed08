/*  xxl_services.c -- the engine's periodic and follow-up work.

    Child jobs fired on success; the fail monitor (retries with their
    backoff, alarms); the lost-run monitor; the daily report rows; log
    retention; alarm results.
*/

#include "xxl_engine.h"
#include "xxl_retry_rules.h"

static int64_t s_retry_delay (const xxl_job_t *job, int64_t attempt);
static void s_alarm_status (server_t *self, int64_t log_id, int status, const char *report);
static void s_alarm_send (server_t *self, const xxl_log_t *log, const xxl_job_t *job);
static void s_handle_failure (server_t *self, int64_t log_id);

//  Services: child jobs, the fail monitor (retries, alarms), the lost-run
//  monitor, daily reports, log retention

void
engine_services_on_job (server_t *self, const xxl_event_t *event)
{
    if (event->what & XXL_CHANGED_CHILDREN)
        self->services.children_until = 0;
}

void
engine_services_on_run (server_t *self, const xxl_event_t *event)
{
    //  A failure: the fail monitor runs in the next turn (its retry is
    //  timed from the failure, s_handle_failure), not at its next tick
    if (event->code != XXL_CODE_SUCCESS) {
        int64_t soon = zclock_mono ();
        if (self->services.service_next [XXL_SERVICE_FAIL] > soon)
            self->services.service_next [XXL_SERVICE_FAIL] = soon;
        return;
    }
    if (event->end != XXL_END_RESULT)
        return;
    char *children = engine_trigger_children (self, event->log_id);
    if (children)
        xxl_store_log_append_handle_msg (self->store, event->log_id, children);
    zstr_free (&children);
}

//  Fires a finished job's child jobs (trigger type PARENT); returns text for
//  the parent's handleMsg (caller frees), or NULL when it has none
char *
engine_trigger_children (server_t *self, int64_t log_id)
{
    //  Most installations have no child jobs: ask the store once a second
    //  (this scheduler's job writes ask again at once)
    int64_t now = zclock_mono ();
    if (now >= self->services.children_until) {
        self->services.any_children = xxl_store_jobs_have_children (self->store) != 0;
        self->services.children_until = now + 1000;
    }
    if (!self->services.any_children)
        return NULL;
    char *children = xxl_store_log_job_children (self->store, log_id);
    if (!children || !*children) {
        free (children);
        return NULL;
    }
    size_t total = 1;
    for (const char *p = children; *p; p++)
        total += *p == ',';
    char *text = strdup ("\n>>>>>>>>>>> Trigger child jobs <<<<<<<<<<<\n");
    char *copy = children, *save = NULL;
    size_t index = 0;
    for (char *t = strtok_r (copy, ",", &save); t; t = strtok_r (NULL, ",", &save)) {
        int64_t child = atoll (t);
        xxl_job_t job;
        char *line;
        if (child > 0 && xxl_store_job_load (self->store, child, &job) == 0) {
            trigger_args_t args = { .trigger_type = "PARENT", .fail_retry_count = -1,
                                    .shard_index = -1, .shard_total = -1 };
            int64_t ids [16];
            int made = engine_trigger (self, &job, &args, ids, NULL, 16);
            line = made > 0? zsys_sprintf ("%zu/%zu [job %" PRId64 "] triggered, log %" PRId64 "%s\n",
                                           ++index, total, child, ids [0], made > 1? " and more": "")
                           : zsys_sprintf ("%zu/%zu [job %" PRId64 "] trigger failed\n",
                                           ++index, total, child);
            xxl_job_free (&job);
        }
        else
            line = zsys_sprintf ("%zu/%zu [job %s] not found\n", ++index, total, t);
        char *joined = zsys_sprintf ("%s%s", text, line);
        zstr_free (&text);
        zstr_free (&line);
        text = joined;
    }
    free (children);
    return text;
}

//  Seconds before retry number `attempt` (0 for the first retry)
static int64_t
s_retry_delay (const xxl_job_t *job, int64_t attempt)
{
    return xxl_retry_delay (job->retry_interval, job->retry_backoff, job->retry_max_interval,
                            attempt);
}

//  Ends an alarm claim: 1 no alarm needed, 2 sent, 3 failed
static void
s_alarm_status (server_t *self, int64_t log_id, int status, const char *report)
{
    xxl_store_log_set_alarm (self->store, log_id, status, report);
}

//  Queues the alarm of a failed run for the job's targets (alarmEmail);
//  the row's alarm status is set when the sender's result comes back.  A
//  full queue keeps the log id in a backlog, tried again each pass.
static void
s_alarm_send (server_t *self, const xxl_log_t *log, const xxl_job_t *job)
{
    xxl_group_t group = { 0 };
    xxl_store_group_load (self->store, job->job_group, &group);
    xxl_alarm_t alarm = {
        .size = sizeof (xxl_alarm_t), .job_id = job->id, .job_desc = job->job_desc,
        .app = group.app_name? group.app_name: "", .log_id = log->id,
        .trigger_time = log->trigger_time, .trigger_code = (int) log->trigger_code,
        .trigger_msg = log->trigger_msg, .handle_code = (int) log->handle_code,
        .handle_msg = log->handle_msg, .executor_address = log->executor_address,
        .retry_count = (int) (job->executor_fail_retry_count - log->executor_fail_retry_count),
        .json = NULL
    };
    if (xxl_alarms_submit (self->alarms, &alarm, job->alarm_email, log->id)) {
        if (zlistx_size (self->services.alarm_backlog) < 100000)
            zlistx_add_end (self->services.alarm_backlog, (void *) (intptr_t) log->id);
        else
            s_alarm_status (self, log->id, 3, "alarm not sent: the alarm queue is full");
    }
    xxl_group_free (&group);
}

//  Alarms of a row already claimed (status -1): resent after a restart or
//  when the queue had no room
void
engine_alarm_again (server_t *self, int64_t log_id)
{
    xxl_log_t log;
    if (xxl_store_log_load (self->store, log_id, &log))
        return;
    xxl_job_t job;
    if (xxl_store_job_load (self->store, log.job_id, &job) == 0) {
        if (*job.alarm_email)
            s_alarm_send (self, &log, &job);
        else
            s_alarm_status (self, log_id, 1, NULL);
        xxl_job_free (&job);
    }
    else
        s_alarm_status (self, log_id, 1, NULL);
    xxl_log_free (&log);
}

//  Results from the alarm sender: the claim ends as sent (2) or failed (3)
void
engine_alarm_results (server_t *self)
{
    int64_t tag;
    int ok;
    char *report = NULL;
    while (xxl_alarms_take (self->alarms, &tag, &ok, &report) == 0) {
        s_alarm_status (self, tag, ok? 2: 3, report);
        free (report);
        report = NULL;
    }
}

//  One failed run, claimed: retry it while attempts are left, alarm after
//  the last (or after each, when configured)
static void
s_handle_failure (server_t *self, int64_t log_id)
{
    xxl_log_t log;
    if (xxl_store_log_load (self->store, log_id, &log))
        return;
    xxl_job_t job;
    if (xxl_store_job_load (self->store, log.job_id, &job)) {
        s_alarm_status (self, log_id, 1, NULL);
        xxl_log_free (&log);
        return;
    }
    bool retried = false;
    if (log.executor_fail_retry_count > 0) {
        int64_t attempt = job.executor_fail_retry_count - log.executor_fail_retry_count;
        int64_t delay = s_retry_delay (&job, xxl_retry_attempt (job.executor_fail_retry_count,
                                                                log.executor_fail_retry_count));
        trigger_args_t args = { .trigger_type = "RETRY",
                                .fail_retry_count = (int) log.executor_fail_retry_count - 1,
                                .param = log.executor_param,
                                .shard_index = -1, .shard_total = -1, .defer = delay > 0 };
        int index, total;
        if (*log.executor_sharding_param) {
            engine_shard_of (log.executor_sharding_param, &index, &total);
            args.shard_index = index;
            args.shard_total = total;
        }
        //  Due `delay` after the failure: its result's time, or (a trigger
        //  that failed) now, the monitor being woken by the failure
        int64_t now = engine_now ();
        int64_t failed_at = log.handle_code && log.handle_code != XXL_CODE_SUCCESS
                          ? log.handle_time: now;
        int64_t when = xxl_retry_due (failed_at, delay, now);
        int64_t ids [4];
        int made = engine_trigger (self, &job, &args, ids, NULL, 4);
        if (made > 0) {
            if (delay > 0) {
                xxl_store_log_retime (self->store, ids [0], when);
                engine_run_again (self, ids [0], now, when - now);
            }
            char *note = engine_text_retry (attempt + 1, job.executor_fail_retry_count, ids [0],
                                            delay);
            xxl_store_log_append_trigger_msg (self->store, log_id, note);
            zstr_free (&note);
            retried = true;
        }
    }
    if (retried && !self->config.alarm_every_failure)
        s_alarm_status (self, log_id, 1, NULL);
    else
    if (!*job.alarm_email)
        s_alarm_status (self, log_id, 1, NULL);
    else
        s_alarm_send (self, &log, &job);
    xxl_job_free (&job);
    xxl_log_free (&log);
}

//  Failed runs not yet handled, claimed atomically (alarm_status 0 → -1)
//  so that schedulers sharing a store never handle one twice
void
engine_fail_monitor (server_t *self)
{
    //  The backlog in order, until the queue refuses one (it went back to
    //  the backlog's end): the rest waits for the next pass rather than
    //  each being read from the store to be refused too
    size_t backlog = zlistx_size (self->services.alarm_backlog);
    for (size_t i = 0; i < backlog; i++) {
        int64_t log_id = (int64_t) (intptr_t) zlistx_detach (self->services.alarm_backlog, NULL);
        size_t left = zlistx_size (self->services.alarm_backlog);
        engine_alarm_again (self, log_id);
        if (zlistx_size (self->services.alarm_backlog) > left)
            break;
    }
    int64_t ids [1000];
    size_t count = 0;
    xxl_store_log_failed_ids (self->store, ids, 1000, &count);
    for (size_t i = 0; i < count; i++)
        if (xxl_store_log_alarm_claim (self->store, ids [i]) == 1)
            s_handle_failure (self, ids [i]);
}

//  Fails run log_id as lost, if it still has no result; 1 when failed
static int
s_lost_fail (server_t *self, int64_t log_id, int64_t now, const char *reason)
{
    if (xxl_store_log_handle_done (self->store, log_id, now, XXL_CODE_FAIL, reason))
        return 0;
    engine_run_ended (self, log_id, XXL_END_RESULT, XXL_CODE_FAIL, now);
    return 1;
}

//  One lost candidate: failed, unless this scheduler hears its agent (its
//  registry judges by the monotonic clock; the store's rows by the wall
//  clock, which may have stepped) or the agent's run lease has not passed
//  since it was last heard (until then it may still run it: xxl_heard.h).
//  Returns 1 when failed.
static int
s_lost_one (server_t *self, int64_t log_id, int64_t now, int64_t mono)
{
    xxl_log_t log;
    if (xxl_store_log_load (self->store, log_id, &log))
        return 0;
    bool held = *log.executor_address
             && (xxl_registry_listed (self->registry, log.executor_address)
             ||  mono < xxl_heard_until (self->heard, log.executor_address));
    if (held)
        engine_info_limited (&self->services.log_lease_wait, "monitor: log %" PRId64 " of %s: no"
                             " result, but its agent may still run it: it is declared lost"
                             " once its run lease (%" PRId64 " s) has passed since the"
                             " agent was last heard", log_id, log.executor_address,
                             xxl_heard_lease (self->heard, log.executor_address) / 1000);
    xxl_log_free (&log);
    if (held)
        return 0;
    char *reason = zsys_sprintf ("lost: no result after %d s and the agent is no"
                                 " longer registered (lost-run monitor)",
                                 self->config.lost_after_ms / 1000);
    int failed = s_lost_fail (self, log_id, now, reason);
    zstr_free (&reason);
    return failed;
}

//  The open runs of an address whose connection closed, once its lost_at
//  passed (lost_after since the close, and its run lease since it was
//  last heard: xxl_heard.h): failed, unless it registered again here or
//  another scheduler of the store heard it within its lease (that one's
//  answers keep the agent's lease, and its runs, alive).  Its close is
//  then forgotten.  Returns how many runs failed.
static size_t
s_lost_closed (server_t *self, const char *address, int64_t now)
{
    int64_t lease = xxl_heard_lease (self->heard, address);
    char *apps = xxl_store_registry_apps (self->store, address, engine_store_now (self)
                                          - lease - XXL_HEARD_MARGIN_MS);
    bool elsewhere = apps && *apps;
    free (apps);
    size_t rid_size;
    if (elsewhere || xxl_registry_route (self->registry, address, &rid_size)) {
        xxl_heard_lost_done (self->heard, address);
        return 0;
    }
    //  (its runs accepted whose trigger code waits are written first: the
    //  read below takes only rows whose acceptance is in the store, and
    //  the close is then forgotten)
    engine_accepted_flush (self, INT64_MAX);
    char *reason = zsys_sprintf ("lost: the agent's connection closed over %d s ago, and its"
                                 " run lease (%" PRId64 " s) has passed since it was last"
                                 " heard (lost-run monitor)",
                                 self->config.lost_after_ms / 1000, lease / 1000);
    int64_t ids [1000], after = 0;
    size_t count = 0, failed = 0;
    do {
        if (xxl_store_log_open_ids_at (self->store, address, after, ids, 1000, &count)) {
            zstr_free (&reason);
            return failed;              //  (the store failed: at the next run)
        }
        for (size_t i = 0; i < count; i++) {
            after = ids [i];
            failed += (size_t) s_lost_fail (self, ids [i], now, reason);
        }
    } while (count == 1000);
    zstr_free (&reason);
    xxl_heard_lost_done (self->heard, address);
    return failed;
}

//  Runs whose trigger succeeded, without a result for `lost_after` while
//  their agent is no longer registered: failed, with the reason.  Up to
//  XXL_LOST_READ candidates a tick, by id from where the last tick
//  stopped (back to the first once the last is read), so that runs left
//  for their agents' leases hide none of the others.  First the open runs
//  of addresses whose connection closed and whose lost_at passed.
#define XXL_LOST_READ 10000
void
engine_lost_monitor (server_t *self)
{
    int64_t ids [1000];
    size_t count = 0, failed = 0, read = 0;
    int64_t before = engine_now () - self->config.lost_after_ms;
    int64_t now = engine_now (), mono = zclock_mono ();
    size_t due = xxl_heard_lost_due (self->heard, mono, NULL, 0);
    if (due) {
        //  (the map's strings: serving an address keeps its entry)
        const char **addresses = (const char **) malloc (due * sizeof (char *));
        assert (addresses);
        due = xxl_heard_lost_due (self->heard, mono, addresses, due);
        for (size_t i = 0; i < due; i++)
            failed += s_lost_closed (self, addresses [i], now);
        free (addresses);
    }
    do {
        if (xxl_store_log_lost_ids_after (self->store, before, self->services.lost_cursor, ids, 1000,
                                          &count))
            break;
        read += count;
        for (size_t i = 0; i < count; i++) {
            self->services.lost_cursor = ids [i];
            failed += s_lost_one (self, ids [i], now, mono);
        }
        if (count < 1000)
            self->services.lost_cursor = 0;      //  (all read: from the first next time)
    } while (count == 1000 && read < XXL_LOST_READ);
    if (failed)
        zsys_warning ("monitor: %zu lost run(s) marked failed", failed);
}

//  Daily rows for the last three days (XXL-JOB's JobLogReportHelper):
//  counted by the reporter's thread (the rows are written when its
//  answer is taken, engine_report_turn), or here for an in-memory store
void
engine_report_refresh (server_t *self)
{
    int64_t now = engine_now ();
    if (self->services.reporter) {
        xxl_reporter_ask (self->services.reporter, now);
        return;
    }
    for (int back = 0; back < XXL_REPORT_DAYS; back++) {
        int64_t day = xxl_report_day_start (now - (int64_t) back * 86400000);
        int64_t next = xxl_report_day_start (day + 36 * 3600000LL);
        xxl_store_report_refresh (self->store, day, next, now);
    }
}

//  A REPORT waiting for the reporter's count
typedef struct {
    zframe_t *rid;                      //  the client's return address
    uint64_t id;                        //  its request's id
    uint64_t turn;                      //  the turn it came in
    uint64_t generation;                //  the ask that covers it (0: not asked yet)
    xxl_report_range_t range;           //  its days
} report_waiter_t;

static void
s_waiter_destroy (void **item_p)
{
    report_waiter_t *waiter = (report_waiter_t *) *item_p;
    if (waiter) {
        zframe_destroy (&waiter->rid);
        free (waiter);
        *item_p = NULL;
    }
}

//  REPORT's content: the totals and the day rows of range (no range: the
//  newest XXL_REPORT_ROWS)
void
engine_report_encode (server_t *self, const xxl_report_range_t *range)
{
    xxl_enc_map_begin (self->enc);
    xxl_store_totals_t totals;
    xxl_store_report_totals (self->store, &totals);
    xxl_enc_kint (self->enc, "jobCount", totals.jobs);
    xxl_enc_kint (self->enc, "jobRunningCount", totals.jobs_running);
    xxl_enc_kint (self->enc, "agentCount", (int64_t) xxl_registry_size (self->registry));
    xxl_enc_kint (self->enc, "groupCount", totals.groups);
    int64_t runs = totals.runs, suc = totals.suc, fail = totals.fail;
    xxl_enc_kint (self->enc, "runCount", runs);
    xxl_enc_kint (self->enc, "sucCount", suc);
    xxl_enc_kint (self->enc, "failCount", fail);
    xxl_enc_key (self->enc, "successRate");
    xxl_enc_double (self->enc, suc + fail > 0? (double) suc / (double) (suc + fail): 1.0);
    xxl_enc_key (self->enc, "days");
    if (range->from == XXL_REPORT_NO_RANGE)
        xxl_store_report_encode_days (self->store, self->enc, XXL_REPORT_ROWS);
    else
        xxl_store_report_encode_range (self->store, self->enc, range->from, range->to,
                                       XXL_REPORT_RANGE_DAYS);
    xxl_enc_map_end (self->enc);
}

//  REPORTs that may wait for a count at once; past them, 429
#define XXL_REPORT_WAITERS 1024

//  A REPORT waits for a count that sees every write committed before it:
//  asked at a later turn's start (after this turn's commit), answered
//  when its count is taken.  false: no reporter (answer at once)
bool
engine_report_wait (server_t *self, request_t *request, const xxl_report_range_t *range)
{
    if (!self->services.reporter)
        return false;
    if (!self->services.report_waiting) {
        self->services.report_waiting = zlistx_new ();
        zlistx_set_destructor (self->services.report_waiting, s_waiter_destroy);
    }
    if (zlistx_size (self->services.report_waiting) >= XXL_REPORT_WAITERS) {
        char text [160];
        snprintf (text, sizeof text, "%d REPORTs already wait for the report's count:"
                  " ask again later", XXL_REPORT_WAITERS);
        engine_reply (self, request, XXL_BUSY, text);
        return true;
    }
    report_waiter_t *waiter = (report_waiter_t *) zmalloc (sizeof (report_waiter_t));
    waiter->rid = zframe_dup (request->rid);
    waiter->id = xxl_msg_id (request->msg);
    waiter->turn = self->turn;
    waiter->range = *range;
    zlistx_add_end (self->services.report_waiting, waiter);
    request->code = XXL_OK;             //  (answered later; a read: no audit)
    return true;
}

//  Each turn: the reporter's answer, if one is ready, is written and
//  answers the REPORTs it covers; REPORTs of earlier turns are asked for
void
engine_report_turn (server_t *self)
{
    if (!self->services.reporter)
        return;
    xxl_report_t answer;
    if (xxl_reporter_take (self->services.reporter, &answer)) {
        if (!answer.failed)
            for (int i = 0; i < XXL_REPORT_DAYS; i++)
                xxl_store_report_set (self->store, answer.days [i].day, answer.days [i].running,
                                      answer.days [i].suc, answer.days [i].fail, answer.now);
        report_waiter_t *waiter = self->services.report_waiting
                                ? (report_waiter_t *) zlistx_first (self->services.report_waiting): NULL;
        xxl_enc_t *content = NULL;      //  (encoded once for the waiters it answers
        size_t content_size = 0;        //  that ask for one range in a row)
        const void *content_data = NULL;
        xxl_report_range_t content_range = { -1, -1 };
        while (waiter) {
            if (waiter->generation && waiter->generation <= answer.generation) {
                //  (the rows as this turn writes them: a read, sent
                //  whatever the commit)
                if (content && (content_range.from != waiter->range.from
                                || content_range.to != waiter->range.to))
                    xxl_enc_destroy (&content);
                if (!content) {
                    content = xxl_enc_new ();
                    content_range = waiter->range;
                    xxl_enc_t *enc = self->enc;
                    self->enc = content;
                    engine_report_encode (self, &content_range);
                    self->enc = enc;
                    content_data = xxl_enc_finish (content, &content_size);
                }
                xxl_enc_reply (self->enc, waiter->id, XXL_OK, NULL);
                xxl_enc_key (self->enc, "content");
                xxl_enc_raw (self->enc, content_data, content_size, 0);
                engine_queue_client_read (self, zframe_data (waiter->rid),
                              zframe_size (waiter->rid));
                zlistx_delete (self->services.report_waiting, NULL);
                waiter = (report_waiter_t *) zlistx_first (self->services.report_waiting);
                continue;
            }
            waiter = (report_waiter_t *) zlistx_next (self->services.report_waiting);
        }
        xxl_enc_destroy (&content);
    }
    uint64_t generation = 0;
    for (report_waiter_t *waiter = self->services.report_waiting
                                 ? (report_waiter_t *) zlistx_first (self->services.report_waiting): NULL;
         waiter; waiter = (report_waiter_t *) zlistx_next (self->services.report_waiting))
        if (!waiter->generation && waiter->turn < self->turn) {
            if (!generation)
                generation = xxl_reporter_ask (self->services.reporter, engine_now ());
            waiter->generation = generation;
        }
}

//  The last turn of a stop: each REPORT still waiting for its count gets
//  503 (the client asks again, of this scheduler once back or another)
void
engine_report_stop (server_t *self)
{
    report_waiter_t *waiter;
    while (self->services.report_waiting
       && (waiter = (report_waiter_t *) zlistx_first (self->services.report_waiting))) {
        xxl_enc_reply (self->enc, waiter->id, XXL_UNAVAILABLE,
                       "the scheduler stopped before the report's count: ask again");
        engine_queue_client (self, zframe_data (waiter->rid), zframe_size (waiter->rid));
        zlistx_delete (self->services.report_waiting, NULL);
    }
}

//  Deletes up to `limit` finished log rows of job_id (0 any) triggered
//  before `before` with an id below `below` (never rows still waiting for
//  their trigger or their result); how many went (0 on a store error)
int64_t
engine_log_delete (server_t *self, int64_t job_id, int64_t before, int64_t below, int64_t limit)
{
    int64_t changes = xxl_store_log_delete (self->store, job_id, before, below, limit);
    return changes > 0? changes: 0;
}

//  Retention: log rows older than retention_days, and beyond keep_last,
//  and audit rows older than audit_retention_days, go in batches so that a
//  big table never stalls the loop
void
engine_retention (server_t *self)
{
    int64_t gone = 0;
    if (self->config.retention_days > 0) {
        int64_t before = engine_now () - (int64_t) self->config.retention_days * 86400000;
        gone += engine_log_delete (self, 0, before, INT64_MAX, 5000);
    }
    if (self->config.keep_last > 0) {
        int64_t floor = xxl_store_log_id_at_rank (self->store, 0,
                                                  (int64_t) self->config.keep_last - 1);
        if (floor > 0)
            gone += engine_log_delete (self, 0, INT64_MAX, floor, 5000);
    }
    if (gone)
        zsys_info ("retention: %" PRId64 " log row(s) removed", gone);
    int64_t audit = engine_audit_retention (self);
    if (audit)
        zsys_info ("retention: %" PRId64 " audit row(s) removed", audit);
    if (gone || audit)
        self->services.service_next [XXL_SERVICE_RETENTION] = zclock_mono () + 1000;  //  more may be due
}

//  --------------------------------------------------------------------
//  The periodic services, declared with their periods (Redis's serverCron
//  and run_with_period): each runs in a turn of the running scheduler
//  once its period has passed since its last run (a run may set its own
//  next time sooner: service_next [its index]); the first run comes one
//  period after start, or `first` ms after when that is sooner.  The loop
//  wakes for the soonest.

typedef struct {
    const char *name;
    void (*run) (server_t *self);
    size_t period;                      //  offsetof the period (ms) in the config
    int first;                          //  at most this long after start (0: no bound)
} service_t;

static const service_t s_services [XXL_SERVICES] = {
    [XXL_SERVICE_FAIL] = { "fail monitor", engine_fail_monitor,
                           offsetof (xxl_server_config_t, fail_check_ms), 0 },
    [XXL_SERVICE_LOST] = { "lost-run monitor", engine_lost_monitor,
                           offsetof (xxl_server_config_t, lost_check_ms), 0 },
    [XXL_SERVICE_REPORT] = { "daily report", engine_report_refresh,
                             offsetof (xxl_server_config_t, report_ms), 1000 },
    [XXL_SERVICE_RETENTION] = { "retention", engine_retention,
                                offsetof (xxl_server_config_t, retention_check_ms), 60000 },
    [XXL_SERVICE_KEYS] = { "keys folder", engine_keys_refresh,
                           offsetof (xxl_server_config_t, keys_check_ms), 0 },
};

static int
s_period (server_t *self, const service_t *service)
{
    return *(const int *) ((const char *) &self->config + service->period);
}

void
engine_services_start (server_t *self, int64_t now)
{
    for (size_t i = 0; i < XXL_SERVICES; i++) {
        const service_t *service = &s_services [i];
        assert (service->run && service->name);
        int period = s_period (self, service);
        int first = service->first && service->first < period? service->first: period;
        self->services.service_next [i] = now + first;
    }
}

void
engine_services_run (server_t *self, int64_t now)
{
    //  (the lost-run monitor is due too when an agent whose connection
    //  closed reaches its lost_at: xxl_heard.h)
    if (now >= xxl_heard_soonest (self->heard))
        self->services.service_next [XXL_SERVICE_LOST] = now;
    for (size_t i = 0; i < XXL_SERVICES; i++)
        if (now >= self->services.service_next [i]) {
            self->services.service_next [i] = now + s_period (self, &s_services [i]);
            s_services [i].run (self);
            if (i == XXL_SERVICE_LOST)
                xxl_heard_pass (self->heard, now);
        }
}

int64_t
engine_services_wake (server_t *self)
{
    int64_t wake = xxl_heard_soonest (self->heard);
    for (size_t i = 0; i < XXL_SERVICES; i++)
        if (self->services.service_next [i] < wake)
            wake = self->services.service_next [i];
    return wake;
}

//  At start: alarms claimed but not finished when the last run stopped
void
engine_recover_alarms (server_t *self)
{
    int64_t ids [4096];
    size_t count = 0;
    int64_t after = 0;
    size_t claimed = 0;
    do {
        xxl_store_log_claimed_ids (self->store, after, ids, 4096, &count);
        for (size_t i = 0; i < count; i++) {
            after = ids [i];
            engine_alarm_again (self, ids [i]);
            claimed++;
        }
    } while (count == 4096);
    if (claimed)
        zsys_info ("alarms: %zu unfinished alarm(s) sent again", claimed);
}

//  The services' state, freed at the actor's stop
void
engine_services_stop (server_t *self)
{
    xxl_alarms_destroy (&self->alarms);
    zlistx_destroy (&self->services.alarm_backlog);
    xxl_reporter_destroy (&self->services.reporter);
    zlistx_destroy (&self->services.report_waiting);
}

