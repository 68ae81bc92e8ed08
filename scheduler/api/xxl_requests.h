/*  xxl_requests.h -- the client api as the actor sees it.

    Owns whether the request in hand is a read (its reply then goes
    whatever the commit) and the running LOG_CLEARs.  Judges every request
    against its command's fields (xxl_commands.h) and its sender's access
    (access/) before its handler runs; records audited ones (audit/).
    MUST: answer every request it takes, once.  MUST NOT: be called by
    runs, the planner, the lease or the services, except for REPORT and
    LOG_CLEAR's turns (engine_report_*, engine_log_clear_*).
    Called by: the actor (engine_handle_api, engine_handle_http).
*/

#ifndef XXL_REQUESTS_H_INCLUDED
#define XXL_REQUESTS_H_INCLUDED

#include "xxl_engine_base.h"

typedef struct {
    zlistx_t *clears;                   //  LOG_CLEARs deleting a batch per turn (xxl_api_log.c)
} api_state_t;

void engine_handle_api (server_t *self, zmsg_t *zmsg);
//  Judges and handles a decoded api request from who (the api socket's or
//  the HTTP side's), replying to the return address rid; the caller keeps
//  msg and rid (xxl_api.c)
void engine_api_request (server_t *self, zframe_t *rid, xxl_msg_t *msg, const xxl_who_t *who);
//  A request from the HTTP server's threads (xxl_api_users.c)
void engine_handle_http (server_t *self, zmsg_t *zmsg);


#endif
