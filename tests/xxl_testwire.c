/*  xxl_testwire.c -- raw-wire helpers the C tests share (see the header).
*/

#include "xxl_testwire.h"

#include <dirent.h>
#include <inttypes.h>

//  --------------------------------------------------------------------
//  A client's side

zsock_t *
xxl_tw_connect (int type, const char *endpoint, int rcvtimeo_ms, int sndtimeo_ms)
{
    zsock_t *sock = zsock_new (type);
    assert (sock);
    zsock_set_linger (sock, 0);
    zsock_set_rcvtimeo (sock, rcvtimeo_ms);
    zsock_set_sndtimeo (sock, sndtimeo_ms);
    zsock_connect (sock, "%s", endpoint);
    return sock;
}

int
xxl_tw_send (zsock_t *sock, xxl_enc_t *enc)
{
    size_t size;
    const void *data = xxl_enc_finish (enc, &size);
    return zmq_send (zsock_resolve (sock), data, size, 0);
}

//  Decodes a frame (NULL: none), dropping the reason of a refusal
static xxl_msg_t *
s_decode (zframe_t *frame)
{
    if (!frame)
        return NULL;
    char err [256];
    return xxl_msg_decode (zframe_data (frame), zframe_size (frame), NULL, err, sizeof err);
}

xxl_msg_t *
xxl_tw_recv (zsock_t *sock)
{
    while (true) {
        zframe_t *frame = zframe_recv (sock);
        xxl_msg_t *msg = s_decode (frame);
        zframe_destroy (&frame);
        const char *type = msg? xxl_msg_type (msg): NULL;
        if (!type || !streq (type, "BEAT"))
            return msg;
        xxl_msg_destroy (&msg);
    }
}

xxl_msg_t *
xxl_tw_recv_within (zsock_t *sock, int timeout_ms)
{
    int was = zsock_rcvtimeo (sock);
    zsock_set_rcvtimeo (sock, timeout_ms);
    xxl_msg_t *msg = xxl_tw_recv (sock);
    zsock_set_rcvtimeo (sock, was);
    return msg;
}

xxl_msg_t *
xxl_tw_exchange (zsock_t *sock, const void *data, size_t size)
{
    if (zmq_send (zsock_resolve (sock), data, size, 0) < 0)
        return NULL;
    return xxl_tw_recv (sock);
}

xxl_msg_t *
xxl_tw_call (zsock_t *sock, xxl_enc_t *enc)
{
    size_t size;
    const void *data = xxl_enc_finish (enc, &size);
    return xxl_tw_exchange (sock, data, size);
}

//  --------------------------------------------------------------------
//  A reply's fields

int
xxl_tw_code (xxl_msg_t *reply)
{
    const msgpack_object *code = reply? xxl_msg_get (xxl_msg_root (reply), "code"): NULL;
    return code && code->type == MSGPACK_OBJECT_POSITIVE_INTEGER? (int) code->via.u64: -1;
}

const char *
xxl_tw_text (xxl_msg_t *reply)
{
    const char *text = reply? xxl_msg_str (reply, NULL, "msg", 0, 4096, ""): NULL;
    return text? text: "";
}

const msgpack_object *
xxl_tw_content (xxl_msg_t *reply)
{
    return reply? xxl_msg_get (xxl_msg_root (reply), "content"): NULL;
}

int64_t
xxl_tw_content_id (xxl_msg_t *reply)
{
    const msgpack_object *content = xxl_tw_content (reply);
    return content? xxl_msg_int (reply, content, "id", 1, 1, INT64_MAX, 0): 0;
}

//  --------------------------------------------------------------------
//  Request bodies

void
xxl_tw_enc_register (xxl_enc_t *enc, const char *type, uint64_t id,
                     const char *app, const char *address)
{
    xxl_enc_request (enc, type, id);
    xxl_enc_kstr (enc, "registryGroup", "EXECUTOR");
    xxl_enc_kstr (enc, "registryKey", app);
    xxl_enc_kstr (enc, "registryValue", address);
}

void
xxl_tw_enc_callback (xxl_enc_t *enc, uint64_t id, int64_t log_id, int handle_code,
                     const char *handle_msg)
{
    xxl_enc_request (enc, "CALLBACK", id);
    xxl_enc_key (enc, "items");
    xxl_enc_array_begin (enc);
    xxl_enc_map_begin (enc);
    xxl_enc_kint (enc, "logId", log_id);
    xxl_enc_kint (enc, "logDateTime", 1);
    xxl_enc_kint (enc, "handleCode", handle_code);
    if (handle_msg)
        xxl_enc_kstr (enc, "handleMsg", handle_msg);
    xxl_enc_map_end (enc);
    xxl_enc_array_end (enc);
}

//  The logDateTime of log_id's RUNs: now at its first RUN, the same at
//  every later one, as a scheduler re-sends a run with its stored trigger
//  time (an agent takes a later logDateTime for another run of the id)
int64_t
xxl_tw_log_date_time (int64_t log_id)
{
    static zhashx_t *dates = NULL;
    if (!log_id)
        return zclock_time ();
    if (!dates) {
        dates = zhashx_new ();
        assert (dates);
        zhashx_set_destructor (dates, (zhashx_destructor_fn *) zstr_free);
    }
    char key [24];
    snprintf (key, sizeof key, "%" PRId64, log_id);
    char *date = (char *) zhashx_lookup (dates, key);
    if (!date) {
        date = zsys_sprintf ("%" PRId64, zclock_time ());
        zhashx_insert (dates, key, date);
    }
    return strtoll (date, NULL, 10);
}

//  A TriggerParam's fields; source NULL: a BEAN run
static void
s_enc_fields (xxl_enc_t *enc, int64_t job_id, int64_t log_id, const char *handler,
              const char *params, const char *source)
{
    xxl_enc_kint (enc, "jobId", job_id);
    xxl_enc_kstr (enc, "executorHandler", handler);
    xxl_enc_kstr (enc, "executorParams", params);
    xxl_enc_kstr (enc, "executorBlockStrategy", "SERIAL_EXECUTION");
    xxl_enc_kint (enc, "executorTimeout", 0);
    if (log_id)
        xxl_enc_kint (enc, "logId", log_id);
    xxl_enc_kint (enc, "logDateTime", xxl_tw_log_date_time (log_id));
    xxl_enc_kstr (enc, "glueType", source? "GLUE_SHELL": "BEAN");
    if (source)
        xxl_enc_kstr (enc, "glueSource", source);
    xxl_enc_kint (enc, "glueUpdatetime", source? 1: 0);
    xxl_enc_kint (enc, "broadcastIndex", 0);
    xxl_enc_kint (enc, "broadcastTotal", 1);
}

void
xxl_tw_enc_glue_fields (xxl_enc_t *enc, int64_t job_id, int64_t log_id, const char *source)
{
    assert (source);
    s_enc_fields (enc, job_id, log_id, "", "", source);
}

void
xxl_tw_enc_bean_fields (xxl_enc_t *enc, int64_t job_id, int64_t log_id,
                        const char *handler, const char *params)
{
    s_enc_fields (enc, job_id, log_id, handler, params, NULL);
}

//  --------------------------------------------------------------------
//  A fake scheduler

struct _xxl_tw_sched_t {
    zsock_t *router;
    char *endpoint;
    int64_t skew_ms;
    zframe_t *agent_rid;                //  the agent last heard from
    zlistx_t *called;                   //  "LOGID:CODE:HANDLEMSG"
    bool mute;                          //  answers nothing (xxl_tw_sched_mute)
};

xxl_tw_sched_t *
xxl_tw_sched_new (int64_t skew_ms)
{
    return xxl_tw_sched_new_opts (skew_ms, -1, -1, -1);
}

xxl_tw_sched_t *
xxl_tw_sched_new_opts (int64_t skew_ms, int sndhwm, int rcvhwm, int rcvbuf)
{
    zsock_t *router = zsock_new (ZMQ_ROUTER);
    if (!router)
        return NULL;
    //  (before the bind: a listener's connections take its options then)
    if (sndhwm >= 0)
        zsock_set_sndhwm (router, sndhwm);
    if (rcvhwm >= 0)
        zsock_set_rcvhwm (router, rcvhwm);
    if (rcvbuf >= 0)
        zsock_set_rcvbuf (router, rcvbuf);
    //  Port 0: the kernel's choice.  czmq's "*" hands out 49152 up in
    //  order, so a fake of a suite running beside this one could take the
    //  port of one that just ended, and its agent, reconnecting, come here
    if (zsock_bind (router, "tcp://127.0.0.1:0") < 0) {
        zsock_destroy (&router);
        return NULL;
    }
    xxl_tw_sched_t *self = (xxl_tw_sched_t *) zmalloc (sizeof (xxl_tw_sched_t));
    assert (self);
    self->router = router;
    self->endpoint = zsock_last_endpoint (router);
    self->skew_ms = skew_ms;
    self->called = zlistx_new ();
    zlistx_set_destructor (self->called, (zlistx_destructor_fn *) zstr_free);
    return self;
}

void
xxl_tw_sched_destroy (xxl_tw_sched_t **self_p)
{
    xxl_tw_sched_t *self = *self_p;
    if (!self)
        return;
    zstr_free (&self->endpoint);
    zframe_destroy (&self->agent_rid);
    zlistx_destroy (&self->called);
    zsock_destroy (&self->router);
    free (self);
    *self_p = NULL;
}

const char *
xxl_tw_sched_endpoint (xxl_tw_sched_t *self)
{
    return self->endpoint;
}

int64_t
xxl_tw_sched_now (xxl_tw_sched_t *self)
{
    return zclock_time () + self->skew_ms;
}

int
xxl_tw_sched_send (xxl_tw_sched_t *self, xxl_enc_t *enc)
{
    if (!self->agent_rid)
        return -1;
    size_t size;
    const void *data = xxl_enc_finish (enc, &size);
    zmsg_t *msg = zmsg_new ();
    zmsg_addmem (msg, zframe_data (self->agent_rid), zframe_size (self->agent_rid));
    zmsg_addmem (msg, data, size);
    return zmsg_send (&msg, self->router);
}

int
xxl_tw_sched_run (xxl_tw_sched_t *self, xxl_enc_t *enc, uint64_t id, int64_t log_id)
{
    xxl_enc_request (enc, "RUN", id);
    xxl_tw_enc_bean_fields (enc, 1, log_id, "demoJobHandler", "");
    return xxl_tw_sched_send (self, enc);
}

//  Records the items of a CALLBACK
static void
s_record_callback (xxl_tw_sched_t *self, xxl_msg_t *msg)
{
    size_t count = 0;
    const msgpack_object *items = xxl_msg_array (msg, NULL, "items", 1, 10000, &count);
    for (size_t i = 0; items && i < count; i++) {
        int64_t log_id = xxl_msg_int (msg, &items [i], "logId", 1, 1, INT64_MAX, 0);
        int64_t code = xxl_msg_int (msg, &items [i], "handleCode", 1, 1, 999, 0);
        const char *text = xxl_msg_str (msg, &items [i], "handleMsg", 0, 20000, "");
        zlistx_add_end (self->called, zsys_sprintf ("%" PRId64 ":%" PRId64 ":%s", log_id, code,
                                                    text? text: ""));
    }
}

xxl_msg_t *
xxl_tw_sched_wait (xxl_tw_sched_t *self, const char *type, uint64_t id, int timeout_ms)
{
    int64_t until = zclock_mono () + timeout_ms;
    zpoller_t *poller = zpoller_new (self->router, NULL);
    xxl_msg_t *found = NULL;
    while (!found && zclock_mono () < until) {
        if (!zpoller_wait (poller, (int) (until - zclock_mono ())))
            continue;
        zmsg_t *zmsg = zmsg_recv (self->router);
        if (!zmsg)
            break;
        zframe_t *rid = zmsg_pop (zmsg);
        zframe_t *body = zmsg_pop (zmsg);
        xxl_msg_t *msg = s_decode (body);
        zframe_destroy (&body);
        zmsg_destroy (&zmsg);
        if (!msg) {
            zframe_destroy (&rid);
            continue;
        }
        zframe_destroy (&self->agent_rid);
        self->agent_rid = rid;
        const char *t = xxl_msg_type (msg);
        if (streq (t, "CALLBACK"))
            s_record_callback (self, msg);
        if (!self->mute
        &&  (streq (t, "REGISTER") || streq (t, "UNREGISTER") || streq (t, "CALLBACK"))) {
            xxl_enc_t *enc = xxl_enc_new ();
            xxl_enc_reply (enc, xxl_msg_id (msg), XXL_OK, NULL);
            xxl_enc_key (enc, "content");
            xxl_enc_map_begin (enc);
            xxl_enc_kint (enc, "now", xxl_tw_sched_now (self));
            xxl_enc_map_end (enc);
            xxl_tw_sched_send (self, enc);
            xxl_enc_destroy (&enc);
        }
        if (streq (t, type) && (id == 0 || xxl_msg_id (msg) == id))
            found = msg;
        else
            xxl_msg_destroy (&msg);
    }
    zpoller_destroy (&poller);
    return found;
}

void
xxl_tw_sched_mute (xxl_tw_sched_t *self, bool mute)
{
    self->mute = mute;
}

void
xxl_tw_sched_serve (xxl_tw_sched_t *self, int ms)
{
    //  (no agent sends a NONE: it waits the whole time)
    xxl_msg_t *none = xxl_tw_sched_wait (self, "NONE", 0, ms);
    xxl_msg_destroy (&none);
}

zlistx_t *
xxl_tw_sched_called (xxl_tw_sched_t *self)
{
    return self->called;
}

const char *
xxl_tw_sched_callback (xxl_tw_sched_t *self, int64_t log_id)
{
    char prefix [32];
    snprintf (prefix, sizeof prefix, "%" PRId64 ":", log_id);
    size_t length = strlen (prefix);
    for (char *item = (char *) zlistx_first (self->called); item;
         item = (char *) zlistx_next (self->called))
        if (strncmp (item, prefix, length) == 0)
            return item + length;
    return NULL;
}

//  --------------------------------------------------------------------
//  Processes of a run

int
xxl_tw_marked (int64_t log_id)
{
    char suffix [32];
    snprintf (suffix, sizeof suffix, ".%" PRId64, log_id);
    int count = 0;
    DIR *dir = opendir ("/proc");
    struct dirent *entry;
    while (dir && (entry = readdir (dir))) {
        if (entry->d_name [0] < '1' || entry->d_name [0] > '9')
            continue;
        char path [300], env [65536];
        snprintf (path, sizeof path, "/proc/%s/environ", entry->d_name);
        FILE *file = fopen (path, "r");
        if (!file)
            continue;
        size_t len = fread (env, 1, sizeof env - 1, file);
        fclose (file);
        env [len] = 0;
        for (size_t at = 0; at < len; at += strlen (env + at) + 1)
            if (strncmp (env + at, "XXL_AGENT_RUN=", 14) == 0) {
                size_t n = strlen (env + at);
                if (n > strlen (suffix) && streq (env + at + n - strlen (suffix), suffix))
                    count++;
            }
    }
    if (dir)
        closedir (dir);
    return count;
}
