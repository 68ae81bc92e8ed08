/*  xxl_store_sql.h -- the store's SQL, once: the driver a backend gives
    the shared method bodies (xxl_store_sql_*.c), and those bodies.

    Layer: scheduler/store/sql is the bottom of the store, below the
    backends (scheduler/store/sqlite, scheduler/store/pg) and the factory
    (scheduler/store); it calls none of them but through this driver table.

    Owns: the driver table (xxl_store_driver_t) and the handle prefix
    (xxl_store_sql_t) through which the shared bodies reach it.  A backend
    owns everything else: its connection, statement cache, binding,
    transactions, migrations and the methods whose SQL truly differs.

    A backend's handle MUST begin with an xxl_store_sql_t (whose first
    member is the xxl_store_t with the method table) and MUST set driver,
    complete (xxl_store_driver_ok), before its handle is returned.  Its
    method table names the shared bodies with XXL_STORE_SQL_METHODS, its
    accounts table with XXL_STORE_SQL_ACCOUNTS, and fills the rest itself
    (xxl_store.c asserts that no slot is left empty).

    The driver's calls, like the backends' own helpers:
      - sql is a string literal (it lives as long as the program): the
        backend caches its prepared statement by the address of the text,
        so a shared statement costs what a backend's own did -- one bind
        and one step (SQLite), one PQexecPrepared (PostgreSQL);
      - placeholders are written $1, $2, ... (a number may repeat); a
        driver whose database wants another style rewrites them when it
        prepares the statement, once (SQLite: ?1, ?2, ...);
      - fmt binds the arguments in order: 'i' int64_t, 'd' double, 's'
        text (NULL binds NULL; read before the call returns), 'n' NULL;
      - exec is a write: the rows it changed, or -1; the readers (scalar,
        text, id_list, encode) do not write; scalar: the first column of
        the first row, -1 when none or on error; text: a new string, NULL
        when none, NULL or on error; id_list: the first column of up to
        max rows, 0 with *count, or -1; encode: rows as maps keyed by
        column name (see xxl_store_sqlite_int.h / xxl_store_pg_int.h),
        max_size > 0 stops an array before a row would pass it
        (*truncated 1), the count or -1; row hands the first row to a
        read function, which takes its columns through the driver's
        column readers: 1, 0 none, or -1;
      - sql[] gives the texts of the statements each dialect words its
        own way (xxl_store_stmt_t): same binds, same result columns.
    Errors are the backend's: -1 or NULL, the reason in its error(), logged
    at most once per cause per 10 s; a lost transaction fails every write
    (SQLite) or every statement (PostgreSQL) until commit or rollback.
    Transactions are the method table's (begin, commit, rollback): the
    driver does not repeat them.

    A third backend (MySQL, say) is such a driver (its helpers, a dozen
    calls, the XXL_SQL_STATEMENTS texts), its connection, and the methods
    listed at the end of sql/xxl_store_sql.c, which truly differ.
*/

#ifndef XXL_STORE_SQL_H_INCLUDED
#define XXL_STORE_SQL_H_INCLUDED

#include "xxl_store.h"

#include <czmq.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define XXL_STORE_DRIVER_VERSION 1

//  The statements of shared bodies that each dialect words its own way
//  (LIMIT -1, GREATEST or max, group_concat or string_agg, shifts of a
//  parameter, quoted aliases and casts): the body binds the same
//  arguments in the same order and reads the same columns; the driver
//  gives the text (its sql [XXL_SQL_...]), a string literal like any
typedef enum {
    XXL_SQL_JOB_PARENTS,                //  job_unchild: ids of jobs whose child list holds $1
    XXL_SQL_FIRED_RAISE_UNTIL,
    XXL_SQL_FIRED_RAISE_SENT,
    XXL_SQL_GLUE_ENCODE,
    XXL_SQL_GROUP_REFRESH_APP,
    XXL_SQL_GROUPS_REFRESH,
    XXL_SQL_LOG_LOST_IDS,
    XXL_SQL_RECOVER_LATE_JOBS,
    XXL_SQL_LOG_UNSENT_IN,
    XXL_SQL_RECOVER_STAMP_DUE_IN,
    XXL_SQL_AUDIT_DELETE,
    XXL_SQL_AUDIT_ENCODE_PAGE,
    XXL_SQL_GLUE_ENCODE_PAGE,
    XXL_SQL_JOB_DELAY_RESUME,
    XXL_SQL_LOG_ID_AT_RANK,             //  log_id_at_rank of every job: $1 0, $2 the rank
    XXL_SQL_LOG_ID_AT_RANK_JOB,         //  ... of job $1 (its index: not a walk of the log)
    XXL_SQL_RECOVER_STAMP_FIRED_IN,
    XXL_SQL_RECOVER_LATE_JOBS_IN,
    XXL_SQL_LOG_TRIGGER_END,
    XXL_SQL_LOG_OPEN_IDS_AT,
    XXL_SQL_LOG_OPEN_IDS_ALL,           //  log_open_ids_all: one text, "TIME:ID:HEX ..." ('' none)
    XXL_SQL_LOG_INSERT_TRIGGER_MSG,
    XXL_SQL_NODE_BEAT,
    XXL_SQL_REGISTRY_ALIVE,
    XXL_SQL_JOB_COUNT,
    XXL_SQL_JOB_ENCODE,
    XXL_SQL_JOB_ENCODE_PAGE,
    XXL_SQL_LOG_DELETE,
    XXL_SQL_REPORT_ENCODE_DAYS,
    XXL_SQL_LOG_ENCODE,
    XXL_SQL_REGISTRY_APPS,
    XXL_SQL_WORKFLOW_RUN_LOAD,          //  workflow_run_load: the run's row, locked where rows lock
    XXL_SQL_LOG_SLOT_ADMITTED,          //  log_slot_ids running: $1 job, $2 max
    XXL_SQL_LOG_SLOT_WAITING,           //  log_slot_ids waiting: $1 job, $2 before, $3 max
    XXL_SQL_LOG_SLOT_MARK,              //  job_save: $1 job's rows with no result count
    XXL_SQL_RECOVER_LATE_LAST,          //  recover_late_last: $1 job, $2 before
    XXL_SQL_RECOVER_DROP_LATE,          //  recover_drop_late: $1 job, $2 before, $3 kept id
    XXL_SQL_LOG_CLAIMED_IDS,            //  log_claimed_ids: $1 after, $2 max
    XXL_SQL_JOB_DROP_PLANS,             //  job_drop_plans: $1 job, $2 now
    XXL_SQL_LOG_LIST_JOB,               //  log_encode_page of job $1 (the filter's $2..$10)
    XXL_SQL_JOB_RM_LOGS,                //  job_rm_logs: $1 job
    XXL_SQL_JOB_RM_LOGS_SOME,           //  job_rm_logs_some: $1 job, $2 its oldest so many
    XXL_SQL_LOG_DELETE_JOB,             //  log_delete of job $1 (as XXL_SQL_LOG_DELETE's)
    XXL_SQL_BACKFILL_MADE_TIMES,        //  backfill_made_times: $1 job, $2 the instants'
                                        //  set (xxl_store_sql_group_set); those made, ascending
    XXL_SQL_JOB_DELAY_SHIFT,            //  job_delay_shift: $1 mask, $2 step, $3 never
    XXL_SQL_STATEMENTS                  //  how many (the length of a driver's sql)
} xxl_store_stmt_t;

//  A row of a result, the backend's own (a statement, a result and a
//  row number), and what reads one: through driver's column readers
typedef struct _xxl_store_row_t xxl_store_row_t;
typedef struct _xxl_store_driver_t xxl_store_driver_t;
typedef void (xxl_store_read_fn) (const xxl_store_driver_t *driver, const xxl_store_row_t *row,
                                  void *arg);

struct _xxl_store_driver_t {
    int version;                        //  XXL_STORE_DRIVER_VERSION it was built for
    size_t size;                        //  sizeof the table it filled
    const char *name;                   //  "sqlite", "postgresql"
    char placeholder;                   //  '$' as written, '?' rewritten to ?N
    int (*exec) (xxl_store_t *self, const char *sql, const char *fmt, va_list args);
    int64_t (*scalar) (xxl_store_t *self, const char *sql, const char *fmt, va_list args);
    char *(*text) (xxl_store_t *self, const char *sql, const char *fmt, va_list args);
    int (*id_list) (xxl_store_t *self, int64_t *ids, size_t max, size_t *count,
                    const char *sql, const char *fmt, va_list args);
    int (*encode) (xxl_store_t *self, xxl_enc_t *enc, int rows_as_array, size_t max_size,
                   int *truncated, const char *sql, const char *fmt, va_list args);
    //  The dialect's statements: XXL_SQL_STATEMENTS texts, none NULL
    const char *const *sql;
    //  A read of one row: read (driver, row, arg) on the first row, when
    //  there is one, its columns through the readers below (valid only
    //  inside read); 1 read, 0 none, -1 (what names the query in the
    //  error, as SQLite's message gives it)
    int (*row) (xxl_store_t *self, const char *what, xxl_store_read_fn *read, void *arg,
                const char *sql, const char *fmt, va_list args);
    //  A column of that row: an integer (NULL 0), a double (NULL 0), a
    //  new string ("" for NULL; NULL only when out of memory)
    int64_t (*column_int) (const xxl_store_row_t *row, int column);
    double (*column_double) (const xxl_store_row_t *row, int column);
    char *(*column_text) (const xxl_store_row_t *row, int column);
    //  Sets the handle's error() to text (not logged)
    void (*set_error) (xxl_store_t *self, const char *text);
};

//  The first member of a backend's handle
typedef struct {
    xxl_store_t base;                   //  first: the method table
    const xxl_store_driver_t *driver;   //  how the shared bodies run their SQL
} xxl_store_sql_t;

//  Unsent planned rows of xxl_job_log: no address, or routed ahead past
//  their share's fired_sent and neither stamped nor known sent (a fragment
//  of the shared SQL, and of the backends' own).  A BACKFILL row is none:
//  its past schedule time is no plan that a misfire rule may drop (it is
//  recovered as a manual trigger is)
#define XXL_UNSENT_SQL " trigger_code = 0 AND COALESCE (trigger_type, '') != 'BACKFILL'" \
                       " AND (executor_address IS NULL" \
                       " OR (schedule_time > (SELECT fired_sent FROM xxl_lease" \
                       "     WHERE share = xxl_job_log.job_id % 16)" \
                       " AND trigger_time < schedule_time))"

//  A log row that is no node of a RUNNING workflow run (log_delete keeps
//  those: a run's node states are its rows)
#define XXL_NOT_IN_RUNNING_FLOW " AND (flow_run_id IS NULL OR NOT EXISTS (SELECT 1" \
                                " FROM xxl_workflow_run r WHERE r.id = xxl_job_log.flow_run_id" \
                                " AND r.status = 'RUNNING'))"

//  A group's columns, as group_load reads them
#define XXL_GROUP_COLUMNS "id, app_name, title, address_type, address_list, update_time"
//  A job's columns but id, their values ($1..$30), their binds and
//  arguments (job_add, job_save, job_load)
#define XXL_JOB_COLUMNS \
    "job_group, job_desc, add_time, update_time, author, alarm_email, schedule_type," \
    " schedule_conf, misfire_strategy, executor_route_strategy, executor_handler," \
    " executor_param, executor_block_strategy, executor_timeout," \
    " executor_fail_retry_count, glue_type, glue_source, glue_remark, glue_updatetime," \
    " child_jobid, trigger_status, trigger_last_time, trigger_next_time, timezone," \
    " retry_interval, retry_backoff, retry_max_interval" \
    ", calendar, agent_tags, max_running"
#define XXL_JOB_VALUES \
    "($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19," \
    " $20, $21, $22, $23, $24, $25, $26, $27" \
    ", $28, $29, $30)"
#define XXL_JOB_FMT "isiisssssssssiisssisiiisidi" "ss" "i"
#define XXL_JOB_ARGS(j) \
    (j)->job_group, (j)->job_desc, (j)->add_time, (j)->update_time, (j)->author, \
    (j)->alarm_email, (j)->schedule_type, (j)->schedule_conf, (j)->misfire_strategy, \
    (j)->executor_route_strategy, (j)->executor_handler, (j)->executor_param, \
    (j)->executor_block_strategy, (j)->executor_timeout, (j)->executor_fail_retry_count, \
    (j)->glue_type, (j)->glue_source, (j)->glue_remark, (j)->glue_updatetime, \
    (j)->child_jobid, (j)->trigger_status, (j)->trigger_last_time, \
    (j)->trigger_next_time, (j)->timezone, (j)->retry_interval, (j)->retry_backoff, \
    (j)->retry_max_interval, \
    (j)->calendar? (j)->calendar: "", \
    (j)->agent_tags? (j)->agent_tags: "", \
    (j)->max_running

//  True when driver is complete and of this version (backends assert it)
int xxl_store_driver_ok (const xxl_store_driver_t *driver);

//  A backend's statement cache: a table keyed by the address of a
//  statement's text (string literals: the key is never copied nor freed),
//  whose values destroy frees
zhashx_t *xxl_store_sql_cache_new (zhashx_destructor_fn *destroy);

//  Rewrites sql's $N placeholders (outside quotes) as ?N into out (size
//  bytes); out, or NULL when it does not fit.  For drivers whose
//  placeholder is '?'.
char *xxl_store_sql_question_marks (const char *sql, char *out, size_t size);

//  A filter's set of groups (xxl_store_job_filter_t's groups) as one
//  text parameter, a new string: "" when groups is NULL (no such filter),
//  else the ids comma-separated ("0", which is no group's id, for an
//  empty set).  The SQL reads it as `$N = '' OR job_group IN (the ids)`.
//  (backfill_made_times passes its instants the same way: one statement
//  for a turn's instants, whatever their number)
char *xxl_store_sql_group_set (const int64_t *groups, size_t count);

//  report_count from report_count_groups's answer (rc, rows, count): the
//  sums over the groups into *running, *suc, *fail (0 when rc failed);
//  frees rows; returns rc
int xxl_store_sql_sum_runs (int rc, xxl_store_group_runs_t *rows, size_t count,
                            int64_t *running, int64_t *suc, int64_t *fail);

//  The shared method bodies (xxl_store_sql_*.c): xs_<slot> for each slot
//  below (in the table's order), of that slot's type (declared from the table itself, so that a
//  body and its slot cannot disagree).  A backend's method table names
//  them all with XXL_STORE_SQL_METHODS, its accounts table with
//  XXL_STORE_SQL_ACCOUNTS, and fills the other slots itself.
#define XXL_STORE_SQL_SLOTS(X) \
    X (group_rm) X (group_find) X (group_load) X (group_jobs) X (group_job_ids) \
    X (groups_refresh) \
    X (group_refresh_app) X (group_encode_all) X (job_save) X (job_rm) X (job_rm_logs) \
    X (job_unchild) X (job_load) X (job_exists) X (job_children) X (log_job_children) \
    X (jobs_have_children) X (job_set_times) X (job_halt) X (job_due) X (job_marked_ids) \
    X (job_delay_resume) X (job_encode) X (job_encode_page) X (job_count) X (glue_last) \
    X (glue_exists) X (glue_get) X (glue_encode) X (glue_encode_page) X (glue_count) \
    X (log_load) X (log_job_id) X (log_trigger_done) X (log_handle_done) \
    X (log_handle_done_at) X (log_accept) X (log_stamp) X (log_route) X (log_plan_route) \
    X (log_retime) X (log_trigger_end) X (log_append_trigger_msg) X (log_append_handle_msg) \
    X (log_drop_unsent) X (job_drop_plans) X (log_plan_time) X (log_fail_unsent) \
    X (log_set_alarm) X (log_alarm_claim) X (log_unsent_ids) X (log_unanswered_ids) \
    X (log_failed_ids) X (log_claimed_ids) X (log_lost_ids) X (fired_raise_until) \
    X (fired_raise_sent) X (recover_stamp_fired) X (recover_stamp_due) X (recover_late_jobs) \
    X (recover_late_last) X (recover_misfire) X (recover_drop_late) X (log_clear_address) \
    X (log_encode) X (log_delete) X (log_id_at_rank) X (registry_beat) X (registry_remove) \
    X (registry_expire) X (registry_alive) X (registry_newest) X (job_delay_shift) X (report_refresh) X (report_encode_days) \
    X (audit_add) X (audit_encode_page) X (audit_delete) X (log_handle_done_by) \
    X (registry_apps) X (lease_take) X (lease_renew) X (lease_release) X (node_beat) \
    X (node_count) X (log_unsent_in) X (recover_stamp_fired_in) X (recover_stamp_due_in) \
    X (recover_late_jobs_in) X (log_set_trigger_msg) X (log_open_ids_at) X (report_set) \
    X (job_rm_logs_some) X (log_lost_ids_after) X (workflow_save) X (workflow_rm) \
    X (workflow_load) X (workflow_encode) X (workflow_encode_page) X (workflow_count) \
    X (workflow_using_job) X (workflow_due) X (workflow_set_next) X (workflow_run_load) \
    X (workflow_run_set) X (workflow_run_ids) X (workflow_runs_running) \
    X (workflow_run_encode) X (workflow_run_encode_page) X (workflow_run_rows) \
    X (log_flow_mark) X (log_flow_run) X (workflow_ids) X (workflow_calendar_ids) X (log_slot_ids) X (job_slot_ids) \
    X (workflow_run_encode_below) X (backfill_encode_below) X (session_add_remember) \
    X (session_find_remember) X (session_expire_remember) X (user_add_first) \
    X (report_encode_range) X (log_open_ids_all) X (log_insert_trigger_msg)

#define XXL_STORE_SQL_ACCOUNT_SLOTS(X) \
    X (user_add) X (user_update) X (user_get) X (user_rm) X (user_encode_all) X (token_add) \
    X (token_find) X (token_rm) X (token_encode_all) X (session_add) X (session_find) \
    X (session_touch) X (session_rm) X (user_sessions_rm) X (session_expire)

#define XXL_STORE_SQL_CALENDAR_SLOTS(X) \
    X (calendar_put) X (calendar_get) X (calendar_rm) X (calendar_encode) \
    X (calendar_encode_all) X (calendar_job_ids)

#define XXL_STORE_SQL_BACKFILL_SLOTS(X) \
    X (backfill_add) X (backfill_get) X (backfill_advance) X (backfill_stop) \
    X (backfill_encode) X (backfill_encode_page) X (backfill_running_ids) \
    X (backfill_made_times)

//  Whether any job has child jobs (1 or 0), through xxl_job_info_parents:
//  the engine asks it once a second (tests/test_store.c checks the plan)
#define XXL_SQL_JOBS_HAVE_CHILDREN \
    "SELECT EXISTS (SELECT 1 FROM xxl_job_info WHERE child_jobid != '')"

//  The maps of a workflow run and of a backfill (their protocol keys), and
//  the pages of WORKFLOW_RUNS and BACKFILL_LIST below an id: one text for
//  both dialects, binding $1 the workflow or job (not in the _ANY forms),
//  then before, then limit.  Each walks an index down from `before`
//  (xxl_workflow_run_flow, xxl_backfill_job, the primary key), so a page
//  costs its rows whatever the table holds (tests/test_store.c checks the
//  plans)
#define XXL_SQL_RUN_MAP \
    "SELECT id, workflow_id AS \"workflowId\", status, param, trigger_type AS \"triggerType\"," \
    " trigger_time AS \"triggerTime\", end_time AS \"endTime\" FROM xxl_workflow_run"
#define XXL_SQL_BACKFILL_MAP \
    "SELECT id, job_id AS \"jobId\", from_time AS \"from\", to_time AS \"to\"," \
    " per_second AS \"perSecond\", cursor_time AS \"cursor\", total, made, skipped, state," \
    " started_by AS \"by\", msg, add_time AS \"addTime\", update_time AS \"updateTime\"" \
    " FROM xxl_backfill"
#define XXL_SQL_RUNS_BELOW \
    XXL_SQL_RUN_MAP " WHERE workflow_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3"
#define XXL_SQL_RUNS_BELOW_ANY XXL_SQL_RUN_MAP " WHERE id < $1 ORDER BY id DESC LIMIT $2"
#define XXL_SQL_BACKFILLS_BELOW \
    XXL_SQL_BACKFILL_MAP " WHERE job_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3"
#define XXL_SQL_BACKFILLS_BELOW_ANY \
    XXL_SQL_BACKFILL_MAP " WHERE id < $1 ORDER BY id DESC LIMIT $2"

#define XXL_STORE_SQL_DECLARE(slot) \
    extern __typeof__ (*((xxl_store_methods_t *) 0)->slot) xs_##slot;
#define XXL_STORE_SQL_DECLARE_ACCOUNT(slot) \
    extern __typeof__ (*((xxl_store_accounts_t *) 0)->slot) xs_##slot;
XXL_STORE_SQL_SLOTS (XXL_STORE_SQL_DECLARE)
XXL_STORE_SQL_ACCOUNT_SLOTS (XXL_STORE_SQL_DECLARE_ACCOUNT)
#define XXL_STORE_SQL_DECLARE_CALENDAR(slot) \
    extern __typeof__ (*((xxl_store_calendars_t *) 0)->slot) xs_##slot;
XXL_STORE_SQL_CALENDAR_SLOTS (XXL_STORE_SQL_DECLARE_CALENDAR)
#define XXL_STORE_SQL_DECLARE_BACKFILL(slot) \
    extern __typeof__ (*((xxl_store_backfills_t *) 0)->slot) xs_##slot;
XXL_STORE_SQL_BACKFILL_SLOTS (XXL_STORE_SQL_DECLARE_BACKFILL)

#define XXL_STORE_SQL_SLOT(slot) .slot = xs_##slot,
#define XXL_STORE_SQL_METHODS XXL_STORE_SQL_SLOTS (XXL_STORE_SQL_SLOT)
#define XXL_STORE_SQL_ACCOUNTS XXL_STORE_SQL_ACCOUNT_SLOTS (XXL_STORE_SQL_SLOT)
#define XXL_STORE_SQL_CALENDARS XXL_STORE_SQL_CALENDAR_SLOTS (XXL_STORE_SQL_SLOT)
#define XXL_STORE_SQL_BACKFILLS XXL_STORE_SQL_BACKFILL_SLOTS (XXL_STORE_SQL_SLOT)

#endif
