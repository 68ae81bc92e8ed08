/*  xxl_http_guard.h -- an HTTP server's connections against clients that
    hold them (slowloris): a deadline for each request, and slots kept for
    health checks (the scheduler's /healthz and /readyz: docs/http.md,
    *Connections*; xxl-bridge's admin keeps none).  Knows nothing of
    libmicrohttpd: its servers call it from their connection
    notifications.

    Each connection the server takes gets a slot, from its accept to its
    close.  A slot is ordinary while fewer than `ordinary` ordinary slots
    are in use, else one of the `reserve` kept for the health checks (at
    most one of them per client address until its request came whole:
    several addresses are needed to fill them).  A connection's request
    must come whole (headers and body) by its deadline: `timeout_ms` after
    its accept (`reserve_ms` in a reserve slot), and again after each
    answer has gone out (the next request on a kept-alive connection);
    bytes arriving never move it.  While a request whole is handled and
    answered there is no deadline in an ordinary slot (the engine's wait
    bounds the one, libmicrohttpd's idle timeout the other); a reserve
    slot's runs on to its close.  xxl_http_guard_expire shuts down the
    socket of each connection past its deadline: libmicrohttpd reads its
    end and closes it.  A connection in a reserve slot is answered for
    /healthz and /readyz only (the caller's part), and closed after its
    answer.

    The guard keeps its own duplicate of each socket, closed only with
    the slot: a socket it shuts down is always the connection's own, never
    one a new connection got since.

    Threads: every call takes the guard's mutex (libmicrohttpd's threads
    and the guard's watchdog share it).  Times are the caller's monotonic
    ms, so tests drive the clock; xxl_http_guard_start runs the watchdog
    thread that calls xxl_http_guard_expire every XXL_HTTP_GUARD_TICK_MS
    (a single-threaded server calls it from its own loop instead).
*/

#ifndef XXL_HTTP_GUARD_H_INCLUDED
#define XXL_HTTP_GUARD_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define XXL_HTTP_GUARD_TICK_MS 250      //  the watchdog's period

#define XXL_HTTP_GUARD_KEY 64          //  bytes of an address key, NUL included

typedef struct _xxl_http_guard_t xxl_http_guard_t;
typedef struct _xxl_http_slot_t xxl_http_slot_t;

//  A guard of ordinary + reserve slots (ordinary >= 1); deadlines of
//  timeout_ms and reserve_ms (>= 1).  NULL when out of memory.
xxl_http_guard_t *xxl_http_guard_new (size_t ordinary, size_t reserve, int64_t timeout_ms,
                                      int64_t reserve_ms);
//  Stops the watchdog, closes the duplicates still held, nulls *self_p
void xxl_http_guard_destroy (xxl_http_guard_t **self_p);
//  Starts the watchdog thread; 0, or -1 when it could not start
int xxl_http_guard_start (xxl_http_guard_t *self);

//  A new connection (socket fd, client addr) at now: its slot, or NULL
//  when it may not stay (every slot in use, or its address holds a reserve
//  slot already): the caller shuts it down
xxl_http_slot_t *xxl_http_guard_open (xxl_http_guard_t *self, int fd,
                                      const struct sockaddr *addr, int64_t now);
//  A server's connection notice: started, a new connection (socket fd,
//  client addr) gets its slot into *context, or is shut down at once when
//  none is left for it (*context NULL); else the connection whose slot
//  *context holds (if any) closed: the slot is free, *context NULL
void xxl_http_guard_notice (xxl_http_guard_t *self, bool started, int fd,
                            const struct sockaddr *addr, void **context, int64_t now);
//  The connection of slot closed: the slot is free
void xxl_http_guard_close (xxl_http_guard_t *self, xxl_http_slot_t *slot);
//  Whether slot is a reserve one (health checks only, closed after)
bool xxl_http_guard_reserve (xxl_http_guard_t *self, xxl_http_slot_t *slot);
//  Slot's request came whole (or was refused before): no deadline while
//  it is handled and its answer goes out (an ordinary slot), or no more
//  counted against its address (a reserve one)
void xxl_http_guard_received (xxl_http_guard_t *self, xxl_http_slot_t *slot);
//  Slot's answer went out at now: the next request's deadline runs
void xxl_http_guard_sent (xxl_http_guard_t *self, xxl_http_slot_t *slot, int64_t now);
//  Shuts down each connection past its deadline at now (once); how many
size_t xxl_http_guard_expire (xxl_http_guard_t *self, int64_t now);

//  The key of a client address: "a4 1.2.3.4" (an IPv4-mapped IPv6
//  address as its IPv4), "a6 2001:db8::/64" (its /64); "" for NULL or
//  another family
void xxl_http_guard_address (const struct sockaddr *addr, char key [XXL_HTTP_GUARD_KEY]);

//  Slots in use: ordinary and reserve
void xxl_http_guard_used (xxl_http_guard_t *self, size_t *ordinary, size_t *reserve);
//  Connections shut down past their deadline, and refused at open, so far
void xxl_http_guard_counts (xxl_http_guard_t *self, uint64_t *expired, uint64_t *refused);

#endif
