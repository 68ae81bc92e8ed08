/*  xxl_commands.c -- the client api's commands as data, and their judge.

    The field tables below are the one place a request field's type,
    range, length and allowed values are written (docs/protocol.md states
    them for peers); xxl_commands.def names each command's table.  What needs the store or the scheduler's plugins is judged by
    the handlers: that a job, group or child job exists, a route (router
    plugins: an open list), alarm targets, time zones, cron expressions,
    address lists, and rules between fields.
*/

#include "xxl_commands.h"
#include "xxl_tags.h"

#include <assert.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  The values users type (DESIGN §3); route strategies are router
//  plugins, so that list is open
static const char *const s_schedule_types [] = {
    "NONE", "CRON", "FIX_RATE", "FIX_DELAY", NULL
};
static const char *const s_misfires [] = { "DO_NOTHING", "FIRE_ONCE_NOW", NULL };
static const char *const s_blocks [] = {
    "SERIAL_EXECUTION", "DISCARD_LATER", "COVER_EARLY", NULL
};
static const char *const s_glue_types [] = {
    "BEAN", "GLUE_SHELL", "GLUE_PYTHON", "GLUE_PYTHON2", "GLUE_NODEJS", "GLUE_PHP",
    "GLUE_POWERSHELL",
    "GLUE_GROOVY",              //  (XXL-JOB's GLUE(Java): bridged executors only, DESIGN §11)
    NULL
};
static const char *const s_trigger_types [] = { "MANUAL", "API", NULL };

static int
s_refuse (char *why, size_t whylen, const char *format, ...)
    __attribute__ ((format (printf, 3, 4)));

static int
s_refuse (char *why, size_t whylen, const char *format, ...)
{
    va_list args;
    va_start (args, format);
    vsnprintf (why, whylen, format, args);
    va_end (args);
    return -1;
}

//  A refused value as its refusal quotes it: control characters and
//  invalid UTF-8 escaped (xxl_printable), cut to 128 bytes
#define S_SHOWN(value) xxl_printable ((value), (char [129]) { 0 }, 129)

//  An app name: letters, digits, '-', '_', '.', not all digits (all
//  digits name a group by its id)
static int
s_appname (const char *app, char *why, size_t whylen)
{
    if (!*app)
        return s_refuse (why, whylen, "appname must not be empty");
    bool digits = true;
    for (const char *p = app; *p; p++) {
        if (!(isalnum ((unsigned char) *p) || *p == '-' || *p == '_' || *p == '.'))
            return s_refuse (why, whylen,
                             "appname '%s' may hold only letters, digits, '-', '_' and '.'",
                             S_SHOWN (app));
        digits = digits && isdigit ((unsigned char) *p);
    }
    if (digits)
        return s_refuse (why, whylen, "appname '%s' must not be all digits: a group named by"
                         " digits is the group of that id", S_SHOWN (app));
    return 0;
}

//  A workflow's name (shown in lists, logs and the console): any text but
//  an empty one or one holding C0 controls or DEL; names may repeat (a
//  workflow is its id, as a job is)
static int
s_workflow_name (const char *name, char *why, size_t whylen)
{
    if (!*name)
        return s_refuse (why, whylen, "name must not be empty");
    for (const char *p = name; *p; p++)
        if ((unsigned char) *p < 0x20 || *p == 0x7f)
            return s_refuse (why, whylen, "name must not hold control characters"
                             " (U+0000-U+001F, U+007F)");
    return 0;
}

static int
s_shard (const char *text, char *why, size_t whylen)
{
    int index, total;
    if (xxl_command_shard (text, &index, &total))
        return s_refuse (why, whylen, "shard '%s' must be I/N with 0 <= I < N <= %d", S_SHOWN (text),
                         XXL_SHARD_MAX);
    return 0;
}

//  A calendar's name: 1 to 64 letters, digits, '-', '_', '.'
static int
s_calendar_name (const char *name, char *why, size_t whylen)
{
    size_t length = strlen (name);
    if (length == 0 || length > XXL_CALENDAR_NAME_MAX)
        return s_refuse (why, whylen, "a calendar name must be 1 to %d bytes",
                         XXL_CALENDAR_NAME_MAX);
    for (const char *p = name; *p; p++)
        if (!(isalnum ((unsigned char) *p) || *p == '-' || *p == '_' || *p == '.'))
            return s_refuse (why, whylen, "calendar name '%s' may hold only letters, digits,"
                             " '-', '_' and '.'", S_SHOWN (name));
    return 0;
}

//  A job's calendar: a calendar name, or "" for none
static int
s_calendar_ref (const char *name, char *why, size_t whylen)
{
    return *name? s_calendar_name (name, why, whylen): 0;
}

//  A job's agentTags: a tag set (xxl_tags.h)
static int
s_agent_tags (const char *text, char *why, size_t whylen)
{
    char canonical [XXL_TAGS_BUF];
    char reason [300];
    if (xxl_tags_normalize (text, canonical, sizeof canonical, reason, sizeof reason) < 0)
        return s_refuse (why, whylen, "agentTags: %s", reason);
    return 0;
}

//  Shorthands for the table
#define S_INT(k, lo, hi, d)     .key = k, .type = XXL_FIELD_INT, .min = lo, .max = hi, .dflt = d
#define S_ID(k)                 S_INT (k, 1, INT64_MAX, 0)
#define S_NUMBER(k, lo, hi, d)  .key = k, .type = XXL_FIELD_NUMBER, .min = lo, .max = hi, .dflt = d
#define S_BOOL(k)               .key = k, .type = XXL_FIELD_BOOL
#define S_STR(k, len)           .key = k, .type = XXL_FIELD_STR, .max = len
#define S_NAME(k)               S_STR (k, XXL_MSG_MAX_NAME)
#define S_END                   { .key = NULL }

//  A job's fields (JOB_ADD, JOB_UPDATE), judged after lookup n
#define S_JOB_FIELDS(n) \
    { S_STR ("jobDesc", XXL_CMD_MAX_TEXT), .after = n }, \
    { S_NAME ("author"), .after = n }, \
    { S_STR ("alarmEmail", XXL_CMD_MAX_TEXT), .after = n }, \
    { S_STR ("scheduleType", 32), .after = n, \
      .values = s_schedule_types, .what = "schedule type" }, \
    { S_STR ("scheduleConf", 1024), .after = n }, \
    { S_STR ("misfireStrategy", 32), .after = n, \
      .values = s_misfires, .what = "misfire strategy" }, \
    { S_NAME ("executorRouteStrategy"), .after = n }, \
    { S_NAME ("executorHandler"), .after = n }, \
    { S_STR ("executorParam", XXL_CMD_MAX_TEXT), .after = n }, \
    { S_STR ("executorBlockStrategy", 32), .after = n, \
      .values = s_blocks, .what = "block strategy" }, \
    { S_INT ("executorTimeout", 0, 86400 * 365, 0), .after = n }, \
    { S_INT ("executorFailRetryCount", 0, 1000, 0), .after = n }, \
    { S_STR ("glueType", 32), .after = n, .values = s_glue_types, .what = "glue type" }, \
    { S_STR ("glueRemark", 1024), .after = n }, \
    { S_STR ("childJobId", 4096), .after = n }, \
    { S_STR ("timezone", 64), .after = n }, \
    { S_INT ("retryInterval", 0, 86400 * 30, 0), .after = n }, \
    { S_INT ("retryMaxInterval", 0, 86400 * 30, 0), .after = n }, \
    { S_NUMBER ("retryBackoff", 1, 100, 1), .after = n }, \
    { S_STR ("calendar", XXL_CALENDAR_NAME_MAX), .after = n, .check = s_calendar_ref }, \
    { S_STR ("agentTags", XXL_TAGS_TEXT_MAX), .after = n, .check = s_agent_tags }, \
    { S_INT ("maxRunning", 0, XXL_MAX_RUNNING_MAX, 0), .after = n }, \
    { S_STR ("glueSource", XXL_CMD_MAX_GLUE), .after = n }

static const xxl_field_t s_no_fields [] = { S_END };

static const xxl_field_t s_group_add [] = {
    { S_NAME ("appname"), .required = true, .check = s_appname },
    { S_NAME ("title") },
    { S_INT ("addressType", 0, 1, 0) },
    { S_STR ("addressList", XXL_CMD_MAX_TEXT) },
    S_END
};

static const xxl_field_t s_group [] = {
    { S_NAME ("group"), .required = true },
    S_END
};

//  After the group's lookup
static const xxl_field_t s_group_update [] = {
    { S_NAME ("group"), .required = true },
    { S_NAME ("appname"), .after = 1, .check = s_appname },
    { S_NAME ("title"), .after = 1 },
    { S_INT ("addressType", 0, 1, 0), .after = 1 },
    { S_STR ("addressList", XXL_CMD_MAX_TEXT), .after = 1 },
    S_END
};

//  The job's fields after the lookup of jobGroup's group
static const xxl_field_t s_job_add [] = {
    { S_NAME ("jobGroup"), .required = true },
    { S_BOOL ("start") },
    S_JOB_FIELDS (1),
    S_END
};

//  XXL-JOB's pageList filters: substrings, and the status (-1 any)
static const xxl_field_t s_job_list [] = {
    { S_NAME ("group") },
    { S_INT ("limit", 1, 10000, 1000) },
    { S_INT ("offset", 0, INT64_MAX, 0) },
    { S_NAME ("executorHandler"), .text = "" },
    { S_STR ("jobDesc", XXL_CMD_MAX_TEXT), .text = "" },
    { S_NAME ("author"), .text = "" },
    { S_INT ("triggerStatus", -1, 1, -1) },
    S_END
};

static const xxl_field_t s_job [] = {
    { S_ID ("jobId"), .required = true },
    S_END
};

//  jobGroup after the job's lookup, the job's fields after its group's
static const xxl_field_t s_job_update [] = {
    { S_ID ("jobId"), .required = true },
    { S_NAME ("jobGroup"), .after = 1 },
    S_JOB_FIELDS (2),
    S_END
};

static const xxl_field_t s_job_copy [] = {
    { S_STR ("jobDesc", XXL_CMD_MAX_TEXT) },
    { S_ID ("jobId"), .required = true },
    S_END
};

//  After the job's lookup
static const xxl_field_t s_job_trigger [] = {
    { S_ID ("jobId"), .required = true },
    { S_STR ("executorParam", XXL_CMD_MAX_TEXT), .after = 1 },
    { S_STR ("address", XXL_CMD_MAX_TEXT), .after = 1 },
    { S_STR ("shard", 32), .after = 1, .check = s_shard },
    { S_STR ("triggerType", 16), .after = 1, .text = "MANUAL", .values = s_trigger_types },
    S_END
};

//  JOB_RM: force also removes the job's nodes from the workflows that run it
static const xxl_field_t s_job_rm [] = {
    { S_ID ("jobId"), .required = true },
    { S_BOOL ("force") },
    S_END
};

//  Workflows (DESIGN §12): the schedule types a workflow takes (a run
//  that waits for its last run's end is a job's, FIX_DELAY)
static const char *const s_workflow_schedules [] = { "NONE", "CRON", "FIX_RATE", NULL };

#define S_WORKFLOW_FIELDS(n) \
    { S_STR ("description", XXL_CMD_MAX_TEXT), .after = n }, \
    { S_STR ("scheduleType", 32), .after = n, \
      .values = s_workflow_schedules, .what = "schedule type" }, \
    { S_STR ("scheduleConf", 1024), .after = n }, \
    { S_STR ("timezone", 64), .after = n }, \
    { S_STR ("misfireStrategy", 32), .after = n, \
      .values = s_misfires, .what = "misfire strategy" }, \
    { S_STR ("calendar", XXL_CALENDAR_NAME_MAX), .after = n, .check = s_calendar_ref }, \
    { S_BOOL ("start"), .after = n }

static const xxl_field_t s_workflow_add [] = {
    { S_NAME ("name"), .required = true, .check = s_workflow_name },
    { S_STR ("definition", XXL_CMD_MAX_GLUE), .required = true },
    S_WORKFLOW_FIELDS (0),
    S_END
};

static const xxl_field_t s_workflow_update [] = {
    { S_ID ("workflowId"), .required = true },
    { S_NAME ("name"), .after = 1, .check = s_workflow_name },
    { S_STR ("definition", XXL_CMD_MAX_GLUE), .after = 1 },
    S_WORKFLOW_FIELDS (1),
    S_END
};

static const xxl_field_t s_workflow [] = {
    { S_ID ("workflowId"), .required = true },
    S_END
};

static const xxl_field_t s_workflow_list [] = {
    { S_INT ("limit", 1, 10000, 1000) },
    { S_INT ("offset", 0, INT64_MAX, 0) },
    S_END
};

static const xxl_field_t s_workflow_trigger [] = {
    { S_ID ("workflowId"), .required = true },
    { S_STR ("param", XXL_CMD_MAX_TEXT) },
    S_END
};

//  WORKFLOW_RUNS: newest first, below id `before` (paging, as AUDIT_LIST)
static const xxl_field_t s_workflow_runs [] = {
    { S_ID ("workflowId"), .required = true },
    { S_INT ("limit", 1, 1000, 100) },
    { S_INT ("before", 1, INT64_MAX, INT64_MAX) },
    S_END
};

static const xxl_field_t s_workflow_run [] = {
    { S_ID ("runId"), .required = true },
    S_END
};

static const xxl_field_t s_workflow_run_retry [] = {
    { S_ID ("runId"), .required = true },
    { S_STR ("node", 64), .required = true },
    S_END
};

static const xxl_field_t s_job_next [] = {
    { S_ID ("jobId"), .required = true },
    { S_INT ("count", 1, 100, 5), .after = 1 },
    S_END
};

//  A schedule not saved yet (a job form's preview): its planned times
static const char *const s_planned_schedules [] = { "CRON", "FIX_RATE", NULL };
static const xxl_field_t s_schedule_next [] = {
    { S_STR ("scheduleType", 32), .required = true, .values = s_planned_schedules,
      .what = "schedule type" },
    { S_STR ("scheduleConf", 1024), .required = true },
    { S_STR ("timezone", 64) },
    { S_STR ("calendar", XXL_CALENDAR_NAME_MAX), .check = s_calendar_ref },
    { S_INT ("count", 1, 100, 5) },
    S_END
};

//  0 (jobId, jobGroup, logStatus): any
static const xxl_field_t s_log_list [] = {
    { S_INT ("jobId", 1, INT64_MAX, 0) },
    { S_INT ("jobGroup", 1, INT64_MAX, 0) },
    { S_INT ("logStatus", 1, 3, 0) },
    { S_INT ("triggerTimeFrom", 0, INT64_MAX, 0) },
    { S_INT ("triggerTimeTo", 0, INT64_MAX, INT64_MAX) },
    { S_INT ("maxId", 1, INT64_MAX, INT64_MAX) },
    { S_INT ("limit", 1, 1000, 100) },
    { S_INT ("offset", 0, INT64_MAX, 0) },
    S_END
};

static const xxl_field_t s_log [] = {
    { S_ID ("logId"), .required = true },
    S_END
};

//  LOG_CAT: by line (fromLineNum), or by byte offset when fromByte is
//  given (-1: absent)
static const xxl_field_t s_log_cat [] = {
    { S_ID ("logId"), .required = true },
    { S_INT ("fromLineNum", 1, INT32_MAX, 1) },
    { S_INT ("fromByte", 0, INT64_MAX, -1) },
    S_END
};

//  LOG_KILL judges fromLineNum as LOG_CAT does, and does not send it
static const xxl_field_t s_log_kill [] = {
    { S_ID ("logId"), .required = true },
    { S_INT ("fromLineNum", 1, INT32_MAX, 1) },
    S_END
};

//  Pages of the registry (its order: entries as held; an offset may skip
//  or repeat one that came or went between two pages)
static const xxl_field_t s_agent_list [] = {
    { S_INT ("limit", 1, 10000, 10000) },
    { S_INT ("offset", 0, INT64_MAX, 0) },
    S_END
};

static const xxl_field_t s_glue_history [] = {
    { S_INT ("limit", 1, 100, 20) },
    { S_INT ("offset", 0, INT64_MAX, 0) },
    { S_ID ("jobId"), .required = true },
    S_END
};

//  version 0: the newest
static const xxl_field_t s_glue_show [] = {
    { S_ID ("version") },
    { S_ID ("jobId"), .required = true },
    S_END
};

static const xxl_field_t s_glue_rollback [] = {
    { S_ID ("version"), .required = true },
    { S_ID ("jobId"), .required = true },
    S_END
};

//  jobId 0: every job's; -1: not given (exactly one of the three is)
static const xxl_field_t s_log_clear [] = {
    { S_INT ("jobId", 1, INT64_MAX, 0) },
    { S_INT ("jobGroup", 1, INT64_MAX, 0) },
    { S_INT ("beforeDays", 0, 36500, -1) },
    { S_INT ("keepLast", 0, INT32_MAX, -1) },
    { S_BOOL ("all") },
    S_END
};

//  REPORT: the day rows of the days holding `from` to `to` (epoch ms, both
//  included; -1: absent; neither: the newest 30 rows).  Their order and
//  span (at most XXL_REPORT_RANGE_DAYS days) are the scheduler's to judge.
static const xxl_field_t s_report [] = {
    { S_INT ("from", 0, INT64_MAX, -1) },
    { S_INT ("to", 0, INT64_MAX, -1) },
    S_END
};

//  AUDIT_LIST: newest first, below id `before` (paging)
static const xxl_field_t s_audit_list [] = {
    { S_INT ("limit", 1, 1000, 100) },
    { S_INT ("before", 1, INT64_MAX, INT64_MAX) },
    S_END
};

//  Backfills (DESIGN §13): a job's planned fire times from `from` to `to`
//  (epoch ms, both included), at most perSecond runs a second
static const xxl_field_t s_job_backfill [] = {
    { S_ID ("jobId"), .required = true },
    { S_INT ("from", 0, INT64_MAX, 0), .required = true },
    { S_INT ("to", 0, INT64_MAX, 0), .required = true },
    { S_INT ("perSecond", 1, XXL_BACKFILL_RATE_MAX, XXL_BACKFILL_RATE) },
    S_END
};

//  BACKFILL_LIST: newest first, below id `before` (paging, as AUDIT_LIST)
static const xxl_field_t s_backfill_list [] = {
    { S_INT ("jobId", 1, INT64_MAX, 0) },
    { S_INT ("limit", 1, 1000, 100) },
    { S_INT ("before", 1, INT64_MAX, INT64_MAX) },
    S_END
};

static const xxl_field_t s_backfill [] = {
    { S_ID ("backfillId"), .required = true },
    S_END
};

//  Calendars (DESIGN §13): dates as text (xxl_calendar.h reads them),
//  a cron expression, a zone ("" the job's); replace: an existing name
//  is replaced (else refused)
static const xxl_field_t s_calendar_add [] = {
    { S_STR ("name", XXL_CALENDAR_NAME_MAX), .required = true, .check = s_calendar_name },
    { S_STR ("dates", XXL_CMD_MAX_DATES), .text = "" },
    { S_STR ("excludeCron", 256), .text = "" },
    { S_STR ("timezone", 64), .text = "" },
    { S_BOOL ("replace") },
    S_END
};

static const xxl_field_t s_calendar [] = {
    { S_STR ("name", XXL_CALENDAR_NAME_MAX), .required = true, .check = s_calendar_name },
    S_END
};

//  force: removed even while jobs name it (they lose their calendar)
static const xxl_field_t s_calendar_rm [] = {
    { S_STR ("name", XXL_CALENDAR_NAME_MAX), .required = true, .check = s_calendar_name },
    { S_BOOL ("force") },
    S_END
};

//  The roles a user or token may hold (the keys' roles, less `agent`)
static const char *const s_roles [] = { "admin", "operator", "viewer", NULL };

//  A user or token name: 1 to 64 letters, digits, '-', '_', '.', '@'
static int
s_account_name (const char *name, char *why, size_t whylen)
{
    size_t length = strlen (name);
    if (length == 0 || length > 64)
        return s_refuse (why, whylen, "a user or token name must be 1 to 64 bytes");
    for (const char *p = name; *p; p++)
        if (!(isalnum ((unsigned char) *p) || *p == '-' || *p == '_' || *p == '.' || *p == '@'))
            return s_refuse (why, whylen, "name '%s' may hold only letters, digits, '-', '_',"
                             " '.' and '@'", S_SHOWN (name));
    return 0;
}

//  A password: 8 to 1024 bytes (the field's length), no control characters
static int
s_password (const char *password, char *why, size_t whylen)
{
    if (strlen (password) < 8)
        return s_refuse (why, whylen, "a password must be at least 8 bytes");
    for (const unsigned char *p = (const unsigned char *) password; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return s_refuse (why, whylen, "a password must not hold control characters");
    return 0;
}

//  An apps list: app names (as GROUP_ADD's appname) separated by commas,
//  or "" for none
static int
s_apps (const char *apps, char *why, size_t whylen)
{
    const char *p = apps;
    while (*p) {
        const char *end = strchr (p, ',');
        size_t length = end? (size_t) (end - p): strlen (p);
        char app [XXL_MSG_MAX_NAME + 1];
        if (length == 0 || length > XXL_MSG_MAX_NAME)
            return s_refuse (why, whylen, "apps must be app names separated by commas");
        memcpy (app, p, length);
        app [length] = 0;
        if (s_appname (app, why, whylen))
            return -1;
        p += length + (end != NULL);
    }
    return 0;
}

static const xxl_field_t s_user_add [] = {
    { S_STR ("username", 64), .required = true, .check = s_account_name },
    { S_STR ("password", 1024), .required = true, .check = s_password },
    { S_STR ("role", 16), .required = true, .values = s_roles, .what = "role" },
    { S_STR ("apps", 4096), .check = s_apps },
    S_END
};

static const xxl_field_t s_user_update [] = {
    { S_STR ("username", 64), .required = true, .check = s_account_name },
    { S_STR ("password", 1024), .check = s_password },
    { S_STR ("role", 16), .values = s_roles, .what = "role" },
    { S_STR ("apps", 4096), .check = s_apps },
    S_END
};

static const xxl_field_t s_user [] = {
    { S_STR ("username", 64), .required = true, .check = s_account_name },
    S_END
};

static const xxl_field_t s_token_add [] = {
    { S_STR ("name", 64), .required = true, .check = s_account_name },
    { S_STR ("role", 16), .required = true, .values = s_roles, .what = "role" },
    { S_STR ("apps", 4096), .check = s_apps },
    S_END
};

static const xxl_field_t s_token [] = {
    { S_STR ("name", 64), .required = true, .check = s_account_name },
    S_END
};

//  The table, from xxl_commands.def
const xxl_command_t xxl_commands [] = {
#define XXL_COMMAND(name, fields, access, scope, flags, ...) \
    [XXL_CMD_##name] = { #name, ((flags) & XXL_COMMAND_READ) != 0, fields, XXL_ACCESS_##access, \
                         scope, flags },
#define XXL_CTL_ONLY(cmd)
#include "xxl_commands.def"
#undef XXL_COMMAND
#undef XXL_CTL_ONLY
    [XXL_CMD_COUNT] = { NULL, false, NULL, XXL_ACCESS_ADMIN, NULL, 0 }
};

const char *
xxl_access_name (xxl_access_t access)
{
    return access == XXL_ACCESS_VIEWER? "viewer": access == XXL_ACCESS_OPERATOR? "operator": "admin";
}

const xxl_command_t *
xxl_command_find (const char *name)
{
    for (const xxl_command_t *command = xxl_commands; name && command->name; command++)
        if (strcmp (command->name, name) == 0)
            return command;
    return NULL;
}

bool
xxl_command_audited (const xxl_command_t *command)
{
    return command && !command->read_only && !(command->flags & XXL_COMMAND_UNAUDITED);
}

bool
xxl_command_audited_code (const xxl_command_t *command, int code)
{
    return xxl_command_audited (command)
        && !(code == XXL_OK && (command->flags & XXL_COMMAND_AUDIT_REFUSALS));
}

const xxl_field_t *
xxl_command_field (const xxl_command_t *command, const char *key)
{
    for (const xxl_field_t *field = command? command->fields: NULL; field && field->key; field++)
        if (strcmp (field->key, key) == 0)
            return field;
    return NULL;
}

const char *
xxl_field_values (const xxl_field_t *field, size_t from, char *buf, size_t buflen)
{
    size_t used = 0;
    if (buflen)
        *buf = 0;
    for (size_t i = from; field->values && field->values [i] && used < buflen; i++) {
        int n = snprintf (buf + used, buflen - used, "%s%s", i > from? ", ": "",
                          field->values [i]);
        if (n < 0)
            break;
        used += (size_t) n;
    }
    return buf;
}

//  A value outside the field's list: "unknown <what> 'X' (known: A, B)",
//  or "<key> must be A, B or C"
static int
s_refuse_value (const xxl_field_t *field, const char *value, char *why, size_t whylen)
{
    char known [512];
    if (field->what)
        return s_refuse (why, whylen, "unknown %s '%s' (known: %s)", field->what, S_SHOWN (value),
                         xxl_field_values (field, 0, known, sizeof known));
    size_t count = 0;
    while (field->values [count])
        count++;
    xxl_field_values (field, 0, known, sizeof known);
    char *last = count > 1? strrchr (known, ','): NULL;
    if (last)
        return s_refuse (why, whylen, "%s must be %.*s or %s", field->key, (int) (last - known),
                         known, last + 2);
    return s_refuse (why, whylen, "%s must be %s", field->key, known);
}

//  Reads a field through its getter, which latches a refusal in msg, into
//  arg; whether the message gave it
static bool
s_read_arg (const xxl_field_t *field, xxl_msg_t *msg, xxl_arg_t *arg)
{
    switch (field->type) {
        case XXL_FIELD_INT:
            arg->i = xxl_msg_int (msg, NULL, field->key, field->required, field->min,
                                  field->max, field->dflt);
            break;
        case XXL_FIELD_NUMBER:
            arg->n = xxl_msg_double (msg, NULL, field->key, field->required,
                                     (double) field->min, (double) field->max,
                                     (double) field->dflt);
            break;
        case XXL_FIELD_BOOL:
            arg->b = xxl_msg_bool (msg, NULL, field->key, field->required,
                                   (int) field->dflt) != 0;
            break;
        case XXL_FIELD_STR:
            arg->s = xxl_msg_str (msg, NULL, field->key, field->required,
                                  (size_t) field->max, field->text);
            break;
    }
    return xxl_command_has (msg, field->key);
}

int
xxl_command_judge (const xxl_command_t *command, xxl_msg_t *msg, int after,
                   xxl_args_t *args, char *why, size_t whylen)
{
    assert (command && args);
    assert (!args->command || args->command == command);
    args->command = command;
    const xxl_field_t *field;
    size_t i;
    //  Types, ranges and lengths, with the getters' texts
    for (field = command->fields, i = 0; field->key; field++, i++) {
        assert (i < XXL_ARGS_MAX);
        if (field->after != after)
            continue;
        bool given = s_read_arg (field, msg, &args->value [i]);
        if (xxl_msg_error (msg)) {
            snprintf (why, whylen, "%s", xxl_msg_error (msg));
            xxl_msg_clear_error (msg);
            return -1;
        }
        args->judged |= (uint32_t) 1 << i;
        if (given)
            args->given |= (uint32_t) 1 << i;
    }
    //  Then the values against their lists and rules
    for (field = command->fields, i = 0; field->key; field++, i++) {
        if (field->after != after || field->type != XXL_FIELD_STR
        ||  (!field->values && !field->check))
            continue;
        //  (the value as given: a default is not judged)
        const char *value = (args->given >> i) & 1? args->value [i].s: NULL;
        if (!value)
            continue;
        bool known = !field->values;
        for (size_t k = 0; !known && field->values [k]; k++)
            known = strcmp (field->values [k], value) == 0;
        if (!known)
            return s_refuse_value (field, value, why, whylen);
        if (field->check && field->check (value, why, whylen))
            return -1;
    }
    return 0;
}

int
xxl_command_check (const xxl_command_t *command, xxl_msg_t *msg, int after, char *why,
                   size_t whylen)
{
    xxl_args_t args = { 0 };
    return xxl_command_judge (command, msg, after, &args, why, whylen);
}

//  The place of key in args' command's table, when judged there (else -1)
static int
s_arg_index (const xxl_args_t *args, const char *key, xxl_field_type_t type)
{
    if (!args->command)
        return -1;
    int i = 0;
    for (const xxl_field_t *field = args->command->fields; field->key; field++, i++)
        if (strcmp (field->key, key) == 0) {
            assert (field->type == type);
            return (args->judged >> i) & 1? i: -1;
        }
    assert (!"key is a field of the command");
    return -1;
}

int64_t
xxl_args_int (const xxl_args_t *args, xxl_msg_t *msg, const char *key)
{
    int i = s_arg_index (args, key, XXL_FIELD_INT);
    return i >= 0? args->value [i].i: xxl_command_int (args->command, msg, key);
}

double
xxl_args_number (const xxl_args_t *args, xxl_msg_t *msg, const char *key)
{
    int i = s_arg_index (args, key, XXL_FIELD_NUMBER);
    return i >= 0? args->value [i].n: xxl_command_number (args->command, msg, key);
}

bool
xxl_args_bool (const xxl_args_t *args, xxl_msg_t *msg, const char *key)
{
    int i = s_arg_index (args, key, XXL_FIELD_BOOL);
    return i >= 0? args->value [i].b: xxl_command_bool (args->command, msg, key);
}

const char *
xxl_args_str (const xxl_args_t *args, xxl_msg_t *msg, const char *key)
{
    int i = s_arg_index (args, key, XXL_FIELD_STR);
    return i >= 0? args->value [i].s: xxl_command_str (args->command, msg, key);
}

bool
xxl_args_given (const xxl_args_t *args, xxl_msg_t *msg, const char *key)
{
    if (args->command) {
        int i = 0;
        for (const xxl_field_t *field = args->command->fields; field->key; field++, i++)
            if (strcmp (field->key, key) == 0 && ((args->judged >> i) & 1))
                return (args->given >> i) & 1;
    }
    return xxl_command_has (msg, key);
}

static const xxl_field_t *
s_field_of (const xxl_command_t *command, const char *key, xxl_field_type_t type)
{
    const xxl_field_t *field = xxl_command_field (command, key);
    assert (field && field->type == type);
    return field;
}

int64_t
xxl_command_int (const xxl_command_t *command, xxl_msg_t *msg, const char *key)
{
    const xxl_field_t *field = s_field_of (command, key, XXL_FIELD_INT);
    return xxl_msg_int (msg, NULL, key, 0, field->min, field->max, field->dflt);
}

double
xxl_command_number (const xxl_command_t *command, xxl_msg_t *msg, const char *key)
{
    const xxl_field_t *field = s_field_of (command, key, XXL_FIELD_NUMBER);
    return xxl_msg_double (msg, NULL, key, 0, (double) field->min, (double) field->max,
                           (double) field->dflt);
}

bool
xxl_command_bool (const xxl_command_t *command, xxl_msg_t *msg, const char *key)
{
    const xxl_field_t *field = s_field_of (command, key, XXL_FIELD_BOOL);
    return xxl_msg_bool (msg, NULL, key, 0, (int) field->dflt) != 0;
}

const char *
xxl_command_str (const xxl_command_t *command, xxl_msg_t *msg, const char *key)
{
    const xxl_field_t *field = s_field_of (command, key, XXL_FIELD_STR);
    return xxl_msg_str (msg, NULL, key, 0, (size_t) field->max, field->text);
}

bool
xxl_command_has (xxl_msg_t *msg, const char *key)
{
    return xxl_msg_get (xxl_msg_root (msg), key) != NULL;
}

int
xxl_command_shard (const char *text, int *index, int *total)
{
    //  Digits, '/', digits; no sign, space or leading zero
    const char *slash = strchr (text, '/');
    if (!slash || slash == text || !slash [1]
    ||  (text [0] == '0' && slash - text > 1) || (slash [1] == '0'))
        return -1;
    for (const char *p = text; *p; p++)
        if (p != slash && !isdigit ((unsigned char) *p))
            return -1;
    char *end = NULL;
    long i = strtol (text, &end, 10);
    if (end == text || *end != '/')
        return -1;
    const char *rest = end + 1;
    long n = strtol (rest, &end, 10);
    if (end == rest || *end || n < 1 || n > XXL_SHARD_MAX || i < 0 || i >= n)
        return -1;
    *index = (int) i;
    *total = (int) n;
    return 0;
}
