/*  xxl_api_job.c -- the client api's jobs: JOB_ADD, JOB_UPDATE, JOB_RM,
    JOB_START, JOB_STOP, JOB_SHOW, JOB_LIST, JOB_NEXT, JOB_TRIGGER,
    JOB_COPY.  A job's fields are read and judged in xxl_job.c.
*/

#include "xxl_api.h"


//  Sets trigger_status/next time for start; returns 0 or -1 with why
static int
s_job_arm (server_t *self, xxl_job_t *job, char *why, size_t whylen)
{
    if (streq (job->schedule_type, "NONE")) {
        snprintf (why, whylen, "a job with schedule type NONE cannot be started; trigger it instead");
        return -1;
    }
    int64_t next = engine_job_next (self, job, engine_now (), why, whylen);
    if (next < 0)
        return -1;
    job->trigger_status = 1;
    job->trigger_last_time = 0;
    job->trigger_next_time = next;
    return 0;
}

void
api_job_add (server_t *self, request_t *request)
{
    xxl_job_t job = { 0 };
    engine_job_defaults (&job);
    xxl_group_t group;
    const char *key = api_str (request, "jobGroup");
    bool start = api_bool (request, "start");
    int rc = xxl_store_group_find (self->store, key, &group);
    if (rc) {
        char text [512];
        snprintf (text, sizeof text, "group '%s' not found", key);
        engine_reply (self, request, rc < 0? XXL_FAILURE: XXL_NOT_FOUND, text);
        xxl_job_free (&job);
        return;
    }
    job.job_group = group.id;
    xxl_group_free (&group);
    if (api_judge (self, request, 1)) {
        xxl_job_free (&job);
        return;
    }
    job.add_time = job.update_time = job.glue_updatetime = engine_now ();
    char why [512] = "";
    if (engine_job_read (self, request, &job, 1))
        engine_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
    else
    if (start && s_job_arm (self, &job, why, sizeof why))
        engine_reply (self, request, XXL_BAD_REQUEST, why);
    else {
        engine_job_changed (self, 0, XXL_CHANGED_CHILDREN);
        int64_t id = xxl_store_job_add (self->store, &job);
        if (id < 0)
            engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
        else {
            if (strneq (job.glue_type, "BEAN"))
                xxl_store_glue_add (self->store, id, job.glue_type, job.glue_source,
                                    job.glue_remark, job.add_time);
            if (start)
                engine_job_changed (self, id, XXL_CHANGED_SCHEDULE);
            engine_reply_id (self, request, id);
        }
    }
    xxl_job_free (&job);
}

void
api_job_update (server_t *self, request_t *request)
{
    xxl_job_t job;
    if (engine_job_from_request (self, request, &job))
        return;
    if (api_judge (self, request, 1)) {
        xxl_job_free (&job);
        return;
    }
    //  jobGroup moves it
    const char *key = api_str (request, "jobGroup");
    if (key) {
        xxl_group_t group;
        if (xxl_store_group_find (self->store, key, &group)) {
            char text [512];
            snprintf (text, sizeof text, "group '%s' not found", key);
            engine_reply (self, request, XXL_NOT_FOUND, text);
            xxl_job_free (&job);
            return;
        }
        job.job_group = group.id;
        xxl_group_free (&group);
    }
    if (api_judge (self, request, 2)) {
        xxl_job_free (&job);
        return;
    }
    char *old_source = strdup (job.glue_source);
    //  A running FIX_DELAY job whose run is in flight waits for it: the
    //  update does not arm it anew (its next run would start while this
    //  one runs, and every later one a run behind); the run's end starts
    //  the delay, the updated one
    bool was_waiting = job.trigger_status == 1 && job.trigger_next_time == XXL_WAITING
                    && streq (job.schedule_type, "FIX_DELAY");
    char why [512] = "";
    if (engine_job_read (self, request, &job, 0))
        engine_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
    else
    if (job.trigger_status == 1 && s_job_arm (self, &job, why, sizeof why))
        engine_reply (self, request, XXL_BAD_REQUEST, why);
    else {
        if (was_waiting && job.trigger_status == 1 && streq (job.schedule_type, "FIX_DELAY"))
            job.trigger_next_time = XXL_WAITING;
        job.update_time = engine_now ();
        engine_job_changed (self, job.id, XXL_CHANGED_PLANS | XXL_CHANGED_SCHEDULE
                            | XXL_CHANGED_CHILDREN);
        if (xxl_store_job_save (self->store, &job))
            engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
        else {
            if (strneq (job.glue_type, "BEAN") && strneq (old_source, job.glue_source))
                xxl_store_glue_add (self->store, job.id, job.glue_type, job.glue_source,
                                    job.glue_remark, job.update_time);
            engine_reply_id (self, request, job.id);
        }
    }
    free (old_source);
    xxl_job_free (&job);
}

//  A list of ids (int64_t *) as an array under key (xxl_api.h)
void
api_encode_ids (server_t *self, const char *key, zlistx_t *ids)
{
    xxl_enc_key (self->enc, key);
    xxl_enc_array_begin (self->enc);
    for (int64_t *id = (int64_t *) zlistx_first (ids); id; id = (int64_t *) zlistx_next (ids))
        xxl_enc_int (self->enc, *id);
    xxl_enc_array_end (self->enc);
}

void
api_job_rm (server_t *self, request_t *request)
{
    xxl_job_t job;
    if (engine_job_from_request (self, request, &job))
        return;
    //  A job that workflows run goes only with force, which takes its
    //  nodes out of them (said in the reply)
    char why [512];
    zlistx_t *changed = zlistx_new (), *removed = zlistx_new ();
    zlistx_set_destructor (changed, engine_free_item);
    zlistx_set_destructor (removed, engine_free_item);
    bool force = api_bool (request, "force");
    int code = api_flow_job_rm (self, job.id, force, why, sizeof why, changed, removed);
    if (code != XXL_OK) {
        engine_reply (self, request, code, why);
        zlistx_destroy (&changed);
        zlistx_destroy (&removed);
        xxl_job_free (&job);
        return;
    }
    //  Its log rows go too, as in XXL-JOB, and its id leaves every
    //  parent's child list, in this turn's transaction.  Runs on an agent
    //  finish there: their callbacks find no row, are acknowledged and
    //  change nothing; a RUN's answer or a re-send finds no row either
    engine_job_changed (self, job.id, XXL_CHANGED_PLANS | XXL_CHANGED_CHILDREN);
    //  (a first batch here; past it, a batch a turn, the reply once all
    //  are gone: a busy job's million rows never hold the loop)
    int64_t logs = xxl_store_job_rm_logs_some (self->store, job.id, XXL_CLEAR_BATCH);
    if (logs < 0 || xxl_store_job_unchild (self->store, job.id) < 0
    ||  xxl_store_job_rm (self->store, job.id))
        engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
    else
    if (logs == XXL_CLEAR_BATCH) {
        //  (the reply, with the workflows' lists, once the rows are gone)
        api_job_rm_logs_later (self, request, job.id, logs, force? &changed: NULL,
                               force? &removed: NULL);
    }
    else {
        engine_reply_begin (self, request);
        xxl_enc_map_begin (self->enc);
        xxl_enc_kint (self->enc, "id", job.id);
        xxl_enc_kint (self->enc, "deletedLogs", logs);
        if (force) {
            api_encode_ids (self, "workflowsChanged", changed);
            api_encode_ids (self, "workflowsRemoved", removed);
        }
        xxl_enc_map_end (self->enc);
        engine_reply_end (self, request);
    }
    zlistx_destroy (&changed);
    zlistx_destroy (&removed);
    xxl_job_free (&job);
}

static void
s_job_start_stop (server_t *self, request_t *request, int start)
{
    xxl_job_t job;
    if (engine_job_from_request (self, request, &job))
        return;
    char why [512] = "";
    if (start && s_job_arm (self, &job, why, sizeof why))
        engine_reply (self, request, XXL_BAD_REQUEST, why);
    else {
        if (!start) {
            job.trigger_status = 0;
            job.trigger_last_time = 0;
            job.trigger_next_time = 0;
        }
        job.update_time = engine_now ();
        engine_job_changed (self, job.id, XXL_CHANGED_PLANS | XXL_CHANGED_SCHEDULE
                            | XXL_CHANGED_CHILDREN);
        if (xxl_store_job_save (self->store, &job))
            engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
        else
            engine_reply_id (self, request, job.id);
    }
    xxl_job_free (&job);
}

void api_job_start (server_t *self, request_t *r) { s_job_start_stop (self, r, 1); }
void api_job_stop (server_t *self, request_t *r) { s_job_start_stop (self, r, 0); }

void
api_job_show (server_t *self, request_t *request)
{
    api_show_row (self, request, "jobId", xxl_store_job_encode, "job");
}



void
api_job_list (server_t *self, request_t *request)
{
    const char *key = api_str (request, "group");
    int64_t limit = api_int (request, "limit");
    int64_t offset = api_int (request, "offset");
    //  XXL-JOB's pageList filters: substrings, and the status (-1 any)
    const char *handler = api_str (request, "executorHandler");
    const char *desc = api_str (request, "jobDesc");
    const char *author = api_str (request, "author");
    int64_t status = api_int (request, "triggerStatus");
    int64_t group_id = 0;
    if (key) {
        xxl_group_t group;
        if (xxl_store_group_find (self->store, key, &group)) {
            char text [512];
            snprintf (text, sizeof text, "group '%s' not found", key);
            engine_reply (self, request, XXL_NOT_FOUND, text);
            return;
        }
        group_id = group.id;
        xxl_group_free (&group);
    }
    //  (a key whose reads are scoped lists its apps' jobs only, of all its
    //  apps when it names no group)
    int64_t *groups;
    size_t group_count;
    engine_read_groups (self, request->who, &groups, &group_count);
    engine_reply_begin (self, request);
    xxl_enc_map_begin (self->enc);
    xxl_enc_key (self->enc, "jobs");
    int truncated;
    xxl_store_job_filter_t filter = {
        .group_id = group_id, .handler = handler, .desc = desc, .author = author,
        .status = status, .limit = limit, .offset = offset, .groups = groups,
        .group_count = group_count
    };
    int rows = xxl_store_job_encode_page (self->store, self->enc, XXL_REPLY_MAX, &truncated,
                                          &filter);
    xxl_enc_kint (self->enc, "total", xxl_store_job_count (self->store, &filter));
    free (groups);
    api_encode_truncated (self, truncated, offset + (rows > 0? rows: 0));
    xxl_enc_map_end (self->enc);
    engine_reply_end (self, request);
}

//  {next: [...]}: a job's next `count` planned times from now, its
//  calendar's excluded times skipped; 400 with the reason when there are
//  none (a bad schedule, a calendar absent or excluding every time)
static void
s_next_reply (server_t *self, request_t *request, const xxl_job_t *job)
{
    int64_t count = api_int (request, "count");
    char why [512] = "";
    int64_t times [100];
    int made = engine_job_next_times (self, job, engine_now (), times, (int) count, why,
                                      sizeof why);
    if (made < 0 && !*why)
        made = 0;
    if (made <= 0 && *why)
        engine_reply (self, request, XXL_BAD_REQUEST, why);
    else {
        engine_reply_begin (self, request);
        xxl_enc_map_begin (self->enc);
        xxl_enc_key (self->enc, "next");
        xxl_enc_array_begin (self->enc);
        for (int i = 0; i < made; i++)
            xxl_enc_int (self->enc, times [i]);
        xxl_enc_array_end (self->enc);
        xxl_enc_map_end (self->enc);
        engine_reply_end (self, request);
    }
}

void
api_job_next (server_t *self, request_t *request)
{
    xxl_job_t job;
    if (engine_job_from_request (self, request, &job))
        return;
    if (api_judge (self, request, 1)) {
        xxl_job_free (&job);
        return;
    }
    s_next_reply (self, request, &job);
    xxl_job_free (&job);
}

void
api_schedule_next (server_t *self, request_t *request)
{
    //  (a job of this schedule, never stored: only what its times need)
    const char *tz = api_str (request, "timezone");
    if (tz && *tz && !xxl_cron_tz_valid (tz)) {
        char text [160], shown [129];
        snprintf (text, sizeof text, "unknown time zone '%s'",
                  xxl_printable (tz, shown, sizeof shown));
        engine_reply (self, request, XXL_BAD_REQUEST, text);
        return;
    }
    xxl_job_t job = {
        .schedule_type = (char *) api_str (request, "scheduleType"),
        .schedule_conf = (char *) api_str (request, "scheduleConf"),
        .timezone = (char *) api_str (request, "timezone"),
        .calendar = (char *) api_str (request, "calendar")
    };
    s_next_reply (self, request, &job);
}

void
api_job_trigger (server_t *self, request_t *request)
{
    int64_t id = api_int (request, "jobId");
    int rc;
    snap_t *snap = engine_snap_fresh (self, id, &rc);
    if (!snap) {
        char text [64];
        snprintf (text, sizeof text, "job %" PRId64 " not found", id);
        engine_reply (self, request, rc < 0? XXL_FAILURE: XXL_NOT_FOUND,
                      rc < 0? xxl_store_error (self->store): text);
        return;
    }
    if (api_judge (self, request, 1)) {
        engine_snap_release (&snap);
        return;
    }
    const xxl_job_t *job = &snap->job;
    trigger_args_t args = { .trigger_type = "MANUAL", .fail_retry_count = -1,
                            .shard_index = -1, .shard_total = -1 };
    //  (with keys, or over HTTP, the row names who triggered it: its audit
    //  record; `local` is every peer of a scheduler without keys)
    char by [300];
    if (request->who->public_key [0] || strneq (request->who->name, "local")) {
        snprintf (by, sizeof by, "key '%s' (%s)", request->who->name, request->who->role);
        args.by = by;
    }
    args.param = api_str (request, "executorParam");
    args.address = api_str (request, "address");
    const char *shard = api_str (request, "shard");
    const char *type = api_str (request, "triggerType");
    if (shard)
        xxl_command_shard (shard, &args.shard_index, &args.shard_total);
    if (args.address && api_addresses_check (request->msg, "address", args.address)) {
        engine_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
        engine_snap_release (&snap);
        return;
    }
    if (args.address && job->max_running > 0) {
        //  (its runs are routed by the job's route when a slot frees:
        //  runs/xxl_admit.c)
        engine_reply (self, request, XXL_BAD_REQUEST, "address cannot be given for a job with"
                      " maxRunning: its runs go by its route when a slot frees");
        engine_snap_release (&snap);
        return;
    }
    if (args.address && !engine_runs_pins_room (self, args.address)) {
        size_t bytes;
        size_t held = engine_runs_pins_held (self, &bytes);
        char text [200];
        snprintf (text, sizeof text, "busy: %zu runs of triggers given addresses are unfinished"
                  " (%zu bytes of address lists): trigger again when some end", held, bytes);
        engine_reply (self, request, XXL_BUSY, text);
        engine_snap_release (&snap);
        return;
    }
    args.trigger_type = type;
    int64_t ids [1024];
    int made = engine_trigger (self, job, &args, ids, NULL, 1024);
    if (made < 0)
        engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
    else {
        engine_reply_begin (self, request);
        xxl_enc_map_begin (self->enc);
        xxl_enc_key (self->enc, "logIds");
        xxl_enc_array_begin (self->enc);
        for (int i = 0; i < made && i < 1024; i++)
            xxl_enc_int (self->enc, ids [i]);
        xxl_enc_array_end (self->enc);
        xxl_enc_map_end (self->enc);
        engine_reply_end (self, request);
    }
    engine_snap_release (&snap);
}

//  JOB_COPY: a stopped copy of a job, its glue source included
void
api_job_copy (server_t *self, request_t *request)
{
    const char *desc = api_str (request, "jobDesc");
    xxl_job_t job;
    if (engine_job_from_request (self, request, &job))
        return;
    int64_t source_id = job.id;
    if (desc) {
        free (job.job_desc);
        job.job_desc = strdup (desc);
    }
    job.id = 0;
    job.trigger_status = 0;
    job.trigger_last_time = job.trigger_next_time = 0;
    job.add_time = job.update_time = job.glue_updatetime = engine_now ();
    engine_job_changed (self, 0, XXL_CHANGED_CHILDREN);
    int64_t id = xxl_store_job_add (self->store, &job);
    char remark [64];
    snprintf (remark, sizeof remark, "copy of job %" PRId64, source_id);
    if (id < 0
    ||  (strneq (job.glue_type, "BEAN")
         && xxl_store_glue_add (self->store, id, job.glue_type, job.glue_source,
                                remark, job.add_time) < 0))
        engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
    else
        engine_reply_id (self, request, id);
    xxl_job_free (&job);
}
