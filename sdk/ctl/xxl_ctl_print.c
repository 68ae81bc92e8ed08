/*  xxl_ctl_print.c -- xxl-ctl's output: errors, JSON, tables, key: value.
*/

#include "xxl_ctl_print.h"
#include "xxl_ctl_cmd.h"
#include "xxl_ctl_value.h"

#include <czmq.h>
#include <inttypes.h>
#include <time.h>

int
xxl_ctl_print_json (ctl_t *self, const msgpack_object *obj)
{
    char *text = xxl_msg_to_json (obj, 0);
    if (!text)
        return -1;
    fprintf (self->out, "%s\n", text);
    free (text);
    return 0;
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
    if (self->json) {
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

char *
xxl_ctl_first_line (char *text, size_t max)
{
    if (!text)
        return NULL;
    char *br = strstr (text, "<br>");
    if (br)
        *br = 0;
    text [strcspn (text, "\r\n")] = 0;
    if (strlen (text) > max) {
        size_t cut = max - 3;
        while (cut > 0 && ((unsigned char) text [cut] & 0xC0) == 0x80)
            cut--;                      //  don't split a UTF-8 sequence
        strcpy (text + cut, "...");
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

//  UTF-8 aware display width (counts code points)
static size_t
s_width (const char *text)
{
    size_t width = 0;
    for (const unsigned char *p = (const unsigned char *) text; *p; p++)
        if ((*p & 0xC0) != 0x80)
            width++;
    return width;
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
            size_t w = s_width (table->cells [i]);
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
                             (int) (width [c] - s_width (cell) + 2), "");
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
