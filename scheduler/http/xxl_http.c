/*  xxl_http.c -- the scheduler's HTTP server (xxl_http.h; docs/http.md;
    its files' contract: xxl_http_int.h).

    xxl_http_new starts libmicrohttpd's daemon (a thread per connection,
    TLS when http/cert and http/key are set), xxl_http_stop makes calls to
    the engine give up, xxl_http_destroy stops the daemon.  The access
    handler, s_access, reads a request whole (up to max_body bytes: 413
    past it, judged from Content-Length before any byte is read when it
    is given), having refused a Host not allowed (421) and a body's length
    given twice (400); then routes it: /healthz, /readyz, /metrics here;
    /api/v1/... to xxl_http_rest.c; anything else is the console's files.
    Every answer goes out with the security headers (s_queue).

    Calls xxl_http_rest.c and xxl_http_answer.c of the server's files.
*/

#include "xxl_http_int.h"
#include "xxl_http_xxladmin.h"
#include "xxl_log.h"
#include "xxl/cron.h"
#include "xxl/msg.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
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

//  A 405 for a path served to GET (and HEAD) only
static void
s_not_get (answer_t *answer, const char *url)
{
    xxl_http_errorf (answer, 405, "%s takes GET", url);
    snprintf (answer->allow, sizeof answer->allow, "GET, HEAD");
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

//  A response is queued on conn (its request's deadline stops, if it had
//  not yet; a health slot's connection closes after it) as status
static enum MHD_Result
s_queue_response (xxl_http_t *self, struct MHD_Connection *conn, unsigned status,
                  struct MHD_Response *response)
{
    xxl_http_slot_t *slot = xxl_http_guard_mhd_slot (conn);
    if (slot) {
        xxl_http_guard_received (self->guard, slot);
        if (xxl_http_guard_reserve (self->guard, slot))
            MHD_add_response_header (response, MHD_HTTP_HEADER_CONNECTION, "close");
    }
    return MHD_queue_response (conn, status, response);
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
    if (answer->location [0])
        MHD_add_response_header (response, MHD_HTTP_HEADER_LOCATION, answer->location);
    if (answer->retry_after > 0) {
        char seconds [24];
        snprintf (seconds, sizeof seconds, "%" PRId64, answer->retry_after);
        MHD_add_response_header (response, MHD_HTTP_HEADER_RETRY_AFTER, seconds);
    }
    assert (answer->status != 405 || answer->allow [0]);
    if (answer->allow [0])
        MHD_add_response_header (response, MHD_HTTP_HEADER_ALLOW, answer->allow);
    if (answer->close)
        MHD_add_response_header (response, MHD_HTTP_HEADER_CONNECTION, "close");
    enum MHD_Result rc = s_queue_response (self, conn, (unsigned) answer->status, response);
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

//  Reads http/xxl_admin_path into self->xadmin (NULL or "": off)
static int
s_xadmin_set (xxl_http_t *self, const char *path, char *why, size_t whylen)
{
    if (!path || !*path)
        return 0;
    size_t length = strlen (path);
    bool bad = path [0] != '/' || length < 2 || length > 64 || path [length - 1] == '/'
            || strspn (path, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                             "-_./") != length
            || strstr (path, "//") || strstr (path, "/.");
    const char *const taken [] = { "/api", "/healthz", "/readyz", "/metrics", "/assets", NULL };
    for (size_t i = 0; !bad && taken [i]; i++) {
        size_t n = strlen (taken [i]);
        bad = strncmp (path, taken [i], n) == 0 && (path [n] == 0 || path [n] == '/');
    }
    if (bad) {
        snprintf (why, whylen, "http/xxl_admin_path: '%.80s' is not a path for XXL-JOB's"
                  " endpoints (\"\" for none, else '/' and up to 63 letters, digits, '-',"
                  " '_', '.' and '/', no '/' at the end, not /api, /healthz, /readyz,"
                  " /metrics or /assets)", path);
        return -1;
    }
    self->xadmin = strdup (path);
    return 0;
}

//  Reads http/xxl_admin_timezone into self->xadmin_zone (NULL or "": UTC),
//  judged as the jobs' zones are
static int
s_xadmin_zone_set (xxl_http_t *self, const char *zone, char *why, size_t whylen)
{
    if (!zone || !*zone)
        return 0;
    if (!xxl_cron_tz_valid (zone)) {
        char shown [129];
        snprintf (why, whylen, "http/xxl_admin_timezone: unknown time zone '%s'",
                  xxl_printable (zone, shown, sizeof shown));
        return -1;
    }
    self->xadmin_zone = strdup (zone);
    return 0;
}

//  A body past max_body while it comes (libmicrohttpd queues an answer
//  only before a body or after its end): the 413 goes out on the socket
//  here, then its sending side closes and what the client still sends is
//  read and dropped for up to XXL_HTTP_DRAIN_MS (so the close does not
//  reset the connection before the client read the answer); the caller
//  then has libmicrohttpd close it.  Under TLS the answer cannot go out
//  past libmicrohttpd: the connection closes without one.
#define XXL_HTTP_DRAIN_MS 1000
#define XXL_HTTP_DRAIN_BYTES (1024 * 1024)
//  True when url is under http/xxl_admin_path (XXL-JOB admin's endpoints)
static bool
s_xadmin_url (xxl_http_t *self, const char *url)
{
    size_t length = self->xadmin? strlen (self->xadmin): 0;
    return length && strncmp (url, self->xadmin, length) == 0
        && (url [length] == '/' || url [length] == 0);
}

//  413 for a body over max_body: a ReturnT 500 under XXL-JOB admin's
//  path (its answers' shape), else the REST error
static void
s_too_big (xxl_http_t *self, answer_t *answer, const char *url)
{
    char text [96];
    snprintf (text, sizeof text, "the body is over the %zu-byte limit", self->max_body);
    if (s_xadmin_url (self, url))
        xxl_http_answer_json (answer, 413, xxl_xxladmin_returnt (500, text, NULL));
    else
        xxl_http_error (answer, 413, text);
}

static void
s_refuse_body (xxl_http_t *self, struct MHD_Connection *conn, const char *url)
{
    xxl_http_slot_t *slot = xxl_http_guard_mhd_slot (conn);
    if (slot)
        xxl_http_guard_received (self->guard, slot);
    const union MHD_ConnectionInfo *info = MHD_get_connection_info (
        conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (self->tls || !info)
        return;
    int fd = info->connect_fd;
    answer_t answer = { 0 };
    s_too_big (self, &answer, url);
    char head [1024];
    int length = snprintf (head, sizeof head,
                           "HTTP/1.1 413 Content Too Large\r\nConnection: close\r\n"
                           "Content-Type: %s\r\nContent-Length: %zu\r\n"
                           "Cache-Control: no-store\r\nContent-Security-Policy: %s\r\n"
                           "X-Content-Type-Options: nosniff\r\nX-Frame-Options: DENY\r\n"
                           "Referrer-Policy: no-referrer\r\n"
                           "Cross-Origin-Opener-Policy: same-origin\r\n"
                           "Cross-Origin-Resource-Policy: same-origin\r\n\r\n",
                           answer.type, answer.size, XXL_HTTP_CSP_NONE);
    assert (length > 0 && (size_t) length < sizeof head);
    //  (the socket's buffer takes both, or the client reads nothing: dropped)
    if (send (fd, head, (size_t) length, MSG_DONTWAIT | MSG_NOSIGNAL) == length)
        send (fd, answer.body, answer.size, MSG_DONTWAIT | MSG_NOSIGNAL);
    free (answer.body);
    shutdown (fd, SHUT_WR);
    int64_t until = zclock_mono () + XXL_HTTP_DRAIN_MS;
    size_t drained = 0;
    char sink [16384];
    while (drained < XXL_HTTP_DRAIN_BYTES) {
        int64_t left = until - zclock_mono ();
        struct pollfd item = { .fd = fd, .events = POLLIN };
        if (left <= 0 || poll (&item, 1, (int) left) <= 0)
            break;
        ssize_t got = recv (fd, sink, sizeof sink, MSG_DONTWAIT);
        if (got <= 0)
            break;
        drained += (size_t) got;
    }
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
        xxl_http_slot_t *slot = xxl_http_guard_mhd_slot (conn);
        if (slot && xxl_http_guard_reserve (self->guard, slot)
        &&  !streq (url, "/healthz") && !streq (url, "/readyz")) {
            //  (every ordinary connection is taken: this one was let in for
            //  the health checks only)
            ctx->too_big = true;        //  (nothing of the body is kept)
            answer_t answer = { .type = "text/plain; charset=utf-8", .retry_after = 1 };
            xxl_http_errorf (&answer, 503, "the server holds its %d connections; only"
                             " /healthz and /readyz are answered now", XXL_HTTP_CONNECTIONS);
            return s_queue (self, conn, &answer, streq (method, "HEAD"));
        }
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
            s_too_big (self, &answer, url);
            return s_queue (self, conn, &answer, streq (method, "HEAD"));
        }
        return MHD_YES;
    }
    if (*upload_data_size) {
        if (!ctx->too_big) {
            size_t have = ctx->body? zchunk_size (ctx->body): 0;
            if (have + *upload_data_size > self->max_body) {
                //  Past the limit (a chunked body: its length is not told
                //  first): answered at once, the rest unread
                zchunk_destroy (&ctx->body);
                *upload_data_size = 0;
                s_refuse_body (self, conn, url);
                return MHD_NO;
            }
            if (!ctx->body)
                ctx->body = zchunk_new (NULL, *upload_data_size);
            zchunk_extend (ctx->body, upload_data, *upload_data_size);
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    //  The request is whole: its deadline stops while it is handled
    xxl_http_slot_t *slot = xxl_http_guard_mhd_slot (conn);
    if (slot)
        xxl_http_guard_received (self->guard, slot);
    answer_t answer = { .status = 200, .type = "text/plain; charset=utf-8" };
    bool head = streq (method, "HEAD");
    bool get = streq (method, "GET") || head;
    if (ctx->too_big)
        s_too_big (self, &answer, url);
    else
    if (strncmp (url, "/api/v1/", 8) == 0)
        xxl_http_api (self, &answer, conn, head? "GET": method, url + 8, ctx);
    else
    if (s_xadmin_url (self, url)) {
        const char *rest = url + strlen (self->xadmin);
        xxl_http_xxladmin (self, &answer, conn, head? "GET": method, *rest? rest + 1: rest, ctx);
    }
    else
    if (strncmp (url, "/api/", 5) == 0 || streq (url, "/api"))
        xxl_http_error (&answer, 404, "no such path (the REST api is under /api/v1/)");
    else
    if (streq (url, "/healthz") || streq (url, "/readyz") || streq (url, "/metrics")) {
        xxl_metrics_t metrics;
        bool published = xxl_metrics_read (self->metrics, &metrics);
        if (!get)
            s_not_get (&answer, url);
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
            size_t ordinary, health;
            xxl_http_guard_used (self->guard, &ordinary, &health);
            metrics.conn_ordinary = (int64_t) ordinary;
            metrics.conn_health = (int64_t) health;
            xxl_http_guard_counts (self->guard, &metrics.conn_deadline, &metrics.conn_no_slot);
            char *plain = xxl_metrics_render (&metrics);
            char *labelled = xxl_metrics_labelled (self->metrics);
            answer.body = zsys_sprintf ("%s%s", plain, labelled);
            assert (answer.body);
            answer.size = strlen (answer.body);
            zstr_free (&plain);
            zstr_free (&labelled);
            answer.type = "text/plain; version=0.0.4; charset=utf-8";
        }
    }
    else
    if (!get)
        s_not_get (&answer, url);
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
            enum MHD_Result rc = s_queue_response (self, conn, MHD_HTTP_OK, response);
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
    (void) code;
    xxl_http_t *self = (xxl_http_t *) cls;
    xxl_http_slot_t *slot = xxl_http_guard_mhd_slot (conn);
    if (slot)
        xxl_http_guard_sent (self->guard, slot, zclock_mono ());
    request_ctx_t *ctx = (request_ctx_t *) *con_cls;
    if (ctx) {
        zchunk_destroy (&ctx->body);
        free (ctx);
        *con_cls = NULL;
    }
}

//  A connection taken (its slot from the guard, or shut down at once when
//  none is left for it) or closed (its slot freed)
static void
s_notify (void *cls, struct MHD_Connection *conn, void **socket_context,
          enum MHD_ConnectionNotificationCode code)
{
    xxl_http_guard_mhd_notice (((xxl_http_t *) cls)->guard, conn, socket_context, code);
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
    //  (most of these lines are a client's malformed or oversized request:
    //  at most 10 a minute, so that no client fills the log)
    static xxl_log_limit_t s_limit;
    int64_t held;
    if (xxl_log_limit_pass (&s_limit, 10, &held))
        return;
    if (held)
        zsys_warning ("http: %" PRId64 " line(s) of libmicrohttpd held back before this one"
                      " (at most 10 a minute)", held);
    xxl_log_vtag (LOG_WARNING, "http", format, args);
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
    self->remember_s = config->remember_s > 0? config->remember_s: 0;
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
    //  (main.c checks the ranges; a config made in code gets the defaults)
    int timeout_s = config->request_timeout_s > 0? config->request_timeout_s
                                                 : XXL_HTTP_REQUEST_TIMEOUT_S;
    self->health_slots = config->health_slots > 0? (size_t) config->health_slots: 0;
    self->guard = xxl_http_guard_new (XXL_HTTP_CONNECTIONS, self->health_slots,
                                      (int64_t) timeout_s * 1000, XXL_HTTP_HEALTH_TIMEOUT_MS);
    if (!self->guard || xxl_http_guard_start (self->guard)) {
        snprintf (why, whylen, "http: no memory or thread for the connections' watchdog");
        xxl_http_destroy (&self);
        return NULL;
    }
    if (s_hosts_set (self, config->hosts, why, whylen)
    ||  s_xadmin_set (self, config->xxl_admin_path, why, whylen)
    ||  s_xadmin_zone_set (self, config->xxl_admin_timezone, why, whylen)) {
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
        MHD_OPTION_CONNECTION_LIMIT, (unsigned) (XXL_HTTP_CONNECTIONS + self->health_slots),
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned) config->per_address,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned) 60,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t) (128 * 1024),
        MHD_OPTION_NOTIFY_COMPLETED, s_completed, self,
        MHD_OPTION_NOTIFY_CONNECTION, s_notify, self,
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
    xxl_http_guard_destroy (&self->guard);
    xxl_http_limit_destroy (&self->limit);
    free (self->engine);
    free (self->console);
    free (self->xadmin);
    free (self->xadmin_zone);
    free (self->cert_pem);
    free (self->key_pem);
    for (char **host = self->hosts; host && *host; host++)
        free (*host);
    free (self->hosts);
    free (self);
    *self_p = NULL;
}
