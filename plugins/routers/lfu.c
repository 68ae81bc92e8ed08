/*  lfu.c -- the LEAST_FREQUENTLY_USED router.

    As XXL-JOB's ExecutorRouteLFU: each job counts how often it was sent to
    each address and goes to the address with the lowest count, then adds
    one to it.  An address new to the job (and one whose count passed
    1,000,000) starts at random(number of addresses), so a newly joined
    agent does not take every trigger at once.  Addresses that left are
    pruned; all counts are forgotten every 24 h (host clock).

    XXL-JOB breaks ties between equal counts by Java HashMap iteration
    order; we break them by the order of the (sorted) address list, the
    first address wins.
*/

#include <stdlib.h>
#include <xxl/router.h>
#include "xxl_jobmap.h"

#define S_MAX_COUNT     1000000

static void *
s_init (const xxl_router_host_t *host, const char **error)
{
    (void) host;
    xxl_jobmap_t *map = xxl_jobmap_new (xxl_addrlist_free);
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
s_lfu (void *state, const xxl_router_host_t *host, xxl_route_call_t *call)
{
    xxl_jobmap_t *map = (xxl_jobmap_t *) state;
    if (!XXL_ROUTER_HOST_HAS (host, random) || !XXL_ROUTER_HOST_HAS (host, now_ms)) {
        xxl_route_msg (call, "LEAST_FREQUENTLY_USED: the host has no random or clock function");
        return -1;
    }
    size_t *index_of = (size_t *) malloc (call->count * sizeof (size_t));
    if (!index_of) {
        xxl_route_msg (call, "LEAST_FREQUENTLY_USED: out of memory");
        return -1;
    }
    uint32_t bound = call->count > UINT32_MAX? UINT32_MAX: (uint32_t) call->count;
    int64_t now = host->now_ms ();
    int pick = -1;

    xxl_jobmap_lock (map);
    xxl_jobmap_expire (map, now);
    xxl_jobmap_entry_t *entry = xxl_jobmap_ensure (map, call->job_id);
    if (entry && !entry->data)
        entry->data = xxl_addrlist_new ();
    xxl_addrlist_t *list = entry? (xxl_addrlist_t *) entry->data: NULL;
    if (list && xxl_addrlist_sync (list, call->addresses, call->count, index_of) == 0) {
        //  New addresses (value -1) and overflowed counts start at random
        for (size_t k = 0; k < list->count; k++)
            if (list->items [k].value < 0 || list->items [k].value > S_MAX_COUNT)
                list->items [k].value = host->random (bound) % bound;
        //  Lowest count; ties go to the lowest index in the address list
        size_t best = 0;
        for (size_t k = 1; k < list->count; k++)
            if (list->items [k].value < list->items [best].value
            || (list->items [k].value == list->items [best].value
                && index_of [k] < index_of [best]))
                best = k;
        if (list->count > 0) {
            list->items [best].value++;
            pick = (int) index_of [best];
        }
    }
    xxl_jobmap_unlock (map);
    free (index_of);
    if (pick < 0)
        xxl_route_msg (call, "LEAST_FREQUENTLY_USED: out of memory");
    return pick;
}

static const xxl_router_t s_routers [] = {
    { "LEAST_FREQUENTLY_USED", s_lfu, 0 },
    { NULL, NULL, 0 }
};

XXL_ROUTER_PLUGIN ("lfu", "1.0", s_init, s_destroy, s_routers)
