/*  xxl_http_xxladmin_map.c -- XXL-JOB admin's endpoints, fields
    and answers (xxl_http_xxladmin.h; the bodies into a form:
    xxl_http_xxladmin_form.c).

    XXL-JOB's form names are the api's own (DESIGN §3: xxl keeps XXL-JOB's
    job and group keys), so a field goes through under its name, typed:
    what XXL-JOB sends as an int is parsed as one (an empty value is
    absent, as XXL-JOB's forms send "" for fields not shown), a group's id
    becomes the api's group text (G), an empty closed-list value is absent
    (the api's default on an add, unchanged on an update).  The names that
    differ: id (jobId, logId, group), ids[] (3.x: one id), name (3.x's
    jobDesc), start/length (2.x) and offset/pagesize (3.x) paging,
    filterTime, clearLog's type, chartInfo's dates, a user's role and
    permission (xxl_xxladmin_user_request: roles and apps).  The api
    judges every value as it judges a REST call's, so refusals carry the
    same texts.
*/

#ifndef _GNU_SOURCE
#define _GNU_SOURCE                     //  strptime
#endif
#include "xxl_http_xxladmin.h"
#include "xxl/msg.h"
#include "xxl_tz.h"

#include <assert.h>
#include <inttypes.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define streq(a, b) (strcmp ((a), (b)) == 0)

static const xxl_xxladmin_endpoint_t s_endpoints [] = {
    { "login", NULL, false, XA_NONE },
    { "logout", NULL, false, XA_NONE },
    { "toLogin", NULL, true, XA_NONE },
    { "auth/doLogin", NULL, false, XA_NONE },
    { "auth/logout", NULL, false, XA_NONE },
    { "auth/login", NULL, true, XA_NONE },
    { "jobinfo/pageList", "JOB_LIST", true, XA_JOBS },
    { "jobinfo/add", "JOB_ADD", false, XA_ID },
    { "jobinfo/insert", "JOB_ADD", false, XA_ID },
    { "jobinfo/update", "JOB_UPDATE", false, XA_NONE },
    { "jobinfo/remove", "JOB_RM", false, XA_NONE },
    { "jobinfo/delete", "JOB_RM", false, XA_NONE },
    { "jobinfo/start", "JOB_START", false, XA_NONE },
    { "jobinfo/stop", "JOB_STOP", false, XA_NONE },
    { "jobinfo/trigger", "JOB_TRIGGER", false, XA_NONE },
    { "jobinfo/nextTriggerTime", "SCHEDULE_NEXT", true, XA_NEXT },
    { "jobinfo/loadById", "JOB_SHOW", true, XA_OBJECT },
    { "jobgroup/pageList", "GROUP_LIST", true, XA_GROUPS },
    { "jobgroup/save", "GROUP_ADD", false, XA_NONE },
    { "jobgroup/insert", "GROUP_ADD", false, XA_NONE },
    { "jobgroup/update", "GROUP_UPDATE", false, XA_NONE },
    { "jobgroup/remove", "GROUP_RM", false, XA_NONE },
    { "jobgroup/delete", "GROUP_RM", false, XA_NONE },
    { "jobgroup/loadById", "GROUP_SHOW", true, XA_OBJECT },
    { "joblog/pageList", "LOG_LIST", true, XA_LOGS },
    { "joblog/logDetailCat", "LOG_CAT", true, XA_LOGCAT },
    { "joblog/logKill", "LOG_KILL", false, XA_MSG },
    { "joblog/clearLog", "LOG_CLEAR", false, XA_NONE },
    { "joblog/getJobsByGroup", "JOB_LIST", true, XA_JOBLIST },
    { "chartInfo", "REPORT", true, XA_CHART },
    { "jobcode/save", "JOB_UPDATE", false, XA_NONE },
    { "user/pageList", "USER_LIST", true, XA_USERS },
    { "user/add", "USER_ADD", false, XA_NONE },
    { "user/insert", "USER_ADD", false, XA_NONE },
    { "user/update", "USER_UPDATE", false, XA_NONE },
    { "user/remove", "USER_RM", false, XA_NONE },
    { "user/delete", "USER_RM", false, XA_NONE },
    { "user/updatePwd", NULL, false, XA_NONE },
    { "auth/updatePwd", NULL, false, XA_NONE },
    { NULL, NULL, false, XA_NONE }
};

const xxl_xxladmin_endpoint_t *
xxl_xxladmin_endpoint (const char *path)
{
    for (const xxl_xxladmin_endpoint_t *e = s_endpoints; path && e->path; e++)
        if (streq (e->path, path))
            return e;
    return NULL;
}

//  XXL-JOB 3.5's job OpenAPI: each uri and the console endpoint it acts as
//  (AdminJobBizImpl calls the console's own service with the same fields)
static const struct {
    const char *uri;
    const char *path;
} s_openapi [] = {
    { "addJob", "jobinfo/add" },
    { "updateJob", "jobinfo/update" },
    { "removeJob", "jobinfo/remove" },
    { "startJob", "jobinfo/start" },
    { "stopJob", "jobinfo/stop" },
    { "triggerJob", "jobinfo/trigger" },
    { NULL, NULL }
};

const xxl_xxladmin_endpoint_t *
xxl_xxladmin_openapi_endpoint (const char *uri)
{
    for (size_t i = 0; uri && s_openapi [i].uri; i++)
        if (streq (s_openapi [i].uri, uri))
            return xxl_xxladmin_endpoint (s_openapi [i].path);
    return NULL;
}

//  ---------------------------------------------------------------------
//  Fields

typedef enum {
    F_STR,                              //  as it is
    F_SET,                              //  a closed list's value: "" is absent
    F_INT,                              //  decimal; "" absent
    F_ID,                               //  decimal >= 1
    F_GROUP,                            //  a group's id: the api's group text
    F_FILTER,                           //  decimal; <= 0 absent (XXL-JOB's "any")
    F_GROUP_FILTER                      //  a group's id as F_GROUP; <= 0 absent
} field_kind_t;

typedef struct {
    const char *form;                   //  XXL-JOB's name
    const char *api;                    //  the api's
    field_kind_t kind;
    bool required;
} field_map_t;

//  A job's fields on an add; an update leaves glue out (XXL-JOB's update
//  keeps the job's GLUE: its source is saved by the GLUE editor)
#define S_JOB_COMMON \
    { "jobDesc", "jobDesc", F_STR, false }, \
    { "name", "jobDesc", F_STR, false }, \
    { "author", "author", F_STR, false }, \
    { "alarmEmail", "alarmEmail", F_STR, false }, \
    { "scheduleType", "scheduleType", F_SET, false }, \
    { "scheduleConf", "scheduleConf", F_STR, false }, \
    { "misfireStrategy", "misfireStrategy", F_SET, false }, \
    { "executorRouteStrategy", "executorRouteStrategy", F_SET, false }, \
    { "executorHandler", "executorHandler", F_STR, false }, \
    { "executorParam", "executorParam", F_STR, false }, \
    { "executorBlockStrategy", "executorBlockStrategy", F_SET, false }, \
    { "executorTimeout", "executorTimeout", F_INT, false }, \
    { "executorFailRetryCount", "executorFailRetryCount", F_INT, false }, \
    { "childJobId", "childJobId", F_STR, false }

static const field_map_t s_job_add [] = {
    { "jobGroup", "jobGroup", F_GROUP, true },
    S_JOB_COMMON,
    { "glueType", "glueType", F_SET, false },
    { "glueSource", "glueSource", F_STR, false },
    { "glueRemark", "glueRemark", F_STR, false },
    { NULL, NULL, F_STR, false }
};
static const field_map_t s_job_update [] = {
    { "id", "jobId", F_ID, true },
    { "jobGroup", "jobGroup", F_GROUP, false },
    S_JOB_COMMON,
    { NULL, NULL, F_STR, false }
};
static const field_map_t s_job_id [] = {
    { "id", "jobId", F_ID, true },
    { NULL, NULL, F_STR, false }
};
static const field_map_t s_job_list [] = {
    { "jobGroup", "group", F_GROUP_FILTER, false },
    { "triggerStatus", "triggerStatus", F_INT, false },
    { "jobDesc", "jobDesc", F_STR, false },
    { "name", "jobDesc", F_STR, false },
    { "executorHandler", "executorHandler", F_STR, false },
    { "author", "author", F_STR, false },
    { NULL, NULL, F_STR, false }
};
static const field_map_t s_trigger [] = {
    { "id", "jobId", F_ID, true },
    { "executorParam", "executorParam", F_STR, false },
    { "addressList", "address", F_SET, false },
    { NULL, NULL, F_STR, false }
};
static const field_map_t s_next [] = {
    { "scheduleType", "scheduleType", F_STR, false },
    { "scheduleConf", "scheduleConf", F_STR, false },
    { NULL, NULL, F_STR, false }
};
static const field_map_t s_group_add [] = {
    { "appname", "appname", F_STR, true },
    { "title", "title", F_STR, false },
    { "name", "title", F_STR, false },
    { "addressType", "addressType", F_INT, false },
    { "addressList", "addressList", F_STR, false },
    { NULL, NULL, F_STR, false }
};
static const field_map_t s_group_update [] = {
    { "id", "group", F_GROUP, true },
    { "appname", "appname", F_SET, false },
    { "title", "title", F_STR, false },
    { "name", "title", F_STR, false },
    { "addressType", "addressType", F_INT, false },
    { "addressList", "addressList", F_STR, false },
    { NULL, NULL, F_STR, false }
};
static const field_map_t s_group_id [] = {
    { "id", "group", F_GROUP, true },
    { NULL, NULL, F_STR, false }
};
static const field_map_t s_log_list [] = {
    { "jobGroup", "jobGroup", F_FILTER, false },
    { "jobId", "jobId", F_FILTER, false },
    { "logStatus", "logStatus", F_FILTER, false },
    { NULL, NULL, F_STR, false }
};
static const field_map_t s_log_cat [] = {
    { "logId", "logId", F_ID, true },
    { "fromLineNum", "fromLineNum", F_INT, false },
    { NULL, NULL, F_STR, false }
};
static const field_map_t s_log_id [] = {
    { "id", "logId", F_ID, true },
    { NULL, NULL, F_STR, false }
};
static const field_map_t s_log_clear [] = {
    { "jobId", "jobId", F_FILTER, false },
    { "jobGroup", "jobGroup", F_FILTER, false },
    { NULL, NULL, F_STR, false }
};
static const field_map_t s_jobs_of_group [] = {
    { "jobGroup", "group", F_GROUP, true },
    { NULL, NULL, F_STR, false }
};
//  jobcode/save: the job's GLUE source and remark (a JOB_UPDATE of those)
static const field_map_t s_glue_save [] = {
    { "id", "jobId", F_ID, true },
    { "glueSource", "glueSource", F_STR, true },
    { "glueRemark", "glueRemark", F_STR, true },
    { NULL, NULL, F_STR, false }
};
static const field_map_t s_user_rm [] = {
    { "username", "username", F_STR, true },
    { NULL, NULL, F_STR, false }
};
static const field_map_t s_none [] = { { NULL, NULL, F_STR, false } };

static const field_map_t *
s_map_of (const char *command, const char *path)
{
    static const struct { const char *command; const field_map_t *map; } maps [] = {
        { "JOB_ADD", s_job_add }, { "JOB_UPDATE", s_job_update }, { "JOB_RM", s_job_id },
        { "JOB_START", s_job_id }, { "JOB_STOP", s_job_id }, { "JOB_SHOW", s_job_id },
        { "JOB_LIST", s_job_list }, { "JOB_TRIGGER", s_trigger },
        { "SCHEDULE_NEXT", s_next }, { "GROUP_ADD", s_group_add },
        { "GROUP_UPDATE", s_group_update }, { "GROUP_RM", s_group_id },
        { "GROUP_SHOW", s_group_id }, { "GROUP_LIST", s_none }, { "LOG_LIST", s_log_list },
        { "LOG_CAT", s_log_cat }, { "LOG_KILL", s_log_id }, { "LOG_CLEAR", s_log_clear },
        { "USER_RM", s_user_rm },
        { NULL, NULL }
    };
    if (path && streq (path, "joblog/getJobsByGroup"))
        return s_jobs_of_group;
    if (path && streq (path, "jobcode/save"))
        return s_glue_save;
    for (size_t i = 0; command && maps [i].command; i++)
        if (streq (maps [i].command, command))
            return maps [i].map;
    return s_none;
}

//  (xxl_http_xxladmin.h)
bool
xxl_http_decimal (const char *text, long long *out)
{
    const char *digits = text + (*text == '-');
    if (!*digits || strspn (digits, "0123456789") != strlen (digits))
        return false;
    errno = 0;
    *out = strtoll (text, NULL, 10);
    return errno == 0;
}

//  The form's value of key (a string, NULL when absent)
static const char *
s_value (json_t *form, const char *key)
{
    return json_string_value (json_object_get (form, key));
}

//  An integer of the form: dflt when absent or "", -1 with why when bad
static int
s_form_int (json_t *form, const char *key, long long dflt, long long min, long long max,
            long long *out, char *why, size_t whylen)
{
    const char *text = s_value (form, key);
    *out = dflt;
    if (!text || !*text)
        return 0;
    if (!xxl_http_decimal (text, out) || *out < min || *out > max) {
        snprintf (why, whylen, "%s must be an integer from %lld to %lld, not '%.40s'", key, min,
                  max, text);
        return -1;
    }
    return 0;
}

//  Whether the request pages by 3.x's names (offset, pagesize) and not
//  2.x's (start, length): its pageList answer is 3.x's then
static bool
s_paged_3x (json_t *form)
{
    return !s_value (form, "start") && !s_value (form, "length")
        && (s_value (form, "offset") || s_value (form, "pagesize"));
}

//  The request's page: 2.x's start and length, or 3.x's offset and
//  pagesize (s_paged_3x); length 10 by default, at most most; 0, or -1
//  with why
static int
s_paging (json_t *form, long long most, long long *start, long long *length, char *why,
          size_t whylen)
{
    bool three = s_paged_3x (form);
    return s_form_int (form, three? "offset": "start", 0, 0, INT32_MAX, start, why, whylen)
        || s_form_int (form, three? "pagesize": "length", 10, 1, most, length, why, whylen);
}

static int s_time (const char *text, size_t length, int64_t *ms);

//  A date of the form (required): "yyyy-MM-dd HH:mm:ss" or "yyyy-MM-dd"
//  (its midnight), the scheduler's local time, into epoch ms
static int
s_form_date (json_t *form, const char *key, int64_t *ms, char *why, size_t whylen)
{
    const char *text = s_value (form, key);
    if (!text || !*text) {
        snprintf (why, whylen, "%s is required ('yyyy-MM-dd HH:mm:ss')", key);
        return -1;
    }
    char whole [32];
    if (strlen (text) == 10)
        snprintf (whole, sizeof whole, "%s 00:00:00", text);
    else
        snprintf (whole, sizeof whole, "%.31s", text);
    if (strlen (text) >= sizeof whole || s_time (whole, strlen (whole), ms)) {
        snprintf (why, whylen, "%s must be 'yyyy-MM-dd HH:mm:ss' (or 'yyyy-MM-dd'), not"
                  " '%.40s'", key, text);
        return -1;
    }
    return 0;
}

//  The refusal of two fields that set one (title or jobDesc, and 3.5's
//  name) to different values
static void
s_differ (const char *field, const char *alias, char *why, size_t whylen)
{
    snprintf (why, whylen, "%s and %s differ (%s is XXL-JOB 3.5's %s): give one of them", field,
              alias, alias, field);
}

int
xxl_xxladmin_request (const xxl_xxladmin_endpoint_t *endpoint, json_t *form, json_t **fields,
                      char *why, size_t whylen)
{
    assert (endpoint && json_is_object (form) && fields);
    *fields = json_object ();
    json_t *out = *fields;
    //  ids[] (3.x): one id, as id
    const char *ids = s_value (form, "ids[]");
    if (ids && !json_object_get (form, "id"))
        json_object_set_new (form, "id", json_string (ids));
    if (endpoint->command && streq (endpoint->command, "USER_RM")
    &&  !(s_value (form, "username") && *s_value (form, "username"))
    &&  s_value (form, "id")) {
        snprintf (why, whylen, "%s needs username: xxl's users have no numeric id"
                  " (user/pageList shows id null)", endpoint->path);
        goto refused;
    }
    for (const field_map_t *f = s_map_of (endpoint->command, endpoint->path); f->form; f++) {
        const char *text = s_value (form, f->form);
        if (!text || (!*text && f->kind != F_STR)) {
            if (f->required && !json_object_get (out, f->api)) {
                snprintf (why, whylen, "%s is required", f->form);
                goto refused;
            }
            continue;
        }
        if (f->kind == F_STR || f->kind == F_SET) {
            //  (XXL-JOB 3.5's name beside the field it stands for, title or
            //  jobDesc: the same value, or refused, neither winning unseen)
            const char *before = json_string_value (json_object_get (out, f->api));
            if (before && !streq (before, text)) {
                s_differ (f->api, f->form, why, whylen);
                goto refused;
            }
            json_object_set_new (out, f->api, json_string (text));
            continue;
        }
        long long number;
        if (!xxl_http_decimal (text, &number)) {
            snprintf (why, whylen, "%s must be an integer, not '%.40s'", f->form, text);
            goto refused;
        }
        if (f->kind == F_ID && number < 1) {
            snprintf (why, whylen, "%s must be 1 or more, not %lld", f->form, number);
            goto refused;
        }
        if ((f->kind == F_FILTER || f->kind == F_GROUP_FILTER) && number <= 0)
            continue;
        if (f->kind == F_GROUP || f->kind == F_GROUP_FILTER) {
            if (number < 1) {
                snprintf (why, whylen, "%s must be a group's id (1 or more), not %lld", f->form,
                          number);
                goto refused;
            }
            char group [32];
            snprintf (group, sizeof group, "%lld", number);
            json_object_set_new (out, f->api, json_string (group));
        }
        else
            json_object_set_new (out, f->api, json_integer (number));
    }
    const char *command = endpoint->command? endpoint->command: "";
    long long number;
    if (endpoint->shape == XA_JOBLIST) {
        //  (every job of the group: one answer holds JOB_LIST's most)
        json_object_set_new (out, "limit", json_integer (10000));
        json_object_set_new (out, "triggerStatus", json_integer (-1));
    }
    if (endpoint->shape == XA_JOBS || endpoint->shape == XA_LOGS) {
        //  2.x: start, length; 3.x: offset, pagesize
        long long start, length;
        if (s_paging (form, streq (command, "LOG_LIST")? 999: 10000, &start, &length, why,
                      whylen))
            goto refused;
        json_object_set_new (out, "offset", json_integer (start));
        //  (LOG_LIST counts nothing: one row more tells whether more follow)
        json_object_set_new (out, "limit", json_integer (length + streq (command, "LOG_LIST")));
        if (streq (command, "JOB_LIST") && !json_object_get (out, "triggerStatus"))
            json_object_set_new (out, "triggerStatus", json_integer (-1));
    }
    if (streq (command, "LOG_LIST")) {
        const char *range = s_value (form, "filterTime");
        int64_t from, to;
        if (range && *range) {
            if (xxl_xxladmin_range (range, &from, &to)) {
                snprintf (why, whylen, "filterTime must be 'yyyy-MM-dd HH:mm:ss - yyyy-MM-dd"
                          " HH:mm:ss', not '%.80s'", range);
                goto refused;
            }
            json_object_set_new (out, "triggerTimeFrom", json_integer (from));
            json_object_set_new (out, "triggerTimeTo", json_integer (to));
        }
    }
    if (streq (endpoint->path, "jobcode/save")) {
        //  XXL-JOB's rules: a source not blank, a remark of 4 to 100 characters
        const char *source = json_string_value (json_object_get (out, "glueSource"));
        const char *remark = json_string_value (json_object_get (out, "glueRemark"));
        if (strspn (source, " \t\r\n\v\f") == strlen (source)) {
            snprintf (why, whylen, "glueSource is required (not blank)");
            goto refused;
        }
        size_t characters = 0;
        for (const char *p = remark; *p; p++)
            characters += ((unsigned char) *p & 0xC0) != 0x80;
        if (characters < 4 || characters > 100) {
            snprintf (why, whylen, "glueRemark must be 4 to 100 characters (XXL-JOB's limit),"
                      " not %zu", characters);
            goto refused;
        }
    }
    if (endpoint->shape == XA_CHART) {
        //  (REPORT: the days holding from and to, both included)
        int64_t from, to;
        if (s_form_date (form, "startDate", &from, why, whylen)
        ||  s_form_date (form, "endDate", &to, why, whylen))
            goto refused;
        if (from > to) {
            snprintf (why, whylen, "startDate (%.40s) is after endDate (%.40s)",
                      s_value (form, "startDate"), s_value (form, "endDate"));
            goto refused;
        }
        json_object_set_new (out, "from", json_integer (from));
        json_object_set_new (out, "to", json_integer (to));
    }
    if (streq (command, "JOB_TRIGGER") && !json_object_get (out, "executorParam"))
        //  (XXL-JOB: a trigger's param replaces the job's, "" when not given)
        json_object_set_new (out, "executorParam", json_string (""));
    if (streq (command, "LOG_CAT") && !json_object_get (out, "fromLineNum"))
        json_object_set_new (out, "fromLineNum", json_integer (1));
    if (streq (command, "SCHEDULE_NEXT"))
        json_object_set_new (out, "count", json_integer (5));
    if (streq (command, "LOG_CLEAR")) {
        //  XXL-JOB's clear types: 1-4 older than 1, 3, 6, 12 months; 5-8
        //  all but the newest 1k, 10k, 30k, 100k; 9 all
        static const int days [] = { 0, 30, 90, 180, 365 };
        static const int keep [] = { 1000, 10000, 30000, 100000 };
        if (s_form_int (form, "type", 0, 1, 9, &number, why, whylen))
            goto refused;
        if (number == 0) {
            snprintf (why, whylen, "type is required (1-9, XXL-JOB's clear types)");
            goto refused;
        }
        if (number <= 4)
            json_object_set_new (out, "beforeDays", json_integer (days [number]));
        else
        if (number <= 8)
            json_object_set_new (out, "keepLast", json_integer (keep [number - 5]));
        else
            json_object_set_new (out, "all", json_true ());
    }
    return 0;
refused:
    json_decref (*fields);
    *fields = NULL;
    return -1;
}

//  ---------------------------------------------------------------------
//  Answers

json_t *
xxl_xxladmin_returnt (int code, const char *msg, json_t *content)
{
    json_t *value = content? content: json_null ();
    //  (a reason quoting the caller's bytes, cut at a length, may not be
    //  UTF-8: JSON must be)
    char *fixed = msg? xxl_utf8_repair (msg): NULL;
    json_t *text = msg? json_string (fixed? fixed: msg): json_null ();
    free (fixed);
    return json_pack ("{s:i, s:o, s:O, s:o}", "code", code,
                      "msg", text? text: json_string ("(a reason that is not UTF-8)"),
                      "content", value, "data", value);
}

//  A pageList's answer, rows taken: a request paged by 3.x's names gets
//  3.x's ReturnT of its PageModel {offset, pagesize, total, data}, any
//  other 2.x's DataTables map {recordsTotal, recordsFiltered, data} (the
//  two clash on data: each client finds its own)
static json_t *
s_page (json_t *form, json_int_t total, json_t *rows)
{
    if (s_paged_3x (form)) {
        long long start, length;
        char why [256];
        if (s_paging (form, INT32_MAX, &start, &length, why, sizeof why))
            start = 0, length = 0;
        return xxl_xxladmin_returnt (200, NULL, json_pack ("{s:I, s:I, s:I, s:o}",
            "offset", (json_int_t) start, "pagesize", (json_int_t) length, "total", total,
            "data", rows));
    }
    return json_pack ("{s:I, s:I, s:o}", "recordsTotal", total, "recordsFiltered", total,
                      "data", rows);
}

//  Whether haystack holds needle, ASCII letters in either case (XXL-JOB's LIKE)
static bool
s_contains (const char *haystack, const char *needle)
{
    if (!needle || !*needle)
        return true;
    size_t n = strlen (needle);
    for (const char *p = haystack? haystack: ""; *p; p++)
        if (strncasecmp (p, needle, n) == 0)
            return true;
    return false;
}

//  XXL-JOB 3.5's name of a row's field (3.5 renamed a group's title and a
//  job's jobDesc to name): key's value as "name" too
static void
s_name_too (json_t *row, const char *key)
{
    json_t *value = json_object_get (row, key);
    if (json_is_string (value) && !json_object_get (row, "name"))
        json_object_set (row, "name", value);
}

//  XXL-JOB's jobs: each also with 3.5's name (its jobDesc); a new array
static json_t *
s_jobs_fit (json_t *jobs)
{
    json_t *rows = json_is_array (jobs)? json_deep_copy (jobs): json_array ();
    size_t index;
    json_t *job;
    json_array_foreach (rows, index, job)
        s_name_too (job, "jobDesc");
    return rows;
}

//  XXL-JOB's group: registryList, the address list's entries; 3.5's name
//  (its title)
static void
s_group_fit (json_t *group)
{
    s_name_too (group, "title");
    const char *list = json_string_value (json_object_get (group, "addressList"));
    json_t *registry = json_array ();
    for (const char *p = list? list: ""; *p; ) {
        const char *comma = strchr (p, ',');
        size_t length = comma? (size_t) (comma - p): strlen (p);
        if (length)
            json_array_append_new (registry, json_stringn (p, length));
        p += length + (comma != NULL);
    }
    if (json_array_size (registry) == 0) {
        //  (XXL-JOB: null when no address)
        json_decref (registry);
        registry = json_null ();
    }
    json_object_set_new (group, "registryList", registry);
}

//  The HTML entity of a character XXL-JOB escapes in a log page (& < > " '),
//  NULL for any other
static const char *
s_entity (char c)
{
    return c == '&'? "&amp;": c == '<'? "&lt;": c == '>'? "&gt;"
         : c == '"'? "&quot;": c == '\''? "&#39;": NULL;
}

//  HTML-escaped text (a new JSON string)
static json_t *
s_html_escaped (const char *text)
{
    size_t size = 1;
    for (const char *p = text; *p; p++)
        size += s_entity (*p)? strlen (s_entity (*p)): 1;
    char *out = (char *) malloc (size), *q = out;
    if (!out)
        return json_string ("");
    for (const char *p = text; *p; p++) {
        const char *with = s_entity (*p);
        if (with) {
            memcpy (q, with, strlen (with));
            q += strlen (with);
        }
        else
            *q++ = *p;
    }
    *q = 0;
    json_t *value = json_string (out);
    free (out);
    return value? value: json_string ("");
}

//  Epoch ms as "yyyy-MM-dd HH:mm:ss", the wall time in zone tz then
static void
s_zone_time (int64_t ms, const xxl_tz_t *tz, char *buf, size_t buflen)
{
    int64_t local = ms + (int64_t) xxl_tz_offset_utc (tz, xxl_tz_floordiv (ms, 1000), NULL)
                       * 1000;
    int64_t days = xxl_tz_floordiv (local, 86400000);
    int64_t rest = local - days * 86400000;
    int64_t year;
    int month, day;
    xxl_tz_civil_from_days (days, &year, &month, &day);
    snprintf (buf, buflen, "%04" PRId64 "-%02d-%02d %02d:%02d:%02d", year, month, day,
              (int) (rest / 3600000), (int) (rest / 60000 % 60), (int) (rest / 1000 % 60));
}

json_t *
xxl_xxladmin_answer (const xxl_xxladmin_endpoint_t *endpoint, json_t *form, int code,
                     const char *text, json_t *content, const char *zone)
{
    assert (endpoint);
    if (code != 200)
        return xxl_xxladmin_returnt (500, text && *text? text: "refused", NULL);
    char why [256];
    switch (endpoint->shape) {
        case XA_ID: {
            json_t *id = json_object_get (content, "id");
            char number [32] = "";
            if (json_is_integer (id))
                snprintf (number, sizeof number, "%" JSON_INTEGER_FORMAT, json_integer_value (id));
            return xxl_xxladmin_returnt (200, NULL, *number? json_string (number): NULL);
        }
        case XA_MSG:
            //  (XXL-JOB's logKill: the executor's message as its content)
            return xxl_xxladmin_returnt (200, NULL, text && *text? json_string (text): NULL);
        case XA_OBJECT: {
            json_t *copy = json_deep_copy (content);
            if (json_is_object (copy) && json_object_get (copy, "appname"))
                s_group_fit (copy);
            else
            if (json_is_object (copy))
                s_name_too (copy, "jobDesc");
            return xxl_xxladmin_returnt (200, NULL, copy);
        }
        case XA_JOBS: {
            json_t *jobs = json_object_get (content, "jobs");
            json_t *total = json_object_get (content, "total");
            return s_page (form, json_integer_value (total), s_jobs_fit (jobs));
        }
        case XA_GROUPS: {
            long long start, length;
            if (s_paging (form, 10000, &start, &length, why, sizeof why))
                return xxl_xxladmin_returnt (500, why, NULL);
            const char *appname = s_value (form, "appname");
            //  (3.5's filter is name; title and name both: the same text)
            const char *title = s_value (form, "title")? s_value (form, "title")
                                                       : s_value (form, "name");
            if (s_value (form, "name") && !streq (title, s_value (form, "name"))) {
                s_differ ("title", "name", why, sizeof why);
                return xxl_xxladmin_returnt (500, why, NULL);
            }
            json_t *groups = json_object_get (content, "groups");
            json_t *rows = json_array ();
            json_int_t matched = 0;
            size_t index;
            json_t *group;
            json_array_foreach (groups, index, group) {
                if (!s_contains (json_string_value (json_object_get (group, "appname")), appname)
                ||  !s_contains (json_string_value (json_object_get (group, "title")), title))
                    continue;
                if (matched >= start && matched < start + length) {
                    json_t *copy = json_deep_copy (group);
                    s_group_fit (copy);
                    json_array_append_new (rows, copy);
                }
                matched++;
            }
            return s_page (form, matched, rows);
        }
        case XA_LOGS: {
            long long start, length;
            json_t *logs = json_object_get (content, "logs");
            if (s_paging (form, 999, &start, &length, why, sizeof why))
                return xxl_xxladmin_returnt (500, why, NULL);
            json_t *rows = json_array ();
            size_t count = json_array_size (logs);
            for (size_t i = 0; i < count && (long long) i < length; i++)
                json_array_append (rows, json_array_get (logs, i));
            //  (no count: those up to this page, and one more when more
            //  follow; a page past the end: content's count, the rows that
            //  exist, never more than start)
            json_int_t total = start + (json_int_t) json_array_size (rows)
                             + ((long long) count > length || json_is_true (
                                    json_object_get (content, "truncated")));
            json_t *counted = json_object_get (content, "count");
            if (count == 0 && json_is_integer (counted) && json_integer_value (counted) < start)
                total = json_integer_value (counted) < 0? 0: json_integer_value (counted);
            return s_page (form, total, rows);
        }
        case XA_JOBLIST: {
            json_t *jobs = json_object_get (content, "jobs");
            json_int_t total = json_integer_value (json_object_get (content, "total"));
            if (!json_is_array (jobs) || total > (json_int_t) json_array_size (jobs)) {
                snprintf (why, sizeof why, "the group has %" JSON_INTEGER_FORMAT " jobs, more"
                          " than getJobsByGroup's 10000: page them with jobinfo/pageList",
                          total);
                return xxl_xxladmin_returnt (500, why, NULL);
            }
            return xxl_xxladmin_returnt (200, NULL, s_jobs_fit (jobs));
        }
        case XA_CHART: {
            //  REPORT's days, newest first, as XXL-JOB's lists, oldest
            //  first, with their sums; no day: the last 7, zeros (XXL-JOB's)
            json_t *days = json_object_get (content, "days");
            json_t *list = json_array (), *running = json_array (), *suc = json_array (),
                   *fail = json_array ();
            json_int_t sums [3] = { 0, 0, 0 };
            static const char *keys [3] = { "runningCount", "sucCount", "failCount" };
            json_t *lists [3] = { running, suc, fail };
            size_t count = json_array_size (days);
            for (size_t i = count; i > 0; i--) {
                json_t *day = json_array_get (days, i - 1);
                time_t seconds = (time_t) (json_integer_value (json_object_get (day,
                                                                "triggerDay")) / 1000);
                struct tm tm;
                char when [32];
                if (!localtime_r (&seconds, &tm)
                ||  !strftime (when, sizeof when, "%Y-%m-%d", &tm))
                    continue;
                json_array_append_new (list, json_string (when));
                for (int k = 0; k < 3; k++) {
                    json_int_t n = json_integer_value (json_object_get (day, keys [k]));
                    json_array_append_new (lists [k], json_integer (n));
                    sums [k] += n;
                }
            }
            if (json_array_size (list) == 0) {
                time_t now = time (NULL);
                for (int back = 6; back >= 0; back--) {
                    time_t seconds = now - (time_t) back * 86400;
                    struct tm tm;
                    char when [32];
                    if (localtime_r (&seconds, &tm)
                    &&  strftime (when, sizeof when, "%Y-%m-%d", &tm)) {
                        json_array_append_new (list, json_string (when));
                        for (int k = 0; k < 3; k++)
                            json_array_append_new (lists [k], json_integer (0));
                    }
                }
            }
            json_t *chart = json_pack ("{s:o, s:o, s:o, s:o, s:I, s:I, s:I}",
                "triggerDayList", list, "triggerDayCountRunningList", running,
                "triggerDayCountSucList", suc, "triggerDayCountFailList", fail,
                "triggerCountRunningTotal", sums [0], "triggerCountSucTotal", sums [1],
                "triggerCountFailTotal", sums [2]);
            return xxl_xxladmin_returnt (200, NULL, chart);
        }
        case XA_NEXT: {
            //  (the times in zone, the one SCHEDULE_NEXT planned them in)
            const xxl_tz_t *tz = xxl_tz_get (zone && *zone? zone: NULL, NULL, 0);
            json_t *next = json_object_get (content, "next");
            json_t *times = json_array ();
            size_t index;
            json_t *at;
            json_array_foreach (next, index, at) {
                char when [48];
                s_zone_time (json_integer_value (at), tz? tz: xxl_tz_get (NULL, NULL, 0),
                             when, sizeof when);
                json_array_append_new (times, json_string (when));
            }
            return xxl_xxladmin_returnt (200, NULL, times);
        }
        case XA_LOGCAT: {
            const char *log = json_string_value (json_object_get (content, "logContent"));
            json_t *end = json_object_get (content, "isEnd");
            json_t *page = json_pack ("{s:O, s:O, s:o, s:O, s:O}",
                "fromLineNum", json_object_get (content, "fromLineNum")
                               ? json_object_get (content, "fromLineNum"): json_null (),
                "toLineNum", json_object_get (content, "toLineNum")
                             ? json_object_get (content, "toLineNum"): json_null (),
                "logContent", s_html_escaped (log? log: ""),
                "end", end? end: json_false (),
                "isEnd", end? end: json_false ());
            return xxl_xxladmin_returnt (200, NULL, page);
        }
        default:
            return xxl_xxladmin_returnt (200, NULL, NULL);
    }
}

//  Whether text is absent or blank (Java's StringTool.isBlank)
static bool
s_blank (const char *text)
{
    for (const char *p = text? text: ""; *p; p++)
        if (!isspace ((unsigned char) *p))
            return false;
    return true;
}

json_t *
xxl_xxladmin_settled (const xxl_xxladmin_endpoint_t *endpoint, json_t *form)
{
    assert (endpoint && json_is_object (form));
    if (endpoint->shape == XA_NEXT) {
        //  XXL-JOB: no times, no error, for a blank type or conf (3.3+) and
        //  for a type it plans none of (2.x: NONE, FIX_DELAY, unknown; 3.x:
        //  unknown is NONE); CRON and FIX_RATE are judged by SCHEDULE_NEXT
        const char *type = s_value (form, "scheduleType");
        if (s_blank (type) || s_blank (s_value (form, "scheduleConf"))
        ||  !(streq (type, "CRON") || streq (type, "FIX_RATE")))
            return xxl_xxladmin_returnt (200, NULL, json_array ());
    }
    return NULL;
}

//  "yyyy-MM-dd HH:mm:ss" at text, local time, into epoch ms
static int
s_time (const char *text, size_t length, int64_t *ms)
{
    char copy [32];
    if (length != 19)
        return -1;
    memcpy (copy, text, length);
    copy [length] = 0;
    struct tm tm;
    memset (&tm, 0, sizeof tm);
    char *end = strptime (copy, "%Y-%m-%d %H:%M:%S", &tm);
    if (!end || *end)
        return -1;
    tm.tm_isdst = -1;
    time_t seconds = mktime (&tm);
    if (seconds == (time_t) -1 || seconds < 0)
        return -1;
    *ms = (int64_t) seconds * 1000;
    return 0;
}

int
xxl_xxladmin_range (const char *text, int64_t *from, int64_t *to)
{
    const char *dash = text? strstr (text, " - "): NULL;
    if (!dash || s_time (text, (size_t) (dash - text), from)
    ||  s_time (dash + 3, strlen (dash + 3), to) || *to < *from)
        return -1;
    *to += 999;                         //  (the whole last second)
    return 0;
}

//  ---------------------------------------------------------------------
//  Users

bool
xxl_xxladmin_needs_groups (const xxl_xxladmin_endpoint_t *endpoint)
{
    const char *command = endpoint && endpoint->command? endpoint->command: "";
    return streq (command, "USER_LIST") || streq (command, "USER_ADD")
        || streq (command, "USER_UPDATE");
}

//  A new copy of text without the spaces around it (Java's trim)
static char *
s_trimmed (const char *text)
{
    const char *start = text? text: "";
    while (*start && (unsigned char) *start <= ' ')
        start++;
    size_t length = strlen (start);
    while (length && (unsigned char) start [length - 1] <= ' ')
        length--;
    return strndup (start, length);
}

int
xxl_xxladmin_user_request (const xxl_xxladmin_endpoint_t *endpoint, json_t *form,
                           json_t *groups, json_t **fields, char *why, size_t whylen)
{
    assert (endpoint && json_is_object (form) && fields);
    bool add = endpoint->command && streq (endpoint->command, "USER_ADD");
    *fields = json_object ();
    char *username = s_trimmed (s_value (form, "username"));
    char *password = s_trimmed (s_value (form, "password"));
    char *apps = NULL;
    long long role;
    if (!*username) {
        snprintf (why, whylen, "username is required");
        goto refused;
    }
    if (add && !*password) {
        snprintf (why, whylen, "password is required");
        goto refused;
    }
    if (s_form_int (form, "role", 0, 0, 1, &role, why, whylen))
        goto refused;
    if (role == 0) {
        //  permission's group ids, the apps of those groups
        const char *permission = s_value (form, "permission");
        size_t size = 1;
        for (const char *p = permission? permission: ""; *p; ) {
            const char *comma = strchr (p, ',');
            size_t length = comma? (size_t) (comma - p): strlen (p);
            char item [32];
            long long id;
            snprintf (item, sizeof item, "%.*s", (int) (length < 31? length: 31), p);
            if (length >= sizeof item || !xxl_http_decimal (item, &id) || id < 1) {
                snprintf (why, whylen, "permission must be group ids separated by commas,"
                          " not '%.40s'", permission);
                goto refused;
            }
            const char *appname = NULL;
            size_t index;
            json_t *group;
            json_array_foreach (json_object_get (groups, "groups"), index, group)
                if (json_integer_value (json_object_get (group, "id")) == id)
                    appname = json_string_value (json_object_get (group, "appname"));
            if (!appname) {
                snprintf (why, whylen, "permission names group %lld, which does not exist"
                          " (or is not among your apps)", id);
                goto refused;
            }
            char *more = (char *) realloc (apps, size + strlen (appname) + 1);
            if (!more) {
                snprintf (why, whylen, "out of memory");
                goto refused;
            }
            if (!apps)
                *more = 0;
            apps = more;
            if (*apps)
                strcat (apps, ",");
            strcat (apps, appname);
            size = strlen (apps) + 2;
            p += length + (comma != NULL);
        }
        if (!apps) {
            snprintf (why, whylen, "role 0 needs permission (the ids of the user's groups):"
                      " an xxl user without apps reaches every app (role 1 for an admin)");
            goto refused;
        }
    }
    json_object_set_new (*fields, "username", json_string (username));
    if (*password)
        json_object_set_new (*fields, "password", json_string (password));
    //  (XXL-JOB's user of some groups also edits their jobs; xxl's
    //  operator triggers, starts, stops and kills them, no more)
    json_object_set_new (*fields, "role", json_string (role == 1? "admin": "operator"));
    json_object_set_new (*fields, "apps", json_string (apps? apps: ""));
    free (username);
    free (password);
    free (apps);
    return 0;
refused:
    free (username);
    free (password);
    free (apps);
    json_decref (*fields);
    *fields = NULL;
    return -1;
}

json_t *
xxl_xxladmin_users (json_t *form, int code, const char *text, json_t *users, json_t *groups)
{
    if (code != 200)
        return xxl_xxladmin_returnt (500, text && *text? text: "refused", NULL);
    char why [256];
    long long start, length, role;
    if (s_paging (form, 10000, &start, &length, why, sizeof why)
    ||  s_form_int (form, "role", -1, -1, 1, &role, why, sizeof why))
        return xxl_xxladmin_returnt (500, why, NULL);
    const char *name = s_value (form, "username");
    json_t *rows = json_array ();
    json_int_t matched = 0;
    size_t index;
    json_t *user;
    json_array_foreach (json_object_get (users, "users"), index, user) {
        const char *xxl_role = json_string_value (json_object_get (user, "role"));
        int its_role = xxl_role && streq (xxl_role, "admin")? 1: 0;
        if (!s_contains (json_string_value (json_object_get (user, "username")), name)
        ||  (role >= 0 && its_role != role))
            continue;
        if (matched >= start && matched < start + length) {
            //  permission: the ids of the groups of its apps
            const char *apps = json_string_value (json_object_get (user, "apps"));
            json_t *permission = json_null ();
            if (its_role == 0 && apps && *apps) {
                char ids [4096] = "";
                size_t gi;
                json_t *group;
                json_array_foreach (json_object_get (groups, "groups"), gi, group) {
                    const char *appname = json_string_value (json_object_get (group, "appname"));
                    size_t n = appname? strlen (appname): 0;
                    bool listed = false;
                    for (const char *p = apps; n && *p && !listed; ) {
                        const char *comma = strchr (p, ',');
                        size_t item = comma? (size_t) (comma - p): strlen (p);
                        listed = item == n && strncmp (p, appname, n) == 0;
                        p += item + (comma != NULL);
                    }
                    if (listed && strlen (ids) + 24 < sizeof ids)
                        snprintf (ids + strlen (ids), sizeof ids - strlen (ids), "%s%"
                                  JSON_INTEGER_FORMAT, *ids? ",": "",
                                  json_integer_value (json_object_get (group, "id")));
                }
                json_decref (permission);
                permission = json_string (ids);
            }
            json_t *addTime = json_object_get (user, "addTime");
            json_array_append_new (rows, json_pack ("{s:n, s:O, s:n, s:i, s:o, s:O, s:O, s:O}",
                "id", "username", json_object_get (user, "username"), "password",
                "role", its_role, "permission", permission,
                "apps", apps? json_object_get (user, "apps"): json_string (""),
                "xxlRole", xxl_role? json_object_get (user, "role"): json_null (),
                "addTime", addTime? addTime: json_null ()));
        }
        matched++;
    }
    return s_page (form, matched, rows);
}
