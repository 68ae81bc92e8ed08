/*  xxl_client.c -- request/reply client for the scheduler's api socket.
*/

#include "xxl/client.h"
#include "xxl_transport.h"

#include <czmq.h>

struct _xxl_client_t {
    zsock_t *dealer;
    xxl_enc_t *enc;
    char *token;
    uint64_t next_id;
    uint64_t pending_id;
    int timeout_ms;
};

xxl_client_t *
xxl_client_new (const char *endpoint, const char *token)
{
    if (!endpoint || !*endpoint)
        return NULL;
    xxl_client_t *self = (xxl_client_t *) zmalloc (sizeof (xxl_client_t));
    self->dealer = xxl_transport_open (XXL_ROLE_CLIENT, endpoint, NULL, 0, NULL, 0);
    self->enc = xxl_enc_new ();
    if (!self->dealer || !self->enc) {
        xxl_client_destroy (&self);
        return NULL;
    }
    self->token = token && *token? strdup (token): NULL;
    self->next_id = (uint64_t) zclock_time () * 1000 + (uint64_t) (random () % 1000);
    self->timeout_ms = 5000;
    return self;
}

void
xxl_client_destroy (xxl_client_t **self_p)
{
    if (self_p && *self_p) {
        xxl_client_t *self = *self_p;
        zsock_destroy (&self->dealer);
        xxl_enc_destroy (&self->enc);
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

xxl_msg_t *
xxl_client_call (xxl_client_t *self, char *err, size_t errlen)
{
    size_t size;
    const void *data = xxl_enc_finish (self->enc, &size);
    void *handle = zsock_resolve (self->dealer);
    if (zmq_send (handle, data, size, 0) < 0) {
        snprintf (err, errlen, "cannot send request: %s", zmq_strerror (zmq_errno ()));
        return NULL;
    }
    int64_t deadline = zclock_mono () + self->timeout_ms;
    while (true) {
        int64_t left = deadline - zclock_mono ();
        if (left <= 0) {
            snprintf (err, errlen, "no reply from the scheduler within %d ms", self->timeout_ms);
            return NULL;
        }
        zmq_pollitem_t item = { handle, 0, ZMQ_POLLIN, 0 };
        int rc = zmq_poll (&item, 1, (long) left);
        if (rc < 0) {
            snprintf (err, errlen, "interrupted");
            return NULL;
        }
        if (rc == 0)
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
