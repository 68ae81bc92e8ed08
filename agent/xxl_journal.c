/*  xxl_journal.c -- the logIds an agent accepted, kept across its restarts.

    File format (integers little-endian), PATH and PATH.old alike:

        header   8 bytes   "XXLJNL2\n" (version 2; "XXLJNL1\n", version
                           1, is read too: its entries are version 2's
                           but 4; a version 1 PATH gets the version 2
                           header when opened for writing, before any 4
                           goes in, so a version 1 agent refuses it
                           rather than cut it at the first 4)
        frame    u32 len   length of the payload
                 u32 crc   CRC-32 (IEEE, as zlib) of the payload
                 payload   len bytes: entries back to back, each a type
                           byte and its fields:
                     1 accept:  i64 logId, i64 logDateTime (version 1's:
                                the run's job not known)
                     2 done:    i64 logId
                     3 life:    u32 pid, i64 startMs (epoch ms); the
                                accepts after it (to the next life) were
                                made by that agent process
                     4 accept:  i64 logId, i64 logDateTime, i64 jobId
                                (jobId 0: not known)

    One flush is one frame and one write(): the accepts of a RUN batch (or
    of one slice of it) and the done ids of a batch of results.  Replay
    applies the frames of PATH.old, then of PATH, in order; the first frame
    that is short or fails its CRC or does not parse ends the replay of its
    file, which is cut there with a warning (a write torn by a crash: its
    runs had not started, the write comes first).

    A new generation: the open ids whose accept is only in PATH.old are
    written again at the end of PATH (with life records when they are not
    this life's), PATH.new is written (header, this life), PATH is renamed
    to PATH.old (replacing it) and PATH.new to PATH.  A crash between the
    two renames leaves no PATH: the next start renames PATH.new first.

    In memory: two maps of ids (one per file, open addressing; logId ->
    logDateTime and jobId, which run it was) for xxl_journal_seen and
    xxl_journal_check, and a map of the open ids (logId -> logDateTime,
    jobId and life) for the lost report and for the carrying over.
*/

#define _GNU_SOURCE
#include "xxl_journal.h"

#include <czmq.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define JOURNAL_MAGIC       "XXLJNL2\n"
#define JOURNAL_MAGIC_V1    "XXLJNL1\n"
#define JOURNAL_MAGIC_LEN   8
#define FRAME_HEAD          8
#define MAX_FRAME           (256u * 1024 * 1024)
#define T_ACCEPT            1
#define T_DONE              2
#define T_LIFE              3
#define T_ACCEPT_RUN        4
#define ACCEPT_SIZE         17
#define ACCEPT_RUN_SIZE     25
#define DONE_SIZE           9
#define LIFE_SIZE           13

//  ---------------------------------------------------------------------
//  CRC-32 (as xxl_spool.c)

static uint32_t s_crc_table [256];
static pthread_once_t s_crc_once = PTHREAD_ONCE_INIT;

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
    pthread_once (&s_crc_once, s_crc_init);
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < len; i++)
        c = s_crc_table [(c ^ data [i]) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
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
    return (uint32_t) p [0] | (uint32_t) p [1] << 8 | (uint32_t) p [2] << 16
         | (uint32_t) p [3] << 24;
}

static uint64_t
s_get_u64 (const unsigned char *p)
{
    return (uint64_t) s_get_u32 (p) | (uint64_t) s_get_u32 (p + 4) << 32;
}

//  ---------------------------------------------------------------------
//  An int64 map (logId -> logDateTime, jobId, and for the open ids life)
//  with open addressing and linear probing; key 0 marks a free slot
//  (logIds are > 0)

typedef struct {
    int64_t *keys;
    int64_t *dates;
    int64_t *jobs;
    uint32_t *lives;                    //  NULL: no lives kept
    size_t cap, size;                   //  cap a power of two, size*2 <= cap
    int shift;                          //  64 - log2 (cap)
} idmap_t;

//  lives: 1 to keep each id's life too (the open ids' map)
static int
s_map_alloc (idmap_t *map, size_t cap, int lives)
{
    map->keys = (int64_t *) calloc (cap, sizeof (int64_t));
    map->dates = (int64_t *) calloc (cap, sizeof (int64_t));
    map->jobs = (int64_t *) calloc (cap, sizeof (int64_t));
    map->lives = lives? (uint32_t *) calloc (cap, sizeof (uint32_t)): NULL;
    if (!map->keys || !map->dates || !map->jobs || (lives && !map->lives)) {
        free (map->keys);
        free (map->dates);
        free (map->jobs);
        free (map->lives);
        map->keys = NULL;
        map->dates = NULL;
        map->jobs = NULL;
        map->lives = NULL;
        return -1;
    }
    map->cap = cap;
    map->size = 0;
    map->shift = 64;
    for (size_t c = cap; c > 1; c >>= 1)
        map->shift--;
    return 0;
}

static void
s_map_free (idmap_t *map)
{
    free (map->keys);
    free (map->dates);
    free (map->jobs);
    free (map->lives);
    memset (map, 0, sizeof *map);
}

//  The home slot of key: the 8 keys of a block (key / 8) are homed side by
//  side, in order, and the blocks spread by Fibonacci hashing.  LogIds
//  come about in sequence, so a RUN's lookups and inserts mostly touch the
//  cache lines of the ids just before (hashing each id on its own cost a
//  cache miss per lookup and per insert in each map: 8.6 % of the agent's
//  samples in the e2e bench).  Caps are at least 1,024 (shift + 3 < 64).
static size_t
s_map_home (const idmap_t *map, int64_t key)
{
    uint64_t block = ((uint64_t) key >> 3) * 0x9E3779B97F4A7C15ULL >> (map->shift + 3);
    return (size_t) (block << 3 | ((uint64_t) key & 7));
}

//  The slot of key, or (size_t) -1
static size_t
s_map_find (const idmap_t *map, int64_t key)
{
    size_t mask = map->cap - 1;
    for (size_t i = s_map_home (map, key);; i = (i + 1) & mask) {
        if (map->keys [i] == key)
            return i;
        if (map->keys [i] == 0)
            return (size_t) -1;
    }
}

static int s_map_put (idmap_t *map, int64_t key, int64_t date, int64_t job, uint32_t life);

static int
s_map_grow (idmap_t *map)
{
    idmap_t bigger;
    if (s_map_alloc (&bigger, map->cap * 2, map->lives != NULL))
        return -1;
    for (size_t i = 0; i < map->cap; i++)
        if (map->keys [i])
            s_map_put (&bigger, map->keys [i], map->dates [i], map->jobs [i],
                       map->lives? map->lives [i]: 0);
    s_map_free (map);
    *map = bigger;
    return 0;
}

//  Inserts or updates; -1 when out of memory
static int
s_map_put (idmap_t *map, int64_t key, int64_t date, int64_t job, uint32_t life)
{
    assert (key > 0);
    if ((map->size + 1) * 2 > map->cap && s_map_grow (map))
        return -1;
    size_t mask = map->cap - 1, i = s_map_home (map, key);
    while (map->keys [i] && map->keys [i] != key)
        i = (i + 1) & mask;
    if (!map->keys [i]) {
        map->keys [i] = key;
        map->size++;
    }
    map->dates [i] = date;
    map->jobs [i] = job;
    if (map->lives)
        map->lives [i] = life;
    return 0;
}

//  Removes key (backward-shift deletion: no tombstones); 1 if it was there
static int
s_map_del (idmap_t *map, int64_t key)
{
    size_t i = s_map_find (map, key);
    if (i == (size_t) -1)
        return 0;
    size_t mask = map->cap - 1, j = i;
    while (1) {
        j = (j + 1) & mask;
        if (!map->keys [j])
            break;
        size_t home = s_map_home (map, map->keys [j]);
        //  The entry at j may move to the hole at i unless its home lies
        //  cyclically in (i, j]
        int stays = i <= j? (home > i && home <= j): (home > i || home <= j);
        if (!stays) {
            map->keys [i] = map->keys [j];
            map->dates [i] = map->dates [j];
            map->jobs [i] = map->jobs [j];
            if (map->lives)
                map->lives [i] = map->lives [j];
            i = j;
        }
    }
    map->keys [i] = 0;
    map->size--;
    return 1;
}

static void
s_map_clear (idmap_t *map)
{
    memset (map->keys, 0, map->cap * sizeof (int64_t));
    map->size = 0;
}

//  ---------------------------------------------------------------------

typedef struct {
    int pid;
    int64_t start_ms;
} life_t;

struct _xxl_journal_t {
    pthread_mutex_t mutex;
    char *path, *path_old, *path_new;   //  NULL: in memory only
    int fd;                             //  PATH, O_APPEND; -1 in memory
    size_t generation;
    size_t accepts;                     //  accept records in PATH
    size_t next_try;                    //  accepts that retry a failed rotation
    idmap_t seen [2];                   //  ids accepted: in PATH, in PATH.old
    idmap_t open;                       //  accepted, not done (file only)
    int64_t accepted_max;               //  the highest id accepted, replayed or
                                        //  this life (0 none): never lowered
    life_t *lives;                      //  [0] unknown; [life] this one
    size_t life_count, life_max;
    uint32_t life;
    uint32_t written_life;              //  of the last life record in PATH
    char token [48];
    unsigned char *buf;                 //  a frame being filled (the first
    size_t buf_size, buf_cap;           //  FRAME_HEAD bytes: its header)
    int write_failed;                   //  logged once per failure spell
    int headless;                       //  PATH's header not written yet
};

static int64_t
s_now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

//  Room for more bytes in the frame buffer; -1 when out of memory
static int
s_buf_reserve (xxl_journal_t *self, size_t more)
{
    if (self->buf_size + more <= self->buf_cap)
        return 0;
    size_t cap = self->buf_cap? self->buf_cap * 2: 4096;
    while (cap < self->buf_size + more)
        cap *= 2;
    unsigned char *buf = (unsigned char *) realloc (self->buf, cap);
    if (!buf)
        return -1;
    self->buf = buf;
    self->buf_cap = cap;
    return 0;
}

static void
s_buf_accept (xxl_journal_t *self, int64_t log_id, int64_t date, int64_t job)
{
    if (s_buf_reserve (self, ACCEPT_RUN_SIZE))
        return;
    unsigned char *p = self->buf + self->buf_size;
    p [0] = T_ACCEPT_RUN;
    s_put_u64 (p + 1, (uint64_t) log_id);
    s_put_u64 (p + 9, (uint64_t) date);
    s_put_u64 (p + 17, (uint64_t) job);
    self->buf_size += ACCEPT_RUN_SIZE;
}

static void
s_buf_done (xxl_journal_t *self, int64_t log_id)
{
    if (s_buf_reserve (self, DONE_SIZE))
        return;
    unsigned char *p = self->buf + self->buf_size;
    p [0] = T_DONE;
    s_put_u64 (p + 1, (uint64_t) log_id);
    self->buf_size += DONE_SIZE;
}

static void
s_buf_life (xxl_journal_t *self, uint32_t life)
{
    if (s_buf_reserve (self, LIFE_SIZE))
        return;
    unsigned char *p = self->buf + self->buf_size;
    p [0] = T_LIFE;
    s_put_u32 (p + 1, (uint32_t) self->lives [life].pid);
    s_put_u64 (p + 5, (uint64_t) self->lives [life].start_ms);
    self->buf_size += LIFE_SIZE;
    self->written_life = life;
}

//  Writes all of len bytes; 0 or -1 (errno set)
static int
s_write_all (int fd, const unsigned char *data, size_t len)
{
    while (len) {
        ssize_t n = write (fd, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;
            return -1;
        }
        data += n;
        len -= (size_t) n;
    }
    return 0;
}

//  Seals the buffered entries into a frame and writes it to fd; empties
//  the buffer whatever happens.  0 or -1 (errno set).
static int
s_buf_write (xxl_journal_t *self, int fd)
{
    if (self->buf_size <= FRAME_HEAD) {
        self->buf_size = FRAME_HEAD;
        return 0;
    }
    size_t len = self->buf_size - FRAME_HEAD;
    s_put_u32 (self->buf, (uint32_t) len);
    s_put_u32 (self->buf + 4, s_crc32 (self->buf + FRAME_HEAD, len));
    int rc = s_write_all (fd, self->buf, self->buf_size);
    self->buf_size = FRAME_HEAD;
    return rc;
}

//  The index of life (pid, start) in lives, added if new; 0 when out of
//  memory
static uint32_t
s_life_index (xxl_journal_t *self, int pid, int64_t start_ms)
{
    for (size_t i = self->life_count; i-- > 1;)
        if (self->lives [i].pid == pid && self->lives [i].start_ms == start_ms)
            return (uint32_t) i;
    if (self->life_count == self->life_max) {
        size_t max = self->life_max? self->life_max * 2: 8;
        life_t *lives = (life_t *) realloc (self->lives, max * sizeof (life_t));
        if (!lives)
            return 0;
        self->lives = lives;
        self->life_max = max;
    }
    self->lives [self->life_count].pid = pid;
    self->lives [self->life_count].start_ms = start_ms;
    return (uint32_t) self->life_count++;
}

//  Applies a frame's payload; -1 if it does not parse (nothing applied
//  past the bad entry)
static int
s_apply (xxl_journal_t *self, const unsigned char *p, size_t len, int gen, uint32_t *life)
{
    size_t at = 0;
    while (at < len) {
        int type = p [at];
        size_t size = type == T_ACCEPT_RUN? ACCEPT_RUN_SIZE: ACCEPT_SIZE;
        if ((type == T_ACCEPT || type == T_ACCEPT_RUN) && at + size <= len) {
            int64_t log_id = (int64_t) s_get_u64 (p + at + 1);
            int64_t date = (int64_t) s_get_u64 (p + at + 9);
            int64_t job = type == T_ACCEPT_RUN? (int64_t) s_get_u64 (p + at + 17): 0;
            if (log_id <= 0 || job < 0)
                return -1;
            s_map_put (&self->seen [gen], log_id, date, job, 0);
            s_map_put (&self->open, log_id, date, job, *life);
            if (log_id > self->accepted_max)
                self->accepted_max = log_id;
            if (gen == 0)
                self->accepts++;
            at += size;
        }
        else
        if (type == T_DONE && at + DONE_SIZE <= len) {
            s_map_del (&self->open, (int64_t) s_get_u64 (p + at + 1));
            at += DONE_SIZE;
        }
        else
        if (type == T_LIFE && at + LIFE_SIZE <= len) {
            *life = s_life_index (self, (int) s_get_u32 (p + at + 1),
                                  (int64_t) s_get_u64 (p + at + 5));
            at += LIFE_SIZE;
        }
        else
            return -1;
    }
    return 0;
}

//  Replays the file at path into generation gen (0 PATH, 1 PATH.old).  A
//  missing file is fine (0).  A bad tail is cut off when writable, else
//  only ignored.  -1 if it cannot be read or is not a journal.
static int
s_replay (xxl_journal_t *self, const char *path, int gen, int writable)
{
    int fd = open (path, (writable? O_RDWR: O_RDONLY) | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT? 0: -1;
    struct stat st;
    unsigned char *data = NULL;
    int rc = -1;
    if (fstat (fd, &st) || st.st_size < 0)
        goto done;
    size_t size = (size_t) st.st_size, got = 0;
    data = (unsigned char *) malloc (size? size: 1);
    while (data && got < size) {
        ssize_t n = pread (fd, data + got, size - got, (off_t) got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t) n;
    }
    if (!data)
        goto done;
    size = got;                         //  a writer may have cut it meanwhile
    if (size == 0) {
        rc = 0;                         //  created, header not written yet
        goto done;
    }
    if (size < JOURNAL_MAGIC_LEN && (memcmp (data, JOURNAL_MAGIC, size) == 0
                                  || memcmp (data, JOURNAL_MAGIC_V1, size) == 0)) {
        //  A header torn by a crash or a full disk: an empty journal
        if (writable && ftruncate (fd, 0))
            zsys_warning ("journal: cannot cut %s: %s", path, strerror (errno));
        rc = 0;
        goto done;
    }
    if (size < JOURNAL_MAGIC_LEN || (memcmp (data, JOURNAL_MAGIC, JOURNAL_MAGIC_LEN)
                                  && memcmp (data, JOURNAL_MAGIC_V1, JOURNAL_MAGIC_LEN))) {
        zsys_error ("journal: %s is not an agent journal (or of a later version)", path);
        errno = EINVAL;
        goto done;
    }
    if (writable && gen == 0 && memcmp (data, JOURNAL_MAGIC, JOURNAL_MAGIC_LEN)) {
        //  Version 1, to be written on: version 2 from now on (its entries
        //  read as they are)
        if (pwrite (fd, JOURNAL_MAGIC, JOURNAL_MAGIC_LEN, 0) != JOURNAL_MAGIC_LEN) {
            zsys_error ("journal: cannot upgrade %s to version 2: %s", path, strerror (errno));
            goto done;
        }
    }
    size_t at = JOURNAL_MAGIC_LEN;
    uint32_t life = 0;
    while (at + FRAME_HEAD <= size) {
        uint32_t len = s_get_u32 (data + at);
        uint32_t crc = s_get_u32 (data + at + 4);
        if (len == 0 || len > MAX_FRAME || at + FRAME_HEAD + len > size
        ||  s_crc32 (data + at + FRAME_HEAD, len) != crc
        ||  s_apply (self, data + at + FRAME_HEAD, len, gen, &life))
            break;
        at += FRAME_HEAD + len;
    }
    if (at < size) {
        if (writable) {
            zsys_warning ("journal: %s: %zu byte(s) of torn or corrupt tail cut off at %zu",
                          path, size - at, at);
            if (ftruncate (fd, (off_t) at))
                zsys_warning ("journal: cannot cut %s: %s", path, strerror (errno));
        }
    }
    rc = 0;
done:
    free (data);
    close (fd);
    return rc;
}

static xxl_journal_t *
s_alloc (const char *path, size_t generation)
{
    xxl_journal_t *self = (xxl_journal_t *) calloc (1, sizeof (xxl_journal_t));
    if (!self)
        return NULL;
    pthread_mutex_init (&self->mutex, NULL);
    self->fd = -1;
    self->generation = generation? generation: XXL_JOURNAL_GENERATION;
    int ok = s_map_alloc (&self->seen [0], 1024, 0) == 0
          && s_map_alloc (&self->seen [1], 1024, 0) == 0
          && s_life_index (self, 0, 0) == 0 && self->life_count == 1
          && s_buf_reserve (self, 4096) == 0;
    self->buf_size = FRAME_HEAD;
    if (ok && path) {
        ok = (self->path = strdup (path)) != NULL
          && asprintf (&self->path_old, "%s.old", path) >= 0
          && asprintf (&self->path_new, "%s.new", path) >= 0
          && s_map_alloc (&self->open, 1024, 1) == 0;
    }
    if (!ok) {
        xxl_journal_destroy (&self);
        return NULL;
    }
    return self;
}

xxl_journal_t *
xxl_journal_new (const char *path, size_t generation)
{
    xxl_journal_t *self = s_alloc (path, generation);
    if (!self)
        return NULL;
    int pid = (int) getpid ();
    int64_t start = s_now_ms ();
    self->life = s_life_index (self, pid, start);
    snprintf (self->token, sizeof self->token, "%d.%lld", pid, (long long) start);
    if (!path)
        return self;
    //  A new generation cut between its two renames: PATH.new is PATH
    if (access (path, F_OK) && errno == ENOENT && access (self->path_new, F_OK) == 0) {
        if (rename (self->path_new, path))
            zsys_warning ("journal: cannot rename %s: %s", self->path_new, strerror (errno));
    }
    else
        unlink (self->path_new);        //  left by a failed new generation
    if (s_replay (self, self->path_old, 1, 1) || s_replay (self, path, 0, 1)) {
        zsys_error ("journal: cannot read %s: %s", path, strerror (errno));
        xxl_journal_destroy (&self);
        return NULL;
    }
    self->fd = open (path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    struct stat st;
    if (self->fd < 0 || fstat (self->fd, &st)) {
        zsys_error ("journal: cannot open %s: %s", path, strerror (errno));
        xxl_journal_destroy (&self);
        return NULL;
    }
    //  The header goes with the first flush that can write (a full disk
    //  does not keep the agent from starting: logged by the flush)
    self->headless = st.st_size == 0;
    s_buf_life (self, self->life);
    xxl_journal_flush (self);
    return self;
}

void
xxl_journal_destroy (xxl_journal_t **self_p)
{
    assert (self_p);
    xxl_journal_t *self = *self_p;
    if (!self)
        return;
    if (self->fd >= 0) {
        xxl_journal_flush (self);
        close (self->fd);
    }
    s_map_free (&self->seen [0]);
    s_map_free (&self->seen [1]);
    s_map_free (&self->open);
    free (self->lives);
    free (self->buf);
    free (self->path);
    free (self->path_old);
    free (self->path_new);
    pthread_mutex_destroy (&self->mutex);
    free (self);
    *self_p = NULL;
}

const char *
xxl_journal_life (xxl_journal_t *self)
{
    assert (self);
    return self->token;
}

int
xxl_journal_seen (xxl_journal_t *self, int64_t log_id)
{
    assert (self);
    if (log_id <= 0)
        return 0;
    pthread_mutex_lock (&self->mutex);
    int seen = s_map_find (&self->seen [0], log_id) != (size_t) -1
            || s_map_find (&self->seen [1], log_id) != (size_t) -1;
    pthread_mutex_unlock (&self->mutex);
    return seen;
}

int
xxl_journal_check (xxl_journal_t *self, int64_t log_id, int64_t job_id, int64_t log_date_time)
{
    assert (self);
    if (log_id <= 0)
        return XXL_JOURNAL_NEW;
    pthread_mutex_lock (&self->mutex);
    int rc = XXL_JOURNAL_NEW;
    for (int gen = 0; gen < 2 && rc == XXL_JOURNAL_NEW; gen++) {
        const idmap_t *map = &self->seen [gen];
        size_t i = s_map_find (map, log_id);
        if (i == (size_t) -1)
            continue;
        rc = XXL_JOURNAL_SAME;
        if (map->jobs [i] > 0 && job_id > 0
        &&  (map->jobs [i] != job_id
             || (map->dates [i] > 0 && log_date_time > map->dates [i])))
            rc = XXL_JOURNAL_OTHER;
    }
    pthread_mutex_unlock (&self->mutex);
    return rc;
}

//  In memory only: a new generation of the set once this one is full.
//  Caller holds the mutex.
static void
s_memory_turn (xxl_journal_t *self)
{
    if (self->seen [0].size < self->generation)
        return;
    idmap_t old = self->seen [1];
    self->seen [1] = self->seen [0];
    s_map_clear (&old);
    self->seen [0] = old;
}

void
xxl_journal_accept (xxl_journal_t *self, int64_t log_id, int64_t job_id, int64_t log_date_time)
{
    assert (self);
    assert (log_id > 0);
    if (job_id < 0)
        job_id = 0;
    pthread_mutex_lock (&self->mutex);
    if (self->fd < 0 && !self->path)
        s_memory_turn (self);
    if (s_map_put (&self->seen [0], log_id, log_date_time, job_id, 0))
        zsys_error ("journal: out of memory, logId %lld not remembered", (long long) log_id);
    if (log_id > self->accepted_max)
        self->accepted_max = log_id;
    if (self->path) {
        s_map_put (&self->open, log_id, log_date_time, job_id, self->life);
        if (self->written_life != self->life)
            s_buf_life (self, self->life);
        s_buf_accept (self, log_id, log_date_time, job_id);
        self->accepts++;
    }
    pthread_mutex_unlock (&self->mutex);
}

int64_t
xxl_journal_accepted_max (xxl_journal_t *self)
{
    assert (self);
    pthread_mutex_lock (&self->mutex);
    int64_t max = self->accepted_max;
    pthread_mutex_unlock (&self->mutex);
    return max;
}

void
xxl_journal_done (xxl_journal_t *self, const int64_t *log_ids, size_t count)
{
    assert (self);
    if (!self->path)
        return;
    pthread_mutex_lock (&self->mutex);
    for (size_t i = 0; i < count; i++)
        if (s_map_del (&self->open, log_ids [i]))
            s_buf_done (self, log_ids [i]);
    pthread_mutex_unlock (&self->mutex);
}

//  Starts a new generation (see the head of this file); caller holds the
//  mutex, the buffer is empty.  On failure the current file goes on and
//  the turn is tried again an eighth of a generation later.
static void
s_turn (xxl_journal_t *self)
{
    //  Open ids whose accept would leave with PATH.old: written again
    for (size_t i = 0; i < self->open.cap; i++) {
        int64_t log_id = self->open.keys [i];
        if (log_id && s_map_find (&self->seen [0], log_id) == (size_t) -1) {
            if (self->written_life != self->open.lives [i])
                s_buf_life (self, self->open.lives [i]);
            s_buf_accept (self, log_id, self->open.dates [i], self->open.jobs [i]);
            s_map_put (&self->seen [0], log_id, self->open.dates [i], self->open.jobs [i], 0);
        }
    }
    int fd = -1;
    if (s_buf_write (self, self->fd))
        goto fail;
    fd = open (self->path_new, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0 || s_write_all (fd, (const unsigned char *) JOURNAL_MAGIC, JOURNAL_MAGIC_LEN))
        goto fail;
    s_buf_life (self, self->life);
    if (s_buf_write (self, fd))
        goto fail;
    if (rename (self->path, self->path_old))
        goto fail;
    if (rename (self->path_new, self->path))
        //  PATH is missing now: we go on writing PATH.new, which the next
        //  start takes as PATH
        zsys_error ("journal: cannot rename %s to %s: %s", self->path_new, self->path,
                    strerror (errno));
    close (self->fd);
    self->fd = fd;
    idmap_t old = self->seen [1];
    self->seen [1] = self->seen [0];
    s_map_clear (&old);
    self->seen [0] = old;
    self->accepts = 0;
    self->next_try = 0;
    return;
fail:
    zsys_error ("journal: cannot start a new generation of %s: %s", self->path,
                strerror (errno));
    if (fd >= 0) {
        close (fd);
        unlink (self->path_new);
    }
    self->written_life = 0;             //  unknown: say it again
    self->next_try = self->accepts + self->generation / 8;
}

int
xxl_journal_flush (xxl_journal_t *self)
{
    assert (self);
    if (self->fd < 0)
        return 0;
    pthread_mutex_lock (&self->mutex);
    int rc = 0;
    if (self->headless) {
        //  All of it or nothing: a part would make the file no journal
        rc = s_write_all (self->fd, (const unsigned char *) JOURNAL_MAGIC, JOURNAL_MAGIC_LEN);
        if (rc) {
            int error = errno;
            if (ftruncate (self->fd, 0))
                {}                      //  replay takes a torn header as empty
            errno = error;
            self->buf_size = FRAME_HEAD;
        }
        else
            self->headless = 0;
    }
    if (rc == 0)
        rc = s_buf_write (self, self->fd);
    if (rc) {
        if (!self->write_failed)
            zsys_error ("journal: cannot write %s: %s (accepted logIds are remembered in"
                        " memory only)", self->path, strerror (errno));
        self->write_failed = 1;
        self->written_life = 0;
    }
    else {
        self->write_failed = 0;
        if (self->accepts >= self->generation && self->accepts >= self->next_try)
            s_turn (self);
    }
    pthread_mutex_unlock (&self->mutex);
    return rc;
}

static int
s_entry_cmp (const void *a, const void *b)
{
    int64_t x = ((const xxl_journal_entry_t *) a)->log_id;
    int64_t y = ((const xxl_journal_entry_t *) b)->log_id;
    return x < y? -1: x > y;
}

xxl_journal_entry_t *
xxl_journal_lost (xxl_journal_t *self, size_t *count)
{
    assert (self);
    assert (count);
    *count = 0;
    if (!self->path)
        return NULL;
    pthread_mutex_lock (&self->mutex);
    xxl_journal_entry_t *entries = NULL;
    size_t n = 0;
    for (size_t i = 0; i < self->open.cap; i++)
        if (self->open.keys [i] && self->open.lives [i] != self->life)
            n++;
    if (n)
        entries = (xxl_journal_entry_t *) calloc (n, sizeof (xxl_journal_entry_t));
    if (entries) {
        size_t k = 0;
        for (size_t i = 0; i < self->open.cap; i++)
            if (self->open.keys [i] && self->open.lives [i] != self->life) {
                entries [k].log_id = self->open.keys [i];
                entries [k].log_date_time = self->open.dates [i];
                entries [k].pid = self->lives [self->open.lives [i]].pid;
                entries [k].start_ms = self->lives [self->open.lives [i]].start_ms;
                k++;
            }
        qsort (entries, n, sizeof *entries, s_entry_cmp);
        *count = n;
    }
    pthread_mutex_unlock (&self->mutex);
    return entries;
}

size_t
xxl_journal_open_count (xxl_journal_t *self)
{
    assert (self);
    pthread_mutex_lock (&self->mutex);
    size_t count = self->open.size;
    pthread_mutex_unlock (&self->mutex);
    return count;
}

int
xxl_journal_read_open (const char *path, const char *life, int64_t **log_ids, size_t *count)
{
    assert (path && life && log_ids && count);
    *log_ids = NULL;
    *count = 0;
    xxl_journal_t *self = s_alloc (path, 0);
    if (!self)
        return -1;
    int rc = 0;
    struct stat st;
    if (stat (path, &st) && stat (self->path_old, &st) && stat (self->path_new, &st))
        rc = -1;                        //  no journal at all
    if (rc == 0 && s_replay (self, self->path_old, 1, 0) == 0
    &&  s_replay (self, path, 0, 0) == 0) {
        if (access (path, F_OK))        //  between the renames of a new generation
            s_replay (self, self->path_new, 0, 0);
        size_t n = 0;
        for (size_t i = 0; i < self->open.cap; i++) {
            if (!self->open.keys [i])
                continue;
            const life_t *owner = &self->lives [self->open.lives [i]];
            char token [48];
            snprintf (token, sizeof token, "%d.%lld", owner->pid, (long long) owner->start_ms);
            if (!streq (token, life))
                continue;
            if (n % 1024 == 0) {
                int64_t *more = (int64_t *) realloc (*log_ids, (n + 1024) * sizeof (int64_t));
                if (!more)
                    break;
                *log_ids = more;
            }
            (*log_ids) [n++] = self->open.keys [i];
        }
        *count = n;
    }
    else
        rc = -1;
    xxl_journal_destroy (&self);
    return rc;
}
