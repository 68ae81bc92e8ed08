/*  xxl_ctl_keygen.c -- xxl-ctl keygen: makes a key (DESIGN §8), locally.

    `keygen NAME [--role R] [--apps A,B] [--dir D] [--force]` writes a new
    CURVE key pair as czmq certificate files: D/NAME.cert (mode 0644, the
    public key and the metadata name, role, apps) and D/NAME.cert_secret
    (mode 0600, the same with the secret key).  No scheduler is asked.

    Rules: NAME as xxl_cert_name_valid; role one of xxl_cert_roles,
    `agent` when not given; apps a comma-separated list of app names, each
    judged by the api's own rule for a group's appname (xxl_commands),
    required for an agent key (it may register for those apps only).  An
    existing file of the pair is refused unless --force.  Both files are
    created under umask 077, with O_EXCL (no following of a link put in
    their place), so the secret is never readable by others, not even for
    a moment; the public one is opened to 0644 once written.
*/

#include "xxl_ctl_cmd.h"
#include "xxl_ctl_print.h"
#include "xxl_cert.h"
#include "xxl_commands.h"

#include <czmq.h>
#include <errno.h>
#include <fcntl.h>
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
      "                         required for an agent key", CTL_STR, 0, 0, NULL, NULL },
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
    return 0;
}

//  Creates path for writing, mode 0600 (under umask 077), refusing an
//  existing file, or with force first removing it.  0, or -1 with errno.
static int
s_reserve (const char *path, bool force)
{
    if (force && unlink (path) && errno != ENOENT)
        return -1;
    int fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -1;
    close (fd);
    return 0;
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
    struct stat st;
    if (stat (dir, &st))
        return xxl_ctl_fail (self, XXL_CTL_FAILED, "cannot write keys in '%s': %s", dir,
                             strerror (errno));
    if (!S_ISDIR (st.st_mode))
        return xxl_ctl_fail (self, XXL_CTL_FAILED, "cannot write keys in '%s': not a folder",
                             dir);
    char path [XXL_CERT_PATH_MAX + 1], secret_path [XXL_CERT_PATH_MAX + 8];
    if ((size_t) snprintf (path, sizeof path, "%s/%s.cert", dir, name) >= sizeof path)
        return xxl_ctl_fail (self, XXL_CTL_FAILED, "the path of the key is longer than %d bytes",
                             XXL_CERT_PATH_MAX);
    snprintf (secret_path, sizeof secret_path, "%s_secret", path);
    zcert_t *cert = zcert_new ();
    if (!cert)
        return xxl_ctl_fail (self, XXL_CTL_FAILED, "cannot make a key: %s",
                             zmq_strerror (zmq_errno ()));
    zcert_set_meta (cert, "name", "%s", name);
    zcert_set_meta (cert, "role", "%s", role? role: "agent");
    zcert_set_meta (cert, "apps", "%s", apps? apps: "");

    //  Both files made 0600 before a byte is written; zcert_save then
    //  writes into them (and czmq's own umask dance ends at ours)
    mode_t old_mask = umask (077);
    int rc = XXL_CTL_OK;
    const char *failed = NULL;
    if (s_reserve (path, force))
        failed = path;
    else
    if (s_reserve (secret_path, force)) {
        failed = secret_path;
        int saved = errno;
        unlink (path);
        errno = saved;
    }
    if (failed) {
        if (errno == EEXIST)
            rc = xxl_ctl_fail (self, XXL_CTL_FAILED, "'%s' exists: a key named %s is there"
                               " already (--force replaces it)", failed, name);
        else
            rc = xxl_ctl_fail (self, XXL_CTL_FAILED, "cannot create '%s': %s", failed,
                               strerror (errno));
    }
    else
    if (zcert_save (cert, path) || chmod (secret_path, 0600) || chmod (path, 0644)) {
        rc = xxl_ctl_fail (self, XXL_CTL_FAILED, "cannot write the key's files in '%s': %s",
                           dir, strerror (errno));
        unlink (path);
        unlink (secret_path);
    }
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
