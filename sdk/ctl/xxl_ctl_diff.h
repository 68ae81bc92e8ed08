/*  xxl_ctl_diff.h -- a unified line diff of two texts, for `glue diff`.

    Lines are matched by a longest common subsequence after the common
    head and tail are taken off; hunks carry up to 3 lines of context and
    are joined when closer than twice that.  When what is left would need
    a table of more than XXL_CTL_DIFF_CELLS cells, the diff says so in
    one line instead.
*/

#ifndef XXL_CTL_DIFF_H_INCLUDED
#define XXL_CTL_DIFF_H_INCLUDED

#include <stdio.h>

#define XXL_CTL_DIFF_CELLS      (4 * 1000 * 1000)   //  LCS table bound
#define XXL_CTL_DIFF_CONTEXT    3

//  Writes a unified diff of a_text (old) and b_text (new) to out, with
//  the names in its `---`/`+++` header; nothing when they are equal.
//  Splits both texts in place (their newlines become NULs).  Returns 1
//  when they differ, 0 when not, -1 when out of memory.
int xxl_ctl_diff (FILE *out, const char *a_name, char *a_text, const char *b_name,
                  char *b_text);

#endif
