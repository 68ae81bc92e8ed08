/*  xxl_api_log.c -- the client api's runs (log rows): LOG_LIST, LOG_SHOW,
    LOG_CAT and LOG_KILL (forwarded to the agent that ran the run),
    LOG_CLEAR.
*/

#include "xxl_api.h"

//  LOG_LIST (xxl_store_log_filter_t says what a page holds)
void
api_log_list (server_t *self, request_t *request)
{
    int64_t job_id = api_int (request, "jobId");
    int64_t group_id = api_int (request, "jobGroup");
    int64_t status = api_int (request, "logStatus");
    int64_t from = api_int (request, "triggerTimeFrom");
    int64_t to = api_int (request, "triggerTimeTo");
    int64_t max_id = api_int (request, "maxId");
    int64_t limit = api_int (request, "limit");
    int64_t offset = api_int (request, "offset");
    //  (a key whose reads are scoped lists its apps' runs only, of all its
    //  apps when it names no job or group; with the other filters)
    int64_t *groups;
    size_t group_count;
    engine_read_groups (self, request->who, &groups, &group_count);
    engine_reply_begin (self, request);
    xxl_enc_map_begin (self->enc);
    xxl_enc_key (self->enc, "logs");
    int truncated;
    xxl_store_log_filter_t filter = {
        .job_id = job_id, .group_id = group_id, .status = status, .from = from, .to = to,
        .max_id = max_id, .now = engine_now (), .limit = limit, .offset = offset,
        .groups = groups, .group_count = group_count
    };
    int rows = xxl_store_log_encode_page (self->store, self->enc, XXL_REPLY_MAX, &truncated,
                                          &filter);
    free (groups);
    api_encode_truncated (self, truncated, offset + (rows > 0? rows: 0));
    xxl_enc_map_end (self->enc);
    engine_reply_end (self, request);
}

void
api_log_show (server_t *self, request_t *request)
{
    api_show_row (self, request, "logId", xxl_store_log_encode, "log");
}

//  LOG_CAT and LOG_KILL: forwarded to the agent that ran the log; a
//  LOG_CAT with fromByte asks for the page by byte offset (its fromLineNum
//  then unused)
static void
s_log_forward (server_t *self, request_t *request, int kill)
{
    int64_t id = api_int (request, "logId");
    int64_t from = api_int (request, "fromLineNum");
    int64_t from_byte = kill? -1: api_int (request, "fromByte");
    xxl_log_t log;
    int rc = xxl_store_log_load (self->store, id, &log);
    if (rc) {
        char text [64];
        snprintf (text, sizeof text, "log %" PRId64 " not found", id);
        engine_reply (self, request, rc < 0? XXL_FAILURE: XXL_NOT_FOUND, text);
        return;
    }
    char why [512];
    if (kill && log.trigger_code == 0 && log.handle_code == 0 && log.schedule_time > engine_now ()) {
        //  A planned fire not due yet (prepared ones have their address
        //  already): nothing of it runs anywhere, and a KILL would stop
        //  the job's other runs on that agent
        char when [64];
        snprintf (why, sizeof why, "this run is not running: it is planned for %s and not"
                  " sent yet (stopping the job or changing its schedule cancels it)",
                  engine_iso_time (log.schedule_time, NULL, when, sizeof when));
        engine_reply (self, request, XXL_CONFLICT, why);
        xxl_log_free (&log);
        return;
    }
    if (kill && log.trigger_code == 0 && log.handle_code == 0 && !*log.executor_address) {
        //  Due and never sent: it waits in the scheduler (for a maxRunning
        //  slot, or for an agent of its group while agents reconnect).  It
        //  ends here, as a failed trigger (alarms and retries as for any),
        //  only while still unrouted: a row routed meanwhile (a scheduler
        //  sharing the store) is that route's, and is killed as running
        int ended = xxl_store_log_trigger_done (self->store, id, XXL_CODE_FAIL, NULL,
                        "\n>>>>>>>>>>> Trigger <<<<<<<<<<<\ntrigger failed: killed by a user"
                        " (log kill) before it was sent to an agent\n");
        if (ended == 1) {
            engine_run_ended_job (self, id, log.job_id, XXL_END_TRIGGER, XXL_CODE_FAIL,
                                  engine_now ());
            engine_reply (self, request, XXL_OK, "killed before it was sent to an agent");
        }
        else
            engine_reply (self, request, ended < 0? XXL_FAILURE: XXL_CONFLICT, ended < 0
                          ? "the store failed: the run is as it was"
                          : "this run was sent meanwhile: kill it again");
        xxl_log_free (&log);
        return;
    }
    if (!*log.executor_address && kill) {
        engine_reply (self, request, XXL_CONFLICT,
                      "this run is not running: its trigger failed (see its triggerMsg)");
        xxl_log_free (&log);
        return;
    }
    if (!*log.executor_address) {
        engine_reply (self, request, XXL_NOT_FOUND,
                      "this run was never sent to an agent, which keeps the log (see its"
                      " triggerMsg)");
        xxl_log_free (&log);
        return;
    }
    //  trigger_code 0 with an address: the RUN went (or goes in this turn,
    //  ahead of the KILL on the same connection), its answer not written yet
    if (kill && (log.handle_code != 0 || (log.trigger_code != XXL_OK && log.trigger_code != 0))) {
        engine_reply (self, request, XXL_CONFLICT, log.handle_code != 0
                      ? "this run is not running"
                      : "this run is not running: its trigger failed (see its triggerMsg)");
        xxl_log_free (&log);
        return;
    }
    pending_t *pending = engine_agent_request (self, log.executor_address, kill? "KILL": "LOG",
                                               kill? PENDING_KILL: PENDING_LOG,
                                               self->config.request_timeout_ms, why, sizeof why);
    if (!pending) {
        engine_reply (self, request, XXL_UNAVAILABLE, why);
        xxl_log_free (&log);
        return;
    }
    pending->log_id = id;
    pending->from_byte = from_byte;
    pending->client = zframe_dup (request->rid);
    pending->client_id = xxl_msg_id (request->msg);
    engine_audit_forwarded (request, pending);
    if (kill) {
        engine_doubt_kill_sent (self, id, pending->id);
        xxl_enc_kint (self->enc, "jobId", log.job_id);
        xxl_enc_kstr (self->enc, "reason", XXL_KILL_BY_USER);
    }
    else {
        xxl_enc_kint (self->enc, "logId", id);
        //  (an accepted run whose trigger time is not written yet: the
        //  row holds the time it was planned, the RUN carried this one)
        int64_t stamp = engine_accepted_stamp (self, id);
        xxl_enc_kint (self->enc, "logDateTime", stamp > 0? stamp: log.trigger_time);
        if (from_byte >= 0)
            xxl_enc_kint (self->enc, "fromByte", from_byte);
        else
            xxl_enc_kint (self->enc, "fromLineNum", from);
    }
    engine_agent_send (self, pending);
    xxl_log_free (&log);
}

void api_log_cat (server_t *self, request_t *r) { s_log_forward (self, r, 0); }
void api_log_kill (server_t *self, request_t *r) { s_log_forward (self, r, 1); }

//  XXL-JOB's manual clear: by age, keep the last N, or all; finished rows
//  only (a row waiting for its trigger or result is never removed)
//  A LOG_CLEAR (and a JOB_RM, its job's rows) deletes XXL_CLEAR_BATCH
//  rows per turn, so that a clear of a million rows never holds the loop
//  (a turn near a fire deletes none); the reply, with the count, goes
//  once it is done

//  A group's clear goes job by job (each job's rows are one index range),
//  at most this many jobs' deletes in one turn
#define XXL_CLEAR_GROUP_CALLS 64
//  The group's job ids read at once
#define XXL_CLEAR_GROUP_IDS 1024

typedef struct {
    zframe_t *rid;                      //  the client's return address
    uint64_t id;                        //  its request's id
    int64_t job_id;                     //  0: every job (or the group's current job)
    int64_t group_id;                   //  > 0: the jobs of this group, one by one
    int64_t *jobs;                      //  the group's next job ids (XXL_CLEAR_GROUP_IDS)
    size_t jobs_count, jobs_at;         //  how many read, the one being cleared
    bool done;                          //  the last batch was the last
    int64_t before;                     //  beforeDays: rows triggered before this
    int64_t keep;                       //  keepLast (-1: not that form)
    bool removed;                       //  a removed job's rows (JOB_RM): all of them
    zlistx_t *flows_changed;            //  JOB_RM with force: the workflows it changed
    zlistx_t *flows_removed;            //  and removed (NULL without force)
    int64_t deleted;
    uint64_t turn;                      //  the turn its request came in
    uint64_t batch_turn;                //  the turn of its last batch
    int64_t batch;                      //  that batch's rows
    pending_t audit;                    //  its audit, recorded with the reply
} clear_task_t;

static void
s_clear_destroy (void **item_p)
{
    clear_task_t *task = (clear_task_t *) *item_p;
    if (task) {
        zframe_destroy (&task->rid);
        free (task->jobs);
        zlistx_destroy (&task->flows_changed);
        zlistx_destroy (&task->flows_removed);
        free (task->audit.audit_who);
        free (task->audit.audit_role);
        free (task);
        *item_p = NULL;
    }
}

//  Up to limit rows of task's job (of every job when 0): the rows deleted,
//  -1 when the store failed
static int64_t
s_clear_rows (server_t *self, clear_task_t *task, int64_t limit)
{
    if (task->removed)
        return xxl_store_job_rm_logs_some (self->store, task->job_id, limit);
    if (task->keep >= 0) {
        int64_t floor = task->keep == 0
                      ? INT64_MAX: xxl_store_log_id_at_rank (self->store, task->job_id,
                                                             task->keep - 1);
        return floor > 0? xxl_store_log_delete (self->store, task->job_id, INT64_MAX, floor,
                                                limit): 0;
    }
    return xxl_store_log_delete (self->store, task->job_id, task->before, INT64_MAX, limit);
}

//  A group's task: its next job into task->job_id, reading the group's
//  next ids when those read are used up; false when no job is left (or
//  the store failed: *failed)
static bool
s_clear_next_job (server_t *self, clear_task_t *task, bool *failed)
{
    if (task->jobs_at + 1 < task->jobs_count) {
        task->job_id = task->jobs [++task->jobs_at];
        return true;
    }
    if (task->jobs_count > 0 && task->jobs_count < XXL_CLEAR_GROUP_IDS)
        return false;                   //  (the last ids were read)
    if (!task->jobs)
        task->jobs = (int64_t *) zmalloc (XXL_CLEAR_GROUP_IDS * sizeof (int64_t));
    int64_t after = task->jobs_count? task->jobs [task->jobs_count - 1]: 0;
    if (xxl_store_group_job_ids (self->store, task->group_id, after, task->jobs,
                                 XXL_CLEAR_GROUP_IDS, &task->jobs_count)) {
        *failed = true;
        return false;
    }
    task->jobs_at = 0;
    if (task->jobs_count == 0)
        return false;
    task->job_id = task->jobs [0];
    return true;
}

//  One batch of task, up to XXL_CLEAR_BATCH rows (a group's: of as many of
//  its jobs as that takes, at most XXL_CLEAR_GROUP_CALLS of them): the rows
//  it deleted, task->done set when none are left; -1 when the store failed
static int64_t
s_clear_batch (server_t *self, clear_task_t *task)
{
    if (task->group_id <= 0) {
        int64_t rows = s_clear_rows (self, task, XXL_CLEAR_BATCH);
        task->done = rows >= 0 && rows < XXL_CLEAR_BATCH;
        return rows;
    }
    int64_t total = 0;
    bool failed = false;
    if (task->job_id == 0 && !s_clear_next_job (self, task, &failed)) {
        task->done = !failed;
        return failed? -1: 0;
    }
    for (int calls = 0; calls < XXL_CLEAR_GROUP_CALLS && total < XXL_CLEAR_BATCH; calls++) {
        int64_t limit = XXL_CLEAR_BATCH - total;
        int64_t rows = s_clear_rows (self, task, limit);
        if (rows < 0)
            return -1;
        total += rows;
        if (rows == limit)
            continue;                   //  (this job may have more)
        if (!s_clear_next_job (self, task, &failed)) {
            task->done = !failed;
            return failed? -1: total;
        }
    }
    return total;
}

//  Ends task with an error reply (code), saying what it deleted, and its
//  audit; the task stays for the caller to delete
static void
s_clear_fail (server_t *self, clear_task_t *task, int code, const char *why)
{
    char text [800];
    if (task->removed)
        snprintf (text, sizeof text, "%s while deleting the rows of removed job %" PRId64
                  ": %" PRId64 " deleted, the rest remain (LOG_CLEAR of jobId %" PRId64
                  " deletes them)", why, task->job_id, task->deleted, task->job_id);
    else
        snprintf (text, sizeof text, "%s while clearing: %" PRId64 " row(s) deleted, the"
                  " rest remain: send it again", why, task->deleted);
    xxl_enc_reply (self->enc, task->id, code, text);
    engine_queue_client (self, zframe_data (task->rid), zframe_size (task->rid));
    engine_audit_answer (self, &task->audit, code);
}

static void
s_clear_reply (server_t *self, clear_task_t *task)
{
    xxl_enc_reply (self->enc, task->id, XXL_OK, NULL);
    xxl_enc_key (self->enc, "content");
    xxl_enc_map_begin (self->enc);
    if (task->removed) {
        xxl_enc_kint (self->enc, "id", task->job_id);
        xxl_enc_kint (self->enc, "deletedLogs", task->deleted);
        if (task->flows_changed) {
            api_encode_ids (self, "workflowsChanged", task->flows_changed);
            api_encode_ids (self, "workflowsRemoved", task->flows_removed);
        }
    }
    else
        xxl_enc_kint (self->enc, "deleted", task->deleted);
    xxl_enc_map_end (self->enc);
    engine_queue_client (self, zframe_data (task->rid), zframe_size (task->rid));
    engine_audit_answer (self, &task->audit, XXL_OK);
}

//  The rest of task in later turns; the audit records it with the reply
static void
s_clear_later (server_t *self, request_t *request, clear_task_t *task)
{
    engine_audit_forwarded (request, &task->audit);
    task->audit.log_id = task->job_id;
    task->turn = task->batch_turn = self->turn;
    task->batch = task->deleted;
    request->code = XXL_OK;
    if (!self->api_state.clears) {
        self->api_state.clears = zlistx_new ();
        zlistx_set_destructor (self->api_state.clears, s_clear_destroy);
    }
    zlistx_add_end (self->api_state.clears, task);
}

void
api_log_clear (server_t *self, request_t *request)
{
    int64_t job_id = api_int (request, "jobId");
    int64_t group_id = api_int (request, "jobGroup");
    int64_t days = api_int (request, "beforeDays");
    int64_t keep = api_int (request, "keepLast");
    bool all = api_bool (request, "all");
    if ((days >= 0) + (keep >= 0) + (all? 1: 0) != 1) {
        engine_reply (self, request, XXL_BAD_REQUEST,
                      "give exactly one of beforeDays, keepLast, all");
        return;
    }
    //  A job and a group: the job's rows when it is of that group, else
    //  none (a filter that names nothing matches nothing)
    bool none = false;
    if (job_id > 0 && group_id > 0) {
        xxl_job_t job;
        int rc = xxl_store_job_load (self->store, job_id, &job);
        if (rc < 0) {
            engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
            return;
        }
        none = rc > 0 || job.job_group != group_id;
        if (rc == 0)
            xxl_job_free (&job);
        group_id = 0;
    }
    clear_task_t *task = (clear_task_t *) zmalloc (sizeof (clear_task_t));
    task->rid = zframe_dup (request->rid);
    task->id = xxl_msg_id (request->msg);
    task->job_id = job_id > 0? job_id: 0;
    task->group_id = group_id > 0? group_id: 0;
    task->before = days >= 0? engine_now () - days * 86400000: INT64_MAX;
    task->keep = keep;
    if (none)
        task->done = true;
    else
        task->deleted = s_clear_batch (self, task);
    if (task->deleted < 0) {
        engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
        void *item = task;
        s_clear_destroy (&item);
        return;
    }
    if (task->done) {
        //  (done at once: answered as any request)
        engine_reply_begin (self, request);
        xxl_enc_map_begin (self->enc);
        xxl_enc_kint (self->enc, "deleted", task->deleted);
        xxl_enc_map_end (self->enc);
        engine_reply_end (self, request);
        void *item = task;
        s_clear_destroy (&item);
        return;
    }
    s_clear_later (self, request, task);
}

void
api_job_rm_logs_later (server_t *self, request_t *request, int64_t job_id, int64_t deleted,
                       zlistx_t **changed, zlistx_t **removed)
{
    clear_task_t *task = (clear_task_t *) zmalloc (sizeof (clear_task_t));
    if (changed && removed) {
        task->flows_changed = *changed;
        task->flows_removed = *removed;
        *changed = *removed = NULL;
    }
    task->rid = zframe_dup (request->rid);
    task->id = xxl_msg_id (request->msg);
    task->job_id = job_id;
    task->keep = -1;
    task->removed = true;
    task->deleted = deleted;
    s_clear_later (self, request, task);
}

//  The last turn of a stop: each LOG_CLEAR or JOB_RM still deleting gets
//  503 with what it deleted (committed in this turn or before); the rest
//  of its rows stay, for the same request again (a removed job's: LOG_CLEAR
//  of its jobId, or retention)
void
engine_log_clear_stop (server_t *self)
{
    clear_task_t *task;
    while (self->api_state.clears && (task = (clear_task_t *) zlistx_first (self->api_state.clears))) {
        s_clear_fail (self, task, XXL_UNAVAILABLE, "the scheduler stopped");
        zlistx_delete (self->api_state.clears, NULL);
    }
}

//  After a turn's commit failed (its changes rolled back): a LOG_CLEAR or
//  JOB_RM that came in that turn fails (500; a JOB_RM's job is not
//  removed); another's batch of that turn is taken off its count, and its
//  rows are deleted again in the next turns
void
engine_log_clear_rollback (server_t *self, const char *why)
{
    if (!self->api_state.clears)
        return;
    clear_task_t *task = (clear_task_t *) zlistx_first (self->api_state.clears);
    while (task) {
        if (task->turn == self->turn) {
            xxl_enc_reply (self->enc, task->id, XXL_FAILURE, why);
            engine_queue_client (self, zframe_data (task->rid), zframe_size (task->rid));
            engine_audit_answer (self, &task->audit, XXL_FAILURE);
            zlistx_delete (self->api_state.clears, zlistx_cursor (self->api_state.clears));
            task = (clear_task_t *) zlistx_first (self->api_state.clears);
            continue;
        }
        if (task->batch_turn == self->turn) {
            task->deleted -= task->batch;
            task->batch = 0;
            if (task->group_id > 0) {
                //  (its batch may have spanned jobs it has passed: it starts
                //  the group's jobs again, deleting what is left of each)
                task->jobs_count = task->jobs_at = 0;
                task->job_id = 0;
            }
        }
        task = (clear_task_t *) zlistx_next (self->api_state.clears);
    }
}

//  Each turn not near a fire: a batch of the oldest LOG_CLEAR waiting
void
engine_log_clear_turn (server_t *self)
{
    clear_task_t *task = self->api_state.clears? (clear_task_t *) zlistx_first (self->api_state.clears): NULL;
    if (!task || engine_fire_near (self))
        return;
    int64_t batch = s_clear_batch (self, task);
    if (batch < 0) {
        char why [600];
        snprintf (why, sizeof why, "store error (%s)", xxl_store_error (self->store));
        s_clear_fail (self, task, XXL_FAILURE, why);
        zlistx_delete (self->api_state.clears, NULL);
        return;
    }
    task->deleted += batch;
    task->batch = batch;
    task->batch_turn = self->turn;
    if (task->done) {
        s_clear_reply (self, task);
        zlistx_delete (self->api_state.clears, NULL);
    }
}
