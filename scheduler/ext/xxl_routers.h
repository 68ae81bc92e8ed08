/*  xxl_routers.h -- the scheduler's registry of router plugins.

    Loads every router plugin (*.so) in a folder, checks each against the
    router ABI (sdk/include/xxl/router.h), and routes triggers by route
    name.  A bad plugin -- not loadable, no xxl_router_plugin symbol, wrong
    ABI version, descriptor too small, invalid or duplicate route name,
    failing init -- is refused with one clear log line through the host's
    vlog, and the others still load.  Files load in name order, so when
    two plugins register the same route name, the first file keeps it.

    After loading, the registry is read-only: find, names, is_broadcast
    and route may be called from any number of threads at once (plugins
    guard their own state).  Loading more folders is not thread-safe.
*/

#ifndef XXL_ROUTERS_H_INCLUDED
#define XXL_ROUTERS_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include <xxl/router.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct _xxl_routers_t xxl_routers_t;

//  Default timeout of FAILOVER/BUSYOVER probes, per address
#define XXL_ROUTERS_PROBE_TIMEOUT_MS    1000

//  Creates a registry and loads the router plugins in dir (when dir is not
//  NULL).  host is borrowed and must outlive the registry; it is what the
//  plugins get.  Returns NULL when host is NULL or has the wrong ABI
//  version, when dir cannot be read (logged), or when out of memory.
xxl_routers_t *
    xxl_routers_new (const char *dir, const xxl_router_host_t *host);

//  Loads the router plugins in one more folder.  Returns the number of
//  plugins loaded from it, or -1 when dir cannot be read (logged).
int
    xxl_routers_load (xxl_routers_t *self, const char *dir);

//  Loads one plugin file.  Returns 0, or -1 when refused (logged).
int
    xxl_routers_load_file (xxl_routers_t *self, const char *path);

//  Unloads every plugin (calling its destroy) and nulls *self_p.
void
    xxl_routers_destroy (xxl_routers_t **self_p);

//  The router registered under name (exact, case-sensitive), or NULL.
//  Valid until the registry is destroyed.
const xxl_router_t *
    xxl_routers_find (xxl_routers_t *self, const char *name);

//  Number of registered route names.
size_t
    xxl_routers_size (xxl_routers_t *self);

//  All route names, sorted and separated by ", " ("BUSYOVER, FAILOVER, ...",
//  "" when none), for "unknown route 'X' (known: ...)" errors.  The caller
//  frees the string; NULL when out of memory.
char *
    xxl_routers_names (xxl_routers_t *self);

//  1 when name is registered as a broadcast route (SHARDING_BROADCAST):
//  the scheduler sends the trigger to every address itself.  0 otherwise,
//  also when name is unknown.
int
    xxl_routers_is_broadcast (xxl_routers_t *self, const char *name);

//  Sets the timeout that probing routers pass to host->probe (ms, > 0).
void
    xxl_routers_set_probe_timeout (xxl_routers_t *self, int timeout_ms);

//  Routes one trigger of job_id (log row log_id) with route name over the
//  sorted addresses [0, count).  probe_ctx is passed to host->probe
//  unchanged.  msg (may be NULL when msglen is 0) receives the router's
//  text for the log row's triggerMsg, NUL-terminated and truncated to
//  msglen: probe results, or the reason for a failure.  Returns the index
//  of the chosen address, or -1 when the name is unknown or broadcasts,
//  the list is empty, the router picks none, or it returns an index out
//  of range.
int
    xxl_routers_route (xxl_routers_t *self, const char *name,
                       int64_t job_id, int64_t log_id,
                       const char *const *addresses, size_t count,
                       void *probe_ctx, char *msg, size_t msglen);

//  A host table with the system clock, a thread-safe random number
//  generator and a vlog that writes to stderr, and no probe (the
//  scheduler copies it and fills in probe).  Static; never NULL.
const xxl_router_host_t *
    xxl_routers_default_host (void);

#ifdef __cplusplus
}
#endif

#endif
