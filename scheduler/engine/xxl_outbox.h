/*  xxl_outbox.h -- what leaves the actor after a turn's commit.

    Owns the turn's outgoing messages: clients' replies (and, for a client
    whose connection's queue is full, its backlog), agents' messages, and
    what a failed commit means for each.  Every module queues through it;
    nothing is sent before the turn's commit, except replies to reads and
    to REGISTER, which go whatever the commit.
    MUST: be the only sender on the api, agents and http sockets after
    start.  MUST NOT: read the store.
    Called by: every engine module (queue, reply), the actor (flush).
*/

#ifndef XXL_OUTBOX_H_INCLUDED
#define XXL_OUTBOX_H_INCLUDED

#include "xxl_engine_base.h"


//  Replies to one client that its connection's queue had no room for,
//  oldest first (sent before any newer reply to it)
typedef struct {
    zlistx_t *msgs;                     //  zmsg_t * [return address][reply]
    size_t bytes;
} backlog_t;

typedef struct {
    zlistx_t *api_out;                  //  zmsg_t * to send after commit
    size_t api_out_bytes;               //  in api_out and api_reads
    zlistx_t *api_reads;                //  replies to reads: sent whatever the commit
    char *commit_logged;                //  the last commit failure logged, and when
    int64_t commit_logged_at;
    uint64_t commit_suppressed;
    zlistx_t *agents_out;
    zlistx_t *agents_always;            //  replies to REGISTER: sent whatever the commit
    ratelog_t log_api_send;             //  replies a client's connection refused
    zhashx_t *backlogs;                 //  client return address (hex) → backlog_t
    size_t backlog_bytes;               //  in all backlogs
    ratelog_t log_agent_send;           //  messages an agent's connection refused
    int64_t sweep_at;                   //  monotonic ms: look for rows nothing tracks
                                        //  (after a failed commit; 0: none due)
} outbox_t;

//  xxl_outbox.c
void engine_queue (server_t *self, zlistx_t *outbox, const void *rid, size_t rid_size);
void engine_queue_agent_to (server_t *self, const void *rid, size_t rid_size,
                            uint64_t pending_id, bool always);
void engine_queue_agent (server_t *self, const void *rid, size_t rid_size,
                         uint64_t pending_id);
void engine_reply (server_t *self, request_t *request, int code, const char *msg);
void engine_reply_begin (server_t *self, request_t *request);
void engine_reply_end (server_t *self, request_t *request);
void engine_reply_id (server_t *self, request_t *request, int64_t id);
void engine_agent_out (server_t *self, zmsg_t *msg);
void engine_api_send (server_t *self, zmsg_t *msg);
void engine_backlog_destroy (void **item);
void engine_agent_out_owned (server_t *self, uint64_t tag, const void *rid, size_t rid_size,
                             void **data_p, size_t size);
void engine_commit_failed (server_t *self);
void engine_agents_dropped (server_t *self);
size_t engine_sweep_untracked (server_t *self);
void engine_flush (server_t *self);


#endif
