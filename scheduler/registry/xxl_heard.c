/*  xxl_heard.c -- when each agent address was last heard, and its run
    lease.  Contract in xxl_heard.h. */

#include "xxl_heard.h"
#include <czmq.h>

typedef struct {
    int64_t at;                         //  its last REGISTER (mono ms)
    int64_t lease;                      //  ms; 0: none
    int64_t lease_longest;              //  ms, the longest it said while known
    int64_t closed;                     //  its connection found closed (mono ms;
                                        //  0: not since its last REGISTER)
    int64_t grace;                      //  ms held after the close
} s_entry_t;

struct _xxl_heard_t {
    zhashx_t *entries;                  //  address -> s_entry_t
    int64_t start;
    int64_t longest;                    //  the longest lease said (0: none yet)
    int64_t soonest;                    //  the soonest lost_at to come (INT64_MAX: none)
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
    self->soonest = INT64_MAX;
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
    if (lease_ms > entry->lease_longest)
        entry->lease_longest = lease_ms;
    entry->closed = 0;
    if (lease_ms > self->longest)
        self->longest = lease_ms;
}

int64_t
xxl_heard_rows_after (xxl_heard_t *self, const char *address, int64_t now, int64_t store_now)
{
    assert (self && address);
    s_entry_t *entry = (s_entry_t *) zhashx_lookup (self->entries, address);
    int64_t at = entry? entry->at: self->start;
    return store_now - (now - at) + XXL_HEARD_ROW_MS;
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
xxl_heard_lease_longest (xxl_heard_t *self, const char *address)
{
    assert (self && address);
    s_entry_t *entry = (s_entry_t *) zhashx_lookup (self->entries, address);
    return entry? entry->lease_longest: xxl_heard_lease (self, address);
}

int64_t
xxl_heard_until_longest (xxl_heard_t *self, const char *address)
{
    assert (self && address);
    s_entry_t *entry = (s_entry_t *) zhashx_lookup (self->entries, address);
    if (!entry)
        return xxl_heard_until (self, address);
    return entry->lease_longest > 0? entry->at + entry->lease_longest + XXL_HEARD_MARGIN_MS: 0;
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

void
xxl_heard_closed (xxl_heard_t *self, const char *address, int64_t now, int64_t grace)
{
    assert (self && address);
    s_entry_t *entry = (s_entry_t *) zhashx_lookup (self->entries, address);
    if (!entry || entry->closed)
        return;
    entry->closed = now > 0? now: 1;
    entry->grace = grace > 0? grace: 0;
    int64_t lost_at = xxl_heard_lost_at (self, address);
    if (lost_at && lost_at < self->soonest)
        self->soonest = lost_at;
}

//  An entry's lost_at (xxl_heard.h); 0 when none
static int64_t
s_lost_at (const s_entry_t *entry)
{
    if (!entry || !entry->closed || entry->lease <= 0)
        return 0;
    int64_t until = entry->at + entry->lease + XXL_HEARD_MARGIN_MS + XXL_HEARD_ROW_MS;
    int64_t after = entry->closed + entry->grace;
    return after > until? after: until;
}

int64_t
xxl_heard_lost_at (xxl_heard_t *self, const char *address)
{
    assert (self && address);
    s_entry_t *entry = (s_entry_t *) zhashx_lookup (self->entries, address);
    int64_t lost_at = s_lost_at (entry);
    assert (!lost_at || lost_at >= xxl_heard_until (self, address));
    return lost_at;
}

size_t
xxl_heard_lost_due (xxl_heard_t *self, int64_t now, const char **addresses, size_t max)
{
    assert (self && (addresses || !max));
    size_t count = 0;
    for (s_entry_t *entry = (s_entry_t *) zhashx_first (self->entries); entry;
         entry = (s_entry_t *) zhashx_next (self->entries)) {
        int64_t lost_at = s_lost_at (entry);
        if (lost_at && lost_at <= now) {
            if (count < max)
                addresses [count] = (const char *) zhashx_cursor (self->entries);
            count++;
        }
    }
    return count;
}

void
xxl_heard_lost_done (xxl_heard_t *self, const char *address)
{
    assert (self && address);
    s_entry_t *entry = (s_entry_t *) zhashx_lookup (self->entries, address);
    if (entry)
        entry->closed = 0;
}

int64_t
xxl_heard_soonest (xxl_heard_t *self)
{
    assert (self);
    return self->soonest;
}

void
xxl_heard_pass (xxl_heard_t *self, int64_t now)
{
    assert (self);
    self->soonest = INT64_MAX;
    for (s_entry_t *entry = (s_entry_t *) zhashx_first (self->entries); entry;
         entry = (s_entry_t *) zhashx_next (self->entries)) {
        int64_t lost_at = s_lost_at (entry);
        if (lost_at > now && lost_at < self->soonest)
            self->soonest = lost_at;
    }
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
