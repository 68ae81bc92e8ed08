/*  xxl_admit_rules.h -- a job's maxRunning slots, decided as a pure
    function (runs/xxl_admit.c acts on the decision; tests/test_rules_admit.c).

    A job with maxRunning N > 0 runs at most N runs at once across every
    agent and scheduler.  A run holds a slot from its admission (its row
    gets an address) until its row is final (a result, a failed trigger,
    the lost-run monitor's or a restarted agent's verdict).  Triggers over
    the limit wait in the store and follow the job's block strategy:
        SERIAL_EXECUTION  wait, oldest first, until slots free
        DISCARD_LATER     failed ("max running reached")
        COVER_EARLY       the newest N wait; each kills one oldest running
                          run, and starts once that run's row is final;
                          older waiting ones are covered (failed)
*/

#ifndef XXL_ADMIT_RULES_H_INCLUDED
#define XXL_ADMIT_RULES_H_INCLUDED

#include <stdint.h>

typedef struct {
    int64_t admit;                      //  waiting rows to start now
    int64_t fail;                       //  waiting rows to fail
    int covered;                        //  1: the `fail` oldest waiting rows fail
                                        //  (COVER_EARLY: covered by newer ones) and
                                        //  the `admit` next ones start; 0: the
                                        //  `admit` oldest start and the `fail` next
                                        //  ones fail (DISCARD_LATER: over the limit)
    int64_t kill;                       //  oldest running runs (not killed yet) to kill
} xxl_admit_t;

//  The decision for one job: max_running (> 0) slots, `running` held
//  (admitted rows with no final result), `waiting` rows due, `killing` of
//  the running ones killed already and not final yet.  block: the job's
//  block strategy (an unknown one counts as SERIAL_EXECUTION).
//  Invariants: admit <= max(0, max_running - running); admit + fail <=
//  waiting; kill <= running - killing.
xxl_admit_t xxl_admit_decide (const char *block, int64_t max_running, int64_t running,
                              int64_t waiting, int64_t killing);

#endif
