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

    Each command file (group, job, log, glue, misc, audit, keygen) defines
    its commands; xxl_ctl.c lists them in the order `xxl-ctl --help` shows.
*/

#ifndef XXL_CTL_CMD_H_INCLUDED
#define XXL_CTL_CMD_H_INCLUDED

#include "xxl_ctl.h"
#include "xxl_ctl_args.h"
#include "xxl/client.h"

#define XXL_CTL_DEFAULT_API     "tcp://127.0.0.1:7070"
#define XXL_CTL_DEFAULT_TIMEOUT 5000

//  One run of xxl-ctl: where output goes, how, and the scheduler link
struct _ctl_t {
    FILE *out;
    FILE *err;
    int json;                           //  --json: one JSON document on out
    char *api;                          //  endpoint (owned)
    char *token;                        //  access token or NULL (owned)
    char *cert;                         //  this client's secret certificate
                                        //  file or NULL (owned)
    char *scheduler_key;                //  the scheduler's public certificate
                                        //  file or NULL (owned); both or neither
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

//  The commands, by file
extern const ctl_cmd_t xxl_ctl_group_add, xxl_ctl_group_list, xxl_ctl_group_show,
    xxl_ctl_group_update, xxl_ctl_group_rm;
extern const ctl_cmd_t xxl_ctl_job_add, xxl_ctl_job_update, xxl_ctl_job_list,
    xxl_ctl_job_show, xxl_ctl_job_rm, xxl_ctl_job_copy, xxl_ctl_job_start, xxl_ctl_job_stop,
    xxl_ctl_job_trigger, xxl_ctl_job_next;
extern const ctl_cmd_t xxl_ctl_log_list, xxl_ctl_log_show, xxl_ctl_log_cat,
    xxl_ctl_log_kill, xxl_ctl_log_clear;
extern const ctl_cmd_t xxl_ctl_glue_history, xxl_ctl_glue_show, xxl_ctl_glue_diff,
    xxl_ctl_glue_rollback;
extern const ctl_cmd_t xxl_ctl_agent_list, xxl_ctl_cron_next, xxl_ctl_report;
extern const ctl_cmd_t xxl_ctl_audit_list;
extern const ctl_cmd_t xxl_ctl_keygen;
extern const ctl_cmd_t xxl_ctl_user_add, xxl_ctl_user_update, xxl_ctl_user_rm,
    xxl_ctl_user_list, xxl_ctl_token_add, xxl_ctl_token_rm, xxl_ctl_token_list;

#endif
