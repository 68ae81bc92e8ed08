/*  xxl_ctl_args.c -- a command's flags and arguments, declared as data.
*/

#include "xxl_ctl_args.h"
#include "xxl_ctl_cmd.h"
#include "xxl_ctl_print.h"
#include "xxl_commands.h"

#include <czmq.h>
#include <inttypes.h>
#include <time.h>

int
xxl_ctl_parse_int (const char *text, int64_t min, int64_t max, int64_t *value)
{
    if (!text || !*text)
        return -1;
    char *end = NULL;
    errno = 0;
    long long v = strtoll (text, &end, 10);
    if (errno || *end || v < min || v > max)
        return -1;
    *value = (int64_t) v;
    return 0;
}

//  Epoch ms from digits, or from a local YYYY-MM-DD[ HH:MM[:SS]] (also
//  with a T); -1 when neither
static int64_t
s_parse_time (const char *text)
{
    int64_t ms;
    if (xxl_ctl_parse_int (text, 0, INT64_MAX / 2, &ms) == 0)
        return ms;
    int year, month, day, hour = 0, minute = 0, second = 0, used = 0;
    char sep = 0;
    if (sscanf (text, "%4d-%2d-%2d%n", &year, &month, &day, &used) != 3)
        return -1;
    const char *rest = text + used;
    if (*rest) {
        int more = 0;
        second = 0;
        if (sscanf (rest, "%c%2d:%2d%n", &sep, &hour, &minute, &more) != 3
        ||  (sep != ' ' && sep != 'T'))
            return -1;
        rest += more;
        if (*rest && (sscanf (rest, ":%2d%n", &second, &more) != 1 || rest [more]))
            return -1;
    }
    if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59
    ||  second > 60 || hour < 0 || minute < 0 || second < 0)
        return -1;
    struct tm tm;
    memset (&tm, 0, sizeof tm);
    tm.tm_year = year - 1900;
    tm.tm_mon = month - 1;
    tm.tm_mday = day;
    tm.tm_hour = hour;
    tm.tm_min = minute;
    tm.tm_sec = second;
    tm.tm_isdst = -1;
    time_t t = mktime (&tm);
    return t == (time_t) -1? -1: (int64_t) t * 1000;
}

//  0 when text is I/N with 0 <= I < N
static int
s_parse_shard (const char *text)
{
    int64_t index, total;
    const char *slash = strchr (text, '/');
    char left [32] = "";
    if (slash && (size_t) (slash - text) < sizeof left)
        memcpy (left, text, (size_t) (slash - text));
    if (!slash || xxl_ctl_parse_int (left, 0, XXL_SHARD_MAX - 1, &index)
    ||  xxl_ctl_parse_int (slash + 1, 1, XXL_SHARD_MAX, &total) || index >= total)
        return -1;
    return 0;
}

//  Reads a whole file ('-' = stdin) of at most limit bytes into a new
//  string, or NULL with reason; reads no more than limit + 1 bytes, so a
//  longer file (an endless pipe too) costs no more memory than the limit
static char *
s_read_file (const char *flag, const char *path, size_t limit, const char *key,
             char *reason, size_t reasonlen)
{
    FILE *file = streq (path, "-")? stdin: fopen (path, "rb");
    if (!file) {
        snprintf (reason, reasonlen, "cannot read '%s': %s", path, strerror (errno));
        return NULL;
    }
    size_t size = 0, cap = 4096;
    char *data = (char *) malloc (cap);
    while (data && size <= limit) {
        if (size + 1 >= cap) {
            char *bigger = (char *) realloc (data, cap * 2);
            if (!bigger) {
                free (data);
                data = NULL;
                break;
            }
            data = bigger;
            cap *= 2;
        }
        size_t want = cap - size - 1;
        if (want > limit + 1 - size)
            want = limit + 1 - size;
        size_t got = fread (data + size, 1, want, file);
        size += got;
        if (got == 0)
            break;
    }
    int failed = ferror (file);
    if (file != stdin)
        fclose (file);
    if (!data || failed) {
        snprintf (reason, reasonlen, "cannot read '%s': %s", path,
                  data? "read error": "out of memory");
        free (data);
        return NULL;
    }
    if (size > limit) {
        snprintf (reason, reasonlen, "%s: '%s' is longer than %s's limit of %zu bytes",
                  flag, path, key, limit);
        free (data);
        return NULL;
    }
    data [size] = 0;
    if (strlen (data) != size) {
        snprintf (reason, reasonlen, "%s: '%s' holds a NUL byte; %s must be text",
                  flag, path, key);
        free (data);
        return NULL;
    }
    return data;
}

//  The request's field a flag names (NULL: the flag's own key), or NULL
static const xxl_field_t *
s_field (const ctl_cmd_t *cmd, const ctl_opt_t *opt, const char *name)
{
    return xxl_command_field (xxl_command_find (cmd->request), name? name: opt->key);
}

//  A number flag's range: its own, or the request field's when both are 0
static void
s_range (const ctl_cmd_t *cmd, const ctl_opt_t *opt, int64_t *min, int64_t *max)
{
    *min = opt->min;
    *max = opt->max;
    if (opt->min == 0 && opt->max == 0) {
        const xxl_field_t *field = s_field (cmd, opt, NULL);
        assert (field);                 //  (a flag with no range and no field)
        *min = field->min;
        *max = field->max;
    }
}

//  A flag's help with its {...} names replaced by the field's values
static const char *
s_help (const ctl_cmd_t *cmd, const ctl_opt_t *opt, char *buf, size_t buflen)
{
    size_t used = 0;
    for (const char *p = opt->help; *p && used + 1 < buflen; p++) {
        const char *close = *p == '{'? strchr (p, '}'): NULL;
        char name [64] = "", what [64] = "", text [512] = "";
        if (close && (size_t) (close - p) < sizeof name) {
            memcpy (what, p + 1, (size_t) (close - p - 1));
            char *dot = strchr (what, '.');
            if (dot) {
                *dot = 0;
                snprintf (name, sizeof name, "%s", what);
                memmove (what, dot + 1, strlen (dot + 1) + 1);
            }
        }
        const xxl_field_t *field = *what? s_field (cmd, opt, *name? name: NULL): NULL;
        if (field && streq (what, "min"))
            snprintf (text, sizeof text, "%" PRId64, field->min);
        else
        if (field && streq (what, "max"))
            snprintf (text, sizeof text, "%" PRId64, field->max);
        else
        if (field && streq (what, "default"))
            snprintf (text, sizeof text, "%" PRId64, field->dflt);
        else
        if (field && field->values && streq (what, "values"))
            xxl_field_values (field, 0, text, sizeof text);
        else
        if (field && field->values && streq (what, "first"))
            snprintf (text, sizeof text, "%s", field->values [0]);
        else
        if (field && field->values && streq (what, "others"))
            xxl_field_values (field, 1, text, sizeof text);
        else {
            assert (!*what);            //  (a name the field does not have)
            buf [used++] = *p;
            continue;
        }
        used += (size_t) snprintf (buf + used, buflen - used, "%s", text);
        used = used < buflen? used: buflen - 1;
        p = close;
    }
    buf [used] = 0;
    return buf;
}

void
xxl_ctl_args_usage (const ctl_cmd_t *cmd, FILE *out, int full)
{
    fprintf (out, "usage: xxl-ctl [global flags] %s%s%s%s%s\n", cmd->noun,
             cmd->verb? " ": "", cmd->verb? cmd->verb: "", *cmd->synopsis? " ": "", cmd->synopsis);
    if (!full)
        return;
    fprintf (out, "\n  %s\n", cmd->summary);
    if (cmd->opts && cmd->opts [0].name) {
        fprintf (out, "\n");
        for (int i = 0; cmd->opts [i].name; i++) {
            char left [64];
            snprintf (left, sizeof left, "%s%s%s%s%s", cmd->opts [i].name,
                      cmd->opts [i].alias? ", ": "", cmd->opts [i].alias? cmd->opts [i].alias: "",
                      cmd->opts [i].arg? " ": "", cmd->opts [i].arg? cmd->opts [i].arg: "");
            char help [1024];
            fprintf (out, "  %-22s %s\n", left, s_help (cmd, &cmd->opts [i], help, sizeof help));
        }
    }
    fprintf (out, "  %-22s %s\n", "-h, --help", "this text");
}

int
xxl_ctl_usage_error (ctl_t *self, const ctl_cmd_t *cmd, const char *format, ...)
{
    char text [512];
    va_list args;
    va_start (args, format);
    vsnprintf (text, sizeof text, format, args);
    va_end (args);
    xxl_ctl_fail (self, XXL_CTL_USAGE, "%s", text);
    if (cmd)
        xxl_ctl_args_usage (cmd, self->err, 0);
    return XXL_CTL_USAGE;
}

//  The flag's index in the command's table (by name or alias), or -1
static int
s_opt_index (const ctl_cmd_t *cmd, const char *name)
{
    for (int i = 0; cmd->opts && cmd->opts [i].name; i++)
        if (streq (cmd->opts [i].name, name)
        || (cmd->opts [i].alias && streq (cmd->opts [i].alias, name)))
            return i;
    return -1;
}

int
xxl_ctl_args_parse (ctl_t *self, const ctl_cmd_t *cmd, int argc, char **argv, ctl_args_t *args)
{
    memset (args, 0, sizeof *args);
    assert (xxl_ctl_opts_count (cmd) <= XXL_CTL_MAX_OPTS);
    int only_positional = 0;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv [i];
        if (!only_positional && streq (arg, "--")) {
            only_positional = 1;
            continue;
        }
        if (!only_positional && arg [0] == '-' && arg [1]) {
            if (streq (arg, "-h") || streq (arg, "--help")) {
                xxl_ctl_args_usage (cmd, self->out, 1);
                return -1;
            }
            char name [64];
            const char *inline_value = NULL;
            const char *eq = strncmp (arg, "--", 2) == 0? strchr (arg, '='): NULL;
            if (eq && (size_t) (eq - arg) < sizeof name) {
                memcpy (name, arg, (size_t) (eq - arg));
                name [eq - arg] = 0;
                inline_value = eq + 1;
            }
            else
                snprintf (name, sizeof name, "%s", arg);
            int index = s_opt_index (cmd, name);
            if (index < 0)
                return xxl_ctl_usage_error (self, cmd, "unknown flag '%s'", arg);
            if (cmd->opts [index].arg) {
                if (inline_value)
                    args->value [index] = inline_value;
                else
                if (i + 1 < argc)
                    args->value [index] = argv [++i];
                else
                    return xxl_ctl_usage_error (self, cmd, "%s needs a value (%s)", name,
                                                cmd->opts [index].arg);
            }
            else {
                if (inline_value)
                    return xxl_ctl_usage_error (self, cmd, "%s takes no value", name);
                args->value [index] = "";
            }
        }
        else {
            if (args->npos >= cmd->max_pos || args->npos >= XXL_CTL_MAX_POS)
                return xxl_ctl_usage_error (self, cmd, "unexpected argument '%s'", arg);
            args->pos [args->npos++] = arg;
        }
    }
    if (args->npos < cmd->min_pos)
        return xxl_ctl_usage_error (self, cmd, "missing argument");
    return 0;
}

//  Validates and converts flag index of args; 0 or the exit status
static int
s_check_opt (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args, int index)
{
    const ctl_opt_t *opt = &cmd->opts [index];
    const char *text = args->value [index];
    int64_t min = 0, max = 0;
    if (opt->kind == CTL_INT || opt->kind == CTL_REAL)
        s_range (cmd, opt, &min, &max);
    switch (opt->kind) {
        case CTL_INT:
            if (xxl_ctl_parse_int (text, min, max, &args->num [index]))
                return xxl_ctl_usage_error (self, cmd, "%s must be a whole number from %" PRId64
                                            " to %" PRId64 ", not '%s'",
                                            opt->name, min, max, text);
            break;
        case CTL_ID:
            if (xxl_ctl_parse_int (text, 1, INT64_MAX, &args->num [index]))
                return xxl_ctl_usage_error (self, cmd, "%s must be a positive number, not '%s'",
                                            opt->name, text);
            break;
        case CTL_REAL: {
            char *end = NULL;
            double value = strtod (text, &end);
            if (!*text || *end || !(value >= min && value <= max))
                return xxl_ctl_usage_error (self, cmd, "%s must be a number from %" PRId64
                                            " to %" PRId64, opt->name, min, max);
            args->real [index] = value;
            break;
        }
        case CTL_TIME:
            if ((args->num [index] = s_parse_time (text)) < 0)
                return xxl_ctl_usage_error (self, cmd, "%s must be epoch ms or"
                                            " YYYY-MM-DD[ HH:MM[:SS]], not '%s'", opt->name, text);
            break;
        case CTL_ENUM: {
            char names [256] = "";
            for (int c = 0; opt->choices [c].name; c++) {
                if (streq (opt->choices [c].name, text)) {
                    args->num [index] = opt->choices [c].value;
                    return 0;
                }
                size_t used = strlen (names);
                snprintf (names + used, sizeof names - used, "%s%s",
                          c == 0? "": opt->choices [c + 1].name? ", ": " or ",
                          opt->choices [c].name);
            }
            return xxl_ctl_usage_error (self, cmd, "%s must be %s, not '%s'",
                                        opt->name, names, text);
        }
        case CTL_SHARD:
            if (s_parse_shard (text))
                return xxl_ctl_usage_error (self, cmd, "%s must be I/N with 0 <= I < N,"
                                            " not '%s'", opt->name, text);
            break;
        case CTL_FILE: {
            //  The field's limit, else what one frame can carry
            char reason [512];
            const xxl_field_t *field = opt->key? s_field (cmd, opt, NULL): NULL;
            size_t limit = field && field->type == XXL_FIELD_STR && field->max > 0
                         ? (size_t) field->max: XXL_MSG_MAX_FRAME;
            args->text [index] = s_read_file (opt->name, text, limit,
                                              opt->key? opt->key: "the text",
                                              reason, sizeof reason);
            if (!args->text [index])
                return xxl_ctl_usage_error (self, NULL, "%s", reason);
            break;
        }
        default:
            break;
    }
    return 0;
}

int
xxl_ctl_opts_count (const ctl_cmd_t *cmd)
{
    int count = 0;
    while (cmd->opts && cmd->opts [count].name)
        count++;
    return count;
}

int
xxl_ctl_args_check (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    for (int i = 0; i < args->npos; i++)
        if (cmd->pos [i].kind == CTL_ID
        &&  xxl_ctl_parse_int (args->pos [i], 1, INT64_MAX, &args->pos_num [i]))
            return xxl_ctl_usage_error (self, cmd, "%s must be a positive number, not '%s'",
                                        cmd->pos [i].what, args->pos [i]);
    int rc = cmd->check? cmd->check (self, cmd, args): 0;
    //  Whole numbers and words first, then decimals, then files: a file
    //  is read only when every other value passed
    for (int pass = 0; pass < 3; pass++)
        for (int i = 0; rc == 0 && cmd->opts && cmd->opts [i].name; i++) {
            ctl_kind_t kind = cmd->opts [i].kind;
            if (args->value [i]
            &&  pass == (kind == CTL_REAL? 1: kind == CTL_FILE? 2: 0))
                rc = s_check_opt (self, cmd, args, i);
        }
    return rc;
}

void
xxl_ctl_args_free (ctl_args_t *args)
{
    for (int i = 0; i < XXL_CTL_MAX_OPTS; i++) {
        free (args->text [i]);
        args->text [i] = NULL;
    }
}

const char *
xxl_ctl_args_get (const ctl_cmd_t *cmd, ctl_args_t *args, const char *name)
{
    int index = s_opt_index (cmd, name);
    assert (index >= 0);
    return args->value [index];
}

int64_t
xxl_ctl_args_num (const ctl_cmd_t *cmd, ctl_args_t *args, const char *name, int64_t dflt)
{
    int index = s_opt_index (cmd, name);
    assert (index >= 0);
    return args->value [index]? args->num [index]: dflt;
}

int
xxl_ctl_args_count (const ctl_cmd_t *cmd, ctl_args_t *args, ...)
{
    int count = 0;
    va_list names;
    va_start (names, args);
    for (const char *name = va_arg (names, const char *); name;
         name = va_arg (names, const char *))
        count += xxl_ctl_args_get (cmd, args, name) != NULL;
    va_end (names);
    return count;
}

int
xxl_ctl_args_encode (const ctl_cmd_t *cmd, ctl_args_t *args, xxl_enc_t *enc)
{
    for (int i = 0; i < args->npos; i++) {
        const ctl_pos_t *pos = &cmd->pos [i];
        if (pos->key && pos->kind == CTL_ID)
            xxl_enc_kint (enc, pos->key, args->pos_num [i]);
        else
        if (pos->key)
            xxl_enc_kstr (enc, pos->key, args->pos [i]);
    }
    int count = 0;
    for (int i = 0; cmd->opts && cmd->opts [i].name; i++) {
        const ctl_opt_t *opt = &cmd->opts [i];
        const char *value = args->value [i];
        if (!value || !opt->key)
            continue;
        switch (opt->kind) {
            case CTL_BOOL:
                xxl_enc_kbool (enc, opt->key, 1);
                break;
            case CTL_INT:
            case CTL_ID:
            case CTL_TIME:
            case CTL_ENUM:
                xxl_enc_kint (enc, opt->key, args->num [i]);
                break;
            case CTL_REAL:
                xxl_enc_key (enc, opt->key);
                xxl_enc_double (enc, args->real [i]);
                break;
            case CTL_FILE:
                xxl_enc_kstr (enc, opt->key, args->text [i]);
                break;
            case CTL_SCHEDULE:
                xxl_enc_kstr (enc, "scheduleType", opt->key);
                xxl_enc_kstr (enc, "scheduleConf", value);
                break;
            default:
                xxl_enc_kstr (enc, opt->key, value);
                break;
        }
        count++;
    }
    return count;
}
