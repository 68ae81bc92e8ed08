/*  xxl_runner_main.c -- xxl-runner, runs one isolated BEAN handler.

    The agent never fork()s its multithreaded self; for each isolated BEAN
    run it posix_spawn()s this small program (libc and libdl only, so it
    starts fast) in a new process group, with:

        argv:  xxl-runner HANDLER JOB_ID LOG_ID SHARD_INDEX SHARD_TOTAL PARAM [PLUGIN_PATH]
        fd 0:  /dev/null
        fd 1, 2: the run's log file, O_APPEND (handler log lines go here;
               its path, for xxl_run_log_file, is read back from
               /proc/self/fd/1)
        fd 3:  write end of the result pipe
        fd 4:  read-only fd on the plugin file the agent accepted the run
               with (loaded through /proc/self/fd/4)

    It loads the plugin, checks the ABI, runs the plugin's init, the
    handler, then writes "CODE MSG" to fd 3 and exits 0.  A crash of the
    handler kills only this process; the agent reports the signal.  SIGTERM
    (kill, timeout) makes the run's cancelled() return 1; the agent follows
    with SIGKILL after a grace period.  Exit codes: 0 result written, 2 usage,
    3 plugin could not be loaded (reason on fd 3 too).
*/

#define _GNU_SOURCE
#include <xxl/handler.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define RESULT_FD   3
#define PLUGIN_FD   4

static volatile sig_atomic_t s_cancelled = 0;
//  A pipe whose read end becomes readable at the first SIGTERM or SIGINT
//  (xxl_run_sleep's wait: whichever thread takes the signal)
static int s_term_pipe [2] = { -1, -1 };

static struct {
    const char *param;
    int64_t job_id, log_id;
    int shard_index, shard_total;
    int result_set, result_code;
    char *result_msg;
} s_run;

static void
s_on_term (int signum)
{
    (void) signum;
    s_cancelled = 1;
    if (s_term_pipe [1] >= 0) {
        ssize_t rc = write (s_term_pipe [1], "", 1);
        (void) rc;
    }
}

static const char *s_param (xxl_run_t *run) { (void) run; return s_run.param; }
static int64_t s_job_id (xxl_run_t *run) { (void) run; return s_run.job_id; }
static int64_t s_log_id (xxl_run_t *run) { (void) run; return s_run.log_id; }
static int s_shard_index (xxl_run_t *run) { (void) run; return s_run.shard_index; }
static int s_shard_total (xxl_run_t *run) { (void) run; return s_run.shard_total; }
static int s_cancelled_fn (xxl_run_t *run) { (void) run; return s_cancelled != 0; }
//  An isolated run has no job lifecycle (xxl/handler.h: in process only)
static void *s_job_state (xxl_run_t *run) { (void) run; return NULL; }

static void
s_write_line (const char *text)
{
    size_t len = strlen (text);
    char *buf = (char *) malloc (len + 96);
    if (!buf)
        return;
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    struct tm tm;
    localtime_r (&ts.tv_sec, &tm);
    size_t n = strftime (buf, 32, "%Y-%m-%d %H:%M:%S", &tm);
    n += (size_t) snprintf (buf + n, 64, ".%03d [%ld/%ld] ",
                            (int) (ts.tv_nsec / 1000000),
                            (long) syscall (SYS_gettid), (long) getpid ());
    memcpy (buf + n, text, len);
    n += len;
    buf [n++] = '\n';
    ssize_t rc = write (STDOUT_FILENO, buf, n);
    (void) rc;
    free (buf);
}

//  The run's log file: the file on fd 1 (the agent opened it), by the
//  path /proc gives for it, once that path is checked to name that very
//  file.  NULL, with a line in the log saying why, when fd 1 is no log
//  file (the agent could not open one: /dev/null) or the path is gone.
static const char *
s_log_file (xxl_run_t *run)
{
    (void) run;
    static char s_path [PATH_MAX];
    static int s_looked = 0;
    if (s_looked)
        return s_path [0]? s_path: NULL;
    s_looked = 1;
    struct stat fd_st, path_st;
    ssize_t len = readlink ("/proc/self/fd/1", s_path, sizeof s_path - 1);
    if (len > 0 && s_path [0] == '/') {
        s_path [len] = 0;
        if (fstat (STDOUT_FILENO, &fd_st) == 0 && S_ISREG (fd_st.st_mode)
        &&  stat (s_path, &path_st) == 0
        &&  path_st.st_dev == fd_st.st_dev && path_st.st_ino == fd_st.st_ino)
            return s_path;
    }
    s_path [0] = 0;
    s_write_line ("runner: the run has no log file to name (xxl_run_log_file)");
    return NULL;
}

static void
s_vlog (xxl_run_t *run, const char *format, va_list args)
{
    (void) run;
    char *text = NULL;
    if (vasprintf (&text, format, args) >= 0) {
        s_write_line (text);
        free (text);
    }
}

//  Monotonic ns
static int64_t
s_mono_ns (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

//  xxl_run_sleep: a wait on the pipe the signal handler writes, so that a
//  SIGTERM (the agent's kill or timeout) taken by any thread, before or
//  during the wait, ends it; without the pipe, 50 ms slices
static int
s_sleep (xxl_run_t *run, int64_t ms)
{
    (void) run;
    if (ms > XXL_RUN_SLEEP_MAX_MS)
        ms = XXL_RUN_SLEEP_MAX_MS;
    int64_t until = s_mono_ns () + (ms > 0? ms: 0) * 1000000;
    int64_t left;
    while (!s_cancelled && (left = until - s_mono_ns ()) > 0) {
        if (s_term_pipe [0] < 0 && left > 50000000)
            left = 50000000;
        struct timespec wait = { (time_t) (left / 1000000000), (long) (left % 1000000000) };
        struct pollfd item = { s_term_pipe [0], POLLIN, 0 };
        ppoll (&item, s_term_pipe [0] >= 0? 1: 0, &wait, NULL);
    }
    return s_cancelled != 0;
}

static void
s_set_result (xxl_run_t *run, int code, const char *msg)
{
    (void) run;
    s_run.result_set = 1;
    s_run.result_code = code;
    free (s_run.result_msg);
    s_run.result_msg = msg? strdup (msg): NULL;
}

static void
s_result (int code, const char *msg)
{
    //  Cap to what the agent keeps; one write into the pipe buffer
    char buf [16 * 1024];
    int n = snprintf (buf, sizeof buf, "%d %s", code, msg? msg: "");
    if (n < 0)
        return;
    if ((size_t) n >= sizeof buf)
        n = sizeof buf - 1;
    ssize_t rc = write (RESULT_FD, buf, (size_t) n);
    (void) rc;
}

int
main (int argc, char *argv [])
{
    if (argc == 2 && strcmp (argv [1], "--version") == 0) {
        printf ("xxl-runner %s\n", PACKAGE_VERSION);
        return 0;
    }
    if (argc != 7 && argc != 8) {
        fprintf (stderr, "usage: xxl-runner HANDLER JOB_ID LOG_ID SHARD_INDEX SHARD_TOTAL PARAM [PLUGIN_PATH]\n"
                         "(started by xxl-agent, not by hand)\n");
        return 2;
    }
    const char *name = argv [1];
    s_run.job_id = strtoll (argv [2], NULL, 10);
    s_run.log_id = strtoll (argv [3], NULL, 10);
    s_run.shard_index = atoi (argv [4]);
    s_run.shard_total = atoi (argv [5]);
    s_run.param = argv [6];

    if (pipe2 (s_term_pipe, O_CLOEXEC | O_NONBLOCK))
        s_term_pipe [0] = s_term_pipe [1] = -1;
    struct sigaction sa;
    memset (&sa, 0, sizeof sa);
    sa.sa_handler = s_on_term;
    sigaction (SIGTERM, &sa, NULL);
    sigaction (SIGINT, &sa, NULL);

    char path [64];
    snprintf (path, sizeof path, "/proc/self/fd/%d", PLUGIN_FD);
    void *dl = dlopen (path, RTLD_NOW | RTLD_LOCAL);
    if (!dl && argc == 8)
        dl = dlopen (argv [7], RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        char msg [1024];
        const char *error = dlerror ();
        snprintf (msg, sizeof msg, "runner: cannot load plugin: %s", error? error: "?");
        s_result (XXL_CODE_FAIL, msg);
        return 3;
    }
    xxl_handler_entry_fn *entry = (xxl_handler_entry_fn *) dlsym (dl, XXL_HANDLER_ENTRY);
    const xxl_handler_plugin_t *desc = entry? entry (): NULL;
    if (!desc || desc->abi_version != XXL_HANDLER_ABI_VERSION
    ||  desc->size < XXL_HANDLER_PLUGIN_SIZE_V1 || !desc->handlers) {
        s_result (XXL_CODE_FAIL, "runner: plugin has no valid descriptor");
        return 3;
    }
    const xxl_handler_t *handler = desc->handlers;
    while (handler->name && strcmp (handler->name, name))
        handler++;
    if (!handler->name || !handler->fn) {
        char msg [512];
        snprintf (msg, sizeof msg, "job handler [%.200s] not found in plugin", name);
        s_result (XXL_CODE_FAIL, msg);
        return 3;
    }
    const char *error = NULL;
    void *state = desc->init? desc->init (&error): NULL;
    if (error) {
        char msg [512];
        snprintf (msg, sizeof msg, "plugin init failed: %.400s", error);
        s_result (XXL_CODE_FAIL, msg);
        return 3;
    }
    static const xxl_handler_host_t host = {
        XXL_HANDLER_ABI_VERSION, sizeof (xxl_handler_host_t),
        s_param, s_job_id, s_log_id, s_shard_index, s_shard_total,
        s_vlog, s_set_result, s_cancelled_fn, s_job_state, s_log_file, s_sleep
    };
    xxl_run_t run = { &host, state };
    int rc = handler->fn (&run);
    int code;
    if (s_run.result_set)
        code = (rc != 0 && s_run.result_code == XXL_CODE_SUCCESS)? XXL_CODE_FAIL: s_run.result_code;
    else
        code = rc == 0? XXL_CODE_SUCCESS: XXL_CODE_FAIL;
    s_result (code, s_run.result_msg);
    if (desc->destroy)
        desc->destroy (state);
    free (s_run.result_msg);
    //  No dlclose: the process ends here
    return 0;
}
