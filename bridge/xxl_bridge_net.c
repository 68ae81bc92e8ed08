/*  xxl_bridge_net.c -- which executor URLs the bridge may call.

    See xxl_bridge_net.h.  Networks are kept as 16-byte addresses (IPv4
    as IPv4-mapped IPv6) with a prefix length over those 128 bits.
*/

#include "xxl_bridge_net.h"

#include <czmq.h>
#include <arpa/inet.h>
#include <curl/curl.h>

typedef struct {
    unsigned char addr [16];
    int bits;
} net_t;

struct _xxl_bridge_net_t {
    net_t *nets;
    size_t count;
};

//  An address literal into 16 bytes (IPv4 mapped); 0, or -1
static int
s_parse (const char *text, unsigned char out [16], bool *v4)
{
    struct in_addr a4;
    if (inet_pton (AF_INET, text, &a4) == 1) {
        memset (out, 0, 10);
        out [10] = out [11] = 0xff;
        memcpy (out + 12, &a4, 4);
        *v4 = true;
        return 0;
    }
    *v4 = false;
    return inet_pton (AF_INET6, text, out) == 1? 0: -1;
}

static bool
s_within (const net_t *net, const unsigned char addr [16])
{
    int bits = net->bits;
    for (int i = 0; bits > 0; i++, bits -= 8) {
        unsigned char mask = bits >= 8? 0xff: (unsigned char) (0xff << (8 - bits));
        if ((addr [i] & mask) != (net->addr [i] & mask))
            return false;
    }
    return true;
}

xxl_bridge_net_t *
xxl_bridge_net_new (const char *cidrs, char *why, size_t whylen)
{
    xxl_bridge_net_t *self = (xxl_bridge_net_t *) zmalloc (sizeof *self);
    char *copy = strdup (cidrs? cidrs: XXL_BRIDGE_NET_DEFAULT);
    char *save = NULL;
    for (char *entry = strtok_r (copy, ", ", &save); entry; entry = strtok_r (NULL, ", ", &save)) {
        net_t net;
        bool v4;
        char *slash = strchr (entry, '/');
        if (slash)
            *slash = 0;
        if (s_parse (entry, net.addr, &v4)) {
            snprintf (why, whylen, "--executors: '%s' is not an IP address", entry);
            goto fail;
        }
        int max = v4? 32: 128;
        net.bits = max;
        if (slash) {
            char *end;
            long bits = strtol (slash + 1, &end, 10);
            if (!slash [1] || *end || bits < 0 || bits > max) {
                snprintf (why, whylen, "--executors: '%s/%s' has no prefix length 0-%d", entry,
                          slash + 1, max);
                goto fail;
            }
            net.bits = (int) bits;
        }
        if (v4)
            net.bits += 96;
        net_t *grown = (net_t *) realloc (self->nets, (self->count + 1) * sizeof *grown);
        assert (grown);
        self->nets = grown;
        self->nets [self->count++] = net;
    }
    free (copy);
    if (!self->count) {
        snprintf (why, whylen, "--executors names no network");
        xxl_bridge_net_destroy (&self);
    }
    return self;
fail:
    free (copy);
    xxl_bridge_net_destroy (&self);
    return NULL;
}

void
xxl_bridge_net_destroy (xxl_bridge_net_t **self_p)
{
    xxl_bridge_net_t *self = *self_p;
    if (!self)
        return;
    free (self->nets);
    free (self);
    *self_p = NULL;
}

//  true when the 16-byte address lies in one of the networks
static bool
s_allowed (xxl_bridge_net_t *self, const unsigned char addr [16])
{
    for (size_t i = 0; i < self->count; i++)
        if (s_within (self->nets + i, addr))
            return true;
    return false;
}

bool
xxl_bridge_net_allows (xxl_bridge_net_t *self, const struct sockaddr *addr)
{
    unsigned char bytes [16];
    if (addr->sa_family == AF_INET) {
        memset (bytes, 0, 10);
        bytes [10] = bytes [11] = 0xff;
        memcpy (bytes + 12, &((const struct sockaddr_in *) addr)->sin_addr, 4);
    }
    else
    if (addr->sa_family == AF_INET6)
        memcpy (bytes, &((const struct sockaddr_in6 *) addr)->sin6_addr, 16);
    else
        return false;
    return s_allowed (self, bytes);
}

int
xxl_bridge_net_check (xxl_bridge_net_t *self, const char *url, char *why, size_t whylen)
{
    for (const char *c = url; *c; c++)
        if ((unsigned char) *c <= 0x20 || *c == 0x7f) {
            snprintf (why, whylen, "the address holds a blank or control character");
            return -1;
        }
    if (strncmp (url, "http://", 7) && strncmp (url, "https://", 8)) {
        snprintf (why, whylen, "the address is not an http:// or https:// URL");
        return -1;
    }
    //  Parsed as libcurl parses CURLOPT_URL (its URL API, the same flags),
    //  so the host judged is the host libcurl calls
    CURLU *parsed = curl_url ();
    char *part = NULL, *host = NULL;
    int rc = -1;
    if (!parsed) {
        snprintf (why, whylen, "out of memory");
        return -1;
    }
    if (curl_url_set (parsed, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME)) {
        snprintf (why, whylen, "the address is not a URL libcurl reads");
        goto done;
    }
    if (curl_url_get (parsed, CURLUPART_SCHEME, &part, 0) || !part
    ||  (strcmp (part, "http") && strcmp (part, "https"))) {
        snprintf (why, whylen, "the address is not an http:// or https:// URL");
        goto done;
    }
    curl_free (part);
    part = NULL;
    static const CURLUPart userinfo [] = { CURLUPART_USER, CURLUPART_PASSWORD,
                                           CURLUPART_OPTIONS };
    for (size_t i = 0; i < sizeof userinfo / sizeof *userinfo; i++)
        if (curl_url_get (parsed, userinfo [i], &part, 0) == CURLUE_OK) {
            snprintf (why, whylen, "the address carries user information (user@host)");
            goto done;
        }
    if (curl_url_get (parsed, CURLUPART_ZONEID, &part, 0) == CURLUE_OK) {
        snprintf (why, whylen, "the address carries an IPv6 zone id");
        goto done;
    }
    if (curl_url_get (parsed, CURLUPART_HOST, &host, 0) || !host || !*host) {
        snprintf (why, whylen, "the address has no host");
        goto done;
    }
    //  (an IPv6 literal comes bracketed)
    char name [64];
    size_t len = strlen (host);
    const char *from = host;
    if (len >= 2 && host [0] == '[' && host [len - 1] == ']') {
        from = host + 1;
        len -= 2;
    }
    if (len >= sizeof name) {
        snprintf (why, whylen, "the address's host is not an IP address (the bridge calls"
                  " executors by address only)");
        goto done;
    }
    memcpy (name, from, len);
    name [len] = 0;
    unsigned char addr [16];
    bool v4;
    if (streq (name, "localhost"))
        s_parse ("127.0.0.1", addr, &v4);
    else
    if (s_parse (name, addr, &v4)) {
        snprintf (why, whylen, "the address's host %s is not an IP address (the bridge calls"
                  " executors by address only)", name);
        goto done;
    }
    if (s_allowed (self, addr))
        rc = 0;
    else
        snprintf (why, whylen, "%s is outside the networks the bridge may call (--executors)",
                  name);
done:
    curl_free (part);
    curl_free (host);
    curl_url_cleanup (parsed);
    return rc;
}
