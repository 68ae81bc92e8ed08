/*  test_http_limit.c -- the login limiter (scheduler/http/xxl_http_limit.c) on
    a clock the test drives: burst failures then one per interval, per
    address and per name; a success frees its keys; refused attempts take
    nothing; the table never grows past its slots, and a held-back key
    outlives a flood of new ones; IPv6 counts by /64.
*/

#include "xxl_http_limit.h"
#include "xxl_test.h"

#include <czmq.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#define BURST 5
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
    return xxl_test_done ();
}
