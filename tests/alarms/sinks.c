/*  sinks.c -- a tiny HTTP listener and a tiny SMTP sink for the alarm tests.

    One thread per sink accepts connections one at a time on 127.0.0.1.
    The HTTP side reads a request (headers, Content-Length body), records
    it and answers with the configured status, or never answers (HANG)
    until the client gives up.  A non-2xx answer's body is "boom" or the
    one set (sink_set_error_body); a 3xx one also points Location at
    /redirected on the same sink.  The SMTP side speaks enough of RFC 5321
    for libcurl: 220, EHLO/HELO, AUTH PLAIN, MAIL FROM, RCPT TO, DATA /
    354 / ".", RSET, NOOP, QUIT; it undoes dot-stuffing and records one
    mail per connection.  A pipe wakes the thread to stop.  See sinks.h.
*/

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "sinks.h"

#define S_RECORDS   32
#define S_IO_MS     10000               //  bound on one read

struct sink_t {
    int smtp;
    int listener;
    int port;
    int wake [2];
    pthread_t thread;
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    int mode, status;
    char error_body [256];              //  of non-2xx answers
    char *body;                         //  of 2xx answers, NULL: "ok"
    sink_record_t records [S_RECORDS];
    int count;
};

//  Reads into buf (room bytes) from fd; waits up to S_IO_MS and wakes on
//  stop.  Returns bytes read, 0 on close, -1 on error/stop/timeout.
static ssize_t
s_read (sink_t *self, int fd, char *buf, size_t room, int forever)
{
    struct pollfd items [2] = { { fd, POLLIN, 0 }, { self->wake [0], POLLIN, 0 } };
    int rc = poll (items, 2, forever? -1: S_IO_MS);
    if (rc <= 0 || items [1].revents)
        return -1;
    return read (fd, buf, room);
}

static void
s_write (int fd, const char *text)
{
    size_t len = strlen (text), sent = 0;
    while (sent < len) {
        ssize_t n = send (fd, text + sent, len - sent, MSG_NOSIGNAL);
        if (n <= 0)
            return;
        sent += (size_t) n;
    }
}

static void
s_record (sink_t *self, const sink_record_t *record)
{
    pthread_mutex_lock (&self->mutex);
    if (self->count < S_RECORDS)
        self->records [self->count++] = *record;
    pthread_cond_broadcast (&self->cond);
    pthread_mutex_unlock (&self->mutex);
}

static void
s_copy (char *to, size_t tolen, const char *from, size_t len)
{
    if (len >= tolen)
        len = tolen - 1;
    memcpy (to, from, len);
    to [len] = 0;
}

//  --------------------------------------------------------------------------
//  HTTP

static void
s_http (sink_t *self, int fd)
{
    static char data [SINK_TEXT * 2];
    size_t len = 0;
    char *end = NULL;
    while (!end) {
        if (len + 1 >= sizeof data)
            return;
        ssize_t n = s_read (self, fd, data + len, sizeof data - len - 1, 0);
        if (n <= 0)
            return;
        len += (size_t) n;
        data [len] = 0;
        end = strstr (data, "\r\n\r\n");
    }
    sink_record_t *record = (sink_record_t *) calloc (1, sizeof (sink_record_t));
    if (!record)
        return;
    size_t head = (size_t) (end - data) + 4;
    sscanf (data, "%15s %255s", record->method, record->path);
    long length = 0;
    for (char *line = strstr (data, "\r\n"); line && line < end; line = strstr (line + 2, "\r\n")) {
        char *name = line + 2;
        if (strncasecmp (name, "Content-Length:", 15) == 0)
            length = strtol (name + 15, NULL, 10);
        else
        if (strncasecmp (name, "Content-Type:", 13) == 0) {
            char *value = name + 13;
            while (*value == ' ')
                value++;
            s_copy (record->content_type, sizeof record->content_type, value,
                    strcspn (value, "\r\n"));
        }
        else
        if (strncasecmp (name, "Authorization:", 14) == 0) {
            char *value = name + 14;
            while (*value == ' ')
                value++;
            s_copy (record->authorization, sizeof record->authorization, value,
                    strcspn (value, "\r\n"));
        }
    }
    if (length < 0 || (size_t) length >= sizeof data - head) {
        free (record);
        return;
    }
    while (len < head + (size_t) length) {
        ssize_t n = s_read (self, fd, data + len, sizeof data - len - 1, 0);
        if (n <= 0) {
            free (record);
            return;
        }
        len += (size_t) n;
    }
    s_copy (record->body, sizeof record->body, data + head, (size_t) length);
    pthread_mutex_lock (&self->mutex);
    int mode = self->mode, status = self->status;
    char error_body [sizeof self->error_body];
    memcpy (error_body, self->error_body, sizeof error_body);
    char *ok_body = strdup (self->body? self->body: "ok");
    pthread_mutex_unlock (&self->mutex);
    s_record (self, record);
    free (record);
    if (!ok_body)
        return;
    if (mode == SINK_HTTP_HANG) {
        free (ok_body);
        char sink [256];
        while (s_read (self, fd, sink, sizeof sink, 1) > 0)
            ;                           //  until the client gives up, or stop
        return;
    }
    const char *body = status >= 200 && status < 300? ok_body: error_body;
    char location [128] = "";
    if (status >= 300 && status < 400)
        snprintf (location, sizeof location,
                  "Location: http://127.0.0.1:%d/redirected\r\n", self->port);
    char reply [512];
    snprintf (reply, sizeof reply,
              "HTTP/1.1 %d Sink\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
              "%sConnection: close\r\n\r\n", status, strlen (body), location);
    s_write (fd, reply);
    s_write (fd, body);
    free (ok_body);
}

//  --------------------------------------------------------------------------
//  SMTP

typedef struct {
    char data [8192];
    size_t len;
} s_lines_t;

//  Next line without CRLF into line; 0, or -1 when the connection ended
static int
s_line (sink_t *self, int fd, s_lines_t *in, char *line, size_t linelen)
{
    while (1) {
        char *eol = memchr (in->data, '\n', in->len);
        if (eol) {
            size_t len = (size_t) (eol - in->data);
            size_t keep = len && in->data [len - 1] == '\r'? len - 1: len;
            s_copy (line, linelen, in->data, keep);
            memmove (in->data, eol + 1, in->len - len - 1);
            in->len -= len + 1;
            return 0;
        }
        if (in->len + 1 >= sizeof in->data)
            in->len = 0;                //  overlong line: drop it
        ssize_t n = s_read (self, fd, in->data + in->len, sizeof in->data - in->len, 0);
        if (n <= 0)
            return -1;
        in->len += (size_t) n;
    }
}

static void
s_smtp (sink_t *self, int fd)
{
    s_lines_t *in = (s_lines_t *) calloc (1, sizeof (s_lines_t));
    sink_record_t *record = (sink_record_t *) calloc (1, sizeof (sink_record_t));
    char line [4096];
    if (!in || !record)
        goto done;
    pthread_mutex_lock (&self->mutex);
    int mode = self->mode;
    pthread_mutex_unlock (&self->mutex);
    s_write (fd, "220 sink ESMTP ready\r\n");
    while (s_line (self, fd, in, line, sizeof line) == 0) {
        if (strncasecmp (line, "EHLO", 4) == 0)
            s_write (fd, "250-sink\r\n250-AUTH PLAIN\r\n250 8BITMIME\r\n");
        else
        if (strncasecmp (line, "HELO", 4) == 0)
            s_write (fd, "250 sink\r\n");
        else
        if (strncasecmp (line, "AUTH PLAIN", 10) == 0) {
            s_copy (record->auth, sizeof record->auth, line, strlen (line));
            if (!line [10]) {
                s_write (fd, "334 \r\n");
                if (s_line (self, fd, in, line, sizeof line) != 0)
                    break;
                size_t used = strlen (record->auth);
                snprintf (record->auth + used, sizeof record->auth - used, " %s", line);
            }
            s_write (fd, "235 2.7.0 ok\r\n");
        }
        else
        if (strncasecmp (line, "MAIL FROM:", 10) == 0) {
            s_copy (record->mail_from, sizeof record->mail_from, line + 10,
                    strcspn (line + 10, " "));
            s_write (fd, "250 ok\r\n");
        }
        else
        if (strncasecmp (line, "RCPT TO:", 8) == 0) {
            if (mode == SINK_SMTP_REJECT) {
                s_write (fd, "550 5.1.1 no such user\r\n");
                continue;
            }
            size_t used = strlen (record->rcpt);
            snprintf (record->rcpt + used, sizeof record->rcpt - used, "%s%.*s",
                      used? " ": "", (int) strcspn (line + 8, " "), line + 8);
            s_write (fd, "250 ok\r\n");
        }
        else
        if (strcasecmp (line, "DATA") == 0) {
            s_write (fd, "354 go ahead\r\n");
            size_t used = 0;
            while (s_line (self, fd, in, line, sizeof line) == 0) {
                if (strcmp (line, ".") == 0)
                    break;
                const char *text = line [0] == '.'? line + 1: line;   //  unstuff
                int n = snprintf (record->body + used, sizeof record->body - used, "%s\n", text);
                if (n > 0 && used + (size_t) n < sizeof record->body)
                    used += (size_t) n;
            }
            s_write (fd, "250 queued\r\n");
        }
        else
        if (strcasecmp (line, "RSET") == 0 || strcasecmp (line, "NOOP") == 0)
            s_write (fd, "250 ok\r\n");
        else
        if (strcasecmp (line, "QUIT") == 0) {
            s_write (fd, "221 bye\r\n");
            break;
        }
        else
            s_write (fd, "502 unknown command\r\n");
    }
    s_record (self, record);
done:
    free (in);
    free (record);
}

//  --------------------------------------------------------------------------

static void *
s_run (void *arg)
{
    sink_t *self = (sink_t *) arg;
    while (1) {
        struct pollfd items [2] = { { self->listener, POLLIN, 0 }, { self->wake [0], POLLIN, 0 } };
        if (poll (items, 2, -1) < 0 && errno != EINTR)
            break;
        if (items [1].revents)
            break;
        if (!items [0].revents)
            continue;
        int fd = accept (self->listener, NULL, NULL);
        if (fd < 0)
            continue;
        if (self->smtp)
            s_smtp (self, fd);
        else
            s_http (self, fd);
        close (fd);
    }
    return NULL;
}

static sink_t *
s_new (int smtp)
{
    sink_t *self = (sink_t *) calloc (1, sizeof (sink_t));
    if (!self)
        return NULL;
    self->smtp = smtp;
    self->status = 200;
    strcpy (self->error_body, "boom");
    self->listener = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in address;
    memset (&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    if (self->listener < 0
    ||  bind (self->listener, (struct sockaddr *) &address, sizeof address) != 0
    ||  listen (self->listener, 16) != 0
    ||  getsockname (self->listener, (struct sockaddr *) &address, &size) != 0
    ||  pipe2 (self->wake, O_CLOEXEC) != 0) {
        if (self->listener >= 0)
            close (self->listener);
        free (self);
        return NULL;
    }
    self->port = ntohs (address.sin_port);
    pthread_mutex_init (&self->mutex, NULL);
    pthread_cond_init (&self->cond, NULL);
    if (pthread_create (&self->thread, NULL, s_run, self) != 0) {
        close (self->listener);
        close (self->wake [0]);
        close (self->wake [1]);
        free (self);
        return NULL;
    }
    return self;
}

sink_t *
sink_http_new (void)
{
    return s_new (0);
}

sink_t *
sink_smtp_new (void)
{
    return s_new (1);
}

void
sink_destroy (sink_t **self_p)
{
    sink_t *self = self_p? *self_p: NULL;
    if (!self)
        return;
    if (write (self->wake [1], "x", 1) < 0)
        perror ("sink wake");
    pthread_join (self->thread, NULL);
    close (self->listener);
    close (self->wake [0]);
    close (self->wake [1]);
    pthread_cond_destroy (&self->cond);
    pthread_mutex_destroy (&self->mutex);
    free (self->body);
    free (self);
    *self_p = NULL;
}

int
sink_port (sink_t *self)
{
    return self->port;
}

int
sink_dead_port (void)
{
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address;
    memset (&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    bind (fd, (struct sockaddr *) &address, sizeof address);
    getsockname (fd, (struct sockaddr *) &address, &size);
    close (fd);
    return ntohs (address.sin_port);
}

void
sink_set_mode (sink_t *self, int mode, int status)
{
    pthread_mutex_lock (&self->mutex);
    self->mode = mode;
    self->status = status;
    pthread_mutex_unlock (&self->mutex);
}

int
sink_wait (sink_t *self, int count, int timeout_ms, sink_record_t *record)
{
    struct timespec until;
    clock_gettime (CLOCK_REALTIME, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long) (timeout_ms % 1000) * 1000000;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock (&self->mutex);
    while (self->count < count)
        if (pthread_cond_timedwait (&self->cond, &self->mutex, &until) == ETIMEDOUT)
            break;
    int rc = self->count >= count? 0: -1;
    if (rc == 0 && record && count >= 1 && count <= S_RECORDS)
        *record = self->records [count - 1];
    pthread_mutex_unlock (&self->mutex);
    return rc;
}

int
sink_count (sink_t *self)
{
    pthread_mutex_lock (&self->mutex);
    int count = self->count;
    pthread_mutex_unlock (&self->mutex);
    return count;
}

void
sink_set_error_body (sink_t *self, const char *body)
{
    pthread_mutex_lock (&self->mutex);
    snprintf (self->error_body, sizeof self->error_body, "%s", body);
    pthread_mutex_unlock (&self->mutex);
}

void
sink_set_body (sink_t *self, const char *body)
{
    pthread_mutex_lock (&self->mutex);
    free (self->body);
    self->body = body? strdup (body): NULL;
    pthread_mutex_unlock (&self->mutex);
}
