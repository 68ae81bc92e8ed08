/*  xxl_retry_rules.c -- when a failed run goes again (contract:
    xxl_retry_rules.h).
*/

#include <assert.h>
#include "xxl_retry_rules.h"

int64_t
xxl_retry_attempt (int64_t retry_count, int64_t left)
{
    int64_t attempt = retry_count - left;
    return attempt > 0? attempt: 0;
}

int64_t
xxl_retry_delay (int64_t interval, double backoff, int64_t max_interval, int64_t attempt)
{
    double delay = (double) interval;
    double factor = backoff >= 1? backoff: 1;
    for (int64_t i = 0; i < attempt && delay < 1e9; i++)
        delay *= factor;
    if (max_interval > 0 && delay > (double) max_interval)
        delay = (double) max_interval;
    assert (interval < 0 || delay >= 0);
    return (int64_t) delay;
}

int64_t
xxl_retry_due (int64_t failed_at, int64_t delay_s, int64_t now)
{
    if (failed_at <= 0 || failed_at > now)
        failed_at = now;
    if (delay_s < 0)
        delay_s = 0;
    int64_t due = failed_at + delay_s * 1000;
    assert (due >= failed_at);
    return due > now? due: now;
}
