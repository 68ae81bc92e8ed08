/*  xxl_block_rules.c -- the block strategy at the agent (contract:
    xxl_block_rules.h).
*/

#include <assert.h>
#include <string.h>
#include "xxl_block_rules.h"

xxl_block_t
xxl_block_decide (bool exists, bool changed, bool busy, const char *strategy)
{
    assert (!changed || exists);
    assert (!busy || (exists && !changed));
    xxl_block_t block = { XXL_BLOCK_QUEUE, NULL };
    if (changed) {
        block.action = XXL_BLOCK_REPLACE;
        block.why = "change jobhandler or glue type, and terminate the old job thread.";
    }
    else
    if (busy && strategy && strcmp (strategy, "DISCARD_LATER") == 0) {
        block.action = XXL_BLOCK_DISCARD;
        block.why = "block strategy effect: Discard Later";
    }
    else
    if (busy && strategy && strcmp (strategy, "COVER_EARLY") == 0) {
        block.action = XXL_BLOCK_REPLACE;
        block.why = "block strategy effect: Cover Early";
    }
    return block;
}
