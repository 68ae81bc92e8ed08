/*  xxl_timer.h -- a millisecond timer heap of planned triggers.

    The planner pushes (fire time, log id) for every trigger it wrote for
    the pre-read window; the engine pops what is due each loop turn and
    wakes for the earliest.  A binary min-heap: O(log n) push/pop, a few
    bytes per entry, no one-second granularity.  Engine thread only.

    Times are wall-clock ms.  An entry is either an instant (a planned
    fire: due when the wall clock says so, whatever it did meanwhile) or a
    delay (a retry's interval, a trigger due now or after a pause: due
    that long after it was pushed).  When the wall clock steps, the caller
    says so (xxl_timer_shift) and the delays move with it, the instants
    stay.
*/

#ifndef XXL_TIMER_H_INCLUDED
#define XXL_TIMER_H_INCLUDED

#include <stdint.h>
#include <stddef.h>

typedef struct _xxl_timer_t xxl_timer_t;

xxl_timer_t *xxl_timer_new (void);
void xxl_timer_destroy (xxl_timer_t **self_p);
//  Adds an instant; 0, or -1 when out of memory.
int xxl_timer_push (xxl_timer_t *self, int64_t when_ms, int64_t log_id);
//  Adds a delay: now_ms + delay_ms, moved by xxl_timer_shift; 0 or -1.
int xxl_timer_push_after (xxl_timer_t *self, int64_t now_ms, int64_t delay_ms, int64_t log_id);
//  The wall clock stepped by step_ms (negative: back): every delay moves
//  by as much, so it stays due as long after its push as it was.
void xxl_timer_shift (xxl_timer_t *self, int64_t step_ms);
//  The earliest fire time, or -1 when empty.
int64_t xxl_timer_next (xxl_timer_t *self);
//  Pops the earliest entry if it is due at now_ms: returns 0 and fills
//  log_id (and *when_ms if not NULL), else -1.
int xxl_timer_pop_due (xxl_timer_t *self, int64_t now_ms, int64_t *log_id, int64_t *when_ms);
size_t xxl_timer_size (xxl_timer_t *self);

#endif
