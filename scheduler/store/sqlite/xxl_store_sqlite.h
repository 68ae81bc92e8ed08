/*  xxl_store_sqlite.h -- the store's SQLite backend (xxl_store.h).

    One file holds the database, in WAL mode with synchronous=NORMAL; a
    checkpointer thread copies the WAL into it without blocking the
    writer, and the writer starts the WAL over when it has grown
    (xxl_store.h, wal_*).  begin is BEGIN IMMEDIATE: schedulers sharing
    the file serialize on its write lock.  Statements are prepared once
    and cached by the address of their SQL text.
*/

#ifndef XXL_STORE_SQLITE_H_INCLUDED
#define XXL_STORE_SQLITE_H_INCLUDED

#include "xxl_store.h"

//  Opens (creating if needed) the database at path and migrates it.
//  Returns NULL with a reason in err.
xxl_store_t *xxl_store_sqlite_new (const char *path, char *err, size_t errlen);

//  The same, for a side connection of a process whose main handle (made
//  by xxl_store_sqlite_new) keeps the WAL: no checkpointer thread, and
//  no checkpoint inside its own commits.
xxl_store_t *xxl_store_sqlite_side_new (const char *path, char *err, size_t errlen);

//  For tests only, on a handle this backend made: SQL with arguments bound
//  by fmt ('i' int64_t, 'd' double, 's' text or NULL, 'n' NULL).  exec:
//  changes() or -1 (SQL text that does not live as long as the store:
//  exec_once).  scalar: the first column of the first row, -1 when none
//  or on error.  text: a new string, NULL when none.  encode: rows as
//  maps keyed by column names (an array when rows_as_array); the count.
int xxl_store_sqlite_exec (xxl_store_t *self, const char *sql, const char *fmt, ...);
int xxl_store_sqlite_exec_once (xxl_store_t *self, const char *sql, const char *fmt, ...);
int64_t xxl_store_sqlite_scalar (xxl_store_t *self, const char *sql, const char *fmt, ...);
char *xxl_store_sqlite_text (xxl_store_t *self, const char *sql, const char *fmt, ...);
int xxl_store_sqlite_encode (xxl_store_t *self, xxl_enc_t *enc, int rows_as_array,
                             const char *sql, const char *fmt, ...);

#endif
