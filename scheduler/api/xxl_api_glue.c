/*  xxl_api_glue.c -- the client api's glue versions of a job:
    GLUE_HISTORY, GLUE_SHOW, GLUE_ROLLBACK.
*/

#include "xxl_api.h"

//  GLUE_HISTORY: a page of a job's glue versions, newest first, without
//  their source (GLUE_SHOW has it)
void
api_glue_history (server_t *self, request_t *request)
{
    int64_t limit = api_int (request, "limit");
    int64_t offset = api_int (request, "offset");
    xxl_job_t job;
    if (engine_job_from_request (self, request, &job))
        return;
    engine_reply_begin (self, request);
    xxl_enc_map_begin (self->enc);
    xxl_enc_key (self->enc, "glues");
    int truncated;
    int rows = xxl_store_glue_encode_page (self->store, self->enc, XXL_REPLY_MAX, &truncated,
                                           job.id, limit, offset);
    xxl_enc_kint (self->enc, "total", xxl_store_glue_count (self->store, job.id));
    api_encode_truncated (self, truncated, offset + (rows > 0? rows: 0));
    xxl_enc_map_end (self->enc);
    engine_reply_end (self, request);
    xxl_job_free (&job);
}

//  The job of field jobId and field version (0 when absent: the newest);
//  replies itself (404) and returns -1 when either is missing
static int
s_glue_version (server_t *self, request_t *request, xxl_job_t *job, int64_t *version)
{
    *version = api_int (request, "version");
    if (engine_job_from_request (self, request, job))
        return -1;
    if (*version == 0)
        *version = xxl_store_glue_last (self->store, job->id);
    char text [160];
    if (*version <= 0) {
        snprintf (text, sizeof text, "job %" PRId64 " has no glue versions", job->id);
        engine_reply (self, request, XXL_NOT_FOUND, text);
        xxl_job_free (job);
        return -1;
    }
    if (xxl_store_glue_exists (self->store, job->id, *version) != 1) {
        snprintf (text, sizeof text, "job %" PRId64 " has no glue version %" PRId64
                  " (the last %d are kept)", job->id, *version, XXL_GLUE_KEEP);
        engine_reply (self, request, XXL_NOT_FOUND, text);
        xxl_job_free (job);
        return -1;
    }
    return 0;
}

void
api_glue_show (server_t *self, request_t *request)
{
    xxl_job_t job;
    int64_t version;
    if (s_glue_version (self, request, &job, &version))
        return;
    engine_reply_begin (self, request);
    xxl_store_glue_encode (self->store, self->enc, job.id, version);
    engine_reply_end (self, request);
    xxl_job_free (&job);
}

//  Makes a kept version the job's glue again, as a new version
void
api_glue_rollback (server_t *self, request_t *request)
{
    xxl_job_t job;
    int64_t version;
    if (s_glue_version (self, request, &job, &version))
        return;
    char *type, *source;
    if (xxl_store_glue_get (self->store, job.id, version, &type, &source)) {
        engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
        free (type);
        free (source);
        xxl_job_free (&job);
        return;
    }
    free (job.glue_type);
    job.glue_type = type;
    free (job.glue_source);
    job.glue_source = source;
    free (job.glue_remark);
    job.glue_remark = zsys_sprintf ("rollback to version %" PRId64, version);
    job.update_time = job.glue_updatetime = engine_now ();
    engine_job_changed (self, job.id, XXL_CHANGED_PLANS | XXL_CHANGED_SCHEDULE
                        | XXL_CHANGED_CHILDREN);
    int made = -1;
    if (xxl_store_job_save (self->store, &job) == 0)
        made = xxl_store_glue_add (self->store, job.id, job.glue_type, job.glue_source,
                                   job.glue_remark, job.update_time);
    if (made < 0)
        engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
    else {
        engine_reply_begin (self, request);
        xxl_enc_map_begin (self->enc);
        xxl_enc_kint (self->enc, "id", job.id);
        xxl_enc_kint (self->enc, "version", made);
        xxl_enc_map_end (self->enc);
        engine_reply_end (self, request);
    }
    xxl_job_free (&job);
}
