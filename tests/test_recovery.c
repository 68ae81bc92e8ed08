/*  test_recovery.c -- the recovery and planner decisions at a start,
    linking the engine directly: a store is prepared with what a stopped scheduler
    leaves (planned rows never sent, rows routed ahead, rows a commit knows
    were sent, a manual trigger not yet acknowledged, an accepted run), the
    engine is started in-process on it (xxl_server_actor, which recovers in
    its start) and stopped at once, and the rows are read back.

    Decisions held (docs/design.md, "Recovery"):
    - planned rows never sent, planned more than the pre-read window ago:
      the job's misfire rule, once per job: FIRE_ONCE_NOW keeps the newest
      as a MISFIRE row, DO_NOTHING drops them all;
    - a row routed ahead, not yet due and not known sent: its address goes,
      it is routed again at its time;
    - a row routed ahead whose time a commit knows was sent (xxl_job_fired's
      fired_sent): it went at its planned time, which becomes its trigger
      time, and it keeps its address (it goes again to the same agent);
    - a manual trigger not acknowledged, and an accepted run: kept;
    - a row routed ahead past its share's fired_sent, up to its
      fired_until, more than the window ago: it may have left in the last
      turn, so it is kept to ask its agent (its planned time as trigger
      time), not dropped by DO_NOTHING; one past fired_until is dropped.
    And the planner's first scan: a job whose next time passed while the
    scheduler was down fires once as MISFIRE (FIRE_ONCE_NOW) or not
    (DO_NOTHING), its next time after now; a FIX_DELAY job fires and waits.
*/

#include "xxl_server.h"
#include "xxl_test_store.h"
#include "xxl_test.h"

static char s_dir [] = "/tmp/xxl-test-recovery-XXXXXX";

//  A started every-second cron job of group gid with the misfire rule,
//  its next time in the future (the planner fires no misfire of its own)
static int64_t
s_job (xxl_store_t *store, int64_t gid, const char *misfire, int64_t next)
{
    xxl_job_t job = {
        .job_group = gid, .job_desc = "recovery", .author = "", .alarm_email = "",
        .schedule_type = "CRON", .schedule_conf = "* * * * * ?",
        .misfire_strategy = (char *) misfire, .executor_route_strategy = "FIRST",
        .executor_handler = "demoJobHandler", .executor_param = "",
        .executor_block_strategy = "SERIAL_EXECUTION", .glue_type = "BEAN",
        .glue_source = "", .glue_remark = "", .child_jobid = "", .timezone = "",
        .trigger_status = 1, .trigger_next_time = next, .retry_backoff = 1
    };
    return xxl_store_job_add (store, &job);
}

//  A log row of job jid; schedule 0 for a manual trigger
static int64_t
s_row (xxl_store_t *store, int64_t gid, int64_t jid, int64_t schedule, int64_t trigger_time,
       const char *address, int code)
{
    xxl_log_t log = {
        .job_group = gid, .job_id = jid, .executor_handler = "demoJobHandler",
        .executor_param = "", .executor_address = (char *) address,
        .trigger_time = trigger_time, .trigger_code = code,
        .trigger_msg = schedule? "Trigger type: Cron trigger\n": "Trigger type: Manual trigger\n",
        .trigger_type = schedule? "CRON": "MANUAL", .schedule_time = schedule
    };
    return xxl_store_log_add (store, &log) == 0? log.id: -1;
}

int
main (void)
{
    zsys_init ();
    zsys_set_logstream (NULL);
    XXL_CHECK (mkdtemp (s_dir) != NULL);
    char file [256], err [256];
    snprintf (file, sizeof file, "%s/xxl.db", s_dir);
    //  (or the PostgreSQL database XXL_TEST_STORE_URL names)
    const char *path = xxl_test_store_url (file);
    xxl_store_t *store = xxl_store_new (path, err, sizeof err);
    XXL_CHECK (store);
    if (!store)
        return xxl_test_done ();

    int64_t now = zclock_time ();
    xxl_group_t group = { .app_name = "rec-app", .title = "", .update_time = now };
    int64_t gid = xxl_store_group_add (store, &group);
    int64_t fn = s_job (store, gid, "FIRE_ONCE_NOW", now + 60000);
    int64_t dn = s_job (store, gid, "DO_NOTHING", now + 60000);
    XXL_CHECK (gid > 0 && fn > 0 && dn > 0);
    //  Planned a minute ago, never sent (no address): three seconds each
    int64_t late [2][3];
    for (int s = 0; s < 3; s++) {
        int64_t when = (now / 1000 - 60 + s) * 1000;
        late [0][s] = s_row (store, gid, fn, when, when, NULL, 0);
        late [1][s] = s_row (store, gid, dn, when, when, NULL, 0);
    }
    //  Routed ahead to a1, due in 20 s, neither stamped nor known sent
    int64_t ahead_when = (now / 1000 + 20) * 1000;
    int64_t ahead = s_row (store, gid, fn, ahead_when, now, "a1:9999", 0);
    //  Routed ahead and fired at its time with no store access: a commit
    //  recorded fired_sent past it, its trigger time was never written
    int64_t sent_when = (now / 1000 - 40) * 1000;
    int64_t sent = s_row (store, gid, dn, sent_when, sent_when - 5000, "a2:9999", 0);
    XXL_CHECK (XXL_TEST_EXEC (store, "UPDATE xxl_lease SET fired_sent = ?,"
                                      " fired_until = ?", "ii", sent_when + 1000,
                                      sent_when + 1000) == XXL_STORE_SHARES);
    //  A manual trigger not acknowledged, and a run accepted and running
    int64_t manual = s_row (store, gid, fn, 0, now - 2000, "a1:9999", 0);
    int64_t running = s_row (store, gid, fn, 0, now - 3000, "a1:9999", 200);
    XXL_CHECK (late [1][2] > 0 && ahead > 0 && sent > 0 && manual > 0 && running > 0);
    //  For the planner's first scan: jobs whose next time passed a minute
    //  ago (the scheduler was down; no rows were planned for them), and a
    //  FIX_DELAY job due in a second (FIRE_ONCE_NOW: a slow start fires it
    //  as a misfire, at the same planned time)
    int64_t pfn = s_job (store, gid, "FIRE_ONCE_NOW", now - 60000);
    int64_t pdn = s_job (store, gid, "DO_NOTHING", now - 60000);
    int64_t pfd = s_job (store, gid, "FIRE_ONCE_NOW", now + 1000);
    //  A FIRE_ONCE_NOW job with a never-sent row a minute late and a next
    //  time two seconds ago, inside the window: recovery's MISFIRE is the
    //  outage's one; the planner neither fires the seconds in the window
    //  nor, should its first scan find the next time past the window, a
    //  second MISFIRE
    int64_t bfn = s_job (store, gid, "FIRE_ONCE_NOW", (now / 1000 - 2) * 1000);
    int64_t blate = s_row (store, gid, bfn, (now / 1000 - 60) * 1000, (now / 1000 - 60) * 1000,
                           NULL, 0);
    XXL_CHECK (bfn > 0 && blate > 0);
    //  A DO_NOTHING job whose share's previous owner may have sent rows
    //  up to its fired_until (w + 1 s) and is known to have sent them up
    //  to its fired_sent (w - 1 s), half a minute ago: its row routed
    //  ahead at w may have left in the last turn (asked about: kept,
    //  its planned time as trigger time, its agent kept); the one at
    //  w + 2 s could not have (dropped as DO_NOTHING says)
    int64_t an = s_job (store, gid, "DO_NOTHING", now + 60000);
    int64_t w = (now / 1000 - 30) * 1000;
    int64_t maybe = s_row (store, gid, an, w, w - 5000, "a3:9999", 0);
    int64_t never = s_row (store, gid, an, w + 2000, w - 3000, "a3:9999", 0);
    XXL_CHECK (an > 0 && maybe > 0 && never > 0);
    XXL_CHECK (XXL_TEST_EXEC (store, "UPDATE xxl_lease SET fired_sent = ?, fired_until = ?"
                                      " WHERE share = ?", "iii", w - 1000, w + 1000,
                                      an % XXL_STORE_SHARES) == 1);
    XXL_CHECK (XXL_TEST_EXEC (store, "UPDATE xxl_job_info SET schedule_type = 'FIX_DELAY',"
                                      " schedule_conf = '30' WHERE id = ?", "i", pfd) == 1);
    xxl_store_destroy (&store);

    //  The engine recovers as it starts; stopped at once
    xxl_server_config_t config;
    xxl_server_config_defaults (&config);
    config.db = path;
    config.api = "tcp://127.0.0.1:*";
    config.agents = "tcp://127.0.0.1:*";
    config.plugins = "plugins/routers/.libs";
    config.alarm_plugins = "plugins/alarms/.libs";
    config.stop_wait_ms = 0;
    zactor_t *server = zactor_new (xxl_server_actor, &config);
    XXL_CHECK (server && config.status == 0);
    //  (until the planner has moved the three jobs on: the FIX_DELAY one
    //  once it fired)
    xxl_store_t *reader = xxl_store_new (path, err, sizeof err);
    XXL_CHECK (reader);
    int64_t moved = 0;
    for (int i = 0; reader && i < 100 && moved < 4; i++) {
        moved = XXL_TEST_SCALAR (reader, "SELECT COUNT(*) FROM xxl_job_info WHERE"
                                         " (id IN (?, ?, ?) AND trigger_next_time > ?)"
                                         " OR (id = ? AND trigger_next_time = 253402300799000)",
                                         "iiiii", pfn, pdn, bfn, now, pfd);
        if (moved < 4)
            zclock_sleep (100);
    }
    XXL_CHECK (moved == 4);
    xxl_store_destroy (&reader);
    zactor_destroy (&server);

    store = xxl_store_new (path, err, sizeof err);
    XXL_CHECK (store);
    if (!store)
        return xxl_test_done ();
    //  FIRE_ONCE_NOW: one row of the three, the newest, as MISFIRE
    XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = ?"
                                        " AND schedule_time < ?", "ii", fn, now - 30000) == 1);
    xxl_log_t row;
    XXL_CHECK (xxl_store_log_load (store, late [0][2], &row) == 0);
    XXL_CHECK (row.trigger_type && streq (row.trigger_type, "MISFIRE"));
    XXL_CHECK (row.trigger_msg && strstr (row.trigger_msg, "Misfire compensation trigger")
               && strstr (row.trigger_msg, "FIRE_ONCE_NOW"));
    xxl_log_free (&row);
    XXL_CHECK (xxl_store_log_load (store, late [0][0], &row) == 1);
    XXL_CHECK (xxl_store_log_load (store, late [0][1], &row) == 1);
    //  DO_NOTHING: none of its three
    for (int s = 0; s < 3; s++)
        XXL_CHECK (xxl_store_log_load (store, late [1][s], &row) == 1);
    //  Possibly sent in the last turn, past the window: kept for its
    //  agent to be asked (no agent here: still unanswered); the one
    //  planned past fired_until: dropped
    XXL_CHECK (xxl_store_log_load (store, maybe, &row) == 0);
    XXL_CHECK (row.trigger_code == 0 && row.trigger_time == w
               && streq (row.executor_address, "a3:9999"));
    xxl_log_free (&row);
    XXL_CHECK (xxl_store_log_load (store, never, &row) == 1);
    //  Routed ahead, not known sent: no address now, still unsent
    XXL_CHECK (xxl_store_log_load (store, ahead, &row) == 0);
    XXL_CHECK (row.trigger_code == 0 && streq (row.executor_address, ""));
    xxl_log_free (&row);
    //  Known sent: its planned time as trigger time, its agent kept
    XXL_CHECK (xxl_store_log_load (store, sent, &row) == 0);
    XXL_CHECK (row.trigger_time == sent_when && streq (row.executor_address, "a2:9999"));
    xxl_log_free (&row);
    //  The manual trigger and the running run: kept as they were
    XXL_CHECK (xxl_store_log_load (store, manual, &row) == 0);
    XXL_CHECK (row.trigger_code == 0 || row.trigger_code == 500);
    xxl_log_free (&row);
    XXL_CHECK (xxl_store_log_load (store, running, &row) == 0);
    XXL_CHECK (row.trigger_code == 200 && row.handle_code == 0);
    xxl_log_free (&row);
    //  The planner: a missed time fires once now as MISFIRE under
    //  FIRE_ONCE_NOW, not at all under DO_NOTHING; both jobs' next times
    //  are after now (no burst of the missed seconds); the FIX_DELAY job
    //  fired and waits for its run's end ("never" until then)
    XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = ?"
                                        " AND trigger_type = 'MISFIRE'", "i", pfn) == 1);
    XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = ?"
                                        " AND trigger_type = 'CRON' AND schedule_time < ?", "ii",
                                        pfn, now) == 0);
    XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = ?"
                                        " AND schedule_time < ?", "ii", pdn, now) == 0);
    xxl_job_t job;
    XXL_CHECK (xxl_store_job_load (store, pdn, &job) == 0 && job.trigger_next_time > now
               && job.trigger_status == 1);
    xxl_job_free (&job);
    XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = ?"
                                        " AND schedule_time = ?", "ii", pfd, now + 1000) == 1);
    XXL_CHECK (xxl_store_job_load (store, pfd, &job) == 0
               && job.trigger_next_time == 253402300799000LL);
    xxl_job_free (&job);
    //  The job late in and past the window: one MISFIRE, its late row
    XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = ?"
                                        " AND trigger_type = 'MISFIRE'", "i", bfn) == 1);
    XXL_CHECK (xxl_store_log_load (store, blate, &row) == 0
               && streq (row.trigger_type, "MISFIRE"));
    xxl_log_free (&row);
    XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = ?"
                                        " AND trigger_type = 'CRON' AND schedule_time <= ?", "ii",
                                        bfn, now) == 0);
    xxl_store_destroy (&store);
    char command [512];
    snprintf (command, sizeof command, "rm -rf %s", s_dir);
    XXL_CHECK (system (command) == 0);
    return xxl_test_done ();
}
