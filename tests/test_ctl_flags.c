/*  test_ctl_flags.c -- xxl-ctl's flags take what the scheduler judges from
    the api's command table (xxl_commands): every number flag that fills a
    field of its command's request has that field's range (no copy that
    could drift), a flag's help names only what the field has, and xxl-ctl
    refuses exactly what the scheduler would, at both ends of each range.
    The commands are xxl_commands.def's (every one xxl-ctl has), and the
    xxl-ctl command it names for an api command sends that command.
*/

#include "xxl_ctl_cmd.h"
#include "xxl_commands.h"
#include "xxl_test.h"
#include "xxl_test_ctl.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

//  Runs xxl-ctl with the line's words and then value; its status (no
//  scheduler listens: a request gets no reply)
static int
s_ctl (const char *line, const char *value)
{
    return xxl_test_ctl (line, " ", value, NULL);
}

int
main (void)
{
    char *text = NULL;
    size_t size = 0;
    //  The xxl-ctl command xxl_commands.def names for an api command sends
    //  it (or sends what its handler builds itself: no request)
    for (int id = 0; id < XXL_CMD_COUNT; id++) {
        const ctl_cmd_t *cmd = xxl_ctl_of_command [id];
        XXL_CHECK (!cmd || !cmd->request || strcmp (cmd->request, xxl_commands [id].name) == 0);
    }
    for (const ctl_cmd_t *const *entry = xxl_ctl_commands; *entry; entry++) {
        const ctl_cmd_t *cmd = *entry;
        const xxl_command_t *command = xxl_command_find (cmd->request);
        XXL_CHECK (!cmd->request || command);
        //  Its flags fit the parser's arrays
        XXL_CHECK (xxl_ctl_opts_count (cmd) <= XXL_CTL_MAX_OPTS);
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
            //  (the flags a command cannot go without)
            const char *need = strcmp (cmd->noun, "job") != 0? ""
                             : strcmp (cmd->verb, "add") == 0? " --group g --handler h"
                             : strcmp (cmd->verb, "backfill") == 0? " --from 1000 --to 2000": "";
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
    //  report's range: --from and --to take epoch ms or a local date (then
    //  the request goes: no scheduler answers it), each alone too; a value
    //  that is neither, or --to before --from, is a usage error before
    //  anything is sent
    struct { const char *flags, *last; int rc; } ranges [] = {
        { "--from 2026-01-01 --to", "2026-03-31", XXL_CTL_FAILED },
        { "--from 1767225600000 --to", "1767225600000", XXL_CTL_FAILED },
        { "--from", "2026-01-01", XXL_CTL_FAILED },
        { "--to", "1767225600000", XXL_CTL_FAILED },
        { "--to", "yesterday", XXL_CTL_USAGE },
        { "--to", "2026-13-01", XXL_CTL_USAGE },
        { "--from", "-5", XXL_CTL_USAGE },
        { "--from 2026-03-31 --to", "2026-01-01", XXL_CTL_USAGE },
        { "--from 2026-03-31 --to", "2026-03-31", XXL_CTL_FAILED }     //  (one day)
    };
    for (size_t i = 0; i < sizeof ranges / sizeof ranges [0]; i++) {
        char line [160];
        snprintf (line, sizeof line, "--api tcp://127.0.0.1:1 --timeout 1 report %s",
                  ranges [i].flags);
        XXL_CHECK (s_ctl (line, ranges [i].last) == ranges [i].rc);
    }
    //  The flags fill REPORT's from and to
    const xxl_command_t *report = xxl_command_find ("REPORT");
    XXL_CHECK (report && xxl_command_field (report, "from") && xxl_command_field (report, "to"));
    XXL_CHECK (xxl_ctl_report.request && strcmp (xxl_ctl_report.request, "REPORT") == 0);
    //  The lists in the help are the scheduler's
    FILE *out = open_memstream (&text, &size);
    xxl_ctl_args_usage (&xxl_ctl_job_add, out, 1);
    fclose (out);
    XXL_CHECK (strstr (text, "BEAN or GLUE_SHELL, GLUE_PYTHON, GLUE_PYTHON2, GLUE_NODEJS,"
                       " GLUE_PHP, GLUE_POWERSHELL"));
    XXL_CHECK (strstr (text, "block strategy (SERIAL_EXECUTION, DISCARD_LATER, COVER_EARLY)"));
    free (text);
    return xxl_test_done ();
}
