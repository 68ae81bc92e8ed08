/*  xxl_recover.c -- what a previous holder of a share left: recovery.

    When this scheduler takes shares (at its start, or from a scheduler
    that stopped), the rows their jobs' planners wrote and may or may not
    have sent are judged by their share's fired marks: rows past the mark
    were never sent and fire again (or as their misfire rule says); rows
    that may have left are asked about at their agent (a RUN sent expired:
    the agent answers whether it took it) and counted as sent past a
    deadline.  Rows waiting for their agent to come back are re-sent when it
    registers.  Contract in xxl_planner.h.
*/

#include "xxl_engine.h"
#include "xxl_plan_rules.h"

//  Asking agents.  A planned row routed ahead leaves at its instant with
//  no store write, and the commit after it raises its share's fired_sent;
//  a row sent through the store had its fire time committed before it
//  left.  So when the previous owner of a share stopped, a due row past
//  fired_sent may have left in its last turn or not.  While it is inside
//  the pre-read window it simply goes again (its agent refuses a logId it
//  has).  Past the window the misfire rule would judge it as never sent,
//  and DO_NOTHING would delete the row of a run that may have started (a
//  run with no row).  Such a row is asked about instead: a RUN to the
//  same agent whose expireTime is 1, long past, so that nothing can start
//  from it.  An agent that accepted the logId before
//  answers 200 "already accepted" (xxl-agent's journal; docs/protocol.md):
//  the row stays as a run and its result ends it.  One that never had it
//  refuses it "expired: ...": it never ran, and only then does the
//  misfire rule apply (DO_NOTHING drops it; FIRE_ONCE_NOW makes it the
//  outage's MISFIRE unless the outage has one).  An agent that does not
//  say: the row counts as sent, as a re-send's does.  One that does not
//  come back within lost_after (at least recovery_wait): the same, and it
//  is still asked should it come back later (for a day), so that a row it
//  never had does not wait for a result for ever.

#define XXL_ASK_LATE_MS  (24 * 3600 * 1000)  //  a counted ask lives this long

#define XXL_ASK_NOTE "asked after a scheduler restart whether the agent took it before" \
                     " (expireTime past: it cannot start now)\n"

//  Whether a recovered row must be asked about: xxl_plan_row_unknown
//  (xxl_plan_rules.h)

static void
s_ask_add (server_t *self, int64_t log_id, int64_t job_id)
{
    if (zhashx_lookup (self->planner.asks, &log_id))
        return;
    int64_t wait = self->config.lost_after_ms > self->config.recovery_wait_ms
                 ? self->config.lost_after_ms: self->config.recovery_wait_ms;
    xxl_ask_t *ask = (xxl_ask_t *) zmalloc (sizeof (xxl_ask_t));
    ask->log_id = log_id;
    ask->job_id = job_id;
    ask->deadline = zclock_mono () + wait;
    zhashx_insert (self->planner.asks, &ask->log_id, ask);
    int64_t *state = (int64_t *) zhashx_lookup (self->planner.ask_jobs, &job_id);
    if (!state) {
        state = (int64_t *) zmalloc (3 * sizeof (int64_t));
        state [0] = job_id;
        state [1] = -1;
        zhashx_insert (self->planner.ask_jobs, &state [0], state);
    }
    state [2]++;
}

//  The ask of log_id is over
static void
s_ask_forget (server_t *self, int64_t log_id)
{
    xxl_ask_t *ask = (xxl_ask_t *) zhashx_lookup (self->planner.asks, &log_id);
    if (!ask)
        return;
    int64_t job_id = ask->job_id;
    zhashx_delete (self->planner.asks, &log_id);
    int64_t *state = (int64_t *) zhashx_lookup (self->planner.ask_jobs, &job_id);
    if (state && --state [2] <= 0)
        zhashx_delete (self->planner.ask_jobs, &job_id);
}

//  Back on the re-send list, to be asked once its agent is connected
static void
s_ask_again (server_t *self, int64_t log_id, const char *address)
{
    engine_resend_add (self, log_id, address);
}

//  The agent did not tell (it stayed away, gave no answer, or answered
//  something else): the row counts as sent, as a re-send's.  away: it
//  stayed away; it is still asked should it come back
static void
s_ask_unknown (server_t *self, int64_t log_id, const char *address, const char *what,
               bool away)
{
    char *why = zsys_sprintf ("\nasked after a restart whether agent %s took this run"
                              " before: %s; it may have, so it counts as sent: its result"
                              " ends it, or the lost-run monitor\n", address, what);
    int changed = xxl_store_log_accept (self->store, log_id, 0);
    if (changed == 1)
        xxl_store_log_append_trigger_msg (self->store, log_id, why);
    zstr_free (&why);
    if (changed < 0) {
        s_ask_again (self, log_id, address);
        return;
    }
    zsys_info ("planner: log %" PRId64 ": agent %s did not say whether it took it before"
               " (%s): counted as sent", log_id, address, what);
    xxl_ask_t *ask = (xxl_ask_t *) zhashx_lookup (self->planner.asks, &log_id);
    if (away && ask && changed == 1) {
        ask->counted = true;
        ask->deadline = zclock_mono () + XXL_ASK_LATE_MS;
        s_ask_again (self, log_id, address);
    }
    else
        s_ask_forget (self, log_id);
}

//  A row re-sent by recovery (or after a failed store write) whose agent
//  stayed away past the wait, now counted as sent: a planned fire (the
//  rows xxl_plan_row_unknown would ask about) is asked should its agent
//  come back (for a day), as an asked row counted as sent is, so that one
//  it never had is judged by the misfire rule (dropped; never a second
//  MISFIRE for the outage) instead of failed as lost by the lost-run
//  monitor.  Any other row (a manual trigger, a retry) stays the lost-run
//  monitor's: failed, its job's retry applies
static void
s_ask_late (server_t *self, int64_t log_id, const char *address)
{
    xxl_log_t log;
    if (xxl_store_log_load (self->store, log_id, &log))
        return;
    if (log.schedule_time > 0 && !(log.trigger_type && streq (log.trigger_type, "BACKFILL"))) {
        s_ask_add (self, log_id, log.job_id);
        xxl_ask_t *ask = (xxl_ask_t *) zhashx_lookup (self->planner.asks, &log_id);
        assert (ask);
        ask->counted = true;
        ask->deadline = zclock_mono () + XXL_ASK_LATE_MS;
        int64_t *state = (int64_t *) zhashx_lookup (self->planner.ask_jobs, &log.job_id);
        if (state && state [1] == -1)
            state [1] = 0;
        s_ask_again (self, log_id, address);
    }
    xxl_log_free (&log);
}

//  Sends the ask of a row to address (connected): a single RUN whose
//  expireTime is 1, long past
static void
s_ask_send (server_t *self, int64_t log_id, const char *address)
{
    xxl_log_t log;
    int rc = xxl_store_log_load (self->store, log_id, &log);
    if (rc < 0) {
        s_ask_again (self, log_id, address);
        return;
    }
    xxl_ask_t *ask = (xxl_ask_t *) zhashx_lookup (self->planner.asks, &log_id);
    bool counted = ask && ask->counted;
    if (rc > 0 || log.trigger_code != (counted? XXL_OK: 0) || log.handle_code != 0
    ||  engine_accepted_has (self, log_id) || !engine_lease_holds (self, log.job_id)) {
        //  Gone, answered (its agent's spooled result came first), or of a
        //  share this scheduler lost since (its new holder asks)
        if (rc == 0 && log.handle_code != 0 && !counted)
            zsys_info ("planner: log %" PRId64 ": its agent %s took it before the restart"
                       " (its result came first)", log_id, address);
        if (rc == 0)
            xxl_log_free (&log);
        s_ask_forget (self, log_id);
        return;
    }
    xxl_job_t job;
    if (xxl_store_job_load (self->store, log.job_id, &job)) {
        xxl_log_free (&log);
        s_ask_forget (self, log_id);
        engine_dispatch_row (self, log_id, address, NULL);     //  (fails it: job removed)
        return;
    }
    char *section = engine_section (XXL_ASK_NOTE, address, XXL_OK, NULL);
    int changed = xxl_store_log_route (self->store, log_id, 0, address, section);
    size_t rid_size;
    const void *rid = xxl_registry_route (self->registry, address, &rid_size);
    char why [256];
    pending_t *pending = changed == 1 && rid
                       ? engine_pending_new (self, address, PENDING_RUN,
                                             self->config.run_timeout_ms, why, sizeof why)
                       : NULL;
    if (pending) {
        pending->log_id = log_id;
        pending->job_id = job.id;
        pending->note = strdup (XXL_ASK_NOTE);
        pending->presumed = engine_section_chars (XXL_ASK_NOTE, address);
        pending->ask = true;
        int index, total;
        engine_shard_of (log.executor_sharding_param, &index, &total);
        size_t size;
        const unsigned char *tp = engine_encode_tp (self, &job, log_id, log.executor_param,
                                                    index, total, &size);
        assert (size >= 5);
        //  The single form (engine_run_queue's), its expireTime as given:
        //  expire_offset stays 0, so the outbox leaves it as it is
        uint32_t keys = (uint32_t) tp [1] << 24 | (uint32_t) tp [2] << 16
                      | (uint32_t) tp [3] << 8 | tp [4];
        xxl_enc_request (self->enc, "RUN", pending->id);
        xxl_enc_raw (self->enc, tp + 5, size - 5, keys);
        unsigned char stamp [9];
        engine_pack_time (stamp, log.trigger_time);
        xxl_enc_raw (self->enc, stamp, sizeof stamp, 0);
        xxl_enc_kint (self->enc, "expireTime", 1);       //  (long past on any clock)
        engine_queue_agent (self, rid, rid_size, pending->id);
    }
    else
    if (changed < 0 || (changed == 1 && !rid))
        s_ask_again (self, log_id, address);  //  (the store failed: later)
    else
        s_ask_forget (self, log_id);
    zstr_free (&section);
    xxl_job_free (&job);
    xxl_log_free (&log);
}

//  The agent's answer to an ask (code 0: none; msg NULL then: the send
//  failed, the agent's connection had closed)
void
engine_ask_answer (server_t *self, pending_t *pending, int code, const char *msg)
{
    assert (pending->ask);
    int64_t log_id = pending->log_id;
    xxl_ask_t *ask = (xxl_ask_t *) zhashx_lookup (self->planner.asks, &log_id);
    if (!ask) {
        //  (forgotten meanwhile: a plain answer)
        engine_run_done (self, pending, code, msg);
        return;
    }
    if (code == XXL_OK) {
        //  It took it before (or, an agent that does not judge expireTime,
        //  now): a run, whose result ends it
        zsys_info ("planner: log %" PRId64 ": its agent %s took it before the restart (%s):"
                   " a run, its result ends it", log_id, pending->address, msg? msg: "200");
        s_ask_forget (self, log_id);
        engine_run_done (self, pending, code, msg);
        return;
    }
    if (code == XXL_CONFLICT) {
        //  Its journal holds the logId for another run: this row's run
        //  never went there (the store handed its id out again), it fails
        s_ask_forget (self, log_id);
        engine_run_done (self, pending, code, msg);
        return;
    }
    if (code == 0 && !msg) {
        s_ask_again (self, log_id, pending->address);
        return;
    }
    if (code == 0 || !msg || strncmp (msg, "expired:", 8) != 0) {
        char what [300];
        if (code == 0)
            snprintf (what, sizeof what, "no answer within %d ms", self->config.run_timeout_ms);
        else
            snprintf (what, sizeof what, "it answered %d %.200s", code, msg? msg: "");
        s_ask_unknown (self, log_id, pending->address, what, false);
        return;
    }
    //  Refused as expired: it never ran, and the misfire rule applies now
    int64_t job_id = ask->job_id;
    if (!engine_lease_holds (self, job_id)) {
        s_ask_forget (self, log_id);    //  (its share's new holder asks)
        return;
    }
    if (ask->counted) {
        //  Counted as sent while its agent was away: unsent again, unless
        //  its result came meanwhile (the lost-run monitor)
        xxl_log_t row;
        int rc = xxl_store_log_load (self->store, log_id, &row);
        bool open = rc == 0 && row.trigger_code == XXL_OK && row.handle_code == 0;
        if (rc == 0)
            xxl_log_free (&row);
        if (!open || xxl_store_log_trigger_end (self->store, log_id, 0, 0, "", 0, NULL) != 1) {
            s_ask_forget (self, log_id);
            return;
        }
    }
    int64_t *state = (int64_t *) zhashx_lookup (self->planner.ask_jobs, &job_id);
    bool misfire = false;
    xxl_job_t job;
    if (xxl_store_job_load (self->store, job_id, &job) == 0) {
        misfire = state && state [1] == 1 && job.trigger_status == 1
               && streq (job.misfire_strategy, "FIRE_ONCE_NOW");
        if (misfire) {
            //  The outage's one MISFIRE; the job's next time, past by now,
            //  moves after now (as recovery's does)
            state [1] = 0;
            int64_t now = engine_now ();
            char why [256];
            int64_t next = job.trigger_next_time != XXL_WAITING && job.trigger_next_time <= now
                         ? engine_job_next (self, &job, now, why, sizeof why): 0;
            if (next > 0)
                xxl_store_job_set_times (self->store, job.id, job.trigger_last_time, next);
        }
        xxl_job_free (&job);
    }
    char *section = engine_section (pending->note, pending->address, XXL_OK, NULL);
    int unrouted = xxl_store_log_unroute (self->store, log_id, section, 1);
    zstr_free (&section);
    if (unrouted != 1) {
        s_ask_forget (self, log_id);    //  (answered meanwhile, or routed again since)
        return;
    }
    if (misfire) {
        xxl_store_recover_misfire (self->store, log_id);
        xxl_log_t row;
        if (xxl_store_log_load (self->store, log_id, &row) == 0) {
            char *text = engine_text_misfire (row.trigger_msg? row.trigger_msg: "");
            xxl_store_log_set_trigger_msg (self->store, log_id, text);
            zstr_free (&text);
            xxl_log_free (&row);
        }
        xxl_timer_push_after (self->planner.timer, engine_now (), 0, log_id);
    }
    else {
        engine_run_ended (self, log_id, XXL_END_TRIGGER, XXL_CODE_FAIL, engine_now ());
        xxl_store_log_drop_unsent (self->store, log_id);
        self->metrics.fires_skipped++;
    }
    zsys_info ("planner: log %" PRId64 ": its agent %s never took it (%s): %s", log_id,
               pending->address, msg, misfire? "it fires now as the outage's MISFIRE"
                                             : "dropped, as the misfire rule says");
    s_ask_forget (self, log_id);
}

//  A row of the shares in mask that this scheduler has sent, or is
//  sending, a RUN of: stamped as sent (its planned time as its trigger
//  time, as an asked row's), so that no pass of the recovery takes it for
//  unsent (plans it again, or drops it as late while its RUN leaves)
static void
s_recover_mark_sent (server_t *self, uint64_t mask, int64_t log_id)
{
    xxl_log_t log;
    if (xxl_store_log_load (self->store, log_id, &log))
        return;
    if ((engine_share_bit (log.job_id) & mask) && log.trigger_code == 0
    &&  log.schedule_time > 0 && *log.executor_address && log.trigger_time < log.schedule_time)
        xxl_store_log_stamp (self->store, log_id, log.schedule_time);
    xxl_log_free (&log);
}

//  The rows this scheduler has RUNs of in flight (a take of shares it held
//  a moment ago: a stall past its leases, a failed commit's take again; a
//  re-send may have gone in this very turn) or knows accepted: marked
//  sent before the passes below read the unsent rows
static void
s_recover_mark_flying (server_t *self, uint64_t mask)
{
    zhashx_t *flying = engine_runs_in_flight (self);
    for (void *item = zhashx_first (flying); item; item = zhashx_next (flying))
        s_recover_mark_sent (self, mask, *(const int64_t *) zhashx_cursor (flying));
    zhashx_destroy (&flying);
    for (void *item = zhashx_first (self->runs.accepted_ids); item;
         item = zhashx_next (self->runs.accepted_ids))
        s_recover_mark_sent (self, mask, *(const int64_t *) zhashx_cursor (self->runs.accepted_ids));
}

//  When shares are taken (at start, or from a scheduler that stopped
//  renewing them): every trigger row of their jobs no agent acknowledged.
//  Never-sent rows are sent (or follow the misfire rule when too late);
//  rows that may have been sent go again to the same agent once it is
//  back (it refuses a logId it already accepted, so nothing runs twice).
//  leases: the shares' rows as read before the take (their fired marks).
void
engine_recover (server_t *self, uint64_t mask, const xxl_lease_t *leases)
{
    int64_t now = engine_now ();
    int64_t ids [4096];
    size_t count = 0, recovered = 0, dropped = 0, resent = 0, misfired = 0;
    int64_t after = 0;
    //  Never-sent rows planned more than the window ago: the job's misfire
    //  rule, once per job -- FIRE_ONCE_NOW keeps the latest as MISFIRE
    int64_t late_before = now - self->config.preread_ms;
    //  Rows a commit knows were fired with no store access, whose fire
    //  time was not written yet: they went at their planned time; so did
    //  the rows whose RUN this scheduler has in flight
    xxl_store_recover_stamp_fired_in (self->store, mask);
    s_recover_mark_flying (self, mask);
    //  Rows past the window that may have left in the previous owner's
    //  last turn: asked about (see "Asking agents"), not judged by the
    //  misfire rule here.  Their planned time becomes their trigger time,
    //  which takes them out of the unsent ones.
    size_t asked = 0;
    zlistx_t *ask_jobs = zlistx_new ();
    do {
        xxl_store_log_unsent_in (self->store, mask, after, ids, 4096, &count);
        for (size_t i = 0; i < count; i++) {
            after = ids [i];
            xxl_log_t log;
            if (xxl_store_log_load (self->store, ids [i], &log))
                continue;
            if (xxl_plan_row_unknown (&log, &leases [log.job_id % XXL_STORE_SHARES], now,
                                      late_before, engine_lease_store_ahead (self))
            &&  (log.trigger_time >= log.schedule_time
                 || xxl_store_log_stamp (self->store, log.id, log.schedule_time) == 1)) {
                int64_t *state = (int64_t *) zhashx_lookup (self->planner.ask_jobs, &log.job_id);
                if (!state || state [1] == -1)
                    zlistx_add_end (ask_jobs, (void *) (intptr_t) log.job_id);
                s_ask_add (self, log.id, log.job_id);
                asked++;
            }
            xxl_log_free (&log);
        }
    } while (count == 4096);
    after = 0;
    //  Unsent: no address, or routed ahead and neither stamped nor known
    //  sent (one sent in the last turn before a stop is not known: see
    //  the second pass)
    xxl_store_recover_late_jobs_in (self->store, mask, late_before, ids, 4096, &count);
    for (size_t i = 0; i < count; i++) {
        xxl_job_t job;
        int64_t keep = 0;
        if (xxl_store_job_load (self->store, ids [i], &job) == 0) {
            //  Once per outage: when the job's next time is past the window
            //  too, the planner's misfire fires it once (s_plan_job), and
            //  these rows go
            bool planner_fires = xxl_plan_planner_fires (job.trigger_status,
                                                         job.trigger_next_time, late_before);
            if (xxl_plan_recover_misfire (job.misfire_strategy, planner_fires))
                keep = xxl_store_recover_late_last (self->store, job.id, late_before);
            //  The MISFIRE fired here is the outage's one: a next time
            //  that is past by now (the planner's first scan, a moment
            //  later, could find it past the window too) moves after now,
            //  as the planner's own misfire does
            char why [256];
            int64_t next = keep > 0 && job.trigger_status == 1 && job.trigger_next_time != XXL_WAITING
                         && job.trigger_next_time <= now
                         ? engine_job_next (self, &job, now, why, sizeof why): 0;
            if (next > 0)
                xxl_store_job_set_times (self->store, job.id, job.trigger_last_time, next);
            xxl_job_free (&job);
        }
        int64_t *state = (int64_t *) zhashx_lookup (self->planner.ask_jobs, &ids [i]);
        if (state && state [1] == -1 && keep > 0)
            state [1] = 0;              //  (this is the outage's MISFIRE)
        if (keep > 0) {
            //  The outage's misfire compensation: its type, and its text
            //  (xxl_trigger.c's)
            xxl_store_recover_misfire (self->store, keep);
            xxl_log_t row;
            if (xxl_store_log_load (self->store, keep, &row) == 0) {
                char *text = engine_text_misfire (row.trigger_msg? row.trigger_msg: "");
                xxl_store_log_set_trigger_msg (self->store, keep, text);
                zstr_free (&text);
                xxl_log_free (&row);
            }
            misfired++;
        }
        int gone = xxl_store_recover_drop_late (self->store, ids [i], late_before, keep);
        dropped += gone > 0? (size_t) gone: 0;
    }
    //  Jobs with rows asked about: a refused one is the outage's MISFIRE
    //  under FIRE_ONCE_NOW, unless recovery kept one above or the
    //  planner's own misfire fires the job
    for (void *item = zlistx_first (ask_jobs); item; item = zlistx_next (ask_jobs)) {
        int64_t job_id = (int64_t) (intptr_t) item;
        int64_t *state = (int64_t *) zhashx_lookup (self->planner.ask_jobs, &job_id);
        xxl_job_t job;
        if (!state || state [1] != -1)
            continue;
        state [1] = 0;
        if (xxl_store_job_load (self->store, job_id, &job) == 0) {
            bool planner_fires = xxl_plan_planner_fires (job.trigger_status,
                                                         job.trigger_next_time, late_before);
            state [1] = xxl_plan_recover_misfire (job.misfire_strategy, planner_fires);
            xxl_job_free (&job);
        }
    }
    zlistx_destroy (&ask_jobs);
    //  Due rows routed ahead that may have gone in the last turn (they go
    //  again to the same agent below): their planned time as trigger time
    xxl_store_recover_stamp_due_in (self->store, mask, now);
    do {
        xxl_store_log_unsent_in (self->store, mask, after, ids, 4096, &count);
        for (size_t i = 0; i < count; i++) {
            after = ids [i];
            xxl_log_t log;
            if (xxl_store_log_load (self->store, ids [i], &log))
                continue;
            //  Routed ahead, not known sent: not due yet, it cannot have
            //  gone; due, it may have gone in the last turn before the
            //  stop, so it goes to the same agent, which refuses a logId
            //  it has
            bool unsent = log.schedule_time > leases [log.job_id % XXL_STORE_SHARES].fired_sent
                       && log.trigger_time < log.schedule_time && log.schedule_time > now;
            if (*log.executor_address && !unsent) {
                //  (asked rows too: they are asked once their agent is back)
                engine_resend_add (self, log.id, log.executor_address);
                resent += !zhashx_lookup (self->planner.asks, &log.id);
            }
            else {
                if (*log.executor_address)
                    //  Routed ahead, never sent: route again at its time
                    xxl_store_log_clear_address (self->store, log.id);
                //  At its time: a planned row's instant, or a retry's
                //  (xxl_services.c gives a retry waiting for its interval
                //  the trigger time it is due at); any other row now
                //  (a retry's and any other row's as delays: a wall
                //  clock stepped later moves them, not a planned instant)
                if (log.schedule_time > 0)
                    xxl_timer_push (self->planner.timer, log.schedule_time > now
                                    ? log.schedule_time: now, log.id);
                else {
                    int64_t due = streq (log.trigger_type, "RETRY")? log.trigger_time: now;
                    xxl_timer_push_after (self->planner.timer, now, due > now? due - now: 0,
                                          log.id);
                }
                recovered++;
            }
            xxl_log_free (&log);
        }
    } while (count == 4096);
    self->metrics.fires_skipped += dropped;
    if (recovered || dropped || resent || asked)
        zsys_info ("planner: recovery: %zu unsent trigger(s) planned again (%zu as MISFIRE),"
                   " %zu to re-send to their agents when back, %zu dropped as misfired,"
                   " %zu past the window to ask their agents about (sent just before the"
                   " stop, or not)", recovered, misfired, resent, dropped, asked);
}

//  Re-sends rows put back (recovery, a failed store write) once their
//  agent is connected again; past the wait, fails them.  At most
//  XXL_RESENDS_PASS a pass (a pass comes every 200 ms), oldest first, so
//  that a recovery of many rows leaves the loop free for the agents
//  between its passes
#define XXL_RESENDS_PASS 4096
void
engine_recover_resends (server_t *self)
{
    zlistx_t *due = zlistx_new ();
    int64_t now = zclock_mono ();
    for (xxl_resend_t *resend = (xxl_resend_t *) zlistx_first (self->runs.resends);
         resend && zlistx_size (due) < XXL_RESENDS_PASS;
         resend = (xxl_resend_t *) zlistx_next (self->runs.resends)) {
        size_t size;
        xxl_ask_t *ask = (xxl_ask_t *) zhashx_lookup (self->planner.asks, &resend->log_id);
        int64_t deadline = ask? ask->deadline: resend->deadline;
        if (xxl_registry_route (self->registry, resend->address, &size) || now >= deadline) {
            zlistx_detach_cur (self->runs.resends);
            zhashx_delete (self->runs.resend_ids, &resend->log_id);
            zlistx_add_end (due, resend);
        }
    }
    //  Those whose RUN went meanwhile: that one counts.  One a trigger
    //  pool routes waits for its result: put back, it goes to its agent
    //  unless that result routed it (the result may name another address,
    //  which the row's own does not let through).  (The RUNs in flight are
    //  read once, before any is sent: a scan per row made a recovery of N
    //  rows N times the work of sending them)
    if (zlistx_size (due)) {
        zhashx_t *flying = engine_runs_in_flight (self);
        for (xxl_resend_t *item = (xxl_resend_t *) zlistx_first (due); item;
             item = (xxl_resend_t *) zlistx_next (due))
            if (zhashx_lookup (flying, &item->log_id)) {
                void *gone = zlistx_detach_cur (due);
                if (zhashx_lookup (self->runs.routing, &item->log_id))
                    engine_resend_add (self, item->log_id, item->address);
                engine_resend_destroy (&gone);
            }
        zhashx_destroy (&flying);
    }
    xxl_resend_t *resend;
    while ((resend = (xxl_resend_t *) zlistx_detach (due, NULL))) {
        size_t size;
        xxl_ask_t *ask;
        if ((ask = (xxl_ask_t *) zhashx_lookup (self->planner.asks, &resend->log_id))) {
            if (xxl_registry_route (self->registry, resend->address, &size))
                s_ask_send (self, resend->log_id, resend->address);
            else
            if (ask->counted)
                s_ask_forget (self, resend->log_id);
            else {
                char what [128];
                snprintf (what, sizeof what, "it did not come back within %d ms",
                          self->config.lost_after_ms > self->config.recovery_wait_ms
                          ? self->config.lost_after_ms: self->config.recovery_wait_ms);
                s_ask_unknown (self, resend->log_id, resend->address, what, true);
            }
        }
        else
        if (xxl_registry_route (self->registry, resend->address, &size))
        {
            //  (the note names this scheduler: a re-send of the row by
            //  another that took its share over writes another section,
            //  so that each RUN's answer is told apart: engine_run_answer)
            char *note = zsys_sprintf ("re-sent by scheduler %s (after a scheduler restart or"
                                       " a failed store write)\n", engine_lease_node (self));
            engine_dispatch_row (self, resend->log_id, resend->address, note);
            zstr_free (&note);
        }
        else {
            //  The agent may hold the run already (the RUN may have left
            //  before the restart or the failed write): the trigger is not
            //  failed, which would let a retry run it a second time.  It
            //  counts as sent: the agent's result ends it, or, while the
            //  agent stays away, the lost-run monitor (lost_after)
            char *why = zsys_sprintf ("\nagent %s did not come back within %d ms: it may have"
                                      " taken the run before; its result ends it, or the"
                                      " lost-run monitor\n", resend->address,
                                      self->config.recovery_wait_ms);
            int changed = xxl_store_log_accept (self->store, resend->log_id, 0);
            if (changed == 1) {
                xxl_store_log_append_trigger_msg (self->store, resend->log_id, why);
                s_ask_late (self, resend->log_id, resend->address);
            }
            if (changed < 0)
                engine_resend_add (self, resend->log_id, resend->address);
            zstr_free (&why);
        }
        void *item = resend;
        engine_resend_destroy (&item);
    }
    zlistx_destroy (&due);
}

void
engine_plan_on_ask (server_t *self, const xxl_event_t *event)
{
    engine_ask_answer (self, event->pending, event->code, event->msg);
}

//  Shares taken: their waiting FIX_DELAY jobs (before the recovery, which
//  may end the runs they wait for); their rows: recovered by their own
//  fired marks, then covered as far as ours
void
engine_plan_on_taken (server_t *self, const xxl_event_t *event)
{
    engine_waiting_load (self);
    //  Fires this scheduler sent with no store access whose record no
    //  commit has written yet (this turn's, or a failed commit's): they
    //  left, so the recovery must not take their rows for unsent ones
    //  (drop them as late, or route them again).  Raising fired_sent is
    //  safe for a share whose fires were not among them: its rows at or
    //  before it go again to their own agent, which refuses a logId it has
    xxl_lease_t leases [XXL_STORE_SHARES];
    memcpy (leases, event->leases, sizeof leases);
    int64_t sent = self->planner.sent_max;
    if (sent > 0) {
        xxl_store_lease_fired (self->store, event->mask, 0, sent);
        for (int share = 0; share < XXL_STORE_SHARES; share++)
            if (((event->mask >> share) & 1) && leases [share].fired_sent < sent)
                leases [share].fired_sent = sent;
    }
    engine_recover (self, event->mask, leases);
    xxl_store_lease_fired (self->store, event->mask, self->planner.fired_until, 0);
}
