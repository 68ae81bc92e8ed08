/*  failover.c -- the FAILOVER and BUSYOVER routers (one plugin, two routes).

    As XXL-JOB's ExecutorRouteFailover and ExecutorRouteBusyover: probe the
    addresses in list order and take the first that answers 200.  FAILOVER
    sends BEAT (is the agent alive?), BUSYOVER sends IDLE_BEAT for the job
    (is the agent idle for this job: not running it, nothing queued?).
    Each probe waits up to call->probe_timeout_ms.  Every probe result is
    appended to the call's message, one line each, which the scheduler
    puts into the log row's triggerMsg:

        beat check: address=tcp://10.0.0.5:7071/a, code=500, msg=no answer
        beat check: address=tcp://10.0.0.6:7071/b, code=200, msg=ok

    When no address answers 200 the route fails (-1) with those lines.
    Stateless; the probes run on the calling scheduler thread.
*/

#include <xxl/router.h>

#define S_PROBE_MSG_MAX 256

static int
s_probe_route (const xxl_router_host_t *host, xxl_route_call_t *call,
               int kind, const char *route, const char *label)
{
    if (!XXL_ROUTER_HOST_HAS (host, probe)) {
        xxl_route_msg (call, "%s: the host cannot probe agents", route);
        return -1;
    }
    int timeout_ms = call->probe_timeout_ms > 0? call->probe_timeout_ms: 1000;
    for (size_t i = 0; i < call->count; i++) {
        char reply [S_PROBE_MSG_MAX] = "";
        int code = host->probe (call->host_ctx, call->addresses [i], kind,
                                call->job_id, timeout_ms, reply, sizeof reply);
        reply [sizeof reply - 1] = 0;
        if (code == XXL_PROBE_NO_ANSWER && !*reply)
            snprintf (reply, sizeof reply, "no answer within %d ms", timeout_ms);
        xxl_route_msg (call, "%s: address=%s, code=%d, msg=%s",
                       label, call->addresses [i], code, reply);
        if (code == XXL_PROBE_OK)
            return (int) i;
    }
    return -1;
}

static int
s_failover (void *state, const xxl_router_host_t *host, xxl_route_call_t *call)
{
    (void) state;
    return s_probe_route (host, call, XXL_PROBE_BEAT, "FAILOVER", "beat check");
}

static int
s_busyover (void *state, const xxl_router_host_t *host, xxl_route_call_t *call)
{
    (void) state;
    return s_probe_route (host, call, XXL_PROBE_IDLE_BEAT, "BUSYOVER", "idle beat check");
}

static const xxl_router_t s_routers [] = {
    { "FAILOVER", s_failover, XXL_ROUTER_PROBES },
    { "BUSYOVER", s_busyover, XXL_ROUTER_PROBES },
    { NULL, NULL, 0 }
};

XXL_ROUTER_PLUGIN ("failover", "1.0", NULL, NULL, s_routers)
