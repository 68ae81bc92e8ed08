/*  xxl_registry.c -- live agents: app → sorted addresses, address → route.

    Entries (app, address) live in one array kept sorted by (app,
    address); an app's address list is a slice of it, made into a pointer
    array per app when asked after a change.  Each address held has a
    route (found by a hash of the address) that counts the entries listing
    it, so removing an entry need not scan the others; each connection
    held (found by a hash of its routing id, hex) lists the routes that
    hold it, live or parting, so that what a message from a connection
    needs (is it registered, with how many addresses) costs the same with
    1,000 agents as with one, and so does forgetting a route.

    A route ends when no entry lists it and it holds no connection: it
    leaves the index at once (the address is unknown from then on, and
    comes back as a new route) and is freed at the next collect, so that
    the strings handed out during an engine turn outlive the turn.
*/

#include "xxl_registry.h"
#include "xxl/msg.h"

typedef struct _s_route_t s_route_t;
typedef struct _s_conn_t s_conn_t;
typedef struct _s_app_t s_app_t;

//  An address held
struct _s_route_t {
    char *address;
    s_conn_t *conn;                     //  the connection it holds (NULL: none)
    bool parting;                       //  conn is the one it unregistered from
                                        //  or expired on (LOG, KILL, results only)
    size_t listed;                      //  entries (apps) that list it
    int run_batch;                      //  TriggerParams per RUN it takes (0: single form)
    char *owner;                        //  the agent key that registered it, or NULL
    char *tags;                         //  its agent tags (canonical), or NULL: none
    s_route_t *prev, *next;             //  the other routes of conn; next also
                                        //  links the released ones
};

//  A connection held by one route or more
struct _s_conn_t {
    void *rid;
    size_t rid_size;
    size_t count;                       //  routes holding it
    s_route_t *routes;                  //  the first of them
};

//  An app name some entry has
struct _s_app_t {
    char *name;
    size_t entries;                     //  its entries
    const char **view;                  //  its connected addresses, sorted
    size_t view_size;
    bool view_ok;                       //  view holds for view_gen
    uint64_t view_gen;
};

typedef struct {
    s_app_t *app;
    s_route_t *route;                   //  (its address)
    char *handlers;
    int64_t update_time;                //  wall ms of its last beat (shown)
    int64_t beat_at;                    //  the caller's clock at its last beat
                                        //  (monotonic: what expire judges)
} s_entry_t;

struct _xxl_registry_t {
    s_entry_t *entries;
    size_t size, alloc;
    zhashx_t *route_index;              //  address → s_route_t
    zhashx_t *conn_index;               //  routing id in hex → s_conn_t
    zhashx_t *apps;                     //  app name → s_app_t
    size_t routes;                      //  in route_index
    size_t parting;                     //  routes parting
    size_t limit;                       //  entries + parting at most (0: none)
    uint64_t gen;                       //  changes when an address several apps
                                        //  list connects or disconnects
    s_route_t *released;                //  out of the index, freed at collect
    size_t released_count;
};

static const char *s_none [1] = { NULL };

static void
s_route_free (s_route_t **route_p)
{
    s_route_t *route = *route_p;
    if (route) {
        free (route->address);
        free (route->owner);
        free (route->tags);
        free (route);
        *route_p = NULL;
    }
}

static void
s_conn_destroy (s_conn_t **conn_p)
{
    s_conn_t *conn = *conn_p;
    if (conn) {
        free (conn->rid);
        free (conn);
        *conn_p = NULL;
    }
}

static void
s_app_destroy (s_app_t **app_p)
{
    s_app_t *app = *app_p;
    if (app) {
        free (app->name);
        free (app->view);
        free (app);
        *app_p = NULL;
    }
}

xxl_registry_t *
xxl_registry_new (void)
{
    xxl_registry_t *self = (xxl_registry_t *) zmalloc (sizeof (xxl_registry_t));
    self->route_index = zhashx_new ();
    self->conn_index = zhashx_new ();
    self->apps = zhashx_new ();
    if (!self->route_index || !self->conn_index || !self->apps) {
        zhashx_destroy (&self->route_index);
        zhashx_destroy (&self->conn_index);
        zhashx_destroy (&self->apps);
        free (self);
        return NULL;
    }
    zhashx_set_destructor (self->conn_index, (zhashx_destructor_fn *) s_conn_destroy);
    zhashx_set_destructor (self->apps, (zhashx_destructor_fn *) s_app_destroy);
    return self;
}

void
xxl_registry_destroy (xxl_registry_t **self_p)
{
    if (self_p && *self_p) {
        xxl_registry_t *self = *self_p;
        for (size_t i = 0; i < self->size; i++)
            free (self->entries [i].handlers);
        free (self->entries);
        xxl_registry_collect (self);
        //  (the route index does not own its routes: s_route_release)
        for (s_route_t *route = (s_route_t *) zhashx_first (self->route_index); route;
             route = (s_route_t *) zhashx_next (self->route_index))
            s_route_free (&route);
        zhashx_destroy (&self->route_index);
        zhashx_destroy (&self->conn_index);
        zhashx_destroy (&self->apps);
        free (self);
        *self_p = NULL;
    }
}

void
xxl_registry_set_limit (xxl_registry_t *self, size_t limit)
{
    self->limit = limit;
}

size_t
xxl_registry_limit (xxl_registry_t *self)
{
    return self->limit;
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
        const s_entry_t *entry = &self->entries [mid];
        int rc = s_compare (entry->app->name, entry->route->address, app, address);
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

//  The key of a routing id in conn_index (hex: ids are binary)
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

#define S_KEY_MAX (2 * 256 + 1)         //  (ZeroMQ routing ids are at most 255 bytes)

static s_conn_t *
s_conn (xxl_registry_t *self, const void *rid, size_t rid_size)
{
    if (!rid || !rid_size)
        return NULL;
    char key [S_KEY_MAX];
    s_rid_key (rid, rid_size, key, sizeof key);
    return (s_conn_t *) zhashx_lookup (self->conn_index, key);
}

static s_route_t *
s_route (xxl_registry_t *self, const char *address)
{
    if (!address)
        return NULL;
    s_route_t *route = (s_route_t *) zhashx_lookup (self->route_index, address);
    assert (!route || streq (route->address, address));
    return route;
}

static bool
s_connected (const s_route_t *route)
{
    return route->conn && !route->parting;
}

//  The views that list route are void: its app's when only that app
//  lists it, else every app's
static void
s_views_void (xxl_registry_t *self, s_route_t *route, s_app_t *app)
{
    if (route->listed == 0)
        return;                         //  (in no view)
    if (app && route->listed == 1)
        app->view_ok = false;
    else
        self->gen++;
}

//  Takes a route out of the index (nothing lists it, it holds no
//  connection); freed at the next collect
static void
s_route_release (xxl_registry_t *self, s_route_t *route)
{
    assert (route->listed == 0 && !route->conn);
    zhashx_delete (self->route_index, route->address);
    self->routes--;
    route->prev = NULL;
    route->next = self->released;
    self->released = route;
    self->released_count++;
}

//  route lets go of its connection (forgetting the connection when it was
//  the last route on it); a route left with nothing is released
static void
s_conn_let_go (xxl_registry_t *self, s_route_t *route)
{
    s_conn_t *conn = route->conn;
    assert (conn && conn->count > 0);
    if (route->prev)
        route->prev->next = route->next;
    else
        conn->routes = route->next;
    if (route->next)
        route->next->prev = route->prev;
    route->prev = route->next = NULL;
    route->conn = NULL;
    if (route->parting) {
        assert (self->parting > 0);
        self->parting--;
        route->parting = false;
    }
    if (--conn->count == 0) {
        assert (!conn->routes);
        char key [S_KEY_MAX];
        s_rid_key (conn->rid, conn->rid_size, key, sizeof key);
        zhashx_delete (self->conn_index, key);
    }
    if (route->listed == 0)
        s_route_release (self, route);
}

//  route (holding none) takes the connection rid, live
static void
s_conn_take (xxl_registry_t *self, s_route_t *route, const void *rid, size_t rid_size)
{
    assert (!route->conn);
    s_conn_t *conn = s_conn (self, rid, rid_size);
    if (!conn) {
        conn = (s_conn_t *) zmalloc (sizeof (s_conn_t));
        conn->rid = malloc (rid_size);
        assert (conn->rid);
        memcpy (conn->rid, rid, rid_size);
        conn->rid_size = rid_size;
        char key [S_KEY_MAX];
        s_rid_key (rid, rid_size, key, sizeof key);
        zhashx_insert (self->conn_index, key, conn);
    }
    route->next = conn->routes;
    route->prev = NULL;
    if (conn->routes)
        conn->routes->prev = route;
    conn->routes = route;
    conn->count++;
    route->conn = conn;
    route->parting = false;
}

static bool
s_same_rid (const s_conn_t *conn, const void *rid, size_t rid_size)
{
    return conn && conn->rid_size == rid_size && memcmp (conn->rid, rid, rid_size) == 0;
}

int
xxl_registry_beat (xxl_registry_t *self, const char *app_name, const char *address,
                   const void *rid, size_t rid_size, const char *handlers, int64_t now)
{
    if (!app_name || !*app_name || !address || !*address || !rid || !rid_size
    ||  rid_size > 255)
        return -1;
    int changed = 0, found;
    size_t index = s_find (self, app_name, address, &found);
    s_route_t *route = s_route (self, address);
    if (!found) {
        //  (a parting address that comes back leaves its parting place)
        if (self->limit && self->size + self->parting >= self->limit
        &&  !(route && route->parting))
            return XXL_REGISTRY_FULL;
        if (self->size == self->alloc) {
            size_t alloc = self->alloc? self->alloc * 2: 16;
            s_entry_t *entries = (s_entry_t *) realloc (self->entries, alloc * sizeof (s_entry_t));
            if (!entries)
                return -1;
            self->entries = entries;
            self->alloc = alloc;
        }
        if (!route) {
            route = (s_route_t *) zmalloc (sizeof (s_route_t));
            route->address = strdup (address);
            if (!route->address) {
                free (route);
                return -1;
            }
            zhashx_insert (self->route_index, address, route);
            self->routes++;
        }
        s_app_t *app = (s_app_t *) zhashx_lookup (self->apps, app_name);
        if (!app) {
            app = (s_app_t *) zmalloc (sizeof (s_app_t));
            app->name = strdup (app_name);
            assert (app->name);
            zhashx_insert (self->apps, app_name, app);
        }
        memmove (self->entries + index + 1, self->entries + index,
                 (self->size - index) * sizeof (s_entry_t));
        self->entries [index] = (s_entry_t) { .app = app, .route = route };
        self->size++;
        app->entries++;
        app->view_ok = false;
        route->listed++;
        changed = 1;
    }
    s_entry_t *entry = &self->entries [index];
    entry->update_time = zclock_time ();
    entry->beat_at = now;
    if (handlers && (!entry->handlers || strneq (entry->handlers, handlers))) {
        char *copy = strdup (handlers);
        if (copy) {
            free (entry->handlers);
            entry->handlers = copy;
        }
    }
    if (!s_connected (route) || !s_same_rid (route->conn, rid, rid_size)) {
        //  (registered here again: the connection it parted from, or had,
        //  is no way to it now)
        bool was_connected = s_connected (route);
        if (route->conn)
            s_conn_let_go (self, route);    //  (listed: not released)
        s_conn_take (self, route, rid, rid_size);
        if (!was_connected)
            s_views_void (self, route, entry->app);
        changed = 1;
    }
    return changed;
}

static void
s_remove_at (xxl_registry_t *self, size_t index)
{
    s_entry_t entry = self->entries [index];
    memmove (self->entries + index, self->entries + index + 1,
             (self->size - index - 1) * sizeof (s_entry_t));
    self->size--;
    //  (room follows what is held: a burst of agents gone frees its room)
    if (self->alloc > 64 && self->size < self->alloc / 4) {
        s_entry_t *entries = (s_entry_t *) realloc (self->entries,
                                                    self->alloc / 2 * sizeof (s_entry_t));
        if (entries) {
            self->entries = entries;
            self->alloc /= 2;
        }
    }
    free (entry.handlers);
    s_app_t *app = entry.app;
    app->view_ok = false;
    if (--app->entries == 0)
        zhashx_delete (self->apps, app->name);
    //  An address no app lists any more is not routed to either: nothing
    //  goes to a connection that said goodbye or stopped beating.  Its
    //  connection is kept for LOG and KILL (a draining agent still answers
    //  them, and sends its results) until it closes.
    s_route_t *route = entry.route;
    assert (route->listed > 0 && !route->parting);
    if (--route->listed == 0) {
        if (route->conn) {
            route->parting = true;
            self->parting++;
        }
        else
            s_route_release (self, route);
    }
}

int
xxl_registry_remove (xxl_registry_t *self, const char *app, const char *address)
{
    if (!app || !address)
        return -1;
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
        if (self->entries [i].beat_at < dead_before) {
            //  (the first ten of a check by name; the caller logs the total)
            if (removed < 10) {
                char app [300], address [300];
                zsys_info ("registry: %s/%s missed its beats, removed",
                           xxl_printable (self->entries [i].app->name, app, sizeof app),
                           xxl_printable (self->entries [i].route->address, address,
                                          sizeof address));
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
xxl_registry_addresses (xxl_registry_t *self, const char *app_name,
                        const char *const **addresses)
{
    s_app_t *app = app_name? (s_app_t *) zhashx_lookup (self->apps, app_name): NULL;
    if (!app) {
        *addresses = s_none;
        return 0;
    }
    if (!app->view_ok || app->view_gen != self->gen) {
        const char **view = (const char **) realloc (app->view,
                                                     (app->entries + 1) * sizeof (char *));
        assert (view);
        app->view = view;
        int found;
        size_t index = s_find (self, app_name, "", &found);
        size_t count = 0;
        //  Connected addresses only: nothing is routed to a connection known
        //  to be gone (a failed send, an agent that said goodbye)
        for (; index < self->size && self->entries [index].app == app; index++)
            if (s_connected (self->entries [index].route))
                view [count++] = self->entries [index].route->address;
        assert (count <= app->entries);
        view [count] = NULL;
        app->view_size = count;
        app->view_ok = true;
        app->view_gen = self->gen;
    }
    *addresses = app->view;
    return app->view_size;
}

const void *
xxl_registry_route (xxl_registry_t *self, const char *address, size_t *size)
{
    s_route_t *route = s_route (self, address);
    if (!route || !s_connected (route))
        return NULL;
    *size = route->conn->rid_size;
    return route->conn->rid;
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
    return route && s_connected (route)? route->run_batch: 0;
}

void
xxl_registry_set_owner (xxl_registry_t *self, const char *address, const char *key)
{
    s_route_t *route = s_route (self, address);
    if (!route || (route->owner && key && streq (route->owner, key)))
        return;
    free (route->owner);
    route->owner = key? strdup (key): NULL;
}

void
xxl_registry_set_tags (xxl_registry_t *self, const char *address, const char *tags)
{
    s_route_t *route = s_route (self, address);
    if (!route)
        return;
    if (tags && !*tags)
        tags = NULL;
    if (tags && route->tags && streq (route->tags, tags))
        return;
    free (route->tags);
    route->tags = tags? strdup (tags): NULL;
}

const char *
xxl_registry_tags (xxl_registry_t *self, const char *address)
{
    s_route_t *route = address? s_route (self, address): NULL;
    return route && route->tags? route->tags: "";
}

bool
xxl_registry_parting (xxl_registry_t *self, const char *address)
{
    s_route_t *route = s_route (self, address);
    return route && route->parting;
}

const char *
xxl_registry_owner (xxl_registry_t *self, const char *address)
{
    s_route_t *route = s_route (self, address);
    return route? route->owner: NULL;
}

void
xxl_registry_unroute (xxl_registry_t *self, const char *address,
                      const void *rid, size_t rid_size)
{
    s_route_t *route = s_route (self, address);
    if (!route || !rid || !s_same_rid (route->conn, rid, rid_size))
        return;
    if (s_connected (route))
        s_views_void (self, route, NULL);
    s_conn_let_go (self, route);
}

size_t
xxl_registry_gone (xxl_registry_t *self, const void *rid, size_t rid_size)
{
    s_conn_t *conn = s_conn (self, rid, rid_size);
    size_t connected = 0;
    //  (the last route to let go frees conn: its list is read before)
    for (s_route_t *route = conn? conn->routes: NULL, *next; route; route = next) {
        next = route->next;
        if (s_connected (route)) {
            if (connected++ < 10) {
                char name [300];
                zsys_info ("registry: %s is not connected (its connection closed)",
                           xxl_printable (route->address, name, sizeof name));
            }
            s_views_void (self, route, NULL);
        }
        s_conn_let_go (self, route);
    }
    if (connected > 10)
        zsys_info ("registry: %zu addresses of one connection are not connected (it closed)",
                   connected);
    return connected;
}

size_t
xxl_registry_rid_connected (xxl_registry_t *self, const void *rid, size_t rid_size,
                            const char **addresses, size_t max)
{
    s_conn_t *conn = s_conn (self, rid, rid_size);
    size_t count = 0;
    for (s_route_t *route = conn? conn->routes: NULL; route; route = route->next)
        if (s_connected (route)) {
            if (count < max)
                addresses [count] = route->address;
            count++;
        }
    return count;
}

const void *
xxl_registry_rid_first (xxl_registry_t *self, size_t *size)
{
    s_conn_t *conn = (s_conn_t *) zhashx_first (self->conn_index);
    *size = conn? conn->rid_size: 0;
    return conn? conn->rid: NULL;
}

const void *
xxl_registry_rid_next (xxl_registry_t *self, size_t *size)
{
    s_conn_t *conn = (s_conn_t *) zhashx_next (self->conn_index);
    *size = conn? conn->rid_size: 0;
    return conn? conn->rid: NULL;
}

void
xxl_registry_collect (xxl_registry_t *self)
{
    while (self->released) {
        s_route_t *route = self->released;
        self->released = route->next;
        s_route_free (&route);
    }
    self->released_count = 0;
}

int
xxl_registry_each (xxl_registry_t *self, size_t *cursor, xxl_registry_entry_t *entry)
{
    if (*cursor >= self->size)
        return -1;
    s_entry_t *e = &self->entries [(*cursor)++];
    entry->app = e->app->name;
    entry->address = e->route->address;
    entry->handlers = e->handlers? e->handlers: "";
    entry->update_time = e->update_time;
    entry->connected = s_connected (e->route);
    entry->tags = e->route->tags? e->route->tags: "";
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
    return route && route->conn? route->address: NULL;
}

bool
xxl_registry_has_rid (xxl_registry_t *self, const void *rid, size_t rid_size)
{
    return s_conn (self, rid, rid_size) != NULL;
}

const char *
xxl_registry_rid_address (xxl_registry_t *self, const void *rid, size_t rid_size, size_t *count)
{
    s_conn_t *conn = s_conn (self, rid, rid_size);
    *count = conn? conn->count: 0;
    assert (!conn || (conn->routes && conn->routes->conn == conn));
    return conn? conn->routes->address: NULL;
}

const void *
xxl_registry_route_last (xxl_registry_t *self, const char *address, size_t *size)
{
    s_route_t *route = s_route (self, address);
    if (!route || !route->conn)
        return NULL;
    *size = route->conn->rid_size;
    return route->conn->rid;
}

void
xxl_registry_stats (xxl_registry_t *self, xxl_registry_stats_t *stats)
{
    stats->entries = self->size;
    stats->addresses = self->routes;
    stats->parting = self->parting;
    stats->connections = zhashx_size (self->conn_index);
    stats->apps = zhashx_size (self->apps);
    stats->released = self->released_count;
    stats->entries_alloc = self->alloc;
}
