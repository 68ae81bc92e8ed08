/*  xxl_msg_scan.c -- the raw frame, before msgpack-c sees it.

    xxl_msg_scan walks the bytes and refuses anything that could make the
    real unpacker allocate more than the frame justifies: a container
    declaring more items than bytes left, too deep a nesting, too many
    objects in all, oversized strings or keys, ext types and the reserved
    byte 0xc1.  Only a frame that passed the scan goes to the unpacker
    (xxl_msg.c), so its memory stays bounded by the frame size.  A frame
    the scan refuses still has its id read by a lenient, non-recursive
    walk of the root map (xxl_msg_lenient_id), so that the refusal can be
    answered.
*/

#include "xxl_msg_int.h"

#include <stdio.h>
#include <string.h>

#define XXL_MSG_MAX_OBJECTS 262144

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

int
xxl_msg_scan (const uint8_t *p, size_t size, char *err, size_t errlen)
{
    s_scanner_t sc = { p, p + size, 0, err, errlen };
    int refused = s_scan (&sc, 0, 0);
    assert (sc.p <= sc.end);            //  s_need guards every step
    if (!refused && sc.p != sc.end)
        refused = s_scan_fail (&sc, "trailing bytes after the message");
    return refused;
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
uint64_t
xxl_msg_lenient_id (const uint8_t *p, const uint8_t *end)
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
