/*  xxl_api_fields.c -- what every handler shares: the judged fields of
    the request in hand, read by name once judged (xxl_commands.h), and the
    shapes of common replies (a row shown, a truncated page).  Handlers
    call down into it; it calls no handler.  Contract in xxl_api.h.
*/

#include "xxl_api.h"

int
api_judge (server_t *self, request_t *request, int after)
{
    char why [512];
    if (xxl_command_judge (request->command, request->msg, after, &request->args, why,
                           sizeof why) == 0)
        return 0;
    engine_reply (self, request, XXL_BAD_REQUEST, why);
    return -1;
}

int64_t
api_int (request_t *request, const char *key)
{
    return xxl_args_int (&request->args, request->msg, key);
}

bool
api_bool (request_t *request, const char *key)
{
    return xxl_args_bool (&request->args, request->msg, key);
}

const char *
api_str (request_t *request, const char *key)
{
    return xxl_args_str (&request->args, request->msg, key);
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
