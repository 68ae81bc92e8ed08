/*  test_logread.c -- tests of agent/xxl_logread's pages by byte offset:
    pages end at a line end, at the end of a finished log, or (a line
    longer than a page) between UTF-8 characters; joined they are the file;
    an offset past the end, a file growing while read, a log in its day's
    pack, a page far into a 5 GB file read at its cost (O(page)); and the
    marks that make a reader going forward by line pay for its pages only.
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
#include <unistd.h>

#include "xxl_test_agent.h"

static const int64_t s_when = 1700000000000LL;
static char s_logdir [300];

//  Writes len bytes of text as the whole log of log_id (creating it)
static void
s_log_set (int64_t log_id, const char *text, size_t len)
{
    char path [512];
    xxl_runlog_path (s_logdir, log_id, s_when, path, sizeof path);
    int fd = xxl_runlog_open (s_logdir, log_id, s_when);
    XXL_CHECK_MSG (fd >= 0 && ftruncate (fd, 0) == 0 && write (fd, text, len) == (ssize_t) len,
                   "log %" PRId64 " written", log_id);
    if (fd >= 0)
        close (fd);
}

static void
s_log_append (int64_t log_id, const char *text)
{
    int fd = xxl_runlog_open (s_logdir, log_id, s_when);
    XXL_CHECK_MSG (fd >= 0 && write (fd, text, strlen (text)) == (ssize_t) strlen (text),
                   "log %" PRId64 " appended", log_id);
    if (fd >= 0)
        close (fd);
}

//  Whether the len bytes at text are whole UTF-8 characters
static bool
s_utf8_whole (const char *text, size_t len)
{
    return xxl_logread_utf8_cut (text, len) == len
        && (len == 0 || ((unsigned char) text [0] & 0xc0) != 0x80);
}

//  Reads log_id page by page of max bytes from 0 (final), checking each
//  page's rules; returns the pages joined (caller frees), their count in
//  *pages
static char *
s_read_all (int64_t log_id, size_t max, int *pages, size_t *total)
{
    char err [600];
    char *all = strdup ("");
    size_t size = 0;
    int64_t from = 0;
    *pages = 0;
    for (int guard = 0; guard < 100000; guard++) {
        size_t len = 99;
        int64_t next = -1;
        int at_end = -1;
        char *page = xxl_logread_bytes (s_logdir, log_id, s_when, from, max, 1, &len, &next,
                                        &at_end, err, sizeof err);
        if (!page) {
            XXL_CHECK_MSG (false, "page at %" PRId64 ": %s", from, err);
            break;
        }
        XXL_CHECK_MSG (next == from + (int64_t) len && len <= max,
                       "page at %" PRId64 ": %zu bytes, next %" PRId64, from, len, next);
        XXL_CHECK_MSG (s_utf8_whole (page, len), "page at %" PRId64 " splits no character",
                       from);
        all = (char *) realloc (all, size + len + 1);
        memcpy (all + size, page, len);
        size += len;
        all [size] = 0;
        free (page);
        (*pages)++;
        from = next;
        if (at_end)
            break;
        XXL_CHECK_MSG (len > 0, "a page that is not the end holds bytes (at %" PRId64 ")", from);
        if (len == 0)
            break;
    }
    *total = size;
    return all;
}

static void
test_pages (void)
{
    char err [600];
    size_t len;
    int64_t next;
    int at_end;
    //  No log: NULL and the reason
    char *page = xxl_logread_bytes (s_logdir, 50, s_when, 0, 0, 1, &len, &next, &at_end,
                                    err, sizeof err);
    XXL_CHECK_MSG (!page && strstr (err, "log file not found: ") && strstr (err, "50.log"),
                   "missing log: %s", err);

    //  Lines with characters of 2, 3 and 4 bytes
    const char *text = "one h\xc3\xa9llo\n"              //  11 bytes
                       "two \xe2\x82\xac\xe2\x82\xac\n"  //  11
                       "three \xf0\x9f\x98\x80\n"        //  11: 33 bytes of lines
                       "last without end";              //  16
    size_t text_len = strlen (text);
    s_log_set (51, text, text_len);

    //  The whole of a finished log in one page, its last line too
    page = xxl_logread_bytes (s_logdir, 51, s_when, 0, 0, 1, &len, &next, &at_end, err,
                              sizeof err);
    XXL_CHECK_MSG (page && len == text_len && memcmp (page, text, len) == 0 && page [len] == 0
                   && next == (int64_t) text_len && at_end == 1, "one page: %zu bytes", len);
    free (page);
    //  A running log: up to the last line end; not at its end
    page = xxl_logread_bytes (s_logdir, 51, s_when, 0, 0, 0, &len, &next, &at_end, err,
                              sizeof err);
    XXL_CHECK_MSG (page && len == 33 && next == 33 && at_end == 0,
                   "running: up to the last line end (%zu, next %" PRId64 ", end %d)",
                   len, next, at_end);
    free (page);
    //  From the incomplete last line of a running log: empty, stays
    page = xxl_logread_bytes (s_logdir, 51, s_when, 33, 0, 0, &len, &next, &at_end, err,
                              sizeof err);
    XXL_CHECK_MSG (page && len == 0 && next == 33 && at_end == 0,
                   "running, its line not complete: empty page at 33");
    free (page);
    //  Offsets: mid-file, at the end, past the end
    page = xxl_logread_bytes (s_logdir, 51, s_when, 11, 0, 1, &len, &next, &at_end, err,
                              sizeof err);
    XXL_CHECK_MSG (page && len == text_len - 11 && memcmp (page, text + 11, len) == 0
                   && at_end, "from byte 11: the rest");
    free (page);
    page = xxl_logread_bytes (s_logdir, 51, s_when, (int64_t) text_len, 0, 1, &len, &next,
                              &at_end, err, sizeof err);
    XXL_CHECK_MSG (page && len == 0 && next == (int64_t) text_len && at_end == 1,
                   "at the end: empty, at its end");
    free (page);
    page = xxl_logread_bytes (s_logdir, 51, s_when, 1000000, 0, 1, &len, &next, &at_end, err,
                              sizeof err);
    XXL_CHECK_MSG (page && len == 0 && next == 1000000 && at_end == 1,
                   "past the end: empty, next = from (%" PRId64 ")", next);
    free (page);
    page = xxl_logread_bytes (s_logdir, 51, s_when, -5, 0, 1, &len, &next, &at_end, err,
                              sizeof err);
    XXL_CHECK_MSG (page && len == text_len, "a negative offset is 0");
    free (page);

    //  Small pages end at a line end when they hold one: 20 bytes from 0
    //  hold the first line (11 bytes) and part of the second
    page = xxl_logread_bytes (s_logdir, 51, s_when, 0, 20, 1, &len, &next, &at_end, err,
                              sizeof err);
    XXL_CHECK_MSG (page && len == 11 && next == 11 && !at_end, "20-byte page: its line (%zu)",
                   len);
    free (page);
    //  A page holding no line end is cut between characters: bytes 22..
    //  are "three \xf0..." : 8 bytes end inside the 4-byte character
    page = xxl_logread_bytes (s_logdir, 51, s_when, 22, 8, 1, &len, &next, &at_end, err,
                              sizeof err);
    XXL_CHECK_MSG (page && len == 6 && memcmp (page, "three ", 6) == 0 && next == 28,
                   "8 bytes inside a character: cut before it (%zu)", len);
    free (page);
    //  ... and never to nothing: a page smaller than the character keeps it
    page = xxl_logread_bytes (s_logdir, 51, s_when, 28, 2, 1, &len, &next, &at_end, err,
                              sizeof err);
    XXL_CHECK_MSG (page && len == 2 && next == 30, "a 2-byte page at a 4-byte character: 2");
    free (page);

    //  Every page size: the pages joined are the file, none splits a
    //  character
    for (size_t max = 4; max <= 40; max++) {
        int pages;
        size_t total;
        char *all = s_read_all (51, max, &pages, &total);
        XXL_CHECK_MSG (total == text_len && memcmp (all, text, total) == 0,
                       "pages of %zu bytes join to the file (%d pages)", max, pages);
        free (all);
    }
}

static void
test_utf8_cut (void)
{
    XXL_CHECK_INT (xxl_logread_utf8_cut ("abc", 3), 3);
    XXL_CHECK_INT (xxl_logread_utf8_cut ("", 0), 0);
    XXL_CHECK_INT (xxl_logread_utf8_cut ("a\xc3\xa9", 3), 3);
    XXL_CHECK_INT (xxl_logread_utf8_cut ("a\xc3", 2), 1);
    XXL_CHECK_INT (xxl_logread_utf8_cut ("a\xe2\x82", 3), 1);
    XXL_CHECK_INT (xxl_logread_utf8_cut ("a\xe2\x82\xac", 4), 4);
    XXL_CHECK_INT (xxl_logread_utf8_cut ("a\xf0\x9f\x98", 4), 1);
    //  Not UTF-8: stray continuation bytes, a byte that leads nothing
    XXL_CHECK_INT (xxl_logread_utf8_cut ("a\x80", 2), 2);
    XXL_CHECK_INT (xxl_logread_utf8_cut ("\x80\x80\x80\x80\x80", 5), 5);
    XXL_CHECK_INT (xxl_logread_utf8_cut ("a\xff", 2), 2);
    XXL_CHECK_INT (xxl_logread_utf8_cut ("a\xc3\xa9\xa9", 4), 4);
}

//  A running run's log grows between pages: each page ends at a line end,
//  nothing is lost or repeated
static void
test_growing (void)
{
    char err [600];
    size_t len;
    int64_t next;
    int at_end;
    s_log_set (52, "a1\n", 3);
    char *page = xxl_logread_bytes (s_logdir, 52, s_when, 0, 0, 0, &len, &next, &at_end,
                                    err, sizeof err);
    XXL_CHECK_MSG (page && len == 3 && next == 3 && at_end == 1, "first line");
    free (page);
    s_log_append (52, "b2\nc3 half");
    page = xxl_logread_bytes (s_logdir, 52, s_when, next, 0, 0, &len, &next, &at_end, err,
                              sizeof err);
    XXL_CHECK_MSG (page && len == 3 && memcmp (page, "b2\n", 3) == 0 && next == 6
                   && at_end == 0, "the grown line, not the half one");
    free (page);
    s_log_append (52, " done\n");
    page = xxl_logread_bytes (s_logdir, 52, s_when, next, 0, 0, &len, &next, &at_end, err,
                              sizeof err);
    XXL_CHECK_MSG (page && len == 13 && memcmp (page, "c3 half done\n", 13) == 0 && next == 19
                   && at_end == 1, "the completed line whole");
    free (page);
}

//  A page of a log in its day's pack, by byte
static void
test_pack (void)
{
    char err [600];
    size_t len;
    int64_t next;
    int at_end;
    xxl_runpack_t *pack = xxl_runpack_new (s_logdir);
    const char *text = "packed one\npacked two\n";
    XXL_CHECK (pack && xxl_runpack_add (pack, 53, s_when, text, strlen (text)) == 0);
    XXL_CHECK (xxl_runpack_flush (pack) == 0);
    xxl_runpack_destroy (&pack);
    char *page = xxl_logread_bytes (s_logdir, 53, s_when, 11, 0, 1, &len, &next, &at_end,
                                    err, sizeof err);
    XXL_CHECK_MSG (page && len == 11 && streq (page, "packed two\n") && next == 22 && at_end,
                   "packed log from byte 11: '%s' (%s)", page? page: "", err);
    free (page);
}

//  A page 5 GB into a (sparse) file costs its own bytes: read at once
static void
test_far (void)
{
    char err [600];
    size_t len;
    int64_t next;
    int at_end;
    int fd = xxl_runlog_open (s_logdir, 54, s_when);
    const int64_t far = 5LL * 1000 * 1000 * 1000;
    XXL_CHECK (fd >= 0 && ftruncate (fd, far) == 0);
    XXL_CHECK (fd >= 0 && pwrite (fd, "\nfar line\ntail", 14, far) == 14);
    if (fd >= 0)
        close (fd);
    int64_t start = zclock_usecs ();
    char *page = xxl_logread_bytes (s_logdir, 54, s_when, far + 1, 0, 0, &len, &next, &at_end,
                                    err, sizeof err);
    int64_t took = zclock_usecs () - start;
    XXL_CHECK_MSG (page && len == 9 && streq (page, "far line\n") && next == far + 10
                   && !at_end, "the page 5 GB in: %zu bytes", len);
    XXL_CHECK_MSG (took < 500000, "read in %" PRId64 " us (reading 5 GB would take seconds)",
                   took);
    free (page);
    //  A full page of that file's zeros: 1 MiB, all of it (no line end)
    page = xxl_logread_bytes (s_logdir, 54, s_when, 1000, 0, 0, &len, &next, &at_end, err,
                              sizeof err);
    XXL_CHECK_MSG (page && len == XXL_LOGREAD_PAGE_MAX && next == 1000 + XXL_LOGREAD_PAGE_MAX,
                   "a page without a line end is 1 MiB (%zu)", len);
    free (page);
    char path [512];
    xxl_runlog_path (s_logdir, 54, s_when, path, sizeof path);
    unlink (path);
}

//  Pages by line with marks: the same pages as without, and a reader going
//  forward starts where its last page ended
static void
test_marks (void)
{
    char err [600];
    for (int i = 1; i <= 3000; i++) {
        char line [64];
        snprintf (line, sizeof line, "line %04d", i);
        xxl_runlog_append (s_logdir, 55, s_when, line);
    }
    xxl_logread_mark_t marks [4];
    memset (marks, 0, sizeof marks);
    int from = 1, pages = 0, same = 1, at_end = 0;
    while (!at_end && pages < 100) {
        int to = 0, to_plain = 0, end_plain = 0;
        char *page = xxl_logread_lines (s_logdir, 55, s_when, from, 4000, marks, 4, &to,
                                        &at_end, err, sizeof err);
        char *plain = xxl_logread_lines (s_logdir, 55, s_when, from, 4000, NULL, 0, &to_plain,
                                         &end_plain, err, sizeof err);
        same &= page && plain && streq (page, plain) && to == to_plain && at_end == end_plain;
        XXL_CHECK_MSG (!page || marks [0].line == to + 1 || at_end,
                       "the mark is the page's end (%d, page to %d)", marks [0].line, to);
        free (page);
        free (plain);
        from = to + 1;
        pages++;
    }
    XXL_CHECK_MSG (same && at_end && from == 3001, "by line with marks: the same %d pages",
                   pages);
    //  Backwards from the mark: read from the start
    int to = 0;
    char *page = xxl_logread_lines (s_logdir, 55, s_when, 2, 0, marks, 4, &to, NULL, err,
                                    sizeof err);
    XXL_CHECK_MSG (page && strstr (page, "line 0002\n") && !strstr (page, "line 0001\n")
                   && strstr (page, "line 0002\n") < strchr (page, '\n') + 1 && to > 2,
                   "line 2 after the mark moved on: %.60s", page? page: "");
    free (page);
    //  A mark that is not at a line start any more is not trusted
    marks [0].offset += 3;
    page = xxl_logread_lines (s_logdir, 55, s_when, 2990, 0, marks, 4, &to, NULL, err,
                              sizeof err);
    XXL_CHECK_MSG (page && strstr (page, "line 2990\n") && to == 3000,
                   "a wrong mark: read from the start");
    free (page);
    //  Each log has its mark; the oldest goes first
    for (int64_t id = 60; id < 65; id++) {
        s_log_set (id, "x\ny\n", 4);
        free (xxl_logread_lines (s_logdir, id, s_when, 2, 0, marks, 4, &to, NULL, err,
                                 sizeof err));
    }
    int held = 0;
    for (int i = 0; i < 4; i++)
        held += marks [i].log_id >= 61 && marks [i].log_id <= 64 && marks [i].line == 3
             && marks [i].offset == 4;
    XXL_CHECK_MSG (held == 4, "the 4 newest logs hold the 4 marks (%d)", held);
}

int
main (void)
{
    char dir [256];
    if (xxl_test_agent_start (dir, sizeof dir, "logread"))
        return xxl_test_done ();
    setenv ("TZ", "UTC", 1);
    tzset ();
    snprintf (s_logdir, sizeof s_logdir, "%s/logs", dir);
    test_pages ();
    test_utf8_cut ();
    test_growing ();
    test_pack ();
    test_far ();
    test_marks ();
    if (xxl_test_rmtree (dir))
        {}
    return xxl_test_done ();
}
