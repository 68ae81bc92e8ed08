/*  xxl_store_sqlite_int.h -- inside the SQLite backend: what its files
    share, and no one else may use.

    The files, top to bottom (calls go down only; no two call each other):
    -   xxl_store_sqlite.c: opening and migrating, transactions and the
        WAL, the method tables;
    -   xxl_store_sqlite_rows.c (the row calls that stay SQLite's own, the
        dialect's texts sq_statements) and _driver.c (the driver of the
        shared SQL, xxl_store_sql.h);
    -   xxl_store_sqlite_conn.c: the statement cache ($N rewritten as ?N
        on prepare), binding, the helpers below and errors.

    The helpers (sq_*) take the backend's own struct.  Statements are
    cached by the address of their SQL text: pass string literals.  fmt
    binds the arguments in order: 'i' int64_t, 'd' double, 's' text (NULL
    binds NULL; bound without a copy: alive until the call returns), 'n'
    NULL.  Every helper steps its statement to the end (or as far as it
    reads) and resets it before it returns.  Errors: -1 (or NULL), the
    reason in self->error, logged at most once per cause per 10 s; a
    write inside a transaction that SQLite ended on its own (a full disk)
    fails with that cause and does not run.
*/

#ifndef XXL_STORE_SQLITE_INT_H_INCLUDED
#define XXL_STORE_SQLITE_INT_H_INCLUDED

#include "xxl_store_sqlite.h"
#include "xxl_store_sql.h"

#include <czmq.h>
#include <sqlite3.h>
#include <stdarg.h>

//  Log ids a handle reserves at once in sqlite_sequence, inside its write
//  transaction (sq_log_next_id): an INSERT whose id is at most the
//  sequence's value leaves sqlite_sequence alone, so rows of a block cost
//  no write of it (AUTOINCREMENT's other rule stands: an id is never
//  handed out twice, whatever rows are deleted)
#define XXL_SQLITE_LOG_ID_BLOCK 4096
_Static_assert (XXL_SQLITE_LOG_ID_BLOCK >= 4 * XXL_STORE_LOG_ID_RUN, "a block holds runs");

//  A log row log_add deferred (sq_log_defer): its integer columns, and its
//  text columns as offsets into the handle's deferred text (-1: NULL)
typedef struct {
    int64_t job_group, job_id, retry_count, trigger_time, trigger_code, id, slot;
    int64_t schedule_time;              //  0: NULL
    int64_t text [6];                   //  address, handler, param, sharding, msg, type
} sq_deferred_t;

typedef struct {
    xxl_store_sql_t sql;                //  first: the interface (methods), the driver
    sqlite3 *db;
    zhashx_t *statements;               //  sql pointer → sqlite3_stmt
    zactor_t *checkpointer;             //  WAL checkpoints off the caller's thread
    int wal_size;                       //  frames: the WAL starts over at this size
    int wal_frames;                     //  frames in the WAL after the last commit
    int wal_nudged;                     //  wal_frames when the checkpointer was last nudged
    bool wal_head_start;                //  the last commit nudged it past wal_size: the
                                        //  writer's restart waits a commit (sq_wal_due)
    int wal_retry;                      //  a restart that did not happen: not again before
    int in_txn;
    //  The log ids this handle reserved in sqlite_sequence ([ids_next,
    //  ids_end), sq_log_next_id), the highest it added, and whether the
    //  open transaction made the reservation (its rollback undoes it)
    int64_t ids_next, ids_end, ids_used;
    int ids_reserved;
    //  SQLite ended the transaction on its own (a full disk, an I/O error):
    //  until the caller's commit or rollback, no write may run, since it
    //  would commit alone; txn_cause keeps the error that ended it
    int txn_lost;
    char txn_cause [512];
    //  Log rows log_add deferred in the open transaction (sq_log_defer),
    //  oldest first, and their texts; flushing: their INSERTs are running
    sq_deferred_t *deferred;
    size_t deferred_count, deferred_size;
    char *deferred_text;
    size_t deferred_used, deferred_text_size;
    bool flushing;
    //  Until this monotonic time (ms) planned rows go at once, not
    //  deferred: a flush of deferred planned rows failed on a unique rule
    //  (a clash the caller did not expect), so that such a clash refuses
    //  its own row, as it does when written at once, rather than the
    //  transaction again
    int64_t planned_at_once_until;
    char error [512];
    //  One log line per cause per XXL_STORE_LOG_MS (a full disk fails
    //  every statement of every turn)
    xxl_store_logged_t logged [XXL_STORE_LOG_CAUSES];     //  error lines (xxl_store_log_error)
} store_t;

//  The dialect's statements of the shared bodies (xxl_store_sqlite_rows.c)
extern const char *const sq_statements [XXL_SQL_STATEMENTS];
//  The method table (xxl_store_sqlite.c)
extern const xxl_store_methods_t sq_methods;
//  Users, tokens and sessions (xxl_store_sqlite.c, all shared)
extern const xxl_store_accounts_t sq_accounts;
extern const xxl_store_calendars_t sq_calendars;
extern const xxl_store_backfills_t sq_backfills;
//  The driver of the shared SQL (xxl_store_sqlite_driver.c)
extern const xxl_store_driver_t sq_driver;

//  The row calls that stay SQLite's own (xxl_store_sqlite_rows.c):
//  sq_<slot>, of that slot's type
#define SQ_ROWS_SLOTS(X) \
    X (clock_now) X (fired_get) X (glue_add) X (group_add) X (group_update) X (job_add) \
    X (job_due_in) X (lease_fired) X (lease_list) X (log_add) X (log_copy_shard) \
    X (log_encode_page) X (log_next_id) X (log_ids_past) X (log_set_shard) X (log_unroute) X (report_count) \
    X (report_totals) X (report_count_groups) X (workflow_add) X (workflow_run_add)
#define SQ_DECLARE(slot) extern __typeof__ (*((xxl_store_methods_t *) 0)->slot) sq_##slot;
SQ_ROWS_SLOTS (SQ_DECLARE)

//  Records the database's error for `what` in self->error, logs it; -1
int sq_fail (store_t *self, const char *what);
//  The cached statement for sql, reset and unbound; NULL on error
sqlite3_stmt *sq_prepare (store_t *self, const char *sql);
int sq_bind (store_t *self, sqlite3_stmt *stmt, const char *fmt, ...);
int sq_bindv (store_t *self, sqlite3_stmt *stmt, const char *fmt, va_list args);
//  Steps a statement that returns no row; changes() or -1
int sq_done (store_t *self, sqlite3_stmt *stmt);
//  A column as a new string ("" for NULL)
char *sq_column_text (sqlite3_stmt *stmt, int column);
//  A statement with no result rows: changes() or -1
int sq_exec (store_t *self, const char *sql, const char *fmt, ...);
//  The first column of the first row; -1 when there is none or on error
int64_t sq_scalar (store_t *self, const char *sql, const char *fmt, ...);
//  The first column of the first row as a new string; NULL when there is
//  none, it is NULL, or on error
char *sq_text (store_t *self, const char *sql, const char *fmt, ...);
//  The first column of up to max rows into ids (the statement's LIMIT is
//  among its arguments); 0 with *count, or -1
int sq_id_list (store_t *self, int64_t *ids, size_t max, size_t *count, const char *sql,
                const char *fmt, ...);
//  Rows as maps keyed by column name (INTEGER int, REAL float64, NULL nil,
//  else str).  encode: an array of all rows (rows_as_array) or the first
//  row's map alone.  encode_max: an array that stops before a row would
//  take the encoder past max_size bytes (*truncated 1).  The count or -1.
int sq_encode (store_t *self, xxl_enc_t *enc, int rows_as_array, const char *sql,
               const char *fmt, ...);
int sq_encode_max (store_t *self, xxl_enc_t *enc, size_t max_size, int *truncated,
                   const char *sql, const char *fmt, ...);
//  The same with a va_list (the driver's, the test hooks'); exec_once:
//  prepared, run and finalized, not cached (text built at run time)
int sq_execv (store_t *self, const char *sql, const char *fmt, va_list args);
int sq_exec_oncev (store_t *self, const char *sql, const char *fmt, va_list args);
int64_t sq_scalarv (store_t *self, const char *sql, const char *fmt, va_list args);
char *sq_textv (store_t *self, const char *sql, const char *fmt, va_list args);
int sq_id_listv (store_t *self, int64_t *ids, size_t max, size_t *count, const char *sql,
                 const char *fmt, va_list args);
int sq_encodev (store_t *self, xxl_enc_t *enc, int rows_as_array, size_t max_size,
                int *truncated, const char *sql, const char *fmt, va_list args);
//  Deferred log rows.  sq_log_defer keeps a copy of *log (a row of the
//  open transaction with an id of the caller's, and either no
//  schedule_time, when no unique rule can refuse it, or planned_new, when
//  the caller knows none should: sq_log_defers says which); sq_flush
//  writes the rows kept as multi-row
//  INSERTs, and runs before every other statement (sq_prepare,
//  sq_exec_oncev, the commit), so every later statement of the
//  transaction sees them.  A flush that fails loses the transaction
//  (rolled back, txn_lost with the cause): the statement that caused it
//  fails, and so does the commit.  sq_deferred_drop forgets them (a
//  rollback); sq_deferred_free frees the buffers.  0 or -1.
bool sq_log_defers (store_t *self, const xxl_log_t *log);
int sq_log_defer (store_t *self, const xxl_log_t *log);
int sq_flush (store_t *self);
void sq_deferred_drop (store_t *self);
void sq_deferred_free (store_t *self);
//  A new statement cache (sql pointer -> sqlite3_stmt, finalized with it)
zhashx_t *sq_cache_new (void);

//  The connection's methods (xxl_store.h)
void sq_destroy (xxl_store_t *base);
const char *sq_error (xxl_store_t *base);
int sq_schema_version (xxl_store_t *base);
int sq_begin (xxl_store_t *base);
int sq_commit (xxl_store_t *base);
int sq_rollback (xxl_store_t *base);
int sq_in_txn (xxl_store_t *base);
int64_t sq_data_version (xxl_store_t *base);
void sq_set_wal_size (xxl_store_t *base, int mib);
int sq_wal_due (xxl_store_t *base);
int sq_wal_restart (xxl_store_t *base);

#endif
