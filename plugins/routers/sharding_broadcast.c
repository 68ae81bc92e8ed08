/*  sharding_broadcast.c -- registers the SHARDING_BROADCAST route name.

    SHARDING_BROADCAST is not a routing decision: the scheduler sees the
    XXL_ROUTER_BROADCAST flag and sends one trigger (one log row, one RUN)
    to every registered address, address i of the sorted list getting
    shard i/n, as XXL-JOB's JobTriggerPoolHelper does.  This plugin only
    makes the name known, so `job add --route SHARDING_BROADCAST` is
    accepted.  It has no route function.
*/

#include <xxl/router.h>

static const xxl_router_t s_routers [] = {
    { "SHARDING_BROADCAST", NULL, XXL_ROUTER_BROADCAST },
    { NULL, NULL, 0 }
};

XXL_ROUTER_PLUGIN ("sharding_broadcast", "1.0", NULL, NULL, s_routers)
