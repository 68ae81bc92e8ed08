/*  test_spool.c -- tests of agent/xxl_spool: durability across reopen,
    acks, batches, a torn or corrupt tail, compaction, iteration while
    acking, and refusal of a file that is not a spool.
    Last line: "N passed, M failed".
*/

#define _GNU_SOURCE
#include "xxl_spool.h"

#include <czmq.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xxl_test_agent.h"

static off_t
s_file_size (const char *path)
{
    struct stat st;
    return stat (path, &st) == 0? st.st_size: -1;
}

static void
s_append_raw (const char *path, const void *data, size_t len)
{
    int fd = open (path, O_WRONLY | O_APPEND);
    if (fd >= 0) {
        if (write (fd, data, len) < 0)
            {}
        close (fd);
    }
}

int
main (void)
{
    char dir [256];
    if (xxl_test_agent_start (dir, sizeof dir, "spool"))
        return xxl_test_done ();
    char path [512];
    snprintf (path, sizeof path, "%s/callback.spool", dir);

    //  Add, ack, reopen
    xxl_spool_t *spool = xxl_spool_new (path);
    XXL_CHECK_MSG (spool != NULL, "new spool");
    XXL_CHECK_MSG (xxl_spool_size (spool) == 0, "empty");
    xxl_result_t r1 = { 1, 1700000000001LL, 200, (char *) "ok", 0 };
    xxl_result_t r2 = { 2, 1700000000002LL, 500, (char *) "failed: ünïcode", 0 };
    xxl_result_t r3 = { 3, 1700000000003LL, 502, NULL, 0 };
    XXL_CHECK_MSG (xxl_spool_add (spool, &r1) == 0, "add 1");
    XXL_CHECK_MSG (xxl_spool_add (spool, &r2) == 0, "add 2");
    XXL_CHECK_MSG (xxl_spool_add (spool, &r3) == 0, "add 3");
    XXL_CHECK_MSG (xxl_spool_size (spool) == 3, "3 pending");
    XXL_CHECK_MSG (xxl_spool_ack (spool, 1) == 0, "ack 1");
    XXL_CHECK_MSG (xxl_spool_ack (spool, 1) == -1, "second ack of 1 is -1");
    XXL_CHECK_MSG (xxl_spool_ack (spool, 99) == -1, "ack unknown is -1");
    xxl_spool_destroy (&spool);
    XXL_CHECK_MSG (spool == NULL, "destroy nulls");

    spool = xxl_spool_new (path);
    XXL_CHECK_MSG (spool && xxl_spool_size (spool) == 2, "2 pending after reopen");
    const xxl_result_t *result = xxl_spool_first (spool);
    XXL_CHECK_MSG (result && result->log_id == 2 && result->code == 500 && result->log_date_time == 1700000000002LL
        && result->msg && streq (result->msg, "failed: ünïcode"), "result 2 intact");
    result = xxl_spool_next (spool);
    XXL_CHECK_MSG (result && result->log_id == 3 && result->code == 502 && result->msg == NULL, "result 3, NULL msg kept");
    XXL_CHECK_MSG (xxl_spool_next (spool) == NULL, "end of iteration");

    //  Batch
    xxl_result_t batch [100];
    char msgs [100][32];
    for (int i = 0; i < 100; i++) {
        snprintf (msgs [i], sizeof msgs [i], "batch %d", i);
        batch [i] = (xxl_result_t) { 1000 + i, 0, 200, msgs [i], 0 };
    }
    XXL_CHECK_MSG (xxl_spool_add_batch (spool, batch, 100) == 0, "batch of 100");
    XXL_CHECK_MSG (xxl_spool_size (spool) == 102, "102 pending");
    //  Replace a pending logId
    xxl_result_t again = { 2, 1700000000002LL, 200, (char *) "retried", 0 };
    XXL_CHECK_MSG (xxl_spool_add (spool, &again) == 0 && xxl_spool_size (spool) == 102, "replace keeps one entry");
    xxl_spool_destroy (&spool);

    //  Torn tail: a half record after the last good one
    off_t good_size = s_file_size (path);
    unsigned char torn [] = { 40, 0, 0, 0, 1, 2, 3, 4, 1, 9, 9 };
    s_append_raw (path, torn, sizeof torn);
    spool = xxl_spool_new (path);
    XXL_CHECK_MSG (spool && xxl_spool_size (spool) == 102, "torn tail ignored");
    XXL_CHECK_MSG (s_file_size (path) == good_size, "torn tail cut off");
    xxl_result_t r4 = { 4, 0, 200, (char *) "after torn", 0 };
    XXL_CHECK_MSG (xxl_spool_add (spool, &r4) == 0, "add after torn tail");
    xxl_spool_destroy (&spool);
    spool = xxl_spool_new (path);
    XXL_CHECK_MSG (spool && xxl_spool_size (spool) == 103, "add after torn tail survives");
    int found = 0;
    for (result = xxl_spool_first (spool); result; result = xxl_spool_next (spool))
        if (result->log_id == 2)
            found = result->msg && streq (result->msg, "retried");
    XXL_CHECK_MSG (found, "replaced entry replayed");
    xxl_spool_destroy (&spool);

    //  Corrupt last record (CRC): ignored
    off_t size = s_file_size (path);
    int fd = open (path, O_RDWR);
    unsigned char byte;
    if (fd >= 0 && pread (fd, &byte, 1, size - 2) == 1) {
        byte ^= 0xFF;
        if (pwrite (fd, &byte, 1, size - 2) != 1)
            {}
    }
    if (fd >= 0)
        close (fd);
    spool = xxl_spool_new (path);
    XXL_CHECK_MSG (spool && xxl_spool_size (spool) == 102, "corrupt last record ignored");

    //  Iterate and ack every entry while iterating
    int seen = 0;
    for (result = xxl_spool_first (spool); result; result = xxl_spool_next (spool)) {
        seen++;
        xxl_spool_ack (spool, result->log_id);
    }
    XXL_CHECK_MSG (seen == 102 && xxl_spool_size (spool) == 0, "ack while iterating: %d seen", seen);
    xxl_spool_destroy (&spool);
    spool = xxl_spool_new (path);
    XXL_CHECK_MSG (spool && xxl_spool_size (spool) == 0, "all acked after reopen");

    //  No compaction below 65,536 records not pending (a result and its
    //  ack are two): 3,000 results acked but 10 only append to the file
    //  (a result record is 8 + 25 bytes and its message, an ack 8 + 9)
    off_t before = s_file_size (path);
    int added = 0;
    for (int i = 0; i < 3000; i++) {
        xxl_result_t result_i = { 20000 + i, 0, 200, (char *) "a message of some length", 0 };
        added += xxl_spool_add_batch (spool, &result_i, 1) == 0;
    }
    XXL_CHECK_MSG (added == 3000, "3,000 added one by one (%d)", added);
    for (int i = 0; i < 2990; i++)
        xxl_spool_ack (spool, 20000 + i);
    off_t appended = s_file_size (path) - before;
    XXL_CHECK_MSG (appended == 3000 * (8 + 25 + 24) + 2990 * (8 + 9),
                   "5,980 records not pending: not compacted (%lld bytes appended)",
                   (long long) appended);
    for (int i = 2990; i < 3000; i++)
        xxl_spool_ack (spool, 20000 + i);

    //  Compaction: 36,000 results, all but 10 acked one by one (72,000
    //  records not pending, more than the 10 pending)
    enum { MANY = 36000 };
    xxl_result_t *lots = (xxl_result_t *) calloc (MANY, sizeof (xxl_result_t));
    assert (lots);
    for (int i = 0; i < MANY; i++)
        lots [i] = (xxl_result_t) { 10000000 + i, 0, 200, (char *) "a message of some length", 0 };
    XXL_CHECK_MSG (xxl_spool_add_batch (spool, lots, MANY) == 0, "36,000 added");
    free (lots);
    off_t big = s_file_size (path);
    for (int i = 0; i < MANY - 10; i++)
        xxl_spool_ack (spool, 10000000 + i);
    off_t small = s_file_size (path);
    XXL_CHECK_MSG (small < big / 3, "compacted: %lld -> %lld bytes", (long long) big, (long long) small);
    xxl_result_t r5 = { 5, 0, 200, (char *) "after compaction", 0 };
    XXL_CHECK_MSG (xxl_spool_add (spool, &r5) == 0, "add after compaction");
    xxl_spool_destroy (&spool);
    spool = xxl_spool_new (path);
    XXL_CHECK_MSG (spool && xxl_spool_size (spool) == 11, "11 pending after compaction and reopen");
    result = xxl_spool_first (spool);
    XXL_CHECK_MSG (result && result->log_id == 10000000 + MANY - 10, "order kept after compaction");
    xxl_spool_destroy (&spool);

    //  Batched acks: acked results leave the spool for good, the others
    //  stay and come back after a reopen; unknown and repeated logIds in a
    //  batch are skipped
    char batch_path [512];
    snprintf (batch_path, sizeof batch_path, "%s/ack-batch.spool", dir);
    spool = xxl_spool_new (batch_path);
    xxl_result_t ten [10];
    for (int i = 0; i < 10; i++)
        ten [i] = (xxl_result_t) { 500 + i, 1700000000000LL + i, 200, (char *) "done", 0 };
    XXL_CHECK_MSG (spool && xxl_spool_add_batch (spool, ten, 10) == 0, "ack batch: 10 added");
    int64_t acks [] = { 502, 504, 999999, 506, 504, 502 };
    XXL_CHECK_MSG (xxl_spool_ack_batch (spool, acks, sizeof acks / sizeof acks [0]) == 3,
                   "ack batch: 3 removed (an unknown and two repeated logIds skipped)");
    XXL_CHECK_MSG (xxl_spool_size (spool) == 7, "ack batch: 7 pending");
    XXL_CHECK_MSG (xxl_spool_ack_batch (spool, acks, 0) == 0 && xxl_spool_ack_batch (spool, NULL, 3) == 0
        && xxl_spool_ack_batch (NULL, acks, 3) == 0, "ack batch: empty, NULL ids, NULL self");
    int64_t unknown [] = { 42, 43 };
    XXL_CHECK_MSG (xxl_spool_ack_batch (spool, unknown, 2) == 0 && xxl_spool_size (spool) == 7,
                   "ack batch of unknown logIds changes nothing");
    xxl_spool_destroy (&spool);
    spool = xxl_spool_new (batch_path);
    XXL_CHECK_MSG (spool && xxl_spool_size (spool) == 7, "ack batch: 7 pending after reopen (%zu)",
                   xxl_spool_size (spool));
    int64_t expect [] = { 500, 501, 503, 505, 507, 508, 509 };
    int in_order = 1, count = 0;
    for (result = xxl_spool_first (spool); result; result = xxl_spool_next (spool), count++)
        in_order = in_order && count < 7 && result->log_id == expect [count]
                && result->code == 200 && result->msg && streq (result->msg, "done")
                && result->log_date_time == 1700000000000LL + (result->log_id - 500);
    XXL_CHECK_MSG (in_order && count == 7, "ack batch: the unacked results are delivered after reopen, in order");
    int64_t rest [] = { 500, 501, 503, 505, 507, 508, 509 };
    XXL_CHECK_MSG (xxl_spool_ack_batch (spool, rest, 7) == 7 && xxl_spool_size (spool) == 0, "ack batch: the rest");
    xxl_spool_destroy (&spool);
    spool = xxl_spool_new (batch_path);
    XXL_CHECK_MSG (spool && xxl_spool_size (spool) == 0, "ack batch: all gone after reopen");
    xxl_spool_destroy (&spool);

    //  Compaction with nothing pending: the file is cut back to an empty
    //  spool, which replays empty and takes new results, before and after
    //  a reopen
    char empty_path [512];
    snprintf (empty_path, sizeof empty_path, "%s/empty.spool", dir);
    spool = xxl_spool_new (empty_path);
    off_t fresh = s_file_size (empty_path);
    enum { EMPTIED = 33000 };           //  66,000 records once acked
    xxl_result_t *many_results = (xxl_result_t *) calloc (EMPTIED, sizeof (xxl_result_t));
    int64_t *many_ids = (int64_t *) calloc (EMPTIED, sizeof (int64_t));
    assert (many_results && many_ids);
    for (int i = 0; i < EMPTIED; i++) {
        many_results [i] = (xxl_result_t) { 70000 + i, 0, 200, (char *) "a message of some length", 0 };
        many_ids [i] = 70000 + i;
    }
    XXL_CHECK_MSG (spool && xxl_spool_add_batch (spool, many_results, EMPTIED) == 0, "empty: 33,000 added");
    off_t full = s_file_size (empty_path);
    XXL_CHECK_MSG (xxl_spool_ack_batch (spool, many_ids, EMPTIED) == EMPTIED && xxl_spool_size (spool) == 0,
                   "empty: all 33,000 acked");
    free (many_results);
    free (many_ids);
    off_t emptied = s_file_size (empty_path);
    XXL_CHECK_MSG (fresh > 0 && emptied == fresh && full > 10 * fresh,
                   "empty: file cut back to an empty spool (%lld -> %lld bytes, fresh %lld)",
                   (long long) full, (long long) emptied, (long long) fresh);
    xxl_result_t r6 = { 6, 0, 200, (char *) "after emptying", 0 };
    XXL_CHECK_MSG (xxl_spool_add (spool, &r6) == 0, "empty: add after the cut");
    xxl_spool_destroy (&spool);
    spool = xxl_spool_new (empty_path);
    result = spool? xxl_spool_first (spool): NULL;
    XXL_CHECK_MSG (spool && xxl_spool_size (spool) == 1 && result && result->log_id == 6
        && result->msg && streq (result->msg, "after emptying"),
                   "empty: the result added after the cut survives a reopen");
    XXL_CHECK_MSG (xxl_spool_ack (spool, 6) == 0, "empty: ack it");
    xxl_spool_destroy (&spool);
    spool = xxl_spool_new (empty_path);
    XXL_CHECK_MSG (spool && xxl_spool_size (spool) == 0, "empty: reopens empty");
    XXL_CHECK_MSG (spool && xxl_spool_compact (spool) == 0 && s_file_size (empty_path) == fresh,
                   "empty: explicit compaction of an empty spool");
    xxl_spool_destroy (&spool);
    spool = xxl_spool_new (empty_path);
    xxl_result_t r7 = { 7, 0, 502, NULL, 0 };
    XXL_CHECK_MSG (spool && xxl_spool_size (spool) == 0 && xxl_spool_add (spool, &r7) == 0,
                   "empty: reopened after compaction, takes a new result");
    xxl_spool_destroy (&spool);
    spool = xxl_spool_new (empty_path);
    result = spool? xxl_spool_first (spool): NULL;
    XXL_CHECK_MSG (spool && xxl_spool_size (spool) == 1 && result && result->log_id == 7 && result->code == 502,
                   "empty: that result survives a reopen");
    xxl_spool_destroy (&spool);

    //  Not a spool
    char other [512];
    snprintf (other, sizeof other, "%s/not-a-spool", dir);
    xxl_test_write (other, "hello, this is not a spool\n");
    spool = xxl_spool_new (other);
    XXL_CHECK_MSG (spool == NULL, "foreign file refused");
    snprintf (other, sizeof other, "%s/missing/dir/spool", dir);
    XXL_CHECK_MSG (xxl_spool_new (other) == NULL, "missing folder refused");
    XXL_CHECK_MSG (xxl_spool_add (NULL, &r1) == -1 && xxl_spool_ack (NULL, 1) == -1, "NULL self");

    //  Durability figure
    snprintf (other, sizeof other, "%s/bench.spool", dir);
    spool = xxl_spool_new (other);
    int64_t start = zclock_usecs ();
    for (int i = 0; i < 200; i++) {
        xxl_result_t result_i = { i, 0, 200, (char *) "ok", 0 };
        xxl_spool_add (spool, &result_i);
    }
    int64_t single = zclock_usecs () - start;
    xxl_result_t many [1000];
    start = zclock_usecs ();
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < 1000; i++)
            many [i] = (xxl_result_t) { 100000 + round * 1000 + i, 0, 200, (char *) "ok", 0 };
        xxl_spool_add_batch (spool, many, 1000);
    }
    int64_t batched = zclock_usecs () - start;
    printf ("  spool: %.0f adds/s one by one (fsync each), %.0f adds/s in batches of 1000\n",
            200 * 1e6 / (single? single: 1), 20000 * 1e6 / (batched? batched: 1));
    xxl_spool_destroy (&spool);

    if (xxl_test_rmtree (dir))
        {}
    return xxl_test_done ();
}
