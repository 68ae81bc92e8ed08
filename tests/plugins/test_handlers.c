/*  test_handlers.c -- handlers for the agent's tests (built as a .so).

    okJobHandler        succeeds with "ok"
    failJobHandler      fails with "failed on purpose"
    sleepJobHandler     sleeps param ms (default 1000) in 50 ms steps,
                        returning early when cancelled()
    spinJobHandler      busy loop that ignores cancellation
    crashJobHandler     writes through a NULL pointer (SIGSEGV)
    logJobHandler       writes param (default 3) numbered lines
    paramJobHandler     succeeds with the param as message
    shardJobHandler     logs and returns "shard i/n"
    emptyJobHandler     returns 0 without a word (isolated)
    emptyInJobHandler   same, flagged XXL_HANDLER_IN_PROCESS
    sleepInJobHandler   sleepJobHandler, flagged XXL_HANDLER_IN_PROCESS
    spinInJobHandler    spins until cancelled(), flagged in-process
    logFileJobHandler   logs "before the file", asks for its log file
                        (xxl_run_log_file), appends "file line 1" and "file
                        line 2" to it with O_APPEND (param "child": the
                        second line by a child, sh), then logs "after the
                        file" (param "open": the second line without its
                        "\n", and no "after the file"); succeeds with the path, fails "no log file"
                        on NULL, "not the same path" when a second call
                        differs, "relative path" when it is not absolute
    logFileInJobHandler same, flagged XXL_HANDLER_IN_PROCESS
    napJobHandler       xxl_run_sleep (param ms, default 1000): fails
                        "cancelled" when it returned 1, else succeeds
                        "napped"
    napInJobHandler     same, flagged XXL_HANDLER_IN_PROCESS
    napPairJobHandler   two xxl_run_sleep at once, the handler's and a
                        thread's it starts: fails "cancelled 2" when both
                        returned 1, "cancelled N" with N the number that
                        did, else succeeds "napped"
    napPairInJobHandler same, flagged XXL_HANDLER_IN_PROCESS
*/

#define _GNU_SOURCE
#include <xxl/handler.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int
s_ok (xxl_run_t *run)
{
    return xxl_run_success (run, "ok");
}

static int
s_fail (xxl_run_t *run)
{
    return xxl_run_fail (run, "failed on purpose");
}

static long
s_mono_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

static int
s_sleep (xxl_run_t *run)
{
    const char *param = xxl_run_param (run);
    long ms = *param? atol (param): 1000;
    long until = s_mono_ms () + ms;
    while (1) {
        if (xxl_run_cancelled (run))
            return xxl_run_fail (run, "cancelled");
        long left = until - s_mono_ms ();
        if (left <= 0)
            break;
        if (left > 50)
            left = 50;
        struct timespec step = { 0, left * 1000000 };
        nanosleep (&step, NULL);
    }
    return xxl_run_success (run, "slept");
}

static int
s_spin (xxl_run_t *run)
{
    (void) run;
    volatile unsigned long counter = 0;
    while (1)
        counter++;
    return 0;
}

static int
s_spin_in (xxl_run_t *run)
{
    volatile unsigned long counter = 0;
    while (!xxl_run_cancelled (run))
        counter++;
    return xxl_run_fail (run, "cancelled");
}

//  A real memory fault.  Kept out of the sanitizers' reach: in the
//  sanitizer build UBSan would report the NULL store and exit(1) first,
//  and the point is a handler dying by SIGSEGV, as in production.
__attribute__ ((noinline, no_sanitize ("address", "undefined")))
static void
s_fault (void)
{
    //  The address comes from a volatile, so the compiler cannot prove the
    //  store is to NULL and drop it (it did, at -O2)
    static volatile uintptr_t address = 0;
    *(volatile int *) address = 1;
}

static int
s_crash (xxl_run_t *run)
{
    xxl_run_log (run, "about to crash");
    s_fault ();
    return 0;
}

static int
s_log (xxl_run_t *run)
{
    const char *param = xxl_run_param (run);
    int lines = *param? atoi (param): 3;
    for (int i = 1; i <= lines; i++)
        xxl_run_log (run, "log line %d", i);
    return 0;
}

static int
s_param (xxl_run_t *run)
{
    return xxl_run_success (run, xxl_run_param (run));
}

static int
s_shard (xxl_run_t *run)
{
    char msg [64];
    snprintf (msg, sizeof msg, "shard %d/%d", xxl_run_shard_index (run), xxl_run_shard_total (run));
    xxl_run_log (run, "%s", msg);
    return xxl_run_success (run, msg);
}

static int
s_empty (xxl_run_t *run)
{
    (void) run;
    return 0;
}

//  Appends text to path with O_APPEND, one write
static int
s_append (const char *path, const char *text)
{
    int fd = open (path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = write (fd, text, strlen (text));
    close (fd);
    return n == (ssize_t) strlen (text)? 0: -1;
}

//  The second line by a child process, as a script handler's would be
static int
s_append_child (const char *path)
{
    char *argv [] = { "sh", "-c", "echo 'file line 2' >> \"$1\"", "sh", (char *) path, NULL };
    pid_t pid;
    if (posix_spawnp (&pid, "sh", NULL, NULL, argv, environ))
        return -1;
    int status;
    while (waitpid (pid, &status, 0) < 0)
        ;
    return WIFEXITED (status) && WEXITSTATUS (status) == 0? 0: -1;
}

static int
s_log_file (xxl_run_t *run)
{
    xxl_run_log (run, "before the file");
    const char *path = xxl_run_log_file (run);
    if (!path)
        return xxl_run_fail (run, "no log file");
    if (path [0] != '/')
        return xxl_run_fail (run, "relative path");
    const char *again = xxl_run_log_file (run);
    if (!again || strcmp (again, path))
        return xxl_run_fail (run, "not the same path");
    int child = strcmp (xxl_run_param (run), "child") == 0;
    int open_end = strcmp (xxl_run_param (run), "open") == 0;
    if (s_append (path, "file line 1\n")
    ||  (child? s_append_child (path): s_append (path, open_end? "file line 2": "file line 2\n")))
        return xxl_run_fail (run, "cannot append to the log file");
    if (!open_end)
        xxl_run_log (run, "after the file");
    return xxl_run_success (run, path);
}

static int
s_nap (xxl_run_t *run)
{
    const char *param = xxl_run_param (run);
    long ms = *param? atol (param): 1000;
    if (xxl_run_sleep (run, ms))
        return xxl_run_fail (run, "cancelled");
    return xxl_run_success (run, "napped");
}

typedef struct {
    xxl_run_t *run;
    long ms;
    int cancelled;
} nap_t;

static void *
s_nap_thread (void *arg)
{
    nap_t *nap = (nap_t *) arg;
    nap->cancelled = xxl_run_sleep (nap->run, nap->ms);
    return NULL;
}

static int
s_nap_pair (xxl_run_t *run)
{
    const char *param = xxl_run_param (run);
    nap_t other = { run, *param? atol (param): 1000, 0 };
    pthread_t thread;
    int started = pthread_create (&thread, NULL, s_nap_thread, &other) == 0;
    int cancelled = xxl_run_sleep (run, other.ms);
    if (started)
        pthread_join (thread, NULL);
    int count = cancelled + (started && other.cancelled);
    xxl_run_log (run, "nap pair: cancelled %d", count);
    if (count) {
        char text [32];
        snprintf (text, sizeof text, "cancelled %d", count);
        return xxl_run_fail (run, text);
    }
    return xxl_run_success (run, started? "napped": "napped alone");
}

static const xxl_handler_t s_handlers [] = {
    { "okJobHandler", s_ok, 0 },
    { "failJobHandler", s_fail, 0 },
    { "sleepJobHandler", s_sleep, 0 },
    { "spinJobHandler", s_spin, 0 },
    { "crashJobHandler", s_crash, 0 },
    { "logJobHandler", s_log, 0 },
    { "paramJobHandler", s_param, 0 },
    { "shardJobHandler", s_shard, 0 },
    { "emptyJobHandler", s_empty, 0 },
    { "emptyInJobHandler", s_empty, XXL_HANDLER_IN_PROCESS },
    { "sleepInJobHandler", s_sleep, XXL_HANDLER_IN_PROCESS },
    { "spinInJobHandler", s_spin_in, XXL_HANDLER_IN_PROCESS },
    { "logFileJobHandler", s_log_file, 0 },
    { "logFileInJobHandler", s_log_file, XXL_HANDLER_IN_PROCESS },
    { "napJobHandler", s_nap, 0 },
    { "napInJobHandler", s_nap, XXL_HANDLER_IN_PROCESS },
    { "napPairJobHandler", s_nap_pair, 0 },
    { "napPairInJobHandler", s_nap_pair, XXL_HANDLER_IN_PROCESS },
    { NULL, NULL, 0 }
};

XXL_HANDLER_PLUGIN ("test", "1.0", NULL, NULL, s_handlers)
