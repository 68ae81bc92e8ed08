/*  xxl_runlog.c -- run log files of an agent.

    Plain files, one per run, appended with O_APPEND and one write() per
    line so that the agent, an isolated runner and a script can all append
    to the same file without tearing lines.  Owns the path of a run's log
    ({logdir}/yyyy-mm-dd/{logId}.log), its stamped lines and the day
    folders' retention.  MUST NOT call up into xxl_runpack or xxl_logread:
    they are built on this file (reading a log, file or pack, is
    xxl_logread.h's).
*/

#define _GNU_SOURCE
#include "xxl_runlog.h"

#include <czmq.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int64_t
s_now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

//  Identity of the time zone that tzset() last loaded: a cached local time
//  is only reused while it is the same (a program may change TZ and call
//  tzset, as the tests do)
static int
s_same_zone (long zone, const char *name)
{
    return zone == timezone && name == tzname [0];
}

//  Formats the local date of ms (<= 0: now) as yyyy-mm-dd.  The date of
//  the last call on this thread is kept with the span of seconds it holds,
//  so most calls cost no localtime_r.
static void
s_date (int64_t ms, char *buf, size_t buflen)
{
    static __thread time_t s_from = 1, s_until = 0;     //  [from, until)
    static __thread long s_zone;
    static __thread const char *s_zone_name;
    static __thread char s_text [16];
    if (ms <= 0)
        ms = s_now_ms ();
    time_t secs = (time_t) (ms / 1000);
    if (secs < s_from || secs >= s_until || !s_same_zone (s_zone, s_zone_name)) {
        struct tm tm;
        localtime_r (&secs, &tm);
        strftime (s_text, sizeof s_text, "%Y-%m-%d", &tm);
        s_zone = timezone;
        s_zone_name = tzname [0];
        //  From local midnight, for 23 hours: a day with a daylight saving
        //  change is never shorter
        s_from = secs - (tm.tm_hour * 3600 + tm.tm_min * 60 + tm.tm_sec);
        s_until = s_from + 23 * 3600;
        if (secs >= s_until)
            s_until = secs + 1;         //  the last hour of a day: this second only
    }
    snprintf (buf, buflen, "%s", s_text);
}

int
xxl_runlog_path (const char *logdir, int64_t log_id, int64_t log_date_time,
                 char *buf, size_t buflen)
{
    if (!logdir || !buf)
        return -1;
    char date [32];
    s_date (log_date_time, date, sizeof date);
    //  "{logdir}/{date}/{logId}.log", without a printf per run
    char id [24];
    size_t id_len = 0;
    uint64_t value = log_id < 0? (uint64_t) 0 - (uint64_t) log_id: (uint64_t) log_id;
    do {
        id [sizeof id - 1 - id_len++] = (char) ('0' + value % 10);
        value /= 10;
    } while (value);
    if (log_id < 0)
        id [sizeof id - 1 - id_len++] = '-';
    size_t dir_len = strlen (logdir), date_len = strlen (date);
    if (dir_len + 1 + date_len + 1 + id_len + 4 >= buflen)
        return -1;
    char *p = buf;
    memcpy (p, logdir, dir_len);
    p += dir_len;
    *p++ = '/';
    memcpy (p, date, date_len);
    p += date_len;
    *p++ = '/';
    memcpy (p, id + sizeof id - id_len, id_len);
    p += id_len;
    memcpy (p, ".log", 5);
    return 0;
}

int
xxl_runlog_open (const char *logdir, int64_t log_id, int64_t log_date_time)
{
    char path [4096];
    if (xxl_runlog_path (logdir, log_id, log_date_time, path, sizeof path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = open (path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, XXL_RUNLOG_FILE_MODE);
    if (fd == -1 && errno == ENOENT) {
        //  Create logdir and the date folder, then retry
        char *slash = strrchr (path, '/');
        *slash = 0;
        char *date_slash = strrchr (path, '/');
        if (date_slash) {
            *date_slash = 0;
            mkdir (path, XXL_RUNLOG_DIR_MODE);
            *date_slash = '/';
        }
        mkdir (path, XXL_RUNLOG_DIR_MODE);
        *slash = '/';
        fd = open (path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, XXL_RUNLOG_FILE_MODE);
    }
    return fd;
}

size_t
xxl_runlog_format (char *buf, size_t buflen, const char *line)
{
    if (!buf || buflen < 64)
        return 0;
    //  The "yyyy-MM-dd HH:mm:ss" of the current second and the
    //  " [tid/pid] " of this thread are made once, not per line
    static __thread time_t s_second = -1;
    static __thread long s_zone;
    static __thread const char *s_zone_name;
    static __thread char s_stamp [32];
    static __thread size_t s_stamp_len;
    static __thread char s_ids [48];
    static __thread size_t s_ids_len;
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    if (ts.tv_sec != s_second || !s_same_zone (s_zone, s_zone_name)) {
        struct tm tm;
        localtime_r (&ts.tv_sec, &tm);
        s_stamp_len = strftime (s_stamp, sizeof s_stamp, "%Y-%m-%d %H:%M:%S", &tm);
        s_zone = timezone;
        s_zone_name = tzname [0];
        s_second = ts.tv_sec;
    }
    if (!s_ids_len) {
        int m = snprintf (s_ids, sizeof s_ids, " [%ld/%ld] ",
                          (long) syscall (SYS_gettid), (long) getpid ());
        s_ids_len = m > 0 && (size_t) m < sizeof s_ids? (size_t) m: 0;
    }
    //  buflen >= 64 holds the stamp (19), ".SSS" and the ids (<= 44)
    memcpy (buf, s_stamp, s_stamp_len);
    size_t n = s_stamp_len;
    int millis = (int) (ts.tv_nsec / 1000000);
    buf [n++] = '.';
    buf [n++] = (char) ('0' + millis / 100);
    buf [n++] = (char) ('0' + millis / 10 % 10);
    buf [n++] = (char) ('0' + millis % 10);
    if (n + s_ids_len < buflen - 1) {
        memcpy (buf + n, s_ids, s_ids_len);
        n += s_ids_len;
    }
    if (n >= buflen - 1)
        n = buflen - 2;
    size_t len = line? strlen (line): 0;
    if (len > buflen - n - 1)
        len = buflen - n - 1;
    if (len)
        memcpy (buf + n, line, len);
    n += len;
    buf [n++] = '\n';
    return n;
}

int
xxl_runlog_write (int fd, const char *line)
{
    if (fd < 0)
        return -1;
    char small [1024];
    size_t need = (line? strlen (line): 0) + 80;
    char *buf = need <= sizeof small? small: (char *) malloc (need);
    if (!buf)
        return -1;
    size_t n = xxl_runlog_format (buf, need <= sizeof small? sizeof small: need, line);
    ssize_t rc = write (fd, buf, n);
    if (buf != small)
        free (buf);
    return rc == (ssize_t) n? 0: -1;
}

int
xxl_runlog_write2 (int fd, const char *line1, const char *line2)
{
    if (fd < 0)
        return -1;
    size_t len1 = (line1? strlen (line1): 0) + 80;
    size_t len2 = (line2? strlen (line2): 0) + 80;
    char small [2048];
    char *buf = len1 + len2 <= sizeof small? small: (char *) malloc (len1 + len2);
    if (!buf)
        return -1;
    size_t n = xxl_runlog_format (buf, len1, line1);
    n += xxl_runlog_format (buf + n, len2, line2);
    ssize_t rc = write (fd, buf, n);
    if (buf != small)
        free (buf);
    return rc == (ssize_t) n? 0: -1;
}

int
xxl_runlog_append (const char *logdir, int64_t log_id, int64_t log_date_time,
                   const char *line)
{
    int fd = xxl_runlog_open (logdir, log_id, log_date_time);
    if (fd == -1)
        return -1;
    int rc = xxl_runlog_write (fd, line);
    close (fd);
    return rc;
}

//  Recursively removes path; returns 0 or -1
static int
s_remove_tree (const char *path)
{
    DIR *dir = opendir (path);
    if (!dir)
        return unlink (path);
    struct dirent *entry;
    while ((entry = readdir (dir))) {
        if (streq (entry->d_name, ".") || streq (entry->d_name, ".."))
            continue;
        char child [4096];
        snprintf (child, sizeof child, "%s/%s", path, entry->d_name);
        struct stat st;
        if (lstat (child, &st) == 0 && S_ISDIR (st.st_mode))
            s_remove_tree (child);
        else
            unlink (child);
    }
    closedir (dir);
    return rmdir (path);
}

int
xxl_runlog_clean (const char *logdir, int keep_days, int64_t now_ms)
{
    if (!logdir)
        return -1;
    if (keep_days < 3)
        keep_days = 3;
    DIR *dir = opendir (logdir);
    if (!dir)
        return -1;
    //  Local midnight of today minus keep_days
    time_t now = (time_t) (now_ms / 1000);
    struct tm tm;
    localtime_r (&now, &tm);
    tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
    tm.tm_mday -= keep_days;
    tm.tm_isdst = -1;
    time_t limit = mktime (&tm);

    int removed = 0;
    struct dirent *entry;
    while ((entry = readdir (dir))) {
        int y, m, d;
        char extra;
        if (strlen (entry->d_name) != 10
        ||  sscanf (entry->d_name, "%4d-%2d-%2d%c", &y, &m, &d, &extra) != 3)
            continue;
        struct tm day = { 0 };
        day.tm_year = y - 1900;
        day.tm_mon = m - 1;
        day.tm_mday = d;
        day.tm_isdst = -1;
        time_t when = mktime (&day);
        if (when == (time_t) -1 || when >= limit)
            continue;
        char path [4096];
        snprintf (path, sizeof path, "%s/%s", logdir, entry->d_name);
        if (s_remove_tree (path) == 0)
            removed++;
        else
            zsys_warning ("runlog: cannot remove %s: %s", path, strerror (errno));
    }
    closedir (dir);
    return removed;
}
