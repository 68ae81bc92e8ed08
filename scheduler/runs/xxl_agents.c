/*  xxl_agents.c -- the engine's side of the agent protocol.

    Requests to agents (RUN, singly or in batches, LOG, KILL, BEAT,
    IDLE_BEAT) are pending entries with a deadline; answers are matched by
    id and count only from the connection the request went to.  Agent
    messages: REGISTER (also the heartbeat; its reply carries the clock),
    UNREGISTER, CALLBACK batches, REPLY; and the router pool's probes and
    routed results.
*/

#include "xxl_engine.h"
#include "xxl_tags.h"

static void s_batch_answer (server_t *self, run_batch_t *batch, xxl_msg_t *msg);
static void s_agent_reply (server_t *self, zframe_t *rid, uint64_t id, int code,
                           const char *msg);
static void s_awaited_back (server_t *self, const char *address);
static void s_agent_register (server_t *self, zframe_t *rid, xxl_msg_t *msg, int remove,
                              const xxl_who_t *who);
static void s_agent_callback (server_t *self, zframe_t *rid, xxl_msg_t *msg);
static void s_foreign_reply (server_t *self, uint64_t id);

//  Agent requests

//  The agent's answer to a batch RUN: one {code, msg} per item, in order
static void
s_batch_answer (server_t *self, run_batch_t *batch, xxl_msg_t *msg)
{
    const msgpack_object *root = xxl_msg_root (msg);
    const msgpack_object *code_obj = xxl_msg_get (root, "code");
    int code = code_obj && code_obj->type == MSGPACK_OBJECT_POSITIVE_INTEGER
               && code_obj->via.u64 < 1000? (int) code_obj->via.u64: XXL_FAILURE;
    const char *text = xxl_msg_str (msg, NULL, "msg", 0, XXL_MSG_MAX_STR, NULL);
    const msgpack_object *content = xxl_msg_get (root, "content");
    size_t answered = code == XXL_OK && content && content->type == MSGPACK_OBJECT_ARRAY
                    ? content->via.array.size: 0;
    for (size_t i = 0; i < batch->count; i++) {
        if (i % 64 == 63)
            engine_long_work (self);
        pending_t *pending = batch->fires? NULL
                           : (pending_t *) zhashx_lookup (self->runs.pending, &batch->pending_ids [i]);
        if (!pending && !batch->fires)
            continue;                   //  its deadline passed already
        int item_code = code == XXL_OK? XXL_FAILURE: code;
        const char *item_text = code == XXL_OK? "the agent's batch answer has no item for this run"
                                              : text;
        char buffer [4096];
        if (i < answered) {
            const msgpack_object *item = &content->via.array.ptr [i];
            const msgpack_object *c = item->type == MSGPACK_OBJECT_MAP
                                    ? xxl_msg_get (item, "code"): NULL;
            const msgpack_object *m = item->type == MSGPACK_OBJECT_MAP
                                    ? xxl_msg_get (item, "msg"): NULL;
            item_code = c && c->type == MSGPACK_OBJECT_POSITIVE_INTEGER && c->via.u64 < 1000
                      ? (int) c->via.u64: XXL_FAILURE;
            item_text = NULL;
            //  (str or bin, as every text of the protocol)
            if (m && (m->type == MSGPACK_OBJECT_STR || m->type == MSGPACK_OBJECT_BIN)) {
                uint32_t size = m->type == MSGPACK_OBJECT_STR? m->via.str.size: m->via.bin.size;
                const char *ptr = m->type == MSGPACK_OBJECT_STR? m->via.str.ptr: m->via.bin.ptr;
                size_t len = size < sizeof buffer - 1? size: sizeof buffer - 1;
                memcpy (buffer, ptr, len);
                buffer [len] = 0;
                if (memchr (buffer, 0, len))
                    len = strlen (buffer);
                item_text = buffer;
            }
            else
            if (!c || c->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
                item_text = "the agent's answer for this run has no valid code";
        }
        if (pending) {
            if (!engine_run_busy (self, pending->log_id, pending->note, pending->address,
                                 item_code)
            &&  !engine_run_expired (self, pending->log_id, pending->note, pending->address,
                                     item_code, item_text))
                engine_run_done (self, pending, item_code, item_text);
            zhashx_delete (self->runs.pending, &batch->pending_ids [i]);
        }
        else {
            plan_t *plan = batch->fires [i].plan;
            int64_t presumed = engine_section_chars (plan->note, plan->address);
            if (!engine_run_busy (self, plan->log_id, plan->note, plan->address, item_code)
            &&  !engine_run_expired (self, plan->log_id, plan->note, plan->address,
                                     item_code, item_text))
                engine_run_answer (self, plan->log_id, plan->snap->job.id, plan->note, plan->address, presumed,
                                   batch->fires [i].stamp, item_code, item_text);
        }
    }
    zhashx_delete (self->runs.batches, &batch->id);
}


void
engine_batch_expire (server_t *self, run_batch_t *batch)
{
    char text [128];
    if (batch->gone) {
        for (size_t i = 0; batch->fires && i < batch->count; i++) {
            plan_t *plan = batch->fires [i].plan;
            if (plan)
                engine_reroute (self, plan->log_id, plan->note, plan->address);
        }
        return;
    }
    snprintf (text, sizeof text, "no answer from the agent within %d ms",
              self->config.run_timeout_ms);
    for (size_t i = 0; batch->fires && i < batch->count; i++) {
        plan_t *plan = batch->fires [i].plan;
        int64_t presumed = engine_section_chars (plan->note, plan->address);
        if (!engine_doubt_add (self, plan->log_id, plan->note, plan->address, presumed,
                               batch->fires [i].stamp, batch->rid, batch->rid_size))
            engine_run_answer (self, plan->log_id, plan->snap->job.id, plan->note, plan->address, presumed,
                               batch->fires [i].stamp, XXL_CODE_FAIL, text);
    }
}

//  --------------------------------------------------------------------
//  Agent messages

static void
s_agent_reply (server_t *self, zframe_t *rid, uint64_t id, int code, const char *msg)
{
    xxl_enc_reply (self->enc, id, code, msg);
    engine_queue_agent (self, zframe_data (rid), zframe_size (rid), 0);
}

//  An agent alive at the last stop registered again: the warm-up ends
//  when the last one is back
static void
s_awaited_back (server_t *self, const char *address)
{
    for (size_t i = 0; i < self->runs.awaited_count; i++)
        if (self->runs.awaited [i] && streq (self->runs.awaited [i], address)) {
            zstr_free (&self->runs.awaited [i]);
            if (--self->runs.awaited_left == 0) {
                zsys_info ("registry: the %zu agent(s) of the last run are back;"
                           " warm-up over", self->runs.awaited_count);
                self->warm_until = 0;
            }
            break;
        }
}

//  How many addresses are routed to rid's connection (or parted from it)
static size_t
s_rid_addresses (server_t *self, zframe_t *rid)
{
    size_t count = 0;
    xxl_registry_rid_address (self->registry, zframe_data (rid), zframe_size (rid), &count);
    return count;
}

//  Whether the registry lists address for some app (live or not yet
//  expired)
static bool
s_address_listed (server_t *self, const char *address)
{
    return xxl_registry_listed (self->registry, address);
}

//  An app that lists address, in the registry or in the store's registry
//  rows of the dead time (they outlive a restart), and that who's apps do
//  not: NULL when none (the string lives until the next call)
static const char *
s_address_foreign_app (server_t *self, const char *address, const xxl_who_t *who)
{
    size_t cursor = 0;
    xxl_registry_entry_t entry;
    while (xxl_registry_each (self->registry, &cursor, &entry) == 0)
        if (streq (entry.address, address) && !xxl_who_has_app (who, entry.app)) {
            free (self->runs.foreign_apps);
            self->runs.foreign_apps = strdup (entry.app);
            return self->runs.foreign_apps;
        }
    char *apps = xxl_store_registry_apps (self->store, address, engine_store_now (self)
                                                          - (int64_t) self->config.dead_s * 1000);
    char *save = NULL;
    for (char *app = apps? strtok_r (apps, ",", &save): NULL; app; app = strtok_r (NULL, ",", &save))
        if (!xxl_who_has_app (who, app)) {
            free (self->runs.foreign_apps);
            self->runs.foreign_apps = strdup (app);
            free (apps);
            return self->runs.foreign_apps;
        }
    free (apps);
    return NULL;
}

//  Whether a connection may (un)register address for app: its key must
//  be an agent's listing app (xxl_access.c), for UNREGISTER too; to
//  register, its apps must list every app the address is an agent of (in
//  the registry, or the store's rows of the dead time); an address
//  another agent key registered stays that key's while it has a route or
//  a registry entry; only the connection an address is registered on
//  (and, with keys, only its key) may unregister it; with keys, an
//  address routed to another connection that is open (it beats, or at
//  least has not closed) is not registered on this one, whatever the
//  key, until that one unregisters, closes or is past the dead time.
//  0, or -1 with the reason for a 403 (logged, at most a line a minute).
static int
s_agent_binding (server_t *self, zframe_t *rid, const char *app, const char *address,
                 int remove, const xxl_who_t *who, char *why, size_t whylen)
{
    size_t route_size = 0;
    const void *route = xxl_registry_route_last (self->registry, address, &route_size);
    bool same = route && route_size == zframe_size (rid)
             && memcmp (route, zframe_data (rid), route_size) == 0;
    char where [300];
    int rc = 0;
    if (remove) {
        const char *owner = self->keys? xxl_registry_owner (self->registry, address): NULL;
        if (engine_may_register (who, app, why, whylen))
            rc = -1;                    //  (even an address the registry no longer
                                        //  holds: its store rows are app's)
        else
        if ((route && !same) || (owner && who && strneq (owner, who->public_key))) {
            snprintf (why, whylen, "address '%s' is registered on another connection:"
                      " only that one may unregister it",
                      xxl_printable (address, where, sizeof where));
            rc = -1;
        }
    }
    else
    if (engine_may_register (who, app, why, whylen))
        rc = -1;
    else
    if (self->keys && !same && s_rid_addresses (self, rid) >= XXL_ADDRESSES_PER_CONNECTION) {
        //  (without keys every peer is admin, and may do worse)
        snprintf (why, whylen, "an agent key's connection may register at most %d addresses",
                  XXL_ADDRESSES_PER_CONNECTION);
        rc = -1;
    }
    else
    if (self->keys) {
        const char *foreign = s_address_foreign_app (self, address, who);
        const char *owner = xxl_registry_owner (self->registry, address);
        char other [300];
        if (foreign) {
            snprintf (why, whylen, "address '%s' is an agent of app '%s', which this key's"
                      " apps do not list", xxl_printable (address, where, sizeof where),
                      xxl_printable (foreign, other, sizeof other));
            rc = -1;
        }
        else
        if (owner && strneq (owner, who->public_key) && !same
        &&  (route || s_address_listed (self, address))) {
            snprintf (why, whylen, "address '%s' is another agent key's until that agent"
                      " leaves the registry", xxl_printable (address, where, sizeof where));
            rc = -1;
        }
        else
        if (!same && engine_runs_held_open (self, rid, app, address)) {
            snprintf (why, whylen, "address '%s' is registered on another connection that is"
                      " open: it is this one's once that one unregisters, closes or is past"
                      " the dead time (%d s)", xxl_printable (address, where, sizeof where),
                      (int) self->config.dead_s);
            rc = -1;
        }
        free (self->runs.foreign_apps);
        self->runs.foreign_apps = NULL;
    }
    if (rc)
        engine_warn_limited (&self->runs.log_binding, "registry: %s refused (403): %s",
                             remove? "UNREGISTER": "REGISTER", why);
    return rc;
}

//  How long an address counts as shared by two live agents after the last
//  sign of it (a connection it had moved from registering it again)
#define XXL_TWIN_MS 600000

//  Each address that moved from a connection then open (moved_from):
//  forgotten once it is not connected (it is asked about when it comes
//  back) or is on that connection again; a BEAT to that connection tells
//  whether it is still open; once it closed, the agent holding the
//  address is asked about its open runs.  Called at each liveness walk.
void
engine_moved_check (server_t *self)
{
    void *handle = zsock_resolve (self->agents);
    self->sent |= XXL_SENT_AGENTS;
    zlistx_t *forget = zlistx_new ();           //  addresses (copies)
    zlistx_t *ask = zlistx_new ();              //  of them, those to ask about
    zlistx_set_destructor (forget, (zlistx_destructor_fn *) zstr_free);
    for (zframe_t *old = (zframe_t *) zhashx_first (self->runs.moved_from); old;
         old = (zframe_t *) zhashx_next (self->runs.moved_from)) {
        const char *address = (const char *) zhashx_cursor (self->runs.moved_from);
        size_t route_size = 0;
        const void *route = xxl_registry_route (self->registry, address, &route_size);
        bool closed = false;
        if (route && !(route_size == zframe_size (old)
                       && memcmp (route, zframe_data (old), route_size) == 0)) {
            xxl_enc_request (self->enc, "BEAT", engine_request_id (self));
            size_t size;
            const void *data = xxl_enc_finish (self->enc, &size);
            int rc = zmq_send (handle, zframe_data (old), zframe_size (old), ZMQ_SNDMORE);
            if (rc >= 0)
                rc = zmq_send (handle, data, size, 0);
            if (rc >= 0 || zmq_errno () != EHOSTUNREACH)
                continue;               //  (still open: two agents on one address)
            closed = true;
        }
        //  Forgotten: not connected, or on its old connection again (whose
        //  agent never left: nobody is asked); asked about: the old one
        //  closed while another holds the address
        char *copy = strdup (address);
        assert (copy);
        zlistx_add_end (forget, copy);
        if (closed)
            zlistx_add_end (ask, copy);
    }
    //  (after the walk: asking changes nothing it walks, forgetting does)
    for (char *address = (char *) zlistx_first (ask); address;
         address = (char *) zlistx_next (ask)) {
        size_t route_size = 0;
        const void *route = xxl_registry_route (self->registry, address, &route_size);
        if (route)
            engine_check_open_runs (self, address, "holds the address its old connection had"
                                    " (closed now)", route, route_size);
    }
    for (char *address = (char *) zlistx_first (forget); address;
         address = (char *) zlistx_next (forget))
        zhashx_delete (self->runs.moved_from, address);
    zlistx_destroy (&ask);
    zlistx_destroy (&forget);
    //  Expired twin marks go (the walk's own list: deleting changes the table)
    zlistx_t *expired = zlistx_new ();
    int64_t now = zclock_mono ();
    for (int64_t *until = (int64_t *) zhashx_first (self->runs.twins); until;
         until = (int64_t *) zhashx_next (self->runs.twins))
        if (*until <= now)
            zlistx_add_end (expired, (void *) zhashx_cursor (self->runs.twins));
    for (const char *address = (const char *) zlistx_first (expired); address;
         address = (const char *) zlistx_next (expired))
        zhashx_delete (self->runs.twins, address);
    zlistx_destroy (&expired);
}

//  The agent tags a REGISTER says (`tags`, "K=V,...": xxl_tags.h) in
//  their canonical form into tags ("" when absent); a bad set is latched
//  in msg
static void
s_agent_tags (xxl_msg_t *msg, char *tags, size_t size)
{
    tags [0] = 0;
    const char *said = xxl_msg_str (msg, NULL, "tags", 0, XXL_TAGS_TEXT_MAX, NULL);
    char why [300];
    if (!xxl_msg_error (msg) && xxl_tags_normalize (said, tags, size, why, sizeof why) < 0)
        xxl_msg_fail (msg, "tags: %s", why);
}

static void
s_agent_register (server_t *self, zframe_t *rid, xxl_msg_t *msg, int remove,
                  const xxl_who_t *who)
{
    const char *group = xxl_msg_str (msg, NULL, "registryGroup", 0, 32, "EXECUTOR");
    const char *app = xxl_msg_str (msg, NULL, "registryKey", 1, XXL_MSG_MAX_NAME, NULL);
    const char *address = xxl_msg_str (msg, NULL, "registryValue", 1, XXL_MSG_MAX_NAME, NULL);
    const char *handlers = xxl_msg_str (msg, NULL, "handlers", 0, XXL_MAX_TEXT, "");
    int64_t run_batch = xxl_msg_int (msg, NULL, "runBatch", 0, INT32_MIN, INT32_MAX, 0);
    int64_t run_lease = xxl_msg_int (msg, NULL, "runLease", 0, 0, 86400, 0);
    char tags [XXL_TAGS_BUF];
    s_agent_tags (msg, tags, sizeof tags);
    if (!xxl_msg_error (msg) && strneq (group, "EXECUTOR"))
        xxl_msg_fail (msg, "registryGroup must be EXECUTOR");
    if (!xxl_msg_error (msg) && (!*app || !*address))
        xxl_msg_fail (msg, "registryKey and registryValue must not be empty");
    if (!xxl_msg_error (msg) && (engine_has_control (app) || engine_has_control (address)))
        xxl_msg_fail (msg, "registryKey and registryValue must not hold control characters");
    if (xxl_msg_error (msg)) {
        s_agent_reply (self, rid, xxl_msg_id (msg), XXL_BAD_REQUEST, xxl_msg_error (msg));
        return;
    }
    char why [512];
    if (s_agent_binding (self, rid, app, address, remove, who, why, sizeof why)) {
        s_agent_reply (self, rid, xxl_msg_id (msg), XXL_FORBIDDEN, why);
        return;
    }
    char name [300], where [300];
    bool check_open = false;
    if (remove) {
        if (xxl_registry_remove (self->registry, app, address) == 0)
            engine_info_limited (&self->runs.log_registered, "registry: %s/%s unregistered",
                                 xxl_printable (app, name, sizeof name),
                                 xxl_printable (address, where, sizeof where));
        xxl_store_registry_remove (self->store, app, address);
        zhashx_insert (self->apps_changed, app, (void *) 1);
    }
    else {
        //  (another connection the scheduler holds open had the address,
        //  not unregistered from it: two agents with one address, or an
        //  agent back before its old connection closed)
        size_t held_size = 0;
        const void *held = xxl_registry_route_last (self->registry, address, &held_size);
        bool moved = held && !xxl_registry_parting (self->registry, address)
                  && (held_size != zframe_size (rid)
                              || memcmp (held, zframe_data (rid), held_size) != 0);
        //  The connection the address moved from registers it again: that
        //  agent lives on beside the other, two agents share the address
        zframe_t *was = (zframe_t *) zhashx_lookup (self->runs.moved_from, address);
        if (was && zframe_size (was) == zframe_size (rid)
        &&  memcmp (zframe_data (was), zframe_data (rid), zframe_size (rid)) == 0) {
            int64_t *until = (int64_t *) zhashx_lookup (self->runs.twins, address);
            if (!until) {
                until = (int64_t *) zmalloc (sizeof (int64_t));
                zhashx_insert (self->runs.twins, address, until);
            }
            *until = zclock_mono () + XXL_TWIN_MS;
        }
        //  (a copy: the beat may free the connection held points into)
        zframe_t *held_copy = moved? zframe_new (held, held_size): NULL;
        check_open = held == NULL;
        int changed = xxl_registry_beat (self->registry, app, address, zframe_data (rid),
                                         zframe_size (rid), handlers, zclock_mono ());
        held = NULL;
        if (changed == XXL_REGISTRY_FULL)
            check_open = false;
        if (changed != XXL_REGISTRY_FULL && moved)
            zhashx_update (self->runs.moved_from, address, held_copy);
        else
            zframe_destroy (&held_copy);
        if (check_open)
            zhashx_delete (self->runs.moved_from, address);
        if (moved && changed != XXL_REGISTRY_FULL)
            engine_warn_limited (&self->runs.log_moved, "registry: %s/%s moved to another"
                                 " connection while its old one is open: two agents with"
                                 " one address (each needs its own), or an agent back"
                                 " before its old connection closed",
                                 xxl_printable (app, name, sizeof name),
                                 xxl_printable (address, where, sizeof where));
        if (changed == XXL_REGISTRY_FULL) {
            snprintf (why, sizeof why, "the registry holds its limit of %zu agents"
                      " (scheduler/registry/agents): %s/%s not registered",
                      xxl_registry_limit (self->registry),
                      xxl_printable (app, name, sizeof name),
                      xxl_printable (address, where, sizeof where));
            engine_warn_limited (&self->runs.log_registry_full, "registry: REGISTER refused (429): %s",
                                 why);
            s_agent_reply (self, rid, xxl_msg_id (msg), XXL_BUSY, why);
            return;
        }
        //  (before anything can send it a RUN; a bad acceptedMax is
        //  ignored like the agent's figures: outside agents have none)
        const msgpack_object *accepted = xxl_msg_get (xxl_msg_root (msg), "acceptedMax");
        if (accepted && accepted->type == MSGPACK_OBJECT_POSITIVE_INTEGER
        &&  accepted->via.u64 <= INT64_MAX)
            engine_log_ids_past (self, (int64_t) accepted->via.u64, address);
        //  (the key that registered it: the address stays that key's while
        //  the registry holds it)
        if (self->keys && who)
            xxl_registry_set_owner (self->registry, address, who->public_key);
        if (self->runs.awaited_left && zclock_mono () < self->warm_until)
            s_awaited_back (self, address);
        //  (absent or <= 1: the single form)
        xxl_registry_set_tags (self->registry, address, tags);
        xxl_registry_set_run_batch (self->registry, address,
                                    (int) (run_batch < 0? 0: run_batch < XXL_RUN_BATCH_MAX
                                                             ? run_batch: XXL_RUN_BATCH_MAX));
        xxl_store_registry_beat (self->store, app, address, engine_store_now (self));
        xxl_heard_note (self->heard, address, zclock_mono (), run_lease * 1000);
        if (self->metrics.labels)       //  (its own figures, for /metrics)
            xxl_labels_agent_register (self->metrics.labels, address, xxl_msg_root (msg));
        if (changed > 0) {
            engine_info_limited (&self->runs.log_registered, "registry: %s/%s registered",
                                 xxl_printable (app, name, sizeof name),
                                 xxl_printable (address, where, sizeof where));
            zhashx_insert (self->apps_changed, app, (void *) 1);
        }
    }
    //  The scheduler's steady clock, from which agents judge a RUN's expireTime
    xxl_enc_reply (self->enc, xxl_msg_id (msg), XXL_OK, NULL);
    xxl_enc_key (self->enc, "content");
    xxl_enc_map_begin (self->enc);
    xxl_enc_kint (self->enc, "now", engine_clock (self));
    xxl_enc_map_end (self->enc);
    //  (sent even when the turn's commit fails: the registry is in memory,
    //  and an agent that hears nothing takes its link for down)
    engine_queue_agent_to (self, zframe_data (rid), zframe_size (rid), 0, !remove);
    if (check_open)
        engine_check_open_runs (self, address, "registered on a new connection", zframe_data (rid),
                                zframe_size (rid));
}

//  The address log_id was sent to, when it is one of the addresses of the
//  connection rid (which has several); else NULL, and *failed set when
//  the store could not be read
static const char *
s_row_address (server_t *self, zframe_t *rid, int64_t log_id, bool *failed)
{
    xxl_log_t log;
    int rc = xxl_store_log_load (self->store, log_id, &log);
    if (rc < 0)
        *failed = true;
    if (rc)
        return NULL;
    size_t size = 0;
    const void *route = log.executor_address
                      ? xxl_registry_route_last (self->registry, log.executor_address, &size)
                      : NULL;
    //  (the registry's copy: it outlives the row)
    const char *address = route && size == zframe_size (rid)
                       && memcmp (route, zframe_data (rid), size) == 0
                        ? xxl_registry_address (self->registry, log.executor_address): NULL;
    xxl_log_free (&log);
    return address;
}

#define XXL_LATE_MARK "\n[a result came after the run was given up: "

//  Epoch ms as UTC ISO 8601 (2026-11-28T18:05:00.123Z)
static void
s_utc (int64_t ms, char *out, size_t size)
{
    time_t t = (time_t) (ms / 1000);
    struct tm tm;
    gmtime_r (&t, &tm);
    snprintf (out, size, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
              tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int) (ms % 1000));
}

//  A callback that changed nothing: a repeat (the row was finished), a
//  row another address was sent, or one whose trigger failed (logged, at
//  most a line a minute: a peer may send them in a flood).  A result for
//  a run this scheduler had given up on (declared lost, or its RUN failed
//  unanswered) is recorded beside the row, once, in its handleMsg: the
//  row keeps its outcome (a retry may have run since), and the user sees
//  that the run did happen.  Only from the connection the row's address
//  is registered on (address non-NULL): a forger cannot write there.
static void
s_foreign_callback (server_t *self, int64_t log_id, const char *address, int code,
                    const char *msg)
{
    xxl_log_t log;
    if (xxl_store_log_load (self->store, log_id, &log))
        return;                         //  (no such row: nothing to say)
    bool finished = log.handle_code != 0;
    bool failed = log.trigger_code != 0 && log.trigger_code != XXL_CODE_SUCCESS;
    bool given_up = (finished && log.handle_msg && strncmp (log.handle_msg, "lost:", 5) == 0)
                 || (failed && log.trigger_msg && strstr (log.trigger_msg, "no answer from the agent"));
    bool noted = log.handle_msg && strstr (log.handle_msg, XXL_LATE_MARK + 1);
    //  (only from the row's own address, registered on the connection it
    //  came from: another agent cannot write beside a row not its own)
    if (address && !(log.executor_address && streq (log.executor_address, address)))
        given_up = false;
    if (given_up && noted && address) {
        xxl_log_free (&log);            //  (the late result again: its ack was lost)
        return;
    }
    if (given_up && address) {
        char when [96];
        s_utc (engine_now (), when, sizeof when);
        //  (a row without handleMsg: the note starts it, no newline first)
        const char *mark = log.handle_msg && *log.handle_msg? XXL_LATE_MARK: XXL_LATE_MARK + 1;
        char *text = zsys_sprintf ("%s%d at %s%s%.2000s]", mark, code, when,
                                   msg && *msg? ": ": "", msg? msg: "");
        if (text && xxl_store_log_append_handle_msg (self->store, log_id, text) == 0)
            engine_warn_limited (&self->runs.log_late, "server: log %" PRId64 ": a result (%d) came"
                                 " from %s after the run was given up on: recorded beside the"
                                 " row", log_id, code, address);
        zstr_free (&text);
        xxl_log_free (&log);
        return;
    }
    xxl_log_free (&log);
    if (finished)
        return;
    self->runs.foreign_callbacks++;
    int64_t now = zclock_mono ();
    if (now - self->runs.foreign_callbacks_logged < 60000)
        return;
    zsys_warning ("server: %" PRId64 " agent callbacks ignored: their run %s (the latest"
                  " for logId %" PRId64 ")", self->runs.foreign_callbacks,
                  failed? "had failed its trigger"
                        : "was sent to an address not registered on their connection",
                  log_id);
    self->runs.foreign_callbacks = 0;
    self->runs.foreign_callbacks_logged = now;
}

//  How far a CALLBACK item's startTime (the agent's estimate of this
//  scheduler's clock) may be before its trigger time or after now and
//  still be taken as the time its handler started
#define XXL_START_TOLERANCE_MS 1000

//  A finished run's trigger to handler start into xxl_trigger_start_seconds:
//  start is its item's startTime (0: none given), trigger its trigger time
//  (0: unknown); a start before the trigger or after now by more than the
//  tolerance is not believed (counted 0 when just before)
static void
s_observe_start (server_t *self, int64_t trigger, int64_t start, int64_t now)
{
    if (start <= 0 || trigger <= 0
    ||  start < trigger - XXL_START_TOLERANCE_MS || start > now + XXL_START_TOLERANCE_MS)
        return;
    xxl_histo_observe (&self->metrics.start, (double) (start - trigger) / 1000.0);
}

static void
s_agent_callback (server_t *self, zframe_t *rid, xxl_msg_t *msg)
{
    //  Results count only from a connection some address registered on
    //  (an agent's REGISTER goes first on every connection; one that was
    //  refused keeps its results and sends them again)
    size_t addresses = 0;
    const char *address = xxl_registry_rid_address (self->registry, zframe_data (rid),
                                                    zframe_size (rid), &addresses);
    if (!address) {
        s_agent_reply (self, rid, xxl_msg_id (msg), XXL_UNAUTHORIZED,
                       "this connection has not registered: REGISTER before CALLBACK");
        return;
    }
    size_t count;
    const msgpack_object *items = xxl_msg_array (msg, NULL, "items", 1, 10000, &count);
    if (xxl_msg_error (msg)) {
        s_agent_reply (self, rid, xxl_msg_id (msg), XXL_BAD_REQUEST, xxl_msg_error (msg));
        return;
    }
    if (!xxl_store_in_txn (self->store)) {
        //  This turn has no transaction (its begin failed: the store is
        //  down or its lock not had): nothing can be written, and a 200
        //  would make the agent drop the results
        s_agent_reply (self, rid, xxl_msg_id (msg), XXL_FAILURE, xxl_store_error (self->store));
        return;
    }
    char *own = strdup (address);       //  (the registry may change as rows finish)
    //  The items are judged first, then written in one call (one round
    //  trip on PostgreSQL), then followed up one by one.  A malformed
    //  item makes the reply 400 and nothing is written (all or nothing).
    int64_t now = engine_now ();
    xxl_store_done_t *done_items = count? (xxl_store_done_t *) calloc (count, sizeof *done_items)
                                        : NULL;
    char **capped = count? (char **) calloc (count, sizeof (char *)): NULL;
    int *done = count? (int *) calloc (count, sizeof (int)): NULL;
    int64_t *starts = count? (int64_t *) calloc (count, sizeof (int64_t)): NULL;
    int64_t *trigger_times = count? (int64_t *) calloc (count, sizeof (int64_t)): NULL;
    assert (!count || (done_items && capped && done && starts && trigger_times));
    size_t judged = 0, sent = 0;
    bool read_failed = false;
    for (size_t i = 0; i < count && !read_failed; i++) {
        if (i % 64 == 63)
            engine_long_work (self);
        const msgpack_object *item = &items [i];
        if (item->type != MSGPACK_OBJECT_MAP) {
            xxl_msg_fail (msg, "items[%zu] is not a map", i);
            break;
        }
        int64_t log_id = xxl_msg_int (msg, item, "logId", 1, 1, INT64_MAX, 0);
        int64_t code = xxl_msg_int (msg, item, "handleCode", 1, 1, 999, 0);
        const char *text = xxl_msg_str (msg, item, "handleMsg", 0, XXL_MSG_MAX_STR, NULL);
        //  (optional: when the handler started, epoch ms on our clock;
        //  logDateTime, optional, the RUN's, read below for startTime only)
        starts [i] = xxl_msg_int (msg, item, "startTime", 0, 0, INT64_MAX, 0);
        int64_t sent_time = xxl_msg_int (msg, item, "logDateTime", 0, 0, INT64_MAX, 0);
        if (xxl_msg_error (msg)) {
            //  (which item: the agent may drop it and send the others)
            char *why = strdup (xxl_msg_error (msg));
            assert (why);
            xxl_msg_clear_error (msg);
            if (log_id > 0)
                xxl_msg_fail (msg, "items[%zu] (logId %" PRId64 "): %s", i, log_id, why);
            else
                xxl_msg_fail (msg, "items[%zu]: %s", i, why);
            free (why);
            break;
        }
        if (text && strlen (text) > XXL_HANDLE_MSG_CAP) {
            //  (cut between characters, not inside one)
            size_t cut = XXL_HANDLE_MSG_CAP;
            while (cut > 0 && ((unsigned char) text [cut] & 0xc0) == 0x80)
                cut--;
            capped [i] = strndup (text, cut);
            text = capped [i];
        }
        //  A result counts only for a row sent to an address of this
        //  connection (within the update).  A repeated callback finds the
        //  row finished: a no-op; so does one for another agent's row
        const char *row_address = addresses == 1? own
                                : s_row_address (self, rid, log_id, &read_failed);
        if (read_failed)
            break;
        done_items [i] = (xxl_store_done_t) {
            .log_id = log_id, .address = row_address, .handle_time = now,
            .code = (int) code, .msg = text,
            .trigger_time = row_address? engine_accepted_stamp (self, log_id): 0
        };
        if (starts [i] && !done_items [i].trigger_time) {
            //  The trigger time the RUN carried, as the item repeats it
            //  (the row's, unless the agent lies, which it could about
            //  startTime as well)
            if (sent_time <= 0)
                starts [i] = 0;
            else
                trigger_times [i] = sent_time;
        }
        else
            trigger_times [i] = done_items [i].trigger_time;
        done [i] = 1;                   //  (no address of the connection: changes nothing)
        judged = i + 1;
    }
    if (xxl_msg_error (msg))
        judged = 0;                     //  (a malformed item: none counts)
    //  Those with an address, packed at the front
    xxl_store_done_t *batch = count? (xxl_store_done_t *) calloc (count, sizeof *batch): NULL;
    int *batch_done = count? (int *) calloc (count, sizeof (int)): NULL;
    size_t *batch_at = count? (size_t *) calloc (count, sizeof (size_t)): NULL;
    assert (!count || (batch && batch_done && batch_at));
    for (size_t i = 0; i < judged; i++)
        if (done_items [i].address) {
            batch_at [sent] = i;
            batch [sent++] = done_items [i];
        }
    //  (on a failure, the items before the failing one may be written:
    //  they are followed up; the rest are not, and the reply is 500)
    int failed = -1;
    size_t followed = 0;                //  items whose outcome is known
    if (!read_failed) {
        failed = sent? xxl_store_log_handle_done_many (self->store, batch, sent, batch_done): 0;
        followed = judged;
        for (size_t b = 0; b < sent; b++) {
            done [batch_at [b]] = batch_done [b];
            if (batch_done [b] < 0 && batch_at [b] < followed)
                followed = batch_at [b];
        }
    }
    for (size_t i = 0; i < followed; i++) {
        if (i % 64 == 63)
            engine_long_work (self);
        int64_t log_id = done_items [i].log_id;
        if (done [i] == 0) {
            int64_t job_id;
            engine_accepted_forget (self, log_id, &job_id);
            s_observe_start (self, trigger_times [i], starts [i], now);
            engine_run_ended_job (self, log_id, job_id, XXL_END_RESULT, done_items [i].code, now);
        }
        else
            s_foreign_callback (self, log_id, done_items [i].address, done_items [i].code,
                                done_items [i].msg);
    }
    for (size_t i = 0; i < count; i++)
        free (capped [i]);
    free (capped);
    free (done_items);
    free (done);
    free (starts);
    free (trigger_times);
    free (batch);
    free (batch_done);
    free (batch_at);
    if (failed) {
        free (own);
        s_agent_reply (self, rid, xxl_msg_id (msg), XXL_FAILURE, xxl_store_error (self->store));
        return;
    }
    free (own);
    if (xxl_msg_error (msg))
        s_agent_reply (self, rid, xxl_msg_id (msg), XXL_BAD_REQUEST, xxl_msg_error (msg));
    else
        s_agent_reply (self, rid, xxl_msg_id (msg), XXL_OK, NULL);
}

//  Answers a pool worker's probe (code 0: no answer)
void
engine_probe_answer (server_t *self, pending_t *pending, int code, const char *msg)
{
    xxl_enc_reply (self->enc, pending->client_id, code, msg);
    size_t size;
    const void *data = xxl_enc_finish (self->enc, &size);
    zmsg_t *zmsg = zmsg_new ();
    zmsg_addmem (zmsg, zframe_data (pending->client), zframe_size (pending->client));
    zmsg_addmem (zmsg, data, size);
    self->sent |= XXL_SENT_PROBES;
    zmsg_send (&zmsg, self->probes);
}

//  A probe request from a pool worker: BEAT or IDLE_BEAT to an agent
void
engine_handle_probe (server_t *self, zmsg_t *zmsg)
{
    zframe_t *rid = zmsg_pop (zmsg);
    zframe_t *body = zmsg_pop (zmsg);
    char reason [256];
    xxl_msg_t *msg = body? xxl_msg_decode (zframe_data (body), zframe_size (body), NULL,
                                           reason, sizeof reason): NULL;
    if (rid && msg) {
        const char *address = xxl_msg_str (msg, NULL, "address", 1, XXL_MSG_MAX_NAME, "");
        int64_t kind = xxl_msg_int (msg, NULL, "kind", 1, 1, 2, 1);
        int64_t job_id = xxl_msg_int (msg, NULL, "jobId", 0, 0, INT64_MAX, 0);
        int64_t timeout = xxl_msg_int (msg, NULL, "timeoutMs", 0, 1, 60000, 1000);
        char why [512] = "";
        pending_t *pending = xxl_msg_error (msg)? NULL:
            engine_agent_request (self, address, kind == XXL_PROBE_IDLE_BEAT? "IDLE_BEAT": "BEAT",
                                  PENDING_PROBE, (int) timeout, why, sizeof why);
        if (pending) {
            pending->client = zframe_dup (rid);
            pending->client_id = xxl_msg_id (msg);
            if (kind == XXL_PROBE_IDLE_BEAT)
                xxl_enc_kint (self->enc, "jobId", job_id);
            engine_agent_send (self, pending);
        }
        else {
            pending_t answer = { .client = rid, .client_id = xxl_msg_id (msg) };
            engine_probe_answer (self, &answer, 0, *why? why: xxl_msg_error (msg));
        }
    }
    xxl_msg_destroy (&msg);
    zframe_destroy (&rid);
    zframe_destroy (&body);
}

//  A routing decision from a pool worker: send the RUN, count slowness
void
engine_handle_routed (server_t *self, zmsg_t *zmsg)
{
    zframe_t *body = zmsg_pop (zmsg);
    char reason [256];
    xxl_msg_t *msg = body? xxl_msg_decode (zframe_data (body), zframe_size (body), NULL,
                                           reason, sizeof reason): NULL;
    if (msg) {
        int64_t log_id = xxl_msg_int (msg, NULL, "logId", 1, 1, INT64_MAX, 0);
        int64_t job_id = xxl_msg_int (msg, NULL, "jobId", 1, 1, INT64_MAX, 0);
        const char *address = xxl_msg_str (msg, NULL, "address", 0, XXL_MSG_MAX_NAME, NULL);
        const char *text = xxl_msg_str (msg, NULL, "msg", 0, XXL_MSG_MAX_STR, "");
        int64_t elapsed = xxl_msg_int (msg, NULL, "elapsedMs", 0, 0, INT64_MAX, 0);
        zhashx_delete (self->runs.routing, &log_id);
        if (!xxl_msg_error (msg) && !address && strstr (text, ", msg=busy:")) {
            //  FAILOVER or BUSYOVER found no address to take it now, and
            //  one at least is busy (back-pressure, engine_run_busy): routed
            //  again later, not failed
            int64_t delay = engine_busy_delay (self, log_id);
            engine_run_again (self, log_id, engine_now (), delay);
        }
        else
        if (!xxl_msg_error (msg)) {
            //  The router's lines, each ending in a new line, then the
            //  scheduler that routed it, or the failure when none
            //  answered.  (Named: two schedulers may route one row to one
            //  agent, the second after taking the row's share over while
            //  the first's pool probed; their sections then differ, so
            //  that each RUN's answer is told apart: engine_run_answer)
            size_t len = strlen (text);
            const char *eol = len > 0 && text [len - 1] != '\n'? "\n": "";
            char *note = address? zsys_sprintf ("%s%srouted by scheduler %s\n", text, eol,
                                                engine_lease_node (self))
                       : zsys_sprintf ("%s%strigger failed: no address answered", text, eol);
            engine_dispatch_row (self, log_id, address? address: "", note);
            zstr_free (&note);
            //  XXL-JOB's rule: over 500 ms more than 10 times this minute → slow pool
            if (elapsed > self->config.slow_ms) {
                int64_t *count = (int64_t *) zhashx_lookup (self->runs.slow_counts, &job_id);
                if (!count) {
                    count = (int64_t *) zmalloc (2 * sizeof (int64_t));
                    count [1] = job_id;
                    zhashx_insert (self->runs.slow_counts, &count [1], count);
                }
                if (++*count == self->config.slow_count + 1)
                    zsys_info ("server: job %" PRId64 " is slow to trigger; it moves to the slow pool",
                               job_id);
            }
        }
    }
    xxl_msg_destroy (&msg);
    zframe_destroy (&body);
}

//  Logs a reply that came from another connection than its request went
//  to, at most once a minute (a peer may send them in a flood)
static void
s_foreign_reply (server_t *self, uint64_t id)
{
    int64_t now = zclock_mono ();
    self->runs.foreign_replies++;
    if (now - self->runs.foreign_logged < 60000)
        return;
    zsys_warning ("server: %" PRIu64 " agent replies ignored: not from the connection their"
                  " request went to (the latest had id %" PRIu64 ")",
                  self->runs.foreign_replies, id);
    self->runs.foreign_replies = 0;
    self->runs.foreign_logged = now;
}

//  A reply from an agent to one of our requests.  It counts only when it
//  comes from the connection the request was sent to: a batch's, or the
//  one its address is registered on.
void
engine_agent_answer (server_t *self, zframe_t *rid, xxl_msg_t *msg)
{
    uint64_t id = xxl_msg_id (msg);
    pending_t *pending = (pending_t *) zhashx_lookup (self->runs.pending, &id);
    if (!pending) {
        run_batch_t *batch = (run_batch_t *) zhashx_lookup (self->runs.batches, &id);
        if (!batch)
            return;                     //  (late: its deadline already passed)
        size_t route_size = 0;
        const void *route = xxl_registry_route (self->registry, batch->address, &route_size);
        if ((batch->rid_size == zframe_size (rid)
             && memcmp (batch->rid, zframe_data (rid), batch->rid_size) == 0)
        ||  (route && route_size == zframe_size (rid)
             && memcmp (route, zframe_data (rid), route_size) == 0))
            s_batch_answer (self, batch, msg);
        else
            s_foreign_reply (self, id);
        return;
    }
    size_t route_size = 0;
    const void *route = pending->address
                      ? xxl_registry_route (self->registry, pending->address, &route_size): NULL;
    bool sent_there = pending->rid && pending->rid_size == zframe_size (rid)
                   && memcmp (pending->rid, zframe_data (rid), pending->rid_size) == 0;
    bool routed_there = route && route_size == zframe_size (rid)
                     && memcmp (route, zframe_data (rid), route_size) == 0;
    if (!sent_there && !routed_there) {
        s_foreign_reply (self, id);
        return;
    }
    const msgpack_object *code_obj = xxl_msg_get (xxl_msg_root (msg), "code");
    int code = code_obj && code_obj->type == MSGPACK_OBJECT_POSITIVE_INTEGER
               && code_obj->via.u64 < 1000? (int) code_obj->via.u64: XXL_FAILURE;
    const char *text = xxl_msg_str (msg, NULL, "msg", 0, XXL_MSG_MAX_STR, NULL);
    switch (pending->kind) {
        case PENDING_RUN:
            if (pending->ask)
                engine_ask_answered (self, pending, code, text);
            else
            if (!engine_run_busy (self, pending->log_id, pending->note, pending->address, code)
            &&  !engine_run_expired (self, pending->log_id, pending->note, pending->address,
                                     code, text))
                engine_run_done (self, pending, code, text);
            break;
        case PENDING_LOG:
        case PENDING_KILL: {
            int answered = code;
            if (pending->kind == PENDING_LOG) {
                char why [160];
                if (engine_log_page_encode (self, pending->client_id, code, text, msg,
                                            pending->from_byte, why, sizeof why)) {
                    //  (nothing of a malformed page reaches the client)
                    char shown [200];
                    engine_warn_limited (&self->runs.log_pages, "server: the LOG reply of %s is"
                                         " malformed: %s (the client gets 502)",
                                         xxl_printable (pending->address, shown, sizeof shown),
                                         why);
                    char *reason = zsys_sprintf ("the agent's LOG reply is malformed: %s", why);
                    xxl_enc_reply (self->enc, pending->client_id, XXL_TIMEOUT, reason);
                    zstr_free (&reason);
                    answered = XXL_TIMEOUT;
                }
            }
            else
            if (pending->client && !pending->note
            &&  engine_doubt_killed (self, pending->log_id, code, text)) {
                //  (a row in doubt the agent runs nothing of: ended here)
                xxl_enc_reply (self->enc, pending->client_id, XXL_OK,
                               "killed while its agent's answer was awaited: the agent runs"
                               " nothing of the job");
                answered = XXL_OK;
            }
            else {
                //  (a KILL's answer as it came: a 200's content, if any;
                //  a refusal has none, whatever the agent put in it)
                xxl_enc_reply (self->enc, pending->client_id, code, text);
                const msgpack_object *content = xxl_msg_get (xxl_msg_root (msg), "content");
                if (content && code == XXL_OK) {
                    xxl_enc_key (self->enc, "content");
                    xxl_enc_object (self->enc, content);
                }
            }
            //  (a KILL of the engine's own, a workflow run's, has no client)
            if (pending->client) {
                engine_outbox_read (self, pending->kind == PENDING_LOG);    //  (a read: it stands)
                engine_queue_client (self, zframe_data (pending->client),
                                     zframe_size (pending->client));
                engine_outbox_read (self, false);
                engine_audit_answer (self, pending, answered);
            }
            //  A run killed by hand ends as any result does (a FIX_DELAY
            //  job waiting for it goes on, the metrics count it); one the
            //  engine killed to cover it (note: xxl_admit.c) ends by its
            //  own result, once it stopped: its slot frees only then
            int64_t now = engine_now ();
            if (pending->kind == PENDING_KILL && code == XXL_OK
            &&  !pending->note
            &&  xxl_store_log_handle_done (self->store, pending->log_id, now, XXL_CODE_FAIL,
                                           XXL_KILL_BY_USER) == 0)
                engine_run_ended (self, pending->log_id, XXL_END_RESULT, XXL_CODE_FAIL, now);
            break;
        }
        case PENDING_PROBE:
            engine_probe_answer (self, pending, code, text);
            break;
        case PENDING_CHECK:
            engine_check_answer (self, pending, code, text);
            break;
        case PENDING_DOUBT:
            engine_doubt_answer (self, pending, code, text);
            break;
    }
    zhashx_delete (self->runs.pending, &id);
}

//  Queues the encoder's message to an agent (engine_receive's answers)
static void
s_answer_agent (server_t *self, zframe_t *rid)
{
    engine_queue_agent (self, zframe_data (rid), zframe_size (rid), 0);
}

void
engine_handle_agent (server_t *self, zmsg_t *zmsg)
{
    zframe_t *rid;
    const xxl_who_t *who = NULL;
    xxl_msg_t *msg = engine_receive (self, zmsg, false, s_answer_agent, &rid, &who);
    if (!msg)
        return;
    uint64_t id = xxl_msg_id (msg);
    const char *type = xxl_msg_type (msg);
    if (streq (type, "REPLY"))
        engine_agent_answer (self, rid, msg);
    else
    if (streq (type, "REGISTER"))
        s_agent_register (self, rid, msg, 0, who);
    else
    if (streq (type, "UNREGISTER"))
        s_agent_register (self, rid, msg, 1, who);
    else
    if (streq (type, "CALLBACK"))
        s_agent_callback (self, rid, msg);
    else {
        char text [160], shown [129];
        snprintf (text, sizeof text, "unknown message type '%s'",
                  xxl_printable (type, shown, sizeof shown));
        s_agent_reply (self, rid, id, XXL_BAD_REQUEST, text);
    }
    xxl_msg_destroy (&msg);
    zframe_destroy (&rid);
}

//  Rows with no answer and no result, sent before the failed commit (the
//  sweep comes twice the answer timeout after it, on the monotonic clock:
//  a step of the wall clock in between neither hides them nor adds later
//  ones) that nothing in memory will send or fail (their driver's write
//  was rolled back by that commit) go back: to their agent again when they
//  had one (it refuses a logId it has), else routed anew.  Returns how
//  many.
size_t
engine_sweep_untracked (server_t *self)
{
    zhashx_t *flying = engine_runs_in_flight (self);
    int64_t now = engine_now ();
    int64_t ids [4096];
    size_t count = 0, swept = 0;
    assert (self->runs.sweep_before > 0);
    xxl_store_log_unanswered_ids (self->store, self->runs.sweep_before, ids, 4096, &count);
    for (size_t i = 0; i < count; i++) {
        if (zhashx_lookup (flying, &ids [i]) || self->runs.planned (self, ids [i])
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
engine_sweep_run (server_t *self, int64_t now)
{
    if (!self->runs.sweep_at || now < self->runs.sweep_at)
        return;
    self->runs.sweep_at = engine_sweep_untracked (self)
                        ? now + 2 * (int64_t) self->config.run_timeout_ms + 1000: 0;
    if (!self->runs.sweep_at)
        self->runs.sweep_before = 0;
}
