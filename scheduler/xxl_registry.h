/*  xxl_registry.h -- the live agents known to one scheduler.

    Agents dial in and REGISTER (also their heartbeat).  The registry keeps,
    per app name, the sorted list of addresses seen within the dead time,
    and per address the ZeroMQ routing id of the connection it last beat
    on, which is where RUN, LOG and KILL for that address go.  Owned and
    used by the engine thread only.
*/

#ifndef XXL_REGISTRY_H_INCLUDED
#define XXL_REGISTRY_H_INCLUDED

#include <czmq.h>

typedef struct _xxl_registry_t xxl_registry_t;

xxl_registry_t *xxl_registry_new (void);
void xxl_registry_destroy (xxl_registry_t **self_p);
//  Records a beat.  rid is the routing id frame's bytes.  Returns 1 when
//  the address is new for app (or moved to another connection), 0 when
//  only refreshed, -1 on bad arguments.
int xxl_registry_beat (xxl_registry_t *self, const char *app, const char *address,
                       const void *rid, size_t rid_size, const char *handlers,
                       int64_t now);
//  Removes an address from app; 0 if it was there, -1 if not.  An address
//  that no app lists any more (here and in expire) loses its route too:
//  nothing is sent to a connection that unregistered or stopped beating.
int xxl_registry_remove (xxl_registry_t *self, const char *app, const char *address);
//  Removes every address whose last beat is before dead_before; returns
//  how many.
int xxl_registry_expire (xxl_registry_t *self, int64_t dead_before);
//  The sorted addresses of app that are connected (routed: a failed send
//  unroutes one until its next beat): the array is owned by the registry
//  and valid until the next beat/remove/expire/unroute.  Returns the count
//  (0 when the app is unknown).
size_t xxl_registry_addresses (xxl_registry_t *self, const char *app,
                               const char *const **addresses);
//  The routing id of an address, or NULL when it is not connected (or
//  address is NULL: a row not routed yet).
const void *xxl_registry_route (xxl_registry_t *self, const char *address, size_t *size);
//  The route of an address, or else the connection it had when it last
//  unregistered (until that connection closes or a new one registers):
//  where LOG and KILL for its runs still go.  NULL when neither.
const void *xxl_registry_route_last (xxl_registry_t *self, const char *address,
                                     size_t *size);
//  True when some address is routed to the connection of routing id rid,
//  or unregistered from it (it may still deliver its results)
bool xxl_registry_has_rid (xxl_registry_t *self, const void *rid, size_t rid_size);
//  True when some app lists address (live or not yet expired)
bool xxl_registry_listed (xxl_registry_t *self, const char *address);
//  The registry's own copy of address (valid while it has a route, live
//  or parting), or NULL
const char *xxl_registry_address (xxl_registry_t *self, const char *address);
//  The addresses routed to the connection of routing id rid, or that
//  unregistered from it: how many (in *count), and the first of them
//  (NULL when none; valid until the next beat/remove/expire)
const char *xxl_registry_rid_address (xxl_registry_t *self, const void *rid, size_t rid_size,
                                      size_t *count);
//  How many TriggerParams one RUN to address may carry, as its REGISTER
//  said (`runBatch`): 0 for the single form only (also when unknown or
//  not connected).  set takes values <= 1 as 0; a beat keeps the value.
void xxl_registry_set_run_batch (xxl_registry_t *self, const char *address, int run_batch);
int xxl_registry_run_batch (xxl_registry_t *self, const char *address);
//  Forgets the routing id of a connection that went away (a send to it
//  failed), unless the address has registered on another one since.
void xxl_registry_unroute (xxl_registry_t *self, const char *address,
                           const void *rid, size_t rid_size);

//  Iteration over every (app, address) for agent list; returns 0 on each
//  entry, -1 at the end.  cursor starts at 0.
typedef struct {
    const char *app;
    const char *address;
    const char *handlers;
    int64_t update_time;
    int connected;
} xxl_registry_entry_t;
int xxl_registry_each (xxl_registry_t *self, size_t *cursor, xxl_registry_entry_t *entry);
size_t xxl_registry_size (xxl_registry_t *self);

#endif
