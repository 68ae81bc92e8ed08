/*  xxl_store_sql.h -- the store's SQL, once: the driver a backend gives
    the shared method bodies (xxl_store_sql.c), and those bodies.

    Owns: the driver table (xxl_store_driver_t) and the handle prefix
    (xxl_store_sql_t) through which xxl_store_sql.c reaches it.  A backend
    owns everything else: its connection, statement cache, binding,
    transactions, migrations and the methods whose SQL truly differs.

    A backend's handle MUST begin with an xxl_store_sql_t (whose first
    member is the xxl_store_t with the method table) and MUST set driver
    before its handle is returned.  Its method table points the slots in
    XXL_STORE_SQL_METHODS at the xs_* bodies below (the macro names them
    all), and fills the rest itself.

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
        (*truncated 1), the count or -1.
    Errors are the backend's: -1 or NULL, the reason in its error(), logged
    at most once per cause per 10 s; a lost transaction fails every write
    (SQLite) or every statement (PostgreSQL) until commit or rollback.
    Transactions are the method table's (begin, commit, rollback): the
    driver does not repeat them.

    A third backend (MySQL, say) is such a driver, its connection, and the
    methods in neither list: see the "truly differs" list in
    xxl_store_sql.c.
*/

#ifndef XXL_STORE_SQL_H_INCLUDED
#define XXL_STORE_SQL_H_INCLUDED

#include "xxl_store.h"

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
    XXL_SQL_LOG_ID_AT_RANK,
    XXL_SQL_RECOVER_STAMP_FIRED_IN,
    XXL_SQL_RECOVER_LATE_JOBS_IN,
    XXL_SQL_LOG_TRIGGER_END,
    XXL_SQL_LOG_OPEN_IDS_AT,
    XXL_SQL_NODE_BEAT,
    XXL_SQL_REGISTRY_ALIVE,
    XXL_SQL_JOB_COUNT,
    XXL_SQL_JOB_ENCODE,
    XXL_SQL_JOB_ENCODE_PAGE,
    XXL_SQL_LOG_DELETE,
    XXL_SQL_REPORT_ENCODE_DAYS,
    XXL_SQL_LOG_ENCODE,
    XXL_SQL_REGISTRY_APPS,
    XXL_SQL_STATEMENTS                  //  how many (the length of a driver's sql)
} xxl_store_stmt_t;

typedef struct {
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
} xxl_store_driver_t;

//  The first member of a backend's handle
typedef struct {
    xxl_store_t base;                   //  first: the method table
    const xxl_store_driver_t *driver;   //  how xxl_store_sql.c runs its SQL
} xxl_store_sql_t;

//  Unsent planned rows of xxl_job_log: no address, or routed ahead past
//  their share's fired_sent and neither stamped nor known sent (a fragment
//  of the shared SQL, and of the backends' own)
#define XXL_UNSENT_SQL " trigger_code = 0 AND (executor_address IS NULL" \
                       " OR (schedule_time > (SELECT fired_sent FROM xxl_lease" \
                       "     WHERE share = xxl_job_log.job_id % 16)" \
                       " AND trigger_time < schedule_time))"

//  True when driver is complete and of this version (backends assert it)
int xxl_store_driver_ok (const xxl_store_driver_t *driver);

//  Rewrites sql's $N placeholders (outside quotes) as ?N into out (size
//  bytes); out, or NULL when it does not fit.  For drivers whose
//  placeholder is '?'.
char *xxl_store_sql_question_marks (const char *sql, char *out, size_t size);

//  The shared method bodies (xxl_store_sql.c), one per slot of the method
//  table; a backend's table names them all with XXL_STORE_SQL_METHODS
int64_t xs_glue_count (xxl_store_t *base, int64_t job_id);
int xs_glue_exists (xxl_store_t *base, int64_t job_id, int64_t version);
int64_t xs_glue_last (xxl_store_t *base, int64_t job_id);
int64_t xs_group_jobs (xxl_store_t *base, int64_t id);
int xs_group_rm (xxl_store_t *base, int64_t id);
char *xs_job_children (xxl_store_t *base, int64_t id);
int xs_job_drop_plans (xxl_store_t *base, int64_t job_id, int64_t now);
int xs_job_exists (xxl_store_t *base, int64_t id);
int xs_job_halt (xxl_store_t *base, int64_t id, int64_t last);
int xs_job_marked_ids (xxl_store_t *base, int64_t mark, int64_t after, int64_t *ids, size_t max,
                       size_t *count);
int64_t xs_job_rm_logs (xxl_store_t *base, int64_t id);
int64_t xs_job_rm_logs_some (xxl_store_t *base, int64_t id, int64_t limit);
int xs_job_set_times (xxl_store_t *base, int64_t id, int64_t last, int64_t next);
int xs_log_alarm_claim (xxl_store_t *base, int64_t log_id);
int xs_log_append_handle_msg (xxl_store_t *base, int64_t log_id, const char *text);
int xs_log_append_trigger_msg (xxl_store_t *base, int64_t log_id, const char *text);
int xs_log_claimed_ids (xxl_store_t *base, int64_t after, int64_t *ids, size_t max,
                        size_t *count);
int xs_log_clear_address (xxl_store_t *base, int64_t log_id);
int xs_log_drop_unsent (xxl_store_t *base, int64_t log_id);
int xs_log_fail_unsent (xxl_store_t *base, int64_t log_id, int code, const char *why);
int xs_log_failed_ids (xxl_store_t *base, int64_t *ids, size_t max, size_t *count);
char *xs_log_job_children (xxl_store_t *base, int64_t log_id);
int64_t xs_log_job_id (xxl_store_t *base, int64_t log_id);
int xs_log_lost_ids_after (xxl_store_t *base, int64_t before, int64_t after, int64_t *ids,
                           size_t max, size_t *count);
int xs_log_plan_route (xxl_store_t *base, int64_t log_id, const char *address,
                       const char *section);
int64_t xs_log_plan_time (xxl_store_t *base, int64_t log_id);
int xs_log_retime (xxl_store_t *base, int64_t log_id, int64_t trigger_time);
int xs_log_set_alarm (xxl_store_t *base, int64_t log_id, int status, const char *report);
int xs_log_stamp (xxl_store_t *base, int64_t log_id, int64_t stamp);
int xs_log_trigger_done (xxl_store_t *base, int64_t log_id, int code, const char *address,
                         const char *append);
int xs_log_unanswered_ids (xxl_store_t *base, int64_t before, int64_t *ids, size_t max,
                           size_t *count);
int xs_log_unsent_ids (xxl_store_t *base, int64_t after, int64_t *ids, size_t max,
                       size_t *count);
int xs_recover_misfire (xxl_store_t *base, int64_t log_id);
int xs_recover_stamp_due (xxl_store_t *base, int64_t now);
int xs_registry_expire (xxl_store_t *base, int64_t dead_before);
int xs_registry_remove (xxl_store_t *base, const char *app, const char *address);
int xs_report_refresh (xxl_store_t *base, int64_t from, int64_t to, int64_t now);
int xs_report_set (xxl_store_t *base, int64_t day, int64_t running, int64_t suc, int64_t fail,
                   int64_t now);
int xs_job_due (xxl_store_t *base, int64_t before, xxl_store_due_t *rows, size_t max,
                size_t *count);
int xs_lease_release (xxl_store_t *base, int share, const char *node, int64_t epoch,
                      int64_t now);
int xs_lease_renew (xxl_store_t *base, int share, const char *node, int64_t epoch,
                    int64_t expires);
int xs_lease_take (xxl_store_t *base, int share, const char *node, int64_t epoch,
                   int64_t expires);
int xs_log_set_trigger_msg (xxl_store_t *base, int64_t log_id, const char *text);
int64_t xs_node_count (xxl_store_t *base, int64_t since);
int xs_log_accept (xxl_store_t *base, int64_t log_id, int64_t stamp);
int xs_job_rm (xxl_store_t *base, int64_t id);
int xs_log_route (xxl_store_t *base, int64_t log_id, int64_t stamp, const char *address,
                  const char *section);
int xs_jobs_have_children (xxl_store_t *base);
int xs_group_encode_all (xxl_store_t *base, xxl_enc_t *enc);
int xs_log_handle_done (xxl_store_t *base, int64_t log_id, int64_t handle_time, int code,
                        const char *msg);
int xs_log_handle_done_at (xxl_store_t *base, int64_t log_id, int64_t handle_time, int code,
                           const char *msg, int64_t trigger_time);
int xs_log_handle_done_by (xxl_store_t *base, int64_t log_id, const char *address,
                           int64_t handle_time, int code, const char *msg,
                           int64_t trigger_time);
int xs_registry_beat (xxl_store_t *base, const char *app, const char *address, int64_t now);
int xs_audit_add (xxl_store_t *base, const xxl_audit_t *row);
int xs_recover_stamp_fired (xxl_store_t *base);
int xs_recover_drop_late (xxl_store_t *base, int64_t job_id, int64_t before, int64_t keep);
int64_t xs_recover_late_last (xxl_store_t *base, int64_t job_id, int64_t before);
//  Over the dialect's statements (xxl_store_stmt_t)
int xs_fired_raise_until (xxl_store_t *base, int64_t until);
int xs_fired_raise_sent (xxl_store_t *base, int64_t sent);
int xs_glue_encode (xxl_store_t *base, xxl_enc_t *enc, int64_t job_id, int64_t version);
int xs_group_refresh_app (xxl_store_t *base, const char *app, int64_t now);
int xs_groups_refresh (xxl_store_t *base, int64_t now);
int xs_log_lost_ids (xxl_store_t *base, int64_t before, int64_t *ids, size_t max,
                     size_t *count);
int xs_recover_late_jobs (xxl_store_t *base, int64_t before, int64_t *ids, size_t max,
                          size_t *count);
int xs_log_unsent_in (xxl_store_t *base, uint64_t mask, int64_t after, int64_t *ids, size_t max,
                      size_t *count);
int xs_recover_stamp_due_in (xxl_store_t *base, uint64_t mask, int64_t now);
int64_t xs_audit_delete (xxl_store_t *base, int64_t before, int64_t limit);
int xs_audit_encode_page (xxl_store_t *base, xxl_enc_t *enc, size_t max_size, int *truncated,
                          int64_t before, int64_t limit);
int xs_glue_encode_page (xxl_store_t *base, xxl_enc_t *enc, size_t max_size, int *truncated,
                         int64_t job_id, int64_t limit, int64_t offset);
int xs_job_delay_resume (xxl_store_t *base, int64_t log_id, int64_t now, int64_t mark);
int64_t xs_log_id_at_rank (xxl_store_t *base, int64_t job_id, int64_t rank);
int xs_recover_stamp_fired_in (xxl_store_t *base, uint64_t mask);
int xs_recover_late_jobs_in (xxl_store_t *base, uint64_t mask, int64_t before, int64_t *ids,
                             size_t max, size_t *count);
int xs_log_trigger_end (xxl_store_t *base, int64_t log_id, int code, int64_t presumed,
                        const char *text, int64_t stamp);
int xs_log_open_ids_at (xxl_store_t *base, const char *address, int64_t after, int64_t *ids,
                        size_t max, size_t *count);
int xs_node_beat (xxl_store_t *base, const char *node, int64_t now);
char *xs_registry_alive (xxl_store_t *base, int64_t window_ms);
int64_t xs_job_count (xxl_store_t *base, const xxl_store_job_filter_t *filter);
int xs_job_encode (xxl_store_t *base, xxl_enc_t *enc, int64_t id);
int xs_job_encode_page (xxl_store_t *base, xxl_enc_t *enc, size_t max_size, int *truncated,
                        const xxl_store_job_filter_t *filter);
int64_t xs_log_delete (xxl_store_t *base, int64_t job_id, int64_t before, int64_t below,
                       int64_t limit);
int xs_report_encode_days (xxl_store_t *base, xxl_enc_t *enc, int days);
int xs_log_encode (xxl_store_t *base, xxl_enc_t *enc, int64_t id);
char *xs_registry_apps (xxl_store_t *base, const char *address, int64_t since);
//  Users, tokens and sessions (the accounts table)
int xs_user_add (xxl_store_t *base, const xxl_account_t *user);
int xs_user_update (xxl_store_t *base, const char *name, const char *hash, const char *role,
                    const char *apps);
int xs_user_rm (xxl_store_t *base, const char *name);
int xs_user_encode_all (xxl_store_t *base, xxl_enc_t *enc);
int xs_token_add (xxl_store_t *base, const xxl_account_t *token);
int xs_token_rm (xxl_store_t *base, const char *name);
int xs_token_encode_all (xxl_store_t *base, xxl_enc_t *enc);
int xs_session_add (xxl_store_t *base, const char *id, const char *user, const char *csrf,
                    int64_t now);
int xs_session_touch (xxl_store_t *base, const char *id, int64_t now);
int xs_session_rm (xxl_store_t *base, const char *id);
int xs_user_sessions_rm (xxl_store_t *base, const char *user);
int64_t xs_session_expire (xxl_store_t *base, int64_t before);

#define XXL_STORE_SQL_METHODS \
    .glue_count = xs_glue_count, \
    .glue_exists = xs_glue_exists, \
    .glue_last = xs_glue_last, \
    .group_jobs = xs_group_jobs, \
    .group_rm = xs_group_rm, \
    .job_children = xs_job_children, \
    .job_drop_plans = xs_job_drop_plans, \
    .job_exists = xs_job_exists, \
    .job_halt = xs_job_halt, \
    .job_marked_ids = xs_job_marked_ids, \
    .job_rm_logs = xs_job_rm_logs, \
    .job_rm_logs_some = xs_job_rm_logs_some, \
    .job_set_times = xs_job_set_times, \
    .log_alarm_claim = xs_log_alarm_claim, \
    .log_append_handle_msg = xs_log_append_handle_msg, \
    .log_append_trigger_msg = xs_log_append_trigger_msg, \
    .log_claimed_ids = xs_log_claimed_ids, \
    .log_clear_address = xs_log_clear_address, \
    .log_drop_unsent = xs_log_drop_unsent, \
    .log_fail_unsent = xs_log_fail_unsent, \
    .log_failed_ids = xs_log_failed_ids, \
    .log_job_children = xs_log_job_children, \
    .log_job_id = xs_log_job_id, \
    .log_lost_ids_after = xs_log_lost_ids_after, \
    .log_plan_route = xs_log_plan_route, \
    .log_plan_time = xs_log_plan_time, \
    .log_retime = xs_log_retime, \
    .log_set_alarm = xs_log_set_alarm, \
    .log_stamp = xs_log_stamp, \
    .log_trigger_done = xs_log_trigger_done, \
    .log_unanswered_ids = xs_log_unanswered_ids, \
    .log_unsent_ids = xs_log_unsent_ids, \
    .recover_misfire = xs_recover_misfire, \
    .recover_stamp_due = xs_recover_stamp_due, \
    .registry_expire = xs_registry_expire, \
    .registry_remove = xs_registry_remove, \
    .report_refresh = xs_report_refresh, \
    .report_set = xs_report_set, \
    .job_due = xs_job_due, \
    .lease_release = xs_lease_release, \
    .lease_renew = xs_lease_renew, \
    .lease_take = xs_lease_take, \
    .log_set_trigger_msg = xs_log_set_trigger_msg, \
    .node_count = xs_node_count, \
    .log_accept = xs_log_accept, \
    .job_rm = xs_job_rm, \
    .log_route = xs_log_route, \
    .jobs_have_children = xs_jobs_have_children, \
    .group_encode_all = xs_group_encode_all, \
    .log_handle_done = xs_log_handle_done, \
    .log_handle_done_at = xs_log_handle_done_at, \
    .log_handle_done_by = xs_log_handle_done_by, \
    .registry_beat = xs_registry_beat, \
    .audit_add = xs_audit_add, \
    .recover_stamp_fired = xs_recover_stamp_fired, \
    .recover_drop_late = xs_recover_drop_late, \
    .recover_late_last = xs_recover_late_last, \
    .fired_raise_until = xs_fired_raise_until, \
    .fired_raise_sent = xs_fired_raise_sent, \
    .glue_encode = xs_glue_encode, \
    .group_refresh_app = xs_group_refresh_app, \
    .groups_refresh = xs_groups_refresh, \
    .log_lost_ids = xs_log_lost_ids, \
    .recover_late_jobs = xs_recover_late_jobs, \
    .log_unsent_in = xs_log_unsent_in, \
    .recover_stamp_due_in = xs_recover_stamp_due_in, \
    .audit_delete = xs_audit_delete, \
    .audit_encode_page = xs_audit_encode_page, \
    .glue_encode_page = xs_glue_encode_page, \
    .job_delay_resume = xs_job_delay_resume, \
    .log_id_at_rank = xs_log_id_at_rank, \
    .recover_stamp_fired_in = xs_recover_stamp_fired_in, \
    .recover_late_jobs_in = xs_recover_late_jobs_in, \
    .log_trigger_end = xs_log_trigger_end, \
    .log_open_ids_at = xs_log_open_ids_at, \
    .node_beat = xs_node_beat, \
    .registry_alive = xs_registry_alive, \
    .job_count = xs_job_count, \
    .job_encode = xs_job_encode, \
    .job_encode_page = xs_job_encode_page, \
    .log_delete = xs_log_delete, \
    .report_encode_days = xs_report_encode_days, \
    .log_encode = xs_log_encode, \
    .registry_apps = xs_registry_apps,

#define XXL_STORE_SQL_ACCOUNTS \
    .user_add = xs_user_add, \
    .user_update = xs_user_update, \
    .user_rm = xs_user_rm, \
    .user_encode_all = xs_user_encode_all, \
    .token_add = xs_token_add, \
    .token_rm = xs_token_rm, \
    .token_encode_all = xs_token_encode_all, \
    .session_add = xs_session_add, \
    .session_touch = xs_session_touch, \
    .session_rm = xs_session_rm, \
    .user_sessions_rm = xs_user_sessions_rm, \
    .session_expire = xs_session_expire,

#endif
