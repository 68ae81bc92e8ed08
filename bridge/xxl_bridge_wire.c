/*  xxl_bridge_wire.c -- the XXL-JOB HTTP wire, as the executors speak it.

    See xxl_bridge_wire.h.  Every parse is bounded by its input: jansson
    reads at most len bytes (JSON_DISABLE_EOF_CHECK not set: trailing
    garbage is an error), and so does the flat scanner (the common shapes,
    read without a tree: what it reads, jansson reads the same way; what
    it does not take, jansson reads); nothing is kept from a body that
    fails.
*/

#define _GNU_SOURCE
#include "xxl_bridge_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <errno.h>
#include <assert.h>

//  A name of the registry: a non-empty string of at most
//  XXL_WIRE_NAME_MAX bytes without C0 control characters or DEL
static int
s_name (json_t *root, const char *field, char *out, char *why, size_t whylen)
{
    const char *text = json_string_value (json_object_get (root, field));
    if (!text || !*text) {
        snprintf (why, whylen, "%s must be a non-empty string", field);
        return -1;
    }
    size_t len = strlen (text);
    if (len > XXL_WIRE_NAME_MAX) {
        snprintf (why, whylen, "%s is longer than %d bytes", field, XXL_WIRE_NAME_MAX);
        return -1;
    }
    for (size_t i = 0; i < len; i++)
        if ((unsigned char) text [i] < 0x20 || text [i] == 0x7f) {
            snprintf (why, whylen, "%s holds a control character", field);
            return -1;
        }
    memcpy (out, text, len + 1);
    return 0;
}

int
xxl_wire_registry_parse (const char *body, size_t len, xxl_wire_registry_t *out,
                         char *why, size_t whylen)
{
    json_error_t error;
    json_t *root = json_loadb (body, len, JSON_REJECT_DUPLICATES, &error);
    if (!root || !json_is_object (root)) {
        snprintf (why, whylen, "the body is not a JSON object%s%s", root? "": ": ",
                  root? "": error.text);
        json_decref (root);
        return -1;
    }
    json_t *group = json_object_get (root, "registryGroup");
    int rc = -1;
    if (group && !json_is_null (group)
    && (!json_is_string (group) || strcasecmp (json_string_value (group), "EXECUTOR")))
        snprintf (why, whylen, "registryGroup must be EXECUTOR");
    else
    if (s_name (root, "registryKey", out->key, why, whylen) == 0
    &&  s_name (root, "registryValue", out->value, why, whylen) == 0)
        rc = 0;
    json_decref (root);
    return rc;
}

//  An integer field, also given as a numeric string (some clients send
//  longs so); 0 and *value, or -1
static int
s_int (json_t *value, int64_t *out)
{
    if (json_is_integer (value)) {
        *out = json_integer_value (value);
        return 0;
    }
    if (json_is_string (value)) {
        const char *text = json_string_value (value);
        char *end;
        errno = 0;
        long long number = strtoll (text, &end, 10);
        if (*text && !*end && errno == 0) {
            *out = number;
            return 0;
        }
    }
    return -1;
}

void
xxl_wire_callbacks_free (xxl_wire_callback_t *items, size_t count)
{
    if (!items)
        return;
    for (size_t i = 0; i < count; i++)
        free (items [i].msg);
    free (items);
}

static int s_callback_flat (const char *body, size_t len, xxl_wire_callback_t **items_p);

int
xxl_wire_callback_parse (const char *body, size_t len, xxl_wire_callback_t **items_p,
                         char *why, size_t whylen)
{
    *items_p = NULL;
    int flat = s_callback_flat (body, len, items_p);
    if (flat >= 0)
        return flat;
    json_error_t error;
    json_t *root = json_loadb (body, len, 0, &error);
    if (!root || !json_is_array (root)) {
        snprintf (why, whylen, "the body is not a JSON array%s%s", root? "": ": ",
                  root? "": error.text);
        json_decref (root);
        return -1;
    }
    size_t count = json_array_size (root);
    if (count > XXL_WIRE_BATCH_MAX) {
        snprintf (why, whylen, "more than %d callbacks in one batch", XXL_WIRE_BATCH_MAX);
        json_decref (root);
        return -1;
    }
    xxl_wire_callback_t *items = (xxl_wire_callback_t *) calloc (count? count: 1, sizeof *items);
    if (!items) {
        snprintf (why, whylen, "out of memory");
        json_decref (root);
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        json_t *item = json_array_get (root, i);
        xxl_wire_callback_t *cb = items + i;
        int64_t value;
        if (!json_is_object (item)
        ||  s_int (json_object_get (item, "logId"), &cb->log_id) || cb->log_id <= 0) {
            snprintf (why, whylen, "callback %zu has no positive logId", i);
            goto fail;
        }
        json_t *when = json_object_get (item, "logDateTim");
        if (!when)
            when = json_object_get (item, "logDateTime");
        cb->log_date_time = when && s_int (when, &value) == 0 && value > 0? value: 0;
        //  2.3+: handleCode, handleMsg; 2.0-2.2: executeResult {code, msg}
        json_t *result = json_object_get (item, "executeResult");
        json_t *code = json_object_get (item, "handleCode");
        json_t *msg = json_object_get (item, "handleMsg");
        if (!code && json_is_object (result)) {
            code = json_object_get (result, "code");
            msg = json_object_get (result, "msg");
        }
        if (s_int (code, &value) || value < 1 || value > 999) {
            snprintf (why, whylen, "callback %zu (logId %lld) has no handleCode 1-999", i,
                      (long long) cb->log_id);
            goto fail;
        }
        cb->code = (int) value;
        if (json_is_string (msg)) {
            cb->msg = strdup (json_string_value (msg));
            if (!cb->msg) {
                snprintf (why, whylen, "out of memory");
                goto fail;
            }
        }
    }
    json_decref (root);
    *items_p = items;
    return (int) count;
fail:
    xxl_wire_callbacks_free (items, count);
    json_decref (root);
    return -1;
}

void
xxl_wire_answer_free (xxl_wire_answer_t *answer)
{
    free (answer->msg);
    answer->msg = NULL;
    json_decref (answer->content);
    answer->content = NULL;
}

//  Text that came where JSON was wanted, for a msg: its first 200 bytes,
//  control characters as '?'
static char *
s_excerpt (const char *lead, const char *body, size_t len)
{
    char text [256];
    size_t n = len < 200? len: 200, i;
    for (i = 0; i < n; i++)
        text [i] = (unsigned char) body [i] < 0x20? '?': body [i];
    text [i] = 0;
    char *out = NULL;
    if (asprintf (&out, "%s%s%s", lead, text, len > n? "...": "") < 0)
        out = NULL;
    return out;
}

//  --------------------------------------------------------------------------
//  The common shapes read without a jansson tree: a flat JSON object
//  (values integers, null, true, false or strings with no escape and no
//  byte outside 0x20-0x7e) is scanned into its fields; anything else
//  (nested values, escapes, reals, long integers, invalid JSON) makes the
//  scan fail, and the full parse reads the body as before

typedef enum { FLAT_NULL, FLAT_BOOL, FLAT_INT, FLAT_STR } flat_type_t;

typedef struct {
    const char *key, *text;         //  not NUL-terminated
    size_t keylen, len;
    flat_type_t type;
    int64_t number;
} flat_field_t;

//  Most fields of a flat object read (more: the full parse)
#define FLAT_FIELDS  16

static const char *
s_flat_ws (const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

//  A string with no escape at p (after its '"'): its end (the closing
//  '"'), or NULL
static const char *
s_flat_string (const char *p, const char *end)
{
    while (p < end && *p != '"' && *p != '\\' && (unsigned char) *p >= 0x20
    &&     (unsigned char) *p < 0x7f)
        p++;
    return p < end && *p == '"'? p: NULL;
}

//  Scans the flat object at *pp (whitespace before it skipped) into
//  fields: their count, *pp past the '}'; or -1
static int
s_flat_object (const char **pp, const char *end, flat_field_t *fields)
{
    const char *p = s_flat_ws (*pp, end);
    int count = 0;
    if (p == end || *p++ != '{')
        return -1;
    p = s_flat_ws (p, end);
    if (p < end && *p == '}') {
        *pp = p + 1;
        return 0;
    }
    while (true) {
        if (count == FLAT_FIELDS || p == end || *p++ != '"')
            return -1;
        flat_field_t *f = fields + count++;
        f->key = p;
        if (!(p = s_flat_string (p, end)))
            return -1;
        f->keylen = (size_t) (p++ - f->key);
        p = s_flat_ws (p, end);
        if (p == end || *p++ != ':')
            return -1;
        p = s_flat_ws (p, end);
        if (p == end)
            return -1;
        if (*p == '"') {
            f->type = FLAT_STR;
            f->text = ++p;
            if (!(p = s_flat_string (p, end)))
                return -1;
            f->len = (size_t) (p++ - f->text);
        }
        else
        if (end - p >= 4 && memcmp (p, "null", 4) == 0) {
            f->type = FLAT_NULL;
            p += 4;
        }
        else
        if (end - p >= 4 && memcmp (p, "true", 4) == 0) {
            f->type = FLAT_BOOL;
            p += 4;
        }
        else
        if (end - p >= 5 && memcmp (p, "false", 5) == 0) {
            f->type = FLAT_BOOL;
            p += 5;
        }
        else {
            //  An integer of at most 18 digits, as JSON writes one
            bool negative = *p == '-';
            if (negative)
                p++;
            const char *digits = p;
            int64_t value = 0;
            while (p < end && *p >= '0' && *p <= '9' && p - digits < 18)
                value = value * 10 + (*p++ - '0');
            if (p == digits || (*digits == '0' && p - digits > 1)
            ||  (p < end && ((*p >= '0' && *p <= '9') || *p == '.' || *p == 'e' || *p == 'E')))
                return -1;
            f->type = FLAT_INT;
            f->number = negative? -value: value;
        }
        p = s_flat_ws (p, end);
        if (p == end)
            return -1;
        if (*p == '}') {
            *pp = p + 1;
            return count;
        }
        if (*p++ != ',')
            return -1;
        p = s_flat_ws (p, end);
    }
}

//  The field named key (its last, as jansson keeps the last of a repeated
//  key), or NULL
static const flat_field_t *
s_flat_get (const flat_field_t *fields, int count, const char *key)
{
    size_t keylen = strlen (key);
    for (int i = count - 1; i >= 0; i--)
        if (fields [i].keylen == keylen && memcmp (fields [i].key, key, keylen) == 0)
            return fields + i;
    return NULL;
}

//  The common answer ({"code":200,"msg":null} and the like: an integer
//  code 0-999, no content or data but null): true and *out filled, msg
//  malloc'd; or false, nothing allocated
static bool
s_answer_flat (const char *body, size_t len, xxl_wire_answer_t *out)
{
    flat_field_t fields [FLAT_FIELDS];
    const char *p = body, *end = body + len;
    int count = s_flat_object (&p, end, fields);
    if (count < 0 || s_flat_ws (p, end) != end)
        return false;
    const flat_field_t *code = s_flat_get (fields, count, "code");
    const flat_field_t *msg = s_flat_get (fields, count, "msg");
    const flat_field_t *content = s_flat_get (fields, count, "content");
    const flat_field_t *data = s_flat_get (fields, count, "data");
    if (!code || code->type != FLAT_INT || code->number < 0 || code->number > 999
    ||  (content && content->type != FLAT_NULL) || (data && data->type != FLAT_NULL))
        return false;
    out->code = (int) code->number;
    if (msg && msg->type == FLAT_STR) {
        out->msg = strndup (msg->text, msg->len);
        if (!out->msg)
            return false;
    }
    return true;
}

//  A callback batch of flat items of the 2.3+ form ({logId, logDateTim or
//  logDateTime, handleCode, handleMsg}, integers as integers), each valid:
//  their count with *items_p malloc'd; or -1, nothing allocated
static int
s_callback_flat (const char *body, size_t len, xxl_wire_callback_t **items_p)
{
    const char *p = s_flat_ws (body, body + len), *end = body + len;
    if (p == end || *p++ != '[')
        return -1;
    p = s_flat_ws (p, end);
    xxl_wire_callback_t *items = NULL;
    size_t count = 0, cap = 0;
    if (p < end && *p == ']')
        p++;
    else
    while (true) {
        flat_field_t fields [FLAT_FIELDS];
        int n = s_flat_object (&p, end, fields);
        if (n < 0 || count == XXL_WIRE_BATCH_MAX)
            goto fail;
        const flat_field_t *log_id = s_flat_get (fields, n, "logId");
        const flat_field_t *when = s_flat_get (fields, n, "logDateTim");
        if (!when)
            when = s_flat_get (fields, n, "logDateTime");
        const flat_field_t *code = s_flat_get (fields, n, "handleCode");
        const flat_field_t *msg = s_flat_get (fields, n, "handleMsg");
        if (!log_id || log_id->type != FLAT_INT || log_id->number <= 0
        ||  (when && when->type == FLAT_STR) || s_flat_get (fields, n, "executeResult")
        ||  !code || code->type != FLAT_INT || code->number < 1 || code->number > 999)
            goto fail;
        if (count == cap) {
            cap = cap? 2 * cap: 16;
            xxl_wire_callback_t *grown = (xxl_wire_callback_t *)
                realloc (items, cap * sizeof *items);
            if (!grown)
                goto fail;
            items = grown;
        }
        xxl_wire_callback_t *cb = items + count++;
        cb->log_id = log_id->number;
        cb->log_date_time = when && when->type == FLAT_INT && when->number > 0? when->number: 0;
        cb->code = (int) code->number;
        cb->msg = NULL;
        if (msg && msg->type == FLAT_STR && !(cb->msg = strndup (msg->text, msg->len)))
            goto fail;
        p = s_flat_ws (p, end);
        if (p < end && *p == ']') {
            p++;
            break;
        }
        if (p == end || *p++ != ',')
            goto fail;
    }
    if (s_flat_ws (p, end) != end)
        goto fail;
    *items_p = items? items: (xxl_wire_callback_t *) calloc (1, sizeof *items);
    if (!*items_p)
        return -1;
    return (int) count;
fail:
    xxl_wire_callbacks_free (items, count);
    return -1;
}

void
xxl_wire_answer_read (int status, const char *body, size_t len, const char *why,
                      xxl_wire_answer_t *out)
{
    out->code = 500;
    out->msg = NULL;
    out->content = NULL;
    char lead [160];
    if (status == 0) {
        out->msg = strdup (why && *why? why: "no answer from the executor");
        return;
    }
    if (status == 200 && body && s_answer_flat (body, len, out))
        return;
    json_t *root = body && len? json_loadb (body, len, 0, NULL): NULL;
    int64_t code;
    if (status != 200 || !json_is_object (root)
    ||  s_int (json_object_get (root, "code"), &code) || code < 0 || code > 999) {
        snprintf (lead, sizeof lead, "the executor answered HTTP %d%s", status,
                  len? ": ": " with no body");
        out->msg = s_excerpt (lead, body? body: "", len);
        json_decref (root);
        return;
    }
    out->code = (int) code;
    const char *msg = json_string_value (json_object_get (root, "msg"));
    if (msg)
        out->msg = strdup (msg);
    json_t *content = json_object_get (root, "content");
    if (!content || json_is_null (content))
        content = json_object_get (root, "data");
    if (content && !json_is_null (content))
        out->content = json_incref (content);
    json_decref (root);
}

static char *
s_dump (json_t *value)
{
    char *text = value? json_dumps (value, JSON_COMPACT): NULL;
    json_decref (value);
    return text;
}

char *
xxl_wire_ok (void)
{
    return strdup ("{\"code\":200,\"msg\":null}");
}

char *
xxl_wire_fail (int code, const char *msg)
{
    return s_dump (json_pack ("{s:i, s:s?}", "code", code, "msg", msg));
}

//  The TriggerParam's fields: integers, then strings
static const char *s_trigger_ints [] = {
    "jobId", "executorTimeout", "logId", "logDateTime", "glueUpdatetime",
    "broadcastIndex", "broadcastTotal", NULL
};
static const char *s_trigger_strs [] = {
    "executorHandler", "executorParams", "executorBlockStrategy", "glueType",
    "glueSource", NULL
};

static const msgpack_object *
s_get (const msgpack_object *map, const char *key)
{
    size_t keylen = strlen (key);
    for (uint32_t i = 0; i < map->via.map.size; i++) {
        const msgpack_object *k = &map->via.map.ptr [i].key;
        if (k->type == MSGPACK_OBJECT_STR && k->via.str.size == keylen
        &&  memcmp (k->via.str.ptr, key, keylen) == 0)
            return &map->via.map.ptr [i].val;
    }
    return NULL;
}

//  Length of the valid UTF-8 sequence at p (RFC 3629: no overlong forms,
//  no surrogates, nothing over U+10FFFF), or 0 when it is not one
static size_t
s_utf8_seq (const unsigned char *p, size_t n)
{
    unsigned char c = p [0];
    if (c < 0x80)
        return 1;
    //  Its length, and the range of its second byte, by its first
    size_t need = c >= 0xf0? 4: c >= 0xe0? 3: 2;
    unsigned char lo = c == 0xe0? 0xa0: c == 0xf0? 0x90: 0x80;
    unsigned char hi = c == 0xed? 0x9f: c == 0xf4? 0x8f: 0xbf;
    if (c < 0xc2 || c > 0xf4 || n < need || p [1] < lo || p [1] > hi)
        return 0;
    for (size_t i = 2; i < need; i++)
        if ((p [i] & 0xc0) != 0x80)
            return 0;
    return need;
}

//  The JSON text of the bytes [text, text + len) as a string, quotes
//  included, into out (room for 6 * len + 2 bytes: the longest escape,
//  \u00XX, of each byte).  '"', '\' and the C0 controls are escaped,
//  DEL and all else valid UTF-8 copied; each byte of an invalid sequence
//  becomes U+FFFD (3 bytes).  Returns the bytes written.
static size_t
s_quote (char *out, const char *text, size_t len)
{
    static const char hex [] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *) text;
    char *o = out;
    *o++ = '"';
    for (size_t i = 0; i < len; ) {
        unsigned char c = p [i];
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            *o++ = (char) c;
            i++;
            continue;
        }
        if (c < 0x80) {
            *o++ = '\\';
            switch (c) {
                case '"':  *o++ = '"'; break;
                case '\\': *o++ = '\\'; break;
                case '\b': *o++ = 'b'; break;
                case '\f': *o++ = 'f'; break;
                case '\n': *o++ = 'n'; break;
                case '\r': *o++ = 'r'; break;
                case '\t': *o++ = 't'; break;
                default:
                    *o++ = 'u'; *o++ = '0'; *o++ = '0';
                    *o++ = hex [c >> 4]; *o++ = hex [c & 15];
            }
            i++;
            continue;
        }
        size_t seq = s_utf8_seq (p + i, len - i);
        if (seq) {
            memcpy (o, p + i, seq);
            o += seq;
            i += seq;
        }
        else {
            memcpy (o, "\xef\xbf\xbd", 3);
            o += 3;
            i++;
        }
    }
    *o++ = '"';
    return (size_t) (o - out);
}

//  ,"key": (the comma when comma); returns the end
static char *
s_key (char *o, const char *key, bool comma)
{
    size_t len = strlen (key);
    if (comma)
        *o++ = ',';
    *o++ = '"';
    memcpy (o, key, len);
    o += len;
    *o++ = '"';
    *o++ = ':';
    return o;
}

//  An integer in decimal; returns the end
static char *
s_number (char *o, int64_t number)
{
    char digits [24];
    size_t n = 0;
    uint64_t u = number < 0? (uint64_t) 0 - (uint64_t) number: (uint64_t) number;
    do
        digits [n++] = (char) ('0' + u % 10);
    while (u /= 10);
    if (number < 0)
        *o++ = '-';
    while (n)
        *o++ = digits [--n];
    return o;
}

char *
xxl_wire_trigger (const msgpack_object *map)
{
    //  Written straight into one buffer, sized first: each integer at
    //  most 20 digits and a sign, each string at most 6 bytes a byte
    const msgpack_object *strs [sizeof s_trigger_strs / sizeof *s_trigger_strs];
    size_t cap = 16;
    for (int i = 0; s_trigger_ints [i]; i++)
        cap += strlen (s_trigger_ints [i]) + 4 + 21;
    for (int i = 0; s_trigger_strs [i]; i++) {
        const msgpack_object *v = map->type == MSGPACK_OBJECT_MAP
                                ? s_get (map, s_trigger_strs [i]): NULL;
        strs [i] = v && v->type == MSGPACK_OBJECT_STR? v: NULL;
        cap += strlen (s_trigger_strs [i]) + 4 + 2 + (strs [i]? 6 * (size_t) v->via.str.size: 0);
    }
    char *out = (char *) malloc (cap), *o = out;
    if (!out)
        return NULL;
    *o++ = '{';
    for (int i = 0; map->type == MSGPACK_OBJECT_MAP && s_trigger_ints [i]; i++) {
        const msgpack_object *v = s_get (map, s_trigger_ints [i]);
        int64_t number = 0;
        if (v && v->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
            number = v->via.u64 > INT64_MAX? INT64_MAX: (int64_t) v->via.u64;
        else
        if (v && v->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
            number = v->via.i64;
        o = s_key (o, s_trigger_ints [i], o - out > 1);
        o = s_number (o, number);
    }
    for (int i = 0; map->type == MSGPACK_OBJECT_MAP && s_trigger_strs [i]; i++) {
        if (!strs [i] && !strcmp (s_trigger_strs [i], "glueSource"))
            continue;
        o = s_key (o, s_trigger_strs [i], true);
        o += strs [i]? s_quote (o, strs [i]->via.str.ptr, strs [i]->via.str.size)
                     : s_quote (o, "", 0);
    }
    *o++ = '}';
    *o = 0;
    assert ((size_t) (o - out) < cap);
    return out;
}
