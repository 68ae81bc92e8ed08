/*  xxl_audit.h -- the audit of the client api's changes.

    Owns the audit rows written this turn and those of failed turns to
    write again (see xxl_audit.c for the rules).  A row is written in the
    turn's transaction: it commits with the change it records, or not at
    all, and is then written again with the code its client got.
    MUST: record each audited request once.  MUST NOT: call the api.
    Called by: the api (handled, forwarded, refusals), runs (a forwarded
    request's answer), the actor (begin, settle), the services (retention).
*/

#ifndef XXL_AUDIT_H_INCLUDED
#define XXL_AUDIT_H_INCLUDED

#include "xxl_engine_base.h"

struct _pending_t;

typedef struct {
    zlistx_t *audit_turn;               //  audit rows written this turn
    zlistx_t *audit_again;              //  those of failed turns, to write again
    ratelog_t log_audit_dropped;        //  audit rows of failed turns left out
} audit_t;

//  Records request (an audited command's: xxl_command_audited) as
//  answered `code` about id `target` (0: none), in the turn's transaction,
//  once: a later call for the same request does nothing.  Whoever answers
//  such a request without its handler (a refusal: 403) calls it.
void engine_audit (server_t *self, request_t *request, int code, int64_t target);
//  Records a forwarded request (pending->audit_type set) with the code
//  its client is answered
void engine_audit_answer (server_t *self, struct _pending_t *pending, int code);
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

//  After a handler: records the request when its command is audited and
//  it was answered (nothing yet when it was forwarded)
void engine_audit_handled (server_t *self, request_t *request);
//  A request forwarded to an agent (pending): recorded with its answer
void engine_audit_forwarded (request_t *request, struct _pending_t *pending);

#endif
