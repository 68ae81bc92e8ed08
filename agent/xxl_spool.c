/*  xxl_spool.c -- the agent's durable queue of callback results.

    File format (all integers little-endian):

        header   8 bytes   "XXLSPL1\n"
        record   u32 len   length of the payload
                 u32 crc   CRC-32 (IEEE, as zlib) of the payload
                 payload   len bytes:
                     u8 type = 1 (result):
                         i64 logId, i64 logDateTime, i32 handleCode,
                         u32 msgLen (0xFFFFFFFF = no message), msg bytes
                     u8 type = 2 (ack):
                         i64 logId

    Records are only appended.  Replay applies them in order; the first
    record that is short, fails its CRC or does not parse ends the replay,
    and the file is truncated there (a write torn by a crash), with a
    warning.  Compaction writes the pending results to PATH.tmp, fsyncs it,
    renames it over PATH and fsyncs the folder.
*/

#define _GNU_SOURCE
#include "xxl_spool.h"

#include <czmq.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SPOOL_MAGIC         "XXLSPL1\n"
#define SPOOL_MAGIC_LEN     8
#define TYPE_RESULT         1
#define TYPE_ACK            2
#define MAX_RECORD          (1024 * 1024)
#define NO_MSG              0xFFFFFFFFu
//  The file is compacted once it holds at least this many records that are
//  not pending (a result and its ack are two) and more of them than
//  pending results: each compaction makes a new file (an inode, two
//  fsyncs: ~1 ms of the agent's CPU), so at 1,024 the e2e bench spent 15 %
//  of the agent's CPU on it; at 65,536 it is one compaction per 32,768
//  results, the file ~2 MiB at most beyond twice the pending results
#define COMPACT_DEAD_MIN    65536

typedef struct _node_t {
    xxl_result_t result;
    struct _node_t *prev, *next;        //  pending order
    struct _node_t *chain;              //  next in the same index bucket
} node_t;

struct _xxl_spool_t {
    char *path;
    int fd;
    node_t *head, *tail;
    size_t size;
    node_t **buckets;                   //  index: logId -> node_t, chained
    size_t nbuckets;                    //  a power of two
    size_t dead;                        //  records in the file not pending
    node_t *cursor_next;
};

//  ---------------------------------------------------------------------
//  CRC-32

static uint32_t s_crc_table [256];

static void
s_crc_init (void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1)? 0xEDB88320u ^ (c >> 1): c >> 1;
        s_crc_table [i] = c;
    }
}

static uint32_t
s_crc32 (const unsigned char *data, size_t len)
{
    if (!s_crc_table [1])
        s_crc_init ();
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < len; i++)
        c = s_crc_table [(c ^ data [i]) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

//  ---------------------------------------------------------------------
//  Encoding

typedef struct {
    unsigned char *data;
    size_t size, cap;
} buf_t;

static int
s_buf_reserve (buf_t *buf, size_t more)
{
    if (buf->size + more <= buf->cap)
        return 0;
    size_t cap = buf->cap? buf->cap * 2: 256;
    while (cap < buf->size + more)
        cap *= 2;
    unsigned char *data = (unsigned char *) realloc (buf->data, cap);
    if (!data)
        return -1;
    buf->data = data;
    buf->cap = cap;
    return 0;
}

static void
s_put_u32 (unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p [i] = (unsigned char) (v >> (8 * i));
}

static void
s_put_u64 (unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p [i] = (unsigned char) (v >> (8 * i));
}

static uint32_t
s_get_u32 (const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p [i];
    return v;
}

static uint64_t
s_get_u64 (const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p [i];
    return v;
}

//  Appends one framed record with the given payload; 0 or -1
static int
s_frame (buf_t *buf, const unsigned char *payload, size_t len)
{
    if (s_buf_reserve (buf, 8 + len))
        return -1;
    s_put_u32 (buf->data + buf->size, (uint32_t) len);
    s_put_u32 (buf->data + buf->size + 4, s_crc32 (payload, len));
    memcpy (buf->data + buf->size + 8, payload, len);
    buf->size += 8 + len;
    return 0;
}

//  Appends one framed result record, encoded in place; 0 or -1
static int
s_encode_result (buf_t *buf, const xxl_result_t *result)
{
    size_t msg_len = result->msg? strlen (result->msg): 0;
    if (msg_len > MAX_RECORD - 64)
        msg_len = MAX_RECORD - 64;
    size_t len = 1 + 8 + 8 + 4 + 4 + msg_len;
    if (s_buf_reserve (buf, 8 + len))
        return -1;
    unsigned char *record = buf->data + buf->size;
    unsigned char *payload = record + 8;
    payload [0] = TYPE_RESULT;
    s_put_u64 (payload + 1, (uint64_t) result->log_id);
    s_put_u64 (payload + 9, (uint64_t) result->log_date_time);
    s_put_u32 (payload + 17, (uint32_t) result->code);
    s_put_u32 (payload + 21, result->msg? (uint32_t) msg_len: NO_MSG);
    if (msg_len)
        memcpy (payload + 25, result->msg, msg_len);
    s_put_u32 (record, (uint32_t) len);
    s_put_u32 (record + 4, s_crc32 (payload, len));
    buf->size += 8 + len;
    return 0;
}

static int
s_encode_ack (buf_t *buf, int64_t log_id)
{
    unsigned char payload [9];
    payload [0] = TYPE_ACK;
    s_put_u64 (payload + 1, (uint64_t) log_id);
    return s_frame (buf, payload, sizeof payload);
}

static int
s_write_all (int fd, const unsigned char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write (fd, data, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        data += n;
        len -= (size_t) n;
    }
    return 0;
}

//  ---------------------------------------------------------------------
//  In-memory state

static size_t
s_slot (const xxl_spool_t *self, int64_t log_id)
{
    uint64_t x = (uint64_t) log_id * 0x9E3779B97F4A7C15ULL;
    return (size_t) (x >> 32) & (self->nbuckets - 1);
}

static node_t *
s_index_find (xxl_spool_t *self, int64_t log_id)
{
    node_t *node = self->buckets [s_slot (self, log_id)];
    while (node && node->result.log_id != log_id)
        node = node->chain;
    return node;
}

static void
s_index_remove (xxl_spool_t *self, node_t *node)
{
    node_t **link = &self->buckets [s_slot (self, node->result.log_id)];
    while (*link && *link != node)
        link = &(*link)->chain;
    if (*link)
        *link = node->chain;
}

//  Adds node (its logId not indexed yet); doubles the buckets past one node
//  per bucket (if that fails, chains just get longer)
static void
s_index_add (xxl_spool_t *self, node_t *node)
{
    if (self->size > self->nbuckets) {
        size_t nbuckets = self->nbuckets * 2;
        node_t **buckets = (node_t **) calloc (nbuckets, sizeof (node_t *));
        if (buckets) {
            node_t **old = self->buckets;
            size_t old_count = self->nbuckets;
            self->buckets = buckets;
            self->nbuckets = nbuckets;
            for (size_t i = 0; i < old_count; i++)
                for (node_t *item = old [i], *next; item; item = next) {
                    next = item->chain;
                    size_t slot = s_slot (self, item->result.log_id);
                    item->chain = buckets [slot];
                    buckets [slot] = item;
                }
            free (old);
        }
    }
    size_t slot = s_slot (self, node->result.log_id);
    node->chain = self->buckets [slot];
    self->buckets [slot] = node;
}

static void
s_node_unlink (xxl_spool_t *self, node_t *node)
{
    s_index_remove (self, node);
    if (self->cursor_next == node)
        self->cursor_next = node->next;
    if (node->prev)
        node->prev->next = node->next;
    else
        self->head = node->next;
    if (node->next)
        node->next->prev = node->prev;
    else
        self->tail = node->prev;
    self->size--;
    free (node->result.msg);
    free (node);
}

//  Makes a result pending (copies msg, or takes it when own_msg)
static int
s_apply_result (xxl_spool_t *self, const xxl_result_t *result, char *own_msg)
{
    node_t *old = s_index_find (self, result->log_id);
    if (old) {
        s_node_unlink (self, old);
        self->dead++;
    }
    node_t *node = (node_t *) calloc (1, sizeof (node_t));
    if (!node) {
        free (own_msg);
        return -1;
    }
    node->result = *result;
    node->result.msg = own_msg? own_msg: (result->msg? strdup (result->msg): NULL);
    node->prev = self->tail;
    if (self->tail)
        self->tail->next = node;
    else
        self->head = node;
    self->tail = node;
    self->size++;
    s_index_add (self, node);
    return 0;
}

static int
s_apply_ack (xxl_spool_t *self, int64_t log_id)
{
    node_t *node = s_index_find (self, log_id);
    if (!node)
        return -1;
    s_node_unlink (self, node);
    self->dead += 2;                    //  the result and its ack
    return 0;
}

//  Replays the file; returns 0 or -1 (not a spool)
static int
s_replay (xxl_spool_t *self)
{
    struct stat st;
    if (fstat (self->fd, &st))
        return -1;
    if (st.st_size == 0)
        return s_write_all (self->fd, (const unsigned char *) SPOOL_MAGIC, SPOOL_MAGIC_LEN) == 0
            && fdatasync (self->fd) == 0? 0: -1;
    FILE *file = fdopen (dup (self->fd), "r");
    if (!file)
        return -1;
    char magic [SPOOL_MAGIC_LEN];
    if (fread (magic, 1, SPOOL_MAGIC_LEN, file) != SPOOL_MAGIC_LEN
    ||  memcmp (magic, SPOOL_MAGIC, SPOOL_MAGIC_LEN)) {
        fclose (file);
        if (st.st_size < SPOOL_MAGIC_LEN
        &&  memcmp (magic, SPOOL_MAGIC, (size_t) st.st_size) == 0) {
            //  Torn header of a fresh spool
            if (ftruncate (self->fd, 0) == 0
            &&  s_write_all (self->fd, (const unsigned char *) SPOOL_MAGIC, SPOOL_MAGIC_LEN) == 0)
                return fdatasync (self->fd);
        }
        zsys_error ("spool: %s is not a spool file", self->path);
        return -1;
    }
    off_t good = SPOOL_MAGIC_LEN;
    unsigned char head [8];
    unsigned char *payload = NULL;
    const char *problem = NULL;
    while (1) {
        size_t n = fread (head, 1, 8, file);
        if (n == 0)
            break;
        if (n < 8) {
            problem = "torn record header";
            break;
        }
        uint32_t len = s_get_u32 (head);
        if (len < 9 || len > MAX_RECORD) {
            problem = "bad record length";
            break;
        }
        unsigned char *bigger = (unsigned char *) realloc (payload, len);
        if (!bigger) {
            problem = "out of memory";
            break;
        }
        payload = bigger;
        if (fread (payload, 1, len, file) != len) {
            problem = "torn record";
            break;
        }
        if (s_crc32 (payload, len) != s_get_u32 (head + 4)) {
            problem = "CRC mismatch";
            break;
        }
        int64_t log_id = (int64_t) s_get_u64 (payload + 1);
        if (payload [0] == TYPE_RESULT && len >= 25) {
            uint32_t msg_len = s_get_u32 (payload + 21);
            if (msg_len != NO_MSG && msg_len != len - 25) {
                problem = "bad message length";
                break;
            }
            xxl_result_t result = { 0 };     //  (no start time: not spooled)
            result.log_id = log_id;
            result.log_date_time = (int64_t) s_get_u64 (payload + 9);
            result.code = (int32_t) s_get_u32 (payload + 17);
            char *msg = msg_len == NO_MSG? NULL: strndup ((char *) payload + 25, msg_len);
            result.msg = NULL;
            s_apply_result (self, &result, msg);
        }
        else
        if (payload [0] == TYPE_ACK && len == 9) {
            if (s_apply_ack (self, log_id))
                self->dead++;
        }
        else {
            problem = "unknown record type";
            break;
        }
        good += 8 + len;
    }
    free (payload);
    fclose (file);
    if (problem) {
        zsys_warning ("spool: %s: %s at offset %lld; ignoring the rest (%lld bytes)",
                      self->path, problem, (long long) good, (long long) (st.st_size - good));
        if (ftruncate (self->fd, good))
            zsys_warning ("spool: cannot truncate %s: %s", self->path, strerror (errno));
    }
    return 0;
}

//  ---------------------------------------------------------------------

xxl_spool_t *
xxl_spool_new (const char *path)
{
    if (!path)
        return NULL;
    xxl_spool_t *self = (xxl_spool_t *) calloc (1, sizeof (xxl_spool_t));
    if (!self)
        return NULL;
    self->fd = -1;
    self->path = strdup (path);
    self->nbuckets = 1024;
    self->buckets = (node_t **) calloc (self->nbuckets, sizeof (node_t *));
    if (!self->path || !self->buckets) {
        xxl_spool_destroy (&self);
        return NULL;
    }
    self->fd = open (path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (self->fd < 0) {
        zsys_error ("spool: cannot open %s: %s", path, strerror (errno));
        xxl_spool_destroy (&self);
        return NULL;
    }
    if (s_replay (self)) {
        xxl_spool_destroy (&self);
        return NULL;
    }
    if (self->size)
        zsys_info ("spool: %zu result(s) pending in %s", self->size, path);
    if (self->dead >= COMPACT_DEAD_MIN && self->dead > self->size)
        xxl_spool_compact (self);
    return self;
}

void
xxl_spool_destroy (xxl_spool_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    xxl_spool_t *self = *self_p;
    while (self->buckets && self->head)
        s_node_unlink (self, self->head);
    free (self->buckets);
    if (self->fd >= 0)
        close (self->fd);
    free (self->path);
    free (self);
    *self_p = NULL;
}

int
xxl_spool_add_batch (xxl_spool_t *self, const xxl_result_t *results, size_t count)
{
    if (!self || (!results && count))
        return -1;
    if (count == 0)
        return 0;
    buf_t buf = { NULL, 0, 0 };
    for (size_t i = 0; i < count; i++)
        if (s_encode_result (&buf, &results [i])) {
            free (buf.data);
            return -1;
        }
    struct stat st;
    int rc = fstat (self->fd, &st) == 0? 0: -1;
    if (rc == 0 && (s_write_all (self->fd, buf.data, buf.size) || fdatasync (self->fd))) {
        zsys_error ("spool: cannot write %s: %s", self->path, strerror (errno));
        //  Cut what may have been written, so the file stays parsable
        if (ftruncate (self->fd, st.st_size))
            {}
        rc = -1;
    }
    free (buf.data);
    for (size_t i = 0; rc == 0 && i < count; i++)
        s_apply_result (self, &results [i], NULL);
    return rc;
}

int
xxl_spool_add (xxl_spool_t *self, const xxl_result_t *result)
{
    return result? xxl_spool_add_batch (self, result, 1): -1;
}

int
xxl_spool_ack (xxl_spool_t *self, int64_t log_id)
{
    return xxl_spool_ack_batch (self, &log_id, 1) == 1? 0: -1;
}

size_t
xxl_spool_ack_batch (xxl_spool_t *self, const int64_t *log_ids, size_t count)
{
    if (!self || !log_ids)
        return 0;
    buf_t buf = { NULL, 0, 0 };
    size_t acked = 0;
    for (size_t i = 0; i < count; i++)
        if (s_apply_ack (self, log_ids [i]) == 0) {
            acked++;
            if (s_encode_ack (&buf, log_ids [i]))
                break;                  //  out of memory: fewer ack records,
        }                               //  those results come back after a restart
    if (buf.size && s_write_all (self->fd, buf.data, buf.size))
        zsys_warning ("spool: cannot write ack to %s: %s", self->path, strerror (errno));
    free (buf.data);
    if (self->dead >= COMPACT_DEAD_MIN && self->dead > self->size)
        xxl_spool_compact (self);
    return acked;
}

int
xxl_spool_pending (xxl_spool_t *self, int64_t log_id)
{
    assert (self);
    return s_index_find (self, log_id) != NULL;
}

size_t
xxl_spool_size (xxl_spool_t *self)
{
    return self? self->size: 0;
}

const xxl_result_t *
xxl_spool_first (xxl_spool_t *self)
{
    if (!self || !self->head)
        return NULL;
    self->cursor_next = self->head->next;
    return &self->head->result;
}

const xxl_result_t *
xxl_spool_next (xxl_spool_t *self)
{
    if (!self || !self->cursor_next)
        return NULL;
    node_t *node = self->cursor_next;
    self->cursor_next = node->next;
    return &node->result;
}

int
xxl_spool_compact (xxl_spool_t *self)
{
    if (!self)
        return -1;
    if (self->size == 0) {
        //  Nothing pending: cut back to the header.  Not fsync'd: a crash
        //  that undoes the cut replays records that are all acked, and the
        //  next add's fdatasync makes the cut durable with it.
        if (ftruncate (self->fd, SPOOL_MAGIC_LEN)) {
            zsys_warning ("spool: cannot truncate %s: %s", self->path, strerror (errno));
            return -1;
        }
        self->dead = 0;
        return 0;
    }
    char *tmp = NULL;
    if (asprintf (&tmp, "%s.tmp", self->path) < 0)
        return -1;
    buf_t buf = { NULL, 0, 0 };
    int rc = s_buf_reserve (&buf, SPOOL_MAGIC_LEN);
    if (rc == 0) {
        memcpy (buf.data, SPOOL_MAGIC, SPOOL_MAGIC_LEN);
        buf.size = SPOOL_MAGIC_LEN;
    }
    for (node_t *node = self->head; node && rc == 0; node = node->next)
        rc = s_encode_result (&buf, &node->result);
    int fd = rc == 0? open (tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600): -1;
    if (fd < 0
    ||  s_write_all (fd, buf.data, buf.size) || fsync (fd)
    ||  rename (tmp, self->path)) {
        zsys_warning ("spool: cannot compact %s: %s", self->path, strerror (errno));
        if (fd >= 0) {
            close (fd);
            unlink (tmp);
        }
        free (buf.data);
        free (tmp);
        return -1;
    }
    close (fd);
    free (buf.data);
    free (tmp);
    //  Make the rename durable, then switch to the new file
    char *dir_copy = strdup (self->path);
    if (dir_copy) {
        int dir = open (dirname (dir_copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir >= 0) {
            fsync (dir);
            close (dir);
        }
        free (dir_copy);
    }
    int new_fd = open (self->path, O_RDWR | O_APPEND | O_CLOEXEC);
    if (new_fd < 0) {
        zsys_error ("spool: cannot reopen %s: %s", self->path, strerror (errno));
        return -1;
    }
    close (self->fd);
    self->fd = new_fd;
    self->dead = 0;
    return 0;
}
