/*  xxl-bridge -- command line and config file; all logic is in xxl_bridge.
*/

#include "xxl_bridge.h"

#include "../sdk/src/xxl_conf.h"
#include "../sdk/src/xxl_local.h"
#include "../sdk/src/xxl_log.h"
#include "../sdk/src/xxl_transport.h"

#include <getopt.h>
#include <sys/resource.h>

static void
s_usage (FILE *out)
{
    fprintf (out,
        "usage: xxl-bridge [-c FILE] --scheduler EP[,EP...] --listen HOST:PORT\n"
        "                  [--path /xxl-job-admin] [--access-token-file F]\n"
        "                  [--executors CIDR,...] [--cert F --scheduler-key F] [--logdir DIR]\n"
        "\n"
        "XXL-JOB executors (xxl-job-core 2.x and 3.x, and the Go, Python and Node\n"
        "ones speaking its HTTP protocol) join xxl unchanged: point their\n"
        "xxl.job.admin.addresses at http://HOST:PORT/xxl-job-admin.  Each live\n"
        "executor is an agent address of its app, named by its URL.\n"
        "\n"
        "  -c, --config FILE        ZPL config file (see conf/xxl-bridge.cfg); without -c,\n"
        "                           %s/xxl-bridge.cfg if it exists\n"
        "  --scheduler EPS          scheduler agents endpoint(s), comma-separated\n"
        "                                                          (bridge/scheduler)\n"
        "  --listen HOST:PORT       where the executors call (default 127.0.0.1:8080)\n"
        "                                                          (bridge/listen)\n"
        "  --path PATH              the admin path in their URL (default /xxl-job-admin)\n"
        "                                                          (bridge/path)\n"
        "  --access-token-file F    the access token, both to executors and schedulers\n"
        "                           (bridge/access_token_file; bridge/access_token)\n"
        "  --executors CIDRS        networks whose executors may register and be called\n"
        "                           (default 127.0.0.0/8,::1/128)  (bridge/executors)\n"
        "  --cert FILE              the bridge's secret certificate (an agent key with\n"
        "                           the bridged apps)               (bridge/cert)\n"
        "  --scheduler-key FILE     the scheduler's public certificate\n"
        "                                                          (bridge/scheduler_key)\n"
        "  --logdir DIR             spool, journal and routes (default\n"
        "                           /var/lib/xxl-bridge)            (bridge/logdir)\n"
        "  --tls-cert F --tls-key F the admin's HTTPS certificate and key (PEM): it may\n"
        "                           then listen anywhere   (bridge/tls_cert, bridge/tls_key)\n"
        "  --insecure               listen off loopback in plain text (bridge/insecure)\n"
        "  --ready-file F           write port=N to F once listening\n"
        "  --syslog                 log to syslog instead of stderr (bridge/syslog)\n"

        "  --log-level LEVEL        " XXL_LOG_LEVELS " (default info)\n"
        "                                                          (bridge/log_level)\n"
        "  -h, --help               this text\n"
        "  --version                the version\n"
        "\n"
        "Flags override config keys; the config folder is $XXL_CONFIG_DIR when set.\n"
        "With neither --cert nor a token and schedulers on this host, the bridge\n"
        "uses the local agent key of the scheduler on this host if it can read it\n"
        "(bridge/state_dir, else $XXL_STATE_DIR, else the scheduler's defaults).\n"
        "Tuning keys (bridge/...): beat (30 s),\n"
        "expire (90 s), run_timeout (8000 ms), probe_timeout (900 ms),\n"
        "request_timeout (4000 ms), executors_max (1000), parallel (64),\n"
        "queued (10000), lost_check (60 s), admin_timeout (30 s).\n", xxl_conf_dir ());
}

static int
s_int (zconfig_t *config, const char *path, int dflt, int min)
{
    int value;
    char err [256];
    if (xxl_conf_int (NULL, config, path, dflt, min, 100000000, &value, err, sizeof err)) {
        fprintf (stderr, "xxl-bridge: %s\n", err);
        exit (2);
    }
    return value;
}

//  The token in file (its first line)
static char *
s_token_file (const char *file)
{
    FILE *in = fopen (file, "r");
    if (!in)
        return NULL;
    char line [1100] = "";
    if (!fgets (line, sizeof line, in))
        line [0] = 0;
    fclose (in);
    line [strcspn (line, "\r\n")] = 0;
    return strdup (line);
}

int
main (int argc, char *argv [])
{
    const char *file = NULL, *scheduler = NULL, *listen = NULL, *path = NULL;
    const char *token_file = NULL, *executors = NULL, *cert = NULL, *scheduler_key = NULL;
    const char *logdir = NULL, *insecure = NULL, *ready = NULL, *use_syslog = NULL;
    const char *tls_cert = NULL, *tls_key = NULL, *log_level = NULL;
    static struct option options [] = {
        { "config", required_argument, 0, 'c' },
        { "scheduler", required_argument, 0, 's' },
        { "listen", required_argument, 0, 'L' },
        { "path", required_argument, 0, 'P' },
        { "access-token-file", required_argument, 0, 't' },
        { "executors", required_argument, 0, 'e' },
        { "cert", required_argument, 0, 'k' },
        { "scheduler-key", required_argument, 0, 'K' },
        { "logdir", required_argument, 0, 'l' },
        { "insecure", no_argument, 0, 'I' },
        { "tls-cert", required_argument, 0, 'T' },
        { "tls-key", required_argument, 0, 'Y' },
        { "ready-file", required_argument, 0, 'r' },
        { "syslog", no_argument, 0, 'S' },
        { "log-level", required_argument, 0, 'G' },
        { "help", no_argument, 0, 'h' },
        { "version", no_argument, 0, 'V' },
        { 0, 0, 0, 0 }
    };
    int opt;
    while ((opt = getopt_long (argc, argv, "c:h", options, NULL)) != -1) {
        switch (opt) {
            case 'c': file = optarg; break;
            case 's': scheduler = optarg; break;
            case 'L': listen = optarg; break;
            case 'P': path = optarg; break;
            case 't': token_file = optarg; break;
            case 'e': executors = optarg; break;
            case 'k': cert = optarg; break;
            case 'K': scheduler_key = optarg; break;
            case 'l': logdir = optarg; break;
            case 'I': insecure = "1"; break;
            case 'T': tls_cert = optarg; break;
            case 'Y': tls_key = optarg; break;
            case 'r': ready = optarg; break;
            case 'S': use_syslog = "1"; break;
            case 'G': log_level = optarg; break;
            case 'h': s_usage (stdout); return 0;
            case 'V': printf ("xxl-bridge %s\n", PACKAGE_VERSION); return 0;
            default: s_usage (stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf (stderr, "xxl-bridge: unexpected argument '%s'\n", argv [optind]);
        return 2;
    }
    zsys_init ();
    zsys_set_logident ("xxl-bridge");
    zconfig_t *config = NULL;
    int level;
    if (xxl_conf_start ("xxl-bridge", file, "xxl-bridge.cfg", log_level, "bridge/log_level",
                        &config, &level))
        return 2;
    xxl_bridge_config_t settings;
    xxl_bridge_config_defaults (&settings);
    settings.schedulers = xxl_conf_str (scheduler, config, "bridge/scheduler", settings.schedulers);
    settings.listen = xxl_conf_str (listen, config, "bridge/listen", settings.listen);
    settings.path = xxl_conf_str (path, config, "bridge/path", settings.path);
    settings.executors = xxl_conf_str (executors, config, "bridge/executors", settings.executors);
    settings.cert = xxl_conf_str (cert, config, "bridge/cert", NULL);
    settings.scheduler_key = xxl_conf_str (scheduler_key, config, "bridge/scheduler_key", NULL);
    settings.logdir = xxl_conf_str (logdir, config, "bridge/logdir", settings.logdir);
    settings.ready_file = ready;
    settings.tls_cert = xxl_conf_str (tls_cert, config, "bridge/tls_cert", NULL);
    settings.tls_key = xxl_conf_str (tls_key, config, "bridge/tls_key", NULL);
    settings.insecure = streq (xxl_conf_str (insecure, config, "bridge/insecure", "0"), "1");
    settings.beat_s = s_int (config, "bridge/beat", settings.beat_s, 1);
    settings.expire_s = s_int (config, "bridge/expire", settings.expire_s, 1);
    settings.run_timeout_ms = s_int (config, "bridge/run_timeout", settings.run_timeout_ms, 100);
    settings.probe_timeout_ms = s_int (config, "bridge/probe_timeout", settings.probe_timeout_ms, 100);
    settings.request_timeout_ms = s_int (config, "bridge/request_timeout",
                                         settings.request_timeout_ms, 100);
    settings.executors_max = s_int (config, "bridge/executors_max", settings.executors_max, 1);
    settings.parallel = s_int (config, "bridge/parallel", settings.parallel, 1);
    settings.queued = s_int (config, "bridge/queued", settings.queued, 1);
    settings.lost_check_s = s_int (config, "bridge/lost_check", settings.lost_check_s, 0);
    settings.admin_timeout_s = s_int (config, "bridge/admin_timeout", settings.admin_timeout_s, 1);
    char *token = NULL;
    token_file = xxl_conf_str (token_file, config, "bridge/access_token_file", NULL);
    if (token_file && *token_file) {
        if (!(token = s_token_file (token_file))) {
            fprintf (stderr, "xxl-bridge: cannot read the access token file %s\n", token_file);
            zconfig_destroy (&config);
            return 2;
        }
        settings.token = token;
    }
    else
        settings.token = xxl_conf_str (NULL, config, "bridge/access_token", "");
    bool has_cert = settings.cert && *settings.cert;
    bool has_key = settings.scheduler_key && *settings.scheduler_key;
    if (has_cert != has_key) {
        fprintf (stderr, "xxl-bridge: %s needs %s too (both, or neither for plain text)\n",
                 has_cert? "--cert": "--scheduler-key", has_cert? "--scheduler-key": "--cert");
        zconfig_destroy (&config);
        free (token);
        return 2;
    }
    if (xxl_log_open ("xxl-bridge", level,
                      streq (xxl_conf_str (use_syslog, config, "bridge/syslog", "0"), "1"))) {
        fprintf (stderr, "xxl-bridge: cannot set up its log\n");
        zconfig_destroy (&config);
        free (token);
        return 1;
    }
    //  No keys, no token, schedulers on this host: the local agent key
    char local_cert [256], local_server [256];
    if (xxl_local_agent_key (xxl_conf_str (NULL, config, "bridge/state_dir", NULL), has_cert,
                             *settings.token != 0, settings.schedulers, local_cert,
                             sizeof local_cert, local_server, sizeof local_server)) {
        settings.cert = local_cert;
        settings.scheduler_key = local_server;
    }
    //  Each executor costs a few descriptors per scheduler (its DEALER's
    //  signaler and connection, its monitor): the soft limit goes up to
    //  the hard one
    struct rlimit files;
    if (getrlimit (RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
        files.rlim_cur = files.rlim_max;
        setrlimit (RLIMIT_NOFILE, &files);
    }
    int rc = xxl_bridge_run (&settings);
    zconfig_destroy (&config);
    free (token);
    zsys_info ("xxl-bridge stopped");
    return rc;
}
