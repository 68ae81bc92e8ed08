/*  xxl_glue.h -- GLUE scripts: their types, source files and interpreters.

    A GLUE run's script is written once per job and version to
    {logdir}/gluesource/{jobId}_{glueUpdatetime}.{ext} (sh, py, js, php,
    ps1), mode 0700, through a temporary file renamed into place, and run
    as INTERPRETER FILE PARAMS SHARD_INDEX SHARD_TOTAL.  The interpreter is
    the type's (xxl_executor_config_t.interpreters, default bash, python3,
    node, php, pwsh, and python2 for GLUE_PYTHON2, as XXL-JOB's: GLUE_SHELL
    runs with bash), found in PATH once, at xxl_glue_new; a script starting
    with "#!" runs with the interpreter its first line names instead, its
    words split at blanks (as env -S would), so "#!/usr/bin/env python3 -u"
    works.

    Ownership: the glue copies logdir and the interpreter names.  Buffers
    passed in stay the caller's; the words xxl_glue_command returns point
    into the caller's line buffer.
    Threads: read-only after xxl_glue_new, so any number of worker threads
    may call it at once.  Two writers of the same source both write a
    temporary file of their own (named by thread id), and either rename
    wins with the same text.
    Errors: xxl_glue_new returns NULL when out of memory; the others
    return -1 with the reason in msg, as the run's handleMsg.
*/

#ifndef XXL_GLUE_H_INCLUDED
#define XXL_GLUE_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include "xxl_executor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct _xxl_glue_t xxl_glue_t;

//  Words of a "#!" line that count at most; a command has at most this
//  many words of interpreter, then the script and its three arguments
#define XXL_GLUE_WORDS  32

//  Creates the glue of an executor: sources in {logdir}/gluesource,
//  interpreters per XXL_GLUE_* index (NULL or a NULL entry: the default),
//  each one without a slash looked up in PATH now (a spawn by name would
//  try each PATH folder for every run; one that is not installed now is
//  looked for at each run, and its absence reported then).  NULL when out
//  of memory.
xxl_glue_t *xxl_glue_new (const char *logdir, const char *const interpreters [XXL_GLUE_COUNT]);

//  Frees the glue (its source files stay).  Nulls *self_p.
void xxl_glue_destroy (xxl_glue_t **self_p);

//  The XXL_GLUE_* index of a glueType name ("BEAN", "GLUE_SHELL", ...;
//  NULL or "": XXL_GLUE_BEAN), or -1 when it is no glue type.
int xxl_glue_type (const char *name);

//  The glueType name of an XXL_GLUE_* index.
const char *xxl_glue_name (int type);

//  Writes the source of the job's version into its file, unless the file
//  is there already; its path goes into path.  Returns 0, or -1 with msg.
int xxl_glue_write (xxl_glue_t *self, int type, int64_t job_id, int64_t glue_updatetime,
                    const char *source, char *path, size_t pathlen,
                    char *msg, size_t msglen);

//  The interpreter words that run source: its "#!" line's, split in line
//  (a copy of at most linelen - 1 bytes of it), or the type's interpreter.
//  Fills words [0..n-1] and returns n; words has room for XXL_GLUE_WORDS
//  + 5 (the caller appends the script's path, its three arguments and
//  NULL).  -1 with msg when the "#!" line names a program that is not
//  there: "interpreter 'X' not found (the script's first line: #!...)".
int xxl_glue_command (xxl_glue_t *self, int type, const char *source,
                      char *line, size_t linelen, char *words [],
                      char *msg, size_t msglen);

#ifdef __cplusplus
}
#endif

#endif
