/*  xxl_flow.h -- a workflow's definition: a DAG of jobs (DESIGN §12,
    docs/workflows.md).

    Contract: owns one workflow's graph, parsed from its JSON definition
    and validated whole; immutable once made, so one graph may be read by
    any number of runs (and threads) at once.  A leaf module: it calls no
    store, no engine, no clock, no logging; jobs are checked through the
    caller's callback.  The run rules over a graph are in
    xxl_flow_rules.h.

    The definition (the REST body, `xxl-ctl workflow add --file`):

        {"nodes": [{"id": "extract", "job": 12, "param": "${flow.param}"},
                   {"id": "report",  "job": 14, "join": "any"}],
         "edges": [{"from": "extract", "to": "report", "on": "success"}]}

      - nodes: array of 1 to XXL_FLOW_NODES_MAX objects with exactly the
        keys id (string, 1 to XXL_FLOW_ID_MAX bytes of ASCII letters,
        digits, '_' and '-', not "flow"; case matters; unique), job
        (integer >= 1: a job that exists), param (optional string <=
        XXL_FLOW_PARAM_MAX bytes: a template, below; absent, the node runs
        with its job's own param, as a trigger without one), join
        (optional "all", the default, or "any").
      - edges: optional array of up to XXL_FLOW_EDGES_MAX objects with
        exactly the keys from, to (node ids) and on (optional "success",
        the default, "failure" or "always"); at most one edge per
        (from, to) pair; no cycle (an edge to itself is one).
      - No other key anywhere; the whole text is at most XXL_FLOW_TEXT_MAX
        bytes of UTF-8 JSON with no repeated key in an object.

    Param templates: `${flow.param}` (the run's param, "" if none),
    `${flow.runId}` (decimal), `${flow.time}` (the run's trigger time,
    epoch ms, decimal), `${NODE.msg}` (NODE's handleMsg; NODE must be an
    ancestor of the node, "" when NODE was skipped or gave no message).
    In a run of dollars right before `{`, each `$$` writes one `$` and an
    odd last `$` opens a variable (`$${x}` is the text `${x}`, `$$${x}`
    is `$` then x); any other `$` is itself (`$$`, `$5`).  Values go in
    verbatim and are not scanned again.  Anything else inside `${...}` is
    refused when the definition is made, never at run time.

    xxl_flow_new (text, size, job_exists, arg, error, errlen)
        The graph of a definition, or NULL with the reason in error (a
        text the api returns as 400; one sentence, no trailing newline,
        cut to errlen; XXL_FLOW_ERROR_MAX is enough for any).  job_exists
        (arg, id) says whether a job exists; NULL checks no job (reading
        back a stored definition).  The checks, in this order, first
        failure wins: size, JSON, the top object, node and edge counts,
        each node in order (`nodes[I]: ...` until its id is read, then
        `node "ID": ...`), duplicate ids, each edge in order (`edges[I]:
        ...`: unknown node, bad `on`), a second edge of a pair, cycles
        ("cycle: a -> b -> a", written from the cycle's node defined
        first), templates (unknown variable, unknown node, not an
        ancestor), jobs (asked once a distinct job, only when all else
        holds; the first node in order with an unknown job is named).
        User text in an error is cut to 40 bytes, bytes other than
        printable ASCII shown as '?'.  NULL with "out
        of memory" when memory runs out.
    xxl_flow_json (self)
        The canonical definition: compact JSON, nodes and edges in their
        order, keys in the order id, job, param (only when given), join;
        from, to, on; every default written out.  Parsing it gives the
        same graph and the same text.  Caller frees; NULL on no memory.
    Nodes are numbered 0..nodes-1 in definition order, edges likewise.
    Every accessor takes a valid number (assert).
    xxl_flow_order (self)
        The nodes in topological order (parents before children; among
        nodes ready at once, the one defined first goes first); rank is a
        node's place in it.
    xxl_flow_parents / _children (self, node, &count)
        The nodes with an edge into / out of node, in edge order; the
        parallel xxl_flow_in_edges / _out_edges give those edges.
    xxl_flow_is_ancestor (self, a, b)
        Whether a path of edges leads from a to b (a != b).  O(1).
    xxl_flow_render (self, node, vars, error, errlen)
        The node's param with its variables filled in (a new string the
        caller frees), or NULL and the reason: "param over 65536 bytes
        after substitution" (the run fails the node), "out of memory".
        A node without a param renders as NULL with error "" (run its
        job's own param).
*/

#ifndef XXL_FLOW_H_INCLUDED
#define XXL_FLOW_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XXL_FLOW_NODES_MAX  1000            //  nodes a workflow may have
#define XXL_FLOW_EDGES_MAX  10000           //  edges a workflow may have
#define XXL_FLOW_ID_MAX     64              //  bytes of a node id
#define XXL_FLOW_PARAM_MAX  65536           //  bytes of a param, template or rendered
#define XXL_FLOW_TEXT_MAX   (1024 * 1024)   //  bytes of a definition's JSON
#define XXL_FLOW_ERROR_MAX  512             //  an error buffer that holds any error

typedef enum {
    XXL_FLOW_ON_SUCCESS,                    //  the parent succeeded
    XXL_FLOW_ON_FAILURE,                    //  the parent failed
    XXL_FLOW_ON_ALWAYS                      //  the parent ran, whatever it gave
} xxl_flow_on_t;

typedef enum {
    XXL_FLOW_JOIN_ALL,                      //  every edge in holds
    XXL_FLOW_JOIN_ANY                       //  at least one edge in holds
} xxl_flow_join_t;

typedef struct _xxl_flow_t xxl_flow_t;

//  Whether job id exists (the caller's store)
typedef bool (xxl_flow_job_exists_fn) (void *arg, int64_t id);

//  What a run gives a template
typedef struct {
    const char *param;                      //  the run's param; NULL: ""
    int64_t run_id;                         //  ${flow.runId}
    int64_t time_ms;                        //  ${flow.time}, epoch ms
    //  node's handleMsg (an ancestor of the node rendered); NULL: ""
    const char *(*msg) (void *arg, int node);
    void *arg;
} xxl_flow_vars_t;

xxl_flow_t *xxl_flow_new (const char *text, size_t size, xxl_flow_job_exists_fn *job_exists,
                          void *arg, char *error, size_t errlen);
void xxl_flow_destroy (xxl_flow_t **self_p);
char *xxl_flow_json (const xxl_flow_t *self);

int xxl_flow_nodes (const xxl_flow_t *self);
int xxl_flow_edges (const xxl_flow_t *self);
//  The node of that id, or -1
int xxl_flow_find (const xxl_flow_t *self, const char *id);
const char *xxl_flow_id (const xxl_flow_t *self, int node);
int64_t xxl_flow_job (const xxl_flow_t *self, int node);
//  The param template as given; NULL when the node has none
const char *xxl_flow_param (const xxl_flow_t *self, int node);
xxl_flow_join_t xxl_flow_join (const xxl_flow_t *self, int node);
//  Whether some node runs job
bool xxl_flow_uses_job (const xxl_flow_t *self, int64_t job);
void xxl_flow_edge (const xxl_flow_t *self, int edge, int *from, int *to, xxl_flow_on_t *on);

const int *xxl_flow_order (const xxl_flow_t *self);
int xxl_flow_rank (const xxl_flow_t *self, int node);
const int *xxl_flow_parents (const xxl_flow_t *self, int node, int *count);
const int *xxl_flow_in_edges (const xxl_flow_t *self, int node, int *count);
const int *xxl_flow_children (const xxl_flow_t *self, int node, int *count);
const int *xxl_flow_out_edges (const xxl_flow_t *self, int node, int *count);
bool xxl_flow_is_ancestor (const xxl_flow_t *self, int a, int b);

char *xxl_flow_render (const xxl_flow_t *self, int node, const xxl_flow_vars_t *vars,
                       char *error, size_t errlen);

//  "success", "failure", "always"; "all", "any"
const char *xxl_flow_on_name (xxl_flow_on_t on);
const char *xxl_flow_join_name (xxl_flow_join_t join);

#endif
