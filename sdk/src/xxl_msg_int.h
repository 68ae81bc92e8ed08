/*  xxl_msg_int.h -- inside the wire codec (xxl/msg.h): what its files
    share, and no one else may use.

    The parts, each calling only parts listed below it:
      xxl_msg.c       the decoder: xxl_msg_t, xxl_msg_decode and the typed
                      getters (xxl_msg_str, _int, ...)
      xxl_msg_enc.c   the encoder: xxl_enc_t and its writers
      xxl_msg_json.c  msgpack objects as JSON (xxl_msg_to_json); calls no
                      other part
      xxl_msg_scan.c  the raw frame before any unpacking: the strict scan
                      and the lenient walk that reads a refused frame's id
      xxl_msg_utf8.c  UTF-8 validation and repair (with the two inline
                      helpers below), xxl_utf8_repair and xxl_printable

    The contract between them:
    - xxl_msg_decode hands a frame to msgpack-c's unpacker only after
      xxl_msg_scan returned 0 for it: the scan is what keeps the
      unpacker's memory bounded by the frame size.
    - xxl_msg_lenient_id reads [p, end) only, never recurses, and takes
      time linear in the frame, whatever the bytes.
    - UTF-8 follows RFC 3629 (no overlongs, no surrogates, nothing over
      U+10FFFF).  xxl_utf8_seq needs at least one byte (asserted); when it
      returns 0 (invalid) it sets *bad_p to 1..3, so a loop that steps by
      the result or by *bad_p always advances.
    - The functions here that are not inline are hidden: libxxl exports
      what xxl/msg.h declares and nothing more.
*/

#ifndef XXL_MSG_INT_H_INCLUDED
#define XXL_MSG_INT_H_INCLUDED

#include "xxl/msg.h"

#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define XXL_MSG_HIDDEN __attribute__ ((visibility ("hidden")))

//  --------------------------------------------------------------------
//  The raw frame (xxl_msg_scan.c)

//  0 when [p, p + size) is one msgpack object within the codec's limits
//  (xxl/msg.h) with nothing after it; -1 otherwise, the reason written
//  into err ("malformed message: ...") when err is not NULL.
XXL_MSG_HIDDEN int
    xxl_msg_scan (const uint8_t *p, size_t size, char *err, size_t errlen);

//  The id of a frame the strict scan refused, or 0 (the first key "id" of
//  the root map, when its value is a positive integer).
XXL_MSG_HIDDEN uint64_t
    xxl_msg_lenient_id (const uint8_t *p, const uint8_t *end);

//  --------------------------------------------------------------------
//  UTF-8 (xxl_msg_utf8.c, and the inline hot paths here)

//  1 when [p, p + n) is valid UTF-8
XXL_MSG_HIDDEN int
    xxl_utf8_valid (const uint8_t *p, size_t n);

//  Size of [p, p + n) once each invalid sequence is replaced with repl_len
//  bytes, counted from offset `from` (the bytes before are valid)
XXL_MSG_HIDDEN size_t
    xxl_utf8_fixed_size (const uint8_t *p, size_t n, size_t from, size_t repl_len);

//  Length of the valid sequence at p (1..4), or 0 when it is invalid, with
//  *bad_p set to the length of its maximal subpart (the bytes that one
//  U+FFFD replaces, as Unicode recommends: at least 1).
static inline size_t
xxl_utf8_seq (const uint8_t *p, size_t n, size_t *bad_p)
{
    assert (n > 0);
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
static inline size_t
xxl_utf8_ascii_prefix (const uint8_t *p, size_t n)
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

#endif
