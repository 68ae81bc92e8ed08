/*  xxl_access.c -- who sent a message, and what they may do.

    Every message is attributed to the key of its connection: with CURVE on,
    the key the ZAP handler admitted at the handshake (its Z85 text is the
    message's User-Id), looked up in the key table of the keys folder for
    each message, so that a key removed from the folder stops counting on
    connections already open.  Without keys every peer is "local", role
    admin, and the access token (when set) is what is checked.

    The rules, each in one place here:
    - api commands: the command table's least role (xxl_commands.h access)
      and, for an operator, the app of the job or run the command names
      (its scope field) must be one of the key's apps;
    - agents: only an agent key may REGISTER, and only for its apps;
    - the access token, compared in constant time.
*/

#include "xxl_engine.h"

#include <sys/random.h>

static const xxl_who_t s_local = { "local", "admin", "", "" };

//  Rank of a role: admin 3, operator 2, viewer 1, agent (and anything
//  else) 0
static int
s_rank (const char *role)
{
    return streq (role, "admin")? 3: streq (role, "operator")? 2: streq (role, "viewer")? 1: 0;
}

const xxl_who_t *
engine_who (server_t *self)
{
    if (!self->keys)
        return &s_local;
    const xxl_who_t *who = xxl_keys_lookup (self->keys, self->api_state.user_id);
    if (!who) {
        //  (a key the handshake admitted that has since left the folder,
        //  at most one line a minute: a peer may keep sending)
        int64_t now = zclock_mono ();
        self->api_state.keys_refused++;
        if (now - self->api_state.keys_logged >= 60000) {
            zsys_warning ("access: %" PRId64 " message(s) refused: their key %s is not (or no"
                          " longer) in %s", self->api_state.keys_refused, self->api_state.user_id,
                          self->config.keys);
            self->api_state.keys_refused = 0;
            self->api_state.keys_logged = now;
        }
    }
    return who;
}

int
engine_token_check (server_t *self, xxl_msg_t *msg)
{
    const char *token = self->config.access_token;
    if (!token || !*token)
        return 0;
    const char *given = xxl_msg_str (msg, NULL, "accessToken", 0, 1024, NULL);
    if (!given)
        return -1;
    //  In constant time for a given token length: every byte of the longer
    //  string is compared, and the lengths are folded in
    size_t want = strlen (token), have = strlen (given);
    size_t span = want > have? want: have;
    unsigned char diff = (unsigned char) (want != have);
    for (size_t i = 0; i < span; i++)
        diff |= (unsigned char) ((i < want? token [i]: 0) ^ (i < have? given [i]: 0));
    return diff? -1: 0;
}

//  The app of the job or run a request names, into app; 0, or 1 when the
//  job, run or group does not exist (the handler answers 404)
static int
s_scope_app (server_t *self, request_t *request, char *app, size_t applen)
{
    const char *scope = request->command->scope;
    int64_t id = xxl_command_has (request->msg, scope)
               ? xxl_command_int (request->command, request->msg, scope): 0;
    //  (a run counts for the group it ran in, even if its job moved since)
    int64_t group_id = 0;
    if (id > 0 && streq (scope, "logId")) {
        xxl_log_t log;
        if (xxl_store_log_load (self->store, id, &log) == 0)
            group_id = log.job_group;
        xxl_log_free (&log);
    }
    else
    if (id > 0) {
        xxl_job_t job;
        if (xxl_store_job_load (self->store, id, &job) == 0)
            group_id = job.job_group;
        xxl_job_free (&job);
    }
    xxl_group_t group;
    if (group_id <= 0 || xxl_store_group_load (self->store, group_id, &group))
        return 1;
    snprintf (app, applen, "%s", group.app_name? group.app_name: "");
    xxl_group_free (&group);
    return 0;
}

int
engine_permit (server_t *self, request_t *request, char *why, size_t whylen)
{
    const xxl_who_t *who = request->who;
    const xxl_command_t *command = request->command;
    int rank = s_rank (who->role);
    if (rank == 3)
        return 0;
    int need = command->access == XXL_ACCESS_VIEWER? 1
             : command->access == XXL_ACCESS_OPERATOR? 2: 3;
    if (rank < need) {
        snprintf (why, whylen, "key '%s' (%s) may not send %s: it needs the %s role",
                  who->name, who->role, command->name, xxl_access_name (command->access));
        return -1;
    }
    if (command->access != XXL_ACCESS_OPERATOR)
        return 0;
    assert (command->scope);
    //  An operator acts on one job or run of its apps
    if (!xxl_command_has (request->msg, command->scope)
    ||  xxl_command_int (command, request->msg, command->scope) <= 0) {
        snprintf (why, whylen, "key '%s' (%s) may send %s only for one job of its apps"
                  " (give %s)", who->name, who->role, command->name, command->scope);
        return -1;
    }
    if (xxl_command_has (request->msg, "address")) {
        snprintf (why, whylen, "key '%s' (%s) may not choose the addresses of a trigger:"
                  " only an admin may", who->name, who->role);
        return -1;
    }
    char app [256];
    if (s_scope_app (self, request, app, sizeof app))
        return 0;                       //  (not found: the handler's 404)
    if (!xxl_who_has_app (who, app)) {
        char printable [300];
        snprintf (why, whylen, "key '%s' (%s) may not send %s for app '%s': its apps are"
                  " '%s'", who->name, who->role, command->name,
                  xxl_printable (app, printable, sizeof printable), who->apps);
        return -1;
    }
    return 0;
}

int
engine_may_register (const xxl_who_t *who, const char *app, char *why, size_t whylen)
{
    if (who == NULL || who->public_key [0] == 0)
        return 0;                       //  (no keys: the token decided)
    if (strneq (who->role, "agent")) {
        snprintf (why, whylen, "key '%s' (%s) may not register: only an agent key may",
                  who->name, who->role);
        return -1;
    }
    if (!xxl_who_has_app (who, app)) {
        char printable [300];
        snprintf (why, whylen, "key '%s' (agent) may not register for app '%s': its apps"
                  " are '%s'", who->name, xxl_printable (app, printable, sizeof printable),
                  who->apps);
        return -1;
    }
    return 0;
}

void
engine_keys_refresh (server_t *self)
{
    if (!self->keys)
        return;
    int rc = xxl_keys_refresh (self->keys);
    if (rc > 0)
        zsys_info ("access: %s read again: %zu key(s)", self->config.keys,
                   xxl_keys_size (self->keys));
    else
    if (rc < 0)
        zsys_warning ("access: cannot read %s (%s); the keys read before stay",
                      self->config.keys, strerror (errno));
}

uint64_t
engine_request_id (server_t *self)
{
    //  Random, so that a peer cannot guess the id of a request sent to
    //  another agent; 62 bits (positive in any signed 64-bit decoder),
    //  never 0, never one in flight
    for (;;) {
        if (self->api_state.ids_left == 0) {
            size_t got = 0;
            while (got < sizeof self->api_state.ids) {
                ssize_t rc = getrandom ((char *) self->api_state.ids + got, sizeof self->api_state.ids - got, 0);
                if (rc < 0 && errno != EINTR) {
                    //  (no entropy source: ids still differ, if guessable)
                    zsys_warning ("access: getrandom failed (%s)", strerror (errno));
                    for (size_t i = 0; i < XXL_IDS_AHEAD; i++)
                        self->api_state.ids [i] = ++self->next_id;
                    break;
                }
                got += rc > 0? (size_t) rc: 0;
            }
            self->api_state.ids_left = XXL_IDS_AHEAD;
        }
        uint64_t id = self->api_state.ids [--self->api_state.ids_left] & ((UINT64_C (1) << 62) - 1);
        if (id && !zhashx_lookup (self->runs.pending, &id) && !zhashx_lookup (self->runs.batches, &id))
            return id;
    }
}
