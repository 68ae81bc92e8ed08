/*  xxl_logread.c -- reads a run's log wherever it is.

    The run's own file (xxl_runlog.h) if it has one, else its record in
    the day's pack (xxl_runpack.h), read the same way.  Reading is by line
    number for the scheduler's LOG paging; only complete lines are
    returned, so that a reader following a running log never sees half a
    line.  Above both: calls go from here down to xxl_runlog and
    xxl_runpack, never back.  Called by the agent's LOG request and tests.
*/

#define _GNU_SOURCE
#include "xxl_logread.h"
#include "xxl_runlog.h"
#include "xxl_runpack.h"

#include <czmq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *
xxl_logread (const char *logdir, int64_t log_id, int64_t log_date_time,
             int from_line, int *to_line, char *err, size_t errlen)
{
    return xxl_logread_max (logdir, log_id, log_date_time, from_line, 0,
                            to_line, err, errlen);
}

char *
xxl_logread_max (const char *logdir, int64_t log_id, int64_t log_date_time,
                 int from_line, size_t max_bytes, int *to_line,
                 char *err, size_t errlen)
{
    char path [4096];
    if (from_line < 1)
        from_line = 1;
    if (to_line)
        *to_line = from_line - 1;
    if (max_bytes == 0)
        max_bytes = XXL_LOGREAD_MAX;
    if (!logdir || xxl_runlog_path (logdir, log_id, log_date_time, path, sizeof path)) {
        if (err && errlen)
            snprintf (err, errlen, "log file not found: invalid path");
        return NULL;
    }
    FILE *file = fopen (path, "re");
    //  No file of its own: the run's log may be in its day's pack
    size_t packed_len = 0;
    char *packed = file? NULL: xxl_runpack_find (logdir, log_id, log_date_time, &packed_len);
    if (packed)
        file = fmemopen (packed, packed_len? packed_len: 1, "r");
    if (!file) {
        free (packed);
        if (err && errlen)
            snprintf (err, errlen, "log file not found: %s", path);
        return NULL;
    }
    char *out = (char *) malloc (max_bytes + 1);
    if (!out) {
        fclose (file);
        free (packed);
        if (err && errlen)
            snprintf (err, errlen, "out of memory");
        return NULL;
    }
    size_t out_len = 0;
    int line_no = 1;            //  line the next char belongs to
    int last = from_line - 1;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline (&line, &cap, file)) > 0) {
        if (line [len - 1] != '\n')
            break;              //  incomplete last line: still being written
        if (line_no >= from_line) {
            if (out_len + (size_t) len > max_bytes) {
                if (out_len == 0) {
                    //  One line longer than the cap: cut it
                    memcpy (out, line, max_bytes);
                    out_len = max_bytes;
                    last = line_no;
                }
                break;
            }
            memcpy (out + out_len, line, (size_t) len);
            out_len += (size_t) len;
            last = line_no;
        }
        line_no++;
    }
    free (line);
    fclose (file);
    free (packed);
    out [out_len] = 0;
    if (to_line)
        *to_line = last;
    return out;
}
