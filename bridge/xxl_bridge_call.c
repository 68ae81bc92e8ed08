/*  xxl_bridge_call.c -- the bridge's calls to executors (libcurl multi).

    See xxl_bridge_call.h.  A call on the wire is an easy handle; its
    state (body, answer, completion) hangs off CURLOPT_PRIVATE.  At most
    `parallel` are in the multi handle at once; the others wait in
    `waiting`, in order, with no easy handle yet, and join it as calls
    end.  (libcurl can queue them itself, but its curl_multi_remove_handle
    walks every handle the multi holds: with thousands waiting, that walk
    was most of the bridge's CPU per run.)  libcurl's sockets are watched
    by an epoll set of this module's, which the bridge's loop polls as one
    fd: a turn costs the same with 1 or `parallel` connections.
*/

#include "xxl_bridge_call.h"

#include <curl/curl.h>
#include <sys/epoll.h>

//  Largest answer body read
#define CALL_ANSWER_MAX  (1024 * 1024)

//  Most socket events taken from the epoll set at once
#define CALL_EVENTS  64

struct _xxl_bridge_call_t {
    CURLM *multi;
    int epoll;                      //  libcurl's sockets (its socket callback)
    uint32_t *fds;                  //  by fd: what the set holds (FD_*)
    size_t nfds;
    int64_t deadline;               //  libcurl's timer (zclock_mono; -1 none)
    struct curl_slist *headers;
    size_t count;                   //  calls held
    zlistx_t *calls;                //  of call_t in the multi, each with its handle
    zlistx_t *waiting;              //  of call_t not yet in the multi, oldest first
    int queued;                     //  most calls held
    size_t parallel;                //  most calls in the multi
    int64_t next_sweep;             //  next look for waiting calls past their time
    CURL **idle;                    //  easy handles of ended calls, for the next
    size_t nidle;                   //  (at most `parallel`)
};

//  Most answer bytes held in the call itself (the common answer,
//  {"code":200,"msg":null}, with room): a longer one is malloc'd
#define CALL_ANSWER_INLINE  128

typedef struct {
    CURL *easy;
    char *body;                     //  (in the call's own allocation)
    size_t body_len;
    char *answer;                   //  inline, or malloc'd past it
    size_t len, cap;
    bool too_long;
    char error [CURL_ERROR_SIZE];
    xxl_bridge_call_fn *done;
    void *arg;
    void *handle;                   //  in calls, or in waiting
    bool in_multi;
    int timeout_ms;
    int64_t posted;                 //  zclock_mono when posted
    char *url;                      //  the whole URL (in the call's own allocation)
    char inline_answer [CALL_ANSWER_INLINE];
    char text [];                   //  url, NUL, body, NUL
} call_t;

//  How often waiting calls are looked at for their timeout (ms)
#define CALL_SWEEP_MS  100

//  What the epoll set holds of an fd (fds[fd])
#define FD_IN_SET   (1u << 30)      //  in the set, with the EPOLL* bits kept
#define FD_WATCHED  (1u << 31)      //  and libcurl watches it

//  libcurl's socket callback: the sockets to watch, in the epoll set (no
//  fd_set: none is limited by FD_SETSIZE).  A socket libcurl stops
//  watching stays in the set while it waits for input only (a kept-alive
//  connection between calls: no epoll_ctl a call), and leaves it at its
//  first event (xxl_bridge_call_perform) or when libcurl closes it
//  (s_close: its number may come back as another socket).
static int
s_socket (CURL *easy, curl_socket_t fd, int what, void *arg, void *socketp)
{
    (void) easy; (void) socketp;
    xxl_bridge_call_t *self = (xxl_bridge_call_t *) arg;
    if (fd < 0)
        return 0;
    if ((size_t) fd >= self->nfds) {
        size_t nfds = 2 * (size_t) fd + 16;
        uint32_t *grown = (uint32_t *) realloc (self->fds, nfds * sizeof *grown);
        if (!grown)
            return -1;              //  (libcurl fails the transfer)
        memset (grown + self->nfds, 0, (nfds - self->nfds) * sizeof *grown);
        self->fds = grown;
        self->nfds = nfds;
    }
    uint32_t had = self->fds [fd];
    if (what == CURL_POLL_REMOVE) {
        if ((had & FD_IN_SET) && (had & EPOLLOUT)) {
            epoll_ctl (self->epoll, EPOLL_CTL_DEL, fd, NULL);
            self->fds [fd] = 0;
        }
        else
            self->fds [fd] = had & ~FD_WATCHED;
        return 0;
    }
    struct epoll_event event = { 0 };
    event.events = ((what & CURL_POLL_IN)? EPOLLIN: 0) | ((what & CURL_POLL_OUT)? EPOLLOUT: 0);
    event.data.fd = fd;
    if ((had & FD_IN_SET) && (had & (EPOLLIN | EPOLLOUT)) == event.events) {
        self->fds [fd] = had | FD_WATCHED;
        return 0;
    }
    //  (a closed fd left the set: its number may come back, new, as "in")
    if (epoll_ctl (self->epoll, (had & FD_IN_SET)? EPOLL_CTL_MOD: EPOLL_CTL_ADD, fd, &event)
    &&  epoll_ctl (self->epoll, (had & FD_IN_SET)? EPOLL_CTL_ADD: EPOLL_CTL_MOD, fd, &event))
        return -1;
    self->fds [fd] = FD_IN_SET | FD_WATCHED | event.events;
    return 0;
}

//  libcurl's close of its sockets (CURLOPT_CLOSESOCKETFUNCTION)
static int
s_close (void *arg, curl_socket_t fd)
{
    xxl_bridge_call_t *self = (xxl_bridge_call_t *) arg;
    if (fd >= 0 && (size_t) fd < self->nfds && (self->fds [fd] & FD_IN_SET))
        epoll_ctl (self->epoll, EPOLL_CTL_DEL, fd, NULL);
    if (fd >= 0 && (size_t) fd < self->nfds)
        self->fds [fd] = 0;
    return close (fd);
}

//  libcurl's timer callback
static int
s_timer (CURLM *multi, long timeout_ms, void *arg)
{
    (void) multi;
    xxl_bridge_call_t *self = (xxl_bridge_call_t *) arg;
    self->deadline = timeout_ms < 0? -1: zclock_mono () + timeout_ms;
    return 0;
}

xxl_bridge_call_t *
xxl_bridge_call_new (const char *token, int parallel, int queued)
{
    static bool initialised = false;
    if (!initialised) {
        curl_global_init (CURL_GLOBAL_DEFAULT);
        initialised = true;
    }
    xxl_bridge_call_t *self = (xxl_bridge_call_t *) zmalloc (sizeof *self);
    self->multi = curl_multi_init ();
    self->epoll = epoll_create1 (EPOLL_CLOEXEC);
    if (!self->multi || self->epoll < 0) {
        if (self->multi)
            curl_multi_cleanup (self->multi);
        if (self->epoll >= 0)
            close (self->epoll);
        free (self);
        return NULL;
    }
    self->deadline = -1;
    curl_multi_setopt (self->multi, CURLMOPT_SOCKETFUNCTION, s_socket);
    curl_multi_setopt (self->multi, CURLMOPT_SOCKETDATA, self);
    curl_multi_setopt (self->multi, CURLMOPT_TIMERFUNCTION, s_timer);
    curl_multi_setopt (self->multi, CURLMOPT_TIMERDATA, self);
    curl_multi_setopt (self->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long) parallel);
    curl_multi_setopt (self->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long) parallel);
    self->headers = curl_slist_append (NULL, "Content-Type: application/json;charset=UTF-8");
    self->headers = curl_slist_append (self->headers, "Expect:");
    if (token && *token) {
        char *line = zsys_sprintf ("XXL-JOB-ACCESS-TOKEN: %s", token);
        self->headers = curl_slist_append (self->headers, line);
        zstr_free (&line);
    }
    self->queued = queued;
    self->parallel = parallel > 0? (size_t) parallel: 1;
    self->calls = zlistx_new ();
    self->waiting = zlistx_new ();
    self->idle = (CURL **) calloc (self->parallel, sizeof (CURL *));
    assert (self->idle);
    return self;
}

static void
s_call_free (xxl_bridge_call_t *self, call_t *call)
{
    if (call->in_multi) {
        curl_multi_remove_handle (self->multi, call->easy);
        zlistx_delete (self->calls, call->handle);
    }
    else
        zlistx_delete (self->waiting, call->handle);
    if (call->easy && self->nidle < self->parallel) {
        //  (kept with the options every call has; no pointer into the call)
        curl_easy_setopt (call->easy, CURLOPT_PRIVATE, NULL);
        curl_easy_setopt (call->easy, CURLOPT_WRITEDATA, NULL);
        curl_easy_setopt (call->easy, CURLOPT_ERRORBUFFER, NULL);
        curl_easy_setopt (call->easy, CURLOPT_POSTFIELDS, "");
        self->idle [self->nidle++] = call->easy;
    }
    else
    if (call->easy)
        curl_easy_cleanup (call->easy);
    if (call->answer != call->inline_answer)
        free (call->answer);
    free (call);
    self->count--;
}

void
xxl_bridge_call_destroy (xxl_bridge_call_t **self_p)
{
    xxl_bridge_call_t *self = *self_p;
    if (!self)
        return;
    //  Each call ends with no answer, so that its caller frees what it
    //  gave (its completion must not start another call)
    call_t *call;
    while ((call = (call_t *) zlistx_first (self->waiting))
    ||     (call = (call_t *) zlistx_first (self->calls))) {
        call->done (call->arg, 0, "", 0, "the bridge is stopping");
        s_call_free (self, call);
    }
    zlistx_destroy (&self->calls);
    zlistx_destroy (&self->waiting);
    while (self->nidle)
        curl_easy_cleanup (self->idle [--self->nidle]);
    free (self->idle);
    curl_multi_cleanup (self->multi);
    close (self->epoll);
    free (self->fds);
    curl_slist_free_all (self->headers);
    free (self);
    *self_p = NULL;
}

static size_t
s_write (char *data, size_t size, size_t nmemb, void *arg)
{
    call_t *call = (call_t *) arg;
    size_t n = size * nmemb;
    if (call->len + n > CALL_ANSWER_MAX) {
        call->too_long = true;
        return 0;                   //  ends the transfer (CURLE_WRITE_ERROR)
    }
    if (call->len + n + 1 > call->cap) {
        size_t cap = (call->len + n + 1) * 2;
        char *grown = (char *) realloc (call->answer == call->inline_answer? NULL: call->answer,
                                        cap);
        if (!grown)
            return 0;
        if (call->answer == call->inline_answer)
            memcpy (grown, call->answer, call->len);
        call->answer = grown;
        call->cap = cap;
    }
    memcpy (call->answer + call->len, data, n);
    call->len += n;
    call->answer [call->len] = 0;
    return n;
}

//  The call joins the multi, with an easy handle and what is left of its
//  time; -1 (nothing changed) when libcurl refuses it
static int
s_join (xxl_bridge_call_t *self, call_t *call, long left_ms)
{
    assert (!call->in_multi && !call->easy);
    CURL *e = self->nidle? self->idle [--self->nidle]: NULL;
    if (!e) {
        //  The options every call has, once a handle
        e = curl_easy_init ();
        if (!e)
            return -1;
        curl_easy_setopt (e, CURLOPT_POST, 1L);
        curl_easy_setopt (e, CURLOPT_HTTPHEADER, self->headers);
        curl_easy_setopt (e, CURLOPT_WRITEFUNCTION, s_write);
        curl_easy_setopt (e, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt (e, CURLOPT_FOLLOWLOCATION, 0L);
        curl_easy_setopt (e, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt (e, CURLOPT_USERAGENT, "xxl-bridge");
        curl_easy_setopt (e, CURLOPT_CLOSESOCKETFUNCTION, s_close);
        curl_easy_setopt (e, CURLOPT_CLOSESOCKETDATA, self);
        //  (no proxy: the executors are called directly, and libcurl then
        //  reads no *_proxy environment variables a call)
        curl_easy_setopt (e, CURLOPT_PROXY, "");
    }
    //  and each call's own
    curl_easy_setopt (e, CURLOPT_URL, call->url);
    curl_easy_setopt (e, CURLOPT_PRIVATE, call);
    curl_easy_setopt (e, CURLOPT_POSTFIELDS, call->body);
    curl_easy_setopt (e, CURLOPT_POSTFIELDSIZE, (long) call->body_len);
    curl_easy_setopt (e, CURLOPT_WRITEDATA, call);
    curl_easy_setopt (e, CURLOPT_ERRORBUFFER, call->error);
    curl_easy_setopt (e, CURLOPT_TIMEOUT_MS, left_ms);
    curl_easy_setopt (e, CURLOPT_CONNECTTIMEOUT_MS, left_ms < 3000? left_ms: 3000L);
    if (curl_multi_add_handle (self->multi, e) != CURLM_OK) {
        curl_easy_cleanup (e);
        return -1;
    }
    call->easy = e;
    call->in_multi = true;
    call->handle = zlistx_add_end (self->calls, call);
    return 0;
}

int
xxl_bridge_call_post (xxl_bridge_call_t *self, const char *url, const char *path,
                      const char *body, int timeout_ms, xxl_bridge_call_fn *done, void *arg)
{
    if (self->count >= (size_t) self->queued)
        return -1;
    //  One allocation: the call, its URL (the executor's, XXL-JOB's ending
    //  in '/', and the path) and its body
    size_t ulen = strlen (url), plen = strlen (path), blen = body? strlen (body): 0;
    bool slash = !(ulen && url [ulen - 1] == '/');
    call_t *call = (call_t *) malloc (sizeof *call + ulen + slash + plen + 1 + blen + 1);
    if (!call)
        return -1;
    memset (call, 0, offsetof (call_t, inline_answer));
    call->url = call->text;
    memcpy (call->url, url, ulen);
    if (slash)
        call->url [ulen] = '/';
    memcpy (call->url + ulen + slash, path, plen + 1);
    call->body = call->url + ulen + slash + plen + 1;
    if (blen)
        memcpy (call->body, body, blen);
    call->body [blen] = 0;
    call->body_len = blen;
    call->answer = call->inline_answer;
    call->answer [0] = 0;
    call->cap = sizeof call->inline_answer;
    call->done = done;
    call->arg = arg;
    call->timeout_ms = timeout_ms;
    call->posted = zclock_mono ();
    if (zlistx_size (self->calls) < self->parallel && s_join (self, call, timeout_ms)) {
        free (call);
        return -1;
    }
    if (!call->in_multi)
        call->handle = zlistx_add_end (self->waiting, call);
    self->count++;
    return 0;
}

//  Ends a waiting call with no answer
static void
s_call_fail (xxl_bridge_call_t *self, call_t *call, const char *why)
{
    call->done (call->arg, 0, "", 0, why);
    s_call_free (self, call);
}

//  Waiting calls join the multi while it has room, with what is left of
//  their time; those whose time ran out while waiting fail
static void
s_promote (xxl_bridge_call_t *self)
{
    call_t *call;
    while (zlistx_size (self->calls) < self->parallel
    &&     (call = (call_t *) zlistx_first (self->waiting))) {
        int64_t left = call->posted + call->timeout_ms - zclock_mono ();
        if (left <= 0) {
            s_call_fail (self, call, "timed out waiting for a connection to the executor"
                                     " (bridge/parallel calls on the wire)");
            continue;
        }
        zlistx_delete (self->waiting, call->handle);
        if (s_join (self, call, (long) left)) {
            call->handle = zlistx_add_end (self->waiting, call);
            s_call_fail (self, call, "libcurl refused the call");
        }
    }
}

//  Waiting calls past their time fail (looked at every CALL_SWEEP_MS)
static void
s_sweep (xxl_bridge_call_t *self)
{
    int64_t now = zclock_mono ();
    if (!zlistx_size (self->waiting) || now < self->next_sweep)
        return;
    self->next_sweep = now + CALL_SWEEP_MS;
    //  (collected first: a completion may post calls)
    zlist_t *late = zlist_new ();
    for (call_t *call = (call_t *) zlistx_first (self->waiting); call;
         call = (call_t *) zlistx_next (self->waiting))
        if (now >= call->posted + call->timeout_ms)
            zlist_append (late, call);
    for (call_t *call = (call_t *) zlist_first (late); call; call = (call_t *) zlist_next (late))
        s_call_fail (self, call, "timed out waiting for a connection to the executor"
                                 " (bridge/parallel calls on the wire)");
    zlist_destroy (&late);
}

size_t
xxl_bridge_call_count (xxl_bridge_call_t *self)
{
    return self->count;
}

int
xxl_bridge_call_fd (xxl_bridge_call_t *self, long *timeout_ms)
{
    if (zlistx_size (self->waiting) && (*timeout_ms < 0 || *timeout_ms > CALL_SWEEP_MS))
        *timeout_ms = CALL_SWEEP_MS;
    if (self->deadline >= 0) {
        int64_t wait = self->deadline - zclock_mono ();
        if (wait < 0)
            wait = 0;
        if (*timeout_ms < 0 || wait < *timeout_ms)
            *timeout_ms = (long) wait;
    }
    return self->epoll;
}

void
xxl_bridge_call_perform (xxl_bridge_call_t *self, bool ready)
{
    int running;
    //  (past CALL_EVENTS ready, the rest are the next turn's: the set's
    //  fd stays readable)
    struct epoll_event events [CALL_EVENTS];
    int count = ready? epoll_wait (self->epoll, events, CALL_EVENTS, 0): 0;
    for (int i = 0; i < count; i++) {
        int fd = events [i].data.fd;
        if ((size_t) fd < self->nfds && !(self->fds [fd] & FD_WATCHED)) {
            //  (a socket libcurl no longer watches: out of the set)
            epoll_ctl (self->epoll, EPOLL_CTL_DEL, fd, NULL);
            self->fds [fd] = 0;
            continue;
        }
        int what = ((events [i].events & EPOLLIN)? CURL_CSELECT_IN: 0)
                 | ((events [i].events & EPOLLOUT)? CURL_CSELECT_OUT: 0)
                 | ((events [i].events & (EPOLLERR | EPOLLHUP))? CURL_CSELECT_ERR: 0);
        curl_multi_socket_action (self->multi, fd, what, &running);
    }
    if (self->deadline >= 0 && zclock_mono () >= self->deadline) {
        self->deadline = -1;
        curl_multi_socket_action (self->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    }
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read (self->multi, &left))) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        call_t *call = NULL;
        curl_easy_getinfo (msg->easy_handle, CURLINFO_PRIVATE, (char **) &call);
        assert (call);
        long status = 0;
        char why [CURL_ERROR_SIZE + 64];
        why [0] = 0;
        if (msg->data.result == CURLE_OK)
            curl_easy_getinfo (call->easy, CURLINFO_RESPONSE_CODE, &status);
        else
        if (call->too_long)
            snprintf (why, sizeof why, "the executor's answer is longer than %d bytes",
                      CALL_ANSWER_MAX);
        else
            snprintf (why, sizeof why, "%s", *call->error? call->error
                                             : curl_easy_strerror (msg->data.result));
        call->done (call->arg, (int) status, call->answer, call->len, why);
        s_call_free (self, call);
    }
    s_promote (self);
    s_sweep (self);
}
