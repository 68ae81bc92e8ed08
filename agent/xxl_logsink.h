/*  xxl_logsink.h -- one run's log, as the executor writes it.

    The lines the executor writes around a run (XXL-JOB's "-----------
    xxl-job job execute start" ... "----------- Result: handleCode=...")
    and an in-process handler's log lines go through the run's sink, which
    puts them in the run's log file (xxl_runlog.h) or its day's pack
    (xxl_runpack.h).

    An isolated or GLUE run needs its log file before it starts (the
    child's stdout: xxl_logsink_fd); an in-process run does not, so its
    first lines are stamped at its start and held in memory, and the file
    is made by the first later write (a handler's log line, the end lines),
    by the handler asking for it (xxl_logsink_file) or by a LOG request
    (xxl_logsink_claim, then xxl_logsink_make): the
    handler starts without waiting for a file to be created, and a short
    run costs one write instead of two.  With a pack, a held log goes on
    being held while the whole of it fits a pack record
    (XXL_RUNPACK_RUN_MAX), and goes to the day's pack at the end.

    Ownership: logdir and pack are borrowed and must outlive the sink.
    Threads: the run's worker thread makes every call but claim and make.
    Another thread may claim a held log while it knows the sink alive (the
    executor claims under the lock that keeps the run in flight), and
    then makes the file, with no lock held (creating a file takes tens of
    microseconds): a claimed log keeps the worker from ending the run, as
    the worker waits for the making before it writes on.  The state is
    one atomic: held, being made (by the thread that claimed it), made (or
    never held), packed.
    Errors: a log that cannot be opened or written is logged
    (zsys_warning) or ignored; it never fails the run.  Out of memory, a
    line is lost.
*/

#ifndef XXL_LOGSINK_H_INCLUDED
#define XXL_LOGSINK_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include "xxl_runpack.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct _xxl_logsink_t xxl_logsink_t;

//  Creates the sink of run log_id (log_date_time dates its file, as
//  xxl_runlog_path does); pack NULL: a file per run.  Nothing is written
//  until xxl_logsink_start.  NULL when out of memory.
xxl_logsink_t *xxl_logsink_new (const char *logdir, xxl_runpack_t *pack,
                                int64_t log_id, int64_t log_date_time);

//  Closes the file if still open and frees what is held.  Nulls *self_p.
void xxl_logsink_destroy (xxl_logsink_t **self_p);

//  Writes the run's start lines: "----------- xxl-job job execute start
//  -----------" and "----------- Handler: HANDLER (TYPE, MODE), Param:
//  PARAMS, Shard: INDEX/TOTAL" (mode NULL: "(TYPE)").  hold 1 (an
//  in-process run): held in memory; 0: the file is opened now and they go
//  into it.
void xxl_logsink_start (xxl_logsink_t *self, int hold, const char *handler,
                        const char *type, const char *mode, const char *params,
                        int shard_index, int shard_total);

//  Writes one or two stamped lines (line2 may be NULL) with one write,
//  making the file first if the log is held and no pack takes it.
void xxl_logsink_lines (xxl_logsink_t *self, const char *line1, const char *line2);

//  The open log file (for a child's stdout and stderr), or -1.
int xxl_logsink_fd (xxl_logsink_t *self);

//  Makes sure the file ends with a newline (a script's or runner's output
//  may not).  Nothing for a log that has no file open.
void xxl_logsink_newline (xxl_logsink_t *self);

//  Writes the end lines ("----------- xxl-job job execute end(finish)
//  -----------", "----------- Result: handleCode=CODE, handleMsg = MSG",
//  MSG NULL: "null"), on a line of their own when the handler was given
//  the file (xxl_logsink_file) and left its last line open, then puts a log still held into the day's pack (or,
//  when none takes it, into its file), and closes the file.  After this,
//  the sink only awaits xxl_logsink_destroy.
void xxl_logsink_end (xxl_logsink_t *self, int code, const char *msg);

//  The absolute path of the run's own log file; worker thread, before
//  xxl_logsink_end.  A held log is moved to its file now (created, with
//  the lines held so far, in one write) and is never packed: the run's
//  later lines are appended to the file.  An open file's path is
//  returned as it is.  The string is the sink's, valid until
//  xxl_logsink_destroy.  NULL when the file cannot be made or was not
//  (warned once per sink): a held log stays held, as if never asked.
const char *xxl_logsink_file (xxl_logsink_t *self);

//  Any thread: moves a held log to "being made by this thread"; 1 if it
//  did, then the caller must call xxl_logsink_make; 0 if the log is not
//  held.
int xxl_logsink_claim (xxl_logsink_t *self);

//  Makes the file of a log this thread claimed: created, with the lines
//  held so far, in one write.
void xxl_logsink_make (xxl_logsink_t *self);

#ifdef __cplusplus
}
#endif

#endif
