/*  xxl/client.h -- the client library: request/reply with an xxl scheduler.

    A client is one DEALER socket connected to a scheduler's api endpoint.
    Each request carries a fresh id; xxl_client_call waits for the reply
    with that id (stale replies to earlier, timed-out requests are dropped)
    up to the client's timeout.  xxl-ctl is one user of this library; any
    program may link it (pkg-config xxl).  Not thread-safe: one client per
    thread.

    Keys: xxl_client_new_curve makes a client that talks ZeroMQ CURVE to
    a scheduler that has a certificate (DESIGN §8, docs/protocol.md
    Transport security): the link is encrypted, the scheduler knows the
    client by its key, and the client talks only to the scheduler whose
    public certificate it was given.  A handshake that fails is told in
    xxl_client_call's err, not only as a timeout.
*/

#ifndef XXL_CLIENT_H_INCLUDED
#define XXL_CLIENT_H_INCLUDED

#include "xxl/msg.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct _xxl_client_t xxl_client_t;

//  Creates a client for endpoint (e.g. "tcp://127.0.0.1:7070").  token, if
//  not NULL, is sent as accessToken with every request.  Returns NULL when
//  the endpoint is invalid.
xxl_client_t *xxl_client_new (const char *endpoint, const char *token);
//  The same with CURVE: cert is the path of this client's secret
//  certificate, NAME.cert_secret as `xxl-ctl keygen` writes it (the path
//  of NAME.cert names its pair NAME.cert_secret); scheduler_key the path
//  of the scheduler's public certificate (a file with a secret key is
//  refused).  Returns NULL with the reason in err (a file missing,
//  unreadable or not a certificate of valid keys, or an invalid endpoint).
xxl_client_t *xxl_client_new_curve (const char *endpoint, const char *token, const char *cert,
                                    const char *scheduler_key, char *err, size_t errlen);
void xxl_client_destroy (xxl_client_t **self_p);
//  Reply timeout in milliseconds (default 5000).
void xxl_client_set_timeout (xxl_client_t *self, int timeout_ms);
//  Starts a request of type t and returns the encoder to add fields to;
//  the encoder is owned by the client and valid until the next call.
xxl_enc_t *xxl_client_request (xxl_client_t *self, const char *type);
//  Sends the request built since xxl_client_request and waits for its
//  reply.  Returns the reply (caller destroys it), or NULL with a reason in
//  err on timeout ("no reply from the scheduler within N ms"), a failed
//  handshake (the scheduler refused the key, is not the one of the key
//  given, or one end uses CURVE and the other not: said at once when a
//  retry cannot mend it, else when the reply times out), or a malformed
//  reply.  A reply whose code is not 200 is
//  still returned: check xxl_reply_code.
xxl_msg_t *xxl_client_call (xxl_client_t *self, char *err, size_t errlen);

//  Reply accessors
int xxl_reply_code (xxl_msg_t *reply);
const char *xxl_reply_msg (xxl_msg_t *reply);                //  "" when none
const msgpack_object *xxl_reply_content (xxl_msg_t *reply);  //  NULL when none

#ifdef __cplusplus
}
#endif

#endif
