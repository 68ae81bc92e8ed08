/*  custom_router.c -- a user's own router plugin, from the test tree.

    Proves that a router .so dropped into the routers folder is usable by
    its name.  It registers WEIGHTED: smooth weighted round robin (as
    nginx does) per job, where an address's weight is the number after
    "#w=" at its end ("tcp://10.0.0.5:7071#w=5"; 1 without it).  With
    weights a=5, b=1, c=1 a job's triggers go a a b a c a a, and again.
    Its per-job state lives in the plugin state, guarded by a mutex, and is
    reset when a job's address list changes.  It also registers TAG_FIRST,
    a stateless route that picks the first address containing "tag", to
    show one plugin carrying several routes.
*/

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <xxl/router.h>

typedef struct _job_t {
    int64_t job_id;
    size_t count;                       //  addresses when current was sized
    long *current;                      //  current weight per address
    struct _job_t *next;
} job_t;

typedef struct {
    pthread_mutex_t mutex;
    job_t *jobs;
} state_t;

static void *
s_init (const xxl_router_host_t *host, const char **error)
{
    state_t *self = (state_t *) calloc (1, sizeof (state_t));
    if (!self || pthread_mutex_init (&self->mutex, NULL) != 0) {
        free (self);
        *error = "out of memory";
        return NULL;
    }
    xxl_router_log (host, XXL_ROUTER_LOG_INFO, "custom_router: WEIGHTED ready");
    return self;
}

static void
s_destroy (void *state)
{
    state_t *self = (state_t *) state;
    while (self->jobs) {
        job_t *next = self->jobs->next;
        free (self->jobs->current);
        free (self->jobs);
        self->jobs = next;
    }
    pthread_mutex_destroy (&self->mutex);
    free (self);
}

static long
s_weight (const char *address)
{
    const char *mark = strstr (address, "#w=");
    long weight = mark? strtol (mark + 3, NULL, 10): 1;
    return weight < 1? 1: weight > 1000? 1000: weight;
}

static int
s_weighted (void *state, const xxl_router_host_t *host, xxl_route_call_t *call)
{
    (void) host;
    state_t *self = (state_t *) state;
    int pick = -1;
    pthread_mutex_lock (&self->mutex);
    job_t *job = self->jobs;
    while (job && job->job_id != call->job_id)
        job = job->next;
    if (!job && (job = (job_t *) calloc (1, sizeof (job_t)))) {
        job->job_id = call->job_id;
        job->next = self->jobs;
        self->jobs = job;
    }
    if (job && job->count != call->count) {
        free (job->current);
        job->current = (long *) calloc (call->count, sizeof (long));
        job->count = job->current? call->count: 0;
    }
    if (job && job->current) {
        long total = 0;
        for (size_t i = 0; i < call->count; i++) {
            long weight = s_weight (call->addresses [i]);
            job->current [i] += weight;
            total += weight;
            if (pick < 0 || job->current [i] > job->current [pick])
                pick = (int) i;
        }
        job->current [pick] -= total;
    }
    pthread_mutex_unlock (&self->mutex);
    if (pick < 0)
        xxl_route_msg (call, "WEIGHTED: out of memory");
    return pick;
}

static int
s_tag_first (void *state, const xxl_router_host_t *host, xxl_route_call_t *call)
{
    (void) state;
    (void) host;
    for (size_t i = 0; i < call->count; i++)
        if (strstr (call->addresses [i], "tag"))
            return (int) i;
    xxl_route_msg (call, "TAG_FIRST: no address carries a tag");
    return -1;
}

static const xxl_router_t s_routers [] = {
    { "WEIGHTED", s_weighted, 0 },
    { "TAG_FIRST", s_tag_first, 0 },
    { NULL, NULL, 0 }
};

XXL_ROUTER_PLUGIN ("custom_router", "1.0", s_init, s_destroy, s_routers)
