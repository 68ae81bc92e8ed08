/*  xxl_http_auth.c -- who an HTTP request is (xxl_http_int.h): its
    credentials frame (a bearer token's hash, else the session cookie's
    with its CSRF token), the session cookie, login and password change.

    A password is judged here, never by the engine: the engine looks the
    user's row up (HTTP_LOGIN) and makes the session (HTTP_SESSION) or
    stores the new hash (HTTP_PASSWORD).  Every check is counted
    (checks_ok, _wrong, _limited: atomics) and, with a limiter, first
    takes a token per client address and per user name
    (xxl_http_limit.h): none left, the answer is 429 with Retry-After
    and nothing is looked up or hashed.  Runs on the connection's thread;
    calls xxl_http_call.c and xxl_http_answer.c of the server's files.
*/

#include "xxl_log.h"
#include "xxl_http_int.h"
#include "xxl_secret.h"
#include "xxl/msg.h"

//  The credentials frame (xxl_api_users.c) of a request: a bearer token
//  (when bearer), else the session cookie named cookie, with its CSRF
//  header for a change when csrf (else as a read: the caller judged the
//  request's origin), else none
static void
s_credentials (struct MHD_Connection *conn, bool bearer, const char *cookie_name,
               bool csrf_judged, bool change, char *out, size_t outlen)
{
    assert (conn && out && outlen > 0);
    const char *header = bearer? MHD_lookup_connection_value (conn, MHD_HEADER_KIND,
                                                              "Authorization"): NULL;
    char hash [XXL_SECRET_HEX];
    if (header && strncasecmp (header, "Bearer ", 7) == 0) {
        const char *token = header + 7;
        while (*token == ' ')
            token++;
        xxl_secret_sha256 (token, hash);
        snprintf (out, outlen, "T %s", hash);
        return;
    }
    const char *cookie = MHD_lookup_connection_value (conn, MHD_COOKIE_KIND, cookie_name);
    if (cookie && *cookie && strlen (cookie) <= 128) {
        char given [XXL_SECRET_HEX] = "-";
        if (csrf_judged) {
            const char *csrf = MHD_lookup_connection_value (conn, MHD_HEADER_KIND,
                                                            "X-CSRF-Token");
            //  (a token of ours is 64 hex digits: anything else cannot match)
            if (csrf && strlen (csrf) == 64 && strspn (csrf, "0123456789abcdef") == 64)
                snprintf (given, sizeof given, "%s", csrf);
        }
        xxl_secret_sha256 (cookie, hash);
        snprintf (out, outlen, "S %s %s %d", hash, given, csrf_judged && change? 1: 0);
        return;
    }
    snprintf (out, outlen, "-");
}

void
xxl_http_credentials (struct MHD_Connection *conn, bool change, char *out, size_t outlen)
{
    s_credentials (conn, true, "xxl_session", true, change, out, outlen);
}

void
xxl_http_credentials_xxladmin (struct MHD_Connection *conn, bool session_only, char *out,
                               size_t outlen)
{
    s_credentials (conn, !session_only, XXL_HTTP_XXLADMIN_COOKIE, false, false, out, outlen);
}

//  (xxl_http_int.h)
void
xxl_http_named_cookie (xxl_http_t *self, answer_t *answer, const char *name, const char *path,
                       const char *sid, bool remember)
{
    assert (self && answer && name && path);
    assert (!remember || (sid && self->remember_s > 0));
    char max_age [32] = "";
    if (remember)
        snprintf (max_age, sizeof max_age, "; Max-Age=%d", self->remember_s);
    if (sid)
        snprintf (answer->cookie, sizeof answer->cookie,
                  "%s=%s; HttpOnly; SameSite=Strict; Path=%s%s%s", name, sid, path, max_age,
                  self->tls? "; Secure": "");
    else
        snprintf (answer->cookie, sizeof answer->cookie,
                  "%s=; HttpOnly; SameSite=Strict; Path=%s; Max-Age=0%s", name, path,
                  self->tls? "; Secure": "");
}

//  The session cookie sid (NULL: the one that ends the session)
void
xxl_http_session_cookie (xxl_http_t *self, answer_t *answer, const char *sid, bool remember)
{
    xxl_http_named_cookie (self, answer, "xxl_session", "/", sid, remember);
}

//  The limiter's key of the request's client address
static void
s_client_key (struct MHD_Connection *conn, char key [XXL_HTTP_LIMIT_KEY])
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info (conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    xxl_http_limit_address (info? info->client_addr: NULL, key);
}

//  Whether a password check of user's from client may run now (a token
//  taken from each: s_check_done, or xxl_http_limit_refund, follows); else
//  the answer is 429 with Retry-After, and nothing is looked up or hashed
static bool
s_check_allowed (xxl_http_t *self, answer_t *answer, const char *client, const char *user)
{
    if (!self->limit)
        return true;
    int64_t wait = xxl_http_limit_take (self->limit, client, user, zclock_mono ());
    if (wait == 0)
        return true;
    __atomic_add_fetch (&self->checks_limited, 1, __ATOMIC_RELAXED);
    answer->retry_after = (wait + 999) / 1000;
    xxl_http_errorf (answer, 429, "too many wrong passwords from this address or for this user:"
                     " try again in %" PRId64 " s", answer->retry_after);
    return false;
}

//  A password check allowed by s_check_allowed gave match
static void
s_check_done (xxl_http_t *self, const char *client, const char *user, bool match)
{
    __atomic_add_fetch (match? &self->checks_ok: &self->checks_wrong, 1, __ATOMIC_RELAXED);
    //  A failed login: a warning with its address and user name, at most
    //  10 lines a minute for all (a guesser must not flood the log)
    static xxl_log_limit_t s_failed_log;
    int64_t held;
    if (!match && xxl_log_limit_pass (&s_failed_log, 10, &held) == 0) {
        char name [65];
        size_t i = 0;
        for (; user [i] && i < sizeof name - 1; i++)
            name [i] = (unsigned char) user [i] < 0x20 || user [i] == 0x7f? '?': user [i];
        name [i] = 0;
        char more [48] = "";
        if (held)
            snprintf (more, sizeof more, "; %" PRId64 " more held back", held);
        zsys_warning ("http: failed login of user '%s' from %s (wrong password or no such"
                      " user)%s", name, *client? client + 3: "an unknown address", more);
    }
    if (match && self->limit)
        xxl_http_limit_success (self->limit, client, user, zclock_mono ());
}

//  (xxl_http_int.h)
bool
xxl_http_login_user (xxl_http_t *self, answer_t *answer, struct MHD_Connection *conn,
                     const char *user, const char *password, bool remember,
                     char sid [XXL_SECRET_HEX])
{
    assert (self && answer && conn && user && password && sid);
    char client [XXL_HTTP_LIMIT_KEY];
    s_client_key (conn, client);
    if (!s_check_allowed (self, answer, client, user))
        return false;
    json_t *fields = json_pack ("{s:s}", "username", user);
    json_t *content;
    char text [512];
    int code = xxl_http_call (self, "-", "HTTP_LOGIN", fields, &content, text, sizeof text);
    json_decref (fields);
    if (code != XXL_OK && code != XXL_UNAUTHORIZED) {
        //  (nothing was judged: the tokens go back)
        json_decref (content);
        if (self->limit)
            xxl_http_limit_refund (self->limit, client, user, zclock_mono ());
        xxl_http_error (answer, code >= 400 && code <= 599? code: 500, text);
        return false;
    }
    const char *hash = code == XXL_OK? json_string_value (json_object_get (content, "password"))
                                     : NULL;
    //  (checked whatever the lookup said: the time tells nothing)
    bool match = xxl_secret_check_password (password, hash);
    s_check_done (self, client, user, match);
    char csrf [XXL_SECRET_HEX], sid_hash [XXL_SECRET_HEX];
    if (!match)
        xxl_http_error (answer, 401, "wrong user name or password");
    else
    if (xxl_secret_random (sid) || xxl_secret_random (csrf))
        xxl_http_error (answer, 500, "no random bytes from the OS");
    else {
        //  (with the hash the password matched: a password changed since,
        //  or a user removed and added again, makes no session)
        xxl_secret_sha256 (sid, sid_hash);
        fields = json_pack ("{s:s, s:s, s:s, s:s, s:b}", "username", user, "session", sid_hash,
                            "csrf", csrf, "password", hash, "remember", remember);
        xxl_http_forward (self, answer, "-", "HTTP_SESSION", fields, 200);
        json_decref (fields);
    }
    json_decref (content);
    return match && answer->status == 200;
}

//  POST login
void
xxl_http_login (xxl_http_t *self, answer_t *answer, struct MHD_Connection *conn, json_t *body)
{
    assert (json_is_object (body));
    const char *user = json_string_value (json_object_get (body, "username"));
    const char *password = json_string_value (json_object_get (body, "password"));
    json_t *remember_value = json_object_get (body, "remember");
    if (!user || !password || strlen (user) > 64 || strlen (password) > 1024) {
        xxl_http_error (answer, 400, "login needs {\"username\", \"password\"} (strings)");
        return;
    }
    if (remember_value && !json_is_boolean (remember_value) && !json_is_null (remember_value)) {
        xxl_http_error (answer, 400, "login's \"remember\" is true or false");
        return;
    }
    //  (remembering off, http/remember_s 0: as false)
    bool remember = json_is_true (remember_value) && self->remember_s > 0;
    char sid [XXL_SECRET_HEX];
    if (xxl_http_login_user (self, answer, conn, user, password, remember, sid))
        xxl_http_session_cookie (self, answer, sid, remember);
}

//  PUT me/password
void
xxl_http_password (xxl_http_t *self, answer_t *answer, struct MHD_Connection *conn,
                   const char *auth, json_t *body)
{
    assert (json_is_object (body));
    const char *old = json_string_value (json_object_get (body, "oldPassword"));
    const char *new = json_string_value (json_object_get (body, "newPassword"));
    if (!old || !new) {
        xxl_http_error (answer, 400, "needs {\"oldPassword\", \"newPassword\"} (strings)");
        return;
    }
    size_t length = strlen (new);
    bool control = false;
    for (const unsigned char *p = (const unsigned char *) new; *p; p++)
        control = control || *p < 0x20 || *p == 0x7f;
    if (length < 8 || length > 1024 || control) {
        xxl_http_error (answer, 400,
                        "a password must be 8 to 1024 bytes without control characters");
        return;
    }
    //  Who the session is (and its CSRF token judged: a change)
    json_t *empty = json_object (), *me, *user_row;
    char text [512];
    int code = xxl_http_call (self, auth, "HTTP_ME", empty, &me, text, sizeof text);
    const char *user = code == XXL_OK? json_string_value (json_object_get (me, "username")): NULL;
    const char *kind = code == XXL_OK? json_string_value (json_object_get (me, "kind")): NULL;
    if (code == XXL_OK && (!user || !kind || strneq (kind, "session"))) {
        code = XXL_BAD_REQUEST;
        snprintf (text, sizeof text, "only a session changes its password");
    }
    if (code != XXL_OK) {
        json_decref (me);
        json_decref (empty);
        xxl_http_error (answer, code >= 400 && code <= 599? code: 500, text);
        return;
    }
    //  (the old password is judged as a login's: limited alike)
    char client [XXL_HTTP_LIMIT_KEY];
    s_client_key (conn, client);
    if (!s_check_allowed (self, answer, client, user)) {
        json_decref (me);
        json_decref (empty);
        return;
    }
    json_t *fields = json_pack ("{s:s}", "username", user);
    code = xxl_http_call (self, "-", "HTTP_LOGIN", fields, &user_row, text, sizeof text);
    json_decref (fields);
    bool match = xxl_secret_check_password (
        old, code == XXL_OK? json_string_value (json_object_get (user_row, "password")): NULL);
    s_check_done (self, client, user, match);
    json_decref (me);
    json_decref (user_row);
    if (!match) {
        json_decref (empty);
        xxl_http_error (answer, 403, "the old password is wrong");
        return;
    }
    char *hash = xxl_secret_hash_password (new);
    if (!hash) {
        json_decref (empty);
        xxl_http_error (answer, 500, "cannot hash the password (libcrypt)");
        return;
    }
    json_object_set_new (empty, "password", json_string (hash));
    free (hash);
    xxl_http_forward (self, answer, auth, "HTTP_PASSWORD", empty, 200);
    json_decref (empty);
}
