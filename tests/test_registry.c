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
    xxl_registry_destroy (&registry);
    XXL_CHECK (registry == NULL);
    return xxl_test_done ();
}
