/*  xxl_req.c -- sends one api request and prints its reply, for tests.

    Usage: xxl_req API TYPE [KEY=INT | KEY=s:TEXT | KEY=@FILE]...
    Prints {"code": C, "msg": M, "size": BYTES, "content": ...} as one JSON
    line (size: the reply frame's bytes); exits 0 when a reply came.
*/

#include "xxl/msg.h"

#include <czmq.h>
#include <inttypes.h>

int
main (int argc, char *argv [])
{
    if (argc < 3) {
        fprintf (stderr, "usage: xxl_req API TYPE [KEY=INT|KEY=s:TEXT|KEY=@FILE]...\n");
        return 2;
    }
    zsys_init ();
    zsock_t *sock = zsock_new (ZMQ_DEALER);
    zsock_set_linger (sock, 0);
    zsock_set_rcvtimeo (sock, 10000);
    if (zsock_connect (sock, "%s", argv [1])) {
        fprintf (stderr, "cannot connect to %s\n", argv [1]);
        return 2;
    }
    xxl_enc_t *enc = xxl_enc_new ();
    xxl_enc_request (enc, argv [2], 77);
    for (int i = 3; i < argc; i++) {
        char *eq = strchr (argv [i], '=');
        if (!eq)
            return 2;
        *eq = 0;
        xxl_enc_key (enc, argv [i]);
        const char *value = eq + 1;
        if (strncmp (value, "s:", 2) == 0)
            xxl_enc_str (enc, value + 2);
        else
        if (*value == '@') {
            zchunk_t *chunk = zchunk_slurp (value + 1, 0);
            if (!chunk)
                return 2;
            xxl_enc_strn (enc, (const char *) zchunk_data (chunk), zchunk_size (chunk));
            zchunk_destroy (&chunk);
        }
        else
            xxl_enc_int (enc, strtoll (value, NULL, 10));
    }
    size_t size;
    const void *data = xxl_enc_finish (enc, &size);
    zmq_send (zsock_resolve (sock), data, size, 0);
    zframe_t *frame = zframe_recv (sock);
    int rc = 1;
    if (frame) {
        char err [256];
        xxl_msg_t *reply = xxl_msg_decode (zframe_data (frame), zframe_size (frame), NULL,
                                           err, sizeof err);
        if (reply) {
            const msgpack_object *code = xxl_msg_get (xxl_msg_root (reply), "code");
            const msgpack_object *content = xxl_msg_get (xxl_msg_root (reply), "content");
            const msgpack_object *msg = xxl_msg_get (xxl_msg_root (reply), "msg");
            char *content_json = content? xxl_msg_to_json (content, 0): NULL;
            char *msg_json = msg? xxl_msg_to_json (msg, 0): NULL;
            printf ("{\"code\":%" PRIu64 ",\"msg\":%s,\"size\":%zu,\"content\":%s}\n",
                    code && code->type == MSGPACK_OBJECT_POSITIVE_INTEGER? code->via.u64: 0,
                    msg_json? msg_json: "null", zframe_size (frame),
                    content_json? content_json: "null");
            free (content_json);
            free (msg_json);
            xxl_msg_destroy (&reply);
            rc = 0;
        }
        else
            fprintf (stderr, "bad reply: %s\n", err);
        zframe_destroy (&frame);
    }
    else
        fprintf (stderr, "no reply\n");
    xxl_enc_destroy (&enc);
    zsock_destroy (&sock);
    return rc;
}
