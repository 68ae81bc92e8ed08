/*  xxl_runs.c -- runs' state and its clocks: made at the actor's start,
    freed at its stop; requests to agents past their deadline; the BEAT
    that tells a connection that closed.  Contract in xxl_runs.h.
*/

#include "xxl_engine.h"

//  Runs' state, made at the actor's start and freed at its stop
void
engine_runs_start (server_t *self)
{
    self->runs.text = zchunk_new (NULL, 4096);
    self->runs.agents_out = zlistx_new ();
    zlistx_set_destructor (self->runs.agents_out, engine_msg_destroy);
    self->runs.agents_always = zlistx_new ();
    zlistx_set_destructor (self->runs.agents_always, engine_msg_destroy);
    self->runs.pending = engine_id_map (engine_pending_destroy);
    self->runs.item_enc = xxl_enc_new ();
    self->runs.open_batches = zlistx_new ();
    zlistx_set_destructor (self->runs.open_batches, engine_batch_destructor);
    self->runs.batches = engine_id_map (engine_batch_destructor);
    self->runs.slow_counts = engine_id_map (engine_free_item);
    self->runs.busy_tries = engine_id_map (engine_free_item);
    self->runs.routing = engine_id_map (engine_free_item);
    self->runs.pins = engine_runs_pins_new ();
    assert (self->runs.pins);
    self->runs.slow_minute = engine_now () / 60000;
    self->runs.moved_from = zhashx_new ();
    zhashx_set_destructor (self->runs.moved_from, (zhashx_destructor_fn *) zframe_destroy);
    self->runs.twins = zhashx_new ();
    zhashx_set_destructor (self->runs.twins, engine_free_item);
    self->runs.accepted = zlistx_new ();
    zlistx_set_destructor (self->runs.accepted, engine_free_item);
    self->runs.accepted_ids = engine_id_map (NULL);
    self->runs.groups = engine_id_map (engine_group_destructor);
    self->runs.resends = zlistx_new ();
    zlistx_set_destructor (self->runs.resends, engine_resend_destroy);
    self->runs.resend_ids = engine_id_map (NULL);
    self->runs.doubts = engine_id_map (engine_doubt_destroy);
    assert (self->runs.doubts);
    self->runs.unseen = engine_id_map (engine_free_item);
    self->runs.checks = zhashx_new ();
    zhashx_set_destructor (self->runs.checks, engine_check_destroy);
    engine_admit_start (self);
}

void
engine_runs_stop (server_t *self)
{
    if (self->runs.monitor) {
        zmq_socket_monitor (zsock_resolve (self->agents), NULL, 0);
        zsock_destroy (&self->runs.monitor);
    }
    zlistx_destroy (&self->runs.resends);
    zhashx_destroy (&self->runs.resend_ids);
    zhashx_destroy (&self->runs.doubts);
    zhashx_destroy (&self->runs.unseen);
    zhashx_destroy (&self->runs.checks);
    engine_admit_stop (self);
    xxl_pool_destroy (&self->runs.fast_pool);
    xxl_pool_destroy (&self->runs.slow_pool);
    xxl_routers_destroy (&self->runs.routers);
    zhashx_destroy (&self->runs.slow_counts);
    zhashx_destroy (&self->runs.busy_tries);
    zhashx_destroy (&self->runs.routing);
    engine_runs_pins_destroy (self);
    zhashx_destroy (&self->runs.moved_from);
    zhashx_destroy (&self->runs.twins);
    free (self->runs.foreign_apps);
    zhashx_destroy (&self->runs.accepted_ids);
    zlistx_destroy (&self->runs.accepted);
    engine_free_addresses (self->runs.awaited, self->runs.awaited_count);
    zhashx_destroy (&self->runs.groups);
    zlistx_destroy (&self->runs.agents_out);
    zlistx_destroy (&self->runs.agents_always);
    zhashx_destroy (&self->runs.pending);
    zlistx_destroy (&self->runs.open_batches);
    zhashx_destroy (&self->runs.batches);
    xxl_enc_destroy (&self->runs.item_enc);
    zchunk_destroy (&self->runs.text);
}

void
engine_runs_expire (server_t *self)
{
    int64_t now = zclock_mono ();
    zlistx_t *expired = zlistx_new ();
    for (pending_t *pending = (pending_t *) zhashx_first (self->runs.pending); pending;
         pending = (pending_t *) zhashx_next (self->runs.pending))
        if (pending->deadline <= now)
            zlistx_add_end (expired, pending);
    for (pending_t *pending = (pending_t *) zlistx_first (expired); pending;
         pending = (pending_t *) zlistx_next (expired)) {
        if (pending->kind == PENDING_RUN && pending->ask)
            engine_ask_answered (self, pending, 0, pending->gone? NULL: "no answer");
        else
        if (pending->kind == PENDING_RUN && pending->gone)
            engine_reroute (self, pending->log_id, pending->note, pending->address);
        else
        if (pending->kind == PENDING_RUN
        &&  !engine_doubt_add (self, pending->log_id, pending->note, pending->address,
                               pending->presumed, pending->stamp, pending->rid,
                               pending->rid_size)) {
            char text [128];
            snprintf (text, sizeof text, "no answer from the agent within %d ms",
                      self->config.run_timeout_ms);
            engine_run_done (self, pending, XXL_CODE_FAIL, text);
        }
        else
        if (pending->kind == PENDING_PROBE)
            engine_probe_answer (self, pending, 0, "no answer within the probe timeout");
        else
        if (pending->client && pending->gone) {
            //  The send failed: the agent's connection had closed
            char text [400];
            snprintf (text, sizeof text, "agent '%s' is not connected (its connection"
                      " closed)", pending->address);
            xxl_enc_reply (self->enc, pending->client_id, XXL_UNAVAILABLE, text);
            engine_queue_client (self, zframe_data (pending->client),
                          zframe_size (pending->client));
            engine_audit_answer (self, pending, XXL_UNAVAILABLE);
        }
        else
        if (pending->client) {
            char text [400];
            snprintf (text, sizeof text, "agent '%s' did not answer within %d ms",
                      pending->address, self->config.request_timeout_ms);
            xxl_enc_reply (self->enc, pending->client_id, XXL_NO_ANSWER, text);
            engine_queue_client (self, zframe_data (pending->client),
                          zframe_size (pending->client));
            engine_audit_answer (self, pending, XXL_NO_ANSWER);
        }
        zhashx_delete (self->runs.pending, &pending->id);
    }
    //  Batches whose items all expired: their answer is of no use now
    zlistx_purge (expired);
    for (run_batch_t *batch = (run_batch_t *) zhashx_first (self->runs.batches); batch;
         batch = (run_batch_t *) zhashx_next (self->runs.batches))
        if (batch->deadline <= now)
            zlistx_add_end (expired, batch);
    for (run_batch_t *batch = (run_batch_t *) zlistx_first (expired); batch;
         batch = (run_batch_t *) zlistx_next (expired)) {
        engine_batch_expire (self, batch);
        zhashx_delete (self->runs.batches, &batch->id);
    }
    zlistx_destroy (&expired);
    engine_doubts_check (self);
}

//  A BEAT to the connection rid: false when it has closed
bool
engine_runs_beat (server_t *self, const void *rid, size_t rid_size)
{
    void *handle = zsock_resolve (self->agents);
    self->sent |= XXL_SENT_AGENTS;
    xxl_enc_request (self->enc, "BEAT", engine_request_id (self));
    size_t size;
    const void *data = xxl_enc_finish (self->enc, &size);
    int rc = zmq_send (handle, rid, rid_size, ZMQ_SNDMORE);
    if (rc >= 0)
        rc = zmq_send (handle, data, size, 0);
    return rc >= 0 || zmq_errno () != EHOSTUNREACH;
}

//  (a closed one is an agent restarted before the liveness beat saw its
//  old connection close: its address moves at once)
bool
engine_runs_held_open (server_t *self, zframe_t *rid, const char *app, const char *address)
{
    size_t size = 0;
    const void *route = xxl_registry_route (self->registry, address, &size);
    if (!route || (size == zframe_size (rid) && memcmp (route, zframe_data (rid), size) == 0))
        return false;
    if (engine_runs_beat (self, route, size))
        return true;
    char name [300], where [300];
    engine_warn_limited (&self->runs.log_moved, "registry: %s/%s registered again on a new"
                         " connection: its old one had closed", xxl_printable (app, name, sizeof name),
                         xxl_printable (address, where, sizeof where));
    zframe_t *closed = zframe_new (route, size);
    xxl_registry_gone (self->registry, zframe_data (closed), zframe_size (closed));
    zframe_destroy (&closed);
    return false;
}

//  Every liveness period (xxl_liveness_period), and soon after the monitor saw some connection
//  close, a BEAT to each connection the registry holds (once, whatever its
//  addresses): ZeroMQ does not say which peer's connection closed (the
//  monitor names a file descriptor), but a send to it then fails: its
//  addresses' close is noted (xxl_heard_closed: lost_after counts from
//  it), and they are shown and routed as not connected from then on
//  (instead of until the dead time), and those that parted from it
//  (unregistered or expired, kept for a draining agent's LOG, KILL and
//  results) are forgotten.
//  The agent's REPLY is ignored.
void
engine_runs_liveness (server_t *self)
{
    self->runs.probed_at = zclock_mono ();
    zlistx_t *gone = zlistx_new ();
    zlistx_set_destructor (gone, (zlistx_destructor_fn *) zframe_destroy);
    size_t rid_size;
    for (const void *rid = xxl_registry_rid_first (self->registry, &rid_size); rid;
         rid = xxl_registry_rid_next (self->registry, &rid_size))
        if (!engine_runs_beat (self, rid, rid_size))
            zlistx_add_end (gone, zframe_new (rid, rid_size));
    //  (after the walk: forgetting a connection changes what it walks)
    int64_t now = zclock_mono ();
    for (zframe_t *rid = (zframe_t *) zlistx_first (gone); rid;
         rid = (zframe_t *) zlistx_next (gone)) {
        //  (its addresses' runs may be declared lost lost_after from
        //  now, within their run lease: xxl_heard.h)
        size_t count = xxl_registry_rid_connected (self->registry, zframe_data (rid),
                                                   zframe_size (rid), NULL, 0);
        const char **addresses = count? (const char **) malloc (count * sizeof (char *)): NULL;
        assert (addresses || !count);
        count = xxl_registry_rid_connected (self->registry, zframe_data (rid),
                                            zframe_size (rid), addresses, count);
        for (size_t i = 0; i < count; i++)
            xxl_heard_closed (self->heard, addresses [i], now, self->config.lost_after_ms);
        free (addresses);
        xxl_registry_gone (self->registry, zframe_data (rid), zframe_size (rid));
    }
    zlistx_destroy (&gone);
    engine_moved_check (self);
}

zsock_t *
engine_runs_monitor_start (server_t *self)
{
    assert (self->agents && !self->runs.monitor);
    char endpoint [80];
    snprintf (endpoint, sizeof endpoint, "inproc://xxl-agents-monitor-%p", (void *) self);
    if (zmq_socket_monitor (zsock_resolve (self->agents), endpoint, ZMQ_EVENT_DISCONNECTED)) {
        zsys_warning ("server: no monitor of the agents socket (%s): a closed connection is"
                      " found by the next liveness probe", zmq_strerror (zmq_errno ()));
        return NULL;
    }
    self->runs.monitor = zsock_new (ZMQ_PAIR);
    if (self->runs.monitor && zsock_connect (self->runs.monitor, "%s", endpoint)) {
        zsock_destroy (&self->runs.monitor);
        zmq_socket_monitor (zsock_resolve (self->agents), NULL, 0);
    }
    return self->runs.monitor;
}

int64_t
engine_runs_monitor_read (server_t *self)
{
    bool closed = false;
    zmq_msg_t part;
    zmq_msg_init (&part);
    //  (each event: a frame of its number and value, then the endpoint)
    while (self->runs.monitor
       &&  zmq_msg_recv (&part, zsock_resolve (self->runs.monitor), ZMQ_DONTWAIT) >= 0) {
        if (zmq_msg_size (&part) >= 2) {
            uint16_t event;
            memcpy (&event, zmq_msg_data (&part), 2);
            closed |= event == ZMQ_EVENT_DISCONNECTED;
        }
        while (zmq_msg_more (&part) && zmq_msg_recv (&part, zsock_resolve (self->runs.monitor), 0) >= 0)
            ;
    }
    zmq_msg_close (&part);
    if (!closed)
        return 0;
    int64_t soon = zclock_mono () + XXL_CLOSED_PROBE_MS;
    int64_t gap = self->runs.probed_at + XXL_PROBE_GAP_MS;
    return soon > gap? soon: gap;
}

//  The router plugins routes are judged and picked by
xxl_routers_t *
engine_runs_routers (server_t *self)
{
    return self->runs.routers;
}
