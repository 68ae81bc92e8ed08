/*  xxl_http_guard.c -- XXL_HTTP_ALLOW: where a handler's libcurl transfer
    may connect.  See xxl_http_guard.h.
*/

#define _GNU_SOURCE
#include "xxl_http_guard.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define streq_ci(a, b)          (strcasecmp ((a), (b)) == 0)
#define S_ALLOW_ENV         "XXL_HTTP_ALLOW"
#define S_ALLOW_SEPARATORS  ", \t\r\n"
#define S_ALLOW_MAX         256         //  entries read; the rest ignored
#define S_NAME_MAX          253         //  longest host name

typedef enum { S_ALLOW_NAME, S_ALLOW_SUFFIX, S_ALLOW_NET } allow_kind_t;

typedef struct {
    allow_kind_t kind;
    char name [S_NAME_MAX + 2];         //  lower case; a suffix keeps its '.'
    int family;                         //  S_ALLOW_NET: AF_INET or AF_INET6
    unsigned char addr [16];
    int bits;
} allow_entry_t;

struct _xxl_http_guard_t {
    CURL *curl;                         //  to read the hop's URL
    int listed;                         //  1: XXL_HTTP_ALLOW names the hosts
    allow_entry_t entries [S_ALLOW_MAX];
    int count;
    char refusal [CURL_ERROR_SIZE + 128];   //  the first refusal, "" while none
};
typedef struct _xxl_http_guard_t guard_t;

//  Addresses refused unless an address entry names them: link-local
//  (where clouds serve instance metadata) and the other metadata services
static const struct {
    int family;
    unsigned char addr [16];
    int bits;
} s_metadata [] = {
    { AF_INET,  { 169, 254 }, 16 },                                     //  169.254.0.0/16
    { AF_INET,  { 100, 100, 100, 200 }, 32 },                           //  Alibaba Cloud
    { AF_INET6, { 0xfe, 0x80 }, 10 },                                   //  fe80::/10
    { AF_INET6, { 0xfd, 0x00, 0x0e, 0xc2, [14] = 0x02, [15] = 0x54 }, 128 },  //  fd00:ec2::254
};

//  1 when the first bits of a and b are the same
static int
s_prefix_eq (const unsigned char *a, const unsigned char *b, int bits)
{
    int bytes = bits / 8, rest = bits % 8;
    if (memcmp (a, b, (size_t) bytes))
        return 0;
    if (!rest)
        return 1;
    unsigned char mask = (unsigned char) (0xff << (8 - rest));
    return (a [bytes] & mask) == (b [bytes] & mask);
}

//  An address from its text (IPv6 with or without brackets): 0, or -1
static int
s_address (const char *text, int *family, unsigned char *addr)
{
    char copy [64];
    size_t len = strlen (text);
    if (len >= 2 && text [0] == '[' && text [len - 1] == ']') {
        text++;
        len -= 2;
    }
    if (len >= sizeof copy)
        return -1;
    memcpy (copy, text, len);
    copy [len] = 0;
    if (inet_pton (AF_INET, copy, addr) == 1)
        *family = AF_INET;
    else
    if (inet_pton (AF_INET6, copy, addr) == 1)
        *family = AF_INET6;
    else
        return -1;
    return 0;
}

//  1 when name is a host name: letters, digits, '-', '_', dots between labels
static int
s_host_name (const char *name)
{
    size_t len = strlen (name);
    if (!len || len > S_NAME_MAX || *name == '.' || name [len - 1] == '.' || strstr (name, ".."))
        return 0;
    return strspn (name, "abcdefghijklmnopqrstuvwxyz0123456789-_.") == len;
}

//  One entry of XXL_HTTP_ALLOW into entry: 0, or -1 with *why
static int
s_allow_entry (const char *text, allow_entry_t *entry, const char **why)
{
    memset (entry, 0, sizeof *entry);
    const char *slash = strchr (text, '/');
    if (slash || s_address (text, &entry->family, entry->addr) == 0) {
        char base [64];
        size_t len = slash? (size_t) (slash - text): strlen (text);
        if (len >= sizeof base) {
            *why = "not an address";
            return -1;
        }
        memcpy (base, text, len);
        base [len] = 0;
        if (s_address (base, &entry->family, entry->addr)) {
            *why = "not an IPv4 or IPv6 address";
            return -1;
        }
        int most = entry->family == AF_INET? 32: 128;
        entry->bits = most;
        if (slash) {
            char *end = NULL;
            long bits = strtol (slash + 1, &end, 10);
            if (!isdigit ((unsigned char) slash [1]) || *end || bits < 0 || bits > most) {
                *why = entry->family == AF_INET? "the prefix length is not 0 to 32"
                                               : "the prefix length is not 0 to 128";
                return -1;
            }
            entry->bits = (int) bits;
        }
        entry->kind = S_ALLOW_NET;
        return 0;
    }
    size_t len = strlen (text);
    while (len && text [len - 1] == '.')
        len--;                          //  "example.com." is example.com
    int suffix = strncmp (text, "*.", 2) == 0;
    if (len > S_NAME_MAX) {
        *why = "longer than a host name";
        return -1;
    }
    for (size_t i = 0; i < len; i++)
        entry->name [i] = (char) tolower ((unsigned char) text [i]);
    entry->name [len] = 0;
    if (!s_host_name (entry->name + (suffix? 2: 0))) {
        *why = "not a host name, *.domain or address[/bits]";
        return -1;
    }
    if (suffix)
        memmove (entry->name, entry->name + 1, len);     //  keeps ".domain"
    entry->kind = suffix? S_ALLOW_SUFFIX: S_ALLOW_NAME;
    return 0;
}

//  Reads XXL_HTTP_ALLOW into guard, logging entries it ignores to the run
static void
s_guard_init (guard_t *guard, xxl_run_t *run, CURL *curl)
{
    memset (guard, 0, sizeof *guard);
    guard->curl = curl;
    const char *list = getenv (S_ALLOW_ENV);
    if (!list || !list [strspn (list, S_ALLOW_SEPARATORS)])
        return;                         //  unset or blank: the default
    guard->listed = 1;
    while (*list) {
        list += strspn (list, S_ALLOW_SEPARATORS);
        size_t len = strcspn (list, S_ALLOW_SEPARATORS);
        if (!len)
            break;
        if (guard->count == S_ALLOW_MAX) {
            xxl_run_log (run, S_ALLOW_ENV ": the entries past the first 256 are ignored");
            break;
        }
        char text [S_NAME_MAX + 8];
        const char *why = NULL;
        if (len >= sizeof text)
            why = "longer than a host name";
        else {
            memcpy (text, list, len);
            text [len] = 0;
            if (s_allow_entry (text, &guard->entries [guard->count], &why) == 0)
                guard->count++;
        }
        if (why)
            xxl_run_log (run, S_ALLOW_ENV " entry '%.*s' ignored: %s",
                         (int) (len > 80? 80: len), list, why);
        list += len;
    }
}

//  The checked form of an address: an IPv4-mapped IPv6 one as IPv4
static void
s_unmap (int *family, unsigned char *addr)
{
    static const unsigned char mapped [12] = { [10] = 0xff, [11] = 0xff };
    if (*family == AF_INET6 && memcmp (addr, mapped, sizeof mapped) == 0) {
        memmove (addr, addr + 12, 4);
        *family = AF_INET;
    }
}

//  Whether the hop to host may connect to the address (family, addr):
//  NULL when it may, else the reason
static const char *
s_guard_judge (guard_t *guard, const char *host, int family, const unsigned char *addr)
{
    int metadata = 0;
    for (size_t i = 0; i < sizeof s_metadata / sizeof s_metadata [0]; i++)
        if (s_metadata [i].family == family
        &&  s_prefix_eq (s_metadata [i].addr, addr, s_metadata [i].bits))
            metadata = 1;
    if (!guard->listed)
        return metadata? "a link-local or cloud metadata address; "
                         S_ALLOW_ENV " may name it": NULL;
    for (int i = 0; i < guard->count; i++) {
        allow_entry_t *entry = &guard->entries [i];
        if (entry->kind == S_ALLOW_NET && entry->family == family
        &&  s_prefix_eq (entry->addr, addr, entry->bits))
            return NULL;
    }
    int literal, ignored;
    unsigned char scratch [16];
    literal = s_address (host, &ignored, scratch) == 0;
    size_t len = strlen (host);
    for (int i = 0; i < guard->count && !literal; i++) {
        allow_entry_t *entry = &guard->entries [i];
        size_t elen = strlen (entry->name);
        if ((entry->kind == S_ALLOW_NAME && streq_ci (host, entry->name))
        ||  (entry->kind == S_ALLOW_SUFFIX && len > elen
             && streq_ci (host + len - elen, entry->name)))
            return metadata? "a link-local or cloud metadata address: only an address "
                             "entry of " S_ALLOW_ENV " allows it": NULL;
    }
    return "not in " S_ALLOW_ENV;
}

//  curl's socket opener: every connection of the transfer, the first URL
//  and every redirect, is judged here on the address it is made to, with
//  the host of the URL being fetched.  After one refusal none is opened.
static curl_socket_t
s_open_socket (void *arg, curlsocktype purpose, struct curl_sockaddr *address)
{
    guard_t *guard = (guard_t *) arg;
    if (guard->refusal [0])
        return CURL_SOCKET_BAD;
    int family = address->family;
    unsigned char addr [16] = { 0 };
    char shown [INET6_ADDRSTRLEN] = "?";
    if (family == AF_INET) {
        struct sockaddr_in *in = (struct sockaddr_in *) &address->addr;
        memcpy (addr, &in->sin_addr, 4);
    }
    else
    if (family == AF_INET6) {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *) &address->addr;
        memcpy (addr, &in6->sin6_addr, 16);
    }
    inet_ntop (family, addr, shown, sizeof shown);
    //  The host being fetched: the URL curl follows now
    char *url = NULL, *host = NULL;
    CURLU *parsed = curl_url ();
    curl_easy_getinfo (guard->curl, CURLINFO_EFFECTIVE_URL, &url);
    if (parsed && url && curl_url_set (parsed, CURLUPART_URL, url, 0) == CURLUE_OK)
        curl_url_get (parsed, CURLUPART_HOST, &host, 0);
    char name [S_NAME_MAX + 2] = "";
    if (host) {
        size_t len = strlen (host);
        while (len && host [len - 1] == '.')
            len--;
        snprintf (name, sizeof name, "%.*s", (int) len, host);
    }
    curl_free (host);
    curl_url_cleanup (parsed);
    const char *why = NULL;
    if (purpose != CURLSOCKTYPE_IPCXN || (family != AF_INET && family != AF_INET6))
        why = "not an IP connection";
    else
    if (!*name)
        why = "no host in the URL";
    else {
        s_unmap (&family, addr);
        why = s_guard_judge (guard, name, family, addr);
    }
    if (why) {
        unsigned char scratch [16];
        int ignored;
        if (s_address (name, &ignored, scratch) == 0)
            snprintf (guard->refusal, sizeof guard->refusal,
                      "refused: host %s is not allowed (%s)", shown, why);
        else
            snprintf (guard->refusal, sizeof guard->refusal,
                      "refused: host %.200s (%s) is not allowed (%s)", name, shown, why);
        return CURL_SOCKET_BAD;
    }
    return socket (address->family, address->socktype, address->protocol);
}

//  --------------------------------------------------------------------

xxl_http_guard_t *
xxl_http_guard_new (xxl_run_t *run, CURL *curl)
{
    //  Large: on the heap, as in-process runs have small thread stacks
    guard_t *self = (guard_t *) calloc (1, sizeof (guard_t));
    if (!self)
        return NULL;
    s_guard_init (self, run, curl);
    curl_easy_setopt (curl, CURLOPT_OPENSOCKETFUNCTION, s_open_socket);
    curl_easy_setopt (curl, CURLOPT_OPENSOCKETDATA, self);
    return self;
}

void
xxl_http_guard_destroy (xxl_http_guard_t **self_p)
{
    if (self_p && *self_p) {
        free (*self_p);
        *self_p = NULL;
    }
}

const char *
xxl_http_guard_refusal (xxl_http_guard_t *self)
{
    return self && self->refusal [0]? self->refusal: NULL;
}
