/*  test_runlog.c -- tests of agent/xxl_runlog: path from logDateTime,
    stamped lines, paging by line with the byte cap, incomplete last lines,
    missing files, and retention.  Last line: "N passed, M failed".
*/

#define _GNU_SOURCE
#include "xxl_logread.h"
#include "xxl_runlog.h"

#include <czmq.h>
#include <fcntl.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "xxl_test_agent.h"

static int
s_matches (const char *text, const char *pattern)
{
    regex_t regex;
    if (regcomp (&regex, pattern, REG_EXTENDED | REG_NOSUB))
        return 0;
    int rc = regexec (&regex, text, 0, NULL, 0);
    regfree (&regex);
    return rc == 0;
}

int
main (void)
{
    char dir [256];
    if (xxl_test_agent_start (dir, sizeof dir, "runlog"))
        return xxl_test_done ();
    setenv ("TZ", "UTC", 1);
    tzset ();
    char logdir [300];
    snprintf (logdir, sizeof logdir, "%s/logs", dir);

    //  Path: date from logDateTime in local time (TZ=UTC here)
    int64_t when = 1700000000000LL;           //  2023-11-14 22:13:20 UTC
    char path [512], expect [512];
    XXL_CHECK_MSG (xxl_runlog_path (logdir, 42, when, path, sizeof path) == 0, "path");
    snprintf (expect, sizeof expect, "%s/2023-11-14/42.log", logdir);
    XXL_CHECK_MSG (streq (path, expect), "path is %s", path);
    setenv ("TZ", "Asia/Shanghai", 1);
    tzset ();
    XXL_CHECK_MSG (xxl_runlog_path (logdir, 42, when, path, sizeof path) == 0
        && strstr (path, "/2023-11-15/42.log"), "local date in UTC+8: %s", path);
    setenv ("TZ", "UTC", 1);
    tzset ();
    char tiny [8];
    XXL_CHECK_MSG (xxl_runlog_path (logdir, 42, when, tiny, sizeof tiny) == -1, "small buffer refused");

    //  Missing file
    int to_line = -5;
    char err [600];
    char *content = xxl_logread (logdir, 42, when, 1, &to_line, err, sizeof err);
    XXL_CHECK_MSG (content == NULL && strstr (err, "log file not found: ") && strstr (err, "42.log"),
                   "missing log: %s", err);

    //  Append creates folders, lines are stamped
    XXL_CHECK_MSG (xxl_runlog_append (logdir, 42, when, "first line") == 0, "append");
    XXL_CHECK_MSG (xxl_runlog_append (logdir, 42, when, "second line") == 0, "append 2");
    XXL_CHECK_MSG (xxl_runlog_append (logdir, 42, when, "third line") == 0, "append 3");
    content = xxl_logread (logdir, 42, when, 1, &to_line, err, sizeof err);
    XXL_CHECK_MSG (content && to_line == 3, "3 lines read, to_line %d", to_line);
    XXL_CHECK_MSG (content && s_matches (content,
                   "^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3} \\[[0-9]+/[0-9]+\\] first line\n"),
                   "stamp format: %s", content? content: "");
    free (content);

    //  Paging from a line
    content = xxl_logread (logdir, 42, when, 2, &to_line, err, sizeof err);
    XXL_CHECK_MSG (content && to_line == 3 && strstr (content, "second line") && !strstr (content, "first line"),
                   "from line 2");
    free (content);
    content = xxl_logread (logdir, 42, when, 4, &to_line, err, sizeof err);
    XXL_CHECK_MSG (content && streq (content, "") && to_line == 3, "past the end: \"\" and to_line 3 (%d)", to_line);
    free (content);
    content = xxl_logread (logdir, 42, when, 0, &to_line, err, sizeof err);
    XXL_CHECK_MSG (content && to_line == 3, "from line 0 means 1");
    free (content);

    //  Byte cap: whole lines only
    for (int i = 0; i < 2000; i++) {
        char line [64];
        snprintf (line, sizeof line, "filler %04d", i);
        xxl_runlog_append (logdir, 43, when, line);
    }
    content = xxl_logread (logdir, 43, when, 1, &to_line, err, sizeof err);
    XXL_CHECK_MSG (content && strlen (content) <= XXL_LOGREAD_MAX && to_line > 100 && to_line < 2000,
                   "64 KiB cap: %zu bytes, to_line %d", content? strlen (content): 0, to_line);
    XXL_CHECK_MSG (content && content [strlen (content) - 1] == '\n', "ends at a whole line");
    int first_to = to_line;
    free (content);
    content = xxl_logread (logdir, 43, when, first_to + 1, &to_line, err, sizeof err);
    char want [32];
    snprintf (want, sizeof want, "filler %04d\n", first_to);
    XXL_CHECK_MSG (content && strstr (content, want) == strstr (content, "filler"), "next page starts at line %d", first_to + 1);
    free (content);
    content = xxl_logread_max (logdir, 43, when, 1, 100, &to_line, err, sizeof err);
    XXL_CHECK_MSG (content && to_line == 2, "100 byte cap: 2 lines (%d)", to_line);
    free (content);

    //  One line longer than the cap is cut
    char *long_line = (char *) malloc (300);
    memset (long_line, 'L', 299);
    long_line [299] = 0;
    xxl_runlog_append (logdir, 44, when, long_line);
    free (long_line);
    content = xxl_logread_max (logdir, 44, when, 1, 100, &to_line, err, sizeof err);
    XXL_CHECK_MSG (content && strlen (content) == 100 && to_line == 1, "long line cut at the cap");
    free (content);

    //  An incomplete last line (a writer in the middle of it) is not returned
    XXL_CHECK_MSG (xxl_runlog_path (logdir, 45, when, path, sizeof path) == 0, "path 45");
    int fd = xxl_runlog_open (logdir, 45, when);
    XXL_CHECK_MSG (fd >= 0, "open");
    XXL_CHECK_MSG (xxl_runlog_write (fd, "complete") == 0, "write");
    if (write (fd, "partial", 7) != 7)
        {}
    content = xxl_logread (logdir, 45, when, 1, &to_line, err, sizeof err);
    XXL_CHECK_MSG (content && to_line == 1 && !strstr (content, "partial"), "partial line held back");
    free (content);
    if (write (fd, " done\n", 6) != 6)
        {}
    close (fd);
    content = xxl_logread (logdir, 45, when, 2, &to_line, err, sizeof err);
    XXL_CHECK_MSG (content && to_line == 2 && streq (content, "partial done\n"), "completed line read");
    free (content);

    //  Retention: folders older than keep_days go, others stay
    int64_t now_ms = 1700000000000LL;
    const char *days [] = { "2023-11-14", "2023-11-12", "2023-11-11", "2023-11-10", "2023-10-01" };
    for (int i = 0; i < 5; i++) {
        snprintf (path, sizeof path, "%s/%s", logdir, days [i]);
        mkdir (path, 0755);
        snprintf (path, sizeof path, "%s/%s/1.log", logdir, days [i]);
        xxl_test_write (path, "x\n");
    }
    snprintf (path, sizeof path, "%s/gluesource", logdir);
    mkdir (path, 0755);
    snprintf (path, sizeof path, "%s/not-a-date", logdir);
    mkdir (path, 0755);
    int removed = xxl_runlog_clean (logdir, 1, now_ms);     //  1 -> minimum 3
    XXL_CHECK_MSG (removed == 2, "keep 3 days: removed %d (want 2: 11-10, 10-01)", removed);
    snprintf (path, sizeof path, "%s/2023-11-11", logdir);
    XXL_CHECK_MSG (access (path, F_OK) == 0, "3 days ago kept");
    snprintf (path, sizeof path, "%s/2023-11-10", logdir);
    XXL_CHECK_MSG (access (path, F_OK) != 0, "4 days ago removed");
    snprintf (path, sizeof path, "%s/gluesource", logdir);
    XXL_CHECK_MSG (access (path, F_OK) == 0, "gluesource kept");
    snprintf (path, sizeof path, "%s/not-a-date", logdir);
    XXL_CHECK_MSG (access (path, F_OK) == 0, "other folders kept");
    XXL_CHECK_MSG (xxl_runlog_clean (logdir, 30, now_ms) == 0, "nothing more with 30 days");
    XXL_CHECK_MSG (xxl_runlog_clean ("/nonexistent/xxl", 30, now_ms) == -1, "missing logdir -1");

    if (xxl_test_rmtree (dir))
        {}
    return xxl_test_done ();
}
