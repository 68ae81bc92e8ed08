/*  xxl_handlers.c -- the handler plugins an agent has loaded.

    A plugin is never loaded from its file in the folder: the file's bytes
    are copied (read(2), which cannot fault) into a private snapshot, a
    memfd sealed against writing, shrinking and growing, and the plugin is
    dlopen()ed from /proc/self/fd/<snapshot>.  So a file that is still being
    copied into the folder (plain cp), or rewritten or truncated later,
    cannot pull pages from under the loader or the loaded code (a mapped
    file that shrinks, or that ends before its segments do, faults with
    SIGBUS).  A snapshot is refused (logged, skipped, remembered by
    identity so that it is retried when the file changes again) when the
    file changed while it was copied, or when it is an ELF file cut short:
    its program headers, a segment or its section headers lie past its
    end; dlopen itself does not check that, so the check comes first.  A
    loaded plugin costs its file's size in memory (the snapshot).

    The identity we record (device, inode, size, mtime) is the file's as
    the copy began, and each load is a fresh object (a new memfd), so a
    replaced file gets a fresh dlopen instead of glibc handing back the
    still-loaded old object.  The snapshot fd stays open for the plugin's
    lifetime: isolated runners load the same snapshot through it, and it
    keeps the /proc/self/fd/N name unique among loaded objects.  Where
    memfd_create is refused, the snapshot is an unlinked temp file
    (O_TMPFILE, mode 0600) instead, not sealed but private.

    Reference counting: the registry holds one reference on each active
    plugin, each run one more (acquire/release, atomic), and each job
    queue whose handler lifecycle is open one more (dup/release: its
    destroy runs the code its init ran).  A plugin that is
    replaced or removed leaves the name table at once; it is unloaded
    (destroy, dlclose, close) when its count drops to zero.
*/

#define _GNU_SOURCE
#include "xxl_handlers.h"

#include <czmq.h>
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef MFD_EXEC
#   define MFD_EXEC 0x0010U         //  Linux 6.3; older kernels say EINVAL
#endif
#ifndef O_TMPFILE
#   define O_TMPFILE (020000000 | O_DIRECTORY)
#endif
#if UINTPTR_MAX > 0xffffffffu
#   define ELF_CLASS ELFCLASS64
typedef Elf64_Ehdr elf_ehdr_t;
typedef Elf64_Phdr elf_phdr_t;
#else
#   define ELF_CLASS ELFCLASS32
typedef Elf32_Ehdr elf_ehdr_t;
typedef Elf32_Phdr elf_phdr_t;
#endif

typedef struct _plugin_t {
    char *path;                         //  full path
    char *file;                         //  file name in the folder
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
    int fd;                             //  snapshot, -1 for a failed entry
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
    const xxl_handler_lifecycle_t *lifecycle;   //  or NULL
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

//  A new empty snapshot file: a memfd that can be sealed, or an unlinked
//  temp file where memfd_create is refused.  -1 with errno set.
static int
s_snapshot_new (const char *file)
{
    char name [128];
    snprintf (name, sizeof name, "xxl-plugin:%.100s", file);
    int fd = memfd_create (name, MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
    if (fd == -1 && (errno == EINVAL || errno == EACCES || errno == EPERM))
        fd = memfd_create (name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd == -1) {
        const char *tmp = getenv ("TMPDIR");
        fd = open (tmp && *tmp? tmp: "/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    }
    return fd;
}

//  Copies all of from into to; the number of bytes copied, or -1 with
//  errno set
static off_t
s_snapshot_copy (int from, int to)
{
    size_t bufsize = 64 * 1024;
    char *buf = (char *) malloc (bufsize);
    if (!buf)
        return -1;
    off_t copied = 0;
    for (;;) {
        ssize_t got = read (from, buf, bufsize);
        if (got == -1 && errno == EINTR)
            continue;
        if (got <= 0) {
            if (got == -1)
                copied = -1;
            break;
        }
        for (ssize_t put = 0, n; put < got; put += n) {
            n = write (to, buf + put, (size_t) (got - put));
            if (n == -1 && errno == EINTR)
                n = 0;
            else
            if (n <= 0) {
                if (n == 0)
                    errno = ENOSPC;
                free (buf);
                return -1;
            }
        }
        copied += got;
    }
    free (buf);
    return copied;
}

//  0 if the image holds every byte the dynamic loader reads or maps, or if
//  it is not an ELF file of our class at all (dlopen says what is wrong
//  with it); else 1 with what ends past the image in what, and where it
//  ends in *end.
static int
s_elf_cut_short (int fd, uint64_t size, const char **what, uint64_t *end)
{
    elf_ehdr_t ehdr;
    ssize_t got = pread (fd, &ehdr, sizeof ehdr, 0);
    if (got < SELFMAG || memcmp (ehdr.e_ident, ELFMAG, SELFMAG))
        return 0;
    if (got < (ssize_t) sizeof ehdr) {
        *what = "the ELF header";
        *end = sizeof ehdr;
        return 1;
    }
    if (ehdr.e_ident [EI_CLASS] != ELF_CLASS || ehdr.e_phentsize != sizeof (elf_phdr_t))
        return 0;
    *end = (uint64_t) ehdr.e_phoff + (uint64_t) ehdr.e_phnum * sizeof (elf_phdr_t);
    if (*end > size) {
        *what = "the program headers";
        return 1;
    }
    for (unsigned index = 0; index < ehdr.e_phnum; index++) {
        elf_phdr_t phdr;
        if (pread (fd, &phdr, sizeof phdr,
                   (off_t) (ehdr.e_phoff + index * sizeof phdr)) != (ssize_t) sizeof phdr)
            return 0;
        *end = (uint64_t) phdr.p_offset + (uint64_t) phdr.p_filesz;
        if (*end > size) {
            *what = phdr.p_type == PT_LOAD? "a loadable segment": "a segment";
            return 1;
        }
    }
    //  A linker writes the section headers last: without them the file is
    //  cut short even when every segment is there
    if (ehdr.e_shoff) {
        *end = (uint64_t) ehdr.e_shoff
             + (uint64_t) (ehdr.e_shnum? ehdr.e_shnum: 1) * ehdr.e_shentsize;
        if (*end > size) {
            *what = "the section headers";
            return 1;
        }
    }
    return 0;
}

//  Makes the plugin's snapshot of the file open on fd, whose fstat as the
//  copy begins is st.  Returns the snapshot fd (CLOEXEC, sealed if it is
//  a memfd), or -1 after logging why the plugin is skipped.
static int
s_snapshot (plugin_t *plugin, int fd, const struct stat *st)
{
    int snapshot = s_snapshot_new (plugin->file);
    if (snapshot == -1) {
        zsys_error ("handlers: %s: cannot make a private copy: %s; plugin skipped",
                    plugin->path, strerror (errno));
        return -1;
    }
    off_t copied = s_snapshot_copy (fd, snapshot);
    struct stat after;
    if (copied == -1 || fstat (fd, &after)) {
        zsys_error ("handlers: %s: cannot copy: %s; plugin skipped",
                    plugin->path, strerror (errno));
        close (snapshot);
        return -1;
    }
    if (copied != after.st_size || after.st_size != st->st_size
    ||  after.st_mtim.tv_sec != st->st_mtim.tv_sec
    ||  after.st_mtim.tv_nsec != st->st_mtim.tv_nsec) {
        zsys_warning ("handlers: %s: file changed while being read (still being written?); "
                      "plugin skipped until it changes again", plugin->path);
        close (snapshot);
        return -1;
    }
    //  memfd only; a temp file says EINVAL and stays private all the same
    if (fcntl (snapshot, F_ADD_SEALS,
               F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == -1
    &&  errno != EINVAL)
        zsys_warning ("handlers: %s: cannot seal the private copy: %s",
                      plugin->path, strerror (errno));
    const char *what = NULL;
    uint64_t end = 0;
    if (s_elf_cut_short (snapshot, (uint64_t) copied, &what, &end)) {
        zsys_error ("handlers: %s: incomplete file (still being written?): %lld bytes, "
                    "cut in %s (up to byte %llu); plugin skipped until it changes again",
                    plugin->path, (long long) copied, what, (unsigned long long) end);
        close (snapshot);
        return -1;
    }
    return snapshot;
}

//  The descriptor's lifecycle table, when its size covers the member
//  (an older plugin's does not: it has none), else NULL
static const xxl_handler_lifecycle_t *
s_lifecycles (const xxl_handler_plugin_t *desc)
{
    if (desc->size < offsetof (xxl_handler_plugin_t, lifecycle) + sizeof (desc->lifecycle))
        return NULL;
    return desc->lifecycle;
}

//  The handler named name in the plugin's table, or NULL
static const xxl_handler_t *
s_handler_find (const xxl_handler_plugin_t *desc, const char *name)
{
    int count = 0;
    for (const xxl_handler_t *handler = desc->handlers;
         handler->name && count < 100000; handler++, count++)
        if (streq (handler->name, name))
            return handler;
    return NULL;
}

//  1 (logged) when the lifecycle table is bad: an entry naming no handler
//  of the plugin's table, naming one twice, or naming one that runs
//  isolated (a lifecycle runs in the agent's process only: xxl/handler.h)
static int
s_lifecycle_bad (plugin_t *plugin, const xxl_handler_plugin_t *desc)
{
    const xxl_handler_lifecycle_t *lifecycle = s_lifecycles (desc);
    for (int index = 0; lifecycle && lifecycle [index].handler && index < 100000; index++) {
        const char *name = lifecycle [index].handler;
        const xxl_handler_t *handler = s_handler_find (desc, name);
        if (!handler) {
            zsys_error ("handlers: %s: lifecycle entry %d names handler '%s', which is not in "
                        "the plugin's handler table; plugin skipped", plugin->path, index, name);
            return 1;
        }
        if (!(handler->flags & XXL_HANDLER_IN_PROCESS)) {
            zsys_error ("handlers: %s: handler '%s' has a lifecycle (init/destroy) but is not "
                        "flagged XXL_HANDLER_IN_PROCESS: a job's init and destroy run only in "
                        "the agent's process; plugin skipped", plugin->path, name);
            return 1;
        }
        for (int other = 0; other < index; other++)
            if (streq (lifecycle [other].handler, name)) {
                zsys_error ("handlers: %s: handler '%s' has two lifecycle entries; plugin "
                            "skipped", plugin->path, name);
                return 1;
            }
    }
    return 0;
}

//  The lifecycle entry of a handler, or NULL
static const xxl_handler_lifecycle_t *
s_lifecycle_of (const xxl_handler_plugin_t *desc, const char *name)
{
    const xxl_handler_lifecycle_t *lifecycle = s_lifecycles (desc);
    for (; lifecycle && lifecycle->handler; lifecycle++)
        if (streq (lifecycle->handler, name))
            return lifecycle->init || lifecycle->destroy? lifecycle: NULL;
    return NULL;
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
    //  O_NONBLOCK: a FIFO named *.so must not block the rescan
    int fd = open (plugin->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd == -1 || fstat (fd, &st)) {
        zsys_error ("handlers: %s: cannot open: %s; plugin skipped",
                    plugin->path, strerror (errno));
        if (fd >= 0)
            close (fd);
        s_plugin_unload (plugin);
        return NULL;
    }
    plugin->dev = st.st_dev;
    plugin->ino = st.st_ino;
    plugin->size = st.st_size;
    plugin->mtime = st.st_mtim;
    if (!S_ISREG (st.st_mode))
        zsys_error ("handlers: %s: not a regular file; plugin skipped", plugin->path);
    else
        plugin->fd = s_snapshot (plugin, fd, &st);
    close (fd);
    if (plugin->fd == -1)
        return plugin;                  //  failed entry, logged

    char fdpath [64];
    snprintf (fdpath, sizeof fdpath, "/proc/self/fd/%d", plugin->fd);
    void *dl = dlopen (fdpath, RTLD_NOW | RTLD_LOCAL);
    //  Without /proc, the file itself; only then, as it may change under
    //  the loader (the snapshot was checked complete a moment ago)
    if (!dl && access (fdpath, F_OK) == -1 && errno == ENOENT)
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
    if (desc->size < XXL_HANDLER_PLUGIN_SIZE_V1)
        zsys_error ("handlers: %s: descriptor size %u too small (need %zu); plugin skipped",
                    plugin->path, desc->size, (size_t) XXL_HANDLER_PLUGIN_SIZE_V1);
    else
    if (!desc->handlers)
        zsys_error ("handlers: %s: no handler table; plugin skipped", plugin->path);
    else
    if (s_lifecycle_bad (plugin, desc))
        ;                               //  logged
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
        entry->lifecycle = s_lifecycle_of (plugin->desc, handler->name);
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
        ref->lifecycle = entry->lifecycle;
        ref->plugin = plugin;
    }
    pthread_mutex_unlock (&self->mutex);
    return entry? 0: -1;
}

void
xxl_handlers_dup (const xxl_handler_ref_t *ref, xxl_handler_ref_t *copy)
{
    assert (ref && ref->plugin && copy);
    __atomic_add_fetch (&((plugin_t *) ref->plugin)->refs, 1, __ATOMIC_ACQ_REL);
    *copy = *ref;
}

void
xxl_handlers_release (xxl_handler_ref_t *ref)
{
    if (!ref || !ref->plugin)
        return;
    s_plugin_unref ((plugin_t *) ref->plugin);
    memset (ref, 0, sizeof *ref);
}
