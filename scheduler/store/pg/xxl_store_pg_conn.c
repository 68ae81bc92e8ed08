/*  xxl_store_pg_conn.c -- the bottom of the PostgreSQL backend: a
    connection's statements.

    Owns: the statement cache (prepared once per connection, keyed by the
    address of the SQL text; pgx_cache_new), binding (fmt: 'i' int8, 'd'
    float8, 's' text, 'n' NULL, as xxl_store_pg_int.h says), running
    (pgx_run, pgx_exec and the readers: scalar, text, id_list, encode),
    reading values of a result, and recording errors (pgx_fail, pgx_failf:
    the reason in self->error, passwords redacted, a line per cause per
    10 s through xxl_store_log_error) and a lost transaction
    (pgx_txn_lose).

    MUST: before a statement inside a transaction, flush the rows log_add
    deferred (through self->flush, set by the constructor to
    xxl_store_pg_batch.c's pgx_flush); run a write outside a transaction
    in one of its own (begin, the statement, commit), reached through the
    handle's method table; fail every statement of a lost transaction with
    its first cause without sending it.
    MUST NOT: call any other file of the backend by name (it is below all
    of them: _rows.c, _lease.c, _batch.c, _driver.c and xxl_store_pg.c
    call it), nor anything of the store but the shared helpers below it
    (scheduler/store/sql).

    Errors: -1 or NULL, the reason in self->error (see above).
*/

#include "xxl_store_pg_int.h"

#include <assert.h>
#include <czmq.h>
#include <libpq-fe.h>
#include <endian.h>
#include <inttypes.h>
#include <stdarg.h>

#define XXL_PG_PARAMS_MAX 32

//  Type oids (PostgreSQL's catalog/pg_type.h, which libpq does not ship)
#define XXL_BOOLOID 16
#define XXL_INT8OID 20
#define XXL_INT2OID 21
#define XXL_INT4OID 23
#define XXL_TEXTOID 25
#define XXL_OIDOID 26
#define XXL_FLOAT4OID 700
#define XXL_FLOAT8OID 701
#define XXL_NUMERICOID 1700

//  A prepared statement: its name on the connection and the fmt it was
//  prepared with (its parameters' types)
typedef struct {
    char name [16];
    char *fmt;
} statement_t;

static void
s_statement_destroy (void **item)
{
    statement_t *statement = (statement_t *) *item;
    if (statement) {
        free (statement->fmt);
        free (statement);
        *item = NULL;
    }
}

//  Replaces each occurrence of secret in text (a buffer of size bytes)
//  with instead (where it fits)
void
pgx_replace (char *text, size_t size, const char *secret, const char *instead)
{
    if (!secret || !*secret || strstr (instead, secret))
        return;
    size_t length = strlen (secret), with = strlen (instead);
    char *at, *from = text;
    while ((at = strstr (from, secret))) {
        size_t tail = strlen (at + length) + 1;
        if ((size_t) (at - text) + with + tail > size)
            break;
        memmove (at + with, at + length, tail);
        memcpy (at, instead, with);
        from = at + with;
    }
}

//  A password never shows in an error
void
pgx_redact (char *text, size_t size, const char *secret)
{
    pgx_replace (text, size, secret, "***");
}

//  libpq's message on one line: newlines and tabs become spaces, no
//  trailing blanks; into out (size bytes)
void
pgx_one_line (char *out, size_t size, const char *message)
{
    size_t used = 0;
    for (const char *p = message? message: ""; *p && used + 1 < size; p++) {
        char c = *p == '\n' || *p == '\t' || *p == '\r'? ' ': *p;
        if (c == ' ' && (used == 0 || out [used - 1] == ' '))
            continue;
        out [used++] = c;
    }
    while (used && out [used - 1] == ' ')
        used--;
    out [used] = 0;
}

//  Logs self->error (xxl_store_log_error: a line per cause per 10 s)
static void
s_log_error (store_t *self)
{
    xxl_store_log_error (self->logged, self->error);
}

//  After an error: a transaction PostgreSQL aborted, or the connection
//  lost inside one, is lost with this error as its cause
static void
s_note_lost (store_t *self)
{
    if (!self->in_txn || self->txn_lost)
        return;
    if (!self->conn || PQstatus (self->conn) != CONNECTION_OK
    ||  PQtransactionStatus (self->conn) == PQTRANS_INERROR) {
        self->txn_lost = 1;
        snprintf (self->txn_cause, sizeof self->txn_cause, "%s", self->error);
    }
}

int
pgx_fail (store_t *self, const char *what, const PGresult *result)
{
    const char *message = NULL;
    if (result)
        message = PQresultErrorField (result, PG_DIAG_MESSAGE_PRIMARY);
    if (!message || !*message)
        message = result? PQresultErrorMessage (result): NULL;
    if ((!message || !*message) && self->conn)
        message = PQerrorMessage (self->conn);
    char line [400];
    pgx_one_line (line, sizeof line, message && *message? message: "unknown error");
    bool lost = !self->conn || PQstatus (self->conn) != CONNECTION_OK;
    snprintf (self->error, sizeof self->error, "%s: %s%s", what,
              lost? "the connection to PostgreSQL is lost: ": "", line);
    pgx_redact (self->error, sizeof self->error, self->password);
    s_note_lost (self);
    s_log_error (self);
    return -1;
}

int
pgx_failf (store_t *self, const char *format, ...)
{
    va_list args;
    va_start (args, format);
    vsnprintf (self->error, sizeof self->error, format, args);
    va_end (args);
    s_note_lost (self);
    s_log_error (self);
    return -1;
}

//  "what" for an error: the statement's first words
static void
s_what (char *out, size_t size, const char *sql)
{
    char line [48];
    pgx_one_line (line, sizeof line, sql);
    snprintf (out, size, "\"%s...\"", line);
}

//  Runs sql (several statements allowed, no parameters) with the simple
//  protocol; 0, or -1 with the error recorded.  value (if not NULL): the
//  first column of the last statement's first row (-1 when none).
int
pgx_simple_value (store_t *self, const char *sql, int64_t *value)
{
    PGresult *result = PQexec (self->conn, sql);
    ExecStatusType status = PQresultStatus (result);
    int rc = 0;
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
        char what [64];
        s_what (what, sizeof what, sql);
        rc = pgx_fail (self, what, result);
    }
    if (value)
        *value = rc == 0 && status == PGRES_TUPLES_OK && PQntuples (result) > 0
               ? pgx_int (result, 0, 0): -1;
    PQclear (result);
    return rc;
}

//  --------------------------------------------------------------------
//  Statements


//  The prepared statement of sql on this connection (prepared now the
//  first time, with the parameters' types); NULL with the error recorded
static statement_t *
s_statement (store_t *self, const char *sql, const char *fmt, int params, const Oid *types)
{
    statement_t *statement = (statement_t *) zhashx_lookup (self->statements, sql);
    if (statement) {
        if (streq (statement->fmt, fmt))
            return statement;
        pgx_failf (self, "a statement used with two formats (%s, %s)", statement->fmt, fmt);
        return NULL;
    }
    statement = (statement_t *) zmalloc (sizeof (statement_t));
    snprintf (statement->name, sizeof statement->name, "x%u", ++self->statement_seq);
    statement->fmt = strdup (fmt);
    PGresult *prepared = PQprepare (self->conn, statement->name, sql, params, types);
    if (PQresultStatus (prepared) != PGRES_COMMAND_OK) {
        char what [64];
        s_what (what, sizeof what, sql);
        pgx_fail (self, what, prepared);
        PQclear (prepared);
        s_statement_destroy ((void **) &statement);
        return NULL;
    }
    PQclear (prepared);
    zhashx_insert (self->statements, sql, statement);
    return statement;
}

//  --------------------------------------------------------------------
//  The write lock, and the statements run before it without it

struct _pgx_replay_t {
    char *sql;                          //  a copy (cached: looked up by cached)
    const char *cached;                 //  the cache's key, NULL for PGX_ONCE
    char *fmt;
    int params;
    Oid types [XXL_PG_PARAMS_MAX];
    char *values [XXL_PG_PARAMS_MAX];   //  copies (NULL for NULL)
    int lengths [XXL_PG_PARAMS_MAX];
    int formats [XXL_PG_PARAMS_MAX];
    uint64_t signature;                 //  of its result (s_signature)
};

//  What a result says, as one number: its command's count, its row count,
//  and its rows' values in any order (an UPDATE ... RETURNING's order is
//  not fixed)
static uint64_t
s_signature (const PGresult *result)
{
    const char *tuples = PQcmdTuples ((PGresult *) result);
    uint64_t sum = (uint64_t) PQntuples (result) * 1000003u + (uint64_t) atoll (tuples? tuples: "0");
    for (int row = 0; row < PQntuples (result); row++) {
        uint64_t hash = 14695981039346656037u;
        for (int column = 0; column < PQnfields (result); column++) {
            const unsigned char *value = PQgetisnull (result, row, column)
                                       ? (const unsigned char *) "\1null"
                                       : (const unsigned char *) PQgetvalue (result, row, column);
            for (; *value; value++)
                hash = (hash ^ *value) * 1099511628211u;
            hash = (hash ^ 0xff) * 1099511628211u;
        }
        sum += hash;
    }
    return sum;
}

//  1 when sql may lock rows: anything but a plain SELECT (nextval's
//  included, which a rollback does not undo and must not run twice; the
//  backend's SQL writes its keywords in capitals)
static bool
s_locks_rows (const char *sql)
{
    while (*sql == ' ' || *sql == '(')
        sql++;
    if (strncasecmp (sql, "SELECT", 6))
        return true;
    return strstr (sql, " FOR UPDATE") || strstr (sql, " FOR SHARE")
        || strstr (sql, " FOR NO KEY") || strstr (sql, " FOR KEY SHARE");
}

static void
s_replay_destroy (pgx_replay_t **self_p)
{
    pgx_replay_t *self = *self_p;
    if (self) {
        for (int i = 0; i < self->params; i++)
            free (self->values [i]);
        free (self->sql);
        free (self->fmt);
        free (self);
        *self_p = NULL;
    }
}

void
pgx_replays_drop (store_t *self)
{
    for (size_t i = 0; i < self->replays_count; i++)
        s_replay_destroy (&self->replays [i]);
    self->replays_count = 0;
    if (self->replays_max > 256) {
        free (self->replays);
        self->replays = NULL;
        self->replays_max = 0;
    }
}

//  Keeps a statement just run without the lock (its parameters as sent)
static void
s_replay_keep (store_t *self, int flags, const char *sql, const char *fmt, int params,
               const Oid *types, const char *const *values, const int *lengths,
               const int *formats, const PGresult *result)
{
    pgx_replay_t *replay = (pgx_replay_t *) zmalloc (sizeof (pgx_replay_t));
    replay->sql = strdup (sql);
    replay->cached = (flags & PGX_ONCE)? NULL: sql;
    replay->fmt = strdup (fmt);
    replay->params = params;
    for (int i = 0; i < params; i++) {
        replay->types [i] = types [i];
        replay->lengths [i] = lengths [i];
        replay->formats [i] = formats [i];
        if (values [i]) {
            size_t size = formats [i]? (size_t) lengths [i]: strlen (values [i]) + 1;
            replay->values [i] = (char *) malloc (size);
            assert (replay->values [i]);
            memcpy (replay->values [i], values [i], size);
        }
    }
    replay->signature = s_signature (result);
    if (self->replays_count == self->replays_max) {
        self->replays_max = self->replays_max? 2 * self->replays_max: 16;
        self->replays = (pgx_replay_t **) realloc (self->replays,
                                                   self->replays_max * sizeof (pgx_replay_t *));
        assert (self->replays);
    }
    self->replays [self->replays_count++] = replay;
}

//  Runs the kept statements again (the lock held, their first run rolled
//  back): 0 when each gave the same result, else -1 with the reason
static int
s_replay_all (store_t *self)
{
    for (size_t i = 0; i < self->replays_count; i++) {
        pgx_replay_t *replay = self->replays [i];
        PGresult *result = NULL;
        if (replay->cached) {
            statement_t *statement = s_statement (self, replay->cached, replay->fmt,
                                                  replay->params, replay->types);
            if (!statement)
                return -1;
            result = PQexecPrepared (self->conn, statement->name, replay->params,
                                     (const char *const *) replay->values, replay->lengths,
                                     replay->formats, 0);
        }
        else
            result = PQexecParams (self->conn, replay->sql, replay->params, replay->types,
                                   (const char *const *) replay->values, replay->lengths,
                                   replay->formats, 0);
        ExecStatusType status = PQresultStatus (result);
        char what [64];
        s_what (what, sizeof what, replay->sql);
        if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
            pgx_fail (self, what, result);
            PQclear (result);
            return -1;
        }
        uint64_t signature = s_signature (result);
        PQclear (result);
        if (signature != replay->signature)
            return pgx_failf (self, "%s: a row changed while the transaction waited for the"
                              " write lock", what);
    }
    return 0;
}

int
pgx_lock (store_t *self)
{
    if (!self->in_txn || self->txn_locked)
        return 0;
    if (self->txn_lost) {
        snprintf (self->error, sizeof self->error, "%s", self->txn_cause);
        return -1;
    }
    if (self->replays_count) {
        //  (rows held: take the lock only if it is free now)
        int64_t had = -1;
        if (pgx_simple_value (self, "SELECT pg_try_advisory_xact_lock (" XXL_PG_WRITE_LOCK
                                    ")::int", &had))
            return -1;
        if (had != 1) {
            if (pgx_simple_value (self, "ROLLBACK TO SAVEPOINT " XXL_PG_SAVEPOINT "; SELECT"
                                        " pg_advisory_xact_lock (" XXL_PG_WRITE_LOCK ")", NULL)
            ||  s_replay_all (self)) {
                pgx_replays_drop (self);
                pgx_txn_lose (self);
                return -1;
            }
        }
        pgx_replays_drop (self);
    }
    else
    if (pgx_simple_value (self, "SELECT pg_advisory_xact_lock (" XXL_PG_WRITE_LOCK ")", NULL))
        return -1;
    self->txn_locked = 1;
    return 0;
}

static PGresult *
s_send (store_t *self, int flags, const char *sql, const char *fmt, va_list args)
{
    //  Every statement but those of the calls that need no lock runs
    //  under the write lock (xxl_store_pg.c: "Two advisory locks")
    if (self->in_txn && !self->txn_locked && !self->lock_free && pgx_lock (self))
        return NULL;
    //  The rows log_add deferred go first: this statement may read them
    if (self->in_txn && !self->txn_lost && self->flush && self->flush (self))
        return NULL;
    if (self->in_txn && self->txn_lost) {
        //  (logged when it happened)
        snprintf (self->error, sizeof self->error, "%s", self->txn_cause);
        return NULL;
    }
    char what [64];
    if (!self->conn || PQstatus (self->conn) != CONNECTION_OK) {
        s_what (what, sizeof what, sql);
        pgx_fail (self, what, NULL);
        return NULL;
    }
    int params = (int) strlen (fmt);
    if (params > XXL_PG_PARAMS_MAX) {
        pgx_failf (self, "too many parameters (%d)", params);
        return NULL;
    }
    Oid types [XXL_PG_PARAMS_MAX];
    const char *values [XXL_PG_PARAMS_MAX];
    int lengths [XXL_PG_PARAMS_MAX], formats [XXL_PG_PARAMS_MAX];
    uint64_t numbers [XXL_PG_PARAMS_MAX];
    char *fixed [XXL_PG_PARAMS_MAX];
    for (int i = 0; i < params; i++) {
        fixed [i] = NULL;
        lengths [i] = 0;
        formats [i] = 0;
        types [i] = 0;
        values [i] = NULL;
        if (fmt [i] == 'i') {
            numbers [i] = htobe64 ((uint64_t) va_arg (args, int64_t));
            types [i] = XXL_INT8OID;
        }
        else
        if (fmt [i] == 'd') {
            double value = va_arg (args, double);
            uint64_t bits;
            memcpy (&bits, &value, sizeof bits);
            numbers [i] = htobe64 (bits);
            types [i] = XXL_FLOAT8OID;
        }
        else
        if (fmt [i] == 's') {
            values [i] = va_arg (args, const char *);
            types [i] = XXL_TEXTOID;
            //  (PostgreSQL refuses text that is not UTF-8 and aborts the
            //  transaction; SQLite stores any bytes, and every reply
            //  carries U+FFFD for them anyway: the store answers the same)
            if (values [i] && (fixed [i] = xxl_utf8_repair (values [i])))
                values [i] = fixed [i];
        }
        if (types [i] == XXL_INT8OID || types [i] == XXL_FLOAT8OID) {
            values [i] = (const char *) &numbers [i];
            lengths [i] = 8;
            formats [i] = 1;
        }
    }
    PGresult *result = NULL;
    statement_t *statement = NULL;
    //  (a statement that may lock rows, run without the write lock: kept
    //  for pgx_lock)
    bool keep = self->in_txn && !self->txn_locked && self->lock_free && s_locks_rows (sql);
    if (flags & PGX_ONCE)
        result = PQexecParams (self->conn, sql, params, types, values, lengths, formats, 0);
    else
    if ((statement = s_statement (self, sql, fmt, params, types)))
        result = PQexecPrepared (self->conn, statement->name, params, values, lengths,
                                 formats, 0);
    ExecStatusType status = PQresultStatus (result);
    if (keep && result && (status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK))
        s_replay_keep (self, flags, sql, fmt, params, types, values, lengths, formats, result);
    for (int i = 0; i < params; i++)
        free (fixed [i]);
    if (!(flags & PGX_ONCE) && !statement)
        return NULL;                    //  (the error recorded)
    if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
        s_what (what, sizeof what, sql);
        pgx_fail (self, what, result);
        PQclear (result);
        return NULL;
    }
    if ((flags & PGX_WRITE) && self->in_txn)
        self->txn_dirty = 1;
    return result;
}

PGresult *
pgx_runv (store_t *self, int flags, const char *sql, const char *fmt, va_list args)
{
    //  (the constructor set both: the method table and the flush hook)
    assert (self->sql.base.methods && self->flush);
    if (!(flags & PGX_WRITE) || self->in_txn)
        return s_send (self, flags, sql, fmt? fmt: "", args);
    //  A write outside a transaction: in one of its own
    if (self->sql.base.methods->begin (&self->sql.base))
        return NULL;
    PGresult *result = s_send (self, flags, sql, fmt? fmt: "", args);
    if (!result) {
        char cause [sizeof self->error];
        snprintf (cause, sizeof cause, "%s", self->error);
        self->sql.base.methods->rollback (&self->sql.base);
        snprintf (self->error, sizeof self->error, "%s", cause);
        return NULL;
    }
    if (self->sql.base.methods->commit (&self->sql.base)) {
        PQclear (result);
        return NULL;
    }
    return result;
}

PGresult *
pgx_run (store_t *self, int flags, const char *sql, const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    PGresult *result = pgx_runv (self, flags, sql, fmt, args);
    va_end (args);
    return result;
}

int
pgx_changes (const PGresult *result)
{
    const char *tuples = PQcmdTuples ((PGresult *) result);
    return tuples && *tuples? atoi (tuples): 0;
}

int
pgx_exec (store_t *self, const char *sql, const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    PGresult *result = pgx_runv (self, PGX_WRITE, sql, fmt, args);
    va_end (args);
    if (!result)
        return -1;
    int changes = pgx_changes (result);
    PQclear (result);
    return changes;
}

int64_t
pgx_int (const PGresult *result, int row, int column)
{
    if (PQgetisnull (result, row, column))
        return 0;
    const char *value = PQgetvalue (result, row, column);
    Oid type = PQftype (result, column);
    if (type == XXL_BOOLOID)
        return *value == 't';
    if (type == XXL_FLOAT4OID || type == XXL_FLOAT8OID)
        return (int64_t) strtod (value, NULL);
    return strtoll (value, NULL, 10);
}

double
pgx_double (const PGresult *result, int row, int column)
{
    if (PQgetisnull (result, row, column))
        return 0;
    return strtod (PQgetvalue (result, row, column), NULL);
}

char *
pgx_string (const PGresult *result, int row, int column)
{
    return strdup (PQgetisnull (result, row, column)? "": PQgetvalue (result, row, column));
}

int64_t
pgx_scalarv (store_t *self, int flags, const char *sql, const char *fmt, va_list args)
{
    PGresult *result = pgx_runv (self, flags, sql, fmt, args);
    if (!result)
        return -1;
    int64_t value = PQntuples (result) > 0 && PQnfields (result) > 0
                  ? pgx_int (result, 0, 0): -1;
    PQclear (result);
    return value;
}

int64_t
pgx_scalar (store_t *self, const char *sql, const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    int64_t value = pgx_scalarv (self, PGX_READ, sql, fmt, args);
    va_end (args);
    return value;
}

char *
pgx_textv (store_t *self, int flags, const char *sql, const char *fmt, va_list args)
{
    PGresult *result = pgx_runv (self, flags, sql, fmt, args);
    if (!result)
        return NULL;
    char *value = PQntuples (result) > 0 && PQnfields (result) > 0
                  && !PQgetisnull (result, 0, 0)? pgx_string (result, 0, 0): NULL;
    PQclear (result);
    return value;
}

char *
pgx_text (store_t *self, const char *sql, const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    char *value = pgx_textv (self, PGX_READ, sql, fmt, args);
    va_end (args);
    return value;
}

int
pgx_id_listv (store_t *self, int64_t *ids, size_t max, size_t *count, const char *sql,
              const char *fmt, va_list args)
{
    *count = 0;
    PGresult *result = pgx_runv (self, PGX_READ, sql, fmt, args);
    if (!result)
        return -1;
    int rows = PQntuples (result);
    for (int row = 0; row < rows && *count < max; row++)
        ids [(*count)++] = pgx_int (result, row, 0);
    PQclear (result);
    return 0;
}

int
pgx_id_list (store_t *self, int64_t *ids, size_t max, size_t *count, const char *sql,
             const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    int rc = pgx_id_listv (self, ids, max, count, sql, fmt, args);
    va_end (args);
    return rc;
}

//  How a column is encoded
typedef enum { KIND_INT, KIND_FLOAT, KIND_NUMERIC, KIND_BOOL, KIND_TEXT } kind_t;

static kind_t
s_kind (Oid type)
{
    switch (type) {
        case XXL_INT2OID: case XXL_INT4OID: case XXL_INT8OID: case XXL_OIDOID:
            return KIND_INT;
        case XXL_FLOAT4OID: case XXL_FLOAT8OID:
            return KIND_FLOAT;
        case XXL_NUMERICOID:
            return KIND_NUMERIC;
        case XXL_BOOLOID:
            return KIND_BOOL;
        default:
            return KIND_TEXT;
    }
}

//  Encodes a result's rows as maps whose keys are the column names
//  (camelCase with quoted aliases): integers as int, floats as float64
//  (numeric: int when whole, as SQLite's SUM gives), booleans as 1/0, NULL
//  as nil, else str.  rows_as_array 0: only the first row's map (nothing
//  when there is none).  max_size > 0: an array that stops before a row
//  would take the encoder past max_size bytes (*truncated 1), with
//  SQLite's bound of a row's size.  The number of rows.
static int
s_encode_result (const PGresult *result, xxl_enc_t *enc, int rows_as_array, size_t max_size,
                 int *truncated)
{
    int columns = PQnfields (result), rows = PQntuples (result);
    kind_t kinds [64];
    if (columns > 64)
        columns = 64;
    for (int column = 0; column < columns; column++)
        kinds [column] = s_kind (PQftype (result, column));
    if (rows_as_array)
        xxl_enc_array_begin (enc);
    int done = 0;
    for (int row = 0; row < rows; row++) {
        if (max_size) {
            //  An upper bound of the row's encoded size: 5-byte map header,
            //  each key with a 5-byte header, each value 9 bytes or a
            //  string with a 5-byte header
            size_t size = 5;
            for (int column = 0; column < columns; column++) {
                size += 5 + strlen (PQfname (result, column));
                size += kinds [column] != KIND_TEXT || PQgetisnull (result, row, column)? 9
                      : 5 + (size_t) PQgetlength (result, row, column);
            }
            if (xxl_enc_size (enc) + size > max_size) {
                *truncated = 1;
                break;
            }
        }
        done++;
        xxl_enc_map_begin (enc);
        for (int column = 0; column < columns; column++) {
            xxl_enc_key (enc, PQfname (result, column));
            const char *value = PQgetvalue (result, row, column);
            if (PQgetisnull (result, row, column))
                xxl_enc_nil (enc);
            else
            switch (kinds [column]) {
                case KIND_INT:
                case KIND_BOOL:
                    xxl_enc_int (enc, pgx_int (result, row, column));
                    break;
                case KIND_FLOAT:
                    xxl_enc_double (enc, strtod (value, NULL));
                    break;
                case KIND_NUMERIC:
                    if (strpbrk (value, ".eEN"))
                        xxl_enc_double (enc, strtod (value, NULL));
                    else
                        xxl_enc_int (enc, strtoll (value, NULL, 10));
                    break;
                default:
                    xxl_enc_strn (enc, value, (size_t) PQgetlength (result, row, column));
            }
        }
        xxl_enc_map_end (enc);
        if (!rows_as_array)
            break;
    }
    if (rows_as_array)
        xxl_enc_array_end (enc);
    return done;
}

int
pgx_encodev (store_t *self, int flags, xxl_enc_t *enc, int rows_as_array, size_t max_size,
             int *truncated, const char *sql, const char *fmt, va_list args)
{
    if (truncated)
        *truncated = 0;
    PGresult *result = pgx_runv (self, flags, sql, fmt, args);
    if (!result)
        return -1;
    int rows = s_encode_result (result, enc, rows_as_array, max_size, truncated);
    PQclear (result);
    return rows;
}

int
pgx_encode (store_t *self, xxl_enc_t *enc, int rows_as_array, const char *sql,
            const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    int rows = pgx_encodev (self, PGX_READ, enc, rows_as_array, 0, NULL, sql, fmt, args);
    va_end (args);
    return rows;
}

int
pgx_encode_max (store_t *self, xxl_enc_t *enc, size_t max_size, int *truncated,
                const char *sql, const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    int rows = pgx_encodev (self, PGX_READ, enc, 1, max_size, truncated, sql, fmt, args);
    va_end (args);
    return rows;
}

void
pgx_log_id_used (store_t *self, int64_t id)
{
    if (id > self->txn_log_max)
        self->txn_log_max = id;
    if (id > self->ids_used)
        self->ids_used = id;
}


void
pgx_txn_lose (store_t *self)
{
    if (!self->in_txn || self->txn_lost)
        return;
    self->txn_lost = 1;
    snprintf (self->txn_cause, sizeof self->txn_cause, "%s", self->error);
}

zhashx_t *
pgx_cache_new (void)
{
    return xxl_store_sql_cache_new (s_statement_destroy);
}
