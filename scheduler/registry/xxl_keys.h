/*  xxl_keys.h -- the keys a scheduler lets in: its --keys folder as a table
    from public key to who holds it.

    The folder holds czmq public certificates (`xxl-ctl keygen` writes them:
    NAME.cert, ZPL text with a `metadata` section of `name`, `role`, `apps`
    and a `curve` section with `public-key`).  A file that cannot be read,
    or whose role is not admin, operator, viewer or agent, or whose name is
    empty, is left out with a warning; files ending in "_secret" and names
    starting with '.' are skipped.

    The ZAP handler (zauth, reading the same folder) decides who completes a
    handshake; this table decides what each message of a connection may do,
    and is read again when the folder changes, so that a key removed from
    the folder stops counting at once on connections already open, and a
    changed role or app list applies to the next message.

    Contracts:
    - Engine thread only.  The strings of a returned xxl_who_t stay valid
      until the next xxl_keys_refresh that reports a change.
    - xxl_keys_new returns NULL (err filled) when the folder cannot be read;
      an empty folder is valid (nobody is let in).
    - xxl_keys_refresh never loses the table: when the folder cannot be read
      it keeps the last one and returns -1.
*/

#ifndef XXL_KEYS_H_INCLUDED
#define XXL_KEYS_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>

//  Who sent a message: the key of its connection (docs/operations.md,
//  Security).  Without keys (a loopback or --insecure scheduler) every
//  peer is "local", role admin.
typedef struct {
    const char *name;                   //  the key's `name`, or "local"
    const char *role;                   //  admin, operator, viewer or agent
    const char *apps;                   //  its `apps`, comma-separated ("" none)
    const char *public_key;             //  Z85, 40 characters ("" for local)
} xxl_who_t;

typedef struct _xxl_keys_t xxl_keys_t;

xxl_keys_t *xxl_keys_new (const char *dir, char *err, size_t errlen);
void xxl_keys_destroy (xxl_keys_t **self_p);

//  Reads the folder again if anything in it changed (a file added, removed,
//  rewritten or renamed).  1 when the table changed, 0 when the folder is
//  as it was, -1 when it cannot be read (the table is kept).
int xxl_keys_refresh (xxl_keys_t *self);

//  The holder of public key (Z85), or NULL when the folder has no such key
const xxl_who_t *xxl_keys_lookup (xxl_keys_t *self, const char *public_key);

//  How many keys the table holds
size_t xxl_keys_size (xxl_keys_t *self);

//  Whether app is one of who's apps (an exact member of its comma list);
//  an agent key whose apps are "*" has every app
bool xxl_who_has_app (const xxl_who_t *who, const char *app);

#endif
