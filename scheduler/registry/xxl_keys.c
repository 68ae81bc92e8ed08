/*  xxl_keys.c -- the --keys folder as a table of who holds each key.
*/

#include "xxl_keys.h"
#include "xxl_cert.h"

#include <czmq.h>
#include <dirent.h>
#include <sys/stat.h>

struct _xxl_keys_t {
    char *dir;
    zhashx_t *table;                    //  public key (Z85) → xxl_who_t (owned)
    uint64_t signature;                 //  of the folder as last read
};

static void
s_who_free (void **item_p)
{
    xxl_who_t *who = (xxl_who_t *) *item_p;
    if (who) {
        free ((char *) who->name);
        free ((char *) who->role);
        free ((char *) who->apps);
        free ((char *) who->public_key);
        free (who);
        *item_p = NULL;
    }
}

//  Whether a folder entry names a public certificate
static bool
s_is_cert_name (const char *name)
{
    size_t len = strlen (name);
    return name [0] != '.' && !(len >= 7 && streq (name + len - 7, "_secret"));
}

static uint64_t
s_mix (uint64_t hash, uint64_t value)
{
    hash ^= value;
    hash *= 0x100000001b3ULL;           //  (FNV-1a's prime, on 64-bit words)
    return hash ^ (hash >> 29);
}

//  A value that changes when any certificate in the folder is added,
//  removed, renamed or rewritten; 0 when the folder cannot be read
static uint64_t
s_signature (const char *dir)
{
    DIR *handle = opendir (dir);
    if (!handle)
        return 0;
    uint64_t sum = 0x84222325cbf29ce4ULL;
    struct dirent *entry;
    char path [4096];
    //  (a sum of each entry's mix: readdir's order does not matter)
    while ((entry = readdir (handle))) {
        if (!s_is_cert_name (entry->d_name))
            continue;
        struct stat st;
        snprintf (path, sizeof path, "%s/%s", dir, entry->d_name);
        if (stat (path, &st) || !S_ISREG (st.st_mode))
            continue;
        uint64_t item = 0x9e3779b97f4a7c15ULL;
        for (const char *c = entry->d_name; *c; c++)
            item = s_mix (item, (unsigned char) *c);
        item = s_mix (item, (uint64_t) st.st_mtim.tv_sec);
        item = s_mix (item, (uint64_t) st.st_mtim.tv_nsec);
        item = s_mix (item, (uint64_t) st.st_size);
        item = s_mix (item, (uint64_t) st.st_ino);
        sum += item;
    }
    closedir (handle);
    return sum? sum: 1;
}

//  Reads every certificate of the folder into a new table, or NULL
static zhashx_t *
s_load (const char *dir)
{
    DIR *handle = opendir (dir);
    if (!handle)
        return NULL;
    zhashx_t *table = zhashx_new ();
    zhashx_set_destructor (table, s_who_free);
    struct dirent *entry;
    char path [4096];
    while ((entry = readdir (handle))) {
        if (!s_is_cert_name (entry->d_name))
            continue;
        snprintf (path, sizeof path, "%s/%s", dir, entry->d_name);
        struct stat st;
        if (stat (path, &st) || !S_ISREG (st.st_mode))
            continue;
        zcert_t *cert = zcert_load (path);
        const char *name = cert? zcert_meta (cert, "name"): NULL;
        const char *role = cert? zcert_meta (cert, "role"): NULL;
        const char *apps = cert? zcert_meta (cert, "apps"): NULL;
        if (!cert)
            zsys_warning ("keys: %s is not a certificate; left out", path);
        else
        if (!name || !*name || !role || !xxl_cert_role_valid (role))
            zsys_warning ("keys: %s has no name or a role other than admin, operator,"
                          " viewer or agent; left out", path);
        else
        if (zhashx_lookup (table, zcert_public_txt (cert)))
            zsys_warning ("keys: %s repeats the key of another file; left out", path);
        else {
            xxl_who_t *who = (xxl_who_t *) zmalloc (sizeof (xxl_who_t));
            who->name = strdup (name);
            who->role = strdup (role);
            who->apps = strdup (apps? apps: "");
            who->public_key = strdup (zcert_public_txt (cert));
            zhashx_insert (table, who->public_key, who);
        }
        zcert_destroy (&cert);
    }
    closedir (handle);
    return table;
}

xxl_keys_t *
xxl_keys_new (const char *dir, char *err, size_t errlen)
{
    uint64_t signature = dir? s_signature (dir): 0;
    zhashx_t *table = signature? s_load (dir): NULL;
    if (!table) {
        snprintf (err, errlen, "cannot read the keys folder '%s': %s", dir? dir: "",
                  dir? strerror (errno): "none given");
        return NULL;
    }
    xxl_keys_t *self = (xxl_keys_t *) zmalloc (sizeof (xxl_keys_t));
    self->dir = strdup (dir);
    self->table = table;
    self->signature = signature;
    return self;
}

void
xxl_keys_destroy (xxl_keys_t **self_p)
{
    xxl_keys_t *self = *self_p;
    if (self) {
        zhashx_destroy (&self->table);
        free (self->dir);
        free (self);
        *self_p = NULL;
    }
}

int
xxl_keys_refresh (xxl_keys_t *self)
{
    uint64_t signature = s_signature (self->dir);
    if (signature == 0)
        return -1;
    if (signature == self->signature)
        return 0;
    zhashx_t *table = s_load (self->dir);
    if (!table)
        return -1;
    zhashx_destroy (&self->table);
    self->table = table;
    self->signature = signature;
    return 1;
}

const xxl_who_t *
xxl_keys_lookup (xxl_keys_t *self, const char *public_key)
{
    return public_key? (const xxl_who_t *) zhashx_lookup (self->table, public_key): NULL;
}

size_t
xxl_keys_size (xxl_keys_t *self)
{
    return zhashx_size (self->table);
}

bool
xxl_who_has_app (const xxl_who_t *who, const char *app)
{
    size_t len = app? strlen (app): 0;
    if (!len)
        return false;
    //  An agent key for every app: the local agent key (xxl_local.h)
    if (streq (who->role, "agent") && streq (who->apps, "*"))
        return true;
    for (const char *at = who->apps; at && *at; ) {
        const char *end = strchr (at, ',');
        size_t item = end? (size_t) (end - at): strlen (at);
        //  (spaces around an item are not part of it)
        const char *start = at;
        while (item && *start == ' ')
            start++, item--;
        while (item && start [item - 1] == ' ')
            item--;
        if (item == len && memcmp (start, app, len) == 0)
            return true;
        at = end? end + 1: NULL;
    }
    return false;
}
