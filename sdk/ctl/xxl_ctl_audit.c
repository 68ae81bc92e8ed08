/*  xxl_ctl_audit.c -- xxl-ctl's audit command: list, the scheduler's record
    of the changes made through its api (who, role, what, target, code).
*/

#include "xxl_ctl_cmd.h"
#include "xxl_ctl_call.h"
#include "xxl_ctl_print.h"
#include "xxl_ctl_value.h"

#include <czmq.h>

static const ctl_opt_t s_audit_list_opts [] = {
    { "--limit", NULL, "N", "at most N changes, newest first ({min}-{max}, default {default})",
      CTL_INT, 0, 0, "limit", NULL },
    { "--before", NULL, "ID", "only changes with an id below ID (the next page: the last\n"
                              "                         id listed)",
      CTL_ID, 0, 0, "before", NULL },
    XXL_CTL_OPTS_END
};

static int
s_audit_list (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    if (!xxl_ctl_request_args (self, cmd->request, cmd, args, NULL))
        return XXL_CTL_FAILED;
    xxl_msg_t *reply;
    const msgpack_object *content;
    int rc;
    const msgpack_object *rows = xxl_ctl_list (self, &reply, &content, "audit", CTL_LIST, &rc);
    if (rows) {
        ctl_table_t table;
        const char *headers [] = { "ID", "TIME", "WHO", "ROLE", "TYPE", "TARGET", "CODE" };
        xxl_ctl_table_init (&table, 7, headers);
        for (uint32_t i = 0; i < rows->via.array.size; i++) {
            const msgpack_object *row = &rows->via.array.ptr [i];
            if (row->type != MSGPACK_OBJECT_MAP)
                continue;               //  not a row: skip it
            char buf [64];
            int64_t target = xxl_ctl_value_int_or (row, "target", 0);
            xxl_ctl_table_add (&table, xxl_ctl_value_text_of (row, "id"));
            xxl_ctl_table_add (&table, strdup (xxl_ctl_time_text (
                                                   xxl_ctl_value_int_or (row, "time", 0),
                                                   buf, sizeof buf)));
            xxl_ctl_table_add (&table, xxl_ctl_first_line (xxl_ctl_value_text_of (row, "who"),
                                                           XXL_CTL_CELL_MAX));
            xxl_ctl_table_add (&table, xxl_ctl_value_text_of (row, "role"));
            xxl_ctl_table_add (&table, xxl_ctl_value_text_of (row, "type"));
            xxl_ctl_table_add (&table, target? xxl_ctl_value_text_of (row, "target")
                                             : strdup ("-"));
            xxl_ctl_table_add (&table, xxl_ctl_value_text_of (row, "code"));
        }
        xxl_ctl_table_print (&table, self->out, "no changes recorded");
        xxl_msg_destroy (&reply);
    }
    return rc;
}

const ctl_cmd_t xxl_ctl_audit_list = {
    "audit", "list", "[--limit N] [--before ID]",
    "list the changes made through the scheduler's api, newest first", s_audit_list_opts,
    NULL, 0, 0, NULL, s_audit_list, "AUDIT_LIST", NULL
};
