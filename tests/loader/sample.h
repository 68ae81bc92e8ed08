/*  sample.h -- a plugin ABI of the tests' own, for tests/test_plugins.c.

    The shape of the router and alarm ABIs (xxl/router.h, xxl/alarm.h): an
    entry symbol returning a descriptor that starts with the ABI version
    and its size, an optional init and destroy, and a table of named items
    ending with a NULL name.  The host table lets a plugin note what it
    does, so the test sees init and destroy order.
*/

#ifndef SAMPLE_H_INCLUDED
#define SAMPLE_H_INCLUDED

#include <stdint.h>

#define SAMPLE_ABI_VERSION  1
#define SAMPLE_ENTRY        "xxl_sample_plugin"

typedef struct {
    void (*note) (const char *what);    //  records "init alpha", "destroy alpha"
} sample_host_t;

typedef struct {
    const char *name;                   //  letters only, at least one
    int value;                          //  must be > 0
} sample_item_t;

typedef struct {
    uint32_t abi_version;               //  SAMPLE_ABI_VERSION
    uint32_t size;                      //  sizeof (sample_plugin_t)
    const char *name;
    const char *version;
    void *(*init) (const sample_host_t *host, const char **error);
    void (*destroy) (void *state);
    const sample_item_t *items;
} sample_plugin_t;

typedef const sample_plugin_t *(sample_entry_fn) (void);

#endif
