/*  xxl_agent.h -- the agent's network side, as a czmq actor.

    The agent dials every configured scheduler with one DEALER each and
    registers (REGISTER is also the heartbeat); a socket monitor re-registers
    the moment a connection comes (back) up, so a restarted scheduler knows
    its agents at once.  It answers RUN, BEAT, IDLE_BEAT, KILL and LOG, and
    sends finished runs back in CALLBACK batches, keeping each result until
    a scheduler acknowledged it.  Running the triggers is the executor's
    work (xxl_executor.h).  The actor's pipe takes "$TERM".

    Security (DESIGN §8): every message it sends carries the access token
    when it has one.  With a certificate and the scheduler's public key
    every link is a CURVE client that talks only to the scheduler of that
    key: a server of another key never completes the handshake, so it can
    send nothing this agent would run.  A failed handshake is logged (at
    most once a minute per link after the first); a start with a bad
    certificate file fails.  Without keys, a scheduler endpoint that is
    not loopback gets a warning at start.
*/

#ifndef XXL_AGENT_H_INCLUDED
#define XXL_AGENT_H_INCLUDED

#include <czmq.h>
#include <signal.h>

typedef struct {
    const char *app;                    //  registryKey: the group's app name
    const char *schedulers;             //  comma-separated endpoints to dial
    const char *address;                //  registryValue; default: hostname
    const char *plugins;                //  handler plugins folder
    const char *logdir;                 //  run logs, glue sources, spool
    const char *access_token;           //  sent with every message ("" none)
    const char *cert;                   //  this agent's secret certificate
                                        //  file (NAME.cert_secret), or NULL
    const char *scheduler_key;          //  the schedulers' public certificate
                                        //  file, or NULL; both or neither: with
                                        //  them every link is CURVE, to that
                                        //  key's scheduler only
    const char *runner;                 //  xxl-runner path (NULL: default)
    const char *tags;                   //  agent tags said at REGISTER ("K=V,...",
                                        //  canonical, xxl_tags.h; "": none)
    int beat_s;                         //  heartbeat interval
    int callback_timeout_ms;            //  wait for a callback's ack
    int run_lease_s;                    //  runs are stopped once no scheduler
                                        //  answered a REGISTER sent this long
                                        //  ago (0: never; said in REGISTER)
    int allow_glue;                     //  0: refuse GLUE runs
    int in_process;                     //  1: BEAN handlers in the agent process
    int log_retention_days;             //  run logs kept (minimum 3)
    int log_pack;                       //  1: short in-process runs' logs in
                                        //  the day's runs.pack (xxl_runpack.h)
    int run_batch;                      //  runBatch said at REGISTER (<= 1: the
                                        //  single form of RUN only)
    int threads_max;                    //  the executor's pool threads at most
                                        //  (<= 0: sized to the machine)
    int waiting_max;                    //  runs waiting for a thread before
                                        //  RUNs are refused busy (0: 10,000)
    int idle_reap_s;                    //  a job's queue idle this long is
                                        //  retired, its lifecycle's destroy
                                        //  run (agent/idle_reap_s; 1-86400)
    int drain_ms;                       //  a clean stop (SIGTERM) refuses new
                                        //  runs and lets queued and running ones
                                        //  finish this long, then kills them
                                        //  (agent/drain_s; agent/stop_wait, in
                                        //  ms, is its deprecated alias)
    volatile sig_atomic_t *interrupts;  //  NULL, or a count of SIGTERM/SIGINT
                                        //  received: one more during the drain
                                        //  ends it at once
    int status;                         //  out: 0 once running, -1 start failed
} xxl_agent_config_t;

void xxl_agent_config_defaults (xxl_agent_config_t *config);
//  The actor; args is an xxl_agent_config_t * (its strings must outlive
//  the actor).  Sets config->status before its first signal.
void xxl_agent_actor (zsock_t *pipe, void *args);

#endif
