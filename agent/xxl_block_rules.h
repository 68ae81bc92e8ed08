/*  xxl_block_rules.h -- the block strategy at the agent, as a pure
    function.

    Contract: what the executor knows of a job's queue when a run comes
    in (whether the job has one, whether the run's handler or glue
    version differs from it, whether it is busy: running or holding
    queued runs) and the run's block strategy in; what to do out.  No
    executor, no locks, no clock, no logging.

    xxl_block_decide (exists, changed, busy, strategy)
        A changed handler or glue version replaces the queue (the new one
        is idle: the strategy has nothing to act on; changed implies
        exists).  On a busy queue (busy implies exists and not changed)
        DISCARD_LATER refuses the run, COVER_EARLY replaces the queue
        (its runs fail, the new run goes first); SERIAL_EXECUTION, any
        other name and NULL queue the run behind the others.  No queue,
        or an idle one: the run is queued (on a new queue when none).
        why: the text the agent gives (the refusal's message, or the
        reason the old queue's runs fail); NULL when queued.
*/

#ifndef XXL_BLOCK_RULES_H_INCLUDED
#define XXL_BLOCK_RULES_H_INCLUDED

#include <stdbool.h>

typedef enum {
    XXL_BLOCK_QUEUE,                    //  queue the run (a new queue when none)
    XXL_BLOCK_DISCARD,                  //  refuse the run
    XXL_BLOCK_REPLACE                   //  stop the queue; the run on a new one
} xxl_block_action_t;

typedef struct {
    xxl_block_action_t action;
    const char *why;                    //  static text, NULL when queued
} xxl_block_t;

xxl_block_t xxl_block_decide (bool exists, bool changed, bool busy, const char *strategy);

#endif
