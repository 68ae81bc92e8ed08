/*  xxl_store_pg_users.c -- the PostgreSQL backend's users, bearer tokens
    and sessions (xxl_store_accounts_t in xxl_store.h; schema step 9).
*/

#include "xxl_store_pg_int.h"

//  One account row (name, hash, role, apps, add_time) of result: 0 and
//  *out, 1 none, -1 (result NULL); clears result
static int
s_account_row (PGresult *result, xxl_account_t *out)
{
    memset (out, 0, sizeof *out);
    if (!result)
        return -1;
    int rc = 1;
    if (PQntuples (result) > 0) {
        out->name = pgx_string (result, 0, 0);
        out->hash = pgx_string (result, 0, 1);
        out->role = pgx_string (result, 0, 2);
        out->apps = pgx_string (result, 0, 3);
        out->add_time = pgx_int (result, 0, 4);
        rc = 0;
    }
    PQclear (result);
    return rc;
}

static int
m_user_add (xxl_store_t *base, const xxl_account_t *user)
{
    return pgx_exec ((store_t *) base,
        "INSERT INTO xxl_user (username, password, role, apps, add_time)"
        " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (username) DO NOTHING", "ssssi",
        user->name, user->hash, user->role, user->apps? user->apps: "", user->add_time);
}

static int
m_user_update (xxl_store_t *base, const char *name, const char *hash, const char *role,
               const char *apps)
{
    return pgx_exec ((store_t *) base,
        "UPDATE xxl_user SET password = COALESCE ($1, password), role = COALESCE ($2, role),"
        " apps = COALESCE ($3, apps) WHERE username = $4", "ssss", hash, role, apps, name);
}

static int
m_user_get (xxl_store_t *base, const char *name, xxl_account_t *out)
{
    return s_account_row (pgx_run ((store_t *) base, PGX_READ,
        "SELECT username, password, role, apps, add_time FROM xxl_user WHERE username = $1",
        "s", name), out);
}

static int
m_user_rm (xxl_store_t *base, const char *name)
{
    store_t *self = (store_t *) base;
    if (pgx_exec (self, "DELETE FROM xxl_session WHERE username = $1", "s", name) < 0)
        return -1;
    return pgx_exec (self, "DELETE FROM xxl_user WHERE username = $1", "s", name);
}

static int
m_user_encode_all (xxl_store_t *base, xxl_enc_t *enc)
{
    return pgx_encode ((store_t *) base, enc, 1,
        "SELECT username, role, apps, add_time AS \"addTime\" FROM xxl_user ORDER BY username",
        NULL);
}

static int
m_token_add (xxl_store_t *base, const xxl_account_t *token)
{
    return pgx_exec ((store_t *) base,
        "INSERT INTO xxl_token (name, hash, role, apps, add_time)"
        " VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING", "ssssi",
        token->name, token->hash, token->role, token->apps? token->apps: "", token->add_time);
}

static int
m_token_find (xxl_store_t *base, const char *hash, xxl_account_t *out)
{
    return s_account_row (pgx_run ((store_t *) base, PGX_READ,
        "SELECT name, hash, role, apps, add_time FROM xxl_token WHERE hash = $1", "s", hash),
        out);
}

static int
m_token_rm (xxl_store_t *base, const char *name)
{
    return pgx_exec ((store_t *) base, "DELETE FROM xxl_token WHERE name = $1", "s", name);
}

static int
m_token_encode_all (xxl_store_t *base, xxl_enc_t *enc)
{
    return pgx_encode ((store_t *) base, enc, 1,
        "SELECT name, role, apps, add_time AS \"addTime\" FROM xxl_token ORDER BY name", NULL);
}

static int
m_session_add (xxl_store_t *base, const char *id, const char *user, const char *csrf,
               int64_t now)
{
    if (pgx_exec ((store_t *) base,
            "INSERT INTO xxl_session (id, username, csrf, add_time, seen)"
            " VALUES ($1, $2, $3, $4, $4)", "sssi", id, user, csrf, now) < 0)
        return -1;
    return pgx_exec ((store_t *) base,
        "DELETE FROM xxl_session WHERE username = $1 AND id NOT IN (SELECT id FROM xxl_session"
        " WHERE username = $1 ORDER BY seen DESC, add_time DESC, id LIMIT $2)",
        "si", user, (int64_t) XXL_STORE_USER_SESSIONS) < 0? -1: 0;
}

static int
m_session_find (xxl_store_t *base, const char *id, int64_t seen_after, char **user,
                char **csrf, int64_t *seen)
{
    *user = *csrf = NULL;
    PGresult *result = pgx_run ((store_t *) base, PGX_READ,
        "SELECT username, csrf, seen FROM xxl_session WHERE id = $1 AND seen >= $2", "si",
        id, seen_after);
    if (!result)
        return -1;
    int rc = 1;
    if (PQntuples (result) > 0) {
        *user = pgx_string (result, 0, 0);
        *csrf = pgx_string (result, 0, 1);
        *seen = pgx_int (result, 0, 2);
        rc = 0;
    }
    PQclear (result);
    return rc;
}

static int
m_session_touch (xxl_store_t *base, const char *id, int64_t now)
{
    return pgx_exec ((store_t *) base, "UPDATE xxl_session SET seen = $1 WHERE id = $2", "is",
                     now, id) < 0? -1: 0;
}

static int
m_session_rm (xxl_store_t *base, const char *id)
{
    return pgx_exec ((store_t *) base, "DELETE FROM xxl_session WHERE id = $1", "s", id);
}

static int
m_user_sessions_rm (xxl_store_t *base, const char *user)
{
    return pgx_exec ((store_t *) base, "DELETE FROM xxl_session WHERE username = $1", "s",
                     user);
}

static int64_t
m_session_expire (xxl_store_t *base, int64_t before)
{
    return pgx_exec ((store_t *) base, "DELETE FROM xxl_session WHERE seen < $1", "i", before);
}

const xxl_store_accounts_t pgx_accounts = {
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
