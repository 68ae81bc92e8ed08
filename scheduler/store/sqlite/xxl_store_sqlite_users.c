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

const xxl_store_accounts_t sq_accounts = {
    XXL_STORE_SQL_ACCOUNTS          //  the shared bodies (xxl_store_sql.c)
    .user_get = m_user_get,
    .token_find = m_token_find,
    .session_find = m_session_find,
};
