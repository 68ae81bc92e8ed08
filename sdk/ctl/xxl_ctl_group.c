/*  xxl_ctl_group.c -- xxl-ctl's group commands: add, list, show, update, rm.
*/

#include "xxl_ctl_cmd.h"
#include "xxl_ctl_call.h"
#include "xxl_ctl_print.h"
#include "xxl_ctl_value.h"

#include <czmq.h>

static const ctl_pos_t s_app_pos [] = { { "APP", CTL_STR, "appname" } };
static const ctl_pos_t s_group_pos [] = { { "G", CTL_STR, "group" } };

//  A manual group's addresses: addressType 1 and the list
static void
s_address_list (const ctl_cmd_t *cmd, ctl_args_t *args, xxl_enc_t *enc)
{
    const char *list = xxl_ctl_args_get (cmd, args, "--address-list");
    if (list) {
        xxl_enc_kint (enc, "addressType", 1);
        xxl_enc_kstr (enc, "addressList", list);
    }
}

static const ctl_opt_t s_group_add_opts [] = {
    { "--title", NULL, "T", "title shown for the group (default: none)",
      CTL_STR, 0, 0, "title", NULL },
    { "--address-list", NULL, "A,B", "manual group with these agent addresses (addressType 1);"
                                     " without it agents register themselves",
      CTL_STR, 0, 0, NULL, NULL },
    XXL_CTL_OPTS_END
};

static int
s_group_add (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    xxl_enc_t *enc = xxl_ctl_request_args (self, "GROUP_ADD", cmd, args, NULL);
    if (!enc)
        return XXL_CTL_FAILED;
    s_address_list (cmd, args, enc);
    return xxl_ctl_simple (self, "group", "added");
}

const ctl_cmd_t xxl_ctl_group_add = {
    "group", "add", "APP [--title T] [--address-list A,B]", "add an executor group",
    s_group_add_opts, s_app_pos, 1, 1, NULL, s_group_add, NULL, NULL
};

static int
s_group_list (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    (void) cmd;
    (void) args;
    if (!xxl_ctl_request (self, "GROUP_LIST"))
        return XXL_CTL_FAILED;
    xxl_msg_t *reply;
    const msgpack_object *content;
    int rc;
    const msgpack_object *groups = xxl_ctl_list (self, &reply, &content, "groups", CTL_LIST, &rc);
    if (groups) {
        ctl_table_t table;
        const char *headers [] = { "ID", "APPNAME", "TITLE", "TYPE", "ADDRESSES" };
        xxl_ctl_table_init (&table, 5, headers);
        for (uint32_t i = 0; i < groups->via.array.size; i++) {
            const msgpack_object *group = &groups->via.array.ptr [i];
            if (group->type != MSGPACK_OBJECT_MAP)
                continue;               //  not a row: skip it
            xxl_ctl_table_add (&table, xxl_ctl_value_text_of (group, "id"));
            xxl_ctl_table_add (&table, xxl_ctl_value_text_of (group, "appname"));
            xxl_ctl_table_add (&table, xxl_ctl_first_line (xxl_ctl_value_text_of (group, "title"),
                                                           XXL_CTL_CELL_MAX));
            xxl_ctl_table_add (&table, strdup (xxl_ctl_value_int_or (group, "addressType", 0) == 1?
                                               "manual": "auto"));
            xxl_ctl_table_add (&table, xxl_ctl_value_text_of (group, "addressList"));
        }
        xxl_ctl_table_print (&table, self->out, "no groups");
        xxl_msg_destroy (&reply);
    }
    return rc;
}

const ctl_cmd_t xxl_ctl_group_list = {
    "group", "list", "", "list groups", NULL, NULL, 0, 0, NULL, s_group_list, NULL, NULL
};

const ctl_cmd_t xxl_ctl_group_show = {
    "group", "show", "G", "show a group (app name or id) and its registered agents",
    NULL, s_group_pos, 1, 1, NULL,
    xxl_ctl_cmd_show, "GROUP_SHOW", NULL
};

static const ctl_opt_t s_group_update_opts [] = {
    { "--appname", NULL, "APP", "rename the group's app name", CTL_STR, 0, 0, "appname", NULL },
    { "--title", NULL, "T", "new title", CTL_STR, 0, 0, "title", NULL },
    { "--address-list", NULL, "A,B", "make it a manual group with these addresses",
      CTL_STR, 0, 0, NULL, NULL },
    { "--auto", NULL, NULL, "make it an automatic group (agents register themselves)",
      CTL_BOOL, 0, 0, NULL, NULL },
    XXL_CTL_OPTS_END
};

static int
s_group_update_check (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    if (xxl_ctl_args_count (cmd, args, "--address-list", "--auto", NULL) > 1)
        return xxl_ctl_usage_error (self, cmd, "--address-list and --auto exclude each other");
    if (!xxl_ctl_args_count (cmd, args, "--appname", "--title", "--address-list", "--auto", NULL))
        return xxl_ctl_usage_error (self, cmd, "nothing to update: give at least one flag");
    return 0;
}

static int
s_group_update (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    xxl_enc_t *enc = xxl_ctl_request_args (self, "GROUP_UPDATE", cmd, args, NULL);
    if (!enc)
        return XXL_CTL_FAILED;
    s_address_list (cmd, args, enc);
    if (xxl_ctl_args_get (cmd, args, "--auto"))
        xxl_enc_kint (enc, "addressType", 0);
    return xxl_ctl_simple (self, "group", "updated");
}

const ctl_cmd_t xxl_ctl_group_update = {
    "group", "update", "G [--appname APP] [--title T] [--address-list A,B | --auto]",
    "change a group", s_group_update_opts, s_group_pos, 1, 1, s_group_update_check,
    s_group_update, NULL, NULL
};

const ctl_cmd_t xxl_ctl_group_rm = {
    "group", "rm", "G", "remove a group that has no jobs", NULL, s_group_pos, 1, 1, NULL,
    xxl_ctl_cmd_simple, "GROUP_RM", "removed"
};
