/*  fuzz_msg.c -- libFuzzer target: the wire codec (sdk/src/xxl_msg*.c).

    Decodes the input as a frame; a message it accepts goes through every
    typed getter on every root field (and on the fields of nested maps),
    xxl_msg_to_json (both forms) and xxl_enc_object, whose output must
    decode again to the same id and type.  A refused frame must still
    give an id only when it is a map.  The input is also encoded as a
    string: the encoder must write valid UTF-8 (xxl_msg_str takes it back
    without an error) whatever the bytes.  See docs/faults.md, "Fuzzing".
*/

#include "xxl/msg.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_ASSERT(cond) do { if (!(cond)) { \
    fprintf (stderr, "fuzz_msg: %s:%d: %s\n", __FILE__, __LINE__, #cond); abort (); } \
} while (0)

static void
s_getters (xxl_msg_t *msg, const msgpack_object *map, int depth)
{
    if (!map || map->type != MSGPACK_OBJECT_MAP || depth > 3)
        return;
    for (uint32_t i = 0; i < map->via.map.size && i < 64; i++) {
        const msgpack_object *key = &map->via.map.ptr [i].key;
        char name [XXL_MSG_MAX_KEY + 1];
        if (key->type == MSGPACK_OBJECT_STR && key->via.str.size <= XXL_MSG_MAX_KEY) {
            memcpy (name, key->via.str.ptr, key->via.str.size);
            name [key->via.str.size] = 0;
        }
        else
            continue;
        const msgpack_object *scope = depth? map: NULL;
        const char *str = xxl_msg_str (msg, scope, name, 0, 1000, NULL);
        if (str)
            S_ASSERT (strlen (str) <= 1000);
        xxl_msg_int (msg, scope, name, 0, -1000, 1000, 0);
        xxl_msg_double (msg, scope, name, 0, -1e9, 1e9, 0);
        xxl_msg_bool (msg, scope, name, 0, 0);
        size_t count = 0;
        const msgpack_object *items = xxl_msg_array (msg, scope, name, 0, 100, &count);
        S_ASSERT (count <= 100 && (items || count == 0));
        for (size_t k = 0; k < count; k++)
            s_getters (msg, &items [k], depth + 1);
        s_getters (msg, xxl_msg_map (msg, scope, name, 0), depth + 1);
        xxl_msg_clear_error (msg);
    }
    xxl_msg_str (msg, NULL, "required-and-missing", 1, 10, NULL);
    S_ASSERT (xxl_msg_error (msg) != NULL);
    xxl_msg_clear_error (msg);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char err [256];
    uint64_t id = 12345;
    xxl_msg_t *msg = xxl_msg_decode (data, size, &id, err, sizeof err);
    if (!msg) {
        S_ASSERT (err [0] != 0);
        //  An id only ever comes from a map
        if (id)
            S_ASSERT (size > 0 && ((data [0] >= 0x80 && data [0] <= 0x8f)
                                || data [0] == 0xde || data [0] == 0xdf));
    }
    else {
        //  (id 0 is accepted: the scheduler's internal ROUTED messages use it)
        S_ASSERT (id == xxl_msg_id (msg));
        const msgpack_object *root = xxl_msg_root (msg);
        s_getters (msg, root, 0);
        for (int pretty = 0; pretty < 2; pretty++) {
            char *json = xxl_msg_to_json (root, pretty);
            S_ASSERT (json != NULL);
            free (json);
        }
        //  Re-encoded, it decodes again to the same id and type
        xxl_enc_t *enc = xxl_enc_new ();
        xxl_enc_object (enc, root);
        size_t copied_size;
        const void *copied = xxl_enc_finish (enc, &copied_size);
        uint64_t id2 = 0;
        xxl_msg_t *again = xxl_msg_decode (copied, copied_size, &id2, err, sizeof err);
        if (!again)
            fprintf (stderr, "fuzz_msg: re-encoded message refused: %s\n", err);
        S_ASSERT (again != NULL);
        S_ASSERT (xxl_msg_id (again) == xxl_msg_id (msg));
        S_ASSERT (strcmp (xxl_msg_type (again), xxl_msg_type (msg)) == 0);
        xxl_msg_destroy (&again);
        xxl_enc_destroy (&enc);
        xxl_msg_destroy (&msg);
    }
    //  Any bytes encoded as a string come back as valid UTF-8
    xxl_enc_t *enc = xxl_enc_new ();
    xxl_enc_request (enc, "X", 1);
    size_t cut = size;
    const char *nul = memchr (data, 0, size);
    if (nul)
        cut = (size_t) (nul - (const char *) data);
    xxl_enc_key (enc, "s");
    xxl_enc_strn (enc, (const char *) data, cut);
    size_t out_size;
    const void *out = xxl_enc_finish (enc, &out_size);
    msg = xxl_msg_decode (out, out_size, NULL, err, sizeof err);
    S_ASSERT (msg != NULL);
    const char *s = xxl_msg_str (msg, NULL, "s", 1, XXL_MSG_MAX_STR, NULL);
    if (!s)
        fprintf (stderr, "fuzz_msg: encoded string refused: %s\n", xxl_msg_error (msg));
    S_ASSERT (s != NULL);
    xxl_msg_destroy (&msg);
    xxl_enc_destroy (&enc);
    return 0;
}
