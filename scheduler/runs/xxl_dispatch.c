/*  xxl_dispatch.c -- the agents' side of the outbox: RUNs and requests
    queued in a turn leave after its commit.

    Agents' messages carry a tag naming the request or batch they belong
    to, so a send that fails (the agent's connection closed, or its queue
    is full) fails that request at once.  A RUN's expireTime and the wait
    for its answer count from the moment it leaves.  After a failed commit
    the turn's messages to agents are dropped and their runs go again.
    Contract in xxl_runs.h.
*/

#include "xxl_engine.h"

#include <sys/random.h>

static void s_agent_gone (server_t *self, uint64_t tag, zframe_t *rid);
static void s_run_leaves (server_t *self, uint64_t tag, zframe_t *body);
static void s_zmq_free (void *data, void *hint);

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
    zlistx_add_end (always? self->runs.agents_always: self->runs.agents_out, msg);
}

void
engine_queue_agent (server_t *self, const void *rid, size_t rid_size, uint64_t pending_id)
{
    engine_queue_agent_to (self, rid, rid_size, pending_id, false);
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
    engine_warn_limited (&self->runs.log_agent_send, "server: cannot send to agent %s: %s",
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

//  After a failed commit: the turn's messages to agents are dropped, and
//  the runs they carried go back to be sent again (engine_resend_add; what the
//  turn wrote of them is gone, a row the turn made is gone too and then
//  nothing goes).  Replies to REGISTER stand (agents_always).
void
engine_agents_dropped (server_t *self)
{
    zlistx_t *ids = zlistx_new ();
    zmsg_t *msg;
    while ((msg = (zmsg_t *) zlistx_detach (self->runs.agents_out, NULL))) {
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
    self->runs.sweep_at = zclock_mono () + 2 * (int64_t) self->config.run_timeout_ms + 1000;
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

//  Sends the turn's messages to agents: the batches filling this turn are
//  closed, replies to REGISTER go first (an agent learns the scheduler's
//  clock before it judges the RUNs that follow)
void
engine_runs_flush (server_t *self)
{
    run_batch_t *batch;
    while ((batch = (run_batch_t *) zlistx_first (self->runs.open_batches)))
        engine_batch_close (self, batch, self->runs.open_batches);
    zmsg_t *msg;
    while ((msg = (zmsg_t *) zlistx_detach (self->runs.agents_always, NULL)))
        engine_agent_out (self, msg);
    while ((msg = (zmsg_t *) zlistx_detach (self->runs.agents_out, NULL)))
        engine_agent_out (self, msg);
}

uint64_t
engine_request_id (server_t *self)
{
    //  Random, so that a peer cannot guess the id of a request sent to
    //  another agent; 62 bits (positive in any signed 64-bit decoder),
    //  never 0, never one in flight
    for (;;) {
        if (self->runs.ids_left == 0) {
            size_t got = 0;
            while (got < sizeof self->runs.ids) {
                ssize_t rc = getrandom ((char *) self->runs.ids + got, sizeof self->runs.ids - got, 0);
                if (rc < 0 && errno != EINTR) {
                    //  (no entropy source: ids still differ, if guessable)
                    zsys_warning ("access: getrandom failed (%s)", strerror (errno));
                    for (size_t i = 0; i < XXL_IDS_AHEAD; i++)
                        self->runs.ids [i] = ++self->next_id;
                    break;
                }
                got += rc > 0? (size_t) rc: 0;
            }
            self->runs.ids_left = XXL_IDS_AHEAD;
        }
        uint64_t id = self->runs.ids [--self->runs.ids_left] & ((UINT64_C (1) << 62) - 1);
        if (id && !zhashx_lookup (self->runs.pending, &id) && !zhashx_lookup (self->runs.batches, &id))
            return id;
    }
}

void
engine_pending_destroy (void **item)
{
    pending_t *pending = (pending_t *) *item;
    if (pending) {
        free (pending->address);
        free (pending->note);
        free (pending->rid);
        zframe_destroy (&pending->client);
        free (pending->audit_who);
        free (pending->audit_role);
        free (pending);
        *item = NULL;
    }
}

void
engine_batch_destroy (run_batch_t **self_p)
{
    if (*self_p) {
        run_batch_t *self = *self_p;
        for (size_t i = 0; self->fires && i < self->count; i++) {
            plan_t *plan = self->fires [i].plan;
            if (self->prebuilt) {
                if (plan)
                    plan->prebuilt = NULL;  //  (borrowed: self->planner.plans owns it)
            }
            else
                self->fire_free (plan);
        }
        free (self->fires);
        free (self->address);
        free (self->rid);
        free (self->pending_ids);
        xxl_enc_destroy (&self->enc);
        free (self);
        *self_p = NULL;
    }
}

void
engine_batch_destructor (void **item)
{
    engine_batch_destroy ((run_batch_t **) item);
}

void
engine_resend_destroy (void **item)
{
    if (*item) {
        free (((xxl_resend_t *) *item)->address);
        free (*item);
        *item = NULL;
    }
}
