/*  xxl_flows.h -- the workflow engine: runs of DAGs of jobs (DESIGN §12,
    docs/workflows.md), on the pure model of scheduler/flow.

    Owns the graphs of the runs in flight (parsed once a definition,
    shared by the runs in flight that started with it, dropped at the
    last one's end), the schedule of the workflows of the shares this scheduler
    holds, and the sweep that recovers runs.
    The store is a run's whole memory: a node is WAITING until its log row
    exists, then RUNNING until that row's result (handleCode 200:
    SUCCESS; any other code, or a failed trigger: FAILURE); the latest
    attempt of a node counts.  SKIPPED is derived (the rules decide it
    again from the same states), KILLED from the run's status and its
    `killed` list.  Advancing a run (s_advance) reads those states, calls
    xxl_flow_step and starts the ready nodes: each start is a log row
    (engine_trigger, trigger type WORKFLOW) marked (run, node, attempt)
    in the same transaction, UNIQUE in the store, so a node starts at
    most once per attempt whatever restarts and takeovers happen; then
    the run's status once no node is WAITING or RUNNING.
    MUST: advance a run only inside the turn's transaction, from stored
    states read after its run row (xxl_store_workflow_run_load locks the
    row until commit on a store that locks rows; SQLite has one writer),
    so that schedulers advancing one run take turns and any scheduler may
    advance any run; the holder of a run's share (workflow id mod 16)
    recovers it and fires its schedule.
    MUST NOT: be called by runs, the planner or the services: a node's
    end reaches it through XXL_EVENT_RUN_ENDED.
    Called by: the actor (events, engine_flows_run), the api.
*/

#ifndef XXL_FLOWS_H_INCLUDED
#define XXL_FLOWS_H_INCLUDED

#include "xxl_engine_base.h"
#include "xxl_events.h"

typedef struct {
    zhashx_t *graphs;                   //  run id -> its graph (a shape held) while in flight
    zhashx_t *shapes;                   //  definition text -> its parsed graph, shared
                                        //  by the runs in flight that started with it
    size_t shape_bytes;                 //  the bytes of the shapes' definitions
    zhashx_t *retries;                  //  run id -> its earliest node retry due later
    int64_t retry_min;                  //  wall ms of the earliest of them (0 none)
    int64_t stack [8];                  //  the runs being advanced now, outermost first
    size_t depth;                       //  (a re-entry into one of them: again)
    bool again;                         //  a node of a run being advanced ended meanwhile
    bool any_running;                   //  some run is RUNNING, as last read
    int64_t running_until;              //  monotonic ms: read it again from then
    int64_t next_due;                   //  monotonic ms of the next look for due workflows
    int64_t next_sweep;                 //  monotonic ms of the next sweep of runs
    int64_t sweep_after;                //  the sweep's cursor (a run id)
    ratelog_t log_errors;               //  store errors while advancing
} flows_t;

#define XXL_FLOWS_DEPTH     8           //  runs advanced within one another, at most
#define XXL_FLOWS_DUE_MS    200         //  due workflows are looked for this often
#define XXL_FLOWS_SWEEP_MS  5000        //  running runs of held shares advanced this often
#define XXL_FLOWS_SWEEP_RUNS 64         //  runs per sweep
#define XXL_FLOWS_MISFIRE_MS 5000       //  a fire later than this is a misfire

//  xxl_flows.c: state at the actor's start and stop; the handlers of
//  RUN_ENDED (a node's row ended: its run goes on) and SHARES_TAKEN (the
//  RUNNING runs of the shares taken are advanced); the periodic work
//  (due workflows fire, running runs of held shares are swept) and when
//  it is next due (monotonic ms)
void engine_flows_start (server_t *self);
void engine_flows_stop (server_t *self);
void engine_flows_on_run (server_t *self, const xxl_event_t *event);
void engine_flows_on_taken (server_t *self, const xxl_event_t *event);
void engine_flows_run (server_t *self, int64_t now);
int64_t engine_flows_wake (server_t *self);
//  After a failed commit: forgets the parsed graphs kept by run id (a run
//  made in the turn is gone, and its id may be made again for another)
void engine_flows_rollback (server_t *self);
//  A step of the wall clock (ms, + forward): the node retries that wait
//  keep their delay's length (their due times, and their failures' end
//  times as the next advances read them, move by the step)
void engine_flows_on_step (server_t *self, int64_t step);

//  The api's calls, each inside the turn's transaction.  trigger: a new
//  run of workflow_id with param (NULL: ""), its roots started; the run
//  id, or 0 with the code (404, 500) in *code and the reason in why.
//  kill and retry: XXL_OK, or the code (404, 409, 500) with the reason.
//  run_encode: WORKFLOW_RUN_SHOW's map of run_id into enc: 1, 0 absent,
//  -1 (why).  next: a workflow's next fire after `after`, 0 when its
//  schedule never fires, -1 with the reason (a bad schedule, a calendar that is absent
//  or excludes every time; an absent or bad calendar whatever the schedule,
//  NONE included); a time its calendar excludes is skipped.
int64_t engine_flow_trigger (server_t *self, int64_t workflow_id, const char *param,
                             const char *trigger_type, int *code, char *why, size_t whylen);
int engine_flow_kill (server_t *self, int64_t run_id, char *why, size_t whylen);
int engine_flow_retry (server_t *self, int64_t run_id, const char *node, char *why,
                       size_t whylen);
int engine_flow_run_encode (server_t *self, xxl_enc_t *enc, int64_t run_id);
int64_t engine_flow_next (server_t *self, const xxl_workflow_t *workflow, int64_t after,
                          char *why, size_t whylen);

#endif
