/*  xxl_job.c -- a job's fields from a request, and when it fires next.

    A job's fields from a judged request (their types, ranges and the
    closed lists of schedule types, misfire and block strategies and glue
    types are xxl_commands.c's), what judging them needs the engine for
    (routes, schedule conf, alarm targets, time zone, children), defaults;
    a job's next fire time, as its schedule type says (xxl_schedule.h),
    with the reason when there is none.
*/

#include "xxl_engine.h"
#include "xxl_tags.h"


//  Job validation

//  Reads agentTags (judged) onto job in its canonical form; 0, or -1
//  with the reason latched in the message
static int
s_read_tags (request_t *request, xxl_job_t *job)
{
    const char *tags = xxl_args_str (&request->args, request->msg, "agentTags");
    if (!tags)
        return 0;
    char canonical [XXL_TAGS_BUF], why [300];
    if (xxl_tags_normalize (tags, canonical, sizeof canonical, why, sizeof why) < 0)
        return xxl_msg_fail (request->msg, "agentTags: %s", why);
    free (job->agent_tags);
    job->agent_tags = strdup (canonical);
    return 0;
}

//  Reads the job fields present in the request (judged by its command's
//  fields) onto job and judges the job they make; returns 0 or -1 with
//  the reason latched in the message.  is_add: fields required at add.
int
engine_job_read (server_t *self, request_t *request, xxl_job_t *job, int is_add)
{
    xxl_msg_t *msg = request->msg;
    #define XXL_SET_STR(field, key) do { \
        const char *v_ = xxl_args_str (&request->args, msg, key); \
        if (v_) { free (job->field); job->field = strdup (v_); } } while (0)
    #define XXL_SET_INT(field, key) do { \
        if (xxl_args_given (&request->args, msg, key)) \
            job->field = xxl_args_int (&request->args, msg, key); } while (0)
    XXL_SET_STR (job_desc, "jobDesc");
    XXL_SET_STR (author, "author");
    XXL_SET_STR (alarm_email, "alarmEmail");
    XXL_SET_STR (schedule_type, "scheduleType");
    XXL_SET_STR (schedule_conf, "scheduleConf");
    XXL_SET_STR (misfire_strategy, "misfireStrategy");
    XXL_SET_STR (executor_route_strategy, "executorRouteStrategy");
    XXL_SET_STR (executor_handler, "executorHandler");
    XXL_SET_STR (executor_param, "executorParam");
    XXL_SET_STR (executor_block_strategy, "executorBlockStrategy");
    XXL_SET_INT (executor_timeout, "executorTimeout");
    XXL_SET_INT (executor_fail_retry_count, "executorFailRetryCount");
    XXL_SET_STR (glue_type, "glueType");
    XXL_SET_STR (glue_remark, "glueRemark");
    XXL_SET_STR (child_jobid, "childJobId");
    XXL_SET_STR (timezone, "timezone");
    XXL_SET_INT (retry_interval, "retryInterval");
    XXL_SET_INT (retry_max_interval, "retryMaxInterval");
    XXL_SET_INT (max_running, "maxRunning");
    XXL_SET_STR (calendar, "calendar");
    if (xxl_args_given (&request->args, msg, "retryBackoff"))
        job->retry_backoff = xxl_args_number (&request->args, msg, "retryBackoff");
    const char *source = xxl_args_str (&request->args, msg, "glueSource");
    if (source && (!job->glue_source || strneq (source, job->glue_source))) {
        free (job->glue_source);
        job->glue_source = strdup (source);
        job->glue_updatetime = engine_now ();
    }
    #undef XXL_SET_STR
    #undef XXL_SET_INT
    if (s_read_tags (request, job))
        return -1;

    if (!xxl_routers_find (engine_runs_routers (self), job->executor_route_strategy)) {
        char *known = xxl_routers_names (engine_runs_routers (self));
        char shown [129];
        xxl_msg_fail (msg, "unknown route '%s' (known: %s)",
                      xxl_printable (job->executor_route_strategy, shown, sizeof shown),
                      known && *known? known: "none: no router plugins loaded");
        free (known);
        return -1;
    }
    if (streq (job->glue_type, "BEAN") && !*job->executor_handler)
        return xxl_msg_fail (msg, "a BEAN job needs a handler (executorHandler)");
    //  (a broadcast trigger is one run per agent at once: a cap on them
    //  would split one trigger)
    if (job->max_running > 0
    &&  xxl_routers_is_broadcast (engine_runs_routers (self), job->executor_route_strategy))
        return xxl_msg_fail (msg, "maxRunning does not apply to route %s (a trigger runs on"
                             " every agent at once)", job->executor_route_strategy);
    char reason [512];
    if (*job->alarm_email
    &&  xxl_alarms_check_targets (self->alarms, job->alarm_email, reason, sizeof reason))
        return xxl_msg_fail (msg, "alarm targets: %s", reason);
    if (*job->timezone && !xxl_cron_tz_valid (job->timezone)) {
        char shown [129];
        return xxl_msg_fail (msg, "unknown time zone '%s'",
                             xxl_printable (job->timezone, shown, sizeof shown));
    }
    xxl_schedule_t *schedule = xxl_schedule_new (job->schedule_type, job->schedule_conf,
                                                 job->timezone, reason, sizeof reason);
    if (!schedule)
        return xxl_msg_fail (msg, "%s", reason);
    xxl_schedule_destroy (&schedule);
    if (engine_job_calendar_check (self, job, reason, sizeof reason))
        return xxl_msg_fail (msg, "%s", reason);
    //  Child jobs: ids that exist, not the job itself
    if (*job->child_jobid) {
        char *copy = strdup (job->child_jobid), *save = NULL;
        int bad = 0;
        for (char *t = strtok_r (copy, ",", &save); t && !bad; t = strtok_r (NULL, ",", &save)) {
            char *end = NULL;
            long long child = strtoll (t, &end, 10);
            if (*end || child <= 0) {
                xxl_msg_fail (msg, "child job id '%s' is not a number", t);
                bad = 1;
            }
            else
            if (child == job->id) {
                xxl_msg_fail (msg, "a job cannot be its own child");
                bad = 1;
            }
            else
            if (xxl_store_job_exists (self->store, (int64_t) child) != 1) {
                xxl_msg_fail (msg, "child job %lld does not exist: give childJobId without it"
                              " (xxl-ctl job update/add --child with the ids that exist,"
                              " or --child '' for none; now '%s')", child, job->child_jobid);
                bad = 1;
            }
        }
        free (copy);
        if (bad)
            return -1;
        //  XXL-JOB lets a cycle flood the log (#447): refuse it when saved
        char path [1024];
        snprintf (path, sizeof path, "%" PRId64, job->id);
        if (!is_add && engine_child_cycle (self, job->id, job->child_jobid, path, sizeof path, 0))
            return xxl_msg_fail (msg, "child jobs would form a cycle: %s", path);
    }
    return 0;
}

//  Epoch ms as UTC ISO 8601 ("2026-11-23T23:59:01.390Z"), followed by
//  the local time in zone tz when it has one and it is not UTC
const char *
engine_iso_time (int64_t ms, const char *tz, char *buf, size_t buflen)
{
    int64_t local = 0;
    const xxl_tz_t *zone = tz && *tz && strneq (tz, "UTC")? xxl_tz_get (tz, NULL, 0): NULL;
    size_t used = 0;
    for (int pass = 0; pass < (zone? 2: 1) && used < buflen; pass++) {
        int64_t t = ms;
        if (pass) {
            local = xxl_tz_offset_utc (zone, xxl_tz_floordiv (ms, 1000), NULL);
            t = ms + local * 1000;
        }
        int64_t days = xxl_tz_floordiv (t, 86400000);
        int64_t rest = t - days * 86400000;
        int64_t year;
        int month, day;
        xxl_tz_civil_from_days (days, &year, &month, &day);
        int n = pass == 0
            ? snprintf (buf + used, buflen - used, "%04" PRId64 "-%02d-%02dT%02d:%02d:%02d.%03dZ",
                        year, month, day, (int) (rest / 3600000), (int) (rest / 60000 % 60),
                        (int) (rest / 1000 % 60), (int) (rest % 1000))
            : snprintf (buf + used, buflen - used, " (%04" PRId64 "-%02d-%02dT%02d:%02d:%02d.%03d%c%02d:%02d %s)",
                        year, month, day, (int) (rest / 3600000), (int) (rest / 60000 % 60),
                        (int) (rest / 1000 % 60), (int) (rest % 1000), local < 0? '-': '+',
                        (int) (llabs (local) / 3600), (int) (llabs (local) / 60 % 60), tz);
        if (n < 0)
            break;
        used += (size_t) n;
    }
    return buf;
}

//  Next fire time of a compiled schedule strictly after `after`, or -1
//  (reason in why: the type's words and the instant in UTC and in tz)
int64_t
engine_schedule_next (xxl_schedule_t *schedule, const char *tz, int64_t after, char *why,
                      size_t whylen)
{
    const xxl_schedule_type_t *type = xxl_schedule_type_of (schedule);
    if (!type->next) {
        snprintf (why, whylen, "schedule type %s has no next time", type->name);
        return -1;
    }
    int64_t next = xxl_schedule_next (schedule, after);
    char date [128];
    if (next < 0)
        snprintf (why, whylen, "%s %s", type->ends, engine_iso_time (after, tz, date, sizeof date));
    return next;
}

//  Next fire time strictly after `after`, or -1 (reason in why)
int64_t
engine_next_time (const xxl_job_t *job, int64_t after, char *why, size_t whylen)
{
    xxl_schedule_t *schedule = xxl_schedule_new (job->schedule_type, job->schedule_conf,
                                                 job->timezone, why, whylen);
    if (!schedule)
        return -1;
    int64_t next = engine_schedule_next (schedule, job->timezone, after, why, whylen);
    xxl_schedule_destroy (&schedule);
    return next;
}

void
engine_job_defaults (xxl_job_t *job)
{
    job->job_desc = strdup ("");
    job->author = strdup ("");
    job->alarm_email = strdup ("");
    job->schedule_type = strdup ("NONE");
    job->schedule_conf = strdup ("");
    job->misfire_strategy = strdup ("DO_NOTHING");
    job->executor_route_strategy = strdup ("FIRST");
    job->executor_handler = strdup ("");
    job->executor_param = strdup ("");
    job->executor_block_strategy = strdup ("SERIAL_EXECUTION");
    job->glue_type = strdup ("BEAN");
    job->glue_source = strdup ("");
    job->glue_remark = strdup ("");
    job->child_jobid = strdup ("");
    job->timezone = strdup ("");
    job->retry_backoff = 1;
    job->calendar = strdup ("");
    job->agent_tags = strdup ("");
}

//  Loads the job named by field jobId (judged); replies 404 itself when
//  absent
int
engine_job_from_request (server_t *self, request_t *request, xxl_job_t *job)
{
    int64_t id = xxl_args_int (&request->args, request->msg, "jobId");
    int rc = xxl_store_job_load (self->store, id, job);
    if (rc) {
        char text [64];
        snprintf (text, sizeof text, "job %" PRId64 " not found", id);
        engine_reply (self, request, rc < 0? XXL_FAILURE: XXL_NOT_FOUND,
                      rc < 0? xxl_store_error (self->store): text);
        return -1;
    }
    return 0;
}

//  Follows child_jobid links from `children`; 1 when job_id is reached (a
//  cycle), writing the path into path
int
engine_child_cycle (server_t *self, int64_t job_id, const char *children, char *path,
                    size_t pathlen, int depth)
{
    if (depth > 64 || !children || !*children)
        return 0;
    char *copy = strdup (children), *save = NULL;
    int cycle = 0;
    for (char *t = strtok_r (copy, ",", &save); t && !cycle; t = strtok_r (NULL, ",", &save)) {
        int64_t child = atoll (t);
        size_t used = strlen (path);
        snprintf (path + used, pathlen - used, " -> %" PRId64, child);
        if (child == job_id)
            cycle = 1;
        else {
            char *next = xxl_store_job_children (self->store, child);
            cycle = engine_child_cycle (self, job_id, next, path, pathlen, depth + 1);
            free (next);
        }
        if (!cycle)
            path [used] = 0;
    }
    free (copy);
    return cycle;
}
