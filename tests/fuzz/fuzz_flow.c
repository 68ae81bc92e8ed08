/*  fuzz_flow.c -- libFuzzer target: a workflow's definition
    (scheduler/flow/xxl_flow.h) and a run over what it accepts
    (xxl_flow_rules.h).

    Input: the definition's text.  A refusal must be one line of
    printable ASCII shorter than XXL_FLOW_ERROR_MAX.  An accepted graph
    must: write canonical JSON that parses to the same text; have a
    topological order that is a permutation with every parent first;
    render every param within XXL_FLOW_PARAM_MAX; and run to an end (each
    node started at most once, never before its parents are final, every
    node final at the end, settle agreeing with a full step).  See
    docs/faults.md, "Fuzzing".
*/

#include "xxl_flow.h"
#include "xxl_flow_rules.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_ASSERT(cond) do { if (!(cond)) { \
    fprintf (stderr, "fuzz_flow: %s:%d: %s\n", __FILE__, __LINE__, #cond); abort (); } \
} while (0)

static bool
s_job_exists (void *arg, int64_t id)
{
    (void) arg;
    return id % 7 != 0;
}

static const char *
s_msg (void *arg, int node)
{
    (void) arg;
    return node % 2? "msg ${flow.param} $${x}": NULL;
}

static void
s_run (const xxl_flow_t *flow, uint32_t seed)
{
    static xxl_flow_state_t states [XXL_FLOW_NODES_MAX], copy [XXL_FLOW_NODES_MAX];
    static int ready [XXL_FLOW_NODES_MAX], skipped [XXL_FLOW_NODES_MAX];
    static int ready2 [XXL_FLOW_NODES_MAX], skipped2 [XXL_FLOW_NODES_MAX];
    static int starts [XXL_FLOW_NODES_MAX];
    int n = xxl_flow_nodes (flow), nready, nskipped, nready2, nskipped2;
    for (int i = 0; i < n; i++)
        states [i] = XXL_FLOW_WAITING, starts [i] = 0;
    xxl_flow_step (flow, states, ready, &nready, skipped, &nskipped);
    for (;;) {
        for (int k = 0; k < nready; k++) {
            int count;
            const int *parents = xxl_flow_parents (flow, ready [k], &count);
            for (int p = 0; p < count; p++)
                S_ASSERT (xxl_flow_final (states [parents [p]]));
            S_ASSERT (starts [ready [k]]++ == 0);
        }
        int pick = -1;
        for (int i = 0; i < n && pick < 0; i++)
            if (states [(i + seed) % n] == XXL_FLOW_RUNNING)
                pick = (i + seed) % n;
        if (pick < 0)
            break;
        seed = seed * 1103515245 + 12345;
        states [pick] = (seed >> 16) % 3? XXL_FLOW_SUCCESS: XXL_FLOW_FAILURE;
        memcpy (copy, states, sizeof (xxl_flow_state_t) * n);
        xxl_flow_settle (flow, states, pick, ready, &nready, skipped, &nskipped);
        xxl_flow_step (flow, copy, ready2, &nready2, skipped2, &nskipped2);
        S_ASSERT (nready == nready2 && nskipped == nskipped2);
        S_ASSERT (memcmp (states, copy, sizeof (xxl_flow_state_t) * n) == 0);
    }
    for (int i = 0; i < n; i++)
        S_ASSERT (xxl_flow_final (states [i]));
    S_ASSERT (xxl_flow_run_state (flow, states) != XXL_FLOW_RUN_RUNNING);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char error [XXL_FLOW_ERROR_MAX];
    xxl_flow_t *flow = xxl_flow_new ((const char *) data, size, s_job_exists, NULL,
                                     error, sizeof error);
    if (!flow) {
        size_t length = strlen (error);
        S_ASSERT (length > 0 && length < sizeof error);
        for (size_t i = 0; i < length; i++)
            S_ASSERT (error [i] >= 0x20 && error [i] < 0x7f);
        return 0;
    }
    char *json = xxl_flow_json (flow);
    S_ASSERT (json);
    xxl_flow_t *again = xxl_flow_new (json, strlen (json), NULL, NULL, error, sizeof error);
    S_ASSERT (again);
    char *json2 = xxl_flow_json (again);
    S_ASSERT (json2 && strcmp (json, json2) == 0);
    free (json2);
    xxl_flow_destroy (&again);
    free (json);

    int n = xxl_flow_nodes (flow);
    const int *order = xxl_flow_order (flow);
    static char placed [XXL_FLOW_NODES_MAX];
    memset (placed, 0, sizeof placed);
    for (int r = 0; r < n; r++) {
        int node = order [r], count;
        S_ASSERT (node >= 0 && node < n && !placed [node]);
        S_ASSERT (xxl_flow_rank (flow, node) == r);
        S_ASSERT (xxl_flow_find (flow, xxl_flow_id (flow, node)) == node);
        const int *parents = xxl_flow_parents (flow, node, &count);
        for (int p = 0; p < count; p++)
            S_ASSERT (placed [parents [p]] && xxl_flow_is_ancestor (flow, parents [p], node));
        placed [node] = 1;
        xxl_flow_vars_t vars = { "P", r, 1700000000000LL, s_msg, NULL };
        char *text = xxl_flow_render (flow, node, &vars, error, sizeof error);
        S_ASSERT (text? strlen (text) <= XXL_FLOW_PARAM_MAX: xxl_flow_param (flow, node) == NULL
                                                            || *error);
        free (text);
    }
    s_run (flow, size);
    xxl_flow_destroy (&flow);
    return 0;
}
