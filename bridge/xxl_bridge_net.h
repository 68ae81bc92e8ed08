/*  xxl_bridge_net.h -- which executor URLs the bridge may call.

    An executor's URL (its registryValue) is called only when it is
    http:// or https://, carries no user information (user@, user:pass@,
    ;options), its host is an IP address literal (or "localhost", taken
    as 127.0.0.1 and ::1) that lies in one of the allowed networks, and
    it holds no blank or control character.  The URL is parsed by
    libcurl's URL API as libcurl parses the URL it calls, so the host
    judged is the host called.  A host name is refused: what it resolves
    to could change between the check and the call; and every connection
    the bridge opens is checked again by its address
    (xxl_bridge_net_allows, from xxl_bridge_call's check).  No state but
    the list of networks.  Called by xxl_bridge.c (makes it, hands
    xxl_bridge_net_allows to its calls) and xxl_bridge_exec.c (checks
    each registry); calls nothing of the bridge but libcurl's URL API.
*/

#ifndef XXL_BRIDGE_NET_H_INCLUDED
#define XXL_BRIDGE_NET_H_INCLUDED

#include <stddef.h>
#include <stdbool.h>

typedef struct _xxl_bridge_net_t xxl_bridge_net_t;

//  The default networks: loopback only
#define XXL_BRIDGE_NET_DEFAULT  "127.0.0.0/8,::1/128"

//  Parses "CIDR,CIDR,..." (an address without /N is one host); NULL with
//  why on a malformed entry
xxl_bridge_net_t *xxl_bridge_net_new (const char *cidrs, char *why, size_t whylen);
void xxl_bridge_net_destroy (xxl_bridge_net_t **self_p);

//  0 when url may be called, else -1 with why
int xxl_bridge_net_check (xxl_bridge_net_t *self, const char *url, char *why, size_t whylen);

//  true when addr (AF_INET or AF_INET6) lies in one of the networks
struct sockaddr;
bool xxl_bridge_net_allows (xxl_bridge_net_t *self, const struct sockaddr *addr);

#endif
