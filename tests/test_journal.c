/*  test_journal.c -- tests of agent/xxl_journal: accepted logIds remembered
    across a reopen (a restart) with the run each was (a re-send told from
    another run given the same id), a version 1 journal loaded and
    upgraded, the open ones reported lost with their
    logDateTime and the pid that accepted them, a torn or corrupt tail cut
    off, a torn header taken as an empty journal, generations (the window, open ids carried over, files bounded), a
    new generation cut between its renames, the read-only view of another
    process, the in-memory journal, and the cost per accepted id.
    Last line: "N passed, M failed".
*/

#define _GNU_SOURCE
#include "xxl_journal.h"

#include <czmq.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "xxl_test_agent.h"

static char s_dir [256];
static char s_path [320];

static int64_t
s_now_us (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

//  A new life is told by pid and start ms: a reopen in this process must
//  come a few ms later to be another life
static xxl_journal_t *
s_reopen (xxl_journal_t **journal, size_t generation)
{
    if (journal && *journal)
        xxl_journal_destroy (journal);
    usleep (3000);
    return xxl_journal_new (s_path, generation);
}

static void
s_clean (void)
{
    char path [400];
    unlink (s_path);
    snprintf (path, sizeof path, "%s.old", s_path);
    unlink (path);
    snprintf (path, sizeof path, "%s.new", s_path);
    unlink (path);
}

static off_t
s_size (const char *suffix)
{
    char path [400];
    snprintf (path, sizeof path, "%s%s", s_path, suffix);
    struct stat st;
    return stat (path, &st)? -1: st.st_size;
}

static void
test_restart (void)
{
    s_clean ();
    xxl_journal_t *journal = xxl_journal_new (s_path, 0);
    XXL_CHECK_MSG (journal != NULL, "journal created");
    if (!journal)
        return;
    char token [48];
    snprintf (token, sizeof token, "%d.", (int) getpid ());
    XXL_CHECK_MSG (strncmp (xxl_journal_life (journal), token, strlen (token)) == 0,
                   "life token %s starts with the pid", xxl_journal_life (journal));
    XXL_CHECK_MSG (xxl_journal_accepted_max (journal) == 0, "no id accepted: max 0");
    for (int64_t id = 10; id >= 1; id--)
        xxl_journal_accept (journal, id, 1, 1000 + id);
    XXL_CHECK_MSG (xxl_journal_seen (journal, 5) && !xxl_journal_seen (journal, 11),
                   "seen at once, before the flush");
    XXL_CHECK_MSG (xxl_journal_accepted_max (journal) == 10, "the highest accepted, not the last");
    XXL_CHECK_MSG (xxl_journal_flush (journal) == 0, "flush");
    int64_t done [] = { 1, 2, 3, 4, 5, 99 };
    xxl_journal_done (journal, done, 6);
    XXL_CHECK_MSG (xxl_journal_open_count (journal) == 5, "5 open, not %zu",
                   xxl_journal_open_count (journal));
    size_t count = 0;
    xxl_journal_entry_t *lost = xxl_journal_lost (journal, &count);
    XXL_CHECK_MSG (!lost && count == 0, "this life's open ids are not lost");
    free (lost);
    //  Not flushed: the done ids are written by destroy
    char first_life [48];
    snprintf (first_life, sizeof first_life, "%s", xxl_journal_life (journal));
    journal = s_reopen (&journal, 0);
    XXL_CHECK_MSG (journal != NULL, "reopened");
    if (!journal)
        return;
    XXL_CHECK_MSG (!streq (xxl_journal_life (journal), first_life), "a new life");
    int all_seen = 1;
    for (int64_t id = 1; id <= 10; id++)
        all_seen &= xxl_journal_seen (journal, id);
    XXL_CHECK_MSG (all_seen, "every accepted id is remembered after a restart");
    XXL_CHECK_MSG (xxl_journal_accepted_max (journal) == 10, "the highest, replayed (%lld)",
                   (long long) xxl_journal_accepted_max (journal));
    XXL_CHECK_MSG (!xxl_journal_seen (journal, 11), "an id never accepted is not");
    lost = xxl_journal_lost (journal, &count);
    XXL_CHECK_MSG (count == 5 && lost && lost [0].log_id == 6 && lost [4].log_id == 10,
                   "the 5 open ids are lost, in order (%zu)", count);
    XXL_CHECK_MSG (lost && lost [0].log_date_time == 1006 && lost [0].pid == (int) getpid (),
                   "with their logDateTime and the pid that accepted them");
    if (lost) {
        int64_t ids [5];
        for (size_t i = 0; i < 5; i++)
            ids [i] = lost [i].log_id;
        xxl_journal_done (journal, ids, 5);
        xxl_journal_flush (journal);
    }
    free (lost);
    xxl_journal_accept (journal, 20, 1, 2020);
    //  Killed: nothing of the destroy; the accept was flushed
    xxl_journal_flush (journal);
    //  Another process's view, as the guardian reads it, while it is open
    int64_t *ids = NULL;
    XXL_CHECK_MSG (xxl_journal_read_open (s_path, xxl_journal_life (journal), &ids, &count) == 0
                   && count == 1 && ids && ids [0] == 20, "read_open: the open id of this life");
    free (ids);
    XXL_CHECK_MSG (xxl_journal_read_open (s_path, first_life, &ids, &count) == 0 && count == 0,
                   "read_open: none of the first life (reported and done)");
    free (ids);
    journal = s_reopen (&journal, 0);
    lost = xxl_journal_lost (journal, &count);
    XXL_CHECK_MSG (count == 1 && lost && lost [0].log_id == 20, "only the second life's open id is lost");
    free (lost);
    xxl_journal_destroy (&journal);
}

static void
test_torn (void)
{
    s_clean ();
    xxl_journal_t *journal = xxl_journal_new (s_path, 0);
    for (int64_t id = 1; id <= 100; id++)
        xxl_journal_accept (journal, id, 1, id);
    xxl_journal_flush (journal);
    xxl_journal_destroy (&journal);
    off_t good = s_size ("");
    //  A torn frame: its header says more than follows
    int fd = open (s_path, O_WRONLY | O_APPEND);
    unsigned char torn [] = { 200, 0, 0, 0, 1, 2, 3, 4, 1, 101, 0 };
    XXL_CHECK_MSG (write (fd, torn, sizeof torn) == (ssize_t) sizeof torn, "torn write");
    close (fd);
    journal = s_reopen (NULL, 0);
    XXL_CHECK_MSG (journal != NULL, "a torn tail does not stop the journal");
    XXL_CHECK_MSG (journal && xxl_journal_seen (journal, 100) && !xxl_journal_seen (journal, 101),
                   "what came before it is kept");
    xxl_journal_destroy (&journal);
    XXL_CHECK_MSG (s_size ("") > good && s_size ("") < good + (off_t) sizeof torn + 64,
                   "the tail was cut (%lld, was %lld)", (long long) s_size (""), (long long) good);
    //  A corrupt frame (bad CRC) in the middle ends the replay there
    fd = open (s_path, O_RDWR);
    unsigned char byte;
    XXL_CHECK_MSG (pread (fd, &byte, 1, 8 + 8 + 13 + 5) == 1, "read");
    byte ^= 0xFF;
    XXL_CHECK_MSG (pwrite (fd, &byte, 1, 8 + 8 + 13 + 5) == 1, "corrupt");
    close (fd);
    journal = s_reopen (NULL, 0);
    XXL_CHECK_MSG (journal && !xxl_journal_seen (journal, 1), "a corrupt frame is not applied");
    xxl_journal_destroy (&journal);
    //  A header torn by a crash or a full disk: an empty journal
    s_clean ();
    fd = open (s_path, O_WRONLY | O_CREAT, 0644);
    XXL_CHECK_MSG (write (fd, "XXLJ", 4) == 4, "write");
    close (fd);
    journal = xxl_journal_new (s_path, 0);
    XXL_CHECK_MSG (journal != NULL, "a torn header is an empty journal");
    if (journal)
        xxl_journal_accept (journal, 5, 1, 5);
    xxl_journal_destroy (&journal);
    journal = s_reopen (NULL, 0);
    XXL_CHECK_MSG (journal && xxl_journal_seen (journal, 5), "and is a journal again");
    xxl_journal_destroy (&journal);
    //  Not a journal: refused
    s_clean ();
    fd = open (s_path, O_WRONLY | O_CREAT, 0644);
    XXL_CHECK_MSG (write (fd, "hello world\n", 12) == 12, "write");
    close (fd);
    journal = xxl_journal_new (s_path, 0);
    XXL_CHECK_MSG (journal == NULL, "a file that is not a journal is refused");
    xxl_journal_destroy (&journal);
    s_clean ();
}

static void
test_generations (void)
{
    s_clean ();
    const size_t gen = 1000;
    xxl_journal_t *journal = xxl_journal_new (s_path, gen);
    //  Id 7 stays open for ever; all others are done at once
    int64_t id = 1;
    for (int batch = 0; batch < 50; batch++) {
        int64_t ids [100];
        for (int i = 0; i < 100; i++, id++) {
            xxl_journal_accept (journal, id, 1, id);
            ids [i] = id == 7? 1: id;
        }
        xxl_journal_flush (journal);
        xxl_journal_done (journal, ids, 100);
        xxl_journal_flush (journal);
    }
    //  5,000 accepted: the last 1,000..2,000 are remembered
    XXL_CHECK_MSG (xxl_journal_seen (journal, 5000) && xxl_journal_seen (journal, 4001),
                   "the last generation is remembered");
    XXL_CHECK_MSG (!xxl_journal_seen (journal, 2000), "an id two generations old is forgotten");
    XXL_CHECK_MSG (xxl_journal_seen (journal, 7), "an open id is never forgotten");
    XXL_CHECK_MSG (s_size ("") < (off_t) (2 * gen * 30) && s_size (".old") < (off_t) (2 * gen * 30),
                   "both files are bounded (%lld, %lld)", (long long) s_size (""),
                   (long long) s_size (".old"));
    journal = s_reopen (&journal, gen);
    XXL_CHECK_MSG (journal && xxl_journal_seen (journal, 7) && xxl_journal_seen (journal, 4500)
                   && !xxl_journal_seen (journal, 2000), "the same window after a restart");
    size_t count = 0;
    xxl_journal_entry_t *lost = xxl_journal_lost (journal, &count);
    XXL_CHECK_MSG (count == 1 && lost && lost [0].log_id == 7 && lost [0].log_date_time == 7,
                   "the open id carried over generations is reported lost (%zu)", count);
    free (lost);
    xxl_journal_destroy (&journal);

    //  A new generation cut between its renames: PATH.new is PATH
    char old_path [400], new_path [400];
    snprintf (old_path, sizeof old_path, "%s.old", s_path);
    snprintf (new_path, sizeof new_path, "%s.new", s_path);
    XXL_CHECK_MSG (rename (s_path, new_path) == 0, "rename");
    journal = s_reopen (NULL, gen);
    XXL_CHECK_MSG (journal && xxl_journal_seen (journal, 4500) && xxl_journal_seen (journal, 7),
                   "PATH.new is taken as PATH");
    XXL_CHECK_MSG (s_size ("") > 0 && s_size (".new") < 0, "and renamed");
    xxl_journal_destroy (&journal);
    s_clean ();
}

static void
test_memory (void)
{
    xxl_journal_t *journal = xxl_journal_new (NULL, 100);
    XXL_CHECK_MSG (journal != NULL, "in-memory journal");
    for (int64_t id = 1; id <= 350; id++)
        xxl_journal_accept (journal, id, 1, 0);
    XXL_CHECK_MSG (xxl_journal_flush (journal) == 0, "flush is a no-op");
    XXL_CHECK_MSG (xxl_journal_seen (journal, 350) && xxl_journal_seen (journal, 250)
                   && !xxl_journal_seen (journal, 150), "in memory: the last 100..200 ids");
    size_t count = 0;
    xxl_journal_entry_t *lost = xxl_journal_lost (journal, &count);
    XXL_CHECK_MSG (!lost && !count, "nothing lost in memory");
    xxl_journal_destroy (&journal);
}

//  Ids in the patterns the map's home slots favour and disfavour
//  (sequential ids share cache lines, blocks of 8; ids 8 apart each start
//  a block; ids far apart): every id accepted is seen, none of the ids
//  between them, and done ids leave the open set
static void
test_patterns (void)
{
    xxl_journal_t *journal = xxl_journal_new (NULL, 1000000);
    XXL_CHECK_MSG (journal != NULL, "in-memory journal for the patterns");
    const int64_t strides [] = { 1, 8, 1024, 1000003 };
    int all_seen = 1, none_between = 1;
    for (size_t s = 0; s < sizeof strides / sizeof strides [0]; s++) {
        int64_t base = 1 + (int64_t) s * 100000000000LL, stride = strides [s];
        for (int64_t i = 0; i < 40000; i++)
            xxl_journal_accept (journal, base + i * stride, 1, 0);
        for (int64_t i = 0; i < 40000; i++) {
            all_seen = all_seen && xxl_journal_seen (journal, base + i * stride);
            if (stride > 1)
                none_between = none_between && !xxl_journal_seen (journal, base + i * stride + 1);
        }
        none_between = none_between && !xxl_journal_seen (journal, base - 1)
                    && !xxl_journal_seen (journal, base + 40000 * stride);
    }
    XXL_CHECK_MSG (all_seen, "every id accepted is seen (4 strides x 40,000)");
    XXL_CHECK_MSG (none_between, "no id between them is seen");
    xxl_journal_destroy (&journal);
}

static void
test_speed (void)
{
    s_clean ();
    xxl_journal_t *journal = xxl_journal_new (s_path, 0);
    const int total = 1000000, batch = 1000;
    int64_t start = s_now_us (), id = 1;
    int64_t ids [1000];
    for (int b = 0; b < total / batch; b++) {
        for (int i = 0; i < batch; i++, id++) {
            if (!xxl_journal_seen (journal, id))
                xxl_journal_accept (journal, id, 1, id);
            ids [i] = id;
        }
        xxl_journal_flush (journal);
        xxl_journal_done (journal, ids, batch);
        xxl_journal_flush (journal);
    }
    int64_t took = s_now_us () - start;
    printf ("  %d ids accepted and done in batches of %d: %.3f us per id\n",
            total, batch, (double) took / total);
    XXL_CHECK_MSG (took < (int64_t) total * 5, "well under 5 us per id (%.3f)", (double) took / total);
    xxl_journal_destroy (&journal);
    start = s_now_us ();
    journal = s_reopen (NULL, 0);
    printf ("  reopened (replay of %lld + %lld bytes) in %lld us\n", (long long) s_size (""),
            (long long) s_size (".old"), (long long) (s_now_us () - start));
    XXL_CHECK_MSG (journal && xxl_journal_seen (journal, total), "the last id is remembered");
    xxl_journal_destroy (&journal);
    s_clean ();
}

//  CRC-32 (IEEE), as the journal's frames carry
static uint32_t
s_crc32 (const unsigned char *data, size_t len)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < len; i++) {
        c ^= data [i];
        for (int k = 0; k < 8; k++)
            c = (c & 1)? 0xEDB88320u ^ (c >> 1): c >> 1;
    }
    return c ^ 0xFFFFFFFFu;
}

static void
s_put (unsigned char *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p [i] = (unsigned char) (v >> (8 * i));
}

//  Which run an id was: a re-send (the same job, its logDateTime or an
//  earlier one: the planned instant) is the same run, another job or a
//  later logDateTime another run, an unknown side the same run; kept
//  across a reopen and across generations (an open id carried over)
static void
test_runs (void)
{
    s_clean ();
    xxl_journal_t *journal = xxl_journal_new (s_path, 1000);
    XXL_CHECK_MSG (journal != NULL, "journal created");
    if (!journal)
        return;
    xxl_journal_accept (journal, 1, 5, 100000);
    xxl_journal_accept (journal, 2, 0, 200000);     //  (its job not known)
    xxl_journal_accept (journal, 3, 6, 0);          //  (no logDateTime)
    xxl_journal_flush (journal);
    for (int pass = 0; pass < 2; pass++) {
        const char *when = pass? "after a reopen": "in memory";
        XXL_CHECK_MSG (xxl_journal_check (journal, 1, 5, 100000) == XXL_JOURNAL_SAME,
                       "%s: the same job and logDateTime is the same run", when);
        XXL_CHECK_MSG (xxl_journal_check (journal, 1, 5, 99000) == XXL_JOURNAL_SAME,
                       "%s: an earlier logDateTime (a planned instant) is the same run", when);
        XXL_CHECK_MSG (xxl_journal_check (journal, 1, 6, 100000) == XXL_JOURNAL_OTHER,
                       "%s: another job is another run", when);
        XXL_CHECK_MSG (xxl_journal_check (journal, 1, 5, 100001) == XXL_JOURNAL_OTHER,
                       "%s: a later logDateTime is another run", when);
        XXL_CHECK_MSG (xxl_journal_check (journal, 1, 0, 500000) == XXL_JOURNAL_SAME
                       && xxl_journal_check (journal, 1, 5, 0) == XXL_JOURNAL_SAME,
                       "%s: a RUN that does not say which run is taken for it", when);
        XXL_CHECK_MSG (xxl_journal_check (journal, 2, 9, 900000) == XXL_JOURNAL_SAME,
                       "%s: an id accepted without its job: any run is taken for it", when);
        XXL_CHECK_MSG (xxl_journal_check (journal, 3, 6, 900000) == XXL_JOURNAL_SAME
                       && xxl_journal_check (journal, 3, 7, 1) == XXL_JOURNAL_OTHER,
                       "%s: without a logDateTime the job decides", when);
        XXL_CHECK_MSG (xxl_journal_check (journal, 4, 5, 100000) == XXL_JOURNAL_NEW
                       && !xxl_journal_seen (journal, 4), "%s: an id not accepted is new", when);
        if (!pass)
            journal = s_reopen (&journal, 1000);
        if (!journal)
            return;
    }
    //  Id 1 stays open while 3,000 others pass: carried over with its run
    int64_t done [100];
    for (int64_t id = 10; id < 3010; id += 100) {
        for (int i = 0; i < 100; i++) {
            xxl_journal_accept (journal, id + i, 8, id + i);
            done [i] = id + i;
        }
        xxl_journal_flush (journal);
        xxl_journal_done (journal, done, 100);
        xxl_journal_flush (journal);
    }
    journal = s_reopen (&journal, 1000);
    XXL_CHECK_MSG (journal && xxl_journal_seen (journal, 1) && !xxl_journal_seen (journal, 10)
                   && xxl_journal_check (journal, 1, 5, 100000) == XXL_JOURNAL_SAME
                   && xxl_journal_check (journal, 1, 6, 100000) == XXL_JOURNAL_OTHER,
                   "an open id carried over generations keeps its run");
    XXL_CHECK_MSG (journal && xxl_journal_check (journal, 3009, 8, 3009) == XXL_JOURNAL_SAME
                   && xxl_journal_check (journal, 3009, 8, 3010) == XXL_JOURNAL_OTHER,
                   "so does a done id of the window");
    xxl_journal_destroy (&journal);
    s_clean ();
}

//  A journal of version 1 (the accepts without their job): loaded, its
//  ids taken for any run (as before), its header made version 2 before
//  anything is appended; a later version is refused
static void
test_version1 (void)
{
    s_clean ();
    //  Header, a frame of a life record and two accepts of version 1 (id
    //  42 open, 41 done in a second frame)
    unsigned char file [256];
    size_t at = 0;
    memcpy (file, "XXLJNL1\n", 8);
    at = 8;
    unsigned char payload [64];
    size_t len = 0;
    payload [len] = 3;
    s_put (payload + len + 1, 4242, 4);
    s_put (payload + len + 5, 1700000000000ULL, 8);
    len += 13;
    for (int64_t id = 41; id <= 42; id++) {
        payload [len] = 1;
        s_put (payload + len + 1, (uint64_t) id, 8);
        s_put (payload + len + 9, (uint64_t) id * 100, 8);
        len += 17;
    }
    s_put (file + at, len, 4);
    s_put (file + at + 4, s_crc32 (payload, len), 4);
    memcpy (file + at + 8, payload, len);
    at += 8 + len;
    unsigned char done [9] = { 2 };
    s_put (done + 1, 41, 8);
    s_put (file + at, sizeof done, 4);
    s_put (file + at + 4, s_crc32 (done, sizeof done), 4);
    memcpy (file + at + 8, done, sizeof done);
    at += 8 + sizeof done;
    int fd = open (s_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    XXL_CHECK_MSG (fd >= 0 && write (fd, file, at) == (ssize_t) at, "a version 1 journal written");
    close (fd);
    int64_t *ids = NULL;
    size_t count = 0;
    XXL_CHECK_MSG (xxl_journal_read_open (s_path, "4242.1700000000000", &ids, &count) == 0
                   && count == 1 && ids && ids [0] == 42, "read_open reads version 1");
    free (ids);
    xxl_journal_t *journal = xxl_journal_new (s_path, 0);
    XXL_CHECK_MSG (journal != NULL, "a version 1 journal loads");
    if (!journal)
        return;
    XXL_CHECK_MSG (xxl_journal_seen (journal, 41) && xxl_journal_seen (journal, 42)
                   && xxl_journal_accepted_max (journal) == 42, "its ids are remembered");
    XXL_CHECK_MSG (xxl_journal_check (journal, 42, 5, 4200) == XXL_JOURNAL_SAME
                   && xxl_journal_check (journal, 42, 6, 999999) == XXL_JOURNAL_SAME,
                   "its ids are taken for any run (not known which)");
    size_t lost_count = 0;
    xxl_journal_entry_t *lost = xxl_journal_lost (journal, &lost_count);
    XXL_CHECK_MSG (lost_count == 1 && lost && lost [0].log_id == 42 && lost [0].log_date_time == 4200
                   && lost [0].pid == 4242, "its open id is reported lost");
    free (lost);
    char head [9] = "";
    fd = open (s_path, O_RDONLY);
    XXL_CHECK_MSG (fd >= 0 && read (fd, head, 8) == 8 && memcmp (head, "XXLJNL2\n", 8) == 0,
                   "its header is version 2 once opened (%.7s)", head);
    close (fd);
    xxl_journal_accept (journal, 43, 5, 4300);
    journal = s_reopen (&journal, 0);
    XXL_CHECK_MSG (journal && xxl_journal_check (journal, 43, 6, 4300) == XXL_JOURNAL_OTHER
                   && xxl_journal_check (journal, 43, 5, 4300) == XXL_JOURNAL_SAME
                   && xxl_journal_check (journal, 42, 6, 999999) == XXL_JOURNAL_SAME,
                   "after a reopen: the new id with its run, the old one without");
    xxl_journal_destroy (&journal);
    //  A later version: refused, not cut
    fd = open (s_path, O_WRONLY);
    XXL_CHECK_MSG (fd >= 0 && pwrite (fd, "XXLJNL3\n", 8, 0) == 8, "made version 3");
    close (fd);
    off_t size = s_size ("");
    journal = xxl_journal_new (s_path, 0);
    XXL_CHECK_MSG (journal == NULL && s_size ("") == size, "a later version is refused, untouched");
    xxl_journal_destroy (&journal);
    s_clean ();
}

int
main (void)
{
    if (xxl_test_agent_start (s_dir, sizeof s_dir, "journal"))
        return xxl_test_done ();
    snprintf (s_path, sizeof s_path, "%s/accepted.journal", s_dir);
    test_restart ();
    test_torn ();
    test_generations ();
    test_memory ();
    test_runs ();
    test_version1 ();
    test_patterns ();
    test_speed ();
    s_clean ();
    rmdir (s_dir);
    return xxl_test_done ();
}
