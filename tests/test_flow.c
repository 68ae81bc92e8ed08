/*  test_flow.c -- workflows: the definition (scheduler/flow/xxl_flow.h),
    its param templates, and a run's decisions (xxl_flow_rules.h).

    Every validation error once (and the allowed case), topological order,
    canonical JSON, diamonds with `all` and `any`, failure branches,
    `always` edges, skips through chains, wide (200 joined by one), deep
    (100 in a chain), 1,000 nodes, retry and kill, substitution; then a
    property test: random DAGs with random outcomes in random orders,
    checked against an oracle that computes each node's end from the
    rules alone.
*/

#include "xxl_test.h"
#include "xxl_flow.h"
#include "xxl_flow_rules.h"

#include <assert.h>
#include <stdint.h>
#include <time.h>

static bool
s_job_exists (void *arg, int64_t id)
{
    int *asked = arg;
    if (asked)
        (*asked)++;
    return id != 404 && id < 100000;
}

static xxl_flow_t *
s_make (const char *json)
{
    char error [XXL_FLOW_ERROR_MAX];
    xxl_flow_t *flow = xxl_flow_new (json, strlen (json), s_job_exists, NULL, error, sizeof error);
    if (!flow)
        printf ("unexpected error: %s\n  in %.200s\n", error, json);
    return flow;
}

//  The error of a definition that must be refused ("" if it was not)
static const char *
s_refused (const char *json)
{
    static char error [XXL_FLOW_ERROR_MAX];
    xxl_flow_t *flow = xxl_flow_new (json, strlen (json), s_job_exists, NULL, error, sizeof error);
    if (flow) {
        xxl_flow_destroy (&flow);
        return "";
    }
    return error;
}

static double
s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

//  --- a growing text -----------------------------------------------------

typedef struct {
    char *data;
    size_t size, room;
} text_t;

static void __attribute__ ((format (printf, 2, 3)))
s_add (text_t *text, const char *format, ...)
{
    va_list args;
    va_start (args, format);
    char piece [256];
    int size = vsnprintf (piece, sizeof piece, format, args);
    va_end (args);
    if (text->size + size + 1 > text->room) {
        text->room = (text->size + size + 1) * 2;
        text->data = realloc (text->data, text->room);
        if (!text->data)
            abort ();
    }
    memcpy (text->data + text->size, piece, size + 1);
    text->size += size;
}

//  --- validation -----------------------------------------------------------

static void
s_test_validation (void)
{
    //  the allowed case first: DESIGN §12's example
    const char *design =
        "{\"nodes\": [{\"id\": \"extract\", \"job\": 12, \"param\": \"${flow.param}\"},"
        "            {\"id\": \"clean\",   \"job\": 13, \"param\": \"${extract.msg}\"},"
        "            {\"id\": \"report\",  \"job\": 14, \"join\": \"any\"},"
        "            {\"id\": \"page\",    \"job\": 15}],"
        " \"edges\": [{\"from\": \"extract\", \"to\": \"clean\"},"
        "            {\"from\": \"clean\", \"to\": \"report\", \"on\": \"success\"},"
        "            {\"from\": \"extract\", \"to\": \"page\", \"on\": \"failure\"}]}";
    XXL_CHECK_STR (s_refused (design), "");

    static const struct { const char *json, *error; } cases [] = {
        { "{\"nodes\": [", "invalid JSON: " },
        { "{\"nodes\": [{\"id\": \"a\", \"job\": 1}]} x", "invalid JSON: " },
        { "{\"nodes\": [{\"id\": \"a\", \"id\": \"b\", \"job\": 1}]}", "duplicate object key" },
        { "[1]", "a workflow is an object {\"nodes\": [...], \"edges\": [...]}" },
        { "{\"nodes\": [{\"id\": \"a\", \"job\": 1}], \"name\": 1}", "workflow: unknown key \"name\"" },
        { "{}", "missing \"nodes\"" },
        { "{\"nodes\": {}}", "\"nodes\" must be an array" },
        { "{\"nodes\": [{\"id\": \"a\", \"job\": 1}], \"edges\": 3}", "\"edges\" must be an array" },
        { "{\"nodes\": []}", "no nodes: a workflow has at least one" },
        { "{\"nodes\": [3]}", "nodes[0]: not an object" },
        { "{\"nodes\": [{\"id\": \"a\", \"job\": 1, \"joni\": \"any\"}]}", "nodes[0]: unknown key \"joni\"" },
        { "{\"nodes\": [{\"job\": 1}]}", "nodes[0]: missing \"id\"" },
        { "{\"nodes\": [{\"id\": 7, \"job\": 1}]}", "nodes[0]: \"id\" must be a string" },
        { "{\"nodes\": [{\"id\": \"a b\", \"job\": 1}]}",
          "nodes[0]: id \"a b\" must be 1 to 64 letters, digits, '_' or '-'" },
        { "{\"nodes\": [{\"id\": \"\", \"job\": 1}]}", "nodes[0]: id \"\" must be 1 to 64" },
        { "{\"nodes\": [{\"id\": \"a.b\", \"job\": 1}]}", "nodes[0]: id \"a.b\" must be" },
        { "{\"nodes\": [{\"id\": \"\\u00e9t\\u00e9\", \"job\": 1}]}", "nodes[0]: id \"??t??\" must be" },
        { "{\"nodes\": [{\"id\": \"a12345678901234567890123456789012345678901234567890123456789012345\", \"job\": 1}]}",
          "nodes[0]: id \"a123456789012345678901234567890123456789...\" must be 1 to 64" },
        { "{\"nodes\": [{\"id\": \"flow\", \"job\": 1}]}", "nodes[0]: id \"flow\" is reserved" },
        { "{\"nodes\": [{\"id\": \"a\"}]}", "node \"a\": missing \"job\"" },
        { "{\"nodes\": [{\"id\": \"a\", \"job\": 0}]}", "node \"a\": \"job\" must be a job id (an integer >= 1)" },
        { "{\"nodes\": [{\"id\": \"a\", \"job\": \"12\"}]}", "node \"a\": \"job\" must be a job id" },
        { "{\"nodes\": [{\"id\": \"a\", \"job\": 1.5}]}", "node \"a\": \"job\" must be a job id" },
        { "{\"nodes\": [{\"id\": \"a\", \"job\": 1, \"param\": 5}]}", "node \"a\": \"param\" must be a string" },
        { "{\"nodes\": [{\"id\": \"a\", \"job\": 1, \"join\": \"most\"}]}",
          "node \"a\": \"join\" must be \"all\" or \"any\"" },
        { "{\"nodes\": [{\"id\": \"a\", \"job\": 1, \"join\": null}]}", "node \"a\": \"join\" must be" },
        { "{\"nodes\": [{\"id\": \"a\", \"job\": 1}, {\"id\": \"b\", \"job\": 2}, {\"id\": \"a\", \"job\": 3}]}",
          "nodes[2]: duplicate node id \"a\" (as nodes[0])" },
        { "{\"nodes\": [{\"id\": \"a\", \"job\": 1}], \"edges\": [\"a\"]}", "edges[0]: not an object" },
        { "{\"nodes\": [{\"id\": \"a\", \"job\": 1}], \"edges\": [{\"from\": \"a\", \"to\": \"a\", \"when\": 1}]}",
          "edges[0]: unknown key \"when\"" },
        { "{\"nodes\": [{\"id\": \"a\", \"job\": 1}], \"edges\": [{\"to\": \"a\"}]}", "edges[0]: missing \"from\"" },
        { "{\"nodes\": [{\"id\": \"a\", \"job\": 1}], \"edges\": [{\"from\": \"a\"}]}", "edges[0]: missing \"to\"" },
        { "{\"nodes\": [{\"id\": \"a\", \"job\": 1}], \"edges\": [{\"from\": 1, \"to\": \"a\"}]}",
          "edges[0]: \"from\" must be a node id" },
        { "{\"nodes\": [{\"id\": \"a\", \"job\": 1}], \"edges\": [{\"from\": \"a\", \"to\": \"clen\"}]}",
          "edges[0]: unknown node \"clen\"" },
        { "{\"nodes\": [{\"id\": \"a\", \"job\": 1}, {\"id\": \"b\", \"job\": 1}], \"edges\": [{\"from\": \"a\", \"to\": \"b\", \"on\": \"fail\"}]}",
          "edges[0]: \"on\" must be \"success\", \"failure\" or \"always\"" },
        { "{\"nodes\": [{\"id\": \"a\", \"job\": 1}, {\"id\": \"b\", \"job\": 1}], \"edges\": ["
          "{\"from\": \"a\", \"to\": \"b\"}, {\"from\": \"b\", \"to\": \"a\", \"on\": \"always\"}, {\"from\": \"a\", \"to\": \"b\", \"on\": \"failure\"}]}",
          "edges[2]: a second edge a -> b" },
        { "{\"nodes\": [{\"id\": \"a\", \"job\": 1}], \"edges\": [{\"from\": \"a\", \"to\": \"a\"}]}", "cycle: a -> a" },
        { "{\"nodes\": [{\"id\": \"x\", \"job\": 1}, {\"id\": \"c\", \"job\": 1}, {\"id\": \"a\", \"job\": 1}, {\"id\": \"b\", \"job\": 1}, {\"id\": \"z\", \"job\": 1}],"
          " \"edges\": [{\"from\": \"x\", \"to\": \"a\"}, {\"from\": \"a\", \"to\": \"b\"}, {\"from\": \"b\", \"to\": \"c\"},"
          " {\"from\": \"c\", \"to\": \"a\"}, {\"from\": \"c\", \"to\": \"z\"}]}",
          "cycle: c -> a -> b -> c" },
        { "{\"nodes\": [{\"id\": \"a\", \"job\": 1, \"param\": \"${flow.foo}\"}]}",
          "node \"a\": param: unknown variable ${flow.foo} (known: ${flow.param}, ${flow.runId}, ${flow.time}, ${NODE.msg})" },
        { "{\"nodes\": [{\"id\": \"a\", \"job\": 1, \"param\": \"${flow.param.and.a.very.long.name.over.forty.bytes}\"}]}",
          "node \"a\": param: unknown variable ${flow.param.and.a.very.long.name.over.for...} (known:" },
        { "{\"nodes\": [{\"id\": \"a\", \"job\": 1, \"param\": \"${\\u00e9\\n}\"}]}",
          "node \"a\": param: unknown variable ${???} (known:" },
        { "{\"nodes\": [{\"id\": \"a\", \"job\": 1, \"param\": \"${ flow.param }\"}]}",
          "node \"a\": param: unknown variable ${ flow.param }" },
        { "{\"nodes\": [{\"id\": \"a\", \"job\": 1, \"param\": \"${flow.msg}\"}]}",
          "node \"a\": param: unknown variable ${flow.msg}" },
        { "{\"nodes\": [{\"id\": \"a\", \"job\": 1, \"param\": \"x ${flow.param\"}]}",
          "node \"a\": param: unterminated ${ at byte 2 (write $${ for a literal ${)" },
        { "{\"nodes\": [{\"id\": \"a\", \"job\": 1, \"param\": \"${b.msg}\"}]}",
          "node \"a\": param: ${b.msg}: no node \"b\"" },
        { "{\"nodes\": [{\"id\": \"a\", \"job\": 1, \"param\": \"${a.msg}\"}]}",
          "node \"a\": param: ${a.msg}: a is not an ancestor of a" },
        { "{\"nodes\": [{\"id\": \"a\", \"job\": 1}, {\"id\": \"b\", \"job\": 1}, {\"id\": \"c\", \"job\": 1, \"param\": \"${b.msg}\"}],"
          " \"edges\": [{\"from\": \"a\", \"to\": \"b\"}, {\"from\": \"a\", \"to\": \"c\"}]}",
          "node \"c\": param: ${b.msg}: b is not an ancestor of c" },
        { "{\"nodes\": [{\"id\": \"a\", \"job\": 1}, {\"id\": \"b\", \"job\": 1, \"param\": \"${a.code}\"}],"
          " \"edges\": [{\"from\": \"a\", \"to\": \"b\"}]}",
          "node \"b\": param: unknown variable ${a.code}" },
        { "{\"nodes\": [{\"id\": \"a\", \"job\": 1}, {\"id\": \"page\", \"job\": 404}]}", "node \"page\": unknown job 404" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        const char *error = s_refused (cases [i].json);
        XXL_CHECK_MSG (*error && strstr (error, cases [i].error),
                       "case %zu: got '%s', want '%s'", i, error, cases [i].error);
    }
    //  allowed neighbours of the refusals
    XXL_CHECK_STR (s_refused ("{\"nodes\": [{\"id\": \"A-b_9\", \"job\": 1, \"join\": \"all\"}], \"edges\": []}"), "");
    XXL_CHECK_STR (s_refused ("{\"nodes\": [{\"id\": \"flows\", \"job\": 1, \"param\": \"$x $$ $${flow.param} ${flow.runId}\"}]}"), "");
    XXL_CHECK_STR (s_refused ("{\"nodes\": [{\"id\": \"a\", \"job\": 1}, {\"id\": \"b\", \"job\": 1, \"param\": \"${a.msg}\"},"
                              " {\"id\": \"c\", \"job\": 1, \"param\": \"${a.msg}${b.msg}\"}],"
                              " \"edges\": [{\"from\": \"a\", \"to\": \"b\", \"on\": \"always\"}, {\"from\": \"b\", \"to\": \"c\", \"on\": \"failure\"}]}"), "");

    //  a NULL callback checks no job; a given one is asked once a job
    const char *twice = "{\"nodes\": [{\"id\": \"a\", \"job\": 404}, {\"id\": \"b\", \"job\": 404}, {\"id\": \"c\", \"job\": 7}]}";
    char error [XXL_FLOW_ERROR_MAX];
    xxl_flow_t *flow = xxl_flow_new (twice, strlen (twice), NULL, NULL, error, sizeof error);
    XXL_CHECK (flow != NULL);
    xxl_flow_destroy (&flow);
    XXL_CHECK (flow == NULL);
    xxl_flow_destroy (&flow);               //  twice is harmless
    int asked = 0;
    XXL_CHECK (!xxl_flow_new (twice, strlen (twice), s_job_exists, &asked, error, sizeof error));
    XXL_CHECK_STR (error, "node \"a\": unknown job 404");
    XXL_CHECK_INT (asked, 2);
    //  jobs are asked only once all else holds
    asked = 0;
    const char *cyclic = "{\"nodes\": [{\"id\": \"a\", \"job\": 1}], \"edges\": [{\"from\": \"a\", \"to\": \"a\"}]}";
    XXL_CHECK (!xxl_flow_new (cyclic, strlen (cyclic), s_job_exists, &asked, error, sizeof error));
    XXL_CHECK_INT (asked, 0);
    //  an error is cut to the buffer given, never past it
    char small [12];
    XXL_CHECK (!xxl_flow_new (cyclic, strlen (cyclic), NULL, NULL, small, sizeof small));
    XXL_CHECK_STR (small, "cycle: a ->");
    //  no room for an error: refused all the same
    XXL_CHECK (!xxl_flow_new (cyclic, strlen (cyclic), NULL, NULL, NULL, 0));
    XXL_CHECK (!xxl_flow_new ("[", 1, NULL, NULL, NULL, 0));
    XXL_CHECK (!xxl_flow_new (NULL, 0, NULL, NULL, error, sizeof error));
    XXL_CHECK_STR (error, "no definition");
    //  an embedded NUL is not a definition
    XXL_CHECK (!xxl_flow_new ("{\"nodes\": []}\0x", 15, NULL, NULL, error, sizeof error));
    XXL_CHECK_HAS (error, "invalid JSON");

    //  sizes: 1,000 nodes pass, 1,001 do not; 10,000 edges pass, 10,001 not;
    //  a param of 65,536 bytes passes, 65,537 not; 1 MiB of text
    for (int n = 1000; n <= 1001; n++) {
        text_t text = { 0 };
        s_add (&text, "{\"nodes\": [");
        for (int i = 0; i < n; i++)
            s_add (&text, "%s{\"id\": \"n%d\", \"job\": 1}", i? ",": "", i);
        s_add (&text, "]}");
        XXL_CHECK_STR (s_refused (text.data), n == 1000? "": "more than 1000 nodes (1001)");
        free (text.data);
    }
    for (int m = 10000; m <= 10001; m++) {
        text_t text = { 0 };
        s_add (&text, "{\"nodes\": [");
        for (int i = 0; i < 200; i++)
            s_add (&text, "%s{\"id\": \"n%d\", \"job\": 1}", i? ",": "", i);
        s_add (&text, "], \"edges\": [");
        int made = 0;
        for (int a = 0; a < 200 && made < m; a++)
            for (int b = a + 1; b < 200 && made < m; b++)
                s_add (&text, "%s{\"from\": \"n%d\", \"to\": \"n%d\"}", made++? ",": "", a, b);
        s_add (&text, "]}");
        XXL_CHECK_STR (s_refused (text.data), m == 10000? "": "more than 10000 edges (10001)");
        free (text.data);
    }
    for (int size = XXL_FLOW_PARAM_MAX; size <= XXL_FLOW_PARAM_MAX + 1; size++) {
        char *json = malloc (size + 64);
        int at = sprintf (json, "{\"nodes\": [{\"id\": \"a\", \"job\": 1, \"param\": \"");
        memset (json + at, 'p', size);
        strcpy (json + at + size, "\"}]}");
        XXL_CHECK_STR (s_refused (json), size == XXL_FLOW_PARAM_MAX? "": "node \"a\": param over 65536 bytes");
        free (json);
    }
    char *big = malloc (XXL_FLOW_TEXT_MAX + 2);
    memset (big, ' ', XXL_FLOW_TEXT_MAX + 1);
    big [XXL_FLOW_TEXT_MAX + 1] = 0;
    XXL_CHECK_STR (s_refused (big), "definition over 1048576 bytes");
    memcpy (big, "{\"nodes\": [{\"id\": \"a\", \"job\": 1}]}", 34);
    big [XXL_FLOW_TEXT_MAX] = 0;            //  exactly the limit, spaces after
    XXL_CHECK_STR (s_refused (big), "");
    free (big);

    //  a long cycle is named in short
    text_t text = { 0 };
    s_add (&text, "{\"nodes\": [");
    for (int i = 0; i < 20; i++)
        s_add (&text, "%s{\"id\": \"c%d\", \"job\": 1}", i? ",": "", i);
    s_add (&text, "], \"edges\": [");
    for (int i = 0; i < 20; i++)
        s_add (&text, "%s{\"from\": \"c%d\", \"to\": \"c%d\"}", i? ",": "", i, (i + 1) % 20);
    s_add (&text, "]}");
    XXL_CHECK_STR (s_refused (text.data), "cycle: c0 -> c1 -> c2 -> c3 -> c4 -> ... -> c18 -> c19 -> c0");
    free (text.data);
}

//  --- the graph -------------------------------------------------------------

static void
s_test_graph (void)
{
    //  defined out of order: d first, then the roots
    xxl_flow_t *flow = s_make (
        "{\"nodes\": [{\"id\": \"d\", \"job\": 4, \"join\": \"any\"}, {\"id\": \"b\", \"job\": 2},"
        " {\"id\": \"a\", \"job\": 1, \"param\": \"p\\u00e9 \\\"q\\\"\"}, {\"id\": \"c\", \"job\": 3}],"
        " \"edges\": [{\"from\": \"a\", \"to\": \"b\"}, {\"from\": \"a\", \"to\": \"c\", \"on\": \"failure\"},"
        " {\"from\": \"b\", \"to\": \"d\", \"on\": \"always\"}, {\"from\": \"c\", \"to\": \"d\"}]}");
    if (!flow) {
        XXL_CHECK (flow);
        return;
    }
    XXL_CHECK_INT (xxl_flow_nodes (flow), 4);
    XXL_CHECK_INT (xxl_flow_edges (flow), 4);
    XXL_CHECK_INT (xxl_flow_find (flow, "a"), 2);
    XXL_CHECK_INT (xxl_flow_find (flow, "d"), 0);
    XXL_CHECK_INT (xxl_flow_find (flow, "e"), -1);
    XXL_CHECK_INT (xxl_flow_find (flow, ""), -1);
    XXL_CHECK_STR (xxl_flow_id (flow, 1), "b");
    XXL_CHECK_INT (xxl_flow_job (flow, 3), 3);
    XXL_CHECK (xxl_flow_param (flow, 0) == NULL);
    XXL_CHECK_STR (xxl_flow_param (flow, 2), "p\xc3\xa9 \"q\"");
    XXL_CHECK (xxl_flow_join (flow, 0) == XXL_FLOW_JOIN_ANY);
    XXL_CHECK (xxl_flow_join (flow, 1) == XXL_FLOW_JOIN_ALL);
    XXL_CHECK (xxl_flow_uses_job (flow, 3));
    XXL_CHECK (!xxl_flow_uses_job (flow, 5));
    //  order: a (2), then b (1) before c (3), then d (0)
    const int *order = xxl_flow_order (flow);
    XXL_CHECK (order [0] == 2 && order [1] == 1 && order [2] == 3 && order [3] == 0);
    XXL_CHECK_INT (xxl_flow_rank (flow, 0), 3);
    XXL_CHECK_INT (xxl_flow_rank (flow, 2), 0);
    int count;
    const int *parents = xxl_flow_parents (flow, 0, &count);
    XXL_CHECK (count == 2 && parents [0] == 1 && parents [1] == 3);
    const int *edges = xxl_flow_in_edges (flow, 0, &count);
    XXL_CHECK (count == 2 && edges [0] == 2 && edges [1] == 3);
    const int *children = xxl_flow_children (flow, 2, &count);
    XXL_CHECK (count == 2 && children [0] == 1 && children [1] == 3);
    edges = xxl_flow_out_edges (flow, 2, &count);
    XXL_CHECK (count == 2 && edges [0] == 0 && edges [1] == 1);
    xxl_flow_parents (flow, 2, &count);
    XXL_CHECK_INT (count, 0);
    int from, to;
    xxl_flow_on_t on;
    xxl_flow_edge (flow, 1, &from, &to, &on);
    XXL_CHECK (from == 2 && to == 3 && on == XXL_FLOW_ON_FAILURE);
    XXL_CHECK (xxl_flow_is_ancestor (flow, 2, 0));
    XXL_CHECK (xxl_flow_is_ancestor (flow, 1, 0));
    XXL_CHECK (!xxl_flow_is_ancestor (flow, 0, 2));
    XXL_CHECK (!xxl_flow_is_ancestor (flow, 1, 3));
    XXL_CHECK (!xxl_flow_is_ancestor (flow, 2, 2));

    //  canonical JSON: defaults written out, order kept, and a fixed point
    char *json = xxl_flow_json (flow);
    XXL_CHECK_STR (json,
        "{\"nodes\":[{\"id\":\"d\",\"job\":4,\"join\":\"any\"},{\"id\":\"b\",\"job\":2,\"join\":\"all\"},"
        "{\"id\":\"a\",\"job\":1,\"param\":\"p\xc3\xa9 \\\"q\\\"\",\"join\":\"all\"},{\"id\":\"c\",\"job\":3,\"join\":\"all\"}],"
        "\"edges\":[{\"from\":\"a\",\"to\":\"b\",\"on\":\"success\"},{\"from\":\"a\",\"to\":\"c\",\"on\":\"failure\"},"
        "{\"from\":\"b\",\"to\":\"d\",\"on\":\"always\"},{\"from\":\"c\",\"to\":\"d\",\"on\":\"success\"}]}");
    xxl_flow_t *again = s_make (json);
    char *json2 = again? xxl_flow_json (again): NULL;
    XXL_CHECK_STR (json2, json);
    free (json);
    free (json2);
    xxl_flow_destroy (&again);
    xxl_flow_destroy (&flow);

    //  no edges: every node is a root; the canonical form has "edges": []
    flow = s_make ("{\"nodes\": [{\"id\": \"one\", \"job\": 9}]}");
    json = flow? xxl_flow_json (flow): NULL;
    XXL_CHECK_STR (json, "{\"nodes\":[{\"id\":\"one\",\"job\":9,\"join\":\"all\"}],\"edges\":[]}");
    free (json);
    xxl_flow_destroy (&flow);
    XXL_CHECK_STR (xxl_flow_on_name (XXL_FLOW_ON_ALWAYS), "always");
    XXL_CHECK_STR (xxl_flow_join_name (XXL_FLOW_JOIN_ANY), "any");
}

//  --- runs -------------------------------------------------------------------

#define S_MAX XXL_FLOW_NODES_MAX

//  Drives a run to its end: starts what is ready, ends the running nodes
//  in order (lowest rank first) with outcome [node]: 1 success, 0 failure.
//  starts [node] counts starts.  Uses settle, then checks step agrees.
static xxl_flow_run_t
s_drive (const xxl_flow_t *flow, xxl_flow_state_t *states, const int *outcome, int *starts)
{
    int n = xxl_flow_nodes (flow);
    int ready [S_MAX], skipped [S_MAX], nready, nskipped;
    for (int i = 0; i < n; i++)
        states [i] = XXL_FLOW_WAITING, starts [i] = 0;
    xxl_flow_step (flow, states, ready, &nready, skipped, &nskipped);
    for (int k = 0; k < nready; k++)
        starts [ready [k]]++;
    for (;;) {
        int pick = -1;
        for (int r = 0; r < n && pick < 0; r++)
            if (states [xxl_flow_order (flow) [r]] == XXL_FLOW_RUNNING)
                pick = xxl_flow_order (flow) [r];
        if (pick < 0)
            break;
        states [pick] = outcome [pick]? XXL_FLOW_SUCCESS: XXL_FLOW_FAILURE;
        xxl_flow_settle (flow, states, pick, ready, &nready, skipped, &nskipped);
        for (int k = 0; k < nready; k++)
            starts [ready [k]]++;
    }
    XXL_CHECK_INT (xxl_flow_step (flow, states, ready, &nready, skipped, &nskipped), 0);
    return xxl_flow_run_state (flow, states);
}

static xxl_flow_state_t
s_state_of (const xxl_flow_t *flow, const xxl_flow_state_t *states, const char *id)
{
    int node = xxl_flow_find (flow, id);
    assert (node >= 0);
    return states [node];
}

static const char *
s_msg (void *arg, int node)
{
    const char *const *msgs = arg;
    return msgs [node];
}

#define S_IS(id, want) XXL_CHECK_STR (xxl_flow_state_name (s_state_of (flow, states, id)), want)

static void
s_test_diamonds (void)
{
    //  a -> b, a -> c, b -> d, c -> d; d's join all or any
    for (int any = 0; any <= 1; any++) {
        char json [512];
        snprintf (json, sizeof json,
            "{\"nodes\": [{\"id\": \"a\", \"job\": 1}, {\"id\": \"b\", \"job\": 1}, {\"id\": \"c\", \"job\": 1},"
            " {\"id\": \"d\", \"job\": 1, \"join\": \"%s\"}],"
            " \"edges\": [{\"from\": \"a\", \"to\": \"b\"}, {\"from\": \"a\", \"to\": \"c\"},"
            " {\"from\": \"b\", \"to\": \"d\"}, {\"from\": \"c\", \"to\": \"d\"}]}", any? "any": "all");
        xxl_flow_t *flow = s_make (json);
        if (!flow) {
            XXL_CHECK (flow);
            continue;
        }
        xxl_flow_state_t states [4];
        int starts [4];
        int ok [4] = { 1, 1, 1, 1 };
        XXL_CHECK (s_drive (flow, states, ok, starts) == XXL_FLOW_RUN_SUCCESS);
        S_IS ("d", "SUCCESS");
        XXL_CHECK_INT (starts [3], 1);      //  once after both parents, not once per parent
        //  b fails: all skips d, any runs it (c's edge holds); b's failure
        //  has no failure edge: the run fails either way
        int b_fails [4] = { 1, 0, 1, 1 };
        XXL_CHECK (s_drive (flow, states, b_fails, starts) == XXL_FLOW_RUN_FAILURE);
        S_IS ("d", any? "SUCCESS": "SKIPPED");
        //  a fails: b and c skipped, so d skipped whatever its join
        int a_fails [4] = { 0, 1, 1, 1 };
        XXL_CHECK (s_drive (flow, states, a_fails, starts) == XXL_FLOW_RUN_FAILURE);
        S_IS ("b", "SKIPPED");
        S_IS ("c", "SKIPPED");
        S_IS ("d", "SKIPPED");
        XXL_CHECK_INT (starts [3], 0);
        xxl_flow_destroy (&flow);
    }
}

static void
s_test_branches (void)
{
    //  work -> next (success), work -> alert (failure), work and next ->
    //  tidy (always, join any): DESIGN's failure branch
    xxl_flow_t *flow = s_make (
        "{\"nodes\": [{\"id\": \"work\", \"job\": 1}, {\"id\": \"next\", \"job\": 2}, {\"id\": \"alert\", \"job\": 3},"
        " {\"id\": \"tidy\", \"job\": 4, \"join\": \"any\"}],"
        " \"edges\": [{\"from\": \"work\", \"to\": \"next\"}, {\"from\": \"work\", \"to\": \"alert\", \"on\": \"failure\"},"
        " {\"from\": \"work\", \"to\": \"tidy\", \"on\": \"always\"}, {\"from\": \"next\", \"to\": \"tidy\", \"on\": \"always\"}]}");
    if (!flow) {
        XXL_CHECK (flow);
        return;
    }
    xxl_flow_state_t states [4];
    int starts [4];
    int ok [4] = { 1, 1, 1, 1 };
    XXL_CHECK (s_drive (flow, states, ok, starts) == XXL_FLOW_RUN_SUCCESS);
    S_IS ("next", "SUCCESS");
    S_IS ("alert", "SKIPPED");
    S_IS ("tidy", "SUCCESS");
    //  work fails: alert runs, next skipped, tidy runs (work's always holds);
    //  a failure edge leaves work: the run is SUCCESS (DESIGN §12)
    int fails [4] = { 0, 1, 1, 1 };
    XXL_CHECK (s_drive (flow, states, fails, starts) == XXL_FLOW_RUN_SUCCESS);
    S_IS ("next", "SKIPPED");
    S_IS ("alert", "SUCCESS");
    S_IS ("tidy", "SUCCESS");
    //  the alert fails too: nothing handles it, the run is FAILURE
    int both [4] = { 0, 1, 0, 1 };
    XXL_CHECK (s_drive (flow, states, both, starts) == XXL_FLOW_RUN_FAILURE);
    //  next fails: its always edge into tidy holds
    int next [4] = { 1, 0, 1, 1 };
    XXL_CHECK (s_drive (flow, states, next, starts) == XXL_FLOW_RUN_SUCCESS);
    S_IS ("tidy", "SUCCESS");
    xxl_flow_destroy (&flow);

    //  an always edge from a skipped node does not hold: a -> b (success),
    //  b -> c (always); a fails: b skipped, c skipped
    flow = s_make ("{\"nodes\": [{\"id\": \"a\", \"job\": 1}, {\"id\": \"b\", \"job\": 1}, {\"id\": \"c\", \"job\": 1}],"
                   " \"edges\": [{\"from\": \"a\", \"to\": \"b\"}, {\"from\": \"b\", \"to\": \"c\", \"on\": \"always\"}]}");
    int a_fails [3] = { 0, 1, 1 };
    XXL_CHECK (flow && s_drive (flow, states, a_fails, starts) == XXL_FLOW_RUN_FAILURE);
    if (flow) {
        S_IS ("b", "SKIPPED");
        S_IS ("c", "SKIPPED");
    }
    xxl_flow_destroy (&flow);

    //  the edge table, every on by every parent state
    static const struct { xxl_flow_on_t on; xxl_flow_state_t parent; bool holds; } table [] = {
        { XXL_FLOW_ON_SUCCESS, XXL_FLOW_SUCCESS, true }, { XXL_FLOW_ON_SUCCESS, XXL_FLOW_FAILURE, false },
        { XXL_FLOW_ON_SUCCESS, XXL_FLOW_SKIPPED, false }, { XXL_FLOW_ON_SUCCESS, XXL_FLOW_KILLED, false },
        { XXL_FLOW_ON_FAILURE, XXL_FLOW_SUCCESS, false }, { XXL_FLOW_ON_FAILURE, XXL_FLOW_FAILURE, true },
        { XXL_FLOW_ON_FAILURE, XXL_FLOW_SKIPPED, false }, { XXL_FLOW_ON_FAILURE, XXL_FLOW_KILLED, false },
        { XXL_FLOW_ON_ALWAYS, XXL_FLOW_SUCCESS, true }, { XXL_FLOW_ON_ALWAYS, XXL_FLOW_FAILURE, true },
        { XXL_FLOW_ON_ALWAYS, XXL_FLOW_SKIPPED, false }, { XXL_FLOW_ON_ALWAYS, XXL_FLOW_KILLED, false },
    };
    for (size_t i = 0; i < sizeof table / sizeof table [0]; i++)
        XXL_CHECK_MSG (xxl_flow_holds (table [i].on, table [i].parent) == table [i].holds, "edge table row %zu", i);
    for (int s = XXL_FLOW_WAITING; s <= XXL_FLOW_KILLED; s++) {
        XXL_CHECK_INT (xxl_flow_state_parse (xxl_flow_state_name (s)), s);
        XXL_CHECK (xxl_flow_final (s) == (s >= XXL_FLOW_SUCCESS));
    }
    for (int r = XXL_FLOW_RUN_RUNNING; r <= XXL_FLOW_RUN_KILLED; r++)
        XXL_CHECK_INT (xxl_flow_run_parse (xxl_flow_run_name (r)), r);
    XXL_CHECK_INT (xxl_flow_state_parse ("FAILED"), -1);
    XXL_CHECK_INT (xxl_flow_state_parse (NULL), -1);
    XXL_CHECK_INT (xxl_flow_run_parse ("WAITING"), -1);
}

//  A chain of n nodes (n0 -> n1 -> ...), or n - 1 parallel nodes joined by
//  the last (wide)
static xxl_flow_t *
s_shape (int n, bool wide, const char *join)
{
    text_t text = { 0 };
    s_add (&text, "{\"nodes\": [");
    for (int i = 0; i < n; i++)
        s_add (&text, "%s{\"id\": \"n%d\", \"job\": %d%s%s%s}", i? ",": "", i, i + 1,
               i == n - 1? ", \"join\": \"": "", i == n - 1? join: "", i == n - 1? "\"": "");
    s_add (&text, "], \"edges\": [");
    for (int i = 0; i + 1 < n; i++)
        s_add (&text, "%s{\"from\": \"n%d\", \"to\": \"n%d\"}", i? ",": "", i, wide? n - 1: i + 1);
    s_add (&text, "]}");
    xxl_flow_t *flow = s_make (text.data);
    free (text.data);
    return flow;
}

static void
s_test_shapes (void)
{
    static xxl_flow_state_t states [S_MAX];
    static int starts [S_MAX], outcome [S_MAX];
    int ready [S_MAX], skipped [S_MAX], nready, nskipped;
    //  deep: 100 in a chain, one after the other
    xxl_flow_t *flow = s_shape (100, false, "all");
    if (!flow) {
        XXL_CHECK (flow);
        return;
    }
    for (int i = 0; i < 100; i++)
        outcome [i] = 1;
    XXL_CHECK (s_drive (flow, states, outcome, starts) == XXL_FLOW_RUN_SUCCESS);
    bool once = true;
    for (int i = 0; i < 100; i++)
        once &= starts [i] == 1;
    XXL_CHECK (once);
    //  n10 fails: n11..n99 are skipped in one settle
    for (int i = 0; i < 100; i++)
        states [i] = i < 10? XXL_FLOW_SUCCESS: XXL_FLOW_WAITING;
    states [10] = XXL_FLOW_FAILURE;
    xxl_flow_settle (flow, states, 10, ready, &nready, skipped, &nskipped);
    XXL_CHECK_INT (nready, 0);
    XXL_CHECK_INT (nskipped, 89);
    XXL_CHECK (states [99] == XXL_FLOW_SKIPPED);
    XXL_CHECK (xxl_flow_run_state (flow, states) == XXL_FLOW_RUN_FAILURE);
    xxl_flow_destroy (&flow);

    //  wide: 200 in parallel joined by one; all start at once, the join
    //  once after the last
    flow = s_shape (201, true, "all");
    if (!flow) {
        XXL_CHECK (flow);
        return;
    }
    for (int i = 0; i < 201; i++)
        states [i] = XXL_FLOW_WAITING;
    xxl_flow_step (flow, states, ready, &nready, skipped, &nskipped);
    XXL_CHECK_INT (nready, 200);
    int decided = 0;
    for (int i = 0; i < 200; i++) {
        states [i] = XXL_FLOW_SUCCESS;
        xxl_flow_settle (flow, states, i, ready, &nready, skipped, &nskipped);
        decided += nready;
        if (i < 199)
            XXL_CHECK_INT (nready, 0);
    }
    XXL_CHECK_INT (decided, 1);
    XXL_CHECK (states [200] == XXL_FLOW_RUNNING);
    //  one of the 200 failed: the all join is skipped, an any join runs
    for (int any = 0; any <= 1; any++) {
        xxl_flow_destroy (&flow);
        flow = s_shape (201, true, any? "any": "all");
        for (int i = 0; i < 201; i++)
            outcome [i] = i != 77;
        XXL_CHECK (flow && s_drive (flow, states, outcome, starts) == XXL_FLOW_RUN_FAILURE);
        XXL_CHECK (states [200] == (any? XXL_FLOW_SUCCESS: XXL_FLOW_SKIPPED));
    }
    xxl_flow_destroy (&flow);

    //  1,000 nodes, each with up to 5 parents among the 20 before it: made
    //  and run in well under a second
    double start = s_now ();
    text_t text = { 0 };
    s_add (&text, "{\"nodes\": [");
    for (int i = 0; i < 1000; i++)
        s_add (&text, "%s{\"id\": \"node-%d\", \"job\": %d, \"param\": \"%s\"}", i? ",": "", i, i % 50 + 1,
               i > 0 && i % 4 == 0? "${node-0.msg} ${flow.param}": "${flow.param}");
    s_add (&text, "], \"edges\": [");
    int edges = 0;
    for (int i = 1; i < 1000; i++)
        for (int k = 1; k <= 5 && i - k * 4 >= 0; k++)
            s_add (&text, "%s{\"from\": \"node-%d\", \"to\": \"node-%d\", \"on\": \"%s\"}", edges++? ",": "",
                   i - k * 4, i, k == 1? "always": "success");
    s_add (&text, "]}");
    flow = s_make (text.data);
    free (text.data);
    double made = s_now () - start;
    if (!flow) {
        XXL_CHECK (flow);
        return;
    }
    for (int i = 0; i < 1000; i++)
        outcome [i] = 1;
    XXL_CHECK (s_drive (flow, states, outcome, starts) == XXL_FLOW_RUN_SUCCESS);
    double ran = s_now () - start - made;
    once = true;
    for (int i = 0; i < 1000; i++)
        once &= starts [i] == 1;
    XXL_CHECK (once);
    //  node-5 fails: what it skips, skips on down the graph; its always
    //  edge out (to node-9) handles the failure, so the run is SUCCESS
    outcome [5] = 0;
    XXL_CHECK (s_drive (flow, states, outcome, starts) == XXL_FLOW_RUN_SUCCESS);
    XXL_CHECK (states [13] == XXL_FLOW_SKIPPED && states [9] == XXL_FLOW_SUCCESS);
    printf ("1,000 nodes, %d edges: made in %.1f ms, run in %.1f ms\n", edges, made * 1e3, ran * 1e3);
    XXL_CHECK_MSG (made + ran < 2.0, "1,000 nodes took %.3f s", made + ran);
    xxl_flow_destroy (&flow);
}

//  docs/workflows.md's nightly ETL, read from the page itself: cleanup
//  runs whatever the outcomes (all 128), transform only when the three
//  extracts succeed, and the params render as the page says
static void
s_test_etl (void)
{
    const char *srcdir = getenv ("srcdir");
    char path [4096];
    snprintf (path, sizeof path, "%s/docs/workflows.md", srcdir? srcdir: "..");
    FILE *file = fopen (path, "r");
    static char page [65536];
    size_t size = file? fread (page, 1, sizeof page - 1, file): 0;
    if (file)
        fclose (file);
    page [size] = 0;
    char *start = strstr (page, "```json\n");
    char *end = start? strstr (start + 8, "```"): NULL;
    XXL_CHECK_MSG (start && end, "no example in %s", path);
    if (!start || !end)
        return;
    *end = 0;
    xxl_flow_t *flow = s_make (start + 8);
    if (!flow) {
        XXL_CHECK (flow);
        return;
    }
    XXL_CHECK_INT (xxl_flow_nodes (flow), 7);
    int cleanup = xxl_flow_find (flow, "cleanup"), transform = xxl_flow_find (flow, "transform");
    int alert = xxl_flow_find (flow, "alert");
    int cleanup_skipped = 0, transform_wrong = 0, alert_wrong = 0;
    xxl_flow_state_t states [7];
    int starts [7], outcome [7];
    for (int bits = 0; bits < 128; bits++) {
        for (int i = 0; i < 7; i++)
            outcome [i] = !(bits & (1 << i));
        s_drive (flow, states, outcome, starts);
        cleanup_skipped += states [cleanup] == XXL_FLOW_SKIPPED;
        bool extracts = outcome [0] && outcome [1] && outcome [2];
        transform_wrong += (starts [transform] == 1) != extracts;
        bool failed = !extracts || !outcome [transform] || !outcome [xxl_flow_find (flow, "load")];
        alert_wrong += (starts [alert] == 1) != failed;
    }
    XXL_CHECK_INT (cleanup_skipped, 0);
    XXL_CHECK_INT (transform_wrong, 0);
    XXL_CHECK_INT (alert_wrong, 0);
    //  users fails: transform and load skipped, alert and cleanup run, the
    //  run SUCCESS (a failure edge leaves users)
    int users_fails [7] = { 1, 0, 1, 1, 1, 1, 1 };
    XXL_CHECK (s_drive (flow, states, users_fails, starts) == XXL_FLOW_RUN_SUCCESS);
    S_IS ("transform", "SKIPPED");
    S_IS ("load", "SKIPPED");
    S_IS ("alert", "SUCCESS");
    S_IS ("cleanup", "SUCCESS");
    //  a retry of users resets transform and load only
    int reset [7], nreset;
    char error [XXL_FLOW_ERROR_MAX];
    XXL_CHECK_INT (xxl_flow_retry (flow, states, 1, reset, &nreset, error, sizeof error), 0);
    XXL_CHECK_INT (nreset, 2);
    S_IS ("transform", "WAITING");
    S_IS ("load", "WAITING");
    S_IS ("cleanup", "SUCCESS");
    const char *msgs [7] = { "42 orders" };
    xxl_flow_vars_t vars = { "2026-11-28", 812, 1764374400000LL, s_msg, msgs };
    char *text = xxl_flow_render (flow, transform, &vars, error, sizeof error);
    XXL_CHECK_STR (text, "day=2026-11-28 run=812 orders=42 orders");
    free (text);
    text = xxl_flow_render (flow, alert, &vars, error, sizeof error);
    XXL_CHECK_STR (text, "ETL run 812 (1764374400000) failed");
    free (text);
    xxl_flow_destroy (&flow);
}

static void
s_test_retry_kill (void)
{
    //  a -> b -> c, a -> alert (failure), b -> d (always)
    xxl_flow_t *flow = s_make (
        "{\"nodes\": [{\"id\": \"a\", \"job\": 1}, {\"id\": \"b\", \"job\": 1}, {\"id\": \"c\", \"job\": 1},"
        " {\"id\": \"alert\", \"job\": 1}, {\"id\": \"d\", \"job\": 1}],"
        " \"edges\": [{\"from\": \"a\", \"to\": \"b\"}, {\"from\": \"b\", \"to\": \"c\"},"
        " {\"from\": \"a\", \"to\": \"alert\", \"on\": \"failure\"}, {\"from\": \"b\", \"to\": \"d\", \"on\": \"always\"}]}");
    if (!flow) {
        XXL_CHECK (flow);
        return;
    }
    xxl_flow_state_t states [5];
    int starts [5], reset [5], nreset, ready [5], skipped [5], nready, nskipped;
    char error [XXL_FLOW_ERROR_MAX];
    int a_fails [5] = { 0, 1, 1, 1, 1 };
    XXL_CHECK (s_drive (flow, states, a_fails, starts) == XXL_FLOW_RUN_SUCCESS);
    S_IS ("alert", "SUCCESS");
    S_IS ("c", "SKIPPED");
    //  refused: a node that did not fail
    XXL_CHECK_INT (xxl_flow_retry (flow, states, 1, reset, &nreset, error, sizeof error), -1);
    XXL_CHECK_STR (error, "node b is SKIPPED: only a FAILURE node can be retried");
    //  retry a: a runs again, b c d waiting again, alert keeps its run
    XXL_CHECK_INT (xxl_flow_retry (flow, states, 0, reset, &nreset, error, sizeof error), 0);
    XXL_CHECK_INT (nreset, 3);
    S_IS ("a", "RUNNING");
    S_IS ("b", "WAITING");
    S_IS ("d", "WAITING");
    S_IS ("alert", "SUCCESS");
    XXL_CHECK (xxl_flow_run_state (flow, states) == XXL_FLOW_RUN_RUNNING);
    XXL_CHECK_INT (xxl_flow_step (flow, states, ready, &nready, skipped, &nskipped), 0);
    //  a succeeds now: b runs, alert does not run again
    states [0] = XXL_FLOW_SUCCESS;
    xxl_flow_settle (flow, states, 0, ready, &nready, skipped, &nskipped);
    XXL_CHECK (nready == 1 && ready [0] == 1 && nskipped == 0);
    //  b fails: c skipped, d runs (always)
    states [1] = XXL_FLOW_FAILURE;
    xxl_flow_settle (flow, states, 1, ready, &nready, skipped, &nskipped);
    XXL_CHECK (nready == 1 && ready [0] == 4 && nskipped == 1 && skipped [0] == 2);
    //  kill while d runs: d killed, the rest final already
    int running [5], nrunning;
    XXL_CHECK_INT (xxl_flow_kill (flow, states, running, &nrunning), 1);
    XXL_CHECK (nrunning == 1 && running [0] == 4);
    S_IS ("d", "KILLED");
    XXL_CHECK (xxl_flow_run_state (flow, states) == XXL_FLOW_RUN_KILLED);
    XXL_CHECK_INT (xxl_flow_kill (flow, states, running, &nrunning), 0);
    XXL_CHECK_INT (xxl_flow_retry (flow, states, 1, reset, &nreset, error, sizeof error), -1);
    XXL_CHECK_STR (error, "the run was killed: its nodes cannot be retried");
    //  ... also of a node the kill made KILLED: the run's kill is the reason
    XXL_CHECK_INT (xxl_flow_retry (flow, states, 4, reset, &nreset, error, sizeof error), -1);
    XXL_CHECK_STR (error, "the run was killed: its nodes cannot be retried");
    XXL_CHECK_INT (xxl_flow_step (flow, states, ready, &nready, skipped, &nskipped), 0);

    //  kill at the start: the running roots killed, the waiting never start
    for (int i = 0; i < 5; i++)
        states [i] = XXL_FLOW_WAITING;
    xxl_flow_step (flow, states, ready, &nready, skipped, &nskipped);
    XXL_CHECK_INT (xxl_flow_kill (flow, states, running, &nrunning), 5);
    XXL_CHECK (nrunning == 1 && running [0] == 0);
    XXL_CHECK_INT (xxl_flow_step (flow, states, ready, &nready, skipped, &nskipped), 0);
    XXL_CHECK (xxl_flow_run_state (flow, states) == XXL_FLOW_RUN_KILLED);

    //  a retry waits for the node's parents: b failed while a runs again
    xxl_flow_state_t mid [5] = { XXL_FLOW_RUNNING, XXL_FLOW_FAILURE, XXL_FLOW_SKIPPED,
                                 XXL_FLOW_SKIPPED, XXL_FLOW_SUCCESS };
    XXL_CHECK_INT (xxl_flow_retry (flow, mid, 1, reset, &nreset, error, sizeof error), -1);
    XXL_CHECK_STR (error, "node b cannot run again before its parent a ends");
    XXL_CHECK (mid [1] == XXL_FLOW_FAILURE);  //  a refusal changes nothing
    XXL_CHECK_INT (xxl_flow_retry (flow, mid, 1, reset, &nreset, NULL, 0), -1);
    //  a killed run decides nothing, even from states a torn write left:
    //  a WAITING root does not start, a late result moves nothing
    xxl_flow_state_t torn [5] = { XXL_FLOW_WAITING, XXL_FLOW_WAITING, XXL_FLOW_WAITING,
                                  XXL_FLOW_WAITING, XXL_FLOW_KILLED };
    XXL_CHECK_INT (xxl_flow_step (flow, torn, ready, &nready, skipped, &nskipped), 0);
    XXL_CHECK (torn [0] == XXL_FLOW_WAITING);
    torn [0] = XXL_FLOW_SUCCESS;
    XXL_CHECK_INT (xxl_flow_settle (flow, torn, 0, ready, &nready, skipped, &nskipped), 0);
    XXL_CHECK (xxl_flow_run_state (flow, torn) == XXL_FLOW_RUN_RUNNING);
    XXL_CHECK_INT (xxl_flow_kill (flow, torn, running, &nrunning), 3);
    XXL_CHECK (xxl_flow_run_state (flow, torn) == XXL_FLOW_RUN_KILLED);
    xxl_flow_destroy (&flow);
}

//  --- substitution -------------------------------------------------------

static void
s_test_params (void)
{
    xxl_flow_t *flow = s_make (
        "{\"nodes\": [{\"id\": \"a\", \"job\": 1, \"param\": \"\"}, {\"id\": \"b\", \"job\": 1},"
        " {\"id\": \"c\", \"job\": 1, \"param\": \"p=${flow.param} id=${flow.runId} t=${flow.time}"
        " a=${a.msg} b=${b.msg} $${flow.param} $$${a.msg} $ $$ ${a.msg}${a.msg}$\"}],"
        " \"edges\": [{\"from\": \"a\", \"to\": \"b\"}, {\"from\": \"b\", \"to\": \"c\", \"on\": \"always\"}]}");
    if (!flow) {
        XXL_CHECK (flow);
        return;
    }
    const char *msgs [3] = { "A${flow.runId}", NULL, NULL };
    xxl_flow_vars_t vars = { "P", 42, 1700000000123LL, s_msg, msgs };
    char error [XXL_FLOW_ERROR_MAX];
    char *text = xxl_flow_render (flow, 2, &vars, error, sizeof error);
    //  values verbatim, never scanned again; a NULL msg (b skipped) is ""
    XXL_CHECK_STR (text, "p=P id=42 t=1700000000123 a=A${flow.runId} b= ${flow.param} $A${flow.runId} $ $$ "
                         "A${flow.runId}A${flow.runId}$");
    free (text);
    text = xxl_flow_render (flow, 0, &vars, error, sizeof error);
    XXL_CHECK_STR (text, "");
    free (text);
    //  no param: NULL and no error (the job's own param)
    strcpy (error, "x");
    XXL_CHECK (xxl_flow_render (flow, 1, &vars, error, sizeof error) == NULL);
    XXL_CHECK_STR (error, "");
    //  NULL run param and msg callback: ""
    xxl_flow_vars_t none = { NULL, -1, 0, NULL, NULL };
    text = xxl_flow_render (flow, 2, &none, error, sizeof error);
    XXL_CHECK_STR (text, "p= id=-1 t=0 a= b= ${flow.param} $ $ $$ $");
    free (text);
    xxl_flow_destroy (&flow);

    //  runs of dollars: before '{' each "$$" is one '$' and an odd last
    //  '$' opens a variable; elsewhere a '$' is itself
    flow = s_make ("{\"nodes\": [{\"id\": \"a\", \"job\": 1, \"param\": "
                   "\"${flow.runId}|$${x}|$$${flow.runId}|$$$${x}|$$$$|$5|{$}|$\"}]}");
    text = flow? xxl_flow_render (flow, 0, &vars, error, sizeof error): NULL;
    XXL_CHECK_STR (text, "42|${x}|$42|$${x}|$$$$|$5|{$}|$");
    free (text);
    xxl_flow_destroy (&flow);

    //  the rendered param is held to 64 KiB: a message that makes it longer
    //  fails the render (the engine fails the node), exactly at the limit passes
    flow = s_make ("{\"nodes\": [{\"id\": \"a\", \"job\": 1}, {\"id\": \"b\", \"job\": 1, \"param\": \"x${a.msg}\"}],"
                   " \"edges\": [{\"from\": \"a\", \"to\": \"b\"}]}");
    if (!flow) {
        XXL_CHECK (flow);
        return;
    }
    char *huge = malloc (XXL_FLOW_PARAM_MAX + 1);
    memset (huge, 'm', XXL_FLOW_PARAM_MAX);
    huge [XXL_FLOW_PARAM_MAX - 1] = 0;
    const char *big [2] = { huge, NULL };
    xxl_flow_vars_t at_limit = { NULL, 1, 1, s_msg, big };
    text = xxl_flow_render (flow, 1, &at_limit, error, sizeof error);
    XXL_CHECK (text && strlen (text) == XXL_FLOW_PARAM_MAX);
    free (text);
    huge [XXL_FLOW_PARAM_MAX - 1] = 'm';
    huge [XXL_FLOW_PARAM_MAX] = 0;
    XXL_CHECK (xxl_flow_render (flow, 1, &at_limit, error, sizeof error) == NULL);
    XXL_CHECK_STR (error, "param over 65536 bytes after substitution");
    free (huge);
    xxl_flow_destroy (&flow);
}

//  --- the property test ---------------------------------------------------

static uint64_t s_seed = 0x9e3779b97f4a7c15ULL;

static uint32_t
s_rand (void)
{
    s_seed ^= s_seed << 13;
    s_seed ^= s_seed >> 7;
    s_seed ^= s_seed << 17;
    return (uint32_t) (s_seed >> 16);
}

//  A random DAG: nodes numbered so that edges go from a lower to a higher
//  number in a shuffled naming, so the definition order is not the
//  topological one
static xxl_flow_t *
s_random_flow (int n)
{
    int name [64];
    for (int i = 0; i < n; i++)
        name [i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = s_rand () % (i + 1), t = name [i];
        name [i] = name [j], name [j] = t;
    }
    static const char *const ons [] = { "success", "failure", "always" };
    text_t text = { 0 };
    s_add (&text, "{\"nodes\": [");
    for (int i = 0; i < n; i++)
        s_add (&text, "%s{\"id\": \"v%d\", \"job\": %d, \"join\": \"%s\"}", i? ",": "", i, i + 1,
               s_rand () % 2? "any": "all");
    s_add (&text, "], \"edges\": [");
    int edges = 0;
    int density = 1 + s_rand () % 4;
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++)
            if ((int) (s_rand () % 16) < density)
                s_add (&text, "%s{\"from\": \"v%d\", \"to\": \"v%d\", \"on\": \"%s\"}", edges++? ",": "",
                       name [a], name [b], ons [s_rand () % 3]);
    s_add (&text, "]}");
    xxl_flow_t *flow = s_make (text.data);
    free (text.data);
    return flow;
}

//  What the rules make of each node, computed alone: in topological order,
//  a node runs (and ends as its outcome) if it has no parent or its join
//  holds over its parents' ends, else it is SKIPPED
static void
s_oracle (const xxl_flow_t *flow, const int *outcome, xxl_flow_state_t *expect)
{
    for (int r = 0; r < xxl_flow_nodes (flow); r++) {
        int node = xxl_flow_order (flow) [r], count, held = 0;
        const int *parents = xxl_flow_parents (flow, node, &count);
        const int *edges = xxl_flow_in_edges (flow, node, &count);
        for (int k = 0; k < count; k++) {
            xxl_flow_on_t on;
            xxl_flow_edge (flow, edges [k], NULL, NULL, &on);
            xxl_flow_state_t p = expect [parents [k]];
            held += (p == XXL_FLOW_SUCCESS && on != XXL_FLOW_ON_FAILURE)
                 || (p == XXL_FLOW_FAILURE && on != XXL_FLOW_ON_SUCCESS);
        }
        bool runs = count == 0 || (xxl_flow_join (flow, node) == XXL_FLOW_JOIN_ANY? held > 0: held == count);
        expect [node] = !runs? XXL_FLOW_SKIPPED: outcome [node]? XXL_FLOW_SUCCESS: XXL_FLOW_FAILURE;
    }
}

//  The moves of a call, as a set over the nodes (1 ready, 2 skipped)
static void
s_moves (int n, const int *ready, int nready, const int *skipped, int nskipped, char *moves)
{
    memset (moves, 0, n);
    for (int k = 0; k < nready; k++)
        moves [ready [k]] = 1;
    for (int k = 0; k < nskipped; k++)
        moves [skipped [k]] = 2;
}

//  Checks what a call made ready: every parent final, not started before
static void
s_check_ready (const xxl_flow_t *flow, const xxl_flow_state_t *states, const int *ready, int nready,
               int *starts, int *bad)
{
    for (int k = 0; k < nready; k++) {
        int count;
        const int *parents = xxl_flow_parents (flow, ready [k], &count);
        for (int p = 0; p < count; p++)
            if (!xxl_flow_final (states [parents [p]]))
                (*bad)++;
        if (starts [ready [k]]++ > 0)
            (*bad)++;
        if (states [ready [k]] != XXL_FLOW_RUNNING)
            (*bad)++;
    }
}

static void
s_test_property (void)
{
    int runs = 0, bad_ready = 0, bad_end = 0, bad_oracle = 0, bad_same = 0, bad_all = 0,
        bad_status = 0, kills = 0, retries = 0, bad_retry = 0, rebuilt = 0;
    for (int round = 0; round < 3000; round++) {
        int n = 1 + s_rand () % 40;
        xxl_flow_t *flow = s_random_flow (n);
        if (!flow) {
            XXL_CHECK (flow);
            return;
        }
        int outcome [64], starts [64] = { 0 }, ready [64], skipped [64], nready, nskipped;
        int ready2 [64], skipped2 [64], nready2, nskipped2;
        xxl_flow_state_t states [64], copy [64], expect [64];
        char moves [64], moves2 [64];
        for (int i = 0; i < n; i++)
            outcome [i] = s_rand () % 4 != 0, states [i] = XXL_FLOW_WAITING;
        bool kill = s_rand () % 8 == 0, retry = s_rand () % 6 == 0, killed = false;
        int retried = 0;
        xxl_flow_step (flow, states, ready, &nready, skipped, &nskipped);
        s_check_ready (flow, states, ready, nready, starts, &bad_ready);
        for (;;) {
            int running [64], nrunning = 0;
            for (int i = 0; i < n; i++)
                if (states [i] == XXL_FLOW_RUNNING)
                    running [nrunning++] = i;
            if (nrunning == 0)
                break;
            if (kill && s_rand () % 5 == 0) {
                int killed_running [64], nk;
                xxl_flow_kill (flow, states, killed_running, &nk);
                bad_end += nk != nrunning;
                killed = true;
                kills++;
                break;
            }
            //  end a random running node, as its result comes
            int pick = running [s_rand () % nrunning];
            states [pick] = outcome [pick]? XXL_FLOW_SUCCESS: XXL_FLOW_FAILURE;
            //  a restart here: the full step on the stored states must
            //  make the same moves as the incremental settle
            memcpy (copy, states, sizeof (xxl_flow_state_t) * n);
            xxl_flow_settle (flow, states, pick, ready, &nready, skipped, &nskipped);
            xxl_flow_step (flow, copy, ready2, &nready2, skipped2, &nskipped2);
            s_moves (n, ready, nready, skipped, nskipped, moves);
            s_moves (n, ready2, nready2, skipped2, nskipped2, moves2);
            bad_same += memcmp (moves, moves2, n) != 0 || memcmp (states, copy, sizeof (xxl_flow_state_t) * n) != 0;
            rebuilt++;
            s_check_ready (flow, states, ready, nready, starts, &bad_ready);
            //  after every move, no WAITING node has only final parents
            bad_same += xxl_flow_step (flow, copy, ready2, &nready2, skipped2, &nskipped2) != 0;
            //  a retry of a failed node (once a run): it may now succeed
            if (retry && retried == 0 && states [pick] == XXL_FLOW_FAILURE && s_rand () % 2) {
                int reset [64], nreset;
                char error [XXL_FLOW_ERROR_MAX];
                if (xxl_flow_retry (flow, states, pick, reset, &nreset, error, sizeof error) == 0) {
                    retried = 1;
                    retries++;
                    starts [pick] = 0;      //  a new log row of the same node
                    outcome [pick] = 1;
                    for (int k = 0; k < nreset; k++)
                        bad_retry += states [reset [k]] != XXL_FLOW_WAITING;
                    bad_retry += xxl_flow_step (flow, states, ready, &nready, skipped, &nskipped) != 0;
                    starts [pick]++;
                }
                else
                    bad_retry++;
            }
        }
        //  the run ended: every node final
        for (int i = 0; i < n; i++)
            bad_end += !xxl_flow_final (states [i]);
        xxl_flow_run_t status = xxl_flow_run_state (flow, states);
        if (killed) {
            bad_status += status != XXL_FLOW_RUN_KILLED;
            for (int i = 0; i < n; i++)
                bad_end += states [i] == XXL_FLOW_KILLED && starts [i] > 1;
        }
        else {
            //  the oracle, from the outcomes alone (a retried node's last)
            s_oracle (flow, outcome, expect);
            if (!retried)
                bad_oracle += memcmp (expect, states, sizeof (xxl_flow_state_t) * n) != 0;
            for (int i = 0; i < n; i++) {
                //  a node ran at most once (a retry once more)
                bad_ready += starts [i] > 1;
                //  an all join with a failed parent on a success edge is skipped
                if (retried || xxl_flow_join (flow, i) != XXL_FLOW_JOIN_ALL)
                    continue;
                int count;
                const int *parents = xxl_flow_parents (flow, i, &count);
                const int *edges = xxl_flow_in_edges (flow, i, &count);
                for (int k = 0; k < count; k++) {
                    xxl_flow_on_t on;
                    xxl_flow_edge (flow, edges [k], NULL, NULL, &on);
                    if (on == XXL_FLOW_ON_SUCCESS && states [parents [k]] == XXL_FLOW_FAILURE)
                        bad_all += states [i] != XXL_FLOW_SKIPPED;
                }
            }
            //  the status: FAILURE when a failed node has no failure or
            //  always edge out, else SUCCESS
            bool failed = false;
            for (int i = 0; i < n; i++) {
                if (states [i] != XXL_FLOW_FAILURE)
                    continue;
                int count;
                const int *edges = xxl_flow_out_edges (flow, i, &count);
                bool handled = false;
                for (int k = 0; k < count; k++) {
                    xxl_flow_on_t on;
                    xxl_flow_edge (flow, edges [k], NULL, NULL, &on);
                    handled |= on != XXL_FLOW_ON_SUCCESS;
                }
                failed |= !handled;
            }
            bad_status += status != (failed? XXL_FLOW_RUN_FAILURE: XXL_FLOW_RUN_SUCCESS);
        }
        runs++;
        xxl_flow_destroy (&flow);
    }
    printf ("property: %d runs (%d killed, %d retried), %d restarts compared\n",
            runs, kills, retries, rebuilt);
    XXL_CHECK_INT (bad_ready, 0);
    XXL_CHECK_INT (bad_end, 0);
    XXL_CHECK_INT (bad_oracle, 0);
    XXL_CHECK_INT (bad_same, 0);
    XXL_CHECK_INT (bad_all, 0);
    XXL_CHECK_INT (bad_status, 0);
    XXL_CHECK_INT (bad_retry, 0);
    XXL_CHECK (kills > 0 && retries > 0);
}

int
main (void)
{
    s_test_validation ();
    s_test_graph ();
    s_test_diamonds ();
    s_test_branches ();
    s_test_shapes ();
    s_test_retry_kill ();
    s_test_params ();
    s_test_etl ();
    s_test_property ();
    return xxl_test_done ();
}
