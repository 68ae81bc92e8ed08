/*  bench_db.h -- xxl_bench's read-only view of the store: an SQLite file
    or a PostgreSQL database (a postgresql:// or postgres:// URL), the same
    SQL on both.

    SQL is written once with `?` for its integer parameters; on PostgreSQL
    each `?` becomes $1, $2, ... in order, so a `?` must not appear inside
    a string literal.  Use SQL both accept: CASE for booleans counted by
    SUM, no `!=` on booleans.  Every failure (open, prepare, run) prints
    the reason and exits 2: the bench has nothing to measure without its
    store.  Values are read as integers (NULL: 0) or text (NULL: NULL);
    a text stays valid until the next bench_rows_next or bench_rows_end.
*/

#ifndef BENCH_DB_H_INCLUDED
#define BENCH_DB_H_INCLUDED

#include <stdbool.h>
#include <stdint.h>

typedef struct bench_db bench_db_t;
typedef struct bench_rows bench_rows_t;

bench_db_t *bench_db_open (const char *where);
void bench_db_close (bench_db_t **self_p);

//  Runs sql with `params` int64_t parameters (variadic); the rows come
//  from bench_rows_next; bench_rows_end frees them (and nulls *rows_p)
bench_rows_t *bench_db_query (bench_db_t *self, const char *sql, int params, ...);
bool bench_rows_next (bench_rows_t *self);
int64_t bench_rows_int (bench_rows_t *self, int column);
const char *bench_rows_text (bench_rows_t *self, int column);
void bench_rows_end (bench_rows_t **self_p);

//  The first column of the first row, or -1 when there is none
int64_t bench_db_scalar (bench_db_t *self, const char *sql, int params, ...);

#endif
