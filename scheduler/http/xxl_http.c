/*  xxl_http.c -- the scheduler's HTTP server (xxl_http.h; docs/http.md;
    its files' contract: xxl_http_int.h).

    xxl_http_new starts libmicrohttpd's daemon (a thread per connection,
    TLS when http/cert and http/key are set), xxl_http_stop makes calls to
    the engine give up, xxl_http_destroy stops the daemon.  The access
    handler, s_access, reads a request whole (up to max_body bytes: 413
    past it, judged from Content-Length before any byte is read when it
    is given), having refused a Host not allowed (421) and a body's length
    given twice (400); then routes it: /healthz, /readyz, /metrics here;
    /api/v1/... through the route table; anything else is the console's files.
    Every answer goes out with the security headers (s_queue).

    It holds, until they have files of their own, the REST api.  Calls
    xxl_http_auth.c, xxl_http_call.c and xxl_http_answer.c of the server's
    files.
*/

#include "xxl_http_int.h"
#include "xxl_commands.h"
#include "xxl/msg.h"
#include "xxl/cron.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <sys/stat.h>

//  Content-Security-Policy of the console's files.  Scripts only from the
//  console's own files (its build has no inline script: console/
//  vite.config.js); styles from its files and inline, as the GLUE
//  editor (CodeMirror's style-mod) adds its themes as <style> elements;
//  images from its files and data: (CodeMirror's theme icons, the page's
//  empty icon); requests only to this origin; never in a frame.
#define XXL_HTTP_CSP_CONSOLE \
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; " \
    "img-src 'self' data:; font-src 'self'; connect-src 'self'; manifest-src 'self'; " \
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
//  Of every other answer (JSON, text): nothing may load or frame it
#define XXL_HTTP_CSP_NONE \
    "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
//  GnuTLS priorities: its defaults, but TLS 1.2 and 1.3 only (1.0 and 1.1
//  are deprecated, RFC 8996)
#define XXL_HTTP_TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"
//  HTTPS only: browsers keep to HTTPS for this host for a year
#define XXL_HTTP_HSTS "max-age=31536000"

//  ---------------------------------------------------------------------
//  The REST api

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

//  Whether text is a decimal integer (digits, a '-' before them at most:
//  no '+', space or other text strtoll would let pass) in range, into *out
static bool
s_decimal (const char *text, long long *out)
{
    const char *digits = text + (*text == '-');
    if (!*digits || strspn (digits, "0123456789") != strlen (digits))
        return false;
    errno = 0;
    *out = strtoll (text, NULL, 10);
    return errno == 0;
}

//  A value from the path or query for the command's field key: typed as
//  the field is (an integer field takes decimal digits); NULL when bad
static json_t *
s_typed (const xxl_command_t *command, const char *key, const char *value)
{
    const xxl_field_t *field = command? xxl_command_field (command, key): NULL;
    if (field && (field->type == XXL_FIELD_INT || field->type == XXL_FIELD_NUMBER)) {
        long long number;
        if (!s_decimal (value, &number))
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
    const char *bad;                    //  the first query key with a bad value
} query_ctx_t;

static enum MHD_Result
s_query_each (void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void) kind;
    query_ctx_t *ctx = (query_ctx_t *) cls;
    //  LOG_CAT's `from` is the api's fromLineNum
    if (ctx->command && streq (ctx->command->name, "LOG_CAT") && streq (key, "from"))
        key = "fromLineNum";
    if (!value || !ctx->command || !xxl_command_field (ctx->command, key))
        return MHD_YES;                 //  (an unknown key is ignored)
    json_t *typed = s_typed (ctx->command, key, value);
    if (!typed) {
        if (!ctx->bad)
            ctx->bad = key;
        return MHD_YES;
    }
    json_object_set_new (ctx->fields, key, typed);
    return MHD_YES;
}

//  A body's field the table types as a string given as an integer (a
//  group's id as jobGroup) becomes its decimal text; apps given as a list
//  become the api's comma list
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
        if (!s_decimal (n_text, &n) || n < 1 || n > 100) {
            xxl_http_error (answer, 400, "n must be 1 to 100");
            return;
        }
    }
    if (from_text) {
        if (!s_decimal (from_text, &from) || from < 0) {
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
            "readOnly", command->read_only,
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
        if (path_known)
            xxl_http_errorf (answer, 405, "%s is not a method of /api/v1/%s", method, path);
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
            xxl_http_session_cookie (self, answer, NULL);
    }
    else
    if (route->kind == R_PASSWORD)
        xxl_http_password (self, answer, conn, auth, body);
    else {
        const xxl_command_t *command = &xxl_commands [route->command];
        s_body_fit (command, body);
        //  The query's keys (they win over the body's), then the path's
        //  ids (they win over both: the path names what is acted on)
        query_ctx_t query = { body, command, NULL };
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
            xxl_http_errorf (answer, 400, "query %s: not a valid value", query.bad);
        else
            xxl_http_forward (self, answer, auth, command->name, body, route->ok);
    }
    json_decref (body);
}

//  ---------------------------------------------------------------------
//  Static files (the console)

static const char *
s_mime (const char *path)
{
    static const char *const types [][2] = {
        { ".html", "text/html; charset=utf-8" }, { ".js", "text/javascript; charset=utf-8" },
        { ".mjs", "text/javascript; charset=utf-8" }, { ".css", "text/css; charset=utf-8" },
        { ".json", "application/json" }, { ".svg", "image/svg+xml" }, { ".png", "image/png" },
        { ".ico", "image/x-icon" }, { ".woff2", "font/woff2" }, { ".woff", "font/woff" },
        { ".ttf", "font/ttf" }, { ".map", "application/json" }, { ".txt", "text/plain; charset=utf-8" },
        { ".wasm", "application/wasm" }, { NULL, NULL }
    };
    const char *dot = strrchr (path, '.');
    for (size_t i = 0; dot && types [i][0]; i++)
        if (streq (dot, types [i][0]))
            return types [i][1];
    return "application/octet-stream";
}

//  Opens rel ("/a/b") under the folder root one segment at a time, each
//  with O_NOFOLLOW: a symbolic link is refused wherever it is in the path
//  (a link to a folder as a link to a file).  The file must be a regular
//  one (O_NONBLOCK: a FIFO does not hold the thread); -1 otherwise.
static int
s_open_under (const char *root, const char *rel, size_t *size)
{
    int dir = open (root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    const char *p = rel;
    while (dir >= 0) {
        while (*p == '/')
            p++;
        size_t length = strcspn (p, "/");
        char name [NAME_MAX + 1];
        if (length == 0 || length > NAME_MAX)
            break;                      //  (a path ending in '/' names no file)
        memcpy (name, p, length);
        name [length] = 0;
        p += length;
        if (*p == 0) {
            int fd = openat (dir, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
            close (dir);
            struct stat st;
            if (fd >= 0 && fstat (fd, &st) == 0 && S_ISREG (st.st_mode)) {
                *size = (size_t) st.st_size;
                return fd;
            }
            if (fd >= 0)
                close (fd);
            return -1;
        }
        int next = openat (dir, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        close (dir);
        dir = next;
    }
    if (dir >= 0)
        close (dir);
    return -1;
}

//  Opens the console's file for url: segments like "..", hidden files,
//  symbolic links (anywhere in the path) and anything not a regular file
//  are not served.  index.html for "/" and for paths with no file (the
//  console routes on the client).
static int
s_static_open (xxl_http_t *self, const char *url, char *path, size_t pathlen, size_t *size)
{
    if (!self->console || strstr (url, "/.") || strchr (url, '\\'))
        return -1;
    for (int attempt = 0; attempt < 2; attempt++) {
        const char *rel = attempt == 0 && !streq (url, "/")? url: "/index.html";
        snprintf (path, pathlen, "%s%s", self->console, rel);
        int fd = s_open_under (self->console, rel, size);
        if (fd >= 0)
            return fd;
        if (attempt == 0 && streq (rel, "/index.html"))
            break;
    }
    return -1;
}

//  ---------------------------------------------------------------------
//  The access handler

//  The headers every answer carries: its Content-Security-Policy (the
//  console's for its files, else one that lets nothing load), no type
//  sniffing, no framing, no Referer, a browsing context and resources of
//  this origin's own; Strict-Transport-Security under TLS
static void
s_security_headers (xxl_http_t *self, struct MHD_Response *response, bool console)
{
    MHD_add_response_header (response, "Content-Security-Policy",
                             console? XXL_HTTP_CSP_CONSOLE: XXL_HTTP_CSP_NONE);
    MHD_add_response_header (response, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header (response, "X-Frame-Options", "DENY");
    MHD_add_response_header (response, "Referrer-Policy", "no-referrer");
    MHD_add_response_header (response, "Cross-Origin-Opener-Policy", "same-origin");
    MHD_add_response_header (response, "Cross-Origin-Resource-Policy", "same-origin");
    if (self->tls)
        MHD_add_response_header (response, "Strict-Transport-Security", XXL_HTTP_HSTS);
}

static enum MHD_Result
s_queue (xxl_http_t *self, struct MHD_Connection *conn, answer_t *answer, bool head)
{
    assert (answer->type && answer->status >= 100 && answer->status <= 599);
    struct MHD_Response *response = MHD_create_response_from_buffer (
        head? 0: answer->size, answer->body? answer->body: (void *) "", MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header (response, MHD_HTTP_HEADER_CONTENT_TYPE, answer->type);
    MHD_add_response_header (response, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    s_security_headers (self, response, false);
    if (answer->cookie [0])
        MHD_add_response_header (response, MHD_HTTP_HEADER_SET_COOKIE, answer->cookie);
    if (answer->retry_after > 0) {
        char seconds [24];
        snprintf (seconds, sizeof seconds, "%" PRId64, answer->retry_after);
        MHD_add_response_header (response, MHD_HTTP_HEADER_RETRY_AFTER, seconds);
    }
    enum MHD_Result rc = MHD_queue_response (conn, (unsigned) answer->status, response);
    MHD_destroy_response (response);
    free (answer->body);
    return rc;
}

//  Counts the Content-Length headers (cls: an int)
static enum MHD_Result
s_count_length (void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void) kind;
    (void) value;
    if (strcasecmp (key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0)
        (*(int *) cls)++;
    return MHD_YES;
}

//  True when a request's Host header (NULL: none, as from HTTP/1.0 clients)
//  names this server as http/hosts allows: an IP address, localhost, or a
//  listed name, with or without a port.  A browser always sends the name
//  it resolved: a page of another site whose name was made to resolve to
//  this server (DNS rebinding) names that site, and is refused.
static bool
s_host_allowed (xxl_http_t *self, const char *host)
{
    if (!self->hosts || !host)
        return true;
    char name [256];
    size_t len = strlen (host);
    if (len == 0 || len >= sizeof name)
        return false;
    memcpy (name, host, len + 1);
    unsigned char bytes [16];
    if (name [0] == '[') {
        char *end = strchr (name, ']');
        if (!end || (end [1] && (end [1] != ':' || !end [2]
                                 || strspn (end + 2, "0123456789") != strlen (end + 2))))
            return false;
        *end = 0;
        return inet_pton (AF_INET6, name + 1, bytes) == 1;
    }
    char *colon = strchr (name, ':');
    if (colon) {
        if (!colon [1] || strspn (colon + 1, "0123456789") != strlen (colon + 1))
            return false;
        *colon = 0;
    }
    len = strlen (name);
    if (len && name [len - 1] == '.')
        name [--len] = 0;               //  (the root's dot: the same name)
    if (len == 0)
        return false;
    for (char *c = name; *c; c++)
        *c = (char) tolower ((unsigned char) *c);
    if (inet_pton (AF_INET, name, bytes) == 1 || streq (name, "localhost"))
        return true;
    for (char **allowed = self->hosts; *allowed; allowed++) {
        const char *entry = *allowed;
        if (strncmp (entry, "*.", 2) == 0) {
            size_t tail = strlen (entry + 1);   //  ".example.com"
            if (len > tail && streq (name + len - tail, entry + 1))
                return true;
        }
        else
        if (streq (name, entry))
            return true;
    }
    return false;
}

//  Reads http/hosts into self->hosts (unset, empty or "*": any name)
static int
s_hosts_set (xxl_http_t *self, const char *hosts, char *why, size_t whylen)
{
    if (!hosts || !*hosts)
        return 0;
    size_t count = 1;
    for (const char *c = hosts; *c; c++)
        count += *c == ',';
    self->hosts = (char **) zmalloc ((count + 1) * sizeof (char *));
    size_t used = 0;
    bool any = false;
    for (const char *start = hosts; start; ) {
        const char *comma = strchr (start, ',');
        size_t len = comma? (size_t) (comma - start): strlen (start);
        while (len && isspace ((unsigned char) *start)) {
            start++;
            len--;
        }
        while (len && isspace ((unsigned char) start [len - 1]))
            len--;
        if (len == 1 && *start == '*')
            any = true;
        else
        if (len) {
            char *entry = strndup (start, len);
            assert (entry);
            for (char *c = entry; *c; c++)
                *c = (char) tolower ((unsigned char) *c);
            size_t valid = strspn (entry, "abcdefghijklmnopqrstuvwxyz0123456789-._*");
            if (valid != len || strchr (entry + 1, '*') || (entry [0] == '*' && entry [1] != '.')
            ||  len > 253) {
                snprintf (why, whylen, "http/hosts: '%s' is not a host name (a name,"
                          " *.name for its subdomains, or *)", entry);
                free (entry);
                return -1;
            }
            if (entry [len - 1] == '.')
                entry [len - 1] = 0;
            self->hosts [used++] = entry;
        }
        start = comma? comma + 1: NULL;
    }
    if (any || used == 0) {
        //  ("*", or no name at all: "", " ", ",")
        for (size_t i = 0; i < used; i++)
            free (self->hosts [i]);
        free (self->hosts);
        self->hosts = NULL;
    }
    return 0;
}

static enum MHD_Result
s_access (void *cls, struct MHD_Connection *conn, const char *url, const char *method,
          const char *version, const char *upload_data, size_t *upload_data_size,
          void **con_cls)
{
    (void) version;
    xxl_http_t *self = (xxl_http_t *) cls;
    request_ctx_t *ctx = (request_ctx_t *) *con_cls;
    if (!ctx) {
        ctx = (request_ctx_t *) zmalloc (sizeof *ctx);
        *con_cls = ctx;
        const char *host = MHD_lookup_connection_value (conn, MHD_HEADER_KIND,
                                                        MHD_HTTP_HEADER_HOST);
        if (!s_host_allowed (self, host)) {
            ctx->too_big = true;        //  (nothing of the body is kept)
            answer_t answer = { .type = "text/plain; charset=utf-8" };
            char shown [80];
            snprintf (shown, sizeof shown, "%s", host);
            for (char *c = shown; *c; c++)
                if (!isprint ((unsigned char) *c))
                    *c = '?';
            xxl_http_errorf (&answer, 421, "this server does not answer for the host '%s'"
                             " (http/hosts)", shown);
            return s_queue (self, conn, &answer, streq (method, "HEAD"));
        }
        //  A body's length told twice (two Content-Lengths, or one with
        //  Transfer-Encoding) is refused: a proxy in front may have read
        //  it the other way, and the rest of the body as a request of its
        //  own (request smuggling)
        int lengths = 0, encodings = 0;
        MHD_get_connection_values (conn, MHD_HEADER_KIND, s_count_length, &lengths);
        if (MHD_lookup_connection_value (conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING))
            encodings = 1;
        if (lengths > 1 || (lengths && encodings)) {
            ctx->too_big = true;        //  (nothing of the body is kept)
            answer_t answer = { .type = "text/plain; charset=utf-8" };
            xxl_http_error (&answer, 400, "the body's length is given twice (Content-Length"
                            " and Transfer-Encoding, or two Content-Lengths)");
            return s_queue (self, conn, &answer, streq (method, "HEAD"));
        }
        const char *length = MHD_lookup_connection_value (conn, MHD_HEADER_KIND,
                                                          MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (length && strtoull (length, NULL, 10) > self->max_body) {
            //  (answered now: the client need not send the body, nor wait
            //  for an answer that would come only once it had; libmicrohttpd
            //  closes the connection after it, the body unread)
            ctx->too_big = true;
            answer_t answer = { .type = "text/plain; charset=utf-8" };
            xxl_http_errorf (&answer, 413, "the body is over the %zu-byte limit", self->max_body);
            return s_queue (self, conn, &answer, streq (method, "HEAD"));
        }
        return MHD_YES;
    }
    if (*upload_data_size) {
        if (!ctx->too_big) {
            size_t have = ctx->body? zchunk_size (ctx->body): 0;
            if (have + *upload_data_size > self->max_body)
                ctx->too_big = true;
            else {
                if (!ctx->body)
                    ctx->body = zchunk_new (NULL, *upload_data_size);
                zchunk_extend (ctx->body, upload_data, *upload_data_size);
            }
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    answer_t answer = { .status = 200, .type = "text/plain; charset=utf-8" };
    bool head = streq (method, "HEAD");
    bool get = streq (method, "GET") || head;
    if (ctx->too_big)
        xxl_http_errorf (&answer, 413, "the body is over the %zu-byte limit", self->max_body);
    else
    if (strncmp (url, "/api/v1/", 8) == 0)
        xxl_http_api (self, &answer, conn, head? "GET": method, url + 8, ctx);
    else
    if (strncmp (url, "/api/", 5) == 0 || streq (url, "/api"))
        xxl_http_error (&answer, 404, "no such path (the REST api is under /api/v1/)");
    else
    if (streq (url, "/healthz") || streq (url, "/readyz") || streq (url, "/metrics")) {
        xxl_metrics_t metrics;
        bool published = xxl_metrics_read (self->metrics, &metrics);
        if (!get)
            xxl_http_errorf (&answer, 405, "%s takes GET", url);
        else
        if (streq (url, "/healthz")) {
            answer.body = strdup ("ok\n");
            answer.size = 3;
        }
        else
        if (streq (url, "/readyz")) {
            bool ready = published && metrics.ready;
            answer.status = ready? 200: 503;
            answer.body = strdup (ready? "ready\n": "not ready\n");
            answer.size = strlen (answer.body);
        }
        else {
            if (!published)
                memset (&metrics, 0, sizeof metrics);
            //  (the HTTP side's own counters)
            metrics.checks_ok = __atomic_load_n (&self->checks_ok, __ATOMIC_RELAXED);
            metrics.checks_wrong = __atomic_load_n (&self->checks_wrong, __ATOMIC_RELAXED);
            metrics.checks_limited = __atomic_load_n (&self->checks_limited, __ATOMIC_RELAXED);
            metrics.limit_used = self->limit? (int64_t) xxl_http_limit_used (self->limit): -1;
            metrics.limit_slots = self->limit? (int64_t) xxl_http_limit_slots (self->limit): -1;
            answer.body = xxl_metrics_render (&metrics);
            answer.size = strlen (answer.body);
            answer.type = "text/plain; version=0.0.4; charset=utf-8";
        }
    }
    else
    if (!get)
        xxl_http_errorf (&answer, 405, "%s takes GET", url);
    else {
        char path [4096];
        size_t size = 0;
        int fd = s_static_open (self, url, path, sizeof path, &size);
        if (fd < 0)
            xxl_http_error (&answer, 404, "no such file");
        else {
            struct MHD_Response *response = head
                ? MHD_create_response_from_buffer (0, (void *) "", MHD_RESPMEM_PERSISTENT)
                : MHD_create_response_from_fd (size, fd);
            if (head)
                close (fd);
            MHD_add_response_header (response, MHD_HTTP_HEADER_CONTENT_TYPE, s_mime (path));
            s_security_headers (self, response, true);
            MHD_add_response_header (response, MHD_HTTP_HEADER_CACHE_CONTROL,
                                     strstr (path, "/index.html")? "no-cache": "max-age=3600");
            enum MHD_Result rc = MHD_queue_response (conn, MHD_HTTP_OK, response);
            MHD_destroy_response (response);
            return rc;
        }
    }
    if (!answer.body) {
        answer.body = strdup ("");
        answer.size = 0;
    }
    return s_queue (self, conn, &answer, head);
}

static void
s_completed (void *cls, struct MHD_Connection *conn, void **con_cls,
             enum MHD_RequestTerminationCode code)
{
    (void) cls;
    (void) conn;
    (void) code;
    request_ctx_t *ctx = (request_ctx_t *) *con_cls;
    if (ctx) {
        zchunk_destroy (&ctx->body);
        free (ctx);
        *con_cls = NULL;
    }
}

//  Decodes a URL's or query value's %HH escapes in place, except %00: a
//  NUL would end the text where the caller did not (/jobs/2%00x read as
//  /jobs/2), so it stays as the three characters it is
static size_t
s_unescape (void *cls, struct MHD_Connection *conn, char *text)
{
    (void) cls;
    (void) conn;
    char *out = text;
    for (const char *in = text; *in; ) {
        if (in [0] == '%' && isxdigit ((unsigned char) in [1])
        &&  isxdigit ((unsigned char) in [2])) {
            char hex [3] = { in [1], in [2], 0 };
            char byte = (char) strtol (hex, NULL, 16);
            if (byte) {
                *out++ = byte;
                in += 3;
                continue;
            }
        }
        *out++ = *in++;
    }
    *out = 0;
    return (size_t) (out - text);
}

static void
s_mhd_log (void *cls, const char *format, va_list args)
{
    (void) cls;
    char line [512];
    vsnprintf (line, sizeof line, format, args);
    size_t length = strlen (line);
    while (length && line [length - 1] == '\n')
        line [--length] = 0;
    zsys_warning ("http: %s", line);
}

//  ---------------------------------------------------------------------

//  "HOST:PORT" ("*" or "0.0.0.0" any IPv4, "[::1]" IPv6) into addr; 0/-1
static int
s_endpoint (const char *endpoint, struct sockaddr_storage *addr, socklen_t *addrlen)
{
    const char *colon = strrchr (endpoint, ':');
    if (!colon || colon == endpoint)
        return -1;
    char host [128];
    size_t length = (size_t) (colon - endpoint);
    if (length >= sizeof host)
        return -1;
    memcpy (host, endpoint, length);
    host [length] = 0;
    char *end;
    long port = strtol (colon + 1, &end, 10);
    if (!colon [1] || *end || port < 0 || port > 65535)
        return -1;
    memset (addr, 0, sizeof *addr);
    if (host [0] == '[' && host [length - 1] == ']') {
        host [length - 1] = 0;
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *) addr;
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons ((uint16_t) port);
        if (inet_pton (AF_INET6, host + 1, &in6->sin6_addr) != 1)
            return -1;
        *addrlen = sizeof *in6;
        return 0;
    }
    struct sockaddr_in *in = (struct sockaddr_in *) addr;
    in->sin_family = AF_INET;
    in->sin_port = htons ((uint16_t) port);
    if (streq (host, "*"))
        in->sin_addr.s_addr = htonl (INADDR_ANY);
    else
    if (streq (host, "localhost"))
        in->sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    else
    if (inet_pton (AF_INET, host, &in->sin_addr) != 1)
        return -1;
    *addrlen = sizeof *in;
    return 0;
}

bool
xxl_http_loopback (const char *endpoint)
{
    struct sockaddr_storage addr;
    socklen_t addrlen;
    if (s_endpoint (endpoint, &addr, &addrlen))
        return false;
    if (addr.ss_family == AF_INET6)
        return IN6_IS_ADDR_LOOPBACK (&((struct sockaddr_in6 *) &addr)->sin6_addr);
    return (ntohl (((struct sockaddr_in *) &addr)->sin_addr.s_addr) >> 24) == 127;
}

xxl_http_t *
xxl_http_new (const xxl_http_config_t *config, const char *engine, xxl_metrics_box_t *metrics,
              int wait_ms, char *bound, size_t boundlen, char *why, size_t whylen)
{
    struct sockaddr_storage addr;
    socklen_t addrlen;
    if (s_endpoint (config->endpoint, &addr, &addrlen)) {
        snprintf (why, whylen, "http endpoint '%s' is not HOST:PORT (e.g. 127.0.0.1:8080)",
                  config->endpoint);
        return NULL;
    }
    xxl_http_t *self = (xxl_http_t *) zmalloc (sizeof *self);
    self->engine = strdup (engine);
    self->metrics = metrics;
    self->wait_ms = wait_ms;
    self->max_body = config->max_body;
    self->next_id = 1;
    if (config->login_burst > 0) {
        //  (main.c checks the ranges; a config made in code gets sane floors)
        self->limit = xxl_http_limit_new (
            (size_t) (config->login_slots > 0? config->login_slots: 4096), config->login_burst,
            (int64_t) (config->login_interval_s > 0? config->login_interval_s: 60) * 1000);
        if (!self->limit) {
            snprintf (why, whylen, "http: no memory or random bytes for the login limiter");
            xxl_http_destroy (&self);
            return NULL;
        }
    }
    if (s_hosts_set (self, config->hosts, why, whylen)) {
        xxl_http_destroy (&self);
        return NULL;
    }
    if (config->console && *config->console) {
        char real [4096];
        if (realpath (config->console, real))
            self->console = strdup (real);
        else
            zsys_warning ("http: console folder %s: %s (/ answers 404)", config->console,
                          strerror (errno));
    }
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD
                   | MHD_USE_ERROR_LOG | (addr.ss_family == AF_INET6? MHD_USE_IPv6: 0);
    bool cert = config->cert && *config->cert, key = config->key && *config->key;
    if (cert != key) {
        snprintf (why, whylen, "http TLS needs both http/cert and http/key");
        xxl_http_destroy (&self);
        return NULL;
    }
    if (cert) {
        zchunk_t *c = zchunk_slurp (config->cert, 1024 * 1024);
        zchunk_t *k = zchunk_slurp (config->key, 1024 * 1024);
        if (c && k) {
            self->cert_pem = strndup ((const char *) zchunk_data (c), zchunk_size (c));
            self->key_pem = strndup ((const char *) zchunk_data (k), zchunk_size (k));
        }
        zchunk_destroy (&c);
        zchunk_destroy (&k);
        if (!self->cert_pem || !self->key_pem) {
            snprintf (why, whylen, "cannot read http/cert %s or http/key %s", config->cert,
                      config->key);
            xxl_http_destroy (&self);
            return NULL;
        }
        flags |= MHD_USE_TLS;
        self->tls = true;
    }
    self->daemon = MHD_start_daemon (
        flags, 0, NULL, NULL, s_access, self,
        MHD_OPTION_EXTERNAL_LOGGER, s_mhd_log, self,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *) &addr,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned) XXL_HTTP_CONNECTIONS,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned) config->per_address,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned) 60,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t) (128 * 1024),
        MHD_OPTION_NOTIFY_COMPLETED, s_completed, self,
        MHD_OPTION_UNESCAPE_CALLBACK, s_unescape, self,
        self->tls? MHD_OPTION_HTTPS_MEM_CERT: MHD_OPTION_END, self->cert_pem,
        MHD_OPTION_HTTPS_MEM_KEY, self->key_pem,
        MHD_OPTION_HTTPS_PRIORITIES, XXL_HTTP_TLS_PRIORITIES,
        MHD_OPTION_END);
    if (!self->daemon) {
        snprintf (why, whylen, "cannot serve HTTP on %s%s (the address is in use or not"
                  " this host's, or the TLS certificate and key do not load)", config->endpoint,
                  self->tls? " with TLS": "");
        xxl_http_destroy (&self);
        return NULL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info (self->daemon,
                                                            MHD_DAEMON_INFO_BIND_PORT);
    char host [128];
    const char *colon = strrchr (config->endpoint, ':');
    snprintf (host, sizeof host, "%.*s", (int) (colon - config->endpoint), config->endpoint);
    snprintf (bound, boundlen, "%s:%u", host, info? (unsigned) info->port: 0);
    return self;
}

void
xxl_http_stop (xxl_http_t *self)
{
    if (self)
        __atomic_store_n (&self->stopping, 1, __ATOMIC_RELAXED);
}

void
xxl_http_destroy (xxl_http_t **self_p)
{
    xxl_http_t *self = *self_p;
    if (!self)
        return;
    __atomic_store_n (&self->stopping, 1, __ATOMIC_RELAXED);
    if (self->daemon)
        MHD_stop_daemon (self->daemon);
    xxl_http_limit_destroy (&self->limit);
    free (self->engine);
    free (self->console);
    free (self->cert_pem);
    free (self->key_pem);
    for (char **host = self->hosts; host && *host; host++)
        free (*host);
    free (self->hosts);
    free (self);
    *self_p = NULL;
}
