/*  xxl_msg.c -- the decoder of xxl's wire messages: xxl_msg_decode and
    the typed getters.

    A frame is unpacked only once xxl_msg_scan (xxl_msg_scan.c) has
    passed it, so msgpack-c's memory stays bounded by the frame size;
    a refused frame still has its id read (xxl_msg_lenient_id), so that
    the refusal can be answered.  Getters then check each field's type
    and range (strings: UTF-8 too).  The encoder is xxl_msg_enc.c, the
    JSON rendering xxl_msg_json.c.
*/

#include "xxl_msg_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>

struct _xxl_msg_t {
    msgpack_unpacked unpacked;
    char *data;                         //  our copy of the frame: msgpack-c's
                                        //  objects point into it (zero-copy)
    const msgpack_object *root;
    const char *type;
    uint64_t id;
    char *error;
};

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
            *id_out = xxl_msg_lenient_id (bytes, bytes + XXL_MSG_MAX_FRAME);
        return NULL;
    }
    if (xxl_msg_scan (bytes, size, err, errlen)) {
        if (id_out)
            *id_out = xxl_msg_lenient_id (bytes, bytes + size);
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
            *id_out = xxl_msg_lenient_id (bytes, bytes + size);
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
    if (!xxl_utf8_valid ((const uint8_t *) ptr, len)) {
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

int64_t
xxl_msg_int_lax (xxl_msg_t *self, const msgpack_object *map, const char *key, int64_t min,
                 int64_t max, int64_t dflt)
{
    const msgpack_object *value = xxl_msg_get (map? map: self->root, key);
    int64_t result;
    if (value && value->type == MSGPACK_OBJECT_POSITIVE_INTEGER
    &&  value->via.u64 <= (uint64_t) INT64_MAX)
        result = (int64_t) value->via.u64;
    else
    if (value && value->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
        result = value->via.i64;
    else
        return dflt;
    return result < min || result > max? dflt: result;
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
