/*  consistent_hash.c -- the CONSISTENT_HASH router, bit for bit XXL-JOB's.

    As XXL-JOB's ExecutorRouteConsistentHash, so that a job migrated from
    XXL-JOB lands on the same address for the same address list:

    - hash(s) = the first four bytes of MD5(s) (UTF-8 bytes), little-endian,
      as an unsigned 32-bit number: d[3]<<24 | d[2]<<16 | d[1]<<8 | d[0];
    - the ring holds 100 virtual nodes per address, keyed
      hash("SHARD-" + address + "-NODE-" + i), i = 0..99, in address order;
      on equal keys the node put last wins (Java TreeMap.put replaces);
    - the job goes to the first node whose key >= hash(decimal job id),
      else to the first node of the ring.

    XXL-JOB rebuilds the ring on every trigger; we keep the rings of the
    last few address lists (S_CACHE_SLOTS) and rebuild only when a list
    changes.  MD5 comes from libmd (pkg-config libmd).
*/

#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include <pthread.h>
#include <md5.h>
#include <xxl/router.h>

#define S_VIRTUAL_NODES 100
#define S_CACHE_SLOTS   8

typedef struct {
    uint32_t key;                       //  hash of the virtual node
    uint32_t seq;                       //  insertion order (for equal keys)
    size_t index;                       //  address index in the list
} s_node_t;

typedef struct {
    char **addresses;                   //  the list this ring is for (copies)
    size_t count;
    s_node_t *nodes;                    //  sorted by key, keys unique
    size_t nnodes;
    uint64_t used;                      //  last use tick, for eviction
} s_ring_t;

typedef struct {
    pthread_mutex_t mutex;
    s_ring_t *slots [S_CACHE_SLOTS];
    uint64_t tick;
} s_state_t;

static uint32_t
s_hash (const char *key)
{
    uint8_t digest [MD5_DIGEST_LENGTH];
    MD5_CTX ctx;
    MD5Init (&ctx);
    MD5Update (&ctx, (const uint8_t *) key, strlen (key));
    MD5Final (digest, &ctx);
    return (uint32_t) digest [3] << 24 | (uint32_t) digest [2] << 16
         | (uint32_t) digest [1] << 8 | (uint32_t) digest [0];
}

static void
s_ring_destroy (s_ring_t **ring_p)
{
    if (!ring_p || !*ring_p)
        return;
    s_ring_t *ring = *ring_p;
    if (ring->addresses)
        for (size_t i = 0; i < ring->count; i++)
            free (ring->addresses [i]);
    free (ring->addresses);
    free (ring->nodes);
    free (ring);
    *ring_p = NULL;
}

static int
s_node_cmp (const void *a, const void *b)
{
    const s_node_t *x = (const s_node_t *) a, *y = (const s_node_t *) b;
    if (x->key != y->key)
        return x->key < y->key? -1: 1;
    return x->seq < y->seq? -1: x->seq > y->seq;
}

//  Builds the ring of an address list; NULL when out of memory.
static s_ring_t *
s_ring_new (const char *const *addresses, size_t count)
{
    s_ring_t *ring = (s_ring_t *) calloc (1, sizeof (s_ring_t));
    if (!ring)
        return NULL;
    ring->addresses = (char **) calloc (count, sizeof (char *));
    ring->nodes = (s_node_t *) malloc (count * S_VIRTUAL_NODES * sizeof (s_node_t));
    if (!ring->addresses || !ring->nodes) {
        s_ring_destroy (&ring);
        return NULL;
    }
    ring->count = count;
    size_t n = 0;
    for (size_t i = 0; i < count; i++) {
        size_t keylen = strlen (addresses [i]) + 32;
        char *key = (char *) malloc (keylen);
        ring->addresses [i] = strdup (addresses [i]);
        if (!key || !ring->addresses [i]) {
            free (key);
            s_ring_destroy (&ring);
            return NULL;
        }
        for (int v = 0; v < S_VIRTUAL_NODES; v++) {
            snprintf (key, keylen, "SHARD-%s-NODE-%d", addresses [i], v);
            ring->nodes [n].key = s_hash (key);
            ring->nodes [n].seq = (uint32_t) n;
            ring->nodes [n].index = i;
            n++;
        }
        free (key);
    }
    qsort (ring->nodes, n, sizeof (s_node_t), s_node_cmp);
    //  Keep the last-put node of each key, as TreeMap.put does
    size_t out = 0;
    for (size_t k = 0; k < n; k++) {
        if (out > 0 && ring->nodes [out - 1].key == ring->nodes [k].key)
            ring->nodes [out - 1] = ring->nodes [k];
        else
            ring->nodes [out++] = ring->nodes [k];
    }
    ring->nnodes = out;
    return ring;
}

static int
s_ring_matches (const s_ring_t *ring, const char *const *addresses, size_t count)
{
    if (ring->count != count)
        return 0;
    for (size_t i = 0; i < count; i++)
        if (strcmp (ring->addresses [i], addresses [i]) != 0)
            return 0;
    return 1;
}

//  Address index for a job on a ring
static int
s_ring_pick (const s_ring_t *ring, int64_t job_id)
{
    char text [32];
    snprintf (text, sizeof text, "%" PRId64, job_id);
    uint32_t key = s_hash (text);
    size_t lo = 0, hi = ring->nnodes;
    while (lo < hi) {                   //  first node with node key >= key
        size_t mid = lo + (hi - lo) / 2;
        if (ring->nodes [mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (int) ring->nodes [lo < ring->nnodes? lo: 0].index;
}

static void *
s_init (const xxl_router_host_t *host, const char **error)
{
    (void) host;
    s_state_t *self = (s_state_t *) calloc (1, sizeof (s_state_t));
    if (!self || pthread_mutex_init (&self->mutex, NULL) != 0) {
        free (self);
        *error = "out of memory";
        return NULL;
    }
    return self;
}

static void
s_destroy (void *state)
{
    s_state_t *self = (s_state_t *) state;
    if (!self)
        return;
    for (int s = 0; s < S_CACHE_SLOTS; s++)
        s_ring_destroy (&self->slots [s]);
    pthread_mutex_destroy (&self->mutex);
    free (self);
}

static int
s_consistent_hash (void *state, const xxl_router_host_t *host, xxl_route_call_t *call)
{
    s_state_t *self = (s_state_t *) state;
    (void) host;
    int pick = -1;
    pthread_mutex_lock (&self->mutex);
    for (int s = 0; s < S_CACHE_SLOTS; s++)
        if (self->slots [s] && s_ring_matches (self->slots [s], call->addresses, call->count)) {
            self->slots [s]->used = ++self->tick;
            pick = s_ring_pick (self->slots [s], call->job_id);
            break;
        }
    pthread_mutex_unlock (&self->mutex);
    if (pick >= 0)
        return pick;

    //  Not cached: build outside the lock, answer, then cache it
    s_ring_t *ring = s_ring_new (call->addresses, call->count);
    if (!ring) {
        xxl_route_msg (call, "CONSISTENT_HASH: out of memory");
        return -1;
    }
    pick = s_ring_pick (ring, call->job_id);
    pthread_mutex_lock (&self->mutex);
    int victim = -1;
    for (int s = 0; s < S_CACHE_SLOTS && victim < 0; s++)
        if (self->slots [s] && s_ring_matches (self->slots [s], call->addresses, call->count))
            victim = s;                 //  another thread cached it meanwhile
    for (int s = 0; s < S_CACHE_SLOTS && victim < 0; s++)
        if (!self->slots [s])
            victim = s;
    if (victim < 0) {                   //  evict the least recently used
        victim = 0;
        for (int s = 1; s < S_CACHE_SLOTS; s++)
            if (self->slots [s]->used < self->slots [victim]->used)
                victim = s;
    }
    s_ring_destroy (&self->slots [victim]);
    ring->used = ++self->tick;
    self->slots [victim] = ring;
    pthread_mutex_unlock (&self->mutex);
    return pick;
}

static const xxl_router_t s_routers [] = {
    { "CONSISTENT_HASH", s_consistent_hash, 0 },
    { NULL, NULL, 0 }
};

XXL_ROUTER_PLUGIN ("consistent_hash", "1.0", s_init, s_destroy, s_routers)
