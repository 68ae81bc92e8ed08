/*  xxl_mysqldump.c -- a streaming reader of the SQL that mysqldump writes.
    Contract in xxl_mysqldump.h.

    A buffer of S_CHUNK bytes is refilled from the file as the lexer
    consumes it, so memory is bounded by the chunk, the largest value kept
    and the columns of the wanted tables, whatever the dump's size.
*/

#include "xxl_mysqldump.h"

#include <assert.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define S_CHUNK     65536
#define S_DELIM_MAX 16

typedef struct {
    char *name;
    char **columns;
    size_t count;
} s_table_t;

typedef enum { S_TOP, S_VALUES, S_END, S_ERROR } s_state_t;

struct _xxl_dump_t {
    FILE *file;
    const char *const *tables;
    unsigned char buf [S_CHUNK];
    size_t pos, len;
    bool eof;
    size_t line;
    char delim [S_DELIM_MAX + 1];
    char error [256];
    s_state_t state;
    s_table_t *known;                   //  wanted tables' CREATE columns
    size_t nknown;
    //  The INSERT being read
    char table [XXL_DUMP_MAX_NAME + 1];
    bool wanted;
    char **insert_cols;                 //  its column list, or NULL
    size_t ninsert_cols;
    //  The row handed out
    xxl_dump_value_t values [XXL_DUMP_MAX_COLS];
    size_t nvalues;
    xxl_dump_row_t row;
    //  Scratch text (a value or a name)
    char *text;
    size_t size, cap;
};

static int
s_vfail (xxl_dump_t *self, size_t line, const char *format, va_list args)
{
    if (self->state != S_ERROR) {
        int n = snprintf (self->error, sizeof self->error, "line %zu: ", line);
        vsnprintf (self->error + n, sizeof self->error - n, format, args);
        self->state = S_ERROR;
    }
    return -1;
}

//  Latches the first error, at the current line or at line; returns -1
static int
s_fail (xxl_dump_t *self, const char *format, ...)
    __attribute__ ((format (printf, 2, 3)));
static int
s_fail_at (xxl_dump_t *self, size_t line, const char *format, ...)
    __attribute__ ((format (printf, 3, 4)));

static int
s_fail (xxl_dump_t *self, const char *format, ...)
{
    va_list args;
    va_start (args, format);
    s_vfail (self, self->line, format, args);
    va_end (args);
    return -1;
}

static int
s_fail_at (xxl_dump_t *self, size_t line, const char *format, ...)
{
    va_list args;
    va_start (args, format);
    s_vfail (self, line, format, args);
    va_end (args);
    return -1;
}

//  The byte at offset ahead (< S_DELIM_MAX + 2), or -1 past the end
static int
s_peek (xxl_dump_t *self, size_t ahead)
{
    if (self->pos + ahead >= self->len && !self->eof) {
        memmove (self->buf, self->buf + self->pos, self->len - self->pos);
        self->len -= self->pos;
        self->pos = 0;
        while (self->len < sizeof self->buf && !self->eof) {
            size_t got = fread (self->buf + self->len, 1, sizeof self->buf - self->len,
                                self->file);
            if (got == 0)
                self->eof = true;
            self->len += got;
            if (self->pos + ahead < self->len)
                break;
        }
    }
    return self->pos + ahead < self->len? self->buf [self->pos + ahead]: -1;
}

static int
s_take (xxl_dump_t *self)
{
    int c = s_peek (self, 0);
    if (c >= 0) {
        self->pos++;
        if (c == '\n')
            self->line++;
    }
    return c;
}

static int
s_text_add (xxl_dump_t *self, int c)
{
    if (self->size >= XXL_DUMP_MAX_VALUE)
        return s_fail (self, "a value longer than %d bytes", XXL_DUMP_MAX_VALUE);
    if (self->size + 2 > self->cap) {
        size_t cap = self->cap? self->cap * 2: 256;
        char *text = realloc (self->text, cap);
        if (!text)
            return s_fail (self, "out of memory");
        self->text = text;
        self->cap = cap;
    }
    self->text [self->size++] = (char) c;
    self->text [self->size] = 0;
    return 0;
}

static void
s_text_reset (xxl_dump_t *self)
{
    self->size = 0;
    if (self->text)
        self->text [0] = 0;
}

//  Skips white space and comments; -1 on an unterminated comment
static int
s_skip_space (xxl_dump_t *self)
{
    while (true) {
        int c = s_peek (self, 0);
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v')
            s_take (self);
        else
        if (c == '#' || (c == '-' && s_peek (self, 1) == '-'
                         && (s_peek (self, 2) <= ' '))) {
            while ((c = s_take (self)) >= 0 && c != '\n')
                ;
        }
        else
        if (c == '/' && s_peek (self, 1) == '*') {
            size_t line = self->line;
            s_take (self);
            s_take (self);
            while (true) {
                c = s_take (self);
                if (c < 0)
                    return s_fail_at (self, line, "a comment /* that never ends");
                if (c == '*' && s_peek (self, 0) == '/') {
                    s_take (self);
                    break;
                }
            }
        }
        else
            return 0;
    }
}

static bool
s_at_delim (xxl_dump_t *self)
{
    for (size_t i = 0; self->delim [i]; i++)
        if (s_peek (self, i) != (unsigned char) self->delim [i])
            return false;
    return true;
}

static void
s_take_delim (xxl_dump_t *self)
{
    for (size_t i = 0; self->delim [i]; i++)
        s_take (self);
}

static bool
s_word_char (int c)
{
    return c >= 0 && (isalnum (c) || c == '_' || c == '$' || c >= 0x80);
}

//  Reads a quoted text (quote ' " or `) into the scratch text, with
//  MySQL's escapes for ' and " and doubling for all three; keep: store it
static int
s_quoted (xxl_dump_t *self, bool keep)
{
    size_t line = self->line;
    int quote = s_take (self);
    s_text_reset (self);
    while (true) {
        int c = s_take (self);
        if (c < 0)
            return s_fail_at (self, line, "a quoted text (%c) that never ends", quote);
        if (c == quote) {
            if (s_peek (self, 0) != quote)
                return 0;
            s_take (self);
        }
        else
        if (c == '\\' && quote != '`') {
            c = s_take (self);
            switch (c) {
                case '0': c = 0; break;
                case 'b': c = '\b'; break;
                case 'n': c = '\n'; break;
                case 'r': c = '\r'; break;
                case 't': c = '\t'; break;
                case 'Z': c = 26; break;
                case '%': case '_':
                    if (keep && s_text_add (self, '\\'))
                        return -1;
                    break;
                case -1:
                    return s_fail_at (self, line, "a quoted text (%c) that never ends", quote);
                default: break;         //  \\ \' \" and any other: the byte
            }
        }
        if (keep && s_text_add (self, c))
            return -1;
    }
}

//  Reads a name (`quoted` or bare) into the scratch text, lower case;
//  with qualified, db.name gives name
static int
s_name (xxl_dump_t *self, bool qualified)
{
    while (true) {
        int c = s_peek (self, 0);
        if (c == '`') {
            if (s_quoted (self, true))
                return -1;
        }
        else
        if (s_word_char (c)) {
            s_text_reset (self);
            while (s_word_char (s_peek (self, 0)))
                if (s_text_add (self, s_take (self)))
                    return -1;
        }
        else
            return s_fail (self, "a name expected");
        if (self->size == 0 || self->size > XXL_DUMP_MAX_NAME || strlen (self->text) != self->size)
            return s_fail (self, "a name of 1 to %d bytes expected", XXL_DUMP_MAX_NAME);
        for (char *p = self->text; *p; p++)
            *p = (char) tolower ((unsigned char) *p);
        if (!qualified || s_peek (self, 0) != '.')
            return 0;
        s_take (self);
    }
}

//  Reads a bare word into word, upper case ("" when none; cut to size)
static void
s_keyword (xxl_dump_t *self, char *word, size_t size)
{
    size_t n = 0;
    while (s_word_char (s_peek (self, 0))) {
        int c = s_take (self);
        if (n + 1 < size)
            word [n++] = (char) toupper (c);
    }
    word [n] = 0;
}

//  Whether the next bare word is keyword (upper case); takes it if so
static bool
s_accept (xxl_dump_t *self, const char *keyword)
{
    size_t n = strlen (keyword);
    assert (n < S_DELIM_MAX);
    for (size_t i = 0; i < n; i++)
        if (toupper (s_peek (self, i)) != keyword [i])
            return false;
    if (s_word_char (s_peek (self, n)))
        return false;
    for (size_t i = 0; i < n; i++)
        s_take (self);
    return true;
}

static bool
s_wanted (xxl_dump_t *self, const char *table)
{
    for (const char *const *t = self->tables; *t; t++)
        if (strcmp (*t, table) == 0)
            return true;
    return false;
}

static void
s_names_free (char **names, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free (names [i]);
    free (names);
}

static int
s_names_add (xxl_dump_t *self, char ***names, size_t *count, const char *name)
{
    if (*count >= XXL_DUMP_MAX_COLS)
        return s_fail (self, "more than %d columns", XXL_DUMP_MAX_COLS);
    char **grown = realloc (*names, (*count + 1) * sizeof (char *));
    if (!grown)
        return s_fail (self, "out of memory");
    *names = grown;
    if (!(grown [*count] = strdup (name)))
        return s_fail (self, "out of memory");
    (*count)++;
    return 0;
}

//  After an item of a (...) list: 0 for ',', 1 for ')' (taken), -1 after
//  an error, -2 for anything else
static int
s_list_end (xxl_dump_t *self)
{
    if (s_skip_space (self))
        return -1;
    int c = s_take (self);
    return c == ')'? 1: c == ','? 0: -2;
}

//  Skips to the end of the statement (its delimiter, or the end)
static int
s_skip_statement (xxl_dump_t *self)
{
    while (true) {
        if (s_skip_space (self))
            return -1;
        int c = s_peek (self, 0);
        if (c < 0)
            return 0;
        if (s_at_delim (self)) {
            s_take_delim (self);
            return 0;
        }
        if (c == '\'' || c == '"' || c == '`') {
            if (s_quoted (self, false))
                return -1;
        }
        else
            s_take (self);
    }
}

//  Skips one column definition or key of a CREATE TABLE, to the ',' or
//  ')' that ends it (not taken)
static int
s_skip_item (xxl_dump_t *self)
{
    int depth = 0;
    while (true) {
        if (s_skip_space (self))
            return -1;
        int c = s_peek (self, 0);
        if (c < 0)
            return s_fail (self, "CREATE TABLE's column list never ends");
        if (depth == 0 && (c == ',' || c == ')'))
            return 0;
        if (c == '\'' || c == '"' || c == '`') {
            if (s_quoted (self, false))
                return -1;
            continue;
        }
        if (c == '(')
            depth++;
        if (c == ')')
            depth--;
        s_take (self);
    }
}

static int
s_create_table (xxl_dump_t *self)
{
    if (s_skip_space (self))
        return -1;
    if (s_accept (self, "IF")) {
        s_skip_space (self);
        bool not = s_accept (self, "NOT");
        s_skip_space (self);
        if (!not || !s_accept (self, "EXISTS"))
            return s_fail (self, "CREATE TABLE IF NOT EXISTS expected");
        if (s_skip_space (self))
            return -1;
    }
    if (s_name (self, true))
        return -1;
    char table [XXL_DUMP_MAX_NAME + 1];
    strcpy (table, self->text);
    if (s_skip_space (self))
        return -1;
    if (s_peek (self, 0) != '(' || !s_wanted (self, table))
        return s_skip_statement (self);
    s_take (self);
    char **columns = NULL;
    size_t count = 0;
    while (true) {
        if (s_skip_space (self))
            break;
        int c = s_peek (self, 0);
        if (c == ')') {
            s_take (self);
            break;
        }
        if (c == ',') {
            s_take (self);
            continue;
        }
        bool quoted = c == '`';
        if (s_name (self, false))
            break;
        char upper [16] = "";
        for (size_t i = 0; i < sizeof upper - 1 && self->text [i]; i++)
            upper [i] = (char) toupper ((unsigned char) self->text [i]);
        static const char *const keys [] = {
            "PRIMARY", "UNIQUE", "KEY", "INDEX", "CONSTRAINT", "FULLTEXT", "SPATIAL",
            "FOREIGN", "CHECK", NULL
        };
        bool key = false;
        for (const char *const *k = keys; *k && !quoted; k++)
            key = key || strcmp (upper, *k) == 0;
        if (!key && s_names_add (self, &columns, &count, self->text))
            break;
        if (s_skip_item (self))
            break;
    }
    if (self->state == S_ERROR || count == 0) {
        s_names_free (columns, count);
        return self->state == S_ERROR? -1: s_fail (self, "CREATE TABLE %s has no columns", table);
    }
    //  The last CREATE of a table wins
    s_table_t *known = NULL;
    for (size_t i = 0; i < self->nknown && !known; i++)
        if (strcmp (self->known [i].name, table) == 0)
            known = &self->known [i];
    if (!known) {
        s_table_t *grown = realloc (self->known, (self->nknown + 1) * sizeof (s_table_t));
        if (!grown || !(grown [self->nknown].name = strdup (table))) {
            self->known = grown? grown: self->known;
            s_names_free (columns, count);
            return s_fail (self, "out of memory");
        }
        self->known = grown;
        known = &self->known [self->nknown++];
    }
    else
        s_names_free (known->columns, known->count);
    known->columns = columns;
    known->count = count;
    return s_skip_statement (self);
}

static int
s_insert (xxl_dump_t *self)
{
    char word [32];
    while (true) {
        if (s_skip_space (self))
            return -1;
        if (s_accept (self, "INTO"))
            break;
        if (!s_accept (self, "IGNORE") && !s_accept (self, "LOW_PRIORITY")
        &&  !s_accept (self, "DELAYED") && !s_accept (self, "HIGH_PRIORITY"))
            break;                      //  INSERT t VALUES: INTO is optional
    }
    if (s_skip_space (self) || s_name (self, true))
        return -1;
    strcpy (self->table, self->text);
    self->wanted = s_wanted (self, self->table);
    s_names_free (self->insert_cols, self->ninsert_cols);
    self->insert_cols = NULL;
    self->ninsert_cols = 0;
    if (s_skip_space (self))
        return -1;
    if (s_peek (self, 0) == '(') {
        s_take (self);
        while (true) {
            if (s_skip_space (self) || s_name (self, false))
                return -1;
            if (self->wanted
            &&  s_names_add (self, &self->insert_cols, &self->ninsert_cols, self->text))
                return -1;
            int end = s_list_end (self);
            if (end == 1)
                break;
            if (end)
                return end == -1? -1: s_fail (self, "',' or ')' expected in INSERT's column list");
        }
        if (s_skip_space (self))
            return -1;
    }
    s_keyword (self, word, sizeof word);
    if (strcmp (word, "VALUES") && strcmp (word, "VALUE")) {
        if (self->wanted)
            return s_fail (self, "INSERT INTO %s: VALUES expected (INSERT ... SELECT or SET"
                           " is not a dump's)", self->table);
        return s_skip_statement (self);
    }
    self->state = S_VALUES;
    return 0;
}

//  Reads a hex or bit literal's digits (after X' or 0x or b') as bytes,
//  kept when the row is wanted
static int
s_digits (xxl_dump_t *self, int base, int quote)
{
    bool keep = self->wanted;
    s_text_reset (self);
    size_t n = 0;
    unsigned acc = 0;
    int bits = 0;
    //  Bits are right-aligned, so b'...' keeps up to 64 of them and
    //  writes their bytes at the end
    uint64_t value = 0;
    while (true) {
        int c = s_peek (self, 0);
        int d = c >= '0' && c <= '9'? c - '0': c >= 'a' && c <= 'f'? c - 'a' + 10
              : c >= 'A' && c <= 'F'? c - 'A' + 10: 99;
        if (d >= base)
            break;
        s_take (self);
        n++;
        if (base == 16) {
            acc = acc << 4 | (unsigned) d;
            bits += 4;
            if (bits == 8) {
                if (keep && s_text_add (self, (int) acc))
                    return -1;
                acc = 0;
                bits = 0;
            }
        }
        else
        if (n > 64)
            return s_fail (self, "a bit literal longer than 64 bits");
        else
            value = value << 1 | (uint64_t) d;
    }
    if (quote && s_take (self) != quote)
        return s_fail (self, "a %s literal with a bad digit", base == 16? "hex": "bit");
    if (base == 16 && bits)
        return s_fail (self, "a hex literal with an odd number of digits");
    if (base == 2)
        for (int shift = (int) ((n + 7) / 8) * 8 - 8; shift >= 0; shift -= 8)
            if (s_text_add (self, (int) (value >> shift & 0xff)))
                return -1;
    if (n == 0 && !quote)
        return s_fail (self, "a hex literal with no digits");
    return 0;
}

//  Reads one value of a row into self->values [index] (kept when wanted)
static int
s_value (xxl_dump_t *self, size_t index)
{
    if (s_skip_space (self))
        return -1;
    xxl_dump_type_t type = XXL_DUMP_STRING;
    int c = s_peek (self, 0), c1 = s_peek (self, 1);
    //  X'hex', b'bits', 0xhex: the base and the closing quote (or none)
    int base = (c == 'x' || c == 'X') && c1 == '\''? 16: (c == 'b' || c == 'B') && c1 == '\''? 2
             : c == '0' && (c1 == 'x' || c1 == 'X')? 16: 0;
    if (c == '\'' || c == '"') {
        if (s_quoted (self, self->wanted))
            return -1;
    }
    else
    if (base) {
        s_take (self);
        s_take (self);
        if (s_digits (self, base, c == '0'? 0: '\''))
            return -1;
    }
    else
    if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.') {
        type = XXL_DUMP_NUMBER;
        s_text_reset (self);
        bool digit = false;
        while (true) {
            c = s_peek (self, 0);
            bool sign = (c == '-' || c == '+')
                     && (self->size == 0 || self->text [self->size - 1] == 'e'
                         || self->text [self->size - 1] == 'E');
            if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || sign))
                break;
            digit = digit || (c >= '0' && c <= '9');
            if (self->size >= 64)
                return s_fail (self, "a number longer than 64 characters");
            s_text_add (self, s_take (self));
        }
        if (!digit)
            return s_fail (self, "a value expected");
    }
    else
    if (c == '_') {
        //  A charset introducer: _binary'..', _utf8mb4 0x..
        s_take (self);
        while (s_word_char (s_peek (self, 0)))
            s_take (self);
        return s_value (self, index);
    }
    else
    if (s_word_char (c)) {
        char word [32];
        s_keyword (self, word, sizeof word);
        s_text_reset (self);
        if (strcmp (word, "NULL") == 0)
            type = XXL_DUMP_NULL;
        else
        if (strcmp (word, "TRUE") == 0 || strcmp (word, "FALSE") == 0) {
            type = XXL_DUMP_NUMBER;
            s_text_add (self, word [0] == 'T'? '1': '0');
        }
        else {
            //  A call such as now(), kept as text
            type = XXL_DUMP_EXPR;
            for (char *p = word; *p; p++)
                s_text_add (self, tolower ((unsigned char) *p));
            if (s_skip_space (self))
                return -1;
            if (s_peek (self, 0) == '(') {
                int depth = 0;
                do {
                    c = s_take (self);
                    if (c < 0)
                        return s_fail (self, "a call's ( never closes");
                    depth += c == '('? 1: c == ')'? -1: 0;
                    if (s_text_add (self, c))
                        return -1;
                } while (depth > 0);
            }
        }
    }
    else
        return s_fail (self, "a value expected");
    if (self->state == S_ERROR)
        return -1;
    if (self->wanted) {
        xxl_dump_value_t *value = &self->values [index];
        char *data = malloc (self->size + 1);
        if (!data)
            return s_fail (self, "out of memory");
        memcpy (data, self->text? self->text: "", self->size);
        data [self->size] = 0;
        value->type = type;
        value->data = data;
        value->size = self->size;
    }
    return 0;
}

static void
s_values_free (xxl_dump_t *self)
{
    for (size_t i = 0; i < self->nvalues; i++)
        free (self->values [i].data);
    self->nvalues = 0;
}

//  Reads one (...) row of the INSERT; 1 when it is a wanted row
static int
s_row (xxl_dump_t *self)
{
    size_t line = self->line;
    if (s_take (self) != '(')
        return s_fail (self, "'(' expected: a row of INSERT INTO %s", self->table);
    while (true) {
        if (self->nvalues >= XXL_DUMP_MAX_COLS)
            return s_fail (self, "a row of more than %d values", XXL_DUMP_MAX_COLS);
        if (s_value (self, self->nvalues))
            return -1;
        if (self->wanted)
            self->nvalues++;
        else
            self->nvalues = 0;
        int end = s_list_end (self);
        if (end == 1)
            break;
        if (end)
            return end == -1? -1: s_fail (self, "',' or ')' expected after a value of INSERT"
                                          " INTO %s", self->table);
    }
    if (s_skip_space (self))
        return -1;
    if (s_peek (self, 0) == ',')
        s_take (self);
    else
    if (s_at_delim (self) || s_peek (self, 0) < 0) {
        s_take_delim (self);
        self->state = S_TOP;
    }
    else
        return s_fail (self, "',' or '%s' expected after a row of INSERT INTO %s",
                       self->delim, self->table);
    if (!self->wanted)
        return 0;
    char **columns = self->insert_cols;
    size_t count = self->ninsert_cols;
    for (size_t i = 0; i < self->nknown && !columns; i++)
        if (strcmp (self->known [i].name, self->table) == 0) {
            columns = self->known [i].columns;
            count = self->known [i].count;
        }
    if (!columns)
        return s_fail_at (self, line, "INSERT INTO %s without a column list and no CREATE TABLE %s"
                       " before it", self->table, self->table);
    if (count != self->nvalues)
        return s_fail_at (self, line, "a row of %zu values for %zu columns of %s",
                       self->nvalues, count, self->table);
    self->row.table = self->table;
    self->row.count = count;
    self->row.columns = columns;
    self->row.values = self->values;
    self->row.line = line;
    return 1;
}

//  Reads a DELIMITER line's new delimiter
static int
s_delimiter (xxl_dump_t *self)
{
    while (s_peek (self, 0) == ' ' || s_peek (self, 0) == '\t')
        s_take (self);
    size_t n = 0;
    int c;
    while ((c = s_peek (self, 0)) > ' ') {
        if (n >= S_DELIM_MAX)
            return s_fail (self, "a DELIMITER longer than %d bytes", S_DELIM_MAX);
        self->delim [n++] = (char) s_take (self);
    }
    if (n == 0)
        return s_fail (self, "DELIMITER without a delimiter");
    self->delim [n] = 0;
    return 0;
}

int
xxl_dump_next (xxl_dump_t *self, const xxl_dump_row_t **row)
{
    assert (self);
    s_values_free (self);
    while (true) {
        if (self->state == S_ERROR)
            return -1;
        if (self->state == S_END)
            return 0;
        if (self->state == S_VALUES) {
            if (s_skip_space (self))
                return -1;
            int rc = s_row (self);
            if (rc == 1) {
                *row = &self->row;
                return 1;
            }
            if (rc < 0)
                return -1;
            s_values_free (self);
            continue;
        }
        if (s_skip_space (self))
            return -1;
        int c = s_peek (self, 0);
        if (c < 0) {
            self->state = S_END;
            continue;
        }
        if (s_accept (self, "CREATE")) {
            if (s_skip_space (self))
                return -1;
            s_accept (self, "TEMPORARY");
            s_skip_space (self);
            if (s_accept (self, "TABLE"))
                s_create_table (self);
            else
                s_skip_statement (self);
        }
        else
        if (s_accept (self, "INSERT") || s_accept (self, "REPLACE"))
            s_insert (self);
        else
        if (s_accept (self, "DELIMITER"))
            s_delimiter (self);
        else
        if (c < ' ' || c == 127)
            s_fail (self, "a statement expected, not byte 0x%02x", (unsigned) c);
        else
            s_skip_statement (self);
    }
}

xxl_dump_t *
xxl_dump_new (FILE *file, const char *const *tables)
{
    assert (file);
    assert (tables);
    xxl_dump_t *self = calloc (1, sizeof (xxl_dump_t));
    if (self) {
        self->file = file;
        self->tables = tables;
        self->line = 1;
        strcpy (self->delim, ";");
    }
    return self;
}

void
xxl_dump_destroy (xxl_dump_t **self_p)
{
    assert (self_p);
    xxl_dump_t *self = *self_p;
    if (self) {
        s_values_free (self);
        for (size_t i = 0; i < self->nknown; i++) {
            free (self->known [i].name);
            s_names_free (self->known [i].columns, self->known [i].count);
        }
        free (self->known);
        s_names_free (self->insert_cols, self->ninsert_cols);
        free (self->text);
        free (self);
        *self_p = NULL;
    }
}

const char *
xxl_dump_error (xxl_dump_t *self)
{
    return self->state == S_ERROR? self->error: "";
}

const xxl_dump_value_t *
xxl_dump_get (const xxl_dump_row_t *row, const char *column)
{
    for (size_t i = 0; i < row->count; i++)
        if (strcmp (row->columns [i], column) == 0)
            return &row->values [i];
    return NULL;
}
