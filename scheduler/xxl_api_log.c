/*  xxl_api_log.c -- the client api's runs (log rows): LOG_LIST, LOG_SHOW,
    LOG_CAT and LOG_KILL (forwarded to the agent that ran the run),
    LOG_CLEAR.
*/

#include "xxl_api.h"

//  LOG_LIST (xxl_store_log_filter_t says what a page holds)
void
api_log_list (server_t *self, request_t *request)
{
    int64_t job_id = api_int (request, "jobId");
    int64_t group_id = api_int (request, "jobGroup");
    int64_t status = api_int (request, "logStatus");
    int64_t from = api_int (request, "triggerTimeFrom");
    int64_t to = api_int (request, "triggerTimeTo");
    int64_t max_id = api_int (request, "maxId");
    int64_t limit = api_int (request, "limit");
    int64_t offset = api_int (request, "offset");
    engine_reply_begin (self, request);
    xxl_enc_map_begin (self->enc);
    xxl_enc_key (self->enc, "logs");
    int truncated;
    xxl_store_log_filter_t filter = {
        .job_id = job_id, .group_id = group_id, .status = status, .from = from, .to = to,
        .max_id = max_id, .now = engine_now (), .limit = limit, .offset = offset
    };
    int rows = xxl_store_log_encode_page (self->store, self->enc, XXL_REPLY_MAX, &truncated,
                                          &filter);
    api_encode_truncated (self, truncated, offset + (rows > 0? rows: 0));
    xxl_enc_map_end (self->enc);
    engine_reply_end (self, request);
}

void
api_log_show (server_t *self, request_t *request)
{
    api_show_row (self, request, "logId", xxl_store_log_encode, "log");
}

//  LOG_CAT and LOG_KILL: forwarded to the agent that ran the log
static void
s_log_forward (server_t *self, request_t *request, int kill)
{
    int64_t id = api_int (request, "logId");
    int64_t from = api_int (request, "fromLineNum");
    xxl_log_t log;
    int rc = xxl_store_log_load (self->store, id, &log);
    if (rc) {
        char text [64];
        snprintf (text, sizeof text, "log %" PRId64 " not found", id);
        engine_reply (self, request, rc < 0? XXL_FAILURE: XXL_NOT_FOUND, text);
        return;
    }
    char why [512];
    if (!*log.executor_address && kill) {
        engine_reply (self, request, XXL_CONFLICT, log.trigger_code == 0
                      ? "this run is not running: it has not been sent to an agent yet"
                      : "this run is not running: its trigger failed (see its triggerMsg)");
        xxl_log_free (&log);
        return;
    }
    if (!*log.executor_address) {
        engine_reply (self, request, XXL_NOT_FOUND,
                      "this run was never sent to an agent, which keeps the log (see its"
                      " triggerMsg)");
        xxl_log_free (&log);
        return;
    }
    //  trigger_code 0 with an address: the RUN went (or goes in this turn,
    //  ahead of the KILL on the same connection), its answer not written yet
    if (kill && (log.handle_code != 0 || (log.trigger_code != XXL_OK && log.trigger_code != 0))) {
        engine_reply (self, request, XXL_CONFLICT, "this run is not running");
        xxl_log_free (&log);
        return;
    }
    pending_t *pending = engine_agent_request (self, log.executor_address, kill? "KILL": "LOG",
                                               kill? PENDING_KILL: PENDING_LOG,
                                               self->config.request_timeout_ms, why, sizeof why);
    if (!pending) {
        engine_reply (self, request, XXL_UNAVAILABLE, why);
        xxl_log_free (&log);
        return;
    }
    pending->log_id = id;
    pending->client = zframe_dup (request->rid);
    pending->client_id = xxl_msg_id (request->msg);
    api_audit_forwarded (request, pending);
    if (kill)
        xxl_enc_kint (self->enc, "jobId", log.job_id);
    else {
        xxl_enc_kint (self->enc, "logId", id);
        xxl_enc_kint (self->enc, "logDateTime", log.trigger_time);
        xxl_enc_kint (self->enc, "fromLineNum", from);
    }
    engine_agent_send (self, pending);
    xxl_log_free (&log);
}

void api_log_cat (server_t *self, request_t *r) { s_log_forward (self, r, 0); }
void api_log_kill (server_t *self, request_t *r) { s_log_forward (self, r, 1); }

//  XXL-JOB's manual clear: by age, keep the last N, or all; finished rows
//  only (a row waiting for its trigger or result is never removed)
void
api_log_clear (server_t *self, request_t *request)
{
    int64_t job_id = api_int (request, "jobId");
    int64_t days = api_int (request, "beforeDays");
    int64_t keep = api_int (request, "keepLast");
    bool all = api_bool (request, "all");
    if ((days >= 0) + (keep >= 0) + (all? 1: 0) != 1) {
        engine_reply (self, request, XXL_BAD_REQUEST,
                      "give exactly one of beforeDays, keepLast, all");
        return;
    }
    int64_t deleted = 0, batch;
    do {
        if (days >= 0)
            batch = engine_log_delete (self, job_id, engine_now () - days * 86400000, INT64_MAX,
                                       10000);
        else
        if (keep >= 0) {
            int64_t floor = keep == 0? INT64_MAX: xxl_store_log_id_at_rank (self->store, job_id,
                                                                            keep - 1);
            batch = floor > 0? engine_log_delete (self, job_id, INT64_MAX, floor, 10000): 0;
        }
        else
            batch = engine_log_delete (self, job_id, INT64_MAX, INT64_MAX, 10000);
        deleted += batch;
    } while (batch == 10000);
    engine_reply_begin (self, request);
    xxl_enc_map_begin (self->enc);
    xxl_enc_kint (self->enc, "deleted", deleted);
    xxl_enc_map_end (self->enc);
    engine_reply_end (self, request);
}
