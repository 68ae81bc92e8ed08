/*  fuzz_mysqldump.c -- libFuzzer target: xxl-ctl import's mysqldump reader
    (sdk/ctl/xxl_mysqldump.h).

    Input: a dump's text, read through a FILE.  Every row handed out must
    keep the reader's bounds (at most XXL_DUMP_MAX_COLS values, each at
    most XXL_DUMP_MAX_VALUE bytes and NUL-terminated, a named column each);
    an error must be a "line N: ..." text and stay the answer.  See
    docs/faults.md, "Fuzzing".
*/

#include "xxl_mysqldump.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_ASSERT(cond) do { if (!(cond)) { \
    fprintf (stderr, "fuzz_mysqldump: %s:%d: %s\n", __FILE__, __LINE__, #cond); abort (); } \
} while (0)

static const char *const s_tables [] = {
    "t", "xxl_job_group", "xxl_job_info", "xxl_job_logglue", NULL
};

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    FILE *file = fmemopen ((void *) data, size, "r");
    if (!file)
        return 0;
    xxl_dump_t *dump = xxl_dump_new (file, s_tables);
    const xxl_dump_row_t *row;
    int rc;
    size_t line = 0;
    while ((rc = xxl_dump_next (dump, &row)) == 1) {
        S_ASSERT (row->count > 0 && row->count <= XXL_DUMP_MAX_COLS);
        S_ASSERT (row->line >= line);
        line = row->line;
        for (size_t i = 0; i < row->count; i++) {
            S_ASSERT (row->columns [i] && *row->columns [i]);
            S_ASSERT (row->values [i].size <= XXL_DUMP_MAX_VALUE);
            S_ASSERT (row->values [i].data [row->values [i].size] == 0);
            S_ASSERT (xxl_dump_get (row, row->columns [i]) != NULL);
        }
    }
    if (rc < 0) {
        S_ASSERT (strncmp (xxl_dump_error (dump), "line ", 5) == 0);
        S_ASSERT (xxl_dump_next (dump, &row) == -1);
    }
    else
        S_ASSERT (*xxl_dump_error (dump) == 0);
    xxl_dump_destroy (&dump);
    fclose (file);
    return 0;
}
