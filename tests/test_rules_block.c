/*  test_rules_block.c -- the block strategy at the agent as a pure
    function (agent/xxl_block_rules.h), for every state of a job's queue
    (none; idle; busy; changed handler or glue) and every strategy
    (SERIAL_EXECUTION, DISCARD_LATER, COVER_EARLY, an unknown name, none).
*/

#include <string.h>
#include "xxl_block_rules.h"
#include "xxl_test.h"

int
main (void)
{
    const char *strategies [] = { "SERIAL_EXECUTION", "DISCARD_LATER", "COVER_EARLY",
                                  "discard_later", NULL };
    for (int i = 0; i < 5; i++) {
        const char *strategy = strategies [i];
        //  No queue, or an idle one: queued, whatever the strategy
        xxl_block_t block = xxl_block_decide (false, false, false, strategy);
        XXL_CHECK (block.action == XXL_BLOCK_QUEUE && block.why == NULL);
        block = xxl_block_decide (true, false, false, strategy);
        XXL_CHECK (block.action == XXL_BLOCK_QUEUE && block.why == NULL);
        //  Changed handler or glue: replaced, whatever the strategy
        block = xxl_block_decide (true, true, false, strategy);
        XXL_CHECK_INT (block.action, XXL_BLOCK_REPLACE);
        XXL_CHECK_STR (block.why, "change jobhandler or glue type, and terminate the old job thread.");
        //  Busy: as the strategy says
        block = xxl_block_decide (true, false, true, strategy);
        if (i == 1) {
            XXL_CHECK_INT (block.action, XXL_BLOCK_DISCARD);
            XXL_CHECK_STR (block.why, "block strategy effect: Discard Later");
        }
        else
        if (i == 2) {
            XXL_CHECK_INT (block.action, XXL_BLOCK_REPLACE);
            XXL_CHECK_STR (block.why, "block strategy effect: Cover Early");
        }
        else
            XXL_CHECK (block.action == XXL_BLOCK_QUEUE && block.why == NULL);
    }
    XXL_CHECK_INT (xxl_block_decide (true, false, true, "").action, XXL_BLOCK_QUEUE);
    return xxl_test_done ();
}
