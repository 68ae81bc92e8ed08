/*  xxl_first_admin.c -- the first console user and its password file.
    See xxl_first_admin.h.
*/

#include "xxl_first_admin.h"
#include "xxl_secret.h"

#include <czmq.h>
#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

//  The users the store has; -1
static int
s_user_count (xxl_store_t *store)
{
    xxl_enc_t *enc = xxl_enc_new ();
    if (!enc)
        return -1;
    xxl_enc_map_begin (enc);
    xxl_enc_key (enc, "users");
    int count = xxl_store_user_encode_all (store, enc);
    xxl_enc_destroy (&enc);
    return count;
}

//  Writes text whole to a new file path, mode 0600: never one that exists,
//  never through a link; 0, or -1 with the reason (nothing left behind)
static int
s_write_new (const char *path, const char *text, char *why, size_t whylen)
{
    int fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        if (errno == EEXIST)
            snprintf (why, whylen, "%s exists already (left from an earlier store, or another"
                      " store's scheduler shares this state folder?): remove it once no one needs"
                      " it and start again to have user %s made, or add a user with xxl-ctl user"
                      " add", path, XXL_FIRST_ADMIN_USER);
        else
            snprintf (why, whylen, "cannot make %s: %s", path, strerror (errno));
        return -1;
    }
    size_t size = strlen (text), done = 0;
    //  (the umask may have taken bits away, never added: 0600 is exact)
    int rc = fchmod (fd, 0600);
    while (rc == 0 && done < size) {
        ssize_t wrote = write (fd, text + done, size - done);
        if (wrote < 0 && errno != EINTR)
            rc = -1;
        done += wrote > 0? (size_t) wrote: 0;
    }
    if (rc == 0)
        rc = fsync (fd);
    int err = errno;
    if (close (fd) && rc == 0) {
        rc = -1;
        err = errno;
    }
    //  The file's name is durable before the commit that adds the user
    //  (its folder synced): a power loss leaves no user without its file
    if (rc == 0) {
        char dir [XXL_FIRST_ADMIN_PATH];
        snprintf (dir, sizeof dir, "%s", path);
        char *slash = strrchr (dir, '/');
        if (slash)
            *(slash == dir? slash + 1: slash) = 0;
        int dirfd = open (slash? dir: ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dirfd < 0 || fsync (dirfd)) {
            rc = -1;
            err = errno;
        }
        if (dirfd >= 0)
            close (dirfd);
    }
    if (rc) {
        unlink (path);
        snprintf (why, whylen, "cannot write %s: %s", path, strerror (err));
    }
    return rc;
}

//  The password in file path (its first line) into out, and the time it
//  was written (epoch ms) into *mtime unless NULL; 1, 0 no file, -1 with
//  the reason (a link, not a regular file, unreadable)
static int
s_read (const char *path, char *out, size_t outlen, int64_t *mtime, char *why,
        size_t whylen)
{
    int fd = open (path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0 && errno == ENOENT)
        return 0;
    struct stat st;
    ssize_t got = -1;
    if (fd >= 0 && fstat (fd, &st) == 0 && S_ISREG (st.st_mode)) {
        got = read (fd, out, outlen - 1);
        if (mtime)
            *mtime = (int64_t) st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
    }
    else
    if (fd >= 0)
        errno = EINVAL;
    int err = errno;
    if (fd >= 0)
        close (fd);
    if (got < 0) {
        snprintf (why, whylen, "cannot read %s: %s", path,
                  err == ELOOP || err == EINVAL? "not a regular file": strerror (err));
        return -1;
    }
    out [got] = 0;
    out [strcspn (out, "\r\n")] = 0;
    return 1;
}

//  Makes the user and the file (the store has no user, as last read).
//  MADE, NONE (another scheduler made a user first), or -1
static int
s_make (xxl_first_admin_t *self, xxl_store_t *store, int64_t now, char *why, size_t whylen)
{
    char password [XXL_FIRST_ADMIN_LEN + 2];
    if (xxl_secret_password (password, XXL_FIRST_ADMIN_LEN)) {
        snprintf (why, whylen, "no random bytes from the OS");
        return -1;
    }
    char *hash = xxl_secret_hash_password (password);
    if (!hash || strlen (hash) >= sizeof self->hash) {
        explicit_bzero (password, sizeof password);
        free (hash);
        snprintf (why, whylen, "cannot hash a password (libcrypt)");
        return -1;
    }
    xxl_account_t user = { .name = XXL_FIRST_ADMIN_USER, .hash = hash, .role = "admin",
                           .apps = "", .add_time = now };
    int rc = xxl_store_begin (store)? -1: xxl_store_user_add_first (store, &user);
    //  (in the audit as an admin's USER_ADD, by XXL_FIRST_ADMIN_WHO)
    xxl_audit_t row = { .time = now, .who = XXL_FIRST_ADMIN_WHO, .role = "admin",
                        .type = "USER_ADD", .target = 0, .code = 200 };
    if (rc == 1 && xxl_store_audit_add (store, &row))
        rc = -1;
    if (rc < 0)
        snprintf (why, whylen, "%s", xxl_store_error (store));
    if (rc == 1) {
        strcat (password, "\n");
        if (s_write_new (self->path, password, why, whylen))
            rc = -1;
        else
        if (xxl_store_commit (store)) {
            snprintf (why, whylen, "%s", xxl_store_error (store));
            unlink (self->path);
            rc = -1;
        }
        else {
            snprintf (self->hash, sizeof self->hash, "%s", hash);
            rc = XXL_FIRST_ADMIN_MADE;
        }
    }
    if (rc != XXL_FIRST_ADMIN_MADE && xxl_store_in_txn (store))
        xxl_store_rollback (store);
    explicit_bzero (password, sizeof password);
    free (hash);
    return rc == 0? XXL_FIRST_ADMIN_NONE: rc;
}

//  A store with users and a file: KEPT when the file holds admin's
//  password; STALE (removed) when it does not but was written as this
//  store's admin was added (within XXL_FIRST_ADMIN_MADE_MS of its add
//  time): admin has a new password; else LEFT (admin is gone, or the file
//  is another store's, whose scheduler shares the folder); -1
static int
s_judge (xxl_first_admin_t *self, xxl_store_t *store, char *why, size_t whylen)
{
    char password [1100];
    int64_t mtime = 0;
    int rc = s_read (self->path, password, sizeof password, &mtime, why, whylen);
    if (rc <= 0)
        return rc < 0? -1: XXL_FIRST_ADMIN_NONE;
    xxl_account_t admin = { 0 };
    rc = xxl_store_user_get (store, XXL_FIRST_ADMIN_USER, &admin);
    if (rc < 0)
        snprintf (why, whylen, "%s", xxl_store_error (store));
    else
    if (rc == 0 && xxl_secret_check_password (password, admin.hash)
    &&  strlen (admin.hash) < sizeof self->hash) {
        snprintf (self->hash, sizeof self->hash, "%s", admin.hash);
        rc = XXL_FIRST_ADMIN_KEPT;
    }
    else
    if (rc == 0 && llabs (mtime - admin.add_time) <= XXL_FIRST_ADMIN_MADE_MS) {
        unlink (self->path);
        rc = XXL_FIRST_ADMIN_STALE;
    }
    else
        rc = XXL_FIRST_ADMIN_LEFT;
    explicit_bzero (password, sizeof password);
    xxl_account_free (&admin);
    return rc;
}

int
xxl_first_admin_start (xxl_first_admin_t *self, xxl_store_t *store, const char *dir,
                       int64_t now, char *why, size_t whylen)
{
    assert (self && store);
    memset (self, 0, sizeof *self);
    *why = 0;
    if (dir && snprintf (self->path, sizeof self->path, "%s/%s", dir,
                         XXL_FIRST_ADMIN_FILE) >= (int) sizeof self->path) {
        snprintf (why, whylen, "the state folder's path is too long");
        return -1;
    }
    int users = s_user_count (store);
    if (users < 0) {
        snprintf (why, whylen, "cannot read the users: %s", xxl_store_error (store));
        return -1;
    }
    if (users == 0 && !dir) {
        snprintf (why, whylen, "no state folder for its password");
        return -1;
    }
    int rc = users == 0? s_make (self, store, now, why, whylen): XXL_FIRST_ADMIN_NONE;
    //  (a user there, or made by another scheduler in the meantime: the
    //  file here, if any, is judged)
    if (rc == XXL_FIRST_ADMIN_NONE && dir)
        rc = s_judge (self, store, why, whylen);
    return rc;
}

//  Removes the file at path when it holds the password of hash: the one
//  this scheduler wrote or kept.  A file made there since (by a scheduler
//  of another store sharing the state folder, once this one's was
//  removed by hand) holds another password and stays.
static void
s_remove_if_holds (const char *path, const char *hash)
{
    char password [1100], why [512];
    if (s_read (path, password, sizeof password, NULL, why, sizeof why) == 1
    &&  xxl_secret_check_password (password, hash))
        unlink (path);
    explicit_bzero (password, sizeof password);
}

int
xxl_first_admin_check (xxl_first_admin_t *self, xxl_store_t *store)
{
    if (!*self->hash)
        return 0;
    xxl_account_t admin = { 0 };
    int rc = xxl_store_user_get (store, XXL_FIRST_ADMIN_USER, &admin);
    bool same = rc == 0 && streq (admin.hash, self->hash);
    xxl_account_free (&admin);
    if (rc < 0)
        return -1;
    if (same)
        return 0;
    s_remove_if_holds (self->path, self->hash);
    self->hash [0] = 0;
    return 1;
}
