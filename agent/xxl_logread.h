/*  xxl_logread.h -- reads a run's log wherever it is: its file
    (xxl_runlog.h), else its day's pack (xxl_runpack.h).

    Two forms, as the LOG request has (docs/protocol.md, Log pages): by
    line number (XXL-JOB's), and by byte offset.  A byte page costs what
    it holds (one pread at its offset); a line page costs the bytes before
    it, read from the start of the file, unless a mark
    (xxl_logread_mark_t) of the same log says where a line begins.

    Owns no state: the caller keeps the marks.  Calls go down to xxl_runlog
    and xxl_runpack; neither calls back.  Called by the agent to answer LOG
    requests.
*/

#ifndef XXL_LOGREAD_H_INCLUDED
#define XXL_LOGREAD_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

//  Default cap of the content one read by line returns
#define XXL_LOGREAD_MAX (64 * 1024)

//  Cap of a page by byte offset: 1 MiB of the file, which comes to at most
//  3 MiB of UTF-8 (each invalid byte a U+FFFD), within the 4 MiB frame
#define XXL_LOGREAD_PAGE_MAX (1024 * 1024)

//  Reads lines from_line (1-based, values < 1 mean 1) onward, at most
//  max_bytes of content (0 means XXL_LOGREAD_MAX), only complete lines
//  (a line longer than max_bytes is returned cut at max_bytes).  Sets
//  *to_line to the last line returned (from_line-1 if none).  Returns a
//  malloc'd string the caller frees ("" if no line), or NULL with err filled
//  ("log file not found: PATH") when the run has neither a file nor a
//  record in its day's pack, or it cannot be read.
char *xxl_logread (const char *logdir, int64_t log_id, int64_t log_date_time,
                   int from_line, int *to_line, char *err, size_t errlen);

//  Same with an explicit content cap.
char *xxl_logread_max (const char *logdir, int64_t log_id, int64_t log_date_time,
                       int from_line, size_t max_bytes, int *to_line,
                       char *err, size_t errlen);

//  Where a line of a run's log file begins: line `line` at byte `offset`
//  (0 in an unused mark)
typedef struct {
    int64_t log_id;
    int64_t log_date_time;
    int line;
    int64_t offset;
    uint64_t used;                      //  when it was last set (the
                                        //  oldest is reused first)
} xxl_logread_mark_t;

//  xxl_logread_max with marks: reading starts at the mark of this log
//  (log_id and log_date_time) with the greatest line not after from_line
//  when the file holds a line end just before its offset, else at the
//  start.  The page's end is then marked, in the mark of this log if one
//  is there, else in the oldest of marks [0..count), so that the next page
//  of a reader going forward costs what it holds.  *at_end (if not NULL)
//  is set to 1 when no complete line follows the page, else 0.  marks
//  may be NULL (count 0).
char *xxl_logread_lines (const char *logdir, int64_t log_id, int64_t log_date_time,
                         int from_line, size_t max_bytes,
                         xxl_logread_mark_t *marks, size_t count,
                         int *to_line, int *at_end, char *err, size_t errlen);

//  Reads the page of a run's log that begins at byte from_byte (≥ 0):
//  at most max_bytes (0 or more than XXL_LOGREAD_PAGE_MAX mean
//  XXL_LOGREAD_PAGE_MAX) of the file's bytes, ending
//    - at the end of the file, when final (the run has ended: nothing more
//      comes) and the page reaches it;
//    - else just after the page's last '\n';
//    - else, a full page holding no '\n' (a line longer than a page), at
//      the last boundary between UTF-8 characters in it (never at 0);
//    - else (the start of a line still being written) at from_byte: an
//      empty page.
//  A from_byte at or past the end gives an empty page.  Sets *len to the
//  page's bytes, *next_byte to from_byte + *len (where the next page
//  begins) and *at_end to 1 when *next_byte is the end of the file as read
//  after the page, else 0.  Returns a malloc'd buffer of *len bytes and a
//  NUL (the page may hold NUL bytes of the file) the caller frees, or NULL
//  with err filled as xxl_logread's.  Costs the page's bytes, whatever
//  from_byte.
char *xxl_logread_bytes (const char *logdir, int64_t log_id, int64_t log_date_time,
                         int64_t from_byte, size_t max_bytes, int final,
                         size_t *len, int64_t *next_byte, int *at_end,
                         char *err, size_t errlen);

//  The length of the longest start of text [0..len) that ends between
//  UTF-8 characters: len less an incomplete sequence at its end (bytes
//  that are not UTF-8 count as characters of their own).
size_t xxl_logread_utf8_cut (const char *text, size_t len);

#ifdef __cplusplus
}
#endif

#endif
