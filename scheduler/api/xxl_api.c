/*  xxl_api.c -- the client api: a request's way to its handler.

    engine_handle_api takes a message from the api socket (access/'s
    engine_receive decodes it and names its key); engine_api_request finds
    its command (xxl_commands.def), which says whether it only reads (its
    reply stands whatever the turn's commit) and how its fields are
    judged, judges them and the key's role, and calls the handler the
    table maps it to (xxl_api.h lists the files by resource).  It is the
    top of the api: handlers never call it.
*/

#include "xxl_api.h"

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
    engine_outbox_read (self, !command || !fn || command->read_only);
    if (!command || !fn) {
        char text [160], shown [129];
        snprintf (text, sizeof text, "unknown message type '%s'",
                  xxl_printable (xxl_msg_type (msg), shown, sizeof shown));
        engine_reply (self, &request, XXL_BAD_REQUEST, text);
    }
    else {
        if (api_judge (self, &request, 0) == 0) {
            //  (judged first: the scope's id must be a valid one to look up)
            if (engine_permit (self, &request, why, sizeof why) == 0)
                fn (self, &request);
            else {
                engine_outbox_read (self, true);  //  (a refusal stands whatever the commit)
                engine_reply (self, &request, XXL_FORBIDDEN, why);
            }
        }
        engine_audit_handled (self, &request);
    }
    engine_outbox_read (self, false);
}

//  Queues the encoder's message to a client (engine_receive's answers)
static void
s_answer_client (server_t *self, zframe_t *rid)
{
    engine_queue_client (self, zframe_data (rid), zframe_size (rid));
}

void
engine_handle_api (server_t *self, zmsg_t *zmsg)
{
    zframe_t *rid;
    const xxl_who_t *who = NULL;
    engine_outbox_read (self, true);              //  (a refusal stands whatever the commit)
    xxl_msg_t *msg = engine_receive (self, zmsg, true, s_answer_client, &rid, &who);
    engine_outbox_read (self, false);
    if (!msg)
        return;
    engine_api_request (self, rid, msg, who);
    xxl_msg_destroy (&msg);
    zframe_destroy (&rid);
}
