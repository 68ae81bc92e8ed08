/*  xxl_ctl_import_map.c -- an XXL-JOB dump's rows, mapped onto xxl's api
    and judged.  Contract in xxl_ctl_import.h; the rules in
    docs/migrating.md, "Importing an XXL-JOB database".
*/

#include "xxl_ctl_import.h"
#include "xxl_ctl_value.h"
#include "xxl_mysqldump.h"
#include "xxl_commands.h"
#include "xxl/cron.h"
#include "xxl/msg.h"

#include <czmq.h>
#include <inttypes.h>

static const char *const s_tables [] = {
    "xxl_job_group", "xxl_job_info", "xxl_job_logglue", NULL
};

import_t *
import_new (void)
{
    return (import_t *) zmalloc (sizeof (import_t));
}

static void
s_glue_free (import_glue_t *glue)
{
    free (glue->type);
    free (glue->source);
    free (glue->remark);
}

void
import_destroy (import_t **self_p)
{
    assert (self_p);
    import_t *self = *self_p;
    if (!self)
        return;
    for (size_t g = 0; g < self->ngroups; g++) {
        import_group_t *group = &self->groups [g];
        free (group->appname);
        free (group->title);
        free (group->address_list);
    }
    for (size_t j = 0; j < self->njobs; j++) {
        import_job_t *job = &self->jobs [j];
        char **texts [] = {
            &job->desc, &job->author, &job->alarm_email, &job->schedule_type,
            &job->schedule_conf, &job->misfire, &job->route, &job->handler, &job->param,
            &job->block, &job->glue_type, &job->glue_source, &job->glue_remark, &job->child
        };
        for (size_t t = 0; t < sizeof texts / sizeof texts [0]; t++)
            free (*texts [t]);
        free (job->versions);
        free (job->kids);
    }
    for (size_t i = 0; i < self->nglues; i++)
        s_glue_free (&self->glues [i]);
    for (size_t i = 0; i < self->nexisting; i++) {
        free (self->existing [i].desc);
        free (self->existing [i].handler);
    }
    for (size_t i = 0; i < self->nskipped; i++)
        free (self->skipped [i]);
    free (self->groups);
    free (self->jobs);
    free (self->glues);
    free (self->existing);
    free (self->skipped);
    free (self->routers);
    free (self->alarms);
    free (self);
    *self_p = NULL;
}

static void
s_skip (import_t *self, const char *format, ...)
    __attribute__ ((format (printf, 2, 3)));

static void
s_skip (import_t *self, const char *format, ...)
{
    va_list args;
    va_start (args, format);
    char *text = zsys_vprintf (format, args);
    va_end (args);
    //  It may quote a text that is not UTF-8 (the reason it is skipped)
    char *repaired = text? xxl_utf8_repair (text): NULL;
    if (repaired) {
        free (text);
        text = repaired;
    }
    char **grown = text? realloc (self->skipped, (self->nskipped + 1) * sizeof (char *)): NULL;
    if (!grown) {
        free (text);
        return;
    }
    self->skipped = grown;
    self->skipped [self->nskipped++] = text;
}

//  Grows an array by one zeroed element; its address, or NULL
static void *
s_grow (void **array, size_t *count, size_t size)
{
    if (*count >= XXL_IMPORT_MAX_ROWS)
        return NULL;
    char *grown = realloc (*array, (*count + 1) * size);
    if (!grown)
        return NULL;
    *array = grown;
    memset (grown + *count * size, 0, size);
    return grown + (*count)++ * size;
}

//  A column's text (the first of the names present), or dflt for NULL or
//  no such column; sets *bad for a text xxl cannot hold byte-exact
static char *
s_text (import_t *self, const xxl_dump_row_t *row, const char *name, const char *other,
        const char *dflt, const char **bad)
{
    const xxl_dump_value_t *value = xxl_dump_get (row, name);
    if (!value && other)
        value = xxl_dump_get (row, other);
    if (!value || value->type == XXL_DUMP_NULL)
        return strdup (dflt);
    if (strlen (value->data) != value->size)
        *bad = "holds a NUL byte";
    else {
        char *repaired = xxl_utf8_repair (value->data);
        if (repaired) {
            *bad = "is not valid UTF-8";
            free (repaired);
        }
    }
    self->bytes += value->size;
    return strdup (value->data);
}

//  A column's whole number, or dflt for NULL or no such column; sets *bad
static int64_t
s_int (const xxl_dump_row_t *row, const char *name, int64_t dflt, const char **bad)
{
    const xxl_dump_value_t *value = xxl_dump_get (row, name);
    if (!value || value->type == XXL_DUMP_NULL)
        return dflt;
    char *end = NULL;
    errno = 0;
    long long number = strtoll (value->data, &end, 10);
    if (!*value->data || *end || errno) {
        *bad = "has a column that should be a whole number";
        return dflt;
    }
    return number;
}

static int
s_read_group (import_t *self, const xxl_dump_row_t *row)
{
    import_group_t *group = s_grow ((void **) &self->groups, &self->ngroups, sizeof *group);
    if (!group)
        return -1;
    const char *bad = NULL;
    group->line = row->line;
    group->id = s_int (row, "id", 0, &bad);
    group->appname = s_text (self, row, "app_name", NULL, "", &bad);
    group->title = s_text (self, row, "title", "name", "", &bad);
    group->address_type = (int) s_int (row, "address_type", 0, &bad);
    group->address_list = s_text (self, row, "address_list", NULL, "", &bad);
    if (!group->appname || !group->title || !group->address_list)
        return -1;
    if (bad) {
        group->state = IMPORT_SKIPPED;
        s_skip (self, "group %" PRId64 " '%s' (line %zu): a column %s", group->id,
                group->appname, row->line, bad);
    }
    return 0;
}

static int
s_read_job (import_t *self, const xxl_dump_row_t *row)
{
    import_job_t *job = s_grow ((void **) &self->jobs, &self->njobs, sizeof *job);
    if (!job)
        return -1;
    const char *bad = NULL;
    job->line = row->line;
    job->id = s_int (row, "id", 0, &bad);
    job->job_group = s_int (row, "job_group", 0, &bad);
    job->desc = s_text (self, row, "job_desc", "name", "", &bad);
    job->author = s_text (self, row, "author", NULL, "", &bad);
    job->alarm_email = s_text (self, row, "alarm_email", NULL, "", &bad);
    if (xxl_dump_get (row, "schedule_type")) {
        job->schedule_type = s_text (self, row, "schedule_type", NULL, "NONE", &bad);
        job->schedule_conf = s_text (self, row, "schedule_conf", NULL, "", &bad);
    }
    else {
        //  2.x before 2.3.0: job_cron, always CRON
        job->schedule_conf = s_text (self, row, "job_cron", NULL, "", &bad);
        job->schedule_type = strdup (job->schedule_conf && *job->schedule_conf? "CRON": "NONE");
    }
    job->misfire = s_text (self, row, "misfire_strategy", NULL, "DO_NOTHING", &bad);
    job->route = s_text (self, row, "executor_route_strategy", NULL, "FIRST", &bad);
    job->handler = s_text (self, row, "executor_handler", NULL, "", &bad);
    job->param = s_text (self, row, "executor_param", NULL, "", &bad);
    job->block = s_text (self, row, "executor_block_strategy", NULL, "SERIAL_EXECUTION", &bad);
    job->timeout = s_int (row, "executor_timeout", 0, &bad);
    job->retry = s_int (row, "executor_fail_retry_count", 0, &bad);
    job->glue_type = s_text (self, row, "glue_type", NULL, "BEAN", &bad);
    job->glue_source = s_text (self, row, "glue_source", NULL, "", &bad);
    job->glue_remark = s_text (self, row, "glue_remark", NULL, "", &bad);
    job->child = s_text (self, row, "child_jobid", NULL, "", &bad);
    job->running = s_int (row, "trigger_status", 0, &bad) == 1;
    if (!job->desc || !job->author || !job->alarm_email || !job->schedule_type
    ||  !job->schedule_conf || !job->misfire || !job->route || !job->handler || !job->param
    ||  !job->block || !job->glue_type || !job->glue_source || !job->glue_remark || !job->child)
        return -1;
    //  XXL-JOB leaves these empty for its defaults
    const char *defaults [][2] = {
        { job->route, "FIRST" }, { job->block, "SERIAL_EXECUTION" },
        { job->misfire, "DO_NOTHING" }, { job->glue_type, "BEAN" }, { job->schedule_type, "NONE" }
    };
    char **fields [] = {
        &job->route, &job->block, &job->misfire, &job->glue_type, &job->schedule_type
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields [0]; i++)
        if (!**fields [i]) {
            free (*fields [i]);
            if (!(*fields [i] = strdup (defaults [i][1])))
                return -1;
        }
    if (bad) {
        job->state = IMPORT_SKIPPED;
        s_skip (self, "job %" PRId64 " '%s' (line %zu): a column %s", job->id, job->desc,
                row->line, bad);
    }
    return 0;
}

static int
s_read_glue (import_t *self, const xxl_dump_row_t *row)
{
    import_glue_t *glue = s_grow ((void **) &self->glues, &self->nglues, sizeof *glue);
    if (!glue)
        return -1;
    const char *bad = NULL;
    glue->id = s_int (row, "id", 0, &bad);
    glue->job_id = s_int (row, "job_id", 0, &bad);
    glue->type = s_text (self, row, "glue_type", NULL, "", &bad);
    glue->source = s_text (self, row, "glue_source", NULL, "", &bad);
    glue->remark = s_text (self, row, "glue_remark", NULL, "", &bad);
    if (!glue->type || !glue->source || !glue->remark)
        return -1;
    if (bad) {
        s_skip (self, "glue version %" PRId64 " of job %" PRId64 " (line %zu): a column %s",
                glue->id, glue->job_id, row->line, bad);
        s_glue_free (glue);
        self->nglues--;
    }
    return 0;
}

int
import_read (import_t *self, FILE *file, char *why, size_t whylen)
{
    xxl_dump_t *dump = xxl_dump_new (file, s_tables);
    if (!dump) {
        snprintf (why, whylen, "out of memory");
        return -1;
    }
    const xxl_dump_row_t *row;
    int rc;
    while ((rc = xxl_dump_next (dump, &row)) == 1) {
        int added = streq (row->table, "xxl_job_group")? s_read_group (self, row)
                  : streq (row->table, "xxl_job_info")? s_read_job (self, row)
                  : s_read_glue (self, row);
        if (added || self->bytes > XXL_IMPORT_MAX_BYTES) {
            snprintf (why, whylen, "line %zu: more than %d rows or %d MiB of text to import,"
                      " or out of memory", row->line, XXL_IMPORT_MAX_ROWS,
                      XXL_IMPORT_MAX_BYTES >> 20);
            rc = -1;
            break;
        }
    }
    if (rc < 0 && !*why)
        snprintf (why, whylen, "%s", xxl_dump_error (dump));
    xxl_dump_destroy (&dump);
    if (rc == 0 && self->ngroups + self->njobs == 0) {
        snprintf (why, whylen, "no rows of xxl_job_group or xxl_job_info: not a dump of an"
                  " XXL-JOB database");
        rc = -1;
    }
    return rc;
}

void
import_existing_add (import_t *self, import_group_t *group, int64_t id, const char *desc,
                     const char *handler)
{
    import_existing_t *existing = s_grow ((void **) &self->existing, &self->nexisting,
                                          sizeof *existing);
    if (existing) {
        existing->group_id = group->id;
        existing->id = id;
        existing->desc = strdup (desc);
        existing->handler = strdup (handler);
    }
}

//  Whether text is one of the api field's values (xxl_commands.c)
static bool
s_one_of (const char *command, const char *key, const char *text)
{
    const xxl_field_t *field = xxl_command_field (xxl_command_find (command), key);
    assert (field && field->values);
    for (const char *const *value = field->values; *value; value++)
        if (streq (*value, text))
            return true;
    return false;
}

//  Whether text is longer than the api field takes
static bool
s_too_long (const char *command, const char *key, const char *text)
{
    const xxl_field_t *field = xxl_command_field (xxl_command_find (command), key);
    assert (field);
    return (int64_t) strlen (text) > field->max;
}

static bool
s_in_list (const char *list, const char *name)
{
    size_t len = strlen (name);
    for (const char *p = list? list: ""; *p; ) {
        const char *comma = strchr (p, ',');
        size_t n = comma? (size_t) (comma - p): strlen (p);
        if (n == len && memcmp (p, name, n) == 0)
            return true;
        p += n + (comma? 1: 0);
    }
    return false;
}

//  Why the group cannot be created, or NULL
static const char *
s_judge_group (import_group_t *group, char *why, size_t whylen)
{
    const xxl_field_t *field = xxl_command_field (xxl_command_find ("GROUP_ADD"), "appname");
    if (s_too_long ("GROUP_ADD", "appname", group->appname)
    ||  field->check (group->appname, why, whylen))
        return *why? why: "appname too long";
    if (s_too_long ("GROUP_ADD", "title", group->title))
        return "title longer than 255 bytes";
    if (group->address_type == 1 && !*group->address_list)
        return "a manual group (address_type 1) with no addresses";
    if (s_too_long ("GROUP_ADD", "addressList", group->address_list))
        return "address_list too long";
    return NULL;
}

//  Why the job cannot be created, or NULL
static const char *
s_judge_job (import_t *self, import_job_t *job, char *why, size_t whylen)
{
    if (!job->group)
        return "its group is not in the dump";
    if (job->group->state == IMPORT_SKIPPED)
        return "its group is skipped";
    if (!s_one_of ("JOB_ADD", "glueType", job->glue_type)) {
        snprintf (why, whylen, "glue type %s is not one this xxl takes%s", job->glue_type,
                  streq (job->glue_type, "GLUE_GROOVY")? " (GLUE(Java) runs only on a bridged"
                  " Java executor)": "");
        return why;
    }
    if (streq (job->glue_type, "BEAN") && !*job->handler)
        return "a BEAN job with no handler";
    if (!s_one_of ("JOB_ADD", "scheduleType", job->schedule_type)) {
        snprintf (why, whylen, "schedule type %s is not one xxl has", job->schedule_type);
        return why;
    }
    char reason [256];
    if (streq (job->schedule_type, "CRON")) {
        xxl_cron_t *cron = xxl_cron_new (job->schedule_conf, self->timezone, reason,
                                         sizeof reason);
        if (!cron) {
            snprintf (why, whylen, "cron '%s': %s", job->schedule_conf, reason);
            return why;
        }
        //  A job that cannot be started is imported stopped, not refused
        if (job->running && self->start && xxl_cron_next (cron, zclock_time ()) < 0) {
            job->running = false;
            s_skip (self, "job %" PRId64 " '%s': not started: cron '%s' fires never again",
                    job->id, job->desc, job->schedule_conf);
        }
        xxl_cron_destroy (&cron);
    }
    else
    if (streq (job->schedule_type, "NONE"))
        job->schedule_conf [0] = 0;
    else {
        char *end = NULL;
        long long seconds = strtoll (job->schedule_conf, &end, 10);
        if (!*job->schedule_conf || *end || seconds < 1) {
            snprintf (why, whylen, "%s '%s' is not a number of seconds", job->schedule_type,
                      job->schedule_conf);
            return why;
        }
    }
    if (!s_one_of ("JOB_ADD", "misfireStrategy", job->misfire)) {
        snprintf (why, whylen, "misfire strategy %s is not one xxl has", job->misfire);
        return why;
    }
    if (!s_one_of ("JOB_ADD", "executorBlockStrategy", job->block)) {
        snprintf (why, whylen, "block strategy %s is not one xxl has", job->block);
        return why;
    }
    if (!s_in_list (self->routers, job->route)) {
        snprintf (why, whylen, "route %s is not one of the scheduler's (%s)", job->route,
                  self->routers && *self->routers? self->routers: "none loaded");
        return why;
    }
    const xxl_field_t *timeout = xxl_command_field (xxl_command_find ("JOB_ADD"),
                                                    "executorTimeout");
    const xxl_field_t *retry = xxl_command_field (xxl_command_find ("JOB_ADD"),
                                                  "executorFailRetryCount");
    if (job->timeout < timeout->min || job->timeout > timeout->max)
        return "executor_timeout out of xxl's range";
    if (job->retry < retry->min || job->retry > retry->max)
        return "executor_fail_retry_count out of xxl's range";
    struct { const char *key, *text; } texts [] = {
        { "jobDesc", job->desc }, { "author", job->author }, { "alarmEmail", job->alarm_email },
        { "executorHandler", job->handler }, { "executorParam", job->param },
        { "glueSource", job->glue_source }, { "glueRemark", job->glue_remark },
        { "scheduleConf", job->schedule_conf }
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts [0]; i++)
        if (s_too_long ("JOB_ADD", texts [i].key, texts [i].text)) {
            snprintf (why, whylen, "its %s is longer than xxl takes", texts [i].key);
            return why;
        }
    return NULL;
}

//  The glue versions to create: XXL-JOB's history (each save of the
//  source is a row, the newest being the job's source), then the job's
//  source when it differs from the newest row
static void
s_judge_glue (import_t *self, import_job_t *job)
{
    size_t rows = 0;
    for (size_t i = 0; i < self->nglues; i++)
        rows += self->glues [i].job_id == job->id;
    if (streq (job->glue_type, "BEAN")) {
        if (rows)
            s_skip (self, "job %" PRId64 " '%s': its %zu glue version(s) not kept: the job is"
                    " BEAN now, and xxl keeps versions of GLUE jobs only", job->id, job->desc,
                    rows);
        return;
    }
    job->versions = calloc (rows + 1, sizeof (import_glue_t));
    if (!job->versions)
        return;
    //  Rows in id order (the dump's order is the table's, by id)
    const char *last = NULL;
    for (size_t i = 0; i < self->nglues; i++) {
        import_glue_t *glue = &self->glues [i];
        if (glue->job_id != job->id)
            continue;
        const char *type = *glue->type? glue->type: job->glue_type;
        if (streq (type, "BEAN") || !s_one_of ("JOB_ADD", "glueType", type)
        ||  s_too_long ("JOB_ADD", "glueSource", glue->source)
        ||  s_too_long ("JOB_ADD", "glueRemark", glue->remark)) {
            s_skip (self, "glue version %" PRId64 " of job %" PRId64 ": type %s or its size is"
                    " not one xxl takes", glue->id, job->id, type);
            continue;
        }
        if (last && streq (last, glue->source))
            continue;                   //  no change: not a version in xxl
        job->versions [job->nversions++] = (import_glue_t) {
            glue->id, job->id, (char *) type, glue->source, glue->remark
        };
        last = glue->source;
    }
    if (!last || strneq (last, job->glue_source))
        job->versions [job->nversions++] = (import_glue_t) {
            0, job->id, job->glue_type, job->glue_source, job->glue_remark
        };
    else
        //  The newest row is the job's source: it takes the job's type
        job->versions [job->nversions - 1].type = job->glue_type;
}

static import_job_t *
s_job_of (import_t *self, int64_t id)
{
    for (size_t j = 0; j < self->njobs; j++)
        if (self->jobs [j].id == id)
            return &self->jobs [j];
    return NULL;
}

//  Whether to is reachable from from over the kids links
static bool
s_reaches (import_job_t *from, import_job_t *to, int depth)
{
    if (from == to)
        return true;
    if (depth > 10000)
        return true;                    //  too deep to tell: treat as a cycle
    for (size_t k = 0; k < from->nkids; k++)
        if (s_reaches (from->kids [k], to, depth + 1))
            return true;
    return false;
}

//  Links each NEW job to its children that will be in xxl; a link to a
//  job not imported, or one closing a cycle, is listed as skipped
static void
s_judge_children (import_t *self, import_job_t *job)
{
    if (!*job->child)
        return;
    char *copy = strdup (job->child), *save = NULL;
    size_t count = 1;
    for (const char *p = job->child; *p; p++)
        count += *p == ',';
    job->kids = copy? calloc (count, sizeof (import_job_t *)): NULL;
    for (char *t = job->kids? strtok_r (copy, ",", &save): NULL; t;
         t = strtok_r (NULL, ",", &save)) {
        while (*t == ' ')
            t++;
        char *end = NULL;
        long long id = strtoll (t, &end, 10);
        import_job_t *kid = *end || id <= 0? NULL: s_job_of (self, id);
        if (!kid || kid->state == IMPORT_SKIPPED)
            s_skip (self, "job %" PRId64 " '%s': child job %s not linked: %s", job->id,
                    job->desc, t, kid? "it is skipped": "no such job in the dump");
        else
        if (kid == job)
            s_skip (self, "job %" PRId64 " '%s': not linked as its own child", job->id,
                    job->desc);
        else
        if (kid->state == IMPORT_NEW && s_reaches (kid, job, 0))
            s_skip (self, "job %" PRId64 " '%s': child job %s not linked: it would close a"
                    " cycle, which xxl refuses", job->id, job->desc, t);
        else
        if (job->nkids >= XXL_IMPORT_MAX_KIDS)
            s_skip (self, "job %" PRId64 " '%s': child job %s not linked: more than %d"
                    " children", job->id, job->desc, t, XXL_IMPORT_MAX_KIDS);
        else {
            bool twice = false;
            for (size_t k = 0; k < job->nkids; k++)
                twice = twice || job->kids [k] == kid;
            if (!twice)
                job->kids [job->nkids++] = kid;
        }
    }
    free (copy);
}

void
import_judge (import_t *self)
{
    char why [512];
    for (size_t g = 0; g < self->ngroups; g++) {
        import_group_t *group = &self->groups [g];
        for (size_t o = 0; o < g && group->state != IMPORT_SKIPPED; o++)
            if (self->groups [o].id == group->id || streq (self->groups [o].appname,
                                                           group->appname)) {
                group->state = IMPORT_SKIPPED;
                s_skip (self, "group %" PRId64 " '%s': a second row of that id or appname",
                        group->id, group->appname);
            }
        why [0] = 0;
        const char *reason = group->state == IMPORT_NEW? s_judge_group (group, why, sizeof why)
                           : NULL;
        if (reason) {
            group->state = IMPORT_SKIPPED;
            s_skip (self, "group %" PRId64 " '%s': %s", group->id, group->appname, reason);
        }
    }
    for (size_t j = 0; j < self->njobs; j++) {
        import_job_t *job = &self->jobs [j];
        for (size_t g = 0; g < self->ngroups && !job->group; g++)
            if (self->groups [g].id == job->job_group)
                job->group = &self->groups [g];
        if (job->state == IMPORT_SKIPPED)
            continue;
        if (s_job_of (self, job->id) != job) {
            job->state = IMPORT_SKIPPED;
            s_skip (self, "job %" PRId64 " '%s': a second row of that id", job->id, job->desc);
            continue;
        }
        const char *reason = s_judge_job (self, job, why, sizeof why);
        if (reason) {
            job->state = IMPORT_SKIPPED;
            s_skip (self, "job %" PRId64 " '%s': %s", job->id, job->desc, reason);
            continue;
        }
        //  Already in xxl: same group, description and handler
        for (size_t e = 0; e < self->nexisting; e++) {
            import_existing_t *existing = &self->existing [e];
            if (!existing->taken && existing->group_id == job->group->id
            &&  streq (existing->desc, job->desc) && streq (existing->handler, job->handler)) {
                existing->taken = true;
                job->state = IMPORT_REUSED;
                job->new_id = existing->id;
                break;
            }
        }
        if (job->state != IMPORT_NEW)
            continue;
        if (*job->alarm_email && !s_in_list (self->alarms, "email")) {
            s_skip (self, "job %" PRId64 " '%s': alarm e-mail '%s' dropped: the scheduler has"
                    " no email alarm plugin", job->id, job->desc, job->alarm_email);
            job->alarm_email [0] = 0;
        }
        s_judge_glue (self, job);
    }
    for (size_t j = 0; j < self->njobs; j++)
        if (self->jobs [j].state == IMPORT_NEW)
            s_judge_children (self, &self->jobs [j]);
}

//  What an import adds, reuses and starts
typedef struct {
    size_t groups, jobs, glues, rgroups, rjobs, started;
} s_counts_t;

static s_counts_t
s_counts (import_t *self)
{
    s_counts_t c = { 0, 0, 0, 0, 0, 0 };
    for (size_t g = 0; g < self->ngroups; g++) {
        c.groups += self->groups [g].state == IMPORT_NEW;
        c.rgroups += self->groups [g].state == IMPORT_REUSED;
    }
    for (size_t j = 0; j < self->njobs; j++) {
        import_job_t *job = &self->jobs [j];
        c.jobs += job->state == IMPORT_NEW;
        c.rjobs += job->state == IMPORT_REUSED;
        c.glues += job->state == IMPORT_NEW? job->nversions: 0;
        c.started += job->started;
    }
    return c;
}

//  An id as a map key: its decimal text
static int
s_pack_id_key (msgpack_packer *pk, int64_t id)
{
    char key [24];
    snprintf (key, sizeof key, "%" PRId64, id);
    return xxl_ctl_pack_str (pk, key);
}

int
import_pack (import_t *self, bool dry, msgpack_sbuffer *buf)
{
    s_counts_t c = s_counts (self);
    size_t kept_groups = 0, kept_jobs = 0;
    for (size_t g = 0; g < self->ngroups; g++)
        kept_groups += self->groups [g].state != IMPORT_SKIPPED;
    for (size_t j = 0; j < self->njobs; j++)
        kept_jobs += self->jobs [j].state != IMPORT_SKIPPED;
    msgpack_packer pk;
    msgpack_packer_init (&pk, buf, msgpack_sbuffer_write);
    int bad = msgpack_pack_map (&pk, 10)
           || xxl_ctl_pack_str (&pk, "timezone")
           || xxl_ctl_pack_str (&pk, self->timezone? self->timezone: "")
           || xxl_ctl_pack_str (&pk, "groups") || msgpack_pack_uint64 (&pk, c.groups)
           || xxl_ctl_pack_str (&pk, "jobs") || msgpack_pack_uint64 (&pk, c.jobs)
           || xxl_ctl_pack_str (&pk, "glues") || msgpack_pack_uint64 (&pk, c.glues)
           || xxl_ctl_pack_str (&pk, "skipped") || msgpack_pack_array (&pk, (uint32_t) self->nskipped);
    for (size_t i = 0; i < self->nskipped && !bad; i++)
        bad = xxl_ctl_pack_str (&pk, self->skipped [i]);
    bad = bad
       || xxl_ctl_pack_str (&pk, "reused") || msgpack_pack_map (&pk, 2)
       || xxl_ctl_pack_str (&pk, "groups") || msgpack_pack_uint64 (&pk, c.rgroups)
       || xxl_ctl_pack_str (&pk, "jobs") || msgpack_pack_uint64 (&pk, c.rjobs)
       || xxl_ctl_pack_str (&pk, "started") || msgpack_pack_uint64 (&pk, c.started)
       || xxl_ctl_pack_str (&pk, "dryRun") || (dry? msgpack_pack_true (&pk): msgpack_pack_false (&pk))
       || xxl_ctl_pack_str (&pk, "groupIds") || msgpack_pack_map (&pk, (uint32_t) kept_groups);
    for (size_t g = 0; g < self->ngroups && !bad; g++)
        if (self->groups [g].state != IMPORT_SKIPPED)
            bad = s_pack_id_key (&pk, self->groups [g].id)
               || msgpack_pack_int64 (&pk, self->groups [g].new_id);
    bad = bad || xxl_ctl_pack_str (&pk, "jobIds") || msgpack_pack_map (&pk, (uint32_t) kept_jobs);
    for (size_t j = 0; j < self->njobs && !bad; j++)
        if (self->jobs [j].state != IMPORT_SKIPPED)
            bad = s_pack_id_key (&pk, self->jobs [j].id)
               || msgpack_pack_int64 (&pk, self->jobs [j].new_id);
    return bad? -1: 0;
}

void
import_print (import_t *self, FILE *out, bool dry)
{
    s_counts_t c = s_counts (self);
    const char *add = dry? "would be added": "added";
    for (size_t g = 0; g < self->ngroups; g++) {
        import_group_t *group = &self->groups [g];
        if (group->state == IMPORT_SKIPPED)
            continue;
        if (group->state == IMPORT_REUSED)
            fprintf (out, "group %" PRId64 " %s: exists as group %" PRId64 ", reused\n",
                     group->id, group->appname, group->new_id);
        else
        if (dry)
            fprintf (out, "group %" PRId64 " %s: %s%s%s\n", group->id, group->appname, add,
                     group->address_type == 1? ", manual: ": "",
                     group->address_type == 1? group->address_list: "");
        else
            fprintf (out, "group %" PRId64 " %s: added as group %" PRId64 "\n", group->id,
                     group->appname, group->new_id);
    }
    for (size_t j = 0; j < self->njobs; j++) {
        import_job_t *job = &self->jobs [j];
        if (job->state == IMPORT_SKIPPED)
            continue;
        if (job->state == IMPORT_REUSED) {
            fprintf (out, "job %" PRId64 " '%s': exists as job %" PRId64 ", not imported"
                     " again\n", job->id, job->desc, job->new_id);
            continue;
        }
        char as [64] = "";
        if (!dry)
            snprintf (as, sizeof as, " as job %" PRId64, job->new_id);
        fprintf (out, "job %" PRId64 " '%s': %s%s (%s%s%s%s, %s, %s, %zu glue version(s),"
                 " %zu child(ren))%s\n", job->id, job->desc, add, as, job->schedule_type,
                 *job->schedule_conf? " '": "", job->schedule_conf,
                 *job->schedule_conf? "'": "", job->route, job->glue_type, job->nversions,
                 job->nkids, job->started? ", started": "");
    }
    for (size_t i = 0; i < self->nskipped; i++)
        fprintf (out, "skipped: %s\n", self->skipped [i]);
    fprintf (out, "%s %zu group(s), %zu job(s), %zu glue version(s); reused %zu group(s),"
             " %zu job(s); %zu skipped", dry? "dry run, nothing changed: would import":
             "imported", c.groups, c.jobs, c.glues, c.rgroups, c.rjobs, self->nskipped);
    if (c.started)
        fprintf (out, "; %zu started", c.started);
    fprintf (out, "\n");
    size_t crons = 0;
    for (size_t j = 0; j < self->njobs; j++)
        crons += self->jobs [j].state == IMPORT_NEW && streq (self->jobs [j].schedule_type, "CRON");
    if (self->timezone)
        fprintf (out, "timezone %s: the %zu cron job(s) %s in it\n", self->timezone, crons,
                 dry? "would run": "run");
    else
    if (crons)
        fprintf (out, "note: %zu cron job(s) %s run in UTC; XXL-JOB ran them in its admin's"
                 " local time: give that zone with --timezone (e.g. Asia/Shanghai)\n", crons,
                 dry? "would": "now");
}
