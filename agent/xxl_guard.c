/*  xxl_guard.c -- an agent's death ends its runs (see xxl_guard.h).
*/

#define _GNU_SOURCE
#include "xxl_guard.h"
#include "xxl_journal.h"
#include "../sdk/src/xxl_log.h"

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
#include <sys/socket.h>
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
    //  (a socket pair, not a pipe: a lease sent after the guardian died
    //  fails with EPIPE, never SIGPIPE, thanks to MSG_NOSIGNAL)
    int fds [2];
    if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds)) {
        zsys_error ("guard: cannot make a socket pair: %s", strerror (errno));
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

int
xxl_guard_lease (xxl_guard_t *self, int64_t until)
{
    assert (self);
    unsigned char record [8];
    uint64_t value = (uint64_t) until;
    for (int i = 7; i >= 0; i--, value >>= 8)
        record [i] = (unsigned char) value;
    //  (8 bytes to a socket with room: all or nothing; a full socket means
    //  the guardian is not reading: the next renewal tries again)
    return send (self->fd, record, sizeof record, MSG_NOSIGNAL | MSG_DONTWAIT)
           == (ssize_t) sizeof record? 0: -1;
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

static int64_t
s_boot_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_BOOTTIME, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void s_kill_open (char *argv [], const char *why);

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
    //  What comes through the socket: run leases (8 bytes each, big
    //  endian, CLOCK_BOOTTIME ms); then it ends with the agent
    unsigned char buf [256], record [8];
    size_t have = 0;
    int64_t until = -1;
    while (1) {
        int timeout = -1;
        if (until >= 0) {
            int64_t left = until + XXL_GUARD_LEASE_GRACE_MS - s_boot_ms ();
            timeout = left > 0? (left < INT32_MAX? (int) left: INT32_MAX): 0;
        }
        struct pollfd item = { GUARD_FD, POLLIN, 0 };
        int rc = poll (&item, 1, timeout);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc == 0) {
            //  The lease ran out and the agent did not stop its runs (it
            //  is frozen or stalled): their processes go now
            s_kill_open (argv, "the agent's run lease ran out (the agent frozen or"
                               " stalled)");
            until = -1;
            continue;
        }
        ssize_t n = rc < 0? -1: read (GUARD_FD, buf, sizeof buf);
        if (n == 0 || (n < 0 && errno != EINTR))
            break;
        for (ssize_t i = 0; i < n; i++) {
            record [have++] = buf [i];
            if (have == sizeof record) {
                uint64_t value = 0;
                for (size_t b = 0; b < sizeof record; b++)
                    value = value << 8 | record [b];
                until = (int64_t) value;
                have = 0;
            }
        }
    }
    s_kill_open (argv, NULL);
    return 0;
}

//  Kills the processes of every run of LIFE (argv [3]) still open in the
//  journal (argv [2]), and their process groups; why: logged (NULL: the
//  agent ended)
static void
s_kill_open (char *argv [], const char *why)
{
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
            xxl_log_open ("xxl-agent guard", LOG_INFO, false);
            if (why)
                zsys_warning ("guard: %s: killed %d process(es) of the %zu run(s) the agent %s"
                              " has open", why, killed, runs.count, argv [3]);
            else
                zsys_warning ("guard: the agent %s ended with %zu run(s) open: killed %d"
                              " process(es) of them", argv [3], runs.count, killed);
        }
    }
    free (runs.ids);
}
