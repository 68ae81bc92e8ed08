/*  xxl_bridge.c -- xxl-bridge: XXL-JOB executors as xxl agents.

    See xxl_bridge.h.  This half (xxl_bridge_int.h) owns runs and
    results: the schedulers' requests as calls of the executors, the
    executors' callbacks into the spool and out as CALLBACKs, the lost-run
    checks, and the loop; the executors and their links are
    xxl_bridge_exec.c's.
*/

#include "xxl_bridge_int.h"

static void
s_open_run_free (void **item)
{
    open_run_t *run = (open_run_t *) *item;
    if (run) {
        free (run->key);
        free (run);
        *item = NULL;
    }
}

static void s_lost_answer (bridge_t *self, int64_t log_id, int code);

//  msg as a CALLBACK carries it: valid UTF-8 (xxl_utf8_repair), cut
//  between characters to at most BRIDGE_MSG_MAX bytes.  NULL when msg is
//  NULL or already so (send msg itself), else a new string the caller
//  frees (msg itself on no memory for the cut: NULL)
static char *
s_msg_fit (const char *msg)
{
    if (!msg)
        return NULL;
    char *fit = xxl_utf8_repair (msg);
    const char *text = fit? fit: msg;
    size_t len = strlen (text);
    if (len <= BRIDGE_MSG_MAX)
        return fit;
    size_t cut = BRIDGE_MSG_MAX;
    while (cut > 0 && ((unsigned char) text [cut] & 0xc0) == 0x80)
        cut--;
    char *copy = strndup (text, cut);
    free (fit);
    return copy;
}

//  What a result counts for against BRIDGE_BATCH_BYTES: its handleMsg as
//  sent (at most BRIDGE_MSG_MAX bytes) and room for its other fields
static size_t
s_result_size (const xxl_result_t *r)
{
    size_t len = r->msg? strnlen (r->msg, BRIDGE_MSG_MAX): 0;
    return len + 96;
}

//  --------------------------------------------------------------------------
//  Results: from the executors' callbacks to the schedulers' acks

static int
s_on_callback (void *arg, const xxl_wire_callback_t *items, size_t count, char *why,
               size_t whylen)
{
    bridge_t *self = (bridge_t *) arg;
    xxl_result_t *results = (xxl_result_t *) calloc (count? count: 1, sizeof *results);
    int64_t *ids = (int64_t *) calloc (count? count: 1, sizeof *ids);
    char **fitted = (char **) calloc (count? count: 1, sizeof *fitted);
    assert (results && ids && fitted);
    size_t taken = 0, unknown = 0;
    int64_t unknown_id = 0;
    for (size_t i = 0; i < count; i++) {
        if (!xxl_bridge_routes_get (self->routes, items [i].log_id)) {
            unknown++;
            unknown_id = items [i].log_id;
            continue;
        }
        results [taken].log_id = items [i].log_id;
        results [taken].log_date_time = items [i].log_date_time;
        results [taken].code = items [i].code;
        //  (borrowed, or fitted here: the spool copies)
        fitted [taken] = s_msg_fit (items [i].msg);
        results [taken].msg = fitted [taken]? fitted [taken]: items [i].msg;
        char id [XXL_BRIDGE_ID_MAX];
        xxl_bridge_routes_id (items [i].log_id, id);
        open_run_t *open = (open_run_t *) zhashx_lookup (self->open_runs, id);
        if (open && !open->asking)
            zhashx_delete (self->open_runs, id);
        else
        if (open)
            open->idle = -1;        //  (its result came: the answer in flight is ignored)
        ids [taken++] = items [i].log_id;
    }
    int code = 0;
    if (taken && xxl_spool_add_batch (self->spool, results, taken)) {
        snprintf (why, whylen, "the bridge cannot store results now (its spool failed)");
        code = 500;
    }
    else
    if (taken) {
        xxl_journal_done (self->journal, ids, taken);
        self->deliver = true;
    }
    if (unknown) {
        char line [256];
        snprintf (line, sizeof line, "%zu callback(s) for runs the bridge did not send (e.g."
                  " logId %" PRId64 ") or already delivered: ignored", unknown, unknown_id);
        bridge_ratelog (&self->unknown_logged, &self->unknown_held, line);
    }
    for (size_t i = 0; i < taken; i++)
        free (fitted [i]);
    free (fitted);
    free (results);
    free (ids);
    return code;
}

//  The link a result goes out on: its executor's first link to a
//  scheduler that took its REGISTER, with no batch in flight; NULL when
//  none can take it now.  A link held back until its retry_at (a batch
//  not sent or not acked) makes the next pass due then (deliver_at)
static link_t *
s_result_link (bridge_t *self, int64_t log_id, int64_t now, bool *blocked)
{
    *blocked = false;
    const char *key = xxl_bridge_routes_get (self->routes, log_id);
    executor_t *exec = key? (executor_t *) zhashx_lookup (self->executors, key): NULL;
    if (!exec)
        return NULL;                //  (it waits for its executor to register)
    for (size_t i = 0; i < self->nendpoints; i++) {
        link_t *link = exec->links + i;
        if (link->registered && link->retry_at <= now) {
            if (link->batch_id == 0)
                return link;
            *blocked = true;
        }
        else
        if (link->registered
        &&  (self->deliver_at == 0 || link->retry_at < self->deliver_at))
            self->deliver_at = link->retry_at;
    }
    return NULL;
}

static void s_batch_end (bridge_t *self, link_t *link, bool acked);

static void
s_batch_send (bridge_t *self, link_t *link)
{
    assert (link->batch_count);
    link->batch_id = ++self->next_id;
    link->batch_sent = zclock_mono ();
    bridge_begin (self, "CALLBACK", link->batch_id);
    xxl_enc_key (self->enc, "items");
    xxl_enc_array_begin (self->enc);
    for (size_t i = 0; i < link->batch_count; i++) {
        //  (pending in the spool since s_deliver put it in the batch, in
        //  this same turn: nothing acked or replaced it)
        const xxl_result_t *r = link->results [i];
        xxl_enc_map_begin (self->enc);
        xxl_enc_kint (self->enc, "logId", r->log_id);
        xxl_enc_kint (self->enc, "logDateTime", r->log_date_time > 0? r->log_date_time: 0);
        xxl_enc_kint (self->enc, "handleCode", r->code);
        if (r->msg) {
            //  (a result spooled by a bridge that kept longer ones is cut
            //  here: s_result_size counted it so)
            char *fit = s_msg_fit (r->msg);
            xxl_enc_kstr (self->enc, "handleMsg", fit? fit: r->msg);
            free (fit);
        }
        xxl_enc_map_end (self->enc);
    }
    xxl_enc_array_end (self->enc);
    if (bridge_send (self, link))
        //  (not sent: its results leave the batch, to be batched again
        //  whole, each once, after the link's retry_at)
        s_batch_end (self, link, false);
}

//  Puts the pending results that are not in flight into batches on their
//  executors' links and sends them
static void
s_deliver (bridge_t *self)
{
    int64_t now = zclock_mono ();
    bool more = false;
    self->deliver_at = 0;           //  (set again by a link still held back)
    zlist_t *sent = zlist_new ();
    for (const xxl_result_t *r = xxl_spool_first (self->spool); r;
         r = xxl_spool_next (self->spool)) {
        char id [XXL_BRIDGE_ID_MAX];
        xxl_bridge_routes_id (r->log_id, id);
        if (zhashx_lookup (self->in_flight, id))
            continue;
        bool blocked;
        link_t *link = s_result_link (self, r->log_id, now, &blocked);
        if (!link) {
            more = more || blocked;
            continue;
        }
        if (link->batch_count == 0)
            zlist_append (sent, link);
        size_t size = s_result_size (r);
        if (link->batch_count >= BRIDGE_BATCH_MAX
        ||  (link->batch_count && link->batch_bytes + size > BRIDGE_BATCH_BYTES)) {
            more = true;
            continue;
        }
        if (link->batch_count == link->batch_cap) {
            link->batch_cap = link->batch_cap? 2 * link->batch_cap: 8;
            link->batch = (int64_t *) realloc (link->batch, link->batch_cap * sizeof (int64_t));
            link->results = (const xxl_result_t **) realloc (link->results,
                                                     link->batch_cap * sizeof (void *));
            assert (link->batch && link->results);
        }
        link->results [link->batch_count] = r;
        link->batch [link->batch_count++] = r->log_id;
        link->batch_bytes += size;
        zhashx_insert (self->in_flight, id, link);
    }
    //  (before the sends: a batch that cannot go asks for another pass)
    self->deliver = more;
    for (link_t *link = (link_t *) zlist_first (sent); link; link = (link_t *) zlist_next (sent))
        s_batch_send (self, link);
    zlist_destroy (&sent);
}

//  A batch ends: acked (its results leave the spool and their routes) or
//  not (they go again later)
static void
s_batch_end (bridge_t *self, link_t *link, bool acked)
{
    for (size_t i = 0; i < link->batch_count; i++) {
        char id [XXL_BRIDGE_ID_MAX];
        xxl_bridge_routes_id (link->batch [i], id);
        zhashx_delete (self->in_flight, id);
        if (acked)
            xxl_bridge_routes_done (self->routes, link->batch [i]);
    }
    if (acked)
        xxl_spool_ack_batch (self->spool, link->batch, link->batch_count);
    else
        link->retry_at = zclock_mono () + 1000;
    link->batch_count = 0;
    link->batch_bytes = 0;
    link->batch_id = 0;
    self->deliver = true;
}

//  --------------------------------------------------------------------------
//  The schedulers' requests, as calls of the executor

static void
s_call_done (void *arg, int status, const char *body, size_t len, const char *why)
{
    pending_t *pending = (pending_t *) arg;
    bridge_t *self = pending->bridge;
    link_t *link = pending->link;
    assert (link->exec->calls > 0);
    link->exec->calls--;
    xxl_wire_answer_t answer;
    xxl_wire_answer_read (status, body, len, why, &answer);
    if (streq (pending->type, "LOSTCHECK")) {
        s_lost_answer (self, pending->log_id, status? answer.code: 0);
        xxl_wire_answer_free (&answer);
        free (pending);
        return;
    }
    if (streq (pending->type, "RUN") && answer.code == 200 && pending->job_id >= 0) {
        open_run_t *open = (open_run_t *) zmalloc (sizeof *open);
        open->log_id = pending->log_id;
        open->job_id = pending->job_id;
        open->log_date_time = pending->log_date_time;
        open->key = strdup (link->exec->key);
        char id [XXL_BRIDGE_ID_MAX];
        xxl_bridge_routes_id (pending->log_id, id);
        //  (its result may be spooled, or even delivered, already: a fast run)
        if (!xxl_spool_pending (self->spool, pending->log_id)
        &&  xxl_bridge_routes_get (self->routes, pending->log_id)
        &&  zhashx_insert (self->open_runs, id, open) == 0)
            open = NULL;
        s_open_run_free ((void **) &open);
    }
    if (streq (pending->type, "RUN")) {
        if (answer.code != 200) {
            //  (no result will come: refused or not reached; a callback
            //  that comes all the same is taken while its route is open)
            zsys_info ("bridge: run %" PRId64 " at %s not taken: %d %s", pending->log_id,
                       link->exec->url, answer.code, answer.msg? answer.msg: "");
            xxl_journal_done (self->journal, &pending->log_id, 1);
            if (status != 0)
                xxl_bridge_routes_done (self->routes, pending->log_id);
        }
        bridge_reply (self, link, pending->id, answer.code == 200? 200: 500, answer.msg);
    }
    else
    if (streq (pending->type, "LOG") && answer.code == 200 && json_is_object (answer.content)
    &&  pending->from_byte >= 0) {
        //  A page by byte, cut from the whole log (asked from line 1):
        //  XXL-JOB executors page by line only
        const char *text = json_string_value (json_object_get (answer.content, "logContent"));
        size_t total = text? strlen (text): 0;
        size_t from = (size_t) pending->from_byte < total? (size_t) pending->from_byte: total;
        size_t len = total - from;
        if (len > BRIDGE_LOG_PAGE) {
            len = BRIDGE_LOG_PAGE;
            while (len > 0 && ((unsigned char) text [from + len] & 0xc0) == 0x80)
                len--;              //  (cut between characters)
        }
        bridge_reply_begin (self, pending->id, 200, NULL);
        xxl_enc_key (self->enc, "content");
        xxl_enc_map_begin (self->enc);
        xxl_enc_kint (self->enc, "fromByte", pending->from_byte);
        xxl_enc_kint (self->enc, "nextByte", pending->from_byte + (int64_t) len);
        xxl_enc_key (self->enc, "logContent");
        xxl_enc_strn (self->enc, text? text + from: "", len);
        xxl_enc_kbool (self->enc, "isEnd", json_is_true (json_object_get (answer.content, "isEnd"))
                                           && from + len == total);
        xxl_enc_map_end (self->enc);
        bridge_send (self, link);
    }
    else
    if (streq (pending->type, "LOG") && answer.code == 200 && json_is_object (answer.content)) {
        json_t *c = answer.content;
        bridge_reply_begin (self, pending->id, 200, NULL);
        xxl_enc_key (self->enc, "content");
        xxl_enc_map_begin (self->enc);
        xxl_enc_kint (self->enc, "fromLineNum", json_integer_value (json_object_get (c, "fromLineNum")));
        xxl_enc_kint (self->enc, "toLineNum", json_integer_value (json_object_get (c, "toLineNum")));
        const char *text = json_string_value (json_object_get (c, "logContent"));
        xxl_enc_kstr (self->enc, "logContent", text? text: "");
        xxl_enc_kbool (self->enc, "isEnd", json_is_true (json_object_get (c, "isEnd")));
        xxl_enc_map_end (self->enc);
        bridge_send (self, link);
    }
    else
        bridge_reply (self, link, pending->id, answer.code, answer.msg);
    xxl_wire_answer_free (&answer);
    free (pending);
}

//  Starts a call for the request id on link; false (answered 429 or 500)
//  when it cannot start
static bool
s_call (bridge_t *self, link_t *link, const char *type, uint64_t id, int64_t log_id,
        int64_t from_byte, const char *path, const char *body, int timeout_ms)
{
    pending_t *pending = (pending_t *) zmalloc (sizeof *pending);
    pending->bridge = self;
    pending->link = link;
    snprintf (pending->type, sizeof pending->type, "%s", type);
    pending->id = id;
    pending->log_id = log_id;
    pending->from_byte = from_byte;
    if (!zhashx_lookup (self->called, link->exec->url)) {
        if (zhashx_size (self->called) >= 10000)
            zhashx_purge (self->called);
        zhashx_insert (self->called, link->exec->url, (void *) 1);
        zsys_info ("bridge: calling %s (executor %s) for the first time", link->exec->url,
                   link->exec->app);
    }
    if (xxl_bridge_call_post (self->call, link->exec->url, path, body, timeout_ms,
                              s_call_done, pending)) {
        free (pending);
        bridge_reply (self, link, id, 429, "busy: the bridge holds its limit of calls to executors");
        return false;
    }
    link->exec->calls++;
    self->last_pending = pending;
    return true;
}

//  0 when the RUN may be taken, else the code, reason in why (as
//  xxl-agent judges expireTime: docs/protocol.md)
static int
s_expired (link_t *link, xxl_msg_t *msg, char *why, size_t whylen)
{
    const msgpack_object *value = xxl_msg_get (xxl_msg_root (msg), "expireTime");
    if (!value || value->type == MSGPACK_OBJECT_NIL)
        return 0;
    int64_t expire = xxl_msg_int (msg, NULL, "expireTime", 1, INT64_MIN, INT64_MAX, 0);
    if (xxl_msg_error (msg)) {
        snprintf (why, whylen, "%s", xxl_msg_error (msg));
        return 400;
    }
    int64_t now = zclock_mono () + link->clock_offset;
    if (now > expire) {
        snprintf (why, whylen, "expired: the scheduler gave up on this run %" PRId64
                  " ms before the bridge read it (expireTime %" PRId64 ")", now - expire, expire);
        return 500;
    }
    return 0;
}

static void
s_handle_run (bridge_t *self, link_t *link, xxl_msg_t *msg)
{
    uint64_t id = xxl_msg_id (msg);
    int64_t log_id = xxl_msg_int (msg, NULL, "logId", 1, 1, INT64_MAX, 0);
    xxl_msg_int (msg, NULL, "jobId", 1, 0, INT64_MAX, 0);
    xxl_msg_str (msg, NULL, "executorHandler", 0, 255, "");
    if (xxl_msg_error (msg)) {
        bridge_reply (self, link, id, 400, xxl_msg_error (msg));
        return;
    }
    char why [300];
    int code = s_expired (link, msg, why, sizeof why);
    //  (which run it is: optional, ill-typed taken as not known)
    int64_t job_id = xxl_msg_int_lax (msg, NULL, "jobId", 1, INT64_MAX, 0);
    int64_t date = xxl_msg_int_lax (msg, NULL, "logDateTime", 0, INT64_MAX, 0);
    int held = xxl_journal_check (self->journal, log_id, job_id, date);
    if (held == XXL_JOURNAL_OTHER) {
        //  The id of another run it sent (a store restored from a backup
        //  handed it out again): never sent, for the scheduler to fail
        snprintf (why, sizeof why, "logId %" PRId64 " already used by another run", log_id);
        zsys_warning ("bridge: RUN %" PRIu64 " refused: %s (its journal holds the logId for"
                      " another run: a store restored from a backup without moving its log"
                      " ids?)", id, why);
        bridge_reply (self, link, id, 409, why);
        return;
    }
    if (held == XXL_JOURNAL_SAME) {
        //  A re-send (or a recovering scheduler's question): it was taken
        snprintf (why, sizeof why, "logId %" PRId64 " already accepted", log_id);
        bridge_reply (self, link, id, 200, why);
        return;
    }
    if (code) {
        bridge_reply (self, link, id, code, why);
        return;
    }
    if (link->exec->expired) {
        bridge_reply (self, link, id, 500, "stopping: the executor stopped registering with the bridge");
        return;
    }
    if (xxl_bridge_call_count (self->call) >= (size_t) self->config->queued) {
        bridge_reply (self, link, id, 429, "busy: the bridge holds its limit of calls to executors");
        return;
    }
    char *body = xxl_wire_trigger (xxl_msg_root (msg));
    if (!body) {
        bridge_reply (self, link, id, 500, "out of memory");
        return;
    }
    //  Journaled before the call (written by s_flush before the call goes
    //  on the wire): never sent twice, also after a restart
    xxl_journal_accept (self->journal, log_id, job_id, date);
    xxl_bridge_routes_add_run (self->routes, log_id, link->exec->key,
                               xxl_msg_int (msg, NULL, "jobId", 1, 0, INT64_MAX, 0),
                               xxl_msg_int (msg, NULL, "logDateTime", 0, 0, INT64_MAX, 0));
    if (s_call (self, link, "RUN", id, log_id, -1, "run", body, self->config->run_timeout_ms)) {
        pending_t *pending = self->last_pending;
        pending->job_id = xxl_msg_int (msg, NULL, "jobId", 1, 0, INT64_MAX, 0);
        pending->log_date_time = xxl_msg_int (msg, NULL, "logDateTime", 0, 0, INT64_MAX, 0);
    }
    free (body);
}

static void
s_handle_request (bridge_t *self, link_t *link, xxl_msg_t *msg, const char *type)
{
    uint64_t id = xxl_msg_id (msg);
    if (streq (type, "RUN")) {
        s_handle_run (self, link, msg);
        return;
    }
    if (link->exec->expired && (streq (type, "BEAT") || streq (type, "IDLE_BEAT"))) {
        bridge_reply (self, link, id, 500, "stopping: the executor stopped registering with the bridge");
        return;
    }
    char *body = NULL;
    const char *path = NULL;
    int64_t from_byte = -1;
    int timeout = self->config->request_timeout_ms;
    if (streq (type, "BEAT")) {
        path = "beat";
        body = strdup ("{}");
        timeout = self->config->probe_timeout_ms;
    }
    else
    if (streq (type, "IDLE_BEAT") || streq (type, "KILL")) {
        int64_t job_id = xxl_msg_int (msg, NULL, "jobId", 1, 0, INT64_MAX, 0);
        if (!xxl_msg_error (msg)) {
            path = streq (type, "KILL")? "kill": "idleBeat";
            body = zsys_sprintf ("{\"jobId\":%" PRId64 "}", job_id);
            if (streq (type, "IDLE_BEAT"))
                timeout = self->config->probe_timeout_ms;
        }
    }
    else
    if (streq (type, "LOG")) {
        int64_t log_id = xxl_msg_int (msg, NULL, "logId", 1, 1, INT64_MAX, 0);
        int64_t when = xxl_msg_int (msg, NULL, "logDateTime", 0, 0, INT64_MAX, 0);
        int64_t from = xxl_msg_int (msg, NULL, "fromLineNum", 0, 1, INT32_MAX, 1);
        if (xxl_msg_get (xxl_msg_root (msg), "fromByte")) {
            from_byte = xxl_msg_int (msg, NULL, "fromByte", 1, 0, INT64_MAX, 0);
            from = 1;
        }
        if (!xxl_msg_error (msg)) {
            path = "log";
            body = zsys_sprintf ("{\"logDateTim\":%" PRId64 ",\"logId\":%" PRId64
                                 ",\"fromLineNum\":%" PRId64 "}", when, log_id, from);
        }
    }
    else {
        bridge_reply (self, link, id, 400, "unknown message type");
        return;
    }
    if (!body) {
        bridge_reply (self, link, id, 400, xxl_msg_error (msg)? xxl_msg_error (msg): "malformed");
        return;
    }
    s_call (self, link, type, id, 0, from_byte, path, body, timeout);
    free (body);
}

static void
s_handle_reply (bridge_t *self, link_t *link, xxl_msg_t *msg)
{
    uint64_t id = xxl_msg_id (msg);
    int code = (int) xxl_msg_int (msg, NULL, "code", 0, 0, 999, 500);
    const char *text = xxl_msg_str (msg, NULL, "msg", 0, 65536, "");
    if (id == link->register_id) {
        link->register_id = 0;
        bool was = link->registered;
        link->registered = code == 200;
        if (code == 200) {
            const msgpack_object *content = xxl_msg_get (xxl_msg_root (msg), "content");
            const msgpack_object *now = content && content->type == MSGPACK_OBJECT_MAP
                                      ? xxl_msg_get (content, "now"): NULL;
            int64_t rtt = zclock_mono () - link->register_sent;
            if (now && now->type == MSGPACK_OBJECT_POSITIVE_INTEGER && rtt >= 0 && rtt < 2000)
                link->clock_offset = (int64_t) now->via.u64 - (link->register_sent + rtt / 2);
            if (!was)
                self->deliver = true;
        }
        else {
            char line [700];
            snprintf (line, sizeof line, "%s refused executor %s at %s: %d %s", link->endpoint,
                      link->exec->app, link->exec->url, code, text);
            bridge_ratelog (&self->refused_logged, &self->refused_held, line);
        }
    }
    else
    if (id == link->batch_id) {
        if (code == 401)
            link->registered = false, bridge_register (self, link, false);
        s_batch_end (self, link, code == 200);
    }
}

static void
s_link_read (bridge_t *self, link_t *link)
{
    while (link->dealer) {
        zmq_msg_t frame;
        zmq_msg_init (&frame);
        if (zmq_msg_recv (&frame, zsock_resolve (link->dealer), ZMQ_DONTWAIT) < 0) {
            zmq_msg_close (&frame);
            break;
        }
        uint64_t id = 0;
        char err [256];
        xxl_msg_t *msg = xxl_msg_decode (zmq_msg_data (&frame), zmq_msg_size (&frame), &id,
                                         err, sizeof err);
        zmq_msg_close (&frame);
        link->heard = zclock_mono ();
        if (!msg) {
            if (id)
                bridge_reply (self, link, id, 400, err);
            continue;
        }
        const char *type = xxl_msg_type (msg);
        if (streq (type, "REPLY"))
            s_handle_reply (self, link, msg);
        else
            s_handle_request (self, link, msg, type);
        xxl_msg_destroy (&msg);
    }
}

//  --------------------------------------------------------------------------
//  Runs an executor lost (restarted at the same address mid-run)

//  The answer of an idleBeat about an open run: code 200 (its job idle),
//  else (running, or no answer: nothing known)
static void
s_lost_answer (bridge_t *self, int64_t log_id, int code)
{
    char id [XXL_BRIDGE_ID_MAX];
    xxl_bridge_routes_id (log_id, id);
    open_run_t *open = (open_run_t *) zhashx_lookup (self->open_runs, id);
    if (!open)
        return;
    open->asking = false;
    if (open->idle < 0 || xxl_spool_pending (self->spool, log_id)) {
        zhashx_delete (self->open_runs, id);           //  (its result came meanwhile)
        return;
    }
    open->idle = code == 200? open->idle + 1: 0;
    if (open->idle < 2)
        return;
    const char *tab = strchr (open->key, '\t');
    char msg [600];
    snprintf (msg, sizeof msg, "lost: the XXL-JOB executor at %s no longer runs this job (it"
              " restarted?): its idleBeat found job %" PRId64 " idle at two checks %d s apart"
              " and no result came", tab? tab + 1: open->key, open->job_id,
              self->config->lost_check_s);
    xxl_result_t result = { .log_id = log_id, .log_date_time = open->log_date_time,
                            .code = 500, .msg = msg };
    if (xxl_spool_add (self->spool, &result) == 0) {
        zsys_info ("bridge: run %" PRId64 " %s", log_id, msg);
        xxl_journal_done (self->journal, &log_id, 1);
        self->deliver = true;
        zhashx_delete (self->open_runs, id);
    }
}

//  The runs open before a restart (routes with their job, no result
//  spooled) are open runs again: the lost-run check asks their executors
//  about them as about the runs sent in this life
static void
s_open_runs_load (bridge_t *self)
{
    int64_t log_id, job_id, log_date_time;
    for (const char *key = xxl_bridge_routes_first (self->routes, &log_id, &job_id, &log_date_time);
         key; key = xxl_bridge_routes_next (self->routes, &log_id, &job_id, &log_date_time)) {
        if (job_id < 0 || xxl_spool_pending (self->spool, log_id))
            continue;
        open_run_t *open = (open_run_t *) zmalloc (sizeof *open);
        open->log_id = log_id;
        open->job_id = job_id;
        open->log_date_time = log_date_time;
        open->key = strdup (key);
        char id [XXL_BRIDGE_ID_MAX];
        xxl_bridge_routes_id (log_id, id);
        if (zhashx_insert (self->open_runs, id, open))
            s_open_run_free ((void **) &open);
    }
}

//  Asks each executor about its open runs (one idleBeat per run).  The
//  runs of an executor forgotten are the scheduler's lost-run monitor's:
//  the bridge forgets them (and closes them in the journal).
static void
s_lost_check (bridge_t *self)
{
    zlist_t *gone = zlist_new ();
    zlist_autofree (gone);
    for (open_run_t *open = (open_run_t *) zhashx_first (self->open_runs); open;
         open = (open_run_t *) zhashx_next (self->open_runs)) {
        executor_t *exec = (executor_t *) zhashx_lookup (self->executors, open->key);
        if (!exec && !open->asking) {
            xxl_journal_done (self->journal, &open->log_id, 1);
            zlist_append (gone, (void *) zhashx_cursor (self->open_runs));
        }
        if (!exec || exec->expired || open->asking || !self->nendpoints)
            continue;
        char *body = zsys_sprintf ("{\"jobId\":%" PRId64 "}", open->job_id);
        pending_t *pending = (pending_t *) zmalloc (sizeof *pending);
        pending->bridge = self;
        pending->link = exec->links;
        snprintf (pending->type, sizeof pending->type, "LOSTCHECK");
        pending->log_id = open->log_id;
        if (xxl_bridge_call_post (self->call, exec->url, "idleBeat", body,
                                  self->config->probe_timeout_ms, s_call_done, pending) == 0) {
            exec->calls++;
            open->asking = true;
        }
        else
            free (pending);
        zstr_free (&body);
    }
    for (const char *id = (const char *) zlist_first (gone); id;
         id = (const char *) zlist_next (gone))
        zhashx_delete (self->open_runs, id);
    zlist_destroy (&gone);
}

//  --------------------------------------------------------------------------
//  The loop

//  Writes what the turn journaled and routed (one write() each, no fsync).
//  Called before xxl_bridge_call_perform, the only place calls do any
//  I/O: a RUN's "A" and route are in their files before its executor can
//  have it (xxl_bridge_call_post only queues), whatever the turn did.
static void
s_flush (bridge_t *self)
{
    xxl_journal_flush (self->journal);
    xxl_bridge_routes_flush (self->routes);
}

//  A clock of silence (mono ms; 0: unset) moved forward by a stall
static int64_t
s_forward (int64_t at, int64_t stall, int64_t now)
{
    return !at? 0: at + stall < now? at + stall: now;
}

//  A turn that took more than BRIDGE_LOOP_STALL_MS beyond its poll's
//  wait: the loop stood still, so whatever it did not hear meanwhile
//  (the schedulers' answers, the executors' registry calls, callback
//  acks) was waiting unread, not silent.  Each clock of silence moves
//  forward by that time (to now at most), as xxl-agent's do; not a
//  REGISTER's send time, which times its answer for the clock offset
//  (an answer read after a stall is too late to set it)
static void
s_turn_stall (bridge_t *self, int64_t now)
{
    int64_t stall = now - self->turn_at - self->waited;
    self->turn_at = now;
    self->waited = 0;
    if (stall <= BRIDGE_LOOP_STALL_MS)
        return;
    for (executor_t *exec = (executor_t *) zhashx_first (self->executors); exec;
         exec = (executor_t *) zhashx_next (self->executors)) {
        exec->seen = s_forward (exec->seen, stall, now);
        for (size_t i = 0; i < self->nendpoints; i++) {
            link_t *link = exec->links + i;
            link->heard = s_forward (link->heard, stall, now);
            link->unanswered = s_forward (link->unanswered, stall, now);
            link->batch_sent = s_forward (link->batch_sent, stall, now);
        }
    }
    zsys_warning ("bridge: the loop stood still for %" PRId64 " ms (stopped or starved of"
                  " CPU): that time counts as no scheduler's or executor's silence", stall);
}

static void
s_timers (bridge_t *self)
{
    int64_t now = zclock_mono ();
    s_turn_stall (self, now);
    bridge_executors_flush (self, false);
    if (now >= self->next_monitor) {
        self->next_monitor = now + BRIDGE_MONITOR_MS;
        for (executor_t *exec = (executor_t *) zhashx_first (self->executors); exec;
             exec = (executor_t *) zhashx_next (self->executors))
            for (size_t i = 0; i < self->nendpoints; i++) {
                bridge_link_events (self, exec->links + i);
                exec->links [i].check = true;   //  (and a read, whatever the fd said)
            }
    }
    if (now >= self->next_beat) {
        self->next_beat = now + self->config->beat_s * 1000LL;
        for (executor_t *exec = (executor_t *) zhashx_first (self->executors); exec;
             exec = (executor_t *) zhashx_next (self->executors))
            if (!exec->expired)
                for (size_t i = 0; i < self->nendpoints; i++)
                    bridge_register (self, exec->links + i, false);
        bridge_executors_check (self);
        self->deliver = true;
    }
    //  Batches not answered in time go again
    for (executor_t *exec = (executor_t *) zhashx_first (self->executors); exec;
         exec = (executor_t *) zhashx_next (self->executors))
        for (size_t i = 0; i < self->nendpoints; i++) {
            link_t *link = exec->links + i;
            if (link->batch_id && now - link->batch_sent > BRIDGE_BATCH_WAIT_MS)
                s_batch_end (self, link, false);
            if (bridge_link_stale (self, link, now)) {
                if (link->batch_id)
                    s_batch_end (self, link, false);
                bridge_link_replace (self, link);
            }
        }
    if (self->config->lost_check_s > 0 && now >= self->next_lost_check) {
        self->next_lost_check = now + self->config->lost_check_s * 1000LL;
        s_lost_check (self);
    }
    if (self->deliver_at && now >= self->deliver_at) {
        self->deliver_at = 0;
        self->deliver = true;
    }
    if (self->deliver && xxl_spool_size (self->spool))
        s_deliver (self);
}

//  The calls' check of each address they connect to (xxl_bridge_call_fn)
static bool
s_address_allowed (void *arg, const struct sockaddr *addr)
{
    return xxl_bridge_net_allows ((xxl_bridge_net_t *) arg, addr);
}

static int
s_start (bridge_t *self, const xxl_bridge_config_t *config)
{
    self->config = config;
    char why [512];
    self->net = xxl_bridge_net_new (config->executors, why, sizeof why);
    if (!self->net) {
        zsys_error ("bridge: %s", why);
        return -1;
    }
    char *list = strdup (config->schedulers? config->schedulers: "");
    char *save = NULL;
    for (char *ep = strtok_r (list, ", ", &save); ep; ep = strtok_r (NULL, ", ", &save)) {
        self->endpoints = (char **) realloc (self->endpoints,
                                             (self->nendpoints + 1) * sizeof (char *));
        self->endpoints [self->nendpoints++] = strdup (ep);
        if (!self->cert && !xxl_transport_loopback (ep))
            zsys_warning ("bridge: %s is not on this host and the bridge has no certificate:"
                          " plain text", ep);
    }
    free (list);
    if (!self->nendpoints) {
        zsys_error ("bridge: --scheduler names no endpoint");
        return -1;
    }
    if (config->cert && *config->cert) {
        self->cert = zcert_load (config->cert);
        zcert_t *server = config->scheduler_key? zcert_load (config->scheduler_key): NULL;
        if (!self->cert || !server) {
            zsys_error ("bridge: cannot read %s", !self->cert? config->cert: config->scheduler_key);
            zcert_destroy (&server);
            return -1;
        }
        self->server_key = strdup (zcert_public_txt (server));
        zcert_destroy (&server);
    }
    if (zsys_dir_create ("%s", config->logdir)) {
        zsys_error ("bridge: cannot create %s", config->logdir);
        return -1;
    }
    char *path = zsys_sprintf ("%s/bridge.spool", config->logdir);
    self->spool = xxl_spool_new (path);
    zstr_free (&path);
    path = zsys_sprintf ("%s/bridge.journal", config->logdir);
    self->journal = xxl_journal_new (path, 0);
    zstr_free (&path);
    path = zsys_sprintf ("%s/bridge.routes", config->logdir);
    self->routes = xxl_bridge_routes_new (path);
    zstr_free (&path);
    if (!self->spool || !self->journal || !self->routes) {
        zsys_error ("bridge: cannot open the spool, journal or routes in %s", config->logdir);
        return -1;
    }
    self->call = xxl_bridge_call_new (config->token, config->parallel, config->queued);
    if (self->call)
        xxl_bridge_call_set_check (self->call, s_address_allowed, self->net);
    xxl_bridge_admin_config_t admin = {
        .listen = config->listen, .path = config->path, .token = config->token,
        .insecure = config->insecure, .tls_cert = config->tls_cert,
        .tls_key = config->tls_key, .request_timeout_s = config->admin_timeout_s,
        .registry = bridge_on_registry, .callback = s_on_callback,
        .arg = self
    };
    self->admin = xxl_bridge_admin_new (&admin, why, sizeof why);
    if (!self->admin || !self->call) {
        zsys_error ("bridge: %s", self->admin? "cannot start the calls to executors": why);
        return -1;
    }
    self->executors = zhashx_new ();
    zhashx_set_destructor (self->executors, bridge_executor_free);
    self->called = zhashx_new ();
    self->in_flight = zhashx_new ();
    self->open_runs = zhashx_new ();
    zhashx_set_destructor (self->open_runs, s_open_run_free);
    self->next_lost_check = zclock_mono () + config->lost_check_s * 1000LL;
    self->enc = xxl_enc_new ();
    self->deliver = xxl_spool_size (self->spool) > 0;
    bridge_executors_load (self);
    s_open_runs_load (self);
    zsys_info ("bridge: listening on %s%s for XXL-JOB executors (port %d), %zu result(s)"
               " spooled, %zu run(s) open", config->listen, config->path,
               xxl_bridge_admin_port (self->admin), xxl_spool_size (self->spool),
               xxl_bridge_routes_size (self->routes));
    if (config->ready_file && *config->ready_file) {
        FILE *file = fopen (config->ready_file, "w");
        if (file) {
            fprintf (file, "port=%d\n", xxl_bridge_admin_port (self->admin));
            fclose (file);
        }
    }
    return 0;
}

static void
s_stop (bridge_t *self)
{
    //  Unregister every live executor: the schedulers stop routing to them
    //  at once (their runs go on in the executors; results spool at the
    //  next start, as the executors retry their callbacks)
    if (self->executors) {
        bridge_executors_flush (self, true);
        for (executor_t *exec = (executor_t *) zhashx_first (self->executors); exec;
             exec = (executor_t *) zhashx_next (self->executors))
            if (!exec->expired)
                for (size_t i = 0; i < self->nendpoints; i++)
                    bridge_register (self, exec->links + i, true);
    }
    xxl_bridge_admin_destroy (&self->admin);
    xxl_bridge_call_destroy (&self->call);
    zhashx_destroy (&self->executors);
    zhashx_destroy (&self->called);
    zhashx_destroy (&self->in_flight);
    zhashx_destroy (&self->open_runs);
    xxl_spool_destroy (&self->spool);
    xxl_journal_destroy (&self->journal);
    xxl_bridge_routes_destroy (&self->routes);
    xxl_bridge_net_destroy (&self->net);
    xxl_enc_destroy (&self->enc);
    zcert_destroy (&self->cert);
    free (self->server_key);
    for (size_t i = 0; i < self->nendpoints; i++)
        free (self->endpoints [i]);
    free (self->endpoints);
}

void
xxl_bridge_config_defaults (xxl_bridge_config_t *config)
{
    memset (config, 0, sizeof *config);
    config->schedulers = "tcp://127.0.0.1:7071";
    config->listen = "127.0.0.1:8080";
    config->path = "/xxl-job-admin";
    config->token = "";
    config->executors = XXL_BRIDGE_NET_DEFAULT;
    config->logdir = "/var/lib/xxl-bridge";
    config->beat_s = 30;
    config->expire_s = 90;
    config->run_timeout_ms = 8000;
    config->probe_timeout_ms = 900;
    config->request_timeout_ms = 4000;
    config->executors_max = 1000;
    config->parallel = 64;
    config->queued = 10000;
    config->lost_check_s = 60;
    config->admin_timeout_s = XXL_BRIDGE_ADMIN_REQUEST_S;
}

int
xxl_bridge_run (const xxl_bridge_config_t *config)
{
    bridge_t bridge, *self = &bridge;
    memset (self, 0, sizeof *self);
    if (s_start (self, config)) {
        s_stop (self);
        return 1;
    }
    size_t cap = 0;
    zmq_pollitem_t *items = NULL;
    link_t **owners = NULL;
    self->turn_at = zclock_mono ();
    while (!zsys_interrupted) {
        size_t want = zhashx_size (self->executors) * self->nendpoints + 2;
        if (want > cap) {
            cap = want * 2;
            items = (zmq_pollitem_t *) realloc (items, cap * sizeof *items);
            owners = (link_t **) realloc (owners, cap * sizeof *owners);
            assert (items && owners);
        }
        //  The DEALERs are polled by their ZMQ_FDs, in one poll() with the
        //  epoll fds of the HTTP server and of the calls (each a set of
        //  sockets): a zmq socket in zmq_poll costs a syscall or two of
        //  its own each turn.  Such an fd only says "look at the socket";
        //  a link is read until it has nothing (which re-arms it), and
        //  again after anything was sent on it (check)
        int n = 0;
        bool check = false;
        for (executor_t *exec = (executor_t *) zhashx_first (self->executors); exec;
             exec = (executor_t *) zhashx_next (self->executors))
            for (size_t i = 0; i < self->nendpoints; i++) {
                link_t *link = exec->links + i;
                if (link->dealer && link->fd >= 0) {
                    items [n] = (zmq_pollitem_t) { NULL, link->fd, ZMQ_POLLIN, 0 };
                    owners [n++] = link;
                    if (link->check)
                        check = true;
                }
            }
        //  (the links' socket monitors are read by the timers, every
        //  BRIDGE_MONITOR_MS: polled here they would double the sockets
        //  each turn checks, a cost paid per turn and so per run)
        int sockets = n;
        long timeout = check? 0: BRIDGE_MONITOR_MS;
        zmq_pollitem_t *admin = items + n++, *call = items + n++;
        *admin = (zmq_pollitem_t) { NULL, xxl_bridge_admin_fd (self->admin, &timeout),
                                    ZMQ_POLLIN, 0 };
        *call = (zmq_pollitem_t) { NULL, xxl_bridge_call_fd (self->call, &timeout),
                                   ZMQ_POLLIN, 0 };
        int64_t poll_at = zclock_mono ();
        if (zmq_poll (items, n, timeout) < 0) {
            if (zmq_errno () != EINTR)
                break;
            admin->revents = call->revents = 0;
        }
        int64_t polled = zclock_mono () - poll_at;
        self->waited += timeout >= 0 && polled > timeout? timeout: polled;
        xxl_bridge_admin_run (self->admin, admin->revents & ZMQ_POLLIN);
        s_flush (self);
        xxl_bridge_call_perform (self->call, call->revents & ZMQ_POLLIN);
        for (int i = 0; i < sockets; i++)
            if ((items [i].revents & ZMQ_POLLIN) || owners [i]->check) {
                s_link_read (self, owners [i]);
                //  (the read ended with a recv that found nothing, after
                //  whatever it sent: the fd signals again)
                owners [i]->check = false;
            }
        s_timers (self);
    }
    free (items);
    free (owners);
    zsys_info ("bridge: stopping");
    s_stop (self);
    return 0;
}
