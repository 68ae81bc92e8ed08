/*  test_ctl_flags.c -- xxl-ctl's flags take what the scheduler judges from
    the api's command table (xxl_commands): every number flag that fills a
    field of its command's request has that field's range (no copy that
    could drift), a flag's help names only what the field has, and xxl-ctl
    refuses exactly what the scheduler would, at both ends of each range.
*/

#include "xxl_ctl_cmd.h"
#include "xxl_commands.h"
#include "xxl_test.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const ctl_cmd_t *s_cmds [] = {
    &xxl_ctl_group_add, &xxl_ctl_group_list, &xxl_ctl_group_show, &xxl_ctl_group_update,
    &xxl_ctl_group_rm, &xxl_ctl_job_add, &xxl_ctl_job_update, &xxl_ctl_job_list,
    &xxl_ctl_job_show, &xxl_ctl_job_rm, &xxl_ctl_job_copy, &xxl_ctl_job_start,
    &xxl_ctl_job_stop, &xxl_ctl_job_trigger, &xxl_ctl_job_next, &xxl_ctl_log_list,
    &xxl_ctl_log_show, &xxl_ctl_log_cat, &xxl_ctl_log_kill, &xxl_ctl_log_clear,
    &xxl_ctl_glue_history, &xxl_ctl_glue_show, &xxl_ctl_glue_diff, &xxl_ctl_glue_rollback,
    &xxl_ctl_agent_list, &xxl_ctl_cron_next, &xxl_ctl_report, NULL
};

//  Runs xxl-ctl with the line's words and then value; its status (no
//  scheduler listens: a request gets no reply)
static int
s_ctl (const char *line, const char *value)
{
    char *copy = strdup (line), *argv [16], *save = NULL;
    int argc = 0;
    argv [argc++] = (char *) "xxl-ctl";
    for (char *tok = strtok_r (copy, " ", &save); tok && argc < 14;
         tok = strtok_r (NULL, " ", &save))
        argv [argc++] = tok;
    argv [argc++] = (char *) value;
    argv [argc] = NULL;
    FILE *null = fopen ("/dev/null", "w");
    int rc = xxl_ctl_main (argc, argv, null, null);
    fclose (null);
    free (copy);
    return rc;
}

int
main (void)
{
    char *text = NULL;
    size_t size = 0;
    for (const ctl_cmd_t **entry = s_cmds; *entry; entry++) {
        const ctl_cmd_t *cmd = *entry;
        const xxl_command_t *command = xxl_command_find (cmd->request);
        XXL_CHECK (!cmd->request || command);
        for (int i = 0; cmd->opts && cmd->opts [i].name; i++) {
            const ctl_opt_t *opt = &cmd->opts [i];
            const xxl_field_t *field = opt->key? xxl_command_field (command, opt->key): NULL;
            if (opt->kind != CTL_INT && opt->kind != CTL_REAL)
                continue;
            //  A number flag filling a field takes the field's range...
            if (field) {
                XXL_CHECK (opt->min == 0 && opt->max == 0);
                XXL_CHECK (field->type == (opt->kind == CTL_INT? XXL_FIELD_INT
                                                               : XXL_FIELD_NUMBER));
            }
            //  ...and one with no range of its own has a field
            if (opt->min == 0 && opt->max == 0)
                XXL_CHECK (field != NULL);
            if (!field)
                continue;
            //  Both ends of the range pass (then no scheduler answers),
            //  past them is a usage error
            char line [256], past [32];
            const char *pos = cmd->min_pos? " 1": "";
            const char *need = strcmp (cmd->noun, "job") == 0 && strcmp (cmd->verb, "add") == 0?
                               " --group g --handler h": "";
            snprintf (line, sizeof line, "--api tcp://127.0.0.1:1 --timeout 1 %s %s%s%s %s",
                      cmd->noun, cmd->verb, pos, need, opt->name);
            if (field->max == INT64_MAX)
                snprintf (past, sizeof past, "9223372036854775808");
            else
                snprintf (past, sizeof past, "%" PRId64, field->max + 1);
            XXL_CHECK (s_ctl (line, past) == XXL_CTL_USAGE);
            snprintf (past, sizeof past, "%" PRId64, field->min - 1);
            XXL_CHECK (s_ctl (line, past) == XXL_CTL_USAGE);
            snprintf (past, sizeof past, "%" PRId64, field->max);
            XXL_CHECK (s_ctl (line, past) == XXL_CTL_FAILED);
            snprintf (past, sizeof past, "%" PRId64, field->min);
            XXL_CHECK (s_ctl (line, past) == XXL_CTL_FAILED);
        }
        //  Every help text names only what its field has, and is filled in
        FILE *out = open_memstream (&text, &size);
        xxl_ctl_args_usage (cmd, out, 1);
        fclose (out);
        XXL_CHECK (text && !strchr (text, '{') && !strchr (text, '}'));
        free (text);
        text = NULL;
    }
    //  The lists in the help are the scheduler's
    FILE *out = open_memstream (&text, &size);
    xxl_ctl_args_usage (&xxl_ctl_job_add, out, 1);
    fclose (out);
    XXL_CHECK (strstr (text, "BEAN or GLUE_SHELL, GLUE_PYTHON, GLUE_NODEJS, GLUE_PHP,"
                       " GLUE_POWERSHELL"));
    XXL_CHECK (strstr (text, "block strategy (SERIAL_EXECUTION, DISCARD_LATER, COVER_EARLY)"));
    free (text);
    return xxl_test_done ();
}
