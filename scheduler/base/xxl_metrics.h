/*  xxl_metrics.h -- the engine's counters for Prometheus (/metrics).

    The engine owns an xxl_metrics_t and bumps it on its own thread with
    plain stores (no locks, no atomics on the hot path); about once a second
    it publishes a copy into an xxl_metrics_box_t (one mutex, one memcpy),
    which the HTTP threads copy out of and render (text format 0.0.4).
*/

#ifndef XXL_METRICS_H_INCLUDED
#define XXL_METRICS_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XXL_HISTO_BUCKETS 15            //  finite upper bounds (seconds), and +Inf

typedef struct {
    uint64_t counts [XXL_HISTO_BUCKETS + 1];    //  per bucket (not cumulative)
    uint64_t count;
    double sum;                         //  seconds
} xxl_histo_t;

//  Trigger types, by index in xxl_metrics_t.triggers
#define XXL_TRIGGER_TYPES 8             //  MANUAL CRON RETRY PARENT API MISFIRE
                                        //  WORKFLOW BACKFILL

typedef struct _xxl_labels_t xxl_labels_t;

typedef struct {
    xxl_labels_t *labels;               //  the labelled series (engine's; never in
                                        //  a published copy: NULL there)
    //  Counters
    uint64_t runs_ok, runs_fail, runs_timeout, runs_other;      //  by handleCode
    uint64_t triggers [XXL_TRIGGER_TYPES];
    uint64_t fires_skipped;             //  planned fires not run: DO_NOTHING misfires
    uint64_t http_requests;             //  requests the HTTP side passed on
    //  Histograms
    xxl_histo_t lateness;               //  planned fire → its RUN leaving
    xxl_histo_t accept;                 //  trigger time → the agent accepted the RUN
    xxl_histo_t start;                  //  trigger time → the handler started (the
                                        //  CALLBACK item's startTime, when given)
    xxl_histo_t commit;                 //  one turn's store commit
    //  Gauges, as of the publication
    int64_t api_out;                    //  replies waiting for the turn's end
    int64_t api_backlog_bytes;          //  replies waiting for clients to read
    int64_t agents_out;                 //  messages to agents waiting
    int64_t pending;                    //  requests to agents in flight
    int64_t batches;                    //  batched RUNs in flight
    int64_t timer;                      //  planned fires on the timer
    int64_t fast_queue, slow_queue;     //  the trigger pools' queues
    int64_t agents;                     //  addresses registered and connected
    int64_t wal_bytes;                  //  SQLite's WAL file (-1: not SQLite)
    int64_t leases;                     //  shares held
    int64_t start_ms;                   //  epoch ms the engine started
    bool ready;                         //  past the warm-up, the store answering
    bool store_ok;                      //  the last commit succeeded
    //  The HTTP side's, set on its copy as it renders (the engine's are 0)
    uint64_t checks_ok, checks_wrong, checks_limited;   //  password checks
    int64_t limit_used, limit_slots;    //  the login limiter's table (-1: none)
    uint64_t conn_deadline, conn_no_slot;   //  connections closed: past their
                                        //  request's deadline, refused a slot
    int64_t conn_ordinary, conn_health; //  connections open, by slot kind
} xxl_metrics_t;

typedef struct _xxl_metrics_box_t xxl_metrics_box_t;

xxl_metrics_box_t *xxl_metrics_box_new (void);
void xxl_metrics_box_destroy (xxl_metrics_box_t **self_p);
//  Engine: a copy of metrics becomes the published one, and the text of
//  its labelled series (metrics->labels, when set) the published text;
//  the labels' figures of this round (agents connected) start over
void xxl_metrics_publish (xxl_metrics_box_t *self, const xxl_metrics_t *metrics);
//  Any thread: the published copy into out; false before the first one
bool xxl_metrics_read (xxl_metrics_box_t *self, xxl_metrics_t *out);
//  Any thread: the published text of the labelled series (a new string;
//  "" before the first publication or without labels)
char *xxl_metrics_labelled (xxl_metrics_box_t *self);

//  ---------------------------------------------------------------------
//  Labelled series (docs/http.md, *Labelled series*), engine thread only:
//  per app (agents connected, runs by code), per job (runs by code, the
//  last result, failures in a row) for the `jobs` jobs whose runs ended
//  last, and per agent address the figures of its REGISTER (running,
//  queued, spooled, last result) for at most `agents` addresses.  Memory
//  is bounded by jobs, agents and XXL_LABELS_APPS.

#define XXL_LABELS_APPS 1000            //  apps labelled at most

//  An agent's figures from its REGISTER; -1: not given
typedef struct {
    int64_t running, queued, spooled, last_code;
} xxl_agent_figures_t;

xxl_labels_t *xxl_labels_new (size_t jobs, size_t agents);
void xxl_labels_destroy (xxl_labels_t **self_p);
//  The app of job_id as last noted (NULL: not known: the caller looks it
//  up and gives it to xxl_labels_run)
const char *xxl_labels_job_app (xxl_labels_t *self, int64_t job_id);
//  Job_id may have moved to another app (0: any job, a group's app may
//  have changed): its app is looked up again at its next run's end
//  (xxl_labels_job_app gives NULL until then); its series keep the app
//  last noted meanwhile, so that a change elsewhere starts no new series
void xxl_labels_job_changed (xxl_labels_t *self, int64_t job_id);
//  A run of job_id (of app; NULL or "": unknown) ended at now (epoch
//  ms): its result (result true: handle code) or its trigger failed
void xxl_labels_run (xxl_labels_t *self, int64_t job_id, const char *app, bool result,
                     int code, int64_t now);
//  An agent's figures, as its latest REGISTER told them
void xxl_labels_agent (xxl_labels_t *self, const char *address,
                       const xxl_agent_figures_t *figures);
//  The figures of a REGISTER (its map) of address, when it gives any
//  (docs/protocol.md: optional; each absent or not an integer 0 to
//  INT32_MAX is ignored, never refused)
struct msgpack_object;
void xxl_labels_agent_register (xxl_labels_t *self, const char *address,
                                const struct msgpack_object *map);
//  A registry entry, at publication: counted for its app when connected,
//  its address's figures kept (an address no entry names is forgotten)
void xxl_labels_registry (xxl_labels_t *self, const char *app, const char *address,
                          bool connected);
//  The text of the labelled series; a new string.  The round's registry
//  counts start over.
char *xxl_labels_render (xxl_labels_t *self);
//  Text as a Prometheus label value (\\, \" and \n escaped) into out
void xxl_labels_escape (const char *text, char *out, size_t outlen);

//  One observation, in seconds
void xxl_histo_observe (xxl_histo_t *histo, double seconds);
//  Index into xxl_metrics_t.triggers of a trigger type (-1 unknown)
int xxl_metrics_trigger_index (const char *type);
//  The Prometheus text (format 0.0.4) of metrics; a new string
char *xxl_metrics_render (const xxl_metrics_t *metrics);

#endif
