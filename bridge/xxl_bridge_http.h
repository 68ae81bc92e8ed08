/*  xxl_bridge_http.h -- the bridge's own HTTP/1.1 client wire: which URLs
    it speaks to, a request's head, and an answer's reader.

    Pure functions on buffers (no I/O, no state but what the caller
    holds): xxl_bridge_call.c sends the requests and reads the answers on
    its own kept-alive connections for the URLs xxl_bridge_http_url takes
    (plain http:// to an IP address literal); the others go to libcurl.
    Calls nothing of the bridge.  Answers are parsed by http_parser
    (libhttp-parser): status line, headers, Content-Length, chunks and
    keep-alive are its; the bounds and the body's place in buf are ours.
*/

#ifndef XXL_BRIDGE_HTTP_H_INCLUDED
#define XXL_BRIDGE_HTTP_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <http_parser.h>

#ifdef __cplusplus
extern "C" {
#endif

//  Longest answer head (status line and headers) read
#define XXL_BRIDGE_HTTP_HEAD_MAX  (64 * 1024)

//  Where an http:// URL leads: its address, its Host header's value, and
//  where its path starts in the URL (the request target is url + path_at,
//  or "/" when that is empty)
typedef struct {
    struct sockaddr_storage addr;
    socklen_t addrlen;
    char host [64];                 //  "1.2.3.4:80", "[::1]:9999"
    size_t path_at;
} xxl_bridge_http_url_t;

//  0 when url is http:// to an IPv4 or bracketed IPv6 literal with an
//  optional port (1-65535) and a path of printable characters, and no
//  user info, query or fragment; else -1 (https, host names, anything
//  else: libcurl's)
int xxl_bridge_http_url (const char *url, xxl_bridge_http_url_t *out);

//  An answer as it is read (zeroed before the first call of each answer;
//  the fields below the line are the reader's own)
typedef struct {
    int status;                     //  its HTTP status, once the head is read
    size_t head_len;                //  once complete: where its body starts in buf
    int64_t content_length;         //  -1: none
    bool chunked;
    bool close;                     //  the connection is not kept after it
    bool to_eof;                    //  its body ends when the connection does
    size_t body_len;                //  once complete: the body, at buf + head_len
    //  ----
    http_parser parser;
    bool started;                   //  parser initialised
    bool head_done;                 //  the final answer's head is read
    bool body_seen;                 //  head_len is where its body's first byte went
    bool complete;
    size_t fed;                     //  bytes of buf given to the parser
    size_t start;                   //  where the answer being read starts in buf
    size_t trailer_len;             //  bytes of trailer names and values
} xxl_bridge_http_answer_t;

//  Reads the *len bytes received so far in buf (its room at least *len + 1)
//  into answer; eof: the connection ended after them.  1: complete, the
//  body at buf + head_len, body_len bytes, NUL-terminated (a chunked body
//  decoded in place; bytes past the answer set close); 0: more is needed;
//  -1: malformed or cut short, why says how (the parser's error by its
//  name and description); -2: the body is longer than body_max.  Interim
//  (1xx) answers are skipped.  Bytes of buf already read are not read
//  again, and those before the body's end may be overwritten.
int xxl_bridge_http_read (xxl_bridge_http_answer_t *answer, char *buf, size_t *len, bool eof,
                          size_t body_max, char *why, size_t whylen);

#ifdef __cplusplus
}
#endif

#endif
