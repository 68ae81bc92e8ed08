/*  xxl_cert.c -- reading xxl's keys: czmq certificate files, judged before
    use.  The files are read with zconfig, as czmq's zcert_load does, but
    every key is checked here, so a bad file is an error, not an assert
    or a certificate of zero keys.
*/

#include "xxl_cert.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXL_CERT_FILE_MAX   (64 * 1024)     //  a certificate is ~300 bytes

const char *const xxl_cert_roles [] = { "admin", "operator", "viewer", "agent", NULL };

bool
xxl_cert_name_valid (const char *name)
{
    size_t len = name? strlen (name): 0;
    if (len == 0 || len > XXL_CERT_NAME_MAX || name [0] == '.')
        return false;
    for (const char *p = name; *p; p++)
        if (!(isalnum ((unsigned char) *p) || *p == '.' || *p == '_' || *p == '-'))
            return false;
    return true;
}

bool
xxl_cert_role_valid (const char *role)
{
    for (int i = 0; role && xxl_cert_roles [i]; i++)
        if (streq (role, xxl_cert_roles [i]))
            return true;
    return false;
}

//  The ZPL tree of the certificate file at path; NULL with the reason.
//  missing (when not NULL) is set when the file does not exist.
static zconfig_t *
s_read (const char *path, bool *missing, char *err, size_t errlen)
{
    if (missing)
        *missing = false;
    if (!path || !*path) {
        snprintf (err, errlen, "no certificate file given");
        return NULL;
    }
    if (strlen (path) > XXL_CERT_PATH_MAX) {
        snprintf (err, errlen, "certificate path '%.40s...' is longer than %d bytes", path,
                  XXL_CERT_PATH_MAX);
        return NULL;
    }
    struct stat st;
    if (stat (path, &st)) {
        if (missing)
            *missing = errno == ENOENT;
        snprintf (err, errlen, "cannot read certificate '%s': %s", path, strerror (errno));
        return NULL;
    }
    if (!S_ISREG (st.st_mode) || st.st_size > XXL_CERT_FILE_MAX) {
        snprintf (err, errlen, "'%s' is not a certificate: %s", path,
                  S_ISREG (st.st_mode)? "too large": "not a file");
        return NULL;
    }
    FILE *file = fopen (path, "r");
    if (!file) {
        snprintf (err, errlen, "cannot read certificate '%s': %s", path, strerror (errno));
        return NULL;
    }
    fclose (file);
    zconfig_t *root = zconfig_load (path);
    if (!root)
        snprintf (err, errlen, "'%s' is not a certificate (not a ZPL file)", path);
    return root;
}

//  A key of the certificate (key "public-key" or "secret-key" of section
//  curve) into z85, 41 bytes: 1 when there, 0 when absent, -1 (err
//  filled) when not 40 Z85 characters
static int
s_key (zconfig_t *root, const char *path, const char *key, char *z85, char *err,
       size_t errlen)
{
    char item [32];
    snprintf (item, sizeof item, "curve/%s", key);
    const char *text = zconfig_get (root, item, NULL);
    if (!text || !*text)
        return 0;
    uint8_t binary [32];
    if (strlen (text) != 40 || !zmq_z85_decode (binary, text)) {
        snprintf (err, errlen, "'%s' is not a certificate: its %s is not 40 Z85 characters",
                  path, key);
        return -1;
    }
    memcpy (z85, text, 41);
    return 1;
}

zcert_t *
xxl_cert_load_secret (const char *path, char *err, size_t errlen)
{
    bool missing;
    zconfig_t *root = s_read (path, &missing, err, errlen);
    if (!root)
        return NULL;
    char public_txt [41], secret_txt [41];
    int has_public = s_key (root, path, "public-key", public_txt, err, errlen);
    int has_secret = has_public > 0? s_key (root, path, "secret-key", secret_txt, err, errlen): 0;
    if (has_public == 0)
        snprintf (err, errlen, "'%s' is not a certificate: it has no curve public-key", path);
    if (has_public > 0 && has_secret == 0) {
        zconfig_destroy (&root);
        size_t len = strlen (path);
        if (len >= 7 && streq (path + len - 7, "_secret")) {
            snprintf (err, errlen, "'%s' holds no secret key", path);
            return NULL;
        }
        //  A public NAME.cert: its secret pair is NAME.cert_secret
        char secret_path [XXL_CERT_PATH_MAX + 8];
        snprintf (secret_path, sizeof secret_path, "%s_secret", path);
        zcert_t *cert = xxl_cert_load_secret (secret_path, err, errlen);
        if (!cert && access (secret_path, F_OK))
            snprintf (err, errlen, "'%s' is a public certificate and there is no '%s': give"
                      " this end's secret certificate (NAME.cert_secret)", path, secret_path);
        return cert;
    }
    zcert_t *cert = NULL;
    if (has_public > 0 && has_secret > 0) {
        char derived [41];
        if (zmq_curve_public (derived, secret_txt))
            snprintf (err, errlen, "this libzmq has no CURVE support");
        else
        if (strneq (derived, public_txt))
            snprintf (err, errlen, "'%s' is not a certificate: its public key is not its"
                      " secret key's", path);
        else {
            uint8_t public_key [32], secret_key [32];
            zmq_z85_decode (public_key, public_txt);
            zmq_z85_decode (secret_key, secret_txt);
            cert = zcert_new_from (public_key, secret_key);
            memset (secret_key, 0, sizeof secret_key);
        }
    }
    //  The key's metadata (name, role, apps) comes along
    zconfig_t *metadata = cert? zconfig_locate (root, "metadata"): NULL;
    for (zconfig_t *item = metadata? zconfig_child (metadata): NULL; item;
         item = zconfig_next (item)) {
        const char *value = zconfig_value (item);
        zcert_set_meta (cert, zconfig_name (item), "%s", value? value: "");
    }
    memset (secret_txt, 0, sizeof secret_txt);
    zconfig_destroy (&root);
    return cert;
}

int
xxl_cert_load_public (const char *path, char key [41], char *err, size_t errlen)
{
    zconfig_t *root = s_read (path, NULL, err, errlen);
    if (!root)
        return -1;
    char secret_txt [41];
    int has_public = s_key (root, path, "public-key", key, err, errlen);
    int has_secret = has_public > 0? s_key (root, path, "secret-key", secret_txt, err, errlen): 0;
    memset (secret_txt, 0, sizeof secret_txt);
    zconfig_destroy (&root);
    if (has_public == 0)
        snprintf (err, errlen, "'%s' is not a certificate: it has no curve public-key", path);
    else
    if (has_secret != 0)
        snprintf (err, errlen, "'%s' holds a secret key: give the public certificate"
                  " (NAME.cert); the secret one stays on its own host", path);
    return has_public > 0 && has_secret == 0? 0: -1;
}
