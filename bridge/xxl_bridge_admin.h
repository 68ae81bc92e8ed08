/*  xxl_bridge_admin.h -- the XXL-JOB admin the executors call.

    A libmicrohttpd server in external-select mode (the bridge's loop
    polls its sockets; no thread of its own) serving
    POST {path}/api/registry, {path}/api/registryRemove and
    {path}/api/callback as XXL-JOB 2.x and 3.x admins do: the access token
    in header XXL-JOB-ACCESS-TOKEN (any case), JSON bodies, answers
    {"code":200,"msg":null} or {"code":500,"msg":"..."}.  What a request
    means is the bridge's: the admin checks the method, the path, the
    token and the body's size and shape, then hands the parsed request to
    the functions it was given.  Bounded: a body over its limit is 413, a
    malformed one 400, a wrong token 401 (XXL-JOB's own answer is HTTP 200
    with code 500; the executors only look at code), at most 256
    connections (64 from one address), each closed after 10 s idle, and
    each request must come whole (headers and body) within
    request_timeout_s of its connection's accept or of the answer before
    it on that connection, however its bytes trickle (sdk's
    xxl_http_guard.h: a slowloris holds a connection that long at most).
    HTTPS with a certificate and key.  Called by xxl_bridge.c (it
    creates it and runs it from its loop); calls xxl_bridge_wire.h and,
    through the functions it was given, the bridge.
*/

#ifndef XXL_BRIDGE_ADMIN_H_INCLUDED
#define XXL_BRIDGE_ADMIN_H_INCLUDED

#include <czmq.h>
#include "xxl_bridge_wire.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct _xxl_bridge_admin_t xxl_bridge_admin_t;

//  A request's deadline by default, s
#define XXL_BRIDGE_ADMIN_REQUEST_S  30

//  A registry call (remove false) or registryRemove (true) from peer (its
//  IP address, text): 0 taken, else the code to answer with msg in why
typedef int (xxl_admin_registry_fn) (void *arg, const xxl_wire_registry_t *registry,
                                     bool remove, const char *peer, char *why, size_t whylen);
//  A callback batch: 0 when every item is durable (the executor may
//  forget it), else the code to answer, why in why
typedef int (xxl_admin_callback_fn) (void *arg, const xxl_wire_callback_t *items,
                                     size_t count, char *why, size_t whylen);

typedef struct {
    const char *listen;             //  HOST:PORT (PORT 0: any free one)
    const char *path;               //  the admin's path, e.g. /xxl-job-admin ("": none)
    const char *token;              //  NULL or "": none asked for
    bool insecure;                  //  may listen off loopback in plain text
    const char *tls_cert;           //  PEM files: HTTPS (may then listen anywhere)
    const char *tls_key;
    int request_timeout_s;          //  a request's deadline (0: XXL_BRIDGE_ADMIN_REQUEST_S)
    xxl_admin_registry_fn *registry;
    xxl_admin_callback_fn *callback;
    void *arg;
} xxl_bridge_admin_config_t;

//  Starts listening.  NULL with why when the address cannot be had, the
//  TLS files do not load, or it is off loopback in plain text without
//  insecure.
xxl_bridge_admin_t *xxl_bridge_admin_new (const xxl_bridge_admin_config_t *config,
                                          char *why, size_t whylen);
void xxl_bridge_admin_destroy (xxl_bridge_admin_t **self_p);

//  The port it listens on
int xxl_bridge_admin_port (xxl_bridge_admin_t *self);

//  The fd to poll for input (the server's epoll set); *timeout_ms lowered
//  to when it needs to run next
int xxl_bridge_admin_fd (xxl_bridge_admin_t *self, long *timeout_ms);

//  Serves what is ready: ready, the poll found the fd readable; else only
//  when the time xxl_bridge_admin_fd gave has come
void xxl_bridge_admin_run (xxl_bridge_admin_t *self, bool ready);

#ifdef __cplusplus
}
#endif

#endif
