/*  xxl_api_audit.c -- AUDIT_LIST: the audit's rows (audit/xxl_audit.c
    records them), newest first, a page at a time.
*/

#include "xxl_api.h"

//  AUDIT_LIST: newest first, below id `before`
void
api_audit_list (server_t *self, request_t *request)
{
    int64_t limit = api_int (request, "limit");
    int64_t before = api_int (request, "before");
    engine_reply_begin (self, request);
    xxl_enc_map_begin (self->enc);
    xxl_enc_key (self->enc, "audit");
    int truncated;
    if (xxl_store_audit_encode_page (self->store, self->enc, XXL_REPLY_MAX, &truncated, before,
                                     limit) < 0) {
        engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
        return;
    }
    xxl_enc_kbool (self->enc, "truncated", truncated);
    xxl_enc_map_end (self->enc);
    engine_reply_end (self, request);
}
