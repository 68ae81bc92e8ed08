/*  xxl_retry_rules.h -- when a failed run goes again, as a pure function.

    Contract: a job's retry settings and the attempt in; the delay out.
    No server_t, no store, no clock, no logging.

    xxl_retry_attempt (retry_count, left)
        The attempt a retry is: the job's retry count less the retries the
        failed row has left, never below 0.
    xxl_retry_delay (interval, backoff, max_interval, attempt)
        Seconds before retry `attempt` (0 the first): interval x
        backoff ^ attempt, backoff below 1 read as 1, growing no further
        once it passed 1e9, capped by max_interval when that is above 0.
        Invariants: interval >= 0 gives a result >= 0; with backoff <= 1
        the result is interval (or the cap); it never falls as attempt
        grows.
    xxl_retry_due (failed_at, delay_s, now)
        The wall-clock ms a retry is due: delay_s seconds after the
        failure (failed_at, wall ms), never before now; a failure time
        unknown (<= 0) or ahead of now (a clock stepped back) counts as
        now.  So a retry keeps its interval from the failure, however
        late the fail monitor saw it.
*/

#ifndef XXL_RETRY_RULES_H_INCLUDED
#define XXL_RETRY_RULES_H_INCLUDED

#include <stdint.h>

int64_t xxl_retry_attempt (int64_t retry_count, int64_t left);
int64_t xxl_retry_delay (int64_t interval, double backoff, int64_t max_interval, int64_t attempt);
int64_t xxl_retry_due (int64_t failed_at, int64_t delay_s, int64_t now);

#endif
