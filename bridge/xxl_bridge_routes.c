/*  xxl_bridge_routes.c -- which executor each logId the bridge sent went to.

    See xxl_bridge_routes.h.  In memory: a hash of "LOGID" to the key.
*/

#include "xxl_bridge_routes.h"

#include <fcntl.h>
#include <inttypes.h>

struct _xxl_bridge_routes_t {
    char *path;
    int fd;
    zhashx_t *open;                 //  "LOGID" -> key (strdup'd)
    size_t done;                    //  D lines in the file
};

static void
s_id (int64_t log_id, char *out, size_t outlen)
{
    snprintf (out, outlen, "%" PRId64, log_id);
}

static void
s_replay (xxl_bridge_routes_t *self)
{
    FILE *file = fopen (self->path, "r");
    if (!file)
        return;
    char line [1024];
    while (fgets (line, sizeof line, file)) {
        size_t len = strlen (line);
        if (!len || line [len - 1] != '\n')
            break;                  //  (a torn tail)
        line [--len] = 0;
        char *tab = strchr (line + 2, ' ');
        if (line [0] == 'R' && line [1] == ' ' && tab) {
            *tab = 0;
            zhashx_update (self->open, line + 2, strdup (tab + 1));
        }
        else
        if (line [0] == 'D' && line [1] == ' ') {
            zhashx_delete (self->open, line + 2);
            self->done++;
        }
    }
    fclose (file);
}

//  Writes the open routes to a new file and puts it in place
static int
s_compact (xxl_bridge_routes_t *self)
{
    char *tmp = zsys_sprintf ("%s.new", self->path);
    FILE *file = fopen (tmp, "w");
    if (!file) {
        zstr_free (&tmp);
        return -1;
    }
    for (const char *key = (const char *) zhashx_first (self->open); key;
         key = (const char *) zhashx_next (self->open))
        fprintf (file, "R %s %s\n", (const char *) zhashx_cursor (self->open), key);
    bool ok = fflush (file) == 0 && fsync (fileno (file)) == 0;
    ok = fclose (file) == 0 && ok;
    if (ok && rename (tmp, self->path) == 0) {
        int fd = open (self->path, O_WRONLY | O_APPEND | O_CLOEXEC);
        if (fd >= 0) {
            close (self->fd);
            self->fd = fd;
            self->done = 0;
        }
    }
    else
        unlink (tmp);
    zstr_free (&tmp);
    return ok? 0: -1;
}

xxl_bridge_routes_t *
xxl_bridge_routes_new (const char *path)
{
    xxl_bridge_routes_t *self = (xxl_bridge_routes_t *) zmalloc (sizeof *self);
    self->path = strdup (path);
    self->open = zhashx_new ();
    zhashx_set_destructor (self->open, (zhashx_destructor_fn *) zstr_free);
    s_replay (self);
    self->fd = open (path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (self->fd < 0) {
        xxl_bridge_routes_destroy (&self);
        return NULL;
    }
    if (self->done > 10000 && self->done > zhashx_size (self->open))
        s_compact (self);
    return self;
}

void
xxl_bridge_routes_destroy (xxl_bridge_routes_t **self_p)
{
    xxl_bridge_routes_t *self = *self_p;
    if (!self)
        return;
    if (self->fd >= 0)
        close (self->fd);
    zhashx_destroy (&self->open);
    free (self->path);
    free (self);
    *self_p = NULL;
}

static int
s_write (xxl_bridge_routes_t *self, const char *line)
{
    size_t len = strlen (line);
    return write (self->fd, line, len) == (ssize_t) len? 0: -1;
}

int
xxl_bridge_routes_add (xxl_bridge_routes_t *self, int64_t log_id, const char *key)
{
    char id [32];
    s_id (log_id, id, sizeof id);
    zhashx_update (self->open, id, strdup (key));
    char *line = zsys_sprintf ("R %s %s\n", id, key);
    int rc = s_write (self, line);
    zstr_free (&line);
    return rc;
}

const char *
xxl_bridge_routes_get (xxl_bridge_routes_t *self, int64_t log_id)
{
    char id [32];
    s_id (log_id, id, sizeof id);
    return (const char *) zhashx_lookup (self->open, id);
}

void
xxl_bridge_routes_done (xxl_bridge_routes_t *self, int64_t log_id)
{
    char id [32];
    s_id (log_id, id, sizeof id);
    if (!zhashx_lookup (self->open, id))
        return;
    zhashx_delete (self->open, id);
    char line [48];
    snprintf (line, sizeof line, "D %s\n", id);
    s_write (self, line);
    if (++self->done > 10000 && self->done > zhashx_size (self->open))
        s_compact (self);
}

size_t
xxl_bridge_routes_size (xxl_bridge_routes_t *self)
{
    return zhashx_size (self->open);
}
