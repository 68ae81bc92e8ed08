/*  xxl_requests.h -- the client api as the actor sees it.

    Owns the running LOG_CLEARs (a batch of rows deleted per turn) and
    the REPORTs of keys whose reads are scoped waiting for their count.
    Judges every request against its command's fields (xxl_commands.h)
    and its sender's access (access/) before its handler runs, tells the
    outbox whether the request in hand is a read (its reply then goes
    whatever the commit), and records audited ones (audit/).
    MUST: answer every request it takes, once.  MUST NOT: be called by
    the modules below it.
    Called by: the actor (engine_handle_api, engine_handle_http, and
    LOG_CLEAR's turns: engine_log_clear_turn, _stop, _rollback).
*/

#ifndef XXL_REQUESTS_H_INCLUDED
#define XXL_REQUESTS_H_INCLUDED

#include "xxl_engine_base.h"
#include "xxl_first_admin.h"

typedef struct {
    zlistx_t *clears;                   //  LOG_CLEARs deleting a batch per turn (xxl_api_log.c)
    zlistx_t *reports;                  //  REPORTs of keys whose reads are scoped, waiting
                                        //  for the reporter's count (xxl_api_status.c)
    xxl_first_admin_t first_admin;      //  the first login's password file (xxl_api_users.c)
    int64_t first_admin_next;           //  monotonic ms: its next check
    bool first_admin_due;               //  a user changed: check after this turn's commit
} api_state_t;

//  The first login (xxl_api_users.c, xxl_first_admin.h): at start, with
//  HTTP on and http/initial_admin, user admin made when the store has no
//  user; after each turn's commit, the password file removed once admin
//  has a new password or is gone (checked after a user's change here, and
//  every XXL_FIRST_ADMIN_CHECK_MS for another scheduler's)
void engine_first_admin_start (server_t *self);
void engine_first_admin_check (server_t *self);

//  LOG_CLEAR's turns (xxl_api_log.c): a batch of rows deleted, the clears
//  answered 503 at a stop, or their counts rolled back with a failed turn
void engine_log_clear_turn (server_t *self);
void engine_log_clear_stop (server_t *self);
void engine_log_clear_rollback (server_t *self, const char *why);
//  The REPORTs of keys whose reads are scoped (xxl_api_status.c), as
//  engine_report_turn and _stop do the others': each turn (after
//  engine_report_turn) those a count covers are answered and those of
//  earlier turns asked for; at a stop, 503.  waiting: whether any waits.
void engine_scoped_report_turn (server_t *self);
void engine_scoped_report_stop (server_t *self);
bool engine_scoped_report_waiting (server_t *self);

void engine_handle_api (server_t *self, zmsg_t *zmsg);
//  Judges and handles a decoded api request from who (the api socket's or
//  the HTTP side's), replying to the return address rid; the caller keeps
//  msg and rid (xxl_api.c)
void engine_api_request (server_t *self, zframe_t *rid, xxl_msg_t *msg, const xxl_who_t *who);
//  A request from the HTTP server's threads (xxl_api_users.c)
void engine_handle_http (server_t *self, zmsg_t *zmsg);


#endif
