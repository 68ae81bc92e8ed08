/*  xxl_ctl_diff.c -- a unified line diff of two texts, for `glue diff`.
*/

#include "xxl_ctl_diff.h"

#include <czmq.h>

//  Text split into lines (in place; a final newline ends the last line)
typedef struct {
    char **lines;
    size_t count;
} ctl_lines_t;

static int
s_lines_split (char *text, ctl_lines_t *out)
{
    size_t cap = 1;
    for (const char *p = text; *p; p++)
        cap += *p == '\n';
    out->lines = (char **) calloc (cap, sizeof (char *));
    out->count = 0;
    if (!out->lines)
        return -1;
    char *p = text;
    while (*p) {
        out->lines [out->count++] = p;
        char *nl = strchr (p, '\n');
        if (!nl)
            break;
        *nl = 0;
        p = nl + 1;
    }
    return 0;
}

int
xxl_ctl_diff (FILE *out, const char *a_name, char *a_text, const char *b_name, char *b_text)
{
    ctl_lines_t a, b;
    if (s_lines_split (a_text, &a))
        return -1;
    if (s_lines_split (b_text, &b)) {
        free (a.lines);
        return -1;
    }
    size_t head = 0;
    while (head < a.count && head < b.count && streq (a.lines [head], b.lines [head]))
        head++;
    size_t tail = 0;
    while (tail < a.count - head && tail < b.count - head
    &&     streq (a.lines [a.count - 1 - tail], b.lines [b.count - 1 - tail]))
        tail++;
    size_t n = a.count - head - tail, m = b.count - head - tail;
    int rc = 0;
    if (n == 0 && m == 0)
        goto done;
    rc = 1;
    fprintf (out, "--- %s\n+++ %s\n", a_name, b_name);
    if ((n + 1) * (m + 1) > XXL_CTL_DIFF_CELLS) {
        fprintf (out, "@@ the versions differ in %zu and %zu lines: too many for a line diff @@\n",
                 n, m);
        goto done;
    }
    //  lcs [i][j]: the LCS of a's middle from i and b's middle from j
    uint32_t *lcs = (uint32_t *) calloc ((n + 1) * (m + 1), sizeof (uint32_t));
    //  The edit script over all lines: ' ' both, '-' a only, '+' b only
    size_t total = head + n + m + tail;
    char *ops = (char *) malloc (total + 1);
    size_t *ai = (size_t *) malloc ((total + 1) * sizeof (size_t));
    size_t *bi = (size_t *) malloc ((total + 1) * sizeof (size_t));
    if (!lcs || !ops || !ai || !bi) {
        free (lcs);
        free (ops);
        free (ai);
        free (bi);
        rc = -1;
        goto done;
    }
    #define LCS(i, j) lcs [(i) * (m + 1) + (j)]
    for (size_t i = n; i-- > 0;)
        for (size_t j = m; j-- > 0;)
            LCS (i, j) = streq (a.lines [head + i], b.lines [head + j])? LCS (i + 1, j + 1) + 1
                       : LCS (i + 1, j) >= LCS (i, j + 1)? LCS (i + 1, j): LCS (i, j + 1);
    size_t k = 0, i = 0, j = 0;
    for (size_t h = 0; h < head; h++, k++) {
        ops [k] = ' ';
        ai [k] = h;
        bi [k] = h;
    }
    while (i < n || j < m) {
        if (i < n && j < m && streq (a.lines [head + i], b.lines [head + j])) {
            ops [k] = ' ', ai [k] = head + i++, bi [k] = head + j++;
        }
        else
        if (j >= m || (i < n && LCS (i + 1, j) >= LCS (i, j + 1))) {
            ops [k] = '-', ai [k] = head + i++, bi [k] = head + j;
        }
        else {
            ops [k] = '+', ai [k] = head + i, bi [k] = head + j++;
        }
        k++;
    }
    #undef LCS
    for (size_t t = 0; t < tail; t++, k++) {
        ops [k] = ' ';
        ai [k] = head + n + t;
        bi [k] = head + m + t;
    }
    total = k;
    //  Hunks: changes with up to 3 lines of context, joined when closer
    //  than twice that
    size_t at = 0;
    while (at < total) {
        while (at < total && ops [at] == ' ')
            at++;
        if (at == total)
            break;
        size_t first = at, last = at;
        for (size_t x = at + 1; x < total && x <= last + 2 * XXL_CTL_DIFF_CONTEXT; x++)
            if (ops [x] != ' ')
                last = x;
        size_t from = first > XXL_CTL_DIFF_CONTEXT? first - XXL_CTL_DIFF_CONTEXT: 0;
        size_t to = last + XXL_CTL_DIFF_CONTEXT + 1 < total? last + XXL_CTL_DIFF_CONTEXT + 1: total;
        size_t a_count = 0, b_count = 0;
        for (size_t x = from; x < to; x++) {
            a_count += ops [x] != '+';
            b_count += ops [x] != '-';
        }
        size_t a_start = ai [from] + (a_count? 1: 0);
        size_t b_start = bi [from] + (b_count? 1: 0);
        fprintf (out, "@@ -%zu,%zu +%zu,%zu @@\n", a_start, a_count, b_start, b_count);
        for (size_t x = from; x < to; x++)
            fprintf (out, "%c%s\n", ops [x], ops [x] == '+'? b.lines [bi [x]]: a.lines [ai [x]]);
        at = to;
    }
    free (lcs);
    free (ops);
    free (ai);
    free (bi);
done:
    free (a.lines);
    free (b.lines);
    return rc;
}

