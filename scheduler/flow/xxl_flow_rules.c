/*  xxl_flow_rules.c -- a workflow run's decisions (xxl_flow_rules.h).

    Every function reads the graph and the states array only; what it
    decides it writes into the states array and lists for the caller.
*/

#include "xxl_flow_rules.h"
#include "xxl_flow_int.h"

#include <assert.h>
#include <string.h>

static const char *const s_state_names [] = {
    "WAITING", "RUNNING", "SUCCESS", "FAILURE", "SKIPPED", "KILLED"
};
static const char *const s_run_names [] = { "RUNNING", "SUCCESS", "FAILURE", "KILLED" };

const char *
xxl_flow_state_name (xxl_flow_state_t state)
{
    assert (state >= XXL_FLOW_WAITING && state <= XXL_FLOW_KILLED);
    return s_state_names [state];
}

int
xxl_flow_state_parse (const char *name)
{
    for (int i = 0; name && i <= XXL_FLOW_KILLED; i++)
        if (strcmp (name, s_state_names [i]) == 0)
            return i;
    return -1;
}

const char *
xxl_flow_run_name (xxl_flow_run_t run)
{
    assert (run >= XXL_FLOW_RUN_RUNNING && run <= XXL_FLOW_RUN_KILLED);
    return s_run_names [run];
}

int
xxl_flow_run_parse (const char *name)
{
    for (int i = 0; name && i <= XXL_FLOW_RUN_KILLED; i++)
        if (strcmp (name, s_run_names [i]) == 0)
            return i;
    return -1;
}

bool
xxl_flow_final (xxl_flow_state_t state)
{
    return state == XXL_FLOW_SUCCESS || state == XXL_FLOW_FAILURE
        || state == XXL_FLOW_SKIPPED || state == XXL_FLOW_KILLED;
}

bool
xxl_flow_holds (xxl_flow_on_t on, xxl_flow_state_t parent)
{
    if (parent == XXL_FLOW_SUCCESS)
        return on == XXL_FLOW_ON_SUCCESS || on == XXL_FLOW_ON_ALWAYS;
    if (parent == XXL_FLOW_FAILURE)
        return on == XXL_FLOW_ON_FAILURE || on == XXL_FLOW_ON_ALWAYS;
    return false;
}

//  Decides a WAITING node whose parents may all be final: 1 made RUNNING,
//  2 made SKIPPED, 0 not decided (a parent is not final, or not WAITING)
static int
s_decide (const xxl_flow_t *flow, xxl_flow_state_t *states, int node)
{
    if (states [node] != XXL_FLOW_WAITING)
        return 0;
    int count;
    const int *parents = xxl_flow_parents (flow, node, &count);
    const int *edges = xxl_flow_in_edges (flow, node, &count);
    int held = 0;
    for (int k = 0; k < count; k++) {
        xxl_flow_state_t parent = states [parents [k]];
        if (!xxl_flow_final (parent))
            return 0;
        xxl_flow_on_t on;
        xxl_flow_edge (flow, edges [k], NULL, NULL, &on);
        held += xxl_flow_holds (on, parent);
    }
    bool runs = count == 0
             || (xxl_flow_join (flow, node) == XXL_FLOW_JOIN_ALL? held == count: held > 0);
    states [node] = runs? XXL_FLOW_RUNNING: XXL_FLOW_SKIPPED;
    return runs? 1: 2;
}

//  Whether the run was killed: then nothing of it is decided any more
static bool
s_killed (const xxl_flow_t *flow, const xxl_flow_state_t *states)
{
    for (int i = 0; i < xxl_flow_nodes (flow); i++)
        if (states [i] == XXL_FLOW_KILLED)
            return true;
    return false;
}

int
xxl_flow_step (const xxl_flow_t *flow, xxl_flow_state_t *states,
               int *ready, int *nready, int *skipped, int *nskipped)
{
    assert (flow && states && ready && nready && skipped && nskipped);
    *nready = *nskipped = 0;
    if (s_killed (flow, states))
        return 0;
    const int *order = xxl_flow_order (flow);
    for (int r = 0; r < xxl_flow_nodes (flow); r++) {
        int node = order [r];
        int decided = s_decide (flow, states, node);
        if (decided == 1)
            ready [(*nready)++] = node;
        else
        if (decided == 2)
            skipped [(*nskipped)++] = node;
    }
    return *nready + *nskipped;
}

int
xxl_flow_settle (const xxl_flow_t *flow, xxl_flow_state_t *states, int node,
                 int *ready, int *nready, int *skipped, int *nskipped)
{
    assert (flow && states && ready && nready && skipped && nskipped);
    assert (node >= 0 && node < xxl_flow_nodes (flow));
    *nready = *nskipped = 0;
    if (!xxl_flow_final (states [node]) || s_killed (flow, states))
        return 0;
    //  skipped doubles as the queue of nodes whose children to look at:
    //  each enters it once, as its state leaves WAITING
    for (int next = -1; next < *nskipped; next++) {
        int from = next < 0? node: skipped [next];
        int count;
        const int *children = xxl_flow_children (flow, from, &count);
        for (int k = 0; k < count; k++) {
            int decided = s_decide (flow, states, children [k]);
            if (decided == 1)
                ready [(*nready)++] = children [k];
            else
            if (decided == 2)
                skipped [(*nskipped)++] = children [k];
        }
    }
    return *nready + *nskipped;
}

int
xxl_flow_kill (const xxl_flow_t *flow, xxl_flow_state_t *states, int *running, int *nrunning)
{
    assert (flow && states && running && nrunning);
    int changed = 0;
    *nrunning = 0;
    for (int i = 0; i < xxl_flow_nodes (flow); i++) {
        if (states [i] == XXL_FLOW_RUNNING)
            running [(*nrunning)++] = i;
        if (states [i] == XXL_FLOW_RUNNING || states [i] == XXL_FLOW_WAITING) {
            states [i] = XXL_FLOW_KILLED;
            changed++;
        }
    }
    return changed;
}

int
xxl_flow_retry (const xxl_flow_t *flow, xxl_flow_state_t *states, int node,
                int *reset, int *nreset, char *error, size_t errlen)
{
    assert (flow && states && reset && nreset);
    assert (node >= 0 && node < xxl_flow_nodes (flow));
    *nreset = 0;
    const char *id = xxl_flow_id (flow, node);
    //  A killed run first: its nodes are KILLED, and "only a FAILURE node"
    //  would send the user looking for one, which could not run either
    if (s_killed (flow, states)) {
        flow_error (error, errlen, "the run was killed: its nodes cannot be retried");
        return -1;
    }
    if (states [node] != XXL_FLOW_FAILURE) {
        flow_error (error, errlen, "node %s is %s: only a FAILURE node can be retried", id,
                    xxl_flow_state_name (states [node]));
        return -1;
    }
    int count;
    const int *parents = xxl_flow_parents (flow, node, &count);
    for (int k = 0; k < count; k++)
        if (!xxl_flow_final (states [parents [k]])) {
            flow_error (error, errlen, "node %s cannot run again before its parent %s ends", id,
                        xxl_flow_id (flow, parents [k]));
            return -1;
        }
    states [node] = XXL_FLOW_RUNNING;
    //  reset doubles as the queue: each node enters it once, as it leaves
    //  SKIPPED
    for (int next = -1; next < *nreset; next++) {
        int from = next < 0? node: reset [next];
        const int *children = xxl_flow_children (flow, from, &count);
        for (int k = 0; k < count; k++)
            if (states [children [k]] == XXL_FLOW_SKIPPED) {
                states [children [k]] = XXL_FLOW_WAITING;
                reset [(*nreset)++] = children [k];
            }
    }
    return 0;
}

xxl_flow_run_t
xxl_flow_run_state (const xxl_flow_t *flow, const xxl_flow_state_t *states)
{
    assert (flow && states);
    int n = xxl_flow_nodes (flow);
    bool killed = false, failed = false;
    for (int i = 0; i < n; i++) {
        if (!xxl_flow_final (states [i]))
            return XXL_FLOW_RUN_RUNNING;
        killed |= states [i] == XXL_FLOW_KILLED;
    }
    if (killed)
        return XXL_FLOW_RUN_KILLED;
    for (int i = 0; i < n && !failed; i++) {
        if (states [i] != XXL_FLOW_FAILURE)
            continue;
        int count;
        const int *edges = xxl_flow_out_edges (flow, i, &count);
        bool handled = false;
        for (int k = 0; k < count && !handled; k++) {
            xxl_flow_on_t on;
            xxl_flow_edge (flow, edges [k], NULL, NULL, &on);
            handled = on != XXL_FLOW_ON_SUCCESS;
        }
        failed = !handled;
    }
    return failed? XXL_FLOW_RUN_FAILURE: XXL_FLOW_RUN_SUCCESS;
}
