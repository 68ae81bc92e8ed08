/*  xxl_logsink.c -- one run's log, as the executor writes it (see
    xxl_logsink.h).

    Its contract (ownership, threads, errors) is the header's.  Owns the
    run's log state (its fd, the lines held in memory and whether they
    are held, being made, made or packed).  Written by xxl_runexec.c on
    the run's pool thread; claimed and made by xxl_executor.c for a LOG
    request.
*/

#define _GNU_SOURCE
#include "xxl_logsink.h"
#include "xxl_runlog.h"

#include <czmq.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

//  log_held: made (or never held), held in held_text, being made (or
//  grown, or packed) by the thread that moved it from LOG_HELD to
//  LOG_MAKING, in the day's pack
enum { LOG_MADE = 0, LOG_HELD = 1, LOG_MAKING = 2, LOG_PACKED = 3 };

struct _xxl_logsink_t {
    const char *logdir;
    xxl_runpack_t *pack;                //  NULL: a file per run
    int64_t log_id, log_date_time;
    int log_fd;
    int log_held;                       //  atomic LOG_*: the log file of an
                                        //  in-process run is made late
    char *held_text;                    //  its stamped lines so far (LOG_HELD)
    size_t held_len;
    char *path;                         //  the file's absolute path, once
                                        //  xxl_logsink_file made or found it
    int path_failed;                    //  it could not: warned once
};

xxl_logsink_t *
xxl_logsink_new (const char *logdir, xxl_runpack_t *pack, int64_t log_id, int64_t log_date_time)
{
    xxl_logsink_t *self = (xxl_logsink_t *) calloc (1, sizeof (xxl_logsink_t));
    if (!self)
        return NULL;
    self->logdir = logdir;
    self->pack = pack;
    self->log_id = log_id;
    //  "Now" is pinned at the start, so that every open and the path of
    //  xxl_logsink_file name the same day's file
    if (log_date_time <= 0) {
        struct timespec ts;
        clock_gettime (CLOCK_REALTIME, &ts);
        log_date_time = (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    }
    self->log_date_time = log_date_time;
    self->log_fd = -1;
    return self;
}

void
xxl_logsink_destroy (xxl_logsink_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    xxl_logsink_t *self = *self_p;
    *self_p = NULL;
    if (self->log_fd >= 0)
        close (self->log_fd);
    free (self->held_text);
    free (self->path);
    free (self);
}

//  Makes fd (the held-back log's new file, or -1 if it could not be
//  opened) the log's file: writes the held lines and then extra (may be
//  NULL) into it with one writev, drops them and marks the log made.  The
//  caller moved log_held from LOG_HELD to LOG_MAKING, so no other thread
//  touches the log now.
static void
s_log_fill (xxl_logsink_t *self, int fd, const char *extra, size_t extra_len)
{
    if (fd >= 0) {
        struct iovec parts [2] = {
            { self->held_text, self->held_len }, { (void *) extra, extra? extra_len: 0 }
        };
        ssize_t want = (ssize_t) (parts [0].iov_len + parts [1].iov_len);
        if (want && writev (fd, parts, parts [1].iov_len? 2: 1) != want)
            zsys_warning ("executor: cannot write log of logId %lld: %s",
                          (long long) self->log_id, strerror (errno));
    }
    free (self->held_text);
    self->held_text = NULL;
    self->held_len = 0;
    self->log_fd = fd;
    __atomic_store_n (&self->log_held, LOG_MADE, __ATOMIC_RELEASE);
}

//  Makes the held-back log file: creates it and fills it (s_log_fill).
//  The caller moved log_held from LOG_HELD to LOG_MAKING; runs without
//  the executor's locks (creating a file takes tens of microseconds).
static void
s_log_create (xxl_logsink_t *self, const char *extra, size_t extra_len)
{
    int fd = xxl_runlog_open (self->logdir, self->log_id, self->log_date_time);
    if (fd < 0)
        zsys_warning ("executor: cannot open log of logId %lld: %s",
                      (long long) self->log_id, strerror (errno));
    s_log_fill (self, fd, extra, extra_len);
}

int
xxl_logsink_claim (xxl_logsink_t *self)
{
    int held = LOG_HELD;
    return __atomic_compare_exchange_n (&self->log_held, &held, LOG_MAKING, 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

void
xxl_logsink_make (xxl_logsink_t *self)
{
    s_log_create (self, NULL, 0);
}

//  Formats one or two stamped lines (line2 may be NULL) into a malloc'd
//  buffer; returns it (NULL when out of memory) with its length in *len
static char *
s_log_format (const char *line1, const char *line2, size_t *len)
{
    size_t size1 = (line1? strlen (line1): 0) + 80;
    size_t size2 = line2? strlen (line2) + 80: 0;
    char *buf = (char *) malloc (size1 + size2);
    *len = 0;
    if (buf) {
        *len = xxl_runlog_format (buf, size1, line1);
        if (line2)
            *len += xxl_runlog_format (buf + *len, size2, line2);
    }
    return buf;
}

//  Worker thread: makes the file now if it is still held back (with extra
//  after the held lines; returns 1), else waits until a LOG request that is
//  making it is done (returns 0: extra not written)
static void
s_log_wait_made (xxl_logsink_t *self)
{
    while (__atomic_load_n (&self->log_held, __ATOMIC_ACQUIRE) == LOG_MAKING) {
        struct timespec pause = { 0, 50 * 1000 };
        nanosleep (&pause, NULL);
    }
}

static int
s_log_ensure (xxl_logsink_t *self, const char *extra, size_t extra_len)
{
    if (xxl_logsink_claim (self)) {
        s_log_create (self, extra, extra_len);
        return 1;
    }
    s_log_wait_made (self);
    return 0;
}

const char *
xxl_logsink_file (xxl_logsink_t *self)
{
    if (self->path || self->path_failed)
        return self->path;
    int error = 0;
    if (xxl_logsink_claim (self)) {
        int fd = xxl_runlog_open (self->logdir, self->log_id, self->log_date_time);
        if (fd < 0) {
            //  Held on (into the pack, or a later try at the file)
            error = errno;
            __atomic_store_n (&self->log_held, LOG_HELD, __ATOMIC_RELEASE);
        }
        else
            s_log_fill (self, fd, NULL, 0);
    }
    else
        s_log_wait_made (self);         //  a LOG request is making it
    char path [4096];
    if (!error && (__atomic_load_n (&self->log_held, __ATOMIC_ACQUIRE) != LOG_MADE
                   || self->log_fd < 0))
        error = EBADF;                  //  its file could not be opened
    if (!error && xxl_runlog_path (self->logdir, self->log_id, self->log_date_time,
                                   path, sizeof path))
        error = ENAMETOOLONG;
    if (!error) {
        //  A relative logdir: the file exists now, so realpath finds it
        self->path = path [0] == '/'? strdup (path): realpath (path, NULL);
        if (!self->path)
            error = errno? errno: ENOMEM;
    }
    if (error) {
        self->path_failed = 1;
        zsys_warning ("executor: no log file for the handler of logId %lld: %s",
                      (long long) self->log_id,
                      error == EBADF? "its file could not be opened": strerror (error));
    }
    return self->path;
}

void
xxl_logsink_lines (xxl_logsink_t *self, const char *line1, const char *line2)
{
    size_t len;
    char *buf = s_log_format (line1, line2, &len);
    if (!buf)
        return;
    if (__atomic_load_n (&self->log_held, __ATOMIC_ACQUIRE) != LOG_MADE) {
        if (self->pack && xxl_logsink_claim (self)) {
            //  Packing: held on while the whole log fits a pack record
            if (self->held_len + len <= XXL_RUNPACK_RUN_MAX) {
                char *grown = (char *) realloc (self->held_text, self->held_len + len);
                if (grown) {
                    memcpy (grown + self->held_len, buf, len);
                    self->held_text = grown;
                    self->held_len += len;
                    __atomic_store_n (&self->log_held, LOG_HELD, __ATOMIC_RELEASE);
                    free (buf);
                    return;
                }
            }
            s_log_create (self, buf, len);
            free (buf);
            return;
        }
        if (s_log_ensure (self, buf, len)) {
            free (buf);
            return;
        }
    }
    if (self->log_fd >= 0 && write (self->log_fd, buf, len) != (ssize_t) len)
        {}                              //  a log line is not worth failing a run
    free (buf);
}

int
xxl_logsink_fd (xxl_logsink_t *self)
{
    return self->log_fd;
}

void
xxl_logsink_newline (xxl_logsink_t *self)
{
    int fd = self->log_fd;
    struct stat st;
    char last;
    if (fd >= 0 && fstat (fd, &st) == 0 && st.st_size > 0
    &&  pread (fd, &last, 1, st.st_size - 1) == 1 && last != '\n') {
        if (write (fd, "\n", 1) < 0)
            {}
    }
}

//  Writes value in decimal into buf (>= 24 bytes); returns buf
static const char *
s_itoa (long long value, char *buf)
{
    char tmp [24];
    size_t n = 0;
    unsigned long long magnitude = value < 0? 0ULL - (unsigned long long) value
                                            : (unsigned long long) value;
    do {
        tmp [n++] = (char) ('0' + magnitude % 10);
        magnitude /= 10;
    } while (magnitude);
    size_t len = 0;
    if (value < 0)
        buf [len++] = '-';
    while (n)
        buf [len++] = tmp [--n];
    buf [len] = 0;
    return buf;
}

//  Joins count strings (NULL ones skipped) into small (size bytes) if they
//  fit, else into a malloc'd buffer; returns it (NULL when out of memory).
//  The caller frees a result that is not small.  Cheaper than asprintf
//  for the two lines every run writes.
static char *
s_join (char *small, size_t size, const char *parts [], size_t count)
{
    size_t total = 1;
    for (size_t i = 0; i < count; i++)
        total += parts [i]? strlen (parts [i]): 0;
    char *buf = total <= size? small: (char *) malloc (total);
    if (!buf)
        return NULL;
    char *p = buf;
    for (size_t i = 0; i < count; i++)
        if (parts [i]) {
            size_t len = strlen (parts [i]);
            memcpy (p, parts [i], len);
            p += len;
        }
    *p = 0;
    return buf;
}

void
xxl_logsink_start (xxl_logsink_t *self, int hold, const char *handler,
                   const char *type, const char *mode, const char *params,
                   int shard_index, int shard_total)
{
    //  "----------- Handler: %s (%s, %s), Param: %s, Shard: %d/%d"
    char small [512], index [24], total [24];
    const char *parts [] = {
        "----------- Handler: ", handler, " (", type, mode? ", ": NULL, mode,
        "), Param: ", params, ", Shard: ", s_itoa (shard_index, index),
        "/", s_itoa (shard_total, total)
    };
    char *line = s_join (small, sizeof small, parts, sizeof parts / sizeof parts [0]);
    const char *start = "----------- xxl-job job execute start -----------";
    if (hold) {
        //  Held back: the file is made by the next write (see xxl_logsink_lines)
        self->held_text = s_log_format (start, line, &self->held_len);
        __atomic_store_n (&self->log_held, LOG_HELD, __ATOMIC_RELEASE);
    }
    else {
        self->log_fd = xxl_runlog_open (self->logdir, self->log_id, self->log_date_time);
        if (self->log_fd < 0)
            zsys_warning ("executor: cannot open log of logId %lld: %s",
                          (long long) self->log_id, strerror (errno));
        xxl_logsink_lines (self, start, line);
    }
    if (line != small)
        free (line);
}

void
xxl_logsink_end (xxl_logsink_t *self, int code, const char *msg)
{
    //  "----------- Result: handleCode=%d, handleMsg = %s"
    char small [512], code_text [24];
    const char *parts [] = {
        "----------- Result: handleCode=", s_itoa (code, code_text),
        ", handleMsg = ", msg? msg: "null"
    };
    char *line = s_join (small, sizeof small, parts, sizeof parts / sizeof parts [0]);
    if (self->path)
        xxl_logsink_newline (self);     //  the handler's own last line may lack it
    if (line) {
        xxl_logsink_lines (self, "----------- xxl-job job execute end(finish) -----------", line);
        if (line != small)
            free (line);
    }
    //  Still held: into the day's pack (else, and when out of memory
    //  above, the file is made with what is held)
    if (self->pack && xxl_logsink_claim (self)) {
        if (xxl_runpack_add (self->pack, self->log_id, self->log_date_time,
                             self->held_text, self->held_len) == 0) {
            free (self->held_text);
            self->held_text = NULL;
            self->held_len = 0;
            __atomic_store_n (&self->log_held, LOG_PACKED, __ATOMIC_RELEASE);
        }
        else
            s_log_create (self, NULL, 0);
    }
    else
        s_log_ensure (self, NULL, 0);
    if (self->log_fd >= 0)
        close (self->log_fd);
    self->log_fd = -1;
}
