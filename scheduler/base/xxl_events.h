/*  xxl_events.h -- how a lower module tells the higher ones what happened.

    Each event is published by the module where it happens and handled by
    the modules above it that care, which the actor subscribes at its start:
      XXL_EVENT_JOB_CHANGED   a job was added, changed, started, stopped or
                              removed, or a group changed (the api)
      XXL_EVENT_RUN_ENDED     a run has its end: a result was written, or
                              its trigger failed (runs, the planner's
                              recovery, the lost-run monitor)
      XXL_EVENT_RUN_AGAIN     a row is to be dispatched again after `delay`
                              ms: its agent refused it busy, its connection
                              was gone, or it waits for its group's agents
                              (runs); the planner's timer takes it
      XXL_EVENT_LONG_WORK     a loop over many items is under way in this
                              turn: what cannot wait (the planner's due
                              fires) may go now (runs)
      XXL_EVENT_ASK_ANSWERED  an agent answered (or never did: code 0) a
                              RUN that recovery sent to ask about a row
                              (runs, for the planner's recovery)
      XXL_EVENT_SHARES_TAKEN  this scheduler took the shares in `mask`
                              (the lease round): their jobs are recovered
      XXL_EVENT_SHARES_LOST   the shares in `mask` are no longer held: the
                              plans of their jobs go (`*count` adds them)
    A publisher names no subscriber: runs never calls the planner to
    release a FIX_DELAY job, nor the services to fire child jobs; the api
    never writes the planner's fields; the lease never touches plans.
    Handlers run at once, on the actor's thread, in the turn of the change,
    in the order they were subscribed.  A handler may publish in turn (a
    child job whose trigger fails ends a run within a run's end): that
    publication runs to its end before the outer one goes on.
    MUST: a handler reads and writes its own module's state and calls
    lower modules only; it MUST NOT assume another handler ran before it,
    except by subscription order.
    Owns: the table of handlers (fixed size; subscribing past it asserts).
*/

#ifndef XXL_EVENTS_H_INCLUDED
#define XXL_EVENTS_H_INCLUDED

#include "xxl_engine_base.h"

typedef enum {
    XXL_EVENT_JOB_CHANGED,
    XXL_EVENT_RUN_ENDED,
    XXL_EVENT_RUN_AGAIN,
    XXL_EVENT_LONG_WORK,
    XXL_EVENT_ASK_ANSWERED,
    XXL_EVENT_SHARES_TAKEN,
    XXL_EVENT_SHARES_LOST,
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
    int64_t job_id;                     //  JOB_CHANGED: 0 when a group changed;
                                        //  RUN_ENDED: the run's job when known
                                        //  without a store read, else 0
    unsigned what;                      //  JOB_CHANGED: XXL_CHANGED_* bits
    int64_t log_id;                     //  RUN_ENDED, RUN_AGAIN
    xxl_end_t end;                      //  RUN_ENDED
    int code;                           //  RUN_ENDED: the handle or trigger code;
                                        //  ASK_ANSWERED: the answer's (0: none)
    int64_t now;                        //  RUN_ENDED, RUN_AGAIN: wall-clock ms
    int64_t delay;                      //  RUN_AGAIN: ms after now
    const char *msg;                    //  ASK_ANSWERED: the answer's text, or NULL
    struct _pending_t *pending;         //  ASK_ANSWERED: the ask (runs keep it)
    uint64_t mask;                      //  SHARES_*: bit s for share s
    const xxl_lease_t *leases;          //  SHARES_TAKEN: the leases as read
    size_t *count;                      //  SHARES_LOST: plans dropped are added
    bool deaf;                          //  SHARES_LOST: given back deaf (xxl_lease_deaf),
                                        //  still held in this transaction
} xxl_event_t;

typedef void (xxl_event_fn) (server_t *self, const xxl_event_t *event);

#define XXL_EVENT_HANDLERS 8            //  handlers per kind

typedef struct {
    xxl_event_fn *handlers [XXL_EVENTS][XXL_EVENT_HANDLERS];
    size_t count [XXL_EVENTS];
} events_t;

//  Adds fn to the handlers of kind, after those already there
void engine_subscribe (events_t *events, xxl_event_kind_t kind, xxl_event_fn *fn);
//  Calls each handler of event->kind with self and event, in order
void engine_publish (server_t *self, events_t *events, const xxl_event_t *event);

#endif
