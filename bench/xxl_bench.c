/*  xxl_bench.c -- the load generator and meter behind `make bench`.

    bench/run.sh starts the real daemons and calls this program once per
    figure; each command talks to the scheduler's api socket (one DEALER,
    requests pipelined with a window of outstanding ones), reads the
    scheduler's SQLite store read-only to see which runs ended, and prints
    one JSON object on stdout (progress goes to stderr).  Every command that
    triggers runs waits until each of them has a final row in the store
    (handleCode != 0, or a failed trigger) and exits 1 when any is missing:
    a lost run fails the bench.  Failed runs (a final row whose triggerCode
    or handleCode is not 200) are counted in the output (`ok` < `final`),
    not treated as lost.

    Commands (API is the api endpoint, DB the scheduler's database file):

      group API APP                             GROUP_ADD (an existing one is fine)
      e2e API DB APP KIND JOBS SECONDS INFLIGHT [SCHED_PID AGENT_PID]
                                                triggers for SECONDS over JOBS jobs,
                                                KIND noop (BEAN noopJobHandler),
                                                stamp (stampJobHandler: handler start
                                                times in the store, for analysis) or
                                                glue (GLUE_SHELL `true`); at most
                                                INFLIGHT runs unfinished at a time;
                                                with the pids, CPU time per run
      latency API DB APP SAMPLES                one trigger at a time of
                                                stampJobHandler: stamp - send time
      cron API DB APP JOBS SECONDS              JOBS jobs on `* * * * * ?` for
                                                SECONDS; triggerTime - scheduleTime
      concurrent API DB APP RUNS MS             RUNS jobs of sleepJobHandler MS,
                                                triggered at once; how many overlap
      sharding API DB APP TRIGGERS              one SHARDING_BROADCAST job
                                                triggered TRIGGERS times: a
                                                row per agent each
      herd DB FIRST_JOB LAST_JOB AT_MS          the jobs (stampJobHandler, put in
                                                the store due at AT_MS): one run
                                                each? when did the last start?
      workflows API FILE COUNT INFLIGHT SECONDS COUNT WORKFLOW_TRIGGERs of the ids
                                                in FILE, spread over SECONDS,
                                                INFLIGHT unanswered at most,
                                                from one connection
      idle PID SECONDS                          RSS and CPU of a process
*/

#include "xxl/client.h"
#include "xxl/msg.h"
#include "xxl_cert.h"

#include <czmq.h>
#include "bench_db.h"
#include "bench_util.h"
#include <inttypes.h>
#include <math.h>

#define XXL_BENCH_WINDOW    2000        //  api requests outstanding at most
#define XXL_BENCH_SETTLE_S  60          //  seconds without progress = lost runs
#define XXL_BENCH_REPLY_MS  60000       //  an overloaded scheduler answers late

//  --------------------------------------------------------------------
//  Clocks


static int64_t
s_wall_ms (void)
{
    return bench_wall_us () / 1000;
}

static void
s_sleep_us (int64_t us)
{
    struct timespec ts = { (time_t) (us / 1000000), (long) (us % 1000000) * 1000 };
    nanosleep (&ts, NULL);
}

//  --------------------------------------------------------------------
//  A pipelined api connection: requests go out with consecutive ids, so a
//  reply's id minus the first id is the index of its request

typedef struct {
    zsock_t *dealer;
    void *handle;
    xxl_enc_t *enc;
    uint64_t base;                      //  id of request index 0
    uint64_t next;                      //  index of the next request
    size_t outstanding;
} s_api_t;

static s_api_t *
s_api_new (const char *endpoint)
{
    s_api_t *self = (s_api_t *) zmalloc (sizeof (s_api_t));
    self->dealer = zsock_new (ZMQ_DEALER);
    assert (self->dealer);
    zsock_set_linger (self->dealer, 0);
    zsock_set_sndhwm (self->dealer, 0);
    zsock_set_rcvhwm (self->dealer, 0);
    //  CURVE when XXL_CERT (this client's NAME.cert_secret) and
    //  XXL_SCHEDULER_KEY (the scheduler's NAME.cert) are set, as xxl-ctl
    const char *cert_file = getenv ("XXL_CERT"), *key_file = getenv ("XXL_SCHEDULER_KEY");
    if (cert_file && *cert_file && key_file && *key_file) {
        char err [512], server [41];
        zcert_t *cert = xxl_cert_load_secret (cert_file, err, sizeof err);
        if (!cert || xxl_cert_load_public (key_file, server, err, sizeof err)) {
            fprintf (stderr, "xxl_bench: %s\n", err);
            exit (2);
        }
        zcert_apply (cert, self->dealer);
        zsock_set_curve_serverkey (self->dealer, server);
        zcert_destroy (&cert);
    }
    //  Several endpoints (comma-separated: schedulers sharing a store):
    //  the DEALER deals the requests out among them in turn
    char *list = strdup (endpoint), *rest = list, *one;
    while ((one = strsep (&rest, ",")))
        if (*one && zsock_connect (self->dealer, "%s", one)) {
            fprintf (stderr, "xxl_bench: cannot connect to %s\n", one);
            exit (2);
        }
    free (list);
    self->handle = zsock_resolve (self->dealer);
    self->enc = xxl_enc_new ();
    self->base = (uint64_t) s_wall_ms () * 1000;
    return self;
}

static void
s_api_destroy (s_api_t **self_p)
{
    if (*self_p) {
        zsock_destroy (&(*self_p)->dealer);
        xxl_enc_destroy (&(*self_p)->enc);
        free (*self_p);
        *self_p = NULL;
    }
}

//  Starts request number self->next; returns the encoder
static xxl_enc_t *
s_api_begin (s_api_t *self, const char *type)
{
    xxl_enc_request (self->enc, type, self->base + self->next);
    return self->enc;
}

//  Sends the request started by s_api_begin; returns its index
static uint64_t
s_api_send (s_api_t *self)
{
    size_t size;
    const void *data = xxl_enc_finish (self->enc, &size);
    if (zmq_send (self->handle, data, size, 0) < 0) {
        fprintf (stderr, "xxl_bench: send failed: %s\n", zmq_strerror (zmq_errno ()));
        exit (2);
    }
    self->outstanding++;
    return self->next++;
}

//  Waits up to timeout_ms for a reply; returns it (caller destroys) with
//  the index of its request, or NULL on timeout
static xxl_msg_t *
s_api_recv (s_api_t *self, int timeout_ms, uint64_t *index)
{
    zmq_pollitem_t item = { self->handle, 0, ZMQ_POLLIN, 0 };
    if (timeout_ms != 0 && zmq_poll (&item, 1, timeout_ms) <= 0)
        return NULL;
    zmq_msg_t frame;
    zmq_msg_init (&frame);
    if (zmq_msg_recv (&frame, self->handle, ZMQ_DONTWAIT) < 0) {
        zmq_msg_close (&frame);
        return NULL;
    }
    char err [256];
    uint64_t id = 0;
    xxl_msg_t *reply = xxl_msg_decode (zmq_msg_data (&frame), zmq_msg_size (&frame), &id,
                                       err, sizeof err);
    zmq_msg_close (&frame);
    if (!reply) {
        fprintf (stderr, "xxl_bench: malformed reply: %s\n", err);
        exit (2);
    }
    self->outstanding--;
    *index = xxl_msg_id (reply) - self->base;
    return reply;
}

//  Sends the request started by s_api_begin and waits for its reply
static xxl_msg_t *
s_api_call (s_api_t *self)
{
    uint64_t want = s_api_send (self), index;
    while (true) {
        xxl_msg_t *reply = s_api_recv (self, XXL_BENCH_REPLY_MS, &index);
        if (!reply) {
            fprintf (stderr, "xxl_bench: no reply from the scheduler within %d s\n",
                     XXL_BENCH_REPLY_MS / 1000);
            exit (2);
        }
        if (index == want)
            return reply;
        xxl_msg_destroy (&reply);
    }
}

//  The int field `key` of a reply's content map (-1 when absent)
static int64_t
s_content_int (xxl_msg_t *reply, const char *key)
{
    const msgpack_object *content = xxl_reply_content (reply);
    const msgpack_object *value = content? xxl_msg_get (content, key): NULL;
    if (value && value->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
        return (int64_t) value->via.u64;
    return -1;
}

//  The first logId of a JOB_TRIGGER reply (-1 when none)
static int64_t
s_first_log_id (xxl_msg_t *reply)
{
    const msgpack_object *content = xxl_reply_content (reply);
    const msgpack_object *ids = content? xxl_msg_get (content, "logIds"): NULL;
    if (ids && ids->type == MSGPACK_OBJECT_ARRAY && ids->via.array.size > 0
    &&  ids->via.array.ptr [0].type == MSGPACK_OBJECT_POSITIVE_INTEGER)
        return (int64_t) ids->via.array.ptr [0].via.u64;
    return -1;
}

static void
s_fail_reply (const char *what, xxl_msg_t *reply)
{
    fprintf (stderr, "xxl_bench: %s: %d %s\n", what, xxl_reply_code (reply),
             xxl_reply_msg (reply));
    exit (2);
}

//  --------------------------------------------------------------------
//  Jobs

typedef struct {
    const char *handler;                //  BEAN handler, or NULL for GLUE_SHELL
    const char *glue_source;
    const char *param;
    const char *cron;                   //  NULL: scheduleType NONE
    const char *route;                  //  NULL: FIRST
} s_job_spec_t;

//  Adds count jobs to app, pipelined; returns their ids (caller frees)
static int64_t *
s_jobs_add (s_api_t *api, const char *app, size_t count, const s_job_spec_t *spec)
{
    int64_t *ids = (int64_t *) calloc (count, sizeof (int64_t));
    uint64_t first = api->next;
    size_t sent = 0, got = 0;
    while (got < count) {
        while (sent < count && api->outstanding < XXL_BENCH_WINDOW) {
            xxl_enc_t *enc = s_api_begin (api, "JOB_ADD");
            xxl_enc_kstr (enc, "jobGroup", app);
            xxl_enc_kstr (enc, "jobDesc", "bench");
            if (spec->handler)
                xxl_enc_kstr (enc, "executorHandler", spec->handler);
            else {
                xxl_enc_kstr (enc, "glueType", "GLUE_SHELL");
                xxl_enc_kstr (enc, "glueSource", spec->glue_source);
            }
            if (spec->param)
                xxl_enc_kstr (enc, "executorParam", spec->param);
            if (spec->route)
                xxl_enc_kstr (enc, "executorRouteStrategy", spec->route);
            if (spec->cron) {
                xxl_enc_kstr (enc, "scheduleType", "CRON");
                xxl_enc_kstr (enc, "scheduleConf", spec->cron);
                xxl_enc_kbool (enc, "start", 1);
            }
            s_api_send (api);
            sent++;
        }
        uint64_t index;
        xxl_msg_t *reply = s_api_recv (api, XXL_BENCH_REPLY_MS, &index);
        if (!reply) {
            fprintf (stderr, "xxl_bench: JOB_ADD: no reply within %d s\n", XXL_BENCH_REPLY_MS / 1000);
            exit (2);
        }
        if (xxl_reply_code (reply) != XXL_OK)
            s_fail_reply ("JOB_ADD", reply);
        if (index >= first && index - first < count)
            ids [index - first] = s_content_int (reply, "id");
        xxl_msg_destroy (&reply);
        got++;
    }
    return ids;
}

//  Sends one request type with jobId for each job, pipelined
static void
s_jobs_each (s_api_t *api, const char *type, const int64_t *ids, size_t count)
{
    size_t sent = 0, got = 0;
    while (got < count) {
        while (sent < count && api->outstanding < XXL_BENCH_WINDOW) {
            xxl_enc_t *enc = s_api_begin (api, type);
            xxl_enc_kint (enc, "jobId", ids [sent++]);
            s_api_send (api);
        }
        uint64_t index;
        xxl_msg_t *reply = s_api_recv (api, XXL_BENCH_REPLY_MS, &index);
        if (!reply) {
            fprintf (stderr, "xxl_bench: %s: no reply within %d s\n", type, XXL_BENCH_REPLY_MS / 1000);
            exit (2);
        }
        if (xxl_reply_code (reply) != XXL_OK)
            s_fail_reply (type, reply);
        xxl_msg_destroy (&reply);
        got++;
    }
}

//  --------------------------------------------------------------------
//  The store, read-only (bench_db.h: an SQLite file or a PostgreSQL URL)

//  Runs not finished yet, store-wide (both counts use partial indexes)
static int64_t
s_db_unfinished (bench_db_t *db)
{
    return bench_db_scalar (db,
        "SELECT (SELECT COUNT(*) FROM xxl_job_log WHERE trigger_code = 0)"
        " + (SELECT COUNT(*) FROM xxl_job_log WHERE trigger_code = 200 AND handle_code = 0)", 0);
}

typedef struct {
    int64_t rows;                       //  rows in the range
    int64_t final;                      //  ... with a result
    int64_t ok;                         //  ... handleCode 200
    int64_t last_handle;                //  latest handle_time (ms)
} s_range_t;

//  Counts the rows of ids [first, last]
static s_range_t
s_db_range (bench_db_t *db, int64_t first, int64_t last)
{
    s_range_t range = { 0, 0, 0, 0 };
    bench_rows_t *rows = bench_db_query (db,
        "SELECT COUNT(*),"
        " SUM(CASE WHEN handle_code <> 0 OR trigger_code NOT IN (0, 200) THEN 1 ELSE 0 END),"
        " SUM(CASE WHEN handle_code = 200 AND trigger_code = 200 THEN 1 ELSE 0 END),"
        " MAX(handle_time) FROM xxl_job_log WHERE id BETWEEN ? AND ?", 2, first, last);
    if (bench_rows_next (rows)) {
        range.rows = bench_rows_int (rows, 0);
        range.final = bench_rows_int (rows, 1);
        range.ok = bench_rows_int (rows, 2);
        range.last_handle = bench_rows_int (rows, 3);
    }
    bench_rows_end (&rows);
    return range;
}

//  Waits until every row of [first, last] is final, or nothing progressed
//  for XXL_BENCH_SETTLE_S; returns the last count
static s_range_t
s_db_settle (bench_db_t *db, int64_t first, int64_t last, int64_t expected)
{
    s_range_t range = s_db_range (db, first, last);
    int64_t progress_at = s_wall_ms (), seen = range.final;
    while (range.final < expected && s_wall_ms () - progress_at < XXL_BENCH_SETTLE_S * 1000) {
        s_sleep_us (100000);
        range = s_db_range (db, first, last);
        if (range.final != seen) {
            seen = range.final;
            progress_at = s_wall_ms ();
        }
    }
    return range;
}

//  Writes {"triggerCode/handleCode": rows, ...} of the rows matching
//  `where` into text, and the commonest failure message into reason
static void
s_db_outcomes (bench_db_t *db, const char *where, char *text, size_t size,
               char *reason, size_t reason_size)
{
    char sql [512];
    snprintf (sql, sizeof sql, "SELECT trigger_code, handle_code, COUNT(*) FROM xxl_job_log"
              " WHERE %s GROUP BY 1, 2", where);
    bench_rows_t *rows = bench_db_query (db, sql, 0);
    snprintf (text, size, "{");
    while (bench_rows_next (rows)) {
        size_t used = strlen (text);
        snprintf (text + used, size - used, "%s\"%d/%d\": %lld", used > 1? ", ": "",
                  (int) bench_rows_int (rows, 0), (int) bench_rows_int (rows, 1),
                  (long long) bench_rows_int (rows, 2));
    }
    bench_rows_end (&rows);
    strncat (text, "}", size - strlen (text) - 1);
    //  The last line of the commonest failure's message (quotes dropped)
    snprintf (sql, sizeof sql, "SELECT CASE WHEN handle_code NOT IN (0, 200) THEN handle_msg"
              " ELSE trigger_msg END AS m, COUNT(*) FROM xxl_job_log WHERE %s AND"
              " (trigger_code <> 200 OR handle_code <> 200) GROUP BY 1 ORDER BY 2 DESC LIMIT 1",
              where);
    rows = bench_db_query (db, sql, 0);
    *reason = 0;
    if (bench_rows_next (rows) && bench_rows_text (rows, 0)) {
        const char *message = bench_rows_text (rows, 0);
        const char *line = message + strlen (message);
        while (line > message && (line [-1] == '\n'))
            line--;
        const char *end = line;
        while (line > message && line [-1] != '\n')
            line--;
        size_t j = 0;
        for (; line < end && j + 1 < reason_size; line++)
            if (*line != '"' && *line != '\\' && (unsigned char) *line >= 0x20)
                reason [j++] = *line;
        reason [j] = 0;
    }
    bench_rows_end (&rows);
}



//  --------------------------------------------------------------------
//  Commands

static int64_t s_proc_ticks (int pid, int children);

//  CPU seconds used by process pid since ticks0 (-1 when unknown)
static double
s_cpu_since (int pid, int children, int64_t ticks0)
{
    int64_t ticks = pid > 0? s_proc_ticks (pid, children): -1;
    if (ticks < 0 || ticks0 < 0)
        return -1;
    return (double) (ticks - ticks0) / (double) sysconf (_SC_CLK_TCK);
}

static int
s_cmd_group (const char *endpoint, const char *app)
{
    s_api_t *api = s_api_new (endpoint);
    xxl_enc_t *enc = s_api_begin (api, "GROUP_ADD");
    xxl_enc_kstr (enc, "appname", app);
    xxl_enc_kstr (enc, "title", "bench");
    xxl_msg_t *reply = s_api_call (api);
    int code = xxl_reply_code (reply);
    if (code != XXL_OK && code != XXL_CONFLICT)
        s_fail_reply ("GROUP_ADD", reply);
    printf ("{\"group\": \"%s\"}\n", app);
    xxl_msg_destroy (&reply);
    s_api_destroy (&api);
    return 0;
}

static int
s_cmd_e2e (const char *endpoint, const char *dbpath, const char *app, const char *kind,
           size_t jobs, int seconds, int64_t inflight_max, int scheduler_pid, int agent_pid)
{
    s_api_t *api = s_api_new (endpoint);
    bench_db_t *db = bench_db_open (dbpath);
    int glue = streq (kind, "glue");
    s_job_spec_t spec = { glue? NULL: streq (kind, "stamp")? "stampJobHandler": "noopJobHandler",
                          glue? "true": NULL, NULL, NULL, NULL };
    int64_t *ids = s_jobs_add (api, app, jobs, &spec);

    int64_t scheduler_ticks = scheduler_pid > 0? s_proc_ticks (scheduler_pid, 0): -1;
    int64_t agent_ticks = agent_pid > 0? s_proc_ticks (agent_pid, 0): -1;
    int64_t children_ticks = agent_pid > 0? s_proc_ticks (agent_pid, 1): -1;
    int64_t self_ticks = s_proc_ticks (getpid (), 0);
    int64_t start = s_wall_ms (), stop = start + (int64_t) seconds * 1000;
    int64_t first_log = INT64_MAX, last_log = 0, triggered = 0, failed = 0;
    int64_t next_check = 0, unfinished = 0, max_unfinished = 0;
    size_t next_job = 0;
    while (true) {
        int64_t now = s_wall_ms ();
        bool sending = now < stop;
        if (sending && now >= next_check) {
            unfinished = s_db_unfinished (db);
            if (unfinished > max_unfinished)
                max_unfinished = unfinished;
            //  Every 20 ms, or ten times as long as the count took (up
            //  to 200 ms), so that counting takes the store at most about
            //  a tenth of its time (PostgreSQL's count visits the index
            //  entries of rows updated since its last vacuum:
            //  milliseconds under load)
            int64_t took = s_wall_ms () - now;
            int64_t wait = took * 10 < 20? 20: took * 10 > 200? 200: took * 10;
            next_check = now + wait;
        }
        //  Runs not yet stored count as unfinished too
        while (sending && api->outstanding < XXL_BENCH_WINDOW
        &&     unfinished + (int64_t) api->outstanding < inflight_max) {
            xxl_enc_t *enc = s_api_begin (api, "JOB_TRIGGER");
            xxl_enc_kint (enc, "jobId", ids [next_job]);
            xxl_enc_kstr (enc, "triggerType", "API");
            s_api_send (api);
            next_job = (next_job + 1) % jobs;
        }
        if (!sending && api->outstanding == 0)
            break;
        uint64_t index;
        xxl_msg_t *reply = s_api_recv (api, sending? 5: XXL_BENCH_REPLY_MS, &index);
        if (!reply) {
            if (!sending) {
                fprintf (stderr, "xxl_bench: %zu trigger replies missing\n", api->outstanding);
                exit (2);
            }
            continue;
        }
        //  Drain what is there without waiting
        do {
            int64_t log_id = xxl_reply_code (reply) == XXL_OK? s_first_log_id (reply): -1;
            if (log_id > 0) {
                triggered++;
                unfinished++;
                if (log_id < first_log)
                    first_log = log_id;
                if (log_id > last_log)
                    last_log = log_id;
            }
            else
                failed++;
            xxl_msg_destroy (&reply);
        } while ((reply = s_api_recv (api, 0, &index)));
    }
    int64_t sent_end = s_wall_ms ();
    fprintf (stderr, "xxl_bench: e2e %s: %" PRId64 " triggers in %.1f s (%.0f/s accepted),"
             " waiting for their results\n", kind, triggered, (sent_end - start) / 1000.0,
             triggered * 1000.0 / (double) (sent_end - start));
    s_range_t range = s_db_settle (db, first_log, last_log, triggered);
    double elapsed = (double) (range.last_handle - start) / 1000.0;
    double rate = elapsed > 0? (double) range.ok / elapsed: 0;
    int64_t lost = triggered - range.final;
    //  CPU per run of each process: what the figure costs, whatever else
    //  the machine was doing (the settle wait adds a little idle time)
    double runs = range.ok > 0? (double) range.ok: 1;
    double scheduler_cpu = s_cpu_since (scheduler_pid, 0, scheduler_ticks);
    double agent_cpu = s_cpu_since (agent_pid, 0, agent_ticks);
    double children_cpu = s_cpu_since (agent_pid, 1, children_ticks);
    double self_cpu = s_cpu_since (getpid (), 0, self_ticks);
    char where [128], outcomes [512], reason [256];
    snprintf (where, sizeof where, "id BETWEEN %" PRId64 " AND %" PRId64, first_log, last_log);
    s_db_outcomes (db, where, outcomes, sizeof outcomes, reason, sizeof reason);
    printf ("{\"kind\": \"%s\", \"jobs\": %zu, \"triggered\": %" PRId64 ", \"refused\": %" PRId64
            ", \"rows\": %" PRId64 ", \"final\": %" PRId64 ", \"ok\": %" PRId64
            ", \"lost\": %" PRId64 ", \"seconds\": %.3f, \"runs_per_s\": %.0f"
            ", \"max_unfinished\": %" PRId64 ", \"cpu_us_per_run\": {\"scheduler\": %.1f"
            ", \"agent\": %.1f, \"agent_children\": %.1f, \"client\": %.1f}"
            ", \"outcomes\": %s, \"top_failure\": \"%s\"}\n",
            kind, jobs, triggered, failed, range.rows, range.final, range.ok, lost, elapsed,
            rate, max_unfinished, scheduler_cpu * 1e6 / runs, agent_cpu * 1e6 / runs,
            children_cpu * 1e6 / runs, self_cpu * 1e6 / runs, outcomes, reason);
    free (ids);
    bench_db_close (&db);
    s_api_destroy (&api);
    //  Failed runs are reported; only a run without a final row fails
    return lost || range.rows != triggered? 1: 0;
}

static int
s_cmd_latency (const char *endpoint, const char *dbpath, const char *app, int samples)
{
    s_api_t *api = s_api_new (endpoint);
    bench_db_t *db = bench_db_open (dbpath);
    s_job_spec_t spec = { "stampJobHandler", NULL, NULL, NULL, NULL };
    int64_t *job = s_jobs_add (api, app, 1, &spec);
    int warmup = 50, lost = 0;
    int64_t *latency = (int64_t *) calloc ((size_t) samples, sizeof (int64_t));
    int64_t *reply_us = (int64_t *) calloc ((size_t) samples, sizeof (int64_t));
    int taken = 0;
    for (int i = 0; i < samples + warmup; i++) {
        xxl_enc_t *enc = s_api_begin (api, "JOB_TRIGGER");
        xxl_enc_kint (enc, "jobId", job [0]);
        int64_t sent = bench_wall_us ();
        xxl_msg_t *reply = s_api_call (api);
        int64_t replied = bench_wall_us ();
        int64_t log_id = s_first_log_id (reply);
        if (xxl_reply_code (reply) != XXL_OK || log_id < 0)
            s_fail_reply ("JOB_TRIGGER", reply);
        xxl_msg_destroy (&reply);
        //  Wait for the run's result (outside the measured interval)
        int64_t stamp = -1, deadline = s_wall_ms () + 10000;
        while (s_wall_ms () < deadline) {
            bench_rows_t *poll = bench_db_query (db,
                "SELECT handle_code, trigger_code, handle_msg FROM xxl_job_log WHERE id = ?",
                1, log_id);
            bool row = bench_rows_next (poll);
            int handle_code = row? (int) bench_rows_int (poll, 0): 0;
            int trigger_code = row? (int) bench_rows_int (poll, 1): 0;
            if (handle_code != 0) {
                const char *text = bench_rows_text (poll, 2);
                stamp = text? strtoll (text, NULL, 10): 0;
            }
            bench_rows_end (&poll);
            if (handle_code != 0 || trigger_code == 500)
                break;
            s_sleep_us (500);
        }
        if (stamp <= 0) {
            lost++;
            continue;
        }
        if (i >= warmup) {
            latency [taken] = stamp - sent;
            reply_us [taken] = replied - sent;
            taken++;
        }
    }
    qsort (latency, (size_t) taken, sizeof (int64_t), bench_compare_int64);
    qsort (reply_us, (size_t) taken, sizeof (int64_t), bench_compare_int64);
    printf ("{\"samples\": %d, \"lost\": %d, \"p50_us\": %" PRId64 ", \"p90_us\": %" PRId64
            ", \"p99_us\": %" PRId64 ", \"max_us\": %" PRId64 ", \"min_us\": %" PRId64
            ", \"reply_p50_us\": %" PRId64 ", \"reply_p99_us\": %" PRId64 "}\n",
            taken, lost, bench_percentile (latency, (size_t) taken, 50),
            bench_percentile (latency, (size_t) taken, 90),
            bench_percentile (latency, (size_t) taken, 99),
            taken? latency [taken - 1]: -1, taken? latency [0]: -1,
            bench_percentile (reply_us, (size_t) taken, 50),
            bench_percentile (reply_us, (size_t) taken, 99));
    free (latency);
    free (reply_us);
    free (job);
    bench_db_close (&db);
    s_api_destroy (&api);
    return lost? 1: 0;
}

static int
s_cmd_cron (const char *endpoint, const char *dbpath, const char *app, size_t jobs, int seconds)
{
    s_api_t *api = s_api_new (endpoint);
    bench_db_t *db = bench_db_open (dbpath);
    int64_t added = s_wall_ms ();
    s_job_spec_t spec = { "noopJobHandler", NULL, NULL, "* * * * * ?", NULL };
    int64_t *ids = s_jobs_add (api, app, jobs, &spec);
    int64_t armed = s_wall_ms ();
    fprintf (stderr, "xxl_bench: cron: %zu jobs added and started in %.1f s; running %d s\n",
             jobs, (armed - added) / 1000.0, seconds);
    //  Measure the fires planned from 3 s after the last add: the first
    //  second of each job waits for a planner scan
    int64_t from = armed + 3000;
    s_sleep_us ((int64_t) seconds * 1000000);
    int64_t until = s_wall_ms () - 1000;
    s_jobs_each (api, "JOB_STOP", ids, jobs);
    int64_t first_job = ids [0], last_job = ids [jobs - 1];
    //  (the jobs' rows of this phase: a store may hold history of theirs
    //  from before, XXL_BENCH_CRON_HISTORY)
    char mine [160];
    snprintf (mine, sizeof mine, "job_id BETWEEN %" PRId64 " AND %" PRId64
              " AND trigger_time >= %" PRId64, first_job, last_job, added);
    //  Stopping deleted the unsent planned rows; every other row must end
    char sql [512];
    snprintf (sql, sizeof sql, "SELECT COUNT(*) FROM xxl_job_log WHERE %s", mine);
    int64_t rows = bench_db_scalar (db, sql, 0);
    snprintf (sql, sizeof sql, "SELECT COUNT(*) FROM xxl_job_log WHERE %s"
              " AND (handle_code <> 0 OR trigger_code NOT IN (0, 200))", mine);
    int64_t final = bench_db_scalar (db, sql, 0), seen = final, progress_at = s_wall_ms ();
    while (final < rows && s_wall_ms () - progress_at < XXL_BENCH_SETTLE_S * 1000) {
        s_sleep_us (200000);
        final = bench_db_scalar (db, sql, 0);
        if (final != seen) {
            seen = final;
            progress_at = s_wall_ms ();
        }
    }
    snprintf (sql, sizeof sql, "SELECT COUNT(*) FROM xxl_job_log WHERE %s"
              " AND handle_code = 200 AND trigger_code = 200", mine);
    int64_t ok = bench_db_scalar (db, sql, 0);
    //  Lateness of the fires planned in [from, until]
    snprintf (sql, sizeof sql,
        "SELECT trigger_time - schedule_time FROM xxl_job_log WHERE job_id BETWEEN %" PRId64
        " AND %" PRId64 " AND schedule_time BETWEEN %" PRId64 " AND %" PRId64
        " AND executor_address IS NOT NULL", first_job, last_job, from, until);
    bench_rows_t *lateness = bench_db_query (db, sql, 0);
    size_t count = 0, size = 1024;
    int64_t *late = (int64_t *) malloc (size * sizeof (int64_t));
    while (bench_rows_next (lateness)) {
        if (count == size)
            late = (int64_t *) realloc (late, (size *= 2) * sizeof (int64_t));
        late [count++] = bench_rows_int (lateness, 0);
    }
    bench_rows_end (&lateness);
    qsort (late, count, sizeof (int64_t), bench_compare_int64);
    char outcomes [512], reason [256];
    s_db_outcomes (db, mine, outcomes, sizeof outcomes, reason, sizeof reason);
    //  Expected fires: one per job per second of the window
    int64_t expected = (int64_t) jobs * ((until / 1000) - ((from + 999) / 1000) + 1);
    printf ("{\"jobs\": %zu, \"seconds\": %d, \"rows\": %" PRId64 ", \"final\": %" PRId64
            ", \"ok\": %" PRId64 ", \"lost\": %" PRId64 ", \"samples\": %zu"
            ", \"expected_samples\": %" PRId64 ", \"p50_ms\": %" PRId64 ", \"p99_ms\": %" PRId64
            ", \"max_ms\": %" PRId64 ", \"min_ms\": %" PRId64 ", \"outcomes\": %s"
            ", \"top_failure\": \"%s\"}\n",
            jobs, seconds, rows, final, ok, rows - final, count, expected,
            bench_percentile (late, count, 50), bench_percentile (late, count, 99),
            count? late [count - 1]: -1, count? late [0]: -1, outcomes, reason);
    free (late);
    free (ids);
    bench_db_close (&db);
    s_api_destroy (&api);
    return rows != final? 1: 0;
}

typedef struct {
    int64_t at;
    int delta;
} s_event_t;

static int
s_compare_event (const void *a, const void *b)
{
    const s_event_t *x = (const s_event_t *) a, *y = (const s_event_t *) b;
    if (x->at != y->at)
        return x->at < y->at? -1: 1;
    return x->delta - y->delta;         //  an end before a start at the same µs
}

static int
s_cmd_concurrent (const char *endpoint, const char *dbpath, const char *app, size_t runs,
                  int ms)
{
    s_api_t *api = s_api_new (endpoint);
    bench_db_t *db = bench_db_open (dbpath);
    char param [32];
    snprintf (param, sizeof param, "%d", ms);
    s_job_spec_t spec = { "sleepJobHandler", NULL, param, NULL, NULL };
    int64_t *ids = s_jobs_add (api, app, runs, &spec);
    int64_t start = s_wall_ms ();
    int64_t first_log = INT64_MAX, last_log = 0, triggered = 0;
    size_t sent = 0;
    while (sent < runs || api->outstanding) {
        while (sent < runs && api->outstanding < XXL_BENCH_WINDOW) {
            xxl_enc_t *enc = s_api_begin (api, "JOB_TRIGGER");
            xxl_enc_kint (enc, "jobId", ids [sent++]);
            s_api_send (api);
        }
        uint64_t index;
        xxl_msg_t *reply = s_api_recv (api, XXL_BENCH_REPLY_MS, &index);
        if (!reply) {
            fprintf (stderr, "xxl_bench: concurrent: trigger replies missing\n");
            exit (2);
        }
        int64_t log_id = s_first_log_id (reply);
        if (xxl_reply_code (reply) != XXL_OK || log_id < 0)
            s_fail_reply ("JOB_TRIGGER", reply);
        triggered++;
        first_log = log_id < first_log? log_id: first_log;
        last_log = log_id > last_log? log_id: last_log;
        xxl_msg_destroy (&reply);
    }
    int64_t sent_at = s_wall_ms ();
    s_range_t range = s_db_settle (db, first_log, last_log, triggered);
    //  Each run's interval from its handleMsg "START END"
    bench_rows_t *rows = bench_db_query (db,
        "SELECT handle_msg FROM xxl_job_log WHERE id BETWEEN ? AND ? AND handle_code = 200"
        " AND trigger_code = 200", 2, first_log, last_log);
    s_event_t *events = (s_event_t *) calloc (2 * runs, sizeof (s_event_t));
    size_t count = 0;
    int64_t latest_start = 0, earliest_end = INT64_MAX;
    while (count < 2 * runs && bench_rows_next (rows)) {
        const char *text = bench_rows_text (rows, 0);
        long long begin, end;
        if (!text || sscanf (text, "%lld %lld", &begin, &end) != 2)
            continue;
        events [count++] = (s_event_t) { begin, 1 };
        events [count++] = (s_event_t) { end, -1 };
        latest_start = begin > latest_start? begin: latest_start;
        earliest_end = end < earliest_end? end: earliest_end;
    }
    bench_rows_end (&rows);
    qsort (events, count, sizeof (s_event_t), s_compare_event);
    int running = 0, most = 0;
    for (size_t i = 0; i < count; i++) {
        running += events [i].delta;
        most = running > most? running: most;
    }
    int all_overlap = count / 2 == runs && latest_start < earliest_end;
    printf ("{\"runs\": %zu, \"sleep_ms\": %d, \"triggered\": %" PRId64 ", \"final\": %" PRId64
            ", \"ok\": %" PRId64 ", \"lost\": %" PRId64 ", \"max_at_once\": %d"
            ", \"all_overlapped\": %s, \"trigger_s\": %.3f, \"start_spread_ms\": %.1f"
            ", \"total_s\": %.3f}\n",
            runs, ms, triggered, range.final, range.ok, triggered - range.final, most,
            all_overlap? "true": "false", (sent_at - start) / 1000.0,
            count? (latest_start - events [0].at) / 1000.0: -1.0,
            (range.last_handle - start) / 1000.0);
    free (events);
    free (ids);
    bench_db_close (&db);
    s_api_destroy (&api);
    return range.final != triggered? 1: 0;
}

//  One SHARDING_BROADCAST job of noopJobHandler triggered `triggers` times
//  (one at a time): each trigger makes a row per agent of the group.
//  Counts what came: rows, final, ok, the time to trigger and to finish.
static int
s_cmd_sharding (const char *endpoint, const char *dbpath, const char *app, int triggers)
{
    s_api_t *api = s_api_new (endpoint);
    bench_db_t *db = bench_db_open (dbpath);
    s_job_spec_t spec = { "noopJobHandler", NULL, NULL, NULL, "SHARDING_BROADCAST" };
    int64_t *ids = s_jobs_add (api, app, 1, &spec);
    int64_t job = ids [0];
    free (ids);
    int64_t start = s_wall_ms (), acked = 0, trigger_ms_max = 0;
    for (int i = 0; i < triggers; i++) {
        int64_t sent = s_wall_ms ();
        xxl_enc_t *enc = s_api_begin (api, "JOB_TRIGGER");
        xxl_enc_kint (enc, "jobId", job);
        xxl_msg_t *reply = s_api_call (api);
        if (xxl_reply_code (reply) != XXL_OK)
            s_fail_reply ("JOB_TRIGGER", reply);
        const msgpack_object *content = xxl_reply_content (reply);
        const msgpack_object *log_ids = content? xxl_msg_get (content, "logIds"): NULL;
        if (log_ids && log_ids->type == MSGPACK_OBJECT_ARRAY)
            acked += log_ids->via.array.size;
        xxl_msg_destroy (&reply);
        int64_t took = s_wall_ms () - sent;
        trigger_ms_max = took > trigger_ms_max? took: trigger_ms_max;
    }
    int64_t triggered = s_wall_ms ();
    char sql [256], count_sql [256], where [64];
    snprintf (where, sizeof where, "job_id = %" PRId64, job);
    snprintf (count_sql, sizeof count_sql, "SELECT COUNT(*) FROM xxl_job_log WHERE %s", where);
    int64_t rows = bench_db_scalar (db, count_sql, 0);
    snprintf (sql, sizeof sql, "SELECT COUNT(*) FROM xxl_job_log WHERE %s"
              " AND (handle_code <> 0 OR trigger_code NOT IN (0, 200))", where);
    int64_t final = bench_db_scalar (db, sql, 0), seen = final, progress_at = s_wall_ms ();
    while (final < rows && s_wall_ms () - progress_at < XXL_BENCH_SETTLE_S * 1000) {
        s_sleep_us (100000);
        final = bench_db_scalar (db, sql, 0);
        rows = bench_db_scalar (db, count_sql, 0);
        if (final != seen) {
            seen = final;
            progress_at = s_wall_ms ();
        }
    }
    int64_t done = s_wall_ms ();
    snprintf (sql, sizeof sql, "SELECT COUNT(*) FROM xxl_job_log WHERE %s"
              " AND handle_code = 200 AND trigger_code = 200", where);
    int64_t ok = bench_db_scalar (db, sql, 0);
    snprintf (sql, sizeof sql, "SELECT COUNT(DISTINCT executor_address) FROM xxl_job_log"
              " WHERE %s", where);
    int64_t addresses = bench_db_scalar (db, sql, 0);
    char outcomes [512], reason [256];
    s_db_outcomes (db, where, outcomes, sizeof outcomes, reason, sizeof reason);
    printf ("{\"triggers\": %d, \"acked\": %" PRId64 ", \"rows\": %" PRId64
            ", \"final\": %" PRId64 ", \"ok\": %" PRId64 ", \"lost\": %" PRId64
            ", \"addresses\": %" PRId64 ", \"trigger_s\": %.3f, \"trigger_ms_max\": %" PRId64
            ", \"total_s\": %.3f, \"runs_per_s\": %.0f, \"outcomes\": %s"
            ", \"top_failure\": \"%s\"}\n",
            triggers, acked, rows, final, ok, rows - final, addresses,
            (triggered - start) / 1000.0, trigger_ms_max, (done - start) / 1000.0,
            done > start? final * 1000.0 / (double) (done - start): 0.0, outcomes, reason);
    bench_db_close (&db);
    s_api_destroy (&api);
    return rows != final? 1: 0;
}

//  Midnight's herd: the jobs [first_job, last_job] (stampJobHandler) are
//  all due at at_ms.  Waits for the instant, then until every row of them
//  is final (and one per job came, or nothing new for 5 s); reports how
//  many ran, how many jobs had no run or more than one, and when the
//  handlers started (their stamps) after the instant: p50 and the last
static int
s_cmd_herd (const char *dbpath, int64_t first_job, int64_t last_job, int64_t at_ms)
{
    bench_db_t *db = bench_db_open (dbpath);
    int64_t jobs = last_job - first_job + 1;
    while (s_wall_ms () < at_ms)
        s_sleep_us (50000);
    char where [128], count_sql [256], final_sql [256], sql [256];
    snprintf (where, sizeof where, "job_id BETWEEN %" PRId64 " AND %" PRId64, first_job, last_job);
    snprintf (count_sql, sizeof count_sql, "SELECT COUNT(*) FROM xxl_job_log WHERE %s", where);
    snprintf (final_sql, sizeof final_sql, "SELECT COUNT(*) FROM xxl_job_log WHERE %s"
              " AND (handle_code <> 0 OR trigger_code NOT IN (0, 200))", where);
    int64_t rows = 0, final = 0, seen = -1, progress_at = s_wall_ms ();
    while (true) {
        rows = bench_db_scalar (db, count_sql, 0);
        final = bench_db_scalar (db, final_sql, 0);
        if (rows + final != seen) {
            seen = rows + final;
            progress_at = s_wall_ms ();
        }
        int64_t still = s_wall_ms () - progress_at;
        if (final == rows && (rows >= jobs || still > 5000))
            break;
        if (still > XXL_BENCH_SETTLE_S * 1000)
            break;
        s_sleep_us (200000);
    }
    int64_t done_at = s_wall_ms ();
    snprintf (sql, sizeof sql, "SELECT COUNT(DISTINCT job_id) FROM xxl_job_log WHERE %s", where);
    int64_t distinct = bench_db_scalar (db, sql, 0);
    snprintf (sql, sizeof sql, "SELECT MAX(trigger_time) FROM xxl_job_log WHERE %s", where);
    int64_t last_trigger = bench_db_scalar (db, sql, 0);
    snprintf (sql, sizeof sql, "SELECT handle_msg FROM xxl_job_log WHERE %s"
              " AND handle_code = 200 AND trigger_code = 200", where);
    bench_rows_t *stamps = bench_db_query (db, sql, 0);
    size_t count = 0, size = 1024;
    int64_t *start = (int64_t *) malloc (size * sizeof (int64_t));
    while (bench_rows_next (stamps)) {
        const char *text = bench_rows_text (stamps, 0);
        if (!text)
            continue;
        if (count == size)
            start = (int64_t *) realloc (start, (size *= 2) * sizeof (int64_t));
        start [count++] = strtoll (text, NULL, 10) - at_ms * 1000;
    }
    bench_rows_end (&stamps);
    qsort (start, count, sizeof (int64_t), bench_compare_int64);
    char outcomes [512], reason [256];
    s_db_outcomes (db, where, outcomes, sizeof outcomes, reason, sizeof reason);
    printf ("{\"jobs\": %" PRId64 ", \"at_ms\": %" PRId64 ", \"rows\": %" PRId64
            ", \"final\": %" PRId64 ", \"ok\": %zu, \"lost\": %" PRId64
            ", \"jobs_without_run\": %" PRId64 ", \"extra_runs\": %" PRId64
            ", \"first_start_ms\": %.1f, \"p50_start_ms\": %.1f, \"p99_start_ms\": %.1f"
            ", \"last_start_ms\": %.1f, \"last_trigger_ms\": %" PRId64 ", \"settled_s\": %.1f"
            ", \"outcomes\": %s, \"top_failure\": \"%s\"}\n",
            jobs, at_ms, rows, final, count, rows - final, jobs - distinct, rows - distinct,
            count? start [0] / 1000.0: -1.0, bench_percentile (start, count, 50) / 1000.0,
            bench_percentile (start, count, 99) / 1000.0, count? start [count - 1] / 1000.0: -1.0,
            last_trigger? last_trigger - at_ms: -1, (done_at - at_ms) / 1000.0, outcomes, reason);
    free (start);
    bench_db_close (&db);
    return rows != final? 1: 0;
}

//  utime + stime of a process (children: of its waited-for children) in
//  clock ticks, or -1
static int64_t
s_proc_ticks (int pid, int children)
{
    char path [64], buffer [1024];
    snprintf (path, sizeof path, "/proc/%d/stat", pid);
    FILE *file = fopen (path, "r");
    if (!file)
        return -1;
    size_t size = fread (buffer, 1, sizeof buffer - 1, file);
    fclose (file);
    buffer [size] = 0;
    char *after = strrchr (buffer, ')');
    if (!after)
        return -1;
    unsigned long long utime, stime, cutime, cstime;
    //  Fields 3..: state ppid pgrp session tty tpgid flags minflt cminflt
    //  majflt cmajflt utime stime cutime cstime
    if (sscanf (after + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu",
                &utime, &stime, &cutime, &cstime) != 4)
        return -1;
    return (int64_t) (children? cutime + cstime: utime + stime);
}

//  VmRSS in kB, or -1
static int64_t
s_proc_rss_kb (int pid)
{
    char path [64], line [256];
    snprintf (path, sizeof path, "/proc/%d/status", pid);
    FILE *file = fopen (path, "r");
    if (!file)
        return -1;
    int64_t rss = -1;
    while (fgets (line, sizeof line, file))
        if (strncmp (line, "VmRSS:", 6) == 0)
            rss = strtoll (line + 6, NULL, 10);
    fclose (file);
    return rss;
}

static int
s_cmd_idle (int pid, int seconds)
{
    int64_t ticks0 = s_proc_ticks (pid, 0), t0 = bench_wall_us ();
    int64_t rss_max = s_proc_rss_kb (pid);
    for (int i = 0; i < seconds * 10; i++) {
        s_sleep_us (100000);
        int64_t rss = s_proc_rss_kb (pid);
        rss_max = rss > rss_max? rss: rss_max;
    }
    int64_t ticks1 = s_proc_ticks (pid, 0), t1 = bench_wall_us ();
    if (ticks0 < 0 || ticks1 < 0 || rss_max < 0) {
        fprintf (stderr, "xxl_bench: process %d is gone\n", pid);
        return 1;
    }
    double cpu = (double) (ticks1 - ticks0) / (double) sysconf (_SC_CLK_TCK)
               / ((double) (t1 - t0) / 1e6) * 100.0;
    printf ("{\"pid\": %d, \"seconds\": %d, \"rss_mb\": %.1f, \"cpu_pct\": %.2f}\n",
            pid, seconds, (double) rss_max / 1024.0, cpu);
    return 0;
}

//  WORKFLOW_TRIGGERs of the workflows listed in `file` (one id a line,
//  taken in turn), `count` of them evenly over `seconds`, at
//  most `inflight` unanswered: the load of as many clients each waiting
//  for its answer, from one connection (no process per trigger, whose
//  start would load the machine more than the scheduler does).  Each
//  reply must be 200.  Prints {"triggered", "ms"}.
static int
s_cmd_workflows (const char *endpoint, const char *file, long count, long inflight,
                 int seconds)
{
    FILE *list = fopen (file, "r");
    if (!list) {
        fprintf (stderr, "xxl_bench: cannot read %s\n", file);
        return 2;
    }
    int64_t ids [4096];
    size_t known = 0;
    long long id;
    while (known < 4096 && fscanf (list, "%lld", &id) == 1)
        if (id > 0)
            ids [known++] = id;
    fclose (list);
    if (!known) {
        fprintf (stderr, "xxl_bench: no workflow id in %s\n", file);
        return 2;
    }
    s_api_t *api = s_api_new (endpoint);
    int64_t started = s_wall_ms ();
    long sent = 0, answered = 0;
    while (answered < count) {
        int64_t now = s_wall_ms ();
        //  (the triggers due by now, spread over the seconds)
        long due = (long) ((now - started) * count / ((int64_t) seconds * 1000)) + 1;
        while (sent < count && sent < due && (long) api->outstanding < inflight) {
            xxl_enc_t *enc = s_api_begin (api, "WORKFLOW_TRIGGER");
            xxl_enc_kint (enc, "workflowId", ids [sent % (long) known]);
            s_api_send (api);
            sent++;
        }
        uint64_t index;
        xxl_msg_t *reply = s_api_recv (api, 5, &index);
        if (!reply)
            continue;
        if (xxl_reply_code (reply) != 200)
            s_fail_reply ("WORKFLOW_TRIGGER", reply);
        xxl_msg_destroy (&reply);
        answered++;
    }
    printf ("{\"triggered\": %ld, \"ms\": %" PRId64 "}\n", count, s_wall_ms () - started);
    s_api_destroy (&api);
    return 0;
}

static void
s_usage (void)
{
    fprintf (stderr,
        "usage: xxl_bench group API APP\n"
        "       xxl_bench e2e API DB APP noop|glue JOBS SECONDS INFLIGHT [SCHED_PID AGENT_PID]\n"
        "       xxl_bench latency API DB APP SAMPLES\n"
        "       xxl_bench cron API DB APP JOBS SECONDS\n"
        "       xxl_bench concurrent API DB APP RUNS MS\n"
        "       xxl_bench sharding API DB APP TRIGGERS\n"
        "       xxl_bench herd DB FIRST_JOB LAST_JOB AT_MS\n"
        "       xxl_bench workflows API FILE COUNT INFLIGHT SECONDS\n"
        "       xxl_bench idle PID SECONDS\n");
    exit (2);
}

int
main (int argc, char *argv [])
{
    if (argc < 2)
        s_usage ();
    zsys_init ();
    zsys_set_logident ("xxl_bench");
    zsys_set_logstream (stderr);        //  stdout carries the JSON
    const char *command = argv [1];
    if (streq (command, "group") && argc == 4)
        return s_cmd_group (argv [2], argv [3]);
    //  Counts must be positive
    for (int i = 5; i < argc; i++)
        if (strspn (argv [i], "0123456789") == strlen (argv [i]) && atol (argv [i]) <= 0)
            s_usage ();
    if (streq (command, "e2e") && (argc == 9 || argc == 11))
        return s_cmd_e2e (argv [2], argv [3], argv [4], argv [5], (size_t) atol (argv [6]),
                          atoi (argv [7]), atoll (argv [8]),
                          argc == 11? atoi (argv [9]): 0, argc == 11? atoi (argv [10]): 0);
    if (streq (command, "latency") && argc == 6)
        return s_cmd_latency (argv [2], argv [3], argv [4], atoi (argv [5]));
    if (streq (command, "cron") && argc == 7)
        return s_cmd_cron (argv [2], argv [3], argv [4], (size_t) atol (argv [5]),
                           atoi (argv [6]));
    if (streq (command, "concurrent") && argc == 7)
        return s_cmd_concurrent (argv [2], argv [3], argv [4], (size_t) atol (argv [5]),
                                 atoi (argv [6]));
    if (streq (command, "sharding") && argc == 6)
        return s_cmd_sharding (argv [2], argv [3], argv [4], atoi (argv [5]));
    if (streq (command, "herd") && argc == 6)
        return s_cmd_herd (argv [2], atoll (argv [3]), atoll (argv [4]), atoll (argv [5]));
    if (streq (command, "workflows") && argc == 7 && atol (argv [4]) > 0 && atol (argv [5]) > 0)
        return s_cmd_workflows (argv [2], argv [3], atol (argv [4]), atol (argv [5]),
                                atoi (argv [6]));
    if (streq (command, "idle") && argc == 4)
        return s_cmd_idle (atoi (argv [2]), atoi (argv [3]));
    s_usage ();
    return 2;
}
