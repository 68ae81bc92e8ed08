/*  xxl_store_sql_logs.c -- the store's shared SQL for the log rows and
    the fired marks.

    Owns: the bodies of the log_*, fired_* and recover_* slots: finishing,
    routing, stamping and recovering runs, their id scans, log_load.
    MUST: a run is finished once (the handle_done bodies update only a
    row whose handle_code is 0); "unsent" is XXL_UNSENT_SQL everywhere.
    MUST / MUST NOT / errors: the body files' contract, stated once in
    xxl_store_sql_int.h (calls only xxl_store_sql.c, below it).
*/

#include "xxl_store_sql.h"
#include "xxl_store_sql_int.h"

#include <assert.h>
#include <czmq.h>
#include <stdlib.h>
#include <string.h>

int
xs_log_alarm_claim (xxl_store_t *base, int64_t log_id)
{
    return xsql_exec (base,
        "UPDATE xxl_job_log SET alarm_status = -1 WHERE id = $1 AND alarm_status = 0",
        "i", log_id);
}

int
xs_log_append_handle_msg (xxl_store_t *base, int64_t log_id, const char *text)
{
    return xsql_exec (base,
        "UPDATE xxl_job_log SET handle_msg = COALESCE (handle_msg, '') || $1 WHERE id = $2",
        "si", text, log_id);
}

int
xs_log_append_trigger_msg (xxl_store_t *base, int64_t log_id, const char *text)
{
    return xsql_exec (base,
        "UPDATE xxl_job_log SET trigger_msg = COALESCE (trigger_msg, '') || $1 WHERE id = $2",
        "si", text, log_id);
}

int
xs_log_insert_trigger_msg (xxl_store_t *base, int64_t log_id, int64_t before, const char *text)
{
    assert (before >= 0);
    return xsql_exec (base, xsql_sql (base, XXL_SQL_LOG_INSERT_TRIGGER_MSG), "isi", before, text,
                      log_id);
}

int
xs_log_claimed_ids (xxl_store_t *base, int64_t after, int64_t *ids, size_t max, size_t *count)
{
    return xsql_id_list (base, ids, max, count, xsql_sql (base, XXL_SQL_LOG_CLAIMED_IDS), "ii",
                         after, (int64_t) max);
}

int
xs_log_clear_address (xxl_store_t *base, int64_t log_id)
{
    return xsql_exec (base,
        "UPDATE xxl_job_log SET executor_address = NULL WHERE id = $1", "i", log_id);
}

int
xs_log_drop_unsent (xxl_store_t *base, int64_t log_id)
{
    return xsql_exec (base,
        "DELETE FROM xxl_job_log WHERE id = $1 AND trigger_code = 0", "i", log_id);
}

int
xs_log_fail_unsent (xxl_store_t *base, int64_t log_id, int code, const char *why)
{
    return xsql_exec (base, "UPDATE xxl_job_log SET trigger_code = $1,"
                   " trigger_msg = COALESCE (trigger_msg, '') || $2 WHERE id = $3"
                   " AND trigger_code = 0 AND handle_code = 0", "isi",
                   (int64_t) code, why, log_id);
}

int
xs_log_failed_ids (xxl_store_t *base, int64_t *ids, size_t max, size_t *count)
{
    return xsql_id_list (base,
        ids, max, count, "SELECT id FROM xxl_job_log WHERE alarm_status = 0"
        " AND (trigger_code NOT IN (0, 200) OR handle_code NOT IN (0, 200))"
        " ORDER BY id LIMIT $1", "i", (int64_t) max);
}

char *
xs_log_job_children (xxl_store_t *base, int64_t log_id)
{
    return xsql_text (base,
        "SELECT child_jobid FROM xxl_job_info"
        " WHERE id = (SELECT job_id FROM xxl_job_log WHERE id = $1)", "i", log_id);
}

int64_t
xs_log_job_id (xxl_store_t *base, int64_t log_id)
{
    return xsql_scalar (base, "SELECT job_id FROM xxl_job_log WHERE id = $1",
                     "i", log_id);
}

int
xs_log_lost_ids_after (xxl_store_t *base, int64_t before, int64_t after, int64_t *ids,
                       size_t max, size_t *count)
{
    return xsql_id_list (base,
        ids, max, count, "SELECT l.id FROM xxl_job_log l LEFT JOIN xxl_job_registry r"
        " ON r.registry_value = l.executor_address"
        " WHERE l.trigger_code = 200 AND l.handle_code = 0 AND l.trigger_time <= $1"
        " AND l.id > $2 AND r.id IS NULL ORDER BY l.id LIMIT $3", "iii", before, after,
        (int64_t) max);
}

//  (each dialect reads xxl_job_log_slots: the rows with no result of the
//  jobs with a limit, by job; never the job's whole history)
int
xs_log_slot_ids (xxl_store_t *base, int64_t job_id, int running, int64_t before, int64_t *ids,
                 size_t max, size_t *count)
{
    if (running)
        return xsql_id_list (base, ids, max, count, xsql_sql (base, XXL_SQL_LOG_SLOT_ADMITTED),
                             "ii", job_id, (int64_t) max);
    return xsql_id_list (base, ids, max, count, xsql_sql (base, XXL_SQL_LOG_SLOT_WAITING),
                         "iii", job_id, before, (int64_t) max);
}

int
xs_job_slot_ids (xxl_store_t *base, int64_t after, int64_t *ids, size_t max, size_t *count)
{
    return xsql_id_list (base, ids, max, count,
        "SELECT id FROM xxl_job_info WHERE max_running > 0 AND id > $1 ORDER BY id LIMIT $2",
        "ii", after, (int64_t) max);
}

int
xs_log_plan_route (xxl_store_t *base, int64_t log_id, const char *address, const char *section)
{
    return xsql_exec (base,
        "UPDATE xxl_job_log SET executor_address = $1,"
        " trigger_msg = COALESCE (trigger_msg, '') || $2 WHERE id = $3"
        " AND trigger_code = 0 AND executor_address IS NULL", "ssi",
        address, section, log_id);
}

int64_t
xs_log_plan_time (xxl_store_t *base, int64_t log_id)
{
    return xsql_scalar (base, "SELECT schedule_time FROM xxl_job_log"
                     " WHERE id = $1 AND trigger_code = 0 AND executor_address IS NULL",
                     "i", log_id);
}

int
xs_log_retime (xxl_store_t *base, int64_t log_id, int64_t trigger_time)
{
    return xsql_exec (base, "UPDATE xxl_job_log SET trigger_time = $1 WHERE id = $2",
                   "ii", trigger_time, log_id);
}

int
xs_log_set_alarm (xxl_store_t *base, int64_t log_id, int status, const char *report)
{
    return xsql_exec (base,
        "UPDATE xxl_job_log SET alarm_status = $1,"
        " handle_msg = CASE WHEN $2 IS NULL THEN handle_msg"
        "   ELSE COALESCE (handle_msg, '') || '\n>>>>>>>>>>> Alarm <<<<<<<<<<<\n' || $3 END"
        " WHERE id = $4", "issi", (int64_t) status, report, report, log_id);
}

int
xs_log_stamp (xxl_store_t *base, int64_t log_id, int64_t stamp)
{
    return xsql_exec (base,
        "UPDATE xxl_job_log SET trigger_time = $1 WHERE id = $2 AND trigger_code = 0",
        "ii", stamp, log_id);
}

int
xs_log_trigger_done (xxl_store_t *base, int64_t log_id, int code,
                     const char *address, const char *append)
{
    return xsql_exec (base,
        "UPDATE xxl_job_log SET trigger_code = $1,"
        " executor_address = COALESCE ($2, executor_address),"
        " trigger_msg = COALESCE (trigger_msg, '') || $3 WHERE id = $4"
        " AND trigger_code = 0 AND handle_code = 0"
        " AND COALESCE (executor_address, '') IN ('', COALESCE ($2, ''))", "issi",
        (int64_t) code, address, append? append: "", log_id);
}

int
xs_log_unanswered_ids (xxl_store_t *base, int64_t before, int64_t *ids, size_t max,
                       size_t *count)
{
    return xsql_id_list (base,
        ids, max, count, "SELECT id FROM xxl_job_log WHERE trigger_code = 0 AND handle_code = 0"
        " AND trigger_time < $1 ORDER BY id LIMIT $2", "ii", before, (int64_t) max);
}

int
xs_log_unsent_ids (xxl_store_t *base, int64_t after, int64_t *ids, size_t max, size_t *count)
{
    return xsql_id_list (base,
        ids, max, count, "SELECT id FROM xxl_job_log WHERE trigger_code = 0 AND id > $1"
        " ORDER BY id LIMIT $2", "ii", after, (int64_t) max);
}

int
xs_recover_misfire (xxl_store_t *base, int64_t log_id)
{
    return xsql_exec (base,
        "UPDATE xxl_job_log SET trigger_type = 'MISFIRE' WHERE id = $1", "i", log_id);
}

int
xs_recover_stamp_due (xxl_store_t *base, int64_t now)
{
    return xsql_exec (base,
        "UPDATE xxl_job_log SET trigger_time = schedule_time WHERE trigger_code = 0"
        " AND executor_address IS NOT NULL AND schedule_time > trigger_time"
        " AND schedule_time <= $1", "i", now);
}

int
xs_log_set_trigger_msg (xxl_store_t *base, int64_t log_id, const char *text)
{
    return xsql_exec (base,
        "UPDATE xxl_job_log SET trigger_msg = $1 WHERE id = $2", "si", text, log_id);
}

int
xs_log_accept (xxl_store_t *base, int64_t log_id, int64_t stamp)
{
    xxl_store_t *self = base;
    if (stamp)
        return xsql_exec (self, "UPDATE xxl_job_log SET trigger_code = 200,"
                       " trigger_time = $1 WHERE id = $2 AND trigger_code = 0", "ii",
                       stamp, log_id);
    return xsql_exec (self, "UPDATE xxl_job_log SET trigger_code = 200"
                   " WHERE id = $1 AND trigger_code = 0", "i", log_id);
}

int
xs_log_route (xxl_store_t *base, int64_t log_id, int64_t stamp, const char *address,
              const char *section)
{
    xxl_store_t *self = base;
    if (stamp)
        return xsql_exec (self,
            "UPDATE xxl_job_log SET trigger_time = $1, executor_address = $2,"
            " trigger_msg = COALESCE (trigger_msg, '') || $3 WHERE id = $4 AND trigger_code = 0"
            " AND COALESCE (executor_address, '') IN ('', $2)",
            "issi", stamp, address, section, log_id);
    return xsql_exec (self,
        "UPDATE xxl_job_log SET executor_address = $1,"
        " trigger_msg = COALESCE (trigger_msg, '') || $2 WHERE id = $3"
        " AND trigger_code IN (0, 200) AND handle_code = 0"
        " AND COALESCE (executor_address, '') IN ('', $1)",
        "ssi", address, section, log_id);
}

//  Finishes a row once; an unsent one becomes accepted, with trigger time
//  trigger_time unless it is 0.  A row whose trigger failed is never
//  finished (its handle_code stays 0).  address: only a row sent there
//  (NULL: any).  With no trigger time to write, the statement does not
//  name trigger_time: SQLite rewrites the entries of every index on a
//  column an UPDATE sets, even to the value it had (xxl_job_log_time)
static int
s_log_handle_done (xxl_store_t *self, int64_t log_id, const char *address, int64_t handle_time,
                   int code, const char *msg, int64_t trigger_time)
{
#define S_DONE_SET \
    "UPDATE xxl_job_log SET handle_time = $1, handle_code = $2, handle_msg = $3,"
#define S_DONE_STAMP \
    " trigger_time = CASE WHEN trigger_code = 0 THEN $4 ELSE trigger_time END,"
#define S_DONE_CODE(id) \
    " trigger_code = CASE trigger_code WHEN 0 THEN 200 ELSE trigger_code END" \
    " WHERE id = " id " AND handle_code = 0 AND trigger_code IN (0, 200)"
    int changes = trigger_time
        ? xsql_exec (self, address
            ? S_DONE_SET S_DONE_STAMP S_DONE_CODE ("$5") " AND executor_address = $6"
            : S_DONE_SET S_DONE_STAMP S_DONE_CODE ("$5") " AND $6 IS NULL",
            "iisiis", handle_time, (int64_t) code, msg, trigger_time, log_id, address)
        : xsql_exec (self, address
            ? S_DONE_SET S_DONE_CODE ("$4") " AND executor_address = $5"
            : S_DONE_SET S_DONE_CODE ("$4") " AND $5 IS NULL",
            "iisis", handle_time, (int64_t) code, msg, log_id, address);
#undef S_DONE_SET
#undef S_DONE_STAMP
#undef S_DONE_CODE
    return changes < 0? -1: changes == 0? 1: 0;
}

int
xs_log_handle_done (xxl_store_t *base, int64_t log_id, int64_t handle_time,
                    int code, const char *msg)
{
    return s_log_handle_done (base, log_id, NULL, handle_time, code, msg, 0);
}

int
xs_log_handle_done_at (xxl_store_t *base, int64_t log_id, int64_t handle_time,
                       int code, const char *msg, int64_t trigger_time)
{
    return s_log_handle_done (base, log_id, NULL, handle_time, code, msg,
                              trigger_time);
}

int
xs_log_handle_done_by (xxl_store_t *base, int64_t log_id, const char *address,
                       int64_t handle_time, int code, const char *msg, int64_t trigger_time)
{
    assert (address);
    return s_log_handle_done (base, log_id, address, handle_time, code, msg,
                              trigger_time);
}

int
xs_recover_stamp_fired (xxl_store_t *base)
{
    return xsql_exec (base,
        "UPDATE xxl_job_log SET trigger_time = schedule_time WHERE trigger_code = 0"
        " AND executor_address IS NOT NULL AND schedule_time > trigger_time"
        " AND schedule_time <= (SELECT fired_sent FROM xxl_lease"
        "     WHERE share = xxl_job_log.job_id % 16)", NULL);
}

int
xs_recover_drop_late (xxl_store_t *base, int64_t job_id, int64_t before, int64_t keep)
{
    return xsql_exec (base, xsql_sql (base, XXL_SQL_RECOVER_DROP_LATE), "iii", job_id, before,
                      keep);
}

int64_t
xs_recover_late_last (xxl_store_t *base, int64_t job_id, int64_t before)
{
    return xsql_scalar (base, xsql_sql (base, XXL_SQL_RECOVER_LATE_LAST), "ii", job_id, before);
}

int
xs_fired_raise_until (xxl_store_t *base, int64_t until)
{
    return xsql_exec (base, xsql_sql (base, XXL_SQL_FIRED_RAISE_UNTIL), "i", until);
}

int
xs_fired_raise_sent (xxl_store_t *base, int64_t sent)
{
    return xsql_exec (base, xsql_sql (base, XXL_SQL_FIRED_RAISE_SENT), "i", sent);
}

int
xs_log_lost_ids (xxl_store_t *base, int64_t before, int64_t *ids, size_t max, size_t *count)
{
    return xsql_id_list (base,
        ids, max, count, xsql_sql (base, XXL_SQL_LOG_LOST_IDS), "ii", before, (int64_t) max);
}

int
xs_recover_late_jobs (xxl_store_t *base, int64_t before, int64_t *ids, size_t max,
                      size_t *count)
{
    return xsql_id_list (base,
        ids, max, count, xsql_sql (base, XXL_SQL_RECOVER_LATE_JOBS), "ii",
        before, (int64_t) max);
}

int
xs_log_unsent_in (xxl_store_t *base, uint64_t mask, int64_t after, int64_t *ids, size_t max,
                  size_t *count)
{
    return xsql_id_list (base,
        ids, max, count, xsql_sql (base, XXL_SQL_LOG_UNSENT_IN), "iii", (int64_t) mask, after,
        (int64_t) max);
}

int
xs_recover_stamp_due_in (xxl_store_t *base, uint64_t mask, int64_t now)
{
    return xsql_exec (base, xsql_sql (base, XXL_SQL_RECOVER_STAMP_DUE_IN), "ii", (int64_t) mask, now);
}

int64_t
xs_log_id_at_rank (xxl_store_t *base, int64_t job_id, int64_t rank)
{
    return xsql_scalar (base, xsql_sql (base, job_id? XXL_SQL_LOG_ID_AT_RANK_JOB
                                                     : XXL_SQL_LOG_ID_AT_RANK),
                        "ii", job_id, rank);
}

int
xs_recover_stamp_fired_in (xxl_store_t *base, uint64_t mask)
{
    return xsql_exec (base, xsql_sql (base, XXL_SQL_RECOVER_STAMP_FIRED_IN), "i", (int64_t) mask);
}

int
xs_recover_late_jobs_in (xxl_store_t *base, uint64_t mask, int64_t before, int64_t *ids,
                         size_t max, size_t *count)
{
    return xsql_id_list (base,
        ids, max, count, xsql_sql (base, XXL_SQL_RECOVER_LATE_JOBS_IN), "iii",
        (int64_t) mask, before, (int64_t) max);
}

int
xs_log_trigger_end (xxl_store_t *base, int64_t log_id, int code, int64_t presumed,
                    const char *text, int64_t stamp, const char *last)
{
    return xsql_exec (base, xsql_sql (base, XXL_SQL_LOG_TRIGGER_END),
        "iisiiis", (int64_t) code, presumed, text, stamp, stamp, log_id, last);
}

int
xs_log_open_ids_at (xxl_store_t *base, const char *address, int64_t after, int64_t *ids,
                    size_t max, size_t *count)
{
    return xsql_id_list (base,
        ids, max, count, xsql_sql (base, XXL_SQL_LOG_OPEN_IDS_AT), "sii",
        address, after, (int64_t) max);
}

//  One text, the page's "TIME:ID:HEX" items apart by spaces (HEX: the
//  address's bytes, either case); the cursor goes to the greatest
static int
s_hex_digit (char c)
{
    return c >= '0' && c <= '9'? c - '0': c >= 'a' && c <= 'f'? c - 'a' + 10
         : c >= 'A' && c <= 'F'? c - 'A' + 10: -1;
}

int
xs_log_open_ids_all (xxl_store_t *base, int64_t cursor [2], int64_t *ids, char **addresses,
                     size_t max, size_t *count)
{
    *count = 0;
    char *text = xsql_text (base, xsql_sql (base, XXL_SQL_LOG_OPEN_IDS_ALL), "iii", cursor [0],
                            cursor [1], (int64_t) max);
    if (!text)
        return -1;                      //  (the aggregate always gives a row)
    size_t found = 0;
    int64_t last [2] = { cursor [0], cursor [1] };
    bool bad = false;
    for (char *at = text; *at && !bad; ) {
        char *end;
        long long time = strtoll (at, &end, 10);
        long long id = *end == ':'? strtoll (end + 1, &end, 10): 0;
        const char *hex = end + 1;
        size_t digits = *end == ':'? strcspn (hex, " "): 0;
        if (*end != ':' || digits % 2 || found == max) {
            bad = true;
            break;
        }
        char *address = (char *) malloc (digits / 2 + 1);
        assert (address);
        for (size_t i = 0; i < digits / 2; i++) {
            int high = s_hex_digit (hex [2 * i]), low = s_hex_digit (hex [2 * i + 1]);
            if (high < 0 || low < 0)
                bad = true;
            address [i] = (char) (high << 4 | (low & 15));
        }
        address [digits / 2] = 0;
        ids [found] = id;
        addresses [found++] = address;
        if (time > last [0] || (time == last [0] && id > last [1])) {
            last [0] = time;
            last [1] = id;
        }
        at = (char *) hex + digits;
        while (*at == ' ')
            at++;
    }
    free (text);
    if (bad) {
        for (size_t i = 0; i < found; i++)
            free (addresses [i]);
        xsql_driver (base)->set_error (base, "log_open_ids_all: an unreadable page");
        return -1;
    }
    cursor [0] = last [0];
    cursor [1] = last [1];
    *count = found;
    return 0;
}

int64_t
xs_log_delete (xxl_store_t *base, int64_t job_id, int64_t before, int64_t below, int64_t limit)
{
    return xsql_exec (base, xsql_sql (base, job_id? XXL_SQL_LOG_DELETE_JOB: XXL_SQL_LOG_DELETE),
                      "iiii", job_id, before, below, limit);
}

int
xs_log_encode (xxl_store_t *base, xxl_enc_t *enc, int64_t id)
{
    return xsql_encode (base, enc, 0, xsql_sql (base, XXL_SQL_LOG_ENCODE), "i", id);
}

static void
s_log_read (const xxl_store_driver_t *driver, const xxl_store_row_t *row, void *arg)
{
    xxl_log_t *log = (xxl_log_t *) arg;
    int c = 0;
    log->id = driver->column_int (row, c++);
    log->job_group = driver->column_int (row, c++);
    log->job_id = driver->column_int (row, c++);
    log->executor_address = driver->column_text (row, c++);
    log->executor_handler = driver->column_text (row, c++);
    log->executor_param = driver->column_text (row, c++);
    log->executor_sharding_param = driver->column_text (row, c++);
    log->executor_fail_retry_count = driver->column_int (row, c++);
    log->trigger_time = driver->column_int (row, c++);
    log->trigger_code = driver->column_int (row, c++);
    log->trigger_msg = driver->column_text (row, c++);
    log->trigger_type = driver->column_text (row, c++);
    log->schedule_time = driver->column_int (row, c++);
    log->handle_time = driver->column_int (row, c++);
    log->handle_code = driver->column_int (row, c++);
    log->handle_msg = driver->column_text (row, c++);
}

int
xs_log_load (xxl_store_t *base, int64_t id, xxl_log_t *log)
{
    memset (log, 0, sizeof *log);
    int rows = xsql_row (base, "log query", s_log_read, log,
        "SELECT id, job_group, job_id, executor_address, executor_handler, executor_param,"
        " executor_sharding_param, executor_fail_retry_count, trigger_time, trigger_code,"
        " trigger_msg, trigger_type, schedule_time, handle_time, handle_code, handle_msg"
        " FROM xxl_job_log WHERE id = $1", "i", id);
    return rows < 0? -1: rows == 0;
}
