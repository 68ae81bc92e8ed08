/*  xxl_pool.h -- a trigger pool: threads that route triggers whose router
    probes agents (FAILOVER, BUSYOVER, or a user's probing router).

    Routers that never block run inline on the engine's loop.  A probing
    router may wait up to its probe timeout per address, so it runs here,
    off the loop, as XXL-JOB's fast and slow trigger pools do.  A worker's
    probe is a request to the engine over inproc (the engine owns the
    agents socket); the finished routing decision goes back to the engine
    over inproc too, and the engine sends the RUN.  The queue is bounded:
    xxl_pool_submit refuses a task when it is full, and the engine then
    fails that trigger's log row with the reason -- never silently.
*/

#ifndef XXL_POOL_H_INCLUDED
#define XXL_POOL_H_INCLUDED

#include <czmq.h>
#include "xxl_routers.h"

typedef struct _xxl_pool_t xxl_pool_t;

//  One routing job for a pool
typedef struct {
    int64_t log_id;
    int64_t job_id;
    char *route;                        //  router name
    char **addresses;                   //  sorted
    size_t count;
} xxl_route_task_t;

//  Frees a task and nulls the pointer
void xxl_route_task_destroy (xxl_route_task_t **task_p);

//  Starts `threads` workers.  probe_endpoint: the engine's inproc ROUTER
//  for probes; result_endpoint: the engine's inproc PULL for results.
//  The routers registry must outlive the pool.
xxl_pool_t *xxl_pool_new (const char *name, int threads, size_t max_queue,
                          xxl_routers_t *routers, int probe_timeout_ms,
                          const char *probe_endpoint, const char *result_endpoint);
//  Stops the workers (a probe in progress ends at its timeout) and frees
//  unstarted tasks.
void xxl_pool_destroy (xxl_pool_t **self_p);
//  Queues a task (takes ownership, nulls *task_p); -1 when the queue is
//  full, and the task stays with the caller.
int xxl_pool_submit (xxl_pool_t *self, xxl_route_task_t **task_p);
size_t xxl_pool_queued (xxl_pool_t *self);
//  The router host's probe for pool workers (host_ctx is the worker): a
//  request to the engine, answered when the agent answers or the deadline
//  passes.  Returns 200/500, or XXL_PROBE_NO_ANSWER.
int xxl_pool_probe (void *host_ctx, const char *address, int kind, int64_t job_id,
                    int timeout_ms, char *msg, size_t msglen);

//  The result a worker sends (one frame, msgpack map):
//      {v, t: "ROUTED", id: 0, logId, jobId, index (-1 none), address,
//       msg (router text), elapsedMs}
//  A probe request a worker sends (DEALER → engine ROUTER):
//      {v, t: "PROBE", id, address, kind (1 BEAT, 2 IDLE_BEAT), jobId, timeoutMs}
//  and the engine's answer: {v, t: "REPLY", id, code (200/500/-1 as 0),
//       msg}  where code 0 means no answer.

#endif
