/*  xxl_bridge_http.c -- the bridge's own HTTP/1.1 client wire.

    See xxl_bridge_http.h.  An answer is given to http_parser as it comes,
    each byte once; its callbacks bound the head and the body, skip interim
    (1xx) answers, and move the body's pieces together in place (a chunked
    body's framing dropped), so the body ends at buf + head_len.
*/
#include "xxl_bridge_http.h"

#include <arpa/inet.h>
#include <assert.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
xxl_bridge_http_url (const char *url, xxl_bridge_http_url_t *out)
{
    if (strncmp (url, "http://", 7) != 0)
        return -1;
    const char *host = url + 7, *end;
    char text [INET6_ADDRSTRLEN + 1];
    bool v6 = *host == '[';
    if (v6) {
        end = strchr (host, ']');
        if (!end || (size_t) (end - host - 1) >= sizeof text)
            return -1;
        memcpy (text, host + 1, end - host - 1);
        text [end - host - 1] = 0;
        end++;
    }
    else {
        end = host + strspn (host, "0123456789.");
        if (end == host || (size_t) (end - host) >= sizeof text)
            return -1;
        memcpy (text, host, end - host);
        text [end - host] = 0;
    }
    long port = 80;
    if (*end == ':') {
        const char *digits = end + 1;
        size_t n = strspn (digits, "0123456789");
        if (n == 0 || n > 5)
            return -1;
        port = strtol (digits, NULL, 10);
        if (port < 1 || port > 65535)
            return -1;
        end = digits + n;
    }
    if (*end && *end != '/')
        return -1;                  //  user info, a name, anything odd
    for (const char *s = end; *s; s++)
        if (*s <= ' ' || *s >= 127 || *s == '?' || *s == '#')
            return -1;
    memset (out, 0, sizeof *out);
    if (v6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *) &out->addr;
        if (inet_pton (AF_INET6, text, &a->sin6_addr) != 1)
            return -1;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons ((uint16_t) port);
        out->addrlen = sizeof *a;
        snprintf (out->host, sizeof out->host, "[%s]:%ld", text, port);
    }
    else {
        struct sockaddr_in *a = (struct sockaddr_in *) &out->addr;
        if (inet_pton (AF_INET, text, &a->sin_addr) != 1)
            return -1;
        a->sin_family = AF_INET;
        a->sin_port = htons ((uint16_t) port);
        out->addrlen = sizeof *a;
        snprintf (out->host, sizeof out->host, "%s:%ld", text, port);
    }
    out->path_at = end - url;
    return 0;
}

//  What the callbacks see of one xxl_bridge_http_read call
typedef struct {
    xxl_bridge_http_answer_t *a;
    char *buf;
    size_t body_max;
    char *why;
    size_t whylen;
    int rc;                         //  -1, -2: why the parser was stopped
} s_reading_t;

//  A chunk size this large is no size (16 hex digits and more)
#define S_CHUNK_ABSURD  ((uint64_t) 1 << 60)

static int
s_stop (s_reading_t *r, int rc, const char *text)
{
    r->rc = rc;
    if (text)
        snprintf (r->why, r->whylen, "%s", text);
    return -1;                      //  (the parser stops with HPE_CB_*)
}

//  The head (status line and headers) so far, to at + len, within its bound
static int
s_head_piece (http_parser *parser, const char *at, size_t length)
{
    s_reading_t *r = (s_reading_t *) parser->data;
    xxl_bridge_http_answer_t *a = r->a;
    if (a->head_done) {
        //  a trailer
        a->trailer_len += length;
        if (a->trailer_len > XXL_BRIDGE_HTTP_HEAD_MAX) {
            snprintf (r->why, r->whylen, "the executor's answer trailer is longer than %d bytes",
                      XXL_BRIDGE_HTTP_HEAD_MAX);
            return s_stop (r, -1, NULL);
        }
        return 0;
    }
    assert (at >= r->buf + a->start);
    if ((size_t) (at + length - r->buf) - a->start > XXL_BRIDGE_HTTP_HEAD_MAX) {
        snprintf (r->why, r->whylen, "the executor's answer head is longer than %d bytes",
                  XXL_BRIDGE_HTTP_HEAD_MAX);
        return s_stop (r, -1, NULL);
    }
    return 0;
}

static int
s_on_headers_complete (http_parser *parser)
{
    s_reading_t *r = (s_reading_t *) parser->data;
    xxl_bridge_http_answer_t *a = r->a;
    if (parser->http_major != 1)
        return s_stop (r, -1, "the executor's answer is not HTTP/1.x");
    if (parser->status_code == 101)
        return s_stop (r, -1, "the executor switched protocols");
    a->status = parser->status_code;
    if (a->status / 100 == 1)
        return 0;                   //  an interim answer: no body, the real one follows
    a->head_done = true;
    bool bodiless = a->status == 204 || a->status == 304;
    a->chunked = !bodiless && (parser->flags & F_CHUNKED);
    a->content_length = bodiless? 0
                      : a->chunked || parser->content_length == ULLONG_MAX? -1
                      : (int64_t) parser->content_length;
    a->to_eof = !bodiless && !a->chunked && a->content_length < 0;
    if (a->content_length > (int64_t) r->body_max)
        return s_stop (r, -2, NULL);
    return 0;
}

static int
s_on_chunk_header (http_parser *parser)
{
    s_reading_t *r = (s_reading_t *) parser->data;
    if (parser->content_length >= S_CHUNK_ABSURD)
        return s_stop (r, -1, "the executor's answer has a bad chunk size");
    if (parser->content_length > r->body_max - r->a->body_len)
        return s_stop (r, -2, NULL);
    return 0;
}

static int
s_on_body (http_parser *parser, const char *at, size_t length)
{
    s_reading_t *r = (s_reading_t *) parser->data;
    xxl_bridge_http_answer_t *a = r->a;
    if (length > r->body_max - a->body_len)
        return s_stop (r, -2, NULL);
    if (!a->body_seen) {
        a->body_seen = true;
        a->head_len = at - r->buf;
    }
    //  The pieces together: what moves was read already, and where it goes
    //  is never past it
    char *to = r->buf + a->head_len + a->body_len;
    assert (to <= at);
    if (to != at)
        memmove (to, at, length);
    a->body_len += length;
    return 0;
}

static int
s_on_message_complete (http_parser *parser)
{
    s_reading_t *r = (s_reading_t *) parser->data;
    xxl_bridge_http_answer_t *a = r->a;
    if (a->head_done) {
        a->complete = true;
        a->close = !http_should_keep_alive (parser);
    }
    //  (an interim answer's end: s_execute notes where it is and goes on)
    http_parser_pause (parser, 1);
    return 0;
}

static const http_parser_settings s_settings = {
    .on_status = s_head_piece,
    .on_header_field = s_head_piece,
    .on_header_value = s_head_piece,
    .on_headers_complete = s_on_headers_complete,
    .on_body = s_on_body,
    .on_message_complete = s_on_message_complete,
    .on_chunk_header = s_on_chunk_header,
};

//  Gives [from, from + n) of buf (n 0: the end of the connection) to the
//  parser: 0 when all is taken or the answer is complete, -1 / -2 as
//  xxl_bridge_http_read, -3 the connection ended in the middle of it
static int
s_execute (s_reading_t *r, size_t from, size_t n)
{
    xxl_bridge_http_answer_t *a = r->a;
    http_parser *parser = &a->parser;
    while (true) {
        size_t took = http_parser_execute (parser, &s_settings, n? r->buf + from: NULL, n);
        enum http_errno err = HTTP_PARSER_ERRNO (parser);
        if (r->rc)
            return r->rc;
        if (err == HPE_PAUSED && !a->complete) {
            //  An interim answer's end: the next starts after it
            http_parser_pause (parser, 0);
            from += took;
            n -= took;
            a->start = from;
            a->status = 0;
            if (n == 0)
                return 0;
            continue;
        }
        if (err == HPE_PAUSED) {
            if (took < n)
                a->close = true;    //  (bytes past the answer)
            if (!a->body_seen)
                a->head_len = from + took;
            return 0;
        }
        if (err == HPE_INVALID_EOF_STATE && n == 0)
            return -3;
        if (err != HPE_OK) {
            snprintf (r->why, r->whylen, "the executor's answer is malformed: %s (%s)",
                      http_errno_name (err), http_errno_description (err));
            return -1;
        }
        return 0;
    }
}

int
xxl_bridge_http_read (xxl_bridge_http_answer_t *a, char *buf, size_t *len, bool eof,
                      size_t body_max, char *why, size_t whylen)
{
    s_reading_t r = { a, buf, body_max, why, whylen, 0 };
    if (!a->started) {
        http_parser_init (&a->parser, HTTP_RESPONSE);
        a->started = true;
        a->content_length = -1;
    }
    a->parser.data = &r;
    int rc = 0;
    if (*len > a->fed) {
        rc = s_execute (&r, a->fed, *len - a->fed);
        a->fed = *len;
    }
    if (rc == 0 && !a->complete && eof) {
        rc = s_execute (&r, *len, 0);
        if (rc == -3 || (rc == 0 && !a->complete)) {
            if (!a->head_done && *len == a->start)
                snprintf (why, whylen, "the executor closed the connection with no answer");
            else
            if (!a->head_done)
                snprintf (why, whylen, "the executor closed the connection in the middle"
                                       " of its answer's head");
            else
            if (a->content_length >= 0)
                snprintf (why, whylen, "the executor closed the connection after %zu of the %"
                          PRId64 " bytes of its answer", a->body_len, a->content_length);
            else
                snprintf (why, whylen, "the executor closed the connection in the middle"
                                       " of its answer");
            rc = -1;
        }
    }
    a->parser.data = NULL;
    if (rc < 0)
        return rc;
    if (!a->complete) {
        if (!a->head_done && *len - a->start > XXL_BRIDGE_HTTP_HEAD_MAX) {
            snprintf (why, whylen, "the executor's answer head is longer than %d bytes",
                      XXL_BRIDGE_HTTP_HEAD_MAX);
            return -1;
        }
        return 0;
    }
    buf [a->head_len + a->body_len] = 0;
    return 1;
}
