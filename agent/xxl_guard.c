/*  xxl_guard.c -- an agent's death ends its runs (see xxl_guard.h).
*/

#define _GNU_SOURCE
#include "xxl_guard.h"
#include "xxl_journal.h"

#include <czmq.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define GUARD_FD        3
#define WAIT_MS         2000

struct _xxl_guard_t {
    pid_t pid;
    int fd;                             //  the pipe's write end (CLOEXEC)
};

static int
s_pidfd_open (pid_t pid)
{
    return (int) syscall (SYS_pidfd_open, pid, 0);
}

static int
s_pidfd_signal (int pidfd, int sig)
{
    return (int) syscall (SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

xxl_guard_t *
xxl_guard_new (const char *program, const char *journal_path, const char *life)
{
    assert (journal_path && life);
    int fds [2];
    if (pipe2 (fds, O_CLOEXEC)) {
        zsys_error ("guard: cannot make a pipe: %s", strerror (errno));
        return NULL;
    }
    //  The read end goes to fd 3 of the guardian; above 3 here, so that
    //  the dup2 cannot clobber it
    if (fds [0] <= GUARD_FD) {
        int high = fcntl (fds [0], F_DUPFD_CLOEXEC, 10);
        if (high >= 0) {
            close (fds [0]);
            fds [0] = high;
        }
    }
    char pgid [24];
    snprintf (pgid, sizeof pgid, "%d", (int) getpgrp ());
    char *argv [] = {
        (char *) "xxl-agent", (char *) "--guard", (char *) journal_path, (char *) life,
        pgid, NULL
    };
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init (&actions);
    posix_spawnattr_init (&attr);
    posix_spawn_file_actions_addopen (&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2 (&actions, fds [0], GUARD_FD);
    sigset_t mask;
    sigemptyset (&mask);
    posix_spawnattr_setsigmask (&attr, &mask);
    sigset_t defaults;
    sigfillset (&defaults);
    posix_spawnattr_setsigdefault (&attr, &defaults);
    posix_spawnattr_setpgroup (&attr, 0);
    posix_spawnattr_setflags (&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK
                                   | POSIX_SPAWN_SETSIGDEF);
    pid_t pid;
    int rc = posix_spawn (&pid, program? program: "/proc/self/exe", &actions, &attr,
                          argv, environ);
    posix_spawn_file_actions_destroy (&actions);
    posix_spawnattr_destroy (&attr);
    close (fds [0]);
    if (rc) {
        zsys_error ("guard: cannot start %s --guard: %s", program? program: "/proc/self/exe",
                    strerror (rc));
        close (fds [1]);
        return NULL;
    }
    xxl_guard_t *self = (xxl_guard_t *) zmalloc (sizeof (xxl_guard_t));
    self->pid = pid;
    self->fd = fds [1];
    return self;
}

void
xxl_guard_destroy (xxl_guard_t **self_p)
{
    assert (self_p);
    xxl_guard_t *self = *self_p;
    if (!self)
        return;
    int pidfd = s_pidfd_open (self->pid);
    close (self->fd);
    if (pidfd >= 0) {
        struct pollfd item = { pidfd, POLLIN, 0 };
        while (poll (&item, 1, WAIT_MS) < 0 && errno == EINTR)
            ;
        close (pidfd);
    }
    int status;
    if (waitpid (self->pid, &status, WNOHANG) == 0)
        zsys_warning ("guard: the guardian (pid %d) did not end within %d ms",
                      (int) self->pid, WAIT_MS);
    free (self);
    *self_p = NULL;
}

int
xxl_guard_pid (xxl_guard_t *self)
{
    assert (self);
    return (int) self->pid;
}

//  Reads /proc/PID/environ into *buf (grown as needed); its length, or -1
static ssize_t
s_read_environ (pid_t pid, char **buf, size_t *cap)
{
    char path [64];
    snprintf (path, sizeof path, "/proc/%d/environ", (int) pid);
    int fd = open (path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t len = 0;
    while (1) {
        if (len + 4096 > *cap) {
            size_t cap2 = *cap? *cap * 2: 16384;
            char *more = (char *) realloc (*buf, cap2);
            if (!more)
                break;
            *buf = more;
            *cap = cap2;
        }
        ssize_t n = read (fd, *buf + len, *cap - len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t) n;
    }
    close (fd);
    if (*buf)
        (*buf) [len] = 0;
    return (ssize_t) len;
}

int
xxl_guard_reap (xxl_guard_match_fn *match, void *arg, int except_pgid)
{
    assert (match);
    DIR *dir = opendir ("/proc");
    if (!dir) {
        zsys_error ("guard: cannot list /proc: %s", strerror (errno));
        return 0;
    }
    pid_t self_pid = getpid ();
    pid_t spared [3] = { getpgrp (), getsid (0), (pid_t) except_pgid };
    const size_t prefix = strlen (XXL_GUARD_ENV "=");
    char *env = NULL;
    size_t cap = 0;
    int killed = 0;
    struct dirent *entry;
    while ((entry = readdir (dir))) {
        char *end;
        long number = strtol (entry->d_name, &end, 10);
        if (*end || number <= 0 || (pid_t) number == self_pid)
            continue;
        pid_t pid = (pid_t) number;
        //  The pidfd first: what it signals is the process read below,
        //  even if the pid is reused meanwhile
        int pidfd = s_pidfd_open (pid);
        if (pidfd < 0)
            continue;
        ssize_t len = s_read_environ (pid, &env, &cap);
        for (ssize_t at = 0; len > 0 && at < len; at += (ssize_t) strlen (env + at) + 1) {
            const char *var = env + at;
            if (strncmp (var, XXL_GUARD_ENV "=", prefix))
                continue;
            const char *value = var + prefix;
            const char *dot = strrchr (value, '.');
            if (!dot || dot == value || (size_t) (dot - value) >= 64)
                break;
            char life [64];
            memcpy (life, value, (size_t) (dot - value));
            life [dot - value] = 0;
            int64_t log_id = strtoll (dot + 1, NULL, 10);
            if (!match (arg, life, log_id))
                break;
            //  Its group, while it is alive (so the group's number cannot
            //  have been reused), then itself
            pid_t pgid = getpgid (pid);
            int spare = pgid <= 1;
            for (size_t i = 0; i < 3; i++)
                spare |= pgid == spared [i];
            if (!spare && s_pidfd_signal (pidfd, 0) == 0)
                kill (-pgid, SIGKILL);
            s_pidfd_signal (pidfd, SIGKILL);
            killed++;
            break;
        }
        close (pidfd);
    }
    closedir (dir);
    free (env);
    return killed;
}

//  ---------------------------------------------------------------------
//  The guardian process

typedef struct {
    const char *life;
    int64_t *ids;                       //  sorted
    size_t count;
} open_runs_t;

static int
s_id_cmp (const void *a, const void *b)
{
    int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
    return x < y? -1: x > y;
}

static int
s_open_match (void *arg, const char *life, int64_t log_id)
{
    open_runs_t *runs = (open_runs_t *) arg;
    return streq (life, runs->life)
        && bsearch (&log_id, runs->ids, runs->count, sizeof (int64_t), s_id_cmp) != NULL;
}

int
xxl_guard_main (int argc, char *argv [])
{
    if (argc != 5) {
        fprintf (stderr, "usage: xxl-agent --guard JOURNAL LIFE AGENT_PGID\n");
        return 2;
    }
    int ignored [] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE };
    for (size_t i = 0; i < sizeof ignored / sizeof ignored [0]; i++)
        signal (ignored [i], SIG_IGN);
    //  Nothing comes through the pipe: it only ends
    char buf [256];
    while (1) {
        ssize_t n = read (GUARD_FD, buf, sizeof buf);
        if (n == 0 || (n < 0 && errno != EINTR))
            break;
    }
    open_runs_t runs = { argv [3], NULL, 0 };
    if (xxl_journal_read_open (argv [2], argv [3], &runs.ids, &runs.count) == 0 && runs.count) {
        qsort (runs.ids, runs.count, sizeof (int64_t), s_id_cmp);
        //  Again while it finds some: a process may have forked during a
        //  pass, out of the group it was in
        int killed = 0, pass;
        for (int passes = 0; passes < 3; passes++) {
            killed += pass = xxl_guard_reap (s_open_match, &runs, atoi (argv [4]));
            if (!pass)
                break;
        }
        if (killed) {
            zsys_set_logident ("xxl-agent guard");
            zsys_set_logstream (stderr);
            zsys_warning ("guard: the agent %s ended with %zu run(s) open: killed %d process(es)"
                          " of them", argv [3], runs.count, killed);
        }
    }
    free (runs.ids);
    return 0;
}
