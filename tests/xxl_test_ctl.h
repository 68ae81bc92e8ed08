/*  xxl_test_ctl.h -- running xxl-ctl in-process from a C test.

    xxl_test_ctl runs xxl_ctl_main on the words of line, split at sep (at
    most 14 of them), then `last` when not NULL, and returns its exit
    status; with out its standard output is kept in *out (the caller
    frees), else dropped; its error output is dropped.
*/

#ifndef XXL_TEST_CTL_H_INCLUDED
#define XXL_TEST_CTL_H_INCLUDED

#include "xxl_ctl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline int
xxl_test_ctl (const char *line, const char *sep, const char *last, char **out)
{
    char *copy = strdup (line), *argv [17], *save = NULL;
    int argc = 0;
    argv [argc++] = (char *) "xxl-ctl";
    for (char *word = strtok_r (copy, sep, &save); word && argc < 15;
         word = strtok_r (NULL, sep, &save))
        argv [argc++] = word;
    if (last)
        argv [argc++] = (char *) last;
    argv [argc] = NULL;
    size_t size = 0;
    FILE *text = out? open_memstream (out, &size): NULL;
    FILE *null = fopen ("/dev/null", "w");
    int rc = xxl_ctl_main (argc, argv, text? text: null, null);
    fclose (null);
    if (text)
        fclose (text);
    free (copy);
    return rc;
}

#endif
