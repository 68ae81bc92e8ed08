/*  xxl_routers.c -- the scheduler's registry of router plugins.

    dlopen()s each *.so of a folder (name order), validates its descriptor
    against the router ABI, runs its init, and keeps a name-sorted table of
    route names so lookups are a binary search.  Plugins stay loaded until
    the registry is destroyed.  See xxl_routers.h for the contract.
*/

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "xxl_routers.h"
#include "xxl_plugdir.h"

#define S_NAME_MAX      64              //  longest route name
#define S_MSG_DEFAULT   512             //  message buffer when the caller has none

typedef struct {
    char *path;
    void *handle;                       //  dlopen handle
    const xxl_router_plugin_t *desc;
    void *state;                        //  what init returned
} s_plugin_t;

typedef struct {
    const xxl_router_t *router;
    s_plugin_t *plugin;
} s_entry_t;

struct _xxl_routers_t {
    const xxl_router_host_t *host;
    s_plugin_t **plugins;
    size_t nplugins;
    s_entry_t *entries;                 //  sorted by router name
    size_t nentries;
    int probe_timeout_ms;
};

#if defined (__GNUC__)
__attribute__ ((format (printf, 3, 4)))
#endif
static void
s_log (xxl_routers_t *self, int level, const char *format, ...)
{
    va_list args;
    va_start (args, format);
    if (XXL_ROUTER_HOST_HAS (self->host, vlog))
        self->host->vlog (level, format, args);
    else {
        vfprintf (stderr, format, args);
        fputc ('\n', stderr);
    }
    va_end (args);
}

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
    if (dir && xxl_routers_load (self, dir) < 0)
        xxl_routers_destroy (&self);
    return self;
}

static void
s_plugin_destroy (s_plugin_t **plugin_p)
{
    s_plugin_t *plugin = *plugin_p;
    if (!plugin)
        return;
    if (plugin->desc && plugin->desc->destroy && plugin->state)
        plugin->desc->destroy (plugin->state);
    if (plugin->handle)
        dlclose (plugin->handle);
    free (plugin->path);
    free (plugin);
    *plugin_p = NULL;
}

void
xxl_routers_destroy (xxl_routers_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    xxl_routers_t *self = *self_p;
    free (self->entries);
    //  Unload in reverse load order
    for (size_t i = self->nplugins; i > 0; i--)
        s_plugin_destroy (&self->plugins [i - 1]);
    free (self->plugins);
    free (self);
    *self_p = NULL;
}

//  Lowest entry index whose name is >= name
static size_t
s_lower_bound (xxl_routers_t *self, const char *name)
{
    size_t lo = 0, hi = self->nentries;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp (self->entries [mid].router->name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static s_entry_t *
s_find (xxl_routers_t *self, const char *name)
{
    if (!self || !name)
        return NULL;
    size_t at = s_lower_bound (self, name);
    if (at < self->nentries && strcmp (self->entries [at].router->name, name) == 0)
        return &self->entries [at];
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

int
xxl_routers_load_file (xxl_routers_t *self, const char *path)
{
    if (!self || !path)
        return -1;
    void *handle = dlopen (path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *error = dlerror ();
        s_log (self, XXL_ROUTER_LOG_ERROR, "router plugin %s refused: cannot load: %s",
               path, error? error: "unknown error");
        return -1;
    }
    dlerror ();
    xxl_router_entry_fn *entry = NULL;
    *(void **) &entry = dlsym (handle, XXL_ROUTER_ENTRY);
    if (!entry) {
        s_log (self, XXL_ROUTER_LOG_ERROR,
               "router plugin %s refused: missing symbol %s (not a router plugin)",
               path, XXL_ROUTER_ENTRY);
        dlclose (handle);
        return -1;
    }
    const xxl_router_plugin_t *desc = entry ();
    const char *why = NULL;
    char reason [160];
    size_t min_size = offsetof (xxl_router_plugin_t, routers) + sizeof (desc->routers);
    if (!desc)
        why = "its entry point returned NULL";
    else
    if (desc->abi_version != XXL_ROUTER_ABI_VERSION) {
        snprintf (reason, sizeof reason,
                  "wrong ABI version %u (this scheduler speaks router ABI %u)",
                  desc->abi_version, XXL_ROUTER_ABI_VERSION);
        why = reason;
    }
    else
    if (desc->size < min_size) {
        snprintf (reason, sizeof reason,
                  "descriptor size %u too small (ABI %u needs at least %zu)",
                  desc->size, XXL_ROUTER_ABI_VERSION, min_size);
        why = reason;
    }
    else
    if (!desc->routers)
        why = "it lists no routers";
    if (why) {
        s_log (self, XXL_ROUTER_LOG_ERROR, "router plugin %s refused: %s", path, why);
        dlclose (handle);
        return -1;
    }
    const char *pname = desc->name? desc->name: path;

    //  Which of its routers can register: valid, unique names
    size_t count = 0;
    while (desc->routers [count].name)
        count++;
    const xxl_router_t **take = (const xxl_router_t **) calloc (count? count: 1, sizeof (xxl_router_t *));
    if (!take) {
        dlclose (handle);
        return -1;
    }
    size_t ntake = 0;
    for (size_t i = 0; i < count; i++) {
        const xxl_router_t *router = &desc->routers [i];
        if (!s_name_valid (router->name)) {
            s_log (self, XXL_ROUTER_LOG_ERROR,
                   "router plugin %s (%s): route name '%.80s' is invalid "
                   "(1-%d letters, digits, '_', '-', '.'); ignored",
                   path, pname, router->name, S_NAME_MAX);
            continue;
        }
        if (!router->fn && !(router->flags & XXL_ROUTER_BROADCAST)) {
            s_log (self, XXL_ROUTER_LOG_ERROR,
                   "router plugin %s (%s): route %s has no function; ignored",
                   path, pname, router->name);
            continue;
        }
        s_entry_t *known = s_find (self, router->name);
        int twice = 0;
        for (size_t k = 0; k < ntake; k++)
            if (strcmp (take [k]->name, router->name) == 0)
                twice = 1;
        if (known || twice) {
            s_log (self, XXL_ROUTER_LOG_ERROR,
                   "router plugin %s (%s): duplicate route name %s (already from %s); ignored",
                   path, pname, router->name, known? known->plugin->path: path);
            continue;
        }
        take [ntake++] = router;
    }
    if (ntake == 0) {
        s_log (self, XXL_ROUTER_LOG_ERROR,
               "router plugin %s (%s) refused: no usable route", path, pname);
        free (take);
        dlclose (handle);
        return -1;
    }
    //  Room in the tables before init, so nothing can fail after it
    s_plugin_t *plugin = (s_plugin_t *) calloc (1, sizeof (s_plugin_t));
    s_plugin_t **plugins = (s_plugin_t **) realloc (self->plugins,
                                                   (self->nplugins + 1) * sizeof (s_plugin_t *));
    if (plugins)
        self->plugins = plugins;
    s_entry_t *entries = (s_entry_t *) realloc (self->entries,
                                                (self->nentries + ntake) * sizeof (s_entry_t));
    if (entries)
        self->entries = entries;
    char *copy = strdup (path);
    if (!plugin || !plugins || !entries || !copy) {
        s_log (self, XXL_ROUTER_LOG_ERROR, "router plugin %s refused: out of memory", path);
        free (plugin);
        free (copy);
        free (take);
        dlclose (handle);
        return -1;
    }
    plugin->path = copy;
    plugin->handle = handle;
    plugin->desc = desc;
    if (desc->init) {
        const char *error = NULL;
        plugin->state = desc->init (self->host, &error);
        if (!plugin->state) {
            s_log (self, XXL_ROUTER_LOG_ERROR, "router plugin %s (%s) refused: init failed: %s",
                   path, pname, error? error: "no reason given");
            plugin->desc = NULL;        //  no destroy without a state
            s_plugin_destroy (&plugin);
            free (take);
            return -1;
        }
    }
    self->plugins [self->nplugins++] = plugin;
    for (size_t k = 0; k < ntake; k++) {
        size_t at = s_lower_bound (self, take [k]->name);
        memmove (&self->entries [at + 1], &self->entries [at],
                 (self->nentries - at) * sizeof (s_entry_t));
        self->entries [at].router = take [k];
        self->entries [at].plugin = plugin;
        self->nentries++;
        s_log (self, XXL_ROUTER_LOG_DEBUG, "router %s loaded from %s (%s %s)",
               take [k]->name, path, pname, desc->version? desc->version: "");
    }
    free (take);
    return 0;
}

int
xxl_routers_load (xxl_routers_t *self, const char *dir)
{
    if (!self || !dir)
        return -1;
    char **paths;
    int count = xxl_plugdir_list (dir, &paths);
    if (count < 0) {
        s_log (self, XXL_ROUTER_LOG_ERROR, "cannot read routers folder %s: %s", dir, strerror (errno));
        return -1;
    }
    int loaded = 0;
    for (int i = 0; i < count; i++)
        if (xxl_routers_load_file (self, paths [i]) == 0)
            loaded++;
    xxl_plugdir_free (&paths, count);
    return loaded;
}

const xxl_router_t *
xxl_routers_find (xxl_routers_t *self, const char *name)
{
    s_entry_t *entry = s_find (self, name);
    return entry? entry->router: NULL;
}

size_t
xxl_routers_size (xxl_routers_t *self)
{
    return self? self->nentries: 0;
}

char *
xxl_routers_names (xxl_routers_t *self)
{
    size_t len = 1;
    size_t count = self? self->nentries: 0;
    for (size_t i = 0; i < count; i++)
        len += strlen (self->entries [i].router->name) + 1;
    char *names = (char *) malloc (len);
    if (!names)
        return NULL;
    char *at = names;
    for (size_t i = 0; i < count; i++) {
        if (i)
            *at++ = ',';
        size_t n = strlen (self->entries [i].router->name);
        memcpy (at, self->entries [i].router->name, n);
        at += n;
    }
    *at = 0;
    return names;
}

int
xxl_routers_is_broadcast (xxl_routers_t *self, const char *name)
{
    s_entry_t *entry = s_find (self, name);
    return entry && (entry->router->flags & XXL_ROUTER_BROADCAST)? 1: 0;
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
    s_entry_t *entry = s_find (self, name);
    if (!entry) {
        xxl_route_msg (&call, "unknown route '%.80s'", name? name: "(null)");
        return -1;
    }
    if ((entry->router->flags & XXL_ROUTER_BROADCAST) || !entry->router->fn) {
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
    int index = entry->router->fn (entry->plugin->state, self->host, &call);
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

static void
s_vlog (int level, const char *format, va_list args)
{
    if (level >= XXL_ROUTER_LOG_DEBUG)
        return;                         //  the default host keeps quiet on debug
    const char *tag = level <= XXL_ROUTER_LOG_ERROR? "E"
                    : level == XXL_ROUTER_LOG_WARNING? "W": "I";
    fprintf (stderr, "%s: routers: ", tag);
    vfprintf (stderr, format, args);
    fputc ('\n', stderr);
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
