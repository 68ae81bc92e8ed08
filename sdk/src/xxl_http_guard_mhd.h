/*  xxl_http_guard_mhd.h -- an xxl_http_guard_t on a libmicrohttpd server:
    its connection notices (MHD_OPTION_NOTIFY_CONNECTION) give and free
    the slots, each slot kept as the connection's socket context.

    Header only (inline), for the servers that link libmicrohttpd: the
    scheduler's HTTP server and xxl-bridge's admin; libxxl itself does
    not link it.
*/

#ifndef XXL_HTTP_GUARD_MHD_H_INCLUDED
#define XXL_HTTP_GUARD_MHD_H_INCLUDED

#include "xxl_http_guard.h"
#include <czmq.h>
#include <microhttpd.h>

//  The guard's slot of a connection (NULL: none, as for a connection the
//  server took before the guard heard of it)
static inline xxl_http_slot_t *
xxl_http_guard_mhd_slot (struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info (
        conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info? (xxl_http_slot_t *) info->socket_context: NULL;
}

//  A connection notice of the server, to the guard (xxl_http_guard_notice)
static inline void
xxl_http_guard_mhd_notice (xxl_http_guard_t *guard, struct MHD_Connection *conn,
                           void **socket_context, enum MHD_ConnectionNotificationCode code)
{
    bool started = code == MHD_CONNECTION_NOTIFY_STARTED;
    const union MHD_ConnectionInfo *fd = started? MHD_get_connection_info (
        conn, MHD_CONNECTION_INFO_CONNECTION_FD): NULL;
    const union MHD_ConnectionInfo *addr = started? MHD_get_connection_info (
        conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS): NULL;
    xxl_http_guard_notice (guard, started, fd? fd->connect_fd: -1,
                           addr? addr->client_addr: NULL, socket_context, zclock_mono ());
}

#endif
