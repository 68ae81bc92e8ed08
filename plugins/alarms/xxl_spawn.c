/*  xxl_spawn.c -- runs one child process for the alarm plugins.

    posix_spawn with a socketpair for stdin (written with MSG_NOSIGNAL), a
    pipe for stdout+stderr, and a pidfd to wait for the exit with poll()
    next to the two descriptors (a short poll tick when the kernel has no
    pidfd).  See xxl_spawn.h for the contract.
*/

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "xxl_spawn.h"

extern char **environ;

static int64_t
s_mono_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
s_error (char *err, size_t errlen, const char *format, ...)
{
    if (!err || !errlen)
        return;
    va_list args;
    va_start (args, format);
    vsnprintf (err, errlen, format, args);
    va_end (args);
}

static int
s_pidfd_open (pid_t pid)
{
#if defined (SYS_pidfd_open)
    return (int) syscall (SYS_pidfd_open, pid, 0);
#else
    (void) pid;
    errno = ENOSYS;
    return -1;
#endif
}

int
xxl_spawn_run (char *const argv [], char *const envp [],
               const char *input, size_t inlen, int timeout_ms,
               char *out, size_t outlen, char *err, size_t errlen)
{
    if (err && errlen)
        err [0] = 0;
    if (out && outlen)
        out [0] = 0;
    if (!argv || !argv [0]) {
        s_error (err, errlen, "no command");
        return XXL_SPAWN_FAILED;
    }
    int in [2] = { -1, -1 }, output [2] = { -1, -1 };
    if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) != 0
    ||  pipe2 (output, O_CLOEXEC) != 0) {
        s_error (err, errlen, "cannot create pipes: %s", strerror (errno));
        for (int i = 0; i < 2; i++) {
            if (in [i] >= 0) close (in [i]);
            if (output [i] >= 0) close (output [i]);
        }
        return XXL_SPAWN_FAILED;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init (&actions);
    posix_spawn_file_actions_adddup2 (&actions, in [1], 0);
    posix_spawn_file_actions_adddup2 (&actions, output [1], 1);
    posix_spawn_file_actions_adddup2 (&actions, output [1], 2);
#if defined (__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    posix_spawn_file_actions_addclosefrom_np (&actions, 3);
#endif
    posix_spawnattr_t attr;
    posix_spawnattr_init (&attr);
    sigset_t none, all;
    sigemptyset (&none);
    sigfillset (&all);
    posix_spawnattr_setsigmask (&attr, &none);
    posix_spawnattr_setsigdefault (&attr, &all);
    posix_spawnattr_setpgroup (&attr, 0);
    posix_spawnattr_setflags (&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
                                     | POSIX_SPAWN_SETPGROUP);
    pid_t pid = 0;
    int rc = posix_spawn (&pid, argv [0], &actions, &attr, argv,
                          envp? envp: environ);
    posix_spawn_file_actions_destroy (&actions);
    posix_spawnattr_destroy (&attr);
    close (in [1]);
    close (output [1]);
    if (rc != 0) {
        s_error (err, errlen, "cannot run %s: %s", argv [0], strerror (rc));
        close (in [0]);
        close (output [0]);
        return XXL_SPAWN_FAILED;
    }
    fcntl (in [0], F_SETFL, fcntl (in [0], F_GETFL) | O_NONBLOCK);
    fcntl (output [0], F_SETFL, fcntl (output [0], F_GETFL) | O_NONBLOCK);
    int pidfd = s_pidfd_open (pid);
    int infd = in [0], outfd = output [0];
    if (!input || inlen == 0) {
        close (infd);
        infd = -1;
    }
    size_t sent = 0, got = 0;
    int exited = 0, status = 0, timed_out = 0;
    int64_t deadline = s_mono_ms () + (timeout_ms > 0? timeout_ms: 1);
    while (!exited) {
        int64_t left = deadline - s_mono_ms ();
        if (left <= 0) {
            timed_out = 1;
            break;
        }
        struct pollfd items [3];
        int n = 0, at_in = -1, at_out = -1;
        if (infd >= 0) {
            items [n] = (struct pollfd) { infd, POLLOUT, 0 };
            at_in = n++;
        }
        if (outfd >= 0) {
            items [n] = (struct pollfd) { outfd, POLLIN, 0 };
            at_out = n++;
        }
        if (pidfd >= 0)
            items [n++] = (struct pollfd) { pidfd, POLLIN, 0 };
        int tick = pidfd >= 0? (int) left: (left < 20? (int) left: 20);
        if (poll (items, (nfds_t) n, tick) < 0 && errno != EINTR)
            break;
        if (at_in >= 0 && items [at_in].revents) {
            ssize_t w = send (infd, input + sent, inlen - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (w > 0)
                sent += (size_t) w;
            if ((w < 0 && errno != EAGAIN && errno != EINTR) || sent == inlen) {
                //  Done, or the child stopped reading: its exit status tells
                close (infd);
                infd = -1;
            }
        }
        if (at_out >= 0 && items [at_out].revents) {
            char chunk [4096];
            ssize_t r = read (outfd, chunk, sizeof chunk);
            if (r > 0) {
                if (out && got + 1 < outlen) {
                    size_t keep = (size_t) r < outlen - got - 1? (size_t) r: outlen - got - 1;
                    memcpy (out + got, chunk, keep);
                    got += keep;
                    out [got] = 0;
                }
            }
            else
            if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
                close (outfd);
                outfd = -1;
            }
        }
        pid_t done = waitpid (pid, &status, WNOHANG);
        if (done == pid || (done < 0 && errno == ECHILD))
            exited = done == pid? 1: 2;
    }
    if (infd >= 0)
        close (infd);
    if (!exited) {
        kill (-pid, SIGKILL);
        kill (pid, SIGKILL);
        while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
            ;
    }
    else
    if (outfd >= 0 && out) {
        //  What the child wrote just before it ended
        char chunk [4096];
        ssize_t r;
        while ((r = read (outfd, chunk, sizeof chunk)) > 0)
            if (got + 1 < outlen) {
                size_t keep = (size_t) r < outlen - got - 1? (size_t) r: outlen - got - 1;
                memcpy (out + got, chunk, keep);
                got += keep;
                out [got] = 0;
            }
    }
    if (outfd >= 0)
        close (outfd);
    if (pidfd >= 0)
        close (pidfd);
    if (timed_out || !exited) {
        s_error (err, errlen, "timed out after %d ms (killed)", timeout_ms);
        return XXL_SPAWN_TIMEOUT;
    }
    if (exited == 2) {
        s_error (err, errlen, "exit status of %s lost (reaped elsewhere)", argv [0]);
        return XXL_SPAWN_FAILED;
    }
    if (WIFEXITED (status))
        return WEXITSTATUS (status);
    s_error (err, errlen, "killed by signal %d (%s)", WTERMSIG (status),
             strsignal (WTERMSIG (status)));
    return XXL_SPAWN_SIGNALED;
}

const char *
xxl_spawn_last_line (char *text)
{
    if (!text)
        return "";
    size_t len = strlen (text);
    while (len > 0 && (text [len - 1] == '\n' || text [len - 1] == '\r'
                   ||  text [len - 1] == ' ' || text [len - 1] == '\t'))
        text [--len] = 0;
    char *start = text + len;
    while (start > text && start [-1] != '\n')
        start--;
    while (*start == ' ' || *start == '\t')
        start++;
    for (char *c = start; *c; c++)
        if ((unsigned char) *c < 0x20)
            *c = ' ';
    return start;
}
