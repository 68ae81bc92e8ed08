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
m_user_get (xxl_store_t *base, const char *name, xxl_account_t *out)
{
    return s_account_row (pgx_run ((store_t *) base, PGX_READ,
        "SELECT username, password, role, apps, add_time FROM xxl_user WHERE username = $1",
        "s", name), out);
}

static int
m_token_find (xxl_store_t *base, const char *hash, xxl_account_t *out)
{
    return s_account_row (pgx_run ((store_t *) base, PGX_READ,
        "SELECT name, hash, role, apps, add_time FROM xxl_token WHERE hash = $1", "s", hash),
        out);
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

const xxl_store_accounts_t pgx_accounts = {
    XXL_STORE_SQL_ACCOUNTS          //  the shared bodies (xxl_store_sql.c)
    .user_get = m_user_get,
    .token_find = m_token_find,
    .session_find = m_session_find,
};
