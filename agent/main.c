/*  xxl-agent -- command line and config file; all logic is in the actor.
*/

#include "xxl_agent.h"
#include "xxl_guard.h"

#include "../sdk/src/xxl_conf.h"
#include "../sdk/src/xxl_local.h"
#include "../sdk/src/xxl_log.h"
#include "../sdk/src/xxl_transport.h"
#include "../sdk/src/xxl_tags.h"

#include <getopt.h>

static void
s_usage (FILE *out)
{
    fprintf (out,
        "usage: xxl-agent [-c FILE] --app NAME [--scheduler EP[,EP...]] [--address NAME]\n"
        "                 [--plugins DIR] [--logdir DIR] [--cert FILE --scheduler-key FILE]\n"
        "\n"
        "  -c, --config FILE    ZPL config file (see xxl-agent.cfg(5)); without -c,\n"
        "                       %s/xxl-agent.cfg if it exists\n"
        "  --app NAME           the group's app name to register under   (agent/app)\n"
        "  --scheduler EPS      scheduler agents endpoint(s), comma-separated (agent/scheduler;\n"
        "                       default tcp://127.0.0.1:7071)\n"
        "  --address NAME       this agent's address (default: hostname)  (agent/address)\n"
        "  --plugins DIR        handler plugins folder                    (agent/plugins)\n"
        "  --logdir DIR         run logs, glue sources, callback spool    (agent/logdir;\n"
        "                       default /var/log/xxl/jobhandler)\n"
        "  --token TOKEN        access token to send                      (agent/access_token)\n"
        "  --cert FILE          this agent's secret certificate, NAME.cert_secret\n"
        "                       made by 'xxl-ctl keygen'                  (agent/cert)\n"
        "  --scheduler-key FILE the scheduler's public certificate: with --cert, talk\n"
        "                       CURVE to that scheduler only              (agent/scheduler_key)\n"
        "                       Neither, no token and loopback schedulers: the local\n"
        "                       agent key of a scheduler on this host when readable\n"
        "                       (agent/state_dir; docs/operations.md, Security)\n"
        "  --tag KEY=VALUE      a tag jobs may ask for (--agent-tags); repeatable,\n"
        "                       up to %d                                  (agent/tags = \"K=V,K=V\")\n"
        "  --no-glue            refuse GLUE runs: reviewed plugins only   (agent/allow_glue = 0)\n"
        "  --in-process         run BEAN handlers inside the agent        (agent/in_process = 1)\n"
        "  --syslog             log to syslog instead of stderr           (agent/syslog)\n"
        "  --log-level LEVEL    " XXL_LOG_LEVELS " (default info)\n"
        "                                                                 (agent/log_level)\n"
        "  -h, --help           this text\n"
        "  --version            the version\n"
        "\n"
        "Flags override config keys; the config folder is $XXL_CONFIG_DIR when set.\n"
        "On SIGTERM or SIGINT it stops cleanly: refuses new runs, unregisters, lets\n"
        "its runs finish for up to agent/drain_s (30 s), then kills the rest; a second\n"
        "SIGTERM or SIGINT stops at once.\n", xxl_conf_dir (), XXL_TAGS_MAX);
}

#define s_value xxl_conf_str

//  SIGTERM and SIGINT received: the first starts the clean stop (the
//  drain), the next one ends the drain at once
static volatile sig_atomic_t s_interrupts = 0;

static void
s_on_signal (int signum)
{
    (void) signum;
    s_interrupts++;
    zsys_interrupted = 1;
}

//  A number flag or key; exits with status 2 and the reason when invalid
static int
s_int_from (const char *flag, zconfig_t *config, const char *path, int dflt, int min)
{
    int value;
    char err [256];
    if (xxl_conf_int (flag, config, path, dflt, min, 100000000, &value, err, sizeof err)) {
        fprintf (stderr, "xxl-agent: %s\n", err);
        exit (2);
    }
    return value;
}

static int
s_int (const char *flag, zconfig_t *config, const char *path, int dflt)
{
    return s_int_from (flag, config, path, dflt, 0);
}

//  The --tag flags given, joined by commas (each checked as it comes)
static char s_tag_flags [XXL_TAGS_MAX * (XXL_TAG_KEY_MAX + XXL_TAG_VALUE_MAX + 2) + 2];
static int s_tag_count = 0;

//  Adds one --tag; exits with status 2 and the reason when it is bad or
//  one too many
static void
s_tag_flag (const char *tag)
{
    char why [300];
    if (xxl_tag_check (tag, why, sizeof why)) {
        fprintf (stderr, "xxl-agent: --tag: %s\n", why);
        exit (2);
    }
    if (++s_tag_count > XXL_TAGS_MAX) {
        fprintf (stderr, "xxl-agent: --tag: more than %d tags\n", XXL_TAGS_MAX);
        exit (2);
    }
    size_t used = strlen (s_tag_flags);
    snprintf (s_tag_flags + used, sizeof s_tag_flags - used, "%s%s", used? ",": "", tag);
}

//  The agent's tags in their canonical form: the --tag flags, else
//  agent/tags; exits with status 2 and the reason when bad
static const char *
s_tags (zconfig_t *config)
{
    static char canonical [XXL_TAGS_BUF];
    const char *tags = s_tag_count? s_tag_flags: s_value (NULL, config, "agent/tags", "");
    char why [300];
    if (xxl_tags_normalize (tags, canonical, sizeof canonical, why, sizeof why) < 0) {
        fprintf (stderr, "xxl-agent: %s: %s\n", s_tag_count? "--tag": "agent/tags", why);
        exit (2);
    }
    return canonical;
}

int
main (int argc, char *argv [])
{
    //  The guardian the agent starts of itself (xxl_guard.h)
    if (argc > 1 && streq (argv [1], "--guard"))
        return xxl_guard_main (argc, argv);
    const char *file = NULL, *app = NULL, *scheduler = NULL, *address = NULL;
    const char *plugins = NULL, *logdir = NULL, *token = NULL, *no_glue = NULL;
    const char *in_process = NULL, *use_syslog = NULL, *cert = NULL, *scheduler_key = NULL;
    const char *log_level = NULL;
    static struct option options [] = {
        { "config", required_argument, 0, 'c' },
        { "app", required_argument, 0, 'a' },
        { "scheduler", required_argument, 0, 's' },
        { "address", required_argument, 0, 'A' },
        { "plugins", required_argument, 0, 'p' },
        { "logdir", required_argument, 0, 'l' },
        { "token", required_argument, 0, 't' },
        { "cert", required_argument, 0, 'k' },
        { "scheduler-key", required_argument, 0, 'K' },
        { "no-glue", no_argument, 0, 'G' },
        { "in-process", no_argument, 0, 'I' },
        { "syslog", no_argument, 0, 'S' },
        { "log-level", required_argument, 0, 'L' },
        { "tag", required_argument, 0, 'T' },
        { "help", no_argument, 0, 'h' },
        { "version", no_argument, 0, 'V' },
        { 0, 0, 0, 0 }
    };
    int opt;
    while ((opt = getopt_long (argc, argv, "c:h", options, NULL)) != -1) {
        switch (opt) {
            case 'c': file = optarg; break;
            case 'a': app = optarg; break;
            case 's': scheduler = optarg; break;
            case 'A': address = optarg; break;
            case 'p': plugins = optarg; break;
            case 'l': logdir = optarg; break;
            case 't': token = optarg; break;
            case 'k': cert = optarg; break;
            case 'K': scheduler_key = optarg; break;
            case 'G': no_glue = "0"; break;
            case 'I': in_process = "1"; break;
            case 'S': use_syslog = "1"; break;
            case 'L': log_level = optarg; break;
            case 'T': s_tag_flag (optarg); break;
            case 'h': s_usage (stdout); return 0;
            case 'V': printf ("xxl-agent %s\n", PACKAGE_VERSION); return 0;
            default: s_usage (stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf (stderr, "xxl-agent: unexpected argument '%s'\n", argv [optind]);
        return 2;
    }
    zsys_init ();
    zsys_handler_set (s_on_signal);
    zsys_set_logident ("xxl-agent");
    zconfig_t *config = NULL;
    int level;
    if (xxl_conf_start ("xxl-agent", file, "xxl-agent.cfg", log_level, "agent/log_level",
                        &config, &level))
        return 2;
    xxl_agent_config_t settings;
    xxl_agent_config_defaults (&settings);
    settings.app = s_value (app, config, "agent/app", NULL);
    settings.schedulers = s_value (scheduler, config, "agent/scheduler", settings.schedulers);
    settings.address = s_value (address, config, "agent/address", NULL);
    settings.plugins = s_value (plugins, config, "agent/plugins", settings.plugins);
    settings.logdir = s_value (logdir, config, "agent/logdir", settings.logdir);
    settings.access_token = s_value (token, config, "agent/access_token", "");
    settings.cert = s_value (cert, config, "agent/cert", NULL);
    settings.scheduler_key = s_value (scheduler_key, config, "agent/scheduler_key", NULL);
    settings.runner = s_value (NULL, config, "agent/runner", NULL);
    settings.tags = s_tags (config);
    settings.allow_glue = s_int (no_glue, config, "agent/allow_glue", 1);
    settings.in_process = s_int (in_process, config, "agent/in_process", 0);
    settings.beat_s = s_int (NULL, config, "agent/beat", settings.beat_s);
    settings.callback_timeout_ms = s_int (NULL, config, "agent/callback_timeout",
                                          settings.callback_timeout_ms);
    settings.run_batch = s_int (NULL, config, "agent/run_batch", settings.run_batch);
    settings.run_lease_s = s_int (NULL, config, "agent/run_lease", settings.run_lease_s);
    settings.log_retention_days = s_int (NULL, config, "agent/log_retention_days",
                                         settings.log_retention_days);
    settings.log_pack = s_int (NULL, config, "agent/log_pack", settings.log_pack);
    settings.threads_max = s_int (NULL, config, "agent/threads_max", 0);
    settings.waiting_max = s_int_from (NULL, config, "agent/waiting_max", 0, -1);
    settings.idle_reap_s = s_int_from (NULL, config, "agent/idle_reap_s", settings.idle_reap_s, 1);
    //  agent/drain_s; agent/stop_wait (ms) is its deprecated alias
    if (config && zconfig_locate (config, "agent/stop_wait")
    &&  !zconfig_locate (config, "agent/drain_s")) {
        settings.drain_ms = s_int (NULL, config, "agent/stop_wait", settings.drain_ms);
        fprintf (stderr, "xxl-agent: agent/stop_wait is deprecated; use agent/drain_s"
                 " (seconds)\n");
    }
    else {
        int drain_s = s_int (NULL, config, "agent/drain_s", settings.drain_ms / 1000);
        settings.drain_ms = (drain_s < 2000000? drain_s: 2000000) * 1000;
    }
    settings.interrupts = &s_interrupts;
    if (!settings.app || !*settings.app) {
        fprintf (stderr, "xxl-agent: --app NAME is required\n");
        s_usage (stderr);
        zconfig_destroy (&config);
        return 2;
    }
    bool has_cert = settings.cert && *settings.cert;
    bool has_key = settings.scheduler_key && *settings.scheduler_key;
    if (has_cert != has_key) {
        fprintf (stderr, "xxl-agent: %s needs %s too (both, or neither for plain text)\n",
                 has_cert? "--cert": "--scheduler-key", has_cert? "--scheduler-key": "--cert");
        zconfig_destroy (&config);
        return 2;
    }
    //  Each bad value named with its key and the range it must be in
    const char *bad = NULL;
    char why [160];
    if (settings.beat_s < 1) {
        bad = "agent/beat";
        snprintf (why, sizeof why, "%d: at least 1", settings.beat_s);
    }
    else
    if (settings.log_retention_days < 3) {
        bad = "agent/log_retention_days";
        snprintf (why, sizeof why, "%d: at least 3", settings.log_retention_days);
    }
    else
    if ((settings.run_lease_s != 0 && settings.run_lease_s < 2 * settings.beat_s)
    ||  settings.run_lease_s > 86400) {
        bad = "agent/run_lease";
        snprintf (why, sizeof why, "%d: 0 (off) or from two beats (%d) to 86400 s",
                  settings.run_lease_s, 2 * settings.beat_s);
    }
    else
    if (settings.idle_reap_s < 1 || settings.idle_reap_s > 86400) {
        bad = "agent/idle_reap_s";
        snprintf (why, sizeof why, "%d: from 1 to 86400 s", settings.idle_reap_s);
    }
    if (bad) {
        fprintf (stderr, "xxl-agent: %s is %s\n", bad, why);
        zconfig_destroy (&config);
        return 2;
    }
    if (xxl_log_open ("xxl-agent", level,
                      streq (s_value (use_syslog, config, "agent/syslog", "0"), "1"))) {
        fprintf (stderr, "xxl-agent: cannot set up its log\n");
        zconfig_destroy (&config);
        return 1;
    }
    //  No keys, no token, schedulers on this host: the local agent key
    char local_cert [256], local_server [256];
    if (xxl_local_agent_key (s_value (NULL, config, "agent/state_dir", NULL), has_cert,
                             *settings.access_token != 0, settings.schedulers, local_cert,
                             sizeof local_cert, local_server, sizeof local_server)) {
        settings.cert = local_cert;
        settings.scheduler_key = local_server;
    }

    zactor_t *agent = zactor_new (xxl_agent_actor, &settings);
    if (!agent || settings.status) {
        zactor_destroy (&agent);
        zconfig_destroy (&config);
        return 1;
    }
    zpoller_t *poller = zpoller_new (agent, NULL);
    bool failed = false;
    while (!zsys_interrupted) {
        if (zpoller_wait (poller, 500) == agent) {
            failed = true;
            break;
        }
    }
    zpoller_destroy (&poller);
    if (!failed) {
        //  The clean stop: the actor drains its runs (a second signal
        //  cuts that short, through s_interrupts), then ends with a
        //  signal on its pipe.  Waited for here, not in zactor_destroy,
        //  whose wait a second signal would interrupt (EINTR), leaving
        //  the actor running while the process exits.
        zstr_send (agent, "$TERM");
        zmq_pollitem_t item = { zsock_resolve (agent), 0, ZMQ_POLLIN, 0 };
        while (zmq_poll (&item, 1, -1) < 0 && zmq_errno () == EINTR)
            ;
    }
    zactor_destroy (&agent);
    zconfig_destroy (&config);
    zsys_info ("xxl-agent stopped");
    return failed? 1: 0;
}
