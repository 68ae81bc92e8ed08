/*  xxl_bridge_net.c -- which executor URLs the bridge may call.

    See xxl_bridge_net.h.  Networks are kept as 16-byte addresses (IPv4
    as IPv4-mapped IPv6) with a prefix length over those 128 bits.
*/

#include "xxl_bridge_net.h"

#include <czmq.h>
#include <arpa/inet.h>

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

int
xxl_bridge_net_check (xxl_bridge_net_t *self, const char *url, char *why, size_t whylen)
{
    for (const char *c = url; *c; c++)
        if ((unsigned char) *c <= 0x20 || *c == 0x7f) {
            snprintf (why, whylen, "the address holds a blank or control character");
            return -1;
        }
    const char *host;
    if (strncmp (url, "http://", 7) == 0)
        host = url + 7;
    else
    if (strncmp (url, "https://", 8) == 0)
        host = url + 8;
    else {
        snprintf (why, whylen, "the address is not an http:// or https:// URL");
        return -1;
    }
    char name [64];
    size_t len;
    if (*host == '[') {
        const char *end = strchr (host, ']');
        len = end? (size_t) (end - host - 1): sizeof name;
        host++;
    }
    else
        len = strcspn (host, ":/?#");
    if (len == 0 || len >= sizeof name) {
        snprintf (why, whylen, "the address has no host");
        return -1;
    }
    memcpy (name, host, len);
    name [len] = 0;
    if (strchr (name, '@')) {
        snprintf (why, whylen, "the address carries user information");
        return -1;
    }
    unsigned char addr [16];
    bool v4;
    if (streq (name, "localhost"))
        s_parse ("127.0.0.1", addr, &v4);
    else
    if (s_parse (name, addr, &v4)) {
        snprintf (why, whylen, "the address's host %s is not an IP address (the bridge calls"
                  " executors by address only)", name);
        return -1;
    }
    for (size_t i = 0; i < self->count; i++)
        if (s_within (self->nets + i, addr))
            return 0;
    snprintf (why, whylen, "%s is outside the networks the bridge may call (--executors)", name);
    return -1;
}
