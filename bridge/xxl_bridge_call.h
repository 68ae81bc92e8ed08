/*  xxl_bridge_call.h -- the bridge's calls to executors.

    A call is one POST of a JSON body to an executor's URL + a path
    (run, kill, log, beat, idleBeat) with the XXL-JOB-ACCESS-TOKEN header,
    its own timeout, and a completion function called from
    xxl_bridge_call_perform with what came (HTTP status, body, or why not).
    Plain http:// to an IP address literal goes through the bridge's own
    HTTP/1.1 client (xxl_bridge_http.h) on connections kept alive per
    executor; anything else (https://, "localhost") through libcurl.
    Bounded: at most `parallel` calls on the wire at once (more wait, in
    order, in the caller's list, within their own timeouts counted from
    when they were posted), at most `parallel` connections of each kind,
    at most `queued` calls held in all (a call past that is refused at
    once), an answer body of at most 1 MiB (a longer one fails the call).
    Timeouts are looked at every 100 ms.  A call whose kept-alive
    connection ends before any byte of its answer (the executor closed it
    while idle) goes again once on a new connection, as libcurl does.
    Redirects are not followed, only http and https are spoken.  Nothing
    goes on the wire before xxl_bridge_call_perform: post only queues, and
    a call posted during a perform (by a completion) waits for the next.
    Single-threaded: the bridge's loop owns it, polls its fd
    (xxl_bridge_call_fd) and calls xxl_bridge_call_perform.  Knows nothing
    of XXL-JOB or of the schedulers: called by xxl_bridge.c only; calls
    libcurl, czmq and xxl_bridge_http.
*/

#ifndef XXL_BRIDGE_CALL_H_INCLUDED
#define XXL_BRIDGE_CALL_H_INCLUDED

#include <czmq.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct _xxl_bridge_call_t xxl_bridge_call_t;

//  Called once per call: status the HTTP status (0: no answer, why says
//  why), body the answer (NUL-terminated, len bytes)
typedef void (xxl_bridge_call_fn) (void *arg, int status, const char *body, size_t len,
                                   const char *why);

//  token NULL or "": no token header
xxl_bridge_call_t *xxl_bridge_call_new (const char *token, int parallel, int queued);
//  Ends every call (their completions are not called)
void xxl_bridge_call_destroy (xxl_bridge_call_t **self_p);

//  Whether a connection to addr (the address a call is about to connect
//  to, after any name lookup) may be made
struct sockaddr;
typedef bool (xxl_bridge_call_check_fn) (void *arg, const struct sockaddr *addr);

//  Every connection either way is first given to check (NULL: none): one
//  it refuses is not made, and its call ends with no answer, why naming
//  the address
void xxl_bridge_call_set_check (xxl_bridge_call_t *self, xxl_bridge_call_check_fn *check,
                                void *arg);

//  Starts a POST of body (copied) to url followed by path; done is called
//  with arg when it ends, after at most timeout_ms.  0, or -1 when it
//  cannot start (queue full, out of memory): done is then not called.
int xxl_bridge_call_post (xxl_bridge_call_t *self, const char *url, const char *path,
                          const char *body, int timeout_ms, xxl_bridge_call_fn *done,
                          void *arg);

//  Calls held (on the wire and waiting)
size_t xxl_bridge_call_count (xxl_bridge_call_t *self);

//  The fd to poll for input (an epoll set of the calls' sockets: one fd
//  however many connections, none limited by FD_SETSIZE); *timeout_ms
//  lowered to when it needs to run next (0: posted calls can go on the wire)
int xxl_bridge_call_fd (xxl_bridge_call_t *self, long *timeout_ms);

//  Moves the calls on (the sockets ready, the timers, the calls posted
//  before it onto the wire) and completes the ones that ended; ready: the
//  poll found the fd readable (else its sockets are not looked at)
void xxl_bridge_call_perform (xxl_bridge_call_t *self, bool ready);

#ifdef __cplusplus
}
#endif

#endif
