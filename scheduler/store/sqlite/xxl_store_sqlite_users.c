/*  xxl_store_sqlite_users.c -- the SQLite backend's users, bearer tokens
    and sessions (xxl_store_accounts_t in xxl_store.h; schema step 9).
*/

#include "xxl_store_sqlite_int.h"

//  Reads one account row (name, hash, role, apps, add_time) of stmt bound
//  by the caller: 0 and *out, 1 none, -1
static int
s_account_row (store_t *self, sqlite3_stmt *stmt, xxl_account_t *out, const char *what)
{
    memset (out, 0, sizeof *out);
    int rc = sqlite3_step (stmt);
    if (rc == SQLITE_ROW) {
        out->name = sq_column_text (stmt, 0);
        out->hash = sq_column_text (stmt, 1);
        out->role = sq_column_text (stmt, 2);
        out->apps = sq_column_text (stmt, 3);
        out->add_time = sqlite3_column_int64 (stmt, 4);
        sqlite3_reset (stmt);
        return 0;
    }
    sqlite3_reset (stmt);
    return rc == SQLITE_DONE? 1: sq_fail (self, what);
}

static int
m_user_add (xxl_store_t *base, const xxl_account_t *user)
{
    return sq_exec ((store_t *) base,
        "INSERT INTO xxl_user (username, password, role, apps, add_time)"
        " VALUES (?, ?, ?, ?, ?) ON CONFLICT (username) DO NOTHING", "ssssi",
        user->name, user->hash, user->role, user->apps? user->apps: "", user->add_time);
}

static int
m_user_update (xxl_store_t *base, const char *name, const char *hash, const char *role,
               const char *apps)
{
    return sq_exec ((store_t *) base,
        "UPDATE xxl_user SET password = COALESCE (?, password), role = COALESCE (?, role),"
        " apps = COALESCE (?, apps) WHERE username = ?", "ssss", hash, role, apps, name);
}

static int
m_user_get (xxl_store_t *base, const char *name, xxl_account_t *out)
{
    store_t *self = (store_t *) base;
    sqlite3_stmt *stmt = sq_prepare (self,
        "SELECT username, password, role, apps, add_time FROM xxl_user WHERE username = ?");
    if (!stmt || sq_bind (self, stmt, "s", name)) {
        memset (out, 0, sizeof *out);
        return -1;
    }
    return s_account_row (self, stmt, out, "user_get");
}

static int
m_user_rm (xxl_store_t *base, const char *name)
{
    store_t *self = (store_t *) base;
    if (sq_exec (self, "DELETE FROM xxl_session WHERE username = ?", "s", name) < 0)
        return -1;
    return sq_exec (self, "DELETE FROM xxl_user WHERE username = ?", "s", name);
}

static int
m_user_encode_all (xxl_store_t *base, xxl_enc_t *enc)
{
    return sq_encode ((store_t *) base, enc, 1,
        "SELECT username, role, apps, add_time AS addTime FROM xxl_user ORDER BY username",
        NULL);
}

static int
m_token_add (xxl_store_t *base, const xxl_account_t *token)
{
    return sq_exec ((store_t *) base,
        "INSERT INTO xxl_token (name, hash, role, apps, add_time)"
        " VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING", "ssssi",
        token->name, token->hash, token->role, token->apps? token->apps: "", token->add_time);
}

static int
m_token_find (xxl_store_t *base, const char *hash, xxl_account_t *out)
{
    store_t *self = (store_t *) base;
    sqlite3_stmt *stmt = sq_prepare (self,
        "SELECT name, hash, role, apps, add_time FROM xxl_token WHERE hash = ?");
    if (!stmt || sq_bind (self, stmt, "s", hash)) {
        memset (out, 0, sizeof *out);
        return -1;
    }
    return s_account_row (self, stmt, out, "token_find");
}

static int
m_token_rm (xxl_store_t *base, const char *name)
{
    return sq_exec ((store_t *) base, "DELETE FROM xxl_token WHERE name = ?", "s", name);
}

static int
m_token_encode_all (xxl_store_t *base, xxl_enc_t *enc)
{
    return sq_encode ((store_t *) base, enc, 1,
        "SELECT name, role, apps, add_time AS addTime FROM xxl_token ORDER BY name", NULL);
}

static int
m_session_add (xxl_store_t *base, const char *id, const char *user, const char *csrf,
               int64_t now)
{
    if (sq_exec ((store_t *) base,
            "INSERT INTO xxl_session (id, username, csrf, add_time, seen) VALUES (?, ?, ?, ?, ?)",
            "sssii", id, user, csrf, now, now) < 0)
        return -1;
    return sq_exec ((store_t *) base,
        "DELETE FROM xxl_session WHERE username = ? AND id NOT IN (SELECT id FROM xxl_session"
        " WHERE username = ? ORDER BY seen DESC, add_time DESC, id LIMIT ?)",
        "ssi", user, user, (int64_t) XXL_STORE_USER_SESSIONS) < 0? -1: 0;
}

static int
m_session_find (xxl_store_t *base, const char *id, int64_t seen_after, char **user,
                char **csrf, int64_t *seen)
{
    store_t *self = (store_t *) base;
    *user = *csrf = NULL;
    sqlite3_stmt *stmt = sq_prepare (self,
        "SELECT username, csrf, seen FROM xxl_session WHERE id = ? AND seen >= ?");
    if (!stmt || sq_bind (self, stmt, "si", id, seen_after))
        return -1;
    int rc = sqlite3_step (stmt);
    if (rc == SQLITE_ROW) {
        *user = sq_column_text (stmt, 0);
        *csrf = sq_column_text (stmt, 1);
        *seen = sqlite3_column_int64 (stmt, 2);
        sqlite3_reset (stmt);
        return 0;
    }
    sqlite3_reset (stmt);
    return rc == SQLITE_DONE? 1: sq_fail (self, "session_find");
}

static int
m_session_touch (xxl_store_t *base, const char *id, int64_t now)
{
    return sq_exec ((store_t *) base, "UPDATE xxl_session SET seen = ? WHERE id = ?", "is",
                    now, id) < 0? -1: 0;
}

static int
m_session_rm (xxl_store_t *base, const char *id)
{
    return sq_exec ((store_t *) base, "DELETE FROM xxl_session WHERE id = ?", "s", id);
}

static int
m_user_sessions_rm (xxl_store_t *base, const char *user)
{
    return sq_exec ((store_t *) base, "DELETE FROM xxl_session WHERE username = ?", "s", user);
}

static int64_t
m_session_expire (xxl_store_t *base, int64_t before)
{
    return sq_exec ((store_t *) base, "DELETE FROM xxl_session WHERE seen < ?", "i", before);
}

const xxl_store_accounts_t sq_accounts = {
    .user_add = m_user_add,
    .user_update = m_user_update,
    .user_get = m_user_get,
    .user_rm = m_user_rm,
    .user_encode_all = m_user_encode_all,
    .token_add = m_token_add,
    .token_find = m_token_find,
    .token_rm = m_token_rm,
    .token_encode_all = m_token_encode_all,
    .session_add = m_session_add,
    .session_find = m_session_find,
    .session_touch = m_session_touch,
    .session_rm = m_session_rm,
    .user_sessions_rm = m_user_sessions_rm,
    .session_expire = m_session_expire,
};
