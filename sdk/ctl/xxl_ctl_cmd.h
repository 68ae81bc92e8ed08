/*  xxl_ctl_cmd.h -- what an xxl-ctl command is, and the run it serves.

    A command is data: its name (`NOUN [VERB]`), help texts, the flags and
    positional arguments it takes (ctl_opt_t, ctl_pos_t: kinds, ranges and
    the request fields they fill, see xxl_ctl_args.h), an optional check
    of rules between flags, and its handler.  xxl_ctl_main finds the
    command, parses and checks the arguments, and calls the handler only
    with values that passed.  A handler builds its request(s), prints the
    result and returns the exit status (XXL_CTL_*), having reported every
    failure itself (xxl_ctl_fail).  A command that is one request filled
    from its arguments needs no handler of its own: xxl_ctl_cmd_simple
    and xxl_ctl_cmd_show (xxl_ctl_call.h) serve it from `request` and
    `done`.

    Each command file (group, job, trigger, log, glue, misc, audit, keygen,
    user) defines its commands; xxl_commands.def names them (with the api
    command each sends) in the order `xxl-ctl --help` shows, for
    xxl_ctl.c's list and the declarations below.
*/

#ifndef XXL_CTL_CMD_H_INCLUDED
#define XXL_CTL_CMD_H_INCLUDED

#include "xxl_ctl.h"
#include "xxl_ctl_args.h"
#include "xxl/client.h"
#include "xxl_commands.h"

#define XXL_CTL_DEFAULT_API     "tcp://127.0.0.1:7070"
#define XXL_CTL_DEFAULT_TIMEOUT 5000

//  One run of xxl-ctl: where output goes, how, and the scheduler link
struct _ctl_t {
    FILE *out;
    FILE *err;
    int json;                           //  --json: one JSON document on out
    const char *get;                    //  --get PATH (argv's): that value of
                                        //  each document instead, or NULL
    char *api;                          //  endpoint (owned)
    char *token;                        //  access token or NULL (owned)
    char *cert;                         //  this client's secret certificate
                                        //  file or NULL (owned)
    char *scheduler_key;                //  the scheduler's public certificate
                                        //  file or NULL (owned); both or neither
    char *local;                        //  the local admin key's path when
                                        //  used, or why it cannot be read
                                        //  (xxl_local.h), or NULL (owned)
    int timeout;                        //  ms to wait for a reply
    xxl_client_t *client;               //  made by the first request
};

//  Handlers and checks: the exit status (0 when a check passes)
typedef int (ctl_fn_t) (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args);

struct _ctl_cmd_t {
    const char *noun;
    const char *verb;                   //  NULL: a one-word command
    const char *synopsis;               //  arguments and flags after the name
    const char *summary;
    const ctl_opt_t *opts;              //  flags, ended by a NULL name; or NULL
    const ctl_pos_t *pos;               //  positional arguments (max_pos of them)
    int min_pos, max_pos;
    ctl_fn_t *check;                    //  rules between flags, or NULL
    ctl_fn_t *fn;
    const char *request;                //  the api request it sends (its fields'
                                        //  ranges: xxl_ctl_args.h); the one
                                        //  xxl_ctl_cmd_simple and _show send
    const char *done;                   //  what xxl_ctl_cmd_simple says was done
};

//  The commands (xxl_commands.def), each defined in its xxl_ctl_<noun>.c
#define XXL_COMMAND(name, fields, access, scope, flags, handler, method, path, p1, p2, \
                    status, ctl) ctl
#define XXL_CTL(cmd) extern const ctl_cmd_t xxl_ctl_##cmd;
#define XXL_NO_CTL
#define XXL_CTL_ONLY(cmd) extern const ctl_cmd_t xxl_ctl_##cmd;
#include "xxl_commands.def"
#undef XXL_COMMAND
#undef XXL_CTL
#undef XXL_NO_CTL
#undef XXL_CTL_ONLY

//  Every command, in the order of `xxl-ctl --help`, ended by NULL
extern const ctl_cmd_t *const xxl_ctl_commands [];
//  The command that sends each api command (XXL_CMD_<NAME>), or NULL
extern const ctl_cmd_t *const xxl_ctl_of_command [XXL_CMD_COUNT];

#endif
