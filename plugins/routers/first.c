/*  first.c -- the FIRST router: always the first registered address.

    As XXL-JOB's ExecutorRouteFirst: addressList.get(0).  The address list
    is sorted, so every trigger of every job goes to the same agent while
    it stays registered.  Stateless.
*/

#include <xxl/router.h>

static int
s_first (void *state, const xxl_router_host_t *host, xxl_route_call_t *call)
{
    (void) state;
    (void) host;
    (void) call;
    return 0;
}

static const xxl_router_t s_routers [] = {
    { "FIRST", s_first, 0 },
    { NULL, NULL, 0 }
};

XXL_ROUTER_PLUGIN ("first", "1.0", NULL, NULL, s_routers)
