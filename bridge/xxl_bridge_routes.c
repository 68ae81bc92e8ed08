/*  xxl_bridge_routes.c -- which executor each logId the bridge sent went to.

    See xxl_bridge_routes.h.  In memory: a hash of "LOGID" to its route.
*/

#include "xxl_bridge_routes.h"

#include <fcntl.h>
#include <inttypes.h>

struct _xxl_bridge_routes_t {
    char *path;
    int fd;
    zhashx_t *open;                 //  "LOGID" -> route_t
    size_t done;                    //  D lines in the file (and the buffer)
    char *buf;                      //  lines not yet written (xxl_bridge_routes_flush)
    size_t len, cap;
};

typedef struct {
    int64_t job_id;                 //  -1: not known (an R line)
    int64_t log_date_time;
    char key [];
} route_t;

static route_t *
s_route_new (const char *key, int64_t job_id, int64_t log_date_time)
{
    size_t len = strlen (key);
    route_t *route = (route_t *) malloc (sizeof *route + len + 1);
    assert (route);
    route->job_id = job_id;
    route->log_date_time = log_date_time;
    memcpy (route->key, key, len + 1);
    return route;
}

static void
s_route_free (void **item_p)
{
    free (*item_p);
    *item_p = NULL;
}

size_t
xxl_bridge_routes_id (int64_t log_id, char *out)
{
    char digits [XXL_BRIDGE_ID_MAX];
    uint64_t n = log_id < 0? 0 - (uint64_t) log_id: (uint64_t) log_id;
    size_t count = 0;
    do {
        digits [count++] = (char) ('0' + n % 10);
        n /= 10;
    } while (n);
    size_t len = 0;
    if (log_id < 0)
        out [len++] = '-';
    while (count)
        out [len++] = digits [--count];
    out [len] = 0;
    return len;
}

//  Appends the len bytes of text at *at
static char *
s_put (char *at, const char *text, size_t len)
{
    memcpy (at, text, len);
    return at + len;
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
            zhashx_update (self->open, line + 2, s_route_new (tab + 1, -1, 0));
        }
        else
        if (line [0] == 'S' && line [1] == ' ' && tab) {
            *tab = 0;
            char *end;
            long long job_id = strtoll (tab + 1, &end, 10);
            if (*end != ' ')
                continue;
            long long log_date_time = strtoll (end + 1, &end, 10);
            if (*end != ' ' || job_id < 0)
                continue;
            zhashx_update (self->open, line + 2, s_route_new (end + 1, job_id, log_date_time));
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
    for (route_t *route = (route_t *) zhashx_first (self->open); route;
         route = (route_t *) zhashx_next (self->open))
        if (route->job_id < 0)
            fprintf (file, "R %s %s\n", (const char *) zhashx_cursor (self->open), route->key);
        else
            fprintf (file, "S %s %" PRId64 " %" PRId64 " %s\n",
                     (const char *) zhashx_cursor (self->open), route->job_id,
                     route->log_date_time, route->key);
    bool ok = fflush (file) == 0 && fsync (fileno (file)) == 0;
    ok = fclose (file) == 0 && ok;
    if (ok && rename (tmp, self->path) == 0) {
        int fd = open (self->path, O_WRONLY | O_APPEND | O_CLOEXEC);
        if (fd >= 0) {
            close (self->fd);
            self->fd = fd;
            self->done = 0;
        }
        self->len = 0;              //  (what the buffer held is in the new file)
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
    zhashx_set_destructor (self->open, s_route_free);
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
    if (self->fd >= 0) {
        xxl_bridge_routes_flush (self);
        close (self->fd);
    }
    zhashx_destroy (&self->open);
    free (self->buf);
    free (self->path);
    free (self);
    *self_p = NULL;
}

//  Appends line to the buffer; -1 when out of memory (not recorded)
static int
s_write (xxl_bridge_routes_t *self, const char *line)
{
    size_t len = strlen (line);
    if (self->len + len > self->cap) {
        size_t cap = 2 * (self->len + len);
        char *grown = (char *) realloc (self->buf, cap);
        if (!grown)
            return -1;
        self->buf = grown;
        self->cap = cap;
    }
    memcpy (self->buf + self->len, line, len);
    self->len += len;
    return 0;
}

int
xxl_bridge_routes_flush (xxl_bridge_routes_t *self)
{
    if (!self->len)
        return 0;
    ssize_t n = write (self->fd, self->buf, self->len);
    if (n != (ssize_t) self->len) {
        //  (what was not written goes with the next flush)
        size_t keep = n > 0? self->len - (size_t) n: self->len;
        memmove (self->buf, self->buf + self->len - keep, keep);
        self->len = keep;
        return -1;
    }
    self->len = 0;
    return 0;
}

int
xxl_bridge_routes_add (xxl_bridge_routes_t *self, int64_t log_id, const char *key)
{
    char id [XXL_BRIDGE_ID_MAX];
    xxl_bridge_routes_id (log_id, id);
    zhashx_update (self->open, id, s_route_new (key, -1, 0));
    char *line = zsys_sprintf ("R %s %s\n", id, key);
    int rc = s_write (self, line);
    zstr_free (&line);
    return rc;
}

int
xxl_bridge_routes_add_run (xxl_bridge_routes_t *self, int64_t log_id, const char *key,
                           int64_t job_id, int64_t log_date_time)
{
    assert (job_id >= 0);
    char id [XXL_BRIDGE_ID_MAX];
    size_t idlen = xxl_bridge_routes_id (log_id, id);
    zhashx_update (self->open, id, s_route_new (key, job_id, log_date_time));
    //  "S LOGID JOBID LOGDATETIME KEY\n", made without printf
    size_t klen = strlen (key);
    char small [256];
    char *line = 3 * XXL_BRIDGE_ID_MAX + klen + 8 <= sizeof small? small
               : (char *) malloc (3 * XXL_BRIDGE_ID_MAX + klen + 8);
    if (!line)
        return -1;
    char *at = s_put (line, "S ", 2);
    at = s_put (at, id, idlen);
    *at++ = ' ';
    at += xxl_bridge_routes_id (job_id, at);
    *at++ = ' ';
    at += xxl_bridge_routes_id (log_date_time, at);
    *at++ = ' ';
    at = s_put (at, key, klen);
    *at++ = '\n';
    *at = 0;
    int rc = s_write (self, line);
    if (line != small)
        free (line);
    return rc;
}

const char *
xxl_bridge_routes_get (xxl_bridge_routes_t *self, int64_t log_id)
{
    char id [XXL_BRIDGE_ID_MAX];
    xxl_bridge_routes_id (log_id, id);
    route_t *route = (route_t *) zhashx_lookup (self->open, id);
    return route? route->key: NULL;
}

//  The route at the cursor, out (its key, or NULL at the end)
static const char *
s_route_out (xxl_bridge_routes_t *self, route_t *route, int64_t *log_id, int64_t *job_id,
             int64_t *log_date_time)
{
    if (!route)
        return NULL;
    *log_id = strtoll ((const char *) zhashx_cursor (self->open), NULL, 10);
    *job_id = route->job_id;
    *log_date_time = route->log_date_time;
    return route->key;
}

const char *
xxl_bridge_routes_first (xxl_bridge_routes_t *self, int64_t *log_id, int64_t *job_id,
                         int64_t *log_date_time)
{
    return s_route_out (self, (route_t *) zhashx_first (self->open), log_id, job_id,
                        log_date_time);
}

const char *
xxl_bridge_routes_next (xxl_bridge_routes_t *self, int64_t *log_id, int64_t *job_id,
                        int64_t *log_date_time)
{
    return s_route_out (self, (route_t *) zhashx_next (self->open), log_id, job_id,
                        log_date_time);
}

void
xxl_bridge_routes_done (xxl_bridge_routes_t *self, int64_t log_id)
{
    char id [XXL_BRIDGE_ID_MAX];
    xxl_bridge_routes_id (log_id, id);
    if (!zhashx_lookup (self->open, id))
        return;
    zhashx_delete (self->open, id);
    char line [XXL_BRIDGE_ID_MAX + 4] = "D ";
    size_t len = 2 + xxl_bridge_routes_id (log_id, line + 2);
    line [len++] = '\n';
    line [len] = 0;
    s_write (self, line);
    if (++self->done > 10000 && self->done > zhashx_size (self->open))
        s_compact (self);
}

size_t
xxl_bridge_routes_size (xxl_bridge_routes_t *self)
{
    return zhashx_size (self->open);
}
