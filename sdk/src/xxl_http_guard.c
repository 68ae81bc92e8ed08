/*  xxl_http_guard.c -- deadlines and kept slots for an HTTP server's
    connections.  See xxl_http_guard.h.
*/

#include "xxl_http_guard.h"

#include <czmq.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>

struct _xxl_http_slot_t {
    bool used;
    bool reserve;
    bool expired;                       //  shut down already
    int fd;                             //  the guard's duplicate (-1: none)
    int64_t deadline;                   //  monotonic ms; 0: an answer going out
    char address [XXL_HTTP_GUARD_KEY];  //  the client's (xxl_http_guard_address)
};

struct _xxl_http_guard_t {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    xxl_http_slot_t *slots;             //  ordinary + reserve
    size_t ordinary, reserve;
    size_t used_ordinary, used_reserve;
    int64_t timeout_ms, reserve_ms;
    uint64_t expired, refused;
    pthread_t watchdog;
    bool running, stopping;
};

void
xxl_http_guard_address (const struct sockaddr *addr, char key [XXL_HTTP_GUARD_KEY])
{
    key [0] = 0;
    char text [INET6_ADDRSTRLEN];
    if (addr && addr->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *) addr;
        if (inet_ntop (AF_INET, &in->sin_addr, text, sizeof text))
            snprintf (key, XXL_HTTP_GUARD_KEY, "a4 %s", text);
    }
    else
    if (addr && addr->sa_family == AF_INET6) {
        struct in6_addr a6 = ((const struct sockaddr_in6 *) addr)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED (&a6)) {
            if (inet_ntop (AF_INET, &a6.s6_addr [12], text, sizeof text))
                snprintf (key, XXL_HTTP_GUARD_KEY, "a4 %s", text);
        }
        else {
            memset (&a6.s6_addr [8], 0, 8);     //  its /64
            if (inet_ntop (AF_INET6, &a6, text, sizeof text))
                snprintf (key, XXL_HTTP_GUARD_KEY, "a6 %s/64", text);
        }
    }
}

xxl_http_guard_t *
xxl_http_guard_new (size_t ordinary, size_t reserve, int64_t timeout_ms, int64_t reserve_ms)
{
    assert (ordinary >= 1 && timeout_ms >= 1 && reserve_ms >= 1);
    xxl_http_guard_t *self = (xxl_http_guard_t *) calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->slots = (xxl_http_slot_t *) calloc (ordinary + reserve, sizeof (xxl_http_slot_t));
    if (!self->slots) {
        free (self);
        return NULL;
    }
    self->ordinary = ordinary;
    self->reserve = reserve;
    self->timeout_ms = timeout_ms;
    self->reserve_ms = reserve_ms;
    pthread_mutex_init (&self->lock, NULL);
    //  (its ticks on the monotonic clock: a wall clock stepped back must
    //  not stop the watchdog for the step's size)
    pthread_condattr_t attr;
    pthread_condattr_init (&attr);
    pthread_condattr_setclock (&attr, CLOCK_MONOTONIC);
    pthread_cond_init (&self->wake, &attr);
    pthread_condattr_destroy (&attr);
    return self;
}

void
xxl_http_guard_destroy (xxl_http_guard_t **self_p)
{
    xxl_http_guard_t *self = *self_p;
    if (!self)
        return;
    if (self->running) {
        pthread_mutex_lock (&self->lock);
        self->stopping = true;
        pthread_cond_signal (&self->wake);
        pthread_mutex_unlock (&self->lock);
        pthread_join (self->watchdog, NULL);
    }
    for (size_t i = 0; i < self->ordinary + self->reserve; i++)
        if (self->slots [i].used && self->slots [i].fd >= 0)
            close (self->slots [i].fd);
    pthread_cond_destroy (&self->wake);
    pthread_mutex_destroy (&self->lock);
    free (self->slots);
    free (self);
    *self_p = NULL;
}

static void *
s_watchdog (void *arg)
{
    xxl_http_guard_t *self = (xxl_http_guard_t *) arg;
    pthread_mutex_lock (&self->lock);
    while (!self->stopping) {
        struct timespec until;
        clock_gettime (CLOCK_MONOTONIC, &until);
        until.tv_nsec += XXL_HTTP_GUARD_TICK_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait (&self->wake, &self->lock, &until);
        if (self->stopping)
            break;
        pthread_mutex_unlock (&self->lock);
        xxl_http_guard_expire (self, zclock_mono ());
        pthread_mutex_lock (&self->lock);
    }
    pthread_mutex_unlock (&self->lock);
    return NULL;
}

int
xxl_http_guard_start (xxl_http_guard_t *self)
{
    assert (!self->running);
    if (pthread_create (&self->watchdog, NULL, s_watchdog, self))
        return -1;
    self->running = true;
    return 0;
}

xxl_http_slot_t *
xxl_http_guard_open (xxl_http_guard_t *self, int fd, const struct sockaddr *addr, int64_t now)
{
    char address [XXL_HTTP_GUARD_KEY];
    xxl_http_guard_address (addr, address);
    xxl_http_slot_t *slot = NULL;
    pthread_mutex_lock (&self->lock);
    bool reserve = self->used_ordinary >= self->ordinary;
    size_t from = reserve? self->ordinary: 0;
    size_t to = reserve? self->ordinary + self->reserve: self->ordinary;
    bool allowed = true;
    if (reserve)
        //  (one reserve slot per address)
        for (size_t i = from; i < to && allowed; i++)
            if (self->slots [i].used && streq (self->slots [i].address, address))
                allowed = false;
    for (size_t i = from; i < to && allowed && !slot; i++)
        if (!self->slots [i].used)
            slot = &self->slots [i];
    if (slot) {
        *slot = (xxl_http_slot_t) {
            .used = true, .reserve = reserve,
            .fd = fd >= 0? fcntl (fd, F_DUPFD_CLOEXEC, 0): -1,
            .deadline = now + (reserve? self->reserve_ms: self->timeout_ms)
        };
        snprintf (slot->address, sizeof slot->address, "%s", address);
        if (reserve)
            self->used_reserve++;
        else
            self->used_ordinary++;
    }
    else
        self->refused++;
    pthread_mutex_unlock (&self->lock);
    return slot;
}

void
xxl_http_guard_close (xxl_http_guard_t *self, xxl_http_slot_t *slot)
{
    pthread_mutex_lock (&self->lock);
    assert (slot->used);
    if (slot->fd >= 0)
        close (slot->fd);
    if (slot->reserve)
        self->used_reserve--;
    else
        self->used_ordinary--;
    *slot = (xxl_http_slot_t) { .fd = -1 };
    pthread_mutex_unlock (&self->lock);
}

void
xxl_http_guard_notice (xxl_http_guard_t *self, bool started, int fd,
                       const struct sockaddr *addr, void **context, int64_t now)
{
    if (started) {
        xxl_http_slot_t *slot = xxl_http_guard_open (self, fd, addr, now);
        *context = slot;
        if (!slot && fd >= 0)
            shutdown (fd, SHUT_RDWR);
    }
    else
    if (*context) {
        xxl_http_guard_close (self, (xxl_http_slot_t *) *context);
        *context = NULL;
    }
}

bool
xxl_http_guard_reserve (xxl_http_guard_t *self, xxl_http_slot_t *slot)
{
    pthread_mutex_lock (&self->lock);
    bool reserve = slot->reserve;
    pthread_mutex_unlock (&self->lock);
    return reserve;
}

void
xxl_http_guard_received (xxl_http_guard_t *self, xxl_http_slot_t *slot)
{
    pthread_mutex_lock (&self->lock);
    if (slot->reserve)
        //  (its deadline runs on to the close; its address may take
        //  another reserve slot: a health check right after this one)
        slot->address [0] = 0;
    else
        slot->deadline = 0;
    pthread_mutex_unlock (&self->lock);
}

void
xxl_http_guard_sent (xxl_http_guard_t *self, xxl_http_slot_t *slot, int64_t now)
{
    pthread_mutex_lock (&self->lock);
    slot->deadline = now + (slot->reserve? self->reserve_ms: self->timeout_ms);
    pthread_mutex_unlock (&self->lock);
}

size_t
xxl_http_guard_expire (xxl_http_guard_t *self, int64_t now)
{
    size_t count = 0;
    pthread_mutex_lock (&self->lock);
    for (size_t i = 0; i < self->ordinary + self->reserve; i++) {
        xxl_http_slot_t *slot = &self->slots [i];
        if (slot->used && !slot->expired && slot->deadline && now >= slot->deadline) {
            slot->expired = true;
            if (slot->fd >= 0)
                shutdown (slot->fd, SHUT_RDWR);
            count++;
        }
    }
    self->expired += count;
    pthread_mutex_unlock (&self->lock);
    return count;
}

void
xxl_http_guard_used (xxl_http_guard_t *self, size_t *ordinary, size_t *reserve)
{
    pthread_mutex_lock (&self->lock);
    *ordinary = self->used_ordinary;
    *reserve = self->used_reserve;
    pthread_mutex_unlock (&self->lock);
}

void
xxl_http_guard_counts (xxl_http_guard_t *self, uint64_t *expired, uint64_t *refused)
{
    pthread_mutex_lock (&self->lock);
    *expired = self->expired;
    *refused = self->refused;
    pthread_mutex_unlock (&self->lock);
}
