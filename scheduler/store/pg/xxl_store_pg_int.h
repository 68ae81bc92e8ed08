/*  xxl_store_pg_int.h -- inside the PostgreSQL backend: what its files
    share, and no one else may use.

    The files, top to bottom (calls go down only; no two call each other):
    -   xxl_store_pg.c: connecting and migrating, the session,
        transactions and reconnection, the method tables;
    -   xxl_store_pg_rows.c (the row calls that stay PostgreSQL's own, the
        dialect's texts pgx_statements), _lease.c (calls by share),
        _batch.c (deferred and batched log rows), _driver.c (the driver
        of the shared SQL);
    -   xxl_store_pg_conn.c: the statement cache, binding, results and
        errors.
    A lower file reaches the upper ones only through the handle: its
    method table (begin, commit, rollback) and self->flush.

    The helpers (pgx_*) take the backend's own struct.  Statements are
    prepared once per connection and cached by the address of their SQL
    text: pass string literals (PGX_ONCE runs text built at run time
    without caching it).  fmt gives the parameters $1, $2, ... in order:
    'i' int64_t (sent as int8), 'd' double (float8), 's' text (NULL sends
    NULL; the string is read before the call returns), 'n' NULL.  A
    cached statement is always used with the fmt it was prepared with.

    Writes: a statement run with PGX_WRITE outside a transaction runs in
    one of its own (begin, the statement, commit: the write lock, as an
    autocommit write takes SQLite's); inside one it marks the transaction
    as writing, so that its commit bumps data_version.

    Errors: -1 (or NULL), the reason in self->error, logged at most once
    per cause per 10 s.  Once PostgreSQL aborted the caller's transaction
    (any error inside one does) every statement fails with that first
    cause without being sent, and commit fails, until commit or rollback
    ends it.  Unique violations a call turns into a result are avoided in
    SQL (ON CONFLICT DO NOTHING, guards), never left to abort.
*/

#ifndef XXL_STORE_PG_INT_H_INCLUDED
#define XXL_STORE_PG_INT_H_INCLUDED

#include "xxl_store_pg.h"
#include "xxl_store_sql.h"

#include <czmq.h>
#include <libpq-fe.h>
#include <stdarg.h>

//  Log rows log_add deferred (xxl_store_pg_batch.c)
typedef struct _pgx_deferred_t pgx_deferred_t;
//  A statement run without the write lock that may have locked rows
//  (xxl_store_pg_conn.c: kept until the transaction takes the lock)
typedef struct _pgx_replay_t pgx_replay_t;

typedef struct _store_t store_t;
struct _store_t {
    xxl_store_sql_t sql;                //  first: the interface (methods), the driver
    PGconn *conn;
    bool side;                          //  a side connection (xxl_store_side_new)
    zhashx_t *statements;               //  sql pointer → statement_t
    unsigned statement_seq;             //  names the next prepared statement
    int in_txn;
    //  PostgreSQL aborted the transaction (an error in it, or the
    //  connection lost): until the caller's commit or rollback nothing
    //  is sent; txn_cause keeps the error that aborted it
    int txn_lost;
    char txn_cause [512];
    int txn_dirty;                      //  a write ran in this transaction
    int64_t txn_log_max;                //  the highest log id it added itself (0 none)
    int64_t txn_version;                //  xxl_data_versions' value begin read (-1 none)
    //  The store-wide write lock (the advisory lock XXL_PG_WRITE_LOCK):
    //  txn_locked once this transaction holds it; lock_free while a call
    //  that needs no lock runs (pgx_free_*, the deferred rows' flush)
    int txn_locked;
    int lock_free;
    //  The statements this transaction ran without the write lock that
    //  may hold rows (none once it holds the lock): pgx_lock runs them
    //  again after the lock when it must not wait holding their rows
    pgx_replay_t **replays;
    size_t replays_count, replays_max;
    uint64_t shares_held;               //  the shares held, bit s for share s
    //  The log ids this handle reserved (xxl_log_ids' block [ids_next,
    //  ids_end)): log_next_id hands runs of XXL_STORE_LOG_ID_RUN from it
    int64_t ids_next, ids_end;
    int64_t ids_used;                   //  the highest id it added (never handed out again)
    pgx_deferred_t *deferred;           //  rows log_add deferred (NULL: none yet)
    //  Writes the deferred rows (pgx_flush, set by the constructor): the
    //  statement cache's pgx_run calls it first inside a transaction
    int (*flush) (store_t *self);
    //  data_version: the counter row's value this handle accounts for
    //  (its own commits move it along), and the number it reports, which
    //  moves only when another connection's commit moved the row
    int64_t version_seen;
    int64_t version_reported;
    int64_t reconnect_at;               //  no reconnection try before (zclock_mono)
    char *password;                     //  the URL's, kept out of errors (NULL none)
    char error [512];
    //  Error lines: one per cause per 10 s (xxl_store_log_error)
    xxl_store_logged_t logged [XXL_STORE_LOG_CAUSES];
};

//  The advisory lock key of the store-wide write lock (the bytes of
//  "xxl_wlck" read as a big-endian integer)
#define XXL_PG_WRITE_LOCK "8680807439037916011"
//  The fence locks: (XXL_PG_FENCE_CLASS, share), one per share (the
//  bytes of "xxlf" read as a big-endian integer).  Every transaction
//  holds those of the shares its handle holds shared from its BEGIN; a
//  take of a share another owned needs that share's alone.
#define XXL_PG_FENCE_CLASS "2021157990"
//  xxl_log_ids' increment: the log ids a handle reserves at a time
#define XXL_PG_LOG_ID_BLOCK 4096
_Static_assert (XXL_PG_LOG_ID_BLOCK >= 4 * XXL_STORE_LOG_ID_RUN, "a block holds runs");

//  Bit (share of col) of mask $1
#define XXL_IN_MASK(col) " (($1::BIGINT >> (" col " % 16)::INTEGER) & 1) = 1 "

//  pgx_run's flags
#define PGX_READ  0
#define PGX_WRITE 1                     //  see "Writes" above
#define PGX_ONCE  2                     //  not cached: sql need not outlive the call

//  The dialect's statements of the shared bodies (xxl_store_pg_rows.c)
extern const char *const pgx_statements [XXL_SQL_STATEMENTS];
//  The method table (xxl_store_pg.c)
extern const xxl_store_methods_t pgx_methods;
//  Users, tokens and sessions (xxl_store_pg.c, all shared)
extern const xxl_store_accounts_t pgx_accounts;
extern const xxl_store_calendars_t pgx_calendars;
extern const xxl_store_backfills_t pgx_backfills;
//  The driver of the shared SQL (xxl_store_pg_driver.c)
extern const xxl_store_driver_t pgx_driver;

//  The row calls that stay PostgreSQL's own (xxl_store_pg_rows.c):
//  pgx_<slot>, of that slot's type
#define PGX_ROWS_SLOTS(X) \
    X (group_add) X (group_update) X (job_add) X (glue_add) X (log_next_id) X (log_ids_past) X (log_add) \
    X (log_unroute) X (log_set_shard) X (log_copy_shard) X (fired_get) X (log_encode_page) \
    X (report_count) X (report_totals) X (report_count_groups) X (workflow_add) \
    X (workflow_run_add)
#define PGX_DECLARE(slot) extern __typeof__ (*((xxl_store_methods_t *) 0)->slot) pgx_##slot;
PGX_ROWS_SLOTS (PGX_DECLARE)

//  Version 3's leases and calls by share (xxl_store_pg_lease.c)
int pgx_lease_list (xxl_store_t *base, xxl_lease_t *rows);
int pgx_lease_fired (xxl_store_t *base, uint64_t mask, int64_t until, int64_t sent);
int64_t pgx_clock_now (xxl_store_t *base);
int pgx_job_due_in (xxl_store_t *base, uint64_t mask, int64_t before, xxl_store_due_t *rows,
                    size_t max, size_t *count);

//  Takes the store-wide write lock for the rest of the caller's
//  transaction (once; nothing outside one).  0, or -1.  Lock order: the
//  fence locks (begin), then the write lock, then rows.  A transaction
//  that changed rows without the lock never waits for it holding them
//  (the holder may be waiting for one of them: a deadlock): when the lock
//  is not free at once, it rolls back to the savepoint begin set
//  (XXL_PG_SAVEPOINT: its rows freed, the fence locks kept), waits for
//  the lock, and runs those statements again; a result that differs (a
//  row another changed meanwhile) fails the transaction (-1, lost).
int pgx_lock (store_t *self);
//  Forgets the statements kept for pgx_lock (commit, rollback, begin)
void pgx_replays_drop (store_t *self);
//  The savepoint begin sets after the fence locks
#define XXL_PG_SAVEPOINT "xxl_free"

//  Records the reason for `what` (the result's error, else the
//  connection's) in self->error, notes an aborted transaction, logs it; -1
int pgx_fail (store_t *self, const char *what, const PGresult *result);
//  Records a reason of the backend's own (not PostgreSQL's); -1
int pgx_failf (store_t *self, const char *format, ...);
//  Runs sql; the result (rows or a command's), which the caller clears
//  with PQclear, or NULL on error
PGresult *pgx_run (store_t *self, int flags, const char *sql, const char *fmt, ...);
PGresult *pgx_runv (store_t *self, int flags, const char *sql, const char *fmt, va_list args);
//  A write: the rows it changed (a command's count), or -1
int pgx_exec (store_t *self, const char *sql, const char *fmt, ...);
//  A read: the first column of the first row; -1 when there is none or on
//  error (NULL is 0, a boolean 1 or 0, as SQLite's column_int64 reads)
int64_t pgx_scalar (store_t *self, const char *sql, const char *fmt, ...);
//  A read: the first column of the first row as a new string; NULL when
//  there is none, it is NULL, or on error
char *pgx_text (store_t *self, const char *sql, const char *fmt, ...);
//  A read: the first column of up to max rows into ids (the statement's
//  LIMIT is among its arguments); 0 with *count, or -1
int pgx_id_list (store_t *self, int64_t *ids, size_t max, size_t *count, const char *sql,
                 const char *fmt, ...);
//  Rows as maps keyed by column name (integers int, floats float64, NULL
//  nil, booleans 1/0, else str).  encode: an array of all rows
//  (rows_as_array) or the first row's map alone.  encode_max: an array
//  that stops before a row would take the encoder past max_size bytes
//  (*truncated 1).  The count or -1.
int pgx_encode (store_t *self, xxl_enc_t *enc, int rows_as_array, const char *sql,
                const char *fmt, ...);
int pgx_encode_max (store_t *self, xxl_enc_t *enc, size_t max_size, int *truncated,
                    const char *sql, const char *fmt, ...);
//  A value of a result: as an integer (NULL 0), as a double, as a new
//  string ("" for NULL)
int64_t pgx_int (const PGresult *result, int row, int column);
double pgx_double (const PGresult *result, int row, int column);
char *pgx_string (const PGresult *result, int row, int column);
//  The rows a command changed (PQcmdTuples), 0 when it says none
int pgx_changes (const PGresult *result);
//  The readers with a va_list and pgx_run's flags (the driver's, the
//  test hooks' PGX_ONCE)
int64_t pgx_scalarv (store_t *self, int flags, const char *sql, const char *fmt, va_list args);
char *pgx_textv (store_t *self, int flags, const char *sql, const char *fmt, va_list args);
int pgx_id_listv (store_t *self, int64_t *ids, size_t max, size_t *count, const char *sql,
                  const char *fmt, va_list args);
int pgx_encodev (store_t *self, int flags, xxl_enc_t *enc, int rows_as_array, size_t max_size,
                 int *truncated, const char *sql, const char *fmt, va_list args);
//  Runs sql (several statements allowed, no parameters) with the simple
//  protocol, uncached; 0, or -1 with the error recorded.  value (if not
//  NULL): the first column of the last statement's first row (-1 none)
int pgx_simple_value (store_t *self, const char *sql, int64_t *value);
//  A new statement cache (sql pointer -> prepared statement)
zhashx_t *pgx_cache_new (void);
//  Text helpers for errors: message on one line into out; each secret in
//  text replaced by instead (redact: by ***)
void pgx_one_line (char *out, size_t size, const char *message);
void pgx_replace (char *text, size_t size, const char *secret, const char *instead);
void pgx_redact (char *text, size_t size, const char *secret);
//  A log row this handle added with an id of its own: later automatic ids
//  stay above it (its transaction's commit records it)
void pgx_log_id_used (store_t *self, int64_t id);
//  The transaction is lost (the cause in self->error): nothing more is
//  sent until its commit or rollback, and the commit fails
void pgx_txn_lose (store_t *self);

//  xxl_store_pg_batch.c (see its header).  defer_log: buffers a row with
//  an id of the caller's and no schedule_time, inside a transaction; 0, or
//  -1 (the transaction lost).  flush: writes the buffered rows (pgx_run
//  and commit call it first); 0, or -1 with the transaction lost.
//  deferred_drop: forgets them (rollback).
int pgx_defer_log (store_t *self, const xxl_log_t *log);
int pgx_flush (store_t *self);
size_t pgx_deferred_rows (store_t *self);
void pgx_deferred_drop (store_t *self);
void pgx_deferred_destroy (pgx_deferred_t **self_p);
int pgx_log_handle_done_many (xxl_store_t *base, const xxl_store_done_t *items, size_t count,
                              int *done);

//  The connection's methods (xxl_store.h)
void pgx_destroy (xxl_store_t *base);
const char *pgx_error (xxl_store_t *base);
int pgx_schema_version (xxl_store_t *base);
int pgx_begin (xxl_store_t *base);
int pgx_commit (xxl_store_t *base);
int pgx_rollback (xxl_store_t *base);
int pgx_in_txn (xxl_store_t *base);
int64_t pgx_data_version (xxl_store_t *base);
void pgx_wal_set_size (xxl_store_t *base, int mib);
int pgx_wal_due (xxl_store_t *base);
int pgx_wal_restart (xxl_store_t *base);

#endif
