/*  lru.c -- the LEAST_RECENTLY_USED router.

    As XXL-JOB's ExecutorRouteLRU, a LinkedHashMap in access order per job:
    the job goes to the address it used least recently, which then becomes
    the most recent.  Addresses new to the job join as most recent, in
    address-list order (so a fresh job starts with the first address);
    addresses that left are pruned; all orders are forgotten every 24 h
    (host clock).
*/

#include <stdlib.h>
#include <string.h>
#include <xxl/router.h>
#include "xxl_jobmap.h"

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
s_lru (void *state, const xxl_router_host_t *host, xxl_route_call_t *call)
{
    xxl_jobmap_t *map = (xxl_jobmap_t *) state;
    if (!XXL_ROUTER_HOST_HAS (host, now_ms)) {
        xxl_route_msg (call, "LEAST_RECENTLY_USED: the host has no clock function");
        return -1;
    }
    size_t *index_of = (size_t *) malloc (call->count * sizeof (size_t));
    if (!index_of) {
        xxl_route_msg (call, "LEAST_RECENTLY_USED: out of memory");
        return -1;
    }
    int64_t now = host->now_ms ();
    int pick = -1;

    xxl_jobmap_lock (map);
    xxl_jobmap_expire (map, now);
    xxl_jobmap_entry_t *entry = xxl_jobmap_ensure (map, call->job_id);
    if (entry && !entry->data)
        entry->data = xxl_addrlist_new ();
    xxl_addrlist_t *list = entry? (xxl_addrlist_t *) entry->data: NULL;
    if (list && xxl_addrlist_sync (list, call->addresses, call->count, index_of) == 0
    &&  list->count > 0) {
        //  items [0] is the eldest: take it, move it to the end
        xxl_addritem_t eldest = list->items [0];
        pick = (int) index_of [0];
        memmove (list->items, list->items + 1, (list->count - 1) * sizeof (xxl_addritem_t));
        list->items [list->count - 1] = eldest;
    }
    xxl_jobmap_unlock (map);
    free (index_of);
    if (pick < 0)
        xxl_route_msg (call, "LEAST_RECENTLY_USED: out of memory");
    return pick;
}

static const xxl_router_t s_routers [] = {
    { "LEAST_RECENTLY_USED", s_lru, 0 },
    { NULL, NULL, 0 }
};

XXL_ROUTER_PLUGIN ("lru", "1.0", s_init, s_destroy, s_routers)
