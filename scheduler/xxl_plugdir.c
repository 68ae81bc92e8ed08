/*  xxl_plugdir.c -- the plugin files of a folder, in name order.
*/
#include "xxl_plugdir.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int
xxl_plugdir_list (const char *dir, char ***paths)
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

void
xxl_plugdir_free (char ***paths, int count)
{
    if (paths && *paths) {
        for (int i = 0; i < count; i++)
            free ((*paths) [i]);
        free (*paths);
        *paths = NULL;
    }
}
