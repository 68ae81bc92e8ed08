/*  test_store.c -- the store: schema, migrations, rows, idempotence.

    Runs on SQLite (a file in a temporary folder), or on the PostgreSQL
    database XXL_TEST_STORE_URL names (tests/test_store_pg.sh: a fresh
    database on a server of its own).  The checks of one backend's own
    machinery say so and are skipped on the other with the reason:
    SQLite's WAL and checkpointer, its file errors; PostgreSQL's
    connections (two at once on one database: migrations, the write
    lock, data_version, log ids; a lost connection and a restarted
    server).
*/

#define _GNU_SOURCE                     //  memmem
#include "xxl_test_store.h"
#include "xxl_store_sql.h"
#include "xxl_first_admin.h"
#include "xxl_secret.h"
#include "xxl_test.h"

#include <czmq.h>
#include <dirent.h>
#include <pthread.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

//  The schema version a store opened now has (each backend counts its own
//  migrations: PostgreSQL has one of its own, 16)
#define XXL_TEST_SCHEMA (xxl_test_pg? 22: 21)

static char s_dir [] = "/tmp/xxl-test-store-XXXXXX";

//  A new encoder holding a REPLY's map up to the key of its rows
static xxl_enc_t *
s_reply_page (const char *key)
{
    xxl_enc_t *enc = xxl_enc_new ();
    xxl_enc_map_begin (enc);
    xxl_enc_kint (enc, "id", 1);
    xxl_enc_kint (enc, "v", 1);
    xxl_enc_kstr (enc, "t", "REPLY");
    xxl_enc_key (enc, key);
    return enc;
}

//  An audit page (xxl_store_audit_encode_page) decoded: its rows' ids into
//  ids (up to max), the first row into *first (strings owned by *msg_p,
//  which the caller destroys); the count, or -1
static int
s_audit_page (xxl_store_t *store, int64_t before, int64_t limit, size_t max_size,
              int *truncated, int64_t *ids, size_t max, xxl_msg_t **msg_p, xxl_audit_t *first)
{
    xxl_enc_t *enc = s_reply_page ("audit");
    int rows = xxl_store_audit_encode_page (store, enc, max_size, truncated, before, limit);
    xxl_enc_map_end (enc);
    size_t size;
    const void *data = xxl_enc_finish (enc, &size);
    char why [256];
    *msg_p = rows < 0? NULL: xxl_msg_decode (data, size, NULL, why, sizeof why);
    xxl_enc_destroy (&enc);
    size_t count = 0;
    const msgpack_object *items = *msg_p? xxl_msg_array (*msg_p, NULL, "audit", 1, 1000, &count)
                                        : NULL;
    if (!items && rows != 0)
        return -1;
    for (size_t i = 0; i < count && i < max; i++)
        ids [i] = xxl_msg_int (*msg_p, &items [i], "id", 1, 1, INT64_MAX, 0);
    if (count) {
        first->id = ids [0];
        first->time = xxl_msg_int (*msg_p, &items [0], "time", 1, 0, INT64_MAX, 0);
        first->who = xxl_msg_str (*msg_p, &items [0], "who", 1, 255, NULL);
        first->role = xxl_msg_str (*msg_p, &items [0], "role", 1, 255, NULL);
        first->type = xxl_msg_str (*msg_p, &items [0], "type", 1, 255, NULL);
        first->target = xxl_msg_int (*msg_p, &items [0], "target", 1, 0, INT64_MAX, -1);
        first->code = (int) xxl_msg_int (*msg_p, &items [0], "code", 1, 0, 999, -1);
    }
    return (int) count == rows? rows: -1;
}

//  PostgreSQL: a store opened on another thread, all threads at once
typedef struct {
    pthread_barrier_t *barrier;
    const char *url;
    xxl_store_t *store;
    char err [512];
} opener_t;

static void *
s_opener (void *args)
{
    opener_t *opener = (opener_t *) args;
    pthread_barrier_wait (opener->barrier);
    opener->store = xxl_store_new (opener->url, opener->err, sizeof opener->err);
    return NULL;
}

//  PostgreSQL: begin on another thread; when it returned, and what
typedef struct {
    xxl_store_t *store;
    int rc;
    int64_t at;
} beginner_t;

static void *
s_beginner (void *args)
{
    beginner_t *beginner = (beginner_t *) args;
    beginner->rc = xxl_store_begin (beginner->store);
    beginner->at = zclock_mono ();
    return NULL;
}

//  The same connection's first statement that needs the write lock (a
//  job's times: not one of the runs' hot path) in its open transaction
typedef struct {
    xxl_store_t *store;
    int64_t job_id;
    int rc;
    int64_t at;
} locker_t;

static void *
s_locker (void *args)
{
    locker_t *locker = (locker_t *) args;
    locker->rc = xxl_store_job_set_times (locker->store, locker->job_id, 5, 6);
    locker->at = zclock_mono ();
    return NULL;
}

//  Another connection's change of a run's row under the write lock (it
//  holds it), then its commit
typedef struct {
    xxl_store_t *store;
    int64_t log_id;
    const char *sql;
    int rc, commit_rc;
} rower_t;

static void *
s_rower (void *args)
{
    rower_t *rower = (rower_t *) args;
    rower->rc = xxl_store_pg_exec (rower->store, rower->sql, "i", rower->log_id);
    rower->commit_rc = xxl_store_commit (rower->store);
    return NULL;
}

//  PostgreSQL's connections side by side on the test's database (url):
//  migrations at once, the write lock, data_version, log ids across
//  connections, a write failing inside a transaction, a connection lost,
//  the server restarted (XXL_TEST_PG_RESTART: a command that restarts
//  it).  gid, jid: a group and a job of the store.
static void
s_pg_connections (xxl_store_t *store, const char *url, int64_t gid, int64_t jid)
{
    char err [512];
    //  Two schedulers opening an empty database at once: one migrates,
    //  the other waits for it and finds the schema done (an empty
    //  database per round: a schema of its own, named in the URL)
    for (int round = 0; round < 3; round++) {
        char *sql = zsys_sprintf ("CREATE SCHEMA xxl_race_%d", round);
        XXL_CHECK (xxl_store_pg_exec (store, sql, NULL) == 0);
        zstr_free (&sql);
        char *race = zsys_sprintf ("%s%coptions=-c%%20search_path%%3Dxxl_race_%d", url,
                                   strchr (url, '?')? '&': '?', round);
        pthread_barrier_t barrier;
        pthread_barrier_init (&barrier, NULL, 2);
        opener_t openers [2] = { { &barrier, race, NULL, "" }, { &barrier, race, NULL, "" } };
        pthread_t threads [2];
        for (int i = 0; i < 2; i++)
            pthread_create (&threads [i], NULL, s_opener, &openers [i]);
        for (int i = 0; i < 2; i++)
            pthread_join (threads [i], NULL);
        pthread_barrier_destroy (&barrier);
        for (int i = 0; i < 2; i++) {
            if (!openers [i].store)
                fprintf (stderr, "race %d: %s\n", round, openers [i].err);
            XXL_CHECK (openers [i].store && xxl_store_schema_version (openers [i].store)
                       == XXL_TEST_SCHEMA);
        }
        if (openers [0].store) {
            XXL_CHECK (xxl_store_pg_scalar (openers [0].store,
                "SELECT COUNT(*) FROM xxl_schema", NULL) == 1);
            XXL_CHECK (xxl_store_pg_scalar (openers [0].store,
                "SELECT COUNT(*) FROM pg_tables WHERE schemaname = current_schema ()", NULL) == 19);
        }
        for (int i = 0; i < 2; i++)
            xxl_store_destroy (&openers [i].store);
        zstr_free (&race);
        sql = zsys_sprintf ("DROP SCHEMA xxl_race_%d CASCADE", round);
        XXL_CHECK (xxl_store_pg_exec (store, sql, NULL) == 0);
        zstr_free (&sql);
    }

    //  A side connection (the reporter's) may run a statement 10 minutes,
    //  the engine's 10 s
    xxl_store_t *side = xxl_store_side_new (url, err, sizeof err);
    XXL_CHECK (side);
    if (side) {
        char *limit = xxl_store_pg_text (side, "SELECT current_setting ('statement_timeout')", NULL);
        XXL_CHECK (limit && streq (limit, "10min"));
        zstr_free (&limit);
        limit = xxl_store_pg_text (store, "SELECT current_setting ('statement_timeout')", NULL);
        XXL_CHECK (limit && streq (limit, "10s"));
        zstr_free (&limit);
        xxl_store_destroy (&side);
    }

    xxl_store_t *other = xxl_store_new (url, err, sizeof err);
    XXL_CHECK (other);
    if (!other)
        return;

    //  data_version moves after another connection's commit, not after
    //  one's own (in a transaction or not), nor after a commit that wrote
    //  nothing
    int64_t mine = xxl_store_data_version (store);
    int64_t theirs = xxl_store_data_version (other);
    XXL_CHECK (mine >= 0 && theirs >= 0);
    XXL_CHECK (xxl_store_begin (store) == 0);
    XXL_CHECK (xxl_store_job_set_times (store, jid, 1, 2) == 1);
    XXL_CHECK (xxl_store_commit (store) == 0);
    XXL_CHECK (xxl_store_registry_beat (store, "race-app", "race-host", 1) == 0);
    XXL_CHECK (xxl_store_data_version (store) == mine);
    int64_t seen = xxl_store_data_version (other);
    XXL_CHECK (seen != theirs);
    XXL_CHECK (xxl_store_data_version (other) == seen);
    XXL_CHECK (xxl_store_begin (other) == 0 && xxl_store_commit (other) == 0);
    XXL_CHECK (xxl_store_data_version (store) == mine);
    XXL_CHECK (xxl_store_begin (other) == 0);
    XXL_CHECK (xxl_store_registry_remove (other, "race-app", "race-host") == 0);
    XXL_CHECK (xxl_store_commit (other) == 0);
    XXL_CHECK (xxl_store_data_version (other) == seen);
    XXL_CHECK (xxl_store_data_version (store) != mine);
    //  ... and as the engine asks, first thing in its transaction
    mine = xxl_store_data_version (store);
    XXL_CHECK (xxl_store_registry_beat (other, "race-app", "race-host", 2) == 0);
    XXL_CHECK (xxl_store_begin (store) == 0);
    int64_t inside = xxl_store_data_version (store);
    XXL_CHECK (inside != mine);
    XXL_CHECK (xxl_store_job_set_times (store, jid, 1, 2) == 1);
    XXL_CHECK (xxl_store_data_version (store) == inside);
    XXL_CHECK (xxl_store_commit (store) == 0);
    XXL_CHECK (xxl_store_begin (store) == 0);
    XXL_CHECK (xxl_store_data_version (store) == inside);
    XXL_CHECK (xxl_store_commit (store) == 0);
    XXL_CHECK (xxl_store_registry_remove (other, "race-app", "race-host") == 0);
    //  ... and again in the middle of its transaction, which another's
    //  commit (a job stopped) need not wait for: the first ask is begin's
    //  answer, a later one sees that commit (the planner asks before fires
    //  that go without the store, so that a stop committed meanwhile is
    //  not followed by one of its fires); without another's commit it
    //  stays, and its own commit does not move it
    XXL_CHECK (xxl_store_begin (other) == 0);
    theirs = xxl_store_data_version (other);
    XXL_CHECK (xxl_store_data_version (other) == theirs);
    XXL_CHECK (xxl_store_begin (store) == 0);
    XXL_CHECK (xxl_store_job_set_times (store, jid, 1, 2) == 1);      //  (the write lock)
    XXL_CHECK (xxl_store_commit (store) == 0);
    XXL_CHECK (xxl_store_data_version (other) != theirs);
    theirs = xxl_store_data_version (other);
    XXL_CHECK (xxl_store_job_set_times (other, jid, 1, 2) == 1);
    XXL_CHECK (xxl_store_commit (other) == 0);
    XXL_CHECK (xxl_store_data_version (other) == theirs);

    //  The write lock: begin does not take it, and two connections adding
    //  runs and their results (the hot path) never wait for each other;
    //  the first other statement takes it, and another connection's waits
    //  there for the holder's commit
    XXL_CHECK (xxl_store_begin (store) == 0);
    XXL_CHECK (xxl_store_job_set_times (store, jid, 1, 2) == 1);
    beginner_t beginner = { other, -2, 0 };
    pthread_t thread;
    pthread_create (&thread, NULL, s_beginner, &beginner);
    pthread_join (thread, NULL);
    XXL_CHECK (beginner.rc == 0);
    int64_t next = xxl_store_log_next_id (other);
    xxl_log_t row = { .job_group = gid, .job_id = jid, .executor_handler = "h",
                      .executor_param = "", .trigger_time = 1, .trigger_msg = "",
                      .trigger_type = "MANUAL", .id = next };
    XXL_CHECK (next > 0 && xxl_store_log_add (other, &row) == 0);
    XXL_CHECK (xxl_store_log_trigger_done (other, next, 200, "a1", "ok") == 1);
    XXL_CHECK (xxl_store_log_handle_done (other, next, 7, 200, "done") == 0);
    XXL_CHECK (xxl_store_commit (other) == 0);
    XXL_CHECK (xxl_store_begin (other) == 0);
    locker_t locker = { other, jid, -2, 0 };
    pthread_create (&thread, NULL, s_locker, &locker);
    zclock_sleep (300);
    int64_t released = zclock_mono ();
    XXL_CHECK (xxl_store_commit (store) == 0);
    pthread_join (thread, NULL);
    XXL_CHECK (locker.rc == 1 && locker.at >= released);
    XXL_CHECK (xxl_store_commit (other) == 0);

    //  Lock order: a transaction that changed a run's row without the
    //  write lock (a result) and then needs the lock does not wait for it
    //  holding that row, which the lock's holder waits for (a deadlock,
    //  PostgreSQL's "deadlock detected" failing one of them after 1 s):
    //  it frees the row, waits for the lock and changes the row again
    //  (as if the other had committed first); both commit.  When the
    //  other's change makes its change's result differ (the row gone), it
    //  fails rather than go on from a result that no longer holds.
    for (int round = 0; round < 2; round++) {
        xxl_log_t run = { .job_group = gid, .job_id = jid, .executor_handler = "h",
                          .executor_param = "", .trigger_time = 1, .trigger_msg = "",
                          .trigger_type = "MANUAL" };
        XXL_CHECK (xxl_store_log_add (store, &run) == 0 && run.id > 0);
        XXL_CHECK (xxl_store_begin (store) == 0);
        XXL_CHECK (xxl_store_log_trigger_done (store, run.id, 200, "a1", "ok") == 1);
        XXL_CHECK (xxl_store_begin (other) == 0);
        XXL_CHECK (xxl_store_job_set_times (other, jid, 3, 4) == 1);      //  (the lock)
        rower_t rower = { other, run.id, round == 0
            ? "UPDATE xxl_job_log SET alarm_status = 3 WHERE id = $1"
            : "DELETE FROM xxl_job_log WHERE id = $1", -2, -2 };
        pthread_create (&thread, NULL, s_rower, &rower);
        //  (the other waits for the row)
        for (int tries = 0; tries < 100; tries++) {
            if (XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM pg_stat_activity WHERE"
                                 " wait_event_type = 'Lock' AND wait_event = 'transactionid'",
                                 NULL) > 0)
                break;
            zclock_sleep (50);
        }
        int rc = xxl_store_job_set_times (store, jid, 5, 6);
        pthread_join (thread, NULL);
        XXL_CHECK (rower.rc == 1 && rower.commit_rc == 0);
        if (round == 0) {
            XXL_CHECK (rc == 1);
            XXL_CHECK (xxl_store_commit (store) == 0);
            XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_job_log WHERE id = ?"
                " AND trigger_code = 200 AND alarm_status = 3", "i", run.id) == 1);
        }
        else {
            XXL_CHECK (rc == -1 && strstr (xxl_store_error (store),
                                          "a row changed while the transaction waited"));
            XXL_CHECK (xxl_store_commit (store) == -1);
        }
        XXL_CHECK (XXL_TEST_EXEC (store, "DELETE FROM xxl_job_log WHERE id = ?", "i",
                                  run.id) == 1 - round);
    }

    //  Log ids across connections: each hands out ids of a block of its
    //  own (two transactions at once never collide), a run of
    //  XXL_STORE_LOG_ID_RUN after each next_id, past the ids it added
    //  itself; an id is never handed out again, even after a rollback
    XXL_CHECK (xxl_store_begin (store) == 0);
    XXL_CHECK (xxl_store_begin (other) == 0);
    int64_t mine_next = xxl_store_log_next_id (store);
    int64_t theirs_next = xxl_store_log_next_id (other);
    XXL_CHECK (mine_next > 0 && theirs_next > 0);
    XXL_CHECK (mine_next + XXL_STORE_LOG_ID_RUN <= theirs_next
           ||  theirs_next + XXL_STORE_LOG_ID_RUN <= mine_next);
    row.id = mine_next;
    XXL_CHECK (xxl_store_log_add (store, &row) == 0);
    row.id = mine_next + XXL_STORE_LOG_ID_RUN - 1;
    XXL_CHECK (xxl_store_log_add (store, &row) == 0);
    row.id = theirs_next;
    XXL_CHECK (xxl_store_log_add (other, &row) == 0);
    XXL_CHECK (xxl_store_log_next_id (store) == mine_next + XXL_STORE_LOG_ID_RUN);
    XXL_CHECK (xxl_store_commit (other) == 0);
    XXL_CHECK (xxl_store_commit (store) == 0);
    XXL_CHECK (xxl_store_begin (other) == 0);
    row.id = 0;
    XXL_CHECK (xxl_store_log_add (other, &row) == 0 && row.id > 0);
    XXL_CHECK (row.id != mine_next && row.id != theirs_next);
    XXL_CHECK (xxl_store_commit (other) == 0);
    XXL_CHECK (xxl_store_begin (store) == 0);
    row.id = xxl_store_log_next_id (store);
    next = row.id;
    XXL_CHECK (row.id > mine_next && xxl_store_log_add (store, &row) == 0);
    XXL_CHECK (xxl_store_rollback (store) == 0);
    XXL_CHECK (xxl_store_log_next_id (store) > next);

    //  The fence: a share never changes hands in the middle of a
    //  transaction of the connection that holds it (while its lease has
    //  not expired on the store's clock); a share another holds is taken
    //  once that one's transaction ended, and the other shares meanwhile
    xxl_lease_t leases [XXL_STORE_SHARES];
    int64_t later = xxl_store_clock_now (store) + 60000;
    XXL_CHECK (xxl_store_begin (store) == 0);
    XXL_CHECK (xxl_store_lease_list (store, leases) == 0);
    XXL_CHECK (xxl_store_lease_take (store, 5, "node-a", leases [5].epoch, later) == 1);
    XXL_CHECK (xxl_store_lease_take (store, 7, "node-a", leases [7].epoch, 1) == 1);
    XXL_CHECK (xxl_store_commit (store) == 0);
    XXL_CHECK (xxl_store_begin (store) == 0);
    XXL_CHECK (xxl_store_begin (other) == 0);
    XXL_CHECK (xxl_store_lease_list (other, leases) == 0);
    XXL_CHECK (streq (leases [5].owner, "node-a"));
    XXL_CHECK (xxl_store_lease_take (other, 5, "node-b", leases [5].epoch, 2) == 0);
    XXL_CHECK (xxl_store_lease_take (other, 6, "node-b", leases [6].epoch, 2) == 1);
    XXL_CHECK (xxl_store_lease_take (other, 7, "node-b", leases [7].epoch, 2) == 1);
    XXL_CHECK (xxl_store_commit (other) == 0);
    XXL_CHECK (xxl_store_commit (store) == 0);
    XXL_CHECK (xxl_store_begin (other) == 0);
    XXL_CHECK (xxl_store_lease_take (other, 5, "node-b", leases [5].epoch, 2) == 1);
    XXL_CHECK (xxl_store_lease_release (other, 5, "node-b", leases [5].epoch + 1, 0) == 1);
    XXL_CHECK (xxl_store_lease_release (other, 6, "node-b", leases [6].epoch + 1, 0) == 1);
    XXL_CHECK (xxl_store_lease_release (other, 7, "node-b", leases [7].epoch + 1, 0) == 1);
    XXL_CHECK (xxl_store_commit (other) == 0);

    //  A write failing inside a transaction: PostgreSQL aborts it; later
    //  calls fail with that first cause, the handle stays in it until
    //  commit, which fails; nothing of it is left
    XXL_CHECK (xxl_store_begin (store) == 0);
    xxl_log_t doomed = row;
    doomed.id = 0;
    XXL_CHECK (xxl_store_log_add (store, &doomed) == 0);
    XXL_CHECK (xxl_store_pg_exec (store, "UPDATE nowhere SET x = 1", NULL) == -1);
    char cause [512];
    snprintf (cause, sizeof cause, "%s", xxl_store_error (store));
    XXL_CHECK (strstr (cause, "nowhere"));
    XXL_CHECK (xxl_store_in_txn (store) == 1);
    XXL_CHECK (xxl_store_log_route (store, doomed.id, 0, "a1", "s\n") == -1);
    XXL_CHECK (streq (xxl_store_error (store), cause));
    XXL_CHECK (xxl_store_job_exists (store, jid) == -1);
    XXL_CHECK (xxl_store_in_txn (store) == 1);
    XXL_CHECK (xxl_store_commit (store) == -1);
    XXL_CHECK (streq (xxl_store_error (store), cause));
    XXL_CHECK (xxl_store_in_txn (store) == 0);
    xxl_log_t back;
    XXL_CHECK (xxl_store_log_load (store, doomed.id, &back) == 1);
    XXL_CHECK (xxl_store_begin (store) == 0 && xxl_store_commit (store) == 0);

    //  A lost connection (its server process ended): calls fail saying
    //  so; the next begin reconnects.  Inside a transaction: the commit
    //  fails, and nothing of it is left.
    int64_t pid = xxl_store_pg_scalar (store, "SELECT pg_backend_pid ()", NULL);
    XXL_CHECK (xxl_store_pg_scalar (other, "SELECT pg_terminate_backend (CAST ($1 AS INTEGER),"
                                    " 5000)", "i", pid) == 1);
    XXL_CHECK (xxl_store_job_exists (store, jid) == -1);
    XXL_CHECK (strstr (xxl_store_error (store), "connection"));
    XXL_CHECK (xxl_store_job_exists (store, jid) == -1);
    XXL_CHECK (xxl_store_begin (store) == 0);
    XXL_CHECK (xxl_store_job_exists (store, jid) == 1);
    XXL_CHECK (xxl_store_commit (store) == 0);
    XXL_CHECK (xxl_store_begin (store) == 0);
    doomed.id = 0;
    XXL_CHECK (xxl_store_log_add (store, &doomed) == 0);
    pid = xxl_store_pg_scalar (store, "SELECT pg_backend_pid ()", NULL);
    XXL_CHECK (xxl_store_pg_scalar (other, "SELECT pg_terminate_backend (CAST ($1 AS INTEGER),"
                                    " 5000)", "i", pid) == 1);
    XXL_CHECK (xxl_store_log_stamp (store, doomed.id, 5) == -1);
    XXL_CHECK (xxl_store_in_txn (store) == 1);
    XXL_CHECK (xxl_store_commit (store) == -1 && strstr (xxl_store_error (store), "connection"));
    XXL_CHECK (xxl_store_in_txn (store) == 0);
    XXL_CHECK (xxl_store_begin (store) == 0);
    XXL_CHECK (xxl_store_log_load (store, doomed.id, &back) == 1);
    XXL_CHECK (xxl_store_commit (store) == 0);

    //  The server restarted under open stores: the next begin reconnects
    const char *restart = getenv ("XXL_TEST_PG_RESTART");
    if (restart && *restart) {
        XXL_CHECK (system (restart) == 0);
        XXL_CHECK (xxl_store_begin (store) == 0);
        XXL_CHECK (xxl_store_job_exists (store, jid) == 1);
        XXL_CHECK (xxl_store_job_set_times (store, jid, 3, 4) == 1);
        XXL_CHECK (xxl_store_commit (store) == 0);
        XXL_CHECK (xxl_store_begin (other) == 0);
        xxl_job_t job;
        XXL_CHECK (xxl_store_job_load (other, jid, &job) == 0 && job.trigger_next_time == 4);
        xxl_job_free (&job);
        XXL_CHECK (xxl_store_commit (other) == 0);
    }
    else
        printf ("# skipped: a server restart (XXL_TEST_PG_RESTART unset)\n");
    xxl_store_destroy (&other);
}

//  --------------------------------------------------------------------
//  Parity: the same changes on an SQLite store and a PostgreSQL one, then
//  every encoded reply and answer compared byte for byte (keys, value
//  types, order, paging, truncation)

//  The changes (fixed times and texts); ids as the store gives them
static void
s_parity_fill (xxl_store_t *store)
{
    xxl_group_t automatic = { .app_name = "par-auto", .title = "Auto", .update_time = 10 };
    xxl_group_t manual = { .app_name = "par-manual", .title = "Manual", .address_type = 1,
                           .address_list = "h1,h2", .update_time = 11 };
    int64_t ga = xxl_store_group_add (store, &automatic);
    int64_t gm = xxl_store_group_add (store, &manual);
    XXL_CHECK (ga > 0 && gm > ga);
    xxl_store_registry_beat (store, "par-auto", "b-host", 100);
    xxl_store_registry_beat (store, "par-auto", "a-host", 101);
    xxl_store_registry_beat (store, "par-auto", "B-host", 102);
    xxl_store_registry_beat (store, "other", "a-host", 103);
    XXL_CHECK (xxl_store_groups_refresh (store, 200) == 0);
    xxl_job_t job = {
        .job_group = ga, .job_desc = "Nightly \xc3\x9cn\xc3\xaf" "code report", .author = "Alice",
        .alarm_email = "", .schedule_type = "CRON", .schedule_conf = "0 0 * * * ?",
        .misfire_strategy = "DO_NOTHING", .executor_route_strategy = "FIRST",
        .executor_handler = "demoJobHandler", .executor_param = "p1",
        .executor_block_strategy = "SERIAL_EXECUTION", .glue_type = "BEAN", .glue_source = "",
        .glue_remark = "", .child_jobid = "", .timezone = "Europe/Paris", .add_time = 1,
        .update_time = 2, .trigger_status = 1, .trigger_next_time = 5000, .retry_backoff = 1.5,
        .retry_interval = 3, .retry_max_interval = 60
    };
    int64_t j1 = xxl_store_job_add (store, &job);
    job.job_group = gm;
    job.job_desc = "second";
    job.author = "bob";
    job.executor_handler = "DemoOther";
    job.trigger_status = 0;
    job.trigger_next_time = 0;
    job.retry_backoff = 1;
    int64_t j2 = xxl_store_job_add (store, &job);
    job.job_group = ga;
    job.job_desc = "\xc3\xbcn\xc3\xaf lower";
    job.author = "ALICE";
    job.executor_handler = "shell";
    job.child_jobid = "1, 2";
    job.schedule_type = "FIX_DELAY";
    job.schedule_conf = "30";
    job.trigger_status = 1;
    job.trigger_next_time = 253402300799000LL;
    //  (the jobs with child jobs: none yet, then j3 only)
    XXL_CHECK (xxl_store_jobs_have_children (store) == 0);
    int64_t j3 = xxl_store_job_add (store, &job);
    XXL_CHECK (j1 > 0 && j2 > j1 && j3 > j2);
    XXL_CHECK (xxl_store_jobs_have_children (store) == 1);
    for (int i = 0; i < 5; i++)
        xxl_store_glue_add (store, j1, "GLUE_SHELL", i % 2? "echo \xe2\x82\xac": "true",
                            i == 3? NULL: "remark", 100 + i);
    //  Log rows: a manual run that ended, planned shards (one routed), a
    //  failed one with an alarm, one planned far ahead, one accepted that
    //  failed, one routed and taken back
    XXL_CHECK (xxl_store_begin (store) == 0);
    xxl_log_t log = { .job_group = ga, .job_id = j1, .executor_handler = "demoJobHandler",
                      .executor_param = "p1", .trigger_time = 1000, .trigger_msg = "head\n",
                      .trigger_type = "MANUAL" };
    XXL_CHECK (xxl_store_log_add (store, &log) == 0);
    int64_t l1 = log.id;
    xxl_store_log_trigger_done (store, l1, 200, "h1", "ok\n");
    xxl_store_log_handle_done_by (store, l1, "h1", 2000, 200, "done", 0);
    log.id = xxl_store_log_next_id (store);
    log.trigger_time = 2500;
    log.schedule_time = 3000;
    log.trigger_type = "CRON";
    log.executor_sharding_param = "0/2";
    XXL_CHECK (xxl_store_log_add (store, &log) == 0);
    int64_t l2 = log.id;
    XXL_CHECK (xxl_store_log_route (store, l2, 0, "h2", "section \xc3\xa9\n") == 1);
    XXL_CHECK (xxl_store_log_copy_shard (store, l2 + 1, l2, "1/2", 2600) == 1);
    log.id = l2 + 2;
    log.schedule_time = 0;
    log.executor_sharding_param = NULL;
    log.trigger_type = "MANUAL";
    log.trigger_msg = NULL;
    XXL_CHECK (xxl_store_log_add (store, &log) == 0);
    int64_t l4 = log.id;
    xxl_store_log_fail_unsent (store, l4, 500, "nobody\n");
    xxl_store_log_set_alarm (store, l4, 1, "mail sent");
    log.id = l2 + 3;
    log.schedule_time = 9000000;
    log.trigger_type = "CRON";
    log.trigger_msg = "later\n";
    XXL_CHECK (xxl_store_log_add (store, &log) == 0);
    log.id = l2 + 4;
    log.schedule_time = 0;
    log.trigger_time = 4000;
    log.trigger_type = "MANUAL";
    XXL_CHECK (xxl_store_log_add (store, &log) == 0);
    int64_t l6 = log.id;
    xxl_store_log_route (store, l6, 4100, "gone-host", "route note\n");
    XXL_CHECK (xxl_store_log_accept (store, l6, 0) == 1);
    xxl_store_log_handle_done (store, l6, 5000, 500, "boom");
    log.id = l2 + 5;
    XXL_CHECK (xxl_store_log_add (store, &log) == 0);
    xxl_store_log_route (store, log.id, 0, "h1", "\xe8\x8a\x82\xe7\x82\xb9 section\n");
    XXL_CHECK (xxl_store_log_unroute (store, log.id, "\xe8\x8a\x82\xe7\x82\xb9 section\n", 1) == 1);
    xxl_store_log_trigger_end (store, log.id, 500, 3, "end\n", 4200, NULL);
    //  A note put ahead of the section a route wrote (two-byte characters
    //  counted as one), which the trigger's end then cuts by its length
    log.id = l2 + 10;
    XXL_CHECK (xxl_store_log_add (store, &log) == 0);
    {
        char *head = strdup (log.trigger_msg);
        xxl_store_log_route (store, log.id, 0, "h2", "\xc3\xa9 ahead\n");
        XXL_CHECK (xxl_store_log_insert_trigger_msg (store, log.id, 8, "note\n") == 1);
        xxl_log_t back = { 0 };
        XXL_CHECK (xxl_store_log_load (store, log.id, &back) == 0);
        char *want = zsys_sprintf ("%snote\n\xc3\xa9 ahead\n", head);
        XXL_CHECK (back.trigger_msg && streq (back.trigger_msg, want));
        xxl_log_free (&back);
        zstr_free (&want);
        xxl_store_log_trigger_end (store, log.id, 500, 8, "no\n", 0, NULL);
        XXL_CHECK (xxl_store_log_insert_trigger_msg (store, log.id, 0, "tail\n") == 1);
        XXL_CHECK (xxl_store_log_insert_trigger_msg (store, log.id, 100000, "first\n") == 1);
        XXL_CHECK (xxl_store_log_load (store, log.id, &back) == 0);
        want = zsys_sprintf ("first\n%snote\nno\ntail\n", head);
        XXL_CHECK (back.trigger_msg && streq (back.trigger_msg, want));
        xxl_log_free (&back);
        zstr_free (&want);
        free (head);
        XXL_CHECK (xxl_store_log_insert_trigger_msg (store, l2 + 1000, 0, "none\n") == 0);
    }
    //  Runs at open-host: two open (accepted, no result), one ended
    for (int k = 0; k < 3; k++) {
        log.id = l2 + 6 + k;
        XXL_CHECK (xxl_store_log_add (store, &log) == 0);
        xxl_store_log_route (store, log.id, 4300, "open-host", "open\n");
        XXL_CHECK (xxl_store_log_accept (store, log.id, 0) == 1);
    }
    xxl_store_log_handle_done (store, l2 + 7, 5100, 200, "done");
    int64_t open_ids [4];
    size_t open_count = 0;
    XXL_CHECK (xxl_store_log_open_ids_at (store, "open-host", 0, open_ids, 4, &open_count) == 0
               && open_count == 2 && open_ids [0] == l2 + 6 && open_ids [1] == l2 + 8);
    XXL_CHECK (xxl_store_log_open_ids_at (store, "open-host", l2 + 6, open_ids, 4, &open_count)
               == 0 && open_count == 1 && open_ids [0] == l2 + 8);
    XXL_CHECK (xxl_store_log_open_ids_at (store, "h1", 0, open_ids, 4, &open_count) == 0
               && open_count == 0);
    //  The lost-run monitor's pages: open runs of an address with no
    //  registry row, by id, from past a given one
    XXL_CHECK (xxl_store_log_lost_ids_after (store, INT64_MAX, l2 + 5, open_ids, 1, &open_count)
               == 0 && open_count == 1 && open_ids [0] == l2 + 6);
    XXL_CHECK (xxl_store_log_lost_ids_after (store, INT64_MAX, l2 + 6, open_ids, 4, &open_count)
               == 0 && open_count == 1 && open_ids [0] == l2 + 8);
    XXL_CHECK (xxl_store_log_lost_ids_after (store, 4299, 0, open_ids, 4, &open_count) == 0
               && open_count == 0);
    //  Open runs at every address at once, each with its address: one
    //  more open at an address of a space and two-byte characters
    log.id = l2 + 9;
    XXL_CHECK (xxl_store_log_add (store, &log) == 0);
    xxl_store_log_route (store, log.id, 4300, "sp ace \xc3\xa9t\xc3\xa9", "open\n");
    XXL_CHECK (xxl_store_log_accept (store, log.id, 0) == 1);
    {
        //  One page of all, then the same a row a page: the same rows in
        //  the same order, each with its address, each open at it
        int64_t all_ids [16], one_id [1], cursor [2] = { 0, 0 };
        char *all_at [16], *one_at [1];
        size_t all_count = 0, one_count = 0, paged = 0;
        XXL_CHECK (xxl_store_log_open_ids_all (store, cursor, all_ids, all_at, 16, &all_count)
                   == 0 && all_count >= 3 && all_count < 16);
        int found = 0;
        for (size_t i = 0; i < all_count; i++) {
            found |= (all_ids [i] == l2 + 6 && streq (all_at [i], "open-host"))
                   | (all_ids [i] == l2 + 8 && streq (all_at [i], "open-host")) << 1
                   | (all_ids [i] == l2 + 9 && streq (all_at [i], "sp ace \xc3\xa9t\xc3\xa9")) << 2;
            XXL_CHECK (all_ids [i] != l2 + 7);
            int64_t at_ids [16];
            size_t at_count = 0;
            XXL_CHECK (xxl_store_log_open_ids_at (store, all_at [i], 0, at_ids, 16, &at_count)
                       == 0);
            bool listed = false;
            for (size_t k = 0; k < at_count; k++)
                listed |= at_ids [k] == all_ids [i];
            XXL_CHECK (listed);
        }
        XXL_CHECK (found == 7);
        cursor [0] = cursor [1] = 0;
        while (xxl_store_log_open_ids_all (store, cursor, one_id, one_at, 1, &one_count) == 0
        &&     one_count == 1) {
            XXL_CHECK (paged < all_count && one_id [0] == all_ids [paged]
                       && streq (one_at [0], all_at [paged]));
            free (one_at [0]);
            paged++;
        }
        XXL_CHECK (paged == all_count && one_count == 0);
        for (size_t i = 0; i < all_count; i++)
            free (all_at [i]);
    }
    xxl_store_log_append_handle_msg (store, l1, "\nchild jobs: none");
    //  Bytes that are not UTF-8 (an agent's output, say): SQLite keeps
    //  them, PostgreSQL takes U+FFFD for them; replies are the same
    XXL_CHECK (xxl_store_log_append_trigger_msg (store, l1, "bad \xff\xfe bytes \xe2\x82\n") == 1);
    XXL_CHECK (xxl_store_commit (store) == 0);
    XXL_CHECK (xxl_store_report_refresh (store, 0, 86400000, 77) == 1);
    //  The reporter's two steps: a count, and a row set from it
    int64_t running = -1, suc = -1, fail = -1;
    XXL_CHECK (xxl_store_report_count (store, 0, 86400000, &running, &suc, &fail) == 0
               && running >= 0 && suc >= 0 && fail >= 0);
    XXL_CHECK (xxl_store_report_set (store, 86400000, running + 1, suc, fail, 78) == 0);
    XXL_CHECK (xxl_store_report_set (store, 86400000, running + 2, suc, fail, 79) == 0);
    xxl_audit_t row = { .time = 500, .who = "local", .role = "admin", .type = "JOB_ADD",
                        .target = j1, .code = 200 };
    xxl_store_audit_add (store, &row);
    row.time = 501;
    row.type = "JOB_RM";
    row.code = 404;
    xxl_store_audit_add (store, &row);
}

//  The day rows of report_encode_range (from, to, limit), or of
//  report_encode_days (limit) when from is -1: their triggerDay into days
//  (at most max), in order; how many, or -1 when the call failed
static int
s_report_days (xxl_store_t *store, int64_t from, int64_t to, int64_t limit, int64_t *days,
               size_t max)
{
    xxl_enc_t *page = s_reply_page ("days");
    int rc = from < 0? xxl_store_report_encode_days (store, page, (int) limit)
                     : xxl_store_report_encode_range (store, page, from, to, limit);
    if (rc < 0)
        xxl_enc_array_begin (page), xxl_enc_array_end (page);
    xxl_enc_map_end (page);
    size_t size, count = 0;
    const void *data = xxl_enc_finish (page, &size);
    xxl_msg_t *msg = xxl_msg_decode (data, size, NULL, NULL, 0);
    const msgpack_object *items = msg? xxl_msg_array (msg, NULL, "days", 0, max, &count): NULL;
    for (size_t i = 0; items && i < count; i++) {
        const msgpack_object *day = xxl_msg_get (&items [i], "triggerDay");
        const msgpack_object *suc = xxl_msg_get (&items [i], "sucCount");
        //  (each row's sucCount is its day's number: checks the columns)
        days [i] = day && day->type == MSGPACK_OBJECT_POSITIVE_INTEGER
                && suc && suc->type == MSGPACK_OBJECT_POSITIVE_INTEGER
                && (int64_t) suc->via.u64 == ((int64_t) day->via.u64 - 9000000000000LL) / 86400000
                 ? (int64_t) day->via.u64: -1;
    }
    xxl_msg_destroy (&msg);
    xxl_enc_destroy (&page);
    return rc < 0? -1: (int) count;
}

//  REPORT over a range (report_encode_range): the day rows of any range of
//  days, however many newer rows there are, newest first, at most its
//  limit; and the log retention (log_delete) leaves every day row
static void
s_test_report_range (xxl_store_t *store, int64_t gid, int64_t jid)
{
    //  40 days' rows (day k: midnight 9e12 + k days, k runs succeeded)
    const int64_t base = 9000000000000LL, day = 86400000;
    XXL_CHECK (xxl_store_begin (store) == 0);
    for (int64_t k = 0; k < 40; k++)
        XXL_CHECK (xxl_store_report_set (store, base + k * day, 0, k, 0, base) == 0);
    XXL_CHECK (xxl_store_commit (store) == 0);
    int64_t days [64];
    //  Without a range: the newest 30 (the oldest 10 are not among them)
    XXL_CHECK (s_report_days (store, -1, 0, 30, days, 64) == 30
               && days [0] == base + 39 * day && days [29] == base + 10 * day);
    //  The oldest five days, by range (both ends included), newest first
    XXL_CHECK (s_report_days (store, base, base + 4 * day, 366, days, 64) == 5);
    for (int k = 0; k < 5; k++)
        XXL_CHECK (days [k] == base + (4 - k) * day);
    //  A range past the rows' ends holds the rows inside only; a limit cuts
    //  the oldest; a range with no row, none
    XXL_CHECK (s_report_days (store, base - 100 * day, base + 100 * day, 366, days, 64) == 40
               && days [0] == base + 39 * day && days [39] == base);
    XXL_CHECK (s_report_days (store, base, base + 39 * day, 7, days, 64) == 7
               && days [6] == base + 33 * day);
    XXL_CHECK (s_report_days (store, base + 3 * day + 1, base + 4 * day - 1, 366, days, 64)
               == 0);
    XXL_CHECK (s_report_days (store, base + 50 * day, base + 60 * day, 366, days, 64) == 0);
    //  The log retention deletes run rows, never day rows: a finished run
    //  of day 0 goes, its day's counts stay
    xxl_log_t row = { .job_group = gid, .job_id = jid, .executor_handler = "h",
                      .executor_param = "", .trigger_time = base + 1000, .trigger_msg = "",
                      .trigger_type = "MANUAL" };
    XXL_CHECK (xxl_store_begin (store) == 0);
    XXL_CHECK (xxl_store_log_add (store, &row) == 0 && row.id > 0);
    int64_t log_id = row.id;
    XXL_CHECK (XXL_TEST_EXEC (store, "UPDATE xxl_job_log SET trigger_code = 200,"
                              " handle_code = 200 WHERE id = ?", "i", log_id) == 1);
    XXL_CHECK (xxl_store_commit (store) == 0);
    XXL_CHECK (xxl_store_begin (store) == 0);
    XXL_CHECK (xxl_store_log_delete (store, jid, base + 40 * day, INT64_MAX, 1000) >= 1);
    XXL_CHECK (xxl_store_commit (store) == 0);
    XXL_CHECK (xxl_store_log_job_id (store, log_id) <= 0);
    XXL_CHECK (s_report_days (store, base, base, 366, days, 64) == 1 && days [0] == base);
    //  (the rows go, for the checks after this one)
    XXL_CHECK (XXL_TEST_EXEC (store, "DELETE FROM xxl_job_log_report WHERE trigger_day >= ?",
                              "i", base) == 40);
}

//  The ids of a JOB_LIST (jf) or LOG_LIST (lf) page, in order, into ids
//  (at most max); how many, or -1 when the call failed
static int
s_page_ids (xxl_store_t *store, const xxl_store_job_filter_t *jf,
            const xxl_store_log_filter_t *lf, int64_t *ids, size_t max)
{
    xxl_enc_t *page = s_reply_page ("rows");
    int truncated;
    int rc = jf? xxl_store_job_encode_page (store, page, 1 << 20, &truncated, jf)
               : xxl_store_log_encode_page (store, page, 1 << 20, &truncated, lf);
    if (rc < 0)
        xxl_enc_array_begin (page), xxl_enc_array_end (page);
    xxl_enc_map_end (page);
    size_t size;
    const void *data = xxl_enc_finish (page, &size);
    xxl_msg_t *msg = xxl_msg_decode (data, size, NULL, NULL, 0);
    size_t count = 0;
    const msgpack_object *items = msg? xxl_msg_array (msg, NULL, "rows", 0, max, &count): NULL;
    for (size_t i = 0; items && i < count; i++) {
        const msgpack_object *id = xxl_msg_get (&items [i], "id");
        ids [i] = id && id->type == MSGPACK_OBJECT_POSITIVE_INTEGER? (int64_t) id->via.u64: -1;
    }
    xxl_msg_destroy (&msg);
    xxl_enc_destroy (&page);
    return rc < 0? -1: (int) count;
}

//  A set of groups in the list filters (a key limited to several apps)
//  and the report's runs per group: three groups, jobs and runs of each
//  interleaved, listed and counted for two of them
static void
s_test_group_sets (xxl_store_t *store)
{
    //  Jobs: 9001, 9003, 9002, 9001, 9003, 9002 (the ids in that order)
    const int64_t order [6] = { 9001, 9003, 9002, 9001, 9003, 9002 };
    int64_t jobs [6];
    for (int i = 0; i < 6; i++) {
        XXL_CHECK (XXL_TEST_EXEC (store, xxl_test_pg
            ? "INSERT INTO xxl_job_info (job_group, job_desc, trigger_status) VALUES ($1, 'set', $2)"
            : "INSERT INTO xxl_job_info (job_group, job_desc, trigger_status) VALUES (?, 'set', ?)",
            "ii", order [i], (int64_t) (i % 2)) == 1);
        jobs [i] = XXL_TEST_SCALAR (store, "SELECT MAX(id) FROM xxl_job_info", NULL);
    }
    //  Runs at 6000000000000 + i: each job's, succeeded (i even) or failed
    int64_t runs [12];
    for (int i = 0; i < 12; i++) {
        XXL_CHECK (XXL_TEST_EXEC (store, xxl_test_pg
            ? "INSERT INTO xxl_job_log (job_group, job_id, trigger_time, trigger_code, handle_code)"
              " VALUES ($1, $2, $3, 200, $4)"
            : "INSERT INTO xxl_job_log (job_group, job_id, trigger_time, trigger_code, handle_code)"
              " VALUES (?, ?, ?, 200, ?)", "iiii", order [i % 6], jobs [i % 6],
            6000000000000LL + i, (int64_t) (i % 2? 500: 200)) == 1);
        runs [i] = XXL_TEST_SCALAR (store, "SELECT MAX(id) FROM xxl_job_log", NULL);
    }
    const int64_t set [2] = { 9002, 9001 };
    int64_t ids [16];
    //  Jobs of 9001 and 9002: 0, 2, 3, 5; paged by two; with the others
    xxl_store_job_filter_t jf = { .handler = "", .desc = "set", .author = "", .status = -1,
                                  .limit = 100, .groups = set, .group_count = 2 };
    XXL_CHECK (xxl_store_job_count (store, &jf) == 4);
    XXL_CHECK (s_page_ids (store, &jf, NULL, ids, 16) == 4 && ids [0] == jobs [0]
               && ids [1] == jobs [2] && ids [2] == jobs [3] && ids [3] == jobs [5]);
    jf.limit = 2;
    jf.offset = 2;
    XXL_CHECK (s_page_ids (store, &jf, NULL, ids, 16) == 2 && ids [0] == jobs [3]
               && ids [1] == jobs [5]);
    XXL_CHECK (xxl_store_job_count (store, &jf) == 4);
    jf = (xxl_store_job_filter_t) { .handler = "", .desc = "set", .author = "", .status = 1,
                                    .limit = 100, .groups = set, .group_count = 2 };
    XXL_CHECK (xxl_store_job_count (store, &jf) == 2);      //  (3 and 5 started)
    jf.group_id = 9003;                                     //  (and a group outside the set)
    jf.status = -1;
    XXL_CHECK (xxl_store_job_count (store, &jf) == 0);
    jf.group_id = 9002;
    XXL_CHECK (xxl_store_job_count (store, &jf) == 2);
    jf.group_id = 0;
    jf.group_count = 0;                                     //  (an empty set: none)
    XXL_CHECK (xxl_store_job_count (store, &jf) == 0);
    jf.groups = NULL;                                       //  (no set: every group)
    XXL_CHECK (xxl_store_job_count (store, &jf) == 6);
    //  Runs of 9001 and 9002 (i mod 6 in 0, 2, 3, 5), newest first; paged
    //  by three; with a status and a time span
    xxl_store_log_filter_t lf = { .from = 6000000000000LL, .to = INT64_MAX,
                                  .max_id = INT64_MAX, .now = INT64_MAX, .limit = 100,
                                  .groups = set, .group_count = 2 };
    const int ours [8] = { 11, 9, 8, 6, 5, 3, 2, 0 };
    XXL_CHECK (s_page_ids (store, NULL, &lf, ids, 16) == 8);
    for (int i = 0; i < 8; i++)
        XXL_CHECK (ids [i] == runs [ours [i]]);
    lf.limit = 3;
    lf.offset = 3;
    XXL_CHECK (s_page_ids (store, NULL, &lf, ids, 16) == 3 && ids [0] == runs [6]
               && ids [1] == runs [5] && ids [2] == runs [3]);
    lf.offset = 6;
    XXL_CHECK (s_page_ids (store, NULL, &lf, ids, 16) == 2 && ids [1] == runs [0]);
    lf = (xxl_store_log_filter_t) { .from = 6000000000000LL, .to = INT64_MAX,
                                    .max_id = INT64_MAX, .now = INT64_MAX, .limit = 100,
                                    .status = 2, .groups = set, .group_count = 2 };
    XXL_CHECK (s_page_ids (store, NULL, &lf, ids, 16) == 4 && ids [0] == runs [11]
               && ids [3] == runs [3]);                     //  (11, 9, 5, 3 failed)
    lf.status = 3;
    XXL_CHECK (s_page_ids (store, NULL, &lf, ids, 16) == 0);
    lf.status = 0;
    lf.job_id = jobs [1];                                   //  (9003's job: outside)
    XXL_CHECK (s_page_ids (store, NULL, &lf, ids, 16) == 0);
    lf.job_id = 0;
    lf.to = 6000000000005LL;
    XXL_CHECK (s_page_ids (store, NULL, &lf, ids, 16) == 4 && ids [0] == runs [5]);
    lf.group_count = 0;
    XXL_CHECK (s_page_ids (store, NULL, &lf, ids, 16) == 0);
    //  The report's runs per group, by id: each 4 (2 succeeded, 2 failed)
    xxl_store_group_runs_t *rows = NULL;
    size_t count = 0;
    XXL_CHECK (xxl_store_report_count_groups (store, 6000000000000LL, 6000000000012LL, &rows,
                                              &count) == 0);
    XXL_CHECK (count == 3 && rows);
    for (size_t i = 0; rows && i < count && i < 3; i++)
        XXL_CHECK (rows [i].group_id == 9001 + (int64_t) i && rows [i].suc == 2
                   && rows [i].fail == 2 && rows [i].running == 0);
    free (rows);
    XXL_CHECK (xxl_store_report_count_groups (store, 6000000000000LL, 6000000000001LL, &rows,
                                              &count) == 0);
    XXL_CHECK (count == 1 && rows && rows [0].group_id == 9001 && rows [0].suc == 1);
    free (rows);
    XXL_CHECK (xxl_store_report_count_groups (store, 7000000000000LL, 7000000000001LL, &rows,
                                              &count) == 0 && count == 0 && rows == NULL);
    XXL_CHECK (XXL_TEST_EXEC (store, "DELETE FROM xxl_job_log WHERE job_group > 9000", NULL) == 12);
    XXL_CHECK (XXL_TEST_EXEC (store, "DELETE FROM xxl_job_info WHERE job_group > 9000", NULL) == 6);
}

//  Encodes with call on both stores (call uses `store` and `enc`) and
//  checks the bytes are the same
#define S_SAME(what, call) do { \
    xxl_enc_t *encs [2] = { xxl_enc_new (), xxl_enc_new () }; \
    int rcs [2]; \
    for (int side = 0; side < 2; side++) { \
        xxl_store_t *store = side? pg: sq; \
        xxl_enc_t *enc = encs [side]; \
        xxl_enc_map_begin (enc); \
        xxl_enc_key (enc, "r"); \
        rcs [side] = (call); \
        (void) store; \
    } \
    size_t sizes [2]; \
    const void *bytes [2]; \
    for (int side = 0; side < 2; side++) \
        bytes [side] = xxl_enc_finish (encs [side], &sizes [side]); \
    bool same = rcs [0] == rcs [1] && sizes [0] == sizes [1] \
             && memcmp (bytes [0], bytes [1], sizes [0]) == 0; \
    if (!same) \
        fprintf (stderr, "parity: %s: SQLite %d (%zu bytes), PostgreSQL %d (%zu bytes)\n", \
                 what, rcs [0], sizes [0], rcs [1], sizes [1]); \
    XXL_CHECK (same); \
    xxl_enc_destroy (&encs [0]); \
    xxl_enc_destroy (&encs [1]); \
} while (0)

//  The same answer (an int64) from both stores
#define S_SAME_INT(what, call) do { \
    xxl_store_t *store = sq; \
    int64_t a = (call); \
    store = pg; \
    int64_t b = (call); \
    if (a != b) \
        fprintf (stderr, "parity: %s: SQLite %" PRId64 ", PostgreSQL %" PRId64 "\n", what, a, b); \
    XXL_CHECK (a == b); \
} while (0)

//  The same string (NULL too) from both stores; call returns a new string
#define S_SAME_STR(what, call) do { \
    xxl_store_t *store = sq; \
    char *a = (call); \
    store = pg; \
    char *b = (call); \
    bool same = (!a && !b) || (a && b && streq (a, b)); \
    if (!same) \
        fprintf (stderr, "parity: %s: SQLite '%s', PostgreSQL '%s'\n", what, a? a: "(null)", \
                 b? b: "(null)"); \
    XXL_CHECK (same); \
    free (a); \
    free (b); \
} while (0)

//  The same ids from a scan of both stores
#define S_SAME_IDS(what, call) do { \
    int64_t ids [2][64]; \
    size_t counts [2]; \
    int rcs [2]; \
    for (int side = 0; side < 2; side++) { \
        xxl_store_t *store = side? pg: sq; \
        int64_t *out = ids [side]; \
        size_t *count = &counts [side]; \
        rcs [side] = (call); \
    } \
    bool same = rcs [0] == rcs [1] && counts [0] == counts [1] \
             && memcmp (ids [0], ids [1], counts [0] * sizeof (int64_t)) == 0; \
    if (!same) \
        fprintf (stderr, "parity: %s: SQLite %zu ids, PostgreSQL %zu\n", what, counts [0], \
                 counts [1]); \
    XXL_CHECK (same); \
} while (0)

static void
s_parity (xxl_store_t *main_store, const char *url, const char *sqlite_path)
{
    char err [512];
    XXL_CHECK (xxl_store_pg_exec (main_store, "CREATE SCHEMA xxl_parity", NULL) == 0);
    char *parity = zsys_sprintf ("%s%coptions=-c%%20search_path%%3Dxxl_parity", url,
                                 strchr (url, '?')? '&': '?');
    xxl_store_t *pg = xxl_store_new (parity, err, sizeof err);
    xxl_store_t *sq = xxl_store_new (sqlite_path, err, sizeof err);
    zstr_free (&parity);
    XXL_CHECK (pg && sq);
    if (!pg || !sq) {
        xxl_store_destroy (&pg);
        xxl_store_destroy (&sq);
        return;
    }
    s_parity_fill (sq);
    s_parity_fill (pg);
    int truncated = 0;
    S_SAME ("group list", xxl_store_group_encode_all (store, enc));
    for (int64_t id = 1; id <= 4; id++)
        S_SAME ("job show", xxl_store_job_encode (store, enc, id));
    xxl_store_job_filter_t filters [] = {
        { 0, "", "", "", -1, 100, 0, NULL, 0 }, { 1, "DEMO", "", "", -1, 100, 0, NULL, 0 },
        { 0, "", "\xc3\xbcn\xc3\xaf", "", -1, 100, 0, NULL, 0 },
        { 0, "", "", "alice", -1, 100, 0, NULL, 0 },
        { 0, "", "", "", 1, 100, 0, NULL, 0 }, { 0, "", "", "", 0, 100, 0, NULL, 0 },
        { 0, "", "", "", -1, -1, -3, NULL, 0 }, { 0, "", "", "", -1, 1, 1, NULL, 0 },
        { 0, "o", "", "", -1, 2, 0, NULL, 0 }, { 2, "nothing", "", "", -1, 10, 0, NULL, 0 }
    };
    for (size_t i = 0; i < sizeof filters / sizeof filters [0]; i++) {
        S_SAME ("job list", xxl_store_job_encode_page (store, enc, 1 << 20, &truncated,
                                                       &filters [i]));
        S_SAME_INT ("job count", xxl_store_job_count (store, &filters [i]));
    }
    {
        //  (a set of groups, alone and with other filters)
        const int64_t set [2] = { 2, 1 };
        xxl_store_job_filter_t in_set [] = {
            { 0, "", "", "", -1, 100, 0, set, 2 }, { 0, "", "", "", -1, 1, 1, set, 1 },
            { 1, "", "", "", -1, 100, 0, set + 1, 1 }, { 2, "", "", "", -1, 100, 0, set + 1, 1 },
            { 0, "", "", "", 1, 100, 0, set, 2 }, { 0, "", "", "", -1, 100, 0, set, 0 }
        };
        for (size_t i = 0; i < sizeof in_set / sizeof in_set [0]; i++) {
            S_SAME ("job list in a set", xxl_store_job_encode_page (store, enc, 1 << 20,
                                                                    &truncated, &in_set [i]));
            S_SAME_INT ("job count in a set", xxl_store_job_count (store, &in_set [i]));
        }
        for (int64_t status = 0; status <= 3; status++) {
            xxl_store_log_filter_t f = { .status = status, .to = INT64_MAX,
                                         .max_id = INT64_MAX, .now = 8000, .limit = 100,
                                         .groups = set + 1, .group_count = 1 };
            S_SAME ("log list in a set", xxl_store_log_encode_page (store, enc, 1 << 20,
                                                                    &truncated, &f));
        }
    }
    for (size_t budget = 40; budget < 2000; budget += 150)
        S_SAME ("job list, a byte budget", xxl_store_job_encode_page (store, enc, budget,
                                                                     &truncated, &filters [0]));
    S_SAME ("glue list", xxl_store_glue_encode_page (store, enc, 1 << 20, &truncated, 1, 10, 0));
    S_SAME ("glue list, paged", xxl_store_glue_encode_page (store, enc, 1 << 20, &truncated,
                                                           1, 2, 1));
    S_SAME ("glue list, unbounded", xxl_store_glue_encode_page (store, enc, 1 << 20,
                                                               &truncated, 1, -1, -2));
    for (int64_t version = 1; version <= 6; version++)
        S_SAME ("glue show", xxl_store_glue_encode (store, enc, 1, version));
    S_SAME_INT ("glue last", xxl_store_glue_last (store, 1));
    S_SAME_INT ("glue count", xxl_store_glue_count (store, 1));
    for (int64_t id = 1; id <= 9; id++) {
        S_SAME ("log show", xxl_store_log_encode (store, enc, id));
        S_SAME_INT ("log job", xxl_store_log_job_id (store, id));
        S_SAME_INT ("log plan time", xxl_store_log_plan_time (store, id));
        S_SAME_STR ("log job children", xxl_store_log_job_children (store, id));
    }
    for (int64_t status = 0; status <= 3; status++)
        for (int64_t job_id = 0; job_id <= 2; job_id++) {
            xxl_store_log_filter_t f = { .job_id = job_id, .status = status, .from = 0,
                                         .to = INT64_MAX, .max_id = INT64_MAX, .now = 8000,
                                         .limit = 100 };
            S_SAME ("log list", xxl_store_log_encode_page (store, enc, 1 << 20, &truncated, &f));
            f.group_id = 2;
            S_SAME ("log list by group", xxl_store_log_encode_page (store, enc, 1 << 20,
                                                                    &truncated, &f));
        }
    xxl_store_log_filter_t f = { .from = 1500, .to = 4100, .max_id = 5, .now = INT64_MAX,
                                 .limit = 2, .offset = 1 };
    S_SAME ("log list, bounded", xxl_store_log_encode_page (store, enc, 1 << 20, &truncated, &f));
    f = (xxl_store_log_filter_t) { .to = INT64_MAX, .max_id = INT64_MAX, .now = 8000,
                                   .limit = 100 };
    for (size_t budget = 100; budget < 3000; budget += 200)
        S_SAME ("log list, a byte budget", xxl_store_log_encode_page (store, enc, budget,
                                                                     &truncated, &f));
    S_SAME ("report days", xxl_store_report_encode_days (store, enc, 3));
    S_SAME ("audit", xxl_store_audit_encode_page (store, enc, 1 << 20, &truncated, INT64_MAX, 10));
    S_SAME_STR ("registry alive", xxl_store_registry_alive (store, 1000));
    S_SAME_INT ("registry newest", xxl_store_registry_newest (store));
    S_SAME_STR ("registry apps", xxl_store_registry_apps (store, "a-host", 0));
    S_SAME_STR ("job children", xxl_store_job_children (store, 3));
    S_SAME_IDS ("unsent", xxl_store_log_unsent_ids (store, 0, out, 64, count));
    S_SAME_IDS ("unanswered", xxl_store_log_unanswered_ids (store, INT64_MAX, out, 64, count));
    S_SAME_IDS ("failed", xxl_store_log_failed_ids (store, out, 64, count));
    S_SAME_IDS ("lost", xxl_store_log_lost_ids (store, INT64_MAX, out, 64, count));
    S_SAME_IDS ("lost, after 0", xxl_store_log_lost_ids_after (store, INT64_MAX, 0, out, 64,
                                                               count));
    S_SAME_IDS ("lost, after 2", xxl_store_log_lost_ids_after (store, INT64_MAX, 2, out, 64,
                                                               count));
    S_SAME_IDS ("lost, one at a time", xxl_store_log_lost_ids_after (store, INT64_MAX, 0, out, 1,
                                                                     count));
    S_SAME_IDS ("open at an address", xxl_store_log_open_ids_at (store, "open-host", 0, out, 64,
                                                                count));
    {
        //  The report's counts (xxl_reporter's): running, succeeded, failed
        int64_t counts [2][3];
        int rcs [2];
        for (int side = 0; side < 2; side++)
            rcs [side] = xxl_store_report_count (side? pg: sq, 0, INT64_MAX, &counts [side][0],
                                                 &counts [side][1], &counts [side][2]);
        XXL_CHECK (rcs [0] == 0 && rcs [1] == 0
                   && memcmp (counts [0], counts [1], sizeof counts [0]) == 0);
        XXL_CHECK (counts [0][0] > 0 && counts [0][1] > 0 && counts [0][2] > 0);
    }
    {
        //  The same per group
        xxl_store_group_runs_t *rows [2];
        size_t counts [2];
        int rcs [2];
        for (int side = 0; side < 2; side++)
            rcs [side] = xxl_store_report_count_groups (side? pg: sq, 0, INT64_MAX, &rows [side],
                                                        &counts [side]);
        XXL_CHECK (rcs [0] == 0 && rcs [1] == 0 && counts [0] == counts [1] && counts [0] > 0
                   && memcmp (rows [0], rows [1], counts [0] * sizeof rows [0][0]) == 0);
        free (rows [0]);
        free (rows [1]);
    }
    S_SAME_IDS ("marked", xxl_store_job_marked_ids (store, 253402300799000LL, 0, out, 64, count));
    S_SAME_IDS ("late jobs", xxl_store_recover_late_jobs (store, INT64_MAX, out, 64, count));
    S_SAME_INT ("late last", xxl_store_recover_late_last (store, 1, INT64_MAX));
    S_SAME_INT ("rank", xxl_store_log_id_at_rank (store, 0, 2));
    S_SAME_INT ("rank of a job", xxl_store_log_id_at_rank (store, 1, 0));
    S_SAME_INT ("have children", xxl_store_jobs_have_children (store));
    xxl_store_totals_t totals [2];
    XXL_CHECK (xxl_store_report_totals (sq, &totals [0]) == 0
               && xxl_store_report_totals (pg, &totals [1]) == 0);
    XXL_CHECK (memcmp (&totals [0], &totals [1], sizeof totals [0]) == 0);
    //  Changes with counts, then the rows again
    S_SAME_INT ("delay resume", xxl_store_job_delay_resume (store, 2, 9000, 253402300799000LL));
    S_SAME_INT ("unchild", xxl_store_job_unchild (store, 2));
    S_SAME_STR ("job children after", xxl_store_job_children (store, 3));
    S_SAME_INT ("claim", xxl_store_log_alarm_claim (store, 6));
    S_SAME_IDS ("claimed", xxl_store_log_claimed_ids (store, 0, out, 64, count));
    S_SAME_INT ("drop plans", xxl_store_job_drop_plans (store, 1, 8000));
    S_SAME_INT ("delete", xxl_store_log_delete (store, 0, INT64_MAX, INT64_MAX, 2));
    S_SAME_INT ("registry expire", xxl_store_registry_expire (store, 102));
    S_SAME_INT ("fired sent", xxl_store_fired_raise_sent (store, 3000));
    S_SAME_INT ("stamp fired", xxl_store_recover_stamp_fired (store));
    S_SAME_INT ("stamp due", xxl_store_recover_stamp_due (store, 9000001));
    S_SAME_INT ("misfire", xxl_store_recover_misfire (store, 5));
    S_SAME_INT ("drop late", xxl_store_recover_drop_late (store, 1, INT64_MAX, 5));
    S_SAME_INT ("clear address", xxl_store_log_clear_address (store, 3));
    S_SAME_INT ("plan route", xxl_store_log_plan_route (store, 3, "h3", "planned\n"));
    S_SAME_INT ("stamp", xxl_store_log_stamp (store, 3, 3300));
    S_SAME_INT ("accept", xxl_store_log_accept (store, 3, 3400));
    S_SAME_INT ("set shard", xxl_store_log_set_shard (store, 3, "1/3"));
    S_SAME_INT ("retime", xxl_store_log_retime (store, 3, 3500));
    S_SAME_INT ("handle done at", xxl_store_log_handle_done_at (store, 3, 3600, 200, "ok", 3550));
    S_SAME_INT ("handle done again", xxl_store_log_handle_done (store, 3, 3700, 500, "late"));
    S_SAME_INT ("halt", xxl_store_job_halt (store, 1, 42));
    S_SAME_INT ("set times", xxl_store_job_set_times (store, 3, 7, 8));
    for (int64_t id = 1; id <= 9; id++)
        S_SAME ("log show after", xxl_store_log_encode (store, enc, id));
    S_SAME_INT ("audit delete", xxl_store_audit_delete (store, 501, -1));
    for (int64_t id = 1; id <= 4; id++)
        S_SAME ("job show after", xxl_store_job_encode (store, enc, id));
    S_SAME ("log list after", xxl_store_log_encode_page (store, enc, 1 << 20, &truncated, &f));
    S_SAME ("audit after", xxl_store_audit_encode_page (store, enc, 1 << 20, &truncated,
                                                        INT64_MAX, -1));
    xxl_store_destroy (&pg);
    xxl_store_destroy (&sq);
    XXL_CHECK (xxl_store_pg_exec (main_store, "DROP SCHEMA xxl_parity CASCADE", NULL) == 0);
}

//  SQLite's WAL: checkpoints on the store's own thread, restarts under
//  load and after a reader held one back.  log: a row to add copies of.
//  This process's threads
static size_t
s_threads (void)
{
    size_t count = 0;
    DIR *dir = opendir ("/proc/self/task");
    if (dir) {
        for (struct dirent *entry; (entry = readdir (dir)); )
            count += entry->d_name [0] != '.';
        closedir (dir);
    }
    return count;
}

//  A copy of log added with a new id and a trigger message of some 180
//  bytes (rows that fill WAL pages); 1 when the add failed
static int
s_filler_row (xxl_store_t *store, const xxl_log_t *log)
{
    xxl_log_t row = *log;
    row.id = 0;
    row.trigger_msg = (char *) "a trigger message long enough to fill some pages"
        ".................................................................."
        "..................................................................";
    return xxl_store_log_add (store, &row) != 0;
}

static void
s_sqlite_wal (xxl_store_t *store, const char *path, const xxl_log_t *log_row)
{
    xxl_log_t log = *log_row;
    char err [512];
    //  Commits leave checkpoints to the store's own thread: the writer's
    //  connection never checkpoints, yet the rows reach the database file
    //  while the store is open (without it they would stay in the WAL
    //  until close: fewer than SQLite's 1,000-page automatic threshold)
    XXL_CHECK (XXL_TEST_SCALAR (store, "PRAGMA wal_autocheckpoint", NULL) == 0);
    struct stat before;
    XXL_CHECK (stat (path, &before) == 0);
    for (int batch = 0; batch < 20; batch++) {
        XXL_CHECK (xxl_store_begin (store) == 0);
        for (int i = 0; i < 100; i++) {
            xxl_log_t row = log;
            row.id = 0;
            row.trigger_msg = (char *) "a trigger message long enough to fill some pages .......";
            XXL_CHECK (xxl_store_log_add (store, &row) == 0);
        }
        XXL_CHECK (xxl_store_commit (store) == 0);
    }
    bool grew = false;
    for (int wait = 0; wait < 100 && !grew; wait++) {
        struct stat now;
        grew = stat (path, &now) == 0 && now.st_size > before.st_size;
        if (!grew)
            zclock_sleep (50);
    }
    XXL_CHECK (grew);

    //  A side connection (the reporter's) starts no checkpointer thread of
    //  its own, as the main handle does, and never checkpoints in its
    //  commits; it reads and writes the same rows
    size_t threads = s_threads ();
    xxl_store_t *main2 = xxl_store_new (path, err, sizeof err);
    XXL_CHECK (main2 && s_threads () == threads + 1);
    xxl_store_t *side = xxl_store_side_new (path, err, sizeof err);
    XXL_CHECK (side && s_threads () == threads + 1);
    if (side) {
        XXL_CHECK (XXL_TEST_SCALAR (side, "PRAGMA wal_autocheckpoint", NULL) == 0);
        XXL_CHECK (XXL_TEST_SCALAR (side, "SELECT COUNT(*) FROM xxl_job_log", NULL)
                   == XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_job_log", NULL));
        XXL_CHECK (xxl_store_report_set (side, 86400000, 1, 2, 3, 4) == 0);
    }
    xxl_store_destroy (&side);
    xxl_store_destroy (&main2);
    XXL_CHECK (!side && !main2);

    //  Under commits without a pause, the WAL starts over at its size:
    //  the writer copies the checkpointer's last frames between two
    //  transactions.  Without that, no checkpoint ever copies a whole
    //  WAL, and this one would grow to ~40 MiB
    char wal_db [256], wal_path [256];
    snprintf (wal_db, sizeof wal_db, "%s/wal.db", s_dir);
    snprintf (wal_path, sizeof wal_path, "%s/wal.db-wal", s_dir);
    xxl_store_t *walled = xxl_store_new (wal_db, err, sizeof err);
    XXL_CHECK (walled);
    //  (a new file's pages are 8 KiB)
    XXL_CHECK (XXL_TEST_SCALAR (walled, "PRAGMA page_size", NULL) == 8192);
    xxl_store_set_wal_size (walled, 1);
    XXL_CHECK (XXL_TEST_SCALAR (walled, "PRAGMA journal_size_limit", NULL) == 4 * 1048576);
    //  (sizes out of range are ignored)
    xxl_store_set_wal_size (walled, 0);
    xxl_store_set_wal_size (walled, 65537);
    XXL_CHECK (XXL_TEST_SCALAR (walled, "PRAGMA journal_size_limit", NULL) == 4 * 1048576);
    off_t wal_max = 0;
    int restarts = 0, rows = 0, due_in_txn = 0, errors = 0;
    for (int turn = 0; turn < 2000; turn++) {
        errors += xxl_store_begin (walled) != 0;
        due_in_txn += xxl_store_wal_due (walled) != 0;
        for (int i = 0; i < 4; i++, rows++)
            errors += s_filler_row (walled, &log);
        errors += xxl_store_commit (walled) != 0;
        struct stat wal_stat;
        if (stat (wal_path, &wal_stat) == 0 && wal_stat.st_size > wal_max)
            wal_max = wal_stat.st_size;
        if (xxl_store_wal_due (walled))
            restarts += xxl_store_wal_restart (walled) == 1;
    }
    XXL_CHECK (errors == 0);
    XXL_CHECK (due_in_txn == 0);
    XXL_CHECK (restarts > 0);
    //  (four times its size, plus one commit's frames)
    XXL_CHECK (wal_max > 0 && wal_max <= 5 * 1048576);
    if (wal_max > 5 * 1048576)
        printf ("# the WAL grew to %lld bytes\n", (long long) wal_max);
    XXL_CHECK (XXL_TEST_SCALAR (walled, "SELECT COUNT(*) FROM xxl_job_log", NULL) == rows);

    //  One commit that takes the WAL from empty past its size (a long
    //  turn): the checkpointer is nudged and the writer's restart waits
    //  for the next commit, which finds it due
    {
        char jump_db [256];
        snprintf (jump_db, sizeof jump_db, "%s/jump.db", s_dir);
        xxl_store_t *jump = xxl_store_new (jump_db, err, sizeof err);
        XXL_CHECK (jump);
        if (jump) {
            xxl_store_set_wal_size (jump, 1);
            int jump_errors = xxl_store_begin (jump) != 0;
            //  (between one and two sizes of frames: ~1.5 MiB)
            for (int i = 0; i < 1500; i++)
                jump_errors += s_filler_row (jump, &log);
            struct stat jump_stat;
            char jump_wal [300];
            snprintf (jump_wal, sizeof jump_wal, "%s-wal", jump_db);
            jump_errors += xxl_store_commit (jump) != 0;
            XXL_CHECK (stat (jump_wal, &jump_stat) == 0);
            XXL_CHECK_MSG (jump_stat.st_size > 1048576 && jump_stat.st_size < 2 * 1048576,
                           "the WAL after one commit: %lld bytes (want 1 to 2 MiB)",
                           (long long) jump_stat.st_size);
            XXL_CHECK_MSG (xxl_store_wal_due (jump) == 0, "a WAL past its size in one commit is"
                           " due at once: the checkpointer gets no head start");
            jump_errors += xxl_store_begin (jump) != 0;
            xxl_log_t row = log;
            row.id = 0;
            jump_errors += xxl_store_log_add (jump, &row) != 0;
            jump_errors += xxl_store_commit (jump) != 0;
            XXL_CHECK (xxl_store_wal_due (jump) == 1);
            XXL_CHECK (jump_errors == 0);
            xxl_store_destroy (&jump);
        }
    }

    //  A store made with 4 KiB pages (before 8 KiB) keeps them, and works
    {
        char old_db [256];
        snprintf (old_db, sizeof old_db, "%s/pages4k.db", s_dir);
        sqlite3 *maker = NULL;
        XXL_CHECK (sqlite3_open (old_db, &maker) == SQLITE_OK);
        XXL_CHECK (sqlite3_exec (maker, "PRAGMA page_size = 4096; PRAGMA journal_mode = WAL;"
                                 " CREATE TABLE made_before (x);", NULL, NULL, NULL) == SQLITE_OK);
        sqlite3_close (maker);
        xxl_store_t *old = xxl_store_new (old_db, err, sizeof err);
        XXL_CHECK (old);
        if (old) {
            XXL_CHECK (XXL_TEST_SCALAR (old, "PRAGMA page_size", NULL) == 4096);
            XXL_CHECK (xxl_store_begin (old) == 0);
            xxl_log_t row = log;
            row.id = 0;
            XXL_CHECK (xxl_store_log_add (old, &row) == 0);
            XXL_CHECK (xxl_store_commit (old) == 0);
            XXL_CHECK (XXL_TEST_SCALAR (old, "SELECT COUNT(*) FROM xxl_job_log", NULL) == 1);
            xxl_store_destroy (&old);
        }
    }

    //  A reader in the WAL (a backup, say) holds its restart back: the
    //  writer then tries again only every sixteenth of the size, not at
    //  every commit; once the reader is gone the WAL starts over and is
    //  cut back to four times its size
    sqlite3 *reader = NULL;
    XXL_CHECK (sqlite3_open_v2 (wal_db, &reader, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    XXL_CHECK (sqlite3_exec (reader, "BEGIN; SELECT COUNT(*) FROM xxl_job_log;",
                             NULL, NULL, NULL) == SQLITE_OK);
    //  While the WAL grows at its end (past the file's size when the
    //  reader came), its file grows by a frame of page + 24 bytes per page
    //  written: between two tries it must have grown by a sixteenth of
    //  1 MiB of pages or more.  (A row's commit writes about four pages, so
    //  a try at every commit, or every other with 4 KiB pages, fails this)
    struct stat held_stat;
    off_t held_from = stat (wal_path, &held_stat) == 0? held_stat.st_size: 0;
    off_t first_try = -1, last_try = -1;
    int past_size = 0, growing = 0, due_turns = 0;
    restarts = 0;
    for (int turn = 0; turn < 600; turn++) {
        errors += xxl_store_begin (walled) != 0;
        xxl_log_t row = log;
        row.id = 0;
        errors += xxl_store_log_add (walled, &row) != 0;
        errors += xxl_store_commit (walled) != 0;
        struct stat wal_stat;
        off_t wal_now = stat (wal_path, &wal_stat) == 0? wal_stat.st_size: 0;
        if (wal_now > 1048576 + 32768)
            past_size++;
        bool grew = wal_now > held_from;
        growing += grew;
        if (xxl_store_wal_due (walled)) {
            if (grew) {
                due_turns++;
                if (first_try < 0)
                    first_try = wal_now;
                last_try = wal_now;
            }
            xxl_store_wal_restart (walled);
        }
    }
    XXL_CHECK (errors == 0);
    XXL_CHECK (past_size > 100);
    XXL_CHECK_MSG (growing > 100 && due_turns > 1 && due_turns < growing,
                   "%d tries in %d turns", due_turns, growing);
    XXL_CHECK_MSG ((int64_t) (due_turns - 1) * 65536 <= (int64_t) (last_try - first_try),
                   "%d tries while the WAL grew by %" PRId64 " bytes", due_turns,
                   (int64_t) (last_try - first_try));
    sqlite3_close (reader);
    for (int turn = 0; turn < 200 && restarts == 0; turn++) {
        errors += xxl_store_begin (walled) != 0;
        xxl_log_t row = log;
        row.id = 0;
        errors += xxl_store_log_add (walled, &row) != 0;
        errors += xxl_store_commit (walled) != 0;
        if (xxl_store_wal_due (walled))
            restarts += xxl_store_wal_restart (walled) == 1;
    }
    //  (the restart itself happens at the next commit)
    XXL_CHECK (xxl_store_begin (walled) == 0);
    xxl_log_t final_row = log;
    final_row.id = 0;
    XXL_CHECK (xxl_store_log_add (walled, &final_row) == 0);
    XXL_CHECK (xxl_store_commit (walled) == 0);
    struct stat after_reader;
    XXL_CHECK (restarts == 1 && stat (wal_path, &after_reader) == 0
               && after_reader.st_size <= 4 * 1048576 + 32768);
    char *check = XXL_TEST_TEXT (walled, "PRAGMA integrity_check", NULL);
    XXL_CHECK (check && streq (check, "ok"));
    zstr_free (&check);
    xxl_store_destroy (&walled);
}

//  Users, tokens and sessions (store methods version 4), through the
//  interface only
//  Calendars (issue 35): put, replace, get, the jobs naming one, encode, rm
static void
s_test_calendars (xxl_store_t *store, int64_t jid)
{
    XXL_CHECK (xxl_store_begin (store) == 0);
    xxl_store_calendar_t row = { .name = "holidays", .dates = "2026-12-25", .exclude_cron = "",
                                 .timezone = "Asia/Shanghai", .add_time = 10,
                                 .update_time = 10 };
    XXL_CHECK (xxl_store_calendar_put (store, &row, 0) == 1);
    XXL_CHECK (xxl_store_calendar_put (store, &row, 0) == 0);        //  the name is taken
    row.dates = "2026-01-01,2026-12-25";
    row.update_time = 20;
    row.add_time = 20;
    XXL_CHECK (xxl_store_calendar_put (store, &row, 1) == 1);        //  replaced
    xxl_store_calendar_t back;
    XXL_CHECK (xxl_store_calendar_get (store, "holidays", &back) == 0);
    XXL_CHECK_STR (back.dates, "2026-01-01,2026-12-25");
    XXL_CHECK_STR (back.timezone, "Asia/Shanghai");
    XXL_CHECK_INT (back.add_time, 10);                              //  kept
    XXL_CHECK_INT (back.update_time, 20);
    xxl_store_calendar_free (&back);
    XXL_CHECK (xxl_store_calendar_get (store, "none", &back) == 1);
    //  A job naming it, found; its calendar loaded and saved
    xxl_job_t job;
    XXL_CHECK (xxl_store_job_load (store, jid, &job) == 0);
    XXL_CHECK_STR (job.calendar, "");
    free (job.calendar);
    job.calendar = strdup ("holidays");
    XXL_CHECK (xxl_store_job_save (store, &job) == 0);
    xxl_job_free (&job);
    XXL_CHECK (xxl_store_job_load (store, jid, &job) == 0);
    XXL_CHECK_STR (job.calendar, "holidays");
    int64_t ids [4];
    size_t count = 9;
    XXL_CHECK (xxl_store_calendar_job_ids (store, "holidays", 0, ids, 4, &count) == 0);
    XXL_CHECK (count == 1 && ids [0] == jid);
    XXL_CHECK (xxl_store_calendar_job_ids (store, "holidays", jid, ids, 4, &count) == 0);
    XXL_CHECK_INT (count, 0);
    //  Encoded as the protocol's map, and as a list
    xxl_enc_t *enc = xxl_enc_new ();
    XXL_CHECK (xxl_store_calendar_encode (store, enc, "holidays") == 1);
    XXL_CHECK (xxl_store_calendar_encode (store, enc, "none") == 0);
    XXL_CHECK (xxl_store_calendar_encode_all (store, enc) == 1);
    xxl_enc_destroy (&enc);
    //  Removed; the job keeps its name until the api re-arms it
    XXL_CHECK (xxl_store_calendar_rm (store, "holidays") == 1);
    XXL_CHECK (xxl_store_calendar_rm (store, "holidays") == 0);
    free (job.calendar);
    job.calendar = strdup ("");
    XXL_CHECK (xxl_store_job_save (store, &job) == 0);
    xxl_job_free (&job);
    XXL_CHECK (xxl_store_commit (store) == 0);
}

static void
s_test_accounts (xxl_store_t *store)
{
    XXL_CHECK (xxl_store_begin (store) == 0);
    xxl_account_t alice = { .name = "alice", .hash = "$y$hash-a", .role = "admin", .apps = "",
                            .add_time = 1000 };
    xxl_account_t olga = { .name = "olga", .hash = "$y$hash-o", .role = "operator",
                           .apps = "a,b", .add_time = 2000 };
    XXL_CHECK (xxl_store_user_add (store, &alice) == 1);
    XXL_CHECK (xxl_store_user_add (store, &olga) == 1);
    XXL_CHECK (xxl_store_user_add (store, &olga) == 0);         //  the name is taken
    xxl_account_t got;
    XXL_CHECK (xxl_store_user_get (store, "olga", &got) == 0);
    XXL_CHECK (streq (got.name, "olga") && streq (got.hash, "$y$hash-o")
               && streq (got.role, "operator") && streq (got.apps, "a,b") && got.add_time == 2000);
    xxl_account_free (&got);
    XXL_CHECK (xxl_store_user_get (store, "nobody", &got) == 1);
    xxl_account_free (&got);
    //  Update: NULL keeps a column
    XXL_CHECK (xxl_store_user_update (store, "olga", NULL, "viewer", NULL) == 1);
    XXL_CHECK (xxl_store_user_update (store, "nobody", NULL, "viewer", NULL) == 0);
    XXL_CHECK (xxl_store_user_get (store, "olga", &got) == 0);
    XXL_CHECK (streq (got.role, "viewer") && streq (got.hash, "$y$hash-o") && streq (got.apps, "a,b"));
    xxl_account_free (&got);
    //  The list: by name, without the hashes
    xxl_enc_t *enc = xxl_enc_new ();
    xxl_enc_request (enc, "TEST", 1);   //  (a message's envelope, for the decoder)
    xxl_enc_key (enc, "users");
    XXL_CHECK (xxl_store_user_encode_all (store, enc) == 2);
    xxl_enc_map_end (enc);
    size_t size;
    const void *data = xxl_enc_finish (enc, &size);
    char why [256];
    xxl_msg_t *msg = xxl_msg_decode (data, size, NULL, why, sizeof why);
    size_t count = 0;
    const msgpack_object *users = msg? xxl_msg_array (msg, NULL, "users", 1, 10, &count): NULL;
    XXL_CHECK (users && count == 2);
    if (users && count == 2) {
        XXL_CHECK (streq (xxl_msg_str (msg, &users [0], "username", 1, 64, ""), "alice"));
        XXL_CHECK (streq (xxl_msg_str (msg, &users [1], "apps", 1, 64, ""), "a,b"));
        XXL_CHECK (xxl_msg_int (msg, &users [1], "addTime", 1, 0, INT64_MAX, 0) == 2000);
        XXL_CHECK (xxl_msg_get (&users [0], "password") == NULL);
    }
    xxl_msg_destroy (&msg);
    //  Tokens, found by their hash
    xxl_account_t ci = { .name = "ci", .hash = "aa11", .role = "viewer", .apps = "",
                         .add_time = 3000 };
    XXL_CHECK (xxl_store_token_add (store, &ci) == 1);
    XXL_CHECK (xxl_store_token_add (store, &ci) == 0);
    XXL_CHECK (xxl_store_token_find (store, "aa11", &got) == 0 && streq (got.name, "ci")
               && streq (got.role, "viewer"));
    xxl_account_free (&got);
    XXL_CHECK (xxl_store_token_find (store, "aa12", &got) == 1);
    xxl_account_free (&got);
    xxl_enc_reset (enc);
    XXL_CHECK (xxl_store_token_encode_all (store, enc) == 1);
    XXL_CHECK (xxl_store_token_rm (store, "ci") == 1 && xxl_store_token_rm (store, "ci") == 0);
    XXL_CHECK (xxl_store_token_find (store, "aa11", &got) == 1);
    xxl_account_free (&got);
    //  Sessions: found while seen recently enough; touched; removed
    XXL_CHECK (xxl_store_session_add (store, "s1", "alice", "c1", 10000) == 0);
    XXL_CHECK (xxl_store_session_add (store, "s2", "olga", "c2", 10000) == 0);
    XXL_CHECK (xxl_store_session_add (store, "s3", "olga", "c3", 10000) == 0);
    char *user = NULL, *csrf = NULL;
    int64_t seen = 0;
    XXL_CHECK (xxl_store_session_find (store, "s1", 9000, &user, &csrf, &seen) == 0
               && streq (user, "alice") && streq (csrf, "c1") && seen == 10000);
    free (user);
    free (csrf);
    XXL_CHECK (xxl_store_session_find (store, "s1", 10001, &user, &csrf, &seen) == 1);
    XXL_CHECK (xxl_store_session_touch (store, "s1", 20000) == 0);
    XXL_CHECK (xxl_store_session_find (store, "s1", 15000, &user, &csrf, &seen) == 0 && seen == 20000);
    free (user);
    free (csrf);
    XXL_CHECK (xxl_store_session_expire (store, 15000) == 2);  //  s2, s3
    XXL_CHECK (xxl_store_session_find (store, "s2", 0, &user, &csrf, &seen) == 1);
    XXL_CHECK (xxl_store_session_add (store, "s4", "olga", "c4", 30000) == 0);
    XXL_CHECK (xxl_store_user_sessions_rm (store, "olga") == 1);
    XXL_CHECK (xxl_store_session_rm (store, "s1") == 1 && xxl_store_session_rm (store, "s1") == 0);
    //  A user removed takes its sessions along
    XXL_CHECK (xxl_store_session_add (store, "s5", "alice", "c5", 30000) == 0);
    XXL_CHECK (xxl_store_user_rm (store, "alice") == 1 && xxl_store_user_rm (store, "alice") == 0);
    XXL_CHECK (xxl_store_session_find (store, "s5", 0, &user, &csrf, &seen) == 1);
    XXL_CHECK (xxl_store_user_rm (store, "olga") == 1);
    //  Remembered sessions (version 16): each kind judged by its own
    //  limit, found and expired alike; the plain calls see one limit
    XXL_CHECK (xxl_store_session_add_remember (store, "r1", "rita", "c6", 40000, 1) == 0);
    XXL_CHECK (xxl_store_session_add_remember (store, "r2", "rita", "c7", 40000, 0) == 0);
    int remember = -1;
    XXL_CHECK (xxl_store_session_find_remember (store, "r1", 45000, 30000, &user, &csrf, &seen,
                                                &remember) == 0
               && streq (user, "rita") && streq (csrf, "c6") && seen == 40000 && remember == 1);
    free (user);
    free (csrf);
    XXL_CHECK (xxl_store_session_find_remember (store, "r1", 30000, 45000, &user, &csrf, &seen,
                                                &remember) == 1 && !user && remember == 0);
    XXL_CHECK (xxl_store_session_find_remember (store, "r2", 45000, 30000, &user, &csrf, &seen,
                                                &remember) == 1);
    XXL_CHECK (xxl_store_session_find_remember (store, "r2", 30000, 45000, &user, &csrf, &seen,
                                                &remember) == 0 && remember == 0);
    free (user);
    free (csrf);
    XXL_CHECK (xxl_store_session_find (store, "r1", 45000, &user, &csrf, &seen) == 1);
    XXL_CHECK (xxl_store_session_expire_remember (store, 45000, 30000) == 1);     //  r2
    XXL_CHECK (xxl_store_session_find_remember (store, "r2", 0, 0, &user, &csrf, &seen,
                                                &remember) == 1);
    //  ... and counted in the user's bound: 64 more, the oldest (r1) goes
    for (int i = 0; i < XXL_STORE_USER_SESSIONS; i++) {
        char id [16];
        snprintf (id, sizeof id, "r%d", 10 + i);
        XXL_CHECK (xxl_store_session_add_remember (store, id, "rita", "c", 50000 + i, i % 2) == 0);
    }
    XXL_CHECK (xxl_store_session_find_remember (store, "r1", 0, 0, &user, &csrf, &seen,
                                                &remember) == 1);
    XXL_CHECK (xxl_store_session_expire_remember (store, 50064, 0) == XXL_STORE_USER_SESSIONS / 2);
    XXL_CHECK (xxl_store_user_sessions_rm (store, "rita") == XXL_STORE_USER_SESSIONS / 2);
    XXL_CHECK (xxl_store_commit (store) == 0);
    xxl_enc_destroy (&enc);
}

//  The first login (store methods version 17; xxl_first_admin.h)

//  A begin, user_add_first of name and a commit on another thread, at
//  once with others (barrier)
typedef struct {
    pthread_barrier_t *barrier;
    xxl_store_t *store;
    const char *name;
    int rc, commit_rc;
} first_t;

static void *
s_first (void *args)
{
    first_t *first = (first_t *) args;
    xxl_account_t user = { .name = (char *) first->name, .hash = "$y$h", .role = "admin",
                           .apps = "", .add_time = 1 };
    pthread_barrier_wait (first->barrier);
    first->rc = xxl_store_begin (first->store)? -1: xxl_store_user_add_first (first->store, &user);
    first->commit_rc = xxl_store_commit (first->store);
    return NULL;
}

static int64_t
s_users (xxl_store_t *store)
{
    return XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_user", NULL);
}

//  The password file's text (a static buffer; "" none or unreadable)
static const char *
s_file_text (const char *path)
{
    static char text [128];
    text [0] = 0;
    FILE *file = fopen (path, "r");
    if (file) {
        size_t got = fread (text, 1, sizeof text - 1, file);
        text [got] = 0;
        fclose (file);
    }
    return text;
}

//  The password generator; user_add_first alone, on two handles of one
//  store, and on two at once; xxl_first_admin_start and _check: the
//  file's mode and content, O_EXCL and O_NOFOLLOW, no user whose password
//  cannot be written, a second scheduler on the store, the file removed
//  once admin has a new password or is gone.  The store has no user here.
static void
s_test_first_admin (xxl_store_t *store, const char *path)
{
    //  Passwords: the length asked, the alphabet only, every character of
    //  it drawn (2,000 draws: one missing has odds of e^-36), never twice
    //  the same
    char password [XXL_FIRST_ADMIN_LEN + 1], other [XXL_FIRST_ADMIN_LEN + 1], many [2001];
    XXL_CHECK (xxl_secret_password (password, XXL_FIRST_ADMIN_LEN) == 0);
    XXL_CHECK (xxl_secret_password (other, XXL_FIRST_ADMIN_LEN) == 0);
    XXL_CHECK (strlen (password) == XXL_FIRST_ADMIN_LEN && strneq (password, other));
    XXL_CHECK (strspn (password, XXL_SECRET_PASSWORD_CHARS) == XXL_FIRST_ADMIN_LEN);
    XXL_CHECK (xxl_secret_password (many, 2000) == 0 && strlen (many) == 2000
               && strspn (many, XXL_SECRET_PASSWORD_CHARS) == 2000);
    for (const char *c = XXL_SECRET_PASSWORD_CHARS; *c; c++)
        XXL_CHECK_MSG (strchr (many, *c), "'%c' never drawn", *c);
    XXL_CHECK (strlen (XXL_SECRET_PASSWORD_CHARS) == 55 && !strpbrk (XXL_SECRET_PASSWORD_CHARS, "0O1lIio"));

    //  user_add_first: only into a store with no user at all
    XXL_CHECK (s_users (store) == 0);
    xxl_account_t admin = { .name = "admin", .hash = "$y$a", .role = "admin", .apps = "",
                            .add_time = 1 };
    xxl_account_t bob = { .name = "bob", .hash = "$y$b", .role = "viewer", .apps = "",
                          .add_time = 2 };
    XXL_CHECK (xxl_store_begin (store) == 0);
    XXL_CHECK (xxl_store_user_add_first (store, &admin) == 1);
    XXL_CHECK (xxl_store_user_add_first (store, &bob) == 0);      //  a user exists
    XXL_CHECK (xxl_store_user_add_first (store, &admin) == 0);
    XXL_CHECK (xxl_store_commit (store) == 0);
    char err [512];
    xxl_store_t *second = xxl_store_new (path, err, sizeof err);
    XXL_CHECK (second);
    if (!second)
        return;
    XXL_CHECK (xxl_store_begin (second) == 0 && xxl_store_user_add_first (second, &bob) == 0
               && xxl_store_commit (second) == 0);
    XXL_CHECK (s_users (store) == 1);
    XXL_CHECK (xxl_store_user_rm (store, "admin") == 1 && s_users (store) == 0);
    //  ... outside a transaction too (one of its own)
    XXL_CHECK (xxl_store_user_add_first (second, &bob) == 1 && xxl_store_user_add_first (store, &admin) == 0);
    XXL_CHECK (xxl_store_user_rm (store, "bob") == 1);
    //  Two handles at once, each its own name: one adds, the other finds a user
    pthread_barrier_t barrier;
    pthread_barrier_init (&barrier, NULL, 2);
    first_t firsts [2] = { { &barrier, store, "first-a", 0, 0 }, { &barrier, second, "first-b", 0, 0 } };
    pthread_t threads [2];
    for (int i = 0; i < 2; i++)
        pthread_create (&threads [i], NULL, s_first, &firsts [i]);
    for (int i = 0; i < 2; i++)
        pthread_join (threads [i], NULL);
    pthread_barrier_destroy (&barrier);
    XXL_CHECK_MSG (firsts [0].rc + firsts [1].rc == 1 && firsts [0].rc >= 0 && firsts [1].rc >= 0
                   && firsts [0].commit_rc == 0 && firsts [1].commit_rc == 0,
                   "rc %d and %d", firsts [0].rc, firsts [1].rc);
    XXL_CHECK (s_users (store) == 1);
    XXL_CHECK (xxl_store_user_rm (store, firsts [0].rc == 1? "first-a": "first-b") == 1);

    //  xxl_first_admin_start: admin made, its password in the file (0600
    //  whatever the umask), the hash a yescrypt one of it
    char dir [300], file [400], why [768];
    snprintf (dir, sizeof dir, "%s/state", s_dir);
    snprintf (file, sizeof file, "%s/%s", dir, XXL_FIRST_ADMIN_FILE);
    XXL_CHECK (mkdir (dir, 0700) == 0);
    xxl_first_admin_t first, again;
    mode_t umask_was = umask (0);
    XXL_CHECK (xxl_first_admin_start (&first, store, dir, 1000, why, sizeof why) == XXL_FIRST_ADMIN_MADE);
    umask (umask_was);
    XXL_CHECK (streq (first.path, file) && strneq (first.hash, ""));
    struct stat st;
    XXL_CHECK (lstat (file, &st) == 0 && S_ISREG (st.st_mode) && (st.st_mode & 07777) == 0600);
    char text [128];
    snprintf (text, sizeof text, "%s", s_file_text (file));
    XXL_CHECK (strlen (text) == XXL_FIRST_ADMIN_LEN + 1 && text [XXL_FIRST_ADMIN_LEN] == '\n'
               && strspn (text, XXL_SECRET_PASSWORD_CHARS) == XXL_FIRST_ADMIN_LEN);
    text [XXL_FIRST_ADMIN_LEN] = 0;
    xxl_account_t got = { 0 };
    XXL_CHECK (xxl_store_user_get (store, "admin", &got) == 0 && streq (got.role, "admin")
               && streq (got.apps, "") && got.add_time == 1000 && !strncmp (got.hash, "$y$", 3)
               && streq (got.hash, first.hash));
    XXL_CHECK (xxl_secret_check_password (text, got.hash));
    XXL_CHECK (!xxl_secret_check_password ("wrong-password-123", got.hash));
    xxl_account_free (&got);
    XXL_CHECK (s_users (store) == 1);
    XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_audit WHERE time = 1000"
                                " AND who = 'first-login' AND role = 'admin' AND type = 'USER_ADD'"
                                " AND target = 0 AND code = 200", NULL) == 1);
    XXL_CHECK (xxl_first_admin_check (&first, store) == 0 && lstat (file, &st) == 0);
    //  A second scheduler on the store, the same folder: it keeps the file,
    //  makes no user; with a folder of its own: nothing
    XXL_CHECK (xxl_first_admin_start (&again, second, dir, 2000, why, sizeof why) == XXL_FIRST_ADMIN_KEPT);
    XXL_CHECK (streq (again.hash, first.hash) && s_users (store) == 1);
    char dir2 [300];
    snprintf (dir2, sizeof dir2, "%s/state2", s_dir);
    XXL_CHECK (mkdir (dir2, 0700) == 0);
    XXL_CHECK (xxl_first_admin_start (&again, second, dir2, 2000, why, sizeof why) == XXL_FIRST_ADMIN_NONE);
    XXL_CHECK (streq (again.hash, "") && xxl_first_admin_check (&again, second) == 0);
    XXL_CHECK (rmdir (dir2) == 0);         //  (empty: no file made)
    //  A new password: the file goes at the next check (and only once)
    XXL_CHECK (xxl_store_user_update (second, "admin", "$y$new", NULL, NULL) == 1);
    XXL_CHECK (xxl_first_admin_check (&first, store) == 1 && lstat (file, &st) == -1 && errno == ENOENT);
    XXL_CHECK (xxl_first_admin_check (&first, store) == 0);
    XXL_CHECK (xxl_first_admin_start (&again, store, dir, 3000, why, sizeof why) == XXL_FIRST_ADMIN_NONE);
    //  ... as when admin is removed; a file from before the change, found
    //  at a start, is stale
    XXL_CHECK (xxl_store_user_rm (store, "admin") == 1);
    XXL_CHECK (xxl_first_admin_start (&first, store, dir, 4000, why, sizeof why) == XXL_FIRST_ADMIN_MADE);
    XXL_CHECK (xxl_store_user_rm (second, "admin") == 1 && xxl_store_user_add (second, &bob) == 1);
    XXL_CHECK (xxl_first_admin_check (&first, store) == 1 && lstat (file, &st) == -1);
    XXL_CHECK (xxl_store_user_rm (store, "bob") == 1);
    XXL_CHECK (xxl_first_admin_start (&first, store, dir, zclock_time (), why, sizeof why) == XXL_FIRST_ADMIN_MADE);
    XXL_CHECK (xxl_store_user_update (second, "admin", "$y$changed", NULL, NULL) == 1);
    XXL_CHECK (xxl_first_admin_start (&again, second, dir, 6000, why, sizeof why) == XXL_FIRST_ADMIN_STALE);
    XXL_CHECK (lstat (file, &st) == -1 && streq (again.hash, ""));
    XXL_CHECK (xxl_store_user_rm (store, "admin") == 1);
    //  A file that is not the one tracked stays: this one's removed by
    //  hand, then one written by a scheduler of another store sharing the
    //  folder (--db differs) with its own admin's password
    XXL_CHECK (xxl_first_admin_start (&first, store, dir, 6500, why, sizeof why) == XXL_FIRST_ADMIN_MADE);
    XXL_CHECK (unlink (file) == 0);
    FILE *theirs = fopen (file, "w");
    XXL_CHECK (theirs && fputs ("another-stores-password\n", theirs) >= 0 && fclose (theirs) == 0);
    XXL_CHECK (xxl_store_user_update (second, "admin", "$y$changed", NULL, NULL) == 1);
    XXL_CHECK (xxl_first_admin_check (&first, store) == 1 && streq (first.hash, ""));
    XXL_CHECK (streq (s_file_text (file), "another-stores-password\n"));
    XXL_CHECK (unlink (file) == 0 && xxl_store_user_rm (store, "admin") == 1);
    //  ... nor at a start: a file not written as this store's admin was
    //  added (another store's, its admin an hour apart), or with admin gone
    XXL_CHECK (xxl_first_admin_start (&first, store, dir, zclock_time () - 3600000, why,
                                      sizeof why) == XXL_FIRST_ADMIN_MADE);
    XXL_CHECK (unlink (file) == 0);
    theirs = fopen (file, "w");
    XXL_CHECK (theirs && fputs ("another-stores-password\n", theirs) >= 0 && fclose (theirs) == 0);
    XXL_CHECK (xxl_first_admin_start (&again, second, dir, zclock_time (), why, sizeof why)
               == XXL_FIRST_ADMIN_LEFT && streq (again.hash, ""));
    XXL_CHECK (streq (s_file_text (file), "another-stores-password\n"));
    XXL_CHECK (xxl_store_user_rm (store, "admin") == 1 && xxl_store_user_add (store, &bob) == 1);
    XXL_CHECK (xxl_first_admin_start (&again, second, dir, zclock_time (), why, sizeof why)
               == XXL_FIRST_ADMIN_LEFT);
    XXL_CHECK (streq (s_file_text (file), "another-stores-password\n"));
    XXL_CHECK (unlink (file) == 0 && xxl_store_user_rm (store, "bob") == 1);
    //  No user whose password cannot be written: a file there already (it
    //  stays as it was), a link there (never followed), no folder, none given
    FILE *stale = fopen (file, "w");
    XXL_CHECK (stale && fputs ("old\n", stale) >= 0 && fclose (stale) == 0);
    XXL_CHECK (xxl_first_admin_start (&first, store, dir, 7000, why, sizeof why) == -1);
    XXL_CHECK_HAS (why, "exists already");
    XXL_CHECK (s_users (store) == 0 && streq (s_file_text (file), "old\n"));
    XXL_CHECK (unlink (file) == 0);
    char target [400];
    snprintf (target, sizeof target, "%s/target", s_dir);
    XXL_CHECK (symlink (target, file) == 0);
    XXL_CHECK (xxl_first_admin_start (&first, store, dir, 8000, why, sizeof why) == -1);
    XXL_CHECK (s_users (store) == 0 && lstat (target, &st) == -1 && lstat (file, &st) == 0
               && S_ISLNK (st.st_mode));
    XXL_CHECK (unlink (file) == 0);
    snprintf (dir2, sizeof dir2, "%s/missing", s_dir);
    XXL_CHECK (xxl_first_admin_start (&first, store, dir2, 9000, why, sizeof why) == -1);
    XXL_CHECK_HAS (why, "cannot make");
    XXL_CHECK (xxl_first_admin_start (&first, store, NULL, 9000, why, sizeof why) == -1);
    XXL_CHECK_HAS (why, "no state folder");
    XXL_CHECK (s_users (store) == 0 && !xxl_store_in_txn (store));
    XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_audit WHERE time >= 7000"
                                " AND time <= 9000", NULL) == 0);
    //  (a row for each of the five made, gone for the audit's checks after)
    XXL_CHECK (XXL_TEST_EXEC (store, "DELETE FROM xxl_audit WHERE who = ?", "s",
                              XXL_FIRST_ADMIN_WHO) == 5);
    XXL_CHECK (rmdir (dir) == 0);
    xxl_store_destroy (&second);
}

//  Leases on the shares of the jobs (store methods version 3), through
//  the interface only; gid: a group to add jobs to
static void
s_test_leases (xxl_store_t *store, int64_t gid)
{
    xxl_lease_t leases [XXL_STORE_SHARES];
    XXL_CHECK (xxl_store_begin (store) == 0);
    XXL_CHECK (xxl_store_lease_list (store, leases) == 0);
    for (int s = 0; s < XXL_STORE_SHARES; s++)
        XXL_CHECK (leases [s].share == s && !*leases [s].owner);
    //  A take moves the epoch on, and only from the epoch read
    int64_t e3 = leases [3].epoch;
    XXL_CHECK (xxl_store_lease_take (store, 3, "node-a", e3, 5000) == 1);
    XXL_CHECK (xxl_store_lease_take (store, 3, "node-b", e3, 6000) == 0);
    XXL_CHECK (xxl_store_lease_list (store, leases) == 0);
    XXL_CHECK (streq (leases [3].owner, "node-a") && leases [3].epoch == e3 + 1
               && leases [3].expires == 5000);
    //  Renewal: only by its holder at its epoch
    XXL_CHECK (xxl_store_lease_renew (store, 3, "node-a", e3 + 1, 7000) == 1);
    XXL_CHECK (xxl_store_lease_renew (store, 3, "node-a", e3, 9000) == 0);
    XXL_CHECK (xxl_store_lease_renew (store, 3, "node-b", e3 + 1, 9000) == 0);
    XXL_CHECK (xxl_store_lease_list (store, leases) == 0 && leases [3].expires == 7000);
    //  Taken over by b (it read epoch e3 + 1): a's renewal and release
    //  by the old epoch change nothing
    XXL_CHECK (xxl_store_lease_take (store, 3, "node-b", e3 + 1, 8000) == 1);
    XXL_CHECK (xxl_store_lease_renew (store, 3, "node-a", e3 + 1, 9000) == 0);
    XXL_CHECK (xxl_store_lease_release (store, 3, "node-a", e3 + 1, 7500) == 0);
    XXL_CHECK (xxl_store_lease_list (store, leases) == 0 && streq (leases [3].owner, "node-b")
               && leases [3].expires == 8000);
    XXL_CHECK (xxl_store_lease_release (store, 3, "node-b", e3 + 2, 7600) == 1);
    XXL_CHECK (xxl_store_lease_list (store, leases) == 0 && !*leases [3].owner
               && leases [3].expires == 7600 && leases [3].epoch == e3 + 2);
    //  Fired marks per share, only raised
    XXL_CHECK (xxl_store_lease_fired (store, (1 << 3) | (1 << 5), 100000, 90000) == 0);
    XXL_CHECK (xxl_store_lease_fired (store, 1 << 5, 50000, 40000) == 0);
    XXL_CHECK (xxl_store_lease_list (store, leases) == 0);
    XXL_CHECK (leases [3].fired_until == 100000 && leases [3].fired_sent == 90000);
    XXL_CHECK (leases [5].fired_until == 100000 && leases [5].fired_sent == 90000);
    XXL_CHECK (leases [4].fired_until < 100000);
    //  Nodes: counted while they beat
    XXL_CHECK (xxl_store_node_beat (store, "node-a", 1000) == 0);
    XXL_CHECK (xxl_store_node_beat (store, "node-b", 2000) == 0);
    XXL_CHECK (xxl_store_node_beat (store, "node-a", 3000) == 0);
    XXL_CHECK (xxl_store_node_count (store, 2500) == 1);
    XXL_CHECK (xxl_store_node_count (store, 1500) == 2);
    //  The store's clock, on which leases are compared: here the test's
    //  own host (SQLite) or the server on the same host (PostgreSQL)
    int64_t before = zclock_time ();
    int64_t clock = xxl_store_clock_now (store);
    XXL_CHECK (clock >= before - 1000 && clock <= zclock_time () + 1000);
    //  Due jobs and unsent rows by share: two started jobs, one in share
    //  s and one in share s + 1
    xxl_job_t job = { .job_group = gid, .job_desc = "lease", .schedule_type = "CRON",
                      .schedule_conf = "0 0 0 * * ?", .misfire_strategy = "DO_NOTHING",
                      .executor_route_strategy = "FIRST", .executor_handler = "h",
                      .executor_block_strategy = "SERIAL_EXECUTION", .glue_type = "BEAN",
                      .author = "", .alarm_email = "", .executor_param = "",
                      .glue_source = "", .glue_remark = "", .child_jobid = "",
                      .timezone = "", .retry_backoff = 1,
                      .trigger_status = 1, .trigger_next_time = 1000 };
    int64_t j1 = xxl_store_job_add (store, &job);
    int64_t j2 = xxl_store_job_add (store, &job);
    XXL_CHECK (j1 > 0 && j2 == j1 + 1);
    xxl_store_job_set_times (store, j1, 0, 1000);
    xxl_store_job_set_times (store, j2, 0, 1000);
    uint64_t m1 = (uint64_t) 1 << (j1 % XXL_STORE_SHARES);
    uint64_t m2 = (uint64_t) 1 << (j2 % XXL_STORE_SHARES);
    xxl_store_due_t due [8];
    size_t count = 0;
    XXL_CHECK (xxl_store_job_due_in (store, m1, 2000, due, 8, &count) == 0);
    XXL_CHECK (count == 1 && due [0].id == j1);
    XXL_CHECK (xxl_store_job_due_in (store, m1 | m2, 2000, due, 8, &count) == 0 && count == 2);
    XXL_CHECK (xxl_store_job_due_in (store, 0, 2000, due, 8, &count) == 0 && count == 0);
    xxl_log_t row = { .job_group = gid, .job_id = j2, .executor_handler = "h",
                      .trigger_time = 500, .schedule_time = 900, .trigger_type = "CRON" };
    XXL_CHECK (xxl_store_log_add (store, &row) == 0);
    int64_t ids [8];
    XXL_CHECK (xxl_store_log_unsent_in (store, m1, 0, ids, 8, &count) == 0 && count == 0);
    XXL_CHECK (xxl_store_log_unsent_in (store, m2, 0, ids, 8, &count) == 0 && count == 1
               && ids [0] == row.id);
    XXL_CHECK (xxl_store_recover_late_jobs_in (store, m2, 1000, ids, 8, &count) == 0
               && count == 1 && ids [0] == j2);
    XXL_CHECK (xxl_store_recover_late_jobs_in (store, m1, 1000, ids, 8, &count) == 0
               && count == 0);
    //  Routed ahead and covered by its share's fired_sent: stamped with
    //  its planned time by that share's recovery only
    XXL_CHECK (xxl_store_log_plan_route (store, row.id, "h:1", "\nsection") == 1);
    XXL_CHECK (xxl_store_lease_fired (store, m2, 0, 950) == 0);
    XXL_CHECK (xxl_store_recover_stamp_fired_in (store, m1) == 0);
    xxl_log_t back;
    XXL_CHECK (xxl_store_log_load (store, row.id, &back) == 0 && back.trigger_time == 500);
    xxl_log_free (&back);
    XXL_CHECK (xxl_store_recover_stamp_fired_in (store, m2) == 1);
    XXL_CHECK (xxl_store_log_load (store, row.id, &back) == 0 && back.trigger_time == 900);
    xxl_log_free (&back);
    XXL_CHECK (xxl_store_log_drop_unsent (store, row.id) == 1);
    XXL_CHECK (xxl_store_job_rm (store, j1) >= 0 && xxl_store_job_rm (store, j2) >= 0);
    XXL_CHECK (xxl_store_commit (store) == 0);
}

//  Another connection holds the write lock past the busy timeout (5 s): a
//  begin fails, and the turn's writes then fail without running (none
//  commits alone), reads still answer, its commit fails with the cause;
//  once the lock is free, the same store writes again
static void
s_test_busy (xxl_store_t *store, const char *path)
{
    sqlite3 *other = NULL;
    XXL_CHECK (sqlite3_open (path, &other) == SQLITE_OK);
    XXL_CHECK (sqlite3_exec (other, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK);
    XXL_CHECK (xxl_store_begin (store) == -1);
    XXL_CHECK (xxl_store_node_beat (store, "busy-node", 4242) == -1);
    xxl_lease_t leases [XXL_STORE_SHARES];
    XXL_CHECK (xxl_store_lease_list (store, leases) == 0);
    XXL_CHECK (xxl_store_commit (store) == -1);
    XXL_CHECK (strstr (xxl_store_error (store), "cannot begin a transaction"));
    XXL_CHECK (sqlite3_exec (other, "ROLLBACK", NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close (other);
    XXL_CHECK (xxl_store_node_count (store, 4242) == 0);
    XXL_CHECK (xxl_store_begin (store) == 0);
    XXL_CHECK (xxl_store_node_beat (store, "busy-node", 4242) == 0);
    XXL_CHECK (xxl_store_commit (store) == 0);
    XXL_CHECK (xxl_store_node_count (store, 4242) == 1);
}


//  SQLite's log ids come in blocks reserved in sqlite_sequence inside the
//  write transaction: a row of the block leaves sqlite_sequence as it is
//  (no write of it per row); a rollback takes the reservation back; two
//  handles on one file get disjoint blocks; an id is never handed out
//  again, whatever rows are deleted
static int64_t
s_seq (xxl_store_t *store)
{
    return XXL_TEST_SCALAR (store, "SELECT COALESCE((SELECT seq FROM sqlite_sequence"
                                   " WHERE name = 'xxl_job_log'), 0)", NULL);
}

static int
s_add_with_id (xxl_store_t *store, int64_t gid, int64_t jid, int64_t id)
{
    xxl_log_t row = { .id = id, .job_group = gid, .job_id = jid, .executor_handler = "h",
                      .trigger_time = 1000, .trigger_type = "MANUAL" };
    return xxl_store_log_add (store, &row);
}

static void
s_test_log_id_blocks (xxl_store_t *store, const char *path, int64_t gid, int64_t jid)
{
    XXL_CHECK (xxl_store_begin (store) == 0);
    int64_t first = xxl_store_log_next_id (store);
    XXL_CHECK (first > 0);
    int64_t reserved = s_seq (store);
    //  The block: the sequence moved past the run the caller may hand out
    XXL_CHECK (reserved >= first + 2 * XXL_STORE_LOG_ID_RUN - 1);
    for (int64_t i = 0; i < XXL_STORE_LOG_ID_RUN; i++)
        XXL_CHECK (s_add_with_id (store, gid, jid, first + i) == 0);
    XXL_CHECK (s_seq (store) == reserved);              //  no write of it per row
    int64_t again = xxl_store_log_next_id (store);      //  the next run, same block
    XXL_CHECK (again == first + XXL_STORE_LOG_ID_RUN && s_seq (store) == reserved);
    XXL_CHECK (xxl_store_commit (store) == 0);
    XXL_CHECK (s_seq (store) == reserved);
    //  The next transaction goes on past the rows added, in the block
    XXL_CHECK (xxl_store_begin (store) == 0);
    XXL_CHECK (xxl_store_log_next_id (store) == first + XXL_STORE_LOG_ID_RUN);
    XXL_CHECK (xxl_store_commit (store) == 0);

    //  A rollback takes back the block it reserved: the next one is
    //  reserved again, past every id added
    XXL_CHECK (xxl_store_begin (store) == 0);
    int64_t next = xxl_store_log_next_id (store);
    int64_t runs = 0;
    while (next + XXL_STORE_LOG_ID_RUN <= reserved + 1 && runs++ < 64) {
        for (int64_t i = 0; i < XXL_STORE_LOG_ID_RUN; i++)
            XXL_CHECK (s_add_with_id (store, gid, jid, next + i) == 0);
        next = xxl_store_log_next_id (store);
    }
    int64_t raised = s_seq (store);
    XXL_CHECK (raised > reserved);                      //  a new block, in this transaction
    XXL_CHECK (s_add_with_id (store, gid, jid, next) == 0);
    XXL_CHECK (xxl_store_rollback (store) == 0);
    XXL_CHECK (s_seq (store) == reserved);
    XXL_CHECK (xxl_store_begin (store) == 0);
    int64_t after = xxl_store_log_next_id (store);
    XXL_CHECK (after > next && s_seq (store) >= after + 2 * XXL_STORE_LOG_ID_RUN - 1);
    XXL_CHECK (s_add_with_id (store, gid, jid, after) == 0);
    XXL_CHECK (xxl_store_commit (store) == 0);
    int64_t mine_end = s_seq (store);

    //  Another handle on the file (a second scheduler): its block starts
    //  past this one's, and both add rows in turn without a clash
    char err [512];
    xxl_store_t *other = xxl_store_new (path, err, sizeof err);
    XXL_CHECK (other != NULL);
    for (int turn = 0; other && turn < 6; turn++) {
        xxl_store_t *who = turn % 2? other: store;
        XXL_CHECK (xxl_store_begin (who) == 0);
        int64_t id = xxl_store_log_next_id (who);
        if (who == other)
            XXL_CHECK (id > mine_end);
        else
            XXL_CHECK (id <= mine_end);
        XXL_CHECK (s_add_with_id (who, gid, jid, id) == 0);
        XXL_CHECK (xxl_store_commit (who) == 0);
    }
    xxl_store_destroy (&other);

    //  The newest rows deleted: a handle opened afresh never hands out an
    //  id that was
    int64_t top = XXL_TEST_SCALAR (store, "SELECT MAX(id) FROM xxl_job_log", NULL);
    XXL_CHECK (top > first);
    xxl_store_t *fresh = xxl_store_new (path, err, sizeof err);
    XXL_CHECK (fresh != NULL);
    if (fresh) {
        sqlite3 *raw = NULL;
        XXL_CHECK (sqlite3_open (path, &raw) == SQLITE_OK);
        char sql [128];
        snprintf (sql, sizeof sql, "DELETE FROM xxl_job_log WHERE id >= %" PRId64, first);
        XXL_CHECK (sqlite3_exec (raw, sql, NULL, NULL, NULL) == SQLITE_OK);
        sqlite3_close (raw);
        XXL_CHECK (xxl_store_begin (fresh) == 0);
        XXL_CHECK (xxl_store_log_next_id (fresh) > top);
        XXL_CHECK (xxl_store_rollback (fresh) == 0);
        xxl_store_destroy (&fresh);
    }
}

//  Sets the store's log id sequence back so that its next id is `next`
//  (what restoring a backup taken earlier does)
static void
s_ids_set_back (xxl_store_t *store, int64_t next)
{
    if (xxl_test_pg)
        XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT setval ('xxl_log_ids', ?, false)", "i",
                                    next) == next);
    else
        XXL_CHECK (XXL_TEST_EXEC (store, "UPDATE sqlite_sequence SET seq = ?"
                                  " WHERE name = 'xxl_job_log'", "i", next - 1) == 1);
}

//  The next log id a handle opened afresh hands out (another scheduler's)
static int64_t
s_fresh_next_id (const char *path)
{
    char err [512];
    xxl_store_t *fresh = xxl_store_new (path, err, sizeof err);
    XXL_CHECK (fresh != NULL);
    if (!fresh)
        return -1;
    XXL_CHECK (xxl_store_begin (fresh) == 0);
    int64_t next = xxl_store_log_next_id (fresh);
    XXL_CHECK (xxl_store_rollback (fresh) == 0);
    xxl_store_destroy (&fresh);
    return next;
}

//  log_ids_past on another thread, after a barrier
typedef struct {
    pthread_barrier_t *barrier;
    xxl_store_t *store;
    int64_t id, was, now;
    int rc;
} mover_t;

static void *
s_mover (void *args)
{
    mover_t *mover = (mover_t *) args;
    pthread_barrier_wait (mover->barrier);
    mover->rc = xxl_store_log_ids_past (mover->store, mover->id, 0, &mover->was, &mover->now);
    return NULL;
}

//  log_ids_past (an agent's REGISTER acceptedMax): the log ids move past
//  an id an agent accepted when the store would hand it out again, from
//  this handle's block or the sequence, never back; ids handed out, or
//  another handle's, move nothing
static void
s_test_log_ids_past (xxl_store_t *store, const char *path, int64_t gid, int64_t jid)
{
    int64_t was = -1, now = -1;
    XXL_CHECK (xxl_store_begin (store) == 0);
    int64_t first = xxl_store_log_next_id (store);
    XXL_CHECK (first > 1 && s_add_with_id (store, gid, jid, first) == 0);
    //  Handed out (at or below the caller's first id not handed out)
    XXL_CHECK (xxl_store_log_ids_past (store, first, first + 1, &was, &now) == 0);
    XXL_CHECK (was == first + 1 && now == was);
    XXL_CHECK (xxl_store_log_ids_past (store, first - 1, first + 1, &was, &now) == 0);
    //  An id of this handle's block it has not handed out: the block is
    //  dropped, the next ids come past it
    int64_t inside = first + 2 * XXL_STORE_LOG_ID_RUN + 5;
    XXL_CHECK (xxl_store_log_ids_past (store, inside, first + 1, &was, &now) == 1);
    XXL_CHECK (was == first + 1 && now > inside);
    int64_t top = xxl_store_log_next_id (store);
    XXL_CHECK (top == now);
    XXL_CHECK (s_add_with_id (store, gid, jid, top) == 0);
    XXL_CHECK (xxl_store_commit (store) == 0);

    //  Another handle's id (a second scheduler's, from the block it
    //  reserved past this handle's), which an agent accepted: nothing
    //  moves, and this handle keeps handing out its own block
    char other_err [512];
    xxl_store_t *other = xxl_store_new (path, other_err, sizeof other_err);
    XXL_CHECK (other != NULL);
    if (other) {
        XXL_CHECK (xxl_store_begin (other) == 0);
        int64_t theirs = xxl_store_log_next_id (other);
        XXL_CHECK (theirs > top && s_add_with_id (other, gid, jid, theirs) == 0);
        XXL_CHECK (xxl_store_commit (other) == 0);
        XXL_CHECK (xxl_store_begin (store) == 0);
        XXL_CHECK (xxl_store_log_ids_past (store, theirs, top + 1, &was, &now) == 0);
        XXL_CHECK (was == top + 1 && now == was);
        int64_t mine = xxl_store_log_next_id (store);
        XXL_CHECK (mine > top && mine < theirs);
        XXL_CHECK (s_add_with_id (store, gid, jid, mine) == 0);
        XXL_CHECK (xxl_store_commit (store) == 0);
        top = mine;
        xxl_store_destroy (&other);
    }

    //  The store set back below ids handed out (restored from a backup
    //  without moving its log ids); a handle that reserved a block there
    //  moves past an agent's id, and so does every later reservation
    s_ids_set_back (store, first + 1);
    char err [512];
    xxl_store_t *restored = xxl_store_new (path, err, sizeof err);
    XXL_CHECK (restored != NULL);
    if (restored) {
        XXL_CHECK (xxl_store_begin (restored) == 0);
        int64_t reused = xxl_store_log_next_id (restored);
        XXL_CHECK (reused > 0 && reused <= top);        //  (the hole)
        XXL_CHECK (xxl_store_log_ids_past (restored, top, reused, &was, &now) == 1);
        XXL_CHECK (was == reused && now > top);
        int64_t next = xxl_store_log_next_id (restored);
        XXL_CHECK (next == now);
        XXL_CHECK (s_add_with_id (restored, gid, jid, next) == 0);
        XXL_CHECK (xxl_store_commit (restored) == 0);
        XXL_CHECK (s_fresh_next_id (path) > next);
        xxl_store_destroy (&restored);
    }

    //  Past the store's next id, outside a transaction: the sequence
    //  moves for every handle (this one's block is dropped); never back
    s_ids_set_back (store, first + 1);
    int64_t far = top + 3 * 4096 + 7;
    //  (was: this handle's next, past the run its last next_id gave)
    XXL_CHECK (xxl_store_log_ids_past (store, far, 0, &was, &now) == 1);
    XXL_CHECK (was == top + XXL_STORE_LOG_ID_RUN && now > far);
    int64_t beyond = s_fresh_next_id (path);
    XXL_CHECK (beyond > far);
    XXL_CHECK (xxl_store_log_ids_past (store, far, 0, &was, &now) == 0);
    XXL_CHECK (xxl_store_log_ids_past (store, top, 0, &was, &now) == 0);
    XXL_CHECK (s_fresh_next_id (path) >= beyond);
    //  An id too far past the store's next is refused, the ids kept
    XXL_CHECK (xxl_store_log_ids_past (store, INT64_MAX, 0, &was, &now) == -1);
    XXL_CHECK (strstr (xxl_store_error (store), "more than 2^32 past"));
    XXL_CHECK (xxl_store_log_ids_past (store, beyond + XXL_STORE_LOG_IDS_LEAP + 4096 * 4, 0,
                                       &was, &now) == -1);
    int64_t kept = s_fresh_next_id (path);
    XXL_CHECK (kept >= beyond && kept < beyond + XXL_STORE_LOG_IDS_LEAP);

    //  PostgreSQL: a move of 500 blocks while another connection draws
    //  blocks: the block the move keeps is no one else's, and what any
    //  connection draws afterwards is past every block and past the id
    if (!xxl_test_pg)
        return;
    xxl_store_t *drawer = xxl_store_new (path, err, sizeof err);
    XXL_CHECK (drawer != NULL);
    if (!drawer)
        return;
    pthread_barrier_t barrier;
    pthread_barrier_init (&barrier, NULL, 2);
    mover_t mover = { &barrier, store, kept + 500 * 4096, 0, 0, -2 };
    pthread_t thread;
    pthread_create (&thread, NULL, s_mover, &mover);
    pthread_barrier_wait (&barrier);
    int64_t drawn [200], drawn_max = 0;
    for (int i = 0; i < 200; i++) {
        drawn [i] = XXL_TEST_SCALAR (drawer, "SELECT nextval ('xxl_log_ids')", NULL);
        drawn_max = drawn [i] > drawn_max? drawn [i]: drawn_max;
    }
    pthread_join (thread, NULL);
    pthread_barrier_destroy (&barrier);
    XXL_CHECK (mover.rc == 1 && mover.now > mover.id);
    bool clash = false;
    for (int i = 0; i < 200; i++)
        clash |= drawn [i] <= 0 || drawn [i] == mover.now;
    XXL_CHECK (!clash);
    int64_t after = XXL_TEST_SCALAR (drawer, "SELECT nextval ('xxl_log_ids')", NULL);
    XXL_CHECK (after > mover.now && after > drawn_max && after > mover.id);
    xxl_store_destroy (&drawer);
}

//  Rows a transaction adds with ids of its own and no planned time (the
//  PostgreSQL store defers them, then writes them as one statement), and a
//  CALLBACK's items in one call: the same answers on both stores
//  A route claims its row: another address changes nothing until the
//  address is taken back; the same address (a re-send) writes again
static void
s_test_route_claim (xxl_store_t *store, int64_t gid, int64_t jid)
{
    xxl_log_t row = {
        .id = xxl_store_log_next_id (store), .job_group = gid, .job_id = jid,
        .executor_handler = "demoJobHandler", .executor_param = "",
        .trigger_time = 1000, .trigger_msg = "head\n", .trigger_type = "MANUAL"
    };
    XXL_CHECK (row.id > 0 && xxl_store_log_add (store, &row) == 0);
    XXL_CHECK_INT (xxl_store_log_route (store, row.id, 0, "a1", "to a1\n"), 1);
    XXL_CHECK_INT (xxl_store_log_route (store, row.id, 0, "b1", "to b1\n"), 0);
    XXL_CHECK_INT (xxl_store_log_route (store, row.id, 1500, "b1", "to b1\n"), 0);
    XXL_CHECK_INT (xxl_store_log_route (store, row.id, 0, "a1", "again\n"), 1);
    xxl_log_t back = { 0 };
    XXL_CHECK (xxl_store_log_load (store, row.id, &back) == 0);
    XXL_CHECK (streq (back.executor_address, "a1") && streq (back.trigger_msg, "head\nto a1\nagain\n")
               && back.trigger_time == 1000);
    xxl_log_free (&back);
    //  Taken back (log_clear_address, log_unroute): routed anew, with a stamp
    XXL_CHECK_INT (xxl_store_log_clear_address (store, row.id), 1);
    XXL_CHECK_INT (xxl_store_log_route (store, row.id, 1500, "b1", "to b1\n"), 1);
    XXL_CHECK_INT (xxl_store_log_unroute (store, row.id, "to b1\n", 1), 1);
    XXL_CHECK_INT (xxl_store_log_route (store, row.id, 0, "c1", "to c1\n"), 1);
    XXL_CHECK (xxl_store_log_load (store, row.id, &back) == 0);
    XXL_CHECK (streq (back.executor_address, "c1") && back.trigger_time == 1500
               && streq (back.trigger_msg, "head\nto a1\nagain\nto c1\n"));
    xxl_log_free (&back);
    //  An answered row takes no stamped route (a re-send's still writes)
    XXL_CHECK_INT (xxl_store_log_accept (store, row.id, 0), 1);
    XXL_CHECK_INT (xxl_store_log_route (store, row.id, 1600, "c1", "late\n"), 0);

    //  The answer to a RUN whose section is no longer last (a RUN of the
    //  row routed since to the same address, a re-send, may have been
    //  taken): its refusal neither ends the row nor takes its address
    //  back; the last RUN's refusal does, once
    row.id = xxl_store_log_next_id (store);
    row.executor_address = NULL;
    XXL_CHECK (row.id > 0 && xxl_store_log_add (store, &row) == 0);
    XXL_CHECK_INT (xxl_store_log_route (store, row.id, 0, "c1", "to c1\n"), 1);
    XXL_CHECK_INT (xxl_store_log_route (store, row.id, 0, "c1", "re-sent\n"), 1);
    XXL_CHECK_INT (xxl_store_log_unroute (store, row.id, "to c1\n", 1), 0);
    XXL_CHECK_INT (xxl_store_log_trigger_end (store, row.id, 500, 6, "refused\n", 0, "to c1\n"), 0);
    XXL_CHECK (xxl_store_log_load (store, row.id, &back) == 0);
    XXL_CHECK (streq (back.executor_address, "c1") && back.trigger_code == 0
               && streq (back.trigger_msg, "head\nto c1\nre-sent\n"));
    xxl_log_free (&back);
    XXL_CHECK_INT (xxl_store_log_trigger_end (store, row.id, 500, 8, "refused\n", 0, "re-sent\n"), 1);
    XXL_CHECK_INT (xxl_store_log_trigger_end (store, row.id, 500, 8, "again\n", 0, "refused\n"), 0);
    XXL_CHECK (xxl_store_log_load (store, row.id, &back) == 0);
    XXL_CHECK (back.trigger_code == 500 && streq (back.trigger_msg, "head\nto c1\nrefused\n"));
    xxl_log_free (&back);
    //  The trigger path's failure (log_trigger_done) claims the row as a
    //  route does: none for a row routed elsewhere since it was read (on
    //  PostgreSQL, by a scheduler sharing the store) or already answered;
    //  one with no address, or with the failing route's own
    row.id = xxl_store_log_next_id (store);
    XXL_CHECK (row.id > 0 && xxl_store_log_add (store, &row) == 0);
    XXL_CHECK_INT (xxl_store_log_route (store, row.id, 0, "c1", "to c1\n"), 1);
    XXL_CHECK_INT (xxl_store_log_trigger_done (store, row.id, 500, NULL, "no address\n"), 0);
    XXL_CHECK_INT (xxl_store_log_trigger_done (store, row.id, 500, "d1", "d1 gone\n"), 0);
    XXL_CHECK (xxl_store_log_load (store, row.id, &back) == 0);
    XXL_CHECK (back.trigger_code == 0 && streq (back.executor_address, "c1")
               && streq (back.trigger_msg, "head\nto c1\n"));
    xxl_log_free (&back);
    XXL_CHECK_INT (xxl_store_log_trigger_done (store, row.id, 500, "c1", "c1 gone\n"), 1);
    XXL_CHECK_INT (xxl_store_log_trigger_done (store, row.id, 500, "c1", "again\n"), 0);
    XXL_CHECK (xxl_store_log_load (store, row.id, &back) == 0);
    XXL_CHECK (back.trigger_code == 500 && streq (back.trigger_msg, "head\nto c1\nc1 gone\n"));
    xxl_log_free (&back);
    row.id = xxl_store_log_next_id (store);
    XXL_CHECK (row.id > 0 && xxl_store_log_add (store, &row) == 0);
    XXL_CHECK_INT (xxl_store_log_trigger_done (store, row.id, 500, NULL, "no address\n"), 1);
    row.id = xxl_store_log_next_id (store);
    XXL_CHECK (row.id > 0 && xxl_store_log_add (store, &row) == 0);
    XXL_CHECK_INT (xxl_store_log_handle_done (store, row.id, 2000, 200, "ran"), 0);
    XXL_CHECK_INT (xxl_store_log_trigger_done (store, row.id, 500, NULL, "late\n"), 0);
    //  A re-send's route (stamp 0) of a row failed meanwhile or finished
    //  sends nothing (its retry is the trigger's next run); of an accepted
    //  one it still writes (the agent answers "already accepted")
    XXL_CHECK_INT (xxl_store_log_route (store, row.id, 0, "c1", "re-sent\n"), 0);
    row.id = xxl_store_log_next_id (store);
    XXL_CHECK (row.id > 0 && xxl_store_log_add (store, &row) == 0);
    XXL_CHECK_INT (xxl_store_log_trigger_done (store, row.id, 500, NULL, "failed\n"), 1);
    XXL_CHECK_INT (xxl_store_log_route (store, row.id, 0, "c1", "re-sent\n"), 0);
    XXL_CHECK (xxl_store_log_load (store, row.id, &back) == 0);
    XXL_CHECK (back.trigger_code == 500 && (!back.executor_address || !*back.executor_address));
    xxl_log_free (&back);
    row.id = xxl_store_log_next_id (store);
    XXL_CHECK (row.id > 0 && xxl_store_log_add (store, &row) == 0);
    XXL_CHECK_INT (xxl_store_log_accept (store, row.id, 0), 1);
    XXL_CHECK_INT (xxl_store_log_route (store, row.id, 0, "c1", "re-sent\n"), 1);

    //  An acceptance with a message (code 200, last): only while its
    //  RUN's section is last; also once the row is accepted (its result
    //  came first), never for a failed row
    row.id = xxl_store_log_next_id (store);
    XXL_CHECK (row.id > 0 && xxl_store_log_add (store, &row) == 0);
    XXL_CHECK_INT (xxl_store_log_route (store, row.id, 0, "c1", "to c1\n"), 1);
    XXL_CHECK_INT (xxl_store_log_route (store, row.id, 0, "c1", "re-sent\n"), 1);
    XXL_CHECK_INT (xxl_store_log_trigger_end (store, row.id, 200, 6, "taken\n", 0, "to c1\n"), 0);
    XXL_CHECK_INT (xxl_store_log_accept (store, row.id, 0), 1);
    XXL_CHECK_INT (xxl_store_log_trigger_end (store, row.id, 200, 8, "taken\n", 0, "re-sent\n"), 1);
    XXL_CHECK (xxl_store_log_load (store, row.id, &back) == 0);
    XXL_CHECK (back.trigger_code == 200 && streq (back.trigger_msg, "head\nto c1\ntaken\n"));
    xxl_log_free (&back);
    row.id = xxl_store_log_next_id (store);
    XXL_CHECK (row.id > 0 && xxl_store_log_add (store, &row) == 0);
    XXL_CHECK_INT (xxl_store_log_route (store, row.id, 0, "c1", "to c1\n"), 1);
    XXL_CHECK_INT (xxl_store_log_trigger_end (store, row.id, 200, 6, "taken\n", 0, "to c1\n"), 1);
    XXL_CHECK (xxl_store_log_load (store, row.id, &back) == 0);
    XXL_CHECK (back.trigger_code == 200 && streq (back.trigger_msg, "head\ntaken\n"));
    xxl_log_free (&back);
    row.id = xxl_store_log_next_id (store);
    XXL_CHECK (row.id > 0 && xxl_store_log_add (store, &row) == 0);
    XXL_CHECK_INT (xxl_store_log_route (store, row.id, 0, "c1", "to c1\n"), 1);
    XXL_CHECK_INT (xxl_store_log_fail_unsent (store, row.id, 500, ""), 1);
    XXL_CHECK_INT (xxl_store_log_trigger_end (store, row.id, 200, 6, "taken\n", 0, "to c1\n"), 0);
    //  (and a busy refusal of the last RUN takes it back)
    row.id = xxl_store_log_next_id (store);
    XXL_CHECK (row.id > 0 && xxl_store_log_add (store, &row) == 0);
    XXL_CHECK_INT (xxl_store_log_route (store, row.id, 0, "c1", "to c1\n"), 1);
    XXL_CHECK_INT (xxl_store_log_route (store, row.id, 0, "c1", "re-sent\n"), 1);
    XXL_CHECK_INT (xxl_store_log_unroute (store, row.id, "re-sent\n", 1), 1);
    XXL_CHECK (xxl_store_log_load (store, row.id, &back) == 0);
    XXL_CHECK (!*back.executor_address && streq (back.trigger_msg, "head\nto c1\n"));
    xxl_log_free (&back);
}

static void
s_test_batches (xxl_store_t *store, int64_t gid, int64_t jid)
{
    //  Text that must come back byte for byte (array syntax's specials)
    const char *tricky = "a \"quoted\" {brace}, comma\\ back\nline \xc3\x9cn\xc3\xaf NULL";
    XXL_CHECK (xxl_store_begin (store) == 0);
    int64_t next = xxl_store_log_next_id (store);
    XXL_CHECK (next > 0);
    xxl_log_t row = {
        .id = next, .job_group = gid, .job_id = jid, .executor_address = "h1",
        .executor_handler = "demoJobHandler", .executor_param = (char *) tricky,
        .executor_sharding_param = "0/2", .executor_fail_retry_count = 3,
        .trigger_time = 1000, .trigger_code = 0, .trigger_msg = (char *) tricky,
        .trigger_type = "MANUAL", .schedule_time = 0
    };
    XXL_CHECK (xxl_store_log_add (store, &row) == 0 && row.id == next);
    xxl_log_t second = row;
    second.id = next + 1;
    second.executor_address = NULL;
    second.executor_param = "";
    second.executor_sharding_param = NULL;
    second.trigger_msg = NULL;
    XXL_CHECK (xxl_store_log_add (store, &second) == 0);
    //  Seen by the transaction's next statement
    xxl_log_t loaded;
    XXL_CHECK (xxl_store_log_load (store, next, &loaded) == 0);
    XXL_CHECK (loaded.job_id == jid && loaded.executor_fail_retry_count == 3
            && loaded.trigger_time == 1000 && loaded.schedule_time == 0
            && streq (loaded.executor_param, tricky) && streq (loaded.trigger_msg, tricky)
            && streq (loaded.executor_address, "h1")
            && streq (loaded.executor_sharding_param, "0/2")
            && streq (loaded.trigger_type, "MANUAL"));
    xxl_log_free (&loaded);
    XXL_CHECK (xxl_store_commit (store) == 0);
    //  (NULLs stay NULL: a load reads them as "")
    XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT executor_address IS NULL AND trigger_msg IS NULL"
                                " AND executor_sharding_param IS NULL AND executor_param = ''"
                                " FROM xxl_job_log WHERE id = ?1", "i", next + 1) == 1);
    //  The ids handed out count: the next transaction's are past them
    XXL_CHECK (xxl_store_begin (store) == 0);
    XXL_CHECK (xxl_store_log_next_id (store) == next + 2);
    //  A rollback leaves nothing of them
    xxl_log_t dropped = row;
    dropped.id = next + 2;
    XXL_CHECK (xxl_store_log_add (store, &dropped) == 0);
    XXL_CHECK (xxl_store_rollback (store) == 0);
    XXL_CHECK (xxl_store_log_load (store, next + 2, &loaded) == 1);

    //  More rows than the backend buffers, in one transaction
    XXL_CHECK (xxl_store_begin (store) == 0);
    int64_t first = xxl_store_log_next_id (store);
    int added = 0;
    for (int i = 0; i < 2500; i++) {
        xxl_log_t many = row;
        many.id = first + i;
        added += xxl_store_log_add (store, &many) == 0;
    }
    XXL_CHECK (added == 2500);
    XXL_CHECK (xxl_store_commit (store) == 0);
    XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_job_log WHERE id >= ?1 AND id < ?2",
                                "ii", first, first + 2500) == 2500);

    //  An id that is taken: the add, or the commit, fails (and the
    //  row that has it is left as it was)
    XXL_CHECK (xxl_store_begin (store) == 0);
    xxl_log_t taken = row;
    taken.id = next;
    taken.trigger_time = 2000;
    int add = xxl_store_log_add (store, &taken);
    int commit = xxl_store_commit (store);
    XXL_CHECK (add == -1 || commit == -1);
    if (commit == -1)
        XXL_CHECK (strstr (xxl_store_error (store), "UNIQUE"));
    XXL_CHECK (xxl_store_log_load (store, next, &loaded) == 0 && loaded.trigger_time == 1000);
    xxl_log_free (&loaded);
    //  Deferred (both stores defer such rows): the transaction's next
    //  statement writes them first and fails with the cause, a row added
    //  before in the transaction is gone, and the commit fails too; a
    //  statement after the rollback runs
    XXL_CHECK (xxl_store_begin (store) == 0);
    xxl_log_t fine = row;
    fine.id = xxl_store_log_next_id (store);
    XXL_CHECK (fine.id > next && xxl_store_log_add (store, &fine) == 0);
    XXL_CHECK (xxl_store_log_add (store, &taken) == 0);
    XXL_CHECK (xxl_store_log_load (store, next, &loaded) == -1);
    XXL_CHECK (strstr (xxl_store_error (store), "UNIQUE"));
    XXL_CHECK (xxl_store_commit (store) == -1 && strstr (xxl_store_error (store), "UNIQUE"));
    XXL_CHECK (xxl_store_log_load (store, fine.id, &loaded) == 1);
    XXL_CHECK (xxl_store_log_load (store, next, &loaded) == 0 && loaded.trigger_time == 1000);
    xxl_log_free (&loaded);

    //  A CALLBACK's items: rows sent to h1 (r0 unsent yet: trigger code 0)
    //  and one sent to h2
    int64_t r [4];
    for (int i = 0; i < 4; i++) {
        xxl_log_t sent = row;
        sent.id = 0;
        sent.executor_address = i == 3? "h2": "h1";
        sent.trigger_code = i == 0? 0: 200;
        XXL_CHECK (xxl_store_log_add (store, &sent) == 0);
        r [i] = sent.id;
    }
    for (int in_txn = 0; in_txn < 2; in_txn++) {
        if (in_txn) {
            //  Again inside a transaction, on rows added in it (deferred)
            XXL_CHECK (xxl_store_begin (store) == 0);
            int64_t id = xxl_store_log_next_id (store);
            for (int i = 0; i < 4; i++) {
                xxl_log_t sent = row;
                sent.id = id + i;
                sent.executor_address = i == 3? "h2": "h1";
                sent.trigger_code = i == 0? 0: 200;
                XXL_CHECK (xxl_store_log_add (store, &sent) == 0);
                r [i] = sent.id;
            }
        }
        xxl_store_done_t items [] = {
            { r [1], "h1", 5000, 200, NULL, 0 },
            { r [2], "h1", 5000, 500, tricky, 0 },
            { r [1], "h1", 5001, 500, "again", 0 },         //  a repeat: once
            { r [3], "h1", 5000, 200, NULL, 0 },            //  sent to h2
            { 987654321, "h1", 5000, 200, NULL, 0 },        //  no such row
            { r [0], "h1", 5000, 200, "ok", 4242 }          //  unsent: accepted at 4242
        };
        int done [6] = { -9, -9, -9, -9, -9, -9 };
        XXL_CHECK (xxl_store_log_handle_done_many (store, items, 6, done) == 0);
        XXL_CHECK (done [0] == 0 && done [1] == 0 && done [2] == 1 && done [3] == 1
                && done [4] == 1 && done [5] == 0);
        if (in_txn)
            XXL_CHECK (xxl_store_commit (store) == 0);
        XXL_CHECK (xxl_store_log_load (store, r [1], &loaded) == 0);
        XXL_CHECK (loaded.handle_code == 200 && loaded.handle_time == 5000);
        XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT handle_msg IS NULL FROM xxl_job_log"
                                    " WHERE id = ?1", "i", r [1]) == 1);
        xxl_log_free (&loaded);
        XXL_CHECK (xxl_store_log_load (store, r [2], &loaded) == 0);
        XXL_CHECK (loaded.handle_code == 500 && streq (loaded.handle_msg, tricky));
        xxl_log_free (&loaded);
        XXL_CHECK (xxl_store_log_load (store, r [3], &loaded) == 0);
        XXL_CHECK (loaded.handle_code == 0);
        xxl_log_free (&loaded);
        XXL_CHECK (xxl_store_log_load (store, r [0], &loaded) == 0);
        XXL_CHECK (loaded.handle_code == 200 && loaded.trigger_code == 200
                && loaded.trigger_time == 4242 && streq (loaded.handle_msg, "ok"));
        xxl_log_free (&loaded);
        //  Finished rows change no more; the one sent to h2 takes h2's
        xxl_store_done_t later [] = {
            { r [1], "h1", 6000, 500, "late", 0 }, { r [3], "h2", 6000, 200, NULL, 0 }
        };
        XXL_CHECK (xxl_store_log_handle_done_many (store, later, 2, done) == 0);
        XXL_CHECK (done [0] == 1 && done [1] == 0);
        XXL_CHECK (xxl_store_log_handle_done_many (store, later, 0, done) == 0);
    }
}

//  The planner's own fires (planned_new): written with the transaction,
//  its planned time kept; a clash loses the transaction (SQLite writes
//  them later) or refuses the row (PostgreSQL, at once), the row that
//  holds the instant left as it was; then, for a while, a clash refuses
//  only its own row, and the transaction goes on to commit its others
static void
s_test_planned_new (xxl_store_t *store, int64_t gid)
{
    const int64_t job = 880188, base = 7000000000000;
    xxl_log_t log = { .job_group = gid, .job_id = job, .executor_handler = "h",
                      .trigger_time = base, .trigger_type = "CRON", .planned_new = true };
    XXL_CHECK (xxl_store_begin (store) == 0);
    int64_t first = xxl_store_log_next_id (store);
    for (int i = 0; i < 40; i++) {
        log.id = first + i;
        log.schedule_time = base + i * 1000;
        XXL_CHECK (xxl_store_log_add (store, &log) == 0);
    }
    //  (a read in the transaction sees them)
    XXL_CHECK (xxl_store_log_plan_time (store, first + 39) == base + 39000);
    XXL_CHECK (xxl_store_commit (store) == 0);
    XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = ?1"
                                " AND schedule_time = ?2 + (id - ?3) * 1000", "iii",
                                job, base, first) == 40);
    //  A clash: the add or the commit fails, nothing of it stays
    XXL_CHECK (xxl_store_begin (store) == 0);
    log.id = xxl_store_log_next_id (store);
    log.schedule_time = base + 100000;
    XXL_CHECK (xxl_store_log_add (store, &log) == 0);
    int64_t lost = log.id;
    log.id++;
    log.schedule_time = base;
    log.trigger_time = base + 1;
    int add = xxl_store_log_add (store, &log);
    int commit = xxl_store_commit (store);
    XXL_CHECK (add == -1 || commit == -1);
    xxl_log_t loaded;
    XXL_CHECK (xxl_store_log_load (store, first, &loaded) == 0 && loaded.trigger_time == base);
    xxl_log_free (&loaded);
    if (commit == -1)
        XXL_CHECK (xxl_store_log_load (store, lost, &loaded) == 1);
    //  Then a clash refuses its own row at once, and the rest commits
    XXL_CHECK (xxl_store_begin (store) == 0);
    log.id = xxl_store_log_next_id (store);
    log.schedule_time = base + 1000;
    XXL_CHECK (xxl_store_log_add (store, &log) == -1);
    log.id++;
    log.schedule_time = base + 200000;
    XXL_CHECK (xxl_store_log_add (store, &log) == 0);
    XXL_CHECK (xxl_store_commit (store) == 0);
    XXL_CHECK (xxl_store_log_load (store, log.id, &loaded) == 0
            && loaded.schedule_time == base + 200000);
    xxl_log_free (&loaded);
    XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = ?1",
                                "i", job) == 41 + (commit == -1? 0: 1));
}

//  backfill_made_times: of the instants asked, those the job has a planned
//  row at (any shard; an instant with two shards' rows once), ascending;
//  another job's rows and unplanned rows at the same instants do not
//  count.  Thousands of instants in one call (one statement) answer the
//  same as a few: every third made, each of them, in order
static void
s_test_made_times (xxl_store_t *store, int64_t gid)
{
    const int64_t job = 880088, other = 880089, many = 880090;
    const int64_t at [] = { 1000000, 2000000, 3000000, 4000000, 5000000 };
    struct { int64_t job, schedule; const char *shard; } rows [] = {
        { job, at [0], NULL }, { job, at [2], "1/2" }, { other, at [1], NULL },
        { job, 0, NULL }, { other, at [3], NULL }, { job, at [4], "0/2" },
        { job, at [4], "1/2" }
    };
    enum { MANY = 3000 };
    XXL_CHECK (xxl_store_begin (store) == 0);
    for (size_t i = 0; i < sizeof rows / sizeof rows [0]; i++) {
        xxl_log_t log = { .job_group = gid, .job_id = rows [i].job, .executor_handler = "h",
                          .executor_sharding_param = (char *) rows [i].shard,
                          .trigger_time = at [3], .trigger_type = "CRON",
                          .schedule_time = rows [i].schedule };
        XXL_CHECK (xxl_store_log_add (store, &log) == 0);
    }
    int64_t *asked = (int64_t *) zmalloc (MANY * 2 * sizeof (int64_t));
    int64_t *had = asked + MANY;
    for (int64_t k = 0; k < MANY; k++) {
        asked [k] = 1700000000000 + k * 1000;
        xxl_log_t log = { .job_group = gid, .job_id = k % 3? other: many,
                          .executor_handler = "h", .trigger_time = at [3],
                          .trigger_type = "BACKFILL", .schedule_time = asked [k] };
        XXL_CHECK (xxl_store_log_add (store, &log) == 0);
    }
    XXL_CHECK (xxl_store_commit (store) == 0);
    int64_t made [5];
    size_t count = 99;
    XXL_CHECK (xxl_store_backfill_made_times (store, job, at, 5, made, &count) == 0);
    XXL_CHECK (count == 3 && made [0] == at [0] && made [1] == at [2] && made [2] == at [4]);
    XXL_CHECK (xxl_store_backfill_made_times (store, other, at + 1, 3, made, &count) == 0);
    XXL_CHECK (count == 2 && made [0] == at [1] && made [1] == at [3]);
    XXL_CHECK (xxl_store_backfill_made_times (store, job, at + 3, 1, made, &count) == 0);
    XXL_CHECK (count == 0);
    XXL_CHECK (xxl_store_backfill_made_times (store, job, at, 0, made, &count) == 0);
    XXL_CHECK (count == 0);
    XXL_CHECK (xxl_store_backfill_made_times (store, many, asked, MANY, had, &count) == 0);
    XXL_CHECK (count == MANY / 3);
    bool each = count == MANY / 3;
    for (size_t i = 0; each && i < count; i++)
        each = had [i] == asked [3 * i];
    XXL_CHECK (each);
    XXL_CHECK (xxl_store_backfill_made_times (store, other, asked, MANY, had, &count) == 0);
    XXL_CHECK (count == MANY - MANY / 3 && had [0] == asked [1] && had [1] == asked [2]
               && had [count - 1] == asked [MANY - 1]);
    free (asked);
}

//  One job's rows spread over blocks of 2^16 ids, with an empty block
//  between and another job's rows beside them (SQLite reads a job's rows
//  block by block): the log list by job and its pages, the rank, the late
//  unsent row, a clear by time, the oldest removed first, then the rest;
//  the other job's rows stay
static void
s_test_job_rows (xxl_store_t *store, int64_t gid)
{
    const int64_t job = 660066, other = 660067;
    int64_t top = XXL_TEST_SCALAR (store, "SELECT COALESCE (MAX (id), 0) FROM xxl_job_log", NULL);
    int64_t base = ((top >> 16) + 2) << 16;
    //  (ids, oldest first: the job's in blocks 0, 1 and 3 from base's)
    struct { int64_t id, job, code, planned; } rows [] = {
        { base + 3, job, 200, 0 }, { base + 4, other, 200, 0 },
        { base + 7, job, 0, 50 },                               //  late, unsent
        { base + 65536 + 10, job, 200, 0 }, { base + 65536 + 11, other, 200, 0 },
        { base + 3 * 65536 + 5, job, 200, 0 },
        { base + 3 * 65536 + 6, job, 0, 60 },                   //  late, unsent
        { base + 3 * 65536 + 9, other, 0, 70 },
    };
    const size_t count = sizeof rows / sizeof rows [0];
    for (size_t i = 0; i < count; i++) {
        XXL_CHECK (XXL_TEST_EXEC (store, "INSERT INTO xxl_job_log (id, job_group, job_id,"
                                  " trigger_time, trigger_code, handle_code, schedule_time,"
                                  " trigger_type) VALUES (?, ?, ?, ?, ?, ?, ?, 'CRON')",
                                  "iiiiiii", rows [i].id, gid, rows [i].job, rows [i].id,
                                  rows [i].code, rows [i].code, rows [i].planned) == 1);
        if (rows [i].planned == 0)
            XXL_CHECK (XXL_TEST_EXEC (store, "UPDATE xxl_job_log SET schedule_time = NULL"
                                      " WHERE id = ?", "i", rows [i].id) == 1);
    }
    //  The job's rows, newest first: by rank and by page
    const int64_t mine [] = { base + 3 * 65536 + 6, base + 3 * 65536 + 5, base + 65536 + 10,
                              base + 7, base + 3 };
    for (int64_t rank = 0; rank < 5; rank++)
        XXL_CHECK (xxl_store_log_id_at_rank (store, job, rank) == mine [rank]);
    XXL_CHECK (xxl_store_log_id_at_rank (store, job, 5) == -1);
    xxl_store_log_filter_t lf = { .job_id = job, .to = INT64_MAX, .max_id = INT64_MAX,
                                  .now = INT64_MAX, .limit = 2 };
    int64_t ids [8];
    XXL_CHECK (s_page_ids (store, NULL, &lf, ids, 8) == 2);
    XXL_CHECK (ids [0] == mine [0] && ids [1] == mine [1]);
    lf.offset = 2;
    XXL_CHECK (s_page_ids (store, NULL, &lf, ids, 8) == 2);
    XXL_CHECK (ids [0] == mine [2] && ids [1] == mine [3]);
    lf.offset = 4;
    XXL_CHECK (s_page_ids (store, NULL, &lf, ids, 8) == 1 && ids [0] == mine [4]);
    lf = (xxl_store_log_filter_t) { .job_id = job, .to = INT64_MAX, .max_id = mine [1] - 1,
                                    .now = INT64_MAX, .limit = 10 };
    XXL_CHECK (s_page_ids (store, NULL, &lf, ids, 8) == 3 && ids [0] == mine [2]);
    //  The job's newest late unsent row
    XXL_CHECK (xxl_store_recover_late_last (store, job, 1000) == mine [0]);
    XXL_CHECK (xxl_store_recover_late_last (store, job, 55) == base + 7);
    XXL_CHECK (xxl_store_recover_late_last (store, job, 50) == 0);        //  (none)
    //  Its finished rows triggered before a time cleared (LOG_CLEAR of a
    //  job), not the unsent one; then its oldest two removed, then the
    //  rest; the other job's stay
    XXL_CHECK (xxl_store_log_delete (store, job, base + 65536 + 11, INT64_MAX, 10) == 2);
    XXL_CHECK (xxl_store_log_id_at_rank (store, job, 2) == base + 7);
    XXL_CHECK (xxl_store_log_id_at_rank (store, job, 3) == -1);
    XXL_CHECK (xxl_store_job_rm_logs_some (store, job, 2) == 2);
    XXL_CHECK (xxl_store_log_id_at_rank (store, job, 0) == mine [0]);
    XXL_CHECK (xxl_store_log_id_at_rank (store, job, 1) == -1);
    XXL_CHECK (xxl_store_job_rm_logs (store, job) == 1);
    XXL_CHECK (xxl_store_log_id_at_rank (store, job, 0) == -1);
    XXL_CHECK (xxl_store_log_id_at_rank (store, other, 0) == base + 3 * 65536 + 9);
    XXL_CHECK (xxl_store_job_rm_logs (store, other) == 3);

    //  A job's unsent rows (its late ones, its plans) are searched in the
    //  blocks of the log's unsent rows only: its late rows at both ends
    //  of them (the lowest unsent row of the log, the highest), a finished
    //  row between, an empty block on each side of it.  (In a transaction
    //  rolled back, where the earlier tests' unsent rows look failed.)
    const int64_t third = 660068;
    const int64_t low = base + 5 * 65536 + 3, done = base + 7 * 65536 + 4,
                  high = base + 9 * 65536 + 5;
    XXL_CHECK (xxl_store_begin (store) == 0);
    XXL_CHECK (XXL_TEST_EXEC (store, "UPDATE xxl_job_log SET trigger_code = 500"
                              " WHERE trigger_code = 0", NULL) >= 0);
    XXL_CHECK (XXL_TEST_EXEC (store, "INSERT INTO xxl_job_log (id, job_group, job_id,"
                              " trigger_time, trigger_code, handle_code, schedule_time,"
                              " trigger_type) VALUES (?, ?, ?, ?, 0, 0, 40, 'CRON'),"
                              " (?, ?, ?, ?, 200, 200, NULL, 'CRON'),"
                              " (?, ?, ?, ?, 0, 0, 80, 'CRON')", "iiiiiiiiiiii",
                              low, gid, third, low, done, gid, third, done,
                              high, gid, third, high) == 3);
    XXL_CHECK (xxl_store_recover_late_last (store, third, 1000) == high);
    XXL_CHECK (xxl_store_recover_late_last (store, third, 60) == low);
    XXL_CHECK (xxl_store_recover_late_last (store, third, 30) == 0);
    XXL_CHECK (xxl_store_recover_drop_late (store, third, 1000, high) == 1);
    XXL_CHECK (xxl_store_log_id_at_rank (store, third, 1) == done);
    XXL_CHECK (xxl_store_log_id_at_rank (store, third, 2) == -1);
    XXL_CHECK (xxl_store_job_drop_plans (store, third, 0) == 1);
    XXL_CHECK (xxl_store_log_id_at_rank (store, third, 0) == done);
    XXL_CHECK (xxl_store_recover_late_last (store, third, 1000) == 0);
    XXL_CHECK (xxl_store_job_rm_logs (store, third) == 1);
    XXL_CHECK (xxl_store_rollback (store) == 0);
    XXL_CHECK (xxl_store_log_id_at_rank (store, third, 0) == -1);
}

//  SQLite's plans of the dialect's statements that read xxl_job_log: none
//  walks the whole table or a whole index of it (each row or entry of a
//  log that grows by every run), only the partial indexes of the rows in
//  some state (unsent, running, failed, with a slot), which stay small.
//  The recovery of late jobs used to walk xxl_job_log_schedule whole (the
//  GROUP BY's order), and would walk the index by job now that the planned
//  instants' index leads with the instant.  A job's rows are read through
//  its entries of each block of ids (xxl_job_log_job_block), in its order
static void
s_test_log_plans (xxl_store_t *store, const char *path)
{
    static const char *partial [] = {
        "xxl_job_log_unsent", "xxl_job_log_running", "xxl_job_log_failed",
        "xxl_job_log_fails", "xxl_job_log_slots"
    };
    sqlite3 *db = NULL;
    XXL_CHECK (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    const xxl_store_driver_t *driver = ((xxl_store_sql_t *) store)->driver;
    int read = 0, walks = 0;
    for (int i = 0; i < XXL_SQL_STATEMENTS; i++) {
        if (!strstr (driver->sql [i], "xxl_job_log"))
            continue;
        char *sql = zsys_sprintf ("EXPLAIN QUERY PLAN %s", driver->sql [i]);
        sqlite3_stmt *stmt = NULL;
        XXL_CHECK (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL) == SQLITE_OK);
        //  (recovery's late jobs: one walk of the unsent rows, not of
        //  every job's history; one job's unsent rows: a search of that
        //  job's rows, not a walk of every job's unsent rows per job)
        bool by_unsent = i == XXL_SQL_RECOVER_LATE_JOBS || i == XXL_SQL_RECOVER_LATE_JOBS_IN;
        bool by_job = i == XXL_SQL_RECOVER_LATE_LAST || i == XXL_SQL_RECOVER_DROP_LATE
                   || i == XXL_SQL_JOB_DROP_PLANS || i == XXL_SQL_LOG_LIST_JOB
                   || i == XXL_SQL_LOG_ID_AT_RANK_JOB || i == XXL_SQL_JOB_RM_LOGS
                   || i == XXL_SQL_JOB_RM_LOGS_SOME || i == XXL_SQL_LOG_DELETE_JOB;
        //  (one job's unsent rows: in the blocks between the unsent rows'
        //  lowest and highest id only, two searches of the unsent rows'
        //  index for its ends, not every block of the log's history)
        bool by_job_unsent = i == XXL_SQL_RECOVER_LATE_LAST || i == XXL_SQL_RECOVER_DROP_LATE
                          || i == XXL_SQL_JOB_DROP_PLANS;
        //  (a backfill's made instants: each one search of the planned
        //  instants' index by instant and job, not a walk of the job's rows)
        bool by_instant = i == XXL_SQL_BACKFILL_MADE_TIMES;
        int unsent = 0, job = 0, ends = 0, instant = 0;
        while (stmt && sqlite3_step (stmt) == SQLITE_ROW) {
            const char *detail = (const char *) sqlite3_column_text (stmt, 3);
            if (detail && by_instant && strstr (detail, "SEARCH xxl_job_log USING COVERING"
                                                " INDEX xxl_job_log_schedule (schedule_time=? AND job_id=?)"))
                instant++;
            if (detail && by_unsent && strstr (detail, "xxl_job_log_job_block"))
                walks++;
            if (detail && strstr (detail, "INDEX xxl_job_log_unsent"))
                unsent++;
            if (detail && (streq (detail, "SEARCH xxl_job_log USING INDEX xxl_job_log_unsent")
                        || streq (detail, "SEARCH xxl_job_log USING COVERING INDEX xxl_job_log_unsent")))
                ends++;
            //  (a job's rows: its entries of each block, in the index's
            //  order, not a sort of them all)
            if (detail && strncmp (detail, "SEARCH xxl_job_log ", 19) == 0
            &&  strstr (detail, "INDEX xxl_job_log_job_block (<expr>=? AND job_id=?"))
                job++;
            if (detail && by_job && strstr (detail, "TEMP B-TREE")) {
                walks++;
                printf ("# statement %d sorts a job's rows: %s\n", i, detail);
            }
            //  (the alarms claimed at start: through the failed rows, not a
            //  walk of every row above `after` by rowid)
            if (detail && i == XXL_SQL_LOG_CLAIMED_IDS && !strstr (detail, "xxl_job_log_fails")) {
                walks++;
                printf ("# the claimed alarms' read walks the log: %s\n", detail);
            }
            if (!detail || strncmp (detail, "SCAN ", 5) || !strstr (detail, "xxl_job_log")
            ||  strstr (detail, "xxl_job_log_report") || strstr (detail, "xxl_job_logglue"))
                continue;
            bool small = false;
            for (size_t k = 0; k < sizeof partial / sizeof partial [0]; k++) {
                char through [80];
                snprintf (through, sizeof through, "INDEX %s", partial [k]);
                const char *at = strstr (detail, through);
                small |= at && (at [strlen (through)] == 0 || at [strlen (through)] == ' ');
            }
            read++;
            //  (every job's rank: a walk down the table from its newest
            //  row that OFFSET ends, at most 100,000 rows: docs/protocol.md)
            small |= i == XXL_SQL_LOG_ID_AT_RANK && streq (detail, "SCAN xxl_job_log");
            if (!small) {
                walks++;
                printf ("# statement %d walks the log: %s\n", i, detail);
            }
        }
        sqlite3_finalize (stmt);
        zstr_free (&sql);
        if (by_instant && instant != 1) {
            walks++;
            printf ("# the made instants are not read by the planned instants' index: %s\n",
                    driver->sql [i]);
        }
        if ((by_unsent && !unsent)
        ||  (by_job && (!job || unsent != (by_job_unsent? 2: 0) || ends != unsent))) {
            walks++;
            printf ("# statement %d reads %s: %s\n", i,
                    by_job_unsent? "a job's unsent rows not by its entries in the unsent rows' blocks"
                  : by_job? "a job's rows not by its entries": "the unsent rows not by their index",
                    driver->sql [i]);
        }
    }
    //  The two indexes a turn's fires share pages of, by their leading
    //  columns: the planned instant, then the job; the block of ids, then
    //  the job, then the id
    sqlite3_stmt *stmt = NULL;
    XXL_CHECK (sqlite3_prepare_v2 (db, "SELECT group_concat (COALESCE (name, cid), ',')"
                                   " FROM (SELECT name, cid FROM pragma_index_info (?1)"
                                   " ORDER BY seqno)", -1, &stmt, NULL) == SQLITE_OK);
    const char *orders [][2] = {
        { "xxl_job_log_schedule", "schedule_time,job_id,-2" },
        { "xxl_job_log_job_block", "-2,job_id,id" }
    };
    for (size_t i = 0; i < 2; i++) {
        sqlite3_bind_text (stmt, 1, orders [i][0], -1, SQLITE_STATIC);
        XXL_CHECK (sqlite3_step (stmt) == SQLITE_ROW);
        const char *columns = (const char *) sqlite3_column_text (stmt, 0);
        if (!columns || strcmp (columns, orders [i][1]))
            printf ("# %s: columns %s\n", orders [i][0], columns? columns: "(none)");
        XXL_CHECK (columns && streq (columns, orders [i][1]));
        sqlite3_reset (stmt);
    }
    sqlite3_finalize (stmt);
    sqlite3_close (db);
    printf ("# %d scan(s) of xxl_job_log through its partial indexes\n", read - walks);
    XXL_CHECK (read > 0);                //  (the rule is exercised: some do scan those)
    XXL_CHECK (walks == 0);
}

//  Workflows (version 12): a workflow's row and schedule, its runs, and
//  the log rows of its nodes, whose (run, node, attempt) is unique: a
//  node's row is its one start
//  A job's maxRunning slots (log_slot_ids): its admitted rows with no
//  result, by id, and its waiting ones due, oldest first; on SQLite the
//  plans read the unsent and running partial indexes only (no index by
//  job holds the rows with no result: a plan through the job's blocks
//  would walk the job's whole history)
static void
s_test_slots (xxl_store_t *store, const char *path, const xxl_job_t *template)
{
    const int64_t job = 880088;
    const char *add = "INSERT INTO xxl_job_log (job_group, job_id, executor_address,"
                      " trigger_time, trigger_code, handle_code, schedule_time, slot)"
                      " VALUES (1, ?, ?, ?, ?, ?, ?, ?)";
    struct { int64_t job; const char *address; int64_t time, trigger, handle, planned, slot; }
    rows [] = {
        { job, "a", 10, 0, 0, 0, 1 },       //  0 admitted, not yet acknowledged
        { job, "a", 20, 200, 0, 0, 1 },     //  1 running
        { job, "a", 30, 200, 200, 0, 1 },   //  2 done
        { job, NULL, 900, 0, 0, 100, 1 },   //  3 waiting, planned at 100
        { job, NULL, 50, 0, 0, 0, 1 },      //  4 waiting since 50
        { job, NULL, 60, 0, 0, 5000, 1 },   //  5 planned later: not due
        { job, "a", 70, 500, 0, 0, 1 },     //  6 failed at trigger
        { job, NULL, 80, 200, 0, 0, 1 },    //  7 no address: not admitted
        { job, "a", 85, 0, 500, 0, 1 },     //  8 finished unsent
        { job + 1, "a", 90, 200, 0, 0, 0 }, //  9 another job's (no limit)
        { job + 1, NULL, 95, 0, 0, 0, 0 },  //  10 another job's
        { job, "b", 99, 200, 0, 0, 1 },     //  11 running
        { job, "c", 98, 200, 0, 0, 0 },     //  12 running, from before the limit
    };
    int64_t id [13];
    for (size_t i = 0; i < 13; i++) {
        XXL_CHECK (XXL_TEST_EXEC (store, add, "isiiiii", rows [i].job, rows [i].address,
                                  rows [i].time, rows [i].trigger, rows [i].handle,
                                  rows [i].planned, rows [i].slot) == 1);
        if (rows [i].planned == 0)
            XXL_CHECK (XXL_TEST_EXEC (store, "UPDATE xxl_job_log SET schedule_time = NULL"
                                      " WHERE id = (SELECT MAX (id) FROM xxl_job_log)", NULL) == 1);
        id [i] = XXL_TEST_SCALAR (store, "SELECT MAX (id) FROM xxl_job_log", NULL);
    }
    int64_t ids [16];
    size_t count = 99;
    XXL_CHECK (xxl_store_log_slot_ids (store, job, 1, 0, ids, 16, &count) == 0);
    XXL_CHECK (count == 3 && ids [0] == id [0] && ids [1] == id [1] && ids [2] == id [11]);
    XXL_CHECK (xxl_store_log_slot_ids (store, job, 1, 0, ids, 2, &count) == 0);
    XXL_CHECK (count == 2 && ids [0] == id [0] && ids [1] == id [1]);
    XXL_CHECK (xxl_store_log_slot_ids (store, job, 0, 1000, ids, 16, &count) == 0);
    XXL_CHECK (count == 2 && ids [0] == id [4] && ids [1] == id [3]);
    XXL_CHECK (xxl_store_log_slot_ids (store, job, 0, 99, ids, 16, &count) == 0);
    XXL_CHECK (count == 1 && ids [0] == id [4]);
    XXL_CHECK (xxl_store_log_slot_ids (store, job, 0, 9000, ids, 16, &count) == 0);
    XXL_CHECK (count == 3 && ids [2] == id [5]);
    //  A trigger's row (no planned time) is due whatever the clock: one
    //  made before a step back carries a time past the stepped clock; a
    //  retry's waits for its time (its due time, written ahead)
    XXL_CHECK (xxl_store_log_slot_ids (store, job, 0, 10, ids, 16, &count) == 0);
    XXL_CHECK (count == 1 && ids [0] == id [4]);
    XXL_CHECK (XXL_TEST_EXEC (store, add, "isiiiii", job, NULL, (int64_t) 500, (int64_t) 0,
                              (int64_t) 0, (int64_t) 0, (int64_t) 1) == 1);
    int64_t retry = XXL_TEST_SCALAR (store, "SELECT MAX (id) FROM xxl_job_log", NULL);
    XXL_CHECK (XXL_TEST_EXEC (store, "UPDATE xxl_job_log SET schedule_time = NULL,"
                              " trigger_type = 'RETRY' WHERE id = ?", "i", retry) == 1);
    XXL_CHECK (xxl_store_log_slot_ids (store, job, 0, 10, ids, 16, &count) == 0);
    XXL_CHECK (count == 1 && ids [0] == id [4]);
    XXL_CHECK (xxl_store_log_slot_ids (store, job, 0, 500, ids, 16, &count) == 0);
    XXL_CHECK (count == 3 && ids [0] == id [4] && ids [1] == id [3] && ids [2] == retry);
    XXL_CHECK (XXL_TEST_EXEC (store, "DELETE FROM xxl_job_log WHERE id = ?", "i", retry) == 1);
    XXL_CHECK (xxl_store_log_slot_ids (store, job + 2, 1, 0, ids, 16, &count) == 0
               && count == 0);
    //  Saved with a limit: its rows from before the limit count from now;
    //  another job's do not
    xxl_job_t limited = *template;
    limited.id = job;
    limited.max_running = 2;
    XXL_CHECK (xxl_store_job_save (store, &limited) == 0);
    XXL_CHECK (xxl_store_log_slot_ids (store, job, 1, 0, ids, 16, &count) == 0);
    XXL_CHECK (count == 4 && ids [2] == id [11] && ids [3] == id [12]);
    XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_job_log WHERE slot = 1"
                                " AND job_id = ?", "i", job + 1) == 0);
    //  A row written with its slot (log_add) counts
    xxl_log_t log = { .job_group = 1, .job_id = job, .executor_address = "d",
                      .executor_handler = "h", .trigger_time = 110, .trigger_type = "MANUAL",
                      .slot = 1 };
    XXL_CHECK (xxl_store_log_add (store, &log) == 0 && log.id > 0);
    XXL_CHECK (xxl_store_log_slot_ids (store, job, 1, 0, ids, 16, &count) == 0);
    XXL_CHECK (count == 5);
    bool listed = false;
    for (size_t i = 0; i < count; i++)
        listed |= ids [i] == log.id;
    XXL_CHECK (listed);
    if (!xxl_test_pg) {
        sqlite3 *db = NULL;
        XXL_CHECK (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
        const xxl_store_driver_t *driver = ((xxl_store_sql_t *) store)->driver;
        xxl_store_stmt_t stmts [] = { XXL_SQL_LOG_SLOT_ADMITTED, XXL_SQL_LOG_SLOT_WAITING };
        for (size_t i = 0; i < 2; i++) {
            char *sql = zsys_sprintf ("EXPLAIN QUERY PLAN %s", driver->sql [stmts [i]]);
            sqlite3_stmt *stmt = NULL;
            XXL_CHECK (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL) == SQLITE_OK);
            int reads = 0, slots = 0;
            while (stmt && sqlite3_step (stmt) == SQLITE_ROW) {
                const char *detail = (const char *) sqlite3_column_text (stmt, 3);
                if (!detail || !strstr (detail, "xxl_job_log"))
                    continue;
                reads++;
                if (strstr (detail, "USING INDEX xxl_job_log_slots (job_id=?)"))
                    slots++;
                printf ("# plan: %s\n", detail);
            }
            sqlite3_finalize (stmt);
            XXL_CHECK (reads == 1 && slots == 1);
            zstr_free (&sql);
        }
        //  (an admission pass lists the jobs with a limit from their index,
        //  not from a walk of every job)
        sqlite3_stmt *stmt = NULL;
        XXL_CHECK (sqlite3_prepare_v2 (db, "EXPLAIN QUERY PLAN SELECT id FROM xxl_job_info"
                                       " WHERE max_running > 0 AND id > 0 ORDER BY id LIMIT 9",
                                       -1, &stmt, NULL) == SQLITE_OK);
        bool limited = false;
        while (stmt && sqlite3_step (stmt) == SQLITE_ROW) {
            const char *detail = (const char *) sqlite3_column_text (stmt, 3);
            printf ("# plan: %s\n", detail? detail: "");
            limited |= detail && strstr (detail, "xxl_job_info_limited");
        }
        sqlite3_finalize (stmt);
        XXL_CHECK (limited);
        //  (nor the engine's question of whether any job has child jobs,
        //  asked once a second)
        XXL_CHECK (sqlite3_prepare_v2 (db, "EXPLAIN QUERY PLAN " XXL_SQL_JOBS_HAVE_CHILDREN,
                                       -1, &stmt, NULL) == SQLITE_OK);
        bool parents = false, walks = false;
        while (stmt && sqlite3_step (stmt) == SQLITE_ROW) {
            const char *detail = (const char *) sqlite3_column_text (stmt, 3);
            printf ("# plan: %s\n", detail? detail: "");
            parents |= detail && strstr (detail, "xxl_job_info_parents");
            walks |= detail && strstr (detail, "SCAN xxl_job_info") && !strstr (detail, "INDEX");
        }
        sqlite3_finalize (stmt);
        XXL_CHECK (parents && !walks);
        sqlite3_close (db);
    }
    XXL_CHECK (XXL_TEST_EXEC (store, "DELETE FROM xxl_job_log WHERE job_id IN (?, ?)", "ii",
                              job, job + 1) == 14);
}

static void
s_test_workflows (xxl_store_t *store, int64_t gid, int64_t jid)
{
    const char *definition = "{\"nodes\":[{\"id\":\"a\",\"job\":7,\"join\":\"all\"}],"
                             "\"edges\":[]}";
    xxl_workflow_t w = { .name = "etl", .description = "nightly", .definition =
                         (char *) definition, .schedule_type = "CRON", .schedule_conf =
                         "0 0 1 * * ?", .timezone = "", .misfire_strategy = "DO_NOTHING",
                         .status = 1, .next_time = 5000, .add_time = 1, .update_time = 1 };
    int64_t wid = xxl_store_workflow_add (store, &w);
    XXL_CHECK (wid > 0);
    w.name = "other";
    w.status = 0;
    w.definition = "{\"nodes\":[{\"id\":\"b\",\"job\":77,\"join\":\"all\"}],\"edges\":[]}";
    int64_t wid2 = xxl_store_workflow_add (store, &w);
    XXL_CHECK (wid2 > wid);
    XXL_CHECK (xxl_store_workflow_count (store) == 2);
    int64_t all [4];
    size_t listed = 0;
    XXL_CHECK (xxl_store_workflow_ids (store, 0, all, 4, &listed) == 0);
    XXL_CHECK (listed == 2 && all [0] == wid && all [1] == wid2);
    XXL_CHECK (xxl_store_workflow_ids (store, wid, all, 4, &listed) == 0);
    XXL_CHECK (listed == 1 && all [0] == wid2);
    xxl_workflow_t loaded;
    XXL_CHECK (xxl_store_workflow_load (store, wid, &loaded) == 0);
    XXL_CHECK (streq (loaded.name, "etl") && streq (loaded.definition, definition)
               && loaded.status == 1 && loaded.next_time == 5000
               && streq (loaded.schedule_conf, "0 0 1 * * ?"));
    free (loaded.description);
    loaded.description = strdup ("changed");
    loaded.update_time = 2;
    XXL_CHECK (xxl_store_workflow_save (store, &loaded) == 0);
    xxl_workflow_free (&loaded);
    XXL_CHECK (xxl_store_workflow_load (store, wid, &loaded) == 0);
    XXL_CHECK (streq (loaded.description, "changed") && loaded.update_time == 2);
    xxl_workflow_free (&loaded);
    XXL_CHECK (xxl_store_workflow_load (store, 999999, &loaded) == 1);
    //  A job's workflows: by the canonical "job":N, (7 is not 77)
    int64_t ids [8];
    size_t count = 0;
    XXL_CHECK (xxl_store_workflow_using_job (store, 7, ids, 8, &count) == 0);
    XXL_CHECK (count == 1 && ids [0] == wid);
    XXL_CHECK (xxl_store_workflow_using_job (store, 77, ids, 8, &count) == 0);
    XXL_CHECK (count == 1 && ids [0] == wid2);
    //  Due: started only, in the shares asked, next time reached
    uint64_t mask = (uint64_t) 1 << (wid % XXL_STORE_SHARES);
    XXL_CHECK (xxl_store_workflow_due (store, mask, 4999, ids, 8, &count) == 0 && count == 0);
    XXL_CHECK (xxl_store_workflow_due (store, mask, 5000, ids, 8, &count) == 0);
    XXL_CHECK (count == 1 && ids [0] == wid);
    XXL_CHECK (xxl_store_workflow_due (store, XXL_STORE_SHARES_ALL & ~mask, 9999, ids, 8,
                                       &count) == 0 && count == 0);
    XXL_CHECK (xxl_store_workflow_set_next (store, wid, 9000) == 0);
    XXL_CHECK (xxl_store_workflow_due (store, XXL_STORE_SHARES_ALL, 5000, ids, 8, &count) == 0
               && count == 0);
    //  Lists
    xxl_enc_t *enc = xxl_enc_new ();
    int truncated = -1;
    XXL_CHECK (xxl_store_workflow_encode_page (store, enc, 1 << 20, &truncated, 10, 0) == 2);
    xxl_enc_reset (enc);
    XXL_CHECK (xxl_store_workflow_encode (store, enc, wid) == 1);
    xxl_enc_reset (enc);
    XXL_CHECK (xxl_store_workflow_encode (store, enc, 999999) == 0);
    xxl_enc_reset (enc);

    //  Runs
    XXL_CHECK (xxl_store_workflow_runs_running (store) == 0);
    xxl_workflow_run_t run = { .workflow_id = wid, .status = "RUNNING", .param = "p",
                               .definition = (char *) definition, .trigger_type = "MANUAL",
                               .trigger_time = 100 };
    int64_t rid = xxl_store_workflow_run_add (store, &run);
    XXL_CHECK (rid > 0);
    XXL_CHECK (xxl_store_workflow_runs_running (store) == 1);
    xxl_workflow_run_t got;
    XXL_CHECK (xxl_store_workflow_run_load (store, rid, &got) == 0);
    XXL_CHECK (got.workflow_id == wid && streq (got.status, "RUNNING") && streq (got.param, "p")
               && streq (got.definition, definition) && streq (got.killed, "")
               && got.trigger_time == 100 && got.end_time == 0);
    xxl_workflow_run_free (&got);
    XXL_CHECK (xxl_store_workflow_run_ids (store, mask, 0, ids, 8, &count) == 0);
    XXL_CHECK (count == 1 && ids [0] == rid);
    XXL_CHECK (xxl_store_workflow_run_ids (store, mask, rid, ids, 8, &count) == 0 && count == 0);
    XXL_CHECK (xxl_store_workflow_run_ids (store, XXL_STORE_SHARES_ALL & ~mask, 0, ids, 8,
                                           &count) == 0 && count == 0);
    //  Its nodes' rows: a start is a row marked once per attempt
    xxl_workflow_row_t *rows = NULL;
    XXL_CHECK (xxl_store_workflow_run_rows (store, rid, &rows, &count) == 0);
    XXL_CHECK (count == 0 && rows == NULL);
    XXL_CHECK (xxl_store_begin (store) == 0);
    xxl_log_t log = { .job_group = gid, .job_id = jid, .executor_handler = "h",
                      .trigger_time = 100, .trigger_type = "WORKFLOW" };
    XXL_CHECK (xxl_store_log_add (store, &log) == 0);
    int64_t first = log.id;
    XXL_CHECK (xxl_store_log_flow_mark (store, first, rid, "a", 1) == 0);
    XXL_CHECK (xxl_store_commit (store) == 0);
    XXL_CHECK (xxl_store_log_flow_run (store, first) == rid);
    XXL_CHECK (xxl_store_log_flow_run (store, 999999999) == 0);
    //  A second start of the same attempt fails, and so does its transaction
    XXL_CHECK (xxl_store_begin (store) == 0);
    log.id = 0;
    XXL_CHECK (xxl_store_log_add (store, &log) == 0);
    int64_t twice = log.id;
    XXL_CHECK (xxl_store_log_flow_mark (store, twice, rid, "a", 1) == -1);
    XXL_CHECK (xxl_store_commit (store) == -1 || xxl_store_in_txn (store) == 0);
    if (xxl_store_in_txn (store))
        xxl_store_rollback (store);
    XXL_CHECK (xxl_store_log_flow_run (store, twice) == 0);
    //  A retry is the next attempt
    XXL_CHECK (xxl_store_log_handle_done (store, first, 200, 500, "bad") == 0);
    XXL_CHECK (xxl_store_begin (store) == 0);
    log.id = 0;
    XXL_CHECK (xxl_store_log_add (store, &log) == 0);
    int64_t second = log.id;
    XXL_CHECK (xxl_store_log_flow_mark (store, second, rid, "a", 2) == 0);
    XXL_CHECK (xxl_store_log_handle_done (store, second, 300, 200, "fine") == 0);
    XXL_CHECK (xxl_store_commit (store) == 0);
    XXL_CHECK (xxl_store_workflow_run_rows (store, rid, &rows, &count) == 0);
    XXL_CHECK (count == 2 && rows);
    if (count == 2) {
        XXL_CHECK (rows [0].log_id == first && streq (rows [0].node, "a")
                   && rows [0].attempt == 1 && rows [0].handle_code == 500
                   && streq (rows [0].handle_msg, "bad"));
        XXL_CHECK (rows [1].log_id == second && rows [1].attempt == 2
                   && rows [1].handle_code == 200 && streq (rows [1].handle_msg, "fine"));
    }
    xxl_workflow_rows_free (&rows, count);
    //  The log row says its run and node
    XXL_CHECK (xxl_store_log_encode (store, enc, second) == 1);
    size_t size;
    const void *data = xxl_enc_finish (enc, &size);
    XXL_CHECK (memmem (data, size, "flowRunId", 9) && memmem (data, size, "flowNode", 8));
    xxl_enc_reset (enc);
    //  The run ends; its page
    XXL_CHECK (xxl_store_workflow_run_set (store, rid, "KILLED", 400, "a") == 1);
    XXL_CHECK (xxl_store_workflow_run_set (store, rid, "SUCCESS", 500, NULL) == 1);
    XXL_CHECK (xxl_store_workflow_run_load (store, rid, &got) == 0);
    XXL_CHECK (streq (got.status, "SUCCESS") && got.end_time == 500 && streq (got.killed, "a"));
    xxl_workflow_run_free (&got);
    XXL_CHECK (xxl_store_workflow_runs_running (store) == 0);
    XXL_CHECK (xxl_store_workflow_run_ids (store, mask, 0, ids, 8, &count) == 0 && count == 0);
    XXL_CHECK (xxl_store_workflow_run_encode_page (store, enc, 1 << 20, &truncated, wid, 10) == 1);
    xxl_enc_reset (enc);
    XXL_CHECK (xxl_store_workflow_run_encode_page (store, enc, 1 << 20, &truncated, wid2, 10) == 0);
    xxl_enc_reset (enc);
    XXL_CHECK (xxl_store_workflow_run_encode (store, enc, rid) == 1);
    xxl_enc_destroy (&enc);
    //  Removed: the workflow and its runs, not the log rows
    XXL_CHECK (xxl_store_workflow_rm (store, wid) == 1);
    XXL_CHECK (xxl_store_workflow_rm (store, wid) == 0);
    XXL_CHECK (xxl_store_workflow_run_load (store, rid, &got) == 1);
    XXL_CHECK (xxl_store_log_flow_run (store, second) == rid);
    XXL_CHECK (xxl_store_workflow_rm (store, wid2) == 1);
    XXL_TEST_EXEC (store, "DELETE FROM xxl_job_log WHERE flow_run_id IS NOT NULL", NULL);
}

//  A page of WORKFLOW_RUNS or BACKFILL_LIST (a store's *_encode_below)
typedef int (s_below_fn) (xxl_store_t *store, xxl_enc_t *enc, size_t max_size, int *truncated,
                          int64_t owner, int64_t before, int64_t limit);

//  The page's rows' ids into ids (up to max) and their owner (key
//  owner_key) into owners; the count, or -1
static int
s_below_page (xxl_store_t *store, s_below_fn *below, const char *key, const char *owner_key,
              int64_t owner, int64_t before, int64_t limit, size_t max_size, int *truncated,
              int64_t *ids, int64_t *owners, size_t max)
{
    xxl_enc_t *enc = s_reply_page (key);
    int rows = below (store, enc, max_size, truncated, owner, before, limit);
    xxl_enc_map_end (enc);
    size_t size;
    const void *data = xxl_enc_finish (enc, &size);
    char why [256];
    xxl_msg_t *msg = rows < 0? NULL: xxl_msg_decode (data, size, NULL, why, sizeof why);
    xxl_enc_destroy (&enc);
    size_t count = 0;
    const msgpack_object *items = msg? xxl_msg_array (msg, NULL, key, 1, 1000, &count): NULL;
    if (!items && rows != 0)
        count = SIZE_MAX;
    for (size_t i = 0; items && i < count && i < max; i++) {
        ids [i] = xxl_msg_int (msg, &items [i], "id", 1, 1, INT64_MAX, 0);
        owners [i] = xxl_msg_int (msg, &items [i], owner_key, 1, 1, INT64_MAX, 0);
    }
    xxl_msg_destroy (&msg);
    return count <= max && (int) count == rows? rows: -1;
}

//  Every row of owner (0: any) read page by page, `before` the last id
//  listed: want (its n ids, ascending) each once, newest first, pages of
//  `limit` full but the last, truncated never set; true when so
static bool
s_below_all (xxl_store_t *store, s_below_fn *below, const char *key, const char *owner_key,
             int64_t owner, int64_t limit, const int64_t *want, size_t n)
{
    int64_t ids [1000], owners [1000];
    int64_t before = INT64_MAX;
    size_t seen = 0, pages = 0;
    while (true) {
        int truncated = -1;
        int rows = s_below_page (store, below, key, owner_key, owner, before, limit, 1 << 20,
                                 &truncated, ids, owners, 1000);
        if (rows < 0 || truncated != 0)
            return false;
        pages++;
        for (int i = 0; i < rows; i++) {
            //  newest first, across pages: the rows of want from the top
            if (seen >= n || ids [i] != want [n - 1 - seen] || ids [i] >= before
            ||  (owner && owners [i] != owner))
                return false;
            seen++;
        }
        if (rows < limit)
            break;
        before = ids [rows - 1];
    }
    return seen == n && pages == n / (size_t) limit + 1;
}

//  SQLite's plan of a page (its $N as ?N): a search of the table through
//  `index` (a walk down from `before`), no scan, no sort
static bool
s_below_plan (const char *path, const char *sql, const char *table, const char *index)
{
    char text [1024];
    XXL_CHECK (xxl_store_sql_question_marks (sql, text, sizeof text) != NULL);
    char *explain = zsys_sprintf ("EXPLAIN QUERY PLAN %s", text);
    sqlite3 *db = NULL;
    sqlite3_stmt *stmt = NULL;
    XXL_CHECK (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    XXL_CHECK (sqlite3_prepare_v2 (db, explain, -1, &stmt, NULL) == SQLITE_OK);
    int reads = 0, through = 0, others = 0;
    while (stmt && sqlite3_step (stmt) == SQLITE_ROW) {
        const char *detail = (const char *) sqlite3_column_text (stmt, 3);
        printf ("# plan: %s\n", detail? detail: "");
        if (detail && strstr (detail, table)) {
            reads++;
            if (strncmp (detail, "SEARCH ", 7) == 0 && strstr (detail, index))
                through++;
        }
        else
            others++;                   //  a temporary b-tree (a sort), anything else
    }
    sqlite3_finalize (stmt);
    sqlite3_close (db);
    zstr_free (&explain);
    return reads == 1 && through == 1 && others == 0;
}

//  WORKFLOW_RUNS and BACKFILL_LIST page below an id (version 15): 250
//  rows of one owner among another's, read in pages of 100 by `before`,
//  each once, newest first; a page cut by the reply's size says
//  truncated and the next one goes on from its last row; on SQLite each
//  page is a search of an index from `before` down, never a scan
static void
s_test_below (xxl_store_t *store, const char *path)
{
    const char *definition = "{\"nodes\":[{\"id\":\"a\",\"job\":7,\"join\":\"all\"}],"
                             "\"edges\":[]}";
    xxl_workflow_t w = { .name = "minutely", .description = "", .definition =
                         (char *) definition, .schedule_type = "NONE", .schedule_conf = "",
                         .timezone = "", .misfire_strategy = "DO_NOTHING" };
    int64_t flow = xxl_store_workflow_add (store, &w);
    int64_t other = xxl_store_workflow_add (store, &w);
    XXL_CHECK (flow > 0 && other > flow);
    const int64_t job = 770077, job2 = 770078;
    enum { N = 250, OTHERS = 50 };
    int64_t runs [N], backfills [N], every [N + OTHERS];
    size_t all = 0;
    XXL_CHECK (xxl_store_begin (store) == 0);
    for (int i = 0; i < N; i++) {
        xxl_workflow_run_t run = { .workflow_id = flow, .status = "SUCCESS", .param = "",
                                   .definition = (char *) definition, .trigger_type = "CRON",
                                   .trigger_time = 60000 * i, .end_time = 60000 * i + 1 };
        runs [i] = xxl_store_workflow_run_add (store, &run);
        xxl_store_backfill_t row = { .job_id = job, .from_time = i, .to_time = i,
                                     .per_second = 1, .cursor = i, .total = 1, .made = 1,
                                     .state = "DONE", .by = "t", .msg = "" };
        every [all++] = backfills [i] = xxl_store_backfill_add (store, &row);
        if (i % 5 == 0) {               //  another's rows in between
            run.workflow_id = other;
            XXL_CHECK (xxl_store_workflow_run_add (store, &run) > runs [i]);
            row.job_id = job2;
            every [all++] = xxl_store_backfill_add (store, &row);
        }
    }
    XXL_CHECK (xxl_store_commit (store) == 0);
    XXL_CHECK (all == N + OTHERS && runs [N - 1] > runs [0] && backfills [N - 1] > backfills [0]);

    //  Pages of 100: 100, 100, 50, every row once, newest first
    XXL_CHECK (s_below_all (store, xxl_store_workflow_run_encode_below, "runs", "workflowId",
                            flow, 100, runs, N));
    XXL_CHECK (s_below_all (store, xxl_store_backfill_encode_below, "backfills", "jobId",
                            job, 100, backfills, N));
    XXL_CHECK (s_below_all (store, xxl_store_backfill_encode_below, "backfills", "jobId",
                            0, 100, every, all));
    //  (pages of 1, and of 1,000: all in one)
    XXL_CHECK (s_below_all (store, xxl_store_workflow_run_encode_below, "runs", "workflowId",
                            flow, 1, runs, N));
    XXL_CHECK (s_below_all (store, xxl_store_backfill_encode_below, "backfills", "jobId",
                            job, 1000, backfills, N));
    //  Below the oldest: none; below an id between: those under it
    int64_t ids [1000], owners [1000];
    int truncated = -1;
    XXL_CHECK (s_below_page (store, xxl_store_workflow_run_encode_below, "runs", "workflowId",
                             flow, runs [0], 100, 1 << 20, &truncated, ids, owners, 1000) == 0);
    XXL_CHECK (s_below_page (store, xxl_store_backfill_encode_below, "backfills", "jobId",
                             job, backfills [10], 100, 1 << 20, &truncated, ids, owners,
                             1000) == 10 && ids [0] == backfills [9] && ids [9] == backfills [0]);
    //  A page cut by the reply's size: truncated, fewer rows; the next
    //  page from its last row goes on with no row lost
    int rows = s_below_page (store, xxl_store_workflow_run_encode_below, "runs", "workflowId",
                             flow, INT64_MAX, 100, 2000, &truncated, ids, owners, 1000);
    XXL_CHECK (rows > 0 && rows < 100 && truncated == 1);
    if (rows > 0) {
        int64_t last = ids [rows - 1];
        XXL_CHECK (s_below_page (store, xxl_store_workflow_run_encode_below, "runs",
                                 "workflowId", flow, last, 1, 1 << 20, &truncated, ids, owners,
                                 1000) == 1 && ids [0] == runs [N - 1 - rows] && truncated == 0);
    }
    //  The pages of before (no `before`) are these pages from the newest
    xxl_enc_t *enc = xxl_enc_new ();
    XXL_CHECK (xxl_store_workflow_run_encode_page (store, enc, 1 << 20, &truncated, flow, 7)
               == 7);
    xxl_enc_reset (enc);
    XXL_CHECK (xxl_store_backfill_encode_page (store, enc, 1 << 20, &truncated, job2, 1000)
               == OTHERS);
    xxl_enc_destroy (&enc);

    if (!xxl_test_pg) {
        XXL_CHECK (s_below_plan (path, XXL_SQL_RUNS_BELOW, "xxl_workflow_run",
                                 "USING INDEX xxl_workflow_run_flow (workflow_id=? AND id<?)"));
        XXL_CHECK (s_below_plan (path, XXL_SQL_RUNS_BELOW_ANY, "xxl_workflow_run",
                                 "USING INTEGER PRIMARY KEY (rowid<?)"));
        XXL_CHECK (s_below_plan (path, XXL_SQL_BACKFILLS_BELOW, "xxl_backfill",
                                 "USING INDEX xxl_backfill_job (job_id=? AND id<?)"));
        XXL_CHECK (s_below_plan (path, XXL_SQL_BACKFILLS_BELOW_ANY, "xxl_backfill",
                                 "USING INTEGER PRIMARY KEY (rowid<?)"));
    }
    else
        printf ("# skipped on PostgreSQL: the pages' plans (SQLite's EXPLAIN QUERY PLAN)\n");
    XXL_CHECK (xxl_store_workflow_rm (store, flow) == 1 && xxl_store_workflow_rm (store, other) == 1);
    XXL_CHECK (XXL_TEST_EXEC (store, "DELETE FROM xxl_backfill WHERE job_id IN (?, ?)", "ii",
                              job, job2) == N + OTHERS);
}

//  PostgreSQL's schema 16 undone as far as its migration needs: the
//  counter row (data_version as the sequence has it, log_seq given) and
//  the log ids' default drawn from it (the sequences stay: migration 16
//  makes them again)
static void
s_counter_row_back (xxl_store_t *store, int64_t log_seq)
{
    XXL_CHECK (XXL_TEST_EXEC (store, "CREATE TABLE xxl_store_state (id INTEGER PRIMARY KEY"
        " CHECK (id = 1), data_version BIGINT NOT NULL DEFAULT 0,"
        " log_seq BIGINT NOT NULL DEFAULT 0)", NULL) >= 0);
    XXL_CHECK (XXL_TEST_EXEC (store, "INSERT INTO xxl_store_state SELECT 1, last_value, ?"
                              " FROM xxl_data_versions", "i", log_seq) == 1);
    XXL_CHECK (XXL_TEST_EXEC (store, "CREATE OR REPLACE FUNCTION xxl_log_id_next () RETURNS"
        " BIGINT LANGUAGE sql VOLATILE AS 'UPDATE xxl_store_state SET log_seq = log_seq + 1"
        " RETURNING log_seq'", NULL) >= 0);
}

//  The job's next time (-1: not loaded)
static int64_t
s_job_next (xxl_store_t *store, int64_t id)
{
    xxl_job_t job;
    if (xxl_store_job_load (store, id, &job))
        return -1;
    int64_t next = job.trigger_next_time;
    xxl_job_free (&job);
    return next;
}

int
main (void)
{
    //  A store's name as the scheduler logs it: a PostgreSQL URL's
    //  passwords masked, the rest as given
    {
        char name [256];
        XXL_CHECK (streq (xxl_store_describe ("postgresql://u:secret@db:5433/xxl", name,
                                              sizeof name), "postgresql://u:***@db:5433/xxl"));
        XXL_CHECK (streq (xxl_store_describe ("postgres://db/xxl?user=u&password=secret&sslmode=require",
                                              name, sizeof name),
                          "postgres://db/xxl?user=u&password=***&sslmode=require"));
        XXL_CHECK (streq (xxl_store_describe ("postgresql://u@db/xxl", name, sizeof name),
                          "postgresql://u@db/xxl"));
        XXL_CHECK (streq (xxl_store_describe ("/var/lib/xxl/u:secret@x.db", name, sizeof name),
                          "/var/lib/xxl/u:secret@x.db"));
    }
    //  The shared SQL's $N placeholders as a '?' driver prepares them:
    //  numbers kept (a parameter may repeat), quoted text left alone, a
    //  text that does not fit refused
    {
        char out [128];
        XXL_CHECK (streq (xxl_store_sql_question_marks (
            "UPDATE t SET a = $1, b = '$2', \"$3\" = $12 WHERE c = $1 AND d = $", out,
            sizeof out), "UPDATE t SET a = ?1, b = '$2', \"$3\" = ?12 WHERE c = ?1 AND d = $"));
        XXL_CHECK (streq (xxl_store_sql_question_marks ("SELECT 1", out, sizeof out),
                          "SELECT 1"));
        XXL_CHECK (xxl_store_sql_question_marks ("SELECT $1", out, 9) == NULL);
        XXL_CHECK (streq (xxl_store_sql_question_marks ("SELECT $1", out, 10), "SELECT ?1"));
    }
    zsys_init ();
    zsys_set_logstream (NULL);
    XXL_CHECK (mkdtemp (s_dir) != NULL);
    char file [256];
    snprintf (file, sizeof file, "%s/xxl.db", s_dir);
    const char *path = xxl_test_store_url (file);
    printf ("# store: %s\n", xxl_test_pg? "PostgreSQL (XXL_TEST_STORE_URL)": "SQLite");
    char err [512];

    //  A missing folder gives a clear error, not a crash
    XXL_CHECK (xxl_store_new ("/nonexistent/dir/xxl.db", err, sizeof err) == NULL);
    XXL_CHECK (strstr (err, "cannot open database"));
    //  PostgreSQL URLs that cannot work: refused with a reason that never
    //  holds the password (a server that refuses, a malformed URL, a
    //  host that does not resolve is not tried: it may take long)
    XXL_CHECK (xxl_store_new ("postgresql://u:secret@127.0.0.1:1/xxl", err, sizeof err) == NULL);
    XXL_CHECK (strstr (err, "cannot connect to PostgreSQL") && !strstr (err, "secret"));
    XXL_CHECK (xxl_store_new ("postgres://u:secret@127.0.0.1:1/xxl?connect_timeout=2", err,
                              sizeof err) == NULL);
    XXL_CHECK (strstr (err, "PostgreSQL") && !strstr (err, "secret"));
    XXL_CHECK (xxl_store_new ("postgresql://u:sec%zzret@127.0.0.1:1/xxl", err, sizeof err) == NULL);
    XXL_CHECK (strstr (err, "not valid") && !strstr (err, "sec%zzret") && !strstr (err, "zzret"));
    XXL_CHECK (xxl_store_new ("postgresql://u@127.0.0.1:1/xxl?password=secret&bogus=1", err,
                              sizeof err) == NULL);
    XXL_CHECK (strstr (err, "not valid") && strstr (err, "bogus") && !strstr (err, "secret"));

    xxl_store_t *store = xxl_store_new (path, err, sizeof err);
    if (!store)
        fprintf (stderr, "store: %s\n", err);
    XXL_CHECK (store);
    if (!store)
        return xxl_test_done ();
    XXL_CHECK (xxl_store_schema_version (store) >= 1);
    if (!xxl_test_pg)
        XXL_CHECK (XXL_TEST_SCALAR (store,
            "SELECT journal_mode = 'wal' FROM pragma_journal_mode", NULL) == 1);
    XXL_CHECK (XXL_TEST_SCALAR (store, xxl_test_pg
        ? "SELECT COUNT(*) FROM pg_tables WHERE schemaname = current_schema () AND tablename IN"
          " ('xxl_job_group', 'xxl_job_info', 'xxl_job_log', 'xxl_job_logglue',"
          " 'xxl_job_registry', 'xxl_job_log_report', 'xxl_job_lock')"
        : "SELECT COUNT(*) FROM sqlite_master WHERE name IN ('xxl_job_group', 'xxl_job_info',"
          " 'xxl_job_log', 'xxl_job_logglue', 'xxl_job_registry', 'xxl_job_log_report',"
          " 'xxl_job_lock')", NULL) == 7);

    //  Groups
    xxl_group_t group = { .app_name = "demo-app", .title = "Demo", .update_time = 1 };
    int64_t gid = xxl_store_group_add (store, &group);
    XXL_CHECK (gid > 0);
    XXL_CHECK (xxl_store_group_add (store, &group) == -1);     //  unique appname
    s_test_leases (store, gid);
    s_test_accounts (store);
    s_test_first_admin (store, path);
    if (!xxl_test_pg)
        s_test_busy (store, path);
    else
        printf ("# skipped on PostgreSQL: a write lock held past SQLite's busy timeout\n");
    xxl_group_t found;
    XXL_CHECK (xxl_store_group_find (store, "demo-app", &found) == 0);
    XXL_CHECK (found.id == gid && streq (found.title, "Demo"));
    xxl_group_free (&found);
    char key [32];
    snprintf (key, sizeof key, "%" PRId64, gid);
    XXL_CHECK (xxl_store_group_find (store, key, &found) == 0);
    xxl_group_free (&found);
    XXL_CHECK (xxl_store_group_find (store, "nope", &found) == 1);

    //  Jobs
    xxl_job_t job = {
        .job_group = gid, .job_desc = "d", .author = "", .alarm_email = "",
        .schedule_type = "CRON", .schedule_conf = "0/5 * * * * ?",
        .misfire_strategy = "DO_NOTHING", .executor_route_strategy = "FIRST",
        .executor_handler = "demoJobHandler", .executor_param = "p",
        .executor_block_strategy = "SERIAL_EXECUTION", .glue_type = "BEAN",
        .glue_source = "", .glue_remark = "", .child_jobid = "", .timezone = ""
    };
    int64_t jid = xxl_store_job_add (store, &job);
    XXL_CHECK (jid > 0);
    s_test_batches (store, gid, jid);
    s_test_route_claim (store, gid, jid);
    s_test_workflows (store, gid, jid);
    s_test_below (store, path);
    s_test_slots (store, path, &job);
    s_test_made_times (store, gid);
    s_test_planned_new (store, gid);
    s_test_job_rows (store, gid);
    if (!xxl_test_pg)
        s_test_log_plans (store, path);
    else    //  (the planned instants' index leads with the instant there too)
        XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM pg_indexes"
                                    " WHERE schemaname = current_schema ()"
                                    " AND indexname = 'xxl_job_log_schedule'"
                                    " AND indexdef LIKE '%(schedule_time, job_id,%'", NULL) == 1);
    s_test_report_range (store, gid, jid);
    s_test_log_ids_past (store, path, gid, jid);
    if (!xxl_test_pg)
        s_test_log_id_blocks (store, path, gid, jid);
    else
        printf ("# skipped on PostgreSQL: its log ids come from a sequence\n");
    xxl_job_t loaded;
    XXL_CHECK (xxl_store_job_load (store, jid, &loaded) == 0);
    XXL_CHECK (streq (loaded.schedule_conf, "0/5 * * * * ?"));
    XXL_CHECK (streq (loaded.executor_handler, "demoJobHandler"));
    XXL_CHECK (streq (loaded.agent_tags, ""));          //  (NULL is stored as none)
    free (loaded.executor_param);
    loaded.executor_param = strdup ("changed");
    free (loaded.agent_tags);
    loaded.agent_tags = strdup ("gpu=true,zone=eu");
    XXL_CHECK (xxl_store_job_save (store, &loaded) == 0);
    xxl_job_free (&loaded);
    XXL_CHECK (xxl_store_job_load (store, jid, &loaded) == 0);
    XXL_CHECK (streq (loaded.executor_param, "changed"));
    XXL_CHECK (streq (loaded.agent_tags, "gpu=true,zone=eu"));
    xxl_job_free (&loaded);
    s_test_calendars (store, jid);
    XXL_CHECK (xxl_store_job_load (store, 999999, &loaded) == 1);
    XXL_CHECK (xxl_store_group_jobs (store, gid) == 1);

    //  Logs: insert, trigger, callback once
    XXL_CHECK (xxl_store_begin (store) == 0);
    xxl_log_t log = { .job_group = gid, .job_id = jid, .executor_handler = "demoJobHandler",
                      .executor_param = "p", .trigger_time = 1000, .trigger_msg = "head\n",
                      .trigger_type = "MANUAL" };
    XXL_CHECK (xxl_store_log_add (store, &log) == 0 && log.id > 0);
    XXL_CHECK (xxl_store_log_trigger_done (store, log.id, 200, "agent-1", "tail") == 1);
    XXL_CHECK (xxl_store_log_handle_done (store, log.id, 2000, 200, "ok") == 0);
    //  A repeated callback is a no-op and does not overwrite
    XXL_CHECK (xxl_store_log_handle_done (store, log.id, 3000, 500, "late") == 1);
    XXL_CHECK (xxl_store_commit (store) == 0);
    xxl_log_t row;
    XXL_CHECK (xxl_store_log_load (store, log.id, &row) == 0);
    XXL_CHECK (row.trigger_code == 200 && row.handle_code == 200);
    XXL_CHECK (streq (row.handle_msg, "ok") && streq (row.trigger_msg, "head\ntail"));
    XXL_CHECK (streq (row.executor_address, "agent-1"));
    xxl_log_free (&row);

    //  (jobId, scheduleTime) is unique: recovery can never make two
    xxl_log_t planned = log;
    planned.id = 0;                     //  AUTOINCREMENT chooses
    planned.schedule_time = 5000;
    XXL_CHECK (xxl_store_log_add (store, &planned) == 0);
    XXL_CHECK (xxl_store_log_add (store, &planned) == -1);
    //  Ids are never reused, even after the newest row is deleted
    int64_t last = planned.id;
    XXL_TEST_EXEC (store, "DELETE FROM xxl_job_log WHERE id = ?", "i", last);
    planned.schedule_time = 6000;
    planned.id = 0;
    XXL_CHECK (xxl_store_log_add (store, &planned) == 0 && planned.id > last);
    //  The scheduler hands out ids itself inside a transaction: next_id is
    //  the one AUTOINCREMENT would give, a row added with it takes it, and
    //  the one after follows; deleting the newest never lowers it
    int64_t next = xxl_store_log_next_id (store);
    XXL_CHECK (next == planned.id + 1);
    planned.id = next;
    planned.schedule_time = 7000;
    XXL_CHECK (xxl_store_log_add (store, &planned) == 0 && planned.id == next);
    XXL_CHECK (xxl_store_log_next_id (store) == next + 1);
    XXL_TEST_EXEC (store, "DELETE FROM xxl_job_log WHERE id = ?", "i", next);
    XXL_CHECK (xxl_store_log_next_id (store) == next + 1);
    planned.id = 0;
    planned.schedule_time = 8000;
    XXL_CHECK (xxl_store_log_add (store, &planned) == 0 && planned.id == next + 1);
    //  Inside a transaction a duplicate (a planned instant written twice,
    //  an app name taken) fails that call alone: the transaction goes on
    //  and commits the rest
    XXL_CHECK (xxl_store_begin (store) == 0);
    xxl_log_t dup = planned;
    dup.id = 0;
    dup.schedule_time = 9000;
    XXL_CHECK (xxl_store_log_add (store, &dup) == 0);
    int64_t kept = dup.id;
    dup.id = 0;
    XXL_CHECK (xxl_store_log_add (store, &dup) == -1);
    dup.id = kept + 1;
    XXL_CHECK (xxl_store_log_add (store, &dup) == -1);
    dup.id = kept;
    dup.schedule_time = 9001;
    XXL_CHECK (xxl_store_log_add (store, &dup) == -1);
    XXL_CHECK (xxl_store_group_add (store, &group) == -1);
    XXL_CHECK (xxl_store_in_txn (store) == 1);
    XXL_CHECK (xxl_store_log_route (store, kept, 0, "a9", "s\n") == 1);
    XXL_CHECK (xxl_store_commit (store) == 0);
    XXL_CHECK (xxl_store_log_load (store, kept, &row) == 0 && streq (row.executor_address, "a9"));
    xxl_log_free (&row);
    XXL_CHECK (xxl_store_log_next_id (store) == kept + 1);

    //  Registry rows drive automatic groups' address lists, sorted
    XXL_CHECK (xxl_store_registry_beat (store, "demo-app", "b-host", 100) == 0);
    XXL_CHECK (xxl_store_registry_beat (store, "demo-app", "a-host", 100) == 0);
    XXL_CHECK (xxl_store_groups_refresh (store, 100) == 0);
    XXL_CHECK (xxl_store_group_load (store, gid, &found) == 0);
    XXL_CHECK (streq (found.address_list, "a-host,b-host"));
    xxl_group_free (&found);
    //  ... the newest beat of any row (the lease's deaf rule), 0 with none
    XXL_CHECK (xxl_store_registry_beat (store, "demo-app", "a-host", 150) == 0);
    XXL_CHECK (xxl_store_registry_newest (store) == 150);
    XXL_CHECK (xxl_store_registry_expire (store, 200) == 2);
    XXL_CHECK (xxl_store_registry_newest (store) == 0);

    //  A step of the wall clock moves the next time of the started
    //  FIX_DELAY jobs of the shares given that wait for a delay, within
    //  1 .. never - 1; a job waiting for its run's end, a stopped one,
    //  one of another share and a CRON job keep theirs
    {
        const int64_t never = 253402300799000LL;
        xxl_job_t fd = { .job_group = gid, .job_desc = "delay", .author = "", .alarm_email = "",
                         .schedule_type = "FIX_DELAY", .schedule_conf = "4",
                         .misfire_strategy = "DO_NOTHING", .executor_route_strategy = "FIRST",
                         .executor_handler = "h", .executor_param = "",
                         .executor_block_strategy = "SERIAL_EXECUTION", .glue_type = "BEAN",
                         .glue_source = "", .glue_remark = "", .child_jobid = "",
                         .timezone = "", .trigger_status = 1, .trigger_next_time = 10000 };
        int64_t d1 = xxl_store_job_add (store, &fd);
        fd.trigger_next_time = never;
        int64_t d2 = xxl_store_job_add (store, &fd);
        fd.trigger_next_time = 10000;
        fd.trigger_status = 0;
        int64_t d3 = xxl_store_job_add (store, &fd);
        fd.trigger_status = 1;
        fd.schedule_type = "CRON";
        fd.schedule_conf = "* * * * * ?";
        int64_t d4 = xxl_store_job_add (store, &fd);
        XXL_CHECK (d1 > 0 && d2 > d1 && d3 > d2 && d4 > d3);
        uint64_t d1_share = (uint64_t) 1 << (d1 % XXL_STORE_SHARES);
        XXL_CHECK (xxl_store_job_delay_shift (store, ~d1_share & XXL_STORE_SHARES_ALL, 5000,
                                              never) >= 0);
        XXL_CHECK (s_job_next (store, d1) == 10000);
        XXL_CHECK (xxl_store_job_delay_shift (store, XXL_STORE_SHARES_ALL, -3000, never) >= 1);
        XXL_CHECK (s_job_next (store, d1) == 7000);
        XXL_CHECK (s_job_next (store, d2) == never && s_job_next (store, d3) == 10000
                   && s_job_next (store, d4) == 10000);
        XXL_CHECK (xxl_store_job_delay_shift (store, XXL_STORE_SHARES_ALL, 5000, never) >= 1);
        XXL_CHECK (s_job_next (store, d1) == 12000);
        //  (kept within 1 .. never - 1)
        XXL_CHECK (xxl_store_job_delay_shift (store, XXL_STORE_SHARES_ALL, -20000, never) >= 1);
        XXL_CHECK (s_job_next (store, d1) == 1);
        XXL_CHECK (xxl_store_job_delay_shift (store, XXL_STORE_SHARES_ALL, never, never) >= 1);
        XXL_CHECK (s_job_next (store, d1) == never - 1);
        for (int64_t id = d1; id <= d4; id++)
            XXL_CHECK (xxl_store_job_rm (store, id) == 0);
    }

    //  Glue history keeps the last 30
    for (int i = 0; i < 35; i++)
        xxl_store_glue_add (store, jid, "GLUE_SHELL", "echo", "r", i);
    XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_job_logglue WHERE job_id = ?",
                                 "i", jid) == 30);
    //  ... numbered per job from 1, numbers never reused: 6..35 are left
    XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT MIN(version) FROM xxl_job_logglue WHERE job_id = ?",
                                 "i", jid) == 6);
    XXL_CHECK (xxl_store_glue_add (store, jid, "GLUE_SHELL", "echo", "r", 36) == 36);
    XXL_CHECK (xxl_store_glue_add (store, jid + 1, "GLUE_SHELL", "echo", "r", 36) == 1);

    //  Encoding rows as maps with camelCase keys
    xxl_enc_t *enc = xxl_enc_new ();
    xxl_enc_map_begin (enc);
    xxl_enc_key (enc, "rows");
    XXL_CHECK (XXL_TEST_ENCODE (store, enc, 1,
        "SELECT id, job_id AS jobId, handle_msg AS handleMsg FROM xxl_job_log WHERE id = ?",
        "i", log.id) == 1);
    size_t size;
    const void *data = xxl_enc_finish (enc, &size);
    (void) data;
    XXL_CHECK (size > 10);
    xxl_enc_destroy (&enc);

    //  The typed calls the engine makes (xxl_store.h), on their own
    {
        //  JOB_LIST's page: rows as maps, REAL columns as float64; a byte
        //  budget truncates before the row that would pass it
        xxl_store_job_filter_t filter = { .group_id = gid, .handler = "", .desc = "",
                                          .author = "", .status = -1, .limit = 100 };
        XXL_CHECK (xxl_store_job_count (store, &filter) == 1);
        xxl_enc_t *page = xxl_enc_new ();
        xxl_enc_map_begin (page);
        xxl_enc_kint (page, "id", 1);
        xxl_enc_kint (page, "v", 1);
        xxl_enc_kstr (page, "t", "REPLY");
        xxl_enc_key (page, "jobs");
        int truncated = -1;
        XXL_CHECK (xxl_store_job_encode_page (store, page, 1 << 20, &truncated, &filter) == 1);
        XXL_CHECK (truncated == 0);
        xxl_enc_map_end (page);
        size_t page_size;
        const void *page_data = xxl_enc_finish (page, &page_size);
        char why [256] = "";
        xxl_msg_t *msg = xxl_msg_decode (page_data, page_size, NULL, why, sizeof why);
        if (!msg)
            fprintf (stderr, "decode: %s\n", why);
        XXL_CHECK (msg);
        size_t jobs = 0;
        const msgpack_object *items = msg? xxl_msg_array (msg, NULL, "jobs", 1, 10, &jobs): NULL;
        XXL_CHECK (jobs == 1 && items && items [0].type == MSGPACK_OBJECT_MAP);
        const msgpack_object *backoff = jobs? xxl_msg_get (&items [0], "retryBackoff"): NULL;
        XXL_CHECK (backoff && backoff->type == MSGPACK_OBJECT_FLOAT64);
        xxl_msg_destroy (&msg);
        xxl_enc_reset (page);
        xxl_enc_map_begin (page);
        XXL_CHECK (xxl_store_job_encode_page (store, page, 16, &truncated, &filter) == 0);
        XXL_CHECK (truncated == 1);
        filter.desc = "no such desc";
        XXL_CHECK (xxl_store_job_count (store, &filter) == 0);
        xxl_enc_destroy (&page);

        //  Glue versions: the newest, one by number, an absent one
        XXL_CHECK (xxl_store_glue_last (store, jid) == 36);
        XXL_CHECK (xxl_store_glue_exists (store, jid, 36) == 1);
        XXL_CHECK (xxl_store_glue_exists (store, jid, 5) == 0);
        char *type, *source;
        XXL_CHECK (xxl_store_glue_get (store, jid, 36, &type, &source) == 0);
        XXL_CHECK (type && streq (type, "GLUE_SHELL") && source && streq (source, "echo"));
        free (type);
        free (source);
        XXL_CHECK (xxl_store_glue_get (store, jid, 5, &type, &source) == 1);
        XXL_CHECK (type == NULL && source == NULL);

        //  An unsent row: stamped and routed once, accepted once
        XXL_CHECK (xxl_store_begin (store) == 0);
        xxl_log_t unsent = { .job_group = gid, .job_id = jid, .executor_handler = "h",
                             .executor_param = "", .trigger_time = 5000, .trigger_msg = "m\n",
                             .trigger_type = "MANUAL" };
        XXL_CHECK (xxl_store_log_add (store, &unsent) == 0);
        XXL_CHECK (xxl_store_log_job_id (store, unsent.id) == jid);
        XXL_CHECK (xxl_store_log_job_id (store, unsent.id + 1000) == -1);
        XXL_CHECK (xxl_store_log_route (store, unsent.id, 6000, "a1", "to a1\n") == 1);
        XXL_CHECK (xxl_store_log_unroute (store, unsent.id, "to a1\n", 1) == 1);
        XXL_CHECK (xxl_store_log_accept (store, unsent.id, 7000) == 1);
        XXL_CHECK (xxl_store_log_accept (store, unsent.id, 8000) == 0);   //  once
        XXL_CHECK (xxl_store_log_stamp (store, unsent.id, 9000) == 0);    //  no longer unsent
        XXL_CHECK (xxl_store_commit (store) == 0);
        xxl_log_t back;
        XXL_CHECK (xxl_store_log_load (store, unsent.id, &back) == 0);
        XXL_CHECK (back.trigger_code == 200 && back.trigger_time == 7000);
        XXL_CHECK (streq (back.trigger_msg, "m\n") && streq (back.executor_address, ""));
        xxl_log_free (&back);

        //  Deleting finished rows only, by job and bound, in batches
        size_t before_rows = (size_t) XXL_TEST_SCALAR (store,
            "SELECT COUNT(*) FROM xxl_job_log", NULL);
        XXL_CHECK (xxl_store_begin (store) == 0);
        XXL_CHECK (xxl_store_log_delete (store, jid + 1000, INT64_MAX, INT64_MAX, 10) == 0);
        int64_t gone = xxl_store_log_delete (store, jid, INT64_MAX, INT64_MAX, 1);
        XXL_CHECK (gone == 1);
        XXL_CHECK (xxl_store_commit (store) == 0);
        XXL_CHECK ((size_t) XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_job_log",
                                                     NULL) == before_rows - 1);
        XXL_CHECK (xxl_store_log_id_at_rank (store, 0, 1000000) == -1);

        //  Due jobs, soonest first, as typed rows
        xxl_store_due_t due [4];
        size_t due_count = 99;
        XXL_CHECK (xxl_store_job_due (store, INT64_MAX, due, 4, &due_count) == 0);
        XXL_CHECK (due_count == 0);                 //  (none started)
        XXL_CHECK (XXL_TEST_EXEC (store, "UPDATE xxl_job_info SET trigger_status = 1,"
                                          " trigger_next_time = 42 WHERE id = ?", "i", jid) == 1);
        XXL_CHECK (xxl_store_job_due (store, 41, due, 4, &due_count) == 0 && due_count == 0);
        XXL_CHECK (xxl_store_job_due (store, 42, due, 4, &due_count) == 0 && due_count == 1);
        XXL_CHECK (due [0].id == jid && due [0].trigger_next_time == 42);
        XXL_CHECK (xxl_store_job_halt (store, jid, 41) == 1);
        XXL_CHECK (xxl_store_job_due (store, INT64_MAX, due, 4, &due_count) == 0 && due_count == 0);
    }

    //  SQL built at run time goes through exec_once (PostgreSQL's hooks
    //  never cache): text freed and built again (often at the same
    //  address) must run as the new text says, which a cache keyed by
    //  address would get wrong
    for (int round = 0; round < 3; round++) {
        char *sql = zsys_sprintf ("UPDATE xxl_job_info SET job_desc = 'round-%d' WHERE id = %s",
                                  round, xxl_test_pg? "$1": "?");
        XXL_CHECK ((xxl_test_pg? xxl_store_pg_exec (store, sql, "i", jid)
                               : xxl_store_sqlite_exec_once (store, sql, "i", jid)) == 1);
        zstr_free (&sql);
        char *desc = XXL_TEST_TEXT (store, "SELECT job_desc FROM xxl_job_info WHERE id = ?", "i", jid);
        char expect [32];
        snprintf (expect, sizeof expect, "round-%d", round);
        XXL_CHECK (desc && streq (desc, expect));
        free (desc);
    }
    if (!xxl_test_pg)
        XXL_CHECK (xxl_store_sqlite_exec_once (store, "UPDATE nowhere SET x = 1", NULL) == -1);

    //  A group's job ids, by id, paged by `after` (LOG_CLEAR of a group)
    {
        xxl_group_t paged = { .app_name = "ids-app", .title = "Ids", .update_time = 1 };
        int64_t pg_id = xxl_store_group_add (store, &paged);
        XXL_CHECK (pg_id > 0);
        int64_t mine [3];
        job.job_group = pg_id;
        for (int i = 0; i < 3; i++)
            XXL_CHECK ((mine [i] = xxl_store_job_add (store, &job)) > 0);
        int64_t ids [4] = { 0 };
        size_t count = 99;
        XXL_CHECK (xxl_store_group_job_ids (store, pg_id, 0, ids, 2, &count) == 0
                   && count == 2 && ids [0] == mine [0] && ids [1] == mine [1]);
        XXL_CHECK (xxl_store_group_job_ids (store, pg_id, ids [1], ids, 2, &count) == 0
                   && count == 1 && ids [0] == mine [2]);
        XXL_CHECK (xxl_store_group_job_ids (store, pg_id, mine [2], ids, 2, &count) == 0
                   && count == 0);
        XXL_CHECK (xxl_store_group_job_ids (store, 999999, 0, ids, 2, &count) == 0 && count == 0);
        //  (another group's jobs are not its)
        XXL_CHECK (xxl_store_group_job_ids (store, gid, 0, ids, 4, &count) == 0);
        for (size_t i = 0; i < count; i++)
            XXL_CHECK (ids [i] != mine [0] && ids [i] != mine [1] && ids [i] != mine [2]);
    }

    //  A bad statement is an error, not a crash
    XXL_CHECK (XXL_TEST_EXEC (store, "UPDATE nowhere SET x = 1", NULL) == -1);
    XXL_CHECK (strstr (xxl_store_error (store), "nowhere"));
    xxl_store_destroy (&store);
    XXL_CHECK (store == NULL);

    //  Reopening keeps the data and does not migrate again
    store = xxl_store_new (path, err, sizeof err);
    XXL_CHECK (store && xxl_store_job_load (store, jid, &loaded) == 0);
    xxl_job_free (&loaded);

    //  SQLite's WAL and its checkpointer (s_sqlite_wal); PostgreSQL has a
    //  WAL of its own, and its backend none to manage
    if (xxl_test_pg) {
        printf ("# skipped on PostgreSQL: the WAL's checkpoints and restarts (its own WAL)\n");
        xxl_store_set_wal_size (store, 1);
        XXL_CHECK (xxl_store_wal_due (store) == 0 && xxl_store_wal_restart (store) == 0);
    }
    else
        s_sqlite_wal (store, path, &log);


    //  The audit: rows in the caller's transaction (a rollback leaves
    //  none), newest first, pages below an id, retention by time
    {
        xxl_audit_t row = { .who = "local", .role = "admin", .type = "JOB_ADD", .code = 200 };
        XXL_CHECK (xxl_store_begin (store) == 0);
        for (int i = 0; i < 5; i++) {
            row.time = 1000 + i;
            row.target = 7 + i;
            XXL_CHECK (xxl_store_audit_add (store, &row) == 0);
        }
        xxl_audit_t missing = { .time = 2000, .who = "ops", .role = "operator",
                                .type = "JOB_UPDATE", .target = 99, .code = 404 };
        XXL_CHECK (xxl_store_audit_add (store, &missing) == 0);
        XXL_CHECK (xxl_store_commit (store) == 0);
        XXL_CHECK (xxl_store_begin (store) == 0);
        XXL_CHECK (xxl_store_audit_add (store, &row) == 0);
        XXL_CHECK (xxl_store_rollback (store) == 0);
        XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_audit", NULL) == 6);

        int64_t ids [8] = { 0 };
        int truncated = -1;
        xxl_msg_t *msg = NULL;
        xxl_audit_t first = { 0 };
        XXL_CHECK (s_audit_page (store, INT64_MAX, 4, 1 << 20, &truncated, ids, 8, &msg,
                                 &first) == 4);
        XXL_CHECK (truncated == 0);
        XXL_CHECK (ids [0] > ids [1] && ids [1] > ids [2] && ids [2] > ids [3]);
        XXL_CHECK (first.time == 2000 && first.target == 99 && first.code == 404);
        XXL_CHECK (first.who && streq (first.who, "ops") && streq (first.role, "operator")
                   && streq (first.type, "JOB_UPDATE"));
        int64_t newest = ids [0], fourth = ids [3];
        xxl_msg_destroy (&msg);
        //  The next page: below the last id seen
        XXL_CHECK (s_audit_page (store, fourth, 4, 1 << 20, &truncated, ids, 8, &msg,
                                 &first) == 2);
        XXL_CHECK (ids [0] == fourth - 1 && first.time == 1001 && first.target == 8
                   && first.code == 200 && streq (first.type, "JOB_ADD"));
        xxl_msg_destroy (&msg);
        XXL_CHECK (s_audit_page (store, ids [1], 4, 1 << 20, &truncated, ids, 8, &msg,
                                 &first) == 0);
        xxl_msg_destroy (&msg);
        //  A byte budget stops before the row that would pass it
        XXL_CHECK (s_audit_page (store, INT64_MAX, 4, 16, &truncated, ids, 8, &msg,
                                 &first) == 0);
        XXL_CHECK (truncated == 1);
        xxl_msg_destroy (&msg);
        //  Retention: older than a time, oldest first, in bounded batches
        XXL_CHECK (xxl_store_audit_delete (store, 1003, 100) == 3);
        XXL_CHECK (xxl_store_audit_delete (store, 5000, 1) == 1);
        XXL_CHECK (xxl_store_audit_delete (store, 1000, 100) == 0);
        XXL_CHECK (s_audit_page (store, INT64_MAX, 100, 1 << 20, &truncated, ids, 8, &msg,
                                 &first) == 2);
        XXL_CHECK (ids [0] == newest && first.time == 2000);
        xxl_msg_destroy (&msg);
        //  Ids are never given again, even once every row is gone
        XXL_CHECK (xxl_store_audit_delete (store, 5000, 100) == 2);
        XXL_CHECK (xxl_store_audit_add (store, &row) == 0);
        XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT MAX(id) FROM xxl_audit", NULL)
                   > newest);
    }

    //  Migration 16 (PostgreSQL): back to schema 15's counter row, behind
    //  the rows' ids, with a share an older scheduler holds: tried again
    //  10 s, then refused, naming it; once its lease expired (as
    //  keeper, opened before, writes) the sequences start past every id
    //  in use and the counter row is gone
    if (xxl_test_pg) {
        xxl_store_t *keeper = xxl_store_new (path, err, sizeof err);
        XXL_CHECK (keeper);
        int64_t max_id = XXL_TEST_SCALAR (store, "SELECT MAX(id) FROM xxl_job_log", NULL);
        XXL_CHECK (max_id > 10);
        int64_t version_before = XXL_TEST_SCALAR (store,
            "SELECT last_value FROM xxl_data_versions", NULL);
        s_counter_row_back (store, max_id - 10);
        XXL_CHECK (XXL_TEST_EXEC (store, "UPDATE xxl_schema SET version = 15", NULL) == 1);
        XXL_CHECK (XXL_TEST_EXEC (store, "UPDATE xxl_lease SET owner = 'old-node', expires ="
            " (EXTRACT (EPOCH FROM clock_timestamp ()) * 1000)::BIGINT + 600000 WHERE share = 3",
            NULL) == 1);
        xxl_store_destroy (&store);
        int64_t opened = zclock_mono ();
        store = xxl_store_new (path, err, sizeof err);
        XXL_CHECK (store == NULL && zclock_mono () - opened >= 9500);
        XXL_CHECK (strstr (err, "migration to schema 16 failed")
                   && strstr (err, "every scheduler of an older version stopped first:"
                                   " old-node still hold"));
        XXL_CHECK (XXL_TEST_SCALAR (keeper, "SELECT version FROM xxl_schema", NULL) == 15);
        //  (the allowed case: the lease expired while opening waits)
        XXL_CHECK (XXL_TEST_EXEC (keeper, "UPDATE xxl_lease SET expires ="
            " (EXTRACT (EPOCH FROM clock_timestamp ()) * 1000)::BIGINT + 1500 WHERE share = 3",
            NULL) == 1);
        xxl_store_destroy (&keeper);
        store = xxl_store_new (path, err, sizeof err);
        XXL_CHECK (store && xxl_store_schema_version (store) == XXL_TEST_SCHEMA);
        if (!store)
            return xxl_test_done ();
        XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT (to_regclass ('xxl_store_state') IS NULL)::int",
                                    NULL) == 1);
        XXL_CHECK (xxl_store_log_next_id (store) > max_id);
        XXL_CHECK (XXL_TEST_EXEC (store, "INSERT INTO xxl_job_log (job_group, job_id,"
                                  " trigger_time) VALUES (1, 1, 1)", NULL) == 1);
        XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT MAX(id) FROM xxl_job_log", NULL) > max_id);
        XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT last_value FROM xxl_data_versions", NULL)
                   > version_before);
        XXL_CHECK (XXL_TEST_EXEC (store, "DELETE FROM xxl_job_log WHERE job_id = 1 AND"
                                  " trigger_time = 1", NULL) == 1);
    }

    //  Migration 4: a version-3 store loses the index no query used
    const char *index_count = xxl_test_pg
        ? "SELECT COUNT(*) FROM pg_indexes WHERE schemaname = current_schema ()"
          " AND indexname = 'xxl_job_log_job_time'"
        : "SELECT COUNT(*) FROM sqlite_master WHERE name = 'xxl_job_log_job_time'";
    XXL_CHECK (xxl_store_schema_version (store) == XXL_TEST_SCHEMA);
    XXL_CHECK (XXL_TEST_SCALAR (store, index_count, NULL) == 0);
    //  Migration 5: a planned instant has one row per shard index; a
    //  second plan of it (another agent count too) collides on shard 0
    {
        const char *add = "INSERT INTO xxl_job_log (job_group, job_id, trigger_time,"
                          " executor_sharding_param, schedule_time) VALUES (1, ?, 0, ?, 4242)";
        XXL_CHECK (XXL_TEST_EXEC (store, add, "is", jid, "0/3") == 1);
        XXL_CHECK (XXL_TEST_EXEC (store, add, "is", jid, "1/3") == 1);
        XXL_CHECK (XXL_TEST_EXEC (store, add, "is", jid, "2/3") == 1);
        XXL_CHECK (XXL_TEST_EXEC (store, add, "is", jid, "0/4") < 0);
        XXL_CHECK (XXL_TEST_EXEC (store, add, "is", jid, "2/4") < 0);
        XXL_CHECK (XXL_TEST_EXEC (store, add, "is", jid, NULL) < 0);      //  (shard 0)
        XXL_CHECK (XXL_TEST_EXEC (store, add, "is", jid + 1000, NULL) == 1);
        XXL_CHECK (XXL_TEST_EXEC (store, add, "is", jid + 1000, NULL) < 0);
        XXL_CHECK (XXL_TEST_EXEC (store, add, "is", jid + 1000, "x/2") < 0);  //  (no integer: 0)
        XXL_CHECK (XXL_TEST_EXEC (store, add, "is", jid + 1000, " 3x/4") == 1);
        XXL_CHECK (XXL_TEST_EXEC (store, add, "is", jid + 1000, "3/5") < 0);
        XXL_CHECK (XXL_TEST_EXEC (store, "DELETE FROM xxl_job_log WHERE schedule_time = 4242",
                                   NULL) == 5);
    }
    XXL_CHECK (XXL_TEST_EXEC (store, "CREATE INDEX xxl_job_log_job_time"
                               " ON xxl_job_log (job_id, trigger_time)", NULL) >= 0);
    //  (back to schema 3's glue table: no version column)
    XXL_CHECK (XXL_TEST_EXEC (store, "DROP INDEX xxl_job_logglue_version", NULL) >= 0);
    XXL_CHECK (XXL_TEST_EXEC (store, "ALTER TABLE xxl_job_logglue DROP COLUMN version", NULL) >= 0);
    XXL_CHECK (XXL_TEST_EXEC (store, "CREATE INDEX xxl_job_logglue_job"
                               " ON xxl_job_logglue (job_id, id)", NULL) >= 0);
    //  (and before schema 7's audit table)
    XXL_CHECK (XXL_TEST_EXEC (store, "DROP TABLE xxl_audit", NULL) >= 0);
    //  (and before PostgreSQL's schema 16: the counter row, the log ids'
    //  default drawn from it)
    if (xxl_test_pg)
        s_counter_row_back (store, 0);
    //  (and before SQLite's schema 21 and PostgreSQL's 22: no index of the
    //  jobs with child jobs)
    XXL_CHECK (XXL_TEST_EXEC (store, "DROP INDEX xxl_job_info_parents", NULL) >= 0);
    //  (and before SQLite's schema 20: a job's rows indexed by job, then id)
    if (!xxl_test_pg) {
        XXL_CHECK (XXL_TEST_EXEC (store, "DROP INDEX xxl_job_log_job_block", NULL) >= 0);
        XXL_CHECK (XXL_TEST_EXEC (store, "CREATE INDEX xxl_job_log_job"
                                   " ON xxl_job_log (job_id, id)", NULL) >= 0);
    }
    //  (and before schema 14's backfills)
    XXL_CHECK (XXL_TEST_EXEC (store, "DROP TABLE xxl_backfill", NULL) >= 0);
    //  (and before schema 15's maxRunning)
    XXL_CHECK (XXL_TEST_EXEC (store, "DROP INDEX xxl_job_log_slots", NULL) >= 0);
    XXL_CHECK (XXL_TEST_EXEC (store, "DROP INDEX xxl_job_info_limited", NULL) >= 0);
    XXL_CHECK (XXL_TEST_EXEC (store, "ALTER TABLE xxl_job_log DROP COLUMN slot", NULL) >= 0);
    XXL_CHECK (XXL_TEST_EXEC (store, "ALTER TABLE xxl_job_info DROP COLUMN max_running", NULL) >= 0);
    //  (and before schema 13's workflows)
    XXL_CHECK (XXL_TEST_EXEC (store, "DROP TABLE xxl_workflow_run", NULL) >= 0);
    XXL_CHECK (XXL_TEST_EXEC (store, "DROP TABLE xxl_workflow", NULL) >= 0);
    XXL_CHECK (XXL_TEST_EXEC (store, "DROP INDEX xxl_job_log_flow", NULL) >= 0);
    XXL_CHECK (XXL_TEST_EXEC (store, "ALTER TABLE xxl_job_log DROP COLUMN flow_run_id", NULL) >= 0);
    XXL_CHECK (XXL_TEST_EXEC (store, "ALTER TABLE xxl_job_log DROP COLUMN flow_node", NULL) >= 0);
    XXL_CHECK (XXL_TEST_EXEC (store, "ALTER TABLE xxl_job_log DROP COLUMN flow_attempt", NULL) >= 0);
    //  (and before schema 12's agent tags)
    XXL_CHECK (XXL_TEST_EXEC (store, "ALTER TABLE xxl_job_info DROP COLUMN agent_tags", NULL) >= 0);
    //  (and before schema 11's calendars)
    XXL_CHECK (XXL_TEST_EXEC (store, "DROP TABLE xxl_calendar", NULL) >= 0);
    XXL_CHECK (XXL_TEST_EXEC (store, "ALTER TABLE xxl_job_info DROP COLUMN calendar", NULL) >= 0);
    //  (and before schema 10's index of failed runs)
    XXL_CHECK (XXL_TEST_EXEC (store, "DROP INDEX xxl_job_log_fails", NULL) >= 0);
    //  (and before schema 9's users, tokens and sessions)
    XXL_CHECK (XXL_TEST_EXEC (store, "DROP TABLE xxl_session", NULL) >= 0);
    XXL_CHECK (XXL_TEST_EXEC (store, "DROP TABLE xxl_token", NULL) >= 0);
    XXL_CHECK (XXL_TEST_EXEC (store, "DROP TABLE xxl_user", NULL) >= 0);
    //  (and before schema 8's leases: one pair of fired marks)
    XXL_CHECK (XXL_TEST_EXEC (store, "DROP TABLE xxl_lease", NULL) >= 0);
    XXL_CHECK (XXL_TEST_EXEC (store, "DROP TABLE xxl_node", NULL) >= 0);
    XXL_CHECK (XXL_TEST_EXEC (store, "UPDATE xxl_job_fired SET fired_until = 1234,"
                              " fired_sent = 999", NULL) == 1);
    XXL_CHECK (XXL_TEST_EXEC (store, xxl_test_pg? "UPDATE xxl_schema SET version = 3"
                                                : "PRAGMA user_version = 3", NULL) >= 0);
    XXL_CHECK (XXL_TEST_SCALAR (store, index_count, NULL) == 1);
    xxl_store_destroy (&store);
    store = xxl_store_new (path, err, sizeof err);
    XXL_CHECK (store && xxl_store_schema_version (store) == XXL_TEST_SCHEMA);
    //  Migration 21 (PostgreSQL's 22): the jobs with child jobs
    XXL_CHECK (XXL_TEST_SCALAR (store, xxl_test_pg
        ? "SELECT COUNT(*) FROM pg_indexes WHERE indexname = 'xxl_job_info_parents'"
        : "SELECT COUNT(*) FROM sqlite_master WHERE name = 'xxl_job_info_parents'", NULL) == 1);
    //  SQLite's migration 20: a job's rows by block of ids, then job
    if (!xxl_test_pg)
        XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM sqlite_master WHERE name"
                                    " IN ('xxl_job_log_job', 'xxl_job_log_job_block')", NULL) == 1
                   && XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM sqlite_master WHERE name"
                                       " = 'xxl_job_log_job_block'", NULL) == 1);
    //  Migration 15: the jobs kept have no limit; migration 16: and no
    //  index of the open rows by job (15 made it, 16 drops it)
    XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_job_info"
                                " WHERE max_running = 0", NULL)
               == XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_job_info", NULL));
    XXL_CHECK (XXL_TEST_SCALAR (store, xxl_test_pg
        ? "SELECT COUNT(*) FROM pg_indexes WHERE indexname = 'xxl_job_log_open'"
        : "SELECT COUNT(*) FROM sqlite_master WHERE name = 'xxl_job_log_open'", NULL) == 0);
    //  Migration 17 (PostgreSQL's 18): the slots' index, the rows kept in it
    //  none (no job had a limit)
    XXL_CHECK (XXL_TEST_SCALAR (store, xxl_test_pg
        ? "SELECT COUNT(*) FROM pg_indexes WHERE indexname = 'xxl_job_log_slots'"
        : "SELECT COUNT(*) FROM sqlite_master WHERE name = 'xxl_job_log_slots'", NULL) == 1);
    XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_job_log WHERE slot = 1", NULL)
               == 0);
    //  (PostgreSQL: and the rows with no result by id, for the batched
    //  result update's join)
    if (xxl_test_pg)
        XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM pg_indexes"
                                    " WHERE indexname = 'xxl_job_log_open_ids'", NULL) == 1);
    //  Migration 13: workflows and runs, empty; the log rows kept, in no run
    XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_workflow", NULL) == 0);
    XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_workflow_run", NULL) == 0);
    //  Migration 14: backfills, none
    XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_backfill", NULL) == 0);
    XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_job_log"
                                       " WHERE flow_run_id IS NOT NULL", NULL) == 0);
    //  Migration 12: the jobs kept have no agent tags
    XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_job_info"
                                " WHERE agent_tags = ''", NULL)
               == XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_job_info", NULL));
    //  Migration 11: no calendars, and every job's calendar ""
    XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_calendar", NULL) == 0);
    XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_job_info WHERE calendar <> ''",
                                NULL) == 0);
    //  Migration 10: the index of failed runs, over the rows kept
    XXL_CHECK (XXL_TEST_SCALAR (store, xxl_test_pg
        ? "SELECT COUNT(*) FROM pg_indexes WHERE indexname = 'xxl_job_log_fails'"
        : "SELECT COUNT(*) FROM sqlite_master WHERE name = 'xxl_job_log_fails'", NULL) == 1);
    //  Migration 9: users, tokens and sessions, empty
    XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_user", NULL) == 0);
    XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_token", NULL) == 0);
    XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_session", NULL) == 0);
    //  Migration 18 (PostgreSQL's 19): a session's remember flag
    XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_session WHERE remember = 0",
                                NULL) == 0);
    //  Migration 8: sixteen shares, nobody's, each with the store's fired marks
    XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_lease WHERE owner = ''"
                                " AND epoch = 0 AND fired_until = 1234 AND fired_sent = 999",
                                NULL) == XXL_STORE_SHARES);
    //  (schema 7's pair stays for its schedulers during a rolling upgrade)
    XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_job_fired", NULL) == 1);
    //  Migration 7: the audit table, empty, with its index on time
    XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_audit", NULL) == 0);
    XXL_CHECK (XXL_TEST_SCALAR (store, xxl_test_pg
        ? "SELECT COUNT(*) FROM pg_indexes WHERE schemaname = current_schema ()"
          " AND indexname = 'xxl_audit_time'"
        : "SELECT COUNT(*) FROM sqlite_master WHERE name = 'xxl_audit_time'", NULL) == 1);
    XXL_CHECK (XXL_TEST_SCALAR (store, index_count, NULL) == 0);
    //  Migration 6: the glue versions kept are numbered 1.. per job, in order
    XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT MIN(version) FROM xxl_job_logglue WHERE job_id = ?",
                                 "i", jid) == 1);
    XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT MAX(version) FROM xxl_job_logglue WHERE job_id = ?",
                                 "i", jid) == 30);
    XXL_CHECK (XXL_TEST_SCALAR (store, "SELECT COUNT(*) FROM xxl_job_logglue a, xxl_job_logglue b"
                                 " WHERE a.job_id = b.job_id AND a.id < b.id AND a.version >= b.version",
                                 NULL) == 0);
    XXL_CHECK (xxl_store_glue_add (store, jid, "GLUE_SHELL", "echo", "r", 37) == 31);
    XXL_CHECK (xxl_store_job_load (store, jid, &loaded) == 0);
    xxl_job_free (&loaded);
    //  The report's count over more rows than a chunk (50,000 on SQLite),
    //  many sharing a trigger time across the chunks' bounds: the same as
    //  one aggregate (PostgreSQL counts in one statement: fewer rows there,
    //  its ids come one by one from xxl_log_id_next)
#define XXL_MANY_ROWS(series) \
        "INSERT INTO xxl_job_log (job_group, job_id, trigger_time, trigger_code, handle_code)" \
        " SELECT 1, 1, 5000000000000 + n / 7, CASE WHEN n % 5 = 0 THEN 500 ELSE 200 END," \
        " CASE WHEN n % 3 = 0 THEN 0 WHEN n % 11 = 0 THEN 500 ELSE 200 END FROM " series
    XXL_CHECK (XXL_TEST_EXEC (store, xxl_test_pg
        ? XXL_MANY_ROWS ("generate_series (1, 12001) AS s (n)")
        : "WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 120001) "
          XXL_MANY_ROWS ("s"), NULL) >= 0);
    int64_t counted [3] = { -1, -1, -1 };
    XXL_CHECK (xxl_store_report_count (store, 5000000000000LL, 5000000100000LL, &counted [0],
                                       &counted [1], &counted [2]) == 0);
    const char *const sums [3] = {
        "SELECT COUNT(*) FROM xxl_job_log WHERE trigger_time >= 5000000000000"
        " AND trigger_time < 5000000100000 AND trigger_code IN (0, 200) AND handle_code = 0",
        "SELECT COUNT(*) FROM xxl_job_log WHERE trigger_time >= 5000000000000"
        " AND trigger_time < 5000000100000 AND handle_code = 200",
        "SELECT COUNT(*) FROM xxl_job_log WHERE trigger_time >= 5000000000000"
        " AND trigger_time < 5000000100000 AND (trigger_code NOT IN (0, 200)"
        " OR handle_code NOT IN (0, 200))" };
    for (int i = 0; i < 3; i++)
        XXL_CHECK (counted [i] > 0 && counted [i] == XXL_TEST_SCALAR (store, sums [i], NULL));
    XXL_CHECK (counted [0] + counted [1] + counted [2] >= (xxl_test_pg? 12001: 120001));
    //  (a bound inside a run of equal times: the rows on either side)
    int64_t part [2][3];
    XXL_CHECK (xxl_store_report_count (store, 5000000000000LL, 5000000000857LL, &part [0][0],
                                       &part [0][1], &part [0][2]) == 0
               && xxl_store_report_count (store, 5000000000857LL, 5000000100000LL,
                                          &part [1][0], &part [1][1], &part [1][2]) == 0);
    for (int i = 0; i < 3; i++)
        XXL_CHECK (part [0][i] + part [1][i] == counted [i]);
    XXL_CHECK (XXL_TEST_EXEC (store, "DELETE FROM xxl_job_log WHERE trigger_time >= 5000000000000",
                              NULL) >= 0);
    s_test_group_sets (store);
    //  PostgreSQL's own: connections side by side on the database; and
    //  the same changes on both backends give the same replies
    if (xxl_test_pg) {
        s_pg_connections (store, path, gid, jid);
        char parity [256];
        snprintf (parity, sizeof parity, "%s/parity.db", s_dir);
        s_parity (store, path, parity);
    }
    else
        printf ("# skipped on SQLite: PostgreSQL's connections and the parity of both stores"
                " (no XXL_TEST_STORE_URL)\n");
    //  A database from a newer xxl is refused with the reason
    XXL_TEST_EXEC (store, xxl_test_pg? "UPDATE xxl_schema SET version = 999"
                                     : "PRAGMA user_version = 999", NULL);
    xxl_store_destroy (&store);
    XXL_CHECK (xxl_store_new (path, err, sizeof err) == NULL);
    XXL_CHECK (strstr (err, "newer"));

    zsys_dir_delete ("%s", s_dir);
    char *cmd = zsys_sprintf ("rm -rf %s", s_dir);
    if (system (cmd)) {}
    zstr_free (&cmd);
    return xxl_test_done ();
}
