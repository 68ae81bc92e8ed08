/*  xxl_store_sql.c -- the bottom of the store: the driver's contract and
    what every backend and every shared body uses.

    Owns: the driver check (xxl_store_driver_ok), the placeholder rewrite
    for '?' drivers (xxl_store_sql_question_marks), the error lines a
    backend logs (xxl_store_log_error: one per cause per 10 s), the
    statement cache's table keyed by the address of a statement's text
    (xxl_store_sql_cache_new), and the
    calls the shared bodies make through a handle's driver (xsql_*,
    xxl_store_sql_int.h): each passes its arguments on to the driver's
    call of the same name, unchanged -- one call, one statement.

    MUST: stay below everything else in the store: it calls no backend,
    no shared body and not the factory (xxl_store.c); the backends reach
    it, never the other way (they reach back only through the driver
    table they fill).
    MUST NOT: cache, retry or rewrite a statement (the driver owns its
    statement cache; the rewrite is the driver's to call, once, when it
    prepares).

    Errors: the driver's (-1, NULL), with the reason in the handle's
    error(); xsql_* add none of their own.  A handle without a driver of
    this version is a programming error (assert).
*/

#include "xxl_store_sql.h"
#include "xxl_store_sql_int.h"

#include <assert.h>
#include <czmq.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

const xxl_store_driver_t *
xsql_driver (xxl_store_t *self)
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

//  The dialect's text of a statement
const char *
xsql_sql (xxl_store_t *self, xxl_store_stmt_t statement)
{
    assert (statement >= 0 && statement < XXL_SQL_STATEMENTS);
    return xsql_driver (self)->sql [statement];
}

//  The driver's calls with the arguments in line

int
xsql_exec (xxl_store_t *self, const char *sql, const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    int changes = xsql_driver (self)->exec (self, sql, fmt, args);
    va_end (args);
    return changes;
}

int64_t
xsql_scalar (xxl_store_t *self, const char *sql, const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    int64_t value = xsql_driver (self)->scalar (self, sql, fmt, args);
    va_end (args);
    return value;
}

char *
xsql_text (xxl_store_t *self, const char *sql, const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    char *value = xsql_driver (self)->text (self, sql, fmt, args);
    va_end (args);
    return value;
}

int
xsql_id_list (xxl_store_t *self, int64_t *ids, size_t max, size_t *count, const char *sql,
              const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    int rc = xsql_driver (self)->id_list (self, ids, max, count, sql, fmt, args);
    va_end (args);
    return rc;
}

int
xsql_encode (xxl_store_t *self, xxl_enc_t *enc, int rows_as_array, const char *sql,
             const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    int rows = xsql_driver (self)->encode (self, enc, rows_as_array, 0, NULL, sql, fmt, args);
    va_end (args);
    return rows;
}

int
xsql_encode_max (xxl_store_t *self, xxl_enc_t *enc, size_t max_size, int *truncated,
                 const char *sql, const char *fmt, ...)
{
    assert (max_size && truncated);
    va_list args;
    va_start (args, fmt);
    int rows = xsql_driver (self)->encode (self, enc, 1, max_size, truncated, sql, fmt, args);
    va_end (args);
    return rows;
}

//  The driver's row reader with the arguments in line

int
xsql_row (xxl_store_t *self, const char *what, xxl_store_read_fn *read, void *arg,
          const char *sql, const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    int rows = xsql_driver (self)->row (self, what, read, arg, sql, fmt, args);
    va_end (args);
    return rows;
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

zhashx_t *
xxl_store_sql_cache_new (zhashx_destructor_fn *destroy)
{
    assert (destroy);
    zhashx_t *statements = zhashx_new ();
    assert (statements);
    zhashx_set_key_hasher (statements, s_pointer_hash);
    zhashx_set_key_comparator (statements, s_pointer_compare);
    zhashx_set_key_duplicator (statements, NULL);
    zhashx_set_key_destructor (statements, NULL);
    zhashx_set_destructor (statements, destroy);
    return statements;
}

char *
xxl_store_sql_group_set (const int64_t *groups, size_t count)
{
    //  (an id: at most 20 characters, and its comma)
    size_t len = 21 * count + 2, used = 0;
    char *set = (char *) zmalloc (len);
    if (groups && !count)
        set [used++] = '0';
    for (size_t i = 0; groups && i < count; i++)
        used += (size_t) snprintf (set + used, len - used, "%s%" PRId64, i? ",": "",
                                   groups [i]);
    assert (used < len);
    return set;
}

int
xxl_store_sql_sum_runs (int rc, xxl_store_group_runs_t *rows, size_t count,
                        int64_t *running, int64_t *suc, int64_t *fail)
{
    *running = *suc = *fail = 0;
    for (size_t i = 0; rc == 0 && i < count; i++) {
        *running += rows [i].running;
        *suc += rows [i].suc;
        *fail += rows [i].fail;
    }
    free (rows);
    return rc;
}

void
xxl_store_log_error (xxl_store_logged_t *logged, const char *error)
{
    //  The slot of this cause, or the one written longest ago
    int64_t now = zclock_mono ();
    xxl_store_logged_t *slot = &logged [0];
    for (int i = 0; i < XXL_STORE_LOG_CAUSES; i++) {
        if (strcmp (logged [i].cause, error) == 0) {
            slot = &logged [i];
            break;
        }
        if (logged [i].at < slot->at)
            slot = &logged [i];
    }
    bool same = strcmp (slot->cause, error) == 0;
    if (same && slot->at && now - slot->at < XXL_STORE_LOG_MS) {
        slot->suppressed++;
        return;
    }
    if (same && slot->suppressed)
        zsys_error ("store: %s (and %" PRIu64 " more like it in the last %d s)", error,
                    slot->suppressed, (int) ((now - slot->at) / 1000));
    else
        zsys_error ("store: %s", error);
    snprintf (slot->cause, sizeof slot->cause, "%s", error);
    slot->at = now;
    slot->suppressed = 0;
}

/*  What stays with each backend, and why (a third backend writes
    these; the shared bodies are the xxl_store_sql_*.c files):
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
      report_count, report_count_groups and report_totals (SQLite's chunked
      scans), clock_now.
*/
