/*  test_transport_poll.c -- xxl_transport_poll gives zmq_poll's answers.

    The cases where a wait on the sockets' ZMQ_FDs could go wrong: input
    queued while the fd shows nothing (a socket read or written since its
    last check took the fd's signal), input that comes during the wait, a
    wake by commands only (the fd fires, no message: the wait goes on),
    plain fds (input, a closed peer), a timeout, many items at once; and
    tracked sockets (XXL_POLL_TRACK): a quiet one is not checked before
    the wait yet wakes it, and one the caller used is checked again.
    Also the reasons xxl_transport_handshake_failed gives for a failed
    handshake: each says what to do.
*/

#include "xxl_transport.h"
#include "xxl_test.h"

#include <czmq.h>
#include <pthread.h>
#include <unistd.h>

//  A PAIR over inproc: *a binds, *b connects
static void
s_pair (const char *name, zsock_t **a, zsock_t **b)
{
    char endpoint [64];
    snprintf (endpoint, sizeof endpoint, "inproc://poll-%s", name);
    *a = xxl_transport_inproc (ZMQ_PAIR, endpoint, true);
    *b = xxl_transport_inproc (ZMQ_PAIR, endpoint, false);
    assert (*a && *b);
}

typedef struct {
    zsock_t *sock;
    int delay_ms;
} sender_t;

static void *
s_sender (void *arg)
{
    sender_t *sender = (sender_t *) arg;
    zclock_sleep (sender->delay_ms);
    zstr_send (sender->sock, "late");
    return NULL;
}

//  Reads one message and checks its text
static void
s_expect (zsock_t *sock, const char *text)
{
    char *got = zstr_recv (sock);
    XXL_CHECK_STR (got, text);
    zstr_free (&got);
}

static void
test_sockets (void)
{
    zsock_t *a, *b, *c, *d;
    s_pair ("ab", &a, &b);
    s_pair ("cd", &c, &d);
    zmq_pollitem_t items [] = {
        { zsock_resolve (a), 0, ZMQ_POLLIN, 0 },
        { zsock_resolve (c), 0, ZMQ_POLLIN, 0 },
    };
    //  Nothing there: 0 at once with no timeout, 0 after a short one
    XXL_CHECK_INT (xxl_transport_poll (items, 2, 0), 0);
    XXL_CHECK_INT (xxl_transport_poll (items, 2, 20), 0);
    XXL_CHECK (items [0].revents == 0 && items [1].revents == 0);

    //  Input queued before the wait
    zstr_send (b, "one");
    XXL_CHECK_INT (xxl_transport_poll (items, 2, 5000), 1);
    XXL_CHECK (items [0].revents == ZMQ_POLLIN && items [1].revents == 0);
    s_expect (a, "one");

    //  Two queued, one read: the fd's signal went with the first read,
    //  the second is found by the check before the wait (not after 5 s)
    zstr_send (d, "two");
    zstr_send (d, "three");
    zclock_sleep (20);
    XXL_CHECK_INT (xxl_transport_poll (items, 2, 5000), 1);
    XXL_CHECK (items [1].revents == ZMQ_POLLIN);
    s_expect (c, "two");
    int64_t start = zclock_mono ();
    XXL_CHECK_INT (xxl_transport_poll (items, 2, 5000), 1);
    XXL_CHECK_MSG (zclock_mono () - start < 4000, "queued input found without the timeout");
    XXL_CHECK (items [1].revents == ZMQ_POLLIN && items [0].revents == 0);
    s_expect (c, "three");

    //  A send on a socket (its commands read) and then input on it
    zstr_send (a, "to b");
    s_expect (b, "to b");
    zstr_send (b, "back");
    XXL_CHECK_INT (xxl_transport_poll (items, 2, 5000), 1);
    XXL_CHECK (items [0].revents == ZMQ_POLLIN);
    s_expect (a, "back");

    //  Without a timeout (input queued: a wrong wait would never end)
    zstr_send (b, "no timeout");
    XXL_CHECK_INT (xxl_transport_poll (items, 2, -1), 1);
    s_expect (a, "no timeout");

    //  Input during the wait, on either socket
    for (int round = 0; round < 20; round++) {
        sender_t sender = { round % 2? d: b, 5 };
        pthread_t thread;
        pthread_create (&thread, NULL, s_sender, &sender);
        int rc = xxl_transport_poll (items, 2, 5000);
        pthread_join (thread, NULL);
        XXL_CHECK_INT (rc, 1);
        XXL_CHECK (items [round % 2].revents == ZMQ_POLLIN
                && items [1 - round % 2].revents == 0);
        s_expect (round % 2? c: a, "late");
    }

    //  Both at once
    zstr_send (b, "x");
    zstr_send (d, "y");
    zclock_sleep (20);
    XXL_CHECK_INT (xxl_transport_poll (items, 2, 5000), 2);
    s_expect (a, "x");
    s_expect (c, "y");

    //  An item that asks nothing is left out
    zstr_send (b, "unasked");
    items [0].events = 0;
    XXL_CHECK_INT (xxl_transport_poll (items, 2, 20), 0);
    XXL_CHECK (items [0].revents == 0);
    items [0].events = ZMQ_POLLIN;
    XXL_CHECK_INT (xxl_transport_poll (items, 2, 0), 1);
    s_expect (a, "unasked");

    //  A peer gone (commands, no message): the wait goes on to its end
    zsock_destroy (&d);
    XXL_CHECK_INT (xxl_transport_poll (items, 2, 50), 0);
    zsock_destroy (&a);
    zsock_destroy (&b);
    zsock_destroy (&c);
}

static void
test_fds (void)
{
    zsock_t *a, *b;
    s_pair ("fd", &a, &b);
    int fds [2];
    XXL_CHECK (pipe (fds) == 0);
    zmq_pollitem_t items [] = {
        { zsock_resolve (a), 0, ZMQ_POLLIN, 0 },
        { NULL, fds [0], ZMQ_POLLIN, 0 },
        { NULL, -1, ZMQ_POLLIN, 0 },            //  (no fd: never ready)
    };
    XXL_CHECK_INT (xxl_transport_poll (items, 3, 20), 0);
    XXL_CHECK (write (fds [1], "x", 1) == 1);
    XXL_CHECK_INT (xxl_transport_poll (items, 3, 5000), 1);
    XXL_CHECK (items [1].revents == ZMQ_POLLIN && items [0].revents == 0);
    //  A socket ready before the wait: the fds are looked at too
    zstr_send (b, "both");
    XXL_CHECK_INT (xxl_transport_poll (items, 3, 5000), 2);
    XXL_CHECK (items [0].revents == ZMQ_POLLIN && items [1].revents == ZMQ_POLLIN);
    s_expect (a, "both");
    char byte;
    XXL_CHECK (read (fds [0], &byte, 1) == 1);
    //  The writer gone: ZMQ_POLLERR, as zmq_poll says it
    close (fds [1]);
    XXL_CHECK_INT (xxl_transport_poll (items, 3, 5000), 1);
    XXL_CHECK (items [1].revents & ZMQ_POLLERR);
    close (fds [0]);
    zsock_destroy (&a);
    zsock_destroy (&b);
}

//  More items than the wait's own table: zmq_poll answers
static void
test_many (void)
{
    enum { N = 70 };
    zsock_t *a [N], *b [N];
    zmq_pollitem_t items [N];
    for (int i = 0; i < N; i++) {
        char name [16];
        snprintf (name, sizeof name, "many%d", i);
        s_pair (name, &a [i], &b [i]);
        items [i] = (zmq_pollitem_t) { zsock_resolve (a [i]), 0, ZMQ_POLLIN, 0 };
    }
    zstr_send (b [N - 1], "last");
    XXL_CHECK_INT (xxl_transport_poll (items, N, 5000), 1);
    XXL_CHECK (items [N - 1].revents == ZMQ_POLLIN);
    s_expect (a [N - 1], "last");
    for (int i = 0; i < N; i++) {
        zsock_destroy (&a [i]);
        zsock_destroy (&b [i]);
    }
}

//  XXL_POLL_TRACK: the poll keeps XXL_POLL_QUIET; a quiet socket's fd
//  wakes the wait; the caller's use of a socket needs the flag cleared
static void
test_tracked (void)
{
    zsock_t *a, *b, *c, *d;
    s_pair ("track-ab", &a, &b);
    s_pair ("track-cd", &c, &d);
    zmq_pollitem_t items [] = {
        { zsock_resolve (a), 0, ZMQ_POLLIN | XXL_POLL_TRACK, 0 },
        { zsock_resolve (c), 0, ZMQ_POLLIN, 0 },
    };
    //  Checked and empty: quiet; an item without the flag never is
    XXL_CHECK_INT (xxl_transport_poll (items, 2, 0), 0);
    XXL_CHECK (items [0].events & XXL_POLL_QUIET);
    XXL_CHECK (!(items [1].events & XXL_POLL_QUIET));
    //  Input while quiet, untouched since: the fd wakes the wait, and
    //  the item with input is no longer quiet
    zstr_send (b, "one");
    XXL_CHECK_INT (xxl_transport_poll (items, 2, 5000), 1);
    XXL_CHECK (items [0].revents == ZMQ_POLLIN);
    XXL_CHECK (!(items [0].events & XXL_POLL_QUIET));
    s_expect (a, "one");
    //  (read: checked before the next wait, then quiet again)
    XXL_CHECK_INT (xxl_transport_poll (items, 2, 0), 0);
    XXL_CHECK (items [0].events & XXL_POLL_QUIET);
    //  Input that comes during a quiet socket's wait wakes it
    sender_t sender = { b, 50 };
    pthread_t thread;
    pthread_create (&thread, NULL, s_sender, &sender);
    XXL_CHECK_INT (xxl_transport_poll (items, 2, 5000), 1);
    XXL_CHECK (items [0].revents == ZMQ_POLLIN);
    pthread_join (thread, NULL);
    s_expect (a, "late");
    XXL_CHECK_INT (xxl_transport_poll (items, 2, 0), 0);
    XXL_CHECK (items [0].events & XXL_POLL_QUIET);
    //  A use of the socket that takes the fd's signal (here a ZMQ_EVENTS
    //  check of the caller's own) while input is queued: left quiet, the
    //  poll does not see the input, which is why the caller must clear
    //  the flag; cleared, the poll checks and finds it
    zstr_send (b, "two");
    zclock_sleep (20);
    XXL_CHECK (zsock_events (a) & ZMQ_POLLIN);
    XXL_CHECK_INT (xxl_transport_poll (items, 2, 20), 0);
    items [0].events &= (short) ~XXL_POLL_QUIET;
    XXL_CHECK_INT (xxl_transport_poll (items, 2, 0), 1);
    XXL_CHECK (items [0].revents == ZMQ_POLLIN);
    s_expect (a, "two");
    zsock_destroy (&a);
    zsock_destroy (&b);
    zsock_destroy (&c);
    zsock_destroy (&d);
}

//  A failed handshake's reason, as a client's log or stderr gives it
static void
test_handshake_reasons (void)
{
    char why [512];
    bool final;
    //  A client without keys that a CURVE server closed (what an agent
    //  that found no local keys sees): the reason names the way out
    XXL_CHECK (xxl_transport_handshake_failed (ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL, 0,
                                               false, why, sizeof why, &final));
    XXL_CHECK (strstr (why, "the server there closed it: a scheduler with CURVE keys"));
    XXL_CHECK (strstr (why, "--cert and --scheduler-key"));
    XXL_CHECK (!final);
    //  With keys, the server is not the one whose key was given
    XXL_CHECK (xxl_transport_handshake_failed (ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL, 0,
                                               true, why, sizeof why, &final));
    XXL_CHECK (strstr (why, "it is not the scheduler whose public key was given"));
    //  A mechanism mismatch, either way, is final
    XXL_CHECK (xxl_transport_handshake_failed (ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL,
                                               ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH,
                                               false, why, sizeof why, &final));
    XXL_CHECK (strstr (why, "the scheduler requires CURVE keys") && final);
    //  A refused key is final; an event that is no failure is not a reason
    XXL_CHECK (xxl_transport_handshake_failed (ZMQ_EVENT_HANDSHAKE_FAILED_AUTH, 400, true,
                                               why, sizeof why, &final));
    XXL_CHECK (strstr (why, "ZAP status 400") && final);
    XXL_CHECK (!xxl_transport_handshake_failed (ZMQ_EVENT_CONNECTED, 0, true, why,
                                                sizeof why, &final));
}

int
main (void)
{
    printf ("test_transport_poll\n");
    test_handshake_reasons ();
    test_sockets ();
    test_tracked ();
    test_fds ();
    test_many ();
    return xxl_test_done ();
}
