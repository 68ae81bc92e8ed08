/*  xxl_log.c -- the daemons' one logger (xxl_log.h).

    czmq writes each zsys_* line to its log stream with one fprintf and
    an fflush.  The stream given to it here is a cookie stream (glibc's
    fopencookie) whose writer sees whole lines, judges each by czmq's
    level letter, and writes the kept ones to stderr, rewritten for the
    journal when stderr is its stream.  The writer runs under the
    stream's lock, so lines from several threads never mix.
*/

#define _GNU_SOURCE                     //  fopencookie
#include "xxl_log.h"

#include <pthread.h>
#include <sys/stat.h>

static int s_level = LOG_INFO;
static bool s_journal = false;
static char s_carry [2048];             //  a line begun in an earlier write
static size_t s_carry_len = 0;

int
xxl_log_level (const char *name)
{
    static const char *names [] = { "error", "warning", "notice", "info", "debug" };
    for (int i = 0; name && i < 5; i++)
        if (streq (name, names [i]))
            return LOG_ERR + i;
    return -1;
}

bool
xxl_log_journal (void)
{
    const char *stream = getenv ("JOURNAL_STREAM");
    unsigned long long dev, ino;
    struct stat st;
    if (!stream || sscanf (stream, "%llu:%llu", &dev, &ino) != 2 || fstat (2, &st))
        return false;
    return (unsigned long long) st.st_dev == dev && (unsigned long long) st.st_ino == ino;
}

static void
s_write_all (const char *data, size_t size)
{
    while (size > 0) {
        ssize_t n = write (2, data, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;                     //  nowhere to log that it failed
        data += n;
        size -= (size_t) n;
    }
}

//  One line without its newline: kept or dropped by its level, rewritten
//  for the journal
static void
s_line (const char *line, size_t size)
{
    int priority = LOG_INFO;            //  (a line not from zsys_*)
    const char *text = line;
    if (size >= 3 && line [1] == ':' && line [2] == ' ' && strchr ("EWNID", line [0])) {
        priority = line [0] == 'E'? LOG_ERR: line [0] == 'W'? LOG_WARNING
                 : line [0] == 'N'? LOG_NOTICE: line [0] == 'I'? LOG_INFO: LOG_DEBUG;
        text = line + 3;
    }
    if (priority > s_level)
        return;
    if (!s_journal) {
        char buffer [sizeof s_carry + 1];
        size_t n = size < sizeof s_carry? size: sizeof s_carry;
        memcpy (buffer, line, n);
        buffer [n] = '\n';
        s_write_all (buffer, n + 1);
        return;
    }
    //  czmq's "(ident) " and "yy-mm-dd hh:mm:ss ": the journal has both
    const char *end = line + size;
    if (text < end && *text == '(') {
        const char *close = memchr (text, ')', (size_t) (end - text));
        if (close && close + 1 < end && close [1] == ' ')
            text = close + 2;
    }
    if (end - text >= 18 && text [2] == '-' && text [5] == '-' && text [8] == ' '
    &&  text [11] == ':' && text [14] == ':' && text [17] == ' ')
        text += 18;
    char buffer [sizeof s_carry + 8];
    int head = snprintf (buffer, sizeof buffer, "<%d>", priority);
    size_t n = (size_t) (end - text);
    if (n > sizeof buffer - (size_t) head - 1)
        n = sizeof buffer - (size_t) head - 1;
    memcpy (buffer + head, text, n);
    buffer [head + n] = '\n';
    s_write_all (buffer, (size_t) head + n + 1);
}

static ssize_t
s_stream_write (void *cookie, const char *data, size_t size)
{
    (void) cookie;
    size_t done = 0;
    while (done < size) {
        const char *nl = memchr (data + done, '\n', size - done);
        size_t take = nl? (size_t) (nl - (data + done)): size - done;
        if (s_carry_len + take > sizeof s_carry) {
            //  A line longer than the carry: out as it is, in pieces
            s_line (s_carry, s_carry_len);
            s_carry_len = 0;
            if (take > sizeof s_carry)
                take = sizeof s_carry;
            nl = NULL;
        }
        memcpy (s_carry + s_carry_len, data + done, take);
        s_carry_len += take;
        done += take;
        if (nl) {
            s_line (s_carry, s_carry_len);
            s_carry_len = 0;
            done++;
        }
    }
    return (ssize_t) size;
}

int
xxl_log_open (const char *ident, int level, bool use_syslog)
{
    assert (level >= LOG_ERR && level <= LOG_DEBUG);
    s_level = level;
    zsys_set_logident (ident);
    if (use_syslog) {
        zsys_set_logsystem (true);
        setlogmask (LOG_UPTO (level));
        return 0;
    }
    static FILE *stream = NULL;
    if (!stream) {
        cookie_io_functions_t io = { NULL, s_stream_write, NULL, NULL };
        stream = fopencookie (NULL, "w", io);
        if (!stream)
            return -1;
        setvbuf (stream, NULL, _IOFBF, 16384);
    }
    s_journal = xxl_log_journal ();
    zsys_set_logstream (stream);
    return 0;
}

void
xxl_log_vtag (int priority, const char *tag, const char *format, va_list args)
{
    char *text = zsys_vprintf (format, args);
    if (!text)
        return;
    //  (a line, not a paragraph: libraries end theirs with new lines)
    size_t length = strlen (text);
    while (length && text [length - 1] == '\n')
        text [--length] = 0;
    if (priority <= LOG_ERR)
        zsys_error ("%s: %s", tag, text);
    else
    if (priority == LOG_WARNING)
        zsys_warning ("%s: %s", tag, text);
    else
    if (priority == LOG_NOTICE)
        zsys_notice ("%s: %s", tag, text);
    else
    if (priority == LOG_INFO)
        zsys_info ("%s: %s", tag, text);
    else
        zsys_debug ("%s: %s", tag, text);
    free (text);
}

int
xxl_log_limit_pass (xxl_log_limit_t *limit, int burst, int64_t *held)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    int64_t now = zclock_mono ();
    int rc = 0;
    pthread_mutex_lock (&lock);
    if (limit->since == 0 || now - limit->since >= 60000) {
        limit->since = now;
        limit->lines = 0;
    }
    if (limit->lines < burst) {
        limit->lines++;
        *held = limit->held;
        limit->held = 0;
    }
    else {
        limit->held++;
        rc = -1;
    }
    pthread_mutex_unlock (&lock);
    return rc;
}
