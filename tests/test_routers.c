/*  test_routers.c -- unit tests of the router registry and the shipped routers.

    Loads the built router plugins from $XXL_TEST_ROUTERS through
    xxl_routers_t with a fake host (injected clock and random numbers,
    captured log lines, scripted probe answers) and checks each route's
    sequence as XXL-JOB defines it: FIRST, LAST, RANDOM, ROUND (random
    start, +1, restart past 1,000,000, 24 h reset), LFU and LRU (sequences,
    pruning, 24 h reset), CONSISTENT_HASH against the table XXL-JOB's own
    algorithm produced ($srcdir/tests/routers/consistent_hash.txt, from
    tests/routers/ConsistentHash.java), FAILOVER and BUSYOVER (probe order,
    kinds, timeouts, triggerMsg lines), the error cases, concurrent calls,
    and the loader: a user's plugin from $XXL_TEST_ROUTER_PLUGINS (default
    $XXL_TEST_PLUGINS, else tests/plugins/.libs) is usable by name, bad
    plugins are refused with a clear log line.  The last output line is
    "N passed, M failed".
*/

#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "xxl_routers.h"
#include "xxl_test.h"

//  --------------------------------------------------------------------------
//  Fake host

static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
static int64_t s_now = 1700000000000LL;
static uint32_t s_rand [64];            //  queued random answers
static size_t s_rand_count, s_rand_pos;
static uint32_t s_rand_default;         //  when the queue is empty
static uint32_t s_rand_last_bound;
static int s_rand_calls;
static char s_log [32768];

typedef struct {
    const char *address;
    int code;
    const char *msg;
} probe_answer_t;

static const probe_answer_t *s_answers;
static char s_probed [1024];            //  "address/kind/job/timeout;" per probe
static void *s_probe_ctx_seen;

static int64_t
s_fake_now (void)
{
    pthread_mutex_lock (&s_lock);
    int64_t now = s_now;
    pthread_mutex_unlock (&s_lock);
    return now;
}

static uint32_t
s_fake_random (uint32_t bound)
{
    pthread_mutex_lock (&s_lock);
    uint32_t value = s_rand_pos < s_rand_count? s_rand [s_rand_pos++]: s_rand_default;
    s_rand_last_bound = bound;
    s_rand_calls++;
    pthread_mutex_unlock (&s_lock);
    return bound? value % bound: 0;
}

static void
s_fake_vlog (int level, const char *format, va_list args)
{
    (void) level;
    pthread_mutex_lock (&s_lock);
    size_t used = strlen (s_log);
    if (used + 2 < sizeof s_log) {
        vsnprintf (s_log + used, sizeof s_log - used - 1, format, args);
        strcat (s_log, "\n");
    }
    pthread_mutex_unlock (&s_lock);
}

static int
s_fake_probe (void *host_ctx, const char *address, int kind, int64_t job_id,
              int timeout_ms, char *msg, size_t msglen)
{
    s_probe_ctx_seen = host_ctx;
    size_t used = strlen (s_probed);
    snprintf (s_probed + used, sizeof s_probed - used, "%s/%d/%lld/%d;",
              address, kind, (long long) job_id, timeout_ms);
    for (const probe_answer_t *a = s_answers; a && a->address; a++)
        if (strcmp (a->address, address) == 0) {
            snprintf (msg, msglen, "%s", a->msg);
            return a->code;
        }
    if (msglen)
        msg [0] = 0;
    return -1;
}

static const xxl_router_host_t s_host = {
    XXL_ROUTER_ABI_VERSION, sizeof (xxl_router_host_t),
    s_fake_now, s_fake_random, s_fake_vlog, s_fake_probe
};

//  Queues random answers
static void
s_rand_set (size_t count, const uint32_t *values)
{
    for (size_t i = 0; i < count && i < 64; i++)
        s_rand [i] = values [i];
    s_rand_count = count;
    s_rand_pos = 0;
    s_rand_calls = 0;
}

static int
s_route (xxl_routers_t *routers, const char *name, int64_t job_id,
         const char *const *addresses, size_t count)
{
    char msg [512];
    return xxl_routers_route (routers, name, job_id, 1, addresses, count, NULL,
                              msg, sizeof msg);
}

//  --------------------------------------------------------------------------

static void
test_loader (xxl_routers_t *routers)
{
    char *names = xxl_routers_names (routers);
    XXL_CHECK (names != NULL);
    if (names)
        XXL_CHECK (strcmp (names, "BUSYOVER, CONSISTENT_HASH, FAILOVER, FIRST, LAST, "
                              "LEAST_FREQUENTLY_USED, LEAST_RECENTLY_USED, RANDOM, ROUND, "
                              "SHARDING_BROADCAST") == 0);
    if (names && xxl_test_failed)
        printf ("names: %s\n", names);
    free (names);
    XXL_CHECK_INT (xxl_routers_size (routers), 10);
    XXL_CHECK (xxl_routers_find (routers, "ROUND") != NULL);
    XXL_CHECK (xxl_routers_find (routers, "round") == NULL);
    XXL_CHECK (xxl_routers_find (routers, "") == NULL);
    XXL_CHECK (xxl_routers_find (routers, NULL) == NULL);
    XXL_CHECK_INT (xxl_routers_is_broadcast (routers, "SHARDING_BROADCAST"), 1);
    XXL_CHECK_INT (xxl_routers_is_broadcast (routers, "ROUND"), 0);
    XXL_CHECK_INT (xxl_routers_is_broadcast (routers, "NOPE"), 0);
    const xxl_router_t *router = xxl_routers_find (routers, "FAILOVER");
    XXL_CHECK (router && strcmp (router->name, "FAILOVER") == 0 && router->fn);

    //  A folder that does not exist, a host of another ABI
    s_log [0] = 0;
    XXL_CHECK (xxl_routers_new ("/nonexistent/routers", &s_host) == NULL);
    XXL_CHECK (strstr (s_log, "cannot read routers folder /nonexistent/routers") != NULL);
    xxl_router_host_t other = s_host;
    other.abi_version = 2;
    XXL_CHECK (xxl_routers_new (NULL, &other) == NULL);
    XXL_CHECK (xxl_routers_new (NULL, NULL) == NULL);
    xxl_routers_t *empty = xxl_routers_new (NULL, &s_host);
    XXL_CHECK (empty != NULL);
    names = xxl_routers_names (empty);
    XXL_CHECK (names && strcmp (names, "") == 0);
    free (names);
    xxl_routers_destroy (&empty);
    XXL_CHECK (empty == NULL);
    xxl_routers_destroy (&empty);       //  no-op
}

static void
test_errors (xxl_routers_t *routers)
{
    const char *addrs [] = { "a", "b" };
    char msg [256];
    XXL_CHECK_INT (xxl_routers_route (routers, "NOPE", 1, 1, addrs, 2, NULL, msg, sizeof msg), -1);
    XXL_CHECK (strstr (msg, "unknown route 'NOPE'") != NULL);
    XXL_CHECK_INT (xxl_routers_route (routers, NULL, 1, 1, addrs, 2, NULL, msg, sizeof msg), -1);
    XXL_CHECK (strstr (msg, "unknown route") != NULL);
    const char *names [] = { "FIRST", "LAST", "ROUND", "RANDOM", "CONSISTENT_HASH",
                             "LEAST_FREQUENTLY_USED", "LEAST_RECENTLY_USED",
                             "FAILOVER", "BUSYOVER" };
    for (size_t i = 0; i < sizeof names / sizeof names [0]; i++) {
        strcpy (msg, "junk");
        XXL_CHECK_INT (xxl_routers_route (routers, names [i], 1, 1, addrs, 0, NULL, msg, sizeof msg), -1);
        XXL_CHECK (strcmp (msg, "no registered address") == 0);
        XXL_CHECK_INT (xxl_routers_route (routers, names [i], 1, 1, NULL, 2, NULL, msg, sizeof msg), -1);
    }
    const char *holes [] = { "a", NULL };
    XXL_CHECK_INT (xxl_routers_route (routers, "FIRST", 1, 1, holes, 2, NULL, msg, sizeof msg), -1);
    XXL_CHECK_INT (xxl_routers_route (routers, "SHARDING_BROADCAST", 1, 1, addrs, 2, NULL, msg, sizeof msg), -1);
    XXL_CHECK (strstr (msg, "broadcasts") != NULL);
    //  No message buffer at all is fine
    XXL_CHECK_INT (xxl_routers_route (routers, "NOPE", 1, 1, addrs, 2, NULL, NULL, 0), -1);
    XXL_CHECK_INT (xxl_routers_route (routers, "LAST", 1, 1, addrs, 2, NULL, NULL, 0), 1);
    //  A tiny buffer is truncated, never overrun
    char tiny [8];
    XXL_CHECK_INT (xxl_routers_route (routers, "NOPE_NOPE_NOPE", 1, 1, addrs, 2, NULL, tiny, sizeof tiny), -1);
    XXL_CHECK (strlen (tiny) == 7);
}

static void
test_first_last_random (xxl_routers_t *routers)
{
    const char *addrs [] = { "a", "b", "c" };
    XXL_CHECK_INT (s_route (routers, "FIRST", 1, addrs, 3), 0);
    XXL_CHECK_INT (s_route (routers, "FIRST", 1, addrs, 1), 0);
    XXL_CHECK_INT (s_route (routers, "LAST", 1, addrs, 3), 2);
    XXL_CHECK_INT (s_route (routers, "LAST", 1, addrs, 1), 0);
    uint32_t values [] = { 2, 0, 1, 7 };
    s_rand_set (4, values);
    XXL_CHECK_INT (s_route (routers, "RANDOM", 1, addrs, 3), 2);
    XXL_CHECK_INT (s_rand_last_bound, 3);
    XXL_CHECK_INT (s_route (routers, "RANDOM", 1, addrs, 3), 0);
    XXL_CHECK_INT (s_route (routers, "RANDOM", 1, addrs, 3), 1);
    XXL_CHECK_INT (s_route (routers, "RANDOM", 1, addrs, 2), 1);     //  7 % 2
    XXL_CHECK_INT (s_rand_last_bound, 2);
}

static void
test_round (xxl_routers_t *routers)
{
    const char *addrs [] = { "a", "b", "c" };
    s_now = 1700000000000LL;
    uint32_t values [] = { 98, 5 };
    s_rand_set (2, values);
    //  Job 100 starts at 98: 98%3=2, then 0, 1, 2, 0
    int want [] = { 2, 0, 1, 2, 0 };
    for (int i = 0; i < 5; i++)
        XXL_CHECK_INT (s_route (routers, "ROUND", 100, addrs, 3), want [i]);
    XXL_CHECK_INT (s_rand_calls, 1);
    XXL_CHECK_INT (s_rand_last_bound, 100);
    //  Job 101 has its own counter, from 5
    XXL_CHECK_INT (s_route (routers, "ROUND", 101, addrs, 3), 2);
    XXL_CHECK_INT (s_route (routers, "ROUND", 101, addrs, 3), 0);
    //  Job 100 goes on (counter 103) with a shorter list: 103 % 2
    XXL_CHECK_INT (s_route (routers, "ROUND", 100, addrs, 2), 1);
    XXL_CHECK_INT (s_rand_calls, 2);

    //  24 h: not reset at exactly +24 h, reset just after
    s_rand_default = 50;
    s_now += XXL_ROUTER_CACHE_MS;
    XXL_CHECK_INT (s_route (routers, "ROUND", 100, addrs, 3), 104 % 3);
    XXL_CHECK_INT (s_rand_calls, 2);
    s_now += 1;
    XXL_CHECK_INT (s_route (routers, "ROUND", 100, addrs, 3), 50 % 3);
    XXL_CHECK_INT (s_rand_calls, 3);
    XXL_CHECK_INT (s_route (routers, "ROUND", 101, addrs, 3), 50 % 3);
    XXL_CHECK_INT (s_rand_calls, 4);

    //  Restart past 1,000,000: job 102 starts at 99, counts to 1,000,001,
    //  then draws a new start
    uint32_t start [] = { 99, 7 };
    s_rand_set (2, start);
    XXL_CHECK_INT (s_route (routers, "ROUND", 102, addrs, 3), 0);
    int last = -1;
    for (int counter = 100; counter <= 1000001; counter++)
        last = s_route (routers, "ROUND", 102, addrs, 3);
    XXL_CHECK_INT (last, 1000001 % 3);
    XXL_CHECK_INT (s_rand_calls, 1);
    XXL_CHECK_INT (s_route (routers, "ROUND", 102, addrs, 3), 7 % 3);
    XXL_CHECK_INT (s_rand_calls, 2);

    //  Many jobs (the job table grows)
    s_rand_default = 0;
    int ok = 1;
    for (int job = 1000; job < 3000; job++)
        if (s_route (routers, "ROUND", job, addrs, 3) != 0)
            ok = 0;
    for (int job = 1000; job < 3000; job++)
        if (s_route (routers, "ROUND", job, addrs, 3) != 1)
            ok = 0;
    XXL_CHECK (ok);
}

static void
test_lfu (xxl_routers_t *routers)
{
    const char *addrs [] = { "a", "b", "c" };
    s_now += 2 * XXL_ROUTER_CACHE_MS;
    //  Initial counts a=2, b=0, c=1 (random below 3, in list order)
    uint32_t values [] = { 2, 0, 1 };
    s_rand_set (3, values);
    //  b(0->1), b(1->2) [b before c on a tie], c(1->2), a, b, c, a, b, c
    int want [] = { 1, 1, 2, 0, 1, 2, 0, 1, 2 };
    for (int i = 0; i < 9; i++)
        XXL_CHECK_INT (s_route (routers, "LEAST_FREQUENTLY_USED", 7, addrs, 3), want [i]);
    XXL_CHECK_INT (s_rand_calls, 3);
    XXL_CHECK_INT (s_rand_last_bound, 3);
    //  Now a=4, b=4, c=4.  b leaves, d joins with random below 3 = 0
    const char *moved [] = { "a", "c", "d" };
    uint32_t d_start [] = { 0 };
    s_rand_set (1, d_start);
    XXL_CHECK_INT (s_route (routers, "LEAST_FREQUENTLY_USED", 7, moved, 3), 2);    //  d
    XXL_CHECK_INT (s_rand_calls, 1);
    //  d stays lowest until it catches up (1..4), then a, c, d
    for (int i = 0; i < 3; i++)
        XXL_CHECK_INT (s_route (routers, "LEAST_FREQUENTLY_USED", 7, moved, 3), 2);
    XXL_CHECK_INT (s_route (routers, "LEAST_FREQUENTLY_USED", 7, moved, 3), 0);
    XXL_CHECK_INT (s_route (routers, "LEAST_FREQUENTLY_USED", 7, moved, 3), 1);
    XXL_CHECK_INT (s_route (routers, "LEAST_FREQUENTLY_USED", 7, moved, 3), 2);
    //  b comes back: pruned before, so it is new again (random = 1)
    const char *back [] = { "a", "b", "c", "d" };
    uint32_t b_start [] = { 1 };
    s_rand_set (1, b_start);
    XXL_CHECK_INT (s_route (routers, "LEAST_FREQUENTLY_USED", 7, back, 4), 1);
    XXL_CHECK_INT (s_rand_calls, 1);
    XXL_CHECK_INT (s_rand_last_bound, 4);
    //  Another job is independent: counts 1, 1, 0 -> c
    uint32_t other [] = { 1, 1, 0 };
    s_rand_set (3, other);
    XXL_CHECK_INT (s_route (routers, "LEAST_FREQUENTLY_USED", 8, addrs, 3), 2);
    //  24 h later everything is new: counts 0, 2, 2 -> a
    s_now += XXL_ROUTER_CACHE_MS + 1;
    uint32_t fresh [] = { 0, 2, 2 };
    s_rand_set (3, fresh);
    XXL_CHECK_INT (s_route (routers, "LEAST_FREQUENTLY_USED", 7, addrs, 3), 0);
    XXL_CHECK_INT (s_rand_calls, 3);
    //  A list in another order is still matched by address
    const char *shuffled [] = { "c", "b", "a" };
    s_rand_set (0, NULL);
    XXL_CHECK_INT (s_route (routers, "LEAST_FREQUENTLY_USED", 7, shuffled, 3), 2);  //  a=1,b=2,c=2
    XXL_CHECK_INT (s_rand_calls, 0);
}

static void
test_lru (xxl_routers_t *routers)
{
    const char *addrs [] = { "a", "b", "c" };
    s_now += 2 * XXL_ROUTER_CACHE_MS;
    int want [] = { 0, 1, 2, 0 };
    for (int i = 0; i < 4; i++)
        XXL_CHECK_INT (s_route (routers, "LEAST_RECENTLY_USED", 9, addrs, 3), want [i]);
    //  Order is now b, c, a.  b leaves, d joins (as most recent): c, a, d
    const char *moved [] = { "a", "c", "d" };
    XXL_CHECK_INT (s_route (routers, "LEAST_RECENTLY_USED", 9, moved, 3), 1);
    XXL_CHECK_INT (s_route (routers, "LEAST_RECENTLY_USED", 9, moved, 3), 0);
    XXL_CHECK_INT (s_route (routers, "LEAST_RECENTLY_USED", 9, moved, 3), 2);
    XXL_CHECK_INT (s_route (routers, "LEAST_RECENTLY_USED", 9, moved, 3), 1);
    //  Another job starts fresh
    XXL_CHECK_INT (s_route (routers, "LEAST_RECENTLY_USED", 10, addrs, 3), 0);
    //  A single address
    XXL_CHECK_INT (s_route (routers, "LEAST_RECENTLY_USED", 9, addrs, 1), 0);
    XXL_CHECK_INT (s_route (routers, "LEAST_RECENTLY_USED", 9, addrs, 1), 0);
    //  Back to a, b, c: a is there, b and c join: a, b, c
    XXL_CHECK_INT (s_route (routers, "LEAST_RECENTLY_USED", 9, addrs, 3), 0);
    XXL_CHECK_INT (s_route (routers, "LEAST_RECENTLY_USED", 9, addrs, 3), 1);
    //  24 h reset: starts again from the first address
    s_now += XXL_ROUTER_CACHE_MS + 1;
    XXL_CHECK_INT (s_route (routers, "LEAST_RECENTLY_USED", 9, addrs, 3), 0);
    XXL_CHECK_INT (s_route (routers, "LEAST_RECENTLY_USED", 9, addrs, 3), 1);
}

static void
test_consistent_hash (xxl_routers_t *routers)
{
    const char *srcdir = getenv ("srcdir");
    if (!srcdir)
        srcdir = getenv ("XXL_SRC");
    char path [1024];
    snprintf (path, sizeof path, "%s/tests/routers/consistent_hash.txt", srcdir? srcdir: ".");
    for (int pass = 0; pass < 2; pass++) {      //  second pass hits cached rings
        FILE *file = fopen (path, "r");
        XXL_CHECK (file != NULL);
        if (!file) {
            printf ("cannot open %s (set srcdir)\n", path);
            return;
        }
        char line [4096], list [4096] = "";
        char *addrs [64];
        size_t count = 0;
        int checked = 0, wrong = 0;
        while (fgets (line, sizeof line, file)) {
            line [strcspn (line, "\r\n")] = 0;
            if (line [0] == 'L' && line [1] == ' ') {
                snprintf (list, sizeof list, "%s", line + 2);
                count = 0;
                for (char *tok = strtok (list, " "); tok && count < 64; tok = strtok (NULL, " "))
                    addrs [count++] = tok;
            }
            else
            if (line [0] == 'J' && line [1] == ' ') {
                long long job;
                char want [1024];
                if (sscanf (line + 2, "%lld %1023s", &job, want) != 2)
                    continue;
                int got = s_route (routers, "CONSISTENT_HASH", job,
                                   (const char *const *) addrs, count);
                checked++;
                if (got < 0 || strcmp (addrs [got], want) != 0) {
                    wrong++;
                    printf ("CONSISTENT_HASH job %lld: got %s, XXL-JOB picks %s\n",
                            job, got < 0? "(none)": addrs [got], want);
                }
            }
        }
        fclose (file);
        XXL_CHECK (checked >= 150);
        XXL_CHECK_INT (wrong, 0);
    }
    //  More lists than cache slots, alternating, stay consistent
    const char *l1 [] = { "x1", "x2", "x3" };
    int first = s_route (routers, "CONSISTENT_HASH", 5, l1, 3);
    int stable = 1;
    for (int round = 0; round < 3; round++)
        for (int n = 1; n <= 12; n++) {
            char a [16], b [16];
            snprintf (a, sizeof a, "y%d", n);
            snprintf (b, sizeof b, "z%d", n);
            const char *l2 [] = { a, b };
            if (s_route (routers, "CONSISTENT_HASH", 5, l2, 2) < 0)
                stable = 0;
            if (s_route (routers, "CONSISTENT_HASH", 5, l1, 3) != first)
                stable = 0;
        }
    XXL_CHECK (stable);
}

static void
test_failover_busyover (xxl_routers_t *routers)
{
    const char *addrs [] = { "tcp://a:1", "tcp://b:1", "tcp://c:1", "tcp://d:1" };
    static const probe_answer_t answers [] = {
        { "tcp://b:1", 500, "busy" },
        { "tcp://c:1", 200, "ok" },
        { "tcp://d:1", 200, "ok" },
        { NULL, 0, NULL }
    };
    s_answers = answers;
    char msg [1024];
    int ctx;
    s_probed [0] = 0;
    XXL_CHECK_INT (xxl_routers_route (routers, "FAILOVER", 42, 7, addrs, 4, &ctx, msg, sizeof msg), 2);
    XXL_CHECK (s_probe_ctx_seen == &ctx);
    XXL_CHECK (strcmp (s_probed, "tcp://a:1/1/42/1000;tcp://b:1/1/42/1000;tcp://c:1/1/42/1000;") == 0);
    XXL_CHECK (strcmp (msg,
        "beat check: address=tcp://a:1, code=-1, msg=no answer within 1000 ms\n"
        "beat check: address=tcp://b:1, code=500, msg=busy\n"
        "beat check: address=tcp://c:1, code=200, msg=ok") == 0);
    if (xxl_test_failed)
        printf ("probed: %s\nmsg: %s\n", s_probed, msg);

    //  BUSYOVER sends IDLE_BEAT with the configured timeout
    xxl_routers_set_probe_timeout (routers, 250);
    s_probed [0] = 0;
    XXL_CHECK_INT (xxl_routers_route (routers, "BUSYOVER", 43, 8, addrs + 1, 3, NULL, msg, sizeof msg), 1);
    XXL_CHECK (strcmp (s_probed, "tcp://b:1/2/43/250;tcp://c:1/2/43/250;") == 0);
    XXL_CHECK (strcmp (msg,
        "idle beat check: address=tcp://b:1, code=500, msg=busy\n"
        "idle beat check: address=tcp://c:1, code=200, msg=ok") == 0);
    xxl_routers_set_probe_timeout (routers, XXL_ROUTERS_PROBE_TIMEOUT_MS);

    //  The first answers: one probe only
    s_probed [0] = 0;
    XXL_CHECK_INT (xxl_routers_route (routers, "FAILOVER", 42, 9, addrs + 2, 2, NULL, msg, sizeof msg), 0);
    XXL_CHECK (strcmp (s_probed, "tcp://c:1/1/42/1000;") == 0);

    //  None answers 200: -1, with every probe in the message
    XXL_CHECK_INT (xxl_routers_route (routers, "FAILOVER", 42, 10, addrs, 2, NULL, msg, sizeof msg), -1);
    XXL_CHECK (strstr (msg, "address=tcp://a:1, code=-1") && strstr (msg, "address=tcp://b:1, code=500"));
    XXL_CHECK_INT (xxl_routers_route (routers, "BUSYOVER", 42, 10, addrs, 2, NULL, msg, sizeof msg), -1);
    XXL_CHECK (strstr (msg, "idle beat check: address=tcp://b:1, code=500, msg=busy") != NULL);

    //  A small message buffer truncates the lines, routing still works
    char small [40];
    XXL_CHECK_INT (xxl_routers_route (routers, "FAILOVER", 42, 11, addrs, 4, NULL, small, sizeof small), 2);
    XXL_CHECK (strlen (small) < sizeof small);
    s_answers = NULL;
}

static void
test_host_without_probe (const char *dir)
{
    xxl_router_host_t host = s_host;
    host.size = offsetof (xxl_router_host_t, probe);
    xxl_routers_t *routers = xxl_routers_new (dir, &host);
    XXL_CHECK (routers != NULL);
    if (!routers)
        return;
    const char *addrs [] = { "a" };
    char msg [256];
    XXL_CHECK_INT (xxl_routers_route (routers, "FAILOVER", 1, 1, addrs, 1, NULL, msg, sizeof msg), -1);
    XXL_CHECK (strstr (msg, "cannot probe") != NULL);
    XXL_CHECK_INT (xxl_routers_route (routers, "ROUND", 1, 1, addrs, 1, NULL, msg, sizeof msg), 0);
    xxl_routers_destroy (&routers);
}

static int
s_exists (const char *dir, const char *name)
{
    char path [1024];
    snprintf (path, sizeof path, "%s/%s", dir, name);
    return access (path, R_OK) == 0;
}

static void
test_plugins (xxl_routers_t *routers, const char *dir)
{
    s_log [0] = 0;
    int loaded = xxl_routers_load (routers, dir);
    XXL_CHECK (loaded >= 1);
    printf ("-- log of loading %s:\n%s--\n", dir, s_log);
    //  The user's plugin is usable by name
    XXL_CHECK (xxl_routers_find (routers, "WEIGHTED") != NULL);
    XXL_CHECK (xxl_routers_find (routers, "TAG_FIRST") != NULL);
    XXL_CHECK (strstr (s_log, "custom_router: WEIGHTED ready") != NULL);
    char *names = xxl_routers_names (routers);
    XXL_CHECK (names && strstr (names, ", WEIGHTED") && strstr (names, "TAG_FIRST, "));
    free (names);
    const char *addrs [] = { "tcp://a#w=5", "tcp://b", "tcp://c" };
    int want [] = { 0, 0, 1, 0, 2, 0, 0, 0, 0, 1 };
    for (int i = 0; i < 10; i++)
        XXL_CHECK_INT (s_route (routers, "WEIGHTED", 3, addrs, 3), want [i]);
    const char *tagged [] = { "tcp://a", "tcp://b-tag", "tcp://c-tag" };
    XXL_CHECK_INT (s_route (routers, "TAG_FIRST", 3, tagged, 3), 1);
    char msg [128];
    XXL_CHECK_INT (xxl_routers_route (routers, "TAG_FIRST", 3, 1, addrs, 3, NULL, msg, sizeof msg), -1);
    XXL_CHECK (strcmp (msg, "TAG_FIRST: no address carries a tag") == 0);

    //  The wrong ABI version is refused, with a clear line
    XXL_CHECK (s_exists (dir, "bad_router_abi.so"));
    XXL_CHECK (strstr (s_log, "bad_router_abi.so refused: wrong ABI version 99") != NULL);
    XXL_CHECK (xxl_routers_find (routers, "BAD_ROUTER") == NULL);
    char path [1024];
    snprintf (path, sizeof path, "%s/bad_router_abi.so", dir);
    XXL_CHECK_INT (xxl_routers_load_file (routers, path), -1);
    //  The other variants, where built
    if (s_exists (dir, "bad_router_size.so"))
        XXL_CHECK (strstr (s_log, "bad_router_size.so refused: descriptor size 16 too small") != NULL);
    if (s_exists (dir, "bad_router_init.so"))
        XXL_CHECK (strstr (s_log, "init failed: bad_router_init refuses to start") != NULL);
    if (s_exists (dir, "bad_router_dup.so")) {
        XXL_CHECK (strstr (s_log, "duplicate route name FIRST") != NULL);
        XXL_CHECK (strstr (s_log, "bad_router_dup.so (bad_router) refused: no usable route") != NULL);
    }
    if (s_exists (dir, "bad_router_nosym.so"))
        XXL_CHECK (strstr (s_log, "bad_router_nosym.so refused: missing symbol xxl_router_plugin") != NULL);
    //  The shipped FIRST still answers, and loading again duplicates nothing
    const char *two [] = { "a", "b" };
    XXL_CHECK_INT (s_route (routers, "FIRST", 1, two, 2), 0);
    snprintf (path, sizeof path, "%s/custom_router.so", dir);
    s_log [0] = 0;
    XXL_CHECK_INT (xxl_routers_load_file (routers, path), -1);
    XXL_CHECK (strstr (s_log, "duplicate route name WEIGHTED") != NULL);
    XXL_CHECK_INT (xxl_routers_load_file (routers, "/nonexistent/x.so"), -1);
    XXL_CHECK (strstr (s_log, "/nonexistent/x.so refused: cannot load") != NULL);
}

//  --------------------------------------------------------------------------
//  Concurrency: several threads route the same jobs at once

typedef struct {
    xxl_routers_t *routers;
    const char *name;
    int hits [4];
    int bad;
} worker_t;

#define S_THREADS   4
#define S_CALLS     5000

static void *
s_worker (void *arg)
{
    worker_t *worker = (worker_t *) arg;
    const char *addrs [] = { "a", "b", "c", "d" };
    const char *fewer [] = { "a", "c", "d" };
    for (int i = 0; i < S_CALLS; i++) {
        int job = 500 + i % 3;
        int pick = (i % 97 == 96)
            ? s_route (worker->routers, worker->name, job, fewer, 3)
            : s_route (worker->routers, worker->name, job, addrs, 4);
        if (pick < 0 || pick > 3)
            worker->bad++;
        else
        if (job == 500 && i % 97 != 96)
            worker->hits [pick]++;
    }
    return NULL;
}

static void
test_threads (xxl_routers_t *routers)
{
    const char *names [] = { "ROUND", "LEAST_FREQUENTLY_USED", "LEAST_RECENTLY_USED",
                             "CONSISTENT_HASH", "RANDOM" };
    s_rand_set (0, NULL);
    s_rand_default = 3;
    for (size_t n = 0; n < sizeof names / sizeof names [0]; n++) {
        worker_t workers [S_THREADS];
        pthread_t threads [S_THREADS];
        for (int t = 0; t < S_THREADS; t++) {
            memset (&workers [t], 0, sizeof workers [t]);
            workers [t].routers = routers;
            workers [t].name = names [n];
            pthread_create (&threads [t], NULL, s_worker, &workers [t]);
        }
        int bad = 0, hits [4] = { 0 };
        for (int t = 0; t < S_THREADS; t++) {
            pthread_join (threads [t], NULL);
            bad += workers [t].bad;
            for (int a = 0; a < 4; a++)
                hits [a] += workers [t].hits [a];
        }
        XXL_CHECK_INT (bad, 0);
        if (strcmp (names [n], "ROUND") == 0 || strcmp (names [n], "LEAST_RECENTLY_USED") == 0) {
            //  Job 500 is spread evenly over the four addresses
            int lo = hits [0], hi = hits [0];
            for (int a = 1; a < 4; a++) {
                lo = hits [a] < lo? hits [a]: lo;
                hi = hits [a] > hi? hits [a]: hi;
            }
            XXL_CHECK (hi - lo <= S_THREADS * S_CALLS / 97 + 4);
            XXL_CHECK (lo > 0);
        }
    }
}

int
main (void)
{
    const char *dir = getenv ("XXL_TEST_ROUTERS");
    const char *plugins = getenv ("XXL_TEST_ROUTER_PLUGINS");
    if (!plugins)
        plugins = getenv ("XXL_TEST_PLUGINS");
    if (!dir)
        dir = "plugins/routers/.libs";
    if (!plugins)
        plugins = "tests/plugins/.libs";
    setvbuf (stdout, NULL, _IOLBF, 0);

    xxl_routers_t *routers = xxl_routers_new (dir, &s_host);
    XXL_CHECK (routers != NULL);
    if (!routers) {
        printf ("cannot load routers from %s (set XXL_TEST_ROUTERS):\n%s", dir, s_log);
        XXL_CHECK (0);
        return xxl_test_done ();
    }
    if (strstr (s_log, "refused"))
        printf ("unexpected refusals:\n%s", s_log);
    XXL_CHECK (strstr (s_log, "refused") == NULL);
    test_loader (routers);
    test_errors (routers);
    test_first_last_random (routers);
    test_round (routers);
    test_lfu (routers);
    test_lru (routers);
    test_consistent_hash (routers);
    test_failover_busyover (routers);
    test_host_without_probe (dir);
    test_threads (routers);
    test_plugins (routers, plugins);
    xxl_routers_destroy (&routers);
    XXL_CHECK (routers == NULL);

    return xxl_test_done ();
}
