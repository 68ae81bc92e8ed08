/*  xxl_api.c -- the client api: receiving a request, its table, judging it.

    engine_receive takes a ROUTER message apart, answers what cannot be
    decoded or is not authorized, and hands a decoded message on.  The
    command's metadata (xxl_commands.c) says whether it only reads (its
    reply stands whatever the turn's commit) and how its fields are
    judged; engine_handle_api judges them before the handler the api
    table maps the `t` to (xxl_api.h lists the files by resource).
*/

#include "xxl_api.h"

int
api_judge (server_t *self, request_t *request, int after)
{
    char why [512];
    if (xxl_command_check (request->command, request->msg, after, why, sizeof why) == 0)
        return 0;
    engine_reply (self, request, XXL_BAD_REQUEST, why);
    return -1;
}

int64_t
api_int (request_t *request, const char *key)
{
    return xxl_command_int (request->command, request->msg, key);
}

bool
api_bool (request_t *request, const char *key)
{
    return xxl_command_bool (request->command, request->msg, key);
}

const char *
api_str (request_t *request, const char *key)
{
    return xxl_command_str (request->command, request->msg, key);
}

//  Checks a comma-separated address list from a request: at least one
//  address, each at most XXL_MSG_MAX_NAME bytes and free of control
//  characters.  Returns 0, or -1 with the reason latched in msg.
int
api_addresses_check (xxl_msg_t *msg, const char *field, const char *list)
{
    char **items;
    size_t count = engine_split_addresses (list, &items);
    int rc = 0;
    if (count == 0)
        rc = xxl_msg_fail (msg, "%s names no address", field);
    for (size_t i = 0; i < count && rc == 0; i++)
        if (strlen (items [i]) > XXL_MSG_MAX_NAME || engine_has_control (items [i]))
            rc = xxl_msg_fail (msg, "%s: address %zu is longer than %d bytes or holds control"
                               " characters", field, i + 1, XXL_MSG_MAX_NAME);
    engine_free_addresses (items, count);
    return rc;
}

//  Answers with the one row `select` (ending in "WHERE id = ?") finds for
//  the request's id field `key`; `what` names it in the not-found error
void
api_show_row (server_t *self, request_t *request, const char *key,
              int (*encode) (xxl_store_t *store, xxl_enc_t *enc, int64_t id), const char *what)
{
    int64_t id = api_int (request, key);
    engine_reply_begin (self, request);
    int rows = encode (self->store, self->enc, id);
    if (rows <= 0) {
        char text [64];
        snprintf (text, sizeof text, "%s %" PRId64 " not found", what, id);
        engine_reply (self, request, rows < 0? XXL_FAILURE: XXL_NOT_FOUND, text);
        return;
    }
    engine_reply_end (self, request);
}

//  `truncated`, and where to go on when it is true
void
api_encode_truncated (server_t *self, int truncated, int64_t next_offset)
{
    xxl_enc_kbool (self->enc, "truncated", truncated);
    if (truncated)
        xxl_enc_kint (self->enc, "nextOffset", next_offset);
}

//  Each command's handler, by its index in the command table: both from
//  xxl_commands.def (a command whose handler is missing does not build)
typedef void (api_fn_t) (server_t *self, request_t *request);

static api_fn_t *const s_api_table [XXL_CMD_COUNT] = {
#define XXL_COMMAND(name, fields, access, scope, flags, handler, ...) \
    [XXL_CMD_##name] = handler,
#define XXL_CTL_ONLY(cmd)
#include "xxl_commands.def"
#undef XXL_COMMAND
#undef XXL_CTL_ONLY
};


//  Answers a frame that could not be decoded, when it had a readable id
static void
s_reply_bad_frame (server_t *self, zlistx_t *outbox, zframe_t *rid, uint64_t id,
                   const char *reason)
{
    char text [300];
    engine_warn_limited (&self->log_bad_frame, "server: bad %s message (%s): %s",
                         outbox == self->agents_out? "agent": "api",
                         id? "answered 400": "no readable id, not answered",
                         xxl_printable (reason, text, sizeof text));
    if (id == 0)
        return;                         //  no readable id: nothing to answer to
    xxl_enc_reply (self->enc, id, XXL_BAD_REQUEST, reason);
    if (outbox == self->agents_out)
        engine_queue_agent (self, zframe_data (rid), zframe_size (rid), 0);
    else
        engine_queue (self, outbox, zframe_data (rid), zframe_size (rid));
}

//  Takes a ROUTER message apart into its routing id and one decoded
//  frame.  What cannot be decoded, or lacks the access token, is answered
//  (when it had a readable id) or dropped with a log line.  Returns the
//  message (the caller destroys it and *rid_p), or NULL.
//
//  On the api socket *rid_p is a return address: the routing id followed
//  by one byte, XXL_PEER_REQ when the client is a REQ socket (its message
//  had an empty delimiter frame before the body, and so must its reply;
//  engine_api_send puts it back), else XXL_PEER_DEALER.  Agents must be DEALERs.
xxl_msg_t *
engine_receive (server_t *self, zmsg_t *zmsg, zlistx_t *outbox, const char *what,
                zframe_t **rid_p, const xxl_who_t **who_p)
{
    zframe_t *rid = zmsg_pop (zmsg);
    zframe_t *body = zmsg_pop (zmsg);
    xxl_msg_t *msg = NULL;
    bool api = outbox != self->agents_out;
    byte peer = XXL_PEER_DEALER;
    if (api && body && zframe_size (body) == 0 && zmsg_size (zmsg) == 1) {
        zframe_destroy (&body);         //  REQ's delimiter
        body = zmsg_pop (zmsg);
        peer = XXL_PEER_REQ;
    }
    if (rid && api) {
        //  The return address: routing id, socket (4 bytes), peer kind
        size_t size = zframe_size (rid);
        zframe_t *address = zframe_new (NULL, size + XXL_RETURN_EXTRA);
        int32_t fd = self->api_fd;
        memcpy (zframe_data (address), zframe_data (rid), size);
        memcpy (zframe_data (address) + size, &fd, sizeof fd);
        zframe_data (address) [size + sizeof fd] = peer;
        zframe_destroy (&rid);
        rid = address;
    }
    if (!rid || !body || zmsg_size (zmsg) > 0)
        //  Not one frame after the routing id: no reply is possible
        engine_warn_limited (&self->log_frames, "server: %s message with %s frames dropped"
                             " (a message is one frame; a REQ client's, an empty one"
                             " and one)", what, body? "too many": "too few");
    else {
        char reason [256];
        uint64_t id = 0;
        msg = xxl_msg_decode (zframe_data (body), zframe_size (body), &id,
                              reason, sizeof reason);
        const xxl_who_t *who = msg? engine_who (self): NULL;
        int code = !msg? 0: !who? XXL_FORBIDDEN: engine_token_check (self, msg)? XXL_UNAUTHORIZED: 0;
        if (!msg)
            s_reply_bad_frame (self, outbox, rid, id, reason);
        else
        if (code) {
            //  (every message counts: an agent carries the token on its
            //  REPLYs and CALLBACKs too).  A REPLY is never answered: it
            //  is dropped, and the request it answers waits on.
            char type [80];
            bool reply = streq (xxl_msg_type (msg), "REPLY");
            if (code == XXL_UNAUTHORIZED)
                engine_warn_limited (&self->log_token, "server: %s %s message with a missing or"
                                     " wrong access token %s", what,
                                     xxl_printable (xxl_msg_type (msg), type, sizeof type),
                                     reply? "dropped": "refused (401)");
            if (!reply) {
                xxl_enc_reply (self->enc, id, code, code == XXL_UNAUTHORIZED
                               ? "the access token is wrong"
                               : "this connection's key is no longer in the scheduler's keys folder");
                if (outbox == self->agents_out)
                    engine_queue_agent (self, zframe_data (rid), zframe_size (rid), 0);
                else
                    engine_queue (self, outbox, zframe_data (rid), zframe_size (rid));
            }
            xxl_msg_destroy (&msg);
        }
        else
            *who_p = who;
    }
    zframe_destroy (&body);
    if (msg)
        *rid_p = rid;
    else
        zframe_destroy (&rid);
    return msg;
}

void
engine_api_request (server_t *self, zframe_t *rid, xxl_msg_t *msg, const xxl_who_t *who)
{
    const xxl_command_t *command = xxl_command_find (xxl_msg_type (msg));
    api_fn_t *fn = command? s_api_table [command - xxl_commands]: NULL;
    request_t request = { .rid = rid, .msg = msg, .command = command, .who = who };
    char why [512];
    self->api_read = !command || !fn || command->read_only;
    if (!command || !fn) {
        char text [128];
        snprintf (text, sizeof text, "unknown message type '%s'", xxl_msg_type (msg));
        engine_reply (self, &request, XXL_BAD_REQUEST, text);
    }
    else {
        if (api_judge (self, &request, 0) == 0) {
            //  (judged first: the scope's id must be a valid one to look up)
            if (engine_permit (self, &request, why, sizeof why) == 0)
                fn (self, &request);
            else {
                self->api_read = true;  //  (a refusal stands whatever the commit)
                engine_reply (self, &request, XXL_FORBIDDEN, why);
            }
        }
        api_audit_handled (self, &request);
    }
    self->api_read = false;
}

void
engine_handle_api (server_t *self, zmsg_t *zmsg)
{
    zframe_t *rid;
    const xxl_who_t *who = NULL;
    self->api_read = true;              //  (a refusal stands whatever the commit)
    xxl_msg_t *msg = engine_receive (self, zmsg, self->api_out, "api", &rid, &who);
    self->api_read = false;
    if (!msg)
        return;
    engine_api_request (self, rid, msg, who);
    xxl_msg_destroy (&msg);
    zframe_destroy (&rid);
}
