/*  xxl_store.h -- the scheduler's store: XXL-JOB's tables behind one
    interface, a backend per file.

    An xxl_store_t is a handle whose first member is a versioned method
    table (as SQLite's sqlite3_file and sqlite3_io_methods): the engine
    calls the typed functions below, which go through that table; no SQL,
    no database API and no row format appear outside a backend.  The
    backends are SQLite (sqlite/) and PostgreSQL (pg/), each filling the
    same table, over the SQL they share (sql/).  Layers, top to bottom:
    this interface and the factory (xxl_store.c); the backends; the shared
    SQL and the helpers every backend uses.

    Contracts every backend keeps:
    -   One handle is one connection, used by one thread (the engine's).
    -   Writes are grouped: begin takes the store's write lock (the lock
        schedulers sharing a store serialize on) and opens a transaction;
        the engine applies every change of one loop turn and commits once
        (group commit), then sends what those rows justify.  A backend may
        therefore queue writes and send them together (pipelining): no
        write call's result is needed before commit, save those that
        return ids or counts, and the engine reads a count only where a
        guard depends on it (documented per call).
    -   Every call returns 0/-1 (or an id, a count, or -1) and never
        aborts on a database error; error() gives the last reason.  A
        failed write inside a transaction fails the commit.
    -   Times are epoch milliseconds; ids are never reused (agents refuse
        a RUN whose logId they have seen).
    -   Rows are encoded into an xxl_enc_t (the wire encoder) as maps whose
        keys are the protocol's camelCase names; integer columns as ints,
        REAL columns as float64, NULL as nil, text as str.
    -   The schema is versioned; opening a store migrates it (one
        transaction per step), so an upgrade never loses data.

    "Unsent" below means trigger_code = 0: no agent acknowledged the
    run yet.  "Planned" means a row with a schedule time (a cron or fixed
    fire): it may be written ahead of its time, routed (an address) or not.
*/

#ifndef XXL_STORE_H_INCLUDED
#define XXL_STORE_H_INCLUDED

#include <stdint.h>
#include <stddef.h>
#include "xxl/msg.h"

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
    char *calendar;                     //  the calendar whose times it skips ("" none)
    char *agent_tags;                   //  tags its agents must have ("K=V,...",
                                        //  canonical, xxl_tags.h; "": any agent)
    int64_t max_running;                //  runs of it at once, cluster-wide (0: no
                                        //  limit; at most XXL_MAX_RUNNING_MAX)
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
    int64_t slot;                       //  1: counts towards its job's maxRunning
                                        //  while it has no result (written by
                                        //  log_add; the job's max_running > 0)
    //  log_add only: the caller knows that no row holds this planned
    //  instant (the planner's next fire of a job whose share it holds,
    //  its next time advanced in the same transaction).  The store may
    //  then write it later in the transaction, with other rows; should it
    //  clash after all, the transaction is lost (its commit fails) and the
    //  store writes planned rows at once for a while, so that a clash
    //  refuses only its own row.  Without it a clash refuses the row at
    //  once (log_add fails), which a backfill or misfire counts on.
    bool planned_new;
} xxl_log_t;

//  A workflow (DESIGN §12; version 12): its definition is the canonical
//  JSON of scheduler/flow (xxl_flow_json); its schedule is a job's
//  (schedule_type NONE, CRON or FIX_RATE, schedule_conf, timezone,
//  misfire_strategy); status 1 started, 0 stopped; next_time the next
//  fire (epoch ms, 0 none)
typedef struct {
    int64_t id;
    char *name;
    char *description;
    char *definition;
    char *schedule_type;
    char *schedule_conf;
    char *timezone;
    char *misfire_strategy;
    char *calendar;                     //  the calendar whose excluded times it skips ("" none)
    int64_t status;
    int64_t next_time;
    int64_t add_time, update_time;
} xxl_workflow_t;

//  A workflow run: status RUNNING, SUCCESS, FAILURE or KILLED; the
//  definition it started with (kept whole: an update of the workflow
//  applies from its next run); killed: the node ids that were running
//  when it was killed, comma-separated ("" none); end_time 0 while it runs
typedef struct {
    int64_t id;
    int64_t workflow_id;
    char *status;
    char *param;
    char *definition;
    char *killed;
    char *trigger_type;
    int64_t trigger_time, end_time;
} xxl_workflow_run_t;

//  A log row of a workflow run's node (workflow_run_rows): one per start
//  of the node (attempt 1, then 2, ... for retries)
typedef struct {
    int64_t log_id;
    char *node;
    int64_t attempt;
    int64_t trigger_code, handle_code;
    char *handle_msg;
    int64_t end_time;                   //  its handle time once ended, else its trigger time
} xxl_workflow_row_t;

//  A started job whose next time is due (job_due)
typedef struct {
    int64_t id, update_time, trigger_next_time, trigger_last_time;
} xxl_store_due_t;

//  JOB_LIST's filters: substrings (case-insensitive; "" any) and the
//  status (-1 any); group 0 is any group.  groups (version 10): when not
//  NULL, only the rows of the group_count groups it holds (none when
//  group_count is 0), as well as every other filter.
typedef struct {
    int64_t group_id;
    const char *handler, *desc, *author;
    int64_t status;
    int64_t limit, offset;
    const int64_t *groups;
    size_t group_count;
} xxl_store_job_filter_t;

//  LOG_LIST's filters (0 any): status is XXL-JOB's 1 success, 2 failure,
//  3 running; trigger times from..to inclusive; ids up to max_id; a
//  planned row is not listed before `now`, and until its trigger is
//  recorded its triggerTime is nil.  Newest first.  groups and
//  group_count: as xxl_store_job_filter_t's.
typedef struct {
    int64_t job_id, group_id, status, from, to, max_id, now;
    int64_t limit, offset;
    const int64_t *groups;
    size_t group_count;
} xxl_store_log_filter_t;

//  The runs of one group in a span of trigger times (report_count_groups)
typedef struct {
    int64_t group_id;
    int64_t running, suc, fail;
} xxl_store_group_runs_t;

//  REPORT's totals
typedef struct {
    int64_t jobs, jobs_running, groups;
    int64_t runs, suc, fail;
} xxl_store_totals_t;

//  One audited change of the client api (AUDIT_LIST): who (the key's name
//  and role), what (the request's type and the id it is about, 0 none),
//  when (epoch ms) and the reply code it got
typedef struct {
    int64_t id;
    int64_t time;
    const char *who;
    const char *role;
    const char *type;
    int64_t target;
    int code;
} xxl_audit_t;

//  One item of a CALLBACK (log_handle_done_many): the row, the address
//  whose connection sent it, and what log_handle_done_by takes
typedef struct {
    int64_t log_id;
    const char *address;
    int64_t handle_time;
    int code;
    const char *msg;
    int64_t trigger_time;
} xxl_store_done_t;

//  Planning is shared among the schedulers of one store by leases on
//  XXL_STORE_SHARES shares of the jobs: job J is in share J mod
//  XXL_STORE_SHARES (a log row in its job's).  A set of shares is a mask,
//  bit s for share s.  Each share's lease row: the node that holds it (""
//  none), its epoch (raised by every take, so a write fenced by an old
//  epoch finds it moved), when it expires (epoch ms), and the share's
//  fired_until / fired_sent (see fired_* below: rows of the share planned
//  up to fired_until may have been sent; fired_sent, the latest planned
//  time a commit knows was sent with no store access).
#define XXL_STORE_SHARES 16
#define XXL_STORE_SHARES_ALL ((uint64_t) ((1u << XXL_STORE_SHARES) - 1))
#define XXL_STORE_NODE_MAX 128

typedef struct {
    int share;
    char owner [XXL_STORE_NODE_MAX];
    int64_t epoch, expires;
    int64_t fired_until, fired_sent;
} xxl_lease_t;

//  The ids a caller may hand out from one log_next_id
#define XXL_STORE_LOG_ID_RUN 256
//  The farthest log_ids_past moves the log ids in one call (2^32 ids)
#define XXL_STORE_LOG_IDS_LEAP ((int64_t) 1 << 32)

//  Bumped whenever a method is added or one's arguments or answers change
//  (22: backfill_made_times takes the instants to look up, log_trigger_done
//  claims the row and answers the rows changed; 23: log_ids_past; 24:
//  group_job_ids; 25: registry_newest; 26: job_delay_shift); methods are only ever appended, so
//  a table of an older version is a prefix of this one (size says how much)
#define XXL_STORE_METHODS_VERSION 26

typedef struct _xxl_store_t xxl_store_t;
struct _xxl_account_t;                  //  (xxl_account_t, below)

typedef struct {
    int version;                        //  XXL_STORE_METHODS_VERSION it was built for
    size_t size;                        //  sizeof the table it filled

    //  Lifetime and errors
    void (*destroy) (xxl_store_t *self);
    const char *(*error) (xxl_store_t *self);
    int (*schema_version) (xxl_store_t *self);

    //  Transactions: see the file header.  in_txn: 1 inside one.
    int (*begin) (xxl_store_t *self);
    int (*commit) (xxl_store_t *self);
    int (*rollback) (xxl_store_t *self);
    int (*in_txn) (xxl_store_t *self);
    //  A number that changes when another connection committed (schedulers
    //  sharing a store); -1 on error
    int64_t (*data_version) (xxl_store_t *self);

    //  The journal's housekeeping, between transactions (a backend without
    //  one: set_size ignored, due 0, restart 0).  set_size: the journal
    //  starts over once it holds about mib MiB (1 to XXL_STORE_WAL_MIB_MAX,
    //  else ignored).  due: 1 past its size, 2 past four times it, else 0.
    //  restart: 1 when the next transaction starts it over, 0 when not now
    //  (try after the next commit), -1 on error.  (SQLite: xxl_store_sqlite.c)
    void (*wal_set_size) (xxl_store_t *self, int mib);
    int (*wal_due) (xxl_store_t *self);
    int (*wal_restart) (xxl_store_t *self);

    //  Groups.  find: by numeric id when key is all digits (under 18 of
    //  them), else by app name.  find and load: 0 and *group filled (free
    //  with xxl_group_free), 1 when absent, -1 on error.  add: the new id
    //  or -1.  jobs: how many jobs the group has, or -1.
    int64_t (*group_add) (xxl_store_t *self, const xxl_group_t *group);
    int (*group_update) (xxl_store_t *self, const xxl_group_t *group);
    int (*group_rm) (xxl_store_t *self, int64_t id);
    int (*group_find) (xxl_store_t *self, const char *key, xxl_group_t *group);
    int (*group_load) (xxl_store_t *self, int64_t id, xxl_group_t *group);
    int64_t (*group_jobs) (xxl_store_t *self, int64_t id);
    //  Sets address_list of every automatic group (refresh) or of one
    //  app's (refresh_app) from the registry rows, in address order
    int (*groups_refresh) (xxl_store_t *self, int64_t now);
    int (*group_refresh_app) (xxl_store_t *self, const char *app, int64_t now);
    //  GROUP_LIST's rows, by id, as an array; the count or -1
    int (*group_encode_all) (xxl_store_t *self, xxl_enc_t *enc);

    //  Jobs.  load: 0, 1 when absent, -1 (free with xxl_job_free).  save
    //  writes every column of an existing job.  rm also removes its glue
    //  versions.  rm_logs: every log row of the job; the number or -1.
    //  unchild: removes id `child` from every job's child_jobid; the number
    //  of jobs changed, or -1.  exists: 1, 0, or -1.
    int64_t (*job_add) (xxl_store_t *self, const xxl_job_t *job);
    int (*job_save) (xxl_store_t *self, const xxl_job_t *job);
    int (*job_rm) (xxl_store_t *self, int64_t id);
    int64_t (*job_rm_logs) (xxl_store_t *self, int64_t id);
    int (*job_unchild) (xxl_store_t *self, int64_t child);
    int (*job_load) (xxl_store_t *self, int64_t id, xxl_job_t *job);
    int (*job_exists) (xxl_store_t *self, int64_t id);
    //  A job's child_jobid (a new string; NULL when absent or on error),
    //  and the child_jobid of the job that log row log_id belongs to
    char *(*job_children) (xxl_store_t *self, int64_t id);
    char *(*log_job_children) (xxl_store_t *self, int64_t log_id);
    //  1 when some job has children, 0 when none, -1 on error
    int (*jobs_have_children) (xxl_store_t *self);
    //  The planner's times: set_times writes last and next; halt stops the
    //  job (status 0, next 0) with `last` as its last time
    int (*job_set_times) (xxl_store_t *self, int64_t id, int64_t last, int64_t next);
    int (*job_halt) (xxl_store_t *self, int64_t id, int64_t last);
    //  Started jobs whose next time is <= before, soonest first, up to max;
    //  0 with *count set, or -1
    int (*job_due) (xxl_store_t *self, int64_t before, xxl_store_due_t *rows, size_t max,
                    size_t *count);
    //  Ids of started jobs whose next time is `mark` (a FIX_DELAY job
    //  waiting for its run to end), above `after`, by id, up to max
    int (*job_marked_ids) (xxl_store_t *self, int64_t mark, int64_t after, int64_t *ids,
                           size_t max, size_t *count);
    //  The run log_id of a started FIX_DELAY job whose next time is `mark`
    //  ended at `now`: its next time becomes now + its delay.  1 when the
    //  job was changed, 0 when not, -1 on error.
    int (*job_delay_resume) (xxl_store_t *self, int64_t log_id, int64_t now, int64_t mark);
    //  JOB_SHOW's row (a map; nothing when absent): 1, 0 absent, -1
    int (*job_encode) (xxl_store_t *self, xxl_enc_t *enc, int64_t id);
    //  JOB_LIST: an array of the rows the filter selects, by id, stopping
    //  before a row would take the encoder past max_size bytes
    //  (*truncated 1, else 0); the number of rows or -1.  count: how many
    //  the filter selects without limit and offset, or -1.
    int (*job_encode_page) (xxl_store_t *self, xxl_enc_t *enc, size_t max_size,
                            int *truncated, const xxl_store_job_filter_t *filter);
    int64_t (*job_count) (xxl_store_t *self, const xxl_store_job_filter_t *filter);

    //  Glue versions, numbered 1, 2, ... per job; the last XXL_GLUE_KEEP
    //  are kept.  add: the new version or -1.  last: the newest version
    //  (0 none, -1 error).  exists: 1, 0, -1.  get: 0 with *type and
    //  *source new strings, 1 absent, -1.  encode: one version's row with
    //  its source (1, 0 absent, -1).  encode_page: the versions newest
    //  first, without source, as encode_page above.  count: how many.
    int (*glue_add) (xxl_store_t *self, int64_t job_id, const char *glue_type,
                     const char *source, const char *remark, int64_t now);
    int64_t (*glue_last) (xxl_store_t *self, int64_t job_id);
    int (*glue_exists) (xxl_store_t *self, int64_t job_id, int64_t version);
    int (*glue_get) (xxl_store_t *self, int64_t job_id, int64_t version, char **type,
                     char **source);
    int (*glue_encode) (xxl_store_t *self, xxl_enc_t *enc, int64_t job_id, int64_t version);
    int (*glue_encode_page) (xxl_store_t *self, xxl_enc_t *enc, size_t max_size,
                             int *truncated, int64_t job_id, int64_t limit, int64_t offset);
    int64_t (*glue_count) (xxl_store_t *self, int64_t job_id);

    //  Log rows: writing them.  add inserts *log and sets log->id (or uses
    //  log->id when > 0).  next_id: the id the next add without an id
    //  would give, or -1; inside one transaction a caller may hand out
    //  that id and the XXL_STORE_LOG_ID_RUN - 1 after it itself (then it
    //  asks again), as long as every row of the transaction is added that
    //  way.  A backend may defer, inside a
    //  transaction, the INSERT of a row with an id of the caller's and no
    //  schedule_time (which no unique rule can refuse) and answer 0 at
    //  once: the row is written before the transaction's next statement
    //  runs, so every later call sees it, and should that write fail, that
    //  call fails and so does the commit (the transaction is lost).
    int (*log_add) (xxl_store_t *self, xxl_log_t *log);
    int64_t (*log_next_id) (xxl_store_t *self);
    int (*log_load) (xxl_store_t *self, int64_t id, xxl_log_t *log);
    //  The job of a row; 0 absent (as no id is 0), -1 on error
    int64_t (*log_job_id) (xxl_store_t *self, int64_t log_id);
    //  An unsent, unfinished row's trigger ends (the trigger path's
    //  failure): trigger_code, `append` appended to trigger_msg, and the
    //  address set when not NULL; only while the row has no address or
    //  that one (NULL: none), as log_route claims it: a row routed
    //  elsewhere meanwhile (by a scheduler sharing the store) is that
    //  route's.  The number of rows changed (0 or 1), -1.
    int (*log_trigger_done) (xxl_store_t *self, int64_t log_id, int code,
                             const char *address, const char *append);
    //  Finishes a row once (and an unsent one becomes accepted: the agent
    //  ran it): 1 when already finished, absent (a repeated callback) or
    //  its trigger failed (trigger_code not 0 or 200: its handle_code
    //  stays 0), 0 when it finished it.  _at: the same, and an unsent row's trigger
    //  time becomes trigger_time.
    int (*log_handle_done) (xxl_store_t *self, int64_t log_id, int64_t handle_time,
                            int code, const char *msg);
    int (*log_handle_done_at) (xxl_store_t *self, int64_t log_id, int64_t handle_time,
                               int code, const char *msg, int64_t trigger_time);
    //  The agent acknowledged an unsent row: code 200, and trigger time
    //  `stamp` unless it is 0.  The number of rows changed (0 or 1), -1.
    int (*log_accept) (xxl_store_t *self, int64_t log_id, int64_t stamp);
    //  An unsent row's trigger time (stamp) or address and the section of
    //  trigger_msg that says where it went (route).  route with stamp 0
    //  writes the address and section whether sent or not (a restart's
    //  re-send), of a row neither failed nor finished (one that another
    //  scheduler sharing the store failed meanwhile is not sent again: its
    //  retry is the trigger's next run).  route claims the row: it changes nothing when the row has
    //  another address already (routed meanwhile, by this scheduler or one
    //  sharing the store: that route's RUN is the run's), so a row is
    //  routed to one address at most until its address is taken back
    //  (log_unroute, log_clear_address).  Counts as above: the engine sends
    //  only when 1.
    int (*log_stamp) (xxl_store_t *self, int64_t log_id, int64_t stamp);
    int (*log_route) (xxl_store_t *self, int64_t log_id, int64_t stamp, const char *address,
                      const char *section);
    //  A planned unsent row not yet routed gets its address and section;
    //  the count as above
    int (*log_plan_route) (xxl_store_t *self, int64_t log_id, const char *address,
                           const char *section);
    //  An unsent row loses its address and `section`, the section its
    //  route appended, cut from the end of trigger_msg; only while
    //  trigger_msg still ends with it: a route since (another RUN of the
    //  row to the same address: a re-send by this scheduler or by one
    //  sharing the store that took the row's share over) appended its own,
    //  and that RUN's answer decides the row.  unfinished: only while it
    //  has no result either.  The count as above.
    int (*log_unroute) (xxl_store_t *self, int64_t log_id, const char *section, int unfinished);
    //  Any row: its trigger time
    int (*log_retime) (xxl_store_t *self, int64_t log_id, int64_t trigger_time);
    //  A row's end as the trigger path decides it: code, the last
    //  `presumed` characters of trigger_msg replaced by text, and the
    //  trigger time when stamp > 0 (with last NULL, whatever the row's
    //  trigger code: an acceptance may come after the run's result).  last: NULL, or the section that the
    //  route of the RUN answered appended (presumed its length): then only
    //  while trigger_msg still ends with it (as for log_unroute: another
    //  RUN of the row routed since decides it) and the row is unsent, or,
    //  for code 200 (an acceptance with a message), accepted already (its
    //  result came first)
    int (*log_trigger_end) (xxl_store_t *self, int64_t log_id, int code, int64_t presumed,
                            const char *text, int64_t stamp, const char *last);
    //  Appends text to trigger_msg or to handle_msg
    int (*log_append_trigger_msg) (xxl_store_t *self, int64_t log_id, const char *text);
    int (*log_append_handle_msg) (xxl_store_t *self, int64_t log_id, const char *text);
    //  Sharding: a row's shard "i/n" (set_shard), and a copy of unsent row
    //  src as row id with its own shard and trigger time (1 when made)
    int (*log_set_shard) (xxl_store_t *self, int64_t log_id, const char *shard);
    int (*log_copy_shard) (xxl_store_t *self, int64_t id, int64_t src, const char *shard,
                           int64_t stamp);
    //  Deletes an unsent row (a plan cancelled)
    int (*log_drop_unsent) (xxl_store_t *self, int64_t log_id);
    //  Deletes a job's unsent planned rows that have no address or are
    //  not due by `now` (its plans, when it stops or changes)
    int (*job_drop_plans) (xxl_store_t *self, int64_t job_id, int64_t now);
    //  The planned time of an unsent, unrouted row; 0 when none, -1 error
    int64_t (*log_plan_time) (xxl_store_t *self, int64_t log_id);
    //  An unsent unfinished row fails with code and `why` appended
    int (*log_fail_unsent) (xxl_store_t *self, int64_t log_id, int code, const char *why);
    //  An alarm's outcome: alarm_status, and report appended to handle_msg
    //  under an "Alarm" banner when not NULL
    int (*log_set_alarm) (xxl_store_t *self, int64_t log_id, int status, const char *report);
    //  Claims a failed row's alarm (status 0 to -1): 1 when claimed
    int (*log_alarm_claim) (xxl_store_t *self, int64_t log_id);

    //  Log rows: scans, each by id up to max ids into ids, 0 with *count
    //  or -1.  unsent: unsent rows above `after`.  unanswered: unsent
    //  unfinished rows triggered before `before`.  failed: failed rows
    //  whose alarm is not handled.  claimed: rows whose alarm was claimed
    //  (-1) above `after`.  lost: accepted unfinished rows triggered at or
    //  before `before` whose address is not registered.
    int (*log_unsent_ids) (xxl_store_t *self, int64_t after, int64_t *ids, size_t max,
                           size_t *count);
    int (*log_unanswered_ids) (xxl_store_t *self, int64_t before, int64_t *ids, size_t max,
                               size_t *count);
    int (*log_failed_ids) (xxl_store_t *self, int64_t *ids, size_t max, size_t *count);
    int (*log_claimed_ids) (xxl_store_t *self, int64_t after, int64_t *ids, size_t max,
                            size_t *count);
    int (*log_lost_ids) (xxl_store_t *self, int64_t before, int64_t *ids, size_t max,
                         size_t *count);

    //  Fires: fired_until (plans up to it may have been sent) and
    //  fired_sent (the latest planned time a commit knows was sent), of
    //  every share at once (lease_fired: of some).  get: 0 and the least
    //  of each over the shares, or -1.  raise_*: every share's to max
    //  (stored, value); the number of shares, -1.
    int (*fired_get) (xxl_store_t *self, int64_t *until, int64_t *sent);
    int (*fired_raise_until) (xxl_store_t *self, int64_t until);
    int (*fired_raise_sent) (xxl_store_t *self, int64_t sent);

    //  Recovery at start (see engine_recover).  "Unsent planned" below:
    //  unsent with no address, or routed ahead past fired_sent and not
    //  stamped.  stamp_fired: rows routed and planned up to fired_sent,
    //  not stamped, get their planned time as trigger time; stamp_due: the
    //  same up to `now`.  late_jobs: jobs with unsent planned rows planned
    //  before `before`.  late_last: the newest such row of a job (0 none).
    //  misfire: a row's trigger type becomes MISFIRE (its text is the
    //  engine's: log_set_trigger_msg).  drop_late: deletes a
    //  job's such rows but `keep`; the number.  clear_address: a row's.
    int (*recover_stamp_fired) (xxl_store_t *self);
    int (*recover_stamp_due) (xxl_store_t *self, int64_t now);
    int (*recover_late_jobs) (xxl_store_t *self, int64_t before, int64_t *ids, size_t max,
                              size_t *count);
    int64_t (*recover_late_last) (xxl_store_t *self, int64_t job_id, int64_t before);
    int (*recover_misfire) (xxl_store_t *self, int64_t log_id);
    int (*recover_drop_late) (xxl_store_t *self, int64_t job_id, int64_t before, int64_t keep);
    int (*log_clear_address) (xxl_store_t *self, int64_t log_id);

    //  LOG_SHOW's row (1, 0 absent, -1); LOG_LIST's page as job_encode_page
    int (*log_encode) (xxl_store_t *self, xxl_enc_t *enc, int64_t id);
    int (*log_encode_page) (xxl_store_t *self, xxl_enc_t *enc, size_t max_size,
                            int *truncated, const xxl_store_log_filter_t *filter);
    //  Deletes up to `limit` finished rows (never one waiting for its
    //  trigger or its result, nor a node's of a RUNNING workflow run, whose
    //  states they are) of job_id (0 any) triggered before `before`
    //  with an id below `below` (INT64_MAX: no bound); the number, or -1.
    //  The id of the row `rank` places from the newest of job_id (0 any):
    //  0 none, -1 error.
    int64_t (*log_delete) (xxl_store_t *self, int64_t job_id, int64_t before, int64_t below,
                           int64_t limit);
    int64_t (*log_id_at_rank) (xxl_store_t *self, int64_t job_id, int64_t rank);

    //  Registry rows (AGENT_LIST and schedulers sharing a store).  alive:
    //  the distinct addresses that beat within window_ms of the newest beat
    //  (comma-separated, a new string; NULL none or error).
    int (*registry_beat) (xxl_store_t *self, const char *app, const char *address,
                          int64_t now);
    int (*registry_remove) (xxl_store_t *self, const char *app, const char *address);
    int (*registry_expire) (xxl_store_t *self, int64_t dead_before);
    char *(*registry_alive) (xxl_store_t *self, int64_t window_ms);

    //  Reports: refresh recounts day [from, to) of the log into the report
    //  table; totals fills REPORT's counts; encode_days: the newest `days`
    //  days as an array
    int (*report_refresh) (xxl_store_t *self, int64_t from, int64_t to, int64_t now);
    int (*report_totals) (xxl_store_t *self, xxl_store_totals_t *totals);
    int (*report_encode_days) (xxl_store_t *self, xxl_enc_t *enc, int days);

    //  Version 2.  The audit (xxl_audit_t; its id is the store's).  add:
    //  writes one row, in the caller's transaction like every write; 0 or
    //  -1.  encode_page: rows with an id below `before` (INT64_MAX: from
    //  the newest), newest first, up to limit, as maps {id, time, who,
    //  role, type, target, code}, as job_encode_page; the count or -1.
    //  delete: up to `limit` rows older than `before` (epoch ms), oldest
    //  first; the number or -1.
    int (*audit_add) (xxl_store_t *self, const xxl_audit_t *row);
    int (*audit_encode_page) (xxl_store_t *self, xxl_enc_t *enc, size_t max_size,
                              int *truncated, int64_t before, int64_t limit);
    int64_t (*audit_delete) (xxl_store_t *self, int64_t before, int64_t limit);
    //  A callback from the agent at address: as
    //  log_handle_done(_at, when trigger_time is not 0), and only when the
    //  row was sent to address; 1 also when it was sent elsewhere
    int (*log_handle_done_by) (xxl_store_t *self, int64_t log_id, const char *address,
                               int64_t handle_time, int code, const char *msg,
                               int64_t trigger_time);
    //  The apps whose registry rows name address and beat at or after
    //  since: comma-separated, a new string ("" when none, or on error)
    char *(*registry_apps) (xxl_store_t *self, const char *address, int64_t since);

    //  Version 3.  Leases (xxl_lease_t above), each call a write in the
    //  caller's transaction, whose write lock makes read-then-take safe.
    //  list: every share's row into rows [XXL_STORE_SHARES]; 0 or -1.
    //  take: share becomes node's, its epoch one above `epoch`, expiring
    //  at `expires`, only while its epoch is still `epoch` (the one the
    //  caller read); 1 taken, 0 moved meanwhile, -1.  renew: a held share
    //  (node, epoch) expires at `expires`; 1, 0 when it moved, -1.
    //  release: a held share becomes nobody's, expired at now; 1, 0, -1.
    //  fired: raises fired_until to until and fired_sent to sent (each to
    //  the max of stored and given) for the shares in mask; 0, -1.
    int (*lease_list) (xxl_store_t *self, xxl_lease_t *rows);
    int (*lease_take) (xxl_store_t *self, int share, const char *node, int64_t epoch,
                       int64_t expires);
    int (*lease_renew) (xxl_store_t *self, int share, const char *node, int64_t epoch,
                        int64_t expires);
    int (*lease_release) (xxl_store_t *self, int share, const char *node, int64_t epoch,
                          int64_t now);
    int (*lease_fired) (xxl_store_t *self, uint64_t mask, int64_t until, int64_t sent);
    //  The schedulers sharing the store: beat records node alive at now;
    //  count: how many nodes beat at or after since (-1 on error)
    int (*node_beat) (xxl_store_t *self, const char *node, int64_t now);
    int64_t (*node_count) (xxl_store_t *self, int64_t since);
    //  As job_due, log_unsent_ids, recover_stamp_fired, recover_stamp_due
    //  and recover_late_jobs, for the jobs of the shares in mask only
    //  (recovery of shares taken over).  The recover_* calls and
    //  "unsent planned" use each row's own share's fired_sent.
    int (*job_due_in) (xxl_store_t *self, uint64_t mask, int64_t before,
                       xxl_store_due_t *rows, size_t max, size_t *count);
    int (*log_unsent_in) (xxl_store_t *self, uint64_t mask, int64_t after, int64_t *ids,
                          size_t max, size_t *count);
    int (*recover_stamp_fired_in) (xxl_store_t *self, uint64_t mask);
    int (*recover_stamp_due_in) (xxl_store_t *self, uint64_t mask, int64_t now);
    int (*recover_late_jobs_in) (xxl_store_t *self, uint64_t mask, int64_t before,
                                 int64_t *ids, size_t max, size_t *count);
    //  A row's whole triggerMsg becomes text (the engine rewrote it)
    int (*log_set_trigger_msg) (xxl_store_t *self, int64_t log_id, const char *text);

    //  Version 4.  The items of one agent CALLBACK at once: for each,
    //  what log_handle_done_by (items [i].address, ...) would answer, in
    //  done [i] (0 it finished the row, 1 it changed nothing), as if they
    //  ran one after another in order (so an id given twice finishes its
    //  row once, at its first item); 0, or -1 when the call failed: done
    //  [i] is then -1 from the item where it failed on, and the answers
    //  of the items before it, which may be written (all -1 when nothing
    //  is known; inside a transaction, the transaction may be lost).
    //  NULL in a table: xxl_store_log_handle_done_many calls
    //  log_handle_done_by for each item.
    int (*log_handle_done_many) (xxl_store_t *self, const xxl_store_done_t *items,
                                 size_t count, int *done);

    //  Version 5.  The HTTP side's users, bearer tokens and sessions
    //  (xxl_store_accounts_t below), in a table of their own
    const struct _xxl_store_accounts_t *accounts;

    //  Version 6.  Runs routed to address whose trigger succeeded and that
    //  have no result: their ids above `after`, ascending, at most max
    int (*log_open_ids_at) (xxl_store_t *self, const char *address, int64_t after,
                            int64_t *ids, size_t max, size_t *count);

    //  Version 7.  The daily report in two steps, so that the scan runs
    //  on a handle of its own, outside the engine's transaction
    //  (xxl_reporter.h): count reads the runs triggered in [from, to) --
    //  running (trigger 0 or 200, no result), succeeded (handle 200),
    //  failed -- with no transaction and no lock; 0 or -1.  set writes
    //  the day's row (insert or replace), in the caller's transaction.
    int (*report_count) (xxl_store_t *self, int64_t from, int64_t to, int64_t *running,
                         int64_t *suc, int64_t *fail);
    int (*report_set) (xxl_store_t *self, int64_t day, int64_t running, int64_t suc,
                       int64_t fail, int64_t now);

    //  Version 8.  Up to limit log rows of job id (any state, oldest
    //  first), for a removed job's rows a batch at a time; the number or -1
    int64_t (*job_rm_logs_some) (xxl_store_t *self, int64_t id, int64_t limit);

    //  Version 9.  The store's clock, epoch ms: the one every scheduler of
    //  the store reads the same, on which lease expiries and node beats
    //  are written and compared (PostgreSQL: the server's clock_timestamp;
    //  SQLite, one host: this host's wall clock); -1 on a failure
    int64_t (*clock_now) (xxl_store_t *self);
    //  log_lost_ids's rows with an id above `after`, ascending: the
    //  lost-run monitor pages past rows it must leave for now
    int (*log_lost_ids_after) (xxl_store_t *self, int64_t before, int64_t after, int64_t *ids,
                               size_t max, size_t *count);

    //  Version 10.  The filters of job_encode_page, job_count and
    //  log_encode_page honour their `groups` (a table of an older version
    //  does not: the calls below refuse a filter with groups for it).
    //  report_count_groups: report_count's figures for each group (a
    //  run counts for its row's job_group) that had runs triggered in
    //  [from, to), by group id, into *rows (a new array, free(); NULL
    //  when none) and *count; 0, or -1 (*rows NULL)
    int (*report_count_groups) (xxl_store_t *self, int64_t from, int64_t to,
                                xxl_store_group_runs_t **rows, size_t *count);

    //  Version 11.  Calendars (xxl_store_calendars_t below), in a table of
    //  their own
    const struct _xxl_store_calendars_t *calendars;
    //  Version 12.  Workflows (xxl_workflow_t) and their runs
    //  (xxl_workflow_run_t); a workflow and its runs are in share
    //  workflow_id mod XXL_STORE_SHARES.  add: the new id, or -1.  save:
    //  every column of an existing workflow.  rm: the workflow and its
    //  runs (their log rows stay); 1, 0 absent, -1.  load: 0, 1 absent,
    //  -1 (free with xxl_workflow_free).  encode: WORKFLOW_SHOW's map but
    //  its definition (1, 0 absent, -1); encode_page: WORKFLOW_LIST's
    //  array, by id, as job_encode_page; count: how many.  using_job: ids
    //  of workflows whose definition may name job `job` (the caller
    //  checks each graph), by id, up to max.  due: started workflows of
    //  the shares in mask with a next time in (0, before], by next time.
    //  set_next: a workflow's next time.
    int64_t (*workflow_add) (xxl_store_t *self, const xxl_workflow_t *workflow);
    int (*workflow_save) (xxl_store_t *self, const xxl_workflow_t *workflow);
    int (*workflow_rm) (xxl_store_t *self, int64_t id);
    int (*workflow_load) (xxl_store_t *self, int64_t id, xxl_workflow_t *workflow);
    int (*workflow_encode) (xxl_store_t *self, xxl_enc_t *enc, int64_t id);
    int (*workflow_encode_page) (xxl_store_t *self, xxl_enc_t *enc, size_t max_size,
                                 int *truncated, int64_t limit, int64_t offset);
    int64_t (*workflow_count) (xxl_store_t *self);
    int (*workflow_using_job) (xxl_store_t *self, int64_t job, int64_t *ids, size_t max,
                               size_t *count);
    int (*workflow_due) (xxl_store_t *self, uint64_t mask, int64_t before, int64_t *ids,
                         size_t max, size_t *count);
    int (*workflow_set_next) (xxl_store_t *self, int64_t id, int64_t next);
    //  Runs.  run_add: the new id, or -1.  run_load: 0, 1 absent, -1
    //  (xxl_workflow_run_free); inside a transaction it locks the run's
    //  row where the backend locks rows (PostgreSQL: until commit).  run_set: status and end time, and killed
    //  unless NULL; 1, 0 absent, -1.  run_ids: RUNNING runs of the shares
    //  in mask with an id above after, ascending, up to max.  running: 1
    //  when some run is RUNNING, 0 none, -1.  run_encode: a run's map
    //  {id, workflowId, status, param, triggerType, triggerTime, endTime}
    //  (1, 0, -1); run_encode_page: those of one workflow (0: any), newest
    //  first, up to limit, as job_encode_page.  run_rows: the log rows of
    //  a run's nodes, by node then attempt, into *rows (a new array:
    //  xxl_workflow_rows_free; NULL when none) and *count; 0 or -1.
    int64_t (*workflow_run_add) (xxl_store_t *self, const xxl_workflow_run_t *run);
    int (*workflow_run_load) (xxl_store_t *self, int64_t id, xxl_workflow_run_t *run);
    int (*workflow_run_set) (xxl_store_t *self, int64_t id, const char *status,
                             int64_t end_time, const char *killed);
    int (*workflow_run_ids) (xxl_store_t *self, uint64_t mask, int64_t after, int64_t *ids,
                             size_t max, size_t *count);
    int (*workflow_runs_running) (xxl_store_t *self);
    int (*workflow_run_encode) (xxl_store_t *self, xxl_enc_t *enc, int64_t id);
    int (*workflow_run_encode_page) (xxl_store_t *self, xxl_enc_t *enc, size_t max_size,
                                     int *truncated, int64_t workflow_id, int64_t limit);
    int (*workflow_run_rows) (xxl_store_t *self, int64_t run_id, xxl_workflow_row_t **rows,
                              size_t *count);
    //  A log row becomes the start `attempt` of node `node` of run run_id:
    //  UNIQUE (run, node, attempt), so a second start of the same attempt
    //  fails (and with it the transaction); 0, -1.  log_flow_run: the run
    //  of a log row; 0 none or absent, -1.
    int (*log_flow_mark) (xxl_store_t *self, int64_t log_id, int64_t run_id, const char *node,
                          int64_t attempt);
    int64_t (*log_flow_run) (xxl_store_t *self, int64_t log_id);
    //  Ids of workflows above `after`, ascending, up to max (a scoped list)
    int (*workflow_ids) (xxl_store_t *self, int64_t after, int64_t *ids, size_t max,
                         size_t *count);
    //  Ids of the workflows naming calendar `name`, above `after`,
    //  ascending, up to max (as calendar_job_ids)
    int (*workflow_calendar_ids) (xxl_store_t *self, const char *name, int64_t after,
                                  int64_t *ids, size_t max, size_t *count);

    //  Version 13.  Backfills (xxl_store_backfills_t below), in a table of
    //  their own
    const struct _xxl_store_backfills_t *backfills;

    //  Version 14.  The rows of job_id with no result (handle_code 0)
    //  that hold or wait for one of its maxRunning slots (runs/xxl_admit.c).
    //  running: the admitted ones (an address written: sent, accepted,
    //  in doubt) not failed at trigger, by id; else the waiting ones (no
    //  address, trigger_code 0) due at or before `before` by their planned
    //  time, or a retry's by its trigger time (its due time, written
    //  ahead); any other row (a trigger's, stamped when made) is due at
    //  once, whatever `before`, so that a wall clock stepped back holds
    //  none.  Oldest first (planned time, else trigger time, then id).  Up
    //  to max into ids; 0 or -1.
    int (*log_slot_ids) (xxl_store_t *self, int64_t job_id, int running, int64_t before,
                         int64_t *ids, size_t max, size_t *count);
    //  Ids of the jobs with a maxRunning (> 0) above `after`, ascending,
    //  up to max; 0 or -1
    int (*job_slot_ids) (xxl_store_t *self, int64_t after, int64_t *ids, size_t max,
                         size_t *count);

    //  Version 15.  The pages of WORKFLOW_RUNS and BACKFILL_LIST below an
    //  id: the runs of workflow_id, the backfills of job_id (0: any), with
    //  an id below `before` (INT64_MAX: from the newest), newest first, up
    //  to limit, as job_encode_page; the count or -1.  Each page is read
    //  through an index (xxl_workflow_run_flow, xxl_backfill_job, the
    //  primary key), never by a walk of the table.
    int (*workflow_run_encode_below) (xxl_store_t *self, xxl_enc_t *enc, size_t max_size,
                                      int *truncated, int64_t workflow_id, int64_t before,
                                      int64_t limit);
    int (*backfill_encode_below) (xxl_store_t *self, xxl_enc_t *enc, size_t max_size,
                                  int *truncated, int64_t job_id, int64_t before,
                                  int64_t limit);

    //  Version 16.  Remembered sessions (a login's "remember me",
    //  docs/http.md), whose idle limit is a longer one of their own.
    //  session_add_remember: session_add, the session remembered when
    //  remember is 1.  session_find_remember: session_find, where a
    //  remembered session is found when seen at or after remembered_after
    //  (the others: seen_after), *remember its flag (0 or 1).
    //  session_expire_remember: session_expire, the remembered sessions
    //  going when seen before remembered_before (the others: before).
    int (*session_add_remember) (xxl_store_t *self, const char *id, const char *user,
                                 const char *csrf, int64_t now, int remember);
    int (*session_find_remember) (xxl_store_t *self, const char *id, int64_t seen_after,
                                  int64_t remembered_after, char **user, char **csrf,
                                  int64_t *seen, int *remember);
    int64_t (*session_expire_remember) (xxl_store_t *self, int64_t before,
                                        int64_t remembered_before);

    //  Version 17.  The first console user (docs/operations.md, First
    //  login): user_add_first adds user (as user_add) only while the store
    //  has no user at all; 1 added, 0 a user exists (nothing written), -1.
    //  Under the write lock, as every write: of schedulers sharing a store,
    //  one adds it and the others find a user.
    int (*user_add_first) (xxl_store_t *self, const struct _xxl_account_t *user);

    //  Version 18.  report_encode_range: the report's day rows whose day
    //  (triggerDay, a local midnight) is in [from, to], newest first, at
    //  most limit, as report_encode_days's array (a REPORT over a range of
    //  days); the count or -1.  The rows are read through the table's
    //  key on trigger_day.
    int (*report_encode_range) (xxl_store_t *self, xxl_enc_t *enc, int64_t from, int64_t to,
                                int64_t limit);

    //  Version 19.  log_open_ids_at for every address at once: the runs
    //  whose trigger succeeded and that have no result, a page of at most
    //  max, and beside each id its address (a new string in addresses [i],
    //  "" for none, that the caller frees; on -1 none is left to free).
    //  Pages come in the order of the open runs' index (trigger time, then
    //  id): cursor, two integers the caller zeroes to start, is advanced
    //  past each page; a page shorter than max is the last.  One pass over
    //  the open rows serves the addresses of many registrations.
    int (*log_open_ids_all) (xxl_store_t *self, int64_t cursor [2], int64_t *ids,
                             char **addresses, size_t max, size_t *count);

    //  Version 20.  log_insert_trigger_msg: text put into trigger_msg
    //  `before` characters (as length() counts them) ahead of its end, 0
    //  to append, more than its length to prepend.  A row whose last
    //  section was written ahead of its agent's answer (log_route) keeps
    //  that section last, where log_trigger_end and log_unroute cut it by
    //  its length.  The count of rows changed, or -1.
    int (*log_insert_trigger_msg) (xxl_store_t *self, int64_t log_id, int64_t before,
                                   const char *text);

    //  Version 23.  log_ids_past: log ids an agent accepted that the
    //  store would hand out again (a store restored from a backup taken
    //  before they were handed out).  When `id` is at or past the next id
    //  the store would reserve (past every id of every handle's
    //  reservation), or among the ids this handle reserved that the
    //  caller has not handed out yet (from `from` on, the caller's first
    //  id not handed out; 0: the caller may have handed out the whole run
    //  next_id last gave it), the store's log id sequence moves past id
    //  (never back, whoever else draws; on PostgreSQL at once, on SQLite
    //  with the caller's transaction, or one of its own outside one) and
    //  this handle's reservation is dropped: no id <= id is handed out
    //  afterwards by this handle, nor by another from a reservation it
    //  makes afterwards (what another reserved before is its own: that
    //  scheduler moves past id at the agent's REGISTER to it).  *was: the next id before
    //  (this handle's, else the store's), *now: the next id after.  1
    //  moved, 0 nothing to move (id is another handle's, or was handed
    //  out), -1 on error; an id more than XXL_STORE_LOG_IDS_LEAP past
    //  the next id is one (refused: not believed, and the ids would run
    //  out).
    int (*log_ids_past) (xxl_store_t *self, int64_t id, int64_t from, int64_t *was,
                         int64_t *now);

    //  Version 24.  The ids of the group's jobs above `after`, by id, up
    //  to max into ids: 0 with *count set, or -1
    int (*group_job_ids) (xxl_store_t *self, int64_t id, int64_t after, int64_t *ids,
                          size_t max, size_t *count);

    //  Version 25.  The newest beat of any registry row (store-clock ms;
    //  0 when there is none, -1 on error): whether some scheduler of the
    //  store hears an agent now (the lease's deaf rule, xxl_lease_rules.h)
    int64_t (*registry_newest) (xxl_store_t *self);

    //  Version 26.  job_delay_shift: the started FIX_DELAY jobs of the
    //  shares in mask whose next time is a wall-clock time (above 0 and
    //  below `never`, the mark of one waiting for its run's end) get it
    //  moved by step ms, kept within 1..never - 1: a step of the wall
    //  clock leaves the delay they wait for its length.  The count of
    //  jobs moved, or -1.
    int (*job_delay_shift) (xxl_store_t *self, uint64_t mask, int64_t step, int64_t never);
} xxl_store_methods_t;

//  Users (console logins), bearer tokens and sessions (docs/http.md).
//  A user's password is stored as its crypt(3) hash, a token and a
//  session id only as the hex SHA-256 of their value: the store never
//  holds what a caller presents.  `apps` is a comma list ("" none).
//  Every write is in the caller's transaction, like every other.
typedef struct _xxl_account_t {
    char *name;                         //  user name or token name
    char *hash;                         //  password's crypt(3) hash, or token's SHA-256
    char *role;                         //  admin, operator, viewer
    char *apps;
    int64_t add_time;
} xxl_account_t;

//  Sessions a user keeps at most (a login past it ends the least recently
//  seen one): logins in a loop do not grow the store without bound
#define XXL_STORE_USER_SESSIONS 64

typedef struct _xxl_store_accounts_t {
    //  add: 1 added, 0 when the name is taken, -1.  update: NULL leaves a
    //  column as it is; 1 updated, 0 no such user, -1.  get: 0 and *out
    //  filled (xxl_account_free), 1 none, -1.  rm: 1, 0 none, -1 (a user's
    //  sessions go with it).  encode_all: an array of maps {username,
    //  role, apps, addTime} (tokens: {name, role, apps, addTime}), by name;
    //  the count or -1.
    int (*user_add) (xxl_store_t *self, const xxl_account_t *user);
    int (*user_update) (xxl_store_t *self, const char *name, const char *hash,
                        const char *role, const char *apps);
    int (*user_get) (xxl_store_t *self, const char *name, xxl_account_t *out);
    int (*user_rm) (xxl_store_t *self, const char *name);
    int (*user_encode_all) (xxl_store_t *self, xxl_enc_t *enc);
    //  Tokens, found by the SHA-256 (hex) of their value
    int (*token_add) (xxl_store_t *self, const xxl_account_t *token);
    int (*token_find) (xxl_store_t *self, const char *hash, xxl_account_t *out);
    int (*token_rm) (xxl_store_t *self, const char *name);
    int (*token_encode_all) (xxl_store_t *self, xxl_enc_t *enc);
    //  Sessions, by the SHA-256 (hex) of their id.  find: the session's
    //  user and CSRF token when it was seen at or after seen_after; 0 (new
    //  strings in *user, *csrf; *seen), 1 none or idle, -1.  touch: seen
    //  becomes now.  rm: 1, 0 none, -1.  user_sessions_rm: every session
    //  of a user (a password changed); expire: those last seen before
    //  `before`; the count or -1.  add: a user keeps at most
    //  XXL_STORE_USER_SESSIONS; the least recently seen go past it.
    int (*session_add) (xxl_store_t *self, const char *id, const char *user,
                        const char *csrf, int64_t now);
    int (*session_find) (xxl_store_t *self, const char *id, int64_t seen_after,
                         char **user, char **csrf, int64_t *seen);
    int (*session_touch) (xxl_store_t *self, const char *id, int64_t now);
    int (*session_rm) (xxl_store_t *self, const char *id);
    int (*user_sessions_rm) (xxl_store_t *self, const char *user);
    int64_t (*session_expire) (xxl_store_t *self, int64_t before);
} xxl_store_accounts_t;

void xxl_account_free (xxl_account_t *account);

//  A calendar (docs/operations.md, Calendars): the times the jobs that
//  name it skip.  dates: "YYYY-MM-DD" comma-separated, sorted ("" none);
//  exclude_cron: a cron expression ("" none); timezone: the zone both are
//  read in ("" the job's own).
typedef struct {
    char *name;
    char *dates;
    char *exclude_cron;
    char *timezone;
    int64_t add_time, update_time;
} xxl_store_calendar_t;

typedef struct _xxl_store_calendars_t {
    //  put: writes the row; a new name is added (add_time and update_time
    //  as given), an existing one replaced (its add_time kept) only when
    //  `replace`; 1 written, 0 the name is taken (replace 0), -1.  get: 0
    //  and *out filled (xxl_store_calendar_free), 1 none, -1.  rm: 1, 0
    //  none, -1.  encode: the row as a map {name, dates, excludeCron,
    //  timezone, addTime, updateTime} (1, 0 absent, -1); encode_all: an
    //  array of them by name, the count or -1.  job_ids: the ids above
    //  `after` of the jobs whose calendar is name, ascending, up to max;
    //  0 with *count, or -1.
    int (*calendar_put) (xxl_store_t *self, const xxl_store_calendar_t *row, int replace);
    int (*calendar_get) (xxl_store_t *self, const char *name, xxl_store_calendar_t *out);
    int (*calendar_rm) (xxl_store_t *self, const char *name);
    int (*calendar_encode) (xxl_store_t *self, xxl_enc_t *enc, const char *name);
    int (*calendar_encode_all) (xxl_store_t *self, xxl_enc_t *enc);
    int (*calendar_job_ids) (xxl_store_t *self, const char *name, int64_t after,
                             int64_t *ids, size_t max, size_t *count);
} xxl_store_calendars_t;

void xxl_store_calendar_free (xxl_store_calendar_t *calendar);

//  A backfill (DESIGN §13, docs/operations.md "Backfill"): the planned
//  fire times of job_id in [from_time, to_time], made one run each (trigger
//  type BACKFILL, schedule_time the instant) at most per_second a second.
//  cursor: the last instant handled (from_time - 1 before the first);
//  total: the instants counted when it was made; made: runs it created;
//  skipped: instants that had their run already (the log's unique (job,
//  schedule time, shard)); state RUNNING, DONE, STOPPED or FAILED (msg
//  says why); by: who started it.  A backfill is in share job_id mod
//  XXL_STORE_SHARES (its driver is that share's holder).
typedef struct {
    int64_t id;
    int64_t job_id;
    int64_t from_time, to_time;
    int64_t per_second;
    int64_t cursor;
    int64_t total, made, skipped;
    char *state;
    char *by;
    char *msg;
    int64_t add_time, update_time;
} xxl_store_backfill_t;

typedef struct _xxl_store_backfills_t {
    //  add: the new id (ids never reused), or -1.  get: 0 and *out
    //  (xxl_store_backfill_free), 1 none, -1.  advance: a RUNNING row whose
    //  cursor is still `was` gets cursor, made, skipped (added to its
    //  own), state and msg (NULL: kept); 1, 0 when it moved meanwhile or is
    //  no longer RUNNING, -1.  stop: a RUNNING row becomes STOPPED; 1, 0
    //  not RUNNING or absent, -1.  encode: the row as a map {id, jobId,
    //  from, to, perSecond, cursor, total, made, skipped, state, by, msg,
    //  addTime, updateTime} (1, 0 absent, -1); encode_page: those of job_id
    //  (0: any), newest first, up to limit, as job_encode_page.
    //  running_ids: ids of RUNNING rows above `after`, ascending, up to max.
    //  made_times: those of the count instants `times` (ascending) that
    //  job_id has a log row planned at, ascending, in `made` (room for
    //  count): the instants that have their run, each looked up by its
    //  (instant, job) in the planned instants' index.
    int64_t (*backfill_add) (xxl_store_t *self, const xxl_store_backfill_t *row);
    int (*backfill_get) (xxl_store_t *self, int64_t id, xxl_store_backfill_t *out);
    int (*backfill_advance) (xxl_store_t *self, int64_t id, int64_t was, int64_t cursor,
                             int64_t made, int64_t skipped, const char *state,
                             const char *msg, int64_t now);
    int (*backfill_stop) (xxl_store_t *self, int64_t id, const char *msg, int64_t now);
    int (*backfill_encode) (xxl_store_t *self, xxl_enc_t *enc, int64_t id);
    int (*backfill_encode_page) (xxl_store_t *self, xxl_enc_t *enc, size_t max_size,
                                 int *truncated, int64_t job_id, int64_t limit);
    int (*backfill_running_ids) (xxl_store_t *self, int64_t after, int64_t *ids, size_t max,
                                 size_t *count);
    int (*backfill_made_times) (xxl_store_t *self, int64_t job_id, const int64_t *times,
                                size_t count, int64_t *made, size_t *made_count);
} xxl_store_backfills_t;

void xxl_store_backfill_free (xxl_store_backfill_t *backfill);

//  The handle every backend's own struct starts with
struct _xxl_store_t {
    const xxl_store_methods_t *methods;
};

//  Opens (creating if needed) the store named by `url` and migrates it: a
//  file path is SQLite's (xxl_store_sqlite.h); a postgresql:// or
//  postgres:// URL is PostgreSQL's (xxl_store_pg.h), whose reason never
//  holds the URL's password.  Returns NULL with a reason in err.  destroy
//  rolls back an open transaction and nulls *self_p.
xxl_store_t *xxl_store_new (const char *url, char *err, size_t errlen);
//  The same, for a side connection (a helper thread's) of a process whose
//  main handle, made by xxl_store_new, keeps the store's upkeep: on
//  SQLite it starts no checkpointer and checkpoints nothing itself; on
//  PostgreSQL its statements may run 10 minutes (statement_timeout).
xxl_store_t *xxl_store_side_new (const char *url, char *err, size_t errlen);
void xxl_store_destroy (xxl_store_t **self_p);
//  url as it may be logged (a PostgreSQL URL's passwords as ***), in buf
const char *xxl_store_describe (const char *url, char *buf, size_t len);

//  For the backends: their error lines.  A cause (the error's text) is
//  written at most once per XXL_STORE_LOG_MS; the next line of it says how
//  many were left out.  The last XXL_STORE_LOG_CAUSES causes are
//  remembered, so that causes that alternate (a store that is down fails
//  each statement with a reason of its own) are each limited.
#define XXL_STORE_LOG_MS 10000
#define XXL_STORE_LOG_CAUSES 16
typedef struct {
    char cause [512];
    int64_t at;                         //  zclock_mono of its last line (0: never)
    uint64_t suppressed;                //  lines left out since
} xxl_store_logged_t;
//  (sql/xxl_store_sql.c, below the backends that call it)
void xxl_store_log_error (xxl_store_logged_t *logged, const char *error);

void xxl_group_free (xxl_group_t *group);
void xxl_job_free (xxl_job_t *job);
void xxl_log_free (xxl_log_t *log);
//  (sql/xxl_store_sql_flows.c, at the bottom of the store)
void xxl_workflow_free (xxl_workflow_t *workflow);
void xxl_workflow_run_free (xxl_workflow_run_t *run);
void xxl_workflow_rows_free (xxl_workflow_row_t **rows, size_t count);

#define XXL_STORE_WAL_MIB_MAX 65536
#define XXL_GLUE_KEEP 30

//  The calls, one per method: xxl_store_NAME (store, ...) is
//  store->methods->NAME (store, ...)
#define XXL_STORE_CALL(name) (self->methods->name)
static inline const char *xxl_store_error (xxl_store_t *self) { return XXL_STORE_CALL (error) (self); }
static inline int xxl_store_schema_version (xxl_store_t *self) { return XXL_STORE_CALL (schema_version) (self); }
static inline int xxl_store_begin (xxl_store_t *self) { return XXL_STORE_CALL (begin) (self); }
static inline int xxl_store_commit (xxl_store_t *self) { return XXL_STORE_CALL (commit) (self); }
static inline int xxl_store_rollback (xxl_store_t *self) { return XXL_STORE_CALL (rollback) (self); }
static inline int xxl_store_in_txn (xxl_store_t *self) { return XXL_STORE_CALL (in_txn) (self); }
static inline int64_t xxl_store_data_version (xxl_store_t *self) { return XXL_STORE_CALL (data_version) (self); }
static inline void xxl_store_set_wal_size (xxl_store_t *self, int mib) { XXL_STORE_CALL (wal_set_size) (self, mib); }
static inline int xxl_store_wal_due (xxl_store_t *self) { return XXL_STORE_CALL (wal_due) (self); }
static inline int xxl_store_wal_restart (xxl_store_t *self) { return XXL_STORE_CALL (wal_restart) (self); }

static inline int64_t xxl_store_group_add (xxl_store_t *self, const xxl_group_t *g) { return XXL_STORE_CALL (group_add) (self, g); }
static inline int xxl_store_group_update (xxl_store_t *self, const xxl_group_t *g) { return XXL_STORE_CALL (group_update) (self, g); }
static inline int xxl_store_group_rm (xxl_store_t *self, int64_t id) { return XXL_STORE_CALL (group_rm) (self, id); }
static inline int xxl_store_group_find (xxl_store_t *self, const char *key, xxl_group_t *g) { return XXL_STORE_CALL (group_find) (self, key, g); }
static inline int xxl_store_group_load (xxl_store_t *self, int64_t id, xxl_group_t *g) { return XXL_STORE_CALL (group_load) (self, id, g); }
static inline int64_t xxl_store_group_jobs (xxl_store_t *self, int64_t id) { return XXL_STORE_CALL (group_jobs) (self, id); }
static inline int xxl_store_group_job_ids (xxl_store_t *self, int64_t id, int64_t after, int64_t *ids, size_t max, size_t *count) { return XXL_STORE_CALL (group_job_ids) (self, id, after, ids, max, count); }
static inline int xxl_store_groups_refresh (xxl_store_t *self, int64_t now) { return XXL_STORE_CALL (groups_refresh) (self, now); }
static inline int xxl_store_group_refresh_app (xxl_store_t *self, const char *app, int64_t now) { return XXL_STORE_CALL (group_refresh_app) (self, app, now); }
static inline int xxl_store_group_encode_all (xxl_store_t *self, xxl_enc_t *enc) { return XXL_STORE_CALL (group_encode_all) (self, enc); }

static inline int64_t xxl_store_job_add (xxl_store_t *self, const xxl_job_t *job) { return XXL_STORE_CALL (job_add) (self, job); }
static inline int xxl_store_job_save (xxl_store_t *self, const xxl_job_t *job) { return XXL_STORE_CALL (job_save) (self, job); }
static inline int xxl_store_job_rm (xxl_store_t *self, int64_t id) { return XXL_STORE_CALL (job_rm) (self, id); }
static inline int64_t xxl_store_job_rm_logs (xxl_store_t *self, int64_t id) { return XXL_STORE_CALL (job_rm_logs) (self, id); }
static inline int xxl_store_job_unchild (xxl_store_t *self, int64_t child) { return XXL_STORE_CALL (job_unchild) (self, child); }
static inline int xxl_store_job_load (xxl_store_t *self, int64_t id, xxl_job_t *job) { return XXL_STORE_CALL (job_load) (self, id, job); }
static inline int xxl_store_job_exists (xxl_store_t *self, int64_t id) { return XXL_STORE_CALL (job_exists) (self, id); }
static inline char *xxl_store_job_children (xxl_store_t *self, int64_t id) { return XXL_STORE_CALL (job_children) (self, id); }
static inline char *xxl_store_log_job_children (xxl_store_t *self, int64_t log_id) { return XXL_STORE_CALL (log_job_children) (self, log_id); }
static inline int xxl_store_jobs_have_children (xxl_store_t *self) { return XXL_STORE_CALL (jobs_have_children) (self); }
static inline int xxl_store_job_set_times (xxl_store_t *self, int64_t id, int64_t last, int64_t next) { return XXL_STORE_CALL (job_set_times) (self, id, last, next); }
static inline int xxl_store_job_halt (xxl_store_t *self, int64_t id, int64_t last) { return XXL_STORE_CALL (job_halt) (self, id, last); }
static inline int xxl_store_job_due (xxl_store_t *self, int64_t before, xxl_store_due_t *rows, size_t max, size_t *count) { return XXL_STORE_CALL (job_due) (self, before, rows, max, count); }
static inline int xxl_store_job_marked_ids (xxl_store_t *self, int64_t mark, int64_t after, int64_t *ids, size_t max, size_t *count) { return XXL_STORE_CALL (job_marked_ids) (self, mark, after, ids, max, count); }
static inline int xxl_store_job_delay_resume (xxl_store_t *self, int64_t log_id, int64_t now, int64_t mark) { return XXL_STORE_CALL (job_delay_resume) (self, log_id, now, mark); }
static inline int xxl_store_job_encode (xxl_store_t *self, xxl_enc_t *enc, int64_t id) { return XXL_STORE_CALL (job_encode) (self, enc, id); }
//  (a filter with groups needs a table of version 10, which honours them)
#define XXL_STORE_GROUPS_OK(f) (!(f)->groups || self->methods->version >= 10)
static inline int xxl_store_job_encode_page (xxl_store_t *self, xxl_enc_t *enc, size_t max_size, int *truncated, const xxl_store_job_filter_t *f) { return XXL_STORE_GROUPS_OK (f)? XXL_STORE_CALL (job_encode_page) (self, enc, max_size, truncated, f): -1; }
static inline int64_t xxl_store_job_count (xxl_store_t *self, const xxl_store_job_filter_t *f) { return XXL_STORE_GROUPS_OK (f)? XXL_STORE_CALL (job_count) (self, f): -1; }

static inline int xxl_store_glue_add (xxl_store_t *self, int64_t job_id, const char *type, const char *source, const char *remark, int64_t now) { return XXL_STORE_CALL (glue_add) (self, job_id, type, source, remark, now); }
static inline int64_t xxl_store_glue_last (xxl_store_t *self, int64_t job_id) { return XXL_STORE_CALL (glue_last) (self, job_id); }
static inline int xxl_store_glue_exists (xxl_store_t *self, int64_t job_id, int64_t version) { return XXL_STORE_CALL (glue_exists) (self, job_id, version); }
static inline int xxl_store_glue_get (xxl_store_t *self, int64_t job_id, int64_t version, char **type, char **source) { return XXL_STORE_CALL (glue_get) (self, job_id, version, type, source); }
static inline int xxl_store_glue_encode (xxl_store_t *self, xxl_enc_t *enc, int64_t job_id, int64_t version) { return XXL_STORE_CALL (glue_encode) (self, enc, job_id, version); }
static inline int xxl_store_glue_encode_page (xxl_store_t *self, xxl_enc_t *enc, size_t max_size, int *truncated, int64_t job_id, int64_t limit, int64_t offset) { return XXL_STORE_CALL (glue_encode_page) (self, enc, max_size, truncated, job_id, limit, offset); }
static inline int64_t xxl_store_glue_count (xxl_store_t *self, int64_t job_id) { return XXL_STORE_CALL (glue_count) (self, job_id); }

static inline int xxl_store_log_add (xxl_store_t *self, xxl_log_t *log) { return XXL_STORE_CALL (log_add) (self, log); }
static inline int64_t xxl_store_log_next_id (xxl_store_t *self) { return XXL_STORE_CALL (log_next_id) (self); }
static inline int xxl_store_log_ids_past (xxl_store_t *self, int64_t id, int64_t from, int64_t *was, int64_t *now) { return XXL_STORE_CALL (log_ids_past) (self, id, from, was, now); }
static inline int xxl_store_log_load (xxl_store_t *self, int64_t id, xxl_log_t *log) { return XXL_STORE_CALL (log_load) (self, id, log); }
static inline int64_t xxl_store_log_job_id (xxl_store_t *self, int64_t log_id) { return XXL_STORE_CALL (log_job_id) (self, log_id); }
static inline int xxl_store_log_trigger_done (xxl_store_t *self, int64_t log_id, int code, const char *address, const char *append) { return XXL_STORE_CALL (log_trigger_done) (self, log_id, code, address, append); }
static inline int xxl_store_log_handle_done (xxl_store_t *self, int64_t log_id, int64_t handle_time, int code, const char *msg) { return XXL_STORE_CALL (log_handle_done) (self, log_id, handle_time, code, msg); }
static inline char *xxl_store_registry_apps (xxl_store_t *self, const char *address, int64_t since) { return XXL_STORE_CALL (registry_apps) (self, address, since); }
static inline int xxl_store_log_handle_done_by (xxl_store_t *self, int64_t log_id, const char *address, int64_t handle_time, int code, const char *msg, int64_t trigger_time) { return XXL_STORE_CALL (log_handle_done_by) (self, log_id, address, handle_time, code, msg, trigger_time); }
static inline int
xxl_store_log_handle_done_many (xxl_store_t *self, const xxl_store_done_t *items, size_t count,
                                int *done)
{
    if (self->methods->size > offsetof (xxl_store_methods_t, log_handle_done_many)
    &&  self->methods->log_handle_done_many)
        return self->methods->log_handle_done_many (self, items, count, done);
    for (size_t i = 0; i < count; i++) {
        done [i] = xxl_store_log_handle_done_by (self, items [i].log_id, items [i].address,
                                                 items [i].handle_time, items [i].code,
                                                 items [i].msg, items [i].trigger_time);
        if (done [i] < 0) {
            for (size_t j = i + 1; j < count; j++)
                done [j] = -1;
            return -1;
        }
    }
    return 0;
}
static inline int xxl_store_log_handle_done_at (xxl_store_t *self, int64_t log_id, int64_t handle_time, int code, const char *msg, int64_t trigger_time) { return XXL_STORE_CALL (log_handle_done_at) (self, log_id, handle_time, code, msg, trigger_time); }
static inline int xxl_store_log_accept (xxl_store_t *self, int64_t log_id, int64_t stamp) { return XXL_STORE_CALL (log_accept) (self, log_id, stamp); }
static inline int xxl_store_log_stamp (xxl_store_t *self, int64_t log_id, int64_t stamp) { return XXL_STORE_CALL (log_stamp) (self, log_id, stamp); }
static inline int xxl_store_log_route (xxl_store_t *self, int64_t log_id, int64_t stamp, const char *address, const char *section) { return XXL_STORE_CALL (log_route) (self, log_id, stamp, address, section); }
static inline int xxl_store_log_plan_route (xxl_store_t *self, int64_t log_id, const char *address, const char *section) { return XXL_STORE_CALL (log_plan_route) (self, log_id, address, section); }
static inline int xxl_store_log_unroute (xxl_store_t *self, int64_t log_id, const char *section, int unfinished) { return XXL_STORE_CALL (log_unroute) (self, log_id, section, unfinished); }
static inline int xxl_store_log_retime (xxl_store_t *self, int64_t log_id, int64_t trigger_time) { return XXL_STORE_CALL (log_retime) (self, log_id, trigger_time); }
static inline int xxl_store_log_trigger_end (xxl_store_t *self, int64_t log_id, int code, int64_t presumed, const char *text, int64_t stamp, const char *last) { return XXL_STORE_CALL (log_trigger_end) (self, log_id, code, presumed, text, stamp, last); }
static inline int xxl_store_log_append_trigger_msg (xxl_store_t *self, int64_t log_id, const char *text) { return XXL_STORE_CALL (log_append_trigger_msg) (self, log_id, text); }
static inline int xxl_store_log_append_handle_msg (xxl_store_t *self, int64_t log_id, const char *text) { return XXL_STORE_CALL (log_append_handle_msg) (self, log_id, text); }
static inline int xxl_store_log_set_shard (xxl_store_t *self, int64_t log_id, const char *shard) { return XXL_STORE_CALL (log_set_shard) (self, log_id, shard); }
static inline int xxl_store_log_copy_shard (xxl_store_t *self, int64_t id, int64_t src, const char *shard, int64_t stamp) { return XXL_STORE_CALL (log_copy_shard) (self, id, src, shard, stamp); }
static inline int xxl_store_log_drop_unsent (xxl_store_t *self, int64_t log_id) { return XXL_STORE_CALL (log_drop_unsent) (self, log_id); }
static inline int xxl_store_job_drop_plans (xxl_store_t *self, int64_t job_id, int64_t now) { return XXL_STORE_CALL (job_drop_plans) (self, job_id, now); }
static inline int64_t xxl_store_log_plan_time (xxl_store_t *self, int64_t log_id) { return XXL_STORE_CALL (log_plan_time) (self, log_id); }
static inline int xxl_store_log_fail_unsent (xxl_store_t *self, int64_t log_id, int code, const char *why) { return XXL_STORE_CALL (log_fail_unsent) (self, log_id, code, why); }
static inline int xxl_store_log_set_alarm (xxl_store_t *self, int64_t log_id, int status, const char *report) { return XXL_STORE_CALL (log_set_alarm) (self, log_id, status, report); }
static inline int xxl_store_log_alarm_claim (xxl_store_t *self, int64_t log_id) { return XXL_STORE_CALL (log_alarm_claim) (self, log_id); }
static inline int xxl_store_log_unsent_ids (xxl_store_t *self, int64_t after, int64_t *ids, size_t max, size_t *count) { return XXL_STORE_CALL (log_unsent_ids) (self, after, ids, max, count); }
static inline int xxl_store_log_unanswered_ids (xxl_store_t *self, int64_t before, int64_t *ids, size_t max, size_t *count) { return XXL_STORE_CALL (log_unanswered_ids) (self, before, ids, max, count); }
static inline int xxl_store_log_failed_ids (xxl_store_t *self, int64_t *ids, size_t max, size_t *count) { return XXL_STORE_CALL (log_failed_ids) (self, ids, max, count); }
static inline int xxl_store_log_claimed_ids (xxl_store_t *self, int64_t after, int64_t *ids, size_t max, size_t *count) { return XXL_STORE_CALL (log_claimed_ids) (self, after, ids, max, count); }
static inline int xxl_store_log_lost_ids (xxl_store_t *self, int64_t before, int64_t *ids, size_t max, size_t *count) { return XXL_STORE_CALL (log_lost_ids) (self, before, ids, max, count); }

static inline int xxl_store_fired_get (xxl_store_t *self, int64_t *until, int64_t *sent) { return XXL_STORE_CALL (fired_get) (self, until, sent); }
static inline int xxl_store_fired_raise_until (xxl_store_t *self, int64_t until) { return XXL_STORE_CALL (fired_raise_until) (self, until); }
static inline int xxl_store_fired_raise_sent (xxl_store_t *self, int64_t sent) { return XXL_STORE_CALL (fired_raise_sent) (self, sent); }

static inline int xxl_store_recover_stamp_fired (xxl_store_t *self) { return XXL_STORE_CALL (recover_stamp_fired) (self); }
static inline int xxl_store_recover_stamp_due (xxl_store_t *self, int64_t now) { return XXL_STORE_CALL (recover_stamp_due) (self, now); }
static inline int xxl_store_recover_late_jobs (xxl_store_t *self, int64_t before, int64_t *ids, size_t max, size_t *count) { return XXL_STORE_CALL (recover_late_jobs) (self, before, ids, max, count); }
static inline int64_t xxl_store_recover_late_last (xxl_store_t *self, int64_t job_id, int64_t before) { return XXL_STORE_CALL (recover_late_last) (self, job_id, before); }
static inline int xxl_store_recover_misfire (xxl_store_t *self, int64_t log_id) { return XXL_STORE_CALL (recover_misfire) (self, log_id); }
static inline int xxl_store_recover_drop_late (xxl_store_t *self, int64_t job_id, int64_t before, int64_t keep) { return XXL_STORE_CALL (recover_drop_late) (self, job_id, before, keep); }
static inline int xxl_store_log_clear_address (xxl_store_t *self, int64_t log_id) { return XXL_STORE_CALL (log_clear_address) (self, log_id); }

static inline int xxl_store_log_encode (xxl_store_t *self, xxl_enc_t *enc, int64_t id) { return XXL_STORE_CALL (log_encode) (self, enc, id); }
static inline int xxl_store_log_encode_page (xxl_store_t *self, xxl_enc_t *enc, size_t max_size, int *truncated, const xxl_store_log_filter_t *f) { return XXL_STORE_GROUPS_OK (f)? XXL_STORE_CALL (log_encode_page) (self, enc, max_size, truncated, f): -1; }
static inline int64_t xxl_store_log_delete (xxl_store_t *self, int64_t job_id, int64_t before, int64_t below, int64_t limit) { return XXL_STORE_CALL (log_delete) (self, job_id, before, below, limit); }
static inline int64_t xxl_store_log_id_at_rank (xxl_store_t *self, int64_t job_id, int64_t rank) { return XXL_STORE_CALL (log_id_at_rank) (self, job_id, rank); }

static inline int xxl_store_registry_beat (xxl_store_t *self, const char *app, const char *address, int64_t now) { return XXL_STORE_CALL (registry_beat) (self, app, address, now); }
static inline int xxl_store_registry_remove (xxl_store_t *self, const char *app, const char *address) { return XXL_STORE_CALL (registry_remove) (self, app, address); }
static inline int xxl_store_registry_expire (xxl_store_t *self, int64_t dead_before) { return XXL_STORE_CALL (registry_expire) (self, dead_before); }
static inline char *xxl_store_registry_alive (xxl_store_t *self, int64_t window_ms) { return XXL_STORE_CALL (registry_alive) (self, window_ms); }
static inline int64_t xxl_store_registry_newest (xxl_store_t *self) { return XXL_STORE_CALL (registry_newest) (self); }
static inline int xxl_store_job_delay_shift (xxl_store_t *self, uint64_t mask, int64_t step, int64_t never) { return XXL_STORE_CALL (job_delay_shift) (self, mask, step, never); }

static inline int xxl_store_report_refresh (xxl_store_t *self, int64_t from, int64_t to, int64_t now) { return XXL_STORE_CALL (report_refresh) (self, from, to, now); }
static inline int xxl_store_report_totals (xxl_store_t *self, xxl_store_totals_t *t) { return XXL_STORE_CALL (report_totals) (self, t); }
static inline int xxl_store_report_encode_days (xxl_store_t *self, xxl_enc_t *enc, int days) { return XXL_STORE_CALL (report_encode_days) (self, enc, days); }

static inline int xxl_store_audit_add (xxl_store_t *self, const xxl_audit_t *row) { return XXL_STORE_CALL (audit_add) (self, row); }
static inline int xxl_store_audit_encode_page (xxl_store_t *self, xxl_enc_t *enc, size_t max_size, int *truncated, int64_t before, int64_t limit) { return XXL_STORE_CALL (audit_encode_page) (self, enc, max_size, truncated, before, limit); }
static inline int64_t xxl_store_audit_delete (xxl_store_t *self, int64_t before, int64_t limit) { return XXL_STORE_CALL (audit_delete) (self, before, limit); }

static inline int xxl_store_lease_list (xxl_store_t *self, xxl_lease_t *rows) { return XXL_STORE_CALL (lease_list) (self, rows); }
static inline int xxl_store_lease_take (xxl_store_t *self, int share, const char *node, int64_t epoch, int64_t expires) { return XXL_STORE_CALL (lease_take) (self, share, node, epoch, expires); }
static inline int xxl_store_lease_renew (xxl_store_t *self, int share, const char *node, int64_t epoch, int64_t expires) { return XXL_STORE_CALL (lease_renew) (self, share, node, epoch, expires); }
static inline int xxl_store_lease_release (xxl_store_t *self, int share, const char *node, int64_t epoch, int64_t now) { return XXL_STORE_CALL (lease_release) (self, share, node, epoch, now); }
static inline int xxl_store_lease_fired (xxl_store_t *self, uint64_t mask, int64_t until, int64_t sent) { return XXL_STORE_CALL (lease_fired) (self, mask, until, sent); }
static inline int xxl_store_node_beat (xxl_store_t *self, const char *node, int64_t now) { return XXL_STORE_CALL (node_beat) (self, node, now); }
static inline int64_t xxl_store_node_count (xxl_store_t *self, int64_t since) { return XXL_STORE_CALL (node_count) (self, since); }
static inline int64_t xxl_store_clock_now (xxl_store_t *self) { return XXL_STORE_CALL (clock_now) (self); }
static inline int xxl_store_log_lost_ids_after (xxl_store_t *self, int64_t before, int64_t after, int64_t *ids, size_t max, size_t *count) { return XXL_STORE_CALL (log_lost_ids_after) (self, before, after, ids, max, count); }
static inline int xxl_store_job_due_in (xxl_store_t *self, uint64_t mask, int64_t before, xxl_store_due_t *rows, size_t max, size_t *count) { return XXL_STORE_CALL (job_due_in) (self, mask, before, rows, max, count); }
static inline int xxl_store_log_unsent_in (xxl_store_t *self, uint64_t mask, int64_t after, int64_t *ids, size_t max, size_t *count) { return XXL_STORE_CALL (log_unsent_in) (self, mask, after, ids, max, count); }
static inline int64_t xxl_store_job_rm_logs_some (xxl_store_t *self, int64_t id, int64_t limit) { return XXL_STORE_CALL (job_rm_logs_some) (self, id, limit); }
static inline int xxl_store_report_count (xxl_store_t *self, int64_t from, int64_t to, int64_t *running, int64_t *suc, int64_t *fail) { return XXL_STORE_CALL (report_count) (self, from, to, running, suc, fail); }
static inline int xxl_store_report_set (xxl_store_t *self, int64_t day, int64_t running, int64_t suc, int64_t fail, int64_t now) { return XXL_STORE_CALL (report_set) (self, day, running, suc, fail, now); }
static inline int xxl_store_log_open_ids_at (xxl_store_t *self, const char *address, int64_t after, int64_t *ids, size_t max, size_t *count) { return XXL_STORE_CALL (log_open_ids_at) (self, address, after, ids, max, count); }
static inline int xxl_store_recover_stamp_fired_in (xxl_store_t *self, uint64_t mask) { return XXL_STORE_CALL (recover_stamp_fired_in) (self, mask); }
static inline int xxl_store_recover_stamp_due_in (xxl_store_t *self, uint64_t mask, int64_t now) { return XXL_STORE_CALL (recover_stamp_due_in) (self, mask, now); }
static inline int xxl_store_log_set_trigger_msg (xxl_store_t *self, int64_t log_id, const char *text) { return XXL_STORE_CALL (log_set_trigger_msg) (self, log_id, text); }
static inline int xxl_store_recover_late_jobs_in (xxl_store_t *self, uint64_t mask, int64_t before, int64_t *ids, size_t max, size_t *count) { return XXL_STORE_CALL (recover_late_jobs_in) (self, mask, before, ids, max, count); }
static inline int
xxl_store_report_count_groups (xxl_store_t *self, int64_t from, int64_t to,
                               xxl_store_group_runs_t **rows, size_t *count)
{
    *rows = NULL;
    *count = 0;
    if (self->methods->size <= offsetof (xxl_store_methods_t, report_count_groups))
        return -1;
    return self->methods->report_count_groups (self, from, to, rows, count);
}

//  Version 12 (a table of an older version has none: -1)
#define XXL_STORE_V12(name) (self->methods->size > offsetof (xxl_store_methods_t, name) && self->methods->name)
static inline int64_t xxl_store_workflow_add (xxl_store_t *self, const xxl_workflow_t *w) { return XXL_STORE_V12 (workflow_add)? self->methods->workflow_add (self, w): -1; }
static inline int xxl_store_workflow_save (xxl_store_t *self, const xxl_workflow_t *w) { return XXL_STORE_V12 (workflow_save)? self->methods->workflow_save (self, w): -1; }
static inline int xxl_store_workflow_rm (xxl_store_t *self, int64_t id) { return XXL_STORE_V12 (workflow_rm)? self->methods->workflow_rm (self, id): -1; }
static inline int xxl_store_workflow_load (xxl_store_t *self, int64_t id, xxl_workflow_t *w) { return XXL_STORE_V12 (workflow_load)? self->methods->workflow_load (self, id, w): -1; }
static inline int xxl_store_workflow_encode (xxl_store_t *self, xxl_enc_t *enc, int64_t id) { return XXL_STORE_V12 (workflow_encode)? self->methods->workflow_encode (self, enc, id): -1; }
static inline int xxl_store_workflow_encode_page (xxl_store_t *self, xxl_enc_t *enc, size_t max_size, int *truncated, int64_t limit, int64_t offset) { return XXL_STORE_V12 (workflow_encode_page)? self->methods->workflow_encode_page (self, enc, max_size, truncated, limit, offset): -1; }
static inline int64_t xxl_store_workflow_count (xxl_store_t *self) { return XXL_STORE_V12 (workflow_count)? self->methods->workflow_count (self): -1; }
static inline int xxl_store_workflow_using_job (xxl_store_t *self, int64_t job, int64_t *ids, size_t max, size_t *count) { return XXL_STORE_V12 (workflow_using_job)? self->methods->workflow_using_job (self, job, ids, max, count): -1; }
static inline int xxl_store_workflow_due (xxl_store_t *self, uint64_t mask, int64_t before, int64_t *ids, size_t max, size_t *count) { return XXL_STORE_V12 (workflow_due)? self->methods->workflow_due (self, mask, before, ids, max, count): -1; }
static inline int xxl_store_workflow_set_next (xxl_store_t *self, int64_t id, int64_t next) { return XXL_STORE_V12 (workflow_set_next)? self->methods->workflow_set_next (self, id, next): -1; }
static inline int64_t xxl_store_workflow_run_add (xxl_store_t *self, const xxl_workflow_run_t *run) { return XXL_STORE_V12 (workflow_run_add)? self->methods->workflow_run_add (self, run): -1; }
static inline int xxl_store_workflow_run_load (xxl_store_t *self, int64_t id, xxl_workflow_run_t *run) { return XXL_STORE_V12 (workflow_run_load)? self->methods->workflow_run_load (self, id, run): -1; }
static inline int xxl_store_workflow_run_set (xxl_store_t *self, int64_t id, const char *status, int64_t end_time, const char *killed) { return XXL_STORE_V12 (workflow_run_set)? self->methods->workflow_run_set (self, id, status, end_time, killed): -1; }
static inline int xxl_store_workflow_run_ids (xxl_store_t *self, uint64_t mask, int64_t after, int64_t *ids, size_t max, size_t *count) { return XXL_STORE_V12 (workflow_run_ids)? self->methods->workflow_run_ids (self, mask, after, ids, max, count): -1; }
static inline int xxl_store_workflow_runs_running (xxl_store_t *self) { return XXL_STORE_V12 (workflow_runs_running)? self->methods->workflow_runs_running (self): -1; }
static inline int xxl_store_workflow_run_encode (xxl_store_t *self, xxl_enc_t *enc, int64_t id) { return XXL_STORE_V12 (workflow_run_encode)? self->methods->workflow_run_encode (self, enc, id): -1; }
static inline int xxl_store_workflow_run_encode_page (xxl_store_t *self, xxl_enc_t *enc, size_t max_size, int *truncated, int64_t workflow_id, int64_t limit) { return XXL_STORE_V12 (workflow_run_encode_page)? self->methods->workflow_run_encode_page (self, enc, max_size, truncated, workflow_id, limit): -1; }
static inline int xxl_store_workflow_run_rows (xxl_store_t *self, int64_t run_id, xxl_workflow_row_t **rows, size_t *count) { return XXL_STORE_V12 (workflow_run_rows)? self->methods->workflow_run_rows (self, run_id, rows, count): -1; }
static inline int xxl_store_log_flow_mark (xxl_store_t *self, int64_t log_id, int64_t run_id, const char *node, int64_t attempt) { return XXL_STORE_V12 (log_flow_mark)? self->methods->log_flow_mark (self, log_id, run_id, node, attempt): -1; }
static inline int64_t xxl_store_log_flow_run (xxl_store_t *self, int64_t log_id) { return XXL_STORE_V12 (log_flow_run)? self->methods->log_flow_run (self, log_id): -1; }
static inline int xxl_store_workflow_ids (xxl_store_t *self, int64_t after, int64_t *ids, size_t max, size_t *count) { return XXL_STORE_V12 (workflow_ids)? self->methods->workflow_ids (self, after, ids, max, count): -1; }
static inline int xxl_store_workflow_calendar_ids (xxl_store_t *self, const char *name, int64_t after, int64_t *ids, size_t max, size_t *count) { *count = 0; return XXL_STORE_V12 (workflow_calendar_ids)? self->methods->workflow_calendar_ids (self, name, after, ids, max, count): -1; }
//  Version 13 (a table of an older version: -1)
static inline int xxl_store_job_slot_ids (xxl_store_t *self, int64_t after, int64_t *ids, size_t max, size_t *count) { return XXL_STORE_V12 (job_slot_ids)? self->methods->job_slot_ids (self, after, ids, max, count): -1; }
static inline int xxl_store_log_slot_ids (xxl_store_t *self, int64_t job_id, int running, int64_t before, int64_t *ids, size_t max, size_t *count) { return XXL_STORE_V12 (log_slot_ids)? self->methods->log_slot_ids (self, job_id, running, before, ids, max, count): -1; }
//  Version 15 (a table of an older version: -1)
static inline int xxl_store_workflow_run_encode_below (xxl_store_t *self, xxl_enc_t *enc, size_t max_size, int *truncated, int64_t workflow_id, int64_t before, int64_t limit) { return XXL_STORE_V12 (workflow_run_encode_below)? self->methods->workflow_run_encode_below (self, enc, max_size, truncated, workflow_id, before, limit): -1; }
static inline int xxl_store_backfill_encode_below (xxl_store_t *self, xxl_enc_t *enc, size_t max_size, int *truncated, int64_t job_id, int64_t before, int64_t limit) { return XXL_STORE_V12 (backfill_encode_below)? self->methods->backfill_encode_below (self, enc, max_size, truncated, job_id, before, limit): -1; }
//  Version 16 (a table of an older version: session_add, _find, _expire,
//  no session remembered)
static inline int xxl_store_session_add_remember (xxl_store_t *self, const char *id, const char *user, const char *csrf, int64_t now, int remember) { return XXL_STORE_V12 (session_add_remember)? self->methods->session_add_remember (self, id, user, csrf, now, remember): self->methods->accounts->session_add (self, id, user, csrf, now); }
static inline int xxl_store_session_find_remember (xxl_store_t *self, const char *id, int64_t seen_after, int64_t remembered_after, char **user, char **csrf, int64_t *seen, int *remember) { *remember = 0; return XXL_STORE_V12 (session_find_remember)? self->methods->session_find_remember (self, id, seen_after, remembered_after, user, csrf, seen, remember): self->methods->accounts->session_find (self, id, seen_after, user, csrf, seen); }
static inline int64_t xxl_store_session_expire_remember (xxl_store_t *self, int64_t before, int64_t remembered_before) { return XXL_STORE_V12 (session_expire_remember)? self->methods->session_expire_remember (self, before, remembered_before): self->methods->accounts->session_expire (self, before); }
//  Version 17 (a table of an older version: -1)
static inline int xxl_store_user_add_first (xxl_store_t *self, const xxl_account_t *user) { return XXL_STORE_V12 (user_add_first)? self->methods->user_add_first (self, user): -1; }
//  Version 18 (a table of an older version: -1)
static inline int xxl_store_report_encode_range (xxl_store_t *self, xxl_enc_t *enc, int64_t from, int64_t to, int64_t limit) { return XXL_STORE_V12 (report_encode_range)? self->methods->report_encode_range (self, enc, from, to, limit): -1; }
//  Version 19 (a table of an older version: -1)
static inline int xxl_store_log_open_ids_all (xxl_store_t *self, int64_t cursor [2], int64_t *ids, char **addresses, size_t max, size_t *count) { *count = 0; return XXL_STORE_V12 (log_open_ids_all)? self->methods->log_open_ids_all (self, cursor, ids, addresses, max, count): -1; }
//  Version 20 (a table of an older version: -1)
static inline int xxl_store_log_insert_trigger_msg (xxl_store_t *self, int64_t log_id, int64_t before, const char *text) { return XXL_STORE_V12 (log_insert_trigger_msg)? self->methods->log_insert_trigger_msg (self, log_id, before, text): -1; }
#undef XXL_STORE_V12

#define XXL_ACCOUNTS_CALL(name) (self->methods->accounts->name)
static inline int xxl_store_user_add (xxl_store_t *self, const xxl_account_t *user) { return XXL_ACCOUNTS_CALL (user_add) (self, user); }
static inline int xxl_store_user_update (xxl_store_t *self, const char *name, const char *hash, const char *role, const char *apps) { return XXL_ACCOUNTS_CALL (user_update) (self, name, hash, role, apps); }
static inline int xxl_store_user_get (xxl_store_t *self, const char *name, xxl_account_t *out) { return XXL_ACCOUNTS_CALL (user_get) (self, name, out); }
static inline int xxl_store_user_rm (xxl_store_t *self, const char *name) { return XXL_ACCOUNTS_CALL (user_rm) (self, name); }
static inline int xxl_store_user_encode_all (xxl_store_t *self, xxl_enc_t *enc) { return XXL_ACCOUNTS_CALL (user_encode_all) (self, enc); }
static inline int xxl_store_token_add (xxl_store_t *self, const xxl_account_t *token) { return XXL_ACCOUNTS_CALL (token_add) (self, token); }
static inline int xxl_store_token_find (xxl_store_t *self, const char *hash, xxl_account_t *out) { return XXL_ACCOUNTS_CALL (token_find) (self, hash, out); }
static inline int xxl_store_token_rm (xxl_store_t *self, const char *name) { return XXL_ACCOUNTS_CALL (token_rm) (self, name); }
static inline int xxl_store_token_encode_all (xxl_store_t *self, xxl_enc_t *enc) { return XXL_ACCOUNTS_CALL (token_encode_all) (self, enc); }
static inline int xxl_store_session_add (xxl_store_t *self, const char *id, const char *user, const char *csrf, int64_t now) { return XXL_ACCOUNTS_CALL (session_add) (self, id, user, csrf, now); }
static inline int xxl_store_session_find (xxl_store_t *self, const char *id, int64_t seen_after, char **user, char **csrf, int64_t *seen) { return XXL_ACCOUNTS_CALL (session_find) (self, id, seen_after, user, csrf, seen); }
static inline int xxl_store_session_touch (xxl_store_t *self, const char *id, int64_t now) { return XXL_ACCOUNTS_CALL (session_touch) (self, id, now); }
static inline int xxl_store_session_rm (xxl_store_t *self, const char *id) { return XXL_ACCOUNTS_CALL (session_rm) (self, id); }
static inline int xxl_store_user_sessions_rm (xxl_store_t *self, const char *user) { return XXL_ACCOUNTS_CALL (user_sessions_rm) (self, user); }
static inline int64_t xxl_store_session_expire (xxl_store_t *self, int64_t before) { return XXL_ACCOUNTS_CALL (session_expire) (self, before); }
#undef XXL_ACCOUNTS_CALL

//  Calendars: a table of an older version has none (-1, NULL)
#define XXL_CALENDARS_OK \
    (self->methods->size > offsetof (xxl_store_methods_t, calendars) && self->methods->calendars)
#define XXL_CALENDARS_CALL(name) (self->methods->calendars->name)
static inline int xxl_store_calendar_put (xxl_store_t *self, const xxl_store_calendar_t *row, int replace) { return XXL_CALENDARS_OK? XXL_CALENDARS_CALL (calendar_put) (self, row, replace): -1; }
static inline int xxl_store_calendar_get (xxl_store_t *self, const char *name, xxl_store_calendar_t *out) { memset (out, 0, sizeof *out); return XXL_CALENDARS_OK? XXL_CALENDARS_CALL (calendar_get) (self, name, out): -1; }
static inline int xxl_store_calendar_rm (xxl_store_t *self, const char *name) { return XXL_CALENDARS_OK? XXL_CALENDARS_CALL (calendar_rm) (self, name): -1; }
static inline int xxl_store_calendar_encode (xxl_store_t *self, xxl_enc_t *enc, const char *name) { return XXL_CALENDARS_OK? XXL_CALENDARS_CALL (calendar_encode) (self, enc, name): -1; }
static inline int xxl_store_calendar_encode_all (xxl_store_t *self, xxl_enc_t *enc) { return XXL_CALENDARS_OK? XXL_CALENDARS_CALL (calendar_encode_all) (self, enc): -1; }
static inline int xxl_store_calendar_job_ids (xxl_store_t *self, const char *name, int64_t after, int64_t *ids, size_t max, size_t *count) { *count = 0; return XXL_CALENDARS_OK? XXL_CALENDARS_CALL (calendar_job_ids) (self, name, after, ids, max, count): -1; }
#undef XXL_CALENDARS_CALL
#undef XXL_CALENDARS_OK

//  Backfills: a table of an older version has none (-1)
#define XXL_BACKFILLS_OK \
    (self->methods->size > offsetof (xxl_store_methods_t, backfills) && self->methods->backfills)
#define XXL_BACKFILLS_CALL(name) (self->methods->backfills->name)
static inline int64_t xxl_store_backfill_add (xxl_store_t *self, const xxl_store_backfill_t *row) { return XXL_BACKFILLS_OK? XXL_BACKFILLS_CALL (backfill_add) (self, row): -1; }
static inline int xxl_store_backfill_get (xxl_store_t *self, int64_t id, xxl_store_backfill_t *out) { memset (out, 0, sizeof *out); return XXL_BACKFILLS_OK? XXL_BACKFILLS_CALL (backfill_get) (self, id, out): -1; }
static inline int xxl_store_backfill_advance (xxl_store_t *self, int64_t id, int64_t was, int64_t cursor, int64_t made, int64_t skipped, const char *state, const char *msg, int64_t now) { return XXL_BACKFILLS_OK? XXL_BACKFILLS_CALL (backfill_advance) (self, id, was, cursor, made, skipped, state, msg, now): -1; }
static inline int xxl_store_backfill_stop (xxl_store_t *self, int64_t id, const char *msg, int64_t now) { return XXL_BACKFILLS_OK? XXL_BACKFILLS_CALL (backfill_stop) (self, id, msg, now): -1; }
static inline int xxl_store_backfill_encode (xxl_store_t *self, xxl_enc_t *enc, int64_t id) { return XXL_BACKFILLS_OK? XXL_BACKFILLS_CALL (backfill_encode) (self, enc, id): -1; }
static inline int xxl_store_backfill_encode_page (xxl_store_t *self, xxl_enc_t *enc, size_t max_size, int *truncated, int64_t job_id, int64_t limit) { return XXL_BACKFILLS_OK? XXL_BACKFILLS_CALL (backfill_encode_page) (self, enc, max_size, truncated, job_id, limit): -1; }
static inline int xxl_store_backfill_running_ids (xxl_store_t *self, int64_t after, int64_t *ids, size_t max, size_t *count) { *count = 0; return XXL_BACKFILLS_OK? XXL_BACKFILLS_CALL (backfill_running_ids) (self, after, ids, max, count): -1; }
static inline int xxl_store_backfill_made_times (xxl_store_t *self, int64_t job_id, const int64_t *times, size_t count, int64_t *made, size_t *made_count) { *made_count = 0; return XXL_BACKFILLS_OK? XXL_BACKFILLS_CALL (backfill_made_times) (self, job_id, times, count, made, made_count): -1; }
#undef XXL_BACKFILLS_CALL
#undef XXL_BACKFILLS_OK
#undef XXL_STORE_GROUPS_OK
#undef XXL_STORE_CALL

#endif
