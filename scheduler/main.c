/*  xxl-scheduler -- command line and config file; all logic is in the engine.
*/

#include "xxl_server.h"
#include "xxl_http.h"
#include "xxl_store.h"

#include "../sdk/src/xxl_conf.h"
#include "../sdk/src/xxl_local.h"
#include "../sdk/src/xxl_log.h"

#include <getopt.h>

static void
s_usage (FILE *out)
{
    fprintf (out,
        "usage: xxl-scheduler [-c FILE] [--db PATH|URL] [--api EP] [--agents EP] [--plugins DIR]\n"
        "\n"
        "  -c, --config FILE   ZPL config file (see xxl-scheduler.cfg(5)); without -c,\n"
        "                      %s/xxl-scheduler.cfg if it exists\n"
        "  --db PATH|URL       SQLite database file, or a postgresql:// URL (scheduler/db;\n"
        "                      default STATE/xxl.db, STATE the state folder below)\n"
        "  --api EP            client api endpoint to bind       (scheduler/api)\n"
        "  --agents EP         agents endpoint to bind           (scheduler/agents)\n"
        "  --plugins DIR       router plugins folder             (scheduler/plugins)\n"
        "  --alarms DIR        alarm plugins folder              (scheduler/alarm/plugins)\n"
        "  --token TOKEN       access token clients and agents must send (scheduler/access_token)\n"
        "  --cert FILE         this scheduler's secret certificate: CURVE on both sockets\n"
        "                                                        (scheduler/cert)\n"
        "  --keys DIR          public certificates of the clients and agents let in\n"
        "                                                        (scheduler/keys)\n"
        "  --insecure          allow a non-loopback endpoint without --cert (scheduler/insecure)\n"
        "  --open              no keys made when none are given: every local process is\n"
        "                      admin and may register as an agent (scheduler/open; a\n"
        "                      warning at every start).  Without it, a scheduler given\n"
        "                      no --cert, --keys or --token makes local keys in its\n"
        "                      state folder and turns CURVE on (docs/operations.md)\n"
        "  --http EP           HTTP (REST api, console, /metrics) HOST:PORT, or none\n"
        "                      (default 127.0.0.1:8080)      (scheduler/http/endpoint)\n"
        "  --node NAME         this scheduler's name among those sharing the store\n"
        "                      (default: host name and api endpoint)   (scheduler/ha/node)\n"
        "  --ready-file FILE   write the bound endpoints here once serving (scheduler/ready_file)\n"
        "  --syslog            log to syslog instead of stderr   (scheduler/syslog)\n"
        "  --log-level LEVEL   " XXL_LOG_LEVELS " (default info)\n"
        "                                                        (scheduler/log_level)\n"
        "  -h, --help          this text\n"
        "  --version           the version\n"
        "\n"
        "State folder: scheduler/state_dir, else $XXL_STATE_DIR, else systemd's\n"
        "$STATE_DIRECTORY, else /var/lib/xxl for root and ~/.local/state/xxl\n"
        "($XDG_STATE_HOME/xxl) for other users.\n"
        "Flags override config keys; the config folder is $XXL_CONFIG_DIR when set.\n"
        "Stops cleanly on SIGTERM or SIGINT.\n", xxl_conf_dir ());
}

#define s_value xxl_conf_str

//  A number flag or key; exits with status 2 and the reason when invalid
static int
s_int (const char *flag, zconfig_t *config, const char *path, int dflt)
{
    int value;
    char err [256];
    if (xxl_conf_int (flag, config, path, dflt, 0, 100000000, &value, err, sizeof err)) {
        fprintf (stderr, "xxl-scheduler: %s\n", err);
        exit (2);
    }
    return value;
}

int
main (int argc, char *argv [])
{
    const char *file = NULL, *db = NULL, *api = NULL, *agents = NULL, *plugins = NULL;
    const char *alarms = NULL, *token = NULL, *ready = NULL, *use_syslog = NULL;
    const char *cert = NULL, *keys = NULL, *insecure = NULL, *node = NULL, *http = NULL;
    const char *open_flag = NULL;
    const char *log_level = NULL;
    static struct option options [] = {
        { "config", required_argument, 0, 'c' },
        { "db", required_argument, 0, 'd' },
        { "api", required_argument, 0, 'a' },
        { "agents", required_argument, 0, 'g' },
        { "plugins", required_argument, 0, 'p' },
        { "token", required_argument, 0, 't' },
        { "alarms", required_argument, 0, 'A' },
        { "ready-file", required_argument, 0, 'r' },
        { "syslog", no_argument, 0, 's' },
        { "cert", required_argument, 0, 'C' },
        { "keys", required_argument, 0, 'K' },
        { "insecure", no_argument, 0, 'I' },
        { "open", no_argument, 0, 'O' },
        { "node", required_argument, 0, 'N' },
        { "http", required_argument, 0, 'H' },
        { "log-level", required_argument, 0, 'L' },
        { "help", no_argument, 0, 'h' },
        { "version", no_argument, 0, 'V' },
        { 0, 0, 0, 0 }
    };
    int opt;
    while ((opt = getopt_long (argc, argv, "c:h", options, NULL)) != -1) {
        switch (opt) {
            case 'c': file = optarg; break;
            case 'd': db = optarg; break;
            case 'a': api = optarg; break;
            case 'g': agents = optarg; break;
            case 'p': plugins = optarg; break;
            case 't': token = optarg; break;
            case 'A': alarms = optarg; break;
            case 'r': ready = optarg; break;
            case 's': use_syslog = "1"; break;
            case 'C': cert = optarg; break;
            case 'K': keys = optarg; break;
            case 'I': insecure = "1"; break;
            case 'O': open_flag = "1"; break;
            case 'N': node = optarg; break;
            case 'H': http = optarg; break;
            case 'L': log_level = optarg; break;
            case 'h': s_usage (stdout); return 0;
            case 'V': printf ("xxl-scheduler %s\n", PACKAGE_VERSION); return 0;
            default: s_usage (stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf (stderr, "xxl-scheduler: unexpected argument '%s'\n", argv [optind]);
        s_usage (stderr);
        return 2;
    }
    zsys_init ();
    zsys_set_logident ("xxl-scheduler");
    zconfig_t *config = NULL;
    int level;
    if (xxl_conf_start ("xxl-scheduler", file, "xxl-scheduler.cfg", log_level, "scheduler/log_level",
                        &config, &level))
        return 2;
    xxl_server_config_t settings;
    xxl_server_config_defaults (&settings);
    settings.db = s_value (db, config, "scheduler/db", settings.db);
    settings.api = s_value (api, config, "scheduler/api", settings.api);
    settings.agents = s_value (agents, config, "scheduler/agents", settings.agents);
    settings.plugins = s_value (plugins, config, "scheduler/plugins", settings.plugins);
    settings.alarm_plugins = s_value (alarms, config, "scheduler/alarm/plugins",
                                      settings.alarm_plugins);
    settings.file = config;
    settings.access_token = s_value (token, config, "scheduler/access_token", "");
    settings.ready_file = s_value (ready, config, "scheduler/ready_file", NULL);
    settings.cert = s_value (cert, config, "scheduler/cert", NULL);
    settings.keys = s_value (keys, config, "scheduler/keys", NULL);
    settings.insecure = s_int (insecure, config, "scheduler/insecure", 0) != 0;
    settings.keys_check_ms = s_int (NULL, config, "scheduler/keys_check", settings.keys_check_ms);
    settings.admin_address = s_value (NULL, config, "scheduler/admin_address", NULL);
    settings.beat_s = s_int (NULL, config, "scheduler/registry/beat", settings.beat_s);
    settings.dead_s = s_int (NULL, config, "scheduler/registry/dead", settings.dead_s);
    settings.registry_limit = s_int (NULL, config, "scheduler/registry/agents",
                                     settings.registry_limit);
    settings.run_timeout_ms = s_int (NULL, config, "scheduler/run_timeout", settings.run_timeout_ms);
    settings.request_timeout_ms = s_int (NULL, config, "scheduler/request_timeout",
                                         settings.request_timeout_ms);
    settings.batch = s_int (NULL, config, "scheduler/batch", settings.batch);
    settings.fast_pool = s_int (NULL, config, "scheduler/pools/fast", settings.fast_pool);
    settings.slow_pool = s_int (NULL, config, "scheduler/pools/slow", settings.slow_pool);
    settings.pool_queue = s_int (NULL, config, "scheduler/pools/queue", settings.pool_queue);
    settings.probe_timeout_ms = s_int (NULL, config, "scheduler/pools/probe_timeout",
                                       settings.probe_timeout_ms);
    settings.slow_ms = s_int (NULL, config, "scheduler/pools/slow_ms", settings.slow_ms);
    settings.slow_count = s_int (NULL, config, "scheduler/pools/slow_count", settings.slow_count);
    settings.preread_ms = s_int (NULL, config, "scheduler/planner/preread", settings.preread_ms);
    settings.scan_ms = s_int (NULL, config, "scheduler/planner/scan", settings.scan_ms);
    settings.fail_check_ms = s_int (NULL, config, "scheduler/monitor/fail_check", settings.fail_check_ms);
    settings.lost_check_ms = s_int (NULL, config, "scheduler/monitor/lost_check", settings.lost_check_ms);
    settings.lost_after_ms = 1000 * s_int (NULL, config, "scheduler/monitor/lost_after",
                                           settings.lost_after_ms / 1000);
    settings.retention_check_ms = s_int (NULL, config, "scheduler/monitor/retention_check",
                                         settings.retention_check_ms);
    settings.report_ms = s_int (NULL, config, "scheduler/monitor/report", settings.report_ms);
    settings.retention_days = s_int (NULL, config, "scheduler/log/retention_days",
                                     settings.retention_days);
    settings.audit_retention_days = s_int (NULL, config, "scheduler/audit_retention_days",
                                           settings.audit_retention_days);
    settings.keep_last = s_int (NULL, config, "scheduler/log/keep_last", settings.keep_last);
    settings.alarm_every_failure = s_int (NULL, config, "scheduler/alarm/every_failure", 0);
    settings.stop_wait_ms = s_int (NULL, config, "scheduler/stop_wait", settings.stop_wait_ms);
    settings.wal_size_mb = s_int (NULL, config, "scheduler/wal_size", settings.wal_size_mb);
    settings.warmup_ms = s_int (NULL, config, "scheduler/planner/warmup", settings.warmup_ms);
    settings.recovery_wait_ms = s_int (NULL, config, "scheduler/planner/recovery_wait",
                                       settings.recovery_wait_ms);
    //  (DESIGN names them ha/...; scheduler/ha/... is read first)
    settings.node = s_value (node, config, "scheduler/ha/node",
                             s_value (NULL, config, "ha/node", NULL));
    settings.lease_ms = s_int (NULL, config, "scheduler/ha/lease_ms",
                               s_int (NULL, config, "ha/lease_ms", settings.lease_ms));
    //  HTTP: scheduler/http/... (DESIGN's scheduler/http: the endpoint
    //  may also be given as that key's own value)
    const char *http_section = s_value (NULL, config, "scheduler/http", "");
    settings.http.endpoint = s_value (http, config, "scheduler/http/endpoint",
                                      *http_section? http_section: settings.http.endpoint);
    settings.http.chosen = settings.http.endpoint
                        && settings.http.endpoint != xxl_server_http_default ();
    settings.http.cert = s_value (NULL, config, "scheduler/http/cert", NULL);
    settings.http.key = s_value (NULL, config, "scheduler/http/key", NULL);
    settings.http.console = s_value (NULL, config, "scheduler/http/console",
                                     settings.http.console);
    settings.http.session_idle_s = s_int (NULL, config, "scheduler/http/session_idle_s",
                                          settings.http.session_idle_s);
    settings.http.max_body = s_int (NULL, config, "scheduler/http/max_body",
                                    settings.http.max_body);
    settings.http.login_burst = s_int (NULL, config, "scheduler/http/login_burst",
                                       settings.http.login_burst);
    settings.http.login_interval_s = s_int (NULL, config, "scheduler/http/login_interval_s",
                                            settings.http.login_interval_s);
    settings.http.login_slots = s_int (NULL, config, "scheduler/http/login_slots",
                                       settings.http.login_slots);
    settings.http.per_address = s_int (NULL, config, "scheduler/http/per_address",
                                       settings.http.per_address);
    settings.http.hosts = s_value (NULL, config, "scheduler/http/hosts", NULL);
    settings.http.request_timeout_s = s_int (NULL, config, "scheduler/http/request_timeout_s",
                                             settings.http.request_timeout_s);
    settings.http.health_slots = s_int (NULL, config, "scheduler/http/health_slots",
                                        settings.http.health_slots);
    settings.http.metrics_jobs = s_int (NULL, config, "scheduler/http/metrics_jobs",
                                        settings.http.metrics_jobs);
    settings.http.metrics_agents = s_int (NULL, config, "scheduler/http/metrics_agents",
                                          settings.http.metrics_agents);
    if (settings.http.session_idle_s < 60 || settings.http.max_body < 1024
    ||  settings.http.max_body > 4 * 1024 * 1024
    ||  settings.http.login_burst < 0 || settings.http.login_burst > 1000
    ||  settings.http.login_interval_s < 1 || settings.http.login_interval_s > 86400
    ||  settings.http.login_slots < 64 || settings.http.login_slots > 1048576
    ||  settings.http.per_address < 0 || settings.http.per_address > XXL_HTTP_CONNECTIONS
    ||  settings.http.request_timeout_s < 1 || settings.http.request_timeout_s > 3600
    ||  settings.http.health_slots < 0 || settings.http.health_slots > 64
    ||  settings.http.metrics_jobs < 0 || settings.http.metrics_jobs > 100000
    ||  settings.http.metrics_agents < 0 || settings.http.metrics_agents > 100000) {
        fprintf (stderr, "xxl-scheduler: need http/session_idle_s >= 60, http/max_body"
                         " 1024-4194304, http/login_burst 0-1000, http/login_interval_s"
                         " 1-86400, http/login_slots 64-1048576, http/per_address"
                         " 0-%d, http/request_timeout_s 1-3600, http/health_slots 0-64,"
                         " http/metrics_jobs and http/metrics_agents 0-100000\n",
                 XXL_HTTP_CONNECTIONS);
        zconfig_destroy (&config);
        return 2;
    }
    if (settings.beat_s < 1 || settings.dead_s < settings.beat_s || settings.batch < 1
    ||  settings.registry_limit < 0
    ||  settings.preread_ms < 100 || settings.scan_ms < 10
    ||  settings.fail_check_ms < 10 || settings.retention_check_ms < 10 || settings.lost_check_ms < 10 || settings.report_ms < 10
    ||  settings.fast_pool < 1 || settings.slow_pool < 1 || settings.probe_timeout_ms < 1
    ||  settings.slow_ms < 0 || settings.slow_count < 0 || settings.wal_size_mb < 1
    ||  settings.wal_size_mb > XXL_STORE_WAL_MIB_MAX
    ||  settings.lease_ms < 300 || settings.lease_ms > 600000
    ||  (settings.node && (!*settings.node || strlen (settings.node) >= XXL_STORE_NODE_MAX))) {
        fprintf (stderr, "xxl-scheduler: need registry/beat >= 1, registry/dead >= beat,"
                         " registry/agents >= 0, batch >= 1,"
                         " pools/fast, pools/slow and pools/probe_timeout >= 1, pools/slow_ms and slow_count >= 0,"
                         " planner/preread >= 100,"
                         " planner/scan >= 10, wal_size 1-65536, ha/lease_ms 300-600000,"
                         " ha/node 1-127 bytes\n");
        zconfig_destroy (&config);
        return 2;
    }
    if (xxl_log_open ("xxl-scheduler", level,
                      streq (s_value (use_syslog, config, "scheduler/syslog", "0"), "1"))) {
        fprintf (stderr, "xxl-scheduler: cannot set up its log\n");
        zconfig_destroy (&config);
        return 1;
    }
    //  The state folder and, with no security given and no --open, the
    //  local keys (xxl_local.h)
    bool open = s_int (open_flag, config, "scheduler/open", 0) != 0;
    bool local = !open && !(settings.cert && *settings.cert) && !(settings.keys && *settings.keys)
              && !*settings.access_token;
    bool db_given = s_value (db, config, "scheduler/db", NULL) != NULL;
    char state [XXL_LOCAL_DIR_MAX + 1], db_path [XXL_LOCAL_DIR_MAX + 16], why [512] = "";
    char local_cert [256], local_keys [256];
    int made = 0;
    if ((local || !db_given)
    &&  (xxl_local_state_dir (s_value (NULL, config, "scheduler/state_dir", NULL), state,
                              sizeof state, why, sizeof why)
    ||   (xxl_local_mkdirs (state, 0700) && snprintf (why, sizeof why, "cannot make the"
                  " state folder %s: %s", state, strerror (errno)))
    ||   (local && (made = xxl_local_keys_make (state, s_value (NULL, config,
                    "scheduler/agent_group", NULL), local_cert, sizeof local_cert, local_keys,
                    sizeof local_keys, why, sizeof why)) < 0))) {
        zsys_error ("%s", why);
        zconfig_destroy (&config);
        return 1;
    }
    if (!db_given) {
        snprintf (db_path, sizeof db_path, "%s/xxl.db", state);
        settings.db = db_path;
    }
    if (local) {
        settings.cert = local_cert;
        settings.keys = local_keys;
        zsys_info ("local keys %s in %s/%s: xxl-ctl and agents on this host find them"
                   " (docs/operations.md, Security)", made? "made": "read", state, XXL_LOCAL_KEYS);
    }
    else
    if (open && !(settings.cert && *settings.cert) && !*settings.access_token)
        zsys_warning ("--open: no keys and no token: every process on this host is admin on %s"
                      " and may register as an agent on %s (docs/operations.md, Security)",
                      settings.api, settings.agents);

    zactor_t *server = zactor_new (xxl_server_actor, &settings);
    if (!server) {
        zconfig_destroy (&config);
        return 1;
    }
    //  zactor_new returns after the actor's first signal
    if (settings.status) {
        zactor_destroy (&server);
        zconfig_destroy (&config);
        return 1;
    }
    //  Wait for SIGTERM/SIGINT (czmq's handler sets zsys_interrupted)
    zpoller_t *poller = zpoller_new (server, NULL);
    bool failed = false;
    while (!zsys_interrupted) {
        void *which = zpoller_wait (poller, 500);
        if (which == server) {
            failed = true;              //  the actor ended on its own
            break;
        }
    }
    zpoller_destroy (&poller);
    zactor_destroy (&server);
    zconfig_destroy (&config);
    zsys_info ("xxl-scheduler stopped");
    return failed? 1: 0;
}
