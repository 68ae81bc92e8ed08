/*  xxl_store_sqlite.c -- the top of the SQLite backend: opening and
    migrating the schema, transactions, the WAL with its checkpointer
    thread, and the method tables.

    Layers of the backend, calls going down only: this file; then
    xxl_store_sqlite_rows.c (the row calls that stay SQLite's own, the
    dialect's texts) and _driver.c (the driver of the shared SQL); then
    _conn.c (statement cache, binding, running, errors).  No lower file
    names this one.

    MUST: a handle leaves here with its method table, its driver (checked:
    xxl_store_driver_ok) and its statement cache set, or not at all (NULL,
    the reason in err).
    Errors: the methods return -1 with the reason in error() (sq_fail).
*/

#include "xxl_store_sqlite_int.h"

#include <czmq.h>
#include <sqlite3.h>
#include <inttypes.h>
#include <stdarg.h>
#include <fcntl.h>
#include <unistd.h>


//  The WAL starts over once it holds wal_size frames (XXL_WAL_MIB by
//  default).  The checkpointer runs a pass every 250 ms, or as soon as the
//  writer has added a sixteenth of wal_size frames since its last nudge,
//  so xxl_store_wal_restart has only the last of them to copy.  A commit
//  that takes the WAL past wal_size with frames the checkpointer was not
//  nudged about (one long turn can add most of a WAL) nudges it still,
//  and the writer's restart waits for the next commit: by then the
//  checkpointer copies them on its own thread (the writer's attempts
//  meanwhile find the checkpoint busy and return at once), and the
//  restart copies what is left.
#define XXL_WAL_MIB 64


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
    //  4: no query uses xxl_job_log_job_time (log clear by job and age
    //  reads xxl_job_log_time); it cost a page per job per commit
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
    //  7: the audit of the client api's changes (who, role, what, target,
    //  when, reply code); ids never reused, so that pages by id hold
    "CREATE TABLE xxl_audit (id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  time INTEGER NOT NULL, who TEXT NOT NULL, role TEXT NOT NULL, type TEXT NOT NULL,"
    "  target INTEGER NOT NULL DEFAULT 0, code INTEGER NOT NULL);"
    "CREATE INDEX xxl_audit_time ON xxl_audit (time);",
    //  8: planning shared by leases on 16 shares of the jobs (job id mod
    //  16), each with its own fired_until / fired_sent, which start from
    //  the store's single pair; the schedulers sharing the store beat in
    //  xxl_node.  xxl_job_fired stays (unread) for schedulers of schema 7
    //  still running during a rolling upgrade
    "CREATE TABLE xxl_lease (share INTEGER PRIMARY KEY, owner TEXT NOT NULL DEFAULT '',"
    "  epoch INTEGER NOT NULL DEFAULT 0, expires INTEGER NOT NULL DEFAULT 0,"
    "  fired_until INTEGER NOT NULL DEFAULT 0, fired_sent INTEGER NOT NULL DEFAULT 0);"
    "WITH RECURSIVE s (n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM s WHERE n < 15)"
    "  INSERT INTO xxl_lease (share, fired_until, fired_sent)"
    "  SELECT n, (SELECT fired_until FROM xxl_job_fired), (SELECT fired_sent FROM xxl_job_fired)"
    "  FROM s;"
    "CREATE TABLE xxl_node (name TEXT PRIMARY KEY, beat INTEGER NOT NULL);",
    //  9: the HTTP side's console users (a crypt(3) hash), bearer tokens
    //  and sessions (the SHA-256 of their value only), shared by every
    //  scheduler of the store
    "CREATE TABLE xxl_user (username TEXT PRIMARY KEY, password TEXT NOT NULL,"
    "  role TEXT NOT NULL, apps TEXT NOT NULL DEFAULT '', add_time INTEGER NOT NULL);"
    "CREATE TABLE xxl_token (name TEXT PRIMARY KEY, hash TEXT NOT NULL UNIQUE,"
    "  role TEXT NOT NULL, apps TEXT NOT NULL DEFAULT '', add_time INTEGER NOT NULL);"
    "CREATE TABLE xxl_session (id TEXT PRIMARY KEY, username TEXT NOT NULL,"
    "  csrf TEXT NOT NULL, add_time INTEGER NOT NULL, seen INTEGER NOT NULL);"
    "CREATE INDEX xxl_session_user ON xxl_session (username);",
    //  10: failed runs, newest first, for LOG_LIST's status filter (only
    //  failed rows are written to it)
    "CREATE INDEX xxl_job_log_fails ON xxl_job_log (id)"
    "  WHERE trigger_code NOT IN (0, 200) OR handle_code NOT IN (0, 200);",
    //  11: calendars (Quartz's HolidayCalendar and CronCalendar) and the
    //  job's calendar ("" none)
    "CREATE TABLE xxl_calendar (name TEXT PRIMARY KEY, dates TEXT NOT NULL DEFAULT '',"
    "  exclude_cron TEXT NOT NULL DEFAULT '', timezone TEXT NOT NULL DEFAULT '',"
    "  add_time INTEGER NOT NULL, update_time INTEGER NOT NULL);"
    "ALTER TABLE xxl_job_info ADD COLUMN calendar TEXT NOT NULL DEFAULT '';",
    //  12: the agent tags a job's agents must have ("K=V,...", sorted by
    //  key; '' any agent of its group)
    "ALTER TABLE xxl_job_info ADD COLUMN agent_tags TEXT NOT NULL DEFAULT '';",
    //  13: workflows (DESIGN §12) and their runs; a node's start is a log
    //  row marked with its run, node and attempt, unique: a node's row is
    //  its one start decision (docs/workflows.md "Runs under faults")
    "CREATE TABLE xxl_workflow (id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  name TEXT NOT NULL, description TEXT NOT NULL DEFAULT '', definition TEXT NOT NULL,"
    "  schedule_type TEXT NOT NULL DEFAULT 'NONE', schedule_conf TEXT NOT NULL DEFAULT '',"
    "  timezone TEXT NOT NULL DEFAULT '', misfire_strategy TEXT NOT NULL DEFAULT 'DO_NOTHING',"
    "  calendar TEXT NOT NULL DEFAULT '',"
    "  status INTEGER NOT NULL DEFAULT 0, next_time INTEGER NOT NULL DEFAULT 0,"
    "  add_time INTEGER NOT NULL, update_time INTEGER NOT NULL);"
    "CREATE INDEX xxl_workflow_next ON xxl_workflow (next_time) WHERE status = 1;"
    "CREATE TABLE xxl_workflow_run (id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  workflow_id INTEGER NOT NULL, status TEXT NOT NULL, param TEXT NOT NULL DEFAULT '',"
    "  trigger_type TEXT NOT NULL DEFAULT 'MANUAL', trigger_time INTEGER NOT NULL,"
    "  end_time INTEGER NOT NULL DEFAULT 0, definition TEXT NOT NULL,"
    "  killed TEXT NOT NULL DEFAULT '');"
    "CREATE INDEX xxl_workflow_run_flow ON xxl_workflow_run (workflow_id, id);"
    "CREATE INDEX xxl_workflow_run_running ON xxl_workflow_run (id) WHERE status = 'RUNNING';"
    "ALTER TABLE xxl_job_log ADD COLUMN flow_run_id INTEGER;"
    "ALTER TABLE xxl_job_log ADD COLUMN flow_node TEXT;"
    "ALTER TABLE xxl_job_log ADD COLUMN flow_attempt INTEGER;"
    "CREATE UNIQUE INDEX xxl_job_log_flow ON xxl_job_log (flow_run_id, flow_node, flow_attempt,"
    "  COALESCE (CAST (substr (executor_sharding_param, 1,"
    "                          instr (executor_sharding_param, '/') - 1) AS INTEGER), 0))"
    "  WHERE flow_run_id IS NOT NULL;",
    //  14: backfills (DESIGN §13): a job's planned fire times over a range,
    //  made one run each (the log's unique (job, schedule time, shard)
    //  keeps an instant to one run); the cursor is the last instant handled
    "CREATE TABLE xxl_backfill (id INTEGER PRIMARY KEY, job_id INTEGER NOT NULL,"
    "  from_time INTEGER NOT NULL, to_time INTEGER NOT NULL, per_second INTEGER NOT NULL,"
    "  cursor_time INTEGER NOT NULL, total INTEGER NOT NULL DEFAULT 0,"
    "  made INTEGER NOT NULL DEFAULT 0, skipped INTEGER NOT NULL DEFAULT 0,"
    "  state TEXT NOT NULL DEFAULT 'RUNNING', started_by TEXT NOT NULL DEFAULT '',"
    "  msg TEXT NOT NULL DEFAULT '', add_time INTEGER NOT NULL, update_time INTEGER NOT NULL);"
    "CREATE INDEX xxl_backfill_job ON xxl_backfill (job_id, id);"
    "CREATE INDEX xxl_backfill_running ON xxl_backfill (id) WHERE state = 'RUNNING';",
    //  15: a job's maxRunning (0: no limit), and the rows with no result
    //  by job, which its slots are counted from (runs/xxl_admit.c)
    "ALTER TABLE xxl_job_info ADD COLUMN max_running INTEGER NOT NULL DEFAULT 0;"
    "CREATE INDEX xxl_job_log_open ON xxl_job_log (job_id, id) WHERE handle_code = 0;",
    //  16: a job's slots are counted from the unsent and running indexes
    //  (log_slot_ids); the open rows' index cost two index writes a run
    "DROP INDEX IF EXISTS xxl_job_log_open;",
    //  17: the rows that count towards their job's maxRunning (slot 1: the
    //  job had one when the row was written, or got one while the row had
    //  no result), by job while they have no result; rows of jobs with no
    //  limit are in no index of their own
    "ALTER TABLE xxl_job_log ADD COLUMN slot INTEGER NOT NULL DEFAULT 0;"
    "UPDATE xxl_job_log SET slot = 1 WHERE id IN (SELECT id FROM xxl_job_log"
    "  WHERE trigger_code = 0 UNION ALL SELECT id FROM xxl_job_log"
    "  WHERE trigger_code = 200 AND handle_code = 0) AND handle_code = 0"
    "  AND job_id IN (SELECT id FROM xxl_job_info WHERE max_running > 0);"
    "CREATE INDEX xxl_job_log_slots ON xxl_job_log (job_id, id) WHERE slot = 1 AND handle_code = 0;"
    //  (and the jobs with a limit, which each admission pass lists: without
    //  it a pass walked every job, once a second)
    "CREATE INDEX xxl_job_info_limited ON xxl_job_info (id) WHERE max_running > 0;",
    //  18: a session remembered (1: a login's "remember me"), whose idle
    //  limit is http/remember_s instead of http/session_idle_s
    "ALTER TABLE xxl_session ADD COLUMN remember INTEGER NOT NULL DEFAULT 0;",
    //  19: the planned instants' unique index leads with the instant: a
    //  fire's entry goes where the last second's went, beside the other
    //  jobs' fires of that second, instead of into its job's own leaf (a
    //  page of its own per fire once jobs have history).  Reads by job
    //  and instant look up both columns (backfill_made_times)
    "DROP INDEX IF EXISTS xxl_job_log_schedule;"
    "CREATE UNIQUE INDEX xxl_job_log_schedule ON xxl_job_log (schedule_time, job_id,"
    "  COALESCE (CAST (substr (executor_sharding_param, 1,"
    "                          instr (executor_sharding_param, '/') - 1) AS INTEGER), 0))"
    "  WHERE schedule_time IS NOT NULL;",
    //  20: a job's rows are found by block of 2^16 ids, then job
    //  (XXL_JOB_ROWS in xxl_store_sqlite_rows.c): a new row's entry goes
    //  into the newest block, beside the other jobs' entries of the last
    //  seconds, instead of into its job's own leaf (a page of its own per
    //  fire once jobs have history)
    "DROP INDEX IF EXISTS xxl_job_log_job;"
    "CREATE INDEX xxl_job_log_job_block ON xxl_job_log ((id >> 16), job_id, id);",
    //  21: the jobs that have child jobs (jobs_have_children, asked once a
    //  second by the engine: without it a walk of every job)
    "CREATE INDEX xxl_job_info_parents ON xxl_job_info (id) WHERE child_jobid != '';",
};
#define XXL_SCHEMA_VERSION ((int) (sizeof s_migrations / sizeof s_migrations [0]))

static int
s_exec_script (store_t *self, const char *sql)
{
    if (self->deferred_count && sq_flush (self))
        return -1;
    char *message = NULL;
    if (sqlite3_exec (self->db, sql, NULL, NULL, &message) != SQLITE_OK) {
        snprintf (self->error, sizeof self->error, "%s", message? message: "exec failed");
        sqlite3_free (message);
        return -1;
    }
    return 0;
}

static int
s_migrate (store_t *self)
{
    int version = sq_schema_version (&self->sql.base);
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
    store_t *self = (store_t *) arg;
    if (frames < self->wal_frames)
        self->wal_nudged = self->wal_retry = 0;         //  it started over
    self->wal_frames = frames;
    return SQLITE_OK;
}

static xxl_store_t *s_open (const char *path, bool side, char *err, size_t errlen);

xxl_store_t *
xxl_store_sqlite_new (const char *path, char *err, size_t errlen)
{
    return s_open (path, false, err, errlen);
}

xxl_store_t *
xxl_store_sqlite_side_new (const char *path, char *err, size_t errlen)
{
    return s_open (path, true, err, errlen);
}

static xxl_store_t *
s_open (const char *path, bool side, char *err, size_t errlen)
{
    //  No memory statistics: they take a global mutex on every allocation
    //  (a no-op once SQLite is initialized)
    sqlite3_config (SQLITE_CONFIG_MEMSTATUS, 0);
    store_t *self = (store_t *) zmalloc (sizeof (store_t));
    self->sql.base.methods = &sq_methods;
    self->sql.driver = &sq_driver;
    assert (xxl_store_driver_ok (self->sql.driver));
    self->statements = sq_cache_new ();
    //  A new database file is made here, mode 0600 whatever the umask: it
    //  holds password and token hashes and GLUE sources.  SQLite gives its
    //  -wal and -shm files the database file's mode.
    if (*path && strneq (path, ":memory:") && strncmp (path, "file:", 5)) {
        int fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd >= 0)
            close (fd);
    }
    if (sqlite3_open_v2 (path, &self->db,
                         SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                         NULL) != SQLITE_OK) {
        snprintf (err, errlen, "cannot open database %s: %s", path,
                  self->db? sqlite3_errmsg (self->db): "out of memory");
        sq_destroy (&self->sql.base);
        return NULL;
    }
    sqlite3_busy_timeout (self->db, 5000);
    //  A new file's pages are 8 KiB; an existing file keeps its own size
    //  (PRAGMA page_size is a no-op on a file with content or in WAL mode:
    //  operations.md says how to convert one)
    if (s_exec_script (self, "PRAGMA page_size = 8192;"
                             "PRAGMA journal_mode = WAL;"
                             "PRAGMA synchronous = NORMAL;"
                             "PRAGMA foreign_keys = OFF;"
                             "PRAGMA temp_store = MEMORY;"
                             "PRAGMA cache_size = -65536;")
    ||  s_migrate (self)) {
        snprintf (err, errlen, "database %s: %s", path, self->error);
        sq_destroy (&self->sql.base);
        return NULL;
    }
    //  Checkpoints on their own thread (not for in-memory databases); a
    //  side connection leaves them to the main handle's
    if (side) {
        if (s_exec_script (self, "PRAGMA wal_autocheckpoint = 0;")) {
            snprintf (err, errlen, "database %s: %s", path, self->error);
            sq_destroy (&self->sql.base);
            return NULL;
        }
    }
    else
    if (*path && strneq (path, ":memory:") && strncmp (path, "file:", 5)) {
        if (s_exec_script (self, "PRAGMA wal_autocheckpoint = 0;") == 0)
            self->checkpointer = zactor_new (s_checkpointer, (void *) path);
        if (self->checkpointer) {
            sqlite3_wal_hook (self->db, s_wal_hook, self);
            sq_set_wal_size (&self->sql.base, XXL_WAL_MIB);
        }
        else
            s_exec_script (self, "PRAGMA wal_autocheckpoint = 1000;");
    }
    return &self->sql.base;
}

void
sq_destroy (xxl_store_t *base)
{
    store_t *self = (store_t *) base;
    sq_deferred_drop (self);
    if (self->in_txn)
        s_exec_script (self, "ROLLBACK;");
    sq_deferred_free (self);
    zactor_destroy (&self->checkpointer);
    zhashx_destroy (&self->statements);
    if (self->db)
        sqlite3_close (self->db);
    free (self);
}

const char *
sq_error (xxl_store_t *base)
{
    store_t *self = (store_t *) base;
    return self->error;
}

int
sq_schema_version (xxl_store_t *base)
{
    store_t *self = (store_t *) base;
    return (int) sq_scalar (self, "PRAGMA user_version", NULL);
}

int
sq_begin (xxl_store_t *base)
{
    store_t *self = (store_t *) base;
    if (self->in_txn)
        return 0;
    self->ids_reserved = 0;
    sqlite3_stmt *stmt = sq_prepare (self, "BEGIN IMMEDIATE");
    if (!stmt || sq_done (self, stmt) < 0) {
        //  (another connection held the write lock past the busy timeout):
        //  the caller's turn is a transaction that failed from its start,
        //  so that its writes do not run one by one outside it, and its
        //  commit fails with this cause
        self->in_txn = 1;
        self->txn_lost = 1;
        snprintf (self->txn_cause, sizeof self->txn_cause, "cannot begin a transaction: %.400s",
                  self->error);
        return -1;
    }
    self->in_txn = 1;
    self->txn_lost = 0;
    self->ids_reserved = 0;
    return 0;
}

int
sq_commit (xxl_store_t *base)
{
    store_t *self = (store_t *) base;
    if (!self->in_txn)
        return 0;
    //  (a failure loses the transaction)
    sq_flush (self);
    if (self->txn_lost) {
        //  Nothing to commit: what the turn wrote is gone; its cause is the
        //  error (not "cannot commit - no transaction is active").  (A
        //  transaction still open in SQLite, should a rollback have failed,
        //  is ended here: the next turn's BEGIN needs none open.)
        if (!sqlite3_get_autocommit (self->db))
            sqlite3_exec (self->db, "ROLLBACK", NULL, NULL, NULL);
        snprintf (self->error, sizeof self->error, "%s", self->txn_cause);
        self->in_txn = 0;
        self->txn_lost = 0;
        if (self->ids_reserved)
            self->ids_end = 0;
        self->ids_reserved = 0;
        return -1;
    }
    sqlite3_stmt *stmt = sq_prepare (self, "COMMIT");
    if (!stmt || sq_done (self, stmt) < 0) {
        char cause [512];
        snprintf (cause, sizeof cause, "%s", self->error);
        sq_rollback (&self->sql.base);
        snprintf (self->error, sizeof self->error, "%s", cause);
        return -1;
    }
    self->in_txn = 0;
    self->ids_reserved = 0;
    //  Up to twice its size (past it the writer's own checkpoint copies,
    //  between the checkpointer's passes); past wal_size, the restart
    //  waits a commit for the pass this nudge starts
    self->wal_head_start = false;
    if (self->checkpointer && self->wal_frames < 2 * self->wal_size
    &&  self->wal_frames >= self->wal_nudged + self->wal_size / 16) {
        //  (a checkpointer still busy with the last nudge is not waited for)
        if (zmq_send (zsock_resolve (self->checkpointer), "PASS", 4, ZMQ_DONTWAIT) == 4) {
            self->wal_nudged = self->wal_frames;
            self->wal_head_start = self->wal_frames >= self->wal_size;
        }
    }
    return 0;
}

void
sq_set_wal_size (xxl_store_t *base, int mib)
{
    store_t *self = (store_t *) base;
    int64_t page = sq_scalar (self, "PRAGMA page_size", NULL);
    if (mib < 1 || mib > XXL_STORE_WAL_MIB_MAX || page <= 0)
        return;
    self->wal_size = (int) ((int64_t) mib * 1048576 / page);
    char pragma [64];
    snprintf (pragma, sizeof pragma, "PRAGMA journal_size_limit = %" PRId64,
              (int64_t) mib * 4 * 1048576);
    s_exec_script (self, pragma);
}

int
sq_wal_due (xxl_store_t *base)
{
    store_t *self = (store_t *) base;
    if (self->in_txn || !self->checkpointer || self->wal_frames < self->wal_size
    ||  self->wal_frames < self->wal_retry)
        return 0;
    if (self->wal_frames >= 4 * self->wal_size)
        return 2;
    return self->wal_head_start? 0: 1;
}

int
sq_wal_restart (xxl_store_t *base)
{
    store_t *self = (store_t *) base;
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
        return sq_fail (self, "checkpoint");
    return copied == frames? 1: 0;
}

int
sq_rollback (xxl_store_t *base)
{
    store_t *self = (store_t *) base;
    sq_deferred_drop (self);
    if (!self->in_txn)
        return 0;
    self->in_txn = 0;
    self->txn_lost = 0;
    //  A block reserved by this transaction is not reserved any more
    if (self->ids_reserved)
        self->ids_end = 0;
    self->ids_reserved = 0;
    if (sqlite3_get_autocommit (self->db))
        return 0;                       //  (SQLite rolled it back already)
    sqlite3_stmt *stmt = sq_prepare (self, "ROLLBACK");
    return stmt && sq_done (self, stmt) >= 0? 0: -1;
}

int
sq_in_txn (xxl_store_t *base)
{
    store_t *self = (store_t *) base;
    return self->in_txn;
}


int64_t
sq_data_version (xxl_store_t *base)
{
    return sq_scalar ((store_t *) base, "PRAGMA data_version", NULL);
}


//  --------------------------------------------------------------------
//  Test hooks (xxl_store_sqlite.h)

int
xxl_store_sqlite_exec (xxl_store_t *self, const char *sql, const char *fmt, ...)
{
    assert (self->methods == &sq_methods);
    va_list args;
    va_start (args, fmt);
    int changes = sq_execv ((store_t *) self, sql, fmt, args);
    va_end (args);
    return changes;
}

int
xxl_store_sqlite_exec_once (xxl_store_t *self, const char *sql, const char *fmt, ...)
{
    assert (self->methods == &sq_methods);
    va_list args;
    va_start (args, fmt);
    int changes = sq_exec_oncev ((store_t *) self, sql, fmt, args);
    va_end (args);
    return changes;
}

int64_t
xxl_store_sqlite_scalar (xxl_store_t *self, const char *sql, const char *fmt, ...)
{
    assert (self->methods == &sq_methods);
    va_list args;
    va_start (args, fmt);
    int64_t value = sq_scalarv ((store_t *) self, sql, fmt, args);
    va_end (args);
    return value;
}

char *
xxl_store_sqlite_text (xxl_store_t *self, const char *sql, const char *fmt, ...)
{
    assert (self->methods == &sq_methods);
    va_list args;
    va_start (args, fmt);
    char *value = sq_textv ((store_t *) self, sql, fmt, args);
    va_end (args);
    return value;
}

int
xxl_store_sqlite_encode (xxl_store_t *self, xxl_enc_t *enc, int rows_as_array,
                         const char *sql, const char *fmt, ...)
{
    assert (self->methods == &sq_methods);
    va_list args;
    va_start (args, fmt);
    int rows = sq_encodev ((store_t *) self, enc, rows_as_array, 0, NULL, sql, fmt, args);
    va_end (args);
    return rows;
}

//  --------------------------------------------------------------------
//  The method table: this file's connection methods, the rows' calls,
//  and the shared bodies

const xxl_store_methods_t sq_methods = {
    .version = XXL_STORE_METHODS_VERSION,
    .size = sizeof (xxl_store_methods_t),
    XXL_STORE_SQL_METHODS           //  the shared bodies (scheduler/store/sql)
    .destroy = sq_destroy,
    .error = sq_error,
    .schema_version = sq_schema_version,
    .begin = sq_begin,
    .commit = sq_commit,
    .rollback = sq_rollback,
    .in_txn = sq_in_txn,
    .data_version = sq_data_version,
    .wal_set_size = sq_set_wal_size,
    .wal_due = sq_wal_due,
    .wal_restart = sq_wal_restart,
    .group_add = sq_group_add,
    .group_update = sq_group_update,
    .job_add = sq_job_add,
    .glue_add = sq_glue_add,
    .log_add = sq_log_add,
    .log_next_id = sq_log_next_id,
    .log_unroute = sq_log_unroute,
    .log_set_shard = sq_log_set_shard,
    .log_copy_shard = sq_log_copy_shard,
    .lease_list = sq_lease_list,
    .lease_fired = sq_lease_fired,
    .job_due_in = sq_job_due_in,
    .fired_get = sq_fired_get,
    .log_encode_page = sq_log_encode_page,
    .report_totals = sq_report_totals,
    .accounts = &sq_accounts,
    .report_count = sq_report_count,
    .clock_now = sq_clock_now,
    .report_count_groups = sq_report_count_groups,
    .calendars = &sq_calendars,
    .backfills = &sq_backfills,
    .workflow_add = sq_workflow_add,
    .workflow_run_add = sq_workflow_run_add,
    .log_ids_past = sq_log_ids_past,
};

//  Users, tokens and sessions (xxl_store_accounts_t; schema step 9): all
//  shared
const xxl_store_accounts_t sq_accounts = {
    XXL_STORE_SQL_ACCOUNTS
};

//  Calendars (xxl_store_calendars_t; schema step 11): all shared
const xxl_store_calendars_t sq_calendars = {
    XXL_STORE_SQL_CALENDARS
};

//  Backfills (xxl_store_backfills_t; schema step 14): all shared
const xxl_store_backfills_t sq_backfills = {
    XXL_STORE_SQL_BACKFILLS
};
