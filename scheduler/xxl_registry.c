/*  xxl_registry.c -- live agents: app → sorted addresses, address → route.

    Entries live in one array kept sorted by (app, address); an app's
    address list is a slice of it, rebuilt into a cached pointer array on
    change.  Routes (address → connection) are found by a hash of the
    address; each counts the entries that list its address (so removing
    an entry need not scan the others), and a hash of connections (the
    routing id, hex) counts the routes live or parting on each, so that
    what a message from a connection needs (is it registered, with how
    many addresses) costs the same with 1,000 agents as with one.
*/

#include "xxl_registry.h"
#include "xxl/msg.h"

typedef struct {
    char *app;
    char *address;
    char *handlers;
    int64_t update_time;
} s_entry_t;

typedef struct {
    char *address;
    void *rid;
    size_t rid_size;
    void *parting;                      //  the connection of an address that
    size_t parting_size;                //  unregistered (LOG and KILL only)
    int run_batch;                      //  TriggerParams per RUN it takes (0: single form)
    size_t listed;                      //  entries (apps) that list the address
} s_route_t;

//  A connection's routes: how many hold its routing id (live or parting),
//  and the slot + 1 of one of them
typedef struct {
    size_t count;
    size_t slot;
} s_rid_t;

struct _xxl_registry_t {
    s_entry_t *entries;
    size_t size, alloc;
    s_route_t *routes;                  //  append-only: an address keeps its slot
    size_t routes_size, routes_alloc;
    zhashx_t *route_index;              //  address → its slot + 1
    zhashx_t *rid_index;                //  routing id in hex → s_rid_t
    const char **view;                  //  cached addresses of view_app
    char *view_app;
    size_t view_size;
};

xxl_registry_t *
xxl_registry_new (void)
{
    xxl_registry_t *self = (xxl_registry_t *) zmalloc (sizeof (xxl_registry_t));
    self->route_index = zhashx_new ();
    self->rid_index = zhashx_new ();
    if (!self->route_index || !self->rid_index) {
        zhashx_destroy (&self->route_index);
        zhashx_destroy (&self->rid_index);
        free (self);
        return NULL;
    }
    zhashx_set_destructor (self->rid_index, (zhashx_destructor_fn *) zstr_free);
    return self;
}

static void
s_view_reset (xxl_registry_t *self)
{
    zstr_free (&self->view_app);
    self->view_size = 0;
}

void
xxl_registry_destroy (xxl_registry_t **self_p)
{
    if (self_p && *self_p) {
        xxl_registry_t *self = *self_p;
        for (size_t i = 0; i < self->size; i++) {
            free (self->entries [i].app);
            free (self->entries [i].address);
            free (self->entries [i].handlers);
        }
        for (size_t i = 0; i < self->routes_size; i++) {
            free (self->routes [i].address);
            free (self->routes [i].rid);
            free (self->routes [i].parting);
        }
        free (self->entries);
        free (self->routes);
        zhashx_destroy (&self->route_index);
        zhashx_destroy (&self->rid_index);
        free (self->view);
        free (self->view_app);
        free (self);
        *self_p = NULL;
    }
}

static int
s_compare (const char *app_a, const char *address_a, const char *app_b, const char *address_b)
{
    int rc = strcmp (app_a, app_b);
    return rc? rc: strcmp (address_a, address_b);
}

//  Index of (app, address) or where it would be inserted; *found set
static size_t
s_find (xxl_registry_t *self, const char *app, const char *address, int *found)
{
    size_t low = 0, high = self->size;
    while (low < high) {
        size_t mid = (low + high) / 2;
        int rc = s_compare (self->entries [mid].app, self->entries [mid].address, app, address);
        if (rc == 0) {
            *found = 1;
            return mid;
        }
        if (rc < 0)
            low = mid + 1;
        else
            high = mid;
    }
    *found = 0;
    return low;
}

//  The key of a routing id in rid_index (hex: ids are binary)
static void
s_rid_key (const void *rid, size_t rid_size, char *key, size_t keylen)
{
    static const char digits [] = "0123456789abcdef";
    const unsigned char *bytes = (const unsigned char *) rid;
    size_t i = 0;
    for (; i < rid_size && 2 * i + 2 < keylen; i++) {
        key [2 * i] = digits [bytes [i] >> 4];
        key [2 * i + 1] = digits [bytes [i] & 15];
    }
    key [2 * i] = 0;
}

//  The route at slot + 1 took (add) or let go (!add) of routing id rid,
//  as its live or its parting connection
static void
s_rid_count (xxl_registry_t *self, const void *rid, size_t rid_size, size_t slot, bool add)
{
    if (!rid || !rid_size)
        return;
    char key [2 * 256 + 1];
    s_rid_key (rid, rid_size, key, sizeof key);
    s_rid_t *entry = (s_rid_t *) zhashx_lookup (self->rid_index, key);
    if (add) {
        if (!entry) {
            entry = (s_rid_t *) zmalloc (sizeof (s_rid_t));
            entry->slot = slot;
            zhashx_insert (self->rid_index, key, entry);
        }
        entry->count++;
        return;
    }
    assert (entry && entry->count > 0);
    if (--entry->count == 0) {
        zhashx_delete (self->rid_index, key);
        return;
    }
    if (entry->slot == slot) {
        //  Another route holds it (a connection with several addresses:
        //  rare, and small): the first found.  (The route letting go may
        //  still hold it as it calls: never itself; a route holds a
        //  connection once, live or parting)
        for (size_t i = 0; i < self->routes_size; i++) {
            s_route_t *route = &self->routes [i];
            if (i + 1 != slot
            &&  ((route->rid && route->rid_size == rid_size
            &&   memcmp (route->rid, rid, rid_size) == 0)
            ||  (route->parting && route->parting_size == rid_size
            &&   memcmp (route->parting, rid, rid_size) == 0))) {
                entry->slot = i + 1;
                break;
            }
        }
    }
}

static size_t
s_slot (xxl_registry_t *self, s_route_t *route)
{
    return (size_t) (route - self->routes) + 1;
}

static s_route_t *
s_route (xxl_registry_t *self, const char *address)
{
    if (!address)
        return NULL;
    uintptr_t slot = (uintptr_t) zhashx_lookup (self->route_index, address);
    if (!slot)
        return NULL;
    assert (slot <= self->routes_size && streq (self->routes [slot - 1].address, address));
    return &self->routes [slot - 1];
}

int
xxl_registry_beat (xxl_registry_t *self, const char *app, const char *address,
                   const void *rid, size_t rid_size, const char *handlers, int64_t now)
{
    if (!app || !*app || !address || !*address || !rid || !rid_size)
        return -1;
    int changed = 0, found;
    size_t index = s_find (self, app, address, &found);
    if (!found) {
        if (self->size == self->alloc) {
            size_t alloc = self->alloc? self->alloc * 2: 16;
            s_entry_t *entries = (s_entry_t *) realloc (self->entries, alloc * sizeof (s_entry_t));
            if (!entries)
                return -1;
            self->entries = entries;
            self->alloc = alloc;
        }
        memmove (self->entries + index + 1, self->entries + index,
                 (self->size - index) * sizeof (s_entry_t));
        self->entries [index].app = strdup (app);
        self->entries [index].address = strdup (address);
        self->entries [index].handlers = NULL;
        self->size++;
        s_view_reset (self);
        changed = 1;
    }
    bool listed_now = !found;
    s_entry_t *entry = &self->entries [index];
    entry->update_time = now;
    if (handlers && (!entry->handlers || strneq (entry->handlers, handlers))) {
        free (entry->handlers);
        entry->handlers = strdup (handlers);
    }
    s_route_t *route = s_route (self, address);
    if (!route) {
        if (self->routes_size == self->routes_alloc) {
            size_t alloc = self->routes_alloc? self->routes_alloc * 2: 16;
            s_route_t *routes = (s_route_t *) realloc (self->routes, alloc * sizeof (s_route_t));
            if (!routes)
                return -1;
            self->routes = routes;
            self->routes_alloc = alloc;
        }
        route = &self->routes [self->routes_size++];
        route->address = strdup (address);
        zhashx_insert (self->route_index, address, (void *) (uintptr_t) self->routes_size);
        route->rid = NULL;
        route->rid_size = 0;
        route->parting = NULL;
        route->parting_size = 0;
        route->run_batch = 0;
        route->listed = 0;
    }
    if (listed_now)
        route->listed++;
    if (route->parting) {
        //  (registered again: the old one is no way to it now)
        s_rid_count (self, route->parting, route->parting_size, s_slot (self, route), false);
        free (route->parting);
        route->parting = NULL;
        route->parting_size = 0;
    }
    if (route->rid_size != rid_size || !route->rid || memcmp (route->rid, rid, rid_size)) {
        void *copy = malloc (rid_size);
        if (!copy)
            return -1;
        memcpy (copy, rid, rid_size);
        if (route->rid)
            s_rid_count (self, route->rid, route->rid_size, s_slot (self, route), false);
        free (route->rid);
        route->rid = copy;
        route->rid_size = rid_size;
        s_rid_count (self, route->rid, route->rid_size, s_slot (self, route), true);
        s_view_reset (self);
        changed = 1;
    }
    return changed;
}

static void
s_remove_at (xxl_registry_t *self, size_t index)
{
    //  An address no app lists any more is not routed to either: nothing
    //  goes to a connection that said goodbye or stopped beating
    s_route_t *route = s_route (self, self->entries [index].address);
    assert (route && route->listed > 0);
    if (--route->listed == 0 && route->rid) {
        //  (kept for LOG and KILL: a draining agent still answers them;
        //  the connection's count is unchanged: rid becomes parting)
        if (route->parting)
            s_rid_count (self, route->parting, route->parting_size, s_slot (self, route), false);
        free (route->parting);
        route->parting = route->rid;
        route->parting_size = route->rid_size;
        route->rid = NULL;
        route->rid_size = 0;
    }
    free (self->entries [index].app);
    free (self->entries [index].address);
    free (self->entries [index].handlers);
    memmove (self->entries + index, self->entries + index + 1,
             (self->size - index - 1) * sizeof (s_entry_t));
    self->size--;
    s_view_reset (self);
}

int
xxl_registry_remove (xxl_registry_t *self, const char *app, const char *address)
{
    int found;
    size_t index = s_find (self, app, address, &found);
    if (!found)
        return -1;
    s_remove_at (self, index);
    return 0;
}

int
xxl_registry_expire (xxl_registry_t *self, int64_t dead_before)
{
    int removed = 0;
    for (size_t i = 0; i < self->size; ) {
        if (self->entries [i].update_time < dead_before) {
            //  (the first ten of a check by name; the caller logs the total)
            if (removed < 10) {
                char app [300], address [300];
                zsys_info ("registry: %s/%s missed its beats, removed",
                           xxl_printable (self->entries [i].app, app, sizeof app),
                           xxl_printable (self->entries [i].address, address, sizeof address));
            }
            s_remove_at (self, i);
            removed++;
        }
        else
            i++;
    }
    return removed;
}

size_t
xxl_registry_addresses (xxl_registry_t *self, const char *app,
                        const char *const **addresses)
{
    if (!self->view_app || strneq (self->view_app, app)) {
        s_view_reset (self);
        free (self->view);
        self->view = (const char **) calloc (self->size + 1, sizeof (char *));
        int found;
        size_t index = s_find (self, app, "", &found);
        size_t count = 0;
        //  Connected addresses only: nothing is routed to a connection known
        //  to be gone (a failed send, an agent that said goodbye)
        for (; index < self->size && streq (self->entries [index].app, app); index++) {
            s_route_t *route = s_route (self, self->entries [index].address);
            if (route && route->rid)
                self->view [count++] = self->entries [index].address;
        }
        self->view_size = count;
        self->view_app = strdup (app);
    }
    *addresses = self->view;
    return self->view_size;
}

const void *
xxl_registry_route (xxl_registry_t *self, const char *address, size_t *size)
{
    s_route_t *route = s_route (self, address);
    if (!route || !route->rid)
        return NULL;
    *size = route->rid_size;
    return route->rid;
}

void
xxl_registry_set_run_batch (xxl_registry_t *self, const char *address, int run_batch)
{
    s_route_t *route = s_route (self, address);
    if (route)
        route->run_batch = run_batch > 1? run_batch: 0;
}

int
xxl_registry_run_batch (xxl_registry_t *self, const char *address)
{
    s_route_t *route = s_route (self, address);
    return route && route->rid? route->run_batch: 0;
}

void
xxl_registry_unroute (xxl_registry_t *self, const char *address,
                      const void *rid, size_t rid_size)
{
    s_route_t *route = s_route (self, address);
    if (route && route->parting && route->parting_size == rid_size
    &&  memcmp (route->parting, rid, rid_size) == 0) {
        s_rid_count (self, route->parting, route->parting_size, s_slot (self, route), false);
        free (route->parting);
        route->parting = NULL;
        route->parting_size = 0;
    }
    if (route && route->rid && route->rid_size == rid_size
    &&  memcmp (route->rid, rid, rid_size) == 0) {
        s_rid_count (self, route->rid, route->rid_size, s_slot (self, route), false);
        free (route->rid);
        route->rid = NULL;
        route->rid_size = 0;
        s_view_reset (self);
    }
}

int
xxl_registry_each (xxl_registry_t *self, size_t *cursor, xxl_registry_entry_t *entry)
{
    if (*cursor >= self->size)
        return -1;
    s_entry_t *e = &self->entries [(*cursor)++];
    entry->app = e->app;
    entry->address = e->address;
    entry->handlers = e->handlers? e->handlers: "";
    entry->update_time = e->update_time;
    size_t size;
    entry->connected = xxl_registry_route (self, e->address, &size) != NULL;
    return 0;
}

bool
xxl_registry_listed (xxl_registry_t *self, const char *address)
{
    s_route_t *route = s_route (self, address);
    return route && route->listed > 0;
}

size_t
xxl_registry_size (xxl_registry_t *self)
{
    return self->size;
}

const char *
xxl_registry_address (xxl_registry_t *self, const char *address)
{
    s_route_t *route = s_route (self, address);
    return route && (route->rid || route->parting)? route->address: NULL;
}

bool
xxl_registry_has_rid (xxl_registry_t *self, const void *rid, size_t rid_size)
{
    size_t count;
    return xxl_registry_rid_address (self, rid, rid_size, &count) != NULL;
}

const char *
xxl_registry_rid_address (xxl_registry_t *self, const void *rid, size_t rid_size, size_t *count)
{
    *count = 0;
    if (!rid || !rid_size)
        return NULL;
    char key [2 * 256 + 1];
    s_rid_key (rid, rid_size, key, sizeof key);
    s_rid_t *entry = (s_rid_t *) zhashx_lookup (self->rid_index, key);
    if (!entry)
        return NULL;
    *count = entry->count;
    assert (entry->slot >= 1 && entry->slot <= self->routes_size);
    return self->routes [entry->slot - 1].address;
}

const void *
xxl_registry_route_last (xxl_registry_t *self, const char *address, size_t *size)
{
    s_route_t *route = s_route (self, address);
    if (route && route->rid) {
        *size = route->rid_size;
        return route->rid;
    }
    if (route && route->parting) {
        *size = route->parting_size;
        return route->parting;
    }
    return NULL;
}
