/*  xxl_api.h -- what the client api's files share; only they include it.

    The api is split by resource:
        xxl_api.c           a request's way to its handler: the command,
                            judging, access, the table of handlers (top)
        xxl_api_fields.c    the judged fields handlers read, shared reply
                            shapes (below every handler)
        xxl_api_group.c     GROUP_ADD, _LIST, _SHOW, _UPDATE, _RM
        xxl_api_job.c       JOB_ADD, _LIST, _SHOW, _UPDATE, _RM, _COPY, _START,
                            _STOP, _TRIGGER, _NEXT
        xxl_api_log.c       LOG_LIST, _SHOW, _CAT, _KILL, _CLEAR
        xxl_api_glue.c      GLUE_HISTORY, _SHOW, _ROLLBACK
        xxl_api_flow.c      WORKFLOW_ADD, _LIST, _SHOW, _UPDATE, _RM, _START, _STOP,
                            _TRIGGER, _RUNS, _RUN_SHOW, _RUN_KILL, _RUN_RETRY
        xxl_api_status.c    PING, AGENT_LIST, REPORT, PLUGIN_LIST
        xxl_api_audit.c     AUDIT_LIST (the audit's rows: audit/xxl_audit.c)
        xxl_api_users.c     USER_*, TOKEN_*, and the HTTP server's socket
        xxl_api_calendar.c  CALENDAR_ADD, _LIST, _SHOW, _RM
        xxl_api_backfill.c  JOB_BACKFILL, BACKFILL_LIST, _SHOW, _STOP
    A command's fields, their types and ranges are data (xxl_commands.c,
    in libxxl, which xxl-ctl uses too): engine_handle_api judges a request
    by them before its handler runs, and a handler judges the fields that
    come after a lookup (api_judge) once it has looked up.  Handlers read
    the judged fields with api_int, api_str, ... and judge themselves only
    what needs the store or the engine.  Functions named api_* are shared
    among these files and nowhere else.
*/

#ifndef XXL_API_H_INCLUDED
#define XXL_API_H_INCLUDED

#include "xxl_engine.h"

//  A list reply stops before it would pass the frame limit: this much
//  is left for the rest of the reply
#define XXL_REPLY_MAX       (XXL_MSG_MAX_FRAME - 64 * 1024)

//  Every command's handler, as xxl_commands.def names it: in the
//  xxl_api_<resource>.c of its command (the list above)
#define XXL_COMMAND(name, fields, access, scope, flags, handler, ...) \
    void handler (server_t *self, request_t *request);
#define XXL_CTL_ONLY(cmd)
#include "xxl_commands.def"
#undef XXL_COMMAND
#undef XXL_CTL_ONLY

//  xxl_api_fields.c
//  Judges the request's fields that come after the handler's lookup
//  `after` (xxl_commands.h); 0, or -1 once it has answered 400
int api_judge (server_t *self, request_t *request, int after);
//  A judged field's value, or its default (xxl_command_int, ...)
int64_t api_int (request_t *request, const char *key);
bool api_bool (request_t *request, const char *key);
const char *api_str (request_t *request, const char *key);
int api_addresses_check (xxl_msg_t *msg, const char *field, const char *list);
void api_encode_truncated (server_t *self, int truncated, int64_t next_offset);
void api_show_row (server_t *self, request_t *request, const char *key,
                   int (*encode) (xxl_store_t *store, xxl_enc_t *enc, int64_t id),
                   const char *what);

//  xxl_api_log.c: log rows deleted a batch per turn (LOG_CLEAR's; and a removed job's,
//  past the first batch: the reply {id, deletedLogs} once all are gone, with
//  the workflows' lists of a JOB_RM with force, taken from *changed and *removed)
#define XXL_CLEAR_BATCH 2000
void api_job_rm_logs_later (server_t *self, request_t *request, int64_t job_id,
                            int64_t deleted, zlistx_t **changed, zlistx_t **removed);
//  A list of ids (int64_t *) as an array under key, [] when empty
void api_encode_ids (server_t *self, const char *key, zlistx_t *ids);

//  xxl_api_flow.c: JOB_RM's look at the workflows that run job: XXL_OK
//  when none does, or force (their nodes of the job removed: the ids of
//  the workflows changed, and of those removed because no valid
//  definition was left, added to the lists as int64_t *); else
//  XXL_CONFLICT (or XXL_FAILURE) with the reason
int api_flow_job_rm (server_t *self, int64_t job, bool force, char *why, size_t whylen,
                     zlistx_t *changed, zlistx_t *removed);

#endif
