/*  xxl_bridge_http.c -- the bridge's own HTTP/1.1 client wire.

    See xxl_bridge_http.h.  An answer is read from what came so far each
    time more comes: the head once it is whole (its end, "\r\n\r\n" or
    "\n\n"), then the body by Content-Length, by chunks, or to the end of
    the connection (RFC 9112 §6.3).
*/

#include "xxl_bridge_http.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

//  The value of a header line "Name: value" when its name is name
//  (case-insensitive), trimmed, as [*value, *value + *vlen); else false
static bool
s_header (const char *line, size_t len, const char *name, const char **value, size_t *vlen)
{
    size_t nlen = strlen (name);
    if (len <= nlen || line [nlen] != ':' || strncasecmp (line, name, nlen) != 0)
        return false;
    const char *v = line + nlen + 1, *e = line + len;
    while (v < e && (*v == ' ' || *v == '\t'))
        v++;
    while (e > v && (e [-1] == ' ' || e [-1] == '\t' || e [-1] == '\r'))
        e--;
    *value = v;
    *vlen = e - v;
    return true;
}

//  Whether the comma-separated list [v, v + n) holds token (case-insensitive)
static bool
s_has_token (const char *v, size_t n, const char *token)
{
    size_t tlen = strlen (token);
    const char *end = v + n;
    while (v < end) {
        while (v < end && (*v == ' ' || *v == '\t' || *v == ','))
            v++;
        const char *t = v;
        while (v < end && *v != ',')
            v++;
        const char *te = v;
        while (te > t && (te [-1] == ' ' || te [-1] == '\t'))
            te--;
        if ((size_t) (te - t) == tlen && strncasecmp (t, token, tlen) == 0)
            return true;
    }
    return false;
}

//  Parses the head in [buf, buf + head_len): -1 when malformed
static int
s_head (xxl_bridge_http_answer_t *a, const char *buf, size_t head_len, char *why, size_t whylen)
{
    //  "HTTP/1.x SSS ..."
    if (head_len < 12 || memcmp (buf, "HTTP/1.", 7) != 0 || !isdigit ((unsigned char) buf [7])
    ||  buf [8] != ' ' || !isdigit ((unsigned char) buf [9])
    ||  !isdigit ((unsigned char) buf [10]) || !isdigit ((unsigned char) buf [11])
    ||  (head_len > 12 && buf [12] != ' ' && buf [12] != '\r' && buf [12] != '\n')) {
        snprintf (why, whylen, "the executor's answer is not HTTP/1.x");
        return -1;
    }
    a->status = (buf [9] - '0') * 100 + (buf [10] - '0') * 10 + (buf [11] - '0');
    bool http10 = buf [7] == '0', keep_alive = false;
    a->content_length = -1;
    a->chunked = a->close = a->to_eof = false;
    const char *line = memchr (buf, '\n', head_len);
    const char *end = buf + head_len;
    while (line && ++line < end) {
        const char *eol = memchr (line, '\n', end - line);
        if (!eol)
            break;
        size_t len = eol - line;
        const char *v;
        size_t vlen;
        if (s_header (line, len, "Content-Length", &v, &vlen)) {
            if (vlen == 0 || vlen > 18 || strspn (v, "0123456789") < vlen) {
                snprintf (why, whylen, "the executor's answer has a bad Content-Length");
                return -1;
            }
            int64_t n = 0;
            for (size_t i = 0; i < vlen; i++)
                n = n * 10 + (v [i] - '0');
            if (a->content_length >= 0 && a->content_length != n) {
                snprintf (why, whylen, "the executor's answer has two Content-Lengths");
                return -1;
            }
            a->content_length = n;
        }
        else
        if (s_header (line, len, "Transfer-Encoding", &v, &vlen)) {
            //  chunked must be the last coding; any other: to the end
            const char *last = v + vlen;
            while (last > v && last [-1] != ',')
                last--;
            if (s_has_token (last, v + vlen - last, "chunked"))
                a->chunked = true;
            else
                a->to_eof = true;
        }
        else
        if (s_header (line, len, "Connection", &v, &vlen)) {
            if (s_has_token (v, vlen, "close"))
                a->close = true;
            if (s_has_token (v, vlen, "keep-alive"))
                keep_alive = true;
        }
        line = eol;
    }
    if (http10 && !keep_alive)
        a->close = true;
    if (a->chunked || a->to_eof)
        a->content_length = -1;     //  (Transfer-Encoding wins: RFC 9112 §6.3)
    if (a->status / 100 == 1 || a->status == 204 || a->status == 304) {
        a->content_length = 0;
        a->chunked = a->to_eof = false;
    }
    else
    if (!a->chunked && a->content_length < 0)
        a->to_eof = true;
    if (a->to_eof)
        a->close = true;
    return 0;
}

//  Walks the chunks from body: 1 complete (decoded in place, its length in
//  a->body_len), 0 more needed, -1 malformed, -2 too long
static int
s_chunks (xxl_bridge_http_answer_t *a, char *buf, size_t len, size_t body_max,
          char *why, size_t whylen)
{
    size_t at = a->head_len, data = 0;
    //  First pass: is it all here?
    while (true) {
        size_t n = 0, digits = 0;
        while (at < len && isxdigit ((unsigned char) buf [at])) {
            if (++digits > 15) {
                snprintf (why, whylen, "the executor's answer has a bad chunk size");
                return -1;
            }
            int c = tolower ((unsigned char) buf [at++]);
            n = n * 16 + (size_t) (c <= '9'? c - '0': c - 'a' + 10);
        }
        const char *eol = at < len? memchr (buf + at, '\n', len - at): NULL;
        if (!eol)
            return len - at > 1024? (snprintf (why, whylen, "the executor's answer has a bad chunk"),
                                     -1): 0;
        if (digits == 0 || (buf [at] != '\r' && buf [at] != '\n' && buf [at] != ';'
                                               && buf [at] != ' ' && buf [at] != '\t')) {
            snprintf (why, whylen, "the executor's answer has a bad chunk size");
            return -1;
        }
        at = eol - buf + 1;
        if (n == 0)
            break;
        data += n;
        if (data > body_max)
            return -2;
        if (len - at < n + 1)
            return 0;
        at += n;
        if (buf [at] == '\r') {
            if (at + 1 >= len)
                return 0;
            at++;
        }
        if (buf [at] != '\n') {
            snprintf (why, whylen, "the executor's answer has a chunk of the wrong size");
            return -1;
        }
        at++;
    }
    //  Trailers, up to an empty line
    while (true) {
        const char *eol = at < len? memchr (buf + at, '\n', len - at): NULL;
        if (!eol)
            return len - at > 8192? (snprintf (why, whylen, "the executor's answer has a bad trailer"),
                                     -1): 0;
        bool empty = (size_t) (eol - buf) == at || ((size_t) (eol - buf) == at + 1 && buf [at] == '\r');
        at = eol - buf + 1;
        if (empty)
            break;
    }
    if (at < len)
        a->close = true;            //  (bytes past the answer)
    //  Second pass: the data moved together (all well-formed now)
    size_t from = a->head_len, to = a->head_len;
    while (true) {
        size_t n = 0;
        while (isxdigit ((unsigned char) buf [from])) {
            int c = tolower ((unsigned char) buf [from++]);
            n = n * 16 + (size_t) (c <= '9'? c - '0': c - 'a' + 10);
        }
        from = (char *) memchr (buf + from, '\n', len - from) - buf + 1;
        if (n == 0)
            break;
        memmove (buf + to, buf + from, n);
        to += n;
        from += n;
        from += buf [from] == '\r'? 2: 1;
    }
    a->body_len = to - a->head_len;
    buf [to] = 0;
    return 1;
}

int
xxl_bridge_http_read (xxl_bridge_http_answer_t *a, char *buf, size_t *len, bool eof,
                      size_t body_max, char *why, size_t whylen)
{
    while (!a->head_len) {
        //  The head's end: the first empty line
        size_t end = 0;
        for (const char *nl = memchr (buf, '\n', *len); nl;
             nl = memchr (nl + 1, '\n', *len - (nl + 1 - buf))) {
            size_t at = nl + 1 - buf;
            if (at < *len && buf [at] == '\n') {
                end = at + 1;
                break;
            }
            if (at + 1 < *len && buf [at] == '\r' && buf [at + 1] == '\n') {
                end = at + 2;
                break;
            }
        }
        if (!end) {
            if (*len > XXL_BRIDGE_HTTP_HEAD_MAX) {
                snprintf (why, whylen, "the executor's answer head is longer than %d bytes",
                          XXL_BRIDGE_HTTP_HEAD_MAX);
                return -1;
            }
            if (eof) {
                snprintf (why, whylen, *len? "the executor closed the connection in the middle"
                                             " of its answer's head"
                                           : "the executor closed the connection with no answer");
                return -1;
            }
            return 0;
        }
        if (s_head (a, buf, end, why, whylen))
            return -1;
        if (a->status / 100 == 1 && a->status != 101) {
            //  An interim answer: dropped, the real one follows
            memmove (buf, buf + end, *len - end);
            *len -= end;
            continue;
        }
        if (a->status == 101) {
            snprintf (why, whylen, "the executor switched protocols");
            return -1;
        }
        a->head_len = end;
        if (a->content_length > (int64_t) body_max)
            return -2;
    }
    size_t have = *len - a->head_len;
    if (a->chunked) {
        int rc = s_chunks (a, buf, *len, body_max, why, whylen);
        if (rc == 0 && eof) {
            snprintf (why, whylen, "the executor closed the connection in the middle of its answer");
            return -1;
        }
        return rc;
    }
    if (a->to_eof) {
        if (have > body_max)
            return -2;
        if (!eof)
            return 0;
        a->body_len = have;
    }
    else {
        if (have < (size_t) a->content_length) {
            if (eof) {
                snprintf (why, whylen, "the executor closed the connection after %zu of the %"
                          PRId64 " bytes of its answer", have, a->content_length);
                return -1;
            }
            return 0;
        }
        if (have > (size_t) a->content_length)
            a->close = true;        //  (bytes past the answer)
        a->body_len = (size_t) a->content_length;
    }
    buf [a->head_len + a->body_len] = 0;
    return 1;
}
