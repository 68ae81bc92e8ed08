/*  xxl_store_sql_flows.c -- the store's shared SQL for workflows, their
    runs and the log rows of their nodes (DESIGN §12).

    Owns: the bodies of the workflow_* slots but the two adds (each
    backend reads its new id its own way), and log_flow_mark and
    log_flow_run.
    MUST: a node's start is its log row marked (run, node, attempt), which
    the schema holds UNIQUE: a second mark of the same start fails.
    MUST / MUST NOT / errors: the body files' contract, stated once in
    xxl_store_sql_int.h (calls only xxl_store_sql.c, below it).
*/

#include "xxl_store_sql.h"
#include "xxl_store_sql_int.h"

#include <assert.h>
#include <czmq.h>
#include <stdlib.h>
#include <string.h>

//  A workflow's share is in mask ($N: the mask as an integer)
#define XXL_FLOW_SHARE_IN(n, column) \
    " ((CAST (" n " AS BIGINT) >> CAST (" column " % 16 AS INTEGER)) & 1) = 1"

#define XXL_WORKFLOW_COLUMNS \
    "id, name, description, definition, schedule_type, schedule_conf, timezone," \
    " misfire_strategy, status, next_time, add_time, update_time, calendar"

//  The map of WORKFLOW_LIST and WORKFLOW_SHOW (but the definition)
#define XXL_WORKFLOW_MAP \
    "SELECT id, name, description, schedule_type AS \"scheduleType\"," \
    " schedule_conf AS \"scheduleConf\", timezone, misfire_strategy AS \"misfireStrategy\"," \
    " calendar, status AS \"triggerStatus\", next_time AS \"triggerNextTime\", add_time AS \"addTime\"," \
    " update_time AS \"updateTime\" FROM xxl_workflow"

//  The frees of xxl_store.h's workflow types live here, at the bottom of
//  the store, so that the bodies below use them too
void
xxl_workflow_free (xxl_workflow_t *w)
{
    char **strings [] = { &w->name, &w->description, &w->definition, &w->schedule_type,
                          &w->schedule_conf, &w->timezone, &w->misfire_strategy,
                          &w->calendar };
    for (size_t i = 0; i < sizeof strings / sizeof strings [0]; i++)
        free (*strings [i]);
    memset (w, 0, sizeof *w);
}

void
xxl_workflow_run_free (xxl_workflow_run_t *run)
{
    free (run->status);
    free (run->param);
    free (run->definition);
    free (run->killed);
    free (run->trigger_type);
    memset (run, 0, sizeof *run);
}

void
xxl_workflow_rows_free (xxl_workflow_row_t **rows, size_t count)
{
    for (size_t i = 0; rows && *rows && i < count; i++) {
        free ((*rows) [i].node);
        free ((*rows) [i].handle_msg);
    }
    if (rows) {
        free (*rows);
        *rows = NULL;
    }
}

int
xs_workflow_save (xxl_store_t *base, const xxl_workflow_t *w)
{
    return xsql_exec (base,
        "UPDATE xxl_workflow SET name = $1, description = $2, definition = $3,"
        " schedule_type = $4, schedule_conf = $5, timezone = $6, misfire_strategy = $7,"
        " status = $8, next_time = $9, update_time = $10, calendar = $12 WHERE id = $11",
        "sssssssiiiis",
        w->name, w->description? w->description: "", w->definition,
        w->schedule_type? w->schedule_type: "NONE", w->schedule_conf? w->schedule_conf: "",
        w->timezone? w->timezone: "", w->misfire_strategy? w->misfire_strategy: "DO_NOTHING",
        w->status, w->next_time, w->update_time, w->id, w->calendar? w->calendar: "") < 0?
        -1: 0;
}

int
xs_workflow_rm (xxl_store_t *base, int64_t id)
{
    if (xsql_exec (base, "DELETE FROM xxl_workflow_run WHERE workflow_id = $1", "i", id) < 0)
        return -1;
    return xsql_exec (base, "DELETE FROM xxl_workflow WHERE id = $1", "i", id);
}

static void
s_workflow_read (const xxl_store_driver_t *driver, const xxl_store_row_t *row, void *arg)
{
    xxl_workflow_t *w = (xxl_workflow_t *) arg;
    w->id = driver->column_int (row, 0);
    w->name = driver->column_text (row, 1);
    w->description = driver->column_text (row, 2);
    w->definition = driver->column_text (row, 3);
    w->schedule_type = driver->column_text (row, 4);
    w->schedule_conf = driver->column_text (row, 5);
    w->timezone = driver->column_text (row, 6);
    w->misfire_strategy = driver->column_text (row, 7);
    w->status = driver->column_int (row, 8);
    w->next_time = driver->column_int (row, 9);
    w->add_time = driver->column_int (row, 10);
    w->update_time = driver->column_int (row, 11);
    w->calendar = driver->column_text (row, 12);
}

int
xs_workflow_load (xxl_store_t *base, int64_t id, xxl_workflow_t *w)
{
    memset (w, 0, sizeof *w);
    int rows = xsql_row (base, "workflow query", s_workflow_read, w,
        "SELECT " XXL_WORKFLOW_COLUMNS " FROM xxl_workflow WHERE id = $1", "i", id);
    if (rows <= 0)
        return rows < 0? -1: 1;
    if (w->name && w->description && w->definition && w->schedule_type && w->schedule_conf
    &&  w->timezone && w->misfire_strategy && w->calendar)
        return 0;
    xxl_workflow_free (w);
    xsql_driver (base)->set_error (base, "out of memory");
    return -1;
}

int
xs_workflow_encode (xxl_store_t *base, xxl_enc_t *enc, int64_t id)
{
    return xsql_encode (base, enc, 0, XXL_WORKFLOW_MAP " WHERE id = $1", "i", id);
}

int
xs_workflow_encode_page (xxl_store_t *base, xxl_enc_t *enc, size_t max_size, int *truncated,
                         int64_t limit, int64_t offset)
{
    return xsql_encode_max (base, enc, max_size, truncated,
                            XXL_WORKFLOW_MAP " ORDER BY id LIMIT $1 OFFSET $2", "ii",
                            limit, offset);
}

int64_t
xs_workflow_count (xxl_store_t *base)
{
    return xsql_scalar (base, "SELECT COUNT(*) FROM xxl_workflow", "");
}

int
xs_workflow_using_job (xxl_store_t *base, int64_t job, int64_t *ids, size_t max,
                       size_t *count)
{
    //  The canonical JSON writes a node's job as "job":N, then its param
    //  or join: a candidate; the caller reads each graph
    char pattern [48];
    snprintf (pattern, sizeof pattern, "%%\"job\":%" PRId64 ",%%", job);
    return xsql_id_list (base, ids, max, count,
        "SELECT id FROM xxl_workflow WHERE definition LIKE $1 ORDER BY id", "s", pattern);
}

int
xs_workflow_calendar_ids (xxl_store_t *base, const char *name, int64_t after, int64_t *ids,
                          size_t max, size_t *count)
{
    return xsql_id_list (base, ids, max, count,
        "SELECT id FROM xxl_workflow WHERE calendar = $1 AND id > $2 ORDER BY id LIMIT $3",
        "sii", name, after, (int64_t) max);
}

int
xs_workflow_due (xxl_store_t *base, uint64_t mask, int64_t before, int64_t *ids, size_t max,
                 size_t *count)
{
    return xsql_id_list (base, ids, max, count,
        "SELECT id FROM xxl_workflow WHERE status = 1 AND next_time > 0 AND next_time <= $2"
        " AND" XXL_FLOW_SHARE_IN ("$1", "id") " ORDER BY next_time, id", "ii",
        (int64_t) mask, before);
}

int
xs_workflow_set_next (xxl_store_t *base, int64_t id, int64_t next)
{
    return xsql_exec (base, "UPDATE xxl_workflow SET next_time = $1 WHERE id = $2", "ii",
                      next, id) < 0? -1: 0;
}

static void
s_run_read (const xxl_store_driver_t *driver, const xxl_store_row_t *row, void *arg)
{
    xxl_workflow_run_t *run = (xxl_workflow_run_t *) arg;
    run->id = driver->column_int (row, 0);
    run->workflow_id = driver->column_int (row, 1);
    run->status = driver->column_text (row, 2);
    run->param = driver->column_text (row, 3);
    run->definition = driver->column_text (row, 4);
    run->killed = driver->column_text (row, 5);
    run->trigger_type = driver->column_text (row, 6);
    run->trigger_time = driver->column_int (row, 7);
    run->end_time = driver->column_int (row, 8);
}

int
xs_workflow_run_load (xxl_store_t *base, int64_t id, xxl_workflow_run_t *run)
{
    memset (run, 0, sizeof *run);
    int rows = xsql_row (base, "workflow run query", s_run_read, run,
                         xsql_sql (base, XXL_SQL_WORKFLOW_RUN_LOAD), "i", id);
    if (rows <= 0)
        return rows < 0? -1: 1;
    if (run->status && run->param && run->definition && run->killed && run->trigger_type)
        return 0;
    xxl_workflow_run_free (run);
    xsql_driver (base)->set_error (base, "out of memory");
    return -1;
}

int
xs_workflow_run_set (xxl_store_t *base, int64_t id, const char *status, int64_t end_time,
                     const char *killed)
{
    if (killed)
        return xsql_exec (base,
            "UPDATE xxl_workflow_run SET status = $1, end_time = $2, killed = $3 WHERE id = $4",
            "sisi", status, end_time, killed, id);
    return xsql_exec (base,
        "UPDATE xxl_workflow_run SET status = $1, end_time = $2 WHERE id = $3", "sii",
        status, end_time, id);
}

int
xs_workflow_run_ids (xxl_store_t *base, uint64_t mask, int64_t after, int64_t *ids,
                     size_t max, size_t *count)
{
    return xsql_id_list (base, ids, max, count,
        "SELECT id FROM xxl_workflow_run WHERE status = 'RUNNING' AND id > $2"
        " AND" XXL_FLOW_SHARE_IN ("$1", "workflow_id") " ORDER BY id LIMIT $3", "iii",
        (int64_t) mask, after, (int64_t) max);
}

int
xs_workflow_runs_running (xxl_store_t *base)
{
    return (int) xsql_scalar (base, "SELECT COUNT(*) FROM (SELECT 1 FROM xxl_workflow_run"
                                    " WHERE status = 'RUNNING' LIMIT 1) running", "");
}

int
xs_workflow_run_encode (xxl_store_t *base, xxl_enc_t *enc, int64_t id)
{
    return xsql_encode (base, enc, 0, XXL_SQL_RUN_MAP " WHERE id = $1", "i", id);
}

int
xs_workflow_run_encode_below (xxl_store_t *base, xxl_enc_t *enc, size_t max_size,
                              int *truncated, int64_t workflow_id, int64_t before,
                              int64_t limit)
{
    if (workflow_id == 0)
        return xsql_encode_max (base, enc, max_size, truncated, XXL_SQL_RUNS_BELOW_ANY, "ii",
                                before, limit);
    return xsql_encode_max (base, enc, max_size, truncated, XXL_SQL_RUNS_BELOW, "iii",
                            workflow_id, before, limit);
}

int
xs_workflow_run_encode_page (xxl_store_t *base, xxl_enc_t *enc, size_t max_size,
                             int *truncated, int64_t workflow_id, int64_t limit)
{
    return xs_workflow_run_encode_below (base, enc, max_size, truncated, workflow_id,
                                         INT64_MAX, limit);
}

//  A string value of a row's map as a new string ("" for nil)
static char *
s_map_text (const msgpack_object *map, const char *key)
{
    const msgpack_object *value = xxl_msg_get (map, key);
    if (value && value->type == MSGPACK_OBJECT_STR)
        return strndup (value->via.str.ptr, value->via.str.size);
    return strdup ("");
}

static int64_t
s_map_int (const msgpack_object *map, const char *key)
{
    const msgpack_object *value = xxl_msg_get (map, key);
    if (value && value->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
        return (int64_t) value->via.u64;
    if (value && value->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
        return value->via.i64;
    return 0;
}

int
xs_workflow_run_rows (xxl_store_t *base, int64_t run_id, xxl_workflow_row_t **rows,
                      size_t *count)
{
    *rows = NULL;
    *count = 0;
    xxl_enc_t *enc = xxl_enc_new ();
    if (!enc) {
        xsql_driver (base)->set_error (base, "out of memory");
        return -1;
    }
    int n = xsql_encode (base, enc, 1,
        "SELECT id, flow_node AS node, flow_attempt AS attempt, trigger_code AS tc,"
        " handle_code AS hc, handle_msg AS msg, COALESCE (handle_time, 0) AS ht,"
        " COALESCE (trigger_time, 0) AS tt FROM xxl_job_log WHERE flow_run_id = $1"
        " ORDER BY flow_node, flow_attempt, id", "i", run_id);
    if (n <= 0) {
        xxl_enc_destroy (&enc);
        return n < 0? -1: 0;
    }
    size_t size;
    const void *data = xxl_enc_finish (enc, &size);
    msgpack_unpacked unpacked;
    msgpack_unpacked_init (&unpacked);
    size_t offset = 0;
    int rc = -1;
    if (msgpack_unpack_next (&unpacked, (const char *) data, size, &offset)
        == MSGPACK_UNPACK_SUCCESS
    &&  unpacked.data.type == MSGPACK_OBJECT_ARRAY) {
        const msgpack_object_array *array = &unpacked.data.via.array;
        *rows = (xxl_workflow_row_t *) calloc (array->size? array->size: 1, sizeof **rows);
        rc = *rows? 0: -1;
        for (uint32_t i = 0; rc == 0 && i < array->size; i++) {
            const msgpack_object *map = &array->ptr [i];
            xxl_workflow_row_t *row = &(*rows) [(*count)++];
            row->log_id = s_map_int (map, "id");
            row->node = s_map_text (map, "node");
            row->attempt = s_map_int (map, "attempt");
            row->trigger_code = s_map_int (map, "tc");
            row->handle_code = s_map_int (map, "hc");
            row->handle_msg = s_map_text (map, "msg");
            int64_t handled = s_map_int (map, "ht");
            row->end_time = handled > 0? handled: s_map_int (map, "tt");
            if (!row->node || !row->handle_msg)
                rc = -1;
        }
    }
    msgpack_unpacked_destroy (&unpacked);
    xxl_enc_destroy (&enc);
    if (rc) {
        xxl_workflow_rows_free (rows, *count);
        *count = 0;
        xsql_driver (base)->set_error (base, "workflow run rows: out of memory");
    }
    return rc;
}

int
xs_log_flow_mark (xxl_store_t *base, int64_t log_id, int64_t run_id, const char *node,
                  int64_t attempt)
{
    int changed = xsql_exec (base,
        "UPDATE xxl_job_log SET flow_run_id = $1, flow_node = $2, flow_attempt = $3"
        " WHERE id = $4", "isii", run_id, node, attempt, log_id);
    if (changed == 1)
        return 0;
    if (changed == 0)
        xsql_driver (base)->set_error (base, "log flow mark: no such log row");
    return -1;
}

int64_t
xs_log_flow_run (xxl_store_t *base, int64_t log_id)
{
    return xsql_scalar (base,
        "SELECT COALESCE (MAX (flow_run_id), 0) FROM xxl_job_log WHERE id = $1", "i", log_id);
}

int
xs_workflow_ids (xxl_store_t *base, int64_t after, int64_t *ids, size_t max, size_t *count)
{
    return xsql_id_list (base, ids, max, count,
        "SELECT id FROM xxl_workflow WHERE id > $1 ORDER BY id LIMIT $2", "ii", after,
        (int64_t) max);
}
