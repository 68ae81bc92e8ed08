/*  fuzz_cron.c -- libFuzzer target: the cron parser and next fire times
    (sdk/include/xxl/cron.h), in time zones.

    Input: the first byte picks a time zone (from a list of real ones with
    daylight saving quirks, or the zone named by the first line); the
    next 8 bytes are the start instant; the rest is the expression.  An
    accepted expression is asked for a chain of fire times, which must
    rise strictly.  See docs/faults.md, "Fuzzing".
*/

#include "xxl/cron.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_ASSERT(cond) do { if (!(cond)) { \
    fprintf (stderr, "fuzz_cron: %s:%d: %s\n", __FILE__, __LINE__, #cond); abort (); } \
} while (0)

static const char *s_zones [] = {
    NULL, "UTC", "America/New_York", "Europe/London", "Asia/Shanghai",
    "Australia/Lord_Howe", "Pacific/Chatham", "America/Sao_Paulo",
    "Africa/Casablanca", "Asia/Gaza", "Europe/Dublin", "Pacific/Apia",
    "America/St_Johns", "Asia/Kathmandu", "Antarctica/Troll",
};
#define S_ZONES (sizeof s_zones / sizeof s_zones [0])

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (size < 9 || size > 4 * XXL_CRON_EXPR_MAX)
        return 0;
    char tz [128] = "";
    const char *zone = NULL;
    const uint8_t *p = data + 9;
    size_t left = size - 9;
    if (data [0] == 0xff) {
        //  The first line names the zone
        const uint8_t *nl = memchr (p, '\n', left);
        if (!nl || (size_t) (nl - p) >= sizeof tz)
            return 0;
        memcpy (tz, p, (size_t) (nl - p));
        left -= (size_t) (nl - p) + 1;
        p = nl + 1;
        zone = tz;
    }
    else
        zone = s_zones [data [0] % S_ZONES];
    int64_t after = 0;
    for (int i = 1; i < 9; i++)
        after = (int64_t) ((uint64_t) after << 8 | data [i]);
    //  Mostly around now; sometimes anywhere
    if (!(data [1] & 0x80))
        after = INT64_C (1700000000000) + after % (INT64_C (400) * 365 * 86400000);
    char *expr = malloc (left + 1);
    if (!expr)
        return 0;
    memcpy (expr, p, left);
    expr [left] = 0;
    char err [256] = "";
    xxl_cron_t *cron = xxl_cron_new (expr, zone, err, sizeof err);
    if (cron) {
        S_ASSERT (strcmp (xxl_cron_expr (cron), expr) == 0);
        int64_t t = after;
        for (int i = 0; i < 8; i++) {
            int64_t next = xxl_cron_next (cron, t);
            if (next == -1)
                break;
            S_ASSERT (next > t);
            S_ASSERT (next % 1000 == 0);
            t = next;
        }
        xxl_cron_destroy (&cron);
    }
    else
        S_ASSERT (err [0] != 0);
    xxl_cron_tz_valid (zone);
    free (expr);
    return 0;
}
