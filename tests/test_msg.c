/*  test_msg.c -- the wire codec: round trips, limits, and refusals.
*/

#include "xxl/msg.h"
#include "xxl_test.h"

#include <stdlib.h>
#include <string.h>

static xxl_msg_t *
s_decode_bytes (const unsigned char *data, size_t size, char *err, size_t errlen)
{
    return xxl_msg_decode (data, size, NULL, err, errlen);
}

static void
test_round_trip (void)
{
    xxl_enc_t *enc = xxl_enc_new ();
    xxl_enc_request (enc, "RUN", 42);
    xxl_enc_kint (enc, "jobId", 7);
    xxl_enc_kint (enc, "negative", -5);
    xxl_enc_kstr (enc, "executorHandler", "demoJobHandler");
    xxl_enc_kbool (enc, "flag", 1);
    xxl_enc_key (enc, "items");
    xxl_enc_array_begin (enc);
    for (int i = 0; i < 3; i++) {
        xxl_enc_map_begin (enc);
        xxl_enc_kint (enc, "logId", i + 1);
        xxl_enc_map_end (enc);
    }
    xxl_enc_array_end (enc);
    size_t size;
    const void *data = xxl_enc_finish (enc, &size);
    char err [256];
    //  Decode from a scratch copy that is wiped at once: the message must
    //  not point into the caller's buffer
    char *scratch = (char *) malloc (size);
    memcpy (scratch, data, size);
    xxl_msg_t *msg = xxl_msg_decode (scratch, size, NULL, err, sizeof err);
    memset (scratch, 0, size);
    free (scratch);
    XXL_CHECK (msg != NULL);
    if (!msg) {
        xxl_enc_destroy (&enc);
        return;
    }
    XXL_CHECK (strcmp (xxl_msg_type (msg), "RUN") == 0);
    XXL_CHECK (xxl_msg_id (msg) == 42);
    XXL_CHECK (xxl_msg_int (msg, NULL, "jobId", 1, 0, 100, -1) == 7);
    XXL_CHECK (xxl_msg_int (msg, NULL, "negative", 1, -10, 0, 0) == -5);
    XXL_CHECK (strcmp (xxl_msg_str (msg, NULL, "executorHandler", 1, 255, ""), "demoJobHandler") == 0);
    XXL_CHECK (xxl_msg_bool (msg, NULL, "flag", 1, 0) == 1);
    size_t count;
    const msgpack_object *items = xxl_msg_array (msg, NULL, "items", 1, 10, &count);
    XXL_CHECK (items && count == 3);
    XXL_CHECK (items && xxl_msg_int (msg, &items [2], "logId", 1, 0, 10, 0) == 3);
    XXL_CHECK (xxl_msg_error (msg) == NULL);
    //  Optional field missing: default, no error
    XXL_CHECK (xxl_msg_int (msg, NULL, "absent", 0, 0, 10, 9) == 9);
    XXL_CHECK (xxl_msg_error (msg) == NULL);
    //  Lax: the value in range; absent, ill-typed or out of range the
    //  default, nothing latched, and a latched error stays
    XXL_CHECK (xxl_msg_int_lax (msg, NULL, "jobId", 1, 100, 0) == 7);
    XXL_CHECK (xxl_msg_int_lax (msg, NULL, "negative", -10, 0, 1) == -5);
    XXL_CHECK (xxl_msg_int_lax (msg, NULL, "absent", 0, 10, 0) == 0);
    XXL_CHECK (xxl_msg_int_lax (msg, NULL, "executorHandler", 0, 10, 0) == 0);
    XXL_CHECK (xxl_msg_int_lax (msg, NULL, "jobId", 8, 100, 0) == 0);
    XXL_CHECK (xxl_msg_error (msg) == NULL);
    xxl_msg_fail (msg, "earlier");
    XXL_CHECK (xxl_msg_int_lax (msg, NULL, "jobId", 1, 100, 0) == 7);
    XXL_CHECK (xxl_msg_error (msg) && strcmp (xxl_msg_error (msg), "earlier") == 0);
    xxl_msg_clear_error (msg);
    //  JSON of the whole message
    char *json = xxl_msg_to_json (xxl_msg_root (msg), 0);
    XXL_CHECK (json && strstr (json, "\"executorHandler\":\"demoJobHandler\""));
    XXL_CHECK (json && strstr (json, "\"items\":[{\"logId\":1},{\"logId\":2},{\"logId\":3}]"));
    XXL_CHECK (json && strstr (json, "\"negative\":-5"));
    free (json);
    xxl_msg_destroy (&msg);
    XXL_CHECK (msg == NULL);
    xxl_enc_destroy (&enc);
    XXL_CHECK (enc == NULL);
}

static void
test_field_errors (void)
{
    xxl_enc_t *enc = xxl_enc_new ();
    xxl_enc_request (enc, "JOB_ADD", 1);
    xxl_enc_kstr (enc, "name", "x");
    xxl_enc_kint (enc, "count", 5000);
    const char nul [] = { 'a', 0, 'b' };
    xxl_enc_key (enc, "withNul");
    xxl_enc_strn (enc, nul, 3);
    size_t size;
    const void *data = xxl_enc_finish (enc, &size);
    char err [256];
    xxl_msg_t *msg = xxl_msg_decode (data, size, NULL, err, sizeof err);
    XXL_CHECK (msg);
    //  Wrong type: first error latched and named
    xxl_msg_int (msg, NULL, "name", 1, 0, 10, 0);
    XXL_CHECK (xxl_msg_error (msg) && strstr (xxl_msg_error (msg), "'name' must be an integer"));
    xxl_msg_destroy (&msg);

    msg = xxl_msg_decode (data, size, NULL, err, sizeof err);
    xxl_msg_int (msg, NULL, "count", 1, 0, 1000, 0);
    XXL_CHECK (xxl_msg_error (msg) && strstr (xxl_msg_error (msg), "outside"));
    xxl_msg_destroy (&msg);

    msg = xxl_msg_decode (data, size, NULL, err, sizeof err);
    xxl_msg_str (msg, NULL, "withNul", 1, 100, NULL);
    XXL_CHECK (xxl_msg_error (msg) && strstr (xxl_msg_error (msg), "NUL"));
    xxl_msg_destroy (&msg);

    msg = xxl_msg_decode (data, size, NULL, err, sizeof err);
    xxl_msg_str (msg, NULL, "missing", 1, 100, NULL);
    XXL_CHECK (xxl_msg_error (msg) && strstr (xxl_msg_error (msg), "'missing' is required"));
    xxl_msg_destroy (&msg);

    msg = xxl_msg_decode (data, size, NULL, err, sizeof err);
    xxl_msg_str (msg, NULL, "name", 1, 0, NULL);
    XXL_CHECK (xxl_msg_error (msg) && strstr (xxl_msg_error (msg), "over its limit"));
    xxl_msg_destroy (&msg);
    xxl_enc_destroy (&enc);
}

static void
test_refusals (void)
{
    char err [256];
    uint64_t id;
    //  Empty and oversized frames
    XXL_CHECK (xxl_msg_decode ("", 0, NULL, err, sizeof err) == NULL);
    XXL_CHECK (xxl_msg_decode ("x", XXL_MSG_MAX_FRAME + 1, NULL, err, sizeof err) == NULL);
    XXL_CHECK (strstr (err, "over the"));
    //  Root not a map
    const unsigned char array [] = { 0x91, 0x01 };
    XXL_CHECK (s_decode_bytes (array, sizeof array, err, sizeof err) == NULL);
    XXL_CHECK (strstr (err, "root is not a map"));
    //  Truncated string
    const unsigned char truncated [] = { 0x81, 0xa1, 'v', 0xa5, 'a' };
    XXL_CHECK (s_decode_bytes (truncated, sizeof truncated, err, sizeof err) == NULL);
    XXL_CHECK (strstr (err, "truncated"));
    //  An array32 declaring 4 billion items in a 9-byte frame
    const unsigned char liar [] = { 0x81, 0xa1, 'x', 0xdd, 0xff, 0xff, 0xff, 0xff, 0x00 };
    XXL_CHECK (s_decode_bytes (liar, sizeof liar, err, sizeof err) == NULL);
    XXL_CHECK (strstr (err, "larger than the frame"));
    //  A map32 declaring 2 billion pairs
    const unsigned char liar_map [] = { 0xdf, 0x7f, 0xff, 0xff, 0xff, 0xa1, 'v', 0x01 };
    XXL_CHECK (s_decode_bytes (liar_map, sizeof liar_map, err, sizeof err) == NULL);
    //  Nesting deeper than the limit
    unsigned char deep [64];
    size_t n = 0;
    deep [n++] = 0x81; deep [n++] = 0xa1; deep [n++] = 'x';
    for (int i = 0; i < 20; i++)
        deep [n++] = 0x91;
    deep [n++] = 0x01;
    XXL_CHECK (s_decode_bytes (deep, n, err, sizeof err) == NULL);
    XXL_CHECK (strstr (err, "too deep"));
    //  Trailing garbage
    xxl_enc_t *enc = xxl_enc_new ();
    xxl_enc_request (enc, "PING", 9);
    size_t size;
    const unsigned char *data = (const unsigned char *) xxl_enc_finish (enc, &size);
    unsigned char *extra = (unsigned char *) malloc (size + 1);
    memcpy (extra, data, size);
    extra [size] = 0xc0;
    XXL_CHECK (s_decode_bytes (extra, size + 1, err, sizeof err) == NULL);
    XXL_CHECK (strstr (err, "trailing"));
    //  Each strict prefix of a valid frame is refused, never crashes
    int refused = 1;
    for (size_t cut = 1; cut < size; cut++)
        if (s_decode_bytes (data, cut, err, sizeof err))
            refused = 0;
    XXL_CHECK (refused);
    free (extra);
    //  Ext type and the reserved byte
    const unsigned char ext [] = { 0x81, 0xa1, 'x', 0xd4, 0x01, 0x02 };
    XXL_CHECK (s_decode_bytes (ext, sizeof ext, err, sizeof err) == NULL);
    const unsigned char reserved [] = { 0x81, 0xa1, 'x', 0xc1 };
    XXL_CHECK (s_decode_bytes (reserved, sizeof reserved, err, sizeof err) == NULL);
    //  Non-string key
    const unsigned char intkey [] = { 0x81, 0x01, 0x01 };
    XXL_CHECK (s_decode_bytes (intkey, sizeof intkey, err, sizeof err) == NULL);
    XXL_CHECK (strstr (err, "key is not a string"));
    //  Wrong protocol version: refused, but the id is still given back
    xxl_enc_reset (enc);
    xxl_enc_map_begin (enc);
    xxl_enc_kint (enc, "v", 99);
    xxl_enc_kstr (enc, "t", "PING");
    xxl_enc_kint (enc, "id", 77);
    data = (const unsigned char *) xxl_enc_finish (enc, &size);
    XXL_CHECK (xxl_msg_decode (data, size, &id, err, sizeof err) == NULL);
    XXL_CHECK (id == 77);
    XXL_CHECK (strstr (err, "protocol version"));
    //  Missing t
    xxl_enc_reset (enc);
    xxl_enc_map_begin (enc);
    xxl_enc_kint (enc, "v", 1);
    xxl_enc_kint (enc, "id", 5);
    data = (const unsigned char *) xxl_enc_finish (enc, &size);
    XXL_CHECK (xxl_msg_decode (data, size, &id, err, sizeof err) == NULL);
    XXL_CHECK (strstr (err, "'t'"));
    //  Missing id
    xxl_enc_reset (enc);
    xxl_enc_map_begin (enc);
    xxl_enc_kint (enc, "v", 1);
    xxl_enc_kstr (enc, "t", "PING");
    data = (const unsigned char *) xxl_enc_finish (enc, &size);
    XXL_CHECK (xxl_msg_decode (data, size, &id, err, sizeof err) == NULL);
    XXL_CHECK (strstr (err, "'id'"));
    xxl_enc_destroy (&enc);
}

//  A frame the strict scan refuses still gives its id back, so the
//  scheduler answers 400 instead of nothing (issue 16)
typedef struct {
    unsigned char data [300000];
    size_t size;
} s_frame_t;

static void
s_put (s_frame_t *f, const void *bytes, size_t n)
{
    memcpy (f->data + f->size, bytes, n);
    f->size += n;
}

static void
s_putc (s_frame_t *f, unsigned char c)
{
    f->data [f->size++] = c;
}

//  "id": 4660 (uint16)
static void
s_put_id (s_frame_t *f)
{
    s_put (f, "\xa2" "id" "\xcd\x12\x34", 6);
}

//  Decodes f: must be refused with a "malformed message" reason (when
//  `malformed`) and give back `expected` as the id
static int
s_refused_with_id (s_frame_t *f, uint64_t expected, int malformed)
{
    char err [256] = "";
    uint64_t id = 99;
    xxl_msg_t *msg = xxl_msg_decode (f->data, f->size, &id, err, sizeof err);
    int ok = msg == NULL && id == expected
          && (!malformed || strncmp (err, "malformed message: ", 19) == 0);
    if (!ok)
        fprintf (stderr, "  frame of %zu bytes: id %llu (expected %llu), reason '%s'\n",
                 f->size, (unsigned long long) id, (unsigned long long) expected, err);
    xxl_msg_destroy (&msg);
    return ok;
}

static void
test_lenient_id (void)
{
    s_frame_t *f = (s_frame_t *) malloc (sizeof (s_frame_t));
    //  Trailing bytes after a valid map
    f->size = 0;
    s_putc (f, 0x83);
    s_put (f, "\xa1v\x01\xa1t\xa4PING", 10);
    s_put_id (f);
    s_putc (f, 0xc0);
    XXL_CHECK (s_refused_with_id (f, 4660, 1));
    //  0xc1 after the id: readable; before it: the walk stops
    f->size = 0;
    s_putc (f, 0x82);
    s_put_id (f);
    s_put (f, "\xa1x\xc1", 3);
    XXL_CHECK (s_refused_with_id (f, 4660, 1));
    f->size = 0;
    s_putc (f, 0x82);
    s_put (f, "\xa1x\xc1", 3);
    s_put_id (f);
    XXL_CHECK (s_refused_with_id (f, 0, 1));
    //  Ext types before the id are skipped by their length: fixext 1..16,
    //  ext 8/16/32 (as values and as keys)
    f->size = 0;
    s_putc (f, 0x88);
    s_put (f, "\xa1" "a" "\xd4\x01\x02", 5);
    s_put (f, "\xa1" "b" "\xd8\x01" "0123456789abcdef", 20);
    s_put (f, "\xa1" "c" "\xc7\x03\x05" "\xc1\xc1\xc1", 8);
    s_put (f, "\xa1" "d" "\xc8\x00\x02\x05" "\xa2id", 7);
    s_put (f, "\xa1" "e" "\xc9\x00\x00\x00\x01\x05" "\xc1", 9);
    s_put (f, "\xd5\x01\xa2id" "\x01", 5);
    s_put (f, "\xa1" "f" "\x91\xd6\x01\xc1\xc1\xc1\xc1", 9);
    s_put_id (f);
    XXL_CHECK (s_refused_with_id (f, 4660, 1));
    //  Non-string keys before the id are skipped (a map as a key too)
    f->size = 0;
    s_putc (f, 0x84);
    s_put (f, "\x01\x02", 2);
    s_put (f, "\xcb" "12345678" "\xc0", 10);
    s_put (f, "\x81\xa2id\x05\xc3", 6);
    s_put_id (f);
    XXL_CHECK (s_refused_with_id (f, 4660, 1));
    //  Truncated: a frame cut after the id; cut before it, none
    f->size = 0;
    s_putc (f, 0x82);
    s_put_id (f);
    s_put (f, "\xa1x\xa5" "ab", 5);
    XXL_CHECK (s_refused_with_id (f, 4660, 1));
    f->size = 0;
    s_putc (f, 0x82);
    s_put (f, "\xa1x\xa5" "ab", 5);
    XXL_CHECK (s_refused_with_id (f, 0, 1));
    //  Every cut of a real request after its id gives the id back
    xxl_enc_t *enc = xxl_enc_new ();
    xxl_enc_request (enc, "JOB_TRIGGER", 31337);
    xxl_enc_kstr (enc, "executorParam", "a long enough parameter");
    xxl_enc_kint (enc, "id2", 7);
    size_t size, id_end = 0;
    const unsigned char *data = (const unsigned char *) xxl_enc_finish (enc, &size);
    for (size_t i = 0; i + 6 <= size; i++)
        if (memcmp (data + i, "\xa2id\xcd\x7a\x69", 6) == 0)
            id_end = i + 6;             //  (31337 as a uint16)
    XXL_CHECK (id_end > 0);
    int all = 1;
    for (size_t cut = 1; cut < size; cut++) {
        f->size = 0;
        s_put (f, data, cut);
        if (!s_refused_with_id (f, cut >= id_end? 31337: 0, 1))
            all = 0;
    }
    XXL_CHECK (all);
    xxl_enc_destroy (&enc);
    //  A nested container longer than the frame: after the id, readable;
    //  before it, the walk stops
    f->size = 0;
    s_putc (f, 0x82);
    s_put_id (f);
    s_put (f, "\xa1x\xdd\xff\xff\xff\xff\x00", 8);
    XXL_CHECK (s_refused_with_id (f, 4660, 1));
    f->size = 0;
    s_putc (f, 0x82);
    s_put (f, "\xa1x\xdd\xff\xff\xff\xff\x00", 8);
    s_put_id (f);
    XXL_CHECK (s_refused_with_id (f, 0, 1));
    //  The root's own count is only an upper bound: a map32 declaring 2
    //  billion pairs, the id among the pairs it has
    f->size = 0;
    s_put (f, "\xdf\x7f\xff\xff\xff\xa1v\x01", 8);
    s_put_id (f);
    XXL_CHECK (s_refused_with_id (f, 4660, 1));
    //  9 levels of nesting before the id (and 100,000: no recursion)
    f->size = 0;
    s_putc (f, 0x82);
    s_put (f, "\xa1x", 2);
    for (int i = 0; i < 9; i++)
        s_putc (f, 0x91);
    s_putc (f, 0x01);
    s_put_id (f);
    XXL_CHECK (s_refused_with_id (f, 4660, 1));
    f->size = 0;
    s_putc (f, 0x82);
    s_put (f, "\xa1x", 2);
    for (int i = 0; i < 100000; i++)
        s_putc (f, 0x81), s_putc (f, 0x01);
    s_putc (f, 0x01);
    s_put_id (f);
    XXL_CHECK (s_refused_with_id (f, 4660, 1));
    //  A 65-byte key before the id
    f->size = 0;
    s_putc (f, 0x82);
    s_putc (f, 0xd9);
    s_putc (f, 65);
    for (int i = 0; i < 65; i++)
        s_putc (f, 'k');
    s_putc (f, 0x01);
    s_put_id (f);
    XXL_CHECK (s_refused_with_id (f, 4660, 1));
    //  More than 262,144 objects before the id
    f->size = 0;
    s_putc (f, 0x82);
    s_put (f, "\xa1x\xdd\x00\x04\x00\x01", 7);
    for (int i = 0; i < 262145; i++)
        s_putc (f, 0xc0);
    s_put_id (f);
    XXL_CHECK (s_refused_with_id (f, 4660, 1));
    //  The id in any positive integer encoding; nothing else counts
    static const struct { const char *bytes; size_t len; uint64_t id; } ids [] = {
        { "\x07", 1, 7 },
        { "\xcc\xc8", 2, 200 },
        { "\xce\x00\x01\x00\x00", 5, 65536 },
        { "\xcf\xff\xff\xff\xff\xff\xff\xff\xff", 9, UINT64_MAX },
        { "\xd0\x05", 2, 5 },
        { "\xd3\x00\x00\x00\x00\x00\x00\x01\x00", 9, 256 },
        { "\xd0\xff", 2, 0 },                      //  -1
        { "\x00", 1, 0 },
        { "\xc0", 1, 0 },
        { "\xcb\x3f\xf0\x00\x00\x00\x00\x00\x00", 9, 0 },   //  1.0
        { "\xa1" "1", 2, 0 },
    };
    for (size_t i = 0; i < sizeof ids / sizeof ids [0]; i++) {
        f->size = 0;
        s_putc (f, 0x82);
        s_put (f, "\xa2id", 3);
        s_put (f, ids [i].bytes, ids [i].len);
        s_put (f, "\xa1x\xc1", 3);
        XXL_CHECK (s_refused_with_id (f, ids [i].id, 1));
    }
    //  A bin key "id" counts as xxl_msg_get counts it; only the first
    //  "id" decides
    f->size = 0;
    s_putc (f, 0x83);
    s_put (f, "\xc4\x02id\x09", 5);
    s_put_id (f);
    s_putc (f, 0xc1);
    XXL_CHECK (s_refused_with_id (f, 9, 1));
    //  A root that is not a map: no id, even if a map with one follows
    f->size = 0;
    s_putc (f, 0x91);
    s_putc (f, 0x81);
    s_put_id (f);
    XXL_CHECK (s_refused_with_id (f, 0, 1));
    f->size = 0;
    s_putc (f, 0xc1);
    XXL_CHECK (s_refused_with_id (f, 0, 1));
    //  Over the frame limit: refused by size, id read from its start
    unsigned char *big = (unsigned char *) calloc (1, XXL_MSG_MAX_FRAME + 10);
    memcpy (big, "\x82\xa2id\x2a\xa1x\xdb\x00\x40\x00\x01", 13);
    uint64_t id = 0;
    char err [256];
    XXL_CHECK (xxl_msg_decode (big, XXL_MSG_MAX_FRAME + 10, &id, err, sizeof err) == NULL);
    XXL_CHECK (id == 42 && strstr (err, "over the"));
    free (big);
    free (f);
}

//  A request whose field "s" holds the given bytes as a str (or bin),
//  written raw: the encoder itself would repair them
static xxl_msg_t *
s_raw_string_msg (const char *bytes, size_t len, int as_bin)
{
    xxl_enc_t *enc = xxl_enc_new ();
    xxl_enc_request (enc, "X", 1);
    xxl_enc_key (enc, "s");
    unsigned char header [2] = { (unsigned char) (as_bin? 0xc4: 0xd9), (unsigned char) len };
    xxl_enc_raw (enc, header, 2, 0);      //  (the key counted the pair)
    xxl_enc_raw (enc, bytes, len, 0);
    size_t size;
    const void *data = xxl_enc_finish (enc, &size);
    char err [256];
    xxl_msg_t *msg = xxl_msg_decode (data, size, NULL, err, sizeof err);
    xxl_enc_destroy (&enc);
    return msg;
}

//  Strings must be UTF-8: the getter refuses what is not (str and bin)
static void
test_utf8_getter (void)
{
    static const char *valid [] = {
        "", "plain ascii, longer than eight bytes", "caf\xc3\xa9",
        "\xe4\xbd\xa0\xe5\xa5\xbd", "\xf0\x9f\x98\x80",
        "\xc2\x80", "\xdf\xbf", "\xe0\xa0\x80", "\xed\x9f\xbf",   //  U+0080 U+07FF U+0800 U+D7FF
        "\xee\x80\x80", "\xef\xbf\xbf", "\xf0\x90\x80\x80",        //  U+E000 U+FFFF U+10000
        "\xf4\x8f\xbf\xbf", "0123456789abcde\xc3\xa9xyz",            //  U+10FFFF
    };
    static const char *invalid [] = {
        "\xc0\xaf", "\xc1\xbf", "\xe0\x80\xaf", "\xe0\x9f\xbf",        //  overlongs
        "\xf0\x80\x80\xaf", "\xf0\x8f\xbf\xbf",
        "\xed\xa0\x80", "\xed\xbf\xbf", "\xed\xb0\x80",                 //  surrogates
        "\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xf7\xbf\xbf\xbf",     //  > U+10FFFF
        "\xe4\xbd", "\xf0\x9f\x98", "\xc3", "ab\xe4",                     //  truncated
        "\x80", "a\xbf" "b", "\xfe", "\xff", "\xc3\x28",                      //  stray, bad
        "0123456789abcdef\xff", "caf\xc3\xa9\xc3",
    };
    for (size_t i = 0; i < sizeof valid / sizeof valid [0]; i++)
        for (int bin = 0; bin < 2; bin++) {
            xxl_msg_t *msg = s_raw_string_msg (valid [i], strlen (valid [i]), bin);
            if (!msg)
                fprintf (stderr, "  valid string %zu (%s) refused\n", i, bin? "bin": "str");
            XXL_CHECK (msg != NULL);
            if (!msg)
                continue;
            const char *value = xxl_msg_str (msg, NULL, "s", 1, 100, NULL);
            XXL_CHECK (value && strcmp (value, valid [i]) == 0 && !xxl_msg_error (msg));
            xxl_msg_destroy (&msg);
        }
    for (size_t i = 0; i < sizeof invalid / sizeof invalid [0]; i++)
        for (int bin = 0; bin < 2; bin++) {
            xxl_msg_t *msg = s_raw_string_msg (invalid [i], strlen (invalid [i]), bin);
            XXL_CHECK (msg != NULL);
            if (!msg)
                continue;
            const char *value = xxl_msg_str (msg, NULL, "s", 1, 100, "dflt");
            const char *error = xxl_msg_error (msg);
            if (!(value && strcmp (value, "dflt") == 0 && error
                  && strcmp (error, "field 's' is not valid UTF-8") == 0))
                fprintf (stderr, "  invalid string %zu (%s) taken\n", i, bin? "bin": "str");
            XXL_CHECK (value && strcmp (value, "dflt") == 0);
            XXL_CHECK (error && strcmp (error, "field 's' is not valid UTF-8") == 0);
            xxl_msg_destroy (&msg);
        }
}

//  Decodes what enc holds and returns a copy of string field "s"
static char *
s_encoded_s (xxl_enc_t *enc)
{
    size_t size;
    const void *data = xxl_enc_finish (enc, &size);
    char err [256];
    xxl_msg_t *msg = xxl_msg_decode (data, size, NULL, err, sizeof err);
    if (!msg)
        return NULL;
    const char *value = xxl_msg_str (msg, NULL, "s", 1, 1000, NULL);
    char *copy = value? strdup (value): NULL;
    xxl_msg_destroy (&msg);
    return copy;
}

//  The encoder never writes invalid UTF-8: each invalid sequence (its
//  maximal subpart) becomes U+FFFD, valid text is kept as it is
static void
test_utf8_encoder (void)
{
#define FFFD "\xef\xbf\xbd"
    static const struct { const char *in; const char *out; } cases [] = {
        { "plain", "plain" },
        { "", "" },
        { "caf\xc3\xa9 \xe4\xbd\xa0\xf0\x9f\x98\x80", "caf\xc3\xa9 \xe4\xbd\xa0\xf0\x9f\x98\x80" },
        { "a\xff" "b", "a" FFFD "b" },
        { "\xc0\xaf", FFFD FFFD },                          //  overlong
        { "\xe0\x80\xaf", FFFD FFFD FFFD },
        { "\xed\xa0\x80x", FFFD FFFD FFFD "x" },            //  surrogate
        { "\xf4\x90\x80\x80", FFFD FFFD FFFD FFFD },         //  > U+10FFFF
        { "\xe4\xbd", FFFD },                               //  truncated at the end
        { "\xe4\xbdx\xe4\xbd\xa0", FFFD "x\xe4\xbd\xa0" },     //  truncated inside
        { "\xf0\x9f\x98!", FFFD "!" },
        { "\x80\x80", FFFD FFFD },
        { "0123456789abcdef\xfe" "0123456789", "0123456789abcdef" FFFD "0123456789" },
        { "ok \xc3\xa9 then \xc3 end \xc3\xa9", "ok \xc3\xa9 then " FFFD " end \xc3\xa9" },
    };
    xxl_enc_t *enc = xxl_enc_new ();
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        xxl_enc_request (enc, "X", 1);
        xxl_enc_kstr (enc, "s", cases [i].in);
        char *out = s_encoded_s (enc);
        if (!out || strcmp (out, cases [i].out) != 0)
            fprintf (stderr, "  case %zu: got '%s'\n", i, out? out: "(refused)");
        XXL_CHECK (out && strcmp (out, cases [i].out) == 0);
        free (out);
    }
    //  One bad byte at every position of ASCII strings of every length up
    //  to 70 (the fast path reads 32 and 8 bytes at a time, and the last 8
    //  overlapping): repaired there and only there; the getter refuses the
    //  raw bytes and takes the clean ones
    int all = 1;
    for (size_t n = 0; n <= 70 && all; n++)
        for (size_t bad = 0; bad <= n && all; bad++) {
            char in [80], expected [90];
            memset (in, 'a', n);
            memcpy (expected, in, n);
            size_t in_len = n;
            size_t out_len = n;
            if (bad < n) {
                in [bad] = (char) 0x80;
                memcpy (expected + bad, FFFD, 3);
                memset (expected + bad + 3, 'a', n - bad - 1);
                out_len = n + 2;
            }
            expected [out_len] = 0;
            xxl_enc_request (enc, "X", 1);
            xxl_enc_key (enc, "s");
            xxl_enc_strn (enc, in, in_len);
            char *got = s_encoded_s (enc);
            if (!got || strcmp (got, expected) != 0)
                all = 0;
            free (got);
            xxl_msg_t *raw = s_raw_string_msg (in, in_len, 0);
            const char *value = raw? xxl_msg_str (raw, NULL, "s", 1, 100, NULL): NULL;
            if (!raw || (bad < n) != (value == NULL))
                all = 0;
            xxl_msg_destroy (&raw);
            if (!all)
                fprintf (stderr, "  length %zu, bad byte at %zu\n", n, bad);
        }
    XXL_CHECK (all);
    //  xxl_enc_strn, with a length that cuts a sequence
    xxl_enc_request (enc, "X", 1);
    xxl_enc_key (enc, "s");
    xxl_enc_strn (enc, "\xc3\xa9\xc3\xa9", 3);
    char *out = s_encoded_s (enc);
    XXL_CHECK (out && strcmp (out, "\xc3\xa9" FFFD) == 0);
    free (out);
    //  xxl_enc_object copies a decoded object, its strings repaired (keys
    //  too; a bin stays a bin)
    xxl_enc_request (enc, "X", 1);
    xxl_enc_key (enc, "content");
    static const unsigned char content [] = {
        0x83, 0xa3, 'k', 0xff, '1', 0xa2, 'a', 0xed,            //  "k\xff1": "a\xed"
        0xa1, 'b', 0xc4, 0x02, 0xe4, 0xbd,                      //  "b": bin e4 bd
        0xa1, 'c', 0x92, 0xa2, 0xc3, 0xa9, 0x2a                 //  "c": ["é", 42]
    };
    xxl_enc_raw (enc, content, sizeof content, 0);
    size_t size;
    const void *data = xxl_enc_finish (enc, &size);
    char err [256];
    xxl_msg_t *msg = xxl_msg_decode (data, size, NULL, err, sizeof err);
    XXL_CHECK (msg != NULL);
    const msgpack_object *obj = msg? xxl_msg_get (xxl_msg_root (msg), "content"): NULL;
    XXL_CHECK (obj != NULL);
    //  A 64-byte key of invalid bytes stays 64 bytes: the copy decodes
    //  (found by fuzz_msg: with U+FFFD it grew past XXL_MSG_MAX_KEY)
    {
        unsigned char frame [128] = { 0x84, 0xa1, 'v', 0x01, 0xa1, 't', 0xa1, 'X',
                                      0xa2, 'i', 'd', 0x01, 0xd9, 64 };
        memset (frame + 14, 0xb9, 64);
        frame [78] = 0xc3;
        xxl_msg_t *bad = xxl_msg_decode (frame, 79, NULL, err, sizeof err);
        XXL_CHECK (bad != NULL);
        if (bad) {
            xxl_enc_t *copy = xxl_enc_new ();
            xxl_enc_object (copy, xxl_msg_root (bad));
            const void *copied = xxl_enc_finish (copy, &size);
            xxl_msg_t *again = xxl_msg_decode (copied, size, NULL, err, sizeof err);
            XXL_CHECK (again != NULL);
            char key [65];
            memset (key, '?', 64);
            key [64] = 0;
            XXL_CHECK (again && xxl_msg_bool (again, NULL, key, 1, 0) == 1);
            xxl_msg_destroy (&again);
            xxl_enc_destroy (&copy);
        }
        xxl_msg_destroy (&bad);
    }
    if (obj) {
        xxl_enc_t *copy = xxl_enc_new ();
        xxl_enc_request (copy, "X", 2);
        xxl_enc_key (copy, "content");
        xxl_enc_object (copy, obj);
        const void *copied = xxl_enc_finish (copy, &size);
        xxl_msg_t *again = xxl_msg_decode (copied, size, NULL, err, sizeof err);
        const msgpack_object *map = again? xxl_msg_map (again, NULL, "content", 1): NULL;
        XXL_CHECK (map && map->via.map.size == 3);
        if (map) {
            const char *a = xxl_msg_str (again, map, "k?1", 1, 100, NULL);
            XXL_CHECK (a && strcmp (a, "a" FFFD) == 0);
            const msgpack_object *b = xxl_msg_get (map, "b");
            XXL_CHECK (b && b->type == MSGPACK_OBJECT_BIN && b->via.bin.size == 3
                       && memcmp (b->via.bin.ptr, FFFD, 3) == 0);
            size_t count = 0;
            const msgpack_object *c = xxl_msg_array (again, map, "c", 1, 10, &count);
            XXL_CHECK (c && count == 2 && c [0].type == MSGPACK_OBJECT_STR
                       && c [0].via.str.size == 2 && memcmp (c [0].via.str.ptr, "\xc3\xa9", 2) == 0
                       && c [1].type == MSGPACK_OBJECT_POSITIVE_INTEGER && c [1].via.u64 == 42);
            XXL_CHECK (!xxl_msg_error (again));
        }
        xxl_msg_destroy (&again);
        xxl_enc_destroy (&copy);
    }
    xxl_msg_destroy (&msg);
    xxl_enc_destroy (&enc);
#undef FFFD
}

//  An empty string whose pointer is NULL (as a msgpack_object built by
//  hand may hold): no arithmetic on NULL (UBSan: "applying zero offset to
//  null pointer"), written as ""
static void
test_json_empty_string (void)
{
    msgpack_object str;
    memset (&str, 0, sizeof str);
    str.type = MSGPACK_OBJECT_STR;
    str.via.str.size = 0;
    str.via.str.ptr = NULL;
    char *json = xxl_msg_to_json (&str, 0);
    XXL_CHECK (json && strcmp (json, "\"\"") == 0);
    free (json);
    msgpack_object_kv kv;
    kv.key = str;
    kv.val = str;
    msgpack_object map;
    memset (&map, 0, sizeof map);
    map.type = MSGPACK_OBJECT_MAP;
    map.via.map.size = 1;
    map.via.map.ptr = &kv;
    json = xxl_msg_to_json (&map, 1);
    XXL_CHECK (json && strcmp (json, "{\n  \"\": \"\"\n}") == 0);
    free (json);
    //  And decoded: an empty str and an empty bin
    static const unsigned char frame [] = {
        0x85, 0xa1, 'v', 0x01, 0xa1, 't', 0xa1, 'X', 0xa2, 'i', 'd', 0x01,
        0xa1, 'e', 0xa0, 0xa1, 'b', 0xc4, 0x00
    };
    char err [256];
    xxl_msg_t *msg = xxl_msg_decode (frame, sizeof frame, NULL, err, sizeof err);
    XXL_CHECK (msg != NULL);
    json = msg? xxl_msg_to_json (xxl_msg_root (msg), 0): NULL;
    XXL_CHECK (json && strstr (json, "\"e\":\"\",\"b\":\"\""));
    free (json);
    xxl_msg_destroy (&msg);
}

static void
test_random_bytes (void)
{
    //  Garbage never crashes the decoder (ASan runs watch this too)
    unsigned char buffer [512];
    char err [256];
    srand (1234);
    int survived = 1;
    for (int round = 0; round < 20000; round++) {
        size_t size = 1 + (size_t) (rand () % (int) sizeof buffer);
        for (size_t i = 0; i < size; i++)
            buffer [i] = (unsigned char) rand ();
        if (round % 2)
            buffer [0] = 0x80 | (buffer [0] & 0x0f);    //  a fixmap more often
        xxl_msg_t *msg = xxl_msg_decode (buffer, size, NULL, err, sizeof err);
        if (msg) {
            char *json = xxl_msg_to_json (xxl_msg_root (msg), 1);
            if (!json)
                survived = 0;
            free (json);
            xxl_msg_destroy (&msg);
        }
    }
    XXL_CHECK (survived);
}

static void
test_json_escaping (void)
{
    xxl_enc_t *enc = xxl_enc_new ();
    xxl_enc_request (enc, "X", 1);
    xxl_enc_kstr (enc, "s", "a\"b\\c\nd\x01");
    size_t size;
    const void *data = xxl_enc_finish (enc, &size);
    char err [256];
    xxl_msg_t *msg = xxl_msg_decode (data, size, NULL, err, sizeof err);
    char *json = xxl_msg_to_json (xxl_msg_get (xxl_msg_root (msg), "s"), 0);
    XXL_CHECK (json && strcmp (json, "\"a\\\"b\\\\c\\nd\\u0001\"") == 0);
    free (json);
    xxl_msg_destroy (&msg);
    xxl_enc_destroy (&enc);
}

//  A peer's text for a log line: nothing in it ends the line, whatever
//  a terminal or log reader takes for a line break; the rest is kept
static void
test_printable (void)
{
    static const struct {
        const char *text, *printed;
    } cases [] = {
        { "demo/ok-1.2_x", "demo/ok-1.2_x" },
        { "evil\r\nFORGED\tx\\y", "evil\\r\\nFORGED\\tx\\\\y" },
        { "a\x01" "b\x1b[2Jc\x7f", "a\\x01b\\x1b[2Jc\\x7f" },
        //  U+0085, U+2028, U+2029, U+009B (CSI), U+0080, U+009F
        { "ok\xe2\x80\xa8x\xc2\x85y\xe2\x80\xa9z", "ok\\u2028x\\u0085y\\u2029z" },
        { "\xc2\x9b" "2J\xc2\x80\xc2\x9f", "\\u009b2J\\u0080\\u009f" },
        //  Kept: U+00A0, é, U+2027, U+202A, 中, an emoji
        { "\xc2\xa0\xc3\xa9\xe2\x80\xa7\xe2\x80\xaa\xe4\xb8\xad\xf0\x9f\x98\x80",
          "\xc2\xa0\xc3\xa9\xe2\x80\xa7\xe2\x80\xaa\xe4\xb8\xad\xf0\x9f\x98\x80" },
        //  Not UTF-8: each byte escaped (a lone 0x85 too)
        { "x\x85y\xff\xe2\x80z\xc0\xaf", "x\\x85y\\xff\\xe2\\x80z\\xc0\\xaf" },
        { "", "" },
    };
    char out [64];
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        XXL_CHECK (xxl_printable (cases [i].text, out, sizeof out) == out);
        XXL_CHECK (!strcmp (out, cases [i].printed));
        if (strcmp (out, cases [i].printed))
            printf ("# case %zu: '%s'\n", i, out);
    }
    XXL_CHECK (!strcmp (xxl_printable (NULL, out, sizeof out), "(null)"));
    //  A short buffer cuts between characters and between escapes
    char small [8];
    XXL_CHECK (!strcmp (xxl_printable ("abcdefghij", small, sizeof small), "abcdefg"));
    XXL_CHECK (!strcmp (xxl_printable ("abcde\xe2\x80\xa8", small, sizeof small), "abcde"));
    XXL_CHECK (!strcmp (xxl_printable ("abcd\xe4\xb8\xad", small, sizeof small),
                      "abcd\xe4\xb8\xad"));
    XXL_CHECK (!strcmp (xxl_printable ("abcde\xe4\xb8\xad", small, sizeof small), "abcde"));
    XXL_CHECK (!strcmp (xxl_printable ("\xe2\x80\xa8", small, 6), ""));
    XXL_CHECK (!strcmp (xxl_printable ("\xe2\x80\xa8", small, 7), "\\u2028"));
}

//  Text made valid UTF-8 as the encoder makes it (the PostgreSQL store's
//  parameters): valid text untouched, each invalid maximal subpart U+FFFD
static void
test_utf8_repair (void)
{
    XXL_CHECK (xxl_utf8_repair ("") == NULL);
    XXL_CHECK (xxl_utf8_repair ("plain ascii") == NULL);
    XXL_CHECK (xxl_utf8_repair ("\xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x9a\x80") == NULL);
    const struct { const char *text, *fixed; } cases [] = {
        { "a\xff" "b", "a\xef\xbf\xbd" "b" },
        { "\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd" },                  //  overlong: per byte
        { "x\xe4\xb8", "x\xef\xbf\xbd" },                               //  truncated: one
        { "\xed\xa0\x80!", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd!" },   //  a surrogate
        { "ok\xe4\xb8\xad\x80", "ok\xe4\xb8\xad\xef\xbf\xbd" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        char *fixed = xxl_utf8_repair (cases [i].text);
        XXL_CHECK (fixed && !strcmp (fixed, cases [i].fixed));
        free (fixed);
    }
}

//  Raw bytes and patches: what the scheduler's batch RUN is built from
static void
test_raw_and_patch (void)
{
    //  A map encoded apart, appended whole into an array, then its last
    //  value patched in place (same encoded size)
    xxl_enc_t *item = xxl_enc_new ();
    xxl_enc_map_begin (item);
    xxl_enc_kint (item, "n", 1);
    xxl_enc_key (item, "t");
    size_t item_size;
    const void *item_data = xxl_enc_finish (item, &item_size);
    unsigned char t1 [9] = { 0xd3, 0, 0, 0, 0, 0, 0, 0, 7 };
    unsigned char t2 [9] = { 0xd3, 0, 0, 0, 0, 0, 0, 0, 9 };
    xxl_enc_t *enc = xxl_enc_new ();
    xxl_enc_request (enc, "RUN", 5);
    xxl_enc_key (enc, "runs");
    xxl_enc_array_begin (enc);
    for (int i = 0; i < 2; i++) {
        xxl_enc_raw (enc, item_data, item_size, 1);
        xxl_enc_raw (enc, t1, sizeof t1, 0);
    }
    size_t second = xxl_enc_size (enc) - sizeof t1;
    XXL_CHECK (xxl_enc_patch (enc, second, t2, sizeof t2) == 0);
    XXL_CHECK (xxl_enc_patch (enc, xxl_enc_size (enc) - 4, t2, sizeof t2) == -1);
    //  Handed over (as the scheduler sends an instant's batch, uncopied):
    //  the caller owns the bytes, the encoder starts again empty
    size_t size;
    void *data = xxl_enc_take (enc, &size);
    XXL_CHECK (data != NULL && size > 0);
    XXL_CHECK (xxl_enc_size (enc) == 0);
    size_t empty_size = 1;
    XXL_CHECK (xxl_enc_take (enc, &empty_size) == NULL && empty_size == 0);
    xxl_enc_kint (enc, "again", 1);
    XXL_CHECK (xxl_enc_size (enc) > 0);
    char err [256];
    xxl_msg_t *msg = xxl_msg_decode (data, size, NULL, err, sizeof err);
    XXL_CHECK (msg != NULL);
    size_t count = 0;
    const msgpack_object *runs = msg? xxl_msg_array (msg, NULL, "runs", 1, 10, &count): NULL;
    XXL_CHECK (runs && count == 2);
    if (runs && count == 2) {
        XXL_CHECK (xxl_msg_int (msg, &runs [0], "t", 1, 0, 100, 0) == 7);
        XXL_CHECK (xxl_msg_int (msg, &runs [1], "t", 1, 0, 100, 0) == 9);
        XXL_CHECK (xxl_msg_int (msg, &runs [1], "n", 1, 0, 100, 0) == 1);
        //  An error latched by one item, forgotten for the next
        xxl_msg_int (msg, &runs [0], "missing", 1, 0, 100, 0);
        XXL_CHECK (xxl_msg_error (msg) != NULL);
        xxl_msg_clear_error (msg);
        XXL_CHECK (xxl_msg_error (msg) == NULL);
        XXL_CHECK (xxl_msg_int (msg, &runs [1], "t", 1, 0, 100, 0) == 9 && !xxl_msg_error (msg));
    }
    xxl_msg_destroy (&msg);
    free (data);
    xxl_enc_destroy (&enc);
    xxl_enc_destroy (&item);
}

int
main (void)
{
    test_raw_and_patch ();
    test_round_trip ();
    test_field_errors ();
    test_refusals ();
    test_lenient_id ();
    test_random_bytes ();
    test_json_escaping ();
    test_utf8_getter ();
    test_utf8_encoder ();
    test_json_empty_string ();
    test_printable ();
    test_utf8_repair ();
    return xxl_test_done ();
}
