/*  test_bridge_resend.c -- xxl-bridge as a scheduler sees it, from a fake
    scheduler (a ROUTER speaking the agent protocol) and the fake XXL-JOB
    executor (tests/bridge/fake_executor.py):

    - a RUN reaches the executor once; its result comes as a CALLBACK;
    - the same logId sent again (a scheduler's re-send) is answered 200
      "already accepted" and not called again, also after the bridge was
      SIGKILLed and restarted (its journal); sent as another run (another
      job, a later logDateTime) it is refused 409 "logId N already used
      by another run" and not called;
    - a RUN past its expireTime is refused "expired: ...", one the bridge
      took before is answered 200 (a recovering scheduler's question);
    - a CALLBACK refused by the scheduler comes again (the spool), also
      across a SIGKILL of the bridge, until it is acknowledged;
    - results of ~1 MB handleMsg each, in one callback, reach a scheduler
      that drops frames past its limit (as a scheduler does): each once,
      in CALLBACKs of bounded bytes, each handleMsg cut to 15,000 bytes
      between characters;
    - a CALLBACK whose send fails (the scheduler gone: the link's DEALER,
      ZMQ_IMMEDIATE, has no connection and zmq_send with ZMQ_DONTWAIT
      fails) is sent again once the scheduler is back: every result
      arrives, each once.
*/

#include <czmq.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <xxl/msg.h>

#include "xxl_test.h"

static char s_dir [256];
static char s_endpoint [128];
static zsock_t *s_router;
static pid_t s_bridge, s_exec;
static char s_admin [128];
static zframe_t *s_peer;            //  the executor's connection's routing id
static uint64_t s_next = 1000;

static pid_t
s_spawn (char *const argv [], const char *log)
{
    pid_t pid = fork ();
    if (pid == 0) {
        int fd = open (log, O_WRONLY | O_CREAT | O_APPEND, 0600);
        if (fd >= 0) {
            dup2 (fd, 1);
            dup2 (fd, 2);
        }
        execv (argv [0], argv);
        _exit (127);
    }
    return pid;
}

//  Reads a file's first line "KEY=N" or "N" as a number, waiting for it
static int
s_read_port (const char *path, const char *key)
{
    for (int i = 0; i < 200; i++) {
        FILE *file = fopen (path, "r");
        char line [64] = "";
        if (file) {
            if (!fgets (line, sizeof line, file))
                line [0] = 0;
            fclose (file);
        }
        const char *value = strncmp (line, key, strlen (key)) == 0? line + strlen (key): NULL;
        if (value && atoi (value) > 0)
            return atoi (value);
        zclock_sleep (50);
    }
    return 0;
}

static void
s_start_bridge (int port)
{
    char *bridge = zsys_sprintf ("%s/bridge/xxl-bridge", getenv ("XXL_BUILD"));
    char *listen = zsys_sprintf ("127.0.0.1:%d", port);
    char *ready = zsys_sprintf ("%s/ready", s_dir);
    char *cfg = zsys_sprintf ("%s/bridge.cfg", s_dir);
    char *log = zsys_sprintf ("%s/bridge.log", s_dir);
    char *logdir = zsys_sprintf ("%s/state", s_dir);
    unlink (ready);
    FILE *file = fopen (cfg, "w");
    //  (a beat as long as the default's: a batch refused or not sent goes
    //  again after its link's retry time, not at the next beat)
    fprintf (file, "bridge\n    beat = 30\n    expire = 30\n");
    fclose (file);
    char *argv [] = { bridge, "-c", cfg, "--scheduler", s_endpoint, "--listen", listen,
                      "--logdir", logdir, "--ready-file", ready, NULL };
    s_bridge = s_spawn (argv, log);
    int got = s_read_port (ready, "port=");
    XXL_CHECK_MSG (got > 0, "the bridge starts (%s)", log);
    snprintf (s_admin, sizeof s_admin, "http://127.0.0.1:%d/xxl-job-admin", got);
    zstr_free (&bridge); zstr_free (&listen); zstr_free (&ready);
    zstr_free (&cfg); zstr_free (&log); zstr_free (&logdir);
}

static void
s_stop (pid_t *pid, int signum)
{
    if (*pid > 0) {
        kill (*pid, signum);
        waitpid (*pid, NULL, 0);
    }
    *pid = 0;
}

//  The next message from the bridge within timeout ms, of type type
//  (others are answered as a scheduler would: REGISTER 200, CALLBACK
//  ack_code); NULL when none came
static int s_ack_code = 200;
static size_t s_callbacks_seen;

static xxl_msg_t *
s_recv (const char *type, int timeout)
{
    int64_t end = zclock_mono () + timeout;
    xxl_enc_t *enc = xxl_enc_new ();
    while (zclock_mono () < end) {
        zpoller_t *poller = zpoller_new (s_router, NULL);
        void *ready = zpoller_wait (poller, 100);
        zpoller_destroy (&poller);
        if (!ready)
            continue;
        zmsg_t *zmsg = zmsg_recv (s_router);
        zframe_t *peer = zmsg_pop (zmsg);
        zframe_t *body = zmsg_pop (zmsg);
        zmsg_destroy (&zmsg);
        char err [256];
        xxl_msg_t *msg = body? xxl_msg_decode (zframe_data (body), zframe_size (body), NULL,
                                               err, sizeof err): NULL;
        zframe_destroy (&body);
        if (!msg) {
            zframe_destroy (&peer);
            continue;
        }
        const char *t = xxl_msg_type (msg);
        int code = 0;
        if (streq (t, "REGISTER")) {
            zframe_destroy (&s_peer);
            s_peer = zframe_dup (peer);
            code = 200;
        }
        else
        if (streq (t, "CALLBACK")) {
            s_callbacks_seen++;
            code = s_ack_code;
        }
        if (code) {
            xxl_enc_reply (enc, xxl_msg_id (msg), code, NULL);
            if (streq (t, "REGISTER")) {
                xxl_enc_key (enc, "content");
                xxl_enc_map_begin (enc);
                xxl_enc_kint (enc, "now", zclock_mono ());
                xxl_enc_map_end (enc);
            }
            size_t size;
            const void *data = xxl_enc_finish (enc, &size);
            zframe_send (&peer, s_router, ZFRAME_MORE);
            zmq_send (zsock_resolve (s_router), data, size, 0);
        }
        zframe_destroy (&peer);
        if (streq (t, type)) {
            xxl_enc_destroy (&enc);
            return msg;
        }
        xxl_msg_destroy (&msg);
    }
    xxl_enc_destroy (&enc);
    return NULL;
}

//  Sends RUN logId (expire: its expireTime, 0 none) and returns the
//  REPLY's code, its msg into why
static int
s_run_handler (int64_t log_id, int64_t job_id, int64_t date, int64_t expire,
               const char *handler, const char *params, char *why, size_t whylen)
{
    xxl_enc_t *enc = xxl_enc_new ();
    uint64_t id = ++s_next;
    xxl_enc_request (enc, "RUN", id);
    xxl_enc_kint (enc, "jobId", job_id);
    xxl_enc_kstr (enc, "executorHandler", handler);
    xxl_enc_kstr (enc, "executorParams", params);
    xxl_enc_kint (enc, "logId", log_id);
    xxl_enc_kint (enc, "logDateTime", date);
    xxl_enc_kstr (enc, "glueType", "BEAN");
    if (expire)
        xxl_enc_kint (enc, "expireTime", expire);
    size_t size;
    const void *data = xxl_enc_finish (enc, &size);
    zframe_t *peer = zframe_dup (s_peer);
    zframe_send (&peer, s_router, ZFRAME_MORE);
    zmq_send (zsock_resolve (s_router), data, size, 0);
    xxl_enc_destroy (&enc);
    xxl_msg_t *reply = s_recv ("REPLY", 10000);
    int code = -1;
    why [0] = 0;
    if (reply) {
        code = (int) xxl_msg_int (reply, NULL, "code", 0, 0, 999, -1);
        snprintf (why, whylen, "%s", xxl_msg_str (reply, NULL, "msg", 0, 1024, ""));
    }
    xxl_msg_destroy (&reply);
    return code;
}

//  A RUN of the fake executor's handler "ok"
static int
s_run_as (int64_t log_id, int64_t job_id, int64_t date, int64_t expire, char *why,
          size_t whylen)
{
    return s_run_handler (log_id, job_id, date, expire, "ok", "", why, whylen);
}

//  A RUN of job 1 at one logDateTime (every run of this test)
static int
s_run (int64_t log_id, int64_t expire, char *why, size_t whylen)
{
    return s_run_as (log_id, 1, 1700000000000LL, expire, why, whylen);
}

//  How many times the executor ran log_id
static int
s_ran (int64_t log_id)
{
    char *path = zsys_sprintf ("%s/runs", s_dir);
    FILE *file = fopen (path, "r");
    zstr_free (&path);
    int count = 0;
    char line [64];
    while (file && fgets (line, sizeof line, file))
        count += atoll (line) == log_id;
    if (file)
        fclose (file);
    return count;
}

//  Waits for a CALLBACK holding log_id
static bool
s_callback_of (int64_t log_id, int timeout)
{
    int64_t end = zclock_mono () + timeout;
    while (zclock_mono () < end) {
        xxl_msg_t *msg = s_recv ("CALLBACK", (int) (end - zclock_mono ()));
        if (!msg)
            return false;
        size_t count;
        const msgpack_object *items = xxl_msg_array (msg, NULL, "items", 1, 10000, &count);
        bool found = false;
        for (size_t i = 0; i < count; i++)
            found = found || xxl_msg_int (msg, &items [i], "logId", 1, 1, INT64_MAX, 0) == log_id;
        xxl_msg_destroy (&msg);
        if (found)
            return true;
    }
    return false;
}

//  Posts body (a file) to the bridge's admin api/callback as an executor
//  would; 0 when it answered code 200
static int
s_post_callback (const char *file)
{
    char *cmd = zsys_sprintf ("curl -s -m 10 -H 'Content-Type: application/json' --data-binary"
                              " '@%s' '%s/api/callback' | grep -q '\"code\":200'", file,
                              s_admin);
    int rc = system (cmd);
    zstr_free (&cmd);
    return rc;
}

//  Receives CALLBACKs until each of logIds first..first+count-1 came (at
//  most 15 s), then checks that each came once, that all did (what: the
//  check's text) and that no CALLBACK comes again once they are acked
//  (2.5 s of quiet); counts into *cut_right (unless NULL) the handleMsgs
//  cut at 14,999 bytes before the character at byte 15,000
static void
s_collect (int64_t first, int count, int *cut_right, const char *what)
{
    assert (count <= 64);
    int seen [64] = { 0 };
    int got = 0;
    int64_t end = zclock_mono () + 15000;
    while (got < count && zclock_mono () < end) {
        xxl_msg_t *msg = s_recv ("CALLBACK", (int) (end - zclock_mono ()));
        if (!msg)
            break;
        size_t n;
        const msgpack_object *items = xxl_msg_array (msg, NULL, "items", 1, 10000, &n);
        for (size_t i = 0; i < n; i++) {
            int64_t id = xxl_msg_int (msg, &items [i], "logId", 1, 1, INT64_MAX, 0);
            if (id < first || id >= first + count)
                continue;
            if (seen [id - first]++ == 0)
                got++;
            if (cut_right) {
                const char *text = xxl_msg_str (msg, &items [i], "handleMsg", 0,
                                                XXL_MSG_MAX_STR, "");
                *cut_right += strlen (text) == 14999 && text [14998] == 'a' + 14998 % 26;
            }
        }
        xxl_msg_destroy (&msg);
    }
    XXL_CHECK_MSG (got == count, "%s (%d of %d)", what, got, count);
    //  Acknowledged: none comes again
    size_t before = s_callbacks_seen;
    s_recv ("NOTHING", 2500);
    XXL_CHECK_MSG (s_callbacks_seen == before, "acknowledged, no CALLBACK comes again");
    for (int i = 0; i < count; i++)
        XXL_CHECK_MSG (seen [i] == 1, "logId %" PRId64 " came once (%d)", first + i, seen [i]);
}

//  Results of logIds first..first+count-1 whose handleMsg is ~1 MB each,
//  in one callback: each comes to the scheduler once, in CALLBACKs each
//  within a scheduler's frame (the router's ZMQ_MAXMSGSIZE drops a larger
//  one, as a scheduler's does), each handleMsg cut to 15,000 bytes
//  between characters
static void
s_big_callbacks (int64_t first, int count)
{
    char why [1024];
    for (int i = 0; i < count; i++)
        XXL_CHECK_INT (s_run_handler (first + i, 3, 1700000000000LL, 0, "sleep", "60", why,
                                      sizeof why), 200);
    char *path = zsys_sprintf ("%s/big.json", s_dir);
    FILE *file = fopen (path, "w");
    XXL_CHECK (file);
    if (!file)
        return;
    fputc ('[', file);
    for (int i = 0; i < count; i++) {
        fprintf (file, "%s{\"logId\":%" PRId64 ",\"logDateTim\":1700000000000,"
                 "\"handleCode\":200,\"handleMsg\":\"", i? ",": "", first + i);
        //  (a 2-byte character across byte 15,000: the cut goes before it)
        for (int j = 0; j < 14999; j++)
            fputc ('a' + j % 26, file);
        fputs ("\xc3\xa9", file);
        for (int j = 0; j < 1000000; j++)
            fputc ('x', file);
        fputs ("\"}", file);
    }
    fputc (']', file);
    fclose (file);
    XXL_CHECK_MSG (s_post_callback (path) == 0, "the bridge takes a callback of %d results of"
                   " ~1 MB", count);
    zstr_free (&path);
    int cut_right = 0;
    s_collect (first, count, &cut_right, "every result of ~1 MB comes to the scheduler");
    XXL_CHECK_MSG (cut_right >= count, "each handleMsg cut before the character at byte"
                   " 15,000 (%d of %d)", cut_right, count);
}

//  Writes a callback of logIds first..first+count-1 (small results, as an
//  executor sends them) to path; 0 when written
static int
s_write_results (const char *path, int64_t first, int count)
{
    FILE *file = fopen (path, "w");
    if (!file)
        return -1;
    fputc ('[', file);
    for (int i = 0; i < count; i++)
        fprintf (file, "%s{\"logId\":%" PRId64 ",\"logDateTim\":1700000000000,"
                 "\"handleCode\":200,\"handleMsg\":\"done %" PRId64 "\"}", i? ",": "",
                 first + i, first + i);
    fputc (']', file);
    return fclose (file) == 0? 0: -1;
}

//  A plain TCP listener on 127.0.0.1:port (SO_REUSEADDR, as libzmq's
//  listeners), waiting up to 10 s for the port to be free (a closed zmq
//  socket's listener is closed by its context's reaper, a little later);
//  -1 when it cannot be had
static int
s_tcp_listen (int port)
{
    for (int i = 0; i < 200; i++) {
        int fd = socket (AF_INET, SOCK_STREAM, 0);
        if (fd < 0)
            return -1;
        int on = 1;
        struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons (port) };
        addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
        if (setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) == 0
        &&  bind (fd, (struct sockaddr *) &addr, sizeof addr) == 0 && listen (fd, 8) == 0)
            return fd;
        int err = errno;
        close (fd);
        if (err != EADDRINUSE)
            return -1;
        zclock_sleep (50);
    }
    return -1;
}

//  A CALLBACK whose send fails is sent again, whole, once the scheduler
//  is back: the results of logIds first..first+2*half-1 each arrive
//  exactly once.
//
//  How the send is made to fail: the fake scheduler's ROUTER is closed,
//  and a plain TCP listener takes its port.  The bridge's DEALER
//  (ZMQ_IMMEDIATE: no pipe without a connection whose ZMTP handshake is
//  done) connects to it again; that it did (the listener accepts a
//  connection) says its old connection and pipe are gone, and the new
//  one never shakes hands: every zmq_send (ZMQ_DONTWAIT) of the link
//  fails (EAGAIN), while the link stays registered (no REGISTER was
//  answered otherwise), so the bridge tries its CALLBACKs on it.  The
//  first half of the results is then posted; the bridge spools them and
//  tries their CALLBACK in the same loop turn (the admin's requests are
//  handled first in a turn, the deliveries last).  The second half is
//  posted next: its answer, in a later turn, says the first half's send
//  was tried and failed.  Then the scheduler comes back (a new ROUTER on
//  the same endpoint) and every result must come, each once, and none
//  again once acked.  Before the bridge took a failed batch apart
//  (90da788), its results stayed in flight, never sent again on that
//  link: none came.
static void
s_send_fails (int64_t first, int half)
{
    char why [1024];
    int count = 2 * half;
    assert (count <= 64);
    for (int i = 0; i < count; i++)
        XXL_CHECK_INT (s_run_handler (first + i, 4, 1700000000000LL, 0, "sleep", "60", why,
                                      sizeof why), 200);
    //  The scheduler goes; a listener that never answers takes its port
    int port = atoi (strrchr (s_endpoint, ':') + 1);
    zsock_destroy (&s_router);
    zframe_destroy (&s_peer);
    int listener = s_tcp_listen (port);
    XXL_CHECK_MSG (listener >= 0, "the scheduler's port %d can be listened on", port);
    struct pollfd pfd = { .fd = listener, .events = POLLIN };
    int conn = listener >= 0 && poll (&pfd, 1, 10000) == 1? accept (listener, NULL, NULL): -1;
    XXL_CHECK_MSG (conn >= 0, "the bridge's link connects again (its old connection gone)");

    char *path_a = zsys_sprintf ("%s/fail-a.json", s_dir);
    char *path_b = zsys_sprintf ("%s/fail-b.json", s_dir);
    XXL_CHECK (s_write_results (path_a, first, half) == 0);
    XXL_CHECK (s_write_results (path_b, first + half, half) == 0);
    XXL_CHECK_MSG (s_post_callback (path_a) == 0, "the bridge takes a callback while its"
                   " CALLBACKs cannot be sent");
    XXL_CHECK_MSG (s_post_callback (path_b) == 0, "... and another, a turn later (the first"
                   " one's send failed meanwhile)");
    zstr_free (&path_a);
    zstr_free (&path_b);

    //  The scheduler is back, on the same endpoint
    if (conn >= 0)
        close (conn);
    if (listener >= 0)
        close (listener);
    s_router = zsock_new (ZMQ_ROUTER);
    zsock_set_maxmsgsize (s_router, XXL_MSG_MAX_FRAME + 1024);
    int bound = -1;
    for (int i = 0; i < 200 && bound < 0; i++)
        if ((bound = zsock_bind (s_router, "%s", s_endpoint)) < 0)
            zclock_sleep (50);      //  (the port freed a little later)
    XXL_CHECK_MSG (bound == port, "the scheduler binds %s again", s_endpoint);

    s_collect (first, count, NULL, "after a failed send, every result comes to the scheduler"
               " once it is back");
}

int
main (void)
{
    if (!getenv ("XXL_BUILD") || !getenv ("XXL_SRC") || system ("python3 -c 1 2>/dev/null")) {
        printf ("# skipped: run through make check, with python3\n");
        return 77;
    }
    zsys_init ();
    if (xxl_test_tmpdir (s_dir, sizeof s_dir, "bridge-resend"))
        return 1;
    //  The bridge's state folder is the test's: local keys a scheduler
    //  made on this host (/var/lib/xxl) must not make it speak CURVE
    char *state = zsys_sprintf ("%s/state", s_dir);
    setenv ("XXL_STATE_DIR", state, 1);
    zstr_free (&state);
    s_router = zsock_new (ZMQ_ROUTER);
    //  (as a scheduler's: a larger frame closes the connection)
    zsock_set_maxmsgsize (s_router, XXL_MSG_MAX_FRAME + 1024);
    int port = zsock_bind (s_router, "tcp://127.0.0.1:*");
    snprintf (s_endpoint, sizeof s_endpoint, "tcp://127.0.0.1:%d", port);
    s_start_bridge (0);
    int bridge_port = atoi (strrchr (s_admin, ':') + 1);

    char *script = zsys_sprintf ("%s/tests/bridge/fake_executor.py", getenv ("XXL_SRC"));
    char *runs = zsys_sprintf ("%s/runs", s_dir);
    char *portfile = zsys_sprintf ("%s/exec.port", s_dir);
    char *log = zsys_sprintf ("%s/exec.log", s_dir);
    char *argv [] = { "/usr/bin/env", "python3", script, "--admin", s_admin, "--app", "app",
                      "--runs", runs, "--port-file", portfile, NULL };
    //  (env finds python3 on PATH)
    s_exec = s_spawn (argv, log);
    XXL_CHECK_MSG (s_read_port (portfile, "") > 0, "the fake executor starts");
    xxl_msg_t *reg = s_recv ("REGISTER", 10000);
    XXL_CHECK_MSG (reg, "the executor is registered with the scheduler through the bridge");
    if (reg)
        XXL_CHECK_STR (xxl_msg_str (reg, NULL, "registryKey", 0, 255, ""), "app");
    //  (an empty journal: no acceptedMax)
    XXL_CHECK (reg && xxl_msg_int (reg, NULL, "acceptedMax", 0, 0, INT64_MAX, -1) == -1);
    xxl_msg_destroy (&reg);

    char why [1024];
    //  A RUN: called once, its result comes
    XXL_CHECK_INT (s_run (5, 0, why, sizeof why), 200);
    XXL_CHECK_MSG (s_callback_of (5, 10000), "logId 5's result comes as a CALLBACK");
    XXL_CHECK_INT (s_ran (5), 1);
    //  Sent again: answered, not called
    XXL_CHECK_INT (s_run (5, 0, why, sizeof why), 200);
    XXL_CHECK_HAS (why, "already accepted");
    //  Past its expireTime: refused; one taken before: 200
    XXL_CHECK_INT (s_run (6, 1, why, sizeof why), 500);
    XXL_CHECK_HAS (why, "expired:");
    XXL_CHECK_INT (s_run (5, 1, why, sizeof why), 200);
    XXL_CHECK_HAS (why, "already accepted");

    //  A result the scheduler refuses stays and comes again, also after
    //  the bridge was SIGKILLed
    s_ack_code = 500;
    XXL_CHECK_INT (s_run (7, 0, why, sizeof why), 200);
    XXL_CHECK_MSG (s_callback_of (7, 10000), "logId 7's result comes");
    XXL_CHECK_MSG (s_callback_of (7, 10000), "refused, it comes again");
    s_stop (&s_bridge, SIGKILL);
    s_start_bridge (bridge_port);
    reg = s_recv ("REGISTER", 40000);
    XXL_CHECK_MSG (reg, "after the restart the executor is registered again");
    //  ... saying the journal's highest logId (5 and 7 accepted, 6 not):
    //  a scheduler on a restored store moves its ids past it
    XXL_CHECK_INT (reg? xxl_msg_int (reg, NULL, "acceptedMax", 0, 0, INT64_MAX, -1): -2, 7);
    xxl_msg_destroy (&reg);
    s_ack_code = 200;
    XXL_CHECK_MSG (s_callback_of (7, 10000), "the restarted bridge sends logId 7's result");
    size_t seen = s_callbacks_seen;
    s_recv ("NOTHING", 3000);
    XXL_CHECK_MSG (s_callbacks_seen == seen, "acknowledged, it does not come again");
    //  The journal outlived the bridge: logId 5 is not called again
    XXL_CHECK_INT (s_run (5, 0, why, sizeof why), 200);
    XXL_CHECK_HAS (why, "already accepted");
    //  ... and it knows which run it was: the same id for another job, or
    //  triggered later, is another run's (a store restored without moving
    //  its ids): refused 409, expired or not, never called; an earlier
    //  logDateTime (a recovering scheduler's planned instant) is the run
    XXL_CHECK_INT (s_run_as (5, 2, 1700000000000LL, 0, why, sizeof why), 409);
    XXL_CHECK_STR (why, "logId 5 already used by another run");
    XXL_CHECK_INT (s_run_as (5, 1, 1700000001000LL, 0, why, sizeof why), 409);
    XXL_CHECK_STR (why, "logId 5 already used by another run");
    XXL_CHECK_INT (s_run_as (5, 2, 1700000000000LL, 1, why, sizeof why), 409);
    XXL_CHECK_INT (s_run_as (5, 1, 1699999999000LL, 0, why, sizeof why), 200);
    XXL_CHECK_HAS (why, "already accepted");
    zclock_sleep (500);
    XXL_CHECK_INT (s_ran (5), 1);
    XXL_CHECK_INT (s_ran (7), 1);
    XXL_CHECK_INT (s_ran (6), 0);

    //  Five results of ~1 MB each in one callback (5 MB in one CALLBACK
    //  would exceed a scheduler's frame)
    s_big_callbacks (20, 5);

    //  A CALLBACK that cannot be sent (the scheduler gone) comes once it
    //  is back, each of its results once
    s_send_fails (40, 3);

    s_stop (&s_exec, SIGKILL);
    s_stop (&s_bridge, SIGTERM);
    //  (a sanitizer's report in the bridge's log fails the test)
    char *grep = zsys_sprintf ("grep -q -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' '%s/bridge.log'",
                               s_dir);
    XXL_CHECK_MSG (system (grep) != 0, "no sanitizer report in %s/bridge.log", s_dir);
    zstr_free (&grep);
    zframe_destroy (&s_peer);
    zsock_destroy (&s_router);
    if (!xxl_test_failed) {
        char *cmd = zsys_sprintf ("rm -rf '%s'", s_dir);
        if (system (cmd)) {}
        zstr_free (&cmd);
    }
    else
        printf ("# kept %s\n", s_dir);
    zstr_free (&script); zstr_free (&runs); zstr_free (&portfile); zstr_free (&log);
    return xxl_test_done ();
}
