/*  xxl_agent.c -- the agent actor: registration, requests, callbacks.

    Loop: poll the pipe, every scheduler DEALER and its monitor socket, the
    executor's result fd and the plugin folder's inotify fd.  Requests are
    answered on the DEALER they came from.  Results taken from the executor
    are spooled, then wait in an ordered queue; a CALLBACK batch takes them
    from its head to the first scheduler that is up.  Up to
    XXL_CALLBACK_INFLIGHT batches may be unacknowledged at once: a batch goes
    whenever none is in flight, and another one as soon as
    XXL_CALLBACK_EAGER results wait.  An acked batch's results leave the
    spool; a refused one, or one without an ack within the timeout (then
    with every other batch on that scheduler, which goes out of favour),
    goes back to the head of the queue and is sent again, possibly twice to
    the scheduler, where a repeated callback is a no-op.
*/

#include "xxl_agent.h"
#include "xxl_cert.h"
#include "xxl_executor.h"
#include "xxl_guard.h"
#include "xxl_handlers.h"
#include "xxl_journal.h"
#include "xxl_logread.h"
#include "xxl_runlog.h"
#include "xxl_spool.h"
#include "xxl/msg.h"
#include "xxl_transport.h"
#include "xxl/handler.h"

#include <inttypes.h>
#include <unistd.h>

#define XXL_CALLBACK_BATCH  5000            //  results in one CALLBACK at most
#define XXL_CALLBACK_BYTES  (1024 * 1024)   //  and about this many bytes
#define XXL_CALLBACK_INFLIGHT 4             //  unacknowledged batches at most
#define XXL_CALLBACK_EAGER  256             //  waiting results that send another
#define XXL_TAKE_BATCH      256             //  results taken (and spooled) at once
#define XXL_MAX_PARAM       (64 * 1024)
#define XXL_CLOCK_RTT_MAX   1000            //  a REGISTER answered later says
                                            //  nothing of the scheduler's clock
#define XXL_HANDSHAKE_LOG   60000           //  ms between logs of failed handshakes
#define XXL_LINK_SILENCE    15000           //  ms without a message on a connected
                                            //  link before it is replaced
#define XXL_REFUSED_BACKOFF 100             //  ms before the first retry of a
                                            //  refused CALLBACK, doubling to the beat
#define XXL_REFUSED_LOG     10000           //  ms between logs of refused CALLBACKs

typedef struct {
    char *endpoint;
    zsock_t *dealer;
    void *monitor;                      //  libzmq PAIR receiving socket events
    bool up;                            //  answered our last REGISTER
    bool connected;                     //  a handshake succeeded, no disconnect since
    bool broken;                        //  a connection failed for good: replace
    bool broken_open;                   //  ... one that had been up (not a handshake)
    int64_t heard;                      //  last message on it, or its (re)start (mono ms)
    uint64_t register_id;               //  id of the REGISTER in flight
    int64_t register_sent;              //  mono ms, of the REGISTER in flight
    int64_t register_sent_boot;         //  the same on s_boot_ms's clock
    int64_t register_sent_real;         //  epoch ms, this host's wall clock
    int64_t clock_offset;               //  the scheduler's clock - our
                                        //  monotonic clock, ms (until a
                                        //  REGISTER reply said: our wall
                                        //  clock - our monotonic clock)
    int64_t wall_offset;                //  the scheduler's clock - our wall
                                        //  clock, ms (0 until a reply said)
    size_t handshakes_failed;           //  since the last one logged
    int64_t handshake_logged;           //  when (mono ms; 0: never)
    size_t replies_dropped;             //  since a send on it last worked
} link_t;

typedef struct _callback_t {
    xxl_result_t result;
    struct _callback_t *next;
} callback_t;

typedef struct {
    callback_t *head, *tail;
    size_t count;
} callbacks_t;                          //  a FIFO of results

typedef struct {
    uint64_t id;                        //  0: this slot is free
    size_t link;
    int64_t deadline;
    callbacks_t items;                  //  the results it carries
} batch_t;

typedef struct {
    xxl_agent_config_t config;
    zsock_t *pipe;
    link_t *links;
    size_t link_count;
    size_t preferred;                   //  link that takes callbacks
    xxl_handlers_t *handlers;
    xxl_executor_t *executor;
    xxl_spool_t *spool;                 //  results on disk until acknowledged
    xxl_journal_t *journal;             //  logIds accepted, across restarts
    xxl_guard_t *guard;                 //  kills our runs if we die
    size_t repeated;                    //  RUN items already accepted (re-sent)
    size_t busy_refused;                //  RUN items refused busy (this RUN)
    xxl_enc_t *enc;
    zcert_t *cert;                      //  ours with the scheduler's key, or NULL
    char scheduler_key [41];            //  Z85 public key ("" without CURVE)
    callbacks_t waiting;                //  results not in flight, in finish order
    batch_t batches [XXL_CALLBACK_INFLIGHT];
    int64_t callback_after;             //  mono ms: no CALLBACK goes before
    int64_t callback_backoff;           //  ms, after a refusal (0: none)
    size_t refused;                     //  refused CALLBACKs not yet logged
    int64_t refused_logged;             //  when last logged (mono ms; 0: never)
    uint64_t next_id;
    int64_t next_beat;
    int64_t next_clean;
    int64_t reached;                    //  mono ms: when the latest REGISTER
                                        //  a scheduler answered was sent (the
                                        //  run lease counts from it)
    bool lease_out;                     //  the run lease ran out: runs were
                                        //  stopped, new ones are refused
    bool terminated;
    bool draining;                      //  stopping: new runs are refused
    char address [256];
    const char *sending;                //  type of the message in the encoder
} agent_t;

//  Frees every result of a list and empties it
static void
s_callbacks_free (callbacks_t *list)
{
    while (list->head) {
        callback_t *callback = list->head;
        list->head = callback->next;
        free (callback->result.msg);
        free (callback);
    }
    list->tail = NULL;
    list->count = 0;
}

//  Moves every result of from to the head of to, keeping from's order
static void
s_callbacks_prepend (callbacks_t *to, callbacks_t *from)
{
    if (!from->head)
        return;
    from->tail->next = to->head;
    if (!to->head)
        to->tail = from->tail;
    to->head = from->head;
    to->count += from->count;
    from->head = from->tail = NULL;
    from->count = 0;
}

//  Sends the encoder's message on a link; -1 when it cannot go now: the
//  link is down or closing (ZMQ_IMMEDIATE), or its queue is full
//  (xxl_transport: the scheduler has not read 100,000 of our messages).
//  A REGISTER or CALLBACK that cannot go is logged each time; its caller
//  sends it again (the next beat; the results stay in the spool).  A
//  REPLY is dropped, and the scheduler's wait for it ends as for a lost
//  connection: the first of a row is logged, and their count once a send
//  on the link works again.
static int
s_send (agent_t *self, link_t *link)
{
    size_t size;
    const void *data = xxl_enc_finish (self->enc, &size);
    if (zmq_send (zsock_resolve (link->dealer), data, size, ZMQ_DONTWAIT) < 0) {
        if (strneq (self->sending, "REPLY"))
            zsys_warning ("agent: cannot send %s to %s now (%s); it goes again later",
                          self->sending, link->endpoint, zmq_strerror (zmq_errno ()));
        else
        if (link->replies_dropped++ == 0)
            zsys_warning ("agent: cannot send a REPLY to %s (%s): replies are dropped until"
                          " the link is up and its queue has room", link->endpoint,
                          zmq_strerror (zmq_errno ()));
        return -1;
    }
    if (link->replies_dropped) {
        zsys_warning ("agent: sending to %s again; %zu REPLY(s) were dropped", link->endpoint,
                      link->replies_dropped);
        link->replies_dropped = 0;
    }
    return 0;
}

//  Starts a message of ours in the encoder: a request, or with reply the
//  REPLY to request id, with its code and msg.  Every message the agent
//  sends starts here, so every one carries the access token.
static void
s_message (agent_t *self, const char *type, uint64_t id, bool reply, int code, const char *msg)
{
    if (reply)
        xxl_enc_reply (self->enc, id, code, msg);
    else
        xxl_enc_request (self->enc, type, id);
    self->sending = reply? "REPLY": type;
    if (self->config.access_token && *self->config.access_token)
        xxl_enc_kstr (self->enc, "accessToken", self->config.access_token);
}

static void
s_request (agent_t *self, const char *type, uint64_t id)
{
    s_message (self, type, id, false, 0, NULL);
}

//  Starts the REPLY to request id, for the caller to add content to
static void
s_reply_begin (agent_t *self, uint64_t id, int code, const char *msg)
{
    s_message (self, NULL, id, true, code, msg);
}

//  The agent's clock for durations that must go on while the host is
//  suspended (the run lease, RUNs' expiry): CLOCK_BOOTTIME, ms.  It never
//  steps; it stands still only while the host does not run at all (a VM
//  paused by its hypervisor: docs/design.md, "The partition model")
static int64_t
s_boot_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_BOOTTIME, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
s_register (agent_t *self, link_t *link, int remove)
{
    uint64_t id = ++self->next_id;
    s_request (self, remove? "UNREGISTER": "REGISTER", id);
    xxl_enc_kstr (self->enc, "registryGroup", "EXECUTOR");
    xxl_enc_kstr (self->enc, "registryKey", self->config.app);
    xxl_enc_kstr (self->enc, "registryValue", self->address);
    if (!remove) {
        char *names = xxl_handlers_names (self->handlers);
        xxl_enc_kstr (self->enc, "handlers", names? names: "");
        if (self->config.run_lease_s > 0)
            xxl_enc_kint (self->enc, "runLease", self->config.run_lease_s);
        if (self->config.run_batch > 1)
            xxl_enc_kint (self->enc, "runBatch", self->config.run_batch < XXL_RUN_BATCH_MAX
                                                 ? self->config.run_batch: XXL_RUN_BATCH_MAX);
        free (names);
        link->register_id = id;
        link->register_sent = zclock_mono ();
        link->register_sent_boot = s_boot_ms ();
        link->register_sent_real = zclock_time ();
    }
    s_send (self, link);
}

static void
s_reply (agent_t *self, link_t *link, uint64_t id, int code, const char *msg)
{
    s_reply_begin (self, id, code, msg);
    s_send (self, link);
}

//  The scheduler's clock, from the `now` (ms) of its answer to our
//  REGISTER: offset = now - the middle of our send and receive, on our
//  monotonic clock (for expireTime: a step of either wall clock changes
//  nothing) and on our wall clock (for startTime).  An answer that took
//  longer than XXL_CLOCK_RTT_MAX (a busy or frozen peer, or this process
//  frozen) is not trusted; the last trusted one counts.  The REGISTER it
//  answers reached a scheduler: the run lease counts from its send.
static int64_t s_lease_check (agent_t *self);

static void
s_clock_sample (agent_t *self, link_t *link, xxl_msg_t *msg)
{
    if (link->register_sent_boot >= self->reached) {
        self->reached = link->register_sent_boot;
        if (self->guard && self->config.run_lease_s > 0)
            xxl_guard_lease (self->guard, self->reached + (int64_t) self->config.run_lease_s * 1000);
        //  (at once: RUNs that follow this reply on the link are taken)
        s_lease_check (self);
    }
    const msgpack_object *content = xxl_msg_get (xxl_msg_root (msg), "content");
    const msgpack_object *now = content && content->type == MSGPACK_OBJECT_MAP
                              ? xxl_msg_get (content, "now"): NULL;
    if (!now || now->type != MSGPACK_OBJECT_POSITIVE_INTEGER || now->via.u64 > INT64_MAX)
        return;
    int64_t rtt = s_boot_ms () - link->register_sent_boot;
    if (rtt < 0 || rtt > XXL_CLOCK_RTT_MAX)
        return;
    int64_t offset = (int64_t) now->via.u64 - (link->register_sent_boot + rtt / 2);
    int64_t wall = (int64_t) now->via.u64 - (link->register_sent_real + rtt / 2);
    if (wall > 1000 || wall < -1000) {
        if (link->wall_offset / 1000 != wall / 1000)
            zsys_info ("agent: %s's clock is %" PRId64 " ms %s ours", link->endpoint,
                       wall < 0? -wall: wall, wall < 0? "behind": "ahead of");
    }
    link->clock_offset = offset;
    link->wall_offset = wall;
}

//  --------------------------------------------------------------------
//  Callbacks

//  Results held in total: waiting and in flight
static size_t
s_callbacks_count (agent_t *self)
{
    size_t count = self->waiting.count;
    for (size_t i = 0; i < XXL_CALLBACK_INFLIGHT; i++)
        count += self->batches [i].items.count;
    return count;
}

//  Puts a batch's results back at the head of the waiting queue, to be
//  sent again; frees the slot
static void
s_batch_return (agent_t *self, batch_t *batch)
{
    s_callbacks_prepend (&self->waiting, &batch->items);
    batch->id = 0;
}

//  Returns every batch in flight on link, the newest first, so that the
//  oldest results end up first in the waiting queue
static void
s_batches_return_link (agent_t *self, size_t link)
{
    while (true) {
        batch_t *newest = NULL;
        for (size_t i = 0; i < XXL_CALLBACK_INFLIGHT; i++) {
            batch_t *batch = &self->batches [i];
            if (batch->id && batch->link == link && (!newest || batch->id > newest->id))
                newest = batch;
        }
        if (!newest)
            return;
        s_batch_return (self, newest);
    }
}

//  Sends CALLBACK batches from the head of the waiting queue while the
//  flow-control rule allows (see the head of this file) and a scheduler is
//  up; a batch that cannot be sent goes back to the queue
static void
s_callbacks_send (agent_t *self)
{
    if (zclock_mono () < self->callback_after)
        return;                         //  (backing off after a refusal)
    while (self->waiting.count) {
        batch_t *slot = NULL;
        size_t in_flight = 0;
        for (size_t i = 0; i < XXL_CALLBACK_INFLIGHT; i++) {
            if (self->batches [i].id)
                in_flight++;
            else
            if (!slot)
                slot = &self->batches [i];
        }
        if (!slot || (in_flight && self->waiting.count < XXL_CALLBACK_EAGER))
            return;
        //  The preferred link if it is up, else the first that is
        size_t chosen = self->link_count;
        for (size_t i = 0; i < self->link_count; i++) {
            size_t index = (self->preferred + i) % self->link_count;
            if (self->links [index].up) {
                chosen = index;
                break;
            }
        }
        if (chosen == self->link_count)
            return;                     //  no scheduler up: results wait
        uint64_t id = ++self->next_id;
        s_request (self, "CALLBACK", id);
        xxl_enc_key (self->enc, "items");
        xxl_enc_array_begin (self->enc);
        size_t bytes = 0;
        while (self->waiting.head && slot->items.count < XXL_CALLBACK_BATCH
           &&  bytes < XXL_CALLBACK_BYTES) {
            callback_t *callback = self->waiting.head;
            self->waiting.head = callback->next;
            if (!self->waiting.head)
                self->waiting.tail = NULL;
            self->waiting.count--;
            callback->next = NULL;
            if (slot->items.tail)
                slot->items.tail->next = callback;
            else
                slot->items.head = callback;
            slot->items.tail = callback;
            slot->items.count++;
            bytes += 64 + (callback->result.msg? strlen (callback->result.msg): 0);
            xxl_enc_map_begin (self->enc);
            xxl_enc_kint (self->enc, "logId", callback->result.log_id);
            xxl_enc_kint (self->enc, "logDateTime", callback->result.log_date_time);
            xxl_enc_kint (self->enc, "handleCode", callback->result.code);
            xxl_enc_kstr (self->enc, "handleMsg", callback->result.msg);
            //  When its handler started, on the receiving scheduler's clock
            //  as far as we know it (docs/protocol.md, CALLBACK)
            if (callback->result.start_time > 0)
                xxl_enc_kint (self->enc, "startTime", callback->result.start_time
                                                     + self->links [chosen].wall_offset);
            xxl_enc_map_end (self->enc);
        }
        xxl_enc_array_end (self->enc);
        if (s_send (self, &self->links [chosen])) {
            //  Cannot go now (the link is down, or its queue full): sent
            //  again once a REGISTER on some link is answered
            self->links [chosen].up = false;
            s_batch_return (self, slot);
            return;
        }
        slot->id = id;
        slot->link = chosen;
        slot->deadline = zclock_mono () + self->config.callback_timeout_ms;
    }
}

//  The answer to a CALLBACK: on success its results leave the spool (one
//  write for the batch), else they go back to be sent again.  An id that is
//  not in flight (a late answer to a batch already sent again) is ignored.
static void
s_callbacks_acked (agent_t *self, uint64_t id, int code, const char *msg)
{
    batch_t *batch = NULL;
    for (size_t i = 0; i < XXL_CALLBACK_INFLIGHT && !batch; i++)
        if (id && self->batches [i].id == id)
            batch = &self->batches [i];
    if (!batch)
        return;
    if (code == XXL_OK) {
        self->callback_backoff = 0;
        self->callback_after = 0;
        if (self->spool) {
            int64_t log_ids [512];
            size_t count = 0;
            for (callback_t *callback = batch->items.head; callback; callback = callback->next) {
                log_ids [count++] = callback->result.log_id;
                if (count == sizeof log_ids / sizeof log_ids [0] || !callback->next) {
                    xxl_spool_ack_batch (self->spool, log_ids, count);
                    count = 0;
                }
            }
        }
        s_callbacks_free (&batch->items);
        batch->id = 0;
    }
    else {
        //  Refused: sent again after a backoff that doubles from
        //  XXL_REFUSED_BACKOFF up to the beat while refusals go on.  401:
        //  the connection is no longer registered (our address registered
        //  on another connection since): registered again at once, and
        //  the link takes no CALLBACK until that is answered.
        link_t *link = &self->links [batch->link];
        s_batch_return (self, batch);
        int64_t now = zclock_mono ();
        int64_t beat = (int64_t) self->config.beat_s * 1000;
        self->callback_backoff = self->callback_backoff? self->callback_backoff * 2
                                                       : XXL_REFUSED_BACKOFF;
        if (self->callback_backoff > beat)
            self->callback_backoff = beat > XXL_REFUSED_BACKOFF? beat: XXL_REFUSED_BACKOFF;
        self->callback_after = now + self->callback_backoff;
        if (code == XXL_UNAUTHORIZED) {
            link->up = false;
            if (!link->register_id)
                s_register (self, link, 0);
        }
        self->refused++;
        if (!self->refused_logged || now - self->refused_logged >= XXL_REFUSED_LOG) {
            zsys_warning ("agent: callback batch refused by %s (%d %s); will retry in %" PRId64
                          " ms (%zu refusal(s) since the last line)", link->endpoint, code,
                          msg? msg: "", self->callback_backoff, self->refused);
            self->refused = 0;
            self->refused_logged = now;
        }
    }
}

//  A batch without an ack by its deadline: it and every other batch on its
//  scheduler go back to the queue, and the next scheduler is preferred
static void
s_callbacks_check (agent_t *self)
{
    int64_t now = zclock_mono ();
    for (size_t i = 0; i < XXL_CALLBACK_INFLIGHT; i++) {
        batch_t *batch = &self->batches [i];
        if (batch->id && now >= batch->deadline) {
            size_t link = batch->link;
            zsys_warning ("agent: no ack from %s for %zu results; trying again",
                          self->links [link].endpoint, batch->items.count);
            s_batches_return_link (self, link);
            self->preferred = (link + 1) % self->link_count;
        }
    }
}

//  Queues a result for delivery (the spool already holds it)
static void
s_queue_result (agent_t *self, const xxl_result_t *result, bool copy)
{
    callback_t *callback = (callback_t *) zmalloc (sizeof (callback_t));
    callback->result = *result;
    if (copy)
        callback->result.msg = result->msg? strdup (result->msg): NULL;
    if (self->waiting.tail)
        self->waiting.tail->next = callback;
    else
        self->waiting.head = callback;
    self->waiting.tail = callback;
    self->waiting.count++;
}

//  Takes finished runs from the executor: spooled (one fsync for the
//  batch) before anything is sent, so an agent crash loses none; then
//  done in the journal (one write), so a restart does not report them lost
static void
s_take_results (agent_t *self)
{
    xxl_result_t batch [XXL_TAKE_BATCH];
    int64_t log_ids [XXL_TAKE_BATCH];
    size_t count;
    while ((count = xxl_executor_take_many (self->executor, batch, XXL_TAKE_BATCH)) > 0) {
        if (xxl_spool_add_batch (self->spool, batch, count))
            zsys_error ("agent: cannot write %zu result(s) to the spool; they are kept"
                        " in memory only", count);
        else {
            for (size_t i = 0; i < count; i++)
                log_ids [i] = batch [i].log_id;
            xxl_journal_done (self->journal, log_ids, count);
            xxl_journal_flush (self->journal);
        }
        for (size_t i = 0; i < count; i++)
            s_queue_result (self, &batch [i], false);
    }
}

//  --------------------------------------------------------------------
//  Requests from a scheduler

//  True when log_id is this agent's: accepted within the journal's window
//  (this life or an earlier one), or its result still in the spool (the
//  journal forgets a done id after a generation or two of newer accepts;
//  the spool keeps a result until the scheduler acknowledged it)
static bool
s_holds (agent_t *self, int64_t log_id)
{
    return xxl_journal_seen (self->journal, log_id)
        || (self->spool && xxl_spool_pending (self->spool, log_id));
}

//  Takes one TriggerParam (the fields of `map` in msg, NULL: the root):
//  returns the code of the RUN's answer, with the reason in reason (""
//  for none)
static int
s_run_one (agent_t *self, xxl_msg_t *msg, const msgpack_object *map,
           char *reason, size_t reasonlen)
{
    xxl_trigger_t trigger = { 0 };
    trigger.job_id = xxl_msg_int (msg, map, "jobId", 1, 1, INT64_MAX, 0);
    trigger.log_id = xxl_msg_int (msg, map, "logId", 1, 1, INT64_MAX, 0);
    trigger.log_date_time = xxl_msg_int (msg, map, "logDateTime", 1, 0, INT64_MAX, 0);
    trigger.glue_updatetime = xxl_msg_int (msg, map, "glueUpdatetime", 0, 0, INT64_MAX, 0);
    trigger.handler = xxl_msg_str (msg, map, "executorHandler", 0, XXL_MSG_MAX_NAME, "");
    trigger.params = xxl_msg_str (msg, map, "executorParams", 0, XXL_MAX_PARAM, "");
    trigger.block_strategy = xxl_msg_str (msg, map, "executorBlockStrategy", 0, 32,
                                          "SERIAL_EXECUTION");
    trigger.glue_type = xxl_msg_str (msg, map, "glueType", 0, 32, "BEAN");
    trigger.glue_source = xxl_msg_str (msg, map, "glueSource", 0, XXL_MSG_MAX_STR, "");
    trigger.timeout_s = (int) xxl_msg_int (msg, map, "executorTimeout", 0, 0, INT32_MAX, 0);
    trigger.shard_index = (int) xxl_msg_int (msg, map, "broadcastIndex", 0, 0, INT32_MAX, 0);
    trigger.shard_total = (int) xxl_msg_int (msg, map, "broadcastTotal", 0, 1, INT32_MAX, 1);
    *reason = 0;
    if (xxl_msg_error (msg)) {
        snprintf (reason, reasonlen, "%s", xxl_msg_error (msg));
        return XXL_BAD_REQUEST;
    }
    if (self->draining) {
        //  Stopping: a logId already ours is answered as ever (a re-send);
        //  a new run is refused, for the scheduler to fail (and retry
        //  elsewhere, per the job's retry count)
        if (s_holds (self, trigger.log_id)) {
            snprintf (reason, reasonlen, "logId %" PRId64 " already accepted", trigger.log_id);
            self->repeated++;
            return XXL_OK;
        }
        snprintf (reason, reasonlen, "stopping: xxl-agent %.200s refused the run: it is"
                  " draining its runs after SIGTERM and takes no new one", self->address);
        zsys_info ("agent: refused log %" PRId64 ": stopping", trigger.log_id);
        return XXL_CODE_FAIL;
    }
    if (xxl_executor_run (self->executor, &trigger, reason, reasonlen) == 0)
        return XXL_OK;
    if (strstr (reason, "already accepted")) {
        //  A scheduler re-sent after its restart: the run is ours already
        self->repeated++;
        return XXL_OK;
    }
    if (strncmp (reason, XXL_EXECUTOR_BUSY_PREFIX, strlen (XXL_EXECUTOR_BUSY_PREFIX)) == 0) {
        //  Back-pressure: nothing was taken; the scheduler sends it again
        //  later or to another agent
        self->busy_refused++;
        return XXL_BUSY;
    }
    zsys_info ("agent: refused log %" PRId64 ": %s", trigger.log_id, reason);
    return XXL_CODE_FAIL;
}

//  A RUN's expireTime (epoch ms on the scheduler's clock): once our
//  estimate of that clock is past it, the scheduler has given up on the
//  message's runs and none may start.  Judged when the message is read
//  (after any freeze of this process), before anything is journaled.
//  Returns 0 when the runs may be taken (also without expireTime: an
//  older scheduler), else the code to answer each of them, the reason in
//  reason.
static int
s_expired (agent_t *self, link_t *link, xxl_msg_t *msg, char *reason, size_t reasonlen)
{
    const msgpack_object *value = xxl_msg_get (xxl_msg_root (msg), "expireTime");
    if (!value || value->type == MSGPACK_OBJECT_NIL)
        return 0;
    int64_t expire;
    if (value->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
        expire = value->via.u64 > INT64_MAX? INT64_MAX: (int64_t) value->via.u64;
    else
    if (value->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
        expire = value->via.i64;
    else {
        snprintf (reason, reasonlen, "expireTime must be an integer");
        return XXL_BAD_REQUEST;
    }
    int64_t now = s_boot_ms () + link->clock_offset;
    if (now > expire) {
        snprintf (reason, reasonlen, "expired: the scheduler gave up on this run %" PRId64
                  " ms before the agent read it (expireTime %" PRId64 ")", now - expire, expire);
        return XXL_CODE_FAIL;
    }
    if (self->lease_out) {
        //  (the scheduler may have given the run up for lost already)
        snprintf (reason, reasonlen, "stopped: no scheduler reachable for %" PRId64 " s (the"
                  " run lease ran out; runs are taken again once a scheduler answers)",
                  (s_boot_ms () - self->reached) / 1000);
        return XXL_CODE_FAIL;
    }
    return 0;
}

//  An item of an expired RUN (map: its TriggerParam, NULL: the root; code
//  and expired: s_expired's answer).  A logId this agent accepted before
//  (its journal holds it, across restarts) is answered 200 "already
//  accepted", as a re-send is, expired or not: a recovering scheduler
//  asks so, with an expireTime already past, whether a run it may have
//  sent just before it stopped was taken.  Any other is refused with the
//  expiry.  Nothing starts either way.
static int
s_expired_item (agent_t *self, xxl_msg_t *msg, const msgpack_object *map, int code,
                const char *expired, char *reason, size_t reasonlen)
{
    assert (code != 0);
    int64_t log_id = xxl_msg_int (msg, map, "logId", 1, 1, INT64_MAX, 0);
    if (code == XXL_CODE_FAIL && !xxl_msg_error (msg) && s_holds (self, log_id)) {
        snprintf (reason, reasonlen, "logId %" PRId64 " already accepted", log_id);
        self->repeated++;
        return XXL_OK;
    }
    snprintf (reason, reasonlen, "%s", expired);
    return code;
}

static void
s_handle_run (agent_t *self, link_t *link, xxl_msg_t *msg)
{
    char reason [512];
    char expired [512];
    int code = s_expired (self, link, msg, expired, sizeof expired);
    self->repeated = 0;
    if (code) {
        code = s_expired_item (self, msg, NULL, code, expired, reason, sizeof reason);
        if (self->repeated)
            zsys_info ("agent: RUN %" PRIu64 " (expired): %s, not run again", xxl_msg_id (msg),
                       reason);
        else
            zsys_info ("agent: RUN %" PRIu64 " not taken: %s", xxl_msg_id (msg), reason);
    }
    else {
        self->repeated = 0;
        self->busy_refused = 0;
        code = s_run_one (self, msg, NULL, reason, sizeof reason);
        if (self->repeated)
            zsys_info ("agent: RUN %" PRIu64 ": %s, not run again", xxl_msg_id (msg), reason);
        if (self->busy_refused)
            zsys_info ("agent: RUN %" PRIu64 " refused: %s", xxl_msg_id (msg), reason);
    }
    s_reply (self, link, xxl_msg_id (msg), code, *reason? reason: NULL);
}

//  Runs of a RUN batch queued before their idle workers are woken
#define XXL_WAKE_SLICE 128

//  A batch RUN: `runs`, up to XXL_RUN_BATCH_MAX TriggerParams taken in
//  order, answered once with one {code, msg} per item; an item's problem
//  touches no other item
static void
s_handle_run_batch (agent_t *self, link_t *link, xxl_msg_t *msg)
{
    const msgpack_object *runs = xxl_msg_get (xxl_msg_root (msg), "runs");
    if (runs->type != MSGPACK_OBJECT_ARRAY || runs->via.array.size == 0
    ||  runs->via.array.size > XXL_RUN_BATCH_MAX) {
        char text [128];
        snprintf (text, sizeof text, "runs must be an array of 1 to %d TriggerParams",
                  XXL_RUN_BATCH_MAX);
        s_reply (self, link, xxl_msg_id (msg), XXL_BAD_REQUEST, text);
        return;
    }
    char expired [512];
    int expired_code = s_expired (self, link, msg, expired, sizeof expired);
    if (expired_code == XXL_BAD_REQUEST) {
        s_reply (self, link, xxl_msg_id (msg), XXL_BAD_REQUEST, expired);
        return;
    }
    if (expired_code)
        zsys_info ("agent: RUN %" PRIu64 " (%u runs) not taken: %s", xxl_msg_id (msg),
                   runs->via.array.size, expired);
    xxl_enc_t *enc = self->enc;
    self->repeated = 0;
    self->busy_refused = 0;
    char busy [512] = "";
    s_reply_begin (self, xxl_msg_id (msg), XXL_OK, NULL);
    xxl_enc_key (enc, "content");
    xxl_enc_array_begin (enc);
    //  Workers are woken per slice of the batch, once each for all their
    //  runs in it (the first run of a slice waits for the slice, ~0.1 ms)
    xxl_executor_hold_wakes (self->executor, 1);
    for (uint32_t i = 0; i < runs->via.array.size; i++) {
        if (i > 0 && i % XXL_WAKE_SLICE == 0) {
            xxl_executor_hold_wakes (self->executor, 0);
            xxl_executor_hold_wakes (self->executor, 1);
        }
        const msgpack_object *item = &runs->via.array.ptr [i];
        char reason [512];
        int code;
        if (item->type != MSGPACK_OBJECT_MAP) {
            snprintf (reason, sizeof reason, "runs[%u] is not a map", i);
            code = XXL_BAD_REQUEST;
        }
        else
        if (expired_code)
            code = s_expired_item (self, msg, item, expired_code, expired, reason, sizeof reason);
        else
            code = s_run_one (self, msg, item, reason, sizeof reason);
        if (code == XXL_BUSY && !*busy)
            snprintf (busy, sizeof busy, "%s", reason);
        xxl_msg_clear_error (msg);
        xxl_enc_map_begin (enc);
        xxl_enc_kint (enc, "code", code);
        xxl_enc_kstr (enc, "msg", *reason? reason: NULL);
        xxl_enc_map_end (enc);
    }
    xxl_executor_hold_wakes (self->executor, 0);
    xxl_enc_array_end (enc);
    s_send (self, link);
    if (self->repeated)
        zsys_info ("agent: RUN %" PRIu64 ": %zu of %u run(s) already accepted, not run again",
                   xxl_msg_id (msg), self->repeated, runs->via.array.size);
    if (self->busy_refused)
        zsys_info ("agent: RUN %" PRIu64 ": %zu of %u run(s) refused: %s", xxl_msg_id (msg),
                   self->busy_refused, runs->via.array.size, busy);
}

static void
s_handle_log (agent_t *self, link_t *link, xxl_msg_t *msg)
{
    int64_t log_id = xxl_msg_int (msg, NULL, "logId", 1, 1, INT64_MAX, 0);
    int64_t date = xxl_msg_int (msg, NULL, "logDateTime", 1, 0, INT64_MAX, 0);
    int64_t from = xxl_msg_int (msg, NULL, "fromLineNum", 0, 1, INT32_MAX, 1);
    if (xxl_msg_error (msg)) {
        s_reply (self, link, xxl_msg_id (msg), XXL_BAD_REQUEST, xxl_msg_error (msg));
        return;
    }
    //  A running in-process run may still hold its first lines: have them
    //  written, so that the file shows what the run logged so far
    int running = xxl_executor_log_sync (self->executor, log_id);
    char err [512];
    int to_line = (int) from - 1;
    char *content = xxl_logread (self->config.logdir, log_id, date, (int) from,
                                     &to_line, err, sizeof err);
    if (!content && running)
        content = strdup ("");          //  queued: no file yet
    if (!content) {
        s_reply (self, link, xxl_msg_id (msg), XXL_NOT_FOUND, err);
        return;
    }
    s_reply_begin (self, xxl_msg_id (msg), XXL_OK, NULL);
    xxl_enc_key (self->enc, "content");
    xxl_enc_map_begin (self->enc);
    xxl_enc_kint (self->enc, "fromLineNum", from);
    xxl_enc_kint (self->enc, "toLineNum", to_line);
    xxl_enc_kstr (self->enc, "logContent", content);
    //  Ended: the run finished and this page reached the end of the file
    int ended = 0;
    if (!running) {
        int next_line = to_line;
        char *more = xxl_logread_max (self->config.logdir, log_id, date, to_line + 1, 1,
                                          &next_line, err, sizeof err);
        ended = !more || next_line == to_line;
        free (more);
    }
    xxl_enc_kbool (self->enc, "isEnd", ended);
    xxl_enc_map_end (self->enc);
    s_send (self, link);
    free (content);
}

static void
s_handle_request (agent_t *self, link_t *link, xxl_msg_t *msg)
{
    const char *type = xxl_msg_type (msg);
    if (streq (type, "REPLY")) {
        const msgpack_object *code_obj = xxl_msg_get (xxl_msg_root (msg), "code");
        int code = code_obj && code_obj->type == MSGPACK_OBJECT_POSITIVE_INTEGER
                   && code_obj->via.u64 < 1000? (int) code_obj->via.u64: XXL_FAILURE;
        const char *text = xxl_msg_str (msg, NULL, "msg", 0, 4096, NULL);
        if (xxl_msg_id (msg) == link->register_id) {
            if (code == XXL_OK) {
                if (!link->up)
                    zsys_info ("agent: registered with %s as %s/%s", link->endpoint,
                               self->config.app, self->address);
                link->up = true;
                s_clock_sample (self, link, msg);
            }
            else
                zsys_error ("agent: %s refused registration: %s", link->endpoint,
                            text? text: "");
            link->register_id = 0;
        }
        else
            s_callbacks_acked (self, xxl_msg_id (msg), code, text);
        return;
    }
    if (streq (type, "RUN") && xxl_msg_get (xxl_msg_root (msg), "runs"))
        s_handle_run_batch (self, link, msg);
    else
    if (streq (type, "RUN"))
        s_handle_run (self, link, msg);
    else
    if (streq (type, "BEAT")) {
        //  FAILOVER's probe: passed by while draining or while no run
        //  that needs a thread can be taken (busy)
        char busy [256];
        if (self->draining)
            s_reply (self, link, xxl_msg_id (msg), XXL_CODE_FAIL, "xxl-agent is stopping");
        else
        if (xxl_executor_full (self->executor, busy, sizeof busy))
            s_reply (self, link, xxl_msg_id (msg), XXL_CODE_FAIL, busy);
        else
            s_reply (self, link, xxl_msg_id (msg), XXL_OK, NULL);
    }
    else
    if (streq (type, "IDLE_BEAT")) {
        int64_t job_id = xxl_msg_int (msg, NULL, "jobId", 1, 1, INT64_MAX, 0);
        if (xxl_msg_error (msg))
            s_reply (self, link, xxl_msg_id (msg), XXL_BAD_REQUEST, xxl_msg_error (msg));
        else
        if (self->draining)
            s_reply (self, link, xxl_msg_id (msg), XXL_CODE_FAIL, "xxl-agent is stopping");
        else
        if (xxl_executor_busy (self->executor, job_id))
            s_reply (self, link, xxl_msg_id (msg), XXL_CODE_FAIL,
                     "job thread is running or has trigger queue.");
        else {
            char busy [256];
            if (xxl_executor_full (self->executor, busy, sizeof busy))
                s_reply (self, link, xxl_msg_id (msg), XXL_CODE_FAIL, busy);
            else
                s_reply (self, link, xxl_msg_id (msg), XXL_OK, NULL);
        }
    }
    else
    if (streq (type, "KILL")) {
        int64_t job_id = xxl_msg_int (msg, NULL, "jobId", 1, 1, INT64_MAX, 0);
        if (xxl_msg_error (msg))
            s_reply (self, link, xxl_msg_id (msg), XXL_BAD_REQUEST, xxl_msg_error (msg));
        else
        if (xxl_executor_kill (self->executor, job_id, "killed by a user (log kill)") == 0)
            s_reply (self, link, xxl_msg_id (msg), XXL_OK, NULL);
        else
            s_reply (self, link, xxl_msg_id (msg), XXL_CODE_FAIL, "job thread is not running");
    }
    else
    if (streq (type, "LOG"))
        s_handle_log (self, link, msg);
    else {
        char text [128];
        snprintf (text, sizeof text, "unknown message type '%s'", type);
        s_reply (self, link, xxl_msg_id (msg), XXL_BAD_REQUEST, text);
    }
}

static void
s_handle_link (agent_t *self, link_t *link)
{
    void *handle = zsock_resolve (link->dealer);
    for (int i = 0; i < 1000; i++) {
        zmq_msg_t frame;
        zmq_msg_init (&frame);
        if (zmq_msg_recv (&frame, handle, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close (&frame);
            return;
        }
        link->heard = zclock_mono ();
        char reason [256];
        uint64_t id = 0;
        xxl_msg_t *msg = xxl_msg_decode (zmq_msg_data (&frame), zmq_msg_size (&frame),
                                         &id, reason, sizeof reason);
        int more = zmq_msg_more (&frame);
        zmq_msg_close (&frame);
        if (more) {
            //  Not one frame: drop the rest of it
            zsys_warning ("agent: multi-frame message from %s dropped", link->endpoint);
            while (more) {
                zmq_msg_init (&frame);
                if (zmq_msg_recv (&frame, handle, ZMQ_DONTWAIT) < 0)
                    more = 0;
                else
                    more = zmq_msg_more (&frame);
                zmq_msg_close (&frame);
            }
            xxl_msg_destroy (&msg);
            continue;
        }
        if (!msg) {
            zsys_warning ("agent: bad message from %s: %s", link->endpoint, reason);
            if (id)
                s_reply (self, link, id, XXL_BAD_REQUEST, reason);
            continue;
        }
        s_handle_request (self, link, msg);
        xxl_msg_destroy (&msg);
    }
}

//  A failed handshake on link: logged at once the first time, then at
//  most once every XXL_HANDSHAKE_LOG ms with the count since
static void
s_handshake_failed (agent_t *self, link_t *link, uint16_t event, uint32_t value)
{
    link->handshakes_failed++;
    int64_t now = zclock_mono ();
    if (link->handshake_logged && now - link->handshake_logged < XXL_HANDSHAKE_LOG)
        return;
    char why [256];
    bool final;
    bool curve = self->cert != NULL;
    xxl_transport_handshake_failed (event, value, curve, why, sizeof why, &final);
    size_t used = strlen (why);
    if (curve && event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL)
        snprintf (why + used, sizeof why - used, "; nothing from it is taken");
    if (link->handshakes_failed > 1)
        zsys_error ("agent: %zu handshakes with %s failed in the last %d s; the last: %s",
                    link->handshakes_failed, link->endpoint, XXL_HANDSHAKE_LOG / 1000, why);
    else
        zsys_error ("agent: the %shandshake with %s failed: %s", curve? "CURVE ": "",
                    link->endpoint, why);
    link->handshakes_failed = 0;
    link->handshake_logged = now;
}

//  A socket event: re-register at once when a connection comes up (after
//  the ZMTP handshake: with ZMQ_IMMEDIATE nothing can be sent before); a
//  failed handshake is logged.  A protocol or authentication failure,
//  during the handshake or after it (a message that does not decrypt),
//  marks the link broken: libzmq 4.3.4 never reconnects after one, or
//  (a CURVE message that does not decrypt, with this monitor listening)
//  leaves the connection open and reads nothing more from it.  A broken
//  link is replaced at the next beat (s_link_replace)
static void
s_handle_monitor (agent_t *self, link_t *link)
{
    uint16_t event;
    uint32_t value;
    while (xxl_transport_event (link->monitor, &event, &value) == 0) {
        if (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
            link->handshakes_failed = 0;
            link->handshake_logged = 0;
            link->connected = true;
            link->heard = zclock_mono ();
            s_register (self, link, self->draining);    //  stopping: goodbye again
        }
        else
        if (event & (ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
                     | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)) {
            if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL && link->connected) {
                //  Past the handshake: a message that does not decrypt,
                //  or one that breaks ZMTP
                if (!link->broken_open)
                    zsys_error ("agent: a message from %s broke its connection (ZMTP"
                                " protocol error 0x%x)", link->endpoint, value);
                link->broken_open = true;
            }
            else
                s_handshake_failed (self, link, event, value);
            if (event != ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL)
                link->broken = true;
        }
        else
        if (event == ZMQ_EVENT_DISCONNECTED) {
            if (link->up)
                zsys_warning ("agent: lost %s; reconnecting", link->endpoint);
            link->up = false;
            link->connected = false;
            for (size_t i = 0; i < XXL_CALLBACK_INFLIGHT; i++)
                if (self->batches [i].id && self->batches [i].link == (size_t) (link - self->links))
                    self->batches [i].deadline = 0;     //  resend elsewhere now
        }
    }
}

//  Closes a link's socket and its monitor; both are NULL after
static void
s_link_close (zsock_t **dealer_p, void **monitor_p)
{
    if (*monitor_p) {
        if (*dealer_p)
            zmq_socket_monitor (zsock_resolve (*dealer_p), NULL, 0);
        zmq_close (*monitor_p);
        *monitor_p = NULL;
    }
    zsock_destroy (dealer_p);
}

//  Makes a link's socket to endpoint (xxl_transport, role
//  XXL_ROLE_AGENT_LINK) with its monitor, which tells of each new
//  connection (it must REGISTER) and of failed handshakes.  0, or -1 with
//  why set and nothing left open
static int
s_link_open (agent_t *self, const char *endpoint, zsock_t **dealer_p, void **monitor_p,
             char *why, size_t whylen)
{
    char reason [256] = "";
    zsock_t *dealer = xxl_transport_new (XXL_ROLE_AGENT_LINK);
    if (dealer && self->cert
    &&  xxl_transport_curve (dealer, XXL_ROLE_AGENT_LINK, self->cert, self->scheduler_key,
                             reason, sizeof reason)) {
        snprintf (why, whylen, "cannot secure the link to '%s': %s", endpoint, reason);
        zsock_destroy (&dealer);
        return -1;
    }
    void *monitor = dealer
                  ? xxl_transport_monitor (dealer, ZMQ_EVENT_HANDSHAKE_SUCCEEDED
                                                   | ZMQ_EVENT_DISCONNECTED
                                                   | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL
                                                   | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
                                                   | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
                  : NULL;
    if (!dealer || !monitor
    ||  xxl_transport_attach (dealer, XXL_ROLE_AGENT_LINK, endpoint, NULL, 0,
                              reason, sizeof reason)) {
        if (!dealer || !monitor)
            snprintf (reason, sizeof reason, "%s", zmq_strerror (zmq_errno ()));
        snprintf (why, whylen, "invalid scheduler endpoint '%s' (%s)", endpoint, reason);
        s_link_close (&dealer, &monitor);
        return -1;
    }
    *dealer_p = dealer;
    *monitor_p = monitor;
    return 0;
}

//  Replaces a link's socket with a new one to the same endpoint.  The old
//  one goes at once (linger 0) with its connection and what it had not
//  sent: a REGISTER or CALLBACK goes again (a batch in flight on it at
//  once, elsewhere if another scheduler is up), a REPLY is lost as on a
//  lost connection.  -1 (logged) when no new socket can be made: the old
//  one stays, for another try at the next beat
static int
s_link_replace (agent_t *self, link_t *link)
{
    zsock_t *dealer = NULL;
    void *monitor = NULL;
    char why [512];
    if (s_link_open (self, link->endpoint, &dealer, &monitor, why, sizeof why)) {
        zsys_error ("agent: cannot replace the link to %s: %s", link->endpoint, why);
        return -1;
    }
    if (link->broken_open)
        zsys_warning ("agent: the connection to %s failed for good; connecting again",
                      link->endpoint);
    else
    if (!link->broken)
        zsys_warning ("agent: nothing from %s for %" PRId64 " s; connecting again",
                      link->endpoint, (zclock_mono () - link->heard) / 1000);
    zsock_set_linger (link->dealer, 0);
    s_link_close (&link->dealer, &link->monitor);
    link->dealer = dealer;
    link->monitor = monitor;
    link->up = false;
    link->connected = false;
    link->broken = false;
    link->broken_open = false;
    link->register_id = 0;
    link->heard = zclock_mono ();
    for (size_t i = 0; i < XXL_CALLBACK_INFLIGHT; i++)
        if (self->batches [i].id && self->batches [i].link == (size_t) (link - self->links))
            self->batches [i].deadline = 0;     //  resend now
    return 0;
}

//  --------------------------------------------------------------------

typedef struct {
    xxl_journal_entry_t *entries;       //  sorted by logId
    size_t count;
} lost_t;

static int
s_entry_cmp (const void *key, const void *entry)
{
    int64_t a = *(const int64_t *) key, b = ((const xxl_journal_entry_t *) entry)->log_id;
    return a < b? -1: a > b;
}

static int
s_lost_match (void *arg, const char *life, int64_t log_id)
{
    lost_t *lost = (lost_t *) arg;
    const xxl_journal_entry_t *entry = (const xxl_journal_entry_t *)
        bsearch (&log_id, lost->entries, lost->count, sizeof *entry, s_entry_cmp);
    char token [48];
    if (entry)
        snprintf (token, sizeof token, "%d.%" PRId64, entry->pid, entry->start_ms);
    return entry && streq (token, life);
}

//  The runs an earlier life accepted and never gave a result for (queued
//  or running when it died): what is left of their processes is killed
//  (had the guardian been killed too), and each is reported failed with a
//  result "lost: ..." through the spool, unless its result is in the spool
//  already.  Then they are done in the journal.
static void
s_report_lost (agent_t *self)
{
    lost_t lost = { NULL, 0 };
    lost.entries = xxl_journal_lost (self->journal, &lost.count);
    if (!lost.count)
        return;
    int killed = xxl_guard_reap (s_lost_match, &lost, 0);
    xxl_result_t *results = (xxl_result_t *) calloc (lost.count, sizeof (xxl_result_t));
    int64_t *log_ids = (int64_t *) calloc (lost.count, sizeof (int64_t));
    size_t reported = 0;
    for (size_t i = 0; results && log_ids && i < lost.count; i++) {
        const xxl_journal_entry_t *entry = &lost.entries [i];
        log_ids [i] = entry->log_id;
        if (xxl_spool_pending (self->spool, entry->log_id))
            continue;
        xxl_result_t *result = &results [reported++];
        result->log_id = entry->log_id;
        result->log_date_time = entry->log_date_time;
        result->code = XXL_CODE_FAIL;
        result->msg = zsys_sprintf ("lost: xxl-agent restarted while this run was queued or"
                                    " running (previous pid %d)", entry->pid);
        xxl_runlog_append (self->config.logdir, entry->log_id, entry->log_date_time,
                           result->msg);
    }
    if (!results || !log_ids)
        zsys_error ("agent: out of memory; %zu lost run(s) not reported", lost.count);
    else
    if (reported && xxl_spool_add_batch (self->spool, results, reported))
        zsys_error ("agent: cannot write the %zu lost run(s) to the spool; reported at the"
                    " next start", reported);
    else {
        xxl_journal_done (self->journal, log_ids, lost.count);
        xxl_journal_flush (self->journal);
        zsys_warning ("agent: %zu run(s) of an earlier life lost (queued or running when it"
                      " ended): reported failed; %d leftover process(es) killed",
                      reported, killed);
    }
    for (size_t i = 0; results && i < reported; i++)
        zstr_free (&results [i].msg);
    free (results);
    free (log_ids);
    free (lost.entries);
}

void
xxl_agent_config_defaults (xxl_agent_config_t *config)
{
    memset (config, 0, sizeof *config);
    config->schedulers = "tcp://127.0.0.1:7071";
    config->plugins = XXL_PKGLIBDIR "/handlers";
    config->logdir = "/var/log/xxl/jobhandler";
    config->access_token = "";
    config->beat_s = 30;
    config->callback_timeout_ms = 5000;
    config->run_lease_s = 600;
    config->allow_glue = 1;
    config->log_retention_days = 30;
    config->log_pack = 1;
    config->run_batch = XXL_RUN_BATCH_MAX;
    config->drain_ms = 30000;
}

static void
s_agent_destroy (agent_t **self_p)
{
    agent_t *self = *self_p;
    if (!self)
        return;
    xxl_executor_destroy (&self->executor);
    xxl_handlers_destroy (&self->handlers);
    xxl_spool_destroy (&self->spool);
    xxl_journal_destroy (&self->journal);
    //  Last: the guardian reads the journal once we closed its pipe
    xxl_guard_destroy (&self->guard);
    for (size_t i = 0; i < self->link_count; i++) {
        link_t *link = &self->links [i];
        s_link_close (&link->dealer, &link->monitor);
        free (link->endpoint);
    }
    free (self->links);
    zcert_destroy (&self->cert);
    s_callbacks_free (&self->waiting);
    for (size_t i = 0; i < XXL_CALLBACK_INFLIGHT; i++)
        s_callbacks_free (&self->batches [i].items);
    xxl_enc_destroy (&self->enc);
    free (self);
    *self_p = NULL;
}

static agent_t *
s_agent_new (zsock_t *pipe, const xxl_agent_config_t *config)
{
    if (!config->app || !*config->app) {
        zsys_error ("agent: an app name (--app) is required");
        return NULL;
    }
    agent_t *self = (agent_t *) zmalloc (sizeof (agent_t));
    //  (before any link: the first REGISTER is sent after it)
    self->reached = s_boot_ms ();
    self->config = *config;
    self->pipe = pipe;
    self->enc = xxl_enc_new ();
    //  The keys, before anything else is opened
    bool has_cert = config->cert && *config->cert;
    bool has_key = config->scheduler_key && *config->scheduler_key;
    char why [512] = "";
    if (has_cert != has_key)
        snprintf (why, sizeof why, "%s needs %s too (both, or neither for plain text)",
                  has_cert? "--cert": "--scheduler-key", has_cert? "--scheduler-key": "--cert");
    else
    if (has_cert) {
        self->cert = xxl_cert_load_secret (config->cert, why, sizeof why);
        if (self->cert)
            xxl_cert_load_public (config->scheduler_key, self->scheduler_key, why, sizeof why);
    }
    if (*why) {
        zsys_error ("agent: %s", why);
        s_agent_destroy (&self);
        return NULL;
    }
    self->next_id = (uint64_t) zclock_time () << 16;
    if (config->address && *config->address)
        snprintf (self->address, sizeof self->address, "%s", config->address);
    else
    if (gethostname (self->address, sizeof self->address - 1))
        strcpy (self->address, "localhost");

    if (zsys_dir_create ("%s", config->logdir)) {
        zsys_error ("agent: cannot create log folder %s", config->logdir);
        s_agent_destroy (&self);
        return NULL;
    }
    //  Results a previous run of this agent could not deliver
    char *spool_path = zsys_sprintf ("%s/callback.spool", config->logdir);
    self->spool = xxl_spool_new (spool_path);
    if (!self->spool) {
        zsys_error ("agent: cannot open the callback spool %s", spool_path);
        zstr_free (&spool_path);
        s_agent_destroy (&self);
        return NULL;
    }
    zstr_free (&spool_path);
    //  The logIds accepted by earlier lives; the runs they lost
    char *journal_path = zsys_sprintf ("%s/accepted.journal", config->logdir);
    self->journal = xxl_journal_new (journal_path, 0);
    if (!self->journal) {
        zsys_error ("agent: cannot open the journal %s", journal_path);
        zstr_free (&journal_path);
        s_agent_destroy (&self);
        return NULL;
    }
    s_report_lost (self);
    //  If we die, our runs die with us
    self->guard = xxl_guard_new (NULL, journal_path, xxl_journal_life (self->journal));
    if (!self->guard)
        zsys_warning ("agent: no guardian: runs would outlive a crash of the agent");
    zstr_free (&journal_path);
    for (const xxl_result_t *result = xxl_spool_first (self->spool); result;
         result = xxl_spool_next (self->spool))
        s_queue_result (self, result, true);
    if (self->waiting.count)
        zsys_info ("agent: %zu result(s) from the spool to deliver", self->waiting.count);
    self->handlers = xxl_handlers_new (config->plugins);
    xxl_executor_config_t exec_config = { 0 };
    exec_config.logdir = config->logdir;
    exec_config.allow_glue = config->allow_glue;
    exec_config.in_process = config->in_process;
    exec_config.idle_reap_s = 90;
    exec_config.log_pack = config->log_pack;
    exec_config.runner = config->runner;
    exec_config.journal = self->journal;
    exec_config.run_marker = xxl_journal_life (self->journal);
    exec_config.threads_max = config->threads_max;
    exec_config.waiting_max = config->waiting_max;
    self->executor = self->handlers? xxl_executor_new (&exec_config, self->handlers): NULL;
    if (!self->executor) {
        zsys_error ("agent: cannot start the executor");
        s_agent_destroy (&self);
        return NULL;
    }
    //  One link per scheduler endpoint
    char *list = strdup (config->schedulers), *save = NULL;
    size_t alloc = 1;
    for (const char *p = list; *p; p++)
        alloc += *p == ',';
    self->links = (link_t *) calloc (alloc, sizeof (link_t));
    bool warned = false;                //  of a plain-text link off this host
    for (char *token = strtok_r (list, ",", &save); token; token = strtok_r (NULL, ",", &save)) {
        while (*token == ' ')
            token++;
        if (!*token)
            continue;
        link_t *link = &self->links [self->link_count];
        link->endpoint = strdup (token);
        self->link_count++;
        if (!link->endpoint
        ||  s_link_open (self, token, &link->dealer, &link->monitor, why, sizeof why)) {
            zsys_error ("agent: %s", link->endpoint? why: "out of memory");
            free (list);
            s_agent_destroy (&self);
            return NULL;
        }
        link->heard = zclock_mono ();
        link->clock_offset = zclock_time () - s_boot_ms ();
        if (!self->cert && !xxl_transport_loopback (token) && !warned) {
            zsys_warning ("agent: %s is not a loopback endpoint and this agent has no keys:"
                          " its link is plain text that anyone on the way can read or forge"
                          " (give --cert and --scheduler-key)", token);
            warned = true;
        }
    }
    free (list);
    if (self->link_count == 0) {
        zsys_error ("agent: no scheduler endpoint given (--scheduler)");
        s_agent_destroy (&self);
        return NULL;
    }
    zsys_info ("xxl-agent %s: app %s, address %s, %zu handler(s), schedulers %s%s%s",
               PACKAGE_VERSION, config->app, self->address,
               xxl_handlers_size (self->handlers), config->schedulers,
               self->cert? ", CURVE to key ": "", self->cert? self->scheduler_key: "");
    self->next_beat = zclock_mono () + (int64_t) config->beat_s * 1000;
    self->next_clean = zclock_mono () + 60 * 1000;
    return self;
}

//  The run lease (docs/design.md, "The time model"): once no scheduler
//  has answered a REGISTER sent in the last run_lease seconds, the
//  runs here can no longer be reported, and a scheduler may declare them
//  lost and retry them elsewhere once the lease has passed since it
//  last heard from us.  So they are stopped now (their process groups
//  killed), each ending 500 "stopped: no scheduler reachable for N s",
//  spooled as any result; and new runs are refused until a scheduler
//  answers again.  Returns when the lease runs out next (zclock_mono ms,
//  for the loop's poll), or INT64_MAX when it is off.  Counted on
//  s_boot_ms's clock, which goes on while the host is suspended.
static int64_t
s_lease_check (agent_t *self)
{
    if (self->config.run_lease_s <= 0)
        return INT64_MAX;
    int64_t now = s_boot_ms ();
    int64_t until = self->reached + (int64_t) self->config.run_lease_s * 1000;
    if (now < until) {
        if (self->lease_out)
            zsys_info ("agent: a scheduler answered again: runs are taken again");
        self->lease_out = false;
        return zclock_mono () + (until - now);
    }
    if (!self->lease_out) {
        self->lease_out = true;
        char reason [160];
        snprintf (reason, sizeof reason, "stopped: no scheduler reachable for %" PRId64 " s",
                  (now - self->reached) / 1000);
        size_t stopped = xxl_executor_kill_all (self->executor, reason);
        zsys_warning ("agent: no scheduler answered for %" PRId64 " s (run lease %d s):"
                      " %zu job(s)' runs stopped, new runs refused until one answers",
                      (now - self->reached) / 1000, self->config.run_lease_s, stopped);
    }
    return INT64_MAX;
}

//  A clean stop (docs/agent-execution.md): refuse new runs, say goodbye
//  (no new work is routed here), let what was accepted (queued and
//  running) finish for up to drain_ms while results go out and requests
//  (LOG, KILL) are answered; kill what is left, its results saying so;
//  give results a last 2 s to go.  One more SIGTERM/SIGINT (config
//  interrupts) ends the wait at once.
static void
s_drain (agent_t *self)
{
    self->draining = true;
    for (size_t i = 0; i < self->link_count; i++)
        s_register (self, &self->links [i], 1);
    volatile sig_atomic_t *interrupts = self->config.interrupts;
    sig_atomic_t signals_at = interrupts? *interrupts: 0;
    bool cut = false;
    int64_t started = zclock_mono ();
    int64_t drain_until = started + self->config.drain_ms;
    if (xxl_executor_pending (self->executor))
        zsys_info ("agent: stopping; new runs refused; %zu run(s) queued or running, waiting"
                   " up to %d ms for them (agent/drain_s; another SIGTERM stops at once)",
                   xxl_executor_pending (self->executor), self->config.drain_ms);
    size_t max = 1 + 2 * self->link_count;
    zmq_pollitem_t *wait = (zmq_pollitem_t *) calloc (max, sizeof (zmq_pollitem_t));
    //  Phase 1, the drain; phase 2, the last delivery of results
    for (int phase = 1; phase <= 2 && wait; phase++) {
        int64_t until = phase == 1? drain_until: zclock_mono () + 2000;
        while (zclock_mono () < until) {
            if (interrupts && *interrupts != signals_at) {
                cut = true;
                break;
            }
            if (phase == 1 && !xxl_executor_pending (self->executor))
                break;
            if (phase == 2 && !s_callbacks_count (self))
                break;
            s_callbacks_send (self);
            size_t n = 0;
            wait [n++] = (zmq_pollitem_t) { NULL, xxl_executor_fd (self->executor), ZMQ_POLLIN, 0 };
            for (size_t i = 0; i < self->link_count; i++) {
                wait [n++] = (zmq_pollitem_t) { zsock_resolve (self->links [i].dealer), 0, ZMQ_POLLIN, 0 };
                wait [n++] = (zmq_pollitem_t) { self->links [i].monitor, 0, ZMQ_POLLIN, 0 };
            }
            int64_t left = until - zclock_mono ();
            if (zmq_poll (wait, (int) n, left < 100? (long) (left > 0? left: 0): 100) > 0)
                for (size_t i = 0; i < self->link_count; i++) {
                    if (wait [2 + 2 * i].revents & ZMQ_POLLIN)
                        s_handle_monitor (self, &self->links [i]);
                    if (wait [1 + 2 * i].revents & ZMQ_POLLIN)
                        s_handle_link (self, &self->links [i]);
                }
            s_take_results (self);
            s_callbacks_check (self);
        }
        if (phase == 1) {
            size_t left = xxl_executor_pending (self->executor);
            char reason [160];
            if (cut)
                snprintf (reason, sizeof reason, "xxl-agent stopped: a second stop signal ended"
                          " its drain after %" PRId64 " ms", zclock_mono () - started);
            else
                snprintf (reason, sizeof reason, "xxl-agent stopped: not finished within the"
                          " drain of %d ms (agent/drain_s)", self->config.drain_ms);
            if (left)
                zsys_warning ("agent: %zu run(s) still queued or running; killed (%s)", left,
                              reason);
            xxl_executor_stop_why (self->executor, reason);
            s_take_results (self);
        }
        if (cut) {
            s_callbacks_send (self);    //  one try; unacknowledged results
            break;                      //  stay in the spool for the next start
        }
    }
    free (wait);
    if (s_callbacks_count (self))
        zsys_info ("agent: %zu result(s) not delivered yet; they stay in the spool",
                   s_callbacks_count (self));
}

void
xxl_agent_actor (zsock_t *pipe, void *args)
{
    xxl_agent_config_t *config = (xxl_agent_config_t *) args;
    agent_t *self = s_agent_new (pipe, config);
    config->status = self? 0: -1;
    zsock_signal (pipe, self? 0: 1);
    if (!self)
        return;

    size_t count = 3 + 2 * self->link_count;
    zmq_pollitem_t *items = (zmq_pollitem_t *) calloc (count, sizeof (zmq_pollitem_t));
    while (!self->terminated) {
        size_t n = 0;
        items [n++] = (zmq_pollitem_t) { zsock_resolve (pipe), 0, ZMQ_POLLIN, 0 };
        items [n++] = (zmq_pollitem_t) { NULL, xxl_executor_fd (self->executor), ZMQ_POLLIN, 0 };
        int watch = xxl_handlers_watch_fd (self->handlers);
        if (watch >= 0)
            items [n++] = (zmq_pollitem_t) { NULL, watch, ZMQ_POLLIN, 0 };
        size_t first_link = n;
        for (size_t i = 0; i < self->link_count; i++) {
            items [n++] = (zmq_pollitem_t) { zsock_resolve (self->links [i].dealer), 0, ZMQ_POLLIN, 0 };
            items [n++] = (zmq_pollitem_t) { self->links [i].monitor, 0, ZMQ_POLLIN, 0 };
        }
        //  Wake for the beat, for the callback deadline, and each second
        //  while results wait for a scheduler
        int64_t now = zclock_mono ();
        int64_t wake = self->next_beat;
        for (size_t i = 0; i < XXL_CALLBACK_INFLIGHT; i++)
            if (self->batches [i].id && self->batches [i].deadline < wake)
                wake = self->batches [i].deadline;
        if (s_callbacks_count (self) && now + 1000 < wake)
            wake = now + 1000;
        if (self->waiting.count && self->callback_after > now && self->callback_after < wake)
            wake = self->callback_after;
        int64_t lease_until = s_lease_check (self);
        if (lease_until < wake)
            wake = lease_until;
        long timeout = wake > now? (long) (wake - now): 0;
        if (zmq_poll (items, (int) n, timeout) < 0) {
            if (zmq_errno () == EINTR)
                continue;
            break;
        }
        if (items [0].revents & ZMQ_POLLIN) {
            char *command = zstr_recv (pipe);
            if (!command || streq (command, "$TERM"))
                self->terminated = true;
            zstr_free (&command);
        }
        if (items [1].revents & ZMQ_POLLIN)
            s_take_results (self);
        if (watch >= 0 && (items [2].revents & ZMQ_POLLIN))
            xxl_handlers_rescan (self->handlers);
        for (size_t i = 0; i < self->link_count; i++) {
            if (items [first_link + 2 * i + 1].revents & ZMQ_POLLIN)
                s_handle_monitor (self, &self->links [i]);
            if (items [first_link + 2 * i].revents & ZMQ_POLLIN)
                s_handle_link (self, &self->links [i]);
        }
        now = zclock_mono ();
        if (now >= self->next_beat) {
            for (size_t i = 0; i < self->link_count; i++) {
                link_t *link = &self->links [i];
                //  A REGISTER unanswered for a whole beat: the link is down;
                //  connected and silent for XXL_LINK_SILENCE too, or
                //  broken: it gets a new socket, which registers once its
                //  connection is up
                bool unanswered = link->register_id
                               && now - link->register_sent >= (int64_t) self->config.beat_s * 1000;
                if (unanswered)
                    link->up = false;
                if (link->broken
                ||  (unanswered && link->connected && now - link->heard >= XXL_LINK_SILENCE)) {
                    if (s_link_replace (self, link) == 0)
                        continue;
                }
                s_register (self, link, 0);
            }
            self->next_beat = now + (int64_t) self->config.beat_s * 1000;
        }
        if (now >= self->next_clean) {
            xxl_runlog_clean (self->config.logdir, self->config.log_retention_days, zclock_time ());
            self->next_clean = now + 3600 * 1000;
        }
        s_lease_check (self);
        s_callbacks_check (self);
        s_callbacks_send (self);
    }
    s_drain (self);
    free (items);
    s_agent_destroy (&self);
}
