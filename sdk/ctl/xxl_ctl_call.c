/*  xxl_ctl_call.c -- xxl-ctl's requests to the scheduler and their replies.
*/

#include "xxl_ctl_call.h"
#include "xxl_ctl_cmd.h"
#include "xxl_ctl_print.h"
#include "xxl_ctl_value.h"

#include <czmq.h>
#include <inttypes.h>

xxl_enc_t *
xxl_ctl_request (ctl_t *self, const char *type)
{
    if (!self->client && self->cert) {
        char reason [512] = "";
        self->client = xxl_client_new_curve (self->api, self->token, self->cert,
                                             self->scheduler_key, reason, sizeof reason);
        if (!self->client) {
            xxl_ctl_fail (self, XXL_CTL_FAILED, "%s", reason);
            return NULL;
        }
        xxl_client_set_timeout (self->client, self->timeout);
    }
    if (!self->client) {
        self->client = xxl_client_new (self->api, self->token);
        if (!self->client) {
            xxl_ctl_fail (self, XXL_CTL_FAILED, "cannot use api endpoint '%s' (expected e.g. %s)",
                          self->api, XXL_CTL_DEFAULT_API);
            return NULL;
        }
        xxl_client_set_timeout (self->client, self->timeout);
    }
    return xxl_client_request (self->client, type);
}

xxl_enc_t *
xxl_ctl_request_args (ctl_t *self, const char *type, const ctl_cmd_t *cmd, ctl_args_t *args,
                      int *count)
{
    xxl_enc_t *enc = xxl_ctl_request (self, type);
    if (enc) {
        int added = xxl_ctl_args_encode (cmd, args, enc);
        if (count)
            *count = added;
    }
    return enc;
}

xxl_msg_t *
xxl_ctl_call (ctl_t *self)
{
    char reason [512] = "";
    xxl_msg_t *reply = xxl_client_call (self->client, reason, sizeof reason);
    if (!reply) {
        //  (with the local keys: which, or why this user cannot read them)
        const char *local = self->local? self->local: "";
        const char *note = !*local? "": self->cert? "; the local key ": "; ";
        const char *tail = *local && self->cert? ", and a scheduler started with --open"
                                                 " takes no keys": "";
        if (strncmp (reason, "no reply", 8) == 0 || !*reason)
            xxl_ctl_fail (self, XXL_CTL_FAILED, "no reply from the scheduler at %s within %d ms%s"
                          "%s%s%s", self->api, self->timeout, self->cert
                          ? " (is the scheduler up, and does it know this key?)": "", note, local,
                          tail);
        else
            xxl_ctl_fail (self, XXL_CTL_FAILED, "%s%s%s%s", reason, note, local, tail);
        return NULL;
    }
    int code = xxl_reply_code (reply);
    if (code != XXL_OK) {
        const char *text = xxl_reply_msg (reply);
        //  (a 401 to a client that sent no token: say where one goes)
        const char *hint = code == XXL_UNAUTHORIZED && (!self->token || !*self->token)
                         ? " (none was given: --token, XXL_TOKEN or ctl/token)": "";
        if (text && *text)
            xxl_ctl_fail (self, XXL_CTL_FAILED, "%s%s", text, hint);
        else
            xxl_ctl_fail (self, XXL_CTL_FAILED, "the scheduler answered code %d", code);
        xxl_msg_destroy (&reply);
    }
    return reply;
}

const msgpack_object *
xxl_ctl_content (ctl_t *self, xxl_msg_t *reply)
{
    const msgpack_object *content = xxl_reply_content (reply);
    if (!content || content->type != MSGPACK_OBJECT_MAP) {
        xxl_ctl_fail (self, XXL_CTL_FAILED, "unexpected reply: %s",
                      content? "content is not a map": "no content");
        return NULL;
    }
    return content;
}

const msgpack_object *
xxl_ctl_content_array (ctl_t *self, const msgpack_object *content, const char *key)
{
    const msgpack_object *array = xxl_ctl_value_get (content, key);
    if (!array || array->type != MSGPACK_OBJECT_ARRAY) {
        xxl_ctl_fail (self, XXL_CTL_FAILED, "unexpected reply: no '%s' list", key);
        return NULL;
    }
    return array;
}

int
xxl_ctl_exchange (ctl_t *self, xxl_msg_t **reply_p, const msgpack_object **content_p,
                  const char *key, ctl_shape_t shape)
{
    *reply_p = xxl_ctl_call (self);
    if (!*reply_p)
        return XXL_CTL_FAILED;
    *content_p = xxl_ctl_content (self, *reply_p);
    if (!*content_p) {
        xxl_msg_destroy (reply_p);
        return XXL_CTL_FAILED;
    }
    const msgpack_object *value = key? xxl_ctl_value_get (*content_p, key): NULL;
    int bad = 0;
    if (shape == CTL_NUMBER)
        bad = !value || value->type != MSGPACK_OBJECT_POSITIVE_INTEGER;
    else
    if (shape == CTL_LIST || shape == CTL_INTS) {
        bad = !value || value->type != MSGPACK_OBJECT_ARRAY;
        for (uint32_t i = 0; !bad && shape == CTL_INTS && i < value->via.array.size; i++)
            bad = value->via.array.ptr [i].type != MSGPACK_OBJECT_POSITIVE_INTEGER;
    }
    if (bad) {
        xxl_msg_destroy (reply_p);
        return xxl_ctl_fail (self, XXL_CTL_FAILED, "unexpected reply: no valid '%s'%s", key,
                             shape == CTL_NUMBER? " number":
                             shape == CTL_INTS? " list of numbers": " list");
    }
    if (self->json && xxl_ctl_print_json (self, *content_p)) {
        xxl_msg_destroy (reply_p);
        return xxl_ctl_fail (self, XXL_CTL_FAILED, "out of memory");
    }
    return XXL_CTL_OK;
}

const msgpack_object *
xxl_ctl_list (ctl_t *self, xxl_msg_t **reply_p, const msgpack_object **content_p,
              const char *key, ctl_shape_t shape, int *rc)
{
    *rc = xxl_ctl_exchange (self, reply_p, content_p, key, shape);
    if (*rc || self->json) {
        xxl_msg_destroy (reply_p);
        return NULL;
    }
    return xxl_ctl_value_get (*content_p, key);
}

int
xxl_ctl_simple (ctl_t *self, const char *what, const char *done)
{
    xxl_msg_t *reply;
    const msgpack_object *content;
    int rc = xxl_ctl_exchange (self, &reply, &content, "id", CTL_NUMBER);
    if (rc)
        return rc;
    int64_t id = xxl_ctl_value_int_or (content, "id", 0);
    if (!self->json)
        fprintf (self->out, "%s %" PRId64 " %s\n", what, id, done);
    xxl_msg_destroy (&reply);
    return rc;
}

int
xxl_ctl_show (ctl_t *self)
{
    xxl_msg_t *reply;
    const msgpack_object *content;
    int rc = xxl_ctl_exchange (self, &reply, &content, NULL, CTL_ANY);
    if (rc)
        return rc;
    if (!self->json)
        xxl_ctl_print_object (self, content);
    xxl_msg_destroy (&reply);
    return XXL_CTL_OK;
}

int
xxl_ctl_cmd_simple (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    return xxl_ctl_request_args (self, cmd->request, cmd, args, NULL)?
           xxl_ctl_simple (self, cmd->noun, cmd->done): XXL_CTL_FAILED;
}

int
xxl_ctl_cmd_show (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    return xxl_ctl_request_args (self, cmd->request, cmd, args, NULL)?
           xxl_ctl_show (self): XXL_CTL_FAILED;
}
