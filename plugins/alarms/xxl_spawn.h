/*  xxl_spawn.h -- runs one child process for the alarm plugins.

    The scheduler is multithreaded, so children are started with
    posix_spawn (no plain fork): in a process group of their own, with
    default signal dispositions and an empty signal mask, no inherited
    descriptors beyond 0-2.  The input is written to the child's stdin (a
    socket, so an early exit never raises SIGPIPE in the scheduler), its
    stdout and stderr are collected together, and the whole group is killed
    with SIGKILL when it outlives the timeout.  Shared by the script and
    email (sendmail) kinds; not part of the ABI.
*/

#ifndef XXL_SPAWN_H_INCLUDED
#define XXL_SPAWN_H_INCLUDED

#include <stddef.h>

#define XXL_SPAWN_FAILED    (-1)        //  could not start; err has the reason
#define XXL_SPAWN_TIMEOUT   (-2)        //  killed after timeout_ms
#define XXL_SPAWN_SIGNALED  (-3)        //  ended by a signal; err names it

//  Runs argv [0] (a path; no PATH search) with argv and envp (NULL: the
//  scheduler's environment), feeding input (inlen bytes) to its stdin,
//  and waits for it up to timeout_ms (> 0).  out (outlen > 0, may be NULL
//  when outlen is 0) receives the first bytes of its stdout and stderr,
//  NUL-terminated.  Returns the exit status (0-255), or one of the
//  XXL_SPAWN_* codes above with the reason in err.
int
    xxl_spawn_run (char *const argv [], char *const envp [],
                   const char *input, size_t inlen, int timeout_ms,
                   char *out, size_t outlen, char *err, size_t errlen);

//  The last non-empty line of text (trimmed), for error messages; "" when
//  none.  Modifies text.
const char *
    xxl_spawn_last_line (char *text);

#endif
