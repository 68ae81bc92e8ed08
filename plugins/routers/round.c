/*  round.c -- the ROUND router: round robin per job.

    As XXL-JOB's ExecutorRouteRound: each job has its own counter.  A job's
    first trigger (and the first after the counter passed 1,000,000, and
    the first after the daily reset) starts the counter at random(100), so
    that jobs do not all start on the first agent; each later trigger adds
    one.  The address is addresses [counter % count].  All counters are
    forgotten every 24 h (host clock).
*/

#include <stdlib.h>
#include <xxl/router.h>
#include "xxl_jobmap.h"

#define S_MAX_COUNT     1000000         //  XXL-JOB restarts the count past this
#define S_START_BOUND   100             //  random start in [0, 100)

static void *
s_init (const xxl_router_host_t *host, const char **error)
{
    (void) host;
    xxl_jobmap_t *map = xxl_jobmap_new (NULL);
    if (!map)
        *error = "out of memory";
    return map;
}

static void
s_destroy (void *state)
{
    xxl_jobmap_t *map = (xxl_jobmap_t *) state;
    xxl_jobmap_destroy (&map);
}

static int
s_round (void *state, const xxl_router_host_t *host, xxl_route_call_t *call)
{
    xxl_jobmap_t *map = (xxl_jobmap_t *) state;
    if (!XXL_ROUTER_HOST_HAS (host, random) || !XXL_ROUTER_HOST_HAS (host, now_ms)) {
        xxl_route_msg (call, "ROUND: the host has no random or clock function");
        return -1;
    }
    int64_t now = host->now_ms ();
    xxl_jobmap_lock (map);
    xxl_jobmap_expire (map, now);
    xxl_jobmap_entry_t *entry = xxl_jobmap_lookup (map, call->job_id);
    int64_t counter;
    if (entry && entry->num <= S_MAX_COUNT)
        counter = ++entry->num;
    else {
        counter = host->random (S_START_BOUND) % S_START_BOUND;
        if (!entry)
            entry = xxl_jobmap_ensure (map, call->job_id);
        if (entry)                      //  out of memory: route, remember nothing
            entry->num = counter;
    }
    xxl_jobmap_unlock (map);
    return (int) ((uint64_t) counter % call->count);
}

static const xxl_router_t s_routers [] = {
    { "ROUND", s_round, 0 },
    { NULL, NULL, 0 }
};

XXL_ROUTER_PLUGIN ("round", "1.0", s_init, s_destroy, s_routers)
