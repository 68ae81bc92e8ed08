/*  xxl_agent_link.h -- the agent's links to its schedulers.

    Part of the agent actor (xxl_agent_int.h).  A link is one DEALER to
    one scheduler endpoint with a socket monitor; this part opens,
    replaces and closes them, sends on them (every message the agent
    sends starts here), registers on them, and reads them for the loop.
    It neither interprets requests nor resends CALLBACK batches: the
    caller does, when told a link lost its connection or was replaced.
    Called by xxl_agent.c and xxl_agent_callback.c; calls neither.
*/

#ifndef XXL_AGENT_LINK_H_INCLUDED
#define XXL_AGENT_LINK_H_INCLUDED

#include "xxl_agent_int.h"

//  Opens one link per endpoint of schedulers (comma-separated; blanks
//  skipped), each logged with a warning when it is plain text off this
//  host.  0, or -1 (logged; the links made so far are for
//  xxl_agent_links_close)
int xxl_agent_links_open (agent_t *self, const char *schedulers);

//  Closes every link and frees them
void xxl_agent_links_close (agent_t *self);

//  Starts a request of ours in the encoder (type, id), with the access
//  token; the caller adds its fields and sends it with xxl_agent_send
void xxl_agent_request (agent_t *self, const char *type, uint64_t id);

//  Starts the REPLY to request id, for the caller to add content to
void xxl_agent_reply_begin (agent_t *self, uint64_t id, int code, const char *msg);

//  Sends the encoder's message on a link; -1 when it cannot go now: the
//  link is down or closing (ZMQ_IMMEDIATE), or its queue is full
//  (xxl_transport: the scheduler has not read 100,000 of our messages).
//  A REGISTER or CALLBACK that cannot go is logged each time; its caller
//  sends it again (the next beat; the results stay in the spool).  A
//  REPLY is dropped, and the scheduler's wait for it ends as for a lost
//  connection: the first of a row is logged, and their count once a send
//  on the link works again.
int xxl_agent_send (agent_t *self, link_t *link);

//  Sends the REPLY to request id, with its code and msg (NULL: none)
void xxl_agent_reply (agent_t *self, link_t *link, uint64_t id, int code, const char *msg);

//  Sends REGISTER (remove 0: our handlers, runLease, runBatch; its id and
//  send times kept in the link for its answer) or UNREGISTER (remove 1)
void xxl_agent_register (agent_t *self, link_t *link, int remove);

//  The scheduler's clock offsets from its answer to our REGISTER (msg)
void xxl_agent_link_clock (link_t *link, xxl_msg_t *msg);

//  Reads the next message waiting on link's DEALER: 0 with *msg_p set
//  (the caller destroys it), 0 with *msg_p NULL when one was dropped
//  (logged), -1 when nothing waits
int xxl_agent_link_recv (agent_t *self, link_t *link, xxl_msg_t **msg_p);

//  True when a message waits unread on link's DEALER (ZMQ_EVENTS), which
//  counts as hearing from the link; the agent's poll checks every DEALER
//  again before it waits, so the check takes no wakeup from it
bool xxl_agent_link_waiting (link_t *link);

//  Handles the link's socket events (registers when a connection comes
//  up, marks it broken on a failed handshake or protocol error); true
//  when it lost its connection
bool xxl_agent_link_events (agent_t *self, link_t *link);

//  Makes a link's socket to endpoint with its monitor; 0, or -1 with why
//  set and nothing left open
int xxl_agent_link_open (agent_t *self, const char *endpoint, zsock_t **dealer_p,
                         void **monitor_p, char *why, size_t whylen);

//  Replaces a link's socket with a new one to the same endpoint; 0, or
//  -1 (logged) when no new socket can be made (the old one stays)
int xxl_agent_link_replace (agent_t *self, link_t *link);

//  Closes a link's socket and its monitor; both are NULL after
void xxl_agent_link_close (zsock_t **dealer_p, void **monitor_p);

#endif
