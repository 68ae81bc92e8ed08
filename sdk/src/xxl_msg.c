/*  xxl_msg.c -- strict msgpack codec for xxl's wire messages.

    Decoding runs in two passes.  s_scan walks the raw bytes first and
    refuses anything that could make the real unpacker allocate more than
    the frame justifies: a container declaring more items than bytes left,
    too deep a nesting, too many objects in all, oversized strings or keys,
    ext types and the reserved byte 0xc1.  Only a frame that passed the scan
    goes to msgpack-c's unpacker, so its memory stays bounded by the frame
    size.  Getters then check each field's type and range (strings: UTF-8
    too).  A frame the scan refuses still has its id read by a lenient,
    non-recursive walk of the root map (s_lenient_id), so that the refusal
    can be answered.  The encoder writes only valid UTF-8.
*/

#include "xxl/msg.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>

#define XXL_MSG_MAX_OBJECTS 262144

struct _xxl_msg_t {
    msgpack_unpacked unpacked;
    char *data;                         //  our copy of the frame: msgpack-c's
                                        //  objects point into it (zero-copy)
    const msgpack_object *root;
    const char *type;
    uint64_t id;
    char *error;
};

typedef struct {
    const uint8_t *p;
    const uint8_t *end;
    size_t objects;
    char *err;
    size_t errlen;
} s_scanner_t;

static int
s_scan_fail (s_scanner_t *sc, const char *reason)
{
    if (sc->err && sc->errlen)
        snprintf (sc->err, sc->errlen, "malformed message: %s", reason);
    return -1;
}

static int
s_need (s_scanner_t *sc, uint64_t n)
{
    return (uint64_t) (sc->end - sc->p) >= n? 0: -1;
}

static uint64_t
s_be (const uint8_t *p, int n)
{
    uint64_t value = 0;
    for (int i = 0; i < n; i++)
        value = (value << 8) | p [i];
    return value;
}

//  Scans one object; as_key: the object is a map key (must be a short string)
static int
s_scan (s_scanner_t *sc, int depth, int as_key)
{
    if (depth > XXL_MSG_MAX_DEPTH)
        return s_scan_fail (sc, "nesting too deep");
    if (++sc->objects > XXL_MSG_MAX_OBJECTS)
        return s_scan_fail (sc, "too many objects");
    if (s_need (sc, 1))
        return s_scan_fail (sc, "truncated");
    uint8_t tag = *sc->p++;
    uint64_t len = 0;
    int is_str = 0, container = 0;      //  1 array, 2 map
    if (tag <= 0x7f || tag >= 0xe0)
        return as_key? s_scan_fail (sc, "map key is not a string"): 0;
    if (tag >= 0xa0 && tag <= 0xbf) {
        len = tag & 0x1f;
        is_str = 1;
    }
    else
    if (tag >= 0x90 && tag <= 0x9f) {
        len = tag & 0x0f;
        container = 1;
    }
    else
    if (tag >= 0x80 && tag <= 0x8f) {
        len = tag & 0x0f;
        container = 2;
    }
    else {
        int width = 0, skip = 0;
        switch (tag) {
            case 0xc0: case 0xc2: case 0xc3: break;
            case 0xca: skip = 4; break;
            case 0xcb: skip = 8; break;
            case 0xcc: case 0xd0: skip = 1; break;
            case 0xcd: case 0xd1: skip = 2; break;
            case 0xce: case 0xd2: skip = 4; break;
            case 0xcf: case 0xd3: skip = 8; break;
            case 0xc4: case 0xd9: width = 1; is_str = 1; break;
            case 0xc5: case 0xda: width = 2; is_str = 1; break;
            case 0xc6: case 0xdb: width = 4; is_str = 1; break;
            case 0xdc: width = 2; container = 1; break;
            case 0xdd: width = 4; container = 1; break;
            case 0xde: width = 2; container = 2; break;
            case 0xdf: width = 4; container = 2; break;
            default:
                return s_scan_fail (sc, "unsupported type (ext or reserved byte)");
        }
        if (skip) {
            if (as_key)
                return s_scan_fail (sc, "map key is not a string");
            if (s_need (sc, skip))
                return s_scan_fail (sc, "truncated");
            sc->p += skip;
            return 0;
        }
        if (width) {
            if (s_need (sc, width))
                return s_scan_fail (sc, "truncated");
            len = s_be (sc->p, width);
            sc->p += width;
        }
        else
            return as_key? s_scan_fail (sc, "map key is not a string"): 0;
    }
    if (is_str) {
        if (as_key && len > XXL_MSG_MAX_KEY)
            return s_scan_fail (sc, "map key too long");
        if (len > XXL_MSG_MAX_STR)
            return s_scan_fail (sc, "string too long");
        if (s_need (sc, len))
            return s_scan_fail (sc, "truncated");
        sc->p += len;
        return 0;
    }
    if (as_key)
        return s_scan_fail (sc, "map key is not a string");
    //  Every item takes at least one byte: a count above what is left
    //  is a lie, refused before anything is allocated for it.
    uint64_t items = container == 2? len * 2: len;
    if (s_need (sc, items))
        return s_scan_fail (sc, "container larger than the frame");
    for (uint64_t i = 0; i < items; i++)
        if (s_scan (sc, depth + 1, container == 2 && (i % 2) == 0))
            return -1;
    return 0;
}

//  --------------------------------------------------------------------
//  UTF-8 (RFC 3629: no overlongs, no surrogates, nothing over U+10FFFF)

//  Length of the valid sequence at p (1..4), or 0 when it is invalid, with
//  *bad_p set to the length of its maximal subpart (the bytes that one
//  U+FFFD replaces, as Unicode recommends: at least 1).
static size_t
s_utf8_seq (const uint8_t *p, size_t n, size_t *bad_p)
{
    uint8_t c = p [0];
    size_t need;
    uint8_t lo = 0x80, hi = 0xbf;           //  range of the second byte
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        need = 1;
    else
    if (c >= 0xe0 && c <= 0xef) {
        need = 2;
        if (c == 0xe0) lo = 0xa0;           //  overlong
        if (c == 0xed) hi = 0x9f;           //  surrogates
    }
    else
    if (c >= 0xf0 && c <= 0xf4) {
        need = 3;
        if (c == 0xf0) lo = 0x90;           //  overlong
        if (c == 0xf4) hi = 0x8f;           //  over U+10FFFF
    }
    else {
        *bad_p = 1;                         //  80..c1, f5..ff
        return 0;
    }
    size_t i;
    for (i = 1; i <= need; i++) {
        if (i >= n) {
            *bad_p = i;                     //  truncated
            return 0;
        }
        uint8_t b = p [i];
        if (b < (i == 1? lo: 0x80) || b > (i == 1? hi: 0xbf)) {
            *bad_p = i;
            return 0;
        }
    }
    return need + 1;
}

//  Bytes before the first byte >= 0x80 (the ASCII fast path: 8 at a time)
static size_t
s_ascii_prefix (const uint8_t *p, size_t n)
{
    const uint64_t high = UINT64_C (0x8080808080808080);
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        uint64_t w [4];
        memcpy (w, p + i, 32);
        if ((w [0] | w [1] | w [2] | w [3]) & high)
            break;
    }
    for (; i + 8 <= n; i += 8) {
        uint64_t word;
        memcpy (&word, p + i, 8);
        if (word & high)
            break;
    }
    if (i < n && n >= 8) {
        //  The last 8 bytes, overlapping what was read: all ASCII, done
        uint64_t word;
        memcpy (&word, p + n - 8, 8);
        if (!(word & high) && i + 8 >= n)
            return n;
    }
    while (i < n && p [i] < 0x80)
        i++;
    return i;
}

//  1 when [p, p + n) is valid UTF-8
static int
s_utf8_valid (const uint8_t *p, size_t n)
{
    size_t i = s_ascii_prefix (p, n);
    while (i < n) {
        if (p [i] < 0x80) {
            i += 1 + s_ascii_prefix (p + i + 1, n - i - 1);
            continue;
        }
        size_t bad, len = s_utf8_seq (p + i, n - i, &bad);
        if (!len)
            return 0;
        i += len;
    }
    return 1;
}

//  Size of [p, p + n) once each invalid sequence is replaced with repl_len
//  bytes, counted from offset `from` (the bytes before are valid)
static size_t
s_utf8_fixed_size (const uint8_t *p, size_t n, size_t from, size_t repl_len)
{
    size_t size = from;
    for (size_t i = from; i < n; ) {
        size_t bad, len = s_utf8_seq (p + i, n - i, &bad);
        if (len) {
            size += len;
            i += len;
        }
        else {
            size += repl_len;
            i += bad;
        }
    }
    return size;
}

//  --------------------------------------------------------------------
//  Lenient id walk: when the strict scan refuses a frame, the id may still
//  be read, so that the refusal can be answered.  The walk reads the root
//  map's pairs in order and never recurses: a value is skipped by counting
//  the items still to skip, so any nesting depth costs nothing, and every
//  item read takes at least one byte, so the walk is linear in the frame.
//  It stops at truncation, at the byte 0xc1, and at a nested container
//  whose count exceeds the bytes left (its items could not be told from
//  the root's next pairs).  The root's own count is only an upper bound:
//  its pairs are read until the count or the frame ends.  Ext values are
//  skipped by their length; non-string keys (and string keys of any
//  length) are skipped.  The first key "id" decides: its value is taken
//  when it is a positive integer.

//  Reads the header of one object at *pp: *len_p is the bytes of its
//  payload to skip, *items_p the items it contains (2 per map pair).
//  Returns 1 for a str/bin (payload in *len_p), 0 for any other object,
//  -1 when the walk must stop.
static int
s_lenient_head (const uint8_t **pp, const uint8_t *end, uint64_t *len_p,
                uint64_t *items_p)
{
    const uint8_t *p = *pp;
    if (p >= end)
        return -1;
    uint8_t tag = *p++;
    uint64_t len = 0, items = 0;
    int is_str = 0, width = 0;
    if (tag <= 0x7f || tag >= 0xe0 || tag == 0xc0 || tag == 0xc2 || tag == 0xc3)
        ;
    else
    if (tag >= 0xa0 && tag <= 0xbf) {
        len = tag & 0x1f;
        is_str = 1;
    }
    else
    if (tag >= 0x90 && tag <= 0x9f)
        items = tag & 0x0f;
    else
    if (tag >= 0x80 && tag <= 0x8f)
        items = (uint64_t) (tag & 0x0f) * 2;
    else
    switch (tag) {
        case 0xca: case 0xce: case 0xd2: len = 4; break;
        case 0xcb: case 0xcf: case 0xd3: len = 8; break;
        case 0xcc: case 0xd0: len = 1; break;
        case 0xcd: case 0xd1: len = 2; break;
        case 0xd4: len = 2; break;                  //  fixext: type + data
        case 0xd5: len = 3; break;
        case 0xd6: len = 5; break;
        case 0xd7: len = 9; break;
        case 0xd8: len = 17; break;
        case 0xc4: case 0xd9: case 0xc7: width = 1; break;
        case 0xc5: case 0xda: case 0xc8: width = 2; break;
        case 0xc6: case 0xdb: case 0xc9: width = 4; break;
        case 0xdc: case 0xde: width = 2; break;
        case 0xdd: case 0xdf: width = 4; break;
        default:
            return -1;                              //  0xc1
    }
    if (width) {
        if ((size_t) (end - p) < (size_t) width)
            return -1;
        uint64_t n = s_be (p, width);
        p += width;
        if (tag == 0xdc || tag == 0xdd)
            items = n;
        else
        if (tag == 0xde || tag == 0xdf)
            items = n * 2;
        else
        if (tag >= 0xc7 && tag <= 0xc9)
            len = n + 1;                            //  ext: type byte + data
        else {
            len = n;
            is_str = 1;
        }
    }
    if (len > (uint64_t) (end - p))
        return -1;                                  //  truncated
    *pp = p;
    *len_p = len;
    *items_p = items;
    return is_str;
}

//  Skips one whole object; -1 when the walk must stop
static int
s_lenient_skip (const uint8_t **pp, const uint8_t *end)
{
    uint64_t pending = 1;
    while (pending > 0) {
        uint64_t len, items;
        if (s_lenient_head (pp, end, &len, &items) < 0)
            return -1;
        *pp += len;
        if (items > (uint64_t) (end - *pp))
            return -1;                              //  a count that lies
        pending += items - 1;
    }
    return 0;
}

//  The id of a frame the strict scan refused, or 0
static uint64_t
s_lenient_id (const uint8_t *p, const uint8_t *end)
{
    if (p >= end)
        return 0;
    uint64_t pairs;
    if (*p >= 0x80 && *p <= 0x8f)
        pairs = *p++ & 0x0f;
    else
    if ((*p == 0xde && end - p >= 3) || (*p == 0xdf && end - p >= 5)) {
        int width = *p == 0xde? 2: 4;
        pairs = s_be (p + 1, width);
        p += 1 + width;
    }
    else
        return 0;                                   //  the root is not a map
    for (uint64_t i = 0; i < pairs; i++) {
        const uint8_t *key = p;
        uint64_t len, items;
        int is_str = s_lenient_head (&key, end, &len, &items);
        if (is_str == 1 && len == 2 && memcmp (key, "id", 2) == 0) {
            p = key + len;
            if (p >= end)
                return 0;
            uint8_t tag = *p;
            if (tag <= 0x7f)
                return tag;
            int width = tag == 0xcc || tag == 0xd0? 1: tag == 0xcd || tag == 0xd1? 2:
                        tag == 0xce || tag == 0xd2? 4: tag == 0xcf || tag == 0xd3? 8: 0;
            if (!width || end - p - 1 < width)
                return 0;
            uint64_t value = s_be (p + 1, width);
            if (tag >= 0xd0) {                      //  signed: positive only
                int shift = 64 - 8 * width;
                int64_t sv = shift? (int64_t) (value << shift) >> shift: (int64_t) value;
                return sv > 0? (uint64_t) sv: 0;
            }
            return value;
        }
        if (s_lenient_skip (&p, end) || s_lenient_skip (&p, end))
            return 0;
    }
    return 0;
}

const msgpack_object *
xxl_msg_get (const msgpack_object *map, const char *key)
{
    if (!map || map->type != MSGPACK_OBJECT_MAP)
        return NULL;
    size_t keylen = strlen (key);
    for (uint32_t i = 0; i < map->via.map.size; i++) {
        const msgpack_object *k = &map->via.map.ptr [i].key;
        const char *kp = NULL;
        size_t kl = 0;
        if (k->type == MSGPACK_OBJECT_STR) {
            kp = k->via.str.ptr;
            kl = k->via.str.size;
        }
        else
        if (k->type == MSGPACK_OBJECT_BIN) {
            kp = k->via.bin.ptr;
            kl = k->via.bin.size;
        }
        if (kp && kl == keylen && memcmp (kp, key, kl) == 0) {
            const msgpack_object *value = &map->via.map.ptr [i].val;
            return value->type == MSGPACK_OBJECT_NIL? NULL: value;
        }
    }
    return NULL;
}

xxl_msg_t *
xxl_msg_decode (const void *data, size_t size, uint64_t *id_out,
                char *err, size_t errlen)
{
    if (id_out)
        *id_out = 0;
    if (err && errlen)
        *err = 0;
    if (!data || size == 0) {
        if (err && errlen)
            snprintf (err, errlen, "malformed message: empty frame");
        return NULL;
    }
    const uint8_t *bytes = (const uint8_t *) data;
    if (size > XXL_MSG_MAX_FRAME) {
        if (err && errlen)
            snprintf (err, errlen, "frame of %zu bytes is over the %d-byte limit",
                      size, XXL_MSG_MAX_FRAME);
        if (id_out)                     //  (read from its first 4 MiB)
            *id_out = s_lenient_id (bytes, bytes + XXL_MSG_MAX_FRAME);
        return NULL;
    }
    s_scanner_t sc = { bytes, bytes + size, 0, err, errlen };
    int refused = s_scan (&sc, 0, 0);
    if (!refused && sc.p != sc.end)
        refused = s_scan_fail (&sc, "trailing bytes after the message");
    if (refused) {
        if (id_out)
            *id_out = s_lenient_id (bytes, bytes + size);
        return NULL;
    }
    xxl_msg_t *self = (xxl_msg_t *) calloc (1, sizeof (xxl_msg_t));
    if (!self)
        return NULL;
    msgpack_unpacked_init (&self->unpacked);
    self->data = (char *) malloc (size);
    if (!self->data) {
        xxl_msg_destroy (&self);
        return NULL;
    }
    memcpy (self->data, data, size);
    size_t offset = 0;
    if (msgpack_unpack_next (&self->unpacked, self->data, size, &offset)
        != MSGPACK_UNPACK_SUCCESS) {
        if (err && errlen)
            snprintf (err, errlen, "malformed message: unpack failed");
        if (id_out)
            *id_out = s_lenient_id (bytes, bytes + size);
        xxl_msg_destroy (&self);
        return NULL;
    }
    self->root = &self->unpacked.data;
    if (self->root->type != MSGPACK_OBJECT_MAP) {
        if (err && errlen)
            snprintf (err, errlen, "malformed message: the root is not a map");
        xxl_msg_destroy (&self);
        return NULL;
    }
    const msgpack_object *id = xxl_msg_get (self->root, "id");
    if (id && id->type == MSGPACK_OBJECT_POSITIVE_INTEGER && id->via.u64 >= 1) {
        self->id = id->via.u64;
        if (id_out)
            *id_out = self->id;
    }
    else {
        if (err && errlen)
            snprintf (err, errlen, "field 'id' is missing or not an integer >= 1");
        xxl_msg_destroy (&self);
        return NULL;
    }
    const msgpack_object *v = xxl_msg_get (self->root, "v");
    if (!v || v->type != MSGPACK_OBJECT_POSITIVE_INTEGER
    ||  v->via.u64 != XXL_PROTOCOL_VERSION) {
        if (err && errlen)
            snprintf (err, errlen, "unsupported protocol version (field 'v' must be %d)",
                      XXL_PROTOCOL_VERSION);
        xxl_msg_destroy (&self);
        return NULL;
    }
    self->type = xxl_msg_str (self, NULL, "t", 1, XXL_MSG_MAX_TYPE, NULL);
    if (!self->type || !*self->type) {
        if (err && errlen)
            snprintf (err, errlen, "field 't' is missing, empty, or not a short string");
        xxl_msg_destroy (&self);
        return NULL;
    }
    return self;
}

void
xxl_msg_destroy (xxl_msg_t **self_p)
{
    if (self_p && *self_p) {
        xxl_msg_t *self = *self_p;
        msgpack_unpacked_destroy (&self->unpacked);
        free (self->data);
        free (self->error);
        free (self);
        *self_p = NULL;
    }
}

const char *
xxl_msg_type (xxl_msg_t *self)
{
    return self->type;
}

uint64_t
xxl_msg_id (xxl_msg_t *self)
{
    return self->id;
}

const msgpack_object *
xxl_msg_root (xxl_msg_t *self)
{
    return self->root;
}

int
xxl_msg_fail (xxl_msg_t *self, const char *format, ...)
{
    if (!self->error) {
        va_list args;
        va_start (args, format);
        char buffer [512];
        vsnprintf (buffer, sizeof buffer, format, args);
        va_end (args);
        self->error = strdup (buffer);
    }
    return -1;
}

const char *
xxl_msg_error (xxl_msg_t *self)
{
    return self->error;
}

void
xxl_msg_clear_error (xxl_msg_t *self)
{
    free (self->error);
    self->error = NULL;
}

const char *
xxl_msg_str (xxl_msg_t *self, const msgpack_object *map, const char *key,
             int required, size_t maxlen, const char *dflt)
{
    const msgpack_object *value = xxl_msg_get (map? map: self->root, key);
    if (!value) {
        if (required)
            xxl_msg_fail (self, "field '%s' is required", key);
        return dflt;
    }
    const char *ptr;
    size_t len;
    if (value->type == MSGPACK_OBJECT_STR) {
        ptr = value->via.str.ptr;
        len = value->via.str.size;
    }
    else
    if (value->type == MSGPACK_OBJECT_BIN) {
        ptr = value->via.bin.ptr;
        len = value->via.bin.size;
    }
    else {
        xxl_msg_fail (self, "field '%s' must be a string", key);
        return dflt;
    }
    if (len > maxlen) {
        xxl_msg_fail (self, "field '%s' is %zu bytes, over its limit of %zu", key, len, maxlen);
        return dflt;
    }
    if (memchr (ptr, 0, len)) {
        xxl_msg_fail (self, "field '%s' contains a NUL byte", key);
        return dflt;
    }
    if (!s_utf8_valid ((const uint8_t *) ptr, len)) {
        xxl_msg_fail (self, "field '%s' is not valid UTF-8", key);
        return dflt;
    }
    char *copy = (char *) msgpack_zone_malloc (self->unpacked.zone, len + 1);
    if (!copy) {
        xxl_msg_fail (self, "out of memory");
        return dflt;
    }
    memcpy (copy, ptr, len);
    copy [len] = 0;
    return copy;
}

int64_t
xxl_msg_int (xxl_msg_t *self, const msgpack_object *map, const char *key,
             int required, int64_t min, int64_t max, int64_t dflt)
{
    const msgpack_object *value = xxl_msg_get (map? map: self->root, key);
    if (!value) {
        if (required)
            xxl_msg_fail (self, "field '%s' is required", key);
        return dflt;
    }
    int64_t result;
    if (value->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
        if (value->via.u64 > (uint64_t) INT64_MAX) {
            xxl_msg_fail (self, "field '%s' is out of range", key);
            return dflt;
        }
        result = (int64_t) value->via.u64;
    }
    else
    if (value->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
        result = value->via.i64;
    else {
        xxl_msg_fail (self, "field '%s' must be an integer", key);
        return dflt;
    }
    if (result < min || result > max) {
        xxl_msg_fail (self, "field '%s' is %" PRId64 ", outside %" PRId64 "..%" PRId64,
                      key, result, min, max);
        return dflt;
    }
    return result;
}

double
xxl_msg_double (xxl_msg_t *self, const msgpack_object *map, const char *key,
                int required, double min, double max, double dflt)
{
    const msgpack_object *value = xxl_msg_get (map? map: self->root, key);
    if (!value) {
        if (required)
            xxl_msg_fail (self, "field '%s' is required", key);
        return dflt;
    }
    double result;
    if (value->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
        result = (double) value->via.u64;
    else
    if (value->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
        result = (double) value->via.i64;
    else
    if (value->type == MSGPACK_OBJECT_FLOAT32 || value->type == MSGPACK_OBJECT_FLOAT64)
        result = value->via.f64;
    else {
        xxl_msg_fail (self, "field '%s' must be a number", key);
        return dflt;
    }
    if (!(result >= min && result <= max)) {
        xxl_msg_fail (self, "field '%s' is %g, outside %g..%g", key, result, min, max);
        return dflt;
    }
    return result;
}

int
xxl_msg_bool (xxl_msg_t *self, const msgpack_object *map, const char *key,
              int required, int dflt)
{
    const msgpack_object *value = xxl_msg_get (map? map: self->root, key);
    if (!value) {
        if (required)
            xxl_msg_fail (self, "field '%s' is required", key);
        return dflt;
    }
    if (value->type != MSGPACK_OBJECT_BOOLEAN) {
        xxl_msg_fail (self, "field '%s' must be a boolean", key);
        return dflt;
    }
    return value->via.boolean? 1: 0;
}

const msgpack_object *
xxl_msg_array (xxl_msg_t *self, const msgpack_object *map, const char *key,
               int required, size_t max_items, size_t *count)
{
    *count = 0;
    const msgpack_object *value = xxl_msg_get (map? map: self->root, key);
    if (!value) {
        if (required)
            xxl_msg_fail (self, "field '%s' is required", key);
        return NULL;
    }
    if (value->type != MSGPACK_OBJECT_ARRAY) {
        xxl_msg_fail (self, "field '%s' must be an array", key);
        return NULL;
    }
    if (value->via.array.size > max_items) {
        xxl_msg_fail (self, "field '%s' has %u items, over its limit of %zu",
                      key, value->via.array.size, max_items);
        return NULL;
    }
    *count = value->via.array.size;
    return value->via.array.ptr;
}

const msgpack_object *
xxl_msg_map (xxl_msg_t *self, const msgpack_object *map, const char *key, int required)
{
    const msgpack_object *value = xxl_msg_get (map? map: self->root, key);
    if (!value) {
        if (required)
            xxl_msg_fail (self, "field '%s' is required", key);
        return NULL;
    }
    if (value->type != MSGPACK_OBJECT_MAP) {
        xxl_msg_fail (self, "field '%s' must be a map", key);
        return NULL;
    }
    return value;
}

//  --------------------------------------------------------------------
//  JSON

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

char *
xxl_utf8_repair (const char *text)
{
    const uint8_t *p = (const uint8_t *) text;
    size_t n = strlen (text), valid = 0, bad;
    while (valid < n) {
        size_t seq = p [valid] < 0x80? 1: s_utf8_seq (p + valid, n - valid, &bad);
        if (!seq)
            break;
        valid += seq;
    }
    if (valid == n)
        return NULL;
    char *fixed = (char *) malloc (s_utf8_fixed_size (p, n, valid, 3) + 1);
    if (!fixed)
        return NULL;
    memcpy (fixed, text, valid);
    size_t used = valid;
    for (size_t i = valid; i < n; ) {
        size_t seq = s_utf8_seq (p + i, n - i, &bad);
        if (seq) {
            memcpy (fixed + used, p + i, seq);
            used += seq;
            i += seq;
        }
        else {
            memcpy (fixed + used, "\xef\xbf\xbd", 3);
            used += 3;
            i += bad;
        }
    }
    fixed [used] = 0;
    return fixed;
}

const char *
xxl_printable (const char *text, char *out, size_t outlen)
{
    if (!outlen)
        return out;
    const uint8_t *p = (const uint8_t *) (text? text: "(null)");
    size_t n = strlen ((const char *) p), at = 0;
    for (size_t i = 0; i < n; ) {
        char piece [8];
        size_t bad, len = s_utf8_seq (p + i, n - i, &bad), size;
        uint8_t c = p [i];
        if (!len) {
            size = (size_t) snprintf (piece, sizeof piece, "\\x%02x", c);
            len = 1;
        }
        else
        if (c == '\n' || c == '\r' || c == '\t' || c == '\\') {
            piece [0] = '\\';
            piece [1] = c == '\n'? 'n': c == '\r'? 'r': c == '\t'? 't': '\\';
            size = 2;
        }
        else
        if (c < 0x20 || c == 0x7f)
            size = (size_t) snprintf (piece, sizeof piece, "\\x%02x", c);
        else
        if (c == 0xc2 && p [i + 1] < 0xa0)              //  U+0080..U+009F
            size = (size_t) snprintf (piece, sizeof piece, "\\u%04x", p [i + 1]);
        else
        if (c == 0xe2 && p [i + 1] == 0x80 && (p [i + 2] == 0xa8 || p [i + 2] == 0xa9))
            size = (size_t) snprintf (piece, sizeof piece, "\\u20%02x", p [i + 2] - 0x80);
        else {
            memcpy (piece, p + i, len);
            size = len;
        }
        if (at + size >= outlen)
            break;
        memcpy (out + at, piece, size);
        at += size;
        i += len;
    }
    out [at] = 0;
    return out;
}

//  --------------------------------------------------------------------
//  Encoder

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
    size_t valid = s_ascii_prefix (p, len);
    while (valid < len) {
        if (p [valid] < 0x80) {
            valid += s_ascii_prefix (p + valid, len - valid);
            continue;
        }
        size_t bad, seq = s_utf8_seq (p + valid, len - valid, &bad);
        if (!seq)
            break;
        valid += seq;
    }
    size_t size = valid == len? len: s_utf8_fixed_size (p, len, valid, repl_len);
    if (as_bin)
        msgpack_pack_bin (&self->packer, size);
    else
        msgpack_pack_str (&self->packer, size);
    if (len == 0)
        return;
    msgpack_pack_str_body (&self->packer, value, valid);
    for (size_t i = valid; i < len; ) {
        size_t bad, seq = s_utf8_seq (p + i, len - i, &bad);
        if (seq) {
            //  The run of valid bytes up to the next invalid sequence
            size_t start = i;
            while (i < len && (seq = s_utf8_seq (p + i, len - i, &bad)) != 0)
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
