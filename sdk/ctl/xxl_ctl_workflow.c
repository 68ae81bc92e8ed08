/*  xxl_ctl_workflow.c -- xxl-ctl's workflow commands (DESIGN §12): add,
    list, show, update, rm, start, stop, trigger, runs, and a run's show,
    kill and retry.
*/

#include "xxl_ctl_cmd.h"
#include "xxl_ctl_call.h"
#include "xxl_ctl_print.h"
#include "xxl_ctl_value.h"

#include <czmq.h>
#include <inttypes.h>

static const ctl_pos_t s_workflow_pos [] = { { "workflow id", CTL_ID, "workflowId" } };
static const ctl_pos_t s_run_pos [] = { { "run id", CTL_ID, "runId" } };
static const ctl_pos_t s_retry_pos [] = {
    { "run id", CTL_ID, "runId" }, { "node", CTL_STR, "node" }
};

//  The flags of workflow add and workflow update
static const ctl_opt_t s_workflow_opts [] = {
    { "--name", NULL, "N", "the workflow's name", CTL_STR, 0, 0, "name", NULL },
    { "--file", NULL, "DAG.json", "the definition, JSON ('-': stdin; docs/workflows.md)",
      CTL_FILE, 0, 0, "definition", NULL },
    { "--cron", NULL, "E", "schedule type CRON with this expression",
      CTL_SCHEDULE, 0, 0, "CRON", NULL },
    { "--fix-rate", NULL, "S", "schedule type FIX_RATE, every S seconds",
      CTL_SCHEDULE, 0, 0, "FIX_RATE", NULL },
    { "--timezone", NULL, "Z", "time zone of the cron expression (e.g. Europe/Berlin)",
      CTL_STR, 0, 0, "timezone", NULL },
    { "--misfire", NULL, "M", "misfire strategy ({values})",
      CTL_STR, 0, 0, "misfireStrategy", NULL },
    { "--calendar", NULL, "NAME", "skip the fires a calendar excludes ('' none;"
      " xxl-ctl calendar add)", CTL_STR, 0, 0, "calendar", NULL },
    { "--desc", NULL, "D", "description", CTL_STR, 0, 0, "description", NULL },
    { "--start", NULL, NULL, "start its schedule at once", CTL_BOOL, 0, 0, "start", NULL },
    XXL_CTL_OPTS_END
};

static int
s_schedule_check (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    if (xxl_ctl_args_count (cmd, args, "--cron", "--fix-rate", NULL) > 1)
        return xxl_ctl_usage_error (self, cmd, "give only one of --cron, --fix-rate");
    return 0;
}

static int
s_add_check (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    if (!xxl_ctl_args_get (cmd, args, "--name") || !xxl_ctl_args_get (cmd, args, "--file"))
        return xxl_ctl_usage_error (self, cmd, "workflow add needs --name N and --file DAG.json");
    return s_schedule_check (self, cmd, args);
}

const ctl_cmd_t xxl_ctl_workflow_add = {
    "workflow", "add", "--name N --file DAG.json [--cron E | --fix-rate S] [--timezone Z]\n"
    "        [--misfire M] [--calendar NAME] [--desc D] [--start]", "add a workflow (a DAG of jobs)",
    s_workflow_opts, NULL, 0, 0, s_add_check, xxl_ctl_cmd_simple, "WORKFLOW_ADD", "added"
};

static int
s_update (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    int count;
    if (!xxl_ctl_request_args (self, cmd->request, cmd, args, &count))
        return XXL_CTL_FAILED;
    if (count == 0)
        return xxl_ctl_usage_error (self, cmd, "nothing to update: give at least one flag");
    return xxl_ctl_simple (self, "workflow", "updated");
}

const ctl_cmd_t xxl_ctl_workflow_update = {
    "workflow", "update", "ID [workflow add flags; only those given change]",
    "change a workflow (its runs in flight keep their definition)",
    s_workflow_opts, s_workflow_pos, 1, 1, s_schedule_check, s_update, "WORKFLOW_UPDATE", NULL
};

static const ctl_opt_t s_list_opts [] = {
    XXL_CTL_PAGE_OPTS ("workflows"),
    XXL_CTL_OPTS_END
};

static int
s_list (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    if (!xxl_ctl_request_args (self, cmd->request, cmd, args, NULL))
        return XXL_CTL_FAILED;
    xxl_msg_t *reply;
    const msgpack_object *content;
    int rc;
    const msgpack_object *list = xxl_ctl_list (self, &reply, &content, "workflows", CTL_LIST,
                                               &rc);
    if (!list)
        return rc;
    ctl_table_t table;
    const char *headers [] = { "ID", "NAME", "SCHEDULE", "STATUS", "NEXT" };
    xxl_ctl_table_init (&table, 5, headers);
    for (uint32_t i = 0; i < list->via.array.size; i++) {
        const msgpack_object *w = &list->via.array.ptr [i];
        if (w->type != MSGPACK_OBJECT_MAP)
            continue;
        xxl_ctl_table_add (&table, xxl_ctl_value_text_of (w, "id"));
        xxl_ctl_table_add (&table, xxl_ctl_first_line (xxl_ctl_value_text_of (w, "name"), 30));
        char *type = xxl_ctl_value_text_of (w, "scheduleType");
        char *conf = xxl_ctl_value_text_of (w, "scheduleConf");
        if (type && conf && *conf && strneq (type, "NONE"))
            xxl_ctl_table_add (&table, zsys_sprintf ("%s %s", type, conf));
        else
            xxl_ctl_table_add (&table, strdup ("NONE"));
        free (type);
        free (conf);
        xxl_ctl_table_add (&table, strdup (xxl_ctl_value_int_or (w, "triggerStatus", 0) == 1
                                           ? "RUNNING": "STOPPED"));
        int64_t next = xxl_ctl_value_int_or (w, "triggerNextTime", 0);
        char buf [64];
        xxl_ctl_table_add (&table, strdup (next > 0? xxl_ctl_time_text (next, buf, sizeof buf)
                                                   : "-"));
    }
    xxl_ctl_table_print (&table, self->out, "no workflows");
    xxl_msg_destroy (&reply);
    return XXL_CTL_OK;
}

const ctl_cmd_t xxl_ctl_workflow_list = {
    "workflow", "list", "[--limit N] [--offset N]", "list workflows", s_list_opts, NULL, 0, 0,
    NULL, s_list, "WORKFLOW_LIST", NULL
};

const ctl_cmd_t xxl_ctl_workflow_show = {
    "workflow", "show", "ID", "show a workflow and its definition", NULL, s_workflow_pos, 1, 1,
    NULL, xxl_ctl_cmd_show, "WORKFLOW_SHOW", NULL
};

const ctl_cmd_t xxl_ctl_workflow_rm = {
    "workflow", "rm", "ID", "remove a workflow and its runs (their log rows stay)", NULL,
    s_workflow_pos, 1, 1, NULL, xxl_ctl_cmd_simple, "WORKFLOW_RM", "removed"
};

const ctl_cmd_t xxl_ctl_workflow_start = {
    "workflow", "start", "ID", "start a workflow's schedule", NULL, s_workflow_pos, 1, 1, NULL,
    xxl_ctl_cmd_simple, "WORKFLOW_START", "started"
};

const ctl_cmd_t xxl_ctl_workflow_stop = {
    "workflow", "stop", "ID", "stop a workflow's schedule (its runs go on)", NULL,
    s_workflow_pos, 1, 1, NULL, xxl_ctl_cmd_simple, "WORKFLOW_STOP", "stopped"
};

static const ctl_opt_t s_trigger_opts [] = {
    { "--param", NULL, "P", "the run's param (flow.param in its nodes' params)",
      CTL_STR, 0, 0, "param", NULL },
    XXL_CTL_OPTS_END
};

static int
s_trigger (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    if (!xxl_ctl_request_args (self, cmd->request, cmd, args, NULL))
        return XXL_CTL_FAILED;
    xxl_msg_t *reply;
    const msgpack_object *content;
    int rc = xxl_ctl_exchange (self, &reply, &content, "runId", CTL_NUMBER);
    if (rc)
        return rc;
    if (!self->json)
        fprintf (self->out, "workflow %" PRId64 " triggered: run %" PRId64 "\n",
                 args->pos_num [0], xxl_ctl_value_int_or (content, "runId", 0));
    xxl_msg_destroy (&reply);
    return XXL_CTL_OK;
}

const ctl_cmd_t xxl_ctl_workflow_trigger = {
    "workflow", "trigger", "ID [--param P]", "run a workflow now", s_trigger_opts,
    s_workflow_pos, 1, 1, NULL, s_trigger, "WORKFLOW_TRIGGER", NULL
};

static const ctl_opt_t s_runs_opts [] = {
    { "--limit", NULL, "N", "at most N runs, newest first ({min}-{max}, default {default})",
      CTL_INT, 0, 0, "limit", NULL },
    { "--before", NULL, "RUN", "only runs with an id below RUN (the next page: the last\n"
                               "                         run listed)",
      CTL_ID, 0, 0, "before", NULL },
    XXL_CTL_OPTS_END
};

static int
s_runs (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    if (!xxl_ctl_request_args (self, cmd->request, cmd, args, NULL))
        return XXL_CTL_FAILED;
    xxl_msg_t *reply;
    const msgpack_object *content;
    int rc;
    const msgpack_object *list = xxl_ctl_list (self, &reply, &content, "runs", CTL_LIST, &rc);
    if (!list)
        return rc;
    ctl_table_t table;
    const char *headers [] = { "RUN", "STATUS", "TYPE", "TRIGGERED", "ENDED", "PARAM" };
    xxl_ctl_table_init (&table, 6, headers);
    for (uint32_t i = 0; i < list->via.array.size; i++) {
        const msgpack_object *r = &list->via.array.ptr [i];
        if (r->type != MSGPACK_OBJECT_MAP)
            continue;
        char buf [64];
        xxl_ctl_table_add (&table, xxl_ctl_value_text_of (r, "id"));
        xxl_ctl_table_add (&table, xxl_ctl_value_text_of (r, "status"));
        xxl_ctl_table_add (&table, xxl_ctl_value_text_of (r, "triggerType"));
        xxl_ctl_table_add (&table, strdup (xxl_ctl_time_text (
            xxl_ctl_value_int_or (r, "triggerTime", 0), buf, sizeof buf)));
        int64_t end = xxl_ctl_value_int_or (r, "endTime", 0);
        xxl_ctl_table_add (&table, strdup (end > 0? xxl_ctl_time_text (end, buf, sizeof buf)
                                                  : "-"));
        xxl_ctl_table_add (&table, xxl_ctl_first_line (xxl_ctl_value_text_of (r, "param"), 30));
    }
    xxl_ctl_table_print (&table, self->out, "no runs");
    xxl_msg_destroy (&reply);
    return XXL_CTL_OK;
}

const ctl_cmd_t xxl_ctl_workflow_runs = {
    "workflow", "runs", "ID [--limit N] [--before RUN]", "list a workflow's runs, newest first", s_runs_opts, s_workflow_pos,
    1, 1, NULL, s_runs, "WORKFLOW_RUNS", NULL
};

static int
s_run_show (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    if (!xxl_ctl_request_args (self, cmd->request, cmd, args, NULL))
        return XXL_CTL_FAILED;
    xxl_msg_t *reply;
    const msgpack_object *content;
    int rc;
    const msgpack_object *nodes = xxl_ctl_list (self, &reply, &content, "nodes", CTL_LIST,
                                                &rc);
    if (!nodes)
        return rc;
    char *status = xxl_ctl_value_text_of (content, "status");
    fprintf (self->out, "run %" PRId64 " of workflow %" PRId64 ": %s\n",
             xxl_ctl_value_int_or (content, "id", 0),
             xxl_ctl_value_int_or (content, "workflowId", 0), status? status: "?");
    free (status);
    ctl_table_t table;
    const char *headers [] = { "NODE", "STATUS", "LOG", "JOB", "ATTEMPT" };
    xxl_ctl_table_init (&table, 5, headers);
    for (uint32_t i = 0; i < nodes->via.array.size; i++) {
        const msgpack_object *n = &nodes->via.array.ptr [i];
        if (n->type != MSGPACK_OBJECT_MAP)
            continue;
        xxl_ctl_table_add (&table, xxl_ctl_value_text_of (n, "id"));
        xxl_ctl_table_add (&table, xxl_ctl_value_text_of (n, "status"));
        int64_t log = xxl_ctl_value_int_or (n, "logId", 0);
        xxl_ctl_table_add (&table, log > 0? zsys_sprintf ("%" PRId64, log): strdup ("-"));
        xxl_ctl_table_add (&table, xxl_ctl_value_text_of (n, "jobId"));
        xxl_ctl_table_add (&table, xxl_ctl_value_text_of (n, "attempt"));
    }
    xxl_ctl_table_print (&table, self->out, "no nodes");
    xxl_msg_destroy (&reply);
    return XXL_CTL_OK;
}

const ctl_cmd_t xxl_ctl_workflow_run_show = {
    "workflow", "run show", "RUNID", "show a workflow run and its nodes", NULL, s_run_pos, 1, 1,
    NULL, s_run_show, "WORKFLOW_RUN_SHOW", NULL
};

const ctl_cmd_t xxl_ctl_workflow_run_kill = {
    "workflow", "run kill", "RUNID", "kill a workflow run: its running nodes are killed, the"
    " rest never start", NULL, s_run_pos, 1, 1, NULL, xxl_ctl_cmd_simple, "WORKFLOW_RUN_KILL",
    "killed"
};

const ctl_cmd_t xxl_ctl_workflow_run_retry = {
    "workflow", "run retry", "RUNID NODE", "run a failed node again and continue the run",
    NULL, s_retry_pos, 2, 2, NULL, xxl_ctl_cmd_simple, "WORKFLOW_RUN_RETRY", "retried"
};
