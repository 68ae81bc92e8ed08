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

void
engine_api_request (server_t *self, zframe_t *rid, xxl_msg_t *msg, const xxl_who_t *who)
{
    const xxl_command_t *command = xxl_command_find (xxl_msg_type (msg));
    api_fn_t *fn = command? s_api_table [command - xxl_commands]: NULL;
    request_t request = { .rid = rid, .msg = msg, .command = command, .who = who };
    char why [512];
    self->api_state.api_read = !command || !fn || command->read_only;
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
                self->api_state.api_read = true;  //  (a refusal stands whatever the commit)
                engine_reply (self, &request, XXL_FORBIDDEN, why);
            }
        }
        engine_audit_handled (self, &request);
    }
    self->api_state.api_read = false;
}

//  Queues the encoder's message to a client (engine_receive's answers)
static void
s_answer_client (server_t *self, zframe_t *rid)
{
    engine_queue (self, self->outbox.api_out, zframe_data (rid), zframe_size (rid));
}

void
engine_handle_api (server_t *self, zmsg_t *zmsg)
{
    zframe_t *rid;
    const xxl_who_t *who = NULL;
    self->api_state.api_read = true;              //  (a refusal stands whatever the commit)
    xxl_msg_t *msg = engine_receive (self, zmsg, true, s_answer_client, &rid, &who);
    self->api_state.api_read = false;
    if (!msg)
        return;
    engine_api_request (self, rid, msg, who);
    xxl_msg_destroy (&msg);
    zframe_destroy (&rid);
}
