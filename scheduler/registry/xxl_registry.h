/*  xxl_registry.h -- the live agents known to one scheduler.

    Agents dial in and REGISTER (also their heartbeat).  The registry keeps,
    per app name, the sorted list of addresses seen within the dead time,
    and per address the ZeroMQ routing id of the connection it last beat
    on, which is where RUN, LOG and KILL for that address go.  Owned and
    used by the engine thread only.

    What it holds is bounded by what is live: an address is held while an
    app lists it or it is parting from a connection still open (it
    unregistered or expired there, and may still send that connection's
    results); then it is forgotten, with its route, run batch and owner.
    Everything is found by address or by routing id (hashes), never by a
    slot, so an address that comes back, or another on the connection's
    place, starts afresh: nothing said of the old one applies to it.
    The strings the registry hands out stay valid until the next call of
    xxl_registry_collect (called between engine turns), or as said below.
*/

#ifndef XXL_REGISTRY_H_INCLUDED
#define XXL_REGISTRY_H_INCLUDED

#include <czmq.h>

typedef struct _xxl_registry_t xxl_registry_t;

//  xxl_registry_beat's answer when a new (app, address) would pass the
//  registry's limit
#define XXL_REGISTRY_FULL   -2

xxl_registry_t *xxl_registry_new (void);
void xxl_registry_destroy (xxl_registry_t **self_p);
//  The most agents the registry holds: (app, address) entries, plus one
//  per address parting from an open connection.  0: no limit (the default).
void xxl_registry_set_limit (xxl_registry_t *self, size_t limit);
size_t xxl_registry_limit (xxl_registry_t *self);
//  Records a beat at `now`, on the caller's monotonic clock (liveness is
//  never judged on the wall clock, which may step); the entry's
//  update_time is the wall clock at the beat, for display.  rid is the
//  routing id frame's bytes.  Returns 1 when
//  the address is new for app (or moved to another connection), 0 when
//  only refreshed, -1 on bad arguments (or no memory), XXL_REGISTRY_FULL
//  when (app, address) is new and the registry holds its limit (an address
//  parting that comes back takes its own place: always allowed); nothing
//  changes on a refusal.
int xxl_registry_beat (xxl_registry_t *self, const char *app, const char *address,
                       const void *rid, size_t rid_size, const char *handlers,
                       int64_t now);
//  Removes an address from app; 0 if it was there, -1 if not.  An address
//  that no app lists any more (here and in expire) loses its route too:
//  nothing is sent to a connection that unregistered or stopped beating.
int xxl_registry_remove (xxl_registry_t *self, const char *app, const char *address);
//  Removes every address whose last beat (`now` of xxl_registry_beat) is
//  before dead_before; returns
//  how many.
int xxl_registry_expire (xxl_registry_t *self, int64_t dead_before);
//  The sorted addresses of app that are connected (routed: a failed send
//  unroutes one until its next beat): the array is owned by the registry
//  and valid until the next beat/remove/expire/unroute/gone.  Returns the
//  count (0 when the app is unknown).  Kept per app, made again only
//  after a change to that app's list or to the connection of an address
//  several apps list.
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
//  True when address unregistered from a connection still open (parting)
bool xxl_registry_parting (xxl_registry_t *self, const char *address);
//  The registry's own copy of address (while it has a route, live or
//  parting), or NULL
const char *xxl_registry_address (xxl_registry_t *self, const char *address);
//  The addresses routed to the connection of routing id rid, or that
//  unregistered from it: how many (in *count), and the first of them
//  (NULL when none)
const char *xxl_registry_rid_address (xxl_registry_t *self, const void *rid, size_t rid_size,
                                      size_t *count);
//  How many TriggerParams one RUN to address may carry, as its REGISTER
//  said (`runBatch`): 0 for the single form only (also when unknown or
//  not connected).  set takes values <= 1 as 0; a beat keeps the value.
void xxl_registry_set_run_batch (xxl_registry_t *self, const char *address, int run_batch);
int xxl_registry_run_batch (xxl_registry_t *self, const char *address);
//  The agent key (public key text) that last registered address, kept
//  while the registry holds the address; set after a beat (no effect on
//  an address not held).  owner: NULL when none.
void xxl_registry_set_owner (xxl_registry_t *self, const char *address, const char *key);
const char *xxl_registry_owner (xxl_registry_t *self, const char *address);
//  The agent tags (canonical "K=V,...", xxl_tags.h) that last registered
//  address said, kept while the registry holds the address; set after a
//  beat (no effect on an address not held).  tags: "" when none (also
//  for an address not held); the string is the registry's, valid until
//  the next set_tags of the address or as said above.
void xxl_registry_set_tags (xxl_registry_t *self, const char *address, const char *tags);
const char *xxl_registry_tags (xxl_registry_t *self, const char *address);
//  Forgets the routing id of a connection that went away (a send to it
//  failed), unless the address has registered on another one since.
void xxl_registry_unroute (xxl_registry_t *self, const char *address,
                           const void *rid, size_t rid_size);
//  Forgets the connection of routing id rid (it closed): its addresses are
//  not connected from now on, those parting from it are forgotten.
//  Returns how many of its addresses were connected (the first ten are
//  logged by name).
size_t xxl_registry_gone (xxl_registry_t *self, const void *rid, size_t rid_size);
//  The addresses connected through the connection of routing id rid
//  (routed to it, not parting from it): up to max of them in addresses
//  (the registry's strings, valid as xxl_registry_address's); returns how
//  many there are
size_t xxl_registry_rid_connected (xxl_registry_t *self, const void *rid, size_t rid_size,
                                   const char **addresses, size_t max);
//  The connections the registry holds (some address routed to or parting
//  from each), each once: the first, then the next, as their routing id
//  (NULL at the end); valid until the next change of the registry.
const void *xxl_registry_rid_first (xxl_registry_t *self, size_t *size);
const void *xxl_registry_rid_next (xxl_registry_t *self, size_t *size);
//  Frees what the registry forgot since the last call: the strings it
//  handed out for those addresses end here.  Call it where nothing from
//  the registry is held (between engine turns).
void xxl_registry_collect (xxl_registry_t *self);

//  Iteration over every (app, address) for agent list; returns 0 on each
//  entry, -1 at the end.  cursor starts at 0.
typedef struct {
    const char *app;
    const char *address;
    const char *handlers;
    int64_t update_time;
    int connected;
    const char *tags;                   //  its agent tags ("" when none)
} xxl_registry_entry_t;
int xxl_registry_each (xxl_registry_t *self, size_t *cursor, xxl_registry_entry_t *entry);
size_t xxl_registry_size (xxl_registry_t *self);

//  What the registry holds, for tests and metrics
typedef struct {
    size_t entries;                     //  (app, address) listed
    size_t addresses;                   //  addresses held (listed or parting)
    size_t parting;                     //  of them, parting from an open connection
    size_t connections;                 //  routing ids held
    size_t apps;                        //  app names listing some address
    size_t released;                    //  forgotten, freed at the next collect
    size_t entries_alloc;               //  entries the array has room for
} xxl_registry_stats_t;
void xxl_registry_stats (xxl_registry_t *self, xxl_registry_stats_t *stats);

#endif
