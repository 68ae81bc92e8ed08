/*  xxl_api_calendar.c -- the client api's calendars: CALENDAR_ADD, _LIST,
    _SHOW, _RM (DESIGN §13; docs/operations.md, Calendars).

    A calendar is judged by compiling it (xxl_calendar.h) and stored with
    its dates normalized.  Replacing or removing (--force) a calendar that
    jobs or workflows name re-arms each of them in this turn's transaction,
    as JOB_UPDATE and WORKFLOW_UPDATE do: its next time is computed again
    from now with what the calendar has become (a removed one: none), and
    a job's planned rows are dropped, so that the change holds from the
    next plan on, on every scheduler.
*/

#include "xxl_api.h"
#include "xxl_calendar.h"
#include "xxl_flows.h"

//  Ids of the jobs naming a calendar, read a page at a time
#define XXL_CALENDAR_PAGE 1000

//  Re-arms job id (see the header): `calendar` becomes its calendar when
//  not NULL.  0, or -1 on a store error.
static int
s_rearm (server_t *self, int64_t id, const char *calendar, int64_t now)
{
    xxl_job_t job;
    int rc = xxl_store_job_load (self->store, id, &job);
    if (rc)
        return rc < 0? -1: 0;
    if (calendar) {
        free (job.calendar);
        job.calendar = strdup (calendar);
    }
    if (job.trigger_status == 1 && strneq (job.schedule_type, "FIX_DELAY")) {
        char why [512];
        int64_t next = engine_job_next (self, &job, now, why, sizeof why);
        //  None (the calendar now excludes every time): stopped now, as
        //  the planner would stop it, and as a workflow is below; left
        //  armed, it would show its old next time, which the calendar
        //  excludes, until the planner reached that time
        if (next > 0)
            job.trigger_next_time = next;
        else {
            zsys_warning ("calendars: job %" PRId64 " stopped: %s", id, why);
            job.trigger_status = 0;
            job.trigger_next_time = 0;
        }
    }
    job.update_time = now;
    engine_job_changed (self, id, XXL_CHANGED_PLANS | XXL_CHANGED_SCHEDULE);
    rc = xxl_store_job_save (self->store, &job);
    xxl_job_free (&job);
    return rc;
}

//  Re-arms workflow id as s_rearm does a job
static int
s_rearm_workflow (server_t *self, int64_t id, const char *calendar, int64_t now)
{
    xxl_workflow_t workflow;
    int rc = xxl_store_workflow_load (self->store, id, &workflow);
    if (rc)
        return rc < 0? -1: 0;
    if (calendar) {
        free (workflow.calendar);
        workflow.calendar = strdup (calendar);
    }
    if (workflow.status == 1) {
        char why [512];
        int64_t next = engine_flow_next (self, &workflow, now, why, sizeof why);
        //  A calendar that now excludes every time stops it, as the
        //  planner stops such a job: kept armed, it would fire once more
        //  at its old next time, which the calendar excludes
        if (next < 0) {
            zsys_warning ("calendars: workflow %" PRId64 " stopped: %s", id, why);
            workflow.status = 0;
            next = 0;
        }
        workflow.next_time = next;
    }
    workflow.update_time = now;
    rc = xxl_store_workflow_save (self->store, &workflow);
    xxl_workflow_free (&workflow);
    return rc;
}

typedef int (s_ids_fn) (xxl_store_t *store, const char *name, int64_t after, int64_t *ids,
                        size_t max, size_t *count);
typedef int (s_rearm_fn) (server_t *self, int64_t id, const char *calendar, int64_t now);

//  Visits the jobs (ids, s_rearm) or workflows (their ids and re-arm)
//  naming calendar `name`: rearm them (to_calendar as s_rearm's calendar)
//  when rearm, and list up to 20 of their ids in list ("3, 5, ..."); how
//  many, or -1 on a store error
static int64_t
s_users_of (server_t *self, const char *name, s_ids_fn *ids_of, s_rearm_fn *rearm_one,
            bool rearm, const char *to_calendar, char *list, size_t listlen)
{
    int64_t ids [XXL_CALENDAR_PAGE], after = 0, total = 0, now = engine_now ();
    size_t count = 0, used = 0;
    *list = 0;
    do {
        if (ids_of (self->store, name, after, ids, XXL_CALENDAR_PAGE, &count))
            return -1;
        for (size_t i = 0; i < count; i++) {
            if (total < 20 && used < listlen)
                used += (size_t) snprintf (list + used, listlen - used, "%s%" PRId64,
                                           total? ", ": "", ids [i]);
            else
            if (total == 20 && used < listlen)
                used += (size_t) snprintf (list + used, listlen - used, ", ...");
            total++;
            if (rearm && rearm_one (self, ids [i], to_calendar, now))
                return -1;
        }
        if (count)
            after = ids [count - 1];
    } while (count == XXL_CALENDAR_PAGE);
    return total;
}

static int64_t
s_jobs_of (server_t *self, const char *name, bool rearm, const char *to_calendar,
           char *list, size_t listlen)
{
    return s_users_of (self, name, xxl_store_calendar_job_ids, s_rearm, rearm, to_calendar,
                       list, listlen);
}

static int64_t
s_workflows_of (server_t *self, const char *name, bool rearm, const char *to_calendar,
                char *list, size_t listlen)
{
    return s_users_of (self, name, xxl_store_workflow_calendar_ids, s_rearm_workflow, rearm,
                       to_calendar, list, listlen);
}

void
api_calendar_add (server_t *self, request_t *request)
{
    const char *name = api_str (request, "name");
    const char *dates = api_str (request, "dates");
    const char *cron = api_str (request, "excludeCron");
    const char *tz = api_str (request, "timezone");
    bool replace = api_bool (request, "replace");
    if (!*dates && !*cron) {
        engine_reply (self, request, XXL_BAD_REQUEST, "a calendar needs dates or excludeCron"
                      " (xxl-ctl calendar add NAME --dates FILE and/or --exclude-cron EXPR)");
        return;
    }
    if (*tz && !xxl_cron_tz_valid (tz)) {
        char text [160], shown [129];
        snprintf (text, sizeof text, "unknown time zone '%s'",
                  xxl_printable (tz, shown, sizeof shown));
        engine_reply (self, request, XXL_BAD_REQUEST, text);
        return;
    }
    char reason [512];
    xxl_calendar_t *calendar = xxl_calendar_new (dates, cron, tz, reason, sizeof reason);
    if (!calendar) {
        engine_reply (self, request, XXL_BAD_REQUEST, reason);
        return;
    }
    //  dates of only separators and comments (a file of just its header)
    //  excludes nothing, as no dates does: refused alike
    if (xxl_calendar_date_count (calendar) == 0 && !*cron) {
        xxl_calendar_destroy (&calendar);
        engine_reply (self, request, XXL_BAD_REQUEST, "a calendar needs dates or excludeCron:"
                      " its dates hold no date, only separators or comments (xxl-ctl calendar"
                      " add NAME --dates FILE and/or --exclude-cron EXPR)");
        return;
    }
    int64_t now = engine_now ();
    xxl_store_calendar_t row = {
        .name = (char *) name, .dates = (char *) xxl_calendar_dates (calendar),
        .exclude_cron = (char *) cron, .timezone = (char *) tz,
        .add_time = now, .update_time = now
    };
    int rc = xxl_store_calendar_put (self->store, &row, replace);
    size_t date_count = xxl_calendar_date_count (calendar);
    xxl_calendar_destroy (&calendar);
    char jobs [256];
    int64_t used = rc == 1 && replace? s_jobs_of (self, name, true, NULL, jobs, sizeof jobs): 0;
    int64_t flows = rc == 1 && replace
                  ? s_workflows_of (self, name, true, NULL, jobs, sizeof jobs): 0;
    if (rc < 0 || used < 0 || flows < 0)
        engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
    else
    if (rc == 0) {
        char text [256];
        snprintf (text, sizeof text, "calendar '%s' exists already (replace it: xxl-ctl"
                  " calendar add %s --replace ...)", name, name);
        engine_reply (self, request, XXL_CONFLICT, text);
    }
    else {
        engine_reply_begin (self, request);
        xxl_enc_map_begin (self->enc);
        xxl_enc_kstr (self->enc, "name", name);
        xxl_enc_kint (self->enc, "dates", (int64_t) date_count);
        xxl_enc_kint (self->enc, "jobs", used);
        xxl_enc_kint (self->enc, "workflows", flows);
        xxl_enc_map_end (self->enc);
        engine_reply_end (self, request);
    }
}

//  CALENDAR_LIST pages as the other lists do (limit, offset; truncated and
//  nextOffset, docs/protocol.md, Large replies): a calendar may hold 10,000
//  dates (about 110 KB), so some forty of them pass a frame, and a list
//  without pages would then answer 400 for good.  The store encodes them
//  all (an array of maps, by name); the page is cut from that.
void
api_calendar_list (server_t *self, request_t *request)
{
    int64_t limit = api_int (request, "limit");
    int64_t offset = api_int (request, "offset");
    xxl_enc_t *all = xxl_enc_new ();
    xxl_enc_t *item = xxl_enc_new ();
    msgpack_unpacked unpacked;
    msgpack_unpacked_init (&unpacked);
    size_t size, at = 0;
    const void *data = NULL;
    if (xxl_store_calendar_encode_all (self->store, all) >= 0)
        data = xxl_enc_finish (all, &size);
    if (!data
    ||  msgpack_unpack_next (&unpacked, (const char *) data, size, &at) != MSGPACK_UNPACK_SUCCESS
    ||  unpacked.data.type != MSGPACK_OBJECT_ARRAY)
        engine_reply (self, request, XXL_FAILURE, data? "store error: the calendars'"
                      " encoding is not a list": xxl_store_error (self->store));
    else {
        const msgpack_object_array *rows = &unpacked.data.via.array;
        engine_reply_begin (self, request);
        xxl_enc_map_begin (self->enc);
        xxl_enc_key (self->enc, "calendars");
        xxl_enc_array_begin (self->enc);
        int64_t sent = 0;
        bool truncated = false;
        for (int64_t i = offset; i < (int64_t) rows->size && sent < limit; i++) {
            size_t one = 0;
            xxl_enc_object (item, &rows->ptr [i]);
            free (xxl_enc_take (item, &one));
            if (xxl_enc_size (self->enc) + one > XXL_REPLY_MAX) {
                truncated = true;
                break;
            }
            xxl_enc_object (self->enc, &rows->ptr [i]);
            sent++;
        }
        xxl_enc_array_end (self->enc);
        xxl_enc_kint (self->enc, "total", rows->size);
        api_encode_truncated (self, truncated, offset + sent);
        xxl_enc_map_end (self->enc);
        engine_reply_end (self, request);
    }
    msgpack_unpacked_destroy (&unpacked);
    xxl_enc_destroy (&item);
    xxl_enc_destroy (&all);
}

void
api_calendar_show (server_t *self, request_t *request)
{
    const char *name = api_str (request, "name");
    engine_reply_begin (self, request);
    int rc = xxl_store_calendar_encode (self->store, self->enc, name);
    if (rc == 1) {
        engine_reply_end (self, request);
        return;
    }
    char text [128];
    snprintf (text, sizeof text, "calendar '%s' not found", name);
    engine_reply (self, request, rc < 0? XXL_FAILURE: XXL_NOT_FOUND,
                  rc < 0? xxl_store_error (self->store): text);
}

void
api_calendar_rm (server_t *self, request_t *request)
{
    const char *name = api_str (request, "name");
    bool force = api_bool (request, "force");
    char jobs [256], text [512];
    xxl_store_calendar_t row;
    int rc = xxl_store_calendar_get (self->store, name, &row);
    xxl_store_calendar_free (&row);
    if (rc) {
        snprintf (text, sizeof text, "calendar '%s' not found", name);
        engine_reply (self, request, rc < 0? XXL_FAILURE: XXL_NOT_FOUND,
                      rc < 0? xxl_store_error (self->store): text);
        return;
    }
    //  Used and not forced: refused, naming the jobs, then the workflows
    char flows_list [256];
    int64_t used = s_jobs_of (self, name, force, "", jobs, sizeof jobs);
    int64_t flows = used < 0? -1: s_workflows_of (self, name, force, "", flows_list,
                                                    sizeof flows_list);
    if (used > 0 && !force) {
        snprintf (text, sizeof text, "calendar '%s' is used by %" PRId64 " job%s (%s):"
                  " give them another calendar or none first (xxl-ctl job update ID"
                  " --calendar ''), or remove it with --force (they then fire at every"
                  " time of their schedule)", name, used, used == 1? "": "s", jobs);
        engine_reply (self, request, XXL_CONFLICT, text);
        return;
    }
    if (flows > 0 && !force) {
        snprintf (text, sizeof text, "calendar '%s' is used by %" PRId64 " workflow%s (%s):"
                  " give them another calendar or none first (xxl-ctl workflow update ID"
                  " --calendar ''), or remove it with --force (they then fire at every"
                  " time of their schedule)", name, flows, flows == 1? "": "s", flows_list);
        engine_reply (self, request, XXL_CONFLICT, text);
        return;
    }
    if (used < 0 || flows < 0 || xxl_store_calendar_rm (self->store, name) < 0) {
        engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
        return;
    }
    engine_reply_begin (self, request);
    xxl_enc_map_begin (self->enc);
    xxl_enc_kstr (self->enc, "name", name);
    //  The jobs that lost it (force)
    xxl_enc_kint (self->enc, "jobs", used);
    xxl_enc_kint (self->enc, "workflows", flows);
    xxl_enc_map_end (self->enc);
    engine_reply_end (self, request);
}
