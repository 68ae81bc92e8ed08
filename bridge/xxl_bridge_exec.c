/*  xxl_bridge_exec.c -- the bridge's executors and their links.

    Part of xxl-bridge (xxl_bridge_int.h).  Each executor that registered
    (app and URL, within the allowed networks, under the executor limit)
    gets one DEALER per scheduler endpoint, REGISTERs on each every beat
    and on each new connection, and is unregistered once it has not
    called for expire_s; an expired one is freed once no call of its is in
    flight and no result of its is spooled (its links carry CALLBACKs as a
    draining agent's do).  The live ones are kept in bridge.executors for
    a restart.  Every message to a scheduler is framed here.
*/

#include "xxl_bridge_int.h"

static void s_link_open (bridge_t *self, link_t *link);

//  --------------------------------------------------------------------------
//  Messages to the schedulers

void
bridge_begin (bridge_t *self, const char *type, uint64_t id)
{
    xxl_enc_request (self->enc, type, id);
    if (*self->config->token)
        xxl_enc_kstr (self->enc, "accessToken", self->config->token);
}

void
bridge_reply_begin (bridge_t *self, uint64_t id, int code, const char *msg)
{
    xxl_enc_reply (self->enc, id, code, msg);
    if (*self->config->token)
        xxl_enc_kstr (self->enc, "accessToken", self->config->token);
}

int
bridge_send (bridge_t *self, link_t *link)
{
    size_t size;
    const void *data = xxl_enc_finish (self->enc, &size);
    //  (a send may take the signal of the socket's ZMQ_FD: the loop reads
    //  the link once more before it waits)
    link->check = true;
    if (!link->dealer || zmq_send (zsock_resolve (link->dealer), data, size, ZMQ_DONTWAIT) < 0)
        return -1;
    return 0;
}

void
bridge_reply (bridge_t *self, link_t *link, uint64_t id, int code, const char *msg)
{
    bridge_reply_begin (self, id, code, msg);
    bridge_send (self, link);
}

void
bridge_register (bridge_t *self, link_t *link, bool remove)
{
    uint64_t id = ++self->next_id;
    bridge_begin (self, remove? "UNREGISTER": "REGISTER", id);
    xxl_enc_kstr (self->enc, "registryGroup", "EXECUTOR");
    xxl_enc_kstr (self->enc, "registryKey", link->exec->app);
    xxl_enc_kstr (self->enc, "registryValue", link->exec->url);
    if (!remove) {
        //  The highest logId of the journal (all executors'): the scheduler
        //  moves its log ids past it (docs/protocol.md, REGISTER)
        int64_t accepted_max = xxl_journal_accepted_max (self->journal);
        if (accepted_max > 0)
            xxl_enc_kint (self->enc, "acceptedMax", accepted_max);
        if (!link->register_id)
            link->unanswered = zclock_mono ();
        link->register_id = id;
        link->register_sent = zclock_mono ();
    }
    bridge_send (self, link);
}

//  --------------------------------------------------------------------------
//  Executors and their links

static void
s_link_open (bridge_t *self, link_t *link)
{
    char err [256];
    zsock_t *dealer = xxl_transport_new (XXL_ROLE_AGENT_LINK);
    if (dealer && self->cert
    &&  xxl_transport_curve (dealer, XXL_ROLE_AGENT_LINK, self->cert, self->server_key,
                             err, sizeof err)) {
        zsys_error ("bridge: %s", err);
        zsock_destroy (&dealer);
    }
    if (!dealer)
        return;
    link->monitor = xxl_transport_monitor (dealer, ZMQ_EVENT_HANDSHAKE_SUCCEEDED
                                           | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL
                                           | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
                                           | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH);
    if (xxl_transport_attach (dealer, XXL_ROLE_AGENT_LINK, link->endpoint, NULL, 0,
                              err, sizeof err)) {
        zsys_error ("bridge: cannot connect to %s: %s", link->endpoint, err);
        if (link->monitor)
            zmq_close (link->monitor);
        link->monitor = NULL;
        zsock_destroy (&dealer);
        return;
    }
    link->dealer = dealer;
    size_t size = sizeof link->fd;
    if (zmq_getsockopt (zsock_resolve (dealer), ZMQ_FD, &link->fd, &size))
        link->fd = -1;
    link->check = true;
}

static void
s_link_close (link_t *link)
{
    if (link->monitor)
        zmq_close (link->monitor);
    link->monitor = NULL;
    zsock_destroy (&link->dealer);
    free (link->batch);
    link->batch = NULL;
    free ((void *) link->results);
    link->results = NULL;
    link->batch_cap = link->batch_count = link->batch_bytes = 0;
}

void
bridge_executor_free (void **item)
{
    executor_t *exec = (executor_t *) *item;
    if (!exec)
        return;
    //  (the bridge's nendpoints links; their count is kept in the first's
    //  endpoint array by the caller: links end at the one with no endpoint)
    for (link_t *link = exec->links; link && link->endpoint; link++)
        s_link_close (link);
    free (exec->links);
    free (exec->key);
    free (exec->app);
    free (exec->url);
    free (exec);
    *item = NULL;
}

static executor_t *
s_executor_new (bridge_t *self, const char *app, const char *url, const char *key)
{
    executor_t *exec = (executor_t *) zmalloc (sizeof *exec);
    exec->key = strdup (key);
    exec->app = strdup (app);
    exec->url = strdup (url);
    exec->links = (link_t *) zmalloc ((self->nendpoints + 1) * sizeof (link_t));
    for (size_t i = 0; i < self->nendpoints; i++) {
        exec->links [i].exec = exec;
        exec->links [i].endpoint = self->endpoints [i];
        s_link_open (self, exec->links + i);
        bridge_register (self, exec->links + i, false);
    }
    return exec;
}

//  The live executors are kept in LOGDIR/bridge.executors ("APP\tURL"
//  lines, rewritten whole after a change, at most once per
//  BRIDGE_SAVE_EVERY_MS: bridge_executors_flush), so that a restarted
//  bridge registers them with the schedulers at once instead of at their
//  next registry call (up to 30 s later, while their runs would count as
//  lost and new runs find no address).  Each expires as usual unless it
//  calls.
static void
s_executors_save (bridge_t *self)
{
    self->executors_dirty = true;
}

void
bridge_executors_flush (bridge_t *self, bool now)
{
    int64_t at = zclock_mono ();
    if (!self->executors_dirty
    ||  (!now && self->executors_saved && at - self->executors_saved < BRIDGE_SAVE_EVERY_MS))
        return;
    self->executors_dirty = false;
    self->executors_saved = at;
    char *path = zsys_sprintf ("%s/bridge.executors", self->config->logdir);
    char *tmp = zsys_sprintf ("%s.new", path);
    FILE *file = fopen (tmp, "w");
    bool ok = file != NULL;
    for (executor_t *exec = file? (executor_t *) zhashx_first (self->executors): NULL; exec;
         exec = (executor_t *) zhashx_next (self->executors))
        if (!exec->expired)
            fprintf (file, "%s\n", exec->key);
    if (file)
        ok = fclose (file) == 0;
    if (!ok || rename (tmp, path))
        zsys_warning ("bridge: cannot write %s: %s", path, strerror (errno));
    zstr_free (&tmp);
    zstr_free (&path);
}

void
bridge_executors_load (bridge_t *self)
{
    char *path = zsys_sprintf ("%s/bridge.executors", self->config->logdir);
    FILE *file = fopen (path, "r");
    char line [2 * XXL_WIRE_NAME_MAX + 8];
    size_t count = 0;
    while (file && fgets (line, sizeof line, file)) {
        line [strcspn (line, "\n")] = 0;
        char *tab = strchr (line, '\t'), why [256];
        if (!tab || zhashx_lookup (self->executors, line)
        ||  zhashx_size (self->executors) >= (size_t) self->config->executors_max)
            continue;
        *tab = 0;
        if (!*line || xxl_bridge_net_check (self->net, tab + 1, why, sizeof why))
            continue;               //  (--executors may have narrowed)
        char *key = zsys_sprintf ("%s\t%s", line, tab + 1);
        executor_t *exec = s_executor_new (self, line, tab + 1, key);
        exec->seen = zclock_mono ();
        zhashx_insert (self->executors, key, exec);
        zstr_free (&key);
        count++;
    }
    if (file)
        fclose (file);
    if (count)
        zsys_info ("bridge: %zu executor(s) of the last run registered again (each expires in"
                   " %d s unless it calls)", count, self->config->expire_s);
    zstr_free (&path);
}

//  Logs a line at most once per BRIDGE_LOG_EVERY_MS for its kind, with the
//  count of those held back
void
bridge_ratelog (int64_t *last, size_t *held, const char *line)
{
    bridge_ratelog_at (last, held, false, line);
}

void
bridge_ratelog_at (int64_t *last, size_t *held, bool info, const char *line)
{
    int64_t now = zclock_mono ();
    if (*last && now - *last < BRIDGE_LOG_EVERY_MS) {
        (*held)++;
        return;
    }
    const char *more = *held? " more like it since the last line)": "";
    char count [48] = "";
    if (*held)
        snprintf (count, sizeof count, " (and %zu", *held);
    if (info)
        zsys_info ("bridge: %s%s%s", line, count, more);
    else
        zsys_warning ("bridge: %s%s%s", line, count, more);
    *last = now;
    *held = 0;
}

int
bridge_on_registry (void *arg, const xxl_wire_registry_t *registry, bool remove, const char *peer,
               char *why, size_t whylen)
{
    bridge_t *self = (bridge_t *) arg;
    char line [700];
    if (xxl_bridge_net_check (self->net, registry->value, why, whylen)) {
        snprintf (line, sizeof line, "registry of %s at %s from %s refused: %s", registry->key,
                  registry->value, peer, why);
        bridge_ratelog (&self->refused_logged, &self->refused_held, line);
        return 500;
    }
    char *key = zsys_sprintf ("%s\t%s", registry->key, registry->value);
    executor_t *exec = (executor_t *) zhashx_lookup (self->executors, key);
    int code = 0;
    if (remove) {
        if (exec && !exec->expired) {
            snprintf (line, sizeof line, "executor %s at %s removed itself", exec->app,
                      exec->url);
            bridge_ratelog_at (&self->flip_logged, &self->flip_held, true, line);
            exec->expired = true;
            for (size_t i = 0; i < self->nendpoints; i++)
                bridge_register (self, exec->links + i, true);
            s_executors_save (self);
        }
    }
    else
    if (exec) {
        exec->seen = zclock_mono ();
        if (exec->expired) {
            snprintf (line, sizeof line, "executor %s at %s is back", exec->app, exec->url);
            bridge_ratelog_at (&self->flip_logged, &self->flip_held, true, line);
            exec->expired = false;
            for (size_t i = 0; i < self->nendpoints; i++)
                bridge_register (self, exec->links + i, false);
            s_executors_save (self);
        }
    }
    else
    if (zhashx_size (self->executors) >= (size_t) self->config->executors_max) {
        snprintf (why, whylen, "the bridge holds its limit of %d executors (bridge/executors_max)",
                  self->config->executors_max);
        snprintf (line, sizeof line, "registry of %s at %s refused: %s", registry->key,
                  registry->value, why);
        bridge_ratelog (&self->refused_logged, &self->refused_held, line);
        code = 500;
    }
    else {
        exec = s_executor_new (self, registry->key, registry->value, key);
        exec->seen = zclock_mono ();
        zhashx_insert (self->executors, key, exec);
        zsys_info ("bridge: executor %s at %s registered (from %s)", exec->app, exec->url, peer);
        s_executors_save (self);
    }
    zstr_free (&key);
    return code;
}

//  Runs each time the loop turns: executors not heard from for expire_s
//  are unregistered; expired ones with nothing left are freed
void
bridge_executors_check (bridge_t *self)
{
    int64_t now = zclock_mono ();
    bool forgotten = false;
    zlist_t *gone = zlist_new ();
    //  (keys compared as strings: the routes hold copies of their own)
    zlist_comparefn (gone, (zlist_compare_fn *) strcmp);
    for (executor_t *exec = (executor_t *) zhashx_first (self->executors); exec;
         exec = (executor_t *) zhashx_next (self->executors)) {
        if (!exec->expired && now - exec->seen > self->config->expire_s * 1000LL) {
            zsys_info ("bridge: executor %s at %s not heard from for %d s: unregistered",
                       exec->app, exec->url, self->config->expire_s);
            exec->expired = true;
            for (size_t i = 0; i < self->nendpoints; i++)
                bridge_register (self, exec->links + i, true);
            forgotten = true;       //  (no longer one to register at a restart)
        }
        if (exec->expired && exec->calls == 0)
            zlist_append (gone, exec->key);
    }
    if (zlist_size (gone)) {
        //  (an expired executor stays while a result of its is spooled:
        //  its links still carry CALLBACKs, as a draining agent's do)
        for (const xxl_result_t *r = xxl_spool_first (self->spool); r;
             r = xxl_spool_next (self->spool)) {
            const char *key = xxl_bridge_routes_get (self->routes, r->log_id);
            if (key)
                zlist_remove (gone, (void *) key);
        }
    }
    for (const char *key = (const char *) zlist_first (gone); key;
         key = (const char *) zlist_next (gone)) {
        executor_t *exec = (executor_t *) zhashx_lookup (self->executors, key);
        if (exec && now - exec->seen > 2 * self->config->expire_s * 1000LL) {
            zsys_info ("bridge: executor %s at %s forgotten", exec->app, exec->url);
            zhashx_delete (self->executors, key);
            forgotten = true;
        }
    }
    if (forgotten)
        s_executors_save (self);
    zlist_destroy (&gone);
}

void
bridge_link_events (bridge_t *self, link_t *link)
{
    uint16_t event;
    uint32_t value;
    while (link->monitor && xxl_transport_event (link->monitor, &event, &value) == 0) {
        if (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
            link->heard = zclock_mono ();
            if (!link->exec->expired)
                bridge_register (self, link, false);
            continue;
        }
        char why [256], line [512];
        bool final = false;
        xxl_transport_handshake_failed (event, value, self->cert != NULL, why, sizeof why,
                                        &final);
        snprintf (line, sizeof line, "the %shandshake with %s (executor %s) failed: %s",
                  self->cert? "CURVE ": "", link->endpoint, link->exec->url, why);
        bridge_ratelog (&self->handshake_logged, &self->handshake_held, line);
        if (final || event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL)
            link->broken = true;
    }
}

bool
bridge_link_stale (bridge_t *self, link_t *link, int64_t now)
{
    int64_t wait = 2 * self->config->beat_s * 1000LL;
    if (wait < 15000)
        wait = 15000;
    return link->broken
        || (link->register_id && now - link->unanswered > wait && now - link->heard > wait);
}

void
bridge_link_replace (bridge_t *self, link_t *link)
{
    assert (link->batch_id == 0);
    zsys_info ("bridge: a new connection to %s for executor %s (%s)", link->endpoint,
               link->exec->url, link->broken? "its handshake failed": "no answer");
    s_link_close (link);
    link->broken = false;
    link->registered = false;
    link->register_id = 0;
    link->heard = zclock_mono ();
    s_link_open (self, link);
    if (!link->exec->expired)
        bridge_register (self, link, false);
}
