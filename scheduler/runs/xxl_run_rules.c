/*  xxl_run_rules.c -- the runs' decisions as pure functions (contract:
    xxl_run_rules.h).
*/

#include <assert.h>
#include "xxl_run_rules.h"
#include "xxl_tags.h"

int64_t
xxl_busy_delay (int64_t refused, int64_t log_id)
{
    assert (refused >= 1);
    int64_t delay = (int64_t) XXL_BUSY_RETRY_MS << (refused < 7? refused - 1: 6);
    if (delay > XXL_BUSY_RETRY_MAX_MS)
        delay = XXL_BUSY_RETRY_MAX_MS;
    delay += log_id % (delay / 4 + 1);
    return delay;
}

bool
xxl_busy_says (int64_t refused)
{
    return refused == 1 || refused % 10 == 0;
}

int64_t
xxl_liveness_period (int beat_s)
{
    assert (beat_s >= 1);
    int64_t beat_ms = (int64_t) beat_s * 1000;
    return beat_ms > XXL_LIVENESS_MS? beat_ms: XXL_LIVENESS_MS;
}

bool
xxl_route_any_connected (const char *const *addresses, size_t count,
                         xxl_route_connected_fn *connected, void *ctx)
{
    assert (connected || count == 0);
    for (size_t i = 0; i < count; i++)
        if (connected (ctx, addresses [i]))
            return true;
    return false;
}

bool
xxl_route_held (bool defer, bool given, bool warming, bool broadcast, int shard_total,
                xxl_route_connected_fn *connected, void *ctx,
                const char *const *addresses, size_t count)
{
    return !defer && !given && warming
        && ((broadcast && shard_total < 0)
            || !xxl_route_any_connected (addresses, count, connected, ctx));
}

bool
xxl_route_unexpanded (bool broadcast, int shard_total, bool given, bool held, bool defer,
                      size_t count, bool warming)
{
    return broadcast && shard_total < 0 && !given
        && (held || (defer && (count == 0 || warming)));
}

int
xxl_route_runs (bool broadcast, int shard_total, size_t count, bool unexpanded)
{
    int runs = 1;
    if (broadcast && shard_total < 0 && count > 0 && !unexpanded)
        runs = (int) count;
    assert (runs >= 1);
    return runs;
}

size_t
xxl_route_broadcast_index (int shard_index, size_t count)
{
    assert (count >= 1);
    size_t index = shard_index >= 0 && shard_index < (int) count? (size_t) shard_index: 0;
    return index;
}

bool
xxl_route_manual_keeps (const char *owner, bool key_found, bool key_lists_app)
{
    return !owner || (key_found && key_lists_app);
}

size_t
xxl_route_tagged (const char *want, const char *const *addresses, size_t count,
                  xxl_route_tags_fn *tags_of, void *ctx, const char **kept)
{
    assert (count == 0 || (addresses && kept));
    size_t made = 0;
    for (size_t i = 0; i < count; i++)
        if (!want || !*want || xxl_tags_match (tags_of (ctx, addresses [i]), want))
            kept [made++] = addresses [i];
    return made;
}
