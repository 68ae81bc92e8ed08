/*  xxl_store.h -- the scheduler's store: XXL-JOB's tables in SQLite (WAL).

    One xxl_store_t is one connection, used by one thread (the scheduler's
    engine).  Writes are meant to be grouped: the engine opens a
    transaction with xxl_store_begin, applies every change of one loop
    turn, and commits once (group commit), then sends what those rows
    justify.  Every function returns 0/-1 (or an id, or -1) and never
    aborts on an SQL error; xxl_store_error gives the last reason.

    The schema is versioned with PRAGMA user_version; xxl_store_new runs the
    migrations a database lacks, in one transaction each, so an upgrade
    never loses data.
*/

#ifndef XXL_STORE_H_INCLUDED
#define XXL_STORE_H_INCLUDED

#include <stdint.h>
#include "xxl/msg.h"

typedef struct _xxl_store_t xxl_store_t;

typedef struct {
    int64_t id;
    char *app_name;
    char *title;
    int address_type;                   //  0 automatic (registry), 1 manual
    char *address_list;                 //  comma-separated, sorted
    int64_t update_time;
} xxl_group_t;

typedef struct {
    int64_t id;
    int64_t job_group;
    char *job_desc;
    int64_t add_time, update_time;
    char *author;
    char *alarm_email;
    char *schedule_type;                //  NONE CRON FIX_RATE FIX_DELAY
    char *schedule_conf;                //  cron expression or seconds
    char *misfire_strategy;
    char *executor_route_strategy;
    char *executor_handler;
    char *executor_param;
    char *executor_block_strategy;
    int64_t executor_timeout;
    int64_t executor_fail_retry_count;
    char *glue_type;
    char *glue_source;
    char *glue_remark;
    int64_t glue_updatetime;
    char *child_jobid;                  //  comma-separated job ids
    int64_t trigger_status;
    int64_t trigger_last_time;
    int64_t trigger_next_time;
    char *timezone;
    int64_t retry_interval;             //  seconds before the first retry (0: at once)
    double retry_backoff;               //  each further retry waits this times longer
    int64_t retry_max_interval;         //  cap on the wait, seconds (0: none)
} xxl_job_t;

typedef struct {
    int64_t id;
    int64_t job_group;
    int64_t job_id;
    char *executor_address;
    char *executor_handler;
    char *executor_param;
    char *executor_sharding_param;
    int64_t executor_fail_retry_count;
    int64_t trigger_time;
    int64_t trigger_code;
    char *trigger_msg;
    char *trigger_type;
    int64_t schedule_time;              //  0 when none
    int64_t handle_time;
    int64_t handle_code;
    char *handle_msg;
} xxl_log_t;

//  Opens (creating if needed) the database at path, in WAL mode with
//  synchronous=NORMAL, and migrates it.  Returns NULL with a reason in err.
xxl_store_t *xxl_store_new (const char *path, char *err, size_t errlen);
void xxl_store_destroy (xxl_store_t **self_p);
const char *xxl_store_error (xxl_store_t *self);
int xxl_store_schema_version (xxl_store_t *self);

int xxl_store_begin (xxl_store_t *self);
int xxl_store_commit (xxl_store_t *self);

//  The WAL.  A checkpointer thread copies it into the database without
//  ever blocking the writer; but under a steady load a commit lands during
//  every one of its passes, the WAL never starts over and grows without
//  end (SQLite's "checkpoint starvation").  So the writer restarts it.
//  set_wal_size: the WAL starts over once it holds about mib MiB (64 by
//  default; 1 to 65,536, else ignored), and is cut back to four times that
//  when it does.
//  wal_due, between transactions: 1 when the WAL is past its size, 2 when
//  past four times it, else 0 (and 0 until it has grown by a sixteenth of
//  its size after a restart that a reader held back, a wait that timed
//  out, or an error).  wal_restart, between transactions: copies
//  into the database what the checkpointer has not (its last pass was at
//  most a sixteenth of the size ago: a checkpoint of those frames with
//  its two fsyncs), so that the next transaction starts the WAL over; 1
//  when it may, 0 when the checkpointer was busy (try again after the
//  next commit: it is not nudged once the WAL is due), -1 on error.  Past
//  four times its size, it waits up to a second for the checkpointer.
#define XXL_STORE_WAL_MIB_MAX 65536
void xxl_store_set_wal_size (xxl_store_t *self, int mib);
int xxl_store_wal_due (xxl_store_t *self);
int xxl_store_wal_restart (xxl_store_t *self);
int xxl_store_rollback (xxl_store_t *self);
int xxl_store_in_txn (xxl_store_t *self);

//  Groups.  find: by numeric id when key is all digits, else by app name;
//  returns 0 and fills group (free with xxl_group_free), 1 when absent, -1
//  on error.
int64_t xxl_store_group_add (xxl_store_t *self, const xxl_group_t *group);
int xxl_store_group_update (xxl_store_t *self, const xxl_group_t *group);
int xxl_store_group_rm (xxl_store_t *self, int64_t id);
int xxl_store_group_find (xxl_store_t *self, const char *key, xxl_group_t *group);
int xxl_store_group_load (xxl_store_t *self, int64_t id, xxl_group_t *group);
int64_t xxl_store_group_jobs (xxl_store_t *self, int64_t id);
void xxl_group_free (xxl_group_t *group);

//  Jobs.  load returns 0, 1 when absent, -1 on error; the job is freed
//  with xxl_job_free.  save writes every column of an existing job.
int64_t xxl_store_job_add (xxl_store_t *self, const xxl_job_t *job);
int xxl_store_job_save (xxl_store_t *self, const xxl_job_t *job);
int xxl_store_job_rm (xxl_store_t *self, int64_t id);
//  Deletes every log row of a job; the number deleted, or -1.
int64_t xxl_store_job_rm_logs (xxl_store_t *self, int64_t id);
//  Removes job id `child` from every job's child_jobid; the number of
//  jobs changed, or -1.
int xxl_store_job_unchild (xxl_store_t *self, int64_t child);
int xxl_store_job_load (xxl_store_t *self, int64_t id, xxl_job_t *job);
void xxl_job_free (xxl_job_t *job);
//  Keeps a glue version in xxl_job_logglue (the last XXL_GLUE_KEEP per
//  job, numbered 1, 2, ... per job); returns the new version, or -1.
#define XXL_GLUE_KEEP 30
int xxl_store_glue_add (xxl_store_t *self, int64_t job_id, const char *glue_type,
                        const char *source, const char *remark, int64_t now);

//  Logs.  log_add inserts the row and sets log->id (or uses log->id when
//  > 0).  trigger_done sets trigger_code and appends text to trigger_msg
//  (and the address).  handle_done finishes a row once (and marks an
//  unacknowledged trigger accepted: the agent ran it): it returns 1 when
//  the row was already finished or is absent (a repeated callback), 0 when
//  it finished it.
int xxl_store_log_add (xxl_store_t *self, xxl_log_t *log);
//  The id the next log_add without an id would give; -1 on error.  Inside
//  one write transaction, a caller may hand out this id and the ones after
//  it itself (log->id > 0 at log_add), as long as every log row of that
//  transaction is added that way.
int64_t xxl_store_log_next_id (xxl_store_t *self);
int xxl_store_log_trigger_done (xxl_store_t *self, int64_t log_id, int code,
                                const char *address, const char *append);
int xxl_store_log_handle_done (xxl_store_t *self, int64_t log_id, int64_t handle_time,
                               int code, const char *msg);
//  The same for a run whose trigger time is written only now (a prepared
//  fire): trigger_time becomes trigger_time when trigger_code was 0.
int xxl_store_log_handle_done_at (xxl_store_t *self, int64_t log_id, int64_t handle_time,
                                  int code, const char *msg, int64_t trigger_time);
int xxl_store_log_load (xxl_store_t *self, int64_t id, xxl_log_t *log);
void xxl_log_free (xxl_log_t *log);

//  Registry rows (for agent list and for schedulers sharing a store)
int xxl_store_registry_beat (xxl_store_t *self, const char *app, const char *address,
                             int64_t now);
int xxl_store_registry_remove (xxl_store_t *self, const char *app, const char *address);
int xxl_store_registry_expire (xxl_store_t *self, int64_t dead_before);
//  Sets address_list of every automatic group from the registry rows.
int xxl_store_groups_refresh (xxl_store_t *self, int64_t now);
//  The same for the automatic groups of one app only
int xxl_store_group_refresh_app (xxl_store_t *self, const char *app, int64_t now);

//  Statements are cached by the address of their SQL text: pass string
//  literals (or text that lives as long as the store) to the functions
//  below, and SQL built at run time to xxl_store_exec_once.
//
//  Runs sql with arguments bound by fmt ('i' int64_t, 'd' double,
//  's' const char *, 'n' NULL) and encodes each row as a map whose keys are the column
//  names (write them camelCase with AS).  rows_as_array: 1 writes an array
//  of maps, 0 writes only the first row's map (nothing when there is
//  none).  Returns the number of rows, or -1 on error.
int xxl_store_encode (xxl_store_t *self, xxl_enc_t *enc, int rows_as_array,
                      const char *sql, const char *fmt, ...);
//  The same as an array of rows, stopping before a row would take the
//  encoder past max_size bytes (*truncated then 1, else 0).
int xxl_store_encode_max (xxl_store_t *self, xxl_enc_t *enc, size_t max_size,
                          int *truncated, const char *sql, const char *fmt, ...);
//  Runs a statement returning one integer (e.g. COUNT); -1 on error.
int64_t xxl_store_scalar (xxl_store_t *self, const char *sql, const char *fmt, ...);
//  Runs a query with one integer argument returning ids in its first
//  column; fills up to max into ids and *count.  0 or -1.
int xxl_store_ids (xxl_store_t *self, const char *sql, int64_t arg, int64_t *ids,
                   size_t max, size_t *count);
//  The same with several integer columns: row r, column c goes to
//  cells [r * columns + c]; up to max_rows rows.  0 or -1.
int xxl_store_int_rows (xxl_store_t *self, const char *sql, int64_t arg, int64_t *cells,
                        size_t columns, size_t max_rows, size_t *count);
//  Runs a statement returning one text value; a new string, or NULL when
//  there is no row, the value is NULL, or on error.
char *xxl_store_text (xxl_store_t *self, const char *sql, const char *fmt, ...);
//  Runs a statement with no result rows; returns changes() or -1.
int xxl_store_exec (xxl_store_t *self, const char *sql, const char *fmt, ...);
//  The same for SQL built at run time: prepared, run and finalized.
int xxl_store_exec_once (xxl_store_t *self, const char *sql, const char *fmt, ...);

#endif
