/*  test_agent_drain.c -- the agent's clean stop (SIGTERM), against a fake
    scheduler that can still send it RUNs once it said goodbye (a real
    scheduler routes nothing to an agent that unregistered).

    argv: agent binary, handler plugin folder, a temporary folder.

    (a) agent/drain_s = 10: a GLUE run of 3 s is running at SIGTERM; the
        agent sends UNREGISTER, refuses a new RUN with 500 "stopping: ...",
        answers a re-sent RUN of its own run 200 and a LOG of it; the
        run ends 200 and is called back; the agent exits after it (not
        before), status 0.
    (b) agent/stop_wait = 1000 (the deprecated alias, in ms): a run of 30 s
        is killed about 1 s after SIGTERM, its callback saying so; no
        process of it is left.
    (c) drain_s = 30: a second SIGTERM during the drain ends it at once;
        the run is killed.
*/

#include <czmq.h>
#include <signal.h>
#include <sys/wait.h>
#include "xxl/msg.h"
#include "xxl_test.h"
#include "xxl_testwire.h"

static xxl_tw_sched_t *s_sched;         //  the fake scheduler

static uint64_t s_next_id = 1;

//  Sends a single-form GLUE_SHELL RUN and returns its reply (NULL: none)
static xxl_msg_t *
s_run (int64_t job_id, int64_t log_id, const char *source)
{
    uint64_t id = s_next_id++;
    xxl_enc_t *enc = xxl_enc_new ();
    xxl_enc_request (enc, "RUN", id);
    xxl_tw_enc_glue_fields (enc, job_id, log_id, source);
    xxl_tw_sched_send (s_sched, enc);
    xxl_enc_destroy (&enc);
    return xxl_tw_sched_wait (s_sched, "REPLY", id, 5000);
}

//  Starts the agent with a config file holding `key = value` under agent
static pid_t
s_start_agent (char *argv [], const char *endpoint, const char *name, const char *setting)
{
    char *cfg = zsys_sprintf ("%s/%s.cfg", argv [3], name);
    char *logdir = zsys_sprintf ("%s/logs-%s", argv [3], name);
    char *out = zsys_sprintf ("%s/agent-%s.log", argv [3], name);
    FILE *file = fopen (cfg, "w");
    assert (file);
    fprintf (file, "agent\n    beat = 1\n    callback_timeout = 1000\n    %s\n", setting);
    fclose (file);
    pid_t agent = fork ();
    if (agent == 0) {
        int fd = open (out, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2 (fd, 1);
            dup2 (fd, 2);
        }
        execl (argv [1], argv [1], "-c", cfg, "--app", "drain-app", "--scheduler", endpoint,
               "--address", name, "--plugins", argv [2], "--logdir", logdir, (char *) NULL);
        _exit (127);
    }
    zstr_free (&cfg);
    zstr_free (&logdir);
    zstr_free (&out);
    return agent;
}

//  Serves the agent until it exits or ms passed; returns its wait status,
//  -1 if it still runs; *when gets the monotonic ms it was seen gone
static int
s_exited (pid_t agent, int ms, int64_t *when)
{
    int64_t until = zclock_mono () + ms;
    while (1) {
        int status;
        if (waitpid (agent, &status, WNOHANG) == agent) {
            *when = zclock_mono ();
            return status;
        }
        if (zclock_mono () >= until)
            return -1;
        xxl_tw_sched_serve (s_sched, 20);
    }
}

//  Serves the agent until the callback of log_id came or ms passed
static const char *
s_await_callback (int64_t log_id, int ms)
{
    int64_t until = zclock_mono () + ms;
    while (!xxl_tw_sched_callback (s_sched, log_id) && zclock_mono () < until)
        xxl_tw_sched_serve (s_sched, 50);
    return xxl_tw_sched_callback (s_sched, log_id);
}

static void
s_file_has (const char *dir, const char *name, const char *text, int *found)
{
    char *path = zsys_sprintf ("%s/%s", dir, name);
    FILE *file = fopen (path, "r");
    char line [1024];
    while (file && fgets (line, sizeof line, file))
        if (strstr (line, text))
            *found = 1;
    if (file)
        fclose (file);
    zstr_free (&path);
}

int
main (int argc, char *argv [])
{
    if (argc < 4) {
        fprintf (stderr, "usage: test_agent_drain AGENT PLUGINS TMPDIR\n");
        return 2;
    }
    zsys_init ();
    zsys_handler_set (NULL);
    s_sched = xxl_tw_sched_new (0);
    assert (s_sched);
    const char *endpoint = xxl_tw_sched_endpoint (s_sched);

    //  (a) a 3 s run in flight at SIGTERM finishes; new RUNs are refused
    pid_t agent = s_start_agent (argv, endpoint, "a1", "drain_s = 10");
    xxl_msg_t *msg = xxl_tw_sched_wait (s_sched, "REGISTER", 0, 15000);
    XXL_CHECK (msg != NULL);
    xxl_msg_destroy (&msg);
    msg = s_run (1, 7001, "sleep 3; echo drained-ok");
    XXL_CHECK (xxl_tw_code (msg) == 200);
    xxl_msg_destroy (&msg);
    zclock_sleep (300);
    int64_t term = zclock_mono ();
    kill (agent, SIGTERM);
    msg = xxl_tw_sched_wait (s_sched, "UNREGISTER", 0, 5000);
    XXL_CHECK (msg != NULL);
    xxl_msg_destroy (&msg);
    msg = s_run (2, 7002, "echo must-not-run");
    printf ("a: RUN during the drain: %d %s\n", xxl_tw_code (msg), xxl_tw_text (msg));
    XXL_CHECK (xxl_tw_code (msg) == 500 && strncmp (xxl_tw_text (msg), "stopping: ", 10) == 0);
    xxl_msg_destroy (&msg);
    msg = s_run (1, 7001, "sleep 3; echo drained-ok");
    XXL_CHECK (xxl_tw_code (msg) == 200 && strstr (xxl_tw_text (msg), "already accepted"));
    xxl_msg_destroy (&msg);
    //  LOG of the running run is answered
    uint64_t log_req = s_next_id++;
    xxl_enc_t *enc = xxl_enc_new ();
    xxl_enc_request (enc, "LOG", log_req);
    xxl_enc_kint (enc, "logId", 7001);
    xxl_enc_kint (enc, "logDateTime", zclock_time ());
    xxl_enc_kint (enc, "fromLineNum", 1);
    xxl_tw_sched_send (s_sched, enc);
    xxl_enc_destroy (&enc);
    msg = xxl_tw_sched_wait (s_sched, "REPLY", log_req, 5000);
    const msgpack_object *content = xxl_tw_content (msg);
    const char *lines = content? xxl_msg_str (msg, content, "logContent", 0, 1 << 20, ""): NULL;
    XXL_CHECK (xxl_tw_code (msg) == 200 && lines && strstr (lines, "execute start"));
    xxl_msg_destroy (&msg);
    int64_t gone = 0;
    XXL_CHECK (s_exited (agent, 1000, &gone) == -1);    //  still draining
    const char *result = s_await_callback (7001, 10000);
    printf ("a: the running run's callback: %s\n", result? result: "(none)");
    XXL_CHECK (result && strncmp (result, "200:", 4) == 0);
    int status = s_exited (agent, 10000, &gone);
    XXL_CHECK (status == 0);
    printf ("a: the agent exited %" PRId64 " ms after SIGTERM (the run: 3 s)\n", gone - term);
    XXL_CHECK (gone - term >= 2500 && gone - term < 8000);
    XXL_CHECK (xxl_tw_sched_callback (s_sched, 7002) == NULL);
    int ran = 0;
    s_file_has (argv [3], "agent-a1.log", "must-not-run", &ran);
    XXL_CHECK (!ran);

    //  (b) the deprecated stop_wait (ms): a 30 s run killed after ~1 s
    agent = s_start_agent (argv, endpoint, "b1", "stop_wait = 1000");
    msg = xxl_tw_sched_wait (s_sched, "REGISTER", 0, 15000);
    XXL_CHECK (msg != NULL);
    xxl_msg_destroy (&msg);
    msg = s_run (3, 7101, "sleep 30.0711");
    XXL_CHECK (xxl_tw_code (msg) == 200);
    xxl_msg_destroy (&msg);
    zclock_sleep (300);
    XXL_CHECK (xxl_tw_marked (7101) > 0);
    term = zclock_mono ();
    kill (agent, SIGTERM);
    result = s_await_callback (7101, 10000);
    int64_t called = zclock_mono () - term;
    printf ("b: callback %" PRId64 " ms after SIGTERM: %s\n", called, result? result: "(none)");
    XXL_CHECK (result && strncmp (result, "500:", 4) == 0 && strstr (result, "drain")
               && strstr (result, "[job running, killed]"));
    XXL_CHECK (called >= 900 && called < 4000);
    status = s_exited (agent, 10000, &gone);
    XXL_CHECK (status == 0);
    XXL_CHECK (xxl_tw_marked (7101) == 0);
    int deprecated = 0;
    s_file_has (argv [3], "agent-b1.log", "agent/stop_wait is deprecated", &deprecated);
    XXL_CHECK (deprecated);

    //  (c) a second SIGTERM during the drain stops at once
    agent = s_start_agent (argv, endpoint, "c1", "drain_s = 30");
    msg = xxl_tw_sched_wait (s_sched, "REGISTER", 0, 15000);
    XXL_CHECK (msg != NULL);
    xxl_msg_destroy (&msg);
    msg = s_run (4, 7201, "sleep 30.0721");
    XXL_CHECK (xxl_tw_code (msg) == 200);
    xxl_msg_destroy (&msg);
    zclock_sleep (300);
    kill (agent, SIGTERM);
    msg = xxl_tw_sched_wait (s_sched, "UNREGISTER", 0, 5000);
    XXL_CHECK (msg != NULL);
    xxl_msg_destroy (&msg);
    XXL_CHECK (s_exited (agent, 500, &gone) == -1);     //  draining
    term = zclock_mono ();
    kill (agent, SIGTERM);
    status = s_exited (agent, 5000, &gone);
    printf ("c: exited %" PRId64 " ms after the second SIGTERM\n", gone - term);
    XXL_CHECK (status == 0 && gone - term < 2000);
    XXL_CHECK (xxl_tw_marked (7201) == 0);
    result = s_await_callback (7201, 1000);
    printf ("c: callback: %s\n", result? result: "(none: in the spool)");
    XXL_CHECK (!result || (strncmp (result, "500:", 4) == 0 && strstr (result, "second stop signal")));

    xxl_tw_sched_destroy (&s_sched);
    return xxl_test_done ();
}
