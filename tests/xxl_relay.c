/*  xxl_relay.c -- a TCP relay between agents and a scheduler, for the
    security tests: a man in the middle that records what it sees, or
    rewrites it.

    Usage: xxl_relay PORTFILE HOST PORT MODE RECORD
    Listens on 127.0.0.1 (a port of the kernel's choosing, written to
    PORTFILE once listening), and relays each connection it accepts to
    HOST:PORT.  Every byte in either direction is appended to RECORD.
    MODE pass: bytes go through unchanged.  MODE flip: one bit of the byte
    at offset 4,096 of what the scheduler sends on a connection (past the
    handshake), and of every chunk after it, is flipped (a relay rewriting
    what the scheduler sends).
    Signals (for the fault tests: a cut link to a database): SIGUSR1 cuts
    the link (every relayed connection is closed; a connection accepted
    while cut is closed at once); SIGUSR2 makes it a black hole (nothing
    is relayed either way and nothing more accepted, but every connection
    stays open, as when a network drops packets); SIGHUP mends it (relays
    again, the connections a black hole held included).  Once it acts on
    a signal it writes the link's state ("up", "cut" or "hole") to
    PORTFILE.state: two signals pending at once would be taken in signal
    number order, not in the order sent, so a test sends the next one only
    once the file names the state the last one set.
    Runs until killed.
*/

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_PAIRS 64

typedef struct {
    int client, server;
    size_t from_server;                 //  bytes relayed from the server
} pair_t;

//  The link's state, set by the signals
enum { LINK_UP, LINK_CUT, LINK_HOLE };
static volatile sig_atomic_t s_link = LINK_UP;

static void
s_signal (int signal)
{
    s_link = signal == SIGUSR1? LINK_CUT: signal == SIGUSR2? LINK_HOLE: LINK_UP;
}

static int
s_connect (const char *host, int port)
{
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons (port) };
    inet_pton (AF_INET, host, &addr.sin_addr);
    if (fd >= 0 && connect (fd, (struct sockaddr *) &addr, sizeof addr)) {
        close (fd);
        fd = -1;
    }
    return fd;
}

int
main (int argc, char *argv [])
{
    if (argc != 6) {
        fprintf (stderr, "usage: xxl_relay PORTFILE HOST PORT pass|flip RECORD\n");
        return 2;
    }
    const char *host = argv [2];
    int port = atoi (argv [3]);
    int flip = strcmp (argv [4], "flip") == 0;
    FILE *record = fopen (argv [5], "ab");
    int listener = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = { .sin_family = AF_INET };
    inet_pton (AF_INET, "127.0.0.1", &addr.sin_addr);
    socklen_t len = sizeof addr;
    if (!record || listener < 0 || bind (listener, (struct sockaddr *) &addr, sizeof addr)
    ||  listen (listener, 16) || getsockname (listener, (struct sockaddr *) &addr, &len)) {
        perror ("xxl_relay");
        return 1;
    }
    signal (SIGPIPE, SIG_IGN);          //  (a peer gone: its write fails, the pair closes)
    struct sigaction action = { .sa_handler = s_signal };
    sigemptyset (&action.sa_mask);
    sigaction (SIGUSR1, &action, NULL);
    sigaction (SIGUSR2, &action, NULL);
    sigaction (SIGHUP, &action, NULL);
    //  The signals arrive only inside ppoll, which they end: the state
    //  read before it is never stale while it waits
    sigset_t blocked, waiting;
    sigemptyset (&blocked);
    sigaddset (&blocked, SIGUSR1);
    sigaddset (&blocked, SIGUSR2);
    sigaddset (&blocked, SIGHUP);
    sigprocmask (SIG_BLOCK, &blocked, &waiting);
    char tmp [4096];
    snprintf (tmp, sizeof tmp, "%s.tmp", argv [1]);
    FILE *portfile = fopen (tmp, "w");
    if (!portfile)
        return 1;
    fprintf (portfile, "%d\n", ntohs (addr.sin_port));
    fclose (portfile);
    rename (tmp, argv [1]);

    char state [4096], state_tmp [4096];
    snprintf (state, sizeof state, "%s.state", argv [1]);
    snprintf (state_tmp, sizeof state_tmp, "%s.state.tmp", argv [1]);
    pair_t pairs [MAX_PAIRS];
    size_t count = 0;
    char buffer [65536];
    int link_told = -1;
    while (1) {
        int link = s_link;
        if (link != link_told) {
            FILE *file = fopen (state_tmp, "w");
            if (!file)
                return 1;
            fprintf (file, "%s\n", link == LINK_CUT? "cut": link == LINK_HOLE? "hole": "up");
            fclose (file);
            rename (state_tmp, state);
            link_told = link;
        }
        if (link == LINK_CUT)
            while (count > 0) {
                close (pairs [count - 1].client);
                close (pairs [count - 1].server);
                count--;
            }
        //  (a black hole polls nothing: the signal that mends it ends the
        //  poll)
        struct pollfd fds [1 + 2 * MAX_PAIRS];
        fds [0] = (struct pollfd) { .fd = link == LINK_HOLE? -1: listener, .events = POLLIN };
        for (size_t i = 0; i < count; i++) {
            int watched = link == LINK_UP;
            fds [1 + 2 * i] = (struct pollfd) { .fd = watched? pairs [i].client: -1,
                                                .events = POLLIN };
            fds [2 + 2 * i] = (struct pollfd) { .fd = watched? pairs [i].server: -1,
                                                .events = POLLIN };
        }
        if (ppoll (fds, 1 + 2 * count, NULL, &waiting) < 0) {
            if (errno == EINTR)
                continue;
            return 1;
        }
        if ((fds [0].revents & POLLIN) && (count < MAX_PAIRS || link == LINK_CUT)) {
            int client = accept (listener, NULL, NULL);
            if (link == LINK_CUT) {
                if (client >= 0)
                    close (client);
                continue;
            }
            int server = client >= 0? s_connect (host, port): -1;
            if (server >= 0) {
                //  (never blocked by a peer that stopped reading: a write
                //  that would block closes the pair, as a cut would)
                fcntl (client, F_SETFL, fcntl (client, F_GETFL) | O_NONBLOCK);
                fcntl (server, F_SETFL, fcntl (server, F_GETFL) | O_NONBLOCK);
                pairs [count++] = (pair_t) { client, server, 0 };
            }
            else
            if (client >= 0)
                close (client);
        }
        //  (a pair closed moves the last one into its slot: fds no longer
        //  match the slots past it, so the loop polls again)
        int closed = 0;
        for (size_t i = 0; i < count && !closed; i++) {
            for (int side = 0; side < 2 && !closed; side++) {
                short revents = fds [1 + 2 * i + side].revents;
                if (!(revents & (POLLIN | POLLHUP | POLLERR)))
                    continue;
                int from = side? pairs [i].server: pairs [i].client;
                int to = side? pairs [i].client: pairs [i].server;
                ssize_t got = read (from, buffer, sizeof buffer);
                if (got < 0 && (errno == EAGAIN || errno == EINTR))
                    continue;
                if (got <= 0) {
                    close (pairs [i].client);
                    close (pairs [i].server);
                    pairs [i] = pairs [--count];
                    closed = 1;
                    break;
                }
                fwrite (buffer, 1, got, record);
                fflush (record);
                if (side) {
                    //  (the byte at offset 4096 of the stream, or the middle
                    //  of each chunk past it)
                    size_t before = pairs [i].from_server;
                    if (flip && before + got > 4096)
                        buffer [before >= 4096? (size_t) got / 2: 4096 - before] ^= 0x10;
                    pairs [i].from_server += got;
                }
                size_t sent = 0;
                while (sent < (size_t) got) {
                    ssize_t rc = write (to, buffer + sent, got - sent);
                    if (rc < 0 && errno == EINTR)
                        continue;
                    if (rc <= 0)
                        break;
                    sent += rc;
                }
                if (sent < (size_t) got) {
                    close (pairs [i].client);
                    close (pairs [i].server);
                    pairs [i] = pairs [--count];
                    closed = 1;
                }
            }
        }
    }
}
