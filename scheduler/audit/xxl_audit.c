/*  xxl_audit.c -- the audit of the client api's changes: recording them,
    keeping a failed turn's rows true to its replies, and retention.
    (AUDIT_LIST, which reads them, is the api's: api/xxl_api_audit.c.)

    Every request of an audited command (xxl_command_audited: each that
    is not read_only, save LOG_CAT) gets one row once it is answered: who
    sent it (its key's name and role), its type, the id it is about, when,
    and the reply's code.  The id (target) is the one its reply carried
    (engine_reply_id: the new id of an ADD or COPY), else the request's
    jobId or logId, else its `group` when that names an id, else 0.  A
    request refused before its handler (403) is recorded by whoever
    refused it (engine_audit); a LOG_KILL forwarded to its agent is
    recorded with the answer its client gets (engine_audit_answer).

    A row is written in the turn's transaction: it commits with the change
    it records, or not at all.  A turn whose commit fails answers its
    changes 500 (the outbox: engine_outbox_failed); their rows, rolled back, are
    written again at the next turn's begin with that code (a reply that
    stood whatever the commit, such as one queued as a read, keeps its
    own), until a commit takes them.  At most XXL_AUDIT_AGAIN rows wait
    so; older ones are left out with a log line.
*/

#include "xxl_engine.h"

#define XXL_AUDIT_AGAIN     10000       //  rows of failed turns kept to write again
#define XXL_AUDIT_BATCH     5000        //  rows a retention pass deletes at most
#define XXL_AUDIT_REFUSALS  60          //  refusals (403) recorded per key per minute
#define XXL_AUDIT_MINUTE    60000       //  ms
#define XXL_AUDIT_KEYS      1000        //  keys whose refusals are counted at most

//  A row written this turn, kept until its commit settles it
typedef struct {
    int64_t time;
    int64_t target;
    const char *type;                   //  the command's name (static)
    int code;
    bool stands;                        //  its reply is sent whatever the commit
    char *role;                         //  (in who's allocation)
    char who [];
} audit_entry_t;

static void
s_entry_destroy (void **item)
{
    free (*item);
    *item = NULL;
}

static zlistx_t *
s_entry_list (void)
{
    zlistx_t *list = zlistx_new ();
    zlistx_set_destructor (list, s_entry_destroy);
    return list;
}

//  Writes an entry's row in the turn's transaction and keeps the entry
//  until the commit settles it (takes it)
static void
s_write (server_t *self, audit_entry_t *entry)
{
    xxl_audit_t row = {
        .time = entry->time, .who = entry->who, .role = entry->role, .type = entry->type,
        .target = entry->target, .code = entry->code
    };
    //  (a failed write fails the commit, which settles the entry as failed)
    xxl_store_audit_add (self->store, &row);
    if (!self->audit.audit_turn)
        self->audit.audit_turn = s_entry_list ();
    zlistx_add_end (self->audit.audit_turn, entry);
}

static void
s_record (server_t *self, const char *who, const char *role, const char *type,
          int64_t target, int code, bool stands)
{
    size_t who_size = strlen (who) + 1;
    size_t role_size = strlen (role) + 1;
    audit_entry_t *entry = (audit_entry_t *) malloc (sizeof (audit_entry_t) + who_size
                                                     + role_size);
    assert (entry);
    entry->time = engine_now ();
    entry->target = target;
    entry->type = type;
    entry->code = code;
    entry->stands = stands;
    memcpy (entry->who, who, who_size);
    entry->role = entry->who + who_size;
    memcpy (entry->role, role, role_size);
    s_write (self, entry);
}

//  A key's refusals (403) in its current minute
typedef struct {
    int64_t since;                      //  monotonic ms the minute began
    int64_t recorded;                   //  refusals recorded in it
    int64_t left_out;                   //  refusals counted, not recorded
    char name [];                       //  the key's name
} refusals_t;

//  Key name → refusals_t, of the server whose actor runs in this thread
//  (one server per thread; engine_audit_destroy ends it)
static __thread zhashx_t *s_refusals;

//  Closes a key's minute: logs how many of its refusals were left out
static void
s_refusals_close (refusals_t *refusals)
{
    if (refusals->left_out) {
        char name [256];
        zsys_warning ("audit: %" PRId64 " refusal(s) (403) of key '%s' not audited (past %d"
                      " in its minute)", refusals->left_out,
                      xxl_printable (refusals->name, name, sizeof name), XXL_AUDIT_REFUSALS);
        refusals->left_out = 0;
    }
}

static void
s_refusals_destroy (void **item)
{
    s_refusals_close ((refusals_t *) *item);
    free (*item);
    *item = NULL;
}

//  Closes and forgets the keys whose minute has passed
static void
s_refusals_sweep (int64_t now)
{
    if (!s_refusals)
        return;
    zlistx_t *names = zhashx_keys (s_refusals);
    for (const char *name = (const char *) zlistx_first (names); name;
         name = (const char *) zlistx_next (names)) {
        refusals_t *refusals = (refusals_t *) zhashx_lookup (s_refusals, name);
        if (now - refusals->since >= XXL_AUDIT_MINUTE)
            zhashx_delete (s_refusals, name);
    }
    zlistx_destroy (&names);
}

//  Counts a refusal of key `name`; true when it is to be recorded (one of
//  the first XXL_AUDIT_REFUSALS of the key's minute)
static bool
s_refusal_recorded (const char *name)
{
    int64_t now = zclock_mono ();
    if (!s_refusals) {
        s_refusals = zhashx_new ();
        assert (s_refusals);
        zhashx_set_destructor (s_refusals, s_refusals_destroy);
    }
    refusals_t *refusals = (refusals_t *) zhashx_lookup (s_refusals, name);
    if (refusals && now - refusals->since >= XXL_AUDIT_MINUTE) {
        s_refusals_close (refusals);
        refusals->since = now;
        refusals->recorded = 0;
    }
    if (!refusals) {
        if (zhashx_size (s_refusals) >= XXL_AUDIT_KEYS)
            s_refusals_sweep (now);
        if (zhashx_size (s_refusals) >= XXL_AUDIT_KEYS) {
            //  Room for it: the oldest minute goes (closed)
            const char *oldest = NULL;
            int64_t oldest_since = INT64_MAX;
            for (refusals_t *item = (refusals_t *) zhashx_first (s_refusals); item;
                 item = (refusals_t *) zhashx_next (s_refusals))
                if (item->since < oldest_since) {
                    oldest_since = item->since;
                    oldest = (const char *) zhashx_cursor (s_refusals);
                }
            zhashx_delete (s_refusals, oldest);
        }
        size_t name_size = strlen (name) + 1;
        refusals = (refusals_t *) calloc (1, sizeof (refusals_t) + name_size);
        assert (refusals);
        refusals->since = now;
        memcpy (refusals->name, name, name_size);
        zhashx_insert (s_refusals, name, refusals);
    }
    if (refusals->recorded < XXL_AUDIT_REFUSALS) {
        refusals->recorded++;
        return true;
    }
    refusals->left_out++;
    return false;
}

void
engine_audit (server_t *self, request_t *request, int code, int64_t target)
{
    if (request->audited || !request->command)
        return;
    request->audited = true;
    s_record (self, request->who->name, request->who->role, request->command->name, target,
              code, engine_outbox_reading (self));
}

void
engine_audit_answer (server_t *self, pending_t *pending, int code)
{
    if (!pending->audit_type)
        return;
    s_record (self, pending->audit_who, pending->audit_role, pending->audit_type,
              pending->log_id, code, false);
    pending->audit_type = NULL;         //  (once)
}

//  The id a request is about when its reply carried none: its jobId or
//  logId, else its `group` when that is an id (all digits); 0 when none
static int64_t
s_target (request_t *request)
{
    const msgpack_object *root = xxl_msg_root (request->msg);
    static const char *const keys [] = { "jobId", "logId", NULL };
    for (size_t i = 0; keys [i]; i++) {
        const msgpack_object *value = xxl_msg_get (root, keys [i]);
        if (value && value->type == MSGPACK_OBJECT_POSITIVE_INTEGER
        &&  value->via.u64 <= INT64_MAX)
            return (int64_t) value->via.u64;
    }
    const msgpack_object *group = xxl_msg_get (root, "group");
    if (group && group->type == MSGPACK_OBJECT_STR
    &&  group->via.str.size > 0 && group->via.str.size < 18) {
        int64_t id = 0;
        for (uint32_t i = 0; i < group->via.str.size; i++) {
            char c = group->via.str.ptr [i];
            if (c < '0' || c > '9')
                return 0;
            id = id * 10 + (c - '0');
        }
        return id;
    }
    return 0;
}

void
engine_audit_handled (server_t *self, request_t *request)
{
    if (!xxl_command_audited (request->command) || request->audited)
        return;
    if (request->code == XXL_FORBIDDEN && !s_refusal_recorded (request->who->name))
        return;
    if (!xxl_command_audited_code (request->command, request->code))
        return;                         //  (its runs' rows record it)
    if (request->code)
        engine_audit (self, request, request->code, request->target? request->target
                                                                    : s_target (request));
}

void
engine_audit_forwarded (request_t *request, pending_t *pending)
{
    if (!xxl_command_audited (request->command) || request->audited)
        return;
    request->audited = true;
    pending->audit_type = request->command->name;
    pending->audit_who = strdup (request->who->name);
    pending->audit_role = strdup (request->who->role);
}

void
engine_audit_begin (server_t *self)
{
    audit_entry_t *entry;
    while (self->audit.audit_again
    &&     (entry = (audit_entry_t *) zlistx_detach (self->audit.audit_again, NULL)))
        s_write (self, entry);
}

void
engine_audit_settle (server_t *self, bool committed)
{
    if (!self->audit.audit_turn || zlistx_size (self->audit.audit_turn) == 0)
        return;
    if (committed) {
        zlistx_purge (self->audit.audit_turn);
        return;
    }
    if (!self->audit.audit_again)
        self->audit.audit_again = s_entry_list ();
    audit_entry_t *entry;
    while ((entry = (audit_entry_t *) zlistx_detach (self->audit.audit_turn, NULL))) {
        if (!entry->stands)
            entry->code = XXL_FAILURE;  //  (as engine_outbox_failed answered it)
        zlistx_add_end (self->audit.audit_again, entry);
    }
    size_t dropped = 0;
    while (zlistx_size (self->audit.audit_again) > XXL_AUDIT_AGAIN) {
        entry = (audit_entry_t *) zlistx_detach (self->audit.audit_again, NULL);
        free (entry);
        dropped++;
    }
    if (dropped)
        engine_warn_limited (&self->audit.log_audit_dropped, "audit: %zu row(s) of turns whose"
                             " commit failed left out (more than %d wait)", dropped,
                             XXL_AUDIT_AGAIN);
}

void
engine_audit_destroy (server_t *self)
{
    zlistx_destroy (&self->audit.audit_turn);
    zlistx_destroy (&self->audit.audit_again);
    zhashx_destroy (&s_refusals);       //  (each closed: its left-out count logged)
}

int64_t
engine_audit_retention (server_t *self)
{
    s_refusals_sweep (zclock_mono ());
    if (self->config.audit_retention_days <= 0)
        return 0;
    int64_t before = engine_now () - (int64_t) self->config.audit_retention_days * 86400000;
    int64_t gone = xxl_store_audit_delete (self->store, before, XXL_AUDIT_BATCH);
    return gone > 0? gone: 0;
}

