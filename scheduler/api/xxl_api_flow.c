/*  xxl_api_flow.c -- the client api's workflows (DESIGN §12):
    WORKFLOW_ADD, _LIST, _SHOW, _UPDATE, _RM, _START, _STOP, _TRIGGER,
    _RUNS, _RUN_SHOW, _RUN_KILL, _RUN_RETRY; and what JOB_RM asks of
    workflows (api_flow_job_rm).  A definition is judged whole by the model
    (scheduler/flow, its texts as 400s) and stored in its canonical form;
    runs are the engine's (scheduler/flows).

    Scope: a key whose reads are limited to apps, and an operator, see
    and act on a workflow only when every job it names is of one of its
    apps (a job that no longer exists counts as none of them).
*/

#include "xxl_api.h"
#include "xxl_flow.h"

static bool
s_job_exists (void *arg, int64_t id)
{
    return xxl_store_job_exists ((xxl_store_t *) arg, id) == 1;
}

//  Whether who may see a workflow of this definition (see the header).
//  known, when not NULL, holds the verdicts on jobs already looked up
//  (key: the job id in decimal; value: "1" or "0") and gets this one's:
//  a list of many workflows looks each job up once, not once per node
static bool
s_may_see (server_t *self, const xxl_who_t *who, bool acting, const char *definition,
           zhash_t *known)
{
    if (streq (who->role, "admin") || (!acting && !engine_reads_scoped (who)))
        return true;
    char error [XXL_FLOW_ERROR_MAX];
    xxl_flow_t *flow = xxl_flow_new (definition, strlen (definition), NULL, NULL, error,
                                     sizeof error);
    bool may = flow != NULL;
    zhash_t *own = known? NULL: zhash_new ();
    if (!known)
        known = own;
    for (int i = 0; may && i < xxl_flow_nodes (flow); i++) {
        char key [32];
        snprintf (key, sizeof key, "%" PRId64, xxl_flow_job (flow, i));
        const char *verdict = known? (const char *) zhash_lookup (known, key): NULL;
        if (verdict) {
            may = *verdict == '1';
            continue;
        }
        xxl_job_t job;
        xxl_group_t group;
        may = xxl_store_job_load (self->store, xxl_flow_job (flow, i), &job) == 0;
        if (may) {
            may = xxl_store_group_load (self->store, job.job_group, &group) == 0;
            if (may) {
                may = xxl_who_has_app (who, group.app_name);
                xxl_group_free (&group);
            }
            xxl_job_free (&job);
        }
        if (known)
            zhash_insert (known, key, may? "1": "0");
    }
    zhash_destroy (&own);
    xxl_flow_destroy (&flow);
    return may;
}

//  The workflow of the request's workflowId, loaded and within the
//  caller's scope (acting: an operator's change); 0, or -1 once answered
static int
s_workflow_get (server_t *self, request_t *request, bool acting, xxl_workflow_t *workflow)
{
    int64_t id = api_int (request, "workflowId");
    int rc = xxl_store_workflow_load (self->store, id, workflow);
    char text [300];
    if (rc) {
        snprintf (text, sizeof text, "workflow %" PRId64 " not found", id);
        engine_reply (self, request, rc < 0? XXL_FAILURE: XXL_NOT_FOUND,
                      rc < 0? xxl_store_error (self->store): text);
        return -1;
    }
    if (!s_may_see (self, request->who, acting, workflow->definition, NULL)) {
        snprintf (text, sizeof text, "key '%s' (%s) may not send %s for workflow %" PRId64
                  ": it runs jobs of apps the key does not list", request->who->name,
                  request->who->role, request->command->name, id);
        engine_reply (self, request, XXL_FORBIDDEN, text);
        xxl_workflow_free (workflow);
        return -1;
    }
    return 0;
}

//  -1 with the reason a schedule that has no time after `after` gives
//  (as a job's: "the cron expression has no time after INSTANT"), for a
//  workflow that would be armed: a start must not answer 200 and stay
//  stopped
static int64_t
s_ended (const xxl_workflow_t *workflow, int64_t after, char *why, size_t whylen)
{
    xxl_job_t job = { .schedule_type = workflow->schedule_type,
                      .schedule_conf = workflow->schedule_conf,
                      .timezone = workflow->timezone };
    return engine_next_time (&job, after, why, whylen);
}

//  Reads the request's workflow fields into *workflow (a definition
//  judged whole and made canonical; the schedule judged; armed when
//  `start`, or when it was started and its schedule changes).  0, or -1
//  once answered 400.
static int
s_workflow_read (server_t *self, request_t *request, xxl_workflow_t *workflow)
{
    const char *fields [][2] = {
        { "name", NULL }, { "description", NULL }, { "scheduleType", NULL },
        { "scheduleConf", NULL }, { "timezone", NULL }, { "misfireStrategy", NULL },
        { "calendar", NULL }
    };
    char **slots [] = { &workflow->name, &workflow->description, &workflow->schedule_type,
                        &workflow->schedule_conf, &workflow->timezone,
                        &workflow->misfire_strategy, &workflow->calendar };
    bool schedule_changed = false;
    for (size_t i = 0; i < sizeof slots / sizeof slots [0]; i++) {
        fields [i][1] = xxl_command_has (request->msg, fields [i][0])
                      ? api_str (request, fields [i][0]): NULL;
        if (fields [i][1]) {
            free (*slots [i]);
            *slots [i] = strdup (fields [i][1]);
            schedule_changed = schedule_changed || i >= 2;
        }
        else
        if (!*slots [i])
            *slots [i] = strdup (i == 2? "NONE": i == 5? "DO_NOTHING": "");
    }
    char error [XXL_FLOW_ERROR_MAX];
    const char *definition = xxl_command_has (request->msg, "definition")
                           ? api_str (request, "definition"): NULL;
    if (definition) {
        xxl_flow_t *flow = xxl_flow_new (definition, strlen (definition), s_job_exists,
                                         self->store, error, sizeof error);
        if (!flow) {
            engine_reply (self, request, XXL_BAD_REQUEST, error);
            return -1;
        }
        char *canonical = xxl_flow_json (flow);
        xxl_flow_destroy (&flow);
        assert (canonical);
        //  The canonical form is what is stored, shown, and parsed again
        //  for each run: it must pass the definition's limit too (written
        //  out, the defaults "join" and "on" add up to 13 bytes a node and
        //  15 an edge), else the workflow could never run
        size_t size = strlen (canonical);
        if (size > XXL_FLOW_TEXT_MAX) {
            free (canonical);
            char text [256];
            snprintf (text, sizeof text, "definition over %d bytes in its canonical form (%zu"
                      " bytes: every \"join\" and \"on\" written out, as WORKFLOW_SHOW gives"
                      " it): shorten it", XXL_FLOW_TEXT_MAX, size);
            engine_reply (self, request, XXL_BAD_REQUEST, text);
            return -1;
        }
        free (workflow->definition);
        workflow->definition = canonical;
    }
    bool start = api_bool (request, "start");
    if (streq (workflow->schedule_type, "NONE") && start) {
        engine_reply (self, request, XXL_BAD_REQUEST, "a workflow with schedule type NONE"
                      " cannot be started; trigger it instead");
        return -1;
    }
    if (strneq (workflow->schedule_type, "NONE") && !*workflow->schedule_conf) {
        engine_reply (self, request, XXL_BAD_REQUEST, "scheduleConf is required for a"
                      " CRON or FIX_RATE workflow");
        return -1;
    }
    if (*workflow->timezone && !xxl_cron_tz_valid (workflow->timezone)) {
        char text [160], shown [129];
        snprintf (text, sizeof text, "unknown time zone '%s'",
                  xxl_printable (workflow->timezone, shown, sizeof shown));
        engine_reply (self, request, XXL_BAD_REQUEST, text);
        return -1;
    }
    char why [512];
    int64_t now = engine_now ();
    int64_t next = engine_flow_next (self, workflow, now, why, sizeof why);
    bool arming = start || (workflow->status == 1 && schedule_changed);
    if (next == 0 && arming && strneq (workflow->schedule_type, "NONE"))
        next = s_ended (workflow, now, why, sizeof why);
    if (next < 0) {
        engine_reply (self, request, XXL_BAD_REQUEST, why);
        return -1;
    }
    if (arming) {
        workflow->status = next > 0;
        workflow->next_time = next;
    }
    if (streq (workflow->schedule_type, "NONE")) {
        workflow->status = 0;
        workflow->next_time = 0;
    }
    return 0;
}

void
api_workflow_add (server_t *self, request_t *request)
{
    xxl_workflow_t workflow = { 0 };
    workflow.add_time = workflow.update_time = engine_now ();
    if (s_workflow_read (self, request, &workflow) == 0) {
        int64_t id = xxl_store_workflow_add (self->store, &workflow);
        if (id < 0)
            engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
        else
            engine_reply_id (self, request, id);
    }
    xxl_workflow_free (&workflow);
}

void
api_workflow_update (server_t *self, request_t *request)
{
    xxl_workflow_t workflow;
    if (s_workflow_get (self, request, true, &workflow))
        return;
    if (api_judge (self, request, 1)) {
        xxl_workflow_free (&workflow);
        return;
    }
    workflow.update_time = engine_now ();
    if (s_workflow_read (self, request, &workflow) == 0) {
        if (xxl_store_workflow_save (self->store, &workflow))
            engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
        else
            engine_reply_id (self, request, workflow.id);
    }
    xxl_workflow_free (&workflow);
}

void
api_workflow_show (server_t *self, request_t *request)
{
    xxl_workflow_t workflow;
    if (s_workflow_get (self, request, false, &workflow))
        return;
    engine_reply_begin (self, request);
    //  The row's map, its definition added (the canonical JSON, a string)
    xxl_enc_t *row = xxl_enc_new ();
    int rows = xxl_store_workflow_encode (self->store, row, workflow.id);
    size_t size;
    const void *data = xxl_enc_finish (row, &size);
    msgpack_unpacked unpacked;
    msgpack_unpacked_init (&unpacked);
    size_t offset = 0;
    if (rows == 1 && msgpack_unpack_next (&unpacked, (const char *) data, size, &offset)
                     == MSGPACK_UNPACK_SUCCESS
    &&  unpacked.data.type == MSGPACK_OBJECT_MAP) {
        xxl_enc_map_begin (self->enc);
        const msgpack_object_map *map = &unpacked.data.via.map;
        for (uint32_t i = 0; i < map->size; i++) {
            const msgpack_object *key = &map->ptr [i].key;
            char name [64];
            if (key->type != MSGPACK_OBJECT_STR || key->via.str.size >= sizeof name)
                continue;
            memcpy (name, key->via.str.ptr, key->via.str.size);
            name [key->via.str.size] = 0;
            xxl_enc_key (self->enc, name);
            xxl_enc_object (self->enc, &map->ptr [i].val);
        }
        xxl_enc_kstr (self->enc, "definition", workflow.definition);
        xxl_enc_map_end (self->enc);
        engine_reply_end (self, request);
    }
    else
        engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
    msgpack_unpacked_destroy (&unpacked);
    xxl_enc_destroy (&row);
    xxl_workflow_free (&workflow);
}

void
api_workflow_list (server_t *self, request_t *request)
{
    int64_t limit = api_int (request, "limit");
    int64_t offset = api_int (request, "offset");
    engine_reply_begin (self, request);
    xxl_enc_map_begin (self->enc);
    xxl_enc_key (self->enc, "workflows");
    int truncated = 0;
    int rows = 0;
    int64_t total = 0;
    if (!engine_reads_scoped (request->who)) {
        rows = xxl_store_workflow_encode_page (self->store, self->enc, XXL_REPLY_MAX,
                                               &truncated, limit, offset);
        total = xxl_store_workflow_count (self->store);
    }
    else {
        //  (the workflows the key may see, a page of them)
        xxl_enc_array_begin (self->enc);
        zhash_t *known = zhash_new ();
        int64_t after = 0, ids [256];
        size_t count;
        while (xxl_store_workflow_ids (self->store, after, ids, 256, &count) == 0 && count) {
            for (size_t i = 0; i < count; i++) {
                xxl_workflow_t workflow;
                if (xxl_store_workflow_load (self->store, ids [i], &workflow))
                    continue;
                if (s_may_see (self, request->who, false, workflow.definition, known)) {
                    if (total >= offset && rows < limit
                    &&  xxl_enc_size (self->enc) < XXL_REPLY_MAX)
                        rows += xxl_store_workflow_encode (self->store, self->enc, ids [i]);
                    total++;
                }
                xxl_workflow_free (&workflow);
            }
            after = ids [count - 1];
        }
        zhash_destroy (&known);
        xxl_enc_array_end (self->enc);
    }
    if (rows < 0) {
        engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
        return;
    }
    xxl_enc_kint (self->enc, "total", total);
    api_encode_truncated (self, truncated, offset + rows);
    xxl_enc_map_end (self->enc);
    engine_reply_end (self, request);
}

void
api_workflow_rm (server_t *self, request_t *request)
{
    xxl_workflow_t workflow;
    if (s_workflow_get (self, request, true, &workflow))
        return;
    //  (its runs go with it; a node still running ends as a plain run)
    if (xxl_store_workflow_rm (self->store, workflow.id) < 0)
        engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
    else
        engine_reply_id (self, request, workflow.id);
    xxl_workflow_free (&workflow);
}

static void
s_start_stop (server_t *self, request_t *request, bool start)
{
    xxl_workflow_t workflow;
    if (s_workflow_get (self, request, true, &workflow))
        return;
    char why [512];
    int64_t now = engine_now ();
    int64_t next = start? engine_flow_next (self, &workflow, now, why, sizeof why): 0;
    if (next == 0 && start && strneq (workflow.schedule_type, "NONE"))
        next = s_ended (&workflow, now, why, sizeof why);
    if (start && streq (workflow.schedule_type, "NONE"))
        engine_reply (self, request, XXL_BAD_REQUEST, "a workflow with schedule type NONE"
                      " cannot be started; trigger it instead");
    else
    if (next < 0)
        engine_reply (self, request, XXL_BAD_REQUEST, why);
    else {
        workflow.status = start && next > 0;
        workflow.next_time = start? next: 0;
        workflow.update_time = engine_now ();
        if (xxl_store_workflow_save (self->store, &workflow))
            engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
        else
            engine_reply_id (self, request, workflow.id);
    }
    xxl_workflow_free (&workflow);
}

void api_workflow_start (server_t *self, request_t *r) { s_start_stop (self, r, true); }
void api_workflow_stop (server_t *self, request_t *r) { s_start_stop (self, r, false); }

void
api_workflow_trigger (server_t *self, request_t *request)
{
    xxl_workflow_t workflow;
    if (s_workflow_get (self, request, true, &workflow))
        return;
    int code;
    char why [512];
    const char *param = api_str (request, "param");
    int64_t run_id = engine_flow_trigger (self, workflow.id, param, "MANUAL", &code, why,
                                          sizeof why);
    if (run_id <= 0)
        engine_reply (self, request, code, why);
    else {
        engine_reply_begin (self, request);
        xxl_enc_map_begin (self->enc);
        xxl_enc_kint (self->enc, "runId", run_id);
        xxl_enc_map_end (self->enc);
        engine_reply_end (self, request);
        request->target = run_id;
    }
    xxl_workflow_free (&workflow);
}

//  WORKFLOW_RUNS: newest first, below id `before` (paging)
void
api_workflow_runs (server_t *self, request_t *request)
{
    xxl_workflow_t workflow;
    if (s_workflow_get (self, request, false, &workflow))
        return;
    engine_reply_begin (self, request);
    xxl_enc_map_begin (self->enc);
    xxl_enc_key (self->enc, "runs");
    int truncated = 0;
    int rows = xxl_store_workflow_run_encode_below (self->store, self->enc, XXL_REPLY_MAX,
                                                    &truncated, workflow.id,
                                                    api_int (request, "before"),
                                                    api_int (request, "limit"));
    xxl_workflow_free (&workflow);
    if (rows < 0) {
        engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
        return;
    }
    xxl_enc_kbool (self->enc, "truncated", truncated);
    xxl_enc_map_end (self->enc);
    engine_reply_end (self, request);
}

//  The run of the request's runId, within the caller's scope; 0, or -1
//  once answered
static int
s_run_check (server_t *self, request_t *request, bool acting)
{
    int64_t id = api_int (request, "runId");
    xxl_workflow_run_t run;
    int rc = xxl_store_workflow_run_load (self->store, id, &run);
    if (rc) {
        char text [64];
        snprintf (text, sizeof text, "workflow run %" PRId64 " not found", id);
        engine_reply (self, request, rc < 0? XXL_FAILURE: XXL_NOT_FOUND,
                      rc < 0? xxl_store_error (self->store): text);
        return -1;
    }
    bool may = s_may_see (self, request->who, acting, run.definition, NULL);
    xxl_workflow_run_free (&run);
    if (!may) {
        char text [300];
        snprintf (text, sizeof text, "key '%s' (%s) may not send %s for workflow run %" PRId64
                  ": it runs jobs of apps the key does not list", request->who->name,
                  request->who->role, request->command->name, id);
        engine_reply (self, request, XXL_FORBIDDEN, text);
        return -1;
    }
    return 0;
}

void
api_workflow_run_show (server_t *self, request_t *request)
{
    if (s_run_check (self, request, false))
        return;
    engine_reply_begin (self, request);
    if (engine_flow_run_encode (self, self->enc, api_int (request, "runId")) == 1)
        engine_reply_end (self, request);
    else
        engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
}

static void
s_run_act (server_t *self, request_t *request, bool kill)
{
    if (s_run_check (self, request, true))
        return;
    int64_t id = api_int (request, "runId");
    char why [XXL_FLOW_ERROR_MAX];
    int code = kill? engine_flow_kill (self, id, why, sizeof why)
                   : engine_flow_retry (self, id, api_str (request, "node"), why, sizeof why);
    if (code == XXL_OK)
        engine_reply_id (self, request, id);
    else
        engine_reply (self, request, code, why);
}

void api_workflow_run_kill (server_t *self, request_t *r) { s_run_act (self, r, true); }
void api_workflow_run_retry (server_t *self, request_t *r) { s_run_act (self, r, false); }

//  --------------------------------------------------------------------
//  A job that workflows run (JOB_RM)

//  Appends text to a JSON string's body, escaped
static void
s_json_text (zchunk_t *out, const char *text)
{
    zchunk_extend (out, "\"", 1);
    for (const unsigned char *p = (const unsigned char *) text; *p; p++) {
        char escaped [8];
        if (*p == '"' || *p == '\\') {
            escaped [0] = '\\';
            escaped [1] = (char) *p;
            zchunk_extend (out, escaped, 2);
        }
        else
        if (*p < 0x20) {
            snprintf (escaped, sizeof escaped, "\\u%04x", *p);
            zchunk_extend (out, escaped, 6);
        }
        else
            zchunk_extend (out, p, 1);
    }
    zchunk_extend (out, "\"", 1);
}

//  flow's definition without the nodes that run job (and their edges): a
//  new string, NULL when no node is left
static char *
s_without_job (const xxl_flow_t *flow, int64_t job)
{
    zchunk_t *out = zchunk_new (NULL, 256);
    zchunk_extend (out, "{\"nodes\":[", 10);
    int kept = 0;
    for (int i = 0; i < xxl_flow_nodes (flow); i++) {
        if (xxl_flow_job (flow, i) == job)
            continue;
        char number [32];
        const char *open = kept++? ",{\"id\":": "{\"id\":";
        zchunk_extend (out, open, strlen (open));
        s_json_text (out, xxl_flow_id (flow, i));
        snprintf (number, sizeof number, ",\"job\":%" PRId64, xxl_flow_job (flow, i));
        zchunk_extend (out, number, strlen (number));
        if (xxl_flow_param (flow, i)) {
            zchunk_extend (out, ",\"param\":", 9);
            s_json_text (out, xxl_flow_param (flow, i));
        }
        const char *join = xxl_flow_join_name (xxl_flow_join (flow, i));
        zchunk_extend (out, ",\"join\":\"", 9);
        zchunk_extend (out, join, strlen (join));
        zchunk_extend (out, "\"}", 2);
    }
    zchunk_extend (out, "],\"edges\":[", 11);
    int edges = 0;
    for (int e = 0; e < xxl_flow_edges (flow); e++) {
        int from, to;
        xxl_flow_on_t on;
        xxl_flow_edge (flow, e, &from, &to, &on);
        if (xxl_flow_job (flow, from) == job || xxl_flow_job (flow, to) == job)
            continue;
        const char *open = edges++? ",{\"from\":": "{\"from\":";
        zchunk_extend (out, open, strlen (open));
        s_json_text (out, xxl_flow_id (flow, from));
        zchunk_extend (out, ",\"to\":", 6);
        s_json_text (out, xxl_flow_id (flow, to));
        const char *name = xxl_flow_on_name (on);
        zchunk_extend (out, ",\"on\":\"", 7);
        zchunk_extend (out, name, strlen (name));
        zchunk_extend (out, "\"}", 2);
    }
    zchunk_extend (out, "]}", 3);             //  (with its NUL)
    char *text = kept? strdup ((const char *) zchunk_data (out)): NULL;
    zchunk_destroy (&out);
    return text;
}

int
api_flow_job_rm (server_t *self, int64_t job, bool force, char *why, size_t whylen,
                 zlistx_t *changed, zlistx_t *removed)
{
    int64_t ids [256];
    size_t count = 0;
    if (xxl_store_workflow_using_job (self->store, job, ids, 256, &count)) {
        snprintf (why, whylen, "%s", xxl_store_error (self->store));
        return XXL_FAILURE;
    }
    size_t using = 0;
    char list [256] = "";
    for (size_t i = 0; i < count; i++) {
        xxl_workflow_t workflow;
        if (xxl_store_workflow_load (self->store, ids [i], &workflow))
            continue;
        char error [XXL_FLOW_ERROR_MAX];
        xxl_flow_t *flow = xxl_flow_new (workflow.definition, strlen (workflow.definition),
                                         NULL, NULL, error, sizeof error);
        if (flow && xxl_flow_uses_job (flow, job)) {
            using++;
            size_t at = strlen (list);
            if (at < sizeof list - 24)
                snprintf (list + at, sizeof list - at, "%s%" PRId64, at? ", ": "", ids [i]);
            if (force) {
                //  Its nodes go; a definition that no longer holds (no
                //  node left, a ${X.msg} of a node gone) takes the
                //  workflow with it
                char *text = s_without_job (flow, job);
                xxl_flow_t *pruned = text? xxl_flow_new (text, strlen (text), NULL, NULL,
                                                         error, sizeof error): NULL;
                int64_t *id = (int64_t *) malloc (sizeof *id);
                assert (id);
                *id = ids [i];
                if (pruned) {
                    free (workflow.definition);
                    workflow.definition = xxl_flow_json (pruned);
                    workflow.update_time = engine_now ();
                    xxl_store_workflow_save (self->store, &workflow);
                    zlistx_add_end (changed, id);
                }
                else {
                    xxl_store_workflow_rm (self->store, ids [i]);
                    zlistx_add_end (removed, id);
                }
                xxl_flow_destroy (&pruned);
                free (text);
            }
        }
        xxl_flow_destroy (&flow);
        xxl_workflow_free (&workflow);
    }
    if (using && !force) {
        snprintf (why, whylen, "job %" PRId64 " is run by %zu workflow(s) (%s): remove it"
                  " from them first, or remove it with --force (force), which removes its"
                  " nodes from them", job, using, list);
        return XXL_CONFLICT;
    }
    return XXL_OK;
}
