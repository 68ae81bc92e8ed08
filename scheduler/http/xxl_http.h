/*  xxl_http.h -- the scheduler's HTTP server: REST /api/v1, the console's
    files, /metrics, /healthz, /readyz (docs/http.md).

    libmicrohttpd's threads (one per connection, at most
    XXL_HTTP_CONNECTIONS) serve it; none of them touches the store or the
    engine's state.  A REST call becomes an api request (a msgpack map, as
    any ZeroMQ client sends) that goes with the caller's credentials to
    the engine's inproc `http` socket (xxl_api_users.c), which judges it by
    the same command table, roles, handlers and audit as the api socket's;
    its reply comes back as JSON with xxl-ctl --json's keys.  /metrics and
    /readyz read the snapshot the engine publishes (xxl_metrics.h).
*/

#ifndef XXL_HTTP_H_INCLUDED
#define XXL_HTTP_H_INCLUDED

#include "xxl_server.h"
#include "xxl_metrics.h"

#define XXL_HTTP_CONNECTIONS 64         //  connections served at once
//  ... of them from one client address by default (http/per_address): a
//  client holding connections open (headers sent a byte at a time)
//  cannot take every one
#define XXL_HTTP_CONNECTIONS_PER_ADDRESS 16
//  A request must come whole (headers and body) within this many seconds
//  of its connection's accept, or of the answer before it on that
//  connection (http/request_timeout_s): bytes sent slowly never stretch it
#define XXL_HTTP_REQUEST_TIMEOUT_S 30
//  Connections kept, past the XXL_HTTP_CONNECTIONS, for /healthz and
//  /readyz (http/health_slots): one per client address, each closed after
//  one answer or XXL_HTTP_HEALTH_TIMEOUT_MS, whichever comes first
#define XXL_HTTP_HEALTH_SLOTS 8
#define XXL_HTTP_HEALTH_TIMEOUT_MS 2000

typedef struct _xxl_http_t xxl_http_t;

//  Starts serving config's endpoint; engine: the inproc endpoint of the
//  engine's http socket; wait_ms: how long a request waits for the
//  engine's answer.  Writes the bound "HOST:PORT" into bound.  NULL with
//  the reason in why.
xxl_http_t *xxl_http_new (const xxl_http_config_t *config, const char *engine,
                          xxl_metrics_box_t *metrics, int wait_ms, char *bound,
                          size_t boundlen, char *why, size_t whylen);
//  The engine stops taking requests: REST calls are answered 503 from now
//  on (those waiting for the engine too); files and metrics still serve
void xxl_http_stop (xxl_http_t *self);
//  Stops serving (waits for the requests in hand) and nulls *self_p
void xxl_http_destroy (xxl_http_t **self_p);

//  Whether an HTTP endpoint ("HOST:PORT") binds only loopback
bool xxl_http_loopback (const char *endpoint);

#endif
