/*  xxl_metrics.c -- counters published by the engine, rendered for
    Prometheus.  See xxl_metrics.h.
*/

#include "xxl_metrics.h"

#include <czmq.h>
#include <pthread.h>

static const double s_bounds [XXL_HISTO_BUCKETS] = {
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60
};
static const char *const s_trigger_types [XXL_TRIGGER_TYPES] = {
    "MANUAL", "CRON", "RETRY", "PARENT", "API", "MISFIRE"
};

struct _xxl_metrics_box_t {
    pthread_mutex_t lock;
    xxl_metrics_t metrics;
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
        free (*self_p);
        *self_p = NULL;
    }
}

void
xxl_metrics_publish (xxl_metrics_box_t *self, const xxl_metrics_t *metrics)
{
    pthread_mutex_lock (&self->lock);
    self->metrics = *metrics;
    self->published = true;
    pthread_mutex_unlock (&self->lock);
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
    char line [512];
    va_list args;
    va_start (args, format);
    int n = vsnprintf (line, sizeof line, format, args);
    va_end (args);
    if (n > 0)
        zchunk_extend (out, line, (size_t) n < sizeof line? (size_t) n: sizeof line - 1);
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
