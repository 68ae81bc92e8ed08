/*  xxl_test_store.h -- the store the C unit tests run on: an SQLite file
    in the test's temporary folder, or, when XXL_TEST_STORE_URL is set
    (tests/test_store_pg.sh sets it), the PostgreSQL database it names
    (a fresh one: the tests expect empty tables).

    Raw SQL for either backend goes through its test hooks
    (xxl_store_sqlite.h, xxl_store_pg.h) with XXL_TEST_EXEC, _SCALAR,
    _TEXT and _ENCODE.  The SQL is written once, with SQLite's ?
    placeholders; on PostgreSQL each ? becomes $1, $2, ... in order (?N
    becomes $N), outside quoted text.  SQL that differs between the two
    (catalogs, PRAGMAs) is chosen with xxl_test_pg.
*/

#ifndef XXL_TEST_STORE_H_INCLUDED
#define XXL_TEST_STORE_H_INCLUDED

#include "xxl_store_sqlite.h"
#include "xxl_store_pg.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool xxl_test_pg = false;

//  The store's name: XXL_TEST_STORE_URL when set (xxl_test_pg becomes
//  true), else sqlite_path
static inline const char *
xxl_test_store_url (const char *sqlite_path)
{
    const char *url = getenv ("XXL_TEST_STORE_URL");
    xxl_test_pg = url && *url;
    return xxl_test_pg? url: sqlite_path;
}

//  SQLite's SQL with PostgreSQL's placeholders, in one of eight buffers
//  used in turn (alive for the call it is passed to)
static inline const char *
xxl_test_sql (const char *sql)
{
    static char buffers [8][4096];
    static int next = 0;
    char *out = buffers [next];
    next = (next + 1) % 8;
    size_t used = 0;
    int index = 0;
    char quote = 0;
    for (const char *p = sql; *p && used + 16 < sizeof buffers [0]; p++) {
        if (quote) {
            if (*p == quote)
                quote = 0;
        }
        else
        if (*p == '\'' || *p == '"')
            quote = *p;
        else
        if (*p == '?') {
            if (p [1] >= '0' && p [1] <= '9')
                out [used++] = '$';
            else
                used += (size_t) snprintf (out + used, 16, "$%d", ++index);
            continue;
        }
        out [used++] = *p;
    }
    out [used] = 0;
    return out;
}

#define XXL_TEST_EXEC(store, sql, ...) (xxl_test_pg \
    ? xxl_store_pg_exec ((store), xxl_test_sql (sql), __VA_ARGS__) \
    : xxl_store_sqlite_exec ((store), (sql), __VA_ARGS__))
#define XXL_TEST_SCALAR(store, sql, ...) (xxl_test_pg \
    ? xxl_store_pg_scalar ((store), xxl_test_sql (sql), __VA_ARGS__) \
    : xxl_store_sqlite_scalar ((store), (sql), __VA_ARGS__))
#define XXL_TEST_TEXT(store, sql, ...) (xxl_test_pg \
    ? xxl_store_pg_text ((store), xxl_test_sql (sql), __VA_ARGS__) \
    : xxl_store_sqlite_text ((store), (sql), __VA_ARGS__))
#define XXL_TEST_ENCODE(store, enc, rows_as_array, sql, ...) (xxl_test_pg \
    ? xxl_store_pg_encode ((store), (enc), (rows_as_array), xxl_test_sql (sql), __VA_ARGS__) \
    : xxl_store_sqlite_encode ((store), (enc), (rows_as_array), (sql), __VA_ARGS__))

#endif
