/*  xxl_server.c -- the scheduler engine: sockets, store, registry, triggers.

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
*/

#include "xxl_server.h"
#include <poll.h>
#include <sys/timerfd.h>
#include "xxl_store.h"
#include "xxl_registry.h"
#include "xxl_routers.h"
#include "xxl_pool.h"
#include "xxl_timer.h"
#include "xxl_alarms.h"
#include "xxl/msg.h"
#include "xxl_transport.h"
#include "xxl/cron.h"
#include "xxl/handler.h"
#include "xxl_tz.h"

#include <inttypes.h>
#include <unistd.h>

#define XXL_STR_(x) #x
#define XXL_STR(x) XXL_STR_(x)
#define XXL_MAX_TEXT        (64 * 1024)         //  desc, param, msg fields
#define XXL_MAX_GLUE        (1024 * 1024)       //  glue source
#define XXL_HANDLE_MSG_CAP  15000
#define XXL_WAL_FIRE_MS     100                 //  no WAL restart this close to a fire
//  Replies a client's ZeroMQ queue (xxl_transport: XXL_ROLE_API) has no
//  room for wait in its backlog, up to these bytes; what a client that
//  stops reading can cost us
#define XXL_API_BACKLOG     (64 * 1024 * 1024)
#define XXL_API_BACKLOGS    (256 * 1024 * 1024) //  (all clients together)
#define XXL_API_TURN_BYTES  (16 * 1024 * 1024)  //  replies a turn reads requests for
#define XXL_PEER_DEALER     0                   //  api return address: last byte
#define XXL_PEER_REQ        1

//  The names users type (DESIGN §3)
static const char *s_schedule_types [] = { "NONE", "CRON", "FIX_RATE", "FIX_DELAY", NULL };
static const char *s_misfires [] = { "DO_NOTHING", "FIRE_ONCE_NOW", NULL };
static const char *s_blocks [] = { "SERIAL_EXECUTION", "DISCARD_LATER", "COVER_EARLY", NULL };
static const char *s_glue_types [] = {
    "BEAN", "GLUE_SHELL", "GLUE_PYTHON", "GLUE_NODEJS", "GLUE_PHP", "GLUE_POWERSHELL", NULL
};

typedef enum {
    PENDING_RUN, PENDING_LOG, PENDING_KILL, PENDING_PROBE
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
    void *rid;                          //  the connection it went to (its reply
    size_t rid_size;                    //  counts from there, or the address's now)
    size_t expire_offset;               //  RUN, single form: of its expireTime value in
                                        //  the message (0: none)
    zframe_t *client;                   //  client routing id (LOG/KILL forwards, probes)
    uint64_t client_id;                 //  the client's request id
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
    //  A batch of prepared fires (s_fire) carries their plans instead of
    //  pending requests: nothing is allocated per fire at the instant
    struct _fire_item_t *fires;
    size_t fires_alloc;
    bool gone;                          //  its send failed
    //  Prebuilt (s_instant_add): filled while its fires are planned; its
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
    xxl_cron_t *cron;                   //  schedule_conf parsed (CRON jobs)
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
    //  the RUN leaves at the instant with no store access (s_fire)
    char *address;                      //  NULL: not prepared
    char *note;                         //  the router's text
    unsigned char *tp;                  //  TriggerParam from s_encode_tp
    size_t tp_size;
    uint64_t turn;                      //  the turn that wrote the row
    void *handle;                       //  in snap->plan_ids
    run_batch_t *prebuilt;              //  the instant's batch that holds it
    size_t slot;                        //  its item there
} plan_t;

//  Routing of a deferred row made at planning (s_trigger's `prepared`)
typedef struct {
    char *address;                      //  NULL: not prepared
    char *note;
} prepared_t;

//  A log line that a peer can provoke at will is written at most once per
//  XXL_RATELOG_MS per kind; the next one says how many were left out
#define XXL_RATELOG_MS 10000
typedef struct {
    int64_t logged_at;                  //  monotonic ms of the last line (0: none)
    uint64_t suppressed;                //  lines left out since
} ratelog_t;

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
    int64_t slow_minute;
    xxl_timer_t *timer;                 //  planned triggers in the pre-read window
    int timer_fd;                       //  timerfd woken at the next fire (-1: none),
    int64_t timer_armed;                //  armed for this wall-clock ms (-1: not)
    int64_t commit_us;                  //  recent commits' time (a decaying max)
    zhashx_t *plans;                    //  log id → plan_t of rows on the timer
    zlistx_t *fire_batches;             //  run_batch_t of prepared fires (s_fire)
    zhashx_t *instants;                 //  fire time → instant_t (owned, no destructor)
    zlistx_t *taking;                   //  prebuilt batches sent this s_fire whose
                                        //  plans they now own (not owned)
    zlistx_t *fire_later;               //  log ids due that need the store to go
    zlistx_t *turn_plans;               //  log ids of plans made this turn
    zlistx_t *unprepared;               //  log ids of plans made unprepared
    uint64_t turn;                      //  transactions begun
    int64_t fired_until;                //  xxl_job_fired as committed: rows planned
                                        //  up to then may have been sent
    int64_t fired_want;                 //  the same, written this turn
    int64_t fired_sent;                 //  xxl_job_fired.fired_sent as committed
    int64_t sent_max;                   //  latest planned time sent this turn
    int64_t data_version;               //  PRAGMA data_version at the last turn
    uint64_t foreign_replies;           //  agent replies from the wrong connection,
    int64_t foreign_logged;             //  counted since this monotonic ms's log line
    ratelog_t log_bad_frame;            //  undecodable frames
    ratelog_t log_frames;               //  messages of the wrong number of frames
    ratelog_t log_token;                //  requests with a wrong access token
    ratelog_t log_api_send;             //  replies a client's connection refused
    zhashx_t *backlogs;                 //  client return address (hex) → backlog_t
    size_t backlog_bytes;               //  in all backlogs
    ratelog_t log_agent_send;           //  messages an agent's connection refused
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
    int64_t next_fail_check;            //  monotonic ms of the next fail monitor pass
    int64_t next_lost_check;
    int64_t next_report;
    int64_t next_retention;
    bool stopping;                      //  $TERM: finishing in-flight RUNs
    int64_t stop_deadline;
    uint64_t next_id;
    int64_t next_registry_check;
    int64_t next_liveness;              //  monotonic ms of the next s_liveness
    zhashx_t *apps_changed;             //  app names whose addresses changed (a set)
    int64_t next_groups;                //  monotonic ms of the next s_groups_refresh
    int64_t next_pending_check;
    int64_t stall_mono;                 //  monotonic ms the loop last woke
    bool terminated;
    char hostname [256];
} server_t;

static void s_fire_check (server_t *self);

//  Server-side context of the message being handled
typedef struct {
    zframe_t *rid;                      //  sender routing id
    xxl_msg_t *msg;
} request_t;

static int64_t
s_now (void)
{
    return zclock_time ();
}

//  Writes a warning unless one of this kind went out less than
//  XXL_RATELOG_MS ago (then counts it)
static void
s_warn_limited (ratelog_t *kind, const char *format, ...)
    __attribute__ ((format (printf, 2, 3)));
static void
s_warn_limited (ratelog_t *kind, const char *format, ...)
{
    int64_t now = zclock_mono ();
    if (kind->logged_at && now - kind->logged_at < XXL_RATELOG_MS) {
        kind->suppressed++;
        return;
    }
    char line [1024];
    va_list args;
    va_start (args, format);
    vsnprintf (line, sizeof line, format, args);
    va_end (args);
    if (kind->suppressed)
        zsys_warning ("%s (and %" PRIu64 " more like it in the last %d s)", line,
                      kind->suppressed, (int) ((now - kind->logged_at) / 1000));
    else
        zsys_warning ("%s", line);
    kind->logged_at = now;
    kind->suppressed = 0;
}

//  Copies text for a log line: control bytes become \r, \n, \t or \xNN,
//  so a peer's name cannot forge or split lines.  Returns out.
static const char *
s_printable (const char *text, char *out, size_t outlen)
{
    assert (outlen >= 8);
    size_t at = 0;
    for (const unsigned char *p = (const unsigned char *) (text? text: "(null)");
         *p && at + 5 < outlen; p++) {
        if (*p >= 0x20 && *p != 0x7f && *p != '\\')
            out [at++] = (char) *p;
        else
        if (*p == '\n' || *p == '\r' || *p == '\t' || *p == '\\') {
            out [at++] = '\\';
            out [at++] = *p == '\n'? 'n': *p == '\r'? 'r': *p == '\t'? 't': '\\';
        }
        else
            at += snprintf (out + at, outlen - at, "\\x%02x", *p);
    }
    out [at] = 0;
    return out;
}

static bool
s_has_control (const char *text)
{
    for (const unsigned char *p = (const unsigned char *) text; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return true;
    return false;
}

static int
s_in_list (const char *value, const char **list)
{
    for (; *list; list++)
        if (streq (value, *list))
            return 1;
    return 0;
}

//  --------------------------------------------------------------------
//  Pending table keyed by uint64

static size_t
s_id_hash (const void *key)
{
    //  The id itself: ids are handed out in order, so the entries of one
    //  burst (plans, requests, log ids) sit in neighbouring buckets, which
    //  the cache rewards; the table's prime size spreads any stride
    return (size_t) *(const uint64_t *) key;
}

static int
s_id_compare (const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
    return x < y? -1: x > y? 1: 0;
}

//  A map keyed by an int64_t id that lives in the item (the key is not
//  copied); destructor (may be NULL) destroys the items
static zhashx_t *
s_id_map (zhashx_destructor_fn *destructor)
{
    zhashx_t *map = zhashx_new ();
    zhashx_set_key_hasher (map, s_id_hash);
    zhashx_set_key_comparator (map, s_id_compare);
    zhashx_set_key_duplicator (map, NULL);
    zhashx_set_key_destructor (map, NULL);
    zhashx_set_destructor (map, destructor);
    return map;
}

static void
s_pending_destroy (void **item)
{
    pending_t *pending = (pending_t *) *item;
    if (pending) {
        free (pending->address);
        free (pending->note);
        free (pending->rid);
        zframe_destroy (&pending->client);
        free (pending);
        *item = NULL;
    }
}

static void s_plan_destructor (void **item);
static void
s_batch_destroy (run_batch_t **self_p)
{
    if (*self_p) {
        run_batch_t *self = *self_p;
        for (size_t i = 0; self->fires && i < self->count; i++) {
            plan_t *plan = self->fires [i].plan;
            if (self->prebuilt) {
                if (plan)
                    plan->prebuilt = NULL;  //  (borrowed: self->plans owns it)
            }
            else
                s_plan_destructor ((void **) &plan);
        }
        free (self->fires);
        free (self->address);
        free (self->rid);
        free (self->pending_ids);
        xxl_enc_destroy (&self->enc);
        free (self);
        *self_p = NULL;
    }
}

static void
s_batch_destructor (void **item)
{
    s_batch_destroy ((run_batch_t **) item);
}

static void
s_free_item (void **item)
{
    free (*item);
    *item = NULL;
}

//  Drops one reference to a job snapshot
static void
s_snap_release (snap_t **snap_p)
{
    snap_t *snap = *snap_p;
    if (snap && --snap->refs == 0) {
        zlistx_destroy (&snap->plan_ids);
        xxl_cron_destroy (&snap->cron);
        xxl_job_free (&snap->job);
        free (snap);
    }
    *snap_p = NULL;
}

static void
s_snap_destructor (void **item)
{
    s_snap_release ((snap_t **) item);
}

static void
s_instant_destroy (instant_t **self_p)
{
    if (*self_p) {
        zlistx_destroy (&(*self_p)->batches);
        free (*self_p);
        *self_p = NULL;
    }
}

static void
s_plan_destructor (void **item)
{
    plan_t *plan = (plan_t *) *item;
    if (plan) {
        if (plan->prebuilt) {
            //  Its instant's batch cannot go as built any more
            plan->prebuilt->fires [plan->slot].plan = NULL;
            plan->prebuilt->dirty = true;
        }
        if (plan->handle)
            zlistx_delete (plan->snap->plan_ids, plan->handle);
        s_snap_release (&plan->snap);
        free (plan->address);
        free (plan->note);
        free (plan->tp);
        free (plan);
        *item = NULL;
    }
}

static void
s_group_destructor (void **item)
{
    xxl_group_t *group = (xxl_group_t *) *item;
    if (group) {
        xxl_group_free (group);
        free (group);
        *item = NULL;
    }
}

static void
s_resend_destroy (void **item)
{
    if (*item) {
        free (((xxl_resend_t *) *item)->address);
        free (*item);
        *item = NULL;
    }
}

static void
s_msg_destroy (void **item)
{
    zmsg_t *msg = (zmsg_t *) *item;
    zmsg_destroy (&msg);
    *item = NULL;
}

//  --------------------------------------------------------------------
//  Outbox

//  Queues the encoder's message for rid on the api or agents socket
static void
s_queue (server_t *self, zlistx_t *outbox, const void *rid, size_t rid_size)
{
    if (outbox == self->api_out && self->api_read)
        outbox = self->api_reads;       //  (sent even if the turn's commit fails)
    size_t size;
    const void *data = xxl_enc_finish (self->enc, &size);
    zmsg_t *msg = zmsg_new ();
    zmsg_addmem (msg, rid, rid_size);
    zmsg_addmem (msg, data, size);
    zlistx_add_end (outbox, msg);
    if (outbox == self->api_out || outbox == self->api_reads)
        self->api_out_bytes += size;
}

//  Queues the encoder's message for an agent; pending_id (0: none) names
//  the request it carries, so that a send the agent can no longer receive
//  fails that request at once
static void s_batch_close (server_t *self, run_batch_t *batch, zlistx_t *list);
static void s_resend_add (server_t *self, int64_t log_id, const char *address);
static void
s_queue_agent_to (server_t *self, const void *rid, size_t rid_size, uint64_t pending_id,
                  bool always)
{
    //  A batch of RUNs filling for this agent goes first: order is kept
    run_batch_t *batch = (run_batch_t *) zlistx_first (self->open_batches);
    while (batch) {
        run_batch_t *next = (run_batch_t *) zlistx_next (self->open_batches);
        if (batch->rid_size == rid_size && memcmp (batch->rid, rid, rid_size) == 0)
            s_batch_close (self, batch, self->open_batches);
        batch = next;
    }
    size_t size;
    const void *data = xxl_enc_finish (self->enc, &size);
    zmsg_t *msg = zmsg_new ();
    zmsg_addmem (msg, &pending_id, sizeof pending_id);
    zmsg_addmem (msg, rid, rid_size);
    zmsg_addmem (msg, data, size);
    zlistx_add_end (always? self->agents_always: self->agents_out, msg);
}

static void
s_queue_agent (server_t *self, const void *rid, size_t rid_size, uint64_t pending_id)
{
    s_queue_agent_to (self, rid, rid_size, pending_id, false);
}

static void
s_reply (server_t *self, request_t *request, int code, const char *msg)
{
    xxl_enc_reply (self->enc, xxl_msg_id (request->msg), code, msg);
    s_queue (self, self->api_out, zframe_data (request->rid), zframe_size (request->rid));
}

//  Starts a 200 reply whose content the caller writes, then s_reply_end
static void
s_reply_begin (server_t *self, request_t *request)
{
    xxl_enc_reply (self->enc, xxl_msg_id (request->msg), XXL_OK, NULL);
    xxl_enc_key (self->enc, "content");
}

//  A reply over the frame limit could not be read by any client (and
//  would sit in memory): it becomes a 400 that says so
static void
s_reply_end (server_t *self, request_t *request)
{
    size_t size = xxl_enc_size (self->enc);
    if (size > XXL_MSG_MAX_FRAME) {
        char text [200];
        snprintf (text, sizeof text, "the reply would be %zu bytes, over the %d-byte frame"
                  " limit: ask for fewer items (limit, offset)", size, XXL_MSG_MAX_FRAME);
        xxl_enc_reset (self->enc);
        xxl_enc_reply (self->enc, xxl_msg_id (request->msg), XXL_BAD_REQUEST, text);
    }
    s_queue (self, self->api_out, zframe_data (request->rid), zframe_size (request->rid));
}

static void
s_reply_id (server_t *self, request_t *request, int64_t id)
{
    s_reply_begin (self, request);
    xxl_enc_map_begin (self->enc);
    xxl_enc_kint (self->enc, "id", id);
    xxl_enc_map_end (self->enc);
    s_reply_end (self, request);
}

//  A send to an agent failed (the connection is gone): the request or
//  batch tagged `tag` fails at the next pending check
static void
s_agent_gone (server_t *self, uint64_t tag, zframe_t *rid)
{
    pending_t *pending = tag? (pending_t *) zhashx_lookup (self->pending, &tag): NULL;
    run_batch_t *batch = tag && !pending? (run_batch_t *) zhashx_lookup (self->batches, &tag)
                                        : NULL;
    const char *address = pending? pending->address: batch? batch->address: NULL;
    char name [300], why [80] = "its connection has closed";
    if (zmq_errno () == EAGAIN)
        snprintf (why, sizeof why, "it has not read its last %d messages",
                  xxl_transport_limits (XXL_ROLE_AGENTS).sndhwm);
    s_warn_limited (&self->log_agent_send, "server: cannot send to agent %s: %s",
                    s_printable (address? address: "(a reply)", name, sizeof name), why);
    if (!address)
        return;
    xxl_registry_unroute (self->registry, address, zframe_data (rid), zframe_size (rid));
    if (batch && batch->fires) {
        batch->gone = true;
        batch->deadline = 0;
        self->next_pending_check = 0;
        return;
    }
    for (size_t i = 0; i < (batch? batch->count: 1); i++) {
        pending_t *item = batch? (pending_t *) zhashx_lookup (self->pending,
                                                               &batch->pending_ids [i])
                               : pending;
        if (item) {
            item->deadline = 0;
            item->gone = true;
        }
    }
    self->next_pending_check = 0;
}

//  Sends one message of the agents' outbox: [tag][rid][frame]
static void s_pack_time (unsigned char out [9], int64_t value);
static int64_t s_expire_time (server_t *self, int64_t since);

//  A RUN queued in a turn leaves after the commit, which may have taken
//  long (a stalled disk): its expireTime and the wait for its answer count
//  from now, the moment it leaves
static void
s_run_leaves (server_t *self, uint64_t tag, zframe_t *body)
{
    if (!tag || !body)
        return;
    size_t offset = 0;
    int64_t late = 0;
    int64_t now = zclock_mono ();
    pending_t *pending = (pending_t *) zhashx_lookup (self->pending, &tag);
    run_batch_t *batch = pending? NULL: (run_batch_t *) zhashx_lookup (self->batches, &tag);
    if (pending && pending->kind == PENDING_RUN && pending->expire_offset) {
        offset = pending->expire_offset;
        late = now + self->config.run_timeout_ms - pending->deadline;
        if (late > 0)
            pending->deadline += late;
    }
    else
    if (batch && !batch->fires) {
        offset = batch->expire_offset;
        late = now - batch->created_mono;
        if (late > 100) {
            for (size_t i = 0; i < batch->count; i++) {
                pending_t *item = (pending_t *) zhashx_lookup (self->pending,
                                                               &batch->pending_ids [i]);
                if (item)
                    item->deadline += late;
            }
            batch->deadline = now + self->config.run_timeout_ms + 1000;
        }
    }
    if (offset && offset + 9 <= zframe_size (body)) {
        unsigned char expire [9];
        s_pack_time (expire, s_expire_time (self, s_now ()));
        memcpy (zframe_data (body) + offset, expire, sizeof expire);
    }
}

static void
s_agent_out (server_t *self, zmsg_t *msg)
{
    zframe_t *tag = zmsg_pop (msg);
    uint64_t tag_id = 0;
    if (tag && zframe_size (tag) == sizeof tag_id)
        memcpy (&tag_id, zframe_data (tag), sizeof tag_id);
    zframe_destroy (&tag);
    s_run_leaves (self, tag_id, zmsg_last (msg));
    //  ROUTER_MANDATORY: a peer that is gone fails here, and so does its
    //  request, at the next pending check (its deadline now)
    zframe_t *rid = zframe_dup (zmsg_first (msg));
    if (zmsg_send (&msg, self->agents)) {
        zmsg_destroy (&msg);
        s_agent_gone (self, tag_id, rid);
    }
    zframe_destroy (&rid);
}

//  Tries to hand [return address][reply] to ZeroMQ: the address's last
//  byte says whether a REQ delimiter goes before the reply (s_receive).
//  Returns 0 (sent; msg destroyed), or -1 with errno EAGAIN (the
//  connection's queue is full; msg kept) or EHOSTUNREACH (gone).
static int
s_api_try (server_t *self, zmsg_t **msg_p)
{
    void *handle = zsock_resolve (self->api);
    zframe_t *address = zmsg_first (*msg_p);
    zframe_t *body = zmsg_next (*msg_p);
    if (!address || !body || zframe_size (address) < 2) {
        zmsg_destroy (msg_p);
        return 0;
    }
    size_t size = zframe_size (address) - 1;
    bool req = zframe_data (address) [size] == XXL_PEER_REQ;
    //  (ROUTER_MANDATORY: a full or absent peer fails the first frame, and
    //  then nothing of the message was taken)
    if (zmq_send (handle, zframe_data (address), size, ZMQ_SNDMORE) < 0)
        return -1;
    if (req)
        zmq_send (handle, "", 0, ZMQ_SNDMORE);
    zmq_send (handle, zframe_data (body), zframe_size (body), 0);
    zmsg_destroy (msg_p);
    return 0;
}

static char *
s_backlog_key (zmsg_t *msg)
{
    zframe_t *address = zmsg_first (msg);
    return zframe_strhex (address);
}

//  Sends a client's reply, after any backlog it has.  A reply that finds
//  the connection's queue full (its ZeroMQ queue limit) waits in the
//  client's backlog, which s_api_backlogs sends from at each turn; past
//  XXL_API_BACKLOG bytes for one client (or XXL_API_BACKLOGS for all)
//  replies are dropped and logged.  Destroys msg.
static void
s_api_send (server_t *self, zmsg_t *msg)
{
    char *key = zhashx_size (self->backlogs)? s_backlog_key (msg): NULL;
    backlog_t *backlog = key? (backlog_t *) zhashx_lookup (self->backlogs, key): NULL;
    if (!backlog) {
        if (s_api_try (self, &msg) == 0 || zmq_errno () != EAGAIN) {
            zmsg_destroy (&msg);        //  (sent, or the client has gone)
            zstr_free (&key);
            return;
        }
        if (!key)
            key = s_backlog_key (msg);
        backlog = (backlog_t *) zmalloc (sizeof (backlog_t));
        backlog->msgs = zlistx_new ();
        zlistx_set_destructor (backlog->msgs, s_msg_destroy);
        zhashx_insert (self->backlogs, key, backlog);
    }
    size_t size = zmsg_content_size (msg);
    if (backlog->bytes + size > XXL_API_BACKLOG
    ||  self->backlog_bytes + size > XXL_API_BACKLOGS) {
        s_warn_limited (&self->log_api_send, "server: a reply was dropped: the client has not"
                        " read %zu bytes of replies", backlog->bytes);
        zmsg_destroy (&msg);
    }
    else {
        zlistx_add_end (backlog->msgs, msg);
        backlog->bytes += size;
        self->backlog_bytes += size;
    }
    zstr_free (&key);
}

//  Sends what the clients' backlogs hold, oldest first, as far as their
//  queues take it
static void
s_api_backlogs (server_t *self)
{
    zlistx_t *done = zlistx_new ();
    for (backlog_t *backlog = (backlog_t *) zhashx_first (self->backlogs); backlog;
         backlog = (backlog_t *) zhashx_next (self->backlogs)) {
        zmsg_t *msg;
        while ((msg = (zmsg_t *) zlistx_first (backlog->msgs))) {
            size_t size = zmsg_content_size (msg);
            zlistx_detach_cur (backlog->msgs);
            if (s_api_try (self, &msg) && zmq_errno () == EAGAIN) {
                zlistx_add_start (backlog->msgs, msg);
                break;
            }
            zmsg_destroy (&msg);        //  (sent, or the client has gone)
            backlog->bytes -= size;
            self->backlog_bytes -= size;
        }
        if (zlistx_size (backlog->msgs) == 0)
            zlistx_add_end (done, (void *) zhashx_cursor (self->backlogs));
    }
    for (const char *key = (const char *) zlistx_first (done); key;
         key = (const char *) zlistx_next (done))
        zhashx_delete (self->backlogs, key);
    zlistx_destroy (&done);
}

static void
s_backlog_destroy (void **item)
{
    backlog_t *backlog = (backlog_t *) *item;
    zlistx_destroy (&backlog->msgs);
    free (backlog);
    *item = NULL;
}

static void
s_zmq_free (void *data, void *hint)
{
    (void) hint;
    free (data);
}

//  Sends [rid][*data_p] on the agents socket, taking the data (ZeroMQ
//  frees it once written, without a copy).  A send that fails fails the
//  request or batch tagged `tag`, as in s_agent_out.
static void
s_agent_out_owned (server_t *self, uint64_t tag, const void *rid, size_t rid_size,
                   void **data_p, size_t size)
{
    void *data = *data_p;
    *data_p = NULL;
    void *handle = zsock_resolve (self->agents);
    int rc = zmq_send (handle, rid, rid_size, ZMQ_SNDMORE);
    if (rc >= 0) {
        zmq_msg_t part;
        rc = zmq_msg_init_data (&part, data, size, s_zmq_free, NULL);
        if (rc == 0) {
            rc = zmq_msg_send (&part, handle, 0);
            if (rc < 0)
                zmq_msg_close (&part);  //  (frees data)
        }
        else
            free (data);
    }
    else
        free (data);
    if (rc < 0) {
        zframe_t *frame = zframe_new (rid, rid_size);
        s_agent_gone (self, tag, frame);
        zframe_destroy (&frame);
    }
}

//  After a failed commit: every reply queued for a client this turn
//  becomes a 500 with the store's error (replies to reads stand), and the
//  failure is logged once per cause per XXL_COMMIT_LOG_MS
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
    zlistx_t *failed = zlistx_new ();
    zlistx_set_destructor (failed, s_msg_destroy);
    zmsg_t *msg;
    while ((msg = (zmsg_t *) zlistx_detach (self->api_out, NULL))) {
        zframe_t *rid = zmsg_pop (msg);
        zframe_t *body = zmsg_pop (msg);
        uint64_t id = 0;
        char reason [64];
        xxl_msg_t *reply = body? xxl_msg_decode (zframe_data (body), zframe_size (body), &id,
                                                 reason, sizeof reason): NULL;
        xxl_msg_destroy (&reply);
        if (rid && id) {
            xxl_enc_reply (self->enc, id, XXL_FAILURE, text);
            s_queue (self, failed, zframe_data (rid), zframe_size (rid));
        }
        zframe_destroy (&rid);
        zframe_destroy (&body);
        zmsg_destroy (&msg);
    }
    while ((msg = (zmsg_t *) zlistx_detach (failed, NULL)))
        zlistx_add_end (self->api_out, msg);
    zlistx_destroy (&failed);
}

//  After a failed commit: the turn's messages to agents are dropped, and
//  the runs they carried go back to be sent again (s_resend_add; what the
//  turn wrote of them is gone, a row the turn made is gone too and then
//  nothing goes).  Replies to REGISTER stand (agents_always).
static void
s_agents_dropped (server_t *self)
{
    zlistx_t *ids = zlistx_new ();
    zmsg_t *msg;
    while ((msg = (zmsg_t *) zlistx_detach (self->agents_out, NULL))) {
        zframe_t *tag = zmsg_first (msg);
        uint64_t id = 0;
        if (tag && zframe_size (tag) == sizeof id)
            memcpy (&id, zframe_data (tag), sizeof id);
        run_batch_t *batch = id? (run_batch_t *) zhashx_lookup (self->batches, &id): NULL;
        if (batch && !batch->fires) {
            for (size_t i = 0; i < batch->count; i++)
                zlistx_add_end (ids, (void *) (uintptr_t) batch->pending_ids [i]);
            zhashx_delete (self->batches, &id);
        }
        else
        if (id)
            zlistx_add_end (ids, (void *) (uintptr_t) id);
        zmsg_destroy (&msg);
    }
    run_batch_t *batch;
    while ((batch = (run_batch_t *) zlistx_first (self->open_batches))) {
        for (size_t i = 0; i < batch->count; i++)
            zlistx_add_end (ids, (void *) (uintptr_t) batch->pending_ids [i]);
        zlistx_delete (self->open_batches, zlistx_cursor (self->open_batches));
    }
    for (void *item = zlistx_first (ids); item; item = zlistx_next (ids)) {
        uint64_t id = (uint64_t) (uintptr_t) item;
        pending_t *pending = (pending_t *) zhashx_lookup (self->pending, &id);
        if (!pending)
            continue;
        if (pending->kind == PENDING_RUN) {
            //  (a row this turn made is gone with it, and its id is never
            //  handed out again: nothing to send)
            if (pending->log_id < self->turn_first_id)
                s_resend_add (self, pending->log_id, pending->address);
            zhashx_delete (self->pending, &id);
        }
        else
            pending->deadline = 0;      //  (its client is answered now: not sent)
    }
    zlistx_destroy (&ids);
    self->next_pending_check = 0;
    //  What else the turn promised itself (an acceptance, a failure, a
    //  fire time) is gone from the store and from memory: a sweep looks
    //  for such rows once the store takes writes again
    self->sweep_at = zclock_mono () + 2 * (int64_t) self->config.run_timeout_ms + 1000;
}

//  Rows with no answer and no result, older than twice the answer
//  timeout, that nothing in memory will send or fail (their driver's
//  write was rolled back by a failed commit) go back: to their agent
//  again when they had one (it refuses a logId it has), else routed anew.
//  Returns how many.
static size_t
s_sweep_untracked (server_t *self)
{
    zhashx_t *flying = s_id_map (NULL);
    for (pending_t *pending = (pending_t *) zhashx_first (self->pending); pending;
         pending = (pending_t *) zhashx_next (self->pending))
        if (pending->kind == PENDING_RUN)
            zhashx_insert (flying, &pending->log_id, pending);
    for (run_batch_t *batch = (run_batch_t *) zhashx_first (self->batches); batch;
         batch = (run_batch_t *) zhashx_next (self->batches))
        for (size_t i = 0; batch->fires && i < batch->count; i++)
            if (batch->fires [i].plan)
                zhashx_insert (flying, &batch->fires [i].plan->log_id, batch);
    int64_t now = s_now ();
    int64_t ids [4096];
    size_t count = 0, swept = 0;
    xxl_store_ids (self->store,
        "SELECT id FROM xxl_job_log WHERE trigger_code = 0 AND handle_code = 0"
        " AND trigger_time < ? ORDER BY id LIMIT 4096",
        now - 2 * (int64_t) self->config.run_timeout_ms, ids, 4096, &count);
    for (size_t i = 0; i < count; i++) {
        if (zhashx_lookup (flying, &ids [i]) || zhashx_lookup (self->plans, &ids [i])
        ||  zhashx_lookup (self->accepted_ids, &ids [i])
        ||  zhashx_lookup (self->resend_ids, &ids [i]))
            continue;
        xxl_log_t log;
        if (xxl_store_log_load (self->store, ids [i], &log))
            continue;
        if (log.schedule_time <= 0 || log.schedule_time < now - self->config.preread_ms) {
            if (*log.executor_address)
                s_resend_add (self, log.id, log.executor_address);
            else
                xxl_timer_push (self->timer, now, log.id);
            swept++;
        }
        xxl_log_free (&log);
    }
    zhashx_destroy (&flying);
    if (swept)
        zsys_warning ("server: %zu trigger(s) a failed commit had left behind go again", swept);
    return swept;
}

static void
s_flush (server_t *self)
{
    run_batch_t *batch;
    while ((batch = (run_batch_t *) zlistx_first (self->open_batches)))
        s_batch_close (self, batch, self->open_batches);
    zmsg_t *msg;
    //  (REGISTER replies first: an agent learns the scheduler's clock
    //  before it judges the RUNs that follow)
    while ((msg = (zmsg_t *) zlistx_detach (self->agents_always, NULL)))
        s_agent_out (self, msg);
    while ((msg = (zmsg_t *) zlistx_detach (self->agents_out, NULL)))
        s_agent_out (self, msg);
    //  Clients' replies after the RUNs: a trigger's run starts sooner
    if (zhashx_size (self->backlogs))
        s_api_backlogs (self);
    while ((msg = (zmsg_t *) zlistx_detach (self->api_out, NULL)))
        s_api_send (self, msg);
    while ((msg = (zmsg_t *) zlistx_detach (self->api_reads, NULL)))
        s_api_send (self, msg);
    self->api_out_bytes = 0;
}

//  --------------------------------------------------------------------
//  Agent requests

//  Puts a row back to be sent again to address (once it is connected): a
//  row recovery found possibly sent, or whose RUN a failed commit kept
//  from leaving.  It goes only while still unanswered (s_dispatch_row).
static void
s_resend_add (server_t *self, int64_t log_id, const char *address)
{
    if (zhashx_lookup (self->resend_ids, &log_id))
        return;
    xxl_resend_t *resend = (xxl_resend_t *) zmalloc (sizeof (xxl_resend_t));
    resend->log_id = log_id;
    resend->address = strdup (address);
    resend->deadline = zclock_mono () + self->config.recovery_wait_ms;
    zlistx_add_end (self->resends, resend);
    zhashx_insert (self->resend_ids, &resend->log_id, resend);
}

//  Starts a request to address; returns the pending entry, or NULL when
//  the address is not connected (msg explains)
static pending_t *
s_pending_new (server_t *self, const char *address, pending_kind_t kind, int timeout_ms,
               char *why, size_t whylen)
{
    size_t rid_size;
    const void *rid = xxl_registry_route (self->registry, address, &rid_size);
    if (!rid) {
        snprintf (why, whylen, "agent '%s' is not connected to this scheduler", address);
        return NULL;
    }
    pending_t *pending = (pending_t *) zmalloc (sizeof (pending_t));
    pending->id = ++self->next_id;
    pending->kind = kind;
    pending->deadline = zclock_mono () + timeout_ms;
    pending->address = strdup (address);
    pending->rid = malloc (rid_size);
    assert (pending->rid);
    memcpy (pending->rid, rid, rid_size);
    pending->rid_size = rid_size;
    zhashx_insert (self->pending, &pending->id, pending);
    return pending;
}

static pending_t *
s_agent_request (server_t *self, const char *address, const char *type,
                 pending_kind_t kind, int timeout_ms, char *why, size_t whylen)
{
    pending_t *pending = s_pending_new (self, address, kind, timeout_ms, why, whylen);
    if (pending)
        xxl_enc_request (self->enc, type, pending->id);
    return pending;
}

//  Queues the message built after s_agent_request
static void
s_agent_send (server_t *self, pending_t *pending)
{
    size_t rid_size;
    const void *rid = xxl_registry_route (self->registry, pending->address, &rid_size);
    if (rid)
        //  (LOG, KILL and probes depend on nothing the turn writes: they go
        //  whatever its commit)
        s_queue_agent_to (self, rid, rid_size, pending->id, true);
}

//  A TriggerParam's value of logDateTime: int64 in its fixed 9-byte form,
//  so that a prepared TriggerParam takes it at the instant it goes
static void
s_pack_time (unsigned char out [9], int64_t value)
{
    uint64_t v = (uint64_t) value;
    out [0] = 0xd3;
    for (int i = 8; i >= 1; i--, v >>= 8)
        out [i] = (unsigned char) v;
}

//  A RUN's expireTime: the agent must not start any of its runs once its
//  estimate of this scheduler's clock is past it.  Half the answer timeout
//  after `since` (when the RUN's deadline started counting), so that an
//  agent that accepts in time is heard before the run is given up on, and
//  one frozen or cut off past it refuses what was queued to it
static int64_t
s_expire_time (server_t *self, int64_t since)
{
    return since + self->config.run_timeout_ms / 2;
}

//  Encodes a RUN's TriggerParam into self->item_enc as one map whose last
//  key, logDateTime, has no value yet (the caller appends s_pack_time's
//  bytes).  Returns the bytes (owned by item_enc until its next use).
static const unsigned char *
s_encode_tp (server_t *self, const xxl_job_t *job, int64_t log_id, const char *param,
             int shard_index, int shard_total, size_t *size)
{
    xxl_enc_t *enc = self->item_enc;
    xxl_enc_reset (enc);
    xxl_enc_map_begin (enc);
    xxl_enc_kint (enc, "jobId", job->id);
    xxl_enc_kstr (enc, "executorHandler", job->executor_handler);
    xxl_enc_kstr (enc, "executorParams", param? param: "");
    xxl_enc_kstr (enc, "executorBlockStrategy", job->executor_block_strategy);
    xxl_enc_kint (enc, "executorTimeout", job->executor_timeout);
    xxl_enc_kint (enc, "logId", log_id);
    xxl_enc_kstr (enc, "glueType", job->glue_type);
    if (strneq (job->glue_type, "BEAN"))
        xxl_enc_kstr (enc, "glueSource", job->glue_source);
    xxl_enc_kint (enc, "glueUpdatetime", job->glue_updatetime);
    xxl_enc_kint (enc, "broadcastIndex", shard_index);
    xxl_enc_kint (enc, "broadcastTotal", shard_total);
    xxl_enc_key (enc, "logDateTime");
    return (const unsigned char *) xxl_enc_finish (enc, size);
}

//  Sends a batch (taken): its message joins the agents' outbox, or leaves
//  at once (`now`: prepared fires, what they need is committed already).
//  Prepared fires get `stamp` as their time (0: now).  The batch then
//  waits in self->batches for the agent's answer.
static void
s_batch_send (server_t *self, run_batch_t *batch, bool now, int64_t stamp)
{
    int64_t since = batch->created;
    if (batch->fires) {
        //  Prepared fires: their time is when the message goes
        if (!stamp)
            stamp = s_now ();
        unsigned char time [9];
        s_pack_time (time, stamp);
        for (size_t i = 0; i < batch->count; i++) {
            xxl_enc_patch (batch->enc, batch->fires [i].offset, time, sizeof time);
            batch->fires [i].stamp = stamp;
        }
        since = stamp;                  //  (their deadline counts from here)
    }
    unsigned char expire [9];
    s_pack_time (expire, s_expire_time (self, since));
    xxl_enc_patch (batch->enc, batch->expire_offset, expire, sizeof expire);
    size_t size;
    batch->deadline = zclock_mono () + self->config.run_timeout_ms + 1000;
    if (now) {
        //  (no copy of a message that may be megabytes: ZeroMQ frees it)
        void *data = xxl_enc_take (batch->enc, &size);
        xxl_enc_destroy (&batch->enc);
        zhashx_insert (self->batches, &batch->id, batch);
        s_agent_out_owned (self, batch->id, batch->rid, batch->rid_size, &data, size);
        return;
    }
    const void *data = xxl_enc_finish (batch->enc, &size);
    zmsg_t *msg = zmsg_new ();
    zmsg_addmem (msg, &batch->id, sizeof batch->id);
    zmsg_addmem (msg, batch->rid, batch->rid_size);
    zmsg_addmem (msg, data, size);
    xxl_enc_destroy (&batch->enc);
    zhashx_insert (self->batches, &batch->id, batch);
    zlistx_add_end (self->agents_out, msg);
}

//  Sends a batch of `list` (open_batches or fire_batches): from
//  fire_batches at once, from open_batches after the turn's commit
static void
s_batch_close (server_t *self, run_batch_t *batch, zlistx_t *list)
{
    for (void *item = zlistx_first (list); item; item = zlistx_next (list))
        if (item == batch) {
            zlistx_detach_cur (list);
            break;
        }
    s_batch_send (self, batch, list == self->fire_batches, 0);
}

//  An open batch of `open` for the agent at rid with room for one more
//  item, or a new one (max items; fires: it carries prepared fires)
static run_batch_t *
s_batch_for (server_t *self, zlistx_t *open, const char *address, const void *rid,
             size_t rid_size, int max, bool fires)
{
    run_batch_t *batch = (run_batch_t *) zlistx_last (open);
    if (batch && batch->rid_size == rid_size && memcmp (batch->rid, rid, rid_size) == 0
    &&  batch->count < batch->max && batch->bytes < XXL_MSG_MAX_FRAME / 4)
        return batch;
    for (batch = (run_batch_t *) zlistx_first (open); batch;
         batch = (run_batch_t *) zlistx_next (open))
        if (batch->rid_size == rid_size && memcmp (batch->rid, rid, rid_size) == 0
        &&  batch->count < batch->max && batch->bytes < XXL_MSG_MAX_FRAME / 4)
            return batch;
    batch = (run_batch_t *) zmalloc (sizeof (run_batch_t));
    batch->id = ++self->next_id;
    batch->address = strdup (address);
    batch->rid = malloc (rid_size);
    memcpy (batch->rid, rid, rid_size);
    batch->rid_size = rid_size;
    batch->max = (size_t) max;
    if (fires) {
        batch->fires_alloc = (size_t) max;
        batch->fires = (fire_item_t *) malloc (batch->fires_alloc * sizeof (fire_item_t));
        assert (batch->fires);
    }
    batch->enc = xxl_enc_new ();
    batch->created = s_now ();
    batch->created_mono = zclock_mono ();
    xxl_enc_request (batch->enc, "RUN", batch->id);
    unsigned char expire [9];
    s_pack_time (expire, s_expire_time (self, batch->created));    //  (patched when it goes)
    xxl_enc_key (batch->enc, "expireTime");
    batch->expire_offset = xxl_enc_size (batch->enc);
    xxl_enc_raw (batch->enc, expire, sizeof expire, 0);
    xxl_enc_key (batch->enc, "runs");
    xxl_enc_array_begin (batch->enc);
    zlistx_add_end (open, batch);
    return batch;
}

//  Queues the RUN of pending: tp (size bytes, from s_encode_tp) with
//  logDateTime `time`, in a batch of `open` when the agent takes batches.
//  open is open_batches (sent after the turn's commit) or fire_batches
//  (sent at once; see s_batch_close).
static void
s_run_queue (server_t *self, pending_t *pending, const unsigned char *tp, size_t size,
             int64_t time, zlistx_t *open)
{
    bool now = open == self->fire_batches;
    unsigned char stamp [9];
    s_pack_time (stamp, time);
    size_t rid_size;
    const void *rid = xxl_registry_route (self->registry, pending->address, &rid_size);
    if (!rid)
        return;                         //  (callers checked: it fails at its deadline)
    int max = xxl_registry_run_batch (self->registry, pending->address);
    if (max < 2 || size < 5) {
        //  The single form: the TriggerParam's keys at the top level
        uint32_t keys = (uint32_t) tp [1] << 24 | (uint32_t) tp [2] << 16
                      | (uint32_t) tp [3] << 8 | tp [4];
        xxl_enc_request (self->enc, "RUN", pending->id);
        xxl_enc_raw (self->enc, tp + 5, size - 5, keys);
        xxl_enc_raw (self->enc, stamp, sizeof stamp, 0);
        unsigned char expire [9];
        s_pack_time (expire, s_expire_time (self, s_now ()));     //  (patched when it goes)
        xxl_enc_key (self->enc, "expireTime");
        pending->expire_offset = xxl_enc_size (self->enc);
        xxl_enc_raw (self->enc, expire, sizeof expire, 0);
        if (now) {
            size_t msg_size;
            const void *data = xxl_enc_finish (self->enc, &msg_size);
            zmsg_t *msg = zmsg_new ();
            zmsg_addmem (msg, &pending->id, sizeof pending->id);
            zmsg_addmem (msg, rid, rid_size);
            zmsg_addmem (msg, data, msg_size);
            s_agent_out (self, msg);
        }
        else
            s_queue_agent (self, rid, rid_size, pending->id);
        return;
    }
    run_batch_t *batch = s_batch_for (self, open, pending->address, rid, rid_size, max,
                                      false);
    if (batch->count == batch->alloc) {
        batch->alloc = batch->alloc? batch->alloc * 2: 64;
        batch->pending_ids = (uint64_t *) realloc (batch->pending_ids,
                                                   batch->alloc * sizeof (uint64_t));
        assert (batch->pending_ids);
    }
    batch->pending_ids [batch->count++] = pending->id;
    xxl_enc_raw (batch->enc, tp, size, 1);
    xxl_enc_raw (batch->enc, stamp, sizeof stamp, 0);
    batch->bytes += size + sizeof stamp;
    if (batch->count >= batch->max || batch->bytes >= XXL_MSG_MAX_FRAME / 4)
        s_batch_close (self, batch, open);
}

static void s_run_done (server_t *self, pending_t *pending, int code, const char *msg);
static void s_run_answer (server_t *self, int64_t log_id, const char *note, const char *address,
                          int64_t presumed, int64_t stamp, int code, const char *msg);
static int64_t s_section_chars (const char *note, const char *address);

//  The agent's answer to a batch RUN: one {code, msg} per item, in order
static void
s_batch_answer (server_t *self, run_batch_t *batch, xxl_msg_t *msg)
{
    const msgpack_object *root = xxl_msg_root (msg);
    const msgpack_object *code_obj = xxl_msg_get (root, "code");
    int code = code_obj && code_obj->type == MSGPACK_OBJECT_POSITIVE_INTEGER
               && code_obj->via.u64 < 1000? (int) code_obj->via.u64: XXL_FAILURE;
    const char *text = xxl_msg_str (msg, NULL, "msg", 0, XXL_MSG_MAX_STR, NULL);
    const msgpack_object *content = xxl_msg_get (root, "content");
    size_t answered = code == XXL_OK && content && content->type == MSGPACK_OBJECT_ARRAY
                    ? content->via.array.size: 0;
    for (size_t i = 0; i < batch->count; i++) {
        if (i % 64 == 63)
            s_fire_check (self);
        pending_t *pending = batch->fires? NULL
                           : (pending_t *) zhashx_lookup (self->pending, &batch->pending_ids [i]);
        if (!pending && !batch->fires)
            continue;                   //  its deadline passed already
        int item_code = code == XXL_OK? XXL_FAILURE: code;
        const char *item_text = code == XXL_OK? "the agent's batch answer has no item for this run"
                                              : text;
        char buffer [4096];
        if (i < answered) {
            const msgpack_object *item = &content->via.array.ptr [i];
            const msgpack_object *c = item->type == MSGPACK_OBJECT_MAP
                                    ? xxl_msg_get (item, "code"): NULL;
            const msgpack_object *m = item->type == MSGPACK_OBJECT_MAP
                                    ? xxl_msg_get (item, "msg"): NULL;
            item_code = c && c->type == MSGPACK_OBJECT_POSITIVE_INTEGER && c->via.u64 < 1000
                      ? (int) c->via.u64: XXL_FAILURE;
            item_text = NULL;
            if (m && m->type == MSGPACK_OBJECT_STR) {
                size_t len = m->via.str.size < sizeof buffer - 1? m->via.str.size
                                                                : sizeof buffer - 1;
                memcpy (buffer, m->via.str.ptr, len);
                buffer [len] = 0;
                if (memchr (buffer, 0, len))
                    len = strlen (buffer);
                item_text = buffer;
            }
            else
            if (!c || c->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
                item_text = "the agent's answer for this run has no valid code";
        }
        if (pending) {
            s_run_done (self, pending, item_code, item_text);
            zhashx_delete (self->pending, &batch->pending_ids [i]);
        }
        else {
            plan_t *plan = batch->fires [i].plan;
            s_run_answer (self, plan->log_id, plan->note, plan->address,
                          s_section_chars (plan->note, plan->address), batch->fires [i].stamp,
                          item_code, item_text);
        }
    }
    zhashx_delete (self->batches, &batch->id);
}

//  Fails the fires of a batch that got no answer; routes again those of one
//  that could not be sent
//  A RUN whose send failed (the agent's connection had closed: it never
//  left) is routed again, among the agents still connected: its address
//  and the section written ahead (`presumed` characters) are taken back
//  and it goes by the timer now (s_dispatch_row)
static void
s_reroute (server_t *self, int64_t log_id, int64_t presumed)
{
    if (xxl_store_exec (self->store,
            "UPDATE xxl_job_log SET executor_address = NULL, trigger_msg ="
            " substr (trigger_msg, 1, max (length (trigger_msg) - ?, 0))"
            " WHERE id = ? AND trigger_code = 0 AND handle_code = 0", "ii",
            presumed, log_id) == 1)
        xxl_timer_push (self->timer, s_now (), log_id);
}

static void
s_batch_expire (server_t *self, run_batch_t *batch)
{
    char text [128];
    if (batch->gone) {
        for (size_t i = 0; batch->fires && i < batch->count; i++) {
            plan_t *plan = batch->fires [i].plan;
            if (plan)
                s_reroute (self, plan->log_id, s_section_chars (plan->note, plan->address));
        }
        return;
    }
    snprintf (text, sizeof text, "no answer from the agent within %d ms",
              self->config.run_timeout_ms);
    for (size_t i = 0; batch->fires && i < batch->count; i++) {
        plan_t *plan = batch->fires [i].plan;
        s_run_answer (self, plan->log_id, plan->note, plan->address,
                      s_section_chars (plan->note, plan->address), batch->fires [i].stamp,
                      XXL_CODE_FAIL, text);
    }
}

//  Adds a prepared fire to this instant's batch for its agent (rid, max
//  items): its TriggerParam with logDateTime `stamp`.  Takes the plan.
static void
s_fire_queue (server_t *self, plan_t **plan_p, int64_t stamp, const void *rid,
              size_t rid_size, int max)
{
    plan_t *plan = *plan_p;
    *plan_p = NULL;
    zlistx_t *open = self->fire_batches;
    //  A batch with room for this agent (full ones wait for the end of the
    //  instant: all go together, so the agent's work does not slow the
    //  rest of the instant's fires)
    run_batch_t *batch = s_batch_for (self, open, plan->address, rid, rid_size, max, true);
    unsigned char time [9];
    s_pack_time (time, stamp);
    xxl_enc_raw (batch->enc, plan->tp, plan->tp_size, 1);
    batch->fires [batch->count].offset = xxl_enc_size (batch->enc);
    xxl_enc_raw (batch->enc, time, sizeof time, 0);
    batch->fires [batch->count].plan = plan;
    batch->fires [batch->count].stamp = stamp;
    batch->count++;
    batch->bytes += plan->tp_size + sizeof time;
}

//  --------------------------------------------------------------------
//  Triggers

//  Joins count strings (NULL: none) in text, reused from call to call;
//  returns its NUL-terminated contents, valid until the next call
static char *
s_text (zchunk_t *text, const char *const *pieces, size_t count)
{
    zchunk_set (text, NULL, 0);
    for (size_t i = 0; i < count; i++)
        if (pieces [i] && *pieces [i])
            zchunk_extend (text, pieces [i], strlen (pieces [i]));
    zchunk_extend (text, "", 1);
    return (char *) zchunk_data (text);
}

static const char *
s_trigger_title (const char *type)
{
    if (streq (type, "MANUAL"))   return "Manual trigger";
    if (streq (type, "CRON"))     return "Cron trigger";
    if (streq (type, "RETRY"))    return "Fail retry trigger";
    if (streq (type, "PARENT"))   return "Parent job trigger";
    if (streq (type, "API"))      return "API trigger";
    if (streq (type, "MISFIRE"))  return "Misfire compensation trigger";
    return type;
}

typedef struct {
    const char *trigger_type;           //  MANUAL CRON RETRY PARENT API MISFIRE
    int fail_retry_count;               //  -1: the job's
    const char *param;                  //  NULL: the job's
    const char *address;                //  NULL: route
    int shard_index, shard_total;       //  -1: none given
    int64_t schedule_time;              //  0: none
    int defer;                          //  1: write the rows only (planner timer sends)
    int prepare;                        //  with defer: route now, write the address
    //  Out: s_trigger wrote one row of a SHARDING_BROADCAST job with no
    //  shard yet (no agent to count, or agents still reconnecting): it is
    //  made one row per agent when it fires (s_broadcast_expand)
    bool unexpanded;
    //  Out: the rows wait on the timer for the group's agents (a trigger
    //  made while they reconnect after a start), as planned fires do
    bool held;
} trigger_args_t;

//  Splits a comma-separated list into a sorted, deduplicated array
static size_t
s_split_addresses (const char *list, char ***out)
{
    *out = NULL;
    if (!list || !*list)
        return 0;
    zlistx_t *items = zlistx_new ();
    zlistx_set_destructor (items, (zlistx_destructor_fn *) zstr_free);
    zlistx_set_comparator (items, (zlistx_comparator_fn *) strcmp);
    char *copy = strdup (list), *save = NULL;
    for (char *token = strtok_r (copy, ",", &save); token; token = strtok_r (NULL, ",", &save)) {
        while (*token == ' ')
            token++;
        char *end = token + strlen (token);
        while (end > token && end [-1] == ' ')
            *--end = 0;
        if (*token && !zlistx_find (items, token))
            zlistx_add_end (items, strdup (token));
    }
    free (copy);
    zlistx_sort (items);
    size_t count = zlistx_size (items);
    *out = (char **) calloc (count + 1, sizeof (char *));
    size_t i = 0;
    for (char *item = (char *) zlistx_first (items); item; item = (char *) zlistx_next (items))
        (*out) [i++] = strdup (item);
    zlistx_destroy (&items);
    return count;
}

static void
s_free_addresses (char **list, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free (list [i]);
    free (list);
}

static void s_fix_delay_release (server_t *self, int64_t log_id, int64_t now);
static int s_child_cycle (server_t *self, int64_t job_id, const char *children, char *path,
                          size_t pathlen, int depth);
static void s_alarm_again (server_t *self, int64_t log_id);

//  The id of the next log row this turn writes (0 when the store cannot
//  say: the row then takes AUTOINCREMENT's).  Read once per turn, inside
//  the write transaction; every log row goes through here.
static int64_t
s_next_log_id (server_t *self)
{
    if (self->next_log_id <= 0) {
        self->next_log_id = xxl_store_log_next_id (self->store);
        if (self->next_log_id > 0 && self->next_log_id < self->log_id_floor)
            self->next_log_id = self->log_id_floor;
    }
    if (self->next_log_id <= 0)
        return 0;
    if (self->next_log_id >= self->log_id_floor)
        self->log_id_floor = self->next_log_id + 1;
    return self->next_log_id++;
}

//  Remembers that the agent accepted log_id's RUN; the callback, or
//  s_accepted_flush after XXL_ACCEPTED_MS, writes trigger_code 200
#define XXL_ACCEPTED_MS 500
static void
s_accepted_add (server_t *self, int64_t log_id, int64_t stamp)
{
    if (zhashx_lookup (self->accepted_ids, &log_id))
        return;
    accepted_t *item = (accepted_t *) zmalloc (sizeof (accepted_t));
    item->log_id = log_id;
    item->stamp = stamp;
    item->at = zclock_mono ();
    zlistx_add_end (self->accepted, item);
    zhashx_insert (self->accepted_ids, &item->log_id, item);
}

//  The callback of log_id writes its trigger_code with its result; returns
//  the trigger time it must write too (0: none)
static int64_t
s_accepted_forget (server_t *self, int64_t log_id)
{
    accepted_t *item = (accepted_t *) zhashx_lookup (self->accepted_ids, &log_id);
    int64_t stamp = 0;
    if (item) {
        stamp = item->stamp;
        zhashx_delete (self->accepted_ids, &log_id);
        item->log_id = 0;
    }
    return stamp;
}

//  Writes trigger_code 200 of runs accepted before `before` (monotonic ms)
//  whose callback has not come
static void
s_accepted_flush (server_t *self, int64_t before)
{
    accepted_t *item;
    int count = 0;
    while ((item = (accepted_t *) zlistx_first (self->accepted)) && item->at < before) {
        if (++count % 64 == 0)
            s_fire_check (self);
        if (item->log_id) {
            if (item->stamp)
                xxl_store_exec (self->store, "UPDATE xxl_job_log SET trigger_code = 200,"
                                " trigger_time = ? WHERE id = ? AND trigger_code = 0", "ii",
                                item->stamp, item->log_id);
            else
                xxl_store_exec (self->store, "UPDATE xxl_job_log SET trigger_code = 200"
                                " WHERE id = ? AND trigger_code = 0", "i", item->log_id);
            zhashx_delete (self->accepted_ids, &item->log_id);
        }
        zlistx_delete (self->accepted, zlistx_cursor (self->accepted));
    }
}

//  The triggerMsg section of an agent's answer to a RUN (a new string)
static char *
s_section (const char *note, const char *address, int code, const char *msg)
{
    return zsys_sprintf ("\n>>>>>>>>>>> Trigger <<<<<<<<<<<\n%saddress: %s\ncode: %d\nmsg: %s\n",
                         note? note: "", address, code, msg && *msg? msg: "null");
}

//  Characters (not bytes) of UTF-8 text, as SQLite's length() counts them
static int64_t
s_chars (const char *text)
{
    int64_t chars = 0;
    for (const unsigned char *c = (const unsigned char *) text; *c; c++)
        chars += (*c & 0xC0) != 0x80;
    return chars;
}

//  s_chars (s_section (note, address, XXL_OK, NULL)) without making it
static int64_t
s_section_chars (const char *note, const char *address)
{
    return s_chars ("\n>>>>>>>>>>> Trigger <<<<<<<<<<<\n") + (note? s_chars (note): 0)
         + s_chars ("address: ") + s_chars (address) + s_chars ("\ncode: 200\nmsg: null\n");
}

//  Sends the RUN of an existing log row to address, or, when address is
//  NULL or not connected, finishes the row's trigger as failed.  note is
//  the router's text for triggerMsg (may be NULL).  The row's triggerMsg
//  gets the section of an accepting answer ahead of it; s_run_done
//  rewrites it only when the answer is another.  stamp:
//  0   the row is written with the address and section here;
//  -1  the row was inserted with both already (s_trigger);
//  >0  a planned row fires now: its trigger_time becomes stamp in the same
//      write, and nothing is sent when the row is no longer unsent (a
//      scheduler sharing the store cancelled it).
static void
s_send_run (server_t *self, const xxl_job_t *job, int64_t log_id, int64_t trigger_time,
            const char *param, int shard_index, int shard_total,
            const char *address, const char *note, int64_t stamp)
{
    char why [512];
    why [0] = 0;
    size_t rid_size;
    bool connected = address && xxl_registry_route (self->registry, address, &rid_size);
    //  (stamp -1: s_trigger wrote the section with the row already)
    char *section = connected && stamp >= 0? s_section (note, address, XXL_OK, NULL): NULL;
    int changed = 1;
    if (stamp > 0)
        changed = connected
            ? xxl_store_exec (self->store,
                  "UPDATE xxl_job_log SET trigger_time = ?, executor_address = ?,"
                  " trigger_msg = COALESCE(trigger_msg, '') || ? WHERE id = ? AND trigger_code = 0",
                  "issi", stamp, address, section, log_id)
            : xxl_store_exec (self->store,
                  "UPDATE xxl_job_log SET trigger_time = ? WHERE id = ? AND trigger_code = 0",
                  "ii", stamp, log_id);
    else
    if (stamp == 0 && connected)
        //  Where it went: a restart re-sends a row with an address but no code
        changed = xxl_store_exec (self->store,
            "UPDATE xxl_job_log SET executor_address = ?,"
            " trigger_msg = COALESCE(trigger_msg, '') || ? WHERE id = ?",
            "ssi", address, section, log_id);
    if (changed < 0 && connected)
        //  (the store failed: it goes again once the store takes writes)
        s_resend_add (self, log_id, address);
    if (changed != 1) {
        zstr_free (&section);
        return;
    }
    pending_t *pending = connected? s_pending_new (self, address, PENDING_RUN,
                                                   self->config.run_timeout_ms, why, sizeof why)
                                  : NULL;
    if (!pending) {
        if (address && !*why)
            snprintf (why, sizeof why, "agent '%s' is not connected to this scheduler", address);
        char *text = zsys_sprintf ("\n>>>>>>>>>>> Trigger <<<<<<<<<<<\n%s%s%s%s%s\n",
                                   note? note: "", address? "address: ": "",
                                   address? address: "", address? "\n": "", why);
        xxl_store_log_trigger_done (self->store, log_id, XXL_CODE_FAIL, address, text);
        zstr_free (&text);
        zstr_free (&section);
        s_fix_delay_release (self, log_id, s_now ());
        return;
    }
    pending->log_id = log_id;
    pending->note = note && *note? strdup (note): NULL;
    pending->presumed = section? s_chars (section): s_section_chars (note, address);
    zstr_free (&section);
    size_t size;
    const unsigned char *tp = s_encode_tp (self, job, log_id, param, shard_index, shard_total,
                                           &size);
    s_run_queue (self, pending, tp, size, trigger_time, self->open_batches);
}

typedef enum { ROUTE_ADDRESS, ROUTE_NONE, ROUTE_POOL } route_pick_t;

//  Picks the address of one row without probing: ROUTE_ADDRESS with
//  *address (borrowed from addresses), ROUTE_NONE with the reason in note,
//  or ROUTE_POOL for a probing router (s_route_pool routes it off the
//  loop).  note receives the router's text for triggerMsg.
static route_pick_t
s_route_pick (server_t *self, const xxl_job_t *job, int64_t log_id, int shard_index,
              int broadcast, const char *const *addresses, size_t count,
              const char **address, char *note, size_t notelen)
{
    *address = NULL;
    *note = 0;
    if (count == 0) {
        snprintf (note, notelen, "trigger failed: the address list is empty\n");
        return ROUTE_NONE;
    }
    if (broadcast) {
        *address = addresses [shard_index < (int) count? shard_index: 0];
        return ROUTE_ADDRESS;
    }
    const char *name = job->executor_route_strategy;
    const xxl_router_t *router = xxl_routers_find (self->routers, name);
    if (!router) {
        snprintf (note, notelen, "trigger failed: route %s is not loaded on this scheduler\n",
                  name);
        return ROUTE_NONE;
    }
    if (router->flags & XXL_ROUTER_PROBES)
        return ROUTE_POOL;
    int index = xxl_routers_route (self->routers, name, job->id, log_id, addresses, count,
                                   NULL, note, notelen);
    if (index >= 0 && (size_t) index < count) {
        *address = addresses [index];
        return ROUTE_ADDRESS;
    }
    if (!*note)
        snprintf (note, notelen, "trigger failed: route %s chose no address\n", name);
    return ROUTE_NONE;
}

//  Hands a row of a probing router to a trigger pool; its RUN goes when
//  the ROUTED result comes back (s_handle_routed)
static void
s_route_pool (server_t *self, const xxl_job_t *job, int64_t log_id, int64_t trigger_time,
              const char *param, int shard_index, int shard_total,
              const char *const *addresses, size_t count, int64_t stamp)
{
    if (stamp > 0
    &&  xxl_store_exec (self->store, "UPDATE xxl_job_log SET trigger_time = ?"
                        " WHERE id = ? AND trigger_code = 0", "ii", stamp, log_id) != 1)
        return;
    xxl_route_task_t *task = (xxl_route_task_t *) zmalloc (sizeof (xxl_route_task_t));
    task->log_id = log_id;
    task->job_id = job->id;
    task->route = strdup (job->executor_route_strategy);
    task->addresses = (char **) calloc (count, sizeof (char *));
    for (size_t i = 0; i < count; i++)
        task->addresses [i] = strdup (addresses [i]);
    task->count = count;
    int64_t *slow = (int64_t *) zhashx_lookup (self->slow_counts, &job->id);
    xxl_pool_t *pool = slow && *slow > self->config.slow_count? self->slow_pool: self->fast_pool;
    if (xxl_pool_submit (pool, &task)) {
        char text [256];
        snprintf (text, sizeof text, "trigger failed: the %s trigger pool is full (%zu queued)\n",
                  pool == self->slow_pool? "slow": "fast", xxl_pool_queued (pool));
        s_send_run (self, job, log_id, trigger_time, param, shard_index, shard_total,
                    NULL, text, stamp > 0? 0: stamp);
        xxl_route_task_destroy (&task);
    }
}

//  Routes one log row and sends its RUN; a probing router runs on a pool
//  and the RUN goes when its ROUTED result comes back.  stamp as for
//  s_send_run (never -1 here).
static void
s_route_row (server_t *self, const xxl_job_t *job, int64_t log_id, int64_t trigger_time,
             const char *param, int shard_index, int shard_total, int broadcast,
             const char *const *addresses, size_t count, int64_t stamp)
{
    const char *address;
    char note [2048];
    if (s_route_pick (self, job, log_id, shard_index, broadcast, addresses, count,
                      &address, note, sizeof note) == ROUTE_POOL)
        s_route_pool (self, job, log_id, trigger_time, param, shard_index, shard_total,
                      addresses, count, stamp);
    else
        s_send_run (self, job, log_id, trigger_time, param, shard_index, shard_total,
                    address, note, stamp);
}

//  Reads "i/n" into index and total (0/1 when absent or malformed)
static void
s_shard_of (const char *text, int *index, int *total)
{
    *index = 0;
    *total = 1;
    int i, n;
    if (text && sscanf (text, "%d/%d", &i, &n) == 2 && n > 0 && i >= 0 && i < n) {
        *index = i;
        *total = n;
    }
}

//  A group as read from the store at most a second ago (groups change
//  rarely; the API's group writes empty the cache at once), or NULL when
//  absent.  The group is borrowed until the cache is next emptied.
static const xxl_group_t *
s_group_cached (server_t *self, int64_t id)
{
    int64_t now = zclock_mono ();
    if (now >= self->groups_until) {
        zhashx_purge (self->groups);
        self->groups_until = now + 1000;
    }
    xxl_group_t *group = (xxl_group_t *) zhashx_lookup (self->groups, &id);
    if (!group) {
        group = (xxl_group_t *) zmalloc (sizeof (xxl_group_t));
        if (xxl_store_group_load (self->store, id, group)) {
            free (group);
            return NULL;
        }
        zhashx_insert (self->groups, &group->id, group);
    }
    return group;
}

//  The addresses a job's triggers go to: its group's manual list or the
//  registry's live list.  *manual receives an array to free with
//  s_free_addresses (NULL for the registry's, which is borrowed).
static size_t
s_job_addresses (server_t *self, const xxl_job_t *job, const char *const **addresses,
                 char ***manual)
{
    *manual = NULL;
    *addresses = NULL;
    const xxl_group_t *group = s_group_cached (self, job->job_group);
    if (!group)
        return 0;
    size_t count;
    if (group->address_type == 1) {
        count = s_split_addresses (group->address_list, manual);
        *addresses = (const char *const *) *manual;
    }
    else
        count = xxl_registry_addresses (self->registry, group->app_name, addresses);
    return count;
}

static void s_broadcast_expand (server_t *self, const xxl_job_t *job, const xxl_log_t *log,
                                const char *const *addresses, size_t count);

//  True when a RUN of log_id awaits its agent's answer (a pending of its
//  own, or an item of a batch: each batch item has a pending too, but a
//  prepared fire's batch holds plans).  A scan: for re-sends only.
static bool
s_run_in_flight (server_t *self, int64_t log_id)
{
    for (pending_t *pending = (pending_t *) zhashx_first (self->pending); pending;
         pending = (pending_t *) zhashx_next (self->pending))
        if (pending->kind == PENDING_RUN && pending->log_id == log_id)
            return true;
    for (run_batch_t *batch = (run_batch_t *) zhashx_first (self->batches); batch;
         batch = (run_batch_t *) zhashx_next (self->batches))
        for (size_t i = 0; batch->fires && i < batch->count; i++)
            if (batch->fires [i].plan && batch->fires [i].plan->log_id == log_id)
                return true;
    return false;
}

//  Sends (or fails) a row whose routing finished off the loop (address
//  given, "" for none), or that recovery or the planner's timer takes up
//  (address NULL: route it now against the live registry).
static void
s_dispatch_row (server_t *self, int64_t log_id, const char *address, const char *note)
{
    xxl_log_t log;
    if (xxl_store_log_load (self->store, log_id, &log))
        return;
    if (log.trigger_code != 0 || log.handle_code != 0
    ||  zhashx_lookup (self->accepted_ids, &log_id)) {
        //  Its answer or its result is stored already (a recovered row
        //  whose agent's spooled result came first), or its acceptance is
        //  known and not yet written: it never goes again
        xxl_log_free (&log);
        return;
    }
    xxl_job_t job;
    if (xxl_store_job_load (self->store, log.job_id, &job)) {
        xxl_store_log_trigger_done (self->store, log_id, XXL_CODE_FAIL, NULL,
                                    "\ntrigger failed: the job was removed\n");
        xxl_log_free (&log);
        return;
    }
    int index, total;
    s_shard_of (log.executor_sharding_param, &index, &total);
    if (!*log.executor_sharding_param
    &&  xxl_routers_is_broadcast (self->routers, job.executor_route_strategy)) {
        //  Written before its agents could be counted: one row per agent now
        //  (also when re-sent: a failed commit undid an expansion)
        const char *const *addresses;
        char **manual;
        size_t count = s_job_addresses (self, &job, &addresses, &manual);
        s_broadcast_expand (self, &job, &log, addresses, count);
        if (manual)
            s_free_addresses (manual, count);
        xxl_job_free (&job);
        xxl_log_free (&log);
        return;
    }
    if (!address) {
        //  A planned row fires now: that is its trigger time (the agent
        //  files its run log under this date)
        log.trigger_time = s_now ();
        xxl_store_exec (self->store, "UPDATE xxl_job_log SET trigger_time = ? WHERE id = ?",
                        "ii", log.trigger_time, log_id);
    }
    if (address)
        s_send_run (self, &job, log_id, log.trigger_time, log.executor_param, index, total,
                    *address? address: NULL, note, 0);
    else {
        const char *const *addresses;
        char **manual;
        size_t count = s_job_addresses (self, &job, &addresses, &manual);
        s_route_row (self, &job, log_id, log.trigger_time, log.executor_param, index, total,
                     xxl_routers_is_broadcast (self->routers, job.executor_route_strategy)
                     && *log.executor_sharding_param, addresses, count, 0);
        if (manual)
            s_free_addresses (manual, count);
    }
    xxl_job_free (&job);
    xxl_log_free (&log);
}

//  1 when one of addresses is connected now
static bool
s_any_connected (server_t *self, const char *const *addresses, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        size_t size;
        if (xxl_registry_route (self->registry, addresses [i], &size))
            return true;
    }
    return false;
}

//  Makes the row log_id of a SHARDING_BROADCAST job, written with no shard,
//  one row per address ("0/n" for itself, copies for 1..n-1, same planned
//  time), routes each and sends their RUNs.  With no address, the row is
//  routed alone (and fails: nobody to run it).
static void
s_broadcast_expand (server_t *self, const xxl_job_t *job, const xxl_log_t *log,
                    const char *const *addresses, size_t count)
{
    int64_t stamp = s_now ();
    if (count == 0) {
        //  (as one shard: its retry, if any, is one run too)
        xxl_store_exec (self->store, "UPDATE xxl_job_log SET executor_sharding_param = '0/1'"
                        " WHERE id = ?", "i", log->id);
        s_route_row (self, job, log->id, stamp, log->executor_param, 0, 1, 1, addresses, 0, 0);
        return;
    }
    int64_t ids [1024];
    size_t made = 0;
    ids [made++] = log->id;
    char shard [32];
    for (size_t i = 1; i < count && i < 1024; i++) {
        int64_t id = s_next_log_id (self);
        if (id <= 0)
            break;
        snprintf (shard, sizeof shard, "%zu/%zu", i, count);
        if (xxl_store_exec (self->store,
                "INSERT INTO xxl_job_log (id, job_group, job_id, executor_handler,"
                " executor_param, executor_sharding_param, executor_fail_retry_count,"
                " trigger_time, trigger_code, trigger_msg, trigger_type, schedule_time)"
                " SELECT ?, job_group, job_id, executor_handler, executor_param, ?,"
                " executor_fail_retry_count, ?, 0, trigger_msg, trigger_type, schedule_time"
                " FROM xxl_job_log WHERE id = ? AND trigger_code = 0", "isii",
                id, shard, stamp, log->id) != 1)
            break;
        ids [made++] = id;
    }
    snprintf (shard, sizeof shard, "0/%zu", made);
    xxl_store_exec (self->store, "UPDATE xxl_job_log SET executor_sharding_param = ?,"
                    " trigger_time = ? WHERE id = ?", "sii", shard, stamp, log->id);
    for (size_t i = 1; i < made; i++) {
        //  (copies made before this row's final count say so too)
        snprintf (shard, sizeof shard, "%zu/%zu", i, made);
        xxl_store_exec (self->store, "UPDATE xxl_job_log SET executor_sharding_param = ?"
                        " WHERE id = ?", "si", shard, ids [i]);
    }
    for (size_t i = 0; i < made; i++)
        s_route_row (self, job, ids [i], stamp, log->executor_param, (int) i, (int) made, 1,
                     addresses, count, 0);
}

//  Creates the log rows of one trigger and, unless deferred, routes and
//  sends them.  Returns the number of rows made, -1 on a store error.
//  log_ids gets up to max_ids ids; with args->prepare, prepared (up to
//  max_ids, not NULL) the routing of each row written with an address
//  (strings the caller frees).
static int
s_trigger (server_t *self, const xxl_job_t *job, trigger_args_t *args,
           int64_t *log_ids, prepared_t *prepared, size_t max_ids)
{
    char **manual = NULL;
    size_t count = 0;
    const char *const *addresses = NULL;
    const char *registry_type = "automatic";
    if (args->address) {
        count = s_split_addresses (args->address, &manual);
        addresses = (const char *const *) manual;
        registry_type = "manual (trigger)";
    }
    else {
        count = s_job_addresses (self, job, &addresses, &manual);
        if (manual)
            registry_type = "manual";
    }
    int broadcast = xxl_routers_is_broadcast (self->routers, job->executor_route_strategy);
    bool warming = zclock_mono () < self->warm_until;
    //  Acknowledged to its client, a trigger is not failed for want of
    //  agents that are still reconnecting after a start: it waits for
    //  them on the timer, as a planned fire does (s_plan_due)
    args->held = !args->defer && !args->address && warming
              && ((broadcast && args->shard_total < 0) || !s_any_connected (self, addresses, count));
    args->unexpanded = broadcast && args->shard_total < 0 && !args->address
                    && (args->held || (args->defer && (count == 0 || warming)));
    int runs = 1;
    if (broadcast && args->shard_total < 0 && count > 0 && !args->unexpanded)
        runs = (int) count;
    int retry = args->fail_retry_count >= 0? args->fail_retry_count
                                           : (int) job->executor_fail_retry_count;
    //  "[a, b]" (the addresses that fit); arrays here are not zero-filled:
    //  that alone was 3 % of the engine's instructions per trigger
    char address_text [2048];
    size_t used = 0;
    address_text [used++] = '[';
    for (size_t i = 0; i < count; i++) {
        size_t length = strlen (addresses [i]);
        if (used + 2 + length + 2 > sizeof address_text)
            break;
        if (i) {
            memcpy (address_text + used, ", ", 2);
            used += 2;
        }
        memcpy (address_text + used, addresses [i], length);
        used += length;
    }
    address_text [used++] = ']';
    address_text [used] = 0;
    int made = 0;
    int64_t now = s_now ();
    const char *param = args->param? args->param: job->executor_param;
    for (int i = 0; i < runs; i++) {
        int index = args->shard_total >= 0? args->shard_index: i;
        int total = args->shard_total >= 0? args->shard_total: broadcast? runs: 1;
        char shard [32];
        shard [0] = 0;
        if ((broadcast || args->shard_total >= 0) && !args->unexpanded)
            snprintf (shard, sizeof shard, "%d/%d", index, total);
        //  Route before the row is written, so that one INSERT holds the
        //  address and the accepting answer's section (s_send_run)
        int64_t id = s_next_log_id (self);
        route_pick_t pick = ROUTE_POOL;
        const char *address = NULL;
        char note [2048];
        note [0] = 0;
        bool ahead = false;
        if ((!args->defer || args->prepare) && !args->held && !args->unexpanded && id > 0) {
            pick = s_route_pick (self, job, id, index, broadcast, addresses, count,
                                 &address, note, sizeof note);
            size_t rid_size;
            ahead = pick == ROUTE_ADDRESS
                 && xxl_registry_route (self->registry, address, &rid_size) != NULL;
        }
        //  Built by pieces (no format to parse: vsnprintf was 7 % of the
        //  engine's instructions per manual trigger)
        char timeout [24], retries [16];
        snprintf (timeout, sizeof timeout, "%" PRId64, job->executor_timeout);
        snprintf (retries, sizeof retries, "%d", retry);
        const char *pieces [] = {
            "Trigger type: ", s_trigger_title (args->trigger_type),
            "\nAdmin address: ", self->config.admin_address,
            "\nExecutor registry type: ", registry_type,
            "\nExecutor addresses: ", address_text,
            "\nRoute strategy: ", job->executor_route_strategy,
            *shard? " (": "", shard, *shard? ")": "",
            "\nBlock strategy: ", job->executor_block_strategy,
            "\nTimeout: ", timeout, "\nFail retry count: ", retries, "\n",
            //  = s_section (note, address, XXL_OK, NULL) when ahead
            ahead? "\n>>>>>>>>>>> Trigger <<<<<<<<<<<\n": "", ahead? note: "",
            ahead? "address: ": "", ahead? address: "", ahead? "\ncode: 200\nmsg: null\n": ""
        };
        char *message = s_text (self->text, pieces, sizeof pieces / sizeof pieces [0]);
        xxl_log_t log = {
            .id = id > 0? id: 0,
            .job_group = job->job_group, .job_id = job->id,
            .executor_address = ahead? (char *) address: NULL,
            .executor_handler = job->executor_handler,
            .executor_param = (char *) param,
            .executor_sharding_param = *shard? shard: NULL,
            .executor_fail_retry_count = retry,
            .trigger_time = now, .trigger_code = 0, .trigger_msg = message,
            .trigger_type = (char *) args->trigger_type, .schedule_time = args->schedule_time
        };
        int added = xxl_store_log_add (self->store, &log);
        if (added) {
            made = made? made: -1;
            break;
        }
        if ((size_t) made < max_ids) {
            log_ids [made] = log.id;
            if (prepared) {
                prepared [made].address = ahead? strdup (address): NULL;
                prepared [made].note = ahead? strdup (note): NULL;
            }
        }
        made++;
        if (args->defer)
            continue;
        if (args->held) {
            xxl_timer_push (self->timer, now, log.id);
            continue;
        }
        if (ahead)
            s_send_run (self, job, log.id, now, param, index, total, address, note, -1);
        else
        if (id <= 0)
            s_route_row (self, job, log.id, now, param, index, total, broadcast,
                         addresses, count, 0);
        else
        if (pick == ROUTE_POOL)
            s_route_pool (self, job, log.id, now, param, index, total, addresses, count, 0);
        else
            s_send_run (self, job, log.id, now, param, index, total, address, note, 0);
    }
    if (manual)
        s_free_addresses (manual, count);
    return made;
}

//  Completes a RUN with the agent's answer (or its absence).  The row's
//  triggerMsg ends with the section of a plain accepting answer already
//  (`presumed` characters): that answer only marks the run accepted
//  (s_accepted_add); any other rewrites the section.  stamp: the trigger
//  time still to write (0: none).
static void
s_run_answer (server_t *self, int64_t log_id, const char *note, const char *address,
              int64_t presumed, int64_t stamp, int code, const char *msg)
{
    if (code == XXL_OK && (!msg || !*msg)) {
        s_accepted_add (self, log_id, stamp);
        return;
    }
    char *text = s_section (note, address, code, msg);
    xxl_store_exec (self->store,
        "UPDATE xxl_job_log SET trigger_code = ?, trigger_msg ="
        " substr (COALESCE(trigger_msg, ''), 1, max (length (COALESCE(trigger_msg, '')) - ?, 0))"
        " || ?, trigger_time = CASE WHEN ? > 0 THEN ? ELSE trigger_time END WHERE id = ?",
        "iisiii", (int64_t) (code == XXL_OK? XXL_OK: XXL_CODE_FAIL), presumed, text,
        stamp, stamp, log_id);
    zstr_free (&text);
    if (code != XXL_OK)
        s_fix_delay_release (self, log_id, s_now ());
}

static void
s_run_done (server_t *self, pending_t *pending, int code, const char *msg)
{
    s_run_answer (self, pending->log_id, pending->note, pending->address, pending->presumed,
                  pending->stamp, code, msg);
}

//  --------------------------------------------------------------------
//  Job validation

//  Reads the job fields present in msg onto job; returns 0 or -1 with the
//  reason latched in msg.  is_add: fields required at add.
static int
s_job_read (server_t *self, xxl_msg_t *msg, xxl_job_t *job, int is_add)
{
    const msgpack_object *root = NULL;
    #define XXL_SET_STR(field, key, max) do { \
        const char *v_ = xxl_msg_str (msg, root, key, 0, max, NULL); \
        if (v_) { free (job->field); job->field = strdup (v_); } } while (0)
    #define XXL_SET_INT(field, key, lo, hi) do { \
        if (xxl_msg_get (xxl_msg_root (msg), key)) \
            job->field = xxl_msg_int (msg, root, key, 0, lo, hi, job->field); } while (0)
    XXL_SET_STR (job_desc, "jobDesc", XXL_MAX_TEXT);
    XXL_SET_STR (author, "author", XXL_MSG_MAX_NAME);
    XXL_SET_STR (alarm_email, "alarmEmail", XXL_MAX_TEXT);
    XXL_SET_STR (schedule_type, "scheduleType", 32);
    XXL_SET_STR (schedule_conf, "scheduleConf", 1024);
    XXL_SET_STR (misfire_strategy, "misfireStrategy", 32);
    XXL_SET_STR (executor_route_strategy, "executorRouteStrategy", XXL_MSG_MAX_NAME);
    XXL_SET_STR (executor_handler, "executorHandler", XXL_MSG_MAX_NAME);
    XXL_SET_STR (executor_param, "executorParam", XXL_MAX_TEXT);
    XXL_SET_STR (executor_block_strategy, "executorBlockStrategy", 32);
    XXL_SET_INT (executor_timeout, "executorTimeout", 0, 86400 * 365);
    XXL_SET_INT (executor_fail_retry_count, "executorFailRetryCount", 0, 1000);
    XXL_SET_STR (glue_type, "glueType", 32);
    XXL_SET_STR (glue_remark, "glueRemark", 1024);
    XXL_SET_STR (child_jobid, "childJobId", 4096);
    XXL_SET_STR (timezone, "timezone", 64);
    XXL_SET_INT (retry_interval, "retryInterval", 0, 86400 * 30);
    XXL_SET_INT (retry_max_interval, "retryMaxInterval", 0, 86400 * 30);
    if (xxl_msg_get (xxl_msg_root (msg), "retryBackoff"))
        job->retry_backoff = xxl_msg_double (msg, root, "retryBackoff", 0, 1.0, 100.0,
                                             job->retry_backoff);
    const char *source = xxl_msg_str (msg, root, "glueSource", 0, XXL_MAX_GLUE, NULL);
    if (source && (!job->glue_source || strneq (source, job->glue_source))) {
        free (job->glue_source);
        job->glue_source = strdup (source);
        job->glue_updatetime = s_now ();
    }
    #undef XXL_SET_STR
    #undef XXL_SET_INT
    if (xxl_msg_error (msg))
        return -1;

    if (!s_in_list (job->schedule_type, s_schedule_types))
        return xxl_msg_fail (msg, "unknown schedule type '%s' (known: NONE, CRON, FIX_RATE, FIX_DELAY)",
                             job->schedule_type);
    if (!s_in_list (job->misfire_strategy, s_misfires))
        return xxl_msg_fail (msg, "unknown misfire strategy '%s' (known: DO_NOTHING, FIRE_ONCE_NOW)",
                             job->misfire_strategy);
    if (!s_in_list (job->executor_block_strategy, s_blocks))
        return xxl_msg_fail (msg, "unknown block strategy '%s' (known: SERIAL_EXECUTION, "
                             "DISCARD_LATER, COVER_EARLY)", job->executor_block_strategy);
    if (!s_in_list (job->glue_type, s_glue_types))
        return xxl_msg_fail (msg, "unknown glue type '%s' (known: BEAN, GLUE_SHELL, GLUE_PYTHON, "
                             "GLUE_NODEJS, GLUE_PHP, GLUE_POWERSHELL)", job->glue_type);
    if (!xxl_routers_find (self->routers, job->executor_route_strategy)) {
        char *known = xxl_routers_names (self->routers);
        xxl_msg_fail (msg, "unknown route '%s' (known: %s)", job->executor_route_strategy,
                      known && *known? known: "none: no router plugins loaded");
        free (known);
        return -1;
    }
    if (streq (job->glue_type, "BEAN") && !*job->executor_handler)
        return xxl_msg_fail (msg, "a BEAN job needs a handler (executorHandler)");
    char reason [512];
    if (*job->alarm_email
    &&  xxl_alarms_check_targets (self->alarms, job->alarm_email, reason, sizeof reason))
        return xxl_msg_fail (msg, "alarm targets: %s", reason);
    if (*job->timezone && !xxl_cron_tz_valid (job->timezone))
        return xxl_msg_fail (msg, "unknown time zone '%s'", job->timezone);
    if (streq (job->schedule_type, "CRON")) {
        char reason [256];
        xxl_cron_t *cron = xxl_cron_new (job->schedule_conf, job->timezone, reason, sizeof reason);
        if (!cron)
            return xxl_msg_fail (msg, "invalid cron expression '%s': %s", job->schedule_conf, reason);
        xxl_cron_destroy (&cron);
    }
    else
    if (streq (job->schedule_type, "FIX_RATE") || streq (job->schedule_type, "FIX_DELAY")) {
        char *end = NULL;
        long long seconds = strtoll (job->schedule_conf, &end, 10);
        if (!*job->schedule_conf || *end || seconds <= 0 || seconds > 86400LL * 366 * 10)
            return xxl_msg_fail (msg, "%s needs a positive number of seconds, not '%s'",
                                 job->schedule_type, job->schedule_conf);
    }
    //  Child jobs: ids that exist, not the job itself
    if (*job->child_jobid) {
        char *copy = strdup (job->child_jobid), *save = NULL;
        int bad = 0;
        for (char *t = strtok_r (copy, ",", &save); t && !bad; t = strtok_r (NULL, ",", &save)) {
            char *end = NULL;
            long long child = strtoll (t, &end, 10);
            if (*end || child <= 0) {
                xxl_msg_fail (msg, "child job id '%s' is not a number", t);
                bad = 1;
            }
            else
            if (child == job->id) {
                xxl_msg_fail (msg, "a job cannot be its own child");
                bad = 1;
            }
            else
            if (xxl_store_scalar (self->store, "SELECT COUNT(*) FROM xxl_job_info WHERE id = ?",
                                  "i", (int64_t) child) != 1) {
                xxl_msg_fail (msg, "child job %lld does not exist: give childJobId without it"
                              " (xxl-ctl job update/add --child with the ids that exist,"
                              " or --child '' for none; now '%s')", child, job->child_jobid);
                bad = 1;
            }
        }
        free (copy);
        if (bad)
            return -1;
        //  XXL-JOB lets a cycle flood the log (#447): refuse it when saved
        char path [1024];
        snprintf (path, sizeof path, "%" PRId64, job->id);
        if (!is_add && s_child_cycle (self, job->id, job->child_jobid, path, sizeof path, 0))
            return xxl_msg_fail (msg, "child jobs would form a cycle: %s", path);
    }
    return 0;
}

//  Epoch ms as UTC ISO 8601 ("2026-11-23T23:59:01.390Z"), followed by
//  the local time in zone tz when it has one and it is not UTC
static const char *
s_iso_time (int64_t ms, const char *tz, char *buf, size_t buflen)
{
    int64_t local = 0;
    const xxl_tz_t *zone = tz && *tz && strneq (tz, "UTC")? xxl_tz_get (tz, NULL, 0): NULL;
    size_t used = 0;
    for (int pass = 0; pass < (zone? 2: 1) && used < buflen; pass++) {
        int64_t t = ms;
        if (pass) {
            local = xxl_tz_offset_utc (zone, xxl_tz_floordiv (ms, 1000), NULL);
            t = ms + local * 1000;
        }
        int64_t days = xxl_tz_floordiv (t, 86400000);
        int64_t rest = t - days * 86400000;
        int64_t year;
        int month, day;
        xxl_tz_civil_from_days (days, &year, &month, &day);
        int n = pass == 0
            ? snprintf (buf + used, buflen - used, "%04" PRId64 "-%02d-%02dT%02d:%02d:%02d.%03dZ",
                        year, month, day, (int) (rest / 3600000), (int) (rest / 60000 % 60),
                        (int) (rest / 1000 % 60), (int) (rest % 1000))
            : snprintf (buf + used, buflen - used, " (%04" PRId64 "-%02d-%02dT%02d:%02d:%02d.%03d%c%02d:%02d %s)",
                        year, month, day, (int) (rest / 3600000), (int) (rest / 60000 % 60),
                        (int) (rest / 1000 % 60), (int) (rest % 1000), local < 0? '-': '+',
                        (int) (llabs (local) / 3600), (int) (llabs (local) / 60 % 60), tz);
        if (n < 0)
            break;
        used += (size_t) n;
    }
    return buf;
}

//  Next fire time strictly after `after`, or -1 (reason in why)
static int64_t
s_next_time (const xxl_job_t *job, int64_t after, char *why, size_t whylen)
{
    if (streq (job->schedule_type, "CRON")) {
        xxl_cron_t *cron = xxl_cron_new (job->schedule_conf, job->timezone, why, whylen);
        if (!cron)
            return -1;
        int64_t next = xxl_cron_next (cron, after);
        xxl_cron_destroy (&cron);
        char date [128];
        if (next < 0)
            snprintf (why, whylen, "the cron expression has no time after %s",
                      s_iso_time (after, job->timezone, date, sizeof date));
        return next;
    }
    if (streq (job->schedule_type, "FIX_RATE") || streq (job->schedule_type, "FIX_DELAY"))
        return after + atoll (job->schedule_conf) * 1000;
    snprintf (why, whylen, "schedule type %s has no next time", job->schedule_type);
    return -1;
}

static void
s_job_defaults (xxl_job_t *job)
{
    job->job_desc = strdup ("");
    job->author = strdup ("");
    job->alarm_email = strdup ("");
    job->schedule_type = strdup ("NONE");
    job->schedule_conf = strdup ("");
    job->misfire_strategy = strdup ("DO_NOTHING");
    job->executor_route_strategy = strdup ("FIRST");
    job->executor_handler = strdup ("");
    job->executor_param = strdup ("");
    job->executor_block_strategy = strdup ("SERIAL_EXECUTION");
    job->glue_type = strdup ("BEAN");
    job->glue_source = strdup ("");
    job->glue_remark = strdup ("");
    job->child_jobid = strdup ("");
    job->timezone = strdup ("");
    job->retry_backoff = 1;
}

//  Loads the job named by field jobId; replies 404 itself when absent
static int
s_job_from_request (server_t *self, request_t *request, xxl_job_t *job)
{
    int64_t id = xxl_msg_int (request->msg, NULL, "jobId", 1, 1, INT64_MAX, 0);
    if (xxl_msg_error (request->msg)) {
        s_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
        return -1;
    }
    int rc = xxl_store_job_load (self->store, id, job);
    if (rc) {
        char text [64];
        snprintf (text, sizeof text, "job %" PRId64 " not found", id);
        s_reply (self, request, rc < 0? XXL_FAILURE: XXL_NOT_FOUND,
                 rc < 0? xxl_store_error (self->store): text);
        return -1;
    }
    return 0;
}

//  --------------------------------------------------------------------
//  Planner
//
//  Each scan reads the running jobs due within the pre-read window, and
//  for each planned instant writes the trigger's log row (with its
//  scheduleTime) in the same transaction that advances the job's next
//  fire time: an outbox.  Rows due now are routed at once; the others go
//  on the timer heap and are routed when due.  A crash loses nothing: the
//  rows are in the store, and s_recover takes them up again.

//  FIX_DELAY jobs wait for their run to finish: next time "never" until then
#define XXL_WAITING 253402300799000LL

//  Remembers a FIX_DELAY job that waits for its run to end
static void
s_waiting_add (server_t *self, int64_t job_id)
{
    if (!zhashx_lookup (self->waiting, &job_id)) {
        int64_t *key = (int64_t *) zmalloc (sizeof (int64_t));
        *key = job_id;
        zhashx_insert (self->waiting, key, key);
    }
}

//  Marks a snapshot's plans void: none of them is sent, and the
//  instants' batches that hold some no longer go as built
static void
s_snap_cancel (server_t *self, snap_t *snap)
{
    snap->cancelled = true;
    for (void *item = zlistx_first (snap->plan_ids); item; item = zlistx_next (snap->plan_ids)) {
        int64_t log_id = (int64_t) (intptr_t) item;
        plan_t *plan = (plan_t *) zhashx_lookup (self->plans, &log_id);
        if (plan && plan->prebuilt)
            plan->prebuilt->dirty = true;
    }
}

//  Unsent planned rows of a job (its schedule changed or it stopped)
static void
s_plan_forget (server_t *self, int64_t job_id)
{
    //  This scheduler's plans of the job that were not sent: their rows go
    //  (their timer entries stay; when due they find nothing)
    snap_t *snap = (snap_t *) zhashx_lookup (self->snaps, &job_id);
    if (snap) {
        s_snap_cancel (self, snap);     //  s_fire sends none of its plans
        void *item;
        while ((item = zlistx_first (snap->plan_ids))) {
            int64_t log_id = (int64_t) (intptr_t) item;
            xxl_store_exec (self->store,
                "DELETE FROM xxl_job_log WHERE id = ? AND trigger_code = 0", "i", log_id);
            //  (its destructor takes it off plan_ids)
            if (!zhashx_lookup (self->plans, &log_id))
                zlistx_delete (snap->plan_ids, zlistx_cursor (snap->plan_ids));
            else
                zhashx_delete (self->plans, &log_id);
        }
    }
    zhashx_delete (self->snaps, &job_id);
    self->children_until = 0;
    //  Any scheduler's unsent rows: no address yet, or not due yet (no
    //  planned row goes before its time)
    xxl_store_exec (self->store,
        "DELETE FROM xxl_job_log WHERE job_id = ? AND trigger_code = 0"
        " AND schedule_time IS NOT NULL AND (executor_address IS NULL OR schedule_time > ?)",
        "ii", job_id, s_now ());
}

//  After a FIX_DELAY job's scheduled run ended (or failed to start), its
//  next run comes `delay` seconds later
static void
s_fix_delay_release (server_t *self, int64_t log_id, int64_t now)
{
    //  Most callbacks belong to no waiting FIX_DELAY job: skip the query
    if (zhashx_size (self->waiting) == 0)
        return;
    int64_t job_id = xxl_store_scalar (self->store, "SELECT job_id FROM xxl_job_log WHERE id = ?",
                                       "i", log_id);
    if (!zhashx_lookup (self->waiting, &job_id))
        return;
    zhashx_delete (self->waiting, &job_id);
    xxl_store_exec (self->store,
        "UPDATE xxl_job_info SET trigger_next_time = ? + CAST(schedule_conf AS INTEGER) * 1000"
        " WHERE id = (SELECT job_id FROM xxl_job_log WHERE id = ? AND schedule_time IS NOT NULL)"
        " AND schedule_type = 'FIX_DELAY' AND trigger_status = 1 AND trigger_next_time = ?",
        "iii", now, log_id, (int64_t) XXL_WAITING);
}

static void s_fired_cover (server_t *self, int64_t until);
static bool s_instant_add (server_t *self, plan_t *plan, int64_t fire_at);

//  Encodes a prepared plan's TriggerParam into it
static void
s_plan_encode (server_t *self, plan_t *plan)
{
    size_t size;
    const unsigned char *tp = s_encode_tp (self, &plan->snap->job, plan->log_id,
                                           plan->snap->job.executor_param, plan->shard_index,
                                           plan->shard_total, &size);
    plan->tp = (unsigned char *) malloc (size);
    if (plan->tp) {
        memcpy (plan->tp, tp, size);
        plan->tp_size = size;
    }
}

//  Prepares plans that were made unprepared (while agents reconnected
//  after a start, or with no agent connected) once routing can be done:
//  up to `budget` a turn, each fire still more than 50 ms away
static void
s_plan_prepare (server_t *self, int budget)
{
    if (zclock_mono () < self->warm_until)
        return;
    int64_t soon = s_now () + 50;
    void *item;
    while (budget-- > 0 && (item = zlistx_first (self->unprepared))) {
        if (budget % 64 == 0)
            s_fire_check (self);
        int64_t log_id = (int64_t) (intptr_t) item;
        plan_t *plan = (plan_t *) zhashx_lookup (self->plans, &log_id);
        zlistx_delete (self->unprepared, zlistx_cursor (self->unprepared));
        if (!plan || plan->tp || plan->snap->cancelled)
            continue;
        const xxl_job_t *job = &plan->snap->job;
        int64_t when = xxl_store_scalar (self->store, "SELECT schedule_time FROM xxl_job_log"
                                         " WHERE id = ? AND trigger_code = 0"
                                         " AND executor_address IS NULL", "i", log_id);
        if (when <= soon)
            continue;                   //  (gone, sent, or too close: fires as it is)
        const char *const *addresses;
        char **manual;
        size_t count = s_job_addresses (self, job, &addresses, &manual);
        const char *address;
        char note [2048];
        size_t rid_size;
        if (s_route_pick (self, job, log_id, plan->shard_index, plan->sharded, addresses, count,
                          &address, note, sizeof note) == ROUTE_ADDRESS
        &&  xxl_registry_route (self->registry, address, &rid_size)) {
            char *section = s_section (note, address, XXL_OK, NULL);
            if (xxl_store_exec (self->store,
                    "UPDATE xxl_job_log SET executor_address = ?,"
                    " trigger_msg = COALESCE(trigger_msg, '') || ? WHERE id = ?"
                    " AND trigger_code = 0 AND executor_address IS NULL", "ssi",
                    address, section, log_id) == 1) {
                plan->address = strdup (address);
                plan->note = strdup (note);
                plan->turn = self->turn;
                s_plan_encode (self, plan);
                //  (a failed commit drops the plan: the row then fires by
                //  the store's path)
                zlistx_add_end (self->turn_plans, (void *) (intptr_t) log_id);
            }
            zstr_free (&section);
        }
        if (manual)
            s_free_addresses (manual, count);
    }
}

//  Writes one planned trigger; due ones go now, the others on the timer
//  with what their dispatch needs (plan_t).  A row that a non-probing
//  router can route now is written with its address and its TriggerParam
//  encoded: at its time s_fire sends it without touching the store.
static void
s_plan_fire (server_t *self, snap_t *snap, const char *type, int64_t planned,
             int64_t fire_at, int64_t now)
{
    //  While agents reconnect after a start, everything goes by the timer,
    //  which holds a trigger until its group has an agent
    bool warming = zclock_mono () < self->warm_until;
    trigger_args_t args = { .trigger_type = type, .fail_retry_count = -1,
                            .shard_index = -1, .shard_total = -1,
                            .schedule_time = planned, .defer = fire_at > now || warming };
    args.prepare = args.defer && !warming;
    if (!args.defer)
        s_fired_cover (self, now);
    int64_t ids [1024];
    prepared_t prepared [1024];
    memset (prepared, 0, sizeof prepared);
    int made = s_trigger (self, &snap->job, &args, ids, prepared, 1024);
    if (made < 0) {
        //  (jobId, scheduleTime) exists: another scheduler or an earlier
        //  turn planned it already
        return;
    }
    if (args.unexpanded) {
        //  No plan: at its time s_plan_due makes it one row per agent
        assert (made == 1 && args.defer && !prepared [0].address);
        xxl_timer_push (self->timer, fire_at, ids [0]);
        return;
    }
    bool sharded = xxl_routers_is_broadcast (self->routers, snap->job.executor_route_strategy);
    for (int i = 0; i < made && i < 1024; i++) {
        if (!args.defer) {
            free (prepared [i].address);
            free (prepared [i].note);
            continue;
        }
        plan_t *plan = (plan_t *) zmalloc (sizeof (plan_t));
        plan->log_id = ids [i];
        plan->snap = snap;
        snap->refs++;
        plan->sharded = sharded;
        plan->shard_index = i;
        plan->shard_total = made;
        plan->turn = self->turn;
        plan->handle = zlistx_add_end (snap->plan_ids, (void *) (intptr_t) plan->log_id);
        plan->address = prepared [i].address;
        plan->note = prepared [i].note;
        if (plan->address)
            s_plan_encode (self, plan);
        else
            zlistx_add_end (self->unprepared, (void *) (intptr_t) plan->log_id);
        zhashx_delete (self->plans, &plan->log_id);
        zhashx_insert (self->plans, &plan->log_id, plan);
        zlistx_add_end (self->turn_plans, (void *) (intptr_t) plan->log_id);
        if (!s_instant_add (self, plan, fire_at))
            xxl_timer_push (self->timer, fire_at, ids [i]);
    }
}

//  Next fire time of a snapshot's job strictly after `after`, or -1
static int64_t
s_snap_next (snap_t *snap, int64_t after, char *why, size_t whylen)
{
    if (!snap->cron)
        return s_next_time (&snap->job, after, why, whylen);
    int64_t next = xxl_cron_next (snap->cron, after);
    char date [128];
    if (next < 0)
        snprintf (why, whylen, "the cron expression has no time after %s",
                  s_iso_time (after, snap->job.timezone, date, sizeof date));
    return next;
}

//  Plans one job up to now + pre-read; saves its next time
static void
s_plan_job (server_t *self, snap_t *snap, int64_t now)
{
    xxl_job_t *job = &snap->job;
    int64_t window = now + self->config.preread_ms;
    int64_t next = job->trigger_next_time;
    int64_t last = job->trigger_last_time;
    char why [512] = "";
    int guard = 0;
    while (next <= window && next != XXL_WAITING && guard++ < 1000) {
        int64_t planned = next;
        if (now > planned + self->config.preread_ms) {
            //  Misfire: too late to fire as planned
            if (streq (job->misfire_strategy, "FIRE_ONCE_NOW"))
                s_plan_fire (self, snap, "MISFIRE", planned, now, now);
            else
                zsys_info ("planner: job %" PRId64 " misfired at %" PRId64 " (%" PRId64
                           " ms late); DO_NOTHING", job->id, planned, now - planned);
            next = s_snap_next (snap, now, why, sizeof why);
        }
        else {
            s_plan_fire (self, snap, "CRON", planned, planned, now);
            next = s_snap_next (snap, planned, why, sizeof why);
        }
        last = planned;
        if (streq (job->schedule_type, "FIX_DELAY")) {
            next = XXL_WAITING;
            s_waiting_add (self, job->id);
            break;
        }
        if (next < 0)
            break;
    }
    if (next < 0) {
        zsys_warning ("planner: job %" PRId64 " stopped: %s", job->id, why);
        xxl_store_exec (self->store,
            "UPDATE xxl_job_info SET trigger_status = 0, trigger_last_time = ?,"
            " trigger_next_time = 0 WHERE id = ?", "ii", last, job->id);
        job->trigger_status = 0;
        return;
    }
    job->trigger_last_time = last;
    job->trigger_next_time = next;
    xxl_store_exec (self->store,
        "UPDATE xxl_job_info SET trigger_last_time = ?, trigger_next_time = ? WHERE id = ?",
        "iii", last, next, job->id);
}

//  Makes a snapshot of *job (taking its strings; *job is emptied) and
//  puts it in the cache in place of any older one
static snap_t *
s_snap_put (server_t *self, xxl_job_t *job)
{
    snap_t *old = (snap_t *) zhashx_lookup (self->snaps, &job->id);
    if (old && old->job.update_time == job->update_time && !old->cancelled) {
        //  Unchanged: the plans that share it stay valid
        xxl_job_free (job);
        memset (job, 0, sizeof *job);
        old->read_at = zclock_mono ();
        return old;
    }
    if (old)
        s_snap_cancel (self, old);      //  changed: its unsent rows were deleted
    snap_t *snap = (snap_t *) zmalloc (sizeof (snap_t));
    snap->job = *job;
    memset (job, 0, sizeof *job);
    if (streq (snap->job.schedule_type, "CRON"))
        snap->cron = xxl_cron_new (snap->job.schedule_conf, snap->job.timezone, NULL, 0);
    snap->refs = 1;                     //  the cache's
    snap->plan_ids = zlistx_new ();
    snap->read_at = zclock_mono ();
    //  Jobs triggered by hand join the cache too: keep it bounded
    if (zhashx_size (self->snaps) >= 65536)
        zhashx_purge (self->snaps);
    //  (delete, then insert: the map's key points into the snapshot)
    zhashx_delete (self->snaps, &snap->job.id);
    zhashx_insert (self->snaps, &snap->job.id, snap);
    return snap;
}

//  The planner's snapshot of job id, read again when the job changed
//  since (update_time differs); NULL when the job is gone
static snap_t *
s_snap_get (server_t *self, int64_t id, int64_t update_time)
{
    snap_t *snap = (snap_t *) zhashx_lookup (self->snaps, &id);
    if (snap && snap->job.update_time == update_time) {
        snap->read_at = zclock_mono ();
        return snap;
    }
    xxl_job_t job;
    if (xxl_store_job_load (self->store, id, &job)) {
        zhashx_delete (self->snaps, &id);
        return NULL;
    }
    return s_snap_put (self, &job);
}

//  A job for a trigger: the cached snapshot when it was read or confirmed
//  current less than a second ago (this scheduler's own job writes drop
//  it at once; another scheduler's show within that second), else read
//  again.  Returns a snapshot the caller releases with s_snap_release, or
//  NULL: *rc 1 when the job is absent, -1 on a store error.
static snap_t *
s_snap_fresh (server_t *self, int64_t id, int *rc)
{
    snap_t *snap = (snap_t *) zhashx_lookup (self->snaps, &id);
    if (!snap || zclock_mono () - snap->read_at >= 1000) {
        xxl_job_t job;
        *rc = xxl_store_job_load (self->store, id, &job);
        if (*rc) {
            zhashx_delete (self->snaps, &id);
            return NULL;
        }
        snap = s_snap_put (self, &job);
    }
    *rc = 0;
    snap->refs++;
    return snap;
}

//  Jobs planned per turn: a scan of many jobs goes in chunks of a few
//  milliseconds each, and due triggers fire in between
#define XXL_SCAN_BATCH 512
#define XXL_SCAN_MS 50

static void
s_plan_scan (server_t *self)
{
    int64_t now = s_now ();
    int64_t started = zclock_mono ();
    size_t count = 0;
    //  id, update_time, trigger_next_time, trigger_last_time per row
    int64_t *rows = (int64_t *) malloc (XXL_SCAN_BATCH * 4 * sizeof (int64_t));
    if (!rows)
        return;
    //  Chunks of jobs for up to XXL_SCAN_MS a turn (fires go in between,
    //  s_fire_check): a scan of many jobs keeps up without holding the
    //  turn's other work for long.  The schedule lock: one writer at a
    //  time (BEGIN IMMEDIATE holds it).
    do {
        xxl_store_int_rows (self->store,
            "SELECT id, update_time, trigger_next_time, trigger_last_time FROM xxl_job_info"
            " WHERE trigger_status = 1 AND trigger_next_time <= ?"
            " ORDER BY trigger_next_time LIMIT " XXL_STR (XXL_SCAN_BATCH),
            now + self->config.preread_ms, rows, 4, XXL_SCAN_BATCH, &count);
        for (size_t i = 0; i < count; i++) {
            s_fire_check (self);
            int64_t *row = rows + i * 4;
            snap_t *snap = s_snap_get (self, row [0], row [1]);
            if (!snap)
                continue;
            snap->job.trigger_status = 1;
            snap->job.trigger_next_time = row [2];
            snap->job.trigger_last_time = row [3];
            s_plan_job (self, snap, now);
            //  Keep only jobs that fire again soon; the rest are read again
            if (snap->job.trigger_status != 1
            ||  snap->job.trigger_next_time > now + 2 * self->config.preread_ms)
                zhashx_delete (self->snaps, &row [0]);
        }
    } while (count == XXL_SCAN_BATCH && zclock_mono () - started < XXL_SCAN_MS);
    free (rows);
    //  A full batch means more are due: scan again at once
    self->next_scan = count == XXL_SCAN_BATCH? 0: zclock_mono () + self->config.scan_ms;
}

//  1 when the job of a log row has an address to go to now (never for a
//  SHARDING_BROADCAST job: called while agents reconnect, when its rows wait
//  for all of them)
static bool s_job_has_agents (server_t *self, const xxl_job_t *job);
static bool
s_row_has_agents (server_t *self, int64_t log_id)
{
    int64_t job_id = xxl_store_scalar (self->store, "SELECT job_id FROM xxl_job_log WHERE id = ?",
                                       "i", log_id);
    xxl_job_t job;
    if (job_id <= 0 || xxl_store_job_load (self->store, job_id, &job))
        return true;                    //  let dispatch say what is wrong
    //  A broadcast row waits for all the agents (the warm-up's end), not
    //  for the first: shard i goes to the i-th address of the full list
    bool connected = !xxl_routers_is_broadcast (self->routers, job.executor_route_strategy)
                  && s_job_has_agents (self, &job);
    xxl_job_free (&job);
    return connected;
}

//  Fires one planned row from its plan: routes it against the live
//  registry and sends its RUN, reading nothing from the store
static void
s_plan_dispatch (server_t *self, plan_t *plan)
{
    const xxl_job_t *job = &plan->snap->job;
    const char *const *addresses;
    char **manual;
    size_t count = s_job_addresses (self, job, &addresses, &manual);
    int64_t stamp = s_now ();
    s_route_row (self, job, plan->log_id, stamp, job->executor_param, plan->shard_index,
                 plan->shard_total, plan->sharded, addresses, count, stamp);
    if (manual)
        s_free_addresses (manual, count);
}

//  1 when a job has an address connected now
static bool
s_job_has_agents (server_t *self, const xxl_job_t *job)
{
    const char *const *addresses;
    char **manual;
    size_t count = s_job_addresses (self, job, &addresses, &manual);
    bool connected = false;
    for (size_t i = 0; i < count && !connected; i++) {
        size_t size;
        connected = xxl_registry_route (self->registry, addresses [i], &size) != NULL;
    }
    if (manual)
        s_free_addresses (manual, count);
    return connected;
}

//  Makes sure xxl_job_fired covers rows planned up to `until` in this
//  turn's transaction: a row may be sent only once it is covered, so that
//  a restart tells rows that may have gone from rows that did not.
static void
s_fired_cover (server_t *self, int64_t until)
{
    if (until <= self->fired_want)
        return;
    //  A second ahead, so that one write covers the next fires too and a
    //  long turn does not outrun it
    until += 1000;
    if (xxl_store_exec (self->store,
            "UPDATE xxl_job_fired SET fired_until = max (fired_until, ?)", "i", until) == 1)
        self->fired_want = until;
}

//  Takes a plan out of self->plans (and its job's list of unsent plans)
//  into a new plan_t that owns what it owned; the map's entry is freed
static plan_t *
s_plan_take (server_t *self, plan_t *plan)
{
    plan_t *taken = (plan_t *) malloc (sizeof (plan_t));
    assert (taken);
    *taken = *plan;
    if (plan->handle)
        zlistx_delete (plan->snap->plan_ids, plan->handle);
    taken->handle = NULL;
    taken->prebuilt = NULL;
    plan->handle = NULL;
    plan->prebuilt = NULL;
    plan->snap = NULL;
    plan->address = plan->note = NULL;
    plan->tp = NULL;
    int64_t log_id = plan->log_id;
    zhashx_delete (self->plans, &log_id);
    return taken;
}

//  One due plan (log id) popped from the timer at its time `when`: sent
//  in this instant's batch for its agent when nothing holds it, else on
//  fire_later for s_plan_due (not prepared, agent gone, job changed,
//  another scheduler writing, row not committed or not covered)
static void
s_fire_plan (server_t *self, int64_t log_id, int64_t when)
{
    plan_t *plan = (plan_t *) zhashx_lookup (self->plans, &log_id);
    if (plan && plan->prebuilt) {
        //  (an instant's batch holds it already: that one no longer goes
        //  as built, and this is its only send)
        plan->prebuilt->fires [plan->slot].plan = NULL;
        plan->prebuilt->dirty = true;
        plan->prebuilt = NULL;
    }
    size_t rid_size;
    if (!plan || !plan->tp || plan->snap->cancelled || plan->turn == self->turn
    ||  plan->turn <= self->foreign_turn || self->stopping || when > self->fired_until
    ||  !xxl_registry_route (self->registry, plan->address, &rid_size)) {
        zlistx_add_end (self->fire_later, (void *) (intptr_t) log_id);
        return;
    }
    //  Its time: when it joins the message that takes it (a batch
    //  leaves when full or after the last due row)
    int64_t stamp = s_now ();
    if (when > self->sent_max)
        self->sent_max = when;
    int max = xxl_registry_run_batch (self->registry, plan->address);
    if (max >= 2) {
        //  The batch takes what the plan owns
        plan_t *taken = s_plan_take (self, plan);
        const void *rid = xxl_registry_route (self->registry, taken->address, &rid_size);
        s_fire_queue (self, &taken, stamp, rid, rid_size, max);
        return;
    }
    char why [256];
    pending_t *pending = s_pending_new (self, plan->address, PENDING_RUN,
                                        self->config.run_timeout_ms, why, sizeof why);
    if (!pending) {
        zlistx_add_end (self->fire_later, (void *) (intptr_t) log_id);
        return;
    }
    pending->log_id = log_id;
    pending->note = plan->note && *plan->note? strdup (plan->note): NULL;
    pending->presumed = s_section_chars (plan->note, plan->address);
    pending->stamp = stamp;
    s_run_queue (self, pending, plan->tp, plan->tp_size, stamp, self->fire_batches);
    zhashx_delete (self->plans, &log_id);
}

//  Puts a prepared plan (in self->plans, written this turn) into the
//  prebuilt batch of its instant for its agent: its TriggerParam joins
//  that message now, so that at `fire_at` the message only gets its
//  times and goes.  Returns false when its agent takes no batches or is
//  not connected (the plan then needs its own timer entry).
static bool
s_instant_add (server_t *self, plan_t *plan, int64_t fire_at)
{
    if (!plan->address || !plan->tp)
        return false;                   //  (unprepared: no agent to route to yet)
    size_t rid_size;
    const void *rid = xxl_registry_route (self->registry, plan->address, &rid_size);
    int max = rid? xxl_registry_run_batch (self->registry, plan->address): 0;
    if (max < 2 || !plan->tp)
        return false;
    instant_t *instant = (instant_t *) zhashx_lookup (self->instants, &fire_at);
    if (!instant) {
        instant = (instant_t *) zmalloc (sizeof (instant_t));
        instant->when = fire_at;
        instant->batches = zlistx_new ();
        zlistx_set_destructor (instant->batches, s_batch_destructor);
        if (xxl_timer_push (self->timer, fire_at, 0)) {
            s_instant_destroy (&instant);
            return false;
        }
        zhashx_insert (self->instants, &instant->when, instant);
    }
    run_batch_t *batch = s_batch_for (self, instant->batches, plan->address, rid, rid_size,
                                      max, true);
    if (batch->count == 0) {
        batch->prebuilt = true;
        batch->min_turn = batch->max_turn = plan->turn;
    }
    if (plan->turn < batch->min_turn)
        batch->min_turn = plan->turn;
    if (plan->turn > batch->max_turn)
        batch->max_turn = plan->turn;
    unsigned char time [9];
    s_pack_time (time, fire_at);        //  (replaced when it goes)
    xxl_enc_raw (batch->enc, plan->tp, plan->tp_size, 1);
    batch->fires [batch->count].offset = xxl_enc_size (batch->enc);
    xxl_enc_raw (batch->enc, time, sizeof time, 0);
    batch->fires [batch->count].plan = plan;
    batch->fires [batch->count].stamp = 0;
    plan->prebuilt = batch;
    plan->slot = batch->count;
    batch->count++;
    batch->bytes += plan->tp_size + sizeof time;
    return true;
}

//  The instant `when` has come: each of its prebuilt batches leaves as
//  built when all its rows are committed and covered, none of its plans
//  left it, and its agent is still on the same connection; the plans of
//  any other batch go one by one (s_fire_plan).  The batches that leave
//  get one time, taken once they are all ready, and go in a row; they
//  are put on self->taking: s_fire hands them their plans after.
static void
s_instant_fire (server_t *self, int64_t when)
{
    instant_t *instant = (instant_t *) zhashx_lookup (self->instants, &when);
    if (!instant)
        return;
    zhashx_delete (self->instants, &when);
    bool go = !self->stopping && when <= self->fired_until;
    zlistx_t *later = NULL;
    run_batch_t *batch;
    for (batch = (run_batch_t *) zlistx_first (instant->batches); batch;
         batch = (run_batch_t *) zlistx_next (instant->batches)) {
        size_t rid_size = 0;
        const void *rid = go && !batch->dirty && batch->max_turn < self->turn
                       && batch->min_turn > self->foreign_turn
                        ? xxl_registry_route (self->registry, batch->address, &rid_size): NULL;
        if (!rid || rid_size != batch->rid_size || memcmp (rid, batch->rid, rid_size)) {
            zlistx_detach_cur (instant->batches);
            if (!later)
                later = zlistx_new ();
            zlistx_add_end (later, batch);
        }
    }
    if (zlistx_size (instant->batches) && when > self->sent_max)
        self->sent_max = when;
    int64_t stamp = s_now ();
    while ((batch = (run_batch_t *) zlistx_detach (instant->batches, NULL))) {
        s_batch_send (self, batch, true, stamp);
        zlistx_add_end (self->taking, batch);
    }
    //  The others one by one, as any due plan
    while (later && (batch = (run_batch_t *) zlistx_detach (later, NULL))) {
        for (size_t i = 0; i < batch->count; i++) {
            plan_t *plan = batch->fires [i].plan;
            batch->fires [i].plan = NULL;
            if (plan) {
                plan->prebuilt = NULL;
                s_fire_plan (self, plan->log_id, when);
            }
        }
        s_batch_destroy (&batch);
    }
    zlistx_destroy (&later);
    s_instant_destroy (&instant);
}

//  Sends the prepared fires whose time has come, with no store access:
//  their rows were committed with their address in an earlier turn and
//  xxl_job_fired covers them.  Any other due row (not prepared, agent
//  gone, job changed, another scheduler writing) goes to fire_later for
//  s_plan_due.  Callable anywhere in a turn.
static void
s_fire (server_t *self)
{
    int64_t now = s_now ();
    int64_t log_id, when;
    while (xxl_timer_pop_due (self->timer, now, &log_id, &when) == 0) {
        if (log_id == 0)
            s_instant_fire (self, when);
        else
            s_fire_plan (self, log_id, when);
    }
    run_batch_t *batch;
    while ((batch = (run_batch_t *) zlistx_first (self->fire_batches)))
        s_batch_close (self, batch, self->fire_batches);
    //  What left prebuilt now owns its plans: they leave self->plans
    while ((batch = (run_batch_t *) zlistx_detach (self->taking, NULL))) {
        for (size_t i = 0; i < batch->count; i++)
            batch->fires [i].plan = s_plan_take (self, batch->fires [i].plan);
        batch->prebuilt = false;
    }
}

//  s_fire when a fire is due: called between pieces of work in a turn
static void
s_fire_check (server_t *self)
{
    int64_t next = xxl_timer_next (self->timer);
    if (next >= 0 && s_now () >= next)
        s_fire (self);
}

//  Arms the timerfd for wall-clock ms `when` (once per value)
static void
s_timer_arm (server_t *self, int64_t when)
{
    if (self->timer_fd < 0 || when <= 0 || when == self->timer_armed)
        return;
    struct itimerspec spec = { .it_value = { .tv_sec = (time_t) (when / 1000),
                                             .tv_nsec = (long) (when % 1000) * 1000000 } };
    if (timerfd_settime (self->timer_fd, TFD_TIMER_ABSTIME, &spec, NULL) == 0)
        self->timer_armed = when;
}

//  True when a prepared fire is due so soon that work which cannot stop
//  for it (a commit above all) would delay it: within twice the recent
//  commits' time, 2 to 20 ms.  (A fire xxl_job_fired does not cover yet
//  needs this turn's commit: it is not waited for.)
static bool
s_fire_near (server_t *self)
{
    int64_t next = xxl_timer_next (self->timer);
    if (next < 0 || next > self->fired_until)
        return false;
    int64_t guard = 2 + 2 * self->commit_us / 1000;
    return next - s_now () <= (guard < 20? guard: 20);
}

//  True when a planned fire is due within ms
static bool
s_fire_within (server_t *self, int64_t ms)
{
    int64_t next = xxl_timer_next (self->timer);
    return next >= 0 && next - s_now () <= ms;
}

//  Waits for the next fire (due within the guard) and sends it
static void
s_fire_wait (server_t *self)
{
    int64_t next = xxl_timer_next (self->timer);
    int64_t left;
    while (next >= 0 && (left = next - s_now ()) > 0) {
        if (self->timer_fd >= 0) {
            s_timer_arm (self, next);
            struct pollfd item = { .fd = self->timer_fd, .events = POLLIN };
            if (poll (&item, 1, (int) left + 1) > 0) {
                uint64_t expired;
                if (read (self->timer_fd, &expired, sizeof expired) < 0) {
                    //  (not due after all: the loop checks the time)
                }
                self->timer_armed = -1;
            }
        }
        else
            zclock_sleep ((int) left);
    }
    s_fire (self);
}

//  A prepared row s_fire could not send: sent now through the store (its
//  trigger time written first, the row checked still unsent), routed
//  again when its agent is gone, deleted when its job changed
static void
s_plan_fallback (server_t *self, plan_t *plan)
{
    if (plan->snap->cancelled) {
        xxl_store_exec (self->store,
            "DELETE FROM xxl_job_log WHERE id = ? AND trigger_code = 0", "i", plan->log_id);
        return;
    }
    size_t rid_size;
    if (xxl_registry_route (self->registry, plan->address, &rid_size)) {
        int64_t stamp = s_now ();
        if (xxl_store_exec (self->store,
                "UPDATE xxl_job_log SET trigger_time = ? WHERE id = ? AND trigger_code = 0",
                "ii", stamp, plan->log_id) != 1)
            return;                     //  cancelled by a scheduler sharing the store
        char why [256];
        pending_t *pending = s_pending_new (self, plan->address, PENDING_RUN,
                                            self->config.run_timeout_ms, why, sizeof why);
        if (!pending)
            return;                     //  (connected: cannot happen)
        pending->log_id = plan->log_id;
        pending->note = plan->note && *plan->note? strdup (plan->note): NULL;
        pending->presumed = s_section_chars (plan->note, plan->address);
        s_run_queue (self, pending, plan->tp, plan->tp_size, stamp, self->open_batches);
        return;
    }
    //  Its agent is gone: take the address and section back, route again
    if (xxl_store_exec (self->store,
            "UPDATE xxl_job_log SET executor_address = NULL, trigger_msg ="
            " substr (trigger_msg, 1, max (length (trigger_msg) - ?, 0))"
            " WHERE id = ? AND trigger_code = 0", "ii",
            s_section_chars (plan->note, plan->address), plan->log_id) == 1)
        s_plan_dispatch (self, plan);
}

//  Sends the planned rows whose time has come: prepared ones by s_fire,
//  the others here, at most XXL_DUE_BATCH a turn, so that agents' answers
//  are read in between
#define XXL_DUE_BATCH 4096
static void
s_plan_due (server_t *self)
{
    s_fire (self);
    int64_t now = s_now ();
    bool warming = zclock_mono () < self->warm_until;
    zlistx_t *held = NULL;
    int budget = XXL_DUE_BATCH;
    void *item;
    if (zlistx_size (self->fire_later))
        s_fired_cover (self, now);
    while (budget-- > 0 && (item = zlistx_detach (self->fire_later, NULL))) {
        if (budget % 64 == 0)
            s_fire_check (self);
        int64_t log_id = (int64_t) (intptr_t) item;
        plan_t *plan = (plan_t *) zhashx_lookup (self->plans, &log_id);
        if (warming && !(plan? !plan->sharded && s_job_has_agents (self, &plan->snap->job)
                             : s_row_has_agents (self, log_id))) {
            if (!held)
                held = zlistx_new ();
            zlistx_add_end (held, item);
            continue;
        }
        //  A job stopped after planning: its unsent rows were deleted with
        //  their plans, and s_dispatch_row finds nothing
        if (plan) {
            if (plan->tp)
                s_plan_fallback (self, plan);
            else
                s_plan_dispatch (self, plan);
            zhashx_delete (self->plans, &log_id);
        }
        else
            s_dispatch_row (self, log_id, NULL, NULL);
    }
    if (held) {
        for (item = zlistx_first (held); item; item = zlistx_next (held))
            xxl_timer_push (self->timer, now + 100, (int64_t) (intptr_t) item);
        zlistx_destroy (&held);
    }
}

//  At start: every trigger row no agent acknowledged.  Never-sent rows are
//  sent (or follow the misfire rule when too late); rows that may have
//  been sent go again to the same agent once it is back (it refuses a
//  logId it already accepted, so nothing runs twice).
static void
s_recover (server_t *self)
{
    int64_t now = s_now ();
    int64_t ids [4096];
    size_t count = 0, recovered = 0, dropped = 0, resent = 0, misfired = 0;
    int64_t after = 0;
    //  Never-sent rows planned more than the window ago: the job's misfire
    //  rule, once per job -- FIRE_ONCE_NOW keeps the latest as MISFIRE
    int64_t late_before = now - self->config.preread_ms;
    //  Rows a commit knows were fired with no store access, whose fire
    //  time was not written yet: they went at their planned time
    xxl_store_exec (self->store,
        "UPDATE xxl_job_log SET trigger_time = schedule_time WHERE trigger_code = 0"
        " AND executor_address IS NOT NULL AND schedule_time > trigger_time"
        " AND schedule_time <= (SELECT fired_sent FROM xxl_job_fired)", NULL);
    //  Unsent: no address, or routed ahead and neither stamped nor known
    //  sent (one sent in the last turn before a stop is not known: see
    //  the second pass)
#define XXL_UNSENT_SQL " trigger_code = 0 AND (executor_address IS NULL" \
                       " OR (schedule_time > (SELECT fired_sent FROM xxl_job_fired)" \
                       " AND trigger_time < schedule_time))"
    xxl_store_ids (self->store,
        "SELECT job_id FROM xxl_job_log WHERE" XXL_UNSENT_SQL
        " AND schedule_time < ? GROUP BY job_id LIMIT 4096", late_before, ids, 4096, &count);
    for (size_t i = 0; i < count; i++) {
        xxl_job_t job;
        int64_t keep = 0;
        if (xxl_store_job_load (self->store, ids [i], &job) == 0) {
            //  Once per outage: when the job's next time is past the window
            //  too, the planner's misfire fires it once (s_plan_job), and
            //  these rows go
            bool planner_fires = job.trigger_status == 1 && job.trigger_next_time != XXL_WAITING
                              && job.trigger_next_time < late_before;
            if (streq (job.misfire_strategy, "FIRE_ONCE_NOW") && !planner_fires)
                keep = xxl_store_scalar (self->store,
                    "SELECT MAX(id) FROM xxl_job_log WHERE job_id = ? AND" XXL_UNSENT_SQL
                    " AND schedule_time < ?", "ii", job.id, late_before);
            xxl_job_free (&job);
        }
        if (keep > 0) {
            xxl_store_exec (self->store,
                "UPDATE xxl_job_log SET trigger_type = 'MISFIRE', trigger_msg = replace (trigger_msg,"
                " 'Trigger type: Cron trigger', 'Trigger type: Misfire compensation trigger')"
                " || 'Misfire: the scheduler was down at the planned time; FIRE_ONCE_NOW\n'"
                " WHERE id = ?", "i", keep);
            misfired++;
        }
        int gone = xxl_store_exec (self->store,
            "DELETE FROM xxl_job_log WHERE job_id = ? AND" XXL_UNSENT_SQL
            " AND schedule_time < ? AND id != ?", "iii", ids [i], late_before, keep);
        dropped += gone > 0? (size_t) gone: 0;
    }
    //  Due rows routed ahead that may have gone in the last turn (they go
    //  again to the same agent below): their planned time as trigger time
    xxl_store_exec (self->store,
        "UPDATE xxl_job_log SET trigger_time = schedule_time WHERE trigger_code = 0"
        " AND executor_address IS NOT NULL AND schedule_time > trigger_time"
        " AND schedule_time <= ?", "i", now);
    do {
        xxl_store_ids (self->store,
            "SELECT id FROM xxl_job_log WHERE trigger_code = 0 AND id > ? ORDER BY id LIMIT 4096",
            after, ids, 4096, &count);
        for (size_t i = 0; i < count; i++) {
            after = ids [i];
            xxl_log_t log;
            if (xxl_store_log_load (self->store, ids [i], &log))
                continue;
            //  Routed ahead, not known sent: not due yet, it cannot have
            //  gone; due, it may have gone in the last turn before the
            //  stop, so it goes to the same agent, which refuses a logId
            //  it has
            bool unsent = log.schedule_time > self->fired_sent
                       && log.trigger_time < log.schedule_time && log.schedule_time > now;
            if (*log.executor_address && !unsent) {
                s_resend_add (self, log.id, log.executor_address);
                resent++;
            }
            else {
                if (*log.executor_address)
                    //  Routed ahead, never sent: route again at its time
                    xxl_store_exec (self->store,
                        "UPDATE xxl_job_log SET executor_address = NULL WHERE id = ?", "i", log.id);
                xxl_timer_push (self->timer, log.schedule_time > now? log.schedule_time: now, log.id);
                recovered++;
            }
            xxl_log_free (&log);
        }
    } while (count == 4096);
    //  Alarms claimed but not finished when the last run stopped
    size_t claimed = 0;
    after = 0;
    do {
        xxl_store_ids (self->store,
            "SELECT id FROM xxl_job_log WHERE alarm_status = -1 AND id > ? ORDER BY id LIMIT 4096",
            after, ids, 4096, &count);
        for (size_t i = 0; i < count; i++) {
            after = ids [i];
            s_alarm_again (self, ids [i]);
            claimed++;
        }
    } while (count == 4096);
    if (claimed)
        zsys_info ("alarms: %zu unfinished alarm(s) sent again", claimed);
    if (recovered || dropped || resent)
        zsys_info ("planner: recovery: %zu unsent trigger(s) planned again (%zu as MISFIRE),"
                   " %zu to re-send to their agents when back, %zu dropped as misfired",
                   recovered, misfired, resent, dropped);
}

//  Re-sends rows put back (recovery, a failed store write) once their
//  agent is connected again; past the wait, fails them
static void
s_recover_resends (server_t *self)
{
    zlistx_t *due = zlistx_new ();
    int64_t now = zclock_mono ();
    for (xxl_resend_t *resend = (xxl_resend_t *) zlistx_first (self->resends); resend;
         resend = (xxl_resend_t *) zlistx_next (self->resends)) {
        size_t size;
        if (xxl_registry_route (self->registry, resend->address, &size) || now >= resend->deadline) {
            zlistx_detach_cur (self->resends);
            zhashx_delete (self->resend_ids, &resend->log_id);
            zlistx_add_end (due, resend);
        }
    }
    xxl_resend_t *resend;
    while ((resend = (xxl_resend_t *) zlistx_detach (due, NULL))) {
        size_t size;
        if (s_run_in_flight (self, resend->log_id))
            ;                           //  (its RUN went meanwhile: that one counts)
        else
        if (xxl_registry_route (self->registry, resend->address, &size))
            s_dispatch_row (self, resend->log_id, resend->address,
                            "re-sent (after a scheduler restart or a failed store write)\n");
        else {
            char *why = zsys_sprintf ("\ntrigger failed: agent %s did not come back within"
                                      " %d ms\n", resend->address,
                                      self->config.recovery_wait_ms);
            if (xxl_store_exec (self->store, "UPDATE xxl_job_log SET trigger_code = ?,"
                                " trigger_msg = COALESCE(trigger_msg, '') || ? WHERE id = ?"
                                " AND trigger_code = 0 AND handle_code = 0", "isi",
                                (int64_t) XXL_CODE_FAIL, why, resend->log_id) < 0)
                s_resend_add (self, resend->log_id, resend->address);
            zstr_free (&why);
        }
        void *item = resend;
        s_resend_destroy (&item);
    }
    zlistx_destroy (&due);
}

//  --------------------------------------------------------------------
//  Services: child jobs, the fail monitor (retries, alarms), the lost-run
//  monitor, daily reports, log retention

//  Follows child_jobid links from `children`; 1 when job_id is reached (a
//  cycle), writing the path into path
static int
s_child_cycle (server_t *self, int64_t job_id, const char *children, char *path,
               size_t pathlen, int depth)
{
    if (depth > 64 || !children || !*children)
        return 0;
    char *copy = strdup (children), *save = NULL;
    int cycle = 0;
    for (char *t = strtok_r (copy, ",", &save); t && !cycle; t = strtok_r (NULL, ",", &save)) {
        int64_t child = atoll (t);
        size_t used = strlen (path);
        snprintf (path + used, pathlen - used, " -> %" PRId64, child);
        if (child == job_id)
            cycle = 1;
        else {
            char *next = xxl_store_text (self->store,
                "SELECT child_jobid FROM xxl_job_info WHERE id = ?", "i", child);
            cycle = s_child_cycle (self, job_id, next, path, pathlen, depth + 1);
            free (next);
        }
        if (!cycle)
            path [used] = 0;
    }
    free (copy);
    return cycle;
}

//  Fires a finished job's child jobs (trigger type PARENT); returns text for
//  the parent's handleMsg (caller frees), or NULL when it has none
static char *
s_trigger_children (server_t *self, int64_t log_id)
{
    //  Most installations have no child jobs: ask the store once a second
    //  (this scheduler's job writes ask again at once)
    int64_t now = zclock_mono ();
    if (now >= self->children_until) {
        self->any_children = xxl_store_scalar (self->store,
            "SELECT EXISTS (SELECT 1 FROM xxl_job_info WHERE child_jobid != '')", "") != 0;
        self->children_until = now + 1000;
    }
    if (!self->any_children)
        return NULL;
    char *children = xxl_store_text (self->store,
        "SELECT child_jobid FROM xxl_job_info"
        " WHERE id = (SELECT job_id FROM xxl_job_log WHERE id = ?)", "i", log_id);
    if (!children || !*children) {
        free (children);
        return NULL;
    }
    size_t total = 1;
    for (const char *p = children; *p; p++)
        total += *p == ',';
    char *text = strdup ("\n>>>>>>>>>>> Trigger child jobs <<<<<<<<<<<\n");
    char *copy = children, *save = NULL;
    size_t index = 0;
    for (char *t = strtok_r (copy, ",", &save); t; t = strtok_r (NULL, ",", &save)) {
        int64_t child = atoll (t);
        xxl_job_t job;
        char *line;
        if (child > 0 && xxl_store_job_load (self->store, child, &job) == 0) {
            trigger_args_t args = { .trigger_type = "PARENT", .fail_retry_count = -1,
                                    .shard_index = -1, .shard_total = -1 };
            int64_t ids [16];
            int made = s_trigger (self, &job, &args, ids, NULL, 16);
            line = made > 0? zsys_sprintf ("%zu/%zu [job %" PRId64 "] triggered, log %" PRId64 "%s\n",
                                           ++index, total, child, ids [0], made > 1? " and more": "")
                           : zsys_sprintf ("%zu/%zu [job %" PRId64 "] trigger failed\n",
                                           ++index, total, child);
            xxl_job_free (&job);
        }
        else
            line = zsys_sprintf ("%zu/%zu [job %s] not found\n", ++index, total, t);
        char *joined = zsys_sprintf ("%s%s", text, line);
        zstr_free (&text);
        zstr_free (&line);
        text = joined;
    }
    free (children);
    return text;
}

//  Seconds before retry number `attempt` (0 for the first retry)
static int64_t
s_retry_delay (const xxl_job_t *job, int64_t attempt)
{
    double delay = (double) job->retry_interval;
    double backoff = job->retry_backoff >= 1? job->retry_backoff: 1;
    for (int64_t i = 0; i < attempt && delay < 1e9; i++)
        delay *= backoff;
    if (job->retry_max_interval > 0 && delay > (double) job->retry_max_interval)
        delay = (double) job->retry_max_interval;
    return (int64_t) delay;
}

//  Ends an alarm claim: 1 no alarm needed, 2 sent, 3 failed
static void
s_alarm_status (server_t *self, int64_t log_id, int status, const char *report)
{
    xxl_store_exec (self->store,
        "UPDATE xxl_job_log SET alarm_status = ?,"
        " handle_msg = CASE WHEN ? IS NULL THEN handle_msg"
        "   ELSE COALESCE(handle_msg, '') || '\n>>>>>>>>>>> Alarm <<<<<<<<<<<\n' || ? END"
        " WHERE id = ?", "issi", (int64_t) status, report, report, log_id);
}

//  Queues the alarm of a failed run for the job's targets (alarmEmail);
//  the row's alarm status is set when the sender's result comes back.  A
//  full queue keeps the log id in a backlog, tried again each pass.
static void
s_alarm_send (server_t *self, const xxl_log_t *log, const xxl_job_t *job)
{
    xxl_group_t group = { 0 };
    xxl_store_group_load (self->store, job->job_group, &group);
    xxl_alarm_t alarm = {
        .size = sizeof (xxl_alarm_t), .job_id = job->id, .job_desc = job->job_desc,
        .app = group.app_name? group.app_name: "", .log_id = log->id,
        .trigger_time = log->trigger_time, .trigger_code = (int) log->trigger_code,
        .trigger_msg = log->trigger_msg, .handle_code = (int) log->handle_code,
        .handle_msg = log->handle_msg, .executor_address = log->executor_address,
        .retry_count = (int) (job->executor_fail_retry_count - log->executor_fail_retry_count),
        .json = NULL
    };
    if (xxl_alarms_submit (self->alarms, &alarm, job->alarm_email, log->id)) {
        if (zlistx_size (self->alarm_backlog) < 100000)
            zlistx_add_end (self->alarm_backlog, (void *) (intptr_t) log->id);
        else
            s_alarm_status (self, log->id, 3, "alarm not sent: the alarm queue is full");
    }
    xxl_group_free (&group);
}

//  Alarms of a row already claimed (status -1): resent after a restart or
//  when the queue had no room
static void
s_alarm_again (server_t *self, int64_t log_id)
{
    xxl_log_t log;
    if (xxl_store_log_load (self->store, log_id, &log))
        return;
    xxl_job_t job;
    if (xxl_store_job_load (self->store, log.job_id, &job) == 0) {
        if (*job.alarm_email)
            s_alarm_send (self, &log, &job);
        else
            s_alarm_status (self, log_id, 1, NULL);
        xxl_job_free (&job);
    }
    else
        s_alarm_status (self, log_id, 1, NULL);
    xxl_log_free (&log);
}

//  Results from the alarm sender: the claim ends as sent (2) or failed (3)
static void
s_alarm_results (server_t *self)
{
    int64_t tag;
    int ok;
    char *report = NULL;
    while (xxl_alarms_take (self->alarms, &tag, &ok, &report) == 0) {
        s_alarm_status (self, tag, ok? 2: 3, report);
        free (report);
        report = NULL;
    }
}

//  One failed run, claimed: retry it while attempts are left, alarm after
//  the last (or after each, when configured)
static void
s_handle_failure (server_t *self, int64_t log_id)
{
    xxl_log_t log;
    if (xxl_store_log_load (self->store, log_id, &log))
        return;
    xxl_job_t job;
    if (xxl_store_job_load (self->store, log.job_id, &job)) {
        s_alarm_status (self, log_id, 1, NULL);
        xxl_log_free (&log);
        return;
    }
    bool retried = false;
    if (log.executor_fail_retry_count > 0) {
        int64_t attempt = job.executor_fail_retry_count - log.executor_fail_retry_count;
        int64_t delay = s_retry_delay (&job, attempt > 0? attempt: 0);
        trigger_args_t args = { .trigger_type = "RETRY",
                                .fail_retry_count = (int) log.executor_fail_retry_count - 1,
                                .param = log.executor_param,
                                .shard_index = -1, .shard_total = -1, .defer = delay > 0 };
        int index, total;
        if (*log.executor_sharding_param) {
            s_shard_of (log.executor_sharding_param, &index, &total);
            args.shard_index = index;
            args.shard_total = total;
        }
        int64_t ids [4];
        int made = s_trigger (self, &job, &args, ids, NULL, 4);
        if (made > 0) {
            if (delay > 0) {
                int64_t when = s_now () + delay * 1000;
                xxl_store_exec (self->store, "UPDATE xxl_job_log SET trigger_time = ? WHERE id = ?",
                                "ii", when, ids [0]);
                xxl_timer_push (self->timer, when, ids [0]);
            }
            char *note = zsys_sprintf ("\n>>>>>>>>>>> Fail retry <<<<<<<<<<<\nretry %" PRId64
                                       " of %" PRId64 " as log %" PRId64 " in %" PRId64 " s\n",
                                       attempt + 1, job.executor_fail_retry_count, ids [0], delay);
            xxl_store_exec (self->store,
                "UPDATE xxl_job_log SET trigger_msg = COALESCE(trigger_msg, '') || ? WHERE id = ?",
                "si", note, log_id);
            zstr_free (&note);
            retried = true;
        }
    }
    if (retried && !self->config.alarm_every_failure)
        s_alarm_status (self, log_id, 1, NULL);
    else
    if (!*job.alarm_email)
        s_alarm_status (self, log_id, 1, NULL);
    else
        s_alarm_send (self, &log, &job);
    xxl_job_free (&job);
    xxl_log_free (&log);
}

//  Failed runs not yet handled, claimed atomically (alarm_status 0 → -1)
//  so that schedulers sharing a store never handle one twice
static void
s_fail_monitor (server_t *self)
{
    size_t backlog = zlistx_size (self->alarm_backlog);
    for (size_t i = 0; i < backlog; i++) {
        int64_t log_id = (int64_t) (intptr_t) zlistx_detach (self->alarm_backlog, NULL);
        s_alarm_again (self, log_id);
    }
    int64_t ids [1000];
    size_t count = 0;
    xxl_store_ids (self->store,
        "SELECT id FROM xxl_job_log WHERE alarm_status = 0"
        " AND (trigger_code NOT IN (0, 200) OR handle_code NOT IN (0, 200)) AND id > ?"
        " ORDER BY id LIMIT 1000", 0, ids, 1000, &count);
    for (size_t i = 0; i < count; i++)
        if (xxl_store_exec (self->store,
                "UPDATE xxl_job_log SET alarm_status = -1 WHERE id = ? AND alarm_status = 0",
                "i", ids [i]) == 1)
            s_handle_failure (self, ids [i]);
}

//  Runs whose trigger succeeded, without a result for `lost_after` while
//  their agent is no longer registered: failed, with the reason
static void
s_lost_monitor (server_t *self)
{
    int64_t ids [1000];
    size_t count = 0;
    int64_t before = s_now () - self->config.lost_after_ms;
    xxl_store_ids (self->store,
        "SELECT l.id FROM xxl_job_log l LEFT JOIN xxl_job_registry r"
        " ON r.registry_value = l.executor_address"
        " WHERE l.trigger_code = 200 AND l.handle_code = 0 AND l.trigger_time <= ?"
        " AND r.id IS NULL LIMIT 1000", before, ids, 1000, &count);
    int64_t now = s_now ();
    for (size_t i = 0; i < count; i++) {
        char *reason = zsys_sprintf ("lost: no result after %d s and the agent is no"
                                     " longer registered (lost-run monitor)",
                                     self->config.lost_after_ms / 1000);
        if (xxl_store_log_handle_done (self->store, ids [i], now, XXL_CODE_FAIL, reason) == 0)
            s_fix_delay_release (self, ids [i], now);
        zstr_free (&reason);
    }
    if (count)
        zsys_warning ("monitor: %zu lost run(s) marked failed", count);
}

//  Local midnight of the day holding `ms`, in ms
static int64_t
s_day_start (int64_t ms)
{
    time_t t = (time_t) (ms / 1000);
    struct tm tm;
    localtime_r (&t, &tm);
    tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
    tm.tm_isdst = -1;
    return (int64_t) mktime (&tm) * 1000;
}

//  Daily rows for the last three days (XXL-JOB's JobLogReportHelper)
static void
s_report_refresh (server_t *self)
{
    int64_t now = s_now ();
    for (int back = 0; back < 3; back++) {
        int64_t day = s_day_start (now - (int64_t) back * 86400000);
        int64_t next = s_day_start (day + 36 * 3600000LL);
        xxl_store_exec (self->store,
            "INSERT INTO xxl_job_log_report (trigger_day, running_count, suc_count, fail_count,"
            " update_time) SELECT ?1,"
            " COALESCE(SUM(CASE WHEN trigger_code IN (0, 200) AND handle_code = 0 THEN 1 ELSE 0 END), 0),"
            " COALESCE(SUM(CASE WHEN handle_code = 200 THEN 1 ELSE 0 END), 0),"
            " COALESCE(SUM(CASE WHEN trigger_code NOT IN (0, 200) OR handle_code NOT IN (0, 200)"
            "   THEN 1 ELSE 0 END), 0), ?3"
            " FROM xxl_job_log WHERE trigger_time >= ?1 AND trigger_time < ?2"
            " ON CONFLICT (trigger_day) DO UPDATE SET running_count = excluded.running_count,"
            " suc_count = excluded.suc_count, fail_count = excluded.fail_count,"
            " update_time = excluded.update_time", "iii", day, next, now);
    }
}

//  Deletes finished log rows matching `where` (SQL on xxl_job_log, with
//  the given arguments), at most `limit`; never rows still waiting for
//  their trigger or their result.  Returns how many went.
static int64_t
s_log_delete (server_t *self, const char *where, const char *fmt, int64_t a, int64_t b,
              int64_t limit)
{
    char *sql = zsys_sprintf (
        "DELETE FROM xxl_job_log WHERE id IN (SELECT id FROM xxl_job_log WHERE %s"
        " AND NOT (trigger_code IN (0, 200) AND handle_code = 0) ORDER BY id LIMIT %" PRId64 ")",
        where, limit);
    //  Built at run time (from fixed fragments): not for the statement cache
    int changes = strlen (fmt) == 2? xxl_store_exec_once (self->store, sql, fmt, a, b)
                : strlen (fmt) == 1? xxl_store_exec_once (self->store, sql, fmt, a)
                : xxl_store_exec_once (self->store, sql, NULL);
    zstr_free (&sql);
    return changes > 0? changes: 0;
}

//  Retention: rows older than retention_days, and beyond keep_last, go in
//  batches so that a big table never stalls the loop
static void
s_retention (server_t *self)
{
    int64_t gone = 0;
    if (self->config.retention_days > 0) {
        int64_t before = s_now () - (int64_t) self->config.retention_days * 86400000;
        gone += s_log_delete (self, "trigger_time < ?", "i", before, 0, 5000);
    }
    if (self->config.keep_last > 0) {
        int64_t floor = xxl_store_scalar (self->store,
            "SELECT id FROM xxl_job_log ORDER BY id DESC LIMIT 1 OFFSET ?", "i",
            (int64_t) self->config.keep_last - 1);
        if (floor > 0)
            gone += s_log_delete (self, "id < ?", "i", floor, 0, 5000);
    }
    if (gone) {
        zsys_info ("retention: %" PRId64 " log row(s) removed", gone);
        self->next_retention = zclock_mono () + 1000;   //  more may be due
    }
}

//  --------------------------------------------------------------------
//  API handlers

static void
s_api_ping (server_t *self, request_t *request)
{
    s_reply_begin (self, request);
    xxl_enc_map_begin (self->enc);
    xxl_enc_kstr (self->enc, "version", PACKAGE_VERSION);
    xxl_enc_kint (self->enc, "protocol", XXL_PROTOCOL_VERSION);
    xxl_enc_map_end (self->enc);
    s_reply_end (self, request);
}

static int
s_group_read (server_t *self, xxl_msg_t *msg, xxl_group_t *group)
{
    (void) self;
    const char *app = xxl_msg_str (msg, NULL, "appname", 0, XXL_MSG_MAX_NAME, NULL);
    const char *title = xxl_msg_str (msg, NULL, "title", 0, XXL_MSG_MAX_NAME, NULL);
    int64_t type = xxl_msg_int (msg, NULL, "addressType", 0, 0, 1, group->address_type);
    const char *list = xxl_msg_str (msg, NULL, "addressList", 0, XXL_MAX_TEXT, NULL);
    if (xxl_msg_error (msg))
        return -1;
    if (app) {
        if (!*app)
            return xxl_msg_fail (msg, "appname must not be empty");
        for (const char *p = app; *p; p++)
            if (!(isalnum ((unsigned char) *p) || *p == '-' || *p == '_' || *p == '.'))
                return xxl_msg_fail (msg, "appname '%s' may hold only letters, digits, '-', '_' and '.'",
                                     app);
        free (group->app_name);
        group->app_name = strdup (app);
    }
    if (title) {
        free (group->title);
        group->title = strdup (title);
    }
    group->address_type = (int) type;
    if (list) {
        char **items;
        size_t count = s_split_addresses (list, &items);
        size_t size = 1;
        for (size_t i = 0; i < count; i++)
            size += strlen (items [i]) + 1;
        char *joined = (char *) zmalloc (size);
        for (size_t i = 0; i < count; i++) {
            if (i)
                strcat (joined, ",");
            strcat (joined, items [i]);
        }
        s_free_addresses (items, count);
        free (group->address_list);
        group->address_list = joined;
    }
    if (group->address_type == 1 && (!group->address_list || !*group->address_list))
        return xxl_msg_fail (msg, "a manual group (addressType 1) needs an addressList");
    return 0;
}

static void
s_api_group_add (server_t *self, request_t *request)
{
    xxl_group_t group = { 0 };
    group.title = strdup ("");
    if (!xxl_msg_get (xxl_msg_root (request->msg), "appname"))
        xxl_msg_fail (request->msg, "field 'appname' is required");
    if (xxl_msg_error (request->msg) || s_group_read (self, request->msg, &group)) {
        s_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
        xxl_group_free (&group);
        return;
    }
    xxl_group_t existing;
    if (xxl_store_group_find (self->store, group.app_name, &existing) == 0) {
        char text [512];
        snprintf (text, sizeof text, "group '%s' exists (id %" PRId64 ")",
                  group.app_name, existing.id);
        xxl_group_free (&existing);
        s_reply (self, request, XXL_CONFLICT, text);
        xxl_group_free (&group);
        return;
    }
    group.update_time = s_now ();
    int64_t id = xxl_store_group_add (self->store, &group);
    //  An automatic group's address list is the registry's, as XXL-JOB's
    //  registry monitor writes it
    if (id < 0 || (group.address_type == 0
                   && xxl_store_groups_refresh (self->store, group.update_time)))
        s_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
    else
        s_reply_id (self, request, id);
    xxl_group_free (&group);
}

//  Finds the group named by field `group` (app name or id); replies itself
//  when absent
static int
s_group_from_request (server_t *self, request_t *request, xxl_group_t *group)
{
    const char *key = xxl_msg_str (request->msg, NULL, "group", 1, XXL_MSG_MAX_NAME, NULL);
    if (xxl_msg_error (request->msg)) {
        s_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
        return -1;
    }
    int rc = xxl_store_group_find (self->store, key, group);
    if (rc) {
        char text [512];
        snprintf (text, sizeof text, "group '%s' not found", key);
        s_reply (self, request, rc < 0? XXL_FAILURE: XXL_NOT_FOUND, text);
        return -1;
    }
    return 0;
}

#define XXL_GROUP_SELECT \
    "SELECT id, app_name AS appname, title, address_type AS addressType," \
    " address_list AS addressList, update_time AS updateTime FROM xxl_job_group"

static void
s_encode_registry_list (server_t *self, const char *app)
{
    const char *const *addresses;
    size_t count = xxl_registry_addresses (self->registry, app, &addresses);
    xxl_enc_key (self->enc, "registryList");
    xxl_enc_array_begin (self->enc);
    for (size_t i = 0; i < count; i++)
        xxl_enc_str (self->enc, addresses [i]);
    xxl_enc_array_end (self->enc);
}

static void
s_api_group_list (server_t *self, request_t *request)
{
    s_reply_begin (self, request);
    xxl_enc_map_begin (self->enc);
    xxl_enc_key (self->enc, "groups");
    xxl_store_encode (self->store, self->enc, 1, XXL_GROUP_SELECT " ORDER BY id", NULL);
    xxl_enc_map_end (self->enc);
    s_reply_end (self, request);
}

static void
s_api_group_show (server_t *self, request_t *request)
{
    xxl_group_t group;
    if (s_group_from_request (self, request, &group))
        return;
    s_reply_begin (self, request);
    xxl_enc_map_begin (self->enc);
    xxl_enc_kint (self->enc, "id", group.id);
    xxl_enc_kstr (self->enc, "appname", group.app_name);
    xxl_enc_kstr (self->enc, "title", group.title);
    xxl_enc_kint (self->enc, "addressType", group.address_type);
    xxl_enc_kstr (self->enc, "addressList", group.address_list);
    xxl_enc_kint (self->enc, "updateTime", group.update_time);
    s_encode_registry_list (self, group.app_name);
    xxl_enc_map_end (self->enc);
    s_reply_end (self, request);
    xxl_group_free (&group);
}

static void
s_api_group_update (server_t *self, request_t *request)
{
    xxl_group_t group;
    if (s_group_from_request (self, request, &group))
        return;
    char *old_app = strdup (group.app_name);
    if (s_group_read (self, request->msg, &group))
        s_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
    else {
        xxl_group_t other;
        if (strneq (old_app, group.app_name)
        &&  xxl_store_group_find (self->store, group.app_name, &other) == 0) {
            xxl_group_free (&other);
            s_reply (self, request, XXL_CONFLICT, "another group has that appname");
        }
        else {
            group.update_time = s_now ();
            self->groups_until = 0;
            if (xxl_store_group_update (self->store, &group)
            ||  (group.address_type == 0
                 && xxl_store_groups_refresh (self->store, group.update_time)))
                s_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
            else
                s_reply_id (self, request, group.id);
        }
    }
    free (old_app);
    xxl_group_free (&group);
}

static void
s_api_group_rm (server_t *self, request_t *request)
{
    xxl_group_t group;
    if (s_group_from_request (self, request, &group))
        return;
    self->groups_until = 0;
    int64_t jobs = xxl_store_group_jobs (self->store, group.id);
    if (jobs != 0) {
        char text [128];
        snprintf (text, sizeof text, "group %" PRId64 " still has %" PRId64 " job(s); remove them first",
                  group.id, jobs);
        s_reply (self, request, XXL_CONFLICT, text);
    }
    else
    if (xxl_store_group_rm (self->store, group.id))
        s_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
    else
        s_reply_id (self, request, group.id);
    xxl_group_free (&group);
}

#define XXL_JOB_SELECT \
    "SELECT id, job_group AS jobGroup, job_desc AS jobDesc, add_time AS addTime," \
    " update_time AS updateTime, author, alarm_email AS alarmEmail," \
    " schedule_type AS scheduleType, schedule_conf AS scheduleConf," \
    " misfire_strategy AS misfireStrategy, executor_route_strategy AS executorRouteStrategy," \
    " executor_handler AS executorHandler, executor_param AS executorParam," \
    " executor_block_strategy AS executorBlockStrategy, executor_timeout AS executorTimeout," \
    " executor_fail_retry_count AS executorFailRetryCount, glue_type AS glueType," \
    " glue_source AS glueSource, glue_remark AS glueRemark, glue_updatetime AS glueUpdatetime," \
    " child_jobid AS childJobId, trigger_status AS triggerStatus," \
    " trigger_last_time AS triggerLastTime, trigger_next_time AS triggerNextTime, timezone," \
    " retry_interval AS retryInterval, retry_backoff AS retryBackoff," \
    " retry_max_interval AS retryMaxInterval FROM xxl_job_info"

//  Sets trigger_status/next time for start; returns 0 or -1 with why
static int
s_job_arm (const xxl_job_t *job_in, xxl_job_t *job, char *why, size_t whylen)
{
    (void) job_in;
    if (streq (job->schedule_type, "NONE")) {
        snprintf (why, whylen, "a job with schedule type NONE cannot be started; trigger it instead");
        return -1;
    }
    int64_t next = s_next_time (job, s_now (), why, whylen);
    if (next < 0)
        return -1;
    job->trigger_status = 1;
    job->trigger_last_time = 0;
    job->trigger_next_time = next;
    return 0;
}

static void
s_api_job_add (server_t *self, request_t *request)
{
    xxl_job_t job = { 0 };
    s_job_defaults (&job);
    xxl_group_t group;
    const char *key = xxl_msg_str (request->msg, NULL, "jobGroup", 1, XXL_MSG_MAX_NAME, NULL);
    int start = xxl_msg_bool (request->msg, NULL, "start", 0, 0);
    if (xxl_msg_error (request->msg)) {
        s_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
        xxl_job_free (&job);
        return;
    }
    int rc = xxl_store_group_find (self->store, key, &group);
    if (rc) {
        char text [512];
        snprintf (text, sizeof text, "group '%s' not found", key);
        s_reply (self, request, rc < 0? XXL_FAILURE: XXL_NOT_FOUND, text);
        xxl_job_free (&job);
        return;
    }
    job.job_group = group.id;
    xxl_group_free (&group);
    job.add_time = job.update_time = job.glue_updatetime = s_now ();
    char why [512] = "";
    if (s_job_read (self, request->msg, &job, 1))
        s_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
    else
    if (start && s_job_arm (NULL, &job, why, sizeof why))
        s_reply (self, request, XXL_BAD_REQUEST, why);
    else {
        self->children_until = 0;
        int64_t id = xxl_store_job_add (self->store, &job);
        if (id < 0)
            s_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
        else {
            if (strneq (job.glue_type, "BEAN"))
                xxl_store_glue_add (self->store, id, job.glue_type, job.glue_source,
                                    job.glue_remark, job.add_time);
            if (start)
                self->next_scan = 0;
            s_reply_id (self, request, id);
        }
    }
    xxl_job_free (&job);
}

static void
s_api_job_update (server_t *self, request_t *request)
{
    xxl_job_t job;
    if (s_job_from_request (self, request, &job))
        return;
    char *old_source = strdup (job.glue_source);
    const char *key = xxl_msg_str (request->msg, NULL, "jobGroup", 0, XXL_MSG_MAX_NAME, NULL);
    xxl_group_t group;
    char why [512] = "";
    bool no_group = false;
    if (key && xxl_store_group_find (self->store, key, &group) == 0) {
        job.job_group = group.id;
        xxl_group_free (&group);
    }
    else
    if (key && !xxl_msg_error (request->msg)) {
        xxl_msg_fail (request->msg, "group '%s' not found", key);
        no_group = true;
    }
    if (no_group)
        s_reply (self, request, XXL_NOT_FOUND, xxl_msg_error (request->msg));
    else
    if (xxl_msg_error (request->msg) || s_job_read (self, request->msg, &job, 0))
        s_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
    else
    if (job.trigger_status == 1 && s_job_arm (NULL, &job, why, sizeof why))
        s_reply (self, request, XXL_BAD_REQUEST, why);
    else {
        job.update_time = s_now ();
        s_plan_forget (self, job.id);
        self->next_scan = 0;
        if (xxl_store_job_save (self->store, &job))
            s_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
        else {
            if (strneq (job.glue_type, "BEAN") && strneq (old_source, job.glue_source))
                xxl_store_glue_add (self->store, job.id, job.glue_type, job.glue_source,
                                    job.glue_remark, job.update_time);
            s_reply_id (self, request, job.id);
        }
    }
    free (old_source);
    xxl_job_free (&job);
}

static void
s_api_job_rm (server_t *self, request_t *request)
{
    xxl_job_t job;
    if (s_job_from_request (self, request, &job))
        return;
    s_plan_forget (self, job.id);
    //  Its log rows go too, as in XXL-JOB, and its id leaves every
    //  parent's child list, in this turn's transaction.  Runs on an agent
    //  finish there: their callbacks find no row, are acknowledged and
    //  change nothing; a RUN's answer or a re-send finds no row either
    self->children_until = 0;
    int64_t logs = xxl_store_job_rm_logs (self->store, job.id);
    if (logs < 0 || xxl_store_job_unchild (self->store, job.id) < 0
    ||  xxl_store_job_rm (self->store, job.id))
        s_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
    else {
        s_reply_begin (self, request);
        xxl_enc_map_begin (self->enc);
        xxl_enc_kint (self->enc, "id", job.id);
        xxl_enc_kint (self->enc, "deletedLogs", logs);
        xxl_enc_map_end (self->enc);
        s_reply_end (self, request);
    }
    xxl_job_free (&job);
}

static void
s_api_job_start_stop (server_t *self, request_t *request, int start)
{
    xxl_job_t job;
    if (s_job_from_request (self, request, &job))
        return;
    char why [512] = "";
    if (start && s_job_arm (NULL, &job, why, sizeof why))
        s_reply (self, request, XXL_BAD_REQUEST, why);
    else {
        if (!start) {
            job.trigger_status = 0;
            job.trigger_last_time = 0;
            job.trigger_next_time = 0;
        }
        job.update_time = s_now ();
        s_plan_forget (self, job.id);
        self->next_scan = 0;
        if (xxl_store_job_save (self->store, &job))
            s_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
        else
            s_reply_id (self, request, job.id);
    }
    xxl_job_free (&job);
}

//  Answers with the one row `select` (ending in "WHERE id = ?") finds for
//  the request's id field `key`; `what` names it in the not-found error
static void
s_show_row (server_t *self, request_t *request, const char *key, const char *select,
            const char *what)
{
    int64_t id = xxl_msg_int (request->msg, NULL, key, 1, 1, INT64_MAX, 0);
    if (xxl_msg_error (request->msg)) {
        s_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
        return;
    }
    s_reply_begin (self, request);
    int rows = xxl_store_encode (self->store, self->enc, 0, select, "i", id);
    if (rows <= 0) {
        char text [64];
        snprintf (text, sizeof text, "%s %" PRId64 " not found", what, id);
        s_reply (self, request, rows < 0? XXL_FAILURE: XXL_NOT_FOUND, text);
        return;
    }
    s_reply_end (self, request);
}

static void
s_api_job_show (server_t *self, request_t *request)
{
    s_show_row (self, request, "jobId", XXL_JOB_SELECT " WHERE id = ?", "job");
}

//  A list reply stops before it would pass the frame limit: this much
//  is left for the rest of the reply
#define XXL_REPLY_MAX       (XXL_MSG_MAX_FRAME - 64 * 1024)
#define XXL_JOB_FILTER \
    "instr (lower (executor_handler), lower (?4)) > 0 AND instr (lower (job_desc), lower (?5)) > 0" \
    " AND instr (lower (author), lower (?6)) > 0 AND (?7 < 0 OR trigger_status = ?7)"

//  `truncated`, and where to go on when it is true
static void
s_encode_truncated (server_t *self, int truncated, int64_t next_offset)
{
    xxl_enc_kbool (self->enc, "truncated", truncated);
    if (truncated)
        xxl_enc_kint (self->enc, "nextOffset", next_offset);
}

static void
s_api_job_list (server_t *self, request_t *request)
{
    const char *key = xxl_msg_str (request->msg, NULL, "group", 0, XXL_MSG_MAX_NAME, NULL);
    int64_t limit = xxl_msg_int (request->msg, NULL, "limit", 0, 1, 10000, 1000);
    int64_t offset = xxl_msg_int (request->msg, NULL, "offset", 0, 0, INT64_MAX, 0);
    //  XXL-JOB's pageList filters: substrings, and the status (-1 any)
    const char *handler = xxl_msg_str (request->msg, NULL, "executorHandler", 0,
                                       XXL_MSG_MAX_NAME, "");
    const char *desc = xxl_msg_str (request->msg, NULL, "jobDesc", 0, XXL_MAX_TEXT, "");
    const char *author = xxl_msg_str (request->msg, NULL, "author", 0, XXL_MSG_MAX_NAME, "");
    int64_t status = xxl_msg_int (request->msg, NULL, "triggerStatus", 0, -1, 1, -1);
    if (xxl_msg_error (request->msg)) {
        s_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
        return;
    }
    int64_t group_id = 0;
    if (key) {
        xxl_group_t group;
        if (xxl_store_group_find (self->store, key, &group)) {
            char text [512];
            snprintf (text, sizeof text, "group '%s' not found", key);
            s_reply (self, request, XXL_NOT_FOUND, text);
            return;
        }
        group_id = group.id;
        xxl_group_free (&group);
    }
    s_reply_begin (self, request);
    xxl_enc_map_begin (self->enc);
    xxl_enc_key (self->enc, "jobs");
    int truncated;
    int rows = xxl_store_encode_max (self->store, self->enc, XXL_REPLY_MAX, &truncated,
        XXL_JOB_SELECT " WHERE (?1 = 0 OR job_group = ?1) AND " XXL_JOB_FILTER
        " ORDER BY id LIMIT ?2 OFFSET ?3", "iiisssi", group_id, limit, offset,
        handler, desc, author, status);
    xxl_enc_kint (self->enc, "total", xxl_store_scalar (self->store,
        "SELECT COUNT(*) FROM xxl_job_info WHERE (?1 = 0 OR job_group = ?1) AND "
        XXL_JOB_FILTER, "iiisssi", group_id, limit, offset, handler, desc, author, status));
    s_encode_truncated (self, truncated, offset + (rows > 0? rows: 0));
    xxl_enc_map_end (self->enc);
    s_reply_end (self, request);
}

static void
s_api_job_next (server_t *self, request_t *request)
{
    xxl_job_t job;
    if (s_job_from_request (self, request, &job))
        return;
    int64_t count = xxl_msg_int (request->msg, NULL, "count", 0, 1, 100, 5);
    if (xxl_msg_error (request->msg)) {
        s_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
        xxl_job_free (&job);
        return;
    }
    char why [512] = "";
    int64_t times [100];
    int64_t after = s_now ();
    int made = 0;
    for (; made < count; made++) {
        int64_t next = s_next_time (&job, after, why, sizeof why);
        if (next < 0)
            break;
        times [made] = after = next;
    }
    if (made == 0 && *why)
        s_reply (self, request, XXL_BAD_REQUEST, why);
    else {
        s_reply_begin (self, request);
        xxl_enc_map_begin (self->enc);
        xxl_enc_key (self->enc, "next");
        xxl_enc_array_begin (self->enc);
        for (int i = 0; i < made; i++)
            xxl_enc_int (self->enc, times [i]);
        xxl_enc_array_end (self->enc);
        xxl_enc_map_end (self->enc);
        s_reply_end (self, request);
    }
    xxl_job_free (&job);
}

static int
s_parse_shard (const char *text, int *index, int *total)
{
    char *end = NULL;
    long i = strtol (text, &end, 10);
    if (end == text || *end != '/')
        return -1;
    const char *rest = end + 1;
    long n = strtol (rest, &end, 10);
    if (end == rest || *end || n < 1 || n > 100000 || i < 0 || i >= n)
        return -1;
    *index = (int) i;
    *total = (int) n;
    return 0;
}

static void
s_api_job_trigger (server_t *self, request_t *request)
{
    int64_t id = xxl_msg_int (request->msg, NULL, "jobId", 1, 1, INT64_MAX, 0);
    if (xxl_msg_error (request->msg)) {
        s_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
        return;
    }
    int rc;
    snap_t *snap = s_snap_fresh (self, id, &rc);
    if (!snap) {
        char text [64];
        snprintf (text, sizeof text, "job %" PRId64 " not found", id);
        s_reply (self, request, rc < 0? XXL_FAILURE: XXL_NOT_FOUND,
                 rc < 0? xxl_store_error (self->store): text);
        return;
    }
    const xxl_job_t *job = &snap->job;
    trigger_args_t args = { .trigger_type = "MANUAL", .fail_retry_count = -1,
                            .shard_index = -1, .shard_total = -1 };
    args.param = xxl_msg_str (request->msg, NULL, "executorParam", 0, XXL_MAX_TEXT, NULL);
    args.address = xxl_msg_str (request->msg, NULL, "address", 0, XXL_MAX_TEXT, NULL);
    const char *shard = xxl_msg_str (request->msg, NULL, "shard", 0, 32, NULL);
    const char *type = xxl_msg_str (request->msg, NULL, "triggerType", 0, 16, "MANUAL");
    if (!xxl_msg_error (request->msg) && shard
    &&  s_parse_shard (shard, &args.shard_index, &args.shard_total))
        xxl_msg_fail (request->msg, "shard '%s' must be I/N with 0 <= I < N", shard);
    if (!xxl_msg_error (request->msg) && strneq (type, "MANUAL") && strneq (type, "API"))
        xxl_msg_fail (request->msg, "triggerType must be MANUAL or API");
    if (xxl_msg_error (request->msg)) {
        s_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
        s_snap_release (&snap);
        return;
    }
    args.trigger_type = type;
    int64_t ids [1024];
    int made = s_trigger (self, job, &args, ids, NULL, 1024);
    if (made < 0)
        s_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
    else {
        s_reply_begin (self, request);
        xxl_enc_map_begin (self->enc);
        xxl_enc_key (self->enc, "logIds");
        xxl_enc_array_begin (self->enc);
        for (int i = 0; i < made && i < 1024; i++)
            xxl_enc_int (self->enc, ids [i]);
        xxl_enc_array_end (self->enc);
        xxl_enc_map_end (self->enc);
        s_reply_end (self, request);
    }
    s_snap_release (&snap);
}

#define XXL_LOG_SELECT \
    "SELECT id, job_group AS jobGroup, job_id AS jobId, executor_address AS executorAddress," \
    " executor_handler AS executorHandler, executor_param AS executorParam," \
    " executor_sharding_param AS executorShardingParam," \
    " executor_fail_retry_count AS executorFailRetryCount, trigger_time AS triggerTime," \
    " trigger_code AS triggerCode, trigger_msg AS triggerMsg, trigger_type AS triggerType," \
    " schedule_time AS scheduleTime, handle_time AS handleTime, handle_code AS handleCode," \
    " handle_msg AS handleMsg, alarm_status AS alarmStatus FROM xxl_job_log"

//  LOG_LIST: a planned fire is not listed before its time, and until its
//  trigger is recorded its triggerTime is null (the row holds the time
//  it was planned; its own is written with the agent's answer)
#define XXL_LOG_LIST_SELECT \
    "SELECT id, job_group AS jobGroup, job_id AS jobId, executor_address AS executorAddress," \
    " executor_handler AS executorHandler, executor_param AS executorParam," \
    " executor_sharding_param AS executorShardingParam," \
    " executor_fail_retry_count AS executorFailRetryCount," \
    " CASE WHEN trigger_code = 0 AND schedule_time IS NOT NULL THEN NULL" \
    "  ELSE trigger_time END AS triggerTime," \
    " trigger_code AS triggerCode, trigger_msg AS triggerMsg, trigger_type AS triggerType," \
    " schedule_time AS scheduleTime, handle_time AS handleTime, handle_code AS handleCode," \
    " handle_msg AS handleMsg, alarm_status AS alarmStatus FROM xxl_job_log"
//  ?2 jobGroup, ?3 logStatus (XXL-JOB's 1 success, 2 failure, 3 running;
//  0 any), ?4..?5 trigger time, ?6 maxId, ?7 now
#define XXL_LOG_FILTER \
    " (?2 = 0 OR job_group = ?2)" \
    " AND (?3 = 0 OR (?3 = 1 AND handle_code = 200)" \
    "  OR (?3 = 2 AND (trigger_code NOT IN (0, 200) OR handle_code NOT IN (0, 200)))" \
    "  OR (?3 = 3 AND trigger_code IN (0, 200) AND handle_code = 0))" \
    " AND trigger_time >= ?4 AND trigger_time <= ?5 AND id <= ?6" \
    " AND NOT (trigger_code = 0 AND schedule_time IS NOT NULL AND schedule_time > ?7)" \
    " ORDER BY id DESC LIMIT ?8 OFFSET ?9"

static void
s_api_log_list (server_t *self, request_t *request)
{
    int64_t job_id = xxl_msg_int (request->msg, NULL, "jobId", 0, 1, INT64_MAX, 0);
    int64_t group_id = xxl_msg_int (request->msg, NULL, "jobGroup", 0, 1, INT64_MAX, 0);
    int64_t status = xxl_msg_int (request->msg, NULL, "logStatus", 0, 1, 3, 0);
    int64_t from = xxl_msg_int (request->msg, NULL, "triggerTimeFrom", 0, 0, INT64_MAX, 0);
    int64_t to = xxl_msg_int (request->msg, NULL, "triggerTimeTo", 0, 0, INT64_MAX, INT64_MAX);
    int64_t max_id = xxl_msg_int (request->msg, NULL, "maxId", 0, 1, INT64_MAX, INT64_MAX);
    int64_t limit = xxl_msg_int (request->msg, NULL, "limit", 0, 1, 1000, 100);
    int64_t offset = xxl_msg_int (request->msg, NULL, "offset", 0, 0, INT64_MAX, 0);
    if (xxl_msg_error (request->msg)) {
        s_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
        return;
    }
    s_reply_begin (self, request);
    xxl_enc_map_begin (self->enc);
    xxl_enc_key (self->enc, "logs");
    int truncated;
    int rows;
    //  (by job: its index; else newest first by id)
    if (job_id)
        rows = xxl_store_encode_max (self->store, self->enc, XXL_REPLY_MAX, &truncated,
            XXL_LOG_LIST_SELECT " WHERE job_id = ?1 AND" XXL_LOG_FILTER, "iiiiiiiii",
            job_id, group_id, status, from, to, max_id, s_now (), limit, offset);
    else
        rows = xxl_store_encode_max (self->store, self->enc, XXL_REPLY_MAX, &truncated,
            XXL_LOG_LIST_SELECT " WHERE ?1 = 0 AND" XXL_LOG_FILTER, "iiiiiiiii",
            job_id, group_id, status, from, to, max_id, s_now (), limit, offset);
    s_encode_truncated (self, truncated, offset + (rows > 0? rows: 0));
    xxl_enc_map_end (self->enc);
    s_reply_end (self, request);
}

static void
s_api_log_show (server_t *self, request_t *request)
{
    s_show_row (self, request, "logId", XXL_LOG_SELECT " WHERE id = ?", "log");
}

//  LOG_CAT and LOG_KILL: forwarded to the agent that ran the log
static void
s_api_log_forward (server_t *self, request_t *request, int kill)
{
    int64_t id = xxl_msg_int (request->msg, NULL, "logId", 1, 1, INT64_MAX, 0);
    int64_t from = xxl_msg_int (request->msg, NULL, "fromLineNum", 0, 1, INT32_MAX, 1);
    if (xxl_msg_error (request->msg)) {
        s_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
        return;
    }
    xxl_log_t log;
    int rc = xxl_store_log_load (self->store, id, &log);
    if (rc) {
        char text [64];
        snprintf (text, sizeof text, "log %" PRId64 " not found", id);
        s_reply (self, request, rc < 0? XXL_FAILURE: XXL_NOT_FOUND, text);
        return;
    }
    char why [512];
    if (!*log.executor_address && kill) {
        s_reply (self, request, XXL_CONFLICT, log.trigger_code == 0
                 ? "this run is not running: it has not been sent to an agent yet"
                 : "this run is not running: its trigger failed (see its triggerMsg)");
        xxl_log_free (&log);
        return;
    }
    if (!*log.executor_address) {
        s_reply (self, request, XXL_NOT_FOUND,
                 "this run was never sent to an agent, which keeps the log (see its"
                 " triggerMsg)");
        xxl_log_free (&log);
        return;
    }
    //  trigger_code 0 with an address: the RUN went (or goes in this turn,
    //  ahead of the KILL on the same connection), its answer not written yet
    if (kill && (log.handle_code != 0 || (log.trigger_code != XXL_OK && log.trigger_code != 0))) {
        s_reply (self, request, XXL_CONFLICT, "this run is not running");
        xxl_log_free (&log);
        return;
    }
    pending_t *pending = s_agent_request (self, log.executor_address, kill? "KILL": "LOG",
                                          kill? PENDING_KILL: PENDING_LOG,
                                          self->config.request_timeout_ms, why, sizeof why);
    if (!pending) {
        s_reply (self, request, XXL_UNAVAILABLE, why);
        xxl_log_free (&log);
        return;
    }
    pending->log_id = id;
    pending->client = zframe_dup (request->rid);
    pending->client_id = xxl_msg_id (request->msg);
    if (kill)
        xxl_enc_kint (self->enc, "jobId", log.job_id);
    else {
        xxl_enc_kint (self->enc, "logId", id);
        xxl_enc_kint (self->enc, "logDateTime", log.trigger_time);
        xxl_enc_kint (self->enc, "fromLineNum", from);
    }
    s_agent_send (self, pending);
    xxl_log_free (&log);
}

static void
s_api_agent_list (server_t *self, request_t *request)
{
    s_reply_begin (self, request);
    xxl_enc_map_begin (self->enc);
    xxl_enc_key (self->enc, "agents");
    xxl_enc_array_begin (self->enc);
    size_t cursor = 0;
    xxl_registry_entry_t entry;
    while (xxl_registry_each (self->registry, &cursor, &entry) == 0) {
        xxl_enc_map_begin (self->enc);
        xxl_enc_kstr (self->enc, "app", entry.app);
        xxl_enc_kstr (self->enc, "address", entry.address);
        xxl_enc_kint (self->enc, "updateTime", entry.update_time);
        xxl_enc_kstr (self->enc, "handlers", entry.handlers);
        xxl_enc_kbool (self->enc, "connected", entry.connected);
        xxl_enc_map_end (self->enc);
    }
    xxl_enc_array_end (self->enc);
    xxl_enc_map_end (self->enc);
    s_reply_end (self, request);
}

//  GLUE_HISTORY: a page of a job's glue versions, newest first, without
//  their source (GLUE_SHOW has it)
static void
s_api_glue_history (server_t *self, request_t *request)
{
    int64_t limit = xxl_msg_int (request->msg, NULL, "limit", 0, 1, 100, 20);
    int64_t offset = xxl_msg_int (request->msg, NULL, "offset", 0, 0, INT64_MAX, 0);
    xxl_job_t job;
    if (s_job_from_request (self, request, &job))
        return;
    if (xxl_msg_error (request->msg)) {
        s_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
        xxl_job_free (&job);
        return;
    }
    s_reply_begin (self, request);
    xxl_enc_map_begin (self->enc);
    xxl_enc_key (self->enc, "glues");
    int truncated;
    int rows = xxl_store_encode_max (self->store, self->enc, XXL_REPLY_MAX, &truncated,
        "SELECT version, job_id AS jobId, glue_type AS glueType, glue_remark AS glueRemark,"
        " add_time AS addTime, update_time AS updateTime,"
        " length (CAST (glue_source AS BLOB)) AS size"
        " FROM xxl_job_logglue WHERE job_id = ? ORDER BY version DESC LIMIT ? OFFSET ?",
        "iii", job.id, limit, offset);
    xxl_enc_kint (self->enc, "total", xxl_store_scalar (self->store,
        "SELECT COUNT(*) FROM xxl_job_logglue WHERE job_id = ?", "i", job.id));
    s_encode_truncated (self, truncated, offset + (rows > 0? rows: 0));
    xxl_enc_map_end (self->enc);
    s_reply_end (self, request);
    xxl_job_free (&job);
}

//  The job of field jobId and field version (0 when absent: the newest);
//  replies itself (400, 404) and returns -1 when either is missing
static int
s_glue_version (server_t *self, request_t *request, xxl_job_t *job, int required,
                int64_t *version)
{
    *version = xxl_msg_int (request->msg, NULL, "version", required, 1, INT64_MAX, 0);
    if (s_job_from_request (self, request, job))
        return -1;
    if (xxl_msg_error (request->msg)) {
        s_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
        xxl_job_free (job);
        return -1;
    }
    if (*version == 0)
        *version = xxl_store_scalar (self->store,
            "SELECT COALESCE(MAX(version), 0) FROM xxl_job_logglue WHERE job_id = ?", "i", job->id);
    char text [160];
    if (*version <= 0) {
        snprintf (text, sizeof text, "job %" PRId64 " has no glue versions", job->id);
        s_reply (self, request, XXL_NOT_FOUND, text);
        xxl_job_free (job);
        return -1;
    }
    if (xxl_store_scalar (self->store, "SELECT COUNT(*) FROM xxl_job_logglue"
                          " WHERE job_id = ? AND version = ?", "ii", job->id, *version) != 1) {
        snprintf (text, sizeof text, "job %" PRId64 " has no glue version %" PRId64
                  " (the last %d are kept)", job->id, *version, XXL_GLUE_KEEP);
        s_reply (self, request, XXL_NOT_FOUND, text);
        xxl_job_free (job);
        return -1;
    }
    return 0;
}

static void
s_api_glue_show (server_t *self, request_t *request)
{
    xxl_job_t job;
    int64_t version;
    if (s_glue_version (self, request, &job, 0, &version))
        return;
    s_reply_begin (self, request);
    xxl_store_encode (self->store, self->enc, 0,
        "SELECT version, job_id AS jobId, glue_type AS glueType, glue_remark AS glueRemark,"
        " add_time AS addTime, update_time AS updateTime,"
        " length (CAST (glue_source AS BLOB)) AS size, glue_source AS glueSource"
        " FROM xxl_job_logglue WHERE job_id = ? AND version = ?", "ii", job.id, version);
    s_reply_end (self, request);
    xxl_job_free (&job);
}

//  Makes a kept version the job's glue again, as a new version
static void
s_api_glue_rollback (server_t *self, request_t *request)
{
    xxl_job_t job;
    int64_t version;
    if (s_glue_version (self, request, &job, 1, &version))
        return;
    char *type = xxl_store_text (self->store, "SELECT glue_type FROM xxl_job_logglue"
                                 " WHERE job_id = ? AND version = ?", "ii", job.id, version);
    char *source = xxl_store_text (self->store, "SELECT glue_source FROM xxl_job_logglue"
                                   " WHERE job_id = ? AND version = ?", "ii", job.id, version);
    if (!type || !source) {
        s_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
        free (type);
        free (source);
        xxl_job_free (&job);
        return;
    }
    free (job.glue_type);
    job.glue_type = type;
    free (job.glue_source);
    job.glue_source = source;
    free (job.glue_remark);
    job.glue_remark = zsys_sprintf ("rollback to version %" PRId64, version);
    job.update_time = job.glue_updatetime = s_now ();
    s_plan_forget (self, job.id);
    self->next_scan = 0;
    int made = -1;
    if (xxl_store_job_save (self->store, &job) == 0)
        made = xxl_store_glue_add (self->store, job.id, job.glue_type, job.glue_source,
                                   job.glue_remark, job.update_time);
    if (made < 0)
        s_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
    else {
        s_reply_begin (self, request);
        xxl_enc_map_begin (self->enc);
        xxl_enc_kint (self->enc, "id", job.id);
        xxl_enc_kint (self->enc, "version", made);
        xxl_enc_map_end (self->enc);
        s_reply_end (self, request);
    }
    xxl_job_free (&job);
}

//  JOB_COPY: a stopped copy of a job, its glue source included
static void
s_api_job_copy (server_t *self, request_t *request)
{
    const char *desc = xxl_msg_str (request->msg, NULL, "jobDesc", 0, XXL_MAX_TEXT, NULL);
    xxl_job_t job;
    if (s_job_from_request (self, request, &job))
        return;
    if (xxl_msg_error (request->msg)) {
        s_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
        xxl_job_free (&job);
        return;
    }
    int64_t source_id = job.id;
    if (desc) {
        free (job.job_desc);
        job.job_desc = strdup (desc);
    }
    job.id = 0;
    job.trigger_status = 0;
    job.trigger_last_time = job.trigger_next_time = 0;
    job.add_time = job.update_time = job.glue_updatetime = s_now ();
    self->children_until = 0;
    int64_t id = xxl_store_job_add (self->store, &job);
    char remark [64];
    snprintf (remark, sizeof remark, "copy of job %" PRId64, source_id);
    if (id < 0
    ||  (strneq (job.glue_type, "BEAN")
         && xxl_store_glue_add (self->store, id, job.glue_type, job.glue_source,
                                remark, job.add_time) < 0))
        s_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
    else
        s_reply_id (self, request, id);
    xxl_job_free (&job);
}

static void
s_api_report (server_t *self, request_t *request)
{
    s_report_refresh (self);
    s_reply_begin (self, request);
    xxl_enc_map_begin (self->enc);
    xxl_enc_kint (self->enc, "jobCount", xxl_store_scalar (self->store,
        "SELECT COUNT(*) FROM xxl_job_info", NULL));
    xxl_enc_kint (self->enc, "jobRunningCount", xxl_store_scalar (self->store,
        "SELECT COUNT(*) FROM xxl_job_info WHERE trigger_status = 1", NULL));
    xxl_enc_kint (self->enc, "agentCount", (int64_t) xxl_registry_size (self->registry));
    xxl_enc_kint (self->enc, "groupCount", xxl_store_scalar (self->store,
        "SELECT COUNT(*) FROM xxl_job_group", NULL));
    int64_t runs = xxl_store_scalar (self->store,
        "SELECT COALESCE(SUM(running_count + suc_count + fail_count), 0) FROM xxl_job_log_report", NULL);
    int64_t suc = xxl_store_scalar (self->store,
        "SELECT COALESCE(SUM(suc_count), 0) FROM xxl_job_log_report", NULL);
    int64_t fail = xxl_store_scalar (self->store,
        "SELECT COALESCE(SUM(fail_count), 0) FROM xxl_job_log_report", NULL);
    xxl_enc_kint (self->enc, "runCount", runs);
    xxl_enc_kint (self->enc, "sucCount", suc);
    xxl_enc_kint (self->enc, "failCount", fail);
    xxl_enc_key (self->enc, "successRate");
    xxl_enc_double (self->enc, suc + fail > 0? (double) suc / (double) (suc + fail): 1.0);
    xxl_enc_key (self->enc, "days");
    xxl_store_encode (self->store, self->enc, 1,
        "SELECT trigger_day AS triggerDay, running_count AS runningCount, suc_count AS sucCount,"
        " fail_count AS failCount, update_time AS updateTime FROM xxl_job_log_report"
        " ORDER BY trigger_day DESC LIMIT 30", NULL);
    xxl_enc_map_end (self->enc);
    s_reply_end (self, request);
}

//  XXL-JOB's manual clear: by age, keep the last N, or all; finished rows
//  only (a row waiting for its trigger or result is never removed)
static void
s_api_log_clear (server_t *self, request_t *request)
{
    int64_t job_id = xxl_msg_int (request->msg, NULL, "jobId", 0, 1, INT64_MAX, 0);
    int64_t days = xxl_msg_int (request->msg, NULL, "beforeDays", 0, 0, 36500, -1);
    int64_t keep = xxl_msg_int (request->msg, NULL, "keepLast", 0, 0, INT32_MAX, -1);
    int all = xxl_msg_bool (request->msg, NULL, "all", 0, 0);
    if (!xxl_msg_error (request->msg) && (days >= 0) + (keep >= 0) + (all? 1: 0) != 1)
        xxl_msg_fail (request->msg, "give exactly one of beforeDays, keepLast, all");
    if (xxl_msg_error (request->msg)) {
        s_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
        return;
    }
    int64_t deleted = 0, batch;
    do {
        if (days >= 0)
            batch = s_log_delete (self, "(?2 = 0 OR job_id = ?2) AND trigger_time < ?1", "ii",
                                  s_now () - days * 86400000, job_id, 10000);
        else
        if (keep >= 0) {
            int64_t floor = keep == 0? INT64_MAX: xxl_store_scalar (self->store,
                "SELECT id FROM xxl_job_log WHERE (?1 = 0 OR job_id = ?1)"
                " ORDER BY id DESC LIMIT 1 OFFSET ?2", "ii", job_id, keep - 1);
            batch = floor > 0? s_log_delete (self, "(?2 = 0 OR job_id = ?2) AND id < ?1", "ii",
                                             floor, job_id, 10000): 0;
        }
        else
            batch = s_log_delete (self, "(?1 = 0 OR job_id = ?1)", "i", job_id, 0, 10000);
        deleted += batch;
    } while (batch == 10000);
    s_reply_begin (self, request);
    xxl_enc_map_begin (self->enc);
    xxl_enc_kint (self->enc, "deleted", deleted);
    xxl_enc_map_end (self->enc);
    s_reply_end (self, request);
}

typedef struct {
    const char *type;
    void (*fn) (server_t *self, request_t *request);
    bool read;                          //  writes nothing: its reply stands
                                        //  whether the turn commits or not
} api_entry_t;

static void s_api_job_start (server_t *self, request_t *r) { s_api_job_start_stop (self, r, 1); }
static void s_api_job_stop (server_t *self, request_t *r) { s_api_job_start_stop (self, r, 0); }
static void s_api_log_cat (server_t *self, request_t *r) { s_api_log_forward (self, r, 0); }
static void s_api_log_kill (server_t *self, request_t *r) { s_api_log_forward (self, r, 1); }

static const api_entry_t s_api_table [] = {
    { "PING", s_api_ping, true },
    { "GROUP_ADD", s_api_group_add, false },
    { "GROUP_LIST", s_api_group_list, true },
    { "GROUP_SHOW", s_api_group_show, true },
    { "GROUP_UPDATE", s_api_group_update, false },
    { "GROUP_RM", s_api_group_rm, false },
    { "JOB_ADD", s_api_job_add, false },
    { "JOB_LIST", s_api_job_list, true },
    { "JOB_SHOW", s_api_job_show, true },
    { "JOB_UPDATE", s_api_job_update, false },
    { "JOB_RM", s_api_job_rm, false },
    { "JOB_COPY", s_api_job_copy, false },
    { "JOB_START", s_api_job_start, false },
    { "JOB_STOP", s_api_job_stop, false },
    { "JOB_TRIGGER", s_api_job_trigger, false },
    { "JOB_NEXT", s_api_job_next, true },
    { "LOG_LIST", s_api_log_list, true },
    { "LOG_SHOW", s_api_log_show, true },
    { "LOG_CAT", s_api_log_cat, false },
    { "LOG_KILL", s_api_log_kill, false },
    { "AGENT_LIST", s_api_agent_list, true },
    { "GLUE_HISTORY", s_api_glue_history, true },
    { "GLUE_SHOW", s_api_glue_show, true },
    { "GLUE_ROLLBACK", s_api_glue_rollback, false },
    { "REPORT", s_api_report, true },
    { "LOG_CLEAR", s_api_log_clear, false },
    { NULL, NULL, false }
};

//  Checks the access token of a message; 0 when allowed
static int
s_authorized (server_t *self, xxl_msg_t *msg)
{
    const char *token = self->config.access_token;
    if (!token || !*token)
        return 0;
    const char *given = xxl_msg_str (msg, NULL, "accessToken", 0, 1024, NULL);
    return given && streq (given, token)? 0: -1;
}

//  Answers a frame that could not be decoded, when it had a readable id
static void
s_reply_bad_frame (server_t *self, zlistx_t *outbox, zframe_t *rid, uint64_t id,
                   const char *reason)
{
    char text [300];
    s_warn_limited (&self->log_bad_frame, "server: bad %s message (%s): %s",
                    outbox == self->agents_out? "agent": "api",
                    id? "answered 400": "no readable id, not answered",
                    s_printable (reason, text, sizeof text));
    if (id == 0)
        return;                         //  no readable id: nothing to answer to
    xxl_enc_reply (self->enc, id, XXL_BAD_REQUEST, reason);
    if (outbox == self->agents_out)
        s_queue_agent (self, zframe_data (rid), zframe_size (rid), 0);
    else
        s_queue (self, outbox, zframe_data (rid), zframe_size (rid));
}

//  Takes a ROUTER message apart into its routing id and one decoded
//  frame.  What cannot be decoded, or lacks the access token, is answered
//  (when it had a readable id) or dropped with a log line.  Returns the
//  message (the caller destroys it and *rid_p), or NULL.
//
//  On the api socket *rid_p is a return address: the routing id followed
//  by one byte, XXL_PEER_REQ when the client is a REQ socket (its message
//  had an empty delimiter frame before the body, and so must its reply;
//  s_api_send puts it back), else XXL_PEER_DEALER.  Agents must be DEALERs.
static xxl_msg_t *
s_receive (server_t *self, zmsg_t *zmsg, zlistx_t *outbox, const char *what,
           zframe_t **rid_p)
{
    zframe_t *rid = zmsg_pop (zmsg);
    zframe_t *body = zmsg_pop (zmsg);
    xxl_msg_t *msg = NULL;
    bool api = outbox != self->agents_out;
    byte peer = XXL_PEER_DEALER;
    if (api && body && zframe_size (body) == 0 && zmsg_size (zmsg) == 1) {
        zframe_destroy (&body);         //  REQ's delimiter
        body = zmsg_pop (zmsg);
        peer = XXL_PEER_REQ;
    }
    if (rid && api) {
        zframe_t *address = zframe_new (NULL, zframe_size (rid) + 1);
        memcpy (zframe_data (address), zframe_data (rid), zframe_size (rid));
        zframe_data (address) [zframe_size (rid)] = peer;
        zframe_destroy (&rid);
        rid = address;
    }
    if (!rid || !body || zmsg_size (zmsg) > 0)
        //  Not one frame after the routing id: no reply is possible
        s_warn_limited (&self->log_frames, "server: %s message with %s frames dropped"
                        " (a message is one frame; a REQ client's, an empty one"
                        " and one)", what, body? "too many": "too few");
    else {
        char reason [256];
        uint64_t id = 0;
        msg = xxl_msg_decode (zframe_data (body), zframe_size (body), &id,
                              reason, sizeof reason);
        if (!msg)
            s_reply_bad_frame (self, outbox, rid, id, reason);
        else
        //  An agent's REPLY carries no token: it counts only from the
        //  connection its request went to (s_agent_answer), and that
        //  connection's REGISTER was checked
        if (!(outbox == self->agents_out && streq (xxl_msg_type (msg), "REPLY"))
        &&  s_authorized (self, msg)) {
            char type [80];
            s_warn_limited (&self->log_token, "server: %s %s message with a missing or"
                            " wrong access token refused (401)", what,
                            s_printable (xxl_msg_type (msg), type, sizeof type));
            xxl_enc_reply (self->enc, id, XXL_UNAUTHORIZED, "the access token is wrong");
            if (outbox == self->agents_out)
                s_queue_agent (self, zframe_data (rid), zframe_size (rid), 0);
            else
                s_queue (self, outbox, zframe_data (rid), zframe_size (rid));
            xxl_msg_destroy (&msg);
        }
    }
    zframe_destroy (&body);
    if (msg)
        *rid_p = rid;
    else
        zframe_destroy (&rid);
    return msg;
}

static void
s_handle_api (server_t *self, zmsg_t *zmsg)
{
    zframe_t *rid;
    self->api_read = true;              //  (a refusal stands whatever the commit)
    xxl_msg_t *msg = s_receive (self, zmsg, self->api_out, "api", &rid);
    self->api_read = false;
    if (!msg)
        return;
    request_t request = { rid, msg };
    const api_entry_t *entry = s_api_table;
    while (entry->type && strneq (entry->type, xxl_msg_type (msg)))
        entry++;
    self->api_read = entry->read || !entry->fn;
    if (entry->fn)
        entry->fn (self, &request);
    else {
        char text [128];
        snprintf (text, sizeof text, "unknown message type '%s'", xxl_msg_type (msg));
        s_reply (self, &request, XXL_BAD_REQUEST, text);
    }
    self->api_read = false;
    xxl_msg_destroy (&msg);
    zframe_destroy (&rid);
}

//  --------------------------------------------------------------------
//  Agent messages

static void
s_agent_reply (server_t *self, zframe_t *rid, uint64_t id, int code, const char *msg)
{
    xxl_enc_reply (self->enc, id, code, msg);
    s_queue_agent (self, zframe_data (rid), zframe_size (rid), 0);
}

//  An agent alive at the last stop registered again: the warm-up ends
//  when the last one is back
static void
s_awaited_back (server_t *self, const char *address)
{
    for (size_t i = 0; i < self->awaited_count; i++)
        if (self->awaited [i] && streq (self->awaited [i], address)) {
            zstr_free (&self->awaited [i]);
            if (--self->awaited_left == 0) {
                zsys_info ("registry: the %zu agent(s) of the last run are back;"
                           " warm-up over", self->awaited_count);
                self->warm_until = 0;
            }
            break;
        }
}

static void
s_agent_register (server_t *self, zframe_t *rid, xxl_msg_t *msg, int remove)
{
    const char *group = xxl_msg_str (msg, NULL, "registryGroup", 0, 32, "EXECUTOR");
    const char *app = xxl_msg_str (msg, NULL, "registryKey", 1, XXL_MSG_MAX_NAME, NULL);
    const char *address = xxl_msg_str (msg, NULL, "registryValue", 1, XXL_MSG_MAX_NAME, NULL);
    const char *handlers = xxl_msg_str (msg, NULL, "handlers", 0, XXL_MAX_TEXT, NULL);
    int64_t run_batch = xxl_msg_int (msg, NULL, "runBatch", 0, 0, INT32_MAX, 0);
    if (!xxl_msg_error (msg) && strneq (group, "EXECUTOR"))
        xxl_msg_fail (msg, "registryGroup must be EXECUTOR");
    if (!xxl_msg_error (msg) && (!*app || !*address))
        xxl_msg_fail (msg, "registryKey and registryValue must not be empty");
    if (!xxl_msg_error (msg) && (s_has_control (app) || s_has_control (address)))
        xxl_msg_fail (msg, "registryKey and registryValue must not hold control characters");
    if (xxl_msg_error (msg)) {
        s_agent_reply (self, rid, xxl_msg_id (msg), XXL_BAD_REQUEST, xxl_msg_error (msg));
        return;
    }
    int64_t now = s_now ();
    char name [300], where [300];
    if (remove) {
        if (xxl_registry_remove (self->registry, app, address) == 0)
            zsys_info ("registry: %s/%s unregistered", s_printable (app, name, sizeof name),
                       s_printable (address, where, sizeof where));
        xxl_store_registry_remove (self->store, app, address);
        zhashx_insert (self->apps_changed, app, (void *) 1);
    }
    else {
        int changed = xxl_registry_beat (self->registry, app, address, zframe_data (rid),
                                         zframe_size (rid), handlers, now);
        if (self->awaited_left && zclock_mono () < self->warm_until)
            s_awaited_back (self, address);
        xxl_registry_set_run_batch (self->registry, address,
                                    (int) (run_batch < XXL_RUN_BATCH_MAX? run_batch
                                                                        : XXL_RUN_BATCH_MAX));
        xxl_store_registry_beat (self->store, app, address, now);
        if (changed > 0) {
            zsys_info ("registry: %s/%s registered", s_printable (app, name, sizeof name),
                       s_printable (address, where, sizeof where));
            zhashx_insert (self->apps_changed, app, (void *) 1);
        }
    }
    //  The scheduler's clock, from which agents judge a RUN's expireTime
    xxl_enc_reply (self->enc, xxl_msg_id (msg), XXL_OK, NULL);
    xxl_enc_key (self->enc, "content");
    xxl_enc_map_begin (self->enc);
    xxl_enc_kint (self->enc, "now", s_now ());
    xxl_enc_map_end (self->enc);
    //  (sent even when the turn's commit fails: the registry is in memory,
    //  and an agent that hears nothing takes its link for down)
    s_queue_agent_to (self, zframe_data (rid), zframe_size (rid), 0, !remove);
}

static void
s_agent_callback (server_t *self, zframe_t *rid, xxl_msg_t *msg)
{
    size_t count;
    const msgpack_object *items = xxl_msg_array (msg, NULL, "items", 1, 10000, &count);
    if (xxl_msg_error (msg)) {
        s_agent_reply (self, rid, xxl_msg_id (msg), XXL_BAD_REQUEST, xxl_msg_error (msg));
        return;
    }
    int64_t now = s_now ();
    for (size_t i = 0; i < count; i++) {
        if (i % 64 == 63)
            s_fire_check (self);
        const msgpack_object *item = &items [i];
        if (item->type != MSGPACK_OBJECT_MAP) {
            xxl_msg_fail (msg, "items[%zu] is not a map", i);
            break;
        }
        int64_t log_id = xxl_msg_int (msg, item, "logId", 1, 1, INT64_MAX, 0);
        int64_t code = xxl_msg_int (msg, item, "handleCode", 1, 1, 999, 0);
        const char *text = xxl_msg_str (msg, item, "handleMsg", 0, XXL_MSG_MAX_STR, NULL);
        if (xxl_msg_error (msg))
            break;
        char *capped = NULL;
        if (text && strlen (text) > XXL_HANDLE_MSG_CAP) {
            capped = strndup (text, XXL_HANDLE_MSG_CAP);
            text = capped;
        }
        //  A repeated callback finds the row finished: a no-op
        int64_t stamp = s_accepted_forget (self, log_id);
        int done = stamp? xxl_store_log_handle_done_at (self->store, log_id, now, (int) code,
                                                        text, stamp)
                        : xxl_store_log_handle_done (self->store, log_id, now, (int) code, text);
        free (capped);
        if (done < 0) {
            s_agent_reply (self, rid, xxl_msg_id (msg), XXL_FAILURE, xxl_store_error (self->store));
            return;
        }
        if (done == 0) {
            s_fix_delay_release (self, log_id, now);
            if (code == XXL_CODE_SUCCESS) {
                char *children = s_trigger_children (self, log_id);
                if (children)
                    xxl_store_exec (self->store,
                        "UPDATE xxl_job_log SET handle_msg = COALESCE(handle_msg, '') || ?"
                        " WHERE id = ?", "si", children, log_id);
                zstr_free (&children);
            }
        }
    }
    if (xxl_msg_error (msg))
        s_agent_reply (self, rid, xxl_msg_id (msg), XXL_BAD_REQUEST, xxl_msg_error (msg));
    else
        s_agent_reply (self, rid, xxl_msg_id (msg), XXL_OK, NULL);
}

//  Answers a pool worker's probe (code 0: no answer)
static void
s_probe_answer (server_t *self, pending_t *pending, int code, const char *msg)
{
    xxl_enc_reply (self->enc, pending->client_id, code, msg);
    size_t size;
    const void *data = xxl_enc_finish (self->enc, &size);
    zmsg_t *zmsg = zmsg_new ();
    zmsg_addmem (zmsg, zframe_data (pending->client), zframe_size (pending->client));
    zmsg_addmem (zmsg, data, size);
    zmsg_send (&zmsg, self->probes);
}

//  A probe request from a pool worker: BEAT or IDLE_BEAT to an agent
static void
s_handle_probe (server_t *self, zmsg_t *zmsg)
{
    zframe_t *rid = zmsg_pop (zmsg);
    zframe_t *body = zmsg_pop (zmsg);
    char reason [256];
    xxl_msg_t *msg = body? xxl_msg_decode (zframe_data (body), zframe_size (body), NULL,
                                           reason, sizeof reason): NULL;
    if (rid && msg) {
        const char *address = xxl_msg_str (msg, NULL, "address", 1, XXL_MSG_MAX_NAME, "");
        int64_t kind = xxl_msg_int (msg, NULL, "kind", 1, 1, 2, 1);
        int64_t job_id = xxl_msg_int (msg, NULL, "jobId", 0, 0, INT64_MAX, 0);
        int64_t timeout = xxl_msg_int (msg, NULL, "timeoutMs", 0, 1, 60000, 1000);
        char why [512] = "";
        pending_t *pending = xxl_msg_error (msg)? NULL:
            s_agent_request (self, address, kind == XXL_PROBE_IDLE_BEAT? "IDLE_BEAT": "BEAT",
                             PENDING_PROBE, (int) timeout, why, sizeof why);
        if (pending) {
            pending->client = zframe_dup (rid);
            pending->client_id = xxl_msg_id (msg);
            if (kind == XXL_PROBE_IDLE_BEAT)
                xxl_enc_kint (self->enc, "jobId", job_id);
            s_agent_send (self, pending);
        }
        else {
            pending_t answer = { .client = rid, .client_id = xxl_msg_id (msg) };
            s_probe_answer (self, &answer, 0, *why? why: xxl_msg_error (msg));
        }
    }
    xxl_msg_destroy (&msg);
    zframe_destroy (&rid);
    zframe_destroy (&body);
}

//  A routing decision from a pool worker: send the RUN, count slowness
static void
s_handle_routed (server_t *self, zmsg_t *zmsg)
{
    zframe_t *body = zmsg_pop (zmsg);
    char reason [256];
    xxl_msg_t *msg = body? xxl_msg_decode (zframe_data (body), zframe_size (body), NULL,
                                           reason, sizeof reason): NULL;
    if (msg) {
        int64_t log_id = xxl_msg_int (msg, NULL, "logId", 1, 1, INT64_MAX, 0);
        int64_t job_id = xxl_msg_int (msg, NULL, "jobId", 1, 1, INT64_MAX, 0);
        const char *address = xxl_msg_str (msg, NULL, "address", 0, XXL_MSG_MAX_NAME, NULL);
        const char *text = xxl_msg_str (msg, NULL, "msg", 0, XXL_MSG_MAX_STR, "");
        int64_t elapsed = xxl_msg_int (msg, NULL, "elapsedMs", 0, 0, INT64_MAX, 0);
        if (!xxl_msg_error (msg)) {
            char *note = address? strdup (text)
                       : zsys_sprintf ("%strigger failed: no address answered\n", text);
            s_dispatch_row (self, log_id, address? address: "", note);
            zstr_free (&note);
            //  XXL-JOB's rule: over 500 ms more than 10 times this minute → slow pool
            if (elapsed > self->config.slow_ms) {
                int64_t *count = (int64_t *) zhashx_lookup (self->slow_counts, &job_id);
                if (!count) {
                    count = (int64_t *) zmalloc (2 * sizeof (int64_t));
                    count [1] = job_id;
                    zhashx_insert (self->slow_counts, &count [1], count);
                }
                if (++*count == self->config.slow_count + 1)
                    zsys_info ("server: job %" PRId64 " is slow to trigger; it moves to the slow pool",
                               job_id);
            }
        }
    }
    xxl_msg_destroy (&msg);
    zframe_destroy (&body);
}

//  Logs a reply that came from another connection than its request went
//  to, at most once a minute (a peer may send them in a flood)
static void
s_foreign_reply (server_t *self, uint64_t id)
{
    int64_t now = zclock_mono ();
    self->foreign_replies++;
    if (now - self->foreign_logged < 60000)
        return;
    zsys_warning ("server: %" PRIu64 " agent replies ignored: not from the connection their"
                  " request went to (the latest had id %" PRIu64 ")",
                  self->foreign_replies, id);
    self->foreign_replies = 0;
    self->foreign_logged = now;
}

//  A reply from an agent to one of our requests.  It counts only when it
//  comes from the connection the request was sent to: a batch's, or the
//  one its address is registered on.
static void
s_agent_answer (server_t *self, zframe_t *rid, xxl_msg_t *msg)
{
    uint64_t id = xxl_msg_id (msg);
    pending_t *pending = (pending_t *) zhashx_lookup (self->pending, &id);
    if (!pending) {
        run_batch_t *batch = (run_batch_t *) zhashx_lookup (self->batches, &id);
        if (!batch)
            return;                     //  (late: its deadline already passed)
        size_t route_size = 0;
        const void *route = xxl_registry_route (self->registry, batch->address, &route_size);
        if ((batch->rid_size == zframe_size (rid)
             && memcmp (batch->rid, zframe_data (rid), batch->rid_size) == 0)
        ||  (route && route_size == zframe_size (rid)
             && memcmp (route, zframe_data (rid), route_size) == 0))
            s_batch_answer (self, batch, msg);
        else
            s_foreign_reply (self, id);
        return;
    }
    size_t route_size = 0;
    const void *route = pending->address
                      ? xxl_registry_route (self->registry, pending->address, &route_size): NULL;
    bool sent_there = pending->rid && pending->rid_size == zframe_size (rid)
                   && memcmp (pending->rid, zframe_data (rid), pending->rid_size) == 0;
    bool routed_there = route && route_size == zframe_size (rid)
                     && memcmp (route, zframe_data (rid), route_size) == 0;
    if (!sent_there && !routed_there) {
        s_foreign_reply (self, id);
        return;
    }
    const msgpack_object *code_obj = xxl_msg_get (xxl_msg_root (msg), "code");
    int code = code_obj && code_obj->type == MSGPACK_OBJECT_POSITIVE_INTEGER
               && code_obj->via.u64 < 1000? (int) code_obj->via.u64: XXL_FAILURE;
    const char *text = xxl_msg_str (msg, NULL, "msg", 0, XXL_MSG_MAX_STR, NULL);
    switch (pending->kind) {
        case PENDING_RUN:
            s_run_done (self, pending, code, text);
            break;
        case PENDING_LOG:
        case PENDING_KILL: {
            xxl_enc_reply (self->enc, pending->client_id, code, text);
            const msgpack_object *content = xxl_msg_get (xxl_msg_root (msg), "content");
            if (content) {
                xxl_enc_key (self->enc, "content");
                xxl_enc_object (self->enc, content);
            }
            self->api_read = pending->kind == PENDING_LOG;    //  (a read: it stands)
            s_queue (self, self->api_out, zframe_data (pending->client), zframe_size (pending->client));
            self->api_read = false;
            if (pending->kind == PENDING_KILL && code == XXL_OK)
                xxl_store_log_handle_done (self->store, pending->log_id, s_now (), XXL_CODE_FAIL,
                                           "killed by a user (log kill)");
            break;
        }
        case PENDING_PROBE:
            s_probe_answer (self, pending, code, text);
            break;
    }
    zhashx_delete (self->pending, &id);
}

static void
s_handle_agent (server_t *self, zmsg_t *zmsg)
{
    zframe_t *rid;
    xxl_msg_t *msg = s_receive (self, zmsg, self->agents_out, "agent", &rid);
    if (!msg)
        return;
    uint64_t id = xxl_msg_id (msg);
    const char *type = xxl_msg_type (msg);
    if (streq (type, "REPLY"))
        s_agent_answer (self, rid, msg);
    else
    if (streq (type, "REGISTER"))
        s_agent_register (self, rid, msg, 0);
    else
    if (streq (type, "UNREGISTER"))
        s_agent_register (self, rid, msg, 1);
    else
    if (streq (type, "CALLBACK"))
        s_agent_callback (self, rid, msg);
    else {
        char text [128];
        snprintf (text, sizeof text, "unknown message type '%s'", type);
        s_agent_reply (self, rid, id, XXL_BAD_REQUEST, text);
    }
    xxl_msg_destroy (&msg);
    zframe_destroy (&rid);
}

//  --------------------------------------------------------------------
//  Timers

//  After the loop itself stood still (the process frozen, a commit or a
//  disk that stalled) the agents' answers may be on their way in: the time
//  it stood still is not counted against requests in flight.  timeout:
//  what the poll was allowed to sleep.
#define XXL_STALL_MS 1000
static void
s_stall_check (server_t *self, int timeout)
{
    int64_t now = zclock_mono ();
    int64_t slept = self->stall_mono? now - self->stall_mono: 0;
    self->stall_mono = now;
    int64_t stall = slept - (timeout > 0? timeout: 0);
    if (stall < XXL_STALL_MS)
        return;
    for (pending_t *pending = (pending_t *) zhashx_first (self->pending); pending;
         pending = (pending_t *) zhashx_next (self->pending))
        if (!pending->gone)
            pending->deadline += stall;
    for (run_batch_t *batch = (run_batch_t *) zhashx_first (self->batches); batch;
         batch = (run_batch_t *) zhashx_next (self->batches))
        if (!batch->gone)
            batch->deadline += stall;
    zsys_warning ("server: the engine stood still for %" PRId64 " ms: requests to agents"
                  " get that much longer to be answered", stall);
}

static void
s_check_pending (server_t *self)
{
    int64_t now = zclock_mono ();
    zlistx_t *expired = zlistx_new ();
    for (pending_t *pending = (pending_t *) zhashx_first (self->pending); pending;
         pending = (pending_t *) zhashx_next (self->pending))
        if (pending->deadline <= now)
            zlistx_add_end (expired, pending);
    for (pending_t *pending = (pending_t *) zlistx_first (expired); pending;
         pending = (pending_t *) zlistx_next (expired)) {
        if (pending->kind == PENDING_RUN && pending->gone)
            s_reroute (self, pending->log_id, pending->presumed);
        else
        if (pending->kind == PENDING_RUN) {
            char text [128];
            snprintf (text, sizeof text, "no answer from the agent within %d ms",
                      self->config.run_timeout_ms);
            s_run_done (self, pending, XXL_CODE_FAIL, text);
        }
        else
        if (pending->kind == PENDING_PROBE)
            s_probe_answer (self, pending, 0, "no answer within the probe timeout");
        else
        if (pending->client && pending->gone) {
            //  The send failed: the agent's connection had closed
            char text [400];
            snprintf (text, sizeof text, "agent '%s' is not connected (its connection"
                      " closed)", pending->address);
            xxl_enc_reply (self->enc, pending->client_id, XXL_UNAVAILABLE, text);
            s_queue (self, self->api_out, zframe_data (pending->client),
                     zframe_size (pending->client));
        }
        else
        if (pending->client) {
            char text [400];
            snprintf (text, sizeof text, "agent '%s' did not answer within %d ms",
                      pending->address, self->config.request_timeout_ms);
            xxl_enc_reply (self->enc, pending->client_id, XXL_NO_ANSWER, text);
            s_queue (self, self->api_out, zframe_data (pending->client),
                     zframe_size (pending->client));
        }
        zhashx_delete (self->pending, &pending->id);
    }
    //  Batches whose items all expired: their answer is of no use now
    zlistx_purge (expired);
    for (run_batch_t *batch = (run_batch_t *) zhashx_first (self->batches); batch;
         batch = (run_batch_t *) zhashx_next (self->batches))
        if (batch->deadline <= now)
            zlistx_add_end (expired, batch);
    for (run_batch_t *batch = (run_batch_t *) zlistx_first (expired); batch;
         batch = (run_batch_t *) zlistx_next (expired)) {
        s_batch_expire (self, batch);
        zhashx_delete (self->batches, &batch->id);
    }
    zlistx_destroy (&expired);
}

//  Every XXL_LIVENESS_MS, a BEAT to each connected address: ZeroMQ tells
//  no one when a peer's connection closes, but a send to it then fails,
//  and the address is shown and routed as not connected from then on
//  (instead of until the dead time).  The agent's REPLY is ignored.
#define XXL_LIVENESS_MS 5000
static void
s_liveness (server_t *self)
{
    zhashx_t *seen = zhashx_new ();
    size_t cursor = 0;
    xxl_registry_entry_t entry;
    void *handle = zsock_resolve (self->agents);
    while (xxl_registry_each (self->registry, &cursor, &entry) == 0) {
        if (!entry.connected || zhashx_lookup (seen, entry.address))
            continue;
        zhashx_insert (seen, entry.address, (void *) 1);
        size_t rid_size = 0;
        const void *rid = xxl_registry_route (self->registry, entry.address, &rid_size);
        if (!rid)
            continue;
        xxl_enc_request (self->enc, "BEAT", ++self->next_id);
        size_t size;
        const void *data = xxl_enc_finish (self->enc, &size);
        int rc = zmq_send (handle, rid, rid_size, ZMQ_SNDMORE);
        if (rc >= 0)
            rc = zmq_send (handle, data, size, 0);
        if (rc < 0 && zmq_errno () == EHOSTUNREACH) {
            char name [300];
            zsys_info ("registry: %s is not connected (its connection closed)",
                       s_printable (entry.address, name, sizeof name));
            //  (copies: unrouting may free the entry's strings)
            char *address = strdup (entry.address);
            xxl_registry_unroute (self->registry, address, rid, rid_size);
            free (address);
        }
    }
    zhashx_destroy (&seen);
}

//  The automatic groups' address lists in the store follow the registry,
//  at most XXL_GROUPS_MS late: each app whose addresses changed is written
//  once per period (a burst of registrations costs one write per app)
#define XXL_GROUPS_MS 1000
static void
s_groups_refresh (server_t *self)
{
    int64_t now = s_now ();
    for (void *item = zhashx_first (self->apps_changed); item;
         item = zhashx_next (self->apps_changed))
        xxl_store_group_refresh_app (self->store, (const char *) zhashx_cursor (self->apps_changed),
                                     now);
    zhashx_purge (self->apps_changed);
}

static void
s_check_registry (server_t *self)
{
    int64_t now = s_now ();
    int64_t dead_before = now - (int64_t) self->config.dead_s * 1000;
    int removed = xxl_registry_expire (self->registry, dead_before);
    if (xxl_store_registry_expire (self->store, dead_before) > 0 || removed > 0)
        xxl_store_groups_refresh (self->store, now);
}

//  --------------------------------------------------------------------

void
xxl_server_config_defaults (xxl_server_config_t *config)
{
    memset (config, 0, sizeof *config);
    config->db = "xxl.db";
    config->api = "tcp://127.0.0.1:7070";
    config->agents = "tcp://*:7071";
    config->plugins = XXL_PKGLIBDIR "/routers";
    config->alarm_plugins = XXL_PKGLIBDIR "/alarms";
    config->access_token = "";
    config->beat_s = 30;
    config->dead_s = 90;
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
    config->scan_ms = 1000;
    config->recovery_wait_ms = 10000;
    config->warmup_ms = 3000;
    config->fail_check_ms = 1000;
    config->lost_check_ms = 60000;
    config->lost_after_ms = 10 * 60000;
    config->report_ms = 60000;
    config->retention_days = 30;
    config->retention_check_ms = 3600 * 1000;
    config->keep_last = 0;
    config->stop_wait_ms = 3000;
    config->wal_size_mb = 64;
}

static void
s_server_destroy (server_t **self_p)
{
    server_t *self = *self_p;
    if (!self)
        return;
    xxl_alarms_destroy (&self->alarms);
    zlistx_destroy (&self->alarm_backlog);
    xxl_timer_destroy (&self->timer);
    if (self->timer_fd >= 0)
        close (self->timer_fd);
    zlistx_destroy (&self->resends);
    zhashx_destroy (&self->resend_ids);
    xxl_pool_destroy (&self->fast_pool);
    xxl_pool_destroy (&self->slow_pool);
    zsock_destroy (&self->probes);
    zsock_destroy (&self->routed);
    xxl_routers_destroy (&self->routers);
    zhashx_destroy (&self->slow_counts);
    zhashx_destroy (&self->waiting);
    zhashx_destroy (&self->apps_changed);
    zhashx_destroy (&self->backlogs);
    zhashx_destroy (&self->accepted_ids);
    zlistx_destroy (&self->accepted);
    if (self->instants) {
        instant_t *instant;
        while ((instant = (instant_t *) zhashx_first (self->instants))) {
            zhashx_delete (self->instants, &instant->when);
            s_instant_destroy (&instant);
        }
        zhashx_destroy (&self->instants);
    }
    zlistx_destroy (&self->taking);
    zhashx_destroy (&self->plans);
    s_free_addresses (self->awaited, self->awaited_count);
    zlistx_destroy (&self->fire_batches);
    zlistx_destroy (&self->fire_later);
    zlistx_destroy (&self->turn_plans);
    zlistx_destroy (&self->unprepared);
    zhashx_destroy (&self->snaps);
    zhashx_destroy (&self->groups);
    zsock_destroy (&self->api);
    zsock_destroy (&self->agents);
    zlistx_destroy (&self->api_out);
    zlistx_destroy (&self->api_reads);
    zstr_free (&self->commit_logged);
    zlistx_destroy (&self->agents_out);
    zlistx_destroy (&self->agents_always);
    zhashx_destroy (&self->pending);
    zlistx_destroy (&self->open_batches);
    zhashx_destroy (&self->batches);
    xxl_enc_destroy (&self->item_enc);
    xxl_registry_destroy (&self->registry);
    xxl_store_destroy (&self->store);
    zchunk_destroy (&self->text);
    xxl_enc_destroy (&self->enc);
    free (self);
    *self_p = NULL;
}


//  The alarm host's config: scheduler/alarm/<key> of the config file
static const char *
s_alarm_config (void *ctx, const char *key)
{
    if (!ctx)
        return NULL;
    char path [256];
    snprintf (path, sizeof path, "scheduler/alarm/%s", key);
    return zconfig_get ((zconfig_t *) ctx, path, NULL);
}

static server_t *
s_server_new (zsock_t *pipe, const xxl_server_config_t *config)
{
    server_t *self = (server_t *) zmalloc (sizeof (server_t));
    self->config = *config;
    self->pipe = pipe;
    self->enc = xxl_enc_new ();
    self->text = zchunk_new (NULL, 4096);
    self->registry = xxl_registry_new ();
    self->api_out = zlistx_new ();
    zlistx_set_destructor (self->api_out, s_msg_destroy);
    self->api_reads = zlistx_new ();
    zlistx_set_destructor (self->api_reads, s_msg_destroy);
    self->agents_out = zlistx_new ();
    zlistx_set_destructor (self->agents_out, s_msg_destroy);
    self->agents_always = zlistx_new ();
    zlistx_set_destructor (self->agents_always, s_msg_destroy);
    self->pending = s_id_map (s_pending_destroy);
    self->item_enc = xxl_enc_new ();
    self->open_batches = zlistx_new ();
    zlistx_set_destructor (self->open_batches, s_batch_destructor);
    self->batches = s_id_map (s_batch_destructor);
    self->slow_counts = s_id_map (s_free_item);
    self->slow_minute = s_now () / 60000;
    self->waiting = s_id_map (s_free_item);
    self->apps_changed = zhashx_new ();
    self->backlogs = zhashx_new ();
    zhashx_set_destructor (self->backlogs, s_backlog_destroy);
    self->accepted = zlistx_new ();
    zlistx_set_destructor (self->accepted, s_free_item);
    self->accepted_ids = s_id_map (NULL);
    self->plans = s_id_map (s_plan_destructor);
    self->fire_batches = zlistx_new ();
    zlistx_set_destructor (self->fire_batches, s_batch_destructor);
    self->instants = s_id_map (NULL);
    self->taking = zlistx_new ();
    self->fire_later = zlistx_new ();
    self->turn_plans = zlistx_new ();
    self->unprepared = zlistx_new ();
    self->snaps = s_id_map (s_snap_destructor);
    self->groups = s_id_map (s_group_destructor);
    self->timer = xxl_timer_new ();
    //  zmq_poll's timeout counts whole milliseconds from when it is
    //  computed; the fires wake on this instead, to the microsecond
    self->timer_fd = timerfd_create (CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
    self->timer_armed = -1;
    self->resends = zlistx_new ();
    zlistx_set_destructor (self->resends, s_resend_destroy);
    self->resend_ids = s_id_map (NULL);
    self->next_id = (uint64_t) s_now () << 16;
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
    //  Alarm plugins: their config keys are scheduler/alarm/<key>
    self->alarm_host = *xxl_alarms_default_host ();
    self->alarm_host.config = s_alarm_config;
    self->alarm_host.config_ctx = config->file;
    self->alarms = xxl_alarms_new (NULL, &self->alarm_host);
    self->alarm_backlog = zlistx_new ();
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
    self->router_host = *xxl_routers_default_host ();
    self->router_host.probe = xxl_pool_probe;
    self->routers = xxl_routers_new (config->plugins, &self->router_host);
    if (!self->routers) {
        zsys_error ("server: cannot load router plugins from %s", config->plugins);
        s_server_destroy (&self);
        return NULL;
    }
    xxl_routers_set_probe_timeout (self->routers, config->probe_timeout_ms);
    if (xxl_routers_size (self->routers) == 0)
        zsys_warning ("server: no router plugins in %s: every routed trigger will fail",
                      config->plugins);
    char probes [64], routed [64];
    snprintf (probes, sizeof probes, "inproc://xxl-probes-%p", (void *) self);
    snprintf (routed, sizeof routed, "inproc://xxl-routed-%p", (void *) self);
    self->probes = xxl_transport_inproc (ZMQ_ROUTER, probes, true);
    self->routed = xxl_transport_inproc (ZMQ_PULL, routed, true);
    self->fast_pool = xxl_pool_new ("fast", config->fast_pool, config->pool_queue,
                                    self->routers, config->probe_timeout_ms, probes, routed);
    self->slow_pool = xxl_pool_new ("slow", config->slow_pool, config->pool_queue,
                                    self->routers, config->probe_timeout_ms, probes, routed);
    if (!self->probes || !self->routed || !self->fast_pool || !self->slow_pool) {
        zsys_error ("server: cannot start the trigger pools");
        s_server_destroy (&self);
        return NULL;
    }
    char api_bound [256], agents_bound [256];
    char why [512] = "";
    self->api = xxl_transport_open (XXL_ROLE_API, config->api, api_bound, sizeof api_bound,
                                    why, sizeof why);
    self->agents = self->api? xxl_transport_open (XXL_ROLE_AGENTS, config->agents, agents_bound,
                                                  sizeof agents_bound, why, sizeof why)
                            : NULL;
    if (*why)
        zsys_error ("server: %s", why);
    if (!self->api || !self->agents) {
        s_server_destroy (&self);
        return NULL;
    }
    zsys_info ("xxl-scheduler %s: api on %s, agents on %s, store %s",
               PACKAGE_VERSION, api_bound, agents_bound, config->db);
    if (config->ready_file && *config->ready_file) {
        char *tmp = zsys_sprintf ("%s.tmp", config->ready_file);
        FILE *file = fopen (tmp, "w");
        if (file) {
            fprintf (file, "api=%s\nagents=%s\npid=%d\n", api_bound, agents_bound, (int) getpid ());
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
    char *alive = xxl_store_text (self->store,
        "SELECT group_concat (registry_value, ',') FROM (SELECT DISTINCT registry_value"
        " FROM xxl_job_registry WHERE update_time >"
        " (SELECT MAX (update_time) FROM xxl_job_registry) - ?)", "i",
        (int64_t) config->dead_s * 1000);
    self->awaited_count = self->awaited_left = s_split_addresses (alive, &self->awaited);
    zstr_free (&alive);
    self->warm_until = self->awaited_left? zclock_mono () + config->warmup_ms: 0;
    //  FIX_DELAY jobs that were waiting for a run's end when we stopped
    int64_t waiting [4096], last = 0;
    size_t waiting_count = 0;
    do {
        xxl_store_ids (self->store,
            "SELECT id FROM xxl_job_info WHERE trigger_next_time = 253402300799000"
            " AND id > ? ORDER BY id LIMIT 4096", last, waiting, 4096, &waiting_count);
        for (size_t i = 0; i < waiting_count; i++)
            s_waiting_add (self, last = waiting [i]);
    } while (waiting_count == 4096);
    self->fired_until = self->fired_want
                      = xxl_store_scalar (self->store, "SELECT fired_until FROM xxl_job_fired", NULL);
    self->fired_sent = xxl_store_scalar (self->store, "SELECT fired_sent FROM xxl_job_fired", NULL);
    self->data_version = xxl_store_scalar (self->store, "PRAGMA data_version", NULL);
    //  Take up what a previous run left: unsent triggers
    if (xxl_store_begin (self->store) == 0) {
        self->next_log_id = 0;
        s_recover (self);
        if (xxl_store_commit (self->store))
            zsys_error ("server: recovery commit failed: %s", xxl_store_error (self->store));
    }
    self->next_registry_check = zclock_mono () + (int64_t) config->beat_s * 1000;
    self->next_liveness = zclock_mono () + XXL_LIVENESS_MS;
    self->next_fail_check = zclock_mono () + config->fail_check_ms;
    self->next_lost_check = zclock_mono () + config->lost_check_ms;
    self->next_report = zclock_mono () + 1000;
    self->next_retention = zclock_mono ()
                         + (config->retention_check_ms < 60000? config->retention_check_ms: 60000);
    self->next_pending_check = zclock_mono () + 200;
    return self;
}

//  Handles up to `batch` messages waiting on sock; returns true when it
//  emptied the queue, false when messages are left for the next turn
static bool
s_drain (server_t *self, zsock_t *sock, int is_api)
{
    void *handle = zsock_resolve (sock);
    for (int i = 0; i < self->config.batch; i++) {
        zmsg_t *zmsg = zmsg_new ();
        //  Non-blocking multipart receive
        int more = 1, got = 0;
        while (more) {
            zmq_msg_t part;
            zmq_msg_init (&part);
            if (zmq_msg_recv (&part, handle, ZMQ_DONTWAIT) < 0) {
                zmq_msg_close (&part);
                break;
            }
            got = 1;
            zmsg_addmem (zmsg, zmq_msg_data (&part), zmq_msg_size (&part));
            more = zmq_msg_more (&part);
            zmq_msg_close (&part);
        }
        if (!got) {
            zmsg_destroy (&zmsg);
            return true;
        }
        //  (replies waiting for this turn's end are bounded: the rest of
        //  the requests wait for the next turn)
        if (is_api == 1 && self->api_out_bytes >= XXL_API_TURN_BYTES)
            i = self->config.batch;
        s_fire_check (self);
        if (is_api == 1)
            s_handle_api (self, zmsg);
        else
        if (is_api == 0)
            s_handle_agent (self, zmsg);
        else
        if (is_api == 2)
            s_handle_probe (self, zmsg);
        else
            s_handle_routed (self, zmsg);
        zmsg_destroy (&zmsg);
    }
    return !(zsock_events (sock) & ZMQ_POLLIN);
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
    zmq_pollitem_t items [] = {
        { zsock_resolve (pipe), 0, ZMQ_POLLIN, 0 },
        { zsock_resolve (self->agents), 0, ZMQ_POLLIN, 0 },
        { zsock_resolve (self->api), 0, ZMQ_POLLIN, 0 },
        { zsock_resolve (self->probes), 0, ZMQ_POLLIN, 0 },
        { zsock_resolve (self->routed), 0, ZMQ_POLLIN, 0 },
        { NULL, xxl_alarms_fd (self->alarms), ZMQ_POLLIN, 0 },
        { NULL, self->timer_fd, ZMQ_POLLIN, 0 },
    };
    while (!self->terminated) {
        int64_t now = zclock_mono ();
        int64_t wake = self->next_registry_check;
        if (self->next_liveness < wake)
            wake = self->next_liveness;
        if (zhashx_size (self->apps_changed) && self->next_groups < wake)
            wake = self->next_groups;
        if (zhashx_size (self->backlogs) && now + 2 < wake)
            wake = now + 2;             //  (their queues drain as they read)
        if ((zhashx_size (self->pending) || zhashx_size (self->batches)
        ||   zlistx_size (self->resends))
        &&  self->next_pending_check < wake)
            wake = self->next_pending_check;
        if (self->next_scan < wake)
            wake = self->next_scan;
        if (self->next_fail_check < wake)
            wake = self->next_fail_check;
        if (self->next_lost_check < wake)
            wake = self->next_lost_check;
        if (self->next_report < wake)
            wake = self->next_report;
        if (self->next_retention < wake)
            wake = self->next_retention;
        if (self->stopping)
            wake = now + 50;
        int64_t due = xxl_timer_next (self->timer);
        if (due >= 0) {
            //  A turn before a fire xxl_job_fired does not cover yet
            //  writes it, so that the fire itself needs no commit
            if (due > self->fired_until)
                due -= 1000;
            //  (the timerfd wakes at `due`; the timeout is the fallback)
            int64_t due_mono = now + (due - s_now ()) + (self->timer_fd >= 0);
            if (due_mono < wake)
                wake = due_mono;
            s_timer_arm (self, due);
        }
        long timeout = wake > now? (long) (wake - now): 0;
        if (zmq_poll (items, 7, timeout) < 0) {
            if (zmq_errno () == EINTR)
                continue;               //  a signal: main decides
            break;
        }
        s_stall_check (self, timeout);
        if (items [6].revents & ZMQ_POLLIN) {
            uint64_t expired;
            if (read (self->timer_fd, &expired, sizeof expired) < 0) {
                //  (nothing to do: a non-blocking read of a timer not due)
            }
            self->timer_armed = -1;
        }
        if (items [0].revents & ZMQ_POLLIN) {
            char *command = zstr_recv (pipe);
            if ((!command || streq (command, "$TERM")) && !self->stopping) {
                //  Stop taking work; wait a bounded time for the agents'
                //  answers to RUNs in flight.  What is left is in the store
                //  and goes again at the next start.
                self->stopping = true;
                self->stop_deadline = zclock_mono () + self->config.stop_wait_ms;
                items [2].events = 0;
                zsys_info ("server: stopping; %zu request(s) to agents in flight",
                           zhashx_size (self->pending));
            }
            zstr_free (&command);
        }
        if (self->stopping && (zhashx_size (self->pending) + zhashx_size (self->batches) == 0
                           ||  zclock_mono () >= self->stop_deadline))
            self->terminated = true;
        if (xxl_store_begin (self->store))
            zsys_error ("server: cannot begin a transaction: %s", xxl_store_error (self->store));
        self->next_log_id = 0;
        self->turn_first_id = self->log_id_floor;
        self->turn++;
        //  Another scheduler's commits (we hold the write lock from here
        //  on): its stops and edits may void plans, so none fires blind
        int64_t version = xxl_store_scalar (self->store, "PRAGMA data_version", NULL);
        if (version != self->data_version)
            self->foreign_turn = self->turn;
        self->data_version = version;
        //  Fires due first: nothing in this turn delays them
        if (!self->stopping)
            s_fire (self);
        //  Answers still queued must not be judged late: deadlines and
        //  the registry are checked only once the agents socket is empty
        bool agents_drained = true;
        if (items [1].revents & ZMQ_POLLIN)
            agents_drained = s_drain (self, self->agents, 0);
        if (items [2].revents & ZMQ_POLLIN)
            s_drain (self, self->api, 1);
        if (items [3].revents & ZMQ_POLLIN)
            s_drain (self, self->probes, 2);
        if (items [4].revents & ZMQ_POLLIN)
            s_drain (self, self->routed, 3);
        if (items [5].revents & ZMQ_POLLIN)
            s_alarm_results (self);
        if (s_now () / 60000 != self->slow_minute) {
            self->slow_minute = s_now () / 60000;
            zhashx_purge (self->slow_counts);
        }
        now = zclock_mono ();
        //  Close to a fire, the work that can wait does (it would make
        //  this turn's commit longer)
        bool near = s_fire_near (self);
        if (!self->stopping) {
            //  Due triggers first: planning ahead can wait a turn
            s_plan_due (self);
            if (now >= self->next_scan && !near)
                s_plan_scan (self);
            if (!near)
                s_plan_prepare (self, 1024);
            if (now >= self->next_fail_check) {
                s_fail_monitor (self);
                self->next_fail_check = now + self->config.fail_check_ms;
            }
            if (now >= self->next_lost_check) {
                s_lost_monitor (self);
                self->next_lost_check = now + self->config.lost_check_ms;
            }
            if (now >= self->next_report) {
                s_report_refresh (self);
                self->next_report = now + self->config.report_ms;
            }
            if (now >= self->next_retention) {
                self->next_retention = now + self->config.retention_check_ms;
                s_retention (self);
            }
        }
        //  (a turn that itself took long may have answers waiting unread)
        if (now >= self->next_pending_check && agents_drained
        &&  zclock_mono () - self->stall_mono < XXL_STALL_MS) {
            s_check_pending (self);
            s_recover_resends (self);
            if (self->sweep_at && now >= self->sweep_at)
                self->sweep_at = s_sweep_untracked (self)
                               ? now + 2 * (int64_t) self->config.run_timeout_ms + 1000: 0;
            self->next_pending_check = now + 200;
        }
        if ((now >= self->next_groups || self->terminated)
        &&  zhashx_size (self->apps_changed)) {
            s_groups_refresh (self);
            self->next_groups = now + XXL_GROUPS_MS;
        }
        if (now >= self->next_liveness) {
            s_liveness (self);
            self->next_liveness = now + XXL_LIVENESS_MS;
        }
        if (now >= self->next_registry_check && agents_drained) {
            s_check_registry (self);
            self->next_registry_check = now + (int64_t) self->config.beat_s * 1000;
        }
        if (!near || self->terminated)
            s_accepted_flush (self, self->terminated? INT64_MAX: now - XXL_ACCEPTED_MS);
        //  The next fire within a second: have xxl_job_fired cover it now
        int64_t next_fire = xxl_timer_next (self->timer);
        if (next_fire >= 0 && next_fire > self->fired_until && next_fire - s_now () <= 1000)
            s_fired_cover (self, next_fire);
        //  What this turn sent with no store access, for a restart
        if (self->sent_max > self->fired_sent)
            xxl_store_exec (self->store,
                "UPDATE xxl_job_fired SET fired_sent = max (fired_sent, ?)", "i", self->sent_max);
        //  A fire due within the guard goes before this commit, so that
        //  no commit delays it (this turn's replies wait that long)
        if (!self->stopping && s_fire_near (self))
            s_fire_wait (self);
        int64_t commit_start = zclock_usecs ();
        int commit_rc = xxl_store_commit (self->store);
        int64_t commit_us = zclock_usecs () - commit_start;
        self->commit_us = commit_us > self->commit_us? commit_us: self->commit_us * 15 / 16;
        if (commit_rc) {
            //  Nothing this turn promised may leave: the clients' replies
            //  become 500 with the cause, the agents' messages are dropped
            //  (agents keep their callbacks and send them again)
            s_commit_failed (self);
            s_agents_dropped (self);
            //  Plans of rows that were not written
            void *item;
            while ((item = zlistx_detach (self->turn_plans, NULL))) {
                int64_t log_id = (int64_t) (intptr_t) item;
                zhashx_delete (self->plans, &log_id);
            }
            self->fired_want = self->fired_until;
        }
        else {
            self->fired_until = self->fired_want;
            if (self->sent_max > self->fired_sent)
                self->fired_sent = self->sent_max;
        }
        self->sent_max = 0;
        zlistx_purge (self->turn_plans);
        s_flush (self);
        //  The WAL's restart holds the engine up for its fsyncs: not
        //  close to a fire, unless the WAL is past four times its size
        int wal = xxl_store_wal_due (self->store);
        if (wal == 2 || (wal == 1 && !s_fire_within (self, XXL_WAL_FIRE_MS)))
            xxl_store_wal_restart (self->store);
    }
    s_server_destroy (&self);
}
