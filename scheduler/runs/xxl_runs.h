/*  xxl_runs.h -- runs: a trigger, its routing, its rows, its RUN to an
    agent, and the agent's answers to it.

    Owns every request in flight to an agent (pending_t: RUN, LOG, KILL,
    probes, asks), the batches of RUNs, accepted RUNs whose trigger code
    is not written yet, rows waiting for their agent to come back, RUNs in
    doubt, and the agents' connections' bookkeeping (moved, twins).
        xxl_trigger.c   a trigger: addresses, routing, rows, triggerMsg,
                        dispatch of a row, the answer to a RUN
        xxl_agents.c    requests to agents, their batches, and the agents'
                        messages (REGISTER, CALLBACK, REPLY)
        xxl_log_page.c  an agent's LOG page checked and made LOG_CAT's answer
        xxl_doubts.c    RUNs whose answer never came
        xxl_checks.c    agents asked about the runs open at their addresses
    MUST: write a run's row before its RUN is queued (the outbox sends
    after the commit).  MUST NOT: touch the planner's plans except through
    its header; a run's end is announced by engine_run_ended.
    Called by: the api (trigger, LOG, KILL), the planner (fires), the
    services (retries, children), the actor (agent messages).
*/

#ifndef XXL_RUNS_H_INCLUDED
#define XXL_RUNS_H_INCLUDED

#include "xxl_engine_base.h"
#include "xxl_events.h"

typedef enum {
    PENDING_RUN, PENDING_LOG, PENDING_KILL, PENDING_PROBE,
    PENDING_CHECK,                      //  whether the agent holds an open run (xxl_checks.c)
    PENDING_DOUBT                       //  whether the agent took a RUN whose answer never
                                        //  came (xxl_doubts.c)
} pending_kind_t;

typedef struct _pending_t {
    uint64_t id;                        //  request id sent to the agent (hash key)
    pending_kind_t kind;
    int64_t log_id;
    int64_t job_id;                     //  RUN: its job (0: not known)
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
    int64_t from_byte;                  //  LOG: the page's fromByte (-1: a
                                        //  page by line, fromLineNum)
    //  An audited request forwarded to the agent (LOG_KILL): recorded with
    //  its answer (engine_audit_answer); NULL when not audited
    const char *audit_type;             //  its command's name (static)
    char *audit_who;                    //  its sender's key name and role
    char *audit_role;
} pending_t;

//  A prepared fire in a batch: its plan (owned, off self->planner.plans) and the
//  time it went
typedef struct _fire_item_t {
    struct _plan_t *plan;
    int64_t stamp;
    size_t offset;                      //  of its logDateTime in the message
} fire_item_t;

//  Frees a prepared fire's plan (the planner's, given when its batch is made)
typedef void (engine_fire_free_fn) (struct _plan_t *plan);

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
    engine_fire_free_fn *fire_free;     //  frees a fire's plan (NULL: no fires)
    bool gone;                          //  its send failed
    //  Prebuilt (engine_instant_add): filled while its fires are planned; its
    //  plans stay in self->planner.plans (borrowed) until the batch leaves
    bool prebuilt;
    bool dirty;                         //  a plan left it, or its job changed
    uint64_t min_turn, max_turn;        //  of the turns that wrote its rows
} run_batch_t;


//  A recovered row waiting for its agent to come back
typedef struct {
    int64_t log_id;
    char *address;
    int64_t deadline;
} xxl_resend_t;

//  A RUN the agent accepted whose trigger_code is not written yet: the
//  callback usually comes first and writes both in one statement
typedef struct {
    int64_t log_id;                     //  0 once the callback wrote it
    int64_t at;                         //  monotonic ms of the answer
    int64_t stamp;                      //  trigger time still to write (0: none)
    int64_t job_id;                     //  its job (0: not known)
} accepted_t;


//  An address to ask about its open runs (runs.checks, xxl_checks.c): why
//  it is asked, the connection that registered it, and the runs that
//  connection accepted since (engine_run_answer)
typedef struct {
    char *why;
    void *rid;
    size_t rid_size;
    zhashx_t *taken;                    //  log ids accepted on rid since (or NULL;
                                        //  each item its own key)
} check_t;

//  Routing of a deferred row made at planning (engine_trigger's `prepared`)
typedef struct {
    char *address;                      //  NULL: not prepared
    char *note;
} prepared_t;

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
    //  The planner's own next fire of a held job (xxl_log_t.planned_new:
    //  the store may write it with others; a clash then loses the turn)
    bool planned_new;
    //  Out: engine_trigger wrote one row of a SHARDING_BROADCAST job with no
    //  shard yet (no agent to count, or agents still reconnecting): it is
    //  made one row per agent when it fires (s_broadcast_expand)
    bool unexpanded;
    //  Out: the rows wait on the timer for the group's agents (a trigger
    //  made while they reconnect after a start), as planned fires do
    bool held;
} trigger_args_t;

//  An acceptance is written alone XXL_ACCEPTED_MS after it came, when its
//  run's result has not come by then; while more than XXL_ACCEPTED_BUSY
//  acceptances wait, XXL_ACCEPTED_BUSY_MS after it came (a scheduler
//  behind reads the results late, and a row written twice makes it later)
#define XXL_ACCEPTED_MS 500
#define XXL_ACCEPTED_BUSY 1000
#define XXL_ACCEPTED_BUSY_MS 5000


typedef enum { ROUTE_ADDRESS, ROUTE_NONE, ROUTE_POOL } route_pick_t;

struct _plan_t;

//  Whether the planner holds a row: as a plan not sent yet, or as one
//  recovery is asking its agent about (the actor hands runs these; runs
//  names no planner function)
typedef bool (engine_holds_fn) (server_t *self, int64_t log_id);

//  A trigger's own addresses by row (xxl_dispatch.c)
typedef struct _pins_t pins_t;

typedef struct {
    engine_holds_fn *planned;           //  the planner's plans
    engine_holds_fn *asked;             //  recovery's asks
    uint64_t ids [XXL_IDS_AHEAD];       //  random request ids drawn ahead
    size_t ids_left;
    zlistx_t *agents_out;               //  zmsg_t * [tag][rid][body] to send after commit
    zlistx_t *agents_always;            //  replies to REGISTER: sent whatever the commit
    ratelog_t log_agent_send;           //  messages an agent's connection refused
    int64_t sweep_at;                   //  monotonic ms: look for rows nothing tracks
                                        //  (after a failed commit; 0: none due)
    int64_t sweep_before;               //  wall ms: the rows it looks at were sent
                                        //  before (the latest failed commit's time)
    zhashx_t *pending;                  //  uint64 id → pending_t
    xxl_enc_t *item_enc;                //  one TriggerParam at a time
    zlistx_t *open_batches;             //  run_batch_t filling this turn (owned)
    zhashx_t *batches;                  //  uint64 id → run_batch_t sent (owned)
    xxl_routers_t *routers;
    xxl_router_host_t router_host;
    xxl_pool_t *fast_pool;
    xxl_pool_t *slow_pool;
    zhashx_t *slow_counts;              //  job id → triggers over 500 ms this minute
    zhashx_t *busy_tries;               //  log id → {log id, refusals}: runs an
                                        //  agent refused busy, sent again later
    zhashx_t *routing;                  //  log id → its own copy: rows a trigger pool
                                        //  routes (their ROUTED result not back yet)
    pins_t *pins;                       //  rows of a JOB_TRIGGER that gave `address`,
                                        //  until their run ends (xxl_dispatch.c)
    int64_t slow_minute;
    uint64_t foreign_replies;           //  agent replies from the wrong connection,
    int64_t foreign_logged;             //  counted since this monotonic ms's log line
    ratelog_t log_binding;              //  (UN)REGISTERs refused for their key or connection
    infolog_t log_registered;           //  addresses registered and unregistered
    ratelog_t log_moved;                //  addresses taken by another open connection
    ratelog_t log_twin_ask;             //  asks left out for shared addresses
    infolog_t log_doubt;                //  RUNs held in doubt
    ratelog_t log_doubt_word;           //  asks answered neither 200 nor "expired: ..."
    ratelog_t log_late;                 //  late results recorded beside their rows
    ratelog_t log_ids_behind;           //  log ids moved past an agent's acceptedMax
    ratelog_t log_other_run;            //  RUNs refused: the logId another run's (409)
    ratelog_t log_registry_full;        //  REGISTERs refused: the registry holds its limit
    ratelog_t log_pages;                //  malformed LOG replies of agents
    zlistx_t *accepted;                 //  accepted_t, oldest first
    zhashx_t *accepted_ids;             //  log id → accepted_t (not owned)
    int64_t next_log_id;                //  next log id to hand out this turn (0: read it)
    int64_t log_id_floor;               //  above every id ever handed out: a failed
                                        //  turn's ids are never handed out again
    int64_t turn_first_id;              //  the first id this turn may hand out
    int64_t log_id_limit;               //  next_log_id's run ends before it
    int64_t log_ids_moved;              //  ids skipped by agents' moves since the start
                                        //  (XXL_LOG_IDS_MOVES)
    zhashx_t *resend_ids;               //  log ids in self->resends (no twice)
    zhashx_t *doubts;                   //  unanswered RUNs held in doubt, by log id
                                        //  (xxl_doubts.c)
    zhashx_t *checks;                   //  address → its why and connection: to be
                                        //  asked about its open runs (engine_checks_run)
    zhashx_t *unseen;                   //  log id → {log id, times, mono ms}: RUNs
                                        //  an agent, asked, said it never took,
                                        //  routed again (xxl_doubts.c)
    zhashx_t *moved_from;               //  address → zframe_t (owned): the connection it
                                        //  was on, open, when another took it; once that
                                        //  one closes, the agent holding it now is asked
                                        //  about its open runs (engine_moved_check)
    zhashx_t *twins;                    //  address → int64_t: until when (monotonic ms)
                                        //  it counts as shared by two live agents: none
                                        //  of its agents is asked about its open runs
    zchunk_t *text;                     //  a trigger's triggerMsg, built anew for each
    zhashx_t *groups;                   //  group id → xxl_group_t, read at most
    int64_t groups_until;               //  1 s ago (monotonic ms of expiry)
    zlistx_t *resends;                  //  xxl_resend_t * after a restart
    char **awaited;                     //  addresses alive at the last stop, not
    size_t awaited_count;               //  back yet (NULL once back)
    size_t awaited_left;
    char *foreign_apps;                 //  s_address_foreign_app's answer
    int64_t foreign_callbacks;          //  callbacks for rows of other addresses
    int64_t foreign_callbacks_logged;   //  since this monotonic ms's log line
    zsock_t *monitor;                   //  the agents socket's DISCONNECTED events
                                        //  (engine_runs_monitor_start; NULL: none)
    int64_t probed_at;                  //  monotonic ms of the last engine_runs_liveness
    //  xxl_admit.c: jobs' maxRunning slots
    bool admitting;                     //  a pass is sending: the gate lets rows by
    zhashx_t *admitted;                 //  log id → int64_t [log id, job id]: admitted
                                        //  with no address yet (a probing router's)
    zhashx_t *killing;                  //  log id → the same: killed to cover (COVER_EARLY)
    zhashx_t *slot_jobs;                //  job id → the same: held jobs with a maxRunning
                                        //  at the last pass
    int64_t admit_at;                   //  monotonic ms of the next pass
    zhashx_t *due_rows;                 //  job id → its waiting rows its last pass
                                        //  found due (xxl_admit.c, s_waiting)
    int64_t due_high;                   //  the latest wall-clock ms a pass judged by
} runs_t;

//  The handler of the engine's JOB_CHANGED event: groups read again
void engine_runs_on_job (server_t *self, const xxl_event_t *event);
//  xxl_runs.c: runs' state, made at the actor's start and freed at its
//  stop; requests past their deadline answered as unanswered (and doubts
//  asked about); a BEAT to each connection the registry holds
void engine_runs_start (server_t *self);
void engine_runs_stop (server_t *self);
void engine_runs_expire (server_t *self);
void engine_runs_liveness (server_t *self);
//  A BEAT to the connection of routing id rid (its REPLY is ignored):
//  false when the send found the connection closed, else true (sent, or
//  its queue full)
bool engine_runs_beat (server_t *self, const void *rid, size_t rid_size);
//  Whether address is routed to a connection other than rid's that is
//  still open (engine_runs_beat): one found closed is forgotten
//  (xxl_registry_gone, logged naming app and address)
bool engine_runs_held_open (server_t *self, zframe_t *rid, const char *app, const char *address);
//  A monitor of the agents socket (once it is open): a connection that
//  closes is told at once, by file descriptor (ZeroMQ's DISCONNECTED; its
//  ROUTER_NOTIFY, which names the routing id, is a draft API).  Returns
//  the socket to poll, or NULL when the monitor could not start.
zsock_t *engine_runs_monitor_start (server_t *self);
//  Reads the monitor's events: when some connection closed, the
//  monotonic ms at which to probe the connections (engine_runs_liveness):
//  XXL_CLOSED_PROBE_MS from now, but no sooner than XXL_PROBE_GAP_MS
//  after the last probe (connections that open and close at will must
//  not make it send to every agent at their pace); else 0
int64_t engine_runs_monitor_read (server_t *self);
//  The router plugins (to judge a job's route strategy, to list them)
xxl_routers_t *engine_runs_routers (server_t *self);
//  Whether a RUN of log_id was accepted and its trigger code is not
//  written yet (xxl_trigger.c)
bool engine_accepted_has (server_t *self, int64_t log_id);
#define XXL_CLOSED_PROBE_MS 100            //  and this soon after a connection closed,
#define XXL_PROBE_GAP_MS 500                //  but this long after the last at least
//  xxl_dispatch.c: agents' messages, queued in a turn, sent after its commit
void engine_queue_agent_to (server_t *self, const void *rid, size_t rid_size,
                            uint64_t pending_id, bool always);
void engine_queue_agent (server_t *self, const void *rid, size_t rid_size,
                         uint64_t pending_id);
void engine_agent_out (server_t *self, zmsg_t *msg);
void engine_agent_out_owned (server_t *self, uint64_t tag, const void *rid, size_t rid_size,
                             void **data_p, size_t size);
void engine_agents_dropped (server_t *self);
size_t engine_sweep_untracked (server_t *self);
//  The sweep after a failed commit, when due at monotonic ms now: again
//  after twice run_timeout while it finds rows, then done
void engine_sweep_run (server_t *self, int64_t now);
void engine_runs_flush (server_t *self);
//  The id of a new request to an agent: random, never one in flight
uint64_t engine_request_id (server_t *self);
void engine_batch_destroy (run_batch_t **self_p);
void engine_batch_destructor (void **item);
void engine_resend_destroy (void **item);
void engine_pending_destroy (void **item);
void engine_group_destructor (void **item);

//  xxl_agents.c
void engine_resend_add (server_t *self, int64_t log_id, const char *address);
pending_t *engine_pending_new (server_t *self, const char *address, pending_kind_t kind,
                               int timeout_ms, char *why, size_t whylen);
pending_t *engine_agent_request (server_t *self, const char *address, const char *type,
                                 pending_kind_t kind, int timeout_ms, char *why,
                                 size_t whylen);
void engine_agent_send (server_t *self, pending_t *pending);
pending_t *engine_kill_send (server_t *self, const char *address, int64_t log_id,
                             int64_t job_id, const char *note, const char *reason);
//  A KILL's `reason` for a user's LOG_KILL (the killed run's handleMsg)
#define XXL_KILL_BY_USER "killed by a user (log kill)"
void engine_pack_time (unsigned char out [9], int64_t value);
int64_t engine_expire_time (server_t *self, int64_t since);
const unsigned char *engine_encode_tp (server_t *self, const xxl_job_t *job, int64_t log_id,
                                       const char *param, int shard_index, int shard_total,
                                       size_t *size);
void engine_batch_send (server_t *self, run_batch_t *batch, bool now, int64_t stamp);
void engine_batch_close (server_t *self, run_batch_t *batch, zlistx_t *list, bool now);
run_batch_t *engine_batch_for (server_t *self, zlistx_t *open, const char *address,
                               const void *rid, size_t rid_size, int max,
                               engine_fire_free_fn *fire_free);
void engine_run_queue (server_t *self, pending_t *pending, const unsigned char *tp,
                       size_t size, int64_t time, zlistx_t *open);
//  A RUN that never reached its agent (note, address: its route's, as
//  engine_section takes them): routed again (see xxl_dispatch.c)
void engine_reroute (server_t *self, int64_t log_id, const char *note, const char *address);
//  An agent's answer to one run of a RUN: true when it refused it busy
//  (XXL_BUSY), and the run then goes by the timer again after a backoff
//  (xxl_agents.c); false for any other answer, for engine_run_answer
bool engine_run_busy (server_t *self, int64_t log_id, const char *note, const char *address,
                      int code);
//  The wait before a run refused busy goes again (its refusals counted)
int64_t engine_busy_delay (server_t *self, int64_t log_id);
void engine_batch_expire (server_t *self, run_batch_t *batch);

//  xxl_trigger.c
size_t engine_split_addresses (const char *list, char ***out);
void engine_free_addresses (char **list, size_t count);
int64_t engine_accepted_forget (server_t *self, int64_t log_id, int64_t *job_id);
int64_t engine_accepted_stamp (server_t *self, int64_t log_id);
int64_t engine_accepted_due (server_t *self);
void engine_accepted_flush (server_t *self, int64_t now);
char *engine_section (const char *note, const char *address, int code, const char *msg);
int64_t engine_section_chars (const char *note, const char *address);
int64_t engine_chars (const char *text);
int64_t engine_section_last_chars (const char *trigger_msg);
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
bool engine_address_fits (server_t *self, const xxl_job_t *job, const char *address);
zhashx_t *engine_runs_in_flight (server_t *self);
//  The latest planned time (schedule_time) of job_id's rows that this
//  scheduler sent and whose acceptance is not in the store yet (a RUN
//  awaiting its answer, alone or in a batch, a row a trigger pool routes,
//  an acceptance not written yet, a row in doubt, one to send again to its
//  agent); 0: none.  A walk of those, with a row read for each of the
//  job's: for after a step back only (engine_plan_forget).  Such a row has
//  left even when a step back of the wall clock put its time ahead again
int64_t engine_runs_sent_until (server_t *self, int64_t job_id);
void engine_moved_check (server_t *self);
void engine_dispatch_row (server_t *self, int64_t log_id, const char *address,
                          const char *note);
//  The id of the next log row this turn writes (0 or less: the store's
//  own, on an error); every row of a turn takes its id from here
int64_t engine_next_log_id (server_t *self);
//  An agent's REGISTER said acceptedMax: the highest logId its journal
//  of accepted runs holds.  When the store would hand out such an id
//  again (restored from a backup without moving its log ids), moves the
//  store's ids and this turn's past it, with a warning line naming
//  address, before any RUN can go to the agent.
void engine_log_ids_past (server_t *self, int64_t accepted_max, const char *address);
int engine_trigger (server_t *self, const xxl_job_t *job, trigger_args_t *args,
                    int64_t *log_ids, prepared_t *prepared, size_t max_ids);
void engine_run_answer (server_t *self, int64_t log_id, int64_t job_id, const char *note,
                        const char *address, int64_t presumed, int64_t stamp, int code, const char *msg);
void engine_run_done (server_t *self, pending_t *pending, int code, const char *msg);


//  xxl_admit.c: jobs' maxRunning slots (DESIGN §13, xxl_admit_rules.h).
//  The gate: true when the row log_id of job must wait for a slot (the
//  job has a maxRunning and no admission pass is sending it): the caller
//  leaves the row unsent, and the pass of the job's share holder admits
//  it.  Passes run every XXL_ADMIT_MS while jobs with a maxRunning are
//  held (engine_admit_wake), at once after a local trigger or run end.
bool engine_admit_hold (server_t *self, const xxl_job_t *job, int64_t log_id);
void engine_admit_run (server_t *self);
int64_t engine_admit_wake (server_t *self);
void engine_admit_on_run (server_t *self, const xxl_event_t *event);
//  The addresses a trigger gave for log_id's row (engine_trigger), routed
//  among again whenever the row is (a busy or stopping agent's refusal, a
//  slot of maxRunning, a connection lost under its RUN), instead of its
//  group's; kept in memory only, until the run ends (RUN_ENDED) or for
//  XXL_PIN_KEEP_MS after it was last routed (engine_runs_pins_expire
//  forgets those last routed before `before`, monotonic ms), and
//  only if the turn that made it commits (engine_runs_pins_settle, after
//  each commit): after a restart such a row is routed over its group.
//  engine_runs_pins_room: whether a trigger given addresses may pin its
//  rows (false: the bound of pins or of their lists' bytes would pass;
//  JOB_TRIGGER answers 429); engine_runs_pins_held: the pins held, and
//  the bytes of their lists
pins_t *engine_runs_pins_new (void);
void engine_runs_pins_destroy (server_t *self);
bool engine_runs_pins_room (server_t *self, const char *addresses);
size_t engine_runs_pins_held (server_t *self, size_t *bytes);
void engine_runs_pin (server_t *self, int64_t log_id, const char *addresses);
const char *engine_runs_pinned (server_t *self, int64_t log_id);
void engine_runs_pins_settle (server_t *self, bool committed);
#define XXL_PIN_KEEP_MS (3600 * 1000)
void engine_runs_pins_expire (server_t *self, int64_t before);
void engine_runs_on_ended (server_t *self, const xxl_event_t *event);
void engine_admit_start (server_t *self);
void engine_admit_stop (server_t *self);
#define XXL_ADMIT_MS 100
#define XXL_ADMIT_IDLE_MS 1000

//  xxl_doubts.c: RUNs whose answer never came
//  Holds log_id in doubt (its RUN to address went unanswered): true when
//  held (the caller leaves the row as it is), false when address said no
//  run lease (the caller fails it as before).  rid: the connection the
//  RUN went to (NULL: unknown), copied
bool engine_doubt_add (server_t *self, int64_t log_id, const char *note, const char *address,
                       int64_t presumed, int64_t stamp, const void *rid, size_t rid_size);
bool engine_doubt_has (server_t *self, int64_t log_id);
//  xxl_agents.c: whether two live agents share address now (none is asked)
bool engine_address_twin (server_t *self, const char *address);
void engine_doubt_answer (server_t *self, pending_t *pending, int code, const char *msg);
//  A user's LOG_KILL of log_id answered code/msg by its agent: when the
//  row is in doubt and the agent said 500 "job thread is not running",
//  the row ends as a failed trigger and is not asked about or routed
//  again (true); false otherwise (the answer goes to the client as it came)
bool engine_doubt_killed (server_t *self, int64_t log_id, int code, const char *msg);
//  A user's KILL (the request kill_id) went for log_id: while it waits for
//  its answer, a row of it in doubt is not asked about, and an answer
//  "expired: ..." does not route it again (the KILL's answer decides first)
void engine_doubt_kill_sent (server_t *self, int64_t log_id, uint64_t kill_id);
//  An agent's answer to one run of a RUN, from the connection the RUN went
//  to: true when it said "expired: ..." (it read the RUN past its
//  expireTime: it never took the run), and the run was routed again
//  (bounded, with the doubts' routings again); false otherwise, for
//  engine_run_answer
bool engine_run_expired (server_t *self, int64_t log_id, const char *note, const char *address,
                         int code, const char *msg);
void engine_doubts_check (server_t *self);
//  xxl_checks.c: address, on the connection rid, to be asked about the
//  runs the store has open there at the next pass; the pass (one read of
//  the store's open runs for every address queued); an ask's answer
void engine_check_open_runs (server_t *self, const char *address, const char *why,
                             const void *rid, size_t rid_size);
void engine_checks_run (server_t *self);
void engine_check_answer (server_t *self, pending_t *pending, int code, const char *msg);
void engine_check_destroy (void **item);
void engine_doubt_destroy (void **item);


//  xxl_agents.c
void engine_probe_answer (server_t *self, pending_t *pending, int code, const char *msg);

//  xxl_log_page.c: writes the client's answer to a LOG_CAT from the agent's
//  LOG reply (code, text and its content) into self->enc: a 200 carries
//  the page, checked field by field and copied (logContent, a string or
//  bin, made valid UTF-8; by line cut between characters at 192 KiB, by
//  byte never cut; other keys dropped); another code goes without
//  content.  from_byte is the fromByte asked (-1: a page by line).  -1
//  with the reason in why, the encoder untouched, when a 200's content is
//  not a page.
int engine_log_page_encode (server_t *self, uint64_t client_id, int code, const char *text,
                            xxl_msg_t *msg, int64_t from_byte, char *why, size_t whylen);
void engine_handle_probe (server_t *self, zmsg_t *zmsg);
void engine_handle_routed (server_t *self, zmsg_t *zmsg);
void engine_agent_answer (server_t *self, zframe_t *rid, xxl_msg_t *msg);
void engine_handle_agent (server_t *self, zmsg_t *zmsg);


#endif
