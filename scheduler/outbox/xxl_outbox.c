/*  xxl_outbox.c -- clients' replies: queued in a turn, sent after its commit.

    Replies are queued during a turn (engine_queue, engine_reply) and sent
    by engine_outbox_flush after the commit: nothing that depends on a
    write leaves before it is durable.  Clients' replies go through
    per-client backlogs when their connection's queue is full.  After a
    failed commit, clients' replies become 500 with the store's error
    (engine_outbox_failed).  The agents' side is runs/xxl_dispatch.c.
*/

#include "xxl_engine.h"

#include <sys/ioctl.h>
#include <linux/sockios.h>

static int s_api_try (server_t *self, zmsg_t **msg_p);
static char *s_backlog_key (zmsg_t *msg);
static void s_api_backlogs (server_t *self);

//  Outbox

//  Queues the encoder's message for rid on the api or agents socket
void
engine_queue (server_t *self, zlistx_t *outbox, const void *rid, size_t rid_size)
{
    if (outbox == self->outbox.api_out && self->outbox.api_read)
        outbox = self->outbox.api_reads;       //  (sent even if the turn's commit fails)
    size_t size;
    const void *data = xxl_enc_finish (self->enc, &size);
    zmsg_t *msg = zmsg_new ();
    zmsg_addmem (msg, rid, rid_size);
    zmsg_addmem (msg, data, size);
    zlistx_add_end (outbox, msg);
    if (outbox == self->outbox.api_out || outbox == self->outbox.api_reads)
        self->outbox.api_out_bytes += size;
}

void
engine_queue_client (server_t *self, const void *rid, size_t rid_size)
{
    engine_queue (self, self->outbox.api_out, rid, rid_size);
}

void
engine_queue_client_read (server_t *self, const void *rid, size_t rid_size)
{
    self->outbox.api_read = true;
    engine_queue (self, self->outbox.api_out, rid, rid_size);
    self->outbox.api_read = false;
}

void
engine_outbox_read (server_t *self, bool read)
{
    self->outbox.api_read = read;
}

bool
engine_outbox_reading (server_t *self)
{
    return self->outbox.api_read;
}

//  Replies to a client's request; the reply's code (and engine_reply_id's
//  id) stay in the request for its audit
void
engine_reply (server_t *self, request_t *request, int code, const char *msg)
{
    request->code = code;
    xxl_enc_reply (self->enc, xxl_msg_id (request->msg), code, msg);
    engine_queue (self, self->outbox.api_out, zframe_data (request->rid), zframe_size (request->rid));
}

//  Starts a 200 reply whose content the caller writes, then engine_reply_end
void
engine_reply_begin (server_t *self, request_t *request)
{
    request->code = XXL_OK;
    xxl_enc_reply (self->enc, xxl_msg_id (request->msg), XXL_OK, NULL);
    xxl_enc_key (self->enc, "content");
}

//  A reply over the frame limit could not be read by any client (and
//  would sit in memory): it becomes a 400 that says so
void
engine_reply_end (server_t *self, request_t *request)
{
    size_t size = xxl_enc_size (self->enc);
    if (size > XXL_MSG_MAX_FRAME) {
        char text [200];
        snprintf (text, sizeof text, "the reply would be %zu bytes, over the %d-byte frame"
                  " limit: ask for fewer items (limit, offset)", size, XXL_MSG_MAX_FRAME);
        xxl_enc_reset (self->enc);
        xxl_enc_reply (self->enc, xxl_msg_id (request->msg), XXL_BAD_REQUEST, text);
        request->code = XXL_BAD_REQUEST;
    }
    engine_queue (self, self->outbox.api_out, zframe_data (request->rid), zframe_size (request->rid));
}

void
engine_reply_id (server_t *self, request_t *request, int64_t id)
{
    request->target = id;
    engine_reply_begin (self, request);
    xxl_enc_map_begin (self->enc);
    xxl_enc_kint (self->enc, "id", id);
    xxl_enc_map_end (self->enc);
    engine_reply_end (self, request);
}

//  Sends one message of the agents' outbox: [tag][rid][frame]

//  Tries to hand [return address][reply] to ZeroMQ: the address's last
//  byte says whether a REQ delimiter goes before the reply (engine_receive).
//  Returns 0 (sent; msg destroyed), or -1 with errno EAGAIN (the
//  connection's queue is full; msg kept) or EHOSTUNREACH (gone).
static int
s_api_try (server_t *self, zmsg_t **msg_p)
{
    zframe_t *address = zmsg_first (*msg_p);
    zframe_t *body = zmsg_next (*msg_p);
    if (!address || !body || zframe_size (address) <= XXL_RETURN_EXTRA) {
        zmsg_destroy (msg_p);
        return 0;
    }
    size_t size = zframe_size (address) - XXL_RETURN_EXTRA;
    int32_t fd;
    memcpy (&fd, zframe_data (address) + size, sizeof fd);
    byte peer = zframe_data (address) [size + sizeof fd];
    bool req = peer == XXL_PEER_REQ;
    //  (a REST call's reply goes back on the HTTP side's socket)
    void *handle = zsock_resolve (peer == XXL_PEER_HTTP? self->http: self->api);
    self->sent |= peer == XXL_PEER_HTTP? XXL_SENT_HTTP: XXL_SENT_API;
    //  A large reply waits while the client's socket still holds unsent
    //  bytes: a client that does not read them costs its kernel buffer and
    //  its backlog, not a growing ZeroMQ queue (which counts messages, not
    //  bytes).  The fd is a hint: the connection may have closed since.
    int queued = 0;
    if (zframe_size (body) >= XXL_API_LARGE && fd >= 0
    &&  ioctl (fd, SIOCOUTQ, &queued) == 0 && queued > XXL_API_LARGE) {
        errno = EAGAIN;
        return -1;
    }
    //  (ROUTER_MANDATORY: a full or absent peer fails the first frame, and
    //  then nothing of the message was taken)
    if (zmq_send (handle, zframe_data (address), size, ZMQ_SNDMORE) < 0)
        return -1;
    if (req)
        zmq_send (handle, "", 0, ZMQ_SNDMORE);
    zmq_send (handle, zframe_data (body), zframe_size (body), 0);
    zmsg_destroy (msg_p);
    return 0;
}

static char *
s_backlog_key (zmsg_t *msg)
{
    zframe_t *address = zmsg_first (msg);
    return zframe_strhex (address);
}

//  Sends a client's reply, after any backlog it has.  A reply that finds
//  the connection's queue full (its ZeroMQ queue limit) waits in the
//  client's backlog, which s_api_backlogs sends from at each turn; past
//  XXL_API_BACKLOG bytes for one client (or XXL_API_BACKLOGS for all)
//  replies are dropped and logged.  Destroys msg.
void
engine_api_send (server_t *self, zmsg_t *msg)
{
    char *key = zhashx_size (self->outbox.backlogs)? s_backlog_key (msg): NULL;
    backlog_t *backlog = key? (backlog_t *) zhashx_lookup (self->outbox.backlogs, key): NULL;
    if (!backlog) {
        if (s_api_try (self, &msg) == 0 || zmq_errno () != EAGAIN) {
            zmsg_destroy (&msg);        //  (sent, or the client has gone)
            zstr_free (&key);
            return;
        }
        if (!key)
            key = s_backlog_key (msg);
        backlog = (backlog_t *) zmalloc (sizeof (backlog_t));
        backlog->msgs = zlistx_new ();
        zlistx_set_destructor (backlog->msgs, engine_msg_destroy);
        zhashx_insert (self->outbox.backlogs, key, backlog);
    }
    size_t size = zmsg_content_size (msg);
    if (backlog->bytes + size > XXL_API_BACKLOG
    ||  self->outbox.backlog_bytes + size > XXL_API_BACKLOGS) {
        engine_warn_limited (&self->outbox.log_api_send, "server: a reply was dropped: the client has not"
                             " read %zu bytes of replies", backlog->bytes);
        zmsg_destroy (&msg);
    }
    else {
        zlistx_add_end (backlog->msgs, msg);
        backlog->bytes += size;
        self->outbox.backlog_bytes += size;
    }
    zstr_free (&key);
}

//  Sends what the clients' backlogs hold, oldest first, as far as their
//  queues take it
static void
s_api_backlogs (server_t *self)
{
    zlistx_t *done = zlistx_new ();
    for (backlog_t *backlog = (backlog_t *) zhashx_first (self->outbox.backlogs); backlog;
         backlog = (backlog_t *) zhashx_next (self->outbox.backlogs)) {
        zmsg_t *msg;
        while ((msg = (zmsg_t *) zlistx_first (backlog->msgs))) {
            size_t size = zmsg_content_size (msg);
            zlistx_detach_cur (backlog->msgs);
            if (s_api_try (self, &msg) && zmq_errno () == EAGAIN) {
                zlistx_add_start (backlog->msgs, msg);
                break;
            }
            zmsg_destroy (&msg);        //  (sent, or the client has gone)
            backlog->bytes -= size;
            self->outbox.backlog_bytes -= size;
        }
        if (zlistx_size (backlog->msgs) == 0)
            zlistx_add_end (done, (void *) zhashx_cursor (self->outbox.backlogs));
    }
    for (const char *key = (const char *) zlistx_first (done); key;
         key = (const char *) zlistx_next (done))
        zhashx_delete (self->outbox.backlogs, key);
    zlistx_destroy (&done);
}

void
engine_backlog_destroy (void **item)
{
    backlog_t *backlog = (backlog_t *) *item;
    zlistx_destroy (&backlog->msgs);
    free (backlog);
    *item = NULL;
}

//  After a failed commit: every reply queued for a client this turn
//  becomes a 500 with text (replies to reads stand)
void
engine_outbox_failed (server_t *self, const char *text)
{
    zlistx_t *failed = zlistx_new ();
    zlistx_set_destructor (failed, engine_msg_destroy);
    zmsg_t *msg;
    while ((msg = (zmsg_t *) zlistx_detach (self->outbox.api_out, NULL))) {
        zframe_t *rid = zmsg_pop (msg);
        zframe_t *body = zmsg_pop (msg);
        uint64_t id = 0;
        char reason [64];
        xxl_msg_t *reply = body? xxl_msg_decode (zframe_data (body), zframe_size (body), &id,
                                                 reason, sizeof reason): NULL;
        xxl_msg_destroy (&reply);
        if (rid && id) {
            xxl_enc_reply (self->enc, id, XXL_FAILURE, text);
            engine_queue (self, failed, zframe_data (rid), zframe_size (rid));
        }
        zframe_destroy (&rid);
        zframe_destroy (&body);
        zmsg_destroy (&msg);
    }
    while ((msg = (zmsg_t *) zlistx_detach (failed, NULL)))
        zlistx_add_end (self->outbox.api_out, msg);
    zlistx_destroy (&failed);
}

//  Sends the turn's replies to clients (after the RUNs: a trigger's run
//  starts sooner), those waiting in backlogs first
void
engine_outbox_flush (server_t *self)
{
    zmsg_t *msg;
    if (zhashx_size (self->outbox.backlogs))
        s_api_backlogs (self);
    while ((msg = (zmsg_t *) zlistx_detach (self->outbox.api_out, NULL)))
        engine_api_send (self, msg);
    while ((msg = (zmsg_t *) zlistx_detach (self->outbox.api_reads, NULL)))
        engine_api_send (self, msg);
    self->outbox.api_out_bytes = 0;
}

//  The outbox's state, made at the actor's start and freed at its stop
void
engine_outbox_start (server_t *self)
{
    self->outbox.api_out = zlistx_new ();
    zlistx_set_destructor (self->outbox.api_out, engine_msg_destroy);
    self->outbox.api_reads = zlistx_new ();
    zlistx_set_destructor (self->outbox.api_reads, engine_msg_destroy);
    self->outbox.backlogs = zhashx_new ();
    zhashx_set_destructor (self->outbox.backlogs, engine_backlog_destroy);
}

void
engine_outbox_stop (server_t *self)
{
    zhashx_destroy (&self->outbox.backlogs);
    zlistx_destroy (&self->outbox.api_out);
    zlistx_destroy (&self->outbox.api_reads);
}
