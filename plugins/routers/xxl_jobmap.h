/*  xxl_jobmap.h -- per-job state shared by the stateful shipped routers.

    Internal to plugins/routers (not part of the SDK): xxl_jobmap.c is
    compiled into round.so, lfu.so and lru.so, with hidden visibility so
    each plugin keeps its own copy.

    xxl_jobmap_t maps a job id to an entry the router owns (a number and a
    data pointer), guarded by one mutex, and forgets everything once a day
    as XXL-JOB's CACHE_VALID_TIME does.  xxl_addrlist_t is one job's list
    of addresses with a value each (LFU counts, LRU order), kept in step
    with the registered addresses: addresses that left are pruned.
*/

#ifndef XXL_JOBMAP_H_INCLUDED
#define XXL_JOBMAP_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#define XXL_JOBMAP_EXPORT __attribute__ ((visibility ("hidden")))

typedef struct {
    int64_t job_id;
    int64_t num;                        //  the router's number (ROUND count)
    void *data;                         //  the router's data, freed by the map
} xxl_jobmap_entry_t;

typedef struct _xxl_jobmap_t xxl_jobmap_t;

//  Creates an empty map; free_fn (may be NULL) frees an entry's data.
//  Returns NULL when out of memory.
XXL_JOBMAP_EXPORT xxl_jobmap_t *
    xxl_jobmap_new (void (*free_fn) (void *data));

//  Destroys the map and every entry's data; nulls *self_p.
XXL_JOBMAP_EXPORT void
    xxl_jobmap_destroy (xxl_jobmap_t **self_p);

//  Lock and unlock the map's mutex.  Every other call needs the lock held.
XXL_JOBMAP_EXPORT void
    xxl_jobmap_lock (xxl_jobmap_t *self);
XXL_JOBMAP_EXPORT void
    xxl_jobmap_unlock (xxl_jobmap_t *self);

//  Clears the map when now_ms is past the validity set at the last clear,
//  then makes it valid for XXL_ROUTER_CACHE_MS (24 h) from now_ms.  The
//  first call always clears.  Returns 1 when it cleared, else 0.
XXL_JOBMAP_EXPORT int
    xxl_jobmap_expire (xxl_jobmap_t *self, int64_t now_ms);

//  The entry of job_id, or NULL.  Entries stay at their address until
//  the map is cleared or destroyed.
XXL_JOBMAP_EXPORT xxl_jobmap_entry_t *
    xxl_jobmap_lookup (xxl_jobmap_t *self, int64_t job_id);

//  The entry of job_id, created (num 0, data NULL) when absent; NULL when
//  out of memory.
XXL_JOBMAP_EXPORT xxl_jobmap_entry_t *
    xxl_jobmap_ensure (xxl_jobmap_t *self, int64_t job_id);

//  Number of jobs in the map.
XXL_JOBMAP_EXPORT size_t
    xxl_jobmap_size (xxl_jobmap_t *self);

//  One job's addresses, each with a value.  Order is the router's.
typedef struct {
    char *address;                      //  owned copy
    int64_t value;
} xxl_addritem_t;

typedef struct {
    xxl_addritem_t *items;
    size_t count;
    size_t capacity;
} xxl_addrlist_t;

//  Creates an empty list, NULL when out of memory.
XXL_JOBMAP_EXPORT xxl_addrlist_t *
    xxl_addrlist_new (void);

//  Frees a list (a void * for xxl_jobmap_new's free_fn); NULL is a no-op.
XXL_JOBMAP_EXPORT void
    xxl_addrlist_free (void *list);

//  Brings the list in step with addresses [0, count): drops items whose
//  address is not there (keeping the order of the rest), then appends the
//  missing addresses in their order with value -1.  Fills index_of [k]
//  (room for count entries) with item k's index in addresses.  Returns 0,
//  or -1 when out of memory (the list is then unchanged).
XXL_JOBMAP_EXPORT int
    xxl_addrlist_sync (xxl_addrlist_t *self, const char *const *addresses,
                       size_t count, size_t *index_of);

#endif
