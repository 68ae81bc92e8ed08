/*  xxl_msg_utf8.c -- UTF-8 for the wire codec: validation and the size of
    a repaired string (for the decoder's getters and the encoder), and the
    public xxl_utf8_repair and xxl_printable.  RFC 3629: no overlongs, no
    surrogates, nothing over U+10FFFF; each invalid sequence's maximal
    subpart is what one replacement stands for.  The per-sequence helpers
    are inline in xxl_msg_int.h.
*/

#include "xxl_msg_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
xxl_utf8_valid (const uint8_t *p, size_t n)
{
    size_t i = xxl_utf8_ascii_prefix (p, n);
    while (i < n) {
        if (p [i] < 0x80) {
            i += 1 + xxl_utf8_ascii_prefix (p + i + 1, n - i - 1);
            continue;
        }
        size_t bad, len = xxl_utf8_seq (p + i, n - i, &bad);
        if (!len)
            return 0;
        i += len;
    }
    return 1;
}

size_t
xxl_utf8_fixed_size (const uint8_t *p, size_t n, size_t from, size_t repl_len)
{
    size_t size = from;
    for (size_t i = from; i < n; ) {
        size_t bad, len = xxl_utf8_seq (p + i, n - i, &bad);
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

char *
xxl_utf8_repair (const char *text)
{
    const uint8_t *p = (const uint8_t *) text;
    size_t n = strlen (text), valid = 0, bad;
    while (valid < n) {
        size_t seq = p [valid] < 0x80? 1: xxl_utf8_seq (p + valid, n - valid, &bad);
        if (!seq)
            break;
        valid += seq;
    }
    if (valid == n)
        return NULL;
    char *fixed = (char *) malloc (xxl_utf8_fixed_size (p, n, valid, 3) + 1);
    if (!fixed)
        return NULL;
    memcpy (fixed, text, valid);
    size_t used = valid;
    for (size_t i = valid; i < n; ) {
        size_t seq = xxl_utf8_seq (p + i, n - i, &bad);
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
    return xxl_printable_n (text? text: "(null)", text? strlen (text): 6, out, outlen);
}

const char *
xxl_printable_n (const char *text, size_t n, char *out, size_t outlen)
{
    if (!outlen)
        return out;
    const uint8_t *p = (const uint8_t *) text;
    size_t at = 0;
    for (size_t i = 0; i < n; ) {
        char piece [8];
        size_t bad, len = xxl_utf8_seq (p + i, n - i, &bad), size;
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
