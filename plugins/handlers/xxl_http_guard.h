/*  xxl_http_guard.h -- where a handler plugin's libcurl transfer may
    connect: the XXL_HTTP_ALLOW list of the agent's environment.

    Shared by the shipped handlers that make HTTP calls a job's param
    points somewhere (httpJobHandler, the AI handlers), compiled into each
    of their plugins (its symbols are hidden: each plugin has its own).

    XXL_HTTP_ALLOW lists the hosts, separated by commas or blanks: a name
    (api.example.com), every subdomain of one (*.example.com, not
    example.com itself), an IPv4 or IPv6 address or network (10.0.0.0/8,
    ::1, fd00::/8).  Unset or blank, any host may be called but a
    link-local or cloud metadata address (169.254.0.0/16, fe80::/10,
    fd00:ec2::254, 100.100.100.200).  Set, a connection is allowed when an
    address entry holds its address, or a name entry the URL's host name
    and the address is not a metadata one (those need an address entry).
    An entry that is none of these is logged to the run and never matches;
    the first 256 entries are read.

    The guard judges every connection of the transfer in curl's socket
    opener, on the very address connected -- after resolution, so a name
    that resolves (or rebinds) to a refused address is refused -- for the
    URL and every redirect, each hop with its own host name.  A refusal
    opens no socket: the transfer fails, and the refusal is kept ("refused:
    host H is not allowed (why)"); after one refusal no further socket is
    opened.  Through a proxy (libcurl's http_proxy, https_proxy, ALL_PROXY,
    with no_proxy) the connection is the proxy's: the address judged is
    the proxy's, a name entry still matches the URL's host.
*/

#ifndef XXL_HTTP_GUARD_H_INCLUDED
#define XXL_HTTP_GUARD_H_INCLUDED

#include <xxl/handler.h>
#include <curl/curl.h>

#define XXL_HTTP_GUARD_EXPORT   __attribute__ ((visibility ("hidden")))

typedef struct _xxl_http_guard_t xxl_http_guard_t;

//  Reads XXL_HTTP_ALLOW now (logging the entries it ignores to the run's
//  log) and sets curl's socket opener to judge each connection of curl's
//  transfers.  The guard must outlive the transfers.  NULL when out of
//  memory.
XXL_HTTP_GUARD_EXPORT xxl_http_guard_t *
    xxl_http_guard_new (xxl_run_t *run, CURL *curl);

//  Destroys the guard; nulls *self_p
XXL_HTTP_GUARD_EXPORT void
    xxl_http_guard_destroy (xxl_http_guard_t **self_p);

//  The first refused connection, "refused: host H is not allowed (why)";
//  NULL while none was refused
XXL_HTTP_GUARD_EXPORT const char *
    xxl_http_guard_refusal (xxl_http_guard_t *self);

#endif
