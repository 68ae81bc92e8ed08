/*  xxl_store_pg_users.c -- the PostgreSQL backend's users, bearer tokens
    and sessions (xxl_store_accounts_t in xxl_store.h; schema step 9).
*/

#include "xxl_store_pg_int.h"

const xxl_store_accounts_t pgx_accounts = {
    XXL_STORE_SQL_ACCOUNTS          //  the shared bodies (xxl_store_sql.c)
};
