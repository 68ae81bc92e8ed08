/*  last.c -- the LAST router: always the last registered address.

    As XXL-JOB's ExecutorRouteLast: addressList.get(size - 1).  Stateless.
*/

#include <xxl/router.h>

static int
s_last (void *state, const xxl_router_host_t *host, xxl_route_call_t *call)
{
    (void) state;
    (void) host;
    return (int) (call->count - 1);
}

static const xxl_router_t s_routers [] = {
    { "LAST", s_last, 0 },
    { NULL, NULL, 0 }
};

XXL_ROUTER_PLUGIN ("last", "1.0", NULL, NULL, s_routers)
