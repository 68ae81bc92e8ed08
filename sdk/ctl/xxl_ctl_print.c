/*  xxl_ctl_print.c -- xxl-ctl's output: errors, JSON, tables, key: value.
*/

#include "xxl_ctl_print.h"
#include "xxl_ctl_cmd.h"
#include "xxl_ctl_value.h"

#include <czmq.h>
#include <inttypes.h>
#include <time.h>

#include "xxl_tz.h"

//  Walks one step of a --get path from *path: the value it names in obj,
//  or NULL (none there); *path moves past the step.  0 at the path's end
static int
s_step (const char **path, const msgpack_object **obj, int first)
{
    const char *p = *path;
    if (!*p)
        return 0;
    if (*p == '[') {
        char *end;
        long index = strtol (p + 1, &end, 10);
        assert (*end == ']');
        *path = end + 1;
        if (*obj && (*obj)->type == MSGPACK_OBJECT_ARRAY) {
            long size = (long) (*obj)->via.array.size;
            if (index < 0)
                index += size;
            *obj = index >= 0 && index < size? &(*obj)->via.array.ptr [index]: NULL;
        }
        else
            *obj = NULL;
        return 1;
    }
    if (*p == '.')
        p++;
    else
        assert (first);
    size_t length = strcspn (p, ".[");
    *path = p + length;
    const msgpack_object *found = NULL;
    if (*obj && (*obj)->type == MSGPACK_OBJECT_MAP)
        for (uint32_t i = 0; i < (*obj)->via.map.size && !found; i++) {
            const msgpack_object_kv *kv = &(*obj)->via.map.ptr [i];
            if (kv->key.type == MSGPACK_OBJECT_STR && kv->key.via.str.size == length
            &&  memcmp (kv->key.via.str.ptr, p, length) == 0)
                found = &kv->val;
        }
    *obj = found;
    return 1;
}

int
xxl_ctl_get_path_ok (const char *path)
{
    const char *p = path;
    if (!*p)
        return 0;
    while (*p) {
        if (*p == '[') {
            const char *digits = p + 1 + (p [1] == '-');
            size_t count = strspn (digits, "0123456789");
            if (count < 1 || count > 9 || digits [count] != ']')
                return 0;
            p = digits + count + 1;
            continue;
        }
        if (*p == '.')
            p++;
        else
        if (p != path)
            return 0;
        size_t length = strcspn (p, ".[]");
        if (length == 0 || p [length] == ']')
            return 0;
        p += length;
    }
    return 1;
}

int
xxl_ctl_print_json (ctl_t *self, const msgpack_object *obj)
{
    if (self->get) {
        const char *path = self->get;
        int first = 1;
        while (s_step (&path, &obj, first))
            first = 0;
        if (!obj || obj->type == MSGPACK_OBJECT_NIL) {
            fprintf (self->out, "null\n");
            return 0;
        }
        if (obj->type == MSGPACK_OBJECT_STR) {
            fwrite (obj->via.str.ptr, 1, obj->via.str.size, self->out);
            fputc ('\n', self->out);
            return 0;
        }
    }
    char *text = xxl_msg_to_json (obj, 0);
    if (!text)
        return -1;
    fprintf (self->out, "%s\n", text);
    free (text);
    return 0;
}

int
xxl_ctl_print_json_packed (ctl_t *self, const char *data, size_t size)
{
    msgpack_unpacked unpacked;
    msgpack_unpacked_init (&unpacked);
    size_t offset = 0;
    int rc = msgpack_unpack_next (&unpacked, data, size, &offset) == MSGPACK_UNPACK_SUCCESS
          && offset == size && xxl_ctl_print_json (self, &unpacked.data) == 0? 0: -1;
    msgpack_unpacked_destroy (&unpacked);
    return rc? xxl_ctl_fail (self, XXL_CTL_FAILED, "out of memory"): XXL_CTL_OK;
}

int
xxl_ctl_print_json_rows (ctl_t *self, const char *key, const char *data, size_t size,
                         uint32_t count)
{
    msgpack_sbuffer doc;
    msgpack_sbuffer_init (&doc);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &doc, msgpack_sbuffer_write);
    size_t length = strlen (key);
    int rc = msgpack_pack_map (&pk, 1) || msgpack_pack_str (&pk, length)
          || msgpack_pack_str_body (&pk, key, length) || msgpack_pack_array (&pk, count)
          || msgpack_sbuffer_write (&doc, data, size)
          ? xxl_ctl_fail (self, XXL_CTL_FAILED, "out of memory")
          : xxl_ctl_print_json_packed (self, doc.data, doc.size);
    msgpack_sbuffer_destroy (&doc);
    return rc;
}

int
xxl_ctl_print_json_str (ctl_t *self, const char *key, const char *text, size_t size)
{
    msgpack_object_kv kv;
    xxl_ctl_value_str (&kv.key, key, strlen (key));
    xxl_ctl_value_str (&kv.val, text, size);
    msgpack_object root;
    root.type = MSGPACK_OBJECT_MAP;
    root.via.map.size = 1;
    root.via.map.ptr = &kv;
    return xxl_ctl_print_json (self, &root);
}

int
xxl_ctl_fail (ctl_t *self, int status, const char *format, ...)
{
    char text [1024];
    va_list args;
    va_start (args, format);
    vsnprintf (text, sizeof text, format, args);
    va_end (args);
    //  (with --get, an error is a line on err: no value of the reply
    //  stands for it on out)
    if (self->json && !self->get) {
        if (xxl_ctl_print_json_str (self, "error", text, strlen (text)))
            fprintf (self->out, "{\"error\": \"out of memory\"}\n");
    }
    else
        fprintf (self->err, "xxl-ctl: %s\n", text);
    fflush (self->out);
    return status;
}

const char *
xxl_ctl_time_text (int64_t ms, char *buf, size_t buflen)
{
    if (ms <= 0) {
        snprintf (buf, buflen, "-");
        return buf;
    }
    time_t seconds = (time_t) (ms / 1000);
    struct tm tm;
    if (!localtime_r (&seconds, &tm) || !strftime (buf, buflen, "%Y-%m-%d %H:%M:%S", &tm))
        snprintf (buf, buflen, "%" PRId64, ms);
    return buf;
}

int
xxl_ctl_zone_time (int64_t ms, const char *zone, char *buf, size_t buflen)
{
    const xxl_tz_t *tz = xxl_tz_get (zone && *zone? zone: NULL, NULL, 0);
    int rc = tz? 0: -1;
    if (!tz)
        tz = xxl_tz_get (NULL, NULL, 0);
    assert (tz);                        //  (UTC is built in)
    int64_t offset = xxl_tz_offset_utc (tz, xxl_tz_floordiv (ms, 1000), NULL);
    int64_t local = ms + offset * 1000;
    int64_t days = xxl_tz_floordiv (local, 86400000);
    int64_t rest = local - days * 86400000;
    int64_t year;
    int month, day;
    xxl_tz_civil_from_days (days, &year, &month, &day);
    int64_t minutes = (offset < 0? -offset: offset) / 60;
    snprintf (buf, buflen, "%04" PRId64 "-%02d-%02d %02d:%02d:%02d %c%02d:%02d %s",
              year, month, day, (int) (rest / 3600000), (int) (rest / 60000 % 60),
              (int) (rest / 1000 % 60), offset < 0? '-': '+', (int) (minutes / 60),
              (int) (minutes % 60), xxl_tz_name (tz));
    return rc;
}

void
xxl_ctl_print_times (ctl_t *self, const int64_t *times, size_t count, const char *zone)
{
    if (count == 0)
        fprintf (self->out, "no fire times\n");
    for (size_t i = 0; i < count; i++) {
        char buf [128];
        if (xxl_ctl_zone_time (times [i], zone, buf, sizeof buf) && i == 0)
            fprintf (self->err, "xxl-ctl: this machine has no time zone '%s': times in UTC\n",
                     zone);
        fprintf (self->out, "%s\n", buf);
    }
}

//  The next code point of UTF-8 text at *p (advancing *p), or -1 for a
//  byte that does not start a valid sequence (*p past that one byte)
static int32_t
s_code_point (const unsigned char **p)
{
    const unsigned char *s = *p;
    int length = s [0] < 0x80? 1: (s [0] & 0xE0) == 0xC0? 2: (s [0] & 0xF0) == 0xE0? 3:
                 (s [0] & 0xF8) == 0xF0? 4: 0;
    int32_t cp = length == 1? s [0]: length == 2? s [0] & 0x1F: length == 3? s [0] & 0x0F
               : s [0] & 0x07;
    for (int i = 1; i < length; i++) {
        if ((s [i] & 0xC0) != 0x80) {
            length = 0;                 //  (a cut sequence: NUL stops here too)
            break;
        }
        cp = (cp << 6) | (s [i] & 0x3F);
    }
    if (length == 0 || (length == 2 && cp < 0x80) || (length == 3 && cp < 0x800)
    ||  (length == 4 && (cp < 0x10000 || cp > 0x10FFFF))) {
        *p = s + 1;
        return -1;
    }
    *p = s + length;
    return cp;
}

//  Columns a terminal gives a code point: 0 for controls, combining marks
//  and other zero-width characters, 2 for East Asian wide and fullwidth
//  ones (Unicode's East_Asian_Width W and F: CJK ideographs, kana, Hangul
//  syllables, fullwidth forms, emoji), 1 for the rest
static int
s_columns (int32_t cp)
{
    //  { first, last, columns }: the ranges that are not 1 column
    static const int32_t ranges [][3] = {
        { 0x0300, 0x036F, 0 }, { 0x0483, 0x0489, 0 }, { 0x0591, 0x05BD, 0 },
        { 0x0610, 0x061A, 0 }, { 0x064B, 0x065F, 0 }, { 0x0E31, 0x0E31, 0 },
        { 0x0E34, 0x0E3A, 0 }, { 0x0E47, 0x0E4E, 0 }, { 0x1100, 0x115F, 2 },
        { 0x1160, 0x11FF, 0 }, { 0x1AB0, 0x1AFF, 0 }, { 0x1DC0, 0x1DFF, 0 },
        { 0x200B, 0x200F, 0 }, { 0x202A, 0x202E, 0 }, { 0x2060, 0x2064, 0 },
        { 0x20D0, 0x20FF, 0 }, { 0x231A, 0x231B, 2 }, { 0x2329, 0x232A, 2 },
        { 0x23E9, 0x23EC, 2 }, { 0x25FD, 0x25FE, 2 }, { 0x2614, 0x2615, 2 },
        { 0x2E80, 0x3029, 2 }, { 0x302A, 0x302D, 0 }, { 0x302E, 0x303E, 2 },
        { 0x3041, 0x3098, 2 }, { 0x3099, 0x309A, 0 }, { 0x309B, 0x33FF, 2 },
        { 0x3400, 0x4DBF, 2 }, { 0x4E00, 0x9FFF, 2 }, { 0xA000, 0xA4CF, 2 },
        { 0xA960, 0xA97F, 2 }, { 0xAC00, 0xD7A3, 2 }, { 0xF900, 0xFAFF, 2 },
        { 0xFE00, 0xFE0F, 0 }, { 0xFE10, 0xFE19, 2 }, { 0xFE20, 0xFE2F, 0 },
        { 0xFE30, 0xFE6F, 2 }, { 0xFEFF, 0xFEFF, 0 }, { 0xFF00, 0xFF60, 2 },
        { 0xFFE0, 0xFFE6, 2 }, { 0x16FE0, 0x16FE4, 2 }, { 0x17000, 0x18CFF, 2 },
        { 0x1B000, 0x1B2FF, 2 }, { 0x1F004, 0x1F004, 2 }, { 0x1F200, 0x1F251, 2 },
        { 0x1F300, 0x1F64F, 2 }, { 0x1F680, 0x1F6FF, 2 }, { 0x1F900, 0x1F9FF, 2 },
        { 0x1FA70, 0x1FAFF, 2 }, { 0x20000, 0x2FFFD, 2 }, { 0x30000, 0x3FFFD, 2 },
        { 0xE0001, 0xE007F, 0 }, { 0xE0100, 0xE01EF, 0 }
    };
    if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0))
        return 0;
    for (size_t i = 0; i < sizeof ranges / sizeof ranges [0] && cp >= ranges [i][0]; i++)
        if (cp <= ranges [i][1])
            return (int) ranges [i][2];
    return 1;
}

size_t
xxl_ctl_width (const char *text)
{
    size_t width = 0;
    const unsigned char *p = (const unsigned char *) text;
    while (*p) {
        int32_t cp = s_code_point (&p);
        width += cp < 0? 1: (size_t) s_columns (cp);
    }
    return width;
}

char *
xxl_ctl_first_line (char *text, size_t max)
{
    if (!text)
        return NULL;
    assert (max >= 3);
    char *br = strstr (text, "<br>");
    if (br)
        *br = 0;
    text [strcspn (text, "\r\n")] = 0;
    if (xxl_ctl_width (text) > max) {
        //  Keep whole characters that fit in max - 3 columns, then "..."
        const unsigned char *p = (const unsigned char *) text, *cut = p;
        size_t width = 0;
        while (*p) {
            int32_t cp = s_code_point (&p);
            width += cp < 0? 1: (size_t) s_columns (cp);
            if (width > max - 3)
                break;
            cut = p;
        }
        strcpy (text + (cut - (const unsigned char *) text), "...");
    }
    return text;
}

void
xxl_ctl_print_object (ctl_t *self, const msgpack_object *map)
{
    size_t keywidth = 0;
    for (uint32_t i = 0; i < map->via.map.size; i++) {
        const msgpack_object *key = &map->via.map.ptr [i].key;
        if (key->type == MSGPACK_OBJECT_STR && key->via.str.size > keywidth)
            keywidth = key->via.str.size;
    }
    for (uint32_t i = 0; i < map->via.map.size; i++) {
        char *key = xxl_ctl_value_text (&map->via.map.ptr [i].key);
        const msgpack_object *val = &map->via.map.ptr [i].val;
        char *value = NULL;
        size_t keylen = key? strlen (key): 0;
        int is_time = keylen >= 4 && strcasecmp (key + keylen - 4, "time") == 0;
        if (is_time && (val->type == MSGPACK_OBJECT_POSITIVE_INTEGER
                     || val->type == MSGPACK_OBJECT_NEGATIVE_INTEGER
                     || val->type == MSGPACK_OBJECT_NIL)) {
            char buf [64];
            int64_t ms = val->type == MSGPACK_OBJECT_POSITIVE_INTEGER? (int64_t) val->via.u64:
                         val->type == MSGPACK_OBJECT_NEGATIVE_INTEGER? val->via.i64: 0;
            value = strdup (xxl_ctl_time_text (ms, buf, sizeof buf));
        }
        else
            value = xxl_ctl_value_text (val);
        if (key && value) {
            if (strchr (value, '\n')) {
                fprintf (self->out, "%s:\n", key);
                char *save = NULL;
                for (char *line = strtok_r (value, "\n", &save); line;
                     line = strtok_r (NULL, "\n", &save))
                    fprintf (self->out, "    %s\n", line);
            }
            else
                fprintf (self->out, "%s:%*s%s\n", key,
                         (int) (keywidth - keylen + 1), "", value);
        }
        free (key);
        free (value);
    }
}

void
xxl_ctl_table_add (ctl_table_t *table, char *cell)
{
    if (table->count == table->cap) {
        size_t cap = table->cap? table->cap * 2: 64;
        char **cells = (char **) realloc (table->cells, cap * sizeof (char *));
        if (!cells) {
            free (cell);
            return;
        }
        table->cells = cells;
        table->cap = cap;
    }
    table->cells [table->count++] = cell? cell: strdup ("");
}

void
xxl_ctl_table_init (ctl_table_t *table, int cols, const char **headers)
{
    memset (table, 0, sizeof *table);
    table->cols = cols;
    for (int i = 0; i < cols; i++)
        xxl_ctl_table_add (table, strdup (headers [i]));
}

void
xxl_ctl_table_print (ctl_table_t *table, FILE *out, const char *empty)
{
    size_t rows = table->count / (size_t) table->cols;
    if (rows <= 1 && empty)
        fprintf (out, "%s\n", empty);
    else {
        size_t width [32] = { 0 };
        for (size_t i = 0; i < rows * (size_t) table->cols; i++) {
            size_t w = xxl_ctl_width (table->cells [i]);
            if (w > width [i % (size_t) table->cols])
                width [i % (size_t) table->cols] = w;
        }
        for (size_t r = 0; r < rows; r++) {
            for (int c = 0; c < table->cols; c++) {
                const char *cell = table->cells [r * (size_t) table->cols + (size_t) c];
                if (c == table->cols - 1)
                    fprintf (out, "%s\n", cell);
                else
                    fprintf (out, "%s%*s", cell,
                             (int) (width [c] - xxl_ctl_width (cell) + 2), "");
            }
        }
    }
    xxl_ctl_table_free (table);
}

void
xxl_ctl_table_free (ctl_table_t *table)
{
    for (size_t i = 0; i < table->count; i++)
        free (table->cells [i]);
    free (table->cells);
    memset (table, 0, sizeof *table);
}
