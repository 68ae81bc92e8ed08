/*  xxl_cron_parse.c -- the parser of cron expressions: fills an
    xxl_cron_t (its field sets, its years, its "L", "W" and "#" flags) from
    the upper-cased text, accepting and rejecting what Quartz does, with
    the same messages where Quartz gives its own.  The quirks it keeps are
    listed in xxl_cron.c; the search that reads what it fills is
    xxl_cron_next.c.
*/

#include "xxl_cron_int.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  -------------------------------------------------------------------------
//  Sets and years: adding values (the search's queries are in
//  xxl_cron_next.c, the shared ones in xxl_cron_int.h)

static void
s_set_add (xxl_cron_set_t *set, int64_t value)
{
    if (value >= 0 && value < 128)
        set->bits [value >> 6] |= (uint64_t) 1 << (value & 63);
    else
    if (value >= 128 && value < set->over)
        set->over = value;
}

//  Largest member (set not empty); only compared with NO_SPEC
static int64_t
s_set_last (const xxl_cron_set_t *set)
{
    if (set->over != INT64_MAX)
        return set->over;
    if (set->bits [1])
        return 127 - __builtin_clzll (set->bits [1]);
    return 63 - __builtin_clzll (set->bits [0]);
}

static int
s_years_add (xxl_cron_t *self, int64_t start, int64_t stop, int64_t step)
{
    if (self->nyears == self->years_alloc) {
        size_t alloc = self->years_alloc? self->years_alloc * 2: 2;
        xxl_cron_prog_t *years = realloc (self->years, alloc * sizeof (xxl_cron_prog_t));
        if (!years)
            return -1;
        self->years = years;
        self->years_alloc = alloc;
    }
    self->years [self->nyears++] = (xxl_cron_prog_t) { start, stop, step };
    return 0;
}

//  -------------------------------------------------------------------------
//  Parser: a re-implementation of CronExpression.buildExpression and
//  storeExpressionVals, keeping their character positions so that the
//  same inputs are accepted and the same messages produced.

typedef struct {
    xxl_cron_t *self;
    char *err;
    size_t errlen;
} s_parse_t;

//  Writes the message into err (if any) as one printable line; -1
static int
s_vfail (char *err, size_t errlen, const char *fmt, va_list args)
{
    if (err && errlen) {
        vsnprintf (err, errlen, fmt, args);
        //  One printable line
        for (char *p = err; *p; p++)
            if ((unsigned char) *p < 0x20 || *p == 0x7f)
                *p = '?';
    }
    return -1;
}

int
xxl_cron_fail (char *err, size_t errlen, const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    s_vfail (err, errlen, fmt, args);
    va_end (args);
    return -1;
}

__attribute__ ((format (printf, 2, 3)))
static int
s_fail (s_parse_t *ctx, const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    s_vfail (ctx->err, ctx->errlen, fmt, args);
    va_end (args);
    return -1;
}

//  Java Integer.parseInt: optional sign, digits, int range
static int
s_parse_int (const char *s, int len, int *value_p)
{
    int i = 0, neg = 0;
    if (len > 0 && (s [0] == '+' || s [0] == '-')) {
        neg = s [0] == '-';
        i = 1;
    }
    if (i >= len)
        return -1;
    int64_t v = 0;
    for (; i < len; i++) {
        if (s [i] < '0' || s [i] > '9')
            return -1;
        v = v * 10 + (s [i] - '0');
        if (v > (int64_t) INT_MAX + neg)
            return -1;
    }
    *value_p = (int) (neg? -v: v);
    return 0;
}

//  CronExpression.getValue: digit run at i appended to the digit v.
//  Returns -1 where Java throws (i out of range, int overflow).
static int
s_get_value (int v, const char *s, int len, int i, int *value_p, int *pos_p)
{
    if (i >= len)
        return -1;
    int64_t acc = v;
    bool overflow = false;
    char c = s [i];
    while (c >= '0' && c <= '9') {
        acc = acc * 10 + (c - '0');
        if (acc > INT_MAX) {
            overflow = true;
            acc = INT_MAX;
        }
        if (++i >= len)
            break;
        c = s [i];
    }
    *pos_p = i < len? i: i + 1;
    if (overflow)
        return -1;
    *value_p = (int) acc;
    return 0;
}

static int
s_name_index (const char *sub, const char *names)
{
    for (int i = 0; names [i * 3]; i++)
        if (memcmp (sub, names + i * 3, 3) == 0)
            return i;
    return -1;
}

#define MONTH_NAMES "JANFEBMARAPRMAYJUNJULAUGSEPOCTNOVDEC"
#define DAY_NAMES   "SUNMONTUEWEDTHUFRISAT"

static int
s_check_incr (s_parse_t *ctx, int incr, int type)
{
    if (incr > 59 && (type == F_SEC || type == F_MIN))
        return s_fail (ctx, "Increment > 60 : %d", incr);
    if (incr > 23 && type == F_HOUR)
        return s_fail (ctx, "Increment > 24 : %d", incr);
    if (incr > 31 && type == F_DOM)
        return s_fail (ctx, "Increment > 31 : %d", incr);
    if (incr > 7 && type == F_DOW)
        return s_fail (ctx, "Increment > 7 : %d", incr);
    if (incr > 12 && type == F_MONTH)
        return s_fail (ctx, "Increment > 12 : %d", incr);
    return 0;
}

//  CronExpression.addToSet: validates val/end and adds the value or range
static int
s_add_to_set (s_parse_t *ctx, int val, int end, int incr, int type)
{
    xxl_cron_t *self = ctx->self;
    switch (type) {
        case F_SEC:
        case F_MIN:
            if ((val < 0 || val > 59 || end > 59) && val != ALL_SPEC)
                return s_fail (ctx, "Minute and Second values must be between 0 and 59");
            break;
        case F_HOUR:
            if ((val < 0 || val > 23 || end > 23) && val != ALL_SPEC)
                return s_fail (ctx, "Hour values must be between 0 and 23");
            break;
        case F_DOM:
            if ((val < 1 || val > 31 || end > 31) && val != ALL_SPEC && val != NO_SPEC)
                return s_fail (ctx, "Day of month values must be between 1 and 31");
            break;
        case F_MONTH:
            if ((val < 1 || val > 12 || end > 12) && val != ALL_SPEC)
                return s_fail (ctx, "Month values must be between 1 and 12");
            break;
        case F_DOW:
            if ((val == 0 || val > 7 || end > 7) && val != ALL_SPEC && val != NO_SPEC)
                return s_fail (ctx, "Day-of-Week values must be between 1 and 7");
            break;
        default:
            break;
    }
    if ((incr == 0 || incr == -1) && val != ALL_SPEC) {
        int value = val != -1? val: NO_SPEC;
        if (type == F_YEAR)
            return s_years_add (self, value, value, 1)? s_fail (ctx, "out of memory"): 0;
        s_set_add (&self->set [type], value);
        return 0;
    }
    int64_t start = val, stop = end;
    if (val == ALL_SPEC && incr <= 0) {
        incr = 1;
        if (type == F_YEAR) {
            if (s_years_add (self, ALL_SPEC, ALL_SPEC, 1))
                return s_fail (ctx, "out of memory");
        }
        else
            s_set_add (&self->set [type], ALL_SPEC);
    }
    static const int lo [7] = { 0, 0, 0, 1, 1, 1, 1970 };
    static const int hi [7] = { 59, 59, 23, 31, 12, 7, 0 };
    if (stop == -1)
        stop = type == F_YEAR? self->max_year: hi [type];
    if (start == -1 || start == ALL_SPEC)
        start = lo [type];
    if (type == F_YEAR) {
        if (stop < start)
            return s_fail (ctx, "Illegal cron expression format (java.lang.IllegalArgumentException: "
                                "Start year must be less than stop year)");
        return s_years_add (self, start, stop, incr)? s_fail (ctx, "out of memory"): 0;
    }
    //  A range that wraps (e.g. 22-2) runs past the maximum, modulo it
    static const int wrap [6] = { 60, 60, 24, 31, 12, 7 };
    int max = -1;
    if (stop < start) {
        max = wrap [type];
        stop += max;
    }
    for (int64_t i = start; i <= stop; i += incr) {
        if (max == -1) {
            s_set_add (&self->set [type], i);
            if (i >= 128)
                break;          //  only the smallest large value matters
        }
        else {
            int64_t v = i % max;
            if (v == 0 && (type == F_MONTH || type == F_DOW || type == F_DOM))
                v = max;
            s_set_add (&self->set [type], v);
        }
    }
    return 0;
}

//  CronExpression.checkNext: what follows a leading number
static int
s_check_next (s_parse_t *ctx, int pos, const char *s, int len, int val, int type)
{
    xxl_cron_t *self = ctx->self;
    int i = pos;
    if (i >= len)
        return s_add_to_set (ctx, val, -1, -1, type);
    char c = s [pos];
    if (c == 'L') {
        if (type != F_DOW)
            return s_fail (ctx, "'L' option is not valid here. (pos=%d)", i);
        if (val < 1 || val > 7)
            return s_fail (ctx, "Day-of-Week values must be between 1 and 7");
        self->lastday_of_week = true;
        s_set_add (&self->set [F_DOW], val);
        return 0;
    }
    if (c == 'W') {
        if (type != F_DOM)
            return s_fail (ctx, "'W' option is not valid here. (pos=%d)", i);
        self->nearest_weekday = true;
        if (val > 31)
            return s_fail (ctx, "The 'W' option does not make sense with values larger than 31 "
                                "(max number of days in a month)");
        s_set_add (&self->set [F_DOM], val);
        return 0;
    }
    if (c == '#') {
        if (type != F_DOW)
            return s_fail (ctx, "'#' option is not valid here. (pos=%d)", i);
        i++;
        int nth;
        if (s_parse_int (s + i, len - i, &nth) || nth < 1 || nth > 5)
            return s_fail (ctx, "A numeric value between 1 and 5 must follow the '#' option");
        self->nth_day_of_week = nth;
        s_set_add (&self->set [F_DOW], val);
        return 0;
    }
    if (c == '-') {
        i++;
        if (i >= len)
            return s_fail (ctx, "Illegal cron expression format (range end missing at position %d)", i);
        c = s [i];
        if (c < '0' || c > '9')
            return s_fail (ctx, "Illegal cron expression format (number expected at position %d)", i);
        int end = c - '0';
        if (++i >= len)
            return s_add_to_set (ctx, val, end, 1, type);
        c = s [i];
        if (c >= '0' && c <= '9'
        &&  s_get_value (end, s, len, i, &end, &i))
            return s_fail (ctx, "Illegal cron expression format (number too large)");
        if (i >= len || s [i] != '/')
            return s_add_to_set (ctx, val, end, 1, type);
        i++;
        if (i >= len)
            return s_fail (ctx, "Illegal cron expression format (increment missing at position %d)", i);
        c = s [i];
        if (c < '0' || c > '9')
            return s_fail (ctx, "Illegal cron expression format (number expected at position %d)", i);
        int step = c - '0';
        if (++i >= len)
            return s_add_to_set (ctx, val, end, step, type);
        c = s [i];
        if (c >= '0' && c <= '9'
        &&  s_get_value (step, s, len, i, &step, &i))
            return s_fail (ctx, "Illegal cron expression format (number too large)");
        return s_add_to_set (ctx, val, end, step, type);
    }
    if (c == '/') {
        if (i + 1 >= len || s [i + 1] == ' ' || s [i + 1] == '\t')
            return s_fail (ctx, "'/' must be followed by an integer.");
        c = s [++i];
        if (c < '0' || c > '9')
            return s_fail (ctx, "Illegal cron expression format (number expected at position %d)", i);
        int step = c - '0';
        if (++i >= len) {
            if (s_check_incr (ctx, step, type))
                return -1;
            return s_add_to_set (ctx, val, -1, step, type);
        }
        c = s [i];
        if (c >= '0' && c <= '9') {
            if (s_get_value (step, s, len, i, &step, &i))
                return s_fail (ctx, "Illegal cron expression format (number too large)");
            if (s_check_incr (ctx, step, type))
                return -1;
            return s_add_to_set (ctx, val, -1, step, type);
        }
        return s_fail (ctx, "Unexpected character '%c' after '/'", c);
    }
    return s_add_to_set (ctx, val, -1, 0, type);
}

//  True if s is "L-", digits, optional "W" (Quartz's "^L-[0-9]*[W]?")
static bool
s_is_l_minus (const char *s, int len)
{
    if (len < 2 || s [0] != 'L' || s [1] != '-')
        return false;
    int i = 2;
    while (i < len && s [i] >= '0' && s [i] <= '9')
        i++;
    if (i < len && s [i] == 'W')
        i++;
    return i == len;
}

//  CronExpression.storeExpressionVals: one comma-separated value of a field
static int
s_store (s_parse_t *ctx, const char *s, int len, int type)
{
    xxl_cron_t *self = ctx->self;
    int incr = 0;
    int i = 0;
    while (i < len && (s [i] == ' ' || s [i] == '\t'))
        i++;
    if (i >= len)
        return 0;
    char c = s [i];
    if (c >= 'A' && c <= 'Z'
    &&  !(len == 1 && s [0] == 'L')
    &&  !(len == 2 && s [0] == 'L' && s [1] == 'W')
    &&  !s_is_l_minus (s, len)) {
        //  A month or weekday name (only the 3 first letters count)
        if (i + 3 > len)
            return s_fail (ctx, "Illegal cron expression format (name too short at position %d)", i);
        char sub [4] = { s [i], s [i + 1], s [i + 2], 0 };
        int sval = -1, eval = -1;
        if (type == F_MONTH) {
            sval = s_name_index (sub, MONTH_NAMES) + 1;
            if (sval <= 0)
                return s_fail (ctx, "Invalid Month value: '%s'", sub);
            if (len > i + 3 && s [i + 3] == '-') {
                i += 4;
                if (i + 3 > len)
                    return s_fail (ctx, "Illegal cron expression format (name too short at position %d)", i);
                memcpy (sub, s + i, 3);
                eval = s_name_index (sub, MONTH_NAMES) + 1;
                if (eval <= 0)
                    return s_fail (ctx, "Invalid Month value: '%s'", sub);
            }
        }
        else
        if (type == F_DOW) {
            sval = s_name_index (sub, DAY_NAMES) + 1;
            if (sval <= 0)
                return s_fail (ctx, "Invalid Day-of-Week value: '%s'", sub);
            if (len > i + 3) {
                c = s [i + 3];
                if (c == '-') {
                    i += 4;
                    if (i + 3 > len)
                        return s_fail (ctx, "Illegal cron expression format (name too short at position %d)", i);
                    memcpy (sub, s + i, 3);
                    eval = s_name_index (sub, DAY_NAMES) + 1;
                    if (eval <= 0)
                        return s_fail (ctx, "Invalid Day-of-Week value: '%s'", sub);
                }
                else
                if (c == '#') {
                    i += 4;
                    int nth;
                    if (s_parse_int (s + i, len - i, &nth) || nth < 1 || nth > 5)
                        return s_fail (ctx, "A numeric value between 1 and 5 must follow the '#' option");
                    self->nth_day_of_week = nth;
                }
                else
                if (c == 'L')
                    self->lastday_of_week = true;
            }
        }
        else
            return s_fail (ctx, "Illegal characters for this position: '%s'", sub);
        if (eval != -1)
            incr = 1;
        return s_add_to_set (ctx, sval, eval, incr, type);
    }
    if (c == '?') {
        i++;
        if (i + 1 < len && s [i] != ' ' && s [i + 1] != '\t')
            return s_fail (ctx, "Illegal character after '?': %c", s [i]);
        if (type != F_DOW && type != F_DOM)
            return s_fail (ctx, "'?' can only be specified for Day-of-Month or Day-of-Week.");
        if (type == F_DOW && !self->lastday_of_month) {
            if (xxl_cron_set_empty (&self->set [F_DOM]))
                return s_fail (ctx, "Illegal cron expression format (day-of-month field is empty)");
            if (s_set_last (&self->set [F_DOM]) == NO_SPEC)
                return s_fail (ctx, "'?' can only be specified for Day-of-Month -OR- Day-of-Week.");
        }
        return s_add_to_set (ctx, NO_SPEC, -1, 0, type);
    }
    if (c == '*' || c == '/') {
        if (c == '*' && i + 1 >= len)
            return s_add_to_set (ctx, ALL_SPEC, -1, incr, type);
        if (c == '/' && (i + 1 >= len || s [i + 1] == ' ' || s [i + 1] == '\t'))
            return s_fail (ctx, "'/' must be followed by an integer.");
        if (c == '*')
            i++;
        c = s [i];
        if (c == '/') {
            if (++i >= len)
                return s_fail (ctx, "Unexpected end of string.");
            //  Quartz parses the whole rest of the value as the increment
            if (s_parse_int (s + i, len - i, &incr))
                return s_fail (ctx, "Illegal cron expression format (invalid increment '%.*s')",
                               len - i, s + i);
            if (s_check_incr (ctx, incr, type))
                return -1;
        }
        else
            incr = 1;
        return s_add_to_set (ctx, ALL_SPEC, -1, incr, type);
    }
    if (c == 'L') {
        i++;
        if (type == F_DOM)
            self->lastday_of_month = true;
        if (type == F_DOW
        &&  s_add_to_set (ctx, 7, 7, 0, type))
            return -1;
        if (type == F_DOM && len > i) {
            if (s [i] == '-') {
                int offset;
                if (s_get_value (0, s, len, i + 1, &offset, &i))
                    return s_fail (ctx, "Illegal cron expression format (invalid offset after 'L-')");
                self->lastday_offset = offset;
                if (offset > 30)
                    return s_fail (ctx, "Offset from last day must be <= 30");
            }
            if (len > i && s [i] == 'W')
                self->nearest_weekday = true;
        }
        return 0;
    }
    if (c < '0' || c > '9')
        return s_fail (ctx, "Unexpected character: %c", c);
    int val = c - '0';
    if (++i >= len)
        return s_add_to_set (ctx, val, -1, -1, type);
    c = s [i];
    if (c >= '0' && c <= '9'
    &&  s_get_value (val, s, len, i, &val, &i))
        return s_fail (ctx, "Illegal cron expression format (number too large)");
    return s_check_next (ctx, i, s, len, val, type);
}

static const char *s_field_name [7] = {
    "seconds", "minutes", "hours", "day-of-month", "month", "day-of-week", "year"
};

//  CronExpression.buildExpression over the upper-cased expression
static int
s_parse (s_parse_t *ctx, const char *expr)
{
    xxl_cron_t *self = ctx->self;
    int len = (int) strlen (expr);
    int pos = 0;
    int field = 0;
    for (; field <= F_YEAR; field++) {
        //  Next space/tab separated token, then trimmed like String.trim
        while (pos < len && (expr [pos] == ' ' || expr [pos] == '\t'))
            pos++;
        if (pos >= len)
            break;
        int start = pos;
        while (pos < len && expr [pos] != ' ' && expr [pos] != '\t')
            pos++;
        int stop = pos;
        while (start < stop && (unsigned char) expr [start] <= ' ')
            start++;
        while (stop > start && (unsigned char) expr [stop - 1] <= ' ')
            stop--;
        const char *tok = expr + start;
        int tlen = stop - start;
        bool has_l = memchr (tok, 'L', (size_t) tlen) != NULL;
        bool has_comma = memchr (tok, ',', (size_t) tlen) != NULL;
        if (field == F_DOM && has_l && tlen > 1 && has_comma)
            return s_fail (ctx, "Support for specifying 'L' and 'LW' with other days of the month is not implemented");
        if (field == F_DOW && has_l && tlen > 1 && has_comma)
            return s_fail (ctx, "Support for specifying 'L' with other days of the week is not implemented");
        if (field == F_DOW) {
            const char *hash = memchr (tok, '#', (size_t) tlen);
            if (hash && memchr (hash + 1, '#', (size_t) (tlen - (hash + 1 - tok))))
                return s_fail (ctx, "Support for specifying multiple \"nth\" days is not implemented.");
        }
        //  Comma-separated values; empty ones are skipped
        int v = 0;
        while (v < tlen) {
            while (v < tlen && tok [v] == ',')
                v++;
            int vstart = v;
            while (v < tlen && tok [v] != ',')
                v++;
            if (v > vstart && s_store (ctx, tok + vstart, v - vstart, field))
                return -1;
        }
    }
    if (field <= F_DOW)
        return s_fail (ctx, "Unexpected end of expression.");
    if (field <= F_YEAR && s_store (ctx, "*", 1, F_YEAR))
        return -1;
    bool dom_spec = !xxl_cron_set_has (&self->set [F_DOM], NO_SPEC);
    bool dow_spec = !xxl_cron_set_has (&self->set [F_DOW], NO_SPEC);
    if (dom_spec == dow_spec)
        return s_fail (ctx, "Support for specifying both a day-of-week AND a day-of-month parameter is not implemented.");
    //  Fields Quartz would fail on at every evaluation (see top)
    for (int f = F_SEC; f <= F_DOW; f++) {
        if (!xxl_cron_set_empty (&self->set [f]))
            continue;
        if ((f == F_DOM && (!dom_spec || self->lastday_of_month)) || (f == F_DOW && !dow_spec))
            continue;
        return s_fail (ctx, "the %s field selects no values", s_field_name [f]);
    }
    return 0;
}

int
xxl_cron_parse (xxl_cron_t *self, const char *expr, char *err, size_t errlen)
{
    assert (self->tz && self->nyears == 0);
    for (int f = F_SEC; f <= F_DOW; f++)
        assert (xxl_cron_set_empty (&self->set [f]));
    s_parse_t ctx = { self, err, errlen };
    return s_parse (&ctx, expr);
}
