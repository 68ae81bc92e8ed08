/*  xxl_agent.c -- the agent actor: its loop, the requests it answers.

    The actor owns agent_t (xxl_agent_int.h) and runs one loop, a turn at
    a time, in named phases (xxl_agent_actor): the poll set is built
    (s_poll_build: pipe, the executor's result fd, the plugin folder's
    inotify fd, each link's DEALER and monitor, each in a named slot) and
    polled until the next deadline (s_turn_timeout); then each ready
    socket is read (s_read_pipe, s_read_results, s_read_plugins,
    s_read_links); then the timed work: the time the loop stood still
    taken out of its links' silence (s_turn_stall), the beat (s_turn_beat:
    REGISTER on every link, a silent or broken link replaced), log retention
    (s_turn_clean), the run lease (s_lease_check), and the callbacks
    (s_turn_callbacks).  A clean stop drains (s_drain) with the same
    reading phases.

    Requests (RUN, BEAT, IDLE_BEAT, KILL, LOG) are answered on the link
    they came from; a REPLY answers our REGISTER (the scheduler's clock,
    the run lease) or a CALLBACK (xxl_agent_callback.h).  The links are
    xxl_agent_link.h's, the results' way to a scheduler
    xxl_agent_callback.h's; calls go from here to them, never back.
    Everything runs on the actor's thread.
*/

#include "xxl_agent_int.h"
#include "xxl_agent_callback.h"
#include "xxl_agent_link.h"
#include "xxl_agent_lost.h"
#include "xxl_cert.h"
#include "xxl_local.h"
#include "xxl_logread.h"
#include "xxl_runlog.h"
#include "xxl_transport.h"
#include "xxl/handler.h"

#include <inttypes.h>
#include <unistd.h>

#define XXL_LINK_READ_MAX   1000            //  messages read from a link per turn

static int64_t s_lease_check (agent_t *self);

//  A REGISTER answered: it reached a scheduler, and the run lease counts
//  from its send (the latest such send counts)
static void
s_reached (agent_t *self, link_t *link)
{
    if (link->register_sent_boot >= self->reached) {
        self->reached = link->register_sent_boot;
        if (self->guard && self->config.run_lease_s > 0)
            xxl_guard_lease (self->guard, self->reached + (int64_t) self->config.run_lease_s * 1000);
        //  (at once: RUNs that follow this reply on the link are taken)
        s_lease_check (self);
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

//  The answer to a RUN item whose logId this agent holds (s_holds), the
//  item being the run (job_id, date) (0: not given): 200 "already
//  accepted" for the same run or one not known (a re-send), 409 "already
//  used by another run" when the journal holds the id for another run (a
//  store restored from a backup handed it out again: xxl_journal_check).
//  Nothing runs either way.
static int
s_held_answer (agent_t *self, int64_t log_id, int64_t job_id, int64_t date, char *reason,
               size_t reasonlen)
{
    if (xxl_journal_check (self->journal, log_id, job_id, date) == XXL_JOURNAL_OTHER) {
        snprintf (reason, reasonlen, XXL_EXECUTOR_OTHER_RUN_FMT, (long long) log_id);
        self->other_run++;
        return XXL_CONFLICT;
    }
    snprintf (reason, reasonlen, "logId %" PRId64 " already accepted", log_id);
    self->repeated++;
    return XXL_OK;
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
        if (s_holds (self, trigger.log_id))
            return s_held_answer (self, trigger.log_id, trigger.job_id, trigger.log_date_time,
                                  reason, reasonlen);
        snprintf (reason, reasonlen, "stopping: xxl-agent %.200s refused the run: it is"
                  " draining its runs after SIGTERM and takes no new one", self->address);
        zsys_info ("agent: refused log %" PRId64 ": stopping", trigger.log_id);
        return XXL_CODE_FAIL;
    }
    if (xxl_executor_run (self->executor, &trigger, reason, reasonlen) == 0) {
        //  (its result goes back to the scheduler that sent it, whose rows
        //  they are: xxl_agent_callback.c)
        if (self->origins)
            xxl_imap_put (self->origins, trigger.log_id, (void *) (uintptr_t) (self->run_link + 1));
        return XXL_OK;
    }
    if (strstr (reason, "already accepted")) {
        //  A scheduler re-sent after its restart: the run is ours already
        self->repeated++;
        return XXL_OK;
    }
    if (strstr (reason, XXL_EXECUTOR_OTHER_RUN)) {
        //  Another run's id: refused, for the scheduler to fail (it never
        //  runs here)
        self->other_run++;
        return XXL_CONFLICT;
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
    int64_t now = xxl_agent_boot_ms () + link->clock_offset;
    if (now > expire) {
        snprintf (reason, reasonlen, "expired: the scheduler gave up on this run %" PRId64
                  " ms before the agent read it (expireTime %" PRId64 ")", now - expire, expire);
        return XXL_CODE_FAIL;
    }
    if (self->lease_out) {
        //  (the scheduler may have given the run up for lost already)
        snprintf (reason, reasonlen, "stopped: no scheduler reachable for %" PRId64 " s (the"
                  " run lease ran out; runs are taken again once a scheduler answers)",
                  (xxl_agent_boot_ms () - self->reached) / 1000);
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
        //  (which run it is, when the item says: an ask of just the logId
        //  does not; ill-typed, not known)
        int64_t job_id = xxl_msg_int_lax (msg, map, "jobId", 1, INT64_MAX, 0);
        int64_t date = xxl_msg_int_lax (msg, map, "logDateTime", 0, INT64_MAX, 0);
        return s_held_answer (self, log_id, job_id, date, reason, reasonlen);
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
    self->other_run = 0;
    self->run_link = (size_t) (link - self->links);
    if (code) {
        code = s_expired_item (self, msg, NULL, code, expired, reason, sizeof reason);
        if (self->other_run)
            zsys_warning ("agent: RUN %" PRIu64 " (expired) refused: %s (its journal holds the"
                          " logId for another run)", xxl_msg_id (msg), reason);
        else
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
        if (self->other_run)
            zsys_warning ("agent: RUN %" PRIu64 " refused: %s (its journal holds the logId for"
                          " another run: a store restored from a backup without moving its log"
                          " ids?)", xxl_msg_id (msg), reason);
        if (self->busy_refused)
            zsys_info ("agent: RUN %" PRIu64 " refused: %s", xxl_msg_id (msg), reason);
    }
    xxl_agent_reply (self, link, xxl_msg_id (msg), code, *reason? reason: NULL);
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
        xxl_agent_reply (self, link, xxl_msg_id (msg), XXL_BAD_REQUEST, text);
        return;
    }
    char expired [512];
    int expired_code = s_expired (self, link, msg, expired, sizeof expired);
    if (expired_code == XXL_BAD_REQUEST) {
        xxl_agent_reply (self, link, xxl_msg_id (msg), XXL_BAD_REQUEST, expired);
        return;
    }
    if (expired_code)
        zsys_info ("agent: RUN %" PRIu64 " (%u runs) not taken: %s", xxl_msg_id (msg),
                   runs->via.array.size, expired);
    xxl_enc_t *enc = self->enc;
    self->repeated = 0;
    self->busy_refused = 0;
    self->other_run = 0;
    self->run_link = (size_t) (link - self->links);
    char busy [512] = "";
    char other [512] = "";
    xxl_agent_reply_begin (self, xxl_msg_id (msg), XXL_OK, NULL);
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
        if (code == XXL_CONFLICT && !*other)
            snprintf (other, sizeof other, "%s", reason);
        xxl_msg_clear_error (msg);
        xxl_enc_map_begin (enc);
        xxl_enc_kint (enc, "code", code);
        xxl_enc_kstr (enc, "msg", *reason? reason: NULL);
        xxl_enc_map_end (enc);
    }
    xxl_executor_hold_wakes (self->executor, 0);
    xxl_enc_array_end (enc);
    xxl_agent_send (self, link);
    if (self->repeated)
        zsys_info ("agent: RUN %" PRIu64 ": %zu of %u run(s) already accepted, not run again",
                   xxl_msg_id (msg), self->repeated, runs->via.array.size);
    if (self->busy_refused)
        zsys_info ("agent: RUN %" PRIu64 ": %zu of %u run(s) refused: %s", xxl_msg_id (msg),
                   self->busy_refused, runs->via.array.size, busy);
    if (self->other_run)
        zsys_warning ("agent: RUN %" PRIu64 ": %zu of %u run(s) refused, their journal holds"
                      " the logId for another run (the first: %s): a store restored from a"
                      " backup without moving its log ids?", xxl_msg_id (msg), self->other_run,
                      runs->via.array.size, other);
}

//  LOG by byte offset (fromByte): a page of up to XXL_LOGREAD_PAGE_MAX bytes
//  of the file, each NUL byte of it sent as U+FFFD (docs/protocol.md, Log
//  pages)
static void
s_handle_log_bytes (agent_t *self, link_t *link, xxl_msg_t *msg, int64_t log_id,
                    int64_t date, int64_t from, int running)
{
    char err [512];
    size_t len = 0;
    int64_t next = from;
    int at_end = 1;
    char *page = xxl_logread_bytes (self->config.logdir, log_id, date, from, 0, !running,
                                    &len, &next, &at_end, err, sizeof err);
    if (!page && running)
        page = strdup ("");             //  queued: no file yet
    if (!page) {
        xxl_agent_reply (self, link, xxl_msg_id (msg), XXL_NOT_FOUND, err);
        return;
    }
    if (memchr (page, 0, len)) {
        char *text = (char *) malloc (3 * len + 1);
        assert (text);
        size_t size = 0;
        for (size_t index = 0; index < len; index++)
            if (page [index])
                text [size++] = page [index];
            else {
                memcpy (text + size, "\xef\xbf\xbd", 3);
                size += 3;
            }
        free (page);
        page = text;
        len = size;
    }
    xxl_agent_reply_begin (self, xxl_msg_id (msg), XXL_OK, NULL);
    xxl_enc_key (self->enc, "content");
    xxl_enc_map_begin (self->enc);
    xxl_enc_kint (self->enc, "fromByte", from);
    xxl_enc_kint (self->enc, "nextByte", next);
    xxl_enc_key (self->enc, "logContent");
    xxl_enc_strn (self->enc, page, len);
    //  Ended: the run finished and this page reached the end of the file
    xxl_enc_kbool (self->enc, "isEnd", !running && at_end);
    xxl_enc_map_end (self->enc);
    xxl_agent_send (self, link);
    free (page);
}

static void
s_handle_log (agent_t *self, link_t *link, xxl_msg_t *msg)
{
    int64_t log_id = xxl_msg_int (msg, NULL, "logId", 1, 1, INT64_MAX, 0);
    int64_t date = xxl_msg_int (msg, NULL, "logDateTime", 1, 0, INT64_MAX, 0);
    int64_t from = xxl_msg_int (msg, NULL, "fromLineNum", 0, 1, INT32_MAX, 1);
    int64_t from_byte = xxl_msg_int (msg, NULL, "fromByte", 0, 0, INT64_MAX, -1);
    if (xxl_msg_error (msg)) {
        xxl_agent_reply (self, link, xxl_msg_id (msg), XXL_BAD_REQUEST, xxl_msg_error (msg));
        return;
    }
    //  A running in-process run may still hold its first lines: have them
    //  written, so that the file shows what the run logged so far
    int running = xxl_executor_log_sync (self->executor, log_id);
    if (from_byte >= 0) {
        s_handle_log_bytes (self, link, msg, log_id, date, from_byte, running);
        return;
    }
    char err [512];
    int to_line = (int) from - 1;
    int at_end = 1;
    char *content = xxl_logread_lines (self->config.logdir, log_id, date, (int) from, 0,
                                       self->log_marks, sizeof self->log_marks
                                                        / sizeof self->log_marks [0],
                                       &to_line, &at_end, err, sizeof err);
    if (!content && running)
        content = strdup ("");          //  queued: no file yet
    if (!content) {
        xxl_agent_reply (self, link, xxl_msg_id (msg), XXL_NOT_FOUND, err);
        return;
    }
    xxl_agent_reply_begin (self, xxl_msg_id (msg), XXL_OK, NULL);
    xxl_enc_key (self->enc, "content");
    xxl_enc_map_begin (self->enc);
    xxl_enc_kint (self->enc, "fromLineNum", from);
    xxl_enc_kint (self->enc, "toLineNum", to_line);
    xxl_enc_kstr (self->enc, "logContent", content);
    //  Ended: the run finished and no complete line follows this page
    xxl_enc_kbool (self->enc, "isEnd", !running && at_end);
    xxl_enc_map_end (self->enc);
    xxl_agent_send (self, link);
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
                s_reached (self, link);
                xxl_agent_link_clock (link, msg);
            }
            else
                zsys_error ("agent: %s refused registration: %s%s", link->endpoint,
                            text? text: "",
                            code == XXL_UNAUTHORIZED && !*self->config.access_token
                            ? " (this agent sends none: set agent/access_token, or --token)": "");
            link->register_id = 0;
        }
        else
            xxl_agent_callbacks_acked (self, xxl_msg_id (msg), code, text);
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
            xxl_agent_reply (self, link, xxl_msg_id (msg), XXL_CODE_FAIL, "xxl-agent is stopping");
        else
        if (xxl_executor_full (self->executor, busy, sizeof busy))
            xxl_agent_reply (self, link, xxl_msg_id (msg), XXL_CODE_FAIL, busy);
        else
            xxl_agent_reply (self, link, xxl_msg_id (msg), XXL_OK, NULL);
    }
    else
    if (streq (type, "IDLE_BEAT")) {
        int64_t job_id = xxl_msg_int (msg, NULL, "jobId", 1, 1, INT64_MAX, 0);
        if (xxl_msg_error (msg))
            xxl_agent_reply (self, link, xxl_msg_id (msg), XXL_BAD_REQUEST, xxl_msg_error (msg));
        else
        if (self->draining)
            xxl_agent_reply (self, link, xxl_msg_id (msg), XXL_CODE_FAIL, "xxl-agent is stopping");
        else
        if (xxl_executor_busy (self->executor, job_id))
            xxl_agent_reply (self, link, xxl_msg_id (msg), XXL_CODE_FAIL,
                     "job thread is running or has trigger queue.");
        else {
            char busy [256];
            if (xxl_executor_full (self->executor, busy, sizeof busy))
                xxl_agent_reply (self, link, xxl_msg_id (msg), XXL_CODE_FAIL, busy);
            else
                xxl_agent_reply (self, link, xxl_msg_id (msg), XXL_OK, NULL);
        }
    }
    else
    if (streq (type, "KILL")) {
        int64_t job_id = xxl_msg_int (msg, NULL, "jobId", 1, 1, INT64_MAX, 0);
        //  (why, for the killed runs' handleMsg; a scheduler before it sent none)
        const char *reason = xxl_msg_str (msg, NULL, "reason", 0, XXL_KILL_REASON_MAX,
                                          "killed by a user (log kill)");
        if (xxl_msg_error (msg))
            xxl_agent_reply (self, link, xxl_msg_id (msg), XXL_BAD_REQUEST, xxl_msg_error (msg));
        else
        if (xxl_executor_kill (self->executor, job_id, *reason? reason
                                                   : "killed by a user (log kill)") == 0)
            xxl_agent_reply (self, link, xxl_msg_id (msg), XXL_OK, NULL);
        else
            xxl_agent_reply (self, link, xxl_msg_id (msg), XXL_CODE_FAIL, XXL_KILL_NOT_RUNNING);
    }
    else
    if (streq (type, "LOG"))
        s_handle_log (self, link, msg);
    else {
        char text [160], shown [129];
        snprintf (text, sizeof text, "unknown message type '%s'",
                  xxl_printable (type, shown, sizeof shown));
        xxl_agent_reply (self, link, xxl_msg_id (msg), XXL_BAD_REQUEST, text);
    }
}

void
xxl_agent_config_defaults (xxl_agent_config_t *config)
{
    memset (config, 0, sizeof *config);
    config->schedulers = "tcp://127.0.0.1:7071";
    config->plugins = XXL_PKGLIBDIR "/handlers";
    config->logdir = "/var/log/xxl/jobhandler";
    config->access_token = "";
    config->tags = "";
    config->beat_s = 30;
    config->callback_timeout_ms = 5000;
    config->run_lease_s = 600;
    config->allow_glue = 1;
    config->log_retention_days = 30;
    config->log_pack = 1;
    config->run_batch = XXL_RUN_BATCH_MAX;
    config->drain_ms = 30000;
    config->idle_reap_s = 90;
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
    xxl_imap_destroy (&self->origins);
    //  Last: the guardian reads the journal once we closed its pipe
    xxl_guard_destroy (&self->guard);
    xxl_agent_links_close (self);
    zcert_destroy (&self->cert);
    xxl_agent_callbacks_destroy (self);
    xxl_enc_destroy (&self->enc);
    free (self->handlers_sent);
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
    self->reached = xxl_agent_boot_ms ();
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

    if (xxl_local_mkdirs (config->logdir, XXL_RUNLOG_DIR_MODE)) {
        zsys_error ("agent: cannot create log folder %s: %s", config->logdir, strerror (errno));
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
    self->origins = xxl_imap_new ();
    if (!self->journal) {
        zsys_error ("agent: cannot open the journal %s", journal_path);
        zstr_free (&journal_path);
        s_agent_destroy (&self);
        return NULL;
    }
    xxl_agent_lost_report (self->journal, self->spool, config->logdir);
    //  If we die, our runs die with us
    self->guard = xxl_guard_new (NULL, journal_path, xxl_journal_life (self->journal));
    if (!self->guard)
        zsys_warning ("agent: no guardian: runs would outlive a crash of the agent");
    zstr_free (&journal_path);
    for (const xxl_result_t *result = xxl_spool_first (self->spool); result;
         result = xxl_spool_next (self->spool))
        xxl_agent_callbacks_queue (self, result, true);
    if (self->waiting.count)
        zsys_info ("agent: %zu result(s) from the spool to deliver", self->waiting.count);
    self->handlers = xxl_handlers_new (config->plugins);
    xxl_executor_config_t exec_config = { 0 };
    exec_config.logdir = config->logdir;
    exec_config.allow_glue = config->allow_glue;
    exec_config.in_process = config->in_process;
    exec_config.idle_reap_s = config->idle_reap_s;
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
    if (xxl_agent_links_open (self, config->schedulers)) {
        s_agent_destroy (&self);
        return NULL;
    }
    if (self->link_count == 0) {
        zsys_error ("agent: no scheduler endpoint given (--scheduler)");
        s_agent_destroy (&self);
        return NULL;
    }
    zsys_info ("xxl-agent %s: app %s, address %s, %zu handler(s), schedulers %s%s%s%s%s",
               PACKAGE_VERSION, config->app, self->address,
               xxl_handlers_size (self->handlers), config->schedulers,
               self->cert? ", CURVE to key ": "", self->cert? self->scheduler_key: "",
               config->tags && *config->tags? ", tags ": "", config->tags? config->tags: "");
    self->turn_at = zclock_mono ();
    self->next_beat = self->turn_at + (int64_t) config->beat_s * 1000;
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
//  xxl_agent_boot_ms's clock, which goes on while the host is suspended.
static int64_t
s_lease_check (agent_t *self)
{
    if (self->config.run_lease_s <= 0)
        return INT64_MAX;
    int64_t now = xxl_agent_boot_ms ();
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

//  --------------------------------------------------------------------
//  The loop's poll set and its reading phases

//  Every slot for the poll (xxl_transport_poll), each one named: NULL when not polled
typedef struct {
    zmq_pollitem_t *items;
    size_t count;
    zmq_pollitem_t *pipe;               //  the actor's pipe (not in the drain)
    zmq_pollitem_t *results;            //  the executor's result fd
    zmq_pollitem_t *plugins;            //  the plugin folder's inotify fd
    zmq_pollitem_t **dealers;           //  per link: its DEALER
    zmq_pollitem_t **monitors;          //  per link: its socket monitor
} poll_t;

static poll_t *
s_poll_new (agent_t *self)
{
    poll_t *poll = (poll_t *) zmalloc (sizeof (poll_t));
    poll->items = (zmq_pollitem_t *) zmalloc ((3 + 2 * self->link_count)
                                              * sizeof (zmq_pollitem_t));
    poll->dealers = (zmq_pollitem_t **) zmalloc (self->link_count * sizeof (zmq_pollitem_t *));
    poll->monitors = (zmq_pollitem_t **) zmalloc (self->link_count * sizeof (zmq_pollitem_t *));
    return poll;
}

static void
s_poll_destroy (poll_t **poll_p)
{
    poll_t *poll = *poll_p;
    free (poll->items);
    free (poll->dealers);
    free (poll->monitors);
    free (poll);
    *poll_p = NULL;
}

//  Fills the poll set for a turn (the links' sockets change when one is
//  replaced, the plugin folder's fd when it is watched again); actor:
//  with the pipe and the plugin folder, else (the drain) without them
static void
s_poll_build (agent_t *self, poll_t *poll, bool actor)
{
    size_t n = 0;
    poll->pipe = poll->plugins = NULL;
    //  The actor's pipe and the links' monitors are only read, each until
    //  it is empty: the poll checks one again only after it had input
    //  (XXL_POLL_TRACK; s_poll_kept keeps its QUIET flag between turns).
    //  The DEALERs, sent on and checked at the beat (xxl_agent_link_
    //  waiting), are checked before every wait.
    const short tracked = ZMQ_POLLIN | (actor? XXL_POLL_TRACK: 0);
    if (actor) {
        poll->items [n] = (zmq_pollitem_t) { zsock_resolve (self->pipe), 0,
                                             (short) (tracked | (self->pipe_quiet? XXL_POLL_QUIET: 0)), 0 };
        poll->pipe = &poll->items [n++];
    }
    poll->items [n] = (zmq_pollitem_t) { NULL, xxl_executor_fd (self->executor), ZMQ_POLLIN, 0 };
    poll->results = &poll->items [n++];
    int watch = actor? xxl_handlers_watch_fd (self->handlers): -1;
    if (watch >= 0) {
        poll->items [n] = (zmq_pollitem_t) { NULL, watch, ZMQ_POLLIN, 0 };
        poll->plugins = &poll->items [n++];
    }
    for (size_t i = 0; i < self->link_count; i++) {
        poll->items [n] = (zmq_pollitem_t) { zsock_resolve (self->links [i].dealer), 0,
                                             ZMQ_POLLIN, 0 };
        poll->dealers [i] = &poll->items [n++];
        bool quiet = actor && self->links [i].monitor_quiet;
        poll->items [n] = (zmq_pollitem_t) { self->links [i].monitor, 0,
                                             (short) (tracked | (quiet? XXL_POLL_QUIET: 0)), 0 };
        poll->monitors [i] = &poll->items [n++];
    }
    assert (n <= 3 + 2 * self->link_count);
    poll->count = n;
}

//  After the actor's poll: what it found quiet stays so into the next
//  turn's poll set (until a monitor is replaced: xxl_agent_link.c)
static void
s_poll_kept (agent_t *self, poll_t *poll)
{
    self->pipe_quiet = poll->pipe && (poll->pipe->events & XXL_POLL_QUIET);
    for (size_t i = 0; i < self->link_count; i++)
        self->links [i].monitor_quiet = (poll->monitors [i]->events & XXL_POLL_QUIET) != 0;
}

//  True when a polled slot has input
static bool
s_ready (const zmq_pollitem_t *slot)
{
    return slot && (slot->revents & ZMQ_POLLIN);
}

//  The pipe: "$TERM" (or a pipe gone) ends the loop after this turn
static void
s_read_pipe (agent_t *self)
{
    char *command = zstr_recv (self->pipe);
    if (!command || streq (command, "$TERM"))
        self->terminated = true;
    zstr_free (&command);
}

//  Up to XXL_LINK_READ_MAX messages of a link's DEALER, each handled
static void
s_read_dealer (agent_t *self, link_t *link)
{
    for (int i = 0; i < XXL_LINK_READ_MAX; i++) {
        xxl_msg_t *msg;
        if (xxl_agent_link_recv (self, link, &msg))
            return;
        if (msg) {
            s_handle_request (self, link, msg);
            xxl_msg_destroy (&msg);
        }
    }
}

//  Each link's socket events, then its messages; a link that lost its
//  connection has its CALLBACK batches in flight sent again elsewhere
static void
s_read_links (agent_t *self, poll_t *poll)
{
    for (size_t i = 0; i < self->link_count; i++) {
        link_t *link = &self->links [i];
        if (s_ready (poll->monitors [i]) && xxl_agent_link_events (self, link))
            xxl_agent_callbacks_resend_link (self, link);
        if (s_ready (poll->dealers [i]))
            s_read_dealer (self, link);
    }
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
        xxl_agent_register (self, &self->links [i], 1);
    volatile sig_atomic_t *interrupts = self->config.interrupts;
    sig_atomic_t signals_at = interrupts? *interrupts: 0;
    bool cut = false;
    int64_t started = zclock_mono ();
    int64_t drain_until = started + self->config.drain_ms;
    if (xxl_executor_pending (self->executor))
        zsys_info ("agent: stopping; new runs refused; %zu run(s) queued or running, waiting"
                   " up to %d ms for them (agent/drain_s; another SIGTERM stops at once)",
                   xxl_executor_pending (self->executor), self->config.drain_ms);
    poll_t *poll = s_poll_new (self);
    //  Phase 1, the drain; phase 2, the last delivery of results
    for (int phase = 1; phase <= 2; phase++) {
        int64_t until = phase == 1? drain_until: zclock_mono () + 2000;
        while (zclock_mono () < until) {
            if (interrupts && *interrupts != signals_at) {
                cut = true;
                break;
            }
            if (phase == 1 && !xxl_executor_pending (self->executor))
                break;
            if (phase == 2 && !xxl_agent_callbacks_count (self))
                break;
            xxl_agent_callbacks_send (self);
            s_poll_build (self, poll, false);
            int64_t left = until - zclock_mono ();
            if (xxl_transport_poll (poll->items, (int) poll->count,
                          left < 100? (long) (left > 0? left: 0): 100) > 0)
                s_read_links (self, poll);
            xxl_agent_callbacks_take (self);
            xxl_agent_callbacks_check (self);
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
            xxl_agent_callbacks_take (self);
        }
        if (cut) {
            xxl_agent_callbacks_send (self);    //  one try; unacknowledged results
            break;                              //  stay in the spool for the next start
        }
    }
    s_poll_destroy (&poll);
    if (xxl_agent_callbacks_count (self))
        zsys_info ("agent: %zu result(s) not delivered yet; they stay in the spool",
                   xxl_agent_callbacks_count (self));
}

//  --------------------------------------------------------------------
//  The loop's phases

//  How long the poll may wait: until the beat, a callback's deadline or
//  retry (each second while results wait for a scheduler), or the run
//  lease's end, whichever comes first
static long
s_turn_timeout (agent_t *self)
{
    int64_t now = zclock_mono ();
    int64_t wake = xxl_agent_callbacks_wake (self, now, self->next_beat);
    int64_t lease_until = s_lease_check (self);
    if (lease_until < wake)
        wake = lease_until;
    return wake > now? (long) (wake - now): 0;
}

//  Registers again on each connected link once the plugins' handler
//  names differ from those the latest REGISTER carried, so that the
//  schedulers (AGENT_LIST, routing by handler) know at once, not at the
//  next beat.  Not while draining: the agent has unregistered
static void
s_announce_handlers (agent_t *self)
{
    if (self->draining)
        return;
    char *names = xxl_handlers_names (self->handlers);
    bool same = names && self->handlers_sent && streq (names, self->handlers_sent);
    free (names);
    if (same)
        return;
    for (size_t i = 0; i < self->link_count; i++)
        if (self->links [i].connected)
            xxl_agent_register (self, &self->links [i], 0);
}

//  Hands each slot with input to its reader
static void
s_turn_read (agent_t *self, poll_t *poll)
{
    if (s_ready (poll->pipe))
        s_read_pipe (self);
    if (s_ready (poll->results))
        xxl_agent_callbacks_take (self);
    if (s_ready (poll->plugins) && xxl_handlers_rescan (self->handlers) > 0)
        s_announce_handlers (self);
    s_read_links (self, poll);
}

//  The agent's own stall is no scheduler's silence (as the scheduler's
//  is not the agent's: its engine's s_stall_check).  Between two turns
//  the loop waits in its polls, each counted up to its deadline, and
//  works (normally for milliseconds).  The rest, when over
//  XXL_LOOP_STALL, is time the loop stood still (the process stopped,
//  starved of CPU, paging; or a turn of very heavy work).  Its links
//  heard nothing then because it did not listen, and what came meanwhile
//  may still be on its way in (in the kernel's socket buffer, behind
//  ZeroMQ's I/O thread, held up as well), for no ZMQ_EVENTS to show yet.
//  So that time counts towards neither a link's silence nor its
//  REGISTER's wait: both are moved on by it.  (A stall that ends within a
//  poll's wait leaves the rest of the wait for that input to come in.)
static void
s_turn_stall (agent_t *self, int64_t now)
{
    int64_t stall = now - self->turn_at - self->waited;
    self->turn_at = now;
    self->waited = 0;
    if (stall <= XXL_LOOP_STALL)
        return;
    for (size_t i = 0; i < self->link_count; i++) {
        link_t *link = &self->links [i];
        link->heard = link->heard + stall < now? link->heard + stall: now;
        link->register_sent = link->register_sent + stall < now? link->register_sent + stall: now;
    }
    zsys_warning ("agent: the loop stood still for %" PRId64 " ms (stopped or starved of"
                  " CPU): that time counts as no scheduler's silence", stall);
}

//  A link at the beat: a REGISTER unanswered for a whole beat means the
//  link is down; connected and silent for XXL_LINK_SILENCE too (with
//  nothing waiting unread on it), or broken, it gets a new socket, which
//  registers once its connection is up (its CALLBACK batches in flight go
//  again at once); else it registers again.  The old socket goes with
//  whatever it holds unread, and so does the kernel's buffer of its
//  connection: s_turn_stall keeps the agent's own stall from counting as
//  silence.
static void
s_beat_link (agent_t *self, link_t *link, int64_t now)
{
    bool unanswered = link->register_id
                   && now - link->register_sent >= (int64_t) self->config.beat_s * 1000;
    if (unanswered)
        link->up = false;
    if (link->broken
    ||  (unanswered && link->connected && now - link->heard >= XXL_LINK_SILENCE
         && !xxl_agent_link_waiting (link))) {
        if (xxl_agent_link_replace (self, link) == 0) {
            xxl_agent_callbacks_resend_link (self, link);
            return;
        }
    }
    xxl_agent_register (self, link, 0);
}

//  The beat: each link is checked and registers (REGISTER is the heartbeat)
static void
s_turn_beat (agent_t *self, int64_t now)
{
    if (now < self->next_beat)
        return;
    for (size_t i = 0; i < self->link_count; i++)
        s_beat_link (self, &self->links [i], now);
    self->next_beat = now + (int64_t) self->config.beat_s * 1000;
}

//  Log retention, hourly
static void
s_turn_clean (agent_t *self, int64_t now)
{
    if (now < self->next_clean)
        return;
    xxl_runlog_clean (self->config.logdir, self->config.log_retention_days, zclock_time ());
    self->next_clean = now + 3600 * 1000;
}

//  Batches without an ack by their deadline go back; what waits goes out
static void
s_turn_callbacks (agent_t *self)
{
    xxl_agent_callbacks_check (self);
    xxl_agent_callbacks_send (self);
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
    poll_t *poll = s_poll_new (self);
    while (!self->terminated) {
        s_poll_build (self, poll, true);
        long timeout = s_turn_timeout (self);
        int64_t wait_from = zclock_mono ();
        int rc = xxl_transport_poll (poll->items, (int) poll->count, timeout);
        int64_t waited = zclock_mono () - wait_from;
        self->waited += waited < timeout? waited: timeout;
        s_poll_kept (self, poll);
        if (rc < 0) {
            if (zmq_errno () == EINTR)
                continue;
            break;
        }
        s_turn_read (self, poll);
        int64_t now = zclock_mono ();
        s_turn_stall (self, now);
        s_turn_beat (self, now);
        s_turn_clean (self, now);
        s_lease_check (self);
        s_turn_callbacks (self);
    }
    s_poll_destroy (&poll);
    s_drain (self);
    s_agent_destroy (&self);
}
