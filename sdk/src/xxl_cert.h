/*  xxl_cert.h -- xxl's keys: czmq certificate files, their names and roles.

    A key is a czmq certificate (zcert) that `xxl-ctl keygen` writes as two
    ZPL text files: NAME.cert, the public key with the key's metadata
    (name, role, apps), and NAME.cert_secret, the same with the secret key
    (mode 0600).  A scheduler, agent or client uses its own secret file
    (--cert) and the public file of the other end (--scheduler-key); the
    scheduler holds the public files of everyone it lets in.

    Contracts:
    - Loading never asserts: a missing, unreadable or malformed file, a
      key that is not 40 Z85 characters, a secret file whose public key is
      not its secret key's, each gives NULL (or -1) and the reason in err,
      naming the file.
    - xxl_cert_load_secret takes the path of the secret file; the path of
      the public file NAME.cert names its pair NAME.cert_secret (czmq's
      own convention).  xxl_cert_load_public refuses a file that holds a
      secret key: the other end's secret never leaves its host.
    In libxxl, not installed.
*/

#ifndef XXL_CERT_H_INCLUDED
#define XXL_CERT_H_INCLUDED

#include <czmq.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XXL_CERT_NAME_MAX   64          //  bytes of a key's name
#define XXL_CERT_PATH_MAX   240         //  czmq adds "_secret" in 256 bytes

//  The roles a key may have (DESIGN §8), NULL-ended: admin, operator,
//  viewer, agent
extern const char *const xxl_cert_roles [];

//  Whether name can name a key and its files: 1 to XXL_CERT_NAME_MAX of
//  letters, digits, '.', '_' and '-', not starting with '.'
bool xxl_cert_name_valid (const char *name);

//  Whether role is one of xxl_cert_roles
bool xxl_cert_role_valid (const char *role);

//  This end's certificate, public and secret key, from path (see above);
//  the caller destroys it.  NULL with the reason in err.
zcert_t *xxl_cert_load_secret (const char *path, char *err, size_t errlen);

//  The public key of the other end's public certificate at path, as 40
//  Z85 characters and a NUL into key.  0, or -1 with the reason in err.
int xxl_cert_load_public (const char *path, char key [41], char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
