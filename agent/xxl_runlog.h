/*  xxl_runlog.h -- run log files of an agent.

    Every run writes its log to {logdir}/yyyy-mm-dd/{logId}.log, where the
    date is the run's logDateTime (epoch milliseconds, as the scheduler sent
    it) in the agent's local time zone, exactly as XXL-JOB's
    XxlJobFileAppender does.  Lines are stamped
    "yyyy-MM-dd HH:mm:ss.SSS [tid/pid] message".  The scheduler pages a log
    by line number (1-based) with xxl_runlog_read.
*/

#ifndef XXL_RUNLOG_H_INCLUDED
#define XXL_RUNLOG_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

//  Default cap of the content one read returns
#define XXL_RUNLOG_READ_MAX (64 * 1024)

//  Formats the path of a run's log into buf: {logdir}/yyyy-mm-dd/{logId}.log.
//  A log_date_time <= 0 means now.  Returns 0, or -1 if buf is too small.
int xxl_runlog_path (const char *logdir, int64_t log_id, int64_t log_date_time,
                     char *buf, size_t buflen);

//  Opens (creating folders as needed) the run's log for appending; returns an
//  O_RDWR|O_APPEND|O_CLOEXEC fd the caller closes, or -1 (errno set).
int xxl_runlog_open (const char *logdir, int64_t log_id, int64_t log_date_time);

//  Formats one stamped line ("yyyy-MM-dd HH:mm:ss.SSS [tid/pid] line\n")
//  into buf, truncating the message if needed; returns the length written.
size_t xxl_runlog_format (char *buf, size_t buflen, const char *line);

//  Writes one stamped line to fd with a single write().  Returns 0 or -1.
int xxl_runlog_write (int fd, const char *line);

//  Writes two stamped lines to fd with a single write().  Returns 0 or -1.
int xxl_runlog_write2 (int fd, const char *line1, const char *line2);

//  Reads lines from_line (1-based, values < 1 mean 1) onward, at most
//  max_bytes of content (0 means XXL_RUNLOG_READ_MAX), only complete lines
//  (a line longer than max_bytes is returned cut at max_bytes).  Sets
//  *to_line to the last line returned (from_line-1 if none).  Returns a
//  malloc'd string the caller frees ("" if no line), or NULL with err filled
//  ("log file not found: PATH") when the file does not exist or cannot be
//  read.
char *xxl_runlog_read (const char *logdir, int64_t log_id, int64_t log_date_time,
                       int from_line, int *to_line, char *err, size_t errlen);

//  Same with an explicit content cap.
char *xxl_runlog_read_max (const char *logdir, int64_t log_id, int64_t log_date_time,
                           int from_line, size_t max_bytes, int *to_line,
                           char *err, size_t errlen);

//  Appends one stamped line to the run's log, creating it.  Used by the agent
//  itself (e.g. "unknown handler").  Returns 0 or -1.
int xxl_runlog_append (const char *logdir, int64_t log_id, int64_t log_date_time,
                       const char *line);

//  Removes the yyyy-mm-dd folders of logdir dated more than keep_days
//  (minimum 3) days before now_ms (local dates); other entries are left
//  alone.  Returns the number of folders removed, or -1 if logdir cannot be
//  listed.
int xxl_runlog_clean (const char *logdir, int keep_days, int64_t now_ms);

#ifdef __cplusplus
}
#endif

#endif
