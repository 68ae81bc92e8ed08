/*  xxl_metrics.c -- counters published by the engine, rendered for
    Prometheus.  See xxl_metrics.h.
*/

#include "xxl_metrics.h"
#include "xxl/msg.h"

#include <czmq.h>
#include <pthread.h>

static const double s_bounds [XXL_HISTO_BUCKETS] = {
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60
};
static const char *const s_trigger_types [XXL_TRIGGER_TYPES] = {
    "MANUAL", "CRON", "RETRY", "PARENT", "API", "MISFIRE", "WORKFLOW", "BACKFILL"
};

struct _xxl_metrics_box_t {
    pthread_mutex_t lock;
    xxl_metrics_t metrics;
    char *labelled;                     //  the labelled series' text (owned)
    bool published;
};

xxl_metrics_box_t *
xxl_metrics_box_new (void)
{
    xxl_metrics_box_t *self = (xxl_metrics_box_t *) zmalloc (sizeof *self);
    pthread_mutex_init (&self->lock, NULL);
    return self;
}

void
xxl_metrics_box_destroy (xxl_metrics_box_t **self_p)
{
    if (*self_p) {
        pthread_mutex_destroy (&(*self_p)->lock);
        free ((*self_p)->labelled);
        free (*self_p);
        *self_p = NULL;
    }
}

void
xxl_metrics_publish (xxl_metrics_box_t *self, const xxl_metrics_t *metrics)
{
    char *labelled = metrics->labels? xxl_labels_render (metrics->labels): NULL;
    pthread_mutex_lock (&self->lock);
    self->metrics = *metrics;
    self->metrics.labels = NULL;
    char *old = self->labelled;
    self->labelled = labelled;
    self->published = true;
    pthread_mutex_unlock (&self->lock);
    free (old);
}

char *
xxl_metrics_labelled (xxl_metrics_box_t *self)
{
    pthread_mutex_lock (&self->lock);
    char *text = strdup (self->labelled? self->labelled: "");
    pthread_mutex_unlock (&self->lock);
    assert (text);
    return text;
}

bool
xxl_metrics_read (xxl_metrics_box_t *self, xxl_metrics_t *out)
{
    pthread_mutex_lock (&self->lock);
    *out = self->metrics;
    bool published = self->published;
    pthread_mutex_unlock (&self->lock);
    return published;
}

void
xxl_histo_observe (xxl_histo_t *histo, double seconds)
{
    if (seconds < 0)
        seconds = 0;
    size_t i = 0;
    while (i < XXL_HISTO_BUCKETS && seconds > s_bounds [i])
        i++;
    histo->counts [i]++;
    histo->count++;
    histo->sum += seconds;
}

int
xxl_metrics_trigger_index (const char *type)
{
    for (int i = 0; type && i < XXL_TRIGGER_TYPES; i++)
        if (streq (type, s_trigger_types [i]))
            return i;
    return -1;
}

static void
s_head (zchunk_t *out, const char *name, const char *type, const char *help)
{
    char line [512];
    int n = snprintf (line, sizeof line, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
    zchunk_extend (out, line, (size_t) n);
}

static void
s_line (zchunk_t *out, const char *format, ...)
{
    //  (a labelled line may be long: its labels' values whole, never cut)
    va_list args;
    va_start (args, format);
    char *line = zsys_vprintf (format, args);
    va_end (args);
    assert (line);
    zchunk_extend (out, line, strlen (line));
    zstr_free (&line);
}

static void
s_histo (zchunk_t *out, const char *name, const char *help, const xxl_histo_t *histo)
{
    s_head (out, name, "histogram", help);
    uint64_t cumulative = 0;
    for (size_t i = 0; i < XXL_HISTO_BUCKETS; i++) {
        cumulative += histo->counts [i];
        s_line (out, "%s_bucket{le=\"%g\"} %" PRIu64 "\n", name, s_bounds [i], cumulative);
    }
    s_line (out, "%s_bucket{le=\"+Inf\"} %" PRIu64 "\n", name, histo->count);
    s_line (out, "%s_sum %.6f\n", name, histo->sum);
    s_line (out, "%s_count %" PRIu64 "\n", name, histo->count);
}

static void
s_gauge (zchunk_t *out, const char *name, const char *help, int64_t value)
{
    s_head (out, name, "gauge", help);
    s_line (out, "%s %" PRId64 "\n", name, value);
}

char *
xxl_metrics_render (const xxl_metrics_t *m)
{
    zchunk_t *out = zchunk_new (NULL, 8192);
    s_head (out, "xxl_runs_total", "counter",
            "Runs finished, by result code (handleCode: 200 success, 500 failure, 502 timeout)");
    s_line (out, "xxl_runs_total{code=\"200\"} %" PRIu64 "\n", m->runs_ok);
    s_line (out, "xxl_runs_total{code=\"500\"} %" PRIu64 "\n", m->runs_fail);
    s_line (out, "xxl_runs_total{code=\"502\"} %" PRIu64 "\n", m->runs_timeout);
    s_line (out, "xxl_runs_total{code=\"other\"} %" PRIu64 "\n", m->runs_other);
    s_head (out, "xxl_triggers_total", "counter", "Triggers made, by trigger type");
    for (int i = 0; i < XXL_TRIGGER_TYPES; i++)
        s_line (out, "xxl_triggers_total{type=\"%s\"} %" PRIu64 "\n", s_trigger_types [i],
                m->triggers [i]);
    s_head (out, "xxl_fires_skipped_total", "counter",
            "Planned fires not run: misfires under DO_NOTHING (found more than planner/preread"
            " late by the planner, or dropped by recovery)");
    s_line (out, "xxl_fires_skipped_total %" PRIu64 "\n", m->fires_skipped);
    s_head (out, "xxl_http_requests_total", "counter",
            "REST requests the HTTP server passed to the engine");
    s_line (out, "xxl_http_requests_total %" PRIu64 "\n", m->http_requests);
    s_head (out, "xxl_http_password_checks_total", "counter",
            "Passwords judged for a login or a password change, by result (limited: refused"
            " before any check, too many wrong ones from the address or for the user)");
    s_line (out, "xxl_http_password_checks_total{result=\"ok\"} %" PRIu64 "\n", m->checks_ok);
    s_line (out, "xxl_http_password_checks_total{result=\"wrong\"} %" PRIu64 "\n",
            m->checks_wrong);
    s_line (out, "xxl_http_password_checks_total{result=\"limited\"} %" PRIu64 "\n",
            m->checks_limited);
    if (m->limit_slots > 0) {
        s_gauge (out, "xxl_http_login_limit_entries",
                 "Addresses and user names the login limiter holds", m->limit_used);
        s_gauge (out, "xxl_http_login_limit_slots",
                 "The login limiter's table size (entries never pass it)", m->limit_slots);
    }
    s_head (out, "xxl_http_connections_closed_total", "counter",
            "HTTP connections the server closed unanswered: past their request's deadline"
            " (http/request_timeout_s), or with no slot left for them");
    s_line (out, "xxl_http_connections_closed_total{reason=\"deadline\"} %" PRIu64 "\n",
            m->conn_deadline);
    s_line (out, "xxl_http_connections_closed_total{reason=\"no_slot\"} %" PRIu64 "\n",
            m->conn_no_slot);
    s_head (out, "xxl_http_connections", "gauge",
            "HTTP connections open, by slot (ordinary: of the 64; health: kept for /healthz"
            " and /readyz)");
    s_line (out, "xxl_http_connections{slot=\"ordinary\"} %" PRId64 "\n", m->conn_ordinary);
    s_line (out, "xxl_http_connections{slot=\"health\"} %" PRId64 "\n", m->conn_health);
    s_histo (out, "xxl_fire_lateness_seconds",
             "Planned fire time to the engine sending its RUN (seconds)", &m->lateness);
    s_histo (out, "xxl_trigger_accept_seconds",
             "Trigger time to the agent accepting the RUN (seconds)", &m->accept);
    s_histo (out, "xxl_trigger_start_seconds",
             "Trigger time to the handler starting, as the agent's CALLBACK says (startTime;"
             " results without it are not counted) (seconds)", &m->start);
    s_histo (out, "xxl_store_commit_seconds", "One engine turn's store commit (seconds)",
             &m->commit);
    s_head (out, "xxl_queue_depth", "gauge", "Items waiting, by queue");
    s_line (out, "xxl_queue_depth{queue=\"api_replies\"} %" PRId64 "\n", m->api_out);
    s_line (out, "xxl_queue_depth{queue=\"agent_messages\"} %" PRId64 "\n", m->agents_out);
    s_line (out, "xxl_queue_depth{queue=\"agent_requests\"} %" PRId64 "\n", m->pending);
    s_line (out, "xxl_queue_depth{queue=\"run_batches\"} %" PRId64 "\n", m->batches);
    s_line (out, "xxl_queue_depth{queue=\"planned_fires\"} %" PRId64 "\n", m->timer);
    s_line (out, "xxl_queue_depth{queue=\"pool_fast\"} %" PRId64 "\n", m->fast_queue);
    s_line (out, "xxl_queue_depth{queue=\"pool_slow\"} %" PRId64 "\n", m->slow_queue);
    s_gauge (out, "xxl_api_backlog_bytes", "Reply bytes waiting for api clients to read",
             m->api_backlog_bytes);
    s_gauge (out, "xxl_agents_connected", "Agent addresses registered and connected",
             m->agents);
    s_gauge (out, "xxl_leases_held", "Shares of the jobs this scheduler plans (of 16)",
             m->leases);
    if (m->wal_bytes >= 0)
        s_gauge (out, "xxl_store_wal_bytes", "Size of the SQLite store's WAL file",
                 m->wal_bytes);
    s_gauge (out, "xxl_ready", "1 when past the warm-up and the store commits", m->ready);
    s_gauge (out, "xxl_start_time_seconds", "When the engine started (epoch seconds)",
             m->start_ms / 1000);
    zchunk_extend (out, "", 1);
    char *text = strdup ((const char *) zchunk_data (out));
    zchunk_destroy (&out);
    return text;
}

//  ---------------------------------------------------------------------
//  Labelled series

//  Result codes as the series name them (xxl_runs_total's)
#define XXL_CODES 4
static const char *const s_codes [XXL_CODES] = { "200", "500", "502", "other" };

static int
s_code_index (int code)
{
    return code == 200? 0: code == 500? 1: code == 502? 2: 3;
}

typedef struct {
    uint64_t runs [XXL_CODES];
    int64_t connected;                  //  this round's registry
    char name [];                       //  the app's (one allocation)
} app_t;

typedef struct {
    int64_t id;
    char *app;                          //  as last noted (NULL: none yet); its
                                        //  series carry it until another is noted
    bool stale;                         //  app to be looked up again (a change)
    uint64_t runs [XXL_CODES];
    int last_code;
    int64_t last_time;                  //  epoch ms
    int64_t failures;                   //  in a row
    void *handle;                       //  in xxl_labels_t.order
} job_t;

//  A job's app as last looked up (the app's name is the key of its entry
//  in xxl_labels_t.apps, which lives as long as the labels)
typedef struct {
    int64_t job_id;                     //  0: empty
    const char *app;
} app_seen_t;

#define XXL_LABELS_APP_SEEN 65536       //  slots of the jobs' apps (a power of 2)

typedef struct {
    char *app, *address;
    bool connected;
} entry_t;

struct _xxl_labels_t {
    size_t jobs_max, agents_max;
    zhashx_t *apps;                     //  app -> app_t
    zhashx_t *jobs;                     //  "id" -> job_t
    zlistx_t *order;                    //  the job_t's, the one whose runs
                                        //  ended longest ago first
    app_seen_t *app_seen;               //  job id -> app, by id mod the size
    zhashx_t *figures;                  //  address -> xxl_agent_figures_t
    entry_t *round;                     //  this round's registry entries
    size_t round_count, round_max;
    uint64_t clock;
};

static void
s_job_free (void **item)
{
    job_t *job = (job_t *) *item;
    if (job) {
        free (job->app);
        free (job);
        *item = NULL;
    }
}

//  The jobs' map is keyed by the id inside each job (not copied)
static size_t
s_id_key_hash (const void *key)
{
    return (size_t) *(const uint64_t *) key * 0x9E3779B97F4A7C15ULL;
}

static int
s_id_key_differ (const void *a, const void *b)
{
    return *(const int64_t *) a != *(const int64_t *) b;
}

xxl_labels_t *
xxl_labels_new (size_t jobs, size_t agents)
{
    xxl_labels_t *self = (xxl_labels_t *) zmalloc (sizeof *self);
    self->jobs_max = jobs;
    self->agents_max = agents;
    self->apps = zhashx_new ();
    zhashx_set_destructor (self->apps, (zhashx_destructor_fn *) zstr_free);
    self->jobs = zhashx_new ();
    zhashx_set_key_hasher (self->jobs, s_id_key_hash);
    zhashx_set_key_comparator (self->jobs, s_id_key_differ);
    zhashx_set_key_duplicator (self->jobs, NULL);
    zhashx_set_key_destructor (self->jobs, NULL);
    zhashx_set_destructor (self->jobs, s_job_free);
    self->order = zlistx_new ();
    self->app_seen = (app_seen_t *) calloc (jobs? XXL_LABELS_APP_SEEN: 1, sizeof (app_seen_t));
    assert (self->app_seen);
    self->figures = zhashx_new ();
    zhashx_set_destructor (self->figures, (zhashx_destructor_fn *) zstr_free);
    return self;
}

static void
s_round_clear (xxl_labels_t *self)
{
    for (size_t i = 0; i < self->round_count; i++) {
        free (self->round [i].app);
        free (self->round [i].address);
    }
    self->round_count = 0;
}

void
xxl_labels_destroy (xxl_labels_t **self_p)
{
    xxl_labels_t *self = *self_p;
    if (!self)
        return;
    s_round_clear (self);
    free (self->round);
    zhashx_destroy (&self->apps);
    zlistx_destroy (&self->order);
    zhashx_destroy (&self->jobs);
    zhashx_destroy (&self->figures);
    free (self->app_seen);
    free (self);
    *self_p = NULL;
}

static job_t *
s_job (xxl_labels_t *self, int64_t job_id)
{
    return (job_t *) zhashx_lookup (self->jobs, &job_id);
}

static app_seen_t *
s_app_seen (xxl_labels_t *self, int64_t job_id)
{
    return self->jobs_max? &self->app_seen [(uint64_t) job_id & (XXL_LABELS_APP_SEEN - 1)]: NULL;
}

const char *
xxl_labels_job_app (xxl_labels_t *self, int64_t job_id)
{
    job_t *job = s_job (self, job_id);
    if (job && job->stale)
        return NULL;
    if (job && job->app)
        return job->app;
    app_seen_t *seen = s_app_seen (self, job_id);
    return seen && seen->job_id == job_id? seen->app: NULL;
}

void
xxl_labels_job_changed (xxl_labels_t *self, int64_t job_id)
{
    if (job_id == 0) {
        for (job_t *job = (job_t *) zhashx_first (self->jobs); job;
             job = (job_t *) zhashx_next (self->jobs))
            job->stale = true;
        if (self->jobs_max)
            memset (self->app_seen, 0, XXL_LABELS_APP_SEEN * sizeof (app_seen_t));
        return;
    }
    job_t *job = s_job (self, job_id);
    if (job)
        job->stale = true;
    app_seen_t *seen = s_app_seen (self, job_id);
    if (seen && seen->job_id == job_id)
        seen->job_id = 0;
}

//  App's entry, made when there is room (NULL: none)
static app_t *
s_app (xxl_labels_t *self, const char *app)
{
    if (!app || !*app)
        return NULL;
    app_t *entry = (app_t *) zhashx_lookup (self->apps, app);
    if (!entry && zhashx_size (self->apps) < XXL_LABELS_APPS) {
        entry = (app_t *) zmalloc (sizeof *entry + strlen (app) + 1);
        strcpy (entry->name, app);
        zhashx_insert (self->apps, app, entry);
    }
    return entry;
}

void
xxl_labels_run (xxl_labels_t *self, int64_t job_id, const char *app, bool result, int code,
                int64_t now)
{
    job_t *job = s_job (self, job_id);
    bool noted = app && *app;           //  (the caller's: a fresh look-up)
    if (!noted)
        app = job? job->app: NULL;
    app_t *entry = s_app (self, app);
    if (entry && result)
        entry->runs [s_code_index (code)]++;
    if (self->jobs_max == 0)
        return;
    if (entry && noted) {
        //  (the app's own copy of its name, for the next run's end; a
        //  stale job's app, counted above, is never made known again)
        app_seen_t *seen = s_app_seen (self, job_id);
        seen->job_id = job_id;
        seen->app = entry->name;
    }
    if (!job) {
        if (zhashx_size (self->jobs) >= self->jobs_max) {
            //  (the job whose runs ended longest ago goes)
            job_t *oldest = (job_t *) zlistx_first (self->order);
            assert (oldest);
            zlistx_delete (self->order, oldest->handle);
            int64_t oldest_id = oldest->id;
            zhashx_delete (self->jobs, &oldest_id);
        }
        job = (job_t *) zmalloc (sizeof *job);
        job->id = job_id;
        job->handle = zlistx_add_end (self->order, job);
        zhashx_insert (self->jobs, &job->id, job);
    }
    else
        zlistx_move_end (self->order, job->handle);
    if (noted && (!job->app || strcmp (job->app, app))) {
        free (job->app);
        job->app = strdup (app);
    }
    if (noted)
        job->stale = false;
    if (result)
        job->runs [s_code_index (code)]++;
    job->last_code = result? code: 500;
    job->last_time = now;
    job->failures = result && code == 200? 0: job->failures + 1;
}

void
xxl_labels_agent (xxl_labels_t *self, const char *address, const xxl_agent_figures_t *figures)
{
    xxl_agent_figures_t *held = (xxl_agent_figures_t *) zhashx_lookup (self->figures, address);
    if (!held) {
        if (zhashx_size (self->figures) >= self->agents_max)
            return;
        held = (xxl_agent_figures_t *) zmalloc (sizeof *held);
        zhashx_insert (self->figures, address, held);
    }
    *held = *figures;
}

//  A figure of a REGISTER: an integer 0 to INT32_MAX, else -1
static int64_t
s_figure (const msgpack_object *map, const char *key)
{
    const msgpack_object *value = xxl_msg_get (map, key);
    return value && value->type == MSGPACK_OBJECT_POSITIVE_INTEGER
        && value->via.u64 <= INT32_MAX? (int64_t) value->via.u64: -1;
}

void
xxl_labels_agent_register (xxl_labels_t *self, const char *address,
                           const struct msgpack_object *map)
{
    xxl_agent_figures_t figures = {
        s_figure (map, "running"), s_figure (map, "queued"), s_figure (map, "spooled"),
        s_figure (map, "lastCode")
    };
    if (figures.running >= 0 || figures.queued >= 0 || figures.spooled >= 0
    ||  figures.last_code >= 0)
        xxl_labels_agent (self, address, &figures);
}

void
xxl_labels_registry (xxl_labels_t *self, const char *app, const char *address, bool connected)
{
    if (self->round_count == self->round_max) {
        self->round_max = self->round_max? self->round_max * 2: 64;
        self->round = (entry_t *) realloc (self->round, self->round_max * sizeof (entry_t));
        assert (self->round);
    }
    self->round [self->round_count++] = (entry_t) {
        .app = strdup (app), .address = strdup (address), .connected = connected
    };
}

void
xxl_labels_escape (const char *text, char *out, size_t outlen)
{
    assert (outlen > 0);
    size_t used = 0;
    for (const char *c = text? text: ""; *c && used + 3 <= outlen; c++) {
        if (*c == '\\' || *c == '"' || *c == '\n') {
            out [used++] = '\\';
            out [used++] = *c == '\n'? 'n': *c;
        }
        else
            out [used++] = *c;
    }
    out [used] = 0;
}

static int
s_compare_ids (const void *a, const void *b)
{
    int64_t x = (*(job_t *const *) a)->id, y = (*(job_t *const *) b)->id;
    return x < y? -1: x > y;
}

char *
xxl_labels_render (xxl_labels_t *self)
{
    zchunk_t *out = zchunk_new (NULL, 8192);
    char app [2 * 256 + 1], address [2 * 256 + 1];
    //  This round's agents connected, by app; figures of addresses no
    //  entry names are forgotten
    for (app_t *a = (app_t *) zhashx_first (self->apps); a; a = (app_t *) zhashx_next (self->apps))
        a->connected = 0;
    zhashx_t *named = zhashx_new ();
    for (size_t i = 0; i < self->round_count; i++) {
        app_t *a = s_app (self, self->round [i].app);
        if (a && self->round [i].connected)
            a->connected++;
        zhashx_insert (named, self->round [i].address, (void *) 1);
    }
    zlistx_t *gone = zlistx_new ();
    zlistx_set_destructor (gone, (zlistx_destructor_fn *) zstr_free);
    for (void *f = zhashx_first (self->figures); f; f = zhashx_next (self->figures))
        if (!zhashx_lookup (named, zhashx_cursor (self->figures)))
            zlistx_add_end (gone, strdup ((const char *) zhashx_cursor (self->figures)));
    for (char *g = (char *) zlistx_first (gone); g; g = (char *) zlistx_next (gone))
        zhashx_delete (self->figures, g);
    zlistx_destroy (&gone);
    zhashx_destroy (&named);

    s_head (out, "xxl_app_agents_connected", "gauge",
            "Agent addresses registered and connected, by app (apps seen since the start)");
    for (app_t *a = (app_t *) zhashx_first (self->apps); a; a = (app_t *) zhashx_next (self->apps)) {
        xxl_labels_escape ((const char *) zhashx_cursor (self->apps), app, sizeof app);
        s_line (out, "xxl_app_agents_connected{app=\"%s\"} %" PRId64 "\n", app, a->connected);
    }
    s_head (out, "xxl_app_runs_total", "counter", "Runs finished, by app and result code");
    for (app_t *a = (app_t *) zhashx_first (self->apps); a; a = (app_t *) zhashx_next (self->apps)) {
        xxl_labels_escape ((const char *) zhashx_cursor (self->apps), app, sizeof app);
        for (int c = 0; c < XXL_CODES; c++)
            s_line (out, "xxl_app_runs_total{app=\"%s\",code=\"%s\"} %" PRIu64 "\n", app,
                    s_codes [c], a->runs [c]);
    }

    //  Jobs in id order (a stable page)
    size_t count = zhashx_size (self->jobs), n = 0;
    job_t **jobs = (job_t **) calloc (count? count: 1, sizeof (job_t *));
    assert (jobs);
    for (job_t *j = (job_t *) zhashx_first (self->jobs); j; j = (job_t *) zhashx_next (self->jobs))
        jobs [n++] = j;
    qsort (jobs, n, sizeof (job_t *), s_compare_ids);
    s_head (out, "xxl_job_runs_total", "counter",
            "Runs finished, by job and result code (the jobs whose runs ended last, up to"
            " http/metrics_jobs)");
    for (size_t i = 0; i < n; i++) {
        xxl_labels_escape (jobs [i]->app, app, sizeof app);
        for (int c = 0; c < XXL_CODES; c++)
            s_line (out, "xxl_job_runs_total{job=\"%" PRId64 "\",app=\"%s\",code=\"%s\"} %"
                    PRIu64 "\n", jobs [i]->id, app, s_codes [c], jobs [i]->runs [c]);
    }
    s_head (out, "xxl_job_last_result", "gauge",
            "The handleCode of the job's last run (500 when its trigger failed)");
    for (size_t i = 0; i < n; i++) {
        xxl_labels_escape (jobs [i]->app, app, sizeof app);
        s_line (out, "xxl_job_last_result{job=\"%" PRId64 "\",app=\"%s\"} %d\n", jobs [i]->id,
                app, jobs [i]->last_code);
    }
    s_head (out, "xxl_job_last_result_time_seconds", "gauge",
            "When the job's last run ended (epoch seconds)");
    for (size_t i = 0; i < n; i++) {
        xxl_labels_escape (jobs [i]->app, app, sizeof app);
        s_line (out, "xxl_job_last_result_time_seconds{job=\"%" PRId64 "\",app=\"%s\"} %.3f\n",
                jobs [i]->id, app, jobs [i]->last_time / 1000.0);
    }
    s_head (out, "xxl_job_failures_in_row", "gauge",
            "The job's runs that failed (result other than 200, or trigger failed) since"
            " its last success");
    for (size_t i = 0; i < n; i++) {
        xxl_labels_escape (jobs [i]->app, app, sizeof app);
        s_line (out, "xxl_job_failures_in_row{job=\"%" PRId64 "\",app=\"%s\"} %" PRId64 "\n",
                jobs [i]->id, app, jobs [i]->failures);
    }
    free (jobs);

    //  Agents: each connected registry entry whose address told figures
    static const char *const names [4] = {
        "xxl_agent_runs_running", "xxl_agent_runs_queued", "xxl_agent_results_spooled",
        "xxl_agent_last_result"
    };
    static const char *const helps [4] = {
        "Runs the agent is running, as its last REGISTER said",
        "Runs the agent holds queued, not yet running, as its last REGISTER said",
        "Results the agent holds in its spool, not yet acknowledged by a scheduler",
        "The handleCode of the agent's last finished run (0: none since it started)"
    };
    for (int f = 0; f < 4; f++) {
        s_head (out, names [f], "gauge", helps [f]);
        for (size_t i = 0; i < self->round_count; i++) {
            if (!self->round [i].connected)
                continue;
            const xxl_agent_figures_t *fig = (const xxl_agent_figures_t *) zhashx_lookup (
                self->figures, self->round [i].address);
            int64_t value = !fig? -1: f == 0? fig->running: f == 1? fig->queued
                          : f == 2? fig->spooled: fig->last_code;
            if (value < 0)
                continue;
            xxl_labels_escape (self->round [i].app, app, sizeof app);
            xxl_labels_escape (self->round [i].address, address, sizeof address);
            s_line (out, "%s{app=\"%s\",address=\"%s\"} %" PRId64 "\n", names [f], app, address,
                    value);
        }
    }
    s_round_clear (self);
    zchunk_extend (out, "", 1);
    char *text = strdup ((const char *) zchunk_data (out));
    zchunk_destroy (&out);
    return text;
}
