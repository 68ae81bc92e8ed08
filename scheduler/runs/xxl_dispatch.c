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
#include "xxl_run_rules.h"

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
            engine_batch_close (self, batch, self->runs.open_batches, false);
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
    int error = zmq_errno ();
    if (address && error == EHOSTUNREACH)
        xxl_heard_closed (self->heard, address, zclock_mono (), self->config.lost_after_ms);
    if (error == EAGAIN)
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
    self->sent |= XXL_SENT_AGENTS;
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
    self->sent |= XXL_SENT_AGENTS;
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
    //  (the wall clock as it is now: the rows left behind were sent
    //  before; after a step back, an earlier failure's time may be later)
    int64_t before = engine_now () + 1000;
    if (before > self->runs.sweep_before)
        self->runs.sweep_before = before;
}

//  Sends the turn's messages to agents: the batches filling this turn are
//  closed, replies to REGISTER go first (an agent learns the scheduler's
//  clock before it judges the RUNs that follow)
void
engine_runs_flush (server_t *self)
{
    run_batch_t *batch;
    while ((batch = (run_batch_t *) zlistx_first (self->runs.open_batches)))
        engine_batch_close (self, batch, self->runs.open_batches, false);
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

//  Puts a row back to be sent again to address (once it is connected): a
//  row recovery found possibly sent, or whose RUN a failed commit kept
//  from leaving.  It goes only while still unanswered (engine_dispatch_row).
void
engine_resend_add (server_t *self, int64_t log_id, const char *address)
{
    if (zhashx_lookup (self->runs.resend_ids, &log_id))
        return;
    xxl_resend_t *resend = (xxl_resend_t *) zmalloc (sizeof (xxl_resend_t));
    resend->log_id = log_id;
    resend->address = strdup (address);
    resend->deadline = zclock_mono () + self->config.recovery_wait_ms;
    zlistx_add_end (self->runs.resends, resend);
    zhashx_insert (self->runs.resend_ids, &resend->log_id, resend);
}

//  Starts a request to address; returns the pending entry, or NULL when
//  the address is not connected (msg explains)
pending_t *
engine_pending_new (server_t *self, const char *address, pending_kind_t kind, int timeout_ms,
                    char *why, size_t whylen)
{
    size_t rid_size;
    //  (LOG and KILL also reach an agent that unregistered and is still
    //  connected: one draining its runs)
    const void *rid = kind == PENDING_LOG || kind == PENDING_KILL
                    ? xxl_registry_route_last (self->registry, address, &rid_size)
                    : xxl_registry_route (self->registry, address, &rid_size);
    if (!rid) {
        snprintf (why, whylen, "agent '%s' is not connected to this scheduler", address);
        return NULL;
    }
    pending_t *pending = (pending_t *) zmalloc (sizeof (pending_t));
    pending->id = engine_request_id (self);
    pending->kind = kind;
    pending->created = zclock_mono ();
    pending->deadline = pending->created + timeout_ms;
    pending->address = strdup (address);
    pending->rid = malloc (rid_size);
    assert (pending->rid);
    memcpy (pending->rid, rid, rid_size);
    pending->rid_size = rid_size;
    zhashx_insert (self->runs.pending, &pending->id, pending);
    return pending;
}

pending_t *
engine_agent_request (server_t *self, const char *address, const char *type,
                      pending_kind_t kind, int timeout_ms, char *why, size_t whylen)
{
    pending_t *pending = engine_pending_new (self, address, kind, timeout_ms, why, whylen);
    if (pending)
        xxl_enc_request (self->enc, type, pending->id);
    return pending;
}

//  Queues the message built after engine_agent_request
void
engine_agent_send (server_t *self, pending_t *pending)
{
    //  (LOG, KILL and probes depend on nothing the turn writes: they go
    //  whatever its commit; to the connection chosen for the request)
    engine_queue_agent_to (self, pending->rid, pending->rid_size, pending->id, true);
}

//  Sends address a KILL of job_id's runs there, for row log_id, with no
//  client (its answer: engine_agent_answer's PENDING_KILL; note, copied
//  unless NULL, marks the engine's own cover kills, xxl_admit.c); reason:
//  the KILL's `reason`, the killed run's handleMsg at the agent.  The
//  request, or NULL when the agent cannot be reached now.
pending_t *
engine_kill_send (server_t *self, const char *address, int64_t log_id, int64_t job_id,
                  const char *note, const char *reason)
{
    assert (reason);
    char why [256];
    pending_t *pending = engine_agent_request (self, address, "KILL", PENDING_KILL,
                                               self->config.request_timeout_ms, why, sizeof why);
    if (!pending)
        return NULL;
    pending->log_id = log_id;
    pending->note = note? strdup (note): NULL;
    xxl_enc_kint (self->enc, "jobId", job_id);
    xxl_enc_kstr (self->enc, "reason", reason);
    engine_agent_send (self, pending);
    return pending;
}

//  A TriggerParam's value of logDateTime: int64 in its fixed 9-byte form,
//  so that a prepared TriggerParam takes it at the instant it goes
void
engine_pack_time (unsigned char out [9], int64_t value)
{
    uint64_t v = (uint64_t) value;
    out [0] = 0xd3;
    for (int i = 8; i >= 1; i--, v >>= 8)
        out [i] = (unsigned char) v;
}

//  A RUN's expireTime, on this scheduler's steady clock (engine_clock):
//  the agent must not start any of its runs once its estimate of that
//  clock is past it.  Half the answer timeout after `since` (monotonic
//  ms: when the RUN's deadline started counting), so that an agent that
//  accepts in time is heard before the run is given up on, and one frozen
//  or cut off past it refuses what was queued to it
int64_t
engine_expire_time (server_t *self, int64_t since)
{
    return since + self->clock_base + self->config.run_timeout_ms / 2;
}

//  Encodes a RUN's TriggerParam into self->runs.item_enc as one map whose last
//  key, logDateTime, has no value yet (the caller appends engine_pack_time's
//  bytes).  Returns the bytes (owned by item_enc until its next use).
const unsigned char *
engine_encode_tp (server_t *self, const xxl_job_t *job, int64_t log_id, const char *param,
                  int shard_index, int shard_total, size_t *size)
{
    xxl_enc_t *enc = self->runs.item_enc;
    xxl_enc_reset (enc);
    xxl_enc_map_begin (enc);
    xxl_enc_kint (enc, "jobId", job->id);
    xxl_enc_kstr (enc, "executorHandler", job->executor_handler);
    xxl_enc_kstr (enc, "executorParams", param? param: "");
    xxl_enc_kstr (enc, "executorBlockStrategy", job->executor_block_strategy);
    xxl_enc_kint (enc, "executorTimeout", job->executor_timeout);
    xxl_enc_kint (enc, "logId", log_id);
    xxl_enc_kstr (enc, "glueType", job->glue_type);
    if (strneq (job->glue_type, "BEAN"))
        xxl_enc_kstr (enc, "glueSource", job->glue_source);
    xxl_enc_kint (enc, "glueUpdatetime", job->glue_updatetime);
    xxl_enc_kint (enc, "broadcastIndex", shard_index);
    xxl_enc_kint (enc, "broadcastTotal", shard_total);
    xxl_enc_key (enc, "logDateTime");
    return (const unsigned char *) xxl_enc_finish (enc, size);
}

//  Sends a batch (taken): its message joins the agents' outbox, or leaves
//  at once (`now`: prepared fires, what they need is committed already).
//  Prepared fires get `stamp` as their time (0: now).  The batch then
//  waits in self->runs.batches for the agent's answer.
void
engine_batch_send (server_t *self, run_batch_t *batch, bool now, int64_t stamp)
{
    int64_t since = batch->created_mono;
    if (batch->fires) {
        //  Prepared fires: their time is when the message goes
        if (!stamp)
            stamp = engine_now ();
        unsigned char time [9];
        engine_pack_time (time, stamp);
        for (size_t i = 0; i < batch->count; i++) {
            xxl_enc_patch (batch->enc, batch->fires [i].offset, time, sizeof time);
            batch->fires [i].stamp = stamp;
        }
        since = zclock_mono ();         //  (their deadline counts from here)
    }
    unsigned char expire [9];
    engine_pack_time (expire, engine_expire_time (self, since));
    xxl_enc_patch (batch->enc, batch->expire_offset, expire, sizeof expire);
    size_t size;
    batch->deadline = zclock_mono () + self->config.run_timeout_ms + 1000;
    if (now) {
        //  (no copy of a message that may be megabytes: ZeroMQ frees it)
        void *data = xxl_enc_take (batch->enc, &size);
        xxl_enc_destroy (&batch->enc);
        zhashx_insert (self->runs.batches, &batch->id, batch);
        engine_agent_out_owned (self, batch->id, batch->rid, batch->rid_size, &data, size);
        return;
    }
    const void *data = xxl_enc_finish (batch->enc, &size);
    zmsg_t *msg = zmsg_new ();
    zmsg_addmem (msg, &batch->id, sizeof batch->id);
    zmsg_addmem (msg, batch->rid, batch->rid_size);
    zmsg_addmem (msg, data, size);
    xxl_enc_destroy (&batch->enc);
    zhashx_insert (self->runs.batches, &batch->id, batch);
    zlistx_add_end (self->runs.agents_out, msg);
}

//  Takes batch off `list` and sends it: at once (now: a list of prepared
//  fires), else after the turn's commit (runs' open batches)
void
engine_batch_close (server_t *self, run_batch_t *batch, zlistx_t *list, bool now)
{
    for (void *item = zlistx_first (list); item; item = zlistx_next (list))
        if (item == batch) {
            zlistx_detach_cur (list);
            break;
        }
    engine_batch_send (self, batch, now, 0);
}

//  An open batch of `open` for the agent at rid with room for one more
//  item, or a new one (max items; fires: it carries prepared fires)
run_batch_t *
engine_batch_for (server_t *self, zlistx_t *open, const char *address, const void *rid,
                  size_t rid_size, int max, engine_fire_free_fn *fire_free)
{
    run_batch_t *batch = (run_batch_t *) zlistx_last (open);
    if (batch && batch->rid_size == rid_size && memcmp (batch->rid, rid, rid_size) == 0
    &&  batch->count < batch->max && batch->bytes < XXL_MSG_MAX_FRAME / 4)
        return batch;
    for (batch = (run_batch_t *) zlistx_first (open); batch;
         batch = (run_batch_t *) zlistx_next (open))
        if (batch->rid_size == rid_size && memcmp (batch->rid, rid, rid_size) == 0
        &&  batch->count < batch->max && batch->bytes < XXL_MSG_MAX_FRAME / 4)
            return batch;
    batch = (run_batch_t *) zmalloc (sizeof (run_batch_t));
    batch->id = engine_request_id (self);
    batch->address = strdup (address);
    batch->rid = malloc (rid_size);
    memcpy (batch->rid, rid, rid_size);
    batch->rid_size = rid_size;
    batch->max = (size_t) max;
    if (fire_free) {
        batch->fire_free = fire_free;
        batch->fires_alloc = (size_t) max;
        batch->fires = (fire_item_t *) malloc (batch->fires_alloc * sizeof (fire_item_t));
        assert (batch->fires);
    }
    batch->enc = xxl_enc_new ();
    batch->created = engine_now ();
    batch->created_mono = zclock_mono ();
    xxl_enc_request (batch->enc, "RUN", batch->id);
    unsigned char expire [9];
    engine_pack_time (expire, engine_expire_time (self, batch->created_mono));     //  (patched when it goes)
    xxl_enc_key (batch->enc, "expireTime");
    batch->expire_offset = xxl_enc_size (batch->enc);
    xxl_enc_raw (batch->enc, expire, sizeof expire, 0);
    xxl_enc_key (batch->enc, "runs");
    xxl_enc_array_begin (batch->enc);
    zlistx_add_end (open, batch);
    return batch;
}

//  Queues the RUN of pending: tp (size bytes, from engine_encode_tp) with
//  logDateTime `time`, in a batch when the agent takes batches: of `open`
//  (the caller's, sent at once: the planner's prepared fires), or with
//  open NULL of runs' own (sent after the turn's commit).
void
engine_run_queue (server_t *self, pending_t *pending, const unsigned char *tp, size_t size,
                  int64_t time, zlistx_t *open)
{
    bool now = open != NULL;
    if (!open)
        open = self->runs.open_batches;
    unsigned char stamp [9];
    engine_pack_time (stamp, time);
    size_t rid_size;
    const void *rid = xxl_registry_route (self->registry, pending->address, &rid_size);
    if (!rid)
        return;                         //  (callers checked: it fails at its deadline)
    int max = xxl_registry_run_batch (self->registry, pending->address);
    if (max < 2 || size < 5) {
        //  The single form: the TriggerParam's keys at the top level
        uint32_t keys = (uint32_t) tp [1] << 24 | (uint32_t) tp [2] << 16
                      | (uint32_t) tp [3] << 8 | tp [4];
        xxl_enc_request (self->enc, "RUN", pending->id);
        xxl_enc_raw (self->enc, tp + 5, size - 5, keys);
        xxl_enc_raw (self->enc, stamp, sizeof stamp, 0);
        unsigned char expire [9];
        engine_pack_time (expire, engine_expire_time (self, zclock_mono ()));    //  (patched when it goes)
        xxl_enc_key (self->enc, "expireTime");
        pending->expire_offset = xxl_enc_size (self->enc);
        xxl_enc_raw (self->enc, expire, sizeof expire, 0);
        if (now) {
            size_t msg_size;
            const void *data = xxl_enc_finish (self->enc, &msg_size);
            zmsg_t *msg = zmsg_new ();
            zmsg_addmem (msg, &pending->id, sizeof pending->id);
            zmsg_addmem (msg, rid, rid_size);
            zmsg_addmem (msg, data, msg_size);
            engine_agent_out (self, msg);
        }
        else
            engine_queue_agent (self, rid, rid_size, pending->id);
        return;
    }
    run_batch_t *batch = engine_batch_for (self, open, pending->address, rid, rid_size, max,
                                           NULL);
    if (batch->count == batch->alloc) {
        batch->alloc = batch->alloc? batch->alloc * 2: 64;
        batch->pending_ids = (uint64_t *) realloc (batch->pending_ids,
                                                   batch->alloc * sizeof (uint64_t));
        assert (batch->pending_ids);
    }
    batch->pending_ids [batch->count++] = pending->id;
    xxl_enc_raw (batch->enc, tp, size, 1);
    xxl_enc_raw (batch->enc, stamp, sizeof stamp, 0);
    batch->bytes += size + sizeof stamp;
    if (batch->count >= batch->max || batch->bytes >= XXL_MSG_MAX_FRAME / 4)
        engine_batch_close (self, batch, open, now);
}

//  Fails the fires of a batch that got no answer; routes again those of one
//  that could not be sent
//  A RUN whose send failed (the agent's connection had closed: it never
//  left) is routed again, among the agents still connected: its address
//  and the section its route wrote ahead (note, address) are taken back
//  and it goes by the timer now (engine_dispatch_row).  Unless another
//  RUN of the row was routed since (its section is last): that one
//  decides the row.
void
engine_reroute (server_t *self, int64_t log_id, const char *note, const char *address)
{
    char *section = engine_section (note, address, XXL_OK, NULL);
    if (xxl_store_log_unroute (self->store, log_id, section, 1) == 1)
        engine_run_again (self, log_id, engine_now (), 0);
    zstr_free (&section);
}

//  Pins: the addresses a JOB_TRIGGER gave, by row.  A pin lives until its
//  run ends, or XXL_PIN_KEEP_MS after its row was last routed (a run that
//  never ends here: taken over by another scheduler, or its row deleted),
//  and goes with the turn that made it when that turn's commit fails (its
//  row was never written; another scheduler may be handed its id).  The
//  rows of one trigger share one copy of its list (a broadcast over N
//  addresses holds the list once, not N times): engine_runs_pin with the
//  same text as the previous call takes a reference to it.  At most
//  PIN_ROWS_MAX pins and PIN_BYTES_MAX bytes of lists are held: a trigger
//  that could pass either is refused (engine_runs_pins_room)
#define PIN_ROWS_MAX    200000
#define PIN_BYTES_MAX   (64 * 1024 * 1024)

typedef struct {
    size_t refs;
    size_t *bytes;                      //  the pins' count of list bytes
    char text [];
} pin_list_t;

typedef struct {
    int64_t log_id;                     //  the key
    int64_t used;                       //  monotonic ms: made, or last routed
    pin_list_t *list;                   //  shared, counted
} pin_t;

struct _pins_t {
    zhashx_t *rows;                     //  log id → pin_t
    pin_list_t *last;                   //  the latest trigger's list (a reference)
    size_t bytes;                       //  of the lists held
    zlistx_t *turn;                     //  log ids pinned by this turn (int64_t *)
};

//  Drops a reference to list (NULL: none)
static void
s_pin_list_drop (pin_list_t *list)
{
    if (list) {
        assert (list->refs > 0);
        if (--list->refs == 0) {
            size_t size = strlen (list->text) + 1;
            assert (*list->bytes >= size);
            *list->bytes -= size;
            free (list);
        }
    }
}

static void
s_pin_destroy (void **item)
{
    pin_t *pin = (pin_t *) *item;
    if (pin) {
        s_pin_list_drop (pin->list);
        free (pin);
        *item = NULL;
    }
}

pins_t *
engine_runs_pins_new (void)
{
    pins_t *pins = (pins_t *) calloc (1, sizeof *pins);
    if (pins) {
        pins->rows = engine_id_map (s_pin_destroy);
        pins->turn = zlistx_new ();
        if (!pins->rows || !pins->turn) {
            zhashx_destroy (&pins->rows);
            zlistx_destroy (&pins->turn);
            free (pins);
            return NULL;
        }
        zlistx_set_destructor (pins->turn, engine_free_item);
    }
    return pins;
}

void
engine_runs_pins_destroy (server_t *self)
{
    pins_t *pins = self->runs.pins;
    if (pins) {
        zhashx_destroy (&pins->rows);
        s_pin_list_drop (pins->last);
        assert (pins->bytes == 0);
        zlistx_destroy (&pins->turn);
        free (pins);
        self->runs.pins = NULL;
    }
}

bool
engine_runs_pins_room (server_t *self, const char *addresses)
{
    pins_t *pins = self->runs.pins;
    //  (a trigger makes at most one row per address, a broadcast's)
    size_t rows = 1;
    for (const char *comma = strchr (addresses, ','); comma; comma = strchr (comma + 1, ','))
        rows++;
    size_t bytes = pins->last && streq (pins->last->text, addresses)? 0: strlen (addresses) + 1;
    return zhashx_size (pins->rows) + rows <= PIN_ROWS_MAX && pins->bytes + bytes <= PIN_BYTES_MAX;
}

size_t
engine_runs_pins_held (server_t *self, size_t *bytes)
{
    pins_t *pins = self->runs.pins;
    if (bytes)
        *bytes = pins->bytes;
    return zhashx_size (pins->rows);
}

void
engine_runs_pin (server_t *self, int64_t log_id, const char *addresses)
{
    assert (log_id > 0 && addresses);
    pins_t *pins = self->runs.pins;
    pin_list_t *list = pins->last;
    if (!list || !streq (list->text, addresses)) {
        size_t length = strlen (addresses);
        list = (pin_list_t *) malloc (sizeof (pin_list_t) + length + 1);
        assert (list);
        list->refs = 1;
        list->bytes = &pins->bytes;
        memcpy (list->text, addresses, length + 1);
        pins->bytes += length + 1;
        s_pin_list_drop (pins->last);
        pins->last = list;
    }
    pin_t *pin = (pin_t *) malloc (sizeof *pin);
    assert (pin);
    pin->log_id = log_id;
    pin->used = zclock_mono ();
    pin->list = list;
    list->refs++;
    zhashx_delete (pins->rows, &log_id);
    int rc = zhashx_insert (pins->rows, &pin->log_id, pin);
    assert (rc == 0);
    int64_t *id = (int64_t *) malloc (sizeof *id);
    assert (id);
    *id = log_id;
    zlistx_add_end (pins->turn, id);
}

const char *
engine_runs_pinned (server_t *self, int64_t log_id)
{
    pins_t *pins = self->runs.pins;
    if (zhashx_size (pins->rows) == 0)
        return NULL;
    pin_t *pin = (pin_t *) zhashx_lookup (pins->rows, &log_id);
    if (!pin)
        return NULL;
    pin->used = zclock_mono ();
    return pin->list->text;
}

void
engine_runs_pins_settle (server_t *self, bool committed)
{
    pins_t *pins = self->runs.pins;
    if (!committed)
        for (int64_t *id = (int64_t *) zlistx_first (pins->turn); id;
             id = (int64_t *) zlistx_next (pins->turn)) {
            int64_t log_id = *id;
            zhashx_delete (pins->rows, &log_id);
        }
    zlistx_purge (pins->turn);
}

void
engine_runs_pins_expire (server_t *self, int64_t before)
{
    pins_t *pins = self->runs.pins;
    if (zhashx_size (pins->rows) == 0)
        return;
    zlistx_t *old = zlistx_new ();
    for (pin_t *pin = (pin_t *) zhashx_first (pins->rows); pin;
         pin = (pin_t *) zhashx_next (pins->rows))
        if (pin->used < before)
            zlistx_add_end (old, &pin->log_id);
    for (int64_t *id = (int64_t *) zlistx_first (old); id; id = (int64_t *) zlistx_next (old)) {
        int64_t log_id = *id;
        zhashx_delete (pins->rows, &log_id);
    }
    zlistx_destroy (&old);
}

void
engine_runs_on_ended (server_t *self, const xxl_event_t *event)
{
    pins_t *pins = self->runs.pins;
    if (zhashx_size (pins->rows))
        zhashx_delete (pins->rows, &event->log_id);
}

//  Back-pressure.  An agent that cannot take a run now (no thread to be
//  had, its queue bound full) answers it XXL_BUSY, "busy: ...": nothing of
//  it was taken there (not journaled, not queued).  The run is taken back
//  as a refusal of a stopping agent's is (its address and the section
//  written ahead) and goes by the timer again after a backoff that
//  doubles with each refusal of it, BUSY_RETRY_MS up to BUSY_RETRY_MAX_MS
//  (plus a spread of up to a quarter, so that a burst refused together
//  does not come back together), and is routed then as any due row: a
//  router that moves on (ROUND, RANDOM, LEAST_*, and FAILOVER and
//  BUSYOVER, whose BEAT and IDLE_BEAT a busy agent answers 500) sends it
//  elsewhere, the others to the same agent again.  So a run is never
//  failed for a resource the agent could wait for; the job's block
//  strategy applies at the agent when it is taken.  The refusals of a run
//  are counted until any other answer for it (the counts are dropped
//  once a minute: a run dropped meanwhile leaves none for long).
//  Counts a busy refusal of log_id; returns the delay before it goes again
int64_t
engine_busy_delay (server_t *self, int64_t log_id)
{
    int64_t *tries = (int64_t *) zhashx_lookup (self->runs.busy_tries, &log_id);
    if (!tries) {
        tries = (int64_t *) zmalloc (2 * sizeof (int64_t));
        tries [0] = log_id;
        zhashx_insert (self->runs.busy_tries, &tries [0], tries);
    }
    int64_t refused = ++tries [1];
    int64_t delay = xxl_busy_delay (refused, log_id);
    if (xxl_busy_says (refused))
        zsys_debug ("trigger: log %" PRId64 " refused busy (%" PRId64 " time(s)); sent again"
                    " in %" PRId64 " ms", log_id, refused, delay);
    return delay;
}

bool
engine_run_busy (server_t *self, int64_t log_id, const char *note, const char *address,
                 int code)
{
    if (code != XXL_BUSY) {
        if (zhashx_size (self->runs.busy_tries))
            zhashx_delete (self->runs.busy_tries, &log_id);
        return false;
    }
    int64_t delay = engine_busy_delay (self, log_id);
    //  (taken back only while the row's last section is this RUN's: see
    //  engine_reroute)
    char *section = engine_section (note, address, XXL_OK, NULL);
    if (xxl_store_log_unroute (self->store, log_id, section, 1) == 1)
        engine_run_again (self, log_id, engine_now (), delay);
    else
        zhashx_delete (self->runs.busy_tries, &log_id);
    zstr_free (&section);
    return true;
}
