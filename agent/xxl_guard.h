/*  xxl_guard.h -- an agent's death ends its runs: no orphans.

    Every process an agent starts for a run (xxl-runner, a GLUE
    interpreter) gets XXL_AGENT_RUN=LIFE.LOGID in its environment, LIFE
    being the agent life's token (xxl_journal_life: "PID.STARTMS"); the
    run's children inherit it.

    The guardian is one process per agent, started with the agent
    (xxl-agent --guard JOURNAL LIFE AGENT_PGID): it holds the read end of a
    pipe whose write end only the agent holds (close-on-exec, so no run
    inherits it), and does nothing until that pipe reads end-of-file,
    which happens when the agent process ends, whatever ended it.  Then it
    reads the agent's journal (xxl_journal_read_open): the runs of LIFE
    still open (accepted, result not spooled) were cut short, and it kills
    each process marked with one of them, and its process group.  It
    ignores SIGINT, SIGTERM, SIGHUP and SIGQUIT, so that it outlives the
    agent a signal to the whole group ends.  No per-run cost: nothing goes
    through the pipe (a socket pair) for a run.

    It also holds the agent's run lease (docs/design.md, "The partition
    model") for an agent that cannot: the agent sends each renewal
    (xxl_guard_lease, at each REGISTER a scheduler answered), and when
    XXL_GUARD_LEASE_GRACE_MS pass after the last one's end with no newer
    one (the agent frozen by SIGSTOP or a stalled host, its runs' processes
    still going), the guardian kills the open runs' processes as above and
    waits for the next renewal.  A live agent stops its runs itself at the
    lease's end (their results say so); the grace keeps the guardian out of
    its way.

    If the guardian was killed too, the next start of the agent does the
    same for the runs its journal reports lost (xxl_guard_reap).  A
    process is recognized by its marker, read from /proc/PID/environ
    through a pidfd opened first, so a reused PID never gets a stranger
    killed.  A child that cleared its environment and left the run's
    process group after the run's leader ended escapes both.
*/

#ifndef XXL_GUARD_H_INCLUDED
#define XXL_GUARD_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

//  The environment variable that marks the processes of a run
#define XXL_GUARD_ENV   "XXL_AGENT_RUN"

typedef struct _xxl_guard_t xxl_guard_t;

//  Starts the guardian: program (the xxl-agent binary; NULL:
//  /proc/self/exe) run as PROGRAM --guard JOURNAL LIFE AGENT_PGID, in a
//  process group of its own, stdin /dev/null, stdout and stderr the
//  agent's.  Returns NULL (logged) if it cannot be started.
xxl_guard_t *xxl_guard_new (const char *program, const char *journal_path, const char *life);

//  Closes the pipe (the guardian checks the journal, kills what is still
//  open, and ends) and waits for the guardian up to 2 s.  Nulls *self_p.
void xxl_guard_destroy (xxl_guard_t **self_p);

//  The guardian's process id.
int xxl_guard_pid (xxl_guard_t *self);

//  After the agent's lease runs out (past it by this), the guardian kills
#define XXL_GUARD_LEASE_GRACE_MS    1000

//  The agent's run lease now ends at until (CLOCK_BOOTTIME ms): a later
//  renewal replaces it.  0, or -1 when it could not be sent (the guardian
//  is gone or not reading).
int xxl_guard_lease (xxl_guard_t *self, int64_t until);

//  The guardian's main, for xxl-agent --guard: argv [2] the journal's
//  path, argv [3] LIFE, argv [4] the agent's process group.  Returns the
//  exit status (0; 2 for a usage error).
int xxl_guard_main (int argc, char *argv []);

//  match (arg, life, log_id): 1 to kill the processes of that run
typedef int (xxl_guard_match_fn) (void *arg, const char *life, int64_t log_id);

//  Kills (SIGKILL) every process but the caller whose environment holds
//  XXL_AGENT_RUN=LIFE.LOGID with match true, and the process group it is
//  in (unless that is the caller's, its session's or except_pgid).
//  Returns the number of marked processes killed.
int xxl_guard_reap (xxl_guard_match_fn *match, void *arg, int except_pgid);

#ifdef __cplusplus
}
#endif

#endif
