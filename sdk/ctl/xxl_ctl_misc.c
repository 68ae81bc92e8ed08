/*  xxl_ctl_misc.c -- xxl-ctl's other commands: agent list, cron next (local,
    no scheduler), report and plugin list.
*/

#include "xxl_ctl_cmd.h"
#include "xxl_ctl_call.h"
#include "xxl_ctl_print.h"
#include "xxl_ctl_value.h"
#include "xxl/cron.h"

#include <czmq.h>
#include <inttypes.h>

static const ctl_opt_t s_agent_list_opts [] = {
    { "--limit", NULL, "N", "at most N agents (default {default})", CTL_INT, 0, 0, "limit", NULL },
    { "--offset", NULL, "N", "skip the first N agents (default {default})",
      CTL_INT, 0, 0, "offset", NULL },
    XXL_CTL_OPTS_END
};

static int
s_agent_list (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    if (!xxl_ctl_request_args (self, cmd->request, cmd, args, NULL))
        return XXL_CTL_FAILED;
    xxl_msg_t *reply;
    const msgpack_object *content;
    int rc;
    const msgpack_object *agents = xxl_ctl_list (self, &reply, &content, "agents", CTL_LIST, &rc);
    if (agents) {
        ctl_table_t table;
        const char *headers [] = { "APP", "ADDRESS", "STATE", "UPDATED", "TAGS", "HANDLERS" };
        xxl_ctl_table_init (&table, 6, headers);
        for (uint32_t i = 0; i < agents->via.array.size; i++) {
            const msgpack_object *agent = &agents->via.array.ptr [i];
            if (agent->type != MSGPACK_OBJECT_MAP)
                continue;               //  not a row: skip it
            const msgpack_object *connected = xxl_ctl_value_get (agent, "connected");
            char buf [64];
            xxl_ctl_table_add (&table, xxl_ctl_value_text_of (agent, "app"));
            xxl_ctl_table_add (&table, xxl_ctl_value_text_of (agent, "address"));
            const char *state = !connected || connected->type != MSGPACK_OBJECT_BOOLEAN? "?"
                              : connected->via.boolean? "connected": "lost";
            xxl_ctl_table_add (&table, strdup (state));
            xxl_ctl_table_add (&table, strdup (xxl_ctl_time_text (
                                                   xxl_ctl_value_int_or (agent, "updateTime", 0),
                                                   buf, sizeof buf)));
            //  ("" when absent: a scheduler before agent tags)
            xxl_ctl_table_add (&table, xxl_ctl_value_text_of (agent, "tags"));
            char *handlers = xxl_ctl_value_text_of (agent, "handlers");
            xxl_ctl_table_add (&table, xxl_ctl_first_line (handlers, XXL_CTL_CELL_MAX));
        }
        xxl_ctl_table_print (&table, self->out, "no agents");
        int64_t next;
        if (xxl_ctl_value_int (content, "nextOffset", &next) == 0)
            fprintf (self->out, "(more agents: from --offset %" PRId64 ")\n", next);
        xxl_msg_destroy (&reply);
    }
    return rc;
}

const ctl_cmd_t xxl_ctl_agent_list = {
    "agent", "list", "[--limit N] [--offset N]", "list registered agents", s_agent_list_opts,
    NULL, 0, 0, NULL, s_agent_list, "AGENT_LIST", NULL
};

static const ctl_pos_t s_cron_pos [] = { { "EXPR", CTL_STR, NULL } };

static const ctl_opt_t s_cron_next_opts [] = {
    { "-n", NULL, "N", "how many fire times (default 5)", CTL_INT, 1, 1000, NULL, NULL },
    { "--from", NULL, "MS", "fire times strictly after this epoch ms (default now)",
      CTL_INT, 0, INT64_MAX / 2, NULL, NULL },
    { "--tz", NULL, "ZONE", "IANA time zone of the expression, and of the times shown\n"
      "                         (default UTC, like a job without --timezone)",
      CTL_STR, 0, 0, NULL, NULL },
    XXL_CTL_OPTS_END
};

static int
s_cron_next (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    const char *tz = xxl_ctl_args_get (cmd, args, "--tz");
    int64_t count = xxl_ctl_args_num (cmd, args, "-n", 5);
    int64_t after = xxl_ctl_args_get (cmd, args, "--from")?
                    xxl_ctl_args_num (cmd, args, "--from", 0): zclock_time ();
    if (tz && *tz && !xxl_cron_tz_valid (tz))
        return xxl_ctl_fail (self, XXL_CTL_FAILED, "unknown time zone '%s'", tz);
    char reason [256] = "";
    xxl_cron_t *cron = xxl_cron_new (args->pos [0], tz && *tz? tz: NULL, reason, sizeof reason);
    if (!cron)
        return xxl_ctl_fail (self, XXL_CTL_FAILED, "invalid cron expression '%s': %s",
                             args->pos [0], *reason? reason: "not understood");
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
        return xxl_ctl_fail (self, XXL_CTL_FAILED, "out of memory");
    int rc = XXL_CTL_OK;
    if (self->json) {
        msgpack_sbuffer rows;
        msgpack_sbuffer_init (&rows);
        msgpack_packer pk;
        msgpack_packer_init (&pk, &rows, msgpack_sbuffer_write);
        int bad = 0;
        for (int i = 0; i < made && !bad; i++)
            bad = msgpack_pack_int64 (&pk, times [i]);
        rc = bad? xxl_ctl_fail (self, XXL_CTL_FAILED, "out of memory")
                : xxl_ctl_print_json_rows (self, "next", rows.data, rows.size, (uint32_t) made);
        msgpack_sbuffer_destroy (&rows);
    }
    else
        xxl_ctl_print_times (self, times, (size_t) made, tz);
    free (times);
    return rc;
}

const ctl_cmd_t xxl_ctl_cron_next = {
    "cron", "next", "EXPR [-n N] [--from MS] [--tz ZONE]",
    "fire times of a cron expression (computed locally)", s_cron_next_opts, s_cron_pos, 1, 1,
    NULL, s_cron_next, NULL, NULL
};

static const ctl_opt_t s_report_opts [] = {
    { "--from", NULL, "TIME", "the days from the one holding TIME (epoch ms, or local\n"
                              "                         YYYY-MM-DD[ HH:MM[:SS]]; default: 29 days"
                              " before --to's)",
      CTL_TIME, 0, 0, "from", NULL },
    { "--to", NULL, "TIME", "to the one holding TIME (included; default now; at most 366\n"
                            "                         days in all)",
      CTL_TIME, 0, 0, "to", NULL },
    XXL_CTL_OPTS_END
};

static int
s_report (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    //  --to before --from is the user's slip: said before anything is sent
    //  (the span, the scheduler judges in its time zone)
    if (xxl_ctl_args_count (cmd, args, "--from", "--to", NULL) == 2
    &&  xxl_ctl_args_num (cmd, args, "--to", 0) < xxl_ctl_args_num (cmd, args, "--from", 0))
        return xxl_ctl_usage_error (self, cmd, "--to (%s) is before --from (%s)",
                                    xxl_ctl_args_get (cmd, args, "--to"),
                                    xxl_ctl_args_get (cmd, args, "--from"));
    int ranged = 0;
    if (!xxl_ctl_request_args (self, cmd->request, cmd, args, &ranged))
        return XXL_CTL_FAILED;
    xxl_msg_t *reply;
    const msgpack_object *content;
    int rc;
    const msgpack_object *days = xxl_ctl_list (self, &reply, &content, "days", CTL_LIST, &rc);
    if (!days)
        return rc;
    const msgpack_object *rate = xxl_ctl_value_get (content, "successRate");
    double success = rate && (rate->type == MSGPACK_OBJECT_FLOAT64
                              || rate->type == MSGPACK_OBJECT_FLOAT32)? rate->via.f64: 0;
    fprintf (self->out, "jobs: %" PRId64 " (%" PRId64 " running)   groups: %" PRId64
             "   agents: %" PRId64 "\n", xxl_ctl_value_int_or (content, "jobCount", 0),
             xxl_ctl_value_int_or (content, "jobRunningCount", 0),
             xxl_ctl_value_int_or (content, "groupCount", 0),
             xxl_ctl_value_int_or (content, "agentCount", 0));
    fprintf (self->out, "runs: %" PRId64 "   success: %" PRId64 "   failure: %" PRId64
             "   success rate: %.1f%%\n\n", xxl_ctl_value_int_or (content, "runCount", 0),
             xxl_ctl_value_int_or (content, "sucCount", 0),
             xxl_ctl_value_int_or (content, "failCount", 0), success * 100);
    ctl_table_t table;
    const char *headers [] = { "DAY", "RUNNING", "SUCCESS", "FAILURE" };
    xxl_ctl_table_init (&table, 4, headers);
    for (uint32_t i = 0; i < days->via.array.size; i++) {
        const msgpack_object *day = &days->via.array.ptr [i];
        if (day->type != MSGPACK_OBJECT_MAP)
            continue;
        char buf [64];
        xxl_ctl_time_text (xxl_ctl_value_int_or (day, "triggerDay", 0), buf, sizeof buf);
        buf [10] = 0;                   //  the date part
        xxl_ctl_table_add (&table, strdup (buf));
        xxl_ctl_table_add (&table, xxl_ctl_value_text_of (day, "runningCount"));
        xxl_ctl_table_add (&table, xxl_ctl_value_text_of (day, "sucCount"));
        xxl_ctl_table_add (&table, xxl_ctl_value_text_of (day, "failCount"));
    }
    xxl_ctl_table_print (&table, self->out, ranged? "no day rows in the range"
                                                  : "no runs in the last days");
    xxl_msg_destroy (&reply);
    return XXL_CTL_OK;
}

const ctl_cmd_t xxl_ctl_report = {
    "report", NULL, "[--from TIME] [--to TIME]",
    "the scheduler's run report: totals, and runs per day (the newest 30 days\n"
    "        with a row, or those from --from to --to)", s_report_opts, NULL, 0, 0,
    NULL, s_report, "REPORT", NULL
};

//  The route strategies and alarm kinds the scheduler loaded
static int
s_plugin_list (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    (void) args;
    if (!xxl_ctl_request (self, cmd->request))
        return XXL_CTL_FAILED;
    xxl_msg_t *reply;
    const msgpack_object *content;
    int rc;
    const msgpack_object *routers = xxl_ctl_list (self, &reply, &content, "routers", CTL_LIST,
                                                  &rc);
    if (!routers)
        return rc;
    const msgpack_object *alarms = xxl_ctl_value_get (content, "alarms");
    ctl_table_t table;
    const char *headers [] = { "KIND", "NAME" };
    xxl_ctl_table_init (&table, 2, headers);
    const msgpack_object *lists [2] = { routers, alarms };
    const char *kinds [2] = { "router", "alarm" };
    for (int l = 0; l < 2; l++) {
        if (!lists [l] || lists [l]->type != MSGPACK_OBJECT_ARRAY)
            continue;
        for (uint32_t i = 0; i < lists [l]->via.array.size; i++) {
            const msgpack_object *name = &lists [l]->via.array.ptr [i];
            if (name->type != MSGPACK_OBJECT_STR)
                continue;               //  not a name: skip it
            xxl_ctl_table_add (&table, strdup (kinds [l]));
            xxl_ctl_table_add (&table, xxl_ctl_value_text (name));
        }
    }
    xxl_ctl_table_print (&table, self->out, "no plugins loaded");
    xxl_msg_destroy (&reply);
    return XXL_CTL_OK;
}

const ctl_cmd_t xxl_ctl_plugin_list = {
    "plugin", "list", "", "the route strategies and alarm kinds the scheduler loaded", NULL,
    NULL, 0, 0, NULL, s_plugin_list, "PLUGIN_LIST", NULL
};
