/*  xxl_engine.h -- the actor's state, composed of its modules'.

    The engine is one actor (xxl_server.c, its loop and turn) whose state
    is server_t: the sockets, the store and the registry it holds, and one
    state struct per module, each defined and owned by its module's header:
        outbox      engine/xxl_outbox.h     what leaves after a commit
        api_state   api/xxl_requests.h      requests, access, audit
        runs        runs/xxl_runs.h         triggers, RUNs, agents' answers
        planner     plan/xxl_planner.h      scan, timer, fires, misfires
        leases      lease/xxl_lease.h       the shares this scheduler plans
        services    services/xxl_services.h retries, monitors, alarms, reports
        flows       flows/xxl_flows.h       workflow runs and schedules
    A module reads and writes its own struct; another module's state is
    reached through that module's functions.  Off the actor's thread:
    http/ (libmicrohttpd's threads) serves HTTP and sends each REST call to
    the actor's inproc `http` socket; it reads the counters the actor
    publishes (xxl_metrics.h) about once a second.
    Functions named engine_* are the modules' faces; s_* are static.
*/

#ifndef XXL_ENGINE_H_INCLUDED
#define XXL_ENGINE_H_INCLUDED

#include "xxl_engine_base.h"
#include "xxl_events.h"
#include "xxl_outbox.h"
#include "xxl_runs.h"
#include "xxl_planner.h"
#include "xxl_lease.h"
#include "xxl_services.h"
#include "xxl_flows.h"
#include "xxl_access.h"
#include "xxl_audit.h"
#include "xxl_requests.h"

struct _server_t {
    xxl_server_config_t config;
    zsock_t *pipe;
    zsock_t *api;
    zsock_t *agents;
    xxl_store_t *store;
    xxl_registry_t *registry;
    xxl_alarms_t *alarms;               //  alarm plugins and their sender thread
    xxl_alarm_host_t alarm_host;
    xxl_enc_t *enc;
    zsock_t *probes;                    //  inproc ROUTER: pool workers' probes
    zsock_t *routed;                    //  inproc PULL: pool workers' results
    int64_t commit_us;                  //  recent commits' time (a decaying max)
    uint64_t turn;                      //  transactions begun
    int64_t data_version;               //  xxl_store_data_version at the last turn
    ratelog_t log_begin;                //  turns whose begin failed
    int64_t begin_failed_at;            //  the last turn's begin failed then (zclock_mono), or 0
    xxl_heard_t *heard;                 //  agents' last REGISTER and run lease
    int64_t warm_until;                 //  monotonic ms: agents still reconnecting
    bool stopping;                      //  $TERM: finishing in-flight RUNs
    int64_t stop_deadline;
    uint64_t next_id;                   //  (engine_request_id without getrandom)
    int64_t clock_base;                 //  engine_clock - zclock_mono
    int64_t wall_base;                  //  wall - mono as last seen (a step
                                        //  of the wall clock changes it)
    bool wall_stepped;                  //  forward, since the last registry check
    int64_t wall_step_mono;             //  monotonic ms of the last step (0: none):
                                        //  the store's lead is known again once a
                                        //  lease round has read it since
    int64_t next_registry_check;
    int64_t next_liveness;              //  monotonic ms of the next engine_runs_liveness
    zhashx_t *apps_changed;             //  app names whose addresses changed (a set)
    int64_t next_groups;                //  monotonic ms of the next s_groups_refresh
    int64_t next_pending_check;
    int64_t stall_mono;                 //  monotonic ms the loop last woke
    bool terminated;
    char *commit_logged;                //  the last commit failure logged, and when
    int64_t commit_logged_at;
    uint64_t commit_suppressed;
    char hostname [256];
    zcert_t *cert;                      //  our certificate: CURVE on (NULL: off)
    zactor_t *auth;                     //  the ZAP handler (zauth) on the keys folder
    zactor_t *watch [2];                //  the api's and agents' refused keys, logged
    xxl_keys_t *keys;                   //  who holds each key let in (NULL: no keys)
    zsock_t *http;                      //  inproc ROUTER the HTTP threads send to
    xxl_http_t *http_server;            //  NULL: --http none
    xxl_metrics_t metrics;              //  bumped on this thread
    xxl_metrics_box_t *metrics_box;     //  what /metrics reads, published
    int64_t metrics_next;               //  monotonic ms of the next publication
    events_t events;                    //  handlers of each event, as subscribed at start
    unsigned sent;                      //  XXL_SENT_* of the sockets sent on since the
                                        //  last poll (xxl_transport_poll's QUIET)
    //  The modules' own state
    outbox_t outbox;
    access_t access;
    audit_t audit;
    api_state_t api_state;
    runs_t runs;
    planner_t planner;
    leases_t leases;
    services_t services;
    flows_t flows;
};

//  The engine's sockets a turn sent on (server_t.sent): each send must
//  mark its socket, or the poll may sleep through what the send let in
#define XXL_SENT_AGENTS  1
#define XXL_SENT_API     2
#define XXL_SENT_HTTP    4
#define XXL_SENT_PROBES  8

//  xxl_server.c
//  Wall-clock time, epoch ms: what the rows, cron and users see.  It may
//  step (NTP, a VM resumed): no duration is measured on it (the time
//  model, docs/design.md)
static inline int64_t
engine_now (void)
{
    return zclock_time ();
}

//  The store's clock as this scheduler estimates it (its wall clock plus
//  the store's lead, read at each lease round): the registry rows every
//  scheduler of the store writes and reads are stamped on it
static inline int64_t
engine_store_now (server_t *self)
{
    return zclock_time () + self->leases.store_ahead;
}

//  The steady clock, epoch ms: the wall clock at the start, advanced by
//  the monotonic clock since, so it never steps.  RUNs' expireTime and
//  REGISTER's `now` are on it
static inline int64_t
engine_clock (server_t *self)
{
    return zclock_mono () + self->clock_base;
}


//  A job changed (what: XXL_CHANGED_* bits; job_id 0: jobs or groups in
//  general): the planner, the services and runs hear it (xxl_events.h)
static inline void
engine_job_changed (server_t *self, int64_t job_id, unsigned what)
{
    xxl_event_t event = { .kind = XXL_EVENT_JOB_CHANGED, .job_id = job_id, .what = what };
    engine_publish (self, &self->events, &event);
}

//  Run log_id of job job_id (0: not known here) ended (end: a result
//  written, or its trigger failed) with code, at now: metrics, FIX_DELAY
//  and child jobs hear it (xxl_events.h)
static inline void
engine_run_ended_job (server_t *self, int64_t log_id, int64_t job_id, xxl_end_t end, int code,
                      int64_t now)
{
    xxl_event_t event = { .kind = XXL_EVENT_RUN_ENDED, .log_id = log_id, .job_id = job_id,
                          .end = end, .code = code, .now = now };
    engine_publish (self, &self->events, &event);
}

//  The same, its job not known here (those who need it read the row)
static inline void
engine_run_ended (server_t *self, int64_t log_id, xxl_end_t end, int code, int64_t now)
{
    engine_run_ended_job (self, log_id, 0, end, code, now);
}

//  Row log_id is to be dispatched again delay ms after now (the planner's
//  timer takes it)
static inline void
engine_run_again (server_t *self, int64_t log_id, int64_t now, int64_t delay)
{
    xxl_event_t event = { .kind = XXL_EVENT_RUN_AGAIN, .log_id = log_id, .now = now,
                          .delay = delay };
    engine_publish (self, &self->events, &event);
}

//  A loop over many items is under way: what cannot wait goes now
static inline void
engine_long_work (server_t *self)
{
    xxl_event_t event = { .kind = XXL_EVENT_LONG_WORK };
    engine_publish (self, &self->events, &event);
}

//  The agent's answer (code 0: none came) to a RUN recovery sent to ask
static inline void
engine_ask_answered (server_t *self, pending_t *pending, int code, const char *msg)
{
    xxl_event_t event = { .kind = XXL_EVENT_ASK_ANSWERED, .pending = pending, .code = code,
                          .msg = msg };
    engine_publish (self, &self->events, &event);
}

#endif
