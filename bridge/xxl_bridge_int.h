/*  xxl_bridge_int.h -- the bridge's state, shared by its two halves.

    Internal to xxl-bridge.  xxl_bridge_exec.c owns the executors and
    their links to the schedulers (registry, REGISTER beats, expiry, what
    is sent on a link); xxl_bridge.c owns runs and results (the
    schedulers' requests as calls, callbacks to CALLBACKs, lost runs) and
    the loop.  The loop is the only thread: nothing here is locked.
*/

#ifndef XXL_BRIDGE_INT_H_INCLUDED
#define XXL_BRIDGE_INT_H_INCLUDED

#include "xxl_bridge.h"
#include "xxl_bridge_admin.h"
#include "xxl_bridge_call.h"
#include "xxl_bridge_net.h"
#include "xxl_bridge_routes.h"
#include "xxl_bridge_wire.h"

#include "xxl_journal.h"
#include "xxl_spool.h"
#include "xxl_transport.h"

#include <xxl/msg.h>
#include <inttypes.h>

//  Most results of one CALLBACK batch, and how long its answer may take
#define BRIDGE_BATCH_MAX      1000
#define BRIDGE_BATCH_WAIT_MS  5000
//  Most bytes of one CALLBACK batch, as xxl_bridge.c counts them (a
//  result alone always fits: its handleMsg is at most BRIDGE_MSG_MAX);
//  far below the frame a scheduler takes (XXL_MSG_MAX_FRAME)
#define BRIDGE_BATCH_BYTES    (1024 * 1024)
//  Most bytes of a handleMsg the bridge keeps and sends: what a scheduler
//  stores of one (docs/protocol.md), cut between characters
#define BRIDGE_MSG_MAX        15000
//  One line per this many ms for the warnings that could flood the log
#define BRIDGE_LOG_EVERY_MS   10000
//  bridge.executors is written at most once per this many ms
#define BRIDGE_SAVE_EVERY_MS  1000
//  A turn longer than its poll's wait by more than this: the loop stood
//  still (the bridge stopped or starved of CPU), and that time counts as
//  no one's silence
#define BRIDGE_LOOP_STALL_MS  1000

typedef struct _bridge_t bridge_t;
typedef struct _executor_t executor_t;

//  One executor's DEALER to one scheduler endpoint
typedef struct {
    executor_t *exec;
    const char *endpoint;           //  the bridge's
    zsock_t *dealer;
    int fd;                         //  its ZMQ_FD (readable: look at the socket)
    bool check;                     //  read it before the loop waits (ZMQ_FD
                                    //  signals edges, and a send may take one)
    void *monitor;
    bool registered;                //  its last REGISTER was answered 200
    uint64_t register_id;
    int64_t register_sent;          //  zclock_mono
    int64_t unanswered;             //  the first REGISTER not answered since (mono)
    int64_t clock_offset;           //  the scheduler's clock - zclock_mono
    uint64_t batch_id;              //  the CALLBACK in flight (0: none)
    int64_t batch_sent;
    int64_t *batch;                 //  its logIds
    const xxl_result_t **results;   //  their results, while the batch is built
    size_t batch_count, batch_cap;
    size_t batch_bytes;             //  its results' bytes, as counted
    int64_t retry_at;               //  no CALLBACK before (after a refusal)
    bool broken;                    //  a handshake failed for good: replace it
    int64_t heard;                  //  the last message from the scheduler (mono)
} link_t;

struct _executor_t {
    char *key;                      //  APP "\t" URL
    char *app, *url;
    int64_t seen;                   //  its last registry call (zclock_mono)
    bool expired;                   //  unregistered, draining
    size_t calls;                   //  calls of it in flight
    link_t *links;                  //  one per scheduler endpoint
};

struct _bridge_t {
    const xxl_bridge_config_t *config;
    char **endpoints;
    size_t nendpoints;
    zcert_t *cert;
    char *server_key;
    zhashx_t *executors;            //  key -> executor_t
    zhashx_t *called;               //  URLs logged as called
    zhashx_t *in_flight;            //  "LOGID" -> link_t, results in a CALLBACK
    zhashx_t *open_runs;            //  "LOGID" -> open_run_t
    int64_t next_lost_check;
    void *last_pending;             //  the pending_t of the last call started
    xxl_bridge_net_t *net;
    xxl_bridge_admin_t *admin;
    xxl_bridge_call_t *call;
    xxl_spool_t *spool;
    xxl_journal_t *journal;
    xxl_bridge_routes_t *routes;
    xxl_enc_t *enc;
    uint64_t next_id;
    bool deliver;                   //  results wait to be sent
    int64_t deliver_at;             //  a pass is due then (a link's retry_at
                                    //  that held results back), 0 none
    int64_t next_beat;
    int64_t next_monitor;           //  the links' socket events are read then
    int64_t turn_at;                //  when the last turn's stall was judged (mono)
    int64_t waited;                 //  of the time since, spent in the poll's wait
    //  rate-limited log lines: when the last went, how many were held back
    int64_t refused_logged, unknown_logged, handshake_logged, flip_logged;
    size_t refused_held, unknown_held, handshake_held, flip_held;
    bool executors_dirty;           //  bridge.executors is behind the executors
    int64_t executors_saved;        //  when it was last written (mono)
};

//  A run this life sent and the executor took, until its result comes
typedef struct {
    int64_t log_id, job_id, log_date_time;
    char *key;                      //  its executor's
    int idle;                       //  lost checks in a row that found its job idle
    bool asking;                    //  an idleBeat about it is in flight
} open_run_t;

//  A call in flight: what to answer when it ends
typedef struct {
    bridge_t *bridge;
    link_t *link;
    char type [16];                 //  the scheduler's request
    uint64_t id;                    //  its id
    int64_t log_id;                 //  RUN
    int64_t from_byte;              //  LOG by byte (-1: by line)
    int64_t job_id, log_date_time;  //  RUN
} pending_t;

//  How often the links' socket monitors are read (a new connection
//  REGISTERs within this)
#define BRIDGE_MONITOR_MS  100

//  Most bytes of a LOG page by byte
#define BRIDGE_LOG_PAGE  (64 * 1024)

//  Messages to the schedulers (xxl_bridge_exec.c): every one starts with
//  bridge_begin (a request) or bridge_reply_begin, so every one carries
//  the access token; bridge_send sends the encoder's message on a link
//  (-1 when it cannot go now: down, or its queue full)
void bridge_begin (bridge_t *self, const char *type, uint64_t id);
void bridge_reply_begin (bridge_t *self, uint64_t id, int code, const char *msg);
int bridge_send (bridge_t *self, link_t *link);
void bridge_reply (bridge_t *self, link_t *link, uint64_t id, int code, const char *msg);
//  REGISTER (remove false) or UNREGISTER of the link's executor
void bridge_register (bridge_t *self, link_t *link, bool remove);

//  Reads the link's socket events: REGISTERs when a connection comes up;
//  a failed handshake is logged (rate-limited) and, when no retry can
//  mend it (a refused key, CURVE on one end only) or its reason is a
//  protocol error, marks the link broken
void bridge_link_events (bridge_t *self, link_t *link);
//  true when the link should get a new socket: broken, or its REGISTER
//  unanswered for two beats (at least 15 s) with nothing heard meanwhile
//  (libzmq 4.3.4 does not always recover a stalled connection itself)
bool bridge_link_stale (bridge_t *self, link_t *link, int64_t now);
//  Gives the link a new socket to the same endpoint and REGISTERs on it
//  (the caller has put its CALLBACK batch back first)
void bridge_link_replace (bridge_t *self, link_t *link);

//  The executors (xxl_bridge_exec.c)
//  The admin's registry and registryRemove (xxl_admin_registry_fn)
int bridge_on_registry (void *arg, const xxl_wire_registry_t *registry, bool remove,
                        const char *peer, char *why, size_t whylen);
//  Unregisters executors silent for expire_s; frees expired ones with no
//  call in flight and no result spooled
void bridge_executors_check (bridge_t *self);
//  Registers again the live executors of the bridge's last run
void bridge_executors_load (bridge_t *self);
//  Writes bridge.executors when it is behind: at once when now, else
//  when BRIDGE_SAVE_EVERY_MS passed since the last write (run each turn)
void bridge_executors_flush (bridge_t *self, bool now);
//  zhashx destructor of an executor_t
void bridge_executor_free (void **item);

//  Logs line at most once per BRIDGE_LOG_EVERY_MS for its kind (last,
//  held), with the count of those held back: a warning, or (info) an info
void bridge_ratelog (int64_t *last, size_t *held, const char *line);
void bridge_ratelog_at (int64_t *last, size_t *held, bool info, const char *line);

#endif
