/*  xxl_transport.c -- the table of socket roles, and the code that applies it.
*/

#include "xxl_transport.h"
#include "xxl_log.h"
#include "xxl/msg.h"

#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

//  What a role's socket is.  -1 in an int option: leave ZeroMQ's default.
typedef struct {
    const char *name;
    int type;
    bool bind;
    int linger_ms;
    bool router_mandatory;
    int sndtimeo_ms;
    int sndhwm, rcvhwm;
    bool immediate;
    int reconnect_ms, reconnect_max_ms;
    bool keepalive;                     //  TCP keepalives (S_KEEPALIVE_*)
} s_role_t;

//  No socket of xxl turns ZMTP heartbeats on (ZMQ_HEARTBEAT_IVL stays 0).
//  libzmq 4.3.4 (stream_engine_base.cpp) aborts the whole process when a
//  heartbeat is due on a connection whose input is stopped and whose peer
//  has then closed it (assertion !_io_error in out_event): input stops when
//  a connection's read-ahead queue is full (a peer sending past rcvhwm while
//  we are slow, frozen or closing the socket), and after a CURVE message
//  that does not decrypt on a monitored socket (the monitor event overwrites
//  the error, and libzmq takes it for a full queue).  Any peer, or a byte
//  changed on the way, could abort the scheduler or an agent.  A dead peer
//  is found instead by TCP keepalives (an idle connection whose peer host is
//  gone: closed within about 25 s) and by the application: an agent beats
//  REGISTER and replaces a link that stops answering (agent/xxl_agent.c);
//  the scheduler drops an agent silent for its dead time and fails a RUN
//  not answered within run_timeout.
#define S_KEEPALIVE_IDLE_S  10
#define S_KEEPALIVE_INTVL_S 5
#define S_KEEPALIVE_CNT     3

static const s_role_t s_roles [XXL_ROLE_COUNT] = {
    //  Clients: 1,000 unread replies in ZeroMQ's queue (the engine keeps a
    //  bounded backlog behind it, and holds large replies back from a
    //  client whose socket is full); 1,000 requests read ahead
    [XXL_ROLE_API] = {
        "api", ZMQ_ROUTER, true, 1000, true, 0, 1000, 1000, false, -1, -1, true },
    //  Agents: RUN bursts of one planned instant fit; past 100,000 unsent
    //  messages a send fails as one to a closed connection
    [XXL_ROLE_AGENTS] = {
        "agents", ZMQ_ROUTER, true, 1000, true, 0, 100000, 10000, false, -1, -1, true },
    //  An agent's link, bounded as the scheduler's end of it: 100,000
    //  messages unsent (an answer to each message the scheduler can have
    //  queued to it), 10,000 read ahead.  A send to a full queue fails at
    //  once (EAGAIN), as one while the link is down does: the agent sends
    //  a REGISTER or CALLBACK again later and drops a REPLY (agent/
    //  xxl_agent.c).  Nothing is sent before the connection is up;
    //  reconnects fast, backs off to 2 s
    [XXL_ROLE_AGENT_LINK] = {
        "agent link", ZMQ_DEALER, false, 2000, false, -1, 100000, 10000, true, 100, 2000,
        true },
    //  A client: a request that cannot leave within 1 s fails
    [XXL_ROLE_CLIENT] = {
        "client", ZMQ_DEALER, false, 0, false, 1000, -1, -1, false, -1, -1, false },
};

zsock_t *
xxl_transport_new (xxl_role_t role)
{
    assert (role >= 0 && role < XXL_ROLE_COUNT);
    const s_role_t *r = &s_roles [role];
    zsock_t *sock = zsock_new (r->type);
    if (!sock)
        return NULL;
    zsock_set_linger (sock, r->linger_ms);
    if (r->router_mandatory)
        zsock_set_router_mandatory (sock, 1);
    if (r->sndtimeo_ms >= 0)
        zsock_set_sndtimeo (sock, r->sndtimeo_ms);
    if (r->sndhwm >= 0)
        zsock_set_sndhwm (sock, r->sndhwm);
    if (r->rcvhwm >= 0)
        zsock_set_rcvhwm (sock, r->rcvhwm);
    if (r->immediate)
        zsock_set_immediate (sock, 1);
    if (r->reconnect_ms >= 0)
        zsock_set_reconnect_ivl (sock, r->reconnect_ms);
    if (r->reconnect_max_ms >= 0)
        zsock_set_reconnect_ivl_max (sock, r->reconnect_max_ms);
    zsock_set_maxmsgsize (sock, XXL_MSG_MAX_FRAME + 1024);
    if (r->keepalive) {
        zsock_set_tcp_keepalive (sock, 1);
        zsock_set_tcp_keepalive_idle (sock, S_KEEPALIVE_IDLE_S);
        zsock_set_tcp_keepalive_intvl (sock, S_KEEPALIVE_INTVL_S);
        zsock_set_tcp_keepalive_cnt (sock, S_KEEPALIVE_CNT);
    }
    return sock;
}

int
xxl_transport_attach (zsock_t *sock, xxl_role_t role, const char *endpoint,
                      char *bound, size_t boundlen, char *err, size_t errlen)
{
    assert (role >= 0 && role < XXL_ROLE_COUNT);
    const s_role_t *r = &s_roles [role];
    int rc = endpoint && *endpoint
           ? (r->bind? zsock_bind (sock, "%s", endpoint): zsock_connect (sock, "%s", endpoint))
           : -1;
    if (rc < 0) {
        if (err && errlen)
            snprintf (err, errlen, "cannot %s the %s socket to '%s': %s",
                      r->bind? "bind": "connect", r->name, endpoint? endpoint: "",
                      endpoint && *endpoint? zmq_strerror (zmq_errno ()): "no endpoint");
        return -1;
    }
    if (r->bind && bound && boundlen) {
        char *last = zsock_last_endpoint (sock);
        snprintf (bound, boundlen, "%s", last? last: endpoint);
        zstr_free (&last);
    }
    return 0;
}

zsock_t *
xxl_transport_open (xxl_role_t role, const char *endpoint, char *bound, size_t boundlen,
                    char *err, size_t errlen)
{
    zsock_t *sock = xxl_transport_new (role);
    if (!sock) {
        if (err && errlen)
            snprintf (err, errlen, "cannot make the %s socket: %s", s_roles [role].name,
                      zmq_strerror (zmq_errno ()));
        return NULL;
    }
    if (xxl_transport_attach (sock, role, endpoint, bound, boundlen, err, errlen))
        zsock_destroy (&sock);
    return sock;
}

int
xxl_transport_curve (zsock_t *sock, xxl_role_t role, zcert_t *own, const char *server_key,
                     char *err, size_t errlen)
{
    assert (role >= 0 && role < XXL_ROLE_COUNT);
    assert (own);
    const s_role_t *r = &s_roles [role];
    if (!zsys_has_curve ()) {
        snprintf (err, errlen, "this libzmq has no CURVE support");
        return -1;
    }
    zcert_apply (own, sock);
    if (r->bind) {
        zsock_set_curve_server (sock, 1);
        zsock_set_zap_domain (sock, "xxl");
    }
    else {
        //  (czmq's setter asserts on a key libzmq refuses: judge it first)
        uint8_t key [32];
        if (!server_key || strlen (server_key) != 40 || !zmq_z85_decode (key, server_key)) {
            snprintf (err, errlen, "the scheduler's public key must be 40 Z85 characters");
            return -1;
        }
        zsock_set_curve_serverkey_bin (sock, key);
    }
    return 0;
}

bool
xxl_transport_loopback (const char *endpoint)
{
    if (!endpoint)
        return false;
    if (strncmp (endpoint, "ipc://", 6) == 0 || strncmp (endpoint, "inproc://", 9) == 0)
        return true;
    if (strncmp (endpoint, "tcp://", 6))
        return false;
    const char *host = endpoint + 6;
    //  A bind may name the source as "tcp://src;dst" only on connect; a
    //  host is the part before the last ':'
    const char *colon = strrchr (host, ':');
    if (!colon)
        return false;
    size_t len = colon - host;
    if ((len == 9 && strncmp (host, "localhost", 9) == 0)
    ||  (len == 5 && strncmp (host, "[::1]", 5) == 0))
        return true;
    if (len < 9 || len > 15 || strncmp (host, "127.", 4))
        return false;
    //  127.a.b.c with decimal octets only
    int dots = 0;
    for (size_t i = 4; i < len; i++) {
        if (host [i] == '.')
            dots++;
        else
        if (host [i] < '0' || host [i] > '9')
            return false;
    }
    return dots == 2;
}

bool
xxl_transport_all_loopback (const char *endpoints)
{
    char *list = strdup (endpoints? endpoints: ""), *save = NULL;
    bool local = list && *list;
    for (char *item = list? strtok_r (list, ",", &save): NULL; item && local;
         item = strtok_r (NULL, ",", &save))
        local = xxl_transport_loopback (item);
    free (list);
    return local;
}

void *
xxl_transport_monitor (zsock_t *sock, int events)
{
    static int s_sequence = 0;
    char endpoint [64];
    snprintf (endpoint, sizeof endpoint, "inproc://xxl-monitor-%d",
              __atomic_add_fetch (&s_sequence, 1, __ATOMIC_SEQ_CST));
    if (zmq_socket_monitor (zsock_resolve (sock), endpoint, events))
        return NULL;
    void *pair = zmq_socket (zsys_init (), ZMQ_PAIR);
    if (pair && zmq_connect (pair, endpoint)) {
        zmq_close (pair);
        pair = NULL;
    }
    return pair;
}

int
xxl_transport_event (void *monitor, uint16_t *event, uint32_t *value)
{
    return xxl_transport_event_from (monitor, event, value, NULL, 0);
}

int
xxl_transport_event_from (void *monitor, uint16_t *event, uint32_t *value, char *address,
                          size_t addrlen)
{
    zmq_msg_t frame;
    zmq_msg_init (&frame);
    if (zmq_msg_recv (&frame, monitor, ZMQ_DONTWAIT) < 0) {
        zmq_msg_close (&frame);
        return -1;
    }
    *event = 0;
    *value = 0;
    if (address && addrlen)
        *address = 0;
    if (zmq_msg_size (&frame) >= 6) {
        memcpy (event, zmq_msg_data (&frame), 2);
        memcpy (value, (uint8_t *) zmq_msg_data (&frame) + 2, 4);
    }
    int more = zmq_msg_more (&frame);
    zmq_msg_close (&frame);
    while (more) {                      //  the endpoint frame
        zmq_msg_init (&frame);
        zmq_msg_recv (&frame, monitor, 0);
        if (address && addrlen) {
            size_t size = zmq_msg_size (&frame) < addrlen - 1? zmq_msg_size (&frame): addrlen - 1;
            memcpy (address, zmq_msg_data (&frame), size);
            address [size] = 0;
        }
        more = zmq_msg_more (&frame);
        zmq_msg_close (&frame);
    }
    return 0;
}

//  xxl_transport_watch's thread: reads the monitor, logs each refused key
typedef struct {
    void *monitor;
    char name [32];
} s_watch_t;

static void
s_watch_actor (zsock_t *pipe, void *args)
{
    s_watch_t *watch = (s_watch_t *) args;
    zsock_signal (pipe, 0);
    xxl_log_limit_t limit = { 0 };
    zmq_pollitem_t items [] = {
        { zsock_resolve (pipe), 0, ZMQ_POLLIN, 0 },
        { watch->monitor, 0, ZMQ_POLLIN, 0 },
    };
    while (true) {
        if (zmq_poll (items, 2, -1) < 0 && zmq_errno () != EINTR)
            break;
        if (items [0].revents & ZMQ_POLLIN)
            break;                      //  $TERM
        uint16_t event;
        uint32_t value;
        char peer [256];
        int64_t held;
        while (xxl_transport_event_from (watch->monitor, &event, &value, peer, sizeof peer) == 0)
            if (event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH
            &&  xxl_log_limit_pass (&limit, 10, &held) == 0) {
                char more [48] = "";
                if (held)
                    snprintf (more, sizeof more, "; %" PRId64 " more held back", held);
                for (char *c = peer; *c; c++)
                    if ((unsigned char) *c < 0x20 || *c == 0x7f)
                        *c = '?';
                zsys_warning ("%s: a CURVE handshake on %s refused: the client's key is not"
                              " in the keys folder (ZAP status %u)%s", watch->name,
                              *peer? peer: "its endpoint", value, more);
            }
    }
    zmq_close (watch->monitor);
    free (watch);
}

zactor_t *
xxl_transport_watch (zsock_t *sock, const char *name)
{
    s_watch_t *watch = (s_watch_t *) calloc (1, sizeof (s_watch_t));
    if (!watch)
        return NULL;
    snprintf (watch->name, sizeof watch->name, "%s", name);
    watch->monitor = xxl_transport_monitor (sock, ZMQ_EVENT_HANDSHAKE_FAILED_AUTH);
    zactor_t *actor = watch->monitor? zactor_new (s_watch_actor, watch): NULL;
    if (!actor) {
        zmq_socket_monitor (zsock_resolve (sock), NULL, 0);
        if (watch->monitor)
            zmq_close (watch->monitor);
        free (watch);
    }
    return actor;
}

void
xxl_transport_unwatch (zsock_t *sock, zactor_t **watch_p)
{
    if (!*watch_p)
        return;
    //  (the socket stops sending first: a monitor event to a closed
    //  pair would wait)
    if (sock)
        zmq_socket_monitor (zsock_resolve (sock), NULL, 0);
    zactor_destroy (watch_p);
}

bool
xxl_transport_handshake_failed (uint16_t event, uint32_t value, bool curve, char *buf,
                                size_t buflen, bool *final)
{
    *final = false;
    if (event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) {
        snprintf (buf, buflen, "the scheduler refused this key (ZAP status %u): its public"
                  " certificate is not in the scheduler's keys folder", value);
        *final = true;
    }
    else
    if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
    &&  value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH) {
        snprintf (buf, buflen, curve? "the scheduler does not use CURVE keys (it has no"
                  " certificate)": "the scheduler requires CURVE keys: give --cert and"
                  " --scheduler-key");
        *final = true;
    }
    else
    if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL)
        snprintf (buf, buflen, "ZMTP protocol error 0x%x", value);
    else
    if (event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL)
        snprintf (buf, buflen, curve? "the server there closed it: it is not the scheduler"
                  " whose public key was given (--scheduler-key)":
                  "the server there closed it: a scheduler with CURVE keys closes a"
                  " connection without them (give --cert and --scheduler-key or, on the"
                  " scheduler's host, read its local keys: start after its first start, as"
                  " its user or root; docs/operations.md, Security)");
    else
        return false;
    return true;
}

xxl_role_limits_t
xxl_transport_limits (xxl_role_t role)
{
    assert (role >= 0 && role < XXL_ROLE_COUNT);
    xxl_role_limits_t limits = { s_roles [role].sndhwm, s_roles [role].rcvhwm };
    return limits;
}

zsock_t *
xxl_transport_inproc (int type, const char *endpoint, bool bind)
{
    zsock_t *sock = zsock_new (type);
    if (!sock)
        return NULL;
    zsock_set_linger (sock, 0);
    if ((bind? zsock_bind (sock, "%s", endpoint): zsock_connect (sock, "%s", endpoint)) < 0)
        zsock_destroy (&sock);
    return sock;
}

//  --------------------------------------------------------------------
//  The wait: zmq_poll's answers with fewer of its checks

#define XXL_POLL_MAX 64

//  Sets item's revents from a ZMQ_EVENTS check; -1 when it fails
static int
s_poll_check (zmq_pollitem_t *item)
{
    int events = 0;
    size_t size = sizeof events;
    if (zmq_getsockopt (item->socket, ZMQ_EVENTS, &events, &size))
        return -1;
    item->revents = (short) (events & ZMQ_POLLIN);
    return 0;
}

//  After a check of a tracked item: quiet unless it has input
static void
s_poll_quiet (zmq_pollitem_t *item)
{
    if (!(item->events & XXL_POLL_TRACK))
        return;
    if (item->revents)
        item->events &= (short) ~XXL_POLL_QUIET;
    else
        item->events |= XXL_POLL_QUIET;
}

int
xxl_transport_poll (zmq_pollitem_t *items, int count, long timeout)
{
    if (count > XXL_POLL_MAX)
        return zmq_poll (items, count, timeout);
    struct pollfd fds [XXL_POLL_MAX];
    int ready = 0;
    //  Before the wait: every socket's own check (input already queued
    //  shows no fd), and its fd
    for (int i = 0; i < count; i++) {
        zmq_pollitem_t *item = &items [i];
        assert (!(item->events & ~(ZMQ_POLLIN | XXL_POLL_TRACK | XXL_POLL_QUIET)));
        assert (!(item->events & XXL_POLL_QUIET) || (item->events & XXL_POLL_TRACK));
        item->revents = 0;
        fds [i] = (struct pollfd) { -1, POLLIN, 0 };
        if (!(item->events & ZMQ_POLLIN))
            continue;
        if (!item->socket) {
            fds [i].fd = item->fd;
            continue;
        }
        size_t size = sizeof fds [i].fd;
        if (zmq_getsockopt (item->socket, ZMQ_FD, &fds [i].fd, &size))
            return -1;
        //  (a quiet socket: its fd tells whatever comes)
        if (item->events & XXL_POLL_QUIET)
            continue;
        if (s_poll_check (item))
            return -1;
        s_poll_quiet (item);
        ready += item->revents != 0;
    }
    int64_t until = timeout < 0? -1: zclock_mono () + timeout;
    int wait = ready? 0: timeout < 0? -1: (int) timeout;
    while (true) {
        int rc = poll (fds, (nfds_t) count, wait);
        if (rc < 0)
            return -1;                  //  (zmq_errno is errno: EINTR)
        for (int i = 0; rc > 0 && i < count; i++) {
            zmq_pollitem_t *item = &items [i];
            if (!fds [i].revents)
                continue;
            rc--;
            if (item->socket) {
                //  (a socket ready before the wait is counted already)
                if (!item->revents) {
                    if (s_poll_check (item))
                        return -1;
                    s_poll_quiet (item);
                    ready += item->revents != 0;
                }
            }
            else {
                if (fds [i].revents & POLLIN)
                    item->revents |= ZMQ_POLLIN;
                if (fds [i].revents & ~(POLLIN | POLLOUT | POLLPRI))
                    item->revents |= ZMQ_POLLERR;
                ready += item->revents != 0;
            }
        }
        if (ready || wait == 0)
            return ready;
        //  Only commands came (the fd woke, no message): the sockets whose
        //  fd did not fire are as their check left them
        if (until >= 0) {
            int64_t left = until - zclock_mono ();
            if (left <= 0)
                return 0;
            wait = (int) left;
        }
    }
}
