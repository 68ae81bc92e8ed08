/*  xxl_store_sql_registry.c -- the store's shared SQL for the registry,
    nodes, leases, reports and the audit trail.

    Owns: the bodies of the registry_*, node_*, lease_*, report_* and audit_*
    slots.
    MUST: a lease changes only when its epoch is the caller's (one
    guarded statement per call).
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
xs_registry_expire (xxl_store_t *base, int64_t dead_before)
{
    return xsql_exec (base, "DELETE FROM xxl_job_registry WHERE update_time < $1",
                   "i", dead_before);
}

int
xs_registry_remove (xxl_store_t *base, const char *app, const char *address)
{
    return xsql_exec (base,
        "DELETE FROM xxl_job_registry WHERE registry_group = 'EXECUTOR'"
        " AND registry_key = $1 AND registry_value = $2", "ss", app, address) < 0? -1: 0;
}

int
xs_report_refresh (xxl_store_t *base, int64_t from, int64_t to, int64_t now)
{
    return xsql_exec (base,
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
    return xsql_exec (base,
        "INSERT INTO xxl_job_log_report (trigger_day, running_count, suc_count, fail_count,"
        " update_time) VALUES ($1, $2, $3, $4, $5)"
        " ON CONFLICT (trigger_day) DO UPDATE SET running_count = excluded.running_count,"
        " suc_count = excluded.suc_count, fail_count = excluded.fail_count,"
        " update_time = excluded.update_time", "iiiii", day, running, suc, fail, now) < 0? -1: 0;
}

int
xs_lease_release (xxl_store_t *base, int share, const char *node, int64_t epoch, int64_t now)
{
    return xsql_exec (base,
        "UPDATE xxl_lease SET owner = '', expires = $1 WHERE share = $2 AND owner = $3"
        " AND epoch = $4", "iisi", now, (int64_t) share, node, epoch);
}

int
xs_lease_renew (xxl_store_t *base, int share, const char *node, int64_t epoch, int64_t expires)
{
    return xsql_exec (base,
        "UPDATE xxl_lease SET expires = $1 WHERE share = $2 AND owner = $3 AND epoch = $4",
        "iisi", expires, (int64_t) share, node, epoch);
}

int
xs_lease_take (xxl_store_t *base, int share, const char *node, int64_t epoch, int64_t expires)
{
    return xsql_exec (base,
        "UPDATE xxl_lease SET owner = $1, epoch = epoch + 1, expires = $2"
        " WHERE share = $3 AND epoch = $4", "siii", node, expires, (int64_t) share, epoch);
}

int64_t
xs_node_count (xxl_store_t *base, int64_t since)
{
    return xsql_scalar (base, "SELECT COUNT(*) FROM xxl_node WHERE beat >= $1",
                     "i", since);
}

int
xs_registry_beat (xxl_store_t *base, const char *app, const char *address, int64_t now)
{
    return xsql_exec (base,
        "INSERT INTO xxl_job_registry (registry_group, registry_key, registry_value, update_time)"
        " VALUES ('EXECUTOR', $1, $2, $3) ON CONFLICT (registry_group, registry_key,"
        " registry_value) DO UPDATE SET update_time = excluded.update_time", "ssi",
        app, address, now) < 0? -1: 0;
}

int
xs_audit_add (xxl_store_t *base, const xxl_audit_t *row)
{
    return xsql_exec (base,
        "INSERT INTO xxl_audit (time, who, role, type, target, code)"
        " VALUES ($1, $2, $3, $4, $5, $6)", "isssii", row->time, row->who, row->role,
        row->type, row->target, (int64_t) row->code) < 0? -1: 0;
}

int64_t
xs_audit_delete (xxl_store_t *base, int64_t before, int64_t limit)
{
    return xsql_exec (base, xsql_sql (base, XXL_SQL_AUDIT_DELETE), "ii", before, limit);
}

int
xs_audit_encode_page (xxl_store_t *base, xxl_enc_t *enc, size_t max_size, int *truncated,
                      int64_t before, int64_t limit)
{
    return xsql_encode_max (base, enc, max_size, truncated,
        xsql_sql (base, XXL_SQL_AUDIT_ENCODE_PAGE), "ii", before, limit);
}

int
xs_node_beat (xxl_store_t *base, const char *node, int64_t now)
{
    return xsql_exec (base, xsql_sql (base, XXL_SQL_NODE_BEAT),
        "si", node, now) < 0? -1: 0;
}

int64_t
xs_registry_newest (xxl_store_t *base)
{
    return xsql_scalar (base, "SELECT COALESCE (MAX (update_time), 0) FROM xxl_job_registry", "");
}

char *
xs_registry_alive (xxl_store_t *base, int64_t window_ms)
{
    return xsql_text (base, xsql_sql (base, XXL_SQL_REGISTRY_ALIVE), "i", window_ms);
}

int
xs_report_encode_days (xxl_store_t *base, xxl_enc_t *enc, int days)
{
    return xsql_encode (base, enc, 1, xsql_sql (base, XXL_SQL_REPORT_ENCODE_DAYS), "i",
        (int64_t) days);
}

int
xs_report_encode_range (xxl_store_t *base, xxl_enc_t *enc, int64_t from, int64_t to,
                        int64_t limit)
{
    return xsql_encode (base, enc, 1,
        "SELECT trigger_day AS \"triggerDay\", running_count AS \"runningCount\","
        " suc_count AS \"sucCount\", fail_count AS \"failCount\", update_time AS \"updateTime\""
        " FROM xxl_job_log_report WHERE trigger_day >= $1 AND trigger_day <= $2"
        " ORDER BY trigger_day DESC LIMIT $3", "iii", from, to, limit);
}

char *
xs_registry_apps (xxl_store_t *base, const char *address, int64_t since)
{
    char *apps = xsql_text (base, xsql_sql (base, XXL_SQL_REGISTRY_APPS), "si", address, since);
    return apps? apps: strdup ("");
}
