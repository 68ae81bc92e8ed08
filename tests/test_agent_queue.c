/*  test_agent_queue.c -- the agent's link to a scheduler is a bounded
    queue, and a full one loses nothing silently.

    Usage: test_agent_queue AGENT PLUGINS LOGDIR
    Starts the real agent (beat 5 s, its log in LOGDIR.log) against a fake
    scheduler that stops reading: its ROUTER reads ahead one message into
    a 4 KiB socket buffer.  Once the agent is registered, the fake sends
    more BEATs than the agent's queue (100,000 messages, xxl_transport) and
    the kernel's buffers can hold, then a RUN, reading nothing until the
    run's result is in the agent's spool (a BEAT a second meanwhile, so
    that the agent's heartbeat hears from it).  Then it reads and serves
    again.  Checks:
    - the queue is bounded: REPLYs were dropped, the first logged at once
      and their count once the link took messages again;
    - nothing was lost silently: the REPLYs that came and the count the
      agent logged add up to the requests sent, and at least 100,000
      came (the bound is no smaller than protocol.md says);
    - the result is not lost: its CALLBACK, refused by the full queue (or
      held back, when the agent took the link for down first: a REGISTER
      unanswered for a beat), comes once a REGISTER is answered again;
      and the link answers a BEAT.
    Then a freeze: the agent's next REGISTER is left unanswered and the
    agent stopped (SIGSTOP) for longer than its link's silence (15 s)
    while a RUN is sent to it, then let go on.  The time it was held up
    is none of the scheduler's silence: the link is kept (no "connecting
    again", which would throw the RUN away with the old socket) and the
    RUN runs, its result called back.
*/

#define _GNU_SOURCE                     //  memmem
#include <czmq.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include "xxl/msg.h"
#include "xxl_test.h"
#include "xxl_testwire.h"

#define BEAT_ID     1000000             //  the BEATs' ids: BEAT_ID + 1 ...
#define RUN_ID      5000000
#define RUN_LOG     INT64_C (0x0a0b0c0d0e0f)
#define FROZEN_ID   6000000             //  the RUN sent to the frozen agent
#define FROZEN_LOG  INT64_C (0x0a0b0c0d0e10)
#define SILENCE_MS  15000               //  the agent's XXL_LINK_SILENCE
                                        //  (docs/protocol.md)

static char *s_log_path;                //  the agent's log
static char *s_spool_path;              //  its callback spool

static pid_t
s_start_agent (char *argv [], const char *endpoint, const char *config)
{
    pid_t agent = fork ();
    if (agent == 0) {
        int fd = open (s_log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2 (fd, 1);
            dup2 (fd, 2);
            close (fd);
        }
        execl (argv [1], argv [1], "-c", config, "--app", "queue-app", "--scheduler", endpoint,
               "--address", "q1", "--plugins", argv [2], "--logdir", argv [3], (char *) NULL);
        _exit (127);
    }
    return agent;
}

//  The agent's log so far (caller frees), or NULL
static char *
s_agent_log (void)
{
    FILE *file = fopen (s_log_path, "r");
    if (!file)
        return NULL;
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream (&text, &size);
    char buf [4096];
    size_t n;
    while ((n = fread (buf, 1, sizeof buf, file)) > 0)
        fwrite (buf, 1, n, out);
    fclose (out);
    fclose (file);
    return text;
}

//  Whether the agent's spool holds a result of log_id (xxl_spool.c: a
//  record's payload is u8 1, then the logId, i64 little-endian)
static bool
s_spooled (int64_t log_id)
{
    FILE *file = fopen (s_spool_path, "rb");
    if (!file)
        return false;
    unsigned char want [9] = { 1 };
    for (int i = 0; i < 8; i++)
        want [1 + i] = (unsigned char) ((uint64_t) log_id >> (8 * i));
    unsigned char buf [65536 + 8];
    size_t kept = 0, n;
    bool found = false;
    while (!found && (n = fread (buf + kept, 1, sizeof buf - kept, file)) > 0) {
        n += kept;
        found = memmem (buf, n, want, sizeof want) != NULL;
        kept = n < 8? n: 8;
        memmove (buf, buf + n - kept, kept);
    }
    fclose (file);
    return found;
}

//  Waits up to ms for the agent's log to hold text
static bool
s_logged (const char *text, int ms)
{
    int64_t until = zclock_mono () + ms;
    while (true) {
        char *log = s_agent_log ();
        bool found = log && strstr (log, text);
        free (log);
        if (found || zclock_mono () >= until)
            return found;
        zclock_sleep (50);
    }
}

//  How many REPLYs the agent logged as dropped ("... N REPLY(s) were
//  dropped", summed over the log), or -1 when it logged none
static int64_t
s_dropped (void)
{
    char *log = s_agent_log ();
    int64_t total = -1;
    for (char *line = log? strstr (log, "REPLY(s) were dropped"): NULL; line;
         line = strstr (line + 1, "REPLY(s) were dropped")) {
        //  (the count is the number before the text)
        char *p = line - 1;
        while (p > log && *p == ' ')
            p--;
        while (p > log && p [-1] >= '0' && p [-1] <= '9')
            p--;
        total = (total < 0? 0: total) + strtoll (p, NULL, 10);
    }
    free (log);
    return total;
}

static void
s_send_beat (xxl_tw_sched_t *sched, xxl_enc_t *enc, uint64_t id)
{
    xxl_enc_request (enc, "BEAT", id);
    xxl_tw_sched_send (sched, enc);
}

//  A RUN of demoJobHandler, the single form
//  The agent's CPU time so far, in clock ticks (-1: unknown)
static int64_t
s_cpu_ticks (pid_t pid)
{
    char path [64], text [1024];
    snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
    FILE *file = fopen (path, "r");
    if (!file)
        return -1;
    size_t size = fread (text, 1, sizeof text - 1, file);
    fclose (file);
    text [size] = 0;
    //  Fields 14 and 15 (utime, stime) follow the ")" that ends field 2
    const char *p = strrchr (text, ')');
    long long utime, stime;
    if (!p || sscanf (p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lld %lld",
                      &utime, &stime) != 2)
        return -1;
    return utime + stime;
}

//  More messages than the agent's queue and the kernel's send buffer of
//  its connection can hold (a REPLY to a BEAT is over 30 bytes)
static int64_t
s_beats (void)
{
    int64_t wmem_max = 4 * 1024 * 1024;
    FILE *file = fopen ("/proc/sys/net/ipv4/tcp_wmem", "r");
    if (file) {
        long long low, initial, high;
        if (fscanf (file, "%lld %lld %lld", &low, &initial, &high) == 3 && high > 0)
            wmem_max = high;
        fclose (file);
    }
    return 100000 + wmem_max / 30 + 100000;
}

int
main (int argc, char *argv [])
{
    if (argc < 4) {
        fprintf (stderr, "usage: test_agent_queue AGENT PLUGINS LOGDIR\n");
        return 2;
    }
    zsys_init ();
    s_log_path = zsys_sprintf ("%s.log", argv [3]);
    s_spool_path = zsys_sprintf ("%s/callback.spool", argv [3]);
    char *config = zsys_sprintf ("%s.cfg", argv [3]);
    FILE *file = fopen (config, "w");
    assert (file);
    fprintf (file, "agent\n    beat = 5\n    callback_timeout = 1000\n");
    fclose (file);
    //  Unbounded towards the agent (every BEAT leaves at once), one
    //  message read ahead into a 4 KiB buffer from it
    xxl_tw_sched_t *sched = xxl_tw_sched_new_opts (0, 0, 1, 4096);
    assert (sched);
    pid_t agent = s_start_agent (argv, xxl_tw_sched_endpoint (sched), config);
    xxl_msg_t *reg = xxl_tw_sched_wait (sched, "REGISTER", 0, 15000);
    XXL_CHECK (reg != NULL);
    xxl_msg_destroy (&reg);
    //  (answered: the link is up)
    xxl_tw_sched_serve (sched, 200);

    //  The fake stops reading; BEATs, then a RUN
    int64_t beats = s_beats ();
    xxl_enc_t *enc = xxl_enc_new ();
    for (int64_t i = 1; i <= beats; i++)
        s_send_beat (sched, enc, BEAT_ID + (uint64_t) i);
    xxl_tw_sched_run (sched, enc, RUN_ID, RUN_LOG);
    //  The agent works through the BEATs at its own pace (a loaded or
    //  sanitized build takes minutes): waited for while it still uses
    //  CPU, until 30 s pass without a tick of it, or 15 minutes in all
    int64_t start = zclock_mono (), next_beat = start + 1000;
    int64_t ticks = s_cpu_ticks (agent), idle_since = start;
    while (!s_spooled (RUN_LOG) && zclock_mono () - idle_since < 30000
    &&     zclock_mono () - start < 900000) {
        zclock_sleep (50);
        int64_t now_ticks = s_cpu_ticks (agent);
        if (now_ticks != ticks) {
            ticks = now_ticks;
            idle_since = zclock_mono ();
        }
        if (zclock_mono () >= next_beat) {
            s_send_beat (sched, enc, BEAT_ID + (uint64_t) ++beats);
            next_beat = zclock_mono () + 1000;
        }
    }
    XXL_CHECK (s_spooled (RUN_LOG));
    printf ("# %" PRId64 " BEATs and a RUN sent, nothing read; the run's result is spooled"
            " after %" PRId64 " s\n", beats, (zclock_mono () - start) / 1000);
    XXL_CHECK (s_logged ("cannot send a REPLY to", 0));
    printf ("# its CALLBACK %s\n", s_logged ("cannot send CALLBACK to", 1000)
            ? "was refused by the full queue"
            : "waits: the link was taken for down first (a REGISTER unanswered for a beat)");
    fflush (stdout);

    //  Reading again: every REPLY that went, and the run's result, which
    //  may come before the last of them (its CALLBACK is sent when the
    //  queue has room, while REPLYs still wait in the sockets): until the
    //  result came and no REPLY for 5 s, or nothing for 15 s, up to 10
    //  minutes (under a sanitizer 150,000 REPLYs take over a minute)
    int64_t replies = 0;
    bool run_replied = false;
    int64_t heard = zclock_mono (), limit = zclock_mono () + 600000;
    while (zclock_mono () < limit
    &&     zclock_mono () - heard < (xxl_tw_sched_callback (sched, RUN_LOG)? 5000: 15000)) {
        xxl_msg_t *reply = xxl_tw_sched_wait (sched, "REPLY", 0, 1000);
        if (reply)
            heard = zclock_mono ();
        if (reply && xxl_msg_id (reply) > BEAT_ID
        &&  xxl_msg_id (reply) <= BEAT_ID + (uint64_t) beats)
            replies++;
        if (reply && xxl_msg_id (reply) == RUN_ID)
            run_replied = true;
        xxl_msg_destroy (&reply);
    }
    const char *result = xxl_tw_sched_callback (sched, RUN_LOG);
    XXL_CHECK (result && strncmp (result, "200:", 4) == 0);
    int64_t dropped = s_dropped ();
    printf ("# %" PRId64 " REPLYs to BEATs came, the RUN's %s; the agent logged %" PRId64
            " dropped\n", replies, run_replied? "too": "not", dropped);
    XXL_CHECK (dropped > 0);
    XXL_CHECK (replies + (run_replied? 1: 0) + dropped == beats + 1);
    XXL_CHECK (replies >= 100000);

    //  The link works on
    s_send_beat (sched, enc, 42);
    xxl_msg_t *pong = xxl_tw_sched_wait (sched, "REPLY", 42, 10000);
    XXL_CHECK (xxl_tw_code (pong) == XXL_OK);
    xxl_msg_destroy (&pong);

    //  A freeze past the link's silence, a REGISTER unanswered and a RUN
    //  waiting: the RUN is not lost.  (The stop outlasts the silence on
    //  purpose: that is the case.)
    char *text = s_agent_log ();
    size_t logged = text? strlen (text): 0;
    zstr_free (&text);
    xxl_tw_sched_mute (sched, true);
    xxl_msg_t *unanswered = xxl_tw_sched_wait (sched, "REGISTER", 0, 15000);
    XXL_CHECK (unanswered != NULL);
    xxl_msg_destroy (&unanswered);
    kill (agent, SIGSTOP);
    XXL_CHECK (xxl_tw_sched_run (sched, enc, FROZEN_ID, FROZEN_LOG) == 0);
    zclock_sleep (SILENCE_MS + 2000);
    kill (agent, SIGCONT);
    xxl_tw_sched_mute (sched, false);
    int64_t until = zclock_mono () + 30000;
    while (!xxl_tw_sched_callback (sched, FROZEN_LOG) && zclock_mono () < until)
        xxl_tw_sched_serve (sched, 100);
    result = xxl_tw_sched_callback (sched, FROZEN_LOG);
    XXL_CHECK (result && strncmp (result, "200:", 4) == 0);
    text = s_agent_log ();
    XXL_CHECK (text && strlen (text) >= logged && !strstr (text + logged, "connecting again"));
    printf ("# frozen for %d s with a REGISTER unanswered: the link was %s, the RUN sent"
            " meanwhile %s\n", (SILENCE_MS + 2000) / 1000,
            text && strstr (text + logged, "connecting again")? "replaced": "kept",
            result? "ran": "was lost");
    zstr_free (&text);

    kill (agent, SIGTERM);
    int64_t stop_until = zclock_mono () + 15000;
    int status = 0;
    while (waitpid (agent, &status, WNOHANG) == 0 && zclock_mono () < stop_until)
        xxl_tw_sched_serve (sched, 100);
    if (waitpid (agent, &status, WNOHANG) == 0) {
        kill (agent, SIGKILL);
        waitpid (agent, &status, 0);
    }
    xxl_enc_destroy (&enc);
    xxl_tw_sched_destroy (&sched);
    zstr_free (&config);
    zstr_free (&s_log_path);
    zstr_free (&s_spool_path);
    return xxl_test_done ();
}
