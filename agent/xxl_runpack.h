/*  xxl_runpack.h -- the day's pack of short run logs.

    A run log file per run (xxl_runlog.h) costs a file creation in a folder
    that holds the whole day's runs (measured: docs/performance.md).
    An in-process run whose whole log is small and that nobody read while it
    ran has its log appended, when it ends, to its day's pack instead:

        {logdir}/yyyy-mm-dd/runs.pack   each run: a header line
                                        "### logId N, L bytes" then its L
                                        bytes of stamped lines (plain text:
                                        grep and less work on it)
        {logdir}/yyyy-mm-dd/runs.idx    16 bytes a run: logId and the
                                        header's offset in runs.pack, both
                                        int64 in the host's byte order

    Adds are buffered and written with one write() per file and flush, under
    an flock on runs.pack, so that two agents sharing a log folder keep
    their offsets right.  A reader (xxl_runpack_find) trusts an index entry
    only when the header at its offset names the same logId, so a torn
    write after a crash loses at most the runs of that write, never shows
    another run's lines.  Retention removes a day's folder, packs included.
*/

#ifndef XXL_RUNPACK_H_INCLUDED
#define XXL_RUNPACK_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct _xxl_runpack_t xxl_runpack_t;

//  Largest run log a pack takes; a longer one gets its own file
#define XXL_RUNPACK_RUN_MAX     (64 * 1024)

//  Creates a pack writer for logdir (copied).  NULL if out of memory.
xxl_runpack_t *xxl_runpack_new (const char *logdir);

//  Writes what is buffered, closes the files and frees.  Nulls *self_p.
void xxl_runpack_destroy (xxl_runpack_t **self_p);

//  Adds a run's whole log (len bytes of complete lines, at most
//  XXL_RUNPACK_RUN_MAX) to the pack of the day of log_date_time, as
//  xxl_runlog_path dates it.  Buffered: readers see it after the next
//  xxl_runpack_flush (made by adds when the buffer is full).  Thread-safe.
//  Returns 0, or -1 when the pack cannot take it (too long, out of memory,
//  the day's files cannot be opened): the caller then writes the run's own
//  file.
int xxl_runpack_add (xxl_runpack_t *self, int64_t log_id, int64_t log_date_time,
                     const char *text, size_t len);

//  Writes what is buffered and closes the files of days not added to for
//  a minute.  Thread-safe.  Returns 0, or -1 if a write failed (logged; the
//  runs of that write are lost from the pack).
int xxl_runpack_flush (xxl_runpack_t *self);

//  Finds a run's log in the pack of its day: returns its text, malloc'd and
//  NUL-terminated (length in *len if len is not NULL), or NULL when the day
//  has no pack or the pack does not hold the run.  The newest entry for a
//  logId wins.  Reads only what was flushed.
char *xxl_runpack_find (const char *logdir, int64_t log_id, int64_t log_date_time,
                        size_t *len);

#ifdef __cplusplus
}
#endif

#endif
