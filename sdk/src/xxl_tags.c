/*  xxl_tags.c -- agent tags: parse, canonical form, match (contract:
    xxl_tags.h).
*/

#include "xxl_tags.h"
#include "xxl/msg.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *key;
    size_t key_len;
    const char *value;
    size_t value_len;
} s_tag_t;

static bool
s_tag_char (char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
        || c == '_' || c == '-' || c == '.' || c == ':' || c == '/';
}

//  Judges the tag [start, start + len) into tag; 0 or -1 with why
static int
s_tag_parse (const char *start, size_t len, s_tag_t *tag, char *why, size_t whylen)
{
    const char *equals = memchr (start, '=', len);
    //  (the tag as a client sent it, escaped: no control byte is echoed)
    char shown [900];
    xxl_printable_n (start, len > 200? 200: len, shown, sizeof shown);
    if (!equals) {
        snprintf (why, whylen, "tag '%s' must be KEY=VALUE", shown);
        return -1;
    }
    tag->key = start;
    tag->key_len = (size_t) (equals - start);
    tag->value = equals + 1;
    tag->value_len = len - tag->key_len - 1;
    if (tag->key_len < 1 || tag->key_len > XXL_TAG_KEY_MAX
    ||  tag->value_len < 1 || tag->value_len > XXL_TAG_VALUE_MAX) {
        snprintf (why, whylen, "tag '%s': KEY must be 1-%d and VALUE 1-%d bytes",
                  shown, XXL_TAG_KEY_MAX, XXL_TAG_VALUE_MAX);
        return -1;
    }
    for (size_t i = 0; i < len; i++)
        if (start + i != equals && !s_tag_char (start [i])) {
            snprintf (why, whylen, "tag '%s': KEY and VALUE may hold only letters, digits,"
                      " '_', '-', '.', ':' and '/'", shown);
            return -1;
        }
    return 0;
}

int
xxl_tag_check (const char *tag, char *why, size_t whylen)
{
    assert (tag);
    s_tag_t parsed;
    return s_tag_parse (tag, strlen (tag), &parsed, why, whylen);
}

static bool
s_space (char c)
{
    return c == ' ' || c == '\t';
}

//  Parses a set into tags [0, XXL_TAGS_MAX]; the count or -1 with why
static int
s_set_parse (const char *text, s_tag_t *tags, char *why, size_t whylen)
{
    int count = 0;
    const char *p = text? text: "";
    while (s_space (*p))
        p++;
    if (!*p)
        return 0;                       //  (blank: no tags)
    while (true) {
        const char *end = strchr (p, ',');
        if (!end)
            end = p + strlen (p);
        const char *start = p;
        while (start < end && s_space (*start))
            start++;
        const char *stop = end;
        while (stop > start && s_space (stop [-1]))
            stop--;
        if (stop == start) {
            char shown [900];
            snprintf (why, whylen, "tags '%s': an empty tag (two commas, or one at an end)",
                      xxl_printable_n (text, strnlen (text, 200), shown, sizeof shown));
            return -1;
        }
        if (count == XXL_TAGS_MAX) {
            snprintf (why, whylen, "more than %d tags", XXL_TAGS_MAX);
            return -1;
        }
        if (s_tag_parse (start, (size_t) (stop - start), &tags [count], why, whylen))
            return -1;
        for (int i = 0; i < count; i++)
            if (tags [i].key_len == tags [count].key_len
            &&  memcmp (tags [i].key, tags [count].key, tags [i].key_len) == 0) {
                snprintf (why, whylen, "tag key '%.*s' given twice",
                          (int) tags [i].key_len, tags [i].key);
                return -1;
            }
        count++;
        if (!*end)
            break;
        p = end + 1;
    }
    return count;
}

static int
s_tag_compare (const void *a_, const void *b_)
{
    const s_tag_t *a = (const s_tag_t *) a_, *b = (const s_tag_t *) b_;
    size_t len = a->key_len < b->key_len? a->key_len: b->key_len;
    int rc = memcmp (a->key, b->key, len);
    return rc? rc: a->key_len < b->key_len? -1: a->key_len > b->key_len? 1: 0;
}

int
xxl_tags_normalize (const char *text, char *out, size_t outlen, char *why, size_t whylen)
{
    assert (out && outlen > 0);
    out [0] = 0;
    s_tag_t tags [XXL_TAGS_MAX];
    int count = s_set_parse (text, tags, why, whylen);
    if (count <= 0)
        return count;
    qsort (tags, (size_t) count, sizeof tags [0], s_tag_compare);
    size_t used = 0;
    for (int i = 0; i < count; i++) {
        size_t need = (i? 1: 0) + tags [i].key_len + 1 + tags [i].value_len;
        if (used + need + 1 > outlen) {
            out [0] = 0;
            snprintf (why, whylen, "tags longer than %zu bytes", outlen - 1);
            return -1;
        }
        if (i)
            out [used++] = ',';
        memcpy (out + used, tags [i].key, tags [i].key_len);
        used += tags [i].key_len;
        out [used++] = '=';
        memcpy (out + used, tags [i].value, tags [i].value_len);
        used += tags [i].value_len;
    }
    out [used] = 0;
    return count;
}

bool
xxl_tags_match (const char *have, const char *want)
{
    s_tag_t wanted [XXL_TAGS_MAX], had [XXL_TAGS_MAX];
    char why [8];
    int want_count = s_set_parse (want, wanted, why, sizeof why);
    if (want_count == 0)
        return true;
    int have_count = s_set_parse (have, had, why, sizeof why);
    if (want_count < 0 || have_count <= 0)
        return false;                   //  (a bad set matches nothing)
    for (int i = 0; i < want_count; i++) {
        bool found = false;
        for (int j = 0; j < have_count && !found; j++)
            found = s_tag_compare (&wanted [i], &had [j]) == 0
                 && wanted [i].value_len == had [j].value_len
                 && memcmp (wanted [i].value, had [j].value, had [j].value_len) == 0;
        if (!found)
            return false;
    }
    return true;
}
