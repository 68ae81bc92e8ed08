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
//  Forgets entries whose until passed an hour before now; returns how many
size_t xxl_heard_prune (xxl_heard_t *self, int64_t now);
size_t xxl_heard_size (xxl_heard_t *self);

#endif
