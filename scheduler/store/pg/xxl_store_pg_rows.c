/*  xxl_store_pg_rows.c -- the PostgreSQL backend's own row calls (the
    contracts are in xxl_store.h) and the texts of the dialect's
    statements of the shared bodies (pgx_statements).

    Layer: below xxl_store_pg.c (which names these calls in its method
    table), beside _lease.c, _batch.c and _driver.c, over _conn.c (the
    only file it calls, with _batch.c's defer_log).  A write that must
    commit with the handle's bookkeeping opens its own transaction through
    the handle's method table (begin, commit, rollback), never by naming
    xxl_store_pg.c.

    Each call answers as the SQLite backend's (xxl_store_sqlite_rows.c):
    the same rows, order, counts and return codes.  What SQLite does that
    PostgreSQL does not, done here by hand:
    -   A unique violation fails only its statement in SQLite; PostgreSQL
        would abort the whole transaction.  Inserts that may collide use ON
        CONFLICT DO NOTHING and updates that may are guarded, and the call
        then fails (-1, "UNIQUE constraint failed: ...") as SQLite's does,
        leaving the transaction alive.
    -   Column names are quoted ("jobGroup"): PostgreSQL folds unquoted
        names to lower case.
    -   Text is ordered byte-wise (COLLATE "C", SQLite's BINARY); lower()
        lowers ASCII only (translate, as SQLite's); CAST of text to an
        integer takes its leading integer (0 when none) instead of
        failing; max()/min() of two values are GREATEST/LEAST; a negative
        LIMIT is none and a negative OFFSET 0.
    -   substr() takes an int: lengths are capped before the cast.
*/

#include "xxl_store_pg_int.h"

#include <inttypes.h>
#include <assert.h>

//  SQLite's LIMIT n (negative: no limit) and OFFSET n (negative: 0)
#define XXL_LIMIT(p) " LIMIT NULLIF (GREATEST (" p ", -1), -1)"
#define XXL_OFFSET(p) " OFFSET GREATEST (" p ", 0)"
//  SQLite's lower(): ASCII letters only
#define XXL_LOWER(x) "translate (" x ", 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')"
//  SQLite's CAST (x AS INTEGER) of text: the integer it starts with, 0
//  when none (digits capped so that the engine's * 1000 cannot overflow)
#define XXL_INT_PREFIX(x) \
    "COALESCE (CAST (substring (" x " FROM '^[[:space:]]*([-+]?[0-9]{1,15})') AS BIGINT), 0)"
//  SQLite's substr (x, 1, max (length (x) - n, 0)): the text without its
//  last n characters
#define XXL_CUT_TAIL(x, n) \
    "substr (" x ", 1, CAST (LEAST (GREATEST (length (" x ") - " n ", 0), 2147483647) AS INTEGER))"

//  A write that must commit with the handle's bookkeeping (log ids it
//  hands out itself): outside a transaction, in one of its own.  began:
//  1 when this call opened it.  0, or -1.
static int
s_own_begin (store_t *self, int *began)
{
    *began = !self->in_txn;
    return *began? self->sql.base.methods->begin (&self->sql.base): 0;
}

//  Ends what s_own_begin opened: commits when rc is not -1, else rolls
//  back (the error stays rc's); returns rc, or -1 when the commit failed
static int
s_own_end (store_t *self, int began, int rc)
{
    if (!began)
        return rc;
    if (rc == -1) {
        char cause [sizeof self->error];
        snprintf (cause, sizeof cause, "%s", self->error);
        self->sql.base.methods->rollback (&self->sql.base);
        snprintf (self->error, sizeof self->error, "%s", cause);
        return -1;
    }
    return self->sql.base.methods->commit (&self->sql.base)? -1: rc;
}

//  --------------------------------------------------------------------
//  Groups

int64_t
pgx_group_add (xxl_store_t *base, const xxl_group_t *group)
{
    store_t *self = (store_t *) base;
    PGresult *result = pgx_run (self, PGX_WRITE,
        "INSERT INTO xxl_job_group (app_name, title, address_type, address_list, update_time)"
        " VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING RETURNING id", "ssisi",
        group->app_name, group->title? group->title: "", (int64_t) group->address_type,
        group->address_list, group->update_time);
    if (!result)
        return -1;
    int64_t id = PQntuples (result) == 1? pgx_int (result, 0, 0): -1;
    PQclear (result);
    if (id < 0)
        pgx_failf (self, "group add: UNIQUE constraint failed: xxl_job_group.app_name");
    return id;
}

int
pgx_group_update (xxl_store_t *base, const xxl_group_t *group)
{
    store_t *self = (store_t *) base;
    int changes = pgx_exec (self,
        "UPDATE xxl_job_group SET app_name = $1, title = $2, address_type = $3,"
        " address_list = $4, update_time = $5 WHERE id = $6 AND NOT EXISTS"
        " (SELECT 1 FROM xxl_job_group o WHERE o.app_name = $1 AND o.id != $6)", "ssisii",
        group->app_name, group->title? group->title: "", (int64_t) group->address_type,
        group->address_list, group->update_time, group->id);
    if (changes != 0)
        return changes < 0? -1: 0;
    int64_t clash = pgx_scalar (self, "SELECT EXISTS (SELECT 1 FROM xxl_job_group"
                                      " WHERE app_name = $1 AND id != $2)", "si",
                                group->app_name, group->id);
    if (clash < 0)
        return -1;
    if (clash)
        return pgx_failf (self, "group update: UNIQUE constraint failed: xxl_job_group.app_name");
    return 0;
}

//  --------------------------------------------------------------------
//  Jobs

int64_t
pgx_job_add (xxl_store_t *base, const xxl_job_t *job)
{
    PGresult *result = pgx_run ((store_t *) base, PGX_WRITE,
        "INSERT INTO xxl_job_info (" XXL_JOB_COLUMNS ") VALUES " XXL_JOB_VALUES " RETURNING id",
        XXL_JOB_FMT, XXL_JOB_ARGS (job));
    if (!result)
        return -1;
    int64_t id = PQntuples (result) == 1? pgx_int (result, 0, 0): -1;
    PQclear (result);
    return id;
}

int
pgx_glue_add (xxl_store_t *base, int64_t job_id, const char *glue_type,
              const char *source, const char *remark, int64_t now)
{
    store_t *self = (store_t *) base;
    //  (the next number and the row in one statement)
    PGresult *result = pgx_run (self, PGX_WRITE,
        "INSERT INTO xxl_job_logglue (job_id, glue_type, glue_source, glue_remark,"
        " add_time, update_time, version) SELECT $1, $2, $3, $4, $5, $5,"
        " COALESCE (MAX (version), 0) + 1 FROM xxl_job_logglue WHERE job_id = $1"
        " RETURNING version", "isssi", job_id, glue_type, source, remark? remark: "", now);
    if (!result)
        return -1;
    int64_t version = PQntuples (result) == 1? pgx_int (result, 0, 0): -1;
    PQclear (result);
    //  Keep the last XXL_GLUE_KEEP versions, as XXL-JOB does (30)
    if (version < 1
    ||  pgx_exec (self, "DELETE FROM xxl_job_logglue WHERE job_id = $1 AND version <= $2",
                  "ii", job_id, version - XXL_GLUE_KEEP) < 0)
        return -1;
    return (int) version;
}

//  --------------------------------------------------------------------
//  Logs

//  The first of a run of XXL_STORE_LOG_ID_RUN ids the caller may hand
//  out, from this handle's block of xxl_log_ids (reserved by nextval,
//  which no transaction holds: two schedulers never wait for each other
//  here, and no id of the block is anyone else's): past every id it
//  added, with two runs left in the block (the engine, whose ids of a run
//  may not all reach a row, hands out past its own; that stays inside)
int64_t
pgx_log_next_id (xxl_store_t *base)
{
    store_t *self = (store_t *) base;
    int64_t next = self->ids_next > self->ids_used? self->ids_next: self->ids_used + 1;
    if (self->ids_end - next < 2 * XXL_STORE_LOG_ID_RUN) {
        int lock_free = self->lock_free;
        self->lock_free = 1;
        int64_t block = pgx_scalar (self, "SELECT nextval ('xxl_log_ids')", NULL);
        self->lock_free = lock_free;
        if (block <= 0)
            return -1;
        next = block;
        self->ids_end = block + XXL_PG_LOG_ID_BLOCK;
    }
    self->ids_next = next;
    return next;
}

//  Moves the log ids past id (xxl_store.h) by drawing blocks of
//  xxl_log_ids until one starts past it: nextval only, so the sequence
//  never goes back, whoever else draws meanwhile (their draws only push
//  ours further); the last block drawn is this handle's from then on
int
pgx_log_ids_past (xxl_store_t *base, int64_t id, int64_t from, int64_t *was, int64_t *now)
{
    store_t *self = (store_t *) base;
    int lock_free = self->lock_free;
    self->lock_free = 1;
    int rc = -1;
    //  The first id of the next block any handle would draw
    int64_t fresh = pgx_scalar (self, "SELECT CASE WHEN is_called THEN last_value + $1"
                                      " ELSE last_value END FROM xxl_log_ids", "i",
                                (int64_t) XXL_PG_LOG_ID_BLOCK);
    if (fresh > 0) {
        //  This handle's ids not handed out: [lo, ids_end)
        int64_t lo = from > 0? from: self->ids_next + XXL_STORE_LOG_ID_RUN;
        if (lo <= self->ids_used)
            lo = self->ids_used + 1;
        bool held = lo < self->ids_end;
        *was = held? lo: fresh;
        *now = *was;
        rc = 0;
        if (id >= fresh && id - fresh >= XXL_STORE_LOG_IDS_LEAP)
            rc = pgx_failf (self, "log id %" PRId64 " is more than 2^32 past the next id the"
                            " store would reserve (%" PRId64 "): not moved", id, fresh);
        else
        if (id >= fresh || (held && id >= lo && id < self->ids_end)) {
            //  (the block holding id, then one past it; one when id is
            //  below the next block)
            int64_t draws = id >= fresh? (id - fresh) / XXL_PG_LOG_ID_BLOCK + 2: 1;
            int64_t block = pgx_scalar (self, "SELECT MAX (nextval ('xxl_log_ids'))"
                                              " FROM generate_series (1, $1::bigint)", "i", draws);
            if (block > id) {
                self->ids_next = block;
                self->ids_end = block + XXL_PG_LOG_ID_BLOCK;
                *now = block;
                rc = 1;
            }
            else
            if (block > 0)
                rc = pgx_failf (self, "log ids: drew up to %" PRId64 ", not past %" PRId64,
                                block, id);
            else
                rc = -1;
        }
    }
    self->lock_free = lock_free;
    return rc;
}

int
pgx_log_add (xxl_store_t *base, xxl_log_t *log)
{
    store_t *self = (store_t *) base;
    PGresult *result;
    //  An automatic id: the next of this handle's block (log_next_id's)
    bool automatic = log->id <= 0;
    if (automatic && (log->id = pgx_log_next_id (base)) <= 0) {
        log->id = 0;
        return -1;
    }
    if (log->schedule_time <= 0 && self->in_txn)
        return pgx_defer_log (self, log);
    int began;
    if (s_own_begin (self, &began))
        return -1;
    result = pgx_run (self, PGX_WRITE,
        "INSERT INTO xxl_job_log (job_group, job_id, executor_address, executor_handler,"
        " executor_param, executor_sharding_param, executor_fail_retry_count,"
        " trigger_time, trigger_code, trigger_msg, trigger_type, schedule_time, id, slot)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11,"
        " CASE WHEN $12 > 0 THEN $12 END, $13, $14) ON CONFLICT DO NOTHING", "iissssiiissiii",
        log->job_group, log->job_id, log->executor_address, log->executor_handler,
        log->executor_param, log->executor_sharding_param,
        log->executor_fail_retry_count, log->trigger_time, log->trigger_code,
        log->trigger_msg, log->trigger_type, log->schedule_time, log->id,
        (int64_t) (log->slot? 1: 0));
    int rc = -1;
    if (result && pgx_changes (result) == 1) {
        pgx_log_id_used (self, log->id);
        rc = 0;
    }
    else
    if (result)
        pgx_failf (self, "log add: UNIQUE constraint failed: xxl_job_log (id %" PRId64
                   ", or job %" PRId64 "'s planned time %" PRId64 " and shard)",
                   log->id, log->job_id, log->schedule_time);
    PQclear (result);
    if (rc && automatic)
        log->id = 0;
    return s_own_end (self, began, rc);
}

//  --------------------------------------------------------------------
//  The engine's typed calls (xxl_store.h states each contract)

#define XXL_JOB_SELECT \
    "SELECT id, job_group AS \"jobGroup\", job_desc AS \"jobDesc\", add_time AS \"addTime\"," \
    " update_time AS \"updateTime\", author, alarm_email AS \"alarmEmail\"," \
    " schedule_type AS \"scheduleType\", schedule_conf AS \"scheduleConf\"," \
    " misfire_strategy AS \"misfireStrategy\"," \
    " executor_route_strategy AS \"executorRouteStrategy\"," \
    " executor_handler AS \"executorHandler\", executor_param AS \"executorParam\"," \
    " executor_block_strategy AS \"executorBlockStrategy\"," \
    " executor_timeout AS \"executorTimeout\"," \
    " executor_fail_retry_count AS \"executorFailRetryCount\", glue_type AS \"glueType\"," \
    " glue_source AS \"glueSource\", glue_remark AS \"glueRemark\"," \
    " glue_updatetime AS \"glueUpdatetime\"," \
    " child_jobid AS \"childJobId\", trigger_status AS \"triggerStatus\"," \
    " trigger_last_time AS \"triggerLastTime\", trigger_next_time AS \"triggerNextTime\"," \
    " timezone, retry_interval AS \"retryInterval\", retry_backoff AS \"retryBackoff\"," \
    " retry_max_interval AS \"retryMaxInterval\", calendar" \
    ", agent_tags AS \"agentTags\", max_running AS \"maxRunning\"" \
    " FROM xxl_job_info"
//  $1 group (0 any), $4..$6 substrings, $7 status (-1 any); $2 and $3 are
//  the page's limit and offset
//  ($8: the set of groups, '' any; xxl_store_sql_group_set)
#define XXL_GROUP_SET(n) \
    " AND (" n " = '' OR job_group = ANY (CAST ('{' || " n " || '}' AS BIGINT[])))"
#define XXL_JOB_FILTER \
    " WHERE ($1 = 0 OR job_group = $1)" XXL_GROUP_SET ("$8") \
    " AND strpos (" XXL_LOWER ("executor_handler") ", " XXL_LOWER ("$4") ") > 0" \
    " AND strpos (" XXL_LOWER ("job_desc") ", " XXL_LOWER ("$5") ") > 0" \
    " AND strpos (" XXL_LOWER ("author") ", " XXL_LOWER ("$6") ") > 0" \
    " AND ($7 < 0 OR trigger_status = $7)"

#define XXL_GLUE_SELECT \
    "SELECT version, job_id AS \"jobId\", glue_type AS \"glueType\"," \
    " glue_remark AS \"glueRemark\", add_time AS \"addTime\", update_time AS \"updateTime\"," \
    " octet_length (glue_source) AS size"

int
pgx_log_unroute (xxl_store_t *base, int64_t log_id, const char *section, int unfinished)
{
    store_t *self = (store_t *) base;
    if (unfinished)
        return pgx_exec (self,
            "UPDATE xxl_job_log SET executor_address = NULL, trigger_msg = "
            XXL_CUT_TAIL ("trigger_msg", "length (CAST ($1 AS TEXT))")
            " WHERE id = $2 AND trigger_code = 0 AND handle_code = 0"
            " AND right (trigger_msg, length (CAST ($1 AS TEXT))) = CAST ($1 AS TEXT)",
            "si", section, log_id);
    return pgx_exec (self,
        "UPDATE xxl_job_log SET executor_address = NULL, trigger_msg = "
        XXL_CUT_TAIL ("trigger_msg", "length (CAST ($1 AS TEXT))")
        " WHERE id = $2 AND trigger_code = 0"
        " AND right (trigger_msg, length (CAST ($1 AS TEXT))) = CAST ($1 AS TEXT)",
        "si", section, log_id);
}

//  A row's shard; guarded, as the planned instant's shards are unique
//  (xxl_job_log_schedule): a shard another row of the instant holds fails
int
pgx_log_set_shard (xxl_store_t *base, int64_t log_id, const char *shard)
{
    store_t *self = (store_t *) base;
    int changes = pgx_exec (self,
        "UPDATE xxl_job_log l SET executor_sharding_param = $1 WHERE id = $2"
        " AND (schedule_time IS NULL OR NOT EXISTS (SELECT 1 FROM xxl_job_log o"
        "  WHERE o.job_id = l.job_id AND o.schedule_time = l.schedule_time AND o.id != l.id"
        "  AND xxl_shard_index (o.executor_sharding_param) = xxl_shard_index ($1)))",
        "si", shard, log_id);
    if (changes != 0)
        return changes;
    int64_t exists = pgx_scalar (self, "SELECT COUNT(*) FROM xxl_job_log WHERE id = $1",
                                 "i", log_id);
    if (exists < 0)
        return -1;
    if (exists)
        return pgx_failf (self, "log set shard: UNIQUE constraint failed: xxl_job_log"
                          " (row %" PRId64 "'s planned time and shard %s)", log_id,
                          shard? shard: "(none)");
    return 0;
}

int
pgx_log_copy_shard (xxl_store_t *base, int64_t id, int64_t src, const char *shard, int64_t stamp)
{
    store_t *self = (store_t *) base;
    int began;
    if (s_own_begin (self, &began))
        return -1;
    int changes = pgx_exec (self,
        "INSERT INTO xxl_job_log (id, job_group, job_id, executor_handler,"
        " executor_param, executor_sharding_param, executor_fail_retry_count,"
        " trigger_time, trigger_code, trigger_msg, trigger_type, schedule_time,"
        " flow_run_id, flow_node, flow_attempt, slot)"
        " SELECT $1, job_group, job_id, executor_handler, executor_param, $2,"
        " executor_fail_retry_count, $3, 0, trigger_msg, trigger_type, schedule_time,"
        " flow_run_id, flow_node, flow_attempt, slot"
        " FROM xxl_job_log WHERE id = $4 AND trigger_code = 0 ON CONFLICT DO NOTHING",
        "isii", id, shard, stamp, src);
    if (changes > 0)
        pgx_log_id_used (self, id);
    else
    if (changes == 0) {
        //  Nothing to copy, or a row in the way
        int64_t source = pgx_scalar (self, "SELECT COUNT(*) FROM xxl_job_log"
                                           " WHERE id = $1 AND trigger_code = 0", "i", src);
        if (source != 0)
            changes = source < 0? -1
                    : pgx_failf (self, "log copy shard: UNIQUE constraint failed: xxl_job_log"
                                 " (id %" PRId64 ", or the planned time and shard %s)", id,
                                 shard? shard: "(none)");
    }
    return s_own_end (self, began, changes);
}

int
pgx_fired_get (xxl_store_t *base, int64_t *until, int64_t *sent)
{
    PGresult *result = pgx_run ((store_t *) base, PGX_READ,
        "SELECT MIN (fired_until), MIN (fired_sent) FROM xxl_lease", NULL);
    *until = *sent = -1;
    if (result && PQntuples (result) > 0 && !PQgetisnull (result, 0, 0)) {
        *until = pgx_int (result, 0, 0);
        *sent = pgx_int (result, 0, 1);
    }
    PQclear (result);
    return *until < 0 || *sent < 0? -1: 0;
}

#define XXL_LOG_COLUMNS \
    "SELECT id, job_group AS \"jobGroup\", job_id AS \"jobId\"," \
    " executor_address AS \"executorAddress\", executor_handler AS \"executorHandler\"," \
    " executor_param AS \"executorParam\"," \
    " executor_sharding_param AS \"executorShardingParam\"," \
    " executor_fail_retry_count AS \"executorFailRetryCount\","

//  LOG_LIST: a planned fire is not listed before its time, and until its
//  trigger is recorded its triggerTime is null
#define XXL_LOG_LIST_SELECT \
    XXL_LOG_COLUMNS \
    " CASE WHEN trigger_code = 0 AND schedule_time IS NOT NULL THEN NULL" \
    "  ELSE trigger_time END AS \"triggerTime\"," \
    " trigger_code AS \"triggerCode\", trigger_msg AS \"triggerMsg\"," \
    " trigger_type AS \"triggerType\", schedule_time AS \"scheduleTime\"," \
    " handle_time AS \"handleTime\", handle_code AS \"handleCode\"," \
    " handle_msg AS \"handleMsg\", alarm_status AS \"alarmStatus\", flow_run_id AS \"flowRunId\", flow_node AS \"flowNode\" FROM xxl_job_log"
//  $1 jobId, $2 jobGroup, $3 logStatus, $4..$5 trigger time, $6 maxId, $7 now,
//  $10 the set of groups
#define XXL_LOG_FILTER \
    " ($2 = 0 OR job_group = $2)" XXL_GROUP_SET ("$10") \
    " AND ($3 = 0 OR ($3 = 1 AND handle_code = 200)" \
    "  OR ($3 = 2 AND (trigger_code NOT IN (0, 200) OR handle_code NOT IN (0, 200)))" \
    "  OR ($3 = 3 AND trigger_code IN (0, 200) AND handle_code = 0))" \
    " AND trigger_time >= $4 AND trigger_time <= $5 AND id <= $6" \
    " AND NOT (trigger_code = 0 AND schedule_time IS NOT NULL AND schedule_time > $7)" \
    " ORDER BY id DESC" XXL_LIMIT ("$8") XXL_OFFSET ("$9")

int
pgx_log_encode_page (xxl_store_t *base, xxl_enc_t *enc, size_t max_size, int *truncated,
                     const xxl_store_log_filter_t *f)
{
    //  (by job: its index; failed or running rows of every job: their
    //  partial indexes, so that few such rows among many are found without
    //  reading the others; else newest first by id)
    const char *sql =
        f->job_id? pgx_driver.sql [XXL_SQL_LOG_LIST_JOB]
      : f->status == 2? XXL_LOG_LIST_SELECT
                        " WHERE (trigger_code NOT IN (0, 200) OR handle_code NOT IN (0, 200))"
                        " AND $1 = 0 AND" XXL_LOG_FILTER
      : f->status == 3? XXL_LOG_LIST_SELECT " WHERE id IN (SELECT id FROM xxl_job_log"
                        " WHERE trigger_code = 0 UNION ALL SELECT id FROM xxl_job_log"
                        " WHERE trigger_code = 200 AND handle_code = 0) AND $1 = 0 AND"
                        XXL_LOG_FILTER
      : XXL_LOG_LIST_SELECT " WHERE $1 = 0 AND" XXL_LOG_FILTER;
    char *set = xxl_store_sql_group_set (f->groups, f->group_count);
    int rows = pgx_encode_max ((store_t *) base, enc, max_size, truncated, sql, "iiiiiiiiis",
        f->job_id, f->group_id, f->status, f->from, f->to, f->max_id, f->now,
        f->limit, f->offset, set);
    free (set);
    return rows;
}

int
pgx_report_count_groups (xxl_store_t *base, int64_t from, int64_t to,
                         xxl_store_group_runs_t **rows, size_t *count)
{
    *rows = NULL;
    *count = 0;
    PGresult *result = pgx_run ((store_t *) base, PGX_READ,
        "SELECT job_group,"
        " COALESCE (SUM (CASE WHEN trigger_code IN (0, 200) AND handle_code = 0 THEN 1 ELSE 0 END), 0),"
        " COALESCE (SUM (CASE WHEN handle_code = 200 THEN 1 ELSE 0 END), 0),"
        " COALESCE (SUM (CASE WHEN trigger_code NOT IN (0, 200) OR handle_code NOT IN (0, 200)"
        "   THEN 1 ELSE 0 END), 0)"
        " FROM xxl_job_log WHERE trigger_time >= $1 AND trigger_time < $2"
        " GROUP BY job_group ORDER BY job_group", "ii", from, to);
    if (!result)
        return -1;
    size_t tuples = (size_t) PQntuples (result);
    if (tuples)
        *rows = (xxl_store_group_runs_t *) zmalloc (tuples * sizeof (xxl_store_group_runs_t));
    for (size_t i = 0; i < tuples; i++)
        (*rows) [i] = (xxl_store_group_runs_t) {
            .group_id = pgx_int (result, (int) i, 0), .running = pgx_int (result, (int) i, 1),
            .suc = pgx_int (result, (int) i, 2), .fail = pgx_int (result, (int) i, 3) };
    *count = tuples;
    PQclear (result);
    return 0;
}

int
pgx_report_count (xxl_store_t *base, int64_t from, int64_t to, int64_t *running, int64_t *suc,
                  int64_t *fail)
{
    xxl_store_group_runs_t *rows;
    size_t count;
    int rc = pgx_report_count_groups (base, from, to, &rows, &count);
    return xxl_store_sql_sum_runs (rc, rows, count, running, suc, fail);
}

int
pgx_report_totals (xxl_store_t *base, xxl_store_totals_t *t)
{
    PGresult *result = pgx_run ((store_t *) base, PGX_READ,
        "SELECT (SELECT COUNT(*) FROM xxl_job_info),"
        " (SELECT COUNT(*) FROM xxl_job_info WHERE trigger_status = 1),"
        " (SELECT COUNT(*) FROM xxl_job_group),"
        " (SELECT COALESCE (SUM (running_count + suc_count + fail_count), 0)"
        "  FROM xxl_job_log_report),"
        " (SELECT COALESCE (SUM (suc_count), 0) FROM xxl_job_log_report),"
        " (SELECT COALESCE (SUM (fail_count), 0) FROM xxl_job_log_report)", NULL);
    if (!result || PQntuples (result) < 1) {
        t->jobs = t->jobs_running = t->groups = t->runs = t->suc = t->fail = -1;
        PQclear (result);
        return -1;
    }
    t->jobs = pgx_int (result, 0, 0);
    t->jobs_running = pgx_int (result, 0, 1);
    t->groups = pgx_int (result, 0, 2);
    t->runs = pgx_int (result, 0, 3);
    t->suc = pgx_int (result, 0, 4);
    t->fail = pgx_int (result, 0, 5);
    PQclear (result);
    return 0;
}

//  --------------------------------------------------------------------
//  The method table, in xxl_store_methods_t's order

//  The statements of the shared bodies this backend words its own way
//  (xxl_store_sql.h: xxl_store_stmt_t), given through its driver
const char *const pgx_statements [XXL_SQL_STATEMENTS] = {
    [XXL_SQL_JOB_PARENTS] =
        "SELECT id FROM xxl_job_info WHERE child_jobid != ''"
        " AND strpos (',' || replace (child_jobid, ' ', '') || ',',"
        " ',' || CAST ($1 AS TEXT) || ',') > 0 ORDER BY id LIMIT 256",
    [XXL_SQL_FIRED_RAISE_UNTIL] =
        "UPDATE xxl_lease SET fired_until = GREATEST (fired_until, $1)",
    [XXL_SQL_FIRED_RAISE_SENT] =
        "UPDATE xxl_lease SET fired_sent = GREATEST (fired_sent, $1)",
    [XXL_SQL_GLUE_ENCODE] =
        XXL_GLUE_SELECT ", glue_source AS \"glueSource\""
        " FROM xxl_job_logglue WHERE job_id = $1 AND version = $2",
    [XXL_SQL_GROUP_REFRESH_APP] =
        "UPDATE xxl_job_group SET update_time = $1, address_list ="
        " (SELECT string_agg (registry_value, ',' ORDER BY registry_value COLLATE \"C\")"
        "  FROM xxl_job_registry r WHERE r.registry_group = 'EXECUTOR'"
        "  AND r.registry_key = $2)"
        " WHERE address_type = 0 AND app_name = $2",
    [XXL_SQL_GROUPS_REFRESH] =
        "UPDATE xxl_job_group SET update_time = $1, address_list ="
        " (SELECT string_agg (registry_value, ',' ORDER BY registry_value COLLATE \"C\")"
        "  FROM xxl_job_registry r WHERE r.registry_group = 'EXECUTOR'"
        "  AND r.registry_key = xxl_job_group.app_name)"
        " WHERE address_type = 0",
    [XXL_SQL_LOG_LOST_IDS] =
        "SELECT l.id FROM xxl_job_log l LEFT JOIN xxl_job_registry r"
        " ON r.registry_value = l.executor_address"
        " WHERE l.trigger_code = 200 AND l.handle_code = 0 AND l.trigger_time <= $1"
        " AND r.id IS NULL ORDER BY l.id LIMIT $2",
    [XXL_SQL_RECOVER_LATE_JOBS] =
        "SELECT job_id FROM xxl_job_log WHERE" XXL_UNSENT_SQL
        " AND schedule_time < $1 GROUP BY job_id ORDER BY job_id LIMIT $2",
    [XXL_SQL_LOG_UNSENT_IN] =
        "SELECT id FROM xxl_job_log WHERE trigger_code = 0 AND id > $2"
        " AND" XXL_IN_MASK ("job_id") "ORDER BY id LIMIT $3",
    [XXL_SQL_RECOVER_STAMP_DUE_IN] =
        "UPDATE xxl_job_log SET trigger_time = schedule_time WHERE trigger_code = 0"
        " AND executor_address IS NOT NULL AND schedule_time > trigger_time"
        " AND schedule_time <= $2 AND" XXL_IN_MASK ("job_id"),
    [XXL_SQL_AUDIT_DELETE] =
        "DELETE FROM xxl_audit WHERE id IN (SELECT id FROM xxl_audit"
        " WHERE time < $1 ORDER BY time" XXL_LIMIT ("$2") ")",
    [XXL_SQL_AUDIT_ENCODE_PAGE] =
        "SELECT id, time, who, role, type, target, code FROM xxl_audit"
        " WHERE id < $1 ORDER BY id DESC" XXL_LIMIT ("$2"),
    [XXL_SQL_GLUE_ENCODE_PAGE] =
        XXL_GLUE_SELECT " FROM xxl_job_logglue WHERE job_id = $1 ORDER BY version DESC"
        XXL_LIMIT ("$2") XXL_OFFSET ("$3"),
    [XXL_SQL_JOB_DELAY_RESUME] =
        "UPDATE xxl_job_info SET trigger_next_time = $1 + " XXL_INT_PREFIX ("schedule_conf")
        " * 1000 WHERE id = (SELECT job_id FROM xxl_job_log WHERE id = $2"
        " AND schedule_time IS NOT NULL)"
        " AND schedule_type = 'FIX_DELAY' AND trigger_status = 1 AND trigger_next_time = $3",
    [XXL_SQL_LOG_ID_AT_RANK] =
        "SELECT id FROM xxl_job_log WHERE $1 = 0 ORDER BY id DESC LIMIT 1" XXL_OFFSET ("$2"),
    [XXL_SQL_LOG_ID_AT_RANK_JOB] =
        "SELECT id FROM xxl_job_log WHERE job_id = $1 ORDER BY id DESC LIMIT 1"
        XXL_OFFSET ("$2"),
    [XXL_SQL_RECOVER_STAMP_FIRED_IN] =
        "UPDATE xxl_job_log SET trigger_time = schedule_time WHERE trigger_code = 0"
        " AND executor_address IS NOT NULL AND schedule_time > trigger_time"
        " AND" XXL_IN_MASK ("job_id") "AND schedule_time <= (SELECT fired_sent FROM xxl_lease"
        "     WHERE share = xxl_job_log.job_id % 16)",
    [XXL_SQL_RECOVER_LATE_JOBS_IN] =
        "SELECT job_id FROM xxl_job_log WHERE" XXL_UNSENT_SQL
        " AND schedule_time < $2 AND" XXL_IN_MASK ("job_id") "GROUP BY job_id ORDER BY job_id"
        " LIMIT $3",
    [XXL_SQL_LOG_TRIGGER_END] =
        "UPDATE xxl_job_log SET trigger_code = $1, trigger_msg = "
        XXL_CUT_TAIL ("COALESCE (trigger_msg, '')", "$2")
        " || $3, trigger_time = CASE WHEN $4 > 0 THEN $5 ELSE trigger_time END WHERE id = $6"
        " AND (CAST ($7 AS TEXT) IS NULL OR ((trigger_code = 0 OR ($1 = 200 AND trigger_code = 200))"
        " AND right (trigger_msg, length (CAST ($7 AS TEXT))) = CAST ($7 AS TEXT)))",
    [XXL_SQL_LOG_OPEN_IDS_AT] =
        "SELECT id FROM xxl_job_log"
        " WHERE trigger_code = 200 AND handle_code = 0 AND executor_address = $1"
        " AND id > $2 ORDER BY id LIMIT $3",
    [XXL_SQL_LOG_INSERT_TRIGGER_MSG] =
        "UPDATE xxl_job_log SET trigger_msg = "
        XXL_CUT_TAIL ("COALESCE (trigger_msg, '')", "$1") " || $2 || substr (COALESCE"
        " (trigger_msg, ''), CAST (LEAST (GREATEST (length (COALESCE (trigger_msg, '')) - $1,"
        " 0), 2147483647) AS INTEGER) + 1) WHERE id = $3",
    [XXL_SQL_LOG_OPEN_IDS_ALL] =
        "SELECT COALESCE (string_agg (trigger_time || ':' || id || ':'"
        " || encode (convert_to (address, 'UTF8'), 'hex'), ' ' ORDER BY trigger_time, id), '')"
        " FROM (SELECT * FROM (SELECT trigger_time, id, COALESCE (executor_address, '')"
        " AS address FROM xxl_job_log WHERE trigger_code = 200 AND handle_code = 0"
        " AND trigger_time = $1 AND id > $2 ORDER BY id LIMIT $3) t UNION ALL"
        " SELECT * FROM (SELECT trigger_time, id, COALESCE (executor_address, '') AS address"
        " FROM xxl_job_log WHERE trigger_code = 200 AND handle_code = 0 AND trigger_time > $1"
        " ORDER BY trigger_time, id LIMIT $3) l ORDER BY trigger_time, id LIMIT $3) o",
    [XXL_SQL_NODE_BEAT] =
        "INSERT INTO xxl_node (name, beat) VALUES ($1, $2)"
        " ON CONFLICT (name) DO UPDATE SET beat = GREATEST (xxl_node.beat, EXCLUDED.beat)",
    //  (each value once, in the order of its oldest row by update_time, then
    //  id: SQLite's, whose DISTINCT keeps the first row its scan of the
    //  update_time index meets)
    [XXL_SQL_REGISTRY_ALIVE] =
        "SELECT string_agg (registry_value, ',' ORDER BY update_time, id)"
        " FROM (SELECT DISTINCT ON (registry_value) registry_value, update_time, id"
        " FROM xxl_job_registry WHERE update_time >"
        " (SELECT MAX (update_time) FROM xxl_job_registry) - $1"
        " ORDER BY registry_value, update_time, id) alive",
    [XXL_SQL_JOB_COUNT] =
        "SELECT COUNT(*) FROM xxl_job_info" XXL_JOB_FILTER,
    [XXL_SQL_JOB_ENCODE] =
        XXL_JOB_SELECT " WHERE id = $1",
    [XXL_SQL_JOB_ENCODE_PAGE] =
        XXL_JOB_SELECT XXL_JOB_FILTER " ORDER BY id" XXL_LIMIT ("$2") XXL_OFFSET ("$3"),
    [XXL_SQL_LOG_DELETE] =
        "DELETE FROM xxl_job_log WHERE id IN (SELECT id FROM xxl_job_log"
        " WHERE $1 = 0 AND trigger_time < $2 AND id < $3"
        " AND NOT (trigger_code IN (0, 200) AND handle_code = 0)" XXL_NOT_IN_RUNNING_FLOW
        " ORDER BY id" XXL_LIMIT ("$4") ")",
    [XXL_SQL_REPORT_ENCODE_DAYS] =
        "SELECT trigger_day AS \"triggerDay\", running_count AS \"runningCount\","
        " suc_count AS \"sucCount\", fail_count AS \"failCount\", update_time AS \"updateTime\""
        " FROM xxl_job_log_report ORDER BY trigger_day DESC" XXL_LIMIT ("$1"),
    [XXL_SQL_LOG_ENCODE] =
        XXL_LOG_COLUMNS " trigger_time AS \"triggerTime\","
        " trigger_code AS \"triggerCode\", trigger_msg AS \"triggerMsg\","
        " trigger_type AS \"triggerType\", schedule_time AS \"scheduleTime\","
        " handle_time AS \"handleTime\", handle_code AS \"handleCode\","
        " handle_msg AS \"handleMsg\", alarm_status AS \"alarmStatus\", flow_run_id AS \"flowRunId\", flow_node AS \"flowNode\""
        " FROM xxl_job_log WHERE id = $1",
    [XXL_SQL_REGISTRY_APPS] =
        "SELECT string_agg (registry_key, ',' ORDER BY update_time, id)"
        " FROM (SELECT DISTINCT ON (registry_key) registry_key, update_time, id"
        " FROM xxl_job_registry WHERE registry_value = $1 AND update_time >= $2"
        " ORDER BY registry_key, update_time, id) apps",
    //  (FOR UPDATE: schedulers advancing one run take turns, whatever
    //  other lock their transactions hold)
    [XXL_SQL_WORKFLOW_RUN_LOAD] =
        "SELECT id, workflow_id, status, param, definition, killed, trigger_type,"
        " trigger_time, end_time FROM xxl_workflow_run WHERE id = $1 FOR UPDATE",
    //  (a job's rows with no result: the unsent and running partial indexes)
    [XXL_SQL_LOG_SLOT_ADMITTED] =
        "SELECT id FROM xxl_job_log WHERE slot = 1 AND handle_code = 0 AND job_id = $1"
        " AND trigger_code IN (0, 200) AND executor_address IS NOT NULL ORDER BY id LIMIT $2",
    [XXL_SQL_LOG_SLOT_WAITING] =
        "SELECT id FROM xxl_job_log WHERE slot = 1 AND handle_code = 0 AND job_id = $1"
        " AND trigger_code = 0 AND executor_address IS NULL"
        " AND CASE WHEN schedule_time > 0 THEN schedule_time <= $2"
        "     WHEN trigger_type = 'RETRY' THEN trigger_time <= $2 ELSE TRUE END"
        " ORDER BY CASE WHEN schedule_time > 0 THEN schedule_time ELSE trigger_time END, id"
        " LIMIT $3",
    [XXL_SQL_LOG_SLOT_MARK] =
        "UPDATE xxl_job_log SET slot = 1 WHERE id IN (SELECT id FROM xxl_job_log"
        " WHERE trigger_code = 0 AND job_id = $1 UNION ALL SELECT id FROM xxl_job_log"
        " WHERE trigger_code = 200 AND handle_code = 0 AND job_id = $1)"
        " AND slot = 0 AND handle_code = 0",
    [XXL_SQL_RECOVER_LATE_LAST] =
        "SELECT COALESCE ((SELECT id FROM xxl_job_log WHERE job_id = $1 AND" XXL_UNSENT_SQL
        " AND schedule_time < $2 ORDER BY id DESC LIMIT 1), 0)",
    [XXL_SQL_RECOVER_DROP_LATE] =
        "DELETE FROM xxl_job_log WHERE job_id = $1 AND" XXL_UNSENT_SQL
        " AND schedule_time < $2 AND id != $3",
    [XXL_SQL_LOG_CLAIMED_IDS] =
        "SELECT id FROM xxl_job_log WHERE id > $1"
        " AND (trigger_code NOT IN (0, 200) OR handle_code NOT IN (0, 200))"
        " AND alarm_status = -1 ORDER BY id LIMIT $2",
    [XXL_SQL_JOB_DROP_PLANS] =
        "DELETE FROM xxl_job_log WHERE job_id = $1 AND trigger_code = 0"
        " AND schedule_time IS NOT NULL AND COALESCE (trigger_type, '') != 'BACKFILL'"
        " AND (executor_address IS NULL OR schedule_time > $2)",
    //  (a step of the wall clock: rare, a walk of the jobs)
    [XXL_SQL_JOB_DELAY_SHIFT] =
        "UPDATE xxl_job_info SET trigger_next_time = GREATEST (1, LEAST ($3 - 1, trigger_next_time + $2))"
        " WHERE" XXL_IN_MASK ("id") "AND schedule_type = 'FIX_DELAY' AND trigger_status = 1"
        " AND trigger_next_time > 0 AND trigger_next_time < $3",
    [XXL_SQL_LOG_LIST_JOB] =
        XXL_LOG_LIST_SELECT " WHERE job_id = $1 AND" XXL_LOG_FILTER,
    [XXL_SQL_JOB_RM_LOGS] =
        "DELETE FROM xxl_job_log WHERE job_id = $1",
    [XXL_SQL_JOB_RM_LOGS_SOME] =
        "DELETE FROM xxl_job_log WHERE id IN (SELECT id"
        " FROM xxl_job_log WHERE job_id = $1 ORDER BY id LIMIT $2)",
    [XXL_SQL_LOG_DELETE_JOB] =
        "DELETE FROM xxl_job_log WHERE id IN (SELECT id FROM xxl_job_log"
        " WHERE job_id = $1 AND trigger_time < $2 AND id < $3"
        " AND NOT (trigger_code IN (0, 200) AND handle_code = 0)" XXL_NOT_IN_RUNNING_FLOW
        " ORDER BY id" XXL_LIMIT ("$4") ")",
    //  (a scalar subquery, never made a join: each instant is one probe of
    //  the planned instants' index whatever plan a prepared statement gets,
    //  not a hash of the job's whole log)
    [XXL_SQL_BACKFILL_MADE_TIMES] =
        "SELECT t FROM unnest (CAST ('{' || $2 || '}' AS BIGINT[])) AS u (t)"
        " WHERE (SELECT 1 FROM xxl_job_log WHERE schedule_time = t AND job_id = $1 LIMIT 1)"
        " = 1 ORDER BY t",
};

//  Workflows and their runs (version 12): the adds, RETURNING their new
//  id; the rest are shared (sql/xxl_store_sql_flows.c)
int64_t
pgx_workflow_add (xxl_store_t *base, const xxl_workflow_t *w)
{
    PGresult *result = pgx_run ((store_t *) base, PGX_WRITE,
        "INSERT INTO xxl_workflow (name, description, definition, schedule_type, schedule_conf,"
        " timezone, misfire_strategy, status, next_time, add_time, update_time, calendar)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id",
        "sssssssiiiis",
        w->name, w->description? w->description: "", w->definition,
        w->schedule_type? w->schedule_type: "NONE", w->schedule_conf? w->schedule_conf: "",
        w->timezone? w->timezone: "", w->misfire_strategy? w->misfire_strategy: "DO_NOTHING",
        w->status, w->next_time, w->add_time, w->update_time, w->calendar? w->calendar: "");
    if (!result)
        return -1;
    int64_t id = PQntuples (result) == 1? pgx_int (result, 0, 0): -1;
    PQclear (result);
    return id;
}

int64_t
pgx_workflow_run_add (xxl_store_t *base, const xxl_workflow_run_t *run)
{
    PGresult *result = pgx_run ((store_t *) base, PGX_WRITE,
        "INSERT INTO xxl_workflow_run (workflow_id, status, param, trigger_type, trigger_time,"
        " end_time, definition, killed) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
        "isssiiss", run->workflow_id, run->status, run->param? run->param: "",
        run->trigger_type? run->trigger_type: "MANUAL", run->trigger_time, run->end_time,
        run->definition, run->killed? run->killed: "");
    if (!result)
        return -1;
    int64_t id = PQntuples (result) == 1? pgx_int (result, 0, 0): -1;
    PQclear (result);
    return id;
}
