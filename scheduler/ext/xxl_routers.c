/*  xxl_routers.c -- the scheduler's registry of router plugins.

    Describes the router ABI to the plugin loader (xxl_plugins: dlopen,
    header and duplicate checks, the name-sorted table of route names) and
    routes triggers through it.  Plugins stay loaded until the registry is
    destroyed.  See xxl_routers.h for the contract.
*/

#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "xxl_log.h"
#include "xxl_routers.h"
#include "xxl_plugins.h"

#define S_NAME_MAX      64              //  longest route name
#define S_MSG_DEFAULT   512             //  message buffer when the caller has none

struct _xxl_routers_t {
    const xxl_router_host_t *host;
    xxl_plugins_t *plugins;             //  the routers, by route name
    int probe_timeout_ms;
};

//  --------------------------------------------------------------------------
//  The router ABI, for the plugin loader

static const char *
s_validate (void *ctx, const void *desc_, xxl_plugins_about_t *about)
{
    (void) ctx;
    const xxl_router_plugin_t *desc = (const xxl_router_plugin_t *) desc_;
    if (!desc->routers)
        return "it lists no routers";
    about->name = desc->name;
    about->version = desc->version;
    about->items = desc->routers;
    return NULL;
}

//  Route names: 1-64 of letters, digits, '_', '-', '.'
static int
s_name_valid (const char *name)
{
    size_t len = 0;
    for (; name [len]; len++) {
        char c = name [len];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
        ||  c == '_' || c == '-' || c == '.'))
            return 0;
        if (len >= S_NAME_MAX)
            return 0;
    }
    return len > 0;
}

static int
s_check_item (void *ctx, const void *item, char *why, size_t whylen)
{
    (void) ctx;
    const xxl_router_t *router = (const xxl_router_t *) item;
    if (!s_name_valid (router->name)) {
        snprintf (why, whylen, "route name '%.80s' is invalid "
                  "(1-%d letters, digits, '_', '-', '.')", router->name, S_NAME_MAX);
        return -1;
    }
    if (!router->fn && !(router->flags & XXL_ROUTER_BROADCAST)) {
        snprintf (why, whylen, "route %s has no function", router->name);
        return -1;
    }
    return 0;
}

static int
s_init (void *ctx, const void *desc_, void **state, const char **error)
{
    const xxl_router_plugin_t *desc = (const xxl_router_plugin_t *) desc_;
    if (desc->init && !(*state = desc->init ((const xxl_router_host_t *) ctx, error)))
        return -1;
    return 0;
}

static void
s_destroy (void *ctx, const void *desc_, void *state)
{
    (void) ctx;
    const xxl_router_plugin_t *desc = (const xxl_router_plugin_t *) desc_;
    if (desc->destroy)
        desc->destroy (state);
}

static const xxl_plugins_abi_t s_abi = {
    .entry = XXL_ROUTER_ENTRY,
    .abi_version = XXL_ROUTER_ABI_VERSION,
    .min_size = offsetof (xxl_router_plugin_t, routers) + sizeof (const xxl_router_t *),
    .item_size = sizeof (xxl_router_t),
    .plugin = "router plugin",
    .not_one = "not a router plugin",
    .abi = "router ABI",
    .folder = "routers folder",
    .duplicate = "route name",
    .usable = "route",
    .loaded = "router",
    .validate = s_validate,
    .check_item = s_check_item,
    .init = s_init,
    .destroy = s_destroy
};

//  --------------------------------------------------------------------------
//  Registry

xxl_routers_t *
xxl_routers_new (const char *dir, const xxl_router_host_t *host)
{
    if (!host || host->abi_version != XXL_ROUTER_ABI_VERSION
    ||  host->size < offsetof (xxl_router_host_t, now_ms))
        return NULL;
    xxl_routers_t *self = (xxl_routers_t *) calloc (1, sizeof (xxl_routers_t));
    if (!self)
        return NULL;
    self->host = host;
    self->probe_timeout_ms = XXL_ROUTERS_PROBE_TIMEOUT_MS;
    self->plugins = xxl_plugins_new (&s_abi, (void *) host,
                                     XXL_ROUTER_HOST_HAS (host, vlog)? host->vlog: NULL);
    if (!self->plugins || (dir && xxl_routers_load (self, dir) < 0))
        xxl_routers_destroy (&self);
    return self;
}

void
xxl_routers_destroy (xxl_routers_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    xxl_routers_t *self = *self_p;
    xxl_plugins_destroy (&self->plugins);
    free (self);
    *self_p = NULL;
}

int
xxl_routers_load_file (xxl_routers_t *self, const char *path)
{
    return self? xxl_plugins_load_file (self->plugins, path): -1;
}

int
xxl_routers_load (xxl_routers_t *self, const char *dir)
{
    return self? xxl_plugins_load (self->plugins, dir): -1;
}

//  The router registered under name, and its plugin's state
static const xxl_router_t *
s_find (xxl_routers_t *self, const char *name, void **state)
{
    if (!self || !name)
        return NULL;
    return (const xxl_router_t *) xxl_plugins_find (self->plugins, name, strlen (name), state);
}

const xxl_router_t *
xxl_routers_find (xxl_routers_t *self, const char *name)
{
    return s_find (self, name, NULL);
}

size_t
xxl_routers_size (xxl_routers_t *self)
{
    return self? xxl_plugins_size (self->plugins): 0;
}

char *
xxl_routers_names (xxl_routers_t *self)
{
    return xxl_plugins_names (self? self->plugins: NULL);
}

int
xxl_routers_is_broadcast (xxl_routers_t *self, const char *name)
{
    const xxl_router_t *router = s_find (self, name, NULL);
    return router && (router->flags & XXL_ROUTER_BROADCAST)? 1: 0;
}

void
xxl_routers_set_probe_timeout (xxl_routers_t *self, int timeout_ms)
{
    if (self && timeout_ms > 0)
        self->probe_timeout_ms = timeout_ms;
}

int
xxl_routers_route (xxl_routers_t *self, const char *name,
                   int64_t job_id, int64_t log_id,
                   const char *const *addresses, size_t count,
                   void *probe_ctx, char *msg, size_t msglen)
{
    char local [S_MSG_DEFAULT];
    if (!msg || msglen == 0) {
        msg = local;
        msglen = sizeof local;
    }
    msg [0] = 0;
    xxl_route_call_t call = {
        sizeof (xxl_route_call_t), job_id, log_id, addresses, count,
        self? self->probe_timeout_ms: XXL_ROUTERS_PROBE_TIMEOUT_MS,
        probe_ctx, msg, msglen
    };
    void *state = NULL;
    const xxl_router_t *router = s_find (self, name, &state);
    if (!router) {
        xxl_route_msg (&call, "unknown route '%.80s'", name? name: "(null)");
        return -1;
    }
    if ((router->flags & XXL_ROUTER_BROADCAST) || !router->fn) {
        xxl_route_msg (&call, "route %s broadcasts to every address; it picks none", name);
        return -1;
    }
    if (!addresses || count == 0) {
        xxl_route_msg (&call, "no registered address");
        return -1;
    }
    if (count > INT32_MAX) {
        xxl_route_msg (&call, "too many addresses (%zu)", count);
        return -1;
    }
    for (size_t i = 0; i < count; i++)
        if (!addresses [i]) {
            xxl_route_msg (&call, "address %zu is NULL", i);
            return -1;
        }
    int index = router->fn (state, self->host, &call);
    msg [msglen - 1] = 0;
    if (index < -1 || index >= (int) count) {
        xxl_route_msg (&call, "route %s returned invalid index %d for %zu addresses",
                       name, index, count);
        return -1;
    }
    if (index == -1 && !msg [0])
        xxl_route_msg (&call, "route %s picked no address", name);
    return index;
}

//  --------------------------------------------------------------------------
//  Default host

static int64_t
s_now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint32_t
s_random (uint32_t bound)
{
    return bound? arc4random_uniform (bound): 0;
}

//  Through the daemon's logger (xxl_log.h): debug lines only at
//  --log-level debug
static void
s_vlog (int level, const char *format, va_list args)
{
    xxl_log_vtag (level, "routers", format, args);
}

const xxl_router_host_t *
xxl_routers_default_host (void)
{
    static const xxl_router_host_t s_host = {
        XXL_ROUTER_ABI_VERSION, sizeof (xxl_router_host_t),
        s_now_ms, s_random, s_vlog, NULL
    };
    return &s_host;
}
