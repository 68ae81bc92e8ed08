/*  xxl_jobmap.c -- per-job state shared by the stateful shipped routers.

    A chained hash map from job id to a stable entry (nodes never move, so
    an entry pointer stays good until the daily clear), one mutex, and the
    daily expiry; plus the address list kept in step with the registered
    addresses that LFU and LRU use.  See xxl_jobmap.h.
*/

#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <xxl/router.h>
#include "xxl_jobmap.h"

typedef struct _node_t {
    xxl_jobmap_entry_t entry;
    struct _node_t *next;
} node_t;

struct _xxl_jobmap_t {
    pthread_mutex_t mutex;
    void (*free_fn) (void *data);
    node_t **buckets;
    size_t nbuckets;                    //  a power of two
    size_t size;
    int64_t valid_until;                //  clear when now is past this
    int fresh;                          //  1 until the first expire
};

#define S_INITIAL_BUCKETS 64

static size_t
s_hash (int64_t job_id)
{
    uint64_t x = (uint64_t) job_id;
    x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27; x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return (size_t) x;
}

xxl_jobmap_t *
xxl_jobmap_new (void (*free_fn) (void *data))
{
    xxl_jobmap_t *self = (xxl_jobmap_t *) calloc (1, sizeof (xxl_jobmap_t));
    if (!self)
        return NULL;
    self->buckets = (node_t **) calloc (S_INITIAL_BUCKETS, sizeof (node_t *));
    if (!self->buckets) {
        free (self);
        return NULL;
    }
    if (pthread_mutex_init (&self->mutex, NULL) != 0) {
        free (self->buckets);
        free (self);
        return NULL;
    }
    self->nbuckets = S_INITIAL_BUCKETS;
    self->free_fn = free_fn;
    self->fresh = 1;
    return self;
}

static void
s_clear (xxl_jobmap_t *self)
{
    for (size_t i = 0; i < self->nbuckets; i++) {
        node_t *node = self->buckets [i];
        while (node) {
            node_t *next = node->next;
            if (self->free_fn && node->entry.data)
                self->free_fn (node->entry.data);
            free (node);
            node = next;
        }
        self->buckets [i] = NULL;
    }
    self->size = 0;
}

void
xxl_jobmap_destroy (xxl_jobmap_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    xxl_jobmap_t *self = *self_p;
    s_clear (self);
    free (self->buckets);
    pthread_mutex_destroy (&self->mutex);
    free (self);
    *self_p = NULL;
}

void
xxl_jobmap_lock (xxl_jobmap_t *self)
{
    pthread_mutex_lock (&self->mutex);
}

void
xxl_jobmap_unlock (xxl_jobmap_t *self)
{
    pthread_mutex_unlock (&self->mutex);
}

int
xxl_jobmap_expire (xxl_jobmap_t *self, int64_t now_ms)
{
    if (!self->fresh && now_ms <= self->valid_until)
        return 0;
    s_clear (self);
    self->fresh = 0;
    self->valid_until = now_ms + XXL_ROUTER_CACHE_MS;
    return 1;
}

xxl_jobmap_entry_t *
xxl_jobmap_lookup (xxl_jobmap_t *self, int64_t job_id)
{
    node_t *node = self->buckets [s_hash (job_id) & (self->nbuckets - 1)];
    for (; node; node = node->next)
        if (node->entry.job_id == job_id)
            return &node->entry;
    return NULL;
}

//  Doubles the bucket array; on failure the map just stays denser.
static void
s_grow (xxl_jobmap_t *self)
{
    size_t nbuckets = self->nbuckets * 2;
    node_t **buckets = (node_t **) calloc (nbuckets, sizeof (node_t *));
    if (!buckets)
        return;
    for (size_t i = 0; i < self->nbuckets; i++) {
        node_t *node = self->buckets [i];
        while (node) {
            node_t *next = node->next;
            size_t b = s_hash (node->entry.job_id) & (nbuckets - 1);
            node->next = buckets [b];
            buckets [b] = node;
            node = next;
        }
    }
    free (self->buckets);
    self->buckets = buckets;
    self->nbuckets = nbuckets;
}

xxl_jobmap_entry_t *
xxl_jobmap_ensure (xxl_jobmap_t *self, int64_t job_id)
{
    xxl_jobmap_entry_t *entry = xxl_jobmap_lookup (self, job_id);
    if (entry)
        return entry;
    node_t *node = (node_t *) calloc (1, sizeof (node_t));
    if (!node)
        return NULL;
    node->entry.job_id = job_id;
    if (self->size >= self->nbuckets)
        s_grow (self);
    size_t b = s_hash (job_id) & (self->nbuckets - 1);
    node->next = self->buckets [b];
    self->buckets [b] = node;
    self->size++;
    return &node->entry;
}

size_t
xxl_jobmap_size (xxl_jobmap_t *self)
{
    return self->size;
}

//  --------------------------------------------------------------------------
//  Address lists

xxl_addrlist_t *
xxl_addrlist_new (void)
{
    return (xxl_addrlist_t *) calloc (1, sizeof (xxl_addrlist_t));
}

void
xxl_addrlist_free (void *list)
{
    xxl_addrlist_t *self = (xxl_addrlist_t *) list;
    if (!self)
        return;
    for (size_t i = 0; i < self->count; i++)
        free (self->items [i].address);
    free (self->items);
    free (self);
}

typedef struct {
    const char *address;
    size_t index;
} s_sorted_t;

static int
s_sorted_cmp (const void *a, const void *b)
{
    const s_sorted_t *x = (const s_sorted_t *) a, *y = (const s_sorted_t *) b;
    int rc = strcmp (x->address, y->address);
    if (rc)
        return rc;
    return x->index < y->index? -1: x->index > y->index;
}

//  Index in sorted [0, count) of the first unused entry for address, or -1
static long
s_find (const s_sorted_t *sorted, size_t count, const unsigned char *used,
        const char *address)
{
    size_t lo = 0, hi = count;
    while (lo < hi) {                   //  lower bound
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp (sorted [mid].address, address) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < count && strcmp (sorted [lo].address, address) == 0; lo++)
        if (!used [sorted [lo].index])
            return (long) lo;
    return -1;
}

int
xxl_addrlist_sync (xxl_addrlist_t *self, const char *const *addresses,
                   size_t count, size_t *index_of)
{
    //  Fast path: the same addresses in the same order as last time
    if (self->count == count) {
        size_t k;
        for (k = 0; k < count; k++)
            if (strcmp (self->items [k].address, addresses [k]) != 0)
                break;
        if (k == count) {
            for (k = 0; k < count; k++)
                index_of [k] = k;
            return 0;
        }
    }
    //  Slow path: look every kept item up in a sorted copy of addresses.
    //  All allocations happen before the list changes.
    s_sorted_t *sorted = (s_sorted_t *) malloc ((count? count: 1) * sizeof (s_sorted_t));
    unsigned char *used = (unsigned char *) calloc (count? count: 1, 1);
    xxl_addritem_t *items = (xxl_addritem_t *) calloc (count? count: 1, sizeof (xxl_addritem_t));
    char **copies = (char **) calloc (count? count: 1, sizeof (char *));
    int rc = -1;
    if (!sorted || !used || !items || !copies)
        goto done;
    for (size_t i = 0; i < count; i++) {
        sorted [i].address = addresses [i];
        sorted [i].index = i;
    }
    qsort (sorted, count, sizeof (s_sorted_t), s_sorted_cmp);

    //  Pass 1: which items stay, which addresses are new (no changes yet)
    long *match = (long *) malloc ((self->count? self->count: 1) * sizeof (long));
    if (!match)
        goto done;
    for (size_t k = 0; k < self->count; k++) {
        long pos = s_find (sorted, count, used, self->items [k].address);
        match [k] = pos < 0? -1: (long) sorted [pos].index;
        if (pos >= 0)
            used [sorted [pos].index] = 1;
    }
    for (size_t i = 0; i < count; i++)
        if (!used [i] && !(copies [i] = strdup (addresses [i]))) {
            free (match);
            goto done;
        }
    //  Pass 2: build the new item array
    size_t n = 0;
    for (size_t k = 0; k < self->count; k++) {
        if (match [k] >= 0) {
            index_of [n] = (size_t) match [k];
            items [n++] = self->items [k];
        }
        else
            free (self->items [k].address);
    }
    for (size_t i = 0; i < count; i++)
        if (copies [i]) {
            index_of [n] = i;
            items [n].address = copies [i];
            items [n++].value = -1;
            copies [i] = NULL;
        }
    free (match);
    free (self->items);
    self->items = items;
    self->count = n;
    self->capacity = count? count: 1;
    items = NULL;
    rc = 0;
done:
    if (copies)
        for (size_t i = 0; i < count; i++)
            free (copies [i]);
    free (copies);
    free (items);
    free (used);
    free (sorted);
    return rc;
}
