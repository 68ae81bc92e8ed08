/*  test_agent_origin.c -- with several schedulers, a run's result goes
    back to the scheduler whose RUN started it.

    Usage: test_agent_origin AGENT PLUGINS LOGDIR
    Starts the real agent against two fake schedulers, A and B (its
    --scheduler list A,B: A is the one it prefers).  B sends a RUN of
    log 1001, A one of log 1002, B another of 1003.  Checks that B records
    the CALLBACKs of 1001 and 1003 and A that of 1002, neither the other's:
    schedulers sharing a store each write the rows they sent, with no wait
    for another's row locks (docs/design.md, Agent).  Then A goes away and
    B sends 1004 while A is still taken for up: its result reaches B.
*/

#include <czmq.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include "xxl/msg.h"
#include "xxl_test.h"
#include "xxl_testwire.h"

//  Serves both until each log of want [] has a callback at one of them
static void
s_serve_until (xxl_tw_sched_t *a, xxl_tw_sched_t *b, const int64_t *want, size_t count)
{
    int64_t until = zclock_mono () + 20000;
    while (zclock_mono () < until) {
        size_t done = 0;
        for (size_t i = 0; i < count; i++)
            done += (a && xxl_tw_sched_callback (a, want [i]))
                 || (b && xxl_tw_sched_callback (b, want [i]));
        if (done == count)
            return;
        if (a)
            xxl_tw_sched_serve (a, 20);
        if (b)
            xxl_tw_sched_serve (b, 20);
    }
}

int
main (int argc, char *argv [])
{
    if (argc < 4) {
        fprintf (stderr, "usage: test_agent_origin AGENT PLUGINS LOGDIR\n");
        return 2;
    }
    zsys_init ();
    xxl_tw_sched_t *a = xxl_tw_sched_new (0), *b = xxl_tw_sched_new (0);
    assert (a && b);
    char *list = zsys_sprintf ("%s,%s", xxl_tw_sched_endpoint (a), xxl_tw_sched_endpoint (b));
    char *log_path = zsys_sprintf ("%s.log", argv [3]);
    pid_t agent = fork ();
    if (agent == 0) {
        int fd = open (log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2 (fd, 1);
            dup2 (fd, 2);
            close (fd);
        }
        execl (argv [1], argv [1], "--app", "origin-app", "--scheduler", list, "--address", "o1",
               "--plugins", argv [2], "--logdir", argv [3], (char *) NULL);
        _exit (127);
    }
    xxl_msg_t *reg = xxl_tw_sched_wait (a, "REGISTER", 0, 15000);
    XXL_CHECK (reg != NULL);
    xxl_msg_destroy (&reg);
    reg = xxl_tw_sched_wait (b, "REGISTER", 0, 15000);
    XXL_CHECK (reg != NULL);
    xxl_msg_destroy (&reg);
    xxl_tw_sched_serve (a, 100);
    xxl_tw_sched_serve (b, 100);

    xxl_enc_t *enc = xxl_enc_new ();
    xxl_tw_sched_run (b, enc, 1, 1001);
    xxl_tw_sched_run (a, enc, 2, 1002);
    xxl_tw_sched_run (b, enc, 3, 1003);
    int64_t want [] = { 1001, 1002, 1003 };
    s_serve_until (a, b, want, 3);
    XXL_CHECK (xxl_tw_sched_callback (b, 1001) != NULL);
    XXL_CHECK (xxl_tw_sched_callback (a, 1002) != NULL);
    XXL_CHECK (xxl_tw_sched_callback (b, 1003) != NULL);
    XXL_CHECK (xxl_tw_sched_callback (a, 1001) == NULL);
    XXL_CHECK (xxl_tw_sched_callback (a, 1003) == NULL);
    XXL_CHECK (xxl_tw_sched_callback (b, 1002) == NULL);
    printf ("# A recorded %zu callback item(s), B %zu\n",
            zlistx_size (xxl_tw_sched_called (a)), zlistx_size (xxl_tw_sched_called (b)));

    //  The preferred scheduler gone: B's run still reaches B
    xxl_tw_sched_destroy (&a);
    xxl_tw_sched_run (b, enc, 4, 1004);
    int64_t more [] = { 1004 };
    s_serve_until (NULL, b, more, 1);
    XXL_CHECK (xxl_tw_sched_callback (b, 1004) != NULL);

    kill (agent, SIGTERM);
    int64_t stop_until = zclock_mono () + 15000;
    int status = 0;
    while (waitpid (agent, &status, WNOHANG) == 0 && zclock_mono () < stop_until)
        xxl_tw_sched_serve (b, 100);
    if (waitpid (agent, &status, WNOHANG) == 0) {
        kill (agent, SIGKILL);
        waitpid (agent, &status, 0);
    }
    xxl_enc_destroy (&enc);
    xxl_tw_sched_destroy (&b);
    zstr_free (&list);
    zstr_free (&log_path);
    return xxl_test_done ();
}
