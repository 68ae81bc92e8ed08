/*  xxl_store_sql_backfills.c -- the store's shared SQL for backfills.

    Owns: the whole backfills table (xxl_store_backfills_t): each
    backend's backfills table is XXL_STORE_SQL_BACKFILLS.
    MUST: a row read into an xxl_store_backfill_t is freed by the caller
    (xxl_store_backfill_free).  add runs under the store's write lock
    (every write does), so MAX (id) + 1 is a new id; rows are never
    deleted, so an id is never reused.
    MUST / MUST NOT / errors: the body files' contract, stated once in
    xxl_store_sql_int.h (calls only xxl_store_sql.c, below it).
*/

#include "xxl_store_sql.h"
#include "xxl_store_sql_int.h"

#include <czmq.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int64_t
xs_backfill_add (xxl_store_t *base, const xxl_store_backfill_t *row)
{
    int64_t last = xsql_scalar (base, "SELECT COALESCE (MAX (id), 0) FROM xxl_backfill", NULL);
    if (last < 0)
        return -1;
    int changed = xsql_exec (base,
        "INSERT INTO xxl_backfill (id, job_id, from_time, to_time, per_second, cursor_time,"
        " total, made, skipped, state, started_by, msg, add_time, update_time)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
        "iiiiiiiiisssii", last + 1, row->job_id, row->from_time,
        row->to_time, row->per_second, row->cursor, row->total, row->made, row->skipped,
        row->state? row->state: "RUNNING", row->by? row->by: "", row->msg? row->msg: "",
        row->add_time, row->update_time);
    return changed == 1? last + 1: -1;
}

static void
s_backfill_read (const xxl_store_driver_t *driver, const xxl_store_row_t *row, void *arg)
{
    xxl_store_backfill_t *out = (xxl_store_backfill_t *) arg;
    out->id = driver->column_int (row, 0);
    out->job_id = driver->column_int (row, 1);
    out->from_time = driver->column_int (row, 2);
    out->to_time = driver->column_int (row, 3);
    out->per_second = driver->column_int (row, 4);
    out->cursor = driver->column_int (row, 5);
    out->total = driver->column_int (row, 6);
    out->made = driver->column_int (row, 7);
    out->skipped = driver->column_int (row, 8);
    out->state = driver->column_text (row, 9);
    out->by = driver->column_text (row, 10);
    out->msg = driver->column_text (row, 11);
    out->add_time = driver->column_int (row, 12);
    out->update_time = driver->column_int (row, 13);
}

int
xs_backfill_get (xxl_store_t *base, int64_t id, xxl_store_backfill_t *out)
{
    memset (out, 0, sizeof *out);
    int rows = xsql_row (base, "backfill_get", s_backfill_read, out,
        "SELECT id, job_id, from_time, to_time, per_second, cursor_time, total, made, skipped,"
        " state, started_by, msg, add_time, update_time FROM xxl_backfill WHERE id = $1",
        "i", id);
    return rows < 0? -1: rows == 0;
}

int
xs_backfill_advance (xxl_store_t *base, int64_t id, int64_t was, int64_t cursor,
                     int64_t made, int64_t skipped, const char *state, const char *msg,
                     int64_t now)
{
    return xsql_exec (base,
        "UPDATE xxl_backfill SET cursor_time = $1, made = made + $2, skipped = skipped + $3,"
        " state = $4, msg = COALESCE ($5, msg), update_time = $6"
        " WHERE id = $7 AND cursor_time = $8 AND state = 'RUNNING'", "iiissiii",
        cursor, made, skipped, state, msg, now, id, was);
}

int
xs_backfill_stop (xxl_store_t *base, int64_t id, const char *msg, int64_t now)
{
    return xsql_exec (base,
        "UPDATE xxl_backfill SET state = 'STOPPED', msg = $1, update_time = $2"
        " WHERE id = $3 AND state = 'RUNNING'", "sii", msg? msg: "", now, id);
}

int
xs_backfill_encode (xxl_store_t *base, xxl_enc_t *enc, int64_t id)
{
    return xsql_encode (base, enc, 0, XXL_SQL_BACKFILL_MAP " WHERE id = $1", "i", id);
}

int
xs_backfill_encode_below (xxl_store_t *base, xxl_enc_t *enc, size_t max_size, int *truncated,
                          int64_t job_id, int64_t before, int64_t limit)
{
    if (job_id == 0)
        return xsql_encode_max (base, enc, max_size, truncated, XXL_SQL_BACKFILLS_BELOW_ANY,
                                "ii", before, limit);
    return xsql_encode_max (base, enc, max_size, truncated, XXL_SQL_BACKFILLS_BELOW, "iii",
                            job_id, before, limit);
}

int
xs_backfill_encode_page (xxl_store_t *base, xxl_enc_t *enc, size_t max_size, int *truncated,
                         int64_t job_id, int64_t limit)
{
    return xs_backfill_encode_below (base, enc, max_size, truncated, job_id, INT64_MAX, limit);
}

int
xs_backfill_running_ids (xxl_store_t *base, int64_t after, int64_t *ids, size_t max,
                         size_t *count)
{
    return xsql_id_list (base, ids, max, count,
        "SELECT id FROM xxl_backfill WHERE state = 'RUNNING' AND id > $1 ORDER BY id LIMIT $2",
        "ii", after, (int64_t) max);
}

//  One statement for all the instants, whatever their number (one round
//  trip on PostgreSQL); each instant is one probe of the planned instants'
//  index by (instant, job) (the instant's equality implies the unique
//  index's IS NOT NULL)
int
xs_backfill_made_times (xxl_store_t *base, int64_t job_id, const int64_t *times, size_t count,
                        int64_t *made, size_t *made_count)
{
    *made_count = 0;
    if (count == 0)
        return 0;
    char *set = xxl_store_sql_group_set (times, count);
    int rc = xsql_id_list (base, made, count, made_count,
                           xsql_sql (base, XXL_SQL_BACKFILL_MADE_TIMES), "is", job_id, set);
    free (set);
    return rc;
}
