/*  xxl_store_sqlite_driver.c -- the SQLite backend's driver of the
    shared SQL (xxl_store_sql.h): how scheduler/store/sql's bodies run
    their statements on this backend.

    Owns: sq_driver, the table xxl_store_sqlite.c hands each handle:
    placeholders '?' (the shared $N texts are rewritten as ?N once, when
    xxl_store_sqlite_conn.c prepares them), every statement cached.
    MUST: be complete and of XXL_STORE_DRIVER_VERSION (the constructor
    asserts xxl_store_driver_ok); a row and its columns are valid only
    inside the read function.
    MUST NOT: add a statement to what the shared body asks: each driver
    call is one cached statement, bound and stepped.
    Calls: xxl_store_sqlite_conn.c, and names the dialect's texts
    (sq_statements, xxl_store_sqlite_rows.c); nothing above it.
    Errors: as xxl_store_sqlite_conn.c records them.
*/

#include "xxl_store_sqlite_int.h"

#include <assert.h>
#include <sqlite3.h>
#include <stdarg.h>

static int
s_driver_exec (xxl_store_t *base, const char *sql, const char *fmt, va_list args)
{
    return sq_execv ((store_t *) base, sql, fmt, args);
}

static int64_t
s_driver_scalar (xxl_store_t *base, const char *sql, const char *fmt, va_list args)
{
    return sq_scalarv ((store_t *) base, sql, fmt, args);
}

static char *
s_driver_text (xxl_store_t *base, const char *sql, const char *fmt, va_list args)
{
    return sq_textv ((store_t *) base, sql, fmt, args);
}

static int
s_driver_id_list (xxl_store_t *base, int64_t *ids, size_t max, size_t *count,
                  const char *sql, const char *fmt, va_list args)
{
    return sq_id_listv ((store_t *) base, ids, max, count, sql, fmt, args);
}

static int
s_driver_encode (xxl_store_t *base, xxl_enc_t *enc, int rows_as_array, size_t max_size,
                 int *truncated, const char *sql, const char *fmt, va_list args)
{
    return sq_encodev ((store_t *) base, enc, rows_as_array, max_size, truncated, sql, fmt,
                      args);
}

//  A row is the statement itself, stepped onto it
static int
s_driver_row (xxl_store_t *base, const char *what, xxl_store_read_fn *read, void *arg,
              const char *sql, const char *fmt, va_list args)
{
    store_t *self = (store_t *) base;
    sqlite3_stmt *stmt = sq_prepare (self, sql);
    if (!stmt || sq_bindv (self, stmt, fmt, args))
        return -1;
    int rc = sqlite3_step (stmt);
    if (rc == SQLITE_ROW) {
        read (&sq_driver, (const xxl_store_row_t *) stmt, arg);
        rc = 1;
    }
    else
        rc = rc == SQLITE_DONE? 0: sq_fail (self, what);
    sqlite3_reset (stmt);
    return rc;
}

static int64_t
s_driver_column_int (const xxl_store_row_t *row, int column)
{
    return sqlite3_column_int64 ((sqlite3_stmt *) row, column);
}

static double
s_driver_column_double (const xxl_store_row_t *row, int column)
{
    return sqlite3_column_double ((sqlite3_stmt *) row, column);
}

static char *
s_driver_column_text (const xxl_store_row_t *row, int column)
{
    return sq_column_text ((sqlite3_stmt *) row, column);
}

static void
s_driver_set_error (xxl_store_t *base, const char *text)
{
    store_t *self = (store_t *) base;
    snprintf (self->error, sizeof self->error, "%s", text);
}

const xxl_store_driver_t sq_driver = {
    .version = XXL_STORE_DRIVER_VERSION,
    .size = sizeof (xxl_store_driver_t),
    .name = "sqlite",
    .placeholder = '?',
    .exec = s_driver_exec,
    .scalar = s_driver_scalar,
    .text = s_driver_text,
    .id_list = s_driver_id_list,
    .encode = s_driver_encode,
    .sql = sq_statements,
    .row = s_driver_row,
    .column_int = s_driver_column_int,
    .column_double = s_driver_column_double,
    .column_text = s_driver_column_text,
    .set_error = s_driver_set_error,
};
