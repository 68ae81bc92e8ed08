/*  test_commands.c -- the api's command table and its judge (xxl_commands):
    each field type, range edges, lengths, required fields, wrong types,
    closed lists and rules, the order refusals come in, and the `after`
    stages; every refusal beside the accepted case it borders.  And
    docs/protocol.md ($srcdir) states every field of the table as the
    table has it: range, length, closed list, default (test_doc).

    A request is written as a line: `TYPE key=K:VALUE ...`, K one of
    i (integer), u (unsigned 64-bit), d (float), b (bool 0/1), s (string;
    \s is a space), x (a string of VALUE 'x's), n (nil), a (an empty
    array), z (a string holding a NUL byte), X (a string that is not UTF-8).
*/

#include "xxl/msg.h"
#include "xxl_commands.h"
#include "xxl_test.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static char s_why [512];

//  Encodes the request line into a message (NULL when it does not decode)
static xxl_msg_t *
s_msg (const char *line)
{
    char *copy = strdup (line), *save = NULL;
    char *type = strtok_r (copy, " ", &save);
    xxl_enc_t *enc = xxl_enc_new ();
    xxl_enc_request (enc, type, 1);
    for (char *tok = strtok_r (NULL, " ", &save); tok; tok = strtok_r (NULL, " ", &save)) {
        char *eq = strchr (tok, '=');
        *eq = 0;
        xxl_enc_key (enc, tok);
        char kind = eq [1];
        const char *value = eq + 3;
        if (kind == 'i')
            xxl_enc_int (enc, strtoll (value, NULL, 10));
        else
        if (kind == 'u') {
            uint64_t u = strtoull (value, NULL, 10);
            unsigned char bytes [9] = { 0xcf };
            for (int k = 0; k < 8; k++)
                bytes [1 + k] = (unsigned char) (u >> (56 - 8 * k));
            xxl_enc_raw (enc, bytes, 9, 0);
        }
        else
        if (kind == 'd')
            xxl_enc_double (enc, strtod (value, NULL));
        else
        if (kind == 'b')
            xxl_enc_bool (enc, atoi (value));
        else
        if (kind == 's') {
            char *text = strdup (value), *out = text;
            for (const char *p = value; *p; p++)
                if (p [0] == '\\' && p [1] == 's') {
                    *out++ = ' ';
                    p++;
                }
                else
                    *out++ = *p;
            *out = 0;
            xxl_enc_str (enc, text);
            free (text);
        }
        else
        if (kind == 'x') {
            size_t len = strtoull (value, NULL, 10);
            char *text = (char *) malloc (len + 1);
            memset (text, 'x', len);
            text [len] = 0;
            xxl_enc_str (enc, text);
            free (text);
        }
        else
        if (kind == 'n')
            xxl_enc_nil (enc);
        else
        if (kind == 'a') {
            xxl_enc_array_begin (enc);
            xxl_enc_array_end (enc);
        }
        else
        if (kind == 'z')
            xxl_enc_raw (enc, "\xa3" "a\0b", 4, 0);
        else
        if (kind == 'X')
            xxl_enc_raw (enc, "\xa2\xc3\x28", 3, 0);
    }
    size_t size;
    const void *data = xxl_enc_finish (enc, &size);
    char err [256];
    xxl_msg_t *msg = xxl_msg_decode (data, size, NULL, err, sizeof err);
    xxl_enc_destroy (&enc);
    free (copy);
    return msg;
}

//  Judges the line's fields of stage `after`: 0 or -1 (refusal in s_why)
static int
s_judge (const char *line, int after)
{
    *s_why = 0;
    xxl_msg_t *msg = s_msg (line);
    const xxl_command_t *command = msg? xxl_command_find (xxl_msg_type (msg)): NULL;
    int rc = command? xxl_command_check (command, msg, after, s_why, sizeof s_why): -2;
    if (msg && xxl_msg_error (msg))
        rc = -3;                        //  a refusal must not stay latched
    xxl_msg_destroy (&msg);
    return rc;
}

static int
s_refused (const char *line, int after, const char *text)
{
    if (s_judge (line, after) == -1 && strcmp (s_why, text) == 0)
        return 1;
    fprintf (stderr, "  %s (after %d): got '%s', not '%s'\n", line, after, s_why, text);
    return 0;
}

#define ACCEPT(line, after)         XXL_CHECK (s_judge (line, after) == 0)
#define REFUSE(line, after, text)   XXL_CHECK (s_refused (line, after, text))

static void
test_int (void)
{
    //  An integer from min to max: LOG_LIST limit 1..1000
    ACCEPT ("LOG_LIST limit=i:1", 0);
    REFUSE ("LOG_LIST limit=i:0", 0, "field 'limit' is 0, outside 1..1000");
    ACCEPT ("LOG_LIST limit=i:1000", 0);
    REFUSE ("LOG_LIST limit=i:1001", 0, "field 'limit' is 1001, outside 1..1000");
    //  A negative minimum: JOB_LIST triggerStatus -1..1
    ACCEPT ("JOB_LIST triggerStatus=i:-1", 0);
    REFUSE ("JOB_LIST triggerStatus=i:-2", 0, "field 'triggerStatus' is -2, outside -1..1");
    ACCEPT ("JOB_LIST triggerStatus=i:1", 0);
    REFUSE ("JOB_LIST triggerStatus=i:2", 0, "field 'triggerStatus' is 2, outside -1..1");
    //  Ids: 1..INT64_MAX; past it the wire's unsigned 64 bits are out of range
    ACCEPT ("JOB_SHOW jobId=i:1", 0);
    REFUSE ("JOB_SHOW jobId=i:0", 0, "field 'jobId' is 0, outside 1..9223372036854775807");
    ACCEPT ("JOB_SHOW jobId=u:9223372036854775807", 0);
    REFUSE ("JOB_SHOW jobId=u:9223372036854775808", 0, "field 'jobId' is out of range");
    //  The cursors of the lists that page back by id: before 1..INT64_MAX
    //  (AUDIT_LIST's, WORKFLOW_RUNS', BACKFILL_LIST's)
    ACCEPT ("WORKFLOW_RUNS workflowId=i:1 before=i:1", 0);
    REFUSE ("WORKFLOW_RUNS workflowId=i:1 before=i:0", 0,
            "field 'before' is 0, outside 1..9223372036854775807");
    REFUSE ("WORKFLOW_RUNS workflowId=i:1 before=s:x", 0, "field 'before' must be an integer");
    ACCEPT ("BACKFILL_LIST before=u:9223372036854775807", 0);
    REFUSE ("BACKFILL_LIST jobId=i:3 before=i:-1", 0,
            "field 'before' is -1, outside 1..9223372036854775807");
    REFUSE ("AUDIT_LIST before=i:0", 0, "field 'before' is 0, outside 1..9223372036854775807");
    //  An int32 maximum: LOG_CAT fromLineNum 1..2147483647
    ACCEPT ("LOG_CAT logId=i:1 fromLineNum=i:2147483647", 0);
    REFUSE ("LOG_CAT logId=i:1 fromLineNum=i:2147483648", 0,
            "field 'fromLineNum' is 2147483648, outside 1..2147483647");
    //  A job field: executorTimeout 0..31536000
    ACCEPT ("JOB_ADD jobGroup=s:a executorTimeout=i:0", 1);
    REFUSE ("JOB_ADD jobGroup=s:a executorTimeout=i:-1", 1,
            "field 'executorTimeout' is -1, outside 0..31536000");
    ACCEPT ("JOB_ADD jobGroup=s:a executorTimeout=i:31536000", 1);
    REFUSE ("JOB_ADD jobGroup=s:a executorTimeout=i:31536001", 1,
            "field 'executorTimeout' is 31536001, outside 0..31536000");
    //  Wrong types
    ACCEPT ("LOG_LIST offset=i:5", 0);
    REFUSE ("LOG_LIST offset=s:5", 0, "field 'offset' must be an integer");
    REFUSE ("LOG_LIST offset=d:5", 0, "field 'offset' must be an integer");
    REFUSE ("LOG_LIST offset=b:1", 0, "field 'offset' must be an integer");
    REFUSE ("LOG_LIST offset=a:", 0, "field 'offset' must be an integer");
}

static void
test_number (void)
{
    //  An integer or a float from 1 to 100: retryBackoff
    ACCEPT ("JOB_ADD jobGroup=s:a retryBackoff=d:1", 1);
    ACCEPT ("JOB_ADD jobGroup=s:a retryBackoff=i:1", 1);
    REFUSE ("JOB_ADD jobGroup=s:a retryBackoff=d:0.999", 1,
            "field 'retryBackoff' is 0.999, outside 1..100");
    REFUSE ("JOB_ADD jobGroup=s:a retryBackoff=i:0", 1, "field 'retryBackoff' is 0, outside 1..100");
    ACCEPT ("JOB_ADD jobGroup=s:a retryBackoff=d:100", 1);
    REFUSE ("JOB_ADD jobGroup=s:a retryBackoff=d:100.001", 1,
            "field 'retryBackoff' is 100.001, outside 1..100");
    REFUSE ("JOB_ADD jobGroup=s:a retryBackoff=d:nan", 1,
            "field 'retryBackoff' is nan, outside 1..100");
    ACCEPT ("JOB_ADD jobGroup=s:a retryBackoff=d:2.5", 1);
    REFUSE ("JOB_ADD jobGroup=s:a retryBackoff=s:2.5", 1, "field 'retryBackoff' must be a number");
}

static void
test_bool (void)
{
    ACCEPT ("JOB_ADD jobGroup=s:a start=b:1", 0);
    ACCEPT ("JOB_ADD jobGroup=s:a start=b:0", 0);
    REFUSE ("JOB_ADD jobGroup=s:a start=i:1", 0, "field 'start' must be a boolean");
    REFUSE ("JOB_ADD jobGroup=s:a start=s:true", 0, "field 'start' must be a boolean");
    ACCEPT ("LOG_CLEAR all=b:1", 0);
    REFUSE ("LOG_CLEAR all=i:1", 0, "field 'all' must be a boolean");
}

static void
test_str (void)
{
    //  At most max bytes: a name 255, a timezone 64, glue source 1 MiB
    ACCEPT ("GROUP_SHOW group=x:255", 0);
    REFUSE ("GROUP_SHOW group=x:256", 0, "field 'group' is 256 bytes, over its limit of 255");
    ACCEPT ("JOB_ADD jobGroup=s:a timezone=x:64", 1);
    REFUSE ("JOB_ADD jobGroup=s:a timezone=x:65", 1,
            "field 'timezone' is 65 bytes, over its limit of 64");
    ACCEPT ("JOB_ADD jobGroup=s:a glueSource=x:1048576", 1);
    REFUSE ("JOB_ADD jobGroup=s:a glueSource=x:1048577", 1,
            "field 'glueSource' is 1048577 bytes, over its limit of 1048576");
    //  The empty string is a string
    ACCEPT ("JOB_TRIGGER jobId=i:1 executorParam=s:", 1);
    //  Wrong types and bytes
    ACCEPT ("GROUP_SHOW group=s:7", 0);
    REFUSE ("GROUP_SHOW group=i:7", 0, "field 'group' must be a string");
    REFUSE ("GROUP_SHOW group=b:1", 0, "field 'group' must be a string");
    REFUSE ("GROUP_SHOW group=z:", 0, "field 'group' contains a NUL byte");
    REFUSE ("GROUP_SHOW group=X:", 0, "field 'group' is not valid UTF-8");
}

static void
test_required (void)
{
    ACCEPT ("GROUP_SHOW group=s:a", 0);
    REFUSE ("GROUP_SHOW", 0, "field 'group' is required");
    REFUSE ("GROUP_SHOW group=n:", 0, "field 'group' is required");        //  nil: absent
    ACCEPT ("GLUE_ROLLBACK jobId=i:1 version=i:1", 0);
    REFUSE ("GLUE_ROLLBACK jobId=i:1", 0, "field 'version' is required");
    ACCEPT ("GLUE_SHOW jobId=i:1", 0);                                      //  optional there
    ACCEPT ("GROUP_ADD appname=s:a", 0);
    REFUSE ("GROUP_ADD title=s:a", 0, "field 'appname' is required");
    //  Optional fields may be absent or nil
    ACCEPT ("LOG_LIST", 0);
    ACCEPT ("LOG_LIST limit=n:", 0);
    //  Fields the command does not have are not judged
    ACCEPT ("PING jobId=s:x limit=a:", 0);
}

static void
test_values (void)
{
    //  Closed lists, named by `what`
    ACCEPT ("JOB_ADD jobGroup=s:a glueType=s:GLUE_POWERSHELL", 1);
    ACCEPT ("JOB_ADD jobGroup=s:a glueType=s:GLUE_GROOVY", 1);
    //  XXL-JOB 3.2's GLUE(Python2)
    ACCEPT ("JOB_ADD jobGroup=s:a glueType=s:GLUE_PYTHON2", 1);
    ACCEPT ("JOB_UPDATE jobId=i:1 glueType=s:GLUE_PYTHON2", 2);
    REFUSE ("JOB_ADD jobGroup=s:a glueType=s:GLUE_JAVA", 1, "unknown glue type 'GLUE_JAVA'"
            " (known: BEAN, GLUE_SHELL, GLUE_PYTHON, GLUE_PYTHON2, GLUE_NODEJS, GLUE_PHP,"
            " GLUE_POWERSHELL, GLUE_GROOVY)");
    ACCEPT ("JOB_ADD jobGroup=s:a scheduleType=s:FIX_DELAY", 1);
    REFUSE ("JOB_ADD jobGroup=s:a scheduleType=s:cron", 1,
            "unknown schedule type 'cron' (known: NONE, CRON, FIX_RATE, FIX_DELAY)");
    ACCEPT ("JOB_ADD jobGroup=s:a misfireStrategy=s:FIRE_ONCE_NOW", 1);
    REFUSE ("JOB_ADD jobGroup=s:a misfireStrategy=s:", 1,
            "unknown misfire strategy '' (known: DO_NOTHING, FIRE_ONCE_NOW)");
    ACCEPT ("JOB_ADD jobGroup=s:a executorBlockStrategy=s:COVER_EARLY", 1);
    REFUSE ("JOB_ADD jobGroup=s:a executorBlockStrategy=s:COVER", 1, "unknown block strategy"
            " 'COVER' (known: SERIAL_EXECUTION, DISCARD_LATER, COVER_EARLY)");
    //  Route strategies are router plugins: an open list, the handler's
    ACCEPT ("JOB_ADD jobGroup=s:a executorRouteStrategy=s:ANYTHING", 1);
    //  A list without `what`
    ACCEPT ("JOB_TRIGGER jobId=i:1 triggerType=s:API", 1);
    REFUSE ("JOB_TRIGGER jobId=i:1 triggerType=s:api", 1, "triggerType must be MANUAL or API");
    //  Rules of a field's own: an app name, a shard
    ACCEPT ("GROUP_ADD appname=s:my-app_1.x", 0);
    REFUSE ("GROUP_ADD appname=s:", 0, "appname must not be empty");
    REFUSE ("GROUP_ADD appname=s:my\\sapp", 0,
            "appname 'my app' may hold only letters, digits, '-', '_' and '.'");
    //  (a refused value is quoted with its control characters escaped: a
    //  terminal or a log shows the text, not what its bytes would do)
    REFUSE ("GROUP_ADD appname=s:my\x1b[31mapp", 0,
            "appname 'my\\x1b[31mapp' may hold only letters, digits, '-', '_' and '.'");
    REFUSE ("JOB_ADD jobGroup=s:a scheduleType=s:CRON\x07", 1,
            "unknown schedule type 'CRON\\x07' (known: NONE, CRON, FIX_RATE, FIX_DELAY)");
    ACCEPT ("GROUP_ADD appname=s:12a", 0);
    REFUSE ("GROUP_ADD appname=s:12", 0, "appname '12' must not be all digits: a group named by"
            " digits is the group of that id");
    ACCEPT ("JOB_TRIGGER jobId=i:1 shard=s:0/1", 1);
    REFUSE ("JOB_TRIGGER jobId=i:1 shard=s:1/1", 1,
            "shard '1/1' must be I/N with 0 <= I < N <= 100000");
    ACCEPT ("JOB_TRIGGER jobId=i:1 shard=s:99999/100000", 1);
    REFUSE ("JOB_TRIGGER jobId=i:1 shard=s:0/100001", 1,
            "shard '0/100001' must be I/N with 0 <= I < N <= 100000");
    REFUSE ("JOB_TRIGGER jobId=i:1 shard=s:01/2", 1,
            "shard '01/2' must be I/N with 0 <= I < N <= 100000");
}

static void
test_order (void)
{
    //  The first field of the table is named first, whatever the request's order
    REFUSE ("LOG_LIST offset=s:1 limit=s:1", 0, "field 'limit' must be an integer");
    REFUSE ("JOB_COPY jobDesc=i:1", 0, "field 'jobDesc' must be a string");
    //  Types and ranges before lists and rules
    REFUSE ("JOB_ADD jobGroup=s:a scheduleType=s:BAD executorTimeout=i:-1", 1,
            "field 'executorTimeout' is -1, outside 0..31536000");
    REFUSE ("GROUP_ADD appname=s:a\\sb addressType=i:2", 0,
            "field 'addressType' is 2, outside 0..1");
    REFUSE ("JOB_TRIGGER jobId=i:1 triggerType=s:X shard=s:bad", 1,
            "shard 'bad' must be I/N with 0 <= I < N <= 100000");
    //  Each stage judges its own fields: JOB_UPDATE's jobId (0), jobGroup
    //  (1, after the job's lookup), the job's fields (2, after the group's)
    const char *update = "JOB_UPDATE jobId=i:1 jobGroup=i:5 glueType=s:BAD";
    ACCEPT (update, 0);
    REFUSE (update, 1, "field 'jobGroup' must be a string");
    REFUSE (update, 2, "unknown glue type 'BAD' (known: BEAN, GLUE_SHELL, GLUE_PYTHON,"
            " GLUE_PYTHON2, GLUE_NODEJS, GLUE_PHP, GLUE_POWERSHELL, GLUE_GROOVY)");
    REFUSE ("JOB_UPDATE jobId=s:1 jobGroup=i:5", 0, "field 'jobId' must be an integer");
    ACCEPT ("JOB_NEXT jobId=i:1 count=i:0", 0);
    REFUSE ("JOB_NEXT jobId=i:1 count=i:0", 1, "field 'count' is 0, outside 1..100");
    ACCEPT ("GROUP_UPDATE group=s:a appname=s:", 0);
    REFUSE ("GROUP_UPDATE group=s:a appname=s:", 1, "appname must not be empty");
}

static void
test_values_read (void)
{
    const xxl_command_t *list = xxl_command_find ("LOG_LIST");
    XXL_CHECK (list && list->read_only);
    XXL_CHECK (xxl_command_find ("FROBNICATE") == NULL);
    XXL_CHECK (!xxl_command_find ("JOB_ADD")->read_only);
    //  Changes are audited; reads, and LOG_CAT (a read through the agent), not
    XXL_CHECK (xxl_command_audited (xxl_command_find ("JOB_UPDATE")));
    XXL_CHECK (xxl_command_audited (xxl_command_find ("LOG_KILL")));
    XXL_CHECK (!xxl_command_audited (xxl_command_find ("LOG_CAT")));
    //  An accepted trigger is recorded by its runs' rows; a refused one here
    XXL_CHECK (!xxl_command_audited_code (xxl_command_find ("JOB_TRIGGER"), 200));
    XXL_CHECK (xxl_command_audited_code (xxl_command_find ("JOB_TRIGGER"), 403));
    XXL_CHECK (xxl_command_audited_code (xxl_command_find ("JOB_TRIGGER"), 404));
    XXL_CHECK (xxl_command_audited_code (xxl_command_find ("JOB_UPDATE"), 200));
    XXL_CHECK (!xxl_command_audited (list) && !xxl_command_audited (NULL));
    const xxl_command_t *audit = xxl_command_find ("AUDIT_LIST");
    XXL_CHECK (audit && audit->read_only && !xxl_command_audited (audit));
    xxl_msg_t *audit_msg = s_msg ("AUDIT_LIST");
    XXL_CHECK (xxl_command_int (audit, audit_msg, "limit") == 100);
    XXL_CHECK (xxl_command_int (audit, audit_msg, "before") == INT64_MAX);
    xxl_msg_destroy (&audit_msg);
    //  (WORKFLOW_RUNS and BACKFILL_LIST page as it does: from the newest)
    const char *pages [] = { "WORKFLOW_RUNS", "BACKFILL_LIST" };
    for (size_t i = 0; i < 2; i++) {
        const xxl_command_t *paged = xxl_command_find (pages [i]);
        xxl_msg_t *paged_msg = s_msg (pages [i]);
        XXL_CHECK (paged && paged->read_only && !xxl_command_audited (paged));
        XXL_CHECK (xxl_command_int (paged, paged_msg, "before") == INT64_MAX);
        XXL_CHECK (xxl_command_int (paged, paged_msg, "limit") == 100);
        xxl_msg_destroy (&paged_msg);
    }
    //  Judged fields are read with their defaults
    xxl_msg_t *msg = s_msg ("LOG_LIST jobId=i:7");
    XXL_CHECK (xxl_command_int (list, msg, "jobId") == 7);
    XXL_CHECK (xxl_command_int (list, msg, "limit") == 100);
    XXL_CHECK (xxl_command_int (list, msg, "maxId") == INT64_MAX);
    XXL_CHECK (xxl_command_has (msg, "jobId") && !xxl_command_has (msg, "limit"));
    xxl_msg_destroy (&msg);
    const xxl_command_t *trigger = xxl_command_find ("JOB_TRIGGER");
    msg = s_msg ("JOB_TRIGGER jobId=i:1");
    XXL_CHECK (strcmp (xxl_command_str (trigger, msg, "triggerType"), "MANUAL") == 0);
    XXL_CHECK (xxl_command_str (trigger, msg, "shard") == NULL);
    xxl_msg_destroy (&msg);
    //  Judged once into args: each field's value and whether it was given,
    //  read back without the message's getters; a field of a later lookup
    //  is not judged yet (read from the message, as before)
    msg = s_msg ("JOB_TRIGGER jobId=i:4 shard=s:1/3");
    xxl_args_t args = { 0 };
    char why [512] = "";
    XXL_CHECK (xxl_command_judge (trigger, msg, 0, &args, why, sizeof why) == 0);
    XXL_CHECK (args.command == trigger && args.judged == 1 && args.given == 1);
    XXL_CHECK (xxl_args_int (&args, msg, "jobId") == 4);
    XXL_CHECK (xxl_command_judge (trigger, msg, 1, &args, why, sizeof why) == 0);
    XXL_CHECK (xxl_args_given (&args, msg, "shard") && !xxl_args_given (&args, msg, "address"));
    XXL_CHECK (strcmp (xxl_args_str (&args, msg, "shard"), "1/3") == 0);
    XXL_CHECK (strcmp (xxl_args_str (&args, msg, "triggerType"), "MANUAL") == 0);
    XXL_CHECK (xxl_args_str (&args, msg, "address") == NULL);
    xxl_msg_destroy (&msg);
    //  The same refusals as xxl_command_check, the rule's text included
    msg = s_msg ("JOB_TRIGGER jobId=i:4 shard=s:3/3");
    xxl_args_t refused = { 0 };
    XXL_CHECK (xxl_command_judge (trigger, msg, 1, &refused, why, sizeof why) == -1);
    XXL_CHECK (strstr (why, "shard '3/3'") != NULL);
    xxl_msg_destroy (&msg);
    const xxl_command_t *add = xxl_command_find ("JOB_ADD");
    msg = s_msg ("JOB_ADD jobGroup=s:a retryBackoff=i:3");
    xxl_args_t added = { 0 };
    for (int after = 0; after < 3; after++)
        XXL_CHECK (xxl_command_judge (add, msg, after, &added, why, sizeof why) == 0);
    XXL_CHECK (xxl_args_number (&added, msg, "retryBackoff") == 3.0);
    XXL_CHECK (!xxl_args_bool (&added, msg, "start"));
    XXL_CHECK (xxl_command_number (add, msg, "retryBackoff") == 3.0);
    XXL_CHECK (!xxl_command_bool (add, msg, "start"));
    xxl_msg_destroy (&msg);
    char buf [256];
    const xxl_field_t *glue = xxl_command_field (add, "glueType");
    XXL_CHECK (strcmp (xxl_field_values (glue, 1, buf, sizeof buf),
                       "GLUE_SHELL, GLUE_PYTHON, GLUE_PYTHON2, GLUE_NODEJS, GLUE_PHP,"
                       " GLUE_POWERSHELL, GLUE_GROOVY") == 0);
    XXL_CHECK (strcmp (xxl_field_values (xxl_command_field (add, "jobDesc"), 0, buf, sizeof buf),
                       "") == 0);
    int index = -1, total = -1;
    XXL_CHECK (xxl_command_shard ("2/3", &index, &total) == 0 && index == 2 && total == 3);
    XXL_CHECK (xxl_command_shard ("3/3", &index, &total) == -1);
    XXL_CHECK (xxl_command_shard ("+1/3", &index, &total) == -1);
    XXL_CHECK (xxl_command_shard ("1/3/", &index, &total) == -1);
}

//  The table itself: names and keys once each, ranges that make sense
static void
test_table (void)
{
    size_t commands = 0;
    for (const xxl_command_t *c = xxl_commands; c->name; c++, commands++) {
        XXL_CHECK (xxl_command_find (c->name) == c);
        for (const xxl_field_t *f = c->fields; f->key; f++) {
            XXL_CHECK (xxl_command_field (c, f->key) == f);
            XXL_CHECK (f->min <= f->max);
            XXL_CHECK (f->type == XXL_FIELD_STR || (!f->values && !f->check && !f->text));
            XXL_CHECK (f->type != XXL_FIELD_STR || (f->max > 0 && f->min == 0));
            XXL_CHECK (f->after >= 0 && f->after <= 2);
        }
    }
    XXL_CHECK (commands == 56);
    //  From xxl_commands.def: each at its index, its flags as its fields
    XXL_CHECK (XXL_CMD_COUNT == 56);
    XXL_CHECK (strcmp (xxl_commands [XXL_CMD_JOB_TRIGGER].name, "JOB_TRIGGER") == 0);
    XXL_CHECK (xxl_command_find ("LOG_CLEAR") == &xxl_commands [XXL_CMD_LOG_CLEAR]);
    for (const xxl_command_t *c = xxl_commands; c->name; c++) {
        XXL_CHECK (c->read_only == ((c->flags & XXL_COMMAND_READ) != 0));
        XXL_CHECK (!c->read_only || !(c->flags & (XXL_COMMAND_UNAUDITED
                                                  | XXL_COMMAND_AUDIT_REFUSALS)));
        XXL_CHECK ((c->access == XXL_ACCESS_OPERATOR) == (c->scope != NULL));
    }
    const xxl_command_t *trigger = &xxl_commands [XXL_CMD_JOB_TRIGGER];
    XXL_CHECK (xxl_command_audited_code (trigger, 404) && !xxl_command_audited_code (trigger, 200));
    XXL_CHECK (!xxl_command_audited (&xxl_commands [XXL_CMD_LOG_CAT]));
    XXL_CHECK (xxl_command_audited_code (&xxl_commands [XXL_CMD_LOG_KILL], 200));
}

//  --------------------------------------------------------------------
//  docs/protocol.md states every field of the table as the table has it:
//  in the command's row of the client api table (or, for a job's fields,
//  in the Job fields table; GROUP_UPDATE's in GROUP_ADD's row), each
//  field's text (from its `key` to the next field of the command) gives
//  its type, range ("int a–b", "≥ a" when unbounded above), longest
//  length ("string ≤ N bytes", "64 KiB", "1 MiB"; "G" for a group), closed
//  list of values and default.  Numbers may carry thousands separators.

static char *s_doc;                     //  protocol.md, NULL when unread
static int s_doc_misses;                //  statements found missing

//  The file at path, NUL-ended (caller frees), or NULL
static char *
s_slurp (const char *path)
{
    FILE *file = fopen (path, "rb");
    if (!file)
        return NULL;
    fseek (file, 0, SEEK_END);
    long size = ftell (file);
    fseek (file, 0, SEEK_SET);
    char *text = size >= 0? (char *) malloc ((size_t) size + 1): NULL;
    if (text && fread (text, 1, (size_t) size, file) != (size_t) size) {
        free (text);
        text = NULL;
    }
    if (text)
        text [size] = 0;
    fclose (file);
    return text;
}

//  A copy of [from, to) with thousands separators dropped and U+2212
//  (minus) written '-' (caller frees)
static char *
s_normal (const char *from, const char *to)
{
    char *out = (char *) malloc ((size_t) (to - from) + 1), *at = out;
    for (const char *p = from; p < to; p++) {
        if (*p == ',' && p > from && p [-1] >= '0' && p [-1] <= '9'
        &&  p + 3 < to && p [1] >= '0' && p [1] <= '9')
            continue;
        if (strncmp (p, "\xe2\x88\x92", 3) == 0 && p + 3 <= to) {
            *at++ = '-';
            p += 2;
            continue;
        }
        *at++ = *p;
    }
    *at = 0;
    return out;
}

//  The first line of the doc after the line `after` that starts with
//  start, as [*from, *to), or false
static bool
s_doc_line (const char *after, const char *start, const char **from, const char **to)
{
    size_t length = strlen (start);
    const char *section = strstr (s_doc, after);
    for (const char *line = section; line && *line; ) {
        const char *end = strchr (line, '\n');
        if (!end)
            end = line + strlen (line);
        if ((size_t) (end - line) >= length && strncmp (line, start, length) == 0) {
            *from = line;
            *to = end;
            return true;
        }
        line = *end? end + 1: end;
    }
    return false;
}

//  The request cell of the command's row in the client api table
static bool
s_doc_row (const char *command, const char **from, const char **to)
{
    char name [64];
    snprintf (name, sizeof name, "`%s`", command);
    //  (the commands' table is under "Client API": rows before it, such
    //  as the scope of reads by role, name commands for other reasons)
    const char *section = strstr (s_doc, "\n## Client API");
    for (const char *line = section? section + 1: s_doc; line && *line; ) {
        const char *end = strchr (line, '\n');
        if (!end)
            end = line + strlen (line);
        const char *cell = strstr (line, " | ");
        //  (a row whose first cell names the command: "| `JOB_START` / `JOB_STOP` |")
        if (strncmp (line, "| `", 3) == 0 && cell && cell < end) {
            const char *found = strstr (line, name);
            if (found && found < cell) {
                const char *next = strstr (cell + 3, " | ");
                *from = cell + 3;
                *to = next && next < end? next: end;
                return true;
            }
        }
        line = *end? end + 1: end;
    }
    return false;
}

static void
s_miss (const char *command, const char *key, const char *what)
{
    fprintf (stderr, "# protocol.md: %s's `%s` does not state %s\n", command, key, what);
    s_doc_misses++;
}

//  Whether text (normalized) states the integer range of field
static bool
s_states_range (const char *text, const xxl_field_t *field)
{
    char want [96];
    if (field->max == INT64_MAX) {
        snprintf (want, sizeof want, "\xe2\x89\xa5 %" PRId64, field->min);
        return strstr (text, want) != NULL;
    }
    snprintf (want, sizeof want, "%" PRId64 "\xe2\x80\x93%" PRId64, field->min, field->max);
    if (strstr (text, want))
        return true;
    snprintf (want, sizeof want, "%" PRId64 " to %" PRId64, field->min, field->max);
    return strstr (text, want) != NULL;
}

//  Whether text (normalized) states a string's longest length
static bool
s_states_length (const char *text, int64_t max)
{
    char want [64];
    snprintf (want, sizeof want, "\xe2\x89\xa4 %" PRId64 " bytes", max);
    if (strstr (text, want))
        return true;
    if (max == 64 * 1024 && strstr (text, "\xe2\x89\xa4 64 KiB"))
        return true;
    if (max == 1024 * 1024 && strstr (text, "\xe2\x89\xa4 1 MiB"))
        return true;
    //  G: the group's name or id, whose length the doc gives once
    return max == XXL_MSG_MAX_NAME && strstr (text, "(G")
        && strstr (s_doc, "`G` below is a group: its app name or its numeric id, as a string\n"
                          "\xe2\x89\xa4 255 bytes");
}

//  Checks one field against its text; job_row: text is a Job fields row
//  ("| `key` | type | default | values |"), else the field's part of a
//  command's row
static void
s_check_field (const char *command, const xxl_field_t *field, const char *text, bool job_row)
{
    const char *dflt_at = NULL;
    if (job_row) {
        //  The default cell: the third
        const char *cell = strstr (text + 1, " | ");
        cell = cell? strstr (cell + 3, " | "): NULL;
        dflt_at = cell? cell + 3: NULL;
    }
    bool in_range = field->dflt >= field->min && field->dflt <= field->max;
    switch (field->type) {
        case XXL_FIELD_INT:
        case XXL_FIELD_NUMBER:
            if (!s_states_range (text, field)) {
                char what [96];
                snprintf (what, sizeof what, "its range %" PRId64 "..%" PRId64,
                          field->min, field->max);
                s_miss (command, field->key, what);
            }
            if (!field->required && in_range) {
                if (!job_row) {
                    dflt_at = strstr (text, "default");
                    if (dflt_at)
                        dflt_at += strlen ("default");
                    while (dflt_at && (*dflt_at == ' ' || *dflt_at == ':'))
                        dflt_at++;
                }
                if (!dflt_at)
                    s_miss (command, field->key, "its default");
                else
                if ((*dflt_at >= '0' && *dflt_at <= '9') || *dflt_at == '-') {
                    if (strtoll (dflt_at, NULL, 10) != field->dflt)
                        s_miss (command, field->key, "its default as the table has it");
                }
                else
                if (job_row)
                    s_miss (command, field->key, "its default as a number");
            }
            break;
        case XXL_FIELD_STR:
            if (!s_states_length (text, field->max)) {
                char what [64];
                snprintf (what, sizeof what, "its length %" PRId64, field->max);
                s_miss (command, field->key, what);
            }
            for (size_t i = 0; field->values && field->values [i]; i++) {
                char value [64];
                snprintf (value, sizeof value, "`%s`", field->values [i]);
                if (!strstr (text, value))
                    s_miss (command, field->key, field->values [i]);
            }
            if (field->text && *field->text && !job_row && !strstr (text, "default"))
                s_miss (command, field->key, "its default");
            break;
        case XXL_FIELD_BOOL:
            if (!strstr (text, "bool"))
                s_miss (command, field->key, "that it is a bool");
            break;
    }
}

//  The field's part of the command's row (normalized, caller frees), or
//  NULL when the row does not name it
static char *
s_field_text (const xxl_command_t *command, const char *from, const char *to, const char *key)
{
    char name [80];
    snprintf (name, sizeof name, "`%s`", key);
    char *cell = s_normal (from, to);
    char *start = strstr (cell, name);
    if (!start) {
        free (cell);
        return NULL;
    }
    char *end = start + strlen (start);
    for (const xxl_field_t *other = command->fields; other->key; other++) {
        snprintf (name, sizeof name, "`%s`", other->key);
        char *next = strcmp (other->key, key)? strstr (start + 1, name): NULL;
        if (next && next < end)
            end = next;
    }
    *end = 0;
    char *text = strdup (start);
    free (cell);
    return text;
}

static void
test_doc (void)
{
    const char *srcdir = getenv ("srcdir");
    char path [4096];
    snprintf (path, sizeof path, "%s/docs/protocol.md", srcdir && *srcdir? srcdir: ".");
    s_doc = s_slurp (path);
    XXL_CHECK (s_doc != NULL);
    if (!s_doc)
        return;
    //  Ids: their range once, for every command
    bool ids_stated = strstr (s_doc, "`jobId`, `logId` and `version` are integers \xe2\x89\xa5 1")
                      != NULL;
    XXL_CHECK (ids_stated);
    for (const xxl_command_t *c = xxl_commands; c->name; c++) {
        const char *from, *to;
        if (!s_doc_row (c->name, &from, &to)) {
            s_miss (c->name, "", "the command (no row)");
            continue;
        }
        for (const xxl_field_t *f = c->fields; f->key; f++) {
            char *text = s_field_text (c, from, to, f->key);
            bool job_row = false;
            if (!text) {
                //  GROUP_UPDATE: "any of the `GROUP_ADD` fields"; a job's
                //  fields: the Job fields table
                const char *add_from, *add_to;
                char line [96];
                snprintf (line, sizeof line, "| `%s` | ", f->key);
                const char *cell = strstr (from, "any of the `GROUP_ADD` fields");
                if (cell && cell < to && s_doc_row ("GROUP_ADD", &add_from, &add_to))
                    text = s_field_text (xxl_command_find ("GROUP_ADD"), add_from, add_to,
                                         f->key);
                else
                if ((!strcmp (c->name, "JOB_ADD") || !strcmp (c->name, "JOB_UPDATE"))
                &&  s_doc_line ("\n### Job fields\n", line, &add_from, &add_to)) {
                    text = s_normal (add_from, add_to);
                    job_row = true;
                }
            }
            if (!text) {
                s_miss (c->name, f->key, "the field (not named)");
                continue;
            }
            if (f->type == XXL_FIELD_INT && f->min == 1 && f->max == INT64_MAX && f->required
            &&  (!strcmp (f->key, "jobId") || !strcmp (f->key, "logId") || !strcmp (f->key, "version"))
            &&  ids_stated) {
                free (text);
                continue;
            }
            s_check_field (c->name, f, text, job_row);
            free (text);
        }
    }
    //  A command that judges some fields only after a lookup (`after`)
    //  is named where protocol.md says which refusal comes first
    const char *order = strstr (s_doc, "**Which refusal comes first.**");
    const char *order_end = order? strstr (order, "\n\n"): NULL;
    XXL_CHECK (order && order_end);
    for (const xxl_command_t *c = xxl_commands; c->name && order && order_end; c++) {
        bool after = false;
        for (const xxl_field_t *f = c->fields; f->key; f++)
            after = after || f->after > 0;
        char name [64];
        snprintf (name, sizeof name, "`%s`", c->name);
        const char *named = strstr (order, name);
        if (after && !(named && named < order_end))
            s_miss (c->name, c->fields [0].key,
                    "that it is judged, and its subject looked up, before the rest"
                    " (Which refusal comes first)");
    }
    XXL_CHECK (s_doc_misses == 0);
    free (s_doc);
    s_doc = NULL;
}

int
main (void)
{
    test_int ();
    test_number ();
    test_bool ();
    test_str ();
    test_required ();
    test_values ();
    test_order ();
    test_values_read ();
    test_table ();
    test_doc ();
    return xxl_test_done ();
}
