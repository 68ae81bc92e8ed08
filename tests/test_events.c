/*  test_events.c -- the engine's events (scheduler/base/xxl_events.h):
    handlers run in the order they were subscribed, only for their kind,
    with the event as published.
*/

#include "xxl_events.h"
#include "xxl_test.h"

static char s_trail [64];
static xxl_event_t s_seen;

static void
s_first (server_t *self, const xxl_event_t *event)
{
    (void) self;
    strcat (s_trail, "1");
    s_seen = *event;
}

static void
s_second (server_t *self, const xxl_event_t *event)
{
    (void) self;
    (void) event;
    strcat (s_trail, "2");
}

static events_t *s_events;

//  Publishes a LONG_WORK within a JOB_CHANGED: it runs to its end first
static void
s_nesting (server_t *self, const xxl_event_t *event)
{
    (void) event;
    strcat (s_trail, "(");
    xxl_event_t inner = { .kind = XXL_EVENT_LONG_WORK };
    engine_publish (self, s_events, &inner);
    strcat (s_trail, ")");
}

static void
s_inner (server_t *self, const xxl_event_t *event)
{
    (void) self;
    (void) event;
    strcat (s_trail, "w");
}

static void
s_run (server_t *self, const xxl_event_t *event)
{
    (void) self;
    strcat (s_trail, event->end == XXL_END_RESULT? "R": "T");
}

int
main (void)
{
    events_t events = { 0 };
    //  No handler yet: publishing calls nothing
    xxl_event_t job = { .kind = XXL_EVENT_JOB_CHANGED, .job_id = 7,
                        .what = XXL_CHANGED_PLANS | XXL_CHANGED_CHILDREN };
    engine_publish (NULL, &events, &job);
    XXL_CHECK (strcmp (s_trail, "") == 0);

    engine_subscribe (&events, XXL_EVENT_JOB_CHANGED, s_first);
    engine_subscribe (&events, XXL_EVENT_JOB_CHANGED, s_second);
    engine_subscribe (&events, XXL_EVENT_RUN_ENDED, s_run);
    XXL_CHECK (events.count [XXL_EVENT_JOB_CHANGED] == 2);
    XXL_CHECK (events.count [XXL_EVENT_RUN_ENDED] == 1);

    //  In subscription order, only the handlers of its kind, as published
    engine_publish (NULL, &events, &job);
    XXL_CHECK (strcmp (s_trail, "12") == 0);
    XXL_CHECK (s_seen.job_id == 7);
    XXL_CHECK (s_seen.what == (XXL_CHANGED_PLANS | XXL_CHANGED_CHILDREN));

    xxl_event_t ended = { .kind = XXL_EVENT_RUN_ENDED, .log_id = 9, .end = XXL_END_TRIGGER,
                          .code = 500, .now = 1 };
    engine_publish (NULL, &events, &ended);
    XXL_CHECK (strcmp (s_trail, "12T") == 0);
    ended.end = XXL_END_RESULT;
    engine_publish (NULL, &events, &ended);
    XXL_CHECK (strcmp (s_trail, "12TR") == 0);
    XXL_CHECK (s_seen.kind == XXL_EVENT_JOB_CHANGED);

    //  A handler may publish: the inner publication ends before the outer
    //  one goes on to its next handler
    events_t nested = { 0 };
    s_events = &nested;
    engine_subscribe (&nested, XXL_EVENT_JOB_CHANGED, s_nesting);
    engine_subscribe (&nested, XXL_EVENT_JOB_CHANGED, s_second);
    engine_subscribe (&nested, XXL_EVENT_LONG_WORK, s_inner);
    s_trail [0] = 0;
    engine_publish (NULL, &nested, &job);
    XXL_CHECK (strcmp (s_trail, "(w)2") == 0);
    return xxl_test_done ();
}
