/*  xxl_runpack.c -- the day's pack of short run logs.

    One writer per agent holds a few open days (a run's day is its
    logDateTime's, so runs of two days interleave around midnight), each
    with a buffer of records and one of index entries whose offsets are
    relative to the buffer; a flush takes the flock, reads the pack's size
    as the base, and writes both buffers.  The reader scans the index from
    its end (recent runs are the ones asked for) in 64 KB reads.
    Calls go one way: down into xxl_runlog.h for the day's folder; it
    calls nothing here.  Reading a run's log, file or pack, is
    xxl_logread.h's, built on both.
*/

#define _GNU_SOURCE
#include "xxl_runpack.h"
#include "xxl_runlog.h"

#include <czmq.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DAYS            4                   //  days open at once
#define FLUSH_AT        (256 * 1024)        //  buffered bytes that make an add flush
#define IDLE_CLOSE_MS   60000               //  a day not added to this long is closed
#define HEADER_MAX      64                  //  "### logId N, L bytes\n" fits

typedef struct {
    int64_t log_id, offset;
} entry_t;

typedef struct {
    char dir [4096];                    //  "" when the slot is free
    int pack_fd, idx_fd;
    char *buf;                          //  records not yet written
    size_t len, cap;
    entry_t *entries;                   //  their index entries (offsets in buf)
    size_t count, entries_cap;
    int64_t used_ms;                    //  last add, monotonic
} day_t;

struct _xxl_runpack_t {
    char *logdir;
    pthread_mutex_t lock;
    day_t days [DAYS];
    int warned;                         //  a failed write was logged
};

static int64_t
s_mono_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

//  The folder of the day of log_date_time into buf; 0 or -1 (too long)
static int
s_day_dir (const char *logdir, int64_t log_date_time, char *buf, size_t buflen)
{
    if (xxl_runlog_path (logdir, 0, log_date_time, buf, buflen))
        return -1;
    char *slash = strrchr (buf, '/');
    *slash = 0;
    return 0;
}

static int
s_write_all (int fd, const void *data, size_t len)
{
    const char *p = (const char *) data;
    while (len) {
        ssize_t n = write (fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t) n;
    }
    return 0;
}

static void
s_day_close (day_t *day)
{
    if (day->pack_fd >= 0)
        close (day->pack_fd);
    if (day->idx_fd >= 0)
        close (day->idx_fd);
    day->pack_fd = day->idx_fd = -1;
    day->dir [0] = 0;
    day->len = day->count = 0;
}

//  Writes a day's buffers.  Caller holds the lock.
static int
s_day_flush (xxl_runpack_t *self, day_t *day)
{
    if (!day->len)
        return 0;
    int rc = 0;
    flock (day->pack_fd, LOCK_EX);
    struct stat st;
    if (fstat (day->pack_fd, &st))
        rc = -1;
    else {
        for (size_t i = 0; i < day->count; i++)
            day->entries [i].offset += (int64_t) st.st_size;
        //  Records first: an entry is only ever written after its record
        if (s_write_all (day->pack_fd, day->buf, day->len)
        ||  s_write_all (day->idx_fd, day->entries, day->count * sizeof (entry_t)))
            rc = -1;
    }
    flock (day->pack_fd, LOCK_UN);
    if (rc && !self->warned) {
        zsys_warning ("runpack: cannot write the run logs of %zu runs to %s/runs.pack: %s",
                      day->count, day->dir, strerror (errno));
        self->warned = 1;
    }
    day->len = day->count = 0;
    return rc;
}

//  The open day for dir, opening it in a free (or the least recently used)
//  slot; NULL if its files cannot be opened.  Caller holds the lock.
static day_t *
s_day_open (xxl_runpack_t *self, const char *dir)
{
    day_t *oldest = NULL;
    for (int i = 0; i < DAYS; i++) {
        day_t *day = &self->days [i];
        if (day->dir [0] && streq (day->dir, dir))
            return day;
        if (!oldest || !day->dir [0]
        ||  (oldest->dir [0] && day->used_ms < oldest->used_ms))
            oldest = day;
    }
    if (oldest->dir [0]) {
        s_day_flush (self, oldest);
        s_day_close (oldest);
    }
    char path [4096 + 16];
    if (mkdir (dir, XXL_RUNLOG_DIR_MODE) && errno == ENOENT) {
        //  logdir itself is gone: make it, then the day
        char parent [4096];
        snprintf (parent, sizeof parent, "%s", dir);
        char *slash = strrchr (parent, '/');
        if (slash) {
            *slash = 0;
            mkdir (parent, XXL_RUNLOG_DIR_MODE);
        }
        mkdir (dir, XXL_RUNLOG_DIR_MODE);
    }
    snprintf (path, sizeof path, "%s/runs.pack", dir);
    oldest->pack_fd = open (path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, XXL_RUNLOG_FILE_MODE);
    snprintf (path, sizeof path, "%s/runs.idx", dir);
    oldest->idx_fd = open (path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, XXL_RUNLOG_FILE_MODE);
    if (oldest->pack_fd < 0 || oldest->idx_fd < 0) {
        if (!self->warned) {
            zsys_warning ("runpack: cannot open %s: %s", path, strerror (errno));
            self->warned = 1;
        }
        s_day_close (oldest);
        return NULL;
    }
    snprintf (oldest->dir, sizeof oldest->dir, "%s", dir);
    return oldest;
}

xxl_runpack_t *
xxl_runpack_new (const char *logdir)
{
    assert (logdir);
    xxl_runpack_t *self = (xxl_runpack_t *) calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->logdir = strdup (logdir);
    if (!self->logdir) {
        free (self);
        return NULL;
    }
    pthread_mutex_init (&self->lock, NULL);
    for (int i = 0; i < DAYS; i++)
        self->days [i].pack_fd = self->days [i].idx_fd = -1;
    return self;
}

void
xxl_runpack_destroy (xxl_runpack_t **self_p)
{
    assert (self_p);
    xxl_runpack_t *self = *self_p;
    if (!self)
        return;
    for (int i = 0; i < DAYS; i++) {
        day_t *day = &self->days [i];
        if (day->dir [0])
            s_day_flush (self, day);
        s_day_close (day);
        free (day->buf);
        free (day->entries);
    }
    pthread_mutex_destroy (&self->lock);
    free (self->logdir);
    free (self);
    *self_p = NULL;
}

int
xxl_runpack_add (xxl_runpack_t *self, int64_t log_id, int64_t log_date_time,
                 const char *text, size_t len)
{
    assert (self);
    if (len > XXL_RUNPACK_RUN_MAX || (len && !text))
        return -1;
    char dir [4096];
    if (s_day_dir (self->logdir, log_date_time, dir, sizeof dir))
        return -1;
    char header [HEADER_MAX];
    int header_len = snprintf (header, sizeof header, "### logId %lld, %zu bytes\n",
                               (long long) log_id, len);
    pthread_mutex_lock (&self->lock);
    day_t *day = s_day_open (self, dir);
    int rc = -1;
    if (day) {
        size_t need = day->len + (size_t) header_len + len;
        if (need > day->cap) {
            size_t cap = day->cap? day->cap: 64 * 1024;
            while (cap < need)
                cap *= 2;
            char *buf = (char *) realloc (day->buf, cap);
            if (buf) {
                day->buf = buf;
                day->cap = cap;
            }
        }
        if (day->count == day->entries_cap) {
            size_t cap = day->entries_cap? day->entries_cap * 2: 1024;
            entry_t *entries = (entry_t *) realloc (day->entries, cap * sizeof (entry_t));
            if (entries) {
                day->entries = entries;
                day->entries_cap = cap;
            }
        }
        if (need <= day->cap && day->count < day->entries_cap) {
            day->entries [day->count].log_id = log_id;
            day->entries [day->count].offset = (int64_t) day->len;
            day->count++;
            memcpy (day->buf + day->len, header, (size_t) header_len);
            if (len)
                memcpy (day->buf + day->len + header_len, text, len);
            day->len = need;
            day->used_ms = s_mono_ms ();
            rc = 0;
            if (day->len >= FLUSH_AT)
                s_day_flush (self, day);
        }
    }
    pthread_mutex_unlock (&self->lock);
    return rc;
}

int
xxl_runpack_flush (xxl_runpack_t *self)
{
    assert (self);
    int rc = 0;
    int64_t now = s_mono_ms ();
    pthread_mutex_lock (&self->lock);
    for (int i = 0; i < DAYS; i++) {
        day_t *day = &self->days [i];
        if (!day->dir [0])
            continue;
        if (s_day_flush (self, day))
            rc = -1;
        if (now - day->used_ms >= IDLE_CLOSE_MS)
            s_day_close (day);
    }
    pthread_mutex_unlock (&self->lock);
    return rc;
}

//  Reads exactly len bytes at offset; 0 or -1
static int
s_pread_all (int fd, void *buf, size_t len, off_t offset)
{
    char *p = (char *) buf;
    while (len) {
        ssize_t n = pread (fd, p, len, offset);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t) n;
        offset += n;
    }
    return 0;
}

//  The offset of log_id's newest entry in the index, or -1
static int64_t
s_index_find (int fd, int64_t log_id)
{
    struct stat st;
    if (fstat (fd, &st))
        return -1;
    enum { CHUNK = 4096 };
    entry_t *chunk = (entry_t *) malloc (CHUNK * sizeof (entry_t));
    if (!chunk)
        return -1;
    int64_t found = -1;
    //  Whole entries only: a torn last entry is ignored
    size_t end = (size_t) st.st_size / sizeof (entry_t);
    while (end > 0 && found < 0) {
        size_t start = end > CHUNK? end - CHUNK: 0;
        size_t count = end - start;
        if (s_pread_all (fd, chunk, count * sizeof (entry_t),
                         (off_t) (start * sizeof (entry_t))))
            break;
        for (size_t i = count; i-- > 0; )
            if (chunk [i].log_id == log_id) {
                found = chunk [i].offset;
                break;
            }
        end = start;
    }
    free (chunk);
    return found;
}

char *
xxl_runpack_find (const char *logdir, int64_t log_id, int64_t log_date_time,
                  size_t *len)
{
    char dir [4096], path [4096 + 16];
    if (!logdir || s_day_dir (logdir, log_date_time, dir, sizeof dir))
        return NULL;
    snprintf (path, sizeof path, "%s/runs.idx", dir);
    int idx_fd = open (path, O_RDONLY | O_CLOEXEC);
    if (idx_fd < 0)
        return NULL;
    int64_t offset = s_index_find (idx_fd, log_id);
    close (idx_fd);
    if (offset < 0)
        return NULL;
    snprintf (path, sizeof path, "%s/runs.pack", dir);
    int pack_fd = open (path, O_RDONLY | O_CLOEXEC);
    if (pack_fd < 0)
        return NULL;
    char *text = NULL;
    struct stat st;
    char header [HEADER_MAX + 1];
    size_t header_len = HEADER_MAX;
    if (fstat (pack_fd, &st) == 0 && offset < (int64_t) st.st_size) {
        if ((int64_t) header_len > st.st_size - offset)
            header_len = (size_t) (st.st_size - offset);
        if (s_pread_all (pack_fd, header, header_len, (off_t) offset) == 0) {
            header [header_len] = 0;
            long long id;
            size_t size;
            int used = 0;
            char *newline = strchr (header, '\n');
            if (newline
            &&  sscanf (header, "### logId %lld, %zu bytes%n", &id, &size, &used) == 2
            &&  header + used == newline && id == log_id && size <= XXL_RUNPACK_RUN_MAX) {
                int64_t body = offset + (newline + 1 - header);
                if (body + (int64_t) size <= st.st_size) {
                    text = (char *) malloc (size + 1);
                    if (text && s_pread_all (pack_fd, text, size, (off_t) body) == 0) {
                        text [size] = 0;
                        if (len)
                            *len = size;
                    }
                    else {
                        free (text);
                        text = NULL;
                    }
                }
            }
        }
    }
    close (pack_fd);
    return text;
}
