/*  command.c -- commandJobHandler, as XXL-JOB's SampleXxlJob.commandJobHandler.

    The param is a command line: it is split into words and run directly
    (posix_spawnp, looked up in PATH), with no shell: `ls -la /tmp` runs
    ls; pipes, redirections, variables and globs need one asked for
    (`bash -c "ls /tmp | wc -l"`).  XXL-JOB splits at single spaces; here
    words are split at blanks and may be quoted ('...' keeps everything,
    "..." and a backslash outside quotes escape one character), so a
    command without quotes splits as XXL-JOB's does.

    stdin is /dev/null; stdout and stderr are merged, and each line goes to
    the run's log.  Exit code 0: success; any other: failure "command exit
    value(N) is failed" (XXL-JOB's words); killed by a signal: "command
    killed by signal SIGx"; a program not found: "command 'x' not found".
    An empty param fails "command empty.".

    Kill and timeout.  Isolated (the default: the handler runs in an
    xxl-runner process, leader of the run's process group), the command
    stays in that group, so the agent's kill or timeout (SIGTERM to the
    group, SIGKILL 500 ms later) ends it and whatever it started, and the
    guardian finds it by the run's marker if the agent dies.  In process
    (an agent with in_process = 1) the command gets a process group of its
    own, which the handler signals itself (SIGTERM, SIGKILL 500 ms later)
    once the run is cancelled.  Either way the handler stops waiting once
    the command ended, even if a background child still holds its output.
*/

#define _GNU_SOURCE
#include <xxl/handler.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define XXL_CMD_LINE_MAX    (16 * 1024)     //  a longer output line is cut into pieces
#define XXL_CMD_GRACE_MS    500
#define XXL_CMD_WORDS_MAX   4096

static long
s_mono_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

//  Splits line into words (see the head of this file) in a malloc'd
//  buffer; *words gets a malloc'd NULL-terminated array pointing into
//  *buffer.  Returns the number of words, -1 (with *error) on an
//  unterminated quote or out of memory.
static int
s_split (const char *line, char **buffer, char ***words, const char **error)
{
    size_t len = strlen (line);
    char *out = (char *) malloc (len + 1);
    char **list = (char **) calloc (len / 2 + 2, sizeof (char *));
    *buffer = out;
    *words = list;
    if (!out || !list) {
        *error = "out of memory";
        return -1;
    }
    int count = 0;
    const char *p = line;
    char *o = out;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
            p++;
        if (!*p)
            break;
        if (count >= XXL_CMD_WORDS_MAX) {
            *error = "too many words";
            return -1;
        }
        list [count++] = o;
        while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
            if (*p == '\'') {
                const char *end = strchr (p + 1, '\'');
                if (!end) {
                    *error = "unterminated ' quote";
                    return -1;
                }
                memcpy (o, p + 1, (size_t) (end - p - 1));
                o += end - p - 1;
                p = end + 1;
            }
            else
            if (*p == '"') {
                p++;
                while (*p && *p != '"') {
                    if (*p == '\\' && (p [1] == '"' || p [1] == '\\' || p [1] == '$' || p [1] == '`'))
                        p++;
                    *o++ = *p++;
                }
                if (*p != '"') {
                    *error = "unterminated \" quote";
                    return -1;
                }
                p++;
            }
            else
            if (*p == '\\' && p [1]) {
                *o++ = p [1];
                p += 2;
            }
            else
                *o++ = *p++;
        }
        *o++ = 0;
    }
    list [count] = NULL;
    return count;
}

//  Logs the complete lines of buf [0..*len) (all of it when flush), keeps
//  the rest at its start
static void
s_log_lines (xxl_run_t *run, char *buf, size_t *len, int flush)
{
    size_t start = 0;
    for (size_t i = 0; i < *len; i++)
        if (buf [i] == '\n') {
            size_t end = i > start && buf [i - 1] == '\r'? i - 1: i;
            xxl_run_log (run, "%.*s", (int) (end - start), buf + start);
            start = i + 1;
        }
    if (start == 0 && (*len >= XXL_CMD_LINE_MAX || (flush && *len))) {
        xxl_run_log (run, "%.*s", (int) *len, buf);
        start = *len;
    }
    if (flush && start < *len) {
        xxl_run_log (run, "%.*s", (int) (*len - start), buf + start);
        start = *len;
    }
    memmove (buf, buf + start, *len - start);
    *len -= start;
}

//  1 when this handler runs in an xxl-runner process (isolated), whose
//  process group is the run's; 0 inside the agent
static int
s_isolated (void)
{
    return strstr (program_invocation_short_name, "xxl-runner") != NULL;
}

static int
s_command (xxl_run_t *run)
{
    const char *param = xxl_run_param (run);
    char *buffer = NULL, **argv = NULL;
    const char *error = NULL;
    int count = s_split (param, &buffer, &argv, &error);
    if (count <= 0) {
        char msg [128];
        snprintf (msg, sizeof msg, count == 0? "command empty.": "command not valid: %s", error);
        xxl_run_log (run, "%s", msg);
        free (buffer);
        free (argv);
        return xxl_run_fail (run, msg);
    }
    int isolated = s_isolated ();
    int pipe_fds [2];
    if (pipe2 (pipe_fds, O_CLOEXEC)) {
        free (buffer);
        free (argv);
        return xxl_run_fail (run, "cannot create a pipe");
    }
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init (&actions);
    posix_spawnattr_init (&attr);
    posix_spawn_file_actions_addopen (&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2 (&actions, pipe_fds [1], 1);
    posix_spawn_file_actions_adddup2 (&actions, pipe_fds [1], 2);
#if defined (__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    //  Nothing of the runner (its result pipe, the plugin fd) leaks in
    posix_spawn_file_actions_addclosefrom_np (&actions, 3);
#endif
    sigset_t mask, defaults;
    sigemptyset (&mask);
    sigemptyset (&defaults);
    int signals [] = { SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGCHLD, SIGUSR1, SIGUSR2, SIGALRM };
    for (size_t i = 0; i < sizeof signals / sizeof signals [0]; i++)
        sigaddset (&defaults, signals [i]);
    posix_spawnattr_setsigmask (&attr, &mask);
    posix_spawnattr_setsigdefault (&attr, &defaults);
    short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
    if (!isolated) {
        //  Inside the agent: a group of its own, which we signal ourselves
        posix_spawnattr_setpgroup (&attr, 0);
        flags |= POSIX_SPAWN_SETPGROUP;
    }
    posix_spawnattr_setflags (&attr, flags);
    pid_t pid;
    int rc = posix_spawnp (&pid, argv [0], &actions, &attr, argv, environ);
    posix_spawn_file_actions_destroy (&actions);
    posix_spawnattr_destroy (&attr);
    close (pipe_fds [1]);
    if (rc) {
        char msg [512];
        if (rc == ENOENT)
            snprintf (msg, sizeof msg, "command '%.200s' not found", argv [0]);
        else
            snprintf (msg, sizeof msg, "cannot run command '%.200s': %s", argv [0], strerror (rc));
        xxl_run_log (run, "%s", msg);
        close (pipe_fds [0]);
        free (buffer);
        free (argv);
        return xxl_run_fail (run, msg);
    }
    xxl_run_log (run, "command: %s (pid %d)", param, (int) pid);
    free (buffer);
    free (argv);

    char *out = (char *) malloc (XXL_CMD_LINE_MAX + 1);
    size_t len = 0;
    int status = 0, exited = 0, open_pipe = 1;
    long term_at = 0;
    int killed = 0;
    while (!exited || open_pipe) {
        if (!term_at && xxl_run_cancelled (run)) {
            //  Isolated, the agent signals the whole group too; in
            //  process only we can
            kill (isolated? pid: -pid, SIGTERM);
            term_at = s_mono_ms ();
        }
        if (term_at && !killed && s_mono_ms () - term_at >= XXL_CMD_GRACE_MS) {
            kill (isolated? pid: -pid, SIGKILL);
            killed = 1;
        }
        if (!exited && waitpid (pid, &status, WNOHANG) == pid)
            exited = 1;
        if (!open_pipe) {
            usleep (20 * 1000);             //  the output ended before the command
            continue;
        }
        struct pollfd item = { pipe_fds [0], POLLIN, 0 };
        //  Once the command ended, only what is already in the pipe is
        //  read: a background child may keep it open for ever
        int ready = poll (&item, 1, exited? 0: 50);
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready <= 0) {
            if (exited)
                open_pipe = 0;
            continue;
        }
        ssize_t got = out? read (pipe_fds [0], out + len, XXL_CMD_LINE_MAX - len): -1;
        if (got <= 0) {
            if (got < 0 && errno == EINTR)
                continue;
            open_pipe = 0;
            continue;
        }
        len += (size_t) got;
        s_log_lines (run, out, &len, 0);
    }
    if (out && len)
        s_log_lines (run, out, &len, 1);
    free (out);
    close (pipe_fds [0]);
    if (!isolated && term_at)
        kill (-pid, SIGKILL);               //  stragglers of its group
    char msg [128];
    if (WIFEXITED (status) && WEXITSTATUS (status) == 0)
        return xxl_run_success (run, NULL);
    if (WIFSIGNALED (status)) {
        const char *name = sigabbrev_np (WTERMSIG (status));
        snprintf (msg, sizeof msg, "command killed by signal SIG%s", name? name: "?");
    }
    else
        snprintf (msg, sizeof msg, "command exit value(%d) is failed", WEXITSTATUS (status));
    xxl_run_log (run, "%s", msg);
    return xxl_run_fail (run, msg);
}

static const xxl_handler_t s_handlers [] = {
    { "commandJobHandler", s_command, 0 },
    { NULL, NULL, 0 }
};

XXL_HANDLER_PLUGIN ("command", "1.0", NULL, NULL, s_handlers)
