/*  xxl_handlers.c -- the handler plugins an agent has loaded.

    A plugin is loaded from an fd opened on its file (dlopen of
    /proc/self/fd/N, falling back to the path), so that the identity we
    record (device, inode, size, mtime) is the identity of the code loaded,
    and a replaced file gets a fresh dlopen instead of glibc handing back the
    still-loaded old object.  The fd stays open for the plugin's lifetime:
    isolated runners load the same file through it, and it keeps the
    /proc/self/fd/N name unique among loaded objects.

    Reference counting: the registry holds one reference on each active
    plugin, each run one more (acquire/release, atomic).  A plugin that is
    replaced or removed leaves the name table at once; it is unloaded
    (destroy, dlclose, close) when its count drops to zero.
*/

#define _GNU_SOURCE
#include "xxl_handlers.h"

#include <czmq.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct _plugin_t {
    char *path;                         //  full path
    char *file;                         //  file name in the folder
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
    int fd;                             //  -1 for a failed entry
    void *dl;                           //  NULL for a failed entry
    const xxl_handler_plugin_t *desc;
    void *state;
    int refs;                           //  atomic
    uint64_t generation;
    struct _plugin_t *next;
} plugin_t;

typedef struct {
    plugin_t *plugin;
    const xxl_handler_t *handler;
} entry_t;

struct _xxl_handlers_t {
    char *dir;
    plugin_t *plugins;                  //  active and failed entries
    zhashx_t *names;                    //  name -> entry_t
    int watch_fd;
    pthread_mutex_t mutex;              //  protects plugins and names
};

static uint64_t s_generation = 0;       //  atomic

static void
s_entry_free (void **item_p)
{
    free (*item_p);
    *item_p = NULL;
}

static void
s_plugin_unload (plugin_t *plugin)
{
    if (plugin->dl) {
        if (plugin->desc && plugin->desc->destroy)
            plugin->desc->destroy (plugin->state);
        dlclose (plugin->dl);
    }
    if (plugin->fd >= 0)
        close (plugin->fd);
    free (plugin->path);
    free (plugin->file);
    free (plugin);
}

static void
s_plugin_unref (plugin_t *plugin)
{
    if (__atomic_sub_fetch (&plugin->refs, 1, __ATOMIC_ACQ_REL) == 0)
        s_plugin_unload (plugin);
}

static int
s_same_identity (plugin_t *plugin, const struct stat *st)
{
    return plugin->dev == st->st_dev && plugin->ino == st->st_ino
        && plugin->size == st->st_size
        && plugin->mtime.tv_sec == st->st_mtim.tv_sec
        && plugin->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

//  Loads one plugin file.  Always returns an entry (a failed one without
//  dl when loading failed, so that we do not retry an unchanged bad file on
//  every rescan), or NULL if the file vanished or memory ran out.  Caller
//  holds the mutex.
static plugin_t *
s_plugin_load (xxl_handlers_t *self, const char *file)
{
    plugin_t *plugin = (plugin_t *) calloc (1, sizeof (plugin_t));
    if (!plugin)
        return NULL;
    plugin->fd = -1;
    plugin->refs = 1;
    plugin->generation = __atomic_add_fetch (&s_generation, 1, __ATOMIC_RELAXED);
    plugin->file = strdup (file);
    if (asprintf (&plugin->path, "%s/%s", self->dir, file) < 0)
        plugin->path = NULL;
    if (!plugin->file || !plugin->path) {
        s_plugin_unload (plugin);
        return NULL;
    }
    plugin->fd = open (plugin->path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (plugin->fd == -1 || fstat (plugin->fd, &st)) {
        zsys_error ("handlers: %s: cannot open: %s; plugin skipped",
                    plugin->path, strerror (errno));
        s_plugin_unload (plugin);
        return NULL;
    }
    plugin->dev = st.st_dev;
    plugin->ino = st.st_ino;
    plugin->size = st.st_size;
    plugin->mtime = st.st_mtim;

    char fdpath [64];
    snprintf (fdpath, sizeof fdpath, "/proc/self/fd/%d", plugin->fd);
    void *dl = dlopen (fdpath, RTLD_NOW | RTLD_LOCAL);
    if (!dl)
        dl = dlopen (plugin->path, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        const char *error = dlerror ();
        zsys_error ("handlers: %s: dlopen failed: %s; plugin skipped",
                    plugin->path, error? error: "unknown error");
        close (plugin->fd);
        plugin->fd = -1;
        return plugin;
    }
    const char *error = NULL;
    xxl_handler_entry_fn *entry =
        (xxl_handler_entry_fn *) dlsym (dl, XXL_HANDLER_ENTRY);
    const xxl_handler_plugin_t *desc = entry? entry (): NULL;
    if (!entry)
        zsys_error ("handlers: %s: missing symbol %s; plugin skipped",
                    plugin->path, XXL_HANDLER_ENTRY);
    else
    if (!desc)
        zsys_error ("handlers: %s: %s() returned NULL; plugin skipped",
                    plugin->path, XXL_HANDLER_ENTRY);
    else
    if (desc->abi_version != XXL_HANDLER_ABI_VERSION)
        zsys_error ("handlers: %s: ABI version mismatch: plugin has %u, agent needs %u; plugin skipped",
                    plugin->path, desc->abi_version, XXL_HANDLER_ABI_VERSION);
    else
    if (desc->size < sizeof (xxl_handler_plugin_t))
        zsys_error ("handlers: %s: descriptor size %u too small (need %zu); plugin skipped",
                    plugin->path, desc->size, sizeof (xxl_handler_plugin_t));
    else
    if (!desc->handlers)
        zsys_error ("handlers: %s: no handler table; plugin skipped", plugin->path);
    else {
        void *state = desc->init? desc->init (&error): NULL;
        if (error) {
            zsys_error ("handlers: %s: init failed: %s; plugin skipped",
                        plugin->path, error);
        }
        else {
            plugin->dl = dl;
            plugin->desc = desc;
            plugin->state = state;
            return plugin;
        }
    }
    dlclose (dl);
    close (plugin->fd);
    plugin->fd = -1;
    return plugin;
}

//  Registers the names of a loaded plugin; caller holds the mutex
static void
s_plugin_register (xxl_handlers_t *self, plugin_t *plugin)
{
    if (!plugin->dl)
        return;
    int count = 0;
    for (const xxl_handler_t *handler = plugin->desc->handlers;
         handler->name && count < 100000; handler++, count++) {
        if (!handler->fn || !*handler->name) {
            zsys_error ("handlers: %s: handler entry %d has no %s; skipped",
                        plugin->path, count, handler->fn? "name": "function");
            continue;
        }
        entry_t *other = (entry_t *) zhashx_lookup (self->names, handler->name);
        if (other) {
            zsys_error ("handlers: %s: duplicate handler name '%s' (already loaded from %s); skipped",
                        plugin->path, handler->name, other->plugin->path);
            continue;
        }
        entry_t *entry = (entry_t *) malloc (sizeof (entry_t));
        if (!entry)
            continue;
        entry->plugin = plugin;
        entry->handler = handler;
        zhashx_insert (self->names, handler->name, entry);
    }
    zsys_info ("handlers: loaded %s (%s %s)", plugin->path,
               plugin->desc->name? plugin->desc->name: "?",
               plugin->desc->version? plugin->desc->version: "?");
}

//  Removes a plugin's names and drops the registry's reference; caller
//  holds the mutex and has unlinked the plugin from the list
static void
s_plugin_retire (xxl_handlers_t *self, plugin_t *plugin)
{
    if (plugin->dl) {
        int count = 0;
        for (const xxl_handler_t *handler = plugin->desc->handlers;
             handler->name && count < 100000; handler++, count++) {
            entry_t *entry = (entry_t *) zhashx_lookup (self->names, handler->name);
            if (entry && entry->plugin == plugin)
                zhashx_delete (self->names, handler->name);
        }
        zsys_info ("handlers: unloading %s", plugin->path);
    }
    s_plugin_unref (plugin);
}

static int
s_compare_strings (const void *a, const void *b)
{
    return strcmp (*(const char * const *) a, *(const char * const *) b);
}

//  Lists *.so file names of the folder, sorted; NULL-terminated array the
//  caller frees (each string and the array).  NULL if the folder is missing.
static char **
s_list_dir (const char *dir)
{
    DIR *handle = opendir (dir);
    if (!handle)
        return NULL;
    size_t count = 0, cap = 16;
    char **names = (char **) malloc (cap * sizeof (char *));
    struct dirent *entry;
    while (names && (entry = readdir (handle))) {
        size_t len = strlen (entry->d_name);
        if (len < 4 || strcmp (entry->d_name + len - 3, ".so") || entry->d_name [0] == '.')
            continue;
        if (count + 2 > cap) {
            cap *= 2;
            char **bigger = (char **) realloc (names, cap * sizeof (char *));
            if (!bigger)
                break;
            names = bigger;
        }
        names [count] = strdup (entry->d_name);
        if (names [count])
            count++;
    }
    closedir (handle);
    if (!names)
        return NULL;
    names [count] = NULL;
    qsort (names, count, sizeof (char *), s_compare_strings);
    return names;
}

static void
s_drain_watch (xxl_handlers_t *self)
{
    if (self->watch_fd < 0)
        return;
    char buf [4096] __attribute__ ((aligned (8)));
    while (read (self->watch_fd, buf, sizeof buf) > 0)
        ;
}

int
xxl_handlers_rescan (xxl_handlers_t *self)
{
    if (!self || !self->dir)
        return -1;
    s_drain_watch (self);
    char **files = s_list_dir (self->dir);
    int changes = 0;
    pthread_mutex_lock (&self->mutex);
    //  Retire removed and changed plugins
    plugin_t **link = &self->plugins;
    while (*link) {
        plugin_t *plugin = *link;
        int keep = 0;
        for (char **file = files; file && *file && !keep; file++) {
            if (streq (*file, plugin->file)) {
                struct stat st;
                keep = stat (plugin->path, &st) == 0 && s_same_identity (plugin, &st);
            }
        }
        if (keep)
            link = &plugin->next;
        else {
            *link = plugin->next;
            if (plugin->dl)
                changes++;
            s_plugin_retire (self, plugin);
        }
    }
    //  Load new ones, appending in file-name order
    for (char **file = files; file && *file; file++) {
        int known = 0;
        for (plugin_t *plugin = self->plugins; plugin && !known; plugin = plugin->next)
            known = streq (plugin->file, *file);
        if (known)
            continue;
        plugin_t *plugin = s_plugin_load (self, *file);
        if (!plugin)
            continue;
        s_plugin_register (self, plugin);
        if (plugin->dl)
            changes++;
        plugin_t **tail = &self->plugins;
        while (*tail)
            tail = &(*tail)->next;
        *tail = plugin;
    }
    pthread_mutex_unlock (&self->mutex);
    for (char **file = files; file && *file; file++)
        free (*file);
    free (files);
    return changes;
}

xxl_handlers_t *
xxl_handlers_new (const char *dir)
{
    xxl_handlers_t *self = (xxl_handlers_t *) calloc (1, sizeof (xxl_handlers_t));
    if (!self)
        return NULL;
    self->watch_fd = -1;
    pthread_mutex_init (&self->mutex, NULL);
    self->names = zhashx_new ();
    if (!self->names) {
        xxl_handlers_destroy (&self);
        return NULL;
    }
    zhashx_set_destructor (self->names, s_entry_free);
    if (!dir) {
        zsys_info ("handlers: no plugins folder; no BEAN handlers");
        return self;
    }
    self->dir = strdup (dir);
    if (!self->dir) {
        xxl_handlers_destroy (&self);
        return NULL;
    }
    struct stat st;
    if (stat (dir, &st) || !S_ISDIR (st.st_mode)) {
        zsys_warning ("handlers: plugins folder %s missing; no BEAN handlers", dir);
        return self;
    }
    self->watch_fd = inotify_init1 (IN_NONBLOCK | IN_CLOEXEC);
    if (self->watch_fd >= 0
    &&  inotify_add_watch (self->watch_fd, dir,
                           IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE) < 0) {
        zsys_warning ("handlers: cannot watch %s: %s; no hot reload", dir, strerror (errno));
        close (self->watch_fd);
        self->watch_fd = -1;
    }
    xxl_handlers_rescan (self);
    zsys_info ("handlers: %zu handler(s) from %s", xxl_handlers_size (self), dir);
    return self;
}

void
xxl_handlers_destroy (xxl_handlers_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    xxl_handlers_t *self = *self_p;
    pthread_mutex_lock (&self->mutex);
    while (self->plugins) {
        plugin_t *plugin = self->plugins;
        self->plugins = plugin->next;
        s_plugin_retire (self, plugin);
    }
    pthread_mutex_unlock (&self->mutex);
    zhashx_destroy (&self->names);
    if (self->watch_fd >= 0)
        close (self->watch_fd);
    pthread_mutex_destroy (&self->mutex);
    free (self->dir);
    free (self);
    *self_p = NULL;
}

int
xxl_handlers_exists (xxl_handlers_t *self, const char *name)
{
    if (!self || !name)
        return 0;
    pthread_mutex_lock (&self->mutex);
    int found = zhashx_lookup (self->names, name) != NULL;
    pthread_mutex_unlock (&self->mutex);
    return found;
}

size_t
xxl_handlers_size (xxl_handlers_t *self)
{
    if (!self)
        return 0;
    pthread_mutex_lock (&self->mutex);
    size_t size = zhashx_size (self->names);
    pthread_mutex_unlock (&self->mutex);
    return size;
}

char *
xxl_handlers_names (xxl_handlers_t *self)
{
    if (!self)
        return NULL;
    pthread_mutex_lock (&self->mutex);
    size_t count = zhashx_size (self->names);
    const char **names = (const char **) calloc (count + 1, sizeof (char *));
    size_t total = 1, index = 0;
    if (names) {
        for (void *item = zhashx_first (self->names); item && index < count;
             item = zhashx_next (self->names)) {
            names [index] = (const char *) zhashx_cursor (self->names);
            total += strlen (names [index]) + 1;
            index++;
        }
    }
    char *result = names? (char *) malloc (total): NULL;
    if (result) {
        qsort (names, index, sizeof (char *), s_compare_strings);
        char *cursor = result;
        for (size_t i = 0; i < index; i++) {
            if (i)
                *cursor++ = ',';
            size_t len = strlen (names [i]);
            memcpy (cursor, names [i], len);
            cursor += len;
        }
        *cursor = 0;
    }
    pthread_mutex_unlock (&self->mutex);
    free (names);
    return result;
}

int
xxl_handlers_watch_fd (xxl_handlers_t *self)
{
    return self? self->watch_fd: -1;
}

int
xxl_handlers_acquire (xxl_handlers_t *self, const char *name, xxl_handler_ref_t *ref)
{
    if (!self || !name || !ref)
        return -1;
    pthread_mutex_lock (&self->mutex);
    entry_t *entry = (entry_t *) zhashx_lookup (self->names, name);
    if (entry) {
        plugin_t *plugin = entry->plugin;
        __atomic_add_fetch (&plugin->refs, 1, __ATOMIC_ACQ_REL);
        ref->name = entry->handler->name;
        ref->fn = entry->handler->fn;
        ref->flags = entry->handler->flags;
        ref->plugin_state = plugin->state;
        ref->plugin_path = plugin->path;
        ref->plugin_fd = plugin->fd;
        ref->generation = plugin->generation;
        ref->plugin = plugin;
    }
    pthread_mutex_unlock (&self->mutex);
    return entry? 0: -1;
}

void
xxl_handlers_release (xxl_handler_ref_t *ref)
{
    if (!ref || !ref->plugin)
        return;
    s_plugin_unref ((plugin_t *) ref->plugin);
    memset (ref, 0, sizeof *ref);
}
