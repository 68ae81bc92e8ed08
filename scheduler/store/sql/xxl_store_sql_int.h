/*  xxl_store_sql_int.h -- inside the shared SQL (scheduler/store/sql): the
    calls the body files (xxl_store_sql_*.c) make through a handle's
    driver, kept by xxl_store_sql.c.  No backend and nothing above the
    store uses them: a backend is the driver these calls reach.

    The body files (xxl_store_sql_jobs.c, _logs.c, _registry.c,
    _accounts.c) share one contract:
    MUST: every statement means the same on every backend (standard SQL
    that SQLite and PostgreSQL read alike, $N placeholders, COALESCE,
    CASE, EXISTS, ON CONFLICT with excluded); a statement each dialect
    words its own way is the driver's text (xsql_sql, xxl_store_stmt_t);
    a write goes through xsql_exec (PostgreSQL runs a write outside a
    transaction in one of its own and marks one inside as writing), a
    read through the readers.
    MUST NOT: run more statements than the backends' former bodies did,
    add a transaction, or call a backend, the factory (xxl_store.c) or
    another body file: only these calls, below them.
    Errors: as the driver's calls return them (-1, NULL), the reason in
    the handle's error(); each method returns what its slot in
    xxl_store.h says.

    Each call below is the driver's call of the same name (xxl_store_sql.h) with the
    arguments in line: same statement, same binds, same result, nothing
    added.  The handle MUST begin with an xxl_store_sql_t whose driver is
    of this version (asserted).
*/

#ifndef XXL_STORE_SQL_INT_H_INCLUDED
#define XXL_STORE_SQL_INT_H_INCLUDED

#include "xxl_store_sql.h"

//  The handle's driver
const xxl_store_driver_t *xsql_driver (xxl_store_t *self);
//  The dialect's text of a statement (a string literal of the driver's)
const char *xsql_sql (xxl_store_t *self, xxl_store_stmt_t statement);
//  A write: the rows it changed, or -1
int xsql_exec (xxl_store_t *self, const char *sql, const char *fmt, ...);
//  The first column of the first row; -1 when none or on error
int64_t xsql_scalar (xxl_store_t *self, const char *sql, const char *fmt, ...);
//  The first column of the first row as a new string; NULL when none, NULL or on error
char *xsql_text (xxl_store_t *self, const char *sql, const char *fmt, ...);
//  The first column of up to max rows; 0 with *count, or -1
int xsql_id_list (xxl_store_t *self, int64_t *ids, size_t max, size_t *count, const char *sql,
                  const char *fmt, ...);
//  Rows as maps (an array, or the first row's map alone); the count or -1
int xsql_encode (xxl_store_t *self, xxl_enc_t *enc, int rows_as_array, const char *sql,
                 const char *fmt, ...);
//  An array of rows that stops before passing max_size bytes (*truncated 1)
int xsql_encode_max (xxl_store_t *self, xxl_enc_t *enc, size_t max_size, int *truncated,
                     const char *sql, const char *fmt, ...);
//  The first row handed to read (what names the query in errors): 1, 0 none, -1
int xsql_row (xxl_store_t *self, const char *what, xxl_store_read_fn *read, void *arg,
              const char *sql, const char *fmt, ...);

#endif
