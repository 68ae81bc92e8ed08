/*  xxl_mysqldump.h -- a streaming reader of the SQL that mysqldump writes.

    It reads a dump from a FILE in bounded chunks and hands out, one at a
    time, the rows of the tables the caller asks for, each value with its
    column's name.  Column names come from the INSERT's own column list
    (mysqldump --complete-insert, or hand-written SQL) or else from the
    table's last CREATE TABLE; a row of a table whose columns are unknown
    is an error.  Rows of other tables are scanned, never kept.

    Understood: CREATE TABLE [IF NOT EXISTS] (column names; keys and
    constraints skipped), INSERT [IGNORE] / REPLACE INTO t [(cols)]
    VALUES|VALUE (...),(...); with `db`.`t` names; every other statement
    (SET, LOCK TABLES, DROP, USE, START TRANSACTION, ...) is skipped to its
    delimiter, and DELIMITER lines change it.  Comments: `-- ` and `#` to
    the end of the line, slash-star comments, the conditional ones
    (slash-star-bang NNNNN: mysqldump writes only SET and ALTER ... KEYS
    in those) included, are skipped.  Values: '...' and "..." strings with MySQL's
    escapes (\0 \' \" \b \n \r \t \Z \\, \% and \_ kept with their
    backslash as MySQL does, '' and "" doubling), charset introducers
    (_binary'...', _utf8mb4'...'), X'hex', 0xhex, b'bits', numbers, NULL,
    TRUE/FALSE, and calls such as now() (kept as text, XXL_DUMP_EXPR).
    Bytes are kept as they are (UTF-8 survives byte-exact); CRLF is white
    space.

    Bounds: a value longer than XXL_DUMP_MAX_VALUE bytes, a row of more
    than XXL_DUMP_MAX_COLS values, or a name longer than XXL_DUMP_MAX_NAME
    is an error.  Every error is one line: "line N: what was expected"
    (N the line where it was met), after which the reader gives no rows.
*/

#ifndef XXL_MYSQLDUMP_H_INCLUDED
#define XXL_MYSQLDUMP_H_INCLUDED

#include <stddef.h>
#include <stdio.h>

#define XXL_DUMP_MAX_VALUE  (16 * 1024 * 1024)
#define XXL_DUMP_MAX_COLS   256
#define XXL_DUMP_MAX_NAME   64

typedef enum {
    XXL_DUMP_NULL,
    XXL_DUMP_STRING,                    //  text (also X'..', 0x.., b'..' as bytes)
    XXL_DUMP_NUMBER,                    //  text as written
    XXL_DUMP_EXPR                       //  a call or word (now(), TRUE): text as written
} xxl_dump_type_t;

typedef struct {
    xxl_dump_type_t type;
    char *data;                         //  NUL-terminated ("" for NULL)
    size_t size;                        //  bytes, NULs inside strings included
} xxl_dump_value_t;

typedef struct {
    const char *table;                  //  without its database
    size_t count;                       //  values and columns
    char **columns;                     //  column names, lower case
    xxl_dump_value_t *values;
    size_t line;                        //  the line where the row starts
} xxl_dump_row_t;

typedef struct _xxl_dump_t xxl_dump_t;

//  A reader of file (not owned, not closed) that returns the rows of the
//  tables named in tables (a NULL-ended list, kept by the caller)
xxl_dump_t *xxl_dump_new (FILE *file, const char *const *tables);
void xxl_dump_destroy (xxl_dump_t **self_p);

//  The next wanted row: 1 and *row (valid until the next call), 0 at the
//  end of the dump, -1 on an error (xxl_dump_error)
int xxl_dump_next (xxl_dump_t *self, const xxl_dump_row_t **row);

//  The error, "line N: ..."; "" when none
const char *xxl_dump_error (xxl_dump_t *self);

//  The value of a row's column (lower case), or NULL when it has none
const xxl_dump_value_t *xxl_dump_get (const xxl_dump_row_t *row, const char *column);

#endif
