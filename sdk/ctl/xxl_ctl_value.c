/*  xxl_ctl_value.c -- reading msgpack reply objects in xxl-ctl.
*/

#include "xxl_ctl_value.h"

#include <czmq.h>
#include <inttypes.h>

char *
xxl_ctl_strndup (const char *text, size_t size)
{
    char *copy = (char *) malloc (size + 1);
    if (copy) {
        memcpy (copy, text, size);
        copy [size] = 0;
    }
    return copy;
}

void
xxl_ctl_value_str (msgpack_object *obj, const char *text, size_t size)
{
    obj->type = MSGPACK_OBJECT_STR;
    obj->via.str.ptr = text;
    obj->via.str.size = (uint32_t) size;
}

int
xxl_ctl_pack_str (msgpack_packer *pk, const char *text)
{
    size_t length = strlen (text);
    return msgpack_pack_str (pk, length) || msgpack_pack_str_body (pk, text, length)? -1: 0;
}

const msgpack_object *
xxl_ctl_value_get (const msgpack_object *map, const char *key)
{
    const msgpack_object *value = xxl_msg_get (map, key);
    return value && value->type != MSGPACK_OBJECT_NIL? value: NULL;
}

int
xxl_ctl_value_int (const msgpack_object *map, const char *key, int64_t *value)
{
    const msgpack_object *obj = xxl_ctl_value_get (map, key);
    if (obj && obj->type == MSGPACK_OBJECT_POSITIVE_INTEGER && obj->via.u64 <= INT64_MAX) {
        *value = (int64_t) obj->via.u64;
        return 0;
    }
    if (obj && obj->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) {
        *value = obj->via.i64;
        return 0;
    }
    return -1;
}

int64_t
xxl_ctl_value_int_or (const msgpack_object *map, const char *key, int64_t dflt)
{
    int64_t value;
    return xxl_ctl_value_int (map, key, &value) == 0? value: dflt;
}

//  Arrays of scalars only, comma-joined; NULL when out of memory
static char *
s_join (const msgpack_object *array)
{
    char *joined = strdup ("");
    for (uint32_t i = 0; i < array->via.array.size && joined; i++) {
        char *item = xxl_ctl_value_text (&array->via.array.ptr [i]);
        char *next = item? zsys_sprintf ("%s%s%s", joined, i? ",": "", item): NULL;
        free (item);
        free (joined);
        joined = next;
    }
    return joined;
}

char *
xxl_ctl_value_text (const msgpack_object *obj)
{
    char number [64];
    if (!obj)
        return strdup ("");
    switch (obj->type) {
        case MSGPACK_OBJECT_NIL:
            return strdup ("");
        case MSGPACK_OBJECT_BOOLEAN:
            return strdup (obj->via.boolean? "true": "false");
        case MSGPACK_OBJECT_POSITIVE_INTEGER:
            snprintf (number, sizeof number, "%" PRIu64, obj->via.u64);
            return strdup (number);
        case MSGPACK_OBJECT_NEGATIVE_INTEGER:
            snprintf (number, sizeof number, "%" PRId64, obj->via.i64);
            return strdup (number);
        case MSGPACK_OBJECT_FLOAT32:
        case MSGPACK_OBJECT_FLOAT64:
            snprintf (number, sizeof number, "%g", obj->via.f64);
            return strdup (number);
        case MSGPACK_OBJECT_STR:
            return xxl_ctl_strndup (obj->via.str.ptr, obj->via.str.size);
        case MSGPACK_OBJECT_ARRAY: {
            int scalars = 1;
            for (uint32_t i = 0; i < obj->via.array.size; i++) {
                msgpack_object_type type = obj->via.array.ptr [i].type;
                if (type == MSGPACK_OBJECT_ARRAY || type == MSGPACK_OBJECT_MAP)
                    scalars = 0;
            }
            if (scalars)
                return s_join (obj);
            break;
        }
        default:
            break;
    }
    char *json = xxl_msg_to_json (obj, 0);
    return json? json: strdup ("?");
}

char *
xxl_ctl_value_text_of (const msgpack_object *map, const char *key)
{
    return xxl_ctl_value_text (xxl_ctl_value_get (map, key));
}
