/*  xxl_flow_param.c -- a node's param template: parsed once when the graph
    is made (every variable known, every ${NODE.msg} an ancestor), rendered
    per run (xxl_flow_render).  The syntax is in xxl_flow.h.
*/

#include "xxl_flow_int.h"

#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
tpl_free (tpl_t *tpl)
{
    free (tpl->lit);
    free (tpl->pieces);
    memset (tpl, 0, sizeof *tpl);
}

//  Adds a piece.  Pieces never outnumber the text's bytes + 1 (each takes
//  at least one byte of the text), so tpl_parse sizes the array once.
static void
s_piece (tpl_t *tpl, tpl_kind_t kind, int node, size_t start, size_t size)
{
    tpl->pieces [tpl->count++] = (tpl_piece_t) { kind, node, start, size };
}

const char *
tpl_shown (char *out, size_t out_size, const char *name, size_t size)
{
    assert (out_size > 44);
    size_t i = 0;
    for (; i < size && i < 40; i++)
        out [i] = (name [i] >= 0x20 && name [i] < 0x7f)? name [i]: '?';
    if (i < size)
        memcpy (out + i, "...", 3), i += 3;
    out [i] = 0;
    return out;
}

int
tpl_parse (tpl_t *tpl, const xxl_flow_t *flow, int node, const char *text, size_t size,
           tpl_lookup_fn *lookup, char *error, size_t errlen)
{
    memset (tpl, 0, sizeof *tpl);
    tpl->lit = malloc (size + 1);
    tpl->pieces = malloc (sizeof (tpl_piece_t) * (size + 1));
    if (!tpl->lit || !tpl->pieces) {
        tpl_free (tpl);
        snprintf (error, errlen, "out of memory");
        return -1;
    }
    size_t used = 0, start = 0;             //  lit's size; the open text piece
    size_t i = 0;
    while (i < size) {
        if (text [i] != '$') {
            tpl->lit [used++] = text [i++];
            continue;
        }
        //  a run of dollars: before '{', each "$$" is one '$' and an odd
        //  last '$' opens a variable; before anything else, itself
        size_t run = 0;
        while (i + run < size && text [i + run] == '$')
            run++;
        bool brace = i + run < size && text [i + run] == '{';
        for (size_t k = 0; k < (brace? run / 2: run); k++)
            tpl->lit [used++] = '$';
        i += run;
        if (!brace)
            continue;
        if (run % 2 == 0) {
            tpl->lit [used++] = '{';
            i++;
            continue;
        }
        i--;                                //  at the variable's '$'
        const char *name = text + i + 2;
        const char *end = memchr (name, '}', size - i - 2);
        if (!end) {
            snprintf (error, errlen, "unterminated ${ at byte %zu (write $${ for a literal ${)", i);
            tpl_free (tpl);
            return -1;
        }
        size_t length = (size_t) (end - name);
        char shown [48];
        tpl_shown (shown, sizeof shown, name, length);
        tpl_kind_t kind;
        int named = -1;
        if (length == 10 && memcmp (name, "flow.param", 10) == 0)
            kind = TPL_PARAM;
        else
        if (length == 10 && memcmp (name, "flow.runId", 10) == 0)
            kind = TPL_RUN_ID;
        else
        if (length == 9 && memcmp (name, "flow.time", 9) == 0)
            kind = TPL_TIME;
        else
        if (length > 4 && memcmp (name + length - 4, ".msg", 4) == 0
        &&  memchr (name, '.', length - 4) == NULL
        &&  !(length == 8 && memcmp (name, "flow", 4) == 0)) {
            kind = TPL_MSG;
            named = lookup (flow, name, length - 4);
            if (named < 0) {
                snprintf (error, errlen, "${%s}: no node \"%.*s\"", shown,
                          (int) (length - 4 > 40? 40: length - 4), shown);
                tpl_free (tpl);
                return -1;
            }
            if (!xxl_flow_is_ancestor (flow, named, node)) {
                snprintf (error, errlen, "${%s}: %s is not an ancestor of %s", shown,
                          xxl_flow_id (flow, named), xxl_flow_id (flow, node));
                tpl_free (tpl);
                return -1;
            }
        }
        else {
            snprintf (error, errlen, "unknown variable ${%s} (known: ${flow.param}, "
                      "${flow.runId}, ${flow.time}, ${NODE.msg})", shown);
            tpl_free (tpl);
            return -1;
        }
        if (used > start)
            s_piece (tpl, TPL_TEXT, -1, start, used - start);
        s_piece (tpl, kind, named, 0, 0);
        start = used;
        i += 2 + length + 1;
    }
    if (used > start)
        s_piece (tpl, TPL_TEXT, -1, start, used - start);
    tpl->lit [used] = 0;
    return 0;
}

typedef struct {
    char *data;
    size_t size, room;
    bool over;
} buffer_t;

//  Appends unless the whole would pass XXL_FLOW_PARAM_MAX (then over)
static int
s_append (buffer_t *buffer, const char *data, size_t size)
{
    if (buffer->over || size > XXL_FLOW_PARAM_MAX - buffer->size) {
        buffer->over = true;
        return -1;
    }
    if (buffer->size + size + 1 > buffer->room) {
        size_t room = buffer->room? buffer->room: 64;
        while (room < buffer->size + size + 1)
            room *= 2;
        char *data_new = realloc (buffer->data, room);
        if (!data_new)
            return -1;
        buffer->data = data_new;
        buffer->room = room;
    }
    memcpy (buffer->data + buffer->size, data, size);
    buffer->size += size;
    buffer->data [buffer->size] = 0;
    return 0;
}

char *
xxl_flow_render (const xxl_flow_t *self, int node, const xxl_flow_vars_t *vars,
                 char *error, size_t errlen)
{
    assert (self && node >= 0 && node < self->nodes && vars);
    if (error && errlen)
        *error = 0;
    const flow_node_t *owner = &self->node [node];
    if (!owner->param)
        return NULL;
    buffer_t buffer = { NULL, 0, 0, false };
    int rc = s_append (&buffer, "", 0);
    for (int k = 0; k < owner->tpl.count && rc == 0; k++) {
        const tpl_piece_t *piece = &owner->tpl.pieces [k];
        char number [24];
        const char *value = NULL;
        switch (piece->kind) {
            case TPL_TEXT:
                rc = s_append (&buffer, owner->tpl.lit + piece->start, piece->size);
                continue;
            case TPL_PARAM:
                value = vars->param;
                break;
            case TPL_RUN_ID:
                snprintf (number, sizeof number, "%" PRId64, vars->run_id);
                value = number;
                break;
            case TPL_TIME:
                snprintf (number, sizeof number, "%" PRId64, vars->time_ms);
                value = number;
                break;
            case TPL_MSG:
                value = vars->msg? vars->msg (vars->arg, piece->node): NULL;
                break;
        }
        if (value)
            rc = s_append (&buffer, value, strlen (value));
    }
    if (rc == 0)
        return buffer.data;
    free (buffer.data);
    if (error && errlen) {
        if (buffer.over)
            snprintf (error, errlen, "param over %d bytes after substitution", XXL_FLOW_PARAM_MAX);
        else
            snprintf (error, errlen, "out of memory");
    }
    return NULL;
}
