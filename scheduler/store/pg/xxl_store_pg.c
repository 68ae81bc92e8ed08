/*  xxl_store_pg.c -- the top of the PostgreSQL backend: connecting and
    migrating the schema, the session, transactions and reconnection, and
    the method table.

    Layers of the backend, calls going down only: this file; then
    xxl_store_pg_rows.c (its own row calls, the dialect's texts),
    _lease.c (calls by share), _batch.c (deferred and batched log rows)
    and _driver.c (the driver of the shared SQL); then _conn.c (statement
    cache, binding, running, errors).  What a lower file needs of this one
    it reaches through the handle: the method table (begin, commit,
    rollback) and self->flush (set here to pgx_flush).

    How the store's contracts (xxl_store.h) map onto PostgreSQL:
    -   Advisory locks, all freed by commit or rollback.  A fence lock
        per share (XXL_PG_FENCE_CLASS, share): begin takes those of the
        shares the handle holds shared (in BEGIN's round trip), so they
        never wait for each other; a lease take of a share someone owns
        (s_lease_take) needs that share's alone, tried without waiting:
        a share never changes hands in the middle of a transaction of the
        scheduler that held it (the guarantee the single write lock gave,
        docs/design.md, "Leases"), and schedulers of other shares are not
        in the way.  The write lock (XXL_PG_WRITE_LOCK,
        exclusive): taken by the transaction's first statement that is
        not one of the lock-free calls (pgx_lock, from the statement
        layer), so every read-then-write of the engine but those calls
        runs alone, as under SQLite's lock.  The lock-free calls (the
        s_free_* wrappers) are those of the runs' hot path: guarded
        single-row changes that PostgreSQL's row locks make atomic (a
        run's row that is not planned, with this handle's own id, its
        shards, accept, stamp, route and results; a FIX_DELAY resume), an
        audit row, and reads that only route or follow a run.  Two
        schedulers doing only those wait for each other only on a row
        both write.  A planned row (a fire) and a job's read (the api's
        edits read, then save) take the write lock.  A write outside a
        transaction takes both in a transaction of its own, as an
        autocommit write takes SQLite's.  Lock order: fences, the write
        lock, rows.  A transaction that changed rows lock-free and then
        needs the write lock takes it at once if free, else rolls back to
        the savepoint begin set after the fences, waits, and runs those
        statements again (pgx_lock): it never waits for the lock holding
        rows its holder may wait for.
    -   data_version: the sequence xxl_data_versions, drawn once by every
        transaction that wrote, just after its COMMIT in the same round
        trip (so whoever sees the new value sees the rows; a sequence
        holds no lock).  The handle remembers the value its own commit
        drew (version_seen), so its own commits do not look like
        another's; it reports a number that moves when the sequence moved
        past that.  begin reads it in its round trip, so data_version's
        first ask inside a transaction (the engine's, at every turn's
        start) costs none; a later one reads the sequence (lock-free): a
        commit of another may come in the middle of a transaction here.
        A transaction that held the write lock (job edits take it) also
        draws once before its COMMIT, so that whoever reads the sequence
        after that COMMIT sees a change (the planner asks before fires
        that go without the store: a stop is not followed by a fire).
    -   Log ids: the sequence xxl_log_ids, by blocks of
        XXL_PG_LOG_ID_BLOCK: log_next_id hands the engine runs of
        XXL_STORE_LOG_ID_RUN ids from this handle's block, drawing a new
        block when fewer are left; no one else gets an id of it, and
        nextval waits for no one.  A row added with an id past the block
        moves the sequence past it at commit; an automatic id is the
        column's default (xxl_log_id_next: nextval).  Ids are never
        reused, even after a rollback; they are not dense (a block's
        unused ids at a restart, a run's at the block's end).  The other
        tables' ids are identity columns (never reused either).  Both
        sequences are schema 16's (migration 16 makes them past the
        counter row's values and drops the row; it waits for no older
        scheduler: it refuses while one holds a share).
    -   Timeouts, set on connect: statement_timeout 10 s (10 minutes on a
        side connection: xxl_store_pg_side_new), lock_timeout
        5 s (a transaction waits up to 5 s for the write lock, as
        SQLite's busy timeout), idle_in_transaction_session_timeout 2 s (a scheduler
        frozen or cut off inside a transaction loses its session, and the
        lock, after 2 s: below ha/lease_ms's default of 3 s, so that the
        others can take its shares over when its lease ends; a turn's
        transaction is idle only between its statements, for
        milliseconds).  libpq's connect_timeout 10 s and TCP keepalives (idle 10 s,
        interval 5 s, 3 probes, tcp_user_timeout 20 s) unless the URL sets
        them, so a peer cut off does not hang a call.  Migrations run with
        no statement or lock timeout.
    -   Errors: every call returns -1 with the reason; PostgreSQL aborts a
        transaction at its first error, so from then on nothing is sent
        and commit fails with that first cause (txn_lost).  A lost
        connection fails every call with that reason; the next begin
        resets it once (PQreset; not more often than every
        XXL_PG_RETRY_MS), so a scheduler outlives a database restart.
    -   The WAL is PostgreSQL's own: wal_set_size ignored, wal_due 0,
        wal_restart 0.

    MUST: a handle leaves here with its method table, its driver (checked:
    xxl_store_driver_ok), its statement cache and its flush hook set.

    Speed: a turn's new manual rows and a CALLBACK's items go as one
    statement each (xxl_store_pg_batch.c); every other call is one
    synchronous round trip.
*/

#include "xxl_store_pg_int.h"

#include <assert.h>
#include <czmq.h>
#include <libpq-fe.h>
#include <inttypes.h>
#include <stdarg.h>

//  A lost connection is tried again by begin at most this often
#define XXL_PG_RETRY_MS 1000
//  The advisory lock key (the bytes of "xxl_migr" read as a big-endian
//  integer) migrations take, so that two schedulers opening an empty
//  database do not both create it (the write lock's: xxl_store_pg_int.h)
#define XXL_PG_MIGRATE_LOCK "8680807438869948274"
//  Migration 16's refusal (an older scheduler holds a share), and how long
//  opening tries it again before it gives up (a lease runs out within
//  ha/lease_ms, 3 s by default)
#define XXL_PG_UPGRADE_REFUSED "needs every scheduler of an older version stopped first"
#define XXL_PG_UPGRADE_WAIT_MS 10000
//  The session's settings (see the file header)
#define XXL_PG_SESSION \
    "SET statement_timeout = 10000; SET lock_timeout = 5000;" \
    " SET idle_in_transaction_session_timeout = 2000; SET client_min_messages = warning"
//  A side connection's statement_timeout (ms)
#define XXL_PG_SIDE_TIMEOUT "600000"

//  The migrations, in order; schema version N is reached by running
//  s_migrations [N-1] (SQLite's steps, xxl_store_sqlite.c, in
//  PostgreSQL's words: BIGINT for integers and times, double precision
//  for REAL, identity columns for AUTOINCREMENT).  Append only.
static const char *s_migrations [] = {
    //  1: XXL-JOB's tables, plus schedule_time/trigger_type on logs and a
    //  time zone per job; and this backend's counter row (data_version,
    //  log_seq) with the log ids' default drawn from it
    "CREATE TABLE xxl_job_group ("
    "  id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
    "  app_name TEXT NOT NULL UNIQUE,"
    "  title TEXT NOT NULL DEFAULT '',"
    "  address_type BIGINT NOT NULL DEFAULT 0,"
    "  address_list TEXT,"
    "  update_time BIGINT NOT NULL DEFAULT 0);"
    "CREATE TABLE xxl_job_info ("
    "  id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
    "  job_group BIGINT NOT NULL,"
    "  job_desc TEXT NOT NULL DEFAULT '',"
    "  add_time BIGINT NOT NULL DEFAULT 0,"
    "  update_time BIGINT NOT NULL DEFAULT 0,"
    "  author TEXT NOT NULL DEFAULT '',"
    "  alarm_email TEXT NOT NULL DEFAULT '',"
    "  schedule_type TEXT NOT NULL DEFAULT 'NONE',"
    "  schedule_conf TEXT NOT NULL DEFAULT '',"
    "  misfire_strategy TEXT NOT NULL DEFAULT 'DO_NOTHING',"
    "  executor_route_strategy TEXT NOT NULL DEFAULT 'FIRST',"
    "  executor_handler TEXT NOT NULL DEFAULT '',"
    "  executor_param TEXT NOT NULL DEFAULT '',"
    "  executor_block_strategy TEXT NOT NULL DEFAULT 'SERIAL_EXECUTION',"
    "  executor_timeout BIGINT NOT NULL DEFAULT 0,"
    "  executor_fail_retry_count BIGINT NOT NULL DEFAULT 0,"
    "  glue_type TEXT NOT NULL DEFAULT 'BEAN',"
    "  glue_source TEXT NOT NULL DEFAULT '',"
    "  glue_remark TEXT NOT NULL DEFAULT '',"
    "  glue_updatetime BIGINT NOT NULL DEFAULT 0,"
    "  child_jobid TEXT NOT NULL DEFAULT '',"
    "  trigger_status BIGINT NOT NULL DEFAULT 0,"
    "  trigger_last_time BIGINT NOT NULL DEFAULT 0,"
    "  trigger_next_time BIGINT NOT NULL DEFAULT 0,"
    "  timezone TEXT NOT NULL DEFAULT '');"
    "CREATE INDEX xxl_job_info_group ON xxl_job_info (job_group);"
    "CREATE INDEX xxl_job_info_next ON xxl_job_info (trigger_next_time) WHERE trigger_status = 1;"
    "CREATE TABLE xxl_store_state (id INTEGER PRIMARY KEY CHECK (id = 1),"
    "  data_version BIGINT NOT NULL DEFAULT 0, log_seq BIGINT NOT NULL DEFAULT 0);"
    "INSERT INTO xxl_store_state (id) VALUES (1);"
    "CREATE FUNCTION xxl_log_id_next () RETURNS BIGINT LANGUAGE sql VOLATILE"
    "  AS 'UPDATE xxl_store_state SET log_seq = log_seq + 1 RETURNING log_seq';"
    "CREATE TABLE xxl_job_log ("
    "  id BIGINT PRIMARY KEY DEFAULT xxl_log_id_next (),"
    "  job_group BIGINT NOT NULL,"
    "  job_id BIGINT NOT NULL,"
    "  executor_address TEXT,"
    "  executor_handler TEXT,"
    "  executor_param TEXT,"
    "  executor_sharding_param TEXT,"
    "  executor_fail_retry_count BIGINT NOT NULL DEFAULT 0,"
    "  trigger_time BIGINT NOT NULL,"
    "  trigger_code BIGINT NOT NULL DEFAULT 0,"
    "  trigger_msg TEXT,"
    "  trigger_type TEXT,"
    "  schedule_time BIGINT,"
    "  handle_time BIGINT,"
    "  handle_code BIGINT NOT NULL DEFAULT 0,"
    "  handle_msg TEXT,"
    "  alarm_status BIGINT NOT NULL DEFAULT 0);"
    "CREATE INDEX xxl_job_log_job ON xxl_job_log (job_id, id);"
    "CREATE INDEX xxl_job_log_time ON xxl_job_log (trigger_time);"
    "CREATE UNIQUE INDEX xxl_job_log_schedule ON xxl_job_log (job_id, schedule_time)"
    "  WHERE schedule_time IS NOT NULL;"
    "CREATE INDEX xxl_job_log_unsent ON xxl_job_log (id) WHERE trigger_code = 0;"
    "CREATE INDEX xxl_job_log_running ON xxl_job_log (trigger_time)"
    "  WHERE trigger_code = 200 AND handle_code = 0;"
    "CREATE INDEX xxl_job_log_failed ON xxl_job_log (id) WHERE alarm_status = 0"
    "  AND (trigger_code NOT IN (0, 200) OR handle_code NOT IN (0, 200));"
    "CREATE TABLE xxl_job_logglue ("
    "  id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
    "  job_id BIGINT NOT NULL,"
    "  glue_type TEXT,"
    "  glue_source TEXT,"
    "  glue_remark TEXT NOT NULL DEFAULT '',"
    "  add_time BIGINT NOT NULL DEFAULT 0,"
    "  update_time BIGINT NOT NULL DEFAULT 0);"
    "CREATE INDEX xxl_job_logglue_job ON xxl_job_logglue (job_id, id);"
    "CREATE TABLE xxl_job_registry ("
    "  id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
    "  registry_group TEXT NOT NULL,"
    "  registry_key TEXT NOT NULL,"
    "  registry_value TEXT NOT NULL,"
    "  update_time BIGINT NOT NULL DEFAULT 0,"
    "  UNIQUE (registry_group, registry_key, registry_value));"
    "CREATE INDEX xxl_job_registry_time ON xxl_job_registry (update_time);"
    "CREATE TABLE xxl_job_log_report ("
    "  id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
    "  trigger_day BIGINT NOT NULL UNIQUE,"
    "  running_count BIGINT NOT NULL DEFAULT 0,"
    "  suc_count BIGINT NOT NULL DEFAULT 0,"
    "  fail_count BIGINT NOT NULL DEFAULT 0,"
    "  update_time BIGINT NOT NULL DEFAULT 0);"
    "CREATE TABLE xxl_job_lock (lock_name TEXT PRIMARY KEY);"
    "INSERT INTO xxl_job_lock (lock_name) VALUES ('schedule_lock');",
    //  2: retries with an interval, exponential backoff and a cap; reports
    //  by day
    "ALTER TABLE xxl_job_info ADD COLUMN retry_interval BIGINT NOT NULL DEFAULT 0;"
    "ALTER TABLE xxl_job_info ADD COLUMN retry_backoff DOUBLE PRECISION NOT NULL DEFAULT 1;"
    "ALTER TABLE xxl_job_info ADD COLUMN retry_max_interval BIGINT NOT NULL DEFAULT 0;"
    "CREATE INDEX xxl_job_log_job_time ON xxl_job_log (job_id, trigger_time);",
    //  3: fired_until and fired_sent (xxl_store_sqlite.c)
    "CREATE TABLE xxl_job_fired (id INTEGER PRIMARY KEY CHECK (id = 1),"
    "  fired_until BIGINT NOT NULL DEFAULT 0, fired_sent BIGINT NOT NULL DEFAULT 0);"
    "INSERT INTO xxl_job_fired (id, fired_until, fired_sent) VALUES (1, 0, 0);",
    //  4: no query uses xxl_job_log_job_time
    "DROP INDEX IF EXISTS xxl_job_log_job_time;",
    //  5: one row per planned instant and shard.  xxl_shard_index is
    //  SQLite's COALESCE (CAST (substr (p, 1, instr (p, '/') - 1) AS
    //  INTEGER), 0): the integer that starts the part before the first
    //  '/', 0 when there is none or no '/' (self-contained: an index
    //  expression must not depend on the search path)
    "CREATE OR REPLACE FUNCTION xxl_shard_index (p TEXT) RETURNS BIGINT LANGUAGE sql IMMUTABLE"
    "  AS $$SELECT CASE WHEN strpos (p, '/') > 0 THEN COALESCE (CAST (substring ("
    "  substr (p, 1, strpos (p, '/') - 1) FROM '^[[:space:]]*([-+]?[0-9]{1,18})')"
    "  AS BIGINT), 0) ELSE 0 END$$;"
    "DROP INDEX IF EXISTS xxl_job_log_schedule;"
    "CREATE UNIQUE INDEX xxl_job_log_schedule ON xxl_job_log (job_id, schedule_time,"
    "  xxl_shard_index (executor_sharding_param)) WHERE schedule_time IS NOT NULL;",
    //  6: glue versions get per-job numbers 1, 2, ... that never change
    "ALTER TABLE xxl_job_logglue ADD COLUMN version BIGINT NOT NULL DEFAULT 0;"
    "UPDATE xxl_job_logglue SET version = (SELECT COUNT(*) FROM xxl_job_logglue g"
    "  WHERE g.job_id = xxl_job_logglue.job_id AND g.id <= xxl_job_logglue.id);"
    "DROP INDEX IF EXISTS xxl_job_logglue_job;"
    "CREATE UNIQUE INDEX xxl_job_logglue_version ON xxl_job_logglue (job_id, version);",
    //  7: the audit of the client api's changes
    "CREATE TABLE xxl_audit (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
    "  time BIGINT NOT NULL, who TEXT NOT NULL, role TEXT NOT NULL, type TEXT NOT NULL,"
    "  target BIGINT NOT NULL DEFAULT 0, code BIGINT NOT NULL);"
    "CREATE INDEX xxl_audit_time ON xxl_audit (time);",
    //  8: planning shared by leases on 16 shares of the jobs, each with its
    //  own fired marks starting from the single pair (kept, unread, for
    //  schedulers of schema 7 during a rolling upgrade); the schedulers'
    //  beats in xxl_node
    "CREATE TABLE xxl_lease (share INTEGER PRIMARY KEY, owner TEXT NOT NULL DEFAULT '',"
    "  epoch BIGINT NOT NULL DEFAULT 0, expires BIGINT NOT NULL DEFAULT 0,"
    "  fired_until BIGINT NOT NULL DEFAULT 0, fired_sent BIGINT NOT NULL DEFAULT 0);"
    "INSERT INTO xxl_lease (share, fired_until, fired_sent)"
    "  SELECT n, (SELECT fired_until FROM xxl_job_fired), (SELECT fired_sent FROM xxl_job_fired)"
    "  FROM generate_series (0, 15) AS n;"
    "CREATE TABLE xxl_node (name TEXT PRIMARY KEY, beat BIGINT NOT NULL);",
    //  9: the HTTP side's console users (a crypt(3) hash), bearer tokens
    //  and sessions (the SHA-256 of their value only), shared by every
    //  scheduler of the store
    "CREATE TABLE xxl_user (username TEXT PRIMARY KEY, password TEXT NOT NULL,"
    "  role TEXT NOT NULL, apps TEXT NOT NULL DEFAULT '', add_time BIGINT NOT NULL);"
    "CREATE TABLE xxl_token (name TEXT PRIMARY KEY, hash TEXT NOT NULL UNIQUE,"
    "  role TEXT NOT NULL, apps TEXT NOT NULL DEFAULT '', add_time BIGINT NOT NULL);"
    "CREATE TABLE xxl_session (id TEXT PRIMARY KEY, username TEXT NOT NULL,"
    "  csrf TEXT NOT NULL, add_time BIGINT NOT NULL, seen BIGINT NOT NULL);"
    "CREATE INDEX xxl_session_user ON xxl_session (username);",
    //  10: failed runs, newest first, for LOG_LIST's status filter (only
    //  failed rows are written to it)
    "CREATE INDEX xxl_job_log_fails ON xxl_job_log (id)"
    "  WHERE trigger_code NOT IN (0, 200) OR handle_code NOT IN (0, 200);",
    //  11: calendars and the job's calendar (xxl_store_sqlite.c)
    "CREATE TABLE xxl_calendar (name TEXT PRIMARY KEY, dates TEXT NOT NULL DEFAULT '',"
    "  exclude_cron TEXT NOT NULL DEFAULT '', timezone TEXT NOT NULL DEFAULT '',"
    "  add_time BIGINT NOT NULL, update_time BIGINT NOT NULL);"
    "ALTER TABLE xxl_job_info ADD COLUMN calendar TEXT NOT NULL DEFAULT '';",
    //  12: the agent tags a job's agents must have (xxl_store_sqlite.c)
    "ALTER TABLE xxl_job_info ADD COLUMN agent_tags TEXT NOT NULL DEFAULT '';",
    //  13: workflows (DESIGN §12) and their runs; a node's start is a log
    //  row marked with its run, node and attempt, unique: a node's row is
    //  its one start decision (docs/workflows.md "Runs under faults")
    "CREATE TABLE xxl_workflow (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
    "  name TEXT NOT NULL, description TEXT NOT NULL DEFAULT '', definition TEXT NOT NULL,"
    "  schedule_type TEXT NOT NULL DEFAULT 'NONE', schedule_conf TEXT NOT NULL DEFAULT '',"
    "  timezone TEXT NOT NULL DEFAULT '', misfire_strategy TEXT NOT NULL DEFAULT 'DO_NOTHING',"
    "  calendar TEXT NOT NULL DEFAULT '',"
    "  status BIGINT NOT NULL DEFAULT 0, next_time BIGINT NOT NULL DEFAULT 0,"
    "  add_time BIGINT NOT NULL, update_time BIGINT NOT NULL);"
    "CREATE INDEX xxl_workflow_next ON xxl_workflow (next_time) WHERE status = 1;"
    "CREATE TABLE xxl_workflow_run (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
    "  workflow_id BIGINT NOT NULL, status TEXT NOT NULL, param TEXT NOT NULL DEFAULT '',"
    "  trigger_type TEXT NOT NULL DEFAULT 'MANUAL', trigger_time BIGINT NOT NULL,"
    "  end_time BIGINT NOT NULL DEFAULT 0, definition TEXT NOT NULL,"
    "  killed TEXT NOT NULL DEFAULT '');"
    "CREATE INDEX xxl_workflow_run_flow ON xxl_workflow_run (workflow_id, id);"
    "CREATE INDEX xxl_workflow_run_running ON xxl_workflow_run (id) WHERE status = 'RUNNING';"
    "ALTER TABLE xxl_job_log ADD COLUMN flow_run_id BIGINT;"
    "ALTER TABLE xxl_job_log ADD COLUMN flow_node TEXT;"
    "ALTER TABLE xxl_job_log ADD COLUMN flow_attempt BIGINT;"
    "CREATE UNIQUE INDEX xxl_job_log_flow ON xxl_job_log (flow_run_id, flow_node, flow_attempt,"
    "  xxl_shard_index (executor_sharding_param)) WHERE flow_run_id IS NOT NULL;",
    //  14: backfills (DESIGN §13): a job's planned fire times over a range,
    //  made one run each (the log's unique (job, schedule time, shard)
    //  keeps an instant to one run); the cursor is the last instant handled
    "CREATE TABLE xxl_backfill (id BIGINT PRIMARY KEY, job_id BIGINT NOT NULL,"
    "  from_time BIGINT NOT NULL, to_time BIGINT NOT NULL, per_second BIGINT NOT NULL,"
    "  cursor_time BIGINT NOT NULL, total BIGINT NOT NULL DEFAULT 0,"
    "  made BIGINT NOT NULL DEFAULT 0, skipped BIGINT NOT NULL DEFAULT 0,"
    "  state TEXT NOT NULL DEFAULT 'RUNNING', started_by TEXT NOT NULL DEFAULT '',"
    "  msg TEXT NOT NULL DEFAULT '', add_time BIGINT NOT NULL, update_time BIGINT NOT NULL);"
    "CREATE INDEX xxl_backfill_job ON xxl_backfill (job_id, id);"
    "CREATE INDEX xxl_backfill_running ON xxl_backfill (id) WHERE state = 'RUNNING';",
    //  15: a job's maxRunning, and the rows with no result by job
    //  (xxl_store_sqlite.c)
    "ALTER TABLE xxl_job_info ADD COLUMN max_running BIGINT NOT NULL DEFAULT 0;"
    "CREATE INDEX xxl_job_log_open ON xxl_job_log (job_id, id) WHERE handle_code = 0;",
    //  16 (PostgreSQL's own): log ids and data_version from sequences, no
    //  longer from the counter row, which goes.  Refused while a share's
    //  lease has not expired: a scheduler of an older version (which
    //  draws ids from the counter and does not fence) holds it, and must be
    //  stopped first (docs/operations.md, "Upgrades").  The sequences
    //  start past every id in use and past the counter; the log ids'
    //  default draws from the first; an older scheduler that still runs
    //  fails its turns on the missing row rather than draw ids twice
    "DO $$ DECLARE held TEXT; BEGIN"
    "  SELECT string_agg (DISTINCT owner, ', ') INTO held FROM xxl_lease WHERE owner <> ''"
    "   AND expires > (EXTRACT (EPOCH FROM clock_timestamp ()) * 1000)::BIGINT;"
    "  IF held IS NOT NULL THEN RAISE EXCEPTION 'schema 16 " XXL_PG_UPGRADE_REFUSED ": %"
    " still hold shares of this database (a stopped one''s are free once its lease"
    " expires, ha/lease_ms)', held; END IF; END $$;"
    "DROP SEQUENCE IF EXISTS xxl_log_ids, xxl_data_versions;"      //  (made again)
    "CREATE SEQUENCE xxl_log_ids INCREMENT BY 4096 MINVALUE 1;"
    "SELECT setval ('xxl_log_ids', GREATEST (log_seq,"
    "  (SELECT COALESCE (MAX (id), 0) FROM xxl_job_log)) + 1, false) FROM xxl_store_state;"
    "CREATE SEQUENCE xxl_data_versions MINVALUE 0;"
    "SELECT setval ('xxl_data_versions', data_version + 1, true) FROM xxl_store_state;"
    "CREATE OR REPLACE FUNCTION xxl_log_id_next () RETURNS BIGINT LANGUAGE sql VOLATILE"
    "  AS 'SELECT nextval (''xxl_log_ids'')';"
    "DROP TABLE xxl_store_state;",
    //  17: a job's slots are counted from the unsent and running indexes
    //  (log_slot_ids); the open rows' index cost two index writes a run
    "DROP INDEX IF EXISTS xxl_job_log_open;",
    //  18: the rows that count towards their job's maxRunning, by job
    //  (xxl_store_sqlite.c's 17); and the rows with no result by id, which
    //  the batched result update (xxl_store_pg_batch.c) joins its batch to:
    //  without them the planner, its statistics behind a fast-growing
    //  table, hashes the batch against a scan of the whole table (94 ms a
    //  batch of 1,000 results in group P, 11 ms with them)
    "ALTER TABLE xxl_job_log ADD COLUMN IF NOT EXISTS slot BIGINT NOT NULL DEFAULT 0;"
    "UPDATE xxl_job_log SET slot = 1 WHERE id IN (SELECT id FROM xxl_job_log"
    "  WHERE trigger_code = 0 UNION ALL SELECT id FROM xxl_job_log"
    "  WHERE trigger_code = 200 AND handle_code = 0) AND handle_code = 0"
    "  AND job_id IN (SELECT id FROM xxl_job_info WHERE max_running > 0);"
    "CREATE INDEX IF NOT EXISTS xxl_job_log_slots ON xxl_job_log (job_id, id)"
    "  WHERE slot = 1 AND handle_code = 0;"
    "CREATE INDEX IF NOT EXISTS xxl_job_log_open_ids ON xxl_job_log (id) WHERE handle_code = 0;"
    "CREATE INDEX IF NOT EXISTS xxl_job_info_limited ON xxl_job_info (id) WHERE max_running > 0;",
    //  19: remembered sessions (xxl_store_sqlite.c's 18)
    "ALTER TABLE xxl_session ADD COLUMN IF NOT EXISTS remember BIGINT NOT NULL DEFAULT 0;",
    //  20: the open runs by (trigger_time, id), as SQLite's index on
    //  trigger_time holds them (its entries end with the rowid): the
    //  pages of log_open_ids_all seek past the runs of one instant
    //  already read instead of reading them all again each page
    "DROP INDEX IF EXISTS xxl_job_log_running;"
    "CREATE INDEX xxl_job_log_running ON xxl_job_log (trigger_time, id)"
    "  WHERE trigger_code = 200 AND handle_code = 0;",
    //  21: the planned instants' unique index leads with the instant
    //  (xxl_store_sqlite.c's 19)
    "DROP INDEX IF EXISTS xxl_job_log_schedule;"
    "CREATE UNIQUE INDEX xxl_job_log_schedule ON xxl_job_log (schedule_time, job_id,"
    "  xxl_shard_index (executor_sharding_param)) WHERE schedule_time IS NOT NULL;",
    //  22: the jobs that have child jobs (xxl_store_sqlite.c's 21)
    "CREATE INDEX IF NOT EXISTS xxl_job_info_parents ON xxl_job_info (id)"
    "  WHERE child_jobid != '';",
};
_Static_assert (XXL_PG_LOG_ID_BLOCK == 4096, "migration 16 says 4096");
#define XXL_SCHEMA_VERSION ((int) (sizeof s_migrations / sizeof s_migrations [0]))

static int
s_simple (store_t *self, const char *sql)
{
    return pgx_simple_value (self, sql, NULL);
}

//  The session's settings (XXL_PG_SESSION); a side connection (the
//  reporter's, which reads the last days' rows in one statement, outside
//  transactions) may run a statement 10 minutes, not 10 s
static int
s_settings (store_t *self)
{
    if (s_simple (self, XXL_PG_SESSION))
        return -1;
    return self->side? s_simple (self, "SET statement_timeout = " XXL_PG_SIDE_TIMEOUT): 0;
}

static void
s_notice (void *arg, const char *message)
{
    (void) arg;
    (void) message;                     //  (client_min_messages = warning)
}

//  The session's settings, on a new or reset connection
static int
s_session (store_t *self)
{
    PQsetNoticeProcessor (self->conn, s_notice, NULL);
    const char *encoding = PQparameterStatus (self->conn, "server_encoding");
    if (!encoding || strneq (encoding, "UTF8"))
        //  (length and substr must count characters, as SQLite's do)
        return pgx_failf (self, "the database's encoding is %s; xxl needs UTF8"
                                " (CREATE DATABASE ... ENCODING 'UTF8')",
                          encoding? encoding: "unknown");
    return s_settings (self);
}

//  Reconnects a lost connection (PQreset): prepared statements are gone
//  with the old session.  0, or -1 with the reason
static int
s_reconnect (store_t *self)
{
    int64_t now = zclock_mono ();
    if (now < self->reconnect_at)
        return pgx_failf (self, "the connection to PostgreSQL is lost; tried again at most"
                                " once a second");
    zhashx_purge (self->statements);
    PQreset (self->conn);
    if (PQstatus (self->conn) != CONNECTION_OK || s_session (self)) {
        if (PQstatus (self->conn) != CONNECTION_OK)
            pgx_fail (self, "cannot reconnect to PostgreSQL", NULL);
        self->reconnect_at = zclock_mono () + XXL_PG_RETRY_MS;
        return -1;
    }
    self->reconnect_at = 0;
    zsys_info ("store: reconnected to PostgreSQL");
    return 0;
}

//  --------------------------------------------------------------------
//  Opening and migrating

static int
s_migrate (store_t *self)
{
    //  (a migration may take long on a big database: no timeouts; one
    //  migrator at a time, the others wait and find the schema done)
    if (s_simple (self, "SET statement_timeout = 0; SET lock_timeout = 0;"
                        " SELECT pg_advisory_lock (" XXL_PG_MIGRATE_LOCK ")"))
        return -1;
    int rc = s_simple (self,
        "CREATE TABLE IF NOT EXISTS xxl_schema (version INTEGER NOT NULL);"
        "INSERT INTO xxl_schema (version) SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM xxl_schema)");
    int version = rc? -1: pgx_schema_version (&self->sql.base);
    if (version < 0)
        rc = -1;
    else
    if (version > XXL_SCHEMA_VERSION) {
        snprintf (self->error, sizeof self->error,
                  "database schema version %d is newer than this xxl-scheduler knows (%d)",
                  version, XXL_SCHEMA_VERSION);
        rc = -1;
    }
    for (; rc == 0 && version < XXL_SCHEMA_VERSION; version++) {
        char *step = zsys_sprintf ("BEGIN; SELECT pg_advisory_xact_lock (" XXL_PG_WRITE_LOCK ");"
                                   " %s; UPDATE xxl_schema SET version = %d; COMMIT",
                                   s_migrations [version], version + 1);
        rc = step? s_simple (self, step): -1;
        //  (migration 16 refused while an older scheduler's lease runs:
        //  one just stopped frees its shares within its lease; tried
        //  again for XXL_PG_UPGRADE_WAIT_MS, then refused)
        for (int64_t until = zclock_mono () + XXL_PG_UPGRADE_WAIT_MS;
             rc && step && strstr (self->error, XXL_PG_UPGRADE_REFUSED)
             && PQstatus (self->conn) == CONNECTION_OK && zclock_mono () < until; ) {
            if (PQtransactionStatus (self->conn) != PQTRANS_IDLE)
                s_simple (self, "ROLLBACK");
            if (until - zclock_mono () >= XXL_PG_UPGRADE_WAIT_MS - 1)
                zsys_info ("store: waiting up to %d s for the schedulers of an older"
                           " version to stop: %s", XXL_PG_UPGRADE_WAIT_MS / 1000, self->error);
            zclock_sleep (500);
            rc = s_simple (self, step);
        }
        zstr_free (&step);
        if (rc) {
            char reason [sizeof self->error + 64];
            snprintf (reason, sizeof reason, "migration to schema %d failed: %s",
                      version + 1, self->error);
            if (PQtransactionStatus (self->conn) != PQTRANS_IDLE)
                s_simple (self, "ROLLBACK");
            snprintf (self->error, sizeof self->error, "%.500s", reason);
            break;
        }
        zsys_info ("store: migrated schema to version %d", version + 1);
    }
    if (PQstatus (self->conn) == CONNECTION_OK) {
        char cause [sizeof self->error];
        snprintf (cause, sizeof cause, "%s", self->error);
        if (s_simple (self, "SELECT pg_advisory_unlock (" XXL_PG_MIGRATE_LOCK ")")
        ||  s_settings (self))
            rc = -1;
        else
            snprintf (self->error, sizeof self->error, "%s", cause);
    }
    return rc;
}

//  The URL's password as written (percent-encoded or not): in the user
//  information ("user:password@") or a password= parameter; a new string
//  or NULL.  (libpq's messages about a URL it cannot parse quote it.)
static char *
s_raw_password (const char *url)
{
    const char *start = strstr (url, "://");
    if (start) {
        start += 3;
        size_t authority = strcspn (start, "/?");
        const char *at = NULL;
        for (const char *p = start; p < start + authority; p++)
            if (*p == '@')
                at = p;
        const char *colon = at? memchr (start, ':', (size_t) (at - start)): NULL;
        if (colon && at > colon + 1)
            return strndup (colon + 1, (size_t) (at - colon - 1));
    }
    const char *param = strstr (url, "password=");
    if (param) {
        param += 9;
        size_t length = strcspn (param, "&");
        if (length)
            return strndup (param, length);
    }
    return NULL;
}

static xxl_store_t *s_open (const char *url, bool side, char *err, size_t errlen);

xxl_store_t *
xxl_store_pg_new (const char *url, char *err, size_t errlen)
{
    return s_open (url, false, err, errlen);
}

xxl_store_t *
xxl_store_pg_side_new (const char *url, char *err, size_t errlen)
{
    return s_open (url, true, err, errlen);
}

static xxl_store_t *
s_open (const char *url, bool side, char *err, size_t errlen)
{
    char *raw = s_raw_password (url);
    char *parse_error = NULL;
    PQconninfoOption *options = PQconninfoParse (url, &parse_error);
    if (!options) {
        char line [400];
        pgx_one_line (line, sizeof line, parse_error? parse_error: "out of memory");
        pgx_replace (line, sizeof line, url, "(the URL)");
        pgx_redact (line, sizeof line, raw);
        snprintf (err, errlen, "the PostgreSQL URL is not valid: %s", line);
        PQfreemem (parse_error);
        free (raw);
        return NULL;
    }
    store_t *self = (store_t *) zmalloc (sizeof (store_t));
    self->sql.base.methods = &pgx_methods;
    self->sql.driver = &pgx_driver;
    assert (xxl_store_driver_ok (self->sql.driver));
    self->side = side;
    for (PQconninfoOption *option = options; option->keyword; option++)
        if (streq (option->keyword, "password") && option->val && *option->val)
            self->password = strdup (option->val);
    PQconninfoFree (options);
    self->statements = pgx_cache_new ();
    self->flush = pgx_flush;            //  (pgx_run flushes the deferred rows first)
    //  Defaults the URL may override (it comes after them), and the
    //  client's encoding, which it may not
    const char *keywords [] = {
        "connect_timeout", "application_name", "keepalives", "keepalives_idle",
        "keepalives_interval", "keepalives_count", "tcp_user_timeout", "dbname",
        "client_encoding", NULL
    };
    const char *values [] = {
        "10", "xxl-scheduler", "1", "10", "5", "3", "20000", url, "UTF8", NULL
    };
    self->conn = PQconnectdbParams (keywords, values, 1);
    if (!self->conn || PQstatus (self->conn) != CONNECTION_OK) {
        char line [400];
        pgx_one_line (line, sizeof line, self->conn? PQerrorMessage (self->conn): "out of memory");
        pgx_replace (line, sizeof line, url, "(the URL)");
        pgx_redact (line, sizeof line, raw);
        pgx_redact (line, sizeof line, self->password);
        snprintf (err, errlen, "cannot connect to PostgreSQL: %s", line);
        free (raw);
        pgx_destroy (&self->sql.base);
        return NULL;
    }
    free (raw);
    if (s_session (self) || s_migrate (self)) {
        snprintf (err, errlen, "PostgreSQL database: %s", self->error);
        pgx_destroy (&self->sql.base);
        return NULL;
    }
    self->version_seen = pgx_scalar (self, "SELECT last_value FROM xxl_data_versions", NULL);
    self->version_reported = 1;
    if (self->version_seen < 0) {
        snprintf (err, errlen, "PostgreSQL database: %s", self->error);
        pgx_destroy (&self->sql.base);
        return NULL;
    }
    return &self->sql.base;
}

//  --------------------------------------------------------------------
//  The connection's methods

void
pgx_destroy (xxl_store_t *base)
{
    store_t *self = (store_t *) base;
    if (self->in_txn)
        pgx_rollback (base);
    if (self->conn)
        PQfinish (self->conn);
    zhashx_destroy (&self->statements);
    pgx_deferred_destroy (&self->deferred);
    pgx_replays_drop (self);
    free (self->replays);
    free (self->password);
    free (self);
}

const char *
pgx_error (xxl_store_t *base)
{
    return ((store_t *) base)->error;
}

int
pgx_schema_version (xxl_store_t *base)
{
    return (int) pgx_scalar ((store_t *) base, "SELECT version FROM xxl_schema", NULL);
}

int
pgx_begin (xxl_store_t *base)
{
    store_t *self = (store_t *) base;
    if (self->in_txn)
        return 0;
    bool reset = false;
    while (true) {
        if (PQstatus (self->conn) != CONNECTION_OK) {
            if (reset || s_reconnect (self))
                return -1;
            reset = true;
        }
        //  (no lock yet: the first statement that needs it takes it; and
        //  data_version as of now, which this transaction needs no round
        //  trip of its own for)
        //  (the fence locks of the shares held whose lease has not
        //  expired on the store's clock, shared: s_lease_take)
        char sql [512] = "BEGIN; ";
        if (self->shares_held) {
            size_t used = strlen (sql);
            used += (size_t) snprintf (sql + used, sizeof sql - used,
                                       "SELECT pg_advisory_xact_lock_shared (" XXL_PG_FENCE_CLASS
                                       ", share) FROM xxl_lease WHERE share IN (");
            for (int share = 0; share < XXL_STORE_SHARES; share++)
                if (self->shares_held & ((uint64_t) 1 << share))
                    used += (size_t) snprintf (sql + used, sizeof sql - used, "%d,", share);
            sql [used - 1] = 0;     //  (the last comma)
            snprintf (sql + used - 1, sizeof sql - used + 1, ") AND expires >"
                      " (EXTRACT (EPOCH FROM clock_timestamp ()) * 1000)::bigint; ");
        }
        //  (the savepoint pgx_lock may roll back to: after the fence locks)
        strcat (sql, "SAVEPOINT " XXL_PG_SAVEPOINT "; SELECT last_value FROM xxl_data_versions");
        if (pgx_simple_value (self, sql, &self->txn_version) == 0)
            break;
        //  A connection that died since its last statement (the server
        //  restarted, say): once more on a new one
        if (PQstatus (self->conn) != CONNECTION_OK && !reset)
            continue;
        //  (the lock not had in time: end the transaction BEGIN opened)
        if (PQstatus (self->conn) == CONNECTION_OK
        &&  PQtransactionStatus (self->conn) != PQTRANS_IDLE) {
            char cause [sizeof self->error];
            snprintf (cause, sizeof cause, "%s", self->error);
            s_simple (self, "ROLLBACK");
            snprintf (self->error, sizeof self->error, "%s", cause);
        }
        return -1;
    }
    self->in_txn = 1;
    self->txn_lost = 0;
    self->txn_dirty = 0;
    self->txn_log_max = 0;
    self->txn_locked = 0;
    pgx_replays_drop (self);
    return 0;
}

//  Ends the handle's transaction after a failure (rolls back what the
//  server still holds open); the error stays
static void
s_txn_abandon (store_t *self)
{
    pgx_deferred_drop (self);
    pgx_replays_drop (self);
    self->in_txn = 0;
    self->txn_lost = 0;
    self->txn_dirty = 0;
    self->txn_log_max = 0;
    self->txn_locked = 0;
    if (self->conn && PQstatus (self->conn) == CONNECTION_OK
    &&  PQtransactionStatus (self->conn) != PQTRANS_IDLE) {
        PGresult *result = PQexec (self->conn, "ROLLBACK");
        PQclear (result);
    }
}

int
pgx_commit (xxl_store_t *base)
{
    store_t *self = (store_t *) base;
    if (!self->in_txn)
        return 0;
    if (!self->txn_lost && PQstatus (self->conn) != CONNECTION_OK)
        pgx_fail (self, "commit", NULL);
    if (!self->txn_lost)
        pgx_flush (self);               //  (a failure loses the transaction)
    if (self->txn_lost) {
        //  Nothing to commit: what the transaction wrote is gone; its cause
        //  is the error
        snprintf (self->error, sizeof self->error, "%s", self->txn_cause);
        s_txn_abandon (self);
        return -1;
    }
    //  A transaction that wrote bumps data_version once committed (so
    //  that whoever sees the bump sees the rows), in the commit's round
    //  trip; one that added log ids past this handle's block first moves
    //  xxl_log_ids past them (nextval: never back, whoever else draws)
    char sql [512];
    char catch_up [256] = "";
    //  (a transaction that held the write lock, which job edits take,
    //  also draws one before its COMMIT: whoever reads the sequence after
    //  the COMMIT sees a change, even before the draw after it)
    const char *before = self->txn_dirty && self->txn_locked
                       ? "SELECT nextval ('xxl_data_versions'); ": "";
    if (self->txn_dirty && self->txn_log_max > 0 && self->txn_log_max >= self->ids_end)
        snprintf (catch_up, sizeof catch_up, "SELECT MAX (nextval ('xxl_log_ids')) FROM"
                  " generate_series (1, (SELECT CASE WHEN %" PRId64 " >= last_value THEN (%"
                  PRId64 " - last_value) / %d + 1 ELSE 0 END FROM xxl_log_ids)); ",
                  self->txn_log_max, self->txn_log_max, XXL_PG_LOG_ID_BLOCK);
    if (self->txn_dirty)
        snprintf (sql, sizeof sql, "%s%sCOMMIT; SELECT nextval ('xxl_data_versions')", before,
                  catch_up);
    else
        snprintf (sql, sizeof sql, "COMMIT");
    int64_t version = -1, drawn_before = -1;
    bool commit_seen = false;
    int rc = PQsendQuery (self->conn, sql)? 0: pgx_fail (self, "commit", NULL);
    PGresult *result;
    bool committed = false;
    while ((result = PQgetResult (self->conn))) {
        ExecStatusType status = PQresultStatus (result);
        if (status == PGRES_TUPLES_OK && PQntuples (result) == 1 && commit_seen)
            version = pgx_int (result, 0, 0);
        else
        if (status == PGRES_TUPLES_OK && PQntuples (result) == 1 && *before && drawn_before < 0)
            drawn_before = pgx_int (result, 0, 0);
        else
        if (status == PGRES_COMMAND_OK && streq (PQcmdStatus (result), "COMMIT"))
            committed = commit_seen = true;
        else
        if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK && rc == 0)
            rc = pgx_fail (self, "commit", result);
        PQclear (result);
    }
    if (rc == 0 && !committed)
        rc = pgx_failf (self, "commit: PostgreSQL rolled the transaction back");
    if (rc) {
        s_txn_abandon (self);
        return -1;
    }
    if (self->txn_dirty && version >= 0) {
        //  Another connection's commit since the one this handle accounts
        //  for is a change
        if (*before? drawn_before != self->version_seen + 1 || version != drawn_before + 1
                   : version != self->version_seen + 1)
            self->version_reported++;
        self->version_seen = version;
    }
    self->in_txn = 0;
    self->txn_dirty = 0;
    self->txn_log_max = 0;
    self->txn_locked = 0;
    pgx_replays_drop (self);
    return 0;
}

int
pgx_rollback (xxl_store_t *base)
{
    store_t *self = (store_t *) base;
    if (!self->in_txn)
        return 0;
    pgx_deferred_drop (self);
    pgx_replays_drop (self);
    self->in_txn = 0;
    self->txn_lost = 0;
    self->txn_dirty = 0;
    self->txn_log_max = 0;
    self->txn_locked = 0;
    if (!self->conn || PQstatus (self->conn) != CONNECTION_OK
    ||  PQtransactionStatus (self->conn) == PQTRANS_IDLE)
        return 0;                       //  (nothing open on the server)
    return s_simple (self, "ROLLBACK");
}

int
pgx_in_txn (xxl_store_t *base)
{
    return ((store_t *) base)->in_txn;
}

int64_t
pgx_data_version (xxl_store_t *base)
{
    store_t *self = (store_t *) base;
    //  The first time in a transaction, what begin read; after that as
    //  of now (another's commit may come in the middle of a transaction
    //  here: a check just before fires that go without the store)
    //  (a sequence's value: no lock)
    int lock_free = self->lock_free;
    self->lock_free = 1;
    int64_t version = self->in_txn && !self->txn_lost && self->txn_version >= 0
                    ? self->txn_version
                    : pgx_scalar (self, "SELECT last_value FROM xxl_data_versions", NULL);
    self->lock_free = lock_free;
    self->txn_version = -1;
    if (version < 0)
        return -1;
    if (version != self->version_seen) {
        self->version_reported++;
        self->version_seen = version;
    }
    return self->version_reported;
}

//  PostgreSQL manages its own WAL
void
pgx_wal_set_size (xxl_store_t *base, int mib)
{
    (void) base;
    (void) mib;
}

int
pgx_wal_due (xxl_store_t *base)
{
    (void) base;
    return 0;
}

int
pgx_wal_restart (xxl_store_t *base)
{
    (void) base;
    return 0;
}

//  --------------------------------------------------------------------
//  Test hooks (xxl_store_pg.h)

int
xxl_store_pg_exec (xxl_store_t *base, const char *sql, const char *fmt, ...)
{
    assert (base->methods == &pgx_methods);
    va_list args;
    va_start (args, fmt);
    PGresult *result = pgx_runv ((store_t *) base, PGX_WRITE | PGX_ONCE, sql, fmt, args);
    va_end (args);
    if (!result)
        return -1;
    int changes = pgx_changes (result);
    PQclear (result);
    return changes;
}

int64_t
xxl_store_pg_scalar (xxl_store_t *base, const char *sql, const char *fmt, ...)
{
    assert (base->methods == &pgx_methods);
    va_list args;
    va_start (args, fmt);
    int64_t value = pgx_scalarv ((store_t *) base, PGX_ONCE, sql, fmt, args);
    va_end (args);
    return value;
}

char *
xxl_store_pg_text (xxl_store_t *base, const char *sql, const char *fmt, ...)
{
    assert (base->methods == &pgx_methods);
    va_list args;
    va_start (args, fmt);
    char *value = pgx_textv ((store_t *) base, PGX_ONCE, sql, fmt, args);
    va_end (args);
    return value;
}

int
xxl_store_pg_encode (xxl_store_t *base, xxl_enc_t *enc, int rows_as_array, const char *sql,
                     const char *fmt, ...)
{
    assert (base->methods == &pgx_methods);
    va_list args;
    va_start (args, fmt);
    int rows = pgx_encodev ((store_t *) base, PGX_ONCE, enc, rows_as_array, 0, NULL, sql, fmt,
                          args);
    va_end (args);
    return rows;
}

//  --------------------------------------------------------------------
//  The calls that need no write lock (see "Two advisory locks" above): each
//  runs its body with lock_free set

#define PGX_FREE(call) \
    int lock_free = self->lock_free; \
    self->lock_free = 1; \
    __typeof__ (call) rc = call; \
    self->lock_free = lock_free; \
    return rc;
//  s_free_<name> (params): body (args) with lock_free set
#define PGX_FREE_CALL(type, name, body, params, args) \
    static type s_free_##name params { store_t *self = (store_t *) base; PGX_FREE (body args) }

//  The shares this handle holds, as its lease calls left them: each
//  transaction's begin takes their fence locks shared, those whose lease
//  has not expired (a live holder that stopped renewing does not keep a
//  share from the others).  A take of a share
//  someone owns (expired, or this node's from before a restart) first
//  takes that share's fence lock alone, without waiting: it fails (0, as
//  when the row moved; the next round tries again) while a transaction of
//  the scheduler that held the share is open, so a share never changes
//  hands in the middle of one.  Takes and renewals that fail, and
//  releases, drop the share (an extra lock held by mistake only delays a
//  take; one missing is impossible: a share is held from its take on).
static int
s_lease_take (xxl_store_t *base, int share, const char *node, int64_t epoch, int64_t expires)
{
    store_t *self = (store_t *) base;
    assert (share >= 0 && share < XXL_STORE_SHARES);
    char *owner = pgx_text (self, "SELECT owner FROM xxl_lease WHERE share = $1 AND epoch = $2",
                            "ii", (int64_t) share, epoch);
    bool owned = owner && *owner;
    free (owner);
    if (owned) {
        int64_t alone = pgx_scalar (self, "SELECT pg_try_advisory_xact_lock (" XXL_PG_FENCE_CLASS
                                          ", $1::int)::int", "i", (int64_t) share);
        if (alone != 1)
            return alone < 0? -1: 0;
    }
    int rc = xs_lease_take (base, share, node, epoch, expires);
    if (rc == 1)
        self->shares_held |= (uint64_t) 1 << share;
    return rc;
}

static int
s_lease_renew (xxl_store_t *base, int share, const char *node, int64_t epoch, int64_t expires)
{
    store_t *self = (store_t *) base;
    assert (share >= 0 && share < XXL_STORE_SHARES);
    int rc = xs_lease_renew (base, share, node, epoch, expires);
    if (rc == 1)
        self->shares_held |= (uint64_t) 1 << share;
    else
        self->shares_held &= ~((uint64_t) 1 << share);
    return rc;
}

static int
s_lease_release (xxl_store_t *base, int share, const char *node, int64_t epoch, int64_t now)
{
    store_t *self = (store_t *) base;
    assert (share >= 0 && share < XXL_STORE_SHARES);
    self->shares_held &= ~((uint64_t) 1 << share);
    return xs_lease_release (base, share, node, epoch, now);
}

static int
s_free_log_add (xxl_store_t *base, xxl_log_t *log)
{
    store_t *self = (store_t *) base;
    //  (a planned row is a fire: the lock, for the fence; xxl_lease.c)
    if (log->schedule_time > 0)
        return pgx_log_add (base, log);
    PGX_FREE (pgx_log_add (base, log))
}

//  A run's rows by id: guarded single-row changes
PGX_FREE_CALL (int, log_copy_shard, pgx_log_copy_shard,
    (xxl_store_t *base, int64_t id, int64_t src, const char *shard, int64_t stamp),
    (base, id, src, shard, stamp))
PGX_FREE_CALL (int, log_set_shard, pgx_log_set_shard,
    (xxl_store_t *base, int64_t id, const char *shard), (base, id, shard))
PGX_FREE_CALL (int, log_load, xs_log_load, (xxl_store_t *base, int64_t id, xxl_log_t *log),
    (base, id, log))
PGX_FREE_CALL (int64_t, log_job_id, xs_log_job_id, (xxl_store_t *base, int64_t id), (base, id))
PGX_FREE_CALL (int, log_trigger_done, xs_log_trigger_done,
    (xxl_store_t *base, int64_t id, int code, const char *address, const char *append),
    (base, id, code, address, append))
PGX_FREE_CALL (int, log_handle_done, xs_log_handle_done,
    (xxl_store_t *base, int64_t id, int64_t time, int code, const char *msg),
    (base, id, time, code, msg))
PGX_FREE_CALL (int, log_handle_done_by, xs_log_handle_done_by,
    (xxl_store_t *base, int64_t id, const char *address, int64_t time, int code,
     const char *msg, int64_t trigger_time), (base, id, address, time, code, msg, trigger_time))
PGX_FREE_CALL (int, log_handle_done_many, pgx_log_handle_done_many,
    (xxl_store_t *base, const xxl_store_done_t *items, size_t count, int *done),
    (base, items, count, done))
PGX_FREE_CALL (int, log_accept, xs_log_accept, (xxl_store_t *base, int64_t id, int64_t stamp),
    (base, id, stamp))
PGX_FREE_CALL (int, log_stamp, xs_log_stamp, (xxl_store_t *base, int64_t id, int64_t stamp),
    (base, id, stamp))
PGX_FREE_CALL (int, log_route, xs_log_route,
    (xxl_store_t *base, int64_t id, int64_t stamp, const char *address, const char *section),
    (base, id, stamp, address, section))
PGX_FREE_CALL (int, log_retime, xs_log_retime, (xxl_store_t *base, int64_t id, int64_t time),
    (base, id, time))
PGX_FREE_CALL (int, log_trigger_end, xs_log_trigger_end,
    (xxl_store_t *base, int64_t id, int code, int64_t presumed, const char *text,
     int64_t stamp, const char *last), (base, id, code, presumed, text, stamp, last))
//  A FIX_DELAY job's resume after a run's result (every result asks, while
//  the shares are shared): one guarded update of the job's row, from the
//  waiting mark only, so two schedulers cannot both resume it
PGX_FREE_CALL (int, job_delay_resume, xs_job_delay_resume,
    (xxl_store_t *base, int64_t log_id, int64_t now, int64_t mark), (base, log_id, now, mark))
//  Reads whose answer only routes or paces this scheduler's own work (as
//  of a moment just before the write lock, as if its turn came first:
//  the group that routes a run, the children a result triggers, the
//  workflow run a result belongs to), and the store's clock
PGX_FREE_CALL (int, group_find, xs_group_find,
    (xxl_store_t *base, const char *key, xxl_group_t *group), (base, key, group))
PGX_FREE_CALL (int, group_load, xs_group_load,
    (xxl_store_t *base, int64_t id, xxl_group_t *group), (base, id, group))
PGX_FREE_CALL (int, jobs_have_children, xs_jobs_have_children, (xxl_store_t *base), (base))
PGX_FREE_CALL (int64_t, clock_now, pgx_clock_now, (xxl_store_t *base), (base))
PGX_FREE_CALL (char *, log_job_children, xs_log_job_children,
    (xxl_store_t *base, int64_t log_id), (base, log_id))
PGX_FREE_CALL (int64_t, log_flow_run, xs_log_flow_run, (xxl_store_t *base, int64_t log_id),
    (base, log_id))
//  An accepted change's audit row: appended, never read back in a turn
PGX_FREE_CALL (int, audit_add, xs_audit_add, (xxl_store_t *base, const xxl_audit_t *row),
    (base, row))

//  The workflows due: without the lock while none is (the common case);
//  a list to act on is read again under it
static int
s_free_workflow_due (xxl_store_t *base, uint64_t mask, int64_t before, int64_t *ids,
                     size_t max, size_t *count)
{
    store_t *self = (store_t *) base;
    if (!self->txn_locked && self->in_txn) {
        int lock_free = self->lock_free;
        self->lock_free = 1;
        int rc = xs_workflow_due (base, mask, before, ids, max, count);
        self->lock_free = lock_free;
        if (rc || *count == 0)
            return rc;
    }
    return xs_workflow_due (base, mask, before, ids, max, count);
}

//  --------------------------------------------------------------------
//  The method table: this file's connection methods, the rows', the
//  lease's and the batch's calls, and the shared bodies (those that need
//  no lock through the wrappers above)

//  (the wrappers replace shared bodies XXL_STORE_SQL_METHODS named first)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"
const xxl_store_methods_t pgx_methods = {
    .version = XXL_STORE_METHODS_VERSION,
    .size = sizeof (xxl_store_methods_t),
    XXL_STORE_SQL_METHODS           //  the shared bodies (scheduler/store/sql)
    .log_load = s_free_log_load,
    .log_job_id = s_free_log_job_id,
    .log_trigger_done = s_free_log_trigger_done,
    .log_handle_done = s_free_log_handle_done,
    .log_handle_done_by = s_free_log_handle_done_by,
    .log_accept = s_free_log_accept,
    .log_stamp = s_free_log_stamp,
    .log_route = s_free_log_route,
    .log_retime = s_free_log_retime,
    .log_trigger_end = s_free_log_trigger_end,
    .group_find = s_free_group_find,
    .group_load = s_free_group_load,
    .jobs_have_children = s_free_jobs_have_children,
    .workflow_due = s_free_workflow_due,
    .job_delay_resume = s_free_job_delay_resume,
    .log_job_children = s_free_log_job_children,
    .log_flow_run = s_free_log_flow_run,
    .audit_add = s_free_audit_add,
    .lease_take = s_lease_take,
    .lease_renew = s_lease_renew,
    .lease_release = s_lease_release,
    .destroy = pgx_destroy,
    .error = pgx_error,
    .schema_version = pgx_schema_version,
    .begin = pgx_begin,
    .commit = pgx_commit,
    .rollback = pgx_rollback,
    .in_txn = pgx_in_txn,
    .data_version = pgx_data_version,
    .wal_set_size = pgx_wal_set_size,
    .wal_due = pgx_wal_due,
    .wal_restart = pgx_wal_restart,
    .group_add = pgx_group_add,
    .group_update = pgx_group_update,
    .job_add = pgx_job_add,
    .glue_add = pgx_glue_add,
    .log_add = s_free_log_add,
    .log_ids_past = pgx_log_ids_past,
    .log_next_id = pgx_log_next_id,
    .log_unroute = pgx_log_unroute,
    .log_set_shard = s_free_log_set_shard,
    .log_copy_shard = s_free_log_copy_shard,
    .lease_list = pgx_lease_list,
    .lease_fired = pgx_lease_fired,
    .job_due_in = pgx_job_due_in,
    .log_handle_done_many = s_free_log_handle_done_many,
    .fired_get = pgx_fired_get,
    .log_encode_page = pgx_log_encode_page,
    .report_totals = pgx_report_totals,
    .accounts = &pgx_accounts,
    .calendars = &pgx_calendars,
    .backfills = &pgx_backfills,
    .report_count = pgx_report_count,
    .clock_now = s_free_clock_now,
    .report_count_groups = pgx_report_count_groups,
    .workflow_add = pgx_workflow_add,
    .workflow_run_add = pgx_workflow_run_add,
};
#pragma GCC diagnostic pop

//  Users, tokens and sessions (xxl_store_accounts_t; schema step 9): all
//  shared
const xxl_store_accounts_t pgx_accounts = {
    XXL_STORE_SQL_ACCOUNTS
};

//  Calendars (xxl_store_calendars_t; schema step 11): all shared
const xxl_store_calendars_t pgx_calendars = {
    XXL_STORE_SQL_CALENDARS
};

//  Backfills (xxl_store_backfills_t; schema step 14): all shared
const xxl_store_backfills_t pgx_backfills = {
    XXL_STORE_SQL_BACKFILLS
};
