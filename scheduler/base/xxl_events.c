/*  xxl_events.c -- the engine's events: a table of handlers per kind.
    Contract in xxl_events.h. */

#include "xxl_events.h"

void
engine_subscribe (events_t *events, xxl_event_kind_t kind, xxl_event_fn *fn)
{
    assert (events);
    assert (kind < XXL_EVENTS);
    assert (fn);
    assert (events->count [kind] < XXL_EVENT_HANDLERS);
    events->handlers [kind][events->count [kind]++] = fn;
}

void
engine_publish (server_t *self, events_t *events, const xxl_event_t *event)
{
    assert (events);
    assert (event && event->kind < XXL_EVENTS);
    for (size_t i = 0; i < events->count [event->kind]; i++)
        events->handlers [event->kind][i] (self, event);
}
