/*  xxl_server.c -- the scheduler engine's actor: its loop, start and stop.

    Threading: everything here runs on the actor's thread.  A loop turn:
    poll; open a transaction; handle up to `batch` messages from each
    socket; run due timers; commit; send the queued outgoing messages
    (the outbox).  Nothing that depends on a write leaves before the
    commit, which is what makes "the log row exists before RUN is sent" and
    "a callback is acknowledged only once stored" hold, and what groups
    many writes into one commit under load.

    Requests the engine sends to agents (RUN, LOG, KILL, BEAT, IDLE_BEAT)
    are tracked in a pending table by request id, with a deadline; a reply
    or the deadline completes them.  LOG and KILL from a client are
    forwarded this way and answered when the agent answers.

    This file holds the loop and what the others share: the pending table,
    the rate-limited log, config defaults, the engine's construction and
    destruction.  xxl_engine.h maps the other files.
*/

#include "xxl_engine.h"
#include "xxl_run_rules.h"
#include "xxl_cert.h"
#include "xxl_openssl.h"
#include "xxl_log.h"
#include <sys/stat.h>

static void s_stall_check (server_t *self, int timeout);
static void s_groups_refresh (server_t *self);
static void s_check_registry (server_t *self);
void xxl_server_config_defaults (xxl_server_config_t *config);
static void s_server_destroy (server_t **self_p);
static const char *s_alarm_config (void *ctx, const char *key);
static server_t *s_server_new (zsock_t *pipe, const xxl_server_config_t *config);
//  A socket's message handler (engine_handle_agent, _api, _probe, _routed)
typedef void (handler_fn) (server_t *self, zmsg_t *zmsg);
static bool s_drain (server_t *self, zsock_t *sock, handler_fn *handler);
void xxl_server_actor (zsock_t *pipe, void *args);

//  --------------------------------------------------------------------
//  Pending table keyed by uint64

//  --------------------------------------------------------------------
//  Timers

//  After the loop itself stood still (the process frozen, a commit or a
//  disk that stalled) the agents' answers may be on their way in: the time
//  it stood still is not counted against requests in flight.  timeout:
//  what the poll was allowed to sleep.
#define XXL_STALL_MS 1000
//  A step of the wall clock (NTP, an operator, a VM resumed) is logged:
//  durations and expiries do not follow it (engine_clock), only what is
//  due by the wall clock does (cron seconds, the rows' times)
#define XXL_STEP_MS 1000
static void
s_wall_check (server_t *self)
{
    int64_t base = zclock_time () - zclock_mono ();
    int64_t step = base - self->wall_base;
    if (step < XXL_STEP_MS && step > -XXL_STEP_MS)
        return;
    self->wall_base = base;
    self->wall_step_mono = zclock_mono ();
    if (step > 0)
        self->wall_stepped = true;      //  (s_check_registry: the store's rows)
    //  (retries' intervals and other delays keep their length)
    engine_plan_on_step (self, step);
    engine_flows_on_step (self, step);
    zsys_warning ("server: the wall clock stepped %s by %" PRId64 " ms: durations, liveness"
                  " and RUNs' expiry do not change; %s", step > 0? "forward": "back",
                  step > 0? step: -step, step > 0? "fires of the skipped time are judged by"
                  " their jobs' misfire strategies": "no planned instant fires twice; the"
                  " planner waits until the wall clock passes the last one it planned");
}

static void
s_stall_check (server_t *self, int timeout)
{
    s_wall_check (self);
    int64_t now = zclock_mono ();
    int64_t slept = self->stall_mono? now - self->stall_mono: 0;
    self->stall_mono = now;
    int64_t stall = slept - (timeout > 0? timeout: 0);
    if (stall < XXL_STALL_MS)
        return;
    for (pending_t *pending = (pending_t *) zhashx_first (self->runs.pending); pending;
         pending = (pending_t *) zhashx_next (self->runs.pending))
        if (!pending->gone)
            pending->deadline += stall;
    for (run_batch_t *batch = (run_batch_t *) zhashx_first (self->runs.batches); batch;
         batch = (run_batch_t *) zhashx_next (self->runs.batches))
        if (!batch->gone)
            batch->deadline += stall;
    //  The agents' beats of that time are still on their way in: none is
    //  judged dead before it has had a beat's time to be heard again
    int64_t beat_ms = (int64_t) self->config.beat_s * 1000;
    if (self->next_registry_check < now + beat_ms)
        self->next_registry_check = now + beat_ms;
    zsys_warning ("server: the engine stood still for %" PRId64 " ms: requests to agents"
                  " get that much longer to be answered, and agents a beat more to be"
                  " heard", stall);
}

//  The automatic groups' address lists in the store follow the registry,
//  at most XXL_GROUPS_MS late: each app whose addresses changed is written
//  once per period (a burst of registrations costs one write per app)
#define XXL_GROUPS_MS 1000
static void
s_groups_refresh (server_t *self)
{
    int64_t now = engine_now ();
    for (void *item = zhashx_first (self->apps_changed); item;
         item = zhashx_next (self->apps_changed))
        xxl_store_group_refresh_app (self->store, (const char *) zhashx_cursor (self->apps_changed),
                                     now);
    zhashx_purge (self->apps_changed);
}

static void
s_check_registry (server_t *self)
{
    int64_t now = engine_now ();
    //  (the store's rows: on the store's clock, which all its schedulers share)
    int64_t dead_before = engine_store_now (self) - (int64_t) self->config.dead_s * 1000;
    int removed = xxl_registry_expire (self->registry, zclock_mono ()
                                                      - (int64_t) self->config.dead_s * 1000);
    //  After a forward step of the wall clock the store's rows of the live
    //  agents look old: they are stamped again before any expires (the
    //  lost-run monitor and the next start read them)
    xxl_heard_prune (self->heard, zclock_mono ());
    if (self->wall_stepped) {
        size_t cursor = 0;
        xxl_registry_entry_t entry;
        while (xxl_registry_each (self->registry, &cursor, &entry) == 0)
            xxl_store_registry_beat (self->store, entry.app, entry.address,
                                     engine_store_now (self));
        self->wall_stepped = false;
    }
    if (removed > 10)
        zsys_info ("registry: %d address(es) missed their beats and were removed", removed);
    //  The store's rows of the agents the warm-up waits for stay until it
    //  ends: they are how the next start knows whom to wait for, and a
    //  start stopped again before its agents reconnected must not leave
    //  the next one an empty registry (which fails triggers at once)
    bool warming = self->runs.awaited_left && zclock_mono () < self->warm_until;
    if ((!warming && xxl_store_registry_expire (self->store, dead_before) > 0) || removed > 0)
        xxl_store_groups_refresh (self->store, now);
    //  Deaf: none of the agents heard here while another scheduler of the
    //  store hears some (xxl_lease_deaf): the shares go to the others,
    //  and rows wait here rather than fail for an empty address list
    int64_t newest = xxl_registry_size (self->registry)? 0: xxl_store_registry_newest (self->store);
    engine_lease_set_deaf (self, xxl_lease_deaf (xxl_registry_size (self->registry), newest,
                                                 engine_store_now (self),
                                                 (int64_t) self->config.dead_s * 1000,
                                                 (int64_t) self->config.beat_s * 1000));
}

//  --------------------------------------------------------------------

const char *
xxl_server_http_default (void)
{
    static const char *s_default = "127.0.0.1:8080";
    return s_default;
}

void
xxl_server_config_defaults (xxl_server_config_t *config)
{
    memset (config, 0, sizeof *config);
    config->db = "xxl.db";
    config->api = "tcp://127.0.0.1:7070";
    config->agents = "tcp://127.0.0.1:7071";
    config->plugins = XXL_PKGLIBDIR "/routers";
    config->alarm_plugins = XXL_PKGLIBDIR "/alarms";
    config->access_token = "";
    config->keys_check_ms = 1000;
    config->beat_s = 30;
    config->dead_s = 90;
    config->registry_limit = 10000;
    config->run_timeout_ms = 10000;
    config->request_timeout_ms = 5000;
    config->batch = 1024;
    config->fast_pool = 8;
    config->slow_pool = 4;
    config->pool_queue = 100000;
    config->probe_timeout_ms = 1000;
    config->slow_ms = 500;
    config->slow_count = 10;
    config->preread_ms = 5000;
    config->ahead_ms = 3000;
    config->scan_ms = 1000;
    config->recovery_wait_ms = 10000;
    config->node = NULL;
    config->lease_ms = 3000;
    config->warmup_ms = 3000;
    config->fail_check_ms = 1000;
    config->lost_check_ms = 60000;
    config->lost_after_ms = 10 * 60000;
    config->report_ms = 60000;
    config->retention_days = 30;
    config->retention_check_ms = 3600 * 1000;
    config->audit_retention_days = 90;
    config->keep_last = 0;
    config->stop_wait_ms = 3000;
    config->wal_size_mb = 64;
    config->http.endpoint = xxl_server_http_default ();
    config->http.console = XXL_PKGDATADIR "/console";
    config->http.session_idle_s = 8 * 3600;
    config->http.remember_s = 14 * 86400;
    config->http.xxl_admin_path = "/xxl-job-admin";
    config->http.max_body = 2 * 1024 * 1024;
    config->http.login_burst = 5;
    config->http.login_interval_s = 60;
    config->http.login_slots = 4096;
    config->http.per_address = XXL_HTTP_CONNECTIONS_PER_ADDRESS;
    config->http.request_timeout_s = XXL_HTTP_REQUEST_TIMEOUT_S;
    config->http.health_slots = XXL_HTTP_HEALTH_SLOTS;
    config->http.metrics_jobs = 200;
    config->http.metrics_agents = 1000;
    config->http.initial_admin = 1;
}

static void
s_server_destroy (server_t **self_p)
{
    server_t *self = *self_p;
    if (!self)
        return;
    //  (the HTTP threads first: they may be waiting on the http socket)
    xxl_http_destroy (&self->http_server);
    zsock_destroy (&self->http);
    xxl_metrics_box_destroy (&self->metrics_box);
    xxl_labels_destroy (&self->metrics.labels);
    engine_services_stop (self);
    engine_flows_stop (self);
    engine_plan_stop (self);
    engine_runs_stop (self);
    engine_outbox_stop (self);
    xxl_heard_destroy (&self->heard);
    zsock_destroy (&self->probes);
    zsock_destroy (&self->routed);
    zhashx_destroy (&self->apps_changed);
    //  (the last turn's replies, flushed to libzmq, get a second to leave:
    //  a LOG_CLEAR or REPORT answered at the stop, replies of the drain)
    xxl_transport_unwatch (self->api, &self->watch [0]);
    xxl_transport_unwatch (self->agents, &self->watch [1]);
    if (self->api)
        zsock_set_linger (self->api, 1000);
    zsock_destroy (&self->api);
    zsock_destroy (&self->agents);
    zactor_destroy (&self->auth);
    zcert_destroy (&self->cert);
    xxl_keys_destroy (&self->keys);
    zstr_free (&self->commit_logged);
    engine_audit_destroy (self);
    xxl_registry_destroy (&self->registry);
    zlistx_destroy (&self->api_state.clears);
    zlistx_destroy (&self->api_state.reports);
    xxl_store_destroy (&self->store);
    xxl_enc_destroy (&self->enc);
    free (self);
    *self_p = NULL;
}

//  The alarm host's log: the daemon's logger (xxl_log.h), "alarms: " lines
static void
s_alarm_vlog (int level, const char *format, va_list args)
{
    xxl_log_vtag (level, "alarms", format, args);
}

//  The alarm host's config: scheduler/alarm/<key> of the config file
static const char *
s_alarm_config (void *ctx, const char *key)
{
    if (!ctx)
        return NULL;
    //  scheduler/alarm/KEY, or else a top-level alarms/KEY (the form
    //  the design names the webhook allow-list in: alarms/webhook_allow)
    char path [256];
    snprintf (path, sizeof path, "scheduler/alarm/%s", key);
    const char *value = zconfig_get ((zconfig_t *) ctx, path, NULL);
    if (!value) {
        snprintf (path, sizeof path, "alarms/%s", key);
        value = zconfig_get ((zconfig_t *) ctx, path, NULL);
    }
    return value;
}

//  Security at start (docs/operations.md, Security): with a certificate,
//  the ZAP handler and the key table of the keys folder; without one,
//  endpoints beyond loopback only under --insecure.  0, or -1 with why.
static int
s_security_start (server_t *self, char *why, size_t whylen)
{
    const xxl_server_config_t *config = &self->config;
    bool cert = config->cert && *config->cert;
    bool keys = config->keys && *config->keys;
    //  HTTP beyond loopback needs TLS (http/cert and http/key), whatever
    //  the ZeroMQ side has: passwords, tokens and sessions cross it
    const xxl_http_config_t *http = &config->http;
    if (http->endpoint && strneq (http->endpoint, "none") && !xxl_http_loopback (http->endpoint)
    &&  !(http->cert && *http->cert)) {
        if (!config->insecure) {
            snprintf (why, whylen, "refusing to serve HTTP on %s without TLS: passwords, tokens"
                      " and session cookies would cross the network in clear.  Give http/cert"
                      " and http/key (docs/operations.md, HTTP), bind 127.0.0.1, or accept the"
                      " risk with --insecure", http->endpoint);
            return -1;
        }
        zsys_warning ("server: --insecure: HTTP on %s without TLS", http->endpoint);
    }
    if (!cert) {
        if (keys) {
            snprintf (why, whylen, "a keys folder (--keys) needs the scheduler's certificate"
                      " (--cert)");
            return -1;
        }
        const char *open = !xxl_transport_loopback (config->api)? config->api
                         : !xxl_transport_loopback (config->agents)? config->agents: NULL;
        if (open && !config->insecure) {
            snprintf (why, whylen, "refusing to bind %s without a certificate: anyone who can"
                      " reach it could run commands on every agent host.  Give --cert and"
                      " --keys (docs/operations.md, Security), bind 127.0.0.1, or accept the"
                      " risk with --insecure", open);
            return -1;
        }
        if (open)
            zsys_warning ("server: --insecure: %s is bound without a certificate; anyone who"
                          " can reach it can add jobs and run them on every agent host", open);
        return 0;
    }
    if (!keys) {
        snprintf (why, whylen, "a certificate (--cert) needs the keys folder (--keys) of the"
                  " clients and agents let in");
        return -1;
    }
    self->cert = xxl_cert_load_secret (config->cert, why, whylen);
    if (!self->cert)
        return -1;
    self->keys = xxl_keys_new (config->keys, why, whylen);
    if (!self->keys)
        return -1;
    self->auth = zactor_new (zauth, NULL);
    if (!self->auth) {
        snprintf (why, whylen, "cannot start the ZAP handler");
        return -1;
    }
    zstr_sendx (self->auth, "CURVE", config->keys, NULL);
    zsock_wait (self->auth);
    zsys_info ("server: CURVE on; %zu key(s) in %s", xxl_keys_size (self->keys), config->keys);
    return 0;
}

//  Opens a socket of a scheduler role, secured when CURVE is on
static zsock_t *
s_socket_open (server_t *self, xxl_role_t role, const char *endpoint, char *bound,
               size_t boundlen, char *why, size_t whylen)
{
    zsock_t *sock = xxl_transport_new (role);
    if (!sock) {
        snprintf (why, whylen, "cannot make a socket: %s", zmq_strerror (zmq_errno ()));
        return NULL;
    }
    if ((self->cert && xxl_transport_curve (sock, role, self->cert, NULL, why, whylen))
    ||  xxl_transport_attach (sock, role, endpoint, bound, boundlen, why, whylen))
        zsock_destroy (&sock);
    return sock;
}

//  A run's end, for the labelled series: its job (the event's, else the
//  row's, one read by key) and the job's app (looked up once per job the
//  labels hold)
static void
s_metrics_label_run (server_t *self, const xxl_event_t *event)
{
    int64_t job_id = event->job_id > 0? event->job_id
                                      : xxl_store_log_job_id (self->store, event->log_id);
    if (job_id <= 0)
        return;
    const char *app = xxl_labels_job_app (self->metrics.labels, job_id);
    xxl_job_t job;
    xxl_group_t group;
    bool job_loaded = false, group_loaded = false;
    if (!app && xxl_store_job_load (self->store, job_id, &job) == 0) {
        job_loaded = true;
        if (xxl_store_group_load (self->store, job.job_group, &group) == 0) {
            group_loaded = true;
            app = group.app_name;
        }
    }
    xxl_labels_run (self->metrics.labels, job_id, app, event->end == XXL_END_RESULT,
                    event->code, event->now);
    if (group_loaded)
        xxl_group_free (&group);
    if (job_loaded)
        xxl_job_free (&job);
}

//  A job changed (or a group: every job's): its app is looked up again at
//  its next run's end
static void
s_metrics_on_job (server_t *self, const xxl_event_t *event)
{
    if (self->metrics.labels && (event->job_id > 0 || (event->what & XXL_CHANGED_GROUPS)))
        xxl_labels_job_changed (self->metrics.labels, event->job_id);
}

//  A run's result, counted by its code (the RUN_ENDED event)
static void
s_metrics_on_run (server_t *self, const xxl_event_t *event)
{
    if (self->metrics.labels)
        s_metrics_label_run (self, event);
    if (event->end != XXL_END_RESULT)
        return;
    xxl_metrics_t *m = &self->metrics;
    if (event->code == XXL_CODE_SUCCESS)
        m->runs_ok++;
    else
    if (event->code == XXL_CODE_FAIL)
        m->runs_fail++;
    else
    if (event->code == 502)
        m->runs_timeout++;
    else
        m->runs_other++;
}

static server_t *
s_server_new (zsock_t *pipe, const xxl_server_config_t *config)
{
    server_t *self = (server_t *) zmalloc (sizeof (server_t));
    self->config = *config;
    //  Who hears each event, in order (xxl_events.h)
    engine_subscribe (&self->events, XXL_EVENT_JOB_CHANGED, engine_plan_on_job);
    engine_subscribe (&self->events, XXL_EVENT_JOB_CHANGED, engine_services_on_job);
    engine_subscribe (&self->events, XXL_EVENT_JOB_CHANGED, engine_runs_on_job);
    engine_subscribe (&self->events, XXL_EVENT_JOB_CHANGED, s_metrics_on_job);
    engine_subscribe (&self->events, XXL_EVENT_RUN_ENDED, s_metrics_on_run);
    engine_subscribe (&self->events, XXL_EVENT_RUN_ENDED, engine_plan_on_run);
    engine_subscribe (&self->events, XXL_EVENT_RUN_ENDED, engine_services_on_run);
    engine_subscribe (&self->events, XXL_EVENT_RUN_ENDED, engine_flows_on_run);
    engine_subscribe (&self->events, XXL_EVENT_RUN_ENDED, engine_admit_on_run);
    engine_subscribe (&self->events, XXL_EVENT_RUN_ENDED, engine_runs_on_ended);
    engine_subscribe (&self->events, XXL_EVENT_RUN_AGAIN, engine_plan_on_again);
    engine_subscribe (&self->events, XXL_EVENT_LONG_WORK, engine_plan_on_long_work);
    engine_subscribe (&self->events, XXL_EVENT_ASK_ANSWERED, engine_plan_on_ask);
    engine_subscribe (&self->events, XXL_EVENT_SHARES_TAKEN, engine_plan_on_taken);
    engine_subscribe (&self->events, XXL_EVENT_SHARES_TAKEN, engine_flows_on_taken);
    engine_subscribe (&self->events, XXL_EVENT_SHARES_LOST, engine_plan_on_lost);
    //  What runs may ask of the planner
    self->runs.planned = engine_plan_holds;
    self->runs.asked = engine_plan_asks;
    self->pipe = pipe;
    self->enc = xxl_enc_new ();
    self->registry = xxl_registry_new ();
    if (self->registry)
        xxl_registry_set_limit (self->registry, (size_t) config->registry_limit);
    self->apps_changed = zhashx_new ();
    self->heard = xxl_heard_new (zclock_mono ());
    assert (self->heard);
    engine_outbox_start (self);
    engine_runs_start (self);
    engine_flows_start (self);
    engine_plan_start (self);
    self->next_id = (uint64_t) engine_now () << 16;
    self->clock_base = self->wall_base = zclock_time () - zclock_mono ();
    if (gethostname (self->hostname, sizeof self->hostname - 1))
        strcpy (self->hostname, "localhost");
    if (!self->config.admin_address || !*self->config.admin_address)
        self->config.admin_address = self->hostname;

    char err [512];
    self->store = xxl_store_new (config->db, err, sizeof err);
    if (!self->store) {
        zsys_error ("server: %s", err);
        s_server_destroy (&self);
        return NULL;
    }
    xxl_store_set_wal_size (self->store, config->wal_size_mb);
    //  (an in-memory or temporary SQLite store is this handle's alone:
    //  counted here)
    if (*config->db && strneq (config->db, ":memory:")
    &&  strncmp (config->db, "file::memory:", 13)) {
        self->services.reporter = xxl_reporter_new (config->db, err, sizeof err);
        if (!self->services.reporter)
            zsys_warning ("server: the report's counts are made on the engine's thread: %s",
                          err);
    }
    //  Alarm plugins: their config keys are scheduler/alarm/<key>
    self->alarm_host = *xxl_alarms_default_host ();
    self->alarm_host.config = s_alarm_config;
    self->alarm_host.config_ctx = config->file;
    self->alarm_host.vlog = s_alarm_vlog;
    self->alarms = xxl_alarms_new (NULL, &self->alarm_host);
    self->services.alarm_backlog = zlistx_new ();
    if (self->alarms && xxl_alarms_load (self->alarms, config->alarm_plugins) < 0)
        zsys_warning ("server: no alarm plugins from %s: jobs with alarm targets are refused",
                      config->alarm_plugins);
    if (!self->alarms) {
        zsys_error ("server: cannot start the alarm sender");
        s_server_destroy (&self);
        return NULL;
    }
    xxl_alarms_set_drain_ms (self->alarms, 2000);
    //  Routers, and the pools that run the probing ones
    self->runs.router_host = *xxl_routers_default_host ();
    self->runs.router_host.probe = xxl_pool_probe;
    self->runs.routers = xxl_routers_new (config->plugins, &self->runs.router_host);
    if (!self->runs.routers) {
        zsys_error ("server: cannot load router plugins from %s", config->plugins);
        s_server_destroy (&self);
        return NULL;
    }
    xxl_routers_set_probe_timeout (self->runs.routers, config->probe_timeout_ms);
    if (xxl_routers_size (self->runs.routers) == 0)
        zsys_warning ("server: no router plugins in %s: every routed trigger will fail",
                      config->plugins);
    char probes [64], routed [64];
    snprintf (probes, sizeof probes, "inproc://xxl-probes-%p", (void *) self);
    snprintf (routed, sizeof routed, "inproc://xxl-routed-%p", (void *) self);
    self->probes = xxl_transport_inproc (ZMQ_ROUTER, probes, true);
    self->routed = xxl_transport_inproc (ZMQ_PULL, routed, true);
    self->runs.fast_pool = xxl_pool_new ("fast", config->fast_pool, config->pool_queue,
                                    self->runs.routers, config->probe_timeout_ms, probes, routed);
    self->runs.slow_pool = xxl_pool_new ("slow", config->slow_pool, config->pool_queue,
                                    self->runs.routers, config->probe_timeout_ms, probes, routed);
    if (!self->probes || !self->routed || !self->runs.fast_pool || !self->runs.slow_pool) {
        zsys_error ("server: cannot start the trigger pools");
        s_server_destroy (&self);
        return NULL;
    }
    char api_bound [256], agents_bound [256];
    char why [512] = "";
    if (s_security_start (self, why, sizeof why) == 0) {
        self->api = s_socket_open (self, XXL_ROLE_API, config->api, api_bound, sizeof api_bound,
                                   why, sizeof why);
        self->agents = self->api? s_socket_open (self, XXL_ROLE_AGENTS, config->agents, agents_bound,
                                                 sizeof agents_bound, why, sizeof why)
                                : NULL;
        //  (keys refused at the handshake never reach the engine: logged
        //  with their peer's address by a watcher of each socket)
        if (self->cert && self->api && self->agents) {
            self->watch [0] = xxl_transport_watch (self->api, "api");
            self->watch [1] = xxl_transport_watch (self->agents, "agents");
        }
    }
    //  HTTP: the inproc socket its threads send to, then the server
    char http_bound [160] = "none";
    self->metrics_box = xxl_metrics_box_new ();
    self->metrics.start_ms = engine_now ();
    self->metrics.wal_bytes = -1;
    if (config->http.metrics_jobs > 0 || config->http.metrics_agents > 0)
        self->metrics.labels = xxl_labels_new ((size_t) config->http.metrics_jobs,
                                               (size_t) config->http.metrics_agents);
    if (self->api && self->agents) {
        char inproc [64];
        snprintf (inproc, sizeof inproc, "inproc://xxl-http-%p", (void *) self);
        self->http = xxl_transport_inproc (ZMQ_ROUTER, inproc, true);
        if (self->http)
            zsock_set_router_mandatory (self->http, 1);
        else
            snprintf (why, sizeof why, "cannot make the HTTP side's inproc socket");
        const char *endpoint = config->http.endpoint;
        if (self->http && endpoint && *endpoint && strneq (endpoint, "none")) {
            self->http_server = xxl_http_new (&config->http, inproc, self->metrics_box,
                                              config->request_timeout_ms + 10000, http_bound,
                                              sizeof http_bound, why, sizeof why);
            //  (the default endpoint taken, say by another scheduler on
            //  this host: this one serves no HTTP, and says so)
            if (!self->http_server && !config->http.chosen) {
                zsys_warning ("server: %s; no HTTP (give --http HOST:PORT, or none)", why);
                why [0] = 0;
            }
            else
            if (!self->http_server)
                zsock_destroy (&self->http);
        }
    }
    if (*why)
        zsys_error ("server: %s", why);
    if (!self->api || !self->agents || !self->http) {
        s_server_destroy (&self);
        return NULL;
    }
    engine_runs_monitor_start (self);
    engine_first_admin_start (self);
    char store_name [512];
    zsys_info ("xxl-scheduler %s: api on %s, agents on %s, http on %s%s, store %s, %s",
               PACKAGE_VERSION, api_bound, agents_bound, http_bound,
               self->http_server && config->http.cert && *config->http.cert? " (TLS)": "",
               xxl_store_describe (config->db, store_name, sizeof store_name),
               self->cert? "CURVE on": "plaintext (no certificate)");
    //  Its name among the schedulers of the store: the host and the api
    //  endpoint, which no other live scheduler can have bound
    if (config->node)
        snprintf (self->leases.node, sizeof self->leases.node, "%s", config->node);
    else
        snprintf (self->leases.node, sizeof self->leases.node, "%.40s %.80s", self->hostname, api_bound);
    if (config->ready_file && *config->ready_file) {
        char *tmp = zsys_sprintf ("%s.tmp", config->ready_file);
        FILE *file = fopen (tmp, "w");
        if (file) {
            fprintf (file, "api=%s\nagents=%s\nhttp=%s\npid=%d\n", api_bound, agents_bound,
                     http_bound, (int) getpid ());
            fclose (file);
            rename (tmp, config->ready_file);
        }
        else
            zsys_warning ("server: cannot write %s", config->ready_file);
        zstr_free (&tmp);
    }
    //  Warm-up: the agents alive when the last run stopped reconnect; it
    //  ends early once all of them are back (at once on a new store)
    //  (alive as of the last beat heard: the outage itself made them stale)
    char *alive = xxl_store_registry_alive (self->store, (int64_t) config->dead_s * 1000);
    self->runs.awaited_count = self->runs.awaited_left = engine_split_addresses (alive, &self->runs.awaited);
    zstr_free (&alive);
    self->warm_until = self->runs.awaited_left? zclock_mono () + config->warmup_ms: 0;
    //  FIX_DELAY jobs that were waiting for a run's end when we stopped
    engine_waiting_load (self);
    self->data_version = xxl_store_data_version (self->store);
    //  The first lease round: the shares this scheduler may take, and what
    //  a previous run left of their jobs (unsent triggers); then alarms
    if (xxl_store_begin (self->store) == 0) {
        self->runs.next_log_id = 0;
        engine_lease_round (self);
        engine_recover_alarms (self);
        int rc = xxl_store_commit (self->store);
        if (rc)
            zsys_error ("server: recovery commit failed: %s", xxl_store_error (self->store));
        //  (a failed one: its shares are taken again, and recovered, at the
        //  next round)
        engine_lease_settle (self, rc == 0);
        self->planner.fired_want = self->planner.fired_until;
    }
    self->next_registry_check = zclock_mono () + (int64_t) config->beat_s * 1000;
    self->next_liveness = zclock_mono () + xxl_liveness_period (self->config.beat_s);
    engine_services_start (self, zclock_mono ());
    self->next_pending_check = zclock_mono () + 200;
    return self;
}

//  Hands up to `batch` messages waiting on sock to its handler; true when it
//  emptied the queue, false when messages are left for the next turn
static bool
s_drain (server_t *self, zsock_t *sock, handler_fn *handler)
{
    bool is_api = handler == engine_handle_api || handler == engine_handle_http;
    void *handle = zsock_resolve (sock);
    int64_t started = zclock_mono ();
    for (int i = 0; i < self->config.batch; i++) {
        zmsg_t *zmsg = zmsg_new ();
        //  Non-blocking multipart receive
        int more = 1, got = 0;
        bool got_user = false;
        //  (with a token, a refusal's log line names the peer; the parts
        //  are copied below, so its metadata is read here)
        bool got_peer = !self->config.access_token || !*self->config.access_token;
        self->access.user_id [0] = 0;
        self->access.peer_address [0] = 0;
        self->access.api_fd = -1;
        while (more) {
            zmq_msg_t part;
            zmq_msg_init (&part);
            if (zmq_msg_recv (&part, handle, ZMQ_DONTWAIT) < 0) {
                zmq_msg_close (&part);
                break;
            }
            if (self->keys && !got_user) {
                //  The connection's key, as the ZAP handler admitted it.
                //  (Not from the routing id part: a ROUTER that a poll made
                //  read ahead gives that part no metadata.)
                const char *user = zmq_msg_gets (&part, "User-Id");
                if (user) {
                    snprintf (self->access.user_id, sizeof self->access.user_id, "%s", user);
                    got_user = true;
                }
            }
            if (!got_peer) {
                const char *peer = zmq_msg_gets (&part, "Peer-Address");
                if (peer) {
                    snprintf (self->access.peer_address, sizeof self->access.peer_address,
                              "%s", peer);
                    got_peer = true;
                }
            }
            got = 1;
            //  (the connection's socket, where a client's unread replies show)
            if (is_api && self->access.api_fd < 0)
                self->access.api_fd = zmq_msg_get (&part, ZMQ_SRCFD);
            zmsg_addmem (zmsg, zmq_msg_data (&part), zmq_msg_size (&part));
            more = zmq_msg_more (&part);
            zmq_msg_close (&part);
        }
        if (!got) {
            zmsg_destroy (&zmsg);
            return true;
        }
        //  (replies waiting for this turn's end are bounded, in bytes and
        //  in the time they wait: the rest of the requests wait for the
        //  next turn, after the commit that sends these replies)
        if (is_api && (self->outbox.api_out_bytes >= XXL_API_TURN_BYTES
                   ||  zclock_mono () - started >= XXL_API_TURN_MS))
            i = self->config.batch;
        engine_fire_check (self);
        handler (self, zmsg);
        zmsg_destroy (&zmsg);
    }
    return !(zsock_events (sock) & ZMQ_POLLIN);
}

//  The turn's phases, in order (xxl_server_actor): the poll's timeout;
//  the timer, the actor pipe and the sockets, each to its handler; the
//  transaction's begin, the work, the commit, and what leaves after it.

//  How long the poll may wait: until the soonest of the checks, the
//  services, the next fire (a turn before it when fired_until does not
//  cover it yet); 50 ms while stopping
static long
s_turn_timeout (server_t *self)
{
    int64_t now = zclock_mono ();
    int64_t wake = self->next_registry_check;
    if (self->next_liveness < wake)
        wake = self->next_liveness;
    if (zhashx_size (self->apps_changed) && self->next_groups < wake)
        wake = self->next_groups;
    if (zhashx_size (self->outbox.backlogs) && now + 2 < wake)
        wake = now + 2;             //  (their queues drain as they read)
    if ((zhashx_size (self->runs.pending) || zhashx_size (self->runs.batches)
    ||   zlistx_size (self->runs.resends))
    &&  self->next_pending_check < wake)
        wake = self->next_pending_check;
    if (self->planner.next_scan < wake)
        wake = self->planner.next_scan;
    //  The oldest acceptance not yet written, when it is due alone
    //  (engine_accepted_flush at the turn's end; near a fire, after the
    //  fire)
    int64_t accepted = engine_accepted_due (self);
    if (accepted != INT64_MAX && !engine_fire_near (self) && accepted + 1 < wake)
        wake = accepted + 1;
    if (self->leases.next_lease < wake)
        wake = self->leases.next_lease;
    int64_t service = engine_services_wake (self);
    if (service < wake)
        wake = service;
    int64_t flows = engine_flows_wake (self);
    if (flows < wake)
        wake = flows;
    if (engine_backfill_wake (self) < wake)
        wake = engine_backfill_wake (self);
    if (engine_admit_wake (self) < wake)
        wake = engine_admit_wake (self);
    //  (a count of the daily report under way: its answer is taken soon,
    //  at once when REPORTs wait for it)
    bool reports_wait = (self->services.report_waiting && zlistx_size (self->services.report_waiting))
                     || engine_scoped_report_waiting (self);
    if (self->services.reporter && xxl_reporter_busy (self->services.reporter)) {
        int64_t soon = now + (reports_wait? 2: 50);
        if (soon < wake)
            wake = soon;
    }
    else
    if (reports_wait && now + 2 < wake)
        wake = now + 2;
    //  (a LOG_CLEAR goes on a batch a turn)
    if (self->api_state.clears && zlistx_size (self->api_state.clears) && now + 1 < wake)
        wake = now + 1;
    if (self->stopping)
        wake = now + 50;
    int64_t due = xxl_timer_next (self->planner.timer);
    if (due >= 0) {
        //  A turn before a fire fired_until does not cover yet
        //  writes it, so that the fire itself needs no commit
        if (due > self->planner.fired_until)
            due -= 1000;
        //  While the store cannot be reached, the turn before a fire
        //  (which fails) waits for the next try (below); a fire that
        //  fired_until covers needs no commit and keeps its time
        int64_t retry = self->begin_failed_at + XXL_STORE_DOWN_MS;
        if (self->begin_failed_at && due < xxl_timer_next (self->planner.timer)
        &&  now + (due - engine_now ()) < retry)
            due = engine_now () + (retry - now);
        //  (the timerfd wakes at `due`; the timeout is the fallback)
        int64_t due_mono = now + (due - engine_now ()) + (self->planner.timer_fd >= 0);
        if (due_mono < wake)
            wake = due_mono;
        engine_timer_arm (self, due);
    }
    //  While the store cannot be reached, work that is due (fires,
    //  rounds, monitors) waits XXL_STORE_DOWN_MS between turns: each
    //  would fail at once, and the loop must not spin.  Input still
    //  wakes it (clients are answered 500 with the cause).
    if (self->begin_failed_at && wake < self->begin_failed_at + XXL_STORE_DOWN_MS)
        wake = self->begin_failed_at + XXL_STORE_DOWN_MS;
    return wake > now? (long) (wake - now): 0;
}

//  The timerfd woke the poll: nothing to read but its count
static void
s_on_timer (server_t *self)
{
    uint64_t expired;
    if (read (self->planner.timer_fd, &expired, sizeof expired) < 0) {
        //  (nothing to do: a non-blocking read of a timer not due)
    }
    self->planner.timer_armed = -1;
}

//  A command on the actor pipe: $TERM (or the pipe gone) stops taking
//  work, and the api socket (api_item) is no longer read
static void
s_on_pipe (server_t *self, zsock_t *pipe, zmq_pollitem_t *api_item, zmq_pollitem_t *http_item)
{
    char *command = zstr_recv (pipe);
    if ((!command || streq (command, "$TERM")) && !self->stopping) {
        //  Stop taking work; wait a bounded time for the agents'
        //  answers to RUNs in flight.  What is left is in the store
        //  and goes again at the next start.
        self->stopping = true;
        self->stop_deadline = zclock_mono () + self->config.stop_wait_ms;
        api_item->events = 0;
        http_item->events = 0;
        xxl_http_stop (self->http_server);
        zsys_info ("server: stopping; %zu request(s) to agents in flight",
                   zhashx_size (self->runs.pending));
    }
    zstr_free (&command);
}

//  Opens the turn's transaction (the store's write lock), notes another
//  scheduler's commits, and sends the fires due first
static void
s_turn_begin (server_t *self)
{
    //  (between turns nothing holds the registry's strings: what it
    //  forgot during the last one is freed)
    xxl_registry_collect (self->registry);
    if (xxl_store_begin (self->store)) {
        //  (a store that is down fails every turn)
        engine_warn_limited (&self->log_begin, "server: cannot begin a transaction: %s",
                             xxl_store_error (self->store));
        self->begin_failed_at = zclock_mono ();
    }
    else
        self->begin_failed_at = 0;
    self->runs.next_log_id = 0;
    self->runs.turn_first_id = self->runs.log_id_floor;
    self->turn++;
    engine_audit_begin (self);
    //  Another scheduler's commits (we hold the write lock from here
    //  on): its stops and edits may void plans, so none fires blind
    int64_t version = xxl_store_data_version (self->store);
    if (version != self->data_version)
        self->planner.foreign_turn = self->turn;
    self->data_version = version;
    //  Leases no longer sure: their plans go before anything fires
    engine_lease_check (self);
    //  A step of the wall clock moves the FIX_DELAY jobs' fires before
    //  any fires by the stepped clock (looked for again here: the begin
    //  and the lease check may have taken a while since the poll)
    s_wall_check (self);
    if (!self->stopping)
        engine_plan_step_apply (self);
    //  Fires due first: nothing in this turn delays them
    if (!self->stopping)
        engine_fire (self);
}

//  Hands each socket with input to its handler; true when the agents
//  socket was read to the end
static bool
s_turn_read (server_t *self, zmq_pollitem_t *items)
{
    //  Answers still queued must not be judged late: deadlines and
    //  the registry are checked only once the agents socket is empty
    bool agents_drained = true;
    if (items [1].revents & ZMQ_POLLIN)
        agents_drained = s_drain (self, self->agents, engine_handle_agent);
    if (items [2].revents & ZMQ_POLLIN)
        s_drain (self, self->api, engine_handle_api);
    if (items [7].revents & ZMQ_POLLIN)
        s_drain (self, self->http, engine_handle_http);
    if (items [3].revents & ZMQ_POLLIN)
        s_drain (self, self->probes, engine_handle_probe);
    if (items [4].revents & ZMQ_POLLIN)
        s_drain (self, self->routed, engine_handle_routed);
    if (items [5].revents & ZMQ_POLLIN)
        engine_alarm_results (self);
    if (engine_now () / 60000 != self->runs.slow_minute) {
        self->runs.slow_minute = engine_now () / 60000;
        zhashx_purge (self->runs.slow_counts);
        zhashx_purge (self->runs.busy_tries);
        engine_runs_pins_expire (self, zclock_mono () - XXL_PIN_KEEP_MS);
    }
    return agents_drained;
}

//  The turn's own work: due fires, planning, the services, pending
//  requests, the registry; close to a fire, what can wait does
static void
s_turn_work (server_t *self, bool agents_drained)
{
    int64_t now = zclock_mono ();
    //  Close to a fire, the work that can wait does (it would make
    //  this turn's commit longer)
    bool near = engine_fire_near (self);
    if (!self->stopping) {
        //  (near a fire it waits, but not past a sixth of the lease)
        if (now >= self->leases.next_lease
        &&  (!near || now >= self->leases.next_lease + self->config.lease_ms / 6))
            engine_lease_round (self);
        //  Due triggers first: planning ahead can wait a turn
        engine_plan_due (self);
        if (now >= self->planner.next_scan && !near)
            engine_plan_scan (self);
        if (!near)
            engine_plan_prepare (self, 1024);
        engine_services_run (self, now);
        if (!near) {
            //  (the retries' waits moved before they are judged)
            s_wall_check (self);
            engine_flows_run (self, now);
        }
        if (!near)
            engine_backfill_run (self, now);
        engine_admit_run (self);
    }
    engine_report_turn (self);
    engine_scoped_report_turn (self);
    engine_log_clear_turn (self);
    if (self->terminated) {
        //  (the last turn: what waits for later turns is answered now)
        engine_report_stop (self);
        engine_scoped_report_stop (self);
        engine_log_clear_stop (self);
    }
    //  (a turn that itself took long may have answers waiting unread)
    if (now >= self->next_pending_check && agents_drained
    &&  zclock_mono () - self->stall_mono < XXL_STALL_MS) {
        engine_runs_expire (self);
        engine_recover_resends (self);
        engine_checks_run (self);
        engine_sweep_run (self, now);
        self->next_pending_check = now + 200;
    }
    if ((now >= self->next_groups || self->terminated)
    &&  zhashx_size (self->apps_changed)) {
        s_groups_refresh (self);
        self->next_groups = now + XXL_GROUPS_MS;
    }
    if (now >= self->next_liveness) {
        engine_runs_liveness (self);
        self->next_liveness = now + xxl_liveness_period (self->config.beat_s);
    }
    //  (as for the requests above: beats read before a turn that itself
    //  stood still, a store call hung on a cut link, are not the last;
    //  and after a step of the wall clock, not before a lease round has
    //  read the store's lead again: its rows are stamped and judged on
    //  the store's clock, which a stale lead puts off by the step)
    if (now >= self->next_registry_check && agents_drained
    &&  zclock_mono () - self->stall_mono < XXL_STALL_MS
    &&  (!self->wall_step_mono || engine_lease_read_at (self) > self->wall_step_mono)) {
        s_check_registry (self);
        self->next_registry_check = now + (int64_t) self->config.beat_s * 1000;
    }
    if (!near || self->terminated)
        engine_accepted_flush (self, self->terminated? INT64_MAX: now);
}

//  After a failed commit: the failure is logged once per cause per
//  XXL_COMMIT_LOG_MS; clients' replies become 500 with the store's error,
//  running LOG_CLEARs roll back, and the turn's messages to agents go
#define XXL_COMMIT_LOG_MS 10000
static void
s_commit_failed (server_t *self)
{
    const char *cause = xxl_store_error (self->store);
    int64_t now = zclock_mono ();
    if (self->commit_logged && streq (self->commit_logged, cause)
    &&  now - self->commit_logged_at < XXL_COMMIT_LOG_MS)
        self->commit_suppressed++;
    else {
        if (self->commit_suppressed)
            zsys_error ("server: commit failed: %s (and in %" PRIu64 " more turns since the last"
                        " such line)", cause, self->commit_suppressed);
        else
            zsys_error ("server: commit failed: %s", cause);
        zstr_free (&self->commit_logged);
        self->commit_logged = strdup (cause);
        self->commit_logged_at = now;
        self->commit_suppressed = 0;
    }
    char text [600];
    snprintf (text, sizeof text, "store error: %s", cause);
    engine_outbox_failed (self, text);
    engine_log_clear_rollback (self, text);
    engine_flows_rollback (self);
    engine_agents_dropped (self);
}

//  Commits the turn (after a fire due within the guard); a failed
//  commit voids what the turn promised
static void
s_turn_commit (server_t *self)
{
    //  The next fire within a second: have the held shares' fired_until cover it now
    int64_t next_fire = xxl_timer_next (self->planner.timer);
    if (next_fire >= 0 && next_fire > self->planner.fired_until && next_fire - engine_now () <= 1000)
        engine_fired_cover (self, next_fire);
    //  What this turn sent with no store access, for a restart
    if (self->planner.sent_max > self->planner.fired_sent)
        xxl_store_lease_fired (self->store, self->leases.held, 0, self->planner.sent_max);
    //  A fire due within the guard goes before this commit, so that
    //  no commit delays it (this turn's replies wait that long)
    if (!self->stopping && engine_fire_near (self))
        engine_fire_wait (self);
    int64_t commit_start = zclock_usecs ();
    int commit_rc = xxl_store_commit (self->store);
    int64_t commit_us = zclock_usecs () - commit_start;
    xxl_histo_observe (&self->metrics.commit, commit_us / 1e6);
    self->metrics.store_ok = commit_rc == 0;
    self->commit_us = commit_us > self->commit_us? commit_us: self->commit_us * 15 / 16;
    if (commit_rc) {
        //  Nothing this turn promised may leave: the clients' replies
        //  become 500 with the cause, the agents' messages are dropped
        //  (agents keep their callbacks and send them again)
        s_commit_failed (self);
        engine_lease_settle (self, false);
        engine_audit_settle (self, false);
        engine_runs_pins_settle (self, false);
        //  Plans of rows that were not written
        void *item;
        while ((item = zlistx_detach (self->planner.turn_plans, NULL))) {
            int64_t log_id = (int64_t) (intptr_t) item;
            zhashx_delete (self->planner.plans, &log_id);
        }
        self->planner.fired_want = self->planner.fired_until;
        //  (a step's moves were rolled back: the next turn makes them)
        self->planner.delay_shift += self->planner.delay_shifted;
        self->planner.delay_shifted = 0;
        //  (sent_max stays: those RUNs left; the next commit records them,
        //  and a recovery before it counts them as sent)
    }
    else {
        engine_audit_settle (self, true);
        engine_lease_settle (self, true);
        engine_runs_pins_settle (self, true);
        self->planner.fired_until = self->planner.fired_want;
        if (self->planner.sent_max > self->planner.fired_sent)
            self->planner.fired_sent = self->planner.sent_max;
        self->planner.sent_max = 0;
        self->planner.delay_shifted = 0;
    }
    zlistx_purge (self->planner.turn_plans);
}

//  Sends what the commit justified; restarts the WAL when due and no
//  fire is close
//  About once a second: the gauges, and a copy of the counters for the
//  HTTP threads (/metrics, /readyz)
static void
s_metrics_publish (server_t *self)
{
    int64_t now = zclock_mono ();
    if (now < self->metrics_next)
        return;
    self->metrics_next = now + 1000;
    xxl_metrics_t *m = &self->metrics;
    m->api_out = (int64_t) (zlistx_size (self->outbox.api_out) + zlistx_size (self->outbox.api_reads));
    m->api_backlog_bytes = (int64_t) self->outbox.backlog_bytes;
    m->agents_out = (int64_t) (zlistx_size (self->runs.agents_out) + zlistx_size (self->runs.agents_always));
    m->pending = (int64_t) zhashx_size (self->runs.pending);
    m->batches = (int64_t) zhashx_size (self->runs.batches);
    m->timer = (int64_t) zhashx_size (self->planner.plans);
    m->fast_queue = (int64_t) xxl_pool_queued (self->runs.fast_pool);
    m->slow_queue = (int64_t) xxl_pool_queued (self->runs.slow_pool);
    int64_t agents = 0;
    size_t cursor = 0;
    xxl_registry_entry_t entry;
    while (xxl_registry_each (self->registry, &cursor, &entry) == 0) {
        agents += entry.connected;
        if (m->labels)
            xxl_labels_registry (m->labels, entry.app, entry.address, entry.connected);
    }
    m->agents = agents;
    m->leases = __builtin_popcountll (self->leases.held);
    m->wal_bytes = -1;
    const char *db = self->config.db;
    if (strncmp (db, "postgres://", 11) && strncmp (db, "postgresql://", 13)) {
        char wal [4096];
        struct stat st;
        snprintf (wal, sizeof wal, "%s-wal", db);
        m->wal_bytes = stat (wal, &st) == 0? (int64_t) st.st_size: 0;
    }
    m->ready = m->store_ok && !(self->runs.awaited_left && now < self->warm_until)
            && !engine_lease_deaf (self);
    xxl_metrics_publish (self->metrics_box, m);
}

static void
s_turn_flush (server_t *self)
{
    engine_runs_flush (self);
    engine_outbox_flush (self);
    engine_first_admin_check (self);
    s_metrics_publish (self);
    //  The WAL's restart holds the engine up for its fsyncs: not
    //  close to a fire, unless the WAL is past four times its size
    int wal = xxl_store_wal_due (self->store);
    if (wal == 2 || (wal == 1 && !engine_fire_within (self, XXL_WAL_FIRE_MS)))
        xxl_store_wal_restart (self->store);
}

//  The sockets this turn sent on are checked before the next wait (a
//  send may take the command that would have woken the poll); those it
//  read from are, as the poll left them
static void
s_poll_used (server_t *self, zmq_pollitem_t *items)
{
    static const struct { unsigned sent; int slot; } s_slots [] = {
        { XXL_SENT_AGENTS, 1 }, { XXL_SENT_API, 2 }, { XXL_SENT_PROBES, 3 }, { XXL_SENT_HTTP, 7 }
    };
    for (size_t i = 0; i < sizeof s_slots / sizeof s_slots [0]; i++)
        if (self->sent & s_slots [i].sent)
            items [s_slots [i].slot].events &= (short) ~XXL_POLL_QUIET;
    self->sent = 0;
}

void
xxl_server_actor (zsock_t *pipe, void *args)
{
    xxl_server_config_t *config = (xxl_server_config_t *) args;
    server_t *self = s_server_new (pipe, config);
    config->status = self? 0: -1;
    if (!self) {
        zsock_signal (pipe, 1);
        return;
    }
    zsock_signal (pipe, 0);
    //  (each socket is checked before the wait only when a turn used it
    //  since its last check: XXL_POLL_TRACK, s_poll_used)
    const short in = ZMQ_POLLIN | XXL_POLL_TRACK;
    zmq_pollitem_t items [] = {
        { zsock_resolve (pipe), 0, in, 0 },
        { zsock_resolve (self->agents), 0, in, 0 },
        { zsock_resolve (self->api), 0, in, 0 },
        { zsock_resolve (self->probes), 0, in, 0 },
        { zsock_resolve (self->routed), 0, in, 0 },
        { NULL, xxl_alarms_fd (self->alarms), ZMQ_POLLIN, 0 },
        { NULL, self->planner.timer_fd, ZMQ_POLLIN, 0 },
        { zsock_resolve (self->http), 0, in, 0 },
        { self->runs.monitor? zsock_resolve (self->runs.monitor): NULL, -1, in, 0 },
    };
    //  (no monitor: its slot is left out of the poll)
    int slots = self->runs.monitor? 9: 8;
    while (!self->terminated) {
        long timeout = s_turn_timeout (self);
        if (xxl_transport_poll (items, slots, timeout) < 0) {
            if (zmq_errno () == EINTR)
                continue;               //  a signal: main decides
            break;
        }
        s_stall_check (self, timeout);
        if (items [6].revents & ZMQ_POLLIN)
            s_on_timer (self);
        //  A connection closed: the liveness probe finds which, soon
        if (slots > 8 && (items [8].revents & ZMQ_POLLIN)) {
            int64_t probe = engine_runs_monitor_read (self);
            if (probe && probe < self->next_liveness)
                self->next_liveness = probe;
        }
        if (items [0].revents & ZMQ_POLLIN)
            s_on_pipe (self, pipe, &items [2], &items [7]);
        if (self->stopping && (zhashx_size (self->runs.pending) + zhashx_size (self->runs.batches) == 0
                           ||  zclock_mono () >= self->stop_deadline))
            self->terminated = true;
        s_turn_begin (self);
        bool agents_drained = s_turn_read (self, items);
        s_turn_work (self, agents_drained);
        s_turn_commit (self);
        s_turn_flush (self);
        s_poll_used (self, items);
    }
    s_server_destroy (&self);
    xxl_openssl_thread_stop ();
}
