/*  xxl_requests.h -- the client api as the actor sees it: receiving a
    request, who sent it and what they may do, and the audit of changes.

    Owns the audit rows of the turn (and those of failed turns to write
    again), running LOG_CLEARs, the socket of the request in hand and
    whether it is a read, and the limits on peers' log lines.
    MUST: judge every request against its command's fields before its
    handler runs.  MUST NOT: be called by runs, planner, lease or
    services, except engine_audit_answer for a forwarded request.
    Called by: the actor (engine_handle_api, engine_handle_http).
*/

#ifndef XXL_REQUESTS_H_INCLUDED
#define XXL_REQUESTS_H_INCLUDED

#include "xxl_engine_base.h"

typedef struct {
    int api_fd;                         //  the socket of the api message in hand (-1)
    bool api_read;                      //  the api request in hand is a read
    ratelog_t log_bad_frame;            //  undecodable frames
    ratelog_t log_frames;               //  messages of the wrong number of frames
    ratelog_t log_token;                //  requests with a wrong access token
    zlistx_t *audit_turn;               //  audit rows written this turn (xxl_api_audit.c)
    zlistx_t *audit_again;              //  those of failed turns, to write again
    ratelog_t log_audit_dropped;        //  audit rows of failed turns left out
    zlistx_t *clears;                   //  LOG_CLEARs deleting a batch per turn (xxl_api_log.c)
    uint64_t ids [XXL_IDS_AHEAD];       //  random request ids drawn ahead
    size_t ids_left;
    char user_id [48];                  //  the key (Z85) of the message being read
    int64_t keys_refused;               //  messages refused since the last log line
    int64_t keys_logged;                //  monotonic ms of that line
} api_state_t;

//  xxl_api_audit.c: the audit of the client api's changes
//  Records request (an audited command's: xxl_command_audited) as
//  answered `code` about id `target` (0: none), in the turn's transaction,
//  once: a later call for the same request does nothing.  Whoever answers
//  such a request without its handler (a refusal: 403) calls it.
void engine_audit (server_t *self, request_t *request, int code, int64_t target);
//  Records a forwarded request (pending->audit_type set) with the code
//  its client is answered
void engine_audit_answer (server_t *self, pending_t *pending, int code);
//  At a turn's begin: writes again the rows of failed turns
void engine_audit_begin (server_t *self);
//  After a turn's commit: its rows are settled (committed true), or are to
//  be written again as its clients were answered (500, or the code of a
//  reply that stood)
void engine_audit_settle (server_t *self, bool committed);
void engine_audit_destroy (server_t *self);
//  Retention: deletes a batch of rows older than audit_retention_days;
//  how many went
int64_t engine_audit_retention (server_t *self);

//  xxl_api.c
xxl_msg_t *engine_receive (server_t *self, zmsg_t *zmsg, zlistx_t *outbox, const char *what,
                           zframe_t **rid_p, const xxl_who_t **who_p);

//  xxl_access.c: who sent the message just read (engine_who: NULL when
//  CURVE is on and its key is no longer let in), the access token in
//  constant time (0 when it matches or none is set), whether a request's
//  key may send it (0, or -1 with the reason for a 403), whether a key may
//  register for an app (likewise), and the keys folder read again
const xxl_who_t *engine_who (server_t *self);
int engine_token_check (server_t *self, xxl_msg_t *msg);
int engine_permit (server_t *self, request_t *request, char *why, size_t whylen);
int engine_may_register (const xxl_who_t *who, const char *app, char *why, size_t whylen);
void engine_keys_refresh (server_t *self);
//  The id of a new request to an agent: random (xxl_access.c)
uint64_t engine_request_id (server_t *self);
void engine_handle_api (server_t *self, zmsg_t *zmsg);
//  Judges and handles a decoded api request from who (the api socket's or
//  the HTTP side's), replying to the return address rid; the caller keeps
//  msg and rid (xxl_api.c)
void engine_api_request (server_t *self, zframe_t *rid, xxl_msg_t *msg, const xxl_who_t *who);
//  A request from the HTTP server's threads (xxl_api_users.c)
void engine_handle_http (server_t *self, zmsg_t *zmsg);


#endif
