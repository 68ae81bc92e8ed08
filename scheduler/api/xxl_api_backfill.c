/*  xxl_api_backfill.c -- the client api's backfills: JOB_BACKFILL,
    BACKFILL_LIST, _SHOW, _STOP (DESIGN §13; docs/operations.md, Backfill).

    JOB_BACKFILL judges the range and counts its instants
    (engine_backfill_start) and writes the backfill's row in this turn's
    transaction; the planner's side (plan/xxl_backfill.c) makes its runs
    from the next tick on.  STOP ends a RUNNING backfill: the runs it made
    stay.  A key with apps reads and acts on the backfills of its apps'
    jobs only (xxl_access.c, "backfillId"); BACKFILL_LIST then needs jobId.
*/

#include "xxl_api.h"

//  A lookup's answer rc (0 found, 1 absent, -1 store error): 0, or -1 once
//  answered (404 "<what> N not found", or 500 with the store's reason)
static int
s_found (server_t *self, request_t *request, int rc, const char *what, int64_t id)
{
    if (rc == 0)
        return 0;
    char text [64];
    snprintf (text, sizeof text, "%s %" PRId64 " not found", what, id);
    engine_reply (self, request, rc < 0? XXL_FAILURE: XXL_NOT_FOUND,
                  rc < 0? xxl_store_error (self->store): text);
    return -1;
}

void
api_job_backfill (server_t *self, request_t *request)
{
    int64_t id = api_int (request, "jobId");
    xxl_job_t job;
    if (s_found (self, request, xxl_store_job_load (self->store, id, &job), "job", id))
        return;
    char by [300], why [512];
    snprintf (by, sizeof by, "key '%s' (%s)", request->who->name, request->who->role);
    int code;
    int64_t backfill = engine_backfill_start (self, &job, api_int (request, "from"),
                                              api_int (request, "to"),
                                              api_int (request, "perSecond"), by, &code, why,
                                              sizeof why);
    xxl_job_free (&job);
    if (!backfill) {
        engine_reply (self, request, code, why);
        return;
    }
    engine_reply_begin (self, request);
    if (xxl_store_backfill_encode (self->store, self->enc, backfill) != 1) {
        engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
        return;
    }
    engine_reply_end (self, request);
}

//  BACKFILL_LIST: newest first, below id `before` (paging)
void
api_backfill_list (server_t *self, request_t *request)
{
    int64_t job = api_int (request, "jobId");
    if (job == 0 && engine_reads_scoped (request->who)) {
        char why [300];
        snprintf (why, sizeof why, "key '%s' (%s) lists the backfills of one job of its apps"
                  " at a time (give jobId)", request->who->name, request->who->role);
        engine_reply (self, request, XXL_FORBIDDEN, why);
        return;
    }
    engine_reply_begin (self, request);
    xxl_enc_map_begin (self->enc);
    xxl_enc_key (self->enc, "backfills");
    int truncated = 0;
    if (xxl_store_backfill_encode_below (self->store, self->enc, XXL_REPLY_MAX, &truncated, job,
                                         api_int (request, "before"),
                                         api_int (request, "limit")) < 0) {
        engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
        return;
    }
    xxl_enc_kbool (self->enc, "truncated", truncated);
    xxl_enc_map_end (self->enc);
    engine_reply_end (self, request);
}

void
api_backfill_show (server_t *self, request_t *request)
{
    api_show_row (self, request, "backfillId", xxl_store_backfill_encode, "backfill");
}

void
api_backfill_stop (server_t *self, request_t *request)
{
    int64_t id = api_int (request, "backfillId");
    xxl_store_backfill_t row;
    if (s_found (self, request, xxl_store_backfill_get (self->store, id, &row), "backfill", id))
        return;
    if (strneq (row.state, "RUNNING")) {
        char text [128];
        snprintf (text, sizeof text, "backfill %" PRId64 " is %s, not RUNNING", id, row.state);
        xxl_store_backfill_free (&row);
        engine_reply (self, request, XXL_CONFLICT, text);
        return;
    }
    xxl_store_backfill_free (&row);
    char msg [300];
    snprintf (msg, sizeof msg, "stopped by key '%s' (%s)", request->who->name,
              request->who->role);
    if (xxl_store_backfill_stop (self->store, id, msg, engine_now ()) < 0) {
        engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
        return;
    }
    engine_reply_begin (self, request);
    if (xxl_store_backfill_encode (self->store, self->enc, id) != 1) {
        engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
        return;
    }
    engine_reply_end (self, request);
}
