/*  test_registry.c -- live agents: sorted address lists, routes, expiry;
    when each was last heard and its run lease (xxl_heard).
*/

#include "xxl_registry.h"
#include "xxl_heard.h"
#include "xxl_test.h"

//  Liveness is judged on the clock the caller gives (monotonic), never on
//  the wall clock: a beat at monotonic 5,000 is alive at dead_before
//  4,000 whatever the wall clock says; AGENT_LIST's update_time is the
//  wall clock at the beat
static void
s_monotonic (void)
{
    xxl_registry_t *registry = xxl_registry_new ();
    int64_t wall = zclock_time ();
    XXL_CHECK (xxl_registry_beat (registry, "app", "m1", "M1", 2, NULL, 5000) == 1);
    XXL_CHECK (xxl_registry_expire (registry, 4000) == 0);
    size_t cursor = 0;
    xxl_registry_entry_t entry;
    XXL_CHECK (xxl_registry_each (registry, &cursor, &entry) == 0);
    XXL_CHECK (entry.update_time >= wall && entry.update_time <= zclock_time ());
    //  (the wall-clock stamp is not what expire compares: a dead_before
    //  far below it and above the beat's clock removes the entry)
    XXL_CHECK (xxl_registry_expire (registry, 5001) == 1);
    xxl_registry_destroy (&registry);
}

//  The run lease: an address's runs may be declared lost only once its
//  lease (plus the margin) has passed since its last REGISTER; an agent
//  with no lease has none (0); an address never heard counts as heard at
//  the start, with the longest lease said (the default before any)
static void
s_heard (void)
{
    xxl_heard_t *heard = xxl_heard_new (1000);
    XXL_CHECK (heard);
    XXL_CHECK (xxl_heard_until (heard, "nobody") == 1000 + XXL_HEARD_LEASE_DEFAULT
                                                  + XXL_HEARD_MARGIN_MS);
    xxl_heard_note (heard, "a1", 2000, 5000);
    XXL_CHECK (xxl_heard_until (heard, "a1") == 2000 + 5000 + XXL_HEARD_MARGIN_MS);
    XXL_CHECK (xxl_heard_lease (heard, "a1") == 5000);
    XXL_CHECK (xxl_heard_lease_longest (heard, "a1") == 5000);
    xxl_heard_note (heard, "a1", 9000, 5000);
    XXL_CHECK (xxl_heard_until (heard, "a1") == 9000 + 5000 + XXL_HEARD_MARGIN_MS);
    //  (a late note never moves it back)
    xxl_heard_note (heard, "a1", 8000, 5000);
    XXL_CHECK (xxl_heard_until (heard, "a1") == 9000 + 5000 + XXL_HEARD_MARGIN_MS);
    //  a shorter lease said since: the longest still shows
    xxl_heard_note (heard, "a1", 9000, 1000);
    XXL_CHECK (xxl_heard_lease (heard, "a1") == 1000);
    XXL_CHECK (xxl_heard_lease_longest (heard, "a1") == 5000);
    XXL_CHECK (xxl_heard_until (heard, "a1") == 9000 + 1000 + XXL_HEARD_MARGIN_MS);
    XXL_CHECK (xxl_heard_until_longest (heard, "a1") == 9000 + 5000 + XXL_HEARD_MARGIN_MS);
    xxl_heard_note (heard, "a1", 9000, 5000);
    //  the longest lease said stands for unknown addresses
    xxl_heard_note (heard, "a2", 3000, 700000);
    XXL_CHECK (xxl_heard_until (heard, "nobody") == 1000 + 700000 + XXL_HEARD_MARGIN_MS);
    //  no lease: none to wait for
    xxl_heard_note (heard, "a3", 3000, 0);
    XXL_CHECK (xxl_heard_until (heard, "a3") == 0 && xxl_heard_lease (heard, "a3") == 0);
    XXL_CHECK (xxl_heard_lease_longest (heard, "nobody") == 700000);
    XXL_CHECK (xxl_heard_until_longest (heard, "a3") == 0);
    XXL_CHECK (xxl_heard_until_longest (heard, "nobody") == xxl_heard_until (heard, "nobody"));
    XXL_CHECK (xxl_heard_size (heard) == 3);
    //  forgotten an hour after their lease ran out, not before: a3 (no
    //  lease, heard at 3000), then a1, then a2
    int64_t hour = 3600 * 1000;
    XXL_CHECK (xxl_heard_prune (heard, 3000 + XXL_HEARD_MARGIN_MS + hour) == 0);
    XXL_CHECK (xxl_heard_prune (heard, 3000 + XXL_HEARD_MARGIN_MS + hour + 1) == 1);
    XXL_CHECK (xxl_heard_prune (heard, 9000 + 5000 + XXL_HEARD_MARGIN_MS + hour) == 0);
    XXL_CHECK (xxl_heard_prune (heard, 9000 + 5000 + XXL_HEARD_MARGIN_MS + hour + 1) == 1);
    XXL_CHECK (xxl_heard_size (heard) == 1 && xxl_heard_lease (heard, "a2") == 700000);
    XXL_CHECK (xxl_heard_prune (heard, 3000 + 700000 + XXL_HEARD_MARGIN_MS + hour + 1) == 1);
    XXL_CHECK (xxl_heard_size (heard) == 0);
    xxl_heard_destroy (&heard);
    XXL_CHECK (heard == NULL);

    //  Another scheduler's registry rows are those stamped (store clock)
    //  after this one's own, stamped at the last REGISTER heard here:
    //  heard at monotonic 9000, now 20000 with the store's clock at
    //  5,000,000 there, the own row says 4,989,000; an address never heard
    //  counts from the start (1000)
    heard = xxl_heard_new (1000);
    xxl_heard_note (heard, "a1", 9000, 5000);
    XXL_CHECK (xxl_heard_rows_after (heard, "a1", 20000, 5000000)
               == 5000000 - 11000 + XXL_HEARD_ROW_MS);
    XXL_CHECK (xxl_heard_rows_after (heard, "nobody", 20000, 5000000)
               == 5000000 - 19000 + XXL_HEARD_ROW_MS);
    xxl_heard_note (heard, "a1", 15000, 5000);
    XXL_CHECK (xxl_heard_rows_after (heard, "a1", 20000, 5000000)
               == 5000000 - 5000 + XXL_HEARD_ROW_MS);
    xxl_heard_destroy (&heard);

    //  A closed connection: lost_at is lost_after (the grace) past the
    //  close, never before the lease since the last REGISTER
    heard = xxl_heard_new (1000);
    XXL_CHECK (xxl_heard_soonest (heard) == INT64_MAX);
    xxl_heard_note (heard, "short", 2000, 4000);        //  until 9000
    xxl_heard_note (heard, "long", 2000, 60000);        //  until 65000
    xxl_heard_note (heard, "none", 2000, 0);            //  no lease
    XXL_CHECK (xxl_heard_lost_at (heard, "short") == 0);        //  (not closed)
    xxl_heard_closed (heard, "short", 3000, 15000);
    xxl_heard_closed (heard, "long", 3000, 15000);
    xxl_heard_closed (heard, "none", 3000, 15000);
    xxl_heard_closed (heard, "unknown", 3000, 15000);
    XXL_CHECK (xxl_heard_lost_at (heard, "short") == 3000 + 15000);
    XXL_CHECK (xxl_heard_lost_at (heard, "long")
               == 2000 + 60000 + XXL_HEARD_MARGIN_MS + XXL_HEARD_ROW_MS);
    XXL_CHECK (xxl_heard_lost_at (heard, "none") == 0);         //  dead decides
    XXL_CHECK (xxl_heard_lost_at (heard, "unknown") == 0);
    XXL_CHECK (xxl_heard_size (heard) == 3);
    //  A grace shorter than the lease: the lease decides
    xxl_heard_note (heard, "quick", 2000, 4000);
    xxl_heard_closed (heard, "quick", 2500, 1000);
    int64_t quick = 2000 + 4000 + XXL_HEARD_MARGIN_MS + XXL_HEARD_ROW_MS;
    XXL_CHECK (xxl_heard_lost_at (heard, "quick") == quick);
    XXL_CHECK (xxl_heard_soonest (heard) == quick);
    //  Due: those whose lost_at passed
    const char *due [4];
    XXL_CHECK (xxl_heard_lost_due (heard, quick - 1, due, 4) == 0);
    XXL_CHECK (xxl_heard_lost_due (heard, quick, due, 4) == 1 && streq (due [0], "quick"));
    XXL_CHECK (xxl_heard_lost_due (heard, 18000, NULL, 0) == 2);
    //  Served: its close is forgotten
    xxl_heard_lost_done (heard, "quick");
    XXL_CHECK (xxl_heard_lost_at (heard, "quick") == 0);
    XXL_CHECK (xxl_heard_lost_due (heard, 18000, NULL, 0) == 1);
    //  The first close counts; a later one changes nothing
    xxl_heard_closed (heard, "short", 8000, 15000);
    XXL_CHECK (xxl_heard_lost_at (heard, "short") == 3000 + 15000);
    //  Each pass moves soonest to the next lost_at to come
    xxl_heard_pass (heard, 9000);
    XXL_CHECK (xxl_heard_soonest (heard) == 18000);
    xxl_heard_pass (heard, 18000);
    XXL_CHECK (xxl_heard_soonest (heard) == 2000 + 60000 + XXL_HEARD_MARGIN_MS + XXL_HEARD_ROW_MS);
    //  A REGISTER after the close takes it back: held again
    xxl_heard_note (heard, "long", 20000, 60000);
    XXL_CHECK (xxl_heard_lost_at (heard, "long") == 0);
    xxl_heard_pass (heard, 20000);
    XXL_CHECK (xxl_heard_soonest (heard) == INT64_MAX);
    xxl_heard_destroy (&heard);
}

//  An address forgotten (its connection closed after it unregistered) and
//  another on a new connection: nothing of the old one (its route, its
//  connection's results, its run batch, its owner) reaches the new one,
//  and the old one, back, starts afresh
static void
s_stale_references (xxl_registry_t *registry)
{
    size_t size, count;
    XXL_CHECK (xxl_registry_beat (registry, "app", "old", "R1", 2, NULL, 100) == 1);
    xxl_registry_set_run_batch (registry, "old", 50);
    xxl_registry_set_owner (registry, "old", "key-a");
    XXL_CHECK (xxl_registry_run_batch (registry, "old") == 50);
    XXL_CHECK (streq (xxl_registry_owner (registry, "old"), "key-a"));
    //  Unregistered: parting from R1, which still counts it (a draining
    //  agent's LOG, KILL and results) and keeps its owner
    XXL_CHECK (xxl_registry_remove (registry, "app", "old") == 0);
    XXL_CHECK (!xxl_registry_route (registry, "old", &size));
    XXL_CHECK (xxl_registry_route_last (registry, "old", &size) && size == 2);
    XXL_CHECK (xxl_registry_rid_address (registry, "R1", 2, &count) && count == 1);
    XXL_CHECK (streq (xxl_registry_owner (registry, "old"), "key-a"));
    xxl_registry_stats_t stats;
    xxl_registry_stats (registry, &stats);
    XXL_CHECK (stats.addresses == 1 && stats.parting == 1 && stats.connections == 1);
    //  A parting address is not one of R1's connected addresses
    XXL_CHECK (xxl_registry_rid_connected (registry, "R1", 2, NULL, 0) == 0);
    //  R1 closes: the address is forgotten (none of it was connected)
    XXL_CHECK (xxl_registry_gone (registry, "R1", 2) == 0);
    xxl_registry_stats (registry, &stats);
    XXL_CHECK (stats.addresses == 0 && stats.parting == 0 && stats.connections == 0
               && stats.released == 1);
    xxl_registry_collect (registry);
    xxl_registry_stats (registry, &stats);
    XXL_CHECK (stats.released == 0);
    //  A new address, on a new connection, in what the old one held
    XXL_CHECK (xxl_registry_beat (registry, "app", "new", "R2", 2, NULL, 200) == 1);
    //  ... the old connection's messages are not the new address's: no
    //  result (CALLBACK: 401), no REPLY matched to it through R1
    XXL_CHECK (!xxl_registry_rid_address (registry, "R1", 2, &count) && count == 0);
    XXL_CHECK (!xxl_registry_has_rid (registry, "R1", 2));
    XXL_CHECK (xxl_registry_rid_address (registry, "R2", 2, &count) && count == 1);
    //  ... nothing routes to the old address, nor is its copy handed out
    XXL_CHECK (!xxl_registry_route (registry, "old", &size));
    XXL_CHECK (!xxl_registry_route_last (registry, "old", &size));
    XXL_CHECK (!xxl_registry_address (registry, "old"));
    XXL_CHECK (!xxl_registry_listed (registry, "old"));
    XXL_CHECK (xxl_registry_run_batch (registry, "old") == 0);
    XXL_CHECK (!xxl_registry_owner (registry, "old"));
    //  ... and failures on the old connection do not touch the new one
    xxl_registry_unroute (registry, "new", "R1", 2);
    XXL_CHECK (xxl_registry_gone (registry, "R1", 2) == 0);
    const void *rid = xxl_registry_route (registry, "new", &size);
    XXL_CHECK (rid && size == 2 && memcmp (rid, "R2", 2) == 0);
    XXL_CHECK (xxl_registry_run_batch (registry, "new") == 0);
    XXL_CHECK (!xxl_registry_owner (registry, "new"));
    //  The old address comes back (on R3): a new route, none of its past
    XXL_CHECK (xxl_registry_beat (registry, "app", "old", "R3", 2, NULL, 300) == 1);
    XXL_CHECK (xxl_registry_run_batch (registry, "old") == 0);
    XXL_CHECK (!xxl_registry_owner (registry, "old"));
    rid = xxl_registry_route (registry, "old", &size);
    XXL_CHECK (rid && memcmp (rid, "R3", 2) == 0);
    //  The addresses connected through a connection: those routed to it
    const char *through [2] = { NULL, NULL };
    XXL_CHECK (xxl_registry_rid_connected (registry, "R3", 2, through, 2) == 1
               && streq (through [0], "old") && !through [1]);
    XXL_CHECK (xxl_registry_rid_connected (registry, "R2", 2, through, 2) == 1
               && streq (through [0], "new"));
    XXL_CHECK (xxl_registry_rid_connected (registry, "R9", 2, through, 2) == 0);
    //  R2 and R3 close, the addresses expire: nothing held
    XXL_CHECK (xxl_registry_gone (registry, "R2", 2) == 1);
    XXL_CHECK (xxl_registry_gone (registry, "R3", 2) == 1);
    XXL_CHECK (xxl_registry_listed (registry, "new") && !xxl_registry_route (registry, "new", &size));
    XXL_CHECK (xxl_registry_expire (registry, 1000) == 2);
    xxl_registry_collect (registry);
    xxl_registry_stats (registry, &stats);
    XXL_CHECK (stats.entries == 0 && stats.addresses == 0 && stats.connections == 0
               && stats.apps == 0);
}

//  Each app's list is its own: one app's changes leave another's as it
//  was (the same array, not made again); an address two apps list that
//  disconnects leaves both
static void
s_views (xxl_registry_t *registry)
{
    const char *const *a1, *const *a2, *const *b1;
    XXL_CHECK (xxl_registry_beat (registry, "va", "v1", "W1", 2, NULL, 100) == 1);
    XXL_CHECK (xxl_registry_beat (registry, "va", "v2", "W2", 2, NULL, 100) == 1);
    XXL_CHECK (xxl_registry_beat (registry, "vb", "v2", "W2", 2, NULL, 100) == 1);
    XXL_CHECK (xxl_registry_addresses (registry, "va", &a1) == 2);
    XXL_CHECK (xxl_registry_addresses (registry, "vb", &b1) == 1 && streq (b1 [0], "v2"));
    XXL_CHECK (xxl_registry_addresses (registry, "va", &a2) == 2 && a2 == a1);
    XXL_CHECK (xxl_registry_beat (registry, "vb", "v3", "W3", 2, NULL, 100) == 1);
    XXL_CHECK (xxl_registry_addresses (registry, "va", &a2) == 2 && a2 == a1);
    XXL_CHECK (xxl_registry_addresses (registry, "vb", &b1) == 2);
    XXL_CHECK (streq (b1 [0], "v2") && streq (b1 [1], "v3"));
    //  v2 (both apps') disconnects: out of both lists
    xxl_registry_unroute (registry, "v2", "W2", 2);
    XXL_CHECK (xxl_registry_addresses (registry, "va", &a1) == 1 && streq (a1 [0], "v1"));
    XXL_CHECK (xxl_registry_addresses (registry, "vb", &b1) == 1 && streq (b1 [0], "v3"));
    //  ... back on another connection: in both again
    XXL_CHECK (xxl_registry_beat (registry, "va", "v2", "W4", 2, NULL, 200) == 1);
    XXL_CHECK (xxl_registry_addresses (registry, "va", &a1) == 2);
    XXL_CHECK (xxl_registry_addresses (registry, "vb", &b1) == 2 && streq (b1 [0], "v2"));
    //  v1 (one app's) moves connection: still listed; closes: out
    XXL_CHECK (xxl_registry_beat (registry, "va", "v1", "W5", 2, NULL, 200) == 1);
    XXL_CHECK (xxl_registry_addresses (registry, "va", &a1) == 2);
    XXL_CHECK (xxl_registry_gone (registry, "W1", 2) == 0);
    XXL_CHECK (xxl_registry_addresses (registry, "va", &a1) == 2);
    XXL_CHECK (xxl_registry_gone (registry, "W5", 2) == 1);
    XXL_CHECK (xxl_registry_addresses (registry, "va", &a1) == 1 && streq (a1 [0], "v2"));
    XXL_CHECK (xxl_registry_addresses (registry, "vc", &a1) == 0 && a1 && !a1 [0]);
    XXL_CHECK (xxl_registry_expire (registry, 1000) == 4);
    XXL_CHECK (xxl_registry_addresses (registry, "va", &a1) == 0);
    XXL_CHECK (xxl_registry_gone (registry, "W3", 2) == 0);
    XXL_CHECK (xxl_registry_gone (registry, "W4", 2) == 0);
    xxl_registry_collect (registry);
    xxl_registry_stats_t stats;
    xxl_registry_stats (registry, &stats);
    XXL_CHECK (stats.addresses == 0 && stats.connections == 0 && stats.apps == 0);
}

//  Agents come and go, each with an address never seen before, over many
//  cycles (unregistered and their connection closed, expired, or cut off
//  and expired): what the registry holds follows the live agents, not
//  how many were ever seen
#define S_LIVE 60
#define S_CYCLES 200
static void
s_churn (xxl_registry_t *registry)
{
    char address [64], rid [32], app [32];
    size_t worst_entries_alloc = 0, worst_addresses = 0, worst_connections = 0;
    size_t worst_apps = 0;
    bool exact = true;
    int64_t now = 10000;
    for (int cycle = 0; cycle < S_CYCLES; cycle++, now += 1000) {
        //  S_LIVE new agents in 3 apps of this cycle (app names come and
        //  go too), one connection each
        for (int i = 0; i < S_LIVE; i++) {
            snprintf (address, sizeof address, "pod-%d-%d:9999", cycle, i);
            snprintf (rid, sizeof rid, "k%d.%d", cycle, i);
            snprintf (app, sizeof app, "app-%d", (cycle + i % 3) % 7);
            if (xxl_registry_beat (registry, app, address, rid, strlen (rid), "h", now) != 1)
                exact = false;
            xxl_registry_set_run_batch (registry, address, 10);
            xxl_registry_set_owner (registry, address, "key");
        }
        const char *const *list;
        xxl_registry_addresses (registry, "app-3", &list);
        //  The previous cycle's agents leave, a third each way
        for (int i = 0; cycle > 0 && i < S_LIVE; i++) {
            snprintf (address, sizeof address, "pod-%d-%d:9999", cycle - 1, i);
            snprintf (rid, sizeof rid, "k%d.%d", cycle - 1, i);
            snprintf (app, sizeof app, "app-%d", (cycle - 1 + i % 3) % 7);
            if (i % 3 == 0) {
                //  UNREGISTER, then its connection closes
                if (xxl_registry_remove (registry, app, address))
                    exact = false;
                if (xxl_registry_gone (registry, rid, strlen (rid)) != 0)
                    exact = false;
            }
            else
            if (i % 3 == 1)
                //  a send fails (connection closed), then it expires
                xxl_registry_unroute (registry, address, rid, strlen (rid));
            //  (i % 3 == 2: silent, expires; its connection closes after)
        }
        //  The previous cycle's silent ones expire: beats before now
        int expired = xxl_registry_expire (registry, now);
        if (cycle > 0 && expired != S_LIVE - (S_LIVE + 2) / 3)
            exact = false;
        for (int i = 2; cycle > 0 && i < S_LIVE; i += 3) {
            snprintf (rid, sizeof rid, "k%d.%d", cycle - 1, i);
            if (xxl_registry_gone (registry, rid, strlen (rid)) != 0)
                exact = false;
        }
        xxl_registry_collect (registry);
        xxl_registry_stats_t stats;
        xxl_registry_stats (registry, &stats);
        if (stats.entries != S_LIVE || stats.addresses != S_LIVE
        ||  stats.connections != S_LIVE || stats.parting != 0 || stats.released != 0)
            exact = false;
        if (stats.entries_alloc > worst_entries_alloc)
            worst_entries_alloc = stats.entries_alloc;
        if (stats.addresses > worst_addresses)
            worst_addresses = stats.addresses;
        if (stats.connections > worst_connections)
            worst_connections = stats.connections;
        if (stats.apps > worst_apps)
            worst_apps = stats.apps;
    }
    XXL_CHECK (exact);
    //  (S_CYCLES * S_LIVE = 12,000 addresses seen, S_LIVE held at a time)
    XXL_CHECK (worst_addresses == S_LIVE && worst_connections == S_LIVE);
    XXL_CHECK (worst_entries_alloc <= 4 * S_LIVE);
    XXL_CHECK (worst_apps <= 3);
    //  The last cycle's agents leave: nothing held
    for (int i = 0; i < S_LIVE; i++) {
        snprintf (rid, sizeof rid, "k%d.%d", S_CYCLES - 1, i);
        XXL_CHECK (xxl_registry_gone (registry, rid, strlen (rid)) == 1);
    }
    XXL_CHECK (xxl_registry_expire (registry, now + 1000) == S_LIVE);
    xxl_registry_collect (registry);
    xxl_registry_stats_t stats;
    xxl_registry_stats (registry, &stats);
    XXL_CHECK (stats.entries == 0 && stats.addresses == 0 && stats.connections == 0
               && stats.apps == 0 && stats.entries_alloc <= 64);
}

//  The limit: (app, address) entries plus parting addresses; a refusal
//  changes nothing; a refresh, and a parting address coming back, are
//  always taken; places free up as agents leave
static void
s_limit (xxl_registry_t *registry)
{
    size_t size;
    xxl_registry_set_limit (registry, 3);
    XXL_CHECK (xxl_registry_limit (registry) == 3);
    XXL_CHECK (xxl_registry_beat (registry, "lim", "a", "Q1", 2, NULL, 100) == 1);
    XXL_CHECK (xxl_registry_beat (registry, "lim", "b", "Q2", 2, NULL, 100) == 1);
    XXL_CHECK (xxl_registry_beat (registry, "lim", "c", "Q3", 2, NULL, 100) == 1);
    XXL_CHECK (xxl_registry_beat (registry, "lim", "d", "Q4", 2, NULL, 100) == XXL_REGISTRY_FULL);
    //  ... another app listing a held address is an entry too
    XXL_CHECK (xxl_registry_beat (registry, "lim2", "a", "Q1", 2, NULL, 100) == XXL_REGISTRY_FULL);
    XXL_CHECK (xxl_registry_size (registry) == 3);
    XXL_CHECK (!xxl_registry_route (registry, "d", &size) && !xxl_registry_listed (registry, "d"));
    XXL_CHECK (!xxl_registry_has_rid (registry, "Q4", 2));
    const char *const *list;
    XXL_CHECK (xxl_registry_addresses (registry, "lim2", &list) == 0);
    //  Refreshes, and a move to another connection, are taken
    XXL_CHECK (xxl_registry_beat (registry, "lim", "a", "Q1", 2, NULL, 200) == 0);
    XXL_CHECK (xxl_registry_beat (registry, "lim", "b", "Q5", 2, NULL, 200) == 1);
    //  c unregisters, its connection open: it still holds its place ...
    XXL_CHECK (xxl_registry_remove (registry, "lim", "c") == 0);
    XXL_CHECK (xxl_registry_beat (registry, "lim", "d", "Q4", 2, NULL, 200) == XXL_REGISTRY_FULL);
    //  ... and takes it again
    XXL_CHECK (xxl_registry_beat (registry, "lim", "c", "Q3", 2, NULL, 200) == 1);
    XXL_CHECK (xxl_registry_remove (registry, "lim", "c") == 0);
    //  Its connection closes: the place is free
    XXL_CHECK (xxl_registry_gone (registry, "Q3", 2) == 0);
    XXL_CHECK (xxl_registry_beat (registry, "lim", "d", "Q4", 2, NULL, 300) == 1);
    XXL_CHECK (xxl_registry_route (registry, "d", &size) != NULL);
    //  Over many comings and goings, the limit holds what is live
    int taken = 0;
    for (int i = 0; i < 100; i++) {
        char address [32], rid [32];
        snprintf (address, sizeof address, "e%d", i);
        snprintf (rid, sizeof rid, "E%d", i);
        XXL_CHECK (xxl_registry_remove (registry, "lim", i? "x": "d") == 0);
        XXL_CHECK (xxl_registry_gone (registry, i? "X": "Q4", i? 1: 2) == 0);
        taken += xxl_registry_beat (registry, "lim", address, rid, strlen (rid), NULL, 400) == 1;
        XXL_CHECK (xxl_registry_beat (registry, "lim", "y", "Y", 1, NULL, 400) == XXL_REGISTRY_FULL);
        xxl_registry_remove (registry, "lim", address);
        xxl_registry_gone (registry, rid, strlen (rid));
        XXL_CHECK (xxl_registry_beat (registry, "lim", "x", "X", 1, NULL, 400) == 1);
    }
    XXL_CHECK (taken == 100);
    xxl_registry_collect (registry);
    xxl_registry_stats_t stats;
    xxl_registry_stats (registry, &stats);
    XXL_CHECK (stats.entries == 3 && stats.addresses == 3 && stats.connections == 3);
    //  0: no limit
    xxl_registry_set_limit (registry, 0);
    XXL_CHECK (xxl_registry_beat (registry, "lim", "y", "Y", 1, NULL, 500) == 1);
}

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
    //  host-a and host-c expired on connections still open: parting, held
    //  until those close
    xxl_registry_stats_t stats;
    xxl_registry_stats (registry, &stats);
    XXL_CHECK (stats.entries == 0 && stats.addresses == 2 && stats.parting == 2
               && stats.connections == 2);
    XXL_CHECK (xxl_registry_gone (registry, "r2", 2) == 0);
    XXL_CHECK (xxl_registry_gone (registry, "r3", 2) == 0);
    xxl_registry_collect (registry);
    xxl_registry_stats (registry, &stats);
    XXL_CHECK (stats.entries == 0 && stats.addresses == 0 && stats.connections == 0
               && stats.apps == 0 && stats.parting == 0 && stats.released == 0);

    s_stale_references (registry);
    s_monotonic ();
    s_heard ();
    s_views (registry);
    s_churn (registry);
    s_limit (registry);
    xxl_registry_destroy (&registry);
    XXL_CHECK (registry == NULL);
    return xxl_test_done ();
}
