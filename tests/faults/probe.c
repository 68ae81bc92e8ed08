/*  probe.c -- the fault suite's probe handlers (built as a .so by
    tests/faults/faults.am; never installed).

    Each run appends ONE line to a probe file, with ONE write() on an
    O_APPEND descriptor opened for that run, before it does anything else:

        <logId> <jobId> <shardIndex>/<shardTotal> <pid> <start-ms> <tag> <mode>

    and, when the env var XXL_PROBE_END_FILE names a file, one line there
    as it returns: <logId> <end-ms> (tests/faults/max_running.sh).

    pid is the process that ran the handler (the agent for an in-process
    run, the xxl-runner for an isolated one); start-ms the wall clock in
    epoch milliseconds; tag the env var XXL_PROBE_TAG (the suite sets it to
    the agent's address), "-" when unset; mode "in" or "iso" (whether the
    handler ran inside the agent).  A line is at most PIPE_BUF bytes, so
    lines of concurrent runs, threads or processes, never interleave.

    The probe file is the env var XXL_PROBE_FILE (the agent's environment,
    which xxl-runner inherits), or file=PATH in the param.  Without either
    the run fails, so a misconfigured scenario cannot pass by running
    nothing.

    The param is a list of words separated by spaces or commas:
        sleep=N     then sleep N ms in 20 ms steps (returns early, failed,
                    when cancelled)
        spin=N      then burn CPU for N ms (checks cancelled() between
                    slices: an in-process spin can be killed)
        fail        end failed (500) instead of 200
        fail=K      so, but only the run of shard index K (SHARDING_BROADCAST)
        file=PATH   the probe file (overrides XXL_PROBE_FILE)
        anything else is ignored (a scenario may tag its params)

    Handlers:
        probe       isolated unless the agent runs everything in-process
        probeIn     flagged XXL_HANDLER_IN_PROCESS
        probeSlow   as probe, with spin=200 unless the param says otherwise
*/

#include <xxl/handler.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    long sleep_ms;
    long spin_ms;
    int fail;
    int fail_shard;                     //  fail only this shard (-1: every run, with fail)
    char file [PATH_MAX];
} probe_param_t;

static int64_t
s_wall_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t
s_mono_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

//  Parses the param without writing to it (it is the host's)
static void
s_parse (const char *param, probe_param_t *p, long default_spin)
{
    memset (p, 0, sizeof *p);
    p->spin_ms = default_spin;
    p->fail_shard = -1;
    const char *s = param;
    while (*s) {
        while (*s == ' ' || *s == ',')
            s++;
        const char *end = s;
        while (*end && *end != ' ' && *end != ',')
            end++;
        size_t len = (size_t) (end - s);
        if (len > 6 && strncmp (s, "sleep=", 6) == 0)
            p->sleep_ms = atol (s + 6);
        else
        if (len > 5 && strncmp (s, "spin=", 5) == 0)
            p->spin_ms = atol (s + 5);
        else
        if (len == 4 && strncmp (s, "fail", 4) == 0)
            p->fail = 1;
        else
        if (len > 5 && strncmp (s, "fail=", 5) == 0) {
            p->fail = 1;
            p->fail_shard = atoi (s + 5);
        }
        else
        if (len > 5 && strncmp (s, "file=", 5) == 0 && len - 5 < sizeof p->file) {
            memcpy (p->file, s + 5, len - 5);
            p->file [len - 5] = 0;
        }
        s = end;
    }
    if (!*p->file) {
        const char *env = getenv ("XXL_PROBE_FILE");
        if (env && strlen (env) < sizeof p->file)
            strcpy (p->file, env);
    }
}

//  With XXL_PROBE_END_FILE set, the run's end: "<logId> <end-ms>\n" appended
//  there (one write) as the handler returns, whatever its outcome (a run
//  whose process dies writes none)
static int
s_end (xxl_run_t *run, int rc)
{
    const char *file = getenv ("XXL_PROBE_END_FILE");
    if (!file || !*file)
        return rc;
    char line [64];
    int len = snprintf (line, sizeof line, "%lld %lld\n", (long long) xxl_run_log_id (run),
                        (long long) s_wall_ms ());
    int fd = open (file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) {
        if (write (fd, line, (size_t) len) != len) {
            //  (the checker then finds no end: the row's end counts)
        }
        close (fd);
    }
    return rc;
}

static int
s_run (xxl_run_t *run, int in_process, long default_spin)
{
    probe_param_t p;
    s_parse (xxl_run_param (run), &p, default_spin);
    if (!*p.file)
        return xxl_run_fail (run, "probe: no XXL_PROBE_FILE and no file= in the param");

    const char *tag = getenv ("XXL_PROBE_TAG");
    char line [512];
    int len = snprintf (line, sizeof line, "%lld %lld %d/%d %ld %lld %s %s\n",
                        (long long) xxl_run_log_id (run), (long long) xxl_run_job_id (run),
                        xxl_run_shard_index (run), xxl_run_shard_total (run),
                        (long) getpid (), (long long) s_wall_ms (),
                        tag && *tag && strlen (tag) < 200? tag: "-",
                        in_process? "in": "iso");
    int fd = open (p.file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        char msg [PATH_MAX + 64];
        snprintf (msg, sizeof msg, "probe: cannot open %s: %s", p.file, strerror (errno));
        return xxl_run_fail (run, msg);
    }
    ssize_t rc = write (fd, line, (size_t) len);
    close (fd);
    if (rc != len)
        return xxl_run_fail (run, "probe: short write to the probe file");
    xxl_run_log (run, "probe: %.*s", len - 1, line);

    if (p.spin_ms > 0) {
        int64_t until = s_mono_ms () + p.spin_ms;
        volatile unsigned long counter = 0;
        while (s_mono_ms () < until) {
            for (int i = 0; i < 100000; i++)
                counter++;
            if (xxl_run_cancelled (run))
                return s_end (run, xxl_run_fail (run, "probe: cancelled while spinning"));
        }
    }
    if (p.sleep_ms > 0) {
        int64_t until = s_mono_ms () + p.sleep_ms;
        while (1) {
            if (xxl_run_cancelled (run))
                return s_end (run, xxl_run_fail (run, "probe: cancelled while sleeping"));
            int64_t left = until - s_mono_ms ();
            if (left <= 0)
                break;
            if (left > 20)
                left = 20;
            struct timespec step = { 0, (long) left * 1000000L };
            nanosleep (&step, NULL);
        }
    }
    if (p.fail_shard >= 0 && p.fail_shard != xxl_run_shard_index (run))
        p.fail = 0;
    return s_end (run, p.fail? xxl_run_fail (run, "probe: failed on request")
                             : xxl_run_success (run, "probe: ok"));
}

//  An isolated handler runs in xxl-runner; an in-process one in the agent
//  (getpid () tells which: the flag alone does not, --in-process runs all)
static int
s_probe (xxl_run_t *run)
{
    //  xxl-runner's argv[0] ends in xxl-runner; the agent's in xxl-agent
    char exe [PATH_MAX];
    ssize_t n = readlink ("/proc/self/exe", exe, sizeof exe - 1);
    int in_process = 1;
    if (n > 0) {
        exe [n] = 0;
        in_process = strstr (exe, "xxl-runner") == NULL;
    }
    return s_run (run, in_process, 0);
}

static int
s_probe_in (xxl_run_t *run)
{
    return s_run (run, 1, 0);
}

static int
s_probe_slow (xxl_run_t *run)
{
    char exe [PATH_MAX];
    ssize_t n = readlink ("/proc/self/exe", exe, sizeof exe - 1);
    int in_process = 1;
    if (n > 0) {
        exe [n] = 0;
        in_process = strstr (exe, "xxl-runner") == NULL;
    }
    return s_run (run, in_process, 200);
}

static const xxl_handler_t s_handlers [] = {
    { "probe", s_probe, 0 },
    { "probeIn", s_probe_in, XXL_HANDLER_IN_PROCESS },
    { "probeSlow", s_probe_slow, 0 },
    { NULL, NULL, 0 }
};

XXL_HANDLER_PLUGIN ("probe", "1.0", NULL, NULL, s_handlers)
