/*  test_rules_route.c -- routing over the connected set as pure
    functions (runs/xxl_run_rules.h): whether any address is connected
    (none, some, all; asked in order, no further than needed), when a
    trigger is held for reconnecting agents, when a broadcast stays one
    unexpanded row, how many rows a trigger makes, a shard's address,
    which manual addresses a keyed group keeps, and the liveness walk's
    period.
*/

#include <string.h>
#include "xxl_run_rules.h"
#include "xxl_test.h"

//  A fake registry: the connected addresses, and how many were asked
typedef struct {
    const char *const *connected;
    size_t count;
    int asked;
} fake_t;

static bool
s_connected (void *ctx, const char *address)
{
    fake_t *fake = (fake_t *) ctx;
    fake->asked++;
    for (size_t i = 0; i < fake->count; i++)
        if (strcmp (fake->connected [i], address) == 0)
            return true;
    return false;
}

int
main (void)
{
    const char *const list [] = { "a:1", "b:2", "c:3" };
    const char *const some [] = { "c:3" };
    fake_t none = { NULL, 0, 0 }, partly = { some, 1, 0 }, all = { list, 3, 0 };
    //  The connected set: none, some, all; asked in order up to the first
    XXL_CHECK (!xxl_route_any_connected (list, 3, s_connected, &none));
    XXL_CHECK_INT (none.asked, 3);
    XXL_CHECK (xxl_route_any_connected (list, 3, s_connected, &partly));
    XXL_CHECK_INT (partly.asked, 3);
    XXL_CHECK (xxl_route_any_connected (list, 3, s_connected, &all));
    XXL_CHECK_INT (all.asked, 1);
    XXL_CHECK (!xxl_route_any_connected (list, 0, s_connected, &all));
    XXL_CHECK (!xxl_route_any_connected (NULL, 0, NULL, NULL));
    XXL_CHECK (!xxl_route_any_connected (list, 2, s_connected, &partly));   //  c:3 not listed

    //  The periodic liveness walk: every 5 s, or every registry beat when
    //  that is longer (the tests' beat of 1 s keeps 5 s; the default 30 s
    //  beat walks every 30 s)
    XXL_CHECK_INT (xxl_liveness_period (1), 5000);
    XXL_CHECK_INT (xxl_liveness_period (5), 5000);
    XXL_CHECK_INT (xxl_liveness_period (6), 6000);
    XXL_CHECK_INT (xxl_liveness_period (30), 30000);
    XXL_CHECK_INT (xxl_liveness_period (86400), 86400000);

    //  Held: only warming, not deferred, no address given, and nobody
    //  connected (or an unexpanded broadcast); the registry is asked
    //  only then
    none.asked = partly.asked = all.asked = 0;
    XXL_CHECK (xxl_route_held (false, false, true, false, -1, s_connected, &none, list, 3));
    XXL_CHECK (!xxl_route_held (false, false, true, false, -1, s_connected, &partly, list, 3));
    XXL_CHECK (!xxl_route_held (false, false, true, false, -1, s_connected, &all, list, 3));
    XXL_CHECK (xxl_route_held (false, false, true, false, -1, s_connected, &all, list, 0));
    all.asked = 0;
    XXL_CHECK (xxl_route_held (false, false, true, true, -1, s_connected, &all, list, 3));
    XXL_CHECK_INT (all.asked, 0);                           //  (a broadcast asks nobody)
    XXL_CHECK (!xxl_route_held (false, false, true, true, 2, s_connected, &all, list, 3));
    none.asked = 0;
    XXL_CHECK (!xxl_route_held (true, false, true, false, -1, s_connected, &none, list, 3));
    XXL_CHECK (!xxl_route_held (false, true, true, false, -1, s_connected, &none, list, 3));
    XXL_CHECK (!xxl_route_held (false, false, false, false, -1, s_connected, &none, list, 3));
    XXL_CHECK_INT (none.asked, 0);

    //  Unexpanded broadcast rows
    XXL_CHECK (xxl_route_unexpanded (true, -1, false, true, false, 3, false));
    XXL_CHECK (xxl_route_unexpanded (true, -1, false, false, true, 0, false));
    XXL_CHECK (xxl_route_unexpanded (true, -1, false, false, true, 3, true));
    XXL_CHECK (!xxl_route_unexpanded (true, -1, false, false, true, 3, false));
    XXL_CHECK (!xxl_route_unexpanded (true, -1, false, false, false, 0, true));
    XXL_CHECK (!xxl_route_unexpanded (true, 1, false, true, true, 0, true));   //  a shard's retry
    XXL_CHECK (!xxl_route_unexpanded (true, -1, true, true, true, 0, true));   //  address given
    XXL_CHECK (!xxl_route_unexpanded (false, -1, false, true, true, 0, true));

    //  Rows: one per address for an expanded broadcast, else one
    XXL_CHECK_INT (xxl_route_runs (true, -1, 3, false), 3);
    XXL_CHECK_INT (xxl_route_runs (true, -1, 0, false), 1);
    XXL_CHECK_INT (xxl_route_runs (true, -1, 3, true), 1);
    XXL_CHECK_INT (xxl_route_runs (true, 2, 3, false), 1);
    XXL_CHECK_INT (xxl_route_runs (false, -1, 3, false), 1);

    //  A shard's address: its index, the first past a shrunk list
    XXL_CHECK_INT (xxl_route_broadcast_index (0, 3), 0);
    XXL_CHECK_INT (xxl_route_broadcast_index (2, 3), 2);
    XXL_CHECK_INT (xxl_route_broadcast_index (3, 3), 0);
    XXL_CHECK_INT (xxl_route_broadcast_index (9, 1), 0);

    //  Manual lists under keys
    XXL_CHECK (xxl_route_manual_keeps (NULL, false, false));
    XXL_CHECK (xxl_route_manual_keeps ("key-a", true, true));
    XXL_CHECK (!xxl_route_manual_keeps ("key-a", true, false));
    XXL_CHECK (!xxl_route_manual_keeps ("key-gone", false, false));
    return xxl_test_done ();
}
