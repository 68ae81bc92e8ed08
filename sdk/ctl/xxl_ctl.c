/*  xxl_ctl.c -- xxl-ctl: the command-line client of the xxl scheduler.

    One command per run: global flags (--api, --token, --cert,
    --scheduler-key, --json, --timeout, -c FILE), then `NOUN [VERB] [ARGS]
    [FLAGS]` looked up in xxl_ctl_commands.
    The command's arguments are parsed and checked as its table declares
    (xxl_ctl_args), after the config file, the environment and the
    defaults have settled the connection settings under the global flags;
    then its handler runs.  Each command builds one api request with the
    client library's encoder (field names are the scheduler's camelCase
    names), waits for the reply and prints it: with --json the reply's
    content as one JSON document, otherwise aligned tables for lists and
    `key: value` lines for single objects.  `cron next` and `keygen` need
    no scheduler: they run locally.  With --cert and --scheduler-key (both
    or neither) the link to the scheduler is CURVE-encrypted and
    authenticated (xxl_client_new_curve); with neither, no token and a
    loopback endpoint, the local admin key of a scheduler on this host is
    used when this user can read it (xxl_local.h).  Every failure prints
    one error (a line on err, or {"error": ...} on out with --json) and
    returns a non-zero status: 1 for server, connection and reply
    problems, 2 for usage errors (xxl_ctl.h; `job trigger` adds 3 and 4).  Replies are never trusted: a missing
    or ill-typed field gives "unexpected reply", never a crash.

    Files: xxl_ctl_args (flags as data), xxl_ctl_call (requests and
    replies), xxl_ctl_print (output), xxl_ctl_value (reading replies),
    xxl_ctl_diff (glue diff), and the commands by resource:
    xxl_ctl_group, xxl_ctl_job, xxl_ctl_trigger, xxl_ctl_log, xxl_ctl_glue,
    xxl_ctl_misc, xxl_ctl_audit, xxl_ctl_keygen, xxl_ctl_user.
*/

#include "xxl_ctl.h"
#include "xxl_ctl_cmd.h"
#include "xxl_ctl_print.h"

#include "xxl_local.h"
#include "xxl_transport.h"
#include "../src/xxl_conf.h"

#include <czmq.h>

//  The commands, in the order of `xxl-ctl --help` (xxl_commands.def's)
const ctl_cmd_t *const xxl_ctl_commands [] = {
#define XXL_COMMAND(name, fields, access, scope, flags, handler, method, path, p1, p2, \
                    status, ctl) ctl
#define XXL_CTL(cmd) &xxl_ctl_##cmd,
#define XXL_NO_CTL
#define XXL_CTL_ONLY(cmd) &xxl_ctl_##cmd,
#include "xxl_commands.def"
#undef XXL_COMMAND
#undef XXL_CTL
#undef XXL_NO_CTL
#undef XXL_CTL_ONLY
    NULL
};

//  The xxl-ctl command of each api command, by its XXL_CMD_<NAME>
const ctl_cmd_t *const xxl_ctl_of_command [XXL_CMD_COUNT] = {
#define XXL_COMMAND(name, fields, access, scope, flags, handler, method, path, p1, p2, \
                    status, ctl) [XXL_CMD_##name] = ctl,
#define XXL_CTL(cmd) &xxl_ctl_##cmd
#define XXL_NO_CTL NULL
#define XXL_CTL_ONLY(cmd)
#include "xxl_commands.def"
#undef XXL_COMMAND
#undef XXL_CTL
#undef XXL_NO_CTL
#undef XXL_CTL_ONLY
};

static void
s_usage (FILE *out, const char *noun)
{
    fprintf (out,
        "usage: xxl-ctl [--api EP] [--token T] [--cert FILE --scheduler-key FILE] [--json]\n"
        "               [--get PATH] [--timeout MS] [-c FILE] COMMAND ...\n");
    if (!noun)
        fprintf (out,
            "\n"
            "  --api EP        scheduler api endpoint (ctl/api; XXL_API; default %s)\n"
            "  --token T       access token (ctl/token; XXL_TOKEN)\n"
            "  --cert FILE     this client's secret certificate, NAME.cert_secret made by\n"
            "                  'xxl-ctl keygen' (ctl/cert; XXL_CERT)\n"
            "  --scheduler-key FILE\n"
            "                  the scheduler's public certificate (ctl/scheduler_key;\n"
            "                  XXL_SCHEDULER_KEY); with --cert: talk CURVE to that\n"
            "                  scheduler only.  Neither, no token and a loopback api: the\n"
            "                  local admin key of the scheduler on this host, if readable\n"
            "                  (ctl/state_dir; XXL_STATE_DIR; docs/operations.md)\n"
            "  --json          print one JSON document per command, for scripts\n"
            "  --get PATH      print only the value at PATH of each JSON document: a\n"
            "                  string as its text, null (or nothing there) as null,\n"
            "                  any other value as compact JSON; PATH is steps .KEY\n"
            "                  and [N] ([-1]: the last), as .id or .logIds[0]\n"
            "  --timeout MS    milliseconds to wait for a reply (ctl/timeout; default %d)\n"
            "  -c FILE         ZPL config file (see xxl-ctl.cfg(5)) read instead of the\n"
            "                  default files\n"
            "  -h, --help      this text\n"
            "  --version       the version\n"
            "\n"
            "Each setting comes from the first that has it: the flag; the -c file; the\n"
            "environment (XXL_API, ...); the user's ~/.config/xxl/xxl-ctl.cfg\n"
            "($XDG_CONFIG_HOME/xxl/ when set); %s/xxl-ctl.cfg; the default.\n"
            "The two default files are read, if they exist, without -c only;\n"
            "$XXL_CONFIG_DIR, when set, replaces both folders.\n",
            XXL_CTL_DEFAULT_API, XXL_CTL_DEFAULT_TIMEOUT, xxl_conf_dir ());
    fprintf (out, "\ncommands:\n");
    for (const ctl_cmd_t *const *entry = xxl_ctl_commands; *entry; entry++) {
        const ctl_cmd_t *cmd = *entry;
        if (noun && strneq (noun, cmd->noun))
            continue;
        char name [32];
        snprintf (name, sizeof name, "%s%s%s", cmd->noun, cmd->verb? " ": "",
                  cmd->verb? cmd->verb: "");
        const char *nl = strchr (cmd->synopsis, '\n');
        if (*cmd->synopsis)
            fprintf (out, "  %-14s %.*s%s\n", name,
                     nl? (int) (nl - cmd->synopsis): (int) strlen (cmd->synopsis),
                     cmd->synopsis, nl? " ...": "");
        else
            fprintf (out, "  %s\n", name);
    }
    fprintf (out, "\nRun 'xxl-ctl COMMAND --help' for a command's flags.  Exit status: 0 ok,\n"
                  "1 a scheduler or connection error, 2 a usage error; job trigger: 3 a run\n"
                  "failed (at once, or with --wait), 4 --wait timed out.\n");
}

//  The config files, most to least binding: -c FILE, the user's, the system's
#define CTL_FILES 3

//  The setting of a flag (given empty: none), else of the -c file's key,
//  else of the environment variable, else of the user's then the system's
//  default file's key (a key or variable set empty counts as unset); NULL
//  when none
static const char *
s_setting (const char *flag, zconfig_t *files [CTL_FILES], const char *path, const char *env)
{
    if (flag)
        return *flag? flag: NULL;
    const char *value = files [0]? zconfig_get (files [0], path, NULL): NULL;
    if ((!value || !*value) && env)
        value = getenv (env);
    for (int i = 1; i < CTL_FILES && (!value || !*value); i++)
        value = files [i]? zconfig_get (files [i], path, NULL): NULL;
    return value && *value? value: NULL;
}

//  Loads -c FILE, or else the default files that exist
static int
s_load (ctl_t *self, const char *config_file, zconfig_t *files [CTL_FILES])
{
    char err [512];
    if (config_file)
        return xxl_conf_load (config_file, NULL, &files [0], NULL, err, sizeof err)
             ? xxl_ctl_fail (self, XXL_CTL_USAGE, "%s", err): 0;
    if (xxl_conf_load (NULL, "xxl-ctl.cfg", &files [2], NULL, err, sizeof err))
        return xxl_ctl_fail (self, XXL_CTL_USAGE, "%s", err);
    //  (XXL_CONFIG_DIR set: that folder's file alone, as the tests want)
    const char *xdg = getenv ("XDG_CONFIG_HOME"), *home = getenv ("HOME");
    const char *dir = getenv ("XXL_CONFIG_DIR");
    char *user = dir && *dir? NULL
               : xdg && *xdg? zsys_sprintf ("%s/xxl/xxl-ctl.cfg", xdg)
               : home && *home? zsys_sprintf ("%s/.config/xxl/xxl-ctl.cfg", home): NULL;
    int rc = 0;
    if (user && access (user, F_OK) == 0
    &&  xxl_conf_load (user, NULL, &files [1], NULL, err, sizeof err))
        rc = xxl_ctl_fail (self, XXL_CTL_USAGE, "%s", err);
    free (user);
    return rc;
}

//  Applies config files, environment and defaults under the flags
static int
s_settle (ctl_t *self, const char *config_file, const char *api, const char *token,
          const char *cert, const char *scheduler_key, const char *timeout_text)
{
    zconfig_t *files [CTL_FILES] = { NULL, NULL, NULL };
    int rc = s_load (self, config_file, files);
    if (rc)
        return rc;
    api = s_setting (api, files, "ctl/api", "XXL_API");
    if (!api)
        api = XXL_CTL_DEFAULT_API;
    token = s_setting (token, files, "ctl/token", "XXL_TOKEN");
    cert = s_setting (cert, files, "ctl/cert", "XXL_CERT");
    scheduler_key = s_setting (scheduler_key, files, "ctl/scheduler_key", "XXL_SCHEDULER_KEY");
    timeout_text = s_setting (timeout_text, files, "ctl/timeout", NULL);
    int64_t timeout = XXL_CTL_DEFAULT_TIMEOUT;
    if (timeout_text && xxl_ctl_parse_int (timeout_text, 1, 3600 * 1000, &timeout))
        rc = xxl_ctl_fail (self, XXL_CTL_USAGE, "timeout must be 1 to 3600000 ms, not '%s'", timeout_text);
    if (!rc && !cert != !scheduler_key)
        rc = xxl_ctl_fail (self, XXL_CTL_USAGE, "%s needs %s too (both, or neither for plain"
                           " text)", cert? "--cert": "--scheduler-key",
                           cert? "--scheduler-key": "--cert");
    self->api = strdup (api);
    self->token = token? strdup (token): NULL;
    self->cert = cert? strdup (cert): NULL;
    self->scheduler_key = scheduler_key? strdup (scheduler_key): NULL;
    self->timeout = (int) timeout;
    //  No keys, no token, a scheduler on this host: its local admin key
    char local_cert [256], local_server [256], why [512];
    int found = rc || cert || token || !xxl_transport_loopback (api)? 0:
                xxl_local_keys_find (s_setting (NULL, files, "ctl/state_dir", NULL),
                                     XXL_LOCAL_ADMIN, local_cert, sizeof local_cert,
                                     local_server, sizeof local_server, why, sizeof why);
    if (found > 0) {
        self->cert = strdup (local_cert);
        self->scheduler_key = strdup (local_server);
    }
    if (found)
        self->local = strdup (found > 0? local_cert: why);
    for (int i = 0; i < CTL_FILES; i++)
        zconfig_destroy (&files [i]);
    return rc;
}

int
xxl_ctl_main (int argc, char **argv, FILE *out, FILE *err)
{
    ctl_t ctl = { .out = out, .err = err, .timeout = XXL_CTL_DEFAULT_TIMEOUT };
    ctl_t *self = &ctl;
    const char *api = NULL, *token = NULL, *timeout = NULL, *config = NULL;
    const char *cert = NULL, *scheduler_key = NULL;
    int i = 1, rc = XXL_CTL_OK;

    //  Global flags, before the command
    for (; i < argc && argv [i][0] == '-'; i++) {
        char arg [32];
        const char *value = NULL;          //  from --flag=value
        const char *eq = strchr (argv [i], '=');
        if (eq && strncmp (argv [i], "--", 2) == 0 && (size_t) (eq - argv [i]) < sizeof arg) {
            snprintf (arg, sizeof arg, "%.*s", (int) (eq - argv [i]), argv [i]);
            value = eq + 1;
        }
        else
            snprintf (arg, sizeof arg, "%s", argv [i]);
        const char **target = streq (arg, "--api")? &api: streq (arg, "--token")? &token:
                              streq (arg, "--cert")? &cert:
                              streq (arg, "--scheduler-key")? &scheduler_key:
                              streq (arg, "--timeout")? &timeout:
                              streq (arg, "--get")? &self->get:
                              streq (arg, "-c") || streq (arg, "--config")? &config: NULL;
        if (value && !target) {
            rc = xxl_ctl_fail (self, XXL_CTL_USAGE, "unknown flag '%s'", argv [i]);
            s_usage (err, NULL);
            return rc;
        }
        if (target && value)
            *target = value;
        else
        if (target) {
            if (i + 1 >= argc) {
                rc = xxl_ctl_fail (self, XXL_CTL_USAGE, "%s needs a value", arg);
                s_usage (err, NULL);
                return rc;
            }
            *target = argv [++i];
        }
        else
        if (streq (arg, "--json"))
            self->json = 1;
        else
        if (streq (arg, "-h") || streq (arg, "--help")) {
            s_usage (out, NULL);
            return XXL_CTL_OK;
        }
        else
        if (streq (arg, "--version")) {
            fprintf (out, "xxl-ctl %s\n", PACKAGE_VERSION);
            return XXL_CTL_OK;
        }
        else {
            rc = xxl_ctl_fail (self, XXL_CTL_USAGE, "unknown flag '%s'", argv [i]);
            s_usage (err, NULL);
            return rc;
        }
    }
    if (self->get) {
        if (!xxl_ctl_get_path_ok (self->get)) {
            const char *path = self->get;
            self->get = NULL;
            rc = xxl_ctl_fail (self, XXL_CTL_USAGE, "--get: '%s' is not a path like"
                               " .id, .logIds[0] or .content.shares[-1]", path);
            return rc;
        }
        self->json = 1;
    }
    if (i >= argc) {
        rc = xxl_ctl_fail (self, XXL_CTL_USAGE, "no command given");
        s_usage (err, NULL);
        return rc;
    }
    //  Find the command: NOUN [VERB]
    const char *noun = argv [i++];
    const char *verb = i < argc? argv [i]: NULL;
    const ctl_cmd_t *cmd = NULL;
    int known_noun = 0;
    for (const ctl_cmd_t *const *entry = xxl_ctl_commands; *entry && !cmd; entry++) {
        const ctl_cmd_t *c = *entry;
        if (strneq (c->noun, noun))
            continue;
        known_noun = 1;
        if (!c->verb)
            cmd = c;
        else
        if (verb && streq (c->verb, verb)) {
            cmd = c;
            i++;
        }
        else
        if (verb && i + 1 < argc && strchr (c->verb, ' ')) {
            //  A verb of two words (`workflow run show`)
            size_t length = strlen (verb);
            if (strncmp (c->verb, verb, length) == 0 && c->verb [length] == ' '
            &&  streq (c->verb + length + 1, argv [i + 1])) {
                cmd = c;
                i += 2;
            }
        }
    }
    if (!cmd) {
        if (known_noun && (!verb || streq (verb, "-h") || streq (verb, "--help"))) {
            if (verb) {
                s_usage (out, noun);
                return XXL_CTL_OK;
            }
            rc = xxl_ctl_fail (self, XXL_CTL_USAGE, "'%s' needs a subcommand", noun);
        }
        else
        if (known_noun)
            rc = xxl_ctl_fail (self, XXL_CTL_USAGE, "unknown command '%s %s'", noun, verb);
        else
            rc = xxl_ctl_fail (self, XXL_CTL_USAGE, "unknown command '%s'", noun);
        s_usage (err, known_noun? noun: NULL);
        return rc;
    }
    ctl_args_t args;
    rc = xxl_ctl_args_parse (self, cmd, argc - i, argv + i, &args);
    if (rc == -1)
        return XXL_CTL_OK;              //  printed help
    if (rc == 0)
        rc = s_settle (self, config, api, token, cert, scheduler_key, timeout);
    if (rc == 0)
        rc = xxl_ctl_args_check (self, cmd, &args);
    if (rc == 0)
        rc = cmd->fn (self, cmd, &args);
    xxl_ctl_args_free (&args);
    fflush (out);
    fflush (err);
    xxl_client_destroy (&self->client);
    free (self->api);
    free (self->token);
    free (self->cert);
    free (self->scheduler_key);
    free (self->local);
    return rc;
}
