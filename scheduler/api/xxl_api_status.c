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
        size_t need = strlen (entry.app) + strlen (entry.address) + strlen (entry.handlers)
                    + strlen (entry.tags) + 128;
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
        xxl_enc_kstr (self->enc, "tags", entry.tags);
        xxl_enc_map_end (self->enc);
        listed++;
    }
    xxl_enc_array_end (self->enc);
    api_encode_truncated (self, truncated, offset + listed);
    xxl_enc_map_end (self->enc);
    engine_reply_end (self, request);
}

//  A REPORT of a key whose reads are scoped, waiting for the reporter's
//  count (as engine_report_wait's, with its groups)
typedef struct {
    zframe_t *rid;                      //  the client's return address
    uint64_t id;                        //  its request's id
    uint64_t turn;                      //  the turn it came in
    uint64_t generation;                //  the ask that covers it (0: not asked yet)
    int64_t *groups;                    //  its apps' groups (engine_read_groups)
    size_t group_count;
    int64_t agents;                     //  its apps' agents when it came
    xxl_report_range_t range;           //  its days
} scoped_report_t;

//  Scoped REPORTs that may wait at once; past them, 429
#define XXL_SCOPED_REPORT_WAITERS 1024

static void
s_scoped_report_destroy (void **item_p)
{
    scoped_report_t *waiter = (scoped_report_t *) *item_p;
    if (waiter) {
        zframe_destroy (&waiter->rid);
        free (waiter->groups);
        free (waiter);
        *item_p = NULL;
    }
}

//  REPORT's content for a key whose reads are scoped: its groups' jobs,
//  its apps' agents, and the runs of its groups in the report's days
//  (newest first; of those, the ones in range), as the count `report`
//  made them
static void
s_report_encode_scoped (server_t *self, const xxl_report_t *report, const int64_t *groups,
                        size_t group_count, int64_t agents, const xxl_report_range_t *range)
{
    xxl_store_job_filter_t filter = {
        .handler = "", .desc = "", .author = "", .status = -1, .limit = 1,
        .groups = groups, .group_count = group_count
    };
    xxl_enc_map_begin (self->enc);
    xxl_enc_kint (self->enc, "jobCount", xxl_store_job_count (self->store, &filter));
    filter.status = 1;
    xxl_enc_kint (self->enc, "jobRunningCount", xxl_store_job_count (self->store, &filter));
    xxl_enc_kint (self->enc, "agentCount", agents);
    xxl_enc_kint (self->enc, "groupCount", (int64_t) group_count);
    int64_t running = 0, suc = 0, fail = 0;
    for (int back = 0; back < XXL_REPORT_DAYS; back++) {
        running += report->days [back].running;
        suc += report->days [back].suc;
        fail += report->days [back].fail;
    }
    xxl_enc_kint (self->enc, "runCount", running + suc + fail);
    xxl_enc_kint (self->enc, "sucCount", suc);
    xxl_enc_kint (self->enc, "failCount", fail);
    xxl_enc_key (self->enc, "successRate");
    xxl_enc_double (self->enc, suc + fail > 0? (double) suc / (double) (suc + fail): 1.0);
    xxl_enc_key (self->enc, "days");
    xxl_enc_array_begin (self->enc);
    for (int back = 0; back < XXL_REPORT_DAYS; back++) {
        if (range->from != XXL_REPORT_NO_RANGE && (report->days [back].day < range->from
                                 || report->days [back].day > range->to))
            continue;
        xxl_enc_map_begin (self->enc);
        xxl_enc_kint (self->enc, "triggerDay", report->days [back].day);
        xxl_enc_kint (self->enc, "runningCount", report->days [back].running);
        xxl_enc_kint (self->enc, "sucCount", report->days [back].suc);
        xxl_enc_kint (self->enc, "failCount", report->days [back].fail);
        xxl_enc_kint (self->enc, "updateTime", report->now);
        xxl_enc_map_end (self->enc);
    }
    xxl_enc_array_end (self->enc);
    xxl_enc_map_end (self->enc);
}

//  REPORT of a key whose reads are scoped: counted by the reporter's
//  thread, answered once a count made after it came is (engine_scoped_
//  report_turn); an in-memory store's, counted here
static void
s_report_scoped (server_t *self, request_t *request, int64_t *groups, size_t group_count,
                 const xxl_report_range_t *range)
{
    int64_t agents = 0;
    size_t cursor = 0;
    xxl_registry_entry_t entry;
    while (xxl_registry_each (self->registry, &cursor, &entry) == 0)
        agents += xxl_who_has_app (request->who, entry.app);
    if (!self->services.reporter) {
        xxl_report_t report;
        if (xxl_report_count_groups (self->store, engine_now (), groups, group_count, &report))
            engine_reply (self, request, XXL_FAILURE, "store error: cannot count the report");
        else {
            engine_reply_begin (self, request);
            s_report_encode_scoped (self, &report, groups, group_count, agents, range);
            engine_reply_end (self, request);
        }
        free (groups);
        return;
    }
    if (!self->api_state.reports) {
        self->api_state.reports = zlistx_new ();
        zlistx_set_destructor (self->api_state.reports, s_scoped_report_destroy);
    }
    if (zlistx_size (self->api_state.reports) >= XXL_SCOPED_REPORT_WAITERS) {
        char text [160];
        snprintf (text, sizeof text, "%d REPORTs already wait for the report's count:"
                  " ask again later", XXL_SCOPED_REPORT_WAITERS);
        engine_reply (self, request, XXL_BUSY, text);
        free (groups);
        return;
    }
    scoped_report_t *waiter = (scoped_report_t *) zmalloc (sizeof (scoped_report_t));
    waiter->rid = zframe_dup (request->rid);
    waiter->id = xxl_msg_id (request->msg);
    waiter->turn = self->turn;
    waiter->groups = groups;
    waiter->group_count = group_count;
    waiter->agents = agents;
    waiter->range = *range;
    zlistx_add_end (self->api_state.reports, waiter);
    request->code = XXL_OK;             //  (answered later; a read: no audit)
}

//  Fresh counts of the days' runs: the reporter's thread counts them and
//  the reply goes once it did (engine_report_turn); an in-memory store's
//  are counted here.  A key whose reads are scoped gets its apps'.  The
//  day rows are those of the range from..to (xxl_report_range), judged
//  before anything waits.
void
api_report (server_t *self, request_t *request)
{
    xxl_report_range_t range;
    char why [160];
    if (xxl_report_range (api_int (request, "from"), api_int (request, "to"), engine_now (),
                          &range, why, sizeof why)) {
        engine_reply (self, request, XXL_BAD_REQUEST, why);
        return;
    }
    int64_t *groups;
    size_t group_count;
    if (engine_read_groups (self, request->who, &groups, &group_count)) {
        s_report_scoped (self, request, groups, group_count, &range);
        return;
    }
    if (engine_report_wait (self, request, &range))
        return;
    engine_report_refresh (self);
    engine_reply_begin (self, request);
    engine_report_encode (self, &range);
    engine_reply_end (self, request);
}

bool
engine_scoped_report_waiting (server_t *self)
{
    return self->api_state.reports && zlistx_size (self->api_state.reports) > 0;
}

void
engine_scoped_report_turn (server_t *self)
{
    if (!self->services.reporter || !engine_scoped_report_waiting (self))
        return;
    uint64_t generation = 0;
    scoped_report_t *waiter = (scoped_report_t *) zlistx_first (self->api_state.reports);
    while (waiter) {
        xxl_report_t report;
        if (waiter->generation
        &&  xxl_reporter_scoped (self->services.reporter, waiter->generation, waiter->groups,
                                 waiter->group_count, &report)) {
            //  (a read: sent whatever the commit)
            if (report.failed)
                xxl_enc_reply (self->enc, waiter->id, XXL_FAILURE,
                               "store error: cannot count the report");
            else {
                xxl_enc_reply (self->enc, waiter->id, XXL_OK, NULL);
                xxl_enc_key (self->enc, "content");
                s_report_encode_scoped (self, &report, waiter->groups, waiter->group_count,
                                        waiter->agents, &waiter->range);
            }
            engine_queue_client_read (self, zframe_data (waiter->rid),
                                      zframe_size (waiter->rid));
            zlistx_delete (self->api_state.reports, zlistx_cursor (self->api_state.reports));
            waiter = (scoped_report_t *) zlistx_first (self->api_state.reports);
            continue;
        }
        //  (asked at a later turn than the one it came in: after that
        //  turn's commit; one ask for all of a turn)
        if (!waiter->generation && waiter->turn < self->turn) {
            if (!generation)
                generation = xxl_reporter_ask (self->services.reporter, engine_now ());
            waiter->generation = generation;
        }
        waiter = (scoped_report_t *) zlistx_next (self->api_state.reports);
    }
}

void
engine_scoped_report_stop (server_t *self)
{
    scoped_report_t *waiter;
    while (self->api_state.reports
       && (waiter = (scoped_report_t *) zlistx_first (self->api_state.reports))) {
        xxl_enc_reply (self->enc, waiter->id, XXL_UNAVAILABLE,
                       "the scheduler stopped before the report's count: ask again");
        engine_queue_client (self, zframe_data (waiter->rid), zframe_size (waiter->rid));
        zlistx_delete (self->api_state.reports, NULL);
    }
}

//  A list "a, b" (as the registries name theirs) as an array
static void
s_encode_names (server_t *self, const char *key, const char *names)
{
    xxl_enc_key (self->enc, key);
    xxl_enc_array_begin (self->enc);
    for (const char *p = names? names: ""; *p; ) {
        p += strspn (p, " ");
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
