/*  xxl_spawner.c -- starts the processes of runs and waits for them to end
    (see xxl_spawner.h).

    Its contract (ownership, threads, errors) is the header's.  Owns the
    runs' environment (the marker, a copy of the list of the agent's
    environment strings).  Used by xxl_runexec.c on pool threads.
*/

#define _GNU_SOURCE
#include "xxl_spawner.h"
#include "xxl_guard.h"

#include <czmq.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

struct _xxl_spawner_t {
    char *marker;                       //  XXL_AGENT_RUN's LIFE, or NULL
    char **env;                         //  environ at start, without any
    size_t env_count;                   //  XXL_AGENT_RUN (the runs' base)
};

static int64_t
s_mono_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

xxl_spawner_t *
xxl_spawner_new (const char *marker)
{
    xxl_spawner_t *self = (xxl_spawner_t *) calloc (1, sizeof (xxl_spawner_t));
    if (!self)
        return NULL;
    if (marker) {
        self->marker = strdup (marker);
        //  The runs' environment: the agent's, less a marker it may have
        //  itself (an agent started by a run)
        size_t count = 0;
        while (environ [count])
            count++;
        self->env = (char **) calloc (count + 1, sizeof (char *));
        for (size_t i = 0; self->env && i < count; i++)
            if (strncmp (environ [i], XXL_GUARD_ENV "=", strlen (XXL_GUARD_ENV) + 1))
                self->env [self->env_count++] = environ [i];
        if (!self->marker || !self->env)
            xxl_spawner_destroy (&self);
    }
    return self;
}

void
xxl_spawner_destroy (xxl_spawner_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    xxl_spawner_t *self = *self_p;
    *self_p = NULL;
    free (self->marker);
    free (self->env);
    free (self);
}

//  Moves fd to a number >= 10 if it is below, so that dup2 into 0..4 in the
//  child cannot clobber another source fd.  Returns the fd to use; *tmp is
//  set when a new fd was made (caller closes it).
static int
s_high_fd (int fd, int *tmp)
{
    *tmp = -1;
    if (fd < 0 || fd >= 10)
        return fd;
    int high = fcntl (fd, F_DUPFD_CLOEXEC, 10);
    if (high < 0)
        return fd;
    *tmp = high;
    return high;
}

pid_t
xxl_spawner_start (xxl_spawner_t *self, char *const argv [], int use_path,
                   int64_t log_id, int log_fd, const int *extra, int nextra)
{
    //  The agent's environment and the run's marker (xxl_guard.h)
    char *small [128], **envp = environ, marker [128];
    if (self->marker) {
        envp = self->env_count + 2 <= sizeof small / sizeof small [0]
             ? small: (char **) malloc ((self->env_count + 2) * sizeof (char *));
        if (!envp)
            return -1;
        memcpy (envp, self->env, self->env_count * sizeof (char *));
        snprintf (marker, sizeof marker, XXL_GUARD_ENV "=%s.%lld", self->marker,
                  (long long) log_id);
        envp [self->env_count] = marker;
        envp [self->env_count + 1] = NULL;
    }

    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init (&actions);
    posix_spawnattr_init (&attr);
    int tmp_log, tmp_extra [4] = { -1, -1, -1, -1 };
    int src_log = s_high_fd (log_fd, &tmp_log);
    posix_spawn_file_actions_addopen (&actions, 0, "/dev/null", O_RDONLY, 0);
    if (src_log >= 0) {
        posix_spawn_file_actions_adddup2 (&actions, src_log, 1);
        posix_spawn_file_actions_adddup2 (&actions, src_log, 2);
    }
    else {
        posix_spawn_file_actions_addopen (&actions, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_adddup2 (&actions, 1, 2);
    }
    for (int i = 0; i < nextra && i < 4; i++) {
        int src = s_high_fd (extra [i], &tmp_extra [i]);
        posix_spawn_file_actions_adddup2 (&actions, src, 3 + i);
    }
    sigset_t mask;
    sigemptyset (&mask);
    posix_spawnattr_setsigmask (&attr, &mask);
    sigset_t defaults;
    sigemptyset (&defaults);
    int signals [] = { SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGCHLD,
                       SIGUSR1, SIGUSR2, SIGALRM };
    for (size_t i = 0; i < sizeof signals / sizeof signals [0]; i++)
        sigaddset (&defaults, signals [i]);
    posix_spawnattr_setsigdefault (&attr, &defaults);
    posix_spawnattr_setpgroup (&attr, 0);
    posix_spawnattr_setflags (&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK
                                   | POSIX_SPAWN_SETSIGDEF);
    pid_t pid;
    int rc = use_path
        ? posix_spawnp (&pid, argv [0], &actions, &attr, argv, envp)
        : posix_spawn (&pid, argv [0], &actions, &attr, argv, envp);
    if (envp != small && envp != environ)
        free (envp);
    posix_spawn_file_actions_destroy (&actions);
    posix_spawnattr_destroy (&attr);
    if (tmp_log >= 0)
        close (tmp_log);
    for (int i = 0; i < 4; i++)
        if (tmp_extra [i] >= 0)
            close (tmp_extra [i]);
    if (rc) {
        errno = rc;
        return -1;
    }
    return pid;
}

static void
s_signal_name (int sig, char *buf, size_t buflen)
{
    const char *abbrev = sigabbrev_np (sig);
    if (abbrev)
        snprintf (buf, buflen, "SIG%s", abbrev);
    else
        snprintf (buf, buflen, "signal %d", sig);
}

int
xxl_spawner_wait (pid_t pid, const xxl_spawner_watch_t *watch)
{
    //  Published before cancel is first read below: a kill after that
    //  read writes it, so the poll cannot miss the kill
    int wake_fd = eventfd (0, EFD_NONBLOCK | EFD_CLOEXEC);
    watch->publish (watch->arg, wake_fd);
    int pidfd = (int) syscall (SYS_pidfd_open, pid, 0);
    int term_sent = 0, kill_sent = 0;
    int64_t kill_at = 0;
    int status = 0;
    while (1) {
        int64_t now = s_mono_ms ();
        int cancel = __atomic_load_n (watch->cancel, __ATOMIC_ACQUIRE);
        if (!cancel && watch->deadline && now >= watch->deadline) {
            int none = 0;
            __atomic_compare_exchange_n (watch->cancel, &none, watch->cancel_timeout, 0,
                                         __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
            cancel = watch->cancel_timeout;
        }
        if (cancel && !term_sent) {
            kill (-pid, SIGTERM);
            term_sent = 1;
            kill_at = now + watch->grace_ms;
        }
        if (term_sent && !kill_sent && now >= kill_at) {
            kill (-pid, SIGKILL);
            kill_sent = 1;
        }
        int timeout = -1;
        if (term_sent && !kill_sent)
            timeout = (int) (kill_at - now);
        else
        if (!term_sent && watch->deadline)
            timeout = (int) (watch->deadline - now);
        if ((pidfd < 0 || wake_fd < 0) && (timeout < 0 || timeout > 20))
            timeout = 20;           //  no pidfd: poll waitpid; no eventfd:
                                    //  see a kill within 20 ms
        struct pollfd items [2] = {
            { wake_fd, POLLIN, 0 }, { pidfd, POLLIN, 0 }
        };
        int rc = poll (items, pidfd >= 0? 2: 1, timeout);
        if (rc < 0) {
            if (errno != EINTR)
                usleep (10 * 1000);     //  ENOMEM and the like: retry
            continue;
        }
        if (items [0].revents & POLLIN) {
            uint64_t value;
            if (read (wake_fd, &value, sizeof value) < 0)
                {}                  //  spurious: cancel is checked above
        }
        if (pidfd < 0 || (items [1].revents & POLLIN)) {
            pid_t done = waitpid (pid, &status, pidfd >= 0? 0: WNOHANG);
            if (done == pid)
                break;
            if (done < 0 && errno == ECHILD) {
                //  Someone else reaped it (SIGCHLD set to SIG_IGN?)
                status = XXL_SPAWNER_STATUS_LOST;
                break;
            }
        }
    }
    if (pidfd >= 0)
        close (pidfd);
    watch->publish (watch->arg, -1);
    if (wake_fd >= 0)
        close (wake_fd);
    if (term_sent)
        kill (-pid, SIGKILL);       //  stragglers of the group
    return status;
}

void
xxl_spawner_describe (int status, char *buf, size_t buflen)
{
    if (status == XXL_SPAWNER_STATUS_LOST)
        snprintf (buf, buflen, "exit status lost (is SIGCHLD ignored?)");
    else
    if (WIFEXITED (status))
        snprintf (buf, buflen, "exit code %d", WEXITSTATUS (status));
    else
    if (WIFSIGNALED (status)) {
        char name [32];
        s_signal_name (WTERMSIG (status), name, sizeof name);
        snprintf (buf, buflen, "killed by signal %s", name);
    }
    else
        snprintf (buf, buflen, "ended with status %d", status);
}
