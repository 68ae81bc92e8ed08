/*  xxl_store_sql_jobs.c -- the store's shared SQL for groups, jobs and
    their glue.

    Owns: the bodies of the group_*, job_*, jobs_* and glue_* slots and what
    each makes of its rows (group_load, job_load and glue_get read into
    the engine's structs; job_unchild edits the parents' child lists).
    MUST: job_unchild edits one parent per statement, 256 parents a scan,
    as the backends did; glue_get's allocation failure is -1 with the
    handle's error set (set_error).
    MUST / MUST NOT / errors: the body files' contract, stated once in
    xxl_store_sql_int.h (calls only xxl_store_sql.c, below it).
*/

#include "xxl_store_sql.h"
#include "xxl_store_sql_int.h"

#include <assert.h>
#include <czmq.h>
#include <stdlib.h>
#include <string.h>

//  The arguments of XXL_SQL_JOB_COUNT and XXL_SQL_JOB_ENCODE_PAGE
//  ("iiisssis": $1 group, $2 limit, $3 offset, $4 handler, $5 description,
//  $6 author, $7 status, $8 the set of groups, xxl_store_sql_group_set)
#define XXL_JOB_FILTER_ARGS(f, set) \
    (f)->group_id, (f)->limit, (f)->offset, (f)->handler, (f)->desc, (f)->author, \
    (f)->status, set

int64_t
xs_glue_count (xxl_store_t *base, int64_t job_id)
{
    return xsql_scalar (base,
        "SELECT COUNT(*) FROM xxl_job_logglue WHERE job_id = $1", "i", job_id);
}

int
xs_glue_exists (xxl_store_t *base, int64_t job_id, int64_t version)
{
    int64_t count = xsql_scalar (base, "SELECT COUNT(*) FROM xxl_job_logglue"
                              " WHERE job_id = $1 AND version = $2", "ii", job_id, version);
    return count < 0? -1: count > 0;
}

int64_t
xs_glue_last (xxl_store_t *base, int64_t job_id)
{
    return xsql_scalar (base,
        "SELECT COALESCE (MAX (version), 0) FROM xxl_job_logglue WHERE job_id = $1", "i", job_id);
}

int64_t
xs_group_jobs (xxl_store_t *base, int64_t id)
{
    return xsql_scalar (base, "SELECT COUNT(*) FROM xxl_job_info WHERE job_group = $1",
                     "i", id);
}

int
xs_group_job_ids (xxl_store_t *base, int64_t id, int64_t after, int64_t *ids, size_t max,
                  size_t *count)
{
    return xsql_id_list (base,
        ids, max, count, "SELECT id FROM xxl_job_info WHERE job_group = $1"
        " AND id > $2 ORDER BY id LIMIT $3", "iii", id, after, (int64_t) max);
}

int
xs_group_rm (xxl_store_t *base, int64_t id)
{
    return xsql_exec (base, "DELETE FROM xxl_job_group WHERE id = $1", "i", id) < 0
           ? -1: 0;
}

char *
xs_job_children (xxl_store_t *base, int64_t id)
{
    return xsql_text (base, "SELECT child_jobid FROM xxl_job_info WHERE id = $1",
                   "i", id);
}

int
xs_job_drop_plans (xxl_store_t *base, int64_t job_id, int64_t now)
{
    return xsql_exec (base, xsql_sql (base, XXL_SQL_JOB_DROP_PLANS), "ii", job_id, now);
}

int
xs_job_delay_shift (xxl_store_t *base, uint64_t mask, int64_t step, int64_t never)
{
    return xsql_exec (base, xsql_sql (base, XXL_SQL_JOB_DELAY_SHIFT), "iii", (int64_t) mask,
                      step, never);
}

int
xs_job_exists (xxl_store_t *base, int64_t id)
{
    int64_t count = xsql_scalar (base,
        "SELECT COUNT(*) FROM xxl_job_info WHERE id = $1", "i", id);
    return count < 0? -1: count > 0;
}

int
xs_job_halt (xxl_store_t *base, int64_t id, int64_t last)
{
    return xsql_exec (base,
        "UPDATE xxl_job_info SET trigger_status = 0, trigger_last_time = $1,"
        " trigger_next_time = 0 WHERE id = $2", "ii", last, id);
}

int
xs_job_marked_ids (xxl_store_t *base, int64_t mark, int64_t after, int64_t *ids, size_t max,
                   size_t *count)
{
    return xsql_id_list (base,
        ids, max, count, "SELECT id FROM xxl_job_info WHERE trigger_next_time = $1"
        " AND id > $2 ORDER BY id LIMIT $3", "iii", mark, after, (int64_t) max);
}

int64_t
xs_job_rm_logs (xxl_store_t *base, int64_t id)
{
    return xsql_exec (base, xsql_sql (base, XXL_SQL_JOB_RM_LOGS), "i", id);
}

int64_t
xs_job_rm_logs_some (xxl_store_t *base, int64_t id, int64_t limit)
{
    return xsql_exec (base, xsql_sql (base, XXL_SQL_JOB_RM_LOGS_SOME), "ii", id, limit);
}

int
xs_job_set_times (xxl_store_t *base, int64_t id, int64_t last, int64_t next)
{
    return xsql_exec (base,
        "UPDATE xxl_job_info SET trigger_last_time = $1, trigger_next_time = $2 WHERE id = $3",
        "iii", last, next, id);
}

int
xs_job_due (xxl_store_t *base, int64_t before, xxl_store_due_t *rows, size_t max, size_t *count)
{
    return base->methods->job_due_in (base, XXL_STORE_SHARES_ALL, before, rows, max, count);
}

int
xs_job_rm (xxl_store_t *base, int64_t id)
{
    xxl_store_t *self = base;
    if (xsql_exec (self, "DELETE FROM xxl_job_info WHERE id = $1", "i", id) < 0
    ||  xsql_exec (self, "DELETE FROM xxl_job_logglue WHERE job_id = $1", "i", id) < 0)
        return -1;
    return 0;
}

int
xs_jobs_have_children (xxl_store_t *base)
{
    int64_t any = xsql_scalar (base, XXL_SQL_JOBS_HAVE_CHILDREN, NULL);
    return any < 0? -1: any != 0;
}

int
xs_group_encode_all (xxl_store_t *base, xxl_enc_t *enc)
{
    return xsql_encode (base, enc, 1,
        "SELECT id, app_name AS appname, title, address_type AS \"addressType\","
        " COALESCE (address_list, '') AS \"addressList\", update_time AS \"updateTime\""
        " FROM xxl_job_group ORDER BY id", NULL);
}

int
xs_glue_encode (xxl_store_t *base, xxl_enc_t *enc, int64_t job_id, int64_t version)
{
    return xsql_encode (base, enc, 0, xsql_sql (base, XXL_SQL_GLUE_ENCODE), "ii", job_id, version);
}

int
xs_group_refresh_app (xxl_store_t *base, const char *app, int64_t now)
{
    return xsql_exec (base, xsql_sql (base, XXL_SQL_GROUP_REFRESH_APP), "is", now, app) < 0? -1: 0;
}

int
xs_groups_refresh (xxl_store_t *base, int64_t now)
{
    return xsql_exec (base, xsql_sql (base, XXL_SQL_GROUPS_REFRESH), "i", now) < 0? -1: 0;
}

int
xs_glue_encode_page (xxl_store_t *base, xxl_enc_t *enc, size_t max_size, int *truncated,
                     int64_t job_id, int64_t limit, int64_t offset)
{
    return xsql_encode_max (base, enc, max_size, truncated,
        xsql_sql (base, XXL_SQL_GLUE_ENCODE_PAGE), "iii", job_id, limit, offset);
}

int
xs_job_delay_resume (xxl_store_t *base, int64_t log_id, int64_t now, int64_t mark)
{
    return xsql_exec (base, xsql_sql (base, XXL_SQL_JOB_DELAY_RESUME),
        "iii", now, log_id, mark);
}

int64_t
xs_job_count (xxl_store_t *base, const xxl_store_job_filter_t *filter)
{
    char *set = xxl_store_sql_group_set (filter->groups, filter->group_count);
    int64_t count = xsql_scalar (base, xsql_sql (base, XXL_SQL_JOB_COUNT),
                                 "iiisssis", XXL_JOB_FILTER_ARGS (filter, set));
    free (set);
    return count;
}

int
xs_job_encode (xxl_store_t *base, xxl_enc_t *enc, int64_t id)
{
    return xsql_encode (base, enc, 0, xsql_sql (base, XXL_SQL_JOB_ENCODE), "i", id);
}

int
xs_job_encode_page (xxl_store_t *base, xxl_enc_t *enc, size_t max_size, int *truncated,
                    const xxl_store_job_filter_t *filter)
{
    char *set = xxl_store_sql_group_set (filter->groups, filter->group_count);
    int rows = xsql_encode_max (base, enc, max_size, truncated,
        xsql_sql (base, XXL_SQL_JOB_ENCODE_PAGE), "iiisssis", XXL_JOB_FILTER_ARGS (filter, set));
    free (set);
    return rows;
}

//  Drops `child` from a comma-separated list; a new string
static char *
s_list_without (const char *list, int64_t child)
{
    char *out = (char *) calloc (1, strlen (list) + 1);
    char *copy = strdup (list), *save = NULL;
    if (!out || !copy) {
        free (out);
        free (copy);
        return NULL;
    }
    for (char *t = strtok_r (copy, ",", &save); t; t = strtok_r (NULL, ",", &save)) {
        char *end = NULL;
        long long value = strtoll (t, &end, 10);
        if (end != t && *end == 0 && value == child)
            continue;
        if (*out)
            strcat (out, ",");
        strcat (out, t);
    }
    free (copy);
    return out;
}

int
xs_job_unchild (xxl_store_t *base, int64_t child)
{
    xxl_store_t *self = base;
    int64_t parents [256];
    size_t count;
    int changed = 0;
    do {
        if (xsql_id_list (self, parents, 256, &count, xsql_sql (self, XXL_SQL_JOB_PARENTS), "i",
                       child))
            return -1;
        for (size_t i = 0; i < count; i++) {
            char *list = xsql_text (self,
                "SELECT child_jobid FROM xxl_job_info WHERE id = $1", "i", parents [i]);
            char *spaceless = list? strdup (list): NULL;
            if (spaceless) {
                char *w = spaceless;
                for (const char *r = list; *r; r++)
                    if (*r != ' ')
                        *w++ = *r;
                *w = 0;
            }
            char *rest = spaceless? s_list_without (spaceless, child): NULL;
            int rc = rest? xsql_exec (self,
                "UPDATE xxl_job_info SET child_jobid = $1 WHERE id = $2", "si", rest, parents [i])
                         : -1;
            free (list);
            free (spaceless);
            free (rest);
            if (rc < 0)
                return -1;
            changed++;
        }
    } while (count == 256);
    return changed;
}

static void
s_group_read (const xxl_store_driver_t *driver, const xxl_store_row_t *row, void *arg)
{
    xxl_group_t *group = (xxl_group_t *) arg;
    group->id = driver->column_int (row, 0);
    group->app_name = driver->column_text (row, 1);
    group->title = driver->column_text (row, 2);
    group->address_type = (int) driver->column_int (row, 3);
    group->address_list = driver->column_text (row, 4);
    group->update_time = driver->column_int (row, 5);
}

int
xs_group_load (xxl_store_t *base, int64_t id, xxl_group_t *group)
{
    memset (group, 0, sizeof *group);
    int rows = xsql_row (base, "group query", s_group_read, group,
        "SELECT " XXL_GROUP_COLUMNS " FROM xxl_job_group WHERE id = $1", "i", id);
    return rows < 0? -1: rows == 0;
}

int
xs_group_find (xxl_store_t *base, const char *key, xxl_group_t *group)
{
    int numeric = *key != 0;
    for (const char *p = key; *p; p++)
        if (*p < '0' || *p > '9')
            numeric = 0;
    if (numeric && strlen (key) < 18)
        return xs_group_load (base, atoll (key), group);
    memset (group, 0, sizeof *group);
    int rows = xsql_row (base, "group query", s_group_read, group,
        "SELECT " XXL_GROUP_COLUMNS " FROM xxl_job_group WHERE app_name = $1", "s", key);
    return rows < 0? -1: rows == 0;
}

//  (a job with a limit: its rows with no result written while it had
//  none count towards it from now: log_slot_ids)
int
xs_job_save (xxl_store_t *base, const xxl_job_t *job)
{
    if (xsql_exec (base,
        "UPDATE xxl_job_info SET (" XXL_JOB_COLUMNS ") = " XXL_JOB_VALUES " WHERE id = $31",
        XXL_JOB_FMT "i", XXL_JOB_ARGS (job), job->id) < 0)
        return -1;
    if (job->max_running > 0
    &&  xsql_exec (base, xsql_sql (base, XXL_SQL_LOG_SLOT_MARK), "i", job->id) < 0)
        return -1;
    return 0;
}

static void
s_job_read (const xxl_store_driver_t *driver, const xxl_store_row_t *row, void *arg)
{
    xxl_job_t *job = (xxl_job_t *) arg;
    int c = 0;
    job->id = driver->column_int (row, c++);
    job->job_group = driver->column_int (row, c++);
    job->job_desc = driver->column_text (row, c++);
    job->add_time = driver->column_int (row, c++);
    job->update_time = driver->column_int (row, c++);
    job->author = driver->column_text (row, c++);
    job->alarm_email = driver->column_text (row, c++);
    job->schedule_type = driver->column_text (row, c++);
    job->schedule_conf = driver->column_text (row, c++);
    job->misfire_strategy = driver->column_text (row, c++);
    job->executor_route_strategy = driver->column_text (row, c++);
    job->executor_handler = driver->column_text (row, c++);
    job->executor_param = driver->column_text (row, c++);
    job->executor_block_strategy = driver->column_text (row, c++);
    job->executor_timeout = driver->column_int (row, c++);
    job->executor_fail_retry_count = driver->column_int (row, c++);
    job->glue_type = driver->column_text (row, c++);
    job->glue_source = driver->column_text (row, c++);
    job->glue_remark = driver->column_text (row, c++);
    job->glue_updatetime = driver->column_int (row, c++);
    job->child_jobid = driver->column_text (row, c++);
    job->trigger_status = driver->column_int (row, c++);
    job->trigger_last_time = driver->column_int (row, c++);
    job->trigger_next_time = driver->column_int (row, c++);
    job->timezone = driver->column_text (row, c++);
    job->retry_interval = driver->column_int (row, c++);
    job->retry_backoff = driver->column_double (row, c++);
    job->retry_max_interval = driver->column_int (row, c++);
    job->calendar = driver->column_text (row, c++);
    job->agent_tags = driver->column_text (row, c++);
    job->max_running = driver->column_int (row, c++);
}

int
xs_job_load (xxl_store_t *base, int64_t id, xxl_job_t *job)
{
    memset (job, 0, sizeof *job);
    int rows = xsql_row (base, "job query", s_job_read, job,
        "SELECT id, " XXL_JOB_COLUMNS " FROM xxl_job_info WHERE id = $1", "i", id);
    return rows < 0? -1: rows == 0;
}

typedef struct {
    char **type;
    char **source;
} s_glue_t;

static void
s_glue_read (const xxl_store_driver_t *driver, const xxl_store_row_t *row, void *arg)
{
    s_glue_t *glue = (s_glue_t *) arg;
    *glue->type = driver->column_text (row, 0);
    *glue->source = driver->column_text (row, 1);
}

int
xs_glue_get (xxl_store_t *base, int64_t job_id, int64_t version, char **type, char **source)
{
    *type = *source = NULL;
    s_glue_t glue = { type, source };
    int rows = xsql_row (base, "glue query", s_glue_read, &glue,
        "SELECT glue_type, glue_source FROM xxl_job_logglue WHERE job_id = $1 AND version = $2",
        "ii", job_id, version);
    if (rows <= 0)
        return rows < 0? -1: 1;
    if (*type && *source)
        return 0;
    free (*type);
    free (*source);
    *type = *source = NULL;
    xsql_driver (base)->set_error (base, "out of memory");
    return -1;
}
