/*  xxl_handlers.h -- the handler plugins an agent has loaded.

    Loads every *.so of a folder with dlopen (see xxl/handler.h for the
    ABI) and maps handler names to functions.  A bad plugin never fails the
    set: it is logged and skipped.  Plugins can be added, replaced or removed
    while the agent runs (xxl_handlers_rescan, driven by the inotify fd of
    xxl_handlers_watch_fd); a run holds a reference on its plugin (acquire /
    release) so that a replaced plugin stays loaded until its last run ends.

    A plugin is loaded from a private snapshot of its file's bytes (a
    sealed memfd), never from the file itself, and each loaded plugin keeps
    an fd on that snapshot; an isolated run's runner process loads the
    plugin through that fd (/proc/self/fd/N), so it runs the very code the
    agent accepted the run with, even if the file was replaced, rewritten
    or truncated meanwhile.  Copying a plugin into the folder with plain
    cp(1) is safe: a file seen half-written (changed while being copied, or
    an ELF file cut short) is refused with a log line and loaded once the
    copy completes (the close or rename wakes the watch fd).
*/

#ifndef XXL_HANDLERS_H_INCLUDED
#define XXL_HANDLERS_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include <xxl/handler.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct _xxl_handlers_t xxl_handlers_t;

//  A handler held for one run (filled by xxl_handlers_acquire).  All members
//  stay valid until xxl_handlers_release.
typedef struct {
    const char *name;                   //  handler name
    xxl_handler_fn *fn;
    uint32_t flags;                     //  XXL_HANDLER_* flags
    void *plugin_state;                 //  what the plugin's init returned
    const char *plugin_path;            //  file the plugin was copied from
    int plugin_fd;                      //  fd on the sealed snapshot of that
                                        //  file the plugin was loaded from
                                        //  (CLOEXEC; not to be written)
    uint64_t generation;                //  unique per loaded plugin instance
    const xxl_handler_lifecycle_t *lifecycle;   //  the handler's per-job
                                        //  lifecycle (xxl/handler.h), or NULL
    void *plugin;                       //  opaque, for release
} xxl_handler_ref_t;

//  Loads every *.so in dir (sorted by file name).  dir may be NULL or
//  missing: empty set, with a log line.  One bad plugin (dlopen error,
//  missing symbol xxl_handler_plugin, ABI version mismatch, descriptor too
//  small, a bad lifecycle table, init failure) is logged and skipped; a
//  handler name already taken is logged and skipped (the first loaded
//  keeps it).  Returns NULL only when out of memory.
xxl_handlers_t *xxl_handlers_new (const char *dir);

//  Unloads plugins not in use; plugins still referenced by runs are
//  unloaded at their last release.  Nulls *self_p.
void xxl_handlers_destroy (xxl_handlers_t **self_p);

//  1 if a handler of that name is loaded, else 0.
int xxl_handlers_exists (xxl_handlers_t *self, const char *name);

//  Number of handlers loaded.
size_t xxl_handlers_size (xxl_handlers_t *self);

//  Comma-separated sorted handler names; the caller frees it.  NULL when out
//  of memory.
char *xxl_handlers_names (xxl_handlers_t *self);

//  Rescans the folder: loads added and changed (inode, size or mtime) files,
//  unloads removed ones; runs in flight keep their code.  A file that
//  changed while it was copied, or an ELF file cut short, is logged and
//  skipped until it changes again.  Drains the watch
//  fd.  Thread-safe against acquire/release.  Returns the number of plugins
//  loaded or unloaded, -1 if there is no folder.
int xxl_handlers_rescan (xxl_handlers_t *self);

//  inotify fd on the folder (non-blocking), or -1.  Poll it for input and
//  call xxl_handlers_rescan when readable.  Owned by self.
int xxl_handlers_watch_fd (xxl_handlers_t *self);

//  Takes a reference on the handler named name for one run and fills ref.
//  Returns 0, or -1 if no such handler.  Thread-safe.
int xxl_handlers_acquire (xxl_handlers_t *self, const char *name, xxl_handler_ref_t *ref);

//  Takes one more reference on ref's plugin into copy (same members), for
//  a holder that outlives the run (a job's lifecycle).  ref is acquired.
void xxl_handlers_dup (const xxl_handler_ref_t *ref, xxl_handler_ref_t *copy);

//  Drops the reference taken by acquire (or dup); the plugin is unloaded
//  here if it was replaced or removed and this was its last holder.  Safe to call after
//  xxl_handlers_destroy.  Zeroes ref; a zeroed ref is ignored.
void xxl_handlers_release (xxl_handler_ref_t *ref);

#ifdef __cplusplus
}
#endif

#endif
