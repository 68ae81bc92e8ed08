/*  xxl_store_pg_lease.c -- the PostgreSQL backend's calls of store methods
    version 3: the leases on the shares of the jobs, the schedulers' node
    beats, and the planner's and recovery's calls for a mask of shares
    (xxl_store.h).  A job's share is its id mod 16 (XXL_STORE_SHARES; the
    SQL says 16); a mask's bit s is share s.  Each call runs in the
    caller's transaction, whose advisory write lock makes a read followed
    by a take safe.

    Layer: below xxl_store_pg.c (its method table names these calls),
    over _conn.c, the only file it calls.  Errors: -1, the reason in
    self->error.
*/

#include "xxl_store_pg_int.h"

#include <string.h>

_Static_assert (XXL_STORE_SHARES == 16, "the SQL below and migration 8 write 16 shares");

int
pgx_lease_list (xxl_store_t *base, xxl_lease_t *rows)
{
    store_t *self = (store_t *) base;
    memset (rows, 0, XXL_STORE_SHARES * sizeof (xxl_lease_t));
    PGresult *result = pgx_run (self, PGX_READ,
        "SELECT share, owner, epoch, expires, fired_until, fired_sent FROM xxl_lease"
        " ORDER BY share", NULL);
    if (!result)
        return -1;
    int seen = 0;
    for (int i = 0; i < PQntuples (result); i++) {
        int64_t share = pgx_int (result, i, 0);
        if (share < 0 || share >= XXL_STORE_SHARES)
            continue;
        xxl_lease_t *row = rows + share;
        row->share = (int) share;
        const char *owner = PQgetisnull (result, i, 1)? "": PQgetvalue (result, i, 1);
        snprintf (row->owner, sizeof row->owner, "%s", owner);
        row->epoch = pgx_int (result, i, 2);
        row->expires = pgx_int (result, i, 3);
        row->fired_until = pgx_int (result, i, 4);
        row->fired_sent = pgx_int (result, i, 5);
        seen++;
    }
    PQclear (result);
    if (seen != XXL_STORE_SHARES)
        return pgx_failf (self, "lease list: %d of %d shares", seen, XXL_STORE_SHARES);
    return 0;
}

int
pgx_lease_fired (xxl_store_t *base, uint64_t mask, int64_t until, int64_t sent)
{
    return pgx_exec ((store_t *) base,
        "UPDATE xxl_lease SET fired_until = GREATEST (fired_until, $2),"
        " fired_sent = GREATEST (fired_sent, $3) WHERE" XXL_IN_MASK ("share"),
        "iii", (int64_t) mask, until, sent) < 0? -1: 0;
}

int64_t
pgx_clock_now (xxl_store_t *base)
{
    return pgx_scalar ((store_t *) base,
        "SELECT (EXTRACT (EPOCH FROM clock_timestamp ()) * 1000)::bigint", "");
}

int
pgx_job_due_in (xxl_store_t *base, uint64_t mask, int64_t before, xxl_store_due_t *rows,
                size_t max, size_t *count)
{
    *count = 0;
    PGresult *result = pgx_run ((store_t *) base, PGX_READ,
        "SELECT id, update_time, trigger_next_time, trigger_last_time FROM xxl_job_info"
        " WHERE trigger_status = 1 AND trigger_next_time <= $2 AND" XXL_IN_MASK ("id")
        " ORDER BY trigger_next_time LIMIT $3", "iii", (int64_t) mask, before, (int64_t) max);
    if (!result)
        return -1;
    int found = PQntuples (result);
    for (int i = 0; i < found && *count < max; i++) {
        xxl_store_due_t *row = rows + (*count)++;
        row->id = pgx_int (result, i, 0);
        row->update_time = pgx_int (result, i, 1);
        row->trigger_next_time = pgx_int (result, i, 2);
        row->trigger_last_time = pgx_int (result, i, 3);
    }
    PQclear (result);
    return 0;
}

