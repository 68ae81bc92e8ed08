/*  xxl_store_pg_batch.c -- the PostgreSQL backend's batched writes: the
    log rows log_add defers, and a CALLBACK's items in one statement.

    Each is one statement whose per-row values travel as PostgreSQL arrays
    (one text parameter per column, `{...}` in the array input syntax,
    expanded by unnest), so n rows cost one round trip and one statement's
    overhead instead of n.

    Deferred rows (pgx_defer_log): inside a transaction, a row with an id
    of the engine's and no schedule_time (a manual, API, retry or child
    trigger: nothing unique can refuse it) is buffered and log_add answers
    0 at once.  The buffer is written as one INSERT (pgx_flush) before any
    other statement of the transaction is sent and before its commit, so
    every later statement sees the rows, and when it holds
    XXL_PG_DEFER_MAX rows or XXL_PG_DEFER_BYTES of text.  Should that
    INSERT fail or add fewer rows than it holds, the transaction is lost
    (txn_lost, with the cause): the statement that caused the flush
    fails, and so does the commit.
    Rollback drops the buffer.

    Both statements are planned at each run (not prepared): the planner
    then sees the arrays' lengths and the table's size now.  A prepared
    statement's generic plan, made while the table was small, joined the
    items to a sequential scan of the whole table, and went on doing so as
    it grew (2,000 runs/s instead of 25,000 after 1,000 rows).

    log_handle_done_many: one UPDATE ... FROM unnest (...) RETURNING id
    over the items, with the conditions of log_handle_done_by; an item's
    done is 0 when its id came back, 1 otherwise.  An id given twice is
    sent once (its first item; the later ones answer 1), as one UPDATE
    finishes a row at most once and a second callback for a finished row
    changes nothing.

    Layer: below xxl_store_pg.c (commit, rollback and destroy call
    pgx_flush, pgx_deferred_drop and pgx_deferred_destroy; the constructor
    hands pgx_flush to _conn.c as self->flush), beside _rows.c (log_add
    defers through pgx_defer_log), over _conn.c, the only file it calls.
    MUST NOT: name xxl_store_pg.c or _rows.c.
    Errors: -1, the reason in self->error; a failed flush loses the
    transaction (pgx_txn_lose).
*/

#include "xxl_store_pg_int.h"

#include <czmq.h>
#include <inttypes.h>

//  Rows, and bytes of their array text, buffered before they are written
//  without waiting for a statement; a column's buffer past the keep size
//  is freed once written (a turn of large parameters holds no memory after)
#define XXL_PG_DEFER_MAX 2000
#define XXL_PG_DEFER_BYTES (4 * 1024 * 1024)
#define XXL_PG_DEFER_KEEP (256 * 1024)

//  An array literal being built: "{" elements "}"
typedef struct {
    char *data;
    size_t used, size;
} s_array_t;

static void
s_array_put (s_array_t *self, const char *bytes, size_t length)
{
    if (self->used + length + 2 > self->size) {
        size_t size = self->size? self->size: 256;
        while (self->used + length + 2 > size)
            size *= 2;
        self->data = (char *) realloc (self->data, size);
        assert (self->data);
        self->size = size;
    }
    memcpy (self->data + self->used, bytes, length);
    self->used += length;
    self->data [self->used] = 0;
}

//  Starts an element: "{" before the first, "," before the others
static void
s_array_next (s_array_t *self)
{
    s_array_put (self, self->used? ",": "{", 1);
}

static void
s_array_int (s_array_t *self, int64_t value)
{
    char text [24];
    int length = snprintf (text, sizeof text, "%" PRId64, value);
    s_array_next (self);
    s_array_put (self, text, (size_t) length);
}

//  A text element: NULL, or quoted with " and \ escaped (the rest, line
//  ends included, is taken as it is)
static void
s_array_text (s_array_t *self, const char *text)
{
    s_array_next (self);
    if (!text) {
        s_array_put (self, "NULL", 4);
        return;
    }
    s_array_put (self, "\"", 1);
    const char *run = text;
    for (const char *c = text; ; c++) {
        if (*c == '"' || *c == '\\' || *c == 0) {
            s_array_put (self, run, (size_t) (c - run));
            if (*c == 0)
                break;
            s_array_put (self, "\\", 1);
            run = c;
        }
    }
    s_array_put (self, "\"", 1);
}

//  The literal (an empty array when nothing was put)
static const char *
s_array_end (s_array_t *self)
{
    if (!self->used)
        s_array_put (self, "{", 1);
    s_array_put (self, "}", 1);
    return self->data;
}

static void
s_array_reset (s_array_t *self)
{
    self->used = 0;
    if (self->data)
        self->data [0] = 0;
}

static void
s_array_free (s_array_t *self)
{
    free (self->data);
    self->data = NULL;
    self->used = self->size = 0;
}

//  --------------------------------------------------------------------
//  Deferred log rows

//  The columns of a deferred row, in the INSERT's order
enum {
    COL_GROUP, COL_JOB, COL_ADDRESS, COL_HANDLER, COL_PARAM, COL_SHARD, COL_RETRY,
    COL_TIME, COL_CODE, COL_MSG, COL_TYPE, COL_ID, COL_SLOT, COLUMNS
};

struct _pgx_deferred_t {
    s_array_t columns [COLUMNS];
    size_t rows;
};

static void
s_deferred_reset (pgx_deferred_t *self)
{
    for (int c = 0; c < COLUMNS; c++) {
        if (self->columns [c].size > XXL_PG_DEFER_KEEP)
            s_array_free (&self->columns [c]);
        else
            s_array_reset (&self->columns [c]);
    }
    self->rows = 0;
}

//  Bytes of array text buffered
static size_t
s_deferred_bytes (pgx_deferred_t *self)
{
    size_t bytes = 0;
    for (int c = 0; c < COLUMNS; c++)
        bytes += self->columns [c].used;
    return bytes;
}

void
pgx_deferred_destroy (pgx_deferred_t **self_p)
{
    pgx_deferred_t *self = *self_p;
    if (!self)
        return;
    for (int c = 0; c < COLUMNS; c++)
        s_array_free (&self->columns [c]);
    free (self);
    *self_p = NULL;
}

size_t
pgx_deferred_rows (store_t *self)
{
    return self->deferred? self->deferred->rows: 0;
}

void
pgx_deferred_drop (store_t *self)
{
    if (self->deferred)
        s_deferred_reset (self->deferred);
}

int
pgx_defer_log (store_t *self, const xxl_log_t *log)
{
    assert (self->in_txn && log->id > 0 && log->schedule_time <= 0);
    if (self->txn_lost) {
        snprintf (self->error, sizeof self->error, "%s", self->txn_cause);
        return -1;
    }
    if (!self->deferred) {
        self->deferred = (pgx_deferred_t *) calloc (1, sizeof (pgx_deferred_t));
        assert (self->deferred);
    }
    s_array_t *columns = self->deferred->columns;
    s_array_int (&columns [COL_GROUP], log->job_group);
    s_array_int (&columns [COL_JOB], log->job_id);
    s_array_text (&columns [COL_ADDRESS], log->executor_address);
    s_array_text (&columns [COL_HANDLER], log->executor_handler);
    s_array_text (&columns [COL_PARAM], log->executor_param);
    s_array_text (&columns [COL_SHARD], log->executor_sharding_param);
    s_array_int (&columns [COL_RETRY], log->executor_fail_retry_count);
    s_array_int (&columns [COL_TIME], log->trigger_time);
    s_array_int (&columns [COL_CODE], log->trigger_code);
    s_array_text (&columns [COL_MSG], log->trigger_msg);
    s_array_text (&columns [COL_TYPE], log->trigger_type);
    s_array_int (&columns [COL_ID], log->id);
    s_array_int (&columns [COL_SLOT], log->slot? 1: 0);
    self->deferred->rows++;
    pgx_log_id_used (self, log->id);
    if (self->deferred->rows >= XXL_PG_DEFER_MAX
    ||  s_deferred_bytes (self->deferred) >= XXL_PG_DEFER_BYTES)
        return pgx_flush (self);
    return 0;
}

int
pgx_flush (store_t *self)
{
    pgx_deferred_t *deferred = self->deferred;
    if (!deferred || deferred->rows == 0)
        return 0;
    size_t rows = deferred->rows;
    //  (taken off first: the INSERT goes through pgx_run, which flushes)
    deferred->rows = 0;
    s_array_t *columns = deferred->columns;
    //  (rows of ids of this handle's own: no lock needed, xxl_store_pg.c)
    int lock_free = self->lock_free;
    self->lock_free = 1;
    PGresult *result = pgx_run (self, PGX_WRITE | PGX_ONCE,
        "INSERT INTO xxl_job_log (job_group, job_id, executor_address, executor_handler,"
        " executor_param, executor_sharding_param, executor_fail_retry_count, trigger_time,"
        " trigger_code, trigger_msg, trigger_type, id, slot)"
        " SELECT * FROM unnest ($1::int8[], $2::int8[], $3::text[], $4::text[], $5::text[],"
        " $6::text[], $7::int8[], $8::int8[], $9::int8[], $10::text[], $11::text[], $12::int8[],"
        " $13::int8[]) ON CONFLICT DO NOTHING", "sssssssssssss",
        s_array_end (&columns [COL_GROUP]), s_array_end (&columns [COL_JOB]),
        s_array_end (&columns [COL_ADDRESS]), s_array_end (&columns [COL_HANDLER]),
        s_array_end (&columns [COL_PARAM]), s_array_end (&columns [COL_SHARD]),
        s_array_end (&columns [COL_RETRY]), s_array_end (&columns [COL_TIME]),
        s_array_end (&columns [COL_CODE]), s_array_end (&columns [COL_MSG]),
        s_array_end (&columns [COL_TYPE]), s_array_end (&columns [COL_ID]),
        s_array_end (&columns [COL_SLOT]));
    self->lock_free = lock_free;
    s_deferred_reset (deferred);
    int rc = 0;
    if (!result)
        rc = -1;
    else
    if ((size_t) pgx_changes (result) != rows)
        rc = pgx_failf (self, "log add: UNIQUE constraint failed: xxl_job_log (%zu of %zu"
                        " rows of ids of their own were there already)",
                        rows - (size_t) pgx_changes (result), rows);
    PQclear (result);
    if (rc)
        pgx_txn_lose (self);
    return rc;
}

//  --------------------------------------------------------------------
//  A CALLBACK's items

//  Keys that are ids, not strings
static size_t
s_id_hash (const void *key)
{
    return (size_t) ((uintptr_t) key * 0x9E3779B97F4A7C15ull);
}

static int
s_id_compare (const void *a, const void *b)
{
    return (uintptr_t) a < (uintptr_t) b? -1: (uintptr_t) a > (uintptr_t) b;
}

int
pgx_log_handle_done_many (xxl_store_t *base, const xxl_store_done_t *items, size_t count,
                          int *done)
{
    store_t *self = (store_t *) base;
    if (count == 0)
        return 0;
    //  Each id once: its first item's (the later ones change nothing)
    zhashx_t *first = zhashx_new ();
    assert (first);
    zhashx_set_key_hasher (first, s_id_hash);
    zhashx_set_key_comparator (first, s_id_compare);
    zhashx_set_key_duplicator (first, NULL);
    zhashx_set_key_destructor (first, NULL);
    enum { D_ID, D_ADDRESS, D_TIME, D_CODE, D_MSG, D_STAMP, D_COLUMNS };
    s_array_t columns [D_COLUMNS];
    memset (columns, 0, sizeof columns);
    for (size_t i = 0; i < count; i++) {
        done [i] = 1;
        assert (items [i].address);
        //  (ids are ≥ 1: a key never NULL)
        void *key = (void *) (uintptr_t) items [i].log_id;
        if (zhashx_lookup (first, key))
            continue;
        zhashx_insert (first, key, (void *) (uintptr_t) (i + 1));
        s_array_int (&columns [D_ID], items [i].log_id);
        s_array_text (&columns [D_ADDRESS], items [i].address);
        s_array_int (&columns [D_TIME], items [i].handle_time);
        s_array_int (&columns [D_CODE], items [i].code);
        s_array_text (&columns [D_MSG], items [i].msg);
        s_array_int (&columns [D_STAMP], items [i].trigger_time);
    }
    PGresult *result = pgx_run (self, PGX_WRITE | PGX_ONCE,
        "UPDATE xxl_job_log AS l SET handle_time = u.handle_time, handle_code = u.code,"
        " handle_msg = u.msg,"
        " trigger_time = CASE WHEN l.trigger_code = 0 AND u.stamp <> 0 THEN u.stamp"
        "  ELSE l.trigger_time END,"
        " trigger_code = CASE l.trigger_code WHEN 0 THEN 200 ELSE l.trigger_code END"
        " FROM unnest ($1::int8[], $2::text[], $3::int8[], $4::int8[], $5::text[], $6::int8[])"
        "  AS u (id, address, handle_time, code, msg, stamp)"
        " WHERE l.id = u.id AND l.handle_code = 0 AND l.trigger_code IN (0, 200)"
        "  AND l.executor_address = u.address"
        " RETURNING l.id", "ssssss",
        s_array_end (&columns [D_ID]), s_array_end (&columns [D_ADDRESS]),
        s_array_end (&columns [D_TIME]), s_array_end (&columns [D_CODE]),
        s_array_end (&columns [D_MSG]), s_array_end (&columns [D_STAMP]));
    for (int c = 0; c < D_COLUMNS; c++)
        s_array_free (&columns [c]);
    int rc = result? 0: -1;
    if (!result)
        for (size_t i = 0; i < count; i++)
            done [i] = -1;
    if (result) {
        int rows = PQntuples (result);
        for (int r = 0; r < rows; r++) {
            uintptr_t at = (uintptr_t) zhashx_lookup (first,
                                                      (void *) (uintptr_t) pgx_int (result, r, 0));
            if (at)
                done [at - 1] = 0;
        }
        PQclear (result);
    }
    zhashx_destroy (&first);
    return rc;
}
