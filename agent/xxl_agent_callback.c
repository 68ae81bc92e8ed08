/*  xxl_agent_callback.c -- the agent's results, from the executor to a
    scheduler's acknowledgement.

    Results taken from the executor are spooled (xxl_spool.h), done in the
    journal, then wait in an ordered queue; a CALLBACK batch goes to the
    scheduler the oldest waiting result's RUN came from (its origin, while
    that link is up; else the preferred one, else the first up) and takes,
    in order, the waiting results bound for that scheduler: each scheduler
    sharing a store writes the results of the rows it sent, never waiting
    for another's row locks.  A result with no origin (from the spool after
    a restart, or back from a batch that was refused or not acknowledged)
    goes to any.  Up to XXL_CALLBACK_INFLIGHT batches may be unacknowledged at
    once: a batch goes whenever none is in flight, and another one as soon
    as XXL_CALLBACK_EAGER results wait.  An acked batch's results leave the
    spool; a refused one, or one without an ack within the timeout (then
    with every other batch on that scheduler, which goes out of favour),
    goes back to the head of the queue and is sent again, possibly twice to
    the scheduler, where a repeated callback is a no-op.

    Owns agent_t's waiting queue, its batches in flight and the refusal
    backoff.  A result MUST be in the spool before it is queued, and
    leaves the spool only when a scheduler acknowledged its batch.  Sends
    through xxl_agent_link.h; called by xxl_agent.c only.
*/

#include "xxl_agent_callback.h"
#include "xxl_agent_link.h"

#include <inttypes.h>

//  Frees every result of a list and empties it
void
xxl_agent_callbacks_free (callbacks_t *list)
{
    while (list->head) {
        callback_t *callback = list->head;
        list->head = callback->next;
        free (callback->result.msg);
        free (callback);
    }
    list->tail = NULL;
    list->count = 0;
}

//  Appends a result to a list
static void
s_callbacks_append (callbacks_t *list, callback_t *callback)
{
    assert (!callback->next);
    if (list->tail)
        list->tail->next = callback;
    else
        list->head = callback;
    list->tail = callback;
    list->count++;
}

//  Moves every result of from to the head of to, keeping from's order
static void
s_callbacks_prepend (callbacks_t *to, callbacks_t *from)
{
    if (!from->head)
        return;
    from->tail->next = to->head;
    if (!to->head)
        to->tail = from->tail;
    to->head = from->head;
    to->count += from->count;
    from->head = from->tail = NULL;
    from->count = 0;
}

//  Results held in total: waiting and in flight
size_t
xxl_agent_callbacks_count (agent_t *self)
{
    size_t count = self->waiting.count;
    for (size_t i = 0; i < XXL_CALLBACK_INFLIGHT; i++)
        count += self->batches [i].items.count;
    return count;
}

//  Puts a batch's results back at the head of the waiting queue, to be
//  sent again; frees the slot.  Their scheduler did not take them: they may
//  go to any
static void
s_batch_return (agent_t *self, batch_t *batch)
{
    for (callback_t *callback = batch->items.head; callback; callback = callback->next)
        callback->origin = self->link_count;
    s_callbacks_prepend (&self->waiting, &batch->items);
    batch->id = 0;
}

//  The link a result goes to: the one its RUN came on while it is up, else
//  the preferred one if up, else the first up; link_count when none is
static size_t
s_link_for (agent_t *self, const callback_t *callback)
{
    if (callback->origin < self->link_count && self->links [callback->origin].up)
        return callback->origin;
    for (size_t i = 0; i < self->link_count; i++) {
        size_t index = (self->preferred + i) % self->link_count;
        if (self->links [index].up)
            return index;
    }
    return self->link_count;
}

//  Returns every batch in flight on link, the newest first, so that the
//  oldest results end up first in the waiting queue
static void
s_batches_return_link (agent_t *self, size_t link)
{
    while (true) {
        batch_t *newest = NULL;
        for (size_t i = 0; i < XXL_CALLBACK_INFLIGHT; i++) {
            batch_t *batch = &self->batches [i];
            if (batch->id && batch->link == link && (!newest || batch->id > newest->id))
                newest = batch;
        }
        if (!newest)
            return;
        s_batch_return (self, newest);
    }
}

//  Sends CALLBACK batches from the head of the waiting queue while the
//  flow-control rule allows (see the head of this file) and a scheduler is
//  up; a batch that cannot be sent goes back to the queue
void
xxl_agent_callbacks_send (agent_t *self)
{
    if (zclock_mono () < self->callback_after)
        return;                         //  (backing off after a refusal)
    while (self->waiting.count) {
        batch_t *slot = NULL;
        size_t in_flight = 0;
        for (size_t i = 0; i < XXL_CALLBACK_INFLIGHT; i++) {
            if (self->batches [i].id)
                in_flight++;
            else
            if (!slot)
                slot = &self->batches [i];
        }
        if (!slot || (in_flight && self->waiting.count < XXL_CALLBACK_EAGER))
            return;
        //  The oldest result's link; the batch takes the waiting results
        //  bound for it, in order (each scheduler gets the results of the
        //  RUNs it sent: their rows are its own, written without waiting
        //  for another's locks); the others keep their place
        size_t chosen = s_link_for (self, self->waiting.head);
        if (chosen == self->link_count)
            return;                     //  no scheduler up: results wait
        uint64_t id = ++self->next_id;
        xxl_agent_request (self, "CALLBACK", id);
        xxl_enc_key (self->enc, "items");
        xxl_enc_array_begin (self->enc);
        size_t bytes = 0;
        callback_t *prev = NULL, *callback = self->waiting.head;
        while (callback && slot->items.count < XXL_CALLBACK_BATCH
           &&  bytes < XXL_CALLBACK_BYTES) {
            if (s_link_for (self, callback) != chosen) {
                prev = callback;
                callback = callback->next;
                continue;
            }
            callback_t *next = callback->next;
            if (prev)
                prev->next = next;
            else
                self->waiting.head = next;
            if (self->waiting.tail == callback)
                self->waiting.tail = prev;
            self->waiting.count--;
            callback->next = NULL;
            s_callbacks_append (&slot->items, callback);
            bytes += 64 + (callback->result.msg? strlen (callback->result.msg): 0);
            xxl_enc_map_begin (self->enc);
            xxl_enc_kint (self->enc, "logId", callback->result.log_id);
            xxl_enc_kint (self->enc, "logDateTime", callback->result.log_date_time);
            xxl_enc_kint (self->enc, "handleCode", callback->result.code);
            xxl_enc_kstr (self->enc, "handleMsg", callback->result.msg);
            //  When its handler started, on the receiving scheduler's clock
            //  as far as we know it (docs/protocol.md, CALLBACK)
            if (callback->result.start_time > 0)
                xxl_enc_kint (self->enc, "startTime", callback->result.start_time
                                                     + self->links [chosen].wall_offset);
            xxl_enc_map_end (self->enc);
            callback = next;
        }
        xxl_enc_array_end (self->enc);
        if (xxl_agent_send (self, &self->links [chosen])) {
            //  Cannot go now (the link is down, or its queue full): sent
            //  again once a REGISTER on some link is answered
            self->links [chosen].up = false;
            s_batch_return (self, slot);
            return;
        }
        slot->id = id;
        slot->link = chosen;
        slot->deadline = zclock_mono () + self->config.callback_timeout_ms;
    }
}

//  The answer to a CALLBACK: on success its results leave the spool (one
//  write for the batch), else they go back to be sent again.  An id that is
//  not in flight (a late answer to a batch already sent again) is ignored.
void
xxl_agent_callbacks_acked (agent_t *self, uint64_t id, int code, const char *msg)
{
    batch_t *batch = NULL;
    for (size_t i = 0; i < XXL_CALLBACK_INFLIGHT && !batch; i++)
        if (id && self->batches [i].id == id)
            batch = &self->batches [i];
    if (!batch)
        return;
    if (code == XXL_OK) {
        self->callback_backoff = 0;
        self->callback_after = 0;
        if (self->spool) {
            int64_t log_ids [512];
            size_t count = 0;
            for (callback_t *callback = batch->items.head; callback; callback = callback->next) {
                log_ids [count++] = callback->result.log_id;
                if (count == sizeof log_ids / sizeof log_ids [0] || !callback->next) {
                    xxl_spool_ack_batch (self->spool, log_ids, count);
                    count = 0;
                }
            }
        }
        xxl_agent_callbacks_free (&batch->items);
        batch->id = 0;
    }
    else {
        //  Refused: sent again after a backoff that doubles from
        //  XXL_REFUSED_BACKOFF up to the beat while refusals go on.  401:
        //  the connection is no longer registered (our address registered
        //  on another connection since): registered again at once, and
        //  the link takes no CALLBACK until that is answered.
        link_t *link = &self->links [batch->link];
        s_batch_return (self, batch);
        int64_t now = zclock_mono ();
        int64_t beat = (int64_t) self->config.beat_s * 1000;
        self->callback_backoff = self->callback_backoff? self->callback_backoff * 2
                                                       : XXL_REFUSED_BACKOFF;
        if (self->callback_backoff > beat)
            self->callback_backoff = beat > XXL_REFUSED_BACKOFF? beat: XXL_REFUSED_BACKOFF;
        self->callback_after = now + self->callback_backoff;
        if (code == XXL_UNAUTHORIZED) {
            link->up = false;
            if (!link->register_id)
                xxl_agent_register (self, link, 0);
        }
        self->refused++;
        if (!self->refused_logged || now - self->refused_logged >= XXL_REFUSED_LOG) {
            zsys_warning ("agent: callback batch refused by %s (%d %s); will retry in %" PRId64
                          " ms (%zu refusal(s) since the last line)", link->endpoint, code,
                          msg? msg: "", self->callback_backoff, self->refused);
            self->refused = 0;
            self->refused_logged = now;
        }
    }
}

//  A batch without an ack by its deadline: it and every other batch on its
//  scheduler go back to the queue, and the next scheduler is preferred
void
xxl_agent_callbacks_check (agent_t *self)
{
    int64_t now = zclock_mono ();
    for (size_t i = 0; i < XXL_CALLBACK_INFLIGHT; i++) {
        batch_t *batch = &self->batches [i];
        if (batch->id && now >= batch->deadline) {
            size_t link = batch->link;
            zsys_warning ("agent: no ack from %s for %zu results; trying again",
                          self->links [link].endpoint, batch->items.count);
            s_batches_return_link (self, link);
            self->preferred = (link + 1) % self->link_count;
        }
    }
}

//  Queues a result for delivery (the spool already holds it)
void
xxl_agent_callbacks_queue (agent_t *self, const xxl_result_t *result, bool copy)
{
    callback_t *callback = (callback_t *) zmalloc (sizeof (callback_t));
    callback->result = *result;
    if (copy)
        callback->result.msg = result->msg? strdup (result->msg): NULL;
    callback->origin = self->link_count;
    if (self->origins) {
        uintptr_t link = (uintptr_t) xxl_imap_get (self->origins, result->log_id);
        if (link) {
            callback->origin = (size_t) link - 1;
            xxl_imap_del (self->origins, result->log_id);
        }
    }
    s_callbacks_append (&self->waiting, callback);
}

//  Takes finished runs from the executor: spooled (one fsync for the
//  batch) before anything is sent, so an agent crash loses none; then
//  done in the journal (one write), so a restart does not report them lost
void
xxl_agent_callbacks_take (agent_t *self)
{
    xxl_result_t batch [XXL_TAKE_BATCH];
    int64_t log_ids [XXL_TAKE_BATCH];
    size_t count;
    while ((count = xxl_executor_take_many (self->executor, batch, XXL_TAKE_BATCH)) > 0) {
        if (xxl_spool_add_batch (self->spool, batch, count))
            zsys_error ("agent: cannot write %zu result(s) to the spool; they are kept"
                        " in memory only", count);
        else {
            for (size_t i = 0; i < count; i++)
                log_ids [i] = batch [i].log_id;
            xxl_journal_done (self->journal, log_ids, count);
            xxl_journal_flush (self->journal);
        }
        //  (the last result's code, told in REGISTER: /metrics)
        self->last_code = batch [count - 1].code;
        for (size_t i = 0; i < count; i++)
            xxl_agent_callbacks_queue (self, &batch [i], false);
    }
}

//  The batches in flight on link go again at the next check (elsewhere
//  if another scheduler is up): it lost its connection or was replaced
void
xxl_agent_callbacks_resend_link (agent_t *self, link_t *link)
{
    size_t index = (size_t) (link - self->links);
    assert (index < self->link_count);
    for (size_t i = 0; i < XXL_CALLBACK_INFLIGHT; i++)
        if (self->batches [i].id && self->batches [i].link == index)
            self->batches [i].deadline = 0;
}

//  The loop's wake (zclock_mono ms) brought forward for the callbacks:
//  the first deadline of a batch in flight, each second while results
//  wait for a scheduler, the end of a refusal's backoff
int64_t
xxl_agent_callbacks_wake (agent_t *self, int64_t now, int64_t wake)
{
    for (size_t i = 0; i < XXL_CALLBACK_INFLIGHT; i++)
        if (self->batches [i].id && self->batches [i].deadline < wake)
            wake = self->batches [i].deadline;
    if (xxl_agent_callbacks_count (self) && now + 1000 < wake)
        wake = now + 1000;
    if (self->waiting.count && self->callback_after > now && self->callback_after < wake)
        wake = self->callback_after;
    return wake;
}

//  Frees every result held, waiting or in flight (they stay in the spool)
void
xxl_agent_callbacks_destroy (agent_t *self)
{
    xxl_agent_callbacks_free (&self->waiting);
    for (size_t i = 0; i < XXL_CALLBACK_INFLIGHT; i++)
        xxl_agent_callbacks_free (&self->batches [i].items);
}
