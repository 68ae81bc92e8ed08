/*  xxl_engine_base.h -- what every module of the engine shares: the
    actor's name (server_t, composed in xxl_engine.h), its limits, the
    rate-limited log lines, a client request in hand, and the helpers of
    xxl_server.c every module may call.  Modules include it through their
    own header; only xxl_engine.h composes them.
*/

#ifndef XXL_ENGINE_BASE_H_INCLUDED
#define XXL_ENGINE_BASE_H_INCLUDED

#include "xxl_server.h"
#include <poll.h>
#include <sys/timerfd.h>
#include "xxl_store.h"
#include "xxl_registry.h"
#include "xxl_heard.h"
#include "xxl_routers.h"
#include "xxl_pool.h"
#include "xxl_timer.h"
#include "xxl_schedule.h"
#include "xxl_keys.h"
#include "xxl_alarms.h"
#include "xxl/msg.h"
#include "xxl_transport.h"
#include "xxl/cron.h"
#include "xxl/handler.h"
#include "xxl_tz.h"
#include "xxl_commands.h"
#include "xxl_metrics.h"
#include "xxl_http.h"
#include "xxl_reporter.h"
#include <inttypes.h>

#include <unistd.h>

#define XXL_MAX_TEXT        (64 * 1024)         //  desc, param, msg fields
//  A FIX_DELAY job waits for its run to finish: next time "never" until then
#define XXL_WAITING         253402300799000LL
//  The periodic services (xxl_services.c), by index in service_next
#define XXL_HANDLE_MSG_CAP  15000
#define XXL_IDS_AHEAD       256                 //  request ids drawn per getrandom
#define XXL_ADDRESSES_PER_CONNECTION 16         //  addresses one keyed agent connection registers
#define XXL_WAL_FIRE_MS     100                 //  no WAL restart this close to a fire
//  Replies a client's ZeroMQ queue (xxl_transport: XXL_ROLE_API) has no
//  room for wait in its backlog, up to these bytes; what a client that
//  stops reading can cost us
#define XXL_API_BACKLOG     (64 * 1024 * 1024)
#define XXL_API_BACKLOGS    (256 * 1024 * 1024) //  (all clients together)
#define XXL_API_LARGE       (64 * 1024)         //  a reply this large waits for the
                                                //  client's socket to be drained
#define XXL_API_TURN_BYTES  (16 * 1024 * 1024)  //  replies a turn reads requests for
#define XXL_API_TURN_MS     100         //  ms a turn reads client requests for
#define XXL_RETURN_EXTRA    5                   //  api return address: routing id,
                                                //  socket fd (int32), then peer kind:
#define XXL_PEER_DEALER     0 
#define XXL_PEER_REQ        1
#define XXL_PEER_HTTP       2                   //  (on the http socket: xxl_api_users.c)


//  The actor's state, composed of the modules' (xxl_engine.h)
typedef struct _server_t server_t;


//  A log line that a peer can provoke at will is written at most once per
//  XXL_RATELOG_MS per kind; the next one says how many were left out
#define XXL_RATELOG_MS 10000
//  While the store cannot begin a transaction, turns with no input come
//  no more often than this (s_turn_timeout)
#define XXL_STORE_DOWN_MS 100
typedef struct {
    int64_t logged_at;                  //  monotonic ms of the last line (0: none)
    uint64_t suppressed;                //  lines left out since
} ratelog_t;

//  Info lines of a kind a peer can provoke, each one ordinary (an agent
//  registered): a burst of XXL_INFOLOG_BURST goes out (1,000 agents
//  starting at once are each named), then XXL_INFOLOG_PER_S a second;
//  the next line that goes out says how many were left out
#define XXL_INFOLOG_BURST 1000
#define XXL_INFOLOG_PER_S 10
typedef struct {
    double tokens;                      //  lines that may go out now
    int64_t filled_at;                  //  monotonic ms tokens was counted at (0: full)
    uint64_t suppressed;                //  lines left out since the last one
} infolog_t;



//  Server-side context of the message being handled
typedef struct {
    zframe_t *rid;                      //  sender routing id
    xxl_msg_t *msg;
    const xxl_command_t *command;       //  its `t`'s fields (xxl_commands.h)
    xxl_args_t args;                    //  its fields as judged, decoded once
    const xxl_who_t *who;               //  its sender, never NULL
    //  Out, for the audit: set by engine_reply and its kin
    int code;                           //  the reply's code (0: not answered yet)
    int64_t target;                     //  the id a reply carried (engine_reply_id; 0 none)
    bool audited;                       //  engine_audit recorded it
} request_t;

void engine_warn_limited (ratelog_t *kind, const char *format, ...)
    __attribute__ ((format (printf, 2, 3)));
void engine_info_limited (infolog_t *kind, const char *format, ...)
    __attribute__ ((format (printf, 2, 3)));
bool engine_has_control (const char *text);
zhashx_t *engine_id_map (zhashx_destructor_fn *destructor);
void engine_msg_destroy (void **item);
//  A destructor that frees the item (zhashx_set_destructor, zlistx's)
void engine_free_item (void **item);

#endif
