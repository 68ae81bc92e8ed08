/*  xxl_services.h -- the engine's periodic and follow-up work.

    Owns child jobs' reading, the fail monitor (retries with their
    backoff, alarms), the lost-run monitor, the daily report and its
    waiting REPORTs, log retention and the alarm senders' results.
    MUST: run only on the actor's thread, between turns' reads.
    MUST NOT: be called by lower modules (runs, planner, lease): they
    announce a run's end (engine_run_ended), which calls in here.
    Called by: the actor (engine_services_run), the api (REPORT, LOG_CLEAR).
*/

#ifndef XXL_SERVICES_H_INCLUDED
#define XXL_SERVICES_H_INCLUDED

#include "xxl_engine_base.h"
#include "xxl_events.h"

//  The periodic services (xxl_services.c), by index in service_next
enum { XXL_SERVICE_FAIL, XXL_SERVICE_LOST, XXL_SERVICE_REPORT, XXL_SERVICE_RETENTION,
       XXL_SERVICE_KEYS, XXL_SERVICES };

typedef struct {
    infolog_t log_lease_wait;           //  lost runs waiting for a run lease
    int64_t lost_cursor;                //  the lost-run monitor's last id read
    xxl_reporter_t *reporter;           //  counts the daily report off this thread (NULL:
                                        //  counted here, an in-memory store)
    zlistx_t *report_waiting;           //  report_waiter_t: REPORTs waiting for its count
    bool any_children;                  //  some job has child jobs, as read
    int64_t children_until;             //  monotonic ms: read it again from then
    zlistx_t *alarm_backlog;            //  log ids whose alarm waits for queue room
    int64_t service_next [XXL_SERVICES];   //  monotonic ms of each service's next run
} services_t;

//  xxl_services.c
char *engine_trigger_children (server_t *self, int64_t log_id);
//  Handlers of the engine's events: JOB_CHANGED (child lists read again)
//  and RUN_ENDED (a success fires the job's children, named in its
//  handleMsg)
void engine_services_on_job (server_t *self, const xxl_event_t *event);
void engine_services_on_run (server_t *self, const xxl_event_t *event);
void engine_alarm_again (server_t *self, int64_t log_id);
//  At start: alarms of failed runs not sent before the last stop
void engine_recover_alarms (server_t *self);
//  Their state, freed at the actor's stop
void engine_services_stop (server_t *self);
void engine_alarm_results (server_t *self);
void engine_fail_monitor (server_t *self);
void engine_lost_monitor (server_t *self);
void engine_report_refresh (server_t *self);
void engine_report_turn (server_t *self);
void engine_report_stop (server_t *self);
bool engine_report_wait (server_t *self, request_t *request, const xxl_report_range_t *range);
void engine_report_encode (server_t *self, const xxl_report_range_t *range);
//  The periodic services (xxl_services.c): set their first runs at start;
//  run those due (not while stopping); the soonest next run
void engine_services_start (server_t *self, int64_t now);
void engine_services_run (server_t *self, int64_t now);
int64_t engine_services_wake (server_t *self);
int64_t engine_log_delete (server_t *self, int64_t job_id, int64_t before, int64_t below,
                           int64_t limit);
void engine_retention (server_t *self);


#endif
