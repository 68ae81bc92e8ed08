/*  sinks.h -- a tiny HTTP listener and a tiny SMTP sink for the alarm tests.

    Each runs on a thread of its own, listening on 127.0.0.1 at an
    ephemeral port, and records what it received, one request or one mail
    per connection.  The test waits for a record with sink_wait, which
    blocks on a condition variable up to a bound -- no fixed sleeps.  Only
    what libcurl sends is understood; neither is a general server.
*/

#ifndef XXL_TEST_SINKS_H_INCLUDED
#define XXL_TEST_SINKS_H_INCLUDED

#include <pthread.h>
#include <stddef.h>

#define SINK_TEXT   16384

//  What a sink received (one request / one mail)
typedef struct {
    char method [16];                   //  HTTP
    char path [256];                    //  HTTP
    char content_type [128];            //  HTTP
    char authorization [256];           //  HTTP, the Authorization header's value
    char mail_from [256];               //  SMTP, as sent: "<a@b>"
    char rcpt [512];                    //  SMTP, "<a@b>" lines joined by ' '
    char auth [256];                    //  SMTP, AUTH line when sent
    char body [SINK_TEXT];              //  HTTP body, or SMTP data unstuffed
} sink_record_t;

typedef struct sink_t sink_t;

//  HTTP modes
#define SINK_HTTP_STATUS    0           //  answer with status (200 by default)
#define SINK_HTTP_HANG      1           //  read the request, never answer
//  A body for non-2xx HTTP answers (sink_set_error_body) holding a
//  marker that must reach no alarm report: a target's response body is
//  never copied.  The default body is "boom".
#define SINK_BODY_MARKER        "sink-body-marker-7b3e"
#define SINK_HTTP_ERROR_BODY    "boom " SINK_BODY_MARKER
//  SMTP modes
#define SINK_SMTP_ACCEPT    0
#define SINK_SMTP_REJECT    1           //  550 to RCPT TO

//  Starts a sink; NULL on failure.  The port is sink_port.
sink_t *sink_http_new (void);
sink_t *sink_smtp_new (void);
//  Stops the thread, closes everything
void sink_destroy (sink_t **self_p);
int sink_port (sink_t *self);
//  A loopback port nothing listens on (bound, then closed)
int sink_dead_port (void);
//  Sets the mode (and HTTP status) for the next connections
void sink_set_mode (sink_t *self, int mode, int status);
//  Sets the body of the next non-2xx HTTP answers (at most 255 bytes)
void sink_set_error_body (sink_t *self, const char *body);
//  Sets the body of the next 2xx HTTP answers (copied, any length; NULL:
//  back to "ok")
void sink_set_body (sink_t *self, const char *body);
//  Waits up to timeout_ms for the count-th record (1-based) and copies it.
//  Returns 0, or -1 on timeout.
int sink_wait (sink_t *self, int count, int timeout_ms, sink_record_t *record);
//  Records so far
int sink_count (sink_t *self);

#endif
