/*  xxl_bridge_admin.c -- the XXL-JOB admin the executors call.

    See xxl_bridge_admin.h.  A request's body is gathered in its
    connection's state up to its route's limit, then judged whole.
*/

#include "xxl_bridge_admin.h"

#include "xxl_log.h"
#include "xxl_http_guard_mhd.h"
#include <microhttpd.h>
#include <netdb.h>
#include <arpa/inet.h>

//  Body limits: a registry call is a few hundred bytes; a callback batch
//  carries up to XXL_WIRE_BATCH_MAX results
#define ADMIN_REGISTRY_MAX  (64 * 1024)
#define ADMIN_CALLBACK_MAX  (8 * 1024 * 1024)
//  Connections at once, and from one address
#define ADMIN_CONNECTIONS   256
#define ADMIN_PER_ADDRESS   64

struct _xxl_bridge_admin_t {
    struct MHD_Daemon *daemon;
    char *cert_pem, *key_pem;       //  with TLS
    xxl_bridge_admin_config_t config;
    char *path;
    char *token;
    int port;
    int64_t due;                    //  when MHD needs to run, fd or not (mono; -1: never)
    xxl_http_guard_t *guard;        //  each request's deadline
    int64_t next_expire;            //  when the guard is looked at next (mono)
};

typedef enum { ROUTE_NONE, ROUTE_REGISTRY, ROUTE_REMOVE, ROUTE_CALLBACK } route_t;

typedef struct {
    route_t route;
    char *body;
    size_t len, cap, max;
    bool too_long;
} request_t;

//  Queues the answer (its request's deadline stops: it came whole, or
//  was refused before its body)
static enum MHD_Result
s_answer (xxl_bridge_admin_t *self, struct MHD_Connection *connection, unsigned int status,
          char *json)
{
    xxl_http_slot_t *slot = xxl_http_guard_mhd_slot (connection);
    if (slot)
        xxl_http_guard_received (self->guard, slot);
    if (!json)
        json = strdup ("{\"code\":500,\"msg\":\"out of memory\"}");
    struct MHD_Response *response = MHD_create_response_from_buffer (
        strlen (json), json, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header (response, "Content-Type", "application/json;charset=UTF-8");
    enum MHD_Result rc = MHD_queue_response (connection, status, response);
    MHD_destroy_response (response);
    return rc;
}

static route_t
s_route (xxl_bridge_admin_t *self, const char *url)
{
    size_t plen = strlen (self->path);
    if (strncmp (url, self->path, plen))
        return ROUTE_NONE;
    url += plen;
    if (streq (url, "/api/registry"))
        return ROUTE_REGISTRY;
    if (streq (url, "/api/registryRemove"))
        return ROUTE_REMOVE;
    if (streq (url, "/api/callback"))
        return ROUTE_CALLBACK;
    return ROUTE_NONE;
}

//  Constant-time comparison of the token given with ours
static bool
s_token_ok (xxl_bridge_admin_t *self, const char *given)
{
    if (!*self->token)
        return true;
    if (!given)
        return false;
    size_t a = strlen (self->token), b = strlen (given);
    unsigned char diff = a != b;
    for (size_t i = 0; i < a; i++)
        diff |= (unsigned char) self->token [i] ^ (unsigned char) (i < b? given [i]: 0);
    return diff == 0;
}

static void
s_peer (struct MHD_Connection *connection, char *out, size_t outlen)
{
    snprintf (out, outlen, "?");
    const union MHD_ConnectionInfo *info = MHD_get_connection_info (
        connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (!info || !info->client_addr)
        return;
    const struct sockaddr *sa = info->client_addr;
    if (sa->sa_family == AF_INET)
        inet_ntop (AF_INET, &((const struct sockaddr_in *) sa)->sin_addr, out, outlen);
    else
    if (sa->sa_family == AF_INET6)
        inet_ntop (AF_INET6, &((const struct sockaddr_in6 *) sa)->sin6_addr, out, outlen);
}

static enum MHD_Result
s_serve (xxl_bridge_admin_t *self, struct MHD_Connection *connection, request_t *request)
{
    char why [512] = "";
    if (request->too_long)
        return s_answer (self, connection, MHD_HTTP_CONTENT_TOO_LARGE,
                         xxl_wire_fail (413, "the body is longer than this call takes"));
    if (request->route == ROUTE_CALLBACK) {
        xxl_wire_callback_t *items;
        int count = xxl_wire_callback_parse (request->body? request->body: "", request->len,
                                             &items, why, sizeof why);
        if (count < 0)
            return s_answer (self, connection, MHD_HTTP_BAD_REQUEST, xxl_wire_fail (400, why));
        int code = self->config.callback (self->config.arg, items, (size_t) count,
                                          why, sizeof why);
        xxl_wire_callbacks_free (items, (size_t) count);
        return s_answer (self, connection, MHD_HTTP_OK, code? xxl_wire_fail (code, why): xxl_wire_ok ());
    }
    xxl_wire_registry_t registry;
    if (xxl_wire_registry_parse (request->body? request->body: "", request->len, &registry,
                                 why, sizeof why))
        return s_answer (self, connection, MHD_HTTP_BAD_REQUEST, xxl_wire_fail (400, why));
    char peer [INET6_ADDRSTRLEN + 1];
    s_peer (connection, peer, sizeof peer);
    int code = self->config.registry (self->config.arg, &registry,
                                      request->route == ROUTE_REMOVE, peer, why, sizeof why);
    return s_answer (self, connection, MHD_HTTP_OK, code? xxl_wire_fail (code, why): xxl_wire_ok ());
}

static enum MHD_Result
s_access (void *cls, struct MHD_Connection *connection, const char *url, const char *method,
          const char *version, const char *upload_data, size_t *upload_data_size,
          void **con_cls)
{
    (void) version;
    xxl_bridge_admin_t *self = (xxl_bridge_admin_t *) cls;
    request_t *request = (request_t *) *con_cls;
    if (!request) {
        //  The headers are in: judge the route, the method and the token
        //  before any body is read
        route_t route = s_route (self, url);
        if (route == ROUTE_NONE)
            return s_answer (self, connection, MHD_HTTP_NOT_FOUND, xxl_wire_fail (404, "not found"));
        if (strneq (method, "POST"))
            return s_answer (self, connection, MHD_HTTP_METHOD_NOT_ALLOWED,
                             xxl_wire_fail (405, "only POST"));
        //  (MHD compares header names without regard to case: Go's client
        //  sends Xxl-Job-Access-Token)
        const char *token = MHD_lookup_connection_value (connection, MHD_HEADER_KIND,
                                                         "XXL-JOB-ACCESS-TOKEN");
        if (!s_token_ok (self, token))
            return s_answer (self, connection, MHD_HTTP_UNAUTHORIZED,
                             xxl_wire_fail (401, "The access token is wrong."));
        request = (request_t *) calloc (1, sizeof *request);
        if (!request)
            return MHD_NO;
        request->route = route;
        request->max = route == ROUTE_CALLBACK? ADMIN_CALLBACK_MAX: ADMIN_REGISTRY_MAX;
        *con_cls = request;
        return MHD_YES;
    }
    if (*upload_data_size) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        if (request->too_long || request->len + n > request->max) {
            request->too_long = true;
            return MHD_YES;         //  (read and dropped; answered 413 at the end)
        }
        if (request->len + n + 1 > request->cap) {
            size_t cap = (request->len + n + 1) * 2;
            if (cap > request->max + 1)
                cap = request->max + 1;
            char *grown = (char *) realloc (request->body, cap);
            if (!grown)
                return MHD_NO;
            request->body = grown;
            request->cap = cap;
        }
        memcpy (request->body + request->len, upload_data, n);
        request->len += n;
        request->body [request->len] = 0;
        return MHD_YES;
    }
    return s_serve (self, connection, request);
}

//  libmicrohttpd's own error lines go through the log (a priority, syslog
//  or the journal's prefix) instead of raw to stderr
static void
s_mhd_log (void *cls, const char *format, va_list args)
{
    (void) cls;
    xxl_log_vtag (LOG_WARNING, "bridge: http", format, args);
}

static void
s_completed (void *cls, struct MHD_Connection *connection, void **con_cls,
             enum MHD_RequestTerminationCode toe)
{
    (void) toe;
    xxl_bridge_admin_t *self = (xxl_bridge_admin_t *) cls;
    //  (the next request on the connection has its own deadline)
    xxl_http_slot_t *slot = xxl_http_guard_mhd_slot (connection);
    if (slot)
        xxl_http_guard_sent (self->guard, slot, zclock_mono ());
    request_t *request = (request_t *) *con_cls;
    if (request) {
        free (request->body);
        free (request);
        *con_cls = NULL;
    }
}

//  A connection taken (its slot from the guard, or shut down at once when
//  none is left) or closed (its slot freed)
static void
s_notify (void *cls, struct MHD_Connection *connection, void **socket_context,
          enum MHD_ConnectionNotificationCode code)
{
    xxl_bridge_admin_t *self = (xxl_bridge_admin_t *) cls;
    xxl_http_guard_mhd_notice (self->guard, connection, socket_context, code);
}

//  HOST:PORT ("[::1]:PORT" for IPv6) into an address
static int
s_address (const char *listen, struct sockaddr_storage *out, socklen_t *outlen,
           bool *loopback, char *why, size_t whylen)
{
    char host [256];
    const char *colon = strrchr (listen, ':');
    if (!colon || colon == listen || (size_t) (colon - listen) >= sizeof host) {
        snprintf (why, whylen, "--listen %s: want HOST:PORT", listen);
        return -1;
    }
    memcpy (host, listen, colon - listen);
    host [colon - listen] = 0;
    if (*host == '[' && host [strlen (host) - 1] == ']') {
        memmove (host, host + 1, strlen (host));
        host [strlen (host) - 1] = 0;
    }
    struct addrinfo hints = { .ai_flags = AI_PASSIVE, .ai_socktype = SOCK_STREAM }, *found;
    int rc = getaddrinfo (streq (host, "*")? NULL: host, colon + 1, &hints, &found);
    if (rc) {
        snprintf (why, whylen, "--listen %s: %s", listen, gai_strerror (rc));
        return -1;
    }
    memcpy (out, found->ai_addr, found->ai_addrlen);
    *outlen = found->ai_addrlen;
    freeaddrinfo (found);
    if (out->ss_family == AF_INET)
        *loopback = (ntohl (((struct sockaddr_in *) out)->sin_addr.s_addr) >> 24) == 127;
    else
        *loopback = IN6_IS_ADDR_LOOPBACK (&((struct sockaddr_in6 *) out)->sin6_addr);
    return 0;
}

xxl_bridge_admin_t *
xxl_bridge_admin_new (const xxl_bridge_admin_config_t *config, char *why, size_t whylen)
{
    struct sockaddr_storage addr;
    socklen_t addrlen;
    bool loopback;
    if (s_address (config->listen, &addr, &addrlen, &loopback, why, whylen))
        return NULL;
    bool tls = config->tls_cert && *config->tls_cert;
    if (!loopback && !config->insecure && !tls) {
        snprintf (why, whylen, "--listen %s is not a loopback address: the executors' calls"
                  " would cross the network in plain text (give --insecure to accept that)",
                  config->listen);
        return NULL;
    }
    if (!loopback && !tls)
        zsys_warning ("bridge: the admin listens on %s in plain text (--insecure)",
                      config->listen);
    xxl_bridge_admin_t *self = (xxl_bridge_admin_t *) zmalloc (sizeof *self);
    self->config = *config;
    self->path = strdup (config->path? config->path: "");
    //  (a trailing '/' of the path is dropped: /xxl-job-admin/ is /xxl-job-admin)
    size_t plen = strlen (self->path);
    while (plen && self->path [plen - 1] == '/')
        self->path [--plen] = 0;
    self->token = strdup (config->token? config->token: "");
    int timeout_s = config->request_timeout_s > 0? config->request_timeout_s
                                                 : XXL_BRIDGE_ADMIN_REQUEST_S;
    self->guard = xxl_http_guard_new (ADMIN_CONNECTIONS, 0, (int64_t) timeout_s * 1000, 1);
    if (!self->guard) {
        snprintf (why, whylen, "out of memory");
        xxl_bridge_admin_destroy (&self);
        return NULL;
    }
    //  (epoll: one fd for the loop to poll, whatever the number of
    //  connections, and none limited by FD_SETSIZE)
    unsigned int flags = MHD_USE_ERROR_LOG | MHD_USE_EPOLL
                       | (addr.ss_family == AF_INET6? MHD_USE_IPv6: 0);
    if (tls) {
        zchunk_t *c = zchunk_slurp (config->tls_cert, 1024 * 1024);
        zchunk_t *k = config->tls_key? zchunk_slurp (config->tls_key, 1024 * 1024): NULL;
        if (c && k) {
            self->cert_pem = strndup ((const char *) zchunk_data (c), zchunk_size (c));
            self->key_pem = strndup ((const char *) zchunk_data (k), zchunk_size (k));
        }
        zchunk_destroy (&c);
        zchunk_destroy (&k);
        if (!self->cert_pem || !self->key_pem) {
            snprintf (why, whylen, "cannot read --tls-cert %s or --tls-key %s", config->tls_cert,
                      config->tls_key? config->tls_key: "(none)");
            xxl_bridge_admin_destroy (&self);
            return NULL;
        }
        flags |= MHD_USE_TLS;
    }
    self->daemon = MHD_start_daemon (flags, 0, NULL, NULL, s_access, self,
        MHD_OPTION_EXTERNAL_LOGGER, s_mhd_log, self,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *) &addr,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned int) ADMIN_CONNECTIONS,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int) ADMIN_PER_ADDRESS,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int) 10,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t) 64 * 1024,
        MHD_OPTION_NOTIFY_COMPLETED, s_completed, self,
        MHD_OPTION_NOTIFY_CONNECTION, s_notify, self,
        //  (last: without TLS the list ends here)
        tls? MHD_OPTION_HTTPS_MEM_CERT: MHD_OPTION_END, self->cert_pem,
        MHD_OPTION_HTTPS_MEM_KEY, self->key_pem,
        MHD_OPTION_END);
    if (!self->daemon) {
        snprintf (why, whylen, "cannot listen on %s (in use, or not an address of this host%s)",
                  config->listen, tls? ", or the TLS certificate and key do not load": "");
        xxl_bridge_admin_destroy (&self);
        return NULL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info (self->daemon,
                                                            MHD_DAEMON_INFO_BIND_PORT);
    self->port = info? info->port: 0;
    return self;
}

void
xxl_bridge_admin_destroy (xxl_bridge_admin_t **self_p)
{
    xxl_bridge_admin_t *self = *self_p;
    if (!self)
        return;
    if (self->daemon)
        MHD_stop_daemon (self->daemon);
    xxl_http_guard_destroy (&self->guard);
    free (self->path);
    free (self->token);
    free (self->cert_pem);
    free (self->key_pem);
    free (self);
    *self_p = NULL;
}

int
xxl_bridge_admin_port (xxl_bridge_admin_t *self)
{
    return self->port;
}

int
xxl_bridge_admin_fd (xxl_bridge_admin_t *self, long *timeout_ms)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info (self->daemon,
                                                            MHD_DAEMON_INFO_EPOLL_FD);
    assert (info);                  //  (started with MHD_USE_EPOLL)
    MHD_UNSIGNED_LONG_LONG wait;
    self->due = -1;
    if (MHD_get_timeout (self->daemon, &wait) == MHD_YES) {
        self->due = zclock_mono () + (int64_t) wait;
        if (*timeout_ms < 0 || (long) wait < *timeout_ms)
            *timeout_ms = (long) wait;
    }
    //  (the guard is looked at every XXL_HTTP_GUARD_TICK_MS while it
    //  holds connections)
    size_t used, reserve;
    xxl_http_guard_used (self->guard, &used, &reserve);
    if (used) {
        long left = (long) (self->next_expire - zclock_mono ());
        if (left < 0)
            left = 0;
        if (*timeout_ms < 0 || left < *timeout_ms)
            *timeout_ms = left;
    }
    return info->epoll_fd;
}

void
xxl_bridge_admin_run (xxl_bridge_admin_t *self, bool ready)
{
    int64_t now = zclock_mono ();
    if (now >= self->next_expire) {
        //  (a connection shut down here is read, and closed, by MHD_run:
        //  its socket is readable at its end)
        self->next_expire = now + XXL_HTTP_GUARD_TICK_MS;
        xxl_http_guard_expire (self->guard, now);
    }
    //  (not ready, nothing due: MHD_run would only find its set empty)
    if (ready || (self->due >= 0 && zclock_mono () >= self->due))
        MHD_run (self->daemon);
}
