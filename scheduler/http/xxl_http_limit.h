/*  xxl_http_limit.h -- the HTTP login's limit on failed password checks,
    per client address and per user name (docs/http.md, *Credentials*).

    Each key (an address, a user name) has a token bucket: `burst` tokens
    when new, one more every `interval_ms` up to `burst`.  An attempt
    takes one token from its address's bucket and one from its name's
    before its password is checked; when either has less than one, the
    attempt is refused and takes nothing (so nothing about it is checked).
    A success gives its address's token back and fills its name's bucket;
    a failure keeps what it took.  So `burst` wrong passwords in a row,
    then one every interval_ms, per address and per name.

    Memory is fixed at creation: `slots` entries (rounded up to a multiple
    of XXL_HTTP_LIMIT_WAYS) in sets of XXL_HTTP_LIMIT_WAYS, a key's set
    chosen by a hash keyed with random bytes (keys cannot be made to
    collide on purpose).  A key stores only 64 bits of that hash, never
    the name or address.  A new key in a full set replaces the entry with
    the most tokens (a full bucket first: one that restricts nothing),
    the oldest of those: a key that is held back is the last to go.
    IPv6 addresses count by their /64 (one host holds a /64); an IPv4
    address mapped into IPv6 counts as the IPv4 address.

    Threads: every call takes the limiter's own mutex (the HTTP threads
    share it); no call does I/O.  Times are the caller's (monotonic ms),
    so tests drive the clock.
*/

#ifndef XXL_HTTP_LIMIT_H_INCLUDED
#define XXL_HTTP_LIMIT_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include "xxl_http_guard.h"

#define XXL_HTTP_LIMIT_WAYS 8           //  entries per set
#define XXL_HTTP_LIMIT_KEY XXL_HTTP_GUARD_KEY    //  bytes of a key text, NUL included

typedef struct _xxl_http_limit_t xxl_http_limit_t;

//  A limiter of slots entries (>= XXL_HTTP_LIMIT_WAYS), burst tokens
//  (>= 1) refilled one per interval_ms (>= 1).  NULL when out of memory
//  or without random bytes from the OS.
xxl_http_limit_t *xxl_http_limit_new (size_t slots, int burst, int64_t interval_ms);
void xxl_http_limit_destroy (xxl_http_limit_t **self_p);

//  The key of a client address (NULL or unknown family: "" = no limit by
//  address) into key: xxl_http_guard_address's
void xxl_http_limit_address (const struct sockaddr *addr, char key [XXL_HTTP_LIMIT_KEY]);

//  One attempt for address key and user name (either may be NULL or ""
//  for none) at now: 0 when allowed (a token taken from each), else the
//  milliseconds until both buckets hold a token again (> 0), nothing taken
int64_t xxl_http_limit_take (xxl_http_limit_t *self, const char *address, const char *name,
                             int64_t now);
//  The attempt that xxl_http_limit_take allowed succeeded
void xxl_http_limit_success (xxl_http_limit_t *self, const char *address, const char *name,
                             int64_t now);
//  The attempt that xxl_http_limit_take allowed was not judged (the store
//  did not answer): each key gets its token back
void xxl_http_limit_refund (xxl_http_limit_t *self, const char *address, const char *name,
                            int64_t now);

//  Entries in use, and the table's size (entries in use never pass it)
size_t xxl_http_limit_used (xxl_http_limit_t *self);
size_t xxl_http_limit_slots (xxl_http_limit_t *self);

#endif
