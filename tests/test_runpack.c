/*  test_runpack.c -- tests of agent/xxl_runpack: runs' logs added to their
    day's pack are found by logId after a flush (not before), read by line
    through xxl_logread like a file, the newest of a repeated logId wins,
    two writers on one folder keep each other's offsets, too long a log is
    refused, a torn tail or a lying index entry shows nothing rather than
    another run's lines, and retention removes a day's pack with its folder.
    Last line: "N passed, M failed".
*/

#define _GNU_SOURCE
#include "xxl_logread.h"
#include "xxl_runlog.h"
#include "xxl_runpack.h"

#include <czmq.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xxl_test_agent.h"

//  1 if the pack of day `when` holds log_id with exactly text
static int
s_found (const char *logdir, int64_t log_id, int64_t when, const char *text)
{
    size_t len = 0;
    char *found = xxl_runpack_find (logdir, log_id, when, &len);
    int ok = found && len == strlen (text) && streq (found, text);
    free (found);
    return ok;
}

static off_t
s_size (const char *path)
{
    struct stat st;
    return stat (path, &st) == 0? st.st_size: -1;
}

int
main (void)
{
    char dir [256];
    if (xxl_test_agent_start (dir, sizeof dir, "runpack"))
        return xxl_test_done ();
    setenv ("TZ", "UTC", 1);
    tzset ();
    char logdir [300], path [600];
    snprintf (logdir, sizeof logdir, "%s/logs", dir);      //  made by the first add
    int64_t day1 = 1700000000000LL;             //  2023-11-14 22:13:20 UTC
    int64_t day2 = day1 + 86400000LL;           //  2023-11-15

    xxl_runpack_t *pack = xxl_runpack_new (logdir);
    XXL_CHECK_MSG (pack, "new");
    const char *one = "line one\nline two\nline three\n";
    XXL_CHECK_MSG (xxl_runpack_add (pack, 7, day1, one, strlen (one)) == 0, "add 7");
    XXL_CHECK_MSG (!s_found (logdir, 7, day1, one), "not readable before a flush");
    XXL_CHECK_MSG (xxl_runpack_flush (pack) == 0, "flush");
    XXL_CHECK_MSG (s_found (logdir, 7, day1, one), "found after the flush");
    snprintf (path, sizeof path, "%s/2023-11-14/runs.pack", logdir);
    XXL_CHECK_MSG (s_size (path) > (off_t) strlen (one), "runs.pack in the day's folder");
    snprintf (path, sizeof path, "%s/2023-11-14/7.log", logdir);
    XXL_CHECK_MSG (access (path, F_OK) != 0, "no file of its own");
    XXL_CHECK_MSG (!xxl_runpack_find (logdir, 8, day1, NULL), "another logId: not found");
    XXL_CHECK_MSG (!xxl_runpack_find (logdir, 7, day2, NULL), "another day: not found");
    XXL_CHECK_MSG (!xxl_runpack_find ("/nonexistent/xxl", 7, day1, NULL), "missing logdir: not found");

    //  Read like a file, by line, with the cap and to_line
    int to_line = 0;
    char err [256] = "";
    char *text = xxl_logread (logdir, 7, day1, 2, &to_line, err, sizeof err);
    XXL_CHECK_MSG (text && streq (text, "line two\nline three\n") && to_line == 3,
                   "xxl_logread from line 2: '%s' to %d (%s)", text? text: "(null)", to_line, err);
    free (text);
    text = xxl_logread_max (logdir, 7, day1, 1, 12, &to_line, err, sizeof err);
    XXL_CHECK_MSG (text && streq (text, "line one\n") && to_line == 1, "capped read: '%s'", text? text: "(null)");
    free (text);
    text = xxl_logread (logdir, 9, day1, 1, &to_line, err, sizeof err);
    XXL_CHECK_MSG (!text && strstr (err, "log file not found"), "neither file nor pack: '%s'", err);
    free (text);
    //  A file of its own is read first
    int fd = xxl_runlog_open (logdir, 7, day1);
    XXL_CHECK_MSG (fd >= 0 && write (fd, "from the file\n", 14) == 14, "a file for 7");
    if (fd >= 0)
        close (fd);
    text = xxl_logread (logdir, 7, day1, 1, &to_line, err, sizeof err);
    XXL_CHECK_MSG (text && streq (text, "from the file\n"), "the file wins: '%s'", text? text: "(null)");
    free (text);
    unlink (path);

    //  Many runs over two days, interleaved; a repeated logId: newest wins
    char line [128];
    int ok = 1;
    for (int i = 100; i < 3100; i++) {
        snprintf (line, sizeof line, "run %d on day %d\n", i, i % 2 + 1);
        ok &= xxl_runpack_add (pack, i, i % 2? day2: day1, line, strlen (line)) == 0;
    }
    XXL_CHECK_MSG (ok, "3,000 adds over two days (past the buffer's flush size)");
    XXL_CHECK_MSG (xxl_runpack_add (pack, 100, day1, "again\n", 6) == 0, "100 again");
    xxl_runpack_flush (pack);
    ok = 1;
    for (int i = 101; i < 3100; i++) {
        snprintf (line, sizeof line, "run %d on day %d\n", i, i % 2 + 1);
        if (!s_found (logdir, i, i % 2? day2: day1, line)) {
            ok = 0;
            printf ("run %d not found\n", i);
            break;
        }
    }
    XXL_CHECK_MSG (ok, "each run found in its own day's pack");
    XXL_CHECK_MSG (s_found (logdir, 100, day1, "again\n"), "the newest entry of 100 wins");

    //  Too long for a pack: refused, the caller writes a file
    size_t big_len = XXL_RUNPACK_RUN_MAX + 1;
    char *big = (char *) malloc (big_len);
    memset (big, 'x', big_len);
    XXL_CHECK_MSG (xxl_runpack_add (pack, 5000, day1, big, big_len) == -1, "over 64 KB refused");
    XXL_CHECK_MSG (xxl_runpack_add (pack, 5001, day1, big, XXL_RUNPACK_RUN_MAX) == 0, "64 KB taken");
    xxl_runpack_flush (pack);
    size_t len = 0;
    char *found = xxl_runpack_find (logdir, 5001, day1, &len);
    XXL_CHECK_MSG (found && len == XXL_RUNPACK_RUN_MAX && memcmp (found, big, len) == 0, "64 KB read back");
    free (found);
    free (big);

    //  Two writers on one folder (two agents sharing a logdir)
    xxl_runpack_t *other = xxl_runpack_new (logdir);
    XXL_CHECK_MSG (other, "second writer");
    ok = 1;
    for (int i = 6000; i < 6400; i++) {
        snprintf (line, sizeof line, "writer %d run %d\n", i % 2, i);
        ok &= xxl_runpack_add (i % 2? other: pack, i, day1, line, strlen (line)) == 0;
        if (i % 50 == 0)
            xxl_runpack_flush (i % 100? other: pack);
    }
    xxl_runpack_destroy (&other);
    XXL_CHECK_MSG (other == NULL, "destroy nulls");
    xxl_runpack_flush (pack);
    ok = 1;
    for (int i = 6000; i < 6400 && ok; i++) {
        snprintf (line, sizeof line, "writer %d run %d\n", i % 2, i);
        ok = s_found (logdir, i, day1, line);
        if (!ok)
            printf ("run %d not found\n", i);
    }
    XXL_CHECK_MSG (ok, "both writers' runs found at their offsets");

    //  A torn tail: a half-written record and half an index entry
    XXL_CHECK_MSG (xxl_runpack_add (pack, 7000, day1, "whole\n", 6) == 0, "7000");
    xxl_runpack_flush (pack);
    snprintf (path, sizeof path, "%s/2023-11-14/runs.pack", logdir);
    off_t pack_size = s_size (path);
    fd = open (path, O_WRONLY | O_APPEND);
    XXL_CHECK_MSG (fd >= 0 && write (fd, "### logId 7001, 100 bytes\nhalf", 30) == 30, "torn record");
    close (fd);
    snprintf (path, sizeof path, "%s/2023-11-14/runs.idx", logdir);
    int64_t entry [2] = { 7001, (int64_t) pack_size };
    fd = open (path, O_WRONLY | O_APPEND);
    XXL_CHECK_MSG (fd >= 0 && write (fd, entry, sizeof entry) == sizeof entry
                           && write (fd, entry, 5) == 5, "its entry, and half of another");
    close (fd);
    XXL_CHECK_MSG (!xxl_runpack_find (logdir, 7001, day1, NULL), "the torn record is not shown");
    XXL_CHECK_MSG (s_found (logdir, 7000, day1, "whole\n"), "the run before it still is");
    //  An entry that points at another run's record shows nothing
    int64_t liar [2] = { 7002, 0 };
    fd = open (path, O_WRONLY | O_TRUNC);       //  index rewritten: one lying entry
    XXL_CHECK_MSG (fd >= 0 && write (fd, liar, sizeof liar) == sizeof liar, "lying index");
    close (fd);
    XXL_CHECK_MSG (!xxl_runpack_find (logdir, 7002, day1, NULL), "a header naming another logId is refused");
    //  New adds after the torn tail are still found
    XXL_CHECK_MSG (xxl_runpack_add (pack, 7003, day1, "after\n", 6) == 0, "7003");
    xxl_runpack_flush (pack);
    XXL_CHECK_MSG (s_found (logdir, 7003, day1, "after\n"), "a run after the torn tail is found");
    xxl_runpack_destroy (&pack);

    //  A write that cannot be done: -1 from the flush, no crash
    snprintf (path, sizeof path, "%s/file-not-folder", dir);
    fd = open (path, O_WRONLY | O_CREAT, 0644);
    close (fd);
    pack = xxl_runpack_new (path);              //  logdir is a plain file
    XXL_CHECK_MSG (pack && xxl_runpack_add (pack, 1, day1, "x\n", 2) == -1,
                   "a day that cannot be opened: add says -1 (the caller writes a file)");
    xxl_runpack_destroy (&pack);

    //  Retention takes the pack with its day
    XXL_CHECK_MSG (xxl_runlog_clean (logdir, 3, day2 + 4 * 86400000LL) == 2, "both days removed");
    XXL_CHECK_MSG (!xxl_runpack_find (logdir, 101, day2, NULL), "gone with the folder");

    if (xxl_test_rmtree (dir))
        {}
    return xxl_test_done ();
}
