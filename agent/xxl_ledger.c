/*  xxl_ledger.c -- the executor's runs in flight and their results (see
    xxl_ledger.h).

    Its contract (ownership, the one lock, errors) is the header's.  Used
    by the executor only: xxl_executor.c puts runs in flight and takes
    results, xxl_runexec.c hands results in (under a queue's lock: the
    ledger's lock comes last in the executor's order).
*/

#include "xxl_ledger.h"
#include "xxl_imap.h"

#include <czmq.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

typedef struct _node_t {
    xxl_result_t result;
    struct _node_t *next;
} node_t;

struct _xxl_ledger_t {
    pthread_mutex_t lock;               //  guards the four below
    xxl_imap_t *inflight;               //  log id -> item (queued or running)
    node_t *head, *tail;                //  results, in the order they came
    int signalled;                      //  fd holds a count
    int fd;
};

char *
xxl_ledger_msg_copy (const char *msg)
{
    if (!msg)
        return NULL;
    size_t len = strlen (msg);
    if (len > XXL_EXECUTOR_MSG_MAX)
        len = XXL_EXECUTOR_MSG_MAX;
    char *copy = (char *) malloc (len + 1);
    if (copy) {
        memcpy (copy, msg, len);
        copy [len] = 0;
    }
    return copy;
}

xxl_ledger_t *
xxl_ledger_new (void)
{
    xxl_ledger_t *self = (xxl_ledger_t *) calloc (1, sizeof (xxl_ledger_t));
    if (!self)
        return NULL;
    pthread_mutex_init (&self->lock, NULL);
    self->inflight = xxl_imap_new ();
    self->fd = eventfd (0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (!self->inflight || self->fd < 0)
        xxl_ledger_destroy (&self);
    return self;
}

void
xxl_ledger_destroy (xxl_ledger_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    xxl_ledger_t *self = *self_p;
    *self_p = NULL;
    while (self->head) {
        node_t *node = self->head;
        self->head = node->next;
        free (node->result.msg);
        free (node);
    }
    xxl_imap_destroy (&self->inflight);
    if (self->fd >= 0)
        close (self->fd);
    pthread_mutex_destroy (&self->lock);
    free (self);
}

int
xxl_ledger_fd (xxl_ledger_t *self)
{
    return self->fd;
}

void
xxl_ledger_add (xxl_ledger_t *self, int64_t log_id, void *item)
{
    pthread_mutex_lock (&self->lock);
    xxl_imap_put (self->inflight, log_id, item);
    pthread_mutex_unlock (&self->lock);
}

void
xxl_ledger_done (xxl_ledger_t *self, int64_t log_id, int64_t log_date_time,
                 int64_t start_time, int code, const char *msg)
{
    node_t *node = (node_t *) calloc (1, sizeof (node_t));
    if (node) {
        node->result.log_id = log_id;
        node->result.log_date_time = log_date_time;
        node->result.start_time = start_time;
        node->result.code = code;
        node->result.msg = xxl_ledger_msg_copy (msg);
    }
    pthread_mutex_lock (&self->lock);
    if (node) {
        if (self->tail)
            self->tail->next = node;
        else
            self->head = node;
        self->tail = node;
        if (!self->signalled) {
            //  Only on empty -> not empty; take() clears it when empty again
            uint64_t one = 1;
            if (write (self->fd, &one, sizeof one) < 0)
                zsys_warning ("executor: eventfd write: %s", strerror (errno));
            self->signalled = 1;
        }
    }
    xxl_imap_del (self->inflight, log_id);
    pthread_mutex_unlock (&self->lock);
    if (!node)
        zsys_error ("executor: out of memory, result of logId %lld lost",
                    (long long) log_id);
}

int
xxl_ledger_has (xxl_ledger_t *self, int64_t log_id)
{
    pthread_mutex_lock (&self->lock);
    int found = xxl_imap_get (self->inflight, log_id) != NULL;
    pthread_mutex_unlock (&self->lock);
    return found;
}

int
xxl_ledger_visit (xxl_ledger_t *self, int64_t log_id,
                  int (*fn) (void *item, void *arg), void *arg)
{
    pthread_mutex_lock (&self->lock);
    void *item = xxl_imap_get (self->inflight, log_id);
    int rc = item? fn (item, arg): -1;
    pthread_mutex_unlock (&self->lock);
    return rc;
}

size_t
xxl_ledger_take (xxl_ledger_t *self, xxl_result_t *results, size_t max)
{
    pthread_mutex_lock (&self->lock);
    node_t *head = self->head, *last = NULL;
    size_t count = 0;
    for (node_t *node = head; node && count < max; node = node->next) {
        last = node;
        count++;
    }
    if (count) {
        self->head = last->next;
        last->next = NULL;
        if (!self->head) {
            self->tail = NULL;
            uint64_t value;
            if (read (self->fd, &value, sizeof value) < 0)
                {}                  //  already zero
            self->signalled = 0;
        }
    }
    pthread_mutex_unlock (&self->lock);
    //  The nodes are ours now: copy out and free them without the lock
    size_t i = 0;
    while (head && i < count) {
        node_t *next = head->next;
        results [i++] = head->result;
        free (head);
        head = next;
    }
    return count;
}
