/*  xxl_spawner.h -- starts the processes of runs and waits for them to end.

    The agent is multithreaded, so it never fork()s: an isolated BEAN run
    posix_spawn()s xxl-runner (see xxl_runner_main.c), a GLUE run its
    interpreter, both in a new process group of their own, stdin
    /dev/null, stdout and stderr the run's log, signal mask empty and the
    usual signals at their default.  Each gets the agent's environment
    and, when the spawner has a marker, XXL_AGENT_RUN=MARKER.LOGID
    (xxl_guard.h) instead of any the agent itself has.

    The wait polls a pidfd of the child and an eventfd that exists only
    while the child runs, handed to the caller (publish) so that a kill
    can wake it.  When the run is cancelled (kill) or its deadline passes
    (timeout), the whole group gets SIGTERM, then SIGKILL after a grace
    (XXL_EXECUTOR_GRACE_MS), and SIGKILL again once the leader is gone, to
    end stragglers.

    Ownership: the spawner copies its marker, and the list of the agent's
    environment strings as it is at xxl_spawner_new (the strings
    themselves stay environ's: the agent does not change its environment
    afterwards).  argv, fds and the watch stay the caller's.
    Threads: after xxl_spawner_new, any number of threads may start and
    wait at once (the spawner is read-only then); a wait runs on the
    thread that called it and blocks it until the child has ended.
    Errors: xxl_spawner_new returns NULL when out of memory;
    xxl_spawner_start returns -1 with errno set; a wait always returns a
    status (XXL_SPAWNER_STATUS_LOST when someone else reaped the child).
*/

#ifndef XXL_SPAWNER_H_INCLUDED
#define XXL_SPAWNER_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct _xxl_spawner_t xxl_spawner_t;

//  A wait status that means: unknown (the child was reaped elsewhere)
#define XXL_SPAWNER_STATUS_LOST     0x7fffff00

//  How a wait learns that its child is to end
typedef struct {
    int *cancel;                //  read atomically: non-zero ends the child
    int cancel_timeout;         //  stored in *cancel (if still 0) at the deadline
    int64_t deadline;           //  monotonic ms; 0: none
    int grace_ms;               //  between SIGTERM and SIGKILL
    //  Called with the wait's eventfd (-1 if none could be made) before
    //  *cancel is first read, and with -1 once the child has ended and
    //  before that fd is closed.  Whoever sets *cancel writes 8 bytes to
    //  the fd it was given, if any, to wake the wait at once (without an
    //  eventfd the wait looks at *cancel every 20 ms).
    void (*publish) (void *arg, int wake_fd);
    void *arg;
} xxl_spawner_watch_t;

//  Creates a spawner.  marker NULL: children get the agent's environment
//  as it is when each starts; else XXL_AGENT_RUN=MARKER.LOGID is added to
//  the environment of now, less any XXL_AGENT_RUN.  NULL when out of
//  memory.
xxl_spawner_t *xxl_spawner_new (const char *marker);

//  Frees the spawner.  Nulls *self_p.
void xxl_spawner_destroy (xxl_spawner_t **self_p);

//  Spawns argv [0] (looked up in PATH when use_path) in its own process
//  group with stdin /dev/null, stdout and stderr to log_fd (or /dev/null
//  when log_fd < 0), and the nextra (at most 4) fds of extra dup2'd to 3,
//  4...; the marker names log_id.  Returns the pid, or -1 with errno set.
pid_t xxl_spawner_start (xxl_spawner_t *self, char *const argv [], int use_path,
                         int64_t log_id, int log_fd, const int *extra, int nextra);

//  Waits for the child pid (started by xxl_spawner_start) to end, ending
//  it (its group) as the watch says.  Returns its wait status.
int xxl_spawner_wait (pid_t pid, const xxl_spawner_watch_t *watch);

//  Describes a wait status, for handleMsg: "exit code 3", "killed by signal
//  SIGKILL", "exit status lost (is SIGCHLD ignored?)".
void xxl_spawner_describe (int status, char *buf, size_t buflen);

#ifdef __cplusplus
}
#endif

#endif
