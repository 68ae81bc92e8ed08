/*  xxl_peer.c -- a scripted peer for the security tests: one DEALER
    connection to a scheduler socket that sends what a test tells it, as an
    honest agent or client would or as a rogue one might.

    Usage: xxl_peer ENDPOINT [--cert SECRET --scheduler-key PUBLIC]
                    [--timeout MS] STEP [STEP ...]
    Steps, separated by "--" ("--" before the first too):
        -- send TYPE [KEY=VALUE ...]
                sends a message with a fresh id and waits for the reply to
                that id; prints {"step": "send TYPE", "code": C, "msg": M}
                (code -1 when no reply came within the timeout)
        -- expect TYPE
                waits for a message of TYPE from the scheduler (answering
                nothing); remembers its id as $ID and its logId (or the
                first TriggerParam's) as $LOG; prints {"step": "expect
                TYPE", "id": ID, "logId": L} (id -1 on timeout)
        -- wait MS
                waits MS milliseconds ($ID and $LOG stay); prints
                {"step": "wait"}
        -- reply CODE
                answers the message remembered by expect with a REPLY
                (same id) of code CODE; prints {"step": "reply"}
        -- reply CODE [msg:TEXT] [KEY=VALUE ...]
                the same with msg TEXT and with content: a map of the
                fields, or, for a single "=VALUE", that value
    VALUE: an integer, s:TEXT, true, false, x:N:TEXT (TEXT N times),
    hex:HEX (a bin of those bytes), $LOG, $ID, or cb:LOGID:CODE[:START] (a
    CALLBACK's items: one item, LOGID may be $LOG; its logDateTime is the
    RUN's that expect saw, else now; START, when given, is its startTime:
    an integer, now, now+MS, now-MS, or s:TEXT to send a string);
    cbx:LOGID:CODE[:START] is the same item followed by a malformed one
    (its logId a string).  Messages the scheduler sends
    while a step waits (BEATs, RUNs) are answered 200 when they are BEATs
    or IDLE_BEATs and otherwise kept for an `expect`.
    Exits 0 when every step ran (whatever the codes), 2 on bad usage.
*/

#include "xxl/msg.h"
#include "xxl_cert.h"

#include <czmq.h>
#include <inttypes.h>

static zlistx_t *s_kept;                //  zframe_t * the scheduler sent, unread
static int64_t s_last_id = -1, s_last_log = -1, s_last_time = -1;

static int64_t
s_value_int (const char *value)
{
    if (streq (value, "$LOG"))
        return s_last_log;
    if (streq (value, "$ID"))
        return s_last_id;
    return strtoll (value, NULL, 10);
}

//  Encodes KEY=VALUE arguments from argv [from] up to the next "--"
static int
s_encode_fields (xxl_enc_t *enc, char **argv, int from, int argc)
{
    int i = from;
    for (; i < argc && strneq (argv [i], "--"); i++) {
        char *eq = strchr (argv [i], '=');
        if (!eq)
            return -1;
        *eq = 0;
        if (*argv [i])
            xxl_enc_key (enc, argv [i]);
        const char *value = eq + 1;
        if (strncmp (value, "s:", 2) == 0)
            xxl_enc_str (enc, value + 2);
        else
        if (streq (value, "true") || streq (value, "false"))
            xxl_enc_bool (enc, streq (value, "true"));
        else
        if (strncmp (value, "x:", 2) == 0) {
            //  x:N:TEXT, TEXT N times
            char *rest;
            size_t times = strtoul (value + 2, &rest, 10);
            const char *text = *rest == ':'? rest + 1: "";
            size_t len = strlen (text);
            char *big = (char *) malloc (times * len + 1);
            assert (big);
            for (size_t t = 0; t < times; t++)
                memcpy (big + t * len, text, len);
            xxl_enc_strn (enc, big, times * len);
            free (big);
        }
        else
        if (strncmp (value, "hex:", 4) == 0) {
            //  a bin of those bytes (at most 255)
            byte bin [2 + 255];
            size_t len = 0;
            for (const char *h = value + 4; h [0] && h [1] && len < 255; h += 2) {
                unsigned v;
                sscanf (h, "%2x", &v);
                bin [2 + len++] = (byte) v;
            }
            bin [0] = 0xc4;
            bin [1] = (byte) len;
            //  (a map counts its keys: a value there is no item)
            xxl_enc_raw (enc, bin, 2 + len, *argv [i]? 0: 1);
        }
        else
        if (strncmp (value, "cb:", 3) == 0 || strncmp (value, "cbx:", 4) == 0) {
            bool malformed = value [2] == 'x';
            char copy [128];
            snprintf (copy, sizeof copy, "%s", value + (malformed? 4: 3));
            char *colon = strchr (copy, ':');
            if (!colon)
                return -1;
            *colon = 0;
            char *start = strchr (colon + 1, ':');
            if (start)
                *start++ = 0;
            xxl_enc_array_begin (enc);
            xxl_enc_map_begin (enc);
            xxl_enc_kint (enc, "logId", s_value_int (copy));
            xxl_enc_kint (enc, "logDateTime", s_last_time > 0? s_last_time: zclock_time ());
            xxl_enc_kint (enc, "handleCode", strtoll (colon + 1, NULL, 10));
            xxl_enc_kstr (enc, "handleMsg", "from xxl_peer");
            if (start) {
                xxl_enc_key (enc, "startTime");
                if (strncmp (start, "s:", 2) == 0)
                    xxl_enc_str (enc, start + 2);
                else
                if (strncmp (start, "now", 3) == 0)
                    xxl_enc_int (enc, zclock_time () + strtoll (start + 3, NULL, 10));
                else
                    xxl_enc_int (enc, strtoll (start, NULL, 10));
            }
            xxl_enc_map_end (enc);
            if (malformed) {
                //  then an item whose logId is a string
                xxl_enc_map_begin (enc);
                xxl_enc_kstr (enc, "logId", "x");
                xxl_enc_kint (enc, "handleCode", 200);
                xxl_enc_map_end (enc);
            }
            xxl_enc_array_end (enc);
        }
        else
            xxl_enc_int (enc, s_value_int (value));
    }
    return i;
}

static void
s_send (zsock_t *sock, xxl_enc_t *enc)
{
    size_t size;
    const void *data = xxl_enc_finish (enc, &size);
    zmq_send (zsock_resolve (sock), data, size, 0);
}

//  The next message from the scheduler within deadline (monotonic ms):
//  BEATs are answered here; NULL on timeout
static xxl_msg_t *
s_next (zsock_t *sock, xxl_enc_t *enc, int64_t deadline, const char *token)
{
    while (true) {
        int64_t left = deadline - zclock_mono ();
        if (left <= 0)
            return NULL;
        zsock_set_rcvtimeo (sock, (int) left);
        zframe_t *frame = zframe_recv (sock);
        if (!frame)
            return NULL;
        char err [256];
        xxl_msg_t *msg = xxl_msg_decode (zframe_data (frame), zframe_size (frame), NULL,
                                         err, sizeof err);
        zframe_destroy (&frame);
        if (!msg)
            continue;
        const char *type = xxl_msg_type (msg);
        if (streq (type, "BEAT") || streq (type, "IDLE_BEAT")) {
            xxl_enc_reply (enc, xxl_msg_id (msg), 200, NULL);
            if (token)
                xxl_enc_kstr (enc, "accessToken", token);
            s_send (sock, enc);
            xxl_msg_destroy (&msg);
            continue;
        }
        return msg;
    }
}

static void
s_print_json_string (const char *text)
{
    putchar ('"');
    for (const unsigned char *c = (const unsigned char *) (text? text: ""); *c; c++)
        if (*c == '"' || *c == '\\')
            printf ("\\%c", *c);
        else
        if (*c < 0x20)
            printf ("\\u%04x", *c);
        else
            putchar (*c);
    putchar ('"');
}

int
main (int argc, char *argv [])
{
    if (argc < 3) {
        fprintf (stderr, "usage: xxl_peer ENDPOINT [--cert F --scheduler-key F] [--timeout MS]"
                         " [--token T] -- STEP ...\n");
        return 2;
    }
    zsys_init ();
    const char *endpoint = argv [1], *cert_file = NULL, *key_file = NULL, *token = NULL;
    int timeout = 5000, i = 2;
    for (; i < argc && strneq (argv [i], "--"); i += 2) {
        if (i + 1 >= argc)
            return 2;
        if (streq (argv [i], "--cert"))
            cert_file = argv [i + 1];
        else
        if (streq (argv [i], "--scheduler-key"))
            key_file = argv [i + 1];
        else
        if (streq (argv [i], "--timeout"))
            timeout = atoi (argv [i + 1]);
        else
        if (streq (argv [i], "--token"))
            token = argv [i + 1];
        else
            return 2;
    }
    zsock_t *sock = zsock_new (ZMQ_DEALER);
    zsock_set_linger (sock, 0);
    zcert_t *cert = NULL;
    if (cert_file) {
        char err [512] = "no --scheduler-key", server [41];
        cert = xxl_cert_load_secret (cert_file, err, sizeof err);
        if (!cert || !key_file || xxl_cert_load_public (key_file, server, err, sizeof err)) {
            fprintf (stderr, "xxl_peer: %s\n", err);
            return 2;
        }
        zcert_apply (cert, sock);
        zsock_set_curve_serverkey (sock, server);
    }
    if (zsock_connect (sock, "%s", endpoint)) {
        fprintf (stderr, "xxl_peer: cannot connect to %s\n", endpoint);
        return 2;
    }
    s_kept = zlistx_new ();
    xxl_enc_t *enc = xxl_enc_new ();
    uint64_t next_id = 1000;
    int rc = 0;
    while (i < argc && streq (argv [i], "--") && i + 1 < argc) {
        const char *step = argv [i + 1];
        i += 2;
        int64_t deadline = zclock_mono () + timeout;
        if (streq (step, "send") && i < argc) {
            const char *type = argv [i++];
            uint64_t id = ++next_id;
            xxl_enc_request (enc, type, id);
            if (token)
                xxl_enc_kstr (enc, "accessToken", token);
            int end = s_encode_fields (enc, argv, i, argc);
            if (end < 0) {
                rc = 2;
                break;
            }
            i = end;
            s_send (sock, enc);
            xxl_msg_t *reply = NULL;
            while ((reply = s_next (sock, enc, deadline, token))) {
                if (streq (xxl_msg_type (reply), "REPLY") && xxl_msg_id (reply) == id)
                    break;
                //  (not ours: kept for an expect)
                zlistx_add_end (s_kept, reply);
            }
            const msgpack_object *code = reply? xxl_msg_get (xxl_msg_root (reply), "code"): NULL;
            const char *text = reply? xxl_msg_str (reply, NULL, "msg", 0, 1 << 20, NULL): NULL;
            printf ("{\"step\": \"send %s\", \"code\": %" PRId64 ", \"msg\": ", type,
                    code && code->type == MSGPACK_OBJECT_POSITIVE_INTEGER? (int64_t) code->via.u64: -1);
            s_print_json_string (text);
            printf ("}\n");
            xxl_msg_destroy (&reply);
        }
        else
        if (streq (step, "wait") && i < argc) {
            //  MS on, answering BEATs, keeping the rest for an expect
            int64_t until = zclock_mono () + atoll (argv [i++]);
            xxl_msg_t *msg;
            while ((msg = s_next (sock, enc, until, token)))
                zlistx_add_end (s_kept, msg);
            printf ("{\"step\": \"wait\"}\n");
        }
        else
        if (streq (step, "expect") && i < argc) {
            const char *type = argv [i++];
            xxl_msg_t *msg = NULL;
            for (void *item = zlistx_first (s_kept); item; item = zlistx_next (s_kept))
                if (streq (xxl_msg_type ((xxl_msg_t *) item), type)) {
                    msg = (xxl_msg_t *) item;
                    zlistx_detach_cur (s_kept);
                    break;
                }
            while (!msg && (msg = s_next (sock, enc, deadline, token))) {
                if (streq (xxl_msg_type (msg), type))
                    break;
                zlistx_add_end (s_kept, msg);
                msg = NULL;
            }
            s_last_id = msg? (int64_t) xxl_msg_id (msg): -1;
            s_last_log = -1;
            s_last_time = -1;
            if (msg) {
                const msgpack_object *root = xxl_msg_root (msg);
                const msgpack_object *log = xxl_msg_get (root, "logId");
                const msgpack_object *time = xxl_msg_get (root, "logDateTime");
                const msgpack_object *items = xxl_msg_get (root, "triggerParams");
                if (!log && items && items->type == MSGPACK_OBJECT_ARRAY && items->via.array.size) {
                    log = xxl_msg_get (&items->via.array.ptr [0], "logId");
                    time = xxl_msg_get (&items->via.array.ptr [0], "logDateTime");
                }
                if (log && log->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
                    s_last_log = (int64_t) log->via.u64;
                if (time && time->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
                    s_last_time = (int64_t) time->via.u64;
            }
            printf ("{\"step\": \"expect %s\", \"id\": %" PRId64 ", \"logId\": %" PRId64 "}\n",
                    type, s_last_id, s_last_log);
            xxl_msg_destroy (&msg);
        }
        else
        if (streq (step, "reply") && i < argc) {
            int code = atoi (argv [i++]);
            const char *text = NULL;
            if (i < argc && strncmp (argv [i], "msg:", 4) == 0)
                text = argv [i++] + 4;
            xxl_enc_reply (enc, (uint64_t) s_last_id, code, text);
            if (token)
                xxl_enc_kstr (enc, "accessToken", token);
            if (i < argc && strneq (argv [i], "--")) {
                //  content: the value of "=VALUE", else a map of the fields
                xxl_enc_key (enc, "content");
                bool single = argv [i][0] == '=';
                if (!single)
                    xxl_enc_map_begin (enc);
                int end = s_encode_fields (enc, argv, i, argc);
                if (end < 0) {
                    rc = 2;
                    break;
                }
                i = end;
                if (!single)
                    xxl_enc_map_end (enc);
            }
            s_send (sock, enc);
            printf ("{\"step\": \"reply\"}\n");
        }
        else {
            rc = 2;
            break;
        }
        fflush (stdout);
    }
    xxl_msg_t *msg;
    while ((msg = (xxl_msg_t *) zlistx_first (s_kept))) {
        zlistx_detach_cur (s_kept);
        xxl_msg_destroy (&msg);
    }
    zlistx_destroy (&s_kept);
    xxl_enc_destroy (&enc);
    zcert_destroy (&cert);
    zsock_destroy (&sock);
    return rc;
}
