/*  xxl_msg_enc.c -- the encoder of xxl's wire messages (xxl_enc_t).

    Every map and array is written with the 32-bit header (0xdf/0xdd) and
    its count patched when it is closed, so callers need not count ahead.
    Strings are written as valid UTF-8: each invalid sequence becomes
    U+FFFD, or '?' in a key copied from an object (xxl_enc_object),
    so that a key never grows past its limit.
*/

#include "xxl_msg_int.h"

#include <stdlib.h>
#include <string.h>

#define XXL_ENC_MAX_DEPTH 16

struct _xxl_enc_t {
    msgpack_sbuffer buffer;
    msgpack_packer packer;
    struct {
        size_t offset;                  //  of the 32-bit count
        uint32_t count;
        int is_map;
    } stack [XXL_ENC_MAX_DEPTH];
    int depth;
};

xxl_enc_t *
xxl_enc_new (void)
{
    xxl_enc_t *self = (xxl_enc_t *) calloc (1, sizeof (xxl_enc_t));
    if (!self)
        return NULL;
    msgpack_sbuffer_init (&self->buffer);
    msgpack_packer_init (&self->packer, &self->buffer, msgpack_sbuffer_write);
    return self;
}

void
xxl_enc_destroy (xxl_enc_t **self_p)
{
    if (self_p && *self_p) {
        msgpack_sbuffer_destroy (&(*self_p)->buffer);
        free (*self_p);
        *self_p = NULL;
    }
}

void
xxl_enc_reset (xxl_enc_t *self)
{
    self->buffer.size = 0;
    self->depth = 0;
}

//  Counts one item (a value in an array, a key in a map) in the open container
static void
s_enc_item (xxl_enc_t *self, int is_key)
{
    if (self->depth > 0 && self->stack [self->depth - 1].is_map == is_key)
        self->stack [self->depth - 1].count++;
}

static void
s_enc_open (xxl_enc_t *self, int is_map)
{
    s_enc_item (self, 0);
    unsigned char header [5] = { (unsigned char) (is_map? 0xdf: 0xdd), 0, 0, 0, 0 };
    //  Programmer error: deeper than any message xxl builds
    if (self->depth >= XXL_ENC_MAX_DEPTH)
        abort ();
    self->stack [self->depth].offset = self->buffer.size + 1;
    self->stack [self->depth].count = 0;
    self->stack [self->depth].is_map = is_map;
    self->depth++;
    msgpack_sbuffer_write (&self->buffer, (const char *) header, 5);
}

static void
s_enc_close (xxl_enc_t *self)
{
    if (self->depth == 0)
        return;
    self->depth--;
    uint32_t count = self->stack [self->depth].count;
    unsigned char *p = (unsigned char *) self->buffer.data + self->stack [self->depth].offset;
    p [0] = (unsigned char) (count >> 24);
    p [1] = (unsigned char) (count >> 16);
    p [2] = (unsigned char) (count >> 8);
    p [3] = (unsigned char) count;
}

void xxl_enc_map_begin (xxl_enc_t *self) { s_enc_open (self, 1); }
void xxl_enc_map_end (xxl_enc_t *self) { s_enc_close (self); }
void xxl_enc_array_begin (xxl_enc_t *self) { s_enc_open (self, 0); }
void xxl_enc_array_end (xxl_enc_t *self) { s_enc_close (self); }

void
xxl_enc_key (xxl_enc_t *self, const char *key)
{
    s_enc_item (self, 1);
    size_t len = strlen (key);
    msgpack_pack_str (&self->packer, len);
    msgpack_pack_str_body (&self->packer, key, len);
}

//  Writes a str (or bin) whose invalid UTF-8 sequences are each replaced
//  with U+FFFD, or with '?' for a key (as_key), which so never grows past
//  its limit.  ASCII, and valid UTF-8 after a first scan, are copied as
//  they are.
static void
s_enc_text (xxl_enc_t *self, const char *value, size_t len, int as_bin, int as_key)
{
    const char *repl = as_key? "?": "\xef\xbf\xbd";
    size_t repl_len = as_key? 1: 3;
    const uint8_t *p = (const uint8_t *) value;
    size_t valid = xxl_utf8_ascii_prefix (p, len);
    while (valid < len) {
        if (p [valid] < 0x80) {
            valid += xxl_utf8_ascii_prefix (p + valid, len - valid);
            continue;
        }
        size_t bad, seq = xxl_utf8_seq (p + valid, len - valid, &bad);
        if (!seq)
            break;
        valid += seq;
    }
    size_t size = valid == len? len: xxl_utf8_fixed_size (p, len, valid, repl_len);
    if (as_bin)
        msgpack_pack_bin (&self->packer, size);
    else
        msgpack_pack_str (&self->packer, size);
    if (len == 0)
        return;
    msgpack_pack_str_body (&self->packer, value, valid);
    for (size_t i = valid; i < len; ) {
        size_t bad, seq = xxl_utf8_seq (p + i, len - i, &bad);
        if (seq) {
            //  The run of valid bytes up to the next invalid sequence
            size_t start = i;
            while (i < len && (seq = xxl_utf8_seq (p + i, len - i, &bad)) != 0)
                i += seq;
            msgpack_pack_str_body (&self->packer, value + start, i - start);
        }
        else {
            msgpack_pack_str_body (&self->packer, repl, repl_len);
            i += bad;
        }
    }
}

void
xxl_enc_strn (xxl_enc_t *self, const char *value, size_t len)
{
    s_enc_item (self, 0);
    s_enc_text (self, value, len, 0, 0);
}

void
xxl_enc_str (xxl_enc_t *self, const char *value)
{
    if (value)
        xxl_enc_strn (self, value, strlen (value));
    else
        xxl_enc_nil (self);
}

void
xxl_enc_int (xxl_enc_t *self, int64_t value)
{
    s_enc_item (self, 0);
    msgpack_pack_int64 (&self->packer, value);
}

void
xxl_enc_bool (xxl_enc_t *self, int value)
{
    s_enc_item (self, 0);
    if (value)
        msgpack_pack_true (&self->packer);
    else
        msgpack_pack_false (&self->packer);
}

void
xxl_enc_double (xxl_enc_t *self, double value)
{
    s_enc_item (self, 0);
    msgpack_pack_double (&self->packer, value);
}

void
xxl_enc_nil (xxl_enc_t *self)
{
    s_enc_item (self, 0);
    msgpack_pack_nil (&self->packer);
}

//  Copies obj, its strings (str and bin) made valid UTF-8 as xxl_enc_strn
//  does; in keys (as_key) an invalid sequence becomes '?'
static void
s_enc_copy (xxl_enc_t *self, const msgpack_object *obj, int as_key)
{
    switch (obj->type) {
        case MSGPACK_OBJECT_STR:
            s_enc_text (self, obj->via.str.ptr, obj->via.str.size, 0, as_key);
            break;
        case MSGPACK_OBJECT_BIN:
            s_enc_text (self, obj->via.bin.ptr, obj->via.bin.size, 1, as_key);
            break;
        case MSGPACK_OBJECT_ARRAY:
            msgpack_pack_array (&self->packer, obj->via.array.size);
            for (uint32_t i = 0; i < obj->via.array.size; i++)
                s_enc_copy (self, &obj->via.array.ptr [i], 0);
            break;
        case MSGPACK_OBJECT_MAP:
            msgpack_pack_map (&self->packer, obj->via.map.size);
            for (uint32_t i = 0; i < obj->via.map.size; i++) {
                s_enc_copy (self, &obj->via.map.ptr [i].key, 1);
                s_enc_copy (self, &obj->via.map.ptr [i].val, 0);
            }
            break;
        default:
            msgpack_pack_object (&self->packer, *obj);
    }
}

void
xxl_enc_object (xxl_enc_t *self, const msgpack_object *obj)
{
    s_enc_item (self, 0);
    s_enc_copy (self, obj, 0);
}

void
xxl_enc_raw (xxl_enc_t *self, const void *data, size_t len, uint32_t items)
{
    if (self->depth > 0)
        self->stack [self->depth - 1].count += items;
    msgpack_sbuffer_write (&self->buffer, (const char *) data, len);
}

size_t
xxl_enc_size (xxl_enc_t *self)
{
    return self->buffer.size;
}

int
xxl_enc_patch (xxl_enc_t *self, size_t offset, const void *data, size_t len)
{
    if (offset > self->buffer.size || len > self->buffer.size - offset)
        return -1;
    memcpy (self->buffer.data + offset, data, len);
    return 0;
}

void xxl_enc_kstr (xxl_enc_t *self, const char *key, const char *value)
{ xxl_enc_key (self, key); xxl_enc_str (self, value); }
void xxl_enc_kint (xxl_enc_t *self, const char *key, int64_t value)
{ xxl_enc_key (self, key); xxl_enc_int (self, value); }
void xxl_enc_kbool (xxl_enc_t *self, const char *key, int value)
{ xxl_enc_key (self, key); xxl_enc_bool (self, value); }

void
xxl_enc_request (xxl_enc_t *self, const char *type, uint64_t id)
{
    xxl_enc_reset (self);
    xxl_enc_map_begin (self);
    xxl_enc_kint (self, "v", XXL_PROTOCOL_VERSION);
    xxl_enc_kstr (self, "t", type);
    xxl_enc_key (self, "id");
    s_enc_item (self, 0);
    msgpack_pack_uint64 (&self->packer, id);
}

void
xxl_enc_reply (xxl_enc_t *self, uint64_t id, int code, const char *msg)
{
    xxl_enc_request (self, "REPLY", id);
    xxl_enc_kint (self, "code", code);
    xxl_enc_kstr (self, "msg", msg);
}

const void *
xxl_enc_finish (xxl_enc_t *self, size_t *size)
{
    while (self->depth > 0)
        s_enc_close (self);
    *size = self->buffer.size;
    return self->buffer.data;
}

void *
xxl_enc_take (xxl_enc_t *self, size_t *size)
{
    while (self->depth > 0)
        s_enc_close (self);
    *size = self->buffer.size;
    if (self->buffer.size == 0)
        return NULL;
    //  (msgpack's sbuffer allocates with malloc)
    return msgpack_sbuffer_release (&self->buffer);
}
