/*  xxl_bridge_call.c -- the bridge's calls to executors.

    See xxl_bridge_call.h.  Two ways to the wire, behind one list of
    calls and one `parallel` limit:

    - plain http:// to an IP address literal (every executor the default
      `--executors` allows, and what XXL-JOB executors register): the
      bridge's own HTTP/1.1 client, on non-blocking sockets kept alive per
      executor (a peer_t: its address, its Host, its idle connections).  A
      call on a kept-alive connection is one sendmsg() and one recv():
      libcurl's own per-call work (URL parsing, header lists, ~27
      allocations, liveness poll()s) was about a third of the bridge's
      CPU a run (docs/performance.md, group X).
      The wire (request head, answer reader) is xxl_bridge_http.c.
    - anything else (https://, "localhost"): libcurl's multi interface.
      A call on the wire is an easy handle; its state hangs off
      CURLOPT_PRIVATE.

    At most `parallel` calls are on the wire at once; the others wait in
    `waiting`, in order, with no connection or easy handle yet, and join
    as calls end.  (libcurl can queue them itself, but its
    curl_multi_remove_handle walks every handle the multi holds.)  Both
    kinds of socket are in one epoll set of this module's, which the
    bridge's loop polls as one fd: a turn costs the same with 1 or
    `parallel` connections.
*/

#include "xxl_bridge_call.h"
#include "xxl_bridge_http.h"

#include <curl/curl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/uio.h>

//  Largest answer body read
#define CALL_ANSWER_MAX  (1024 * 1024)

//  Most socket events taken from the epoll set at once
#define CALL_EVENTS  64

//  Longest connect (ms), as libcurl was told
#define CALL_CONNECT_MS  3000

//  Most executors (peers) remembered with no call and no connection
#define CALL_PEERS_MAX  4096

//  An own connection's read buffer: first size, and the most kept idle
#define CONN_IN_FIRST   4096
#define CONN_IN_KEPT    (64 * 1024)
//  Most bytes of one answer as read (head, chunk framing, body)
#define CONN_IN_MAX     (XXL_BRIDGE_HTTP_HEAD_MAX + 2 * CALL_ANSWER_MAX + 65536)

typedef struct _call_t call_t;
typedef struct _conn_t conn_t;

//  An executor's URL as the own client calls it
typedef struct {
    bool own;                       //  false: libcurl's
    xxl_bridge_http_url_t url;
    conn_t **idle;                  //  kept-alive connections, last used last
    size_t nidle;
    size_t conns;                   //  its open connections
    size_t refs;                    //  calls that name it
} peer_t;

//  An own connection
struct _conn_t {
    int fd;
    peer_t *peer;
    call_t *call;                   //  NULL: idle
    bool connecting;
    bool reused;                    //  it carried an answer before
    uint32_t events;                //  as in the epoll set
    char *out;                      //  the request's head
    size_t out_len, out_cap;
    size_t sent;                    //  of head and body
    char *in;                       //  the answer as read
    size_t in_len, in_cap;
    xxl_bridge_http_answer_t answer;
};

struct _xxl_bridge_call_t {
    CURLM *multi;
    int epoll;                      //  libcurl's sockets and the own ones
    uint32_t *fds;                  //  by fd: what the set holds (FD_*)
    conn_t **owners;                //  by fd: the own connection
    size_t nfds;
    int64_t deadline;               //  libcurl's timer (zclock_mono; -1 none)
    struct curl_slist *headers;
    char *head_fields;              //  the own requests' fixed header lines
    size_t head_fields_len;
    bool own;                       //  the own client may be used
    size_t count;                   //  calls held
    zlistx_t *calls;                //  of call_t on the wire (in the multi, or own)
    zlistx_t *waiting;              //  of call_t not yet on the wire, oldest first
    int queued;                     //  most calls held
    size_t parallel;                //  most calls on the wire
    int64_t next_sweep;             //  next look for calls past their time
    CURL **idle;                    //  easy handles of ended calls, for the next
    size_t nidle;                   //  (at most `parallel`)
    zhashx_t *peers;                //  executor URL -> peer_t
    size_t conns;                   //  own connections open
    uint64_t seq;                   //  calls posted
    xxl_bridge_call_check_fn *check;    //  may a connection be made
    void *check_arg;
};

//  Most answer bytes held in the call itself (the common answer,
//  {"code":200,"msg":null}, with room): a longer one is malloc'd
#define CALL_ANSWER_INLINE  128

struct _call_t {
    CURL *easy;                     //  (libcurl's)
    peer_t *peer;                   //  (own)
    conn_t *conn;                   //  (own, on the wire)
    bool fresh;                     //  (own) on a new connection only
    uint64_t seq;
    char *body;                     //  (in the call's own allocation)
    size_t body_len;
    char *answer;                   //  inline, or malloc'd past it
    size_t len, cap;
    bool too_long;
    bool refused;                   //  (libcurl's) check refused its address
    xxl_bridge_call_t *owner;       //  (libcurl's) for the check
    char error [CURL_ERROR_SIZE];
    xxl_bridge_call_fn *done;
    void *arg;
    void *handle;                   //  in calls, or in waiting
    bool in_multi;                  //  on the wire (either way)
    int timeout_ms;
    int64_t posted;                 //  zclock_mono when posted
    int64_t started;                //  zclock_mono when it went on the wire
    char *url;                      //  the whole URL (in the call's own allocation)
    char inline_answer [CALL_ANSWER_INLINE];
    char text [];                   //  url, NUL, body, NUL
};

//  How often calls are looked at for their timeout (ms)
#define CALL_SWEEP_MS  100

//  What the epoll set holds of an fd (fds[fd])
#define FD_IN_SET   (1u << 30)      //  in the set, with the EPOLL* bits kept
#define FD_WATCHED  (1u << 31)      //  and libcurl watches it
#define FD_OWN      (1u << 29)      //  an own connection (owners[fd])

//  Room in the fd tables for fd; -1 when out of memory
static int
s_fds_grow (xxl_bridge_call_t *self, int fd)
{
    if ((size_t) fd < self->nfds)
        return 0;
    size_t nfds = 2 * (size_t) fd + 16;
    uint32_t *grown = (uint32_t *) realloc (self->fds, nfds * sizeof *grown);
    if (!grown)
        return -1;
    self->fds = grown;
    conn_t **owners = (conn_t **) realloc (self->owners, nfds * sizeof *owners);
    if (!owners)
        return -1;
    self->owners = owners;
    memset (grown + self->nfds, 0, (nfds - self->nfds) * sizeof *grown);
    memset (owners + self->nfds, 0, (nfds - self->nfds) * sizeof *owners);
    self->nfds = nfds;
    return 0;
}

//  libcurl's socket callback: the sockets to watch, in the epoll set (no
//  fd_set: none is limited by FD_SETSIZE).  A socket libcurl stops
//  watching stays in the set while it waits for input only (a kept-alive
//  connection between calls: no epoll_ctl a call), and leaves it at its
//  first event (xxl_bridge_call_perform) or when libcurl closes it
//  (s_close: its number may come back as another socket).
static int
s_socket (CURL *easy, curl_socket_t fd, int what, void *arg, void *socketp)
{
    (void) easy; (void) socketp;
    xxl_bridge_call_t *self = (xxl_bridge_call_t *) arg;
    if (fd < 0)
        return 0;
    if (s_fds_grow (self, fd))
        return -1;                  //  (libcurl fails the transfer)
    uint32_t had = self->fds [fd];
    if (what == CURL_POLL_REMOVE) {
        if ((had & FD_IN_SET) && (had & EPOLLOUT)) {
            epoll_ctl (self->epoll, EPOLL_CTL_DEL, fd, NULL);
            self->fds [fd] = 0;
        }
        else
            self->fds [fd] = had & ~FD_WATCHED;
        return 0;
    }
    struct epoll_event event = { 0 };
    event.events = ((what & CURL_POLL_IN)? EPOLLIN: 0) | ((what & CURL_POLL_OUT)? EPOLLOUT: 0);
    event.data.fd = fd;
    if ((had & FD_IN_SET) && (had & (EPOLLIN | EPOLLOUT)) == event.events) {
        self->fds [fd] = had | FD_WATCHED;
        return 0;
    }
    //  (a closed fd left the set: its number may come back, new, as "in")
    if (epoll_ctl (self->epoll, (had & FD_IN_SET)? EPOLL_CTL_MOD: EPOLL_CTL_ADD, fd, &event)
    &&  epoll_ctl (self->epoll, (had & FD_IN_SET)? EPOLL_CTL_ADD: EPOLL_CTL_MOD, fd, &event))
        return -1;
    self->fds [fd] = FD_IN_SET | FD_WATCHED | event.events;
    return 0;
}

//  libcurl's close of its sockets (CURLOPT_CLOSESOCKETFUNCTION)
static int
s_close (void *arg, curl_socket_t fd)
{
    xxl_bridge_call_t *self = (xxl_bridge_call_t *) arg;
    if (fd >= 0 && (size_t) fd < self->nfds && (self->fds [fd] & FD_IN_SET))
        epoll_ctl (self->epoll, EPOLL_CTL_DEL, fd, NULL);
    if (fd >= 0 && (size_t) fd < self->nfds)
        self->fds [fd] = 0;
    return close (fd);
}

//  libcurl's timer callback
static int
s_timer (CURLM *multi, long timeout_ms, void *arg)
{
    (void) multi;
    xxl_bridge_call_t *self = (xxl_bridge_call_t *) arg;
    self->deadline = timeout_ms < 0? -1: zclock_mono () + timeout_ms;
    return 0;
}

static void
s_peer_destroy (peer_t **peer_p)
{
    peer_t *peer = *peer_p;
    if (peer) {
        assert (peer->nidle == 0);
        free (peer->idle);
        free (peer);
        *peer_p = NULL;
    }
}

xxl_bridge_call_t *
xxl_bridge_call_new (const char *token, int parallel, int queued)
{
    static bool initialised = false;
    if (!initialised) {
        curl_global_init (CURL_GLOBAL_DEFAULT);
        initialised = true;
    }
    xxl_bridge_call_t *self = (xxl_bridge_call_t *) zmalloc (sizeof *self);
    self->multi = curl_multi_init ();
    self->epoll = epoll_create1 (EPOLL_CLOEXEC);
    if (!self->multi || self->epoll < 0) {
        if (self->multi)
            curl_multi_cleanup (self->multi);
        if (self->epoll >= 0)
            close (self->epoll);
        free (self);
        return NULL;
    }
    self->deadline = -1;
    curl_multi_setopt (self->multi, CURLMOPT_SOCKETFUNCTION, s_socket);
    curl_multi_setopt (self->multi, CURLMOPT_SOCKETDATA, self);
    curl_multi_setopt (self->multi, CURLMOPT_TIMERFUNCTION, s_timer);
    curl_multi_setopt (self->multi, CURLMOPT_TIMERDATA, self);
    curl_multi_setopt (self->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long) parallel);
    curl_multi_setopt (self->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long) parallel);
    self->headers = curl_slist_append (NULL, "Content-Type: application/json;charset=UTF-8");
    self->headers = curl_slist_append (self->headers, "Expect:");
    //  The own requests' fixed lines, as libcurl sends them (a token with
    //  a control character would split the head: such a bridge calls
    //  through libcurl only, as before)
    self->own = true;
    for (const char *s = token? token: ""; *s; s++)
        if ((unsigned char) *s < ' ' || *s == 127)
            self->own = false;
    if (token && *token) {
        char *line = zsys_sprintf ("XXL-JOB-ACCESS-TOKEN: %s", token);
        self->headers = curl_slist_append (self->headers, line);
        zstr_free (&line);
    }
    self->head_fields = zsys_sprintf ("User-Agent: xxl-bridge\r\nAccept: */*\r\n"
                                      "Content-Type: application/json;charset=UTF-8\r\n"
                                      "%s%s%s",
                                      token && *token? "XXL-JOB-ACCESS-TOKEN: ": "",
                                      token && *token? token: "",
                                      token && *token? "\r\n": "");
    self->head_fields_len = strlen (self->head_fields);
    self->queued = queued;
    self->parallel = parallel > 0? (size_t) parallel: 1;
    self->calls = zlistx_new ();
    self->waiting = zlistx_new ();
    self->idle = (CURL **) calloc (self->parallel, sizeof (CURL *));
    assert (self->idle);
    self->peers = zhashx_new ();
    zhashx_set_destructor (self->peers, (zhashx_destructor_fn *) s_peer_destroy);
    return self;
}

//  --------------------------------------------------------------------------
//  Own connections

//  Closes conn (which carries no call)
static void
s_conn_close (xxl_bridge_call_t *self, conn_t *conn)
{
    assert (!conn->call);
    //  (close takes it out of the epoll set: no other descriptor of it)
    if (conn->fd >= 0) {
        self->fds [conn->fd] = 0;
        self->owners [conn->fd] = NULL;
        close (conn->fd);
    }
    conn->peer->conns--;
    self->conns--;
    free (conn->out);
    free (conn->in);
    free (conn);
}

//  Closes an idle connection of conn's peer at idle index i
static void
s_idle_close (xxl_bridge_call_t *self, peer_t *peer, size_t i)
{
    conn_t *conn = peer->idle [i];
    peer->idle [i] = peer->idle [--peer->nidle];
    s_conn_close (self, conn);
}

//  What the epoll set watches of conn: events
static int
s_conn_watch (xxl_bridge_call_t *self, conn_t *conn, uint32_t events)
{
    if (conn->events == events)
        return 0;
    struct epoll_event event = { 0 };
    event.events = events;
    event.data.fd = conn->fd;
    if (epoll_ctl (self->epoll, EPOLL_CTL_MOD, conn->fd, &event))
        return -1;
    conn->events = events;
    self->fds [conn->fd] = FD_IN_SET | FD_OWN | events;
    return 0;
}

//  A new connection to peer, connecting; NULL with why
static conn_t *
s_conn_open (xxl_bridge_call_t *self, peer_t *peer, char *why, size_t whylen)
{
    //  (at most `parallel` connections in all, as libcurl was told: an
    //  idle one of another executor goes)
    if (self->conns >= self->parallel)
        for (peer_t *other = (peer_t *) zhashx_first (self->peers); other;
             other = (peer_t *) zhashx_next (self->peers))
            if (other->nidle) {
                s_idle_close (self, other, 0);
                break;
            }
    const char *host = peer->url.host;
    if (self->check && !self->check (self->check_arg, (struct sockaddr *) &peer->url.addr)) {
        snprintf (why, whylen, "%s is outside the networks the bridge may call (--executors):"
                  " not connected", host);
        return NULL;
    }
    int fd = socket (peer->url.addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf (why, whylen, "Failed to connect to %s: %s", host, strerror (errno));
        return NULL;
    }
    int one = 1;
    setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    bool connecting = false;
    if (connect (fd, (struct sockaddr *) &peer->url.addr, peer->url.addrlen)) {
        if (errno != EINPROGRESS) {
            snprintf (why, whylen, "Failed to connect to %s: %s", host, strerror (errno));
            close (fd);
            return NULL;
        }
        connecting = true;
    }
    conn_t *conn = (conn_t *) calloc (1, sizeof *conn);
    struct epoll_event event = { 0 };
    event.events = connecting? EPOLLOUT: EPOLLIN;
    event.data.fd = fd;
    if (!conn || s_fds_grow (self, fd) || epoll_ctl (self->epoll, EPOLL_CTL_ADD, fd, &event)) {
        snprintf (why, whylen, "Failed to connect to %s: %s", host, strerror (errno));
        free (conn);
        close (fd);
        return NULL;
    }
    conn->fd = fd;
    conn->peer = peer;
    conn->connecting = connecting;
    conn->events = event.events;
    self->fds [fd] = FD_IN_SET | FD_OWN | event.events;
    self->owners [fd] = conn;
    peer->conns++;
    self->conns++;
    return conn;
}

static void s_own_end (xxl_bridge_call_t *self, call_t *call, int status, const char *body,
                       size_t len, const char *why);
static void s_own_retry (xxl_bridge_call_t *self, call_t *call);

//  Sends what is left of conn's request; false when the call ended
static bool
s_conn_send (xxl_bridge_call_t *self, conn_t *conn)
{
    call_t *call = conn->call;
    size_t total = conn->out_len + call->body_len;
    while (conn->sent < total) {
        struct iovec iov [2];
        int n = 0;
        if (conn->sent < conn->out_len)
            iov [n++] = (struct iovec) { conn->out + conn->sent, conn->out_len - conn->sent };
        size_t body_at = conn->sent > conn->out_len? conn->sent - conn->out_len: 0;
        if (call->body_len > body_at)
            iov [n++] = (struct iovec) { call->body + body_at, call->body_len - body_at };
        struct msghdr msg = { 0 };
        msg.msg_iov = iov;
        msg.msg_iovlen = n;
        ssize_t sent = sendmsg (conn->fd, &msg, MSG_NOSIGNAL);
        if (sent < 0 && errno == EINTR)
            continue;
        if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (s_conn_watch (self, conn, EPOLLOUT) == 0)
                return true;
        }
        if (sent < 0 && conn->reused && !call->fresh) {
            s_own_retry (self, call);
            return false;
        }
        if (sent < 0) {
            char why [160];
            snprintf (why, sizeof why, "Failed sending the request to %s: %s",
                      conn->peer->url.host, strerror (errno));
            s_own_end (self, call, 0, NULL, 0, why);
            return false;
        }
        conn->sent += (size_t) sent;
    }
    if (s_conn_watch (self, conn, EPOLLIN)) {
        s_own_end (self, call, 0, NULL, 0, "epoll_ctl failed");
        return false;
    }
    return true;
}

//  The call goes on the wire on a connection of its peer (an idle one
//  unless it must be fresh); false when it ended at once
static bool
s_own_start (xxl_bridge_call_t *self, call_t *call)
{
    peer_t *peer = call->peer;
    conn_t *conn = NULL;
    if (peer->nidle && !call->fresh)
        conn = peer->idle [--peer->nidle];
    char why [160];
    if (!conn && !(conn = s_conn_open (self, peer, why, sizeof why))) {
        s_own_end (self, call, 0, NULL, 0, why);
        return false;
    }
    call->conn = conn;
    conn->call = call;
    call->started = zclock_mono ();
    //  The head: "POST target HTTP/1.1", Host, the fixed lines, the length
    const char *target = call->url + peer->url.path_at;
    size_t tlen = strlen (target), hlen = strlen (peer->url.host);
    size_t need = 5 + tlen + 17 + hlen + 2 + self->head_fields_len + 16 + 24 + 4;
    if (conn->out_cap < need) {
        char *grown = (char *) realloc (conn->out, need);
        if (!grown) {
            s_own_end (self, call, 0, NULL, 0, "out of memory");
            return false;
        }
        conn->out = grown;
        conn->out_cap = need;
    }
    char *out = conn->out;
    memcpy (out, "POST ", 5);
    out += 5;
    memcpy (out, target, tlen);
    out += tlen;
    memcpy (out, " HTTP/1.1\r\nHost: ", 17);
    out += 17;
    memcpy (out, peer->url.host, hlen);
    out += hlen;
    memcpy (out, "\r\n", 2);
    out += 2;
    memcpy (out, self->head_fields, self->head_fields_len);
    out += self->head_fields_len;
    out += sprintf (out, "Content-Length: %zu\r\n\r\n", call->body_len);
    conn->out_len = out - conn->out;
    conn->sent = 0;
    conn->in_len = 0;
    memset (&conn->answer, 0, sizeof conn->answer);
    if (conn->connecting)
        return true;                //  (sent once connected)
    return s_conn_send (self, conn);
}

//  --------------------------------------------------------------------------

static void
s_call_free (xxl_bridge_call_t *self, call_t *call)
{
    if (call->in_multi) {
        if (call->easy)
            curl_multi_remove_handle (self->multi, call->easy);
        zlistx_delete (self->calls, call->handle);
    }
    else
        zlistx_delete (self->waiting, call->handle);
    if (call->conn) {
        conn_t *conn = call->conn;
        conn->call = NULL;
        call->conn = NULL;
        s_conn_close (self, conn);
    }
    if (call->peer)
        call->peer->refs--;
    if (call->easy && self->nidle < self->parallel) {
        //  (kept with the options every call has; no pointer into the call)
        curl_easy_setopt (call->easy, CURLOPT_PRIVATE, NULL);
        curl_easy_setopt (call->easy, CURLOPT_WRITEDATA, NULL);
        curl_easy_setopt (call->easy, CURLOPT_ERRORBUFFER, NULL);
        curl_easy_setopt (call->easy, CURLOPT_OPENSOCKETDATA, NULL);
        curl_easy_setopt (call->easy, CURLOPT_POSTFIELDS, "");
        self->idle [self->nidle++] = call->easy;
    }
    else
    if (call->easy)
        curl_easy_cleanup (call->easy);
    if (call->answer != call->inline_answer)
        free (call->answer);
    free (call);
    self->count--;
}

//  An own call ends: its completion (status 0: no answer, why says why),
//  and its connection kept (an answer that allows it) or closed
static void
s_own_end (xxl_bridge_call_t *self, call_t *call, int status, const char *body, size_t len,
           const char *why)
{
    conn_t *conn = call->conn;
    bool keep = conn && status > 0 && !conn->answer.close
             && conn->peer->nidle < self->parallel;
    call->done (call->arg, status > 0? status: 0, body? body: "", body? len: 0,
                status > 0? "": why);
    if (keep) {
        conn->call = NULL;
        call->conn = NULL;
        conn->reused = true;
        if (conn->in_cap > CONN_IN_KEPT) {
            free (conn->in);
            conn->in = NULL;
            conn->in_cap = 0;
        }
        peer_t *peer = conn->peer;
        if (!peer->idle) {
            peer->idle = (conn_t **) calloc (self->parallel, sizeof (conn_t *));
            assert (peer->idle);
        }
        peer->idle [peer->nidle++] = conn;
    }
    s_call_free (self, call);
}

//  A reused connection that ended before any byte of its answer (the
//  executor closed it while it was idle): the call goes again on a new
//  one, once, as libcurl does
static void
s_own_retry (xxl_bridge_call_t *self, call_t *call)
{
    assert (!call->fresh);
    conn_t *conn = call->conn;
    conn->call = NULL;
    call->conn = NULL;
    s_conn_close (self, conn);
    call->fresh = true;
    s_own_start (self, call);
}

//  Reads what conn has; an idle connection that says anything is closed
static void
s_conn_read (xxl_bridge_call_t *self, conn_t *conn)
{
    call_t *call = conn->call;
    if (!call) {
        char byte;
        ssize_t n = recv (conn->fd, &byte, 1, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        peer_t *peer = conn->peer;
        for (size_t i = 0; i < peer->nidle; i++)
            if (peer->idle [i] == conn) {
                s_idle_close (self, peer, i);
                return;
            }
        assert (false);
    }
    if (conn->in_cap - conn->in_len < 1025) {
        if (conn->in_len > CONN_IN_MAX) {
            char why [96];
            snprintf (why, sizeof why, "the executor's answer is longer than %d bytes",
                      CALL_ANSWER_MAX);
            s_own_end (self, call, 0, NULL, 0, why);
            return;
        }
        size_t cap = conn->in_cap? 2 * conn->in_cap: CONN_IN_FIRST;
        if (cap > CONN_IN_MAX + 1025)
            cap = CONN_IN_MAX + 1025;
        char *grown = (char *) realloc (conn->in, cap);
        if (!grown) {
            s_own_end (self, call, 0, NULL, 0, "out of memory");
            return;
        }
        conn->in = grown;
        conn->in_cap = cap;
    }
    ssize_t n = recv (conn->fd, conn->in + conn->in_len, conn->in_cap - conn->in_len - 1, 0);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    if (n <= 0 && conn->in_len == 0 && conn->reused && !call->fresh) {
        s_own_retry (self, call);
        return;
    }
    if (n < 0) {
        char why [160];
        snprintf (why, sizeof why, "Failed receiving the answer of %s: %s",
                  conn->peer->url.host, strerror (errno));
        s_own_end (self, call, 0, NULL, 0, why);
        return;
    }
    conn->in_len += (size_t) n;
    char why [160];
    int rc = xxl_bridge_http_read (&conn->answer, conn->in, &conn->in_len, n == 0,
                                   CALL_ANSWER_MAX, why, sizeof why);
    if (rc == 0)
        return;
    if (rc == -2)
        snprintf (why, sizeof why, "the executor's answer is longer than %d bytes",
                  CALL_ANSWER_MAX);
    if (rc < 0)
        s_own_end (self, call, 0, NULL, 0, why);
    else
        s_own_end (self, call, conn->answer.status, conn->in + conn->answer.head_len,
                   conn->answer.body_len, NULL);
}

//  An event on an own connection
static void
s_conn_event (xxl_bridge_call_t *self, conn_t *conn, uint32_t events)
{
    if (conn->connecting) {
        //  (by the socket, not by the event: an fd closed and opened again
        //  in one turn may have an event of its last socket)
        (void) events;
        int error = 0;
        socklen_t elen = sizeof error;
        if (getsockopt (conn->fd, SOL_SOCKET, SO_ERROR, &error, &elen))
            error = errno;
        struct sockaddr_storage peer;
        socklen_t plen = sizeof peer;
        if (!error && getpeername (conn->fd, (struct sockaddr *) &peer, &plen) == 0) {
            conn->connecting = false;
            s_conn_send (self, conn);
            return;
        }
        if (!error && errno == ENOTCONN)
            return;                 //  (not yet)
        char why [160];
        snprintf (why, sizeof why, "Failed to connect to %s: %s", conn->peer->url.host,
                  strerror (error? error: errno));
        s_own_end (self, conn->call, 0, NULL, 0, why);
        return;
    }
    if (conn->call && conn->events == EPOLLOUT) {
        s_conn_send (self, conn);
        return;
    }
    s_conn_read (self, conn);
}

//  --------------------------------------------------------------------------

void
xxl_bridge_call_destroy (xxl_bridge_call_t **self_p)
{
    xxl_bridge_call_t *self = *self_p;
    if (!self)
        return;
    //  Each call ends with no answer, so that its caller frees what it
    //  gave (its completion must not start another call)
    call_t *call;
    while ((call = (call_t *) zlistx_first (self->waiting))
    ||     (call = (call_t *) zlistx_first (self->calls))) {
        call->done (call->arg, 0, "", 0, "the bridge is stopping");
        s_call_free (self, call);
    }
    zlistx_destroy (&self->calls);
    zlistx_destroy (&self->waiting);
    for (peer_t *peer = (peer_t *) zhashx_first (self->peers); peer;
         peer = (peer_t *) zhashx_next (self->peers))
        while (peer->nidle)
            s_idle_close (self, peer, 0);
    zhashx_destroy (&self->peers);
    while (self->nidle)
        curl_easy_cleanup (self->idle [--self->nidle]);
    free (self->idle);
    curl_multi_cleanup (self->multi);
    close (self->epoll);
    free (self->fds);
    free (self->owners);
    curl_slist_free_all (self->headers);
    zstr_free (&self->head_fields);
    free (self);
    *self_p = NULL;
}

static size_t
s_write (char *data, size_t size, size_t nmemb, void *arg)
{
    call_t *call = (call_t *) arg;
    size_t n = size * nmemb;
    if (call->len + n > CALL_ANSWER_MAX) {
        call->too_long = true;
        return 0;                   //  ends the transfer (CURLE_WRITE_ERROR)
    }
    if (call->len + n + 1 > call->cap) {
        size_t cap = (call->len + n + 1) * 2;
        char *grown = (char *) realloc (call->answer == call->inline_answer? NULL: call->answer,
                                        cap);
        if (!grown)
            return 0;
        if (call->answer == call->inline_answer)
            memcpy (grown, call->answer, call->len);
        call->answer = grown;
        call->cap = cap;
    }
    memcpy (call->answer + call->len, data, n);
    call->len += n;
    call->answer [call->len] = 0;
    return n;
}

//  libcurl's socket opening (CURLOPT_OPENSOCKETFUNCTION): the address it
//  resolved and is about to connect to goes through the check first
static curl_socket_t
s_open_socket (void *arg, curlsocktype purpose, struct curl_sockaddr *addr)
{
    call_t *call = (call_t *) arg;
    xxl_bridge_call_t *self = call->owner;
    if (purpose != CURLSOCKTYPE_IPCXN)
        return CURL_SOCKET_BAD;
    if (self->check && !self->check (self->check_arg, &addr->addr)) {
        call->refused = true;
        return CURL_SOCKET_BAD;
    }
    return socket (addr->family, addr->socktype | SOCK_CLOEXEC, addr->protocol);
}

void
xxl_bridge_call_set_check (xxl_bridge_call_t *self, xxl_bridge_call_check_fn *check, void *arg)
{
    self->check = check;
    self->check_arg = arg;
}

//  The call joins libcurl's multi, with an easy handle and what is left of
//  its time; -1 (nothing changed) when libcurl refuses it
static int
s_join (xxl_bridge_call_t *self, call_t *call, long left_ms)
{
    assert (!call->in_multi && !call->easy);
    CURL *e = self->nidle? self->idle [--self->nidle]: NULL;
    if (!e) {
        //  The options every call has, once a handle
        e = curl_easy_init ();
        if (!e)
            return -1;
        curl_easy_setopt (e, CURLOPT_POST, 1L);
        curl_easy_setopt (e, CURLOPT_HTTPHEADER, self->headers);
        curl_easy_setopt (e, CURLOPT_WRITEFUNCTION, s_write);
        curl_easy_setopt (e, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt (e, CURLOPT_FOLLOWLOCATION, 0L);
        curl_easy_setopt (e, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt (e, CURLOPT_USERAGENT, "xxl-bridge");
        curl_easy_setopt (e, CURLOPT_CLOSESOCKETFUNCTION, s_close);
        curl_easy_setopt (e, CURLOPT_CLOSESOCKETDATA, self);
        //  (no proxy: the executors are called directly, and libcurl then
        //  reads no *_proxy environment variables a call)
        curl_easy_setopt (e, CURLOPT_PROXY, "");
        //  (a URL with user information is refused by libcurl too)
        curl_easy_setopt (e, CURLOPT_DISALLOW_USERNAME_IN_URL, 1L);
        curl_easy_setopt (e, CURLOPT_OPENSOCKETFUNCTION, s_open_socket);
    }
    //  and each call's own
    curl_easy_setopt (e, CURLOPT_URL, call->url);
    curl_easy_setopt (e, CURLOPT_PRIVATE, call);
    curl_easy_setopt (e, CURLOPT_OPENSOCKETDATA, call);
    call->owner = self;
    curl_easy_setopt (e, CURLOPT_POSTFIELDS, call->body);
    curl_easy_setopt (e, CURLOPT_POSTFIELDSIZE, (long) call->body_len);
    curl_easy_setopt (e, CURLOPT_WRITEDATA, call);
    curl_easy_setopt (e, CURLOPT_ERRORBUFFER, call->error);
    curl_easy_setopt (e, CURLOPT_TIMEOUT_MS, left_ms);
    curl_easy_setopt (e, CURLOPT_CONNECTTIMEOUT_MS, left_ms < CALL_CONNECT_MS? left_ms
                                                                              : (long) CALL_CONNECT_MS);
    if (curl_multi_add_handle (self->multi, e) != CURLM_OK) {
        curl_easy_cleanup (e);
        return -1;
    }
    call->easy = e;
    call->in_multi = true;
    call->handle = zlistx_add_end (self->calls, call);
    return 0;
}

//  The peer of an executor's URL, made at its first call (NULL: out of memory)
static peer_t *
s_peer (xxl_bridge_call_t *self, const char *url)
{
    peer_t *peer = (peer_t *) zhashx_lookup (self->peers, url);
    if (peer)
        return peer;
    if (zhashx_size (self->peers) >= CALL_PEERS_MAX) {
        //  (executors gone: those no call names and with no connection)
        zlist_t *gone = zlist_new ();
        for (peer_t *p = (peer_t *) zhashx_first (self->peers); p;
             p = (peer_t *) zhashx_next (self->peers))
            if (!p->refs && !p->conns)
                zlist_append (gone, (void *) zhashx_cursor (self->peers));
        for (const char *key = (const char *) zlist_first (gone); key;
             key = (const char *) zlist_next (gone))
            zhashx_delete (self->peers, key);
        zlist_destroy (&gone);
    }
    peer = (peer_t *) calloc (1, sizeof *peer);
    if (!peer)
        return NULL;
    peer->own = self->own && xxl_bridge_http_url (url, &peer->url) == 0;
    zhashx_insert (self->peers, url, peer);
    return peer;
}

int
xxl_bridge_call_post (xxl_bridge_call_t *self, const char *url, const char *path,
                      const char *body, int timeout_ms, xxl_bridge_call_fn *done, void *arg)
{
    if (self->count >= (size_t) self->queued)
        return -1;
    peer_t *peer = s_peer (self, url);
    if (!peer)
        return -1;
    //  One allocation: the call, its URL (the executor's, XXL-JOB's ending
    //  in '/', and the path) and its body
    size_t ulen = strlen (url), plen = strlen (path), blen = body? strlen (body): 0;
    bool slash = !(ulen && url [ulen - 1] == '/');
    call_t *call = (call_t *) malloc (sizeof *call + ulen + slash + plen + 1 + blen + 1);
    if (!call)
        return -1;
    memset (call, 0, offsetof (call_t, inline_answer));
    call->url = call->text;
    memcpy (call->url, url, ulen);
    if (slash)
        call->url [ulen] = '/';
    memcpy (call->url + ulen + slash, path, plen + 1);
    call->body = call->url + ulen + slash + plen + 1;
    if (blen)
        memcpy (call->body, body, blen);
    call->body [blen] = 0;
    call->body_len = blen;
    call->answer = call->inline_answer;
    call->answer [0] = 0;
    call->cap = sizeof call->inline_answer;
    call->done = done;
    call->arg = arg;
    call->timeout_ms = timeout_ms;
    call->posted = zclock_mono ();
    call->seq = self->seq++;
    if (peer->own) {
        //  (on the wire at the next xxl_bridge_call_perform)
        call->peer = peer;
        peer->refs++;
    }
    else
    if (zlistx_size (self->calls) < self->parallel && s_join (self, call, timeout_ms)) {
        free (call);
        return -1;
    }
    if (!call->in_multi)
        call->handle = zlistx_add_end (self->waiting, call);
    self->count++;
    return 0;
}

//  Ends a waiting call with no answer
static void
s_call_fail (xxl_bridge_call_t *self, call_t *call, const char *why)
{
    call->done (call->arg, 0, "", 0, why);
    s_call_free (self, call);
}

//  Waiting calls posted before seq go on the wire while there is room,
//  with what is left of their time; those whose time ran out while
//  waiting fail
static void
s_promote (xxl_bridge_call_t *self, uint64_t seq)
{
    call_t *call;
    while (zlistx_size (self->calls) < self->parallel
    &&     (call = (call_t *) zlistx_first (self->waiting)) && call->seq < seq) {
        int64_t left = call->posted + call->timeout_ms - zclock_mono ();
        if (left <= 0) {
            s_call_fail (self, call, "timed out waiting for a connection to the executor"
                                     " (bridge/parallel calls on the wire)");
            continue;
        }
        zlistx_delete (self->waiting, call->handle);
        if (call->peer) {
            call->in_multi = true;
            call->handle = zlistx_add_end (self->calls, call);
            s_own_start (self, call);
        }
        else
        if (s_join (self, call, (long) left)) {
            call->handle = zlistx_add_end (self->waiting, call);
            s_call_fail (self, call, "libcurl refused the call");
        }
    }
}

//  Calls past their time fail (looked at every CALL_SWEEP_MS): waiting
//  ones, and own ones on the wire (libcurl times its own)
static void
s_sweep (xxl_bridge_call_t *self)
{
    int64_t now = zclock_mono ();
    if ((!zlistx_size (self->waiting) && !zlistx_size (self->calls)) || now < self->next_sweep)
        return;
    self->next_sweep = now + CALL_SWEEP_MS;
    //  (collected first: a completion may post calls)
    zlist_t *late = zlist_new ();
    for (call_t *call = (call_t *) zlistx_first (self->waiting); call;
         call = (call_t *) zlistx_next (self->waiting))
        if (now >= call->posted + call->timeout_ms)
            zlist_append (late, call);
    for (call_t *call = (call_t *) zlist_first (late); call; call = (call_t *) zlist_next (late))
        s_call_fail (self, call, "timed out waiting for a connection to the executor"
                                 " (bridge/parallel calls on the wire)");
    zlist_purge (late);
    for (call_t *call = (call_t *) zlistx_first (self->calls); call;
         call = (call_t *) zlistx_next (self->calls))
        if (call->conn
        && (now >= call->posted + call->timeout_ms
        ||  (call->conn->connecting && now >= call->started + CALL_CONNECT_MS)))
            zlist_append (late, call);
    for (call_t *call = (call_t *) zlist_first (late); call; call = (call_t *) zlist_next (late)) {
        char why [160];
        if (call->conn->connecting)
            snprintf (why, sizeof why, "Failed to connect to %s after %" PRId64 " ms: timed out",
                      call->peer->url.host, now - call->started);
        else
            snprintf (why, sizeof why, "Operation timed out after %" PRId64 " milliseconds with"
                      " %zu bytes received", now - call->started, call->conn->in_len);
        s_own_end (self, call, 0, NULL, 0, why);
    }
    zlist_destroy (&late);
}

size_t
xxl_bridge_call_count (xxl_bridge_call_t *self)
{
    return self->count;
}

int
xxl_bridge_call_fd (xxl_bridge_call_t *self, long *timeout_ms)
{
    //  (posted calls go on the wire at the next perform, at once when
    //  there is room)
    call_t *first = (call_t *) zlistx_first (self->waiting);
    if (first && zlistx_size (self->calls) < self->parallel)
        *timeout_ms = 0;
    else
    if ((first || zlistx_size (self->calls)) && (*timeout_ms < 0 || *timeout_ms > CALL_SWEEP_MS))
        *timeout_ms = CALL_SWEEP_MS;
    if (self->deadline >= 0) {
        int64_t wait = self->deadline - zclock_mono ();
        if (wait < 0)
            wait = 0;
        if (*timeout_ms < 0 || wait < *timeout_ms)
            *timeout_ms = (long) wait;
    }
    return self->epoll;
}

void
xxl_bridge_call_perform (xxl_bridge_call_t *self, bool ready)
{
    //  (calls posted from here on, by completions, wait for the next turn:
    //  what the caller wrote before this call covers only those before)
    uint64_t seq = self->seq;
    int running;
    //  (past CALL_EVENTS ready, the rest are the next turn's: the set's
    //  fd stays readable)
    struct epoll_event events [CALL_EVENTS];
    int count = ready? epoll_wait (self->epoll, events, CALL_EVENTS, 0): 0;
    for (int i = 0; i < count; i++) {
        int fd = events [i].data.fd;
        if ((size_t) fd < self->nfds && (self->fds [fd] & FD_OWN)) {
            s_conn_event (self, self->owners [fd], events [i].events);
            continue;
        }
        if ((size_t) fd < self->nfds && !(self->fds [fd] & FD_WATCHED)) {
            //  (a socket libcurl no longer watches: out of the set)
            epoll_ctl (self->epoll, EPOLL_CTL_DEL, fd, NULL);
            self->fds [fd] = 0;
            continue;
        }
        int what = ((events [i].events & EPOLLIN)? CURL_CSELECT_IN: 0)
                 | ((events [i].events & EPOLLOUT)? CURL_CSELECT_OUT: 0)
                 | ((events [i].events & (EPOLLERR | EPOLLHUP))? CURL_CSELECT_ERR: 0);
        curl_multi_socket_action (self->multi, fd, what, &running);
    }
    if (self->deadline >= 0 && zclock_mono () >= self->deadline) {
        self->deadline = -1;
        curl_multi_socket_action (self->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    }
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read (self->multi, &left))) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        call_t *call = NULL;
        curl_easy_getinfo (msg->easy_handle, CURLINFO_PRIVATE, (char **) &call);
        assert (call);
        long status = 0;
        char why [CURL_ERROR_SIZE + 64];
        why [0] = 0;
        if (msg->data.result == CURLE_OK)
            curl_easy_getinfo (call->easy, CURLINFO_RESPONSE_CODE, &status);
        else
        if (call->refused)
            snprintf (why, sizeof why, "the executor's address is outside the networks the"
                      " bridge may call (--executors): not connected");
        else
        if (call->too_long)
            snprintf (why, sizeof why, "the executor's answer is longer than %d bytes",
                      CALL_ANSWER_MAX);
        else
            snprintf (why, sizeof why, "%s", *call->error? call->error
                                             : curl_easy_strerror (msg->data.result));
        call->done (call->arg, (int) status, call->answer, call->len, why);
        s_call_free (self, call);
    }
    s_sweep (self);
    s_promote (self, seq);
}
