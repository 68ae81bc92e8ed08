/*  xxl_agent_lost.c -- the runs an earlier life of the agent lost.

    At start, the journal (xxl_journal.h) names the runs an earlier life
    accepted and never gave a result for: queued or running when it died.
    What is left of their processes is killed (xxl_guard_reap: their
    XXL_AGENT_RUN marker names that life), and each is reported failed
    with a result "lost: ..." through the spool, unless its result is in
    the spool already; then they are done in the journal.  Owns nothing
    past the call.  Called once by the agent actor at its start, before
    the executor takes any run.
*/

#include "xxl_agent_lost.h"
#include "xxl_guard.h"
#include "xxl_runlog.h"
#include "xxl/handler.h"

#include <czmq.h>
#include <inttypes.h>

typedef struct {
    xxl_journal_entry_t *entries;       //  sorted by logId
    size_t count;
} lost_t;

static int
s_entry_cmp (const void *key, const void *entry)
{
    int64_t a = *(const int64_t *) key, b = ((const xxl_journal_entry_t *) entry)->log_id;
    return a < b? -1: a > b;
}

static int
s_lost_match (void *arg, const char *life, int64_t log_id)
{
    lost_t *lost = (lost_t *) arg;
    const xxl_journal_entry_t *entry = (const xxl_journal_entry_t *)
        bsearch (&log_id, lost->entries, lost->count, sizeof *entry, s_entry_cmp);
    char token [48];
    if (entry)
        snprintf (token, sizeof token, "%d.%" PRId64, entry->pid, entry->start_ms);
    return entry && streq (token, life);
}

//  The runs an earlier life accepted and never gave a result for (queued
//  or running when it died): what is left of their processes is killed
//  (had the guardian been killed too), and each is reported failed with a
//  result "lost: ..." through the spool, unless its result is in the spool
//  already.  Then they are done in the journal.
void
xxl_agent_lost_report (xxl_journal_t *journal, xxl_spool_t *spool, const char *logdir)
{
    assert (journal && spool && logdir);
    lost_t lost = { NULL, 0 };
    lost.entries = xxl_journal_lost (journal, &lost.count);
    if (!lost.count)
        return;
    int killed = xxl_guard_reap (s_lost_match, &lost, 0);
    xxl_result_t *results = (xxl_result_t *) calloc (lost.count, sizeof (xxl_result_t));
    int64_t *log_ids = (int64_t *) calloc (lost.count, sizeof (int64_t));
    size_t reported = 0;
    for (size_t i = 0; results && log_ids && i < lost.count; i++) {
        const xxl_journal_entry_t *entry = &lost.entries [i];
        log_ids [i] = entry->log_id;
        if (xxl_spool_pending (spool, entry->log_id))
            continue;
        xxl_result_t *result = &results [reported++];
        result->log_id = entry->log_id;
        result->log_date_time = entry->log_date_time;
        result->code = XXL_CODE_FAIL;
        result->msg = zsys_sprintf ("lost: xxl-agent restarted while this run was queued or"
                                    " running (previous pid %d)", entry->pid);
        xxl_runlog_append (logdir, entry->log_id, entry->log_date_time, result->msg);
    }
    if (!results || !log_ids)
        zsys_error ("agent: out of memory; %zu lost run(s) not reported", lost.count);
    else
    if (reported && xxl_spool_add_batch (spool, results, reported))
        zsys_error ("agent: cannot write the %zu lost run(s) to the spool; reported at the"
                    " next start", reported);
    else {
        xxl_journal_done (journal, log_ids, lost.count);
        xxl_journal_flush (journal);
        zsys_warning ("agent: %zu run(s) of an earlier life lost (queued or running when it"
                      " ended): reported failed; %d leftover process(es) killed",
                      reported, killed);
    }
    for (size_t i = 0; results && i < reported; i++)
        zstr_free (&results [i].msg);
    free (results);
    free (log_ids);
    free (lost.entries);
}

