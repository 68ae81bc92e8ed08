/*  xxl_access.h -- who sent a message, and what they may do.

    Owns the key of the message being read (CURVE's User-Id), the count of
    messages refused for their key, the socket the api message in hand came
    on, and the limits on the log lines a peer can provoke by what it sends.
    engine_receive takes a message apart, decodes it, and answers (through
    the caller's `answer`) what cannot be decoded or is not let in.
    MUST: judge every message by its connection's key, looked up anew for
    each (a key removed from the folder stops counting on open
    connections).  MUST NOT: touch runs, plans or leases.
    Called by: the actor (keys), the api (receive, permit), runs (receive,
    may_register), the services (keys refresh).
*/

#ifndef XXL_ACCESS_H_INCLUDED
#define XXL_ACCESS_H_INCLUDED

#include "xxl_engine_base.h"

typedef struct {
    int api_fd;                         //  the socket of the api message in hand (-1)
    char user_id [48];                  //  the key (Z85) of the message being read
    char peer_address [64];             //  its peer's IP address, read only when an
                                        //  access token is set (for its refusal's
                                        //  log line); "" when unknown
    int64_t keys_refused;               //  messages refused since the last log line
    int64_t keys_logged;                //  monotonic ms of that line
    ratelog_t log_bad_frame;            //  undecodable frames
    ratelog_t log_frames;               //  messages of the wrong number of frames
    ratelog_t log_token;                //  requests with a wrong access token
} access_t;

//  Queues the encoder's message to the return address rid
typedef void (engine_answer_fn) (server_t *self, zframe_t *rid);

//  Takes a ROUTER message apart into its routing id and one decoded
//  frame (api: from the api socket, its routing id made a return address;
//  else an agent's).  What cannot be decoded, or lacks the access token,
//  is answered through answer (when it had a readable id) or dropped with
//  a log line.  Returns the message (the caller destroys it and *rid_p),
//  or NULL.
xxl_msg_t *engine_receive (server_t *self, zmsg_t *zmsg, bool api, engine_answer_fn *answer,
                           zframe_t **rid_p, const xxl_who_t **who_p);

//  Who sent the message just read (engine_who: NULL when
//  CURVE is on and its key is no longer let in), the access token in
//  constant time (0 when it matches or none is set), whether a request's
//  key may send it (0, or -1 with the reason for a 403), whether a key may
//  register for an app (likewise), and the keys folder read again
const xxl_who_t *engine_who (server_t *self);
int engine_token_check (server_t *self, xxl_msg_t *msg);
int engine_permit (server_t *self, request_t *request, char *why, size_t whylen);
//  Whether who's reads are limited to its apps: a viewer or operator
//  whose key (user, token) lists apps.  An admin, and a key without apps,
//  read everything.
bool engine_reads_scoped (const xxl_who_t *who);
//  The groups a list may hold for who: false when its reads are not
//  scoped (every group; *ids NULL, *count 0); else true, with the ids of
//  its apps' groups, by id, in *ids (a new array, free(); never NULL: a
//  filter given it with *count 0, when its apps have no group, selects no
//  row) and their number in *count
bool engine_read_groups (server_t *self, const xxl_who_t *who, int64_t **ids, size_t *count);
//  The groups of who's apps, by id (each once; an app without a group
//  left out): how many, into *groups (free each with xxl_group_free,
//  then the array)
size_t engine_who_groups (server_t *self, const xxl_who_t *who, xxl_group_t **groups);
int engine_may_register (const xxl_who_t *who, const char *app, char *why, size_t whylen);
void engine_keys_refresh (server_t *self);

#endif
