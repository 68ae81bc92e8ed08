/*  xxl_agent_int.h -- the agent actor's state, private to its parts.

    The agent actor (xxl_agent.h) is three files sharing agent_t:
      - xxl_agent.c: the actor, its loop in named phases, the requests
        from schedulers (RUN, BEAT, IDLE_BEAT, KILL, LOG, replies), the
        run lease, the drain;
      - xxl_agent_link.c: the links to the schedulers (sockets, sending,
        REGISTER, reading);
      - xxl_agent_callback.c: results taken from the executor, spooled,
        and sent in CALLBACK batches until acknowledged.
    (xxl_agent_lost.c, the runs an earlier life lost, needs no agent_t.)
    Calls go one way: xxl_agent.c -> xxl_agent_callback.c ->
    xxl_agent_link.c.  Everything here is used by the actor's thread
    only.  Nothing outside these three includes this file.
*/

#ifndef XXL_AGENT_INT_H_INCLUDED
#define XXL_AGENT_INT_H_INCLUDED

#include "xxl_agent.h"
#include "xxl_executor.h"
#include "xxl_guard.h"
#include "xxl_handlers.h"
#include "xxl_imap.h"
#include "xxl_journal.h"
#include "xxl_logread.h"
#include "xxl_spool.h"
#include "xxl/msg.h"

#include <time.h>

#define XXL_CALLBACK_BATCH  5000            //  results in one CALLBACK at most
#define XXL_CALLBACK_BYTES  (1024 * 1024)   //  and about this many bytes
#define XXL_CALLBACK_INFLIGHT 4             //  unacknowledged batches at most
#define XXL_CALLBACK_EAGER  256             //  waiting results that send another
#define XXL_TAKE_BATCH      256             //  results taken (and spooled) at once
#define XXL_MAX_PARAM       (64 * 1024)     //  executorParams at most
#define XXL_CLOCK_RTT_MAX   1000            //  a REGISTER answered later says
                                            //  nothing of the scheduler's clock
#define XXL_HANDSHAKE_LOG   60000           //  ms between logs of failed handshakes
#define XXL_LINK_SILENCE    15000           //  ms without a message on a connected
                                            //  link before it is replaced (ms of
                                            //  the agent's own listening)
#define XXL_LOOP_STALL      1000            //  ms a turn may take beyond its
                                            //  poll's wait (to its deadline)
                                            //  before the loop stood still
#define XXL_REFUSED_BACKOFF 100             //  ms before the first retry of a
                                            //  refused CALLBACK, doubling to the beat
#define XXL_REFUSED_LOG     10000           //  ms between logs of refused CALLBACKs

typedef struct {
    char *endpoint;
    zsock_t *dealer;
    void *monitor;                      //  libzmq PAIR receiving socket events
    bool monitor_quiet;                 //  the poll's XXL_POLL_QUIET of monitor (false
                                        //  for a monitor not yet polled)
    bool up;                            //  answered our last REGISTER
    bool connected;                     //  a handshake succeeded, no disconnect since
    bool broken;                        //  a connection failed for good: replace
    bool broken_open;                   //  ... one that had been up (not a handshake)
    int64_t heard;                      //  last message on it, or its (re)start,
                                        //  moved on by the loop's stalls (mono ms)
    uint64_t register_id;               //  id of the REGISTER in flight
    int64_t register_sent;              //  mono ms, of the REGISTER in flight
                                        //  (moved on as heard)
    int64_t register_sent_boot;         //  the same on s_boot_ms's clock
    int64_t register_sent_real;         //  epoch ms, this host's wall clock
    int64_t clock_offset;               //  the scheduler's clock - our
                                        //  monotonic clock, ms (until a
                                        //  REGISTER reply said: our wall
                                        //  clock - our monotonic clock)
    int64_t wall_offset;                //  the scheduler's clock - our wall
                                        //  clock, ms (0 until a reply said)
    size_t handshakes_failed;           //  since the last one logged
    int64_t handshake_logged;           //  when (mono ms; 0: never)
    size_t replies_dropped;             //  since a send on it last worked
} link_t;

typedef struct _callback_t {
    xxl_result_t result;
    size_t origin;                      //  the link its RUN came on (link_count:
                                        //  any, e.g. a result from the spool)
    struct _callback_t *next;
} callback_t;

typedef struct {
    callback_t *head, *tail;
    size_t count;
} callbacks_t;                          //  a FIFO of results

typedef struct {
    uint64_t id;                        //  0: this slot is free
    size_t link;
    int64_t deadline;
    callbacks_t items;                  //  the results it carries
} batch_t;

typedef struct {
    xxl_agent_config_t config;
    zsock_t *pipe;
    bool pipe_quiet;                    //  the poll's XXL_POLL_QUIET of pipe
    link_t *links;
    size_t link_count;
    size_t preferred;                   //  link that takes callbacks with no origin
    xxl_imap_t *origins;                //  logId -> the link its RUN came on + 1,
                                        //  until its result is queued
    size_t run_link;                    //  the link of the RUN being handled
    xxl_handlers_t *handlers;
    xxl_executor_t *executor;
    xxl_spool_t *spool;                 //  results on disk until acknowledged
    xxl_journal_t *journal;             //  logIds accepted, across restarts
    xxl_guard_t *guard;                 //  kills our runs if we die
    size_t repeated;                    //  RUN items already accepted (re-sent)
    size_t busy_refused;                //  RUN items refused busy (this RUN)
    size_t other_run;                   //  RUN items refused: logId another run's (this RUN)
    xxl_enc_t *enc;
    zcert_t *cert;                      //  ours with the scheduler's key, or NULL
    char scheduler_key [41];            //  Z85 public key ("" without CURVE)
    callbacks_t waiting;                //  results not in flight, in finish order
    batch_t batches [XXL_CALLBACK_INFLIGHT];
    int64_t callback_after;             //  mono ms: no CALLBACK goes before
    int64_t callback_backoff;           //  ms, after a refusal (0: none)
    size_t refused;                     //  refused CALLBACKs not yet logged
    int64_t refused_logged;             //  when last logged (mono ms; 0: never)
    uint64_t next_id;
    int64_t turn_at;                    //  mono ms of the loop's last turn
    int64_t waited;                     //  ms its polls waited since, each
                                        //  up to its deadline
    int64_t next_beat;
    int64_t next_clean;
    int64_t reached;                    //  mono ms: when the latest REGISTER
                                        //  a scheduler answered was sent (the
                                        //  run lease counts from it)
    bool lease_out;                     //  the run lease ran out: runs were
                                        //  stopped, new ones are refused
    int last_code;                      //  the last finished run's (0: none yet)
    bool terminated;
    bool draining;                      //  stopping: new runs are refused
    char address [256];
    char *handlers_sent;                //  the handler names the latest
                                        //  REGISTER carried (owned)
    const char *sending;                //  type of the message in the encoder
    xxl_logread_mark_t log_marks [16];  //  where the latest LOG pages by line
                                        //  ended, a log each (xxl_logread.h)
} agent_t;

//  The agent's clock for durations that must go on while the host is
//  suspended (the run lease, RUNs' expiry): CLOCK_BOOTTIME, ms.  It never
//  steps; it stands still only while the host does not run at all (a VM
//  paused by its hypervisor: docs/design.md, "The partition model")
static inline int64_t
xxl_agent_boot_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_BOOTTIME, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#endif
