/*  xxl_engine.h -- what the scheduler engine's files share; nothing else includes it.

    The engine is one actor (xxl_server.c) whose state is server_t.  Its
    work is split by responsibility over these files, all on the actor's
    thread:
        xxl_server.c    the actor: its loop, startup, recovery hand-off,
                        config defaults, shared helpers, the pending table
        xxl_outbox.c    what leaves after a turn's commit: clients' replies
                        (with their backlogs), agents' messages, a failed
                        commit's consequences
        xxl_agents.c    requests to agents and their answers; agent
                        messages (REGISTER, CALLBACK, REPLY); batches of RUNs
        xxl_trigger.c   a trigger: addresses, routing, rows, triggerMsg,
                        dispatch of a row to its agent, run answers
        xxl_job.c       a job's fields from a request: validation, defaults,
                        the next fire time of each schedule type
        xxl_planner.c   the planner: scan, pre-read window, timer, prepared
                        fires of planned instants, misfires, recovery
        xxl_services.c  child jobs, the fail and lost monitors, retries,
                        alarms, reports, log retention
        xxl_api*.c      the client api: receiving, its table, judging a
                        request by its command's fields (xxl_commands.c),
                        and the handlers by resource (xxl_api.h); the
                        audit of its changes (xxl_api_audit.c), users and
                        tokens, and the HTTP side's socket (xxl_api_users.c)
    Off the actor's thread: xxl_http.c (libmicrohttpd's threads) serves
    HTTP and sends each REST call to the actor's inproc `http` socket;
    it reads the counters the actor publishes (xxl_metrics.h) about once
    a second.
    Functions named engine_* are shared among these files and nowhere
    else; s_* functions are static to their file.
*/

#ifndef XXL_ENGINE_H_INCLUDED
#define XXL_ENGINE_H_INCLUDED

#include "xxl_server.h"
#include <poll.h>
#include <sys/timerfd.h>
#include "xxl_store.h"
#include "xxl_registry.h"
#include "xxl_heard.h"
#include "xxl_routers.h"
#include "xxl_pool.h"
#include "xxl_timer.h"
#include "xxl_schedule.h"
#include "xxl_keys.h"
#include "xxl_alarms.h"
#include "xxl/msg.h"
#include "xxl_transport.h"
#include "xxl/cron.h"
#include "xxl/handler.h"
#include "xxl_tz.h"
#include "xxl_commands.h"
#include "xxl_metrics.h"
#include "xxl_http.h"
#include "xxl_reporter.h"
#include <inttypes.h>
#include <unistd.h>

#define XXL_MAX_TEXT        (64 * 1024)         //  desc, param, msg fields
//  A FIX_DELAY job waits for its run to finish: next time "never" until then
#define XXL_WAITING         253402300799000LL
//  The periodic services (xxl_services.c), by index in service_next
enum { XXL_SERVICE_FAIL, XXL_SERVICE_LOST, XXL_SERVICE_REPORT, XXL_SERVICE_RETENTION,
       XXL_SERVICE_KEYS, XXL_SERVICES };
#define XXL_HANDLE_MSG_CAP  15000
#define XXL_IDS_AHEAD       256                 //  request ids drawn per getrandom
#define XXL_ADDRESSES_PER_CONNECTION 16         //  addresses one keyed agent connection registers
#define XXL_WAL_FIRE_MS     100                 //  no WAL restart this close to a fire
//  Replies a client's ZeroMQ queue (xxl_transport: XXL_ROLE_API) has no
//  room for wait in its backlog, up to these bytes; what a client that
//  stops reading can cost us
#define XXL_API_BACKLOG     (64 * 1024 * 1024)
#define XXL_API_BACKLOGS    (256 * 1024 * 1024) //  (all clients together)
#define XXL_API_LARGE       (64 * 1024)         //  a reply this large waits for the
                                                //  client's socket to be drained
#define XXL_API_TURN_BYTES  (16 * 1024 * 1024)  //  replies a turn reads requests for
#define XXL_RETURN_EXTRA    5                   //  api return address: routing id,
                                                //  socket fd (int32), then peer kind:
#define XXL_PEER_DEALER     0 
#define XXL_PEER_REQ        1
#define XXL_PEER_HTTP       2                   //  (on the http socket: xxl_api_users.c)


typedef enum {
    PENDING_RUN, PENDING_LOG, PENDING_KILL, PENDING_PROBE,
    PENDING_CHECK,                      //  whether the agent holds an open run (s_check_open_runs)
    PENDING_DOUBT                       //  whether the agent took a RUN whose answer never
                                        //  came (xxl_doubts.c)
} pending_kind_t;

typedef struct {
    uint64_t id;                        //  request id sent to the agent (hash key)
    pending_kind_t kind;
    int64_t log_id;
    int64_t deadline;
    char *address;
    char *note;                         //  router text for the RUN's triggerMsg
    int64_t presumed;                   //  RUN: characters of the "code: 200"
                                        //  section written ahead into triggerMsg
    int64_t stamp;                      //  RUN of a prepared fire: its trigger time, not
                                        //  written yet (0: written)
    bool gone;                          //  the send failed: the agent is gone
    int64_t created;                    //  monotonic ms it was made (metrics)
    void *rid;                          //  the connection it went to (its reply
    size_t rid_size;                    //  counts from there, or the address's now)
    size_t expire_offset;               //  RUN, single form: of its expireTime value in
                                        //  the message (0: none)
    bool ask;                           //  RUN sent expired, asking whether the agent
                                        //  took it before (engine_ask_answer)
    zframe_t *client;                   //  client routing id (LOG/KILL forwards, probes)
    uint64_t client_id;                 //  the client's request id
    //  An audited request forwarded to the agent (LOG_KILL): recorded with
    //  its answer (engine_audit_answer); NULL when not audited
    const char *audit_type;             //  its command's name (static)
    char *audit_who;                    //  its sender's key name and role
    char *audit_role;
} pending_t;

//  RUNs to one agent in the batch form (the agent's REGISTER said
//  runBatch): filled during a turn, sent at the flush (or when full, or
//  before another message to that agent), then kept until its answer
typedef struct {
    uint64_t id;                        //  the batch RUN's request id (hash key)
    char *address;
    void *rid;
    size_t rid_size;
    uint64_t *pending_ids;              //  the pending_t of each item, in order
    size_t count, alloc;
    size_t max;                         //  items the agent takes in one RUN
    size_t bytes;                       //  of the items so far
    xxl_enc_t *enc;                     //  the message while it fills (NULL once sent)
    int64_t deadline;                   //  monotonic ms: forgotten after
    int64_t created;                    //  wall-clock ms it was begun
    int64_t created_mono;               //  the same, monotonic
    size_t expire_offset;               //  of its expireTime value in the message
    //  A batch of prepared fires (engine_fire) carries their plans instead of
    //  pending requests: nothing is allocated per fire at the instant
    struct _fire_item_t *fires;
    size_t fires_alloc;
    bool gone;                          //  its send failed
    //  Prebuilt (engine_instant_add): filled while its fires are planned; its
    //  plans stay in self->plans (borrowed) until the batch leaves
    bool prebuilt;
    bool dirty;                         //  a plan left it, or its job changed
    uint64_t min_turn, max_turn;        //  of the turns that wrote its rows
} run_batch_t;

//  The prebuilt batches of one instant: one timer entry (log id 0) stands
//  for all of them, so the instant itself only stamps and sends
typedef struct {
    int64_t when;                       //  planned fire time (hash key)
    zlistx_t *batches;                  //  run_batch_t, prebuilt (owned)
} instant_t;

//  A prepared fire in a batch: its plan (owned, off self->plans) and the
//  time it went
typedef struct _fire_item_t {
    struct _plan_t *plan;
    int64_t stamp;
    size_t offset;                      //  of its logDateTime in the message
} fire_item_t;

//  A recovered row waiting for its agent to come back
typedef struct {
    int64_t log_id;
    char *address;
    int64_t deadline;
} xxl_resend_t;

//  A recovered row that may have left just before the previous owner of
//  its share stopped, now past the pre-read window: its agent is asked
//  (engine_recover)
typedef struct {
    int64_t log_id;                     //  (hash key)
    int64_t job_id;
    int64_t deadline;                   //  monotonic ms: past it, counted as sent
                                        //  (then: forgotten)
    bool counted;                       //  counted as sent, its agent away: still
                                        //  asked should it come back
} xxl_ask_t;

//  A RUN the agent accepted whose trigger_code is not written yet: the
//  callback usually comes first and writes both in one statement
typedef struct {
    int64_t log_id;                     //  0 once the callback wrote it
    int64_t at;                         //  monotonic ms of the answer
    int64_t stamp;                      //  trigger time still to write (0: none)
} accepted_t;

//  A job as the planner last read it, shared by its planned triggers
typedef struct {
    xxl_job_t job;
    xxl_schedule_t *schedule;           //  the job's schedule compiled (NULL: invalid)
    int refs;
    int64_t read_at;                    //  monotonic ms it was known current
    bool cancelled;                     //  the job stopped or changed: its plans
                                        //  are void
    zlistx_t *plan_ids;                 //  log ids of its plans not sent yet
} snap_t;

//  A planned trigger on the timer heap: what its dispatch needs, so that
//  firing it reads nothing from the store
typedef struct _plan_t {
    int64_t log_id;
    snap_t *snap;
    int shard_index;
    int shard_total;
    bool sharded;                       //  the row carries executorShardingParam
    //  Prepared (routed at planning, the row written with its address):
    //  the RUN leaves at the instant with no store access (engine_fire)
    char *address;                      //  NULL: not prepared
    char *note;                         //  the router's text
    unsigned char *tp;                  //  TriggerParam from engine_encode_tp
    size_t tp_size;
    uint64_t turn;                      //  the turn that wrote the row
    void *handle;                       //  in snap->plan_ids
    run_batch_t *prebuilt;              //  the instant's batch that holds it
    size_t slot;                        //  its item there
} plan_t;

//  Routing of a deferred row made at planning (engine_trigger's `prepared`)
typedef struct {
    char *address;                      //  NULL: not prepared
    char *note;
} prepared_t;

//  A log line that a peer can provoke at will is written at most once per
//  XXL_RATELOG_MS per kind; the next one says how many were left out
#define XXL_RATELOG_MS 10000
//  While the store cannot begin a transaction, turns with no input come
//  no more often than this (s_turn_timeout)
#define XXL_STORE_DOWN_MS 100
typedef struct {
    int64_t logged_at;                  //  monotonic ms of the last line (0: none)
    uint64_t suppressed;                //  lines left out since
} ratelog_t;

//  Info lines of a kind a peer can provoke, each one ordinary (an agent
//  registered): a burst of XXL_INFOLOG_BURST goes out (1,000 agents
//  starting at once are each named), then XXL_INFOLOG_PER_S a second;
//  the next line that goes out says how many were left out
#define XXL_INFOLOG_BURST 1000
#define XXL_INFOLOG_PER_S 10
typedef struct {
    double tokens;                      //  lines that may go out now
    int64_t filled_at;                  //  monotonic ms tokens was counted at (0: full)
    uint64_t suppressed;                //  lines left out since the last one
} infolog_t;

//  Replies to one client that its connection's queue had no room for,
//  oldest first (sent before any newer reply to it)
typedef struct {
    zlistx_t *msgs;                     //  zmsg_t * [return address][reply]
    size_t bytes;
} backlog_t;

typedef struct {
    xxl_server_config_t config;
    zsock_t *pipe;
    zsock_t *api;
    zsock_t *agents;
    xxl_store_t *store;
    xxl_registry_t *registry;
    xxl_enc_t *enc;
    zlistx_t *api_out;                  //  zmsg_t * to send after commit
    size_t api_out_bytes;               //  in api_out and api_reads
    int api_fd;                         //  the socket of the api message in hand (-1)
    zlistx_t *api_reads;                //  replies to reads: sent whatever the commit
    bool api_read;                      //  the api request in hand is a read
    char *commit_logged;                //  the last commit failure logged, and when
    int64_t commit_logged_at;
    uint64_t commit_suppressed;
    zlistx_t *agents_out;
    zlistx_t *agents_always;            //  replies to REGISTER: sent whatever the commit
    zhashx_t *pending;                  //  uint64 id → pending_t
    xxl_enc_t *item_enc;                //  one TriggerParam at a time
    zlistx_t *open_batches;             //  run_batch_t filling this turn (owned)
    zhashx_t *batches;                  //  uint64 id → run_batch_t sent (owned)
    xxl_routers_t *routers;
    xxl_router_host_t router_host;
    xxl_pool_t *fast_pool;
    xxl_pool_t *slow_pool;
    zsock_t *probes;                    //  inproc ROUTER: pool workers' probes
    zsock_t *routed;                    //  inproc PULL: pool workers' results
    zhashx_t *slow_counts;              //  job id → triggers over 500 ms this minute
    zhashx_t *busy_tries;               //  log id → {log id, refusals}: runs an
                                        //  agent refused busy, sent again later
    int64_t slow_minute;
    xxl_timer_t *timer;                 //  planned triggers in the pre-read window
    int timer_fd;                       //  timerfd woken at the next fire (-1: none),
    int64_t timer_armed;                //  armed for this wall-clock ms (-1: not)
    int64_t commit_us;                  //  recent commits' time (a decaying max)
    zhashx_t *plans;                    //  log id → plan_t of rows on the timer
    zlistx_t *fire_batches;             //  run_batch_t of prepared fires (engine_fire)
    zhashx_t *instants;                 //  fire time → instant_t (owned, no destructor)
    zlistx_t *taking;                   //  prebuilt batches sent this engine_fire whose
                                        //  plans they now own (not owned)
    zlistx_t *fire_later;               //  log ids due that need the store to go
    zlistx_t *turn_plans;               //  log ids of plans made this turn
    zlistx_t *unprepared;               //  log ids of plans made unprepared
    uint64_t turn;                      //  transactions begun
    int64_t fired_until;                //  the held shares' fired_until as committed:
                                        //  rows planned up to then may have been sent
    int64_t fired_want;                 //  the same, written this turn
    int64_t fired_sent;                 //  their fired_sent as committed
    int64_t sent_max;                   //  latest planned time sent this turn
    int64_t data_version;               //  xxl_store_data_version at the last turn
    uint64_t foreign_replies;           //  agent replies from the wrong connection,
    int64_t foreign_logged;             //  counted since this monotonic ms's log line
    ratelog_t log_bad_frame;            //  undecodable frames
    ratelog_t log_frames;               //  messages of the wrong number of frames
    ratelog_t log_token;                //  requests with a wrong access token
    ratelog_t log_binding;              //  (UN)REGISTERs refused for their key or connection
    infolog_t log_registered;           //  addresses registered and unregistered
    ratelog_t log_moved;                //  addresses taken by another open connection
    ratelog_t log_twin_ask;             //  asks left out for shared addresses
    infolog_t log_doubt;                //  RUNs held in doubt
    ratelog_t log_late;                 //  late results recorded beside their rows
    infolog_t log_lease_wait;           //  lost runs waiting for a run lease
    ratelog_t log_registry_full;        //  REGISTERs refused: the registry holds its limit
    ratelog_t log_api_send;             //  replies a client's connection refused
    ratelog_t log_pages;                //  malformed LOG replies of agents
    zhashx_t *backlogs;                 //  client return address (hex) → backlog_t
    size_t backlog_bytes;               //  in all backlogs
    ratelog_t log_agent_send;           //  messages an agent's connection refused
    ratelog_t log_begin;                //  turns whose begin failed
    int64_t begin_failed_at;            //  the last turn's begin failed then (zclock_mono), or 0
    zlistx_t *audit_turn;               //  audit rows written this turn (xxl_api_audit.c)
    zlistx_t *audit_again;              //  those of failed turns, to write again
    ratelog_t log_audit_dropped;        //  audit rows of failed turns left out
    uint64_t foreign_turn;              //  the last turn that saw another connection's
                                        //  commit: plans made before it may be void
    zhashx_t *snaps;                    //  job id → snap_t of jobs due soon
    zlistx_t *accepted;                 //  accepted_t, oldest first
    zhashx_t *accepted_ids;             //  log id → accepted_t (not owned)
    int64_t next_log_id;                //  next log id to hand out this turn (0: read it)
    int64_t log_id_floor;               //  above every id ever handed out: a failed
                                        //  turn's ids are never handed out again
    int64_t turn_first_id;              //  the first id this turn may hand out
    zhashx_t *resend_ids;               //  log ids in self->resends (no twice)
    xxl_heard_t *heard;                 //  agents' last REGISTER and run lease
    int64_t lost_cursor;                //  the lost-run monitor's last id read
    zhashx_t *doubts;                   //  unanswered RUNs held in doubt, by log id
                                        //  (xxl_doubts.c)
    zhashx_t *asks;                     //  log id → xxl_ask_t (owned)
    xxl_reporter_t *reporter;           //  counts the daily report off this thread (NULL:
                                        //  counted here, an in-memory store)
    zlistx_t *report_waiting;           //  report_waiter_t: REPORTs waiting for its count
    zlistx_t *clears;                   //  LOG_CLEARs deleting a batch per turn (xxl_api_log.c)
    zhashx_t *moved_from;               //  address → zframe_t (owned): the connection it
                                        //  was on, open, when another took it; once that
                                        //  one closes, the agent holding it now is asked
                                        //  about its open runs (engine_moved_check)
    zhashx_t *twins;                    //  address → int64_t: until when (monotonic ms)
                                        //  it counts as shared by two live agents: none
                                        //  of its agents is asked about its open runs
    zhashx_t *ask_jobs;                 //  job id → int64_t [3]: job id, whether a
                                        //  refused ask may be its MISFIRE (1) or
                                        //  not (0; -1 not judged yet), asks left
    int64_t sweep_at;                   //  monotonic ms: look for rows nothing tracks
                                        //  (after a failed commit; 0: none due)
    zchunk_t *text;                     //  a trigger's triggerMsg, built anew for each
    bool any_children;                  //  some job has child jobs, as read
    int64_t children_until;             //  monotonic ms: read it again from then
    zhashx_t *groups;                   //  group id → xxl_group_t, read at most
    int64_t groups_until;               //  1 s ago (monotonic ms of expiry)
    int64_t next_scan;                  //  monotonic ms of the next planner scan
    zlistx_t *resends;                  //  xxl_resend_t * after a restart
    xxl_alarms_t *alarms;               //  alarm plugins and their sender thread
    xxl_alarm_host_t alarm_host;
    zlistx_t *alarm_backlog;            //  log ids whose alarm waits for queue room
    zhashx_t *waiting;                  //  FIX_DELAY job ids waiting for their run's end
    int64_t warm_until;                 //  monotonic ms: agents still reconnecting
    char **awaited;                     //  addresses alive at the last stop, not
    size_t awaited_count;               //  back yet (NULL once back)
    size_t awaited_left;
    int64_t service_next [XXL_SERVICES];   //  monotonic ms of each service's next run
    bool stopping;                      //  $TERM: finishing in-flight RUNs
    int64_t stop_deadline;
    uint64_t next_id;                   //  (engine_request_id without getrandom)
    int64_t clock_base;                 //  engine_clock - zclock_mono
    int64_t wall_base;                  //  wall - mono as last seen (a step
                                        //  of the wall clock changes it)
    bool wall_stepped;                  //  forward, since the last registry check
    uint64_t ids [XXL_IDS_AHEAD];       //  random request ids drawn ahead
    size_t ids_left;
    int64_t next_registry_check;
    int64_t next_liveness;              //  monotonic ms of the next s_liveness
    zhashx_t *apps_changed;             //  app names whose addresses changed (a set)
    int64_t next_groups;                //  monotonic ms of the next s_groups_refresh
    int64_t next_pending_check;
    int64_t stall_mono;                 //  monotonic ms the loop last woke
    bool terminated;
    char hostname [256];
    zcert_t *cert;                      //  our certificate: CURVE on (NULL: off)
    zactor_t *auth;                     //  the ZAP handler (zauth) on the keys folder
    xxl_keys_t *keys;                   //  who holds each key let in (NULL: no keys)
    char user_id [48];                  //  the key (Z85) of the message being read
    int64_t keys_refused;               //  messages refused since the last log line
    int64_t keys_logged;                //  monotonic ms of that line
    char *foreign_apps;                 //  s_address_foreign_app's answer
    int64_t foreign_callbacks;          //  callbacks for rows of other addresses
    int64_t foreign_callbacks_logged;   //  since this monotonic ms's log line
    //  Leases (xxl_lease.c): the shares of the jobs this scheduler plans
    char node [XXL_STORE_NODE_MAX];     //  its name among the schedulers of the store
    uint64_t held;                      //  shares held, bit s for share s
    int64_t epochs [XXL_STORE_SHARES];  //  each held share's epoch
    int64_t lease_until;                //  mono ms: the held leases are sure until then
    int64_t store_ahead;                //  the store's clock - ours, ms, as last read
    int64_t next_lease;                 //  monotonic ms of the next lease round
    int64_t lease_rounds;               //  rounds done (0: the start's is next)
    uint64_t lease_taken;               //  shares taken in this turn (not committed yet)
    int64_t lease_until_committed;      //  lease_until as of the last commit
    //  HTTP (xxl_http.c, xxl_api_users.c) and metrics (xxl_metrics.h)
    zsock_t *http;                      //  inproc ROUTER the HTTP threads send to
    xxl_http_t *http_server;            //  NULL: --http none
    xxl_metrics_t metrics;              //  bumped on this thread
    xxl_metrics_box_t *metrics_box;     //  what /metrics reads, published
    int64_t metrics_next;               //  monotonic ms of the next publication
} server_t;


//  Server-side context of the message being handled
typedef struct {
    zframe_t *rid;                      //  sender routing id
    xxl_msg_t *msg;
    const xxl_command_t *command;       //  its `t`'s fields (xxl_commands.h)
    const xxl_who_t *who;               //  its sender, never NULL
    //  Out, for the audit: set by engine_reply and its kin
    int code;                           //  the reply's code (0: not answered yet)
    int64_t target;                     //  the id a reply carried (engine_reply_id; 0 none)
    bool audited;                       //  engine_audit recorded it
} request_t;

typedef struct {
    const char *trigger_type;           //  MANUAL CRON RETRY PARENT API MISFIRE
    int fail_retry_count;               //  -1: the job's
    const char *param;                  //  NULL: the job's
    const char *address;                //  NULL: route
    int shard_index, shard_total;       //  -1: none given
    int64_t schedule_time;              //  0: none
    const char *by;                     //  "key 'NAME' (ROLE)" that triggered it, or NULL
    int defer;                          //  1: write the rows only (planner timer sends)
    int prepare;                        //  with defer: route now, write the address
    //  Out: engine_trigger wrote one row of a SHARDING_BROADCAST job with no
    //  shard yet (no agent to count, or agents still reconnecting): it is
    //  made one row per agent when it fires (s_broadcast_expand)
    bool unexpanded;
    //  Out: the rows wait on the timer for the group's agents (a trigger
    //  made while they reconnect after a start), as planned fires do
    bool held;
} trigger_args_t;

#define XXL_ACCEPTED_MS 500


typedef enum { ROUTE_ADDRESS, ROUTE_NONE, ROUTE_POOL } route_pick_t;

//  xxl_server.c
//  Wall-clock time, epoch ms: what the rows, cron and users see.  It may
//  step (NTP, a VM resumed): no duration is measured on it (the time
//  model, docs/design.md)
static inline int64_t
engine_now (void)
{
    return zclock_time ();
}

//  The store's clock as this scheduler estimates it (its wall clock plus
//  the store's lead, read at each lease round): the registry rows every
//  scheduler of the store writes and reads are stamped on it
static inline int64_t
engine_store_now (server_t *self)
{
    return zclock_time () + self->store_ahead;
}

//  The steady clock, epoch ms: the wall clock at the start, advanced by
//  the monotonic clock since, so it never steps.  RUNs' expireTime and
//  REGISTER's `now` are on it
static inline int64_t
engine_clock (server_t *self)
{
    return zclock_mono () + self->clock_base;
}

void engine_warn_limited (ratelog_t *kind, const char *format, ...)
    __attribute__ ((format (printf, 2, 3)));
void engine_info_limited (infolog_t *kind, const char *format, ...)
    __attribute__ ((format (printf, 2, 3)));
bool engine_has_control (const char *text);
zhashx_t *engine_id_map (zhashx_destructor_fn *destructor);
void engine_batch_destroy (run_batch_t **self_p);
void engine_batch_destructor (void **item);
void engine_snap_release (snap_t **snap_p);
void engine_instant_destroy (instant_t **self_p);
void engine_resend_destroy (void **item);
void engine_msg_destroy (void **item);

//  xxl_outbox.c
void engine_queue (server_t *self, zlistx_t *outbox, const void *rid, size_t rid_size);
void engine_queue_agent_to (server_t *self, const void *rid, size_t rid_size,
                            uint64_t pending_id, bool always);
void engine_queue_agent (server_t *self, const void *rid, size_t rid_size,
                         uint64_t pending_id);
void engine_reply (server_t *self, request_t *request, int code, const char *msg);
void engine_reply_begin (server_t *self, request_t *request);
void engine_reply_end (server_t *self, request_t *request);
void engine_reply_id (server_t *self, request_t *request, int64_t id);
void engine_agent_out (server_t *self, zmsg_t *msg);
void engine_api_send (server_t *self, zmsg_t *msg);
void engine_backlog_destroy (void **item);
void engine_agent_out_owned (server_t *self, uint64_t tag, const void *rid, size_t rid_size,
                             void **data_p, size_t size);
void engine_commit_failed (server_t *self);
void engine_agents_dropped (server_t *self);
size_t engine_sweep_untracked (server_t *self);
void engine_flush (server_t *self);

//  xxl_agents.c
void engine_resend_add (server_t *self, int64_t log_id, const char *address);
pending_t *engine_pending_new (server_t *self, const char *address, pending_kind_t kind,
                               int timeout_ms, char *why, size_t whylen);
pending_t *engine_agent_request (server_t *self, const char *address, const char *type,
                                 pending_kind_t kind, int timeout_ms, char *why,
                                 size_t whylen);
void engine_agent_send (server_t *self, pending_t *pending);
void engine_pack_time (unsigned char out [9], int64_t value);
int64_t engine_expire_time (server_t *self, int64_t since);
const unsigned char *engine_encode_tp (server_t *self, const xxl_job_t *job, int64_t log_id,
                                       const char *param, int shard_index, int shard_total,
                                       size_t *size);
void engine_batch_send (server_t *self, run_batch_t *batch, bool now, int64_t stamp);
void engine_batch_close (server_t *self, run_batch_t *batch, zlistx_t *list);
run_batch_t *engine_batch_for (server_t *self, zlistx_t *open, const char *address,
                               const void *rid, size_t rid_size, int max, bool fires);
void engine_run_queue (server_t *self, pending_t *pending, const unsigned char *tp,
                       size_t size, int64_t time, zlistx_t *open);
void engine_reroute (server_t *self, int64_t log_id, int64_t presumed);
//  An agent's answer to one run of a RUN: true when it refused it busy
//  (XXL_BUSY), and the run then goes by the timer again after a backoff
//  (xxl_agents.c); false for any other answer, for engine_run_answer
bool engine_run_busy (server_t *self, int64_t log_id, int64_t presumed, int code);
void engine_batch_expire (server_t *self, run_batch_t *batch);
void engine_fire_queue (server_t *self, plan_t **plan_p, int64_t stamp, const void *rid,
                        size_t rid_size, int max);

//  xxl_trigger.c
size_t engine_split_addresses (const char *list, char ***out);
void engine_free_addresses (char **list, size_t count);
int64_t engine_accepted_forget (server_t *self, int64_t log_id);
int64_t engine_accepted_stamp (server_t *self, int64_t log_id);
void engine_accepted_flush (server_t *self, int64_t before);
char *engine_section (const char *note, const char *address, int code, const char *msg);
int64_t engine_section_chars (const char *note, const char *address);
char *engine_text_retry (int64_t attempt, int64_t of, int64_t retry_id, int64_t delay);
char *engine_text_misfire (const char *msg);
route_pick_t engine_route_pick (server_t *self, const xxl_job_t *job, int64_t log_id,
                                int shard_index, int broadcast, const char *const *addresses,
                                size_t count, const char **address, char *note,
                                size_t notelen);
void engine_route_row (server_t *self, const xxl_job_t *job, int64_t log_id,
                       int64_t trigger_time, const char *param, int shard_index,
                       int shard_total, int broadcast, const char *const *addresses,
                       size_t count, int64_t stamp);
void engine_shard_of (const char *text, int *index, int *total);
size_t engine_job_addresses (server_t *self, const xxl_job_t *job,
                             const char *const **addresses, char ***manual);
bool engine_run_in_flight (server_t *self, int64_t log_id);
zhashx_t *engine_runs_in_flight (server_t *self);
void engine_moved_check (server_t *self);
void engine_dispatch_row (server_t *self, int64_t log_id, const char *address,
                          const char *note);
int engine_trigger (server_t *self, const xxl_job_t *job, trigger_args_t *args,
                    int64_t *log_ids, prepared_t *prepared, size_t max_ids);
void engine_run_answer (server_t *self, int64_t log_id, const char *note, const char *address,
                        int64_t presumed, int64_t stamp, int code, const char *msg);
void engine_run_done (server_t *self, pending_t *pending, int code, const char *msg);

//  xxl_job.c
int engine_job_read (server_t *self, request_t *request, xxl_job_t *job, int is_add);
const char *engine_iso_time (int64_t ms, const char *tz, char *buf, size_t buflen);
int64_t engine_next_time (const xxl_job_t *job, int64_t after, char *why, size_t whylen);
int64_t engine_schedule_next (xxl_schedule_t *schedule, const char *tz, int64_t after, char *why,
                              size_t whylen);
void engine_job_defaults (xxl_job_t *job);
int engine_job_from_request (server_t *self, request_t *request, xxl_job_t *job);

//  xxl_planner.c
void engine_waiting_add (server_t *self, int64_t job_id);
void engine_waiting_load (server_t *self);
void engine_plan_forget (server_t *self, int64_t job_id);
void engine_fix_delay_release (server_t *self, int64_t log_id, int64_t now);
void engine_plan_prepare (server_t *self, int budget);
snap_t *engine_snap_fresh (server_t *self, int64_t id, int *rc);
void engine_plan_scan (server_t *self);
void engine_fired_cover (server_t *self, int64_t until);
bool engine_instant_add (server_t *self, plan_t *plan, int64_t fire_at);
void engine_fire (server_t *self);
void engine_fire_check (server_t *self);
void engine_timer_arm (server_t *self, int64_t when);
bool engine_fire_near (server_t *self);
bool engine_fire_within (server_t *self, int64_t ms);
void engine_fire_wait (server_t *self);
void engine_plan_due (server_t *self);
void engine_recover (server_t *self, uint64_t mask, const xxl_lease_t *leases);
void engine_recover_alarms (server_t *self);
void engine_ask_answer (server_t *self, pending_t *pending, int code, const char *msg);

//  xxl_doubts.c: RUNs whose answer never came
//  Holds log_id in doubt (its RUN to address went unanswered): true when
//  held (the caller leaves the row as it is), false when address said no
//  run lease (the caller fails it as before)
bool engine_doubt_add (server_t *self, int64_t log_id, const char *note, const char *address,
                       int64_t presumed, int64_t stamp);
bool engine_doubt_has (server_t *self, int64_t log_id);
//  xxl_agents.c: whether two live agents share address now (none is asked)
bool engine_address_twin (server_t *self, const char *address);
void engine_doubt_answer (server_t *self, pending_t *pending, int code, const char *msg);
void engine_doubts_check (server_t *self);
void engine_doubt_destroy (void **item);

//  xxl_lease.c
uint64_t engine_lease_round (server_t *self);
void engine_lease_check (server_t *self);
uint64_t engine_lease_fence (server_t *self);
void engine_lease_settle (server_t *self, bool committed);
bool engine_lease_holds (server_t *self, int64_t job_id);
uint64_t engine_share_bit (int64_t job_id);
void engine_recover_resends (server_t *self);

//  xxl_services.c
int engine_child_cycle (server_t *self, int64_t job_id, const char *children, char *path,
                        size_t pathlen, int depth);
char *engine_trigger_children (server_t *self, int64_t log_id);
void engine_alarm_again (server_t *self, int64_t log_id);
void engine_alarm_results (server_t *self);
void engine_fail_monitor (server_t *self);
void engine_lost_monitor (server_t *self);
void engine_report_refresh (server_t *self);
void engine_report_turn (server_t *self);
void engine_report_stop (server_t *self);
void engine_log_clear_turn (server_t *self);
void engine_log_clear_stop (server_t *self);
void engine_log_clear_rollback (server_t *self, const char *why);
bool engine_report_wait (server_t *self, request_t *request);
void engine_report_encode (server_t *self);
//  The periodic services (xxl_services.c): set their first runs at start;
//  run those due (not while stopping); the soonest next run
void engine_services_start (server_t *self, int64_t now);
void engine_services_run (server_t *self, int64_t now);
int64_t engine_services_wake (server_t *self);
int64_t engine_log_delete (server_t *self, int64_t job_id, int64_t before, int64_t below,
                           int64_t limit);
void engine_retention (server_t *self);

//  xxl_api_audit.c: the audit of the client api's changes
//  Records request (an audited command's: xxl_command_audited) as
//  answered `code` about id `target` (0: none), in the turn's transaction,
//  once: a later call for the same request does nothing.  Whoever answers
//  such a request without its handler (a refusal: 403) calls it.
void engine_audit (server_t *self, request_t *request, int code, int64_t target);
//  Records a forwarded request (pending->audit_type set) with the code
//  its client is answered
void engine_audit_answer (server_t *self, pending_t *pending, int code);
//  At a turn's begin: writes again the rows of failed turns
void engine_audit_begin (server_t *self);
//  After a turn's commit: its rows are settled (committed true), or are to
//  be written again as its clients were answered (500, or the code of a
//  reply that stood)
void engine_audit_settle (server_t *self, bool committed);
void engine_audit_destroy (server_t *self);
//  Retention: deletes a batch of rows older than audit_retention_days;
//  how many went
int64_t engine_audit_retention (server_t *self);

//  xxl_api.c
xxl_msg_t *engine_receive (server_t *self, zmsg_t *zmsg, zlistx_t *outbox, const char *what,
                           zframe_t **rid_p, const xxl_who_t **who_p);

//  xxl_access.c: who sent the message just read (engine_who: NULL when
//  CURVE is on and its key is no longer let in), the access token in
//  constant time (0 when it matches or none is set), whether a request's
//  key may send it (0, or -1 with the reason for a 403), whether a key may
//  register for an app (likewise), and the keys folder read again
const xxl_who_t *engine_who (server_t *self);
int engine_token_check (server_t *self, xxl_msg_t *msg);
int engine_permit (server_t *self, request_t *request, char *why, size_t whylen);
int engine_may_register (const xxl_who_t *who, const char *app, char *why, size_t whylen);
void engine_keys_refresh (server_t *self);
//  The id of a new request to an agent: random (xxl_access.c)
uint64_t engine_request_id (server_t *self);
void engine_handle_api (server_t *self, zmsg_t *zmsg);
//  Judges and handles a decoded api request from who (the api socket's or
//  the HTTP side's), replying to the return address rid; the caller keeps
//  msg and rid (xxl_api.c)
void engine_api_request (server_t *self, zframe_t *rid, xxl_msg_t *msg, const xxl_who_t *who);
//  A request from the HTTP server's threads (xxl_api_users.c)
void engine_handle_http (server_t *self, zmsg_t *zmsg);

//  xxl_agents.c
void engine_probe_answer (server_t *self, pending_t *pending, int code, const char *msg);
void engine_handle_probe (server_t *self, zmsg_t *zmsg);
void engine_handle_routed (server_t *self, zmsg_t *zmsg);
void engine_agent_answer (server_t *self, zframe_t *rid, xxl_msg_t *msg);
void engine_handle_agent (server_t *self, zmsg_t *zmsg);

#endif
