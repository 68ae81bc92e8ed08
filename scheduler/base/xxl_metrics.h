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
#define XXL_TRIGGER_TYPES 6             //  MANUAL CRON RETRY PARENT API MISFIRE

typedef struct {
    //  Counters
    uint64_t runs_ok, runs_fail, runs_timeout, runs_other;      //  by handleCode
    uint64_t triggers [XXL_TRIGGER_TYPES];
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
//  Engine: a copy of metrics becomes the published one
void xxl_metrics_publish (xxl_metrics_box_t *self, const xxl_metrics_t *metrics);
//  Any thread: the published copy into out; false before the first one
bool xxl_metrics_read (xxl_metrics_box_t *self, xxl_metrics_t *out);

//  One observation, in seconds
void xxl_histo_observe (xxl_histo_t *histo, double seconds);
//  Index into xxl_metrics_t.triggers of a trigger type (-1 unknown)
int xxl_metrics_trigger_index (const char *type);
//  The Prometheus text (format 0.0.4) of metrics; a new string
char *xxl_metrics_render (const xxl_metrics_t *metrics);

#endif
