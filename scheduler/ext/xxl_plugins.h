/*  xxl_plugins.h -- the scheduler's plugin loader, for plugins of one ABI.

    Router and alarm plugins have one shape, as nginx or Redis modules do:
    a shared object exports one entry symbol, a function returning a
    pointer to a static descriptor that starts with the ABI version and
    the descriptor's own size (xxl_plugins_header_t), and lists named items
    (routes, alarm kinds) in a table that ends with a NULL name.  The host
    of one ABI describes it (xxl_plugins_abi_t: entry symbol, version,
    sizes, the words of its log lines, four callbacks) and this does the
    rest:

    - lists the "*.so" files of a folder (not dot files) in name order;
    - dlopen()s each (RTLD_NOW | RTLD_LOCAL) and finds the entry symbol;
    - checks the header: the version must be the ABI's, the size at least
      the ABI's smallest;
    - hands the descriptor to the host's validate, which may refuse it and
      says where the item table is;
    - checks each item with the host's check_item and ignores bad ones and
      names already taken (the first file loaded keeps a name);
    - refuses a plugin left with no usable item, or whose init fails;
    - keeps the names in a sorted table;
    - at destroy, unloads in reverse load order (destroy, dlclose).

    A refused plugin gets one log line through vlog and the others still
    load; a bad or duplicate item gets one log line and the plugin's other
    items still register.  The lines, with the host's words in <>:

        <plugin> PATH refused: cannot load: DLERROR
        <plugin> PATH refused: missing symbol ENTRY (<not_one>)
        <plugin> PATH refused: its entry point returned NULL
        <plugin> PATH refused: wrong ABI version V (this scheduler speaks <abi> N)
        <plugin> PATH refused: descriptor size S too small (ABI N needs at least M)
        <plugin> PATH refused: REASON                   (validate's reason)
        <plugin> PATH (NAME): REASON; ignored            (check_item's reason)
        <plugin> PATH (NAME): duplicate <duplicate> X (already from PATH); ignored
        <plugin> PATH (NAME) refused: no usable <usable>
        <plugin> PATH (NAME) refused: init failed: ERROR
        <plugin> PATH refused: out of memory
        <loaded> X loaded from PATH (NAME VERSION)      (debug)
        cannot read <folder> DIR: STRERROR

    NAME is the plugin's own name, or its path when it has none.

    After loading, the table is read-only: find, size and names may be
    called from any number of threads at once.  Loading is not
    thread-safe.  No czmq: libc and libdl only (tests build it alone).
*/

#ifndef XXL_PLUGINS_H_INCLUDED
#define XXL_PLUGINS_H_INCLUDED

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct _xxl_plugins_t xxl_plugins_t;

//  Log levels passed to vlog (syslog numbering, as the plugin ABIs')
#define XXL_PLUGINS_LOG_ERROR   3
#define XXL_PLUGINS_LOG_DEBUG   7

//  What every descriptor starts with
typedef struct {
    uint32_t abi_version;
    uint32_t size;                      //  the descriptor's size, as built
} xxl_plugins_header_t;

//  What validate reads out of a descriptor
typedef struct {
    const char *name;                   //  plugin name for log lines (NULL: its path)
    const char *version;                //  its own version (NULL: "")
    const void *items;                  //  its item table: items of the ABI's
                                        //  item_size, each starting with its
                                        //  name (const char *), ended by a NULL
                                        //  name; never NULL
} xxl_plugins_about_t;

//  Validates the descriptor of a plugin whose header passed.  Returns NULL
//  with *about filled in (items left NULL refuses the plugin: "it has no
//  item table"), or the reason the plugin is refused (a string that
//  outlives the call; logged).  ctx is the loader's.
typedef const char *(xxl_plugins_validate_fn) (void *ctx, const void *desc,
                                               xxl_plugins_about_t *about);

//  Checks one item (its name is not NULL).  Returns 0 when usable, or -1
//  with the reason in why (NUL-terminated, truncated to whylen): the item
//  is ignored.
typedef int (xxl_plugins_check_fn) (void *ctx, const void *item,
                                    char *why, size_t whylen);

//  Runs the plugin's init, when it has one.  Returns 0 with *state set
//  (left NULL when the plugin has no init), or -1 with *error set (may be
//  left NULL), which refuses the plugin.
typedef int (xxl_plugins_init_fn) (void *ctx, const void *desc,
                                   void **state, const char **error);

//  Runs the plugin's destroy, when it has one, with the state its init
//  returned.  Never called for a NULL state.
typedef void (xxl_plugins_destroy_fn) (void *ctx, const void *desc, void *state);

//  Logs one line (printf format, no trailing newline) at a level
typedef void (xxl_plugins_vlog_fn) (int level, const char *format, va_list args);

//  One ABI, as its host describes it.  Static; all members set.
typedef struct {
    const char *entry;                  //  entry symbol, "xxl_router_plugin"
    uint32_t abi_version;               //  the version accepted
    size_t min_size;                    //  the smallest descriptor accepted
    size_t item_size;                   //  sizeof one item of the table
    //  The words of the log lines (see above), e.g. for routers:
    const char *plugin;                 //  "router plugin"
    const char *not_one;                //  "not a router plugin"
    const char *abi;                    //  "router ABI"
    const char *folder;                 //  "routers folder"
    const char *duplicate;              //  "route name"
    const char *usable;                 //  "route"
    const char *loaded;                 //  "router"
    xxl_plugins_validate_fn *validate;
    xxl_plugins_check_fn *check_item;
    xxl_plugins_init_fn *init;
    xxl_plugins_destroy_fn *destroy;
} xxl_plugins_abi_t;

//  Creates an empty loader.  abi is borrowed and must outlive it; ctx goes
//  to every callback (the host table, for init); vlog NULL logs to stderr.
//  Returns NULL when abi is NULL or when out of memory.
xxl_plugins_t *
    xxl_plugins_new (const xxl_plugins_abi_t *abi, void *ctx, xxl_plugins_vlog_fn *vlog);

//  Unloads every plugin in reverse load order (destroy, dlclose) and nulls
//  *self_p.
void
    xxl_plugins_destroy (xxl_plugins_t **self_p);

//  Loads the plugins of a folder in name order.  Returns the number of
//  plugins loaded from it, or -1 when dir cannot be read (logged).
int
    xxl_plugins_load (xxl_plugins_t *self, const char *dir);

//  Loads one plugin file.  Returns 0, or -1 when refused (logged).
int
    xxl_plugins_load_file (xxl_plugins_t *self, const char *path);

//  The item registered under the first len bytes of name (exact,
//  case-sensitive), or NULL.  *state (when state is not NULL) receives
//  its plugin's state.  Both stay valid until the loader is destroyed.
const void *
    xxl_plugins_find (xxl_plugins_t *self, const char *name, size_t len, void **state);

//  Number of registered item names.
size_t
    xxl_plugins_size (xxl_plugins_t *self);

//  All item names, sorted and separated by ", " ("a, b"; "" when none), as
//  the "(known: A, B, ...)" of a refusal gives them (docs/protocol.md).
//  The caller frees the string; NULL when out of memory.
char *
    xxl_plugins_names (xxl_plugins_t *self);

#ifdef __cplusplus
}
#endif

#endif
