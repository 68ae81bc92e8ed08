/*  xxl_bridge.h -- xxl-bridge: XXL-JOB executors as xxl agents.

    To the executors the bridge is an XXL-JOB admin (xxl_bridge_admin.h);
    to the schedulers each live executor is an agent address of its app,
    named by its URL, on a DEALER connection of its own to each scheduler
    endpoint (REGISTER, CALLBACK, REPLY: docs/protocol.md, Agent
    protocol); the scheduler's RUN, KILL, LOG, BEAT and IDLE_BEAT become
    calls of the executor's run, kill, log, beat and idleBeat
    (xxl_bridge_call.h).  One thread runs it all: one poll over the
    DEALERs, the admin's sockets and the calls' sockets.

    Guarantees (DESIGN §5 through the bridge): a logId is journaled
    (agent/xxl_journal.h) before its run is called, so no logId is sent to
    an executor twice, across restarts of the bridge too; an executor's
    callbacks are spooled (agent/xxl_spool.h) before it is answered, and
    leave the spool only once a scheduler acknowledged them, on the link
    of the executor the run went to (xxl_bridge_routes.h); only URLs that
    registered with the right token and lie within the allowed networks
    are called; an executor restarted at the same address mid-run (which
    keeps the address registered, so the scheduler's lost-run monitor
    never sees it) has the runs it lost failed: a run of this life open
    for two lost checks whose job the executor's idleBeat says is idle at
    both gets a result 500 "lost: ...".
*/

#ifndef XXL_BRIDGE_H_INCLUDED
#define XXL_BRIDGE_H_INCLUDED

#include <czmq.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const char *schedulers;         //  agents endpoints, comma-separated
    const char *listen;             //  HOST:PORT of the admin
    const char *path;               //  the admin's path (/xxl-job-admin)
    const char *token;              //  access token, both sides ("" none)
    const char *executors;          //  networks executors may be in (CIDR,...)
    const char *cert;               //  own secret certificate (CURVE) or NULL
    const char *scheduler_key;      //  the scheduler's public certificate
    const char *logdir;             //  spool, journal, routes
    const char *ready_file;         //  written once listening ("listen=HOST:PORT")
    bool insecure;                  //  the admin may listen off loopback in plain text
    const char *tls_cert, *tls_key; //  the admin's HTTPS (PEM files) or NULL
    int beat_s;                     //  REGISTER beat (30)
    int expire_s;                   //  an executor not heard from goes (90)
    int run_timeout_ms;             //  a run call (8,000)
    int probe_timeout_ms;           //  beat and idleBeat calls (900)
    int request_timeout_ms;         //  kill and log calls (4,000)
    int executors_max;              //  executors held at once (1,000)
    int parallel;                   //  calls on the wire at once (64)
    int queued;                     //  calls held at once (10,000)
    int lost_check_s;               //  asks about open runs every (60; 0: never)
    int admin_timeout_s;            //  an executor's request must come whole within (30)
} xxl_bridge_config_t;

void xxl_bridge_config_defaults (xxl_bridge_config_t *config);

//  Runs the bridge until zsys_interrupted; returns the exit status (0, or
//  1 when it could not start: logged)
int xxl_bridge_run (const xxl_bridge_config_t *config);

#ifdef __cplusplus
}
#endif

#endif
