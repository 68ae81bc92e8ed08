/*  test_dispatch.c -- one route per row: engine_dispatch_row
    (scheduler/runs/xxl_trigger.c) and the store's claim by log_route, in
    process (xxl_test_engine.h): two agents registered through the
    engine's REGISTER handler, a job routed ROUND over them, rows written
    unrouted as a trigger held for its agents, a retry waiting for its
    interval or a recovered row are, and each dispatch called here as the
    planner's timer, a routing pool's answer or a re-send would call it.

    Decisions held (each RUN counted as queued for its agent):
    - a row waiting unrouted, dispatched (address NULL: routed now), gets
      one RUN;
    - dispatched twice in one turn (the timer holding it twice: its own
      entry and a recovery's after the scheduler took its own shares back),
      and again in the next turn, its RUN unanswered: still that one RUN;
    - a row another scheduler sharing the store routed: none here, whether
      routed now or given another address by a late routing answer, and
      the row is not failed by an answer that found no address; its own
      address (a re-send) goes again;
    - a row whose address was taken back (a busy refusal, a connection
      closed under its RUN): routed anew, one RUN;
    - the refusal of a RUN ("expired", busy) read after another RUN of the
      row was routed to the same agent (a re-send by a scheduler that took
      the row's share over) changes nothing: no failure, no end, its
      address kept; with no RUN routed since, an "expired" refusal fails
      the row (one end) and a busy one takes its address back;
    - a row a trigger pool routes (FAILOVER) is not given to a pool again
      by another dispatch until its ROUTED result is taken;
    - a 409 "logId N already used by another run" (the agent's journal
      holds the id for another run) fails the row at once with the
      reason, and moves the log ids past the id + 100,000 once;
    - an acceptance with a message ("already accepted") read after
      another RUN of the row was routed to the same agent leaves that
      RUN's section as it is (the run is marked accepted); with no RUN
      routed since, it rewrites its own section and the row is accepted;
    - two schedulers sharing the store route one FAILOVER row to the same
      agent (the second took the row's share over while the first's pool
      probed): the first RUN's busy refusal, read after the second route,
      leaves the row the second RUN's (its address kept); the second's
      busy refusal takes it back;
    - an acceptance whose result has not come is written alone 500 ms
      after it came while few wait, and not before 5 s while more than
      1,000 do.
*/

#include "xxl_test_engine.h"

#define APP "dispatch-app"

//  RUNs seen of one log id, and on which connection
typedef struct {
    int64_t log_id;
    int count;
    int on_a, on_b;
} seen_t;

//  Log id's run ended (as RUN_ENDED tells the pins)
static void
s_pin_ended (server_t *self, int64_t log_id)
{
    engine_runs_on_ended (self, &(xxl_event_t) { .kind = XXL_EVENT_RUN_ENDED, .log_id = log_id });
}

static void
s_run_seen (void *arg, xxl_msg_t *msg, zframe_t *to)
{
    seen_t *seen = (seen_t *) arg;
    if (xxl_msg_int (msg, NULL, "logId", 1, 1, INT64_MAX, 0) != seen->log_id)
        return;
    seen->count++;
    seen->on_a += zframe_streq (to, "conn-A");
    seen->on_b += zframe_streq (to, "conn-B");
}

//  The RUNs of log_id queued since the last call
static seen_t
s_runs (server_t *self, int64_t log_id)
{
    seen_t seen = { .log_id = log_id };
    xxl_test_engine_runs (self, s_run_seen, &seen);
    return seen;
}

//  A row of job jid waiting unrouted, as a trigger held for its agents is
static int64_t
s_row (xxl_store_t *store, int64_t gid, int64_t jid)
{
    xxl_log_t log = {
        .id = xxl_store_log_next_id (store),
        .job_group = gid, .job_id = jid, .executor_handler = "demoJobHandler",
        .executor_param = "", .trigger_time = engine_now (),
        .trigger_msg = "Trigger type: Manual trigger\n", .trigger_type = "MANUAL"
    };
    return log.id > 0 && xxl_store_log_add (store, &log) == 0? log.id: -1;
}

//  One turn: dispatch log_id (address as engine_dispatch_row takes it)
//  `times` times in one transaction
static void
s_turn (server_t *self, int64_t log_id, const char *address, int times)
{
    XXL_CHECK (xxl_store_begin (self->store) == 0);
    for (int i = 0; i < times; i++)
        engine_dispatch_row (self, log_id, address, address? "routed off the loop\n": NULL);
    XXL_CHECK (xxl_store_commit (self->store) == 0);
}

static xxl_log_t
s_load (xxl_store_t *store, int64_t log_id)
{
    xxl_log_t log = { 0 };
    XXL_CHECK (xxl_store_log_load (store, log_id, &log) == 0);
    return log;
}

//  The RUN_ENDED events of a log id
static int64_t s_ended_id;
static int s_ended;

static void
s_on_ended (server_t *self, const xxl_event_t *event)
{
    (void) self;
    s_ended += event->log_id == s_ended_id;
}

//  The RUN of log_id waiting for its agent's answer
static pending_t *
s_pending (server_t *self, int64_t log_id)
{
    for (pending_t *pending = (pending_t *) zhashx_first (self->runs.pending); pending;
         pending = (pending_t *) zhashx_next (self->runs.pending))
        if (pending->kind == PENDING_RUN && pending->log_id == log_id)
            return pending;
    return NULL;
}

//  One turn: the agent's answer to log_id's RUN is read, a refusal as
//  expired or busy (XXL_BUSY), as the agents' handler hands it over
static void
s_refused (server_t *self, int64_t log_id, bool busy)
{
    pending_t *pending = s_pending (self, log_id);
    XXL_CHECK (pending);
    if (!pending)
        return;
    XXL_CHECK (xxl_store_begin (self->store) == 0);
    if (!engine_run_busy (self, log_id, pending->note, pending->address, busy? XXL_BUSY: XXL_CODE_FAIL))
        engine_run_done (self, pending, XXL_CODE_FAIL, "expired: the scheduler gave up on this run");
    uint64_t id = pending->id;
    zhashx_delete (self->runs.pending, &id);
    XXL_CHECK (xxl_store_commit (self->store) == 0);
}

//  One turn: the agent accepts log_id's RUN with a message (a re-sent
//  logId it holds already), as the agents' handler hands it over
static void
s_answered (server_t *self, int64_t log_id, int code, const char *msg)
{
    pending_t *pending = s_pending (self, log_id);
    XXL_CHECK (pending);
    if (!pending)
        return;
    XXL_CHECK (xxl_store_begin (self->store) == 0);
    if (!engine_run_busy (self, log_id, pending->note, pending->address, code))
        engine_run_done (self, pending, code, msg);
    uint64_t id = pending->id;
    zhashx_delete (self->runs.pending, &id);
    XXL_CHECK (xxl_store_commit (self->store) == 0);
}

static void
s_accepted_with (server_t *self, int64_t log_id, const char *msg)
{
    s_answered (self, log_id, XXL_OK, msg);
}

//  A trigger pool's ROUTED result for log_id of job_id: the router chose
//  address after the probe lines text, as a pool worker sends it
static zmsg_t *
s_routed (int64_t log_id, int64_t job_id, const char *address, const char *text)
{
    xxl_enc_t *enc = xxl_enc_new ();
    xxl_enc_request (enc, "ROUTED", 1);
    xxl_enc_kint (enc, "logId", log_id);
    xxl_enc_kint (enc, "jobId", job_id);
    xxl_enc_kint (enc, "index", 0);
    xxl_enc_kstr (enc, "address", address);
    xxl_enc_kstr (enc, "msg", text);
    xxl_enc_kint (enc, "elapsedMs", 1);
    size_t size;
    const void *data = xxl_enc_finish (enc, &size);
    zmsg_t *zmsg = zmsg_new ();
    zmsg_addmem (zmsg, data, size);
    xxl_enc_destroy (&enc);
    return zmsg;
}

//  One turn: a ROUTED result handed to the engine
static void
s_turn_routed (server_t *self, zmsg_t *zmsg)
{
    XXL_CHECK (xxl_store_begin (self->store) == 0);
    engine_handle_routed (self, zmsg);
    XXL_CHECK (xxl_store_commit (self->store) == 0);
    zmsg_destroy (&zmsg);
}

int
main (void)
{
    zsys_init ();
    zsys_set_logstream (NULL);
    char dir [256];
    //  (or the PostgreSQL database XXL_TEST_STORE_URL names)
    xxl_store_t *store = xxl_test_engine_store ("dispatch", dir, sizeof dir);
    if (!store)
        return xxl_test_done ();
    const char *routers = getenv ("XXL_TEST_ROUTERS");
    server_t *self = xxl_test_engine_new (store, routers? routers: "plugins/routers/.libs");
    XXL_CHECK (xxl_routers_find (self->runs.routers, "ROUND") != NULL);
    int64_t gid = 0;
    int64_t jid = xxl_test_engine_job (store, APP, "ROUND", &gid);
    XXL_CHECK (gid > 0 && jid > 0);
    XXL_CHECK (xxl_test_engine_register (self, "conn-A", APP, "a:9999"));
    XXL_CHECK (xxl_test_engine_register (self, "conn-B", APP, "b:9999"));
    xxl_test_engine_runs (self, s_run_seen, &(seen_t) { 0 });

    //  The allowed case: one dispatch, one RUN, and the row names its agent
    int64_t r1 = s_row (store, gid, jid);
    s_turn (self, r1, NULL, 1);
    seen_t seen = s_runs (self, r1);
    XXL_CHECK_INT (seen.count, 1);
    xxl_log_t log = s_load (store, r1);
    XXL_CHECK (streq (log.executor_address, seen.on_a? "a:9999": "b:9999"));
    xxl_log_free (&log);

    //  Twice in a turn, and again in the next: one RUN.  (ROUND alternates:
    //  a second route would have gone to the other agent)
    int64_t r2 = s_row (store, gid, jid);
    s_turn (self, r2, NULL, 2);
    s_turn (self, r2, NULL, 1);
    seen = s_runs (self, r2);
    XXL_CHECK_MSG (seen.count == 1, "a row dispatched three times got %d RUN(s) (%d to a,"
                   " %d to b), want 1", seen.count, seen.on_a, seen.on_b);

    //  Routed to b by another scheduler sharing the store
    int64_t r3 = s_row (store, gid, jid);
    XXL_CHECK_INT (xxl_store_log_route (store, r3, 0, "b:9999", "elsewhere\n"), 1);
    s_turn (self, r3, NULL, 1);
    s_turn (self, r3, "a:9999", 1);
    s_turn (self, r3, "", 1);
    seen = s_runs (self, r3);
    XXL_CHECK_MSG (seen.count == 0, "a row another scheduler routed got %d RUN(s) here",
                   seen.count);
    log = s_load (store, r3);
    XXL_CHECK (streq (log.executor_address, "b:9999") && log.trigger_code == 0);
    xxl_log_free (&log);
    //  ... re-sent to its own address: it goes again (its agent refuses a
    //  logId it has)
    s_turn (self, r3, "b:9999", 1);
    seen = s_runs (self, r3);
    XXL_CHECK (seen.count == 1 && seen.on_b == 1);

    //  Its address taken back (as a busy refusal does): routed anew
    int64_t r4 = s_row (store, gid, jid);
    XXL_CHECK_INT (xxl_store_log_route (store, r4, 0, "a:9999", "first\n"), 1);
    XXL_CHECK_INT (xxl_store_log_unroute (store, r4, "first\n", 1), 1);
    s_turn (self, r4, NULL, 1);
    seen = s_runs (self, r4);
    XXL_CHECK_INT (seen.count, 1);

    //  A trigger that gave its addresses ("b:9999"): its RUN refused busy
    //  (its address taken back) goes to b again each time, though the job
    //  routes ROUND over a and b; its run's end forgets the pin.  (Before:
    //  routed again over the group, so ROUND moved it to a.)  The allowed
    //  case: a row of the same job without a pin, refused busy as often,
    //  goes to both
    xxl_job_t job;
    XXL_CHECK (xxl_store_job_load (store, jid, &job) == 0);
    int64_t pinned_ids [1] = { 0 };
    trigger_args_t args = { .trigger_type = "MANUAL", .fail_retry_count = -1,
                            .address = "b:9999", .shard_index = -1, .shard_total = -1 };
    XXL_CHECK (xxl_store_begin (store) == 0);
    XXL_CHECK_INT (engine_trigger (self, &job, &args, pinned_ids, NULL, 1), 1);
    XXL_CHECK (xxl_store_commit (store) == 0);
    xxl_job_free (&job);
    int64_t rp = pinned_ids [0], rf = s_row (store, gid, jid);
    XXL_CHECK (rp > 0 && engine_runs_pinned (self, rp) != NULL);
    engine_subscribe (&self->events, XXL_EVENT_RUN_ENDED, engine_runs_on_ended);
    seen_t pinned_seen = { .log_id = rp }, free_seen = { .log_id = rf };
    for (int i = 0; i < 5; i++) {
        if (i) {
            s_refused (self, rp, true);
            s_turn (self, rp, NULL, 1);
        }
        seen_t one = s_runs (self, rp);
        pinned_seen.count += one.count;
        pinned_seen.on_a += one.on_a;
        pinned_seen.on_b += one.on_b;
    }
    //  (alone: ROUND's turn moves with every route of the job)
    for (int i = 0; i < 5; i++) {
        if (i)
            s_refused (self, rf, true);
        s_turn (self, rf, NULL, 1);
        seen_t other = s_runs (self, rf);
        free_seen.count += other.count;
        free_seen.on_a += other.on_a;
        free_seen.on_b += other.on_b;
    }
    XXL_CHECK_MSG (pinned_seen.count == 5 && pinned_seen.on_b == 5,
                   "a trigger given b:9999 and refused busy 4 times: %d RUN(s), %d to a,"
                   " %d to b (want 5, all to b)", pinned_seen.count, pinned_seen.on_a,
                   pinned_seen.on_b);
    XXL_CHECK_MSG (free_seen.count == 5 && free_seen.on_a > 0 && free_seen.on_b > 0,
                   "a row without a pin refused busy"
                   " 4 times went %d time(s) to a, %d to b (ROUND: both)", free_seen.on_a,
                   free_seen.on_b);
    s_refused (self, rp, false);        //  (expired: its run ends)
    XXL_CHECK (engine_runs_pinned (self, rp) == NULL);
    //  The rows of one trigger share its list (a broadcast's N rows hold
    //  it once); a row's end leaves the others' pins
    engine_runs_pin (self, 9000001, "x:1,y:2");
    engine_runs_pin (self, 9000002, "x:1,y:2");
    engine_runs_pin (self, 9000003, "z:3");
    const char *shared = engine_runs_pinned (self, 9000001);
    XXL_CHECK (shared && streq (shared, "x:1,y:2"));
    XXL_CHECK (engine_runs_pinned (self, 9000002) == shared);
    s_pin_ended (self, 9000001);
    s_pin_ended (self, 9000003);
    XXL_CHECK (engine_runs_pinned (self, 9000001) == NULL);
    XXL_CHECK (engine_runs_pinned (self, 9000003) == NULL);
    XXL_CHECK (streq (engine_runs_pinned (self, 9000002), "x:1,y:2"));
    //  Pins made by a turn whose commit fails go with it (their rows
    //  were never written); those of a committed turn stay
    engine_runs_pins_settle (self, true);
    engine_runs_pin (self, 9000004, "w:4");
    XXL_CHECK (streq (engine_runs_pinned (self, 9000004), "w:4"));
    engine_runs_pins_settle (self, false);
    XXL_CHECK (engine_runs_pinned (self, 9000004) == NULL);
    XXL_CHECK (streq (engine_runs_pinned (self, 9000002), "x:1,y:2"));
    s_pin_ended (self, 9000002);
    //  A pin lasts XXL_PIN_KEEP_MS after its row was last routed, not
    //  after its trigger: a row routed again since a cutoff stays, one
    //  not routed since goes
    engine_runs_pin (self, 9000005, "v:5");
    engine_runs_pin (self, 9000006, "v:5");
    zclock_sleep (3);
    int64_t cutoff = zclock_mono ();
    zclock_sleep (3);
    XXL_CHECK (engine_runs_pinned (self, 9000005) != NULL);       //  (routed again)
    engine_runs_pins_expire (self, cutoff);
    XXL_CHECK (engine_runs_pinned (self, 9000005) != NULL);
    XXL_CHECK (engine_runs_pinned (self, 9000006) == NULL);
    s_pin_ended (self, 9000005);
    //  Bounded: 200,000 pins, 64 MiB of lists; a trigger that could pass
    //  either finds no room (JOB_TRIGGER answers 429), and room comes
    //  back as runs end.  A broadcast over two addresses may make two
    size_t held_bytes = 0;
    XXL_CHECK (engine_runs_pins_held (self, &held_bytes) == 0 && held_bytes == 4);  //  ("v:5")
    for (int64_t id = 1; id < 200000; id++)
        engine_runs_pin (self, 9100000 + id, "r:1");
    engine_runs_pins_settle (self, true);
    XXL_CHECK (engine_runs_pins_room (self, "a:1"));
    XXL_CHECK (!engine_runs_pins_room (self, "a:1,b:2"));
    engine_runs_pin (self, 9100000, "r:1");
    XXL_CHECK (!engine_runs_pins_room (self, "a:1"));
    s_pin_ended (self, 9100007);
    XXL_CHECK (engine_runs_pins_room (self, "a:1"));
    for (int64_t id = 0; id < 200000; id++)
        s_pin_ended (self, 9100000 + id);
    XXL_CHECK (engine_runs_pins_held (self, NULL) == 0);
    //  (1,024 distinct lists of 64 KiB fill the bytes' bound; the last
    //  trigger's own list again needs no more)
    char *big = (char *) malloc (65536);
    assert (big);
    memset (big, 'h', 65535);
    big [65535] = 0;
    for (int64_t id = 0; id < 1024; id++) {
        snprintf (big, 8, "%07d", (int) id);
        big [7] = 'h';
        XXL_CHECK (engine_runs_pins_room (self, big));
        engine_runs_pin (self, 9200000 + id, big);
    }
    engine_runs_pins_settle (self, true);
    XXL_CHECK (engine_runs_pins_held (self, &held_bytes) == 1024 && held_bytes == 64 << 20);
    XXL_CHECK (engine_runs_pins_room (self, big));
    XXL_CHECK (!engine_runs_pins_room (self, "a:1"));
    s_pin_ended (self, 9200000);
    XXL_CHECK (engine_runs_pins_room (self, "a:1"));
    for (int64_t id = 1; id < 1024; id++)
        s_pin_ended (self, 9200000 + id);
    //  (the last trigger's list is kept for the next one's rows)
    XXL_CHECK (engine_runs_pins_held (self, &held_bytes) == 0 && held_bytes == 65536);
    free (big);
    s_refused (self, rf, false);

    //  A refusal read late.  This scheduler's RUN of a row to its agent;
    //  then, while this scheduler stood still, the one that took the row's
    //  share over re-sent it to the same agent, which took that RUN (a
    //  frozen agent had refused the first as expired, unread here; or,
    //  busy then, refused it busy).  The first RUN's refusal, read now,
    //  changes nothing: the row is the re-sent RUN's.  (Before: the row
    //  failed, and its retry ran the trigger a second time; or it lost its
    //  address, and the run's result was then not counted.)  The allowed
    //  case: with no RUN routed since, the refusal ends the row (expired)
    //  or takes it back to route it again (busy).
    engine_subscribe (&self->events, XXL_EVENT_RUN_ENDED, s_on_ended);
    for (int late = 1; late >= 0; late--)
        for (int busy = 0; busy < 2; busy++) {
            int64_t r = s_row (store, gid, jid);
            s_turn (self, r, NULL, 1);
            XXL_CHECK_INT (s_runs (self, r).count, 1);
            xxl_log_t before = s_load (store, r);
            char *address = strdup (before.executor_address);
            xxl_log_free (&before);
            if (late) {
                char *again = engine_section ("re-sent (after a scheduler restart or a failed"
                                              " store write)\n", address, XXL_OK, NULL);
                XXL_CHECK_INT (xxl_store_log_route (store, r, 0, address, again), 1);
                zstr_free (&again);
            }
            s_ended_id = r;
            s_ended = 0;
            s_refused (self, r, busy);
            log = s_load (store, r);
            if (late)
                XXL_CHECK_MSG (log.trigger_code == 0 && streq (log.executor_address, address)
                               && s_ended == 0, "a late %s refusal of a row re-sent since"
                               " changed it: triggerCode %" PRId64 ", address '%s', %d end(s)",
                               busy? "busy": "expired", log.trigger_code, log.executor_address,
                               s_ended);
            else
            if (busy)
                XXL_CHECK (log.trigger_code == 0 && !*log.executor_address && s_ended == 0);
            else
                XXL_CHECK (log.trigger_code == XXL_CODE_FAIL && s_ended == 1);
            xxl_log_free (&log);
            free (address);
        }

    //  An acceptance with a message read late: this scheduler's RUN of a
    //  row, then another's re-send of it to the same agent (its section
    //  last); the agent answers this RUN "already accepted".  The other
    //  RUN's section stays whole (before: the answer cut this RUN's
    //  length off the end of it and put its own section there), and the
    //  run is known accepted.  The allowed case: with no RUN since, the
    //  answer rewrites this RUN's section and the row is accepted.
    for (int late = 1; late >= 0; late--) {
        int64_t r = s_row (store, gid, jid);
        s_turn (self, r, NULL, 1);
        XXL_CHECK_INT (s_runs (self, r).count, 1);
        xxl_log_t before = s_load (store, r);
        char *address = strdup (before.executor_address);
        xxl_log_free (&before);
        char *again = engine_section ("re-sent by scheduler elsewhere (after a scheduler"
                                      " restart or a failed store write)\n", address, XXL_OK,
                                      NULL);
        if (late)
            XXL_CHECK_INT (xxl_store_log_route (store, r, 0, address, again), 1);
        char msg [64];
        snprintf (msg, sizeof msg, "logId %" PRId64 " already accepted", r);
        s_accepted_with (self, r, msg);
        log = s_load (store, r);
        size_t len = strlen (log.trigger_msg), tail = strlen (again);
        bool kept = len >= tail && streq (log.trigger_msg + len - tail, again);
        if (late)
            XXL_CHECK_MSG (kept && log.trigger_code == 0 && engine_accepted_has (self, r),
                           "a late acceptance with a message of a row re-sent since changed"
                           " the re-send's section: triggerCode %" PRId64 ", triggerMsg '%s'",
                           log.trigger_code, log.trigger_msg);
        else {
            char *want = engine_section (NULL, address, XXL_OK, msg);
            XXL_CHECK (log.trigger_code == XXL_OK && strstr (log.trigger_msg, want)
                       && !strstr (log.trigger_msg, "msg: null"));
            zstr_free (&want);
        }
        xxl_log_free (&log);
        zstr_free (&again);
        free (address);
    }

    //  The agent's journal holds the row's logId for another run (a store
    //  restored without moving its log ids): its 409 fails the row at
    //  once, saying why (one end: alarms and retries follow), and the log
    //  ids move past the id + 100,000 (XXL_OTHER_RUN_IDS); a second such
    //  refusal of an id below them moves nothing.  (The allowed case, an
    //  acceptance with a message, is above.)
    int64_t rows [2] = { s_row (store, gid, jid), s_row (store, gid, jid) };
    for (int round = 0; round < 2; round++) {
        s_turn (self, rows [round], NULL, 1);
        XXL_CHECK_INT (s_runs (self, rows [round]).count, 1);
    }
    for (int round = 0; round < 2; round++) {
        int64_t r = rows [round];
        s_ended_id = r;
        s_ended = 0;
        char msg [80];
        snprintf (msg, sizeof msg, "logId %" PRId64 " already used by another run", r);
        XXL_CHECK (xxl_store_begin (store) == 0);
        int64_t before = engine_next_log_id (self);
        XXL_CHECK (xxl_store_commit (store) == 0);
        s_answered (self, r, XXL_CONFLICT, msg);
        log = s_load (store, r);
        XXL_CHECK_MSG (log.trigger_code == XXL_CODE_FAIL && s_ended == 1
                       && strstr (log.trigger_msg, "code: 409") && strstr (log.trigger_msg, msg)
                       && strstr (log.trigger_msg, "restored from a backup"),
                       "a 409 fails the row saying why: triggerCode %" PRId64 ", %d end(s),"
                       " triggerMsg '%s'", log.trigger_code, s_ended, log.trigger_msg);
        xxl_log_free (&log);
        XXL_CHECK (xxl_store_begin (store) == 0);
        int64_t next = engine_next_log_id (self);
        XXL_CHECK (xxl_store_commit (store) == 0);
        if (round == 0)
            XXL_CHECK_MSG (next > r + 100000, "the log ids moved past %" PRId64 " + 100000:"
                           " next %" PRId64, r, next);
        else
            XXL_CHECK_MSG (next == before + 1, "a row made before the move: not moved again"
                           " (%" PRId64 " after %" PRId64 ")", next, before);
    }

    //  A probing router's row: while a trigger pool routes it, a dispatch
    //  starts no second routing (two would each send it a RUN).  The pool
    //  has one worker, whose probes come to this test's socket: the first
    //  probe says the worker took the task, and it waits there unanswered
    //  while the row is dispatched again
    const char *probes = "inproc://test-dispatch-probes", *routed = "inproc://test-dispatch-routed";
    zsock_t *probe_sock = xxl_transport_inproc (ZMQ_ROUTER, probes, true);
    zsock_t *routed_sock = xxl_transport_inproc (ZMQ_PULL, routed, true);
    self->runs.fast_pool = xxl_pool_new ("fast", 1, 16, self->runs.routers, 1, probes, routed);
    XXL_CHECK (probe_sock && routed_sock && self->runs.fast_pool);
    int64_t fjid = xxl_test_engine_job (store, APP, "FAILOVER", &gid);
    int64_t r5 = s_row (store, gid, fjid);
    s_turn (self, r5, NULL, 1);
    zpoller_t *poller = zpoller_new (probe_sock, NULL);
    XXL_CHECK_MSG (zpoller_wait (poller, 10000) == probe_sock, "no probe from the pool's worker");
    zmsg_t *probe = zmsg_recv (probe_sock);
    zmsg_destroy (&probe);
    XXL_CHECK (zhashx_lookup (self->runs.routing, &r5) != NULL);
    s_turn (self, r5, NULL, 2);
    XXL_CHECK_MSG (xxl_pool_queued (self->runs.fast_pool) == 0, "a row the pool routes was"
                   " given to it again (%zu queued)", xxl_pool_queued (self->runs.fast_pool));
    XXL_CHECK_INT (s_runs (self, r5).count, 0);
    //  Its ROUTED result: the RUN goes, and the row is no longer routing
    zpoller_destroy (&poller);
    poller = zpoller_new (routed_sock, NULL);
    XXL_CHECK_MSG (zpoller_wait (poller, 10000) == routed_sock, "no ROUTED from the pool");
    zmsg_t *result = zmsg_recv (routed_sock);
    XXL_CHECK (xxl_store_begin (store) == 0);
    engine_handle_routed (self, result);
    XXL_CHECK (xxl_store_commit (store) == 0);
    zmsg_destroy (&result);
    XXL_CHECK (zhashx_lookup (self->runs.routing, &r5) == NULL);
    zpoller_destroy (&poller);
    //  (the pool first: a worker sends to the sockets until it stops)
    xxl_pool_destroy (&self->runs.fast_pool);
    zsock_destroy (&probe_sock);
    zsock_destroy (&routed_sock);

    //  Two schedulers route one FAILOVER row to the same agent: this
    //  one's pool probed a:9999; meanwhile the other took the row's share
    //  over, recovered the row and its own pool chose a:9999 too (the
    //  same probe lines).  This one's RUN is refused busy, read after the
    //  other's route: the row stays the other RUN's.  (Before: both routes
    //  wrote the same section, and the refusal took the row's address
    //  back under the other RUN, which the agent had taken.)
    snprintf (self->leases.node, sizeof self->leases.node, "%s", "sched-1");
    server_t *other = xxl_test_engine_new (store, NULL);
    snprintf (other->leases.node, sizeof other->leases.node, "%s", "sched-2");
    XXL_CHECK (xxl_test_engine_register (other, "conn-A", APP, "a:9999"));
    xxl_test_engine_runs (other, s_run_seen, &(seen_t) { 0 });
    const char *beat = "beat check: address=a:9999, code=200, msg=ok";
    int64_t r6 = s_row (store, gid, fjid);
    s_turn_routed (self, s_routed (r6, fjid, "a:9999", beat));
    XXL_CHECK_INT (s_runs (self, r6).count, 1);
    s_turn_routed (other, s_routed (r6, fjid, "a:9999", beat));
    XXL_CHECK_INT (s_runs (other, r6).count, 1);
    s_refused (self, r6, true);
    log = s_load (store, r6);
    XXL_CHECK_MSG (log.trigger_code == 0 && streq (log.executor_address, "a:9999"),
                   "a late busy refusal of one scheduler's routed RUN took the row back from"
                   " the other's: address '%s'", log.executor_address);
    XXL_CHECK (strstr (log.trigger_msg, "routed by scheduler sched-2\n") != NULL);
    xxl_log_free (&log);
    //  ... the other's own busy refusal takes it back
    s_refused (other, r6, true);
    log = s_load (store, r6);
    XXL_CHECK (log.trigger_code == 0 && !*log.executor_address);
    xxl_log_free (&log);
    xxl_test_engine_destroy (&other);

    //  Acceptances written alone: with few waiting, XXL_ACCEPTED_MS after
    //  they came; with more than XXL_ACCEPTED_BUSY waiting, not before
    //  XXL_ACCEPTED_BUSY_MS (a scheduler behind would write each such row
    //  twice).  Given `now` (monotonic ms) to the flush, the test waits
    //  for no clock.
    XXL_CHECK (xxl_store_begin (store) == 0);
    engine_accepted_flush (self, INT64_MAX);
    XXL_CHECK (xxl_store_commit (store) == 0);
    XXL_CHECK (engine_accepted_due (self) == INT64_MAX);
    for (int busy = 0; busy < 2; busy++) {
        int rows = busy? XXL_ACCEPTED_BUSY + 1: 3;
        int64_t *ids = (int64_t *) calloc ((size_t) rows, sizeof (int64_t));
        XXL_CHECK (xxl_store_begin (store) == 0);
        for (int i = 0; i < rows; i++) {
            ids [i] = s_row (store, gid, jid);
            engine_dispatch_row (self, ids [i], NULL, NULL);
        }
        XXL_CHECK (xxl_store_commit (store) == 0);
        xxl_test_engine_runs (self, s_run_seen, &(seen_t) { 0 });
        //  The agent accepts them all, read in one turn
        int64_t first = zclock_mono ();
        XXL_CHECK (xxl_store_begin (store) == 0);
        for (int i = 0; i < rows; i++) {
            pending_t *pending = s_pending (self, ids [i]);
            XXL_CHECK (pending);
            if (!pending)
                continue;
            engine_run_done (self, pending, XXL_OK, NULL);
            uint64_t id = pending->id;
            zhashx_delete (self->runs.pending, &id);
        }
        XXL_CHECK (xxl_store_commit (store) == 0);
        int64_t last = zclock_mono ();
        int64_t wait = busy? XXL_ACCEPTED_BUSY_MS: XXL_ACCEPTED_MS;
        int64_t due = engine_accepted_due (self);
        XXL_CHECK_MSG (due >= first + wait && due <= last + wait, "%d acceptance(s) due"
                       " %" PRId64 " ms after they came, want %" PRId64, rows, due - first, wait);
        //  Past XXL_ACCEPTED_MS: written when few wait, not when many do
        XXL_CHECK (xxl_store_begin (store) == 0);
        engine_accepted_flush (self, last + XXL_ACCEPTED_MS + 1);
        XXL_CHECK (xxl_store_commit (store) == 0);
        int accepted = 0;
        for (int i = 0; i < rows; i++) {
            log = s_load (store, ids [i]);
            accepted += log.trigger_code == XXL_OK;
            xxl_log_free (&log);
        }
        XXL_CHECK_MSG (accepted == (busy? 0: rows), "%d of %d acceptance(s) written alone"
                       " %d ms after they came", accepted, rows, XXL_ACCEPTED_MS + 1);
        //  Past XXL_ACCEPTED_BUSY_MS: written
        XXL_CHECK (xxl_store_begin (store) == 0);
        engine_accepted_flush (self, last + XXL_ACCEPTED_BUSY_MS + 1);
        XXL_CHECK (xxl_store_commit (store) == 0);
        accepted = 0;
        for (int i = 0; i < rows; i++) {
            log = s_load (store, ids [i]);
            accepted += log.trigger_code == XXL_OK;
            xxl_log_free (&log);
        }
        XXL_CHECK_INT (accepted, rows);
        XXL_CHECK (engine_accepted_due (self) == INT64_MAX);
        free (ids);
    }

    xxl_test_engine_destroy (&self);
    xxl_store_destroy (&store);
    XXL_CHECK (xxl_test_rmtree (dir) == 0);
    return xxl_test_done ();
}
