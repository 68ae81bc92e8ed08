/*  xxl_ctl_print.h -- xxl-ctl's output: errors, JSON, tables, key: value.

    Everything goes to the run's out, except errors without --json, which
    are one `xxl-ctl: <msg>` line on err.  With --json a command prints
    exactly one JSON document, an error included ({"error": "..."}).
    Times are epoch ms shown in local time.
*/

#ifndef XXL_CTL_PRINT_H_INCLUDED
#define XXL_CTL_PRINT_H_INCLUDED

#include "xxl/msg.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define XXL_CTL_CELL_MAX    60          //  columns of free text in a table cell

typedef struct _ctl_t ctl_t;

//  Reports a failure (a line on err, or {"error": ...} on out with --json)
//  and returns status
int xxl_ctl_fail (ctl_t *self, int status, const char *format, ...)
    __attribute__ ((format (printf, 3, 4)));

//  Prints obj as one compact JSON document and a newline; 0, or -1 when
//  out of memory (nothing printed).  With --get PATH, only the value at
//  PATH and a newline: a string's text as it is, null (or no value at
//  PATH) as null, any other value as compact JSON
int xxl_ctl_print_json (ctl_t *self, const msgpack_object *obj);

//  Prints the one msgpack object of the size bytes at data
//  (xxl_ctl_print_json); the exit status (XXL_CTL_FAILED, said, when out of
//  memory or data is not one object)
int xxl_ctl_print_json_packed (ctl_t *self, const char *data, size_t size);

//  Prints {"KEY": [row, ...]} (xxl_ctl_print_json) of count msgpack
//  objects packed one after the other in the size bytes at data; the exit
//  status (XXL_CTL_FAILED, said, when out of memory or data is not count
//  objects)
int xxl_ctl_print_json_rows (ctl_t *self, const char *key, const char *data, size_t size,
                             uint32_t count);

//  True when path is a --get path: one or more steps, each .KEY (KEY: one
//  or more bytes other than '.', '[', ']') or [N] (N a decimal int of at
//  most 9 digits, with '-' counting from the end: [-1] is the last); the
//  first step's dot may be left out (id, logIds[0])
int xxl_ctl_get_path_ok (const char *path);

//  Prints {"key": text} (size bytes of text) as one JSON document; 0 or -1
int xxl_ctl_print_json_str (ctl_t *self, const char *key, const char *text, size_t size);

//  Prints a map as aligned `key: value` lines; times (keys ending in
//  "Time"/"time") as local time, multi-line strings indented below the key
void xxl_ctl_print_object (ctl_t *self, const msgpack_object *map);

//  Local "yyyy-mm-dd HH:MM:SS" of epoch ms into buf; "-" when not set.
//  Returns buf.
const char *xxl_ctl_time_text (int64_t ms, char *buf, size_t buflen);

//  "yyyy-mm-dd HH:MM:SS +hh:mm ZONE" of epoch ms in the IANA zone (NULL
//  or "": UTC) into buf, e.g. "2026-11-29 10:00:00 +08:00 Asia/Shanghai".
//  0, or -1 when this machine has no such zone (buf then holds the UTC
//  form, labelled UTC).
int xxl_ctl_zone_time (int64_t ms, const char *zone, char *buf, size_t buflen);

//  Prints fire times one a line in zone (NULL or "": UTC) with the offset
//  and zone (xxl_ctl_zone_time), or "no fire times"; a zone unknown here
//  gives UTC and one line on err saying so
void xxl_ctl_print_times (ctl_t *self, const int64_t *times, size_t count, const char *zone);

//  Columns a terminal gives UTF-8 text: 2 for each East Asian wide or
//  fullwidth character (CJK, kana, Hangul, fullwidth forms, emoji), 0 for
//  controls and combining marks, 1 for the rest and for each byte of
//  invalid UTF-8
size_t xxl_ctl_width (const char *text);

//  Cuts text in place to its first line (also at an HTML <br>) of at most
//  max columns (xxl_ctl_width; max >= 3; "..." marks a cut, never within
//  a character); returns text (NULL stays NULL)
char *xxl_ctl_first_line (char *text, size_t max);

//  A table of text cells, printed with aligned columns (at most 32),
//  aligned by display width (xxl_ctl_width)
typedef struct {
    int cols;
    char **cells;                       //  row-major, header row first
    size_t count, cap;
} ctl_table_t;

//  Starts a table with a header row
void xxl_ctl_table_init (ctl_table_t *table, int cols, const char **headers);

//  Adds the next cell, taking ownership of it (NULL: an empty cell)
void xxl_ctl_table_add (ctl_table_t *table, char *cell);

//  Prints the table (or the empty line when it has no rows but the
//  header and empty is not NULL), then frees it
void xxl_ctl_table_print (ctl_table_t *table, FILE *out, const char *empty);

//  Frees the table unprinted
void xxl_ctl_table_free (ctl_table_t *table);

#endif
