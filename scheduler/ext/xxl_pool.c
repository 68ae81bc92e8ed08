/*  xxl_pool.c -- trigger pool threads for probing routers.

    Workers share one queue (mutex + condition).  Each worker owns a DEALER
    to the engine's probe ROUTER and a PUSH to its result PULL, so a probe
    is an ordinary request/reply on the engine's loop and the engine stays
    the only thread that touches the agents socket and the store.
*/

#include "xxl_pool.h"
#include "xxl/msg.h"
#include "xxl_transport.h"

#include <pthread.h>

typedef struct _worker_t worker_t;

struct _xxl_pool_t {
    char *name;
    xxl_routers_t *routers;
    int probe_timeout_ms;
    char *probe_endpoint;
    char *result_endpoint;
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    zlistx_t *queue;                    //  xxl_route_task_t *
    size_t max_queue;
    bool stopping;
    pthread_t *threads;
    int thread_count;
};

struct _worker_t {
    xxl_pool_t *pool;
    zsock_t *probe;
    zsock_t *result;
    xxl_enc_t *enc;
    uint64_t next_id;
};

void
xxl_route_task_destroy (xxl_route_task_t **task_p)
{
    if (task_p && *task_p) {
        xxl_route_task_t *task = *task_p;
        for (size_t i = 0; i < task->count; i++)
            free (task->addresses [i]);
        free (task->addresses);
        free (task->route);
        free (task);
        *task_p = NULL;
    }
}

static void
s_task_destroy (void **item)
{
    xxl_route_task_destroy ((xxl_route_task_t **) item);
}

int
xxl_pool_probe (void *host_ctx, const char *address, int kind, int64_t job_id,
         int timeout_ms, char *msg, size_t msglen)
{
    worker_t *worker = (worker_t *) host_ctx;
    if (msg && msglen)
        *msg = 0;
    uint64_t id = ++worker->next_id;
    xxl_enc_request (worker->enc, "PROBE", id);
    xxl_enc_kstr (worker->enc, "address", address);
    xxl_enc_kint (worker->enc, "kind", kind);
    xxl_enc_kint (worker->enc, "jobId", job_id);
    xxl_enc_kint (worker->enc, "timeoutMs", timeout_ms);
    size_t size;
    const void *data = xxl_enc_finish (worker->enc, &size);
    void *handle = zsock_resolve (worker->probe);
    if (zmq_send (handle, data, size, 0) < 0)
        return XXL_PROBE_NO_ANSWER;
    int64_t deadline = zclock_mono () + timeout_ms + 1000;
    while (zclock_mono () < deadline) {
        zmq_pollitem_t item = { handle, 0, ZMQ_POLLIN, 0 };
        if (zmq_poll (&item, 1, (long) (deadline - zclock_mono ())) <= 0)
            continue;
        zmq_msg_t frame;
        zmq_msg_init (&frame);
        if (zmq_msg_recv (&frame, handle, 0) < 0) {
            zmq_msg_close (&frame);
            break;
        }
        char err [128];
        xxl_msg_t *reply = xxl_msg_decode (zmq_msg_data (&frame), zmq_msg_size (&frame),
                                           NULL, err, sizeof err);
        zmq_msg_close (&frame);
        if (!reply || xxl_msg_id (reply) != id) {
            xxl_msg_destroy (&reply);
            continue;                   //  a late answer to an earlier probe
        }
        int code = (int) xxl_msg_int (reply, NULL, "code", 0, 0, 999, 0);
        const char *text = xxl_msg_str (reply, NULL, "msg", 0, 4096, NULL);
        if (text && msg && msglen)
            snprintf (msg, msglen, "%s", text);
        xxl_msg_destroy (&reply);
        return code == 0? XXL_PROBE_NO_ANSWER: code;
    }
    return XXL_PROBE_NO_ANSWER;
}

static void *
s_worker (void *args)
{
    xxl_pool_t *pool = (xxl_pool_t *) args;
    worker_t worker = { pool, NULL, NULL, xxl_enc_new (), 0 };
    worker.probe = xxl_transport_inproc (ZMQ_DEALER, pool->probe_endpoint, false);
    worker.result = xxl_transport_inproc (ZMQ_PUSH, pool->result_endpoint, false);
    while (true) {
        pthread_mutex_lock (&pool->mutex);
        while (!pool->stopping && zlistx_size (pool->queue) == 0)
            pthread_cond_wait (&pool->cond, &pool->mutex);
        if (pool->stopping) {
            pthread_mutex_unlock (&pool->mutex);
            break;
        }
        xxl_route_task_t *task = (xxl_route_task_t *) zlistx_detach (pool->queue, NULL);
        pthread_mutex_unlock (&pool->mutex);

        char text [2048] = "";
        int64_t start = zclock_mono ();
        int index = xxl_routers_route (pool->routers, task->route, task->job_id,
                                       task->log_id, (const char *const *) task->addresses,
                                       task->count, &worker, text, sizeof text);
        int64_t elapsed = zclock_mono () - start;
        xxl_enc_request (worker.enc, "ROUTED", 1);      //  (ids start at 1; none is awaited)
        xxl_enc_kint (worker.enc, "logId", task->log_id);
        xxl_enc_kint (worker.enc, "jobId", task->job_id);
        xxl_enc_kint (worker.enc, "index", index);
        xxl_enc_kstr (worker.enc, "address",
                      index >= 0 && (size_t) index < task->count? task->addresses [index]: NULL);
        xxl_enc_kstr (worker.enc, "msg", text);
        xxl_enc_kint (worker.enc, "elapsedMs", elapsed);
        size_t size;
        const void *data = xxl_enc_finish (worker.enc, &size);
        if (worker.result)
            zmq_send (zsock_resolve (worker.result), data, size, 0);
        xxl_route_task_destroy (&task);
    }
    zsock_destroy (&worker.probe);
    zsock_destroy (&worker.result);
    xxl_enc_destroy (&worker.enc);
    return NULL;
}

xxl_pool_t *
xxl_pool_new (const char *name, int threads, size_t max_queue, xxl_routers_t *routers,
              int probe_timeout_ms, const char *probe_endpoint, const char *result_endpoint)
{
    xxl_pool_t *self = (xxl_pool_t *) zmalloc (sizeof (xxl_pool_t));
    self->name = strdup (name);
    self->routers = routers;
    self->probe_timeout_ms = probe_timeout_ms;
    self->probe_endpoint = strdup (probe_endpoint);
    self->result_endpoint = strdup (result_endpoint);
    self->max_queue = max_queue? max_queue: 100000;
    self->queue = zlistx_new ();
    zlistx_set_destructor (self->queue, s_task_destroy);
    pthread_mutex_init (&self->mutex, NULL);
    pthread_cond_init (&self->cond, NULL);
    self->threads = (pthread_t *) calloc ((size_t) (threads > 0? threads: 1), sizeof (pthread_t));
    pthread_attr_t attr;
    pthread_attr_init (&attr);
    pthread_attr_setstacksize (&attr, 256 * 1024);
    for (int i = 0; i < (threads > 0? threads: 1); i++) {
        if (pthread_create (&self->threads [i], &attr, s_worker, self)) {
            zsys_error ("pool %s: cannot start thread %d", name, i);
            break;
        }
        self->thread_count++;
    }
    pthread_attr_destroy (&attr);
    if (self->thread_count == 0) {
        xxl_pool_destroy (&self);
        return NULL;
    }
    return self;
}

void
xxl_pool_destroy (xxl_pool_t **self_p)
{
    if (self_p && *self_p) {
        xxl_pool_t *self = *self_p;
        pthread_mutex_lock (&self->mutex);
        self->stopping = true;
        pthread_cond_broadcast (&self->cond);
        pthread_mutex_unlock (&self->mutex);
        for (int i = 0; i < self->thread_count; i++)
            pthread_join (self->threads [i], NULL);
        free (self->threads);
        zlistx_destroy (&self->queue);
        pthread_mutex_destroy (&self->mutex);
        pthread_cond_destroy (&self->cond);
        free (self->name);
        free (self->probe_endpoint);
        free (self->result_endpoint);
        free (self);
        *self_p = NULL;
    }
}

int
xxl_pool_submit (xxl_pool_t *self, xxl_route_task_t **task_p)
{
    pthread_mutex_lock (&self->mutex);
    if (zlistx_size (self->queue) >= self->max_queue) {
        pthread_mutex_unlock (&self->mutex);
        return -1;
    }
    zlistx_add_end (self->queue, *task_p);
    *task_p = NULL;
    pthread_cond_signal (&self->cond);
    pthread_mutex_unlock (&self->mutex);
    return 0;
}

size_t
xxl_pool_queued (xxl_pool_t *self)
{
    pthread_mutex_lock (&self->mutex);
    size_t size = zlistx_size (self->queue);
    pthread_mutex_unlock (&self->mutex);
    return size;
}
