/*  xxl_imap.h -- a map from int64 keys to pointers.

    A chained hash table: a multiplicative hash into a power of two of
    buckets, 1,024 at first, doubled whenever the map holds more entries
    than buckets.  The executor keeps its workers by job id and its runs in
    flight by logId in it.

    Ownership: values are borrowed; the map never frees them.
    Threads: none of its own.  Not thread-safe: the caller serializes every
    call on one map (the executor holds the lock that guards it).
    Errors: xxl_imap_new returns NULL and xxl_imap_put -1 when out of
    memory.  A failed doubling is no error: the chains get longer.
*/

#ifndef XXL_IMAP_H_INCLUDED
#define XXL_IMAP_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct _xxl_imap_t xxl_imap_t;

//  Creates an empty map.  NULL when out of memory.
xxl_imap_t *xxl_imap_new (void);

//  Frees the map and its entries (not the values).  Nulls *self_p.
void xxl_imap_destroy (xxl_imap_t **self_p);

//  The value of key, or NULL when the map has no such key.
void *xxl_imap_get (xxl_imap_t *self, int64_t key);

//  Inserts key or replaces its value.  Returns 0, or -1 when out of memory
//  (the map is unchanged).
int xxl_imap_put (xxl_imap_t *self, int64_t key, void *value);

//  Removes key; a key the map does not hold is ignored.
void xxl_imap_del (xxl_imap_t *self, int64_t key);

//  For emptying the map entry by entry: the value of the first entry in
//  bucket *cursor or after it, *cursor left at that bucket; NULL when no
//  entry is left there.  Start with *cursor = 0.  The caller deletes each
//  entry it gets before the next call (else it gets the same one again).
//  An entry inserted meanwhile may or may not be seen.
void *xxl_imap_drain (xxl_imap_t *self, size_t *cursor);

#ifdef __cplusplus
}
#endif

#endif
