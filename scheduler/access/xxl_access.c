/*  xxl_access.c -- who sent a message, and what they may do.

    Every message is attributed to the key of its connection: with CURVE on,
    the key the ZAP handler admitted at the handshake (its Z85 text is the
    message's User-Id), looked up in the key table of the keys folder for
    each message, so that a key removed from the folder stops counting on
    connections already open.  Without keys every peer is "local", role
    admin, and the access token (when set) is what is checked.

    The rules, each in one place here:
    - api commands: the command table's least role (xxl_commands.h access);
      for an operator, and for a viewer whose key lists apps, the app of
      every group, job or run the request names must be one of the key's
      apps (403 when it is not), and its lists and REPORT hold only its
      apps' rows and runs (engine_read_groups);
    - agents: only an agent key may REGISTER, and only for its apps;
    - the access token, compared in constant time.
*/

#include "xxl_engine.h"


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
    const xxl_who_t *who = xxl_keys_lookup (self->keys, self->access.user_id);
    if (!who) {
        //  (a key the handshake admitted that has since left the folder,
        //  at most one line a minute: a peer may keep sending)
        int64_t now = zclock_mono ();
        self->access.keys_refused++;
        if (now - self->access.keys_logged >= 60000) {
            zsys_warning ("access: %" PRId64 " message(s) refused: their key %s is not (or no"
                          " longer) in %s", self->access.keys_refused, self->access.user_id,
                          self->config.keys);
            self->access.keys_refused = 0;
            self->access.keys_logged = now;
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

//  The app of the group (field "group": app name or id; "jobGroup": id),
//  job ("jobId") or run ("logId") field key of a request names, into app;
//  0, or 1 when the request does not name one or it does not exist (the
//  handler answers 404, or lists nothing)
static int
s_field_app (server_t *self, request_t *request, const char *key, char *app, size_t applen)
{
    const xxl_field_t *field = request->command->fields;
    while (field->key && strneq (field->key, key))
        field++;
    if (!field->key || !xxl_args_given (&request->args, request->msg, key))
        return 1;
    xxl_group_t group;
    int rc = 1;
    if (field->type == XXL_FIELD_STR) {
        const char *name = xxl_args_str (&request->args, request->msg, key);
        rc = name && *name? xxl_store_group_find (self->store, name, &group): 1;
    }
    else {
        int64_t id = xxl_args_int (&request->args, request->msg, key);
        //  (a run counts for the group it ran in, even if its job moved since)
        int64_t group_id = 0;
        if (id > 0 && streq (key, "logId")) {
            xxl_log_t log;
            if (xxl_store_log_load (self->store, id, &log) == 0)
                group_id = log.job_group;
            xxl_log_free (&log);
        }
        else
        if (id > 0 && streq (key, "jobId")) {
            xxl_job_t job;
            if (xxl_store_job_load (self->store, id, &job) == 0)
                group_id = job.job_group;
            xxl_job_free (&job);
        }
        else
        if (id > 0 && streq (key, "backfillId")) {
            //  (a backfill counts for its job's group)
            xxl_store_backfill_t backfill;
            xxl_job_t job;
            if (xxl_store_backfill_get (self->store, id, &backfill) == 0
            &&  xxl_store_job_load (self->store, backfill.job_id, &job) == 0) {
                group_id = job.job_group;
                xxl_job_free (&job);
            }
            xxl_store_backfill_free (&backfill);
        }
        else
        if (id > 0)
            group_id = id;
        rc = group_id > 0? xxl_store_group_load (self->store, group_id, &group): 1;
    }
    if (rc)
        return 1;
    snprintf (app, applen, "%s", group.app_name? group.app_name: "");
    xxl_group_free (&group);
    return 0;
}

//  The fields that name the subject of a request, whose app a key limited
//  to apps must list
static const char *const s_subjects [] = { "group", "jobGroup", "jobId", "logId", "backfillId",
                                           NULL };

bool
engine_reads_scoped (const xxl_who_t *who)
{
    return s_rank (who->role) < 3 && who->apps && *who->apps;
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
    if (command->access == XXL_ACCESS_OPERATOR) {
        assert (command->scope);
        //  An operator acts on one job or run of its apps (or one group of
        //  them where the scope names "jobGroup" too: "jobId|jobGroup")
        bool scoped = false;
        char scope [64];
        snprintf (scope, sizeof scope, "%s", command->scope);
        char *save = NULL;
        for (char *key = strtok_r (scope, "|", &save); key && !scoped;
             key = strtok_r (NULL, "|", &save))
            scoped = xxl_args_given (&request->args, request->msg, key)
                  && xxl_args_int (&request->args, request->msg, key) > 0;
        if (!scoped) {
            bool group = strstr (command->scope, "jobGroup") != NULL;
            snprintf (why, whylen, "key '%s' (%s) may send %s only for one job%s of its apps"
                      " (give %s)", who->name, who->role, command->name,
                      group? " or group": "", group? "jobId or jobGroup": command->scope);
            return -1;
        }
        if (xxl_command_has (request->msg, "address")) {
            snprintf (why, whylen, "key '%s' (%s) may not choose the addresses of a trigger:"
                      " only an admin may", who->name, who->role);
            return -1;
        }
    }
    //  A key with apps reads, and an operator acts, only within its apps:
    //  every group, job or run the request names must be of one of them
    //  (one that does not exist: the handler's 404).  An operator without
    //  apps acts on nothing; a viewer or operator without apps reads all.
    if (command->access != XXL_ACCESS_OPERATOR && !engine_reads_scoped (who))
        return 0;
    for (const char *const *key = s_subjects; *key; key++) {
        char app [256];
        if (s_field_app (self, request, *key, app, sizeof app))
            continue;
        if (!xxl_who_has_app (who, app)) {
            char printable [300];
            snprintf (why, whylen, "key '%s' (%s) may not send %s for app '%s': its apps are"
                      " '%s'", who->name, who->role, command->name,
                      xxl_printable (app, printable, sizeof printable), who->apps);
            return -1;
        }
    }
    return 0;
}

//  Groups by id, for qsort
static int
s_group_cmp (const void *a, const void *b)
{
    int64_t x = ((const xxl_group_t *) a)->id, y = ((const xxl_group_t *) b)->id;
    return x < y? -1: x > y;
}

size_t
engine_who_groups (server_t *self, const xxl_who_t *who, xxl_group_t **groups_p)
{
    size_t room = 1, count = 0;
    for (const char *p = who->apps; *p; p++)
        room += *p == ',';
    xxl_group_t *groups = (xxl_group_t *) zmalloc (room * sizeof (xxl_group_t));
    char *apps = strdup (who->apps);
    char *save = NULL;
    for (char *app = strtok_r (apps, ",", &save); app; app = strtok_r (NULL, ",", &save)) {
        //  (spaces around an item are not part of it, as xxl_who_has_app)
        while (*app == ' ')
            app++;
        size_t len = strlen (app);
        while (len && app [len - 1] == ' ')
            app [--len] = 0;
        xxl_group_t *group = &groups [count];
        if (!*app || xxl_store_group_find (self->store, app, group))
            continue;
        //  (an app named by digits is no group id; an app listed twice counts once)
        bool again = false;
        for (size_t i = 0; i < count; i++)
            again = again || groups [i].id == group->id;
        if (!group->app_name || strneq (group->app_name, app) || again)
            xxl_group_free (group);
        else
            count++;
    }
    free (apps);
    qsort (groups, count, sizeof groups [0], s_group_cmp);
    *groups_p = groups;
    return count;
}

bool
engine_read_groups (server_t *self, const xxl_who_t *who, int64_t **ids, size_t *count)
{
    *ids = NULL;
    *count = 0;
    if (!engine_reads_scoped (who))
        return false;
    xxl_group_t *groups;
    size_t found = engine_who_groups (self, who, &groups);
    //  (never NULL: an empty set selects no row, where NULL selects all)
    *ids = (int64_t *) zmalloc ((found? found: 1) * sizeof (int64_t));
    for (size_t i = 0; i < found; i++) {
        (*ids) [i] = groups [i].id;
        xxl_group_free (&groups [i]);
    }
    free (groups);
    *count = found;
    return true;
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

//  Answers a frame that could not be decoded, when it had a readable id
static void
s_reply_bad_frame (server_t *self, bool api, engine_answer_fn *answer, zframe_t *rid,
                   uint64_t id, const char *reason)
{
    char text [300];
    engine_warn_limited (&self->access.log_bad_frame, "server: bad %s message (%s): %s",
                         api? "api": "agent",
                         id? "answered 400": "no readable id, not answered",
                         xxl_printable (reason, text, sizeof text));
    if (id == 0)
        return;                         //  no readable id: nothing to answer to
    xxl_enc_reply (self->enc, id, XXL_BAD_REQUEST, reason);
    answer (self, rid);
}

//  Takes a ROUTER message apart into its routing id and one decoded
//  frame.  What cannot be decoded, or lacks the access token, is answered
//  (when it had a readable id) or dropped with a log line.  Returns the
//  message (the caller destroys it and *rid_p), or NULL.
//
//  On the api socket *rid_p is a return address: the routing id followed
//  by one byte, XXL_PEER_REQ when the client is a REQ socket (its message
//  had an empty delimiter frame before the body, and so must its reply;
//  engine_api_send puts it back), else XXL_PEER_DEALER.  Agents must be DEALERs.
xxl_msg_t *
engine_receive (server_t *self, zmsg_t *zmsg, bool api, engine_answer_fn *answer,
                zframe_t **rid_p, const xxl_who_t **who_p)
{
    const char *what = api? "api": "agent";
    zframe_t *rid = zmsg_pop (zmsg);
    zframe_t *body = zmsg_pop (zmsg);
    xxl_msg_t *msg = NULL;
    byte peer = XXL_PEER_DEALER;
    if (api && body && zframe_size (body) == 0 && zmsg_size (zmsg) == 1) {
        zframe_destroy (&body);         //  REQ's delimiter
        body = zmsg_pop (zmsg);
        peer = XXL_PEER_REQ;
    }
    if (rid && api) {
        //  The return address: routing id, socket (4 bytes), peer kind
        size_t size = zframe_size (rid);
        zframe_t *address = zframe_new (NULL, size + XXL_RETURN_EXTRA);
        int32_t fd = self->access.api_fd;
        memcpy (zframe_data (address), zframe_data (rid), size);
        memcpy (zframe_data (address) + size, &fd, sizeof fd);
        zframe_data (address) [size + sizeof fd] = peer;
        zframe_destroy (&rid);
        rid = address;
    }
    if (!rid || !body || zmsg_size (zmsg) > 0)
        //  Not one frame after the routing id: no reply is possible
        engine_warn_limited (&self->access.log_frames, "server: %s message with %s frames dropped"
                             " (a message is one frame; a REQ client's, an empty one"
                             " and one)", what, body? "too many": "too few");
    else {
        char reason [256];
        uint64_t id = 0;
        msg = xxl_msg_decode (zframe_data (body), zframe_size (body), &id,
                              reason, sizeof reason);
        const xxl_who_t *who = msg? engine_who (self): NULL;
        int code = !msg? 0: !who? XXL_FORBIDDEN: engine_token_check (self, msg)? XXL_UNAUTHORIZED: 0;
        if (!msg)
            s_reply_bad_frame (self, api, answer, rid, id, reason);
        else
        if (code) {
            //  (every message counts: an agent carries the token on its
            //  REPLYs and CALLBACKs too).  A REPLY is never answered: it
            //  is dropped, and the request it answers waits on.
            char type [80];
            bool reply = streq (xxl_msg_type (msg), "REPLY");
            const char *peer = *self->access.peer_address? self->access.peer_address: NULL;
            if (code == XXL_UNAUTHORIZED)
                engine_warn_limited (&self->access.log_token, "server: %s %s message from %s with a"
                                     " missing or wrong access token %s", what,
                                     xxl_printable (xxl_msg_type (msg), type, sizeof type),
                                     peer? peer: "an unknown address",
                                     reply? "dropped": "refused (401)");
            if (!reply) {
                xxl_enc_reply (self->enc, id, code, code == XXL_UNAUTHORIZED
                               ? "the access token is wrong"
                               : "this connection's key is no longer in the scheduler's keys folder");
                answer (self, rid);
            }
            xxl_msg_destroy (&msg);
        }
        else
            *who_p = who;
    }
    zframe_destroy (&body);
    if (msg)
        *rid_p = rid;
    else
        zframe_destroy (&rid);
    return msg;
}
