/*  xxl_heard.h -- when this scheduler last heard from each agent address,
    and the run lease that agent said (REGISTER's runLease).

    The run lease (docs/design.md, "The partition model"): an agent stops
    every run it holds once no scheduler has answered a REGISTER it sent
    run_lease ago.  The agent's lease counts from the send of a REGISTER
    that was answered; this scheduler received that REGISTER no earlier
    than it was sent.  So once run_lease (plus XXL_HEARD_MARGIN_MS, for
    the kill itself) has passed since the last REGISTER heard here, the
    agent holds no run: only then may one of its runs be declared lost,
    or a RUN it never answered be failed, and a retry or a failover start.

    Contract:
    -   Times are monotonic ms (the caller's zclock_mono): a step of the
        wall clock changes nothing here.
    -   An address never heard since `start` counts as heard at start,
        with the longest lease any agent has said (or XXL_HEARD_LEASE_
        DEFAULT before any did): a scheduler that restarted while an
        agent was cut off waits out its lease too.
    -   An agent that said no lease (runLease absent or 0: it never stops
        its runs, or an older agent) gets none: xxl_heard_until is 0 for
        it, and its runs are judged as before the lease existed.
    -   A connection found closed (xxl_heard_closed) is no proof that
        its agent stopped: a cut may close it while the agent lives.  Only
        the lease is.  So a closed connection lets an address's runs be
        declared lost before the registry's dead time, at lost_at
        (closed + grace, the caller's lost_after, and never before
        xxl_heard_until), only for an agent that said a lease, and only
        while no other scheduler heard it within that lease (the
        caller's check of the store's registry rows); a REGISTER heard
        after the close (xxl_heard_note) takes it back.
    -   Entries whose lease ran out an hour ago are forgotten by
        xxl_heard_prune: memory follows the agents of the last hour.
    The caller owns the object; not thread-safe (the engine's thread).
*/

#ifndef XXL_HEARD_H_INCLUDED
#define XXL_HEARD_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#define XXL_HEARD_MARGIN_MS     3000        //  past the lease: the agent's kill
                                            //  (SIGTERM, 500 ms, SIGKILL) and rates
#define XXL_HEARD_LEASE_DEFAULT 600000      //  xxl-agent's default run_lease
#define XXL_HEARD_ROW_MS        1000        //  past until, before a closed connection's
                                            //  runs are declared lost: this scheduler's
                                            //  own registry row, stamped at that REGISTER,
                                            //  is then older than the lease, and a row
                                            //  within the lease is another's

typedef struct _xxl_heard_t xxl_heard_t;

//  A new map; start: now (monotonic ms), the time unknown addresses were
//  last heard.  NULL when out of memory.
xxl_heard_t *xxl_heard_new (int64_t start);
void xxl_heard_destroy (xxl_heard_t **self_p);
//  A REGISTER from address at now, saying lease_ms (0: no lease)
void xxl_heard_note (xxl_heard_t *self, const char *address, int64_t now, int64_t lease_ms);
//  The monotonic time from which address's runs may be declared lost:
//  its last REGISTER heard + its lease + XXL_HEARD_MARGIN_MS; 0 when it
//  said no lease
int64_t xxl_heard_until (xxl_heard_t *self, const char *address);
//  The lease address said (ms), 0 if none; an unknown address: the
//  default (see above)
int64_t xxl_heard_lease (xxl_heard_t *self, const char *address);
//  The longest lease address said since it was first heard (or last
//  forgotten by xxl_heard_prune), whatever it says now: the one to wait
//  for a run of any agent that held the address then (two on one
//  address, or one restarted with a shorter lease); an unknown address:
//  as xxl_heard_lease
int64_t xxl_heard_lease_longest (xxl_heard_t *self, const char *address);
//  xxl_heard_until with the longest lease instead: when every agent that
//  held address since it was first heard holds no run (0: none said one)
int64_t xxl_heard_until_longest (xxl_heard_t *self, const char *address);
//  From when (on the store's clock: store_now is it at the monotonic now)
//  a registry row of address in the store is another scheduler's: the
//  time of its last REGISTER heard here (or the start) on that clock, plus
//  XXL_HEARD_ROW_MS.  This scheduler's own row, stamped at that REGISTER,
//  is older; a row stamped after it is another scheduler's, which heard
//  the agent later (its lease then runs from that answer).
int64_t xxl_heard_rows_after (xxl_heard_t *self, const char *address, int64_t now,
                              int64_t store_now);
//  The connection address was routed to was found closed at now (the
//  first close since its last REGISTER counts): its runs may be declared
//  lost from xxl_heard_lost_at on.  grace: ms the caller holds them after
//  the close (lost_after).  No effect on an address never heard.
void xxl_heard_closed (xxl_heard_t *self, const char *address, int64_t now, int64_t grace);
//  The monotonic time from which address's runs may be declared lost
//  though the registry still lists it: max (its close + grace,
//  xxl_heard_until + XXL_HEARD_ROW_MS).  0 when its connection was not
//  found closed since its last REGISTER (or its runs were all declared
//  lost: xxl_heard_lost_done), or it said no lease (the registry's dead
//  decides).
int64_t xxl_heard_lost_at (xxl_heard_t *self, const char *address);
//  The addresses whose lost_at is at or before now: up to max of them in
//  addresses (the map's strings, valid until the next call that changes
//  it); returns how many there are
size_t xxl_heard_lost_due (xxl_heard_t *self, int64_t now, const char **addresses, size_t max);
//  The caller declared every open run of address lost: its close is
//  forgotten (the registry's dead decides again, for runs sent later)
void xxl_heard_lost_done (xxl_heard_t *self, const char *address);
//  The soonest lost_at not passed at the last xxl_heard_pass (INT64_MAX:
//  none): when the lost-run monitor is due for a closed connection
int64_t xxl_heard_soonest (xxl_heard_t *self);
//  The lost-run monitor ran at now: soonest becomes the next lost_at
//  after now
void xxl_heard_pass (xxl_heard_t *self, int64_t now);
//  Forgets entries whose until passed an hour before now; returns how many
size_t xxl_heard_prune (xxl_heard_t *self, int64_t now);
size_t xxl_heard_size (xxl_heard_t *self);

#endif
