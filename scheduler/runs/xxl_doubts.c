/*  xxl_doubts.c -- RUNs whose answer never came: reconciled before a
    retry of them starts (an engine fragment: its state is self->runs.doubts,
    its entry points engine_doubt_*, declared in xxl_engine.h).

    A RUN unanswered after run_timeout may have been taken: the agent read
    it before its expireTime and its 200 was lost with the link (a cable
    cut, a connection reset).  Failing it then would let a retry or a
    failover start while it runs.  So when the agent said a run lease
    (REGISTER runLease), the row is held in doubt instead, its trigger
    still unanswered (trigger_code 0), and it ends in one of three ways:
    -   the agent, asked again (a RUN of just logId with expireTime 1, as
        the open-run ask: nothing can start from it), answers 200 "already
        accepted": the run is its; the row records the trigger as taken
        and the run's result ends it;
    -   it answers "expired: ...": it never took it and never will (a RUN
        past its expireTime never starts): when that is the RUN's own
        agent's word (s_unseen; an answer on another connection while the
        RUN's is open counts once that one closes or the run lease has
        passed since), the run is routed again, as a stopping agent's
        refusal is, up to XXL_UNSEEN_TIMES times; otherwise, or past that,
        the row fails as it did before the doubt, "no answer from the
        agent within N ms", and the job's retry or failover applies;
    -   neither, and the run lease has passed since this scheduler last
        heard from the agent (xxl_heard_until), and no other scheduler of
        the store has heard it since (a registry row stamped within the
        dead time after this scheduler's own: xxl_heard_rows_after; after
        a step of the wall clock its own rows may look another's, which
        only waits longer): whatever it had of the run it has stopped,
        and the row fails the same way;
    -   a user's LOG_KILL whose KILL the agent answers 500 "job thread is
        not running" (engine_doubt_killed): nothing of the job is there
        and the RUN can no longer start, so the row fails as killed.  Any
        other answer to an ask says nothing of the run: the doubt stands
        (logged once per row) while the agent registers.
    A doubt ends and changes nothing when the row gets a result or an
    answer meanwhile, is sent again (a recovery's re-send, a plan, an
    acceptance on its way), or its job's share, this scheduler's when the
    doubt began, passes to another scheduler (whose recovery takes the
    row up): the row is read before each step (s_stands).  A RUN this
    scheduler sent for a share it did not hold (a manual trigger, a retry,
    a child, a workflow's node: any scheduler's) keeps its doubt whoever
    holds the share: that holder took the share before the RUN left and
    never recovers the row.  (A RUN of the row routed since by another
    scheduler is that RUN's to decide: the row's answer and its route are
    written only while its last section is this RUN's.)  An address
    two live agents share is not asked through the registry (either would
    disown the other's run): the ask goes on the RUN's own connection
    while it is open; once it has closed, the run lease counted from the
    close ends it (the address's beats are then the other agent's).  An
    address not connected costs nothing until its lease passes.  An agent with no lease gets
    no doubt: its RUN fails at the timeout as before (the residue
    docs/design.md names).  Doubts live in memory: after a restart the
    row, still unanswered, is recovered as any unanswered row is.
*/

#include "xxl_engine.h"

#define XXL_DOUBT_ASK_MS    2000        //  between asks while unanswered
#define XXL_UNSEEN_TIMES    3           //  routings again of a RUN its agent never took
#define XXL_UNSEEN_MS       (10 * 60 * 1000)
//  The trigger text of a row in doubt a LOG_KILL ended (engine_doubt_killed)
#define XXL_DOUBT_KILLED    "killed by a user (log kill) while its agent's answer was awaited:" \
                            " the agent runs nothing of the job"

typedef struct {
    int64_t log_id;                     //  (the map's key points here)
    char *address;
    char *note;                         //  the RUN's router text
    int64_t presumed;
    int64_t stamp;                      //  its trigger time still to write (0: none)
    int64_t since;                      //  mono ms, when the answer was given up on
    int64_t next_ask;                   //  mono ms
    uint64_t asking;                    //  the ask in flight (0: none)
    int asks;
    void *rid;                          //  the connection the RUN went to (NULL: unknown)
    size_t rid_size;
    int64_t closed;                     //  mono ms it was found closed (0: open, or unknown)
    int64_t disowned;                   //  mono ms an agent on another connection said it never
                                        //  took it while the RUN's was open (0: none did)
    bool held;                          //  its job's share was this scheduler's when it began
    bool wrong;                         //  an ask was answered neither 200 nor "expired:" (logged)
    uint64_t killing;                   //  a user's KILL in flight (0: none): no asks meanwhile
} doubt_t;

void
engine_doubt_destroy (void **item)
{
    doubt_t *doubt = (doubt_t *) *item;
    if (doubt) {
        free (doubt->address);
        free (doubt->note);
        free (doubt->rid);
        free (doubt);
        *item = NULL;
    }
}

bool
engine_doubt_has (server_t *self, int64_t log_id)
{
    return self->runs.doubts && zhashx_lookup (self->runs.doubts, &log_id) != NULL;
}

static void
s_fail_text (server_t *self, char *text, size_t size, const char *why)
{
    snprintf (text, size, "no answer from the agent within %d ms%s", self->config.run_timeout_ms,
              why);
}

bool
engine_doubt_add (server_t *self, int64_t log_id, const char *note, const char *address,
                  int64_t presumed, int64_t stamp, const void *rid, size_t rid_size)
{
    if (!address || !*address || xxl_heard_until (self->heard, address) == 0
    ||  engine_doubt_has (self, log_id))
        return engine_doubt_has (self, log_id);
    doubt_t *doubt = (doubt_t *) zmalloc (sizeof (doubt_t));
    doubt->log_id = log_id;
    doubt->address = strdup (address);
    doubt->note = note? strdup (note): NULL;
    doubt->presumed = presumed;
    doubt->stamp = stamp;
    doubt->since = doubt->next_ask = zclock_mono ();
    int64_t job_id = xxl_store_log_job_id (self->store, log_id);
    doubt->held = job_id > 0 && engine_lease_holds (self, job_id);
    if (rid && rid_size) {
        doubt->rid = malloc (rid_size);
        assert (doubt->rid);
        memcpy (doubt->rid, rid, rid_size);
        doubt->rid_size = rid_size;
    }
    assert (doubt->address);
    zhashx_insert (self->runs.doubts, &doubt->log_id, doubt);
    char where [300];
    engine_info_limited (&self->runs.log_doubt, "trigger: log %" PRId64 ": no answer from %s within"
                         " %d ms; asking it again before a retry may start (or until its run"
                         " lease has passed)", log_id,
                         xxl_printable (address, where, sizeof where),
                         self->config.run_timeout_ms);
    return true;
}

//  Whether the doubt still stands: its row still unanswered and without a
//  result, of a share this scheduler holds, and not sent again meanwhile
//  (a recovery's re-send, a timer's dispatch: that RUN's own answer or
//  doubt decides).  sent_again: whether a RUN of it is in flight, as the
//  caller read it (engine_runs_in_flight), or -1 to read it here.  -1:
//  the store failed (ask again later).
static int
s_stands (server_t *self, doubt_t *doubt, int sent_again)
{
    xxl_log_t log;
    int rc = xxl_store_log_load (self->store, doubt->log_id, &log);
    if (rc < 0)
        return -1;
    bool open = rc == 0 && log.trigger_code == 0 && log.handle_code == 0
             && (!doubt->held || engine_lease_holds (self, log.job_id));
    if (rc == 0)
        xxl_log_free (&log);
    if (open && (zhashx_lookup (self->runs.resend_ids, &doubt->log_id)
             ||  self->runs.planned (self, doubt->log_id)
             ||  zhashx_lookup (self->runs.accepted_ids, &doubt->log_id)))
        open = false;
    if (open && sent_again < 0) {
        zhashx_t *flying = engine_runs_in_flight (self);
        sent_again = zhashx_lookup (flying, &doubt->log_id) != NULL;
        zhashx_destroy (&flying);
    }
    if (sent_again > 0)
        open = false;
    return open? 1: 0;
}

//  Ends a doubt with the RUN's answer, if it still stands (sent_again as
//  s_stands takes it)
static void
s_end (server_t *self, doubt_t *doubt, int code, const char *msg, int sent_again)
{
    int64_t log_id = doubt->log_id;
    int stands = s_stands (self, doubt, sent_again);
    if (stands < 0)
        return;                         //  (the store failed: later)
    if (stands)
        engine_run_answer (self, log_id, 0, doubt->note, doubt->address, doubt->presumed,
                           doubt->stamp, code, msg);
    zhashx_delete (self->runs.doubts, &log_id);
}

//  The agent, asked (pending: the ask), says it never took the RUN: it
//  starts nothing past a RUN's expireTime and the ask's is long past.
//  When the answer is the RUN's own agent's -- the ask went on the RUN's
//  connection, or that connection has closed (its agent restarted, or its
//  link was reset and it came back: its journal answers) -- nothing of the
//  run started anywhere, and if the doubt still stands the run is routed
//  again as a stopping agent's refusal is (engine_reroute), at most
//  XXL_UNSEEN_TIMES times unless XXL_UNSEEN_MS pass without one (an agent
//  that loses every RUN yet answers asks would take it forever).  Past
//  that, or when the connection is unknown, or the row is being killed to
//  cover a newer trigger (COVER_EARLY: it must not start again, and its
//  KILL went already), the row fails as it did before the doubt.  An
//  answer on another connection while the RUN's is still open waits
//  (s_unseen).
//  Counts a routing again of log_id, whose agent at address said it never
//  took its RUN (why, for the log line): routed again (true) while the
//  count is within XXL_UNSEEN_TIMES; false past it (the count stays, for
//  the caller to drop)
static bool
s_unseen_again (server_t *self, int64_t log_id, const char *note, const char *address,
                const char *why)
{
    int64_t *seen = (int64_t *) zhashx_lookup (self->runs.unseen, &log_id);
    if (!seen) {
        seen = (int64_t *) zmalloc (3 * sizeof (int64_t));
        seen [0] = log_id;
        zhashx_insert (self->runs.unseen, &seen [0], seen);
    }
    if (++seen [1] > XXL_UNSEEN_TIMES)
        return false;
    seen [2] = zclock_mono ();
    char where [300];
    xxl_printable (address, where, sizeof where);
    zsys_info ("trigger: log %" PRId64 ": %s, %s; routed again (%" PRId64 " of %d)",
               log_id, where, why, seen [1], XXL_UNSEEN_TIMES);
    engine_reroute (self, log_id, note, address);
    return true;
}

//  Ends the doubt of a run its agent never took: routed again (again, and
//  within the count), else failed as before the doubt
static void
s_unseen_end (server_t *self, doubt_t *doubt, bool again)
{
    int64_t log_id = doubt->log_id;
    if (!again || !s_unseen_again (self, log_id, doubt->note, doubt->address,
                                   "asked again, never took it")) {
        char text [256];
        s_fail_text (self, text, sizeof text, "; asked again, the agent never took it");
        engine_run_answer (self, log_id, 0, doubt->note, doubt->address, doubt->presumed,
                           doubt->stamp, XXL_CODE_FAIL, text);
        zhashx_delete (self->runs.unseen, &log_id);
    }
    zhashx_delete (self->runs.doubts, &log_id);
}

//  Whether a user's KILL of the doubt's row is in flight: its answer
//  decides first (engine_doubt_killed), so that a run the user killed is
//  not routed again meanwhile
static bool
s_kill_waits (server_t *self, doubt_t *doubt)
{
    if (doubt->killing && !zhashx_lookup (self->runs.pending, &doubt->killing))
        doubt->killing = 0;             //  (it timed out)
    return doubt->killing != 0;
}

//  The run's agent is the one that answered unless the RUN's own
//  connection is still open and the answer came on another: that one may
//  be an agent back before its old connection's close reached this
//  scheduler (a cut link: the close comes with the first segment through
//  once it mends), or another host on the address.  The doubt then waits
//  (engine_doubts_check) until that connection closes, or the run lease
//  has passed since this answer: the agent behind it has not registered
//  on it since the address moved (else the address would be a twin's),
//  so it holds no run by then (the longest lease the address said: the
//  RUN's agent's may be longer than the answering one's).
static void
s_unseen (server_t *self, doubt_t *doubt, const pending_t *ask)
{
    int stands = s_stands (self, doubt, -1);
    if (stands < 0)
        return;                         //  (the store failed: asked again later)
    int64_t log_id = doubt->log_id;
    if (!stands) {
        zhashx_delete (self->runs.doubts, &log_id);
        return;
    }
    if (s_kill_waits (self, doubt))
        return;                         //  (the KILL's answer decides first; asked again after)
    bool own = doubt->rid && ask->rid && ask->rid_size == doubt->rid_size
            && memcmp (ask->rid, doubt->rid, doubt->rid_size) == 0;
    bool killing = zhashx_lookup (self->runs.killing, &log_id) != NULL;
    if (doubt->rid && !own && !killing && engine_runs_beat (self, doubt->rid, doubt->rid_size)) {
        if (!doubt->disowned) {
            doubt->disowned = zclock_mono ();
            char where [300];
            zsys_info ("trigger: log %" PRId64 ": %s, asked on another connection, never took"
                       " it; the RUN's connection is still open: routed again once it closes or"
                       " the run lease (%" PRId64 " s) has passed", log_id,
                       xxl_printable (doubt->address, where, sizeof where),
                       xxl_heard_lease_longest (self->heard, doubt->address) / 1000);
        }
        return;
    }
    s_unseen_end (self, doubt, doubt->rid && !killing);
}

//  A RUN its own agent answered "expired: ..." while this scheduler still
//  waited for the answer (before any doubt): the RUN reached the agent
//  past its expireTime, as one held by a cut link reaches it once the link
//  mends (TCP carries what it had queued) does.  It never took the run and
//  never will (a RUN past its expireTime never starts), which is what a
//  doubt's ask answered so says: routed again the same way, up to
//  XXL_UNSEEN_TIMES times counted with those (unless the row is being
//  killed to cover a newer trigger).  True when routed again; false for
//  any other answer, and past the count: the refusal then ends the row as
//  before (engine_run_answer).
bool
engine_run_expired (server_t *self, int64_t log_id, const char *note, const char *address,
                    int code, const char *msg)
{
    if (code == XXL_OK || !msg || strncmp (msg, "expired:", 8) != 0
    ||  zhashx_lookup (self->runs.killing, &log_id))
        return false;
    if (s_unseen_again (self, log_id, note, address, "read its RUN past its expireTime"))
        return true;
    zhashx_delete (self->runs.unseen, &log_id);
    return false;
}

//  Forgets the counts of s_unseen whose last reroute is XXL_UNSEEN_MS old
static void
s_unseen_sweep (server_t *self, int64_t now)
{
    zlistx_t *old = NULL;
    for (int64_t *seen = (int64_t *) zhashx_first (self->runs.unseen); seen;
         seen = (int64_t *) zhashx_next (self->runs.unseen))
        if (now - seen [2] >= XXL_UNSEEN_MS) {
            if (!old)
                old = zlistx_new ();
            zlistx_add_end (old, seen);
        }
    if (old) {
        for (int64_t *seen = (int64_t *) zlistx_first (old); seen;
             seen = (int64_t *) zlistx_next (old))
            zhashx_delete (self->runs.unseen, &seen [0]);
        zlistx_destroy (&old);
    }
}

//  The answer to an ask (a PENDING_DOUBT); code 0: none
void
engine_doubt_answer (server_t *self, pending_t *pending, int code, const char *msg)
{
    doubt_t *doubt = (doubt_t *) zhashx_lookup (self->runs.doubts, &pending->log_id);
    if (!doubt || doubt->asking != pending->id)
        return;
    doubt->asking = 0;
    if (code == XXL_OK) {
        zsys_info ("trigger: log %" PRId64 ": %s took it (its first answer was lost)",
                   doubt->log_id, doubt->address);
        s_end (self, doubt, XXL_OK, "taken (its first answer was lost; asked again)", -1);
    }
    else
    if (code && msg && strncmp (msg, "expired:", 8) == 0)
        s_unseen (self, doubt, pending);
    else
    if (code && !doubt->wrong) {
        //  No word on the run (an agent that does not judge expireTime
        //  first): the doubt stands while the agent beats; a LOG_KILL
        //  ends it (engine_doubt_killed)
        doubt->wrong = true;
        char where [300], said [300];
        engine_warn_limited (&self->runs.log_doubt_word, "trigger: log %" PRId64 ": %s, asked"
                             " whether it took the RUN, answered %d '%s', which says neither"
                             " (an agent with a run lease must answer 200 or 'expired: ...');"
                             " the row stays in doubt while the agent registers (LOG_KILL"
                             " ends it)", doubt->log_id,
                             xxl_printable (doubt->address, where, sizeof where), code,
                             xxl_printable (msg? msg: "", said, 129));
    }
}

void
engine_doubt_kill_sent (server_t *self, int64_t log_id, uint64_t kill_id)
{
    doubt_t *doubt = (doubt_t *) zhashx_lookup (self->runs.doubts, &log_id);
    if (doubt)
        doubt->killing = kill_id;
}

bool
engine_doubt_killed (server_t *self, int64_t log_id, int code, const char *msg)
{
    doubt_t *doubt = (doubt_t *) zhashx_lookup (self->runs.doubts, &log_id);
    if (doubt)
        doubt->killing = 0;
    if (!doubt || code != XXL_FAILURE || !msg
    ||  strncmp (msg, XXL_KILL_NOT_RUNNING, strlen (XXL_KILL_NOT_RUNNING)) != 0)
        return false;
    //  Nothing of the job runs there, and the RUN, past its expireTime
    //  when the doubt began, can never start: had the agent taken it, it
    //  has finished, and its result, come late, is recorded beside the row
    int stands = s_stands (self, doubt, -1);
    if (stands <= 0) {
        if (stands == 0)
            zhashx_delete (self->runs.doubts, &log_id);
        return false;                   //  (the row is decided otherwise: the answer as it came)
    }
    engine_run_answer (self, log_id, 0, doubt->note, doubt->address, doubt->presumed,
                       doubt->stamp, XXL_CODE_FAIL, XXL_DOUBT_KILLED);
    zhashx_delete (self->runs.doubts, &log_id);
    zhashx_delete (self->runs.unseen, &log_id);
    return true;
}

//  Whether another scheduler of the store heard address within the dead
//  time: a registry row of it (written at each REGISTER, whoever heard it)
//  stamped within the dead time and after this scheduler's own, which its
//  last REGISTER heard here stamped (xxl_heard_rows_after): that one is
//  what `until` already counts from
static bool
s_heard_elsewhere (server_t *self, const char *address, int64_t now)
{
    int64_t store_now = engine_store_now (self);
    int64_t since = store_now - (int64_t) self->config.dead_s * 1000;
    int64_t after = xxl_heard_rows_after (self->heard, address, now, store_now);
    char *apps = xxl_store_registry_apps (self->store, address, after > since? after: since);
    bool heard = apps && *apps;
    free (apps);
    return heard;
}

//  A doubt of an address two live agents share, whose RUN's connection
//  has closed: the registry's beats and REGISTERs are the other agent's
//  and prove nothing of the one that had the RUN, and neither can be
//  asked for it.  Its run lease, counted from the close (its last
//  REGISTER on that connection came before), ends what it held: then the
//  row fails.  True when it ended.  sent_again: as s_stands takes it.
static bool
s_twin_closed_ends (server_t *self, doubt_t *doubt, int64_t now, int sent_again)
{
    assert (doubt->closed);
    int64_t lease = xxl_heard_lease (self->heard, doubt->address);
    if (now < doubt->closed + lease + XXL_HEARD_MARGIN_MS)
        return false;
    char text [300], why [220];
    snprintf (why, sizeof why, "; its connection closed and another agent holds its address:"
              " no word from that connection for its run lease (%" PRId64 " s) since: it holds"
              " no run now", lease / 1000);
    s_fail_text (self, text, sizeof text, why);
    s_end (self, doubt, XXL_CODE_FAIL, text, sent_again);
    return true;
}

//  Each doubt whose step is due (at most XXL_DOUBT_STEPS a call): ended
//  when its row was answered, finished or sent again meanwhile; failed
//  once the agent's lease has passed; else asked about again while its
//  address is connected and not shared by two live agents (either would
//  disown the other's run).  A doubt of an address not connected costs
//  nothing until its lease passes.
#define XXL_DOUBT_STEPS 256
void
engine_doubts_check (server_t *self)
{
    if (zhashx_size (self->runs.unseen))
        s_unseen_sweep (self, zclock_mono ());
    if (!zhashx_size (self->runs.doubts))
        return;
    int64_t now = zclock_mono ();
    zlistx_t *ids = zlistx_new ();
    for (doubt_t *doubt = (doubt_t *) zhashx_first (self->runs.doubts); doubt;
         doubt = (doubt_t *) zhashx_next (self->runs.doubts)) {
        if (doubt->asking && !zhashx_lookup (self->runs.pending, &doubt->asking))
            doubt->asking = 0;          //  (its ask timed out)
        if (doubt->asking || now < doubt->next_ask || s_kill_waits (self, doubt))
            continue;
        size_t rid_size;
        bool twin = engine_address_twin (self, doubt->address);
        bool reachable = xxl_registry_route (self->registry, doubt->address, &rid_size) && !twin;
        if (!reachable && !(twin && doubt->rid)
        &&  now < xxl_heard_until_longest (self->heard, doubt->address)) {
            doubt->next_ask = now + XXL_DOUBT_ASK_MS;
            continue;
        }
        zlistx_add_end (ids, &doubt->log_id);
        if (zlistx_size (ids) >= XXL_DOUBT_STEPS)
            break;
    }
    //  Those sent again meanwhile, read once for the pass (before any
    //  step: a step may end requests, which the map's keys point into)
    bool sent_again [XXL_DOUBT_STEPS];
    size_t step = 0;
    if (zlistx_size (ids)) {
        zhashx_t *flying = engine_runs_in_flight (self);
        for (int64_t *id = (int64_t *) zlistx_first (ids); id; id = (int64_t *) zlistx_next (ids))
            sent_again [step++] = zhashx_lookup (flying, id) != NULL;
        zhashx_destroy (&flying);
    }
    assert (step == zlistx_size (ids));
    step = 0;
    for (int64_t *id = (int64_t *) zlistx_first (ids); id; id = (int64_t *) zlistx_next (ids)) {
        doubt_t *doubt = (doubt_t *) zhashx_lookup (self->runs.doubts, id);
        int stands = s_stands (self, doubt, sent_again [step++]);
        if (stands < 0)
            continue;                   //  (the store failed: later)
        if (!stands) {
            int64_t log_id = doubt->log_id;
            zhashx_delete (self->runs.doubts, &log_id);
            continue;
        }
        //  (the longest lease the address said: the RUN's agent's may be
        //  longer than the one's that holds the address now)
        int64_t until = xxl_heard_until_longest (self->heard, doubt->address);
        if (now >= until && !s_heard_elsewhere (self, doubt->address, now)) {
            char text [256], why [200];
            snprintf (why, sizeof why, ", nor any word from it for its run lease (%" PRId64
                      " s) since: it holds no run now",
                      xxl_heard_lease_longest (self->heard, doubt->address) / 1000);
            s_fail_text (self, text, sizeof text, why);
            s_end (self, doubt, XXL_CODE_FAIL, text, 0);
            continue;
        }
        doubt->next_ask = now + XXL_DOUBT_ASK_MS;
        bool twin = engine_address_twin (self, doubt->address);
        if (twin && !doubt->rid)
            continue;                   //  (its lease decides)
        if (doubt->disowned) {
            //  A twin now (the RUN's connection registered the address
            //  again), or the address back on the RUN's connection: its
            //  own agent is asked (below), and a new word from another
            //  connection starts a new wait
            size_t route_size = 0;
            const void *route = xxl_registry_route (self->registry, doubt->address, &route_size);
            if (twin || (route && route_size == doubt->rid_size
                         && memcmp (route, doubt->rid, route_size) == 0))
                doubt->disowned = 0;
        }
        if (doubt->disowned) {
            //  (s_unseen: waits for the RUN's connection to close, or
            //  the lease to pass)
            int64_t lease = xxl_heard_lease_longest (self->heard, doubt->address);
            if (!engine_runs_beat (self, doubt->rid, doubt->rid_size)
            ||  now >= doubt->disowned + lease + XXL_HEARD_MARGIN_MS)
                s_unseen_end (self, doubt, !zhashx_lookup (self->runs.killing, &doubt->log_id));
            continue;
        }
        if (twin && !doubt->closed && !engine_runs_beat (self, doubt->rid, doubt->rid_size))
            doubt->closed = now;
        if (twin && doubt->closed) {
            s_twin_closed_ends (self, doubt, now, 0);
            continue;                   //  (ended, or the lease from the close decides)
        }
        char why [256];
        pending_t *pending = engine_agent_request (self, doubt->address, "RUN", PENDING_DOUBT,
                                                  self->config.run_timeout_ms, why, sizeof why);
        if (!pending)
            continue;                   //  (not connected: asked once it is)
        if (twin) {
            //  Asked on the RUN's own connection: its agent's answer is
            //  about itself, whichever of the two holds the address now
            void *rid = malloc (doubt->rid_size);
            assert (rid);
            memcpy (rid, doubt->rid, doubt->rid_size);
            free (pending->rid);
            pending->rid = rid;
            pending->rid_size = doubt->rid_size;
        }
        pending->log_id = doubt->log_id;
        xxl_enc_kint (self->enc, "logId", doubt->log_id);
        xxl_enc_kint (self->enc, "expireTime", 1);
        engine_agent_send (self, pending);
        doubt->asking = pending->id;
        doubt->asks++;
    }
    zlistx_destroy (&ids);
}

//  True while address is shared by two live agents (XXL_TWIN_MS after the
//  last sign); an expired mark goes

bool
engine_address_twin (server_t *self, const char *address)
{
    int64_t *until = (int64_t *) zhashx_lookup (self->runs.twins, address);
    if (until && *until > zclock_mono ())
        return true;
    if (until)
        zhashx_delete (self->runs.twins, address);
    return false;
}
