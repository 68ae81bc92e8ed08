/*  xxl_bare.c -- the references `make bench` measures xxl against (DESIGN §7).

    The machine's speed moves by 2x between hours, so each figure of the
    bench is written as a ratio to one of these, measured in the same run:

      loop DB SECONDS WINDOW    the bare loop (`e2e-bare`): two processes, a
                                "scheduler" that owns one SQLite table (WAL,
                                synchronous=NORMAL, no index) and an "agent"
                                it forks, talking over ZeroMQ on loopback TCP
                                (ROUTER and DEALER, msgpack frames of libxxl's
                                codec, the batch form of RUN and batched
                                CALLBACKs, as the real path).  A client thread
                                of the scheduler's process sends JOB_TRIGGERs
                                to its api ROUTER over TCP (WINDOW requests
                                outstanding, at most 20,000 runs unfinished:
                                xxl_bench's e2e).  Each turn the scheduler
                                reads what came, then in one transaction
                                (group commit) updates the rows of the
                                callbacks' items and inserts a row per
                                trigger, commits, answers the triggers (their
                                logIds) and the callbacks, and sends the new
                                rows as RUNs.  The agent calls an empty
                                handler per item, answers the RUN, and sends
                                the items' results in one CALLBACK per read.
                                No scheduler logic: no jobs, routes, planner,
                                indexes, retries.  Figure: runs whose update
                                committed within SECONDS, per second.
      rt DB SAMPLES             its single round trip: the client sends one
                                trigger at a time; insert, commit, reply and
                                RUN; the handler's start (CLOCK_REALTIME,
                                sent back in handleMsg) - the time just before
                                the send: p50/p99 after 50 warm-up samples, as
                                the bench's latency phase measures trigger ->
                                handler start; and the trigger -> reply time.
      XXL_BARE_NO_API=1         both without the client: the scheduler makes
                                a row per free place of the window itself,
                                and the round trip starts at the insert.
      spawn SECONDS [WORKERS]   GLUE_SHELL's reference: WORKERS (default: the
                                online CPUs) threads each posix_spawn
                                `bash FILE` (FILE a script running `true`,
                                output to /dev/null) and wait for it, in a
                                loop: processes per second.

    Each prints one JSON object on stdout; exits 1 when a run of the loop
    has no final row (or a child failed), 2 on bad usage or setup.
*/

#include "xxl/msg.h"

#include <czmq.h>
#include "bench_util.h"
#include <sqlite3.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#define BARE_BATCH      1000            //  items of a RUN (the agent's runBatch)
#define BARE_CALLBACK   10000           //  items of a CALLBACK at most

extern char **environ;


static double
s_cpu_s (int who)
{
    struct rusage usage;
    getrusage (who, &usage);
    return (double) usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6
         + (double) usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
}

static void
s_die (const char *what, const char *detail)
{
    fprintf (stderr, "xxl_bare: %s: %s\n", what, detail? detail: "");
    exit (2);
}

//  --------------------------------------------------------------------
//  The agent: a DEALER; an empty handler per RUN item

//  The handlers: "noop" returns success; "stamp" also tells when it started
static int
s_handler (const char *name, char *msg, size_t size, int64_t started)
{
    if (name && streq (name, "stamp"))
        snprintf (msg, size, "%" PRId64, started);
    else
        *msg = 0;
    return 200;
}

static void
s_agent (const char *endpoint)
{
    void *context = zmq_ctx_new ();
    void *dealer = zmq_socket (context, ZMQ_DEALER);
    int zero = 0;
    zmq_setsockopt (dealer, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt (dealer, ZMQ_SNDHWM, &zero, sizeof zero);
    zmq_setsockopt (dealer, ZMQ_RCVHWM, &zero, sizeof zero);
    if (zmq_connect (dealer, endpoint))
        s_die ("agent connect", zmq_strerror (zmq_errno ()));
    xxl_enc_t *enc = xxl_enc_new (), *callback = xxl_enc_new ();
    uint64_t next_id = 1;
    //  Hello, so that the ROUTER knows this peer
    xxl_enc_request (enc, "REGISTER", next_id++);
    xxl_enc_kint (enc, "runBatch", BARE_BATCH);
    size_t size;
    const void *data = xxl_enc_finish (enc, &size);
    zmq_send (dealer, data, size, 0);
    size_t items = 0;
    bool running = true;
    while (running) {
        zmq_pollitem_t item = { dealer, 0, ZMQ_POLLIN, 0 };
        if (zmq_poll (&item, 1, 1000) <= 0)
            continue;
        //  Read what is there; the results go in one CALLBACK per read
        zmq_msg_t frame;
        zmq_msg_init (&frame);
        while (running && items <= BARE_CALLBACK - BARE_BATCH
        &&     zmq_msg_recv (&frame, dealer, ZMQ_DONTWAIT) >= 0) {
            char err [256];
            uint64_t id;
            xxl_msg_t *msg = xxl_msg_decode (zmq_msg_data (&frame), zmq_msg_size (&frame),
                                             &id, err, sizeof err);
            if (!msg)
                s_die ("agent decode", err);
            const char *type = xxl_msg_type (msg);
            if (streq (type, "STOP"))
                running = false;
            else
            if (streq (type, "RUN")) {
                size_t count = 0;
                const msgpack_object *runs = xxl_msg_array (msg, NULL, "runs", 1, BARE_BATCH,
                                                            &count);
                xxl_enc_reply (enc, xxl_msg_id (msg), 200, NULL);
                xxl_enc_key (enc, "content");
                xxl_enc_array_begin (enc);
                for (size_t i = 0; i < count; i++) {
                    const msgpack_object *run = &runs [i];
                    int64_t started = bench_wall_us ();
                    char text [32];
                    int code = s_handler (xxl_msg_str (msg, run, "executorHandler", 1, 255, NULL),
                                          text, sizeof text, started);
                    xxl_enc_map_begin (enc);
                    xxl_enc_kint (enc, "code", 200);
                    xxl_enc_key (enc, "msg");
                    xxl_enc_nil (enc);
                    xxl_enc_map_end (enc);
                    if (items == 0) {
                        xxl_enc_request (callback, "CALLBACK", next_id++);
                        xxl_enc_key (callback, "items");
                        xxl_enc_array_begin (callback);
                    }
                    xxl_enc_map_begin (callback);
                    xxl_enc_kint (callback, "logId", xxl_msg_int (msg, run, "logId", 1, 1,
                                                                  INT64_MAX, 0));
                    xxl_enc_kint (callback, "logDateTime",
                                  xxl_msg_int (msg, run, "logDateTime", 1, 0, INT64_MAX, 0));
                    xxl_enc_kint (callback, "handleCode", code);
                    xxl_enc_kstr (callback, "handleMsg", *text? text: NULL);
                    xxl_enc_map_end (callback);
                    items++;
                }
                if (xxl_msg_error (msg))
                    s_die ("agent RUN", xxl_msg_error (msg));
                data = xxl_enc_finish (enc, &size);
                zmq_send (dealer, data, size, 0);
            }
            //  (REPLYs to the CALLBACKs: nothing to do)
            xxl_msg_destroy (&msg);
        }
        zmq_msg_close (&frame);
        if (items) {
            data = xxl_enc_finish (callback, &size);
            zmq_send (dealer, data, size, 0);
            items = 0;
        }
    }
    xxl_enc_destroy (&enc);
    xxl_enc_destroy (&callback);
    zmq_close (dealer);
    zmq_ctx_term (context);
}

//  --------------------------------------------------------------------
//  The client: a thread of the scheduler's process with a DEALER on its
//  api ROUTER (loopback TCP, as xxl_bench's): JOB_TRIGGER requests, one a
//  run, each answered with its logId once the row is committed

typedef struct {
    char endpoint [256];                //  the api socket
    void *context;
    bool rt;                            //  one at a time (else pipelined)
    size_t window;                      //  pipelined: requests outstanding at most
    int64_t stop_us;                    //  pipelined: when sending stops
    int samples;                        //  rt: samples after 50 warm-up ones
    int64_t *latency, *reply_us;        //  rt: per sample
    int64_t triggered;
    //  Shared with the scheduler's thread (__atomic)
    int64_t open;                       //  runs inserted and not yet updated
    int64_t stamp_id, stamp;            //  the latest stamped run's logId, stamp
    int finished;                       //  the client has all its replies
} s_client_t;

#define BARE_OPEN_MAX   20000           //  runs unfinished at most (xxl_bench's e2e)

//  Sends JOB_TRIGGER number `id`
static void
s_client_send (void *dealer, xxl_enc_t *enc, uint64_t id)
{
    xxl_enc_request (enc, "JOB_TRIGGER", id);
    xxl_enc_kint (enc, "jobId", (int64_t) (id % 64) + 1);
    xxl_enc_kstr (enc, "triggerType", "API");
    size_t size;
    const void *data = xxl_enc_finish (enc, &size);
    zmq_send (dealer, data, size, 0);
}

//  Reads a reply (waiting up to timeout_ms); returns its first logId, 0
//  when none came
static int64_t
s_client_recv (void *dealer, int timeout_ms)
{
    zmq_pollitem_t item = { dealer, 0, ZMQ_POLLIN, 0 };
    if (timeout_ms && zmq_poll (&item, 1, timeout_ms) <= 0)
        return 0;
    zmq_msg_t frame;
    zmq_msg_init (&frame);
    if (zmq_msg_recv (&frame, dealer, ZMQ_DONTWAIT) < 0) {
        zmq_msg_close (&frame);
        return 0;
    }
    char err [256];
    uint64_t id;
    xxl_msg_t *reply = xxl_msg_decode (zmq_msg_data (&frame), zmq_msg_size (&frame), &id,
                                       err, sizeof err);
    zmq_msg_close (&frame);
    if (!reply)
        s_die ("client decode", err);
    const msgpack_object *content = xxl_msg_map (reply, NULL, "content", 1);
    size_t count = 0;
    const msgpack_object *ids = content? xxl_msg_array (reply, content, "logIds", 1, 1, &count)
                                      : NULL;
    if (xxl_msg_int (reply, NULL, "code", 1, 0, 999, 0) != 200 || !ids || count != 1)
        s_die ("trigger refused", xxl_msg_error (reply));
    int64_t log_id = (int64_t) ids [0].via.u64;
    xxl_msg_destroy (&reply);
    return log_id;
}

static void *
s_client (void *arg)
{
    s_client_t *self = (s_client_t *) arg;
    void *dealer = zmq_socket (self->context, ZMQ_DEALER);
    int zero = 0;
    zmq_setsockopt (dealer, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt (dealer, ZMQ_SNDHWM, &zero, sizeof zero);
    zmq_setsockopt (dealer, ZMQ_RCVHWM, &zero, sizeof zero);
    if (zmq_connect (dealer, self->endpoint))
        s_die ("client connect", zmq_strerror (zmq_errno ()));
    xxl_enc_t *enc = xxl_enc_new ();
    uint64_t next = 1;
    if (self->rt) {
        for (int i = 0; i < self->samples + 50; i++) {
            int64_t sent = bench_wall_us ();
            s_client_send (dealer, enc, next++);
            int64_t log_id = s_client_recv (dealer, 10000);
            int64_t replied = bench_wall_us ();
            if (!log_id)
                s_die ("rt", "no reply within 10 s");
            //  The handler's start, once its result came (outside the
            //  measured interval)
            while (__atomic_load_n (&self->stamp_id, __ATOMIC_ACQUIRE) != log_id) {
                if (bench_wall_us () - sent > 10000000)
                    s_die ("rt", "no result within 10 s");
                struct timespec ts = { 0, 20000 };
                nanosleep (&ts, NULL);
            }
            int64_t stamp = __atomic_load_n (&self->stamp, __ATOMIC_ACQUIRE);
            if (i >= 50) {
                self->latency [i - 50] = stamp - sent;
                self->reply_us [i - 50] = replied - sent;
            }
            self->triggered++;
        }
    }
    else {
        size_t outstanding = 0;
        while (true) {
            bool sending = bench_wall_us () < self->stop_us;
            int64_t open = __atomic_load_n (&self->open, __ATOMIC_RELAXED);
            while (sending && outstanding < self->window
            &&     open + (int64_t) outstanding < BARE_OPEN_MAX) {
                s_client_send (dealer, enc, next++);
                outstanding++;
            }
            if (!sending && outstanding == 0)
                break;
            if (s_client_recv (dealer, sending? 5: 10000)) {
                outstanding--;
                self->triggered++;
                while (outstanding && s_client_recv (dealer, 0)) {
                    outstanding--;
                    self->triggered++;
                }
            }
            else
            if (!sending)
                s_die ("client", "trigger replies missing");
        }
    }
    __atomic_store_n (&self->finished, 1, __ATOMIC_RELEASE);
    xxl_enc_destroy (&enc);
    zmq_close (dealer);
    return NULL;
}

//  --------------------------------------------------------------------
//  The scheduler: an api ROUTER, an agents ROUTER and one table

typedef struct {
    sqlite3 *db;
    sqlite3_stmt *insert, *update, *begin, *commit;
    void *context, *router, *api;
    char peer [256];                    //  the agent's routing id
    size_t peer_size;
    char client [256];                  //  the client's routing id
    size_t client_size;
    xxl_enc_t *enc;
    uint64_t next_id;
    pid_t agent;
    s_client_t *shared;                 //  with the client's thread
    //  Results read, waiting for the turn's commit
    int64_t *done_ids, *done_codes, *done_stamps;
    size_t done_count, done_max;
    uint64_t *callbacks;                //  ids of the CALLBACKs to answer
    size_t callback_count, callback_max;
    //  Triggers read (their request ids), waiting for the turn's commit
    uint64_t *triggers;
    size_t trigger_count, trigger_max;
    int64_t *new_ids;                   //  the turn's new rows
    size_t new_max;
} s_bare_t;

static void
s_sql (s_bare_t *self, const char *sql)
{
    char *err = NULL;
    if (sqlite3_exec (self->db, sql, NULL, NULL, &err) != SQLITE_OK)
        s_die (sql, err);
}

static sqlite3_stmt *
s_prepare (s_bare_t *self, const char *sql)
{
    sqlite3_stmt *stmt;
    if (sqlite3_prepare_v2 (self->db, sql, -1, &stmt, NULL) != SQLITE_OK)
        s_die (sql, sqlite3_errmsg (self->db));
    return stmt;
}

static void
s_step (s_bare_t *self, sqlite3_stmt *stmt)
{
    if (sqlite3_step (stmt) != SQLITE_DONE)
        s_die ("step", sqlite3_errmsg (self->db));
    sqlite3_reset (stmt);
}

static void *
s_grow (void *array, size_t *max, size_t need, size_t item)
{
    if (need <= *max)
        return array;
    while (*max < need)
        *max *= 2;
    array = realloc (array, *max * item);
    assert (array);
    return array;
}

static void
s_socket (s_bare_t *self, void **socket, char *endpoint, size_t size)
{
    *socket = zmq_socket (self->context, ZMQ_ROUTER);
    int zero = 0;
    zmq_setsockopt (*socket, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt (*socket, ZMQ_SNDHWM, &zero, sizeof zero);
    zmq_setsockopt (*socket, ZMQ_RCVHWM, &zero, sizeof zero);
    if (zmq_bind (*socket, "tcp://127.0.0.1:*"))
        s_die ("bind", zmq_strerror (zmq_errno ()));
    zmq_getsockopt (*socket, ZMQ_LAST_ENDPOINT, endpoint, &size);
}

static s_bare_t *
s_bare_new (const char *path, s_client_t *shared)
{
    s_bare_t *self = (s_bare_t *) zmalloc (sizeof (s_bare_t));
    self->shared = shared;
    //  The agent first, before any ZeroMQ context: it learns the endpoint
    //  through a pipe
    int fds [2];
    if (pipe (fds))
        s_die ("pipe", strerror (errno));
    fflush (NULL);
    self->agent = fork ();
    if (self->agent < 0)
        s_die ("fork", strerror (errno));
    if (self->agent == 0) {
        close (fds [1]);
        char endpoint [256];
        ssize_t got = read (fds [0], endpoint, sizeof endpoint - 1);
        if (got <= 0)
            _exit (2);
        endpoint [got] = 0;
        s_agent (endpoint);
        _exit (0);
    }
    close (fds [0]);
    unlink (path);
    if (sqlite3_open (path, &self->db) != SQLITE_OK)
        s_die (path, sqlite3_errmsg (self->db));
    s_sql (self, "PRAGMA journal_mode = WAL");
    s_sql (self, "PRAGMA synchronous = NORMAL");
    s_sql (self, "CREATE TABLE run (id INTEGER PRIMARY KEY, job_id INTEGER NOT NULL,"
                 " trigger_time INTEGER NOT NULL, trigger_code INTEGER NOT NULL DEFAULT 0,"
                 " handle_time INTEGER, handle_code INTEGER NOT NULL DEFAULT 0,"
                 " handle_msg TEXT)");
    self->insert = s_prepare (self, "INSERT INTO run (job_id, trigger_time, trigger_code)"
                                    " VALUES (?, ?, 200)");
    self->update = s_prepare (self, "UPDATE run SET handle_code = ?, handle_msg = ?,"
                                    " handle_time = ? WHERE id = ?");
    self->begin = s_prepare (self, "BEGIN");
    self->commit = s_prepare (self, "COMMIT");
    self->context = zmq_ctx_new ();
    char endpoint [256];
    s_socket (self, &self->router, endpoint, sizeof endpoint);
    if (write (fds [1], endpoint, strlen (endpoint)) != (ssize_t) strlen (endpoint))
        s_die ("pipe", strerror (errno));
    close (fds [1]);
    if (shared) {
        s_socket (self, &self->api, shared->endpoint, sizeof shared->endpoint);
        shared->context = self->context;
    }
    //  The agent's hello
    self->peer_size = (size_t) zmq_recv (self->router, self->peer, sizeof self->peer, 0);
    char hello [512];
    if (zmq_recv (self->router, hello, sizeof hello, 0) < 0)
        s_die ("hello", zmq_strerror (zmq_errno ()));
    self->enc = xxl_enc_new ();
    self->next_id = 1;
    self->done_max = self->callback_max = self->trigger_max = self->new_max = 1024;
    self->done_ids = (int64_t *) malloc (self->done_max * sizeof (int64_t));
    self->done_codes = (int64_t *) malloc (self->done_max * sizeof (int64_t));
    self->done_stamps = (int64_t *) malloc (self->done_max * sizeof (int64_t));
    self->callbacks = (uint64_t *) malloc (self->callback_max * sizeof (uint64_t));
    self->triggers = (uint64_t *) malloc (self->trigger_max * sizeof (uint64_t));
    self->new_ids = (int64_t *) malloc (self->new_max * sizeof (int64_t));
    return self;
}

static void
s_bare_send (s_bare_t *self, void *socket, const char *peer, size_t peer_size)
{
    size_t size;
    const void *data = xxl_enc_finish (self->enc, &size);
    zmq_send (socket, peer, peer_size, ZMQ_SNDMORE);
    zmq_send (socket, data, size, 0);
}

//  Reads every message there is on either socket (waiting up to
//  timeout_ms for the first): triggers into the trigger list, the
//  CALLBACKs' items into the done list
static void
s_bare_read (s_bare_t *self, int timeout_ms)
{
    zmq_pollitem_t items [2] = { { self->router, 0, ZMQ_POLLIN, 0 },
                                 { self->api, 0, ZMQ_POLLIN, 0 } };
    if (zmq_poll (items, self->api? 2: 1, timeout_ms) <= 0)
        return;
    zmq_msg_t peer, frame;
    zmq_msg_init (&peer);
    zmq_msg_init (&frame);
    while (self->api && zmq_msg_recv (&peer, self->api, ZMQ_DONTWAIT) >= 0) {
        if (zmq_msg_recv (&frame, self->api, 0) < 0)
            s_die ("recv", zmq_strerror (zmq_errno ()));
        char err [256];
        uint64_t id;
        xxl_msg_t *msg = xxl_msg_decode (zmq_msg_data (&frame), zmq_msg_size (&frame), &id,
                                         err, sizeof err);
        if (!msg || !streq (xxl_msg_type (msg), "JOB_TRIGGER"))
            s_die ("api", msg? xxl_msg_type (msg): err);
        xxl_msg_int (msg, NULL, "jobId", 1, 1, INT64_MAX, 0);
        xxl_msg_str (msg, NULL, "triggerType", 0, 32, NULL);
        if (xxl_msg_error (msg))
            s_die ("JOB_TRIGGER", xxl_msg_error (msg));
        self->client_size = zmq_msg_size (&peer);
        memcpy (self->client, zmq_msg_data (&peer), self->client_size);
        self->triggers = (uint64_t *) s_grow (self->triggers, &self->trigger_max,
                                              self->trigger_count + 1, sizeof (uint64_t));
        self->triggers [self->trigger_count++] = xxl_msg_id (msg);
        xxl_msg_destroy (&msg);
    }
    while (zmq_msg_recv (&peer, self->router, ZMQ_DONTWAIT) >= 0) {
        if (zmq_msg_recv (&frame, self->router, 0) < 0)
            s_die ("recv", zmq_strerror (zmq_errno ()));
        char err [256];
        uint64_t id;
        xxl_msg_t *msg = xxl_msg_decode (zmq_msg_data (&frame), zmq_msg_size (&frame), &id,
                                         err, sizeof err);
        if (!msg)
            s_die ("decode", err);
        if (streq (xxl_msg_type (msg), "CALLBACK")) {
            size_t count = 0;
            const msgpack_object *items = xxl_msg_array (msg, NULL, "items", 1, BARE_CALLBACK,
                                                         &count);
            size_t need = self->done_count + count, max = self->done_max;
            self->done_ids = (int64_t *) s_grow (self->done_ids, &max, need, sizeof (int64_t));
            max = self->done_max;
            self->done_codes = (int64_t *) s_grow (self->done_codes, &max, need, sizeof (int64_t));
            self->done_stamps = (int64_t *) s_grow (self->done_stamps, &self->done_max, need,
                                                    sizeof (int64_t));
            for (size_t i = 0; i < count; i++) {
                size_t at = self->done_count++;
                self->done_ids [at] = xxl_msg_int (msg, &items [i], "logId", 1, 1, INT64_MAX, 0);
                self->done_codes [at] = xxl_msg_int (msg, &items [i], "handleCode", 1, 1, 999, 0);
                const char *text = xxl_msg_str (msg, &items [i], "handleMsg", 0, 15000, NULL);
                self->done_stamps [at] = text? strtoll (text, NULL, 10): 0;
            }
            self->callbacks = (uint64_t *) s_grow (self->callbacks, &self->callback_max,
                                                   self->callback_count + 1, sizeof (uint64_t));
            self->callbacks [self->callback_count++] = xxl_msg_id (msg);
        }
        else
        if (streq (xxl_msg_type (msg), "REPLY")) {
            size_t count = 0;
            const msgpack_object *content = xxl_msg_array (msg, NULL, "content", 1,
                                                           BARE_BATCH, &count);
            if (xxl_msg_int (msg, NULL, "code", 1, 0, 999, 0) != 200 || !content)
                s_die ("RUN refused", xxl_msg_error (msg));
        }
        if (xxl_msg_error (msg))
            s_die ("message", xxl_msg_error (msg));
        xxl_msg_destroy (&msg);
    }
    zmq_msg_close (&peer);
    zmq_msg_close (&frame);
}

//  One turn's writes, one commit: the done list's updates, then a new
//  row for each trigger read and `extra` more (a loop without a client);
//  after the commit the triggers' replies, the callbacks' answers, the
//  RUNs.  Returns how many rows it inserted; empties both lists.
static size_t
s_bare_turn (s_bare_t *self, size_t extra, const char *handler)
{
    size_t count = self->trigger_count + extra, done = self->done_count;
    if (done == 0 && count == 0)
        return 0;
    self->new_ids = (int64_t *) s_grow (self->new_ids, &self->new_max, count, sizeof (int64_t));
    int64_t now_ms = bench_wall_us () / 1000;
    s_step (self, self->begin);
    for (size_t i = 0; i < done; i++) {
        sqlite3_bind_int64 (self->update, 1, self->done_codes [i]);
        sqlite3_bind_null (self->update, 2);
        sqlite3_bind_int64 (self->update, 3, now_ms);
        sqlite3_bind_int64 (self->update, 4, self->done_ids [i]);
        s_step (self, self->update);
        if (sqlite3_changes (self->db) != 1)
            s_die ("update", "a callback for a row that is not there");
    }
    for (size_t i = 0; i < count; i++) {
        sqlite3_bind_int64 (self->insert, 1, (int64_t) (i % 64) + 1);
        sqlite3_bind_int64 (self->insert, 2, now_ms);
        s_step (self, self->insert);
        self->new_ids [i] = sqlite3_last_insert_rowid (self->db);
    }
    s_step (self, self->commit);
    if (self->shared) {
        __atomic_add_fetch (&self->shared->open, (int64_t) count - (int64_t) done,
                            __ATOMIC_RELAXED);
        for (size_t i = 0; i < done; i++)
            if (self->done_stamps [i]) {
                __atomic_store_n (&self->shared->stamp, self->done_stamps [i], __ATOMIC_RELEASE);
                __atomic_store_n (&self->shared->stamp_id, self->done_ids [i], __ATOMIC_RELEASE);
            }
    }
    for (size_t i = 0; i < self->trigger_count; i++) {
        xxl_enc_reply (self->enc, self->triggers [i], 200, NULL);
        xxl_enc_key (self->enc, "content");
        xxl_enc_map_begin (self->enc);
        xxl_enc_key (self->enc, "logIds");
        xxl_enc_array_begin (self->enc);
        xxl_enc_int (self->enc, self->new_ids [i]);
        xxl_enc_array_end (self->enc);
        xxl_enc_map_end (self->enc);
        s_bare_send (self, self->api, self->client, self->client_size);
    }
    for (size_t i = 0; i < self->callback_count; i++) {
        xxl_enc_reply (self->enc, self->callbacks [i], 200, NULL);
        s_bare_send (self, self->router, self->peer, self->peer_size);
    }
    for (size_t i = 0; i < count; i++) {
        if (i % BARE_BATCH == 0) {
            xxl_enc_request (self->enc, "RUN", self->next_id++);
            xxl_enc_kint (self->enc, "expireTime", now_ms + 10000);
            xxl_enc_key (self->enc, "runs");
            xxl_enc_array_begin (self->enc);
        }
        xxl_enc_map_begin (self->enc);
        xxl_enc_kint (self->enc, "jobId", (int64_t) (i % 64) + 1);
        xxl_enc_kstr (self->enc, "executorHandler", handler);
        xxl_enc_kstr (self->enc, "executorParams", "");
        xxl_enc_kstr (self->enc, "executorBlockStrategy", "SERIAL_EXECUTION");
        xxl_enc_kint (self->enc, "executorTimeout", 0);
        xxl_enc_kint (self->enc, "logId", self->new_ids [i]);
        xxl_enc_kint (self->enc, "logDateTime", now_ms);
        xxl_enc_kstr (self->enc, "glueType", "BEAN");
        xxl_enc_kint (self->enc, "glueUpdatetime", 0);
        xxl_enc_kint (self->enc, "broadcastIndex", 0);
        xxl_enc_kint (self->enc, "broadcastTotal", 1);
        xxl_enc_map_end (self->enc);
        if (i % BARE_BATCH == BARE_BATCH - 1 || i == count - 1)
            s_bare_send (self, self->router, self->peer, self->peer_size);
    }
    self->trigger_count = self->callback_count = self->done_count = 0;
    return count;
}

//  Stops the agent; returns its exit status
static int
s_bare_destroy (s_bare_t **self_p, int64_t *unfinished)
{
    s_bare_t *self = *self_p;
    xxl_enc_request (self->enc, "STOP", self->next_id++);
    s_bare_send (self, self->router, self->peer, self->peer_size);
    int status = 0;
    waitpid (self->agent, &status, 0);
    sqlite3_stmt *count = s_prepare (self, "SELECT COUNT(*) FROM run WHERE handle_code = 0");
    *unfinished = sqlite3_step (count) == SQLITE_ROW? sqlite3_column_int64 (count, 0): -1;
    sqlite3_finalize (count);
    sqlite3_finalize (self->insert);
    sqlite3_finalize (self->update);
    sqlite3_finalize (self->begin);
    sqlite3_finalize (self->commit);
    sqlite3_close (self->db);
    zmq_close (self->router);
    if (self->api)
        zmq_close (self->api);
    zmq_ctx_term (self->context);
    xxl_enc_destroy (&self->enc);
    free (self->done_ids);
    free (self->done_codes);
    free (self->done_stamps);
    free (self->callbacks);
    free (self->triggers);
    free (self->new_ids);
    free (self);
    *self_p = NULL;
    return WIFEXITED (status)? WEXITSTATUS (status): 1;
}

//  XXL_BARE_NO_API=1: the loop without its client (the scheduler makes
//  its rows itself), and the round trip from the insert
static bool
s_no_api (void)
{
    const char *value = getenv ("XXL_BARE_NO_API");
    return value && *value && !streq (value, "0");
}

static int
s_cmd_loop (const char *path, int seconds, size_t window)
{
    s_client_t *client = s_no_api ()? NULL: (s_client_t *) zmalloc (sizeof (s_client_t));
    s_bare_t *self = s_bare_new (path, client);
    int64_t start = bench_wall_us (), stop = start + (int64_t) seconds * 1000000;
    pthread_t thread;
    if (client) {
        client->window = window;
        client->stop_us = stop;
        pthread_create (&thread, NULL, s_client, client);
    }
    size_t open = 0, turns = 0;
    int64_t done = 0, done_in_time = 0, bad = 0;
    double cpu0 = s_cpu_s (RUSAGE_SELF), cpu_in_time = 0;
    bool sending = true;
    while (true) {
        if (sending && bench_wall_us () >= stop) {
            sending = false;
            done_in_time = done;
            cpu_in_time = s_cpu_s (RUSAGE_SELF) - cpu0;
        }
        bool more = client? !__atomic_load_n (&client->finished, __ATOMIC_ACQUIRE): sending;
        if (!more && open == 0 && self->trigger_count == 0)
            break;
        size_t extra = client || !sending? 0: window - open;
        s_bare_read (self, extra? 0: 100);
        for (size_t i = 0; i < self->done_count; i++)
            bad += self->done_codes [i] != 200;
        size_t came = self->done_count;
        //  (without a client, the window counts the rows this turn closes)
        if (!client && sending)
            extra += came;
        open = open + s_bare_turn (self, extra, "noop") - came;
        done += (int64_t) came;
        turns++;
    }
    int64_t ended = bench_wall_us ();
    if (client)
        pthread_join (thread, NULL);
    int64_t unfinished;
    int agent_status = s_bare_destroy (&self, &unfinished);
    double agent_cpu = s_cpu_s (RUSAGE_CHILDREN);
    double elapsed = (double) seconds;
    printf ("{\"api\": %s, \"runs\": %" PRId64 ", \"runs_in_time\": %" PRId64
            ", \"seconds\": %.3f, \"runs_per_s\": %.0f, \"window\": %zu, \"turns\": %zu"
            ", \"failed\": %" PRId64 ", \"unfinished\": %" PRId64 ", \"drain_ms\": %.1f"
            ", \"cpu_us_per_run\": {\"scheduler_and_client\": %.2f, \"agent\": %.2f}}\n",
            client? "true": "false", done, done_in_time, elapsed, done_in_time / elapsed,
            window, turns, bad, unfinished, (ended - stop) / 1000.0,
            done_in_time? cpu_in_time * 1e6 / (double) done_in_time: 0.0,
            done? agent_cpu * 1e6 / (double) done: 0.0);
    free (client);
    return unfinished || bad || agent_status? 1: 0;
}



static int
s_cmd_rt (const char *path, int samples)
{
    int warmup = 50;
    int64_t *latency = (int64_t *) calloc ((size_t) samples, sizeof (int64_t));
    int64_t *reply_us = (int64_t *) calloc ((size_t) samples, sizeof (int64_t));
    s_client_t *client = s_no_api ()? NULL: (s_client_t *) zmalloc (sizeof (s_client_t));
    s_bare_t *self = s_bare_new (path, client);
    if (client) {
        //  The client's thread triggers and measures; this one schedules
        client->rt = true;
        client->samples = samples;
        client->latency = latency;
        client->reply_us = reply_us;
        pthread_t thread;
        pthread_create (&thread, NULL, s_client, client);
        while (!__atomic_load_n (&client->finished, __ATOMIC_ACQUIRE)
        ||     self->trigger_count || self->done_count) {
            s_bare_read (self, 100);
            s_bare_turn (self, 0, "stamp");
        }
        pthread_join (thread, NULL);
    }
    else
        for (int i = 0; i < samples + warmup; i++) {
            int64_t sent = bench_wall_us ();
            s_bare_turn (self, 1, "stamp");
            while (self->done_count == 0) {
                if (bench_wall_us () - sent > 10000000)
                    s_die ("rt", "no result from the agent within 10 s");
                s_bare_read (self, 100);
            }
            int64_t stamp = self->done_stamps [0];
            s_bare_turn (self, 0, "stamp");     //  the update, committed
            if (i >= warmup)
                latency [i - warmup] = stamp - sent;
        }
    int64_t unfinished;
    int agent_status = s_bare_destroy (&self, &unfinished);
    qsort (latency, (size_t) samples, sizeof (int64_t), bench_compare_int64);
    qsort (reply_us, (size_t) samples, sizeof (int64_t), bench_compare_int64);
    printf ("{\"api\": %s, \"samples\": %d, \"p50_us\": %" PRId64 ", \"p90_us\": %" PRId64
            ", \"p99_us\": %" PRId64 ", \"max_us\": %" PRId64 ", \"min_us\": %" PRId64
            ", \"reply_p50_us\": %" PRId64 ", \"reply_p99_us\": %" PRId64
            ", \"unfinished\": %" PRId64 "}\n",
            client? "true": "false", samples, bench_percentile (latency, (size_t) samples, 50),
            bench_percentile (latency, (size_t) samples, 90),
            bench_percentile (latency, (size_t) samples, 99), latency [samples - 1], latency [0],
            bench_percentile (reply_us, (size_t) samples, 50),
            bench_percentile (reply_us, (size_t) samples, 99), unfinished);
    free (latency);
    free (reply_us);
    free (client);
    return unfinished || agent_status? 1: 0;
}

//  --------------------------------------------------------------------
//  GLUE_SHELL's reference: posix_spawn of `bash FILE` on every core

typedef struct {
    const char *file;
    int64_t stop;
    int64_t spawned;
    int failed;
} s_spawner_t;

static void *
s_spawner (void *arg)
{
    s_spawner_t *self = (s_spawner_t *) arg;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init (&actions);
    posix_spawn_file_actions_addopen (&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen (&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2 (&actions, 1, 2);
    char *argv [] = { (char *) "bash", (char *) self->file, NULL };
    while (bench_wall_us () < self->stop) {
        pid_t pid;
        int status;
        if (posix_spawnp (&pid, "bash", &actions, NULL, argv, environ)
        ||  waitpid (pid, &status, 0) != pid || !WIFEXITED (status) || WEXITSTATUS (status)) {
            self->failed++;
            break;
        }
        self->spawned++;
    }
    posix_spawn_file_actions_destroy (&actions);
    return NULL;
}

static int
s_cmd_spawn (int seconds, int workers)
{
    const char *tmp = getenv ("TMPDIR");
    char file [512];
    snprintf (file, sizeof file, "%s/xxl-bare-XXXXXX", tmp && *tmp? tmp: "/tmp");
    int fd = mkstemp (file);
    if (fd < 0 || write (fd, "true\n", 5) != 5)
        s_die (file, strerror (errno));
    close (fd);
    s_spawner_t *spawners = (s_spawner_t *) calloc ((size_t) workers, sizeof (s_spawner_t));
    pthread_t *threads = (pthread_t *) calloc ((size_t) workers, sizeof (pthread_t));
    double cpu0 = s_cpu_s (RUSAGE_CHILDREN);
    int64_t start = bench_wall_us ();
    for (int i = 0; i < workers; i++) {
        spawners [i] = (s_spawner_t) { file, start + (int64_t) seconds * 1000000, 0, 0 };
        pthread_create (&threads [i], NULL, s_spawner, &spawners [i]);
    }
    int64_t spawned = 0;
    int failed = 0;
    for (int i = 0; i < workers; i++) {
        pthread_join (threads [i], NULL);
        spawned += spawners [i].spawned;
        failed += spawners [i].failed;
    }
    double elapsed = (double) (bench_wall_us () - start) / 1e6;
    double children = s_cpu_s (RUSAGE_CHILDREN) - cpu0;
    unlink (file);
    printf ("{\"workers\": %d, \"spawned\": %" PRId64 ", \"failed\": %d, \"seconds\": %.3f"
            ", \"runs_per_s\": %.0f, \"child_cpu_us\": %.0f}\n",
            workers, spawned, failed, elapsed, spawned / elapsed,
            spawned? children * 1e6 / (double) spawned: 0.0);
    free (spawners);
    free (threads);
    return failed? 1: 0;
}

static void
s_usage (void)
{
    fprintf (stderr,
        "usage: xxl_bare loop DB SECONDS WINDOW\n"
        "       xxl_bare rt DB SAMPLES\n"
        "       xxl_bare spawn SECONDS [WORKERS]\n");
    exit (2);
}

int
main (int argc, char *argv [])
{
    if (argc < 3)
        s_usage ();
    //  Counts must be positive (for loop and rt, after the DB)
    for (int i = streq (argv [1], "spawn")? 2: 3; i < argc; i++)
        if (atol (argv [i]) <= 0)
            s_usage ();
    if (streq (argv [1], "loop") && argc == 5)
        return s_cmd_loop (argv [2], atoi (argv [3]), (size_t) atol (argv [4]));
    if (streq (argv [1], "rt") && argc == 4)
        return s_cmd_rt (argv [2], atoi (argv [3]));
    if (streq (argv [1], "spawn") && (argc == 3 || argc == 4)) {
        long cores = sysconf (_SC_NPROCESSORS_ONLN);
        return s_cmd_spawn (atoi (argv [2]), argc == 4? atoi (argv [3]): cores > 0? (int) cores: 1);
    }
    s_usage ();
    return 2;
}
