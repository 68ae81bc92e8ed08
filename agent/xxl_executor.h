/*  xxl_executor.h -- runs the triggers an agent receives.

    XXL-JOB's JobThread/ExecutorBizImpl carried over: one serial queue per
    job id (memory, not a thread: a pool of threads serves the queues, one
    run per job at a time, in order, the queues taking turns, growing
    while runs block), block
    strategies SERIAL_EXECUTION, DISCARD_LATER and COVER_EARLY, timeouts
    (502), kill (500 with the reason, for the running and the queued
    runs), idle queues reaped, a logId accepted once, a run refused "busy:
    ..." when no thread can be had for it (back-pressure).  BEAN handlers run isolated by default in an
    xxl-runner process (a crash fails only that run), or in the agent
    process when the handler or the agent opts in; GLUE scripts run under
    their interpreter in their own process group.  Results come out
    through a pollable fd and xxl_executor_take.  See docs/agent-execution.md.
*/

#ifndef XXL_EXECUTOR_H_INCLUDED
#define XXL_EXECUTOR_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include "xxl_handlers.h"
#include "xxl_journal.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct _xxl_executor_t xxl_executor_t;

//  handleMsg is capped to this many bytes
#define XXL_EXECUTOR_MSG_MAX    15000
//  Runs that may wait for a pool thread once none can be added
#define XXL_EXECUTOR_WAITING_MAX 10000
//  A refusal for back-pressure starts its message with this (the agent
//  answers it XXL_BUSY: the scheduler sends the run again later or elsewhere)
#define XXL_EXECUTOR_BUSY_PREFIX "busy:"
//  The refusal of a logId the journal holds for another run (another job,
//  or a later logDateTime: xxl_journal_check); its printf format (a long
//  long) and a part of it to recognise it by
#define XXL_EXECUTOR_OTHER_RUN_FMT  "logId %lld already used by another run"
#define XXL_EXECUTOR_OTHER_RUN      "already used by another run"
//  Grace between SIGTERM and SIGKILL when a run is killed or times out
#define XXL_EXECUTOR_GRACE_MS   500

//  Glue types, the index of xxl_executor_config_t.interpreters
enum {
    XXL_GLUE_BEAN = 0, XXL_GLUE_SHELL, XXL_GLUE_PYTHON, XXL_GLUE_NODEJS,
    XXL_GLUE_PHP, XXL_GLUE_POWERSHELL, XXL_GLUE_PYTHON2, XXL_GLUE_COUNT
};

typedef struct {
    int64_t job_id, log_id, log_date_time, glue_updatetime;
    const char *handler;          //  executorHandler (BEAN name; ignored for GLUE)
    const char *params;           //  executorParams, may be "" or NULL
    const char *block_strategy;   //  SERIAL_EXECUTION | DISCARD_LATER | COVER_EARLY (NULL: serial)
    const char *glue_type;        //  BEAN | GLUE_SHELL | GLUE_PYTHON | GLUE_PYTHON2 | GLUE_NODEJS
                                  //  | GLUE_PHP | GLUE_POWERSHELL (NULL: BEAN)
    const char *glue_source;      //  script text for GLUE types
    int timeout_s;                //  0 = none
    int shard_index, shard_total; //  broadcastIndex/broadcastTotal
} xxl_trigger_t;                  //  strings borrowed for the call; the executor copies what it keeps

typedef struct {
    const char *logdir;           //  run logs and {logdir}/gluesource/{jobId}_{glueUpdatetime}.{ext}
    int allow_glue;               //  0: refuse every GLUE_* run with a clear message
    int in_process;               //  1: run all BEAN handlers in the agent process
    int idle_reap_s;              //  idle job worker reaped after this (<= 0: 90)
    int log_pack;                 //  1: the log of a short in-process run goes to its
                                  //  day's pack (xxl_runpack.h), not a file of its own
    const char *interpreters [XXL_GLUE_COUNT];
                                  //  per XXL_GLUE_* index (BEAN unused), NULL = defaults
                                  //  (bash, python3, node, php, pwsh, python2); looked up
                                  //  in PATH;
                                  //  a source starting with "#!" runs with the
                                  //  interpreter its first line names
    const char *runner;           //  xxl-runner path; NULL: env XXL_RUNNER, else the
                                  //  compiled-in XXL_RUNNER_PATH, else "xxl-runner" in PATH
    xxl_journal_t *journal;       //  accepted logIds (borrowed, must outlive the
                                  //  executor); NULL: remembered in memory only
    const char *run_marker;       //  NULL, or each run's processes get
                                  //  XXL_AGENT_RUN=MARKER.LOGID (xxl_guard.h)
    int threads_max;              //  pool threads at most (<= 0: sized to the
                                  //  machine, xxl_runpool.c s_threads_auto)
    int waiting_max;              //  runs that wait for a thread once no more can
                                  //  be had, then refused "busy: ..." (0: the
                                  //  default XXL_EXECUTOR_WAITING_MAX; < 0: none)
} xxl_executor_config_t;

typedef struct {
    int64_t log_id, log_date_time;
    int code;
    char *msg;                    //  malloc'd, may be NULL
    int64_t start_time;           //  epoch ms (this host's clock) its handler
                                  //  started; 0: it never started
} xxl_result_t;

//  Creates an executor.  config is copied; handlers is borrowed and must
//  outlive the executor.  Raises RLIMIT_NOFILE to its hard limit.  Returns
//  NULL on failure (no logdir, out of memory).
xxl_executor_t *xxl_executor_new (const xxl_executor_config_t *config, xxl_handlers_t *handlers);

//  Kills all running runs (result 500 "executor stopped [job running,
//  killed]"), fails queued ones, and waits for every worker thread to end
//  (at most 10 s: an in-process handler that ignores cancelled() is left
//  running, with an error log line).  Results stay available to
//  xxl_executor_take, so an agent calls stop, drains results into its
//  spool, then destroys.  Later runs are refused.  Idempotent.
void xxl_executor_stop (xxl_executor_t *self);

//  As xxl_executor_stop, the killed runs failing with reason (NULL:
//  "executor stopped") followed by " [job running, killed]" or " [job not
//  executed, in the job queue, killed.]".
void xxl_executor_stop_why (xxl_executor_t *self, const char *reason);

//  Stops (see above), drops results not taken, frees.  Nulls *self_p.  If
//  runs are still running after stop gave up, the executor is leaked
//  rather than freed under them (the process is about to exit anyway).
void xxl_executor_destroy (xxl_executor_t **self_p);

//  Accepts a trigger (returns 0) or refuses it (-1, with the reason in msg):
//  "job handler [fooJobHandler] not found.", "block strategy effect: Discard
//  Later", "logId 42 already accepted" (accepted in this life or, with a
//  journal, an earlier one: a re-send), "logId 42 already used by another
//  run" (accepted so as another run: XXL_EXECUTOR_OTHER_RUN), "glue type
//  GLUE_PYTHON not allowed on this agent", "glueType[X] is not valid.",
//  and for back-pressure a message that starts XXL_EXECUTOR_BUSY_PREFIX:
//  the run needs a thread (its job
//  has nothing queued or running), the pool is at threads_max or cannot
//  grow, and waiting_max runs already wait for one (nothing of a refused
//  run is kept: the same logId may come again).  A refused run changes
//  nothing: the queue it would replace (changed handler or glue version)
//  or cover (COVER_EARLY) keeps its runs.  An accepted logId is
//  journaled before its run can start: at once (one write) outside a
//  hold, at the hold's release within one.  Queues only; returns within
//  microseconds.
int xxl_executor_run (xxl_executor_t *self, const xxl_trigger_t *trigger, char *msg, size_t msglen);

//  hold 1: the runs that xxl_executor_run accepts are queued but do not
//  start, and their idle workers are not woken; hold 0: their logIds are
//  journaled with one write (xxl_journal_flush), then they may start and
//  their workers are woken, each once.  A batch of runs queued between the
//  two costs one journal write and wakes a job's worker once for all its
//  runs in the batch, not once per run (the first of them waits for the
//  batch to be queued).
void xxl_executor_hold_wakes (xxl_executor_t *self, int hold);

//  Kills the job's running run and fails its queued runs with reason
//  (NULL: "scheduling center kill job."); the job's worker goes away.
//  Returns 0 if something was killed, -1 if nothing ran ("job thread is not
//  running").
int xxl_executor_kill (xxl_executor_t *self, int64_t job_id, const char *reason);
//  Kills the runs of every job as xxl_executor_kill does (reason is
//  followed by " [job running, killed]" or " [job not executed, in the job
//  queue, killed.]"); the executor goes on taking runs.  Returns how many
//  jobs had runs.
size_t xxl_executor_kill_all (xxl_executor_t *self, const char *reason);

//  1 if the job has a run running or queued, else 0.
int xxl_executor_busy (xxl_executor_t *self, int64_t job_id);

//  1 if the run with this logId is queued or running, else 0.
int xxl_executor_running (xxl_executor_t *self, int64_t log_id);

//  As xxl_executor_running, and if the run is running in process with its
//  first log lines still held in memory (see xxl_logsink.h: the log file
//  of an in-process run is made by its first write after the start lines),
//  makes the file now, so that a reader finds what the run logged so far.
int xxl_executor_log_sync (xxl_executor_t *self, int64_t log_id);

//  An fd (eventfd) that polls readable while results are pending.
int xxl_executor_fd (xxl_executor_t *self);

//  Pops one result: 0 and fills result (caller frees result->msg), -1 when
//  none.  Non-blocking, thread-safe.
int xxl_executor_take (xxl_executor_t *self, xxl_result_t *result);

//  Pops up to max results into results (one lock for all), oldest first;
//  returns how many (0 when none).  Caller frees each msg.  Thread-safe.
//  The log of a run whose result is taken is readable (a pack's buffer is
//  written first), so a scheduler told of a result finds its log.
size_t xxl_executor_take_many (xxl_executor_t *self, xxl_result_t *results, size_t max);

//  1 when a run for a job with nothing queued or running would now be
//  refused busy (the pool cannot grow and waiting_max runs wait for a
//  thread), with the reason in msg; else 0.
int xxl_executor_full (xxl_executor_t *self, char *msg, size_t msglen);

//  Job queues known (each job that ran and was not reaped yet).
size_t xxl_executor_jobs (xxl_executor_t *self);

//  Pool threads alive; *peak (if not NULL) gets the most there were.
size_t xxl_executor_threads (xxl_executor_t *self, size_t *peak);

//  Runs currently running (not queued).
size_t xxl_executor_active (xxl_executor_t *self);

//  Runs queued or running.
size_t xxl_executor_pending (xxl_executor_t *self);

#ifdef __cplusplus
}
#endif

#endif
