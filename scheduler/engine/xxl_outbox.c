/*  xxl_outbox.c -- what leaves after a turn's commit, and what a failed commit undoes.

    Messages are queued during a turn (engine_queue, engine_queue_agent)
    and sent by engine_flush after the commit: nothing that depends on a
    write leaves before it is durable.  Agents' messages carry a tag naming
    the request or batch they belong to, so a send that fails (the agent's
    connection closed, or its queue is full) fails that request at once.
    Clients' replies go through per-client backlogs when their connection's
    queue is full.  After a failed commit, clients' replies become 500 with
    the store's error and agents' messages are dropped (their rows go again).
*/

#include "xxl_engine.h"

#include <sys/ioctl.h>
#include <linux/sockios.h>

static void s_agent_gone (server_t *self, uint64_t tag, zframe_t *rid);
static void s_run_leaves (server_t *self, uint64_t tag, zframe_t *body);
static int s_api_try (server_t *self, zmsg_t **msg_p);
static char *s_backlog_key (zmsg_t *msg);
static void s_api_backlogs (server_t *self);
static void s_zmq_free (void *data, void *hint);

//  Outbox

//  Queues the encoder's message for rid on the api or agents socket
void
engine_queue (server_t *self, zlistx_t *outbox, const void *rid, size_t rid_size)
{
    if (outbox == self->outbox.api_out && self->api_state.api_read)
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

//  Queues the encoder's message for an agent; pending_id (0: none) names
//  the request it carries, so that a send the agent can no longer receive
//  fails that request at once
void
engine_queue_agent_to (server_t *self, const void *rid, size_t rid_size, uint64_t pending_id,
                       bool always)
{
    //  A batch of RUNs filling for this agent goes first: order is kept
    run_batch_t *batch = (run_batch_t *) zlistx_first (self->runs.open_batches);
    while (batch) {
        run_batch_t *next = (run_batch_t *) zlistx_next (self->runs.open_batches);
        if (batch->rid_size == rid_size && memcmp (batch->rid, rid, rid_size) == 0)
            engine_batch_close (self, batch, self->runs.open_batches);
        batch = next;
    }
    size_t size;
    const void *data = xxl_enc_finish (self->enc, &size);
    zmsg_t *msg = zmsg_new ();
    zmsg_addmem (msg, &pending_id, sizeof pending_id);
    zmsg_addmem (msg, rid, rid_size);
    zmsg_addmem (msg, data, size);
    zlistx_add_end (always? self->outbox.agents_always: self->outbox.agents_out, msg);
}

void
engine_queue_agent (server_t *self, const void *rid, size_t rid_size, uint64_t pending_id)
{
    engine_queue_agent_to (self, rid, rid_size, pending_id, false);
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

//  A send to an agent failed (the connection is gone): the request or
//  batch tagged `tag` fails at the next pending check
static void
s_agent_gone (server_t *self, uint64_t tag, zframe_t *rid)
{
    pending_t *pending = tag? (pending_t *) zhashx_lookup (self->runs.pending, &tag): NULL;
    run_batch_t *batch = tag && !pending? (run_batch_t *) zhashx_lookup (self->runs.batches, &tag)
                                        : NULL;
    const char *address = pending? pending->address: batch? batch->address: NULL;
    char name [300], why [80] = "its connection has closed";
    if (zmq_errno () == EAGAIN)
        snprintf (why, sizeof why, "it has not read its last %d messages",
                  xxl_transport_limits (XXL_ROLE_AGENTS).sndhwm);
    engine_warn_limited (&self->outbox.log_agent_send, "server: cannot send to agent %s: %s",
                         xxl_printable (address? address: "(a reply)", name, sizeof name), why);
    if (!address)
        return;
    xxl_registry_unroute (self->registry, address, zframe_data (rid), zframe_size (rid));
    if (batch && batch->fires) {
        batch->gone = true;
        batch->deadline = 0;
        self->next_pending_check = 0;
        return;
    }
    for (size_t i = 0; i < (batch? batch->count: 1); i++) {
        pending_t *item = batch? (pending_t *) zhashx_lookup (self->runs.pending,
                                                               &batch->pending_ids [i])
                               : pending;
        if (item) {
            item->deadline = 0;
            item->gone = true;
        }
    }
    self->next_pending_check = 0;
}

//  Sends one message of the agents' outbox: [tag][rid][frame]

//  A RUN queued in a turn leaves after the commit, which may have taken
//  long (a stalled disk): its expireTime and the wait for its answer count
//  from now, the moment it leaves
static void
s_run_leaves (server_t *self, uint64_t tag, zframe_t *body)
{
    if (!tag || !body)
        return;
    size_t offset = 0;
    int64_t late = 0;
    int64_t now = zclock_mono ();
    pending_t *pending = (pending_t *) zhashx_lookup (self->runs.pending, &tag);
    run_batch_t *batch = pending? NULL: (run_batch_t *) zhashx_lookup (self->runs.batches, &tag);
    if (pending && pending->kind == PENDING_RUN && pending->expire_offset) {
        offset = pending->expire_offset;
        late = now + self->config.run_timeout_ms - pending->deadline;
        if (late > 0)
            pending->deadline += late;
    }
    else
    if (batch && !batch->fires) {
        offset = batch->expire_offset;
        late = now - batch->created_mono;
        if (late > 100) {
            for (size_t i = 0; i < batch->count; i++) {
                pending_t *item = (pending_t *) zhashx_lookup (self->runs.pending,
                                                               &batch->pending_ids [i]);
                if (item)
                    item->deadline += late;
            }
            batch->deadline = now + self->config.run_timeout_ms + 1000;
        }
    }
    if (offset && offset + 9 <= zframe_size (body)) {
        unsigned char expire [9];
        engine_pack_time (expire, engine_expire_time (self, now));
        memcpy (zframe_data (body) + offset, expire, sizeof expire);
    }
}

void
engine_agent_out (server_t *self, zmsg_t *msg)
{
    zframe_t *tag = zmsg_pop (msg);
    uint64_t tag_id = 0;
    if (tag && zframe_size (tag) == sizeof tag_id)
        memcpy (&tag_id, zframe_data (tag), sizeof tag_id);
    zframe_destroy (&tag);
    s_run_leaves (self, tag_id, zmsg_last (msg));
    //  ROUTER_MANDATORY: a peer that is gone fails here, and so does its
    //  request, at the next pending check (its deadline now)
    zframe_t *rid = zframe_dup (zmsg_first (msg));
    if (zmsg_send (&msg, self->agents)) {
        zmsg_destroy (&msg);
        s_agent_gone (self, tag_id, rid);
    }
    zframe_destroy (&rid);
}

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

static void
s_zmq_free (void *data, void *hint)
{
    (void) hint;
    free (data);
}

//  Sends [rid][*data_p] on the agents socket, taking the data (ZeroMQ
//  frees it once written, without a copy).  A send that fails fails the
//  request or batch tagged `tag`, as in engine_agent_out.
void
engine_agent_out_owned (server_t *self, uint64_t tag, const void *rid, size_t rid_size,
                        void **data_p, size_t size)
{
    void *data = *data_p;
    *data_p = NULL;
    void *handle = zsock_resolve (self->agents);
    int rc = zmq_send (handle, rid, rid_size, ZMQ_SNDMORE);
    if (rc >= 0) {
        zmq_msg_t part;
        rc = zmq_msg_init_data (&part, data, size, s_zmq_free, NULL);
        if (rc == 0) {
            rc = zmq_msg_send (&part, handle, 0);
            if (rc < 0)
                zmq_msg_close (&part);  //  (frees data)
        }
        else
            free (data);
    }
    else
        free (data);
    if (rc < 0) {
        zframe_t *frame = zframe_new (rid, rid_size);
        s_agent_gone (self, tag, frame);
        zframe_destroy (&frame);
    }
}

//  After a failed commit: every reply queued for a client this turn
//  becomes a 500 with the store's error (replies to reads stand), and the
//  failure is logged once per cause per XXL_COMMIT_LOG_MS
#define XXL_COMMIT_LOG_MS 10000
void
engine_commit_failed (server_t *self)
{
    const char *cause = xxl_store_error (self->store);
    int64_t now = zclock_mono ();
    if (self->outbox.commit_logged && streq (self->outbox.commit_logged, cause)
    &&  now - self->outbox.commit_logged_at < XXL_COMMIT_LOG_MS)
        self->outbox.commit_suppressed++;
    else {
        if (self->outbox.commit_suppressed)
            zsys_error ("server: commit failed: %s (and in %" PRIu64 " more turns since the last"
                        " such line)", cause, self->outbox.commit_suppressed);
        else
            zsys_error ("server: commit failed: %s", cause);
        zstr_free (&self->outbox.commit_logged);
        self->outbox.commit_logged = strdup (cause);
        self->outbox.commit_logged_at = now;
        self->outbox.commit_suppressed = 0;
    }
    char text [600];
    snprintf (text, sizeof text, "store error: %s", cause);
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
    engine_log_clear_rollback (self, text);
    zlistx_destroy (&failed);
}

//  After a failed commit: the turn's messages to agents are dropped, and
//  the runs they carried go back to be sent again (engine_resend_add; what the
//  turn wrote of them is gone, a row the turn made is gone too and then
//  nothing goes).  Replies to REGISTER stand (agents_always).
void
engine_agents_dropped (server_t *self)
{
    zlistx_t *ids = zlistx_new ();
    zmsg_t *msg;
    while ((msg = (zmsg_t *) zlistx_detach (self->outbox.agents_out, NULL))) {
        zframe_t *tag = zmsg_first (msg);
        uint64_t id = 0;
        if (tag && zframe_size (tag) == sizeof id)
            memcpy (&id, zframe_data (tag), sizeof id);
        run_batch_t *batch = id? (run_batch_t *) zhashx_lookup (self->runs.batches, &id): NULL;
        if (batch && !batch->fires) {
            for (size_t i = 0; i < batch->count; i++)
                zlistx_add_end (ids, (void *) (uintptr_t) batch->pending_ids [i]);
            zhashx_delete (self->runs.batches, &id);
        }
        else
        if (id)
            zlistx_add_end (ids, (void *) (uintptr_t) id);
        zmsg_destroy (&msg);
    }
    run_batch_t *batch;
    while ((batch = (run_batch_t *) zlistx_first (self->runs.open_batches))) {
        for (size_t i = 0; i < batch->count; i++)
            zlistx_add_end (ids, (void *) (uintptr_t) batch->pending_ids [i]);
        zlistx_delete (self->runs.open_batches, zlistx_cursor (self->runs.open_batches));
    }
    for (void *item = zlistx_first (ids); item; item = zlistx_next (ids)) {
        uint64_t id = (uint64_t) (uintptr_t) item;
        pending_t *pending = (pending_t *) zhashx_lookup (self->runs.pending, &id);
        if (!pending)
            continue;
        if (pending->kind == PENDING_RUN) {
            //  (a row this turn made is gone with it, and its id is never
            //  handed out again: nothing to send)
            if (pending->log_id < self->runs.turn_first_id)
                engine_resend_add (self, pending->log_id, pending->address);
            zhashx_delete (self->runs.pending, &id);
        }
        else
            pending->deadline = 0;      //  (its client is answered now: not sent)
    }
    zlistx_destroy (&ids);
    self->next_pending_check = 0;
    //  What else the turn promised itself (an acceptance, a failure, a
    //  fire time) is gone from the store and from memory: a sweep looks
    //  for such rows once the store takes writes again
    self->outbox.sweep_at = zclock_mono () + 2 * (int64_t) self->config.run_timeout_ms + 1000;
}

//  Rows with no answer and no result, older than twice the answer
//  timeout, that nothing in memory will send or fail (their driver's
//  write was rolled back by a failed commit) go back: to their agent
//  again when they had one (it refuses a logId it has), else routed anew.
//  Returns how many.
size_t
engine_sweep_untracked (server_t *self)
{
    zhashx_t *flying = engine_id_map (NULL);
    for (pending_t *pending = (pending_t *) zhashx_first (self->runs.pending); pending;
         pending = (pending_t *) zhashx_next (self->runs.pending))
        if (pending->kind == PENDING_RUN)
            zhashx_insert (flying, &pending->log_id, pending);
    for (run_batch_t *batch = (run_batch_t *) zhashx_first (self->runs.batches); batch;
         batch = (run_batch_t *) zhashx_next (self->runs.batches))
        for (size_t i = 0; batch->fires && i < batch->count; i++)
            if (batch->fires [i].plan)
                zhashx_insert (flying, &batch->fires [i].plan->log_id, batch);
    int64_t now = engine_now ();
    int64_t ids [4096];
    size_t count = 0, swept = 0;
    xxl_store_log_unanswered_ids (self->store, now - 2 * (int64_t) self->config.run_timeout_ms,
                                  ids, 4096, &count);
    for (size_t i = 0; i < count; i++) {
        if (zhashx_lookup (flying, &ids [i]) || zhashx_lookup (self->planner.plans, &ids [i])
        ||  zhashx_lookup (self->runs.accepted_ids, &ids [i])
        ||  zhashx_lookup (self->runs.resend_ids, &ids [i]) || engine_doubt_has (self, ids [i]))
            continue;
        xxl_log_t log;
        if (xxl_store_log_load (self->store, ids [i], &log))
            continue;
        if (log.schedule_time <= 0 || log.schedule_time < now - self->config.preread_ms) {
            if (*log.executor_address)
                engine_resend_add (self, log.id, log.executor_address);
            else
                engine_run_again (self, log.id, now, 0);
            swept++;
        }
        xxl_log_free (&log);
    }
    zhashx_destroy (&flying);
    if (swept)
        zsys_warning ("server: %zu trigger(s) a failed commit had left behind go again", swept);
    return swept;
}

void
engine_flush (server_t *self)
{
    run_batch_t *batch;
    while ((batch = (run_batch_t *) zlistx_first (self->runs.open_batches)))
        engine_batch_close (self, batch, self->runs.open_batches);
    zmsg_t *msg;
    //  (REGISTER replies first: an agent learns the scheduler's clock
    //  before it judges the RUNs that follow)
    while ((msg = (zmsg_t *) zlistx_detach (self->outbox.agents_always, NULL)))
        engine_agent_out (self, msg);
    while ((msg = (zmsg_t *) zlistx_detach (self->outbox.agents_out, NULL)))
        engine_agent_out (self, msg);
    //  Clients' replies after the RUNs: a trigger's run starts sooner
    if (zhashx_size (self->outbox.backlogs))
        s_api_backlogs (self);
    while ((msg = (zmsg_t *) zlistx_detach (self->outbox.api_out, NULL)))
        engine_api_send (self, msg);
    while ((msg = (zmsg_t *) zlistx_detach (self->outbox.api_reads, NULL)))
        engine_api_send (self, msg);
    self->outbox.api_out_bytes = 0;
}
