/*  xxl_first_admin.h -- the first console login: user admin with a random
    password, written to the state folder for whoever may read it
    (docs/operations.md, First login), as Jenkins' initialAdminPassword.

    At a start with HTTP on (and http/initial_admin not 0), a store with no
    user at all gets user XXL_FIRST_ADMIN_USER (role admin), its password
    XXL_FIRST_ADMIN_LEN characters from the OS's random bytes
    (xxl_secret_password), stored as every password is (yescrypt), and
    written to STATE/XXL_FIRST_ADMIN_FILE: made with O_EXCL and O_NOFOLLOW,
    mode 0600 whatever the umask, before the commit that adds the user.
    Contracts:
    -   No user is ever left whose password nobody can know: the user is
        added in one transaction, only while the store has no user
        (xxl_store_user_add_first, under the write lock: of schedulers
        sharing a store one adds it, the others find a user), and that
        transaction (which also writes its audit row: USER_ADD by
        XXL_FIRST_ADMIN_WHO, role admin) is committed only once the file is
        written whole; a
        file that cannot be made (no folder, not writable, a file or link
        there already) rolls it back.
    -   The file never leaves the folder's owner: never overwritten, never
        followed through a link, never logged.
    -   The file goes once it is stale: when the scheduler that wrote it, or
        one sharing its state folder, finds user admin gone or with a hash
        the file's password does not match (while it tracks the file, at
        each xxl_first_admin_check; at a start, when admin is there and
        was added as the file was written: a file another store's
        scheduler wrote to a shared folder, or one whose admin is gone,
        is left, and said so).
    Not thread-safe: the engine's thread only.
*/

#ifndef XXL_FIRST_ADMIN_H_INCLUDED
#define XXL_FIRST_ADMIN_H_INCLUDED

#include "xxl_store.h"

#define XXL_FIRST_ADMIN_USER    "admin"
#define XXL_FIRST_ADMIN_FILE    "initial-admin-password"
#define XXL_FIRST_ADMIN_WHO     "first-login"   //  who added it, in the audit
#define XXL_FIRST_ADMIN_LEN     24              //  characters: 138 bits
#define XXL_FIRST_ADMIN_HASH    256             //  bytes of a hash tracked
#define XXL_FIRST_ADMIN_MADE_MS 10000           //  a file's time and its admin's add
                                                //  time at most this far apart
#define XXL_FIRST_ADMIN_PATH    256             //  bytes of the file's path (a state
                                                //  folder has at most XXL_LOCAL_DIR_MAX)

typedef struct {
    char path [XXL_FIRST_ADMIN_PATH];           //  STATE/XXL_FIRST_ADMIN_FILE ("": none)
    char hash [XXL_FIRST_ADMIN_HASH];           //  admin's hash while the file holds
                                                //  its password ("": not tracked)
} xxl_first_admin_t;

//  What xxl_first_admin_start did
typedef enum {
    XXL_FIRST_ADMIN_NONE,                       //  a user exists, no file here
    XXL_FIRST_ADMIN_MADE,                       //  admin made, its password in the file
    XXL_FIRST_ADMIN_KEPT,                       //  the file holds admin's password
    XXL_FIRST_ADMIN_STALE,                      //  it did not: removed
    XXL_FIRST_ADMIN_LEFT                        //  it did not, and was not written with
                                                //  this store's admin: left
} xxl_first_admin_did_t;

//  At a start, with dir the state folder (NULL: none could be had): as
//  above.  Fills self (tracking the file when MADE or KEPT).  The outcome,
//  or -1 with the reason in why: no user made (the store has none, and
//  the folder is missing or the file cannot be made), or the store or the
//  file cannot be read.
int xxl_first_admin_start (xxl_first_admin_t *self, xxl_store_t *store, const char *dir,
                           int64_t now, char *why, size_t whylen);

//  While the file is tracked: whether user admin still has the hash it
//  had.  1 not any more (the user is gone or has a new password): the file
//  is no longer tracked, and removed if it still holds the password of
//  that hash (a file written there since, by another store's scheduler
//  sharing the folder, stays); 0 unchanged, or nothing tracked; -1
//  the store cannot be read (it is tried again at the next call)
int xxl_first_admin_check (xxl_first_admin_t *self, xxl_store_t *store);

#endif
