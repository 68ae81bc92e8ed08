/*  bench_db.c -- see bench_db.h */

#include "bench_db.h"

#include <libpq-fe.h>
#include <sqlite3.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_DB_PARAMS 4

struct bench_db {
    sqlite3 *lite;                      //  one of these two
    PGconn *pg;
};

struct bench_rows {
    bench_db_t *db;
    sqlite3_stmt *stmt;                 //  SQLite
    PGresult *result;                   //  PostgreSQL: all rows at once
    int row;                            //  PostgreSQL: the current row, -1 before the first
};

static void
s_die (const char *what, const char *sql, const char *why)
{
    fprintf (stderr, "xxl_bench: %s%s%s: %s\n", what, sql? " ": "", sql? sql: "", why);
    exit (2);
}

bench_db_t *
bench_db_open (const char *where)
{
    bench_db_t *self = (bench_db_t *) calloc (1, sizeof *self);
    if (!self)
        s_die ("out of memory", NULL, where);
    if (strncmp (where, "postgresql://", 13) == 0 || strncmp (where, "postgres://", 11) == 0) {
        self->pg = PQconnectdb (where);
        if (PQstatus (self->pg) != CONNECTION_OK)
            s_die ("cannot connect to the PostgreSQL store", NULL, PQerrorMessage (self->pg));
        return self;
    }
    if (sqlite3_open_v2 (where, &self->lite, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        s_die ("cannot open", where, self->lite? sqlite3_errmsg (self->lite): "");
    sqlite3_busy_timeout (self->lite, 5000);
    return self;
}

void
bench_db_close (bench_db_t **self_p)
{
    bench_db_t *self = *self_p;
    if (!self)
        return;
    if (self->lite)
        sqlite3_close (self->lite);
    if (self->pg)
        PQfinish (self->pg);
    free (self);
    *self_p = NULL;
}

static bench_rows_t *
s_query (bench_db_t *self, const char *sql, int params, va_list args)
{
    if (params > BENCH_DB_PARAMS)
        s_die ("too many parameters for", sql, "at most 4");
    int64_t values [BENCH_DB_PARAMS];
    for (int i = 0; i < params; i++)
        values [i] = va_arg (args, int64_t);
    bench_rows_t *rows = (bench_rows_t *) calloc (1, sizeof *rows);
    if (!rows)
        s_die ("out of memory", sql, "");
    rows->db = self;
    rows->row = -1;
    if (self->lite) {
        if (sqlite3_prepare_v2 (self->lite, sql, -1, &rows->stmt, NULL) != SQLITE_OK)
            s_die ("cannot prepare", sql, sqlite3_errmsg (self->lite));
        for (int i = 0; i < params; i++)
            sqlite3_bind_int64 (rows->stmt, i + 1, values [i]);
        return rows;
    }
    //  ? -> $n
    size_t length = strlen (sql);
    char *text = (char *) malloc (length + 4 * BENCH_DB_PARAMS + 1);
    if (!text)
        s_die ("out of memory", sql, "");
    size_t used = 0;
    int placeholders = 0;
    for (const char *c = sql; *c; c++) {
        if (*c == '?' && placeholders < BENCH_DB_PARAMS)
            used += (size_t) sprintf (text + used, "$%d", ++placeholders);
        else
            text [used++] = *c;
    }
    text [used] = 0;
    char numbers [BENCH_DB_PARAMS][24];
    const char *pointers [BENCH_DB_PARAMS];
    for (int i = 0; i < params; i++) {
        snprintf (numbers [i], sizeof numbers [i], "%" PRId64, values [i]);
        pointers [i] = numbers [i];
    }
    rows->result = PQexecParams (self->pg, text, params, NULL, pointers, NULL, NULL, 0);
    if (PQresultStatus (rows->result) != PGRES_TUPLES_OK)
        s_die ("cannot run", text, PQresultErrorMessage (rows->result));
    free (text);
    return rows;
}

bench_rows_t *
bench_db_query (bench_db_t *self, const char *sql, int params, ...)
{
    va_list args;
    va_start (args, params);
    bench_rows_t *rows = s_query (self, sql, params, args);
    va_end (args);
    return rows;
}

bool
bench_rows_next (bench_rows_t *self)
{
    if (self->stmt) {
        int rc = sqlite3_step (self->stmt);
        if (rc != SQLITE_ROW && rc != SQLITE_DONE)
            s_die ("cannot read", sqlite3_sql (self->stmt), sqlite3_errmsg (self->db->lite));
        return rc == SQLITE_ROW;
    }
    return ++self->row < PQntuples (self->result);
}

int64_t
bench_rows_int (bench_rows_t *self, int column)
{
    if (self->stmt)
        return sqlite3_column_int64 (self->stmt, column);
    if (PQgetisnull (self->result, self->row, column))
        return 0;
    return strtoll (PQgetvalue (self->result, self->row, column), NULL, 10);
}

const char *
bench_rows_text (bench_rows_t *self, int column)
{
    if (self->stmt)
        return (const char *) sqlite3_column_text (self->stmt, column);
    if (PQgetisnull (self->result, self->row, column))
        return NULL;
    return PQgetvalue (self->result, self->row, column);
}

void
bench_rows_end (bench_rows_t **self_p)
{
    bench_rows_t *self = *self_p;
    if (!self)
        return;
    if (self->stmt)
        sqlite3_finalize (self->stmt);
    if (self->result)
        PQclear (self->result);
    free (self);
    *self_p = NULL;
}

int64_t
bench_db_scalar (bench_db_t *self, const char *sql, int params, ...)
{
    va_list args;
    va_start (args, params);
    bench_rows_t *rows = s_query (self, sql, params, args);
    va_end (args);
    int64_t value = bench_rows_next (rows)? bench_rows_int (rows, 0): -1;
    bench_rows_end (&rows);
    return value;
}
