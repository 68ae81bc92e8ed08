/*  xxl_journal.h -- the logIds an agent accepted, kept across its restarts.

    An agent must never run a logId twice, also not after it was killed and
    restarted while a recovering scheduler re-sends the RUNs whose answer it
    never recorded; and a restarted agent must tell which runs of its
    previous life it lost.  The journal is an append-only file of the
    logIds accepted ("A", written before the run can start, with the
    run's jobId and logDateTime: which run the id was) and of those
    whose result is safe in the callback spool ("D"), with a "life" record
    (pid and start time) at each start of the agent.  Format in
    xxl_journal.c.

    Writes are buffered: accept and done only fill a buffer, flush writes
    it with one write() and no fsync.  That is enough against a crash or
    SIGKILL of the agent (the page cache keeps what write() took); a power
    loss may lose the last writes.

    Bounded: the file holds one generation of `generation` accepts
    (default 100,000); then it becomes PATH.old (replacing the older one)
    and a new PATH starts, after the ids still open (accepted, not done)
    whose "A" is only in the old file were written again.  So the last
    generation..2*generation accepted ids are remembered, and an open id
    never is forgotten.

    Thread-safe (one mutex).  Contracts: logIds are > 0; accept is only
    called for an id not seen.
*/

#ifndef XXL_JOURNAL_H_INCLUDED
#define XXL_JOURNAL_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct _xxl_journal_t xxl_journal_t;

//  Accepts per file generation, by default
#define XXL_JOURNAL_GENERATION  100000

//  An open id of an earlier life of the agent (xxl_journal_lost)
typedef struct {
    int64_t log_id, log_date_time;
    int pid;                            //  the agent process that accepted it
    int64_t start_ms;                   //  and its start (epoch ms)
} xxl_journal_entry_t;

//  Opens the journal at path (and path.old, the previous generation),
//  replays both, then starts a new life of this process (getpid(), now).
//  A torn or corrupt tail is cut off with a warning.  path NULL: a journal
//  in memory only (dedupe, nothing kept, nothing reported lost).
//  generation 0: XXL_JOURNAL_GENERATION.  Returns NULL if the file cannot
//  be opened or created, or is not a journal.
xxl_journal_t *xxl_journal_new (const char *path, size_t generation);

//  Writes what is buffered, closes, frees.  Nulls *self_p.
void xxl_journal_destroy (xxl_journal_t **self_p);

//  This life's token, "PID.STARTMS": runs are marked with it (see
//  xxl_guard.h).  Owned by self.
const char *xxl_journal_life (xxl_journal_t *self);

//  1 if log_id was accepted within the window (this life or an earlier
//  one), else 0.
int xxl_journal_seen (xxl_journal_t *self, int64_t log_id);

//  What the journal holds of a RUN's logId (xxl_journal_check)
#define XXL_JOURNAL_NEW     0           //  not accepted within the window
#define XXL_JOURNAL_SAME    1           //  accepted: this run, or not known which
#define XXL_JOURNAL_OTHER   2           //  accepted as another run

//  Whether log_id was accepted within the window as the run (job_id,
//  log_date_time) of a RUN: NEW when not; OTHER when it was accepted for
//  another job, or with a logDateTime earlier than log_date_time; else
//  SAME.  A scheduler that sends a run again (a re-send, a recovery's
//  question) sends the run's stored trigger time: the logDateTime its
//  first RUN carried, or, when it stopped before writing that, the run's
//  planned instant, which is never later; a new run given an id the
//  journal holds (a store restored from a backup, its log ids not moved)
//  is triggered after the run the journal holds was.  An unknown side
//  counts as the same run: job_id 0 (a RUN without it: an ask of just
//  the logId) or log_date_time 0, and an id accepted without them (a
//  version 1 journal's, or accepted with job_id 0).
int xxl_journal_check (xxl_journal_t *self, int64_t log_id, int64_t job_id,
                       int64_t log_date_time);

//  Records that log_id was accepted as the run (job_id, log_date_time)
//  (buffered until flush): seen from now on, and open until done.  job_id
//  0: not known (xxl_journal_check then takes any run of the id for it).
void xxl_journal_accept (xxl_journal_t *self, int64_t log_id, int64_t job_id,
                         int64_t log_date_time);

//  The highest logId ever accepted: in the files replayed at open or
//  in this life (also past the window of xxl_journal_seen), 0 when none.
//  O(1).  Agents tell the scheduler (REGISTER acceptedMax), which hands
//  out no id at or below it again.
int64_t xxl_journal_accepted_max (xxl_journal_t *self);

//  Records that the results of count logIds are safe (spooled): no longer
//  open.  Buffered until flush; ids not open are skipped.
void xxl_journal_done (xxl_journal_t *self, const int64_t *log_ids, size_t count);

//  Writes the buffer with one write(), then starts a new generation if
//  the file holds `generation` accepts.  Returns 0, or -1 if the write
//  failed (logged; what it held is still known in memory, not on disk).
int xxl_journal_flush (xxl_journal_t *self);

//  The ids left open by earlier lives (accepted, never done), oldest
//  first: a malloc'd array the caller frees (NULL when none), with their
//  number in *count.
xxl_journal_entry_t *xxl_journal_lost (xxl_journal_t *self, size_t *count);

//  Ids accepted and not done, all lives.
size_t xxl_journal_open_count (xxl_journal_t *self);

//  Reads the journal at path (and path.old) without changing anything, as
//  another process writes it: the ids open for the life token life
//  ("PID.STARTMS"), malloc'd (caller frees; NULL when none), their number
//  in *count.  Returns 0, or -1 if no journal could be read.
int xxl_journal_read_open (const char *path, const char *life,
                           int64_t **log_ids, size_t *count);

#ifdef __cplusplus
}
#endif

#endif
