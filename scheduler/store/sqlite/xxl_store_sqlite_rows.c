/*  xxl_store_sqlite_rows.c -- the SQLite backend's own row calls (the
    contracts are in xxl_store.h), its calls by share, and the texts of
    the dialect's statements of the shared bodies (sq_statements).
    XXL-JOB's tables; log ids use AUTOINCREMENT so that an id is never
    reused.

    Layer: below xxl_store_sqlite.c (which names these calls in its method
    table), beside _driver.c, over _conn.c, the only file it calls.
    MUST: answer as the PostgreSQL backend's own calls do (same rows,
    order, counts and return codes).  Errors: -1 (or NULL), the reason in
    self->error (sq_fail).
*/

#include "xxl_store_sqlite_int.h"

#include <inttypes.h>
#include <assert.h>

//  --------------------------------------------------------------------
//  Groups

int64_t
sq_group_add (xxl_store_t *base, const xxl_group_t *group)
{
    store_t *self = (store_t *) base;
    int rc = sq_exec (self,
        "INSERT INTO xxl_job_group (app_name, title, address_type, address_list, update_time)"
        " VALUES (?, ?, ?, ?, ?)", "ssisi",
        group->app_name, group->title? group->title: "", (int64_t) group->address_type,
        group->address_list, group->update_time);
    return rc < 0? -1: sqlite3_last_insert_rowid (self->db);
}

int
sq_group_update (xxl_store_t *base, const xxl_group_t *group)
{
    store_t *self = (store_t *) base;
    return sq_exec (self,
        "UPDATE xxl_job_group SET app_name = ?, title = ?, address_type = ?,"
        " address_list = ?, update_time = ? WHERE id = ?", "ssisii",
        group->app_name, group->title? group->title: "", (int64_t) group->address_type,
        group->address_list, group->update_time, group->id) < 0? -1: 0;
}

//  --------------------------------------------------------------------
//  Jobs

int64_t
sq_job_add (xxl_store_t *base, const xxl_job_t *job)
{
    store_t *self = (store_t *) base;
    int rc = sq_exec (self,
        "INSERT INTO xxl_job_info (" XXL_JOB_COLUMNS ") VALUES"
        " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?"
        ", ?, ?, ?)",
        XXL_JOB_FMT, XXL_JOB_ARGS (job));
    return rc < 0? -1: sqlite3_last_insert_rowid (self->db);
}

int
sq_glue_add (xxl_store_t *base, int64_t job_id, const char *glue_type,
                     const char *source, const char *remark, int64_t now)
{
    store_t *self = (store_t *) base;
    int64_t version = sq_scalar (self,
        "SELECT COALESCE(MAX(version), 0) + 1 FROM xxl_job_logglue WHERE job_id = ?",
        "i", job_id);
    if (version < 1
    ||  sq_exec (self,
            "INSERT INTO xxl_job_logglue (job_id, glue_type, glue_source, glue_remark,"
            " add_time, update_time, version) VALUES (?, ?, ?, ?, ?, ?, ?)", "isssiii",
            job_id, glue_type, source, remark? remark: "", now, now, version) < 0)
        return -1;
    //  Keep the last XXL_GLUE_KEEP versions, as XXL-JOB does (30)
    if (sq_exec (self,
            "DELETE FROM xxl_job_logglue WHERE job_id = ? AND version <= ?",
            "ii", job_id, version - XXL_GLUE_KEEP) < 0)
        return -1;
    return (int) version;
}

//  --------------------------------------------------------------------
//  Logs

//  The highest log id reserved or added (AUTOINCREMENT's counter), or -1
static int64_t
s_log_seq (store_t *self)
{
    return sq_scalar (self, "SELECT COALESCE((SELECT seq FROM sqlite_sequence"
                            " WHERE name = 'xxl_job_log'), 0)", "");
}

//  Sets AUTOINCREMENT's counter to seq; 0 or -1
static int
s_log_seq_set (store_t *self, int64_t seq)
{
    int changed = sq_exec (self, "UPDATE sqlite_sequence SET seq = ? WHERE name = 'xxl_job_log'",
                           "i", seq);
    if (changed == 0)
        changed = sq_exec (self, "INSERT INTO sqlite_sequence (name, seq)"
                                 " VALUES ('xxl_job_log', ?)", "i", seq);
    return changed == 1? 0: -1;
}

//  The next log id AUTOINCREMENT would give (ids are never reused)
int64_t
sq_log_next_id (xxl_store_t *base)
{
    store_t *self = (store_t *) base;
    int64_t seq = -1;
    if (!self->in_txn) {
        seq = s_log_seq (self);
        return seq < 0? -1: seq + 1;
    }
    //  Inside a transaction: the next of this handle's block, past every
    //  id it added and the last it answered (the caller's ids of a run may
    //  not all reach a row; it hands out past its own, which stays inside
    //  the two runs left in the block)
    int64_t next = self->ids_next > self->ids_used? self->ids_next: self->ids_used + 1;
    if (self->ids_end - next < 2 * XXL_STORE_LOG_ID_RUN) {
        seq = s_log_seq (self);
        if (seq < 0)
            return -1;
        int64_t start = seq + 1 > next? seq + 1: next;
        int64_t end = start + XXL_SQLITE_LOG_ID_BLOCK;
        if (s_log_seq_set (self, end - 1))
            return -1;
        self->ids_end = end;
        self->ids_reserved = 1;
        next = start;
    }
    assert (next < self->ids_end);
    self->ids_next = next;
    return next;
}

//  Moves the log ids past id (xxl_store.h): the counter, under the write
//  lock the transaction holds, so no other handle reserves meanwhile
int
sq_log_ids_past (xxl_store_t *base, int64_t id, int64_t from, int64_t *was, int64_t *now)
{
    store_t *self = (store_t *) base;
    bool own = !self->in_txn;
    if (own && sq_begin (base))
        return -1;
    int rc = -1;
    int64_t seq = s_log_seq (self);
    if (seq >= 0) {
        //  This handle's ids not handed out: [lo, ids_end)
        int64_t lo = from > 0? from: self->ids_next + XXL_STORE_LOG_ID_RUN;
        if (lo <= self->ids_used)
            lo = self->ids_used + 1;
        bool held = lo < self->ids_end;
        *was = held? lo: seq + 1;
        *now = *was;
        rc = 0;
        if (id > seq && id - seq > XXL_STORE_LOG_IDS_LEAP) {
            snprintf (self->error, sizeof self->error, "log id %" PRId64 " is more than 2^32"
                      " past the next id the store would reserve (%" PRId64 "): not moved",
                      id, seq + 1);
            rc = -1;
        }
        else
        if (id > seq || (held && id >= lo && id < self->ids_end)) {
            rc = id > seq && s_log_seq_set (self, id)? -1: 1;
            if (rc == 1) {
                self->ids_end = 0;      //  (the next next_id reserves past the counter)
                *now = (id > seq? id: seq) + 1;
            }
        }
    }
    if (own && rc >= 0 && sq_commit (base))
        rc = -1;
    else
    if (own && rc < 0) {
        char cause [512];
        snprintf (cause, sizeof cause, "%s", self->error);
        sq_rollback (base);
        snprintf (self->error, sizeof self->error, "%s", cause);
    }
    return rc;
}

int
sq_log_add (xxl_store_t *base, xxl_log_t *log)
{
    store_t *self = (store_t *) base;
    //  A row of the transaction with the caller's id and no planned time
    //  (no unique rule can refuse it), or a planned one the caller knows
    //  new (planned_new), waits for the transaction's next statement,
    //  written with the others kept (sq_log_defer)
    if (sq_log_defers (self, log)) {
        if (log->id > self->ids_used)
            self->ids_used = log->id;
        return sq_log_defer (self, log);
    }
    //  Column 13 is the id: NULL lets AUTOINCREMENT choose
    sqlite3_stmt *stmt = sq_prepare (self,
        "INSERT INTO xxl_job_log (job_group, job_id, executor_address, executor_handler,"
        " executor_param, executor_sharding_param, executor_fail_retry_count,"
        " trigger_time, trigger_code, trigger_msg, trigger_type, schedule_time, id, slot)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    if (!stmt || sq_bind (self, stmt, "iissssiiiss",
            log->job_group, log->job_id, log->executor_address, log->executor_handler,
            log->executor_param, log->executor_sharding_param,
            log->executor_fail_retry_count, log->trigger_time, log->trigger_code,
            log->trigger_msg, log->trigger_type))
        return -1;
    sqlite3_bind_int64 (stmt, 14, log->slot? 1: 0);
    if (log->schedule_time > 0)
        sqlite3_bind_int64 (stmt, 12, log->schedule_time);
    if (log->id > 0)
        sqlite3_bind_int64 (stmt, 13, log->id);
    if (sq_done (self, stmt) < 0)
        return -1;
    log->id = sqlite3_last_insert_rowid (self->db);
    if (log->id > self->ids_used)
        self->ids_used = log->id;
    return 0;
}

//  --------------------------------------------------------------------
//  The engine's typed calls (xxl_store.h states each contract)

#define XXL_JOB_SELECT \
    "SELECT id, job_group AS jobGroup, job_desc AS jobDesc, add_time AS addTime," \
    " update_time AS updateTime, author, alarm_email AS alarmEmail," \
    " schedule_type AS scheduleType, schedule_conf AS scheduleConf," \
    " misfire_strategy AS misfireStrategy, executor_route_strategy AS executorRouteStrategy," \
    " executor_handler AS executorHandler, executor_param AS executorParam," \
    " executor_block_strategy AS executorBlockStrategy, executor_timeout AS executorTimeout," \
    " executor_fail_retry_count AS executorFailRetryCount, glue_type AS glueType," \
    " glue_source AS glueSource, glue_remark AS glueRemark, glue_updatetime AS glueUpdatetime," \
    " child_jobid AS childJobId, trigger_status AS triggerStatus," \
    " trigger_last_time AS triggerLastTime, trigger_next_time AS triggerNextTime, timezone," \
    " retry_interval AS retryInterval, retry_backoff AS retryBackoff," \
    " retry_max_interval AS retryMaxInterval, calendar" \
    ", agent_tags AS agentTags, max_running AS maxRunning" \
    " FROM xxl_job_info"
//  ?1 group (0 any), ?4..?6 substrings, ?7 status (-1 any), ?8 the set of
//  groups ('' any; xxl_store_sql_group_set)
#define XXL_GROUP_SET(n) \
    " AND (" n " = '' OR job_group IN (SELECT value FROM json_each ('[' || " n " || ']')))"
#define XXL_JOB_FILTER \
    " WHERE (?1 = 0 OR job_group = ?1)" XXL_GROUP_SET ("?8") \
    " AND instr (lower (executor_handler), lower (?4)) > 0 AND instr (lower (job_desc), lower (?5)) > 0" \
    " AND instr (lower (author), lower (?6)) > 0 AND (?7 < 0 OR trigger_status = ?7)"

#define XXL_GLUE_SELECT \
    "SELECT version, job_id AS jobId, glue_type AS glueType, glue_remark AS glueRemark," \
    " add_time AS addTime, update_time AS updateTime," \
    " length (CAST (glue_source AS BLOB)) AS size"

int
sq_log_unroute (xxl_store_t *base, int64_t log_id, const char *section, int unfinished)
{
    store_t *self = (store_t *) base;
    //  (substr with a negative start: the last characters)
    if (unfinished)
        return sq_exec (self,
            "UPDATE xxl_job_log SET executor_address = NULL, trigger_msg ="
            " substr (trigger_msg, 1, max (length (trigger_msg) - length (?1), 0))"
            " WHERE id = ?2 AND trigger_code = 0 AND handle_code = 0"
            " AND substr (trigger_msg, -length (?1)) = ?1", "si", section, log_id);
    return sq_exec (self,
        "UPDATE xxl_job_log SET executor_address = NULL, trigger_msg ="
        " substr (trigger_msg, 1, max (length (trigger_msg) - length (?1), 0))"
        " WHERE id = ?2 AND trigger_code = 0"
        " AND substr (trigger_msg, -length (?1)) = ?1", "si", section, log_id);
}

int
sq_log_set_shard (xxl_store_t *base, int64_t log_id, const char *shard)
{
    return sq_exec ((store_t *) base,
        "UPDATE xxl_job_log SET executor_sharding_param = ? WHERE id = ?", "si", shard, log_id);
}

int
sq_log_copy_shard (xxl_store_t *base, int64_t id, int64_t src, const char *shard, int64_t stamp)
{
    store_t *self = (store_t *) base;
    if (id > self->ids_used)
        self->ids_used = id;
    return sq_exec (self,
        "INSERT INTO xxl_job_log (id, job_group, job_id, executor_handler,"
        " executor_param, executor_sharding_param, executor_fail_retry_count,"
        " trigger_time, trigger_code, trigger_msg, trigger_type, schedule_time,"
        " flow_run_id, flow_node, flow_attempt, slot)"
        " SELECT ?, job_group, job_id, executor_handler, executor_param, ?,"
        " executor_fail_retry_count, ?, 0, trigger_msg, trigger_type, schedule_time,"
        " flow_run_id, flow_node, flow_attempt, slot"
        " FROM xxl_job_log WHERE id = ? AND trigger_code = 0", "isii",
        id, shard, stamp, src);
}

//  The share of a job (SQL, the row's job_id or the job's id)
#define XXL_SHARE_OF(col) " (" col " % 16) "
#define XXL_IN_MASK(col) " ((?1 >> (" col " % 16)) & 1) = 1 "
//  One job's rows (xxl_job_log_job_block: the job's entries in each block
//  of 2^16 ids, a search per block from the log's highest id to its
//  lowest, so that a turn's fires of many jobs share the index's pages and
//  no read of one job walks the log); "WHERE ... AND job_id = JOB ",
//  ready for more terms.  XXL_JOB_ORDER (DIR) is the index's order, id's
//  order (a job's rows by id without a sort)
#define XXL_JOB_BLOCKS(job, rows) \
    " INDEXED BY xxl_job_log_job_block WHERE (id >> 16) IN (WITH RECURSIVE b (n) AS" \
    " (SELECT (SELECT MAX (id) FROM xxl_job_log" rows ") >> 16 UNION ALL SELECT n - 1 FROM b" \
    "  WHERE n > (SELECT MIN (id) FROM xxl_job_log" rows ") >> 16) SELECT n FROM b)" \
    " AND job_id = " job " "
#define XXL_JOB_ROWS(job) XXL_JOB_BLOCKS (job, "")
//  ... of its rows with trigger_code 0 only (the statement must have that
//  term): the blocks between the lowest and the highest unsent row
//  (xxl_job_log_unsent's ends), the newest few, however long the history
#define XXL_JOB_UNSENT_ROWS(job) \
    XXL_JOB_BLOCKS (job, " INDEXED BY xxl_job_log_unsent WHERE trigger_code = 0")
#define XXL_JOB_ORDER(dir) " (id >> 16) " dir ", id " dir " "
_Static_assert (XXL_STORE_SHARES == 16, "the SQL above and migration 8 write 16 shares");

int
sq_fired_get (xxl_store_t *base, int64_t *until, int64_t *sent)
{
    store_t *self = (store_t *) base;
    *until = sq_scalar (self, "SELECT MIN(fired_until) FROM xxl_lease", NULL);
    *sent = sq_scalar (self, "SELECT MIN(fired_sent) FROM xxl_lease", NULL);
    return *until < 0 || *sent < 0? -1: 0;
}

//  LOG_LIST: a planned fire is not listed before its time, and until its
//  trigger is recorded its triggerTime is null (the row holds the time
//  it was planned; its own is written with the agent's answer)
#define XXL_LOG_LIST_SELECT \
    "SELECT id, job_group AS jobGroup, job_id AS jobId, executor_address AS executorAddress," \
    " executor_handler AS executorHandler, executor_param AS executorParam," \
    " executor_sharding_param AS executorShardingParam," \
    " executor_fail_retry_count AS executorFailRetryCount," \
    " CASE WHEN trigger_code = 0 AND schedule_time IS NOT NULL THEN NULL" \
    "  ELSE trigger_time END AS triggerTime," \
    " trigger_code AS triggerCode, trigger_msg AS triggerMsg, trigger_type AS triggerType," \
    " schedule_time AS scheduleTime, handle_time AS handleTime, handle_code AS handleCode," \
    " handle_msg AS handleMsg, alarm_status AS alarmStatus, flow_run_id AS flowRunId, flow_node AS flowNode FROM xxl_job_log"
//  ?1 jobId, ?2 jobGroup, ?3 logStatus, ?4..?5 trigger time, ?6 maxId, ?7 now,
//  ?10 the set of groups; ?8 and ?9 the page's limit and offset
#define XXL_LOG_WHERE \
    " (?2 = 0 OR job_group = ?2)" XXL_GROUP_SET ("?10") \
    " AND (?3 = 0 OR (?3 = 1 AND handle_code = 200)" \
    "  OR (?3 = 2 AND (trigger_code NOT IN (0, 200) OR handle_code NOT IN (0, 200)))" \
    "  OR (?3 = 3 AND trigger_code IN (0, 200) AND handle_code = 0))" \
    " AND trigger_time >= ?4 AND trigger_time <= ?5 AND id <= ?6" \
    " AND NOT (trigger_code = 0 AND schedule_time IS NOT NULL AND schedule_time > ?7)"
#define XXL_LOG_FILTER XXL_LOG_WHERE " ORDER BY id DESC LIMIT ?8 OFFSET ?9"
//  ... of one job (its entries of xxl_job_log_job_block, newest first)
#define XXL_LOG_FILTER_JOB XXL_LOG_WHERE " ORDER BY" XXL_JOB_ORDER ("DESC") "LIMIT ?8 OFFSET ?9"

int
sq_log_encode_page (xxl_store_t *base, xxl_enc_t *enc, size_t max_size, int *truncated,
                    const xxl_store_log_filter_t *f)
{
    //  (by job: its blocks' entries; failed or running rows of every job: their
    //  partial indexes, so that few such rows among many are found without
    //  reading the others; else newest first by id)
    const char *sql =
        f->job_id? sq_driver.sql [XXL_SQL_LOG_LIST_JOB]
      : f->status == 2? XXL_LOG_LIST_SELECT " INDEXED BY xxl_job_log_fails"
                        " WHERE (trigger_code NOT IN (0, 200) OR handle_code NOT IN (0, 200))"
                        " AND ?1 = 0 AND" XXL_LOG_FILTER
      : f->status == 3? XXL_LOG_LIST_SELECT " WHERE id IN (SELECT id FROM xxl_job_log"
                        " WHERE trigger_code = 0 UNION ALL SELECT id FROM xxl_job_log"
                        " WHERE trigger_code = 200 AND handle_code = 0) AND ?1 = 0 AND"
                        XXL_LOG_FILTER
      : XXL_LOG_LIST_SELECT " WHERE ?1 = 0 AND" XXL_LOG_FILTER;
    char *set = xxl_store_sql_group_set (f->groups, f->group_count);
    int rows = sq_encode_max ((store_t *) base, enc, max_size, truncated, sql, "iiiiiiiiis",
        f->job_id, f->group_id, f->status, f->from, f->to, f->max_id, f->now,
        f->limit, f->offset, set);
    free (set);
    return rows;
}

//  Rows per statement of report_count: each statement is a read
//  transaction of its own, short enough (tens of ms) that the WAL can be
//  checkpointed and started over between them while a day of millions of
//  rows is counted (one long read held the WAL, and past four times its
//  size the engine's writes wait for a checkpoint)
#define XXL_REPORT_CHUNK 50000

//  Adds one group's sums to rows (by group id, *count of them, room for
//  *room); 0, or -1 out of memory
static int
s_group_runs_add (xxl_store_group_runs_t **rows, size_t *count, size_t *room, int64_t group_id,
                  int64_t running, int64_t suc, int64_t fail)
{
    size_t at = 0;
    while (at < *count && (*rows) [at].group_id < group_id)
        at++;
    if (at == *count || (*rows) [at].group_id != group_id) {
        if (*count == *room) {
            size_t more = *room? *room * 2: 16;
            xxl_store_group_runs_t *grown = (xxl_store_group_runs_t *)
                realloc (*rows, more * sizeof (xxl_store_group_runs_t));
            if (!grown)
                return -1;
            *rows = grown;
            *room = more;
        }
        memmove (*rows + at + 1, *rows + at, (*count - at) * sizeof (xxl_store_group_runs_t));
        (*rows) [at] = (xxl_store_group_runs_t) { .group_id = group_id };
        (*count)++;
    }
    (*rows) [at].running += running;
    (*rows) [at].suc += suc;
    (*rows) [at].fail += fail;
    return 0;
}

int
sq_report_count_groups (xxl_store_t *base, int64_t from, int64_t to,
                        xxl_store_group_runs_t **rows, size_t *count)
{
    store_t *self = (store_t *) base;
    //  Keyset chunks in (trigger_time, id) order, xxl_job_log_time's
    int64_t time = from, id = -1;
    size_t room = 0;
    *rows = NULL;
    *count = 0;
    while (true) {
        sqlite3_stmt *last = sq_prepare (self,
            "SELECT trigger_time, id FROM xxl_job_log WHERE (trigger_time, id) > (?1, ?2)"
            " AND trigger_time < ?3 ORDER BY trigger_time, id LIMIT 1 OFFSET ?4");
        if (!last || sq_bind (self, last, "iiii", time, id, to, (int64_t) XXL_REPORT_CHUNK - 1))
            break;
        int rc = sqlite3_step (last);
        bool more = rc == SQLITE_ROW;
        int64_t last_time = more? sqlite3_column_int64 (last, 0): to;
        int64_t last_id = more? sqlite3_column_int64 (last, 1): -1;
        sqlite3_reset (last);
        if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
            sq_fail (self, "report count");
            break;
        }
        //  (the chunk up to and with the last key; the final one up to `to`)
#define XXL_REPORT_SUMS \
            "SELECT job_group," \
            " COALESCE(SUM(CASE WHEN trigger_code IN (0, 200) AND handle_code = 0 THEN 1 ELSE 0 END), 0)," \
            " COALESCE(SUM(CASE WHEN handle_code = 200 THEN 1 ELSE 0 END), 0)," \
            " COALESCE(SUM(CASE WHEN trigger_code NOT IN (0, 200) OR handle_code NOT IN (0, 200)" \
            "   THEN 1 ELSE 0 END), 0) FROM xxl_job_log WHERE (trigger_time, id) > (?1, ?2)"
        sqlite3_stmt *sum = sq_prepare (self, more
            ? XXL_REPORT_SUMS " AND (trigger_time, id) <= (?3, ?4) GROUP BY job_group"
            : XXL_REPORT_SUMS " AND trigger_time < ?3 GROUP BY job_group");
        if (!sum || (more? sq_bind (self, sum, "iiii", time, id, last_time, last_id)
                         : sq_bind (self, sum, "iii", time, id, to)))
            break;
        while ((rc = sqlite3_step (sum)) == SQLITE_ROW)
            if (s_group_runs_add (rows, count, &room, sqlite3_column_int64 (sum, 0),
                                  sqlite3_column_int64 (sum, 1), sqlite3_column_int64 (sum, 2),
                                  sqlite3_column_int64 (sum, 3))) {
                rc = SQLITE_NOMEM;
                break;
            }
        if (rc != SQLITE_DONE)
            sq_fail (self, "report count");
        sqlite3_reset (sum);
        if (rc != SQLITE_DONE)
            break;
        if (!more)
            return 0;
        time = last_time;
        id = last_id;
    }
    free (*rows);
    *rows = NULL;
    *count = 0;
    return -1;
}

int
sq_report_count (xxl_store_t *base, int64_t from, int64_t to, int64_t *running, int64_t *suc,
                 int64_t *fail)
{
    xxl_store_group_runs_t *rows;
    size_t count;
    int rc = sq_report_count_groups (base, from, to, &rows, &count);
    return xxl_store_sql_sum_runs (rc, rows, count, running, suc, fail);
}

int
sq_report_totals (xxl_store_t *base, xxl_store_totals_t *t)
{
    store_t *self = (store_t *) base;
    t->jobs = sq_scalar (self, "SELECT COUNT(*) FROM xxl_job_info", NULL);
    t->jobs_running = sq_scalar (self, "SELECT COUNT(*) FROM xxl_job_info WHERE trigger_status = 1",
                                NULL);
    t->groups = sq_scalar (self, "SELECT COUNT(*) FROM xxl_job_group", NULL);
    t->runs = sq_scalar (self, "SELECT COALESCE(SUM(running_count + suc_count + fail_count), 0)"
                              " FROM xxl_job_log_report", NULL);
    t->suc = sq_scalar (self, "SELECT COALESCE(SUM(suc_count), 0) FROM xxl_job_log_report", NULL);
    t->fail = sq_scalar (self, "SELECT COALESCE(SUM(fail_count), 0) FROM xxl_job_log_report", NULL);
    return t->jobs < 0 || t->runs < 0? -1: 0;
}

//  --------------------------------------------------------------------
//  The method table, in xxl_store_methods_t's order

//  Leases (version 3)
int
sq_lease_list (xxl_store_t *base, xxl_lease_t *rows)
{
    store_t *self = (store_t *) base;
    memset (rows, 0, XXL_STORE_SHARES * sizeof (xxl_lease_t));
    sqlite3_stmt *stmt = sq_prepare (self,
        "SELECT share, owner, epoch, expires, fired_until, fired_sent FROM xxl_lease"
        " ORDER BY share");
    if (!stmt)
        return -1;
    int rc, seen = 0;
    while ((rc = sqlite3_step (stmt)) == SQLITE_ROW) {
        int share = sqlite3_column_int (stmt, 0);
        if (share < 0 || share >= XXL_STORE_SHARES)
            continue;
        xxl_lease_t *row = rows + share;
        row->share = share;
        const char *owner = (const char *) sqlite3_column_text (stmt, 1);
        snprintf (row->owner, sizeof row->owner, "%s", owner? owner: "");
        row->epoch = sqlite3_column_int64 (stmt, 2);
        row->expires = sqlite3_column_int64 (stmt, 3);
        row->fired_until = sqlite3_column_int64 (stmt, 4);
        row->fired_sent = sqlite3_column_int64 (stmt, 5);
        seen++;
    }
    sqlite3_reset (stmt);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        return sq_fail (self, "lease list");
    if (seen != XXL_STORE_SHARES) {
        snprintf (self->error, sizeof self->error, "lease list: %d of %d shares", seen,
                  XXL_STORE_SHARES);
        return -1;
    }
    return 0;
}

int
sq_lease_fired (xxl_store_t *base, uint64_t mask, int64_t until, int64_t sent)
{
    int rc = sq_exec ((store_t *) base,
        "UPDATE xxl_lease SET fired_until = max (fired_until, ?2),"
        " fired_sent = max (fired_sent, ?3) WHERE ((?1 >> share) & 1) = 1",
        "iii", (int64_t) mask, until, sent);
    return rc < 0? -1: 0;
}

int64_t
sq_clock_now (xxl_store_t *base)
{
    (void) base;
    return zclock_time ();
}

int
sq_job_due_in (xxl_store_t *base, uint64_t mask, int64_t before, xxl_store_due_t *rows,
               size_t max, size_t *count)
{
    store_t *self = (store_t *) base;
    *count = 0;
    sqlite3_stmt *stmt = sq_prepare (self,
        "SELECT id, update_time, trigger_next_time, trigger_last_time FROM xxl_job_info"
        " WHERE trigger_status = 1 AND trigger_next_time <= ?2 AND" XXL_IN_MASK ("id")
        " ORDER BY trigger_next_time LIMIT ?3");
    if (!stmt || sq_bind (self, stmt, "iii", (int64_t) mask, before, (int64_t) max))
        return -1;
    int rc;
    while (*count < max && (rc = sqlite3_step (stmt)) == SQLITE_ROW) {
        xxl_store_due_t *row = rows + (*count)++;
        row->id = sqlite3_column_int64 (stmt, 0);
        row->update_time = sqlite3_column_int64 (stmt, 1);
        row->trigger_next_time = sqlite3_column_int64 (stmt, 2);
        row->trigger_last_time = sqlite3_column_int64 (stmt, 3);
    }
    sqlite3_reset (stmt);
    return 0;
}

//  The statements of the shared bodies this backend words its own way
//  (xxl_store_sql.h: xxl_store_stmt_t), given through its driver
const char *const sq_statements [XXL_SQL_STATEMENTS] = {
    [XXL_SQL_JOB_PARENTS] =
        "SELECT id FROM xxl_job_info WHERE child_jobid != ''"
        " AND instr (',' || replace (child_jobid, ' ', '') || ',',"
        " ',' || ?1 || ',') > 0 ORDER BY id LIMIT 256",
    [XXL_SQL_FIRED_RAISE_UNTIL] =
        "UPDATE xxl_lease SET fired_until = max (fired_until, ?)",
    [XXL_SQL_FIRED_RAISE_SENT] =
        "UPDATE xxl_lease SET fired_sent = max (fired_sent, ?)",
    [XXL_SQL_GLUE_ENCODE] =
        XXL_GLUE_SELECT ", glue_source AS glueSource"
        " FROM xxl_job_logglue WHERE job_id = ? AND version = ?",
    [XXL_SQL_GROUP_REFRESH_APP] =
        "UPDATE xxl_job_group SET update_time = ?1, address_list ="
        " (SELECT group_concat (registry_value, ',') FROM"
        "   (SELECT registry_value FROM xxl_job_registry r WHERE r.registry_group = 'EXECUTOR'"
        "    AND r.registry_key = ?2 ORDER BY registry_value))"
        " WHERE address_type = 0 AND app_name = ?2",
    [XXL_SQL_GROUPS_REFRESH] =
        "UPDATE xxl_job_group SET update_time = ?, address_list ="
        " (SELECT group_concat (registry_value, ',') FROM"
        "   (SELECT registry_value FROM xxl_job_registry r WHERE r.registry_group = 'EXECUTOR'"
        "    AND r.registry_key = xxl_job_group.app_name ORDER BY registry_value))"
        " WHERE address_type = 0",
    [XXL_SQL_LOG_LOST_IDS] =
        "SELECT l.id FROM xxl_job_log l LEFT JOIN xxl_job_registry r"
        " ON r.registry_value = l.executor_address"
        " WHERE l.trigger_code = 200 AND l.handle_code = 0 AND l.trigger_time <= ?1"
        " AND r.id IS NULL LIMIT ?2",
    [XXL_SQL_RECOVER_LATE_JOBS] =
        "SELECT job_id FROM xxl_job_log INDEXED BY xxl_job_log_unsent WHERE" XXL_UNSENT_SQL
        " AND schedule_time < ? GROUP BY job_id LIMIT ?",
    [XXL_SQL_LOG_UNSENT_IN] =
        "SELECT id FROM xxl_job_log WHERE trigger_code = 0 AND id > ?2"
        " AND" XXL_IN_MASK ("job_id") "ORDER BY id LIMIT ?3",
    [XXL_SQL_RECOVER_STAMP_DUE_IN] =
        "UPDATE xxl_job_log SET trigger_time = schedule_time WHERE trigger_code = 0"
        " AND executor_address IS NOT NULL AND schedule_time > trigger_time"
        " AND schedule_time <= ?2 AND" XXL_IN_MASK ("job_id"),
    [XXL_SQL_AUDIT_DELETE] =
        "DELETE FROM xxl_audit WHERE id IN (SELECT id FROM xxl_audit"
        " WHERE time < ? ORDER BY time LIMIT ?)",
    [XXL_SQL_AUDIT_ENCODE_PAGE] =
        "SELECT id, time, who, role, type, target, code FROM xxl_audit"
        " WHERE id < ? ORDER BY id DESC LIMIT ?",
    [XXL_SQL_GLUE_ENCODE_PAGE] =
        XXL_GLUE_SELECT " FROM xxl_job_logglue WHERE job_id = ? ORDER BY version DESC"
        " LIMIT ? OFFSET ?",
    [XXL_SQL_JOB_DELAY_RESUME] =
        "UPDATE xxl_job_info SET trigger_next_time = ? + CAST(schedule_conf AS INTEGER) * 1000"
        " WHERE id = (SELECT job_id FROM xxl_job_log WHERE id = ? AND schedule_time IS NOT NULL)"
        " AND schedule_type = 'FIX_DELAY' AND trigger_status = 1 AND trigger_next_time = ?",
    [XXL_SQL_LOG_ID_AT_RANK] =
        "SELECT id FROM xxl_job_log WHERE ?1 = 0 ORDER BY id DESC LIMIT 1 OFFSET ?2",
    [XXL_SQL_LOG_ID_AT_RANK_JOB] =
        "SELECT id FROM xxl_job_log" XXL_JOB_ROWS ("?1") "ORDER BY" XXL_JOB_ORDER ("DESC")
        "LIMIT 1 OFFSET ?2",
    [XXL_SQL_RECOVER_STAMP_FIRED_IN] =
        "UPDATE xxl_job_log SET trigger_time = schedule_time WHERE trigger_code = 0"
        " AND executor_address IS NOT NULL AND schedule_time > trigger_time"
        " AND" XXL_IN_MASK ("job_id") "AND schedule_time <= (SELECT fired_sent FROM xxl_lease"
        "     WHERE share =" XXL_SHARE_OF ("xxl_job_log.job_id") ")",
    [XXL_SQL_RECOVER_LATE_JOBS_IN] =
        "SELECT job_id FROM xxl_job_log INDEXED BY xxl_job_log_unsent WHERE" XXL_UNSENT_SQL
        " AND schedule_time < ?2 AND" XXL_IN_MASK ("job_id") "GROUP BY job_id LIMIT ?3",
    [XXL_SQL_LOG_TRIGGER_END] =
        "UPDATE xxl_job_log SET trigger_code = ?1, trigger_msg ="
        " substr (COALESCE(trigger_msg, ''), 1, max (length (COALESCE(trigger_msg, '')) - ?2, 0))"
        " || ?3, trigger_time = CASE WHEN ?4 > 0 THEN ?5 ELSE trigger_time END WHERE id = ?6"
        " AND (?7 IS NULL OR ((trigger_code = 0 OR (?1 = 200 AND trigger_code = 200))"
        " AND substr (trigger_msg, -length (?7)) = ?7))",
    //  (the running index holds exactly the open rows)
    [XXL_SQL_LOG_OPEN_IDS_AT] =
        "SELECT id FROM xxl_job_log INDEXED BY xxl_job_log_running"
        " WHERE trigger_code = 200 AND handle_code = 0 AND executor_address = ?1"
        " AND id > ?2 ORDER BY id LIMIT ?3",
    [XXL_SQL_LOG_INSERT_TRIGGER_MSG] =
        "UPDATE xxl_job_log SET trigger_msg = substr (COALESCE (trigger_msg, ''), 1,"
        " max (length (COALESCE (trigger_msg, '')) - ?1, 0)) || ?2 || substr (COALESCE"
        " (trigger_msg, ''), max (length (COALESCE (trigger_msg, '')) - ?1, 0) + 1)"
        " WHERE id = ?3",
    [XXL_SQL_LOG_OPEN_IDS_ALL] =
        //  (the ties of the cursor's time first: the index's entries are
        //  (trigger_time, rowid), so both halves seek, none rescans ties)
        "SELECT COALESCE (group_concat (trigger_time || ':' || id || ':' || hex (address), ' '),"
        " '') FROM (SELECT * FROM (SELECT trigger_time, id, COALESCE (executor_address, '')"
        " AS address FROM xxl_job_log INDEXED BY xxl_job_log_running"
        " WHERE trigger_code = 200 AND handle_code = 0 AND trigger_time = ?1 AND id > ?2"
        " ORDER BY id LIMIT ?3) UNION ALL SELECT * FROM (SELECT trigger_time, id,"
        " COALESCE (executor_address, '') AS address FROM xxl_job_log"
        " INDEXED BY xxl_job_log_running WHERE trigger_code = 200 AND handle_code = 0"
        " AND trigger_time > ?1 ORDER BY trigger_time, id LIMIT ?3)"
        " ORDER BY trigger_time, id LIMIT ?3)",
    [XXL_SQL_NODE_BEAT] =
        "INSERT INTO xxl_node (name, beat) VALUES (?1, ?2)"
        " ON CONFLICT (name) DO UPDATE SET beat = max (beat, ?2)",
    [XXL_SQL_REGISTRY_ALIVE] =
        "SELECT group_concat (registry_value, ',') FROM (SELECT DISTINCT registry_value"
        " FROM xxl_job_registry WHERE update_time >"
        " (SELECT MAX (update_time) FROM xxl_job_registry) - ?)",
    [XXL_SQL_JOB_COUNT] =
        "SELECT COUNT(*) FROM xxl_job_info" XXL_JOB_FILTER,
    [XXL_SQL_JOB_ENCODE] =
        XXL_JOB_SELECT " WHERE id = ?",
    [XXL_SQL_JOB_ENCODE_PAGE] =
        XXL_JOB_SELECT XXL_JOB_FILTER " ORDER BY id LIMIT ?2 OFFSET ?3",
    [XXL_SQL_LOG_DELETE] =
        "DELETE FROM xxl_job_log WHERE id IN (SELECT id FROM xxl_job_log"
        " WHERE ?1 = 0 AND trigger_time < ?2 AND id < ?3"
        " AND NOT (trigger_code IN (0, 200) AND handle_code = 0)" XXL_NOT_IN_RUNNING_FLOW
        " ORDER BY id LIMIT ?4)",
    [XXL_SQL_REPORT_ENCODE_DAYS] =
        "SELECT trigger_day AS triggerDay, running_count AS runningCount, suc_count AS sucCount,"
        " fail_count AS failCount, update_time AS updateTime FROM xxl_job_log_report"
        " ORDER BY trigger_day DESC LIMIT ?",
    [XXL_SQL_LOG_ENCODE] =
        "SELECT id, job_group AS jobGroup, job_id AS jobId, executor_address AS executorAddress,"
        " executor_handler AS executorHandler, executor_param AS executorParam,"
        " executor_sharding_param AS executorShardingParam,"
        " executor_fail_retry_count AS executorFailRetryCount, trigger_time AS triggerTime,"
        " trigger_code AS triggerCode, trigger_msg AS triggerMsg, trigger_type AS triggerType,"
        " schedule_time AS scheduleTime, handle_time AS handleTime, handle_code AS handleCode,"
        " handle_msg AS handleMsg, alarm_status AS alarmStatus, flow_run_id AS flowRunId, flow_node AS flowNode FROM xxl_job_log WHERE id = ?",
    [XXL_SQL_REGISTRY_APPS] =
        "SELECT group_concat (registry_key, ',') FROM (SELECT DISTINCT registry_key"
        " FROM xxl_job_registry WHERE registry_value = ? AND update_time >= ?)",
    //  (SQLite's one writer: a transaction that writes holds the store)
    [XXL_SQL_WORKFLOW_RUN_LOAD] =
        "SELECT id, workflow_id, status, param, definition, killed, trigger_type,"
        " trigger_time, end_time FROM xxl_workflow_run WHERE id = ?",
    //  (a job's rows with no result that count towards its maxRunning:
    //  xxl_job_log_slots, not a read of the job's whole history by its
    //  blocks; tests/test_store.c checks the plans)
    [XXL_SQL_LOG_SLOT_ADMITTED] =
        "SELECT id FROM xxl_job_log INDEXED BY xxl_job_log_slots"
        " WHERE slot = 1 AND handle_code = 0 AND job_id = ?1 AND trigger_code IN (0, 200)"
        " AND executor_address IS NOT NULL ORDER BY id LIMIT ?2",
    [XXL_SQL_LOG_SLOT_WAITING] =
        "SELECT id FROM xxl_job_log INDEXED BY xxl_job_log_slots"
        " WHERE slot = 1 AND handle_code = 0 AND job_id = ?1 AND trigger_code = 0"
        " AND executor_address IS NULL"
        " AND CASE WHEN schedule_time > 0 THEN schedule_time <= ?2"
        "     WHEN trigger_type = 'RETRY' THEN trigger_time <= ?2 ELSE 1 END"
        " ORDER BY CASE WHEN schedule_time > 0 THEN schedule_time ELSE trigger_time END, id"
        " LIMIT ?3",
    //  (the rows with no result: the unsent and running indexes, each
    //  walked whole, once per save of a job with a limit)
    [XXL_SQL_LOG_SLOT_MARK] =
        "UPDATE xxl_job_log SET slot = 1 WHERE id IN (SELECT id FROM xxl_job_log"
        " INDEXED BY xxl_job_log_unsent WHERE trigger_code = 0 AND job_id = ?1"
        " UNION ALL SELECT id FROM xxl_job_log INDEXED BY xxl_job_log_running"
        " WHERE trigger_code = 200 AND handle_code = 0 AND job_id = ?1)"
        " AND slot = 0 AND handle_code = 0",
    //  (one job's unsent rows: a search of the job's rows in the unsent
    //  rows' blocks, not a walk of every job's unsent rows once per job;
    //  its newest late one: from its newest row down)
    [XXL_SQL_RECOVER_LATE_LAST] =
        "SELECT COALESCE ((SELECT id FROM xxl_job_log" XXL_JOB_UNSENT_ROWS ("?1")
        "AND" XXL_UNSENT_SQL " AND schedule_time < ?2 ORDER BY" XXL_JOB_ORDER ("DESC")
        "LIMIT 1), 0)",
    [XXL_SQL_RECOVER_DROP_LATE] =
        "DELETE FROM xxl_job_log" XXL_JOB_UNSENT_ROWS ("?1")
        "AND" XXL_UNSENT_SQL " AND schedule_time < ?2 AND id != ?3",
    //  (claimed alarms are of failed rows: their index, not every row
    //  above `after`)
    [XXL_SQL_LOG_CLAIMED_IDS] =
        "SELECT id FROM xxl_job_log INDEXED BY xxl_job_log_fails WHERE id > ?1"
        " AND (trigger_code NOT IN (0, 200) OR handle_code NOT IN (0, 200))"
        " AND alarm_status = -1 ORDER BY id LIMIT ?2",
    [XXL_SQL_JOB_DROP_PLANS] =
        "DELETE FROM xxl_job_log" XXL_JOB_UNSENT_ROWS ("?1")
        "AND trigger_code = 0 AND schedule_time IS NOT NULL"
        " AND COALESCE (trigger_type, '') != 'BACKFILL'"
        " AND (executor_address IS NULL OR schedule_time > ?2)",
    //  (a step of the wall clock: rare, a walk of the jobs)
    [XXL_SQL_JOB_DELAY_SHIFT] =
        "UPDATE xxl_job_info SET trigger_next_time = MAX (1, MIN (?3 - 1, trigger_next_time + ?2))"
        " WHERE" XXL_IN_MASK ("id") "AND schedule_type = 'FIX_DELAY' AND trigger_status = 1"
        " AND trigger_next_time > 0 AND trigger_next_time < ?3",
    [XXL_SQL_LOG_LIST_JOB] =
        XXL_LOG_LIST_SELECT XXL_JOB_ROWS ("?1") "AND" XXL_LOG_FILTER_JOB,
    [XXL_SQL_JOB_RM_LOGS] =
        "DELETE FROM xxl_job_log" XXL_JOB_ROWS ("?1"),
    [XXL_SQL_JOB_RM_LOGS_SOME] =
        "DELETE FROM xxl_job_log WHERE id IN (SELECT id FROM xxl_job_log" XXL_JOB_ROWS ("?1")
        "ORDER BY" XXL_JOB_ORDER ("") "LIMIT ?2)",
    [XXL_SQL_LOG_DELETE_JOB] =
        "DELETE FROM xxl_job_log WHERE id IN (SELECT id FROM xxl_job_log" XXL_JOB_ROWS ("?1")
        "AND trigger_time < ?2 AND id < ?3"
        " AND NOT (trigger_code IN (0, 200) AND handle_code = 0)" XXL_NOT_IN_RUNNING_FLOW
        " ORDER BY" XXL_JOB_ORDER ("") "LIMIT ?4)",
    [XXL_SQL_BACKFILL_MADE_TIMES] =
        "SELECT u.value FROM json_each ('[' || ?2 || ']') AS u WHERE EXISTS (SELECT 1"
        " FROM xxl_job_log WHERE schedule_time = u.value AND job_id = ?1) ORDER BY u.value",
};

//  Workflows and their runs (version 12): the adds, whose new id is the
//  connection's last rowid; the rest are shared (sql/xxl_store_sql_flows.c)
int64_t
sq_workflow_add (xxl_store_t *base, const xxl_workflow_t *w)
{
    store_t *self = (store_t *) base;
    int rc = sq_exec (self,
        "INSERT INTO xxl_workflow (name, description, definition, schedule_type, schedule_conf,"
        " timezone, misfire_strategy, status, next_time, add_time, update_time, calendar)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", "sssssssiiiis",
        w->name, w->description? w->description: "", w->definition,
        w->schedule_type? w->schedule_type: "NONE", w->schedule_conf? w->schedule_conf: "",
        w->timezone? w->timezone: "", w->misfire_strategy? w->misfire_strategy: "DO_NOTHING",
        w->status, w->next_time, w->add_time, w->update_time, w->calendar? w->calendar: "");
    return rc < 0? -1: sqlite3_last_insert_rowid (self->db);
}

int64_t
sq_workflow_run_add (xxl_store_t *base, const xxl_workflow_run_t *run)
{
    store_t *self = (store_t *) base;
    int rc = sq_exec (self,
        "INSERT INTO xxl_workflow_run (workflow_id, status, param, trigger_type, trigger_time,"
        " end_time, definition, killed) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", "isssiiss",
        run->workflow_id, run->status, run->param? run->param: "",
        run->trigger_type? run->trigger_type: "MANUAL", run->trigger_time, run->end_time,
        run->definition, run->killed? run->killed: "");
    return rc < 0? -1: sqlite3_last_insert_rowid (self->db);
}
