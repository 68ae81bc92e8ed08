/*  xxl_ctl.c -- xxl-ctl: the command-line client of the xxl scheduler.

    One command per run: global flags (--api, --token, --json, --timeout,
    -c FILE), then `NOUN VERB [ARGS] [FLAGS]` looked up in s_commands.
    Each command builds one api request with the client library's encoder
    (field names are the scheduler's camelCase names), waits for the reply
    and prints it: with --json the reply's content as one JSON document
    (xxl_msg_to_json), otherwise aligned tables for lists and `key: value`
    lines for single objects.  `cron next` needs no scheduler: it runs the
    cron library locally.  Every failure prints one error (a line on err,
    or {"error": ...} on out with --json) and returns a non-zero status:
    1 for server, connection and reply problems, 2 for usage errors.
    Replies are never trusted: a missing or ill-typed field gives
    "unexpected reply", never a crash.
*/

#include "xxl_ctl.h"
#include "xxl/msg.h"
#include "xxl/client.h"
#include "xxl/cron.h"

#include <czmq.h>
#include <inttypes.h>
#include <time.h>

#define XXL_CTL_DEFAULT_API     "tcp://127.0.0.1:7070"
#define XXL_CTL_DEFAULT_TIMEOUT 5000
#define XXL_CTL_MAX_OPTS        24
#define XXL_CTL_MAX_POS         4
#define XXL_CTL_CELL_MAX        60      //  chars of free text in a table cell

//  --------------------------------------------------------------------
//  Command table types

typedef struct {
    const char *name;                   //  long form, e.g. "--title"
    const char *alias;                  //  short form or NULL
    const char *arg;                    //  value name, NULL for a switch
    const char *help;
} ctl_opt_t;

typedef struct {
    const char *value [XXL_CTL_MAX_OPTS];   //  per option; "" for a set switch
    const char *pos [XXL_CTL_MAX_POS];
    int npos;
} ctl_args_t;

typedef struct _ctl_t ctl_t;
typedef struct _ctl_cmd_t ctl_cmd_t;
typedef int (ctl_fn_t) (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args);

struct _ctl_cmd_t {
    const char *noun;
    const char *verb;                   //  NULL: a one-word command
    const char *synopsis;               //  arguments and flags after the name
    const char *summary;
    const ctl_opt_t *opts;
    int min_pos, max_pos;
    ctl_fn_t *fn;
};

struct _ctl_t {
    FILE *out;
    FILE *err;
    int json;
    char *api;
    char *token;
    int timeout;
    xxl_client_t *client;
};

//  --------------------------------------------------------------------
//  Small helpers

//  Strict integer parse; 0 or -1
static int
s_parse_int (const char *text, int64_t min, int64_t max, int64_t *value)
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

static char *
s_strndup (const char *text, size_t size)
{
    char *copy = (char *) malloc (size + 1);
    if (copy) {
        memcpy (copy, text, size);
        copy [size] = 0;
    }
    return copy;
}

//  Local "yyyy-mm-dd HH:MM:SS" of epoch ms into buf; "-" when not set
static const char *
s_time_text (int64_t ms, char *buf, size_t buflen)
{
    if (ms <= 0) {
        snprintf (buf, buflen, "-");
        return buf;
    }
    time_t seconds = (time_t) (ms / 1000);
    struct tm tm;
    if (!localtime_r (&seconds, &tm) || !strftime (buf, buflen, "%Y-%m-%d %H:%M:%S", &tm))
        snprintf (buf, buflen, "%" PRId64, ms);
    return buf;
}

static void
s_obj_str (msgpack_object *obj, const char *text, size_t size)
{
    obj->type = MSGPACK_OBJECT_STR;
    obj->via.str.ptr = text;
    obj->via.str.size = (uint32_t) size;
}

//  Prints obj as one compact JSON document and a newline
static int
s_print_json (ctl_t *self, const msgpack_object *obj)
{
    char *text = xxl_msg_to_json (obj, 0);
    if (!text)
        return -1;
    fprintf (self->out, "%s\n", text);
    free (text);
    return 0;
}

//  Reports a failure (a line on err, or {"error": ...} with --json) and
//  returns status
static int
s_fail (ctl_t *self, int status, const char *format, ...)
    __attribute__ ((format (printf, 3, 4)));

static int
s_fail (ctl_t *self, int status, const char *format, ...)
{
    char text [1024];
    va_list args;
    va_start (args, format);
    vsnprintf (text, sizeof text, format, args);
    va_end (args);
    if (self->json) {
        msgpack_object_kv kv;
        s_obj_str (&kv.key, "error", 5);
        s_obj_str (&kv.val, text, strlen (text));
        msgpack_object root;
        root.type = MSGPACK_OBJECT_MAP;
        root.via.map.size = 1;
        root.via.map.ptr = &kv;
        if (s_print_json (self, &root))
            fprintf (self->out, "{\"error\": \"out of memory\"}\n");
    }
    else
        fprintf (self->err, "xxl-ctl: %s\n", text);
    fflush (self->out);
    return status;
}

//  --------------------------------------------------------------------
//  Reading reply objects (never trusting their shape)

static const msgpack_object *
s_get (const msgpack_object *map, const char *key)
{
    const msgpack_object *value = xxl_msg_get (map, key);
    return value && value->type != MSGPACK_OBJECT_NIL? value: NULL;
}

//  0 and *value when map [key] is an integer, else -1
static int
s_get_int (const msgpack_object *map, const char *key, int64_t *value)
{
    const msgpack_object *obj = s_get (map, key);
    if (obj && obj->type == MSGPACK_OBJECT_POSITIVE_INTEGER && obj->via.u64 <= INT64_MAX) {
        *value = (int64_t) obj->via.u64;
        return 0;
    }
    if (obj && obj->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) {
        *value = obj->via.i64;
        return 0;
    }
    return -1;
}

static int64_t
s_int_or (const msgpack_object *map, const char *key, int64_t dflt)
{
    int64_t value;
    return s_get_int (map, key, &value) == 0? value: dflt;
}

//  A scalar as new text: strings as they are, numbers in decimal, arrays
//  of scalars comma-joined, anything else as JSON; "" when missing
static char *
s_obj_text (const msgpack_object *obj)
{
    char number [64];
    if (!obj)
        return strdup ("");
    switch (obj->type) {
        case MSGPACK_OBJECT_NIL:
            return strdup ("");
        case MSGPACK_OBJECT_BOOLEAN:
            return strdup (obj->via.boolean? "true": "false");
        case MSGPACK_OBJECT_POSITIVE_INTEGER:
            snprintf (number, sizeof number, "%" PRIu64, obj->via.u64);
            return strdup (number);
        case MSGPACK_OBJECT_NEGATIVE_INTEGER:
            snprintf (number, sizeof number, "%" PRId64, obj->via.i64);
            return strdup (number);
        case MSGPACK_OBJECT_FLOAT32:
        case MSGPACK_OBJECT_FLOAT64:
            snprintf (number, sizeof number, "%g", obj->via.f64);
            return strdup (number);
        case MSGPACK_OBJECT_STR:
            return s_strndup (obj->via.str.ptr, obj->via.str.size);
        case MSGPACK_OBJECT_ARRAY: {
            int scalars = 1;
            for (uint32_t i = 0; i < obj->via.array.size; i++) {
                msgpack_object_type type = obj->via.array.ptr [i].type;
                if (type == MSGPACK_OBJECT_ARRAY || type == MSGPACK_OBJECT_MAP)
                    scalars = 0;
            }
            if (scalars) {
                char *joined = strdup ("");
                for (uint32_t i = 0; i < obj->via.array.size && joined; i++) {
                    char *item = s_obj_text (&obj->via.array.ptr [i]);
                    char *next = item? zsys_sprintf ("%s%s%s", joined, i? ",": "", item): NULL;
                    free (item);
                    free (joined);
                    joined = next;
                }
                return joined;
            }
            break;
        }
        default:
            break;
    }
    char *json = xxl_msg_to_json (obj, 0);
    return json? json: strdup ("?");
}

static char *
s_text_of (const msgpack_object *map, const char *key)
{
    return s_obj_text (s_get (map, key));
}

//  First line of text (also cut at an HTML <br>), at most max chars; in place
static char *
s_first_line (char *text, size_t max)
{
    if (!text)
        return NULL;
    char *br = strstr (text, "<br>");
    if (br)
        *br = 0;
    text [strcspn (text, "\r\n")] = 0;
    if (strlen (text) > max) {
        size_t cut = max - 3;
        while (cut > 0 && ((unsigned char) text [cut] & 0xC0) == 0x80)
            cut--;                      //  don't split a UTF-8 sequence
        strcpy (text + cut, "...");
    }
    return text;
}

//  --------------------------------------------------------------------
//  Tables

typedef struct {
    int cols;
    char **cells;                       //  row-major, header row first
    size_t count, cap;
} ctl_table_t;

static void
s_table_add (ctl_table_t *table, char *cell)
{
    if (table->count == table->cap) {
        size_t cap = table->cap? table->cap * 2: 64;
        char **cells = (char **) realloc (table->cells, cap * sizeof (char *));
        if (!cells) {
            free (cell);
            return;
        }
        table->cells = cells;
        table->cap = cap;
    }
    table->cells [table->count++] = cell? cell: strdup ("");
}

static void
s_table_init (ctl_table_t *table, int cols, const char **headers)
{
    memset (table, 0, sizeof *table);
    table->cols = cols;
    for (int i = 0; i < cols; i++)
        s_table_add (table, strdup (headers [i]));
}

//  UTF-8 aware display width (counts code points)
static size_t
s_width (const char *text)
{
    size_t width = 0;
    for (const unsigned char *p = (const unsigned char *) text; *p; p++)
        if ((*p & 0xC0) != 0x80)
            width++;
    return width;
}

static void
s_table_print (ctl_table_t *table, FILE *out, const char *empty)
{
    size_t rows = table->count / (size_t) table->cols;
    if (rows <= 1 && empty)
        fprintf (out, "%s\n", empty);
    else {
        size_t width [32] = { 0 };
        for (size_t i = 0; i < rows * (size_t) table->cols; i++) {
            size_t w = s_width (table->cells [i]);
            if (w > width [i % (size_t) table->cols])
                width [i % (size_t) table->cols] = w;
        }
        for (size_t r = 0; r < rows; r++) {
            for (int c = 0; c < table->cols; c++) {
                const char *cell = table->cells [r * (size_t) table->cols + (size_t) c];
                if (c == table->cols - 1)
                    fprintf (out, "%s\n", cell);
                else
                    fprintf (out, "%s%*s", cell,
                             (int) (width [c] - s_width (cell) + 2), "");
            }
        }
    }
    for (size_t i = 0; i < table->count; i++)
        free (table->cells [i]);
    free (table->cells);
    memset (table, 0, sizeof *table);
}

//  Prints a map as aligned `key: value` lines; times (keys ending in
//  "Time"/"time") as local time, multi-line strings indented below the key
static void
s_print_object (ctl_t *self, const msgpack_object *map)
{
    size_t keywidth = 0;
    for (uint32_t i = 0; i < map->via.map.size; i++) {
        const msgpack_object *key = &map->via.map.ptr [i].key;
        if (key->type == MSGPACK_OBJECT_STR && key->via.str.size > keywidth)
            keywidth = key->via.str.size;
    }
    for (uint32_t i = 0; i < map->via.map.size; i++) {
        char *key = s_obj_text (&map->via.map.ptr [i].key);
        const msgpack_object *val = &map->via.map.ptr [i].val;
        char *value = NULL;
        size_t keylen = key? strlen (key): 0;
        int is_time = keylen >= 4 && strcasecmp (key + keylen - 4, "time") == 0;
        if (is_time && (val->type == MSGPACK_OBJECT_POSITIVE_INTEGER
                     || val->type == MSGPACK_OBJECT_NEGATIVE_INTEGER
                     || val->type == MSGPACK_OBJECT_NIL)) {
            char buf [64];
            int64_t ms = val->type == MSGPACK_OBJECT_POSITIVE_INTEGER? (int64_t) val->via.u64:
                         val->type == MSGPACK_OBJECT_NEGATIVE_INTEGER? val->via.i64: 0;
            value = strdup (s_time_text (ms, buf, sizeof buf));
        }
        else
            value = s_obj_text (val);
        if (key && value) {
            if (strchr (value, '\n')) {
                fprintf (self->out, "%s:\n", key);
                char *save = NULL;
                for (char *line = strtok_r (value, "\n", &save); line;
                     line = strtok_r (NULL, "\n", &save))
                    fprintf (self->out, "    %s\n", line);
            }
            else
                fprintf (self->out, "%s:%*s%s\n", key,
                         (int) (keywidth - keylen + 1), "", value);
        }
        free (key);
        free (value);
    }
}

//  --------------------------------------------------------------------
//  Talking to the scheduler

//  Starts a request; NULL (reported) when the client cannot be made
static xxl_enc_t *
s_request (ctl_t *self, const char *type)
{
    if (!self->client) {
        self->client = xxl_client_new (self->api, self->token);
        if (!self->client) {
            s_fail (self, XXL_CTL_FAILED, "cannot use api endpoint '%s' (expected e.g. %s)",
                    self->api, XXL_CTL_DEFAULT_API);
            return NULL;
        }
        xxl_client_set_timeout (self->client, self->timeout);
    }
    return xxl_client_request (self->client, type);
}

//  Sends the request and returns a 200 reply, or NULL after reporting
static xxl_msg_t *
s_call (ctl_t *self)
{
    char reason [512] = "";
    xxl_msg_t *reply = xxl_client_call (self->client, reason, sizeof reason);
    if (!reply) {
        if (strncmp (reason, "no reply", 8) == 0 || !*reason)
            s_fail (self, XXL_CTL_FAILED, "no reply from the scheduler at %s within %d ms",
                    self->api, self->timeout);
        else
            s_fail (self, XXL_CTL_FAILED, "%s", reason);
        return NULL;
    }
    int code = xxl_reply_code (reply);
    if (code != XXL_OK) {
        const char *text = xxl_reply_msg (reply);
        if (text && *text)
            s_fail (self, XXL_CTL_FAILED, "%s", text);
        else
            s_fail (self, XXL_CTL_FAILED, "the scheduler answered code %d", code);
        xxl_msg_destroy (&reply);
    }
    return reply;
}

//  The reply's content when it is a map, else NULL after reporting
static const msgpack_object *
s_content (ctl_t *self, xxl_msg_t *reply)
{
    const msgpack_object *content = xxl_reply_content (reply);
    if (!content || content->type != MSGPACK_OBJECT_MAP) {
        s_fail (self, XXL_CTL_FAILED, "unexpected reply: %s",
                content? "content is not a map": "no content");
        return NULL;
    }
    return content;
}

//  content [key] when it is an array, else NULL after reporting
static const msgpack_object *
s_content_array (ctl_t *self, const msgpack_object *content, const char *key)
{
    const msgpack_object *array = s_get (content, key);
    if (!array || array->type != MSGPACK_OBJECT_ARRAY) {
        s_fail (self, XXL_CTL_FAILED, "unexpected reply: no '%s' list", key);
        return NULL;
    }
    return array;
}

//  What a reply's content must hold under a key
typedef enum {
    CTL_ANY,                            //  any map
    CTL_ID,                             //  a positive integer
    CTL_LIST,                           //  an array
    CTL_INTS                            //  an array of non-negative integers
} ctl_shape_t;

//  Sends the built request; checks that content [key] has the shape;
//  on success prints the content as JSON (with --json) and returns it
//  through *reply_p (caller destroys).  Returns the exit status.
static int
s_exchange (ctl_t *self, xxl_msg_t **reply_p, const msgpack_object **content_p,
            const char *key, ctl_shape_t shape)
{
    *reply_p = s_call (self);
    if (!*reply_p)
        return XXL_CTL_FAILED;
    *content_p = s_content (self, *reply_p);
    if (!*content_p) {
        xxl_msg_destroy (reply_p);
        return XXL_CTL_FAILED;
    }
    const msgpack_object *value = key? s_get (*content_p, key): NULL;
    int bad = 0;
    if (shape == CTL_ID)
        bad = !value || value->type != MSGPACK_OBJECT_POSITIVE_INTEGER;
    else
    if (shape == CTL_LIST || shape == CTL_INTS) {
        bad = !value || value->type != MSGPACK_OBJECT_ARRAY;
        for (uint32_t i = 0; !bad && shape == CTL_INTS && i < value->via.array.size; i++)
            bad = value->via.array.ptr [i].type != MSGPACK_OBJECT_POSITIVE_INTEGER;
    }
    if (bad) {
        xxl_msg_destroy (reply_p);
        return s_fail (self, XXL_CTL_FAILED, "unexpected reply: no valid '%s'%s", key,
                       shape == CTL_ID? " number": shape == CTL_INTS? " list of numbers": " list");
    }
    if (self->json && s_print_json (self, *content_p)) {
        xxl_msg_destroy (reply_p);
        return s_fail (self, XXL_CTL_FAILED, "out of memory");
    }
    return XXL_CTL_OK;
}

//  For requests answered with {"id": N}: prints "<what> N <done>"
static int
s_simple (ctl_t *self, const char *what, const char *done)
{
    xxl_msg_t *reply;
    const msgpack_object *content;
    int rc = s_exchange (self, &reply, &content, "id", CTL_ID);
    if (rc)
        return rc;
    int64_t id = s_int_or (content, "id", 0);
    if (!self->json)
        fprintf (self->out, "%s %" PRId64 " %s\n", what, id, done);
    xxl_msg_destroy (&reply);
    return rc;
}

//  Prints the content as key: value lines (or JSON)
static int
s_show (ctl_t *self)
{
    xxl_msg_t *reply;
    const msgpack_object *content;
    int rc = s_exchange (self, &reply, &content, NULL, CTL_ANY);
    if (rc)
        return rc;
    if (!self->json)
        s_print_object (self, content);
    xxl_msg_destroy (&reply);
    return XXL_CTL_OK;
}

//  --------------------------------------------------------------------
//  Argument helpers for commands

static int
s_opt_index (const ctl_cmd_t *cmd, const char *name)
{
    for (int i = 0; cmd->opts && cmd->opts [i].name; i++)
        if (streq (cmd->opts [i].name, name))
            return i;
    return -1;
}

static const char *
s_opt (const ctl_cmd_t *cmd, ctl_args_t *args, const char *name)
{
    int index = s_opt_index (cmd, name);
    assert (index >= 0);
    return args->value [index];
}

static void s_command_usage (const ctl_cmd_t *cmd, FILE *out, int full);

//  A usage error: message, the command's usage on err, status 2
static int
s_usage_error (ctl_t *self, const ctl_cmd_t *cmd, const char *format, ...)
    __attribute__ ((format (printf, 3, 4)));

static int
s_usage_error (ctl_t *self, const ctl_cmd_t *cmd, const char *format, ...)
{
    char text [512];
    va_list args;
    va_start (args, format);
    vsnprintf (text, sizeof text, format, args);
    va_end (args);
    s_fail (self, XXL_CTL_USAGE, "%s", text);
    if (cmd)
        s_command_usage (cmd, self->err, 0);
    return XXL_CTL_USAGE;
}

//  Parses an integer flag or argument; -1 after a usage error
static int
s_int_arg (ctl_t *self, const ctl_cmd_t *cmd, const char *what, const char *text,
           int64_t min, int64_t max, int64_t *value)
{
    if (s_parse_int (text, min, max, value)) {
        s_usage_error (self, cmd, "%s must be a whole number from %" PRId64 " to %" PRId64
                       ", not '%s'", what, min, max, text);
        return -1;
    }
    return 0;
}

static int
s_id_arg (ctl_t *self, const ctl_cmd_t *cmd, const char *what, const char *text, int64_t *id)
{
    if (s_parse_int (text, 1, INT64_MAX, id)) {
        s_usage_error (self, cmd, "%s must be a positive number, not '%s'", what, text);
        return -1;
    }
    return 0;
}

//  Reads a whole file ('-' = stdin) into a new string, or NULL with reason
static char *
s_read_file (const char *path, char *reason, size_t reasonlen)
{
    FILE *file = streq (path, "-")? stdin: fopen (path, "rb");
    if (!file) {
        snprintf (reason, reasonlen, "cannot read '%s': %s", path, strerror (errno));
        return NULL;
    }
    size_t size = 0, cap = 4096;
    char *data = (char *) malloc (cap);
    while (data) {
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
        size_t got = fread (data + size, 1, cap - size - 1, file);
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
    data [size] = 0;
    if (strlen (data) != size) {
        snprintf (reason, reasonlen, "'%s' holds a NUL byte; glue source must be text", path);
        free (data);
        return NULL;
    }
    return data;
}

//  --------------------------------------------------------------------
//  Commands: group

static const ctl_opt_t s_group_add_opts [] = {
    { "--title", NULL, "T", "title shown for the group (default: none)" },
    { "--address-list", NULL, "A,B", "manual group with these agent addresses (addressType 1);"
                                     " without it agents register themselves" },
    { NULL, NULL, NULL, NULL }
};

static int
s_group_add (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    const char *title = s_opt (cmd, args, "--title");
    const char *list = s_opt (cmd, args, "--address-list");
    xxl_enc_t *enc = s_request (self, "GROUP_ADD");
    if (!enc)
        return XXL_CTL_FAILED;
    xxl_enc_kstr (enc, "appname", args->pos [0]);
    if (title)
        xxl_enc_kstr (enc, "title", title);
    if (list) {
        xxl_enc_kint (enc, "addressType", 1);
        xxl_enc_kstr (enc, "addressList", list);
    }
    return s_simple (self, "group", "added");
}

static int
s_group_list (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    (void) cmd;
    (void) args;
    if (!s_request (self, "GROUP_LIST"))
        return XXL_CTL_FAILED;
    xxl_msg_t *reply;
    const msgpack_object *content;
    int rc = s_exchange (self, &reply, &content, "groups", CTL_LIST);
    if (rc || self->json) {
        xxl_msg_destroy (&reply);
        return rc;
    }
    const msgpack_object *groups = s_content_array (self, content, "groups");
    if (groups) {
        ctl_table_t table;
        const char *headers [] = { "ID", "APPNAME", "TITLE", "TYPE", "ADDRESSES" };
        s_table_init (&table, 5, headers);
        for (uint32_t i = 0; i < groups->via.array.size; i++) {
            const msgpack_object *group = &groups->via.array.ptr [i];
            if (group->type != MSGPACK_OBJECT_MAP)
                continue;               //  not a row: skip it
            s_table_add (&table, s_text_of (group, "id"));
            s_table_add (&table, s_text_of (group, "appname"));
            s_table_add (&table, s_first_line (s_text_of (group, "title"), XXL_CTL_CELL_MAX));
            s_table_add (&table, strdup (s_int_or (group, "addressType", 0) == 1? "manual": "auto"));
            s_table_add (&table, s_text_of (group, "addressList"));
        }
        s_table_print (&table, self->out, "no groups");
    }
    else
        rc = XXL_CTL_FAILED;
    xxl_msg_destroy (&reply);
    return rc;
}

static int
s_group_show (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    (void) cmd;
    xxl_enc_t *enc = s_request (self, "GROUP_SHOW");
    if (!enc)
        return XXL_CTL_FAILED;
    xxl_enc_kstr (enc, "group", args->pos [0]);
    return s_show (self);
}

static const ctl_opt_t s_group_update_opts [] = {
    { "--appname", NULL, "APP", "rename the group's app name" },
    { "--title", NULL, "T", "new title" },
    { "--address-list", NULL, "A,B", "make it a manual group with these addresses" },
    { "--auto", NULL, NULL, "make it an automatic group (agents register themselves)" },
    { NULL, NULL, NULL, NULL }
};

static int
s_group_update (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    const char *app = s_opt (cmd, args, "--appname");
    const char *title = s_opt (cmd, args, "--title");
    const char *list = s_opt (cmd, args, "--address-list");
    int is_auto = s_opt (cmd, args, "--auto") != NULL;
    if (list && is_auto)
        return s_usage_error (self, cmd, "--address-list and --auto exclude each other");
    if (!app && !title && !list && !is_auto)
        return s_usage_error (self, cmd, "nothing to update: give at least one flag");
    xxl_enc_t *enc = s_request (self, "GROUP_UPDATE");
    if (!enc)
        return XXL_CTL_FAILED;
    xxl_enc_kstr (enc, "group", args->pos [0]);
    if (app)
        xxl_enc_kstr (enc, "appname", app);
    if (title)
        xxl_enc_kstr (enc, "title", title);
    if (list) {
        xxl_enc_kint (enc, "addressType", 1);
        xxl_enc_kstr (enc, "addressList", list);
    }
    if (is_auto)
        xxl_enc_kint (enc, "addressType", 0);
    return s_simple (self, "group", "updated");
}

static int
s_group_rm (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    (void) cmd;
    xxl_enc_t *enc = s_request (self, "GROUP_RM");
    if (!enc)
        return XXL_CTL_FAILED;
    xxl_enc_kstr (enc, "group", args->pos [0]);
    return s_simple (self, "group", "removed");
}

//  --------------------------------------------------------------------
//  Commands: job

static const ctl_opt_t s_job_opts [] = {
    { "--group", NULL, "APP|ID", "the executor group (app name or id)" },
    { "--handler", NULL, "NAME", "handler name (optional for GLUE types)" },
    { "--cron", NULL, "EXPR", "schedule type CRON with this expression" },
    { "--fix-rate", NULL, "S", "schedule type FIX_RATE, every S seconds" },
    { "--fix-delay", NULL, "S", "schedule type FIX_DELAY, S seconds after each run ends" },
    { "--param", NULL, "P", "executor parameter" },
    { "--route", NULL, "R", "route strategy (FIRST, ROUND, SHARDING_BROADCAST, ...)" },
    { "--block", NULL, "B", "block strategy (SERIAL_EXECUTION, DISCARD_LATER, COVER_EARLY)" },
    { "--timeout", NULL, "S", "run timeout in seconds (0: none)" },
    { "--retry", NULL, "N", "retries after a failed run" },
    { "--retry-interval", NULL, "S", "seconds before the first retry (default 0: at once)" },
    { "--retry-backoff", NULL, "F", "each further retry waits F times longer (default 1)" },
    { "--retry-max", NULL, "S", "longest wait between retries, seconds (0: no cap)" },
    { "--misfire", NULL, "M", "misfire strategy (DO_NOTHING, FIRE_ONCE_NOW)" },
    { "--glue-type", NULL, "T", "BEAN or GLUE_SHELL, GLUE_PYTHON, GLUE_NODEJS, GLUE_PHP, GLUE_POWERSHELL" },
    { "--glue-source", NULL, "FILE", "glue script read from FILE ('-': stdin)" },
    { "--child", NULL, "ID,ID", "child job ids, triggered after a successful run" },
    { "--desc", NULL, "D", "description" },
    { "--author", NULL, "A", "author" },
    { "--alarm-email", NULL, "E", "alarm e-mail address(es)" },
    { "--timezone", NULL, "Z", "time zone of the cron expression (e.g. Europe/Berlin)" },
    { "--start", NULL, NULL, "start scheduling at once" },
    { NULL, NULL, NULL, NULL }
};

//  Adds the job fields given as flags to enc; returns 0 or an exit status
//  (reported)
static int
s_job_fields (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args, xxl_enc_t *enc, int *count)
{
    static const struct { const char *flag, *key; } strings [] = {
        { "--handler", "executorHandler" }, { "--param", "executorParam" },
        { "--route", "executorRouteStrategy" }, { "--block", "executorBlockStrategy" },
        { "--misfire", "misfireStrategy" }, { "--glue-type", "glueType" },
        { "--child", "childJobId" }, { "--desc", "jobDesc" }, { "--author", "author" },
        { "--alarm-email", "alarmEmail" }, { "--timezone", "timezone" },
        { "--group", "jobGroup" }, { NULL, NULL }
    };
    *count = 0;
    const char *cron = s_opt (cmd, args, "--cron");
    const char *rate = s_opt (cmd, args, "--fix-rate");
    const char *delay = s_opt (cmd, args, "--fix-delay");
    if ((cron != NULL) + (rate != NULL) + (delay != NULL) > 1)
        return s_usage_error (self, cmd, "give only one of --cron, --fix-rate, --fix-delay");
    int64_t timeout = 0, retry = 0;
    const char *timeout_text = s_opt (cmd, args, "--timeout");
    const char *retry_text = s_opt (cmd, args, "--retry");
    if (timeout_text && s_int_arg (self, cmd, "--timeout", timeout_text, 0, 86400 * 365, &timeout))
        return XXL_CTL_USAGE;
    if (retry_text && s_int_arg (self, cmd, "--retry", retry_text, 0, 1000, &retry))
        return XXL_CTL_USAGE;
    int64_t retry_interval = 0, retry_max = 0;
    const char *interval_text = s_opt (cmd, args, "--retry-interval");
    const char *max_text = s_opt (cmd, args, "--retry-max");
    const char *backoff_text = s_opt (cmd, args, "--retry-backoff");
    if (interval_text && s_int_arg (self, cmd, "--retry-interval", interval_text, 0,
                                    86400 * 30, &retry_interval))
        return XXL_CTL_USAGE;
    if (max_text && s_int_arg (self, cmd, "--retry-max", max_text, 0, 86400 * 30, &retry_max))
        return XXL_CTL_USAGE;
    double backoff = 1;
    if (backoff_text) {
        char *end = NULL;
        backoff = strtod (backoff_text, &end);
        if (!*backoff_text || *end || !(backoff >= 1 && backoff <= 100))
            return s_usage_error (self, cmd, "--retry-backoff must be a number from 1 to 100");
    }
    char *source = NULL;
    const char *source_file = s_opt (cmd, args, "--glue-source");
    if (source_file) {
        char reason [512];
        source = s_read_file (source_file, reason, sizeof reason);
        if (!source)
            return s_usage_error (self, NULL, "%s", reason);
    }
    for (int i = 0; strings [i].flag; i++) {
        const char *value = s_opt (cmd, args, strings [i].flag);
        if (value) {
            xxl_enc_kstr (enc, strings [i].key, value);
            (*count)++;
        }
    }
    if (cron || rate || delay) {
        xxl_enc_kstr (enc, "scheduleType", cron? "CRON": rate? "FIX_RATE": "FIX_DELAY");
        xxl_enc_kstr (enc, "scheduleConf", cron? cron: rate? rate: delay);
        (*count)++;
    }
    if (timeout_text) {
        xxl_enc_kint (enc, "executorTimeout", timeout);
        (*count)++;
    }
    if (retry_text) {
        xxl_enc_kint (enc, "executorFailRetryCount", retry);
        (*count)++;
    }
    if (interval_text) {
        xxl_enc_kint (enc, "retryInterval", retry_interval);
        (*count)++;
    }
    if (max_text) {
        xxl_enc_kint (enc, "retryMaxInterval", retry_max);
        (*count)++;
    }
    if (backoff_text) {
        xxl_enc_key (enc, "retryBackoff");
        xxl_enc_double (enc, backoff);
        (*count)++;
    }
    if (source) {
        xxl_enc_kstr (enc, "glueSource", source);
        (*count)++;
        free (source);
    }
    return XXL_CTL_OK;
}

static int
s_job_add (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    const char *glue = s_opt (cmd, args, "--glue-type");
    if (!s_opt (cmd, args, "--group"))
        return s_usage_error (self, cmd, "job add needs --group APP|ID");
    if (!s_opt (cmd, args, "--handler") && (!glue || streq (glue, "BEAN")))
        return s_usage_error (self, cmd, "job add needs --handler NAME (or --glue-type GLUE_...)");
    xxl_enc_t *enc = s_request (self, "JOB_ADD");
    if (!enc)
        return XXL_CTL_FAILED;
    int count;
    int rc = s_job_fields (self, cmd, args, enc, &count);
    if (rc)
        return rc;
    if (s_opt (cmd, args, "--start"))
        xxl_enc_kbool (enc, "start", 1);
    return s_simple (self, "job", "added");
}

static int
s_job_update (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    int64_t id;
    if (s_id_arg (self, cmd, "job id", args->pos [0], &id))
        return XXL_CTL_USAGE;
    int start = s_opt (cmd, args, "--start") != NULL;
    xxl_enc_t *enc = s_request (self, "JOB_UPDATE");
    if (!enc)
        return XXL_CTL_FAILED;
    xxl_enc_kint (enc, "jobId", id);
    int count;
    int rc = s_job_fields (self, cmd, args, enc, &count);
    if (rc)
        return rc;
    if (count == 0 && !start)
        return s_usage_error (self, cmd, "nothing to update: give at least one flag");
    if (count > 0) {
        if (!start)
            return s_simple (self, "job", "updated");
        //  Update quietly, then start; the JSON document is START's reply
        xxl_msg_t *reply = s_call (self);
        if (!reply)
            return XXL_CTL_FAILED;
        xxl_msg_destroy (&reply);
        if (!self->json)
            fprintf (self->out, "job %" PRId64 " updated\n", id);
    }
    enc = s_request (self, "JOB_START");
    if (!enc)
        return XXL_CTL_FAILED;
    xxl_enc_kint (enc, "jobId", id);
    return s_simple (self, "job", "started");
}

//  job rm|start|stop|show ID and glue history ID: one jobId field
static int
s_job_by_id (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args, const char *type,
             const char *done)
{
    int64_t id;
    if (s_id_arg (self, cmd, "job id", args->pos [0], &id))
        return XXL_CTL_USAGE;
    xxl_enc_t *enc = s_request (self, type);
    if (!enc)
        return XXL_CTL_FAILED;
    xxl_enc_kint (enc, "jobId", id);
    return done? s_simple (self, "job", done): XXL_CTL_OK;
}

static int
s_job_rm (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    int rc = s_job_by_id (self, cmd, args, "JOB_RM", NULL);
    if (rc)
        return rc;
    xxl_msg_t *reply;
    const msgpack_object *content;
    rc = s_exchange (self, &reply, &content, "id", CTL_ID);
    if (rc)
        return rc;
    if (!self->json)
        fprintf (self->out, "job %" PRId64 " removed (%" PRId64 " log row(s) deleted)\n",
                 s_int_or (content, "id", 0), s_int_or (content, "deletedLogs", 0));
    xxl_msg_destroy (&reply);
    return XXL_CTL_OK;
}

static const ctl_opt_t s_job_copy_opts [] = {
    { "--desc", NULL, "D", "the copy's description (default: the job's)" },
    { NULL, NULL, NULL, NULL }
};

static int
s_job_copy (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    int64_t id;
    if (s_id_arg (self, cmd, "job id", args->pos [0], &id))
        return XXL_CTL_USAGE;
    const char *desc = s_opt (cmd, args, "--desc");
    xxl_enc_t *enc = s_request (self, "JOB_COPY");
    if (!enc)
        return XXL_CTL_FAILED;
    xxl_enc_kint (enc, "jobId", id);
    if (desc)
        xxl_enc_kstr (enc, "jobDesc", desc);
    return s_simple (self, "job", "added (a stopped copy)");
}

static int
s_job_start (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    return s_job_by_id (self, cmd, args, "JOB_START", "started");
}

static int
s_job_stop (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    return s_job_by_id (self, cmd, args, "JOB_STOP", "stopped");
}

static int
s_job_show (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    int rc = s_job_by_id (self, cmd, args, "JOB_SHOW", NULL);
    return rc? rc: s_show (self);
}

static const ctl_opt_t s_job_list_opts [] = {
    { "--group", NULL, "G", "only jobs of this group (app name or id)" },
    { "--limit", NULL, "N", "at most N jobs (default 1000)" },
    { "--offset", NULL, "N", "skip the first N jobs (default 0)" },
    { "--handler", NULL, "TEXT", "only jobs whose handler contains TEXT" },
    { "--desc", NULL, "TEXT", "only jobs whose description contains TEXT" },
    { "--author", NULL, "TEXT", "only jobs whose author contains TEXT" },
    { "--status", NULL, "S", "only running or stopped jobs" },
    { NULL, NULL, NULL, NULL }
};

//  Fetches group id -> app name for the readable job table into *names_p
//  (NULL when the reply has no usable list); returns the exit status
static int
s_group_names (ctl_t *self, zhash_t **names_p)
{
    *names_p = NULL;
    if (!s_request (self, "GROUP_LIST"))
        return XXL_CTL_FAILED;
    xxl_msg_t *reply = s_call (self);
    if (!reply)
        return XXL_CTL_FAILED;
    const msgpack_object *groups = s_get (xxl_reply_content (reply), "groups");
    zhash_t *names = zhash_new ();
    if (names && groups && groups->type == MSGPACK_OBJECT_ARRAY) {
        zhash_autofree (names);
        for (uint32_t i = 0; i < groups->via.array.size; i++) {
            char *id = s_text_of (&groups->via.array.ptr [i], "id");
            char *app = s_text_of (&groups->via.array.ptr [i], "appname");
            if (id && app && *id && *app)
                zhash_update (names, id, app);
            free (id);
            free (app);
        }
    }
    xxl_msg_destroy (&reply);
    *names_p = names;
    return XXL_CTL_OK;
}

static int
s_job_list (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    const char *group = s_opt (cmd, args, "--group");
    const char *limit_text = s_opt (cmd, args, "--limit");
    const char *offset_text = s_opt (cmd, args, "--offset");
    const char *status = s_opt (cmd, args, "--status");
    int64_t limit = 0, offset = 0;
    if (limit_text && s_int_arg (self, cmd, "--limit", limit_text, 1, 10000, &limit))
        return XXL_CTL_USAGE;
    if (offset_text && s_int_arg (self, cmd, "--offset", offset_text, 0, INT64_MAX, &offset))
        return XXL_CTL_USAGE;
    if (status && strneq (status, "running") && strneq (status, "stopped"))
        return s_usage_error (self, cmd, "--status must be running or stopped, not '%s'", status);
    //  Group names first: a reply's strings may point into the client's
    //  receive buffer, so hold no reply across another request
    zhash_t *names = NULL;
    if (!self->json && s_group_names (self, &names))
        return XXL_CTL_FAILED;
    xxl_enc_t *enc = s_request (self, "JOB_LIST");
    if (!enc) {
        zhash_destroy (&names);
        return XXL_CTL_FAILED;
    }
    if (group)
        xxl_enc_kstr (enc, "group", group);
    if (limit_text)
        xxl_enc_kint (enc, "limit", limit);
    if (offset_text)
        xxl_enc_kint (enc, "offset", offset);
    const char *filters [][2] = { { "--handler", "executorHandler" }, { "--desc", "jobDesc" },
                                  { "--author", "author" } };
    for (size_t i = 0; i < sizeof filters / sizeof filters [0]; i++)
        if (s_opt (cmd, args, filters [i][0]))
            xxl_enc_kstr (enc, filters [i][1], s_opt (cmd, args, filters [i][0]));
    if (status)
        xxl_enc_kint (enc, "triggerStatus", streq (status, "running")? 1: 0);
    xxl_msg_t *reply;
    const msgpack_object *content;
    int rc = s_exchange (self, &reply, &content, "jobs", CTL_LIST);
    const msgpack_object *jobs = rc || self->json? NULL: s_content_array (self, content, "jobs");
    if (!jobs) {
        zhash_destroy (&names);
        xxl_msg_destroy (&reply);
        return rc || self->json? rc: XXL_CTL_FAILED;
    }
    ctl_table_t table;
    const char *headers [] = { "ID", "GROUP", "DESC", "SCHEDULE", "HANDLER", "ROUTE",
                               "STATUS", "NEXT" };
    s_table_init (&table, 8, headers);
    for (uint32_t i = 0; i < jobs->via.array.size; i++) {
        const msgpack_object *job = &jobs->via.array.ptr [i];
        if (job->type != MSGPACK_OBJECT_MAP)
            continue;               //  not a row: skip it
        char buf [64];
        s_table_add (&table, s_text_of (job, "id"));
        char *group_id = s_text_of (job, "jobGroup");
        const char *name = names && group_id? (const char *) zhash_lookup (names, group_id): NULL;
        s_table_add (&table, name? strdup (name): group_id);
        if (name)
            free (group_id);
        s_table_add (&table, s_first_line (s_text_of (job, "jobDesc"), 30));
        char *type = s_text_of (job, "scheduleType");
        char *conf = s_text_of (job, "scheduleConf");
        if (type && conf && *conf && strneq (type, "NONE"))
            s_table_add (&table, zsys_sprintf ("%s %s", type, conf));
        else
            s_table_add (&table, strdup (type && *type? type: "NONE"));
        free (type);
        free (conf);
        char *glue = s_text_of (job, "glueType");
        char *handler = s_text_of (job, "executorHandler");
        if (glue && *glue && strneq (glue, "BEAN") && (!handler || !*handler)) {
            s_table_add (&table, glue);
            free (handler);
        }
        else {
            s_table_add (&table, handler);
            free (glue);
        }
        s_table_add (&table, s_text_of (job, "executorRouteStrategy"));
        s_table_add (&table, strdup (s_int_or (job, "triggerStatus", 0) == 1? "RUNNING": "STOPPED"));
        s_table_add (&table, strdup (s_time_text (s_int_or (job, "triggerNextTime", 0),
                                                  buf, sizeof buf)));
    }
    s_table_print (&table, self->out, "no jobs");
    int64_t total, next;
    if (s_get_int (content, "nextOffset", &next) == 0)
        fprintf (self->out, "(the reply reached the size limit: more from --offset %" PRId64 ")\n",
                 next);
    else
    if (s_get_int (content, "total", &total) == 0 && total > (int64_t) jobs->via.array.size)
        fprintf (self->out, "(%u of %" PRId64 " jobs shown; use --limit, --offset)\n",
                 jobs->via.array.size, total);
    zhash_destroy (&names);
    xxl_msg_destroy (&reply);
    return XXL_CTL_OK;
}

static const ctl_opt_t s_job_trigger_opts [] = {
    { "--param", NULL, "P", "executor parameter for this run (default: the job's)" },
    { "--address", NULL, "A", "run on this agent address instead of routing" },
    { "--shard", NULL, "I/N", "run as shard I of N" },
    { NULL, NULL, NULL, NULL }
};

static int
s_job_trigger (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    int64_t id;
    if (s_id_arg (self, cmd, "job id", args->pos [0], &id))
        return XXL_CTL_USAGE;
    const char *param = s_opt (cmd, args, "--param");
    const char *address = s_opt (cmd, args, "--address");
    const char *shard = s_opt (cmd, args, "--shard");
    if (shard) {
        int64_t index, total;
        const char *slash = strchr (shard, '/');
        char left [32] = "";
        if (slash && (size_t) (slash - shard) < sizeof left)
            memcpy (left, shard, (size_t) (slash - shard));
        if (!slash || s_parse_int (left, 0, 99999, &index)
        ||  s_parse_int (slash + 1, 1, 100000, &total) || index >= total)
            return s_usage_error (self, cmd, "--shard must be I/N with 0 <= I < N, not '%s'", shard);
    }
    xxl_enc_t *enc = s_request (self, "JOB_TRIGGER");
    if (!enc)
        return XXL_CTL_FAILED;
    xxl_enc_kint (enc, "jobId", id);
    if (param)
        xxl_enc_kstr (enc, "executorParam", param);
    if (address)
        xxl_enc_kstr (enc, "address", address);
    if (shard)
        xxl_enc_kstr (enc, "shard", shard);
    xxl_msg_t *reply;
    const msgpack_object *content;
    int rc = s_exchange (self, &reply, &content, "logIds", CTL_INTS);
    if (rc || self->json) {
        xxl_msg_destroy (&reply);
        return rc;
    }
    const msgpack_object *ids = s_content_array (self, content, "logIds");
    if (ids) {
        char *text = s_obj_text (ids);
        for (char *p = text; p && *p; p++)
            if (*p == ',')
                *p = ' ';
        fprintf (self->out, "job %" PRId64 " triggered: log%s %s\n", id,
                 ids->via.array.size == 1? "": "s", text && *text? text: "(none)");
        free (text);
    }
    else
        rc = XXL_CTL_FAILED;
    xxl_msg_destroy (&reply);
    return rc;
}

static const ctl_opt_t s_count_opts [] = {
    { "-n", NULL, "N", "how many fire times (default 5)" },
    { NULL, NULL, NULL, NULL }
};

//  Prints a {"next": [ms, ...]} content as local times
static int
s_print_times (ctl_t *self, const msgpack_object *content)
{
    const msgpack_object *next = s_content_array (self, content, "next");
    if (!next)
        return XXL_CTL_FAILED;
    if (next->via.array.size == 0)
        fprintf (self->out, "no fire times\n");
    for (uint32_t i = 0; i < next->via.array.size; i++) {
        const msgpack_object *item = &next->via.array.ptr [i];
        char buf [64];
        if (item->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
            return s_fail (self, XXL_CTL_FAILED, "unexpected reply: a fire time is not a number");
        fprintf (self->out, "%s\n", s_time_text ((int64_t) item->via.u64, buf, sizeof buf));
    }
    return XXL_CTL_OK;
}

static int
s_job_next (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    int64_t id, count = 0;
    if (s_id_arg (self, cmd, "job id", args->pos [0], &id))
        return XXL_CTL_USAGE;
    const char *count_text = s_opt (cmd, args, "-n");
    if (count_text && s_int_arg (self, cmd, "-n", count_text, 1, 100, &count))
        return XXL_CTL_USAGE;
    xxl_enc_t *enc = s_request (self, "JOB_NEXT");
    if (!enc)
        return XXL_CTL_FAILED;
    xxl_enc_kint (enc, "jobId", id);
    if (count_text)
        xxl_enc_kint (enc, "count", count);
    xxl_msg_t *reply;
    const msgpack_object *content;
    int rc = s_exchange (self, &reply, &content, "next", CTL_INTS);
    if (!rc && !self->json)
        rc = s_print_times (self, content);
    xxl_msg_destroy (&reply);
    return rc;
}

//  --------------------------------------------------------------------
//  Commands: log

static const ctl_opt_t s_log_list_opts [] = {
    { "--job", NULL, "ID", "only runs of this job" },
    { "--group", NULL, "ID", "only runs of this group (its id)" },
    { "--limit", NULL, "N", "at most N runs, newest first (default 100; over 1000:\n"
                            "                         fetched 1000 at a time)" },
    { "--offset", NULL, "N", "skip the newest N runs (default 0)" },
    { "--status", NULL, "S", "only runs that are success, failure or running" },
    { "--from", NULL, "TIME", "only runs triggered at or after TIME (epoch ms, or local\n"
                              "                         YYYY-MM-DD[ HH:MM[:SS]])" },
    { "--to", NULL, "TIME", "only runs triggered at or before TIME" },
    { NULL, NULL, NULL, NULL }
};

//  Epoch ms from digits, or from a local YYYY-MM-DD[ HH:MM[:SS]] (also
//  with a T); -1 when neither
static int64_t
s_parse_time (const char *text)
{
    int64_t ms;
    if (s_parse_int (text, 0, INT64_MAX / 2, &ms) == 0)
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

static int
s_log_list (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    const char *job_text = s_opt (cmd, args, "--job");
    const char *group_text = s_opt (cmd, args, "--group");
    const char *limit_text = s_opt (cmd, args, "--limit");
    const char *offset_text = s_opt (cmd, args, "--offset");
    const char *status = s_opt (cmd, args, "--status");
    const char *from_text = s_opt (cmd, args, "--from");
    const char *to_text = s_opt (cmd, args, "--to");
    int64_t job = 0, group = 0, limit = 100, offset = 0, from = -1, to = -1, log_status = 0;
    if (job_text && s_id_arg (self, cmd, "--job", job_text, &job))
        return XXL_CTL_USAGE;
    if (group_text && s_id_arg (self, cmd, "--group", group_text, &group))
        return XXL_CTL_USAGE;
    if (limit_text && s_int_arg (self, cmd, "--limit", limit_text, 1, 1000000, &limit))
        return XXL_CTL_USAGE;
    if (offset_text && s_int_arg (self, cmd, "--offset", offset_text, 0, INT64_MAX, &offset))
        return XXL_CTL_USAGE;
    if (status) {
        log_status = streq (status, "success")? 1: streq (status, "failure")? 2
                   : streq (status, "running")? 3: 0;
        if (!log_status)
            return s_usage_error (self, cmd, "--status must be success, failure or running,"
                                  " not '%s'", status);
    }
    if (from_text && (from = s_parse_time (from_text)) < 0)
        return s_usage_error (self, cmd, "--from must be epoch ms or YYYY-MM-DD[ HH:MM[:SS]],"
                              " not '%s'", from_text);
    if (to_text && (to = s_parse_time (to_text)) < 0)
        return s_usage_error (self, cmd, "--to must be epoch ms or YYYY-MM-DD[ HH:MM[:SS]],"
                              " not '%s'", to_text);
    //  Pages of at most 1000 (the scheduler's limit), each also cut by the
    //  frame limit (nextOffset), all below the newest id of the first page
    //  so that runs added meanwhile do not shift them
    char *json = NULL;
    size_t json_size = 0;
    FILE *json_out = self->json? open_memstream (&json, &json_size): NULL;
    if (self->json && !json_out)
        return s_fail (self, XXL_CTL_FAILED, "out of memory");
    if (json_out)
        fprintf (json_out, "{\"logs\":[");
    ctl_table_t table;
    const char *headers [] = { "ID", "JOB", "TRIGGER TIME", "TRIGGER", "HANDLE",
                               "ADDRESS", "MSG" };
    s_table_init (&table, 7, headers);
    int64_t got = 0, max_id = 0;
    int rc = XXL_CTL_OK;
    while (got < limit) {
        xxl_enc_t *enc = s_request (self, "LOG_LIST");
        if (!enc) {
            rc = XXL_CTL_FAILED;
            break;
        }
        if (job_text)
            xxl_enc_kint (enc, "jobId", job);
        if (group_text)
            xxl_enc_kint (enc, "jobGroup", group);
        if (log_status)
            xxl_enc_kint (enc, "logStatus", log_status);
        if (from >= 0)
            xxl_enc_kint (enc, "triggerTimeFrom", from);
        if (to >= 0)
            xxl_enc_kint (enc, "triggerTimeTo", to);
        if (max_id > 0)
            xxl_enc_kint (enc, "maxId", max_id);
        int64_t page = limit - got < 1000? limit - got: 1000;
        xxl_enc_kint (enc, "limit", page);
        if (offset)
            xxl_enc_kint (enc, "offset", offset);
        xxl_msg_t *reply = s_call (self);
        const msgpack_object *content = reply? s_content (self, reply): NULL;
        const msgpack_object *logs = content? s_content_array (self, content, "logs"): NULL;
        if (!logs) {
            xxl_msg_destroy (&reply);
            rc = XXL_CTL_FAILED;
            break;
        }
        for (uint32_t i = 0; i < logs->via.array.size; i++) {
            const msgpack_object *log = &logs->via.array.ptr [i];
            if (max_id == 0)
                max_id = s_int_or (log, "id", 0);
            if (json_out) {
                char *text = xxl_msg_to_json (log, 0);
                fprintf (json_out, "%s%s", got + i > 0? ",": "", text? text: "null");
                free (text);
                continue;
            }
            if (log->type != MSGPACK_OBJECT_MAP)
                continue;               //  not a row: skip it
            char buf [64];
            s_table_add (&table, s_text_of (log, "id"));
            s_table_add (&table, s_text_of (log, "jobId"));
            s_table_add (&table, strdup (s_time_text (s_int_or (log, "triggerTime", 0),
                                                      buf, sizeof buf)));
            s_table_add (&table, s_text_of (log, "triggerCode"));
            int64_t handle = s_int_or (log, "handleCode", 0);
            s_table_add (&table, handle? s_text_of (log, "handleCode"): strdup ("-"));
            s_table_add (&table, s_text_of (log, "executorAddress"));
            char *text = s_text_of (log, "handleMsg");
            if (!text || !*text) {
                free (text);
                text = s_text_of (log, "triggerMsg");
            }
            s_table_add (&table, s_first_line (text, XXL_CTL_CELL_MAX));
        }
        int64_t next;
        uint32_t count = logs->via.array.size;
        got += count;
        if (s_get_int (content, "nextOffset", &next) == 0 && next > offset)
            offset = next;
        else {
            offset += count;
            if ((int64_t) count < page)
                got = limit;            //  (a short page: no more rows)
        }
        xxl_msg_destroy (&reply);
    }
    if (json_out) {
        fprintf (json_out, "]}");
        fclose (json_out);
        if (rc == XXL_CTL_OK)
            fprintf (self->out, "%s\n", json);
        free (json);
    }
    if (rc == XXL_CTL_OK && !self->json)
        s_table_print (&table, self->out, "no runs");
    else {
        for (size_t i = 0; i < table.count; i++)
            free (table.cells [i]);
        free (table.cells);
    }
    return rc;
}

//  log show|kill ID: one logId field
static int
s_log_by_id (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args, const char *type,
             int64_t *id)
{
    if (s_id_arg (self, cmd, "log id", args->pos [0], id))
        return XXL_CTL_USAGE;
    xxl_enc_t *enc = s_request (self, type);
    if (!enc)
        return XXL_CTL_FAILED;
    xxl_enc_kint (enc, "logId", *id);
    return XXL_CTL_OK;
}

static int
s_log_show (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    int64_t id;
    int rc = s_log_by_id (self, cmd, args, "LOG_SHOW", &id);
    return rc? rc: s_show (self);
}

static int
s_log_kill (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    int64_t id;
    int rc = s_log_by_id (self, cmd, args, "LOG_KILL", &id);
    if (rc)
        return rc;
    xxl_msg_t *reply = s_call (self);
    if (!reply)
        return XXL_CTL_FAILED;
    //  The agent's answer may carry no content
    const msgpack_object *content = xxl_reply_content (reply);
    if (self->json) {
        if (content && content->type == MSGPACK_OBJECT_MAP)
            s_print_json (self, content);
        else
            fprintf (self->out, "{\"logId\":%" PRId64 "}\n", id);
    }
    else {
        const char *text = xxl_reply_msg (reply);
        fprintf (self->out, "log %" PRId64 " killed%s%s\n", id, *text? ": ": "", text);
    }
    xxl_msg_destroy (&reply);
    return XXL_CTL_OK;
}

static const ctl_opt_t s_log_cat_opts [] = {
    { "-f", "--follow", NULL, "keep reading until the run ends" },
    { NULL, NULL, NULL, NULL }
};

static int
s_log_cat (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    int64_t id;
    if (s_id_arg (self, cmd, "log id", args->pos [0], &id))
        return XXL_CTL_USAGE;
    int follow = s_opt (cmd, args, "-f") != NULL;
    int64_t from = 1, to_line = 0;
    int is_end = 0;
    char *all = NULL;                   //  --json: all pages joined
    size_t size = 0;
    int rc = XXL_CTL_OK;
    while (true) {
        xxl_enc_t *enc = s_request (self, "LOG_CAT");
        if (!enc) {
            rc = XXL_CTL_FAILED;
            break;
        }
        xxl_enc_kint (enc, "logId", id);
        xxl_enc_kint (enc, "fromLineNum", from);
        xxl_msg_t *reply = s_call (self);
        if (!reply) {
            rc = XXL_CTL_FAILED;
            break;
        }
        const msgpack_object *content = s_content (self, reply);
        const msgpack_object *text = content? s_get (content, "logContent"): NULL;
        int64_t to;
        if (content && (s_get_int (content, "toLineNum", &to)
                     || (text && text->type != MSGPACK_OBJECT_STR))) {
            s_fail (self, XXL_CTL_FAILED, "unexpected reply: no toLineNum/logContent");
            content = NULL;
        }
        if (!content) {
            xxl_msg_destroy (&reply);
            rc = XXL_CTL_FAILED;
            break;
        }
        const msgpack_object *end = s_get (content, "isEnd");
        is_end = end && end->type == MSGPACK_OBJECT_BOOLEAN && end->via.boolean;
        int fresh = to >= from;
        if (fresh && text && text->via.str.size > 0) {
            if (self->json) {
                char *bigger = (char *) realloc (all, size + text->via.str.size + 1);
                if (!bigger) {
                    xxl_msg_destroy (&reply);
                    rc = s_fail (self, XXL_CTL_FAILED, "out of memory");
                    break;
                }
                all = bigger;
                memcpy (all + size, text->via.str.ptr, text->via.str.size);
                size += text->via.str.size;
                all [size] = 0;
            }
            else {
                fwrite (text->via.str.ptr, 1, text->via.str.size, self->out);
                fflush (self->out);
            }
        }
        xxl_msg_destroy (&reply);
        if (fresh) {
            to_line = to;
            from = to + 1;
            continue;                   //  next page at once
        }
        if (!follow || is_end)
            break;
        zclock_sleep (500);
    }
    if (rc == XXL_CTL_OK && self->json) {
        msgpack_object_kv kv [4];
        msgpack_object root;
        s_obj_str (&kv [0].key, "logId", 5);
        kv [0].val.type = MSGPACK_OBJECT_POSITIVE_INTEGER;
        kv [0].val.via.u64 = (uint64_t) id;
        s_obj_str (&kv [1].key, "logContent", 10);
        s_obj_str (&kv [1].val, all? all: "", size);
        s_obj_str (&kv [2].key, "toLineNum", 9);
        kv [2].val.type = to_line < 0? MSGPACK_OBJECT_NEGATIVE_INTEGER: MSGPACK_OBJECT_POSITIVE_INTEGER;
        if (to_line < 0)
            kv [2].val.via.i64 = to_line;
        else
            kv [2].val.via.u64 = (uint64_t) to_line;
        s_obj_str (&kv [3].key, "isEnd", 5);
        kv [3].val.type = MSGPACK_OBJECT_BOOLEAN;
        kv [3].val.via.boolean = is_end != 0;
        root.type = MSGPACK_OBJECT_MAP;
        root.via.map.size = 4;
        root.via.map.ptr = kv;
        if (s_print_json (self, &root))
            rc = s_fail (self, XXL_CTL_FAILED, "out of memory");
    }
    free (all);
    return rc;
}

//  --------------------------------------------------------------------
//  Commands: agent, cron, glue, report

static int
s_agent_list (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    (void) cmd;
    (void) args;
    if (!s_request (self, "AGENT_LIST"))
        return XXL_CTL_FAILED;
    xxl_msg_t *reply;
    const msgpack_object *content;
    int rc = s_exchange (self, &reply, &content, "agents", CTL_LIST);
    if (rc || self->json) {
        xxl_msg_destroy (&reply);
        return rc;
    }
    const msgpack_object *agents = s_content_array (self, content, "agents");
    if (agents) {
        ctl_table_t table;
        const char *headers [] = { "APP", "ADDRESS", "STATE", "UPDATED", "HANDLERS" };
        s_table_init (&table, 5, headers);
        for (uint32_t i = 0; i < agents->via.array.size; i++) {
            const msgpack_object *agent = &agents->via.array.ptr [i];
            if (agent->type != MSGPACK_OBJECT_MAP)
                continue;               //  not a row: skip it
            const msgpack_object *connected = s_get (agent, "connected");
            char buf [64];
            s_table_add (&table, s_text_of (agent, "app"));
            s_table_add (&table, s_text_of (agent, "address"));
            s_table_add (&table, strdup (!connected || connected->type != MSGPACK_OBJECT_BOOLEAN? "?":
                                         connected->via.boolean? "connected": "lost"));
            s_table_add (&table, strdup (s_time_text (s_int_or (agent, "updateTime", 0),
                                                      buf, sizeof buf)));
            s_table_add (&table, s_first_line (s_text_of (agent, "handlers"), XXL_CTL_CELL_MAX));
        }
        s_table_print (&table, self->out, "no agents");
    }
    else
        rc = XXL_CTL_FAILED;
    xxl_msg_destroy (&reply);
    return rc;
}

static const ctl_opt_t s_cron_next_opts [] = {
    { "-n", NULL, "N", "how many fire times (default 5)" },
    { "--from", NULL, "MS", "fire times strictly after this epoch ms (default now)" },
    { "--tz", NULL, "ZONE", "IANA time zone of the expression (default UTC, like a job\n"
      "                         without --timezone)" },
    { NULL, NULL, NULL, NULL }
};

static int
s_cron_next (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    const char *count_text = s_opt (cmd, args, "-n");
    const char *from_text = s_opt (cmd, args, "--from");
    const char *tz = s_opt (cmd, args, "--tz");
    int64_t count = 5, after = zclock_time ();
    if (count_text && s_int_arg (self, cmd, "-n", count_text, 1, 1000, &count))
        return XXL_CTL_USAGE;
    if (from_text && s_int_arg (self, cmd, "--from", from_text, 0, INT64_MAX / 2, &after))
        return XXL_CTL_USAGE;
    if (tz && *tz && !xxl_cron_tz_valid (tz))
        return s_fail (self, XXL_CTL_FAILED, "unknown time zone '%s'", tz);
    char reason [256] = "";
    xxl_cron_t *cron = xxl_cron_new (args->pos [0], tz && *tz? tz: NULL, reason, sizeof reason);
    if (!cron)
        return s_fail (self, XXL_CTL_FAILED, "invalid cron expression '%s': %s", args->pos [0],
                       *reason? reason: "not understood");
    int64_t *times = (int64_t *) calloc ((size_t) count, sizeof (int64_t));
    int made = 0;
    while (times && made < count) {
        int64_t next = xxl_cron_next (cron, after);
        if (next <= after)
            break;                      //  no further fire time
        times [made++] = after = next;
    }
    xxl_cron_destroy (&cron);
    if (!times)
        return s_fail (self, XXL_CTL_FAILED, "out of memory");
    if (self->json) {
        fprintf (self->out, "{\"next\":[");
        for (int i = 0; i < made; i++)
            fprintf (self->out, "%s%" PRId64, i? ",": "", times [i]);
        fprintf (self->out, "]}\n");
    }
    else {
        if (made == 0)
            fprintf (self->out, "no fire times\n");
        for (int i = 0; i < made; i++) {
            char buf [64];
            fprintf (self->out, "%s\n", s_time_text (times [i], buf, sizeof buf));
        }
    }
    free (times);
    return XXL_CTL_OK;
}

//  --------------------------------------------------------------------
//  Glue versions and a line diff

//  Text split into lines (in place; a final newline ends the last line)
typedef struct {
    char **lines;
    size_t count;
} ctl_lines_t;

static int
s_lines_split (char *text, ctl_lines_t *out)
{
    size_t cap = 1;
    for (const char *p = text; *p; p++)
        cap += *p == '\n';
    out->lines = (char **) calloc (cap, sizeof (char *));
    out->count = 0;
    if (!out->lines)
        return -1;
    char *p = text;
    while (*p) {
        out->lines [out->count++] = p;
        char *nl = strchr (p, '\n');
        if (!nl)
            break;
        *nl = 0;
        p = nl + 1;
    }
    return 0;
}

#define XXL_CTL_DIFF_CELLS  (4 * 1000 * 1000)   //  LCS table bound
#define XXL_CTL_DIFF_CONTEXT 3

//  Writes a unified diff of a (old) and b (new) to out: lines are matched
//  by a longest common subsequence after the common head and tail are
//  taken off; when what is left would need more than XXL_CTL_DIFF_CELLS
//  cells, says so instead.  Returns 1 when they differ, 0 when not, -1
//  on error.
static int
s_diff (FILE *out, const char *a_name, char *a_text, const char *b_name, char *b_text)
{
    ctl_lines_t a, b;
    if (s_lines_split (a_text, &a))
        return -1;
    if (s_lines_split (b_text, &b)) {
        free (a.lines);
        return -1;
    }
    size_t head = 0;
    while (head < a.count && head < b.count && streq (a.lines [head], b.lines [head]))
        head++;
    size_t tail = 0;
    while (tail < a.count - head && tail < b.count - head
    &&     streq (a.lines [a.count - 1 - tail], b.lines [b.count - 1 - tail]))
        tail++;
    size_t n = a.count - head - tail, m = b.count - head - tail;
    int rc = 0;
    if (n == 0 && m == 0)
        goto done;
    rc = 1;
    fprintf (out, "--- %s\n+++ %s\n", a_name, b_name);
    if ((n + 1) * (m + 1) > XXL_CTL_DIFF_CELLS) {
        fprintf (out, "@@ the versions differ in %zu and %zu lines: too many for a line diff @@\n",
                 n, m);
        goto done;
    }
    //  lcs [i][j]: the LCS of a's middle from i and b's middle from j
    uint32_t *lcs = (uint32_t *) calloc ((n + 1) * (m + 1), sizeof (uint32_t));
    //  The edit script over all lines: ' ' both, '-' a only, '+' b only
    size_t total = head + n + m + tail;
    char *ops = (char *) malloc (total + 1);
    size_t *ai = (size_t *) malloc ((total + 1) * sizeof (size_t));
    size_t *bi = (size_t *) malloc ((total + 1) * sizeof (size_t));
    if (!lcs || !ops || !ai || !bi) {
        free (lcs);
        free (ops);
        free (ai);
        free (bi);
        rc = -1;
        goto done;
    }
    #define LCS(i, j) lcs [(i) * (m + 1) + (j)]
    for (size_t i = n; i-- > 0;)
        for (size_t j = m; j-- > 0;)
            LCS (i, j) = streq (a.lines [head + i], b.lines [head + j])? LCS (i + 1, j + 1) + 1
                       : LCS (i + 1, j) >= LCS (i, j + 1)? LCS (i + 1, j): LCS (i, j + 1);
    size_t k = 0, i = 0, j = 0;
    for (size_t h = 0; h < head; h++, k++) {
        ops [k] = ' ';
        ai [k] = h;
        bi [k] = h;
    }
    while (i < n || j < m) {
        if (i < n && j < m && streq (a.lines [head + i], b.lines [head + j])) {
            ops [k] = ' ', ai [k] = head + i++, bi [k] = head + j++;
        }
        else
        if (j >= m || (i < n && LCS (i + 1, j) >= LCS (i, j + 1))) {
            ops [k] = '-', ai [k] = head + i++, bi [k] = head + j;
        }
        else {
            ops [k] = '+', ai [k] = head + i, bi [k] = head + j++;
        }
        k++;
    }
    #undef LCS
    for (size_t t = 0; t < tail; t++, k++) {
        ops [k] = ' ';
        ai [k] = head + n + t;
        bi [k] = head + m + t;
    }
    total = k;
    //  Hunks: changes with up to 3 lines of context, joined when closer
    //  than twice that
    size_t at = 0;
    while (at < total) {
        while (at < total && ops [at] == ' ')
            at++;
        if (at == total)
            break;
        size_t first = at, last = at;
        for (size_t x = at + 1; x < total && x <= last + 2 * XXL_CTL_DIFF_CONTEXT; x++)
            if (ops [x] != ' ')
                last = x;
        size_t from = first > XXL_CTL_DIFF_CONTEXT? first - XXL_CTL_DIFF_CONTEXT: 0;
        size_t to = last + XXL_CTL_DIFF_CONTEXT + 1 < total? last + XXL_CTL_DIFF_CONTEXT + 1: total;
        size_t a_count = 0, b_count = 0;
        for (size_t x = from; x < to; x++) {
            a_count += ops [x] != '+';
            b_count += ops [x] != '-';
        }
        size_t a_start = ai [from] + (a_count? 1: 0);
        size_t b_start = bi [from] + (b_count? 1: 0);
        fprintf (out, "@@ -%zu,%zu +%zu,%zu @@\n", a_start, a_count, b_start, b_count);
        for (size_t x = from; x < to; x++)
            fprintf (out, "%c%s\n", ops [x], ops [x] == '+'? b.lines [bi [x]]: a.lines [ai [x]]);
        at = to;
    }
    free (lcs);
    free (ops);
    free (ai);
    free (bi);
done:
    free (a.lines);
    free (b.lines);
    return rc;
}

//  Fetches a glue version (0: the newest) of a job: its source into
//  *source (caller frees) and its number into *got; the exit status
static int
s_glue_fetch (ctl_t *self, int64_t job, int64_t version, char **source, int64_t *got)
{
    *source = NULL;
    xxl_enc_t *enc = s_request (self, "GLUE_SHOW");
    if (!enc)
        return XXL_CTL_FAILED;
    xxl_enc_kint (enc, "jobId", job);
    if (version > 0)
        xxl_enc_kint (enc, "version", version);
    xxl_msg_t *reply = s_call (self);
    const msgpack_object *content = reply? s_content (self, reply): NULL;
    const msgpack_object *text = content? s_get (content, "glueSource"): NULL;
    if (content && (!text || text->type != MSGPACK_OBJECT_STR
                    || s_get_int (content, "version", got))) {
        xxl_msg_destroy (&reply);
        return s_fail (self, XXL_CTL_FAILED, "unexpected reply: no glueSource or version");
    }
    if (text)
        *source = s_strndup (text->via.str.ptr, text->via.str.size);
    xxl_msg_destroy (&reply);
    return *source? XXL_CTL_OK: XXL_CTL_FAILED;
}

//  A diff of two versions of a job to out; the exit status
static int
s_glue_diff_to (ctl_t *self, FILE *out, int64_t job, int64_t v1, int64_t v2)
{
    char *a = NULL, *b = NULL;
    int64_t got1 = 0, got2 = 0;
    int rc = s_glue_fetch (self, job, v1, &a, &got1);
    if (!rc)
        rc = s_glue_fetch (self, job, v2, &b, &got2);
    if (!rc) {
        char a_name [64], b_name [64];
        snprintf (a_name, sizeof a_name, "job %" PRId64 " version %" PRId64, job, got1);
        snprintf (b_name, sizeof b_name, "job %" PRId64 " version %" PRId64, job, got2);
        if (s_diff (out, a_name, a, b_name, b) < 0)
            rc = s_fail (self, XXL_CTL_FAILED, "out of memory");
    }
    free (a);
    free (b);
    return rc;
}

static const ctl_opt_t s_glue_history_opts [] = {
    { "--limit", NULL, "N", "at most N versions, newest first (1-100, default 20)" },
    { "--offset", NULL, "N", "skip the newest N versions (default 0)" },
    { "--diff", NULL, NULL, "show each version as a diff against the one before it" },
    { NULL, NULL, NULL, NULL }
};

static int
s_glue_history (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    int64_t job, limit = 0, offset = 0;
    if (s_id_arg (self, cmd, "job id", args->pos [0], &job))
        return XXL_CTL_USAGE;
    const char *limit_text = s_opt (cmd, args, "--limit");
    const char *offset_text = s_opt (cmd, args, "--offset");
    int diff = s_opt (cmd, args, "--diff") != NULL;
    if (limit_text && s_int_arg (self, cmd, "--limit", limit_text, 1, 100, &limit))
        return XXL_CTL_USAGE;
    if (offset_text && s_int_arg (self, cmd, "--offset", offset_text, 0, INT64_MAX, &offset))
        return XXL_CTL_USAGE;
    if (diff && self->json)
        return s_usage_error (self, cmd, "--diff prints text: use it without --json");
    xxl_enc_t *enc = s_request (self, "GLUE_HISTORY");
    if (!enc)
        return XXL_CTL_FAILED;
    xxl_enc_kint (enc, "jobId", job);
    if (limit_text)
        xxl_enc_kint (enc, "limit", limit);
    if (offset_text)
        xxl_enc_kint (enc, "offset", offset);
    xxl_msg_t *reply;
    const msgpack_object *content;
    int rc = s_exchange (self, &reply, &content, "glues", CTL_LIST);
    if (rc || self->json) {
        xxl_msg_destroy (&reply);
        return rc;
    }
    const msgpack_object *glues = s_content_array (self, content, "glues");
    int64_t *versions = glues? (int64_t *) calloc (glues->via.array.size + 1, sizeof (int64_t))
                             : NULL;
    size_t listed = 0;
    int64_t total = 0;
    if (glues && versions) {
        ctl_table_t table;
        const char *headers [] = { "VERSION", "TYPE", "SAVED", "SIZE", "REMARK" };
        s_table_init (&table, 5, headers);
        for (uint32_t i = 0; i < glues->via.array.size; i++) {
            const msgpack_object *glue = &glues->via.array.ptr [i];
            if (glue->type != MSGPACK_OBJECT_MAP)
                continue;               //  not a row: skip it
            char buf [64];
            int64_t saved = s_int_or (glue, "updateTime", 0);
            if (saved <= 0)
                saved = s_int_or (glue, "addTime", 0);
            versions [listed++] = s_int_or (glue, "version", 0);
            s_table_add (&table, s_text_of (glue, "version"));
            s_table_add (&table, s_text_of (glue, "glueType"));
            s_table_add (&table, strdup (s_time_text (saved, buf, sizeof buf)));
            s_table_add (&table, s_text_of (glue, "size"));
            s_table_add (&table, s_first_line (s_text_of (glue, "glueRemark"), 40));
        }
        s_table_print (&table, self->out, "no glue versions");
        if (s_get_int (content, "total", &total) == 0 && total > (int64_t) (offset + listed))
            fprintf (self->out, "(%zu of %" PRId64 " versions shown; use --limit, --offset)\n",
                     listed, total);
    }
    else
        rc = glues? s_fail (self, XXL_CTL_FAILED, "out of memory"): XXL_CTL_FAILED;
    xxl_msg_destroy (&reply);
    //  Each listed version against the one before it, when that is kept:
    //  the kept versions are consecutive, listed newest first from offset
    int64_t oldest = listed? versions [0] + offset - total + 1: 0;
    for (size_t i = 0; diff && rc == XXL_CTL_OK && i < listed; i++) {
        if (versions [i] - 1 < oldest || versions [i] <= 1)
            continue;
        fprintf (self->out, "\n");
        rc = s_glue_diff_to (self, self->out, job, versions [i] - 1, versions [i]);
    }
    free (versions);
    return rc;
}

static int
s_glue_diff (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    int64_t job, v1, v2 = 0;
    if (s_id_arg (self, cmd, "job id", args->pos [0], &job)
    ||  s_id_arg (self, cmd, "version", args->pos [1], &v1)
    ||  (args->npos > 2 && s_id_arg (self, cmd, "version", args->pos [2], &v2)))
        return XXL_CTL_USAGE;
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream (&text, &size);
    if (!out)
        return s_fail (self, XXL_CTL_FAILED, "out of memory");
    int rc = s_glue_diff_to (self, out, job, v1, v2);
    fclose (out);
    if (rc == XXL_CTL_OK) {
        if (self->json) {
            msgpack_object value;
            s_obj_str (&value, text, size);
            msgpack_object_kv kv;
            s_obj_str (&kv.key, "diff", 4);
            kv.val = value;
            msgpack_object map;
            map.type = MSGPACK_OBJECT_MAP;
            map.via.map.size = 1;
            map.via.map.ptr = &kv;
            s_print_json (self, &map);
        }
        else
            fprintf (self->out, "%s", size? text: "(no difference)\n");
    }
    free (text);
    return rc;
}

static const ctl_opt_t s_glue_show_opts [] = {
    { "--version", NULL, "N", "this version (default: the newest)" },
    { NULL, NULL, NULL, NULL }
};

static int
s_glue_show (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    int64_t job, version = 0;
    if (s_id_arg (self, cmd, "job id", args->pos [0], &job))
        return XXL_CTL_USAGE;
    const char *version_text = s_opt (cmd, args, "--version");
    if (version_text && s_id_arg (self, cmd, "--version", version_text, &version))
        return XXL_CTL_USAGE;
    xxl_enc_t *enc = s_request (self, "GLUE_SHOW");
    if (!enc)
        return XXL_CTL_FAILED;
    xxl_enc_kint (enc, "jobId", job);
    if (version_text)
        xxl_enc_kint (enc, "version", version);
    xxl_msg_t *reply;
    const msgpack_object *content;
    int rc = s_exchange (self, &reply, &content, NULL, CTL_ANY);
    if (rc || self->json) {
        xxl_msg_destroy (&reply);
        return rc;
    }
    char buf [64];
    int64_t saved = s_int_or (content, "updateTime", 0);
    char *remark = s_text_of (content, "glueRemark");
    char *type = s_text_of (content, "glueType");
    char *source = s_text_of (content, "glueSource");
    fprintf (self->out, "# job %" PRId64 " glue version %" PRId64 ", %s, saved %s%s%s\n", job,
             s_int_or (content, "version", 0), type? type: "",
             s_time_text (saved, buf, sizeof buf), remark && *remark? ": ": "",
             remark? remark: "");
    if (source)
        fprintf (self->out, "%s%s", source,
                 *source && source [strlen (source) - 1] != '\n'? "\n": "");
    free (remark);
    free (type);
    free (source);
    xxl_msg_destroy (&reply);
    return XXL_CTL_OK;
}

static int
s_glue_rollback (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    int64_t job, version;
    if (s_id_arg (self, cmd, "job id", args->pos [0], &job)
    ||  s_id_arg (self, cmd, "version", args->pos [1], &version))
        return XXL_CTL_USAGE;
    xxl_enc_t *enc = s_request (self, "GLUE_ROLLBACK");
    if (!enc)
        return XXL_CTL_FAILED;
    xxl_enc_kint (enc, "jobId", job);
    xxl_enc_kint (enc, "version", version);
    xxl_msg_t *reply;
    const msgpack_object *content;
    int rc = s_exchange (self, &reply, &content, "version", CTL_ID);
    if (rc)
        return rc;
    if (!self->json)
        fprintf (self->out, "job %" PRId64 ": glue version %" PRId64 " is current again,"
                 " as version %" PRId64 "\n", job, version, s_int_or (content, "version", 0));
    xxl_msg_destroy (&reply);
    return XXL_CTL_OK;
}

static int
s_report (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    (void) cmd;
    (void) args;
    if (!s_request (self, "REPORT"))
        return XXL_CTL_FAILED;
    xxl_msg_t *reply;
    const msgpack_object *content;
    int rc = s_exchange (self, &reply, &content, "days", CTL_LIST);
    if (rc || self->json) {
        xxl_msg_destroy (&reply);
        return rc;
    }
    const msgpack_object *rate = s_get (content, "successRate");
    double success = rate && (rate->type == MSGPACK_OBJECT_FLOAT64
                              || rate->type == MSGPACK_OBJECT_FLOAT32)? rate->via.f64: 0;
    fprintf (self->out, "jobs: %" PRId64 " (%" PRId64 " running)   groups: %" PRId64
             "   agents: %" PRId64 "\n", s_int_or (content, "jobCount", 0),
             s_int_or (content, "jobRunningCount", 0), s_int_or (content, "groupCount", 0),
             s_int_or (content, "agentCount", 0));
    fprintf (self->out, "runs: %" PRId64 "   success: %" PRId64 "   failure: %" PRId64
             "   success rate: %.1f%%\n\n", s_int_or (content, "runCount", 0),
             s_int_or (content, "sucCount", 0), s_int_or (content, "failCount", 0),
             success * 100);
    const msgpack_object *days = s_content_array (self, content, "days");
    if (days) {
        ctl_table_t table;
        const char *headers [] = { "DAY", "RUNNING", "SUCCESS", "FAILURE" };
        s_table_init (&table, 4, headers);
        for (uint32_t i = 0; i < days->via.array.size; i++) {
            const msgpack_object *day = &days->via.array.ptr [i];
            if (day->type != MSGPACK_OBJECT_MAP)
                continue;
            char buf [64];
            s_time_text (s_int_or (day, "triggerDay", 0), buf, sizeof buf);
            buf [10] = 0;               //  the date part
            s_table_add (&table, strdup (buf));
            s_table_add (&table, s_text_of (day, "runningCount"));
            s_table_add (&table, s_text_of (day, "sucCount"));
            s_table_add (&table, s_text_of (day, "failCount"));
        }
        s_table_print (&table, self->out, "no runs in the last days");
    }
    xxl_msg_destroy (&reply);
    return rc;
}

static const ctl_opt_t s_log_clear_opts [] = {
    { "--job", NULL, "ID", "only runs of this job" },
    { "--before", NULL, "DAYS", "remove runs older than DAYS days" },
    { "--keep", NULL, "N", "keep only the newest N runs" },
    { "--all", NULL, NULL, "remove every finished run" },
    { NULL, NULL, NULL, NULL }
};

static int
s_log_clear (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    const char *job_text = s_opt (cmd, args, "--job");
    const char *before_text = s_opt (cmd, args, "--before");
    const char *keep_text = s_opt (cmd, args, "--keep");
    int all = s_opt (cmd, args, "--all") != NULL;
    int64_t job = 0, before = 0, keep = 0;
    if ((before_text != NULL) + (keep_text != NULL) + all != 1)
        return s_usage_error (self, cmd, "give exactly one of --before DAYS, --keep N, --all");
    if (job_text && s_id_arg (self, cmd, "--job", job_text, &job))
        return XXL_CTL_USAGE;
    if (before_text && s_int_arg (self, cmd, "--before", before_text, 0, 36500, &before))
        return XXL_CTL_USAGE;
    if (keep_text && s_int_arg (self, cmd, "--keep", keep_text, 0, INT32_MAX, &keep))
        return XXL_CTL_USAGE;
    xxl_enc_t *enc = s_request (self, "LOG_CLEAR");
    if (!enc)
        return XXL_CTL_FAILED;
    if (job)
        xxl_enc_kint (enc, "jobId", job);
    if (before_text)
        xxl_enc_kint (enc, "beforeDays", before);
    if (keep_text)
        xxl_enc_kint (enc, "keepLast", keep);
    if (all)
        xxl_enc_kbool (enc, "all", 1);
    xxl_msg_t *reply;
    const msgpack_object *content;
    int rc = s_exchange (self, &reply, &content, NULL, CTL_ANY);
    if (rc == XXL_CTL_OK && !self->json)
        fprintf (self->out, "%" PRId64 " run(s) removed\n", s_int_or (content, "deleted", 0));
    xxl_msg_destroy (&reply);
    return rc;
}

//  --------------------------------------------------------------------
//  The command table and the command line

static const ctl_cmd_t s_commands [] = {
    { "group", "add", "APP [--title T] [--address-list A,B]", "add an executor group",
      s_group_add_opts, 1, 1, s_group_add },
    { "group", "list", "", "list groups", NULL, 0, 0, s_group_list },
    { "group", "show", "G", "show a group (app name or id) and its registered agents",
      NULL, 1, 1, s_group_show },
    { "group", "update", "G [--appname APP] [--title T] [--address-list A,B | --auto]",
      "change a group", s_group_update_opts, 1, 1, s_group_update },
    { "group", "rm", "G", "remove a group that has no jobs", NULL, 1, 1, s_group_rm },
    { "job", "add", "--group APP|ID --handler NAME [--cron EXPR | --fix-rate S | --fix-delay S]\n"
      "        [--param P] [--route R] [--block B] [--timeout S] [--retry N] [--misfire M]\n"
      "        [--retry-interval S] [--retry-backoff F] [--retry-max S]\n"
      "        [--glue-type T --glue-source FILE] [--child ID,ID] [--desc D] [--author A]\n"
      "        [--alarm-email E] [--timezone Z] [--start]",
      "add a job", s_job_opts, 0, 0, s_job_add },
    { "job", "update", "ID [job add flags; only those given change]", "change a job",
      s_job_opts, 1, 1, s_job_update },
    { "job", "list", "[--group G] [--handler T] [--desc T] [--author T] [--status running|stopped]\n"
      "        [--limit N] [--offset N]", "list jobs", s_job_list_opts, 0, 0, s_job_list },
    { "job", "show", "ID", "show a job", NULL, 1, 1, s_job_show },
    { "job", "rm", "ID", "remove a job and its runs (and it from other jobs' children)",
      NULL, 1, 1, s_job_rm },
    { "job", "copy", "ID [--desc D]", "add a stopped copy of a job (its glue source too)",
      s_job_copy_opts, 1, 1, s_job_copy },
    { "job", "start", "ID", "start scheduling a job", NULL, 1, 1, s_job_start },
    { "job", "stop", "ID", "stop scheduling a job", NULL, 1, 1, s_job_stop },
    { "job", "trigger", "ID [--param P] [--address A] [--shard I/N]", "run a job once now",
      s_job_trigger_opts, 1, 1, s_job_trigger },
    { "job", "next", "ID [-n N]", "a job's next fire times", s_count_opts, 1, 1, s_job_next },
    { "log", "list", "[--job ID] [--group ID] [--status success|failure|running]\n"
      "        [--from TIME] [--to TIME] [--limit N] [--offset N]", "list runs, newest first",
      s_log_list_opts, 0, 0, s_log_list },
    { "log", "show", "ID", "show a run", NULL, 1, 1, s_log_show },
    { "log", "cat", "ID [-f]", "print a run's log (-f: follow until the run ends)",
      s_log_cat_opts, 1, 1, s_log_cat },
    { "log", "kill", "ID", "kill a running run", NULL, 1, 1, s_log_kill },
    { "log", "clear", "[--job ID] (--before DAYS | --keep N | --all)",
      "remove finished runs (never those still waiting or running)", s_log_clear_opts, 0, 0,
      s_log_clear },
    { "agent", "list", "", "list registered agents", NULL, 0, 0, s_agent_list },
    { "cron", "next", "EXPR [-n N] [--from MS] [--tz ZONE]",
      "fire times of a cron expression (computed locally)", s_cron_next_opts, 1, 1, s_cron_next },
    { "glue", "history", "JOB [--limit N] [--offset N] [--diff]",
      "a GLUE job's source versions, newest first", s_glue_history_opts, 1, 1, s_glue_history },
    { "glue", "show", "JOB [--version N]", "a glue version's source (default: the newest)",
      s_glue_show_opts, 1, 1, s_glue_show },
    { "glue", "diff", "JOB V1 [V2]", "a unified diff from version V1 to V2 (default: the newest)",
      NULL, 2, 3, s_glue_diff },
    { "glue", "rollback", "JOB N", "make version N the job's glue again (as a new version)",
      NULL, 2, 2, s_glue_rollback },
    { "report", NULL, "", "the scheduler's run report", NULL, 0, 0, s_report },
    { NULL, NULL, NULL, NULL, NULL, 0, 0, NULL }
};

static void
s_command_usage (const ctl_cmd_t *cmd, FILE *out, int full)
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
            fprintf (out, "  %-22s %s\n", left, cmd->opts [i].help);
        }
    }
    fprintf (out, "  %-22s %s\n", "-h, --help", "this text");
}

static void
s_usage (FILE *out, const char *noun)
{
    fprintf (out,
        "usage: xxl-ctl [--api EP] [--token T] [--json] [--timeout MS] [-c FILE] COMMAND ...\n");
    if (!noun)
        fprintf (out,
            "\n"
            "  --api EP        scheduler api endpoint (ctl/api; XXL_API; default %s)\n"
            "  --token T       access token (ctl/token; XXL_TOKEN)\n"
            "  --json          print one JSON document per command, for scripts\n"
            "  --timeout MS    milliseconds to wait for a reply (ctl/timeout; default %d)\n"
            "  -c FILE         ZPL config file (see conf/xxl-ctl.cfg); flags override it,\n"
            "                  it overrides the environment\n"
            "  -h, --help      this text\n",
            XXL_CTL_DEFAULT_API, XXL_CTL_DEFAULT_TIMEOUT);
    fprintf (out, "\ncommands:\n");
    for (const ctl_cmd_t *cmd = s_commands; cmd->noun; cmd++) {
        if (noun && strneq (noun, cmd->noun))
            continue;
        char name [32];
        snprintf (name, sizeof name, "%s%s%s", cmd->noun, cmd->verb? " ": "",
                  cmd->verb? cmd->verb: "");
        const char *nl = strchr (cmd->synopsis, '\n');
        if (*cmd->synopsis)
            fprintf (out, "  %-14s %.*s%s\n", name,
                     nl? (int) (nl - cmd->synopsis): (int) strlen (cmd->synopsis),
                     cmd->synopsis, nl? " ...": "");
        else
            fprintf (out, "  %s\n", name);
    }
    fprintf (out, "\nRun 'xxl-ctl COMMAND --help' for a command's flags.  Exit status: 0 ok,\n"
                  "1 a scheduler or connection error, 2 a usage error.\n");
}

//  Parses a command's arguments (after its name); returns 0, -1 after
//  printing help, or an exit status after a usage error
static int
s_parse_args (ctl_t *self, const ctl_cmd_t *cmd, int argc, char **argv, ctl_args_t *args)
{
    memset (args, 0, sizeof *args);
    int only_positional = 0;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv [i];
        if (!only_positional && streq (arg, "--")) {
            only_positional = 1;
            continue;
        }
        if (!only_positional && arg [0] == '-' && arg [1]) {
            if (streq (arg, "-h") || streq (arg, "--help")) {
                s_command_usage (cmd, self->out, 1);
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
            int index = -1;
            for (int o = 0; cmd->opts && cmd->opts [o].name && index < 0; o++)
                if (streq (cmd->opts [o].name, name)
                || (cmd->opts [o].alias && streq (cmd->opts [o].alias, name)))
                    index = o;
            if (index < 0)
                return s_usage_error (self, cmd, "unknown flag '%s'", arg);
            if (cmd->opts [index].arg) {
                if (inline_value)
                    args->value [index] = inline_value;
                else
                if (i + 1 < argc)
                    args->value [index] = argv [++i];
                else
                    return s_usage_error (self, cmd, "%s needs a value (%s)", name,
                                          cmd->opts [index].arg);
            }
            else {
                if (inline_value)
                    return s_usage_error (self, cmd, "%s takes no value", name);
                args->value [index] = "";
            }
        }
        else {
            if (args->npos >= cmd->max_pos || args->npos >= XXL_CTL_MAX_POS)
                return s_usage_error (self, cmd, "unexpected argument '%s'", arg);
            args->pos [args->npos++] = arg;
        }
    }
    if (args->npos < cmd->min_pos)
        return s_usage_error (self, cmd, "missing argument");
    return 0;
}

//  Applies config file, environment and defaults under the flags
static int
s_settle (ctl_t *self, const char *config_file, const char *api, const char *token,
          const char *timeout_text)
{
    zconfig_t *config = NULL;
    if (config_file) {
        config = zconfig_load (config_file);
        if (!config)
            return s_fail (self, XXL_CTL_USAGE, "cannot read config file '%s'", config_file);
    }
    const char *env_api = getenv ("XXL_API");
    const char *env_token = getenv ("XXL_TOKEN");
    if (!api && config)
        api = zconfig_get (config, "ctl/api", NULL);
    if (!api || !*api)
        api = env_api && *env_api? env_api: XXL_CTL_DEFAULT_API;
    if (!token && config) {
        token = zconfig_get (config, "ctl/token", NULL);
        if (token && !*token)
            token = NULL;
    }
    if (!token)
        token = env_token && *env_token? env_token: NULL;
    if (!timeout_text && config)
        timeout_text = zconfig_get (config, "ctl/timeout", NULL);
    int64_t timeout = XXL_CTL_DEFAULT_TIMEOUT;
    int rc = 0;
    if (timeout_text && s_parse_int (timeout_text, 1, 3600 * 1000, &timeout))
        rc = s_fail (self, XXL_CTL_USAGE, "timeout must be 1 to 3600000 ms, not '%s'", timeout_text);
    self->api = strdup (api);
    self->token = token? strdup (token): NULL;
    self->timeout = (int) timeout;
    zconfig_destroy (&config);
    return rc;
}

int
xxl_ctl_main (int argc, char **argv, FILE *out, FILE *err)
{
    ctl_t ctl = { out, err, 0, NULL, NULL, XXL_CTL_DEFAULT_TIMEOUT, NULL };
    ctl_t *self = &ctl;
    const char *api = NULL, *token = NULL, *timeout = NULL, *config = NULL;
    int i = 1, rc = XXL_CTL_OK;

    //  Global flags, before the command
    for (; i < argc && argv [i][0] == '-'; i++) {
        char arg [32];
        const char *value = NULL;          //  from --flag=value
        const char *eq = strchr (argv [i], '=');
        if (eq && strncmp (argv [i], "--", 2) == 0 && (size_t) (eq - argv [i]) < sizeof arg) {
            snprintf (arg, sizeof arg, "%.*s", (int) (eq - argv [i]), argv [i]);
            value = eq + 1;
        }
        else
            snprintf (arg, sizeof arg, "%s", argv [i]);
        const char **target = streq (arg, "--api")? &api: streq (arg, "--token")? &token:
                              streq (arg, "--timeout")? &timeout:
                              streq (arg, "-c") || streq (arg, "--config")? &config: NULL;
        if (value && !target) {
            rc = s_fail (self, XXL_CTL_USAGE, "unknown flag '%s'", argv [i]);
            s_usage (err, NULL);
            return rc;
        }
        if (target && value)
            *target = value;
        else
        if (target) {
            if (i + 1 >= argc) {
                rc = s_fail (self, XXL_CTL_USAGE, "%s needs a value", arg);
                s_usage (err, NULL);
                return rc;
            }
            *target = argv [++i];
        }
        else
        if (streq (arg, "--json"))
            self->json = 1;
        else
        if (streq (arg, "-h") || streq (arg, "--help")) {
            s_usage (out, NULL);
            return XXL_CTL_OK;
        }
        else {
            rc = s_fail (self, XXL_CTL_USAGE, "unknown flag '%s'", argv [i]);
            s_usage (err, NULL);
            return rc;
        }
    }
    if (i >= argc) {
        rc = s_fail (self, XXL_CTL_USAGE, "no command given");
        s_usage (err, NULL);
        return rc;
    }
    //  Find the command: NOUN [VERB]
    const char *noun = argv [i++];
    const char *verb = i < argc? argv [i]: NULL;
    const ctl_cmd_t *cmd = NULL;
    int known_noun = 0;
    for (const ctl_cmd_t *c = s_commands; c->noun && !cmd; c++) {
        if (strneq (c->noun, noun))
            continue;
        known_noun = 1;
        if (!c->verb)
            cmd = c;
        else
        if (verb && streq (c->verb, verb)) {
            cmd = c;
            i++;
        }
    }
    if (!cmd) {
        if (known_noun && (!verb || streq (verb, "-h") || streq (verb, "--help"))) {
            if (verb) {
                s_usage (out, noun);
                return XXL_CTL_OK;
            }
            rc = s_fail (self, XXL_CTL_USAGE, "'%s' needs a subcommand", noun);
        }
        else
        if (known_noun)
            rc = s_fail (self, XXL_CTL_USAGE, "unknown command '%s %s'", noun, verb);
        else
            rc = s_fail (self, XXL_CTL_USAGE, "unknown command '%s'", noun);
        s_usage (err, known_noun? noun: NULL);
        return rc;
    }
    ctl_args_t args;
    rc = s_parse_args (self, cmd, argc - i, argv + i, &args);
    if (rc == -1)
        return XXL_CTL_OK;              //  printed help
    if (rc == 0)
        rc = s_settle (self, config, api, token, timeout);
    if (rc == 0)
        rc = cmd->fn (self, cmd, &args);
    fflush (out);
    fflush (err);
    xxl_client_destroy (&self->client);
    free (self->api);
    free (self->token);
    return rc;
}
