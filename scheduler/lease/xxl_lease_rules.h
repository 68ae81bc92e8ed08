/*  xxl_lease_rules.h -- the lease round's decisions as pure functions.

    Contract: the leases as read (xxl_lease_t [XXL_STORE_SHARES], the
    store's clock `now`), this scheduler's node name, held mask and
    epochs, the live schedulers' count in; a decision out.  No server_t,
    no store, no clock read, no logging.  xxl_lease.c makes the store
    calls these decide, in the order it always did (shares ascending,
    give-backs descending).  A share s is bit s of a mask; only the low
    XXL_STORE_SHARES bits are ever set in a result.

    xxl_lease_moved (held, epochs, node, leases)
        The held shares whose row no longer names node at the epoch held:
        lost, not renewed.  Result is a subset of held.
    xxl_lease_balance (leases, node, now, live)
        The fair part ceil (shares / live) and floor (shares / live), live
        at least 1; hungry: another live scheduler holds nothing (fewer
        distinct live holders than live - 1) or less than the floor.
        Holders are the distinct other owners of leases not expired.
        Invariants: 1 <= fair <= shares; floor <= fair.
    xxl_lease_wants (lease, node, now, round, held_count, fair)
        Whether to take a share not held: our own from before a restart
        (our node name) at once; an orphan (no owner, or expired) while
        we hold less than the fair part, or whatever we hold once it was
        orphaned for two rounds (expired at or before now - 2 round).
        Never a share another holds unexpired.
    xxl_lease_give_back (held, fair, hungry, taken)
        The shares to give back to balance: only when someone is hungry
        and this round took none, the highest-numbered held shares over
        the fair part.  Result is a subset of held.
    xxl_lease_next_round (leases, held, now, round)
        The store-clock time of the next round: now + round, or sooner,
        just after (XXL_LEASE_AFTER_MS) the soonest expiry of a share
        another holds.  Result in (now, now + round].
    xxl_lease_settle (lease_until, committed_until, taken, committed)
        A turn's end: committed, the leases are sure until lease_until;
        not committed, only until the last commit made them, and the
        shares taken this turn are lost.
    xxl_lease_jumped (last, read)
        Whether the store's clock stepped ahead between two rounds'
        reads: each read is the store's time and the monotonic times
        before and after it, so the store's lead over the monotonic clock
        lies in [now - after, now - before]; a jump is this read's lowest
        lead over the last read's highest by more than XXL_LEASE_JUMP_MS
        (a slow read alone is never one).  false when last has no read.
        After a jump a round takes no share another owner's lease names
        until a lease has passed on its own monotonic clock: the expiry
        it reads was written before the step, and the holder, which keeps
        its leases on its monotonic clock, still holds them (a forward
        step of an SQLite host's one clock, or of PostgreSQL's server).
    xxl_lease_stepped_back (last, read)
        How far at least the store's clock stepped back between two
        reads: the last read's lowest lead over this read's highest, when
        more than XXL_LEASE_JUMP_MS; else 0 (and 0 when last has no read).
        A lease another wrote before such a step, unchanged since, is
        judged that much earlier: its holder keeps it to its monotonic
        lease_until, which the step did not move.
    xxl_lease_across_steps (leases, node, seen, back, mono, lease, now)
        A round's leases as read, judged across steps back of the store's
        clock (back: this round's, 0 for none; mono: monotonic ms taken
        after the leases were read; lease: lease_ms, the same on every
        scheduler of a store).  A share another owner holds:
        -   whose row (epoch, expiry) is the one seen last round has its
            expiry taken back by seen [s].shift, which grows by back: that
            read followed the last round's clock read under the store's
            write lock, which lease writes take, so the row was written
            before this round's step;
        -   whose row changed since, in a round with a step back, may
            have been written before or after it: once it stays unchanged
            for a lease of mono time from then, it is judged expired
            (its holder's monotonic lease_until, set before the write,
            has passed), its expiry set to the store's time of that;
        any other row (changed, unowned, node's own) ends both.  seen
        becomes the rows as read; a row read for the first time, or
        changed since the last round, has seen [s].since set to mono.
    xxl_lease_watched (seen, lease, node, mono, lease_ms)
        Whether a share not held may be taken as far as this scheduler's
        own monotonic clock can tell: its row names no owner, or node, or
        has stayed as read (seen->since, by xxl_lease_across_steps) for
        at least lease_ms of mono time.  A live holder rewrites its row
        at every renewal (a round: lease_ms / 3) and holds it only to its
        monotonic lease_until, set before the write and lease_ms less
        XXL_LEASE_MARGIN_MS after: a row unchanged for lease_ms since
        this scheduler first read it is no live holder's, whatever the
        store's clock did meanwhile (a step back and forth while this
        scheduler was frozen makes an expiry written in between look long
        past), unless each renewal wrote the expiry the row had, which
        needs a store clock that stood still or went back by the time
        between, and then the expiry is still ahead: so it comes on top
        of the expiry (xxl_lease_wants), never instead of it.
    xxl_lease_watch_at (seen, lease, node, lease_ms)
        The monotonic ms from which xxl_lease_watched holds for a share
        another owner's row names (0: it names none, or node).
    xxl_lease_deaf (heard, newest, now, dead_ms, beat_ms)
        Whether this scheduler is deaf to the store's agents: its registry
        holds no address at all (heard 0: every agent it heard missed the
        dead time here), while a row of the store's registry was beaten
        after now - (dead_ms - beat_ms) (newest: the newest update_time,
        store clock; 0 none, < 0 not read; beat_ms: the registry's check
        period, registry/beat).  Such a beat is another scheduler's: a row
        this one beat last is at least dead_ms old once its registry
        dropped the address, and an agent heard elsewhere has its row
        beaten there at each of its REGISTERs (agent/beat, which must stay
        under dead_ms - beat_ms for the judgement to hold steady: 30 s
        under 60 s by default).  false when dead_ms <= beat_ms (no window
        tells the two apart), when the store was not
        read, or when nobody beat a row within the window (every
        scheduler deaf, or no agent alive: nothing changes).  A deaf
        scheduler gives every share back and takes none, and does not
        beat its node row (so the others' fair part counts it out); its
        routes hold rows rather than fail them for an empty address list
        (docs/design.md, "Leases").
*/

#ifndef XXL_LEASE_RULES_H_INCLUDED
#define XXL_LEASE_RULES_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "xxl_store.h"

//  A round looks again this long after another's lease would expire
#define XXL_LEASE_AFTER_MS 5
//  A step of the store's clock ahead by more than this stops takes of
//  others' shares for a lease (a smaller one is inside the holder's margin)
#define XXL_LEASE_JUMP_MS 250

//  A share's row as the last round read it, and how it is judged across
//  steps back of the store's clock (xxl_lease_across_steps)
typedef struct {
    int64_t epoch, expires;             //  the row as read last round
    int64_t shift;                      //  ms its expiry is judged earlier
    int64_t unsure_since;               //  mono ms: changed across a step (0: not)
    int64_t since;                      //  mono ms: the row first read as it is (0: never)
} xxl_lease_seen_t;

typedef struct {
    int64_t now;                        //  the store's clock as read (ms)
    int64_t before, after;              //  monotonic ms around the read
} xxl_lease_read_t;

typedef struct {
    int64_t live;                       //  live schedulers, at least 1
    int fair;                           //  ceil (shares / live)
    int floor_part;                     //  floor (shares / live)
    bool hungry;                        //  another is short of its part
} xxl_lease_balance_t;

typedef struct {
    int64_t lease_until;                //  the leases are sure until (mono ms)
    int64_t committed_until;            //  as of the last commit
    uint64_t lost;                      //  shares to drop
} xxl_lease_settle_t;

uint64_t xxl_lease_moved (uint64_t held, const int64_t *epochs, const char *node,
                          const xxl_lease_t *leases);
xxl_lease_balance_t xxl_lease_balance (const xxl_lease_t *leases, const char *node, int64_t now,
                                       int64_t live);
bool xxl_lease_wants (const xxl_lease_t *lease, const char *node, int64_t now, int64_t round,
                      int held_count, int fair);
uint64_t xxl_lease_give_back (uint64_t held, int fair, bool hungry, uint64_t taken);
int64_t xxl_lease_next_round (const xxl_lease_t *leases, uint64_t held, int64_t now,
                              int64_t round);
xxl_lease_settle_t xxl_lease_settle (int64_t lease_until, int64_t committed_until,
                                     uint64_t taken, bool committed);
bool xxl_lease_jumped (const xxl_lease_read_t *last, const xxl_lease_read_t *read);
int64_t xxl_lease_stepped_back (const xxl_lease_read_t *last, const xxl_lease_read_t *read);
void xxl_lease_across_steps (xxl_lease_t *leases, const char *node, xxl_lease_seen_t *seen,
                             int64_t back, int64_t mono, int64_t lease, int64_t now);
bool xxl_lease_deaf (size_t heard, int64_t newest, int64_t now, int64_t dead_ms,
                     int64_t beat_ms);
bool xxl_lease_watched (const xxl_lease_seen_t *seen, const xxl_lease_t *lease, const char *node,
                        int64_t mono, int64_t lease_ms);
int64_t xxl_lease_watch_at (const xxl_lease_seen_t *seen, const xxl_lease_t *lease,
                            const char *node, int64_t lease_ms);

#endif
