/*  xxl_floor.c -- the store's share of a run (`make bench`, the store
    floor beside the bare loop).

      xxl_floor URL SECONDS [BATCH [JOBS [fires]]]

    Opens the store URL as the scheduler does (xxl_store_new: the schema,
    its indexes, the WAL and its checkpointer thread on SQLite), then for
    SECONDS writes what the engine writes for each no-op run, and nothing
    else: each turn, in one transaction, BATCH new log rows (API trigger,
    routed, the trigger message of a real row: 264 characters) through
    xxl_store_log_add, and the results of the previous turn's rows through
    xxl_store_log_handle_done_many, then the commit.  Ids come from
    xxl_store_log_next_id in runs, as the engine takes them.  JOBS jobs
    (default 64: group A's e2e) share the rows; BATCH defaults to 1,000.
    With `fires` the rows are a cron's planned fires instead (group B's):
    CRON, each with a planned time, one per job and second in job order
    (round k of the jobs is second k), as the planner writes them (its
    own next fires: planned_new).

    Prints one JSON object: the runs finished, their rate, and the CPU of
    the process per run (its checkpointer included).  That CPU is what any
    scheduler on this store spends per run before its own work: the e2e's
    scheduler CPU per run, less it, is the engine's.  Exits 1 when a write
    fails, 2 on bad usage.
*/

#include "xxl_store.h"
#include "bench_util.h"

#include <czmq.h>
#include <inttypes.h>
#include <sys/resource.h>
#include <time.h>

static double
s_cpu_s (void)
{
    struct rusage usage;
    getrusage (RUSAGE_SELF, &usage);
    return (double) usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6
         + (double) usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
}

static double
s_wall_s (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
s_fail (xxl_store_t **store, const char *what)
{
    fprintf (stderr, "xxl_floor: %s failed\n", what);
    xxl_store_destroy (store);
    exit (1);
}

int
main (int argc, char **argv)
{
    if (argc < 3 || argc > 6 || (argc == 6 && strcmp (argv [5], "fires"))) {
        fprintf (stderr, "usage: xxl_floor URL SECONDS [BATCH [JOBS [fires]]]\n");
        return 2;
    }
    double seconds = atof (argv [2]);
    long batch = argc > 3? atol (argv [3]): 1000;
    long jobs = argc > 4? atol (argv [4]): 64;
    bool fires = argc > 5;
    if (seconds <= 0 || batch < 1 || batch > 100000 || jobs < 1) {
        fprintf (stderr, "xxl_floor: bad SECONDS, BATCH or JOBS\n");
        return 2;
    }
    zsys_set_logstream (NULL);          //  (no line per migration step)
    char err [512];
    xxl_store_t *store = xxl_store_new (argv [1], err, sizeof err);
    if (!store) {
        fprintf (stderr, "xxl_floor: %s\n", err);
        return 2;
    }
    //  A row as group A's e2e writes it (one agent, FIRST)
    const char *address = "bench-a";
    const char *message =
        "Trigger type: API trigger\nAdmin address: vm\nExecutor registry type: automatic\n"
        "Executor addresses: [bench-a]\nRoute strategy: FIRST\n"
        "Block strategy: SERIAL_EXECUTION\nTimeout: 0\nFail retry count: 0\n\n"
        ">>>>>>>>>>> Trigger <<<<<<<<<<<\naddress: bench-a\ncode: 200\nmsg: null\n";
    int64_t *last = (int64_t *) calloc ((size_t) batch, sizeof (int64_t));
    xxl_store_done_t *done = (xxl_store_done_t *) calloc ((size_t) batch, sizeof *done);
    int *answers = (int *) calloc ((size_t) batch, sizeof (int));
    assert (last && done && answers);
    long pending = 0, finished = 0, turns = 0, made = 0;
    int64_t next_id = 0, id_limit = 0;
    double cpu_start = s_cpu_s (), start = s_wall_s (), end = start + seconds;
    while (true) {
        bool adding = s_wall_s () < end;
        if (!adding && pending == 0)
            break;
        if (xxl_store_begin (store))
            s_fail (&store, "begin");
        int64_t now = bench_wall_us () / 1000;
        for (long i = 0; i < pending; i++)
            done [i] = (xxl_store_done_t) { .log_id = last [i], .address = address,
                                            .handle_time = now, .code = 200 };
        if (pending && xxl_store_log_handle_done_many (store, done, (size_t) pending, answers))
            s_fail (&store, "log_handle_done_many");
        finished += pending;
        pending = 0;
        for (long i = 0; adding && i < batch; i++) {
            if (next_id <= 0 || next_id >= id_limit) {
                next_id = xxl_store_log_next_id (store);
                id_limit = next_id + XXL_STORE_LOG_ID_RUN;
            }
            xxl_log_t log = {
                .id = next_id > 0? next_id++: 0, .job_group = 1,
                .job_id = 1 + (fires? made: i) % jobs,
                .executor_address = (char *) address, .executor_handler = "noopJobHandler",
                .executor_param = "", .trigger_time = now, .trigger_msg = (char *) message,
                .trigger_type = fires? "CRON": "API",
                .schedule_time = fires? 1000000000000LL + made / jobs * 1000: 0,
                .planned_new = fires
            };
            made++;
            if (xxl_store_log_add (store, &log))
                s_fail (&store, "log_add");
            last [pending++] = log.id;
        }
        if (xxl_store_commit (store))
            s_fail (&store, "commit");
        turns++;
    }
    double wall = s_wall_s () - start, cpu = s_cpu_s () - cpu_start;
    printf ("{\"runs\": %ld, \"batch\": %ld, \"jobs\": %ld, \"turns\": %ld, \"seconds\": %.3f,"
            " \"runs_per_s\": %.0f, \"cpu_us_per_run\": %.2f}\n",
            finished, batch, jobs, turns, wall, wall > 0? finished / wall: 0,
            finished? cpu * 1e6 / (double) finished: 0);
    free (last);
    free (done);
    free (answers);
    xxl_store_destroy (&store);
    return 0;
}
