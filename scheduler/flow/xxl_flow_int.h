/*  xxl_flow_int.h -- the inside of a workflow graph, shared by the files
    of scheduler/flow/ and no one else.

      xxl_flow.c        the definition: JSON in and out, validation, the
                        graph's arrays (topological order, parents,
                        children, ancestors)
      xxl_flow_param.c  param templates: parsed once when the graph is
                        made, rendered per run (xxl_flow_render)
      xxl_flow_rules.c  a run's states: the decisions (xxl_flow_rules.h)

    A template is kept parsed: its literal text with the escapes undone,
    and the pieces that make it up, in order.  Invariant: a piece's text
    lies inside lit; a TPL_MSG piece names an ancestor of its node.
*/

#ifndef XXL_FLOW_INT_H_INCLUDED
#define XXL_FLOW_INT_H_INCLUDED

#include "xxl_flow.h"

typedef enum {
    TPL_TEXT,                               //  lit [start, start + size)
    TPL_PARAM,                              //  ${flow.param}
    TPL_RUN_ID,                             //  ${flow.runId}
    TPL_TIME,                               //  ${flow.time}
    TPL_MSG                                 //  ${NODE.msg}, node
} tpl_kind_t;

typedef struct {
    tpl_kind_t kind;
    int node;                               //  TPL_MSG: the node named
    size_t start, size;                     //  TPL_TEXT: the piece of lit
} tpl_piece_t;

typedef struct {
    char *lit;                              //  the literal text, unescaped
    tpl_piece_t *pieces;
    int count;
} tpl_t;

typedef struct {
    char *id;
    int64_t job;
    char *param;                            //  the template as given; NULL: none
    xxl_flow_join_t join;
    tpl_t tpl;
} flow_node_t;

typedef struct {
    int from, to;
    xxl_flow_on_t on;
} flow_edge_t;

struct _xxl_flow_t {
    int nodes, edges;
    flow_node_t *node;
    flow_edge_t *edge;
    int *order;                             //  topological order
    int *rank;                              //  node -> place in order
    int *by_id;                             //  nodes sorted by id (lookup)
    //  CSR: node i's edges in are in_edge [in_at [i] .. in_at [i + 1]),
    //  from the nodes in_node [...]; likewise out
    int *in_at, *in_edge, *in_node;
    int *out_at, *out_edge, *out_node;
    //  ancestors: bit a of row b (words a row) is set when a is an ancestor of b
    uint64_t *anc;
    size_t words;
};

//  Writes a refusal's reason into error, cut to errlen; nothing when
//  error is NULL or errlen 0
void flow_error (char *error, size_t errlen, const char *format, ...)
    __attribute__ ((format (printf, 3, 4)));

//  Looks up a node by the id text [name, name + size); -1 if none
typedef int (tpl_lookup_fn) (const xxl_flow_t *flow, const char *name, size_t size);

//  Parses text (size bytes, no NUL inside) into tpl for node `node` of
//  flow: 0, or -1 with the reason in error ("unknown variable ${X}",
//  "${X.msg}: X is not an ancestor of N", "unterminated ${", "out of
//  memory").  Needs flow's ids and ancestors made.  tpl is zeroed first.
int tpl_parse (tpl_t *tpl, const xxl_flow_t *flow, int node, const char *text, size_t size,
               tpl_lookup_fn *lookup, char *error, size_t errlen);
void tpl_free (tpl_t *tpl);
//  A user's text [text, text + size) fit for an error, into out (more than
//  44 bytes): printable ASCII kept, any other byte '?', cut after 40
//  bytes with "..."; returns out
const char *tpl_shown (char *out, size_t out_size, const char *text, size_t size);

#endif
