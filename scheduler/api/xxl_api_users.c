/*  xxl_api_users.c -- users and bearer tokens (USER_*, TOKEN_*), and the
    engine's end of the HTTP server (xxl_http.c): its inproc socket.

    The HTTP threads never touch the store: each REST call arrives on the
    engine's inproc ROUTER `http` as [routing id][credentials][request],
    the request a msgpack map as any api client sends.  The engine reads
    the credentials against the store (a bearer token's SHA-256, or a
    session's, with its CSRF token for a change), makes the caller a
    who (name "user:NAME" or "token:NAME", the stored role and apps) and
    judges the request exactly as one from the api socket: the command
    table, engine_permit, the handler, the audit.  Its reply goes back
    on the same socket (the return address's peer kind XXL_PEER_HTTP).

    Credentials frame (text, written by xxl_http.c only):
        "-"                             none
        "T <sha256>"                    a bearer token
        "S <sha256> <csrf> <0|1>"       a session cookie, the X-CSRF-Token
                                        header ("-" none), 1 for a change
    A few types only the HTTP side sends (HTTP_LOGIN, HTTP_SESSION,
    HTTP_ME, HTTP_LOGOUT, HTTP_PASSWORD) are answered here, on this socket
    only: logging in (the password is checked on the HTTP thread, with the
    hash HTTP_LOGIN returns), the session's owner, its end, a new password.
*/

#include "xxl_api.h"
#include "xxl_secret.h"

//  How often a session's last-seen time is written (its idle expiry is
//  judged to this much)
#define XXL_SESSION_TOUCH_MS 60000
//  How often a tracked first-login password file is judged again (a change
//  made through another scheduler of the store is seen this late)
#define XXL_FIRST_ADMIN_CHECK_MS 5000

//  --------------------------------------------------------------------
//  The first login (xxl_first_admin.h)

void
engine_first_admin_start (server_t *self)
{
    const xxl_http_config_t *http = &self->config.http;
    if (!self->http_server || !http->initial_admin)
        return;
    xxl_first_admin_t *first = &self->api_state.first_admin;
    char why [768];
    int rc = xxl_first_admin_start (first, self->store, http->state_dir, engine_now (), why,
                                    sizeof why);
    if (rc == XXL_FIRST_ADMIN_MADE)
        zsys_notice ("server: no console user: made user %s (role admin), its password in %s"
                     " (docs/operations.md, First login)", XXL_FIRST_ADMIN_USER, first->path);
    else
    if (rc == XXL_FIRST_ADMIN_KEPT)
        zsys_info ("server: %s holds user %s's password still: removed once it has a new one",
                   first->path, XXL_FIRST_ADMIN_USER);
    else
    if (rc == XXL_FIRST_ADMIN_STALE)
        zsys_info ("server: removed %s: user %s has a new password or is gone", first->path,
                   XXL_FIRST_ADMIN_USER);
    else
    if (rc == XXL_FIRST_ADMIN_LEFT)
        zsys_warning ("server: left %s: it holds no password of this store's user %s and was"
                      " not written with it (the user is gone, or another store's scheduler"
                      " shares this state folder): remove it once no one needs it",
                      first->path, XXL_FIRST_ADMIN_USER);
    else
    if (rc < 0)
        zsys_error ("server: first login (docs/operations.md): no user %s made or judged: %s%s%s",
                    XXL_FIRST_ADMIN_USER, why, http->state_dir? "": ": ",
                    http->state_dir? "": http->state_error? http->state_error: "unknown");
    self->api_state.first_admin_next = zclock_mono () + XXL_FIRST_ADMIN_CHECK_MS;
}

void
engine_first_admin_check (server_t *self)
{
    xxl_first_admin_t *first = &self->api_state.first_admin;
    int64_t now = zclock_mono ();
    if (!*first->hash
    ||  (!self->api_state.first_admin_due && now < self->api_state.first_admin_next))
        return;
    self->api_state.first_admin_due = false;
    self->api_state.first_admin_next = now + XXL_FIRST_ADMIN_CHECK_MS;
    if (xxl_first_admin_check (first, self->store) == 1)
        zsys_info ("server: removed %s: user %s has a new password or is gone", first->path,
                   XXL_FIRST_ADMIN_USER);
}

//  --------------------------------------------------------------------
//  USER_* and TOKEN_*

//  An operator acts only on jobs of its apps (engine_permit): one without
//  apps could act on nothing while reading every app, so a user or token
//  is never made so.  Returns true (and replies 400) when ROLE and APPS,
//  the account as it would be stored, are such an operator.
static bool
s_operator_without_apps (server_t *self, request_t *request, const char *role,
                         const char *apps)
{
    if (!role || strcmp (role, "operator") || (apps && *apps))
        return false;
    engine_reply (self, request, XXL_BAD_REQUEST,
                  "an operator needs apps: it triggers, starts, stops, kills and clears the"
                  " runs of jobs of its apps only (give apps; the role viewer reads every app"
                  " without them, an admin does everything)");
    return true;
}

static void
s_reply_name (server_t *self, request_t *request, const char *key, const char *name,
              const char *token)
{
    engine_reply_begin (self, request);
    xxl_enc_map_begin (self->enc);
    xxl_enc_kstr (self->enc, key, name);
    if (token)
        xxl_enc_kstr (self->enc, "token", token);
    xxl_enc_map_end (self->enc);
    engine_reply_end (self, request);
}

static void
s_reply_store (server_t *self, request_t *request, int rc, const char *what, const char *name)
{
    if (rc < 0) {
        engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
        return;
    }
    bool add = strstr (request->command->name, "_ADD") != NULL;
    char text [200];
    snprintf (text, sizeof text, "%s '%s' %s", what, name, add? "exists already": "not found");
    engine_reply (self, request, add? XXL_CONFLICT: XXL_NOT_FOUND, text);
}

void
api_user_add (server_t *self, request_t *request)
{
    const char *name = api_str (request, "username");
    if (s_operator_without_apps (self, request, api_str (request, "role"),
                                 api_str (request, "apps")))
        return;
    //  (yescrypt here costs the loop tens of milliseconds: an admin's
    //  rare command)
    char *hash = xxl_secret_hash_password (api_str (request, "password"));
    if (!hash) {
        engine_reply (self, request, XXL_FAILURE, "cannot hash the password (libcrypt)");
        return;
    }
    const char *apps = api_str (request, "apps");
    xxl_account_t user = {
        .name = (char *) name, .hash = hash, .role = (char *) api_str (request, "role"),
        .apps = (char *) (apps? apps: ""), .add_time = engine_now ()
    };
    int rc = xxl_store_user_add (self->store, &user);
    free (hash);
    if (rc == 1)
        s_reply_name (self, request, "username", name, NULL);
    else
        s_reply_store (self, request, rc, "user", name);
}

void
api_user_update (server_t *self, request_t *request)
{
    const char *name = api_str (request, "username");
    const char *role = api_str (request, "role"), *apps = api_str (request, "apps");
    //  The account as it would be: a field not given stays as stored (an
    //  unknown user: the update's 404)
    xxl_account_t stored = { 0 };
    bool loaded = false;
    if (!role != !apps) {
        int rc = xxl_store_user_get (self->store, name, &stored);
        if (rc < 0) {
            engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
            return;
        }
        loaded = rc == 0;
    }
    bool refused = ((role && apps) || loaded)
                && s_operator_without_apps (self, request, role? role: stored.role,
                                            apps? apps: stored.apps);
    if (loaded)
        xxl_account_free (&stored);
    if (refused)
        return;
    const char *password = api_str (request, "password");
    char *hash = password? xxl_secret_hash_password (password): NULL;
    if (password && !hash) {
        engine_reply (self, request, XXL_FAILURE, "cannot hash the password (libcrypt)");
        return;
    }
    int rc = xxl_store_user_update (self->store, name, hash, api_str (request, "role"),
                                    api_str (request, "apps"));
    self->api_state.first_admin_due |= hash != NULL;
    //  A new password ends the user's sessions
    if (rc == 1 && hash && xxl_store_user_sessions_rm (self->store, name) < 0)
        rc = -1;
    free (hash);
    if (rc == 1)
        s_reply_name (self, request, "username", name, NULL);
    else
        s_reply_store (self, request, rc, "user", name);
}

void
api_user_rm (server_t *self, request_t *request)
{
    const char *name = api_str (request, "username");
    int rc = xxl_store_user_rm (self->store, name);
    self->api_state.first_admin_due = true;
    if (rc == 1)
        s_reply_name (self, request, "username", name, NULL);
    else
        s_reply_store (self, request, rc, "user", name);
}

static void
s_list (server_t *self, request_t *request, const char *key,
        int (*encode) (xxl_store_t *store, xxl_enc_t *enc))
{
    engine_reply_begin (self, request);
    xxl_enc_map_begin (self->enc);
    xxl_enc_key (self->enc, key);
    if (encode (self->store, self->enc) < 0) {
        engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
        return;
    }
    xxl_enc_map_end (self->enc);
    engine_reply_end (self, request);
}

void
api_user_list (server_t *self, request_t *request)
{
    s_list (self, request, "users", xxl_store_user_encode_all);
}

void
api_token_add (server_t *self, request_t *request)
{
    const char *name = api_str (request, "name");
    if (s_operator_without_apps (self, request, api_str (request, "role"),
                                 api_str (request, "apps")))
        return;
    char token [XXL_SECRET_HEX + 4], hash [XXL_SECRET_HEX], random [XXL_SECRET_HEX];
    if (xxl_secret_random (random)) {
        engine_reply (self, request, XXL_FAILURE, "no random bytes from the OS");
        return;
    }
    //  (the prefix tells a leaked token for what it is)
    snprintf (token, sizeof token, "xxl_%s", random);
    xxl_secret_sha256 (token, hash);
    const char *apps = api_str (request, "apps");
    xxl_account_t row = {
        .name = (char *) name, .hash = hash, .role = (char *) api_str (request, "role"),
        .apps = (char *) (apps? apps: ""), .add_time = engine_now ()
    };
    int rc = xxl_store_token_add (self->store, &row);
    if (rc == 1)
        s_reply_name (self, request, "name", name, token);
    else
        s_reply_store (self, request, rc, "token", name);
}

void
api_token_rm (server_t *self, request_t *request)
{
    const char *name = api_str (request, "name");
    int rc = xxl_store_token_rm (self->store, name);
    if (rc == 1)
        s_reply_name (self, request, "name", name, NULL);
    else
        s_reply_store (self, request, rc, "token", name);
}

void
api_token_list (server_t *self, request_t *request)
{
    s_list (self, request, "tokens", xxl_store_token_encode_all);
}

//  --------------------------------------------------------------------
//  The HTTP socket

typedef struct {
    int kind;                           //  0 none, 'T' token, 'S' session
    char name [80];                     //  "user:NAME" / "token:NAME"
    char user [72];                     //  the user or token name alone
    char role [16];
    char *apps;                         //  (owned)
    char sid [XXL_SECRET_HEX];          //  the session's id hash
    char csrf [XXL_SECRET_HEX];         //  the session's CSRF token
    int remember;                       //  the session is remembered (1)
    xxl_who_t who;
} http_who_t;

//  The oldest last-seen time (epoch ms) at now of a live session,
//  remembered or not: a remembered one's idle limit is http/remember_s
//  (0: remembering is off, and it is judged as any)
static int64_t
s_session_seen_after (server_t *self, int64_t now, bool remember)
{
    int idle_s = remember && self->config.http.remember_s > 0? self->config.http.remember_s
                                                              : self->config.http.session_idle_s;
    return now - (int64_t) idle_s * 1000;
}

//  The caller the credentials name, into hw; 0, or the code to answer
//  (401 none or unknown, 403 a change without the session's CSRF token,
//  500 the store) with the reason in why
static int
s_http_who (server_t *self, zframe_t *auth, http_who_t *hw, char *why, size_t whylen)
{
    char text [256];
    size_t size = zframe_size (auth) < sizeof text - 1? zframe_size (auth): sizeof text - 1;
    memcpy (text, zframe_data (auth), size);
    text [size] = 0;
    char hash [XXL_SECRET_HEX] = "", csrf [XXL_SECRET_HEX] = "";
    int change = 0;
    xxl_account_t account = { 0 };
    int rc;
    if (text [0] == 'T' && sscanf (text, "T %64s", hash) == 1) {
        rc = xxl_store_token_find (self->store, hash, &account);
        //  (found by its hash; the stored one compared again in constant time)
        if (rc == 0 && !xxl_secret_equal (account.hash, hash))
            rc = 1;
        if (rc) {
            xxl_account_free (&account);
            snprintf (why, whylen, rc < 0? "the store cannot be read"
                                          : "the bearer token is unknown or was removed");
            return rc < 0? XXL_FAILURE: XXL_UNAUTHORIZED;
        }
        hw->kind = 'T';
        snprintf (hw->name, sizeof hw->name, "token:%s", account.name);
    }
    else
    if (text [0] == 'S' && sscanf (text, "S %64s %64s %d", hash, csrf, &change) == 3) {
        char *user = NULL, *stored_csrf = NULL;
        int64_t seen = 0, now = engine_now ();
        rc = xxl_store_session_find_remember (self->store, hash,
                                              s_session_seen_after (self, now, false),
                                              s_session_seen_after (self, now, true),
                                              &user, &stored_csrf, &seen, &hw->remember);
        if (rc == 0) {
            snprintf (hw->csrf, sizeof hw->csrf, "%s", stored_csrf);
            rc = xxl_store_user_get (self->store, user, &account);
        }
        if (rc == 0 && now - seen >= XXL_SESSION_TOUCH_MS)
            xxl_store_session_touch (self->store, hash, now);
        free (user);
        free (stored_csrf);
        if (rc) {
            xxl_account_free (&account);
            snprintf (why, whylen, rc < 0? "the store cannot be read"
                                          : "the session has ended: log in again");
            return rc < 0? XXL_FAILURE: XXL_UNAUTHORIZED;
        }
        if (change && !xxl_secret_equal (csrf, hw->csrf)) {
            xxl_account_free (&account);
            snprintf (why, whylen, "a change with a session needs its X-CSRF-Token header");
            return XXL_FORBIDDEN;
        }
        hw->kind = 'S';
        snprintf (hw->sid, sizeof hw->sid, "%s", hash);
        snprintf (hw->name, sizeof hw->name, "user:%s", account.name);
    }
    else {
        snprintf (why, whylen, "no credentials: log in, or send Authorization: Bearer TOKEN");
        return XXL_UNAUTHORIZED;
    }
    snprintf (hw->user, sizeof hw->user, "%s", account.name);
    snprintf (hw->role, sizeof hw->role, "%s", account.role);
    hw->apps = account.apps;
    account.apps = NULL;
    xxl_account_free (&account);
    hw->who.name = hw->name;
    hw->who.role = hw->role;
    hw->who.apps = hw->apps;
    hw->who.public_key = "";
    return 0;
}

//  {username, role, apps[, csrf]}: who a session or token is
static void
s_reply_me (server_t *self, request_t *request, const char *user, const char *role,
            const char *apps, const char *csrf, const char *kind)
{
    engine_reply_begin (self, request);
    xxl_enc_map_begin (self->enc);
    xxl_enc_kstr (self->enc, "username", user);
    xxl_enc_kstr (self->enc, "role", role);
    xxl_enc_kstr (self->enc, "apps", apps);
    if (csrf)
        xxl_enc_kstr (self->enc, "csrf", csrf);
    xxl_enc_kstr (self->enc, "kind", kind);
    xxl_enc_map_end (self->enc);
    engine_reply_end (self, request);
}

//  The HTTP side's own requests; code/why: the credentials' judgement
static void
s_http_internal (server_t *self, request_t *request, const char *type, http_who_t *hw,
                 int code, const char *why)
{
    xxl_msg_t *msg = request->msg;
    engine_outbox_read (self, streq (type, "HTTP_LOGIN") || streq (type, "HTTP_ME"));
    if (streq (type, "HTTP_LOGIN") || streq (type, "HTTP_SESSION")) {
        const char *name = xxl_msg_str (msg, NULL, "username", 1, 64, NULL);
        const char *sid = streq (type, "HTTP_SESSION")
                        ? xxl_msg_str (msg, NULL, "session", 1, 64, NULL): NULL;
        const char *csrf = sid? xxl_msg_str (msg, NULL, "csrf", 1, 64, NULL): NULL;
        const char *checked = sid? xxl_msg_str (msg, NULL, "password", 1, 512, NULL): NULL;
        //  (a remembered session only while remembering is on)
        int remember = sid && xxl_msg_bool (msg, NULL, "remember", 0, 0)
                    && self->config.http.remember_s > 0;
        if (xxl_msg_error (msg)) {
            engine_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (msg));
            return;
        }
        xxl_account_t user;
        int rc = xxl_store_user_get (self->store, name, &user);
        //  A session only for the password the HTTP thread checked: one
        //  changed (or a user removed and added again) since makes none
        if (rc == 0 && sid && !xxl_secret_equal (user.hash, checked))
            rc = 1;
        if (rc == 0 && sid) {
            //  (sessions idle past their time go as new ones come)
            int64_t now = engine_now ();
            xxl_store_session_expire_remember (self->store,
                                               s_session_seen_after (self, now, false),
                                               s_session_seen_after (self, now, true));
            rc = xxl_store_session_add_remember (self->store, sid, name, csrf, now, remember);
        }
        if (rc == 0 && sid)
            s_reply_me (self, request, user.name, user.role, user.apps, csrf, "session");
        else
        if (rc == 0) {
            engine_reply_begin (self, request);
            xxl_enc_map_begin (self->enc);
            xxl_enc_kstr (self->enc, "username", user.name);
            xxl_enc_kstr (self->enc, "password", user.hash);
            xxl_enc_map_end (self->enc);
            engine_reply_end (self, request);
        }
        else
            engine_reply (self, request, rc < 0? XXL_FAILURE: XXL_UNAUTHORIZED,
                          rc < 0? xxl_store_error (self->store): "wrong user name or password");
        xxl_account_free (&user);
        return;
    }
    if (code) {
        engine_outbox_read (self, true);
        engine_reply (self, request, code, why);
        return;
    }
    if (streq (type, "HTTP_ME"))
        s_reply_me (self, request, hw->user, hw->role, hw->apps, hw->kind == 'S'? hw->csrf: NULL,
                    hw->kind == 'S'? "session": "token");
    else
    if (hw->kind != 'S') {
        engine_outbox_read (self, true);
        engine_reply (self, request, XXL_BAD_REQUEST, "only a session logs out or changes its"
                      " password");
    }
    else
    if (streq (type, "HTTP_LOGOUT")) {
        if (xxl_store_session_rm (self->store, hw->sid) < 0)
            engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
        else {
            engine_reply_begin (self, request);
            xxl_enc_map_begin (self->enc);
            xxl_enc_map_end (self->enc);
            engine_reply_end (self, request);
        }
    }
    else
    if (streq (type, "HTTP_PASSWORD")) {
        //  (the hash the HTTP thread made once it checked the old password)
        const char *hash = xxl_msg_str (msg, NULL, "password", 1, 512, NULL);
        if (xxl_msg_error (msg) || strncmp (hash, "$", 1)) {
            engine_reply (self, request, XXL_BAD_REQUEST, "password: a crypt(3) hash");
            return;
        }
        //  Every other session of the user ends; this one stays.  (No
        //  check that the hash the old password matched is still the
        //  user's: a password set since ended this session, which
        //  s_http_who then did not find.)
        int rc = xxl_store_user_update (self->store, hw->user, hash, NULL, NULL);
        self->api_state.first_admin_due = true;
        if (rc == 1)
            rc = xxl_store_user_sessions_rm (self->store, hw->user) < 0
              || xxl_store_session_add_remember (self->store, hw->sid, hw->user, hw->csrf,
                                                 engine_now (), hw->remember)? -1: 1;
        if (rc == 1) {
            engine_reply_begin (self, request);
            xxl_enc_map_begin (self->enc);
            xxl_enc_map_end (self->enc);
            engine_reply_end (self, request);
        }
        else
            engine_reply (self, request, rc < 0? XXL_FAILURE: XXL_NOT_FOUND,
                          rc < 0? xxl_store_error (self->store): "the user is gone");
        //  (audited as the change it is: a USER_UPDATE by the user)
        request->command = xxl_command_find ("USER_UPDATE");
        engine_audit (self, request, request->code, 0);
    }
    else {
        char text [160], shown [129];
        engine_outbox_read (self, true);
        snprintf (text, sizeof text, "unknown message type '%s'",
                  xxl_printable (type, shown, sizeof shown));
        engine_reply (self, request, XXL_BAD_REQUEST, text);
    }
}

void
engine_handle_http (server_t *self, zmsg_t *zmsg)
{
    zframe_t *rid = zmsg_pop (zmsg);
    zframe_t *auth = zmsg_pop (zmsg);
    zframe_t *body = zmsg_pop (zmsg);
    if (!rid || !auth || !body || zmsg_size (zmsg) > 0) {
        //  (only xxl_http.c is connected: a bug, not a peer's doing)
        zsys_error ("server: an HTTP request of the wrong shape was dropped");
        zframe_destroy (&rid);
        zframe_destroy (&auth);
        zframe_destroy (&body);
        return;
    }
    //  The return address: as the api socket's (engine_receive), peer kind HTTP
    size_t size = zframe_size (rid);
    zframe_t *address = zframe_new (NULL, size + XXL_RETURN_EXTRA);
    int32_t fd = -1;
    memcpy (zframe_data (address), zframe_data (rid), size);
    memcpy (zframe_data (address) + size, &fd, sizeof fd);
    zframe_data (address) [size + sizeof fd] = XXL_PEER_HTTP;
    zframe_destroy (&rid);
    char reason [256];
    uint64_t id = 0;
    xxl_msg_t *msg = xxl_msg_decode (zframe_data (body), zframe_size (body), &id, reason,
                                     sizeof reason);
    zframe_destroy (&body);
    if (!msg) {
        if (id) {
            xxl_enc_reply (self->enc, id, XXL_BAD_REQUEST, reason);
            engine_queue_client_read (self, zframe_data (address), zframe_size (address));
        }
        zframe_destroy (&address);
        zframe_destroy (&auth);
        return;
    }
    self->metrics.http_requests++;
    http_who_t hw;
    memset (&hw, 0, sizeof hw);
    char why [256] = "";
    int code = s_http_who (self, auth, &hw, why, sizeof why);
    zframe_destroy (&auth);
    const char *type = xxl_msg_type (msg);
    if (strncmp (type, "HTTP_", 5) == 0) {
        request_t request = { .rid = address, .msg = msg, .who = &hw.who };
        s_http_internal (self, &request, type, &hw, code, why);
        engine_outbox_read (self, false);
    }
    else
    if (code) {
        request_t request = { .rid = address, .msg = msg, .who = &hw.who };
        engine_outbox_read (self, true);
        engine_reply (self, &request, code, why);
        engine_outbox_read (self, false);
    }
    else
        engine_api_request (self, address, msg, &hw.who);
    free (hw.apps);
    xxl_msg_destroy (&msg);
    zframe_destroy (&address);
}
