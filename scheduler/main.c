/*  xxl-scheduler -- command line and config file; all logic is in the engine.
*/

#include "xxl_server.h"
#include "xxl_http.h"
#include "xxl_store.h"

#include "../sdk/src/xxl_conf.h"
#include "../sdk/src/xxl_local.h"
#include "../sdk/src/xxl_log.h"

#include <getopt.h>
#include <stddef.h>

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

//  The integer settings: each key's field of xxl_server_config_t and its
//  range, written once (a value outside it, or not a number, stops the
//  start with status 2 and the key's name).  A field keeps its default
//  when its key is absent.  scale: the key's unit in the field's (the
//  field holds key * scale)
typedef struct {
    const char *key;
    size_t offset;
    int min, max;
    int scale;
} s_int_key_t;

#define S_INT(key, field, min, max) \
    { key, offsetof (xxl_server_config_t, field), min, max, 1 }
#define S_BIG 100000000
static const s_int_key_t s_int_keys [] = {
    S_INT ("scheduler/keys_check", keys_check_ms, 10, S_BIG),
    S_INT ("scheduler/registry/beat", beat_s, 1, 86400),
    S_INT ("scheduler/registry/dead", dead_s, 1, S_BIG),
    S_INT ("scheduler/registry/agents", registry_limit, 0, S_BIG),
    S_INT ("scheduler/run_timeout", run_timeout_ms, 0, S_BIG),
    S_INT ("scheduler/request_timeout", request_timeout_ms, 0, S_BIG),
    S_INT ("scheduler/batch", batch, 1, S_BIG),
    S_INT ("scheduler/pools/fast", fast_pool, 1, S_BIG),
    S_INT ("scheduler/pools/slow", slow_pool, 1, S_BIG),
    S_INT ("scheduler/pools/queue", pool_queue, 0, S_BIG),
    S_INT ("scheduler/pools/probe_timeout", probe_timeout_ms, 1, S_BIG),
    S_INT ("scheduler/pools/slow_ms", slow_ms, 0, S_BIG),
    S_INT ("scheduler/pools/slow_count", slow_count, 0, S_BIG),
    S_INT ("scheduler/planner/preread", preread_ms, 100, S_BIG),
    S_INT ("scheduler/planner/ahead", ahead_ms, 100, S_BIG),
    S_INT ("scheduler/planner/scan", scan_ms, 10, S_BIG),
    S_INT ("scheduler/planner/warmup", warmup_ms, 0, S_BIG),
    S_INT ("scheduler/planner/recovery_wait", recovery_wait_ms, 0, S_BIG),
    S_INT ("scheduler/monitor/fail_check", fail_check_ms, 10, S_BIG),
    S_INT ("scheduler/monitor/lost_check", lost_check_ms, 10, S_BIG),
    { "scheduler/monitor/lost_after", offsetof (xxl_server_config_t, lost_after_ms),
      0, 2000000, 1000 },
    S_INT ("scheduler/monitor/retention_check", retention_check_ms, 10, S_BIG),
    S_INT ("scheduler/monitor/report", report_ms, 10, S_BIG),
    S_INT ("scheduler/log/retention_days", retention_days, 0, S_BIG),
    S_INT ("scheduler/log/keep_last", keep_last, 0, S_BIG),
    S_INT ("scheduler/audit_retention_days", audit_retention_days, 0, S_BIG),
    S_INT ("scheduler/alarm/every_failure", alarm_every_failure, 0, 1),
    S_INT ("scheduler/stop_wait", stop_wait_ms, 0, S_BIG),
    S_INT ("scheduler/wal_size", wal_size_mb, 1, XXL_STORE_WAL_MIB_MAX),
    S_INT ("ha/lease_ms", lease_ms, 300, 600000),         //  (DESIGN's name; then
    S_INT ("scheduler/ha/lease_ms", lease_ms, 300, 600000),   //  this one, if given)
    S_INT ("scheduler/http/session_idle_s", http.session_idle_s, 60, S_BIG),
    S_INT ("scheduler/http/remember_s", http.remember_s, 0, S_BIG),
    S_INT ("scheduler/http/max_body", http.max_body, 1024, 4 * 1024 * 1024),
    S_INT ("scheduler/http/login_burst", http.login_burst, 0, 1000),
    S_INT ("scheduler/http/login_interval_s", http.login_interval_s, 1, 86400),
    S_INT ("scheduler/http/login_slots", http.login_slots, 64, 1048576),
    S_INT ("scheduler/http/per_address", http.per_address, 0, XXL_HTTP_CONNECTIONS),
    S_INT ("scheduler/http/request_timeout_s", http.request_timeout_s, 1, 3600),
    S_INT ("scheduler/http/health_slots", http.health_slots, 0, 64),
    S_INT ("scheduler/http/metrics_jobs", http.metrics_jobs, 0, 100000),
    S_INT ("scheduler/http/metrics_agents", http.metrics_agents, 0, 100000),
    S_INT ("scheduler/http/initial_admin", http.initial_admin, 0, 1),
    { NULL, 0, 0, 0, 0 }
};

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
    settings.admin_address = s_value (NULL, config, "scheduler/admin_address", NULL);
    //  (DESIGN names them ha/...; scheduler/ha/... is read first)
    settings.node = s_value (node, config, "scheduler/ha/node",
                             s_value (NULL, config, "ha/node", NULL));
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
    settings.http.hosts = s_value (NULL, config, "scheduler/http/hosts", NULL);
    settings.http.xxl_admin_path = s_value (NULL, config, "scheduler/http/xxl_admin_path",
                                            settings.http.xxl_admin_path);
    settings.http.xxl_admin_timezone = s_value (NULL, config,
                                                "scheduler/http/xxl_admin_timezone", NULL);
    for (const s_int_key_t *k = s_int_keys; k->key; k++) {
        int *field = (int *) ((char *) &settings + k->offset);
        int value;
        char err [256];
        if (xxl_conf_int (NULL, config, k->key, *field / k->scale, k->min, k->max, &value,
                          err, sizeof err)) {
            fprintf (stderr, "xxl-scheduler: %s\n", err);
            zconfig_destroy (&config);
            return 2;
        }
        *field = value * k->scale;
    }
    if (settings.dead_s < settings.beat_s
    ||  (settings.node && (!*settings.node || strlen (settings.node) >= XXL_STORE_NODE_MAX))) {
        fprintf (stderr, "xxl-scheduler: need registry/dead >= registry/beat and ha/node"
                         " 1-%d bytes\n", XXL_STORE_NODE_MAX - 1);
        zconfig_destroy (&config);
        return 2;
    }
    //  (a remembered session is seen to the minute, as any: XXL_SESSION_TOUCH_MS)
    if (settings.http.remember_s > 0 && settings.http.remember_s < 60) {
        fprintf (stderr, "xxl-scheduler: scheduler/http/remember_s must be 0 (off) or a number"
                         " from 60 to %d, not '%d'\n", S_BIG, settings.http.remember_s);
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
    //  The first login's password goes to the state folder too (when
    //  none was needed above: found now, or the reason why not kept for
    //  the engine, which logs it only when the store has no user)
    const char *endpoint = settings.http.endpoint;
    if (local || !db_given)
        settings.http.state_dir = state;
    else
    if (settings.http.initial_admin && endpoint && *endpoint && strneq (endpoint, "none")) {
        if (xxl_local_state_dir (s_value (NULL, config, "scheduler/state_dir", NULL), state,
                                 sizeof state, why, sizeof why) == 0
        &&  (xxl_local_mkdirs (state, 0700) == 0
        ||   !snprintf (why, sizeof why, "cannot make the state folder %s: %s", state,
                        strerror (errno))))
            settings.http.state_dir = state;
        else
            settings.http.state_error = why;
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
    if (!failed) {
        //  The clean stop: the actor waits up to scheduler/stop_wait for
        //  the agents' answers, then ends with a signal on its pipe.
        //  Waited for here, not in zactor_destroy, whose wait another
        //  SIGTERM would interrupt (EINTR): the process would exit with
        //  the actor still running, and czmq's exit handler close the
        //  actor's pipe under it (an assertion at its end).
        zstr_send (server, "$TERM");
        zmq_pollitem_t item = { zsock_resolve (server), 0, ZMQ_POLLIN, 0 };
        while (zmq_poll (&item, 1, -1) < 0 && zmq_errno () == EINTR)
            ;
    }
    zactor_destroy (&server);
    zconfig_destroy (&config);
    zsys_info ("xxl-scheduler stopped");
    return failed? 1: 0;
}
