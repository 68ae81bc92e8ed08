/*  bad_router_abi.c -- router plugins the scheduler must refuse.

    Built as it is, this is a plugin built for router ABI version 99: the
    loader must refuse it with a clear log line and keep loading others.
    Built with -DXXL_BAD_SIZE, -DXXL_BAD_INIT, -DXXL_BAD_DUP or
    -DXXL_BAD_NOSYM it is instead a plugin whose descriptor is too small,
    whose init fails, which only registers a name another plugin already
    has (FIRST), or which lacks the entry symbol.  tests/test_routers.c
    checks each variant it finds (bad_router_size.so, bad_router_init.so,
    bad_router_dup.so, bad_router_nosym.so).
*/

#include <xxl/router.h>

static int
s_zero (void *state, const xxl_router_host_t *host, xxl_route_call_t *call)
{
    (void) state;
    (void) host;
    (void) call;
    return 0;
}

#if defined (XXL_BAD_INIT)
static void *
s_init (const xxl_router_host_t *host, const char **error)
{
    (void) host;
    *error = "bad_router_init refuses to start";
    return NULL;
}
#endif

static const xxl_router_t s_routers [] = {
#if defined (XXL_BAD_DUP)
    { "FIRST", s_zero, 0 },
#else
    { "BAD_ROUTER", s_zero, 0 },
#endif
    { NULL, NULL, 0 }
};

#if defined (XXL_BAD_NOSYM)
const xxl_router_plugin_t *xxl_router_plugin_v0 (void);
__attribute__ ((visibility ("default")))
const xxl_router_plugin_t *xxl_router_plugin_v0 (void)
{
    static const xxl_router_plugin_t s_plugin = {
        XXL_ROUTER_ABI_VERSION, sizeof (xxl_router_plugin_t),
        "bad_router_nosym", "1.0", NULL, NULL, s_routers
    };
    return &s_plugin;
}
#else
const xxl_router_plugin_t *xxl_router_plugin (void);
__attribute__ ((visibility ("default")))
const xxl_router_plugin_t *xxl_router_plugin (void)
{
    static const xxl_router_plugin_t s_plugin = {
#   if defined (XXL_BAD_SIZE)
        XXL_ROUTER_ABI_VERSION, 16,
#   elif defined (XXL_BAD_INIT) || defined (XXL_BAD_DUP)
        XXL_ROUTER_ABI_VERSION, sizeof (xxl_router_plugin_t),
#   else
        99, sizeof (xxl_router_plugin_t),
#   endif
        "bad_router", "1.0",
#   if defined (XXL_BAD_INIT)
        s_init,
#   else
        NULL,
#   endif
        NULL, s_routers
    };
    return &s_plugin;
}
#endif
