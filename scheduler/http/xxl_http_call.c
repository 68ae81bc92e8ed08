/*  xxl_http_call.c -- one api request from the HTTP server to the engine
    (xxl_http_int.h), and the answer made of its reply.

    The request is a msgpack map {id, v, t, fields...}, as any ZeroMQ
    client sends (docs/protocol.md), made of a JSON object; it goes with
    the caller's credentials frame on a DEALER of its own to the engine's
    inproc `http` socket, and waits for the reply at most wait_ms, in
    slices, giving up when the server stops.  The reply's content comes
    back as JSON (xxl_msg_to_json: xxl-ctl --json's encoding, made UTF-8).
    Runs on the connection's thread; calls only xxl_http_answer.c of the
    server's files.
*/

#include "xxl_http_int.h"
#include "xxl/msg.h"

#include <msgpack.h>

//  ---------------------------------------------------------------------
//  JSON to msgpack

static int
s_pack (msgpack_packer *pk, json_t *value, int depth)
{
    if (depth > XXL_MSG_MAX_DEPTH)
        return -1;
    switch (json_typeof (value)) {
        case JSON_OBJECT: {
            msgpack_pack_map (pk, json_object_size (value));
            const char *key;
            json_t *item;
            json_object_foreach (value, key, item) {
                msgpack_pack_str_with_body (pk, key, strlen (key));
                if (s_pack (pk, item, depth + 1))
                    return -1;
            }
            return 0;
        }
        case JSON_ARRAY: {
            msgpack_pack_array (pk, json_array_size (value));
            size_t index;
            json_t *item;
            json_array_foreach (value, index, item)
                if (s_pack (pk, item, depth + 1))
                    return -1;
            return 0;
        }
        case JSON_STRING:
            return msgpack_pack_str_with_body (pk, json_string_value (value),
                                               json_string_length (value));
        case JSON_INTEGER:
            return msgpack_pack_int64 (pk, json_integer_value (value));
        case JSON_REAL:
            return msgpack_pack_double (pk, json_real_value (value));
        case JSON_TRUE:
            return msgpack_pack_true (pk);
        case JSON_FALSE:
            return msgpack_pack_false (pk);
        default:
            return msgpack_pack_nil (pk);
    }
}

//  The api request {v, t, id, fields...} for fields (an object), into buf
static int
s_request_pack (msgpack_sbuffer *buf, const char *type, uint64_t id, json_t *fields)
{
    msgpack_packer pk;
    msgpack_packer_init (&pk, buf, msgpack_sbuffer_write);
    //  (id first: any frame then gets an answer, docs/protocol.md; the
    //  envelope's keys are ours: a body's id, v, t are left out)
    size_t count = 3;
    const char *key;
    json_t *item;
    json_object_foreach (fields, key, item)
        count += !(streq (key, "id") || streq (key, "v") || streq (key, "t"));
    msgpack_pack_map (&pk, count);
    msgpack_pack_str_with_body (&pk, "id", 2);
    msgpack_pack_uint64 (&pk, id);
    msgpack_pack_str_with_body (&pk, "v", 1);
    msgpack_pack_int (&pk, XXL_PROTOCOL_VERSION);
    msgpack_pack_str_with_body (&pk, "t", 1);
    msgpack_pack_str_with_body (&pk, type, strlen (type));
    json_object_foreach (fields, key, item) {
        if (streq (key, "id") || streq (key, "v") || streq (key, "t"))
            continue;
        msgpack_pack_str_with_body (&pk, key, strlen (key));
        if (s_pack (&pk, item, 1))
            return -1;
    }
    return 0;
}

//  ---------------------------------------------------------------------
//  The engine

//  (xxl_http_int.h)
int
xxl_http_call (xxl_http_t *self, const char *auth, const char *type, json_t *fields,
               json_t **content, char *text, size_t textlen)
{
    assert (self && auth && type && content && text);
    assert (json_is_object (fields));
    *content = NULL;
    msgpack_sbuffer buf;
    msgpack_sbuffer_init (&buf);
    uint64_t id = __atomic_add_fetch (&self->next_id, 1, __ATOMIC_RELAXED);
    if (s_request_pack (&buf, type, id, fields) || buf.size > XXL_MSG_MAX_FRAME) {
        msgpack_sbuffer_destroy (&buf);
        snprintf (text, textlen, "the request is too large or too deeply nested");
        return XXL_BAD_REQUEST;
    }
    zsock_t *sock = zsock_new (ZMQ_DEALER);
    int code = XXL_NO_ANSWER;
    snprintf (text, textlen, "the scheduler did not answer within %d ms", self->wait_ms);
    if (sock && zsock_connect (sock, "%s", self->engine) == 0) {
        zsock_set_linger (sock, 0);
        zmsg_t *msg = zmsg_new ();
        zmsg_addstr (msg, auth);
        zmsg_addmem (msg, buf.data, buf.size);
        if (zmsg_send (&msg, sock) == 0) {
            //  (in slices: a stopping server does not wait out the engine)
            zframe_t *reply = NULL;
            int64_t until = zclock_mono () + self->wait_ms;
            zmq_pollitem_t item = { zsock_resolve (sock), 0, ZMQ_POLLIN, 0 };
            while (!__atomic_load_n (&self->stopping, __ATOMIC_RELAXED)
               &&  zclock_mono () < until) {
                if (zmq_poll (&item, 1, 100) > 0) {
                    reply = zframe_recv (sock);
                    break;
                }
            }
            if (!reply && __atomic_load_n (&self->stopping, __ATOMIC_RELAXED)) {
                code = XXL_UNAVAILABLE;
                snprintf (text, textlen, "the scheduler is stopping");
            }
            char reason [256];
            xxl_msg_t *decoded = reply? xxl_msg_decode (zframe_data (reply), zframe_size (reply),
                                                        NULL, reason, sizeof reason): NULL;
            if (decoded) {
                code = (int) xxl_msg_int (decoded, NULL, "code", 1, 0, 999, XXL_FAILURE);
                const char *msg_text = xxl_msg_str (decoded, NULL, "msg", 0, XXL_MSG_MAX_STR, "");
                snprintf (text, textlen, "%s", msg_text? msg_text: "");
                const msgpack_object *value = xxl_msg_get (xxl_msg_root (decoded), "content");
                if (value && value->type != MSGPACK_OBJECT_NIL) {
                    //  (a string that is not UTF-8, such as a run log's bytes,
                    //  gets U+FFFD for each bad sequence: JSON is UTF-8)
                    char *json = xxl_msg_to_json (value, 0);
                    char *fixed = json? xxl_utf8_repair (json): NULL;
                    *content = json? json_loads (fixed? fixed: json, JSON_DECODE_ANY, NULL): NULL;
                    free (fixed);
                    free (json);
                    if (!*content && code == XXL_OK) {
                        code = XXL_FAILURE;
                        snprintf (text, textlen, "the scheduler's reply cannot be written as JSON");
                    }
                }
                xxl_msg_destroy (&decoded);
            }
            else
            if (reply) {
                code = XXL_FAILURE;
                snprintf (text, textlen, "the scheduler's reply cannot be read: %s", reason);
            }
            zframe_destroy (&reply);
        }
        zmsg_destroy (&msg);
    }
    else
        snprintf (text, textlen, "cannot reach the scheduler's engine");
    zsock_destroy (&sock);
    msgpack_sbuffer_destroy (&buf);
    return code;
}

//  apps as the api has them ("a,b") → a JSON array, in an object
static void
s_apps_array (json_t *object)
{
    json_t *apps = object? json_object_get (object, "apps"): NULL;
    if (!apps || !json_is_string (apps))
        return;
    json_t *array = json_array ();
    const char *p = json_string_value (apps);
    while (*p) {
        const char *end = strchr (p, ',');
        size_t length = end? (size_t) (end - p): strlen (p);
        if (length)
            json_array_append_new (array, json_stringn (p, length));
        p += length + (end != NULL);
    }
    json_object_set_new (object, "apps", array);
}

//  (xxl_http_int.h)
void
xxl_http_forward (xxl_http_t *self, answer_t *answer, const char *auth, const char *type,
                  json_t *fields, int ok)
{
    assert (answer);
    json_t *content;
    char text [1024];
    int code = xxl_http_call (self, auth, type, fields, &content, text, sizeof text);
    if (code == XXL_OK) {
        //  Users, tokens and sessions show apps as a list
        if (json_is_object (content)) {
            s_apps_array (content);
            json_t *list = json_object_get (content, "users");
            if (!list)
                list = json_object_get (content, "tokens");
            size_t index;
            json_t *item;
            if (json_is_array (list)
            &&  (!strncmp (type, "USER_", 5) || !strncmp (type, "TOKEN_", 6)))
                json_array_foreach (list, index, item)
                    s_apps_array (item);
        }
        xxl_http_answer_json (answer, ok, content? content: json_object ());
    }
    else {
        json_decref (content);
        xxl_http_error (answer, code >= 400 && code <= 599? code: 500, text);
    }
}
