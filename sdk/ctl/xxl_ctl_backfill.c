/*  xxl_ctl_backfill.c -- xxl-ctl's backfill commands: job backfill,
    backfill list, show, stop (JOB_BACKFILL, BACKFILL_*; DESIGN §13).
*/

#include "xxl_ctl_cmd.h"
#include "xxl_ctl_call.h"
#include "xxl_ctl_print.h"
#include "xxl_ctl_value.h"

#include <czmq.h>
#include <inttypes.h>

static const ctl_pos_t s_job_pos [] = { { "job id", CTL_ID, "jobId" } };
static const ctl_pos_t s_backfill_pos [] = { { "backfill id", CTL_ID, "backfillId" } };

static const ctl_opt_t s_backfill_opts [] = {
    { "--from", NULL, "TIME", "the first fire time to make (epoch ms, or local\n"
                              "                         YYYY-MM-DD[ HH:MM[:SS]]; included)",
      CTL_TIME, 0, 0, "from", NULL },
    { "--to", NULL, "TIME", "the last fire time to make (included; not after now)",
      CTL_TIME, 0, 0, "to", NULL },
    { "--per-second", NULL, "N", "make at most N runs a second (default {perSecond.default},"
                                 " at most {perSecond.max})", CTL_INT, 0, 0, "perSecond", NULL },
    XXL_CTL_OPTS_END
};

static const ctl_opt_t s_list_opts [] = {
    { "--job", NULL, "ID", "only backfills of this job", CTL_ID, 0, 0, "jobId", NULL },
    { "--limit", NULL, "N", "at most N, newest first (default {limit.default})",
      CTL_INT, 0, 0, "limit", NULL },
    { "--before", NULL, "ID", "only backfills with an id below ID (the next page: the last\n"
                              "                         id listed)",
      CTL_ID, 0, 0, "before", NULL },
    XXL_CTL_OPTS_END
};

static int
s_backfill_check (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    if (xxl_ctl_args_count (cmd, args, "--from", "--to", NULL) != 2)
        return xxl_ctl_usage_error (self, cmd, "give --from TIME and --to TIME");
    return 0;
}

static int
s_one (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args, const char *done)
{
    if (!xxl_ctl_request_args (self, cmd->request, cmd, args, NULL))
        return XXL_CTL_FAILED;
    xxl_msg_t *reply;
    const msgpack_object *content;
    int rc = xxl_ctl_exchange (self, &reply, &content, "id", CTL_NUMBER);
    if (rc)
        return rc;
    if (!self->json) {
        char *state = xxl_ctl_value_text_of (content, "state");
        fprintf (self->out, "backfill %" PRId64 " of job %" PRId64 " %s (%s): %" PRId64
                 " of %" PRId64 " instants handled\n", xxl_ctl_value_int_or (content, "id", 0),
                 xxl_ctl_value_int_or (content, "jobId", 0), done, state,
                 xxl_ctl_value_int_or (content, "made", 0)
                 + xxl_ctl_value_int_or (content, "skipped", 0),
                 xxl_ctl_value_int_or (content, "total", 0));
        free (state);
    }
    xxl_msg_destroy (&reply);
    return XXL_CTL_OK;
}

static int
s_backfill (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    return s_one (self, cmd, args, "started");
}

const ctl_cmd_t xxl_ctl_job_backfill = {
    "job", "backfill", "ID --from TIME --to TIME [--per-second N]",
    "make one run (trigger type BACKFILL) for each planned fire time of a CRON or\n"
    "        FIX_RATE job from --from to --to, once each (backfill list|show|stop)",
    s_backfill_opts, s_job_pos, 1, 1, s_backfill_check, s_backfill, "JOB_BACKFILL", NULL
};

static int
s_list (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    if (!xxl_ctl_request_args (self, cmd->request, cmd, args, NULL))
        return XXL_CTL_FAILED;
    xxl_msg_t *reply;
    const msgpack_object *content;
    int rc;
    const msgpack_object *rows = xxl_ctl_list (self, &reply, &content, "backfills", CTL_LIST,
                                               &rc);
    if (!rows)
        return rc;
    ctl_table_t table;
    const char *headers [] = { "ID", "JOB", "FROM", "TO", "PER S", "DONE/TOTAL", "MADE",
                               "STATE", "BY" };
    xxl_ctl_table_init (&table, 9, headers);
    char buf [64];
    for (uint32_t i = 0; i < rows->via.array.size; i++) {
        const msgpack_object *row = &rows->via.array.ptr [i];
        if (row->type != MSGPACK_OBJECT_MAP)
            continue;                   //  not a row: skip it
        xxl_ctl_table_add (&table, xxl_ctl_value_text_of (row, "id"));
        xxl_ctl_table_add (&table, xxl_ctl_value_text_of (row, "jobId"));
        xxl_ctl_table_add (&table, strdup (xxl_ctl_time_text (
                                              xxl_ctl_value_int_or (row, "from", 0), buf,
                                              sizeof buf)));
        xxl_ctl_table_add (&table, strdup (xxl_ctl_time_text (
                                              xxl_ctl_value_int_or (row, "to", 0), buf,
                                              sizeof buf)));
        xxl_ctl_table_add (&table, xxl_ctl_value_text_of (row, "perSecond"));
        xxl_ctl_table_add (&table, zsys_sprintf ("%" PRId64 "/%" PRId64,
                                                 xxl_ctl_value_int_or (row, "made", 0)
                                                 + xxl_ctl_value_int_or (row, "skipped", 0),
                                                 xxl_ctl_value_int_or (row, "total", 0)));
        xxl_ctl_table_add (&table, xxl_ctl_value_text_of (row, "made"));
        xxl_ctl_table_add (&table, xxl_ctl_value_text_of (row, "state"));
        xxl_ctl_table_add (&table, xxl_ctl_value_text_of (row, "by"));
    }
    xxl_ctl_table_print (&table, self->out, "no backfills");
    xxl_msg_destroy (&reply);
    return XXL_CTL_OK;
}

const ctl_cmd_t xxl_ctl_backfill_list = {
    "backfill", "list", "[--job ID] [--limit N] [--before ID]", "list backfills, newest first, with progress",
    s_list_opts, NULL, 0, 0, NULL, s_list, "BACKFILL_LIST", NULL
};

const ctl_cmd_t xxl_ctl_backfill_show = {
    "backfill", "show", "ID", "show a backfill (range, pace, progress, state, who started it)",
    NULL, s_backfill_pos, 1, 1, NULL, xxl_ctl_cmd_show, "BACKFILL_SHOW", NULL
};

static int
s_stop (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    return s_one (self, cmd, args, "stopped");
}

const ctl_cmd_t xxl_ctl_backfill_stop = {
    "backfill", "stop", "ID", "stop a running backfill (the runs it made stay)",
    NULL, s_backfill_pos, 1, 1, NULL, s_stop, "BACKFILL_STOP", NULL
};
