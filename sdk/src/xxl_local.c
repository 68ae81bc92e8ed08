/*  xxl_local.c -- the state folder and the local keys (xxl_local.h).
*/

#include "xxl_local.h"
#include "xxl_cert.h"
#include "xxl_transport.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

//  The files of a local keys folder, and their modes when made
static const char *const s_files [] = {
    "scheduler.cert", "scheduler.cert_secret", XXL_LOCAL_ADMIN ".cert_secret",
    XXL_LOCAL_AGENT ".cert_secret", "keys/" XXL_LOCAL_ADMIN ".cert",
    "keys/" XXL_LOCAL_AGENT ".cert", NULL
};

//  path = a/b, or -1 with the reason when longer than XXL_CERT_PATH_MAX
static int
s_join (char *path, size_t pathlen, const char *a, const char *b, char *err, size_t errlen)
{
    size_t max = pathlen < XXL_CERT_PATH_MAX + 1? pathlen: XXL_CERT_PATH_MAX + 1;
    int len = snprintf (path, max, "%s/%s", a, b);
    if (len < 0 || (size_t) len >= max) {
        snprintf (err, errlen, "the path '%.40s.../%s' is too long", a, b);
        return -1;
    }
    return 0;
}

//  This user's own default state folder: /var/lib/xxl for root, else
//  $XDG_STATE_HOME/xxl or ~/.local/state/xxl; 0, or -1 with the reason
static int
s_user_dir (char *dir, size_t dirlen, char *err, size_t errlen)
{
    const char *xdg = getenv ("XDG_STATE_HOME");
    const char *home = getenv ("HOME");
    if (geteuid () == 0)
        snprintf (dir, dirlen, "%s", XXL_LOCAL_SYSTEM_DIR);
    else
    if (xdg && xdg [0] == '/')
        snprintf (dir, dirlen, "%s/xxl", xdg);
    else {
        if (!home || home [0] != '/') {
            struct passwd *pw = getpwuid (geteuid ());
            home = pw? pw->pw_dir: NULL;
        }
        if (!home || home [0] != '/') {
            snprintf (err, errlen, "no state folder: neither XDG_STATE_HOME nor HOME is set;"
                      " set scheduler/state_dir");
            return -1;
        }
        snprintf (dir, dirlen, "%s/.local/state/xxl", home);
    }
    return 0;
}

//  Whether dir is a usable state folder path; -1 with the reason if not
static int
s_check_dir (const char *dir, char *err, size_t errlen)
{
    if (!*dir || strlen (dir) > XXL_LOCAL_DIR_MAX) {
        snprintf (err, errlen, "the state folder '%.40s...' must be 1 to %d bytes", dir,
                  XXL_LOCAL_DIR_MAX);
        return -1;
    }
    return 0;
}

int
xxl_local_state_dir (const char *configured, char *dir, size_t dirlen, char *err,
                     size_t errlen)
{
    assert (dir && dirlen > XXL_LOCAL_DIR_MAX);
    const char *env = getenv ("XXL_STATE_DIR");
    const char *systemd = getenv ("STATE_DIRECTORY");
    if (configured && *configured)
        snprintf (dir, dirlen, "%s", configured);
    else
    if (env && *env)
        snprintf (dir, dirlen, "%s", env);
    else
    if (systemd && *systemd)                //  (the first of a ':' list)
        snprintf (dir, dirlen, "%.*s", (int) strcspn (systemd, ":"), systemd);
    else
    if (s_user_dir (dir, dirlen, err, errlen))
        return -1;
    return s_check_dir (dir, err, errlen);
}

int
xxl_local_mkdirs (const char *dir, mode_t mode)
{
    char path [4096];
    if (!dir || !*dir || strlen (dir) >= sizeof path) {
        errno = dir && *dir? ENAMETOOLONG: EINVAL;
        return -1;
    }
    snprintf (path, sizeof path, "%s", dir);
    //  Each prefix in turn, the folder itself last
    for (char *at = path + 1; ; at++) {
        if (*at != '/' && *at)
            continue;
        char saved = *at;
        *at = 0;
        if (mkdir (path, mode) && errno != EEXIST)
            return -1;
        *at = saved;
        if (!saved)
            break;
    }
    struct stat st;
    if (stat (dir, &st))
        return -1;
    if (!S_ISDIR (st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

//  Writes one certificate file whole, mode `mode` whatever the umask
static int
s_write_cert (const char *dir, const char *file, zcert_t *cert, const char *name,
              const char *role, const char *apps, bool secret, mode_t mode, char *err,
              size_t errlen)
{
    char path [XXL_CERT_PATH_MAX + 1], tmp [XXL_CERT_PATH_MAX + 16];
    if (s_join (path, sizeof path, dir, file, err, errlen))
        return -1;
    snprintf (tmp, sizeof tmp, "%s.tmp", path);
    int fd = open (tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
    if (fd < 0 || fchmod (fd, mode)) {
        snprintf (err, errlen, "cannot write '%s': %s", tmp, strerror (errno));
        if (fd >= 0)
            close (fd);
        return -1;
    }
    char *text = zsys_sprintf (
        "#   ****  xxl local keys: made by xxl-scheduler  ****\n"
        "#   ZeroMQ CURVE %s Certificate (docs/operations.md, Security)\n"
        "metadata\n"
        "    name = \"%s\"\n"
        "    role = \"%s\"\n"
        "    apps = \"%s\"\n"
        "curve\n"
        "    public-key = \"%s\"\n"
        "%s%s%s",
        secret? "**Secret**": "Public", name, role, apps, zcert_public_txt (cert),
        secret? "    secret-key = \"": "", secret? zcert_secret_txt (cert): "",
        secret? "\"\n": "");
    size_t len = text? strlen (text): 0;
    bool ok = text && write (fd, text, len) == (ssize_t) len && fsync (fd) == 0;
    if (text) {
        memset (text, 0, len);
        zstr_free (&text);
    }
    if (close (fd) || !ok || rename (tmp, path)) {
        snprintf (err, errlen, "cannot write '%s': %s", path, strerror (errno));
        unlink (tmp);
        return -1;
    }
    return 0;
}

//  Removes a local keys folder's files (those of s_files) and the folder
static void
s_remove (const char *kdir)
{
    char path [XXL_CERT_PATH_MAX + 1], err [256];
    for (int i = 0; s_files [i]; i++)
        if (s_join (path, sizeof path, kdir, s_files [i], err, sizeof err) == 0)
            unlink (path);
    if (s_join (path, sizeof path, kdir, "keys", err, sizeof err) == 0)
        rmdir (path);
    rmdir (kdir);
}

//  Makes the local keys in the new folder kdir (mode 0700)
static int
s_make (const char *kdir, char *err, size_t errlen)
{
    char keys [XXL_CERT_PATH_MAX + 1];
    if (mkdir (kdir, 0700) || chmod (kdir, 0700)
    ||  s_join (keys, sizeof keys, kdir, "keys", err, errlen)
    ||  mkdir (keys, 0700) || chmod (keys, 0700)) {
        if (!*err)
            snprintf (err, errlen, "cannot make the folder '%s': %s", kdir, strerror (errno));
        return -1;
    }
    zcert_t *server = zcert_new ();
    zcert_t *admin = zcert_new ();
    zcert_t *agent = zcert_new ();
    int rc = -1;
    if (!server || !admin || !agent)
        snprintf (err, errlen, "cannot make CURVE keys (a libzmq without CURVE?)");
    else
    if (s_write_cert (kdir, "scheduler.cert_secret", server, "scheduler", "admin", "", true,
                      0600, err, errlen) == 0
    &&  s_write_cert (kdir, "scheduler.cert", server, "scheduler", "admin", "", false, 0644,
                      err, errlen) == 0
    &&  s_write_cert (kdir, XXL_LOCAL_ADMIN ".cert_secret", admin, XXL_LOCAL_ADMIN, "admin",
                      "", true, 0600, err, errlen) == 0
    &&  s_write_cert (keys, XXL_LOCAL_ADMIN ".cert", admin, XXL_LOCAL_ADMIN, "admin", "",
                      false, 0644, err, errlen) == 0
    &&  s_write_cert (kdir, XXL_LOCAL_AGENT ".cert_secret", agent, XXL_LOCAL_AGENT, "agent",
                      "*", true, 0600, err, errlen) == 0
    &&  s_write_cert (keys, XXL_LOCAL_AGENT ".cert", agent, XXL_LOCAL_AGENT, "agent", "*",
                      false, 0644, err, errlen) == 0)
        rc = 0;
    zcert_destroy (&server);
    zcert_destroy (&admin);
    zcert_destroy (&agent);
    return rc;
}

//  Gives the folder and the agent's secret the agents' group, 0710 and
//  0640, when this process may; else 0700 and 0600 (this user's alone)
static void
s_settle_group (const char *kdir, const char *group)
{
    char secret [XXL_CERT_PATH_MAX + 1], err [256];
    if (s_join (secret, sizeof secret, kdir, XXL_LOCAL_AGENT ".cert_secret", err, sizeof err))
        return;
    const char *name = group && *group? group: XXL_LOCAL_GROUP;
    struct group *gr = getgrnam (name);
    bool shared = gr && chown (kdir, -1, gr->gr_gid) == 0
               && chown (secret, -1, gr->gr_gid) == 0;
    if (!gr && group && *group)
        zsys_warning ("local keys: no group '%s' (scheduler/agent_group): only this user's"
                      " agents can read %s", group, secret);
    else
    if (gr && !shared)
        zsys_warning ("local keys: cannot give group '%s' to %s (%s): agents of other users"
                      " cannot read it; make this user a member of '%s'", name, secret,
                      strerror (errno), name);
    if (chmod (kdir, shared? 0710: 0700) || chmod (secret, shared? 0640: 0600))
        zsys_warning ("local keys: cannot set the mode of %s: %s", kdir, strerror (errno));
}

int
xxl_local_keys_make (const char *state_dir, const char *group, char *cert, size_t certlen,
                     char *keys, size_t keyslen, char *err, size_t errlen)
{
    char kdir [XXL_CERT_PATH_MAX + 1], path [XXL_CERT_PATH_MAX + 1];
    err [0] = 0;
    if (s_join (kdir, sizeof kdir, state_dir, XXL_LOCAL_KEYS, err, errlen)
    ||  s_join (cert, certlen, kdir, "scheduler.cert_secret", err, errlen)
    ||  s_join (keys, keyslen, kdir, "keys", err, errlen))
        return -1;
    int made = 0;
    struct stat st;
    if (lstat (kdir, &st) && errno == ENOENT) {
        //  Made aside, then renamed into place: never seen half made
        char tmp [XXL_CERT_PATH_MAX + 1], name [64];
        snprintf (name, sizeof name, ".%s.%d", XXL_LOCAL_KEYS, (int) getpid ());
        if (s_join (tmp, sizeof tmp, state_dir, name, err, errlen))
            return -1;
        s_remove (tmp);
        if (s_make (tmp, err, errlen)) {
            s_remove (tmp);
            return -1;
        }
        if (rename (tmp, kdir))
            s_remove (tmp);             //  (another scheduler made it first)
        else
            made = 1;
    }
    if (lstat (kdir, &st) || !S_ISDIR (st.st_mode)) {
        snprintf (err, errlen, "cannot use the local keys folder '%s': %s", kdir,
                  errno? strerror (errno): "not a folder");
        return -1;
    }
    for (int i = 0; s_files [i]; i++) {
        if (s_join (path, sizeof path, kdir, s_files [i], err, errlen))
            return -1;
        if (access (path, R_OK)) {
            snprintf (err, errlen, "the local keys folder '%s' has no readable %s (%s): remove"
                      " the folder to have new keys made at the next start", kdir, s_files [i],
                      strerror (errno));
            return -1;
        }
    }
    s_settle_group (kdir, group);
    return made;
}

//  The folders xxl-ctl and xxl-agent look in (xxl_local.h); how many
static int
s_search (const char *configured, char dirs [2][XXL_LOCAL_DIR_MAX + 1])
{
    const char *env = getenv ("XXL_STATE_DIR");
    char err [256];
    if (configured && *configured)
        snprintf (dirs [0], XXL_LOCAL_DIR_MAX + 1, "%s", configured);
    else
    if (env && *env)
        snprintf (dirs [0], XXL_LOCAL_DIR_MAX + 1, "%s", env);
    else {
        int count = 0;
        if (s_user_dir (dirs [0], XXL_LOCAL_DIR_MAX + 1, err, sizeof err) == 0)
            count++;
        if (!count || strneq (dirs [0], XXL_LOCAL_SYSTEM_DIR))
            snprintf (dirs [count++], XXL_LOCAL_DIR_MAX + 1, "%s", XXL_LOCAL_SYSTEM_DIR);
        return count;
    }
    return 1;
}

int
xxl_local_keys_find (const char *configured, const char *name, char *cert, size_t certlen,
                     char *server, size_t serverlen, char *err, size_t errlen)
{
    char dirs [2][XXL_LOCAL_DIR_MAX + 1], kdir [XXL_CERT_PATH_MAX + 1], file [64];
    int count = s_search (configured, dirs);
    int rc = 0;
    snprintf (file, sizeof file, "%s.cert_secret", name);
    for (int i = 0; i < count; i++) {
        if (s_join (kdir, sizeof kdir, dirs [i], XXL_LOCAL_KEYS, err, errlen)
        ||  s_join (cert, certlen, kdir, file, err, errlen)
        ||  s_join (server, serverlen, kdir, "scheduler.cert", err, errlen))
            continue;
        if (access (cert, R_OK) == 0 && access (server, R_OK) == 0)
            return 1;
        //  There, and not for this user: who could read it
        struct stat st;
        bool there = errno != ENOENT;
        if (!there && (stat (kdir, &st) == 0 || errno != ENOENT))
            there = true;
        if (!there || rc)
            continue;
        const char *owner = NULL, *group = NULL;
        if (stat (kdir, &st) == 0 || stat (dirs [i], &st) == 0) {
            struct passwd *pw = st.st_uid? getpwuid (st.st_uid): NULL;
            owner = pw? pw->pw_name: NULL;
            struct group *gr = streq (name, XXL_LOCAL_AGENT) && (st.st_mode & S_IXGRP)?
                               getgrgid (st.st_gid): NULL;
            group = gr? gr->gr_name: NULL;
        }
        snprintf (err, errlen, "cannot read the local keys in %s: run as root%s%s%s%s, or"
                  " pass --cert and --scheduler-key (docs/operations.md, Security)", kdir,
                  owner? ", as user ": "", owner? owner: "", group? " or in group ": "",
                  group? group: "");
        rc = -1;
    }
    return rc;
}

int
xxl_local_agent_key (const char *configured, bool has_cert, bool has_token,
                     const char *schedulers, char *cert, size_t certlen,
                     char *server, size_t serverlen)
{
    if (has_cert || has_token || !xxl_transport_all_loopback (schedulers))
        return 0;
    char why [512];
    int found = xxl_local_keys_find (configured, XXL_LOCAL_AGENT, cert, certlen,
                                     server, serverlen, why, sizeof why);
    if (found > 0)
        zsys_info ("the local agent key %s", cert);
    else
    if (found < 0)
        zsys_warning ("%s; trying without keys", why);
    return found > 0;
}
