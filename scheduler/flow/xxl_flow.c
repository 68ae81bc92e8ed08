/*  xxl_flow.c -- a workflow's definition: JSON in and out, validation, and
    the graph's arrays (xxl_flow.h).

    Made in one pass of checks (xxl_flow.h lists their order); every array
    of the graph is made here and never changed after: the topological
    order (Kahn's, the lowest-numbered ready node first), parents and
    children as CSR arrays, ancestors as one bit row a node.
*/

#include "xxl_flow_int.h"

#include <assert.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
flow_error (char *error, size_t errlen, const char *format, ...)
{
    if (!error || errlen == 0)
        return;
    va_list args;
    va_start (args, format);
    vsnprintf (error, errlen, format, args);
    va_end (args);
}

//  A user's text fit for an error (tpl_shown)
static const char *
s_shown (const char *text, char *out, size_t size)
{
    return tpl_shown (out, size, text, strlen (text));
}

static bool
s_id_valid (const char *id, size_t size)
{
    if (size == 0 || size > XXL_FLOW_ID_MAX)
        return false;
    for (size_t i = 0; i < size; i++) {
        char c = id [i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
              || c == '_' || c == '-'))
            return false;
    }
    return true;
}

const char *
xxl_flow_on_name (xxl_flow_on_t on)
{
    return on == XXL_FLOW_ON_FAILURE? "failure": on == XXL_FLOW_ON_ALWAYS? "always": "success";
}

const char *
xxl_flow_join_name (xxl_flow_join_t join)
{
    return join == XXL_FLOW_JOIN_ANY? "any": "all";
}

void
xxl_flow_destroy (xxl_flow_t **self_p)
{
    assert (self_p);
    xxl_flow_t *self = *self_p;
    if (!self)
        return;
    if (self->node)
        for (int i = 0; i < self->nodes; i++) {
            free (self->node [i].id);
            free (self->node [i].param);
            tpl_free (&self->node [i].tpl);
        }
    free (self->node);
    free (self->edge);
    free (self->order);
    free (self->rank);
    free (self->by_id);
    free (self->in_at);
    free (self->in_edge);
    free (self->in_node);
    free (self->out_at);
    free (self->out_edge);
    free (self->out_node);
    free (self->anc);
    free (self);
    *self_p = NULL;
}

//  --- lookup by id --------------------------------------------------------

typedef struct {
    const char *id;
    int node;
} id_entry_t;

static int
s_by_id (const void *a, const void *b)
{
    const id_entry_t *x = a, *y = b;
    int c = strcmp (x->id, y->id);
    return c? c: x->node - y->node;
}

static int
s_lookup (const xxl_flow_t *flow, const char *name, size_t size)
{
    int low = 0, high = flow->nodes - 1;
    while (low <= high) {
        int mid = (low + high) / 2;
        const char *id = flow->node [flow->by_id [mid]].id;
        size_t length = strlen (id);
        int c = memcmp (id, name, length < size? length: size);
        if (c == 0)
            c = length < size? -1: length > size? 1: 0;
        if (c == 0)
            return flow->by_id [mid];
        if (c < 0)
            low = mid + 1;
        else
            high = mid - 1;
    }
    return -1;
}

int
xxl_flow_find (const xxl_flow_t *self, const char *id)
{
    assert (self && id);
    return s_lookup (self, id, strlen (id));
}

//  --- parsing -----------------------------------------------------------

//  Checks that object has only the keys of allowed (NULL-ended); 0, or -1
//  with `WHERE: unknown key "K"`
static int
s_keys_only (json_t *object, const char *const *allowed, const char *where,
             char *error, size_t errlen)
{
    const char *key;
    json_t *value;
    json_object_foreach (object, key, value) {
        const char *const *a = allowed;
        while (*a && strcmp (*a, key))
            a++;
        if (!*a) {
            char shown [48];
            flow_error (error, errlen, "%s: unknown key \"%s\"", where, s_shown (key, shown, sizeof shown));
            return -1;
        }
    }
    return 0;
}

static int
s_parse_node (xxl_flow_t *self, int i, json_t *object, char *error, size_t errlen)
{
    static const char *const keys [] = { "id", "job", "param", "join", NULL };
    char where [64], shown [48];
    snprintf (where, sizeof where, "nodes[%d]", i);
    if (!json_is_object (object)) {
        flow_error (error, errlen, "%s: not an object", where);
        return -1;
    }
    if (s_keys_only (object, keys, where, error, errlen))
        return -1;
    json_t *id = json_object_get (object, "id");
    if (!id) {
        flow_error (error, errlen, "%s: missing \"id\"", where);
        return -1;
    }
    if (!json_is_string (id)) {
        flow_error (error, errlen, "%s: \"id\" must be a string", where);
        return -1;
    }
    const char *text = json_string_value (id);
    if (!s_id_valid (text, json_string_length (id))) {
        flow_error (error, errlen, "%s: id \"%s\" must be 1 to %d letters, digits, '_' or '-'",
                    where, s_shown (text, shown, sizeof shown), XXL_FLOW_ID_MAX);
        return -1;
    }
    if (strcmp (text, "flow") == 0) {
        flow_error (error, errlen, "%s: id \"flow\" is reserved (${flow.param})", where);
        return -1;
    }
    flow_node_t *node = &self->node [i];
    node->id = strdup (text);
    if (!node->id) {
        flow_error (error, errlen, "out of memory");
        return -1;
    }
    snprintf (where, sizeof where, "node \"%s\"", text);

    json_t *job = json_object_get (object, "job");
    if (!job) {
        flow_error (error, errlen, "%s: missing \"job\"", where);
        return -1;
    }
    if (!json_is_integer (job) || json_integer_value (job) < 1) {
        flow_error (error, errlen, "%s: \"job\" must be a job id (an integer >= 1)", where);
        return -1;
    }
    node->job = json_integer_value (job);

    json_t *param = json_object_get (object, "param");
    if (param) {
        if (!json_is_string (param)) {
            flow_error (error, errlen, "%s: \"param\" must be a string", where);
            return -1;
        }
        if (json_string_length (param) > XXL_FLOW_PARAM_MAX) {
            flow_error (error, errlen, "%s: param over %d bytes", where, XXL_FLOW_PARAM_MAX);
            return -1;
        }
        node->param = strdup (json_string_value (param));
        if (!node->param) {
            flow_error (error, errlen, "out of memory");
            return -1;
        }
    }
    json_t *join = json_object_get (object, "join");
    node->join = XXL_FLOW_JOIN_ALL;
    if (join) {
        const char *value = json_is_string (join)? json_string_value (join): "";
        if (strcmp (value, "any") == 0)
            node->join = XXL_FLOW_JOIN_ANY;
        else
        if (strcmp (value, "all") != 0) {
            flow_error (error, errlen, "%s: \"join\" must be \"all\" or \"any\"", where);
            return -1;
        }
    }
    return 0;
}

//  The node an edge's end names, or -1 with the error
static int
s_edge_end (xxl_flow_t *self, json_t *object, const char *key, const char *where,
            char *error, size_t errlen)
{
    json_t *end = json_object_get (object, key);
    if (!end) {
        flow_error (error, errlen, "%s: missing \"%s\"", where, key);
        return -1;
    }
    if (!json_is_string (end)) {
        flow_error (error, errlen, "%s: \"%s\" must be a node id", where, key);
        return -1;
    }
    int node = s_lookup (self, json_string_value (end), json_string_length (end));
    if (node < 0) {
        char shown [48];
        flow_error (error, errlen, "%s: unknown node \"%s\"", where,
                    s_shown (json_string_value (end), shown, sizeof shown));
        return -1;
    }
    return node;
}

static int
s_parse_edge (xxl_flow_t *self, int i, json_t *object, char *error, size_t errlen)
{
    static const char *const keys [] = { "from", "to", "on", NULL };
    char where [32];
    snprintf (where, sizeof where, "edges[%d]", i);
    if (!json_is_object (object)) {
        flow_error (error, errlen, "%s: not an object", where);
        return -1;
    }
    if (s_keys_only (object, keys, where, error, errlen))
        return -1;
    flow_edge_t *edge = &self->edge [i];
    if ((edge->from = s_edge_end (self, object, "from", where, error, errlen)) < 0
    ||  (edge->to = s_edge_end (self, object, "to", where, error, errlen)) < 0)
        return -1;
    json_t *on = json_object_get (object, "on");
    edge->on = XXL_FLOW_ON_SUCCESS;
    if (on) {
        const char *value = json_is_string (on)? json_string_value (on): "";
        if (strcmp (value, "failure") == 0)
            edge->on = XXL_FLOW_ON_FAILURE;
        else
        if (strcmp (value, "always") == 0)
            edge->on = XXL_FLOW_ON_ALWAYS;
        else
        if (strcmp (value, "success") != 0) {
            flow_error (error, errlen, "%s: \"on\" must be \"success\", \"failure\" or \"always\"",
                        where);
            return -1;
        }
    }
    return 0;
}

//  --- the graph's arrays ------------------------------------------------

//  Fills CSR arrays of one direction: at [n + 1], edge_of [m], node_of [m]
//  (the node at the other end); edges in edge order
static void
s_csr (xxl_flow_t *self, bool in, int *at, int *edge_of, int *node_of)
{
    int n = self->nodes;
    memset (at, 0, sizeof (int) * (n + 1));
    for (int e = 0; e < self->edges; e++)
        at [(in? self->edge [e].to: self->edge [e].from) + 1]++;
    for (int i = 0; i < n; i++)
        at [i + 1] += at [i];
    //  place edges using a moving cursor per node: at [i] is advanced, then
    //  restored by shifting
    for (int e = 0; e < self->edges; e++) {
        int owner = in? self->edge [e].to: self->edge [e].from;
        int slot = at [owner]++;
        edge_of [slot] = e;
        node_of [slot] = in? self->edge [e].from: self->edge [e].to;
    }
    for (int i = n; i > 0; i--)
        at [i] = at [i - 1];
    at [0] = 0;
}

//  Names a cycle among the nodes Kahn's order could not place (unplaced
//  [i] true): from the lowest-numbered such node, following parents that
//  are unplaced too (each has one) until a node repeats.  Written forward
//  from the cycle's lowest-numbered node, "cycle: a -> b -> a"; a cycle of
//  more than 8 nodes shows its first 5 and last 2.
static void
s_name_cycle (xxl_flow_t *self, const bool *unplaced, char *error, size_t errlen)
{
    if (!error || errlen == 0)
        return;
    int n = self->nodes;
    int *seen_at = malloc (sizeof (int) * n);
    int *path = malloc (sizeof (int) * n);
    if (!seen_at || !path) {
        free (seen_at), free (path);
        flow_error (error, errlen, "cycle (out of memory to name it)");
        return;
    }
    for (int i = 0; i < n; i++)
        seen_at [i] = -1;
    int node = 0;
    while (!unplaced [node])
        node++;
    int length = 0;
    while (seen_at [node] < 0) {
        seen_at [node] = length;
        path [length++] = node;
        int next = -1;
        for (int k = self->in_at [node]; k < self->in_at [node + 1] && next < 0; k++)
            if (unplaced [self->in_node [k]])
                next = self->in_node [k];
        assert (next >= 0);
        node = next;
    }
    //  path [first..length) goes from child to parent: forward, the cycle
    //  is path [first], path [length - 1], ..., path [first + 1]
    int first = seen_at [node], size = length - first;
    int *cycle = seen_at;                   //  reused: n >= size
    for (int j = 0; j < size; j++)
        cycle [j] = path [first + (size - j) % size];
    int low = 0;
    for (int j = 1; j < size; j++)
        if (cycle [j] < cycle [low])
            low = j;
    size_t used = 0;
    flow_error (error, errlen, "cycle: ");
    for (int j = 0; j <= size; j++) {
        used = strlen (error);
        if (size > 8 && j == 5) {
            snprintf (error + used, errlen - used, " -> ...");
            j = size - 2;
            used = strlen (error);
        }
        snprintf (error + used, errlen - used, "%s%s", j? " -> ": "",
                  self->node [cycle [(low + j) % size]].id);
    }
    free (seen_at), free (path);
}

//  Topological order (Kahn's, lowest number first among the ready: a
//  min-heap of node numbers); -1 with the cycle named when there is one
static int
s_order (xxl_flow_t *self, char *error, size_t errlen)
{
    int n = self->nodes;
    int *waiting = malloc (sizeof (int) * n);   //  parents not yet placed
    int *heap = malloc (sizeof (int) * n);
    bool *unplaced = malloc (sizeof (bool) * n);
    if (!waiting || !heap || !unplaced) {
        free (waiting), free (heap), free (unplaced);
        flow_error (error, errlen, "out of memory");
        return -1;
    }
    int size = 0, placed = 0;
    for (int i = 0; i < n; i++) {
        waiting [i] = self->in_at [i + 1] - self->in_at [i];
        unplaced [i] = true;
        if (waiting [i] == 0)
            heap [size++] = i;             //  ascending: already a heap
    }
    while (size > 0) {
        int node = heap [0];
        heap [0] = heap [--size];
        for (int k = 0; ; ) {              //  sift down
            int child = 2 * k + 1, low = k;
            if (child < size && heap [child] < heap [low])
                low = child;
            if (child + 1 < size && heap [child + 1] < heap [low])
                low = child + 1;
            if (low == k)
                break;
            int t = heap [k]; heap [k] = heap [low]; heap [low] = t;
            k = low;
        }
        self->rank [node] = placed;
        self->order [placed++] = node;
        unplaced [node] = false;
        for (int k = self->out_at [node]; k < self->out_at [node + 1]; k++) {
            int child = self->out_node [k];
            if (--waiting [child] == 0) {
                int at = size++;            //  sift up
                heap [at] = child;
                while (at > 0 && heap [(at - 1) / 2] > heap [at]) {
                    int t = heap [at]; heap [at] = heap [(at - 1) / 2]; heap [(at - 1) / 2] = t;
                    at = (at - 1) / 2;
                }
            }
        }
    }
    int rc = 0;
    if (placed < n) {
        s_name_cycle (self, unplaced, error, errlen);
        rc = -1;
    }
    free (waiting), free (heap), free (unplaced);
    return rc;
}

static void
s_ancestors (xxl_flow_t *self)
{
    size_t words = self->words;
    for (int r = 0; r < self->nodes; r++) {
        int node = self->order [r];
        uint64_t *row = self->anc + (size_t) node * words;
        for (int k = self->in_at [node]; k < self->in_at [node + 1]; k++) {
            int parent = self->in_node [k];
            const uint64_t *up = self->anc + (size_t) parent * words;
            for (size_t w = 0; w < words; w++)
                row [w] |= up [w];
            row [parent / 64] |= (uint64_t) 1 << (parent % 64);
        }
    }
}

static int
s_cmp_int64 (const void *a, const void *b)
{
    int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
    return x < y? -1: x > y;
}

//  Asks job_exists once a distinct job; the first node (in node order)
//  whose job does not exist is the error
static int
s_jobs (xxl_flow_t *self, xxl_flow_job_exists_fn *job_exists, void *arg,
        char *error, size_t errlen)
{
    int n = self->nodes, distinct = 0;
    int64_t *jobs = malloc (sizeof (int64_t) * n);
    bool *exists = malloc (sizeof (bool) * n);
    if (!jobs || !exists) {
        free (jobs), free (exists);
        flow_error (error, errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < n; i++)
        jobs [i] = self->node [i].job;
    qsort (jobs, n, sizeof (int64_t), s_cmp_int64);
    for (int i = 0; i < n; i++)
        if (i == 0 || jobs [i] != jobs [i - 1]) {
            jobs [distinct] = jobs [i];
            exists [distinct++] = job_exists (arg, jobs [i]);
        }
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        int64_t *at = bsearch (&self->node [i].job, jobs, distinct, sizeof (int64_t), s_cmp_int64);
        assert (at);
        if (!exists [at - jobs]) {
            flow_error (error, errlen, "node \"%s\": unknown job %lld", self->node [i].id,
                        (long long) self->node [i].job);
            rc = -1;
        }
    }
    free (jobs), free (exists);
    return rc;
}

//  The ids sorted, and no id twice; -1 with "nodes[J]: duplicate node id"
static int
s_ids (xxl_flow_t *self, char *error, size_t errlen)
{
    int n = self->nodes;
    id_entry_t *entries = malloc (sizeof (id_entry_t) * n);
    if (!entries) {
        flow_error (error, errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < n; i++)
        entries [i] = (id_entry_t) { self->node [i].id, i };
    qsort (entries, n, sizeof (id_entry_t), s_by_id);
    int later = -1, earlier = -1;           //  the duplicate defined first
    for (int k = 0; k < n; k++) {
        self->by_id [k] = entries [k].node;
        if (k > 0 && strcmp (entries [k - 1].id, entries [k].id) == 0
        &&  (later < 0 || entries [k].node < later))
            later = entries [k].node, earlier = entries [k - 1].node;
    }
    free (entries);
    if (later >= 0) {
        flow_error (error, errlen, "nodes[%d]: duplicate node id \"%s\" (as nodes[%d])", later,
                    self->node [later].id, earlier);
        return -1;
    }
    return 0;
}

//  No second edge for a (from, to) pair: -1 naming the later edge.  O(edges):
//  seen [child] is the node whose children were last walked through it
static int
s_pairs (xxl_flow_t *self, char *error, size_t errlen)
{
    int *seen = malloc (sizeof (int) * self->nodes);
    if (!seen) {
        flow_error (error, errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < self->nodes; i++)
        seen [i] = -1;
    int later = -1;                         //  the duplicate defined first
    for (int i = 0; i < self->nodes; i++)
        for (int k = self->out_at [i]; k < self->out_at [i + 1]; k++) {
            int child = self->out_node [k];
            if (seen [child] == i && (later < 0 || self->out_edge [k] < later))
                later = self->out_edge [k];
            seen [child] = i;
        }
    free (seen);
    if (later >= 0) {
        flow_error (error, errlen, "edges[%d]: a second edge %s -> %s", later,
                    self->node [self->edge [later].from].id, self->node [self->edge [later].to].id);
        return -1;
    }
    return 0;
}

static int
s_build (xxl_flow_t *self, json_t *root, xxl_flow_job_exists_fn *job_exists, void *arg,
         char *error, size_t errlen)
{
    static const char *const keys [] = { "nodes", "edges", NULL };
    if (!json_is_object (root)) {
        flow_error (error, errlen, "a workflow is an object {\"nodes\": [...], \"edges\": [...]}");
        return -1;
    }
    if (s_keys_only (root, keys, "workflow", error, errlen))
        return -1;
    json_t *nodes = json_object_get (root, "nodes");
    json_t *edges = json_object_get (root, "edges");
    if (!json_is_array (nodes)) {
        flow_error (error, errlen, nodes? "\"nodes\" must be an array": "missing \"nodes\"");
        return -1;
    }
    if (edges && !json_is_array (edges)) {
        flow_error (error, errlen, "\"edges\" must be an array");
        return -1;
    }
    size_t n = json_array_size (nodes), m = edges? json_array_size (edges): 0;
    if (n == 0) {
        flow_error (error, errlen, "no nodes: a workflow has at least one");
        return -1;
    }
    if (n > XXL_FLOW_NODES_MAX) {
        flow_error (error, errlen, "more than %d nodes (%zu)", XXL_FLOW_NODES_MAX, n);
        return -1;
    }
    if (m > XXL_FLOW_EDGES_MAX) {
        flow_error (error, errlen, "more than %d edges (%zu)", XXL_FLOW_EDGES_MAX, m);
        return -1;
    }
    self->nodes = (int) n;
    self->edges = (int) m;
    self->words = (n + 63) / 64;
    self->node = calloc (n, sizeof (flow_node_t));
    self->edge = calloc (m + 1, sizeof (flow_edge_t));
    self->order = calloc (n, sizeof (int));
    self->rank = calloc (n, sizeof (int));
    self->by_id = calloc (n, sizeof (int));
    self->in_at = calloc (n + 1, sizeof (int));
    self->out_at = calloc (n + 1, sizeof (int));
    self->in_edge = calloc (m + 1, sizeof (int));
    self->in_node = calloc (m + 1, sizeof (int));
    self->out_edge = calloc (m + 1, sizeof (int));
    self->out_node = calloc (m + 1, sizeof (int));
    self->anc = calloc (n * self->words, sizeof (uint64_t));
    if (!self->node || !self->edge || !self->order || !self->rank || !self->by_id
    ||  !self->in_at || !self->out_at || !self->in_edge || !self->in_node
    ||  !self->out_edge || !self->out_node || !self->anc) {
        flow_error (error, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if (s_parse_node (self, (int) i, json_array_get (nodes, i), error, errlen))
            return -1;
    if (s_ids (self, error, errlen))
        return -1;
    for (size_t i = 0; i < m; i++)
        if (s_parse_edge (self, (int) i, json_array_get (edges, i), error, errlen))
            return -1;
    s_csr (self, true, self->in_at, self->in_edge, self->in_node);
    s_csr (self, false, self->out_at, self->out_edge, self->out_node);
    if (s_pairs (self, error, errlen) || s_order (self, error, errlen))
        return -1;
    s_ancestors (self);
    for (int i = 0; i < self->nodes; i++) {
        flow_node_t *node = &self->node [i];
        if (!node->param)
            continue;
        char why [XXL_FLOW_ERROR_MAX];
        if (tpl_parse (&node->tpl, self, i, node->param, strlen (node->param), s_lookup,
                       why, sizeof why)) {
            flow_error (error, errlen, "node \"%s\": param: %s", node->id, why);
            return -1;
        }
    }
    if (job_exists && s_jobs (self, job_exists, arg, error, errlen))
        return -1;
    return 0;
}

xxl_flow_t *
xxl_flow_new (const char *text, size_t size, xxl_flow_job_exists_fn *job_exists, void *arg,
              char *error, size_t errlen)
{
    if (error && errlen)
        *error = 0;
    if (!text) {
        flow_error (error, errlen, "no definition");
        return NULL;
    }
    if (size > XXL_FLOW_TEXT_MAX) {
        flow_error (error, errlen, "definition over %d bytes", XXL_FLOW_TEXT_MAX);
        return NULL;
    }
    json_error_t why;
    json_t *root = json_loadb (text, size, JSON_REJECT_DUPLICATES, &why);
    if (!root) {
        //  jansson's text may quote the input: printable ASCII only
        for (char *c = why.text; *c; c++)
            if (*c < 0x20 || *c >= 0x7f)
                *c = '?';
        flow_error (error, errlen, "invalid JSON: %s (line %d, column %d)", why.text, why.line,
                    why.column);
        return NULL;
    }
    xxl_flow_t *self = calloc (1, sizeof (xxl_flow_t));
    if (!self)
        flow_error (error, errlen, "out of memory");
    else
    if (s_build (self, root, job_exists, arg, error, errlen))
        xxl_flow_destroy (&self);
    json_decref (root);
    return self;
}

char *
xxl_flow_json (const xxl_flow_t *self)
{
    assert (self);
    json_t *root = json_object ();
    json_t *nodes = json_array ();
    json_t *edges = json_array ();
    bool ok = root && nodes && edges;
    for (int i = 0; ok && i < self->nodes; i++) {
        const flow_node_t *node = &self->node [i];
        json_t *object = json_object ();
        ok = object
          && json_object_set_new (object, "id", json_string (node->id)) == 0
          && json_object_set_new (object, "job", json_integer (node->job)) == 0
          && (!node->param || json_object_set_new (object, "param", json_string (node->param)) == 0)
          && json_object_set_new (object, "join", json_string (xxl_flow_join_name (node->join))) == 0
          && json_array_append_new (nodes, object) == 0;
    }
    for (int e = 0; ok && e < self->edges; e++) {
        const flow_edge_t *edge = &self->edge [e];
        json_t *object = json_object ();
        ok = object
          && json_object_set_new (object, "from", json_string (self->node [edge->from].id)) == 0
          && json_object_set_new (object, "to", json_string (self->node [edge->to].id)) == 0
          && json_object_set_new (object, "on", json_string (xxl_flow_on_name (edge->on))) == 0
          && json_array_append_new (edges, object) == 0;
    }
    char *text = NULL;
    if (ok && json_object_set (root, "nodes", nodes) == 0 && json_object_set (root, "edges", edges) == 0)
        text = json_dumps (root, JSON_COMPACT);
    json_decref (nodes);
    json_decref (edges);
    json_decref (root);
    return text;
}

//  --- accessors -----------------------------------------------------------

int
xxl_flow_nodes (const xxl_flow_t *self)
{
    assert (self);
    return self->nodes;
}

int
xxl_flow_edges (const xxl_flow_t *self)
{
    assert (self);
    return self->edges;
}

const char *
xxl_flow_id (const xxl_flow_t *self, int node)
{
    assert (self && node >= 0 && node < self->nodes);
    return self->node [node].id;
}

int64_t
xxl_flow_job (const xxl_flow_t *self, int node)
{
    assert (self && node >= 0 && node < self->nodes);
    return self->node [node].job;
}

const char *
xxl_flow_param (const xxl_flow_t *self, int node)
{
    assert (self && node >= 0 && node < self->nodes);
    return self->node [node].param;
}

xxl_flow_join_t
xxl_flow_join (const xxl_flow_t *self, int node)
{
    assert (self && node >= 0 && node < self->nodes);
    return self->node [node].join;
}

bool
xxl_flow_uses_job (const xxl_flow_t *self, int64_t job)
{
    assert (self);
    for (int i = 0; i < self->nodes; i++)
        if (self->node [i].job == job)
            return true;
    return false;
}

void
xxl_flow_edge (const xxl_flow_t *self, int edge, int *from, int *to, xxl_flow_on_t *on)
{
    assert (self && edge >= 0 && edge < self->edges);
    if (from)
        *from = self->edge [edge].from;
    if (to)
        *to = self->edge [edge].to;
    if (on)
        *on = self->edge [edge].on;
}

const int *
xxl_flow_order (const xxl_flow_t *self)
{
    assert (self);
    return self->order;
}

int
xxl_flow_rank (const xxl_flow_t *self, int node)
{
    assert (self && node >= 0 && node < self->nodes);
    return self->rank [node];
}

const int *
xxl_flow_parents (const xxl_flow_t *self, int node, int *count)
{
    assert (self && node >= 0 && node < self->nodes && count);
    *count = self->in_at [node + 1] - self->in_at [node];
    return self->in_node + self->in_at [node];
}

const int *
xxl_flow_in_edges (const xxl_flow_t *self, int node, int *count)
{
    assert (self && node >= 0 && node < self->nodes && count);
    *count = self->in_at [node + 1] - self->in_at [node];
    return self->in_edge + self->in_at [node];
}

const int *
xxl_flow_children (const xxl_flow_t *self, int node, int *count)
{
    assert (self && node >= 0 && node < self->nodes && count);
    *count = self->out_at [node + 1] - self->out_at [node];
    return self->out_node + self->out_at [node];
}

const int *
xxl_flow_out_edges (const xxl_flow_t *self, int node, int *count)
{
    assert (self && node >= 0 && node < self->nodes && count);
    *count = self->out_at [node + 1] - self->out_at [node];
    return self->out_edge + self->out_at [node];
}

bool
xxl_flow_is_ancestor (const xxl_flow_t *self, int a, int b)
{
    assert (self && a >= 0 && a < self->nodes && b >= 0 && b < self->nodes);
    return (self->anc [(size_t) b * self->words + a / 64] >> (a % 64)) & 1;
}
