/*  xxl_ctl_trigger.c -- xxl-ctl job trigger: run a job once now, and with
    --wait until its runs end.

    JOB_TRIGGER answers once the run rows are written (docs/protocol.md);
    the runs then go on without the client.  After the answer each run is
    read back with LOG_SHOW: a run is finished when its trigger failed
    (triggerCode other than 0 and 200: no agent, refused by the agent) or
    its result came (handleCode other than 0: 200 success, anything else a
    failure).  Without --wait that one look reports a run the scheduler
    (or a quick agent) failed at once; with --wait the runs still going
    are read again after 100 ms, doubling to at most 2 s between looks,
    until each has ended or --timeout S has passed.  Exit status:
    XXL_CTL_OK, XXL_CTL_RUN_FAILED when any run failed (each failure's
    message on err), else XXL_CTL_WAIT_TIMEOUT when a run was still going
    at the timeout; XXL_CTL_FAILED when the trigger was refused or a read
    failed.  With --json the one document is the trigger's {logIds}, with
    `result` ("success", "failure", "timeout"), `error` (the first
    failure's text) and `runs` (the runs as LOG_SHOW last gave them) added
    when a run failed or --wait was given.
*/

#include "xxl_ctl_cmd.h"
#include "xxl_ctl_call.h"
#include "xxl_ctl_print.h"
#include "xxl_ctl_value.h"

#include <czmq.h>
#include <inttypes.h>

#define XXL_CTL_WAIT_FIRST      100     //  ms before the second look
#define XXL_CTL_WAIT_MAX        2000    //  ms between looks at most
#define XXL_CTL_WAIT_LIMIT      31536000    //  longest --timeout, s (a year)

static const ctl_pos_t s_trigger_pos [] = { { "job id", CTL_ID, "jobId" } };

static const ctl_opt_t s_trigger_opts [] = {
    { "--param", NULL, "P", "executor parameter for this run (default: the job's)",
      CTL_STR, 0, 0, "executorParam", NULL },
    { "--param-file", NULL, "FILE", "executor parameter read from FILE ('-': stdin;"
      " at most {max} bytes)", CTL_FILE, 0, 0, "executorParam", NULL },
    { "--address", NULL, "A", "run on this agent address instead of routing",
      CTL_STR, 0, 0, "address", NULL },
    { "--shard", NULL, "I/N", "run as shard I of N", CTL_SHARD, 0, 0, "shard", NULL },
    { "--wait", NULL, NULL, "wait until the runs end; the exit status is their result",
      CTL_BOOL, 0, 0, NULL, NULL },
    { "--timeout", NULL, "S", "with --wait: give up after S seconds (exit status 4;"
      " default: no limit)", CTL_INT, 1, XXL_CTL_WAIT_LIMIT, NULL, NULL },
    XXL_CTL_OPTS_END
};

//  What is known of one run
typedef struct {
    int64_t id;
    int state;                          //  0 going, 1 success, -1 failure
    msgpack_sbuffer log;                //  its LOG_SHOW content, packed (size 0:
                                        //  not read)
    char *why;                          //  failure: what to print
} s_run_t;

static int
s_trigger_check (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    if (xxl_ctl_args_count (cmd, args, "--param", "--param-file", NULL) > 1)
        return xxl_ctl_usage_error (self, cmd, "give only one of --param, --param-file");
    if (xxl_ctl_args_get (cmd, args, "--timeout") && !xxl_ctl_args_get (cmd, args, "--wait"))
        return xxl_ctl_usage_error (self, cmd, "--timeout is the limit of --wait: give both");
    return 0;
}

//  The reason in a failed trigger's triggerMsg: its last Trigger section's
//  `msg:` line with the address, else the section's first line.  A new
//  string.
static char *
s_trigger_reason (const char *message)
{
    const char *mark = ">>>>>>>>>>> Trigger <<<<<<<<<<<\n";
    const char *section = message;
    for (const char *at = strstr (message, mark); at; at = strstr (at + 1, mark))
        section = at + strlen (mark);
    const char *msg = strstr (section, "\nmsg: ");
    msg = msg? msg + 6: strncmp (section, "msg: ", 5) == 0? section + 5: NULL;
    const char *address = strncmp (section, "address: ", 9) == 0? section + 9: NULL;
    if (msg && address)
        return zsys_sprintf ("%.*s (agent %.*s)", (int) strcspn (msg, "\n"), msg,
                             (int) strcspn (address, "\n"), address);
    if (msg)
        return zsys_sprintf ("%.*s", (int) strcspn (msg, "\n"), msg);
    section += strspn (section, "\n");
    return zsys_sprintf ("%.*s", (int) strcspn (section, "\n"), section);
}

//  Classifies a run from its LOG_SHOW content
static void
s_run_read (s_run_t *run, const msgpack_object *log)
{
    int64_t trigger = xxl_ctl_value_int_or (log, "triggerCode", 0);
    int64_t handle = xxl_ctl_value_int_or (log, "handleCode", 0);
    msgpack_sbuffer_clear (&run->log);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &run->log, msgpack_sbuffer_write);
    if (msgpack_pack_object (&pk, *log))
        msgpack_sbuffer_clear (&run->log);
    if (trigger != 0 && trigger != XXL_OK) {
        char *message = xxl_ctl_value_text_of (log, "triggerMsg");
        char *reason = message? s_trigger_reason (message): NULL;
        const char *text = reason && *reason? reason: "no message";
        if (strncmp (text, "trigger failed: ", 16) == 0)
            text += 16;
        run->why = zsys_sprintf ("log %" PRId64 " failed to start (trigger code %" PRId64
                                 "): %s", run->id, trigger, text);
        free (reason);
        free (message);
        run->state = -1;
    }
    else
    if (handle == XXL_OK)
        run->state = 1;
    else
    if (handle != 0) {
        char *message = xxl_ctl_value_text_of (log, "handleMsg");
        run->why = zsys_sprintf ("log %" PRId64 " failed (handle code %" PRId64 "%s): %s",
                                 run->id, handle, handle == 502? ", timed out": "",
                                 message && *message? message: "no message");
        free (message);
        run->state = -1;
    }
}

//  Reads each run still going once; the exit status (XXL_CTL_FAILED
//  after reporting when a read failed)
static int
s_runs_look (ctl_t *self, s_run_t *runs, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        if (runs [i].state)
            continue;
        xxl_enc_t *enc = xxl_ctl_request (self, "LOG_SHOW");
        if (!enc)
            return XXL_CTL_FAILED;
        xxl_enc_kint (enc, "logId", runs [i].id);
        xxl_msg_t *reply = xxl_ctl_call (self);
        if (!reply)
            return XXL_CTL_FAILED;
        const msgpack_object *log = xxl_ctl_content (self, reply);
        if (log)
            s_run_read (&runs [i], log);
        xxl_msg_destroy (&reply);
        if (!log)
            return XXL_CTL_FAILED;
    }
    return XXL_CTL_OK;
}

//  Prints the outcome (text, or the one JSON document) and returns the
//  exit status
static int
s_runs_report (ctl_t *self, s_run_t *runs, size_t count, int wait,
               int64_t timeout)
{
    size_t failed = 0, going = 0;
    const char *first = NULL;
    int64_t going_id = 0;
    for (size_t i = 0; i < count; i++) {
        failed += runs [i].state < 0;
        going += runs [i].state == 0;
        if (runs [i].state < 0 && !first)
            first = runs [i].why;
        if (runs [i].state == 0)
            going_id = runs [i].id;
    }
    int rc = failed? XXL_CTL_RUN_FAILED: wait && going? XXL_CTL_WAIT_TIMEOUT: XXL_CTL_OK;
    char timed_out [128];
    if (going == 1)
        snprintf (timed_out, sizeof timed_out, "log %" PRId64 " still going after %" PRId64
                  " s (--timeout)", going_id, timeout);
    else
        snprintf (timed_out, sizeof timed_out, "%zu runs still going after %" PRId64
                  " s (--timeout)", going, timeout);
    if (self->json) {
        //  {"logIds": [...]} and, with --wait or a failure, "result",
        //  "error" (when there is one) and "runs"
        const char *error = failed? first: rc == XXL_CTL_WAIT_TIMEOUT? timed_out: NULL;
        const char *result = failed? "failure": rc == XXL_CTL_WAIT_TIMEOUT? "timeout": "success";
        int more = wait || failed;
        msgpack_sbuffer doc;
        msgpack_sbuffer_init (&doc);
        msgpack_packer pk;
        msgpack_packer_init (&pk, &doc, msgpack_sbuffer_write);
        int bad = msgpack_pack_map (&pk, 1 + (more? 2 + (error != NULL): 0))
               || xxl_ctl_pack_str (&pk, "logIds") || msgpack_pack_array (&pk, (uint32_t) count);
        for (size_t i = 0; i < count && !bad; i++)
            bad = msgpack_pack_int64 (&pk, runs [i].id);
        if (more && !bad) {
            bad = xxl_ctl_pack_str (&pk, "result") || xxl_ctl_pack_str (&pk, result)
               || (error && (xxl_ctl_pack_str (&pk, "error") || xxl_ctl_pack_str (&pk, error)))
               || xxl_ctl_pack_str (&pk, "runs") || msgpack_pack_array (&pk, (uint32_t) count);
            for (size_t i = 0; i < count && !bad; i++)
                bad = runs [i].log.size
                    ? msgpack_sbuffer_write (&doc, runs [i].log.data, runs [i].log.size)
                    : msgpack_pack_nil (&pk);
        }
        int printed = bad? xxl_ctl_fail (self, XXL_CTL_FAILED, "out of memory")
                         : xxl_ctl_print_json_packed (self, doc.data, doc.size);
        msgpack_sbuffer_destroy (&doc);
        return printed != XXL_CTL_OK? printed: rc;
    }
    for (size_t i = 0; wait && i < count; i++)
        if (runs [i].state > 0)
            fprintf (self->out, "log %" PRId64 " succeeded\n", runs [i].id);
    fflush (self->out);
    for (size_t i = 0; i < count; i++)
        if (runs [i].state < 0)
            fprintf (self->err, "xxl-ctl: %s\n", runs [i].why);
    if (rc == XXL_CTL_WAIT_TIMEOUT)
        fprintf (self->err, "xxl-ctl: %s\n", timed_out);
    return rc;
}

static int
s_job_trigger (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    int wait = xxl_ctl_args_get (cmd, args, "--wait") != NULL;
    int64_t timeout = xxl_ctl_args_num (cmd, args, "--timeout", 0);
    if (!xxl_ctl_request_args (self, cmd->request, cmd, args, NULL))
        return XXL_CTL_FAILED;
    //  The answer's ids, kept: no reply is held across the reads after it
    xxl_msg_t *reply = xxl_ctl_call (self);
    const msgpack_object *content = reply? xxl_ctl_content (self, reply): NULL;
    const msgpack_object *list = content? xxl_ctl_content_array (self, content, "logIds"): NULL;
    size_t count = list? list->via.array.size: 0;
    s_run_t *runs = (s_run_t *) calloc (count + 1, sizeof (s_run_t));
    for (size_t i = 0; list && runs && i < count; i++) {
        if (list->via.array.ptr [i].type != MSGPACK_OBJECT_POSITIVE_INTEGER) {
            xxl_ctl_fail (self, XXL_CTL_FAILED, "unexpected reply: no valid 'logIds' list of"
                          " numbers");
            list = NULL;
        }
        else
            runs [i].id = (int64_t) list->via.array.ptr [i].via.u64;
    }
    char *ids = list? xxl_ctl_value_text (list): NULL;
    xxl_msg_destroy (&reply);
    if (!list || !runs || !ids) {
        if (list)
            xxl_ctl_fail (self, XXL_CTL_FAILED, "out of memory");
        free (runs);
        free (ids);
        return XXL_CTL_FAILED;
    }
    if (!self->json) {
        fprintf (self->out, "job %" PRId64 " triggered: log%s ", args->pos_num [0],
                 count == 1? "": "s");
        for (const char *p = ids; *p; p++)
            fputc (*p == ','? ' ': *p, self->out);
        fprintf (self->out, "%s\n", *ids? "": "(none)");
        fflush (self->out);
    }
    int64_t deadline = zclock_mono () + timeout * 1000;
    int64_t pause = XXL_CTL_WAIT_FIRST;
    size_t going = count;
    int rc = XXL_CTL_OK;
    while (going && rc == XXL_CTL_OK) {
        rc = s_runs_look (self, runs, count);
        going = 0;
        for (size_t i = 0; i < count; i++)
            going += runs [i].state == 0;
        int64_t left = timeout? deadline - zclock_mono (): XXL_CTL_WAIT_MAX;
        if (!wait || left <= 0)
            break;
        if (going && rc == XXL_CTL_OK) {
            zclock_sleep ((int) (pause < left? pause: left));
            pause = pause * 2 < XXL_CTL_WAIT_MAX? pause * 2: XXL_CTL_WAIT_MAX;
        }
    }
    if (rc == XXL_CTL_OK)
        rc = s_runs_report (self, runs, count, wait, timeout);
    for (size_t i = 0; i < count; i++) {
        msgpack_sbuffer_destroy (&runs [i].log);
        free (runs [i].why);
    }
    free (runs);
    free (ids);
    return rc;
}

const ctl_cmd_t xxl_ctl_job_trigger = {
    "job", "trigger", "ID [--param P | --param-file FILE] [--address A] [--shard I/N]\n"
    "        [--wait [--timeout S]]",
    "run a job once now; exit status 3 when a run failed (without --wait: one\n"
    "  failed at once, e.g. for want of an agent), 4 when --wait timed out",
    s_trigger_opts, s_trigger_pos, 1, 1, s_trigger_check, s_job_trigger, "JOB_TRIGGER", NULL
};
