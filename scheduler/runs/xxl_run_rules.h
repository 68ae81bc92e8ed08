/*  xxl_run_rules.h -- the runs' decisions as pure functions: the busy
    backoff, routing over the connected set, and the liveness period.

    Contract: plain values in, a decision out.  No server_t, no store, no
    sockets, no clock, no logging.  Where a decision needs to know which
    addresses are connected (the registry's), it asks through the given
    predicate, in list order, only as far as the decision needs (the
    engine's registry lookups keep their order and count).

    xxl_busy_delay (refused, log_id)
        The ms before a run its agent refused busy `refused` times (>= 1)
        goes again: 100 ms doubling per refusal up to 6.4 s, capped at
        5 s, plus a spread of log_id mod (delay / 4 + 1).  Invariants:
        100 <= result <= 5000 + 1250; never below the result for one
        refusal fewer (same log id).
    xxl_busy_says (refused)
        Whether a refusal is worth a debug line: the first, every tenth.
    xxl_route_any_connected (addresses, count, connected, ctx)
        Whether one of addresses is connected now: asks in order, stops
        at the first that is.  None given: false.
    xxl_route_held (defer, given, warming, broadcast, shard_total,
                    connected, ctx, addresses, count)
        A trigger acknowledged to its client is held (waits on the timer)
        rather than failed for want of agents: not deferred, no address
        given with the trigger, while agents reconnect after a start
        (warming), and either an unexpanded broadcast or none of its
        addresses connected.
    xxl_route_unexpanded (broadcast, shard_total, given, held, defer,
                          count, warming)
        A SHARDING_BROADCAST trigger is written as one unexpanded row
        (one row per agent later, engine_plan_due) when it is not a
        retry's shard, no address was given, and it is held, or deferred
        with no address or while warming.
    xxl_route_runs (broadcast, shard_total, count, unexpanded)
        Rows one trigger makes: one per address for an expanded broadcast
        with addresses, else one.  Result >= 1.
    xxl_route_broadcast_index (shard_index, count)
        The address of a broadcast shard: its index, or the first when the
        list shrank below it.  count >= 1; result < count.
    xxl_route_manual_keeps (owner, key_found, key_lists_app)
        With agent keys, a group's manual address stays in its list when
        no keyed agent registered it (owner NULL), or the key that did
        exists and lists the group's app.
    xxl_liveness_period (beat_s)
        The ms between two periodic liveness walks (a BEAT to every agent
        connection; the walk the monitor asks for at a close comes
        besides): XXL_LIVENESS_MS, or the registry's beat (beat_s >= 1)
        when longer, so that the walk costs the agents' own beat's
        message pair and no more.
    xxl_route_tagged (want, addresses, count, tags_of, ctx, kept)
        The addresses a job with agent tags `want` may go to: those of
        addresses [0, count) whose agent's tags (tags_of, "" for none)
        have every tag of want (xxl_tags_match), in list order, written to
        kept (room for count); returns how many.  want NULL or "": all.
*/

#ifndef XXL_RUN_RULES_H_INCLUDED
#define XXL_RUN_RULES_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XXL_BUSY_RETRY_MS       100
#define XXL_BUSY_RETRY_MAX_MS   5000
#define XXL_LIVENESS_MS         5000    //  the shortest liveness period

//  Whether address is connected to this scheduler now
typedef bool (xxl_route_connected_fn) (void *ctx, const char *address);
//  The agent tags of address ("" when none)
typedef const char *(xxl_route_tags_fn) (void *ctx, const char *address);

int64_t xxl_busy_delay (int64_t refused, int64_t log_id);
bool xxl_busy_says (int64_t refused);
int64_t xxl_liveness_period (int beat_s);
bool xxl_route_any_connected (const char *const *addresses, size_t count,
                              xxl_route_connected_fn *connected, void *ctx);
bool xxl_route_held (bool defer, bool given, bool warming, bool broadcast, int shard_total,
                     xxl_route_connected_fn *connected, void *ctx,
                     const char *const *addresses, size_t count);
bool xxl_route_unexpanded (bool broadcast, int shard_total, bool given, bool held, bool defer,
                           size_t count, bool warming);
int xxl_route_runs (bool broadcast, int shard_total, size_t count, bool unexpanded);
size_t xxl_route_broadcast_index (int shard_index, size_t count);
bool xxl_route_manual_keeps (const char *owner, bool key_found, bool key_lists_app);

size_t xxl_route_tagged (const char *want, const char *const *addresses, size_t count,
                         xxl_route_tags_fn *tags_of, void *ctx, const char **kept);

#endif
