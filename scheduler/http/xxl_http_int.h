/*  xxl_http_int.h -- what the HTTP server's files share (private to
    scheduler/http/; the server's interface is xxl_http.h).

    The files, each calling only those listed below it, never one above:
      xxl_http.c         the server: xxl_http_new, _stop, _destroy; the
                         access handler (reads a request whole; judges its
                         Host, its body's length and size; dispatches);
                         /healthz, /readyz, /metrics; the console's files;
                         queueing an answer with the security headers
      xxl_http_xxladmin.c  XXL-JOB admin's console endpoints under
                         http/xxl_admin_path (login, jobinfo, jobgroup,
                         joblog), each made the api command the REST
                         route of it makes; its pure parts (the form,
                         the fields' translation, the answers' shapes) in
                         xxl_http_xxladmin_map.c, the bodies read into a
                         form in xxl_http_xxladmin_form.c
                         (xxl_http_xxladmin.h)
      xxl_http_rest.c    /api/v1/...: the route table (xxl_commands.def's
                         routes, then the HTTP side's own), the body, query
                         and path ids typed by the command's fields, cron/next,
                         meta
      xxl_http_auth.c    credentials of a request, the session cookie, login
                         and password change (judged with xxl_http_limit)
      xxl_http_call.c    one api request to the engine (JSON to msgpack, the
                         reply's content back to JSON) and the answer of it
      xxl_http_answer.c  answers: a JSON body, {"error": text}
    and, below them all, xxl_http_limit.c (the login limiter) and
    sdk/src/xxl_http_guard.c (connections' deadlines and the health
    checks' slots; shared with xxl-bridge's admin).

    Threads: xxl_http_new, _stop and _destroy run on their caller's thread
    (the server actor's); everything else on libmicrohttpd's, one thread
    per connection, several at once.  So:
      - xxl_http_t is written by xxl_http_new before the daemon starts and
        only read after, except next_id, checks_ok, checks_wrong,
        checks_limited and stopping, which are read and written with
        __atomic_* only;
      - no file keeps state of its own between requests: a request's state
        is its request_ctx_t (MHD's per-request pointer, made and freed by
        xxl_http.c) and its answer_t (on the handling thread's stack);
      - a call to the engine opens its own DEALER socket (ZeroMQ sockets
        are not shared between threads) and closes it before returning.
    An answer_t is made by exactly one of the answer makers (_answer_json,
    _error, _errorf, or a handler's own status and body): status 100..599,
    type set, body owned (malloc'd, or NULL); xxl_http.c's s_queue sends
    it and frees the body.
*/

#ifndef XXL_HTTP_INT_H_INCLUDED
#define XXL_HTTP_INT_H_INCLUDED

#include "xxl_http.h"
#include "xxl_http_limit.h"
#include "xxl_http_guard_mhd.h"
#include "xxl_secret.h"

#include <jansson.h>
#include <microhttpd.h>

struct _xxl_http_t {
    struct MHD_Daemon *daemon;
    char *engine;                       //  inproc endpoint of the engine's socket
    xxl_metrics_box_t *metrics;
    int wait_ms;
    size_t max_body;
    int remember_s;                     //  a remembered session cookie's Max-Age
                                        //  (0: no login is remembered)
    char *console;                      //  the console's folder
    bool tls;
    char *cert_pem, *key_pem;           //  kept while the daemon runs
    uint64_t next_id;                   //  request ids (atomic)
    xxl_http_limit_t *limit;            //  wrong passwords (NULL: no limit)
    uint64_t checks_ok, checks_wrong, checks_limited;   //  password checks (atomic)
    int stopping;                       //  (atomic) the server is stopping: calls
                                        //  waiting for the engine give up
    xxl_http_guard_t *guard;            //  connections' deadlines, health slots
    size_t health_slots;                //  past XXL_HTTP_CONNECTIONS
    char **hosts;                       //  Host names answered besides IP addresses
                                        //  and localhost (lower case; "*.x": x's
                                        //  subdomains), NULL-terminated; NULL: any
    char *xadmin_zone;                  //  http/xxl_admin_timezone (NULL: UTC)
    char *xadmin;                       //  http/xxl_admin_path ("/xxl-job-admin");
                                        //  NULL: XXL-JOB's endpoints not served
};

//  One request in hand (MHD's per-request pointer)
typedef struct {
    zchunk_t *body;
    bool too_big;
} request_ctx_t;

//  An answer: status, body, content type, and a Set-Cookie
typedef struct {
    int status;
    char *body;                         //  owned
    size_t size;
    const char *type;
    char cookie [256];
    char location [128];                //  a Location (302; "": none)
    int64_t retry_after;                //  seconds (429, 503; 0: none)
    char allow [64];                    //  the methods a 405's path takes ("": none)
    bool close;                         //  the connection closes after it
} answer_t;

//  xxl_http_rest.c

//  /api/v1/<path> (path: what follows /api/v1/; method: HEAD as GET)
void xxl_http_api (xxl_http_t *self, answer_t *answer, struct MHD_Connection *conn,
                   const char *method, const char *path, request_ctx_t *ctx);

//  xxl_http_xxladmin.c

//  The session cookie of XXL-JOB's endpoints (XXL-JOB 2.x's name)
#define XXL_HTTP_XXLADMIN_COOKIE "XXL_JOB_LOGIN_IDENTITY"

//  <xadmin>/<path> (path: what follows the prefix and its '/')
void xxl_http_xxladmin (xxl_http_t *self, answer_t *answer, struct MHD_Connection *conn,
                        const char *method, const char *path, request_ctx_t *ctx);

//  xxl_http_auth.c

//  The credentials frame (xxl_api_users.c) of a request into out
void xxl_http_credentials (struct MHD_Connection *conn, bool change, char *out,
                           size_t outlen);
//  The credentials frame of a request to XXL-JOB's endpoints: a bearer
//  token (unless session_only: logout ends the cookie's session whatever
//  else is sent), else the XXL_HTTP_XXLADMIN_COOKIE session's, never asked
//  for a CSRF token (xxl_http_xxladmin.c judges the request's origin
//  instead)
void xxl_http_credentials_xxladmin (struct MHD_Connection *conn, bool session_only, char *out,
                                    size_t outlen);
//  The Set-Cookie of session sid named name on path into answer, as
//  xxl_http_session_cookie's
void xxl_http_named_cookie (xxl_http_t *self, answer_t *answer, const char *name,
                            const char *path, const char *sid, bool remember);
//  The Set-Cookie of session sid into answer, with a Max-Age of
//  remember_s when remember (else a cookie of the browser's session);
//  NULL: the one that ends it
void xxl_http_session_cookie (xxl_http_t *self, answer_t *answer, const char *sid,
                              bool remember);
//  POST login: body {"username", "password"}
void xxl_http_login (xxl_http_t *self, answer_t *answer, struct MHD_Connection *conn,
                     json_t *body);
//  A login of user with password (judged and limited as every password
//  check): true with the new session's id in sid and answer holding its
//  HTTP_SESSION reply (200); false with answer the refusal (401 wrong,
//  429 limited, ...)
bool xxl_http_login_user (xxl_http_t *self, answer_t *answer, struct MHD_Connection *conn,
                          const char *user, const char *password, bool remember,
                          char sid [XXL_SECRET_HEX]);
//  PUT me/password: body {"oldPassword", "newPassword"}, auth a session's
void xxl_http_password (xxl_http_t *self, answer_t *answer, struct MHD_Connection *conn,
                        const char *auth, json_t *body);

//  xxl_http_call.c

//  One api request (type, fields: an object) to the engine with
//  credentials auth; the reply's message into text, its content as JSON
//  into *content (NULL when none).  Returns the reply's code (504 when
//  the engine does not answer in time, 503 when the server stops first).
int xxl_http_call (xxl_http_t *self, const char *auth, const char *type, json_t *fields,
                   json_t **content, char *text, size_t textlen);
//  xxl_http_call, and its answer: status ok with the content (an empty
//  object when none), else the code's status with its text
void xxl_http_forward (xxl_http_t *self, answer_t *answer, const char *auth,
                       const char *type, json_t *fields, int ok);

//  xxl_http_answer.c

//  A JSON answer of value (taken), as status
void xxl_http_answer_json (answer_t *answer, int status, json_t *value);
//  {"error": text} (made UTF-8), as status
void xxl_http_error (answer_t *answer, int status, const char *text);
void xxl_http_errorf (answer_t *answer, int status, const char *format, ...)
    __attribute__ ((format (printf, 3, 4)));

#endif
