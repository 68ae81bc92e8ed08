/*  test_contract.c -- what docs/protocol.md promises a client, on the wire.

    Usage: test_contract wire API AGENTS
           test_contract burst AGENTS COUNT APPS
           test_contract flood API COUNT LIMIT
           test_contract big API
    `wire` speaks raw frames to a running scheduler: a REQ client, malformed
    frames that carry an id, ranges and types the doc states, the codes of
    everyday refusals.  `burst` registers COUNT addresses spread over APPS
    app names `burst-0` … from one connection, then checks that a PING on
    another connection is still answered (the burst must not stall the
    scheduler); the shell test then compares the groups' address lists.
    `flood` asks for big replies and never reads them; `big` asks for a
    reply over the frame limit.
*/

#include "xxl/msg.h"
#include "xxl_test.h"
#include "xxl_testwire.h"

#include <czmq.h>

static zsock_t *
s_connect (int type, const char *endpoint)
{
    return xxl_tw_connect (type, endpoint, 5000, 5000);
}

//  One request whose reply must have this code (and id); returns it
static xxl_msg_t *
s_expect (zsock_t *sock, xxl_enc_t *enc, uint64_t id, int code, const char *what)
{
    xxl_msg_t *reply = xxl_tw_call (sock, enc);
    if (xxl_tw_code (reply) != code || !reply || xxl_msg_id (reply) != id)
        fprintf (stderr, "  %s: got code %d id %llu msg '%s', wanted %d\n", what,
                 xxl_tw_code (reply), reply? (unsigned long long) xxl_msg_id (reply): 0ULL,
                 xxl_tw_text (reply), code);
    XXL_CHECK (xxl_tw_code (reply) == code);
    XXL_CHECK (reply && xxl_msg_id (reply) == id);
    return reply;
}

static void
s_expect_free (zsock_t *sock, xxl_enc_t *enc, uint64_t id, int code, const char *what)
{
    xxl_msg_t *reply = s_expect (sock, enc, id, code, what);
    xxl_msg_destroy (&reply);
}

//  A PING map of `pairs` pairs: v, t, id (uint16), then `tail` (the rest
//  of the pairs, or anything); the frame must be answered 400 with this
//  id and a "malformed message" reason
static void
s_malformed (zsock_t *api, uint16_t id, uint8_t pairs, const void *tail, size_t tail_size,
             const char *what)
{
    byte frame [300000];
    size_t at = 0;
    frame [at++] = 0x80 | pairs;
    static const char head [] = "\xa1v\x01\xa1t\xa4PING\xa2id\xcd";
    memcpy (frame + at, head, sizeof head - 1);
    at += sizeof head - 1;
    frame [at++] = (byte) (id >> 8);
    frame [at++] = (byte) id;
    assert (at + tail_size <= sizeof frame);
    memcpy (frame + at, tail, tail_size);
    at += tail_size;
    xxl_msg_t *reply = xxl_tw_exchange (api, frame, at);
    if (xxl_tw_code (reply) != XXL_BAD_REQUEST || !strstr (xxl_tw_text (reply), "malformed"))
        fprintf (stderr, "  %s: got code %d msg '%s'\n", what, xxl_tw_code (reply),
                 xxl_tw_text (reply));
    XXL_CHECK (xxl_tw_code (reply) == XXL_BAD_REQUEST);
    XXL_CHECK (reply && xxl_msg_id (reply) == id);
    XXL_CHECK (strstr (xxl_tw_text (reply), "malformed message"));
    xxl_msg_destroy (&reply);
}

static void
s_wire (const char *api_ep, const char *agents_ep)
{
    zsock_t *api = s_connect (ZMQ_DEALER, api_ep);
    xxl_enc_t *enc = xxl_enc_new ();
    xxl_msg_t *reply;

    //  A REQ client: its delimiter frame is taken and given back
    zsock_t *req = s_connect (ZMQ_REQ, api_ep);
    for (uint64_t id = 101; id <= 103; id++) {
        xxl_enc_request (enc, "PING", id);
        reply = xxl_tw_call (req, enc);
        XXL_CHECK (xxl_tw_code (reply) == XXL_OK);
        XXL_CHECK (reply && xxl_msg_id (reply) == id);
        xxl_msg_destroy (&reply);
    }
    //  …also for a reply the store's commit decides (a write)
    xxl_enc_request (enc, "GROUP_ADD", 104);
    xxl_enc_kstr (enc, "appname", "req-app");
    reply = xxl_tw_call (req, enc);
    XXL_CHECK (xxl_tw_code (reply) == XXL_OK);
    xxl_msg_destroy (&reply);
    zsock_destroy (&req);

    //  A job to work on
    xxl_enc_request (enc, "JOB_ADD", 110);
    xxl_enc_kstr (enc, "jobGroup", "req-app");
    xxl_enc_kstr (enc, "executorHandler", "demoJobHandler");
    xxl_enc_kstr (enc, "scheduleType", "CRON");
    xxl_enc_kstr (enc, "scheduleConf", "0 0 3 * * ?");
    xxl_enc_key (enc, "retryBackoff");
    xxl_enc_double (enc, 2.5);
    reply = s_expect (api, enc, 110, XXL_OK, "JOB_ADD");
    int64_t job = xxl_tw_content_id (reply);
    xxl_msg_destroy (&reply);
    XXL_CHECK (job > 0);

    //  retryBackoff is a number on the way out too
    xxl_enc_request (enc, "JOB_SHOW", 111);
    xxl_enc_kint (enc, "jobId", job);
    reply = s_expect (api, enc, 111, XXL_OK, "JOB_SHOW");
    const msgpack_object *backoff = xxl_msg_get (xxl_tw_content (reply), "retryBackoff");
    XXL_CHECK (backoff && backoff->type == MSGPACK_OBJECT_FLOAT64
               && backoff->via.f64 == 2.5);
    xxl_msg_destroy (&reply);

    //  JOB_NEXT count: 1–100, an integer
    int64_t counts [] = { 0, -1, 101 };
    for (int i = 0; i < 3; i++) {
        xxl_enc_request (enc, "JOB_NEXT", 120 + i);
        xxl_enc_kint (enc, "jobId", job);
        xxl_enc_kint (enc, "count", counts [i]);
        reply = s_expect (api, enc, 120 + i, XXL_BAD_REQUEST, "JOB_NEXT count out of range");
        XXL_CHECK (strstr (xxl_tw_text (reply), "count"));
        xxl_msg_destroy (&reply);
    }
    xxl_enc_request (enc, "JOB_NEXT", 123);
    xxl_enc_kint (enc, "jobId", job);
    xxl_enc_kstr (enc, "count", "3");
    s_expect_free (api, enc, 123, XXL_BAD_REQUEST, "JOB_NEXT count a string");
    xxl_enc_request (enc, "JOB_NEXT", 124);
    xxl_enc_kint (enc, "jobId", job);
    xxl_enc_kbool (enc, "count", 1);
    s_expect_free (api, enc, 124, XXL_BAD_REQUEST, "JOB_NEXT count a bool");
    //  …and the allowed ones
    int64_t allowed [] = { 1, 100 };
    for (int i = 0; i < 2; i++) {
        xxl_enc_request (enc, "JOB_NEXT", 125 + i);
        xxl_enc_kint (enc, "jobId", job);
        xxl_enc_kint (enc, "count", allowed [i]);
        reply = s_expect (api, enc, 125 + i, XXL_OK, "JOB_NEXT count in range");
        size_t count = 0;
        const msgpack_object *content = xxl_tw_content (reply);
        xxl_msg_array (reply, content, "next", 1, 1000, &count);
        XXL_CHECK (count == (size_t) allowed [i]);
        xxl_msg_destroy (&reply);
    }

    //  JOB_UPDATE naming a group that does not exist: 404, as JOB_ADD
    xxl_enc_request (enc, "JOB_UPDATE", 130);
    xxl_enc_kint (enc, "jobId", job);
    xxl_enc_kstr (enc, "jobGroup", "no-such-app");
    reply = s_expect (api, enc, 130, XXL_NOT_FOUND, "JOB_UPDATE unknown group");
    XXL_CHECK (strstr (xxl_tw_text (reply), "group 'no-such-app' not found"));
    xxl_msg_destroy (&reply);
    xxl_enc_request (enc, "JOB_ADD", 131);
    xxl_enc_kstr (enc, "jobGroup", "no-such-app");
    xxl_enc_kstr (enc, "executorHandler", "demoJobHandler");
    s_expect_free (api, enc, 131, XXL_NOT_FOUND, "JOB_ADD unknown group");
    //  …an existing one moves it
    xxl_enc_request (enc, "JOB_UPDATE", 132);
    xxl_enc_kint (enc, "jobId", job);
    xxl_enc_kstr (enc, "jobGroup", "req-app");
    s_expect_free (api, enc, 132, XXL_OK, "JOB_UPDATE known group");

    //  LOG_KILL of a run whose trigger failed (no agent in its group): 409
    xxl_enc_request (enc, "JOB_TRIGGER", 140);
    xxl_enc_kint (enc, "jobId", job);
    reply = s_expect (api, enc, 140, XXL_OK, "JOB_TRIGGER");
    size_t ids = 0;
    const msgpack_object *log_ids = xxl_msg_array (reply, xxl_tw_content (reply), "logIds", 1, 10,
                                                   &ids);
    int64_t log = ids == 1 && log_ids [0].type == MSGPACK_OBJECT_POSITIVE_INTEGER
                ? (int64_t) log_ids [0].via.u64: 0;
    xxl_msg_destroy (&reply);
    XXL_CHECK (log > 0);
    int64_t trigger_code = 0;
    for (int i = 0; i < 100 && trigger_code == 0; i++) {
        xxl_enc_request (enc, "LOG_SHOW", 141);
        xxl_enc_kint (enc, "logId", log);
        reply = s_expect (api, enc, 141, XXL_OK, "LOG_SHOW");
        trigger_code = xxl_tw_content (reply)
                     ? xxl_msg_int (reply, xxl_tw_content (reply), "triggerCode", 1, 0, 999, 0): 0;
        xxl_msg_destroy (&reply);
        if (trigger_code == 0)
            zclock_sleep (50);
    }
    XXL_CHECK (trigger_code == XXL_FAILURE);
    xxl_enc_request (enc, "LOG_KILL", 142);
    xxl_enc_kint (enc, "logId", log);
    reply = s_expect (api, enc, 142, XXL_CONFLICT, "LOG_KILL of a failed trigger");
    XXL_CHECK (strstr (xxl_tw_text (reply), "not running"));
    xxl_msg_destroy (&reply);
    xxl_enc_request (enc, "LOG_KILL", 143);
    xxl_enc_kint (enc, "logId", 987654321);
    s_expect_free (api, enc, 143, XXL_NOT_FOUND, "LOG_KILL of no log");

    //  An agent's REGISTER with control characters in its names: 400, and
    //  nothing of it reaches the log as a line of its own (the shell test
    //  reads the log); the same REGISTER with a plain address is taken
    zsock_t *agent = s_connect (ZMQ_DEALER, agents_ep);
    xxl_tw_enc_register (enc, "REGISTER", 150, "req-app", "evil\r\nFORGED LOG LINE");
    reply = s_expect (agent, enc, 150, XXL_BAD_REQUEST, "REGISTER with CR LF");
    XXL_CHECK (strstr (xxl_tw_text (reply), "control characters"));
    xxl_msg_destroy (&reply);
    xxl_tw_enc_register (enc, "REGISTER", 151, "req-app", "plain-1");
    s_expect_free (agent, enc, 151, XXL_OK, "REGISTER plain");
    //  Unicode's line breaks (U+2028, U+2029 and NEXT LINE, U+0085) are
    //  taken in names, and the log shows them escaped (the shell test
    //  reads it)
    xxl_tw_enc_register (enc, "REGISTER", 152, "uni\xe2\x80\xa8" "app",
                         "ok\xe2\x80\xa8x\xc2\x85y\xe2\x80\xa9z");
    s_expect_free (agent, enc, 152, XXL_OK, "REGISTER with U+2028, U+0085, U+2029");
    zsock_destroy (&agent);

    //  Malformed frames whose id can be read get 400 with that id
    s_malformed (api, 201, 3, "\x00", 1, "trailing bytes");
    s_malformed (api, 202, 4, "\xa1x\xc1", 3, "the reserved byte 0xc1");
    s_malformed (api, 203, 4, "\xa1x\xd4\x01\x00", 5, "an ext value");
    s_malformed (api, 204, 4, "\x01\x01", 2, "an integer key");
    s_malformed (api, 205, 4, "\xa1x\xa9truncated", 10, "a truncated string");
    s_malformed (api, 206, 4, "\xa1x\x91\x91\x91\x91\x91\x91\x91\x91\x91\x01", 12,
                 "9 levels of nesting");
    byte key [67] = { 0xd9, 65 };
    memset (key + 2, 'k', 65);
    s_malformed (api, 207, 4, key, 67, "a 65-byte key");
    static byte many [262150 + 8];
    size_t at = 0;
    memcpy (many, "\xa1x\xdd", 3);
    at = 3;
    uint32_t items = 262150;
    many [at++] = (byte) (items >> 24);
    many [at++] = (byte) (items >> 16);
    many [at++] = (byte) (items >> 8);
    many [at++] = (byte) items;
    memset (many + at, 0xc0, items);
    s_malformed (api, 208, 4, many, at + items, "more than 262,144 objects");
    //  …and the same frame with a good fourth pair is answered 200
    xxl_msg_t *good = NULL;
    {
        static const char frame [] = "\x84\xa1v\x01\xa1t\xa4PING\xa2id\xcd\x00\xd1\xa1x\x01";
        good = xxl_tw_exchange (api, frame, sizeof frame - 1);
    }
    XXL_CHECK (xxl_tw_code (good) == XXL_OK && good && xxl_msg_id (good) == 209);
    xxl_msg_destroy (&good);

    //  UTF-8: an invalid title is refused; an invalid app name is refused
    //  (not echoed raw); every string that comes back decodes as UTF-8
    xxl_enc_request (enc, "GROUP_ADD", 210);
    xxl_enc_kstr (enc, "appname", "utf-app");
    //  (raw bytes: the encoder itself would mend them)
    xxl_enc_key (enc, "title");
    xxl_enc_raw (enc, "\xaa" "bad \xff\xfe titl", 11, 0);
    reply = s_expect (api, enc, 210, XXL_BAD_REQUEST, "GROUP_ADD with a bad title");
    XXL_CHECK (strstr (xxl_tw_text (reply), "'title' is not valid UTF-8"));
    xxl_msg_destroy (&reply);
    xxl_enc_request (enc, "GROUP_SHOW", 211);
    xxl_enc_key (enc, "group");
    xxl_enc_raw (enc, "\xa5" "bad\xc3(", 6, 0);
    reply = s_expect (api, enc, 211, XXL_BAD_REQUEST, "GROUP_SHOW of a bad name");
    XXL_CHECK (strstr (xxl_tw_text (reply), "not valid UTF-8"));
    XXL_CHECK (!strstr (xxl_tw_text (reply), "\xc3("));
    xxl_msg_destroy (&reply);
    xxl_enc_request (enc, "GROUP_ADD", 212);
    xxl_enc_kstr (enc, "appname", "utf-app");
    xxl_enc_kstr (enc, "title", "gut \xc3\xa9t\xc3\xa9 \xe4\xb8\xad");
    s_expect_free (api, enc, 212, XXL_OK, "GROUP_ADD with a UTF-8 title");

    //  A client that sends 5,000 requests before it reads: every reply
    //  comes, in order (ZeroMQ's queue takes 1,000, the api socket's
    //  SNDHWM; the scheduler keeps the rest and sends them as it reads)
    zsock_t *eager = s_connect (ZMQ_DEALER, api_ep);
    zsock_set_sndhwm (eager, 0);
    for (uint64_t id = 1; id <= 5000; id++) {
        xxl_enc_request (enc, "PING", 100000 + id);
        xxl_tw_send (eager, enc);
    }
    uint64_t in_order = 0;
    for (uint64_t id = 1; id <= 5000; id++) {
        xxl_msg_t *pong = xxl_tw_recv (eager);
        if (!pong)
            break;
        in_order += xxl_msg_id (pong) == 100000 + id && xxl_tw_code (pong) == XXL_OK;
        xxl_msg_destroy (&pong);
    }
    XXL_CHECK (in_order == 5000);
    zsock_destroy (&eager);

    xxl_enc_request (enc, "PING", 199);
    s_expect_free (api, enc, 199, XXL_OK, "PING at the end");
    zsock_destroy (&api);
    xxl_enc_destroy (&enc);
}

static zsock_t *
s_agent (const char *agents_ep, xxl_enc_t *enc, const char *app, const char *address,
         uint64_t id)
{
    zsock_t *agent = s_connect (ZMQ_DEALER, agents_ep);
    xxl_tw_enc_register (enc, "REGISTER", id, app, address);
    s_expect_free (agent, enc, id, XXL_OK, "REGISTER");
    return agent;
}

//  A JOB_TRIGGER of job to address (200), and the RUN the agent got (NULL
//  none within 5 s), its logId in *log_id (0 none)
static xxl_msg_t *
s_trigger_to (zsock_t *api, zsock_t *agent, xxl_enc_t *enc, uint64_t id, int64_t job,
              const char *address, int64_t *log_id)
{
    xxl_enc_request (enc, "JOB_TRIGGER", id);
    xxl_enc_kint (enc, "jobId", job);
    xxl_enc_kstr (enc, "address", address);
    s_expect_free (api, enc, id, XXL_OK, "JOB_TRIGGER to an address");
    xxl_msg_t *run = xxl_tw_recv_within (agent, 5000);
    *log_id = run? xxl_msg_int (run, NULL, "logId", 1, 1, INT64_MAX, 0): 0;
    return run;
}

//  What a stranger's client and agent found: ids from 1, address lists in
//  their users' order, strict values, results only from registered agents
static void
s_wire2 (const char *api_ep, const char *agents_ep)
{
    zsock_t *api = s_connect (ZMQ_DEALER, api_ep);
    xxl_enc_t *enc = xxl_enc_new ();
    xxl_msg_t *reply;

    //  id 0 is no id: no reply; the same PING with id 1 is answered
    xxl_enc_request (enc, "PING", 0);
    zsock_set_rcvtimeo (api, 1000);
    reply = xxl_tw_call (api, enc);
    XXL_CHECK (reply == NULL);
    xxl_msg_destroy (&reply);
    zsock_set_rcvtimeo (api, 5000);
    xxl_enc_request (enc, "PING", 1);
    s_expect_free (api, enc, 1, XXL_OK, "PING id 1");

    //  An all-digit app name is refused (G "99999" names group 99999)
    xxl_enc_request (enc, "GROUP_ADD", 300);
    xxl_enc_kstr (enc, "appname", "99999");
    reply = s_expect (api, enc, 300, XXL_BAD_REQUEST, "GROUP_ADD all digits");
    XXL_CHECK (strstr (xxl_tw_text (reply), "all digits"));
    xxl_msg_destroy (&reply);
    xxl_enc_request (enc, "GROUP_ADD", 301);
    xxl_enc_kstr (enc, "appname", "order-app");
    s_expect_free (api, enc, 301, XXL_OK, "GROUP_ADD order-app");

    //  Address lists keep their order: FIRST takes the first given
    zsock_t *s1 = s_agent (agents_ep, enc, "order-app", "s1", 302);
    zsock_t *s2 = s_agent (agents_ep, enc, "order-app", "s2", 303);
    xxl_enc_request (enc, "JOB_ADD", 304);
    xxl_enc_kstr (enc, "jobGroup", "order-app");
    xxl_enc_kstr (enc, "executorHandler", "h");
    reply = s_expect (api, enc, 304, XXL_OK, "JOB_ADD FIRST");
    int64_t job = xxl_tw_content_id (reply);
    xxl_msg_destroy (&reply);
    xxl_enc_request (enc, "JOB_TRIGGER", 305);
    xxl_enc_kint (enc, "jobId", job);
    xxl_enc_kstr (enc, "address", "s2, s1");
    s_expect_free (api, enc, 305, XXL_OK, "JOB_TRIGGER address s2,s1");
    xxl_msg_t *run = xxl_tw_recv_within (s2, 5000);
    XXL_CHECK (run && streq (xxl_msg_type (run), "RUN"));
    xxl_msg_destroy (&run);
    //  …a manual group's list too, as given (trimmed, each once)
    xxl_enc_request (enc, "GROUP_ADD", 306);
    xxl_enc_kstr (enc, "appname", "manual-app");
    xxl_enc_kint (enc, "addressType", 1);
    xxl_enc_kstr (enc, "addressList", "b:1, a:1 ,c:1,a:1");
    s_expect_free (api, enc, 306, XXL_OK, "GROUP_ADD manual");
    xxl_enc_request (enc, "GROUP_SHOW", 307);
    xxl_enc_kstr (enc, "group", "manual-app");
    reply = s_expect (api, enc, 307, XXL_OK, "GROUP_SHOW manual");
    const char *list = xxl_tw_content (reply)
                     ? xxl_msg_str (reply, xxl_tw_content (reply), "addressList", 0, 4096, ""): "";
    XXL_CHECK (streq (list, "b:1,a:1,c:1"));
    xxl_msg_destroy (&reply);

    //  Address values: none, empty, over 255 bytes: 400
    const char *bad [] = { "", ",,", NULL };
    char long_address [300];
    memset (long_address, 'x', 256);
    long_address [256] = 0;
    bad [2] = long_address;
    for (int i = 0; i < 3; i++) {
        xxl_enc_request (enc, "JOB_TRIGGER", 310 + i);
        xxl_enc_kint (enc, "jobId", job);
        xxl_enc_kstr (enc, "address", bad [i]);
        s_expect_free (api, enc, 310 + i, XXL_BAD_REQUEST, "JOB_TRIGGER bad address");
    }
    xxl_enc_request (enc, "GROUP_UPDATE", 313);
    xxl_enc_kstr (enc, "group", "manual-app");
    xxl_enc_kstr (enc, "addressList", long_address);
    s_expect_free (api, enc, 313, XXL_BAD_REQUEST, "GROUP_UPDATE long address");
    //  Shards: digits only
    const char *shards [] = { " 1/3", "01/3", "1/03", "+1/3", "1/3 " };
    for (int i = 0; i < 5; i++) {
        xxl_enc_request (enc, "JOB_TRIGGER", 320 + i);
        xxl_enc_kint (enc, "jobId", job);
        xxl_enc_kstr (enc, "shard", shards [i]);
        s_expect_free (api, enc, 320 + i, XXL_BAD_REQUEST, "JOB_TRIGGER bad shard");
    }
    xxl_enc_request (enc, "JOB_TRIGGER", 325);
    xxl_enc_kint (enc, "jobId", job);
    xxl_enc_kstr (enc, "shard", "1/3");
    xxl_enc_kstr (enc, "address", "s1");
    s_expect_free (api, enc, 325, XXL_OK, "JOB_TRIGGER shard 1/3");
    run = xxl_tw_recv_within (s1, 5000);
    XXL_CHECK (run && xxl_msg_int (run, NULL, "broadcastIndex", 1, 0, 100, -1) == 1);
    int64_t log = run? xxl_msg_int (run, NULL, "logId", 1, 1, INT64_MAX, 0): 0;
    xxl_msg_destroy (&run);

    //  runBatch below 1: the single form, not a refusal
    zsock_t *s3 = s_connect (ZMQ_DEALER, agents_ep);
    xxl_tw_enc_register (enc, "REGISTER", 330, "order-app", "s3");
    xxl_enc_kint (enc, "runBatch", -3);
    s_expect_free (s3, enc, 330, XXL_OK, "REGISTER runBatch -3");

    //  acceptedMax (the highest logId the agent's journal holds): one of
    //  the wrong type or out of range is ignored, the REGISTER taken (as
    //  one without it: agents before it, outside agents); one past the
    //  store's next log id moves the ids past it before a RUN goes there
    xxl_tw_enc_register (enc, "REGISTER", 331, "order-app", "s3");
    xxl_enc_kstr (enc, "acceptedMax", "99999999");
    s_expect_free (s3, enc, 331, XXL_OK, "REGISTER acceptedMax a string");
    xxl_tw_enc_register (enc, "REGISTER", 332, "order-app", "s3");
    xxl_enc_kint (enc, "acceptedMax", -7);
    s_expect_free (s3, enc, 332, XXL_OK, "REGISTER acceptedMax negative");
    xxl_tw_enc_register (enc, "REGISTER", 333, "order-app", "s3");
    xxl_enc_kbool (enc, "acceptedMax", 1);
    s_expect_free (s3, enc, 333, XXL_OK, "REGISTER acceptedMax a bool");
    int64_t accepted_max = log + 3 * 4096 + 17;
    xxl_tw_enc_register (enc, "REGISTER", 334, "order-app", "s3");
    xxl_enc_kint (enc, "acceptedMax", accepted_max);
    s_expect_free (s3, enc, 334, XXL_OK, "REGISTER acceptedMax past the store's ids");
    int64_t after = 0;
    run = s_trigger_to (api, s3, enc, 335, job, "s3", &after);
    XXL_CHECK_MSG (after > accepted_max, "the RUN's logId %" PRId64 " is past acceptedMax %"
                   PRId64, after, accepted_max);
    xxl_msg_destroy (&run);
    //  Moves of up to 2^32 each are followed while the scheduler's
    //  allowance (2^34 ids skipped in all since it started) lasts: three
    //  more are, the fifth move is not (a restore needs only one)
    for (int i = 0; i < 4; i++) {
        accepted_max = after + ((int64_t) 1 << 32) - 1000;
        xxl_tw_enc_register (enc, "REGISTER", 360 + 2 * i, "order-app", "s3");
        xxl_enc_kint (enc, "acceptedMax", accepted_max);
        s_expect_free (s3, enc, 360 + 2 * i, XXL_OK, "REGISTER acceptedMax 2^32 ahead");
        int64_t next = 0;
        run = s_trigger_to (api, s3, enc, 361 + 2 * i, job, "s3", &next);
        if (i < 3)
            XXL_CHECK_MSG (next > accepted_max, "move %d: the RUN's logId %" PRId64 " is past"
                           " acceptedMax %" PRId64, i + 2, next, accepted_max);
        else
            XXL_CHECK_MSG (next > after && next < after + 1000, "move %d, past the allowance:"
                           " the RUN's logId %" PRId64 " follows %" PRId64 " (acceptedMax %"
                           PRId64 " not followed)", i + 2, next, after, accepted_max);
        after = next;
        xxl_msg_destroy (&run);
    }

    //  A CALLBACK from a connection that never registered: 401, nothing
    //  stored; the registered agent's own is taken, its long handleMsg cut
    //  between characters
    zsock_t *anon = s_connect (ZMQ_DEALER, agents_ep);
    xxl_tw_enc_callback (enc, 340, log, 500, "forged");
    reply = s_expect (anon, enc, 340, XXL_UNAUTHORIZED, "CALLBACK unregistered");
    XXL_CHECK (strstr (xxl_tw_text (reply), "REGISTER"));
    xxl_msg_destroy (&reply);
    //  An item whose logDateTime is not an integer makes the batch 400
    //  and finishes nothing (the next one, well typed, is taken)
    xxl_enc_request (enc, "CALLBACK", 339);
    xxl_enc_key (enc, "items");
    xxl_enc_array_begin (enc);
    xxl_enc_map_begin (enc);
    xxl_enc_kint (enc, "logId", log);
    xxl_enc_kstr (enc, "logDateTime", "2026-11-28 10:00:00");
    xxl_enc_kint (enc, "handleCode", 500);
    xxl_enc_map_end (enc);
    xxl_enc_array_end (enc);
    reply = s_expect (s1, enc, 339, XXL_BAD_REQUEST, "CALLBACK logDateTime a string");
    XXL_CHECK (strstr (xxl_tw_text (reply), "logDateTime"));
    xxl_msg_destroy (&reply);
    char *text = (char *) malloc (1 + 6000 * 3 + 1);
    text [0] = 'a';
    for (int i = 0; i < 6000; i++)
        memcpy (text + 1 + i * 3, "\xe2\x82\xac", 3);       //  €
    text [1 + 6000 * 3] = 0;
    xxl_tw_enc_callback (enc, 341, log, 200, text);
    s_expect_free (s1, enc, 341, XXL_OK, "CALLBACK registered");
    free (text);
    xxl_enc_request (enc, "LOG_SHOW", 342);
    xxl_enc_kint (enc, "logId", log);
    reply = s_expect (api, enc, 342, XXL_OK, "LOG_SHOW after callbacks");
    const msgpack_object *content = xxl_tw_content (reply);
    XXL_CHECK (content && xxl_msg_int (reply, content, "handleCode", 1, 0, 999, 0) == 200);
    const char *stored = content? xxl_msg_str (reply, content, "handleMsg", 0, 1 << 20, ""): "";
    size_t length = strlen (stored);
    XXL_CHECK (length <= 15000 && length >= 14997);
    XXL_CHECK (length >= 3 && streq (stored + length - 3, "\xe2\x82\xac"));
    xxl_msg_destroy (&reply);

    //  LOG_KILL passes on the agent's answer to KILL: a refusal without
    //  content (a refusal has none, whatever the agent put in it), a 200
    //  with the agent's
    int64_t kill_log = 0;
    run = s_trigger_to (api, s1, enc, 343, job, "s1", &kill_log);
    XXL_CHECK (kill_log > 0);
    if (run) {
        xxl_enc_reply (enc, xxl_msg_id (run), XXL_OK, NULL);
        xxl_tw_send (s1, enc);
    }
    xxl_msg_destroy (&run);
    for (int ok = 0; ok < 2; ok++) {
        xxl_enc_request (enc, "LOG_KILL", 344 + ok);
        xxl_enc_kint (enc, "logId", kill_log);
        xxl_tw_send (api, enc);
        xxl_msg_t *kill = xxl_tw_recv_within (s1, 5000);
        XXL_CHECK (kill && streq (xxl_msg_type (kill), "KILL"));
        if (kill) {
            xxl_enc_reply (enc, xxl_msg_id (kill), ok? XXL_OK: XXL_FAILURE,
                           ok? NULL: "job thread is not running");
            xxl_enc_key (enc, "content");
            xxl_enc_map_begin (enc);
            xxl_enc_kint (enc, "killed", ok);
            xxl_enc_map_end (enc);
            xxl_tw_send (s1, enc);
        }
        xxl_msg_destroy (&kill);
        reply = xxl_tw_recv (api);
        XXL_CHECK (reply && xxl_msg_id (reply) == (uint64_t) (344 + ok));
        XXL_CHECK (xxl_tw_code (reply) == (ok? XXL_OK: XXL_FAILURE));
        if (ok)
            XXL_CHECK (xxl_tw_content (reply)
                       && xxl_msg_int (reply, xxl_tw_content (reply), "killed", 1, 0, 1, -1) == 1);
        else
            XXL_CHECK (xxl_tw_content (reply) == NULL);
        xxl_msg_destroy (&reply);
    }

    //  A RUN refused 'stopping: …' (an agent shutting down) goes to
    //  another agent; LOG still reaches an agent that unregistered while
    //  its connection stays (one draining its runs)
    xxl_enc_request (enc, "GROUP_ADD", 350);
    xxl_enc_kstr (enc, "appname", "drain-app");
    s_expect_free (api, enc, 350, XXL_OK, "GROUP_ADD drain-app");
    zsock_t *d1 = s_agent (agents_ep, enc, "drain-app", "d1", 351);
    zsock_t *d2 = s_agent (agents_ep, enc, "drain-app", "d2", 352);
    xxl_enc_request (enc, "JOB_ADD", 353);
    xxl_enc_kstr (enc, "jobGroup", "drain-app");
    xxl_enc_kstr (enc, "executorHandler", "h");
    reply = s_expect (api, enc, 353, XXL_OK, "JOB_ADD drain");
    int64_t drain_job = xxl_tw_content_id (reply);
    xxl_msg_destroy (&reply);
    xxl_enc_request (enc, "JOB_TRIGGER", 354);
    xxl_enc_kint (enc, "jobId", drain_job);
    s_expect_free (api, enc, 354, XXL_OK, "JOB_TRIGGER drain");
    run = xxl_tw_recv_within (d1, 5000);
    int64_t drain_log = run? xxl_msg_int (run, NULL, "logId", 1, 1, INT64_MAX, 0): 0;
    XXL_CHECK (drain_log > 0);
    if (run) {
        xxl_enc_reply (enc, xxl_msg_id (run), XXL_FAILURE, "stopping: d1 is draining");
        xxl_tw_send (d1, enc);
    }
    xxl_msg_destroy (&run);
    run = xxl_tw_recv_within (d2, 5000);
    XXL_CHECK (run && xxl_msg_int (run, NULL, "logId", 1, 1, INT64_MAX, 0) == drain_log);
    if (run) {
        xxl_enc_reply (enc, xxl_msg_id (run), XXL_OK, NULL);
        xxl_tw_send (d2, enc);
    }
    xxl_msg_destroy (&run);
    xxl_tw_enc_register (enc, "UNREGISTER", 355, "drain-app", "d2");
    s_expect_free (d2, enc, 355, XXL_OK, "UNREGISTER d2");
    xxl_enc_request (enc, "LOG_CAT", 356);
    xxl_enc_kint (enc, "logId", drain_log);
    xxl_tw_send (api, enc);
    xxl_msg_t *log_request = xxl_tw_recv_within (d2, 5000);
    XXL_CHECK (log_request && streq (xxl_msg_type (log_request), "LOG"));
    if (log_request) {
        xxl_enc_reply (enc, xxl_msg_id (log_request), XXL_OK, NULL);
        xxl_enc_key (enc, "content");
        xxl_enc_map_begin (enc);
        xxl_enc_kint (enc, "fromLineNum", 1);
        xxl_enc_kint (enc, "toLineNum", 1);
        xxl_enc_kstr (enc, "logContent", "still here\n");
        xxl_enc_kbool (enc, "isEnd", 0);
        xxl_enc_map_end (enc);
        xxl_tw_send (d2, enc);
    }
    xxl_msg_destroy (&log_request);
    reply = xxl_tw_recv (api);
    XXL_CHECK (xxl_tw_code (reply) == XXL_OK && reply && xxl_msg_id (reply) == 356);
    XXL_CHECK (xxl_tw_content (reply) && streq (xxl_msg_str (reply, xxl_tw_content (reply),
                                                             "logContent", 0, 4096, ""),
                                                "still here\n"));
    xxl_msg_destroy (&reply);
    //  …and its results still count (it registered on that connection)
    xxl_tw_enc_callback (enc, 357, drain_log, 200, NULL);
    s_expect_free (d2, enc, 357, XXL_OK, "CALLBACK after UNREGISTER");
    zsock_destroy (&d2);
    zsock_destroy (&d1);

    zsock_destroy (&anon);
    zsock_destroy (&s3);
    zsock_destroy (&s2);
    zsock_destroy (&s1);
    zsock_destroy (&api);
    xxl_enc_destroy (&enc);
}

static void
s_burst (const char *agents_ep, int count, int apps)
{
    zsock_t *agent = s_connect (ZMQ_DEALER, agents_ep);
    zsock_set_sndhwm (agent, 0);
    xxl_enc_t *enc = xxl_enc_new ();
    for (int i = 0; i < count; i++) {
        char app [32], address [64];
        snprintf (app, sizeof app, "burst-%d", i % apps);
        snprintf (address, sizeof address, "burst-%06d", i);
        xxl_tw_enc_register (enc, "REGISTER", (uint64_t) i + 1, app, address);
        xxl_tw_send (agent, enc);
    }
    //  While the burst is read: another client is answered
    zsock_t *other = s_connect (ZMQ_DEALER, agents_ep);
    xxl_tw_enc_register (enc, "UNREGISTER", 9999999, "burst-none", "nobody");
    s_expect_free (other, enc, 9999999, XXL_OK, "UNREGISTER during the burst");
    //  Every REGISTER answered 200
    int ok = 0;
    for (int i = 0; i < count; i++) {
        xxl_msg_t *reply = xxl_tw_recv (agent);
        if (!reply)
            break;
        ok += xxl_tw_code (reply) == XXL_OK;
        xxl_msg_destroy (&reply);
    }
    XXL_CHECK (ok == count);
    //  (the connection stays open: the addresses stay connected while the
    //  shell test looks; it ends this process when done)
    printf ("registered %d\n", ok);
    fflush (stdout);
    char line [16];
    if (!fgets (line, sizeof line, stdin)) {
        //  (stdin closed: done)
    }
    zsock_destroy (&other);
    zsock_destroy (&agent);
    xxl_enc_destroy (&enc);
}

//  A client that asks and never reads: COUNT JOB_LISTs of `limit` jobs,
//  then it holds the connection until stdin closes
static void
s_flood (const char *api_ep, int count, int limit)
{
    zsock_t *rude = zsock_new (ZMQ_DEALER);
    zsock_set_linger (rude, 0);
    zsock_set_rcvhwm (rude, 1);
    zsock_set_rcvbuf (rude, 4096);
    zsock_set_sndhwm (rude, 0);
    zsock_connect (rude, "%s", api_ep);
    xxl_enc_t *enc = xxl_enc_new ();
    for (int i = 0; i < count; i++) {
        xxl_enc_request (enc, "JOB_LIST", (uint64_t) i + 1);
        xxl_enc_kint (enc, "limit", limit);
        xxl_tw_send (rude, enc);
    }
    printf ("sent %d\n", count);
    fflush (stdout);
    char line [16];
    if (!fgets (line, sizeof line, stdin)) {
        //  (stdin closed: done)
    }
    zsock_destroy (&rude);
    xxl_enc_destroy (&enc);
}

//  A reply never passes the frame limit: JOB_LIST of jobs holding more
//  than 4 MiB in all is answered (a 400 that says so, or fewer items),
//  by a reply the client can read
static void
s_big (const char *api_ep)
{
    zsock_t *api = s_connect (ZMQ_DEALER, api_ep);
    zsock_set_maxmsgsize (api, XXL_MSG_MAX_FRAME + 1024);
    xxl_enc_t *enc = xxl_enc_new ();
    xxl_enc_request (enc, "JOB_LIST", 7);
    xxl_enc_kint (enc, "limit", 1000);
    xxl_msg_t *reply = xxl_tw_call (api, enc);
    XXL_CHECK (reply && xxl_msg_id (reply) == 7);
    XXL_CHECK (xxl_tw_code (reply) == XXL_OK || xxl_tw_code (reply) == XXL_BAD_REQUEST);
    if (xxl_tw_code (reply) == XXL_BAD_REQUEST)
        XXL_CHECK (strstr (xxl_tw_text (reply), "frame limit"));
    xxl_msg_destroy (&reply);
    zsock_destroy (&api);
    xxl_enc_destroy (&enc);
}

int
main (int argc, char *argv [])
{
    zsys_init ();
    if (argc == 4 && streq (argv [1], "wire")) {
        s_wire (argv [2], argv [3]);
        s_wire2 (argv [2], argv [3]);
    }
    else
    if (argc == 5 && streq (argv [1], "burst"))
        s_burst (argv [2], atoi (argv [3]), atoi (argv [4]));
    else
    if (argc == 5 && streq (argv [1], "flood"))
        s_flood (argv [2], atoi (argv [3]), atoi (argv [4]));
    else
    if (argc == 3 && streq (argv [1], "big"))
        s_big (argv [2]);
    else {
        fprintf (stderr, "usage: test_contract wire API AGENTS | burst AGENTS COUNT APPS\n");
        return 2;
    }
    return xxl_test_done ();
}
