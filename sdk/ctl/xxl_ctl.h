/*  xxl_ctl.h -- the xxl-ctl command-line client as a library call.

    xxl_ctl_main parses a command line (global flags, a command, its
    flags), talks to the scheduler's api socket through the client library
    (or, for `cron next`, computes locally), and writes the result to out:
    readable tables and `key: value` lines, or with --json exactly one JSON
    document.  Errors go to err as one `xxl-ctl: <msg>` line (with --json,
    `{"error": "..."}` on out).  It returns the exit status: 0 success, 1 a
    server or connection error, 2 a usage error, and for `job trigger` 3 a
    run failed, 4 `--wait` timed out.  The xxl-ctl binary is a
    thin main() around it, so tests can link and drive it in-process.
*/

#ifndef XXL_CTL_H_INCLUDED
#define XXL_CTL_H_INCLUDED

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XXL_CTL_OK          0
#define XXL_CTL_FAILED      1   //  server answered an error, no reply, bad reply
#define XXL_CTL_USAGE       2   //  unknown command or flag, bad flag value
#define XXL_CTL_RUN_FAILED  3   //  job trigger: a run failed (at once, or with
                                //  --wait while waited for)
#define XXL_CTL_WAIT_TIMEOUT 4  //  job trigger --wait: a run still going at
                                //  --timeout

//  Runs one xxl-ctl command line (argv [0] is the program name) and
//  returns its exit status.
int xxl_ctl_main (int argc, char **argv, FILE *out, FILE *err);

#ifdef __cplusplus
}
#endif

#endif
