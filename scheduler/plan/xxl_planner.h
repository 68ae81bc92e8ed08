/*  xxl_planner.h -- the planner: which jobs fire when, and their fires.

    Owns the timer of planned triggers in the pre-read window, the plans
    (rows written ahead, routed when prepared) and the job snapshots they
    share, the prebuilt batches of each instant, the fired_until mark of
    the held shares, FIX_DELAY jobs waiting for their run, and recovery's
    asks.
        xxl_planner.c   scan, pre-read window, timer, prepared fires,
                        misfires, recovery
        xxl_job.c       a job's fields from a request, and its next fire
    MUST: plan only jobs of shares the lease module holds; never send a
    fire whose row a failed turn may have lost.
    MUST NOT: write to agents except through runs.
    Called by: the actor (scan, fire), the api (engine_job_changed).
*/

#ifndef XXL_PLANNER_H_INCLUDED
#define XXL_PLANNER_H_INCLUDED

#include "xxl_runs.h"
#include "xxl_events.h"

//  The job snapshots cached before idle ones are dropped (planner.snaps)
#define XXL_SNAPS_CAP 65536

//  The prebuilt batches of one instant: one timer entry (log id 0) stands
//  for all of them, so the instant itself only stamps and sends
typedef struct {
    int64_t when;                       //  planned fire time (hash key)
    zlistx_t *batches;                  //  run_batch_t, prebuilt (owned)
} instant_t;


//  A recovered row that may have left just before the previous owner of
//  its share stopped, now past the pre-read window: its agent is asked
//  (engine_recover)
typedef struct {
    int64_t log_id;                     //  (hash key)
    int64_t job_id;
    int64_t deadline;                   //  monotonic ms: past it, counted as sent
                                        //  (then: forgotten)
    bool counted;                       //  counted as sent, its agent away: still
                                        //  asked should it come back
} xxl_ask_t;

//  A job as the planner last read it, shared by its planned triggers
typedef struct {
    xxl_job_t job;
    xxl_schedule_t *schedule;           //  the job's schedule compiled (NULL: invalid)
    int refs;
    int64_t read_at;                    //  monotonic ms it was known current
    bool cancelled;                     //  the job stopped or changed: its plans
                                        //  are void
    zlistx_t *plan_ids;                 //  log ids of its plans not sent yet
    struct _xxl_calendar_t *calendar;   //  the job's calendar compiled (NULL: none)
    int64_t calendar_time;              //  its row's update_time
} snap_t;

//  A planned trigger on the timer heap: what its dispatch needs, so that
//  firing it reads nothing from the store
typedef struct _plan_t {
    int64_t log_id;
    snap_t *snap;
    int shard_index;
    int shard_total;
    bool sharded;                       //  the row carries executorShardingParam
    //  Prepared (routed at planning, the row written with its address):
    //  the RUN leaves at the instant with no store access (engine_fire)
    char *address;                      //  NULL: not prepared
    char *note;                         //  the router's text
    unsigned char *tp;                  //  TriggerParam from engine_encode_tp
    size_t tp_size;
    uint64_t turn;                      //  the turn that wrote the row
    void *handle;                       //  in snap->plan_ids
    run_batch_t *prebuilt;              //  the instant's batch that holds it
    size_t slot;                        //  its item there
} plan_t;

typedef struct {
    xxl_timer_t *timer;                 //  planned triggers in the pre-read window
    int timer_fd;                       //  timerfd woken at the next fire (-1: none),
    int64_t timer_armed;                //  armed for this wall-clock ms (-1: not)
    zhashx_t *plans;                    //  log id → plan_t of rows on the timer
    zlistx_t *fire_batches;             //  run_batch_t of prepared fires (engine_fire)
    zhashx_t *instants;                 //  fire time → instant_t (owned, no destructor)
    zlistx_t *taking;                   //  prebuilt batches sent this engine_fire whose
                                        //  plans they now own (not owned)
    zlistx_t *fire_later;               //  log ids due that need the store to go
    zlistx_t *turn_plans;               //  log ids of plans made this turn
    zlistx_t *unprepared;               //  log ids of plans made unprepared
    int64_t fired_until;                //  the held shares' fired_until as committed:
                                        //  rows planned up to then may have been sent
    int64_t fired_want;                 //  the same, written this turn
    int64_t fired_sent;                 //  their fired_sent as committed
    int64_t sent_max;                   //  latest planned time sent with no store
                                        //  access and not yet committed as
                                        //  fired_sent (this turn's, and those
                                        //  of turns whose commit failed)
    uint64_t foreign_turn;              //  the last turn that saw another connection's
                                        //  commit: plans made before it may be void
    zhashx_t *snaps;                    //  job id → snap_t of jobs due soon
    size_t snaps_limit;                 //  its size that makes the next put drop the
                                        //  idle ones (at least XXL_SNAPS_CAP)
    zhashx_t *asks;                     //  log id → xxl_ask_t (owned)
    zhashx_t *ask_jobs;                 //  job id → int64_t [3]: job id, whether a
                                        //  refused ask may be its MISFIRE (1) or
                                        //  not (0; -1 not judged yet), asks left
    int64_t next_scan;                  //  monotonic ms of the next planner scan
    zhashx_t *waiting;                  //  FIX_DELAY job ids waiting for their run's end
    int64_t delay_shift;                //  wall-clock steps (ms) not yet applied to the
                                        //  FIX_DELAY jobs' next times (engine_plan_on_step)
    int64_t delay_shifted;              //  applied this turn (back to delay_shift if its
                                        //  commit fails)
    int64_t back_until;                 //  wall ms where the clock stood before its
                                        //  latest step back (engine_plan_forget)
    int64_t backfill_at;                //  monotonic ms of the next backfill tick
    int64_t backfill_after;             //  the running backfills read from above this id
    infolog_t log_misfire;              //  DO_NOTHING misfires, one line a fire
} planner_t;

void engine_snap_release (snap_t **snap_p);
//  xxl_plans.c: a job's snapshot goes once nothing planned refers to it
//  (engine_snap_settle) and it is not due soon (engine_snap_idle)
void engine_snap_settle (server_t *self, int64_t job_id);
bool engine_snap_idle (server_t *self, const snap_t *snap, int64_t now);
//  The planner's state, made at the actor's start and freed at its stop
void engine_plan_start (server_t *self);
void engine_plan_stop (server_t *self);
//  Whether a row is planned and not sent yet, or asked about by recovery
//  (runs' planned and asked)
bool engine_plan_holds (server_t *self, int64_t log_id);
bool engine_plan_asks (server_t *self, int64_t log_id);
void engine_snap_destructor (void **item);
void engine_instant_destroy (instant_t **self_p);
void engine_plan_destructor (void **item);

//  A step of the wall clock (ms, + forward): the timer's delays keep
//  their distance in time, and so do the FIX_DELAY jobs' waits written on
//  the wall clock (moved by engine_plan_step_apply at the next turn's start)
void engine_plan_on_step (server_t *self, int64_t step);
//  At a turn's start, before its fires: a step's moves of the FIX_DELAY
//  jobs' next times and planned fires, in the turn's transaction (given
//  back to the next turn if its commit fails; dropped when no share is
//  held)
void engine_plan_step_apply (server_t *self);

//  xxl_job.c
//  Whether children (a child_jobid list) lead back to job_id: 1 with the
//  path, else 0
int engine_child_cycle (server_t *self, int64_t job_id, const char *children, char *path,
                        size_t pathlen, int depth);
int engine_job_read (server_t *self, request_t *request, xxl_job_t *job, int is_add);
const char *engine_iso_time (int64_t ms, const char *tz, char *buf, size_t buflen);
int64_t engine_next_time (const xxl_job_t *job, int64_t after, char *why, size_t whylen);
int64_t engine_schedule_next (xxl_schedule_t *schedule, const char *tz, int64_t after, char *why,
                              size_t whylen);
void engine_job_defaults (xxl_job_t *job);
int engine_job_from_request (server_t *self, request_t *request, xxl_job_t *job);

//  xxl_calendars.c: a job's calendar (the file states the contracts).
//  job_next_times: up to count fire times strictly after `after` that the
//  job's calendar does not exclude, into times; how many, or -1 when
//  none (why: the schedule ended or is invalid, the calendar is absent or
//  excludes every time).  job_next: the first of them, or -1.
struct _xxl_calendar_t;
int engine_calendar_load (server_t *self, const char *name, const char *job_tz,
                          struct _xxl_calendar_t **calendar, int64_t *update_time,
                          char *why, size_t whylen);
int64_t engine_calendar_next (struct _xxl_calendar_t *calendar, const char *name,
                              xxl_schedule_t *schedule, const char *tz, int64_t after,
                              char *why, size_t whylen);
int engine_job_next_times (server_t *self, const xxl_job_t *job, int64_t after,
                           int64_t *times, int count, char *why, size_t whylen);
int64_t engine_job_next (server_t *self, const xxl_job_t *job, int64_t after, char *why,
                         size_t whylen);
int engine_snap_calendar (server_t *self, snap_t *snap, char *why, size_t whylen);
int engine_job_calendar_check (server_t *self, const xxl_job_t *job, char *why, size_t whylen);

//  xxl_planner.c
void engine_waiting_add (server_t *self, int64_t job_id);
void engine_waiting_load (server_t *self);
void engine_plan_forget (server_t *self, int64_t job_id);
void engine_fix_delay_release (server_t *self, int64_t log_id, int64_t now);
//  Handlers of the engine's events: JOB_CHANGED (plans forgotten, the next
//  scan at once) and RUN_ENDED (a FIX_DELAY job waiting for it released)
void engine_plan_on_job (server_t *self, const xxl_event_t *event);
void engine_plan_on_run (server_t *self, const xxl_event_t *event);
//  RUN_AGAIN (the row on the timer), LONG_WORK (due fires go),
//  ASK_ANSWERED (recovery's asks), SHARES_TAKEN (their jobs recovered),
//  SHARES_LOST (their plans dropped)
void engine_plan_on_again (server_t *self, const xxl_event_t *event);
void engine_plan_on_long_work (server_t *self, const xxl_event_t *event);
void engine_plan_on_ask (server_t *self, const xxl_event_t *event);
void engine_plan_on_taken (server_t *self, const xxl_event_t *event);
void engine_plan_on_lost (server_t *self, const xxl_event_t *event);
//  Adds a prepared fire to an agent's batch of this instant
void engine_fire_queue (server_t *self, plan_t **plan_p, int64_t stamp, const void *rid,
                        size_t rid_size, int max);
void engine_plan_prepare (server_t *self, int budget);
snap_t *engine_snap_fresh (server_t *self, int64_t id, int *rc);
void engine_plan_scan (server_t *self);
//  The planner's window (ms): planner/ahead, at most planner/preread
int64_t engine_plan_ahead (server_t *self);
void engine_fired_cover (server_t *self, int64_t until);
bool engine_instant_add (server_t *self, plan_t *plan, int64_t fire_at);
void engine_fire (server_t *self);
void engine_fire_check (server_t *self);
void engine_timer_arm (server_t *self, int64_t when);
bool engine_fire_near (server_t *self);
bool engine_fire_within (server_t *self, int64_t ms);
void engine_fire_wait (server_t *self);
void engine_plan_due (server_t *self);
void engine_recover (server_t *self, uint64_t mask, const xxl_lease_t *leases);
//  xxl_backfill.c (DESIGN §13).  start: a backfill of job over [from, to]
//  at per_second, started by `by` (in the turn's transaction): its id, or
//  0 with the code (400 refused, 500 store) in *code and the reason in
//  why.  run: the running backfills of the held shares go on (the actor's
//  turn, not near a fire); wake: when run is next due (monotonic ms).
int64_t engine_backfill_start (server_t *self, const xxl_job_t *job, int64_t from, int64_t to,
                               int64_t per_second, const char *by, int *code, char *why,
                               size_t whylen);
void engine_backfill_run (server_t *self, int64_t mono);
int64_t engine_backfill_wake (server_t *self);
void engine_ask_answer (server_t *self, pending_t *pending, int code, const char *msg);


#endif
