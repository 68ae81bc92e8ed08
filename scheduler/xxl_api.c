/*  xxl_api.c -- the client api: receiving a request, its table, its handlers.

    engine_receive takes a ROUTER message apart, answers what cannot be
    decoded or is not authorized, and hands a decoded message on; the
    api table maps each `t` to its handler and says whether it only
    reads (its reply stands whatever the turn's commit).
*/

#include "xxl_engine.h"

static void s_api_ping (server_t *self, request_t *request);
static int s_group_read (server_t *self, xxl_msg_t *msg, xxl_group_t *group);
static void s_api_group_add (server_t *self, request_t *request);
static int s_group_from_request (server_t *self, request_t *request, xxl_group_t *group);
static void s_encode_registry_list (server_t *self, const char *app);
static void s_api_group_list (server_t *self, request_t *request);
static void s_api_group_show (server_t *self, request_t *request);
static void s_api_group_update (server_t *self, request_t *request);
static void s_api_group_rm (server_t *self, request_t *request);
static int s_job_arm (const xxl_job_t *job_in, xxl_job_t *job, char *why, size_t whylen);
static void s_api_job_add (server_t *self, request_t *request);
static void s_api_job_update (server_t *self, request_t *request);
static void s_api_job_rm (server_t *self, request_t *request);
static void s_api_job_start_stop (server_t *self, request_t *request, int start);
static void s_show_row (server_t *self, request_t *request, const char *key,
                        int (*encode) (xxl_store_t *store, xxl_enc_t *enc, int64_t id),
                        const char *what);
static void s_api_job_show (server_t *self, request_t *request);
static void s_encode_truncated (server_t *self, int truncated, int64_t next_offset);
static void s_api_job_list (server_t *self, request_t *request);
static void s_api_job_next (server_t *self, request_t *request);
static int s_parse_shard (const char *text, int *index, int *total);
static void s_api_job_trigger (server_t *self, request_t *request);
static void s_api_log_list (server_t *self, request_t *request);
static void s_api_log_show (server_t *self, request_t *request);
static void s_api_log_forward (server_t *self, request_t *request, int kill);
static void s_api_agent_list (server_t *self, request_t *request);
static void s_api_glue_history (server_t *self, request_t *request);
static int s_glue_version (server_t *self, request_t *request, xxl_job_t *job, int required,
                           int64_t *version);
static void s_api_glue_show (server_t *self, request_t *request);
static void s_api_glue_rollback (server_t *self, request_t *request);
static void s_api_job_copy (server_t *self, request_t *request);
static void s_api_report (server_t *self, request_t *request);
static void s_api_log_clear (server_t *self, request_t *request);
static int s_authorized (server_t *self, xxl_msg_t *msg);
static void s_reply_bad_frame (server_t *self, zlistx_t *outbox, zframe_t *rid, uint64_t id,
                               const char *reason);

//  API handlers

static void
s_api_ping (server_t *self, request_t *request)
{
    engine_reply_begin (self, request);
    xxl_enc_map_begin (self->enc);
    xxl_enc_kstr (self->enc, "version", PACKAGE_VERSION);
    xxl_enc_kint (self->enc, "protocol", XXL_PROTOCOL_VERSION);
    xxl_enc_map_end (self->enc);
    engine_reply_end (self, request);
}

//  Checks a comma-separated address list from a request: at least one
//  address, each at most XXL_MSG_MAX_NAME bytes and free of control
//  characters.  Returns 0, or -1 with the reason latched in msg.
static int
s_addresses_check (xxl_msg_t *msg, const char *field, const char *list)
{
    char **items;
    size_t count = engine_split_addresses (list, &items);
    int rc = 0;
    if (count == 0)
        rc = xxl_msg_fail (msg, "%s names no address", field);
    for (size_t i = 0; i < count && rc == 0; i++)
        if (strlen (items [i]) > XXL_MSG_MAX_NAME || engine_has_control (items [i]))
            rc = xxl_msg_fail (msg, "%s: address %zu is longer than %d bytes or holds control"
                               " characters", field, i + 1, XXL_MSG_MAX_NAME);
    engine_free_addresses (items, count);
    return rc;
}

static int
s_group_read (server_t *self, xxl_msg_t *msg, xxl_group_t *group)
{
    (void) self;
    const char *app = xxl_msg_str (msg, NULL, "appname", 0, XXL_MSG_MAX_NAME, NULL);
    const char *title = xxl_msg_str (msg, NULL, "title", 0, XXL_MSG_MAX_NAME, NULL);
    int64_t type = xxl_msg_int (msg, NULL, "addressType", 0, 0, 1, group->address_type);
    const char *list = xxl_msg_str (msg, NULL, "addressList", 0, XXL_MAX_TEXT, NULL);
    if (xxl_msg_error (msg))
        return -1;
    if (app) {
        if (!*app)
            return xxl_msg_fail (msg, "appname must not be empty");
        bool digits = true;
        for (const char *p = app; *p; p++) {
            if (!(isalnum ((unsigned char) *p) || *p == '-' || *p == '_' || *p == '.'))
                return xxl_msg_fail (msg, "appname '%s' may hold only letters, digits, '-', '_' and '.'",
                                     app);
            digits = digits && isdigit ((unsigned char) *p);
        }
        if (digits)
            return xxl_msg_fail (msg, "appname '%s' must not be all digits: a group named by"
                                 " digits is the group of that id", app);
        free (group->app_name);
        group->app_name = strdup (app);
    }
    if (title) {
        free (group->title);
        group->title = strdup (title);
    }
    group->address_type = (int) type;
    if (list && *list && s_addresses_check (msg, "addressList", list))
        return -1;
    if (list) {
        char **items;
        size_t count = engine_split_addresses (list, &items);
        size_t size = 1;
        for (size_t i = 0; i < count; i++)
            size += strlen (items [i]) + 1;
        char *joined = (char *) zmalloc (size);
        for (size_t i = 0; i < count; i++) {
            if (i)
                strcat (joined, ",");
            strcat (joined, items [i]);
        }
        engine_free_addresses (items, count);
        free (group->address_list);
        group->address_list = joined;
    }
    if (group->address_type == 1 && (!group->address_list || !*group->address_list))
        return xxl_msg_fail (msg, "a manual group (addressType 1) needs an addressList");
    return 0;
}

static void
s_api_group_add (server_t *self, request_t *request)
{
    xxl_group_t group = { 0 };
    group.title = strdup ("");
    if (!xxl_msg_get (xxl_msg_root (request->msg), "appname"))
        xxl_msg_fail (request->msg, "field 'appname' is required");
    if (xxl_msg_error (request->msg) || s_group_read (self, request->msg, &group)) {
        engine_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
        xxl_group_free (&group);
        return;
    }
    xxl_group_t existing;
    if (xxl_store_group_find (self->store, group.app_name, &existing) == 0) {
        char text [512];
        snprintf (text, sizeof text, "group '%s' exists (id %" PRId64 ")",
                  group.app_name, existing.id);
        xxl_group_free (&existing);
        engine_reply (self, request, XXL_CONFLICT, text);
        xxl_group_free (&group);
        return;
    }
    group.update_time = engine_now ();
    int64_t id = xxl_store_group_add (self->store, &group);
    //  An automatic group's address list is the registry's, as XXL-JOB's
    //  registry monitor writes it
    if (id < 0 || (group.address_type == 0
                   && xxl_store_groups_refresh (self->store, group.update_time)))
        engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
    else
        engine_reply_id (self, request, id);
    xxl_group_free (&group);
}

//  Finds the group named by field `group` (app name or id); replies itself
//  when absent
static int
s_group_from_request (server_t *self, request_t *request, xxl_group_t *group)
{
    const char *key = xxl_msg_str (request->msg, NULL, "group", 1, XXL_MSG_MAX_NAME, NULL);
    if (xxl_msg_error (request->msg)) {
        engine_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
        return -1;
    }
    int rc = xxl_store_group_find (self->store, key, group);
    if (rc) {
        char text [512];
        snprintf (text, sizeof text, "group '%s' not found", key);
        engine_reply (self, request, rc < 0? XXL_FAILURE: XXL_NOT_FOUND, text);
        return -1;
    }
    return 0;
}


static void
s_encode_registry_list (server_t *self, const char *app)
{
    const char *const *addresses;
    size_t count = xxl_registry_addresses (self->registry, app, &addresses);
    xxl_enc_key (self->enc, "registryList");
    xxl_enc_array_begin (self->enc);
    for (size_t i = 0; i < count; i++)
        xxl_enc_str (self->enc, addresses [i]);
    xxl_enc_array_end (self->enc);
}

static void
s_api_group_list (server_t *self, request_t *request)
{
    engine_reply_begin (self, request);
    xxl_enc_map_begin (self->enc);
    xxl_enc_key (self->enc, "groups");
    xxl_store_group_encode_all (self->store, self->enc);
    xxl_enc_map_end (self->enc);
    engine_reply_end (self, request);
}

static void
s_api_group_show (server_t *self, request_t *request)
{
    xxl_group_t group;
    if (s_group_from_request (self, request, &group))
        return;
    engine_reply_begin (self, request);
    xxl_enc_map_begin (self->enc);
    xxl_enc_kint (self->enc, "id", group.id);
    xxl_enc_kstr (self->enc, "appname", group.app_name);
    xxl_enc_kstr (self->enc, "title", group.title);
    xxl_enc_kint (self->enc, "addressType", group.address_type);
    xxl_enc_kstr (self->enc, "addressList", group.address_list);
    xxl_enc_kint (self->enc, "updateTime", group.update_time);
    s_encode_registry_list (self, group.app_name);
    xxl_enc_map_end (self->enc);
    engine_reply_end (self, request);
    xxl_group_free (&group);
}

static void
s_api_group_update (server_t *self, request_t *request)
{
    xxl_group_t group;
    if (s_group_from_request (self, request, &group))
        return;
    char *old_app = strdup (group.app_name);
    if (s_group_read (self, request->msg, &group))
        engine_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
    else {
        xxl_group_t other;
        if (strneq (old_app, group.app_name)
        &&  xxl_store_group_find (self->store, group.app_name, &other) == 0) {
            xxl_group_free (&other);
            engine_reply (self, request, XXL_CONFLICT, "another group has that appname");
        }
        else {
            group.update_time = engine_now ();
            self->groups_until = 0;
            if (xxl_store_group_update (self->store, &group)
            ||  (group.address_type == 0
                 && xxl_store_groups_refresh (self->store, group.update_time)))
                engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
            else
                engine_reply_id (self, request, group.id);
        }
    }
    free (old_app);
    xxl_group_free (&group);
}

static void
s_api_group_rm (server_t *self, request_t *request)
{
    xxl_group_t group;
    if (s_group_from_request (self, request, &group))
        return;
    self->groups_until = 0;
    int64_t jobs = xxl_store_group_jobs (self->store, group.id);
    if (jobs != 0) {
        char text [128];
        snprintf (text, sizeof text, "group %" PRId64 " still has %" PRId64 " job(s); remove them first",
                  group.id, jobs);
        engine_reply (self, request, XXL_CONFLICT, text);
    }
    else
    if (xxl_store_group_rm (self->store, group.id))
        engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
    else
        engine_reply_id (self, request, group.id);
    xxl_group_free (&group);
}


//  Sets trigger_status/next time for start; returns 0 or -1 with why
static int
s_job_arm (const xxl_job_t *job_in, xxl_job_t *job, char *why, size_t whylen)
{
    (void) job_in;
    if (streq (job->schedule_type, "NONE")) {
        snprintf (why, whylen, "a job with schedule type NONE cannot be started; trigger it instead");
        return -1;
    }
    int64_t next = engine_next_time (job, engine_now (), why, whylen);
    if (next < 0)
        return -1;
    job->trigger_status = 1;
    job->trigger_last_time = 0;
    job->trigger_next_time = next;
    return 0;
}

static void
s_api_job_add (server_t *self, request_t *request)
{
    xxl_job_t job = { 0 };
    engine_job_defaults (&job);
    xxl_group_t group;
    const char *key = xxl_msg_str (request->msg, NULL, "jobGroup", 1, XXL_MSG_MAX_NAME, NULL);
    int start = xxl_msg_bool (request->msg, NULL, "start", 0, 0);
    if (xxl_msg_error (request->msg)) {
        engine_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
        xxl_job_free (&job);
        return;
    }
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
    job.add_time = job.update_time = job.glue_updatetime = engine_now ();
    char why [512] = "";
    if (engine_job_read (self, request->msg, &job, 1))
        engine_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
    else
    if (start && s_job_arm (NULL, &job, why, sizeof why))
        engine_reply (self, request, XXL_BAD_REQUEST, why);
    else {
        self->children_until = 0;
        int64_t id = xxl_store_job_add (self->store, &job);
        if (id < 0)
            engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
        else {
            if (strneq (job.glue_type, "BEAN"))
                xxl_store_glue_add (self->store, id, job.glue_type, job.glue_source,
                                    job.glue_remark, job.add_time);
            if (start)
                self->next_scan = 0;
            engine_reply_id (self, request, id);
        }
    }
    xxl_job_free (&job);
}

static void
s_api_job_update (server_t *self, request_t *request)
{
    xxl_job_t job;
    if (engine_job_from_request (self, request, &job))
        return;
    char *old_source = strdup (job.glue_source);
    const char *key = xxl_msg_str (request->msg, NULL, "jobGroup", 0, XXL_MSG_MAX_NAME, NULL);
    xxl_group_t group;
    char why [512] = "";
    bool no_group = false;
    if (key && xxl_store_group_find (self->store, key, &group) == 0) {
        job.job_group = group.id;
        xxl_group_free (&group);
    }
    else
    if (key && !xxl_msg_error (request->msg)) {
        xxl_msg_fail (request->msg, "group '%s' not found", key);
        no_group = true;
    }
    if (no_group)
        engine_reply (self, request, XXL_NOT_FOUND, xxl_msg_error (request->msg));
    else
    if (xxl_msg_error (request->msg) || engine_job_read (self, request->msg, &job, 0))
        engine_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
    else
    if (job.trigger_status == 1 && s_job_arm (NULL, &job, why, sizeof why))
        engine_reply (self, request, XXL_BAD_REQUEST, why);
    else {
        job.update_time = engine_now ();
        engine_plan_forget (self, job.id);
        self->next_scan = 0;
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

static void
s_api_job_rm (server_t *self, request_t *request)
{
    xxl_job_t job;
    if (engine_job_from_request (self, request, &job))
        return;
    engine_plan_forget (self, job.id);
    //  Its log rows go too, as in XXL-JOB, and its id leaves every
    //  parent's child list, in this turn's transaction.  Runs on an agent
    //  finish there: their callbacks find no row, are acknowledged and
    //  change nothing; a RUN's answer or a re-send finds no row either
    self->children_until = 0;
    int64_t logs = xxl_store_job_rm_logs (self->store, job.id);
    if (logs < 0 || xxl_store_job_unchild (self->store, job.id) < 0
    ||  xxl_store_job_rm (self->store, job.id))
        engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
    else {
        engine_reply_begin (self, request);
        xxl_enc_map_begin (self->enc);
        xxl_enc_kint (self->enc, "id", job.id);
        xxl_enc_kint (self->enc, "deletedLogs", logs);
        xxl_enc_map_end (self->enc);
        engine_reply_end (self, request);
    }
    xxl_job_free (&job);
}

static void
s_api_job_start_stop (server_t *self, request_t *request, int start)
{
    xxl_job_t job;
    if (engine_job_from_request (self, request, &job))
        return;
    char why [512] = "";
    if (start && s_job_arm (NULL, &job, why, sizeof why))
        engine_reply (self, request, XXL_BAD_REQUEST, why);
    else {
        if (!start) {
            job.trigger_status = 0;
            job.trigger_last_time = 0;
            job.trigger_next_time = 0;
        }
        job.update_time = engine_now ();
        engine_plan_forget (self, job.id);
        self->next_scan = 0;
        if (xxl_store_job_save (self->store, &job))
            engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
        else
            engine_reply_id (self, request, job.id);
    }
    xxl_job_free (&job);
}

//  Answers with the one row `encode` finds for the request's id field
//  `key`; `what` names it in the not-found error
static void
s_show_row (server_t *self, request_t *request, const char *key,
            int (*encode) (xxl_store_t *store, xxl_enc_t *enc, int64_t id), const char *what)
{
    int64_t id = xxl_msg_int (request->msg, NULL, key, 1, 1, INT64_MAX, 0);
    if (xxl_msg_error (request->msg)) {
        engine_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
        return;
    }
    engine_reply_begin (self, request);
    int rows = encode (self->store, self->enc, id);
    if (rows <= 0) {
        char text [64];
        snprintf (text, sizeof text, "%s %" PRId64 " not found", what, id);
        engine_reply (self, request, rows < 0? XXL_FAILURE: XXL_NOT_FOUND, text);
        return;
    }
    engine_reply_end (self, request);
}

static void
s_api_job_show (server_t *self, request_t *request)
{
    s_show_row (self, request, "jobId", xxl_store_job_encode, "job");
}

//  A list reply stops before it would pass the frame limit: this much
//  is left for the rest of the reply
#define XXL_REPLY_MAX       (XXL_MSG_MAX_FRAME - 64 * 1024)

//  `truncated`, and where to go on when it is true
static void
s_encode_truncated (server_t *self, int truncated, int64_t next_offset)
{
    xxl_enc_kbool (self->enc, "truncated", truncated);
    if (truncated)
        xxl_enc_kint (self->enc, "nextOffset", next_offset);
}

static void
s_api_job_list (server_t *self, request_t *request)
{
    const char *key = xxl_msg_str (request->msg, NULL, "group", 0, XXL_MSG_MAX_NAME, NULL);
    int64_t limit = xxl_msg_int (request->msg, NULL, "limit", 0, 1, 10000, 1000);
    int64_t offset = xxl_msg_int (request->msg, NULL, "offset", 0, 0, INT64_MAX, 0);
    //  XXL-JOB's pageList filters: substrings, and the status (-1 any)
    const char *handler = xxl_msg_str (request->msg, NULL, "executorHandler", 0,
                                       XXL_MSG_MAX_NAME, "");
    const char *desc = xxl_msg_str (request->msg, NULL, "jobDesc", 0, XXL_MAX_TEXT, "");
    const char *author = xxl_msg_str (request->msg, NULL, "author", 0, XXL_MSG_MAX_NAME, "");
    int64_t status = xxl_msg_int (request->msg, NULL, "triggerStatus", 0, -1, 1, -1);
    if (xxl_msg_error (request->msg)) {
        engine_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
        return;
    }
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
    engine_reply_begin (self, request);
    xxl_enc_map_begin (self->enc);
    xxl_enc_key (self->enc, "jobs");
    int truncated;
    xxl_store_job_filter_t filter = {
        .group_id = group_id, .handler = handler, .desc = desc, .author = author,
        .status = status, .limit = limit, .offset = offset
    };
    int rows = xxl_store_job_encode_page (self->store, self->enc, XXL_REPLY_MAX, &truncated,
                                          &filter);
    xxl_enc_kint (self->enc, "total", xxl_store_job_count (self->store, &filter));
    s_encode_truncated (self, truncated, offset + (rows > 0? rows: 0));
    xxl_enc_map_end (self->enc);
    engine_reply_end (self, request);
}

static void
s_api_job_next (server_t *self, request_t *request)
{
    xxl_job_t job;
    if (engine_job_from_request (self, request, &job))
        return;
    int64_t count = xxl_msg_int (request->msg, NULL, "count", 0, 1, 100, 5);
    if (xxl_msg_error (request->msg)) {
        engine_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
        xxl_job_free (&job);
        return;
    }
    char why [512] = "";
    int64_t times [100];
    int64_t after = engine_now ();
    int made = 0;
    for (; made < count; made++) {
        int64_t next = engine_next_time (&job, after, why, sizeof why);
        if (next < 0)
            break;
        times [made] = after = next;
    }
    if (made == 0 && *why)
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
    xxl_job_free (&job);
}

static int
s_parse_shard (const char *text, int *index, int *total)
{
    //  Digits, '/', digits; no sign, space or leading zero
    const char *slash = strchr (text, '/');
    if (!slash || slash == text || !slash [1]
    ||  (text [0] == '0' && slash - text > 1) || (slash [1] == '0'))
        return -1;
    for (const char *p = text; *p; p++)
        if (p != slash && !isdigit ((unsigned char) *p))
            return -1;
    char *end = NULL;
    long i = strtol (text, &end, 10);
    if (end == text || *end != '/')
        return -1;
    const char *rest = end + 1;
    long n = strtol (rest, &end, 10);
    if (end == rest || *end || n < 1 || n > 100000 || i < 0 || i >= n)
        return -1;
    *index = (int) i;
    *total = (int) n;
    return 0;
}

static void
s_api_job_trigger (server_t *self, request_t *request)
{
    int64_t id = xxl_msg_int (request->msg, NULL, "jobId", 1, 1, INT64_MAX, 0);
    if (xxl_msg_error (request->msg)) {
        engine_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
        return;
    }
    int rc;
    snap_t *snap = engine_snap_fresh (self, id, &rc);
    if (!snap) {
        char text [64];
        snprintf (text, sizeof text, "job %" PRId64 " not found", id);
        engine_reply (self, request, rc < 0? XXL_FAILURE: XXL_NOT_FOUND,
                      rc < 0? xxl_store_error (self->store): text);
        return;
    }
    const xxl_job_t *job = &snap->job;
    trigger_args_t args = { .trigger_type = "MANUAL", .fail_retry_count = -1,
                            .shard_index = -1, .shard_total = -1 };
    args.param = xxl_msg_str (request->msg, NULL, "executorParam", 0, XXL_MAX_TEXT, NULL);
    args.address = xxl_msg_str (request->msg, NULL, "address", 0, XXL_MAX_TEXT, NULL);
    const char *shard = xxl_msg_str (request->msg, NULL, "shard", 0, 32, NULL);
    const char *type = xxl_msg_str (request->msg, NULL, "triggerType", 0, 16, "MANUAL");
    if (!xxl_msg_error (request->msg) && shard
    &&  s_parse_shard (shard, &args.shard_index, &args.shard_total))
        xxl_msg_fail (request->msg, "shard '%s' must be I/N with 0 <= I < N", shard);
    if (!xxl_msg_error (request->msg) && strneq (type, "MANUAL") && strneq (type, "API"))
        xxl_msg_fail (request->msg, "triggerType must be MANUAL or API");
    if (!xxl_msg_error (request->msg) && args.address)
        s_addresses_check (request->msg, "address", args.address);
    if (xxl_msg_error (request->msg)) {
        engine_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
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


static void
s_api_log_list (server_t *self, request_t *request)
{
    int64_t job_id = xxl_msg_int (request->msg, NULL, "jobId", 0, 1, INT64_MAX, 0);
    int64_t group_id = xxl_msg_int (request->msg, NULL, "jobGroup", 0, 1, INT64_MAX, 0);
    int64_t status = xxl_msg_int (request->msg, NULL, "logStatus", 0, 1, 3, 0);
    int64_t from = xxl_msg_int (request->msg, NULL, "triggerTimeFrom", 0, 0, INT64_MAX, 0);
    int64_t to = xxl_msg_int (request->msg, NULL, "triggerTimeTo", 0, 0, INT64_MAX, INT64_MAX);
    int64_t max_id = xxl_msg_int (request->msg, NULL, "maxId", 0, 1, INT64_MAX, INT64_MAX);
    int64_t limit = xxl_msg_int (request->msg, NULL, "limit", 0, 1, 1000, 100);
    int64_t offset = xxl_msg_int (request->msg, NULL, "offset", 0, 0, INT64_MAX, 0);
    if (xxl_msg_error (request->msg)) {
        engine_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
        return;
    }
    engine_reply_begin (self, request);
    xxl_enc_map_begin (self->enc);
    xxl_enc_key (self->enc, "logs");
    int truncated;
    xxl_store_log_filter_t filter = {
        .job_id = job_id, .group_id = group_id, .status = status, .from = from, .to = to,
        .max_id = max_id, .now = engine_now (), .limit = limit, .offset = offset
    };
    int rows = xxl_store_log_encode_page (self->store, self->enc, XXL_REPLY_MAX, &truncated,
                                          &filter);
    s_encode_truncated (self, truncated, offset + (rows > 0? rows: 0));
    xxl_enc_map_end (self->enc);
    engine_reply_end (self, request);
}

static void
s_api_log_show (server_t *self, request_t *request)
{
    s_show_row (self, request, "logId", xxl_store_log_encode, "log");
}

//  LOG_CAT and LOG_KILL: forwarded to the agent that ran the log
static void
s_api_log_forward (server_t *self, request_t *request, int kill)
{
    int64_t id = xxl_msg_int (request->msg, NULL, "logId", 1, 1, INT64_MAX, 0);
    int64_t from = xxl_msg_int (request->msg, NULL, "fromLineNum", 0, 1, INT32_MAX, 1);
    if (xxl_msg_error (request->msg)) {
        engine_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
        return;
    }
    xxl_log_t log;
    int rc = xxl_store_log_load (self->store, id, &log);
    if (rc) {
        char text [64];
        snprintf (text, sizeof text, "log %" PRId64 " not found", id);
        engine_reply (self, request, rc < 0? XXL_FAILURE: XXL_NOT_FOUND, text);
        return;
    }
    char why [512];
    if (!*log.executor_address && kill) {
        engine_reply (self, request, XXL_CONFLICT, log.trigger_code == 0
                      ? "this run is not running: it has not been sent to an agent yet"
                      : "this run is not running: its trigger failed (see its triggerMsg)");
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
        engine_reply (self, request, XXL_CONFLICT, "this run is not running");
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
    pending->client = zframe_dup (request->rid);
    pending->client_id = xxl_msg_id (request->msg);
    if (kill)
        xxl_enc_kint (self->enc, "jobId", log.job_id);
    else {
        xxl_enc_kint (self->enc, "logId", id);
        xxl_enc_kint (self->enc, "logDateTime", log.trigger_time);
        xxl_enc_kint (self->enc, "fromLineNum", from);
    }
    engine_agent_send (self, pending);
    xxl_log_free (&log);
}

static void
s_api_agent_list (server_t *self, request_t *request)
{
    engine_reply_begin (self, request);
    xxl_enc_map_begin (self->enc);
    xxl_enc_key (self->enc, "agents");
    xxl_enc_array_begin (self->enc);
    size_t cursor = 0;
    xxl_registry_entry_t entry;
    while (xxl_registry_each (self->registry, &cursor, &entry) == 0) {
        xxl_enc_map_begin (self->enc);
        xxl_enc_kstr (self->enc, "app", entry.app);
        xxl_enc_kstr (self->enc, "address", entry.address);
        xxl_enc_kint (self->enc, "updateTime", entry.update_time);
        xxl_enc_kstr (self->enc, "handlers", entry.handlers);
        xxl_enc_kbool (self->enc, "connected", entry.connected);
        xxl_enc_map_end (self->enc);
    }
    xxl_enc_array_end (self->enc);
    xxl_enc_map_end (self->enc);
    engine_reply_end (self, request);
}

//  GLUE_HISTORY: a page of a job's glue versions, newest first, without
//  their source (GLUE_SHOW has it)
static void
s_api_glue_history (server_t *self, request_t *request)
{
    int64_t limit = xxl_msg_int (request->msg, NULL, "limit", 0, 1, 100, 20);
    int64_t offset = xxl_msg_int (request->msg, NULL, "offset", 0, 0, INT64_MAX, 0);
    xxl_job_t job;
    if (engine_job_from_request (self, request, &job))
        return;
    if (xxl_msg_error (request->msg)) {
        engine_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
        xxl_job_free (&job);
        return;
    }
    engine_reply_begin (self, request);
    xxl_enc_map_begin (self->enc);
    xxl_enc_key (self->enc, "glues");
    int truncated;
    int rows = xxl_store_glue_encode_page (self->store, self->enc, XXL_REPLY_MAX, &truncated,
                                           job.id, limit, offset);
    xxl_enc_kint (self->enc, "total", xxl_store_glue_count (self->store, job.id));
    s_encode_truncated (self, truncated, offset + (rows > 0? rows: 0));
    xxl_enc_map_end (self->enc);
    engine_reply_end (self, request);
    xxl_job_free (&job);
}

//  The job of field jobId and field version (0 when absent: the newest);
//  replies itself (400, 404) and returns -1 when either is missing
static int
s_glue_version (server_t *self, request_t *request, xxl_job_t *job, int required,
                int64_t *version)
{
    *version = xxl_msg_int (request->msg, NULL, "version", required, 1, INT64_MAX, 0);
    if (engine_job_from_request (self, request, job))
        return -1;
    if (xxl_msg_error (request->msg)) {
        engine_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
        xxl_job_free (job);
        return -1;
    }
    if (*version == 0)
        *version = xxl_store_glue_last (self->store, job->id);
    char text [160];
    if (*version <= 0) {
        snprintf (text, sizeof text, "job %" PRId64 " has no glue versions", job->id);
        engine_reply (self, request, XXL_NOT_FOUND, text);
        xxl_job_free (job);
        return -1;
    }
    if (xxl_store_glue_exists (self->store, job->id, *version) != 1) {
        snprintf (text, sizeof text, "job %" PRId64 " has no glue version %" PRId64
                  " (the last %d are kept)", job->id, *version, XXL_GLUE_KEEP);
        engine_reply (self, request, XXL_NOT_FOUND, text);
        xxl_job_free (job);
        return -1;
    }
    return 0;
}

static void
s_api_glue_show (server_t *self, request_t *request)
{
    xxl_job_t job;
    int64_t version;
    if (s_glue_version (self, request, &job, 0, &version))
        return;
    engine_reply_begin (self, request);
    xxl_store_glue_encode (self->store, self->enc, job.id, version);
    engine_reply_end (self, request);
    xxl_job_free (&job);
}

//  Makes a kept version the job's glue again, as a new version
static void
s_api_glue_rollback (server_t *self, request_t *request)
{
    xxl_job_t job;
    int64_t version;
    if (s_glue_version (self, request, &job, 1, &version))
        return;
    char *type, *source;
    if (xxl_store_glue_get (self->store, job.id, version, &type, &source)) {
        engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
        free (type);
        free (source);
        xxl_job_free (&job);
        return;
    }
    free (job.glue_type);
    job.glue_type = type;
    free (job.glue_source);
    job.glue_source = source;
    free (job.glue_remark);
    job.glue_remark = zsys_sprintf ("rollback to version %" PRId64, version);
    job.update_time = job.glue_updatetime = engine_now ();
    engine_plan_forget (self, job.id);
    self->next_scan = 0;
    int made = -1;
    if (xxl_store_job_save (self->store, &job) == 0)
        made = xxl_store_glue_add (self->store, job.id, job.glue_type, job.glue_source,
                                   job.glue_remark, job.update_time);
    if (made < 0)
        engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
    else {
        engine_reply_begin (self, request);
        xxl_enc_map_begin (self->enc);
        xxl_enc_kint (self->enc, "id", job.id);
        xxl_enc_kint (self->enc, "version", made);
        xxl_enc_map_end (self->enc);
        engine_reply_end (self, request);
    }
    xxl_job_free (&job);
}

//  JOB_COPY: a stopped copy of a job, its glue source included
static void
s_api_job_copy (server_t *self, request_t *request)
{
    const char *desc = xxl_msg_str (request->msg, NULL, "jobDesc", 0, XXL_MAX_TEXT, NULL);
    xxl_job_t job;
    if (engine_job_from_request (self, request, &job))
        return;
    if (xxl_msg_error (request->msg)) {
        engine_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
        xxl_job_free (&job);
        return;
    }
    int64_t source_id = job.id;
    if (desc) {
        free (job.job_desc);
        job.job_desc = strdup (desc);
    }
    job.id = 0;
    job.trigger_status = 0;
    job.trigger_last_time = job.trigger_next_time = 0;
    job.add_time = job.update_time = job.glue_updatetime = engine_now ();
    self->children_until = 0;
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

static void
s_api_report (server_t *self, request_t *request)
{
    engine_report_refresh (self);
    engine_reply_begin (self, request);
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
    xxl_store_report_encode_days (self->store, self->enc, 30);
    xxl_enc_map_end (self->enc);
    engine_reply_end (self, request);
}

//  XXL-JOB's manual clear: by age, keep the last N, or all; finished rows
//  only (a row waiting for its trigger or result is never removed)
static void
s_api_log_clear (server_t *self, request_t *request)
{
    int64_t job_id = xxl_msg_int (request->msg, NULL, "jobId", 0, 1, INT64_MAX, 0);
    int64_t days = xxl_msg_int (request->msg, NULL, "beforeDays", 0, 0, 36500, -1);
    int64_t keep = xxl_msg_int (request->msg, NULL, "keepLast", 0, 0, INT32_MAX, -1);
    int all = xxl_msg_bool (request->msg, NULL, "all", 0, 0);
    if (!xxl_msg_error (request->msg) && (days >= 0) + (keep >= 0) + (all? 1: 0) != 1)
        xxl_msg_fail (request->msg, "give exactly one of beforeDays, keepLast, all");
    if (xxl_msg_error (request->msg)) {
        engine_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
        return;
    }
    int64_t deleted = 0, batch;
    do {
        if (days >= 0)
            batch = engine_log_delete (self, job_id, engine_now () - days * 86400000, INT64_MAX,
                                       10000);
        else
        if (keep >= 0) {
            int64_t floor = keep == 0? INT64_MAX: xxl_store_log_id_at_rank (self->store, job_id,
                                                                            keep - 1);
            batch = floor > 0? engine_log_delete (self, job_id, INT64_MAX, floor, 10000): 0;
        }
        else
            batch = engine_log_delete (self, job_id, INT64_MAX, INT64_MAX, 10000);
        deleted += batch;
    } while (batch == 10000);
    engine_reply_begin (self, request);
    xxl_enc_map_begin (self->enc);
    xxl_enc_kint (self->enc, "deleted", deleted);
    xxl_enc_map_end (self->enc);
    engine_reply_end (self, request);
}

typedef struct {
    const char *type;
    void (*fn) (server_t *self, request_t *request);
    bool read;                          //  writes nothing: its reply stands
                                        //  whether the turn commits or not
} api_entry_t;

static void s_api_job_start (server_t *self, request_t *r) { s_api_job_start_stop (self, r, 1); }
static void s_api_job_stop (server_t *self, request_t *r) { s_api_job_start_stop (self, r, 0); }
static void s_api_log_cat (server_t *self, request_t *r) { s_api_log_forward (self, r, 0); }
static void s_api_log_kill (server_t *self, request_t *r) { s_api_log_forward (self, r, 1); }

static const api_entry_t s_api_table [] = {
    { "PING", s_api_ping, true },
    { "GROUP_ADD", s_api_group_add, false },
    { "GROUP_LIST", s_api_group_list, true },
    { "GROUP_SHOW", s_api_group_show, true },
    { "GROUP_UPDATE", s_api_group_update, false },
    { "GROUP_RM", s_api_group_rm, false },
    { "JOB_ADD", s_api_job_add, false },
    { "JOB_LIST", s_api_job_list, true },
    { "JOB_SHOW", s_api_job_show, true },
    { "JOB_UPDATE", s_api_job_update, false },
    { "JOB_RM", s_api_job_rm, false },
    { "JOB_COPY", s_api_job_copy, false },
    { "JOB_START", s_api_job_start, false },
    { "JOB_STOP", s_api_job_stop, false },
    { "JOB_TRIGGER", s_api_job_trigger, false },
    { "JOB_NEXT", s_api_job_next, true },
    { "LOG_LIST", s_api_log_list, true },
    { "LOG_SHOW", s_api_log_show, true },
    { "LOG_CAT", s_api_log_cat, false },
    { "LOG_KILL", s_api_log_kill, false },
    { "AGENT_LIST", s_api_agent_list, true },
    { "GLUE_HISTORY", s_api_glue_history, true },
    { "GLUE_SHOW", s_api_glue_show, true },
    { "GLUE_ROLLBACK", s_api_glue_rollback, false },
    { "REPORT", s_api_report, true },
    { "LOG_CLEAR", s_api_log_clear, false },
    { NULL, NULL, false }
};


//  Checks the access token of a message; 0 when allowed
static int
s_authorized (server_t *self, xxl_msg_t *msg)
{
    const char *token = self->config.access_token;
    if (!token || !*token)
        return 0;
    const char *given = xxl_msg_str (msg, NULL, "accessToken", 0, 1024, NULL);
    return given && streq (given, token)? 0: -1;
}

//  Answers a frame that could not be decoded, when it had a readable id
static void
s_reply_bad_frame (server_t *self, zlistx_t *outbox, zframe_t *rid, uint64_t id,
                   const char *reason)
{
    char text [300];
    engine_warn_limited (&self->log_bad_frame, "server: bad %s message (%s): %s",
                         outbox == self->agents_out? "agent": "api",
                         id? "answered 400": "no readable id, not answered",
                         engine_printable (reason, text, sizeof text));
    if (id == 0)
        return;                         //  no readable id: nothing to answer to
    xxl_enc_reply (self->enc, id, XXL_BAD_REQUEST, reason);
    if (outbox == self->agents_out)
        engine_queue_agent (self, zframe_data (rid), zframe_size (rid), 0);
    else
        engine_queue (self, outbox, zframe_data (rid), zframe_size (rid));
}

//  Takes a ROUTER message apart into its routing id and one decoded
//  frame.  What cannot be decoded, or lacks the access token, is answered
//  (when it had a readable id) or dropped with a log line.  Returns the
//  message (the caller destroys it and *rid_p), or NULL.
//
//  On the api socket *rid_p is a return address: the routing id followed
//  by one byte, XXL_PEER_REQ when the client is a REQ socket (its message
//  had an empty delimiter frame before the body, and so must its reply;
//  engine_api_send puts it back), else XXL_PEER_DEALER.  Agents must be DEALERs.
xxl_msg_t *
engine_receive (server_t *self, zmsg_t *zmsg, zlistx_t *outbox, const char *what,
                zframe_t **rid_p)
{
    zframe_t *rid = zmsg_pop (zmsg);
    zframe_t *body = zmsg_pop (zmsg);
    xxl_msg_t *msg = NULL;
    bool api = outbox != self->agents_out;
    byte peer = XXL_PEER_DEALER;
    if (api && body && zframe_size (body) == 0 && zmsg_size (zmsg) == 1) {
        zframe_destroy (&body);         //  REQ's delimiter
        body = zmsg_pop (zmsg);
        peer = XXL_PEER_REQ;
    }
    if (rid && api) {
        //  The return address: routing id, socket (4 bytes), peer kind
        size_t size = zframe_size (rid);
        zframe_t *address = zframe_new (NULL, size + XXL_RETURN_EXTRA);
        int32_t fd = self->api_fd;
        memcpy (zframe_data (address), zframe_data (rid), size);
        memcpy (zframe_data (address) + size, &fd, sizeof fd);
        zframe_data (address) [size + sizeof fd] = peer;
        zframe_destroy (&rid);
        rid = address;
    }
    if (!rid || !body || zmsg_size (zmsg) > 0)
        //  Not one frame after the routing id: no reply is possible
        engine_warn_limited (&self->log_frames, "server: %s message with %s frames dropped"
                             " (a message is one frame; a REQ client's, an empty one"
                             " and one)", what, body? "too many": "too few");
    else {
        char reason [256];
        uint64_t id = 0;
        msg = xxl_msg_decode (zframe_data (body), zframe_size (body), &id,
                              reason, sizeof reason);
        if (!msg)
            s_reply_bad_frame (self, outbox, rid, id, reason);
        else
        //  An agent's REPLY carries no token: it counts only from the
        //  connection its request went to (engine_agent_answer), and that
        //  connection's REGISTER was checked
        if (!(outbox == self->agents_out && streq (xxl_msg_type (msg), "REPLY"))
        &&  s_authorized (self, msg)) {
            char type [80];
            engine_warn_limited (&self->log_token, "server: %s %s message with a missing or"
                                 " wrong access token refused (401)", what,
                                 engine_printable (xxl_msg_type (msg), type, sizeof type));
            xxl_enc_reply (self->enc, id, XXL_UNAUTHORIZED, "the access token is wrong");
            if (outbox == self->agents_out)
                engine_queue_agent (self, zframe_data (rid), zframe_size (rid), 0);
            else
                engine_queue (self, outbox, zframe_data (rid), zframe_size (rid));
            xxl_msg_destroy (&msg);
        }
    }
    zframe_destroy (&body);
    if (msg)
        *rid_p = rid;
    else
        zframe_destroy (&rid);
    return msg;
}

void
engine_handle_api (server_t *self, zmsg_t *zmsg)
{
    zframe_t *rid;
    self->api_read = true;              //  (a refusal stands whatever the commit)
    xxl_msg_t *msg = engine_receive (self, zmsg, self->api_out, "api", &rid);
    self->api_read = false;
    if (!msg)
        return;
    request_t request = { rid, msg };
    const api_entry_t *entry = s_api_table;
    while (entry->type && strneq (entry->type, xxl_msg_type (msg)))
        entry++;
    self->api_read = entry->read || !entry->fn;
    if (entry->fn)
        entry->fn (self, &request);
    else {
        char text [128];
        snprintf (text, sizeof text, "unknown message type '%s'", xxl_msg_type (msg));
        engine_reply (self, &request, XXL_BAD_REQUEST, text);
    }
    self->api_read = false;
    xxl_msg_destroy (&msg);
    zframe_destroy (&rid);
}
