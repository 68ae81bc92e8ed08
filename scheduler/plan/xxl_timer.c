/*  xxl_timer.c -- binary min-heap keyed by fire time, then log id.
*/

#include "xxl_timer.h"

#include <stdbool.h>
#include <stdlib.h>

typedef struct {
    int64_t when;
    int64_t log_id;
    bool delay;                         //  moved by xxl_timer_shift
} s_entry_t;

struct _xxl_timer_t {
    s_entry_t *heap;
    size_t size, alloc;
};

static int
s_before (const s_entry_t *a, const s_entry_t *b)
{
    return a->when < b->when || (a->when == b->when && a->log_id < b->log_id);
}

xxl_timer_t *
xxl_timer_new (void)
{
    return (xxl_timer_t *) calloc (1, sizeof (xxl_timer_t));
}

void
xxl_timer_destroy (xxl_timer_t **self_p)
{
    if (self_p && *self_p) {
        free ((*self_p)->heap);
        free (*self_p);
        *self_p = NULL;
    }
}

static int s_push (xxl_timer_t *self, int64_t when_ms, int64_t log_id, bool delay);

int
xxl_timer_push (xxl_timer_t *self, int64_t when_ms, int64_t log_id)
{
    return s_push (self, when_ms, log_id, false);
}

int
xxl_timer_push_after (xxl_timer_t *self, int64_t now_ms, int64_t delay_ms, int64_t log_id)
{
    return s_push (self, now_ms + delay_ms, log_id, true);
}

//  Moves entry i down to its place
static void
s_sift_down (xxl_timer_t *self, size_t i)
{
    s_entry_t entry = self->heap [i];
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= self->size)
            break;
        if (child + 1 < self->size && s_before (&self->heap [child + 1], &self->heap [child]))
            child++;
        if (!s_before (&self->heap [child], &entry))
            break;
        self->heap [i] = self->heap [child];
        i = child;
    }
    self->heap [i] = entry;
}

void
xxl_timer_shift (xxl_timer_t *self, int64_t step_ms)
{
    bool moved = false;
    for (size_t i = 0; i < self->size; i++)
        if (self->heap [i].delay) {
            self->heap [i].when += step_ms;
            moved = true;
        }
    //  (the heap again, bottom up: O(n))
    for (size_t i = self->size / 2; moved && i-- > 0; )
        s_sift_down (self, i);
}

static int
s_push (xxl_timer_t *self, int64_t when_ms, int64_t log_id, bool delay)
{
    if (self->size == self->alloc) {
        size_t alloc = self->alloc? self->alloc * 2: 256;
        s_entry_t *heap = (s_entry_t *) realloc (self->heap, alloc * sizeof (s_entry_t));
        if (!heap)
            return -1;
        self->heap = heap;
        self->alloc = alloc;
    }
    size_t i = self->size++;
    s_entry_t entry = { when_ms, log_id, delay };
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!s_before (&entry, &self->heap [parent]))
            break;
        self->heap [i] = self->heap [parent];
        i = parent;
    }
    self->heap [i] = entry;
    return 0;
}

int64_t
xxl_timer_next (xxl_timer_t *self)
{
    return self->size? self->heap [0].when: -1;
}

int
xxl_timer_pop_due (xxl_timer_t *self, int64_t now_ms, int64_t *log_id, int64_t *when_ms)
{
    if (self->size == 0 || self->heap [0].when > now_ms)
        return -1;
    *log_id = self->heap [0].log_id;
    if (when_ms)
        *when_ms = self->heap [0].when;
    //  (the last entry takes the root's place and sinks to its own)
    self->heap [0] = self->heap [--self->size];
    if (self->size)
        s_sift_down (self, 0);
    return 0;
}

size_t
xxl_timer_size (xxl_timer_t *self)
{
    return self->size;
}
