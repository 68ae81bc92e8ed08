/*  xxl_test.h -- the few helpers every C unit test shares.

    XXL_CHECK records a pass or a failure with its line; xxl_test_done
    prints the closing line "N passed, M failed" that CI reads and returns
    the exit status.  Every check counts exactly once, pass or fail; a
    failure prints one line "FAIL file:line: ..." on stderr.

    XXL_CHECK (cond)                 the condition's text on failure
    XXL_CHECK_MSG (cond, fmt, ...)   a printf message on failure
    XXL_CHECK_HAS (text, part)       text holds part (NULL text fails)
    XXL_CHECK_LACKS (text, part)     text is not NULL and lacks part
    XXL_CHECK_STR (got, want)        got is not NULL and equals want
    XXL_CHECK_INT (got, want)        equal as long long, both shown

    A test that may fail thousands of times (a table of cases) defines
    XXL_TEST_REPORTS before including this header: failures past that many
    are counted but not printed.

    xxl_test_tmpdir makes a fresh folder $TMPDIR/xxl-test-NAME-XXXXXX (or
    under /tmp); xxl_test_write writes a small file whole; xxl_test_rmtree
    removes a folder and all it holds.  They
    use mkdtemp: the default gnu dialect, _GNU_SOURCE or _POSIX_C_SOURCE
    200809L declares it.
*/

#ifndef XXL_TEST_H_INCLUDED
#define XXL_TEST_H_INCLUDED

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef XXL_TEST_REPORTS
#   define XXL_TEST_REPORTS INT_MAX
#endif

static int xxl_test_passed = 0;
static int xxl_test_failed = 0;

//  Counts a failure and prints "FAIL file:line: message" on stderr, unless
//  XXL_TEST_REPORTS failures were printed already
static inline void __attribute__ ((format (printf, 3, 4)))
xxl_test_fail (const char *file, int line, const char *format, ...)
{
    xxl_test_failed++;
    if (xxl_test_failed > XXL_TEST_REPORTS)
        return;
    va_list args;
    va_start (args, format);
    fprintf (stderr, "FAIL %s:%d: ", file, line);
    vfprintf (stderr, format, args);
    fprintf (stderr, "\n");
    va_end (args);
}

#define XXL_CHECK(cond) do { \
    if (cond) xxl_test_passed++; \
    else xxl_test_fail (__FILE__, __LINE__, "%s", #cond); \
} while (0)

#define XXL_CHECK_MSG(cond, ...) do { \
    if (cond) xxl_test_passed++; \
    else xxl_test_fail (__FILE__, __LINE__, __VA_ARGS__); \
} while (0)

#define XXL_CHECK_HAS(text, part) do { \
    const char *t_ = (text), *p_ = (part); \
    if (t_ && strstr (t_, p_)) xxl_test_passed++; \
    else xxl_test_fail (__FILE__, __LINE__, "'%s' lacks '%s'", t_? t_: "(null)", p_); \
} while (0)

#define XXL_CHECK_LACKS(text, part) do { \
    const char *t_ = (text), *p_ = (part); \
    if (t_ && !strstr (t_, p_)) xxl_test_passed++; \
    else xxl_test_fail (__FILE__, __LINE__, "'%s' holds '%s'", t_? t_: "(null)", p_); \
} while (0)

#define XXL_CHECK_STR(got, want) do { \
    const char *g_ = (got), *w_ = (want); \
    if (g_ && strcmp (g_, w_) == 0) xxl_test_passed++; \
    else xxl_test_fail (__FILE__, __LINE__, "got '%s', want '%s'", g_? g_: "(null)", w_); \
} while (0)

#define XXL_CHECK_INT(got, want) do { \
    long long g_ = (long long) (got), w_ = (long long) (want); \
    if (g_ == w_) xxl_test_passed++; \
    else xxl_test_fail (__FILE__, __LINE__, "%s is %lld, want %lld", #got, g_, w_); \
} while (0)

static inline int
xxl_test_done (void)
{
    printf ("%d passed, %d failed\n", xxl_test_passed, xxl_test_failed);
    return xxl_test_failed? 1: 0;
}

//  Makes $TMPDIR/xxl-test-NAME-XXXXXX (TMPDIR unset: /tmp) into dir.
//  0 if made; else -1, having printed "cannot create temp folder" and
//  counted a failure (the caller returns xxl_test_done ()).
static inline int
xxl_test_tmpdir (char *dir, size_t size, const char *name)
{
    const char *tmp = getenv ("TMPDIR")? getenv ("TMPDIR"): "/tmp";
    int length = snprintf (dir, size, "%s/xxl-test-%s-XXXXXX", tmp, name);
    if (length < 0 || (size_t) length >= size || !mkdtemp (dir)) {
        printf ("cannot create temp folder\n");
        xxl_test_failed++;
        return -1;
    }
    return 0;
}

//  Writes text as the whole of the file at path (made or emptied first);
//  0 if written
static inline int
xxl_test_write (const char *path, const char *text)
{
    FILE *file = fopen (path, "w");
    if (!file)
        return -1;
    int rc = fputs (text, file) < 0? -1: 0;
    return fclose (file) == 0? rc: -1;
}

//  Removes path and all below it (rm -rf); 0 if done
static inline int
xxl_test_rmtree (const char *path)
{
    char command [1100];
    snprintf (command, sizeof command, "rm -rf '%s'", path);
    return system (command);
}

#endif
