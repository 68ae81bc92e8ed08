/*  sample.c -- test plugins of the sample ABI (sample.h) for
    tests/test_plugins.c, one per variant:

    -DSAMPLE_ALPHA      alpha.so: items alpha and shared; init and destroy
                        note themselves
    -DSAMPLE_BETA       beta.so: items beta, shared, "b2" (an invalid name)
                        and zero (value 0); init and destroy note themselves
    -DSAMPLE_NOSYM      nosym.so: exports another symbol than the entry
    -DSAMPLE_VERSION    version.so: descriptor of ABI version 99
    -DSAMPLE_SMALL      small.so: descriptor size 8
    -DSAMPLE_NULL       null.so: the entry point returns NULL
    -DSAMPLE_NOITEMS    noitems.so: no item table
    -DSAMPLE_DUP        dup.so: only item alpha (taken by alpha.so)
    -DSAMPLE_INIT       init.so: item gamma, init fails
*/

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sample.h"

#if defined (SAMPLE_ALPHA)
#   define S_NAME "alpha"
#elif defined (SAMPLE_BETA)
#   define S_NAME "beta"
#elif defined (SAMPLE_DUP)
#   define S_NAME "dup"
#elif defined (SAMPLE_INIT)
#   define S_NAME "init"
#else
#   define S_NAME "sample"
#endif

#if defined (SAMPLE_ALPHA) || defined (SAMPLE_BETA) || defined (SAMPLE_INIT)
#   define S_HAS_INIT
typedef struct {
    const sample_host_t *host;
} s_state_t;

static void
s_note (const sample_host_t *host, const char *what)
{
    char line [64];
    snprintf (line, sizeof line, "%s %s", what, S_NAME);
    host->note (line);
}

static void *
s_init (const sample_host_t *host, const char **error)
{
#if defined (SAMPLE_INIT)
    (void) host;
    *error = "sample init refuses to start";
    return NULL;
#else
    (void) error;
    s_state_t *state = (s_state_t *) calloc (1, sizeof (s_state_t));
    if (state) {
        state->host = host;
        s_note (host, "init");
    }
    return state;
#endif
}

static void
s_destroy (void *state_)
{
    s_state_t *state = (s_state_t *) state_;
    s_note (state->host, "destroy");
    free (state);
}
#endif

static const sample_item_t s_items [] = {
#if defined (SAMPLE_ALPHA) || defined (SAMPLE_DUP)
    { "alpha", 1 },
#endif
#if defined (SAMPLE_ALPHA)
    { "shared", 1 },
#endif
#if defined (SAMPLE_BETA)
    { "beta", 2 },
    { "shared", 2 },
    { "b2", 2 },
    { "zero", 0 },
#endif
#if defined (SAMPLE_INIT)
    { "gamma", 3 },
#endif
    { NULL, 0 }
};

#if defined (SAMPLE_NOSYM)
#   define S_ENTRY xxl_sample_plugin_v0
#else
#   define S_ENTRY xxl_sample_plugin
#endif

const sample_plugin_t *S_ENTRY (void);
__attribute__ ((visibility ("default")))
const sample_plugin_t *S_ENTRY (void)
{
    static const sample_plugin_t s_plugin = {
#if defined (SAMPLE_VERSION)
        99, sizeof (sample_plugin_t),
#elif defined (SAMPLE_SMALL)
        SAMPLE_ABI_VERSION, 8,
#else
        SAMPLE_ABI_VERSION, sizeof (sample_plugin_t),
#endif
        S_NAME, "1.0",
#if defined (S_HAS_INIT)
        s_init, s_destroy,
#else
        NULL, NULL,
#endif
#if defined (SAMPLE_NOITEMS)
        NULL
#else
        s_items
#endif
    };
#if defined (SAMPLE_NOITEMS)
    (void) s_items;
#endif
#if defined (SAMPLE_NULL)
    (void) s_plugin;
    return NULL;
#else
    return &s_plugin;
#endif
}
