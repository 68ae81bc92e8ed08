/*  test_registry.c -- live agents: sorted address lists, routes, expiry.
*/

#include "xxl_registry.h"
#include "xxl_test.h"

int
main (void)
{
    zsys_init ();
    zsys_set_logstream (NULL);
    xxl_registry_t *registry = xxl_registry_new ();
    XXL_CHECK (registry);
    //  New addresses are reported as changes; a refresh is not
    XXL_CHECK (xxl_registry_beat (registry, "app", "host-b", "r1", 2, "h1", 1000) == 1);
    XXL_CHECK (xxl_registry_beat (registry, "app", "host-a", "r2", 2, "h1", 1000) == 1);
    XXL_CHECK (xxl_registry_beat (registry, "other", "host-c", "r3", 2, NULL, 1000) == 1);
    XXL_CHECK (xxl_registry_beat (registry, "app", "host-b", "r1", 2, "h1", 2000) == 0);
    //  Bad arguments
    XXL_CHECK (xxl_registry_beat (registry, "", "x", "r", 1, NULL, 1) == -1);
    XXL_CHECK (xxl_registry_beat (registry, "app", "x", NULL, 0, NULL, 1) == -1);

    //  Sorted per app
    const char *const *addresses;
    XXL_CHECK (xxl_registry_addresses (registry, "app", &addresses) == 2);
    XXL_CHECK (streq (addresses [0], "host-a") && streq (addresses [1], "host-b"));
    XXL_CHECK (xxl_registry_addresses (registry, "nope", &addresses) == 0);
    XXL_CHECK (xxl_registry_size (registry) == 3);

    //  Routes follow the latest connection
    size_t size;
    const void *rid = xxl_registry_route (registry, "host-b", &size);
    XXL_CHECK (rid && size == 2 && memcmp (rid, "r1", 2) == 0);
    XXL_CHECK (xxl_registry_beat (registry, "app", "host-b", "r9", 2, NULL, 3000) == 1);
    rid = xxl_registry_route (registry, "host-b", &size);
    XXL_CHECK (rid && memcmp (rid, "r9", 2) == 0);
    //  A failed send on the old connection does not forget the new one
    xxl_registry_unroute (registry, "host-b", "r1", 2);
    XXL_CHECK (xxl_registry_route (registry, "host-b", &size) != NULL);
    xxl_registry_unroute (registry, "host-b", "r9", 2);
    XXL_CHECK (xxl_registry_route (registry, "host-b", &size) == NULL);
    //  ... and is not routed to: the app's addresses are the connected ones
    XXL_CHECK (xxl_registry_addresses (registry, "app", &addresses) == 1);
    XXL_CHECK (streq (addresses [0], "host-a"));
    //  ... and it comes back with the next beat
    xxl_registry_beat (registry, "app", "host-b", "rA", 2, NULL, 3500);
    XXL_CHECK (xxl_registry_route (registry, "host-b", &size) != NULL);

    //  Iteration
    size_t cursor = 0, seen = 0;
    xxl_registry_entry_t entry;
    while (xxl_registry_each (registry, &cursor, &entry) == 0)
        seen++;
    XXL_CHECK (seen == 3);

    //  Expiry: silent since before 2500
    XXL_CHECK (xxl_registry_route (registry, "host-a", &size) != NULL);
    XXL_CHECK (xxl_registry_expire (registry, 2500) == 2);     //  host-a, host-c
    XXL_CHECK (xxl_registry_addresses (registry, "app", &addresses) == 1);
    XXL_CHECK (streq (addresses [0], "host-b"));
    //  ... an expired address is not routed to any more
    XXL_CHECK (xxl_registry_route (registry, "host-a", &size) == NULL);
    XXL_CHECK (xxl_registry_route (registry, "host-c", &size) == NULL);
    //  An address another app still lists keeps its route when one app
    //  removes it; removed from every app, it has none
    XXL_CHECK (xxl_registry_beat (registry, "other", "host-b", "rA", 2, NULL, 3600) == 1);
    XXL_CHECK (xxl_registry_remove (registry, "other", "host-b") == 0);
    XXL_CHECK (xxl_registry_route (registry, "host-b", &size) != NULL);
    XXL_CHECK (xxl_registry_remove (registry, "app", "host-b") == 0);
    XXL_CHECK (xxl_registry_route (registry, "host-b", &size) == NULL);
    XXL_CHECK (xxl_registry_remove (registry, "app", "host-b") == -1);
    XXL_CHECK (xxl_registry_size (registry) == 0);
    XXL_CHECK (!xxl_registry_listed (registry, "host-b"));
    //  host-b parted from rA: the connection still counts it (LOG, KILL)
    size_t count = 0;
    XXL_CHECK (xxl_registry_rid_address (registry, "rA", 2, &count) != NULL && count == 1);
    xxl_registry_unroute (registry, "host-b", "rA", 2);
    XXL_CHECK (xxl_registry_rid_address (registry, "rA", 2, &count) == NULL && count == 0);

    //  A connection's addresses, counted by connection (indexed: what a
    //  message from a connection costs does not grow with the agents)
    XXL_CHECK (xxl_registry_beat (registry, "app", "m1", "c1", 2, NULL, 4000) == 1);
    XXL_CHECK (xxl_registry_beat (registry, "app", "m2", "c1", 2, NULL, 4000) == 1);
    XXL_CHECK (xxl_registry_beat (registry, "other", "m2", "c1", 2, NULL, 4000) == 1);
    XXL_CHECK (xxl_registry_beat (registry, "app", "n1", "c2", 2, NULL, 4000) == 1);
    XXL_CHECK (xxl_registry_listed (registry, "m2") && xxl_registry_listed (registry, "n1"));
    const char *first = xxl_registry_rid_address (registry, "c1", 2, &count);
    XXL_CHECK (first && count == 2 && (streq (first, "m1") || streq (first, "m2")));
    first = xxl_registry_rid_address (registry, "c2", 2, &count);
    XXL_CHECK (first && count == 1 && streq (first, "n1"));
    XXL_CHECK (xxl_registry_rid_address (registry, "c3", 2, &count) == NULL && count == 0);
    //  m1 moves to c2: c1 keeps m2 (whichever it named first), c2 has two
    XXL_CHECK (xxl_registry_beat (registry, "app", "m1", "c2", 2, NULL, 4100) == 1);
    first = xxl_registry_rid_address (registry, "c1", 2, &count);
    XXL_CHECK (first && count == 1 && streq (first, "m2"));
    XXL_CHECK (xxl_registry_rid_address (registry, "c2", 2, &count) && count == 2);
    //  m2 removed by one app: still listed, still routed; by both: parting
    XXL_CHECK (xxl_registry_remove (registry, "other", "m2") == 0);
    XXL_CHECK (xxl_registry_listed (registry, "m2") && xxl_registry_route (registry, "m2", &size));
    XXL_CHECK (xxl_registry_remove (registry, "app", "m2") == 0);
    XXL_CHECK (!xxl_registry_listed (registry, "m2") && !xxl_registry_route (registry, "m2", &size));
    first = xxl_registry_rid_address (registry, "c1", 2, &count);
    XXL_CHECK (first && count == 1 && streq (first, "m2"));
    //  m2 registers again on c1: live again, still one address there
    XXL_CHECK (xxl_registry_beat (registry, "app", "m2", "c1", 2, NULL, 4200) == 1);
    XXL_CHECK (xxl_registry_rid_address (registry, "c1", 2, &count) && count == 1);
    //  Expired, then the connection closed: nothing counts it
    XXL_CHECK (xxl_registry_expire (registry, 5000) == 3);
    XXL_CHECK (xxl_registry_rid_address (registry, "c2", 2, &count) && count == 2);
    xxl_registry_unroute (registry, "m1", "c2", 2);
    xxl_registry_unroute (registry, "n1", "c2", 2);
    xxl_registry_unroute (registry, "m2", "c1", 2);
    XXL_CHECK (!xxl_registry_has_rid (registry, "c1", 2) && !xxl_registry_has_rid (registry, "c2", 2));
    xxl_registry_destroy (&registry);
    XXL_CHECK (registry == NULL);
    return xxl_test_done ();
}
