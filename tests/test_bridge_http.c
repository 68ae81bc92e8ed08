/*  test_bridge_http.c -- xxl-bridge's own HTTP/1.1 client: the answer
    reader (xxl_bridge_http.c) on every framing, bound and malformation,
    and the calls (xxl_bridge_call.c) against a scripted executor: the
    request as sent, chunked and interim answers, a kept-alive connection
    the executor dropped (the call goes again, once), close-delimited,
    too long and cut-short answers, refused connections, libcurl's way
    for what the own client does not take, nothing on the wire before
    xxl_bridge_call_perform, calls waiting past `parallel`, and
    kept-alive connections the executor closes (both ways to the wire),
    and the connect-time check of the address (both ways: one refused is
    never connected, one allowed is).
*/

#define _GNU_SOURCE
#include "xxl_test.h"
#include "xxl_bridge_http.h"
#include "xxl_bridge_call.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <pthread.h>
#include <poll.h>
#include <inttypes.h>

//  Reads text into a fresh buffer, step bytes at a time; the last result
static int
s_read (const char *text, size_t step, bool eof, xxl_bridge_http_answer_t *a, char *buf,
        size_t *len, size_t max, char *why)
{
    memset (a, 0, sizeof *a);
    size_t total = strlen (text), fed = 0;
    *len = 0;
    int rc = 0;
    while (fed < total) {
        size_t n = total - fed < step? total - fed: step;
        //  (what is appended is counted apart from what buf holds)
        memcpy (buf + *len, text + fed, n);
        fed += n;
        *len += n;
        rc = xxl_bridge_http_read (a, buf, len, false, max, why, 256);
        if (rc != 0 || fed >= total)
            break;
    }
    if (rc == 0 && eof)
        rc = xxl_bridge_http_read (a, buf, len, true, max, why, 256);
    return rc;
}

static void
test_reader (void)
{
    xxl_bridge_http_answer_t a;
    char buf [8192], why [256];
    size_t len;
    //  whole, a byte at a time, and in odd pieces: the same; chunked with
    //  an extension, upper-case hex and a trailer
    struct { const char *text; int status; const char *body; } whole [] = {
        { "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
          "Content-Length: 23\r\n\r\n{\"code\":200,\"msg\":null}", 200, "{\"code\":200,\"msg\":null}" },
        { "HTTP/1.1 500 Oops\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
          "5;x=y\r\nhello\r\nA\r\n, world..!\r\n0\r\nX-Trailer: 1\r\n\r\n", 500, "hello, world..!" },
    };
    size_t steps [] = { 1, 7, 4096 };
    for (size_t c = 0; c < sizeof whole / sizeof whole [0]; c++)
        for (size_t s = 0; s < sizeof steps / sizeof steps [0]; s++) {
            XXL_CHECK_INT (s_read (whole [c].text, steps [s], false, &a, buf, &len, 1024, why), 1);
            XXL_CHECK_INT (a.status, whole [c].status);
            XXL_CHECK_STR (buf + a.head_len, whole [c].body);
            XXL_CHECK_INT (a.body_len, strlen (whole [c].body));
            XXL_CHECK (!a.close);
        }
    //  not all there yet
    memset (&a, 0, sizeof a);
    strcpy (buf, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab");
    len = strlen (buf);
    XXL_CHECK_INT (xxl_bridge_http_read (&a, buf, &len, false, 1024, why, sizeof why), 0);
    XXL_CHECK_INT (xxl_bridge_http_read (&a, buf, &len, true, 1024, why, sizeof why), -1);
    XXL_CHECK_HAS (why, "after 2 of the 5 bytes");
    //  bare LF line ends
    XXL_CHECK_INT (s_read ("HTTP/1.1 200 OK\nContent-Length: 2\n\nok", 4096, false, &a, buf,
                           &len, 1024, why), 1);
    XXL_CHECK_STR (buf + a.head_len, "ok");
    //  an interim answer first: dropped
    XXL_CHECK_INT (s_read ("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\n"
                           "Content-Length: 2\r\n\r\nok", 4096, false, &a, buf, &len, 1024, why), 1);
    XXL_CHECK_INT (a.status, 201);
    XXL_CHECK_STR (buf + a.head_len, "ok");
    //  no length: to the end of the connection, which is then not kept
    XXL_CHECK_INT (s_read ("HTTP/1.1 200 OK\r\n\r\nto the end", 4096, false, &a, buf, &len, 1024,
                           why), 0);
    XXL_CHECK_INT (xxl_bridge_http_read (&a, buf, &len, true, 1024, why, sizeof why), 1);
    XXL_CHECK_STR (buf + a.head_len, "to the end");
    XXL_CHECK (a.close);
    //  204: no body whatever follows
    XXL_CHECK_INT (s_read ("HTTP/1.1 204 No Content\r\n\r\n", 4096, false, &a, buf, &len, 1024,
                           why), 1);
    XXL_CHECK_INT (a.body_len, 0);
    //  HTTP/1.0 closes unless keep-alive; Connection: close; bytes past the answer
    XXL_CHECK_INT (s_read ("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", 4096, false, &a, buf,
                           &len, 1024, why), 1);
    XXL_CHECK (a.close);
    XXL_CHECK_INT (s_read ("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n",
                           4096, false, &a, buf, &len, 1024, why), 1);
    XXL_CHECK (!a.close);
    XXL_CHECK_INT (s_read ("HTTP/1.1 200 OK\r\nconnection: upgrade, close\r\ncontent-length: 0\r\n\r\n",
                           4096, false, &a, buf, &len, 1024, why), 1);
    XXL_CHECK (a.close);
    XXL_CHECK_INT (s_read ("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nab", 4096, false, &a, buf,
                           &len, 1024, why), 1);
    XXL_CHECK (a.close);
    XXL_CHECK_STR (buf + a.head_len, "a");
    //  too long: by its length, by its chunks, to its end
    XXL_CHECK_INT (s_read ("HTTP/1.1 200 OK\r\nContent-Length: 1025\r\n\r\n", 4096, false, &a, buf,
                           &len, 1024, why), -2);
    XXL_CHECK_INT (s_read ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n401\r\n", 4096,
                           false, &a, buf, &len, 1024, why), -2);
    char big [2048] = "HTTP/1.1 200 OK\r\n\r\n";
    memset (big + strlen (big), 'x', 1100);
    XXL_CHECK_INT (s_read (big, 4096, false, &a, buf, &len, 1024, why), -2);
    //  malformed: not HTTP/1.x, bad or two lengths, bad chunks, cut short
    const char *bad [] = {
        "HTTP/2 200 OK\r\n\r\n", "SSH-2.0-OpenSSH\r\n\r\n", "HTTP/1.1 2000 OK\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1234567890123456\r\n",
        "HTTP/1.1 101 Switching Protocols\r\n\r\n",
        NULL
    };
    for (int i = 0; bad [i]; i++) {
        why [0] = 0;
        int rc = s_read (bad [i], 4096, false, &a, buf, &len, 1024, why);
        XXL_CHECK_MSG (rc == -1 && *why, "case %d: %d (%s)", i, rc, why);
    }
    XXL_CHECK_INT (s_read ("", 4096, true, &a, buf, &len, 1024, why), -1);
    XXL_CHECK_HAS (why, "with no answer");
    XXL_CHECK_INT (s_read ("HTTP/1.1 200", 4096, true, &a, buf, &len, 1024, why), -1);
    XXL_CHECK_HAS (why, "head");
    XXL_CHECK_INT (s_read ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", 4096,
                           true, &a, buf, &len, 1024, why), -1);
    //  a head past its bound
    static char head [XXL_BRIDGE_HTTP_HEAD_MAX + 256];
    strcpy (head, "HTTP/1.1 200 OK\r\n");
    while (strlen (head) < XXL_BRIDGE_HTTP_HEAD_MAX + 100)
        strcat (head, "X-Filler: 0123456789\r\n");
    memset (&a, 0, sizeof a);
    len = strlen (head);
    XXL_CHECK_INT (xxl_bridge_http_read (&a, head, &len, false, 1024, why, sizeof why), -1);
    XXL_CHECK_HAS (why, "longer than");
    //  http_parser's refusals name its error: a malformed status line, a
    //  bad chunk size, a bad header; the well-formed neighbours are taken
    struct { const char *text; const char *error; } refused [] = {
        { "HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n", "HPE_INVALID_STATUS" },
        { "HTTP/1.1200 OK\r\nContent-Length: 0\r\n\r\n", "HPE_INVALID_VERSION" },
        { "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5x\r\nhello\r\n0\r\n\r\n",
          "HPE_INVALID_CHUNK_SIZE" },
        { "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n",
          "HPE_INVALID_CHUNK_SIZE" },
        { "HTTP/1.1 200 OK\r\nX-Bad\001: 1\r\nContent-Length: 0\r\n\r\n", "HPE_INVALID_HEADER_TOKEN" },
        { "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n"
          "2\r\nok\r\n0\r\n\r\n", "HPE_UNEXPECTED_CONTENT_LENGTH" },
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused [0]; i++)
        for (size_t s = 0; s < sizeof steps / sizeof steps [0]; s++) {
            why [0] = 0;
            int rc = s_read (refused [i].text, steps [s], false, &a, buf, &len, 1024, why);
            XXL_CHECK_MSG (rc == -1 && strstr (why, refused [i].error)
                           && strstr (why, "the executor's answer is malformed: "),
                           "refused %zu step %zu: %d (%s)", i, steps [s], rc, why);
        }
    const char *taken [] = {
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
        "HTTP/1.1 100 Continue\r\nX-A: 1\r\n\r\nHTTP/1.1 102 Processing\r\n\r\n"
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\no\r\n1\r\nk\r\n0\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof taken / sizeof taken [0]; i++)
        for (size_t s = 0; s < sizeof steps / sizeof steps [0]; s++) {
            int rc = s_read (taken [i], steps [s], false, &a, buf, &len, 1024, why);
            XXL_CHECK_MSG (rc == 1 && a.status == 200 && streq (buf + a.head_len, "ok") && !a.close,
                           "taken %zu step %zu: %d (%s)", i, steps [s], rc, rc < 0? why: "");
        }
    //  one header over the bound, in pieces and whole; one just within it
    static char one [XXL_BRIDGE_HTTP_HEAD_MAX + 256];
    for (int over = 1; over >= 0; over--) {
        strcpy (one, "HTTP/1.1 200 OK\r\nX-Big: ");
        size_t at = strlen (one), fill = XXL_BRIDGE_HTTP_HEAD_MAX - at - 40 + (over? 100: 0);
        memset (one + at, 'v', fill);
        strcpy (one + at + fill, "\r\nContent-Length: 2\r\n\r\nok");
        for (size_t s = 0; s < sizeof steps / sizeof steps [0]; s++) {
            int rc = s_read (one, steps [s] == 1? 997: steps [s], false, &a, head, &len, 1024, why);
            if (over)
                XXL_CHECK_MSG (rc == -1 && strstr (why, "head is longer than 65536 bytes"),
                               "over step %zu: %d (%s)", steps [s], rc, why);
            else
                XXL_CHECK_MSG (rc == 1 && streq (head + a.head_len, "ok"),
                               "within step %zu: %d (%s)", steps [s], rc, rc < 0? why: "");
        }
    }
    //  a trailer over the bound
    strcpy (one, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX-T: ");
    memset (one + strlen (one), 't', XXL_BRIDGE_HTTP_HEAD_MAX + 10);
    one [sizeof one - 1] = 0;
    XXL_CHECK_INT (s_read (one, 4096, false, &a, head, &len, 1024, why), -1);
    XXL_CHECK_HAS (why, "trailer is longer than");
}

static void
test_url (void)
{
    xxl_bridge_http_url_t u;
    XXL_CHECK_INT (xxl_bridge_http_url ("http://127.0.0.1:9999/", &u), 0);
    XXL_CHECK_STR (u.host, "127.0.0.1:9999");
    XXL_CHECK_INT (u.path_at, 21);
    XXL_CHECK_INT (u.addr.ss_family, AF_INET);
    XXL_CHECK_INT (ntohs (((struct sockaddr_in *) &u.addr)->sin_port), 9999);
    XXL_CHECK_INT (xxl_bridge_http_url ("http://10.1.2.3", &u), 0);
    XXL_CHECK_STR (u.host, "10.1.2.3:80");
    XXL_CHECK_INT (xxl_bridge_http_url ("http://[::1]:8080/xxl/", &u), 0);
    XXL_CHECK_STR (u.host, "[::1]:8080");
    XXL_CHECK_INT (u.addr.ss_family, AF_INET6);
    XXL_CHECK_STR ("http://[::1]:8080/xxl/" + u.path_at, "/xxl/");
    //  libcurl's: https, names, user info, odd ports, queries
    const char *others [] = {
        "https://127.0.0.1:9999/", "http://localhost:9999/", "http://user@127.0.0.1/",
        "http://127.0.0.1:0/", "http://127.0.0.1:65536/", "http://127.0.0.1:/",
        "http://127.0.0.1:9999/?a=b", "http://127.0.0.1:9999/a b", "http://[::1/",
        "http://1.2.3/", "http://999.1.1.1/", "ftp://127.0.0.1/", "", NULL
    };
    for (int i = 0; others [i]; i++)
        XXL_CHECK_MSG (xxl_bridge_http_url (others [i], &u) == -1, "%s", others [i]);
}

//  --------------------------------------------------------------------------
//  Calls to a scripted executor: one connection at a time, each request
//  answered by the next script line

#define COMMON "HTTP/1.1 200 OK\r\nContent-Length: 23\r\n\r\n{\"code\":200,\"msg\":null}"

typedef struct {
    const char *answer;             //  NULL: the connection closed unanswered
    bool close_after;
} line_t;

typedef struct {
    int listener;
    volatile bool stop;
    const line_t *script;
    int lines;
    volatile int requests;          //  requests read
    volatile int accepted;          //  connections accepted
    int close_every;                //  past the script: 200, closing after every Nth
    char last [4096];               //  the last request as read
    pthread_t thread;
} server_t;

static void *
s_server (void *arg)
{
    server_t *server = (server_t *) arg;
    while (!server->stop) {
        struct pollfd p = { server->listener, POLLIN, 0 };
        if (poll (&p, 1, 20) <= 0)
            continue;
        int conn = accept (server->listener, NULL, NULL);
        if (conn < 0)
            continue;
        server->accepted++;
        char buf [4096];
        size_t have = 0;
        while (!server->stop) {
            struct pollfd c = { conn, POLLIN, 0 };
            if (poll (&c, 1, 20) <= 0)
                continue;
            ssize_t n = recv (conn, buf + have, sizeof buf - 1 - have, 0);
            if (n <= 0)
                break;
            have += (size_t) n;
            buf [have] = 0;
            char *end = strstr (buf, "\r\n\r\n");
            const char *cl = strcasestr (buf, "Content-Length:");
            if (!end || !cl || have < (size_t) (end + 4 - buf) + (size_t) atoi (cl + 15))
                continue;
            memcpy (server->last, buf, have + 1);
            have = 0;
            int i = server->requests++;
            const line_t *line = i < server->lines? server->script + i: NULL;
            const char *answer = line? line->answer: server->close_every? COMMON: NULL;
            bool close_after = line? line->close_after
                                   : server->close_every && (i + 1) % server->close_every == 0;
            if (!answer
            ||  send (conn, answer, strlen (answer), MSG_NOSIGNAL) < 0 || close_after)
                break;
        }
        close (conn);
    }
    return NULL;
}

//  Listens on a loopback port and serves in a thread: the port
static int
s_server_start (server_t *server)
{
    server->listener = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
    socklen_t alen = sizeof addr;
    XXL_CHECK (server->listener >= 0
               && bind (server->listener, (struct sockaddr *) &addr, sizeof addr) == 0
               && listen (server->listener, 16) == 0
               && getsockname (server->listener, (struct sockaddr *) &addr, &alen) == 0);
    XXL_CHECK_INT (pthread_create (&server->thread, NULL, s_server, server), 0);
    return ntohs (addr.sin_port);
}

static void
s_server_stop (server_t *server)
{
    server->stop = true;
    pthread_join (server->thread, NULL);
    close (server->listener);
}

typedef struct {
    int status;
    char body [256];
    char why [256];
    bool done;
} seen_t;

static void
s_seen (void *arg, int status, const char *body, size_t len, const char *why)
{
    seen_t *seen = (seen_t *) arg;
    seen->status = status;
    XXL_CHECK (body && strlen (body) == len);
    snprintf (seen->body, sizeof seen->body, "%s", body);
    snprintf (seen->why, sizeof seen->why, "%s", why? why: "");
    seen->done = true;
}

//  Runs the calls until seen is done (or 5 s)
static void
s_run (xxl_bridge_call_t *call, seen_t *seen)
{
    int64_t start = zclock_mono ();
    while (!seen->done && zclock_mono () - start < 5000) {
        long timeout = 1000;
        zmq_pollitem_t item = { NULL, xxl_bridge_call_fd (call, &timeout), ZMQ_POLLIN, 0 };
        zmq_poll (&item, 1, timeout);
        xxl_bridge_call_perform (call, item.revents & ZMQ_POLLIN);
    }
    XXL_CHECK (seen->done);
}

//  One call, run to its end
static void
s_call (xxl_bridge_call_t *call, const char *url, const char *path, const char *body,
        seen_t *seen)
{
    memset (seen, 0, sizeof *seen);
    XXL_CHECK_INT (xxl_bridge_call_post (call, url, path, body, 3000, s_seen, seen), 0);
    s_run (call, seen);
}

static void
test_calls (void)
{
    static const line_t script [] = {
        { "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"cod\r\n12\r\n"
          "e\":200,\"msg\":null}\r\n0\r\n\r\n", false },                          //  0
        { "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 500 Internal\r\nContent-Length: 2\r\n\r\nno",
          false },                                                              //  1
        { NULL, false },            //  2: the kept-alive connection dropped
        { COMMON, false },          //  3: ... and the call made again, on a new one
        { "HTTP/1.0 200 OK\r\n\r\nhello", true },                               //  4
        { "HTTP/1.1 200 OK\r\nContent-Length: 2000000\r\n\r\n", false },        //  5
        { "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", true },           //  6
        { COMMON, true },           //  7: through libcurl (localhost)
        { COMMON, false },          //  8: posted, not on the wire before perform
    };
    server_t server = { .script = script, .lines = sizeof script / sizeof script [0] };
    int port = s_server_start (&server);
    char url [64];
    snprintf (url, sizeof url, "http://127.0.0.1:%d/xxl", port);
    xxl_bridge_call_t *call = xxl_bridge_call_new ("tok-en", 1, 4);
    XXL_CHECK (call);
    seen_t seen;

    //  The request as sent; a chunked answer
    s_call (call, url, "run", "{\"a\":1}", &seen);
    XXL_CHECK_INT (seen.status, 200);
    XXL_CHECK_STR (seen.body, "{\"code\":200,\"msg\":null}");
    XXL_CHECK (strncmp (server.last, "POST /xxl/run HTTP/1.1\r\n", 24) == 0);
    char host [64];
    snprintf (host, sizeof host, "\r\nHost: 127.0.0.1:%d\r\n", port);
    XXL_CHECK_HAS (server.last, host);
    XXL_CHECK_HAS (server.last, "\r\nXXL-JOB-ACCESS-TOKEN: tok-en\r\n");
    XXL_CHECK_HAS (server.last, "\r\nContent-Type: application/json;charset=UTF-8\r\n");
    XXL_CHECK_HAS (server.last, "\r\nContent-Length: 7\r\n\r\n{\"a\":1}");
    //  an interim answer, then a refusal with its body; the same connection
    s_call (call, url, "beat", "{}", &seen);
    XXL_CHECK_INT (seen.status, 500);
    XXL_CHECK_STR (seen.body, "no");
    XXL_CHECK_INT (server.accepted, 1);
    //  the executor closes the kept-alive connection as the request comes:
    //  made again, once, on a new connection
    s_call (call, url, "run", "{}", &seen);
    XXL_CHECK_INT (seen.status, 200);
    XXL_CHECK_INT (server.requests, 4);
    XXL_CHECK_INT (server.accepted, 2);
    //  to the end of the connection
    s_call (call, url, "log", "{}", &seen);
    XXL_CHECK_INT (seen.status, 200);
    XXL_CHECK_STR (seen.body, "hello");
    //  too long; cut short (a new connection each: not made again)
    s_call (call, url, "log", "{}", &seen);
    XXL_CHECK_INT (seen.status, 0);
    XXL_CHECK_HAS (seen.why, "longer than 1048576 bytes");
    s_call (call, url, "log", "{}", &seen);
    XXL_CHECK_INT (seen.status, 0);
    XXL_CHECK_HAS (seen.why, "after 3 of the 10 bytes");
    XXL_CHECK_INT (server.requests, 7);
    //  what the own client does not take goes through libcurl, as before
    char local [64];
    snprintf (local, sizeof local, "http://localhost:%d/", port);
    s_call (call, local, "beat", "{}", &seen);
    XXL_CHECK_INT (seen.status, 200);
    XXL_CHECK_STR (seen.body, "{\"code\":200,\"msg\":null}");
    XXL_CHECK_INT (server.requests, 8);
    //  nothing on the wire before perform (the journal is written first)
    int accepted = server.accepted;
    memset (&seen, 0, sizeof seen);
    XXL_CHECK_INT (xxl_bridge_call_post (call, url, "run", "{}", 3000, s_seen, &seen), 0);
    zclock_sleep (100);
    XXL_CHECK_INT (server.requests, 8);
    XXL_CHECK_INT (server.accepted, accepted);
    long timeout = 1000;
    xxl_bridge_call_fd (call, &timeout);
    XXL_CHECK_INT (timeout, 0);     //  (the loop comes round at once)
    s_run (call, &seen);
    XXL_CHECK_MSG (seen.status == 200, "%d %s", seen.status, seen.why);
    XXL_CHECK_INT (server.requests, 9);
    xxl_bridge_call_destroy (&call);

    //  Refused: no executor at the port
    s_server_stop (&server);
    call = xxl_bridge_call_new (NULL, 1, 4);
    s_call (call, url, "beat", "{}", &seen);
    XXL_CHECK_INT (seen.status, 0);
    XXL_CHECK_HAS (seen.why, "Failed to connect to 127.0.0.1:");
    xxl_bridge_call_destroy (&call);
}

typedef struct {
    int status;
    char why [256];
    int64_t at;
    bool done;
} call_seen_t;

static void
s_seen_at (void *arg, int status, const char *body, size_t len, const char *why)
{
    (void) body; (void) len;
    call_seen_t *seen = (call_seen_t *) arg;
    seen->status = status;
    snprintf (seen->why, sizeof seen->why, "%s", why? why: "");
    seen->at = zclock_mono ();
    seen->done = true;
}

//  Calls past `parallel` wait in the bridge's list, not in libcurl's: each
//  still ends within its own timeout, counted from when it was posted, and
//  joins the wire as one ends
static void
test_call_queue (void)
{
    //  An executor that accepts connections and never answers (the
    //  kernel's backlog accepts them)
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
    socklen_t alen = sizeof addr;
    XXL_CHECK (fd >= 0 && bind (fd, (struct sockaddr *) &addr, sizeof addr) == 0
               && listen (fd, 16) == 0 && getsockname (fd, (struct sockaddr *) &addr, &alen) == 0);
    char url [64];
    snprintf (url, sizeof url, "http://127.0.0.1:%d/", ntohs (addr.sin_port));
    xxl_bridge_call_t *call = xxl_bridge_call_new (NULL, 1, 3);
    XXL_CHECK (call);
    if (!call) {
        close (fd);
        return;
    }
    call_seen_t seen [4];
    memset (seen, 0, sizeof seen);
    int64_t start = zclock_mono ();
    XXL_CHECK_INT (xxl_bridge_call_post (call, url, "run", "{}", 400, s_seen_at, &seen [0]), 0);
    XXL_CHECK_INT (xxl_bridge_call_post (call, url, "beat", "{}", 200, s_seen_at, &seen [1]), 0);
    XXL_CHECK_INT (xxl_bridge_call_post (call, url, "beat", "{}", 1500, s_seen_at, &seen [2]), 0);
    //  past `queued`: refused at once
    XXL_CHECK_INT (xxl_bridge_call_post (call, url, "beat", "{}", 100, s_seen_at, &seen [3]), -1);
    XXL_CHECK_INT (xxl_bridge_call_count (call), 3);
    while ((!seen [0].done || !seen [1].done || !seen [2].done) && zclock_mono () - start < 5000) {
        long timeout = 1000;
        zmq_pollitem_t item = { NULL, xxl_bridge_call_fd (call, &timeout), ZMQ_POLLIN, 0 };
        zmq_poll (&item, 1, timeout);
        xxl_bridge_call_perform (call, item.revents & ZMQ_POLLIN);
    }
    //  the one on the wire: libcurl's timeout
    XXL_CHECK (seen [0].done && seen [0].status == 0 && strstr (seen [0].why, "imed out"));
    XXL_CHECK (seen [0].at - start >= 350 && seen [0].at - start < 1400);
    //  the one waiting behind it: its own 200 ms, while it waited
    XXL_CHECK (seen [1].done && seen [1].status == 0
               && strstr (seen [1].why, "timed out waiting for a connection"));
    XXL_CHECK (seen [1].at - start >= 150 && seen [1].at - start < 400);
    //  the third joined the wire when the first ended: timed out by libcurl
    //  at its 1.5 s from its post, not 1.5 s from joining
    XXL_CHECK (seen [2].done && seen [2].status == 0 && strstr (seen [2].why, "imed out")
               && !strstr (seen [2].why, "waiting for a connection"));
    XXL_CHECK (seen [2].at - start >= 1400 && seen [2].at - start < 2600);
    XXL_CHECK (!seen [3].done);
    XXL_CHECK_INT (xxl_bridge_call_count (call), 0);
    xxl_bridge_call_destroy (&call);
    close (fd);
}

//  Calls one after another on kept-alive connections, the executor
//  closing the connection after every second answer on its own (no
//  "Connection: close"): each ends 200 at once (the own client's idle
//  connection, or libcurl's socket the epoll set kept while unwatched,
//  leaves the set at its EOF; an fd number reused is watched), and the
//  set's fd is not readable again after (no busy loop); both ways
static void
test_call_reuse (const char *host)
{
    server_t server = { .close_every = 2 };
    int port = s_server_start (&server);
    char url [64];
    snprintf (url, sizeof url, "http://%s:%d/", host, port);
    xxl_bridge_call_t *call = xxl_bridge_call_new (NULL, 1, 4);
    XXL_CHECK (call);
    int ok = 0;
    int64_t start = zclock_mono ();
    for (int i = 0; i < 8 && call; i++) {
        seen_t seen;
        int64_t posted = zclock_mono ();
        s_call (call, url, "beat", "{}", &seen);
        if (seen.status == 200 && zclock_mono () - posted < 1000)
            ok++;
        else
            printf ("%s call %d: status %d after %" PRId64 " ms (%s)\n", host, i, seen.status,
                    zclock_mono () - posted, seen.why);
        zclock_sleep (20);          //  (the executor's close arrives meanwhile)
        if (server.requests % 2 == 0) {
            long timeout = 0;
            zmq_pollitem_t item = { NULL, xxl_bridge_call_fd (call, &timeout), ZMQ_POLLIN, 0 };
            zmq_poll (&item, 1, 0);
            xxl_bridge_call_perform (call, item.revents & ZMQ_POLLIN);
            item.revents = 0;
            zmq_poll (&item, 1, 0);
            XXL_CHECK (!(item.revents & ZMQ_POLLIN));
        }
    }
    XXL_CHECK_INT (ok, 8);
    XXL_CHECK (server.requests >= 8);
    XXL_CHECK (zclock_mono () - start < 4000);
    xxl_bridge_call_destroy (&call);
    s_server_stop (&server);
}

//  The check given to the calls refuses 127.0.0.0/8 while refuse is set
static bool s_refuse_v4;

static bool
s_check (void *arg, const struct sockaddr *addr)
{
    (void) arg;
    if (addr->sa_family != AF_INET)
        return true;
    const struct sockaddr_in *in = (const struct sockaddr_in *) addr;
    return !(s_refuse_v4 && (ntohl (in->sin_addr.s_addr) >> 24) == 127);
}

//  Every connection goes through the check, both ways to the wire (the
//  own client's address literal, libcurl's name it looks up): one it
//  refuses is never made, the call ends saying why; one it allows is
static void
test_call_check (void)
{
    server_t server = { .close_every = 1 };
    int port = s_server_start (&server);
    xxl_bridge_call_t *call = xxl_bridge_call_new (NULL, 1, 4);
    XXL_CHECK (call);
    xxl_bridge_call_set_check (call, s_check, NULL);
    const char *hosts [] = { "127.0.0.1", "localhost" };
    for (int i = 0; i < 2 && call; i++) {
        char url [64];
        snprintf (url, sizeof url, "http://%s:%d/", hosts [i], port);
        seen_t seen;
        s_refuse_v4 = true;
        int accepted = server.accepted;
        s_call (call, url, "beat", "{}", &seen);
        XXL_CHECK_MSG (seen.status == 0, "%s refused: %d", hosts [i], seen.status);
        XXL_CHECK_MSG (strstr (seen.why, "outside the networks the bridge may call"),
                       "%s: %s", hosts [i], seen.why);
        zclock_sleep (50);
        XXL_CHECK_INT (server.accepted, accepted);
        s_refuse_v4 = false;
        s_call (call, url, "beat", "{}", &seen);
        XXL_CHECK_MSG (seen.status == 200, "%s allowed: %d %s", hosts [i], seen.status, seen.why);
        XXL_CHECK (server.accepted > accepted);
    }
    xxl_bridge_call_destroy (&call);
    s_server_stop (&server);
}

int
main (void)
{
    zsys_init ();
    test_url ();
    test_reader ();
    test_calls ();
    test_call_queue ();
    test_call_reuse ("127.0.0.1");
    test_call_reuse ("localhost");
    test_call_check ();
    return xxl_test_done ();
}
