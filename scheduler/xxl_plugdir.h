/*  xxl_plugdir.h -- the plugin files of a folder.
    Router and alarm plugins are loaded from a folder of shared objects in
    name order; this lists them.  No czmq: the plugin hosts use only libc.
*/
#ifndef XXL_PLUGDIR_H_INCLUDED
#define XXL_PLUGDIR_H_INCLUDED

//  Lists every "*.so" in dir whose name does not start with a dot, as full
//  paths sorted by name.  Returns their number (and *paths, owned by the
//  caller: xxl_plugdir_free), or -1 when dir cannot be read (errno says
//  why; *paths is NULL).  Files that cannot be listed for lack of memory
//  are left out.
int xxl_plugdir_list (const char *dir, char ***paths);

//  Frees a list from xxl_plugdir_list and sets *paths to NULL.
void xxl_plugdir_free (char ***paths, int count);

#endif
