/*  xxl_ctl_job.c -- xxl-ctl's job commands: add, update, list, show, rm,
    copy, start, stop, next (trigger: xxl_ctl_trigger.c).
*/

#include "xxl_ctl_cmd.h"
#include "xxl_ctl_call.h"
#include "xxl_ctl_print.h"
#include "xxl_ctl_value.h"

#include <czmq.h>
#include <inttypes.h>

static const ctl_pos_t s_job_pos [] = { { "job id", CTL_ID, "jobId" } };

//  The flags of job add and job update: every job field
static const ctl_opt_t s_job_opts [] = {
    { "--group", NULL, "APP|ID", "the executor group (app name or id)",
      CTL_STR, 0, 0, "jobGroup", NULL },
    { "--handler", NULL, "NAME", "handler name (optional for GLUE types)",
      CTL_STR, 0, 0, "executorHandler", NULL },
    { "--cron", NULL, "EXPR", "schedule type CRON with this expression",
      CTL_SCHEDULE, 0, 0, "CRON", NULL },
    { "--fix-rate", NULL, "S", "schedule type FIX_RATE, every S seconds",
      CTL_SCHEDULE, 0, 0, "FIX_RATE", NULL },
    { "--fix-delay", NULL, "S", "schedule type FIX_DELAY, S seconds after each run ends",
      CTL_SCHEDULE, 0, 0, "FIX_DELAY", NULL },
    { "--param", NULL, "P", "executor parameter", CTL_STR, 0, 0, "executorParam", NULL },
    { "--param-file", NULL, "FILE", "executor parameter read from FILE ('-': stdin;"
      " at most {max} bytes)", CTL_FILE, 0, 0, "executorParam", NULL },
    { "--route", NULL, "R", "route strategy (FIRST, ROUND, SHARDING_BROADCAST, ...)",
      CTL_STR, 0, 0, "executorRouteStrategy", NULL },
    { "--block", NULL, "B", "block strategy ({values})",
      CTL_STR, 0, 0, "executorBlockStrategy", NULL },
    { "--timeout", NULL, "S", "run timeout in seconds (0: none)",
      CTL_INT, 0, 0, "executorTimeout", NULL },
    { "--retry", NULL, "N", "retries after a failed run",
      CTL_INT, 0, 0, "executorFailRetryCount", NULL },
    { "--retry-interval", NULL, "S", "seconds before the first retry (default {default}: at once)",
      CTL_INT, 0, 0, "retryInterval", NULL },
    { "--retry-backoff", NULL, "F", "each further retry waits F times longer (default {default})",
      CTL_REAL, 0, 0, "retryBackoff", NULL },
    { "--retry-max", NULL, "S", "longest wait between retries, seconds (0: no cap)",
      CTL_INT, 0, 0, "retryMaxInterval", NULL },
    { "--misfire", NULL, "M", "misfire strategy ({values})",
      CTL_STR, 0, 0, "misfireStrategy", NULL },
    { "--glue-type", NULL, "T", "{first} or {others}",
      CTL_STR, 0, 0, "glueType", NULL },
    { "--glue-source", NULL, "FILE", "glue script read from FILE ('-': stdin)",
      CTL_FILE, 0, 0, "glueSource", NULL },
    { "--child", NULL, "ID,ID", "child job ids, triggered after a successful run",
      CTL_STR, 0, 0, "childJobId", NULL },
    { "--desc", NULL, "D", "description", CTL_STR, 0, 0, "jobDesc", NULL },
    { "--author", NULL, "A", "author", CTL_STR, 0, 0, "author", NULL },
    { "--alarm-email", NULL, "E", "alarm targets, comma-separated: e-mail addresses, webhook:URL, script:NAME, KIND:DEST (docs/alarms.md)", CTL_STR, 0, 0, "alarmEmail", NULL },
    { "--timezone", NULL, "Z", "time zone of the cron expression (e.g. Europe/Berlin)",
      CTL_STR, 0, 0, "timezone", NULL },
    { "--calendar", NULL, "NAME", "skip the fires a calendar excludes ('' none;"
      " xxl-ctl calendar add)", CTL_STR, 0, 0, "calendar", NULL },
    { "--agent-tags", NULL, "K=V,K=V", "run only on the group's agents with all these"
      " tags (xxl-agent --tag; '' for any agent)", CTL_STR, 0, 0, "agentTags", NULL },
    { "--max-running", NULL, "N", "at most N runs of the job at once across the cluster"
      " (0: no limit; over it, the block strategy applies)", CTL_INT, 0, 0, "maxRunning", NULL },
    { "--start", NULL, NULL, "start scheduling at once", CTL_BOOL, 0, 0, NULL, NULL },
    XXL_CTL_OPTS_END
};

static int
s_schedule_check (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    if (xxl_ctl_args_count (cmd, args, "--cron", "--fix-rate", "--fix-delay", NULL) > 1)
        return xxl_ctl_usage_error (self, cmd, "give only one of --cron, --fix-rate, --fix-delay");
    if (xxl_ctl_args_count (cmd, args, "--param", "--param-file", NULL) > 1)
        return xxl_ctl_usage_error (self, cmd, "give only one of --param, --param-file");
    return 0;
}

static int
s_job_add_check (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    const char *glue = xxl_ctl_args_get (cmd, args, "--glue-type");
    if (!xxl_ctl_args_get (cmd, args, "--group"))
        return xxl_ctl_usage_error (self, cmd, "job add needs --group APP|ID");
    if (!xxl_ctl_args_get (cmd, args, "--handler") && (!glue || streq (glue, "BEAN")))
        return xxl_ctl_usage_error (self, cmd,
                                    "job add needs --handler NAME (or --glue-type GLUE_...)");
    return s_schedule_check (self, cmd, args);
}

static int
s_job_add (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    xxl_enc_t *enc = xxl_ctl_request_args (self, cmd->request, cmd, args, NULL);
    if (!enc)
        return XXL_CTL_FAILED;
    if (xxl_ctl_args_get (cmd, args, "--start"))
        xxl_enc_kbool (enc, "start", 1);
    return xxl_ctl_simple (self, "job", "added");
}

const ctl_cmd_t xxl_ctl_job_add = {
    "job", "add", "--group APP|ID --handler NAME [--cron EXPR | --fix-rate S | --fix-delay S]\n"
    "        [--param P | --param-file FILE] [--route R] [--block B] [--timeout S]\n"
    "        [--retry N] [--misfire M] [--retry-interval S] [--retry-backoff F] [--retry-max S]\n"
    "        [--glue-type T --glue-source FILE] [--child ID,ID] [--desc D] [--author A]\n"
    "        [--alarm-email E] [--timezone Z] [--calendar NAME]\n"
    "        [--agent-tags K=V,K=V] [--max-running N] [--start]",
    "add a job", s_job_opts, NULL, 0, 0, s_job_add_check, s_job_add, "JOB_ADD", NULL
};

static int
s_job_update (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    int64_t id = args->pos_num [0];
    int start = xxl_ctl_args_get (cmd, args, "--start") != NULL;
    int count;
    xxl_enc_t *enc = xxl_ctl_request_args (self, cmd->request, cmd, args, &count);
    if (!enc)
        return XXL_CTL_FAILED;
    if (count == 0 && !start)
        return xxl_ctl_usage_error (self, cmd, "nothing to update: give at least one flag");
    if (count > 0) {
        if (!start)
            return xxl_ctl_simple (self, "job", "updated");
        //  Update quietly, then start; the JSON document is START's reply
        xxl_msg_t *reply = xxl_ctl_call (self);
        if (!reply)
            return XXL_CTL_FAILED;
        xxl_msg_destroy (&reply);
        if (!self->json)
            fprintf (self->out, "job %" PRId64 " updated\n", id);
    }
    enc = xxl_ctl_request (self, "JOB_START");
    if (!enc)
        return XXL_CTL_FAILED;
    xxl_enc_kint (enc, "jobId", id);
    return xxl_ctl_simple (self, "job", "started");
}

const ctl_cmd_t xxl_ctl_job_update = {
    "job", "update", "ID [job add flags; only those given change]", "change a job",
    s_job_opts, s_job_pos, 1, 1, s_schedule_check, s_job_update, "JOB_UPDATE", NULL
};

static int
s_job_rm (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    if (!xxl_ctl_request_args (self, "JOB_RM", cmd, args, NULL))
        return XXL_CTL_FAILED;
    xxl_msg_t *reply;
    const msgpack_object *content;
    int rc = xxl_ctl_exchange (self, &reply, &content, "id", CTL_NUMBER);
    if (rc)
        return rc;
    if (!self->json) {
        fprintf (self->out, "job %" PRId64 " removed (%" PRId64 " log row(s) deleted)\n",
                 xxl_ctl_value_int_or (content, "id", 0),
                 xxl_ctl_value_int_or (content, "deletedLogs", 0));
        const char *keys [] = { "workflowsChanged", "workflowsRemoved" };
        const char *said [] = { "its nodes removed from workflow(s)",
                                "workflow(s) removed (no valid definition left)" };
        for (int k = 0; k < 2; k++) {
            const msgpack_object *ids = xxl_ctl_value_get (content, keys [k]);
            if (!ids || ids->type != MSGPACK_OBJECT_ARRAY || !ids->via.array.size)
                continue;
            fprintf (self->out, "%s:", said [k]);
            for (uint32_t i = 0; i < ids->via.array.size; i++) {
                char *id = xxl_ctl_value_text (&ids->via.array.ptr [i]);
                fprintf (self->out, " %s", id? id: "?");
                free (id);
            }
            fprintf (self->out, "\n");
        }
    }
    xxl_msg_destroy (&reply);
    return XXL_CTL_OK;
}

static const ctl_opt_t s_job_rm_opts [] = {
    { "--force", NULL, NULL, "also when workflows run it: its nodes leave them (a workflow"
      " left without a valid definition goes)", CTL_BOOL, 0, 0, "force", NULL },
    XXL_CTL_OPTS_END
};

const ctl_cmd_t xxl_ctl_job_rm = {
    "job", "rm", "ID [--force]", "remove a job and its runs (and it from other jobs' children)",
    s_job_rm_opts, s_job_pos, 1, 1, NULL, s_job_rm, "JOB_RM", NULL
};

static const ctl_opt_t s_job_copy_opts [] = {
    { "--desc", NULL, "D", "the copy's description (default: the job's)",
      CTL_STR, 0, 0, "jobDesc", NULL },
    XXL_CTL_OPTS_END
};

const ctl_cmd_t xxl_ctl_job_copy = {
    "job", "copy", "ID [--desc D]", "add a stopped copy of a job (its glue source too)",
    s_job_copy_opts, s_job_pos, 1, 1, NULL,
    xxl_ctl_cmd_simple, "JOB_COPY", "added (a stopped copy)"
};

const ctl_cmd_t xxl_ctl_job_start = {
    "job", "start", "ID", "start scheduling a job", NULL, s_job_pos, 1, 1, NULL,
    xxl_ctl_cmd_simple, "JOB_START", "started"
};

const ctl_cmd_t xxl_ctl_job_stop = {
    "job", "stop", "ID", "stop scheduling a job", NULL, s_job_pos, 1, 1, NULL,
    xxl_ctl_cmd_simple, "JOB_STOP", "stopped"
};

const ctl_cmd_t xxl_ctl_job_show = {
    "job", "show", "ID", "show a job", NULL, s_job_pos, 1, 1, NULL,
    xxl_ctl_cmd_show, "JOB_SHOW", NULL
};

static const ctl_choice_t s_job_states [] = {
    { "running", 1 }, { "stopped", 0 }, { NULL, 0 }
};

static const ctl_opt_t s_job_list_opts [] = {
    { "--group", NULL, "G", "only jobs of this group (app name or id)",
      CTL_STR, 0, 0, "group", NULL },
    { "--limit", NULL, "N", "at most N jobs (default {default})", CTL_INT, 0, 0, "limit", NULL },
    { "--offset", NULL, "N", "skip the first N jobs (default {default})",
      CTL_INT, 0, 0, "offset", NULL },
    { "--handler", NULL, "TEXT", "only jobs whose handler contains TEXT",
      CTL_STR, 0, 0, "executorHandler", NULL },
    { "--desc", NULL, "TEXT", "only jobs whose description contains TEXT",
      CTL_STR, 0, 0, "jobDesc", NULL },
    { "--author", NULL, "TEXT", "only jobs whose author contains TEXT",
      CTL_STR, 0, 0, "author", NULL },
    { "--status", NULL, "S", "only running or stopped jobs",
      CTL_ENUM, 0, 0, "triggerStatus", s_job_states },
    XXL_CTL_OPTS_END
};

//  Fetches group id -> app name for the readable job table into *names_p
//  (NULL when the reply has no usable list); returns the exit status
static int
s_group_names (ctl_t *self, zhash_t **names_p)
{
    *names_p = NULL;
    if (!xxl_ctl_request (self, "GROUP_LIST"))
        return XXL_CTL_FAILED;
    xxl_msg_t *reply = xxl_ctl_call (self);
    if (!reply)
        return XXL_CTL_FAILED;
    const msgpack_object *groups = xxl_ctl_value_get (xxl_reply_content (reply), "groups");
    zhash_t *names = zhash_new ();
    if (names && groups && groups->type == MSGPACK_OBJECT_ARRAY) {
        zhash_autofree (names);
        for (uint32_t i = 0; i < groups->via.array.size; i++) {
            char *id = xxl_ctl_value_text_of (&groups->via.array.ptr [i], "id");
            char *app = xxl_ctl_value_text_of (&groups->via.array.ptr [i], "appname");
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

//  Adds a job's row to the job table
static void
s_job_row (ctl_table_t *table, const msgpack_object *job, zhash_t *names)
{
    char buf [64];
    xxl_ctl_table_add (table, xxl_ctl_value_text_of (job, "id"));
    char *group_id = xxl_ctl_value_text_of (job, "jobGroup");
    const char *name = names && group_id? (const char *) zhash_lookup (names, group_id): NULL;
    xxl_ctl_table_add (table, name? strdup (name): group_id);
    if (name)
        free (group_id);
    xxl_ctl_table_add (table, xxl_ctl_first_line (xxl_ctl_value_text_of (job, "jobDesc"), 30));
    char *type = xxl_ctl_value_text_of (job, "scheduleType");
    char *conf = xxl_ctl_value_text_of (job, "scheduleConf");
    if (type && conf && *conf && strneq (type, "NONE"))
        xxl_ctl_table_add (table, zsys_sprintf ("%s %s", type, conf));
    else
        xxl_ctl_table_add (table, strdup (type && *type? type: "NONE"));
    free (type);
    free (conf);
    char *glue = xxl_ctl_value_text_of (job, "glueType");
    char *handler = xxl_ctl_value_text_of (job, "executorHandler");
    if (glue && *glue && strneq (glue, "BEAN") && (!handler || !*handler)) {
        xxl_ctl_table_add (table, glue);
        free (handler);
    }
    else {
        xxl_ctl_table_add (table, handler);
        free (glue);
    }
    xxl_ctl_table_add (table, xxl_ctl_value_text_of (job, "executorRouteStrategy"));
    xxl_ctl_table_add (table, strdup (xxl_ctl_value_int_or (job, "triggerStatus", 0) == 1?
                                      "RUNNING": "STOPPED"));
    xxl_ctl_table_add (table, strdup (xxl_ctl_time_text (
                                          xxl_ctl_value_int_or (job, "triggerNextTime", 0),
                                          buf, sizeof buf)));
}

static int
s_job_list (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    //  Group names first: a reply's strings may point into the client's
    //  receive buffer, so hold no reply across another request
    zhash_t *names = NULL;
    if (!self->json && s_group_names (self, &names))
        return XXL_CTL_FAILED;
    if (!xxl_ctl_request_args (self, cmd->request, cmd, args, NULL)) {
        zhash_destroy (&names);
        return XXL_CTL_FAILED;
    }
    xxl_msg_t *reply;
    const msgpack_object *content;
    int rc;
    const msgpack_object *jobs = xxl_ctl_list (self, &reply, &content, "jobs", CTL_LIST, &rc);
    if (!jobs) {
        zhash_destroy (&names);
        return rc;
    }
    ctl_table_t table;
    const char *headers [] = { "ID", "GROUP", "DESC", "SCHEDULE", "HANDLER", "ROUTE",
                               "STATUS", "NEXT" };
    xxl_ctl_table_init (&table, 8, headers);
    for (uint32_t i = 0; i < jobs->via.array.size; i++)
        if (jobs->via.array.ptr [i].type == MSGPACK_OBJECT_MAP)
            s_job_row (&table, &jobs->via.array.ptr [i], names);
    xxl_ctl_table_print (&table, self->out, "no jobs");
    int64_t total, next;
    if (xxl_ctl_value_int (content, "nextOffset", &next) == 0)
        fprintf (self->out, "(the reply reached the size limit: more from --offset %" PRId64 ")\n",
                 next);
    else
    if (xxl_ctl_value_int (content, "total", &total) == 0
    &&  total > (int64_t) jobs->via.array.size)
        fprintf (self->out, "(%u of %" PRId64 " jobs shown; use --limit, --offset)\n",
                 jobs->via.array.size, total);
    zhash_destroy (&names);
    xxl_msg_destroy (&reply);
    return XXL_CTL_OK;
}

const ctl_cmd_t xxl_ctl_job_list = {
    "job", "list", "[--group G] [--handler T] [--desc T] [--author T] [--status running|stopped]\n"
    "        [--limit N] [--offset N]", "list jobs", s_job_list_opts, NULL, 0, 0, NULL,
    s_job_list, "JOB_LIST", NULL
};

static const ctl_opt_t s_job_next_opts [] = {
    { "-n", NULL, "N", "how many fire times (default {default})", CTL_INT, 0, 0, "count", NULL },
    XXL_CTL_OPTS_END
};

static int
s_job_next (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    //  The job's time zone first (a reply is not held across requests)
    char *zone = NULL;
    if (!self->json) {
        xxl_enc_t *enc = xxl_ctl_request (self, "JOB_SHOW");
        if (!enc)
            return XXL_CTL_FAILED;
        xxl_enc_kint (enc, "jobId", args->pos_num [0]);
        xxl_msg_t *reply = xxl_ctl_call (self);
        const msgpack_object *job = reply? xxl_ctl_content (self, reply): NULL;
        zone = job? xxl_ctl_value_text_of (job, "timezone"): NULL;
        xxl_msg_destroy (&reply);
        if (!zone)
            return XXL_CTL_FAILED;
    }
    if (!xxl_ctl_request_args (self, cmd->request, cmd, args, NULL)) {
        free (zone);
        return XXL_CTL_FAILED;
    }
    xxl_msg_t *reply;
    const msgpack_object *content;
    int rc;
    const msgpack_object *next = xxl_ctl_list (self, &reply, &content, "next", CTL_INTS, &rc);
    if (next) {
        int64_t *times = (int64_t *) calloc (next->via.array.size + 1, sizeof (int64_t));
        for (uint32_t i = 0; times && i < next->via.array.size; i++)
            times [i] = (int64_t) next->via.array.ptr [i].via.u64;
        if (times)
            xxl_ctl_print_times (self, times, next->via.array.size, zone);
        else
            rc = xxl_ctl_fail (self, XXL_CTL_FAILED, "out of memory");
        free (times);
        xxl_msg_destroy (&reply);
    }
    free (zone);
    return rc;
}

const ctl_cmd_t xxl_ctl_job_next = {
    "job", "next", "ID [-n N]", "a job's next fire times", s_job_next_opts, s_job_pos, 1, 1,
    NULL, s_job_next, "JOB_NEXT", NULL
};
