/*  bench_handlers.c -- handlers for `make bench` (bench/run.sh).

    noopJobHandler   returns success at once (e2e throughput)
    stampJobHandler  puts CLOCK_REALTIME in microseconds, taken when the
                     handler starts, in its handleMsg (trigger latency)
    sleepJobHandler  sleeps PARAM milliseconds (default 3000), then puts
                     "START END" (realtime µs) in its handleMsg
                     (concurrency: each run's interval is in the store)

    All three run in the agent process (XXL_HANDLER_IN_PROCESS): the bench
    measures the scheduler and the agent, not the cost of a process per
    run.  None writes a log line, so a run's log holds only the agent's
    start and end lines.
*/

#include <xxl/handler.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int64_t
s_realtime_us (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int
s_noop (xxl_run_t *run)
{
    return xxl_run_success (run, NULL);
}

static int
s_stamp (xxl_run_t *run)
{
    char text [32];
    snprintf (text, sizeof text, "%lld", (long long) s_realtime_us ());
    return xxl_run_success (run, text);
}

static int
s_sleep (xxl_run_t *run)
{
    int64_t start = s_realtime_us ();
    const char *param = xxl_run_param (run);
    long ms = *param? strtol (param, NULL, 10): 3000;
    if (ms < 0)
        ms = 0;
    //  A kill or the timeout ends the wait at once (xxl_run_sleep)
    xxl_run_sleep (run, ms);
    char text [64];
    snprintf (text, sizeof text, "%lld %lld", (long long) start, (long long) s_realtime_us ());
    return xxl_run_success (run, text);
}

static const xxl_handler_t s_handlers [] = {
    { "noopJobHandler", s_noop, XXL_HANDLER_IN_PROCESS },
    { "stampJobHandler", s_stamp, XXL_HANDLER_IN_PROCESS },
    { "sleepJobHandler", s_sleep, XXL_HANDLER_IN_PROCESS },
    { NULL, NULL, 0 }
};

XXL_HANDLER_PLUGIN ("bench", "1.0", NULL, NULL, s_handlers)
