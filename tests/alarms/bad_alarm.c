/*  bad_alarm.c -- alarm plugins the scheduler must refuse.

    Built as it is, this is a plugin built for alarm ABI version 99: the
    loader must refuse it with a clear log line and keep loading others.
    Built with -DXXL_BAD_SIZE, -DXXL_BAD_INIT, -DXXL_BAD_DUP or
    -DXXL_BAD_NOSYM it is instead a plugin whose descriptor is too small,
    whose init fails, which only registers a kind another plugin already
    has (webhook), or which lacks the entry symbol.  tests/test_alarms.c
    loads each variant (bad_alarm_abi.so, bad_alarm_size.so,
    bad_alarm_init.so, bad_alarm_dup.so, bad_alarm_nosym.so).
*/

#include <xxl/alarm.h>

static int
s_send (void *state, const xxl_alarm_host_t *host, const xxl_alarm_t *alarm,
        const char *target, char *err, size_t errlen)
{
    (void) state;
    (void) host;
    (void) alarm;
    (void) target;
    (void) err;
    (void) errlen;
    return 0;
}

#if defined (XXL_BAD_INIT)
static void *
s_init (const xxl_alarm_host_t *host, const char **error)
{
    (void) host;
    *error = "bad_alarm_init refuses to start";
    return NULL;
}
#endif

static const xxl_alarm_kind_t s_kinds [] = {
#if defined (XXL_BAD_DUP)
    { "webhook", s_send, NULL, 0 },
#else
    { "bad", s_send, NULL, 0 },
#endif
    { NULL, NULL, NULL, 0 }
};

#if defined (XXL_BAD_NOSYM)
const xxl_alarm_plugin_t *xxl_alarm_plugin_v0 (void);
__attribute__ ((visibility ("default")))
const xxl_alarm_plugin_t *xxl_alarm_plugin_v0 (void)
{
    static const xxl_alarm_plugin_t s_plugin = {
        XXL_ALARM_ABI_VERSION, sizeof (xxl_alarm_plugin_t),
        "bad_alarm_nosym", "1.0", NULL, NULL, s_kinds
    };
    return &s_plugin;
}
#else
const xxl_alarm_plugin_t *xxl_alarm_plugin (void);
__attribute__ ((visibility ("default")))
const xxl_alarm_plugin_t *xxl_alarm_plugin (void)
{
    static const xxl_alarm_plugin_t s_plugin = {
#   if defined (XXL_BAD_SIZE)
        XXL_ALARM_ABI_VERSION, 16,
#   elif defined (XXL_BAD_INIT) || defined (XXL_BAD_DUP)
        XXL_ALARM_ABI_VERSION, sizeof (xxl_alarm_plugin_t),
#   else
        99, sizeof (xxl_alarm_plugin_t),
#   endif
        "bad_alarm", "1.0",
#   if defined (XXL_BAD_INIT)
        s_init,
#   else
        NULL,
#   endif
        NULL, s_kinds
    };
    return &s_plugin;
}
#endif
