/*  xxl_ctl_import.c -- xxl-ctl import xxl-job FILE.sql [--start] [--dry-run] [--timezone Z]:
    an XXL-JOB 2.x or 3.x database, from its mysqldump, into xxl.

    Three steps (docs/migrating.md, "Importing an XXL-JOB database"):

    1. Read: the rows of xxl_job_group, xxl_job_info and xxl_job_logglue
       (xxl_mysqldump streams the file; other tables are scanned, not
       kept), by column name: 2.x `title`/`job_desc`, 3.x `name`; old 2.x
       `job_cron` for schedule_type CRON.  Malformed SQL stops here:
       "FILE: line N: ...", nothing changed.
    2. Map and judge, the same for --dry-run and a real run: each value
       against the api's own field table (xxl_commands.c: values, lengths,
       ranges), cron expressions with the sdk's parser, routes against the
       scheduler's router plugins (PLUGIN_LIST).  What cannot be mapped is
       listed as skipped with its reason: a job whose glue type, route,
       schedule... xxl cannot take; a child link to a job not imported or
       closing a cycle; glue versions of a type xxl does not take.  The
       rule against duplicates: a group whose appname exists is reused;
       in a reused group, a job with the same description and handler as
       an existing one (each existing job matched once, in id order) is
       that job, not imported again.  So a re-run imports nothing twice.
    3. Create through the api: GROUP_ADD, JOB_ADD with the oldest glue
       version (stopped), JOB_UPDATE per later version (each a glue
       version with its remark: the api makes a version when the source
       changes; times are the import's), JOB_UPDATE for the children
       (ids remapped), and with --start JOB_START of the jobs that were
       running in XXL-JOB.  When a request fails, what this run created
       is removed again (JOB_RM, GROUP_RM) and the error says so.
*/

#include "xxl_ctl_cmd.h"
#include "xxl_ctl_call.h"
#include "xxl_ctl_print.h"
#include "xxl_ctl_value.h"
#include "xxl_ctl_import.h"
#include "xxl/cron.h"

#include <czmq.h>
#include <inttypes.h>

static const ctl_pos_t s_import_pos [] = { { "FILE", CTL_STR, NULL } };

static const ctl_opt_t s_import_opts [] = {
    { "--start", NULL, NULL, "start the jobs that were running in XXL-JOB (default: all stopped)",
      CTL_BOOL, 0, 0, NULL, NULL },
    { "--dry-run", NULL, NULL, "judge and print the mapping; create nothing",
      CTL_BOOL, 0, 0, NULL, NULL },
    { "--timezone", NULL, "Z", "the zone every added job's cron runs in: XXL-JOB's admin's"
      " local one (e.g. Asia/Shanghai; default UTC)", CTL_STR, 0, 0, NULL, NULL },
    XXL_CTL_OPTS_END
};

//  A request whose failure is returned in why, not printed
static xxl_msg_t *
s_call (ctl_t *self, char *why, size_t whylen)
{
    *why = 0;
    xxl_msg_t *reply = xxl_client_call (self->client, why, whylen);
    if (!reply) {
        if (!*why)
            snprintf (why, whylen, "no reply from the scheduler at %s", self->api);
        return NULL;
    }
    if (xxl_reply_code (reply) != XXL_OK) {
        snprintf (why, whylen, "%s", *xxl_reply_msg (reply)? xxl_reply_msg (reply)
                  : "the scheduler refused it");
        xxl_msg_destroy (&reply);
    }
    return reply;
}

//  A request once the client exists (it read the scheduler's state)
static xxl_enc_t *
s_request (ctl_t *self, const char *type)
{
    assert (self->client);
    xxl_enc_t *enc = xxl_ctl_request (self, type);
    assert (enc);
    return enc;
}

//  Sends the request; its reply's id, or -1 with why
static int64_t
s_call_id (ctl_t *self, char *why, size_t whylen)
{
    xxl_msg_t *reply = s_call (self, why, whylen);
    if (!reply)
        return -1;
    int64_t id = -1;
    if (xxl_ctl_value_int (xxl_reply_content (reply), "id", &id) || id <= 0) {
        snprintf (why, whylen, "unexpected reply: no id");
        id = -1;
    }
    xxl_msg_destroy (&reply);
    return id;
}

//  Reads what the scheduler has: group appnames and ids, routers, alarm
//  kinds, and the jobs of reused groups.  0, or -1 with why
static int
s_scheduler_state (ctl_t *self, import_t *imp, char *why, size_t whylen)
{
    if (!xxl_ctl_request (self, "PLUGIN_LIST"))
        return -1;
    xxl_msg_t *reply = s_call (self, why, whylen);
    if (!reply)
        return -1;
    const msgpack_object *content = xxl_reply_content (reply);
    imp->routers = xxl_ctl_value_text_of (content, "routers");
    imp->alarms = xxl_ctl_value_text_of (content, "alarms");
    xxl_msg_destroy (&reply);
    if (!xxl_ctl_request (self, "GROUP_LIST") || !(reply = s_call (self, why, whylen)))
        return -1;
    const msgpack_object *groups = xxl_ctl_value_get (xxl_reply_content (reply), "groups");
    if (!groups || groups->type != MSGPACK_OBJECT_ARRAY) {
        xxl_msg_destroy (&reply);
        snprintf (why, whylen, "unexpected reply to GROUP_LIST");
        return -1;
    }
    //  The dump's groups by appname (a binary search a scheduler's group,
    //  not a scan of the dump's)
    import_group_t **by_app = import_groups_by_app (imp);
    if (!by_app) {
        xxl_msg_destroy (&reply);
        snprintf (why, whylen, "out of memory");
        return -1;
    }
    for (uint32_t i = 0; i < groups->via.array.size; i++) {
        const msgpack_object *row = &groups->via.array.ptr [i];
        char *app = xxl_ctl_value_text_of (row, "appname");
        int64_t id = xxl_ctl_value_int_or (row, "id", 0);
        size_t lo = app && id > 0? import_groups_app_first (by_app, imp->ngroups, app)
                  : imp->ngroups;
        //  Every NEW row of that appname
        for (; lo < imp->ngroups && streq (by_app [lo]->appname, app); lo++)
            if (by_app [lo]->state == IMPORT_NEW) {
                by_app [lo]->new_id = id;
                by_app [lo]->state = IMPORT_REUSED;
            }
        free (app);
    }
    free (by_app);
    xxl_msg_destroy (&reply);
    //  The jobs of each reused group, to match the dump's against
    for (size_t g = 0; g < imp->ngroups; g++) {
        import_group_t *group = &imp->groups [g];
        if (group->state != IMPORT_REUSED)
            continue;
        for (int64_t offset = 0; ; offset += 10000) {
            xxl_enc_t *enc = xxl_ctl_request (self, "JOB_LIST");
            if (!enc)
                return -1;
            xxl_enc_kstr (enc, "group", group->appname);
            xxl_enc_kint (enc, "limit", 10000);
            xxl_enc_kint (enc, "offset", offset);
            if (!(reply = s_call (self, why, whylen)))
                return -1;
            const msgpack_object *jobs = xxl_ctl_value_get (xxl_reply_content (reply), "jobs");
            uint32_t count = jobs && jobs->type == MSGPACK_OBJECT_ARRAY? jobs->via.array.size: 0;
            for (uint32_t i = 0; i < count; i++) {
                const msgpack_object *row = &jobs->via.array.ptr [i];
                char *desc = xxl_ctl_value_text_of (row, "jobDesc");
                char *handler = xxl_ctl_value_text_of (row, "executorHandler");
                int64_t id = xxl_ctl_value_int_or (row, "id", 0);
                if (desc && handler && id > 0)
                    import_existing_add (imp, group, id, desc, handler);
                free (desc);
                free (handler);
            }
            xxl_msg_destroy (&reply);
            if (count < 10000)
                break;
        }
    }
    return 0;
}

//  Sends a removal (the request made); whether it succeeded
static bool
s_removed (ctl_t *self)
{
    char why [512];
    xxl_msg_t *reply = s_call (self, why, sizeof why);
    bool ok = reply != NULL;
    xxl_msg_destroy (&reply);
    return ok;
}

//  Removes what this run created, newest first; the count left behind
static int
s_undo (ctl_t *self, import_t *imp, char *done, size_t donelen)
{
    int jobs = 0, groups = 0, left = 0;
    for (size_t j = imp->njobs; j-- > 0; ) {
        import_job_t *job = &imp->jobs [j];
        if (job->state == IMPORT_NEW && job->new_id > 0) {
            xxl_enc_kint (s_request (self, "JOB_RM"), "jobId", job->new_id);
            *(s_removed (self)? &jobs: &left) += 1;
            job->new_id = 0;
        }
    }
    for (size_t g = imp->ngroups; g-- > 0; ) {
        import_group_t *group = &imp->groups [g];
        if (group->state == IMPORT_NEW && group->new_id > 0) {
            xxl_enc_kstr (s_request (self, "GROUP_RM"), "group", group->appname);
            *(s_removed (self)? &groups: &left) += 1;
            group->new_id = 0;
        }
    }
    if (left)
        snprintf (done, donelen, "undone: removed %d job(s) and %d group(s); %d could not be"
                  " removed (remove them by hand: xxl-ctl job rm / group rm)", jobs, groups, left);
    else
        snprintf (done, donelen, "undone: removed the %d job(s) and %d group(s) it had created,"
                  " nothing is left of it", jobs, groups);
    return left;
}

static void
s_glue_fields (xxl_enc_t *enc, const import_glue_t *glue)
{
    xxl_enc_kstr (enc, "glueType", glue->type);
    xxl_enc_kstr (enc, "glueSource", glue->source);
    xxl_enc_kstr (enc, "glueRemark", glue->remark);
}

//  Creates everything judged importable; 0, or -1 with why (what failed)
static int
s_create (ctl_t *self, import_t *imp, bool start, char *why, size_t whylen)
{
    char reason [512];
    for (size_t g = 0; g < imp->ngroups; g++) {
        import_group_t *group = &imp->groups [g];
        if (group->state != IMPORT_NEW)
            continue;
        xxl_enc_t *enc = s_request (self, "GROUP_ADD");
        xxl_enc_kstr (enc, "appname", group->appname);
        xxl_enc_kstr (enc, "title", group->title);
        if (group->address_type == 1) {
            xxl_enc_kint (enc, "addressType", 1);
            xxl_enc_kstr (enc, "addressList", group->address_list);
        }
        if ((group->new_id = s_call_id (self, reason, sizeof reason)) < 0) {
            snprintf (why, whylen, "group %s: %s", group->appname, reason);
            return -1;
        }
    }
    for (size_t j = 0; j < imp->njobs; j++) {
        import_job_t *job = &imp->jobs [j];
        if (job->state != IMPORT_NEW)
            continue;
        xxl_enc_t *enc = s_request (self, "JOB_ADD");
        xxl_enc_kstr (enc, "jobGroup", job->group->appname);
        xxl_enc_kstr (enc, "jobDesc", job->desc);
        xxl_enc_kstr (enc, "author", job->author);
        xxl_enc_kstr (enc, "alarmEmail", job->alarm_email);
        xxl_enc_kstr (enc, "scheduleType", job->schedule_type);
        xxl_enc_kstr (enc, "scheduleConf", job->schedule_conf);
        xxl_enc_kstr (enc, "misfireStrategy", job->misfire);
        xxl_enc_kstr (enc, "executorRouteStrategy", job->route);
        xxl_enc_kstr (enc, "executorHandler", job->handler);
        xxl_enc_kstr (enc, "executorParam", job->param);
        xxl_enc_kstr (enc, "executorBlockStrategy", job->block);
        xxl_enc_kint (enc, "executorTimeout", job->timeout);
        xxl_enc_kint (enc, "executorFailRetryCount", job->retry);
        if (imp->timezone)
            xxl_enc_kstr (enc, "timezone", imp->timezone);
        if (job->nversions)
            s_glue_fields (enc, &job->versions [0]);
        else {
            xxl_enc_kstr (enc, "glueType", job->glue_type);
            xxl_enc_kstr (enc, "glueSource", job->glue_source);
            xxl_enc_kstr (enc, "glueRemark", job->glue_remark);
        }
        if ((job->new_id = s_call_id (self, reason, sizeof reason)) < 0) {
            snprintf (why, whylen, "job %" PRId64 ": %s", job->id, reason);
            return -1;
        }
        for (size_t v = 1; v < job->nversions; v++) {
            enc = s_request (self, "JOB_UPDATE");
            xxl_enc_kint (enc, "jobId", job->new_id);
            s_glue_fields (enc, &job->versions [v]);
            if (s_call_id (self, reason, sizeof reason) < 0) {
                snprintf (why, whylen, "job %" PRId64 "'s glue version %zu: %s", job->id, v + 1,
                          reason);
                return -1;
            }
        }
    }
    for (size_t j = 0; j < imp->njobs; j++) {
        import_job_t *job = &imp->jobs [j];
        if (job->state != IMPORT_NEW || !job->nkids)
            continue;
        char children [XXL_IMPORT_MAX_KIDS * 20 + 1] = "";
        size_t used = 0;
        for (size_t k = 0; k < job->nkids; k++)
            used += snprintf (children + used, sizeof children - used, "%s%" PRId64,
                              k? ",": "", job->kids [k]->new_id);
        xxl_enc_t *enc = s_request (self, "JOB_UPDATE");
        xxl_enc_kint (enc, "jobId", job->new_id);
        xxl_enc_kstr (enc, "childJobId", children);
        if (s_call_id (self, reason, sizeof reason) < 0) {
            snprintf (why, whylen, "job %" PRId64 "'s children: %s", job->id, reason);
            return -1;
        }
    }
    for (size_t j = 0; j < imp->njobs && start; j++) {
        import_job_t *job = &imp->jobs [j];
        if (job->state != IMPORT_NEW || !job->running || streq (job->schedule_type, "NONE"))
            continue;
        xxl_enc_t *enc = s_request (self, "JOB_START");
        xxl_enc_kint (enc, "jobId", job->new_id);
        if (s_call_id (self, reason, sizeof reason) < 0) {
            snprintf (why, whylen, "starting job %" PRId64 ": %s", job->id, reason);
            return -1;
        }
        job->started = true;
    }
    return 0;
}

static int
s_import (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    const char *path = args->pos [0];
    bool dry = xxl_ctl_args_get (cmd, args, "--dry-run") != NULL;
    bool start = xxl_ctl_args_get (cmd, args, "--start") != NULL;
    const char *zone = xxl_ctl_args_get (cmd, args, "--timezone");
    if (zone && !*zone)
        zone = NULL;                    //  (as the api's "": UTC)
    if (zone && !xxl_cron_tz_valid (zone)) {
        //  (judged before anything is read or made, as the jobs' zones are)
        char shown [129];
        return xxl_ctl_fail (self, XXL_CTL_USAGE, "--timezone: unknown time zone '%s' (nothing"
                             " imported)", xxl_printable (zone, shown, sizeof shown));
    }
    FILE *file = streq (path, "-")? stdin: fopen (path, "rb");
    if (!file) {
        const char *error = strerror (errno);
        char shown [512];
        return xxl_ctl_fail (self, XXL_CTL_FAILED, "cannot read %s: %s",
                             xxl_printable (path, shown, sizeof shown), error);
    }
    import_t *imp = import_new ();
    if (!imp) {
        if (file != stdin)
            fclose (file);
        return xxl_ctl_fail (self, XXL_CTL_FAILED, "out of memory");
    }
    char why [1024] = "";
    int rc = import_read (imp, file, why, sizeof why);
    if (file != stdin)
        fclose (file);
    //  (why may quote the dump, path is the caller's: both escaped)
    char shown [2048], shown_path [512];
    if (rc) {
        import_destroy (&imp);
        return xxl_ctl_fail (self, XXL_CTL_FAILED, "%s: %s (nothing imported)",
                             xxl_printable (path, shown_path, sizeof shown_path),
                             xxl_printable (why, shown, sizeof shown));
    }
    if (s_scheduler_state (self, imp, why, sizeof why)) {
        import_destroy (&imp);
        //  (no why: xxl_ctl_request reported it)
        return *why? xxl_ctl_fail (self, XXL_CTL_FAILED, "%s (nothing imported)",
                                   xxl_printable (why, shown, sizeof shown))
                   : XXL_CTL_FAILED;
    }
    imp->start = start;
    imp->timezone = zone;
    import_judge (imp);
    if (!dry && s_create (self, imp, start, why, sizeof why)) {
        char done [512];
        s_undo (self, imp, done, sizeof done);
        import_destroy (&imp);
        return xxl_ctl_fail (self, XXL_CTL_FAILED, "import failed at %s; %s",
                             xxl_printable (why, shown, sizeof shown), done);
    }
    rc = XXL_CTL_OK;
    if (self->json) {
        msgpack_sbuffer doc;
        msgpack_sbuffer_init (&doc);
        rc = import_pack (imp, dry, &doc)
           ? xxl_ctl_fail (self, XXL_CTL_FAILED, "out of memory")
           : xxl_ctl_print_json_packed (self, doc.data, doc.size);
        msgpack_sbuffer_destroy (&doc);
    }
    else
        import_print (imp, self->out, dry);
    import_destroy (&imp);
    return rc;
}

const ctl_cmd_t xxl_ctl_import_xxl_job = {
    "import", "xxl-job", "FILE.sql [--start] [--dry-run] [--timezone Z]",
    "import an XXL-JOB database (its mysqldump): groups, jobs, glue versions",
    s_import_opts, s_import_pos, 1, 1, NULL, s_import, NULL, NULL
};
