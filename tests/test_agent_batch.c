/*  test_agent_batch.c -- the agent's side of the batch RUN, against a fake
    scheduler.

    Binds a ROUTER on an ephemeral loopback port, starts the real agent
    (argv: agent binary, handler plugin folder, a temporary log folder),
    and checks what a scheduler relies on: REGISTER says runBatch; a batch
    RUN is answered once with one {code, msg} per item, in order, one bad
    item not touching the others; the accepted runs run and are called
    back; a malformed batch is refused whole and runs nothing.

    expireTime: the fake scheduler's clock is an hour ahead of the agent's
    (the `now` of its REGISTER answers says so); a RUN past its expireTime
    on that clock is answered 500 "expired: ..." for every item (single and
    batch form), runs nothing and is not journaled (the same logId is
    accepted later); once accepted, an expired RUN of that logId is
    answered 200 "already accepted" (a recovering scheduler's question)
    and runs nothing.

    Another run's logId: after the restart, a logId the journal holds is
    sent as the same run (200 "already accepted", also with an earlier
    logDateTime), as another job's or with a later logDateTime (409 "logId
    N already used by another run", per item in a batch, expired or not),
    and as an ask of just the logId (200); only a new logId runs.

    Restart: the agent is SIGKILLed with a GLUE run running (`sleep 30`,
    with a background child) and one queued behind it; the guardian kills
    their processes (found by their XXL_AGENT_RUN marker), the restarted
    agent calls both back 500 "lost: ...", and the same RUNs sent again
    are answered "already accepted" and run nothing.
*/

#include <czmq.h>
#include <signal.h>
#include <sys/wait.h>
#include "xxl/msg.h"
#include "xxl_test.h"
#include "xxl_testwire.h"

static xxl_tw_sched_t *s_sched;         //  the fake scheduler, its clock
#define SKEW_MS     (3600 * 1000)       //  that far ahead of ours

//  One TriggerParam; log_id 0 leaves logId out
static void
s_item (xxl_enc_t *enc, int64_t job_id, int64_t log_id, const char *handler)
{
    xxl_enc_map_begin (enc);
    xxl_tw_enc_bean_fields (enc, job_id, log_id, handler, "batch");
    xxl_enc_map_end (enc);
}

//  One GLUE_SHELL TriggerParam running source
static void
s_glue_item (xxl_enc_t *enc, int64_t job_id, int64_t log_id, const char *source)
{
    xxl_enc_map_begin (enc);
    xxl_tw_enc_glue_fields (enc, job_id, log_id, source);
    xxl_enc_map_end (enc);
}

//  The code of content[i] of a reply (-1 when absent), its msg into text
static int
s_item_code (xxl_msg_t *reply, size_t i, char *text, size_t textlen)
{
    *text = 0;
    const msgpack_object *content = xxl_tw_content (reply);
    if (!content || content->type != MSGPACK_OBJECT_ARRAY || i >= content->via.array.size)
        return -1;
    const msgpack_object *item = &content->via.array.ptr [i];
    const char *m = xxl_msg_str (reply, item, "msg", 0, 4096, "");
    snprintf (text, textlen, "%s", m? m: "");
    return (int) xxl_msg_int (reply, item, "code", 1, 0, 999, -1);
}

//  Whether log_id was called back with code, its handleMsg starting
//  "lost: " or not as lost says
static int
s_called_back (int64_t log_id, int64_t code, int lost)
{
    char prefix [64];
    snprintf (prefix, sizeof prefix, "%" PRId64 ":%" PRId64 ":", log_id, code);
    size_t length = strlen (prefix);
    zlistx_t *called = xxl_tw_sched_called (s_sched);
    for (char *item = (char *) zlistx_first (called); item;
         item = (char *) zlistx_next (called))
        if (strncmp (item, prefix, length) == 0
            && (strncmp (item + length, "lost: ", 6) == 0) == lost)
            return 1;
    return 0;
}

//  Callbacks recorded so far
static size_t
s_called (void)
{
    return zlistx_size (xxl_tw_sched_called (s_sched));
}

static int64_t s_expire = 0;             //  expireTime of the next RUNs (0: none)

//  Sends a batch RUN whose `runs` is written by fill; returns the reply
static xxl_msg_t *
s_batch (uint64_t id, void (*fill) (xxl_enc_t *))
{
    xxl_enc_t *enc = xxl_enc_new ();
    xxl_enc_request (enc, "RUN", id);
    if (s_expire)
        xxl_enc_kint (enc, "expireTime", s_expire);
    xxl_enc_key (enc, "runs");
    fill (enc);
    xxl_tw_sched_send (s_sched, enc);
    xxl_enc_destroy (&enc);
    return xxl_tw_sched_wait (s_sched, "REPLY", id, 10000);
}

static void
s_fill_mixed (xxl_enc_t *enc)
{
    xxl_enc_array_begin (enc);
    s_item (enc, 1, 9001, "demoJobHandler");
    s_item (enc, 1, 9002, "demoJobHandler");
    s_item (enc, 1, 0, "demoJobHandler");          //  no logId
    s_item (enc, 1, 9001, "demoJobHandler");       //  again
    s_item (enc, 2, 9003, "noSuchHandler");
    xxl_enc_array_end (enc);
}

static void
s_fill_two (xxl_enc_t *enc)
{
    xxl_enc_array_begin (enc);
    s_item (enc, 5, 9101, "demoJobHandler");
    s_item (enc, 5, 9102, "demoJobHandler");
    xxl_enc_array_end (enc);
}

//  One logId accepted before (9101), one never seen (9105)
static void
s_fill_asked (xxl_enc_t *enc)
{
    xxl_enc_array_begin (enc);
    s_item (enc, 5, 9101, "demoJobHandler");
    s_item (enc, 5, 9105, "demoJobHandler");
    xxl_enc_array_end (enc);
}

//  Job 6: a run that sleeps (a background child too), one queued behind
//  it; job 7: a quick one
static void
s_fill_restart (xxl_enc_t *enc)
{
    xxl_enc_array_begin (enc);
    s_glue_item (enc, 6, 9201, "sleep 30 & sleep 30; wait");
    s_glue_item (enc, 6, 9202, "true");
    s_item (enc, 7, 9203, "demoJobHandler");
    xxl_enc_array_end (enc);
}

//  A BEAN TriggerParam with its logDateTime given
static void
s_item_at (xxl_enc_t *enc, int64_t job_id, int64_t log_id, int64_t date)
{
    xxl_enc_map_begin (enc);
    xxl_enc_kint (enc, "jobId", job_id);
    xxl_enc_kstr (enc, "executorHandler", "demoJobHandler");
    xxl_enc_kint (enc, "logId", log_id);
    xxl_enc_kint (enc, "logDateTime", date);
    xxl_enc_map_end (enc);
}

//  The journal holds 9203 as job 7's run: sent again as that run (its
//  logDateTime, or an earlier one: the planned instant of a recovering
//  scheduler's re-send), as another job's, as a run triggered later; and
//  a logId never seen
static void
s_fill_other (xxl_enc_t *enc)
{
    int64_t date = xxl_tw_log_date_time (9203);
    xxl_enc_array_begin (enc);
    s_item_at (enc, 7, 9203, date);
    s_item_at (enc, 7, 9203, date - 500);
    s_item_at (enc, 8, 9203, date);
    s_item_at (enc, 7, 9203, date + 60000);
    s_item_at (enc, 7, 9204, date + 60000);
    xxl_enc_array_end (enc);
}

//  A single-form RUN of log_id as job job_id at date, expireTime expire
//  (0: none); returns the reply
static xxl_msg_t *
s_single (uint64_t id, int64_t job_id, int64_t log_id, int64_t date, int64_t expire)
{
    xxl_enc_t *enc = xxl_enc_new ();
    xxl_enc_request (enc, "RUN", id);
    if (expire)
        xxl_enc_kint (enc, "expireTime", expire);
    xxl_enc_kint (enc, "jobId", job_id);
    xxl_enc_kstr (enc, "executorHandler", "demoJobHandler");
    xxl_enc_kint (enc, "logId", log_id);
    xxl_enc_kint (enc, "logDateTime", date);
    xxl_tw_sched_send (s_sched, enc);
    xxl_enc_destroy (&enc);
    return xxl_tw_sched_wait (s_sched, "REPLY", id, 10000);
}

//  Waits up to ms for cond (polled every 100 ms, serving the agent)
static int
s_until (int (*cond) (void), int ms)
{
    int64_t until = zclock_mono () + ms;
    while (!cond () && zclock_mono () < until)
        xxl_tw_sched_serve (s_sched, 100);
    return cond ();
}

static int s_sleeper_runs (void) { return xxl_tw_marked (9201) >= 2; }
static int s_sleeper_gone (void) { return xxl_tw_marked (9201) == 0; }
static int
s_lost_back (void)
{
    return s_called_back (9201, 500, 1) && s_called_back (9202, 500, 1);
}

static pid_t
s_start_agent (char *argv [], const char *endpoint)
{
    pid_t agent = fork ();
    if (agent == 0) {
        execl (argv [1], argv [1], "--app", "batch-app", "--scheduler", endpoint,
               "--address", "b1", "--plugins", argv [2], "--logdir", argv [3], (char *) NULL);
        _exit (127);
    }
    return agent;
}

static void s_fill_string (xxl_enc_t *enc) { xxl_enc_str (enc, "not a list"); }
static void s_fill_empty (xxl_enc_t *enc) { xxl_enc_array_begin (enc); xxl_enc_array_end (enc); }
static void
s_fill_too_many (xxl_enc_t *enc)
{
    xxl_enc_array_begin (enc);
    for (int i = 0; i <= XXL_RUN_BATCH_MAX; i++)
        s_item (enc, 3, 20000 + i, "demoJobHandler");
    xxl_enc_array_end (enc);
}

//  A reply refused whole: code 400 and no content
static int
s_refused (xxl_msg_t *reply)
{
    return xxl_tw_code (reply) == XXL_BAD_REQUEST && !xxl_tw_content (reply);
}

int
main (int argc, char *argv [])
{
    if (argc < 4) {
        fprintf (stderr, "usage: test_agent_batch AGENT PLUGINS LOGDIR\n");
        return 2;
    }
    zsys_init ();
    s_sched = xxl_tw_sched_new (SKEW_MS);
    assert (s_sched);
    const char *endpoint = xxl_tw_sched_endpoint (s_sched);
    pid_t agent = s_start_agent (argv, endpoint);
    xxl_msg_t *reg = xxl_tw_sched_wait (s_sched, "REGISTER", 0, 15000);
    XXL_CHECK (reg != NULL);
    XXL_CHECK (reg && xxl_msg_int (reg, NULL, "runBatch", 1, 0, INT32_MAX, 0)
                      == XXL_RUN_BATCH_MAX);
    xxl_msg_destroy (&reg);

    //  Mixed items: each judged on its own, in order
    xxl_msg_t *reply = s_batch (77, s_fill_mixed);
    XXL_CHECK (reply != NULL);
    if (reply) {
        char text [4096];
        XXL_CHECK (xxl_tw_code (reply) == XXL_OK);
        XXL_CHECK (s_item_code (reply, 0, text, sizeof text) == XXL_OK && !*text);
        XXL_CHECK (s_item_code (reply, 1, text, sizeof text) == XXL_OK && !*text);
        XXL_CHECK (s_item_code (reply, 2, text, sizeof text) == XXL_BAD_REQUEST
                   && strstr (text, "logId"));
        XXL_CHECK (s_item_code (reply, 3, text, sizeof text) == XXL_OK
                   && strstr (text, "already accepted"));
        XXL_CHECK (s_item_code (reply, 4, text, sizeof text) == XXL_FAILURE && *text);
        XXL_CHECK (s_item_code (reply, 5, text, sizeof text) == -1);
    }
    xxl_msg_destroy (&reply);
    //  The two accepted runs end and are called back; nothing else
    int64_t until = zclock_mono () + 15000;
    while (!(s_called_back (9001, 200, 0) && s_called_back (9002, 200, 0))
           && zclock_mono () < until)
        xxl_tw_sched_serve (s_sched, 200);
    XXL_CHECK (s_called_back (9001, 200, 0));
    XXL_CHECK (s_called_back (9002, 200, 0));
    XXL_CHECK (s_called () == 2);

    //  Malformed batches: refused whole, nothing runs
    reply = s_batch (78, s_fill_string);
    XXL_CHECK (s_refused (reply));
    xxl_msg_destroy (&reply);
    reply = s_batch (79, s_fill_empty);
    XXL_CHECK (s_refused (reply));
    xxl_msg_destroy (&reply);
    reply = s_batch (80, s_fill_too_many);
    XXL_CHECK (s_refused (reply));
    xxl_msg_destroy (&reply);
    xxl_tw_sched_serve (s_sched, 1500);
    XXL_CHECK (s_called () == 2);

    //  expireTime passed on the scheduler's clock: every item expired (5 s
    //  past: the agent's estimate of that clock lags it by the delivery of
    //  a REGISTER answer, milliseconds on a loaded machine)
    char text [4096];
    s_expire = xxl_tw_sched_now (s_sched) - 5000;
    reply = s_batch (81, s_fill_two);
    XXL_CHECK (xxl_tw_code (reply) == XXL_OK);
    XXL_CHECK (s_item_code (reply, 0, text, sizeof text) == XXL_FAILURE
               && strncmp (text, "expired: ", 9) == 0);
    XXL_CHECK (s_item_code (reply, 1, text, sizeof text) == XXL_FAILURE
               && strncmp (text, "expired: ", 9) == 0);
    xxl_msg_destroy (&reply);
    //  In the future on the agent's clock, past on the scheduler's, which
    //  the agent learnt from the `now` of its REGISTER answers
    s_expire = zclock_time () + 60000;
    reply = s_batch (82, s_fill_two);
    XXL_CHECK (s_item_code (reply, 0, text, sizeof text) == XXL_FAILURE
               && strncmp (text, "expired: ", 9) == 0);
    xxl_msg_destroy (&reply);
    //  The single form
    xxl_enc_t *enc = xxl_enc_new ();
    xxl_enc_request (enc, "RUN", 83);
    xxl_enc_kint (enc, "expireTime", xxl_tw_sched_now (s_sched) - 1000);
    xxl_enc_kint (enc, "jobId", 5);
    xxl_enc_kstr (enc, "executorHandler", "demoJobHandler");
    xxl_enc_kint (enc, "logId", 9104);
    xxl_enc_kint (enc, "logDateTime", zclock_time ());
    xxl_tw_sched_send (s_sched, enc);
    xxl_enc_destroy (&enc);
    reply = xxl_tw_sched_wait (s_sched, "REPLY", 83, 10000);
    XXL_CHECK (xxl_tw_code (reply) == XXL_FAILURE);
    XXL_CHECK (strncmp (xxl_tw_text (reply), "expired: ", 9) == 0);
    xxl_msg_destroy (&reply);
    //  Nothing ran, nothing was journaled: the same logIds, in time now,
    //  are accepted and run
    xxl_tw_sched_serve (s_sched, 500);
    XXL_CHECK (s_called () == 2);
    s_expire = xxl_tw_sched_now (s_sched) + 60000;
    reply = s_batch (84, s_fill_two);
    XXL_CHECK (s_item_code (reply, 0, text, sizeof text) == XXL_OK && !*text);
    XXL_CHECK (s_item_code (reply, 1, text, sizeof text) == XXL_OK && !*text);
    xxl_msg_destroy (&reply);
    until = zclock_mono () + 15000;
    while (!(s_called_back (9101, 200, 0) && s_called_back (9102, 200, 0))
           && zclock_mono () < until)
        xxl_tw_sched_serve (s_sched, 200);
    XXL_CHECK (s_called_back (9101, 200, 0) && s_called_back (9102, 200, 0));
    //  Expired again, now that the agent accepted them before (a recovering
    //  scheduler asks so): 200 "already accepted" for those, the expiry
    //  for one it never had; nothing runs
    size_t before_ask = s_called ();
    s_expire = xxl_tw_sched_now (s_sched) - 10000;
    reply = s_batch (87, s_fill_asked);
    XXL_CHECK (xxl_tw_code (reply) == XXL_OK);
    XXL_CHECK (s_item_code (reply, 0, text, sizeof text) == XXL_OK
               && strstr (text, "already accepted"));
    XXL_CHECK (s_item_code (reply, 1, text, sizeof text) == XXL_FAILURE
               && strncmp (text, "expired: ", 9) == 0);
    xxl_msg_destroy (&reply);
    enc = xxl_enc_new ();
    xxl_enc_request (enc, "RUN", 88);
    xxl_enc_kint (enc, "expireTime", xxl_tw_sched_now (s_sched) - 10000);
    xxl_enc_kint (enc, "jobId", 5);
    xxl_enc_kstr (enc, "executorHandler", "demoJobHandler");
    xxl_enc_kint (enc, "logId", 9102);
    xxl_enc_kint (enc, "logDateTime", xxl_tw_log_date_time (9102));
    xxl_tw_sched_send (s_sched, enc);
    xxl_enc_destroy (&enc);
    reply = xxl_tw_sched_wait (s_sched, "REPLY", 88, 10000);
    XXL_CHECK (xxl_tw_code (reply) == XXL_OK);
    XXL_CHECK (reply && strstr (xxl_tw_text (reply), "already accepted"));
    xxl_msg_destroy (&reply);
    xxl_tw_sched_serve (s_sched, 1000);
    XXL_CHECK (s_called () == before_ask);
    s_expire = 0;

    //  Restart: SIGKILL with a run running and one queued; the guardian
    //  ends the running one's processes; the new life reports both lost
    reply = s_batch (85, s_fill_restart);
    XXL_CHECK (s_item_code (reply, 0, text, sizeof text) == XXL_OK && !*text);
    XXL_CHECK (s_item_code (reply, 1, text, sizeof text) == XXL_OK && !*text);
    XXL_CHECK (s_item_code (reply, 2, text, sizeof text) == XXL_OK && !*text);
    xxl_msg_destroy (&reply);
    XXL_CHECK (s_until (s_sleeper_runs, 10000));
    until = zclock_mono () + 10000;
    while (!s_called_back (9203, 200, 0) && zclock_mono () < until)
        xxl_tw_sched_serve (s_sched, 200);
    XXL_CHECK (s_called_back (9203, 200, 0));
    kill (agent, SIGKILL);
    int status = 0;
    waitpid (agent, &status, 0);
    XXL_CHECK (s_until (s_sleeper_gone, 5000));
    size_t called = s_called ();
    agent = s_start_agent (argv, endpoint);
    XXL_CHECK (s_until (s_lost_back, 15000));
    //  Sent again (a scheduler's recovery): accepted already, nothing runs
    reply = s_batch (86, s_fill_restart);
    for (size_t i = 0; i < 3; i++)
        XXL_CHECK (s_item_code (reply, i, text, sizeof text) == XXL_OK
                   && strstr (text, "already accepted"));
    xxl_msg_destroy (&reply);
    xxl_tw_sched_serve (s_sched, 1500);
    XXL_CHECK (xxl_tw_marked (9201) == 0);
    XXL_CHECK (!s_called_back (9201, 200, 0) && !s_called_back (9202, 200, 0));
    //  Only the two lost ones came back (and 9203 perhaps again, if its
    //  ack was lost)
    XXL_CHECK (s_called () <= called + 3);

    //  A logId the journal (replayed at the restart) holds for another
    //  run: refused 409, item by item, expired or not; nothing of it runs
    size_t before_other = s_called ();
    reply = s_batch (89, s_fill_other);
    XXL_CHECK (xxl_tw_code (reply) == XXL_OK);
    XXL_CHECK (s_item_code (reply, 0, text, sizeof text) == XXL_OK
               && strstr (text, "already accepted"));
    XXL_CHECK (s_item_code (reply, 1, text, sizeof text) == XXL_OK
               && strstr (text, "already accepted"));
    XXL_CHECK (s_item_code (reply, 2, text, sizeof text) == XXL_CONFLICT
               && streq (text, "logId 9203 already used by another run"));
    XXL_CHECK (s_item_code (reply, 3, text, sizeof text) == XXL_CONFLICT
               && streq (text, "logId 9203 already used by another run"));
    XXL_CHECK (s_item_code (reply, 4, text, sizeof text) == XXL_OK && !*text);
    xxl_msg_destroy (&reply);
    int64_t date = xxl_tw_log_date_time (9101);
    reply = s_single (90, 5, 9101, date + 1, 0);
    XXL_CHECK (xxl_tw_code (reply) == XXL_CONFLICT
               && streq (xxl_tw_text (reply), "logId 9101 already used by another run"));
    xxl_msg_destroy (&reply);
    reply = s_single (91, 5, 9101, date, 0);
    XXL_CHECK (xxl_tw_code (reply) == XXL_OK && strstr (xxl_tw_text (reply), "already accepted"));
    xxl_msg_destroy (&reply);
    reply = s_single (92, 4, 9101, date, xxl_tw_sched_now (s_sched) - 10000);
    XXL_CHECK (xxl_tw_code (reply) == XXL_CONFLICT
               && streq (xxl_tw_text (reply), "logId 9101 already used by another run"));
    xxl_msg_destroy (&reply);
    //  (an ask of just the logId does not say which run: the run is its)
    enc = xxl_enc_new ();
    xxl_enc_request (enc, "RUN", 93);
    xxl_enc_kint (enc, "expireTime", 1);
    xxl_enc_kint (enc, "logId", 9101);
    xxl_tw_sched_send (s_sched, enc);
    xxl_enc_destroy (&enc);
    reply = xxl_tw_sched_wait (s_sched, "REPLY", 93, 10000);
    XXL_CHECK (xxl_tw_code (reply) == XXL_OK && strstr (xxl_tw_text (reply), "already accepted"));
    xxl_msg_destroy (&reply);
    until = zclock_mono () + 10000;
    while (!s_called_back (9204, 200, 0) && zclock_mono () < until)
        xxl_tw_sched_serve (s_sched, 200);
    XXL_CHECK (s_called_back (9204, 200, 0));
    xxl_tw_sched_serve (s_sched, 1000);
    XXL_CHECK (s_called () == before_other + 1);

    kill (agent, SIGTERM);
    waitpid (agent, &status, 0);
    XXL_CHECK (WIFEXITED (status) && WEXITSTATUS (status) == 0);
    xxl_tw_sched_destroy (&s_sched);
    return xxl_test_done ();
}
