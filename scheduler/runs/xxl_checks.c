/*  xxl_checks.c -- the agents asked about the runs the store has open at
    their addresses when they may not be the agents that took them (an
    engine fragment: its state is self->runs.checks, its entry points
    engine_check_* and engine_checks_run, declared in xxl_runs.h).
*/

#include "xxl_engine.h"

//  Open runs of an address asked about per pass, at most
#define XXL_CHECK_MAX 10000
#define XXL_CHECK_GONE ((void *) UINTPTR_MAX)

//  An address registered on a connection while no open connection held
//  it (the agent back after its connection closed, a scheduler restart,
//  another host on a dead agent's address): its agent is asked about each
//  run the store has open there, with a RUN of just its logId whose
//  expireTime (1) is long past.  An agent back without its journal (a
//  wiped disk, another host) knows none of its runs and reports none lost,
//  and the lost-run monitor spares a registered address: without the ask
//  those rows stay open for good.  200 ("already accepted"): the agent
//  holds the run, whose result ends it; refused as expired: it does not,
//  and the run is failed as lost (engine_check_answer); anything else, or no
//  answer: nothing changes.  Rows recovery asks about itself are left to it.
//  (Not asked when the address moves from another open connection: two
//  agents on one address would fail each other's runs.)
//
//  The address waits in runs.checks, with the connection rid that now
//  holds it, for the next pass of engine_checks_run (every 200 ms, after
//  the turn's REGISTER replies went): one read of the store's open runs
//  serves every address registered since, so agents registering together
//  (all of them after a scheduler restart) cost one pass, not one per
//  agent.  The pass asks only while the address is still on that
//  connection: one that moved meanwhile to another open connection is the
//  move's to judge (moved_from), as it would have been without the wait.
//  Only runs open before the REGISTER are asked: one whose RUN that
//  connection accepted meanwhile (engine_check_taken) is its agent's, and
//  one whose RUN waits for its answer is the doubt rule's.  A run whose
//  ask waits for its answer on the connection now holding the address is
//  not asked twice; one asked on a connection that has gone since is
//  asked again on the new one (the old ask can no longer be answered).
//  (check_t: xxl_runs.h)

void
engine_check_destroy (void **item)
{
    check_t *check = (check_t *) *item;
    if (check) {
        zhashx_destroy (&check->taken);
        free (check->why);
        free (check->rid);
        free (check);
        *item = NULL;
    }
}

void
engine_check_open_runs (server_t *self, const char *address, const char *why, const void *rid,
                        size_t rid_size)
{
    check_t *check = (check_t *) zhashx_lookup (self->runs.checks, address);
    if (check && check->rid_size == rid_size && memcmp (check->rid, rid, rid_size) == 0)
        return;
    check = (check_t *) zmalloc (sizeof (check_t));
    check->why = strdup (why);
    check->rid = malloc (rid_size? rid_size: 1);
    assert (check->why && check->rid);
    memcpy (check->rid, rid, rid_size);
    check->rid_size = rid_size;
    zhashx_update (self->runs.checks, address, check);
}

//  Asks about the open runs of each address in runs.checks (and empties it)
void
engine_checks_run (server_t *self)
{
    if (!zhashx_size (self->runs.checks))
        return;
    //  Addresses two live agents share now are not asked (either agent
    //  would refuse the other's runs: asking fails runs that still run;
    //  they end with their results, or the lost-run monitor once neither
    //  agent holds the address), nor those no longer on the connection
    //  they were queued with (gone: asked when they register again;
    //  moved: the move's rules)
    zlistx_t *dropped = zlistx_new ();
    for (check_t *check = (check_t *) zhashx_first (self->runs.checks); check;
         check = (check_t *) zhashx_next (self->runs.checks)) {
        const char *address = (const char *) zhashx_cursor (self->runs.checks);
        size_t route_size = 0;
        const void *route = xxl_registry_route (self->registry, address, &route_size);
        if (engine_address_twin (self, address)) {
            char where [300];
            engine_warn_limited (&self->runs.log_twin_ask, "registry: %s %s: not asked about"
                                 " its open runs: two live agents share the address",
                                 xxl_printable (address, where, sizeof where), check->why);
            zlistx_add_end (dropped, (void *) address);
        }
        else
        if (!route || route_size != check->rid_size
        ||  memcmp (route, check->rid, route_size) != 0)
            zlistx_add_end (dropped, (void *) address);
    }
    for (const char *address = (const char *) zlistx_first (dropped); address;
         address = (const char *) zlistx_next (dropped))
        zhashx_delete (self->runs.checks, address);
    zlistx_destroy (&dropped);
    if (!zhashx_size (self->runs.checks))
        return;
    //  (runs accepted whose trigger code waits for the turn's end are
    //  written first: an agent killed just after it took one is back, or
    //  its close seen, within that wait, and its run must be asked about)
    engine_accepted_flush (self, INT64_MAX);
    zhashx_t *asked = zhashx_new ();    //  address → count asked (its own key)
    int64_t ids [1000];
    char *addresses [1000];
    size_t count = 0;
    int64_t cursor [2] = { 0, 0 };
    bool failed = false;
    zhashx_t *flying = NULL;            //  (the RUNs in flight, read once)
    zhashx_t *asking = NULL;            //  (asks waiting on their address's connection)
    do {
        if (xxl_store_log_open_ids_all (self->store, cursor, ids, addresses, 1000, &count)) {
            failed = true;              //  (the store failed: the next pass asks)
            break;
        }
        if (count && !flying) {
            flying = engine_runs_in_flight (self);
            asking = engine_id_map (NULL);
            for (pending_t *p = (pending_t *) zhashx_first (self->runs.pending); p;
                 p = (pending_t *) zhashx_next (self->runs.pending)) {
                size_t route_size = 0;
                const void *route = p->kind == PENDING_CHECK
                                  ? xxl_registry_route (self->registry, p->address, &route_size)
                                  : NULL;
                if (route && route_size == p->rid_size
                &&  memcmp (route, p->rid, route_size) == 0)
                    zhashx_insert (asking, &p->log_id, p);
            }
        }
        for (size_t i = 0; i < count; i++) {
            const char *address = addresses [i];
            check_t *check = (check_t *) zhashx_lookup (self->runs.checks, address);
            if (!check || self->runs.asked (self, ids [i]) || zhashx_lookup (flying, &ids [i])
            ||  zhashx_lookup (asking, &ids [i])
            ||  (check->taken && zhashx_lookup (check->taken, &ids [i])))
                continue;
            size_t done = (size_t) (uintptr_t) zhashx_lookup (asked, address);
            if (done >= XXL_CHECK_MAX)
                continue;
            char why [256];
            pending_t *pending = engine_agent_request (self, address, "RUN", PENDING_CHECK,
                                                      self->config.run_timeout_ms,
                                                      why, sizeof why);
            if (!pending) {
                //  (its connection went meanwhile: asked when it registers again)
                zhashx_update (asked, address, (void *) XXL_CHECK_GONE);
                continue;
            }
            pending->log_id = ids [i];
            xxl_enc_kint (self->enc, "logId", ids [i]);
            xxl_enc_kint (self->enc, "expireTime", 1);
            engine_agent_send (self, pending);
            zhashx_update (asked, address, (void *) (uintptr_t) (done + 1));
        }
        for (size_t i = 0; i < count; i++)
            free (addresses [i]);
    } while (count == 1000);
    zhashx_destroy (&flying);
    zhashx_destroy (&asking);
    for (void *done = zhashx_first (asked); done; done = zhashx_next (asked)) {
        const char *address = (const char *) zhashx_cursor (asked);
        if (done != XXL_CHECK_GONE)
            zsys_info ("registry: %s %s: asked it about its %zu open run(s)", address,
                       ((check_t *) zhashx_lookup (self->runs.checks, address))->why,
                       (size_t) (uintptr_t) done);
    }
    zhashx_destroy (&asked);
    if (!failed)
        zhashx_purge (self->runs.checks);
}

//  The agent's answer to engine_check_open_runs' ask
void
engine_check_answer (server_t *self, pending_t *pending, int code, const char *msg)
{
    if (code == XXL_OK || !msg || strncmp (msg, "expired:", 8) != 0)
        return;
    char *reason = zsys_sprintf ("lost: agent %s registered again and does not hold this run"
                                 " (back without its journal, or another agent on its"
                                 " address)", pending->address);
    int64_t now = engine_now ();
    if (xxl_store_log_handle_done (self->store, pending->log_id, now, XXL_CODE_FAIL,
                                   reason) == 0) {
        engine_run_ended (self, pending->log_id, XXL_END_RESULT, XXL_CODE_FAIL, now);
        zsys_warning ("registry: log %" PRId64 ": agent %s does not hold it: failed as lost",
                      pending->log_id, pending->address);
    }
    zstr_free (&reason);
}
