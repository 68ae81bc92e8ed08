/*  xxl_trigger.c -- a trigger, from a job to its rows and RUNs.

    engine_trigger picks the addresses (registry, manual list, or the
    trigger's own), routes each run (or hands a probing router to the
    pool), writes the log rows with their triggerMsg, and queues the RUNs.
    This file owns the triggerMsg text.  Also here: the accepted set (an
    acceptance is written with the run's result, or on its own within
    XXL_ACCEPTED_MS, XXL_ACCEPTED_BUSY_MS while many wait), dispatch of a
    stored row to its agent, run answers.
*/

#include "xxl_engine.h"
#include "xxl_run_rules.h"
#include "xxl_tags.h"

static char *s_text (zchunk_t *text, const char *const *pieces, size_t count);
static const char *s_trigger_title (const char *type);
static void s_accepted_add (server_t *self, int64_t log_id, int64_t stamp, int64_t job_id);
static void s_send_run (server_t *self, const xxl_job_t *job, int64_t log_id,
                        int64_t trigger_time, const char *param, int shard_index,
                        int shard_total, const char *address, const char *note, int64_t stamp);
static void s_route_pool (server_t *self, const xxl_job_t *job, int64_t log_id,
                          int64_t trigger_time, const char *param, int shard_index,
                          int shard_total, const char *const *addresses, size_t count,
                          int64_t stamp);
static const xxl_group_t *s_group_cached (server_t *self, int64_t id);
static bool s_connected (void *ctx, const char *address);
static void s_broadcast_expand (server_t *self, const xxl_job_t *job, const xxl_log_t *log,
                                const char *const *addresses, size_t count);
static bool s_has_tags (const xxl_job_t *job);
static bool s_group_has_addresses (server_t *self, const xxl_group_t *group);

//  Triggers

//  Joins count strings (NULL: none) in text, reused from call to call;
//  returns its NUL-terminated contents, valid until the next call
static char *
s_text (zchunk_t *text, const char *const *pieces, size_t count)
{
    zchunk_set (text, NULL, 0);
    for (size_t i = 0; i < count; i++)
        if (pieces [i] && *pieces [i])
            zchunk_extend (text, pieces [i], strlen (pieces [i]));
    zchunk_extend (text, "", 1);
    return (char *) zchunk_data (text);
}

static const char *
s_trigger_title (const char *type)
{
    if (streq (type, "MANUAL"))   return "Manual trigger";
    if (streq (type, "CRON"))     return "Cron trigger";
    if (streq (type, "RETRY"))    return "Fail retry trigger";
    if (streq (type, "PARENT"))   return "Parent job trigger";
    if (streq (type, "API"))      return "API trigger";
    if (streq (type, "MISFIRE"))  return "Misfire compensation trigger";
    if (streq (type, "WORKFLOW")) return "Workflow trigger";
    if (streq (type, "BACKFILL")) return "Backfill trigger";
    return type;
}


//  The section a failed run's triggerMsg gets when it is retried: attempt
//  of `of`, as log row retry_id, `delay` seconds on.  A new string.
char *
engine_text_retry (int64_t attempt, int64_t of, int64_t retry_id, int64_t delay)
{
    return zsys_sprintf ("\n>>>>>>>>>>> Fail retry <<<<<<<<<<<\nretry %" PRId64 " of %" PRId64
                         " as log %" PRId64 " in %" PRId64 " s\n", attempt, of, retry_id, delay);
}

//  A planned row's triggerMsg once recovery makes it the outage's misfire
//  compensation: its type line says so and a line says why.  A new string.
char *
engine_text_misfire (const char *msg)
{
    char from [64], to [64];
    snprintf (from, sizeof from, "Trigger type: %s", s_trigger_title ("CRON"));
    snprintf (to, sizeof to, "Trigger type: %s", s_trigger_title ("MISFIRE"));
    const char *at = strstr (msg, from);
    if (!at)
        return zsys_sprintf ("%sMisfire: the scheduler was down at the planned time;"
                             " FIRE_ONCE_NOW\n", msg);
    return zsys_sprintf ("%.*s%s%sMisfire: the scheduler was down at the planned time;"
                         " FIRE_ONCE_NOW\n", (int) (at - msg), msg, to, at + strlen (from));
}

//  Splits a comma-separated list into an array in the list's order, each
//  address trimmed and kept once (its first place): a manual list's order
//  is its users' (FIRST takes the first, as XXL-JOB)
size_t
engine_split_addresses (const char *list, char ***out)
{
    *out = NULL;
    if (!list || !*list)
        return 0;
    zlistx_t *items = zlistx_new ();
    zlistx_set_destructor (items, (zlistx_destructor_fn *) zstr_free);
    zlistx_set_comparator (items, (zlistx_comparator_fn *) strcmp);    //  (for find)
    char *copy = strdup (list), *save = NULL;
    for (char *token = strtok_r (copy, ",", &save); token; token = strtok_r (NULL, ",", &save)) {
        while (*token == ' ')
            token++;
        char *end = token + strlen (token);
        while (end > token && end [-1] == ' ')
            *--end = 0;
        if (*token && !zlistx_find (items, token))
            zlistx_add_end (items, strdup (token));
    }
    free (copy);
    size_t count = zlistx_size (items);
    *out = (char **) calloc (count + 1, sizeof (char *));
    size_t i = 0;
    for (char *item = (char *) zlistx_first (items); item; item = (char *) zlistx_next (items))
        (*out) [i++] = strdup (item);
    zlistx_destroy (&items);
    return count;
}

//  value in decimal into text (24 bytes at least), as "%" PRId64 writes it
static void
s_decimal (int64_t value, char *text)
{
    char digits [24];
    int count = 0;
    uint64_t rest = value < 0? 0 - (uint64_t) value: (uint64_t) value;
    do
        digits [count++] = (char) ('0' + rest % 10);
    while ((rest /= 10) > 0);
    if (value < 0)
        *text++ = '-';
    while (count > 0)
        *text++ = digits [--count];
    *text = 0;
}

void
engine_free_addresses (char **list, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free (list [i]);
    free (list);
}


//  The id of the next log row this turn writes (0 when the store cannot
//  say: the row then takes AUTOINCREMENT's).  Read at the turn's first
//  row and every XXL_STORE_LOG_ID_RUN ids, inside the write transaction;
//  every log row goes through here.
int64_t
engine_next_log_id (server_t *self)
{
    if (self->runs.next_log_id <= 0 || self->runs.next_log_id >= self->runs.log_id_limit) {
        self->runs.next_log_id = xxl_store_log_next_id (self->store);
        self->runs.log_id_limit = self->runs.next_log_id + XXL_STORE_LOG_ID_RUN;
        if (self->runs.next_log_id > 0 && self->runs.next_log_id < self->runs.log_id_floor)
            self->runs.next_log_id = self->runs.log_id_floor;
    }
    if (self->runs.next_log_id <= 0)
        return 0;
    if (self->runs.next_log_id >= self->runs.log_id_floor)
        self->runs.log_id_floor = self->runs.next_log_id + 1;
    return self->runs.next_log_id++;
}

//  The most ids agents' moves (an acceptedMax, a 409 "another run") may
//  skip in all while this scheduler runs.  A store restored from a backup
//  needs one move of at most XXL_STORE_LOG_IDS_LEAP (a farther one the
//  store refuses), so a peer that keeps asking cannot use up the id space.
#define XXL_LOG_IDS_MOVES (4 * XXL_STORE_LOG_IDS_LEAP)

//  Moves the store's log ids and this turn's past id (1), or answers why
//  not (0 nothing to move, -1 the store failed: xxl_store's log_ids_past,
//  -2 the moves' allowance of XXL_LOG_IDS_MOVES is spent); *was and *now
//  the next id before and after
static int
s_log_ids_past (server_t *self, int64_t id, int64_t *was, int64_t *now)
{
    //  (checked before: one move skips at most XXL_STORE_LOG_IDS_LEAP)
    if (self->runs.log_ids_moved > XXL_LOG_IDS_MOVES - XXL_STORE_LOG_IDS_LEAP)
        return -2;
    int rc = xxl_store_log_ids_past (self->store, id, self->runs.log_id_floor, was, now);
    if (rc == 1) {
        assert (*now >= *was);
        self->runs.log_ids_moved += *now - *was;
        //  This turn's run of ids is dropped too: the next id comes from
        //  the store again, past id
        self->runs.next_log_id = 0;
        self->runs.log_id_floor = id + 1;
    }
    return rc;
}

void
engine_log_ids_past (server_t *self, int64_t accepted_max, const char *address)
{
    //  (every id below the floor was handed out by this scheduler, and the
    //  store reserved past it: an agent's journal holds them; the
    //  steady state asks nothing of the store)
    if (accepted_max <= 0 || accepted_max < self->runs.log_id_floor)
        return;
    int64_t was = 0, now = 0;
    char where [300];
    int rc = s_log_ids_past (self, accepted_max, &was, &now);
    if (rc == -2)
        engine_warn_limited (&self->runs.log_ids_behind, "server: agent %s accepted log ids up to"
                             " %" PRId64 " (acceptedMax); not followed: agents have moved this"
                             " scheduler's log ids past %" PRId64 " ids since it started, the"
                             " most it allows (a restore needs one move of at most 2^32)",
                             xxl_printable (address, where, sizeof where), accepted_max,
                             self->runs.log_ids_moved);
    else
    if (rc < 0)
        engine_warn_limited (&self->runs.log_ids_behind, "server: agent %s accepted log ids up to"
                             " %" PRId64 " (acceptedMax); the store's log ids cannot be moved"
                             " past it: %s", xxl_printable (address, where, sizeof where),
                             accepted_max, xxl_store_error (self->store));
    if (rc != 1)
        return;
    engine_warn_limited (&self->runs.log_ids_behind, "server: the store's log ids were behind"
                         " the journal of accepted runs of agent %s (acceptedMax %" PRId64 "):"
                         " a store restored from a backup without moving its log ids"
                         " (docs/operations.md, Restoring, step 4)?  The next log id moved"
                         " from %" PRId64 " to %" PRId64, xxl_printable (address, where, sizeof where),
                         accepted_max, was, now);
}

//  Remembers that the agent accepted log_id's RUN; the callback, or
//  engine_accepted_flush when it is due (s_accepted_wait), writes
//  trigger_code 200
static void
s_accepted_add (server_t *self, int64_t log_id, int64_t stamp, int64_t job_id)
{
    if (zhashx_lookup (self->runs.accepted_ids, &log_id))
        return;
    accepted_t *item = (accepted_t *) zmalloc (sizeof (accepted_t));
    item->log_id = log_id;
    item->stamp = stamp;
    item->job_id = job_id;
    item->at = zclock_mono ();
    zlistx_add_end (self->runs.accepted, item);
    zhashx_insert (self->runs.accepted_ids, &item->log_id, item);
}

//  The callback of log_id writes its trigger_code with its result; returns
//  the trigger time it must write too (0: none), and its job in *job_id
//  (0: not known)
int64_t
engine_accepted_forget (server_t *self, int64_t log_id, int64_t *job_id)
{
    accepted_t *item = (accepted_t *) zhashx_lookup (self->runs.accepted_ids, &log_id);
    int64_t stamp = 0;
    *job_id = item? item->job_id: 0;
    if (item) {
        stamp = item->stamp;
        zhashx_delete (self->runs.accepted_ids, &log_id);
        item->log_id = 0;
    }
    return stamp;
}

//  The trigger time log_id's callback must write, as engine_accepted_forget,
//  without forgetting it (the callback may not count)
int64_t
engine_accepted_stamp (server_t *self, int64_t log_id)
{
    accepted_t *item = (accepted_t *) zhashx_lookup (self->runs.accepted_ids, &log_id);
    return item? item->stamp: 0;
}

//  How long an acceptance waits for its run's result before it is written
//  alone (XXL_ACCEPTED_MS, or XXL_ACCEPTED_BUSY_MS while many wait)
static int64_t
s_accepted_wait (server_t *self)
{
    return zhashx_size (self->runs.accepted_ids) > XXL_ACCEPTED_BUSY
         ? XXL_ACCEPTED_BUSY_MS: XXL_ACCEPTED_MS;
}

//  When (monotonic ms) the oldest acceptance still waiting is due to be
//  written alone; INT64_MAX when none waits
int64_t
engine_accepted_due (server_t *self)
{
    accepted_t *item = (accepted_t *) zlistx_first (self->runs.accepted);
    while (item && !item->log_id) {     //  (its result came: nothing to write)
        zlistx_delete (self->runs.accepted, zlistx_cursor (self->runs.accepted));
        item = (accepted_t *) zlistx_first (self->runs.accepted);
    }
    return item? item->at + s_accepted_wait (self): INT64_MAX;
}

//  Writes trigger_code 200 of the runs whose result has not come and whose
//  acceptance is due at `now` (monotonic ms; INT64_MAX: all of them)
void
engine_accepted_flush (server_t *self, int64_t now)
{
    int64_t before = now == INT64_MAX? INT64_MAX: now - s_accepted_wait (self);
    accepted_t *item;
    int count = 0;
    while ((item = (accepted_t *) zlistx_first (self->runs.accepted))
    &&     (!item->log_id || item->at < before)) {
        if (item->log_id) {
            if (++count % 64 == 0)
                engine_long_work (self);
            xxl_store_log_accept (self->store, item->log_id, item->stamp);
            zhashx_delete (self->runs.accepted_ids, &item->log_id);
        }
        zlistx_delete (self->runs.accepted, zlistx_cursor (self->runs.accepted));
    }
}

//  The triggerMsg section of an agent's answer to a RUN (a new string)
char *
engine_section (const char *note, const char *address, int code, const char *msg)
{
    return zsys_sprintf ("\n>>>>>>>>>>> Trigger <<<<<<<<<<<\n%saddress: %s\ncode: %d\nmsg: %s\n",
                         note? note: "", address, code, msg && *msg? msg: "null");
}

//  Characters (not bytes) of UTF-8 text, as SQLite's length() counts them
int64_t
engine_chars (const char *text)
{
    int64_t chars = 0;
    for (const unsigned char *c = (const unsigned char *) text; *c; c++)
        chars += (*c & 0xC0) != 0x80;
    return chars;
}

//  Characters of trigger_msg from its last section's title to its end (0
//  without one): the section an unanswered row's route wrote ahead, which
//  log_trigger_end and log_unroute cut from the end by its length
int64_t
engine_section_last_chars (const char *trigger_msg)
{
    static const char title [] = "\n>>>>>>>>>>> Trigger <<<<<<<<<<<\n";
    const char *last = NULL;
    for (const char *at = trigger_msg; at && (at = strstr (at, title)); at++)
        last = at;
    return last? engine_chars (last): 0;
}

//  engine_chars (engine_section (note, address, XXL_OK, NULL)) without making it
int64_t
engine_section_chars (const char *note, const char *address)
{
    //  (the fixed parts are ASCII: a character a byte)
    static const char fixed [] = "\n>>>>>>>>>>> Trigger <<<<<<<<<<<\n" "address: "
                                 "\ncode: 200\nmsg: null\n";
    return (int64_t) sizeof fixed - 1 + (note? engine_chars (note): 0) + engine_chars (address);
}

//  Sends the RUN of an existing log row to address, or, when address is
//  NULL or not connected, finishes the row's trigger as failed.  note is
//  the router's text for triggerMsg (may be NULL).  The row's triggerMsg
//  gets the section of an accepting answer ahead of it; engine_run_done
//  rewrites it only when the answer is another.  stamp:
//  0   the row is written with the address and section here;
//  -1  the row was inserted with both already (engine_trigger);
//  >0  a planned row fires now: its trigger_time becomes stamp in the same
//      write, and nothing is sent when the row is no longer unsent (a
//      scheduler sharing the store cancelled it).
static void
s_send_run (server_t *self, const xxl_job_t *job, int64_t log_id, int64_t trigger_time,
            const char *param, int shard_index, int shard_total,
            const char *address, const char *note, int64_t stamp)
{
    char why [512];
    why [0] = 0;
    size_t rid_size;
    bool connected = address && xxl_registry_route (self->registry, address, &rid_size);
    //  (stamp -1: engine_trigger wrote the section with the row already)
    char *section = connected && stamp >= 0? engine_section (note, address, XXL_OK, NULL): NULL;
    int changed = 1;
    if (stamp > 0)
        changed = connected
            ? xxl_store_log_route (self->store, log_id, stamp, address, section)
            : xxl_store_log_stamp (self->store, log_id, stamp);
    else
    if (stamp == 0 && connected)
        //  Where it went: a restart re-sends a row with an address but no code
        changed = xxl_store_log_route (self->store, log_id, 0, address, section);
    if (changed < 0 && connected)
        //  (the store failed: it goes again once the store takes writes)
        engine_resend_add (self, log_id, address);
    if (changed != 1) {
        zstr_free (&section);
        return;
    }
    pending_t *pending = connected? engine_pending_new (self, address, PENDING_RUN,
                                                        self->config.run_timeout_ms, why, sizeof why)
                                  : NULL;
    if (!pending) {
        if (address && !*why)
            snprintf (why, sizeof why, "agent '%s' is not connected to this scheduler", address);
        char *text = zsys_sprintf ("\n>>>>>>>>>>> Trigger <<<<<<<<<<<\n%s%s%s%s%s\n",
                                   note? note: "", address? "address: ": "",
                                   address? address: "", address? "\n": "", why);
        //  (only while the row is as this route found it: on PostgreSQL
        //  a scheduler sharing the store may have routed it since it was
        //  read, and its RUN decides it; a failed write ends the run as
        //  the turn's commit fails with it)
        int ended = xxl_store_log_trigger_done (self->store, log_id, XXL_CODE_FAIL, address,
                                                text);
        zstr_free (&text);
        zstr_free (&section);
        if (ended != 0)
            engine_run_ended (self, log_id, XXL_END_TRIGGER, XXL_CODE_FAIL, engine_now ());
        return;
    }
    pending->log_id = log_id;
    pending->job_id = job->id;
    pending->note = note && *note? strdup (note): NULL;
    pending->presumed = section? engine_chars (section): engine_section_chars (note, address);
    zstr_free (&section);
    size_t size;
    const unsigned char *tp = engine_encode_tp (self, job, log_id, param, shard_index, shard_total,
                                                &size);
    engine_run_queue (self, pending, tp, size, trigger_time, NULL);
}

//  Picks the address of one row without probing: ROUTE_ADDRESS with
//  *address (borrowed from addresses), ROUTE_NONE with the reason in note,
//  or ROUTE_POOL for a probing router (s_route_pool routes it off the
//  loop).  note receives the router's text for triggerMsg.
route_pick_t
engine_route_pick (server_t *self, const xxl_job_t *job, int64_t log_id, int shard_index,
                   int broadcast, const char *const *addresses, size_t count,
                   const char **address, char *note, size_t notelen)
{
    *address = NULL;
    *note = 0;
    const xxl_group_t *group = count == 0 && s_has_tags (job)
                             ? s_group_cached (self, job->job_group): NULL;
    if (group && s_group_has_addresses (self, group)) {
        snprintf (note, notelen, "trigger failed: no agent of group %s has tags %s\n",
                  group->app_name, job->agent_tags);
        return ROUTE_NONE;
    }
    if (count == 0) {
        snprintf (note, notelen, "trigger failed: the address list is empty\n");
        return ROUTE_NONE;
    }
    if (broadcast) {
        *address = addresses [xxl_route_broadcast_index (shard_index, count)];
        return ROUTE_ADDRESS;
    }
    const char *name = job->executor_route_strategy;
    const xxl_router_t *router = xxl_routers_find (self->runs.routers, name);
    if (!router) {
        snprintf (note, notelen, "trigger failed: route %s is not loaded on this scheduler\n",
                  name);
        return ROUTE_NONE;
    }
    if (router->flags & XXL_ROUTER_PROBES)
        return ROUTE_POOL;
    int index = xxl_routers_route (self->runs.routers, name, job->id, log_id, addresses, count,
                                   NULL, note, notelen);
    if (index >= 0 && (size_t) index < count) {
        *address = addresses [index];
        //  The router's text ends in a new line ahead of "address: "
        size_t len = strlen (note);
        if (len > 0 && note [len - 1] != '\n' && len + 1 < notelen) {
            note [len] = '\n';
            note [len + 1] = 0;
        }
        return ROUTE_ADDRESS;
    }
    if (!*note)
        snprintf (note, notelen, "trigger failed: route %s chose no address\n", name);
    return ROUTE_NONE;
}

//  Hands a row of a probing router to a trigger pool; its RUN goes when
//  the ROUTED result comes back (engine_handle_routed)
static void
s_route_pool (server_t *self, const xxl_job_t *job, int64_t log_id, int64_t trigger_time,
              const char *param, int shard_index, int shard_total,
              const char *const *addresses, size_t count, int64_t stamp)
{
    if (zhashx_lookup (self->runs.routing, &log_id))
        return;                         //  (a pool routes it already: its result sends it)
    if (stamp > 0
    &&  xxl_store_log_stamp (self->store, log_id, stamp) != 1)
        return;
    xxl_route_task_t *task = (xxl_route_task_t *) zmalloc (sizeof (xxl_route_task_t));
    task->log_id = log_id;
    task->job_id = job->id;
    task->route = strdup (job->executor_route_strategy);
    task->addresses = (char **) calloc (count, sizeof (char *));
    for (size_t i = 0; i < count; i++)
        task->addresses [i] = strdup (addresses [i]);
    task->count = count;
    int64_t *slow = (int64_t *) zhashx_lookup (self->runs.slow_counts, &job->id);
    xxl_pool_t *pool = slow && *slow > self->config.slow_count? self->runs.slow_pool: self->runs.fast_pool;
    int64_t *routing = (int64_t *) zmalloc (sizeof (int64_t));
    *routing = log_id;
    zhashx_insert (self->runs.routing, routing, routing);
    if (xxl_pool_submit (pool, &task)) {
        zhashx_delete (self->runs.routing, &log_id);
        char text [256];
        snprintf (text, sizeof text, "trigger failed: the %s trigger pool is full (%zu queued)\n",
                  pool == self->runs.slow_pool? "slow": "fast", xxl_pool_queued (pool));
        s_send_run (self, job, log_id, trigger_time, param, shard_index, shard_total,
                    NULL, text, stamp > 0? 0: stamp);
        xxl_route_task_destroy (&task);
    }
}

//  Routes one log row and sends its RUN; a probing router runs on a pool
//  and the RUN goes when its ROUTED result comes back.  stamp as for
//  s_send_run (never -1 here).
void
engine_route_row (server_t *self, const xxl_job_t *job, int64_t log_id, int64_t trigger_time,
                  const char *param, int shard_index, int shard_total, int broadcast,
                  const char *const *addresses, size_t count, int64_t stamp)
{
    const char *address;
    char note [2048];
    if (engine_admit_hold (self, job, log_id))
        return;                         //  (it waits for a slot: xxl_admit.c)
    if (engine_route_pick (self, job, log_id, shard_index, broadcast, addresses, count,
                           &address, note, sizeof note) == ROUTE_POOL)
        s_route_pool (self, job, log_id, trigger_time, param, shard_index, shard_total,
                      addresses, count, stamp);
    else
        s_send_run (self, job, log_id, trigger_time, param, shard_index, shard_total,
                    address, note, stamp);
}

//  Reads "i/n" into index and total (0/1 when absent or malformed)
void
engine_shard_of (const char *text, int *index, int *total)
{
    *index = 0;
    *total = 1;
    int i, n;
    if (text && sscanf (text, "%d/%d", &i, &n) == 2 && n > 0 && i >= 0 && i < n) {
        *index = i;
        *total = n;
    }
}

//  A group as read from the store at most a second ago (groups change
//  rarely; the API's group writes empty the cache at once), or NULL when
//  absent.  The group is borrowed until the cache is next emptied.
static const xxl_group_t *
s_group_cached (server_t *self, int64_t id)
{
    int64_t now = zclock_mono ();
    if (now >= self->runs.groups_until) {
        zhashx_purge (self->runs.groups);
        self->runs.groups_until = now + 1000;
    }
    xxl_group_t *group = (xxl_group_t *) zhashx_lookup (self->runs.groups, &id);
    if (!group) {
        group = (xxl_group_t *) zmalloc (sizeof (xxl_group_t));
        if (xxl_store_group_load (self->store, id, group)) {
            free (group);
            return NULL;
        }
        zhashx_insert (self->runs.groups, &group->id, group);
    }
    return group;
}

//  With keys, a manual list keeps only the addresses not registered with a
//  key, or registered with one that lists app: an agent key of another app
//  that registered a listed address gets none of this group's runs.
//  Compacts list (freeing what it drops); the new count.
static size_t
s_manual_of_app (server_t *self, const char *app, char **list, size_t count)
{
    size_t kept = 0;
    for (size_t i = 0; i < count; i++) {
        const char *owner = xxl_registry_owner (self->registry, list [i]);
        const xxl_who_t *who = owner? xxl_keys_lookup (self->keys, owner): NULL;
        if (xxl_route_manual_keeps (owner, who != NULL, who && xxl_who_has_app (who, app)))
            list [kept++] = list [i];
        else
            free (list [i]);
    }
    return kept;
}

//  True when a group has some address before agent tags narrow it: a
//  manual list, or a connected agent
static bool
s_group_has_addresses (server_t *self, const xxl_group_t *group)
{
    const char *const *addresses;
    return group->address_type == 1? group->address_list && *group->address_list
                                    : xxl_registry_addresses (self->registry, group->app_name,
                                                              &addresses) > 0;
}

//  True when a job routes only among agents with its agent tags
static bool
s_has_tags (const xxl_job_t *job)
{
    return job->agent_tags && *job->agent_tags;
}

static const char *
s_tags_of (void *ctx, const char *address)
{
    return xxl_registry_tags (((server_t *) ctx)->registry, address);
}

//  Narrows a job's addresses [0, count) to the agents having all its
//  tags: *addresses and *manual become a new array of copies (NULL when
//  none is kept; an earlier *manual is freed).  Returns how many.
static size_t
s_tagged (server_t *self, const xxl_job_t *job, const char *const **addresses,
          char ***manual, size_t count)
{
    const char **kept = (const char **) malloc (count * sizeof (const char *));
    assert (kept);
    size_t made = xxl_route_tagged (job->agent_tags, *addresses, count, s_tags_of, self, kept);
    char **list = made? (char **) calloc (made, sizeof (char *)): NULL;
    assert (list || made == 0);
    for (size_t i = 0; i < made; i++) {
        list [i] = strdup (kept [i]);
        assert (list [i]);
    }
    free (kept);
    if (*manual)
        engine_free_addresses (*manual, count);
    *manual = list;
    *addresses = (const char *const *) list;
    return made;
}

//  True when address's agent has all of job's agent tags (always when the
//  job has none): a fire routed ahead goes there only while it does
bool
engine_address_fits (server_t *self, const xxl_job_t *job, const char *address)
{
    return !s_has_tags (job)
        || xxl_tags_match (xxl_registry_tags (self->registry, address), job->agent_tags);
}

//  The addresses a job's triggers go to: its group's manual list or the
//  registry's live list, of them only the agents with all the job's
//  agent tags when it has some.  *manual receives an array to free with
//  engine_free_addresses (NULL for the registry's, which is borrowed).
size_t
engine_job_addresses (server_t *self, const xxl_job_t *job, const char *const **addresses,
                      char ***manual)
{
    *manual = NULL;
    *addresses = NULL;
    const xxl_group_t *group = s_group_cached (self, job->job_group);
    if (!group)
        return 0;
    size_t count;
    if (group->address_type == 1) {
        count = engine_split_addresses (group->address_list, manual);
        if (self->keys)
            count = s_manual_of_app (self, group->app_name, *manual, count);
        *addresses = (const char *const *) *manual;
    }
    else
        count = xxl_registry_addresses (self->registry, group->app_name, addresses);
    if (s_has_tags (job) && count > 0)
        count = s_tagged (self, job, addresses, manual, count);
    return count;
}


//  The log ids of the RUNs that await their agent's answer (a pending of
//  its own, or an item of a batch: each batch item has a pending too, but
//  a prepared fire's batch holds plans) or a trigger pool's route: a map
//  whose keys point into the pending requests, batches and routes (valid
//  until one of them goes); the caller destroys it.  A scan of every
//  request: read it once per pass, never once per row
zhashx_t *
engine_runs_in_flight (server_t *self)
{
    zhashx_t *ids = engine_id_map (NULL);
    for (pending_t *pending = (pending_t *) zhashx_first (self->runs.pending); pending;
         pending = (pending_t *) zhashx_next (self->runs.pending))
        if (pending->kind == PENDING_RUN)
            zhashx_insert (ids, &pending->log_id, pending);
    for (run_batch_t *batch = (run_batch_t *) zhashx_first (self->runs.batches); batch;
         batch = (run_batch_t *) zhashx_next (self->runs.batches))
        for (size_t i = 0; batch->fires && i < batch->count; i++)
            if (batch->fires [i].plan)
                zhashx_insert (ids, &batch->fires [i].plan->log_id, batch);
    //  (and the rows a trigger pool routes: their RUN goes at its result)
    for (int64_t *id = (int64_t *) zhashx_first (self->runs.routing); id;
         id = (int64_t *) zhashx_next (self->runs.routing))
        zhashx_insert (ids, id, id);
    return ids;
}

static void
s_sent_until (server_t *self, int64_t log_id, int64_t job_id, int64_t *until)
{
    xxl_log_t log;
    if (xxl_store_log_load (self->store, log_id, &log))
        return;
    if (log.job_id == job_id && log.schedule_time > *until)
        *until = log.schedule_time;
    xxl_log_free (&log);
}

int64_t
engine_runs_sent_until (server_t *self, int64_t job_id)
{
    int64_t until = 0;
    for (pending_t *pending = (pending_t *) zhashx_first (self->runs.pending); pending;
         pending = (pending_t *) zhashx_next (self->runs.pending))
        if (pending->kind == PENDING_RUN && (pending->job_id == job_id || pending->job_id == 0))
            s_sent_until (self, pending->log_id, job_id, &until);
    //  (a prepared fire's batch holds its plans, not pendings; a trigger
    //  pool's route its row)
    for (run_batch_t *batch = (run_batch_t *) zhashx_first (self->runs.batches); batch;
         batch = (run_batch_t *) zhashx_next (self->runs.batches))
        for (size_t i = 0; batch->fires && i < batch->count; i++)
            if (batch->fires [i].plan && batch->fires [i].plan->snap->job.id == job_id)
                s_sent_until (self, batch->fires [i].plan->log_id, job_id, &until);
    for (int64_t *id = (int64_t *) zhashx_first (self->runs.routing); id;
         id = (int64_t *) zhashx_next (self->runs.routing))
        s_sent_until (self, *id, job_id, &until);
    //  (an acceptance not written yet: trigger_code 0 in the store)
    for (accepted_t *item = (accepted_t *) zhashx_first (self->runs.accepted_ids); item;
         item = (accepted_t *) zhashx_next (self->runs.accepted_ids))
        if (item->job_id == job_id || item->job_id == 0)
            s_sent_until (self, item->log_id, job_id, &until);
    for (void *item = zhashx_first (self->runs.resend_ids); item;
         item = zhashx_next (self->runs.resend_ids))
        s_sent_until (self, *(const int64_t *) zhashx_cursor (self->runs.resend_ids), job_id,
                      &until);
    if (self->runs.doubts)
        for (void *item = zhashx_first (self->runs.doubts); item;
             item = zhashx_next (self->runs.doubts))
            s_sent_until (self, *(const int64_t *) zhashx_cursor (self->runs.doubts), job_id,
                          &until);
    return until;
}

//  Sends (or fails) a row whose routing finished off the loop (address
//  given, "" for none), or that recovery or the planner's timer takes up
//  (address NULL: route it now against the live registry).
void
engine_dispatch_row (server_t *self, int64_t log_id, const char *address, const char *note)
{
    xxl_log_t log;
    if (xxl_store_log_load (self->store, log_id, &log))
        return;
    if (log.trigger_code != 0 || log.handle_code != 0
    ||  zhashx_lookup (self->runs.accepted_ids, &log_id)) {
        //  Its answer or its result is stored already (a recovered row
        //  whose agent's spooled result came first), or its acceptance is
        //  known and not yet written: it never goes again
        xxl_log_free (&log);
        return;
    }
    if ((*log.executor_address && (!address || strcmp (address, log.executor_address)))
    ||  (!address && zhashx_lookup (self->runs.routing, &log_id))) {
        //  Routed already, elsewhere or by another entry of it (the timer
        //  can hold a row twice: its own entry and a recovery's after a
        //  self-takeover; a scheduler sharing the store may have routed
        //  it), or a trigger pool routes it now: that route's RUN is the
        //  run's.  A row to route again has its address taken back first
        //  (log_unroute, log_clear_address)
        xxl_log_free (&log);
        return;
    }
    if (!address && log.schedule_time > 0 && !engine_lease_holds (self, log.job_id)) {
        //  A planned row of a share this scheduler lost: its new holder's
        xxl_log_free (&log);
        return;
    }
    xxl_job_t job;
    if (xxl_store_job_load (self->store, log.job_id, &job)) {
        //  (its own address: the failure claims the row as it was read)
        xxl_store_log_trigger_done (self->store, log_id, XXL_CODE_FAIL,
                                    *log.executor_address? log.executor_address: NULL,
                                    "\ntrigger failed: the job was removed\n");
        xxl_log_free (&log);
        return;
    }
    int index, total;
    engine_shard_of (log.executor_sharding_param, &index, &total);
    if (!*log.executor_sharding_param
    &&  xxl_routers_is_broadcast (self->runs.routers, job.executor_route_strategy)) {
        //  Written before its agents could be counted: one row per agent now
        //  (also when re-sent: a failed commit undid an expansion)
        const char *const *addresses;
        char **manual;
        size_t count = engine_job_addresses (self, &job, &addresses, &manual);
        s_broadcast_expand (self, &job, &log, addresses, count);
        if (manual)
            engine_free_addresses (manual, count);
        xxl_job_free (&job);
        xxl_log_free (&log);
        return;
    }
    if (!address) {
        //  A planned row fires now: that is its trigger time (the agent
        //  files its run log under this date)
        log.trigger_time = engine_now ();
        xxl_store_log_retime (self->store, log_id, log.trigger_time);
    }
    if (address)
        s_send_run (self, &job, log_id, log.trigger_time, log.executor_param, index, total,
                    *address? address: NULL, note, 0);
    else {
        //  (a trigger's own addresses while it pinned them, else its group's)
        const char *const *addresses;
        char **manual = NULL;
        const char *pinned = engine_runs_pinned (self, log_id);
        size_t count = pinned? engine_split_addresses (pinned, &manual)
                             : engine_job_addresses (self, &job, &addresses, &manual);
        if (pinned)
            addresses = (const char *const *) manual;
        engine_route_row (self, &job, log_id, log.trigger_time, log.executor_param, index, total,
                          xxl_routers_is_broadcast (self->runs.routers, job.executor_route_strategy)
                          && *log.executor_sharding_param, addresses, count, 0);
        if (manual)
            engine_free_addresses (manual, count);
    }
    xxl_job_free (&job);
    xxl_log_free (&log);
}

//  Whether address is connected now (the registry's route to it)
static bool
s_connected (void *ctx, const char *address)
{
    size_t size;
    return xxl_registry_route (((server_t *) ctx)->registry, address, &size) != NULL;
}

//  Makes the row log_id of a SHARDING_BROADCAST job, written with no shard,
//  one row per address ("0/n" for itself, copies for 1..n-1, same planned
//  time), routes each and sends their RUNs.  With no address, the row is
//  routed alone (and fails: nobody to run it).
static void
s_broadcast_expand (server_t *self, const xxl_job_t *job, const xxl_log_t *log,
                    const char *const *addresses, size_t count)
{
    int64_t stamp = engine_now ();
    if (count == 0) {
        //  (as one shard: its retry, if any, is one run too)
        xxl_store_log_set_shard (self->store, log->id, "0/1");
        engine_route_row (self, job, log->id, stamp, log->executor_param, 0, 1, 1, addresses, 0, 0);
        return;
    }
    int64_t ids [1024];
    size_t made = 0;
    ids [made++] = log->id;
    char shard [32];
    for (size_t i = 1; i < count && i < 1024; i++) {
        int64_t id = engine_next_log_id (self);
        if (id <= 0)
            break;
        snprintf (shard, sizeof shard, "%zu/%zu", i, count);
        if (xxl_store_log_copy_shard (self->store, id, log->id, shard, stamp) != 1)
            break;
        ids [made++] = id;
    }
    snprintf (shard, sizeof shard, "0/%zu", made);
    xxl_store_log_set_shard (self->store, log->id, shard);
    xxl_store_log_retime (self->store, log->id, stamp);
    for (size_t i = 1; i < made; i++) {
        //  (copies made before this row's final count say so too)
        snprintf (shard, sizeof shard, "%zu/%zu", i, made);
        xxl_store_log_set_shard (self->store, ids [i], shard);
    }
    for (size_t i = 0; i < made; i++)
        engine_route_row (self, job, ids [i], stamp, log->executor_param, (int) i, (int) made, 1,
                          addresses, count, 0);
}

//  Creates the log rows of one trigger and, unless deferred, routes and
//  sends them.  Returns the number of rows made, -1 on a store error.
//  log_ids gets up to max_ids ids; with args->prepare, prepared (up to
//  max_ids, not NULL) the routing of each row written with an address
//  (strings the caller frees).
int
engine_trigger (server_t *self, const xxl_job_t *job, trigger_args_t *args,
                int64_t *log_ids, prepared_t *prepared, size_t max_ids)
{
    int type_index = xxl_metrics_trigger_index (args->trigger_type);
    if (type_index >= 0)
        self->metrics.triggers [type_index]++;
    char **manual = NULL;
    size_t count = 0;
    const char *const *addresses = NULL;
    const char *registry_type = "automatic";
    if (args->address) {
        count = engine_split_addresses (args->address, &manual);
        addresses = (const char *const *) manual;
        registry_type = "manual (trigger)";
    }
    else {
        count = engine_job_addresses (self, job, &addresses, &manual);
        const xxl_group_t *group = s_group_cached (self, job->job_group);
        if (group && group->address_type == 1)
            registry_type = "manual";
    }
    int broadcast = xxl_routers_is_broadcast (self->runs.routers, job->executor_route_strategy);
    //  (deaf: the agents are heard by another scheduler of the store,
    //  not here; they are waited for the same way: xxl_lease_rules.h)
    bool warming = zclock_mono () < self->warm_until || engine_lease_deaf (self);
    //  Acknowledged to its client, a trigger is not failed for want of
    //  agents that are still reconnecting after a start: it waits for
    //  them on the timer, as a planned fire does (engine_plan_due)
    args->held = xxl_route_held (args->defer, args->address != NULL, warming, broadcast,
                                 args->shard_total, s_connected, self, addresses, count);
    args->unexpanded = xxl_route_unexpanded (broadcast, args->shard_total, args->address != NULL,
                                             args->held, args->defer, count, warming);
    int runs = xxl_route_runs (broadcast, args->shard_total, count, args->unexpanded);
    int retry = args->fail_retry_count >= 0? args->fail_retry_count
                                           : (int) job->executor_fail_retry_count;
    //  "[a, b]" (the addresses that fit); arrays here are not zero-filled
    //  (this runs once per trigger)
    char address_text [2048];
    size_t used = 0;
    address_text [used++] = '[';
    for (size_t i = 0; i < count; i++) {
        size_t length = strlen (addresses [i]);
        if (used + 2 + length + 2 > sizeof address_text)
            break;
        if (i) {
            memcpy (address_text + used, ", ", 2);
            used += 2;
        }
        memcpy (address_text + used, addresses [i], length);
        used += length;
    }
    address_text [used++] = ']';
    address_text [used] = 0;
    int made = 0;
    int64_t now = engine_now ();
    const char *param = args->param? args->param: job->executor_param;
    //  A job with a maxRunning: its rows wait unsent, unrouted, for the
    //  admission pass of its share's holder (xxl_admit.c)
    bool slots = engine_admit_hold (self, job, 0);
    for (int i = 0; i < runs; i++) {
        int index = args->shard_total >= 0? args->shard_index: i;
        int total = args->shard_total >= 0? args->shard_total: broadcast? runs: 1;
        char shard [32];
        shard [0] = 0;
        if ((broadcast || args->shard_total >= 0) && !args->unexpanded)
            snprintf (shard, sizeof shard, "%d/%d", index, total);
        //  Route before the row is written, so that one INSERT holds the
        //  address and the accepting answer's section (s_send_run)
        int64_t id = engine_next_log_id (self);
        route_pick_t pick = ROUTE_POOL;
        const char *address = NULL;
        char note [2048];
        note [0] = 0;
        bool ahead = false;
        if ((!args->defer || args->prepare) && !args->held && !args->unexpanded && id > 0
        &&  !slots) {
            pick = engine_route_pick (self, job, id, index, broadcast, addresses, count,
                                      &address, note, sizeof note);
            size_t rid_size;
            ahead = pick == ROUTE_ADDRESS
                 && xxl_registry_route (self->registry, address, &rid_size) != NULL;
        }
        //  Built by pieces, no format to parse (this runs once per trigger)
        char timeout [24], retries [24];
        s_decimal (job->executor_timeout, timeout);
        s_decimal (retry, retries);
        const char *pieces [] = {
            "Trigger type: ", s_trigger_title (args->trigger_type),
            args->by? "\nTriggered by: ": "", args->by? args->by: "",
            "\nAdmin address: ", self->config.admin_address,
            "\nExecutor registry type: ", registry_type,
            "\nExecutor addresses: ", address_text,
            s_has_tags (job)? "\nAgent tags: ": "", s_has_tags (job)? job->agent_tags: "",
            s_has_tags (job) && args->address? " (not applied: addresses given with the trigger)"
                                              : "",
            "\nRoute strategy: ", job->executor_route_strategy,
            *shard? " (": "", shard, *shard? ")": "",
            "\nBlock strategy: ", job->executor_block_strategy,
            "\nTimeout: ", timeout, "\nFail retry count: ", retries, "\n",
            //  = engine_section (note, address, XXL_OK, NULL) when ahead
            ahead? "\n>>>>>>>>>>> Trigger <<<<<<<<<<<\n": "", ahead? note: "",
            ahead? "address: ": "", ahead? address: "", ahead? "\ncode: 200\nmsg: null\n": ""
        };
        char *message = s_text (self->runs.text, pieces, sizeof pieces / sizeof pieces [0]);
        xxl_log_t log = {
            .id = id > 0? id: 0,
            .job_group = job->job_group, .job_id = job->id,
            .executor_address = ahead? (char *) address: NULL,
            .executor_handler = job->executor_handler,
            .executor_param = (char *) param,
            .executor_sharding_param = *shard? shard: NULL,
            .executor_fail_retry_count = retry,
            .trigger_time = now, .trigger_code = 0, .trigger_msg = message,
            .trigger_type = (char *) args->trigger_type, .schedule_time = args->schedule_time,
            .slot = job->max_running > 0,
            .planned_new = args->planned_new && args->schedule_time > 0
        };
        int added = xxl_store_log_add (self->store, &log);
        if (added) {
            made = made? made: -1;
            break;
        }
        if ((size_t) made < max_ids) {
            log_ids [made] = log.id;
            if (prepared) {
                prepared [made].address = ahead? strdup (address): NULL;
                prepared [made].note = ahead? strdup (note): NULL;
            }
        }
        made++;
        if (args->address && log.id > 0)
            engine_runs_pin (self, log.id, args->address);
        if (args->defer || slots)
            continue;
        if (args->held) {
            engine_run_again (self, log.id, now, 0);
            continue;
        }
        if (ahead)
            s_send_run (self, job, log.id, now, param, index, total, address, note, -1);
        else
        if (id <= 0)
            engine_route_row (self, job, log.id, now, param, index, total, broadcast,
                              addresses, count, 0);
        else
        if (pick == ROUTE_POOL)
            s_route_pool (self, job, log.id, now, param, index, total, addresses, count, 0);
        else
            s_send_run (self, job, log.id, now, param, index, total, address, note, 0);
    }
    if (manual)
        engine_free_addresses (manual, count);
    return made;
}

//  An agent at address accepted log_id's RUN: not asked about it by the
//  check queued for the connection that accepted it (xxl_checks.c)
static void
s_check_taken (server_t *self, const char *address, int64_t log_id)
{
    check_t *check = address? (check_t *) zhashx_lookup (self->runs.checks, address): NULL;
    if (!check)
        return;
    size_t route_size = 0;
    const void *route = xxl_registry_route (self->registry, address, &route_size);
    if (!route || route_size != check->rid_size || memcmp (route, check->rid, route_size) != 0)
        return;
    if (!check->taken) {
        check->taken = engine_id_map (engine_free_item);
        assert (check->taken);
    }
    if (!zhashx_lookup (check->taken, &log_id)) {
        int64_t *id = (int64_t *) malloc (sizeof *id);
        assert (id);
        *id = log_id;
        zhashx_insert (check->taken, id, id);
    }
}

//  Completes a RUN with the agent's answer (or its absence).  The row's
//  triggerMsg ends with the section of a plain accepting answer already
//  (`presumed` characters): that answer only marks the run accepted
//  (s_accepted_add); any other rewrites the section.  stamp: the trigger
//  time still to write (0: none).
//  An agent refused log_id's RUN 409: its journal holds the logId for
//  another run (docs/protocol.md, *An agent must not run again*), so this
//  store handed out an id again (restored from a backup without moving its
//  log ids).  The run fails (its retries, with new ids, apply), and the
//  log ids move past log_id + XXL_OTHER_RUN_IDS, unless they are past it
//  already, so that the rows made from now on take ids the agent did not
//  accept (its REGISTER's acceptedMax moved them past its highest before
//  already: the rows refused so were made before it).  Returns the msg
//  for the row's section (a new string).
#define XXL_OTHER_RUN_IDS   100000
static char *
s_other_run (server_t *self, int64_t log_id, const char *address, const char *msg)
{
    int64_t past = log_id + XXL_OTHER_RUN_IDS, was = 0, now = 0;
    int rc = past >= self->runs.log_id_floor? s_log_ids_past (self, past, &was, &now): 0;
    char where [300], moved [128] = "";
    if (rc == 1)
        snprintf (moved, sizeof moved, "; the next log id moved from %" PRId64 " to %" PRId64,
                  was, now);
    engine_warn_limited (&self->runs.log_other_run, "trigger: log %" PRId64 ": agent %s"
                         " refused it, its journal holds that logId for another run (%s):"
                         " a store restored from a backup without moving its log ids"
                         " (docs/operations.md, Restoring, step 4)?  The run failed, never"
                         " run%s", log_id, xxl_printable (address, where, sizeof where),
                         msg && *msg? msg: "409", moved);
    return zsys_sprintf ("%s (the agent's journal holds this logId for another run: a store"
                         " restored from a backup without moving its log ids?  This run"
                         " never ran; docs/operations.md, Restoring)",
                         msg && *msg? msg: "409");
}

void
engine_run_answer (server_t *self, int64_t log_id, int64_t job_id, const char *note,
                   const char *address, int64_t presumed, int64_t stamp, int code,
                   const char *msg)
{
    if (code == XXL_OK && zhashx_size (self->runs.checks))
        s_check_taken (self, address, log_id);
    if (code == XXL_OK && (!msg || !*msg)) {
        //  (stamp: the trigger time, when it is still to be written)
        if (stamp > 0)
            xxl_histo_observe (&self->metrics.accept, (engine_now () - stamp) / 1000.0);
        s_accepted_add (self, log_id, stamp, job_id);
        return;
    }
    //  An agent that is shutting down refused it: nothing started there,
    //  and another agent takes it.  (Its UNREGISTER came before this
    //  answer; should it not have, its route goes now, so the run does
    //  not come back to it.)
    if (code != XXL_OK && msg && strncmp (msg, "stopping:", 9) == 0) {
        size_t rid_size;
        const void *rid = address? xxl_registry_route (self->registry, address, &rid_size)
                                 : NULL;
        if (rid) {
            void *copy = malloc (rid_size);
            assert (copy);
            memcpy (copy, rid, rid_size);
            xxl_registry_unroute (self->registry, address, copy, rid_size);
            free (copy);
        }
        engine_reroute (self, log_id, note, address);
        return;
    }
    //  A refusal (or no answer) ends the row only while its last section
    //  is this RUN's: a RUN of the row routed since (a re-send to the same
    //  agent by a scheduler that took the row's share over while this one
    //  stood still, its answer read only now) may have been taken, and
    //  failing the row would let a retry run it a second time.  An
    //  acceptance with a message ("already accepted") rewrites only this
    //  RUN's section too (cutting `presumed` characters of another's would
    //  mangle the row's text); when that is no longer last, the run is
    //  still the agent's: marked accepted, as a plain acceptance is
    char *other = code == XXL_CONFLICT? s_other_run (self, log_id, address, msg): NULL;
    char *text = engine_section (note, address, code, other? other: msg);
    zstr_free (&other);
    char *last = engine_section (note, address, XXL_OK, NULL);
    int changed = xxl_store_log_trigger_end (self->store, log_id,
                                             code == XXL_OK? XXL_OK: XXL_CODE_FAIL, presumed,
                                             text, stamp, last);
    zstr_free (&text);
    zstr_free (&last);
    if (code == XXL_OK && changed == 0)
        s_accepted_add (self, log_id, stamp, job_id);
    //  (a failed write too: the turn's commit fails with it, and the
    //  run's end then goes with the rest of the turn)
    if (code != XXL_OK && changed != 0)
        engine_run_ended (self, log_id, XXL_END_TRIGGER, XXL_CODE_FAIL, engine_now ());
}

void
engine_runs_on_job (server_t *self, const xxl_event_t *event)
{
    if (event->what & XXL_CHANGED_GROUPS)
        self->runs.groups_until = 0;
}

void
engine_run_done (server_t *self, pending_t *pending, int code, const char *msg)
{
    //  (a RUN made at its trigger: accepted this long after; one with a
    //  stamp to write is measured from it, in engine_run_answer)
    if (code == XXL_OK && (!msg || !*msg) && pending->stamp == 0)
        xxl_histo_observe (&self->metrics.accept, (zclock_mono () - pending->created) / 1000.0);
    engine_run_answer (self, pending->log_id, pending->job_id, pending->note, pending->address,
                       pending->presumed, pending->stamp, code, msg);
}

void
engine_group_destructor (void **item)
{
    xxl_group_t *group = (xxl_group_t *) *item;
    if (group) {
        xxl_group_free (group);
        free (group);
        *item = NULL;
    }
}

bool
engine_accepted_has (server_t *self, int64_t log_id)
{
    return zhashx_lookup (self->runs.accepted_ids, &log_id) != NULL;
}
