/*  email.c -- the "email" alarm kind: a plain-text mail per alarm.

    Target "email:ops@example.com", or just "ops@example.com" as in
    XXL-JOB's alarmEmail.  The message is plain UTF-8 text with subject
    "xxl job alarm: job N (desc)" and the alarm's fields, like XXL-JOB's
    EmailJobAlarm.  It goes out through libcurl's SMTP client to the server
    scheduler/alarm/smtp_url (smtp://host:port or smtps://host:port), from
    smtp_from, logging in with smtp_user/smtp_password when set, with
    STARTTLS per smtp_tls (none | try | required; the default is try, or
    required when smtp_user is set, so a password never goes out in clear
    unless asked to).  Without
    smtp_url it is handed to the system's sendmail (scheduler/alarm/sendmail,
    /usr/sbin/sendmail by default) as `sendmail -t -i`, started with
    posix_spawn.  Either way scheduler/alarm/email_timeout ms (30000 by
    default) bounds one mail.
*/

#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <curl/curl.h>
#include <xxl/alarm.h>
#include "xxl_spawn.h"

#define S_TIMEOUT_MS    30000
#define S_FROM_DEFAULT  "xxl-job@localhost"
#define S_SENDMAIL      "/usr/sbin/sendmail"
#define S_LINE_MAX      900             //  body lines are wrapped there (RFC 5322: 998)
#define S_DESC_MAX      120             //  job description bytes in the subject

typedef struct {
    char *data;
    size_t len, cap;
    int failed;
} s_buf_t;

static void
s_add (s_buf_t *buf, const char *data, size_t len)
{
    if (buf->failed)
        return;
    if (buf->len + len + 1 > buf->cap) {
        size_t cap = buf->cap? buf->cap: 1024;
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
s_printf (s_buf_t *buf, const char *format, ...)
{
    char line [1024];
    va_list args;
    va_start (args, format);
    int n = vsnprintf (line, sizeof line, format, args);
    va_end (args);
    if (n > 0)
        s_add (buf, line, (size_t) n < sizeof line? (size_t) n: sizeof line - 1);
}

static void *
s_init (const xxl_alarm_host_t *host, const char **error)
{
    (void) host;
    if (curl_global_init (CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        *error = "curl_global_init failed";
        return NULL;
    }
    static int s_state;
    return &s_state;
}

static void
s_destroy (void *state)
{
    (void) state;
    curl_global_cleanup ();
}

//  A mailbox address: local@domain, printable ASCII or UTF-8, no spaces,
//  no <>(),;:\" -- enough to keep it out of headers and SMTP commands
static int
s_address_valid (const char *address, char *err, size_t errlen)
{
    size_t len = strlen (address);
    const char *at = strrchr (address, '@');
    if (len == 0 || len > 254 || !at || at == address || !at [1]) {
        xxl_alarm_error (err, errlen, "'%.80s' is not an email address (local@domain)", address);
        return -1;
    }
    for (const char *c = address; *c; c++)
        if ((unsigned char) *c <= 0x20 || *c == 0x7f || strchr ("<>(),;:\\\"[]", *c)) {
            xxl_alarm_error (err, errlen,
                             "email address '%.80s' contains a space or one of <>(),;:\\\"[]",
                             address);
            return -1;
        }
    return 0;
}

static int
s_check (void *state, const xxl_alarm_host_t *host, const char *target,
         char *err, size_t errlen)
{
    (void) state;
    (void) host;
    return s_address_valid (target, err, errlen);
}

//  Bytes of text that fit in max without splitting a UTF-8 sequence
static size_t
s_utf8_cut (const char *text, size_t len, size_t max)
{
    if (len <= max)
        return len;
    size_t cut = max;
    while (cut > 0 && ((unsigned char) text [cut] & 0xc0) == 0x80)
        cut--;
    return cut;
}

static void
s_base64 (s_buf_t *buf, const unsigned char *data, size_t len)
{
    static const char s_alphabet [] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t) data [i] << 16;
        if (i + 1 < len) v |= (uint32_t) data [i + 1] << 8;
        if (i + 2 < len) v |= data [i + 2];
        char out [4] = {
            s_alphabet [(v >> 18) & 63], s_alphabet [(v >> 12) & 63],
            i + 1 < len? s_alphabet [(v >> 6) & 63]: '=',
            i + 2 < len? s_alphabet [v & 63]: '='
        };
        s_add (buf, out, 4);
    }
}

//  The Subject header's value: plain when ASCII, else RFC 2047 words
static void
s_subject (s_buf_t *buf, const char *subject, const char *eol)
{
    int ascii = 1;
    for (const char *c = subject; *c; c++)
        if ((unsigned char) *c >= 0x80)
            ascii = 0;
    if (ascii) {
        s_add (buf, subject, strlen (subject));
        return;
    }
    size_t len = strlen (subject), at = 0;
    while (at < len) {
        size_t chunk = s_utf8_cut (subject + at, len - at, 45);
        if (chunk == 0)
            chunk = 1;
        if (at) {
            s_add (buf, eol, strlen (eol));
            s_add (buf, " ", 1);
        }
        s_add (buf, "=?UTF-8?B?", 10);
        s_base64 (buf, (const unsigned char *) subject + at, chunk);
        s_add (buf, "?=", 2);
        at += chunk;
    }
}

//  Appends text as body lines: line ends normalised to eol, long lines
//  wrapped, control characters but tab dropped
static void
s_body_text (s_buf_t *buf, const char *text, const char *eol)
{
    const char *at = text;
    while (*at) {
        const char *end = strchr (at, '\n');
        size_t len = end? (size_t) (end - at): strlen (at);
        while (len > 0) {
            size_t chunk = s_utf8_cut (at, len, S_LINE_MAX);
            if (chunk == 0)
                chunk = len < S_LINE_MAX? len: S_LINE_MAX;
            s_add (buf, "  ", 2);
            for (size_t i = 0; i < chunk; i++) {
                unsigned char c = (unsigned char) at [i];
                if (c >= 0x20 || c == '\t')
                    s_add (buf, at + i, 1);
            }
            s_add (buf, eol, strlen (eol));
            at += chunk;
            len -= chunk;
        }
        if (end)
            at = end + 1;
    }
}

static void
s_time (char *out, size_t outlen, int64_t ms, int rfc5322)
{
    static const char *s_days [] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
    static const char *s_months [] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                       "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
    time_t seconds = (time_t) (ms / 1000);
    struct tm tm;
    gmtime_r (&seconds, &tm);
    if (rfc5322)
        snprintf (out, outlen, "%s, %02d %s %04d %02d:%02d:%02d +0000",
                  s_days [tm.tm_wday % 7], tm.tm_mday, s_months [tm.tm_mon % 12],
                  tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
    else
        snprintf (out, outlen, "%04d-%02d-%02d %02d:%02d:%02d UTC",
                  tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                  tm.tm_hour, tm.tm_min, tm.tm_sec);
}

//  The whole message, headers and body, with eol line ends
static void
s_message (s_buf_t *buf, const xxl_alarm_host_t *host, const xxl_alarm_t *alarm,
           const char *from, const char *to, const char *eol)
{
    //  Description: one line, bounded
    char desc [S_DESC_MAX + 1];
    size_t len = s_utf8_cut (alarm->job_desc, strlen (alarm->job_desc), S_DESC_MAX);
    memcpy (desc, alarm->job_desc, len);
    desc [len] = 0;
    for (char *c = desc; *c; c++)
        if ((unsigned char) *c < 0x20 || *c == 0x7f)
            *c = ' ';
    char subject [S_DESC_MAX + 64];
    if (desc [0])
        snprintf (subject, sizeof subject, "xxl job alarm: job %lld (%s)",
                  (long long) alarm->job_id, desc);
    else
        snprintf (subject, sizeof subject, "xxl job alarm: job %lld", (long long) alarm->job_id);

    int64_t now = XXL_ALARM_HOST_HAS (host, now_ms)? host->now_ms (): (int64_t) time (NULL) * 1000;
    char date [64], when [64];
    s_time (date, sizeof date, now, 1);
    s_time (when, sizeof when, alarm->trigger_time, 0);
    s_printf (buf, "Date: %s%s", date, eol);
    s_printf (buf, "From: %s%s", from, eol);
    s_printf (buf, "To: %s%s", to, eol);
    s_add (buf, "Subject: ", 9);
    s_subject (buf, subject, eol);
    s_add (buf, eol, strlen (eol));
    s_printf (buf, "Message-ID: <xxl-alarm-%lld-%lld@xxl>%s",
              (long long) alarm->log_id, (long long) now, eol);
    s_printf (buf, "MIME-Version: 1.0%s", eol);
    s_printf (buf, "Content-Type: text/plain; charset=UTF-8%s", eol);
    s_printf (buf, "Content-Transfer-Encoding: 8bit%s", eol);
    s_printf (buf, "X-Xxl-Job-Id: %lld%s", (long long) alarm->job_id, eol);
    s_printf (buf, "X-Xxl-Log-Id: %lld%s", (long long) alarm->log_id, eol);
    s_add (buf, eol, strlen (eol));

    s_printf (buf, "xxl job alarm: a run failed%s%s", eol, eol);
    s_printf (buf, "Job:              %lld%s", (long long) alarm->job_id, eol);
    s_add (buf, "Description:      ", 18);
    s_add (buf, desc, strlen (desc));
    s_add (buf, eol, strlen (eol));
    s_add (buf, "App:              ", 18);
    s_add (buf, alarm->app, strcspn (alarm->app, "\r\n"));
    s_add (buf, eol, strlen (eol));
    s_printf (buf, "Log id:           %lld%s", (long long) alarm->log_id, eol);
    s_printf (buf, "Trigger time:     %s%s", when, eol);
    s_add (buf, "Executor address: ", 18);
    s_add (buf, alarm->executor_address, strcspn (alarm->executor_address, "\r\n"));
    s_add (buf, eol, strlen (eol));
    s_printf (buf, "Retry count:      %d%s", alarm->retry_count, eol);
    s_printf (buf, "Trigger code:     %d%s", alarm->trigger_code, eol);
    s_printf (buf, "Trigger message:%s", eol);
    s_body_text (buf, alarm->trigger_msg, eol);
    s_printf (buf, "Handle code:      %d%s", alarm->handle_code, eol);
    s_printf (buf, "Handle message:%s", eol);
    s_body_text (buf, alarm->handle_msg, eol);
}

typedef struct {
    const char *data;
    size_t len, at;
} s_reader_t;

static size_t
s_on_read (char *out, size_t size, size_t count, void *arg)
{
    s_reader_t *reader = (s_reader_t *) arg;
    size_t room = size * count;
    size_t left = reader->len - reader->at;
    size_t n = left < room? left: room;
    memcpy (out, reader->data + reader->at, n);
    reader->at += n;
    return n;
}

static int
s_send_smtp (const xxl_alarm_host_t *host, const char *url, const char *from,
             const char *to, const s_buf_t *message, long timeout,
             char *err, size_t errlen)
{
    CURL *curl = curl_easy_init ();
    if (!curl) {
        xxl_alarm_error (err, errlen, "out of memory");
        return -1;
    }
    char mail_from [300], rcpt [300];
    snprintf (mail_from, sizeof mail_from, "<%s>", from);
    snprintf (rcpt, sizeof rcpt, "<%s>", to);
    struct curl_slist *rcpts = curl_slist_append (NULL, rcpt);
    if (!rcpts) {
        curl_easy_cleanup (curl);
        xxl_alarm_error (err, errlen, "out of memory");
        return -1;
    }
    const char *user = xxl_alarm_config (host, "smtp_user", NULL);
    const char *password = xxl_alarm_config (host, "smtp_password", NULL);
    //  A password never goes out in clear unless asked to
    const char *tls = xxl_alarm_config (host, "smtp_tls", user? "required": "try");
    long use_ssl = strcmp (tls, "none") == 0? (long) CURLUSESSL_NONE
                 : strcmp (tls, "required") == 0 || strcmp (tls, "all") == 0?
                   (long) CURLUSESSL_ALL: (long) CURLUSESSL_TRY;
    s_reader_t reader = { message->data, message->len, 0 };
    char curl_error [CURL_ERROR_SIZE] = "";
    curl_easy_setopt (curl, CURLOPT_URL, url);
    curl_easy_setopt (curl, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
    curl_easy_setopt (curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt (curl, CURLOPT_TIMEOUT_MS, timeout);
    curl_easy_setopt (curl, CURLOPT_USE_SSL, use_ssl);
    curl_easy_setopt (curl, CURLOPT_MAIL_FROM, mail_from);
    curl_easy_setopt (curl, CURLOPT_MAIL_RCPT, rcpts);
    curl_easy_setopt (curl, CURLOPT_READFUNCTION, s_on_read);
    curl_easy_setopt (curl, CURLOPT_READDATA, &reader);
    curl_easy_setopt (curl, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt (curl, CURLOPT_ERRORBUFFER, curl_error);
    if (user)
        curl_easy_setopt (curl, CURLOPT_USERNAME, user);
    if (password)
        curl_easy_setopt (curl, CURLOPT_PASSWORD, password);
    CURLcode code = curl_easy_perform (curl);
    long status = 0;
    curl_easy_getinfo (curl, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all (rcpts);
    curl_easy_cleanup (curl);
    if (code != CURLE_OK) {
        const char *reason = curl_error [0]? curl_error: curl_easy_strerror (code);
        if (status >= 400)
            xxl_alarm_error (err, errlen, "SMTP %ld: %s", status, reason);
        else
            xxl_alarm_error (err, errlen, "%s", reason);
        return -1;
    }
    return 0;
}

static int
s_send_sendmail (const xxl_alarm_host_t *host, const s_buf_t *message, long timeout,
                 char *err, size_t errlen)
{
    const char *path = xxl_alarm_config (host, "sendmail", S_SENDMAIL);
    if (access (path, X_OK) != 0) {
        xxl_alarm_error (err, errlen,
                         "no SMTP server configured and %s not found: "
                         "set scheduler/alarm/smtp_url (or install sendmail)", path);
        return -1;
    }
    char *argv [] = { (char *) path, (char *) "-t", (char *) "-i", NULL };
    char output [1024], reason [256];
    int rc = xxl_spawn_run (argv, NULL, message->data, message->len, (int) timeout,
                            output, sizeof output, reason, sizeof reason);
    if (rc == 0)
        return 0;
    const char *line = xxl_spawn_last_line (output);
    if (rc > 0)
        xxl_alarm_error (err, errlen, "%s exit status %d%s%.300s", path, rc,
                         *line? ": ": "", line);
    else
        xxl_alarm_error (err, errlen, "%s: %s%s%.300s", path, reason, *line? ": ": "", line);
    return -1;
}

static int
s_send (void *state, const xxl_alarm_host_t *host, const xxl_alarm_t *alarm,
        const char *target, char *err, size_t errlen)
{
    (void) state;
    if (s_address_valid (target, err, errlen) != 0)
        return -1;
    const char *url = xxl_alarm_config (host, "smtp_url", NULL);
    const char *from = xxl_alarm_config (host, "smtp_from", S_FROM_DEFAULT);
    char why [200];
    if (s_address_valid (from, why, sizeof why) != 0) {
        xxl_alarm_error (err, errlen, "scheduler/alarm/smtp_from: %s", why);
        return -1;
    }
    long timeout = xxl_alarm_config_long (host, "email_timeout", S_TIMEOUT_MS);
    if (timeout <= 0)
        timeout = S_TIMEOUT_MS;
    s_buf_t message = { NULL, 0, 0, 0 };
    s_message (&message, host, alarm, from, target, url? "\r\n": "\n");
    if (message.failed) {
        free (message.data);
        xxl_alarm_error (err, errlen, "out of memory");
        return -1;
    }
    int rc = url? s_send_smtp (host, url, from, target, &message, timeout, err, errlen)
                : s_send_sendmail (host, &message, timeout, err, errlen);
    free (message.data);
    return rc;
}

static const xxl_alarm_kind_t s_kinds [] = {
    { "email", s_send, s_check, 0 },
    { NULL, NULL, NULL, 0 }
};

XXL_ALARM_PLUGIN ("email", "1.0", s_init, s_destroy, s_kinds)
