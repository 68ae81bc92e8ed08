/*  test_checks.c -- the batched asks about the runs open at an address
    registered on a new connection (scheduler/runs/xxl_checks.c), in
    process: the engine's state (server_t) is made with just what REGISTER
    and a pass use (xxl_test_engine.h), the agents' REGISTERs go through the engine's own
    handler (engine_handle_agent, as from the agents socket: a routing id
    then the frame), and each pass (engine_checks_run, which the actor
    calls every 200 ms) is called here, so nothing waits on a clock.  An
    ask is the message the pass queues for an agent: a RUN of a logId with
    expireTime 1, to the connection the address is on.

    Decisions held:
    - an address still on the connection that registered it, with an open
      run, is asked about it (and an address never registered is not);
    - an address that moved to another open connection between its
      REGISTER and the pass is not asked (its check is dropped: the move's
      rules judge it);
    - a pass whose read of the store's open runs fails keeps the checks:
      the next pass, the store readable again, asks; then none are left;
    - a run whose RUN the registering connection accepted after the
      REGISTER is not asked about (a run open before it is);
    - a run whose ask went to a connection that closed before answering is
      asked again on the connection that registers the address next; one
      whose ask waits on the address's own connection is not asked twice.
    The store's failure is a copy of its method table whose
    log_open_ids_all fails while s_fail is set (the test's own wrapper:
    nothing in the engine knows of it).
*/

#include "xxl_test_engine.h"

#define APP "checks-app"

//  The store's methods, and the copy the engine is given
static const xxl_store_methods_t *s_real;
static xxl_store_methods_t s_wrapped;
static bool s_fail = false;             //  log_open_ids_all fails while set
static int s_reads = 0;                 //  its calls, and of them those failed
static int s_failed = 0;

static int
s_open_ids_all (xxl_store_t *store, int64_t cursor [2], int64_t *ids, char **addresses,
                size_t max, size_t *count)
{
    s_reads++;
    if (s_fail) {
        s_failed++;
        *count = 0;
        return -1;
    }
    return s_real->log_open_ids_all (store, cursor, ids, addresses, max, count);
}

//  One turn's REGISTER of address from connection rid; true when answered 200
static bool
s_register (server_t *self, const char *rid, const char *address)
{
    return xxl_test_engine_register (self, rid, APP, address);
}

//  An ask looked for: of run log_id, to connection rid (NULL: any)
typedef struct {
    int64_t log_id;
    const char *rid;
    int count;                          //  out: how many were queued
} ask_t;

typedef struct {
    ask_t *asks;
    size_t n;
} asks_t;

static void
s_ask_seen (void *arg, xxl_msg_t *msg, zframe_t *to)
{
    asks_t *want = (asks_t *) arg;
    int64_t log_id = xxl_msg_int (msg, NULL, "logId", 1, 1, INT64_MAX, 0);
    int64_t expire = xxl_msg_int (msg, NULL, "expireTime", 1, 0, INT64_MAX, 0);
    XXL_CHECK_MSG (!xxl_msg_error (msg) && expire == 1,
                   "a RUN that is no ask: %s", xxl_msg_error (msg)
                   ? xxl_msg_error (msg): "expireTime is not 1");
    for (size_t i = 0; i < want->n; i++)
        if (want->asks [i].log_id == log_id
        &&  (!want->asks [i].rid || zframe_streq (to, want->asks [i].rid)))
            want->asks [i].count++;
}

//  The RUNs queued for agents since the last call, each checked to be an
//  ask (a logId, expireTime 1), counted into the asks looked for; returns
//  how many RUNs.  The queues are emptied, as the actor's flush does.
static int
s_asks (server_t *self, ask_t *asks, size_t n)
{
    asks_t want = { asks, n };
    return xxl_test_engine_runs (self, s_ask_seen, &want);
}

//  A run of job jid accepted at address and still open (no result)
static int64_t
s_open_run (xxl_store_t *store, int64_t gid, int64_t jid, const char *address, int64_t when)
{
    xxl_log_t log = {
        .job_group = gid, .job_id = jid, .executor_handler = "demoJobHandler",
        .executor_param = "", .executor_address = (char *) address,
        .trigger_time = when, .trigger_code = 200,
        .trigger_msg = "Trigger type: Manual trigger\n", .trigger_type = "MANUAL"
    };
    return xxl_store_log_add (store, &log) == 0? log.id: -1;
}

int
main (void)
{
    zsys_init ();
    zsys_set_logstream (NULL);
    char dir [256];
    //  (or the PostgreSQL database XXL_TEST_STORE_URL names)
    xxl_store_t *store = xxl_test_engine_store ("checks", dir, sizeof dir);
    if (!store)
        return xxl_test_done ();

    //  Open runs at w (stays on its connection), x (moves), y (registers
    //  while the store fails) and z (never registers)
    int64_t now = zclock_time ();
    int64_t gid = 0;
    int64_t jid = xxl_test_engine_job (store, APP, "FIRST", &gid);
    XXL_CHECK (gid > 0 && jid > 0);
    int64_t w = s_open_run (store, gid, jid, "w:9999", now - 4000);
    int64_t x = s_open_run (store, gid, jid, "x:9999", now - 3000);
    int64_t y = s_open_run (store, gid, jid, "y:9999", now - 2000);
    int64_t z = s_open_run (store, gid, jid, "z:9999", now - 1000);
    XXL_CHECK (w > 0 && x > 0 && y > 0 && z > 0);
    //  v: one open before its REGISTER, one its connection accepts after;
    //  u: asked on a connection that closes unanswered
    int64_t v_old = s_open_run (store, gid, jid, "v:9999", now - 900);
    int64_t v_new = s_open_run (store, gid, jid, "v:9999", now - 800);
    int64_t u = s_open_run (store, gid, jid, "u:9999", now - 700);
    XXL_CHECK (v_old > 0 && v_new > 0 && u > 0);

    //  The engine's store: its own methods but log_open_ids_all
    s_real = store->methods;
    s_wrapped = *s_real;
    s_wrapped.log_open_ids_all = s_open_ids_all;
    store->methods = &s_wrapped;
    server_t *self = xxl_test_engine_new (store, NULL);

    //  w registers on A; x on B, then on C while B is open (a move: C's
    //  REGISTER queues no check of its own, B's stays queued)
    XXL_CHECK (s_register (self, "conn-A", "w:9999"));
    XXL_CHECK (s_register (self, "conn-B", "x:9999"));
    XXL_CHECK (s_register (self, "conn-C", "x:9999"));
    XXL_CHECK_INT (zhashx_size (self->runs.checks), 2);
    XXL_CHECK_INT (s_asks (self, NULL, 0), 0);
    engine_checks_run (self);
    ask_t pass1 [] = { { w, "conn-A", 0 }, { x, NULL, 0 }, { z, NULL, 0 } };
    int runs = s_asks (self, pass1, 3);
    XXL_CHECK_INT (s_reads, 1);
    XXL_CHECK_MSG (pass1 [0].count == 1, "w, on its registering connection, asked %d time(s)"
                   " on it, want 1", pass1 [0].count);
    XXL_CHECK_MSG (pass1 [1].count == 0, "x, moved to another connection before the pass,"
                   " asked %d time(s), want 0", pass1 [1].count);
    XXL_CHECK_INT (pass1 [2].count, 0);
    XXL_CHECK_INT (runs, 1);
    XXL_CHECK_INT (zhashx_size (self->runs.checks), 0);

    //  y registers on D while the store's read fails: the pass asks
    //  nothing and keeps y's check; the next, the store readable, asks
    s_fail = true;
    XXL_CHECK (s_register (self, "conn-D", "y:9999"));
    engine_checks_run (self);
    ask_t pass2 [] = { { y, NULL, 0 } };
    XXL_CHECK_INT (s_asks (self, pass2, 1), 0);
    XXL_CHECK_INT (s_failed, 1);
    bool kept = zhashx_size (self->runs.checks) == 1
             && zhashx_lookup (self->runs.checks, "y:9999") != NULL;
    XXL_CHECK_MSG (kept, "y's check not kept after the failed read (%zu left)",
                   zhashx_size (self->runs.checks));
    s_fail = false;
    engine_checks_run (self);
    ask_t pass3 [] = { { y, "conn-D", 0 }, { w, NULL, 0 }, { x, NULL, 0 } };
    runs = s_asks (self, pass3, 3);
    XXL_CHECK_MSG (pass3 [0].count == 1, "y, its read failed once, asked %d time(s) on its"
                   " connection by the next pass, want 1", pass3 [0].count);
    XXL_CHECK_INT (pass3 [1].count + pass3 [2].count, 0);
    XXL_CHECK_INT (runs, 1);
    XXL_CHECK_INT (s_reads, 3);
    XXL_CHECK_INT (zhashx_size (self->runs.checks), 0);
    //  (nothing queued: a pass reads nothing)
    engine_checks_run (self);
    XXL_CHECK_INT (s_reads, 3);

    //  v registers on E, then E accepts v_new's RUN before the pass (as
    //  a RUN sent after the REGISTER would be): only v_old is asked
    XXL_CHECK (s_register (self, "conn-E", "v:9999"));
    engine_run_answer (self, v_new, jid, NULL, "v:9999", 0, 0, XXL_OK, NULL);
    engine_checks_run (self);
    ask_t pass4 [] = { { v_old, "conn-E", 0 }, { v_new, NULL, 0 } };
    runs = s_asks (self, pass4, 2);
    XXL_CHECK_MSG (pass4 [0].count == 1, "v's run open before its REGISTER asked %d time(s),"
                   " want 1", pass4 [0].count);
    XXL_CHECK_MSG (pass4 [1].count == 0, "v's run its connection accepted after the REGISTER"
                   " asked %d time(s), want 0", pass4 [1].count);
    XXL_CHECK_INT (runs, 1);

    //  u registers on F and is asked; F closes without answering; G
    //  registers u while F's ask waits for its deadline: G is asked
    XXL_CHECK (s_register (self, "conn-F", "u:9999"));
    engine_checks_run (self);
    ask_t pass5 [] = { { u, "conn-F", 0 } };
    XXL_CHECK_INT (s_asks (self, pass5, 1), 1);
    XXL_CHECK_INT (pass5 [0].count, 1);
    xxl_registry_gone (self->registry, "conn-F", 6);
    XXL_CHECK (s_register (self, "conn-G", "u:9999"));
    XXL_CHECK_INT (zhashx_size (self->runs.checks), 1);
    engine_checks_run (self);
    ask_t pass6 [] = { { u, "conn-G", 0 } };
    runs = s_asks (self, pass6, 1);
    XXL_CHECK_MSG (pass6 [0].count == 1, "u, its ask gone with a closed connection, asked %d"
                   " time(s) on the next one, want 1", pass6 [0].count);
    XXL_CHECK_INT (runs, 1);
    //  Queued again on G while G's ask waits: not asked twice
    engine_check_open_runs (self, "u:9999", "registered on a new connection", "conn-G", 6);
    engine_checks_run (self);
    ask_t pass7 [] = { { u, NULL, 0 } };
    XXL_CHECK_INT (s_asks (self, pass7, 1), 0);
    XXL_CHECK_INT (pass7 [0].count, 0);

    xxl_test_engine_destroy (&self);
    store->methods = s_real;
    xxl_store_destroy (&store);
    XXL_CHECK (xxl_test_rmtree (dir) == 0);
    return xxl_test_done ();
}
