/*  xxl_store.c -- XXL-JOB's schema on SQLite, with cached statements.

    Statements are prepared once and kept in a table keyed by the address
    of their SQL text -- callers pass string literals, which live as long
    as the program -- so hot paths (log insert, callback update) cost one
    bind and one step, not a hash of the text.  SQL built at run time goes
    through xxl_store_exec_once instead.  Times are epoch milliseconds.  Log ids use AUTOINCREMENT so an
    id is never reused: agents refuse a RUN whose logId they have seen, and
    a reused id would be refused.
*/

#include "xxl_store.h"

#include <czmq.h>
#include <sqlite3.h>
#include <inttypes.h>
#include <stdarg.h>

//  The WAL starts over once it holds wal_size frames (XXL_WAL_MIB by
//  default).  The checkpointer runs a pass every 250 ms, or as soon as the
//  writer has added a sixteenth of wal_size frames since its last nudge,
//  so xxl_store_wal_restart has only the last of them to copy.
#define XXL_WAL_MIB 64

struct _xxl_store_t {
    sqlite3 *db;
    zhashx_t *statements;               //  sql pointer → sqlite3_stmt
    zactor_t *checkpointer;             //  WAL checkpoints off the caller's thread
    int wal_size;                       //  frames: the WAL starts over at this size
    int wal_frames;                     //  frames in the WAL after the last commit
    int wal_nudged;                     //  wal_frames when the checkpointer was last nudged
    int wal_retry;                      //  a restart that did not happen: not again before
    int in_txn;
    //  SQLite ended the transaction on its own (a full disk, an I/O error):
    //  until the caller's commit or rollback, no write may run, since it
    //  would commit alone; txn_cause keeps the error that ended it
    int txn_lost;
    char txn_cause [512];
    char error [512];
    //  One log line per cause per XXL_STORE_LOG_MS (a full disk fails
    //  every statement of every turn)
    char logged [512];
    int64_t logged_at;
    uint64_t suppressed;
};
#define XXL_STORE_LOG_MS 10000

//  The migrations, in order; schema version N is reached by running
//  s_migrations [N-1].  Append only: never edit a released step.
static const char *s_migrations [] = {
    //  1: XXL-JOB's tables, plus schedule_time/trigger_type on logs and a
    //  time zone per job
    "CREATE TABLE xxl_job_group ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  app_name TEXT NOT NULL UNIQUE,"
    "  title TEXT NOT NULL DEFAULT '',"
    "  address_type INTEGER NOT NULL DEFAULT 0,"
    "  address_list TEXT,"
    "  update_time INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE xxl_job_info ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  job_group INTEGER NOT NULL,"
    "  job_desc TEXT NOT NULL DEFAULT '',"
    "  add_time INTEGER NOT NULL DEFAULT 0,"
    "  update_time INTEGER NOT NULL DEFAULT 0,"
    "  author TEXT NOT NULL DEFAULT '',"
    "  alarm_email TEXT NOT NULL DEFAULT '',"
    "  schedule_type TEXT NOT NULL DEFAULT 'NONE',"
    "  schedule_conf TEXT NOT NULL DEFAULT '',"
    "  misfire_strategy TEXT NOT NULL DEFAULT 'DO_NOTHING',"
    "  executor_route_strategy TEXT NOT NULL DEFAULT 'FIRST',"
    "  executor_handler TEXT NOT NULL DEFAULT '',"
    "  executor_param TEXT NOT NULL DEFAULT '',"
    "  executor_block_strategy TEXT NOT NULL DEFAULT 'SERIAL_EXECUTION',"
    "  executor_timeout INTEGER NOT NULL DEFAULT 0,"
    "  executor_fail_retry_count INTEGER NOT NULL DEFAULT 0,"
    "  glue_type TEXT NOT NULL DEFAULT 'BEAN',"
    "  glue_source TEXT NOT NULL DEFAULT '',"
    "  glue_remark TEXT NOT NULL DEFAULT '',"
    "  glue_updatetime INTEGER NOT NULL DEFAULT 0,"
    "  child_jobid TEXT NOT NULL DEFAULT '',"
    "  trigger_status INTEGER NOT NULL DEFAULT 0,"
    "  trigger_last_time INTEGER NOT NULL DEFAULT 0,"
    "  trigger_next_time INTEGER NOT NULL DEFAULT 0,"
    "  timezone TEXT NOT NULL DEFAULT '');"
    "CREATE INDEX xxl_job_info_group ON xxl_job_info (job_group);"
    "CREATE INDEX xxl_job_info_next ON xxl_job_info (trigger_next_time) WHERE trigger_status = 1;"
    "CREATE TABLE xxl_job_log ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  job_group INTEGER NOT NULL,"
    "  job_id INTEGER NOT NULL,"
    "  executor_address TEXT,"
    "  executor_handler TEXT,"
    "  executor_param TEXT,"
    "  executor_sharding_param TEXT,"
    "  executor_fail_retry_count INTEGER NOT NULL DEFAULT 0,"
    "  trigger_time INTEGER NOT NULL,"
    "  trigger_code INTEGER NOT NULL DEFAULT 0,"
    "  trigger_msg TEXT,"
    "  trigger_type TEXT,"
    "  schedule_time INTEGER,"
    "  handle_time INTEGER,"
    "  handle_code INTEGER NOT NULL DEFAULT 0,"
    "  handle_msg TEXT,"
    "  alarm_status INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX xxl_job_log_job ON xxl_job_log (job_id, id);"
    "CREATE INDEX xxl_job_log_time ON xxl_job_log (trigger_time);"
    //  One trigger per planned instant: recovery can never make two
    "CREATE UNIQUE INDEX xxl_job_log_schedule ON xxl_job_log (job_id, schedule_time)"
    "  WHERE schedule_time IS NOT NULL;"
    //  Rows not yet acknowledged by an agent (recovery re-sends them)
    "CREATE INDEX xxl_job_log_unsent ON xxl_job_log (id) WHERE trigger_code = 0;"
    //  Runs without a result (lost-run monitor)
    "CREATE INDEX xxl_job_log_running ON xxl_job_log (trigger_time)"
    "  WHERE trigger_code = 200 AND handle_code = 0;"
    //  Failed runs not yet handled (fail monitor)
    "CREATE INDEX xxl_job_log_failed ON xxl_job_log (id) WHERE alarm_status = 0"
    "  AND (trigger_code NOT IN (0, 200) OR handle_code NOT IN (0, 200));"
    "CREATE TABLE xxl_job_logglue ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  job_id INTEGER NOT NULL,"
    "  glue_type TEXT,"
    "  glue_source TEXT,"
    "  glue_remark TEXT NOT NULL DEFAULT '',"
    "  add_time INTEGER NOT NULL DEFAULT 0,"
    "  update_time INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX xxl_job_logglue_job ON xxl_job_logglue (job_id, id);"
    "CREATE TABLE xxl_job_registry ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  registry_group TEXT NOT NULL,"
    "  registry_key TEXT NOT NULL,"
    "  registry_value TEXT NOT NULL,"
    "  update_time INTEGER NOT NULL DEFAULT 0,"
    "  UNIQUE (registry_group, registry_key, registry_value));"
    "CREATE INDEX xxl_job_registry_time ON xxl_job_registry (update_time);"
    "CREATE TABLE xxl_job_log_report ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  trigger_day INTEGER NOT NULL UNIQUE,"
    "  running_count INTEGER NOT NULL DEFAULT 0,"
    "  suc_count INTEGER NOT NULL DEFAULT 0,"
    "  fail_count INTEGER NOT NULL DEFAULT 0,"
    "  update_time INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE xxl_job_lock (lock_name TEXT PRIMARY KEY);"
    "INSERT INTO xxl_job_lock (lock_name) VALUES ('schedule_lock');",
    //  2: retries with an interval, exponential backoff and a cap (XXL-JOB
    //  retries at once); reports by day
    "ALTER TABLE xxl_job_info ADD COLUMN retry_interval INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE xxl_job_info ADD COLUMN retry_backoff REAL NOT NULL DEFAULT 1;"
    "ALTER TABLE xxl_job_info ADD COLUMN retry_max_interval INTEGER NOT NULL DEFAULT 0;"
    "CREATE INDEX xxl_job_log_job_time ON xxl_job_log (job_id, trigger_time);",
    //  3: planned rows are routed and written with their address ahead of
    //  their time; those planned up to fired_until may have been sent
    //  (fired_until: may be sent once covered; fired_sent: the latest
    //  planned time a commit knows was sent with no store access)
    "CREATE TABLE xxl_job_fired (id INTEGER PRIMARY KEY CHECK (id = 1),"
    "  fired_until INTEGER NOT NULL DEFAULT 0, fired_sent INTEGER NOT NULL DEFAULT 0);"
    "INSERT INTO xxl_job_fired (id, fired_until, fired_sent) VALUES (1, 0, 0);",
    //  4: no query used xxl_job_log_job_time (log clear by job and age
    //  reads xxl_job_log_time), and with runs spread over many jobs it
    //  dirtied a page per job per commit: a third of each INSERT's cost
    "DROP INDEX IF EXISTS xxl_job_log_job_time;",
    //  5: one row per planned instant and shard: a SHARDING_BROADCAST fire
    //  makes one row per agent ("i/n"; the index is i, so two plans of one
    //  instant with different agent counts still collide on shard 0)
    "DROP INDEX IF EXISTS xxl_job_log_schedule;"
    "CREATE UNIQUE INDEX xxl_job_log_schedule ON xxl_job_log (job_id, schedule_time,"
    "  COALESCE (CAST (substr (executor_sharding_param, 1,"
    "                          instr (executor_sharding_param, '/') - 1) AS INTEGER), 0))"
    "  WHERE schedule_time IS NOT NULL;",
    //  6: glue versions get per-job numbers 1, 2, ... that never change
    //  (rows kept from before are numbered in their order)
    "ALTER TABLE xxl_job_logglue ADD COLUMN version INTEGER NOT NULL DEFAULT 0;"
    "UPDATE xxl_job_logglue SET version = (SELECT COUNT(*) FROM xxl_job_logglue g"
    "  WHERE g.job_id = xxl_job_logglue.job_id AND g.id <= xxl_job_logglue.id);"
    "DROP INDEX IF EXISTS xxl_job_logglue_job;"
    "CREATE UNIQUE INDEX xxl_job_logglue_version ON xxl_job_logglue (job_id, version);",
};
#define XXL_SCHEMA_VERSION ((int) (sizeof s_migrations / sizeof s_migrations [0]))

//  Logs self->error unless the same was logged within XXL_STORE_LOG_MS
static void
s_log_error (xxl_store_t *self)
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

static int
s_fail (xxl_store_t *self, const char *what)
{
    snprintf (self->error, sizeof self->error, "%s: %s", what,
              self->db? sqlite3_errmsg (self->db): "no database");
    if (self->in_txn && !self->txn_lost && self->db && sqlite3_get_autocommit (self->db)) {
        self->txn_lost = 1;
        snprintf (self->txn_cause, sizeof self->txn_cause, "%s", self->error);
    }
    s_log_error (self);
    return -1;
}

static void
s_statement_destroy (void **item)
{
    if (*item) {
        sqlite3_finalize ((sqlite3_stmt *) *item);
        *item = NULL;
    }
}

//  Returns the cached statement for sql, reset and unbound, or NULL
//  False, with the cause as the error, for a write in a transaction that
//  SQLite ended on its own (it would commit alone, outside the turn)
static bool
s_writable (xxl_store_t *self, sqlite3_stmt *stmt)
{
    if (self->in_txn && !self->txn_lost && sqlite3_get_autocommit (self->db)) {
        self->txn_lost = 1;
        snprintf (self->txn_cause, sizeof self->txn_cause, "%s", self->error);
    }
    if (!self->txn_lost || sqlite3_stmt_readonly (stmt))
        return true;
    snprintf (self->error, sizeof self->error, "%s", self->txn_cause);
    return false;
}

static sqlite3_stmt *
s_prepare (xxl_store_t *self, const char *sql)
{
    sqlite3_stmt *stmt = (sqlite3_stmt *) zhashx_lookup (self->statements, sql);
    if (stmt) {
        sqlite3_reset (stmt);
        sqlite3_clear_bindings (stmt);
        return s_writable (self, stmt)? stmt: NULL;
    }
    if (sqlite3_prepare_v3 (self->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, NULL)
        != SQLITE_OK) {
        s_fail (self, "prepare");
        return NULL;
    }
    zhashx_insert (self->statements, sql, stmt);
    return s_writable (self, stmt)? stmt: NULL;
}

//  Binds fmt's arguments ('i' int64_t, 'd' double, 's' text or NULL, any
//  other: NULL).  Text is bound without a copy (SQLITE_STATIC): every
//  function here steps its statement to the end and resets it before it
//  returns, while the caller's strings are alive, and s_prepare clears
//  the bindings before a statement is used again.
static int
s_bindv (xxl_store_t *self, sqlite3_stmt *stmt, const char *fmt, va_list args)
{
    int index = 1;
    for (const char *f = fmt? fmt: ""; *f; f++, index++) {
        int rc;
        if (*f == 'i')
            rc = sqlite3_bind_int64 (stmt, index, va_arg (args, int64_t));
        else
        if (*f == 'd')
            rc = sqlite3_bind_double (stmt, index, va_arg (args, double));
        else
        if (*f == 's') {
            const char *text = va_arg (args, const char *);
            rc = text? sqlite3_bind_text (stmt, index, text, -1, SQLITE_STATIC)
                     : sqlite3_bind_null (stmt, index);
        }
        else
            rc = sqlite3_bind_null (stmt, index);
        if (rc != SQLITE_OK)
            return s_fail (self, "bind");
    }
    return 0;
}

static int
s_bind (xxl_store_t *self, sqlite3_stmt *stmt, const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    int rc = s_bindv (self, stmt, fmt, args);
    va_end (args);
    return rc;
}

//  Steps a statement that returns no row; returns changes() or -1
static int
s_done (xxl_store_t *self, sqlite3_stmt *stmt)
{
    int rc = sqlite3_step (stmt);
    sqlite3_reset (stmt);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        return s_fail (self, "step");
    return sqlite3_changes (self->db);
}

static char *
s_column_text (sqlite3_stmt *stmt, int column)
{
    const unsigned char *text = sqlite3_column_text (stmt, column);
    return strdup (text? (const char *) text: "");
}

static int
s_exec_script (xxl_store_t *self, const char *sql)
{
    char *message = NULL;
    if (sqlite3_exec (self->db, sql, NULL, NULL, &message) != SQLITE_OK) {
        snprintf (self->error, sizeof self->error, "%s", message? message: "exec failed");
        sqlite3_free (message);
        return -1;
    }
    return 0;
}

static int
s_migrate (xxl_store_t *self)
{
    int version = xxl_store_schema_version (self);
    if (version > XXL_SCHEMA_VERSION) {
        snprintf (self->error, sizeof self->error,
                  "database schema version %d is newer than this xxl-scheduler knows (%d)",
                  version, XXL_SCHEMA_VERSION);
        return -1;
    }
    for (; version < XXL_SCHEMA_VERSION; version++) {
        char pragma [64];
        snprintf (pragma, sizeof pragma, "PRAGMA user_version = %d;", version + 1);
        if (s_exec_script (self, "BEGIN IMMEDIATE;")
        ||  s_exec_script (self, s_migrations [version])
        ||  s_exec_script (self, pragma)
        ||  s_exec_script (self, "COMMIT;")) {
            char reason [sizeof self->error + 64];
            snprintf (reason, sizeof reason, "migration to schema %d failed: %s",
                      version + 1, self->error);
            s_exec_script (self, "ROLLBACK;");
            snprintf (self->error, sizeof self->error, "%.500s", reason);
            return -1;
        }
        zsys_info ("store: migrated schema to version %d", version + 1);
    }
    return 0;
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

//  The checkpointer: its own connection copies the WAL into the database
//  (PASSIVE: it never waits for, nor blocks, the writer) every 250 ms, and
//  when the writer nudges it (a "PASS" on the pipe), so that the fsyncs of
//  checkpoints do not stall the writer's commits, as SQLite's automatic
//  checkpoint inside COMMIT would.  args: the path.
static void
s_checkpointer (zsock_t *pipe, void *args)
{
    sqlite3 *db = NULL;
    if (sqlite3_open_v2 ((const char *) args, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
                         NULL) != SQLITE_OK) {
        zsys_warning ("store: checkpointer cannot open %s: %s", (const char *) args,
                      db? sqlite3_errmsg (db): "out of memory");
        sqlite3_close (db);
        zsock_signal (pipe, 0);
        //  Without it the WAL still gets checkpointed when the store closes
        while (true) {
            char *command = zstr_recv (pipe);
            bool term = !command || streq (command, "$TERM");
            zstr_free (&command);
            if (term)
                return;
        }
    }
    //  A connection learns the database is in WAL mode at its first read
    sqlite3_exec (db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
    zsock_signal (pipe, 0);
    zpoller_t *poller = zpoller_new (pipe, NULL);
    zpoller_set_nonstop (poller, true);
    bool terminated = false;
    int64_t warned_at = 0;              //  one line per XXL_STORE_LOG_MS while it fails
    uint64_t unwarned = 0;
    while (!terminated) {
        if (zpoller_wait (poller, 250) == pipe) {
            //  Nudges queued during the last pass make one pass
            do {
                char *command = zstr_recv (pipe);
                terminated |= !command || streq (command, "$TERM");
                zstr_free (&command);
            } while (!terminated && (zsock_events (pipe) & ZMQ_POLLIN));
        }
        else
        if (zpoller_terminated (poller))
            break;
        int frames = 0, done = 0;
        int rc = sqlite3_wal_checkpoint_v2 (db, NULL, SQLITE_CHECKPOINT_PASSIVE, &frames, &done);
        if (rc != SQLITE_OK && rc != SQLITE_BUSY && rc != SQLITE_LOCKED) {
            if (zclock_mono () - warned_at >= XXL_STORE_LOG_MS) {
                zsys_warning ("store: checkpoint: %s (%" PRIu64 " more failed passes since the"
                              " last such line)", sqlite3_errmsg (db), unwarned);
                warned_at = zclock_mono ();
                unwarned = 0;
            }
            else
                unwarned++;
        }
    }
    zpoller_destroy (&poller);
    sqlite3_close (db);
}

//  After each commit of the writer: the WAL's size
static int
s_wal_hook (void *arg, sqlite3 *db, const char *name, int frames)
{
    (void) db;
    (void) name;
    xxl_store_t *self = (xxl_store_t *) arg;
    if (frames < self->wal_frames)
        self->wal_nudged = self->wal_retry = 0;         //  it started over
    self->wal_frames = frames;
    return SQLITE_OK;
}

xxl_store_t *
xxl_store_new (const char *path, char *err, size_t errlen)
{
    //  No memory statistics: their global mutex showed in the profiles
    //  (a no-op once SQLite is initialized)
    sqlite3_config (SQLITE_CONFIG_MEMSTATUS, 0);
    xxl_store_t *self = (xxl_store_t *) zmalloc (sizeof (xxl_store_t));
    self->statements = zhashx_new ();
    zhashx_set_key_hasher (self->statements, s_pointer_hash);
    zhashx_set_key_comparator (self->statements, s_pointer_compare);
    zhashx_set_key_duplicator (self->statements, NULL);
    zhashx_set_key_destructor (self->statements, NULL);
    zhashx_set_destructor (self->statements, s_statement_destroy);
    if (sqlite3_open_v2 (path, &self->db,
                         SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                         NULL) != SQLITE_OK) {
        snprintf (err, errlen, "cannot open database %s: %s", path,
                  self->db? sqlite3_errmsg (self->db): "out of memory");
        xxl_store_destroy (&self);
        return NULL;
    }
    sqlite3_busy_timeout (self->db, 5000);
    if (s_exec_script (self, "PRAGMA journal_mode = WAL;"
                             "PRAGMA synchronous = NORMAL;"
                             "PRAGMA foreign_keys = OFF;"
                             "PRAGMA temp_store = MEMORY;"
                             "PRAGMA cache_size = -65536;")
    ||  s_migrate (self)) {
        snprintf (err, errlen, "database %s: %s", path, self->error);
        xxl_store_destroy (&self);
        return NULL;
    }
    //  Checkpoints on their own thread (not for in-memory databases)
    if (*path && strneq (path, ":memory:") && strncmp (path, "file:", 5)) {
        if (s_exec_script (self, "PRAGMA wal_autocheckpoint = 0;") == 0)
            self->checkpointer = zactor_new (s_checkpointer, (void *) path);
        if (self->checkpointer) {
            sqlite3_wal_hook (self->db, s_wal_hook, self);
            xxl_store_set_wal_size (self, XXL_WAL_MIB);
        }
        else
            s_exec_script (self, "PRAGMA wal_autocheckpoint = 1000;");
    }
    return self;
}

void
xxl_store_destroy (xxl_store_t **self_p)
{
    if (self_p && *self_p) {
        xxl_store_t *self = *self_p;
        if (self->in_txn)
            s_exec_script (self, "ROLLBACK;");
        zactor_destroy (&self->checkpointer);
        zhashx_destroy (&self->statements);
        if (self->db)
            sqlite3_close (self->db);
        free (self);
        *self_p = NULL;
    }
}

const char *
xxl_store_error (xxl_store_t *self)
{
    return self->error;
}

int
xxl_store_schema_version (xxl_store_t *self)
{
    return (int) xxl_store_scalar (self, "PRAGMA user_version", NULL);
}

int
xxl_store_begin (xxl_store_t *self)
{
    if (self->in_txn)
        return 0;
    sqlite3_stmt *stmt = s_prepare (self, "BEGIN IMMEDIATE");
    if (!stmt || s_done (self, stmt) < 0)
        return -1;
    self->in_txn = 1;
    self->txn_lost = 0;
    return 0;
}

int
xxl_store_commit (xxl_store_t *self)
{
    if (!self->in_txn)
        return 0;
    if (self->txn_lost) {
        //  Nothing to commit: what the turn wrote is gone; its cause is the
        //  error (not "cannot commit - no transaction is active")
        snprintf (self->error, sizeof self->error, "%s", self->txn_cause);
        self->in_txn = 0;
        self->txn_lost = 0;
        return -1;
    }
    sqlite3_stmt *stmt = s_prepare (self, "COMMIT");
    if (!stmt || s_done (self, stmt) < 0) {
        char cause [512];
        snprintf (cause, sizeof cause, "%s", self->error);
        xxl_store_rollback (self);
        snprintf (self->error, sizeof self->error, "%s", cause);
        return -1;
    }
    self->in_txn = 0;
    //  Not once the WAL is due to start over: the writer's checkpoint
    //  (xxl_store_wal_restart) can run only between the checkpointer's
    //  passes
    if (self->checkpointer && self->wal_frames < self->wal_size
    &&  self->wal_frames >= self->wal_nudged + self->wal_size / 16) {
        //  (a checkpointer still busy with the last nudge is not waited for)
        if (zmq_send (zsock_resolve (self->checkpointer), "PASS", 4, ZMQ_DONTWAIT) == 4)
            self->wal_nudged = self->wal_frames;
    }
    return 0;
}

void
xxl_store_set_wal_size (xxl_store_t *self, int mib)
{
    int64_t page = xxl_store_scalar (self, "PRAGMA page_size", NULL);
    if (mib < 1 || mib > XXL_STORE_WAL_MIB_MAX || page <= 0)
        return;
    self->wal_size = (int) ((int64_t) mib * 1048576 / page);
    char pragma [64];
    snprintf (pragma, sizeof pragma, "PRAGMA journal_size_limit = %" PRId64,
              (int64_t) mib * 4 * 1048576);
    s_exec_script (self, pragma);
}

int
xxl_store_wal_due (xxl_store_t *self)
{
    if (self->in_txn || !self->checkpointer || self->wal_frames < self->wal_size
    ||  self->wal_frames < self->wal_retry)
        return 0;
    return self->wal_frames >= 4 * self->wal_size? 2: 1;
}

int
xxl_store_wal_restart (xxl_store_t *self)
{
    if (self->in_txn || !self->checkpointer)
        return 0;
    //  Past four times its size the checkpointer cannot keep up with the
    //  writes: the writer waits for its pass (up to a second)
    bool wait = self->wal_frames >= 4 * self->wal_size;
    int64_t deadline = zclock_mono () + 1000;
    int frames = 0, copied = 0, rc;
    while ((rc = sqlite3_wal_checkpoint_v2 (self->db, NULL, SQLITE_CHECKPOINT_PASSIVE,
                                            &frames, &copied)) == SQLITE_BUSY
    &&     wait && zclock_mono () < deadline)
        zclock_sleep (1);
    //  Not due again for a sixteenth of its size, nor at every turn: after
    //  a restart that a reader still in the WAL (a backup, say) held back,
    //  a wait that timed out, or an error
    if (rc != SQLITE_BUSY || wait)
        self->wal_retry = self->wal_frames + self->wal_size / 16;
    if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
        return 0;                       //  the checkpointer's pass: next time
    if (rc != SQLITE_OK)
        return s_fail (self, "checkpoint");
    return copied == frames? 1: 0;
}

int
xxl_store_rollback (xxl_store_t *self)
{
    if (!self->in_txn)
        return 0;
    self->in_txn = 0;
    self->txn_lost = 0;
    if (sqlite3_get_autocommit (self->db))
        return 0;                       //  (SQLite rolled it back already)
    sqlite3_stmt *stmt = s_prepare (self, "ROLLBACK");
    return stmt && s_done (self, stmt) >= 0? 0: -1;
}

int
xxl_store_in_txn (xxl_store_t *self)
{
    return self->in_txn;
}

int
xxl_store_exec_once (xxl_store_t *self, const char *sql, const char *fmt, ...)
{
    sqlite3_stmt *stmt = NULL;
    if (sqlite3_prepare_v2 (self->db, sql, -1, &stmt, NULL) != SQLITE_OK)
        return s_fail (self, "prepare");
    if (!s_writable (self, stmt)) {
        sqlite3_finalize (stmt);
        return -1;
    }
    va_list args;
    va_start (args, fmt);
    int rc = s_bindv (self, stmt, fmt, args);
    va_end (args);
    int changes = rc? -1: s_done (self, stmt);
    sqlite3_finalize (stmt);
    return changes;
}

int
xxl_store_exec (xxl_store_t *self, const char *sql, const char *fmt, ...)
{
    sqlite3_stmt *stmt = s_prepare (self, sql);
    if (!stmt)
        return -1;
    va_list args;
    va_start (args, fmt);
    int rc = s_bindv (self, stmt, fmt, args);
    va_end (args);
    return rc? -1: s_done (self, stmt);
}

int64_t
xxl_store_scalar (xxl_store_t *self, const char *sql, const char *fmt, ...)
{
    sqlite3_stmt *stmt = s_prepare (self, sql);
    if (!stmt)
        return -1;
    va_list args;
    va_start (args, fmt);
    int rc = s_bindv (self, stmt, fmt, args);
    va_end (args);
    if (rc)
        return -1;
    int64_t value = -1;
    rc = sqlite3_step (stmt);
    if (rc == SQLITE_ROW)
        value = sqlite3_column_int64 (stmt, 0);
    else
    if (rc != SQLITE_DONE)
        s_fail (self, "query");
    sqlite3_reset (stmt);
    return value;
}

char *
xxl_store_text (xxl_store_t *self, const char *sql, const char *fmt, ...)
{
    sqlite3_stmt *stmt = s_prepare (self, sql);
    if (!stmt)
        return NULL;
    va_list args;
    va_start (args, fmt);
    int rc = s_bindv (self, stmt, fmt, args);
    va_end (args);
    if (rc)
        return NULL;
    char *value = NULL;
    rc = sqlite3_step (stmt);
    if (rc == SQLITE_ROW && sqlite3_column_type (stmt, 0) != SQLITE_NULL)
        value = s_column_text (stmt, 0);
    else
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        s_fail (self, "query");
    sqlite3_reset (stmt);
    return value;
}

int
xxl_store_ids (xxl_store_t *self, const char *sql, int64_t arg, int64_t *ids,
               size_t max, size_t *count)
{
    *count = 0;
    sqlite3_stmt *stmt = s_prepare (self, sql);
    if (!stmt || s_bind (self, stmt, "i", arg))
        return -1;
    int rc;
    while (*count < max && (rc = sqlite3_step (stmt)) == SQLITE_ROW)
        ids [(*count)++] = sqlite3_column_int64 (stmt, 0);
    sqlite3_reset (stmt);
    return 0;
}

int
xxl_store_int_rows (xxl_store_t *self, const char *sql, int64_t arg, int64_t *cells,
                    size_t columns, size_t max_rows, size_t *count)
{
    *count = 0;
    sqlite3_stmt *stmt = s_prepare (self, sql);
    if (!stmt || s_bind (self, stmt, "i", arg))
        return -1;
    int rc;
    while (*count < max_rows && (rc = sqlite3_step (stmt)) == SQLITE_ROW) {
        for (size_t c = 0; c < columns; c++)
            cells [*count * columns + c] = sqlite3_column_int64 (stmt, (int) c);
        (*count)++;
    }
    sqlite3_reset (stmt);
    return 0;
}

int
xxl_store_encode (xxl_store_t *self, xxl_enc_t *enc, int rows_as_array,
                  const char *sql, const char *fmt, ...)
{
    sqlite3_stmt *stmt = s_prepare (self, sql);
    if (!stmt)
        return -1;
    va_list args;
    va_start (args, fmt);
    int rc = s_bindv (self, stmt, fmt, args);
    va_end (args);
    if (rc)
        return -1;
    if (rows_as_array)
        xxl_enc_array_begin (enc);
    int rows = 0;
    while ((rc = sqlite3_step (stmt)) == SQLITE_ROW) {
        rows++;
        xxl_enc_map_begin (enc);
        int columns = sqlite3_column_count (stmt);
        for (int column = 0; column < columns; column++) {
            xxl_enc_key (enc, sqlite3_column_name (stmt, column));
            switch (sqlite3_column_type (stmt, column)) {
                case SQLITE_INTEGER:
                    xxl_enc_int (enc, sqlite3_column_int64 (stmt, column));
                    break;
                case SQLITE_NULL:
                    xxl_enc_nil (enc);
                    break;
                case SQLITE_FLOAT:
                    xxl_enc_double (enc, sqlite3_column_double (stmt, column));
                    break;
                default: {
                    const char *text = (const char *) sqlite3_column_text (stmt, column);
                    xxl_enc_strn (enc, text? text: "",
                                  (size_t) sqlite3_column_bytes (stmt, column));
                }
            }
        }
        xxl_enc_map_end (enc);
        if (!rows_as_array)
            break;
    }
    if (rows_as_array)
        xxl_enc_array_end (enc);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        s_fail (self, "query");
        rows = -1;
    }
    sqlite3_reset (stmt);
    return rows;
}

int
xxl_store_encode_max (xxl_store_t *self, xxl_enc_t *enc, size_t max_size,
                      int *truncated, const char *sql, const char *fmt, ...)
{
    *truncated = 0;
    sqlite3_stmt *stmt = s_prepare (self, sql);
    if (!stmt)
        return -1;
    va_list args;
    va_start (args, fmt);
    int rc = s_bindv (self, stmt, fmt, args);
    va_end (args);
    if (rc)
        return -1;
    xxl_enc_array_begin (enc);
    int rows = 0;
    while ((rc = sqlite3_step (stmt)) == SQLITE_ROW) {
        int columns = sqlite3_column_count (stmt);
        //  An upper bound of the row's encoded size: 5-byte map header,
        //  each key with a 5-byte header, each value 9 bytes or a
        //  string with a 5-byte header
        size_t size = 5;
        for (int column = 0; column < columns; column++) {
            size += 5 + strlen (sqlite3_column_name (stmt, column));
            int type = sqlite3_column_type (stmt, column);
            size += type == SQLITE_INTEGER || type == SQLITE_NULL? 9
                  : 5 + (size_t) sqlite3_column_bytes (stmt, column);
        }
        if (xxl_enc_size (enc) + size > max_size) {
            *truncated = 1;
            rc = SQLITE_DONE;
            break;
        }
        rows++;
        xxl_enc_map_begin (enc);
        for (int column = 0; column < columns; column++) {
            xxl_enc_key (enc, sqlite3_column_name (stmt, column));
            switch (sqlite3_column_type (stmt, column)) {
                case SQLITE_INTEGER:
                    xxl_enc_int (enc, sqlite3_column_int64 (stmt, column));
                    break;
                case SQLITE_NULL:
                    xxl_enc_nil (enc);
                    break;
                default: {
                    const char *text = (const char *) sqlite3_column_text (stmt, column);
                    xxl_enc_strn (enc, text? text: "",
                                  (size_t) sqlite3_column_bytes (stmt, column));
                }
            }
        }
        xxl_enc_map_end (enc);
    }
    xxl_enc_array_end (enc);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        s_fail (self, "query");
        rows = -1;
    }
    sqlite3_reset (stmt);
    return rows;
}

//  --------------------------------------------------------------------
//  Groups

int64_t
xxl_store_group_add (xxl_store_t *self, const xxl_group_t *group)
{
    int rc = xxl_store_exec (self,
        "INSERT INTO xxl_job_group (app_name, title, address_type, address_list, update_time)"
        " VALUES (?, ?, ?, ?, ?)", "ssisi",
        group->app_name, group->title? group->title: "", (int64_t) group->address_type,
        group->address_list, group->update_time);
    return rc < 0? -1: sqlite3_last_insert_rowid (self->db);
}

int
xxl_store_group_update (xxl_store_t *self, const xxl_group_t *group)
{
    return xxl_store_exec (self,
        "UPDATE xxl_job_group SET app_name = ?, title = ?, address_type = ?,"
        " address_list = ?, update_time = ? WHERE id = ?", "ssisii",
        group->app_name, group->title? group->title: "", (int64_t) group->address_type,
        group->address_list, group->update_time, group->id) < 0? -1: 0;
}

int
xxl_store_group_rm (xxl_store_t *self, int64_t id)
{
    return xxl_store_exec (self, "DELETE FROM xxl_job_group WHERE id = ?", "i", id) < 0? -1: 0;
}

int64_t
xxl_store_group_jobs (xxl_store_t *self, int64_t id)
{
    return xxl_store_scalar (self, "SELECT COUNT(*) FROM xxl_job_info WHERE job_group = ?",
                             "i", id);
}

static int
s_group_read (xxl_store_t *self, sqlite3_stmt *stmt, xxl_group_t *group)
{
    memset (group, 0, sizeof *group);
    int rc = sqlite3_step (stmt);
    if (rc == SQLITE_ROW) {
        group->id = sqlite3_column_int64 (stmt, 0);
        group->app_name = s_column_text (stmt, 1);
        group->title = s_column_text (stmt, 2);
        group->address_type = sqlite3_column_int (stmt, 3);
        group->address_list = s_column_text (stmt, 4);
        group->update_time = sqlite3_column_int64 (stmt, 5);
        rc = 0;
    }
    else
        rc = rc == SQLITE_DONE? 1: s_fail (self, "group query");
    sqlite3_reset (stmt);
    return rc;
}

#define XXL_GROUP_COLUMNS "id, app_name, title, address_type, address_list, update_time"

int
xxl_store_group_load (xxl_store_t *self, int64_t id, xxl_group_t *group)
{
    sqlite3_stmt *stmt = s_prepare (self,
        "SELECT " XXL_GROUP_COLUMNS " FROM xxl_job_group WHERE id = ?");
    if (!stmt || s_bind (self, stmt, "i", id))
        return -1;
    return s_group_read (self, stmt, group);
}

int
xxl_store_group_find (xxl_store_t *self, const char *key, xxl_group_t *group)
{
    int numeric = *key != 0;
    for (const char *p = key; *p; p++)
        if (*p < '0' || *p > '9')
            numeric = 0;
    if (numeric && strlen (key) < 18)
        return xxl_store_group_load (self, atoll (key), group);
    sqlite3_stmt *stmt = s_prepare (self,
        "SELECT " XXL_GROUP_COLUMNS " FROM xxl_job_group WHERE app_name = ?");
    if (!stmt || s_bind (self, stmt, "s", key))
        return -1;
    return s_group_read (self, stmt, group);
}

void
xxl_group_free (xxl_group_t *group)
{
    free (group->app_name);
    free (group->title);
    free (group->address_list);
    memset (group, 0, sizeof *group);
}

//  --------------------------------------------------------------------
//  Jobs

#define XXL_JOB_COLUMNS \
    "job_group, job_desc, add_time, update_time, author, alarm_email, schedule_type," \
    " schedule_conf, misfire_strategy, executor_route_strategy, executor_handler," \
    " executor_param, executor_block_strategy, executor_timeout," \
    " executor_fail_retry_count, glue_type, glue_source, glue_remark, glue_updatetime," \
    " child_jobid, trigger_status, trigger_last_time, trigger_next_time, timezone," \
    " retry_interval, retry_backoff, retry_max_interval"
#define XXL_JOB_FMT "isiisssssssssiisssisiiisidi"

#define XXL_JOB_ARGS(j) \
    (j)->job_group, (j)->job_desc, (j)->add_time, (j)->update_time, (j)->author, \
    (j)->alarm_email, (j)->schedule_type, (j)->schedule_conf, (j)->misfire_strategy, \
    (j)->executor_route_strategy, (j)->executor_handler, (j)->executor_param, \
    (j)->executor_block_strategy, (j)->executor_timeout, (j)->executor_fail_retry_count, \
    (j)->glue_type, (j)->glue_source, (j)->glue_remark, (j)->glue_updatetime, \
    (j)->child_jobid, (j)->trigger_status, (j)->trigger_last_time, \
    (j)->trigger_next_time, (j)->timezone, (j)->retry_interval, (j)->retry_backoff, \
    (j)->retry_max_interval

int64_t
xxl_store_job_add (xxl_store_t *self, const xxl_job_t *job)
{
    int rc = xxl_store_exec (self,
        "INSERT INTO xxl_job_info (" XXL_JOB_COLUMNS ") VALUES"
        " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        XXL_JOB_FMT, XXL_JOB_ARGS (job));
    return rc < 0? -1: sqlite3_last_insert_rowid (self->db);
}

int
xxl_store_job_save (xxl_store_t *self, const xxl_job_t *job)
{
    int rc = xxl_store_exec (self,
        "UPDATE xxl_job_info SET (" XXL_JOB_COLUMNS ") ="
        " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " WHERE id = ?", XXL_JOB_FMT "i", XXL_JOB_ARGS (job), job->id);
    return rc < 0? -1: 0;
}

int
xxl_store_job_rm (xxl_store_t *self, int64_t id)
{
    if (xxl_store_exec (self, "DELETE FROM xxl_job_info WHERE id = ?", "i", id) < 0
    ||  xxl_store_exec (self, "DELETE FROM xxl_job_logglue WHERE job_id = ?", "i", id) < 0)
        return -1;
    return 0;
}

int64_t
xxl_store_job_rm_logs (xxl_store_t *self, int64_t id)
{
    return xxl_store_exec (self, "DELETE FROM xxl_job_log WHERE job_id = ?", "i", id);
}

//  Drops `child` from a comma-separated list; a new string
static char *
s_list_without (const char *list, int64_t child)
{
    char *out = (char *) calloc (1, strlen (list) + 1);
    char *copy = strdup (list), *save = NULL;
    if (!out || !copy) {
        free (out);
        free (copy);
        return NULL;
    }
    for (char *t = strtok_r (copy, ",", &save); t; t = strtok_r (NULL, ",", &save)) {
        char *end = NULL;
        long long value = strtoll (t, &end, 10);
        if (end != t && *end == 0 && value == child)
            continue;
        if (*out)
            strcat (out, ",");
        strcat (out, t);
    }
    free (copy);
    return out;
}

int
xxl_store_job_unchild (xxl_store_t *self, int64_t child)
{
    int64_t parents [256];
    size_t count;
    int changed = 0;
    do {
        if (xxl_store_ids (self, "SELECT id FROM xxl_job_info WHERE child_jobid != ''"
                           " AND instr (',' || replace (child_jobid, ' ', '') || ',',"
                           " ',' || ?1 || ',') > 0 ORDER BY id LIMIT 256",
                           child, parents, 256, &count))
            return -1;
        for (size_t i = 0; i < count; i++) {
            char *list = xxl_store_text (self,
                "SELECT child_jobid FROM xxl_job_info WHERE id = ?", "i", parents [i]);
            char *spaceless = list? strdup (list): NULL;
            if (spaceless) {
                char *w = spaceless;
                for (const char *r = list; *r; r++)
                    if (*r != ' ')
                        *w++ = *r;
                *w = 0;
            }
            char *rest = spaceless? s_list_without (spaceless, child): NULL;
            int rc = rest? xxl_store_exec (self,
                "UPDATE xxl_job_info SET child_jobid = ? WHERE id = ?", "si", rest, parents [i]): -1;
            free (list);
            free (spaceless);
            free (rest);
            if (rc < 0)
                return -1;
            changed++;
        }
    } while (count == 256);
    return changed;
}

int
xxl_store_job_load (xxl_store_t *self, int64_t id, xxl_job_t *job)
{
    memset (job, 0, sizeof *job);
    sqlite3_stmt *stmt = s_prepare (self,
        "SELECT id, " XXL_JOB_COLUMNS " FROM xxl_job_info WHERE id = ?");
    if (!stmt || s_bind (self, stmt, "i", id))
        return -1;
    int rc = sqlite3_step (stmt);
    if (rc == SQLITE_ROW) {
        int c = 0;
        job->id = sqlite3_column_int64 (stmt, c++);
        job->job_group = sqlite3_column_int64 (stmt, c++);
        job->job_desc = s_column_text (stmt, c++);
        job->add_time = sqlite3_column_int64 (stmt, c++);
        job->update_time = sqlite3_column_int64 (stmt, c++);
        job->author = s_column_text (stmt, c++);
        job->alarm_email = s_column_text (stmt, c++);
        job->schedule_type = s_column_text (stmt, c++);
        job->schedule_conf = s_column_text (stmt, c++);
        job->misfire_strategy = s_column_text (stmt, c++);
        job->executor_route_strategy = s_column_text (stmt, c++);
        job->executor_handler = s_column_text (stmt, c++);
        job->executor_param = s_column_text (stmt, c++);
        job->executor_block_strategy = s_column_text (stmt, c++);
        job->executor_timeout = sqlite3_column_int64 (stmt, c++);
        job->executor_fail_retry_count = sqlite3_column_int64 (stmt, c++);
        job->glue_type = s_column_text (stmt, c++);
        job->glue_source = s_column_text (stmt, c++);
        job->glue_remark = s_column_text (stmt, c++);
        job->glue_updatetime = sqlite3_column_int64 (stmt, c++);
        job->child_jobid = s_column_text (stmt, c++);
        job->trigger_status = sqlite3_column_int64 (stmt, c++);
        job->trigger_last_time = sqlite3_column_int64 (stmt, c++);
        job->trigger_next_time = sqlite3_column_int64 (stmt, c++);
        job->timezone = s_column_text (stmt, c++);
        job->retry_interval = sqlite3_column_int64 (stmt, c++);
        job->retry_backoff = sqlite3_column_double (stmt, c++);
        job->retry_max_interval = sqlite3_column_int64 (stmt, c++);
        rc = 0;
    }
    else
        rc = rc == SQLITE_DONE? 1: s_fail (self, "job query");
    sqlite3_reset (stmt);
    return rc;
}

void
xxl_job_free (xxl_job_t *job)
{
    char **strings [] = {
        &job->job_desc, &job->author, &job->alarm_email, &job->schedule_type,
        &job->schedule_conf, &job->misfire_strategy, &job->executor_route_strategy,
        &job->executor_handler, &job->executor_param, &job->executor_block_strategy,
        &job->glue_type, &job->glue_source, &job->glue_remark, &job->child_jobid,
        &job->timezone
    };
    for (size_t i = 0; i < sizeof strings / sizeof strings [0]; i++)
        free (*strings [i]);
    memset (job, 0, sizeof *job);
}

int
xxl_store_glue_add (xxl_store_t *self, int64_t job_id, const char *glue_type,
                    const char *source, const char *remark, int64_t now)
{
    int64_t version = xxl_store_scalar (self,
        "SELECT COALESCE(MAX(version), 0) + 1 FROM xxl_job_logglue WHERE job_id = ?",
        "i", job_id);
    if (version < 1
    ||  xxl_store_exec (self,
            "INSERT INTO xxl_job_logglue (job_id, glue_type, glue_source, glue_remark,"
            " add_time, update_time, version) VALUES (?, ?, ?, ?, ?, ?, ?)", "isssiii",
            job_id, glue_type, source, remark? remark: "", now, now, version) < 0)
        return -1;
    //  Keep the last XXL_GLUE_KEEP versions, as XXL-JOB does (30)
    if (xxl_store_exec (self,
            "DELETE FROM xxl_job_logglue WHERE job_id = ? AND version <= ?",
            "ii", job_id, version - XXL_GLUE_KEEP) < 0)
        return -1;
    return (int) version;
}

//  --------------------------------------------------------------------
//  Logs

//  The next log id AUTOINCREMENT would give (ids are never reused)
int64_t
xxl_store_log_next_id (xxl_store_t *self)
{
    int64_t seq = xxl_store_scalar (self,
        "SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'xxl_job_log'), 0)", "");
    return seq < 0? -1: seq + 1;
}

int
xxl_store_log_add (xxl_store_t *self, xxl_log_t *log)
{
    //  Column 13 is the id: NULL lets AUTOINCREMENT choose
    sqlite3_stmt *stmt = s_prepare (self,
        "INSERT INTO xxl_job_log (job_group, job_id, executor_address, executor_handler,"
        " executor_param, executor_sharding_param, executor_fail_retry_count,"
        " trigger_time, trigger_code, trigger_msg, trigger_type, schedule_time, id)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    if (!stmt || s_bind (self, stmt, "iissssiiiss",
            log->job_group, log->job_id, log->executor_address, log->executor_handler,
            log->executor_param, log->executor_sharding_param,
            log->executor_fail_retry_count, log->trigger_time, log->trigger_code,
            log->trigger_msg, log->trigger_type))
        return -1;
    if (log->schedule_time > 0)
        sqlite3_bind_int64 (stmt, 12, log->schedule_time);
    if (log->id > 0)
        sqlite3_bind_int64 (stmt, 13, log->id);
    if (s_done (self, stmt) < 0)
        return -1;
    log->id = sqlite3_last_insert_rowid (self->db);
    return 0;
}

int
xxl_store_log_trigger_done (xxl_store_t *self, int64_t log_id, int code,
                            const char *address, const char *append)
{
    return xxl_store_exec (self,
        "UPDATE xxl_job_log SET trigger_code = ?,"
        " executor_address = COALESCE(?, executor_address),"
        " trigger_msg = COALESCE(trigger_msg, '') || ? WHERE id = ?", "issi",
        (int64_t) code, address, append? append: "", log_id) < 0? -1: 0;
}

int
xxl_store_log_handle_done (xxl_store_t *self, int64_t log_id, int64_t handle_time,
                           int code, const char *msg)
{
    int changes = xxl_store_exec (self,
        "UPDATE xxl_job_log SET handle_time = ?, handle_code = ?, handle_msg = ?,"
        " trigger_code = CASE trigger_code WHEN 0 THEN 200 ELSE trigger_code END"
        " WHERE id = ? AND handle_code = 0", "iisi",
        handle_time, (int64_t) code, msg, log_id);
    return changes < 0? -1: changes == 0? 1: 0;
}

int
xxl_store_log_handle_done_at (xxl_store_t *self, int64_t log_id, int64_t handle_time,
                              int code, const char *msg, int64_t trigger_time)
{
    int changes = xxl_store_exec (self,
        "UPDATE xxl_job_log SET handle_time = ?, handle_code = ?, handle_msg = ?,"
        " trigger_time = CASE trigger_code WHEN 0 THEN ? ELSE trigger_time END,"
        " trigger_code = CASE trigger_code WHEN 0 THEN 200 ELSE trigger_code END"
        " WHERE id = ? AND handle_code = 0", "iisii",
        handle_time, (int64_t) code, msg, trigger_time, log_id);
    return changes < 0? -1: changes == 0? 1: 0;
}

int
xxl_store_log_load (xxl_store_t *self, int64_t id, xxl_log_t *log)
{
    memset (log, 0, sizeof *log);
    sqlite3_stmt *stmt = s_prepare (self,
        "SELECT id, job_group, job_id, executor_address, executor_handler, executor_param,"
        " executor_sharding_param, executor_fail_retry_count, trigger_time, trigger_code,"
        " trigger_msg, trigger_type, schedule_time, handle_time, handle_code, handle_msg"
        " FROM xxl_job_log WHERE id = ?");
    if (!stmt || s_bind (self, stmt, "i", id))
        return -1;
    int rc = sqlite3_step (stmt);
    if (rc == SQLITE_ROW) {
        int c = 0;
        log->id = sqlite3_column_int64 (stmt, c++);
        log->job_group = sqlite3_column_int64 (stmt, c++);
        log->job_id = sqlite3_column_int64 (stmt, c++);
        log->executor_address = s_column_text (stmt, c++);
        log->executor_handler = s_column_text (stmt, c++);
        log->executor_param = s_column_text (stmt, c++);
        log->executor_sharding_param = s_column_text (stmt, c++);
        log->executor_fail_retry_count = sqlite3_column_int64 (stmt, c++);
        log->trigger_time = sqlite3_column_int64 (stmt, c++);
        log->trigger_code = sqlite3_column_int64 (stmt, c++);
        log->trigger_msg = s_column_text (stmt, c++);
        log->trigger_type = s_column_text (stmt, c++);
        log->schedule_time = sqlite3_column_int64 (stmt, c++);
        log->handle_time = sqlite3_column_int64 (stmt, c++);
        log->handle_code = sqlite3_column_int64 (stmt, c++);
        log->handle_msg = s_column_text (stmt, c++);
        rc = 0;
    }
    else
        rc = rc == SQLITE_DONE? 1: s_fail (self, "log query");
    sqlite3_reset (stmt);
    return rc;
}

void
xxl_log_free (xxl_log_t *log)
{
    free (log->executor_address);
    free (log->executor_handler);
    free (log->executor_param);
    free (log->executor_sharding_param);
    free (log->trigger_msg);
    free (log->trigger_type);
    free (log->handle_msg);
    memset (log, 0, sizeof *log);
}

//  --------------------------------------------------------------------
//  Registry

int
xxl_store_registry_beat (xxl_store_t *self, const char *app, const char *address, int64_t now)
{
    return xxl_store_exec (self,
        "INSERT INTO xxl_job_registry (registry_group, registry_key, registry_value, update_time)"
        " VALUES ('EXECUTOR', ?, ?, ?) ON CONFLICT (registry_group, registry_key, registry_value)"
        " DO UPDATE SET update_time = excluded.update_time", "ssi", app, address, now) < 0? -1: 0;
}

int
xxl_store_registry_remove (xxl_store_t *self, const char *app, const char *address)
{
    return xxl_store_exec (self,
        "DELETE FROM xxl_job_registry WHERE registry_group = 'EXECUTOR'"
        " AND registry_key = ? AND registry_value = ?", "ss", app, address) < 0? -1: 0;
}

int
xxl_store_registry_expire (xxl_store_t *self, int64_t dead_before)
{
    return xxl_store_exec (self, "DELETE FROM xxl_job_registry WHERE update_time < ?",
                           "i", dead_before);
}

int
xxl_store_groups_refresh (xxl_store_t *self, int64_t now)
{
    return xxl_store_exec (self,
        "UPDATE xxl_job_group SET update_time = ?, address_list ="
        " (SELECT group_concat (registry_value, ',') FROM"
        "   (SELECT registry_value FROM xxl_job_registry r WHERE r.registry_group = 'EXECUTOR'"
        "    AND r.registry_key = xxl_job_group.app_name ORDER BY registry_value))"
        " WHERE address_type = 0", "i", now) < 0? -1: 0;
}

int
xxl_store_group_refresh_app (xxl_store_t *self, const char *app, int64_t now)
{
    return xxl_store_exec (self,
        "UPDATE xxl_job_group SET update_time = ?1, address_list ="
        " (SELECT group_concat (registry_value, ',') FROM"
        "   (SELECT registry_value FROM xxl_job_registry r WHERE r.registry_group = 'EXECUTOR'"
        "    AND r.registry_key = ?2 ORDER BY registry_value))"
        " WHERE address_type = 0 AND app_name = ?2", "is", now, app) < 0? -1: 0;
}
