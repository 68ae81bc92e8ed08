/*  xxl_lease_rules.c -- the lease round's decisions as pure functions
    (contract: xxl_lease_rules.h).
*/

#include <assert.h>
#include <string.h>
#include "xxl_lease_rules.h"

#define ALL_SHARES (((uint64_t) 1 << XXL_STORE_SHARES) - 1)

uint64_t
xxl_lease_moved (uint64_t held, const int64_t *epochs, const char *node,
                 const xxl_lease_t *leases)
{
    assert (epochs && node && leases);
    uint64_t moved = 0;
    for (int s = 0; s < XXL_STORE_SHARES; s++)
        if ((held & ((uint64_t) 1 << s))
        &&  (strcmp (leases [s].owner, node) || leases [s].epoch != epochs [s]))
            moved |= (uint64_t) 1 << s;
    assert ((moved & ~held) == 0);
    return moved;
}

xxl_lease_balance_t
xxl_lease_balance (const xxl_lease_t *leases, const char *node, int64_t now, int64_t live)
{
    assert (leases && node);
    xxl_lease_balance_t balance = { .live = live < 1? 1: live };
    balance.fair = (int) ((XXL_STORE_SHARES + balance.live - 1) / balance.live);
    balance.floor_part = (int) (XXL_STORE_SHARES / balance.live);
    //  Holdings of the other live holders (distinct owners of leases not
    //  expired)
    const char *owners [XXL_STORE_SHARES];
    int counts [XXL_STORE_SHARES];
    int distinct = 0, least = XXL_STORE_SHARES;
    for (int s = 0; s < XXL_STORE_SHARES; s++) {
        if (!*leases [s].owner || leases [s].expires <= now || strcmp (leases [s].owner, node) == 0)
            continue;
        int k = 0;
        while (k < distinct && strcmp (owners [k], leases [s].owner))
            k++;
        if (k == distinct) {
            owners [distinct] = leases [s].owner;
            counts [distinct++] = 0;
        }
        counts [k]++;
    }
    for (int k = 0; k < distinct; k++)
        if (counts [k] < least)
            least = counts [k];
    //  Another live scheduler holds nothing, or less than the floor
    balance.hungry = distinct + 1 < balance.live || (distinct && least < balance.floor_part);
    assert (balance.fair >= 1 && balance.fair <= XXL_STORE_SHARES
            && balance.floor_part <= balance.fair);
    return balance;
}

bool
xxl_lease_wants (const xxl_lease_t *lease, const char *node, int64_t now, int64_t round,
                 int held_count, int fair)
{
    assert (lease && node && round >= 0);
    bool ours = strcmp (lease->owner, node) == 0;
    bool orphan = !*lease->owner || lease->expires <= now;
    if (!ours && !orphan)
        return false;
    bool long_orphan = orphan && lease->expires <= now - 2 * round;
    return ours || long_orphan || held_count < fair;
}

uint64_t
xxl_lease_give_back (uint64_t held, int fair, bool hungry, uint64_t taken)
{
    uint64_t back = 0;
    if (!hungry || taken)
        return 0;
    int over = __builtin_popcountll (held & ALL_SHARES) - fair;
    for (int s = XXL_STORE_SHARES - 1; s >= 0 && over > 0; s--)
        if (held & ((uint64_t) 1 << s)) {
            back |= (uint64_t) 1 << s;
            over--;
        }
    assert ((back & ~held) == 0);
    return back;
}

int64_t
xxl_lease_next_round (const xxl_lease_t *leases, uint64_t held, int64_t now, int64_t round)
{
    assert (leases && round >= 0);
    int64_t next = now + round;
    for (int s = 0; s < XXL_STORE_SHARES; s++)
        if (!(held & ((uint64_t) 1 << s)) && *leases [s].owner
        &&  leases [s].expires > now && leases [s].expires + XXL_LEASE_AFTER_MS < next)
            next = leases [s].expires + XXL_LEASE_AFTER_MS;
    assert (next <= now + round);
    return next;
}

xxl_lease_settle_t
xxl_lease_settle (int64_t lease_until, int64_t committed_until, uint64_t taken, bool committed)
{
    xxl_lease_settle_t settle = { .lease_until = lease_until, .committed_until = committed_until };
    if (committed)
        settle.committed_until = lease_until;
    else {
        settle.lease_until = committed_until;
        settle.lost = taken;
    }
    return settle;
}

bool
xxl_lease_jumped (const xxl_lease_read_t *last, const xxl_lease_read_t *read)
{
    assert (last && read && read->before <= read->after);
    if (last->before == 0 && last->after == 0)
        return false;
    return (read->now - read->after) - (last->now - last->before) > XXL_LEASE_JUMP_MS;
}

int64_t
xxl_lease_stepped_back (const xxl_lease_read_t *last, const xxl_lease_read_t *read)
{
    assert (last && read && read->before <= read->after);
    if (last->before == 0 && last->after == 0)
        return 0;
    int64_t back = (last->now - last->after) - (read->now - read->before);
    return back > XXL_LEASE_JUMP_MS? back: 0;
}

void
xxl_lease_across_steps (xxl_lease_t *leases, const char *node, xxl_lease_seen_t *seen,
                        int64_t back, int64_t mono, int64_t lease, int64_t now)
{
    assert (leases && node && seen && back >= 0 && lease > 0);
    for (int s = 0; s < XXL_STORE_SHARES; s++) {
        xxl_lease_seen_t *was = &seen [s];
        bool other = *leases [s].owner && strcmp (leases [s].owner, node) != 0;
        bool same = was->epoch == leases [s].epoch && was->expires == leases [s].expires;
        was->epoch = leases [s].epoch;
        was->expires = leases [s].expires;
        if (!same || !was->since)
            was->since = mono;
        if (!other || !same) {
            was->shift = 0;
            was->unsure_since = 0;
        }
        if (other && same)
            was->shift += back;
        else
        if (other && back)
            was->unsure_since = mono;
        leases [s].expires -= was->shift;
        if (was->unsure_since && mono >= was->unsure_since + lease) {
            int64_t expired = now - (mono - (was->unsure_since + lease));
            if (expired < leases [s].expires)
                leases [s].expires = expired;
        }
    }
}

bool
xxl_lease_deaf (size_t heard, int64_t newest, int64_t now, int64_t dead_ms, int64_t beat_ms)
{
    if (heard > 0 || newest <= 0 || dead_ms <= beat_ms)
        return false;
    return newest > now - (dead_ms - beat_ms);
}

int64_t
xxl_lease_watch_at (const xxl_lease_seen_t *seen, const xxl_lease_t *lease, const char *node,
                    int64_t lease_ms)
{
    assert (seen && lease && node && lease_ms > 0);
    if (!*lease->owner || strcmp (lease->owner, node) == 0)
        return 0;
    assert (seen->epoch == lease->epoch);
    return seen->since + lease_ms;
}

bool
xxl_lease_watched (const xxl_lease_seen_t *seen, const xxl_lease_t *lease, const char *node,
                   int64_t mono, int64_t lease_ms)
{
    int64_t at = xxl_lease_watch_at (seen, lease, node, lease_ms);
    return at == 0 || (seen->since > 0 && mono >= at);
}
