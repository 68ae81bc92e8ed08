/*  xxl_admit_rules.c -- a job's maxRunning slots as a pure function
    (contract in xxl_admit_rules.h).
*/

#include "xxl_admit_rules.h"
#include <assert.h>
#include <string.h>

static int64_t
s_min (int64_t a, int64_t b)
{
    return a < b? a: b;
}

xxl_admit_t
xxl_admit_decide (const char *block, int64_t max_running, int64_t running, int64_t waiting,
                  int64_t killing)
{
    xxl_admit_t decision = { 0, 0, 0, 0 };
    if (max_running <= 0 || waiting <= 0)
        return decision;
    if (running < 0)
        running = 0;
    if (killing < 0)
        killing = 0;
    if (killing > running)
        killing = running;
    int64_t free_slots = max_running > running? max_running - running: 0;
    if (block && strcmp (block, "DISCARD_LATER") == 0) {
        decision.admit = s_min (free_slots, waiting);
        decision.fail = waiting - decision.admit;
    }
    else
    if (block && strcmp (block, "COVER_EARLY") == 0) {
        //  The newest max_running waiting rows stay; older ones are covered
        int64_t keep = s_min (waiting, max_running);
        decision.fail = waiting - keep;
        decision.covered = 1;
        //  (the kept rows are the newest: the admitted ones are the oldest
        //  of them, taken after the covered ones)
        decision.admit = s_min (free_slots, keep);
        int64_t need = keep - decision.admit;
        //  Each kept row still waiting needs one run ended: kills under
        //  way count
        int64_t more = need > killing? need - killing: 0;
        decision.kill = s_min (more, running - killing);
    }
    else
        decision.admit = s_min (free_slots, waiting);
    assert (decision.admit >= 0 && decision.fail >= 0 && decision.kill >= 0);
    assert (decision.admit + decision.fail <= waiting);
    assert (decision.admit <= free_slots);
    return decision;
}
