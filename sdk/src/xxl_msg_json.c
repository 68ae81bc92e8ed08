/*  xxl_msg_json.c -- a msgpack object as JSON (xxl_msg_to_json), for the
    http api and xxl-ctl.  Strings are escaped as JSON needs, bin
    values written as base64 strings, non-string map keys rendered as
    JSON and then quoted; a failed allocation gives NULL.
*/

#include "xxl/msg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>

typedef struct {
    char *data;
    size_t size;
    size_t alloc;
    int failed;
} s_buf_t;

static void
s_buf_put (s_buf_t *buf, const char *data, size_t len)
{
    if (buf->failed || len == 0)
        return;
    if (buf->size + len + 1 > buf->alloc) {
        size_t alloc = buf->alloc? buf->alloc * 2: 256;
        while (alloc < buf->size + len + 1)
            alloc *= 2;
        char *data_new = (char *) realloc (buf->data, alloc);
        if (!data_new) {
            buf->failed = 1;
            return;
        }
        buf->data = data_new;
        buf->alloc = alloc;
    }
    memcpy (buf->data + buf->size, data, len);
    buf->size += len;
    buf->data [buf->size] = 0;
}

static void
s_buf_puts (s_buf_t *buf, const char *text)
{
    s_buf_put (buf, text, strlen (text));
}

static void
s_json_string (s_buf_t *buf, const char *ptr, size_t len)
{
    if (len == 0) {                     //  (ptr may be NULL: no arithmetic on it)
        s_buf_put (buf, "\"\"", 2);
        return;
    }
    s_buf_put (buf, "\"", 1);
    size_t start = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char) ptr [i];
        if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f)
            continue;
        s_buf_put (buf, ptr + start, i - start);
        char escape [8];
        switch (c) {
            case '"': s_buf_puts (buf, "\\\""); break;
            case '\\': s_buf_puts (buf, "\\\\"); break;
            case '\n': s_buf_puts (buf, "\\n"); break;
            case '\r': s_buf_puts (buf, "\\r"); break;
            case '\t': s_buf_puts (buf, "\\t"); break;
            default:
                snprintf (escape, sizeof escape, "\\u%04x", c);
                s_buf_puts (buf, escape);
        }
        start = i + 1;
    }
    s_buf_put (buf, ptr + start, len - start);
    s_buf_put (buf, "\"", 1);
}

static void
s_json_base64 (s_buf_t *buf, const unsigned char *ptr, size_t len)
{
    static const char alphabet [] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    s_buf_put (buf, "\"", 1);
    for (size_t i = 0; i < len; i += 3) {
        uint32_t n = (uint32_t) ptr [i] << 16;
        if (i + 1 < len) n |= (uint32_t) ptr [i + 1] << 8;
        if (i + 2 < len) n |= ptr [i + 2];
        char quad [4] = {
            alphabet [(n >> 18) & 63], alphabet [(n >> 12) & 63],
            i + 1 < len? alphabet [(n >> 6) & 63]: '=',
            i + 2 < len? alphabet [n & 63]: '='
        };
        s_buf_put (buf, quad, 4);
    }
    s_buf_put (buf, "\"", 1);
}

static void
s_json_indent (s_buf_t *buf, int pretty, int depth)
{
    if (!pretty)
        return;
    s_buf_put (buf, "\n", 1);
    for (int i = 0; i < depth; i++)
        s_buf_put (buf, "  ", 2);
}

static void
s_json (s_buf_t *buf, const msgpack_object *obj, int pretty, int depth)
{
    char number [64];
    switch (obj->type) {
        case MSGPACK_OBJECT_NIL:
            s_buf_puts (buf, "null");
            break;
        case MSGPACK_OBJECT_BOOLEAN:
            s_buf_puts (buf, obj->via.boolean? "true": "false");
            break;
        case MSGPACK_OBJECT_POSITIVE_INTEGER:
            snprintf (number, sizeof number, "%" PRIu64, obj->via.u64);
            s_buf_puts (buf, number);
            break;
        case MSGPACK_OBJECT_NEGATIVE_INTEGER:
            snprintf (number, sizeof number, "%" PRId64, obj->via.i64);
            s_buf_puts (buf, number);
            break;
        case MSGPACK_OBJECT_FLOAT32:
        case MSGPACK_OBJECT_FLOAT64:
            snprintf (number, sizeof number, "%.17g", obj->via.f64);
            s_buf_puts (buf, number);
            break;
        case MSGPACK_OBJECT_STR:
            s_json_string (buf, obj->via.str.ptr, obj->via.str.size);
            break;
        case MSGPACK_OBJECT_BIN:
            s_json_base64 (buf, (const unsigned char *) obj->via.bin.ptr, obj->via.bin.size);
            break;
        case MSGPACK_OBJECT_ARRAY:
            s_buf_put (buf, "[", 1);
            for (uint32_t i = 0; i < obj->via.array.size; i++) {
                if (i)
                    s_buf_put (buf, ",", 1);
                s_json_indent (buf, pretty, depth + 1);
                s_json (buf, &obj->via.array.ptr [i], pretty, depth + 1);
            }
            if (obj->via.array.size)
                s_json_indent (buf, pretty, depth);
            s_buf_put (buf, "]", 1);
            break;
        case MSGPACK_OBJECT_MAP:
            s_buf_put (buf, "{", 1);
            for (uint32_t i = 0; i < obj->via.map.size; i++) {
                if (i)
                    s_buf_put (buf, ",", 1);
                s_json_indent (buf, pretty, depth + 1);
                const msgpack_object *key = &obj->via.map.ptr [i].key;
                if (key->type == MSGPACK_OBJECT_STR)
                    s_json_string (buf, key->via.str.ptr, key->via.str.size);
                else {
                    s_buf_t inner = { NULL, 0, 0, 0 };
                    s_json (&inner, key, 0, 0);
                    s_json_string (buf, inner.data? inner.data: "", inner.size);
                    free (inner.data);
                }
                s_buf_puts (buf, pretty? ": ": ":");
                s_json (buf, &obj->via.map.ptr [i].val, pretty, depth + 1);
            }
            if (obj->via.map.size)
                s_json_indent (buf, pretty, depth);
            s_buf_put (buf, "}", 1);
            break;
        default:
            s_buf_puts (buf, "null");
    }
}

char *
xxl_msg_to_json (const msgpack_object *obj, int pretty)
{
    s_buf_t buf = { NULL, 0, 0, 0 };
    s_json (&buf, obj, pretty, 0);
    if (buf.failed) {
        free (buf.data);
        return NULL;
    }
    return buf.data? buf.data: strdup ("null");
}
