/*  xxl_lease.c -- planning shared among the schedulers of one store by
    leases on the store's shares of the jobs (xxl_store.h: job J is in
    share J mod XXL_STORE_SHARES).

    Contract:
    -   A scheduler plans only the jobs of the shares it holds: it scans
        them, writes and sends their planned fires, and recovers their
        rows when it takes a share.  Manual triggers, retries, child jobs,
        answers and callbacks are any scheduler's.
    -   A round (engine_lease_round) runs inside a turn's transaction, so
        under the store's write lock (its first read takes it on
        PostgreSQL): no other scheduler reads or writes a lease between
        this round's read and its writes.  A share does not change hands
        in the middle of a turn of its holder (SQLite: every turn holds
        the write lock; PostgreSQL: a fence lock per share, taken shared
        by the holder's every transaction from its BEGIN, alone by a take;
        docs/design.md, "Leases").  Every lease_ms / 3
        it beats this scheduler's node row, renews each held share (one
        whose epoch or owner moved is lost), takes shares that nobody holds
        or whose lease expired, and gives back what is over its fair part
        while another live scheduler is short of its own.
    -   Deaf (xxl_lease_deaf: no agent heard here while the store's
        registry shows one beaten by another scheduler): a round gives
        every held share back and takes none, and does not beat the node
        row, so the others count this scheduler out of the fair part and
        take its shares (with their rows' recovery) at once.  Hearing an
        agent again ends it: the node row beats, the others give back to
        balance and this one takes its part.
    -   Rounds come every lease_ms / 3, and also just after the soonest
        expiry of a lease held by another and the end of the watch of its
        row (xxl_lease_watch_at): a dead scheduler's shares are taken a few
        milliseconds after the later of its lease's end and a lease from
        this scheduler's first read of its last row (up to a round after
        the lease's end).
    -   Fair part: ceil (shares / live schedulers), live meaning beat within
        two rounds.  An orphaned share is taken up to the fair part, and by
        anyone once it stayed orphaned for two rounds; a scheduler's own
        shares from before its restart (its node name, another epoch) are
        taken at once.
    -   A take raises the share's epoch (the fence: a renewal or a release
        by the old epoch changes nothing).  The taken shares' rows are
        recovered in the same transaction (engine_recover with their mask
        and their own fired_until / fired_sent), and only then is their
        fired_until raised to this scheduler's.
    -   self->leases.lease_until: the monotonic time up to which the held leases
        are sure: the round's start + lease_ms - XXL_LEASE_MARGIN_MS (a
        step of this host's wall clock neither shortens nor stretches it:
        a round that began before the step cannot hold past it); the
        expiry written is at least the round's start + lease_ms, so no one
        may take them before.  A turn that begins at or after it drops
        every held share (engine_lease_check) before anything fires, and a
        round renews them (or takes them again, with their recovery).  A
        turn that stands still past it after its check (the process
        frozen in the middle of a turn) renews them in its round when
        their rows still name it at its epoch, no other scheduler having
        taken them meanwhile (SQLite: its transaction held the write lock
        all along), logged as renewed late.
    -   Losing a share drops this scheduler's plans and snapshots of its
        jobs without touching their rows: the rows are the new holder's.
        Clocks: expiries and node beats are written and compared on the
        store's clock (xxl_store_clock_now: PostgreSQL's clock_timestamp,
        or the one host's wall clock for SQLite), so a step or a skew of a
        scheduler's own wall clock moves no lease.  A step ahead of the
        store's clock itself (SQLite's host, PostgreSQL's server) makes
        others' leases look expired while their holders still hold them
        to their monotonic lease_until: a round that sees one
        (xxl_lease_jumped) takes no share another owner's lease names
        for a lease on its own monotonic clock; by then each holder has
        renewed on the stepped clock, or its lease_until has passed.  A
        step back (xxl_lease_stepped_back) makes others' leases look
        longer: xxl_lease_across_steps judges one read before it as much
        earlier while its row stays as read, and one that may have been
        written before or after it expired once unchanged for a lease (a
        dead holder's shares are not held back by the step; a live
        holder's next renewal writes the new clock's).  A step seen by a
        round that then cannot read the leases (the store locked by a
        frozen scheduler, or down) is kept (back_unjudged) and judged by
        the first round that reads them.  None of these needs every
        scheduler to see every step: a share another owner's row names
        is taken only once that row also stayed as read for a lease of
        this scheduler's monotonic time (xxl_lease_watched): a live
        holder renews every round, and a renewal that writes the expiry
        the row had needs a store clock that stood still or went back by
        exactly the time between, so that the expiry itself stays ahead
        (a scheduler frozen across a step back and forth reads the
        holder's renewals of the excursion as long expired).  A round
        runs only in a turn's transaction (its reads and takes one step
        under the store's write lock): PostgreSQL's store has none after
        a failed begin, SQLite's keeps a failed one whose statements all
        fail (the round reads the clock, then fails: back_unjudged).
*/

#include "xxl_engine.h"

//  Taken off the lease when judging locally whether it still holds
#define XXL_LEASE_MARGIN_MS 250
//  A round the store failed, or one whose take was refused, is tried
//  again this long after
#define XXL_LEASE_RETRY_MS 100

uint64_t
engine_share_bit (int64_t job_id)
{
    return (uint64_t) 1 << (int) (job_id % XXL_STORE_SHARES);
}

//  True when this scheduler holds the share of job_id
bool
engine_lease_holds (server_t *self, int64_t job_id)
{
    return job_id > 0 && (self->leases.held & engine_share_bit (job_id)) != 0;
}

static int
s_popcount (uint64_t mask)
{
    return __builtin_popcountll (mask);
}

//  Shares in mask stop being this scheduler's: its plans and snapshots of
//  their jobs go, without a store write (their rows are the new holder's);
//  deaf: given back as xxl_lease_deaf says, the lease still ours in this
//  transaction (the planner records what it sent of them)
static void
s_lease_lost (server_t *self, uint64_t mask, const char *why, bool deaf)
{
    mask &= self->leases.held;
    if (!mask)
        return;
    self->leases.held &= ~mask;
    size_t plans = 0;
    //  (deaf: a give-back, the release follows in this transaction)
    xxl_event_t event = { .kind = XXL_EVENT_SHARES_LOST, .mask = mask, .count = &plans,
                          .deaf = deaf };
    engine_publish (self, &self->events, &event);
    zsys_warning ("lease: %d share(s) lost (%s); %zu plan(s) left to their new holder",
                  s_popcount (mask), why, plans);
}

//  A turn begins: leases no longer sure are dropped before anything fires
void
engine_lease_check (server_t *self)
{
    if (self->leases.held && zclock_mono () >= self->leases.lease_until)
        s_lease_lost (self, self->leases.held, "not renewed in time", false);
}

//  The turn's end: a round's takes and renewals hold only once committed;
//  a failed commit undoes them here (the shares it took go, and the
//  leases are sure only as far as the last commit made them)
void
engine_lease_settle (server_t *self, bool committed)
{
    xxl_lease_settle_t settle = xxl_lease_settle (self->leases.lease_until,
                                                  self->leases.lease_until_committed,
                                                  self->leases.lease_taken, committed);
    self->leases.lease_until = settle.lease_until;
    self->leases.lease_until_committed = settle.committed_until;
    if (!committed)
        s_lease_lost (self, settle.lost, "their take was not committed", false);
    self->leases.lease_taken = 0;
}

//  The fence before a scan writes fires: in this turn's transaction
//  (under the store's write lock, which this read takes), every held
//  share's row still names this scheduler at the epoch it took; a share that moved is dropped here, so
//  no fire of it is written.  Returns the shares still held.
uint64_t
engine_lease_fence (server_t *self)
{
    if (!self->leases.held)
        return 0;
    xxl_lease_t leases [XXL_STORE_SHARES];
    if (xxl_store_lease_list (self->store, leases)) {
        s_lease_lost (self, self->leases.held, "its lease could not be read", false);
        return 0;
    }
    uint64_t moved = xxl_lease_moved (self->leases.held, self->leases.epochs, self->leases.node,
                                      leases);
    if (moved)
        s_lease_lost (self, moved, "taken by another scheduler", false);
    return self->leases.held;
}

//  One round: beat, renew, take, give back.  Returns the shares taken
//  (their rows recovered in this transaction).
uint64_t
engine_lease_round (server_t *self)
{
    //  (expiries and beats on the store's clock: one clock for all the
    //  schedulers, whatever each host's wall clock does)
    int64_t started = zclock_mono ();
    //  (a turn whose transaction could not begin: its reads and takes
    //  would not be one atomic step under the store's write lock, which
    //  every judgement below rests on; the next turn's round)
    if (!xxl_store_in_txn (self->store)) {
        self->leases.next_lease = started + XXL_LEASE_RETRY_MS;
        return 0;
    }
    int64_t now = xxl_store_clock_now (self->store);
    int64_t lease = self->config.lease_ms;
    if (now >= 0) {
        self->leases.store_ahead = now - engine_now ();
        xxl_lease_read_t read = { .now = now, .before = started, .after = zclock_mono () };
        int64_t back = xxl_lease_stepped_back (&self->leases.last_read, &read);
        if (back)
            zsys_warning ("lease: the store's clock stepped back by %" PRId64 " ms or more:"
                          " the leases others wrote before are judged that much earlier",
                          back);
        //  (the read is the last from here on: a step it saw is judged by
        //  the first round that reads the leases, this one or a later one)
        self->leases.back_unjudged += back;
        if (xxl_lease_jumped (&self->leases.last_read, &read)) {
            self->leases.no_take_until = read.after + lease;
            zsys_warning ("lease: the store's clock stepped ahead by %" PRId64 " ms or more:"
                          " no share another holds is taken for %" PRId64 " ms",
                          (read.now - read.after) - (self->leases.last_read.now
                                                     - self->leases.last_read.before), lease);
        }
        self->leases.last_read = read;
    }
    int64_t round = lease / 3;
    int64_t expires = now + lease;
    xxl_lease_t leases [XXL_STORE_SHARES];
    bool deaf = self->leases.deaf;
    if (now < 0
    ||  (!deaf && xxl_store_node_beat (self->store, self->leases.node, now))
    ||  xxl_store_lease_list (self->store, leases)) {
        //  (the held leases stay sure until lease_until; the next round
        //  tries again, soon but not at once: a store that is down must
        //  not turn every loop into a round)
        self->leases.next_lease = zclock_mono () + XXL_LEASE_RETRY_MS;
        return 0;
    }
    xxl_lease_across_steps (leases, self->leases.node, self->leases.seen,
                            self->leases.back_unjudged, zclock_mono (), lease, now);
    self->leases.back_unjudged = 0;
    //  Renew what is still ours; what moved is lost
    uint64_t stale = xxl_lease_moved (self->leases.held, self->leases.epochs, self->leases.node,
                                      leases);
    uint64_t moved = 0, renewed = 0;
    for (int s = 0; s < XXL_STORE_SHARES; s++) {
        uint64_t bit = (uint64_t) 1 << s;
        if (!(self->leases.held & bit))
            continue;
        if (stale & bit)
            moved |= bit;
        else
        if (xxl_store_lease_renew (self->store, s, self->leases.node, self->leases.epochs [s],
                                   expires) == 1) {
            renewed |= bit;
            leases [s].expires = expires;
        }
        else
            moved |= bit;
    }
    if (moved)
        s_lease_lost (self, moved, "taken by another scheduler", false);
    //  (held past lease_until only by a turn that stood still after its
    //  check; renewed, they were not taken meanwhile)
    if (renewed && started >= self->leases.lease_until)
        zsys_warning ("lease: %d share(s) renewed late, %" PRId64 " ms after they were sure:"
                      " this turn stood still, and no other scheduler took them meanwhile",
                      s_popcount (renewed), started - self->leases.lease_until);
    //  Fair part and who is short of it
    xxl_lease_balance_t balance = xxl_lease_balance (leases, self->leases.node, now,
                                                     xxl_store_node_count (self->store,
                                                                           now - 2 * round));
    int64_t live = balance.live;
    int fair = balance.fair;
    //  Take: our own from before a restart at once; orphans up to the
    //  fair part, and any orphaned for two rounds
    uint64_t taken = 0, missed = 0;
    int64_t mono = zclock_mono (), watch_at = 0;
    for (int s = 0; s < XXL_STORE_SHARES; s++) {
        uint64_t bit = (uint64_t) 1 << s;
        if ((self->leases.held & bit) || deaf)
            continue;
        if (!xxl_lease_wants (&leases [s], self->leases.node, now, round,
                              s_popcount (self->leases.held), fair))
            continue;
        if (started < self->leases.no_take_until && *leases [s].owner
        &&  strcmp (leases [s].owner, self->leases.node) != 0)
            continue;                   //  (its expiry was read across a step)
        //  (another's row, expired by the store's clock: taken only once
        //  it stayed as read for a lease on ours; the next round then)
        if (!xxl_lease_watched (&self->leases.seen [s], &leases [s], self->leases.node, mono,
                                lease)) {
            int64_t at = xxl_lease_watch_at (&self->leases.seen [s], &leases [s],
                                             self->leases.node, lease);
            if (watch_at == 0 || at < watch_at)
                watch_at = at;
            continue;
        }
        if (xxl_store_lease_take (self->store, s, self->leases.node, leases [s].epoch, expires) == 1) {
            self->leases.held |= bit;
            self->leases.epochs [s] = leases [s].epoch + 1;
            taken |= bit;
        }
        else
            missed |= bit;
    }
    //  Give back what is over the fair part while someone is short;
    //  deaf, everything
    uint64_t back = deaf? self->leases.held
                        : xxl_lease_give_back (self->leases.held, fair, balance.hungry, taken);
    for (int s = XXL_STORE_SHARES - 1; s >= 0 && back; s--) {
        uint64_t bit = (uint64_t) 1 << s;
        if (!(back & bit))
            continue;
        s_lease_lost (self, bit, deaf? "given back: no agent heard here while another"
                                       " scheduler hears them": "given back to balance", deaf);
        xxl_store_lease_release (self->store, s, self->leases.node, self->leases.epochs [s], now);
        back &= ~bit;
    }
    if (renewed || taken)
        self->leases.lease_until = started + lease - XXL_LEASE_MARGIN_MS;
    self->leases.lease_taken |= taken;
    if (taken) {
        //  Their waiting FIX_DELAY jobs (before the recovery, which may
        //  end the runs they wait for); their rows: recovered by their own
        //  fired marks, then covered as far as ours
        xxl_event_t event = { .kind = XXL_EVENT_SHARES_TAKEN, .mask = taken, .leases = leases };
        engine_publish (self, &self->events, &event);
        zsys_info ("lease: %d share(s) taken (%d held of %d, %" PRId64 " scheduler(s))",
                   s_popcount (taken), s_popcount (self->leases.held), XXL_STORE_SHARES, live);
    }
    self->leases.lease_rounds++;
    //  The next round: a round's period on, or just after the soonest
    //  expiry of another's lease (a dead scheduler's shares are taken as
    //  soon as they may be: the takeover gap is the lease, not the lease
    //  and a round)
    int64_t next = xxl_lease_next_round (leases, self->leases.held, now, round);
    //  (a take refused, say while a transaction of the share's holder is
    //  still open on PostgreSQL: tried again soon, not a round later)
    if (missed && next > now + XXL_LEASE_RETRY_MS)
        next = now + XXL_LEASE_RETRY_MS;
    self->leases.next_lease = zclock_mono () + (next - now);
    if (watch_at && watch_at + XXL_LEASE_AFTER_MS < self->leases.next_lease)
        self->leases.next_lease = watch_at + XXL_LEASE_AFTER_MS;
    return taken;
}

//  The shares held (bit s for share s), this scheduler's node name, and
//  the store's clock lead, for the modules above
uint64_t
engine_lease_held (server_t *self)
{
    return self->leases.held;
}

const char *
engine_lease_node (server_t *self)
{
    return self->leases.node;
}

int64_t
engine_lease_store_ahead (server_t *self)
{
    return self->leases.store_ahead;
}

int64_t
engine_lease_read_at (server_t *self)
{
    return self->leases.last_read.after;
}

void
engine_lease_set_deaf (server_t *self, bool deaf)
{
    if (deaf == self->leases.deaf)
        return;
    self->leases.deaf = deaf;
    if (deaf) {
        //  (the give-back at once, not a round later)
        self->leases.next_lease = zclock_mono ();
        zsys_warning ("lease: no agent heard here while another scheduler of the store hears"
                      " them: every share given back, none taken, rows held rather than"
                      " failed for an empty address list, until an agent is heard again");
    }
    else
        zsys_info ("lease: agents heard again (or by no scheduler of the store): shares"
                   " taken again as the balance gives");
}

bool
engine_lease_deaf (server_t *self)
{
    return self->leases.deaf;
}
