/*  xxl_flow_rules.h -- a workflow run's decisions as pure functions
    (DESIGN §12, docs/workflows.md "Joins and skips").

    Contract: a graph (xxl_flow.h) and the run's node states in, the
    decisions out, the states array updated in place.  The states array is
    the whole of a run's memory: no hidden state, no store, no clock, no
    allocation, no logging; the same states give the same decisions.  So a
    run is rebuilt after a restart or a takeover from its stored node
    states alone: load them, call xxl_flow_step, act on what it says.
    states has xxl_flow_nodes (flow) entries, node i's at [i]; out arrays
    (ready, skipped, ...) have room for as many.

    A node is final when SUCCESS, FAILURE, SKIPPED or KILLED.  An edge
    P -> N holds when P is SUCCESS and the edge is `success` or `always`,
    or P is FAILURE and it is `failure` or `always`; never when P is
    SKIPPED or KILLED (a skipped node's edges do not hold).  A WAITING node
    is decided once every parent is final: a node without parents, or
    whose join holds (`all`: every edge in holds; `any`: at least one
    does), becomes RUNNING (ready: the caller starts its job); any other
    becomes SKIPPED, and its children are decided in turn.

    The caller MUST make a ready node's log row and store it RUNNING in one
    transaction, and MUST NOT start a node these did not make ready; when
    that transaction fails it reloads the stored states (the node is
    WAITING again and is decided again).  A node's result sets its state
    (handleCode 200: SUCCESS, any other: FAILURE), then xxl_flow_settle.

    xxl_flow_step (flow, states, ready, &nready, skipped, &nskipped)
        Decides every WAITING node whose parents are final, in topological
        order (a skip is seen by the children after it in the same pass).
        ready and skipped list the nodes moved, in topological order.
        O(nodes + edges).  After it, no WAITING node has only final
        parents.  Returns nready + nskipped.  A run with a KILLED node
        decides nothing (the kill is its end; a WAITING node left by a
        torn write never starts).
    xxl_flow_settle (flow, states, node, ready, &nready, skipped, &nskipped)
        The same, after node became final: decides only the children of
        node and, through skips, theirs.  Cost: the edges out of the nodes
        it looks at and the edges into their children, and a look at each
        node's state (a killed run decides nothing).  Gives the same
        moves as xxl_flow_step would (order may differ) when the states
        were settled before node's change.
    xxl_flow_kill (flow, states, running, &nrunning)
        Kills the run: every RUNNING and WAITING node becomes KILLED (the
        rest never start); running lists the nodes that were RUNNING (the
        caller kills their log rows, and ignores their results).  Returns
        the nodes changed; 0 when the run had ended (nothing to kill).
    xxl_flow_retry (flow, states, node, reset, &nreset, error, errlen)
        Runs a FAILURE node again and continues the run: node becomes
        RUNNING (the caller makes its new log row), and the SKIPPED nodes
        reached from it through SKIPPED nodes only (whose skip may have
        come from node's failure) become WAITING again, listed in reset;
        nodes that ran keep their state and never run again.  -1 with the
        reason (409), the first that applies of: the run was killed (any
        node of it), node is not FAILURE, a parent of node is not final.
    xxl_flow_run_state (flow, states)
        RUNNING while a node is WAITING or RUNNING; else KILLED when a node
        is KILLED; else FAILURE when a FAILURE node has no `failure` or
        `always` edge out; else SUCCESS.
*/

#ifndef XXL_FLOW_RULES_H_INCLUDED
#define XXL_FLOW_RULES_H_INCLUDED

#include "xxl_flow.h"

//  A node's state in a run (the stored text is its name)
typedef enum {
    XXL_FLOW_WAITING,
    XXL_FLOW_RUNNING,
    XXL_FLOW_SUCCESS,
    XXL_FLOW_FAILURE,
    XXL_FLOW_SKIPPED,
    XXL_FLOW_KILLED
} xxl_flow_state_t;

//  A run's status
typedef enum {
    XXL_FLOW_RUN_RUNNING,
    XXL_FLOW_RUN_SUCCESS,
    XXL_FLOW_RUN_FAILURE,
    XXL_FLOW_RUN_KILLED
} xxl_flow_run_t;

//  "WAITING", "RUNNING", "SUCCESS", "FAILURE", "SKIPPED", "KILLED"
const char *xxl_flow_state_name (xxl_flow_state_t state);
//  The state of that name, or -1
int xxl_flow_state_parse (const char *name);
//  "RUNNING", "SUCCESS", "FAILURE", "KILLED"
const char *xxl_flow_run_name (xxl_flow_run_t run);
//  The run status of that name, or -1
int xxl_flow_run_parse (const char *name);
bool xxl_flow_final (xxl_flow_state_t state);
//  Whether an edge `on` holds from a parent in state parent
bool xxl_flow_holds (xxl_flow_on_t on, xxl_flow_state_t parent);

int xxl_flow_step (const xxl_flow_t *flow, xxl_flow_state_t *states,
                   int *ready, int *nready, int *skipped, int *nskipped);
int xxl_flow_settle (const xxl_flow_t *flow, xxl_flow_state_t *states, int node,
                     int *ready, int *nready, int *skipped, int *nskipped);
int xxl_flow_kill (const xxl_flow_t *flow, xxl_flow_state_t *states,
                   int *running, int *nrunning);
int xxl_flow_retry (const xxl_flow_t *flow, xxl_flow_state_t *states, int node,
                    int *reset, int *nreset, char *error, size_t errlen);
xxl_flow_run_t xxl_flow_run_state (const xxl_flow_t *flow, const xxl_flow_state_t *states);

#endif
