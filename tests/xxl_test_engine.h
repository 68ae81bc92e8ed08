/*  xxl_test_engine.h -- the engine's state made in process for the C unit
    tests that drive its handlers and passes without sockets or a clock
    (tests/test_checks.c, tests/test_dispatch.c).

    xxl_test_engine_new (store, routers) makes a server_t with just what
    an agent's REGISTER, a trigger's routing and a RUN's queueing use: the
    registry, the outbox, the runs module, and the router plugins of the
    folder `routers` (NULL: none), whose probing routers probe through the
    trigger pools (none made: a test makes its own, xxl_pool_new).  Nothing is planned or asked (the
    planner's and recovery's hooks say no).  The store is the caller's.
    Messages to agents are not sent: they wait on self->runs.agents_out
    and agents_always, as the actor's flush would find them after a turn.

    xxl_test_engine_register: one agent REGISTER of address for app from
    connection rid, through the engine's own handler (as the agents socket
    hands it over: a routing id, then the frame), in a transaction of its
    own; true when answered 200.

    xxl_test_engine_runs: the RUNs queued since the last call, each
    decoded and handed to a callback; the queues are emptied.

    xxl_test_engine_store: the store in a fresh temporary folder (or the
    PostgreSQL database XXL_TEST_STORE_URL names); xxl_test_engine_job: a
    group of app and a job of it (schedule NONE, handler demoJobHandler)
    routed `route`.
*/

#ifndef XXL_TEST_ENGINE_H_INCLUDED
#define XXL_TEST_ENGINE_H_INCLUDED

#include "xxl_engine.h"
#include "xxl_test_store.h"
#include "xxl_test.h"

//  What the planner would say of a row: nothing is planned or asked here
static bool
xxl_test_engine_holds_none (server_t *self, int64_t log_id)
{
    (void) self;
    (void) log_id;
    return false;
}

static server_t *
xxl_test_engine_new (xxl_store_t *store, const char *routers)
{
    server_t *self = (server_t *) zmalloc (sizeof (server_t));
    xxl_server_config_defaults (&self->config);
    self->store = store;
    self->enc = xxl_enc_new ();
    self->registry = xxl_registry_new ();
    self->heard = xxl_heard_new (zclock_mono ());
    self->apps_changed = zhashx_new ();
    engine_outbox_start (self);
    engine_runs_start (self);
    self->runs.planned = xxl_test_engine_holds_none;
    self->runs.asked = xxl_test_engine_holds_none;
    if (routers) {
        self->runs.router_host = *xxl_routers_default_host ();
        self->runs.router_host.probe = xxl_pool_probe;
        self->runs.routers = xxl_routers_new (routers, &self->runs.router_host);
        assert (self->runs.routers);
    }
    self->next_id = (uint64_t) engine_now () << 16;
    self->clock_base = zclock_time () - zclock_mono ();
    assert (self->enc && self->registry && self->heard && self->apps_changed);
    return self;
}

static void
xxl_test_engine_destroy (server_t **self_p)
{
    server_t *self = *self_p;
    engine_runs_stop (self);
    xxl_routers_destroy (&self->runs.routers);
    engine_outbox_stop (self);
    zhashx_destroy (&self->apps_changed);
    xxl_heard_destroy (&self->heard);
    xxl_registry_destroy (&self->registry);
    xxl_enc_destroy (&self->enc);
    free (self);
    *self_p = NULL;
}

//  A queued message's frame, decoded (NULL when it does not decode)
static xxl_msg_t *
xxl_test_engine_decode (zframe_t *body)
{
    char err [256];
    return body? xxl_msg_decode (zframe_data (body), zframe_size (body), NULL, err, sizeof err)
               : NULL;
}

static bool
xxl_test_engine_register (server_t *self, const char *rid, const char *app, const char *address)
{
    static uint64_t id = 0;
    xxl_enc_t *enc = xxl_enc_new ();
    xxl_enc_request (enc, "REGISTER", ++id);
    xxl_enc_kstr (enc, "registryGroup", "EXECUTOR");
    xxl_enc_kstr (enc, "registryKey", app);
    xxl_enc_kstr (enc, "registryValue", address);
    size_t size;
    const void *data = xxl_enc_finish (enc, &size);
    zmsg_t *zmsg = zmsg_new ();
    zmsg_addmem (zmsg, rid, strlen (rid));
    zmsg_addmem (zmsg, data, size);
    xxl_enc_destroy (&enc);
    bool began = xxl_store_begin (self->store) == 0;
    engine_handle_agent (self, zmsg);
    zmsg_destroy (&zmsg);
    if (began)
        xxl_store_commit (self->store);
    //  (its reply: the last message queued to rid)
    bool answered = false;
    for (zmsg_t *out = (zmsg_t *) zlistx_first (self->runs.agents_always); out;
         out = (zmsg_t *) zlistx_next (self->runs.agents_always)) {
        zmsg_first (out);               //  (the request it carries)
        zframe_t *to = zmsg_next (out);
        zframe_t *body = zmsg_next (out);
        if (!to || !body || !zframe_streq (to, rid))
            continue;
        xxl_msg_t *msg = xxl_test_engine_decode (body);
        const msgpack_object *code = msg? xxl_msg_get (xxl_msg_root (msg), "code"): NULL;
        answered = msg && streq (xxl_msg_type (msg), "REPLY") && code
                && code->type == MSGPACK_OBJECT_POSITIVE_INTEGER && code->via.u64 == XXL_OK;
        xxl_msg_destroy (&msg);
    }
    return answered;
}

//  Each RUN queued for an agent: its message, the connection it goes to
typedef void (xxl_test_engine_run_fn) (void *arg, xxl_msg_t *msg, zframe_t *to);

//  Hands each RUN queued since the last call to fn; returns how many.
//  The queues are emptied, as the actor's flush does.
static int
xxl_test_engine_runs (server_t *self, xxl_test_engine_run_fn *fn, void *arg)
{
    int runs = 0;
    zlistx_t *queues [2] = { self->runs.agents_always, self->runs.agents_out };
    for (int q = 0; q < 2; q++) {
        for (zmsg_t *out = (zmsg_t *) zlistx_first (queues [q]); out;
             out = (zmsg_t *) zlistx_next (queues [q])) {
            zmsg_first (out);
            zframe_t *to = zmsg_next (out);
            zframe_t *body = zmsg_next (out);
            xxl_msg_t *msg = xxl_test_engine_decode (body);
            if (msg && streq (xxl_msg_type (msg), "RUN")) {
                runs++;
                fn (arg, msg, to);
            }
            xxl_msg_destroy (&msg);
        }
        zlistx_purge (queues [q]);
    }
    return runs;
}

//  The store of a test `name`: in a fresh temporary folder (its path in
//  dir, to remove after), or the PostgreSQL database XXL_TEST_STORE_URL
//  names.  NULL on failure (a failed check says why).
static xxl_store_t *
xxl_test_engine_store (const char *name, char *dir, size_t dirlen)
{
    char file [400], err [256];
    if (xxl_test_tmpdir (dir, dirlen, name))
        return NULL;
    snprintf (file, sizeof file, "%s/xxl.db", dir);
    xxl_store_t *store = xxl_store_new (xxl_test_store_url (file), err, sizeof err);
    XXL_CHECK_MSG (store != NULL, "%s", err);
    return store;
}

//  A job of app routed `route`, in the group *gid, or (*gid 0) in a new
//  group of app whose id *gid receives: the job's id, -1 on failure
static int64_t
xxl_test_engine_job (xxl_store_t *store, const char *app, const char *route, int64_t *gid)
{
    xxl_group_t group = { .app_name = (char *) app, .title = "", .update_time = zclock_time () };
    if (*gid <= 0)
        *gid = xxl_store_group_add (store, &group);
    xxl_job_t job = {
        .job_group = *gid, .job_desc = (char *) app, .author = "", .alarm_email = "",
        .schedule_type = "NONE", .schedule_conf = "", .misfire_strategy = "DO_NOTHING",
        .executor_route_strategy = (char *) route, .executor_handler = "demoJobHandler",
        .executor_param = "", .executor_block_strategy = "SERIAL_EXECUTION",
        .glue_type = "BEAN", .glue_source = "", .glue_remark = "", .child_jobid = "",
        .timezone = "", .retry_backoff = 1
    };
    return *gid > 0? xxl_store_job_add (store, &job): -1;
}

#endif
