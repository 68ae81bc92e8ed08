/*  xxl_store_pg.c -- the PostgreSQL backend's connection: connecting and
    migrating the schema, the statement cache and binding, results,
    errors, transactions and reconnection.

    How the store's contracts (xxl_store.h) map onto PostgreSQL:
    -   The write lock: begin sends "BEGIN; SELECT pg_advisory_xact_lock
        (XXL_PG_WRITE_LOCK)" (one round trip); commit or rollback frees
        it.  A write outside a transaction takes it in a transaction of
        its own, as an autocommit write takes SQLite's.
    -   data_version: the counter row xxl_store_state.data_version, which
        a committing transaction that wrote bumps (in the commit's round
        trip: "UPDATE ... RETURNING; COMMIT").  The handle remembers the
        value its own commit left (version_seen), so its own commits do
        not look like another's; it reports a number that moves when the
        row moved past that.  begin reads the row with the lock, in the
        same round trip, so data_version inside a transaction (the engine
        asks at every turn's start) costs none.
    -   Log ids: xxl_store_state.log_seq is the highest id handed out (as
        sqlite_sequence's seq).  log_next_id reads it (FOR UPDATE: a
        writer that does not take the write lock waits for this
        transaction); rows added with ids of their own raise it at commit;
        an automatic id is log_seq + 1 in the INSERT's own statement.  The
        other tables' ids are identity columns (never reused either).
    -   Timeouts, set on connect: statement_timeout 10 s, lock_timeout
        5 s (begin waits up to 5 s for the write lock, as SQLite's busy
        timeout), idle_in_transaction_session_timeout 2 s (a scheduler
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

    Speed: every call is one synchronous round trip today, so a run's two
    statements (log_add, then its callback's log_handle_done_by) cost two
    round trips: about 6,500 runs/s on the 2-CPU test VM (a round trip of
    "SELECT 1" is 56 us there), where the same statements sent in libpq's
    pipeline mode reach about 27,000.  The writes whose results the engine
    does not read before commit (log_trigger_done, log_retime,
    log_set_shard, log_append_*, log_set_alarm, job_set_times, job_halt,
    fired_raise_*, registry_*, audit_add, ...) could be queued in pipeline
    mode and their results read at commit, a failure then failing the
    commit; but the per-run calls are the ones whose results the engine
    reads at once: log_add (a duplicate ends the trigger) and
    log_handle_done_by (its count tells a repeated callback), as do the
    calls whose counts guard a send (log_stamp, log_route, log_plan_route,
    log_unroute, log_accept, log_copy_shard, log_alarm_claim).  Pipelining
    those needs calls that take a batch (a CALLBACK's items, a plan's rows)
    and answer per item after one round trip.
*/

#include "xxl_store_pg_int.h"

#include <czmq.h>
#include <libpq-fe.h>
#include <endian.h>
#include <inttypes.h>
#include <stdarg.h>

#define XXL_STORE_LOG_MS 10000
//  A lost connection is tried again by begin at most this often
#define XXL_PG_RETRY_MS 1000
//  The advisory lock keys (the bytes of "xxl_wlck" and "xxl_migr" read as
//  big-endian integers): the write lock, and the lock migrations take so
//  that two schedulers opening an empty database do not both create it
#define XXL_PG_WRITE_LOCK "8680807439037916011"
#define XXL_PG_MIGRATE_LOCK "8680807438869948274"
//  The session's settings (see the file header)
#define XXL_PG_SESSION \
    "SET statement_timeout = 10000; SET lock_timeout = 5000;" \
    " SET idle_in_transaction_session_timeout = 2000; SET client_min_messages = warning"
#define XXL_PG_PARAMS_MAX 32

//  Type oids (PostgreSQL's catalog/pg_type.h, which libpq does not ship)
#define XXL_BOOLOID 16
#define XXL_INT8OID 20
#define XXL_INT2OID 21
#define XXL_INT4OID 23
#define XXL_TEXTOID 25
#define XXL_OIDOID 26
#define XXL_FLOAT4OID 700
#define XXL_FLOAT8OID 701
#define XXL_NUMERICOID 1700

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
};
#define XXL_SCHEMA_VERSION ((int) (sizeof s_migrations / sizeof s_migrations [0]))

//  A prepared statement: its name on the connection and the fmt it was
//  prepared with (its parameters' types)
typedef struct {
    char name [16];
    char *fmt;
} statement_t;

static void
s_statement_destroy (void **item)
{
    statement_t *statement = (statement_t *) *item;
    if (statement) {
        free (statement->fmt);
        free (statement);
        *item = NULL;
    }
}

static size_t
s_pointer_hash (const void *key)
{
    uintptr_t value = (uintptr_t) key;
    value ^= value >> 17;
    value *= 0xed5ad4bbU;
    value ^= value >> 11;
    return (size_t) value;
}

static int
s_pointer_compare (const void *a, const void *b)
{
    return a < b? -1: a > b? 1: 0;
}

//  Replaces each occurrence of secret in text (a buffer of size bytes)
//  with instead (where it fits)
static void
s_replace (char *text, size_t size, const char *secret, const char *instead)
{
    if (!secret || !*secret || strstr (instead, secret))
        return;
    size_t length = strlen (secret), with = strlen (instead);
    char *at, *from = text;
    while ((at = strstr (from, secret))) {
        size_t tail = strlen (at + length) + 1;
        if ((size_t) (at - text) + with + tail > size)
            break;
        memmove (at + with, at + length, tail);
        memcpy (at, instead, with);
        from = at + with;
    }
}

//  A password never shows in an error
static void
s_redact (char *text, size_t size, const char *secret)
{
    s_replace (text, size, secret, "***");
}

//  libpq's message on one line: newlines and tabs become spaces, no
//  trailing blanks; into out (size bytes)
static void
s_one_line (char *out, size_t size, const char *message)
{
    size_t used = 0;
    for (const char *p = message? message: ""; *p && used + 1 < size; p++) {
        char c = *p == '\n' || *p == '\t' || *p == '\r'? ' ': *p;
        if (c == ' ' && (used == 0 || out [used - 1] == ' '))
            continue;
        out [used++] = c;
    }
    while (used && out [used - 1] == ' ')
        used--;
    out [used] = 0;
}

//  Logs self->error unless the same was logged within XXL_STORE_LOG_MS
static void
s_log_error (store_t *self)
{
    int64_t now = zclock_mono ();
    if (streq (self->logged, self->error) && now - self->logged_at < XXL_STORE_LOG_MS) {
        self->suppressed++;
        return;
    }
    if (self->suppressed)
        zsys_error ("store: %s (and %" PRIu64 " more errors in the last %d s)", self->error,
                    self->suppressed, XXL_STORE_LOG_MS / 1000);
    else
        zsys_error ("store: %s", self->error);
    snprintf (self->logged, sizeof self->logged, "%s", self->error);
    self->logged_at = now;
    self->suppressed = 0;
}

//  After an error: a transaction PostgreSQL aborted, or the connection
//  lost inside one, is lost with this error as its cause
static void
s_note_lost (store_t *self)
{
    if (!self->in_txn || self->txn_lost)
        return;
    if (!self->conn || PQstatus (self->conn) != CONNECTION_OK
    ||  PQtransactionStatus (self->conn) == PQTRANS_INERROR) {
        self->txn_lost = 1;
        snprintf (self->txn_cause, sizeof self->txn_cause, "%s", self->error);
    }
}

int
pgx_fail (store_t *self, const char *what, const PGresult *result)
{
    const char *message = NULL;
    if (result)
        message = PQresultErrorField (result, PG_DIAG_MESSAGE_PRIMARY);
    if (!message || !*message)
        message = result? PQresultErrorMessage (result): NULL;
    if ((!message || !*message) && self->conn)
        message = PQerrorMessage (self->conn);
    char line [400];
    s_one_line (line, sizeof line, message && *message? message: "unknown error");
    bool lost = !self->conn || PQstatus (self->conn) != CONNECTION_OK;
    snprintf (self->error, sizeof self->error, "%s: %s%s", what,
              lost? "the connection to PostgreSQL is lost: ": "", line);
    s_redact (self->error, sizeof self->error, self->password);
    s_note_lost (self);
    s_log_error (self);
    return -1;
}

int
pgx_failf (store_t *self, const char *format, ...)
{
    va_list args;
    va_start (args, format);
    vsnprintf (self->error, sizeof self->error, format, args);
    va_end (args);
    s_note_lost (self);
    s_log_error (self);
    return -1;
}

//  "what" for an error: the statement's first words
static void
s_what (char *out, size_t size, const char *sql)
{
    char line [48];
    s_one_line (line, sizeof line, sql);
    snprintf (out, size, "\"%s...\"", line);
}

//  Runs sql (several statements allowed, no parameters) with the simple
//  protocol; 0, or -1 with the error recorded.  value (if not NULL): the
//  first column of the last statement's first row (-1 when none).
static int
s_simple_value (store_t *self, const char *sql, int64_t *value)
{
    PGresult *result = PQexec (self->conn, sql);
    ExecStatusType status = PQresultStatus (result);
    int rc = 0;
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
        char what [64];
        s_what (what, sizeof what, sql);
        rc = pgx_fail (self, what, result);
    }
    if (value)
        *value = rc == 0 && status == PGRES_TUPLES_OK && PQntuples (result) > 0
               ? pgx_int (result, 0, 0): -1;
    PQclear (result);
    return rc;
}

static int
s_simple (store_t *self, const char *sql)
{
    return s_simple_value (self, sql, NULL);
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
    return s_simple (self, XXL_PG_SESSION);
}

//  Reconnects a lost connection (PQreset): prepared statements are gone
//  with the old session.  0, or -1 with the reason
static int
s_reconnect (store_t *self)
{
    int64_t now = zclock_mono ();
    if (now < self->reconnect_at)
        return pgx_failf (self, "the connection to PostgreSQL is lost; reconnecting again"
                                " in %" PRId64 " ms", self->reconnect_at - now);
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
//  Statements


//  The prepared statement of sql on this connection (prepared now the
//  first time, with the parameters' types); NULL with the error recorded
static statement_t *
s_statement (store_t *self, const char *sql, const char *fmt, int params, const Oid *types)
{
    statement_t *statement = (statement_t *) zhashx_lookup (self->statements, sql);
    if (statement) {
        if (streq (statement->fmt, fmt))
            return statement;
        pgx_failf (self, "a statement used with two formats (%s, %s)", statement->fmt, fmt);
        return NULL;
    }
    statement = (statement_t *) zmalloc (sizeof (statement_t));
    snprintf (statement->name, sizeof statement->name, "x%u", ++self->statement_seq);
    statement->fmt = strdup (fmt);
    PGresult *prepared = PQprepare (self->conn, statement->name, sql, params, types);
    if (PQresultStatus (prepared) != PGRES_COMMAND_OK) {
        char what [64];
        s_what (what, sizeof what, sql);
        pgx_fail (self, what, prepared);
        PQclear (prepared);
        s_statement_destroy ((void **) &statement);
        return NULL;
    }
    PQclear (prepared);
    zhashx_insert (self->statements, sql, statement);
    return statement;
}

static PGresult *
s_send (store_t *self, int flags, const char *sql, const char *fmt, va_list args)
{
    if (self->in_txn && self->txn_lost) {
        //  (logged when it happened)
        snprintf (self->error, sizeof self->error, "%s", self->txn_cause);
        return NULL;
    }
    char what [64];
    if (!self->conn || PQstatus (self->conn) != CONNECTION_OK) {
        s_what (what, sizeof what, sql);
        pgx_fail (self, what, NULL);
        return NULL;
    }
    int params = (int) strlen (fmt);
    if (params > XXL_PG_PARAMS_MAX) {
        pgx_failf (self, "too many parameters (%d)", params);
        return NULL;
    }
    Oid types [XXL_PG_PARAMS_MAX];
    const char *values [XXL_PG_PARAMS_MAX];
    int lengths [XXL_PG_PARAMS_MAX], formats [XXL_PG_PARAMS_MAX];
    uint64_t numbers [XXL_PG_PARAMS_MAX];
    char *fixed [XXL_PG_PARAMS_MAX];
    for (int i = 0; i < params; i++) {
        fixed [i] = NULL;
        lengths [i] = 0;
        formats [i] = 0;
        types [i] = 0;
        values [i] = NULL;
        if (fmt [i] == 'i') {
            numbers [i] = htobe64 ((uint64_t) va_arg (args, int64_t));
            types [i] = XXL_INT8OID;
        }
        else
        if (fmt [i] == 'd') {
            double value = va_arg (args, double);
            uint64_t bits;
            memcpy (&bits, &value, sizeof bits);
            numbers [i] = htobe64 (bits);
            types [i] = XXL_FLOAT8OID;
        }
        else
        if (fmt [i] == 's') {
            values [i] = va_arg (args, const char *);
            types [i] = XXL_TEXTOID;
            //  (PostgreSQL refuses text that is not UTF-8 and aborts the
            //  transaction; SQLite stores any bytes, and every reply
            //  carries U+FFFD for them anyway: the store answers the same)
            if (values [i] && (fixed [i] = xxl_utf8_repair (values [i])))
                values [i] = fixed [i];
        }
        if (types [i] == XXL_INT8OID || types [i] == XXL_FLOAT8OID) {
            values [i] = (const char *) &numbers [i];
            lengths [i] = 8;
            formats [i] = 1;
        }
    }
    PGresult *result = NULL;
    statement_t *statement = NULL;
    if (flags & PGX_ONCE)
        result = PQexecParams (self->conn, sql, params, types, values, lengths, formats, 0);
    else
    if ((statement = s_statement (self, sql, fmt, params, types)))
        result = PQexecPrepared (self->conn, statement->name, params, values, lengths,
                                 formats, 0);
    for (int i = 0; i < params; i++)
        free (fixed [i]);
    if (!(flags & PGX_ONCE) && !statement)
        return NULL;                    //  (the error recorded)
    ExecStatusType status = PQresultStatus (result);
    if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
        s_what (what, sizeof what, sql);
        pgx_fail (self, what, result);
        PQclear (result);
        return NULL;
    }
    if ((flags & PGX_WRITE) && self->in_txn)
        self->txn_dirty = 1;
    return result;
}

PGresult *
pgx_runv (store_t *self, int flags, const char *sql, const char *fmt, va_list args)
{
    if (!(flags & PGX_WRITE) || self->in_txn)
        return s_send (self, flags, sql, fmt? fmt: "", args);
    //  A write outside a transaction: in one of its own
    if (pgx_begin (&self->base))
        return NULL;
    PGresult *result = s_send (self, flags, sql, fmt? fmt: "", args);
    if (!result) {
        char cause [sizeof self->error];
        snprintf (cause, sizeof cause, "%s", self->error);
        pgx_rollback (&self->base);
        snprintf (self->error, sizeof self->error, "%s", cause);
        return NULL;
    }
    if (pgx_commit (&self->base)) {
        PQclear (result);
        return NULL;
    }
    return result;
}

PGresult *
pgx_run (store_t *self, int flags, const char *sql, const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    PGresult *result = pgx_runv (self, flags, sql, fmt, args);
    va_end (args);
    return result;
}

int
pgx_changes (const PGresult *result)
{
    const char *tuples = PQcmdTuples ((PGresult *) result);
    return tuples && *tuples? atoi (tuples): 0;
}

int
pgx_exec (store_t *self, const char *sql, const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    PGresult *result = pgx_runv (self, PGX_WRITE, sql, fmt, args);
    va_end (args);
    if (!result)
        return -1;
    int changes = pgx_changes (result);
    PQclear (result);
    return changes;
}

int64_t
pgx_int (const PGresult *result, int row, int column)
{
    if (PQgetisnull (result, row, column))
        return 0;
    const char *value = PQgetvalue (result, row, column);
    Oid type = PQftype (result, column);
    if (type == XXL_BOOLOID)
        return *value == 't';
    if (type == XXL_FLOAT4OID || type == XXL_FLOAT8OID)
        return (int64_t) strtod (value, NULL);
    return strtoll (value, NULL, 10);
}

double
pgx_double (const PGresult *result, int row, int column)
{
    if (PQgetisnull (result, row, column))
        return 0;
    return strtod (PQgetvalue (result, row, column), NULL);
}

char *
pgx_string (const PGresult *result, int row, int column)
{
    return strdup (PQgetisnull (result, row, column)? "": PQgetvalue (result, row, column));
}

static int64_t
s_scalarv (store_t *self, int flags, const char *sql, const char *fmt, va_list args)
{
    PGresult *result = pgx_runv (self, flags, sql, fmt, args);
    if (!result)
        return -1;
    int64_t value = PQntuples (result) > 0 && PQnfields (result) > 0
                  ? pgx_int (result, 0, 0): -1;
    PQclear (result);
    return value;
}

int64_t
pgx_scalar (store_t *self, const char *sql, const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    int64_t value = s_scalarv (self, PGX_READ, sql, fmt, args);
    va_end (args);
    return value;
}

static char *
s_textv (store_t *self, int flags, const char *sql, const char *fmt, va_list args)
{
    PGresult *result = pgx_runv (self, flags, sql, fmt, args);
    if (!result)
        return NULL;
    char *value = PQntuples (result) > 0 && PQnfields (result) > 0
                  && !PQgetisnull (result, 0, 0)? pgx_string (result, 0, 0): NULL;
    PQclear (result);
    return value;
}

char *
pgx_text (store_t *self, const char *sql, const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    char *value = s_textv (self, PGX_READ, sql, fmt, args);
    va_end (args);
    return value;
}

int
pgx_id_list (store_t *self, int64_t *ids, size_t max, size_t *count, const char *sql,
             const char *fmt, ...)
{
    *count = 0;
    va_list args;
    va_start (args, fmt);
    PGresult *result = pgx_runv (self, PGX_READ, sql, fmt, args);
    va_end (args);
    if (!result)
        return -1;
    int rows = PQntuples (result);
    for (int row = 0; row < rows && *count < max; row++)
        ids [(*count)++] = pgx_int (result, row, 0);
    PQclear (result);
    return 0;
}

//  How a column is encoded
typedef enum { KIND_INT, KIND_FLOAT, KIND_NUMERIC, KIND_BOOL, KIND_TEXT } kind_t;

static kind_t
s_kind (Oid type)
{
    switch (type) {
        case XXL_INT2OID: case XXL_INT4OID: case XXL_INT8OID: case XXL_OIDOID:
            return KIND_INT;
        case XXL_FLOAT4OID: case XXL_FLOAT8OID:
            return KIND_FLOAT;
        case XXL_NUMERICOID:
            return KIND_NUMERIC;
        case XXL_BOOLOID:
            return KIND_BOOL;
        default:
            return KIND_TEXT;
    }
}

//  Encodes a result's rows as maps whose keys are the column names
//  (camelCase with quoted aliases): integers as int, floats as float64
//  (numeric: int when whole, as SQLite's SUM gives), booleans as 1/0, NULL
//  as nil, else str.  rows_as_array 0: only the first row's map (nothing
//  when there is none).  max_size > 0: an array that stops before a row
//  would take the encoder past max_size bytes (*truncated 1), with
//  SQLite's bound of a row's size.  The number of rows.
static int
s_encode_result (const PGresult *result, xxl_enc_t *enc, int rows_as_array, size_t max_size,
                 int *truncated)
{
    int columns = PQnfields (result), rows = PQntuples (result);
    kind_t kinds [64];
    if (columns > 64)
        columns = 64;
    for (int column = 0; column < columns; column++)
        kinds [column] = s_kind (PQftype (result, column));
    if (rows_as_array)
        xxl_enc_array_begin (enc);
    int done = 0;
    for (int row = 0; row < rows; row++) {
        if (max_size) {
            //  An upper bound of the row's encoded size: 5-byte map header,
            //  each key with a 5-byte header, each value 9 bytes or a
            //  string with a 5-byte header
            size_t size = 5;
            for (int column = 0; column < columns; column++) {
                size += 5 + strlen (PQfname (result, column));
                size += kinds [column] != KIND_TEXT || PQgetisnull (result, row, column)? 9
                      : 5 + (size_t) PQgetlength (result, row, column);
            }
            if (xxl_enc_size (enc) + size > max_size) {
                *truncated = 1;
                break;
            }
        }
        done++;
        xxl_enc_map_begin (enc);
        for (int column = 0; column < columns; column++) {
            xxl_enc_key (enc, PQfname (result, column));
            const char *value = PQgetvalue (result, row, column);
            if (PQgetisnull (result, row, column))
                xxl_enc_nil (enc);
            else
            switch (kinds [column]) {
                case KIND_INT:
                case KIND_BOOL:
                    xxl_enc_int (enc, pgx_int (result, row, column));
                    break;
                case KIND_FLOAT:
                    xxl_enc_double (enc, strtod (value, NULL));
                    break;
                case KIND_NUMERIC:
                    if (strpbrk (value, ".eEN"))
                        xxl_enc_double (enc, strtod (value, NULL));
                    else
                        xxl_enc_int (enc, strtoll (value, NULL, 10));
                    break;
                default:
                    xxl_enc_strn (enc, value, (size_t) PQgetlength (result, row, column));
            }
        }
        xxl_enc_map_end (enc);
        if (!rows_as_array)
            break;
    }
    if (rows_as_array)
        xxl_enc_array_end (enc);
    return done;
}

static int
s_encodev (store_t *self, int flags, xxl_enc_t *enc, int rows_as_array, size_t max_size,
           int *truncated, const char *sql, const char *fmt, va_list args)
{
    if (truncated)
        *truncated = 0;
    PGresult *result = pgx_runv (self, flags, sql, fmt, args);
    if (!result)
        return -1;
    int rows = s_encode_result (result, enc, rows_as_array, max_size, truncated);
    PQclear (result);
    return rows;
}

int
pgx_encode (store_t *self, xxl_enc_t *enc, int rows_as_array, const char *sql,
            const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    int rows = s_encodev (self, PGX_READ, enc, rows_as_array, 0, NULL, sql, fmt, args);
    va_end (args);
    return rows;
}

int
pgx_encode_max (store_t *self, xxl_enc_t *enc, size_t max_size, int *truncated,
                const char *sql, const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    int rows = s_encodev (self, PGX_READ, enc, 1, max_size, truncated, sql, fmt, args);
    va_end (args);
    return rows;
}

void
pgx_log_id_used (store_t *self, int64_t id)
{
    if (id > self->txn_log_max)
        self->txn_log_max = id;
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
    int version = rc? -1: pgx_schema_version (&self->base);
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
        ||  s_simple (self, XXL_PG_SESSION))
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

xxl_store_t *
xxl_store_pg_new (const char *url, char *err, size_t errlen)
{
    char *raw = s_raw_password (url);
    char *parse_error = NULL;
    PQconninfoOption *options = PQconninfoParse (url, &parse_error);
    if (!options) {
        char line [400];
        s_one_line (line, sizeof line, parse_error? parse_error: "out of memory");
        s_replace (line, sizeof line, url, "(the URL)");
        s_redact (line, sizeof line, raw);
        snprintf (err, errlen, "the PostgreSQL URL is not valid: %s", line);
        PQfreemem (parse_error);
        free (raw);
        return NULL;
    }
    store_t *self = (store_t *) zmalloc (sizeof (store_t));
    self->base.methods = &pgx_methods;
    for (PQconninfoOption *option = options; option->keyword; option++)
        if (streq (option->keyword, "password") && option->val && *option->val)
            self->password = strdup (option->val);
    PQconninfoFree (options);
    self->statements = zhashx_new ();
    zhashx_set_key_hasher (self->statements, s_pointer_hash);
    zhashx_set_key_comparator (self->statements, s_pointer_compare);
    zhashx_set_key_duplicator (self->statements, NULL);
    zhashx_set_key_destructor (self->statements, NULL);
    zhashx_set_destructor (self->statements, s_statement_destroy);
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
        s_one_line (line, sizeof line, self->conn? PQerrorMessage (self->conn): "out of memory");
        s_replace (line, sizeof line, url, "(the URL)");
        s_redact (line, sizeof line, raw);
        s_redact (line, sizeof line, self->password);
        snprintf (err, errlen, "cannot connect to PostgreSQL: %s", line);
        free (raw);
        pgx_destroy (&self->base);
        return NULL;
    }
    free (raw);
    if (s_session (self) || s_migrate (self)) {
        snprintf (err, errlen, "PostgreSQL database: %s", self->error);
        pgx_destroy (&self->base);
        return NULL;
    }
    self->version_seen = pgx_scalar (self, "SELECT data_version FROM xxl_store_state", NULL);
    self->version_reported = 1;
    if (self->version_seen < 0) {
        snprintf (err, errlen, "PostgreSQL database: %s", self->error);
        pgx_destroy (&self->base);
        return NULL;
    }
    return &self->base;
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
        //  (with the counter row as the lock leaves it: data_version in
        //  this transaction needs no round trip of its own)
        if (s_simple_value (self, "BEGIN; SELECT pg_advisory_xact_lock (" XXL_PG_WRITE_LOCK ");"
                                  " SELECT data_version FROM xxl_store_state",
                            &self->txn_version) == 0)
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
    return 0;
}

//  Ends the handle's transaction after a failure (rolls back what the
//  server still holds open); the error stays
static void
s_txn_abandon (store_t *self)
{
    self->in_txn = 0;
    self->txn_lost = 0;
    self->txn_dirty = 0;
    self->txn_log_max = 0;
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
    if (self->txn_lost) {
        //  Nothing to commit: what the transaction wrote is gone; its cause
        //  is the error
        snprintf (self->error, sizeof self->error, "%s", self->txn_cause);
        s_txn_abandon (self);
        return -1;
    }
    //  A transaction that wrote bumps the counter row, and records the
    //  log ids it handed out itself, in the commit's round trip
    char sql [256];
    if (self->txn_dirty)
        snprintf (sql, sizeof sql, "UPDATE xxl_store_state SET data_version = data_version + 1,"
                  " log_seq = GREATEST (log_seq, %" PRId64 ") RETURNING data_version; COMMIT",
                  self->txn_log_max);
    else
        snprintf (sql, sizeof sql, "COMMIT");
    int64_t version = -1;
    int rc = PQsendQuery (self->conn, sql)? 0: pgx_fail (self, "commit", NULL);
    PGresult *result;
    bool committed = false;
    while ((result = PQgetResult (self->conn))) {
        ExecStatusType status = PQresultStatus (result);
        if (status == PGRES_TUPLES_OK && PQntuples (result) == 1)
            version = pgx_int (result, 0, 0);
        else
        if (status == PGRES_COMMAND_OK && streq (PQcmdStatus (result), "COMMIT"))
            committed = true;
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
        if (version != self->version_seen + 1)
            self->version_reported++;
        self->version_seen = version;
    }
    self->in_txn = 0;
    self->txn_dirty = 0;
    self->txn_log_max = 0;
    return 0;
}

int
pgx_rollback (xxl_store_t *base)
{
    store_t *self = (store_t *) base;
    if (!self->in_txn)
        return 0;
    self->in_txn = 0;
    self->txn_lost = 0;
    self->txn_dirty = 0;
    self->txn_log_max = 0;
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
    //  Inside a transaction, what begin read under the lock (no other
    //  connection commits before this one does)
    int64_t version = self->in_txn && !self->txn_lost && self->txn_version >= 0
                    ? self->txn_version
                    : pgx_scalar (self, "SELECT data_version FROM xxl_store_state", NULL);
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
    int64_t value = s_scalarv ((store_t *) base, PGX_ONCE, sql, fmt, args);
    va_end (args);
    return value;
}

char *
xxl_store_pg_text (xxl_store_t *base, const char *sql, const char *fmt, ...)
{
    assert (base->methods == &pgx_methods);
    va_list args;
    va_start (args, fmt);
    char *value = s_textv ((store_t *) base, PGX_ONCE, sql, fmt, args);
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
    int rows = s_encodev ((store_t *) base, PGX_ONCE, enc, rows_as_array, 0, NULL, sql, fmt,
                          args);
    va_end (args);
    return rows;
}
