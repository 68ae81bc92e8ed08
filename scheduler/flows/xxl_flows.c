/*  xxl_flows.c -- the workflow engine: a run's states read from the
    store, its decisions (scheduler/flow's rules) acted on, its nodes
    started as log rows of trigger type WORKFLOW; kill, retry, recovery,
    and the schedules of workflows (xxl_flows.h states the contract).
*/

#include "xxl_engine.h"
#include "xxl_flow.h"
#include "xxl_flow_rules.h"
#include "xxl_calendar.h"
#include "xxl_retry_rules.h"

//  A parsed definition, shared by the runs in flight that started with
//  the same text (flows->shapes, keyed by that text): its graph lives
//  while one of them holds it (runs > 0)
typedef struct {
    char *definition;                   //  (the map's key points here)
    size_t size;                        //  its bytes
    xxl_flow_t *flow;
    size_t runs;                        //  graph_t's that hold it
    size_t *bytes;                      //  (flows->shape_bytes, which counts size)
} shape_t;

//  A run's graph, kept while the run is in flight (flows->graphs, keyed
//  by its id); it holds one reference of its shape
typedef struct {
    int64_t run_id;
    shape_t *shape;
    zhashx_t *shapes;                   //  (where the shape is kept)
} graph_t;

static void
s_shape_destroy (void **item)
{
    shape_t *shape = (shape_t *) *item;
    assert (shape->runs == 0);
    assert (*shape->bytes >= shape->size);
    *shape->bytes -= shape->size;
    xxl_flow_destroy (&shape->flow);
    free (shape->definition);
    free (shape);
    *item = NULL;
}

static void
s_graph_destroy (void **item)
{
    graph_t *graph = (graph_t *) *item;
    assert (graph->shape->runs > 0);
    if (--graph->shape->runs == 0)
        zhashx_delete (graph->shapes, graph->shape->definition);
    free (graph);
    *item = NULL;
}

//  The most graphs kept, and the most bytes of distinct definitions
//  behind them (past either, all are dropped and parsed again as needed)
#define XXL_FLOWS_GRAPHS        4096
#define XXL_FLOWS_SHAPE_BYTES   (64 * 1024 * 1024)

//  A node whose retry waits, and the steps of the wall clock since it
//  began to wait: its failure's end time, written on the clock before
//  them, is read `skew` ms later
typedef struct {
    int node;
    int64_t attempt;                    //  of its failed row
    int64_t skew;
} waiting_t;

//  A run with a node's retry due later (flows->retries, by run id)
typedef struct {
    int64_t run_id;
    int64_t due;                        //  wall ms
    size_t count;
    waiting_t *nodes;                   //  its nodes whose retry waits (owned)
} retry_t;

static void
s_retry_destroy (void **item)
{
    retry_t *retry = (retry_t *) *item;
    if (retry)
        free (retry->nodes);
    free (retry);
    *item = NULL;
}

//  What a run is made of as read: its row, graph, node rows and states
typedef struct {
    xxl_workflow_run_t run;
    const xxl_flow_t *flow;
    xxl_flow_t *owned;                  //  flow, when not kept (a run that has ended)
    xxl_workflow_row_t *rows;
    size_t row_count;
    xxl_flow_state_t *states;           //  per node
    int *row_of;                        //  per node: its latest row's index, or -1
    int *ready, *skipped;               //  xxl_flow_step's outs (room for every node)
    int64_t *retry_at;                  //  per node: wall ms its job's retry is due, 0 none
} state_t;

static void
s_state_free (state_t *state)
{
    xxl_workflow_run_free (&state->run);
    xxl_workflow_rows_free (&state->rows, state->row_count);
    xxl_flow_destroy (&state->owned);
    free (state->states);
    free (state->row_of);
    free (state->ready);
    free (state->skipped);
    free (state->retry_at);
    memset (state, 0, sizeof *state);
}

void
engine_flows_start (server_t *self)
{
    flows_t *flows = &self->flows;
    //  (shapes first: a graph's end may end its shape)
    flows->shapes = zhashx_new ();
    assert (flows->shapes);
    zhashx_set_key_duplicator (flows->shapes, NULL);    //  (the shape's own text)
    zhashx_set_key_destructor (flows->shapes, NULL);
    zhashx_set_destructor (flows->shapes, s_shape_destroy);
    flows->graphs = engine_id_map (s_graph_destroy);
    flows->retries = engine_id_map (s_retry_destroy);
    flows->retry_min = 0;
    flows->running_until = 0;
    flows->next_due = flows->next_sweep = zclock_mono ();
}

void
engine_flows_stop (server_t *self)
{
    zhashx_destroy (&self->flows.graphs);
    assert (zhashx_size (self->flows.shapes) == 0);
    zhashx_destroy (&self->flows.shapes);
    zhashx_destroy (&self->flows.retries);
}

//  The steps of the wall clock since node's retry (after its failed
//  attempt) began to wait in run_id, in ms (0: none, or not waiting)
static int64_t
s_skew (server_t *self, int64_t run_id, int node, int64_t attempt)
{
    retry_t *retry = (retry_t *) zhashx_lookup (self->flows.retries, &run_id);
    for (size_t i = 0; retry && i < retry->count; i++)
        if (retry->nodes [i].node == node && retry->nodes [i].attempt == attempt)
            return retry->nodes [i].skew;
    return 0;
}

//  Run run_id is advanced again at wall ms due (its earliest retry), its
//  nodes whose retry waits those of nodes (count, owned now): kept in
//  memory only, the sweep of the share's holder covers a restart
static void
s_retry_later (server_t *self, int64_t run_id, int64_t due, waiting_t *nodes, size_t count)
{
    flows_t *flows = &self->flows;
    retry_t *retry = (retry_t *) zhashx_lookup (flows->retries, &run_id);
    if (!retry) {
        retry = (retry_t *) calloc (1, sizeof *retry);
        assert (retry);
        retry->run_id = run_id;
        zhashx_insert (flows->retries, &retry->run_id, retry);
    }
    free (retry->nodes);
    retry->nodes = nodes;
    retry->count = count;
    retry->due = due;
    if (flows->retry_min == 0 || due < flows->retry_min)
        flows->retry_min = due;
}

static int s_advance (server_t *self, int64_t run_id);

//  Advances the runs whose retries are due at wall ms now
static void
s_retries_run (server_t *self, int64_t now)
{
    flows_t *flows = &self->flows;
    if (flows->retry_min == 0 || now < flows->retry_min)
        return;
    size_t count = zhashx_size (flows->retries), due = 0;
    int64_t *ids = (int64_t *) malloc ((count? count: 1) * sizeof (int64_t));
    assert (ids);
    flows->retry_min = 0;
    for (retry_t *retry = (retry_t *) zhashx_first (flows->retries); retry;
         retry = (retry_t *) zhashx_next (flows->retries)) {
        if (retry->due <= now)
            ids [due++] = retry->run_id;
        else
        if (flows->retry_min == 0 || retry->due < flows->retry_min)
            flows->retry_min = retry->due;
    }
    //  (each advance remembers the run again while a retry is still ahead,
    //  and forgets it otherwise)
    for (size_t i = 0; i < due; i++) {
        s_advance (self, ids [i]);
        retry_t *retry = (retry_t *) zhashx_lookup (flows->retries, &ids [i]);
        if (retry && retry->due <= now)
            zhashx_delete (flows->retries, &ids [i]);  //  (not advanced)
    }
    free (ids);
}

void
engine_flows_on_step (server_t *self, int64_t step)
{
    flows_t *flows = &self->flows;
    flows->retry_min = 0;
    for (retry_t *retry = (retry_t *) zhashx_first (flows->retries); retry;
         retry = (retry_t *) zhashx_next (flows->retries)) {
        retry->due += step;
        for (size_t i = 0; i < retry->count; i++)
            retry->nodes [i].skew += step;
        if (flows->retry_min == 0 || retry->due < flows->retry_min)
            flows->retry_min = retry->due;
    }
}

//  The graph of a run (parsed from the definition it started with, no
//  job checked: a job removed since fails its node when it starts), or
//  NULL when it does not parse.  Kept while the run is RUNNING, shared
//  with the runs in flight of the same definition; the graph of a run
//  that has ended is handed over in *owned (the caller frees it)
static void s_graph_keep (server_t *self, int64_t run_id, const char *definition,
                          xxl_flow_t *flow);
static void s_graph_hold (server_t *self, int64_t run_id, shape_t *shape);

static const xxl_flow_t *
s_graph (server_t *self, const xxl_workflow_run_t *run, xxl_flow_t **owned)
{
    graph_t *graph = (graph_t *) zhashx_lookup (self->flows.graphs, &run->id);
    if (graph)
        return graph->shape->flow;
    if (streq (run->status, "RUNNING")) {
        shape_t *shape = (shape_t *) zhashx_lookup (self->flows.shapes, run->definition);
        if (shape) {
            s_graph_hold (self, run->id, shape);
            return shape->flow;
        }
    }
    char error [XXL_FLOW_ERROR_MAX];
    xxl_flow_t *flow = xxl_flow_new (run->definition, strlen (run->definition), NULL, NULL,
                                     error, sizeof error);
    if (!flow) {
        engine_warn_limited (&self->flows.log_errors, "flows: run %" PRId64 ": its definition"
                             " does not parse: %s", run->id, error);
        return NULL;
    }
    if (strneq (run->status, "RUNNING")) {
        *owned = flow;
        return flow;
    }
    s_graph_keep (self, run->id, run->definition, flow);
    return flow;
}

//  Makes run_id hold shape
static void
s_graph_hold (server_t *self, int64_t run_id, shape_t *shape)
{
    graph_t *graph = (graph_t *) calloc (1, sizeof *graph);
    assert (graph);
    graph->run_id = run_id;
    graph->shape = shape;
    graph->shapes = self->flows.shapes;
    shape->runs++;
    zhashx_insert (self->flows.graphs, &graph->run_id, graph);
}

//  Keeps the graph of a RUNNING run parsed from definition (taking flow),
//  as the shape of that text
static void
s_graph_keep (server_t *self, int64_t run_id, const char *definition, xxl_flow_t *flow)
{
    size_t size = strlen (definition);
    //  (only while no outer advance holds a graph it borrowed: within a
    //  nested one the bounds are passed by at most XXL_FLOWS_DEPTH shapes)
    if (self->flows.depth <= 1
    &&  (zhashx_size (self->flows.graphs) >= XXL_FLOWS_GRAPHS
         || self->flows.shape_bytes + size > XXL_FLOWS_SHAPE_BYTES))
        zhashx_purge (self->flows.graphs);      //  (and with them every shape)
    assert (zhashx_lookup (self->flows.shapes, definition) == NULL);
    shape_t *shape = (shape_t *) calloc (1, sizeof *shape);
    assert (shape);
    shape->definition = strdup (definition);
    assert (shape->definition);
    shape->size = size;
    shape->flow = flow;
    shape->bytes = &self->flows.shape_bytes;
    self->flows.shape_bytes += size;
    zhashx_insert (self->flows.shapes, shape->definition, shape);
    s_graph_hold (self, run_id, shape);
}

static void
s_graph_drop (server_t *self, int64_t run_id)
{
    zhashx_delete (self->flows.graphs, &run_id);
}

//  A row's node state: its result, else RUNNING
static xxl_flow_state_t
s_row_state (const xxl_workflow_row_t *row)
{
    if (row->trigger_code != 0 && row->trigger_code != XXL_OK)
        return XXL_FLOW_FAILURE;
    if (row->handle_code == XXL_OK)
        return XXL_FLOW_SUCCESS;
    return row->handle_code? XXL_FLOW_FAILURE: XXL_FLOW_RUNNING;
}

//  The state of a start whose rows are a broadcast's shards, from the
//  state of those before and of one more: RUNNING while any runs, then
//  FAILURE when any failed, else SUCCESS
static xxl_flow_state_t
s_shards_state (xxl_flow_state_t so_far, xxl_flow_state_t row)
{
    if (so_far == XXL_FLOW_RUNNING || row == XXL_FLOW_RUNNING)
        return XXL_FLOW_RUNNING;
    if (so_far == XXL_FLOW_FAILURE || row == XXL_FLOW_FAILURE)
        return XXL_FLOW_FAILURE;
    return XXL_FLOW_SUCCESS;
}

//  Whether a comma-separated list holds id
static bool
s_listed (const char *list, const char *id)
{
    size_t length = strlen (id);
    for (const char *p = list; p && *p; ) {
        const char *end = strchr (p, ',');
        size_t size = end? (size_t) (end - p): strlen (p);
        if (size == length && memcmp (p, id, length) == 0)
            return true;
        p = end? end + 1: NULL;
    }
    return false;
}

//  A failed node of a running run whose job retries failures (its
//  executorFailRetryCount, the attempts so far not past it): RUNNING
//  until its next attempt, due (retry_at) after the job's retry delay
//  from the failure (runs/xxl_retry_rules.h).  0, or -1 on a store error.
static int
s_retry_check (server_t *self, state_t *state, int node)
{
    const xxl_workflow_row_t *row = &state->rows [state->row_of [node]];
    xxl_job_t job;
    int rc = xxl_store_job_load (self->store, xxl_flow_job (state->flow, node), &job);
    if (rc)
        return rc < 0? -1: 0;           //  (a job gone: no retry)
    if (row->attempt <= job.executor_fail_retry_count) {
        int64_t delay = xxl_retry_delay (job.retry_interval, job.retry_backoff,
                                         job.retry_max_interval, row->attempt - 1);
        //  (its end time as the wall clock reads now: moved by the steps
        //  since its retry began to wait)
        int64_t skew = s_skew (self, state->run.id, node, row->attempt);
        state->retry_at [node] = xxl_retry_due (row->end_time + skew, delay, engine_now ());
        state->states [node] = XXL_FLOW_RUNNING;
    }
    xxl_job_free (&job);
    return 0;
}

//  Reads run_id and its node states: 0, 1 absent, -1 (store error or a
//  definition that does not parse: why).  The states are the rows' (the
//  latest attempt of each node; in a running run, a failure its job
//  retries is RUNNING: s_retry_check) and, in a killed run, KILLED for
//  the nodes it lists and for every node it left undecided.
static int
s_state_load (server_t *self, int64_t run_id, state_t *state, char *why, size_t whylen)
{
    memset (state, 0, sizeof *state);
    int rc = xxl_store_workflow_run_load (self->store, run_id, &state->run);
    if (rc) {
        snprintf (why, whylen, "%s", rc < 0? xxl_store_error (self->store): "not found");
        return rc;
    }
    state->flow = s_graph (self, &state->run, &state->owned);
    if (!state->flow) {
        snprintf (why, whylen, "workflow run %" PRId64 ": its definition does not parse", run_id);
        s_state_free (state);
        return -1;
    }
    if (xxl_store_workflow_run_rows (self->store, run_id, &state->rows, &state->row_count)) {
        snprintf (why, whylen, "%s", xxl_store_error (self->store));
        s_state_free (state);
        return -1;
    }
    int nodes = xxl_flow_nodes (state->flow);
    state->states = (xxl_flow_state_t *) calloc ((size_t) nodes, sizeof *state->states);
    state->row_of = (int *) malloc ((size_t) nodes * sizeof (int));
    state->ready = (int *) malloc ((size_t) nodes * sizeof (int));
    state->skipped = (int *) malloc ((size_t) nodes * sizeof (int));
    state->retry_at = (int64_t *) calloc ((size_t) nodes, sizeof (int64_t));
    assert (state->states && state->row_of && state->ready && state->skipped
            && state->retry_at);
    for (int i = 0; i < nodes; i++) {
        state->states [i] = XXL_FLOW_WAITING;
        state->row_of [i] = -1;
    }
    //  (rows by node, attempt, then id: a node's latest attempt comes last;
    //  its first row stands for it, and its state is its rows' together)
    for (size_t r = 0; r < state->row_count; r++) {
        int node = xxl_flow_find (state->flow, state->rows [r].node);
        if (node < 0)
            continue;
        int first = state->row_of [node];
        xxl_flow_state_t row_state = s_row_state (&state->rows [r]);
        if (first < 0 || state->rows [first].attempt != state->rows [r].attempt) {
            state->row_of [node] = (int) r;
            state->states [node] = row_state;
        }
        else
            state->states [node] = s_shards_state (state->states [node], row_state);
    }
    if (streq (state->run.status, "RUNNING"))
        for (int i = 0; i < nodes; i++)
            if (state->states [i] == XXL_FLOW_FAILURE && s_retry_check (self, state, i)) {
                snprintf (why, whylen, "%s", xxl_store_error (self->store));
                s_state_free (state);
                return -1;
            }
    if (streq (state->run.status, "KILLED")) {
        //  As it was when killed: the nodes it lists were running, and
        //  what the rules decided then is decided again; the rest never
        //  started
        for (int i = 0; i < nodes; i++)
            if (s_listed (state->run.killed, xxl_flow_id (state->flow, i)))
                state->states [i] = XXL_FLOW_RUNNING;
        int nready = 0, nskipped = 0;
        xxl_flow_step (state->flow, state->states, state->ready, &nready, state->skipped,
                       &nskipped);
        int nrunning = 0;
        xxl_flow_kill (state->flow, state->states, state->ready, &nrunning);
    }
    return 0;
}

//  ${NODE.msg}: the handleMsg of node's latest row ("" when none)
static const char *
s_node_msg (void *arg, int node)
{
    state_t *state = (state_t *) arg;
    int row = state->row_of [node];
    return row < 0? "": state->rows [row].handle_msg;
}

//  Writes a node's start that failed before any trigger (its job is gone,
//  its param too long): a row of the node's job with the trigger failed
//  (500) and the reason; its id, or -1
static int64_t
s_failed_row (server_t *self, const state_t *state, int node, const char *reason)
{
    char *message = zsys_sprintf ("Trigger type: Workflow trigger\nWorkflow run: %" PRId64
                                  "\nNode: %s\n\n>>>>>>>>>>> Trigger <<<<<<<<<<<\ncode: 500\n"
                                  "msg: %s\n", state->run.id,
                                  xxl_flow_id (state->flow, node), reason);
    int64_t id = engine_next_log_id (self);
    xxl_log_t log = {
        .id = id > 0? id: 0,
        .job_id = xxl_flow_job (state->flow, node), .executor_handler = "",
        .trigger_time = engine_now (), .trigger_code = XXL_CODE_FAIL, .trigger_msg = message,
        .trigger_type = "WORKFLOW"
    };
    int rc = xxl_store_log_add (self->store, &log);
    zstr_free (&message);
    if (rc == 0)                        //  (a trigger made, as engine_trigger counts one)
        self->metrics.triggers [xxl_metrics_trigger_index ("WORKFLOW")]++;
    self->flows.again = true;           //  (the node has ended: decide again)
    return rc? -1: log.id;
}

//  Starts node (its attempt-th start): its job triggered with its
//  param rendered, the row marked as the node's; a job that is gone or a
//  param too long fails it at once.  0, or -1 on a store error.
static int
s_start (server_t *self, state_t *state, int node, int64_t attempt)
{
    const xxl_flow_t *flow = state->flow;
    const char *id = xxl_flow_id (flow, node);
    xxl_flow_vars_t vars = { .param = state->run.param, .run_id = state->run.id,
                             .time_ms = state->run.trigger_time, .msg = s_node_msg,
                             .arg = state };
    char error [XXL_FLOW_ERROR_MAX] = "";
    char *param = xxl_flow_render (flow, node, &vars, error, sizeof error);
    int64_t log_id = -1;
    int64_t ids [XXL_FLOW_NODES_MAX];
    int made = 0;
    xxl_job_t job;
    int found = -1;
    if (!param && *error)
        log_id = s_failed_row (self, state, node, error);
    else
    if ((found = xxl_store_job_load (self->store, xxl_flow_job (flow, node), &job)) != 0) {
        if (found < 0) {
            free (param);
            return -1;
        }
        char reason [96];
        snprintf (reason, sizeof reason, "job %" PRId64 " not found (removed after the"
                  " workflow was made)", xxl_flow_job (flow, node));
        log_id = s_failed_row (self, state, node, reason);
    }
    else {
        char by [160];
        snprintf (by, sizeof by, "workflow %" PRId64 " run %" PRId64 ", node %s",
                  state->run.workflow_id, state->run.id, id);
        //  (one start, one run: the job's own fail retries are the
        //  workflow's to decide, by its edges and `workflow run retry`)
        trigger_args_t args = { .trigger_type = "WORKFLOW", .fail_retry_count = 0,
                                .param = param, .shard_index = -1, .shard_total = -1,
                                .by = by };
        made = engine_trigger (self, &job, &args, ids, NULL, XXL_FLOW_NODES_MAX);
        xxl_job_free (&job);
        log_id = made > 0? ids [0]: -1;
    }
    free (param);
    if (log_id < 0)
        return -1;
    //  Every row of the start is the node's: a SHARDING_BROADCAST's one
    //  per agent (shards made later, while agents reconnect, are copies
    //  of the first row and carry its mark)
    if (made == 0)
        ids [made++] = log_id;
    for (int i = 0; i < made; i++)
        if (xxl_store_log_flow_mark (self->store, ids [i], state->run.id, id, attempt))
            return -1;
    self->flows.any_running = true;
    return 0;
}

//  The attempt a node's next start is
static int64_t
s_next_attempt (const state_t *state, int node)
{
    int row = state->row_of [node];
    return row < 0? 1: state->rows [row].attempt + 1;
}

//  Whether run_id is being advanced now (an outer call goes on: again)
static bool
s_advancing (server_t *self, int64_t run_id)
{
    for (size_t i = 0; i < self->flows.depth; i++)
        if (self->flows.stack [i] == run_id)
            return true;
    return false;
}

//  Advances a RUNNING run: its states read, every decision the rules
//  make acted on (ready nodes started, their rows marked), again while a
//  start ended at once (a trigger that failed), then its status stored
//  once it has ended.  0, 1 when it is not running (or absent), -1.
static int
s_advance (server_t *self, int64_t run_id)
{
    if (s_advancing (self, run_id)) {
        self->flows.again = true;
        return 0;
    }
    if (self->flows.depth >= XXL_FLOWS_DEPTH)
        return -1;
    self->flows.stack [self->flows.depth++] = run_id;
    int rc = 0;
    for (int round = 0; round < XXL_FLOW_NODES_MAX + 1; round++) {
        self->flows.again = false;
        state_t state;
        char why [XXL_FLOW_ERROR_MAX];
        rc = s_state_load (self, run_id, &state, why, sizeof why);
        if (rc)
            break;
        if (strneq (state.run.status, "RUNNING")) {
            s_graph_drop (self, run_id);
            s_state_free (&state);
            rc = 1;
            break;
        }
        int nready = 0, nskipped = 0;
        xxl_flow_step (state.flow, state.states, state.ready, &nready, state.skipped,
                       &nskipped);
        for (int i = 0; i < nready && rc == 0; i++)
            rc = s_start (self, &state, state.ready [i], s_next_attempt (&state, state.ready [i]));
        //  Retries due start; the next one not due yet is remembered, with
        //  the nodes that wait and their steps so far
        int64_t now = engine_now (), wait = 0;
        int nodes = xxl_flow_nodes (state.flow);
        waiting_t *waiting = (waiting_t *) malloc ((size_t) nodes * sizeof (waiting_t));
        assert (waiting);
        size_t nwaiting = 0;
        for (int i = 0; i < nodes && rc == 0; i++) {
            int64_t due = state.retry_at [i];
            if (due > 0 && due <= now) {
                rc = s_start (self, &state, i, s_next_attempt (&state, i));
                nready++;
            }
            else
            if (due > 0) {
                if (wait == 0 || due < wait)
                    wait = due;
                int64_t attempt = state.rows [state.row_of [i]].attempt;
                waiting [nwaiting++] = (waiting_t) { i, attempt,
                                                     s_skew (self, run_id, i, attempt) };
            }
        }
        if (wait > 0) {
            s_retry_later (self, run_id, wait, waiting, nwaiting);
            waiting = NULL;
        }
        else
            zhashx_delete (self->flows.retries, &run_id);
        free (waiting);
        //  (a start whose row ends at once -- a failed trigger, a job
        //  gone -- says so through `again`: only then decide again)
        bool started = nready > 0;
        if (rc == 0 && !started) {
            xxl_flow_run_t end = xxl_flow_run_state (state.flow, state.states);
            if (end != XXL_FLOW_RUN_RUNNING) {
                if (xxl_store_workflow_run_set (self->store, run_id, xxl_flow_run_name (end),
                                                engine_now (), NULL) < 0)
                    rc = -1;
                s_graph_drop (self, run_id);
            }
        }
        s_state_free (&state);
        if (rc || !self->flows.again)
            break;
    }
    self->flows.depth--;
    if (rc < 0)
        engine_warn_limited (&self->flows.log_errors, "flows: run %" PRId64 " not advanced: %s",
                             run_id, xxl_store_error (self->store));
    return rc;
}

void
engine_flows_on_run (server_t *self, const xxl_event_t *event)
{
    //  Most installations run no workflow: ask the store once a second
    //  (this scheduler's runs say so at once)
    //  A row that ends while a run is being advanced (a node's trigger
    //  that failed at once, before its row was marked): decide again
    if (self->flows.depth > 0)
        self->flows.again = true;
    int64_t now = zclock_mono ();
    if (now >= self->flows.running_until) {
        self->flows.any_running = xxl_store_workflow_runs_running (self->store) != 0;
        self->flows.running_until = now + 1000;
    }
    if (!self->flows.any_running)
        return;
    int64_t run_id = xxl_store_log_flow_run (self->store, event->log_id);
    if (run_id > 0)
        s_advance (self, run_id);
}

//  Advances every RUNNING run of the shares in mask (recovery)
static void
s_recover (server_t *self, uint64_t mask)
{
    int64_t after = 0;
    int64_t ids [256];
    size_t count;
    size_t total = 0;
    while (xxl_store_workflow_run_ids (self->store, mask, after, ids, 256, &count) == 0
       &&  count > 0) {
        for (size_t i = 0; i < count; i++)
            s_advance (self, ids [i]);
        after = ids [count - 1];
        total += count;
    }
    if (total)
        zsys_info ("flows: %zu workflow runs recovered", total);
}

void
engine_flows_on_taken (server_t *self, const xxl_event_t *event)
{
    s_recover (self, event->mask);
}

int64_t
engine_flow_next (server_t *self, const xxl_workflow_t *workflow, int64_t after, char *why,
                  size_t whylen)
{
    //  (the calendar is judged whatever the schedule, as a job's is: a
    //  NONE workflow must not keep a name that a later schedule refuses)
    const char *name = workflow->calendar? workflow->calendar: "";
    xxl_calendar_t *calendar = NULL;
    if (*name) {
        int rc = engine_calendar_load (self, name, workflow->timezone, &calendar, NULL, why,
                                       whylen);
        if (rc > 0)
            snprintf (why, whylen, "calendar '%s' not found (xxl-ctl calendar list)", name);
        if (rc)
            return -1;
    }
    if (streq (workflow->schedule_type, "NONE")) {
        xxl_calendar_destroy (&calendar);
        return 0;
    }
    xxl_schedule_t *schedule = xxl_schedule_new (workflow->schedule_type,
                                                 workflow->schedule_conf, workflow->timezone,
                                                 why, whylen);
    int64_t next = -1;
    if (schedule) {
        //  A schedule that has ended has no next fire (0); a calendar that
        //  excludes every time the walk found is an error (-1, why)
        next = xxl_schedule_next (schedule, after);
        if (next < 0)
            next = 0;
        else
        if (calendar)
            next = engine_calendar_next (calendar, name, schedule, workflow->timezone, after,
                                         why, whylen);
    }
    xxl_schedule_destroy (&schedule);
    xxl_calendar_destroy (&calendar);
    return next;
}

//  A due workflow fires: a run (CRON, or MISFIRE for a late one whose
//  misfire is FIRE_ONCE_NOW; none for DO_NOTHING), and its next time
static void
s_fire (server_t *self, int64_t workflow_id, int64_t now)
{
    xxl_workflow_t workflow;
    if (xxl_store_workflow_load (self->store, workflow_id, &workflow))
        return;
    if (workflow.status != 1 || workflow.next_time <= 0 || workflow.next_time > now) {
        xxl_workflow_free (&workflow);
        return;
    }
    bool late = now - workflow.next_time > XXL_FLOWS_MISFIRE_MS;
    char why [256];
    int64_t next = engine_flow_next (self, &workflow, late? now: workflow.next_time, why, sizeof why);
    if (next < 0) {
        //  (no next time: stopped, as such a job is, not left started
        //  with none)
        engine_warn_limited (&self->flows.log_errors, "flows: workflow %" PRId64
                             " stopped: %s", workflow_id, why);
        workflow.status = 0;
        workflow.next_time = 0;
        workflow.update_time = engine_now ();
        xxl_store_workflow_save (self->store, &workflow);
    }
    else
        xxl_store_workflow_set_next (self->store, workflow_id, next);
    if (!late || streq (workflow.misfire_strategy, "FIRE_ONCE_NOW")) {
        int code;
        engine_flow_trigger (self, workflow_id, "", late? "MISFIRE": "CRON", &code, why,
                             sizeof why);
        if (code != XXL_OK)
            engine_warn_limited (&self->flows.log_errors, "flows: workflow %" PRId64
                                 " not fired: %s", workflow_id, why);
    }
    xxl_workflow_free (&workflow);
}

void
engine_flows_run (server_t *self, int64_t now)
{
    flows_t *flows = &self->flows;
    uint64_t held = engine_lease_held (self);
    if (now >= flows->next_due) {
        flows->next_due = now + XXL_FLOWS_DUE_MS;
        s_retries_run (self, engine_now ());
        int64_t ids [64];
        size_t count = 0;
        int64_t wall = engine_now ();
        if (held && xxl_store_workflow_due (self->store, held, wall, ids, 64, &count) == 0)
            for (size_t i = 0; i < count; i++)
                s_fire (self, ids [i], wall);
    }
    if (now >= flows->next_sweep) {
        flows->next_sweep = now + XXL_FLOWS_SWEEP_MS;
        int64_t ids [XXL_FLOWS_SWEEP_RUNS];
        size_t count = 0;
        if (held && xxl_store_workflow_run_ids (self->store, held, flows->sweep_after, ids,
                                                XXL_FLOWS_SWEEP_RUNS, &count) == 0) {
            for (size_t i = 0; i < count; i++)
                s_advance (self, ids [i]);
            flows->sweep_after = count == XXL_FLOWS_SWEEP_RUNS? ids [count - 1]: 0;
        }
    }
}

void
engine_flows_rollback (server_t *self)
{
    zhashx_purge (self->flows.graphs);
}

int64_t
engine_flows_wake (server_t *self)
{
    int64_t wake = self->flows.next_due;
    return self->flows.next_sweep < wake? self->flows.next_sweep: wake;
}

int64_t
engine_flow_trigger (server_t *self, int64_t workflow_id, const char *param,
                     const char *trigger_type, int *code, char *why, size_t whylen)
{
    xxl_workflow_t workflow;
    int rc = xxl_store_workflow_load (self->store, workflow_id, &workflow);
    if (rc) {
        *code = rc < 0? XXL_FAILURE: XXL_NOT_FOUND;
        if (rc < 0)
            snprintf (why, whylen, "%s", xxl_store_error (self->store));
        else
            snprintf (why, whylen, "workflow %" PRId64 " not found", workflow_id);
        return 0;
    }
    //  (a definition stored before the checks of today may not parse:
    //  no run is made of it, and the reason goes back)
    //  (runs in flight of the same definition share its graph)
    shape_t *shape = (shape_t *) zhashx_lookup (self->flows.shapes, workflow.definition);
    char error [XXL_FLOW_ERROR_MAX];
    xxl_flow_t *flow = shape? NULL: xxl_flow_new (workflow.definition,
                                                  strlen (workflow.definition), NULL, NULL,
                                                  error, sizeof error);
    if (!shape && !flow) {
        *code = XXL_CONFLICT;
        snprintf (why, whylen, "workflow %" PRId64 ": its stored definition does not parse (%s):"
                  " replace it (WORKFLOW_UPDATE)", workflow_id, error);
        xxl_workflow_free (&workflow);
        return 0;
    }
    xxl_workflow_run_t run = { .workflow_id = workflow_id, .status = "RUNNING",
                               .param = (char *) (param? param: ""),
                               .definition = workflow.definition,
                               .trigger_type = (char *) trigger_type,
                               .trigger_time = engine_now () };
    int64_t run_id = xxl_store_workflow_run_add (self->store, &run);
    if (run_id > 0 && shape)
        s_graph_hold (self, run_id, shape);
    else
    if (run_id > 0)
        s_graph_keep (self, run_id, workflow.definition, flow);
    else
        xxl_flow_destroy (&flow);
    xxl_workflow_free (&workflow);
    if (run_id <= 0 || s_advance (self, run_id) < 0) {
        *code = XXL_FAILURE;
        snprintf (why, whylen, "%s", xxl_store_error (self->store));
        return 0;
    }
    self->flows.any_running = true;
    *code = XXL_OK;
    return run_id;
}

//  Kills a node's log row: finished now as killed (its result, should it
//  come, changes nothing), and its agent told to stop it
static void
s_kill_row (server_t *self, int64_t log_id, int64_t run_id)
{
    xxl_log_t log;
    if (xxl_store_log_load (self->store, log_id, &log))
        return;
    char text [96];
    snprintf (text, sizeof text, "killed: its workflow run %" PRId64 " was killed", run_id);
    int64_t now = engine_now ();
    int ended;
    if (log.trigger_code == 0 && !*log.executor_address)
        ended = xxl_store_log_fail_unsent (self->store, log_id, XXL_CODE_FAIL, text);
    else
        ended = xxl_store_log_handle_done (self->store, log_id, now, XXL_CODE_FAIL, text) == 0;
    if (*log.executor_address)
        engine_kill_send (self, log.executor_address, log_id, log.job_id, NULL, text);
    if (ended > 0)
        engine_run_ended_job (self, log_id, log.job_id, XXL_END_RESULT, XXL_CODE_FAIL, now);
    xxl_log_free (&log);
}

//  The node states as WORKFLOW_RUN_SHOW gives them and WORKFLOW_RUN_RETRY
//  judges them: the stored ones (s_state_load) with the skips the rules
//  derive from them (never stored).  A running run's skips are decided
//  already (every transaction leaves it settled): only they are applied;
//  an ended run is stepped whole; a killed one is as s_state_load left it
static void
s_states_derive (state_t *state)
{
    int nready = 0, nskipped = 0;
    if (streq (state->run.status, "RUNNING")) {
        size_t size = (size_t) xxl_flow_nodes (state->flow) * sizeof *state->states;
        xxl_flow_state_t *copy = (xxl_flow_state_t *) malloc (size);
        assert (copy);
        memcpy (copy, state->states, size);
        xxl_flow_step (state->flow, copy, state->ready, &nready, state->skipped, &nskipped);
        for (int i = 0; i < nskipped; i++)
            state->states [state->skipped [i]] = XXL_FLOW_SKIPPED;
        free (copy);
    }
    else
    if (strneq (state->run.status, "KILLED"))
        xxl_flow_step (state->flow, state->states, state->ready, &nready, state->skipped,
                       &nskipped);
}

int
engine_flow_kill (server_t *self, int64_t run_id, char *why, size_t whylen)
{
    state_t state;
    int rc = s_state_load (self, run_id, &state, why, whylen);
    if (rc)
        return rc < 0? XXL_FAILURE: XXL_NOT_FOUND;
    if (strneq (state.run.status, "RUNNING")) {
        snprintf (why, whylen, "workflow run %" PRId64 " has ended (%s): nothing to kill",
                  run_id, state.run.status);
        s_state_free (&state);
        return XXL_CONFLICT;
    }
    int nodes = xxl_flow_nodes (state.flow);
    int *running = (int *) malloc ((size_t) nodes * sizeof (int));
    assert (running);
    int nrunning = 0;
    xxl_flow_kill (state.flow, state.states, running, &nrunning);
    //  The killed list: the nodes that were running
    size_t size = 1;
    for (int i = 0; i < nrunning; i++)
        size += strlen (xxl_flow_id (state.flow, running [i])) + 1;
    char *killed = (char *) calloc (1, size);
    assert (killed);
    for (int i = 0; i < nrunning; i++) {
        if (i)
            strcat (killed, ",");
        strcat (killed, xxl_flow_id (state.flow, running [i]));
    }
    int code = XXL_OK;
    //  The run is KILLED before its rows end: their ends decide nothing
    if (xxl_store_workflow_run_set (self->store, run_id, "KILLED", engine_now (), killed) < 0) {
        snprintf (why, whylen, "%s", xxl_store_error (self->store));
        code = XXL_FAILURE;
    }
    else {
        s_graph_drop (self, run_id);
        //  Each row of a running start (a node waiting for its retry has
        //  none running)
        for (int i = 0; i < nrunning; i++) {
            int first = state.row_of [running [i]];
            if (first < 0 || state.retry_at [running [i]] > 0)
                continue;
            for (size_t r = (size_t) first; r < state.row_count
                 && streq (state.rows [r].node, state.rows [first].node)
                 && state.rows [r].attempt == state.rows [first].attempt; r++)
                if (s_row_state (&state.rows [r]) == XXL_FLOW_RUNNING)
                    s_kill_row (self, state.rows [r].log_id, run_id);
        }
    }
    free (killed);
    free (running);
    s_state_free (&state);
    return code;
}

int
engine_flow_retry (server_t *self, int64_t run_id, const char *node, char *why, size_t whylen)
{
    state_t state;
    int rc = s_state_load (self, run_id, &state, why, whylen);
    if (rc)
        return rc < 0? XXL_FAILURE: XXL_NOT_FOUND;
    int index = xxl_flow_find (state.flow, node);
    if (index < 0) {
        char shown [XXL_FLOW_ID_MAX + 1];
        snprintf (why, whylen, "workflow run %" PRId64 " has no node \"%s\"", run_id,
                  xxl_printable (node, shown, sizeof shown));
        s_state_free (&state);
        return XXL_NOT_FOUND;
    }
    int nodes = xxl_flow_nodes (state.flow);
    int *reset = (int *) malloc ((size_t) nodes * sizeof (int));
    assert (reset);
    int nreset = 0;
    int code = XXL_OK;
    //  (judged on the states WORKFLOW_RUN_SHOW shows: a skipped node is
    //  refused as SKIPPED, not as the WAITING it is stored as)
    s_states_derive (&state);
    if (xxl_flow_retry (state.flow, state.states, index, reset, &nreset, why, whylen))
        code = XXL_CONFLICT;
    else
    if (xxl_store_workflow_run_set (self->store, run_id, "RUNNING", 0, NULL) < 0
    ||  s_start (self, &state, index, s_next_attempt (&state, index))) {
        snprintf (why, whylen, "%s", xxl_store_error (self->store));
        code = XXL_FAILURE;
    }
    free (reset);
    s_state_free (&state);
    if (code == XXL_OK && s_advance (self, run_id) < 0) {
        snprintf (why, whylen, "%s", xxl_store_error (self->store));
        code = XXL_FAILURE;
    }
    return code;
}

int
engine_flow_run_encode (server_t *self, xxl_enc_t *enc, int64_t run_id)
{
    state_t state;
    char why [XXL_FLOW_ERROR_MAX];
    int rc = s_state_load (self, run_id, &state, why, sizeof why);
    if (rc)
        return rc < 0? -1: 0;
    xxl_enc_map_begin (enc);
    xxl_enc_kint (enc, "id", state.run.id);
    xxl_enc_kint (enc, "workflowId", state.run.workflow_id);
    xxl_enc_kstr (enc, "status", state.run.status);
    xxl_enc_kstr (enc, "param", state.run.param);
    xxl_enc_kstr (enc, "triggerType", state.run.trigger_type);
    xxl_enc_kint (enc, "triggerTime", state.run.trigger_time);
    xxl_enc_kint (enc, "endTime", state.run.end_time);
    s_states_derive (&state);
    xxl_enc_key (enc, "nodes");
    xxl_enc_array_begin (enc);
    for (int i = 0; i < xxl_flow_nodes (state.flow); i++) {
        int row = state.row_of [i];
        xxl_enc_map_begin (enc);
        xxl_enc_kstr (enc, "id", xxl_flow_id (state.flow, i));
        xxl_enc_kstr (enc, "status", xxl_flow_state_name (state.states [i]));
        xxl_enc_key (enc, "logId");
        if (row >= 0)
            xxl_enc_int (enc, state.rows [row].log_id);
        else
            xxl_enc_nil (enc);
        xxl_enc_kint (enc, "jobId", xxl_flow_job (state.flow, i));
        xxl_enc_kint (enc, "attempt", row >= 0? state.rows [row].attempt: 0);
        xxl_enc_map_end (enc);
    }
    xxl_enc_array_end (enc);
    xxl_enc_map_end (enc);
    s_state_free (&state);
    return 1;
}
