/*  xxl_transport.h -- every ZeroMQ socket xxl makes, and the rules it runs by.

    A socket is made for a role.  The role fixes its type, whether it binds
    or connects, and its options: queue limits (ZMQ_SNDHWM/RCVHWM), the
    frame limit, TCP keepalives (never ZMTP heartbeats), linger, reconnect
    timing, and whether a send may block.  The table of roles in
    xxl_transport.c is the one place these are written; docs/protocol.md
    (Transport) states them for peers.
    Security (CURVE keys) is applied here too, for every role at once.

    Contracts:
    - Sockets that face the network never block the engine: the scheduler's
      ROUTERs have ROUTER_MANDATORY and a zero send timeout, so a send to a
      connection that has closed fails with EHOSTUNREACH and one to a full
      queue with EAGAIN, at once; the caller decides what follows.
    - A frame over XXL_MSG_MAX_FRAME + 1 KiB makes ZeroMQ close the
      connection it came on (ZMQ_MAXMSGSIZE), on every network role.
    - The returned socket belongs to the caller (zsock_destroy).
    - Functions return NULL on failure and say why in err (when given).
*/

#ifndef XXL_TRANSPORT_H_INCLUDED
#define XXL_TRANSPORT_H_INCLUDED

#include <czmq.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    XXL_ROLE_API,               //  scheduler: ROUTER that clients dial, binds
    XXL_ROLE_AGENTS,            //  scheduler: ROUTER that agents dial, binds
    XXL_ROLE_AGENT_LINK,        //  agent: DEALER to one scheduler, connects
    XXL_ROLE_CLIENT,            //  client library: DEALER to the api, connects
    XXL_ROLE_COUNT
} xxl_role_t;

//  The queue limits of a role, in messages per connection (0: none)
typedef struct {
    int sndhwm;
    int rcvhwm;
} xxl_role_limits_t;

//  Makes a socket of a network role and binds it (scheduler roles) or
//  connects it (the others) to endpoint.  For a bind, bound (when not
//  NULL) receives the endpoint as bound (a port chosen for "tcp://*:0").
zsock_t *xxl_transport_open (xxl_role_t role, const char *endpoint,
                             char *bound, size_t boundlen, char *err, size_t errlen);

//  The same in two steps, for a caller that must act between them (attach
//  a monitor before the connection can open): a socket of the role with
//  its options set, not yet bound or connected (NULL on failure); then
//  its bind or connect (0, or -1 with err filled; the socket is kept).
zsock_t *xxl_transport_new (xxl_role_t role);
int xxl_transport_attach (zsock_t *sock, xxl_role_t role, const char *endpoint,
                          char *bound, size_t boundlen, char *err, size_t errlen);

//  Secures sock, a socket of a network role not yet attached, with CURVE.
//  own is this end's certificate (its public and secret key; the caller
//  keeps it).  A scheduler role (one that binds) becomes a CURVE server
//  in ZAP domain "xxl": the process's ZAP handler (zauth) judges each
//  handshake, so one must be running before the socket is attached.  The
//  other roles become CURVE clients that talk only to the server whose
//  public key server_key is (Z85, 40 characters).  0, or -1 with err
//  filled (a key of the wrong form, or a libzmq without CURVE).
int xxl_transport_curve (zsock_t *sock, xxl_role_t role, zcert_t *own,
                         const char *server_key, char *err, size_t errlen);

//  Whether endpoint can only be reached from this host: ipc:// and
//  inproc://, or tcp:// on 127.0.0.0/8, [::1] or localhost.  "tcp://*:N",
//  0.0.0.0, an interface name or any other host are not.
bool xxl_transport_loopback (const char *endpoint);

//  Whether a comma-separated list of endpoints is non-empty and every one
//  of them is xxl_transport_loopback's.
bool xxl_transport_all_loopback (const char *endpoints);

//  Watches sock's connection events (ZMQ_EVENT_* bits): returns a raw
//  ZeroMQ PAIR socket (the caller zmq_close()s it, before sock) that
//  receives them, or NULL.
void *xxl_transport_monitor (zsock_t *sock, int events);

//  Reads one event from such a monitor socket without waiting: 0 with
//  *event (a ZMQ_EVENT_* bit) and *value (its number: an errno, a ZAP
//  status, a ZMTP protocol error...) set, or -1 when none is waiting.
int xxl_transport_event (void *monitor, uint16_t *event, uint32_t *value);

//  The same, with the event's address into address (addrlen bytes, when
//  given): the socket's own endpoint (libzmq 4.3's monitor names no peer)
int xxl_transport_event_from (void *monitor, uint16_t *event, uint32_t *value,
                              char *address, size_t addrlen);

//  Watches a bound CURVE socket's handshakes on a thread of its own: each
//  key the ZAP handler refused is a warning "NAME: a CURVE handshake on
//  ENDPOINT refused ...", at most 10 a minute.  NULL when it cannot.
//  xxl_transport_unwatch stops it (before sock is destroyed).
zactor_t *xxl_transport_watch (zsock_t *sock, const char *name);
void xxl_transport_unwatch (zsock_t *sock, zactor_t **watch_p);

//  Whether event is a failed handshake (ZMQ_EVENT_HANDSHAKE_FAILED_*):
//  if so, why (for "the handshake with EP failed: <why>") into buf, for
//  a client that uses CURVE (curve) or not, and *final set when a retry
//  cannot mend it (the server refused the key; one end uses CURVE and
//  the other not).  ZeroMQ retries every failed handshake silently: this
//  is how a peer tells its user.
bool xxl_transport_handshake_failed (uint16_t event, uint32_t value, bool curve,
                                     char *buf, size_t buflen, bool *final);

//  The role's queue limits, as applied
xxl_role_limits_t xxl_transport_limits (xxl_role_t role);

//  Makes one end of an in-process pipe between the engine's threads:
//  type is a ZMQ_ socket type, bind true for the end that binds.  No
//  limits beyond ZeroMQ's defaults; linger 0.
zsock_t *xxl_transport_inproc (int type, const char *endpoint, bool bind);

//  zmq_poll for items that ask ZMQ_POLLIN only (sockets and plain fds),
//  whose answers it gives (revents, the count, -1 with zmq_errno EINTR on
//  a signal), but with ZeroMQ's per-socket check (ZMQ_EVENTS: a getpid and
//  a poll each) made for every socket only before it sleeps, and after
//  the wake only for the sockets whose ZMQ_FD woke it: zmq_poll checks
//  them all again (7 sockets: ~9 us on the scheduler's way to a trigger).
//  Sound by ZeroMQ's contract for ZMQ_FD: once ZMQ_EVENTS shows no input,
//  anything that comes signals the fd, and nothing here uses a socket
//  between that check and the wait.  timeout in ms, -1: none.
//
//  XXL_POLL_TRACK in a socket item's events (beside ZMQ_POLLIN) lets the
//  poll skip that socket's check before the wait when nothing used the
//  socket since the poll last checked it.  The poll then keeps
//  XXL_POLL_QUIET in the item's events: set on return when its last check
//  found no input, or when it was set already and the socket's fd did not
//  fire; cleared when the item has input (revents).  The caller MUST clear
//  XXL_POLL_QUIET after any other use of the socket (a send, a receive, a
//  ZMQ_EVENTS check): each may take the command that would have signalled
//  the fd.  An item without XXL_POLL_TRACK is checked at every call.
#define XXL_POLL_TRACK  0x1000
#define XXL_POLL_QUIET  0x2000
int xxl_transport_poll (zmq_pollitem_t *items, int count, long timeout);

#ifdef __cplusplus
}
#endif

#endif
