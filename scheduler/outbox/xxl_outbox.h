/*  xxl_outbox.h -- clients' replies, sent after a turn's commit.

    Owns the turn's replies to clients (and, for a client whose
    connection's queue is full, its backlog), and what a failed commit
    makes of them (500).  Nothing is sent before the turn's commit, except
    replies to reads, which go whatever the commit.  (Agents' messages are
    runs' own: runs/xxl_dispatch.c.)
    MUST: be the only sender on the api and http sockets after start.
    MUST NOT: read the store, or call any engine module.
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
    bool api_read;                      //  replies queued now stand whatever the
                                        //  commit (the request in hand is a read)
    zlistx_t *api_out;                  //  zmsg_t * to send after commit
    size_t api_out_bytes;               //  in api_out and api_reads
    zlistx_t *api_reads;                //  replies to reads: sent whatever the commit
    ratelog_t log_api_send;             //  replies a client's connection refused
    zhashx_t *backlogs;                 //  client return address (hex) → backlog_t
    size_t backlog_bytes;               //  in all backlogs
} outbox_t;

//  Queues the encoder's message for rid on outbox (a client's list:
//  self->outbox.api_out; or runs' agents_out)
void engine_queue (server_t *self, zlistx_t *outbox, const void *rid, size_t rid_size);
//  Queues the encoder's message as a reply to the client at rid
void engine_queue_client (server_t *self, const void *rid, size_t rid_size);
//  The same, a reply that stands whatever the turn's commit (replies
//  queued after it do not, until engine_outbox_read says so)
void engine_queue_client_read (server_t *self, const void *rid, size_t rid_size);
//  Whether the replies queued from now stand whatever the commit (the
//  request in hand is a read, or a refusal); and whether they do
void engine_outbox_read (server_t *self, bool read);
bool engine_outbox_reading (server_t *self);
void engine_reply (server_t *self, request_t *request, int code, const char *msg);
void engine_reply_begin (server_t *self, request_t *request);
void engine_reply_end (server_t *self, request_t *request);
void engine_reply_id (server_t *self, request_t *request, int64_t id);
void engine_api_send (server_t *self, zmsg_t *msg);
void engine_backlog_destroy (void **item);
//  After a failed commit: the turn's replies to clients become 500 with text
void engine_outbox_failed (server_t *self, const char *text);
//  After the commit: the turn's replies to clients leave
void engine_outbox_flush (server_t *self);
//  Its state, made at the actor's start and freed at its stop
void engine_outbox_start (server_t *self);
void engine_outbox_stop (server_t *self);


#endif
