/*  test_log.c -- the daemons' logger (sdk/src/xxl_log.h): level names,
    level filtering of zsys_* lines, the journal's <N> priority prefixes
    when stderr is JOURNAL_STREAM, czmq's own lines otherwise, long lines,
    the plugin hosts' tagged lines, and the rate limit.
*/

#include "xxl_test.h"
#include "xxl_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static char s_path [300];

//  stderr to a fresh file; JOURNAL_STREAM names it when journal
static void
s_capture (bool journal)
{
    int fd = open (s_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert (fd >= 0);
    dup2 (fd, 2);
    close (fd);
    struct stat st;
    fstat (2, &st);
    char value [64];
    snprintf (value, sizeof value, "%llu:%llu", (unsigned long long) st.st_dev,
              (unsigned long long) st.st_ino + (journal? 0: 1));
    setenv ("JOURNAL_STREAM", value, 1);
}

static char *
s_captured (void)
{
    static char text [16384];
    int fd = open (s_path, O_RDONLY);
    ssize_t n = fd >= 0? read (fd, text, sizeof text - 1): -1;
    text [n > 0? n: 0] = 0;
    if (fd >= 0)
        close (fd);
    return text;
}

static void
s_tagged (int priority, const char *format, ...)
{
    va_list args;
    va_start (args, format);
    xxl_log_vtag (priority, "alarms", format, args);
    va_end (args);
}

int
main (void)
{
    zsys_init ();
    XXL_CHECK_INT (xxl_log_level ("error"), LOG_ERR);
    XXL_CHECK_INT (xxl_log_level ("warning"), LOG_WARNING);
    XXL_CHECK_INT (xxl_log_level ("notice"), LOG_NOTICE);
    XXL_CHECK_INT (xxl_log_level ("info"), LOG_INFO);
    XXL_CHECK_INT (xxl_log_level ("debug"), LOG_DEBUG);
    XXL_CHECK_INT (xxl_log_level ("warn"), -1);
    XXL_CHECK_INT (xxl_log_level ("INFO"), -1);
    XXL_CHECK_INT (xxl_log_level (""), -1);
    XXL_CHECK_INT (xxl_log_level (NULL), -1);

    char dir [256];
    if (xxl_test_tmpdir (dir, sizeof dir, "log"))
        return xxl_test_done ();
    snprintf (s_path, sizeof s_path, "%s/stderr", dir);
    int saved = dup (2);

    //  The journal's stream, level info (the default): no debug line
    s_capture (true);
    XXL_CHECK (xxl_log_journal ());
    XXL_CHECK_INT (xxl_log_open ("test-log", LOG_INFO, false), 0);
    zsys_debug ("a debug line");
    zsys_info ("an info line %d", 1);
    zsys_notice ("a notice line");
    zsys_warning ("a warning line");
    zsys_error ("an error line");
    s_tagged (LOG_WARNING, "webhook: %s", "no allowed target");
    s_tagged (LOG_DEBUG, "a tagged debug line");
    s_tagged (LOG_WARNING, "a library's line %s\n\n", "ends");
    char *text = s_captured ();
    XXL_CHECK_STR (text, "<6>an info line 1\n<5>a notice line\n<4>a warning line\n"
                         "<3>an error line\n<4>alarms: webhook: no allowed target\n"
                         "<4>alarms: a library's line ends\n");

    //  Level warning: info and notice go too
    s_capture (true);
    xxl_log_open ("test-log", LOG_WARNING, false);
    zsys_info ("an info line");
    zsys_notice ("a notice line");
    zsys_warning ("a warning line");
    XXL_CHECK_STR (s_captured (), "<4>a warning line\n");

    //  Level debug: debug lines too
    s_capture (true);
    xxl_log_open ("test-log", LOG_DEBUG, false);
    zsys_debug ("a debug line");
    s_tagged (LOG_DEBUG, "a tagged debug line");
    XXL_CHECK_STR (s_captured (), "<7>a debug line\n<7>alarms: a tagged debug line\n");

    //  Not the journal's stream (JOURNAL_STREAM names another file):
    //  czmq's lines, filtered alike
    s_capture (false);
    XXL_CHECK (!xxl_log_journal ());
    xxl_log_open ("test-log", LOG_INFO, false);
    zsys_debug ("a debug line");
    zsys_warning ("a warning line");
    text = s_captured ();
    XXL_CHECK_LACKS (text, "debug");
    XXL_CHECK_LACKS (text, "<");
    XXL_CHECK (strncmp (text, "W: (test-log) ", 14) == 0);
    XXL_CHECK_HAS (text, " a warning line\n");
    unsetenv ("JOURNAL_STREAM");
    XXL_CHECK (!xxl_log_journal ());

    //  A line longer than czmq's 1 KiB: cut by czmq, one whole line here
    s_capture (true);
    xxl_log_open ("test-log", LOG_INFO, false);
    char long_text [3000];
    memset (long_text, 'x', sizeof long_text - 1);
    long_text [sizeof long_text - 1] = 0;
    zsys_info ("%s", long_text);
    zsys_info ("after");
    text = s_captured ();
    XXL_CHECK (strncmp (text, "<6>xxx", 6) == 0);
    char *nl = strchr (text, '\n');
    XXL_CHECK (nl && streq (nl + 1, "<6>after\n"));

    //  The rate limit: 3 a minute pass, the rest are counted and told
    xxl_log_limit_t limit = { 0 };
    int64_t held = -1;
    int passed = 0;
    for (int i = 0; i < 10; i++)
        passed += xxl_log_limit_pass (&limit, 3, &held) == 0;
    XXL_CHECK_INT (passed, 3);
    XXL_CHECK_INT (held, 0);
    limit.since -= 60000;               //  a minute later
    XXL_CHECK_INT (xxl_log_limit_pass (&limit, 3, &held), 0);
    XXL_CHECK_INT (held, 7);
    XXL_CHECK_INT (xxl_log_limit_pass (&limit, 3, &held), 0);
    XXL_CHECK_INT (held, 0);

    dup2 (saved, 2);
    close (saved);
    xxl_test_rmtree (dir);
    return xxl_test_done ();
}
