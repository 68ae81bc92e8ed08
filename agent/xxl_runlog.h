/*  xxl_runlog.h -- run log files of an agent.

    Every run writes its log to {logdir}/yyyy-mm-dd/{logId}.log, where the
    date is the run's logDateTime (epoch milliseconds, as the scheduler sent
    it) in the agent's local time zone, exactly as XXL-JOB's
    XxlJobFileAppender does.  Lines are stamped
    "yyyy-MM-dd HH:mm:ss.SSS [tid/pid] message".  The lowest layer of the
    run logs: xxl_runpack and xxl_logread (which pages a log by line
    number for the scheduler) are built on it; it calls neither.
*/

#ifndef XXL_RUNLOG_H_INCLUDED
#define XXL_RUNLOG_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

//  The modes of run logs (their own files and the days' packs) and of
//  logdir and its day folders: never more open than these, whatever the
//  umask (a run's log may show its params and its script's output)
#define XXL_RUNLOG_FILE_MODE    0640
#define XXL_RUNLOG_DIR_MODE     0750

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
