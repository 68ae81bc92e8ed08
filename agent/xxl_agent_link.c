/*  xxl_agent_link.c -- the agent's links to its schedulers.

    One DEALER per scheduler endpoint (xxl_transport, role
    XXL_ROLE_AGENT_LINK) with a socket monitor.  Owns each link_t's socket
    and state (up, connected, broken, its clock, its REGISTER in flight)
    and the encoder's framing of what the agent sends: every message
    starts in xxl_agent_request or xxl_agent_reply_begin, so every one
    carries the access token, and goes out through xxl_agent_send.
    REGISTER (also the heartbeat) is built here.  MUST NOT decide what a
    request means or touch the CALLBACK queue: it reads messages for the
    agent's loop (xxl_agent.c) to handle and tells it when a link lost its
    connection or was replaced, and it resends nothing itself.  Called by
    xxl_agent.c and xxl_agent_callback.c; calls neither.
*/

#include "xxl_agent_link.h"
#include "xxl_handlers.h"
#include "xxl_transport.h"

#include <inttypes.h>

//  Sends the encoder's message on a link; -1 when it cannot go now: the
//  link is down or closing (ZMQ_IMMEDIATE), or its queue is full
//  (xxl_transport: the scheduler has not read 100,000 of our messages).
//  A REGISTER or CALLBACK that cannot go is logged each time; its caller
//  sends it again (the next beat; the results stay in the spool).  A
//  REPLY is dropped, and the scheduler's wait for it ends as for a lost
//  connection: the first of a row is logged, and their count once a send
//  on the link works again.
int
xxl_agent_send (agent_t *self, link_t *link)
{
    size_t size;
    const void *data = xxl_enc_finish (self->enc, &size);
    if (zmq_send (zsock_resolve (link->dealer), data, size, ZMQ_DONTWAIT) < 0) {
        if (strneq (self->sending, "REPLY"))
            zsys_warning ("agent: cannot send %s to %s now (%s); it goes again later",
                          self->sending, link->endpoint, zmq_strerror (zmq_errno ()));
        else
        if (link->replies_dropped++ == 0)
            zsys_warning ("agent: cannot send a REPLY to %s (%s): replies are dropped until"
                          " the link is up and its queue has room", link->endpoint,
                          zmq_strerror (zmq_errno ()));
        return -1;
    }
    if (link->replies_dropped) {
        zsys_warning ("agent: sending to %s again; %zu REPLY(s) were dropped", link->endpoint,
                      link->replies_dropped);
        link->replies_dropped = 0;
    }
    return 0;
}

//  Starts a message of ours in the encoder: a request, or with reply the
//  REPLY to request id, with its code and msg.  Every message the agent
//  sends starts here, so every one carries the access token.
static void
s_message (agent_t *self, const char *type, uint64_t id, bool reply, int code, const char *msg)
{
    if (reply)
        xxl_enc_reply (self->enc, id, code, msg);
    else
        xxl_enc_request (self->enc, type, id);
    self->sending = reply? "REPLY": type;
    if (self->config.access_token && *self->config.access_token)
        xxl_enc_kstr (self->enc, "accessToken", self->config.access_token);
}

void
xxl_agent_request (agent_t *self, const char *type, uint64_t id)
{
    s_message (self, type, id, false, 0, NULL);
}

//  Starts the REPLY to request id, for the caller to add content to
void
xxl_agent_reply_begin (agent_t *self, uint64_t id, int code, const char *msg)
{
    s_message (self, NULL, id, true, code, msg);
}

void
xxl_agent_reply (agent_t *self, link_t *link, uint64_t id, int code, const char *msg)
{
    xxl_agent_reply_begin (self, id, code, msg);
    xxl_agent_send (self, link);
}

void
xxl_agent_register (agent_t *self, link_t *link, int remove)
{
    uint64_t id = ++self->next_id;
    xxl_agent_request (self, remove? "UNREGISTER": "REGISTER", id);
    xxl_enc_kstr (self->enc, "registryGroup", "EXECUTOR");
    xxl_enc_kstr (self->enc, "registryKey", self->config.app);
    xxl_enc_kstr (self->enc, "registryValue", self->address);
    if (!remove) {
        char *names = xxl_handlers_names (self->handlers);
        xxl_enc_kstr (self->enc, "handlers", names? names: "");
        if (self->config.run_lease_s > 0)
            xxl_enc_kint (self->enc, "runLease", self->config.run_lease_s);
        if (self->config.tags && *self->config.tags)
            xxl_enc_kstr (self->enc, "tags", self->config.tags);
        //  (the scheduler moves its log ids past it: a store restored from
        //  a backup never hands out again an id this agent accepted)
        int64_t accepted_max = xxl_journal_accepted_max (self->journal);
        if (accepted_max > 0)
            xxl_enc_kint (self->enc, "acceptedMax", accepted_max);
        if (self->config.run_batch > 1)
            xxl_enc_kint (self->enc, "runBatch", self->config.run_batch < XXL_RUN_BATCH_MAX
                                                 ? self->config.run_batch: XXL_RUN_BATCH_MAX);
        free (self->handlers_sent);
        self->handlers_sent = names;
        //  Its own figures, for the scheduler's /metrics (optional fields)
        size_t active = xxl_executor_active (self->executor);
        size_t pending = xxl_executor_pending (self->executor);
        xxl_enc_kint (self->enc, "running", (int64_t) active);
        xxl_enc_kint (self->enc, "queued", (int64_t) (pending > active? pending - active: 0));
        xxl_enc_kint (self->enc, "spooled", (int64_t) xxl_spool_size (self->spool));
        xxl_enc_kint (self->enc, "lastCode", self->last_code);
        link->register_id = id;
        link->register_sent = zclock_mono ();
        link->register_sent_boot = xxl_agent_boot_ms ();
        link->register_sent_real = zclock_time ();
    }
    xxl_agent_send (self, link);
}

//  The scheduler's clock, from the `now` (ms) of its answer to our
//  REGISTER: offset = now - the middle of our send and receive, on our
//  monotonic clock (for expireTime: a step of either wall clock changes
//  nothing) and on our wall clock (for startTime).  An answer that took
//  longer than XXL_CLOCK_RTT_MAX (a busy or frozen peer, or this process
//  frozen) is not trusted; the last trusted one counts.
void
xxl_agent_link_clock (link_t *link, xxl_msg_t *msg)
{
    const msgpack_object *content = xxl_msg_get (xxl_msg_root (msg), "content");
    const msgpack_object *now = content && content->type == MSGPACK_OBJECT_MAP
                              ? xxl_msg_get (content, "now"): NULL;
    if (!now || now->type != MSGPACK_OBJECT_POSITIVE_INTEGER || now->via.u64 > INT64_MAX)
        return;
    int64_t rtt = xxl_agent_boot_ms () - link->register_sent_boot;
    if (rtt < 0 || rtt > XXL_CLOCK_RTT_MAX)
        return;
    int64_t offset = (int64_t) now->via.u64 - (link->register_sent_boot + rtt / 2);
    int64_t wall = (int64_t) now->via.u64 - (link->register_sent_real + rtt / 2);
    if (wall > 1000 || wall < -1000) {
        if (link->wall_offset / 1000 != wall / 1000)
            zsys_info ("agent: %s's clock is %" PRId64 " ms %s ours", link->endpoint,
                       wall < 0? -wall: wall, wall < 0? "behind": "ahead of");
    }
    link->clock_offset = offset;
    link->wall_offset = wall;
}

//  Reads the next message waiting on link's DEALER: 0 with *msg_p set (the
//  caller destroys it), 0 with *msg_p NULL when a message was dropped (not
//  one frame: logged; does not decode: logged, and answered 400 when its
//  id could be read), -1 when nothing waits.  Each message read counts
//  as hearing from the link.
int
xxl_agent_link_recv (agent_t *self, link_t *link, xxl_msg_t **msg_p)
{
    *msg_p = NULL;
    void *handle = zsock_resolve (link->dealer);
    zmq_msg_t frame;
    zmq_msg_init (&frame);
    if (zmq_msg_recv (&frame, handle, ZMQ_DONTWAIT) < 0) {
        zmq_msg_close (&frame);
        return -1;
    }
    link->heard = zclock_mono ();
    char reason [256];
    uint64_t id = 0;
    xxl_msg_t *msg = xxl_msg_decode (zmq_msg_data (&frame), zmq_msg_size (&frame),
                                     &id, reason, sizeof reason);
    int more = zmq_msg_more (&frame);
    zmq_msg_close (&frame);
    if (more) {
        //  Not one frame: drop the rest of it
        zsys_warning ("agent: multi-frame message from %s dropped", link->endpoint);
        while (more) {
            zmq_msg_init (&frame);
            if (zmq_msg_recv (&frame, handle, ZMQ_DONTWAIT) < 0)
                more = 0;
            else
                more = zmq_msg_more (&frame);
            zmq_msg_close (&frame);
        }
        xxl_msg_destroy (&msg);
        return 0;
    }
    if (!msg) {
        zsys_warning ("agent: bad message from %s: %s", link->endpoint, reason);
        if (id)
            xxl_agent_reply (self, link, id, XXL_BAD_REQUEST, reason);
        return 0;
    }
    *msg_p = msg;
    return 0;
}

//  ZMQ_EVENTS takes the commands waiting for the socket (one may be the
//  wakeup of its fd): sound because the DEALERs are not XXL_POLL_TRACK
//  items, checked by xxl_transport_poll before every wait
bool
xxl_agent_link_waiting (link_t *link)
{
    int events = 0;
    size_t size = sizeof events;
    if (zmq_getsockopt (zsock_resolve (link->dealer), ZMQ_EVENTS, &events, &size)
    ||  !(events & ZMQ_POLLIN))
        return false;
    link->heard = zclock_mono ();
    return true;
}

//  A failed handshake on link: logged at once the first time, then at
//  most once every XXL_HANDSHAKE_LOG ms with the count since
static void
s_handshake_failed (agent_t *self, link_t *link, uint16_t event, uint32_t value)
{
    link->handshakes_failed++;
    int64_t now = zclock_mono ();
    if (link->handshake_logged && now - link->handshake_logged < XXL_HANDSHAKE_LOG)
        return;
    char why [256];
    bool final;
    bool curve = self->cert != NULL;
    xxl_transport_handshake_failed (event, value, curve, why, sizeof why, &final);
    size_t used = strlen (why);
    if (curve && event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL)
        snprintf (why + used, sizeof why - used, "; nothing from it is taken");
    if (link->handshakes_failed > 1)
        zsys_error ("agent: %zu handshakes with %s failed in the last %d s; the last: %s",
                    link->handshakes_failed, link->endpoint, XXL_HANDSHAKE_LOG / 1000, why);
    else
        zsys_error ("agent: the %shandshake with %s failed: %s", curve? "CURVE ": "",
                    link->endpoint, why);
    link->handshakes_failed = 0;
    link->handshake_logged = now;
}

//  A socket event: re-register at once when a connection comes up (after
//  the ZMTP handshake: with ZMQ_IMMEDIATE nothing can be sent before); a
//  failed handshake is logged.  A protocol or authentication failure,
//  during the handshake or after it (a message that does not decrypt),
//  marks the link broken: libzmq 4.3.4 never reconnects after one, or
//  (a CURVE message that does not decrypt, with this monitor listening)
//  leaves the connection open and reads nothing more from it.  A broken
//  link is replaced at the next beat (xxl_agent_link_replace).  Returns
//  true when the link lost its connection (its CALLBACK batches in flight
//  are for the caller to send again elsewhere).
bool
xxl_agent_link_events (agent_t *self, link_t *link)
{
    bool lost = false;
    uint16_t event;
    uint32_t value;
    while (xxl_transport_event (link->monitor, &event, &value) == 0) {
        if (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
            link->handshakes_failed = 0;
            link->handshake_logged = 0;
            link->connected = true;
            link->heard = zclock_mono ();
            xxl_agent_register (self, link, self->draining);    //  stopping: goodbye again
        }
        else
        if (event & (ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
                     | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)) {
            if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL && link->connected) {
                //  Past the handshake: a message that does not decrypt,
                //  or one that breaks ZMTP
                if (!link->broken_open)
                    zsys_error ("agent: a message from %s broke its connection (ZMTP"
                                " protocol error 0x%x)", link->endpoint, value);
                link->broken_open = true;
            }
            else
                s_handshake_failed (self, link, event, value);
            if (event != ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL)
                link->broken = true;
        }
        else
        if (event == ZMQ_EVENT_DISCONNECTED) {
            if (link->up)
                zsys_warning ("agent: lost %s; reconnecting", link->endpoint);
            link->up = false;
            link->connected = false;
            lost = true;
        }
    }
    return lost;
}

//  Closes a link's socket and its monitor; both are NULL after
void
xxl_agent_link_close (zsock_t **dealer_p, void **monitor_p)
{
    if (*monitor_p) {
        if (*dealer_p)
            zmq_socket_monitor (zsock_resolve (*dealer_p), NULL, 0);
        zmq_close (*monitor_p);
        *monitor_p = NULL;
    }
    zsock_destroy (dealer_p);
}

//  Makes a link's socket to endpoint (xxl_transport, role
//  XXL_ROLE_AGENT_LINK) with its monitor, which tells of each new
//  connection (it must REGISTER) and of failed handshakes.  0, or -1 with
//  why set and nothing left open
int
xxl_agent_link_open (agent_t *self, const char *endpoint, zsock_t **dealer_p, void **monitor_p,
             char *why, size_t whylen)
{
    char reason [256] = "";
    zsock_t *dealer = xxl_transport_new (XXL_ROLE_AGENT_LINK);
    if (dealer && self->cert
    &&  xxl_transport_curve (dealer, XXL_ROLE_AGENT_LINK, self->cert, self->scheduler_key,
                             reason, sizeof reason)) {
        snprintf (why, whylen, "cannot secure the link to '%s': %s", endpoint, reason);
        zsock_destroy (&dealer);
        return -1;
    }
    void *monitor = dealer
                  ? xxl_transport_monitor (dealer, ZMQ_EVENT_HANDSHAKE_SUCCEEDED
                                                   | ZMQ_EVENT_DISCONNECTED
                                                   | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL
                                                   | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
                                                   | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
                  : NULL;
    if (!dealer || !monitor
    ||  xxl_transport_attach (dealer, XXL_ROLE_AGENT_LINK, endpoint, NULL, 0,
                              reason, sizeof reason)) {
        if (!dealer || !monitor)
            snprintf (reason, sizeof reason, "%s", zmq_strerror (zmq_errno ()));
        snprintf (why, whylen, "invalid scheduler endpoint '%s' (%s)", endpoint, reason);
        xxl_agent_link_close (&dealer, &monitor);
        return -1;
    }
    *dealer_p = dealer;
    *monitor_p = monitor;
    return 0;
}

//  Replaces a link's socket with a new one to the same endpoint.  The old
//  one goes at once (linger 0) with its connection and what it had not
//  sent: a REGISTER or CALLBACK goes again (a batch in flight on it at
//  once, elsewhere if another scheduler is up), a REPLY is lost as on a
//  lost connection.  -1 (logged) when no new socket can be made: the old
//  one stays, for another try at the next beat.  On 0 its CALLBACK
//  batches in flight are for the caller to send again.
int
xxl_agent_link_replace (agent_t *self, link_t *link)
{
    zsock_t *dealer = NULL;
    void *monitor = NULL;
    char why [512];
    if (xxl_agent_link_open (self, link->endpoint, &dealer, &monitor, why, sizeof why)) {
        zsys_error ("agent: cannot replace the link to %s: %s", link->endpoint, why);
        return -1;
    }
    if (link->broken_open)
        zsys_warning ("agent: the connection to %s failed for good; connecting again",
                      link->endpoint);
    else
    if (!link->broken)
        zsys_warning ("agent: nothing from %s for %" PRId64 " s; connecting again",
                      link->endpoint, (zclock_mono () - link->heard) / 1000);
    zsock_set_linger (link->dealer, 0);
    xxl_agent_link_close (&link->dealer, &link->monitor);
    link->dealer = dealer;
    link->monitor = monitor;
    link->monitor_quiet = false;
    link->up = false;
    link->connected = false;
    link->broken = false;
    link->broken_open = false;
    link->register_id = 0;
    link->heard = zclock_mono ();
    return 0;
}

int
xxl_agent_links_open (agent_t *self, const char *schedulers)
{
    assert (!self->links && self->link_count == 0);
    char why [512];
    char *list = strdup (schedulers), *save = NULL;
    size_t alloc = 1;
    for (const char *p = list; *p; p++)
        alloc += *p == ',';
    self->links = (link_t *) calloc (alloc, sizeof (link_t));
    bool warned = false;                //  of a plain-text link off this host
    for (char *token = strtok_r (list, ",", &save); token; token = strtok_r (NULL, ",", &save)) {
        while (*token == ' ')
            token++;
        if (!*token)
            continue;
        link_t *link = &self->links [self->link_count];
        link->endpoint = strdup (token);
        self->link_count++;
        if (!link->endpoint
        ||  xxl_agent_link_open (self, token, &link->dealer, &link->monitor, why, sizeof why)) {
            zsys_error ("agent: %s", link->endpoint? why: "out of memory");
            free (list);
            return -1;
        }
        link->heard = zclock_mono ();
        link->clock_offset = zclock_time () - xxl_agent_boot_ms ();
        if (!self->cert && !xxl_transport_loopback (token) && !warned) {
            zsys_warning ("agent: %s is not a loopback endpoint and this agent has no keys:"
                          " its link is plain text that anyone on the way can read or forge"
                          " (give --cert and --scheduler-key)", token);
            warned = true;
        }
    }
    free (list);
    return 0;
}

void
xxl_agent_links_close (agent_t *self)
{
    for (size_t i = 0; i < self->link_count; i++) {
        link_t *link = &self->links [i];
        xxl_agent_link_close (&link->dealer, &link->monitor);
        free (link->endpoint);
    }
    free (self->links);
    self->links = NULL;
    self->link_count = 0;
}
