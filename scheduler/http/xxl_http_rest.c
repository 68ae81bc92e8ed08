/*  xxl_http_rest.c -- the REST api under /api/v1/ (xxl_http_int.h;
    docs/http.md).

    A path is matched against the route table: the api commands' routes
    (xxl_commands.def), then the HTTP side's own (login, logout, me,
    me/password, meta, cron/next).  For an api command the JSON body (an
    object), the query's keys and the path's ids, each typed by the
    command's own fields in the command table, make one api request
    (xxl_http_call.c); the engine judges it as the api socket would, and
    its reply's content goes back as JSON, a code other than 200 as that
    HTTP status with {"error": msg}.  404 for a path no route has, 405 for
    one without the method, 415 for a body not JSON.

    Runs on the connection's thread; calls xxl_http_auth.c,
    xxl_http_call.c and xxl_http_answer.c of the server's files.
*/

#include "xxl_http_int.h"
#include "xxl_http_xxladmin.h"
#include "xxl_commands.h"
#include "xxl/msg.h"
#include "xxl/cron.h"

//  ---------------------------------------------------------------------
//  Routes

typedef enum {
    R_API,                              //  an api command
    R_LOGIN, R_LOGOUT, R_ME, R_PASSWORD, R_CRON, R_META
} route_kind_t;

typedef struct {
    const char *method;
    const char *pattern;                //  under /api/v1/; '*' is one path segment
    route_kind_t kind;
    xxl_command_id_t command;           //  R_API: the command
    int ok;                             //  the status of a success
    const char *p1, *p2;                //  the keys the '*' segments fill, in order
} route_t;

//  The api commands' routes (xxl_commands.def), then the HTTP side's own
static const route_t s_routes [] = {
#define XXL_COMMAND(name, fields, access, scope, flags, handler, method, path, p1, p2, \
                    status, ...) \
    { #method, path, R_API, XXL_CMD_##name, status, p1, p2 },
#define XXL_CTL_ONLY(cmd)
#include "xxl_commands.def"
#undef XXL_COMMAND
#undef XXL_CTL_ONLY
    { "GET", "cron/next", R_CRON, XXL_CMD_COUNT, 200, NULL, NULL },
    { "POST", "login", R_LOGIN, XXL_CMD_COUNT, 200, NULL, NULL },
    { "POST", "logout", R_LOGOUT, XXL_CMD_COUNT, 200, NULL, NULL },
    { "GET", "me", R_ME, XXL_CMD_COUNT, 200, NULL, NULL },
    { "GET", "meta", R_META, XXL_CMD_COUNT, 200, NULL, NULL },
    { "PUT", "me/password", R_PASSWORD, XXL_CMD_COUNT, 200, NULL, NULL },
    { NULL, NULL, R_API, XXL_CMD_COUNT, 0, NULL, NULL }
};

//  Whether path matches pattern; the '*' segments into args (at most 2)
static bool
s_match (const char *pattern, const char *path, char args [2][256])
{
    int arg = 0;
    while (*pattern && *path) {
        if (*pattern == '*') {
            const char *end = strchr (path, '/');
            size_t length = end? (size_t) (end - path): strlen (path);
            if (length == 0 || length >= 256 || arg >= 2)
                return false;
            memcpy (args [arg], path, length);
            args [arg++][length] = 0;
            path += length;
            pattern++;
        }
        else
        if (*pattern++ != *path++)
            return false;
    }
    return *pattern == 0 && *path == 0;
}

//  A value from the path or query for the command's field key: typed as
//  the field is (an integer field takes decimal digits); NULL when bad
static json_t *
s_typed (const xxl_command_t *command, const char *key, const char *value)
{
    const xxl_field_t *field = command? xxl_command_field (command, key): NULL;
    if (field && (field->type == XXL_FIELD_INT || field->type == XXL_FIELD_NUMBER)) {
        long long number;
        if (!xxl_http_decimal (value, &number))
            return NULL;
        return json_integer (number);
    }
    if (field && field->type == XXL_FIELD_BOOL) {
        if (streq (value, "true") || streq (value, "1"))
            return json_true ();
        if (streq (value, "false") || streq (value, "0"))
            return json_false ();
        return NULL;
    }
    return json_string (value);
}

typedef struct {
    json_t *fields;
    const xxl_command_t *command;
    const char *bad;                    //  the first query key with a bad value,
                                        //  as the query names it
    char why [160];                     //  what is wrong with it ("": not valid)
} query_ctx_t;

static enum MHD_Result
s_query_each (void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void) kind;
    query_ctx_t *ctx = (query_ctx_t *) cls;
    //  LOG_CAT's `from` is the api's fromLineNum (its refusals name `from`,
    //  the query's key: its range is judged here, not by the engine's
    //  words of fromLineNum)
    const char *given = key;
    if (ctx->command && streq (ctx->command->name, "LOG_CAT") && streq (key, "from"))
        key = "fromLineNum";
    const xxl_field_t *field = ctx->command? xxl_command_field (ctx->command, key): NULL;
    if (!field)
        return MHD_YES;                 //  (an unknown key is ignored)
    //  (a boolean key alone, `?force`, is true; another key alone is ignored)
    if (!value && field->type != XXL_FIELD_BOOL)
        return MHD_YES;
    json_t *typed = value? s_typed (ctx->command, key, value): json_true ();
    if (typed && given != key && json_is_integer (typed)
    &&  (json_integer_value (typed) < field->min || json_integer_value (typed) > field->max)) {
        json_decref (typed);
        typed = NULL;
    }
    if (!typed) {
        if (!ctx->bad) {
            ctx->bad = given;
            if (given != key)
                snprintf (ctx->why, sizeof ctx->why, "must be an integer from %" PRId64
                          " to %" PRId64 " (the api's %s), not '%.40s'", field->min,
                          field->max, key, value);
        }
        return MHD_YES;
    }
    json_object_set_new (ctx->fields, key, typed);
    return MHD_YES;
}

//  A body's field the table types as a string given as an integer (a
//  group's id as jobGroup) becomes its decimal text; apps given as a list
//  become the api's comma list; a workflow's definition given as an
//  object becomes its JSON text
static void
s_body_fit (const xxl_command_t *command, json_t *fields)
{
    const char *key;
    json_t *item;
    void *tmp;
    json_object_foreach_safe (fields, tmp, key, item) {
        const xxl_field_t *field = xxl_command_field (command, key);
        if (!field || field->type != XXL_FIELD_STR)
            continue;
        if (json_is_integer (item)) {
            char text [32];
            snprintf (text, sizeof text, "%" JSON_INTEGER_FORMAT, json_integer_value (item));
            json_object_set_new (fields, key, json_string (text));
        }
        else
        if (streq (key, "definition") && json_is_object (item)) {
            //  A workflow's definition may come as the object itself
            //  (DESIGN §12): the api takes its JSON text
            char *text = json_dumps (item, JSON_COMPACT | JSON_PRESERVE_ORDER);
            if (text)
                json_object_set_new (fields, key, json_string (text));
            free (text);
        }
        else
        if (streq (key, "apps") && json_is_array (item)) {
            size_t index;
            json_t *app;
            char *joined = strdup ("");
            bool ok = true;
            json_array_foreach (item, index, app) {
                //  (an app name holds no ',': ["a,b"] is not two apps; the
                //  list left as it is fails the field's type, 400)
                if (!json_is_string (app) || strchr (json_string_value (app), ',')) {
                    ok = false;
                    break;
                }
                char *next = zsys_sprintf ("%s%s%s", joined, *joined? ",": "",
                                           json_string_value (app));
                free (joined);
                joined = next;
            }
            if (ok)
                json_object_set_new (fields, key, json_string (joined));
            free (joined);
        }
    }
}

//  GET cron/next?expr=&n=&tz=&from=: no engine needed
static void
s_cron_next (answer_t *answer, struct MHD_Connection *conn)
{
    const char *expr = MHD_lookup_connection_value (conn, MHD_GET_ARGUMENT_KIND, "expr");
    const char *n_text = MHD_lookup_connection_value (conn, MHD_GET_ARGUMENT_KIND, "n");
    const char *tz = MHD_lookup_connection_value (conn, MHD_GET_ARGUMENT_KIND, "tz");
    const char *from_text = MHD_lookup_connection_value (conn, MHD_GET_ARGUMENT_KIND, "from");
    if (!expr || !*expr || strlen (expr) > 1024) {
        xxl_http_error (answer, 400, "expr: a cron expression (at most 1024 bytes) is needed");
        return;
    }
    long long n = 5, from = zclock_time ();
    if (n_text) {
        if (!xxl_http_decimal (n_text, &n) || n < 1 || n > 100) {
            xxl_http_error (answer, 400, "n must be 1 to 100");
            return;
        }
    }
    if (from_text) {
        if (!xxl_http_decimal (from_text, &from) || from < 0) {
            xxl_http_error (answer, 400, "from must be epoch milliseconds (an integer >= 0)");
            return;
        }
    }
    if (tz && *tz && (strlen (tz) > 64 || !xxl_cron_tz_valid (tz))) {
        xxl_http_errorf (answer, 400, "unknown time zone '%.64s'", tz);
        return;
    }
    char reason [256];
    xxl_cron_t *cron = xxl_cron_new (expr, tz && *tz? tz: NULL, reason, sizeof reason);
    if (!cron) {
        xxl_http_error (answer, 400, reason);
        return;
    }
    json_t *next = json_array ();
    int64_t after = from;
    for (long long i = 0; i < n; i++) {
        int64_t at = xxl_cron_next (cron, after);
        if (at <= 0)
            break;
        json_array_append_new (next, json_integer (at));
        after = at;
    }
    xxl_cron_destroy (&cron);
    xxl_http_answer_json (answer, 200, json_pack ("{s:o}", "next", next));
}

//  ---------------------------------------------------------------------
//  GET /api/v1/meta (docs/http.md): the api commands of xxl_commands.def
//  (fields, least role, audit, route, xxl-ctl command) and the closed
//  lists, with the route strategies and alarm kinds of the plugins the
//  scheduler loaded (its PLUGIN_LIST, sent with the caller's credentials)

//  xxl-ctl's command of each api command ("job_trigger"), NULL for none
static const char *const s_meta_ctl [XXL_CMD_COUNT] = {
#define XXL_COMMAND(name, fields, access, scope, flags, handler, method, path, p1, p2, \
                    status, ctl) [XXL_CMD_##name] = ctl,
#define XXL_CTL(cmd) #cmd
#define XXL_NO_CTL NULL
#define XXL_CTL_ONLY(cmd)
#include "xxl_commands.def"
#undef XXL_COMMAND
#undef XXL_CTL
#undef XXL_NO_CTL
#undef XXL_CTL_ONLY
};

//  A field as meta states it; in: where its route takes it
static json_t *
s_meta_field (const xxl_field_t *field, const char *in)
{
    static const char *const types [] = { "int", "number", "bool", "string" };
    json_t *item = json_pack ("{s:s, s:s, s:b, s:s}", "name", field->key,
                              "type", types [field->type], "required", field->required,
                              "in", in);
    if (field->type == XXL_FIELD_INT || field->type == XXL_FIELD_NUMBER) {
        json_object_set_new (item, "min", json_integer (field->min));
        if (field->max != INT64_MAX)
            json_object_set_new (item, "max", json_integer (field->max));
        //  (a default outside the range is no value: absent is a case
        //  of its own, docs/protocol.md)
        if (field->dflt >= field->min && field->dflt <= field->max && field->dflt != INT64_MAX)
            json_object_set_new (item, "default", json_integer (field->dflt));
    }
    else
    if (field->type == XXL_FIELD_BOOL)
        json_object_set_new (item, "default", json_boolean (field->dflt));
    else {
        json_object_set_new (item, "maxBytes", json_integer (field->max));
        if (field->text)
            json_object_set_new (item, "default", json_string (field->text));
        if (field->values) {
            json_t *values = json_array ();
            for (size_t i = 0; field->values [i]; i++)
                json_array_append_new (values, json_string (field->values [i]));
            json_object_set_new (item, "values", values);
        }
    }
    return item;
}

//  A route's path under /api/v1/ with its '*' segments named: "/api/v1/jobs/{jobId}"
static json_t *
s_meta_path (const route_t *route)
{
    char path [256] = "/api/v1/";
    const char *keys [2] = { route->p1, route->p2 };
    int arg = 0;
    for (const char *p = route->pattern; *p; p++) {
        size_t used = strlen (path);
        if (*p == '*' && arg < 2 && keys [arg])
            snprintf (path + used, sizeof path - used, "{%s}", keys [arg++]);
        else
            snprintf (path + used, sizeof path - used, "%c", *p);
    }
    return json_string (path);
}

//  A field's values from command's table (a closed list), as an array
static json_t *
s_meta_values (xxl_command_id_t id, const char *key)
{
    const xxl_field_t *field = xxl_command_field (&xxl_commands [id], key);
    json_t *values = json_array ();
    for (size_t i = 0; field && field->values && field->values [i]; i++)
        json_array_append_new (values, json_string (field->values [i]));
    return values;
}

static void
s_meta (xxl_http_t *self, answer_t *answer, const char *auth)
{
    json_t *fields = json_object (), *plugins;
    char text [512];
    int code = xxl_http_call (self, auth, xxl_commands [XXL_CMD_PLUGIN_LIST].name, fields,
                              &plugins, text, sizeof text);
    json_decref (fields);
    if (code != XXL_OK) {
        json_decref (plugins);
        xxl_http_error (answer, code >= 400 && code <= 599? code: 500, text);
        return;
    }
    json_t *commands = json_array ();
    for (const route_t *route = s_routes; route->method; route++) {
        if (route->kind != R_API)
            continue;
        const xxl_command_t *command = &xxl_commands [route->command];
        bool get = streq (route->method, "GET");
        json_t *list = json_array ();
        for (const xxl_field_t *field = command->fields; field->key; field++) {
            bool path = (route->p1 && streq (route->p1, field->key))
                     || (route->p2 && streq (route->p2, field->key));
            json_array_append_new (list, s_meta_field (field, path? "path": get? "query": "body"));
        }
        const char *ctl = s_meta_ctl [route->command];
        char cli [64] = "";
        for (size_t i = 0; ctl && ctl [i] && i + 1 < sizeof cli; i++) {
            cli [i] = ctl [i] == '_'? ' ': ctl [i];
            cli [i + 1] = 0;
        }
        json_array_append_new (commands, json_pack (
            "{s:s, s:s, s:b, s:s, s:s, s:o, s:i, s:o, s:o}",
            "name", command->name,
            "role", xxl_access_name (command->access),
            "readOnly", command->read_only || (command->flags & XXL_COMMAND_UNAUDITED),
            "audit", !xxl_command_audited (command)? "none"
                   : xxl_command_audited_code (command, XXL_OK)? "all": "refusals",
            "method", route->method,
            "path", s_meta_path (route),
            "status", route->ok,
            "cli", ctl? json_string (cli): json_null (),
            "fields", list));
    }
    json_t *routers = json_object_get (plugins, "routers");
    json_t *alarms = json_object_get (plugins, "alarms");
    routers = json_is_array (routers)? json_incref (routers): json_array ();
    alarms = json_is_array (alarms)? json_incref (alarms): json_array ();
    json_t *lists = json_pack ("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
        "scheduleTypes", s_meta_values (XXL_CMD_JOB_ADD, "scheduleType"),
        "misfireStrategies", s_meta_values (XXL_CMD_JOB_ADD, "misfireStrategy"),
        "blockStrategies", s_meta_values (XXL_CMD_JOB_ADD, "executorBlockStrategy"),
        "glueTypes", s_meta_values (XXL_CMD_JOB_ADD, "glueType"),
        "triggerTypes", s_meta_values (XXL_CMD_JOB_TRIGGER, "triggerType"),
        "roles", s_meta_values (XXL_CMD_USER_ADD, "role"),
        "routeStrategies", routers,
        "alarmKinds", alarms);
    xxl_http_answer_json (answer, 200, json_pack ("{s:i, s:o, s:o}",
                                                  "protocol", XXL_PROTOCOL_VERSION,
                                                  "commands", commands, "lists", lists));
    json_decref (plugins);
}

//  /api/v1/<path> (xxl_http_int.h)
void
xxl_http_api (xxl_http_t *self, answer_t *answer, struct MHD_Connection *conn,
              const char *method, const char *path, request_ctx_t *ctx)
{
    assert (self && answer && conn && method && path && ctx);
    const route_t *route = NULL;
    bool path_known = false;
    char args [2][256];
    for (const route_t *r = s_routes; r->method; r++)
        if (s_match (r->pattern, path, args)) {
            path_known = true;
            if (streq (r->method, method)) {
                route = r;
                break;
            }
        }
    if (!route) {
        if (path_known) {
            xxl_http_errorf (answer, 405, "%s is not a method of /api/v1/%s", method, path);
            //  (Allow: the path's methods, HEAD with GET)
            for (const route_t *r = s_routes; r->method; r++)
                if (s_match (r->pattern, path, args)) {
                    const char *name = streq (r->method, "GET")? "GET, HEAD": r->method;
                    size_t used = strlen (answer->allow);
                    if (!strstr (answer->allow, r->method)
                    &&  used + 2 + strlen (name) < sizeof answer->allow)
                        snprintf (answer->allow + used, sizeof answer->allow - used, "%s%s",
                                  used? ", ": "", name);
                }
        }
        else
            xxl_http_error (answer, 404, "no such path");
        return;
    }
    bool change = !streq (method, "GET") && !streq (method, "HEAD");
    //  The body: a JSON object (or nothing)
    json_t *body = NULL;
    size_t size = ctx->body? zchunk_size (ctx->body): 0;
    if (size > 0) {
        const char *type = MHD_lookup_connection_value (conn, MHD_HEADER_KIND,
                                                        MHD_HTTP_HEADER_CONTENT_TYPE);
        if (!type || strncasecmp (type, "application/json", 16)
        ||  (type [16] && type [16] != ';' && type [16] != ' ')) {
            xxl_http_error (answer, 415, "the body must be JSON (Content-Type: application/json)");
            return;
        }
        json_error_t error;
        body = json_loadb ((const char *) zchunk_data (ctx->body), size, JSON_REJECT_DUPLICATES,
                           &error);
        if (!body) {
            xxl_http_errorf (answer, 400, "bad JSON at line %d column %d: %s", error.line,
                             error.column, error.text);
            return;
        }
        if (!json_is_object (body)) {
            json_decref (body);
            xxl_http_error (answer, 400, "the body must be a JSON object");
            return;
        }
    }
    else
        body = json_object ();
    char auth [256];
    xxl_http_credentials (conn, change, auth, sizeof auth);
    if (route->kind == R_LOGIN)
        xxl_http_login (self, answer, conn, body);
    else
    if (route->kind == R_CRON) {
        //  (it reads nothing, yet is for callers with credentials, as all /api)
        json_t *me;
        char text [512];
        int code = xxl_http_call (self, auth, "HTTP_ME", body, &me, text, sizeof text);
        json_decref (me);
        if (code == XXL_OK)
            s_cron_next (answer, conn);
        else
            xxl_http_error (answer, code >= 400 && code <= 599? code: 500, text);
    }
    else
    if (route->kind == R_ME)
        xxl_http_forward (self, answer, auth, "HTTP_ME", body, 200);
    else
    if (route->kind == R_META)
        s_meta (self, answer, auth);
    else
    if (route->kind == R_LOGOUT) {
        xxl_http_forward (self, answer, auth, "HTTP_LOGOUT", body, 200);
        if (answer->status == 200)
            xxl_http_session_cookie (self, answer, NULL, false);
    }
    else
    if (route->kind == R_PASSWORD)
        xxl_http_password (self, answer, conn, auth, body);
    else {
        const xxl_command_t *command = &xxl_commands [route->command];
        s_body_fit (command, body);
        //  The query's keys (they win over the body's), then the path's
        //  ids (they win over both: the path names what is acted on)
        query_ctx_t query = { body, command, NULL, "" };
        MHD_get_connection_values (conn, MHD_GET_ARGUMENT_KIND, s_query_each, &query);
        const char *keys [2] = { route->p1, route->p2 };
        for (int i = 0; i < 2 && keys [i]; i++) {
            if (streq (keys [i], "version") && streq (args [i], "latest")) {
                json_object_del (body, keys [i]);
                continue;               //  (GLUE_SHOW without one: the newest)
            }
            json_t *typed = s_typed (command, keys [i], args [i]);
            if (!typed) {
                xxl_http_errorf (answer, 400, "%s in the path must be a decimal integer",
                                 keys [i]);
                json_decref (body);
                return;
            }
            json_object_set_new (body, keys [i], typed);
        }
        if (query.bad)
            xxl_http_errorf (answer, 400, "query %s: %s", query.bad,
                             query.why [0]? query.why: "not a valid value");
        else
            xxl_http_forward (self, answer, auth, command->name, body, route->ok);
    }
    json_decref (body);
}
