/*  test_bridge_wire.c -- xxl-bridge's units: the XXL-JOB wire as the
    executors speak it (2.x and 3.x answers, callback spellings, odd
    refusals, bounds), the networks it may call, and its routes file.
*/

#include "xxl_test.h"
#include "xxl_bridge_wire.h"
#include "xxl_bridge_net.h"
#include "xxl_bridge_routes.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <xxl/msg.h>

#define S(text) text, strlen (text)

static void
test_registry (void)
{
    xxl_wire_registry_t r;
    char why [256];
    XXL_CHECK (xxl_wire_registry_parse (S ("{\"registryGroup\":\"EXECUTOR\",\"registryKey\":"
        "\"app\",\"registryValue\":\"http://127.0.0.1:9999/\"}"), &r, why, sizeof why) == 0);
    XXL_CHECK_STR (r.key, "app");
    XXL_CHECK_STR (r.value, "http://127.0.0.1:9999/");
    //  3.x sends no registryGroup in some clients; any case of EXECUTOR
    XXL_CHECK (xxl_wire_registry_parse (S ("{\"registryKey\":\"a\",\"registryValue\":\"v\"}"),
                                        &r, why, sizeof why) == 0);
    XXL_CHECK (xxl_wire_registry_parse (S ("{\"registryGroup\":\"ADMIN\",\"registryKey\":\"a\","
        "\"registryValue\":\"v\"}"), &r, why, sizeof why) == -1);
    XXL_CHECK_HAS (why, "registryGroup must be EXECUTOR");
    XXL_CHECK (xxl_wire_registry_parse (S ("{\"registryKey\":\"a\"}"), &r, why, sizeof why) == -1);
    XXL_CHECK_HAS (why, "registryValue must be a non-empty string");
    XXL_CHECK (xxl_wire_registry_parse (S ("{\"registryKey\":\"a\\n\",\"registryValue\":\"v\"}"),
                                        &r, why, sizeof why) == -1);
    XXL_CHECK_HAS (why, "control character");
    XXL_CHECK (xxl_wire_registry_parse (S ("[1,2]"), &r, why, sizeof why) == -1);
    XXL_CHECK (xxl_wire_registry_parse (S ("{\"registryKey\":"), &r, why, sizeof why) == -1);
    XXL_CHECK_HAS (why, "not a JSON object");
    char big [400];
    memset (big, 'a', sizeof big);
    char *body = zsys_sprintf ("{\"registryKey\":\"%.*s\",\"registryValue\":\"v\"}", 300, big);
    XXL_CHECK (xxl_wire_registry_parse (body, strlen (body), &r, why, sizeof why) == -1);
    XXL_CHECK_HAS (why, "longer than 255");
    zstr_free (&body);
}

//  A one-item callback batch read as jansson reads it: log_id, time,
//  code and msg (NULL: none); -1 log_id: the batch is refused
static void
s_check_callback (const char *body, int64_t log_id, int64_t when, int code, const char *msg)
{
    xxl_wire_callback_t *items = NULL;
    char why [256];
    int n = xxl_wire_callback_parse (body, strlen (body), &items, why, sizeof why);
    if (log_id < 0) {
        XXL_CHECK_MSG (n == -1 && items == NULL, "%s: %d item(s), not refused", body, n);
        return;
    }
    XXL_CHECK_MSG (n == 1, "%s: %d item(s) (%s)", body, n, n < 0? why: "");
    if (n == 1) {
        XXL_CHECK_MSG (items [0].log_id == log_id && items [0].log_date_time == when
                       && items [0].code == code, "%s: %" PRId64 " %" PRId64 " %d", body,
                       items [0].log_id, items [0].log_date_time, items [0].code);
        XXL_CHECK_MSG (msg? items [0].msg && streq (items [0].msg, msg): !items [0].msg,
                       "%s: msg %s", body, items [0].msg);
    }
    xxl_wire_callbacks_free (items, n > 0? (size_t) n: 0);
}

static void
test_callback_shapes (void)
{
    //  Read without a tree: Python's and Java's spacing, either spelling
    s_check_callback ("[{\"logId\": 7, \"logDateTim\": 17, \"handleCode\": 200, \"handleMsg\": null}]",
                      7, 17, 200, NULL);
    s_check_callback (" [ {\"logId\":7,\"logDateTime\":17,\"handleCode\":500,\"handleMsg\":\"boom\"} ]\n",
                      7, 17, 500, "boom");
    s_check_callback ("[{\"logId\":7,\"logDateTim\":null,\"logDateTime\":5,\"handleCode\":200}]",
                      7, 0, 200, NULL);
    s_check_callback ("[{\"logId\":7,\"logDateTim\":-1,\"handleCode\":200,\"handleMsg\":true,"
                      "\"extra\":false}]", 7, 0, 200, NULL);
    s_check_callback ("[{\"handleCode\":200,\"logId\":1,\"logId\":2}]", 2, 0, 200, NULL);
    //  Read by the full parse
    s_check_callback ("[{\"logId\":\"7\",\"logDateTim\":\"9\",\"handleCode\":\"200\"}]", 7, 9, 200, NULL);
    s_check_callback ("[{\"logId\":7,\"handleCode\":200,\"handleMsg\":\"a\\nb \\u4efb\"}]",
                      7, 0, 200, "a\nb \xe4\xbb\xbb");
    s_check_callback ("[{\"logId\":7,\"handleCode\":200,\"handleMsg\":\"\xe4\xbb\xbb\"}]",
                      7, 0, 200, "\xe4\xbb\xbb");
    s_check_callback ("[{\"logId\":1234567890123456789,\"handleCode\":200}]",
                      1234567890123456789LL, 0, 200, NULL);
    //  Refused by both
    s_check_callback ("[{\"logId\":7,\"handleCode\":200.0}]", -1, 0, 0, NULL);
    s_check_callback ("[{\"logId\":-7,\"handleCode\":200}]", -1, 0, 0, NULL);
    s_check_callback ("[{\"logId\":07,\"handleCode\":200}]", -1, 0, 0, NULL);
    s_check_callback ("[{\"logId\":7,\"handleCode\":0}]", -1, 0, 0, NULL);
    s_check_callback ("[{\"logId\":7}]", -1, 0, 0, NULL);
    s_check_callback ("[{\"logId\":7,\"handleCode\":200},]", -1, 0, 0, NULL);
    s_check_callback ("[{\"logId\":7,\"handleCode\":200}", -1, 0, 0, NULL);
    s_check_callback ("[{\"logId\":7,\"handleCode\":200}]]", -1, 0, 0, NULL);
    s_check_callback ("[{\"logId\":7,\"handleCode\":200} {\"logId\":8,\"handleCode\":200}]",
                      -1, 0, 0, NULL);
    s_check_callback ("[7]", -1, 0, 0, NULL);
    //  A batch of many
    char body [4096] = "[";
    for (int i = 1; i <= 40; i++)
        snprintf (body + strlen (body), sizeof body - strlen (body),
                  "%s{\"logId\":%d,\"handleCode\":200,\"handleMsg\":\"m%d\"}", i > 1? ",": "", i, i);
    strcat (body, "]");
    xxl_wire_callback_t *items = NULL;
    char why [256];
    int n = xxl_wire_callback_parse (body, strlen (body), &items, why, sizeof why);
    XXL_CHECK_INT (n, 40);
    if (n == 40)
        XXL_CHECK (items [39].log_id == 40 && streq (items [39].msg, "m40"));
    xxl_wire_callbacks_free (items, n > 0? (size_t) n: 0);
}

static void
test_callback (void)
{
    xxl_wire_callback_t *items;
    char why [256];
    //  2.3+ and 3.x: handleCode, handleMsg; the item's time spelled logDateTim
    int n = xxl_wire_callback_parse (S ("[{\"logId\":7,\"logDateTim\":1700000000000,"
        "\"handleCode\":200,\"handleMsg\":null},{\"logId\":\"8\",\"logDateTime\":5,"
        "\"handleCode\":500,\"handleMsg\":\"boom\"}]"), &items, why, sizeof why);
    XXL_CHECK_INT (n, 2);
    if (n == 2) {
        XXL_CHECK_INT (items [0].log_id, 7);
        XXL_CHECK_INT (items [0].log_date_time, 1700000000000LL);
        XXL_CHECK_INT (items [0].code, 200);
        XXL_CHECK (items [0].msg == NULL);
        XXL_CHECK_INT (items [1].log_id, 8);
        XXL_CHECK_INT (items [1].log_date_time, 5);
        XXL_CHECK_STR (items [1].msg, "boom");
    }
    xxl_wire_callbacks_free (items, n > 0? (size_t) n: 0);
    //  2.0-2.2: executeResult {code, msg}
    n = xxl_wire_callback_parse (S ("[{\"logId\":9,\"logDateTim\":1,\"executeResult\":"
        "{\"code\":502,\"msg\":\"timeout\",\"content\":null}}]"), &items, why, sizeof why);
    XXL_CHECK_INT (n, 1);
    if (n == 1) {
        XXL_CHECK_INT (items [0].code, 502);
        XXL_CHECK_STR (items [0].msg, "timeout");
    }
    xxl_wire_callbacks_free (items, n > 0? (size_t) n: 0);
    XXL_CHECK_INT (xxl_wire_callback_parse (S ("[]"), &items, why, sizeof why), 0);
    xxl_wire_callbacks_free (items, 0);
    //  One bad item refuses the batch, whole
    XXL_CHECK_INT (xxl_wire_callback_parse (S ("[{\"logId\":1,\"handleCode\":200},"
        "{\"logId\":0,\"handleCode\":200}]"), &items, why, sizeof why), -1);
    XXL_CHECK_HAS (why, "callback 1 has no positive logId");
    XXL_CHECK (items == NULL);
    XXL_CHECK_INT (xxl_wire_callback_parse (S ("[{\"logId\":1,\"handleCode\":1000}]"),
                                            &items, why, sizeof why), -1);
    XXL_CHECK_HAS (why, "no handleCode 1-999");
    XXL_CHECK_INT (xxl_wire_callback_parse (S ("{\"logId\":1}"), &items, why, sizeof why), -1);
    XXL_CHECK_HAS (why, "not a JSON array");
    XXL_CHECK_INT (xxl_wire_callback_parse (S ("[{\"logId\":1,\"handleCode\":200}] x"),
                                            &items, why, sizeof why), -1);
}

static void
test_answers (void)
{
    xxl_wire_answer_t a;
    //  2.x: content; 3.x: data
    xxl_wire_answer_read (200, S ("{\"code\":200,\"msg\":null,\"content\":{\"isEnd\":true}}"),
                          NULL, &a);
    XXL_CHECK_INT (a.code, 200);
    XXL_CHECK (a.msg == NULL);
    XXL_CHECK (json_is_true (json_object_get (a.content, "isEnd")));
    xxl_wire_answer_free (&a);
    xxl_wire_answer_read (200, S ("{\"code\":200,\"msg\":null,\"data\":{\"isEnd\":false}}"),
                          NULL, &a);
    XXL_CHECK (json_is_false (json_object_get (a.content, "isEnd")));
    xxl_wire_answer_free (&a);
    xxl_wire_answer_read (200, S ("{\"code\":500,\"msg\":\"block strategy effect\"}"), NULL, &a);
    XXL_CHECK_INT (a.code, 500);
    XXL_CHECK_STR (a.msg, "block strategy effect");
    xxl_wire_answer_free (&a);
    //  Odd shapes of a refusal
    xxl_wire_answer_read (200, S ("{\"code\":\"500\",\"msg\":\"as a string\"}"), NULL, &a);
    XXL_CHECK_INT (a.code, 500);
    XXL_CHECK_STR (a.msg, "as a string");
    xxl_wire_answer_free (&a);
    xxl_wire_answer_read (500, S ("<html>\nInternal Server Error</html>"), NULL, &a);
    XXL_CHECK_INT (a.code, 500);
    XXL_CHECK_STR (a.msg, "the executor answered HTTP 500: <html>?Internal Server Error</html>");
    xxl_wire_answer_free (&a);
    xxl_wire_answer_read (200, S ("{\"msg\":\"no code\"}"), NULL, &a);
    XXL_CHECK_INT (a.code, 500);
    XXL_CHECK_HAS (a.msg, "HTTP 200");
    xxl_wire_answer_free (&a);
    xxl_wire_answer_read (200, "", 0, NULL, &a);
    XXL_CHECK_INT (a.code, 500);
    XXL_CHECK_HAS (a.msg, "with no body");
    xxl_wire_answer_free (&a);
    xxl_wire_answer_read (0, "", 0, "Operation timed out after 900 milliseconds", &a);
    XXL_CHECK_INT (a.code, 500);
    XXL_CHECK_STR (a.msg, "Operation timed out after 900 milliseconds");
    xxl_wire_answer_free (&a);
    //  A long body is cut in the msg
    char big [1000];
    memset (big, 'x', sizeof big);
    xxl_wire_answer_read (502, big, sizeof big, NULL, &a);
    XXL_CHECK (a.msg && strlen (a.msg) < 300);
    xxl_wire_answer_free (&a);
    char *ok = xxl_wire_ok ();
    XXL_CHECK_STR (ok, "{\"code\":200,\"msg\":null}");
    free (ok);
    char *fail = xxl_wire_fail (500, "no \"way\"");
    XXL_CHECK_STR (fail, "{\"code\":500,\"msg\":\"no \\\"way\\\"\"}");
    free (fail);
}

//  What the answer read must give for body, as jansson reads it: the
//  code, the msg and whether a content came (the flat reader and the full
//  parse agree on every shape)
static void
s_check_answer (const char *body, int code, const char *msg, bool content)
{
    xxl_wire_answer_t a;
    xxl_wire_answer_read (200, body, strlen (body), NULL, &a);
    XXL_CHECK_MSG (a.code == code, "%s: code %d, not %d", body, a.code, code);
    if (msg && *msg == '~')
        XXL_CHECK_MSG (a.msg && strstr (a.msg, msg + 1), "%s: msg %s", body, a.msg);
    else
    if (msg)
        XXL_CHECK_MSG (a.msg && streq (a.msg, msg), "%s: msg %s, not %s", body, a.msg, msg);
    else
        XXL_CHECK_MSG (a.msg == NULL, "%s: msg %s, not none", body, a.msg);
    XXL_CHECK_MSG ((a.content != NULL) == content, "%s: content %p", body, (void *) a.content);
    xxl_wire_answer_free (&a);
}

static void
test_answer_shapes (void)
{
    //  The common shapes (read without a tree)
    s_check_answer ("{\"code\":200,\"msg\":null}", 200, NULL, false);
    s_check_answer ("{\"code\":200}", 200, NULL, false);
    s_check_answer (" {\r\n \"code\" : 200 ,\t\"msg\" : \"ok\" } \n", 200, "ok", false);
    s_check_answer ("{\"code\":200,\"msg\":null,\"content\":null}", 200, NULL, false);
    s_check_answer ("{\"code\":200,\"msg\":null,\"data\":null}", 200, NULL, false);
    s_check_answer ("{\"msg\":\"busy\",\"code\":500}", 500, "busy", false);
    s_check_answer ("{\"code\":0,\"msg\":true}", 0, NULL, false);
    s_check_answer ("{\"code\":999,\"msg\":12,\"other\":false}", 999, NULL, false);
    s_check_answer ("{\"code\":500,\"code\":200,\"msg\":\"a\",\"msg\":null}", 200, NULL, false);
    s_check_answer ("{\"code\":200,\"msg\":\"\"}", 200, "", false);
    //  Those the full parse reads
    s_check_answer ("{\"code\":200,\"msg\":\"a \\\"quoted\\\" word\"}", 200, "a \"quoted\" word", false);
    s_check_answer ("{\"code\":500,\"msg\":\"\u4efb\u52a1\"}", 500, "\u4efb\u52a1", false);
    s_check_answer ("{\"code\":\"200\",\"msg\":null}", 200, NULL, false);
    s_check_answer ("{\"code\":200,\"content\":\"text\"}", 200, NULL, true);
    s_check_answer ("{\"code\":200,\"data\":[1]}", 200, NULL, true);
    s_check_answer ("{\"code\":200,\"logId\":1700000000000123}", 200, NULL, false);
    //  Refused by both: not integers 0-999, not one JSON object
    s_check_answer ("{\"code\":200.0}", 500, "~HTTP 200", false);
    s_check_answer ("{\"code\":2e2}", 500, "~HTTP 200", false);
    s_check_answer ("{\"code\":0200}", 500, "~HTTP 200", false);
    s_check_answer ("{\"code\":1000}", 500, "~HTTP 200", false);
    s_check_answer ("{\"code\":-200}", 500, "~HTTP 200", false);
    s_check_answer ("{\"code\":12345}", 500, "~HTTP 200", false);
    s_check_answer ("{\"code\":null}", 500, "~HTTP 200", false);
    s_check_answer ("{\"code\":200}x", 500, "~HTTP 200", false);
    s_check_answer ("{\"code\":200,}", 500, "~HTTP 200", false);
    s_check_answer ("{\"code\":200", 500, "~HTTP 200", false);
    s_check_answer ("{\"code\" 200}", 500, "~HTTP 200", false);
    s_check_answer ("{\"code\":200,\"msg\":nul}", 500, "~HTTP 200", false);
    s_check_answer ("{}", 500, "~HTTP 200", false);
    s_check_answer ("[{\"code\":200}]", 500, "~HTTP 200", false);
    //  (not HTTP 200: never read as an answer)
    xxl_wire_answer_t a;
    xxl_wire_answer_read (503, S ("{\"code\":200,\"msg\":null}"), NULL, &a);
    XXL_CHECK_INT (a.code, 500);
    XXL_CHECK_HAS (a.msg, "HTTP 503");
    xxl_wire_answer_free (&a);
}

//  The TriggerParam's strings are JSON strings however they came: quotes,
//  backslashes, controls and a NUL escaped, UTF-8 kept, an invalid byte
//  made U+FFFD
static void
test_trigger_strings (void)
{
    xxl_enc_t *enc = xxl_enc_new ();
    xxl_enc_request (enc, "RUN", 3);
    xxl_enc_kint (enc, "jobId", 4);
    xxl_enc_kint (enc, "logId", 9223372036854775807LL);
    xxl_enc_kint (enc, "broadcastIndex", -1);
    xxl_enc_kstr (enc, "executorHandler", "demo\"Handler\\");
    //  (a str of the sender's bytes, as raw msgpack: str8, 19 bytes; the key
    //  counted the pair)
    xxl_enc_key (enc, "executorParams");
    xxl_enc_raw (enc, "\xd9\x13" "a\x00" "b\n\t\x01\x1f\x7f \xe4\xbb\xbb\xe5\x8a\xa1 \xff\xc3/", 21, 0);
    //  (4 bytes, then overlong, surrogate, over U+10FFFF, truncated)
    xxl_enc_key (enc, "glueSource");
    xxl_enc_raw (enc, "\xd9\x13" "\xf0\x9f\x98\x80|\xc0\x80|\xed\xa0\x80|\xf4\x90\x80\x80|\xe4\xbb",
                 21, 0);
    size_t size;
    const void *data = xxl_enc_finish (enc, &size);
    char err [256];
    xxl_msg_t *msg = xxl_msg_decode (data, size, NULL, err, sizeof err);
    XXL_CHECK_MSG (msg, "%s", err);
    char *json = msg? xxl_wire_trigger (xxl_msg_root (msg)): NULL;
    json_error_t error;
    json_t *t = json? json_loads (json, JSON_ALLOW_NUL, &error): NULL;
    XXL_CHECK_MSG (t, "not JSON: %s", json);
    XXL_CHECK_INT (json_integer_value (json_object_get (t, "logId")), 9223372036854775807LL);
    XXL_CHECK_INT (json_integer_value (json_object_get (t, "broadcastIndex")), -1);
    XXL_CHECK_STR (json_string_value (json_object_get (t, "executorHandler")), "demo\"Handler\\");
    json_t *params = json_object_get (t, "executorParams");
    XXL_CHECK_MSG (json_string_length (params) == 23
                   && memcmp (json_string_value (params), "a\x00" "b\n\t\x01\x1f\x7f \xe4\xbb\xbb"
                              "\xe5\x8a\xa1 \xef\xbf\xbd\xef\xbf\xbd/", 23) == 0, "%s", json);
    XXL_CHECK_STR (json_string_value (json_object_get (t, "glueType")), "");
#define FFFD "\xef\xbf\xbd"
    XXL_CHECK_STR (json_string_value (json_object_get (t, "glueSource")),
                   "\xf0\x9f\x98\x80|" FFFD FFFD "|" FFFD FFFD FFFD "|" FFFD FFFD FFFD FFFD "|" FFFD FFFD);
#undef FFFD
    XXL_CHECK_MSG (strstr (json ? json: "", "\"jobId\":4,\"executorTimeout\":0,\"logId\""),
                   "integers first, in order: %s", json);
    json_decref (t);
    free (json);
    xxl_msg_destroy (&msg);
    xxl_enc_destroy (&enc);
}

static void
test_trigger (void)
{
    xxl_enc_t *enc = xxl_enc_new ();
    xxl_enc_request (enc, "RUN", 3);
    xxl_enc_kstr (enc, "accessToken", "secret");
    xxl_enc_kint (enc, "jobId", 4);
    xxl_enc_kstr (enc, "executorHandler", "");
    xxl_enc_kint (enc, "logId", 77);
    xxl_enc_kint (enc, "logDateTime", 1700000000000LL);
    xxl_enc_kstr (enc, "glueType", "GLUE_GROOVY");
    xxl_enc_kstr (enc, "glueSource", "package demo;");
    xxl_enc_kint (enc, "glueUpdatetime", 12);
    xxl_enc_kint (enc, "broadcastIndex", 1);
    xxl_enc_kint (enc, "broadcastTotal", 2);
    xxl_enc_kint (enc, "expireTime", 99);
    size_t size;
    const void *data = xxl_enc_finish (enc, &size);
    char err [256];
    xxl_msg_t *msg = xxl_msg_decode (data, size, NULL, err, sizeof err);
    XXL_CHECK (msg);
    char *json = msg? xxl_wire_trigger (xxl_msg_root (msg)): NULL;
    json_t *t = json? json_loads (json, 0, NULL): NULL;
    XXL_CHECK_INT (json_integer_value (json_object_get (t, "jobId")), 4);
    XXL_CHECK_INT (json_integer_value (json_object_get (t, "logId")), 77);
    XXL_CHECK_INT (json_integer_value (json_object_get (t, "logDateTime")), 1700000000000LL);
    XXL_CHECK_STR (json_string_value (json_object_get (t, "glueType")), "GLUE_GROOVY");
    XXL_CHECK_STR (json_string_value (json_object_get (t, "glueSource")), "package demo;");
    XXL_CHECK_INT (json_integer_value (json_object_get (t, "glueUpdatetime")), 12);
    XXL_CHECK_INT (json_integer_value (json_object_get (t, "broadcastIndex")), 1);
    XXL_CHECK_INT (json_integer_value (json_object_get (t, "broadcastTotal")), 2);
    XXL_CHECK_INT (json_integer_value (json_object_get (t, "executorTimeout")), 0);
    XXL_CHECK_STR (json_string_value (json_object_get (t, "executorParams")), "");
    XXL_CHECK_MSG (!json_object_get (t, "accessToken") && !json_object_get (t, "expireTime"),
                   "nothing but the TriggerParam: %s", json);
    json_decref (t);
    free (json);
    xxl_msg_destroy (&msg);
    xxl_enc_destroy (&enc);
}

static void
test_net (void)
{
    char why [256];
    xxl_bridge_net_t *net = xxl_bridge_net_new (NULL, why, sizeof why);
    XXL_CHECK (net);
    XXL_CHECK (xxl_bridge_net_check (net, "http://127.0.0.1:9999/", why, sizeof why) == 0);
    XXL_CHECK (xxl_bridge_net_check (net, "http://localhost:9999/", why, sizeof why) == 0);
    XXL_CHECK (xxl_bridge_net_check (net, "https://[::1]:9999/", why, sizeof why) == 0);
    XXL_CHECK (xxl_bridge_net_check (net, "http://10.0.0.1:9999/", why, sizeof why) == -1);
    XXL_CHECK_HAS (why, "outside the networks");
    XXL_CHECK (xxl_bridge_net_check (net, "http://example.com:9999/", why, sizeof why) == -1);
    XXL_CHECK_HAS (why, "not an IP address");
    XXL_CHECK (xxl_bridge_net_check (net, "ftp://127.0.0.1/", why, sizeof why) == -1);
    XXL_CHECK (xxl_bridge_net_check (net, "http://user@127.0.0.1/", why, sizeof why) == -1);
    XXL_CHECK (xxl_bridge_net_check (net, "http://127.0.0.1:1/ x", why, sizeof why) == -1);
    //  User information in any form libcurl reads it: the host libcurl
    //  would call is past the '@' (an allowed address before it counts
    //  for nothing); each refused as such
    static const char *userinfo [] = {
        "http://127.0.0.1:80@10.9.9.8:9999/", "http://127.0.0.1@10.9.9.8/",
        "http://[::1]@10.9.9.8:9999/", "http://[::1]:80@10.9.9.8/",
        "https://127.0.0.1:x@10.9.9.8/", "http://127.0.0.1:80@127.0.0.1:9999/",
        "http://:@127.0.0.1/", "http://127.0.0.1;o@10.9.9.8/", NULL
    };
    for (int i = 0; userinfo [i]; i++) {
        why [0] = 0;
        XXL_CHECK_MSG (xxl_bridge_net_check (net, userinfo [i], why, sizeof why) == -1,
                       "%s refused", userinfo [i]);
        XXL_CHECK_MSG (strstr (why, "user information") || strstr (why, "outside"),
                       "%s: %s", userinfo [i], why);
    }
    //  The host as libcurl reads it: a path's or query's '@' is no user
    //  information
    XXL_CHECK (xxl_bridge_net_check (net, "http://127.0.0.1:9999/a@b", why, sizeof why) == 0);
    XXL_CHECK (xxl_bridge_net_check (net, "http://127.0.0.1:9999/?a=@10.9.9.8", why,
                                     sizeof why) == 0);
    //  The address connected to, after any lookup
    struct sockaddr_in in4 = { .sin_family = AF_INET };
    inet_pton (AF_INET, "127.0.0.7", &in4.sin_addr);
    XXL_CHECK (xxl_bridge_net_allows (net, (struct sockaddr *) &in4));
    inet_pton (AF_INET, "10.9.9.8", &in4.sin_addr);
    XXL_CHECK (!xxl_bridge_net_allows (net, (struct sockaddr *) &in4));
    struct sockaddr_in6 in6 = { .sin6_family = AF_INET6 };
    inet_pton (AF_INET6, "::1", &in6.sin6_addr);
    XXL_CHECK (xxl_bridge_net_allows (net, (struct sockaddr *) &in6));
    inet_pton (AF_INET6, "::ffff:127.0.0.1", &in6.sin6_addr);
    XXL_CHECK (xxl_bridge_net_allows (net, (struct sockaddr *) &in6));
    inet_pton (AF_INET6, "fe80::1", &in6.sin6_addr);
    XXL_CHECK (!xxl_bridge_net_allows (net, (struct sockaddr *) &in6));
    xxl_bridge_net_destroy (&net);
    net = xxl_bridge_net_new ("10.1.0.0/16, 192.168.1.7", why, sizeof why);
    XXL_CHECK (net);
    XXL_CHECK (xxl_bridge_net_check (net, "http://10.1.200.3:9999/", why, sizeof why) == 0);
    XXL_CHECK (xxl_bridge_net_check (net, "http://10.2.0.1:9999/", why, sizeof why) == -1);
    XXL_CHECK (xxl_bridge_net_check (net, "http://192.168.1.7/", why, sizeof why) == 0);
    XXL_CHECK (xxl_bridge_net_check (net, "http://192.168.1.8/", why, sizeof why) == -1);
    XXL_CHECK (xxl_bridge_net_check (net, "http://127.0.0.1/", why, sizeof why) == -1);
    xxl_bridge_net_destroy (&net);
    XXL_CHECK (!xxl_bridge_net_new ("10.0.0.0/33", why, sizeof why));
    XXL_CHECK_HAS (why, "prefix length 0-32");
    XXL_CHECK (!xxl_bridge_net_new ("nohost", why, sizeof why));
    XXL_CHECK (!xxl_bridge_net_new ("", why, sizeof why));
}

static void
test_routes (void)
{
    //  The maps' key of a logId: its decimal text, as printf makes it
    int64_t ids [] = { 0, 1, 9, 10, 1700000000123, INT64_MAX, -1, INT64_MIN };
    for (size_t i = 0; i < sizeof ids / sizeof ids [0]; i++) {
        char got [XXL_BRIDGE_ID_MAX], want [32];
        snprintf (want, sizeof want, "%" PRId64, ids [i]);
        XXL_CHECK_INT (xxl_bridge_routes_id (ids [i], got), strlen (want));
        XXL_CHECK_STR (got, want);
    }
    char dir [256];
    if (xxl_test_tmpdir (dir, sizeof dir, "bridge"))
        return;
    char *path = zsys_sprintf ("%s/routes", dir);
    xxl_bridge_routes_t *routes = xxl_bridge_routes_new (path);
    XXL_CHECK (routes);
    xxl_bridge_routes_add (routes, 1, "app\thttp://127.0.0.1:1/");
    //  Lines are buffered until a flush writes them at once
    XXL_CHECK_INT (zsys_file_size (path), 0);
    XXL_CHECK_INT (xxl_bridge_routes_flush (routes), 0);
    XXL_CHECK_INT (zsys_file_size (path), strlen ("R 1 app\thttp://127.0.0.1:1/\n"));
    XXL_CHECK_INT (xxl_bridge_routes_flush (routes), 0);
    //  A run's line, and one with a key longer than the line's usual room
    char *text = zsys_sprintf ("%s/run-lines", dir);
    xxl_bridge_routes_t *lines = xxl_bridge_routes_new (text);
    char key [400];
    memset (key, 'k', sizeof key - 1);
    key [sizeof key - 1] = 0;
    XXL_CHECK_INT (xxl_bridge_routes_add_run (lines, 7, "a\tu", 3, 1700000000123), 0);
    XXL_CHECK_INT (xxl_bridge_routes_add_run (lines, INT64_MAX, key, 0, 0), 0);
    xxl_bridge_routes_done (lines, 7);
    xxl_bridge_routes_destroy (&lines);
    char *want = zsys_sprintf ("S 7 3 1700000000123 a\tu\nS 9223372036854775807 0 0 %s\nD 7\n", key);
    FILE *got = fopen (text, "r");
    char read [1024] = "";
    XXL_CHECK (got && fread (read, 1, sizeof read - 1, got) > 0);
    if (got)
        fclose (got);
    XXL_CHECK_STR (read, want);
    zsys_file_delete (text);
    zstr_free (&text);
    zstr_free (&want);
    xxl_bridge_routes_add (routes, 2, "app\thttp://127.0.0.1:2/");
    xxl_bridge_routes_done (routes, 1);
    XXL_CHECK_INT (zsys_file_size (path), strlen ("R 1 app\thttp://127.0.0.1:1/\n"));
    xxl_bridge_routes_destroy (&routes);     //  (flushes)
    //  A torn tail (a crash while writing) is skipped
    FILE *file = fopen (path, "a");
    fputs ("R 3 app\thttp://", file);
    fclose (file);
    routes = xxl_bridge_routes_new (path);
    XXL_CHECK (routes && !xxl_bridge_routes_get (routes, 1));
    XXL_CHECK_STR (routes? xxl_bridge_routes_get (routes, 2): NULL, "app\thttp://127.0.0.1:2/");
    XXL_CHECK (routes && !xxl_bridge_routes_get (routes, 3));
    XXL_CHECK_INT (routes? xxl_bridge_routes_size (routes): 0, 1);
    //  Done ones are compacted away once they outnumber the open ones
    for (int64_t id = 10; id < 10020 && routes; id++) {
        xxl_bridge_routes_add (routes, id, "app\tu");
        xxl_bridge_routes_done (routes, id);
    }
    xxl_bridge_routes_destroy (&routes);
    routes = xxl_bridge_routes_new (path);
    XXL_CHECK_INT (routes? xxl_bridge_routes_size (routes): 0, 1);
    //  A run's job and logDateTime survive a restart, and a compaction
    //  (a restarted bridge asks the executor about the job of each open run)
    for (int pass = 0; pass < 2 && routes; pass++) {
        if (pass == 0) {
            xxl_bridge_routes_add_run (routes, 5, "app	http://127.0.0.1:5/", 42, 1700000000123);
            for (int64_t id = 20000; id < 30010; id++) {
                xxl_bridge_routes_add_run (routes, id, "app	u", 1, 0);
                xxl_bridge_routes_done (routes, id);
            }
        }
        xxl_bridge_routes_destroy (&routes);
        routes = xxl_bridge_routes_new (path);
        int64_t log_id, job_id = 0, ldt = 0, job5 = 0, ldt5 = 0, job2 = 0;
        size_t seen = 0;
        for (const char *key = routes? xxl_bridge_routes_first (routes, &log_id, &job_id, &ldt): NULL;
             key; key = xxl_bridge_routes_next (routes, &log_id, &job_id, &ldt)) {
            seen++;
            if (log_id == 5) {
                job5 = job_id;
                ldt5 = ldt;
                XXL_CHECK_STR (key, "app\thttp://127.0.0.1:5/");
            }
            if (log_id == 2)
                job2 = job_id;
        }
        XXL_CHECK_INT (seen, 2);
        XXL_CHECK_INT (job5, 42);
        XXL_CHECK_INT (ldt5, 1700000000123);
        XXL_CHECK_INT (job2, -1);           //  (an R line: its job unknown)
    }
    xxl_bridge_routes_destroy (&routes);
    zsys_file_delete (path);
    zsys_dir_delete ("%s", dir);
    zstr_free (&path);
}

int
main (void)
{
    zsys_init ();
    test_registry ();
    test_callback ();
    test_callback_shapes ();
    test_answers ();
    test_trigger ();
    test_trigger_strings ();
    test_answer_shapes ();
    test_net ();
    test_routes ();
    return xxl_test_done ();
}
