/*  =========================================================================
    xxl_tz - IANA time zones from TZif files, for the cron engine (internal)

    Reads the zoneinfo database without touching the process's TZ state (no
    setenv/tzset/localtime), so any number of zones can be used at once from
    any thread. A zone is a sorted table of transitions (instant, UTC offset
    after it) built from the TZif v2+ 64-bit section, extended with the
    footer's POSIX TZ rule up to XXL_TZ_LAST_YEAR; lookups are binary
    searches, optionally short-cut by a caller-owned memo. Zones are loaded
    once into a mutex-protected cache and freed at process exit. See
    xxl_tz.h for the lookup semantics (those of Java's ZoneInfo).
    =========================================================================
*/

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "xxl_tz.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  Bounds of what a TZif file may say: transitions before -2^59 s are
//  taken as at -2^59; a UTC offset beyond a week is malformed
#define XXL_TZ_EARLIEST     (-(INT64_C (1) << 59))
#define XXL_TZ_MAX_OFFSET   (7 * 86400)

#define TZ_NAME_MAX     200             //  longest zone name accepted
#define TZ_FILE_MAX     (1024 * 1024)   //  largest TZif file accepted

//  Java's ZoneInfo keeps explicit transitions only up to 2037-12-31
//  23:59:59 UTC and uses the zone's ongoing rule after that, so zones with
//  long explicit predictions (Morocco, Palestine) differ from the raw data
//  after 2037. Quartz sees Java's view, so this code does the same: later
//  TZif transitions are dropped and the footer rule takes over.
#define JAVA_TABLE_END  INT64_C (2145916799)

//  The footer rule is expanded from the year before the last transition,
//  but never from before this year: a crafted (or corrupt) file whose last
//  transition lies billions of years back would otherwise have the rule
//  expanded year by year for that long (a hang, then out of memory).  No
//  real zone has its last transition before 1900; before this year such a
//  file keeps its last transition's offset.  At most XXL_TZ_LAST_YEAR -
//  TZ_RULE_FIRST_YEAR years are expanded, whatever the file says.
#define TZ_RULE_FIRST_YEAR  1800

struct _xxl_tz_t {
    char *name;
    size_t count;               //  number of transitions
    int64_t *utc;               //  transition instants, ascending
    int64_t *wall;              //  utc [i] + off [i]: wall-clock start
    int32_t *off;               //  offset in force from utc [i]
    int32_t off0;               //  offset before the first transition
    int wall_sorted;            //  1 if wall [] is strictly ascending
    struct _xxl_tz_t *next;     //  cache list
};

static char s_utc_name [] = "UTC";
static xxl_tz_t s_utc = { s_utc_name, 0, NULL, NULL, NULL, 0, 1, NULL };
static xxl_tz_t *s_cache = NULL;
static pthread_mutex_t s_cache_lock = PTHREAD_MUTEX_INITIALIZER;

static void
s_err (char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list args;
    va_start (args, fmt);
    vsnprintf (err, errlen, fmt, args);
    va_end (args);
}

static void
s_tz_free (xxl_tz_t *self)
{
    if (self && self != &s_utc) {
        free (self->name);
        free (self->utc);
        free (self->wall);
        free (self->off);
        free (self);
    }
}

__attribute__ ((destructor)) static void
s_cache_free (void)
{
    pthread_mutex_lock (&s_cache_lock);
    while (s_cache) {
        xxl_tz_t *next = s_cache->next;
        s_tz_free (s_cache);
        s_cache = next;
    }
    pthread_mutex_unlock (&s_cache_lock);
}

//  -------------------------------------------------------------------------
//  Transition table under construction

typedef struct {
    int64_t *utc;
    int32_t *off;
    size_t count, alloc;
} s_table_t;

static int
s_table_push (s_table_t *t, int64_t utc, int32_t off)
{
    if (t->count == t->alloc) {
        size_t alloc = t->alloc? t->alloc * 2: 256;
        int64_t *u = realloc (t->utc, alloc * sizeof (int64_t));
        if (!u)
            return -1;
        t->utc = u;
        int32_t *o = realloc (t->off, alloc * sizeof (int32_t));
        if (!o)
            return -1;
        t->off = o;
        t->alloc = alloc;
    }
    t->utc [t->count] = utc;
    t->off [t->count] = off;
    t->count++;
    return 0;
}

//  -------------------------------------------------------------------------
//  POSIX TZ rule (the TZif footer), e.g. "EST5EDT,M3.2.0,M11.1.0"

typedef struct {
    char kind;                  //  'J' (1..365, no Feb 29), 'N' (0..365), 'M'
    int a, b, c;                //  J/N: a = day; M: month a, week b, weekday c
    int32_t time;               //  local seconds after midnight (may be < 0)
} s_date_rule_t;

typedef struct {
    int32_t std_off, dst_off;   //  UTC offsets (east positive)
    int has_dst;
    s_date_rule_t start, end;
} s_posix_t;

static const char *
s_posix_name (const char *p)
{
    if (*p == '<') {
        const char *q = strchr (p, '>');
        return q && q > p + 1? q + 1: NULL;
    }
    const char *q = p;
    while ((*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z'))
        q++;
    return q - p >= 3? q: NULL;
}

//  Parses [+-]h[h[h]][:mm[:ss]] into seconds; NULL on error
static const char *
s_posix_hms (const char *p, int32_t *secs_p)
{
    int sign = 1;
    if (*p == '+' || *p == '-')
        sign = *p++ == '-'? -1: 1;
    if (*p < '0' || *p > '9')
        return NULL;
    int32_t h = 0, m = 0, s = 0, digits = 0;
    while (*p >= '0' && *p <= '9' && digits < 3) {
        h = h * 10 + (*p++ - '0');
        digits++;
    }
    if (h > 167)
        return NULL;
    if (*p == ':') {
        p++;
        if (p [0] < '0' || p [0] > '5' || p [1] < '0' || p [1] > '9')
            return NULL;
        m = (p [0] - '0') * 10 + (p [1] - '0');
        p += 2;
        if (*p == ':') {
            p++;
            if (p [0] < '0' || p [0] > '5' || p [1] < '0' || p [1] > '9')
                return NULL;
            s = (p [0] - '0') * 10 + (p [1] - '0');
            p += 2;
        }
    }
    *secs_p = sign * (h * 3600 + m * 60 + s);
    return p;
}

static const char *
s_posix_int (const char *p, int *value_p, int lo, int hi)
{
    if (*p < '0' || *p > '9')
        return NULL;
    int v = 0;
    while (*p >= '0' && *p <= '9') {
        v = v * 10 + (*p++ - '0');
        if (v > hi)
            return NULL;
    }
    if (v < lo)
        return NULL;
    *value_p = v;
    return p;
}

static const char *
s_posix_date (const char *p, s_date_rule_t *r)
{
    if (*p == 'J') {
        r->kind = 'J';
        p = s_posix_int (p + 1, &r->a, 1, 365);
    }
    else
    if (*p == 'M') {
        r->kind = 'M';
        p = s_posix_int (p + 1, &r->a, 1, 12);
        if (p && *p == '.')
            p = s_posix_int (p + 1, &r->b, 1, 5);
        else
            p = NULL;
        if (p && *p == '.')
            p = s_posix_int (p + 1, &r->c, 0, 6);
        else
            p = NULL;
    }
    else {
        r->kind = 'N';
        p = s_posix_int (p, &r->a, 0, 365);
    }
    if (!p)
        return NULL;
    r->time = 7200;
    if (*p == '/')
        p = s_posix_hms (p + 1, &r->time);
    return p;
}

//  Parses a TZ footer; returns 0 on success, -1 if unsupported or malformed
static int
s_posix_parse (const char *p, s_posix_t *tz)
{
    memset (tz, 0, sizeof (*tz));
    int32_t secs;
    p = s_posix_name (p);
    if (!p || !(p = s_posix_hms (p, &secs)))
        return -1;
    tz->std_off = -secs;
    if (*p == 0)
        return 0;
    p = s_posix_name (p);
    if (!p)
        return -1;
    tz->has_dst = 1;
    tz->dst_off = tz->std_off + 3600;
    if (*p && *p != ',') {
        if (!(p = s_posix_hms (p, &secs)))
            return -1;
        tz->dst_off = -secs;
    }
    if (*p == 0) {              //  POSIX default: US rules
        tz->start = (s_date_rule_t) { 'M', 3, 2, 0, 7200 };
        tz->end = (s_date_rule_t) { 'M', 11, 1, 0, 7200 };
        return 0;
    }
    if (*p != ',' || !(p = s_posix_date (p + 1, &tz->start)))
        return -1;
    if (*p != ',' || !(p = s_posix_date (p + 1, &tz->end)))
        return -1;
    return *p == 0? 0: -1;
}

//  Local (wall) seconds at which rule r fires in year
static int64_t
s_rule_local (const s_date_rule_t *r, int64_t year)
{
    int64_t jan1 = xxl_tz_days_from_civil (year, 1, 1);
    int64_t day;
    if (r->kind == 'J')
        day = jan1 + r->a - 1 + (xxl_tz_is_leap (year) && r->a >= 60);
    else
    if (r->kind == 'N')
        day = jan1 + r->a;
    else {
        int64_t first = xxl_tz_days_from_civil (year, r->a, 1);
        int dow = (int) ((first % 7 + 11) % 7);     //  0 = Sunday
        int64_t mday = 1 + (r->c - dow + 7) % 7 + (int64_t) (r->b - 1) * 7;
        while (mday > xxl_tz_month_days (year, r->a))
            mday -= 7;
        day = first + mday - 1;
    }
    return day * 86400 + r->time;
}

//  Appends the rule's transitions after the table's last one, through
//  XXL_TZ_LAST_YEAR. Returns 0 or -1 (out of memory).
static int
s_expand_rule (s_table_t *t, const s_posix_t *tz, int64_t from_year)
{
    int64_t last = t->count? t->utc [t->count - 1]: INT64_MIN;
    size_t first_new = t->count;
    for (int64_t year = from_year; year <= XXL_TZ_LAST_YEAR; year++) {
        int64_t start = s_rule_local (&tz->start, year) - tz->std_off;
        int64_t end = s_rule_local (&tz->end, year) - tz->dst_off;
        int64_t when [2] = { start, end };
        int32_t off [2] = { tz->dst_off, tz->std_off };
        if (end < start) {
            when [0] = end; off [0] = tz->std_off;
            when [1] = start; off [1] = tz->dst_off;
        }
        for (int k = 0; k < 2; k++) {
            if (when [k] <= last)
                continue;
            if (t->count > first_new && when [k] <= t->utc [t->count - 1])
                t->off [t->count - 1] = off [k];    //  same instant: later rule wins
            else
            if (s_table_push (t, when [k], off [k]))
                return -1;
        }
    }
    return 0;
}

//  -------------------------------------------------------------------------
//  TZif parsing

static int64_t
s_be (const unsigned char *p, int size)
{
    uint64_t v = 0;
    for (int i = 0; i < size; i++)
        v = (v << 8) | p [i];
    if (size == 4)
        return (int32_t) (uint32_t) v;
    return (int64_t) v;
}

//  Builds the zone from TZif bytes; returns NULL if malformed/unsupported
static xxl_tz_t *
s_tzif_parse (const unsigned char *data, size_t size, char *err, size_t errlen)
{
    const unsigned char *p = data, *end = data + size;
    if (size < 44 || memcmp (p, "TZif", 4) != 0) {
        s_err (err, errlen, "not a TZif file");
        return NULL;
    }
    int version = p [4];
    size_t tsize = 4;
    size_t cnt [6];
    for (int pass = 0; ; pass++) {
        if (end - p < 44 || memcmp (p, "TZif", 4) != 0) {
            s_err (err, errlen, "truncated TZif file");
            return NULL;
        }
        for (int i = 0; i < 6; i++)
            cnt [i] = (size_t) (uint32_t) s_be (p + 20 + i * 4, 4);
        p += 44;
        //  isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt
        size_t block = cnt [3] * tsize + cnt [3] + cnt [4] * 6 + cnt [5]
                     + cnt [2] * (tsize + 4) + cnt [1] + cnt [0];
        if (cnt [3] > 100000 || cnt [4] > 256 || cnt [4] == 0 || cnt [5] > 100000
        ||  cnt [2] > 100000 || (size_t) (end - p) < block) {
            s_err (err, errlen, "malformed TZif file");
            return NULL;
        }
        if (pass == 0 && version >= '2') {
            p += block;             //  skip the 32-bit data
            tsize = 8;
            continue;
        }
        break;
    }
    if (cnt [2] > 0) {
        s_err (err, errlen, "TZif files with leap seconds are not supported");
        return NULL;
    }
    size_t timecnt = cnt [3], typecnt = cnt [4];
    const unsigned char *times = p;
    const unsigned char *idx = times + timecnt * tsize;
    const unsigned char *types = idx + timecnt;
    const unsigned char *footer = p + timecnt * tsize + timecnt + typecnt * 6 + cnt [5]
                                + cnt [1] + cnt [0];
    xxl_tz_t *self = calloc (1, sizeof (xxl_tz_t));
    s_table_t t = { NULL, NULL, 0, 0 };
    if (!self)
        goto nomem;
    self->off0 = (int32_t) s_be (types, 4);
    if (self->off0 < -XXL_TZ_MAX_OFFSET || self->off0 > XXL_TZ_MAX_OFFSET) {
        s_err (err, errlen, "malformed TZif file");
        goto fail;
    }
    int32_t prev = self->off0;
    for (size_t i = 0; i < timecnt; i++) {
        if (idx [i] >= typecnt) {
            s_err (err, errlen, "malformed TZif file");
            goto fail;
        }
        int64_t when = s_be (times + i * tsize, (int) tsize);
        int32_t off = (int32_t) s_be (types + idx [i] * 6, 4);
        //  (zic writes -2^59 for "the beginning of time": nothing earlier
        //  means more, and nothing later overflows once offsets are added)
        if (when < XXL_TZ_EARLIEST)
            when = XXL_TZ_EARLIEST;
        if (off < -XXL_TZ_MAX_OFFSET || off > XXL_TZ_MAX_OFFSET) {
            s_err (err, errlen, "malformed TZif file");
            goto fail;
        }
        if (when > JAVA_TABLE_END)
            break;              //  Java ignores these; the footer rule follows
        if (t.count && when <= t.utc [t.count - 1]) {
            s_err (err, errlen, "malformed TZif file");
            goto fail;
        }
        if (off != prev && s_table_push (&t, when, off))
            goto nomem;
        prev = off;
    }
    //  Footer: "\n<TZ string>\n" (version 2+ only)
    if (version >= '2' && footer < end && *footer == '\n') {
        const unsigned char *nl = memchr (footer + 1, '\n', (size_t) (end - footer - 1));
        if (nl && nl > footer + 1 && nl - footer < 256) {
            char rule [256];
            memcpy (rule, footer + 1, (size_t) (nl - footer - 1));
            rule [nl - footer - 1] = 0;
            s_posix_t tz;
            if (s_posix_parse (rule, &tz)) {
                s_err (err, errlen, "unsupported TZ rule '%s'", rule);
                goto fail;
            }
            if (timecnt == 0)
                self->off0 = tz.std_off;
            if (tz.has_dst) {
                int64_t from = 1900;
                if (t.count) {
                    int64_t y; int m, d;
                    xxl_tz_civil_from_days (xxl_tz_floordiv (t.utc [t.count - 1], 86400), &y, &m, &d);
                    from = y - 1;
                }
                if (from < TZ_RULE_FIRST_YEAR)
                    from = TZ_RULE_FIRST_YEAR;
                if (s_expand_rule (&t, &tz, from))
                    goto nomem;
            }
            else
            if (tz.std_off != (t.count? t.off [t.count - 1]: self->off0)) {
                int64_t when = t.count? t.utc [t.count - 1] + 1: INT64_MIN / 2;
                if (when <= JAVA_TABLE_END)
                    when = JAVA_TABLE_END + 1;
                if (s_table_push (&t, when, tz.std_off))
                    goto nomem;
            }
        }
    }
    //  Drop transitions that do not change the offset
    size_t n = 0;
    for (size_t i = 0; i < t.count; i++) {
        int32_t before = n? t.off [n - 1]: self->off0;
        if (t.off [i] == before)
            continue;
        t.utc [n] = t.utc [i];
        t.off [n] = t.off [i];
        n++;
    }
    self->count = n;
    self->utc = t.utc;
    self->off = t.off;
    self->wall = malloc ((n? n: 1) * sizeof (int64_t));
    if (!self->wall)
        goto nomem;
    self->wall_sorted = 1;
    for (size_t i = 0; i < n; i++) {
        self->wall [i] = self->utc [i] + self->off [i];
        if (i && self->wall [i] <= self->wall [i - 1])
            self->wall_sorted = 0;
    }
    return self;

nomem:
    s_err (err, errlen, "out of memory");
fail:
    if (self && self->utc == t.utc)
        t.utc = NULL, t.off = NULL;
    free (t.utc);
    free (t.off);
    s_tz_free (self);
    return NULL;
}

xxl_tz_t *
xxl_tz_parse (const void *data, size_t size, char *err, size_t errlen)
{
    xxl_tz_t *self = s_tzif_parse ((const unsigned char *) data, size, err, errlen);
    if (self) {
        self->name = strdup ("");
        if (!self->name) {
            s_tz_free (self);
            s_err (err, errlen, "out of memory");
            return NULL;
        }
    }
    return self;
}

void
xxl_tz_free (xxl_tz_t **self_p)
{
    if (self_p && *self_p) {
        s_tz_free (*self_p);
        *self_p = NULL;
    }
}

//  Zone names: IANA style, no way out of the zoneinfo directory
static int
s_name_ok (const char *name)
{
    size_t len = strlen (name);
    if (len == 0 || len > TZ_NAME_MAX || name [0] == '/' || name [len - 1] == '/')
        return 0;
    for (const char *p = name; *p; p++) {
        char c = *p;
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
           || c == '_' || c == '-' || c == '+' || c == '/' || c == '.'))
            return 0;
        if (c == '/' && p [1] == '/')
            return 0;
        if (c == '.' && (p == name || p [-1] == '/'))
            return 0;           //  no ".", "..", or hidden components
    }
    return 1;
}

static xxl_tz_t *
s_load (const char *name, char *err, size_t errlen)
{
    const char *dir = getenv ("TZDIR");
    if (!dir || !*dir)
        dir = "/usr/share/zoneinfo";
    size_t plen = strlen (dir) + strlen (name) + 2;
    char *path = malloc (plen);
    if (!path) {
        s_err (err, errlen, "out of memory");
        return NULL;
    }
    snprintf (path, plen, "%s/%s", dir, name);
    FILE *file = fopen (path, "rb");
    free (path);
    if (!file) {
        s_err (err, errlen, "unknown time zone '%s'", name);
        return NULL;
    }
    unsigned char *data = malloc (TZ_FILE_MAX);
    size_t size = data? fread (data, 1, TZ_FILE_MAX, file): 0;
    fclose (file);
    if (!data) {
        s_err (err, errlen, "out of memory");
        return NULL;
    }
    char why [128] = "";
    xxl_tz_t *self = s_tzif_parse (data, size, why, sizeof (why));
    free (data);
    if (!self) {
        s_err (err, errlen, "unknown time zone '%s' (%s)", name, why);
        return NULL;
    }
    self->name = strdup (name);
    if (!self->name) {
        s_tz_free (self);
        s_err (err, errlen, "out of memory");
        return NULL;
    }
    return self;
}

const xxl_tz_t *
xxl_tz_get (const char *name, char *err, size_t errlen)
{
    if (!name || !*name || strcmp (name, "UTC") == 0)
        return &s_utc;
    if (!s_name_ok (name)) {
        s_err (err, errlen, "unknown time zone '%.*s' (invalid name)", TZ_NAME_MAX, name);
        return NULL;
    }
    pthread_mutex_lock (&s_cache_lock);
    xxl_tz_t *self;
    for (self = s_cache; self; self = self->next)
        if (strcmp (self->name, name) == 0)
            break;
    if (!self) {
        self = s_load (name, err, errlen);
        if (self) {
            self->next = s_cache;
            s_cache = self;
        }
    }
    pthread_mutex_unlock (&s_cache_lock);
    return self;
}

const char *
xxl_tz_name (const xxl_tz_t *self)
{
    return self->name;
}

int32_t
xxl_tz_offset_utc (const xxl_tz_t *self, int64_t utc, xxl_tz_memo_t *memo)
{
    if (memo && utc >= memo->utc_lo && utc < memo->utc_hi)
        return memo->utc_off;
    if (self->count == 0)
        return self->off0;
    //  Last transition at or before utc
    size_t lo = 0, hi = self->count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (self->utc [mid] <= utc)
            lo = mid + 1;
        else
            hi = mid;
    }
    int32_t off = lo? self->off [lo - 1]: self->off0;
    if (memo) {
        memo->utc_lo = lo? self->utc [lo - 1]: INT64_MIN;
        memo->utc_hi = lo < self->count? self->utc [lo]: INT64_MAX;
        memo->utc_off = off;
    }
    return off;
}

int32_t
xxl_tz_offset_wall (const xxl_tz_t *self, int64_t wall, xxl_tz_memo_t *memo)
{
    if (memo && wall >= memo->wall_lo && wall < memo->wall_hi)
        return memo->wall_off;
    if (self->count == 0)
        return self->off0;
    //  Same search as ZoneInfo.getTransitionIndex (WALL_TIME): an exact hit
    //  wins, else the entry before the insertion point.
    long lo = 0, hi = (long) self->count - 1, index = -2;
    while (lo <= hi) {
        long mid = (lo + hi) / 2;
        if (self->wall [mid] < wall)
            lo = mid + 1;
        else
        if (self->wall [mid] > wall)
            hi = mid - 1;
        else {
            index = mid;
            break;
        }
    }
    if (index == -2)
        index = lo - 1;
    int32_t off = index >= 0? self->off [index]: self->off0;
    if (memo && self->wall_sorted) {
        memo->wall_lo = index >= 0? self->wall [index]: INT64_MIN;
        memo->wall_hi = index + 1 < (long) self->count? self->wall [index + 1]: INT64_MAX;
        memo->wall_off = off;
    }
    return off;
}
