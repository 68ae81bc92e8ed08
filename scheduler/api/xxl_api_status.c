/*  xxl_api_status.c -- the client api's view of the scheduler itself:
    PING, AGENT_LIST, REPORT, PLUGIN_LIST.
*/

#include "xxl_api.h"

void
api_ping (server_t *self, request_t *request)
{
    engine_reply_begin (self, request);
    xxl_enc_map_begin (self->enc);
    xxl_enc_kstr (self->enc, "version", PACKAGE_VERSION);
    xxl_enc_kint (self->enc, "protocol", XXL_PROTOCOL_VERSION);
    //  This scheduler among those sharing the store: its name and the
    //  shares of the jobs it plans (job id mod shareCount)
    xxl_enc_kstr (self->enc, "node", engine_lease_node (self));
    xxl_enc_kint (self->enc, "shareCount", XXL_STORE_SHARES);
    xxl_enc_key (self->enc, "shares");
    xxl_enc_array_begin (self->enc);
    for (int s = 0; s < XXL_STORE_SHARES; s++)
        if (engine_lease_held (self) & ((uint64_t) 1 << s))
            xxl_enc_int (self->enc, s);
    xxl_enc_array_end (self->enc);
    xxl_enc_map_end (self->enc);
    engine_reply_end (self, request);
}

void
api_agent_list (server_t *self, request_t *request)
{
    int64_t limit = api_int (request, "limit");
    int64_t offset = api_int (request, "offset");
    engine_reply_begin (self, request);
    xxl_enc_map_begin (self->enc);
    xxl_enc_key (self->enc, "agents");
    xxl_enc_array_begin (self->enc);
    size_t cursor = 0;
    int64_t index = 0, listed = 0;
    int truncated = 0;
    xxl_registry_entry_t entry;
    bool scoped = engine_reads_scoped (request->who);
    while (xxl_registry_each (self->registry, &cursor, &entry) == 0) {
        //  (a key whose reads are scoped sees its apps' agents only)
        if (scoped && !xxl_who_has_app (request->who, entry.app))
            continue;
        if (index++ < offset)
            continue;
        //  (an entry's keys, integers and string headers: under 128 bytes)
        size_t need = strlen (entry.app) + strlen (entry.address) + strlen (entry.handlers) + 128;
        if (listed == limit || xxl_enc_size (self->enc) + need > XXL_REPLY_MAX) {
            truncated = 1;
            break;
        }
        xxl_enc_map_begin (self->enc);
        xxl_enc_kstr (self->enc, "app", entry.app);
        xxl_enc_kstr (self->enc, "address", entry.address);
        xxl_enc_kint (self->enc, "updateTime", entry.update_time);
        xxl_enc_kstr (self->enc, "handlers", entry.handlers);
        xxl_enc_kbool (self->enc, "connected", entry.connected);
        xxl_enc_map_end (self->enc);
        listed++;
    }
    xxl_enc_array_end (self->enc);
    api_encode_truncated (self, truncated, offset + listed);
    xxl_enc_map_end (self->enc);
    engine_reply_end (self, request);
}

//  Fresh counts of the days' runs: the reporter's thread counts them and
//  the reply goes once it did (engine_report_turn); an in-memory store's
//  are counted here
void
api_report (server_t *self, request_t *request)
{
    if (engine_report_wait (self, request))
        return;
    engine_report_refresh (self);
    engine_reply_begin (self, request);
    engine_report_encode (self);
    engine_reply_end (self, request);
}

//  A comma list ("a,b", as the registries name theirs) as an array
static void
s_encode_names (server_t *self, const char *key, const char *names)
{
    xxl_enc_key (self->enc, key);
    xxl_enc_array_begin (self->enc);
    for (const char *p = names? names: ""; *p; ) {
        size_t length = strcspn (p, ",");
        if (length) {
            char *name = strndup (p, length);
            xxl_enc_str (self->enc, name);
            free (name);
        }
        p += length + (p [length] == ',');
    }
    xxl_enc_array_end (self->enc);
}

//  The plugins this scheduler loaded: its route strategies (router
//  plugins, the values of a job's executorRouteStrategy) and alarm kinds
//  (the kinds of a job's alarmEmail targets), each sorted
void
api_plugin_list (server_t *self, request_t *request)
{
    char *routers = engine_runs_routers (self)? xxl_routers_names (engine_runs_routers (self)): strdup ("");
    char *alarms = self->alarms? xxl_alarms_kinds (self->alarms): strdup ("");
    if (!routers || !alarms)
        engine_reply (self, request, XXL_FAILURE, "out of memory");
    else {
        engine_reply_begin (self, request);
        xxl_enc_map_begin (self->enc);
        s_encode_names (self, "routers", routers);
        s_encode_names (self, "alarms", alarms);
        xxl_enc_map_end (self->enc);
        engine_reply_end (self, request);
    }
    free (routers);
    free (alarms);
}
