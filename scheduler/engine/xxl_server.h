/*  xxl_server.h -- the scheduler engine, as a czmq actor.

    One thread owns the api ROUTER (clients), the agents ROUTER, the store
    and the registry.  Each turn of its loop reads every message waiting
    (up to a batch limit), applies their writes in one transaction, commits,
    and only then sends the replies and RUN messages those writes justify:
    group commit, and a trigger's log row always exists before its RUN
    leaves.  The actor's pipe takes "$TERM".

        xxl_server_config_t config = { ... };
        zactor_t *server = zactor_new (xxl_server_actor, &config);
        //  NULL-safe: zactor_new returns once the sockets are bound or
        //  binding failed; check xxl_server_started (server)
*/

#ifndef XXL_SERVER_H_INCLUDED
#define XXL_SERVER_H_INCLUDED

#include <czmq.h>

//  The HTTP server (xxl_http.h; docs/http.md)
typedef struct {
    const char *endpoint;               //  "HOST:PORT" to bind, or "none" (off)
    bool chosen;                        //  endpoint given (flag or config), not the
                                        //  default: failing to bind it stops the start
    const char *cert;                   //  PEM certificate and key: HTTPS (NULL: plain)
    const char *key;
    const char *console;                //  the console's files folder
    int session_idle_s;                 //  a session unused this long ends
    int remember_s;                     //  a remembered one's (its cookie's Max-Age;
                                        //  0: no login is remembered)
    int max_body;                       //  bytes of a request body (413 past it)
    int login_burst;                    //  failed logins per address and per user
                                        //  name before they are limited (0: no limit)
    int login_interval_s;               //  then one attempt per this many seconds
    int login_slots;                    //  entries of the limiter's table
    int per_address;                    //  connections from one client address at
                                        //  once (0: no limit but the total)
    const char *hosts;                  //  the Host names answered, comma-separated
                                        //  (NULL, "" or "*": any)
    const char *xxl_admin_path;         //  XXL-JOB admin's console endpoints under
                                        //  this path (NULL or "": not served)
    const char *xxl_admin_timezone;     //  the zone of the jobs those endpoints and
                                        //  the OpenAPI add (NULL or "": UTC)
    int request_timeout_s;              //  a request whole within this of its
                                        //  connection's accept (or the last
                                        //  answer), whatever bytes come
    int health_slots;                   //  connections kept for /healthz, /readyz
    int metrics_jobs;                   //  jobs with labelled series (0: none)
    int metrics_agents;                 //  agent addresses with labelled figures
    int initial_admin;                  //  1: a store with no user gets user admin, its
                                        //  password in state_dir (xxl_first_admin.h)
    const char *state_dir;              //  the state folder (NULL: none could be had,
    const char *state_error;            //  and why)
} xxl_http_config_t;

typedef struct {
    const char *db;                     //  the store: an SQLite path or a PostgreSQL URL
    const char *api;                    //  api endpoint, bind
    const char *agents;                 //  agents endpoint, bind
    const char *plugins;                //  router plugins folder
    const char *alarm_plugins;          //  alarm plugins folder
    zconfig_t *file;                    //  the config file (alarm keys), or NULL
    const char *access_token;           //  "" or NULL: none required
    const char *cert;                   //  secret certificate: CURVE on (NULL: off)
    const char *keys;                   //  folder of the public certificates let in
    bool insecure;                      //  bind beyond loopback without a certificate
    int keys_check_ms;                  //  how often the keys folder is read again
    const char *ready_file;             //  written with the bound endpoints once ready
    const char *admin_address;          //  shown in triggerMsg
    int beat_s;                         //  agent beat interval (registry monitor period)
    int dead_s;                         //  agent dead after this many seconds silent
    int registry_limit;                 //  agents (app, address) the registry holds at
                                        //  most, parting addresses counted (0: no limit)
    int run_timeout_ms;                 //  wait for an agent's RUN reply
    int request_timeout_ms;             //  wait for an agent's LOG/KILL reply
    int batch;                          //  messages per loop turn (group commit size)
    int fast_pool;                      //  threads of the fast trigger pool
    int slow_pool;                      //  threads of the slow trigger pool
    int pool_queue;                     //  triggers a pool may hold waiting
    int probe_timeout_ms;               //  FAILOVER/BUSYOVER probe timeout
    int slow_ms;                        //  a trigger routed slower than this is slow
    int slow_count;                     //  slow more than this often in a minute →
                                        //  the job moves to the slow pool (XXL-JOB: 500, 10)
    int preread_ms;                     //  misfire bound (XXL-JOB's pre-read: 5 s)
    int ahead_ms;                       //  planner window: rows written this far
                                        //  ahead (used as min (ahead_ms, preread_ms))
    int scan_ms;                        //  planner scan period
    int warmup_ms;                      //  after start, planned triggers wait up to
                                        //  this long for their group's agents
    int fail_check_ms;                  //  fail monitor period
    int lost_check_ms;                  //  lost-run monitor period
    int lost_after_ms;                  //  a run without result this long, agent gone: lost
    int report_ms;                      //  daily report refresh period
    int retention_check_ms;             //  log retention period
    int retention_days;                 //  log rows kept (0: forever)
    int audit_retention_days;           //  audit rows kept (0: forever)
    int keep_last;                      //  at most this many log rows (0: no limit)
    int alarm_every_failure;            //  1: alarm each failed attempt, not only the last
    int stop_wait_ms;                   //  at SIGTERM, wait this long for RUN answers
    int wal_size_mb;                    //  the store's WAL starts over at this size
    int recovery_wait_ms;               //  after a restart, wait this long for an
                                        //  agent to re-send what it may have got
    const char *node;                   //  this scheduler's name among those sharing
                                        //  the store (NULL: host name and api endpoint)
    int lease_ms;                       //  a share's lease lasts this long unrenewed
    xxl_http_config_t http;             //  the HTTP server
    int status;                         //  out: 0 once serving, -1 when start failed
} xxl_server_config_t;

//  The default HTTP endpoint (127.0.0.1:8080); the same pointer each call
const char *xxl_server_http_default (void);
//  Fills config with the defaults.
void xxl_server_config_defaults (xxl_server_config_t *config);
//  The actor: args is an xxl_server_config_t * (copied during start).
//  Signals 0 on the pipe when ready, -1 when start failed (reason logged).
void xxl_server_actor (zsock_t *pipe, void *args);

#endif
