/*  xxl_agent_callback.h -- the agent's results, from the executor to a
    scheduler's acknowledgement.

    Part of the agent actor (xxl_agent_int.h).  Takes finished runs from
    the executor into the spool and the journal, queues them, and sends
    them in CALLBACK batches with flow control (a few batches in flight,
    a backoff after refusals, a deadline for each ack).  A result leaves
    the spool only once acknowledged; nothing is lost if the agent dies.
    Called by xxl_agent.c; sends through xxl_agent_link.h.
*/

#ifndef XXL_AGENT_CALLBACK_H_INCLUDED
#define XXL_AGENT_CALLBACK_H_INCLUDED

#include "xxl_agent_int.h"

//  Takes finished runs from the executor: spooled (one fsync for the
//  batch), done in the journal, then queued for delivery
void xxl_agent_callbacks_take (agent_t *self);

//  Queues a result the spool already holds (copy: its msg is copied, else
//  the queue takes it)
void xxl_agent_callbacks_queue (agent_t *self, const xxl_result_t *result, bool copy);

//  Sends CALLBACK batches from the head of the queue while flow control
//  allows and a scheduler is up
void xxl_agent_callbacks_send (agent_t *self);

//  The answer (code, msg) to CALLBACK id: acked results leave the spool;
//  refused ones go back to be sent again after a backoff.  An id not in
//  flight is ignored.
void xxl_agent_callbacks_acked (agent_t *self, uint64_t id, int code, const char *msg);

//  Batches past their deadline go back to the queue, with every other
//  batch on their scheduler, and the next scheduler is preferred
void xxl_agent_callbacks_check (agent_t *self);

//  Batches in flight on link go again at the next check
void xxl_agent_callbacks_resend_link (agent_t *self, link_t *link);

//  Results held, waiting and in flight
size_t xxl_agent_callbacks_count (agent_t *self);

//  wake brought forward to the callbacks' next deadline (zclock_mono ms)
int64_t xxl_agent_callbacks_wake (agent_t *self, int64_t now, int64_t wake);

//  Frees a list of results
void xxl_agent_callbacks_free (callbacks_t *list);

//  Frees every result held, waiting or in flight
void xxl_agent_callbacks_destroy (agent_t *self);

#endif
