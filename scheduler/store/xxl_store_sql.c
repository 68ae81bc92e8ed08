/*  xxl_store_sql.c -- the store's SQL, once: the method bodies both
    backends share, written over the driver (xxl_store_sql.h).

    Owns: the text of every statement below and what its method makes of
    the result.  It owns no connection, no statement cache and no
    transaction: each call goes to the handle's driver, which prepares the
    statement once per connection (cached by the address of its text, as
    the backends' own statements are), binds, runs and reports errors.

    MUST: every statement here means the same on every backend: standard
    SQL that SQLite and PostgreSQL both read the same way ($N placeholders,
    quoted aliases keep their case, COALESCE, CASE, EXISTS, ON CONFLICT DO
    UPDATE/NOTHING with excluded).  A statement whose text would differ
    stays with its backend (the list at the end of this file).
    MUST: a write goes through s_exec (PostgreSQL runs a write outside a
    transaction in one of its own, and marks one inside as writing), a
    read through the readers.
    MUST NOT: run more statements than the backend's own body did, or add
    a transaction: the bodies are the backends' former ones, statement for
    statement.

    Errors: as the driver's calls return them (-1, NULL), with the reason
    in the handle's error(); each method returns what its slot in
    xxl_store.h says.
*/

#include "xxl_store_sql.h"

#include <assert.h>
#include <czmq.h>
#include <stdlib.h>
#include <string.h>

static const xxl_store_driver_t *
s_driver (xxl_store_t *self)
{
    const xxl_store_driver_t *driver = ((xxl_store_sql_t *) self)->driver;
    assert (driver && driver->version == XXL_STORE_DRIVER_VERSION);
    return driver;
}

static int
s_statements_ok (const char *const *sql)
{
    if (!sql)
        return 0;
    for (int statement = 0; statement < XXL_SQL_STATEMENTS; statement++)
        if (!sql [statement])
            return 0;
    return 1;
}

int
xxl_store_driver_ok (const xxl_store_driver_t *driver)
{
    return driver && driver->version == XXL_STORE_DRIVER_VERSION
        && driver->size == sizeof (xxl_store_driver_t) && driver->name
        && (driver->placeholder == '$' || driver->placeholder == '?')
        && driver->exec && driver->scalar && driver->text && driver->id_list
        && driver->encode && s_statements_ok (driver->sql) && driver->row
        && driver->column_int && driver->column_double && driver->column_text
        && driver->set_error;
}

char *
xxl_store_sql_question_marks (const char *sql, char *out, size_t size)
{
    assert (sql && out && size);
    size_t used = 0;
    char quote = 0;
    for (const char *s = sql; *s; s++) {
        char c = *s;
        if (quote) {
            if (c == quote)
                quote = 0;
        }
        else
        if (c == '\'' || c == '"')
            quote = c;
        else
        if (c == '$' && s [1] >= '0' && s [1] <= '9')
            c = '?';
        if (used + 1 >= size)
            return NULL;
        out [used++] = c;
    }
    out [used] = 0;
    return out;
}

//  The arguments of XXL_SQL_JOB_COUNT and XXL_SQL_JOB_ENCODE_PAGE ("iiisssi":
//  $1 group, $2 limit, $3 offset, $4 handler, $5 description, $6 author,
//  $7 status)
#define XXL_JOB_FILTER_ARGS(f) \
    (f)->group_id, (f)->limit, (f)->offset, (f)->handler, (f)->desc, (f)->author, (f)->status

//  The dialect's text of a statement
static const char *
s_sql (xxl_store_t *self, xxl_store_stmt_t statement)
{
    assert (statement >= 0 && statement < XXL_SQL_STATEMENTS);
    return s_driver (self)->sql [statement];
}

//  The driver's calls with the arguments in line

static int
s_exec (xxl_store_t *self, const char *sql, const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    int changes = s_driver (self)->exec (self, sql, fmt, args);
    va_end (args);
    return changes;
}

static int64_t
s_scalar (xxl_store_t *self, const char *sql, const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    int64_t value = s_driver (self)->scalar (self, sql, fmt, args);
    va_end (args);
    return value;
}

static char *
s_text (xxl_store_t *self, const char *sql, const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    char *value = s_driver (self)->text (self, sql, fmt, args);
    va_end (args);
    return value;
}

static int
s_id_list (xxl_store_t *self, int64_t *ids, size_t max, size_t *count, const char *sql,
           const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    int rc = s_driver (self)->id_list (self, ids, max, count, sql, fmt, args);
    va_end (args);
    return rc;
}

static int
s_encode (xxl_store_t *self, xxl_enc_t *enc, int rows_as_array, const char *sql,
          const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    int rows = s_driver (self)->encode (self, enc, rows_as_array, 0, NULL, sql, fmt, args);
    va_end (args);
    return rows;
}

static int
s_encode_max (xxl_store_t *self, xxl_enc_t *enc, size_t max_size, int *truncated,
              const char *sql, const char *fmt, ...)
{
    assert (max_size && truncated);
    va_list args;
    va_start (args, fmt);
    int rows = s_driver (self)->encode (self, enc, 1, max_size, truncated, sql, fmt, args);
    va_end (args);
    return rows;
}

//  --------------------------------------------------------------------
//  The shared methods, in the order of their first conversion

int64_t
xs_glue_count (xxl_store_t *base, int64_t job_id)
{
    return s_scalar (base,
        "SELECT COUNT(*) FROM xxl_job_logglue WHERE job_id = $1", "i", job_id);
}

int
xs_glue_exists (xxl_store_t *base, int64_t job_id, int64_t version)
{
    int64_t count = s_scalar (base, "SELECT COUNT(*) FROM xxl_job_logglue"
                              " WHERE job_id = $1 AND version = $2", "ii", job_id, version);
    return count < 0? -1: count > 0;
}

int64_t
xs_glue_last (xxl_store_t *base, int64_t job_id)
{
    return s_scalar (base,
        "SELECT COALESCE (MAX (version), 0) FROM xxl_job_logglue WHERE job_id = $1", "i", job_id);
}

int64_t
xs_group_jobs (xxl_store_t *base, int64_t id)
{
    return s_scalar (base, "SELECT COUNT(*) FROM xxl_job_info WHERE job_group = $1",
                     "i", id);
}

int
xs_group_rm (xxl_store_t *base, int64_t id)
{
    return s_exec (base, "DELETE FROM xxl_job_group WHERE id = $1", "i", id) < 0
           ? -1: 0;
}

char *
xs_job_children (xxl_store_t *base, int64_t id)
{
    return s_text (base, "SELECT child_jobid FROM xxl_job_info WHERE id = $1",
                   "i", id);
}

int
xs_job_drop_plans (xxl_store_t *base, int64_t job_id, int64_t now)
{
    return s_exec (base,
        "DELETE FROM xxl_job_log WHERE job_id = $1 AND trigger_code = 0"
        " AND schedule_time IS NOT NULL AND (executor_address IS NULL OR schedule_time > $2)",
        "ii", job_id, now);
}

int
xs_job_exists (xxl_store_t *base, int64_t id)
{
    int64_t count = s_scalar (base,
        "SELECT COUNT(*) FROM xxl_job_info WHERE id = $1", "i", id);
    return count < 0? -1: count > 0;
}

int
xs_job_halt (xxl_store_t *base, int64_t id, int64_t last)
{
    return s_exec (base,
        "UPDATE xxl_job_info SET trigger_status = 0, trigger_last_time = $1,"
        " trigger_next_time = 0 WHERE id = $2", "ii", last, id);
}

int
xs_job_marked_ids (xxl_store_t *base, int64_t mark, int64_t after, int64_t *ids, size_t max,
                   size_t *count)
{
    return s_id_list (base,
        ids, max, count, "SELECT id FROM xxl_job_info WHERE trigger_next_time = $1"
        " AND id > $2 ORDER BY id LIMIT $3", "iii", mark, after, (int64_t) max);
}

int64_t
xs_job_rm_logs (xxl_store_t *base, int64_t id)
{
    return s_exec (base, "DELETE FROM xxl_job_log WHERE job_id = $1", "i", id);
}

int64_t
xs_job_rm_logs_some (xxl_store_t *base, int64_t id, int64_t limit)
{
    return s_exec (base, "DELETE FROM xxl_job_log WHERE id IN (SELECT id"
                   " FROM xxl_job_log WHERE job_id = $1 ORDER BY id LIMIT $2)", "ii", id, limit);
}

int
xs_job_set_times (xxl_store_t *base, int64_t id, int64_t last, int64_t next)
{
    return s_exec (base,
        "UPDATE xxl_job_info SET trigger_last_time = $1, trigger_next_time = $2 WHERE id = $3",
        "iii", last, next, id);
}

int
xs_log_alarm_claim (xxl_store_t *base, int64_t log_id)
{
    return s_exec (base,
        "UPDATE xxl_job_log SET alarm_status = -1 WHERE id = $1 AND alarm_status = 0",
        "i", log_id);
}

int
xs_log_append_handle_msg (xxl_store_t *base, int64_t log_id, const char *text)
{
    return s_exec (base,
        "UPDATE xxl_job_log SET handle_msg = COALESCE (handle_msg, '') || $1 WHERE id = $2",
        "si", text, log_id);
}

int
xs_log_append_trigger_msg (xxl_store_t *base, int64_t log_id, const char *text)
{
    return s_exec (base,
        "UPDATE xxl_job_log SET trigger_msg = COALESCE (trigger_msg, '') || $1 WHERE id = $2",
        "si", text, log_id);
}

int
xs_log_claimed_ids (xxl_store_t *base, int64_t after, int64_t *ids, size_t max, size_t *count)
{
    return s_id_list (base,
        ids, max, count, "SELECT id FROM xxl_job_log WHERE alarm_status = -1 AND id > $1"
        " ORDER BY id LIMIT $2", "ii", after, (int64_t) max);
}

int
xs_log_clear_address (xxl_store_t *base, int64_t log_id)
{
    return s_exec (base,
        "UPDATE xxl_job_log SET executor_address = NULL WHERE id = $1", "i", log_id);
}

int
xs_log_drop_unsent (xxl_store_t *base, int64_t log_id)
{
    return s_exec (base,
        "DELETE FROM xxl_job_log WHERE id = $1 AND trigger_code = 0", "i", log_id);
}

int
xs_log_fail_unsent (xxl_store_t *base, int64_t log_id, int code, const char *why)
{
    return s_exec (base, "UPDATE xxl_job_log SET trigger_code = $1,"
                   " trigger_msg = COALESCE (trigger_msg, '') || $2 WHERE id = $3"
                   " AND trigger_code = 0 AND handle_code = 0", "isi",
                   (int64_t) code, why, log_id);
}

int
xs_log_failed_ids (xxl_store_t *base, int64_t *ids, size_t max, size_t *count)
{
    return s_id_list (base,
        ids, max, count, "SELECT id FROM xxl_job_log WHERE alarm_status = 0"
        " AND (trigger_code NOT IN (0, 200) OR handle_code NOT IN (0, 200))"
        " ORDER BY id LIMIT $1", "i", (int64_t) max);
}

char *
xs_log_job_children (xxl_store_t *base, int64_t log_id)
{
    return s_text (base,
        "SELECT child_jobid FROM xxl_job_info"
        " WHERE id = (SELECT job_id FROM xxl_job_log WHERE id = $1)", "i", log_id);
}

int64_t
xs_log_job_id (xxl_store_t *base, int64_t log_id)
{
    return s_scalar (base, "SELECT job_id FROM xxl_job_log WHERE id = $1",
                     "i", log_id);
}

int
xs_log_lost_ids_after (xxl_store_t *base, int64_t before, int64_t after, int64_t *ids,
                       size_t max, size_t *count)
{
    return s_id_list (base,
        ids, max, count, "SELECT l.id FROM xxl_job_log l LEFT JOIN xxl_job_registry r"
        " ON r.registry_value = l.executor_address"
        " WHERE l.trigger_code = 200 AND l.handle_code = 0 AND l.trigger_time <= $1"
        " AND l.id > $2 AND r.id IS NULL ORDER BY l.id LIMIT $3", "iii", before, after,
        (int64_t) max);
}

int
xs_log_plan_route (xxl_store_t *base, int64_t log_id, const char *address, const char *section)
{
    return s_exec (base,
        "UPDATE xxl_job_log SET executor_address = $1,"
        " trigger_msg = COALESCE (trigger_msg, '') || $2 WHERE id = $3"
        " AND trigger_code = 0 AND executor_address IS NULL", "ssi",
        address, section, log_id);
}

int64_t
xs_log_plan_time (xxl_store_t *base, int64_t log_id)
{
    return s_scalar (base, "SELECT schedule_time FROM xxl_job_log"
                     " WHERE id = $1 AND trigger_code = 0 AND executor_address IS NULL",
                     "i", log_id);
}

int
xs_log_retime (xxl_store_t *base, int64_t log_id, int64_t trigger_time)
{
    return s_exec (base, "UPDATE xxl_job_log SET trigger_time = $1 WHERE id = $2",
                   "ii", trigger_time, log_id);
}

int
xs_log_set_alarm (xxl_store_t *base, int64_t log_id, int status, const char *report)
{
    return s_exec (base,
        "UPDATE xxl_job_log SET alarm_status = $1,"
        " handle_msg = CASE WHEN $2 IS NULL THEN handle_msg"
        "   ELSE COALESCE (handle_msg, '') || '\n>>>>>>>>>>> Alarm <<<<<<<<<<<\n' || $3 END"
        " WHERE id = $4", "issi", (int64_t) status, report, report, log_id);
}

int
xs_log_stamp (xxl_store_t *base, int64_t log_id, int64_t stamp)
{
    return s_exec (base,
        "UPDATE xxl_job_log SET trigger_time = $1 WHERE id = $2 AND trigger_code = 0",
        "ii", stamp, log_id);
}

int
xs_log_trigger_done (xxl_store_t *base, int64_t log_id, int code,
                     const char *address, const char *append)
{
    return s_exec (base,
        "UPDATE xxl_job_log SET trigger_code = $1,"
        " executor_address = COALESCE ($2, executor_address),"
        " trigger_msg = COALESCE (trigger_msg, '') || $3 WHERE id = $4", "issi",
        (int64_t) code, address, append? append: "", log_id) < 0? -1: 0;
}

int
xs_log_unanswered_ids (xxl_store_t *base, int64_t before, int64_t *ids, size_t max,
                       size_t *count)
{
    return s_id_list (base,
        ids, max, count, "SELECT id FROM xxl_job_log WHERE trigger_code = 0 AND handle_code = 0"
        " AND trigger_time < $1 ORDER BY id LIMIT $2", "ii", before, (int64_t) max);
}

int
xs_log_unsent_ids (xxl_store_t *base, int64_t after, int64_t *ids, size_t max, size_t *count)
{
    return s_id_list (base,
        ids, max, count, "SELECT id FROM xxl_job_log WHERE trigger_code = 0 AND id > $1"
        " ORDER BY id LIMIT $2", "ii", after, (int64_t) max);
}

int
xs_recover_misfire (xxl_store_t *base, int64_t log_id)
{
    return s_exec (base,
        "UPDATE xxl_job_log SET trigger_type = 'MISFIRE' WHERE id = $1", "i", log_id);
}

int
xs_recover_stamp_due (xxl_store_t *base, int64_t now)
{
    return s_exec (base,
        "UPDATE xxl_job_log SET trigger_time = schedule_time WHERE trigger_code = 0"
        " AND executor_address IS NOT NULL AND schedule_time > trigger_time"
        " AND schedule_time <= $1", "i", now);
}

int
xs_registry_expire (xxl_store_t *base, int64_t dead_before)
{
    return s_exec (base, "DELETE FROM xxl_job_registry WHERE update_time < $1",
                   "i", dead_before);
}

int
xs_registry_remove (xxl_store_t *base, const char *app, const char *address)
{
    return s_exec (base,
        "DELETE FROM xxl_job_registry WHERE registry_group = 'EXECUTOR'"
        " AND registry_key = $1 AND registry_value = $2", "ss", app, address) < 0? -1: 0;
}

int
xs_report_refresh (xxl_store_t *base, int64_t from, int64_t to, int64_t now)
{
    return s_exec (base,
        "INSERT INTO xxl_job_log_report (trigger_day, running_count, suc_count, fail_count,"
        " update_time) SELECT $1,"
        " COALESCE (SUM (CASE WHEN trigger_code IN (0, 200) AND handle_code = 0 THEN 1 ELSE 0 END), 0),"
        " COALESCE (SUM (CASE WHEN handle_code = 200 THEN 1 ELSE 0 END), 0),"
        " COALESCE (SUM (CASE WHEN trigger_code NOT IN (0, 200) OR handle_code NOT IN (0, 200)"
        "   THEN 1 ELSE 0 END), 0), $3"
        " FROM xxl_job_log WHERE trigger_time >= $1 AND trigger_time < $2"
        " ON CONFLICT (trigger_day) DO UPDATE SET running_count = excluded.running_count,"
        " suc_count = excluded.suc_count, fail_count = excluded.fail_count,"
        " update_time = excluded.update_time", "iii", from, to, now);
}

int
xs_report_set (xxl_store_t *base, int64_t day, int64_t running, int64_t suc, int64_t fail,
               int64_t now)
{
    return s_exec (base,
        "INSERT INTO xxl_job_log_report (trigger_day, running_count, suc_count, fail_count,"
        " update_time) VALUES ($1, $2, $3, $4, $5)"
        " ON CONFLICT (trigger_day) DO UPDATE SET running_count = excluded.running_count,"
        " suc_count = excluded.suc_count, fail_count = excluded.fail_count,"
        " update_time = excluded.update_time", "iiiii", day, running, suc, fail, now) < 0? -1: 0;
}

int
xs_job_due (xxl_store_t *base, int64_t before, xxl_store_due_t *rows, size_t max, size_t *count)
{
    return base->methods->job_due_in (base, XXL_STORE_SHARES_ALL, before, rows, max, count);
}

int
xs_lease_release (xxl_store_t *base, int share, const char *node, int64_t epoch, int64_t now)
{
    return s_exec (base,
        "UPDATE xxl_lease SET owner = '', expires = $1 WHERE share = $2 AND owner = $3"
        " AND epoch = $4", "iisi", now, (int64_t) share, node, epoch);
}

int
xs_lease_renew (xxl_store_t *base, int share, const char *node, int64_t epoch, int64_t expires)
{
    return s_exec (base,
        "UPDATE xxl_lease SET expires = $1 WHERE share = $2 AND owner = $3 AND epoch = $4",
        "iisi", expires, (int64_t) share, node, epoch);
}

int
xs_lease_take (xxl_store_t *base, int share, const char *node, int64_t epoch, int64_t expires)
{
    return s_exec (base,
        "UPDATE xxl_lease SET owner = $1, epoch = epoch + 1, expires = $2"
        " WHERE share = $3 AND epoch = $4", "siii", node, expires, (int64_t) share, epoch);
}

int
xs_log_set_trigger_msg (xxl_store_t *base, int64_t log_id, const char *text)
{
    return s_exec (base,
        "UPDATE xxl_job_log SET trigger_msg = $1 WHERE id = $2", "si", text, log_id);
}

int64_t
xs_node_count (xxl_store_t *base, int64_t since)
{
    return s_scalar (base, "SELECT COUNT(*) FROM xxl_node WHERE beat >= $1",
                     "i", since);
}

int
xs_log_accept (xxl_store_t *base, int64_t log_id, int64_t stamp)
{
    xxl_store_t *self = base;
    if (stamp)
        return s_exec (self, "UPDATE xxl_job_log SET trigger_code = 200,"
                       " trigger_time = $1 WHERE id = $2 AND trigger_code = 0", "ii",
                       stamp, log_id);
    return s_exec (self, "UPDATE xxl_job_log SET trigger_code = 200"
                   " WHERE id = $1 AND trigger_code = 0", "i", log_id);
}

int
xs_job_rm (xxl_store_t *base, int64_t id)
{
    xxl_store_t *self = base;
    if (s_exec (self, "DELETE FROM xxl_job_info WHERE id = $1", "i", id) < 0
    ||  s_exec (self, "DELETE FROM xxl_job_logglue WHERE job_id = $1", "i", id) < 0)
        return -1;
    return 0;
}

int
xs_log_route (xxl_store_t *base, int64_t log_id, int64_t stamp, const char *address,
              const char *section)
{
    xxl_store_t *self = base;
    if (stamp)
        return s_exec (self,
            "UPDATE xxl_job_log SET trigger_time = $1, executor_address = $2,"
            " trigger_msg = COALESCE (trigger_msg, '') || $3 WHERE id = $4 AND trigger_code = 0",
            "issi", stamp, address, section, log_id);
    return s_exec (self,
        "UPDATE xxl_job_log SET executor_address = $1,"
        " trigger_msg = COALESCE (trigger_msg, '') || $2 WHERE id = $3",
        "ssi", address, section, log_id);
}

int
xs_jobs_have_children (xxl_store_t *base)
{
    int64_t any = s_scalar (base,
        "SELECT EXISTS (SELECT 1 FROM xxl_job_info WHERE child_jobid != '')", NULL);
    return any < 0? -1: any != 0;
}

int
xs_group_encode_all (xxl_store_t *base, xxl_enc_t *enc)
{
    return s_encode (base, enc, 1,
        "SELECT id, app_name AS appname, title, address_type AS \"addressType\","
        " COALESCE (address_list, '') AS \"addressList\", update_time AS \"updateTime\""
        " FROM xxl_job_group ORDER BY id", NULL);
}

//  Finishes a row once; an unsent one becomes accepted, with trigger time
//  trigger_time unless it is 0.  A row whose trigger failed is never
//  finished (its handle_code stays 0).  address: only a row sent there
//  (NULL: any)
static int
s_log_handle_done (xxl_store_t *self, int64_t log_id, const char *address, int64_t handle_time,
                   int code, const char *msg, int64_t trigger_time)
{
    int changes = s_exec (self, address
        ? "UPDATE xxl_job_log SET handle_time = $1, handle_code = $2, handle_msg = $3,"
          " trigger_time = CASE WHEN trigger_code = 0 AND $4 != 0 THEN $5 ELSE trigger_time END,"
          " trigger_code = CASE trigger_code WHEN 0 THEN 200 ELSE trigger_code END"
          " WHERE id = $6 AND handle_code = 0 AND trigger_code IN (0, 200)"
          " AND executor_address = $7"
        : "UPDATE xxl_job_log SET handle_time = $1, handle_code = $2, handle_msg = $3,"
          " trigger_time = CASE WHEN trigger_code = 0 AND $4 != 0 THEN $5 ELSE trigger_time END,"
          " trigger_code = CASE trigger_code WHEN 0 THEN 200 ELSE trigger_code END"
          " WHERE id = $6 AND handle_code = 0 AND trigger_code IN (0, 200) AND $7 IS NULL",
        "iisiiis", handle_time, (int64_t) code, msg, trigger_time, trigger_time, log_id, address);
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
xs_registry_beat (xxl_store_t *base, const char *app, const char *address, int64_t now)
{
    return s_exec (base,
        "INSERT INTO xxl_job_registry (registry_group, registry_key, registry_value, update_time)"
        " VALUES ('EXECUTOR', $1, $2, $3) ON CONFLICT (registry_group, registry_key,"
        " registry_value) DO UPDATE SET update_time = excluded.update_time", "ssi",
        app, address, now) < 0? -1: 0;
}

int
xs_audit_add (xxl_store_t *base, const xxl_audit_t *row)
{
    return s_exec (base,
        "INSERT INTO xxl_audit (time, who, role, type, target, code)"
        " VALUES ($1, $2, $3, $4, $5, $6)", "isssii", row->time, row->who, row->role,
        row->type, row->target, (int64_t) row->code) < 0? -1: 0;
}

int
xs_recover_stamp_fired (xxl_store_t *base)
{
    return s_exec (base,
        "UPDATE xxl_job_log SET trigger_time = schedule_time WHERE trigger_code = 0"
        " AND executor_address IS NOT NULL AND schedule_time > trigger_time"
        " AND schedule_time <= (SELECT fired_sent FROM xxl_lease"
        "     WHERE share = xxl_job_log.job_id % 16)", NULL);
}

int
xs_recover_drop_late (xxl_store_t *base, int64_t job_id, int64_t before, int64_t keep)
{
    return s_exec (base,
        "DELETE FROM xxl_job_log WHERE job_id = $1 AND" XXL_UNSENT_SQL
        " AND schedule_time < $2 AND id != $3", "iii", job_id, before, keep);
}

int64_t
xs_recover_late_last (xxl_store_t *base, int64_t job_id, int64_t before)
{
    return s_scalar (base,
        "SELECT MAX (id) FROM xxl_job_log WHERE job_id = $1 AND" XXL_UNSENT_SQL
        " AND schedule_time < $2", "ii", job_id, before);
}

//  --------------------------------------------------------------------
//  Over the dialect's statements: the driver gives the text

int
xs_fired_raise_until (xxl_store_t *base, int64_t until)
{
    return s_exec (base, s_sql (base, XXL_SQL_FIRED_RAISE_UNTIL), "i", until);
}

int
xs_fired_raise_sent (xxl_store_t *base, int64_t sent)
{
    return s_exec (base, s_sql (base, XXL_SQL_FIRED_RAISE_SENT), "i", sent);
}

int
xs_glue_encode (xxl_store_t *base, xxl_enc_t *enc, int64_t job_id, int64_t version)
{
    return s_encode (base, enc, 0, s_sql (base, XXL_SQL_GLUE_ENCODE), "ii", job_id, version);
}

int
xs_group_refresh_app (xxl_store_t *base, const char *app, int64_t now)
{
    return s_exec (base, s_sql (base, XXL_SQL_GROUP_REFRESH_APP), "is", now, app) < 0? -1: 0;
}

int
xs_groups_refresh (xxl_store_t *base, int64_t now)
{
    return s_exec (base, s_sql (base, XXL_SQL_GROUPS_REFRESH), "i", now) < 0? -1: 0;
}

int
xs_log_lost_ids (xxl_store_t *base, int64_t before, int64_t *ids, size_t max, size_t *count)
{
    return s_id_list (base,
        ids, max, count, s_sql (base, XXL_SQL_LOG_LOST_IDS), "ii", before, (int64_t) max);
}

int
xs_recover_late_jobs (xxl_store_t *base, int64_t before, int64_t *ids, size_t max,
                      size_t *count)
{
    return s_id_list (base,
        ids, max, count, s_sql (base, XXL_SQL_RECOVER_LATE_JOBS), "ii",
        before, (int64_t) max);
}

int
xs_log_unsent_in (xxl_store_t *base, uint64_t mask, int64_t after, int64_t *ids, size_t max,
                  size_t *count)
{
    return s_id_list (base,
        ids, max, count, s_sql (base, XXL_SQL_LOG_UNSENT_IN), "iii", (int64_t) mask, after,
        (int64_t) max);
}

int
xs_recover_stamp_due_in (xxl_store_t *base, uint64_t mask, int64_t now)
{
    return s_exec (base, s_sql (base, XXL_SQL_RECOVER_STAMP_DUE_IN), "ii", (int64_t) mask, now);
}

int64_t
xs_audit_delete (xxl_store_t *base, int64_t before, int64_t limit)
{
    return s_exec (base, s_sql (base, XXL_SQL_AUDIT_DELETE), "ii", before, limit);
}

int
xs_audit_encode_page (xxl_store_t *base, xxl_enc_t *enc, size_t max_size, int *truncated,
                      int64_t before, int64_t limit)
{
    return s_encode_max (base, enc, max_size, truncated,
        s_sql (base, XXL_SQL_AUDIT_ENCODE_PAGE), "ii", before, limit);
}

int
xs_glue_encode_page (xxl_store_t *base, xxl_enc_t *enc, size_t max_size, int *truncated,
                     int64_t job_id, int64_t limit, int64_t offset)
{
    return s_encode_max (base, enc, max_size, truncated,
        s_sql (base, XXL_SQL_GLUE_ENCODE_PAGE), "iii", job_id, limit, offset);
}

int
xs_job_delay_resume (xxl_store_t *base, int64_t log_id, int64_t now, int64_t mark)
{
    return s_exec (base, s_sql (base, XXL_SQL_JOB_DELAY_RESUME),
        "iii", now, log_id, mark);
}

int64_t
xs_log_id_at_rank (xxl_store_t *base, int64_t job_id, int64_t rank)
{
    return s_scalar (base, s_sql (base, XXL_SQL_LOG_ID_AT_RANK), "ii", job_id, rank);
}

int
xs_recover_stamp_fired_in (xxl_store_t *base, uint64_t mask)
{
    return s_exec (base, s_sql (base, XXL_SQL_RECOVER_STAMP_FIRED_IN), "i", (int64_t) mask);
}

int
xs_recover_late_jobs_in (xxl_store_t *base, uint64_t mask, int64_t before, int64_t *ids,
                         size_t max, size_t *count)
{
    return s_id_list (base,
        ids, max, count, s_sql (base, XXL_SQL_RECOVER_LATE_JOBS_IN), "iii",
        (int64_t) mask, before, (int64_t) max);
}

int
xs_log_trigger_end (xxl_store_t *base, int64_t log_id, int code, int64_t presumed,
                    const char *text, int64_t stamp)
{
    return s_exec (base, s_sql (base, XXL_SQL_LOG_TRIGGER_END),
        "iisiii", (int64_t) code, presumed, text, stamp, stamp, log_id);
}

int
xs_log_open_ids_at (xxl_store_t *base, const char *address, int64_t after, int64_t *ids,
                    size_t max, size_t *count)
{
    return s_id_list (base,
        ids, max, count, s_sql (base, XXL_SQL_LOG_OPEN_IDS_AT), "sii",
        address, after, (int64_t) max);
}

int
xs_node_beat (xxl_store_t *base, const char *node, int64_t now)
{
    return s_exec (base, s_sql (base, XXL_SQL_NODE_BEAT),
        "si", node, now) < 0? -1: 0;
}

char *
xs_registry_alive (xxl_store_t *base, int64_t window_ms)
{
    return s_text (base, s_sql (base, XXL_SQL_REGISTRY_ALIVE), "i", window_ms);
}

int64_t
xs_job_count (xxl_store_t *base, const xxl_store_job_filter_t *filter)
{
    return s_scalar (base, s_sql (base, XXL_SQL_JOB_COUNT),
                       "iiisssi", XXL_JOB_FILTER_ARGS (filter));
}

int
xs_job_encode (xxl_store_t *base, xxl_enc_t *enc, int64_t id)
{
    return s_encode (base, enc, 0, s_sql (base, XXL_SQL_JOB_ENCODE), "i", id);
}

int
xs_job_encode_page (xxl_store_t *base, xxl_enc_t *enc, size_t max_size, int *truncated,
                    const xxl_store_job_filter_t *filter)
{
    return s_encode_max (base, enc, max_size, truncated, s_sql (base, XXL_SQL_JOB_ENCODE_PAGE),
        "iiisssi", XXL_JOB_FILTER_ARGS (filter));
}

int64_t
xs_log_delete (xxl_store_t *base, int64_t job_id, int64_t before, int64_t below, int64_t limit)
{
    return s_exec (base, s_sql (base, XXL_SQL_LOG_DELETE), "iiii", job_id, before, below, limit);
}

int
xs_report_encode_days (xxl_store_t *base, xxl_enc_t *enc, int days)
{
    return s_encode (base, enc, 1, s_sql (base, XXL_SQL_REPORT_ENCODE_DAYS), "i",
        (int64_t) days);
}

int
xs_log_encode (xxl_store_t *base, xxl_enc_t *enc, int64_t id)
{
    return s_encode (base, enc, 0, s_sql (base, XXL_SQL_LOG_ENCODE), "i", id);
}

char *
xs_registry_apps (xxl_store_t *base, const char *address, int64_t since)
{
    char *apps = s_text (base, s_sql (base, XXL_SQL_REGISTRY_APPS), "si", address, since);
    return apps? apps: strdup ("");
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
xs_job_unchild (xxl_store_t *base, int64_t child)
{
    xxl_store_t *self = base;
    int64_t parents [256];
    size_t count;
    int changed = 0;
    do {
        if (s_id_list (self, parents, 256, &count, s_sql (self, XXL_SQL_JOB_PARENTS), "i",
                       child))
            return -1;
        for (size_t i = 0; i < count; i++) {
            char *list = s_text (self,
                "SELECT child_jobid FROM xxl_job_info WHERE id = $1", "i", parents [i]);
            char *spaceless = list? strdup (list): NULL;
            if (spaceless) {
                char *w = spaceless;
                for (const char *r = list; *r; r++)
                    if (*r != ' ')
                        *w++ = *r;
                *w = 0;
            }
            char *rest = spaceless? s_list_without (spaceless, child): NULL;
            int rc = rest? s_exec (self,
                "UPDATE xxl_job_info SET child_jobid = $1 WHERE id = $2", "si", rest, parents [i])
                         : -1;
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

//  --------------------------------------------------------------------
//  Rows read into the engine's structs through the driver's row reader

static int
s_row (xxl_store_t *self, const char *what, xxl_store_read_fn *read, void *arg,
       const char *sql, const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    int rows = s_driver (self)->row (self, what, read, arg, sql, fmt, args);
    va_end (args);
    return rows;
}

static void
s_group_read (const xxl_store_driver_t *driver, const xxl_store_row_t *row, void *arg)
{
    xxl_group_t *group = (xxl_group_t *) arg;
    group->id = driver->column_int (row, 0);
    group->app_name = driver->column_text (row, 1);
    group->title = driver->column_text (row, 2);
    group->address_type = (int) driver->column_int (row, 3);
    group->address_list = driver->column_text (row, 4);
    group->update_time = driver->column_int (row, 5);
}

int
xs_group_load (xxl_store_t *base, int64_t id, xxl_group_t *group)
{
    memset (group, 0, sizeof *group);
    int rows = s_row (base, "group query", s_group_read, group,
        "SELECT " XXL_GROUP_COLUMNS " FROM xxl_job_group WHERE id = $1", "i", id);
    return rows < 0? -1: rows == 0;
}

int
xs_group_find (xxl_store_t *base, const char *key, xxl_group_t *group)
{
    int numeric = *key != 0;
    for (const char *p = key; *p; p++)
        if (*p < '0' || *p > '9')
            numeric = 0;
    if (numeric && strlen (key) < 18)
        return xs_group_load (base, atoll (key), group);
    memset (group, 0, sizeof *group);
    int rows = s_row (base, "group query", s_group_read, group,
        "SELECT " XXL_GROUP_COLUMNS " FROM xxl_job_group WHERE app_name = $1", "s", key);
    return rows < 0? -1: rows == 0;
}

int
xs_job_save (xxl_store_t *base, const xxl_job_t *job)
{
    return s_exec (base,
        "UPDATE xxl_job_info SET (" XXL_JOB_COLUMNS ") = " XXL_JOB_VALUES " WHERE id = $28",
        XXL_JOB_FMT "i", XXL_JOB_ARGS (job), job->id) < 0? -1: 0;
}

static void
s_job_read (const xxl_store_driver_t *driver, const xxl_store_row_t *row, void *arg)
{
    xxl_job_t *job = (xxl_job_t *) arg;
    int c = 0;
    job->id = driver->column_int (row, c++);
    job->job_group = driver->column_int (row, c++);
    job->job_desc = driver->column_text (row, c++);
    job->add_time = driver->column_int (row, c++);
    job->update_time = driver->column_int (row, c++);
    job->author = driver->column_text (row, c++);
    job->alarm_email = driver->column_text (row, c++);
    job->schedule_type = driver->column_text (row, c++);
    job->schedule_conf = driver->column_text (row, c++);
    job->misfire_strategy = driver->column_text (row, c++);
    job->executor_route_strategy = driver->column_text (row, c++);
    job->executor_handler = driver->column_text (row, c++);
    job->executor_param = driver->column_text (row, c++);
    job->executor_block_strategy = driver->column_text (row, c++);
    job->executor_timeout = driver->column_int (row, c++);
    job->executor_fail_retry_count = driver->column_int (row, c++);
    job->glue_type = driver->column_text (row, c++);
    job->glue_source = driver->column_text (row, c++);
    job->glue_remark = driver->column_text (row, c++);
    job->glue_updatetime = driver->column_int (row, c++);
    job->child_jobid = driver->column_text (row, c++);
    job->trigger_status = driver->column_int (row, c++);
    job->trigger_last_time = driver->column_int (row, c++);
    job->trigger_next_time = driver->column_int (row, c++);
    job->timezone = driver->column_text (row, c++);
    job->retry_interval = driver->column_int (row, c++);
    job->retry_backoff = driver->column_double (row, c++);
    job->retry_max_interval = driver->column_int (row, c++);
}

int
xs_job_load (xxl_store_t *base, int64_t id, xxl_job_t *job)
{
    memset (job, 0, sizeof *job);
    int rows = s_row (base, "job query", s_job_read, job,
        "SELECT id, " XXL_JOB_COLUMNS " FROM xxl_job_info WHERE id = $1", "i", id);
    return rows < 0? -1: rows == 0;
}

typedef struct {
    char **type;
    char **source;
} s_glue_t;

static void
s_glue_read (const xxl_store_driver_t *driver, const xxl_store_row_t *row, void *arg)
{
    s_glue_t *glue = (s_glue_t *) arg;
    *glue->type = driver->column_text (row, 0);
    *glue->source = driver->column_text (row, 1);
}

int
xs_glue_get (xxl_store_t *base, int64_t job_id, int64_t version, char **type, char **source)
{
    *type = *source = NULL;
    s_glue_t glue = { type, source };
    int rows = s_row (base, "glue query", s_glue_read, &glue,
        "SELECT glue_type, glue_source FROM xxl_job_logglue WHERE job_id = $1 AND version = $2",
        "ii", job_id, version);
    if (rows <= 0)
        return rows < 0? -1: 1;
    if (*type && *source)
        return 0;
    free (*type);
    free (*source);
    *type = *source = NULL;
    s_driver (base)->set_error (base, "out of memory");
    return -1;
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
    int rows = s_row (base, "log query", s_log_read, log,
        "SELECT id, job_group, job_id, executor_address, executor_handler, executor_param,"
        " executor_sharding_param, executor_fail_retry_count, trigger_time, trigger_code,"
        " trigger_msg, trigger_type, schedule_time, handle_time, handle_code, handle_msg"
        " FROM xxl_job_log WHERE id = $1", "i", id);
    return rows < 0? -1: rows == 0;
}

//  --------------------------------------------------------------------
//  Users, tokens and sessions

int
xs_user_add (xxl_store_t *base, const xxl_account_t *user)
{
    return s_exec (base,
        "INSERT INTO xxl_user (username, password, role, apps, add_time)"
        " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (username) DO NOTHING", "ssssi",
        user->name, user->hash, user->role, user->apps? user->apps: "", user->add_time);
}

int
xs_user_update (xxl_store_t *base, const char *name, const char *hash, const char *role,
                const char *apps)
{
    return s_exec (base,
        "UPDATE xxl_user SET password = COALESCE ($1, password), role = COALESCE ($2, role),"
        " apps = COALESCE ($3, apps) WHERE username = $4", "ssss", hash, role, apps, name);
}

int
xs_user_rm (xxl_store_t *base, const char *name)
{
    xxl_store_t *self = base;
    if (s_exec (self, "DELETE FROM xxl_session WHERE username = $1", "s", name) < 0)
        return -1;
    return s_exec (self, "DELETE FROM xxl_user WHERE username = $1", "s", name);
}

int
xs_user_encode_all (xxl_store_t *base, xxl_enc_t *enc)
{
    return s_encode (base, enc, 1,
        "SELECT username, role, apps, add_time AS \"addTime\" FROM xxl_user ORDER BY username",
        NULL);
}

int
xs_token_add (xxl_store_t *base, const xxl_account_t *token)
{
    return s_exec (base,
        "INSERT INTO xxl_token (name, hash, role, apps, add_time)"
        " VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING", "ssssi",
        token->name, token->hash, token->role, token->apps? token->apps: "", token->add_time);
}

int
xs_token_rm (xxl_store_t *base, const char *name)
{
    return s_exec (base, "DELETE FROM xxl_token WHERE name = $1", "s", name);
}

int
xs_token_encode_all (xxl_store_t *base, xxl_enc_t *enc)
{
    return s_encode (base, enc, 1,
        "SELECT name, role, apps, add_time AS \"addTime\" FROM xxl_token ORDER BY name", NULL);
}

int
xs_session_add (xxl_store_t *base, const char *id, const char *user, const char *csrf,
                int64_t now)
{
    if (s_exec (base,
            "INSERT INTO xxl_session (id, username, csrf, add_time, seen)"
            " VALUES ($1, $2, $3, $4, $4)", "sssi", id, user, csrf, now) < 0)
        return -1;
    return s_exec (base,
        "DELETE FROM xxl_session WHERE username = $1 AND id NOT IN (SELECT id FROM xxl_session"
        " WHERE username = $1 ORDER BY seen DESC, add_time DESC, id LIMIT $2)",
        "si", user, (int64_t) XXL_STORE_USER_SESSIONS) < 0? -1: 0;
}

int
xs_session_touch (xxl_store_t *base, const char *id, int64_t now)
{
    return s_exec (base, "UPDATE xxl_session SET seen = $1 WHERE id = $2", "is",
                   now, id) < 0? -1: 0;
}

int
xs_session_rm (xxl_store_t *base, const char *id)
{
    return s_exec (base, "DELETE FROM xxl_session WHERE id = $1", "s", id);
}

int
xs_user_sessions_rm (xxl_store_t *base, const char *user)
{
    return s_exec (base, "DELETE FROM xxl_session WHERE username = $1", "s",
                   user);
}

int64_t
xs_session_expire (xxl_store_t *base, int64_t before)
{
    return s_exec (base, "DELETE FROM xxl_session WHERE seen < $1", "i", before);
}

//  One account row (name, hash, role, apps, add_time)
static void
s_account_read (const xxl_store_driver_t *driver, const xxl_store_row_t *row, void *arg)
{
    xxl_account_t *out = (xxl_account_t *) arg;
    out->name = driver->column_text (row, 0);
    out->hash = driver->column_text (row, 1);
    out->role = driver->column_text (row, 2);
    out->apps = driver->column_text (row, 3);
    out->add_time = driver->column_int (row, 4);
}

int
xs_user_get (xxl_store_t *base, const char *name, xxl_account_t *out)
{
    memset (out, 0, sizeof *out);
    int rows = s_row (base, "user_get", s_account_read, out,
        "SELECT username, password, role, apps, add_time FROM xxl_user WHERE username = $1",
        "s", name);
    return rows < 0? -1: rows == 0;
}

int
xs_token_find (xxl_store_t *base, const char *hash, xxl_account_t *out)
{
    memset (out, 0, sizeof *out);
    int rows = s_row (base, "token_find", s_account_read, out,
        "SELECT name, hash, role, apps, add_time FROM xxl_token WHERE hash = $1", "s", hash);
    return rows < 0? -1: rows == 0;
}

typedef struct {
    char **user;
    char **csrf;
    int64_t *seen;
} s_session_t;

static void
s_session_read (const xxl_store_driver_t *driver, const xxl_store_row_t *row, void *arg)
{
    s_session_t *session = (s_session_t *) arg;
    *session->user = driver->column_text (row, 0);
    *session->csrf = driver->column_text (row, 1);
    *session->seen = driver->column_int (row, 2);
}

int
xs_session_find (xxl_store_t *base, const char *id, int64_t seen_after, char **user,
                 char **csrf, int64_t *seen)
{
    *user = *csrf = NULL;
    s_session_t session = { user, csrf, seen };
    int rows = s_row (base, "session_find", s_session_read, &session,
        "SELECT username, csrf, seen FROM xxl_session WHERE id = $1 AND seen >= $2", "si",
        id, seen_after);
    return rows < 0? -1: rows == 0;
}

/*  What stays with each backend, and why (a third backend writes these):
    - the connection: open, migrations (one list per dialect: the types,
      AUTOINCREMENT or sequences, triggers differ), the statement cache,
      binding, errors, transactions, data_version, the WAL (SQLite) or
      reconnection (PostgreSQL): the 11 methods destroy .. wal_restart;
    - ids: group_add, job_add, glue_add, log_add, log_next_id (SQLite's
      AUTOINCREMENT and last_insert_rowid; PostgreSQL's sequences,
      RETURNING, log_seq and its deferred, batched log rows), and
      log_handle_done_many (PostgreSQL's unnest batch; SQLite leaves it
      NULL);
    - calls whose statements or steps differ: group_update (PostgreSQL
      guards the unique name instead of letting the violation abort the
      transaction), log_copy_shard,
      log_set_shard, log_unroute, log_encode_page, lease_fired,
      lease_list, fired_get (one statement or two), job_due_in,
      report_count and report_totals (SQLite's chunked scans), clock_now.
*/
