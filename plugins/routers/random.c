/*  random.c -- the RANDOM router: a uniformly random registered address.

    As XXL-JOB's ExecutorRouteRandom: addressList.get(random.nextInt(size)).
    The random number comes from the host (host->random), so tests can
    make it deterministic.  Stateless.
*/

#include <xxl/router.h>

static int
s_random (void *state, const xxl_router_host_t *host, xxl_route_call_t *call)
{
    (void) state;
    if (!XXL_ROUTER_HOST_HAS (host, random)) {
        xxl_route_msg (call, "RANDOM: the host has no random function");
        return -1;
    }
    uint32_t bound = call->count > UINT32_MAX? UINT32_MAX: (uint32_t) call->count;
    uint32_t pick = host->random (bound);
    return pick < bound? (int) pick: 0;
}

static const xxl_router_t s_routers [] = {
    { "RANDOM", s_random, 0 },
    { NULL, NULL, 0 }
};

XXL_ROUTER_PLUGIN ("random", "1.0", NULL, NULL, s_routers)
