/*  xxl_alarms.c -- the scheduler's alarm plugins and alarm sender.

    Describes the alarm ABI to the plugin loader (xxl_plugins: dlopen,
    header and duplicate checks, the name-sorted table of kinds).  One worker thread takes alarms from a bounded queue (mutex +
    condition variable), sends each to its targets through the kinds, and
    puts the results on a list whose pending state an eventfd mirrors, so
    the engine can poll it.  See xxl_alarms.h for the contract.
*/

#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include "xxl_alarms.h"
#include "xxl_openssl.h"
#include "xxl_plugins.h"

#define S_KIND_MAX      32              //  longest kind name
#define S_ERR_MAX       512             //  a send's reason

//  One queued alarm: a deep copy
typedef struct s_job_t {
    struct s_job_t *next;
    int64_t tag;
    xxl_alarm_t alarm;
    char *strings [7];                  //  what alarm's strings point to
    char *targets;
} s_job_t;

typedef struct s_result_t {
    struct s_result_t *next;
    int64_t tag;
    int ok;
    char *report;
} s_result_t;

struct _xxl_alarms_t {
    const xxl_alarm_host_t *host;
    xxl_plugins_t *plugins;             //  the kinds, by name

    pthread_mutex_t mutex;
    pthread_cond_t cond;                //  signals the worker
    pthread_t worker;
    int started;
    int stopping;
    struct timespec drain_until;        //  CLOCK_MONOTONIC, set when stopping
    s_job_t *head, *tail;               //  queue
    size_t queued;
    size_t limit;
    int drain_ms;
    s_result_t *rhead, *rtail;          //  results
    int efd;                            //  eventfd: nonzero while results pending
};

#if defined (__GNUC__)
__attribute__ ((format (printf, 3, 4)))
#endif
static void
s_log (xxl_alarms_t *self, int level, const char *format, ...)
{
    va_list args;
    va_start (args, format);
    if (XXL_ALARM_HOST_HAS (self->host, vlog))
        self->host->vlog (level, format, args);
    else {
        vfprintf (stderr, format, args);
        fputc ('\n', stderr);
    }
    va_end (args);
}

//  --------------------------------------------------------------------------
//  The alarm ABI, for the plugin loader

static const char *
s_validate (void *ctx, const void *desc_, xxl_plugins_about_t *about)
{
    (void) ctx;
    const xxl_alarm_plugin_t *desc = (const xxl_alarm_plugin_t *) desc_;
    if (!desc->kinds)
        return "it lists no alarm kinds";
    about->name = desc->name;
    about->version = desc->version;
    about->items = desc->kinds;
    return NULL;
}

static int
s_scheme_char (char c, int first)
{
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))
        return 1;
    return !first && ((c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.');
}

//  Kind names: a letter, then letters, digits, '_', '-', '.'; at most 32
static int
s_name_valid (const char *name)
{
    size_t len = 0;
    if (!name)
        return 0;
    for (; name [len]; len++)
        if (!s_scheme_char (name [len], len == 0) || len >= S_KIND_MAX)
            return 0;
    return len > 0;
}

static int
s_check_item (void *ctx, const void *item, char *why, size_t whylen)
{
    (void) ctx;
    const xxl_alarm_kind_t *kind = (const xxl_alarm_kind_t *) item;
    if (!s_name_valid (kind->name)) {
        snprintf (why, whylen, "kind name '%.80s' is invalid "
                  "(a letter, then letters, digits, '_', '-', '.'; at most %d)",
                  kind->name, S_KIND_MAX);
        return -1;
    }
    if (!kind->send) {
        snprintf (why, whylen, "kind %s has no send function", kind->name);
        return -1;
    }
    return 0;
}

static int
s_init (void *ctx, const void *desc_, void **state, const char **error)
{
    const xxl_alarm_plugin_t *desc = (const xxl_alarm_plugin_t *) desc_;
    if (desc->init && !(*state = desc->init ((const xxl_alarm_host_t *) ctx, error)))
        return -1;
    return 0;
}

static void
s_destroy (void *ctx, const void *desc_, void *state)
{
    (void) ctx;
    const xxl_alarm_plugin_t *desc = (const xxl_alarm_plugin_t *) desc_;
    if (desc->destroy)
        desc->destroy (state);
}

static const xxl_plugins_abi_t s_abi = {
    .entry = XXL_ALARM_ENTRY,
    .abi_version = XXL_ALARM_ABI_VERSION,
    .min_size = offsetof (xxl_alarm_plugin_t, kinds) + sizeof (const xxl_alarm_kind_t *),
    .item_size = sizeof (xxl_alarm_kind_t),
    .plugin = "alarm plugin",
    .not_one = "not an alarm plugin",
    .abi = "alarm ABI",
    .folder = "alarms folder",
    .duplicate = "alarm kind",
    .usable = "alarm kind",
    .loaded = "alarm kind",
    .validate = s_validate,
    .check_item = s_check_item,
    .init = s_init,
    .destroy = s_destroy
};

//  --------------------------------------------------------------------------
//  Registry

static void *s_worker (void *arg);

xxl_alarms_t *
xxl_alarms_new (const char *dir, const xxl_alarm_host_t *host)
{
    if (!host)
        host = xxl_alarms_default_host ();
    if (host->abi_version != XXL_ALARM_ABI_VERSION
    ||  host->size < offsetof (xxl_alarm_host_t, vlog) + sizeof (host->vlog))
        return NULL;
    xxl_alarms_t *self = (xxl_alarms_t *) calloc (1, sizeof (xxl_alarms_t));
    if (!self)
        return NULL;
    self->host = host;
    self->limit = XXL_ALARMS_QUEUE_LIMIT;
    self->efd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
    pthread_mutex_init (&self->mutex, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init (&attr);
    pthread_condattr_setclock (&attr, CLOCK_MONOTONIC);
    pthread_cond_init (&self->cond, &attr);
    pthread_condattr_destroy (&attr);
    if (self->efd < 0) {
        s_log (self, XXL_ALARM_LOG_ERROR, "alarms: cannot create eventfd: %s", strerror (errno));
        xxl_alarms_destroy (&self);
        return NULL;
    }
    self->plugins = xxl_plugins_new (&s_abi, (void *) host,
                                     XXL_ALARM_HOST_HAS (host, vlog)? host->vlog: NULL);
    if (!self->plugins || (dir && xxl_alarms_load (self, dir) < 0)) {
        xxl_alarms_destroy (&self);
        return NULL;
    }
    if (pthread_create (&self->worker, NULL, s_worker, self) != 0) {
        s_log (self, XXL_ALARM_LOG_ERROR, "alarms: cannot start the alarm thread");
        xxl_alarms_destroy (&self);
        return NULL;
    }
    self->started = 1;
    return self;
}

static void
s_job_destroy (s_job_t **job_p)
{
    s_job_t *job = *job_p;
    if (!job)
        return;
    for (size_t i = 0; i < sizeof job->strings / sizeof job->strings [0]; i++)
        free (job->strings [i]);
    free (job->targets);
    free (job);
    *job_p = NULL;
}

void
xxl_alarms_destroy (xxl_alarms_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    xxl_alarms_t *self = *self_p;
    if (self->started) {
        pthread_mutex_lock (&self->mutex);
        self->stopping = 1;
        clock_gettime (CLOCK_MONOTONIC, &self->drain_until);
        self->drain_until.tv_sec += self->drain_ms / 1000;
        self->drain_until.tv_nsec += (long) (self->drain_ms % 1000) * 1000000;
        if (self->drain_until.tv_nsec >= 1000000000) {
            self->drain_until.tv_sec++;
            self->drain_until.tv_nsec -= 1000000000;
        }
        pthread_cond_signal (&self->cond);
        pthread_mutex_unlock (&self->mutex);
        pthread_join (self->worker, NULL);
    }
    size_t dropped = 0;
    while (self->head) {
        s_job_t *job = self->head;
        self->head = job->next;
        s_job_destroy (&job);
        dropped++;
    }
    if (dropped)
        s_log (self, XXL_ALARM_LOG_WARNING,
               "alarms: %zu queued alarm(s) dropped at shutdown", dropped);
    while (self->rhead) {
        s_result_t *result = self->rhead;
        self->rhead = result->next;
        free (result->report);
        free (result);
    }
    xxl_plugins_destroy (&self->plugins);
    if (self->efd >= 0)
        close (self->efd);
    pthread_cond_destroy (&self->cond);
    pthread_mutex_destroy (&self->mutex);
    free (self);
    *self_p = NULL;
}

//  --------------------------------------------------------------------------
//  Kind table

//  The kind registered under name (of length len), and its plugin's state
static const xxl_alarm_kind_t *
s_find (xxl_alarms_t *self, const char *name, size_t len, void **state)
{
    if (!self || !name)
        return NULL;
    return (const xxl_alarm_kind_t *) xxl_plugins_find (self->plugins, name, len, state);
}

int
xxl_alarms_load_file (xxl_alarms_t *self, const char *path)
{
    return self? xxl_plugins_load_file (self->plugins, path): -1;
}

int
xxl_alarms_load (xxl_alarms_t *self, const char *dir)
{
    return self? xxl_plugins_load (self->plugins, dir): -1;
}

size_t
xxl_alarms_size (xxl_alarms_t *self)
{
    return self? xxl_plugins_size (self->plugins): 0;
}

char *
xxl_alarms_kinds (xxl_alarms_t *self)
{
    return xxl_plugins_names (self? self->plugins: NULL);
}

int
xxl_alarms_has_kind (xxl_alarms_t *self, const char *kind)
{
    return kind && s_find (self, kind, strlen (kind), NULL)? 1: 0;
}

//  --------------------------------------------------------------------------
//  Targets

//  One parsed target
typedef struct {
    char text [XXL_ALARMS_MAX_TARGET_LEN + 1];  //  the whole target, trimmed
    const xxl_alarm_kind_t *kind;       //  its kind, NULL when unknown
    void *state;                        //  its kind's plugin state
    const char *dest;                   //  points into text
} s_target_t;

//  Parses the next target of *cursor (advancing it).  Returns 1 with
//  target filled (kind NULL and err set when invalid), 0 when no target
//  is left.
static int
s_next_target (xxl_alarms_t *self, const char **cursor, s_target_t *target,
               char *err, size_t errlen)
{
    const char *at = *cursor;
    while (*at) {
        const char *end = strchr (at, ',');
        if (!end)
            end = at + strlen (at);
        const char *start = at;
        const char *stop = end;
        at = *end? end + 1: end;
        while (start < stop && (*start == ' ' || *start == '\t'))
            start++;
        while (stop > start && (stop [-1] == ' ' || stop [-1] == '\t'))
            stop--;
        if (start == stop)
            continue;                   //  empty target
        *cursor = at;
        target->kind = NULL;
        target->state = NULL;
        target->dest = NULL;
        size_t len = (size_t) (stop - start);
        if (len > XXL_ALARMS_MAX_TARGET_LEN) {
            memcpy (target->text, start, 60);
            strcpy (target->text + 60, "...");
            xxl_alarm_error (err, errlen, "alarm target '%s' is too long (%zu bytes, at most %d)",
                             target->text, len, XXL_ALARMS_MAX_TARGET_LEN);
            return 1;
        }
        memcpy (target->text, start, len);
        target->text [len] = 0;
        //  "kind:" prefix?
        size_t scheme = 0;
        while (scheme < len && s_scheme_char (target->text [scheme], scheme == 0))
            scheme++;
        int has_scheme = scheme > 0 && scheme < len && target->text [scheme] == ':';
        if (has_scheme
        &&  (target->kind = s_find (self, target->text, scheme, &target->state))) {
            target->dest = target->text + scheme + 1;
            return 1;
        }
        if (strchr (target->text, '@') && !strchr (target->text, ':')) {
            target->kind = s_find (self, "email", 5, &target->state);
            target->dest = target->text;
            if (!target->kind) {
                char *kinds = xxl_alarms_kinds (self);
                xxl_alarm_error (err, errlen,
                                 "alarm target '%s' is an email address but no email "
                                 "alarm plugin is loaded; known: %s",
                                 target->text, kinds? kinds: "");
                free (kinds);
            }
            return 1;
        }
        char *kinds = xxl_alarms_kinds (self);
        if (has_scheme)
            xxl_alarm_error (err, errlen, "unknown alarm kind '%.*s' in target '%s'; known: %s",
                             (int) scheme, target->text, target->text, kinds? kinds: "");
        else
            xxl_alarm_error (err, errlen,
                             "alarm target '%s' is neither kind:destination nor an email "
                             "address; known kinds: %s", target->text, kinds? kinds: "");
        free (kinds);
        return 1;
    }
    *cursor = at;
    return 0;
}

//  Checks one parsed target: kind known, destination non-empty, one line,
//  the kind's own check.  The reason names the target when whole is set.
static int
s_check_target (xxl_alarms_t *self, s_target_t *target, char *err, size_t errlen, int whole)
{
    if (!target->kind)
        return -1;                      //  err already set
    if (!*target->dest) {
        xxl_alarm_error (err, errlen, "alarm target '%s' has no destination", target->text);
        return -1;
    }
    for (const char *c = target->dest; *c; c++)
        if ((unsigned char) *c < 0x20 || *c == 0x7f) {
            xxl_alarm_error (err, errlen, "alarm target '%.80s' contains a control character",
                             target->text);
            return -1;
        }
    const xxl_alarm_kind_t *kind = target->kind;
    if (kind->check) {
        char reason [S_ERR_MAX] = "";
        if (kind->check (target->state, self->host, target->dest,
                         reason, sizeof reason) != 0) {
            reason [sizeof reason - 1] = 0;
            if (whole)
                xxl_alarm_error (err, errlen, "alarm target '%s': %s", target->text,
                                 reason [0]? reason: "invalid");
            else
                xxl_alarm_error (err, errlen, "%s", reason [0]? reason: "invalid target");
            return -1;
        }
    }
    return 0;
}

int
xxl_alarms_check_targets (xxl_alarms_t *self, const char *targets, char *err, size_t errlen)
{
    if (err && errlen)
        err [0] = 0;
    if (!self)
        return -1;
    if (!targets)
        return 0;
    s_target_t *target = (s_target_t *) malloc (sizeof (s_target_t));
    if (!target) {
        xxl_alarm_error (err, errlen, "out of memory");
        return -1;
    }
    const char *cursor = targets;
    int count = 0, rc = 0;
    while (rc == 0 && s_next_target (self, &cursor, target, err, errlen)) {
        if (++count > XXL_ALARMS_MAX_TARGETS) {
            xxl_alarm_error (err, errlen, "too many alarm targets (at most %d)",
                             XXL_ALARMS_MAX_TARGETS);
            rc = -1;
        }
        else
            rc = s_check_target (self, target, err, errlen, 1);
    }
    free (target);
    return rc;
}

//  --------------------------------------------------------------------------
//  Sending

//  A growing string
typedef struct {
    char *data;
    size_t len, cap;
    int failed;
} s_buf_t;

static void
s_buf_add (s_buf_t *buf, const char *data, size_t len)
{
    if (buf->failed)
        return;
    if (buf->len + len + 1 > buf->cap) {
        size_t cap = buf->cap? buf->cap: 256;
        while (cap < buf->len + len + 1)
            cap *= 2;
        char *more = (char *) realloc (buf->data, cap);
        if (!more) {
            buf->failed = 1;
            return;
        }
        buf->data = more;
        buf->cap = cap;
    }
    memcpy (buf->data + buf->len, data, len);
    buf->len += len;
    buf->data [buf->len] = 0;
}

#if defined (__GNUC__)
__attribute__ ((format (printf, 2, 3)))
#endif
static void
s_buf_printf (s_buf_t *buf, const char *format, ...)
{
    char line [S_ERR_MAX + XXL_ALARMS_MAX_TARGET_LEN + 64];
    va_list args;
    va_start (args, format);
    int n = vsnprintf (line, sizeof line, format, args);
    va_end (args);
    if (n < 0)
        return;
    s_buf_add (buf, line, (size_t) n < sizeof line? (size_t) n: sizeof line - 1);
}

//  Sends alarm (json rendered) to every target; the report goes to buf.
//  Returns 1 when all succeeded.
static int
s_send_all (xxl_alarms_t *self, const xxl_alarm_t *alarm, const char *targets, s_buf_t *buf)
{
    s_target_t *target = (s_target_t *) malloc (sizeof (s_target_t));
    if (!target) {
        buf->failed = 1;
        return 0;
    }
    const char *cursor = targets? targets: "";
    int ok = 1, count = 0;
    char err [S_ERR_MAX];
    while (err [0] = 0, s_next_target (self, &cursor, target, err, sizeof err)) {
        if (buf->len)
            s_buf_add (buf, "\n", 1);
        if (++count > XXL_ALARMS_MAX_TARGETS) {
            s_buf_printf (buf, "%s: failed: too many alarm targets (at most %d)",
                          target->text, XXL_ALARMS_MAX_TARGETS);
            ok = 0;
            break;
        }
        if (s_check_target (self, target, err, sizeof err, 0) != 0) {
            if (target->kind)
                s_buf_printf (buf, "%s %s: failed: %s", target->kind->name,
                              target->dest, err);
            else
                s_buf_printf (buf, "%s: failed: %s", target->text, err);
            ok = 0;
            continue;
        }
        const xxl_alarm_kind_t *kind = target->kind;
        err [0] = 0;
        int rc = kind->send (target->state, self->host, alarm,
                             target->dest, err, sizeof err);
        err [sizeof err - 1] = 0;
        //  Keep the report one line per target
        for (char *c = err; *c; c++)
            if (*c == '\n' || *c == '\r')
                *c = ' ';
        if (rc == 0)
            s_buf_printf (buf, "%s %s: sent", kind->name, target->dest);
        else {
            s_buf_printf (buf, "%s %s: failed: %s", kind->name, target->dest,
                          err [0]? err: "no reason given");
            ok = 0;
        }
    }
    free (target);
    if (count == 0)
        s_buf_add (buf, "no alarm target", 15);
    return ok;
}

int
xxl_alarms_send (xxl_alarms_t *self, const xxl_alarm_t *alarm, const char *targets,
                 char **report_p)
{
    if (report_p)
        *report_p = NULL;
    if (!self || !alarm)
        return -1;
    xxl_alarm_t copy = *alarm;
    copy.size = sizeof (xxl_alarm_t);
    char *json = NULL;
    if (!alarm->json) {
        json = xxl_alarms_json (alarm);
        if (!json)
            return -1;
        copy.json = json;
    }
#define S_NONNULL(f) if (!copy.f) copy.f = ""
    S_NONNULL (job_desc); S_NONNULL (app); S_NONNULL (trigger_msg);
    S_NONNULL (handle_msg); S_NONNULL (executor_address);
#undef S_NONNULL
    s_buf_t buf = { NULL, 0, 0, 0 };
    int ok = s_send_all (self, &copy, targets, &buf);
    free (json);
    if (buf.failed) {
        free (buf.data);
        return -1;
    }
    if (report_p)
        *report_p = buf.data;
    else
        free (buf.data);
    return ok;
}

static char *
s_strdup (const char *text)
{
    return strdup (text? text: "");
}

int
xxl_alarms_submit (xxl_alarms_t *self, const xxl_alarm_t *alarm, const char *targets,
                   int64_t tag)
{
    if (!self || !alarm || !self->started)
        return -1;
    //  Refuse early, before copying, when full
    pthread_mutex_lock (&self->mutex);
    int full = self->stopping || self->queued >= self->limit;
    pthread_mutex_unlock (&self->mutex);
    if (full)
        return -1;
    s_job_t *job = (s_job_t *) calloc (1, sizeof (s_job_t));
    if (!job)
        return -1;
    job->tag = tag;
    job->alarm = *alarm;
    job->alarm.size = sizeof (xxl_alarm_t);
    job->strings [0] = s_strdup (alarm->job_desc);
    job->strings [1] = s_strdup (alarm->app);
    job->strings [2] = s_strdup (alarm->trigger_msg);
    job->strings [3] = s_strdup (alarm->handle_msg);
    job->strings [4] = s_strdup (alarm->executor_address);
    job->strings [5] = alarm->json? strdup (alarm->json): xxl_alarms_json (alarm);
    job->targets = s_strdup (targets);
    int ok = job->targets != NULL;
    for (int i = 0; i < 6; i++)
        if (!job->strings [i])
            ok = 0;
    if (!ok) {
        s_job_destroy (&job);
        return -1;
    }
    job->alarm.job_desc = job->strings [0];
    job->alarm.app = job->strings [1];
    job->alarm.trigger_msg = job->strings [2];
    job->alarm.handle_msg = job->strings [3];
    job->alarm.executor_address = job->strings [4];
    job->alarm.json = job->strings [5];

    pthread_mutex_lock (&self->mutex);
    if (self->stopping || self->queued >= self->limit) {
        pthread_mutex_unlock (&self->mutex);
        s_job_destroy (&job);
        return -1;
    }
    if (self->tail)
        self->tail->next = job;
    else
        self->head = job;
    self->tail = job;
    self->queued++;
    pthread_cond_signal (&self->cond);
    pthread_mutex_unlock (&self->mutex);
    return 0;
}

//  1 when the drain time is over (called under the mutex, when stopping)
static int
s_drain_over (xxl_alarms_t *self)
{
    struct timespec now;
    clock_gettime (CLOCK_MONOTONIC, &now);
    return now.tv_sec > self->drain_until.tv_sec
        || (now.tv_sec == self->drain_until.tv_sec && now.tv_nsec >= self->drain_until.tv_nsec);
}

static void *
s_worker (void *arg)
{
    xxl_alarms_t *self = (xxl_alarms_t *) arg;
    //  A plugin writing to a peer that went away must not kill the
    //  scheduler: SIGPIPE raised on this thread stays pending, harmless
    sigset_t pipe_set;
    sigemptyset (&pipe_set);
    sigaddset (&pipe_set, SIGPIPE);
    pthread_sigmask (SIG_BLOCK, &pipe_set, NULL);
    pthread_mutex_lock (&self->mutex);
    while (1) {
        while (!self->head && !self->stopping)
            pthread_cond_wait (&self->cond, &self->mutex);
        if (!self->head || (self->stopping && s_drain_over (self)))
            break;
        s_job_t *job = self->head;
        self->head = job->next;
        if (!self->head)
            self->tail = NULL;
        self->queued--;
        pthread_mutex_unlock (&self->mutex);

        s_buf_t buf = { NULL, 0, 0, 0 };
        int ok = s_send_all (self, &job->alarm, job->targets, &buf);
        s_result_t *result = (s_result_t *) calloc (1, sizeof (s_result_t));
        if (result) {
            result->tag = job->tag;
            result->ok = ok && !buf.failed;
            result->report = buf.failed? strdup ("out of memory"): buf.data;
            if (buf.failed)
                free (buf.data);
        }
        else {
            free (buf.data);
            s_log (self, XXL_ALARM_LOG_ERROR,
                   "alarms: out of memory; result of alarm %lld lost", (long long) job->tag);
        }
        s_job_destroy (&job);

        pthread_mutex_lock (&self->mutex);
        if (result) {
            if (self->rtail)
                self->rtail->next = result;
            else
                self->rhead = result;
            self->rtail = result;
            uint64_t one = 1;
            if (write (self->efd, &one, sizeof one) < 0) {
                //  Counter saturated: it is readable anyway
            }
        }
    }
    pthread_mutex_unlock (&self->mutex);
    xxl_openssl_thread_stop ();
    return NULL;
}

int
xxl_alarms_fd (xxl_alarms_t *self)
{
    return self? self->efd: -1;
}

int
xxl_alarms_take (xxl_alarms_t *self, int64_t *tag, int *ok, char **report_p)
{
    if (report_p)
        *report_p = NULL;
    if (!self)
        return -1;
    pthread_mutex_lock (&self->mutex);
    s_result_t *result = self->rhead;
    if (result) {
        self->rhead = result->next;
        if (!self->rhead) {
            self->rtail = NULL;
            uint64_t count;
            if (read (self->efd, &count, sizeof count) < 0) {
                //  Already zero
            }
        }
    }
    pthread_mutex_unlock (&self->mutex);
    if (!result)
        return -1;
    if (tag)
        *tag = result->tag;
    if (ok)
        *ok = result->ok;
    if (report_p)
        *report_p = result->report;
    else
        free (result->report);
    free (result);
    return 0;
}

size_t
xxl_alarms_queued (xxl_alarms_t *self)
{
    if (!self)
        return 0;
    pthread_mutex_lock (&self->mutex);
    size_t queued = self->queued;
    pthread_mutex_unlock (&self->mutex);
    return queued;
}

void
xxl_alarms_set_queue_limit (xxl_alarms_t *self, size_t limit)
{
    if (!self || limit == 0)
        return;
    pthread_mutex_lock (&self->mutex);
    self->limit = limit;
    pthread_mutex_unlock (&self->mutex);
}

void
xxl_alarms_set_drain_ms (xxl_alarms_t *self, int drain_ms)
{
    if (!self || drain_ms < 0)
        return;
    pthread_mutex_lock (&self->mutex);
    self->drain_ms = drain_ms;
    pthread_mutex_unlock (&self->mutex);
}

//  --------------------------------------------------------------------------
//  JSON

//  Length of the valid UTF-8 sequence at s (n bytes left), 0 when invalid
static size_t
s_utf8_len (const unsigned char *s, size_t n)
{
    unsigned char c = s [0];
    size_t len;
    uint32_t min, code;
    if (c < 0x80)
        return 1;
    else
    if ((c & 0xe0) == 0xc0) { len = 2; min = 0x80; code = c & 0x1f; }
    else
    if ((c & 0xf0) == 0xe0) { len = 3; min = 0x800; code = c & 0x0f; }
    else
    if ((c & 0xf8) == 0xf0) { len = 4; min = 0x10000; code = c & 0x07; }
    else
        return 0;
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s [i] & 0xc0) != 0x80)
            return 0;
        code = (code << 6) | (s [i] & 0x3f);
    }
    if (code < min || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff))
        return 0;
    return len;
}

static void
s_json_string (s_buf_t *buf, const char *text)
{
    const unsigned char *s = (const unsigned char *) (text? text: "");
    size_t n = strlen ((const char *) s);
    s_buf_add (buf, "\"", 1);
    size_t i = 0;
    while (i < n) {
        unsigned char c = s [i];
        if (c == '"' || c == '\\') {
            char esc [2] = { '\\', (char) c };
            s_buf_add (buf, esc, 2);
            i++;
        }
        else
        if (c < 0x20 || c == 0x7f) {
            char esc [8];
            const char *named = c == '\n'? "\\n": c == '\r'? "\\r": c == '\t'? "\\t": NULL;
            if (named)
                s_buf_add (buf, named, 2);
            else {
                snprintf (esc, sizeof esc, "\\u%04x", c);
                s_buf_add (buf, esc, 6);
            }
            i++;
        }
        else {
            size_t len = s_utf8_len (s + i, n - i);
            if (len == 0) {
                s_buf_add (buf, "\xef\xbf\xbd", 3);    //  U+FFFD
                i++;
            }
            else {
                s_buf_add (buf, (const char *) s + i, len);
                i += len;
            }
        }
    }
    s_buf_add (buf, "\"", 1);
}

char *
xxl_alarms_json (const xxl_alarm_t *alarm)
{
    if (!alarm)
        return NULL;
    s_buf_t buf = { NULL, 0, 0, 0 };
    s_buf_printf (&buf, "{\"title\":\"xxl job alarm\",\"jobId\":%lld,\"jobDesc\":",
                  (long long) alarm->job_id);
    s_json_string (&buf, alarm->job_desc);
    s_buf_add (&buf, ",\"appname\":", 11);
    s_json_string (&buf, alarm->app);
    s_buf_printf (&buf, ",\"logId\":%lld,\"triggerTime\":%lld,\"triggerCode\":%d,\"triggerMsg\":",
                  (long long) alarm->log_id, (long long) alarm->trigger_time,
                  alarm->trigger_code);
    s_json_string (&buf, alarm->trigger_msg);
    s_buf_printf (&buf, ",\"handleCode\":%d,\"handleMsg\":", alarm->handle_code);
    s_json_string (&buf, alarm->handle_msg);
    s_buf_add (&buf, ",\"executorAddress\":", 19);
    s_json_string (&buf, alarm->executor_address);
    s_buf_printf (&buf, ",\"executorFailRetryCount\":%d}", alarm->retry_count);
    if (buf.failed) {
        free (buf.data);
        return NULL;
    }
    return buf.data;
}

//  --------------------------------------------------------------------------
//  Default host

static int64_t
s_now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
s_vlog (int level, const char *format, va_list args)
{
    if (level >= XXL_ALARM_LOG_DEBUG)
        return;                         //  the default host keeps quiet on debug
    const char *tag = level <= XXL_ALARM_LOG_ERROR? "E"
                    : level == XXL_ALARM_LOG_WARNING? "W": "I";
    fprintf (stderr, "%s: alarms: ", tag);
    vfprintf (stderr, format, args);
    fputc ('\n', stderr);
}

const xxl_alarm_host_t *
xxl_alarms_default_host (void)
{
    static const xxl_alarm_host_t s_host = {
        XXL_ALARM_ABI_VERSION, sizeof (xxl_alarm_host_t),
        s_now_ms, s_vlog, NULL, NULL
    };
    return &s_host;
}
