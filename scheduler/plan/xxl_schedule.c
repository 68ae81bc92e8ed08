/*  xxl_schedule.c -- the schedule types (xxl_schedule.h).
*/

#include "xxl_schedule.h"
#include "xxl/cron.h"
#include "xxl/msg.h"

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct _xxl_schedule_t {
    const xxl_schedule_type_t *type;
    void *state;
};

//  NONE: fired by hand only; any conf is kept as it is
static int
s_none_compile (const char *name, const char *conf, const char *tz, void **state,
                char *why, size_t whylen)
{
    (void) name, (void) conf, (void) tz, (void) why, (void) whylen;
    *state = NULL;
    return 0;
}

//  CRON: a Quartz expression in the job's time zone
static int
s_cron_compile (const char *name, const char *conf, const char *tz, void **state,
                char *why, size_t whylen)
{
    (void) name;
    char reason [256];
    xxl_cron_t *cron = xxl_cron_new (conf, tz, reason, sizeof reason);
    if (!cron) {
        snprintf (why, whylen, "invalid cron expression '%s': %s", conf, reason);
        return -1;
    }
    *state = cron;
    return 0;
}

static int64_t
s_cron_next (void *state, int64_t after)
{
    return xxl_cron_next ((xxl_cron_t *) state, after);
}

static void
s_cron_release (void **state)
{
    xxl_cron_t *cron = (xxl_cron_t *) *state;
    xxl_cron_destroy (&cron);
    *state = NULL;
}

//  FIX_RATE and FIX_DELAY: a whole number of seconds, 1 to ten years,
//  in decimal digits only (no sign, no space: strtoll alone would take
//  " 5" and "+5", and keep them so)
#define XXL_FIX_MAX_S (86400LL * 366 * 10)
typedef struct {
    int64_t ms;
} fixed_t;

static int
s_fixed_compile (const char *name, const char *conf, const char *tz, void **state,
                 char *why, size_t whylen)
{
    (void) tz;
    size_t digits = strspn (conf, "0123456789");
    long long seconds = digits? strtoll (conf, NULL, 10): 0;
    if (!*conf || conf [digits] || seconds <= 0 || seconds > XXL_FIX_MAX_S) {
        snprintf (why, whylen, "%s needs a whole number of seconds from 1 to %lld (ten years),"
                  " not '%s'", name, XXL_FIX_MAX_S, conf);
        return -1;
    }
    fixed_t *fixed = (fixed_t *) malloc (sizeof (fixed_t));
    if (!fixed) {
        snprintf (why, whylen, "out of memory");
        return -1;
    }
    fixed->ms = (int64_t) seconds * 1000;
    *state = fixed;
    return 0;
}

static int64_t
s_fixed_next (void *state, int64_t after)
{
    int64_t ms = ((fixed_t *) state)->ms;
    return after <= INT64_MAX - ms? after + ms: -1;
}

static void
s_fixed_release (void **state)
{
    free (*state);
    *state = NULL;
}

static const xxl_schedule_type_t s_types [] = {
    { "NONE", s_none_compile, NULL, NULL, NULL, false },
    { "CRON", s_cron_compile, s_cron_next, s_cron_release,
      "the cron expression has no time after", false },
    { "FIX_RATE", s_fixed_compile, s_fixed_next, s_fixed_release,
      "the fixed rate has no time after", false },
    { "FIX_DELAY", s_fixed_compile, s_fixed_next, s_fixed_release,
      "the fixed delay has no time after", true },
};
#define XXL_SCHEDULE_TYPES (sizeof s_types / sizeof s_types [0])

const xxl_schedule_type_t *
xxl_schedule_type (const char *name)
{
    for (size_t i = 0; name && i < XXL_SCHEDULE_TYPES; i++)
        if (strcmp (s_types [i].name, name) == 0)
            return &s_types [i];
    return NULL;
}

const char *
xxl_schedule_names (void)
{
    return "NONE, CRON, FIX_RATE, FIX_DELAY";
}

xxl_schedule_t *
xxl_schedule_new (const char *type, const char *conf, const char *tz, char *why,
                  size_t whylen)
{
    const xxl_schedule_type_t *kind = xxl_schedule_type (type);
    if (!kind) {
        char shown [129];
        snprintf (why, whylen, "unknown schedule type '%s' (known: %s)",
                  xxl_printable (type? type: "", shown, sizeof shown), xxl_schedule_names ());
        return NULL;
    }
    xxl_schedule_t *self = (xxl_schedule_t *) calloc (1, sizeof (xxl_schedule_t));
    if (!self) {
        snprintf (why, whylen, "out of memory");
        return NULL;
    }
    self->type = kind;
    if (kind->compile (kind->name, conf? conf: "", tz? tz: "", &self->state, why, whylen)) {
        free (self);
        return NULL;
    }
    return self;
}

void
xxl_schedule_destroy (xxl_schedule_t **self_p)
{
    if (self_p && *self_p) {
        xxl_schedule_t *self = *self_p;
        if (self->type->release)
            self->type->release (&self->state);
        free (self);
        *self_p = NULL;
    }
}

int64_t
xxl_schedule_next (xxl_schedule_t *self, int64_t after)
{
    assert (self);
    return self->type->next? self->type->next (self->state, after): -1;
}

const xxl_schedule_type_t *
xxl_schedule_type_of (xxl_schedule_t *self)
{
    return self->type;
}
