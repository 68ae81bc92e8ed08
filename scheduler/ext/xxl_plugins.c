/*  xxl_plugins.c -- the scheduler's plugin loader, for plugins of one ABI.

    dlopen()s each *.so of a folder (name order), checks the descriptor's
    header, lets the host validate the rest, runs its init, and keeps a
    name-sorted table of the items so lookups are a binary search.
    Plugins stay loaded until the loader is destroyed.  See xxl_plugins.h
    for the contract.
*/

#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "xxl_plugins.h"

typedef struct {
    char *path;
    void *handle;                       //  dlopen handle
    const void *desc;
    void *state;                        //  what init returned
} s_plugin_t;

typedef struct {
    const char *name;                   //  the item's name
    const void *item;
    s_plugin_t *plugin;
} s_entry_t;

struct _xxl_plugins_t {
    const xxl_plugins_abi_t *abi;
    void *ctx;
    xxl_plugins_vlog_fn *vlog;
    s_plugin_t **plugins;               //  in load order
    size_t nplugins;
    s_entry_t *entries;                 //  sorted by name
    size_t nentries;
};

//  The entry point: returns the descriptor.  Every ABI's entry function
//  returns a pointer to its own descriptor type, which the loader treats
//  as a pointer to any object.
typedef const void *(s_entry_fn) (void);

#if defined (__GNUC__)
__attribute__ ((format (printf, 3, 4)))
#endif
static void
s_log (xxl_plugins_t *self, int level, const char *format, ...)
{
    va_list args;
    va_start (args, format);
    if (self->vlog)
        self->vlog (level, format, args);
    else {
        vfprintf (stderr, format, args);
        fputc ('\n', stderr);
    }
    va_end (args);
}

xxl_plugins_t *
xxl_plugins_new (const xxl_plugins_abi_t *abi, void *ctx, xxl_plugins_vlog_fn *vlog)
{
    if (!abi)
        return NULL;
    xxl_plugins_t *self = (xxl_plugins_t *) calloc (1, sizeof (xxl_plugins_t));
    if (!self)
        return NULL;
    self->abi = abi;
    self->ctx = ctx;
    self->vlog = vlog;
    return self;
}

static void
s_plugin_destroy (xxl_plugins_t *self, s_plugin_t **plugin_p)
{
    s_plugin_t *plugin = *plugin_p;
    if (!plugin)
        return;
    if (plugin->desc && plugin->state)
        self->abi->destroy (self->ctx, plugin->desc, plugin->state);
    if (plugin->handle)
        dlclose (plugin->handle);
    free (plugin->path);
    free (plugin);
    *plugin_p = NULL;
}

void
xxl_plugins_destroy (xxl_plugins_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    xxl_plugins_t *self = *self_p;
    free (self->entries);
    //  Unload in reverse load order
    for (size_t i = self->nplugins; i > 0; i--)
        s_plugin_destroy (self, &self->plugins [i - 1]);
    free (self->plugins);
    free (self);
    *self_p = NULL;
}

//  --------------------------------------------------------------------------
//  Name table

//  Lowest entry index whose name is >= name (name of length len)
static size_t
s_lower_bound (xxl_plugins_t *self, const char *name, size_t len)
{
    size_t lo = 0, hi = self->nentries;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const char *have = self->entries [mid].name;
        int cmp = strncmp (have, name, len);
        if (cmp == 0 && have [len])
            cmp = 1;
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static s_entry_t *
s_find (xxl_plugins_t *self, const char *name, size_t len)
{
    if (!self || !name)
        return NULL;
    size_t at = s_lower_bound (self, name, len);
    if (at < self->nentries && strncmp (self->entries [at].name, name, len) == 0
    &&  self->entries [at].name [len] == 0)
        return &self->entries [at];
    return NULL;
}

const void *
xxl_plugins_find (xxl_plugins_t *self, const char *name, size_t len, void **state)
{
    s_entry_t *entry = s_find (self, name, len);
    if (state)
        *state = entry? entry->plugin->state: NULL;
    return entry? entry->item: NULL;
}

size_t
xxl_plugins_size (xxl_plugins_t *self)
{
    return self? self->nentries: 0;
}

char *
xxl_plugins_names (xxl_plugins_t *self)
{
    size_t len = 1;
    size_t count = self? self->nentries: 0;
    for (size_t i = 0; i < count; i++)
        len += strlen (self->entries [i].name) + 2;
    char *names = (char *) malloc (len);
    if (!names)
        return NULL;
    char *at = names;
    for (size_t i = 0; i < count; i++) {
        if (i) {
            *at++ = ',';
            *at++ = ' ';
        }
        size_t n = strlen (self->entries [i].name);
        memcpy (at, self->entries [i].name, n);
        at += n;
    }
    *at = 0;
    return names;
}

//  --------------------------------------------------------------------------
//  Loading

//  The item at index of a table, and its name
static const void *
s_item (xxl_plugins_t *self, const void *items, size_t index)
{
    return (const char *) items + index * self->abi->item_size;
}

static const char *
s_item_name (xxl_plugins_t *self, const void *items, size_t index)
{
    return *(const char *const *) s_item (self, items, index);
}

int
xxl_plugins_load_file (xxl_plugins_t *self, const char *path)
{
    if (!self || !path)
        return -1;
    const xxl_plugins_abi_t *abi = self->abi;
    void *handle = dlopen (path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *error = dlerror ();
        s_log (self, XXL_PLUGINS_LOG_ERROR, "%s %s refused: cannot load: %s",
               abi->plugin, path, error? error: "unknown error");
        return -1;
    }
    dlerror ();
    s_entry_fn *entry = NULL;
    *(void **) &entry = dlsym (handle, abi->entry);
    if (!entry) {
        s_log (self, XXL_PLUGINS_LOG_ERROR, "%s %s refused: missing symbol %s (%s)",
               abi->plugin, path, abi->entry, abi->not_one);
        dlclose (handle);
        return -1;
    }
    const void *desc = entry ();
    xxl_plugins_header_t header = { 0, 0 };
    if (desc)
        memcpy (&header, desc, sizeof header);
    xxl_plugins_about_t about = { NULL, NULL, NULL };
    const char *why = NULL;
    char reason [160];
    if (!desc)
        why = "its entry point returned NULL";
    else
    if (header.abi_version != abi->abi_version) {
        snprintf (reason, sizeof reason,
                  "wrong ABI version %u (this scheduler speaks %s %u)",
                  header.abi_version, abi->abi, abi->abi_version);
        why = reason;
    }
    else
    if (header.size < abi->min_size) {
        snprintf (reason, sizeof reason,
                  "descriptor size %u too small (ABI %u needs at least %zu)",
                  header.size, abi->abi_version, abi->min_size);
        why = reason;
    }
    else
    if (!(why = abi->validate (self->ctx, desc, &about)) && !about.items)
        why = "it has no item table";
    if (why) {
        s_log (self, XXL_PLUGINS_LOG_ERROR, "%s %s refused: %s", abi->plugin, path, why);
        dlclose (handle);
        return -1;
    }
    const char *pname = about.name? about.name: path;

    //  Which of its items can register: usable, with names not taken
    size_t count = 0;
    while (s_item_name (self, about.items, count))
        count++;
    const void **take = (const void **) calloc (count? count: 1, sizeof (void *));
    if (!take) {
        dlclose (handle);
        return -1;
    }
    size_t ntake = 0;
    for (size_t i = 0; i < count; i++) {
        const void *item = s_item (self, about.items, i);
        const char *name = s_item_name (self, about.items, i);
        char bad [256];
        bad [0] = 0;
        if (abi->check_item (self->ctx, item, bad, sizeof bad) != 0) {
            bad [sizeof bad - 1] = 0;
            s_log (self, XXL_PLUGINS_LOG_ERROR, "%s %s (%s): %s; ignored",
                   abi->plugin, path, pname, bad);
            continue;
        }
        s_entry_t *known = s_find (self, name, strlen (name));
        int twice = 0;
        for (size_t k = 0; k < ntake; k++)
            if (strcmp (*(const char *const *) take [k], name) == 0)
                twice = 1;
        if (known || twice) {
            s_log (self, XXL_PLUGINS_LOG_ERROR,
                   "%s %s (%s): duplicate %s %s (already from %s); ignored",
                   abi->plugin, path, pname, abi->duplicate, name,
                   known? known->plugin->path: path);
            continue;
        }
        take [ntake++] = item;
    }
    if (ntake == 0) {
        s_log (self, XXL_PLUGINS_LOG_ERROR, "%s %s (%s) refused: no usable %s",
               abi->plugin, path, pname, abi->usable);
        free (take);
        dlclose (handle);
        return -1;
    }
    //  Room in the tables before init, so nothing can fail after it
    s_plugin_t *plugin = (s_plugin_t *) calloc (1, sizeof (s_plugin_t));
    s_plugin_t **plugins = (s_plugin_t **) realloc (self->plugins,
                                                   (self->nplugins + 1) * sizeof (s_plugin_t *));
    if (plugins)
        self->plugins = plugins;
    s_entry_t *entries = (s_entry_t *) realloc (self->entries,
                                                (self->nentries + ntake) * sizeof (s_entry_t));
    if (entries)
        self->entries = entries;
    char *copy = strdup (path);
    if (!plugin || !plugins || !entries || !copy) {
        s_log (self, XXL_PLUGINS_LOG_ERROR, "%s %s refused: out of memory", abi->plugin, path);
        free (plugin);
        free (copy);
        free (take);
        dlclose (handle);
        return -1;
    }
    plugin->path = copy;
    plugin->handle = handle;
    plugin->desc = desc;
    const char *error = NULL;
    if (abi->init (self->ctx, desc, &plugin->state, &error) != 0) {
        s_log (self, XXL_PLUGINS_LOG_ERROR, "%s %s (%s) refused: init failed: %s",
               abi->plugin, path, pname, error? error: "no reason given");
        plugin->state = NULL;           //  no destroy without a state
        s_plugin_destroy (self, &plugin);
        free (take);
        return -1;
    }
    self->plugins [self->nplugins++] = plugin;
    for (size_t k = 0; k < ntake; k++) {
        const char *name = *(const char *const *) take [k];
        size_t at = s_lower_bound (self, name, strlen (name));
        memmove (&self->entries [at + 1], &self->entries [at],
                 (self->nentries - at) * sizeof (s_entry_t));
        self->entries [at].name = name;
        self->entries [at].item = take [k];
        self->entries [at].plugin = plugin;
        self->nentries++;
        s_log (self, XXL_PLUGINS_LOG_DEBUG, "%s %s loaded from %s (%s %s)",
               abi->loaded, name, path, pname, about.version? about.version: "");
    }
    free (take);
    return 0;
}

//  --------------------------------------------------------------------------
//  Folders

static int
s_name_cmp (const void *a, const void *b)
{
    return strcmp (*(char *const *) a, *(char *const *) b);
}

static int
s_is_plugin_file (const char *name)
{
    size_t len = strlen (name);
    return name [0] != '.' && len > 3 && strcmp (name + len - 3, ".so") == 0;
}

//  Lists every "*.so" in dir whose name does not start with a dot, as full
//  paths sorted by name.  Returns their number (and *paths, which the
//  caller frees: s_list_free), or -1 when dir cannot be read (errno says
//  why; *paths is NULL).  Files that cannot be listed for lack of memory
//  are left out.
static int
s_list (const char *dir, char ***paths)
{
    *paths = NULL;
    DIR *handle = opendir (dir);
    if (!handle)
        return -1;
    char **list = NULL;
    size_t count = 0, capacity = 0;
    struct dirent *item;
    while ((item = readdir (handle))) {
        if (!s_is_plugin_file (item->d_name))
            continue;
        if (count == capacity) {
            size_t grown = capacity? capacity * 2: 16;
            char **more = (char **) realloc (list, grown * sizeof (char *));
            if (!more)
                break;
            list = more;
            capacity = grown;
        }
        size_t len = strlen (dir) + strlen (item->d_name) + 2;
        if (!(list [count] = (char *) malloc (len)))
            break;
        snprintf (list [count], len, "%s/%s", dir, item->d_name);
        count++;
    }
    closedir (handle);
    if (count)
        qsort (list, count, sizeof (char *), s_name_cmp);
    *paths = list;
    return (int) count;
}

static void
s_list_free (char ***paths, int count)
{
    if (paths && *paths) {
        for (int i = 0; i < count; i++)
            free ((*paths) [i]);
        free (*paths);
        *paths = NULL;
    }
}

int
xxl_plugins_load (xxl_plugins_t *self, const char *dir)
{
    if (!self || !dir)
        return -1;
    char **paths;
    int count = s_list (dir, &paths);
    if (count < 0) {
        s_log (self, XXL_PLUGINS_LOG_ERROR, "cannot read %s %s: %s",
               self->abi->folder, dir, strerror (errno));
        return -1;
    }
    int loaded = 0;
    for (int i = 0; i < count; i++)
        if (xxl_plugins_load_file (self, paths [i]) == 0)
            loaded++;
    s_list_free (&paths, count);
    return loaded;
}
