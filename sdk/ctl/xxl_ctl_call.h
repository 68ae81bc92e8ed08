/*  xxl_ctl_call.h -- xxl-ctl's requests to the scheduler and their replies.

    A command starts a request (xxl_ctl_request), adds its fields with the
    client library's encoder, and sends it with one of the calls below.
    Every call reports its own failures (xxl_ctl_fail, status
    XXL_CTL_FAILED): no client for the endpoint, no reply in time, a
    non-200 answer (its message), or a reply of the wrong shape
    ("unexpected reply: ...").  A reply's objects point into the client's
    receive buffer: hold no reply across another request.
*/

#ifndef XXL_CTL_CALL_H_INCLUDED
#define XXL_CTL_CALL_H_INCLUDED

#include "xxl_ctl_args.h"
#include "xxl/msg.h"

//  Starts a request of type (making the client on first use); NULL after
//  reporting when the endpoint cannot be used
xxl_enc_t *xxl_ctl_request (ctl_t *self, const char *type);

//  Starts a request of type filled with the command's arguments that have
//  a request field (xxl_ctl_args_encode; with count, how many flags);
//  NULL after reporting
xxl_enc_t *xxl_ctl_request_args (ctl_t *self, const char *type, const ctl_cmd_t *cmd,
                                 ctl_args_t *args, int *count);

//  Sends the request; a 200 reply (caller destroys), or NULL after reporting
xxl_msg_t *xxl_ctl_call (ctl_t *self);

//  The reply's content when it is a map, else NULL after reporting
const msgpack_object *xxl_ctl_content (ctl_t *self, xxl_msg_t *reply);

//  content [key] when it is an array, else NULL after reporting
const msgpack_object *xxl_ctl_content_array (ctl_t *self, const msgpack_object *content,
                                             const char *key);

//  What a reply's content must hold under a key
typedef enum {
    CTL_ANY,                            //  any map
    CTL_NUMBER,                         //  a positive integer
    CTL_LIST,                           //  an array
    CTL_INTS                            //  an array of non-negative integers
} ctl_shape_t;

//  Sends the request; checks that content [key] has the shape; on
//  success prints the content as JSON (with --json) and returns it in
//  *content_p, its reply in *reply_p (caller destroys; NULL on failure).
//  Returns the exit status.
int xxl_ctl_exchange (ctl_t *self, xxl_msg_t **reply_p, const msgpack_object **content_p,
                      const char *key, ctl_shape_t shape);

//  Sends the request for a reply whose content [key] is a list (shape
//  CTL_LIST or CTL_INTS) and returns that list for printing as text, with
//  the content in *content_p and the reply in *reply_p (caller destroys).
//  NULL when there is nothing more to print: after a failure (*rc the
//  exit status), or with --json after printing the content (*rc 0).
const msgpack_object *xxl_ctl_list (ctl_t *self, xxl_msg_t **reply_p,
                                    const msgpack_object **content_p, const char *key,
                                    ctl_shape_t shape, int *rc);

//  For requests answered with {"id": N}: sends, prints "<what> N <done>"
//  (or the JSON); the exit status
int xxl_ctl_simple (ctl_t *self, const char *what, const char *done);

//  Sends, prints the content as key: value lines (or JSON); the exit status
int xxl_ctl_show (ctl_t *self);

//  Handlers of commands that are one request (cmd->request) filled from
//  their arguments: simple prints "<noun> N <cmd->done>" of an {"id": N}
//  reply, show the reply's content (see above); the exit status
int xxl_ctl_cmd_simple (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args);
int xxl_ctl_cmd_show (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args);

#endif
