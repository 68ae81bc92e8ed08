/*  xxl_logread.c -- reads a run's log wherever it is.

    The run's own file (xxl_runlog.h) if it has one, else its record in
    the day's pack (xxl_runpack.h), read the same way.  Two forms for the
    scheduler's LOG paging: by line number, only complete lines, so that a
    reader following a running log never sees half a line; and by byte
    offset, a page costing what it holds, ending at a line end while the
    run goes on.  Above both: calls go from here down to xxl_runlog and
    xxl_runpack, never back.  Called by the agent's LOG request and tests.
*/

#define _GNU_SOURCE
#include "xxl_logread.h"
#include "xxl_runlog.h"
#include "xxl_runpack.h"

#include <czmq.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

//  A run's log opened for reading: its file, or its pack record in memory
typedef struct {
    int fd;                             //  -1: the pack record
    char *packed;                       //  the record (malloc'd), or NULL
    size_t packed_len;
} source_t;

//  Opens the run's log; -1 with err filled when it has none
static int
s_source_open (source_t *source, const char *logdir, int64_t log_id, int64_t log_date_time,
               char *err, size_t errlen)
{
    char path [4096];
    source->fd = -1;
    source->packed = NULL;
    source->packed_len = 0;
    if (!logdir || xxl_runlog_path (logdir, log_id, log_date_time, path, sizeof path)) {
        if (err && errlen)
            snprintf (err, errlen, "log file not found: invalid path");
        return -1;
    }
    source->fd = open (path, O_RDONLY | O_CLOEXEC);
    if (source->fd >= 0)
        return 0;
    //  No file of its own: the run's log may be in its day's pack
    source->packed = xxl_runpack_find (logdir, log_id, log_date_time, &source->packed_len);
    if (source->packed)
        return 0;
    if (err && errlen)
        snprintf (err, errlen, "log file not found: %s", path);
    return -1;
}

static void
s_source_close (source_t *source)
{
    if (source->fd >= 0)
        close (source->fd);
    free (source->packed);
    source->fd = -1;
    source->packed = NULL;
}

//  Bytes of the source now
static int64_t
s_source_size (source_t *source)
{
    if (source->fd < 0)
        return (int64_t) source->packed_len;
    struct stat st;
    return fstat (source->fd, &st) == 0? (int64_t) st.st_size: 0;
}

//  Reads up to len bytes at offset into buf; returns the bytes read (0 at
//  the end or on an error)
static size_t
s_source_read (source_t *source, int64_t offset, char *buf, size_t len)
{
    if (source->fd < 0) {
        if (offset >= (int64_t) source->packed_len)
            return 0;
        size_t left = source->packed_len - (size_t) offset;
        size_t take = left < len? left: len;
        memcpy (buf, source->packed + offset, take);
        return take;
    }
    size_t got = 0;
    while (got < len) {
        ssize_t rc = pread (source->fd, buf + got, len - got, (off_t) offset + (off_t) got);
        if (rc <= 0)
            break;                      //  (the end, or an error: what was read stands)
        got += (size_t) rc;
    }
    return got;
}

char *
xxl_logread (const char *logdir, int64_t log_id, int64_t log_date_time,
             int from_line, int *to_line, char *err, size_t errlen)
{
    return xxl_logread_lines (logdir, log_id, log_date_time, from_line, 0, NULL, 0,
                              to_line, NULL, err, errlen);
}

char *
xxl_logread_max (const char *logdir, int64_t log_id, int64_t log_date_time,
                 int from_line, size_t max_bytes, int *to_line,
                 char *err, size_t errlen)
{
    return xxl_logread_lines (logdir, log_id, log_date_time, from_line, max_bytes, NULL, 0,
                              to_line, NULL, err, errlen);
}

//  The mark of this log in marks, or NULL
static xxl_logread_mark_t *
s_mark_find (xxl_logread_mark_t *marks, size_t count, int64_t log_id, int64_t log_date_time)
{
    for (size_t index = 0; index < count; index++)
        if (marks [index].line > 0 && marks [index].log_id == log_id
        &&  marks [index].log_date_time == log_date_time)
            return &marks [index];
    return NULL;
}

//  Sets this log's mark (or the oldest) to line at offset
static void
s_mark_set (xxl_logread_mark_t *marks, size_t count, int64_t log_id, int64_t log_date_time,
            int line, int64_t offset)
{
    if (count == 0)
        return;
    uint64_t newest = 0;
    for (size_t index = 0; index < count; index++)
        if (marks [index].used > newest)
            newest = marks [index].used;
    xxl_logread_mark_t *mark = s_mark_find (marks, count, log_id, log_date_time);
    if (!mark) {
        mark = &marks [0];              //  the oldest (an unused one first)
        for (size_t index = 1; index < count; index++)
            if (marks [index].used < mark->used)
                mark = &marks [index];
    }
    mark->log_id = log_id;
    mark->log_date_time = log_date_time;
    mark->line = line;
    mark->offset = offset;
    mark->used = newest + 1;
}

char *
xxl_logread_lines (const char *logdir, int64_t log_id, int64_t log_date_time,
                   int from_line, size_t max_bytes,
                   xxl_logread_mark_t *marks, size_t count,
                   int *to_line, int *at_end, char *err, size_t errlen)
{
    if (from_line < 1)
        from_line = 1;
    if (to_line)
        *to_line = from_line - 1;
    if (at_end)
        *at_end = 1;
    if (max_bytes == 0)
        max_bytes = XXL_LOGREAD_MAX;
    source_t source;
    if (s_source_open (&source, logdir, log_id, log_date_time, err, errlen))
        return NULL;
    //  Start at this log's mark when it is at or before from_line and still
    //  the start of a line of the file (a line end just before it)
    int line_no = 1;                    //  line the next char belongs to
    int64_t offset = 0;                 //  of line line_no
    xxl_logread_mark_t *mark = source.fd >= 0
                             ? s_mark_find (marks, count, log_id, log_date_time): NULL;
    if (mark && mark->line <= from_line && mark->offset > 0) {
        char before;
        if (s_source_read (&source, mark->offset - 1, &before, 1) == 1 && before == '\n') {
            line_no = mark->line;
            offset = mark->offset;
        }
    }
    FILE *file = source.fd >= 0
               ? fdopen (dup (source.fd), "re")
               : fmemopen (source.packed, source.packed_len? source.packed_len: 1, "r");
    char *out = file? (char *) malloc (max_bytes + 1): NULL;
    if (!out || (offset && fseeko (file, (off_t) offset, SEEK_SET))) {
        if (file)
            fclose (file);
        free (out);
        s_source_close (&source);
        if (err && errlen)
            snprintf (err, errlen, "cannot read the log: %s", strerror (errno));
        return NULL;
    }
    size_t out_len = 0;
    int last = from_line - 1;
    int ended = 1;                      //  no complete line after the page
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline (&line, &cap, file)) > 0) {
        if (line [len - 1] != '\n')
            break;              //  incomplete last line: still being written
        if (line_no >= from_line) {
            if (out_len + (size_t) len > max_bytes) {
                ended = 0;
                if (out_len == 0) {
                    //  One line longer than the cap: cut it
                    memcpy (out, line, max_bytes);
                    out_len = max_bytes;
                    last = line_no;
                    offset += len;
                    line_no++;
                }
                break;
            }
            memcpy (out + out_len, line, (size_t) len);
            out_len += (size_t) len;
            last = line_no;
        }
        offset += len;
        line_no++;
    }
    free (line);
    fclose (file);
    if (line_no > 1 && source.fd >= 0)
        s_mark_set (marks, count, log_id, log_date_time, line_no, offset);
    s_source_close (&source);
    out [out_len] = 0;
    if (to_line)
        *to_line = last;
    if (at_end)
        *at_end = ended;
    return out;
}

size_t
xxl_logread_utf8_cut (const char *text, size_t len)
{
    //  Back over the continuation bytes (at most 3) to their lead
    size_t start = len;
    size_t follow = 0;
    while (start > 0 && follow < 4 && ((unsigned char) text [start - 1] & 0xc0) == 0x80) {
        start--;
        follow++;
    }
    if (start == 0 || follow == 4)
        return len;                     //  (stray continuation bytes: not UTF-8)
    unsigned char lead = (unsigned char) text [start - 1];
    size_t need = lead >= 0xf0 && lead < 0xf8? 4
                : lead >= 0xe0 && lead < 0xf0? 3
                : lead >= 0xc0 && lead < 0xe0? 2: 1;
    return need > follow + 1? start - 1: len;
}

char *
xxl_logread_bytes (const char *logdir, int64_t log_id, int64_t log_date_time,
                   int64_t from_byte, size_t max_bytes, int final,
                   size_t *len, int64_t *next_byte, int *at_end,
                   char *err, size_t errlen)
{
    assert (len && next_byte && at_end);
    if (from_byte < 0)
        from_byte = 0;
    if (max_bytes == 0 || max_bytes > XXL_LOGREAD_PAGE_MAX)
        max_bytes = XXL_LOGREAD_PAGE_MAX;
    *len = 0;
    *next_byte = from_byte;
    *at_end = 1;
    source_t source;
    if (s_source_open (&source, logdir, log_id, log_date_time, err, errlen))
        return NULL;
    char *page = (char *) malloc (max_bytes + 1);
    if (!page) {
        s_source_close (&source);
        if (err && errlen)
            snprintf (err, errlen, "out of memory");
        return NULL;
    }
    size_t got = s_source_read (&source, from_byte, page, max_bytes);
    //  (the size after the read: a page of a file still growing is not its end)
    int64_t size = s_source_size (&source);
    s_source_close (&source);
    size_t keep = got;
    if (!(final && from_byte + (int64_t) got >= size)) {
        char *newline = (char *) memrchr (page, '\n', got);
        if (newline)
            keep = (size_t) (newline - page) + 1;
        else
        if (got == max_bytes) {
            keep = xxl_logread_utf8_cut (page, got);
            if (keep == 0)
                keep = got;
        }
        else
            keep = 0;
    }
    page [keep] = 0;
    *len = keep;
    *next_byte = from_byte + (int64_t) keep;
    *at_end = *next_byte >= size;
    return page;
}
