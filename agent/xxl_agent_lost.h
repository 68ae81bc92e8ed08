/*  xxl_agent_lost.h -- the runs an earlier life of the agent lost.

    Called once by the agent actor at its start (xxl_agent.c), after the
    spool and the journal are open and before the executor takes a run.
    Calls down into the journal, the spool, the guardian and the run logs.
*/

#ifndef XXL_AGENT_LOST_H_INCLUDED
#define XXL_AGENT_LOST_H_INCLUDED

#include "xxl_journal.h"
#include "xxl_spool.h"

//  Reports each run an earlier life accepted and never gave a result for
//  failed ("lost: ..."), through the spool, and kills what is left of its
//  processes; then they are done in the journal.  Logged.
void xxl_agent_lost_report (xxl_journal_t *journal, xxl_spool_t *spool, const char *logdir);

#endif
