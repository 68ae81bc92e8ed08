/*  xxl_store_sql_accounts.c -- the store's shared SQL for users, tokens
    and sessions.

    Owns: the whole accounts table (xxl_store_accounts_t): each backend's
    accounts table is XXL_STORE_SQL_ACCOUNTS; and the main table's
    remembered-session methods (version 16; xxl_session.remember, schema
    step 18 of SQLite, 19 of PostgreSQL) and the first user's add
    (version 17; no schema change).
    MUST: a row read into an xxl_account_t is freed by the caller
    (xxl_account_free).
    MUST / MUST NOT / errors: the body files' contract, stated once in
    xxl_store_sql_int.h (calls only xxl_store_sql.c, below it).
*/

#include "xxl_store_sql.h"
#include "xxl_store_sql_int.h"

#include <assert.h>
#include <czmq.h>
#include <stdlib.h>
#include <string.h>

int
xs_user_add (xxl_store_t *base, const xxl_account_t *user)
{
    return xsql_exec (base,
        "INSERT INTO xxl_user (username, password, role, apps, add_time)"
        " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (username) DO NOTHING", "ssssi",
        user->name, user->hash, user->role, user->apps? user->apps: "", user->add_time);
}

int
xs_user_update (xxl_store_t *base, const char *name, const char *hash, const char *role,
                const char *apps)
{
    return xsql_exec (base,
        "UPDATE xxl_user SET password = COALESCE ($1, password), role = COALESCE ($2, role),"
        " apps = COALESCE ($3, apps) WHERE username = $4", "ssss", hash, role, apps, name);
}

int
xs_user_rm (xxl_store_t *base, const char *name)
{
    xxl_store_t *self = base;
    if (xsql_exec (self, "DELETE FROM xxl_session WHERE username = $1", "s", name) < 0)
        return -1;
    return xsql_exec (self, "DELETE FROM xxl_user WHERE username = $1", "s", name);
}

int
xs_user_encode_all (xxl_store_t *base, xxl_enc_t *enc)
{
    return xsql_encode (base, enc, 1,
        "SELECT username, role, apps, add_time AS \"addTime\" FROM xxl_user ORDER BY username",
        NULL);
}

int
xs_token_add (xxl_store_t *base, const xxl_account_t *token)
{
    return xsql_exec (base,
        "INSERT INTO xxl_token (name, hash, role, apps, add_time)"
        " VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING", "ssssi",
        token->name, token->hash, token->role, token->apps? token->apps: "", token->add_time);
}

int
xs_token_rm (xxl_store_t *base, const char *name)
{
    return xsql_exec (base, "DELETE FROM xxl_token WHERE name = $1", "s", name);
}

int
xs_token_encode_all (xxl_store_t *base, xxl_enc_t *enc)
{
    return xsql_encode (base, enc, 1,
        "SELECT name, role, apps, add_time AS \"addTime\" FROM xxl_token ORDER BY name", NULL);
}

int
xs_session_add (xxl_store_t *base, const char *id, const char *user, const char *csrf,
                int64_t now)
{
    return xs_session_add_remember (base, id, user, csrf, now, 0);
}

int
xs_session_add_remember (xxl_store_t *base, const char *id, const char *user,
                         const char *csrf, int64_t now, int remember)
{
    assert (remember == 0 || remember == 1);
    if (xsql_exec (base,
            "INSERT INTO xxl_session (id, username, csrf, add_time, seen, remember)"
            " VALUES ($1, $2, $3, $4, $4, $5)", "sssii", id, user, csrf, now,
            (int64_t) remember) < 0)
        return -1;
    return xsql_exec (base,
        "DELETE FROM xxl_session WHERE username = $1 AND id NOT IN (SELECT id FROM xxl_session"
        " WHERE username = $1 ORDER BY seen DESC, add_time DESC, id LIMIT $2)",
        "si", user, (int64_t) XXL_STORE_USER_SESSIONS) < 0? -1: 0;
}

int
xs_session_touch (xxl_store_t *base, const char *id, int64_t now)
{
    return xsql_exec (base, "UPDATE xxl_session SET seen = $1 WHERE id = $2", "is",
                   now, id) < 0? -1: 0;
}

int
xs_session_rm (xxl_store_t *base, const char *id)
{
    return xsql_exec (base, "DELETE FROM xxl_session WHERE id = $1", "s", id);
}

int
xs_user_sessions_rm (xxl_store_t *base, const char *user)
{
    return xsql_exec (base, "DELETE FROM xxl_session WHERE username = $1", "s",
                   user);
}

int64_t
xs_session_expire (xxl_store_t *base, int64_t before)
{
    return xs_session_expire_remember (base, before, before);
}

int64_t
xs_session_expire_remember (xxl_store_t *base, int64_t before, int64_t remembered_before)
{
    return xsql_exec (base, "DELETE FROM xxl_session"
                      " WHERE seen < CASE WHEN remember = 1 THEN $2 ELSE $1 END", "ii",
                      before, remembered_before);
}

//  One account row (name, hash, role, apps, add_time)
static void
s_account_read (const xxl_store_driver_t *driver, const xxl_store_row_t *row, void *arg)
{
    xxl_account_t *out = (xxl_account_t *) arg;
    out->name = driver->column_text (row, 0);
    out->hash = driver->column_text (row, 1);
    out->role = driver->column_text (row, 2);
    out->apps = driver->column_text (row, 3);
    out->add_time = driver->column_int (row, 4);
}

int
xs_user_get (xxl_store_t *base, const char *name, xxl_account_t *out)
{
    memset (out, 0, sizeof *out);
    int rows = xsql_row (base, "user_get", s_account_read, out,
        "SELECT username, password, role, apps, add_time FROM xxl_user WHERE username = $1",
        "s", name);
    return rows < 0? -1: rows == 0;
}

int
xs_token_find (xxl_store_t *base, const char *hash, xxl_account_t *out)
{
    memset (out, 0, sizeof *out);
    int rows = xsql_row (base, "token_find", s_account_read, out,
        "SELECT name, hash, role, apps, add_time FROM xxl_token WHERE hash = $1", "s", hash);
    return rows < 0? -1: rows == 0;
}

typedef struct {
    char **user;
    char **csrf;
    int64_t *seen;
    int *remember;
} s_session_t;

static void
s_session_read (const xxl_store_driver_t *driver, const xxl_store_row_t *row, void *arg)
{
    s_session_t *session = (s_session_t *) arg;
    *session->user = driver->column_text (row, 0);
    *session->csrf = driver->column_text (row, 1);
    *session->seen = driver->column_int (row, 2);
    *session->remember = driver->column_int (row, 3) == 1;
}

int
xs_session_find (xxl_store_t *base, const char *id, int64_t seen_after, char **user,
                 char **csrf, int64_t *seen)
{
    int remember;
    return xs_session_find_remember (base, id, seen_after, seen_after, user, csrf, seen,
                                     &remember);
}

int
xs_session_find_remember (xxl_store_t *base, const char *id, int64_t seen_after,
                          int64_t remembered_after, char **user, char **csrf, int64_t *seen,
                          int *remember)
{
    *user = *csrf = NULL;
    *remember = 0;
    s_session_t session = { user, csrf, seen, remember };
    int rows = xsql_row (base, "session_find", s_session_read, &session,
        "SELECT username, csrf, seen, remember FROM xxl_session WHERE id = $1"
        " AND seen >= CASE WHEN remember = 1 THEN $3 ELSE $2 END", "sii",
        id, seen_after, remembered_after);
    return rows < 0? -1: rows == 0;
}

int
xs_user_add_first (xxl_store_t *base, const xxl_account_t *user)
{
    //  (one statement: the check and the insert see the same rows, under
    //  the write lock the transaction holds)
    return xsql_exec (base,
        "INSERT INTO xxl_user (username, password, role, apps, add_time)"
        " SELECT $1, $2, $3, $4, $5 WHERE NOT EXISTS (SELECT 1 FROM xxl_user)"
        " ON CONFLICT (username) DO NOTHING", "ssssi",
        user->name, user->hash, user->role, user->apps? user->apps: "", user->add_time);
}
