/*  xxl_store_sql_calendars.c -- the store's shared SQL for calendars.

    Owns: the whole calendars table (xxl_store_calendars_t): each
    backend's calendars table is XXL_STORE_SQL_CALENDARS.
    MUST: a row read into an xxl_store_calendar_t is freed by the caller
    (xxl_store_calendar_free).
    MUST / MUST NOT / errors: the body files' contract, stated once in
    xxl_store_sql_int.h (calls only xxl_store_sql.c, below it).
*/

#include "xxl_store_sql.h"
#include "xxl_store_sql_int.h"

#include <czmq.h>
#include <stdlib.h>
#include <string.h>

#define XXL_CALENDAR_MAP \
    "SELECT name, dates, exclude_cron AS \"excludeCron\", timezone," \
    " add_time AS \"addTime\", update_time AS \"updateTime\" FROM xxl_calendar"

int
xs_calendar_put (xxl_store_t *base, const xxl_store_calendar_t *row, int replace)
{
    if (replace)
        return xsql_exec (base,
            "INSERT INTO xxl_calendar (name, dates, exclude_cron, timezone, add_time,"
            " update_time) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (name) DO UPDATE"
            " SET dates = excluded.dates, exclude_cron = excluded.exclude_cron,"
            " timezone = excluded.timezone, update_time = excluded.update_time", "ssssii",
            row->name, row->dates, row->exclude_cron, row->timezone, row->add_time,
            row->update_time);
    return xsql_exec (base,
        "INSERT INTO xxl_calendar (name, dates, exclude_cron, timezone, add_time, update_time)"
        " VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (name) DO NOTHING", "ssssii",
        row->name, row->dates, row->exclude_cron, row->timezone, row->add_time,
        row->update_time);
}

static void
s_calendar_read (const xxl_store_driver_t *driver, const xxl_store_row_t *row, void *arg)
{
    xxl_store_calendar_t *out = (xxl_store_calendar_t *) arg;
    out->name = driver->column_text (row, 0);
    out->dates = driver->column_text (row, 1);
    out->exclude_cron = driver->column_text (row, 2);
    out->timezone = driver->column_text (row, 3);
    out->add_time = driver->column_int (row, 4);
    out->update_time = driver->column_int (row, 5);
}

int
xs_calendar_get (xxl_store_t *base, const char *name, xxl_store_calendar_t *out)
{
    memset (out, 0, sizeof *out);
    int rows = xsql_row (base, "calendar_get", s_calendar_read, out,
        "SELECT name, dates, exclude_cron, timezone, add_time, update_time FROM xxl_calendar"
        " WHERE name = $1", "s", name);
    return rows < 0? -1: rows == 0;
}

int
xs_calendar_rm (xxl_store_t *base, const char *name)
{
    return xsql_exec (base, "DELETE FROM xxl_calendar WHERE name = $1", "s", name);
}

int
xs_calendar_encode (xxl_store_t *base, xxl_enc_t *enc, const char *name)
{
    return xsql_encode (base, enc, 0, XXL_CALENDAR_MAP " WHERE name = $1", "s", name);
}

int
xs_calendar_encode_all (xxl_store_t *base, xxl_enc_t *enc)
{
    return xsql_encode (base, enc, 1, XXL_CALENDAR_MAP " ORDER BY name", NULL);
}

int
xs_calendar_job_ids (xxl_store_t *base, const char *name, int64_t after, int64_t *ids,
                     size_t max, size_t *count)
{
    return xsql_id_list (base, ids, max, count,
        "SELECT id FROM xxl_job_info WHERE calendar = $1 AND id > $2 ORDER BY id LIMIT $3",
        "sii", name, after, (int64_t) max);
}
