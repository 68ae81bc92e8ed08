/*  xxl_http_limit.c -- failed logins, per address and per user name, in a
    table of fixed size.  See xxl_http_limit.h.
*/

#include "xxl_http_limit.h"
#include "xxl_secret.h"

#include <czmq.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>

typedef struct {
    uint64_t key;                       //  keyed hash of the key text; 0: free
    double tokens;                      //  as of `at`
    int64_t at;                         //  caller's ms
} entry_t;

struct _xxl_http_limit_t {
    pthread_mutex_t lock;
    entry_t *entries;                   //  sets of XXL_HTTP_LIMIT_WAYS
    size_t sets;
    size_t used;
    double burst;
    int64_t interval_ms;
    char seed [XXL_SECRET_HEX];         //  random: the hash's key
};

xxl_http_limit_t *
xxl_http_limit_new (size_t slots, int burst, int64_t interval_ms)
{
    assert (burst >= 1 && interval_ms >= 1);
    xxl_http_limit_t *self = (xxl_http_limit_t *) calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->sets = (slots + XXL_HTTP_LIMIT_WAYS - 1) / XXL_HTTP_LIMIT_WAYS;
    if (self->sets == 0)
        self->sets = 1;
    self->entries = (entry_t *) calloc (self->sets * XXL_HTTP_LIMIT_WAYS, sizeof (entry_t));
    self->burst = burst;
    self->interval_ms = interval_ms;
    pthread_mutex_init (&self->lock, NULL);
    if (!self->entries || xxl_secret_random (self->seed))
        xxl_http_limit_destroy (&self);
    return self;
}

void
xxl_http_limit_destroy (xxl_http_limit_t **self_p)
{
    xxl_http_limit_t *self = *self_p;
    if (!self)
        return;
    pthread_mutex_destroy (&self->lock);
    free (self->entries);
    free (self);
    *self_p = NULL;
}

void
xxl_http_limit_address (const struct sockaddr *addr, char key [XXL_HTTP_LIMIT_KEY])
{
    xxl_http_guard_address (addr, key);
}

//  The keyed hash of a key text (kind 'a' address, 'n' name); never 0
static uint64_t
s_hash (xxl_http_limit_t *self, char kind, const char *text)
{
    char *keyed = zsys_sprintf ("%s%c%s", self->seed, kind, text);
    assert (keyed);
    char hex [XXL_SECRET_HEX];
    xxl_secret_sha256 (keyed, hex);
    zstr_free (&keyed);
    uint64_t hash = 0;
    for (int i = 0; i < 16; i++) {
        char c = hex [i];
        hash = (hash << 4) | (uint64_t) (c <= '9'? c - '0': c - 'a' + 10);
    }
    return hash? hash: 1;
}

//  Brings an entry's tokens up to now
static void
s_refill (xxl_http_limit_t *self, entry_t *entry, int64_t now)
{
    if (now > entry->at) {
        entry->tokens += (double) (now - entry->at) / (double) self->interval_ms;
        if (entry->tokens > self->burst)
            entry->tokens = self->burst;
        entry->at = now;
    }
}

static entry_t *
s_set (xxl_http_limit_t *self, uint64_t hash)
{
    return self->entries + (hash % self->sets) * XXL_HTTP_LIMIT_WAYS;
}

//  The entry of hash, brought up to now; NULL when it has none
static entry_t *
s_find (xxl_http_limit_t *self, uint64_t hash, int64_t now)
{
    entry_t *set = s_set (self, hash);
    for (int i = 0; i < XXL_HTTP_LIMIT_WAYS; i++)
        if (set [i].key == hash) {
            s_refill (self, &set [i], now);
            return &set [i];
        }
    return NULL;
}

//  A new entry for hash with a full bucket: a free way of its set, else
//  the one with the most tokens, the oldest of those (never `keep`)
static entry_t *
s_insert (xxl_http_limit_t *self, uint64_t hash, int64_t now, const entry_t *keep)
{
    entry_t *set = s_set (self, hash);
    entry_t *chosen = NULL;
    for (int i = 0; i < XXL_HTTP_LIMIT_WAYS; i++) {
        entry_t *entry = &set [i];
        if (entry == keep)
            continue;
        if (!entry->key) {
            chosen = entry;
            break;
        }
        s_refill (self, entry, now);
        if (!chosen || entry->tokens > chosen->tokens
        ||  (entry->tokens == chosen->tokens && entry->at < chosen->at))
            chosen = entry;
    }
    assert (chosen);
    if (!chosen->key)
        self->used++;
    *chosen = (entry_t) { .key = hash, .tokens = self->burst, .at = now };
    return chosen;
}

static void
s_free (xxl_http_limit_t *self, entry_t *entry)
{
    entry->key = 0;
    self->used--;
}

int64_t
xxl_http_limit_take (xxl_http_limit_t *self, const char *address, const char *name,
                     int64_t now)
{
    bool by_address = address && *address, by_name = name && *name;
    uint64_t ha = by_address? s_hash (self, 'a', address): 0;
    uint64_t hn = by_name? s_hash (self, 'n', name): 0;
    pthread_mutex_lock (&self->lock);
    entry_t *a = by_address? s_find (self, ha, now): NULL;
    entry_t *n = by_name? s_find (self, hn, now): NULL;
    double lowest = self->burst;
    if (a && a->tokens < lowest)
        lowest = a->tokens;
    if (n && n->tokens < lowest)
        lowest = n->tokens;
    int64_t wait = 0;
    if (lowest < 1) {
        //  (rounded up, and at least 1 ms: a refusal is never "0")
        double need = (1 - lowest) * (double) self->interval_ms;
        wait = (int64_t) need;
        if ((double) wait < need || wait < 1)
            wait++;
    }
    else {
        if (by_address && !a)
            a = s_insert (self, ha, now, n);
        if (by_name && !n)
            n = s_insert (self, hn, now, a);
        if (a)
            a->tokens -= 1;
        if (n)
            n->tokens -= 1;
    }
    pthread_mutex_unlock (&self->lock);
    return wait;
}

//  A token back to the entry of hash, if it has one (an entry whose
//  bucket is then full restricts nothing: it goes); all of them: the
//  entry goes
static void
s_give_back (xxl_http_limit_t *self, uint64_t hash, int64_t now, bool all)
{
    entry_t *entry = hash? s_find (self, hash, now): NULL;
    if (entry && (all || (entry->tokens += 1) >= self->burst))
        s_free (self, entry);
}

void
xxl_http_limit_success (xxl_http_limit_t *self, const char *address, const char *name,
                        int64_t now)
{
    uint64_t ha = address && *address? s_hash (self, 'a', address): 0;
    uint64_t hn = name && *name? s_hash (self, 'n', name): 0;
    pthread_mutex_lock (&self->lock);
    s_give_back (self, ha, now, false);
    s_give_back (self, hn, now, true);
    pthread_mutex_unlock (&self->lock);
}

void
xxl_http_limit_refund (xxl_http_limit_t *self, const char *address, const char *name,
                       int64_t now)
{
    uint64_t ha = address && *address? s_hash (self, 'a', address): 0;
    uint64_t hn = name && *name? s_hash (self, 'n', name): 0;
    pthread_mutex_lock (&self->lock);
    s_give_back (self, ha, now, false);
    s_give_back (self, hn, now, false);
    pthread_mutex_unlock (&self->lock);
}

size_t
xxl_http_limit_used (xxl_http_limit_t *self)
{
    pthread_mutex_lock (&self->lock);
    size_t used = self->used;
    pthread_mutex_unlock (&self->lock);
    return used;
}

size_t
xxl_http_limit_slots (xxl_http_limit_t *self)
{
    return self->sets * XXL_HTTP_LIMIT_WAYS;
}
