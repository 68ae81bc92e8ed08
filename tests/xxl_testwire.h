/*  xxl_testwire.h -- raw-wire helpers the C tests that speak to real
    daemons share: a client's socket, send-and-wait-reply, a reply's
    fields, the bodies of common requests, and a fake scheduler (a ROUTER
    an agent registers with).

    Messages are built and read with the codec (xxl/msg.h); a test that
    means to send malformed bytes sends them itself (zmq_send) or through
    xxl_tw_exchange, which sends whatever bytes it is given.

    None of these helpers checks anything (no XXL_CHECK: each test program
    keeps its own counts); each returns what came, or NULL / -1 / "" when
    nothing usable did, and leaves the judging to the caller.
*/

#ifndef XXL_TESTWIRE_H_INCLUDED
#define XXL_TESTWIRE_H_INCLUDED

#include <czmq.h>
#include "xxl/msg.h"

//  --------------------------------------------------------------------
//  A client's side

//  A new socket of type (ZMQ_DEALER, ZMQ_REQ, ...) connected to endpoint,
//  linger 0, with these receive and send timeouts in ms (-1: block, as
//  ZeroMQ does by default).  The connect's result is not checked: a bad
//  endpoint shows as replies that never come.
zsock_t *xxl_tw_connect (int type, const char *endpoint, int rcvtimeo_ms, int sndtimeo_ms);

//  Sends the encoder's message (xxl_enc_finish) as one frame; does not
//  wait for a reply.  Returns zmq_send's result (-1: not sent).
int xxl_tw_send (zsock_t *sock, xxl_enc_t *enc);

//  Receives one frame within the socket's receive timeout and decodes it.
//  Returns the message, or NULL on timeout or when the frame does not
//  decode (the reason is dropped).  A scheduler's BEAT (sent unasked to
//  every agent connection, its answer not awaited) is dropped and the
//  next frame read, each within the timeout: an agent's socket sees one
//  between a request and its reply.
xxl_msg_t *xxl_tw_recv (zsock_t *sock);

//  As xxl_tw_recv, waiting up to timeout_ms; the socket's receive timeout
//  is set back to what it was.
xxl_msg_t *xxl_tw_recv_within (zsock_t *sock, int timeout_ms);

//  Sends size bytes as one frame, as they are (malformed ones too), then
//  xxl_tw_recv.  NULL when the send failed or no decodable reply came.
xxl_msg_t *xxl_tw_exchange (zsock_t *sock, const void *data, size_t size);

//  Sends the encoder's message (xxl_enc_finish) and waits for the reply,
//  as xxl_tw_exchange.
xxl_msg_t *xxl_tw_call (zsock_t *sock, xxl_enc_t *enc);

//  --------------------------------------------------------------------
//  A reply's fields; reply may be NULL

//  `code` when it is a non-negative integer, else -1 (also for NULL)
int xxl_tw_code (xxl_msg_t *reply);
//  `msg`, or "" when absent, not a valid string, or reply is NULL; never
//  NULL.  Owned by reply.
const char *xxl_tw_text (xxl_msg_t *reply);
//  `content` (any type), or NULL
const msgpack_object *xxl_tw_content (xxl_msg_t *reply);
//  content's `id` (an integer >= 1), or 0
int64_t xxl_tw_content_id (xxl_msg_t *reply);

//  --------------------------------------------------------------------
//  Request bodies: each starts a new message in enc (xxl_enc_request), to
//  which the caller may add fields before it sends

//  type ("REGISTER" or "UNREGISTER") with registryGroup "EXECUTOR",
//  registryKey app, registryValue address
void xxl_tw_enc_register (xxl_enc_t *enc, const char *type, uint64_t id,
                          const char *app, const char *address);

//  A CALLBACK of one result: items [{logId, logDateTime 1, handleCode,
//  handleMsg (left out when NULL)}]; the items array is closed
void xxl_tw_enc_callback (xxl_enc_t *enc, uint64_t id, int64_t log_id, int handle_code,
                          const char *handle_msg);

//  Writes, into the map open in enc (a RUN's root, or an item of a batch's
//  `runs`), the TriggerParam fields of a GLUE_SHELL run of source:
//  jobId, executorHandler "", executorParams "", executorBlockStrategy
//  SERIAL_EXECUTION, executorTimeout 0, logId, logDateTime now,
//  glueType, glueSource, glueUpdatetime 1, broadcastIndex 0,
//  broadcastTotal 1
void xxl_tw_enc_glue_fields (xxl_enc_t *enc, int64_t job_id, int64_t log_id,
                             const char *source);

//  The same for a BEAN run of handler with params: glueType BEAN,
//  glueUpdatetime 0, no glueSource; log_id 0 leaves logId out
void xxl_tw_enc_bean_fields (xxl_enc_t *enc, int64_t job_id, int64_t log_id,
                             const char *handler, const char *params);

//  The logDateTime the two above give log_id's RUNs: now at its first,
//  the same at every later one (as a scheduler re-sends a run)
int64_t xxl_tw_log_date_time (int64_t log_id);

//  --------------------------------------------------------------------
//  A fake scheduler: a ROUTER on an ephemeral loopback port that a real
//  agent registers with.  While it waits it answers the agent's REGISTER,
//  UNREGISTER and CALLBACK with 200 and content {now: its clock}, and
//  records each CALLBACK item.  It talks to one agent: the last one it
//  heard from.

typedef struct _xxl_tw_sched_t xxl_tw_sched_t;

//  Binds tcp://127.0.0.1 on a port the kernel picks; its clock is
//  skew_ms ahead of this host's (zclock_time).  NULL when the bind fails.
xxl_tw_sched_t *xxl_tw_sched_new (int64_t skew_ms);
//  The same with the ROUTER's queues and buffer set (-1: ZeroMQ's
//  default): sndhwm, rcvhwm (ZMQ_SNDHWM/RCVHWM, messages; 0: none) and
//  rcvbuf (SO_RCVBUF, bytes), for a scheduler that stops reading
xxl_tw_sched_t *xxl_tw_sched_new_opts (int64_t skew_ms, int sndhwm, int rcvhwm, int rcvbuf);
void xxl_tw_sched_destroy (xxl_tw_sched_t **self_p);

//  The bound endpoint, for the agent's --scheduler (owned by self)
const char *xxl_tw_sched_endpoint (xxl_tw_sched_t *self);

//  Now on its clock: zclock_time () + skew_ms
int64_t xxl_tw_sched_now (xxl_tw_sched_t *self);

//  Sends the encoder's message to the agent last heard from; -1 when no
//  agent was heard from yet or the send failed
int xxl_tw_sched_send (xxl_tw_sched_t *self, xxl_enc_t *enc);

//  Sends the agent a RUN (id) of log_id: job 1's demoJobHandler, serial,
//  no timeout, no expireTime; as xxl_tw_sched_send
int xxl_tw_sched_run (xxl_tw_sched_t *self, xxl_enc_t *enc, uint64_t id, int64_t log_id);

//  Waits up to timeout_ms for a message of type from the agent (and, when
//  id > 0, with that id), answering and recording as above on the way;
//  returns it (the caller destroys it), or NULL.  Frames that do not
//  decode are dropped.
xxl_msg_t *xxl_tw_sched_wait (xxl_tw_sched_t *self, const char *type, uint64_t id,
                              int timeout_ms);

//  With mute, the waits that follow read and record but answer nothing (a
//  scheduler whose answers do not come) until it is set back to false
void xxl_tw_sched_mute (xxl_tw_sched_t *self, bool mute);
//  Serves the agent (answers, records) for ms, keeping nothing
void xxl_tw_sched_serve (xxl_tw_sched_t *self, int ms);

//  Every CALLBACK item recorded, in arrival order, as strings
//  "LOGID:CODE:HANDLEMSG" (CODE 0 when handleCode was not in 1..999,
//  HANDLEMSG "" when absent); owned by self
zlistx_t *xxl_tw_sched_called (xxl_tw_sched_t *self);

//  The first callback of log_id recorded, as "CODE:HANDLEMSG" (owned by
//  self), or NULL
const char *xxl_tw_sched_callback (xxl_tw_sched_t *self, int64_t log_id);

//  --------------------------------------------------------------------
//  Processes on this host whose environment holds XXL_AGENT_RUN=*.LOGID
//  (the agent marks each run's processes so): how many, from /proc
int xxl_tw_marked (int64_t log_id);

#endif
