/*  xxl_imap.c -- a map from int64 keys to pointers (see xxl_imap.h).

    Its contract (ownership, threads, errors) is the header's.  Used by
    the executor (its queues by job id) and the ledger (runs in flight by
    logId), each under its own lock.
*/

#include "xxl_imap.h"

#include <stdlib.h>

typedef struct _node_t {
    int64_t key;
    void *value;
    struct _node_t *next;
} node_t;

struct _xxl_imap_t {
    node_t **buckets;
    size_t nbuckets, size;
};

static size_t
s_hash (int64_t key, size_t nbuckets)
{
    uint64_t x = (uint64_t) key * 0x9E3779B97F4A7C15ULL;
    return (size_t) (x >> 32) & (nbuckets - 1);
}

xxl_imap_t *
xxl_imap_new (void)
{
    xxl_imap_t *self = (xxl_imap_t *) calloc (1, sizeof (xxl_imap_t));
    if (!self)
        return NULL;
    self->nbuckets = 1024;
    self->buckets = (node_t **) calloc (self->nbuckets, sizeof (node_t *));
    if (!self->buckets) {
        free (self);
        return NULL;
    }
    return self;
}

void
xxl_imap_destroy (xxl_imap_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    xxl_imap_t *self = *self_p;
    *self_p = NULL;
    for (size_t i = 0; i < self->nbuckets; i++) {
        node_t *node = self->buckets [i];
        while (node) {
            node_t *next = node->next;
            free (node);
            node = next;
        }
    }
    free (self->buckets);
    free (self);
}

void *
xxl_imap_get (xxl_imap_t *self, int64_t key)
{
    for (node_t *node = self->buckets [s_hash (key, self->nbuckets)];
         node; node = node->next)
        if (node->key == key)
            return node->value;
    return NULL;
}

static void
s_grow (xxl_imap_t *self)
{
    size_t nbuckets = self->nbuckets * 2;
    node_t **buckets = (node_t **) calloc (nbuckets, sizeof (node_t *));
    if (!buckets)
        return;
    for (size_t i = 0; i < self->nbuckets; i++) {
        node_t *node = self->buckets [i];
        while (node) {
            node_t *next = node->next;
            size_t slot = s_hash (node->key, nbuckets);
            node->next = buckets [slot];
            buckets [slot] = node;
            node = next;
        }
    }
    free (self->buckets);
    self->buckets = buckets;
    self->nbuckets = nbuckets;
}

int
xxl_imap_put (xxl_imap_t *self, int64_t key, void *value)
{
    size_t slot = s_hash (key, self->nbuckets);
    for (node_t *node = self->buckets [slot]; node; node = node->next)
        if (node->key == key) {
            node->value = value;
            return 0;
        }
    node_t *node = (node_t *) malloc (sizeof (node_t));
    if (!node)
        return -1;
    node->key = key;
    node->value = value;
    node->next = self->buckets [slot];
    self->buckets [slot] = node;
    if (++self->size > self->nbuckets)
        s_grow (self);
    return 0;
}

void
xxl_imap_del (xxl_imap_t *self, int64_t key)
{
    node_t **link = &self->buckets [s_hash (key, self->nbuckets)];
    while (*link) {
        node_t *node = *link;
        if (node->key == key) {
            *link = node->next;
            free (node);
            self->size--;
            return;
        }
        link = &node->next;
    }
}

void *
xxl_imap_drain (xxl_imap_t *self, size_t *cursor)
{
    for (; *cursor < self->nbuckets; (*cursor)++)
        if (self->buckets [*cursor])
            return self->buckets [*cursor]->value;
    return NULL;
}
