/*  xxl_logread.h -- reads a run's log wherever it is: its file
    (xxl_runlog.h), else its day's pack (xxl_runpack.h).

    Owns no state.  Calls go down to xxl_runlog and xxl_runpack; neither
    calls back.  Called by the agent to answer LOG requests.
*/

#ifndef XXL_LOGREAD_H_INCLUDED
#define XXL_LOGREAD_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

//  Default cap of the content one read returns
#define XXL_LOGREAD_MAX (64 * 1024)

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

#ifdef __cplusplus
}
#endif

#endif
