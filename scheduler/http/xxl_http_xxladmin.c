/*  xxl_http_xxladmin.c -- XXL-JOB admin's console endpoints under
    http/xxl_admin_path (xxl_http_int.h; docs/migrating.md, "Scripts that
    call the admin"; docs/http.md).

    A script logs in (POST login, 3.x auth/doLogin: userName, password,
    ifRemember; logout and toLogin are 3.x's auth/logout and auth/login) and gets the
    cookie XXL_JOB_LOGIN_IDENTITY: a console session (HTTP_SESSION, the same
    password check, limiter, idle limit and logout), HttpOnly, SameSite=Strict,
    on the prefix's path, Secure under TLS.  A bearer token (xxl-ctl token add)
    is taken instead on every path.  Then each endpoint's form becomes the api
    command its REST route makes (xxl_http_xxladmin_map.c), sent with the
    caller's credentials: the engine judges roles, apps, fields and audit as for
    /api/v1, and its reply becomes XXL-JOB's answer.  The user/ endpoints but
    remove read GROUP_LIST first (XXL-JOB names a user's groups by id, xxl a
    key's apps by name); a session's user/update or user/remove of its own user
    is refused first (HTTP_ME), as XXL-JOB refuses it; updatePwd is PUT
    /api/v1/me/password's.  Every answer is JSON: ReturnT {"code", "msg",
    "content", "data"} (HTTP 200, as XXL-JOB answers a refusal: code 500 and the
    reason), a pageList's page in 2.x's or 3.x's shape as its paging names ask
    (xxl_http_xxladmin.h); no credentials, or a session gone: 302 to
    <prefix>/toLogin (XXL-JOB's answer) with a ReturnT 500 saying so, and
    toLogin answers that ReturnT.

    CSRF: scripts send no token, so the session of this cookie is never
    asked for one (the console's xxl_session is not taken here).  Instead
    a browser's request from another site cannot act: the cookie is
    SameSite=Strict (never sent with a request another site starts, a
    top-level navigation included), a request whose Origin is not this
    Host's or whose Sec-Fetch-Site is neither same-origin nor none is
    refused (403), a body must be a form, and no answer allows another
    origin to read it (no CORS headers).

    Runs on the connection's thread; calls xxl_http_auth.c,
    xxl_http_call.c and xxl_http_answer.c of the server's files.
*/

#include "xxl_http_int.h"
#include "xxl_http_xxladmin.h"
#include "xxl/msg.h"
#include "xxl_secret.h"

//  A ReturnT as status (taken)
static void
s_returnt (answer_t *answer, int status, int code, const char *msg)
{
    xxl_http_answer_json (answer, status, xxl_xxladmin_returnt (code, msg, NULL));
}

//  XXL-JOB's answer to a request without a login: 302 to toLogin
static void
s_not_logged_in (xxl_http_t *self, answer_t *answer, bool had_cookie)
{
    char msg [160];
    snprintf (msg, sizeof msg, "not logged in: POST %s/login with userName and password,"
              " or send Authorization: Bearer <token>", self->xadmin);
    s_returnt (answer, 302, 500, msg);
    char *location = zsys_sprintf ("%s/toLogin", self->xadmin);
    snprintf (answer->location, sizeof answer->location, "%s", location);
    zstr_free (&location);
    if (had_cookie)
        xxl_http_named_cookie (self, answer, XXL_HTTP_XXLADMIN_COOKIE, self->xadmin, NULL, false);
}

//  Whether a browser sent the request from another site: its Origin is
//  not this Host, or its Sec-Fetch-Site is neither same-origin nor none
//  (scripts send neither header)
static bool
s_cross_site (struct MHD_Connection *conn)
{
    const char *site = MHD_lookup_connection_value (conn, MHD_HEADER_KIND, "Sec-Fetch-Site");
    if (site && strcasecmp (site, "same-origin") && strcasecmp (site, "none"))
        return true;
    const char *origin = MHD_lookup_connection_value (conn, MHD_HEADER_KIND, "Origin");
    if (!origin)
        return false;
    const char *host = MHD_lookup_connection_value (conn, MHD_HEADER_KIND, "Host");
    const char *name = strstr (origin, "://");
    return !host || !name || strcasecmp (name + 3, host) != 0;
}

typedef struct {
    json_t *form;
    char why [160];
} query_ctx_t;

//  The query's keys into the form (a key the body gave too is refused)
static enum MHD_Result
s_query_each (void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void) kind;
    query_ctx_t *ctx = (query_ctx_t *) cls;
    if (ctx->why [0])
        return MHD_NO;
    if (strlen (key) > XXL_XXLADMIN_MAX_KEY)
        snprintf (ctx->why, sizeof ctx->why, "the query has a field name over %d bytes",
                  XXL_XXLADMIN_MAX_KEY);
    else
    if (json_object_get (ctx->form, key))
        snprintf (ctx->why, sizeof ctx->why, "the request gives %.64s twice", key);
    else
    if (json_object_size (ctx->form) >= XXL_XXLADMIN_MAX_FIELDS)
        snprintf (ctx->why, sizeof ctx->why, "the request has more than %d fields",
                  XXL_XXLADMIN_MAX_FIELDS);
    else {
        //  (json_object_set_new refuses a key that is not UTF-8)
        json_t *string = json_string (value? value: "");
        if (!string || json_object_set_new (ctx->form, key, string))
            snprintf (ctx->why, sizeof ctx->why, "the query holds text that is not UTF-8");
    }
    return ctx->why [0]? MHD_NO: MHD_YES;
}

//  The text of an {"error": text} answer (the login's refusals)
static void
s_error_text (answer_t *answer, char *text, size_t textlen)
{
    json_t *body = answer->body? json_loadb (answer->body, answer->size, 0, NULL): NULL;
    const char *error = json_string_value (json_object_get (body, "error"));
    snprintf (text, textlen, "%s", error? error: "refused");
    json_decref (body);
}

//  POST login: userName, password, ifRemember ("on")
static void
s_login (xxl_http_t *self, answer_t *answer, struct MHD_Connection *conn, json_t *form)
{
    const char *user = json_string_value (json_object_get (form, "userName"));
    const char *password = json_string_value (json_object_get (form, "password"));
    const char *remember_text = json_string_value (json_object_get (form, "ifRemember"));
    if (!user || !*user || !password || !*password || strlen (user) > 64
    ||  strlen (password) > 1024) {
        s_returnt (answer, 200, 500, "login needs userName (at most 64 bytes) and password"
                   " (at most 1024 bytes)");
        return;
    }
    bool remember = remember_text && streq (remember_text, "on") && self->remember_s > 0;
    char sid [XXL_SECRET_HEX];
    if (xxl_http_login_user (self, answer, conn, user, password, remember, sid)) {
        free (answer->body);
        s_returnt (answer, 200, 200, NULL);
        xxl_http_named_cookie (self, answer, XXL_HTTP_XXLADMIN_COOKIE, self->xadmin, sid,
                               remember);
        return;
    }
    char text [512];
    s_error_text (answer, text, sizeof text);
    free (answer->body);
    //  (too many wrong passwords: 429 and Retry-After stay)
    s_returnt (answer, answer->status == 429? 429: 200, 500, text);
}

//  user/updatePwd (3.3: auth/updatePwd): the session's own password,
//  oldPassword checked, as PUT /api/v1/me/password (the same limiter on
//  wrong ones, audited as the user's USER_UPDATE)
static void
s_update_password (xxl_http_t *self, answer_t *answer, struct MHD_Connection *conn,
                   const char *auth, json_t *form, bool had_cookie)
{
    const char *old = json_string_value (json_object_get (form, "oldPassword"));
    const char *new = json_string_value (json_object_get (form, "password"));
    if (!old || !*old || !new || !*new) {
        s_returnt (answer, 200, 500, "updatePwd needs oldPassword and password");
        return;
    }
    //  (XXL-JOB trims the new password)
    size_t skip = strspn (new, " \t\r\n");
    size_t length = strlen (new + skip);
    while (length && strchr (" \t\r\n", new [skip + length - 1]))
        length--;
    char *trimmed = strndup (new + skip, length);
    json_t *body = json_pack ("{s:s, s:s}", "oldPassword", old, "newPassword",
                              trimmed? trimmed: "");
    free (trimmed);
    xxl_http_password (self, answer, conn, auth, body);
    json_decref (body);
    if (answer->status == 401) {
        free (answer->body);
        answer->body = NULL;
        s_not_logged_in (self, answer, had_cookie && auth [0] == 'S');
        return;
    }
    char text [512];
    int status = answer->status;
    s_error_text (answer, text, sizeof text);
    free (answer->body);
    answer->body = NULL;
    if (status == 200)
        s_returnt (answer, 200, 200, NULL);
    else
        //  (too many wrong passwords: 429 and Retry-After stay)
        s_returnt (answer, status == 429? 429: 200, 500, text);
}

//  XXL-JOB refuses user/update and user/remove of the logged-in user
//  (user_update_loginuser_limit): for a session's USER_UPDATE or USER_RM
//  of its own user *refused is -1 with why; returns HTTP_ME's code (text
//  its reason), XXL_OK when not asked
static int
s_self_change (xxl_http_t *self, const char *auth, const xxl_xxladmin_endpoint_t *endpoint,
               json_t *fields, char *why, size_t whylen, char *text, size_t textlen,
               int *refused)
{
    const char *command = endpoint->command;
    if (auth [0] != 'S' || !(streq (command, "USER_UPDATE") || streq (command, "USER_RM")))
        return XXL_OK;
    json_t *empty = json_object (), *me = NULL;
    int code = xxl_http_call (self, auth, "HTTP_ME", empty, &me, text, textlen);
    json_decref (empty);
    const char *user = json_string_value (json_object_get (me, "username"));
    const char *kind = json_string_value (json_object_get (me, "kind"));
    const char *target = json_string_value (json_object_get (fields, "username"));
    if (code == XXL_OK && user && kind && streq (kind, "session") && target
    &&  streq (user, target)) {
        snprintf (why, whylen, "%s of the logged-in user '%.64s' is refused, as XXL-JOB refuses"
                  " it: another admin changes or removes this user (your own password:"
                  " user/updatePwd)", endpoint->path, user);
        *refused = -1;
    }
    json_decref (me);
    return code;
}

//  joblog/pageList past the end (fields LOG_LIST's of a page at offset
//  hi that came back empty): the number of rows matching its filters,
//  which is at most hi, into *count.  LOG_LIST counts nothing, so probes
//  of one row halve the range until it spans at most 1000 rows, then one
//  page of those counts the rest (about log2 (hi / 1000) + 1 calls, on
//  this rare path only; each skips up to its offset of rows on the engine,
//  so the caller asks only for hi up to XXL_LOG_COUNT_MAX).  Returns the
//  calls' code (text its reason)
#define XXL_LOG_COUNT_MAX 100000
static int
s_log_count (xxl_http_t *self, const char *auth, json_t *fields, json_int_t hi,
             json_int_t *count, char *text, size_t textlen)
{
    json_t *probe = json_deep_copy (fields);
    json_int_t lo = 0;
    int code = probe? XXL_OK: XXL_FAILURE;
    if (!probe)
        snprintf (text, textlen, "out of memory");
    while (code == XXL_OK && lo < hi) {
        bool last = hi - lo <= 1000;
        json_int_t at = last? lo: lo + (hi - lo) / 2;
        json_object_set_new (probe, "offset", json_integer (at));
        json_object_set_new (probe, "limit", json_integer (last? hi - lo: 1));
        json_t *content = NULL;
        code = xxl_http_call (self, auth, "LOG_LIST", probe, &content, text, textlen);
        json_int_t rows = (json_int_t) json_array_size (json_object_get (content, "logs"));
        bool truncated = json_is_true (json_object_get (content, "truncated"));
        json_decref (content);
        if (code != XXL_OK)
            break;
        if (rows == 0)
            hi = at;
        else {
            lo = at + rows;
            if (last && !truncated)
                break;                  //  (the rest of the range, all of it)
        }
    }
    json_decref (probe);
    *count = lo;
    return code;
}

//  The most api calls one list endpoint makes to gather the rows it
//  asked for (s_fetch_rest): each reply is at most 4 MiB (XXL_MSG_MAX_FRAME),
//  so one answer reads at most 64 MiB of them
#define XXL_XXLADMIN_FETCH_CALLS 16

//  getJobsByGroup's jobs: as XXL-JOB's, without their GLUE source
static void
s_glueless (json_t *jobs)
{
    size_t index;
    json_t *job;
    json_array_foreach (jobs, index, job)
        json_object_del (job, "glueSource");
}

//  The list endpoints (jobinfo/pageList, joblog/pageList, getJobsByGroup)
//  after their first call, content its reply: a reply the 4 MiB size cut
//  (truncated, nextOffset: docs/protocol.md, Large replies) is followed
//  by calls from nextOffset for the rest of fields' limit, their rows
//  appended to content's list, until limit rows came or a reply was not
//  cut, so the answer holds every row asked for.  LOG_LIST's later calls
//  are pinned by maxId to the first reply's newest row (runs added
//  meanwhile do not shift the offsets).  getJobsByGroup's rows lose
//  glueSource.  Returns XXL_OK (content's truncated then false unless its
//  limit was reached), the failed call's code, or XXL_BAD_REQUEST when
//  XXL_XXLADMIN_FETCH_CALLS calls did not bring every row; text the
//  reason: rows are never dropped unsaid
static int
s_fetch_rest (xxl_http_t *self, const char *auth, const xxl_xxladmin_endpoint_t *endpoint,
              json_t *fields, json_t *content, char *text, size_t textlen)
{
    if (endpoint->shape != XA_JOBS && endpoint->shape != XA_LOGS
    &&  endpoint->shape != XA_JOBLIST)
        return XXL_OK;
    const char *key = endpoint->shape == XA_LOGS? "logs": "jobs";
    json_t *rows = json_object_get (content, key);
    json_int_t limit = json_integer_value (json_object_get (fields, "limit"));
    if (endpoint->shape == XA_JOBLIST)
        s_glueless (rows);
    json_t *ask = NULL;
    int calls = 1, code = XXL_OK;
    while (json_is_array (rows) && json_is_true (json_object_get (content, "truncated"))
       &&  (json_int_t) json_array_size (rows) < limit) {
        if (calls >= XXL_XXLADMIN_FETCH_CALLS) {
            snprintf (text, textlen, "the rows asked for are over %d MiB (%zu came in %d"
                      " replies of the scheduler's 4 MiB): ask fewer (length, 3.x pagesize)%s",
                      XXL_XXLADMIN_FETCH_CALLS * 4, json_array_size (rows), calls,
                      endpoint->shape == XA_JOBLIST? "; page the group's jobs with"
                      " jobinfo/pageList": "");
            code = XXL_BAD_REQUEST;
            break;
        }
        if (!ask) {
            ask = json_deep_copy (fields);
            json_t *newest = json_object_get (json_array_get (rows, 0), "id");
            if (endpoint->shape == XA_LOGS && json_is_integer (newest)
            &&  !json_object_get (ask, "maxId"))
                json_object_set (ask, "maxId", newest);
        }
        json_int_t next = json_integer_value (json_object_get (content, "nextOffset"));
        json_object_set_new (ask, "offset", json_integer (next));
        json_object_set_new (ask, "limit",
                             json_integer (limit - (json_int_t) json_array_size (rows)));
        json_t *more = NULL;
        code = xxl_http_call (self, auth, endpoint->command, ask, &more, text, textlen);
        calls++;
        json_t *got = json_object_get (more, key);
        if (code == XXL_OK && json_array_size (got) == 0) {
            //  (a reply cut before its first row: no way on)
            snprintf (text, textlen, "the scheduler's reply holds no row from offset %"
                      JSON_INTEGER_FORMAT " though more were said to follow", next);
            code = XXL_FAILURE;
        }
        if (code == XXL_OK) {
            if (endpoint->shape == XA_JOBLIST)
                s_glueless (got);
            json_array_extend (rows, got);
            json_object_set_new (content, "truncated",
                                 json_boolean (json_is_true (json_object_get (more,
                                                                              "truncated"))));
            json_object_set_new (content, "nextOffset", json_integer (json_integer_value (
                                     json_object_get (more, "nextOffset"))));
        }
        json_decref (more);
        if (code != XXL_OK)
            break;
    }
    json_decref (ask);
    return code;
}

//  Whether app is one of the comma-separated apps
static bool
s_app_listed (const char *apps, const char *app)
{
    size_t length = strlen (app);
    for (const char *p = apps; p && *p; ) {
        const char *comma = strchr (p, ',');
        size_t n = comma? (size_t) (comma - p): strlen (p);
        if (n == length && strncmp (p, app, n) == 0)
            return true;
        p = comma? comma + 1: p + n;
    }
    return false;
}

//  Whether the token of auth may speak for app: the token is known, app
//  is among its apps (an admin's, or a key's without apps: any app), and a
//  group of that appname exists.  0; or -1 with the answer's code and
//  text (XXL_UNAUTHORIZED, or XXL-JOB's "invalid" when the app is not the
//  token's: why empty), or the calls' failure
static int
s_openapi_app (xxl_http_t *self, const char *auth, const char *app, int *code, char *text,
               size_t textlen)
{
    json_t *empty = json_object (), *me = NULL, *groups = NULL;
    *code = xxl_http_call (self, auth, "HTTP_ME", empty, &me, text, textlen);
    int rc = *code == XXL_OK? 0: -1;
    if (rc == 0) {
        const char *role = json_string_value (json_object_get (me, "role"));
        const char *apps = json_string_value (json_object_get (me, "apps"));
        if (!(role && streq (role, "admin")) && apps && *apps && !s_app_listed (apps, app))
            rc = -1, text [0] = 0;
    }
    if (rc == 0) {
        *code = xxl_http_call (self, auth, "GROUP_LIST", empty, &groups, text, textlen);
        rc = -1;                        //  (until a group of app is found)
        size_t index;
        json_t *group;
        json_array_foreach (json_object_get (groups, "groups"), index, group) {
            const char *appname = json_string_value (json_object_get (group, "appname"));
            if (appname && streq (appname, app))
                rc = 0;
        }
        if (rc && *code == XXL_OK)
            text [0] = 0;
    }
    json_decref (groups);
    json_decref (me);
    json_decref (empty);
    return rc;
}

//  A job these endpoints add (XXL-JOB's forms have no zone) gets
//  http/xxl_admin_timezone: XXL-JOB ran every cron in its admin's zone;
//  nextTriggerTime plans in it too (its answer shows the times there)
static void
s_job_zone (xxl_http_t *self, const xxl_xxladmin_endpoint_t *endpoint, json_t *fields)
{
    if (self->xadmin_zone && endpoint->command && (streq (endpoint->command, "JOB_ADD")
                                                || streq (endpoint->command, "SCHEDULE_NEXT"))
    &&  !json_object_get (fields, "timezone"))
        json_object_set_new (fields, "timezone", json_string (self->xadmin_zone));
}

//  XXL-JOB 3.5's job OpenAPI: POST <prefix>/api/<uri>, a JSON body, the
//  headers XXL-JOB-ACCESS-TOKEN (here an xxl token, xxl-ctl token add,
//  judged as a bearer token) and XXL-JOB-APPNAME (a group the token may
//  act for).  The body becomes the form of the console endpoint the uri
//  acts as (addJob: jobinfo/add, ...), judged, sent and answered as that
//  one.  The answers are XXL-JOB's: HTTP 200 and a ReturnT, 500 with the
//  reason for a refusal.  Only the header's token counts: a cookie or an
//  Authorization header is not looked at, so a page of another site
//  cannot act here (it cannot send the header without CORS, never
//  granted)
static void
s_openapi (xxl_http_t *self, answer_t *answer, struct MHD_Connection *conn, const char *method,
           const xxl_xxladmin_endpoint_t *endpoint, request_ctx_t *ctx)
{
    if (!streq (method, "POST")) {
        //  (XXL-JOB's words to the letter, as every refusal here before the
        //  call: a script may compare them; Allow says POST)
        s_returnt (answer, 405, 500, "invalid request, HttpMethod not support.");
        snprintf (answer->allow, sizeof answer->allow, "POST");
        return;
    }
    const char *token = MHD_lookup_connection_value (conn, MHD_HEADER_KIND,
                                                     "XXL-JOB-ACCESS-TOKEN");
    const char *app = MHD_lookup_connection_value (conn, MHD_HEADER_KIND, "XXL-JOB-APPNAME");
    if (!token || !*token || !app || !*app) {
        s_returnt (answer, 200, 500, "invalid request, accessToken or appname is empty.");
        return;
    }
    size_t size = ctx->body? zchunk_size (ctx->body): 0;
    if (size == 0) {
        s_returnt (answer, 200, 500, "invalid request, requestBody empty.");
        return;
    }
    json_t *form = json_object ();
    char why [256] = "";
    if (xxl_xxladmin_json_form (form, (const char *) zchunk_data (ctx->body), size, why,
                                sizeof why)) {
        json_decref (form);
        s_returnt (answer, 200, 500, why);
        return;
    }
    char auth [XXL_SECRET_HEX + 8], hash [XXL_SECRET_HEX];
    xxl_secret_sha256 (token, hash);
    snprintf (auth, sizeof auth, "T %s", hash);
    char text [1024];
    int code;
    if (s_openapi_app (self, auth, app, &code, text, sizeof text)) {
        json_decref (form);
        if (code == XXL_UNAUTHORIZED || !text [0])
            s_returnt (answer, 200, 500, "invalid request, accessToken or appname invalid.");
        else
            s_returnt (answer, 200, 500, text);
        return;
    }
    json_t *fields = NULL, *content = NULL;
    if (xxl_xxladmin_request (endpoint, form, &fields, why, sizeof why)) {
        json_decref (fields);
        json_decref (form);
        s_returnt (answer, 200, 500, why);
        return;
    }
    s_job_zone (self, endpoint, fields);
    code = xxl_http_call (self, auth, endpoint->command, fields, &content, text, sizeof text);
    if (code == XXL_UNAUTHORIZED)
        //  (the token removed between the two calls)
        s_returnt (answer, 200, 500, "invalid request, accessToken or appname invalid.");
    else
        xxl_http_answer_json (answer, 200, xxl_xxladmin_answer (endpoint, form, code, text,
                                                                content, self->xadmin_zone));
    json_decref (content);
    json_decref (fields);
    json_decref (form);
}

//  (xxl_http_int.h)
void
xxl_http_xxladmin (xxl_http_t *self, answer_t *answer, struct MHD_Connection *conn,
                   const char *method, const char *path, request_ctx_t *ctx)
{
    assert (self && self->xadmin && answer && conn && method && path && ctx);
    if (strncmp (path, "api/", 4) == 0 && xxl_xxladmin_openapi_endpoint (path + 4)) {
        if (s_cross_site (conn))
            s_returnt (answer, 403, 500, "a request another site's page makes is refused (its"
                       " Origin is not this host, or Sec-Fetch-Site is cross-site)");
        else
            s_openapi (self, answer, conn, method, xxl_xxladmin_openapi_endpoint (path + 4),
                       ctx);
        return;
    }
    const xxl_xxladmin_endpoint_t *endpoint = xxl_xxladmin_endpoint (path);
    if (!endpoint) {
        char msg [256];
        if (strncmp (path, "api/", 4) == 0)
            //  (an executor pointed here instead of at the bridge)
            snprintf (msg, sizeof msg, "%s/%.64s is an executor's call: xxl-bridge serves"
                      " those; point xxl.job.admin.addresses at the bridge (docs/migrating.md)",
                      self->xadmin, path);
        else
            snprintf (msg, sizeof msg, "no such endpoint of XXL-JOB's admin: %s/%.64s (docs/"
                      "migrating.md lists those served)", self->xadmin, path);
        s_returnt (answer, 404, 500, msg);
        return;
    }
    bool get = streq (method, "GET");
    if (!streq (method, "POST") && !(get && endpoint->read)) {
        char msg [160];
        snprintf (msg, sizeof msg, "%s/%s takes POST%s", self->xadmin, endpoint->path,
                  endpoint->read? " or GET": "");
        s_returnt (answer, 405, 500, msg);
        snprintf (answer->allow, sizeof answer->allow, endpoint->read? "GET, HEAD, POST": "POST");
        return;
    }
    if (s_cross_site (conn)) {
        s_returnt (answer, 403, 500, "a request another site's page makes is refused (its"
                   " Origin is not this host, or Sec-Fetch-Site is cross-site)");
        return;
    }
    //  The form: the body's (a form), then the query's keys
    json_t *form = json_object ();
    size_t size = ctx->body? zchunk_size (ctx->body): 0;
    char why [256] = "";
    if (size > 0) {
        const char *type = MHD_lookup_connection_value (conn, MHD_HEADER_KIND,
                                                        MHD_HTTP_HEADER_CONTENT_TYPE);
        const char *form_type = "application/x-www-form-urlencoded";
        size_t n = strlen (form_type);
        if (!type || strncasecmp (type, form_type, n) || (type [n] && type [n] != ';'
                                                          && type [n] != ' ')) {
            json_decref (form);
            s_returnt (answer, 415, 500, "the body must be a form (Content-Type:"
                       " application/x-www-form-urlencoded), as XXL-JOB's console sends");
            return;
        }
        xxl_xxladmin_form (form, (const char *) zchunk_data (ctx->body), size, why, sizeof why);
    }
    if (!*why) {
        query_ctx_t query = { form, "" };
        MHD_get_connection_values (conn, MHD_GET_ARGUMENT_KIND, s_query_each, &query);
        snprintf (why, sizeof why, "%s", query.why);
    }
    if (*why) {
        json_decref (form);
        s_returnt (answer, 200, 500, why);
        return;
    }
    //  (3.x's xxl-sso paths: auth/doLogin, auth/logout, auth/login)
    if (streq (endpoint->path, "login") || streq (endpoint->path, "auth/doLogin")) {
        s_login (self, answer, conn, form);
        json_decref (form);
        return;
    }
    //  (logout ends the cookie's session, a bearer token sent beside it or
    //  not: a token is no session, and the cookie is cleared)
    bool logout = streq (endpoint->path, "logout") || streq (endpoint->path, "auth/logout");
    char auth [256];
    xxl_http_credentials_xxladmin (conn, logout, auth, sizeof auth);
    const char *cookie = MHD_lookup_connection_value (conn, MHD_COOKIE_KIND,
                                                      XXL_HTTP_XXLADMIN_COOKIE);
    bool had_cookie = cookie && *cookie;
    if (logout) {
        json_t *empty = json_object (), *content;
        char text [512];
        int code = xxl_http_call (self, auth, "HTTP_LOGOUT", empty, &content, text, sizeof text);
        json_decref (content);
        json_decref (empty);
        if (code == XXL_OK || code == XXL_UNAUTHORIZED)
            s_returnt (answer, 200, 200, NULL);
        else
            s_returnt (answer, 200, 500, text);
        xxl_http_named_cookie (self, answer, XXL_HTTP_XXLADMIN_COOKIE, self->xadmin, NULL, false);
        json_decref (form);
        return;
    }
    if (streq (endpoint->path, "toLogin") || streq (endpoint->path, "auth/login")) {
        //  (XXL-JOB's toLogin sends a logged-in browser on to its index:
        //  a session the engine accepts stays, its cookie with it)
        int code = XXL_UNAUTHORIZED;
        if (!streq (auth, "-")) {
            json_t *empty = json_object (), *me = NULL;
            char text [256];
            code = xxl_http_call (self, auth, "HTTP_ME", empty, &me, text, sizeof text);
            json_decref (me);
            json_decref (empty);
        }
        if (code == XXL_OK)
            s_returnt (answer, 200, 200, NULL);
        else {
            //  (as below: only a session judged gone clears its cookie)
            s_not_logged_in (self, answer, had_cookie && code == XXL_UNAUTHORIZED
                                           && (streq (auth, "-") || auth [0] == 'S'));
            answer->status = 200;
            answer->location [0] = 0;
        }
        json_decref (form);
        return;
    }
    if (streq (auth, "-")) {
        s_not_logged_in (self, answer, had_cookie);
        json_decref (form);
        return;
    }
    if (!endpoint->command) {
        //  (user/updatePwd, auth/updatePwd)
        s_update_password (self, answer, conn, auth, form, had_cookie);
        json_decref (form);
        return;
    }
    json_t *settled = xxl_xxladmin_settled (endpoint, form);
    if (settled) {
        xxl_http_answer_json (answer, 200, settled);
        json_decref (form);
        return;
    }
    json_t *content = NULL, *groups = NULL;
    char text [1024];
    int code = XXL_OK;
    if (xxl_xxladmin_needs_groups (endpoint)) {
        json_t *empty = json_object ();
        code = xxl_http_call (self, auth, "GROUP_LIST", empty, &groups, text, sizeof text);
        json_decref (empty);
    }
    json_t *fields = NULL;
    if (code == XXL_OK) {
        int rc = xxl_xxladmin_needs_groups (endpoint) && !endpoint->read
               ? xxl_xxladmin_user_request (endpoint, form, groups, &fields, why, sizeof why)
               : xxl_xxladmin_request (endpoint, form, &fields, why, sizeof why);
        if (rc == 0)
            code = s_self_change (self, auth, endpoint, fields, why, sizeof why, text,
                                  sizeof text, &rc);
        if (rc) {
            json_decref (fields);
            json_decref (groups);
            json_decref (form);
            s_returnt (answer, 200, 500, why);
            return;
        }
        s_job_zone (self, endpoint, fields);
        if (code == XXL_OK)
            code = xxl_http_call (self, auth, endpoint->command, fields, &content, text,
                                  sizeof text);
        if (code == XXL_OK)
            code = s_fetch_rest (self, auth, endpoint, fields, content, text, sizeof text);
        json_int_t offset = json_integer_value (json_object_get (fields, "offset"));
        if (code == XXL_OK && endpoint->shape == XA_LOGS && offset > 0
        &&  offset <= XXL_LOG_COUNT_MAX
        &&  json_array_size (json_object_get (content, "logs")) == 0) {
            //  (an empty page past the end: its answer counts the rows)
            json_int_t count;
            code = s_log_count (self, auth, fields, offset, &count, text, sizeof text);
            json_object_set_new (content, "count", json_integer (count));
        }
    }
    json_decref (fields);
    if (code == XXL_UNAUTHORIZED)
        //  (the cookie is cleared only when its session was the one judged:
        //  a bad bearer token sent beside a good cookie leaves the cookie)
        s_not_logged_in (self, answer, had_cookie && auth [0] == 'S');
    else
    if (endpoint->shape == XA_USERS)
        xxl_http_answer_json (answer, 200, xxl_xxladmin_users (form, code, text, content,
                                                               groups));
    else
        xxl_http_answer_json (answer, 200, xxl_xxladmin_answer (endpoint, form, code, text,
                                                                content, self->xadmin_zone));
    json_decref (groups);
    json_decref (content);
    json_decref (form);
}
