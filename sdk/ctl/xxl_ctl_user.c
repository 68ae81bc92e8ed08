/*  xxl_ctl_user.c -- xxl-ctl's user and token commands: the HTTP side's
    console logins and bearer tokens (USER_*, TOKEN_*; admin only).
*/

#include "xxl_ctl_cmd.h"
#include "xxl_ctl_call.h"
#include "xxl_ctl_print.h"
#include "xxl_ctl_value.h"

#include <czmq.h>

static const ctl_pos_t s_user_pos [] = { { "NAME", CTL_STR, "username" } };
static const ctl_pos_t s_token_pos [] = { { "NAME", CTL_STR, "name" } };

static const ctl_opt_t s_user_add_opts [] = {
    { "--role", NULL, "R", "admin, operator or viewer", CTL_STR, 0, 0, "role", NULL },
    { "--apps", NULL, "A,B", "the apps an operator acts on and a viewer or\n"
      "                         operator reads (comma-separated; required for an\n"
      "                         operator; a viewer without them reads all)",
      CTL_STR, 0, 0, "apps", NULL },
    { "--password-stdin", NULL, NULL, "read the password from the first line of stdin",
      CTL_BOOL, 0, 0, NULL, NULL },
    XXL_CTL_OPTS_END
};

//  The first line of stdin, without its line end (caller frees); NULL on EOF
static char *
s_stdin_line (void)
{
    char *line = NULL;
    size_t size = 0;
    ssize_t length = getline (&line, &size, stdin);
    if (length < 0) {
        free (line);
        return NULL;
    }
    while (length > 0 && (line [length - 1] == '\n' || line [length - 1] == '\r'))
        line [--length] = 0;
    return line;
}

//  {username} or {name}: prints "<what> NAME <done>" (or the JSON)
static int
s_named (ctl_t *self, const char *key, const char *what, const char *done)
{
    xxl_msg_t *reply;
    const msgpack_object *content;
    int rc = xxl_ctl_exchange (self, &reply, &content, NULL, CTL_ANY);
    if (rc)
        return rc;
    if (!self->json) {
        char *name = xxl_ctl_value_text_of (content, key);
        fprintf (self->out, "%s %s %s\n", what, name, done);
        free (name);
    }
    xxl_msg_destroy (&reply);
    return XXL_CTL_OK;
}

static int
s_user_write (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args, const char *type,
              bool need_password)
{
    char *password = NULL;
    if (xxl_ctl_args_get (cmd, args, "--password-stdin")) {
        password = s_stdin_line ();
        if (!password)
            return xxl_ctl_fail (self, XXL_CTL_FAILED, "no password on stdin");
    }
    else
    if (need_password)
        return xxl_ctl_usage_error (self, cmd, "give the password on stdin with --password-stdin");
    xxl_enc_t *enc = xxl_ctl_request_args (self, type, cmd, args, NULL);
    if (enc && password)
        xxl_enc_kstr (enc, "password", password);
    if (password) {
        memset (password, 0, strlen (password));
        free (password);
    }
    if (!enc)
        return XXL_CTL_FAILED;
    return s_named (self, "username", "user", need_password? "added": "updated");
}

static int
s_user_add_check (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    if (!xxl_ctl_args_get (cmd, args, "--role"))
        return xxl_ctl_usage_error (self, cmd, "give --role (admin, operator or viewer)");
    return 0;
}

static int
s_user_add (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    return s_user_write (self, cmd, args, "USER_ADD", true);
}

const ctl_cmd_t xxl_ctl_user_add = {
    "user", "add", "NAME --role R [--apps A,B] --password-stdin",
    "add a console user (the password's crypt(3) hash is stored)", s_user_add_opts,
    s_user_pos, 1, 1, s_user_add_check, s_user_add, NULL, NULL
};

static int
s_user_update (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    return s_user_write (self, cmd, args, "USER_UPDATE", false);
}

const ctl_cmd_t xxl_ctl_user_update = {
    "user", "update", "NAME [--role R] [--apps A,B] [--password-stdin]",
    "change a console user (a new password ends its sessions)", s_user_add_opts,
    s_user_pos, 1, 1, NULL, s_user_update, NULL, NULL
};

static int
s_rm (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    if (!xxl_ctl_request_args (self, cmd->request, cmd, args, NULL))
        return XXL_CTL_FAILED;
    bool user = streq (cmd->noun, "user");
    return s_named (self, user? "username": "name", cmd->noun, "removed");
}

const ctl_cmd_t xxl_ctl_user_rm = {
    "user", "rm", "NAME", "remove a console user and end its sessions", NULL, s_user_pos, 1, 1,
    NULL, s_rm, "USER_RM", NULL
};

static int
s_list (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    (void) args;
    bool user = streq (cmd->noun, "user");
    if (!xxl_ctl_request (self, cmd->request))
        return XXL_CTL_FAILED;
    xxl_msg_t *reply;
    const msgpack_object *content;
    int rc;
    const msgpack_object *rows = xxl_ctl_list (self, &reply, &content, user? "users": "tokens",
                                               CTL_LIST, &rc);
    if (rows) {
        ctl_table_t table;
        const char *headers [] = { "NAME", "ROLE", "APPS", "ADDED" };
        xxl_ctl_table_init (&table, 4, headers);
        for (uint32_t i = 0; i < rows->via.array.size; i++) {
            const msgpack_object *row = &rows->via.array.ptr [i];
            if (row->type != MSGPACK_OBJECT_MAP)
                continue;               //  not a row: skip it
            char buf [64];
            xxl_ctl_table_add (&table, xxl_ctl_value_text_of (row, user? "username": "name"));
            xxl_ctl_table_add (&table, xxl_ctl_value_text_of (row, "role"));
            xxl_ctl_table_add (&table, xxl_ctl_value_text_of (row, "apps"));
            xxl_ctl_table_add (&table, strdup (xxl_ctl_time_text (
                                                   xxl_ctl_value_int_or (row, "addTime", 0),
                                                   buf, sizeof buf)));
        }
        xxl_ctl_table_print (&table, self->out, user? "no users": "no tokens");
        xxl_msg_destroy (&reply);
    }
    return rc;
}

const ctl_cmd_t xxl_ctl_user_list = {
    "user", "list", "", "list console users", NULL, NULL, 0, 0, NULL, s_list, "USER_LIST", NULL
};

static const ctl_opt_t s_token_add_opts [] = {
    { "--role", NULL, "R", "admin, operator or viewer", CTL_STR, 0, 0, "role", NULL },
    { "--apps", NULL, "A,B", "the apps an operator acts on and a viewer or\n"
      "                         operator reads (comma-separated; required for an\n"
      "                         operator; a viewer without them reads all)",
      CTL_STR, 0, 0, "apps", NULL },
    XXL_CTL_OPTS_END
};

static int
s_token_add (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    if (!xxl_ctl_request_args (self, "TOKEN_ADD", cmd, args, NULL))
        return XXL_CTL_FAILED;
    xxl_msg_t *reply;
    const msgpack_object *content;
    int rc = xxl_ctl_exchange (self, &reply, &content, NULL, CTL_ANY);
    if (rc)
        return rc;
    if (!self->json) {
        //  (the token alone on stdout, for scripts; it is not shown again)
        char *token = xxl_ctl_value_text_of (content, "token");
        fprintf (self->out, "%s\n", token);
        fprintf (self->err, "xxl-ctl: the token is shown once: keep it now (HTTP header"
                            " Authorization: Bearer TOKEN)\n");
        free (token);
    }
    xxl_msg_destroy (&reply);
    return XXL_CTL_OK;
}

const ctl_cmd_t xxl_ctl_token_add = {
    "token", "add", "NAME --role R [--apps A,B]",
    "make a bearer token for the HTTP api; prints it once (only its hash is stored)",
    s_token_add_opts, s_token_pos, 1, 1, s_user_add_check, s_token_add, NULL, NULL
};

const ctl_cmd_t xxl_ctl_token_rm = {
    "token", "rm", "NAME", "remove a bearer token", NULL, s_token_pos, 1, 1, NULL, s_rm,
    "TOKEN_RM", NULL
};

const ctl_cmd_t xxl_ctl_token_list = {
    "token", "list", "", "list bearer tokens (never the tokens themselves)", NULL, NULL, 0, 0,
    NULL, s_list, "TOKEN_LIST", NULL
};
