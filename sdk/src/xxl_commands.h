/*  xxl_commands.h -- the client api's commands as data: their fields,
    types and ranges, and the one function that judges a request by them.

    Each command (`t` on the api socket) has a name, whether it only reads,
    and its fields in the order they are judged: a key, a wire type, whether
    it is required, for an integer its range, for a string its longest
    length and, where the values are a closed list, that list.  The
    scheduler judges every request here before (and, for fields judged
    after a lookup, within) its handler; xxl-ctl takes its flags' ranges,
    defaults and value lists from the same table.  docs/protocol.md states
    the same for peers.  In libxxl, not installed: for the scheduler and
    xxl-ctl.  The commands themselves are listed once, in
    xxl_commands.def, with their least role, flags, handler, REST route
    and xxl-ctl command: the table, the scheduler's handler and route
    tables and xxl-ctl's list come from it.

    Judging a field reads it with the xxl_msg getters, so a refusal is the
    getter's text ("field 'limit' is 0, outside 1..10000"), or for a value
    outside a closed list "unknown glue type 'X' (known: BEAN, …)" (a field
    with `what`) or "triggerType must be MANUAL or API" (one without), or
    the text of the field's own rule (`check`: app names, shards).  Fields
    a command does not have are ignored.

    When a refusal is answered: a field's `after` is 0 when it is judged
    before the handler runs, n when the handler judges it after its n-th
    store lookup.  So a request about a job or group that does not exist is
    answered 404 before the fields that only matter once it does are
    judged: JOB_UPDATE looks up its job (jobId: after 0), then the group
    of jobGroup (after 1), then judges the job's fields (after 2).  Within
    one `after`, every field's type and range is judged before any value
    is judged against a list or a rule.
*/

#ifndef XXL_COMMANDS_H_INCLUDED
#define XXL_COMMANDS_H_INCLUDED

#include "xxl/msg.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XXL_CMD_MAX_TEXT    (64 * 1024)         //  desc, param, address lists
#define XXL_CMD_MAX_GLUE    (1024 * 1024)       //  glue source
#define XXL_SHARD_MAX       100000              //  N of a shard I/N
#define XXL_CALENDAR_NAME_MAX 64                //  a calendar's name
#define XXL_CMD_MAX_DATES   (256 * 1024)        //  a calendar's dates (text)
#define XXL_BACKFILL_RATE   100                 //  a backfill's runs a second by default
#define XXL_BACKFILL_RATE_MAX 10000             //  ... and at most
#define XXL_BACKFILL_MAX    100000              //  instants one backfill may cover (counted
                                                //  in its request: about 0.2-0.5 s at most)
#define XXL_MAX_RUNNING_MAX 1000                //  a job's maxRunning (0: no limit)

typedef enum {
    XXL_FIELD_INT,                      //  an integer from min to max
    XXL_FIELD_NUMBER,                   //  an integer or a float from min to max
    XXL_FIELD_BOOL,                     //  true or false
    XXL_FIELD_STR                       //  str or bin, valid UTF-8 without NUL,
                                        //  at most max bytes
} xxl_field_type_t;

typedef struct {
    const char *key;
    xxl_field_type_t type;
    bool required;
    int after;                          //  0, or the handler's lookup it follows
    int64_t min, max;                   //  INT, NUMBER: the range; STR: max bytes
    int64_t dflt;                       //  INT, NUMBER, BOOL: the value when absent
    const char *text;                   //  STR: the value when absent, or NULL
    const char *const *values;          //  STR: the values allowed (NULL-ended),
                                        //  or NULL for any
    const char *what;                   //  names the field in "unknown <what> 'X'
                                        //  (known: …)"; NULL: "<key> must be A or B"
    //  STR: a rule of the field's own, judged after the types; 0, or -1
    //  with the refusal in why
    int (*check) (const char *value, char *why, size_t whylen);
} xxl_field_t;

//  The least role a command needs (docs/operations.md, Security).  Roles
//  rank admin > operator > viewer; an agent key may use no command.  The
//  zero value is admin: a command the table does not open stays closed.
typedef enum {
    XXL_ACCESS_ADMIN = 0,               //  groups, jobs, GLUE sources, audit
    XXL_ACCESS_OPERATOR,                //  runs of the jobs of the key's apps
    XXL_ACCESS_VIEWER                   //  reads
} xxl_access_t;

//  A command's flags (xxl_commands.def)
#define XXL_COMMAND_READ            1   //  writes nothing
#define XXL_COMMAND_UNAUDITED       2   //  not READ, yet changes nothing: no
                                        //  audit row (LOG_CAT)
#define XXL_COMMAND_AUDIT_REFUSALS  4   //  a 200 gets no audit row: its runs'
                                        //  rows record it (JOB_TRIGGER)

typedef struct {
    const char *name;                   //  the request's `t`
    bool read_only;                     //  writes nothing: its reply stands
                                        //  whether the turn commits or not
                                        //  (flags has XXL_COMMAND_READ)
    const xxl_field_t *fields;          //  ended by a NULL key
    xxl_access_t access;                //  the least role that may send it
    //  OPERATOR: the field naming the job ("jobId") or run ("logId") whose
    //  app an operator's key must list, or fields apart by '|' of which one
    //  will do ("jobId|jobGroup"); none given or 0 makes the command an
    //  admin's (LOG_CLEAR of every job)
    const char *scope;
    unsigned flags;                     //  XXL_COMMAND_*
} xxl_command_t;

//  XXL_CMD_<NAME>: each command's index in xxl_commands [] (the order of
//  xxl_commands.def); XXL_CMD_COUNT commands.  A file that includes
//  xxl_commands.def defines XXL_COMMAND and XXL_CTL_ONLY (the arguments
//  it does not use, such as XXL_CTL (...), are never expanded).
#define XXL_COMMAND(name, ...) XXL_CMD_##name,
#define XXL_CTL_ONLY(cmd)
typedef enum {
#include "xxl_commands.def"
    XXL_CMD_COUNT
} xxl_command_id_t;
#undef XXL_COMMAND
#undef XXL_CTL_ONLY

//  The least role that may send command, as a word: "admin", ...
const char *xxl_access_name (xxl_access_t access);

//  Every command, ended by a NULL name
extern const xxl_command_t xxl_commands [];

//  The command named name, or NULL
const xxl_command_t *xxl_command_find (const char *name);

//  Whether the scheduler records a request of command in its audit (each
//  change, whatever its reply): every command that is not read_only, save
//  the XXL_COMMAND_UNAUDITED ones (LOG_CAT only reads a run's log from its
//  agent; it is not read_only: its reply waits for the agent, past the
//  turn's commit)
bool xxl_command_audited (const xxl_command_t *command);
//  Whether a request of command answered code gets an audit row: as
//  xxl_command_audited, save an XXL_COMMAND_AUDIT_REFUSALS one answered 200
//  (JOB_TRIGGER: its runs' rows record it, their triggerMsg naming the key
//  that triggered them)
bool xxl_command_audited_code (const xxl_command_t *command, int code);

//  A command's field, or NULL
const xxl_field_t *xxl_command_field (const xxl_command_t *command, const char *key);

//  Judges the fields of command whose `after` is after, as they are in msg
//  (a message with no latched error; it has none after).  Returns 0, or
//  -1 with the refusal in why (at most 511 bytes, as xxl_msg_fail's).
int xxl_command_check (const xxl_command_t *command, xxl_msg_t *msg, int after,
                       char *why, size_t whylen);

//  A judged field's value: as given, else the field's default (text for
//  a string, NULL when it has none).  key must be one of the command's
//  fields, of that type.
int64_t xxl_command_int (const xxl_command_t *command, xxl_msg_t *msg, const char *key);
double xxl_command_number (const xxl_command_t *command, xxl_msg_t *msg, const char *key);
bool xxl_command_bool (const xxl_command_t *command, xxl_msg_t *msg, const char *key);
const char *xxl_command_str (const xxl_command_t *command, xxl_msg_t *msg, const char *key);
//  Whether msg gives the field (null counts as absent)
bool xxl_command_has (xxl_msg_t *msg, const char *key);

//  A request's fields as judged, decoded once: the value of each field of
//  its command (as given, else its default), by the field's place in the
//  command's table.  A handler reads them with xxl_args_int, ... and never
//  goes back to the message; a string points into the message, which
//  outlives the request.  MUST: at most XXL_ARGS_MAX fields a command
//  (asserted where the table is judged).
#define XXL_ARGS_MAX 32
typedef union {
    int64_t i;                          //  XXL_FIELD_INT
    double n;                           //  XXL_FIELD_NUMBER
    bool b;                             //  XXL_FIELD_BOOL
    const char *s;                      //  XXL_FIELD_STR (NULL: absent, no default)
} xxl_arg_t;

typedef struct {
    const xxl_command_t *command;       //  its command (NULL: none judged)
    xxl_arg_t value [XXL_ARGS_MAX];
    uint32_t judged;                    //  bit i: field i judged into value [i]
    uint32_t given;                     //  bit i: the message gave field i
} xxl_args_t;

//  xxl_command_check, keeping each field it judged in args (args->command
//  is set to command at the first call)
int xxl_command_judge (const xxl_command_t *command, xxl_msg_t *msg, int after,
                       xxl_args_t *args, char *why, size_t whylen);
//  A judged field's value, or whether it was given.  key must be a field
//  of args' command, of that type; a field not judged yet is read from msg
//  as xxl_command_int and its kin do
int64_t xxl_args_int (const xxl_args_t *args, xxl_msg_t *msg, const char *key);
double xxl_args_number (const xxl_args_t *args, xxl_msg_t *msg, const char *key);
bool xxl_args_bool (const xxl_args_t *args, xxl_msg_t *msg, const char *key);
const char *xxl_args_str (const xxl_args_t *args, xxl_msg_t *msg, const char *key);
bool xxl_args_given (const xxl_args_t *args, xxl_msg_t *msg, const char *key);

//  Writes a field's allowed values from the from-th (0-based) on, joined
//  by ", ", into buf; returns buf ("" when it has none)
const char *xxl_field_values (const xxl_field_t *field, size_t from, char *buf, size_t buflen);

//  A shard "I/N": decimal digits without sign, space or leading zero, and
//  0 <= I < N <= XXL_SHARD_MAX.  0 with *index and *total set, or -1.
int xxl_command_shard (const char *text, int *index, int *total);

#endif
