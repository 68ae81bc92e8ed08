/*  xxl_ctl_calendar.c -- xxl-ctl's calendar commands: add, list, show, rm
    (CALENDAR_*; DESIGN §13).  A calendar's dates come from a file, one
    YYYY-MM-DD a line (or comma-separated; '#' starts a comment), sent as
    the file's text: the scheduler reads and judges it.
*/

#include "xxl_ctl_cmd.h"
#include "xxl_ctl_call.h"
#include "xxl_ctl_print.h"
#include "xxl_ctl_value.h"

#include <czmq.h>

static const ctl_pos_t s_calendar_pos [] = { { "NAME", CTL_STR, "name" } };

static const ctl_opt_t s_calendar_add_opts [] = {
    { "--dates", NULL, "FILE", "dates excluded, YYYY-MM-DD, one a line ('-': stdin;"
      " '#' comments): every fire on them is skipped", CTL_FILE, 0, 0, "dates", NULL },
    { "--exclude-cron", NULL, "EXPR", "fires at times this cron expression matches are"
      " skipped", CTL_STR, 0, 0, "excludeCron", NULL },
    { "--timezone", NULL, "Z", "the zone dates and EXPR are read in (default: each"
      " job's own)", CTL_STR, 0, 0, "timezone", NULL },
    { "--replace", NULL, NULL, "replace a calendar of that name (its jobs re-planned)",
      CTL_BOOL, 0, 0, "replace", NULL },
    XXL_CTL_OPTS_END
};

static const ctl_opt_t s_calendar_rm_opts [] = {
    { "--force", NULL, NULL, "remove it even while jobs use it (they lose it)",
      CTL_BOOL, 0, 0, "force", NULL },
    XXL_CTL_OPTS_END
};

static int
s_add_check (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    if (!xxl_ctl_args_count (cmd, args, "--dates", "--exclude-cron", NULL))
        return xxl_ctl_usage_error (self, cmd, "give --dates FILE, --exclude-cron EXPR or both");
    return 0;
}

//  {name, jobs, workflows, ...}: prints "calendar NAME <done>" and, when
//  jobs or workflows were touched, what became of them (or the JSON)
static int
s_named (ctl_t *self, const char *done, const char *jobs_done)
{
    xxl_msg_t *reply;
    const msgpack_object *content;
    int rc = xxl_ctl_exchange (self, &reply, &content, NULL, CTL_ANY);
    if (rc)
        return rc;
    if (!self->json) {
        char *name = xxl_ctl_value_text_of (content, "name");
        int64_t jobs = xxl_ctl_value_int_or (content, "jobs", 0);
        int64_t flows = xxl_ctl_value_int_or (content, "workflows", 0);
        fprintf (self->out, "calendar %s %s\n", name, done);
        if (jobs > 0)
            fprintf (self->out, "%" PRId64 " job%s %s\n", jobs, jobs == 1? "": "s", jobs_done);
        if (flows > 0)
            fprintf (self->out, "%" PRId64 " workflow%s %s\n", flows, flows == 1? "": "s",
                     jobs_done);
        free (name);
    }
    xxl_msg_destroy (&reply);
    return XXL_CTL_OK;
}

static int
s_add (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    if (!xxl_ctl_request_args (self, cmd->request, cmd, args, NULL))
        return XXL_CTL_FAILED;
    bool replace = xxl_ctl_args_get (cmd, args, "--replace") != NULL;
    return s_named (self, replace? "written": "added",
                    "re-planned with it from now on");
}

const ctl_cmd_t xxl_ctl_calendar_add = {
    "calendar", "add", "NAME [--dates FILE] [--exclude-cron EXPR] [--timezone Z] [--replace]",
    "add a calendar: times that the jobs and workflows naming it (--calendar NAME) skip",
    s_calendar_add_opts, s_calendar_pos, 1, 1, s_add_check, s_add, "CALENDAR_ADD", NULL
};

static const ctl_opt_t s_list_opts [] = {
    XXL_CTL_PAGE_OPTS ("calendars"),
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
    const msgpack_object *rows = xxl_ctl_list (self, &reply, &content, "calendars", CTL_LIST,
                                               &rc);
    if (rows) {
        ctl_table_t table;
        const char *headers [] = { "NAME", "DATES", "EXCLUDE CRON", "TIMEZONE" };
        xxl_ctl_table_init (&table, 4, headers);
        for (uint32_t i = 0; i < rows->via.array.size; i++) {
            const msgpack_object *row = &rows->via.array.ptr [i];
            if (row->type != MSGPACK_OBJECT_MAP)
                continue;               //  not a row: skip it
            char *dates = xxl_ctl_value_text_of (row, "dates");
            size_t count = *dates? 1: 0;
            for (const char *p = dates; *p; p++)
                count += *p == ',';
            free (dates);
            char *cron = xxl_ctl_value_text_of (row, "excludeCron");
            char *zone = xxl_ctl_value_text_of (row, "timezone");
            xxl_ctl_table_add (&table, xxl_ctl_value_text_of (row, "name"));
            xxl_ctl_table_add (&table, zsys_sprintf ("%zu", count));
            xxl_ctl_table_add (&table, *cron? cron: strdup ("-"));
            xxl_ctl_table_add (&table, *zone? zone: strdup ("(the job's)"));
            if (!*cron)
                free (cron);
            if (!*zone)
                free (zone);
        }
        xxl_ctl_table_print (&table, self->out, "no calendars");
        int64_t next;
        if (xxl_ctl_value_int (content, "nextOffset", &next) == 0)
            fprintf (self->out, "(the reply reached the size limit: more from --offset %"
                     PRId64 ")\n", next);
        xxl_msg_destroy (&reply);
    }
    return rc;
}

const ctl_cmd_t xxl_ctl_calendar_list = {
    "calendar", "list", "[--limit N] [--offset N]", "list calendars", s_list_opts, NULL, 0, 0,
    NULL, s_list,
    "CALENDAR_LIST", NULL
};

const ctl_cmd_t xxl_ctl_calendar_show = {
    "calendar", "show", "NAME", "show a calendar (its dates, expression and zone)", NULL,
    s_calendar_pos, 1, 1, NULL, xxl_ctl_cmd_show, "CALENDAR_SHOW", NULL
};

static int
s_rm (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    if (!xxl_ctl_request_args (self, cmd->request, cmd, args, NULL))
        return XXL_CTL_FAILED;
    return s_named (self, "removed", "no longer use a calendar (re-planned from now on)");
}

const ctl_cmd_t xxl_ctl_calendar_rm = {
    "calendar", "rm", "NAME [--force]",
    "remove a calendar no job uses (--force: also one in use; its jobs lose it)",
    s_calendar_rm_opts, s_calendar_pos, 1, 1, NULL, s_rm, "CALENDAR_RM", NULL
};
