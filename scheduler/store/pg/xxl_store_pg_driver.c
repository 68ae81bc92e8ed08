/*  xxl_store_pg_driver.c -- the PostgreSQL backend's driver of the
    shared SQL (xxl_store_sql.h): how scheduler/store/sql's bodies run
    their statements on this backend.

    Owns: pgx_driver, the table xxl_store_pg.c hands each handle.  Writes
    run with PGX_WRITE (a transaction of their own outside one), reads
    with PGX_READ; every statement is prepared once per connection
    (xxl_store_pg_conn.c's cache), placeholders as written ('$').
    MUST: be complete and of XXL_STORE_DRIVER_VERSION (the constructor
    asserts xxl_store_driver_ok); a row and its columns are valid only
    inside the read function.
    MUST NOT: add a statement or a round trip to what the shared body
    asks: each driver call is one pgx_run.
    Calls: xxl_store_pg_conn.c, and names the dialect's texts
    (pgx_statements, xxl_store_pg_rows.c); nothing above it.
    Errors: as xxl_store_pg_conn.c records them.
*/

#include "xxl_store_pg_int.h"

#include <assert.h>
#include <libpq-fe.h>
#include <stdarg.h>

static int
s_driver_exec (xxl_store_t *base, const char *sql, const char *fmt, va_list args)
{
    PGresult *result = pgx_runv ((store_t *) base, PGX_WRITE, sql, fmt, args);
    if (!result)
        return -1;
    int changes = pgx_changes (result);
    PQclear (result);
    return changes;
}

static int64_t
s_driver_scalar (xxl_store_t *base, const char *sql, const char *fmt, va_list args)
{
    return pgx_scalarv ((store_t *) base, PGX_READ, sql, fmt, args);
}

static char *
s_driver_text (xxl_store_t *base, const char *sql, const char *fmt, va_list args)
{
    return pgx_textv ((store_t *) base, PGX_READ, sql, fmt, args);
}

static int
s_driver_id_list (xxl_store_t *base, int64_t *ids, size_t max, size_t *count,
                  const char *sql, const char *fmt, va_list args)
{
    return pgx_id_listv ((store_t *) base, ids, max, count, sql, fmt, args);
}

static int
s_driver_encode (xxl_store_t *base, xxl_enc_t *enc, int rows_as_array, size_t max_size,
                 int *truncated, const char *sql, const char *fmt, va_list args)
{
    return pgx_encodev ((store_t *) base, PGX_READ, enc, rows_as_array, max_size, truncated,
                        sql, fmt, args);
}

//  A row is a result and a row number in it
struct _xxl_store_row_t {
    const PGresult *result;
    int row;
};

static int
s_driver_row (xxl_store_t *base, const char *what, xxl_store_read_fn *read, void *arg,
              const char *sql, const char *fmt, va_list args)
{
    (void) what;                        //  (pgx_run names the query by its text)
    PGresult *result = pgx_runv ((store_t *) base, PGX_READ, sql, fmt, args);
    if (!result)
        return -1;
    int rc = 0;
    if (PQntuples (result) > 0) {
        xxl_store_row_t row = { result, 0 };
        read (&pgx_driver, &row, arg);
        rc = 1;
    }
    PQclear (result);
    return rc;
}

static int64_t
s_driver_column_int (const xxl_store_row_t *row, int column)
{
    return pgx_int (row->result, row->row, column);
}

static double
s_driver_column_double (const xxl_store_row_t *row, int column)
{
    return pgx_double (row->result, row->row, column);
}

static char *
s_driver_column_text (const xxl_store_row_t *row, int column)
{
    return pgx_string (row->result, row->row, column);
}

static void
s_driver_set_error (xxl_store_t *base, const char *text)
{
    store_t *self = (store_t *) base;
    snprintf (self->error, sizeof self->error, "%s", text);
}

const xxl_store_driver_t pgx_driver = {
    .version = XXL_STORE_DRIVER_VERSION,
    .size = sizeof (xxl_store_driver_t),
    .name = "postgresql",
    .placeholder = '$',
    .exec = s_driver_exec,
    .scalar = s_driver_scalar,
    .text = s_driver_text,
    .id_list = s_driver_id_list,
    .encode = s_driver_encode,
    .sql = pgx_statements,
    .row = s_driver_row,
    .column_int = s_driver_column_int,
    .column_double = s_driver_column_double,
    .column_text = s_driver_column_text,
    .set_error = s_driver_set_error,
};
