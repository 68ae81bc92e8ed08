/*  fuzz_tzif.c -- libFuzzer target: the TZif reader (sdk/src/xxl_tz.c).

    Parses the input as a TZif file, outside the zone cache; a zone it
    accepts is asked for offsets (UTC and wall clock, with and without
    the lookup memo, which must agree) across 1800..2600 and at the
    extremes.  See docs/faults.md, "Fuzzing".
*/

#include "xxl_tz.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_ASSERT(cond) do { if (!(cond)) { \
    fprintf (stderr, "fuzz_tzif: %s:%d: %s\n", __FILE__, __LINE__, #cond); abort (); } \
} while (0)

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char err [128];
    xxl_tz_t *zone = xxl_tz_parse (data, size, err, sizeof err);
    if (!zone)
        return 0;
    xxl_tz_memo_t memo;
    memset (&memo, 0, sizeof memo);
    memo.utc_lo = memo.wall_lo = 1;         //  empty
    memo.utc_hi = memo.wall_hi = 0;
    static const int64_t extremes [] = { INT64_MIN, INT64_MIN / 2, -1, 0, 1, INT64_MAX / 2, INT64_MAX };
    for (size_t i = 0; i < sizeof extremes / sizeof extremes [0]; i++) {
        xxl_tz_offset_utc (zone, extremes [i], NULL);
        xxl_tz_offset_wall (zone, extremes [i], NULL);
    }
    //  1800..2600 in steps of 29 days and 1 hour
    for (int64_t t = INT64_C (-5364662400); t < INT64_C (19880899200); t += 29 * 86400 + 3600) {
        int32_t a = xxl_tz_offset_utc (zone, t, NULL);
        int32_t b = xxl_tz_offset_utc (zone, t, &memo);
        S_ASSERT (a == b);
        int32_t c = xxl_tz_offset_wall (zone, t, NULL);
        int32_t d = xxl_tz_offset_wall (zone, t, &memo);
        S_ASSERT (c == d);
    }
    xxl_tz_free (&zone);
    return 0;
}
