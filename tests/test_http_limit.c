/*  test_http_limit.c -- the login limiter (scheduler/http/xxl_http_limit.c) on
    a clock the test drives: burst failures then one per interval, per
    address and per name; a success frees its keys; refused attempts take
    nothing; the table never grows past its slots, and a held-back key
    outlives a flood of new ones; IPv6 counts by /64.  The connections'
    guard (xxl_http_guard.c) on socket pairs: ordinary slots, then the
    health slots one per address, a deadline that bytes never move, shut
    down once past it; none from a request whole to its answer sent.
*/

#include "xxl_http_limit.h"
#include "xxl_http_guard.h"
#include "xxl_test.h"

#include <czmq.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#define BURST 5

//  True when the peer of fd was shut down (reads its end)
static bool
s_shut (int fd)
{
    char byte;
    return recv (fd, &byte, 1, MSG_DONTWAIT) == 0;
}

//  The guard on a clock the test drives
static void
s_guard (void)
{
    xxl_http_guard_t *guard = xxl_http_guard_new (2, 2, 30000, 2000);
    XXL_CHECK (guard);
    int pairs [6][2];
    for (int i = 0; i < 6; i++)
        XXL_CHECK (socketpair (AF_UNIX, SOCK_STREAM, 0, pairs [i]) == 0);
    struct sockaddr_in a = { .sin_family = AF_INET }, b = a, c = a;
    inet_pton (AF_INET, "192.0.2.1", &a.sin_addr);
    inet_pton (AF_INET, "192.0.2.2", &b.sin_addr);
    inet_pton (AF_INET, "192.0.2.3", &c.sin_addr);
    int64_t now = 1000000;
    //  Two ordinary slots, both from a
    xxl_http_slot_t *s0 = xxl_http_guard_open (guard, pairs [0][0], (struct sockaddr *) &a, now);
    xxl_http_slot_t *s1 = xxl_http_guard_open (guard, pairs [1][0], (struct sockaddr *) &a, now);
    XXL_CHECK (s0 && s1 && !xxl_http_guard_reserve (guard, s0) && !xxl_http_guard_reserve (guard, s1));
    //  Then the health slots: one per address
    xxl_http_slot_t *h0 = xxl_http_guard_open (guard, pairs [2][0], (struct sockaddr *) &b, now);
    XXL_CHECK (h0 && xxl_http_guard_reserve (guard, h0));
    XXL_CHECK (xxl_http_guard_open (guard, pairs [3][0], (struct sockaddr *) &b, now) == NULL);
    //  ... until its request came whole
    xxl_http_guard_received (guard, h0);
    xxl_http_slot_t *h1 = xxl_http_guard_open (guard, pairs [3][0], (struct sockaddr *) &b, now);
    XXL_CHECK (h1 && xxl_http_guard_reserve (guard, h1));
    //  All four taken: refused
    XXL_CHECK (xxl_http_guard_open (guard, pairs [4][0], (struct sockaddr *) &c, now) == NULL);
    size_t ordinary, reserve;
    xxl_http_guard_used (guard, &ordinary, &reserve);
    XXL_CHECK (ordinary == 2 && reserve == 2);
    //  s1 came whole (no deadline while it is handled and answered)
    xxl_http_guard_received (guard, s1);
    //  Nothing past a deadline yet; at 2 s the health slots go (h0's
    //  deadline runs on though its request came whole)
    XXL_CHECK (xxl_http_guard_expire (guard, now + 1999) == 0);
    XXL_CHECK (!s_shut (pairs [2][1]) && !s_shut (pairs [3][1]));
    XXL_CHECK (xxl_http_guard_expire (guard, now + 2000) == 2);
    XXL_CHECK (s_shut (pairs [2][1]) && s_shut (pairs [3][1]));
    XXL_CHECK (xxl_http_guard_expire (guard, now + 2001) == 0);     //  (once each)
    //  At 30 s s0 goes; s1, whose answer goes out, stays
    XXL_CHECK (xxl_http_guard_expire (guard, now + 30000) == 1);
    XXL_CHECK (s_shut (pairs [0][1]) && !s_shut (pairs [1][1]));
    //  s1's answer went out at +40 s: its next request has until +70 s
    xxl_http_guard_sent (guard, s1, now + 40000);
    XXL_CHECK (xxl_http_guard_expire (guard, now + 69999) == 0);
    XXL_CHECK (xxl_http_guard_expire (guard, now + 70000) == 1);
    XXL_CHECK (s_shut (pairs [1][1]));
    uint64_t expired, refused;
    xxl_http_guard_counts (guard, &expired, &refused);
    XXL_CHECK (expired == 4 && refused == 2);
    //  Closed slots free their places: an ordinary one again
    xxl_http_guard_close (guard, s0);
    xxl_http_guard_close (guard, h0);
    xxl_http_slot_t *s2 = xxl_http_guard_open (guard, pairs [4][0], (struct sockaddr *) &c, now);
    XXL_CHECK (s2 && !xxl_http_guard_reserve (guard, s2));
    //  The guard shut down its own duplicate: the connection's socket is
    //  still open, and closing it leaves the guard's working
    close (pairs [0][0]);
    XXL_CHECK (xxl_http_guard_start (guard) == 0);
    xxl_http_guard_destroy (&guard);
    XXL_CHECK (guard == NULL);
    for (int i = 0; i < 6; i++) {
        if (i)
            close (pairs [i][0]);
        close (pairs [i][1]);
    }
}
#define INTERVAL 60000

int
main (void)
{
    zsys_init ();
    zsys_set_logstream (NULL);
    xxl_http_limit_t *limit = xxl_http_limit_new (64, BURST, INTERVAL);
    XXL_CHECK (limit);
    XXL_CHECK (xxl_http_limit_slots (limit) == 64);
    int64_t now = 1000000;

    //  BURST wrong passwords from one address for alice, then refused
    for (int i = 0; i < BURST; i++)
        XXL_CHECK (xxl_http_limit_take (limit, "a4 10.0.0.1", "alice", now) == 0);
    int64_t wait = xxl_http_limit_take (limit, "a4 10.0.0.1", "alice", now);
    XXL_CHECK (wait == INTERVAL);       //  (no time passed: a whole interval)
    //  Refusals take nothing: the wait does not grow
    for (int i = 0; i < 100; i++)
        XXL_CHECK (xxl_http_limit_take (limit, "a4 10.0.0.1", "alice", now) == wait);
    //  The same address for another name: refused (the address is held back)
    XXL_CHECK (xxl_http_limit_take (limit, "a4 10.0.0.1", "bob", now) > 0);
    //  alice from another address: refused (the name is held back)
    XXL_CHECK (xxl_http_limit_take (limit, "a4 10.0.0.2", "alice", now) > 0);
    //  bob from another address: allowed, and his success frees his keys
    XXL_CHECK (xxl_http_limit_take (limit, "a4 10.0.0.2", "bob", now) == 0);
    size_t used = xxl_http_limit_used (limit);
    XXL_CHECK (used == 4);              //  10.0.0.1, alice, 10.0.0.2, bob
    xxl_http_limit_success (limit, "a4 10.0.0.2", "bob", now);
    XXL_CHECK (xxl_http_limit_used (limit) == 2);
    //  A refusal makes no entry
    XXL_CHECK (xxl_http_limit_take (limit, "a4 10.0.0.3", "alice", now) > 0);
    XXL_CHECK (xxl_http_limit_used (limit) == 2);

    //  One interval later: one attempt, then refused again
    now += wait;
    XXL_CHECK (xxl_http_limit_take (limit, "a4 10.0.0.1", "alice", now) == 0);
    XXL_CHECK (xxl_http_limit_take (limit, "a4 10.0.0.1", "alice", now) > 0);
    //  That one was right: alice's name is free at once, the address
    //  gets its token back (one more attempt, then held back again)
    xxl_http_limit_success (limit, "a4 10.0.0.1", "alice", now);
    XXL_CHECK (xxl_http_limit_take (limit, "a4 10.0.0.9", "alice", now) == 0);
    XXL_CHECK (xxl_http_limit_take (limit, "a4 10.0.0.1", "carol", now) == 0);
    XXL_CHECK (xxl_http_limit_take (limit, "a4 10.0.0.1", "carol", now) > 0);
    //  A full interval's wait per token, never more than BURST saved up
    now += (int64_t) INTERVAL * 100;
    for (int i = 0; i < BURST; i++)
        XXL_CHECK (xxl_http_limit_take (limit, "a4 10.0.0.1", NULL, now) == 0);
    XXL_CHECK (xxl_http_limit_take (limit, "a4 10.0.0.1", NULL, now) > 0);
    //  No key: no limit
    for (int i = 0; i < 50; i++)
        XXL_CHECK (xxl_http_limit_take (limit, "", NULL, now) == 0);

    //  A flood of new names, each from a new address: the table stays at
    //  its size, and the name held back stays held back (eviction takes
    //  the entries with the most tokens first)
    for (int i = 0; i < BURST; i++)
        xxl_http_limit_take (limit, NULL, "victim", now);
    XXL_CHECK (xxl_http_limit_take (limit, NULL, "victim", now) > 0);
    for (int i = 0; i < 100000; i++) {
        char address [32], name [32];
        snprintf (address, sizeof address, "a4 10.%d.%d.%d", i >> 16, (i >> 8) & 255, i & 255);
        snprintf (name, sizeof name, "name-%d", i);
        xxl_http_limit_take (limit, address, name, now);
        if (xxl_http_limit_used (limit) > xxl_http_limit_slots (limit))
            break;
    }
    XXL_CHECK (xxl_http_limit_used (limit) <= xxl_http_limit_slots (limit));
    XXL_CHECK (xxl_http_limit_used (limit) == xxl_http_limit_slots (limit));
    XXL_CHECK (xxl_http_limit_take (limit, NULL, "victim", now) > 0);
    xxl_http_limit_destroy (&limit);
    XXL_CHECK (limit == NULL);

    //  Address keys: IPv4, IPv6 by its /64, IPv4 mapped into IPv6
    char key [XXL_HTTP_LIMIT_KEY], other [XXL_HTTP_LIMIT_KEY];
    struct sockaddr_in in = { .sin_family = AF_INET };
    inet_pton (AF_INET, "192.0.2.7", &in.sin_addr);
    xxl_http_limit_address ((struct sockaddr *) &in, key);
    XXL_CHECK (streq (key, "a4 192.0.2.7"));
    struct sockaddr_in6 in6 = { .sin6_family = AF_INET6 };
    inet_pton (AF_INET6, "2001:db8:1:2:aaaa::1", &in6.sin6_addr);
    xxl_http_limit_address ((struct sockaddr *) &in6, key);
    inet_pton (AF_INET6, "2001:db8:1:2:bbbb::9", &in6.sin6_addr);
    xxl_http_limit_address ((struct sockaddr *) &in6, other);
    XXL_CHECK (streq (key, "a6 2001:db8:1:2::/64") && streq (key, other));
    inet_pton (AF_INET6, "2001:db8:1:3::1", &in6.sin6_addr);
    xxl_http_limit_address ((struct sockaddr *) &in6, other);
    XXL_CHECK (strneq (key, other));
    inet_pton (AF_INET6, "::ffff:192.0.2.7", &in6.sin6_addr);
    xxl_http_limit_address ((struct sockaddr *) &in6, key);
    XXL_CHECK (streq (key, "a4 192.0.2.7"));
    xxl_http_limit_address (NULL, key);
    XXL_CHECK (streq (key, ""));
    s_guard ();
    return xxl_test_done ();
}
