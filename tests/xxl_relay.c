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
    Runs until killed.
*/

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
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
    char tmp [4096];
    snprintf (tmp, sizeof tmp, "%s.tmp", argv [1]);
    FILE *portfile = fopen (tmp, "w");
    if (!portfile)
        return 1;
    fprintf (portfile, "%d\n", ntohs (addr.sin_port));
    fclose (portfile);
    rename (tmp, argv [1]);

    pair_t pairs [MAX_PAIRS];
    size_t count = 0;
    char buffer [65536];
    while (1) {
        struct pollfd fds [1 + 2 * MAX_PAIRS];
        fds [0] = (struct pollfd) { .fd = listener, .events = POLLIN };
        for (size_t i = 0; i < count; i++) {
            fds [1 + 2 * i] = (struct pollfd) { .fd = pairs [i].client, .events = POLLIN };
            fds [2 + 2 * i] = (struct pollfd) { .fd = pairs [i].server, .events = POLLIN };
        }
        if (poll (fds, 1 + 2 * count, -1) < 0) {
            if (errno == EINTR)
                continue;
            return 1;
        }
        if ((fds [0].revents & POLLIN) && count < MAX_PAIRS) {
            int client = accept (listener, NULL, NULL);
            int server = client >= 0? s_connect (host, port): -1;
            if (server >= 0)
                pairs [count++] = (pair_t) { client, server, 0 };
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
                    if (rc <= 0)
                        break;
                    sent += rc;
                }
            }
        }
    }
}
