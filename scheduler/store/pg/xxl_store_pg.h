/*  xxl_store_pg.h -- the store's PostgreSQL backend (xxl_store.h), on
    libpq.

    One handle is one connection.  begin is BEGIN plus shared
    transaction-level advisory locks, one per share the handle holds (the
    fence: a share changes hands only while no transaction of its holder
    is open); the first statement of a
    transaction that is not of the runs' hot path takes an exclusive one
    (the write lock), on which schedulers sharing a database serialize as
    they do on SQLite's BEGIN IMMEDIATE.  Two schedulers whose turns only
    record runs' results wait for each other only on a row both write.  A
    sequence drawn by each committing write transaction stands in for
    PRAGMA data_version, and another hands the log ids out by blocks.
    Statements are prepared once per connection and cached by the address
    of their SQL text.  xxl_store_pg.c says how each contract maps, the
    timeouts set on connect, and reconnection.
*/

#ifndef XXL_STORE_PG_H_INCLUDED
#define XXL_STORE_PG_H_INCLUDED

#include "xxl_store.h"

//  Connects to the database of a postgresql:// or postgres:// URL (libpq's
//  connection URI) and migrates it.  Returns NULL with a reason in err;
//  the reason never holds the URL's password.
xxl_store_t *xxl_store_pg_new (const char *url, char *err, size_t errlen);

//  The same, for a side connection (xxl_store_side_new): its statements
//  may run 10 minutes (statement_timeout 600 s), not 10 s (the reporter
//  counts the last days' rows in one statement)
xxl_store_t *xxl_store_pg_side_new (const char *url, char *err, size_t errlen);

//  For tests only, on a handle this backend made: PostgreSQL SQL with
//  parameters $1, $2, ... bound by fmt ('i' int64_t, 'd' double, 's' text
//  or NULL, 'n' NULL), run as the backend runs its own (a write outside a
//  transaction takes the write lock in a transaction of its own) but not
//  cached, so the text may be built at run time.  exec: the rows changed
//  (0 for a statement that changes none) or -1.  scalar: the first column
//  of the first row, -1 when none or on error.  text: a new string, NULL
//  when none.  encode: rows as maps keyed by column names (an array when
//  rows_as_array); the count.
int xxl_store_pg_exec (xxl_store_t *self, const char *sql, const char *fmt, ...);
int64_t xxl_store_pg_scalar (xxl_store_t *self, const char *sql, const char *fmt, ...);
char *xxl_store_pg_text (xxl_store_t *self, const char *sql, const char *fmt, ...);
int xxl_store_pg_encode (xxl_store_t *self, xxl_enc_t *enc, int rows_as_array,
                         const char *sql, const char *fmt, ...);

#endif
