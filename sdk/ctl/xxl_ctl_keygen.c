/*  xxl_ctl_keygen.c -- xxl-ctl keygen: makes a key (DESIGN §8), locally.

    `keygen NAME [--role R] [--apps A,B] [--dir D] [--force]` writes a new
    CURVE key pair as czmq certificate files: D/NAME.cert (mode 0644, the
    public key and the metadata name, role, apps) and D/NAME.cert_secret
    (mode 0600, the same with the secret key).  No scheduler is asked.

    Rules: NAME as xxl_cert_name_valid; role one of xxl_cert_roles,
    `agent` when not given; apps a comma-separated list of app names, each
    judged by the api's own rule for a group's appname (xxl_commands),
    required for an agent key (it may register for those apps only) and
    an operator key (it acts on those apps' jobs only); a
    viewer or operator key with apps reads only those apps' groups, jobs,
    GLUE sources and runs (scheduler/access/xxl_access.c).  An
    existing file of the pair (a link too) is refused unless --force.

    No path in D that another writer of D could replace is ever opened:
    the pair is written into a private folder made in D (mkdtemp, 0700,
    ours, entered by its descriptor), under umask 077, so the secret is
    never readable by others, not even for a moment; the public one is
    set to 0644 there.  Each file is then moved into D by name: without
    --force with RENAME_NOREPLACE (or link, on a file system without it),
    which fails on anything at that name, a link included; with --force
    with rename, which replaces a file or a link itself, atomically.  The
    secret goes first, and when the public one cannot follow it is taken
    back.  The private folder is removed on every path.
*/

#define _GNU_SOURCE

#include "xxl_ctl_cmd.h"
#include "xxl_ctl_print.h"
#include "xxl_cert.h"
#include "xxl_commands.h"

#include <czmq.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static const ctl_pos_t s_keygen_pos [] = { { "NAME", CTL_STR, NULL } };

static const ctl_choice_t s_roles [] = {
    { "admin", 0 }, { "operator", 1 }, { "viewer", 2 }, { "agent", 3 }, { NULL, 0 }
};

static const ctl_opt_t s_keygen_opts [] = {
    { "--role", NULL, "ROLE", "admin, operator, viewer or agent (default agent)",
      CTL_ENUM, 0, 0, NULL, s_roles },
    { "--apps", NULL, "A,B", "the apps the key may act on (an agent key: register for);\n"
      "                         required for an agent or operator key; a viewer's or\n"
      "                         operator's reads are limited to them too (a viewer\n"
      "                         without them reads all)",
      CTL_STR, 0, 0, NULL, NULL },
    { "--dir", NULL, "DIR", "the folder to write the files in (default .)", CTL_STR, 0, 0,
      NULL, NULL },
    { "--force", NULL, NULL, "replace the files of an existing key of that name", CTL_BOOL,
      0, 0, NULL, NULL },
    XXL_CTL_OPTS_END
};

//  Judges a comma-separated list of app names: 0, or the usage error
static int
s_check_apps (ctl_t *self, const ctl_cmd_t *cmd, const char *apps)
{
    const xxl_field_t *appname = xxl_command_field (xxl_command_find ("GROUP_ADD"), "appname");
    assert (appname && appname->check);
    char *list = strdup (apps), *save = NULL;
    int rc = 0, count = 0;
    for (char *app = strtok_r (list, ",", &save); app && !rc; app = strtok_r (NULL, ",", &save)) {
        char why [512];
        count++;
        if (strlen (app) > (size_t) appname->max)
            rc = xxl_ctl_usage_error (self, cmd, "--apps: app name '%.40s...' is longer than"
                                      " %d bytes", app, (int) appname->max);
        else
        if (appname->check (app, why, sizeof why))
            rc = xxl_ctl_usage_error (self, cmd, "--apps: %s", why);
    }
    //  (strtok_r skips empty items: ",a", "a,,b" and "," are refused here)
    if (!rc && (!count || apps [0] == ',' || apps [strlen (apps) - 1] == ','
                || strstr (apps, ",,")))
        rc = xxl_ctl_usage_error (self, cmd, "--apps must be a comma-separated list of app"
                                  " names, not '%s'", apps);
    free (list);
    return rc;
}

static int
s_keygen_check (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    const char *name = args->pos [0];
    if (!xxl_cert_name_valid (name))
        return xxl_ctl_usage_error (self, cmd, "NAME must be 1 to %d letters, digits, '.', '_'"
                                    " or '-', not starting with '.', not '%s'",
                                    XXL_CERT_NAME_MAX, name);
    const char *role = xxl_ctl_args_get (cmd, args, "--role");
    const char *apps = xxl_ctl_args_get (cmd, args, "--apps");
    if (apps)
        return s_check_apps (self, cmd, apps);
    if (!role || streq (role, "agent"))
        return xxl_ctl_usage_error (self, cmd, "an agent key needs --apps: the apps it may"
                                    " register for");
    if (streq (role, "operator"))
        return xxl_ctl_usage_error (self, cmd, "an operator key needs --apps: the apps of the"
                                    " jobs it acts on (a viewer key without apps reads every"
                                    " app)");
    return 0;
}

//  Sets the mode of file `name` in folder tmp_fd (a regular file, never
//  a link) and checks it took.  0, or -1 with errno.
static int
s_set_mode (int tmp_fd, const char *name, mode_t mode)
{
    int fd = openat (tmp_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    int rc = fchmod (fd, mode) || fstat (fd, &st)? -1: 0;
    if (!rc && (!S_ISREG (st.st_mode) || (st.st_mode & 07777) != mode)) {
        errno = EPERM;
        rc = -1;
    }
    int saved = errno;
    close (fd);
    errno = saved;
    return rc;
}

//  Moves file `name` from folder tmp_fd into dir_fd: replacing whatever
//  is there when force, else failing with EEXIST on anything there (a
//  link included).  0, or -1 with errno.
static int
s_place (int tmp_fd, int dir_fd, const char *name, bool force)
{
    if (force)
        return renameat (tmp_fd, name, dir_fd, name);
    if (renameat2 (tmp_fd, name, dir_fd, name, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS)
        return -1;
    //  (a file system without RENAME_NOREPLACE: link fails on anything there)
    if (linkat (tmp_fd, name, dir_fd, name, 0))
        return -1;
    unlinkat (tmp_fd, name, 0);
    return 0;
}

//  Takes file `name` back from dir_fd into tmp_fd when it is still the one
//  placed there (same inode), so that the private folder's removal ends it
static void
s_take_back (int tmp_fd, int dir_fd, const char *name, const struct stat *placed)
{
    struct stat st;
    if (fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0
    &&  st.st_dev == placed->st_dev && st.st_ino == placed->st_ino)
        renameat (dir_fd, name, tmp_fd, name);
}

//  Writes the pair into the private folder tmp_fd (zcert_save by names
//  relative to it: the working folder is tmp_fd meanwhile), sets their
//  modes, and moves them into dir_fd.  0, or -1 with errno and *failed
//  the file it failed on (NULL: writing them).
static int
s_write_pair (zcert_t *cert, int tmp_fd, int dir_fd, const char *public_name,
              const char *secret_name, bool force, const char **failed)
{
    *failed = NULL;
    int cwd_fd = open (".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (cwd_fd < 0)
        return -1;
    int rc = fchdir (tmp_fd);
    if (rc == 0) {
        rc = zcert_save (cert, public_name);
        int saved = errno;
        if (fchdir (cwd_fd))
            rc = -1;                    //  (cannot happen: the folder is held open)
        else
            errno = saved;
    }
    close (cwd_fd);
    if (rc || s_set_mode (tmp_fd, secret_name, 0600) || s_set_mode (tmp_fd, public_name, 0644))
        return -1;

    struct stat placed;
    if (fstatat (tmp_fd, secret_name, &placed, AT_SYMLINK_NOFOLLOW)
    ||  s_place (tmp_fd, dir_fd, secret_name, force)) {
        *failed = secret_name;
        return -1;
    }
    if (s_place (tmp_fd, dir_fd, public_name, force)) {
        *failed = public_name;
        int saved = errno;
        s_take_back (tmp_fd, dir_fd, secret_name, &placed);
        errno = saved;
        return -1;
    }
    return 0;
}

//  The first of the pair that is there already (a link too), or NULL
static const char *
s_existing (int dir_fd, const char *public_name, const char *secret_name)
{
    struct stat st;
    if (fstatat (dir_fd, public_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
        return public_name;
    if (fstatat (dir_fd, secret_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
        return secret_name;
    return NULL;
}

//  Prints {"name", "role", "apps", "publicKey", "cert", "secret"}
static int
s_print_json (ctl_t *self, zcert_t *cert, const char *path, const char *secret_path)
{
    xxl_enc_t *enc = xxl_enc_new ();
    if (!enc)
        return -1;
    xxl_enc_map_begin (enc);
    xxl_enc_kstr (enc, "name", zcert_meta (cert, "name"));
    xxl_enc_kstr (enc, "role", zcert_meta (cert, "role"));
    xxl_enc_kstr (enc, "apps", zcert_meta (cert, "apps"));
    xxl_enc_kstr (enc, "publicKey", zcert_public_txt (cert));
    xxl_enc_kstr (enc, "cert", path);
    xxl_enc_kstr (enc, "secret", secret_path);
    xxl_enc_map_end (enc);
    size_t size;
    const void *data = xxl_enc_finish (enc, &size);
    msgpack_unpacked unpacked;
    msgpack_unpacked_init (&unpacked);
    int rc = msgpack_unpack_next (&unpacked, (const char *) data, size, NULL)
             == MSGPACK_UNPACK_SUCCESS? xxl_ctl_print_json (self, &unpacked.data): -1;
    msgpack_unpacked_destroy (&unpacked);
    xxl_enc_destroy (&enc);
    return rc;
}

static int
s_keygen (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    const char *name = args->pos [0];
    const char *role = xxl_ctl_args_get (cmd, args, "--role");
    const char *apps = xxl_ctl_args_get (cmd, args, "--apps");
    const char *dir = xxl_ctl_args_get (cmd, args, "--dir");
    bool force = xxl_ctl_args_get (cmd, args, "--force") != NULL;
    if (!dir || !*dir)
        dir = ".";
    char path [XXL_CERT_PATH_MAX + 1], secret_path [XXL_CERT_PATH_MAX + 8];
    if ((size_t) snprintf (path, sizeof path, "%s/%s.cert", dir, name) >= sizeof path)
        return xxl_ctl_fail (self, XXL_CTL_FAILED, "the path of the key is longer than %d bytes",
                             XXL_CERT_PATH_MAX);
    snprintf (secret_path, sizeof secret_path, "%s_secret", path);
    //  (names in dir: NAME as xxl_cert_name_valid holds no '/')
    const char *public_name = path + strlen (dir) + 1;
    const char *secret_name = secret_path + strlen (dir) + 1;
    int dir_fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd < 0)
        return xxl_ctl_fail (self, XXL_CTL_FAILED, "cannot write keys in '%s': %s", dir,
                             errno == ENOTDIR? "not a folder": strerror (errno));
    const char *there = force? NULL: s_existing (dir_fd, public_name, secret_name);
    if (there) {
        close (dir_fd);
        return xxl_ctl_fail (self, XXL_CTL_FAILED, "'%s/%s' exists: a key named %s is there"
                             " already (--force replaces it)", dir, there, name);
    }
    zcert_t *cert = zcert_new ();
    if (!cert) {
        close (dir_fd);
        return xxl_ctl_fail (self, XXL_CTL_FAILED, "cannot make a key: %s",
                             zmq_strerror (zmq_errno ()));
    }
    zcert_set_meta (cert, "name", "%s", name);
    zcert_set_meta (cert, "role", "%s", role? role: "agent");
    zcert_set_meta (cert, "apps", "%s", apps? apps: "");

    //  The private folder: made 0700 by mkdtemp, then held by a descriptor
    //  that must be that folder (ours, 0700, not a link put in its place).
    //  Under umask 077 zcert_save creates both files 0600 in it (czmq's
    //  own umask dance ends at ours)
    mode_t old_mask = umask (077);
    int rc = XXL_CTL_OK;
    char tmp_path [XXL_CERT_PATH_MAX + 32];
    snprintf (tmp_path, sizeof tmp_path, "%s/.%s.keygen-XXXXXX", dir, name);
    const char *tmp_name = tmp_path + strlen (dir) + 1;
    int tmp_fd = -1;
    struct stat st;
    if (!mkdtemp (tmp_path))
        rc = xxl_ctl_fail (self, XXL_CTL_FAILED, "cannot write keys in '%s': %s", dir,
                           strerror (errno));
    else {
        tmp_fd = openat (dir_fd, tmp_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (tmp_fd < 0 || fstat (tmp_fd, &st) || st.st_uid != geteuid ()
        ||  (st.st_mode & 07777) != 0700) {
            rc = xxl_ctl_fail (self, XXL_CTL_FAILED, "cannot write keys in '%s': its"
                               " private folder '%s' was replaced", dir, tmp_path);
            if (tmp_fd >= 0)
                close (tmp_fd);
            tmp_fd = -1;                //  (not ours: left alone)
        }
    }
    if (tmp_fd >= 0) {
        const char *failed;
        if (s_write_pair (cert, tmp_fd, dir_fd, public_name, secret_name, force, &failed)) {
            if (failed && errno == EEXIST)
                rc = xxl_ctl_fail (self, XXL_CTL_FAILED, "'%s/%s' exists: a key named %s is"
                                   " there already (--force replaces it)", dir, failed, name);
            else
            if (failed)
                rc = xxl_ctl_fail (self, XXL_CTL_FAILED, "cannot move '%s' into '%s': %s",
                                   failed, dir, strerror (errno));
            else
                rc = xxl_ctl_fail (self, XXL_CTL_FAILED, "cannot write the key's files in"
                                   " '%s': %s", tmp_path, strerror (errno));
        }
        unlinkat (tmp_fd, public_name, 0);
        unlinkat (tmp_fd, secret_name, 0);
        close (tmp_fd);
        if (unlinkat (dir_fd, tmp_name, AT_REMOVEDIR))
            fprintf (self->err, "xxl-ctl: warning: cannot remove '%s': %s\n", tmp_path,
                     strerror (errno));
    }
    close (dir_fd);
    umask (old_mask);
    if (rc == XXL_CTL_OK) {
        if (self->json) {
            if (s_print_json (self, cert, path, secret_path))
                rc = xxl_ctl_fail (self, XXL_CTL_FAILED, "out of memory");
        }
        else
            fprintf (self->out,
                     "public certificate: %s\n"
                     "    (for the scheduler's keys folder; an agent or xxl-ctl of the\n"
                     "     scheduler's key takes it as --scheduler-key)\n"
                     "secret certificate: %s\n"
                     "    (mode 0600: this key's --cert; keep it on its own host only)\n"
                     "public key: %s\n", path, secret_path, zcert_public_txt (cert));
    }
    zcert_destroy (&cert);
    return rc;
}

const ctl_cmd_t xxl_ctl_keygen = {
    "keygen", NULL, "NAME [--role ROLE] [--apps A,B] [--dir DIR] [--force]",
    "make a key: DIR/NAME.cert and DIR/NAME.cert_secret (locally)", s_keygen_opts,
    s_keygen_pos, 1, 1, s_keygen_check, s_keygen, NULL, NULL
};
