/*  xxl_timer.h -- a millisecond timer heap of planned triggers.

    The planner pushes (fire time, log id) for every trigger it wrote for
    the pre-read window; the engine pops what is due each loop turn and
    wakes for the earliest.  A binary min-heap: O(log n) push/pop, a few
    bytes per entry, no one-second granularity.  Engine thread only.
*/

#ifndef XXL_TIMER_H_INCLUDED
#define XXL_TIMER_H_INCLUDED

#include <stdint.h>
#include <stddef.h>

typedef struct _xxl_timer_t xxl_timer_t;

xxl_timer_t *xxl_timer_new (void);
void xxl_timer_destroy (xxl_timer_t **self_p);
//  Adds an entry; 0, or -1 when out of memory.
int xxl_timer_push (xxl_timer_t *self, int64_t when_ms, int64_t log_id);
//  The earliest fire time, or -1 when empty.
int64_t xxl_timer_next (xxl_timer_t *self);
//  Pops the earliest entry if it is due at now_ms: returns 0 and fills
//  log_id (and *when_ms if not NULL), else -1.
int xxl_timer_pop_due (xxl_timer_t *self, int64_t now_ms, int64_t *log_id, int64_t *when_ms);
size_t xxl_timer_size (xxl_timer_t *self);

#endif
