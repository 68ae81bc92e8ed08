/*  xxl_emu.c -- many light agents from one process, for the bench.

    usage: xxl_emu AGENTS_ENDPOINT APP COUNT BEAT_S READY_FILE

    Speaks the agent protocol (docs/protocol.md, Agent protocol: msgpack
    maps over a ZeroMQ DEALER each) as COUNT agents named emu-1 .. emu-COUNT
    of APP: each REGISTERs (runBatch 1000) at start and every BEAT_S
    seconds, the agents' beats spread evenly over the beat from the start
    (so any window of BEAT_S seconds after READY_FILE holds one beat of
    each agent), answers BEAT and IDLE_BEAT 200, takes
    every RUN (single and batch form) 200 and reports each run done at once
    with a CALLBACK (handleCode 200, handleMsg "emu"), answers LOG with an
    empty finished page and KILL "job thread is not running".  No handler
    runs: the bench measures the scheduler's cost per agent, not the
    agents'.

    When every agent's first REGISTER is answered 200 it writes READY_FILE
    ("registered_ms=N": from the first REGISTER sent to the last answer).
    On SIGTERM or SIGINT it prints one JSON line to stdout: agents,
    registered, register_ms, registers (sent), beats (answered), runs
    (taken), callbacks_acked, callbacks_refused, and exits 0.

    One thread, one zmq_poll over all sockets; the ZeroMQ context gets
    COUNT + 64 sockets.  Not installed (bench only).
*/

#include "xxl/client.h"
#include "xxl/msg.h"

#include <czmq.h>
#include <inttypes.h>
#include <signal.h>
#include <sys/resource.h>

#define EMU_CALLBACK_MAX    10000       //  items in one CALLBACK (protocol limit)

typedef struct {
    zsock_t *sock;
    void *handle;
    char address [32];
    uint64_t register_id;               //  the REGISTER awaited first (0: answered)
    int64_t next_beat;                  //  monotonic ms
    xxl_enc_t *items;                   //  CALLBACK items waiting (map bodies)
    size_t item_count;
} emu_agent_t;

static volatile sig_atomic_t s_stop = 0;

static void
s_on_signal (int sig)
{
    (void) sig;
    s_stop = 1;
}

static uint64_t s_next_id = 1;

static void
s_send (emu_agent_t *agent, xxl_enc_t *enc)
{
    size_t size;
    const void *data = xxl_enc_finish (enc, &size);
    //  A full queue (the scheduler not reading) drops the message, as an
    //  agent's send to a full link does
    zmq_send (agent->handle, data, size, ZMQ_DONTWAIT);
}

static void
s_register (emu_agent_t *agent, xxl_enc_t *enc, const char *app, uint64_t *sent)
{
    uint64_t id = s_next_id++;
    xxl_enc_request (enc, "REGISTER", id);
    xxl_enc_kstr (enc, "registryGroup", "EXECUTOR");
    xxl_enc_kstr (enc, "registryKey", app);
    xxl_enc_kstr (enc, "registryValue", agent->address);
    xxl_enc_kstr (enc, "handlers", "noopJobHandler");
    xxl_enc_kint (enc, "runBatch", 1000);
    s_send (agent, enc);
    if (agent->register_id == UINT64_MAX)
        agent->register_id = id;        //  the first: timed
    (*sent)++;
}

//  Queues a CALLBACK item for a taken run (the TriggerParam map)
static void
s_run_done (emu_agent_t *agent, xxl_msg_t *msg, const msgpack_object *map)
{
    int64_t log_id = xxl_msg_int (msg, map, "logId", 1, 1, INT64_MAX, 0);
    int64_t date = xxl_msg_int (msg, map, "logDateTime", 0, 0, INT64_MAX, 0);
    if (!agent->items)
        agent->items = xxl_enc_new ();
    xxl_enc_map_begin (agent->items);
    xxl_enc_kint (agent->items, "logId", log_id);
    xxl_enc_kint (agent->items, "logDateTime", date);
    xxl_enc_kint (agent->items, "handleCode", 200);
    xxl_enc_kstr (agent->items, "handleMsg", "emu");
    xxl_enc_map_end (agent->items);
    agent->item_count++;
}

static void
s_callback (emu_agent_t *agent, xxl_enc_t *enc)
{
    if (!agent->item_count)
        return;
    size_t size;
    const void *items = xxl_enc_finish (agent->items, &size);
    xxl_enc_request (enc, "CALLBACK", s_next_id++);
    xxl_enc_key (enc, "items");
    xxl_enc_array_begin (enc);
    xxl_enc_raw (enc, items, size, (uint32_t) agent->item_count);
    xxl_enc_array_end (enc);
    s_send (agent, enc);
    xxl_enc_reset (agent->items);
    agent->item_count = 0;
}

int
main (int argc, char *argv [])
{
    if (argc != 6) {
        fprintf (stderr, "usage: xxl_emu AGENTS_ENDPOINT APP COUNT BEAT_S READY_FILE\n");
        return 2;
    }
    const char *endpoint = argv [1], *app = argv [2], *ready = argv [5];
    long count = atol (argv [3]), beat_s = atol (argv [4]);
    if (count < 1 || count > 100000 || beat_s < 1) {
        fprintf (stderr, "xxl_emu: COUNT 1-100000, BEAT_S >= 1\n");
        return 2;
    }
    //  A socket's fds (its connection, its mailbox) for each agent
    struct rlimit limit;
    if (getrlimit (RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max;
        setrlimit (RLIMIT_NOFILE, &limit);
    }
    zsys_set_max_sockets ((size_t) count + 64);
    zsys_set_io_threads (1);
    zsys_init ();
    zsys_set_logident ("xxl_emu");
    zsys_set_logstream (stderr);
    zsys_handler_set (NULL);
    signal (SIGTERM, s_on_signal);
    signal (SIGINT, s_on_signal);

    emu_agent_t *agents = (emu_agent_t *) calloc ((size_t) count, sizeof (emu_agent_t));
    zmq_pollitem_t *items = (zmq_pollitem_t *) calloc ((size_t) count, sizeof (zmq_pollitem_t));
    xxl_enc_t *enc = xxl_enc_new ();
    assert (agents && items && enc);
    for (long i = 0; i < count; i++) {
        emu_agent_t *agent = &agents [i];
        agent->sock = zsock_new (ZMQ_DEALER);
        if (!agent->sock || zsock_connect (agent->sock, "%s", endpoint)) {
            fprintf (stderr, "xxl_emu: cannot make agent %ld's socket to %s\n", i + 1, endpoint);
            return 2;
        }
        zsock_set_linger (agent->sock, 0);
        agent->handle = zsock_resolve (agent->sock);
        snprintf (agent->address, sizeof agent->address, "emu-%ld", i + 1);
        agent->register_id = UINT64_MAX;
        items [i] = (zmq_pollitem_t) { agent->handle, 0, ZMQ_POLLIN, 0 };
    }
    uint64_t registers = 0, beats = 0, runs = 0, acked = 0, refused = 0;
    long registered = 0;
    int64_t start = zclock_mono (), register_ms = -1;
    for (long i = 0; i < count; i++) {
        s_register (&agents [i], enc, app, &registers);
        agents [i].next_beat = start + beat_s * 1000 * (i + 1) / count;
    }
    int64_t next_beat_check = start + 100;
    while (!s_stop) {
        int rc = zmq_poll (items, (int) count, 100);
        if (rc < 0 && zmq_errno () == EINTR)
            continue;
        for (long i = 0; rc > 0 && i < count; i++) {
            if (!(items [i].revents & ZMQ_POLLIN))
                continue;
            emu_agent_t *agent = &agents [i];
            zmq_msg_t frame;
            zmq_msg_init (&frame);
            while (zmq_msg_recv (&frame, agent->handle, ZMQ_DONTWAIT) >= 0) {
                char err [128];
                xxl_msg_t *msg = xxl_msg_decode (zmq_msg_data (&frame), zmq_msg_size (&frame),
                                                 NULL, err, sizeof err);
                if (!msg)
                    continue;
                const char *type = xxl_msg_type (msg);
                uint64_t id = xxl_msg_id (msg);
                if (streq (type, "REPLY")) {
                    int code = xxl_reply_code (msg);
                    const msgpack_object *content = xxl_reply_content (msg);
                    if (id == agent->register_id && agent->register_id != UINT64_MAX) {
                        agent->register_id = 0;
                        if (code == XXL_OK && ++registered == count) {
                            register_ms = zclock_mono () - start;
                            FILE *file = fopen (ready, "w");
                            if (file) {
                                fprintf (file, "registered_ms=%" PRId64 "\n", register_ms);
                                fclose (file);
                            }
                        }
                    }
                    else
                    if (content == NULL && code == XXL_OK)
                        acked++;                //  a CALLBACK's (REGISTER's carry content)
                    else
                    if (code != XXL_OK)
                        refused++;
                }
                else
                if (streq (type, "BEAT") || streq (type, "IDLE_BEAT")) {
                    xxl_enc_reply (enc, id, XXL_OK, NULL);
                    s_send (agent, enc);
                    beats++;
                }
                else
                if (streq (type, "RUN")) {
                    const msgpack_object *batch = xxl_msg_get (xxl_msg_root (msg), "runs");
                    xxl_enc_reply (enc, id, XXL_OK, NULL);
                    if (batch && batch->type == MSGPACK_OBJECT_ARRAY) {
                        xxl_enc_key (enc, "content");
                        xxl_enc_array_begin (enc);
                        for (uint32_t k = 0; k < batch->via.array.size; k++) {
                            xxl_enc_map_begin (enc);
                            xxl_enc_kint (enc, "code", XXL_OK);
                            xxl_enc_kstr (enc, "msg", NULL);
                            xxl_enc_map_end (enc);
                        }
                        xxl_enc_array_end (enc);
                        s_send (agent, enc);
                        for (uint32_t k = 0; k < batch->via.array.size; k++) {
                            s_run_done (agent, msg, &batch->via.array.ptr [k]);
                            if (agent->item_count == EMU_CALLBACK_MAX)
                                s_callback (agent, enc);
                        }
                        runs += batch->via.array.size;
                    }
                    else {
                        s_send (agent, enc);
                        s_run_done (agent, msg, NULL);
                        runs++;
                    }
                }
                else
                if (streq (type, "LOG")) {
                    xxl_enc_reply (enc, id, XXL_OK, NULL);
                    xxl_enc_key (enc, "content");
                    xxl_enc_map_begin (enc);
                    xxl_enc_kint (enc, "fromLineNum", 1);
                    xxl_enc_kint (enc, "toLineNum", 0);
                    xxl_enc_kstr (enc, "logContent", "");
                    xxl_enc_kbool (enc, "isEnd", 1);
                    xxl_enc_map_end (enc);
                    s_send (agent, enc);
                }
                else
                if (streq (type, "KILL")) {
                    xxl_enc_reply (enc, id, XXL_FAILURE, "job thread is not running");
                    s_send (agent, enc);
                }
                xxl_msg_destroy (&msg);
            }
            zmq_msg_close (&frame);
            s_callback (agent, enc);
        }
        int64_t now = zclock_mono ();
        if (now >= next_beat_check) {
            for (long i = 0; i < count; i++)
                if (agents [i].next_beat <= now) {
                    s_register (&agents [i], enc, app, &registers);
                    agents [i].next_beat += beat_s * 1000;
                }
            next_beat_check = now + 100;
        }
    }
    printf ("{\"agents\": %ld, \"registered\": %ld, \"register_ms\": %" PRId64
            ", \"registers\": %" PRIu64 ", \"beats\": %" PRIu64 ", \"runs\": %" PRIu64
            ", \"callbacks_acked\": %" PRIu64 ", \"refused\": %" PRIu64 "}\n",
            count, registered, register_ms, registers, beats, runs, acked, refused);
    for (long i = 0; i < count; i++) {
        zsock_destroy (&agents [i].sock);
        xxl_enc_destroy (&agents [i].items);
    }
    free (agents);
    free (items);
    xxl_enc_destroy (&enc);
    return 0;
}
