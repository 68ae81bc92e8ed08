/*  xxl_heard.c -- when each agent address was last heard, and its run
    lease.  Contract in xxl_heard.h. */

#include "xxl_heard.h"
#include <czmq.h>

typedef struct {
    int64_t at;                         //  its last REGISTER (mono ms)
    int64_t lease;                      //  ms; 0: none
} s_entry_t;

struct _xxl_heard_t {
    zhashx_t *entries;                  //  address -> s_entry_t
    int64_t start;
    int64_t longest;                    //  the longest lease said (0: none yet)
};

static void
s_entry_free (void **item)
{
    free (*item);
    *item = NULL;
}

xxl_heard_t *
xxl_heard_new (int64_t start)
{
    xxl_heard_t *self = (xxl_heard_t *) zmalloc (sizeof (xxl_heard_t));
    self->entries = zhashx_new ();
    if (!self->entries) {
        free (self);
        return NULL;
    }
    zhashx_set_destructor (self->entries, s_entry_free);
    self->start = start;
    return self;
}

void
xxl_heard_destroy (xxl_heard_t **self_p)
{
    assert (self_p);
    xxl_heard_t *self = *self_p;
    if (self) {
        zhashx_destroy (&self->entries);
        free (self);
        *self_p = NULL;
    }
}

void
xxl_heard_note (xxl_heard_t *self, const char *address, int64_t now, int64_t lease_ms)
{
    assert (self && address);
    if (lease_ms < 0)
        lease_ms = 0;
    s_entry_t *entry = (s_entry_t *) zhashx_lookup (self->entries, address);
    if (!entry) {
        entry = (s_entry_t *) zmalloc (sizeof (s_entry_t));
        if (zhashx_insert (self->entries, address, entry)) {
            free (entry);
            return;
        }
    }
    if (now > entry->at)
        entry->at = now;
    entry->lease = lease_ms;
    if (lease_ms > self->longest)
        self->longest = lease_ms;
}

int64_t
xxl_heard_lease (xxl_heard_t *self, const char *address)
{
    assert (self && address);
    s_entry_t *entry = (s_entry_t *) zhashx_lookup (self->entries, address);
    if (entry)
        return entry->lease;
    return self->longest? self->longest: XXL_HEARD_LEASE_DEFAULT;
}

int64_t
xxl_heard_until (xxl_heard_t *self, const char *address)
{
    assert (self && address);
    s_entry_t *entry = (s_entry_t *) zhashx_lookup (self->entries, address);
    int64_t at = entry? entry->at: self->start;
    int64_t lease = xxl_heard_lease (self, address);
    return lease > 0? at + lease + XXL_HEARD_MARGIN_MS: 0;
}

size_t
xxl_heard_prune (xxl_heard_t *self, int64_t now)
{
    assert (self);
    zlistx_t *old = zlistx_new ();
    assert (old);
    for (s_entry_t *entry = (s_entry_t *) zhashx_first (self->entries); entry;
         entry = (s_entry_t *) zhashx_next (self->entries))
        if (entry->at + entry->lease + XXL_HEARD_MARGIN_MS + 3600 * 1000 < now)
            zlistx_add_end (old, (void *) zhashx_cursor (self->entries));
    size_t count = zlistx_size (old);
    //  (each key is deleted before the next is read: keys are the map's)
    const char *key;
    while ((key = (const char *) zlistx_detach (old, NULL))) {
        char *copy = strdup (key);
        assert (copy);
        zhashx_delete (self->entries, copy);
        free (copy);
    }
    zlistx_destroy (&old);
    return count;
}

size_t
xxl_heard_size (xxl_heard_t *self)
{
    assert (self);
    return zhashx_size (self->entries);
}
