/*  xxl_cron_int.h -- inside the cron engine (xxl/cron.h): what its files
    share, and no one else may use.

    The parts, each calling only parts listed below it:
      xxl_cron.c        an expression's life: xxl_cron_new checks the text
                        and the zone, sets up an empty xxl_cron_t and has
                        the parser fill it; destroy and the accessors.  It
                        also lists the Quartz quirks reproduced on purpose
                        and the deviations from Quartz.
      xxl_cron_next.c   the search (xxl_cron_next) over an emulation of
                        java.util.GregorianCalendar; calls no other part
      xxl_cron_parse.c  the parser (xxl_cron_parse), and the one-line
                        error messages of both (xxl_cron_fail)
    Time zones and the civil-date helpers are xxl_tz.c's (xxl_tz.h).

    The parser writes the fields of xxl_cron_t; the search only reads
    them.  xxl_cron_parse takes a zeroed xxl_cron_t with tz and max_year
    set and every set's `over` at INT64_MAX (asserted).  Once it returned
    0, the search may rely on these (xxl_cron_next asserts them):
    - exactly one of day-of-month and day-of-week holds NO_SPEC ('?'),
    - the sets of seconds, minutes, hours and months are not empty,
    - day-of-month's set is not empty when it is used without "L", and
      day-of-week's is not when it is used.
    The years may be empty (a year field of commas alone): the search
    then finds nothing.  The hidden functions here are not exported:
    libxxl exports what xxl/cron.h declares.
*/

#ifndef XXL_CRON_INT_H_INCLUDED
#define XXL_CRON_INT_H_INCLUDED

#include "xxl/cron.h"
#include "xxl_tz.h"

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XXL_CRON_HIDDEN __attribute__ ((visibility ("hidden")))

enum { F_SEC, F_MIN, F_HOUR, F_DOM, F_MONTH, F_DOW, F_YEAR };

#define NO_SPEC  98             //  Quartz's marker for '?'
#define ALL_SPEC 99             //  Quartz's marker for '*'

//  A set of field values: a bitmap for 0..127 and the smallest member
//  above that (values past 127 only come from Quartz quirks; queries never
//  go past 59, so the smallest one is all that matters).
typedef struct {
    uint64_t bits [2];
    int64_t over;               //  INT64_MAX if none
} xxl_cron_set_t;

//  Years: arithmetic progressions, as Quartz's parser produces them
typedef struct {
    int64_t start, stop, step;
} xxl_cron_prog_t;

struct _xxl_cron_t {
    xxl_cron_set_t set [6];     //  seconds .. day-of-week
    xxl_cron_prog_t *years;
    size_t nyears, years_alloc;
    int max_year;               //  Quartz's MAX_YEAR
    bool lastday_of_week;       //  "nL" in day-of-week
    int nth_day_of_week;        //  k of "n#k", 0 if none
    bool lastday_of_month;      //  "L" in day-of-month
    bool nearest_weekday;       //  "W" in day-of-month
    int lastday_offset;         //  n of "L-n"
    const xxl_tz_t *tz;
    char *expr;
    char *tz_name;
};

//  Fills self from expr, the upper-cased expression (ASCII, at most
//  XXL_CRON_EXPR_MAX bytes), as CronExpression.buildExpression does.
//  0, or -1 with Quartz's message (or the engine's own) in err.
XXL_CRON_HIDDEN int
    xxl_cron_parse (xxl_cron_t *self, const char *expr, char *err, size_t errlen);

//  Writes the message into err (when err is not NULL) as one printable
//  line: control characters become '?'.  Returns -1.
XXL_CRON_HIDDEN int
    xxl_cron_fail (char *err, size_t errlen, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

//  Set queries shared by the parser and the search (the search's own,
//  s_set_tail, is in xxl_cron_next.c)
static inline bool
xxl_cron_set_empty (const xxl_cron_set_t *set)
{
    return !set->bits [0] && !set->bits [1] && set->over == INT64_MAX;
}

static inline bool
xxl_cron_set_has (const xxl_cron_set_t *set, int value)
{
    assert (value >= 0 && value < 128);
    return (set->bits [value >> 6] >> (value & 63)) & 1;
}

#endif
