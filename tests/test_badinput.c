/*  test_badinput.c -- throws malformed traffic at a running scheduler.

    Usage: test_badinput API_ENDPOINT AGENTS_ENDPOINT
    Each bad frame must get a clear error reply where one is possible, and
    the scheduler must still answer PING afterwards on both sockets.
*/

#include "xxl/msg.h"
#include "xxl_test.h"
#include "xxl_testwire.h"

#include <czmq.h>

static zsock_t *
s_connect (const char *endpoint)
{
    return xxl_tw_connect (ZMQ_DEALER, endpoint, 3000, -1);
}

static void
s_ping_ok (zsock_t *sock, const char *type)
{
    xxl_enc_t *enc = xxl_enc_new ();
    xxl_enc_request (enc, type, 4242);
    xxl_msg_t *reply = xxl_tw_call (sock, enc);
    XXL_CHECK (reply != NULL);
    XXL_CHECK (xxl_msg_id (reply) == 4242);
    xxl_msg_destroy (&reply);
    xxl_enc_destroy (&enc);
}

int
main (int argc, char *argv [])
{
    if (argc < 3) {
        fprintf (stderr, "usage: test_badinput API AGENTS\n");
        return 2;
    }
    zsys_init ();
    zsock_t *api = s_connect (argv [1]);
    xxl_enc_t *enc = xxl_enc_new ();
    xxl_msg_t *reply;

    //  Garbage with no readable id: dropped (no reply possible), logged
    const char garbage [] = "\xc1\xc1 not msgpack";
    zmq_send (zsock_resolve (api), garbage, sizeof garbage, 0);

    //  Wrong protocol version: 400 naming the problem, id echoed
    xxl_enc_map_begin (enc);
    xxl_enc_kint (enc, "v", 9);
    xxl_enc_kstr (enc, "t", "PING");
    xxl_enc_kint (enc, "id", 11);
    reply = xxl_tw_call (api, enc);
    XXL_CHECK (xxl_tw_code (reply) == XXL_BAD_REQUEST);
    XXL_CHECK (reply && xxl_msg_id (reply) == 11);
    XXL_CHECK (strstr (xxl_tw_text (reply), "protocol version"));
    xxl_msg_destroy (&reply);

    //  Unknown type
    xxl_enc_request (enc, "FROBNICATE", 12);
    reply = xxl_tw_call (api, enc);
    XXL_CHECK (xxl_tw_code (reply) == XXL_BAD_REQUEST);
    XXL_CHECK (strstr (xxl_tw_text (reply), "unknown message type 'FROBNICATE'"));
    xxl_msg_destroy (&reply);
    //  ... its name shown escaped, a control character unable to end a line
    xxl_enc_request (enc, "FROB\nNICATE", 12);
    reply = xxl_tw_call (api, enc);
    XXL_CHECK (xxl_tw_code (reply) == XXL_BAD_REQUEST);
    XXL_CHECK (strstr (xxl_tw_text (reply), "unknown message type 'FROB\\nNICATE'"));
    xxl_msg_destroy (&reply);

    //  Ill-typed field
    xxl_enc_request (enc, "JOB_SHOW", 13);
    xxl_enc_kstr (enc, "jobId", "seven");
    reply = xxl_tw_call (api, enc);
    XXL_CHECK (xxl_tw_code (reply) == XXL_BAD_REQUEST);
    XXL_CHECK (strstr (xxl_tw_text (reply), "'jobId' must be an integer"));
    xxl_msg_destroy (&reply);

    //  Missing field
    xxl_enc_request (enc, "JOB_TRIGGER", 14);
    reply = xxl_tw_call (api, enc);
    XXL_CHECK (xxl_tw_code (reply) == XXL_BAD_REQUEST);
    XXL_CHECK (strstr (xxl_tw_text (reply), "'jobId' is required"));
    xxl_msg_destroy (&reply);

    //  A job that does not exist
    xxl_enc_request (enc, "JOB_TRIGGER", 15);
    xxl_enc_kint (enc, "jobId", 987654);
    reply = xxl_tw_call (api, enc);
    XXL_CHECK (xxl_tw_code (reply) == XXL_NOT_FOUND);
    XXL_CHECK (strstr (xxl_tw_text (reply), "job 987654 not found"));
    xxl_msg_destroy (&reply);

    //  Oversized string field (2 MiB handler name): refused by the codec
    char *big = (char *) malloc (2 * 1024 * 1024 + 1);
    memset (big, 'x', 2 * 1024 * 1024);
    big [2 * 1024 * 1024] = 0;
    xxl_enc_request (enc, "JOB_ADD", 16);
    xxl_enc_kstr (enc, "executorHandler", big);
    reply = xxl_tw_call (api, enc);
    XXL_CHECK (xxl_tw_code (reply) == XXL_BAD_REQUEST);
    xxl_msg_destroy (&reply);
    free (big);

    //  A frame over the socket's size limit is cut by ZeroMQ itself (the
    //  peer is disconnected); the scheduler keeps serving others
    size_t huge = 6 * 1024 * 1024;
    char *frame = (char *) calloc (1, huge);
    zsock_t *rude = s_connect (argv [1]);
    zmq_send (zsock_resolve (rude), frame, huge, 0);
    free (frame);

    //  Multi-frame message: dropped
    zmq_send (zsock_resolve (api), "a", 1, ZMQ_SNDMORE);
    zmq_send (zsock_resolve (api), "b", 1, 0);

    //  Still serving
    s_ping_ok (api, "PING");

    //  The agents socket: a bad REGISTER gets a clear error
    zsock_t *agent = s_connect (argv [2]);
    xxl_enc_request (enc, "REGISTER", 21);
    xxl_enc_kstr (enc, "registryGroup", "EXECUTOR");
    reply = xxl_tw_call (agent, enc);
    XXL_CHECK (xxl_tw_code (reply) == XXL_BAD_REQUEST);
    XXL_CHECK (strstr (xxl_tw_text (reply), "registryKey"));
    xxl_msg_destroy (&reply);
    //  A callback for a log that does not exist: acknowledged, a no-op
    //  (from a connection that registered: others get 401)
    xxl_tw_enc_register (enc, "REGISTER", 25, "bad-app", "bad-1");
    reply = xxl_tw_call (agent, enc);
    XXL_CHECK (xxl_tw_code (reply) == XXL_OK);
    xxl_msg_destroy (&reply);
    xxl_tw_enc_callback (enc, 22, 99999999, 200, NULL);
    reply = xxl_tw_call (agent, enc);
    XXL_CHECK (xxl_tw_code (reply) == XXL_OK);
    xxl_msg_destroy (&reply);
    //  A callback with an ill-typed item
    xxl_enc_request (enc, "CALLBACK", 23);
    xxl_enc_key (enc, "items");
    xxl_enc_array_begin (enc);
    xxl_enc_str (enc, "not a map");
    xxl_enc_array_end (enc);
    reply = xxl_tw_call (agent, enc);
    XXL_CHECK (xxl_tw_code (reply) == XXL_BAD_REQUEST);
    xxl_msg_destroy (&reply);
    //  A callback whose items are not an array, or missing: 400, and
    //  nothing of it kept (the ASan build's leak check)
    xxl_enc_request (enc, "CALLBACK", 26);
    xxl_enc_kstr (enc, "items", "not an array");
    reply = xxl_tw_call (agent, enc);
    XXL_CHECK (xxl_tw_code (reply) == XXL_BAD_REQUEST);
    xxl_msg_destroy (&reply);
    xxl_enc_request (enc, "CALLBACK", 27);
    reply = xxl_tw_call (agent, enc);
    XXL_CHECK (xxl_tw_code (reply) == XXL_BAD_REQUEST);
    xxl_msg_destroy (&reply);
    //  Unknown type on the agents socket
    xxl_enc_request (enc, "PING", 24);
    reply = xxl_tw_call (agent, enc);
    XXL_CHECK (xxl_tw_code (reply) == XXL_BAD_REQUEST);
    xxl_msg_destroy (&reply);

    //  A reply counts only from the connection its request went to: an
    //  agent registers (its reply carries the scheduler's clock), gets a
    //  RUN, and another connection's forged answer to it changes nothing
    //  while its own is taken
    xxl_enc_request (enc, "GROUP_ADD", 30);
    xxl_enc_kstr (enc, "appname", "bi-app");
    reply = xxl_tw_call (api, enc);
    XXL_CHECK (xxl_tw_code (reply) == XXL_OK);
    xxl_msg_destroy (&reply);
    xxl_enc_request (enc, "JOB_ADD", 31);
    xxl_enc_kstr (enc, "jobGroup", "bi-app");
    xxl_enc_kstr (enc, "executorHandler", "biJobHandler");
    reply = xxl_tw_call (api, enc);
    XXL_CHECK (xxl_tw_code (reply) == XXL_OK);
    int64_t job_id = xxl_tw_content_id (reply);
    xxl_msg_destroy (&reply);
    //  An unknown time zone is refused, shown escaped; the same job with a
    //  zone that exists is made
    xxl_enc_request (enc, "JOB_ADD", 34);
    xxl_enc_kstr (enc, "jobGroup", "bi-app");
    xxl_enc_kstr (enc, "executorHandler", "biJobHandler");
    xxl_enc_kstr (enc, "timezone", "Mars\tBase");
    reply = xxl_tw_call (api, enc);
    XXL_CHECK (xxl_tw_code (reply) == XXL_BAD_REQUEST);
    XXL_CHECK (strstr (xxl_tw_text (reply), "unknown time zone 'Mars\\tBase'"));
    xxl_msg_destroy (&reply);
    xxl_enc_request (enc, "JOB_ADD", 35);
    xxl_enc_kstr (enc, "jobGroup", "bi-app");
    xxl_enc_kstr (enc, "executorHandler", "biJobHandler");
    xxl_enc_kstr (enc, "timezone", "Europe/Paris");
    reply = xxl_tw_call (api, enc);
    XXL_CHECK (xxl_tw_code (reply) == XXL_OK);
    xxl_msg_destroy (&reply);
    zsock_t *member = s_connect (argv [2]);
    xxl_tw_enc_register (enc, "REGISTER", 32, "bi-app", "bi-1");
    reply = xxl_tw_call (member, enc);
    XXL_CHECK (xxl_tw_code (reply) == XXL_OK);
    const msgpack_object *content = xxl_tw_content (reply);
    int64_t now = content? xxl_msg_int (reply, content, "now", 1, 1, INT64_MAX, 0): 0;
    XXL_CHECK (now > 0 && llabs (now - (int64_t) zclock_time ()) < 60000);
    xxl_msg_destroy (&reply);
    xxl_enc_request (enc, "JOB_TRIGGER", 33);
    xxl_enc_kint (enc, "jobId", job_id);
    reply = xxl_tw_call (api, enc);
    XXL_CHECK (xxl_tw_code (reply) == XXL_OK);
    xxl_msg_destroy (&reply);
    xxl_msg_t *run = xxl_tw_recv (member);              //  the RUN
    XXL_CHECK (run != NULL);
    XXL_CHECK (run && streq (xxl_msg_type (run), "RUN"));
    int64_t log_id = run? xxl_msg_int (run, NULL, "logId", 1, 1, INT64_MAX, 0): 0;
    int64_t expire = run? xxl_msg_int (run, NULL, "expireTime", 1, 1, INT64_MAX, 0): 0;
    XXL_CHECK (log_id > 0 && expire > now);
    uint64_t run_id = run? xxl_msg_id (run): 0;
    xxl_msg_destroy (&run);
    zsock_t *forger = s_connect (argv [2]);
    xxl_enc_reply (enc, run_id, 500, "forged refusal");
    xxl_tw_send (forger, enc);
    //  (an answer on the same connection after it: the forgery was read)
    xxl_enc_request (enc, "PING", 36);
    reply = xxl_tw_call (forger, enc);
    XXL_CHECK (xxl_tw_code (reply) == XXL_BAD_REQUEST);
    xxl_msg_destroy (&reply);
    xxl_enc_reply (enc, run_id, XXL_OK, NULL);
    xxl_tw_send (member, enc);
    xxl_tw_enc_callback (enc, 34, log_id, 200, NULL);
    reply = xxl_tw_call (member, enc);
    XXL_CHECK (xxl_tw_code (reply) == XXL_OK);
    xxl_msg_destroy (&reply);
    xxl_enc_request (enc, "LOG_SHOW", 35);
    xxl_enc_kint (enc, "logId", log_id);
    reply = xxl_tw_call (api, enc);
    content = xxl_tw_content (reply);
    XXL_CHECK (content && xxl_msg_int (reply, content, "triggerCode", 1, 0, 999, 0) == XXL_OK);
    XXL_CHECK (content && xxl_msg_int (reply, content, "handleCode", 1, 0, 999, 0) == XXL_OK);
    const char *trigger_msg = content? xxl_msg_str (reply, content, "triggerMsg", 0, 1 << 20, "")
                                     : "";
    XXL_CHECK (trigger_msg && !strstr (trigger_msg, "forged"));
    xxl_msg_destroy (&reply);
    zsock_destroy (&forger);
    zsock_destroy (&member);

    s_ping_ok (api, "PING");
    zsock_destroy (&rude);
    zsock_destroy (&agent);
    zsock_destroy (&api);
    xxl_enc_destroy (&enc);
    return xxl_test_done ();
}
