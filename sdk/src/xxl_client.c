/*  xxl_client.c -- request/reply client for the scheduler's api socket.

    A socket monitor watches the handshakes: ZeroMQ retries a refused one
    silently, so without it a refused key or a scheduler of another key
    would look like a scheduler that does not answer.  A refusal that
    cannot change by retrying (the scheduler's ZAP handler refused the
    key, or one end speaks CURVE and the other not) ends the call at once;
    any other failed handshake is the reason given when the reply times
    out.
*/

#include "xxl/client.h"
#include "xxl_cert.h"
#include "xxl_transport.h"

#include <czmq.h>

struct _xxl_client_t {
    zsock_t *dealer;
    void *monitor;                      //  PAIR: the dealer's handshake events
    bool curve;                         //  a CURVE client
    char *endpoint;
    char failure [512];                 //  the last handshake failure, "" none
    xxl_enc_t *enc;
    char *token;
    uint64_t next_id;
    uint64_t pending_id;
    int timeout_ms;
};

//  The events that tell how a connection's handshake went
#define S_HANDSHAKE_EVENTS (ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL \
                            | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)

//  A client for endpoint; with own, a CURVE client of the server whose
//  public key server_key is.  NULL with the reason in err.
static xxl_client_t *
s_client_new (const char *endpoint, const char *token, zcert_t *own, const char *server_key,
              char *err, size_t errlen)
{
    if (!endpoint || !*endpoint) {
        snprintf (err, errlen, "no endpoint given");
        return NULL;
    }
    xxl_client_t *self = (xxl_client_t *) zmalloc (sizeof (xxl_client_t));
    self->dealer = xxl_transport_new (XXL_ROLE_CLIENT);
    self->enc = xxl_enc_new ();
    self->endpoint = strdup (endpoint);
    if (!self->dealer || !self->enc) {
        snprintf (err, errlen, "cannot make the client's socket: %s", zmq_strerror (zmq_errno ()));
        xxl_client_destroy (&self);
        return NULL;
    }
    self->curve = own != NULL;
    if (own && xxl_transport_curve (self->dealer, XXL_ROLE_CLIENT, own, server_key,
                                    err, errlen)) {
        xxl_client_destroy (&self);
        return NULL;
    }
    //  Watched before it connects, so no handshake goes unseen
    self->monitor = xxl_transport_monitor (self->dealer, S_HANDSHAKE_EVENTS);
    if (!self->monitor) {
        snprintf (err, errlen, "cannot watch the client's socket: %s", zmq_strerror (zmq_errno ()));
        xxl_client_destroy (&self);
        return NULL;
    }
    if (xxl_transport_attach (self->dealer, XXL_ROLE_CLIENT, endpoint, NULL, 0, err, errlen)) {
        xxl_client_destroy (&self);
        return NULL;
    }
    self->token = token && *token? strdup (token): NULL;
    self->next_id = (uint64_t) zclock_time () * 1000 + (uint64_t) (random () % 1000);
    self->timeout_ms = 5000;
    return self;
}

xxl_client_t *
xxl_client_new (const char *endpoint, const char *token)
{
    char err [256];
    return s_client_new (endpoint, token, NULL, NULL, err, sizeof err);
}

xxl_client_t *
xxl_client_new_curve (const char *endpoint, const char *token, const char *cert,
                      const char *scheduler_key, char *err, size_t errlen)
{
    char server_key [41];
    char reason [512];
    if (!cert || !*cert || !scheduler_key || !*scheduler_key) {
        snprintf (err, errlen, "a CURVE client needs its certificate and the scheduler's");
        return NULL;
    }
    zcert_t *own = xxl_cert_load_secret (cert, reason, sizeof reason);
    if (!own) {
        snprintf (err, errlen, "client certificate: %s", reason);
        return NULL;
    }
    xxl_client_t *self = NULL;
    if (xxl_cert_load_public (scheduler_key, server_key, reason, sizeof reason))
        snprintf (err, errlen, "scheduler key: %s", reason);
    else
        self = s_client_new (endpoint, token, own, server_key, err, errlen);
    zcert_destroy (&own);
    return self;
}

void
xxl_client_destroy (xxl_client_t **self_p)
{
    if (self_p && *self_p) {
        xxl_client_t *self = *self_p;
        if (self->monitor) {
            zmq_socket_monitor (zsock_resolve (self->dealer), NULL, 0);
            zmq_close (self->monitor);
        }
        zsock_destroy (&self->dealer);
        xxl_enc_destroy (&self->enc);
        free (self->endpoint);
        free (self->token);
        free (self);
        *self_p = NULL;
    }
}

void
xxl_client_set_timeout (xxl_client_t *self, int timeout_ms)
{
    self->timeout_ms = timeout_ms > 0? timeout_ms: 5000;
}

xxl_enc_t *
xxl_client_request (xxl_client_t *self, const char *type)
{
    self->pending_id = ++self->next_id;
    xxl_enc_request (self->enc, type, self->pending_id);
    if (self->token)
        xxl_enc_kstr (self->enc, "accessToken", self->token);
    return self->enc;
}

//  Reads the monitor's events; returns true when a handshake failed in a
//  way a retry cannot mend (self->failure says how)
static bool
s_client_events (xxl_client_t *self)
{
    bool final = false;
    uint16_t event;
    uint32_t value;
    while (xxl_transport_event (self->monitor, &event, &value) == 0) {
        char why [200];
        bool now;
        if (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED)
            self->failure [0] = 0;
        else
        if (xxl_transport_handshake_failed (event, value, self->curve, why, sizeof why, &now)) {
            snprintf (self->failure, sizeof self->failure, "the %shandshake with %s failed: %s",
                      self->curve? "CURVE ": "", self->endpoint, why);
            final = final || now;
        }
    }
    return final;
}

xxl_msg_t *
xxl_client_call (xxl_client_t *self, char *err, size_t errlen)
{
    size_t size;
    const void *data = xxl_enc_finish (self->enc, &size);
    void *handle = zsock_resolve (self->dealer);
    if (s_client_events (self)) {
        snprintf (err, errlen, "%s", self->failure);
        return NULL;
    }
    if (zmq_send (handle, data, size, 0) < 0) {
        if (*self->failure)
            snprintf (err, errlen, "cannot send request: %s", self->failure);
        else
            snprintf (err, errlen, "cannot send request: %s", zmq_strerror (zmq_errno ()));
        return NULL;
    }
    int64_t deadline = zclock_mono () + self->timeout_ms;
    while (true) {
        int64_t left = deadline - zclock_mono ();
        if (left <= 0) {
            if (*self->failure)
                snprintf (err, errlen, "%s", self->failure);
            else
                snprintf (err, errlen, "no reply from the scheduler within %d ms",
                          self->timeout_ms);
            return NULL;
        }
        zmq_pollitem_t items [] = {
            { handle, 0, ZMQ_POLLIN, 0 }, { self->monitor, 0, ZMQ_POLLIN, 0 }
        };
        int rc = zmq_poll (items, 2, (long) left);
        if (rc < 0) {
            snprintf (err, errlen, "interrupted");
            return NULL;
        }
        if ((items [1].revents & ZMQ_POLLIN) && s_client_events (self)) {
            snprintf (err, errlen, "%s", self->failure);
            return NULL;
        }
        if (!(items [0].revents & ZMQ_POLLIN))
            continue;
        zmq_msg_t frame;
        zmq_msg_init (&frame);
        if (zmq_msg_recv (&frame, handle, 0) < 0) {
            zmq_msg_close (&frame);
            continue;
        }
        uint64_t id = 0;
        xxl_msg_t *reply = xxl_msg_decode (zmq_msg_data (&frame), zmq_msg_size (&frame),
                                           &id, err, errlen);
        zmq_msg_close (&frame);
        if (!reply && (id == 0 || id == self->pending_id)) {
            //  Ours, or unattributable: say what was wrong with it
            char reason [256];
            snprintf (reason, sizeof reason, "%s", err);
            snprintf (err, errlen, "malformed reply from the scheduler: %s", reason);
            return NULL;
        }
        if (id != self->pending_id) {
            xxl_msg_destroy (&reply);   //  stale reply to an earlier request
            continue;
        }
        return reply;
    }
}

int
xxl_reply_code (xxl_msg_t *reply)
{
    const msgpack_object *code = xxl_msg_get (xxl_msg_root (reply), "code");
    if (code && code->type == MSGPACK_OBJECT_POSITIVE_INTEGER && code->via.u64 < 1000)
        return (int) code->via.u64;
    return XXL_FAILURE;
}

const char *
xxl_reply_msg (xxl_msg_t *reply)
{
    const char *msg = xxl_msg_str (reply, NULL, "msg", 0, XXL_MSG_MAX_STR, "");
    return msg? msg: "";
}

const msgpack_object *
xxl_reply_content (xxl_msg_t *reply)
{
    return xxl_msg_get (xxl_msg_root (reply), "content");
}
