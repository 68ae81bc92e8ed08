/*  xxl_events.h -- how a lower module tells the higher ones what happened.

    Two events, each published by the module where it happens and handled
    by the modules that care, which the actor subscribes at its start:
      XXL_EVENT_JOB_CHANGED   a job was added, changed, started, stopped or
                              removed, or a group changed (the api)
      XXL_EVENT_RUN_ENDED     a run has its end: a result was written, or
                              its trigger failed (runs, the planner's
                              recovery, the lost-run monitor)
    A publisher names no subscriber: runs never calls the planner to
    release a FIX_DELAY job, nor the services to fire child jobs; the api
    never writes the planner's fields.  Handlers run at once, on the actor's
    thread, in the turn of the change, in the order they were subscribed.
    MUST: a handler may read and write its own module's state and call
    lower modules; it MUST NOT publish an event (no nesting) and MUST NOT
    assume another handler ran before it, except by subscription order.
    Owns: the table of handlers (fixed size; subscribing past it asserts).
*/

#ifndef XXL_EVENTS_H_INCLUDED
#define XXL_EVENTS_H_INCLUDED

#include "xxl_engine_base.h"

typedef enum {
    XXL_EVENT_JOB_CHANGED,
    XXL_EVENT_RUN_ENDED,
    XXL_EVENTS
} xxl_event_kind_t;

//  What changed (XXL_EVENT_JOB_CHANGED), as bits of `what`
#define XXL_CHANGED_PLANS    1          //  the job's plans are void: forget them
#define XXL_CHANGED_SCHEDULE 2          //  scan for due jobs at the next turn
#define XXL_CHANGED_CHILDREN 4          //  child lists may have changed
#define XXL_CHANGED_GROUPS   8          //  a group's addresses or app may have changed

//  How a run ended (XXL_EVENT_RUN_ENDED)
typedef enum {
    XXL_END_RESULT,                     //  its result was written (handle code)
    XXL_END_TRIGGER                     //  its trigger failed: it never ran
} xxl_end_t;

typedef struct {
    xxl_event_kind_t kind;
    int64_t job_id;                     //  JOB_CHANGED: 0 when a group changed
    unsigned what;                      //  JOB_CHANGED: XXL_CHANGED_* bits
    int64_t log_id;                     //  RUN_ENDED
    xxl_end_t end;                      //  RUN_ENDED
    int code;                           //  RUN_ENDED: the handle or trigger code
    int64_t now;                        //  RUN_ENDED: wall-clock ms of the end
} xxl_event_t;

typedef void (xxl_event_fn) (server_t *self, const xxl_event_t *event);

#define XXL_EVENT_HANDLERS 8            //  handlers per kind

typedef struct {
    xxl_event_fn *handlers [XXL_EVENTS][XXL_EVENT_HANDLERS];
    size_t count [XXL_EVENTS];
    bool publishing;                    //  a publication is running (no nesting)
} events_t;

//  Adds fn to the handlers of kind, after those already there
void engine_subscribe (events_t *events, xxl_event_kind_t kind, xxl_event_fn *fn);
//  Calls each handler of event->kind with self and event, in order
void engine_publish (server_t *self, events_t *events, const xxl_event_t *event);

#endif
