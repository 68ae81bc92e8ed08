/*  xxl_store_sqlite_conn.c -- the bottom of the SQLite backend: a
    connection's statements.

    Owns: the statement cache (prepared once, keyed by the address of the
    SQL text -- callers pass string literals -- so a hot path costs one
    bind and one step; sq_cache_new), the $N -> ?N rewrite on prepare,
    binding (fmt: 'i' int64_t, 'd' double, 's' text, 'n' NULL), the
    helpers that run a statement (sq_exec, sq_scalar, sq_text, sq_id_list,
    sq_encode and their va_list forms), recording errors (sq_fail: the
    reason in self->error, a line per cause per 10 s through
    xxl_store_log_error), and the log rows log_add defers (sq_log_defer,
    written by sq_flush as INSERTs of up to 32 rows each: one statement's
    overhead, the cursors on the table and its nine indexes opened once,
    for many rows).

    MUST: step each statement to the end (or as far as it reads) and reset
    it before returning; fail a write inside a transaction that SQLite
    ended on its own (a full disk) with that cause, without running it;
    write the deferred rows before any other statement runs.
    MUST NOT: call any other file of the backend (it is below all of
    them: _rows.c, _driver.c and xxl_store_sqlite.c call it), nor anything
    of the store but the shared helpers below it (scheduler/store/sql).

    Errors: -1 or NULL, the reason in self->error.
*/

#include "xxl_store_sqlite_int.h"

#include <assert.h>
#include <czmq.h>
#include <sqlite3.h>
#include <inttypes.h>
#include <stdarg.h>

//  Logs self->error (xxl_store_log_error: a line per cause per 10 s)
static void
s_log_error (store_t *self)
{
    xxl_store_log_error (self->logged, self->error);
}

int
sq_fail (store_t *self, const char *what)
{
    snprintf (self->error, sizeof self->error, "%s: %s", what,
              self->db? sqlite3_errmsg (self->db): "no database");
    if (self->in_txn && !self->txn_lost && self->db && sqlite3_get_autocommit (self->db)) {
        self->txn_lost = 1;
        snprintf (self->txn_cause, sizeof self->txn_cause, "%s", self->error);
    }
    s_log_error (self);
    return -1;
}

static void
s_statement_destroy (void **item)
{
    if (*item) {
        sqlite3_finalize ((sqlite3_stmt *) *item);
        *item = NULL;
    }
}

//  False, with the cause as the error, for a write in a transaction that
//  SQLite ended on its own (it would commit alone, outside the turn)
static bool
s_writable (store_t *self, sqlite3_stmt *stmt)
{
    if (self->in_txn && !self->txn_lost && sqlite3_get_autocommit (self->db)) {
        self->txn_lost = 1;
        snprintf (self->txn_cause, sizeof self->txn_cause, "%s", self->error);
    }
    if (!self->txn_lost || sqlite3_stmt_readonly (stmt))
        return true;
    snprintf (self->error, sizeof self->error, "%s", self->txn_cause);
    return false;
}

//  A statement not yet in the cache, prepared and kept; NULL on error.
//  The shared SQL's $N placeholders (xxl_store_sql.h) become SQLite's ?N
//  here, once: the statement is cached by the address of the caller's text
static sqlite3_stmt *
s_prepare_new (store_t *self, const char *sql)
{
    char rewritten [8192];
    const char *text = sql;
    if (strchr (sql, '$')) {
        text = xxl_store_sql_question_marks (sql, rewritten, sizeof rewritten);
        if (!text) {
            snprintf (self->error, sizeof self->error, "prepare: a statement over %zu bytes",
                      sizeof rewritten);
            s_log_error (self);
            return NULL;
        }
    }
    sqlite3_stmt *stmt = NULL;
    if (sqlite3_prepare_v3 (self->db, text, -1, SQLITE_PREPARE_PERSISTENT, &stmt, NULL)
        != SQLITE_OK) {
        sq_fail (self, "prepare");
        return NULL;
    }
    zhashx_insert (self->statements, sql, stmt);
    return stmt;
}

sqlite3_stmt *
sq_prepare (store_t *self, const char *sql)
{
    //  (the cache is keyed by the text's address: a string literal)
    assert (self->statements && sql);
    //  The deferred rows go first: this statement may read them
    if (self->deferred_count && !self->flushing && sq_flush (self))
        return NULL;
    sqlite3_stmt *stmt = (sqlite3_stmt *) zhashx_lookup (self->statements, sql);
    if (stmt) {
        sqlite3_reset (stmt);
        sqlite3_clear_bindings (stmt);
        return s_writable (self, stmt)? stmt: NULL;
    }
    stmt = s_prepare_new (self, sql);
    return stmt && s_writable (self, stmt)? stmt: NULL;
}

//  Binds fmt's arguments ('i' int64_t, 'd' double, 's' text or NULL, any
//  other: NULL).  Text is bound without a copy (SQLITE_STATIC): every
//  function here steps its statement to the end and resets it before it
//  returns, while the caller's strings are alive, and sq_prepare clears
//  the bindings before a statement is used again.
int
sq_bindv (store_t *self, sqlite3_stmt *stmt, const char *fmt, va_list args)
{
    int index = 1;
    for (const char *f = fmt? fmt: ""; *f; f++, index++) {
        int rc;
        if (*f == 'i')
            rc = sqlite3_bind_int64 (stmt, index, va_arg (args, int64_t));
        else
        if (*f == 'd')
            rc = sqlite3_bind_double (stmt, index, va_arg (args, double));
        else
        if (*f == 's') {
            const char *text = va_arg (args, const char *);
            rc = text? sqlite3_bind_text (stmt, index, text, -1, SQLITE_STATIC)
                     : sqlite3_bind_null (stmt, index);
        }
        else
            rc = sqlite3_bind_null (stmt, index);
        if (rc != SQLITE_OK)
            return sq_fail (self, "bind");
    }
    return 0;
}

int
sq_bind (store_t *self, sqlite3_stmt *stmt, const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    int rc = sq_bindv (self, stmt, fmt, args);
    va_end (args);
    return rc;
}

//  Steps a statement that returns no row; returns changes() or -1
int
sq_done (store_t *self, sqlite3_stmt *stmt)
{
    int rc = sqlite3_step (stmt);
    sqlite3_reset (stmt);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        return sq_fail (self, "step");
    return sqlite3_changes (self->db);
}

char *
sq_column_text (sqlite3_stmt *stmt, int column)
{
    const unsigned char *text = sqlite3_column_text (stmt, column);
    return strdup (text? (const char *) text: "");
}

int
sq_exec_oncev (store_t *self, const char *sql, const char *fmt, va_list args)
{
    if (self->deferred_count && sq_flush (self))
        return -1;
    sqlite3_stmt *stmt = NULL;
    if (sqlite3_prepare_v2 (self->db, sql, -1, &stmt, NULL) != SQLITE_OK)
        return sq_fail (self, "prepare");
    if (!s_writable (self, stmt)) {
        sqlite3_finalize (stmt);
        return -1;
    }
    int rc = sq_bindv (self, stmt, fmt, args);
    int changes = rc? -1: sq_done (self, stmt);
    sqlite3_finalize (stmt);
    return changes;
}

int
sq_execv (store_t *self, const char *sql, const char *fmt, va_list args)
{
    sqlite3_stmt *stmt = sq_prepare (self, sql);
    if (!stmt)
        return -1;
    int rc = sq_bindv (self, stmt, fmt, args);
    return rc? -1: sq_done (self, stmt);
}

int
sq_exec (store_t *self, const char *sql, const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    int value = sq_execv (self, sql, fmt, args);
    va_end (args);
    return value;
}

int64_t
sq_scalarv (store_t *self, const char *sql, const char *fmt, va_list args)
{
    sqlite3_stmt *stmt = sq_prepare (self, sql);
    if (!stmt)
        return -1;
    int rc = sq_bindv (self, stmt, fmt, args);
    if (rc)
        return -1;
    int64_t value = -1;
    rc = sqlite3_step (stmt);
    if (rc == SQLITE_ROW)
        value = sqlite3_column_int64 (stmt, 0);
    else
    if (rc != SQLITE_DONE)
        sq_fail (self, "query");
    sqlite3_reset (stmt);
    return value;
}

int64_t
sq_scalar (store_t *self, const char *sql, const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    int64_t value = sq_scalarv (self, sql, fmt, args);
    va_end (args);
    return value;
}

char *
sq_textv (store_t *self, const char *sql, const char *fmt, va_list args)
{
    sqlite3_stmt *stmt = sq_prepare (self, sql);
    if (!stmt)
        return NULL;
    int rc = sq_bindv (self, stmt, fmt, args);
    if (rc)
        return NULL;
    char *value = NULL;
    rc = sqlite3_step (stmt);
    if (rc == SQLITE_ROW && sqlite3_column_type (stmt, 0) != SQLITE_NULL)
        value = sq_column_text (stmt, 0);
    else
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        sq_fail (self, "query");
    sqlite3_reset (stmt);
    return value;
}

char *
sq_text (store_t *self, const char *sql, const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    char *value = sq_textv (self, sql, fmt, args);
    va_end (args);
    return value;
}

//  Encodes the rows of a statement bound by fmt as maps whose keys are
//  the column names (camelCase with AS): INTEGER as int, REAL as float64,
//  NULL as nil, else str.  rows_as_array 0: only the first row's map
//  (nothing when there is none).  max_size > 0: an array that stops
//  before a row would take the encoder past max_size bytes (*truncated
//  1).  The number of rows, or -1.
int
sq_encodev (store_t *self, xxl_enc_t *enc, int rows_as_array, size_t max_size,
            int *truncated, const char *sql, const char *fmt, va_list args)
{
    if (truncated)
        *truncated = 0;
    sqlite3_stmt *stmt = sq_prepare (self, sql);
    if (!stmt || sq_bindv (self, stmt, fmt, args))
        return -1;
    if (rows_as_array)
        xxl_enc_array_begin (enc);
    int rows = 0, rc;
    while ((rc = sqlite3_step (stmt)) == SQLITE_ROW) {
        int columns = sqlite3_column_count (stmt);
        if (max_size) {
            //  An upper bound of the row's encoded size: 5-byte map header,
            //  each key with a 5-byte header, each value 9 bytes or a
            //  string with a 5-byte header
            size_t size = 5;
            for (int column = 0; column < columns; column++) {
                size += 5 + strlen (sqlite3_column_name (stmt, column));
                int type = sqlite3_column_type (stmt, column);
                size += type == SQLITE_INTEGER || type == SQLITE_NULL || type == SQLITE_FLOAT? 9
                      : 5 + (size_t) sqlite3_column_bytes (stmt, column);
            }
            if (xxl_enc_size (enc) + size > max_size) {
                *truncated = 1;
                rc = SQLITE_DONE;
                break;
            }
        }
        rows++;
        xxl_enc_map_begin (enc);
        for (int column = 0; column < columns; column++) {
            xxl_enc_key (enc, sqlite3_column_name (stmt, column));
            switch (sqlite3_column_type (stmt, column)) {
                case SQLITE_INTEGER:
                    xxl_enc_int (enc, sqlite3_column_int64 (stmt, column));
                    break;
                case SQLITE_NULL:
                    xxl_enc_nil (enc);
                    break;
                case SQLITE_FLOAT:
                    xxl_enc_double (enc, sqlite3_column_double (stmt, column));
                    break;
                default: {
                    const char *text = (const char *) sqlite3_column_text (stmt, column);
                    xxl_enc_strn (enc, text? text: "",
                                  (size_t) sqlite3_column_bytes (stmt, column));
                }
            }
        }
        xxl_enc_map_end (enc);
        if (!rows_as_array)
            break;
    }
    if (rows_as_array)
        xxl_enc_array_end (enc);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        sq_fail (self, "query");
        rows = -1;
    }
    sqlite3_reset (stmt);
    return rows;
}

int
sq_encode (store_t *self, xxl_enc_t *enc, int rows_as_array, const char *sql, const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    int rows = sq_encodev (self, enc, rows_as_array, 0, NULL, sql, fmt, args);
    va_end (args);
    return rows;
}

int
sq_encode_max (store_t *self, xxl_enc_t *enc, size_t max_size, int *truncated,
              const char *sql, const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    int rows = sq_encodev (self, enc, 1, max_size, truncated, sql, fmt, args);
    va_end (args);
    return rows;
}


//  The first column of the rows of a statement bound by fmt, up to max
//  (the statement's LIMIT is among its arguments); 0 with *count, or -1
int
sq_id_listv (store_t *self, int64_t *ids, size_t max, size_t *count, const char *sql,
             const char *fmt, va_list args)
{
    *count = 0;
    sqlite3_stmt *stmt = sq_prepare (self, sql);
    if (!stmt)
        return -1;
    int rc = sq_bindv (self, stmt, fmt, args);
    if (rc)
        return -1;
    while (*count < max && (rc = sqlite3_step (stmt)) == SQLITE_ROW)
        ids [(*count)++] = sqlite3_column_int64 (stmt, 0);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        rc = sq_fail (self, "query");
    else
        rc = 0;
    sqlite3_reset (stmt);
    return rc;
}

int
sq_id_list (store_t *self, int64_t *ids, size_t max, size_t *count, const char *sql,
           const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    int rc = sq_id_listv (self, ids, max, count, sql, fmt, args);
    va_end (args);
    return rc;
}

zhashx_t *
sq_cache_new (void)
{
    return xxl_store_sql_cache_new (s_statement_destroy);
}


//  --------------------------------------------------------------------
//  Deferred log rows

//  Rows kept before they are written without waiting for a statement, and
//  the bytes of text past which the buffer is freed once written (a turn
//  of large parameters holds no memory after)
#define SQ_DEFER_MAX 1024
#define SQ_DEFER_TEXT_MAX (4 * 1024 * 1024)
#define SQ_DEFER_TEXT_KEEP (256 * 1024)
//  Rows per INSERT: 32, then 16, 8, 4, 2, 1 for the rest (14 parameters
//  a row: 448 at most, within SQLite's 32,766)
#define SQ_CHUNKS 6
#define SQ_COLUMNS 14
//  How long planned rows go at once after a deferred one clashed (ms)
#define SQ_PLANNED_AT_ONCE_MS 60000

//  The INSERT of n = 32 >> k rows (the statement cache is keyed by the
//  text's address: literals, the same for every handle and thread)
#define SQ_INSERT_HEAD \
    "INSERT INTO xxl_job_log (job_group, job_id, executor_address, executor_handler," \
    " executor_param, executor_sharding_param, executor_fail_retry_count," \
    " trigger_time, trigger_code, trigger_msg, trigger_type, schedule_time, id, slot) VALUES "
#define SQ_ROWS_1 "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
#define SQ_ROWS_2 SQ_ROWS_1 "," SQ_ROWS_1
#define SQ_ROWS_4 SQ_ROWS_2 "," SQ_ROWS_2
#define SQ_ROWS_8 SQ_ROWS_4 "," SQ_ROWS_4
#define SQ_ROWS_16 SQ_ROWS_8 "," SQ_ROWS_8
#define SQ_ROWS_32 SQ_ROWS_16 "," SQ_ROWS_16
static const char *const s_chunk_texts [SQ_CHUNKS] = {
    SQ_INSERT_HEAD SQ_ROWS_32, SQ_INSERT_HEAD SQ_ROWS_16, SQ_INSERT_HEAD SQ_ROWS_8,
    SQ_INSERT_HEAD SQ_ROWS_4, SQ_INSERT_HEAD SQ_ROWS_2, SQ_INSERT_HEAD SQ_ROWS_1
};

//  Appends text (NULL: none) to the deferred text; its offset, or -1
static int64_t
s_defer_text (store_t *self, const char *text)
{
    if (!text)
        return -1;
    size_t length = strlen (text) + 1;
    if (self->deferred_used + length > self->deferred_text_size) {
        size_t size = self->deferred_text_size? self->deferred_text_size: 64 * 1024;
        while (self->deferred_used + length > size)
            size *= 2;
        self->deferred_text = (char *) realloc (self->deferred_text, size);
        assert (self->deferred_text);
        self->deferred_text_size = size;
    }
    memcpy (self->deferred_text + self->deferred_used, text, length);
    int64_t offset = (int64_t) self->deferred_used;
    self->deferred_used += length;
    return offset;
}

bool
sq_log_defers (store_t *self, const xxl_log_t *log)
{
    if (!self->in_txn || self->txn_lost || log->id <= 0)
        return false;
    if (log->schedule_time <= 0)
        return true;
    return log->planned_new && zclock_mono () >= self->planned_at_once_until;
}

int
sq_log_defer (store_t *self, const xxl_log_t *log)
{
    assert (sq_log_defers (self, log));
    if (self->deferred_count == self->deferred_size) {
        size_t size = self->deferred_size? self->deferred_size * 2: 64;
        self->deferred = (sq_deferred_t *) realloc (self->deferred, size * sizeof (sq_deferred_t));
        assert (self->deferred);
        self->deferred_size = size;
    }
    sq_deferred_t *row = &self->deferred [self->deferred_count++];
    row->job_group = log->job_group;
    row->job_id = log->job_id;
    row->retry_count = log->executor_fail_retry_count;
    row->trigger_time = log->trigger_time;
    row->trigger_code = log->trigger_code;
    row->id = log->id;
    row->slot = log->slot? 1: 0;
    row->schedule_time = log->schedule_time > 0? log->schedule_time: 0;
    row->text [0] = s_defer_text (self, log->executor_address);
    row->text [1] = s_defer_text (self, log->executor_handler);
    row->text [2] = s_defer_text (self, log->executor_param);
    row->text [3] = s_defer_text (self, log->executor_sharding_param);
    row->text [4] = s_defer_text (self, log->trigger_msg);
    row->text [5] = s_defer_text (self, log->trigger_type);
    if (self->deferred_count >= SQ_DEFER_MAX || self->deferred_used >= SQ_DEFER_TEXT_MAX)
        return sq_flush (self);
    return 0;
}

static void
s_bind_text (sqlite3_stmt *stmt, int index, const char *base, int64_t offset)
{
    if (offset < 0)
        sqlite3_bind_null (stmt, index);
    else
        sqlite3_bind_text (stmt, index, base + offset, -1, SQLITE_STATIC);
}

//  Writes rows [from, from + n) with the INSERT of n rows; 0 or -1
static int
s_flush_chunk (store_t *self, int k, size_t from)
{
    size_t rows = (size_t) 32 >> k;
    sqlite3_stmt *stmt = sq_prepare (self, s_chunk_texts [k]);
    if (!stmt)
        return -1;
    const char *base = self->deferred_text;
    for (size_t i = 0; i < rows; i++) {
        const sq_deferred_t *row = &self->deferred [from + i];
        int at = (int) i * SQ_COLUMNS;
        sqlite3_bind_int64 (stmt, at + 1, row->job_group);
        sqlite3_bind_int64 (stmt, at + 2, row->job_id);
        s_bind_text (stmt, at + 3, base, row->text [0]);
        s_bind_text (stmt, at + 4, base, row->text [1]);
        s_bind_text (stmt, at + 5, base, row->text [2]);
        s_bind_text (stmt, at + 6, base, row->text [3]);
        sqlite3_bind_int64 (stmt, at + 7, row->retry_count);
        sqlite3_bind_int64 (stmt, at + 8, row->trigger_time);
        sqlite3_bind_int64 (stmt, at + 9, row->trigger_code);
        s_bind_text (stmt, at + 10, base, row->text [4]);
        s_bind_text (stmt, at + 11, base, row->text [5]);
        if (row->schedule_time > 0)
            sqlite3_bind_int64 (stmt, at + 12, row->schedule_time);
        else
            sqlite3_bind_null (stmt, at + 12);
        sqlite3_bind_int64 (stmt, at + 13, row->id);
        sqlite3_bind_int64 (stmt, at + 14, row->slot);
    }
    int changes = sq_done (self, stmt);
    if (changes < 0)
        return -1;
    if ((size_t) changes != rows) {
        snprintf (self->error, sizeof self->error, "deferred log rows: %d of %zu written",
                  changes, rows);
        s_log_error (self);
        return -1;
    }
    return 0;
}

int
sq_flush (store_t *self)
{
    if (!self->deferred_count || self->flushing)
        return 0;
    assert (self->in_txn);
    self->flushing = true;
    int rc = 0;
    size_t from = 0;
    for (int k = 0; k < SQ_CHUNKS && rc == 0; k++)
        while (rc == 0 && self->deferred_count - from >= ((size_t) 32 >> k)) {
            rc = s_flush_chunk (self, k, from);
            from += (size_t) 32 >> k;
        }
    self->flushing = false;
    if (rc)
        for (size_t i = 0; i < self->deferred_count; i++)
            if (self->deferred [i].schedule_time > 0) {
                //  (a clash, or any failure: planned rows then go at once
                //  for a while, each refused alone should it clash)
                self->planned_at_once_until = zclock_mono () + SQ_PLANNED_AT_ONCE_MS;
                break;
            }
    sq_deferred_drop (self);
    if (rc) {
        //  The transaction is lost: what it wrote is rolled back, no
        //  later write of it runs, and its commit fails with the cause
        char cause [512];
        snprintf (cause, sizeof cause, "log rows of the transaction not written: %.400s",
                  self->error);
        if (!sqlite3_get_autocommit (self->db))
            sqlite3_exec (self->db, "ROLLBACK", NULL, NULL, NULL);
        self->txn_lost = 1;
        snprintf (self->txn_cause, sizeof self->txn_cause, "%s", cause);
        snprintf (self->error, sizeof self->error, "%s", cause);
        return -1;
    }
    return 0;
}

void
sq_deferred_drop (store_t *self)
{
    self->deferred_count = 0;
    self->deferred_used = 0;
    if (self->deferred_text_size > SQ_DEFER_TEXT_KEEP) {
        free (self->deferred_text);
        self->deferred_text = NULL;
        self->deferred_text_size = 0;
    }
}

void
sq_deferred_free (store_t *self)
{
    free (self->deferred);
    self->deferred = NULL;
    self->deferred_count = self->deferred_size = 0;
    free (self->deferred_text);
    self->deferred_text = NULL;
    self->deferred_used = self->deferred_text_size = 0;
}
