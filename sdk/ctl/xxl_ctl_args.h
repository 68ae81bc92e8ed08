/*  xxl_ctl_args.h -- a command's flags and arguments, declared as data.

    Each flag (ctl_opt_t) and positional argument (ctl_pos_t) has a kind,
    for numbers a range, and the request field it fills.  Where the flag
    fills a field of the command's request, its range, default and values
    are the scheduler's, from the api's command table (xxl_commands.h):
    a number flag whose min and max are both 0 takes the field's range,
    and a flag's help may name the field's {min}, {max}, {default},
    {values} (joined by ", "), {first} value and the {others}, or those
    of another field of the request ({limit.max}).  Parsing finds
    the flags on the command line (--name VALUE, --name=VALUE, switches,
    `--` ending flags); checking then validates every given value by its
    kind, in one place, in this order: positional arguments, the
    command's check of rules between flags, then flags in table order:
    whole numbers and words, then decimals, then files.  A bad
    value is a usage error: `xxl-ctl: <flag> must be ...` and the
    command's usage line on err, status XXL_CTL_USAGE.  Encoding puts
    every given value that has a field into a request.

    ctl_args_t points into argv (not copied); the text of CTL_FILE flags
    is owned by it until xxl_ctl_args_free.
*/

#ifndef XXL_CTL_ARGS_H_INCLUDED
#define XXL_CTL_ARGS_H_INCLUDED

#include "xxl/msg.h"

#include <stdint.h>
#include <stdio.h>

#define XXL_CTL_MAX_OPTS    32      //  flags of one command at most (asserted)
#define XXL_CTL_MAX_POS     4

typedef struct _ctl_t ctl_t;
typedef struct _ctl_cmd_t ctl_cmd_t;

typedef enum {
    CTL_STR,            //  text as given
    CTL_BOOL,           //  a switch, no value; fills key with true
    CTL_INT,            //  a whole number from min to max
    CTL_ID,             //  a positive whole number
    CTL_REAL,           //  a decimal number from min to max
    CTL_TIME,           //  epoch ms, or local YYYY-MM-DD[ HH:MM[:SS]]
    CTL_ENUM,           //  one of choices; fills key with the choice's value
    CTL_SHARD,          //  I/N with 0 <= I < N; filled as the text
    CTL_FILE,           //  a file's text ('-': stdin), no NUL, at most the
                        //  field's bytes (no field: a frame's); filled with it
    CTL_SCHEDULE        //  fills scheduleType with key, scheduleConf with the text
} ctl_kind_t;

typedef struct {
    const char *name;
    int64_t value;
} ctl_choice_t;

typedef struct {
    const char *name;                   //  long form, e.g. "--title"
    const char *alias;                  //  other form or NULL
    const char *arg;                    //  value name, NULL for a switch
    const char *help;                   //  {...}: the field's (see above)
    ctl_kind_t kind;
    int64_t min, max;                   //  CTL_INT, CTL_REAL (both 0: the field's)
    const char *key;                    //  request field, NULL: the handler's
    const ctl_choice_t *choices;        //  CTL_ENUM, ended by a NULL name
} ctl_opt_t;

//  Ends a command's table of flags
#define XXL_CTL_OPTS_END    { NULL, NULL, NULL, NULL, CTL_STR, 0, 0, NULL, NULL }
//  A list's page: --limit and --offset, its fields `limit` and `offset`
//  (WHAT: the items, in the help text, e.g. "calendars")
#define XXL_CTL_PAGE_OPTS(WHAT) \
    { "--limit", NULL, "N", "at most N " WHAT " ({min}-{max}, default {default})", \
      CTL_INT, 0, 0, "limit", NULL }, \
    { "--offset", NULL, "N", "skip the first N (default {default})", \
      CTL_INT, 0, 0, "offset", NULL }

typedef struct {
    const char *what;                   //  "job id": named in errors
    ctl_kind_t kind;                    //  CTL_STR or CTL_ID
    const char *key;                    //  request field, NULL: the handler's
} ctl_pos_t;

typedef struct {
    const char *value [XXL_CTL_MAX_OPTS];   //  per flag as given; "" for a set switch
    int64_t num [XXL_CTL_MAX_OPTS];         //  CTL_INT, ID, TIME, ENUM when given
    double real [XXL_CTL_MAX_OPTS];         //  CTL_REAL when given
    char *text [XXL_CTL_MAX_OPTS];          //  CTL_FILE when given (owned)
    const char *pos [XXL_CTL_MAX_POS];
    int64_t pos_num [XXL_CTL_MAX_POS];      //  CTL_ID positional arguments
    int npos;
} ctl_args_t;

//  Finds the flags and positional arguments after the command's name.
//  Returns 0, -1 after printing the command's help (-h, --help) on out,
//  or XXL_CTL_USAGE after a usage error (unknown flag, missing value,
//  too many or too few arguments).
int xxl_ctl_args_parse (ctl_t *self, const ctl_cmd_t *cmd, int argc, char **argv,
                        ctl_args_t *args);

//  How many flags cmd has (at most XXL_CTL_MAX_OPTS: test_ctl_flags checks
//  every command's table)
int xxl_ctl_opts_count (const ctl_cmd_t *cmd);

//  Validates the parsed values (see above) and converts them into num,
//  real, text and pos_num.  Returns 0 or the exit status after reporting.
int xxl_ctl_args_check (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args);

//  Frees what checking read (CTL_FILE texts)
void xxl_ctl_args_free (ctl_args_t *args);

//  A flag's value as given ("" for a set switch) or NULL; the name must
//  be one of the command's flags
const char *xxl_ctl_args_get (const ctl_cmd_t *cmd, ctl_args_t *args, const char *name);

//  A checked number flag's value, or dflt when not given
int64_t xxl_ctl_args_num (const ctl_cmd_t *cmd, ctl_args_t *args, const char *name,
                          int64_t dflt);

//  How many of the named flags (a NULL-ended list) were given
int xxl_ctl_args_count (const ctl_cmd_t *cmd, ctl_args_t *args, ...);

//  Adds the given positional arguments and flags that have a key to enc,
//  in table order; returns how many flags it added
int xxl_ctl_args_encode (const ctl_cmd_t *cmd, ctl_args_t *args, xxl_enc_t *enc);

//  Prints the command's usage line, and with full its summary and flags
void xxl_ctl_args_usage (const ctl_cmd_t *cmd, FILE *out, int full);

//  A usage error: the message (see xxl_ctl_fail), then with cmd its usage
//  line on err; returns XXL_CTL_USAGE
int xxl_ctl_usage_error (ctl_t *self, const ctl_cmd_t *cmd, const char *format, ...)
    __attribute__ ((format (printf, 3, 4)));

//  Strict decimal parse into *value when from min to max; 0 or -1
int xxl_ctl_parse_int (const char *text, int64_t min, int64_t max, int64_t *value);

#endif
