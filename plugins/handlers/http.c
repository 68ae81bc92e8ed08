/*  http.c -- httpJobHandler, as XXL-JOB's SampleXxlJob.httpJobHandler (libcurl).

    The param, in either of XXL-JOB's formats:

      lines (XXL-JOB 2.x)          url: http://host/path
                                   method: GET          (GET when absent)
                                   data: {"k": 1}       (the request body)

      a JSON object (XXL-JOB 3.x)  {"url": "...", "method": "POST", "data": "...",
                                    "contentType": "application/json",
                                    "headers": {"X-A": "1"}, "cookies": {"c": "v"},
                                    "form": {"k": "v"}, "auth": "Bearer t",
                                    "timeout": 3000}
                                   (method POST when absent, as XXL-JOB 3.x)

    and, as XXL-JOB 1.x, a bare http(s) URL (GET).  Any method name is
    sent (GET, POST, PUT, DELETE, PATCH, HEAD, OPTIONS, ...); the body
    (data, else form url-encoded) goes with any method but GET and HEAD.
    Content-Type defaults to application/json;charset=UTF-8 (as XXL-JOB).
    Only http and https; up to 5 redirects.

    Outcome: a response status >= 400 fails the run ("HTTP status 404"), as
    does a transport error (curl's message); otherwise it succeeds ("HTTP
    status 200").  The log gets the request line, the status and the
    response body, at most 64 KiB of it (the rest counted, not logged).

    Where it may connect (xxl_http_guard.h, shared with the AI handlers):
    XXL_HTTP_ALLOW, in the agent's environment (the runner inherits it),
    lists the hosts, separated by commas or blanks:
    a name (api.example.com), every subdomain of one (*.example.com, not
    example.com itself), an IPv4 or IPv6 address or network (10.0.0.0/8,
    ::1, fd00::/8).  Unset or blank, any host may be called but a
    link-local or cloud metadata address (169.254.0.0/16, fe80::/10,
    fd00:ec2::254, 100.100.100.200).  Set, a connection is allowed when
    an address entry holds its address, or a name entry the URL's host
    name and the address is not a metadata one (those need an address
    entry).  An entry that is none of these is logged to the run and
    never matches.  The check is made in curl's socket opener on the very
    address connected -- after resolution, so a name that resolves (or
    rebinds) to a refused address is refused -- for the URL and every
    redirect; a refusal opens no socket and fails the run "refused: host
    H is not allowed (why)".  Through a proxy (libcurl's http_proxy,
    https_proxy, ALL_PROXY, with no_proxy), the connection is the proxy's:
    the address judged is the proxy's, a name entry still matches the
    URL's host, and the proxy resolves the target.

    Time: the run's timeout bounds the request: once the run is cancelled
    (its timeout, a kill) the transfer is aborted within about a second
    (curl's progress callback asks cancelled()).  "timeout" (ms) of the
    JSON form sets curl's own limit; connecting gives up after 10 s.
*/

#define _GNU_SOURCE
#include "xxl_http_guard.h"
#include <pthread.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define streq_ci(a, b)          (strcasecmp ((a), (b)) == 0)
#define XXL_HTTP_BODY_LOGGED    (64 * 1024)
#define XXL_HTTP_CONNECT_MS     10000

//  --------------------------------------------------------------------
//  The request, from the param

typedef struct {
    char *url, *method, *data, *content_type, *auth;
    struct curl_slist *headers;         //  "Name: value" lines
    char *cookies;                      //  "a=b; c=d"
    char *form;                         //  url-encoded
    long timeout_ms;                    //  0: none of its own
} request_t;

static void
s_request_free (request_t *req)
{
    free (req->url);
    free (req->method);
    free (req->data);
    free (req->content_type);
    free (req->auth);
    free (req->cookies);
    free (req->form);
    curl_slist_free_all (req->headers);
    memset (req, 0, sizeof *req);
}

//  Appends "sep text" to *list (malloc'd string)
static void
s_append (char **list, const char *sep, const char *text)
{
    char *joined = NULL;
    if (asprintf (&joined, "%s%s%s", *list? *list: "", *list? sep: "", text) < 0)
        return;
    free (*list);
    *list = joined;
}

//  A minimal JSON reader: enough for one object of strings, numbers and
//  objects of strings (anything else is skipped)
typedef struct {
    const char *p;
    const char *error;
} json_t;

static void
s_ws (json_t *j)
{
    while (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')
        j->p++;
}

static void
s_utf8 (char **o, unsigned long c)
{
    char *p = *o;
    if (c < 0x80)
        *p++ = (char) c;
    else
    if (c < 0x800) {
        *p++ = (char) (0xC0 | (c >> 6));
        *p++ = (char) (0x80 | (c & 0x3F));
    }
    else
    if (c < 0x10000) {
        *p++ = (char) (0xE0 | (c >> 12));
        *p++ = (char) (0x80 | ((c >> 6) & 0x3F));
        *p++ = (char) (0x80 | (c & 0x3F));
    }
    else {
        *p++ = (char) (0xF0 | (c >> 18));
        *p++ = (char) (0x80 | ((c >> 12) & 0x3F));
        *p++ = (char) (0x80 | ((c >> 6) & 0x3F));
        *p++ = (char) (0x80 | (c & 0x3F));
    }
    *o = p;
}

static int
s_hex4 (const char *p, unsigned long *value)
{
    *value = 0;
    for (int i = 0; i < 4; i++) {
        int c = p [i], d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        else return -1;
        *value = *value * 16 + (unsigned long) d;
    }
    return 0;
}

//  A string at j->p (at its quote); malloc'd, NULL on error
static char *
s_string (json_t *j)
{
    if (*j->p != '"') {
        j->error = "a string expected";
        return NULL;
    }
    const char *p = ++j->p;
    char *out = (char *) malloc (strlen (p) + 1);     //  decoding never grows it
    if (!out) {
        j->error = "out of memory";
        return NULL;
    }
    char *o = out;
    while (*p && *p != '"') {
        if (*p != '\\') {
            *o++ = *p++;
            continue;
        }
        p++;
        unsigned long c;
        switch (*p) {
            case '"': case '\\': case '/': *o++ = *p; break;
            case 'b': *o++ = '\b'; break;
            case 'f': *o++ = '\f'; break;
            case 'n': *o++ = '\n'; break;
            case 'r': *o++ = '\r'; break;
            case 't': *o++ = '\t'; break;
            case 'u':
                if (s_hex4 (p + 1, &c))
                    goto bad;
                p += 4;
                if (c >= 0xD800 && c < 0xDC00 && p [1] == '\\' && p [2] == 'u') {
                    unsigned long low;
                    if (s_hex4 (p + 3, &low) == 0 && low >= 0xDC00 && low < 0xE000) {
                        c = 0x10000 + ((c - 0xD800) << 10) + (low - 0xDC00);
                        p += 6;
                    }
                }
                s_utf8 (&o, c);
                break;
            default:
                goto bad;
        }
        p++;
    }
    if (*p != '"')
        goto bad;
    *o = 0;
    j->p = p + 1;
    return out;
bad:
    free (out);
    j->error = "a bad string";
    return NULL;
}

//  Skips any value; 0 or -1
static int
s_skip (json_t *j, int depth)
{
    s_ws (j);
    if (depth > 64) {
        j->error = "nested too deep";
        return -1;
    }
    if (*j->p == '"') {
        char *text = s_string (j);
        free (text);
        return text? 0: -1;
    }
    if (*j->p == '{' || *j->p == '[') {
        char close = *j->p == '{'? '}': ']';
        int object = *j->p == '{';
        j->p++;
        s_ws (j);
        if (*j->p == close) {
            j->p++;
            return 0;
        }
        while (1) {
            if (object) {
                s_ws (j);
                char *key = s_string (j);
                if (!key)
                    return -1;
                free (key);
                s_ws (j);
                if (*j->p++ != ':') {
                    j->error = "':' expected";
                    return -1;
                }
            }
            if (s_skip (j, depth + 1))
                return -1;
            s_ws (j);
            if (*j->p == ',') {
                j->p++;
                continue;
            }
            if (*j->p == close) {
                j->p++;
                return 0;
            }
            j->error = "',' or a closing bracket expected";
            return -1;
        }
    }
    const char *start = j->p;
    while (*j->p && (isalnum ((unsigned char) *j->p) || strchr ("+-.", *j->p)))
        j->p++;
    if (j->p == start) {
        j->error = "a value expected";
        return -1;
    }
    return 0;
}

//  A value as text: a string's content, else its JSON text (a number, an
//  object given as data); NULL for null; malloc'd
static char *
s_value_text (json_t *j, int *is_null)
{
    s_ws (j);
    *is_null = 0;
    if (*j->p == '"')
        return s_string (j);
    const char *start = j->p;
    if (s_skip (j, 0))
        return NULL;
    if ((size_t) (j->p - start) == 4 && strncmp (start, "null", 4) == 0) {
        *is_null = 1;
        return NULL;
    }
    return strndup (start, (size_t) (j->p - start));
}

//  An object of name -> value; calls each (req, name, value)
static int
s_object (json_t *j, request_t *req, void (*each) (request_t *, const char *, const char *))
{
    s_ws (j);
    if (*j->p != '{') {
        int is_null;
        char *text = s_value_text (j, &is_null);
        free (text);
        if (is_null)
            return 0;
        j->error = j->error? j->error: "an object expected";
        return -1;
    }
    j->p++;
    s_ws (j);
    if (*j->p == '}') {
        j->p++;
        return 0;
    }
    while (1) {
        s_ws (j);
        char *name = s_string (j);
        if (!name)
            return -1;
        s_ws (j);
        if (*j->p++ != ':') {
            free (name);
            j->error = "':' expected";
            return -1;
        }
        int is_null;
        char *value = s_value_text (j, &is_null);
        if (!value && !is_null) {
            free (name);
            return -1;
        }
        if (value)
            each (req, name, value);
        free (name);
        free (value);
        s_ws (j);
        if (*j->p == ',') {
            j->p++;
            continue;
        }
        if (*j->p == '}') {
            j->p++;
            return 0;
        }
        j->error = "',' or '}' expected";
        return -1;
    }
}

static void
s_each_header (request_t *req, const char *name, const char *value)
{
    char *line = NULL;
    if (asprintf (&line, "%s: %s", name, value) >= 0) {
        struct curl_slist *more = curl_slist_append (req->headers, line);
        if (more)
            req->headers = more;
        free (line);
    }
}

static void
s_each_cookie (request_t *req, const char *name, const char *value)
{
    char *pair = NULL;
    if (asprintf (&pair, "%s=%s", name, value) >= 0) {
        s_append (&req->cookies, "; ", pair);
        free (pair);
    }
}

static void
s_each_form (request_t *req, const char *name, const char *value)
{
    char *key = curl_easy_escape (NULL, name, 0);
    char *val = curl_easy_escape (NULL, value, 0);
    char *pair = NULL;
    if (key && val && asprintf (&pair, "%s=%s", key, val) >= 0) {
        s_append (&req->form, "&", pair);
        free (pair);
    }
    curl_free (key);
    curl_free (val);
}

//  The JSON form; 0 or -1 with *error
static int
s_parse_json (const char *param, request_t *req, const char **error)
{
    json_t j = { param, NULL };
    s_ws (&j);
    if (*j.p++ != '{') {
        *error = "a JSON object expected";
        return -1;
    }
    s_ws (&j);
    if (*j.p == '}')
        j.p++;
    else
    while (1) {
        s_ws (&j);
        char *name = s_string (&j);
        if (!name)
            break;
        s_ws (&j);
        if (*j.p++ != ':') {
            free (name);
            j.error = "':' expected";
            break;
        }
        int rc = 0, is_null = 0;
        if (streq_ci (name, "headers"))
            rc = s_object (&j, req, s_each_header);
        else
        if (streq_ci (name, "cookies"))
            rc = s_object (&j, req, s_each_cookie);
        else
        if (streq_ci (name, "form"))
            rc = s_object (&j, req, s_each_form);
        else {
            char *value = s_value_text (&j, &is_null);
            rc = value || is_null? 0: -1;
            char **slot = NULL;
            if (streq_ci (name, "url")) slot = &req->url;
            else if (streq_ci (name, "method")) slot = &req->method;
            else if (streq_ci (name, "data")) slot = &req->data;
            else if (streq_ci (name, "contentType")) slot = &req->content_type;
            else if (streq_ci (name, "auth")) slot = &req->auth;
            if (slot && value) {
                free (*slot);
                *slot = value;
                value = NULL;
            }
            else
            if (streq_ci (name, "timeout") && value)
                req->timeout_ms = atol (value);
            free (value);
        }
        free (name);
        if (rc)
            break;
        s_ws (&j);
        if (*j.p == ',') {
            j.p++;
            continue;
        }
        if (*j.p == '}') {
            j.p++;
            break;
        }
        j.error = "',' or '}' expected";
        break;
    }
    if (!j.error) {
        s_ws (&j);
        if (*j.p)
            j.error = "text after the object";
    }
    if (j.error) {
        *error = j.error;
        return -1;
    }
    if (!req->method)
        req->method = strdup ("POST");  //  XXL-JOB 3.x's default
    return 0;
}

//  Trims blanks at both ends; returns a malloc'd copy
static char *
s_trimmed (const char *text, size_t len)
{
    while (len && isspace ((unsigned char) *text)) {
        text++;
        len--;
    }
    while (len && isspace ((unsigned char) text [len - 1]))
        len--;
    return strndup (text, len);
}

//  The lines form (and a bare URL)
static void
s_parse_lines (const char *param, request_t *req)
{
    const char *line = param;
    while (*line) {
        size_t len = strcspn (line, "\n");
        if (strncmp (line, "url:", 4) == 0) {
            free (req->url);
            req->url = s_trimmed (line + 4, len - 4);
        }
        else
        if (strncmp (line, "method:", 7) == 0) {
            free (req->method);
            req->method = s_trimmed (line + 7, len - 7);
        }
        else
        if (strncmp (line, "data:", 5) == 0) {
            free (req->data);
            req->data = s_trimmed (line + 5, len - 5);
        }
        line += len;
        if (*line == '\n')
            line++;
    }
    if (!req->url) {
        char *bare = s_trimmed (param, strlen (param));
        if (bare && (strncmp (bare, "http://", 7) == 0 || strncmp (bare, "https://", 8) == 0)
        &&  !strpbrk (bare, " \t\n"))
            req->url = bare;
        else
            free (bare);
    }
    if (!req->method || !*req->method) {
        free (req->method);
        req->method = strdup ("GET");
    }
}

//  --------------------------------------------------------------------
//  The transfer

typedef struct {
    xxl_run_t *run;
    char *body;                         //  the first XXL_HTTP_BODY_LOGGED bytes
    size_t size;
    size_t dropped;                     //  bytes past them
} response_t;

static size_t
s_on_body (char *data, size_t size, size_t count, void *arg)
{
    response_t *response = (response_t *) arg;
    size_t bytes = size * count;
    size_t room = XXL_HTTP_BODY_LOGGED - response->size;
    size_t take = bytes < room? bytes: room;
    if (take) {
        if (!response->body)
            response->body = (char *) malloc (XXL_HTTP_BODY_LOGGED + 1);
        if (response->body) {
            memcpy (response->body + response->size, data, take);
            response->size += take;
        }
    }
    response->dropped += bytes - take;
    return bytes;
}

static int
s_on_progress (void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
               curl_off_t ulnow)
{
    (void) dltotal; (void) dlnow; (void) ultotal; (void) ulnow;
    return xxl_run_cancelled (((response_t *) arg)->run)? 1: 0;
}

//  libcurl (and the TLS library under it) is set up at the first run, not
//  when the plugin loads: an agent that never runs httpJobHandler never has
//  TLS state in its threads (OpenSSL's per-thread state, freed at unload
//  while the agent's actor thread was still ending, was freed twice)
static pthread_once_t s_curl_once = PTHREAD_ONCE_INIT;
static CURLcode s_curl_status = CURLE_FAILED_INIT;
static int s_curl_ready = 0;

static void
s_curl_setup (void)
{
    s_curl_status = curl_global_init (CURL_GLOBAL_DEFAULT);
    s_curl_ready = s_curl_status == CURLE_OK;
}

static int
s_http (xxl_run_t *run)
{
    const char *param = xxl_run_param (run);
    const char *start = param + strspn (param, " \t\r\n");
    if (!*start) {
        xxl_run_log (run, "param[%s] invalid.", param);
        return xxl_run_fail (run, "param invalid: empty (want url:/method:/data: lines"
                                  " or a JSON object)");
    }
    request_t req;
    memset (&req, 0, sizeof req);
    char msg [CURL_ERROR_SIZE + 128];
    if (*start == '{') {
        const char *error = NULL;
        if (s_parse_json (start, &req, &error)) {
            snprintf (msg, sizeof msg, "param invalid: not a valid JSON object (%s)", error);
            xxl_run_log (run, "%s", msg);
            s_request_free (&req);
            return xxl_run_fail (run, msg);
        }
    }
    else
        s_parse_lines (start, &req);
    if (!req.url || !*req.url) {
        xxl_run_log (run, "url[%s] invalid.", req.url? req.url: "null");
        s_request_free (&req);
        return xxl_run_fail (run, "param invalid: no url");
    }
    for (char *c = req.method; *c; c++)
        *c = (char) toupper ((unsigned char) *c);
    if (!*req.method || strspn (req.method, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != strlen (req.method)) {
        snprintf (msg, sizeof msg, "method[%.60s] invalid.", req.method);
        xxl_run_log (run, "%s", msg);
        s_request_free (&req);
        return xxl_run_fail (run, msg);
    }
    pthread_once (&s_curl_once, s_curl_setup);
    if (!s_curl_ready) {
        s_request_free (&req);
        return xxl_run_fail (run, "curl_global_init failed");
    }
    CURL *curl = curl_easy_init ();
    if (!curl) {
        s_request_free (&req);
        return xxl_run_fail (run, "curl_easy_init failed");
    }
    char *content_type = NULL;
    int has_body = strcmp (req.method, "GET") && strcmp (req.method, "HEAD");
    const char *body = req.data && *req.data? req.data: req.form;
    if (asprintf (&content_type, "Content-Type: %s",
                  req.content_type? req.content_type
                  : (!req.data || !*req.data) && req.form? "application/x-www-form-urlencoded"
                  : "application/json;charset=UTF-8") >= 0) {
        struct curl_slist *more = curl_slist_append (req.headers, content_type);
        if (more)
            req.headers = more;
        free (content_type);
    }
    if (req.auth) {
        char *line = NULL;
        if (asprintf (&line, "Authorization: %s", req.auth) >= 0) {
            struct curl_slist *more = curl_slist_append (req.headers, line);
            if (more)
                req.headers = more;
            free (line);
        }
    }
    struct curl_slist *more = curl_slist_append (req.headers, "Expect:");
    if (more)
        req.headers = more;
    response_t response = { run, NULL, 0, 0 };
    char curl_error [CURL_ERROR_SIZE] = "";
    xxl_http_guard_t *guard = xxl_http_guard_new (run, curl);
    if (!guard) {
        curl_easy_cleanup (curl);
        s_request_free (&req);
        return xxl_run_fail (run, "out of memory");
    }
    curl_easy_setopt (curl, CURLOPT_URL, req.url);
    curl_easy_setopt (curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt (curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt (curl, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt (curl, CURLOPT_MAXREDIRS, 5L);
    curl_easy_setopt (curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt (curl, CURLOPT_CONNECTTIMEOUT_MS, (long) XXL_HTTP_CONNECT_MS);
    if (req.timeout_ms > 0)
        curl_easy_setopt (curl, CURLOPT_TIMEOUT_MS, req.timeout_ms);
    curl_easy_setopt (curl, CURLOPT_USERAGENT, "xxl-httpJobHandler/1.0");
    curl_easy_setopt (curl, CURLOPT_HTTPHEADER, req.headers);
    if (req.cookies)
        curl_easy_setopt (curl, CURLOPT_COOKIE, req.cookies);
    if (streq_ci (req.method, "HEAD"))
        curl_easy_setopt (curl, CURLOPT_NOBODY, 1L);
    else
    if (has_body) {
        curl_easy_setopt (curl, CURLOPT_POSTFIELDS, body? body: "");
        curl_easy_setopt (curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) (body? strlen (body): 0));
    }
    if (strcmp (req.method, "GET") && strcmp (req.method, "POST") && strcmp (req.method, "HEAD"))
        curl_easy_setopt (curl, CURLOPT_CUSTOMREQUEST, req.method);
    curl_easy_setopt (curl, CURLOPT_WRITEFUNCTION, s_on_body);
    curl_easy_setopt (curl, CURLOPT_WRITEDATA, &response);
    curl_easy_setopt (curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt (curl, CURLOPT_XFERINFOFUNCTION, s_on_progress);
    curl_easy_setopt (curl, CURLOPT_XFERINFODATA, &response);
    curl_easy_setopt (curl, CURLOPT_ERRORBUFFER, curl_error);
    xxl_run_log (run, "request: %s %s%s", req.method, req.url,
                 has_body && body? " (with a body)": "");
    CURLcode code = curl_easy_perform (curl);
    long status = 0;
    curl_easy_getinfo (curl, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup (curl);
    int failed = 0;
    if (xxl_http_guard_refusal (guard)) {
        //  Refused before its socket existed: nothing was sent there
        snprintf (msg, sizeof msg, "%s", xxl_http_guard_refusal (guard));
        xxl_run_log (run, "%s", msg);
        failed = 1;
    }
    else
    if (code != CURLE_OK) {
        if (code == CURLE_ABORTED_BY_CALLBACK)
            snprintf (msg, sizeof msg, "request aborted: the run was cancelled");
        else
            snprintf (msg, sizeof msg, "request failed: %s",
                      curl_error [0]? curl_error: curl_easy_strerror (code));
        xxl_run_log (run, "%s", msg);
        failed = 1;
    }
    else {
        xxl_run_log (run, "StatusCode: %ld", status);
        snprintf (msg, sizeof msg, "HTTP status %ld", status);
        failed = status >= 400;
    }
    if (response.size) {
        response.body [response.size] = 0;
        xxl_run_log (run, "Response:");
        //  Line by line, as the log is read by lines
        char *line = response.body;
        while (line && *line) {
            char *end = strchr (line, '\n');
            size_t len = end? (size_t) (end - line): strlen (line);
            if (len && line [len - 1] == '\r')
                len--;
            xxl_run_log (run, "%.*s", (int) len, line);
            line = end? end + 1: NULL;
        }
    }
    if (response.dropped)
        xxl_run_log (run, "... %zu more bytes of the response not logged", response.dropped);
    free (response.body);
    xxl_http_guard_destroy (&guard);
    s_request_free (&req);
    return failed? xxl_run_fail (run, msg): xxl_run_success (run, msg);
}

static void *
s_init (const char **error)
{
    (void) error;
    static int s_state;
    return &s_state;
}

static void
s_destroy (void *state)
{
    (void) state;
    if (s_curl_ready)
        curl_global_cleanup ();
}

static const xxl_handler_t s_handlers [] = {
    { "httpJobHandler", s_http, 0 },
    { NULL, NULL, 0 }
};

XXL_HANDLER_PLUGIN ("http", "1.0", s_init, s_destroy, s_handlers)
