/*  test_rules_lease.c -- the lease round's decisions (xxl_lease_rules.h):
    moved shares, the fair part and who is hungry, which shares to take,
    what to give back, when the next round is, and settle.  Then the
    rounds of 1, 2, 3 and 17 schedulers sharing one lease table, made of
    these decisions as xxl_lease.c makes them (the store's take, renew and
    release as the SQLite store does them): every share held by exactly
    one, each scheduler within its fair part, a dead scheduler's shares
    taken once its lease expired, a restarted one's own taken at once;
    and the deaf rule (xxl_lease_deaf): a scheduler that hears none of the
    store's agents while another does gives every share back, the others
    hold them all without give-backs back and forth while it lasts, and it
    takes its part again once it hears them.
*/

#include <stdio.h>
#include "xxl_lease_rules.h"
#include "xxl_test.h"

#define N XXL_STORE_SHARES
#define LEASE 3000
#define ROUND (LEASE / 3)
#define BIT(s) ((uint64_t) 1 << (s))

static xxl_lease_t s_table [N];

static void
s_table_reset (void)
{
    memset (s_table, 0, sizeof s_table);
    for (int s = 0; s < N; s++)
        s_table [s].share = s;
}

static void
s_set (xxl_lease_t *leases, int s, const char *owner, int64_t epoch, int64_t expires)
{
    snprintf (leases [s].owner, sizeof leases [s].owner, "%s", owner);
    leases [s].epoch = epoch;
    leases [s].expires = expires;
}

typedef struct {
    char node [32];
    uint64_t held;
    int64_t epochs [N];
    bool alive;
    bool deaf;                          //  (xxl_lease_deaf: gives all back, takes none)
} sched_t;

static int
s_count (uint64_t mask)
{
    return __builtin_popcountll (mask);
}

//  One round of scheduler me at now, live schedulers beating (as
//  engine_lease_round, against s_table)
static uint64_t
s_round (sched_t *me, int64_t now, int64_t live)
{
    xxl_lease_t leases [N];
    memcpy (leases, s_table, sizeof leases);
    int64_t expires = now + LEASE;
    uint64_t moved = xxl_lease_moved (me->held, me->epochs, me->node, leases);
    for (int s = 0; s < N; s++)
        if ((me->held & BIT (s)) && !(moved & BIT (s)))
            s_table [s].expires = leases [s].expires = expires;
    me->held &= ~moved;
    xxl_lease_balance_t balance = xxl_lease_balance (leases, me->node, now, live);
    uint64_t taken = 0;
    for (int s = 0; s < N; s++) {
        if ((me->held & BIT (s)) || me->deaf
        ||  !xxl_lease_wants (&leases [s], me->node, now, ROUND, s_count (me->held), balance.fair))
            continue;
        if (s_table [s].epoch != leases [s].epoch)
            continue;                   //  (the store's fence)
        s_set (s_table, s, me->node, leases [s].epoch + 1, expires);
        me->held |= BIT (s);
        me->epochs [s] = leases [s].epoch + 1;
        taken |= BIT (s);
    }
    uint64_t back = me->deaf? me->held
                            : xxl_lease_give_back (me->held, balance.fair, balance.hungry, taken);
    for (int s = N - 1; s >= 0; s--)
        if (back & BIT (s)) {
            me->held &= ~BIT (s);
            s_set (s_table, s, "", s_table [s].epoch, now);
        }
    return taken;
}

//  Every share held by exactly one live scheduler, as the table says
static bool
s_consistent (sched_t *scheds, int count)
{
    uint64_t seen = 0;
    for (int i = 0; i < count; i++) {
        if (!scheds [i].alive)
            continue;
        if (seen & scheds [i].held)
            return false;
        seen |= scheds [i].held;
        for (int s = 0; s < N; s++)
            if ((scheds [i].held & BIT (s)) && strcmp (s_table [s].owner, scheds [i].node))
                return false;
    }
    return true;
}

static uint64_t
s_union (sched_t *scheds, int count)
{
    uint64_t all = 0;
    for (int i = 0; i < count; i++)
        if (scheds [i].alive)
            all |= scheds [i].held;
    return all;
}

//  A fresh table and count live schedulers named node-0 ...
static void
s_start (sched_t *scheds, int count)
{
    s_table_reset ();
    memset (scheds, 0, 17 * sizeof (sched_t));
    for (int i = 0; i < count; i++) {
        snprintf (scheds [i].node, sizeof scheds [i].node, "node-%d", i);
        scheds [i].alive = true;
    }
}

//  count schedulers start together; after rounds they hold every share,
//  each no more than its fair part; then the last dies and the others
//  take its shares once its lease expired
static void
s_cluster (int count)
{
    sched_t scheds [17];
    s_start (scheds, count);
    int64_t now = 1000000;
    int fair = (N + count - 1) / count;
    for (int r = 0; r < 12; r++, now += ROUND)
        for (int i = 0; i < count; i++)
            s_round (&scheds [i], now, count);
    XXL_CHECK_MSG (s_consistent (scheds, count), "%d schedulers: a share held twice", count);
    XXL_CHECK_MSG (s_union (scheds, count) == (BIT (N) - 1),
                   "%d schedulers: shares %llx held", count,
                   (unsigned long long) s_union (scheds, count));
    int least = N, most = 0;
    for (int i = 0; i < count; i++) {
        least = s_count (scheds [i].held) < least? s_count (scheds [i].held): least;
        most = s_count (scheds [i].held) > most? s_count (scheds [i].held): most;
    }
    XXL_CHECK_MSG (most <= fair, "%d schedulers: one holds %d, fair %d", count, most, fair);
    //  The least: give-backs come only from over the fair part, so with 3
    //  schedulers 6 + 6 + 4 is where it rests (4 is short of the floor 5,
    //  yet nobody is over 6): at least N - (count - 1) * fair
    XXL_CHECK_MSG (count > N || least >= N - (count - 1) * fair, "%d schedulers: one holds %d",
                   count, least);
    if (count == 1)
        return;
    //  The last that holds a share dies: its shares stay its own until its
    //  lease expires
    int victim = count - 1;
    while (victim > 0 && !scheds [victim].held)
        victim--;
    sched_t *dead = &scheds [victim];
    XXL_CHECK (dead->held != 0);
    dead->alive = false;
    uint64_t orphans = dead->held;
    int64_t renewed = now - ROUND;      //  its last round's renewal
    for (int i = 0; i < count; i++)
        if (scheds [i].alive)
            s_round (&scheds [i], now, count);
    XXL_CHECK ((s_union (scheds, count) & orphans) == 0);
    for (int r = 0; r < 8; r++) {
        now += ROUND;
        for (int i = 0; i < count; i++)
            if (scheds [i].alive)
                s_round (&scheds [i], now, count - 1);
        if ((s_union (scheds, count) & orphans) == orphans)
            break;
    }
    XXL_CHECK_MSG ((s_union (scheds, count) & orphans) == orphans,
                   "%d schedulers: the dead one's shares not taken", count);
    XXL_CHECK_MSG (now >= renewed + LEASE, "%d schedulers: taken at %lld, renewed %lld", count, (long long) now, (long long) renewed);
    XXL_CHECK (s_consistent (scheds, count));
    //  It comes back under its name: only its own are taken back at once
    //  (none: all moved); it waits for its part through give-backs
    dead->alive = true;
    dead->held = 0;
    for (int r = 0; r < 20; r++, now += ROUND)
        for (int i = 0; i < count; i++)
            s_round (&scheds [i], now, count);
    XXL_CHECK (s_consistent (scheds, count));
    XXL_CHECK (s_union (scheds, count) == BIT (N) - 1);
    XXL_CHECK_MSG (count > N? s_count (dead->held) <= 1: s_count (dead->held) >= N - (count - 1) * fair,
                   "%d schedulers: the restarted one holds %d", count, s_count (dead->held));
}

//  count schedulers (2 or more) balanced; scheduler 0 turns deaf: it
//  stops beating its node row (the others count count - 1 live) and gives
//  every share back in its next round; the others hold all 16 within two
//  rounds, each within its fair part, and no share changes hands again
//  while it lasts; once it hears agents again it takes its part back
static void
s_cluster_deaf (int count)
{
    sched_t scheds [17];
    s_start (scheds, count);
    int64_t now = 1000000;
    for (int r = 0; r < 12; r++, now += ROUND)
        for (int i = 0; i < count; i++)
            s_round (&scheds [i], now, count);
    XXL_CHECK (s_consistent (scheds, count) && s_union (scheds, count) == BIT (N) - 1);
    XXL_CHECK_MSG (scheds [0].held != 0, "%d schedulers: scheduler 0 holds none", count);
    scheds [0].deaf = true;
    for (int r = 0; r < 2; r++, now += ROUND)
        for (int i = 0; i < count; i++)
            s_round (&scheds [i], now, count - 1);
    XXL_CHECK_MSG (scheds [0].held == 0, "%d schedulers: the deaf one holds %d", count,
                   s_count (scheds [0].held));
    XXL_CHECK_MSG (s_union (scheds, count) == BIT (N) - 1, "%d schedulers: shares %llx held",
                   count, (unsigned long long) s_union (scheds, count));
    XXL_CHECK (s_consistent (scheds, count));
    int fair = (N + count - 2) / (count - 1);
    for (int i = 1; i < count; i++)
        XXL_CHECK_MSG (s_count (scheds [i].held) <= fair, "%d schedulers: %d holds %d, fair %d",
                       count, i, s_count (scheds [i].held), fair);
    //  Steady while it lasts: no take, no give-back (the epochs stay)
    int64_t epochs [N];
    for (int s = 0; s < N; s++)
        epochs [s] = s_table [s].epoch;
    for (int r = 0; r < 20; r++, now += ROUND)
        for (int i = 0; i < count; i++)
            s_round (&scheds [i], now, count - 1);
    for (int s = 0; s < N; s++)
        XXL_CHECK_MSG (s_table [s].epoch == epochs [s], "%d schedulers: share %d moved while"
                       " scheduler 0 was deaf", count, s);
    XXL_CHECK (scheds [0].held == 0 && s_union (scheds, count) == BIT (N) - 1);
    //  It hears them again: it beats (count live) and takes its part
    scheds [0].deaf = false;
    for (int r = 0; r < 20; r++, now += ROUND)
        for (int i = 0; i < count; i++)
            s_round (&scheds [i], now, count);
    XXL_CHECK (s_consistent (scheds, count) && s_union (scheds, count) == BIT (N) - 1);
    XXL_CHECK_MSG (count > N || s_count (scheds [0].held) >= N - (count - 1) * ((N + count - 1) / count),
                   "%d schedulers: scheduler 0 holds %d after it hears again", count,
                   s_count (scheds [0].held));
}

int
main (void)
{
    xxl_lease_t leases [N];
    memset (leases, 0, sizeof leases);
    int64_t epochs [N] = { 0 };
    int64_t now = 500000;

    //  Moved: another owner, another epoch; unheld shares never
    s_set (leases, 0, "me", 3, now + 100);
    s_set (leases, 1, "other", 4, now + 100);
    s_set (leases, 2, "me", 9, now + 100);
    s_set (leases, 3, "other", 1, now + 100);
    epochs [0] = 3; epochs [1] = 4; epochs [2] = 8;
    XXL_CHECK_INT (xxl_lease_moved (BIT (0) | BIT (1) | BIT (2), epochs, "me", leases),
                   BIT (1) | BIT (2));
    XXL_CHECK_INT (xxl_lease_moved (0, epochs, "me", leases), 0);
    XXL_CHECK_INT (xxl_lease_moved (BIT (0), epochs, "me", leases), 0);

    //  Balance: fair = ceil (16 / live), floor = 16 / live
    memset (leases, 0, sizeof leases);
    int64_t lives [] = { 0, 1, 2, 3, 17 };
    int fairs [] = { 16, 16, 8, 6, 1 }, floors [] = { 16, 16, 8, 5, 0 };
    for (int i = 0; i < 5; i++) {
        xxl_lease_balance_t b = xxl_lease_balance (leases, "me", now, lives [i]);
        XXL_CHECK_INT (b.fair, fairs [i]);
        XXL_CHECK_INT (b.floor_part, floors [i]);
        XXL_CHECK_INT (b.live, lives [i] < 1? 1: lives [i]);
        //  nobody else holds anything: hungry when another is live
        XXL_CHECK (b.hungry == (lives [i] > 1));
    }
    //  Two live: the other holds 8 (not hungry), 7 (below the floor: hungry)
    for (int s = 0; s < 8; s++)
        s_set (leases, s, "other", 1, now + 100);
    XXL_CHECK (!xxl_lease_balance (leases, "me", now, 2).hungry);
    s_set (leases, 7, "other", 1, now);                     //  expired: not counted
    XXL_CHECK (xxl_lease_balance (leases, "me", now, 2).hungry);
    //  Three live, one other holder: the third holds nothing
    s_set (leases, 7, "other", 1, now + 100);
    XXL_CHECK (xxl_lease_balance (leases, "me", now, 3).hungry);
    //  Our own leases are not another's holding
    memset (leases, 0, sizeof leases);
    for (int s = 0; s < N; s++)
        s_set (leases, s, "me", 1, now + 100);
    XXL_CHECK (xxl_lease_balance (leases, "me", now, 2).hungry);
    XXL_CHECK (!xxl_lease_balance (leases, "me", now, 1).hungry);

    //  Wants: held by another unexpired, never; ours from before, at once;
    //  an orphan below the fair part, or orphaned two rounds, whatever held
    xxl_lease_t one = { 0 };
    s_set (&one, 0, "other", 1, now + 1);
    XXL_CHECK (!xxl_lease_wants (&one, "me", now, ROUND, 0, 16));
    s_set (&one, 0, "me", 1, now + 1);
    XXL_CHECK (xxl_lease_wants (&one, "me", now, ROUND, 16, 1));
    s_set (&one, 0, "", 1, now - 1);
    XXL_CHECK (xxl_lease_wants (&one, "me", now, ROUND, 7, 8));
    XXL_CHECK (!xxl_lease_wants (&one, "me", now, ROUND, 8, 8));
    s_set (&one, 0, "other", 1, now);                       //  expired at now
    XXL_CHECK (xxl_lease_wants (&one, "me", now, ROUND, 0, 8));
    XXL_CHECK (!xxl_lease_wants (&one, "me", now, ROUND, 8, 8));
    s_set (&one, 0, "other", 1, now - 2 * ROUND);           //  two rounds orphaned
    XXL_CHECK (xxl_lease_wants (&one, "me", now, ROUND, 16, 8));
    s_set (&one, 0, "other", 1, now - 2 * ROUND + 1);
    XXL_CHECK (!xxl_lease_wants (&one, "me", now, ROUND, 16, 8));

    //  Give back: the highest held over the fair part; not when this round
    //  took, nor when nobody is hungry
    uint64_t all = BIT (N) - 1;
    XXL_CHECK_INT (xxl_lease_give_back (all, 8, true, 0), 0xff00);
    XXL_CHECK_INT (xxl_lease_give_back (all, 8, false, 0), 0);
    XXL_CHECK_INT (xxl_lease_give_back (all, 8, true, BIT (3)), 0);
    XXL_CHECK_INT (xxl_lease_give_back (BIT (1) | BIT (5) | BIT (9), 1, true, 0), BIT (5) | BIT (9));
    XXL_CHECK_INT (xxl_lease_give_back (BIT (1), 1, true, 0), 0);
    XXL_CHECK_INT (xxl_lease_give_back (all, 1, true, 0), all & ~BIT (0));

    //  Next round: a round on, or just after another's soonest expiry
    memset (leases, 0, sizeof leases);
    XXL_CHECK_INT (xxl_lease_next_round (leases, 0, now, ROUND), now + ROUND);
    s_set (leases, 4, "other", 1, now + 200);
    XXL_CHECK_INT (xxl_lease_next_round (leases, 0, now, ROUND), now + 200 + XXL_LEASE_AFTER_MS);
    XXL_CHECK_INT (xxl_lease_next_round (leases, BIT (4), now, ROUND), now + ROUND);
    s_set (leases, 4, "other", 1, now);                     //  already expired: not awaited
    XXL_CHECK_INT (xxl_lease_next_round (leases, 0, now, ROUND), now + ROUND);
    s_set (leases, 4, "other", 1, now + ROUND - XXL_LEASE_AFTER_MS);
    XXL_CHECK_INT (xxl_lease_next_round (leases, 0, now, ROUND), now + ROUND);

    //  Settle: a commit makes the leases sure; a failed one undoes the take
    xxl_lease_settle_t settle = xxl_lease_settle (9000, 5000, BIT (2), true);
    XXL_CHECK (settle.lease_until == 9000 && settle.committed_until == 9000 && settle.lost == 0);
    settle = xxl_lease_settle (9000, 5000, BIT (2) | BIT (7), false);
    XXL_CHECK (settle.lease_until == 5000 && settle.committed_until == 5000);
    XXL_CHECK_INT (settle.lost, BIT (2) | BIT (7));
    settle = xxl_lease_settle (9000, 5000, 0, false);
    XXL_CHECK (settle.lease_until == 5000 && settle.lost == 0);

    //  A jump of the store's clock: the lead's lowest bound this read over
    //  its highest the last read, by more than XXL_LEASE_JUMP_MS
    xxl_lease_read_t none = { 0, 0, 0 };
    xxl_lease_read_t last = { 1000000, 500, 510 };             //  lead in [999490, 999500]
    xxl_lease_read_t read = { 1001000, 1500, 1500 };           //  steady: lead 999500
    XXL_CHECK (!xxl_lease_jumped (&none, &read));
    XXL_CHECK (!xxl_lease_jumped (&last, &read));
    read = (xxl_lease_read_t) { 1001000 + XXL_LEASE_JUMP_MS, 1500, 1500 };
    XXL_CHECK (!xxl_lease_jumped (&last, &read));              //  at the bound: inside the margin
    read.now++;
    XXL_CHECK (xxl_lease_jumped (&last, &read));               //  past it
    read = (xxl_lease_read_t) { 1001000 + 3000, 1500, 1500 };  //  +3 s
    XXL_CHECK (xxl_lease_jumped (&last, &read));
    //  A slow read (the store answered 900 ms after it was asked) is no
    //  jump, whenever in the read the store's clock was taken
    read = (xxl_lease_read_t) { 1001000, 1500, 2400 };
    XXL_CHECK (!xxl_lease_jumped (&last, &read));
    read = (xxl_lease_read_t) { 1001900, 1500, 2400 };
    XXL_CHECK (!xxl_lease_jumped (&last, &read));
    //  ... nor the normal read after a slow one
    xxl_lease_read_t slow = { 1001900, 1500, 2400 };
    read = (xxl_lease_read_t) { 1002500, 3000, 3000 };
    XXL_CHECK (!xxl_lease_jumped (&slow, &read));
    //  A step back is no jump ahead
    read = (xxl_lease_read_t) { 1001000 - 3600000, 1500, 1500 };
    XXL_CHECK (!xxl_lease_jumped (&last, &read));
    //  ... but a step back, by at least the gap between the bounds
    XXL_CHECK_INT (xxl_lease_stepped_back (&last, &read), 3600000 - 10);
    XXL_CHECK_INT (xxl_lease_stepped_back (&none, &read), 0);
    read = (xxl_lease_read_t) { 1001000, 1500, 1500 };                     //  steady
    XXL_CHECK_INT (xxl_lease_stepped_back (&last, &read), 0);
    read = (xxl_lease_read_t) { 1001000 - XXL_LEASE_JUMP_MS - 10, 1500, 1500 };
    XXL_CHECK_INT (xxl_lease_stepped_back (&last, &read), 0);              //  within the margin
    read.now--;
    XXL_CHECK_INT (xxl_lease_stepped_back (&last, &read), XXL_LEASE_JUMP_MS + 1);
    //  A slow read, its clock taken at its start or at its end, is no step
    read = (xxl_lease_read_t) { 1001000, 1500, 2400 };
    XXL_CHECK_INT (xxl_lease_stepped_back (&last, &read), 0);
    read = (xxl_lease_read_t) { 1001900, 1500, 2400 };
    XXL_CHECK_INT (xxl_lease_stepped_back (&last, &read), 0);
    read = (xxl_lease_read_t) { 1002500, 3000, 3000 };                     //  after a slow one
    XXL_CHECK_INT (xxl_lease_stepped_back (&slow, &read), 0);

    //  Leases across a step back: a row another owner wrote, read last
    //  round and unchanged, is judged earlier by every step since; one
    //  changed across the step, expired once unchanged for a lease
    xxl_lease_seen_t seen [N];
    memset (seen, 0, sizeof seen);
    xxl_lease_t round1 [N], rows [N];
    memset (round1, 0, sizeof round1);
    s_set (round1, 1, "other", 4, 50000);
    s_set (round1, 2, "me", 7, 50000);
    s_set (round1, 3, "other", 5, 50000);
    memcpy (rows, round1, sizeof rows);
    xxl_lease_across_steps (rows, "me", seen, 0, 1000, LEASE, 40000);
    XXL_CHECK (rows [1].expires == 50000 && rows [3].expires == 50000);
    //  The step back: row 1 unchanged, row 3 renewed meanwhile (before or
    //  after the step: not known)
    memcpy (rows, round1, sizeof rows);
    s_set (rows, 3, "other", 5, 51000);
    xxl_lease_across_steps (rows, "me", seen, 60000, 2000, LEASE, 41000 - 60000);
    XXL_CHECK_INT (rows [1].expires, 50000 - 60000);
    XXL_CHECK_INT (rows [2].expires, 50000);        //  its own
    XXL_CHECK_INT (rows [3].expires, 51000);        //  judged as read, for now
    XXL_CHECK_INT (rows [5].expires, 0);            //  unowned
    XXL_CHECK (seen [3].unsure_since == 2000 && seen [1].unsure_since == 0);
    //  No step, rows unchanged, short of a lease since: kept as judged
    memcpy (rows, round1, sizeof rows);
    s_set (rows, 3, "other", 5, 51000);
    xxl_lease_across_steps (rows, "me", seen, 0, 2000 + LEASE - 1, LEASE, 42000 - 60000);
    XXL_CHECK_INT (rows [1].expires, 50000 - 60000);
    XXL_CHECK_INT (rows [3].expires, 51000);
    //  A lease after: row 3 expired, as of a lease after it was seen
    memcpy (rows, round1, sizeof rows);
    s_set (rows, 3, "other", 5, 51000);
    xxl_lease_across_steps (rows, "me", seen, 0, 2000 + LEASE + 500, LEASE, 43000 - 60000);
    XXL_CHECK_INT (rows [3].expires, 43000 - 60000 - 500);
    XXL_CHECK_INT (rows [1].expires, 50000 - 60000);
    //  A second step adds to the shift
    memcpy (rows, round1, sizeof rows);
    s_set (rows, 3, "other", 5, 51000);
    xxl_lease_across_steps (rows, "me", seen, 2000, 2000 + LEASE + 900, LEASE, 41000 - 62000);
    XXL_CHECK_INT (rows [1].expires, 50000 - 62000);
    XXL_CHECK_INT (rows [3].expires, 51000 - 2000 > 41000 - 62000 - 900
                                     ? 41000 - 62000 - 900: 51000 - 2000);
    //  Renewed (row 3), taken (row 1: its epoch moved): judged as read
    memcpy (rows, round1, sizeof rows);
    s_set (rows, 1, "other", 5, 50000);
    s_set (rows, 3, "other", 5, 52000);
    xxl_lease_across_steps (rows, "me", seen, 0, 9000, LEASE, 45000 - 62000);
    XXL_CHECK_INT (rows [1].expires, 50000);
    XXL_CHECK_INT (rows [3].expires, 52000);
    XXL_CHECK (seen [1].shift == 0 && seen [3].shift == 0 && seen [3].unsure_since == 0);
    //  Released after a step: nothing to judge
    memcpy (rows, round1, sizeof rows);
    s_set (rows, 3, "other", 5, 52000);
    xxl_lease_across_steps (rows, "me", seen, 5000, 9500, LEASE, 45000 - 67000);
    XXL_CHECK_INT (rows [3].expires, 52000 - 5000);
    s_set (rows, 3, "", 6, 52000);
    xxl_lease_across_steps (rows, "me", seen, 0, 9600, LEASE, 45000 - 67000);
    XXL_CHECK_INT (rows [3].expires, 52000);
    XXL_CHECK (seen [3].shift == 0 && seen [3].unsure_since == 0);

    //  Watched: another's row is taken only once it stayed as read for a
    //  lease of this scheduler's monotonic time, whatever its expiry says
    //  (the store's clock stepped back and forth while this one was
    //  frozen: a live holder's renewal of the excursion reads long past)
    {
        xxl_lease_seen_t watch [N];
        memset (watch, 0, sizeof watch);
        xxl_lease_t w [N];
        memset (w, 0, sizeof w);
        s_set (w, 1, "other", 4, 50000);
        s_set (w, 2, "me", 7, 50000);
        s_set (w, 3, "", 8, 0);
        xxl_lease_across_steps (w, "me", watch, 0, 1000, LEASE, 40000);
        XXL_CHECK_INT (watch [1].since, 1000);
        XXL_CHECK_INT (xxl_lease_watch_at (&watch [1], &w [1], "me", LEASE), 1000 + LEASE);
        XXL_CHECK (!xxl_lease_watched (&watch [1], &w [1], "me", 1000 + LEASE - 1, LEASE));
        XXL_CHECK (xxl_lease_watched (&watch [1], &w [1], "me", 1000 + LEASE, LEASE));
        //  ... its own row, and one no owner names: at once
        XXL_CHECK (xxl_lease_watched (&watch [2], &w [2], "me", 1000, LEASE));
        XXL_CHECK_INT (xxl_lease_watch_at (&watch [2], &w [2], "me", LEASE), 0);
        XXL_CHECK (xxl_lease_watched (&watch [3], &w [3], "me", 1000, LEASE));
        //  ... unchanged rounds keep the time it was first read
        xxl_lease_across_steps (w, "me", watch, 0, 1900, LEASE, 40900);
        XXL_CHECK_INT (watch [1].since, 1000);
        //  ... a renewal (another expiry, even an earlier one: the store's
        //  clock stepped back) starts the watch again
        s_set (w, 1, "other", 4, 50000 - 57000);
        xxl_lease_across_steps (w, "me", watch, 0, 2500, LEASE, 41500);
        XXL_CHECK_INT (watch [1].since, 2500);
        XXL_CHECK (!xxl_lease_watched (&watch [1], &w [1], "me", 1000 + LEASE, LEASE));
        XXL_CHECK (xxl_lease_watched (&watch [1], &w [1], "me", 2500 + LEASE, LEASE));
        //  ... and so does a take (the epoch moves)
        s_set (w, 1, "third", 5, 50000 - 57000);
        xxl_lease_across_steps (w, "me", watch, 0, 2600, LEASE, 41600);
        XXL_CHECK_INT (watch [1].since, 2600);
    }

    //  Deaf: no agent heard here (heard 0) while a registry row was beaten
    //  after now - (dead - beat): another scheduler's beat (dead 3 s, beat
    //  1 s: the window is 2 s)
    int64_t dead = 3000, beat = 1000;
    XXL_CHECK (xxl_lease_deaf (0, now, now, dead, beat));
    XXL_CHECK (xxl_lease_deaf (0, now - 1999, now, dead, beat));
    XXL_CHECK (!xxl_lease_deaf (0, now - 2000, now, dead, beat));      //  at the bound: not
    //  ... an agent heard here: never, however fresh the store's rows
    XXL_CHECK (!xxl_lease_deaf (1, now, now, dead, beat));
    XXL_CHECK (!xxl_lease_deaf (2, now - 100, now, dead, beat));
    //  ... this scheduler's own last beat (its registry dropped the
    //  address at the dead time): not another's
    XXL_CHECK (!xxl_lease_deaf (0, now - dead, now, dead, beat));
    //  ... nobody's rows (no agent alive, or every scheduler deaf), none
    //  at all, or the store not read: nothing changes
    XXL_CHECK (!xxl_lease_deaf (0, now - 60000, now, dead, beat));
    XXL_CHECK (!xxl_lease_deaf (0, 0, now, dead, beat));
    XXL_CHECK (!xxl_lease_deaf (0, -1, now, dead, beat));
    //  ... no window between a beat and the dead time: never
    XXL_CHECK (!xxl_lease_deaf (0, now, now, beat, beat));
    XXL_CHECK (!xxl_lease_deaf (0, now, now, beat, dead));
    //  ... a row beaten ahead of this scheduler's reading of the store's
    //  clock (a later write): fresh
    XXL_CHECK (xxl_lease_deaf (0, now + 5, now, dead, beat));
    //  defaults (dead 90 s, beat 30 s): a 60 s window
    XXL_CHECK (xxl_lease_deaf (0, now - 59999, now, 90000, 30000));
    XXL_CHECK (!xxl_lease_deaf (0, now - 60000, now, 90000, 30000));

    //  Clusters
    int sizes [] = { 1, 2, 3, 17 };
    for (int i = 0; i < 4; i++)
        s_cluster (sizes [i]);
    int deaf_sizes [] = { 2, 3, 5, 17 };
    for (int i = 0; i < 4; i++)
        s_cluster_deaf (deaf_sizes [i]);
    return xxl_test_done ();
}
