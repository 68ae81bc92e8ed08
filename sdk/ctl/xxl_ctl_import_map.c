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

//  The capacity an array of count elements grown by s_grow has: the
//  next power of two (0 for 0), so that n appends cost O(n) copies
static size_t
s_capacity (size_t count)
{
    size_t capacity = count? 1: 0;
    while (capacity < count)
        capacity *= 2;
    return capacity;
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
    char **grown = !text? NULL
                 : self->nskipped < s_capacity (self->nskipped)? self->skipped
                 : realloc (self->skipped, (self->nskipped? 2 * self->nskipped: 1)
                                           * sizeof (char *));
    if (!grown) {
        free (text);
        return;
    }
    self->skipped = grown;
    self->skipped [self->nskipped++] = text;
}

//  A text of the dump as a skip reason, an error or the mapping printed
//  quotes it: made valid UTF-8 (U+FFFD for each bad sequence), then
//  xxl_printable (controls escaped, so a dump cannot reach the terminal),
//  cut to fit max bytes (at most S_SHOWN_BIG).  The result lives in one of
//  S_SHOWN_RING static buffers: valid until the S_SHOWN_RING-th call after
//  (one message's arguments at most); not thread-safe, as xxl-ctl is one
//  thread.
#define S_SHOWN_MAX     384             //  in a skip reason
#define S_SHOWN_BIG     (4 * XXL_CMD_MAX_TEXT + 1)  //  the longest api text, escaped
#define S_SHOWN_RING    8

static const char *
s_shown_n (const char *text, size_t max)
{
    static char ring [S_SHOWN_RING][S_SHOWN_BIG];
    static size_t next = 0;
    char *out = ring [next++ % S_SHOWN_RING];
    char *repaired = text? xxl_utf8_repair (text): NULL;
    xxl_printable (repaired? repaired: text, out, max < S_SHOWN_BIG? max: S_SHOWN_BIG);
    free (repaired);
    return out;
}

static const char *
s_shown (const char *text)
{
    return s_shown_n (text, S_SHOWN_MAX);
}

//  The same, uncut for any text the api takes (the mapping printed)
static const char *
s_shown_all (const char *text)
{
    return s_shown_n (text, S_SHOWN_BIG);
}

//  Grows an array by one zeroed element; its address, or NULL
static void *
s_grow (void **array, size_t *count, size_t size)
{
    if (*count >= XXL_IMPORT_MAX_ROWS)
        return NULL;
    char *grown = (char *) *array;
    if (*count == s_capacity (*count)) {
        grown = realloc (*array, (*count? 2 * *count: 1) * size);
        if (!grown)
            return NULL;
    }
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
                s_shown (group->appname), row->line, bad);
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
        s_skip (self, "job %" PRId64 " '%s' (line %zu): a column %s", job->id,
                s_shown (job->desc), row->line, bad);
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
        return *why? s_shown (why): "appname too long";
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
        snprintf (why, whylen, "glue type %s is not one this xxl takes%s",
                  s_shown (job->glue_type),
                  streq (job->glue_type, "GLUE_GROOVY")? " (GLUE(Java) runs only on a bridged"
                  " Java executor)": "");
        return why;
    }
    if (streq (job->glue_type, "BEAN") && !*job->handler)
        return "a BEAN job with no handler";
    if (!s_one_of ("JOB_ADD", "scheduleType", job->schedule_type)) {
        snprintf (why, whylen, "schedule type %s is not one xxl has",
                  s_shown (job->schedule_type));
        return why;
    }
    char reason [256];
    if (streq (job->schedule_type, "CRON")) {
        xxl_cron_t *cron = xxl_cron_new (job->schedule_conf, self->timezone, reason,
                                         sizeof reason);
        if (!cron) {
            snprintf (why, whylen, "cron '%s': %s", s_shown (job->schedule_conf),
                      s_shown (reason));
            return why;
        }
        //  A job that cannot be started is imported stopped, not refused
        if (job->running && self->start && xxl_cron_next (cron, zclock_time ()) < 0) {
            job->running = false;
            s_skip (self, "job %" PRId64 " '%s': not started: cron '%s' fires never again",
                    job->id, s_shown (job->desc), s_shown (job->schedule_conf));
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
                      s_shown (job->schedule_conf));
            return why;
        }
    }
    if (!s_one_of ("JOB_ADD", "misfireStrategy", job->misfire)) {
        snprintf (why, whylen, "misfire strategy %s is not one xxl has",
                  s_shown (job->misfire));
        return why;
    }
    if (!s_one_of ("JOB_ADD", "executorBlockStrategy", job->block)) {
        snprintf (why, whylen, "block strategy %s is not one xxl has",
                  s_shown (job->block));
        return why;
    }
    if (!s_in_list (self->routers, job->route)) {
        snprintf (why, whylen, "route %s is not one of the scheduler's (%s)",
                  s_shown (job->route),
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

//  Rows by id: (id, row) pairs sorted by id, then row, so that the first
//  pair of an id is the dump's first row of it.  Built in O(n log n),
//  looked up in O(log n): import_judge does no scan per row.
typedef struct {
    int64_t id;
    size_t row;
} s_by_id_t;

static int
s_by_id_cmp (const void *a, const void *b)
{
    const s_by_id_t *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id? -1: 1;
    return x->row < y->row? -1: x->row > y->row;
}

//  The index of the n rows at base (stride bytes apart) whose id is the
//  int64_t at offset in each; NULL when out of memory
static s_by_id_t *
s_by_id_new (const void *base, size_t n, size_t stride, size_t offset)
{
    s_by_id_t *index = malloc ((n? n: 1) * sizeof *index);
    if (!index)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        memcpy (&index [i].id, (const char *) base + i * stride + offset, sizeof (int64_t));
        index [i].row = i;
    }
    qsort (index, n, sizeof *index, s_by_id_cmp);
    return index;
}

//  The position in index (n pairs) of the first pair of id, or n for none
static size_t
s_by_id_first (const s_by_id_t *index, size_t n, int64_t id)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (index [mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && index [lo].id == id? lo: n;
}

//  The existing jobs sorted by (group, description, handler, row), and for
//  the first of each run of equal keys, how many of the run are taken:
//  a run is taken in row order, so its taken ones are its first ones
typedef struct {
    import_existing_t **sorted;
    size_t *taken;
    size_t count;
} s_existing_index_t;

static int
s_existing_key_cmp (const import_existing_t *x, int64_t group_id, const char *desc,
                    const char *handler)
{
    if (x->group_id != group_id)
        return x->group_id < group_id? -1: 1;
    int c = strcmp (x->desc? x->desc: "", desc);
    return c? c: strcmp (x->handler? x->handler: "", handler);
}

static int
s_existing_cmp (const void *a, const void *b)
{
    const import_existing_t *x = *(import_existing_t *const *) a;
    const import_existing_t *y = *(import_existing_t *const *) b;
    int c = s_existing_key_cmp (x, y->group_id, y->desc? y->desc: "",
                                y->handler? y->handler: "");
    return c? c: x < y? -1: x > y;
}

//  The first existing job not taken with the job's group, description
//  and handler (the first in row order), now taken; NULL for none
static import_existing_t *
s_existing_take (s_existing_index_t *index, const import_job_t *job)
{
    size_t lo = 0, hi = index->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s_existing_key_cmp (index->sorted [mid], job->group->id, job->desc,
                                job->handler) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t at = lo + (lo < index->count? index->taken [lo]: 0);
    if (at >= index->count || s_existing_key_cmp (index->sorted [at], job->group->id,
                                                  job->desc, job->handler))
        return NULL;
    index->taken [lo]++;
    index->sorted [at]->taken = true;
    return index->sorted [at];
}

//  The glue versions to create: XXL-JOB's history (each save of the
//  source is a row, the newest being the job's source), then the job's
//  source when it differs from the newest row.  glues: the glue rows by
//  job id (s_by_id_t), so the job's rows are one run, in row order.
static void
s_judge_glue (import_t *self, import_job_t *job, const s_by_id_t *glues)
{
    size_t first = s_by_id_first (glues, self->nglues, job->id), rows = 0;
    while (first + rows < self->nglues && glues [first + rows].id == job->id)
        rows++;
    if (streq (job->glue_type, "BEAN")) {
        if (rows)
            s_skip (self, "job %" PRId64 " '%s': its %zu glue version(s) not kept: the job is"
                    " BEAN now, and xxl keeps versions of GLUE jobs only", job->id,
                    s_shown (job->desc), rows);
        return;
    }
    job->versions = calloc (rows + 1, sizeof (import_glue_t));
    if (!job->versions)
        return;
    //  Rows in id order (the dump's order is the table's, by id)
    const char *last = NULL;
    for (size_t r = 0; r < rows; r++) {
        import_glue_t *glue = &self->glues [glues [first + r].row];
        const char *type = *glue->type? glue->type: job->glue_type;
        if (streq (type, "BEAN") || !s_one_of ("JOB_ADD", "glueType", type)
        ||  s_too_long ("JOB_ADD", "glueSource", glue->source)
        ||  s_too_long ("JOB_ADD", "glueRemark", glue->remark)) {
            s_skip (self, "glue version %" PRId64 " of job %" PRId64 ": type %s or its size is"
                    " not one xxl takes", glue->id, job->id, s_shown (type));
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

//  One id of a NEW job's child_jobid and what becomes of it
typedef enum {
    S_CHILD_PENDING,                    //  a candidate link, for the walk to judge
    S_CHILD_LINK,                       //  linked
    S_CHILD_TWICE,                      //  named before and linked: dropped silently
    S_CHILD_MISSING,                    //  no such job in the dump
    S_CHILD_SKIPPED,                    //  the job it names is skipped
    S_CHILD_SELF,                       //  the job itself
    S_CHILD_CYCLE,                      //  the link would close a cycle
    S_CHILD_FULL                        //  past the job's XXL_IMPORT_MAX_KIDS-th child
} s_child_verdict_t;

typedef struct {
    const char *text;                   //  the id as written (blanks before it dropped)
    import_job_t *kid;                  //  the job it names (NULL: none)
    bool twice;                         //  the same kid named before by this job
    s_child_verdict_t verdict;
} s_child_t;

//  Links each NEW job to its children that will be in xxl (job->kids, in
//  the order written; each named once); a link to a job not imported, to
//  itself, past the 200th, or closing a cycle is listed as skipped (in
//  job order, then the order written).  Which link of a cycle is dropped:
//  a depth-first walk from the NEW jobs in dump order, each job's children
//  in the order written, drops each link to a job whose walk is still
//  open (a link back up the walk); what is linked is then acyclic.  REUSED
//  jobs are linked as they are (their own children are not the dump's).
//  O(V + E) after the O(log n) lookups of the ids; the walk keeps its own
//  stack, so no chain is too deep.  jobs: the job rows by id.
static void
s_judge_children (import_t *self, const s_by_id_t *jobs)
{
    size_t n = self->njobs, nchildren = 0;
    for (size_t j = 0; j < n; j++)
        if (self->jobs [j].state == IMPORT_NEW && *self->jobs [j].child) {
            nchildren++;
            for (const char *p = self->jobs [j].child; *p; p++)
                nchildren += *p == ',';
        }
    if (!nchildren)
        return;
    char **copies = calloc (n, sizeof (char *));
    size_t *start = calloc (n + 1, sizeof (size_t)), *next = calloc (n, sizeof (size_t));
    size_t *linked = calloc (n, sizeof (size_t)), *stamp = calloc (n, sizeof (size_t));
    size_t *stack = calloc (n, sizeof (size_t));
    uint8_t *color = calloc (n, 1);     //  0: not walked, 1: walk open, 2: done
    s_child_t *children = calloc (nchildren, sizeof (s_child_t));
    if (!copies || !start || !next || !linked || !stamp || !stack || !color || !children) {
        s_skip (self, "no child job linked: out of memory");
        goto done;
    }
    //  1. Each NEW job's ids, read and looked up, in the order written
    size_t count = 0;
    for (size_t j = 0; j < n; j++) {
        import_job_t *job = &self->jobs [j];
        start [j] = count;
        if (job->state != IMPORT_NEW || !*job->child)
            continue;
        if (!(copies [j] = strdup (job->child))) {
            s_skip (self, "job %" PRId64 " '%s': no child job linked: out of memory", job->id,
                    s_shown (job->desc));
            continue;
        }
        char *save = NULL;
        for (char *t = strtok_r (copies [j], ",", &save); t; t = strtok_r (NULL, ",", &save)) {
            while (*t == ' ')
                t++;
            char *end = NULL;
            long long id = strtoll (t, &end, 10);
            size_t at = *end || id <= 0? n
                      : s_by_id_first (jobs, n, id);
            s_child_t *child = &children [count++];
            child->text = t;
            child->kid = at < n? &self->jobs [jobs [at].row]: NULL;
            if (!child->kid)
                child->verdict = S_CHILD_MISSING;
            else
            if (child->kid->state == IMPORT_SKIPPED)
                child->verdict = S_CHILD_SKIPPED;
            else
            if (child->kid == job)
                child->verdict = S_CHILD_SELF;
            else {
                size_t kid = (size_t) (child->kid - self->jobs);
                child->twice = stamp [kid] == j + 1;
                stamp [kid] = j + 1;
            }
        }
    }
    start [n] = count;
    //  2. The walk, judging the candidate links
    for (size_t root = 0; root < n; root++) {
        if (self->jobs [root].state != IMPORT_NEW || color [root])
            continue;
        size_t depth = 0;
        stack [depth++] = root;
        color [root] = 1;
        while (depth) {
            size_t u = stack [depth - 1];
            if (start [u] + next [u] >= start [u + 1]) {
                color [u] = 2;
                depth--;
                continue;
            }
            s_child_t *child = &children [start [u] + next [u]++];
            if (child->verdict != S_CHILD_PENDING)
                continue;
            size_t v = (size_t) (child->kid - self->jobs);
            bool walked = child->kid->state == IMPORT_NEW;
            if (walked && color [v] == 1)
                child->verdict = S_CHILD_CYCLE;
            else
            if (linked [u] >= XXL_IMPORT_MAX_KIDS)
                child->verdict = S_CHILD_FULL;
            else
            if (child->twice)
                child->verdict = S_CHILD_TWICE;
            else {
                child->verdict = S_CHILD_LINK;
                linked [u]++;
                if (walked && !color [v]) {
                    color [v] = 1;
                    stack [depth++] = v;    //  (each job once: depth <= n)
                }
            }
        }
    }
    //  3. The links and the reasons, in job order and the order written
    for (size_t j = 0; j < n; j++) {
        import_job_t *job = &self->jobs [j];
        if (start [j] == start [j + 1])
            continue;
        job->kids = linked [j]? calloc (linked [j], sizeof (import_job_t *)): NULL;
        if (linked [j] && !job->kids)
            s_skip (self, "job %" PRId64 " '%s': no child job linked: out of memory", job->id,
                    s_shown (job->desc));
        for (size_t c = start [j]; c < start [j + 1]; c++) {
            s_child_t *child = &children [c];
            switch (child->verdict) {
                case S_CHILD_LINK:
                    if (job->kids)
                        job->kids [job->nkids++] = child->kid;
                    break;
                case S_CHILD_MISSING:
                case S_CHILD_SKIPPED:
                    s_skip (self, "job %" PRId64 " '%s': child job %s not linked: %s", job->id,
                            s_shown (job->desc), s_shown (child->text),
                            child->kid? "it is skipped": "no such job in the dump");
                    break;
                case S_CHILD_SELF:
                    s_skip (self, "job %" PRId64 " '%s': not linked as its own child", job->id,
                            s_shown (job->desc));
                    break;
                case S_CHILD_CYCLE:
                    s_skip (self, "job %" PRId64 " '%s': child job %s not linked: it would"
                            " close a cycle, which xxl refuses", job->id, s_shown (job->desc),
                            s_shown (child->text));
                    break;
                case S_CHILD_FULL:
                    s_skip (self, "job %" PRId64 " '%s': child job %s not linked: more than %d"
                            " children", job->id, s_shown (job->desc), s_shown (child->text),
                            XXL_IMPORT_MAX_KIDS);
                    break;
                default:
                    break;
            }
        }
    }
done:
    for (size_t j = 0; copies && j < n; j++)
        free (copies [j]);
    free (copies);
    free (start);
    free (next);
    free (linked);
    free (stamp);
    free (stack);
    free (color);
    free (children);
}

//  Groups sorted by (appname, row)
static int
s_group_app_cmp (const void *a, const void *b)
{
    const import_group_t *x = *(import_group_t *const *) a;
    const import_group_t *y = *(import_group_t *const *) b;
    int c = strcmp (x->appname, y->appname);
    return c? c: x < y? -1: x > y;
}

import_group_t **
import_groups_by_app (import_t *self)
{
    import_group_t **sorted = malloc ((self->ngroups? self->ngroups: 1) * sizeof *sorted);
    if (!sorted)
        return NULL;
    for (size_t g = 0; g < self->ngroups; g++)
        sorted [g] = &self->groups [g];
    qsort (sorted, self->ngroups, sizeof *sorted, s_group_app_cmp);
    return sorted;
}

size_t
import_groups_app_first (import_group_t *const *sorted, size_t n, const char *appname)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp (sorted [mid]->appname, appname) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && streq (sorted [lo]->appname, appname)? lo: n;
}

//  Marks every row skipped: import_judge is out of memory
static void
s_judge_none (import_t *self)
{
    for (size_t g = 0; g < self->ngroups; g++)
        self->groups [g].state = IMPORT_SKIPPED;
    for (size_t j = 0; j < self->njobs; j++)
        self->jobs [j].state = IMPORT_SKIPPED;
    s_skip (self, "nothing imported: out of memory while judging the dump");
}

//  Contract in xxl_ctl_import.h.  O(n log n) in the rows: every lookup by
//  id, appname or (group, description, handler) is in a sorted index.
void
import_judge (import_t *self)
{
    char why [512];
    s_by_id_t *group_ids = s_by_id_new (self->groups, self->ngroups, sizeof (import_group_t),
                                        offsetof (import_group_t, id));
    s_by_id_t *job_ids = s_by_id_new (self->jobs, self->njobs, sizeof (import_job_t),
                                      offsetof (import_job_t, id));
    s_by_id_t *glue_jobs = s_by_id_new (self->glues, self->nglues, sizeof (import_glue_t),
                                        offsetof (import_glue_t, job_id));
    //  Groups by appname, for the first row of each
    import_group_t **by_app = import_groups_by_app (self);
    s_existing_index_t existing = {
        malloc ((self->nexisting? self->nexisting: 1) * sizeof (import_existing_t *)),
        calloc (self->nexisting? self->nexisting: 1, sizeof (size_t)), self->nexisting
    };
    if (!group_ids || !job_ids || !glue_jobs || !by_app || !existing.sorted || !existing.taken) {
        s_judge_none (self);
        goto done;
    }
    for (size_t e = 0; e < self->nexisting; e++)
        existing.sorted [e] = &self->existing [e];
    qsort (existing.sorted, self->nexisting, sizeof *existing.sorted, s_existing_cmp);

    for (size_t g = 0; g < self->ngroups; g++) {
        import_group_t *group = &self->groups [g];
        //  A second row: an earlier row has its id or its appname
        if (group->state != IMPORT_SKIPPED
        &&  (group_ids [s_by_id_first (group_ids, self->ngroups, group->id)].row < g
        ||   by_app [import_groups_app_first (by_app, self->ngroups, group->appname)] < group)) {
            group->state = IMPORT_SKIPPED;
            s_skip (self, "group %" PRId64 " '%s': a second row of that id or appname",
                    group->id, s_shown (group->appname));
        }
        why [0] = 0;
        const char *reason = group->state == IMPORT_NEW? s_judge_group (group, why, sizeof why)
                           : NULL;
        if (reason) {
            group->state = IMPORT_SKIPPED;
            s_skip (self, "group %" PRId64 " '%s': %s", group->id, s_shown (group->appname),
                    reason);
        }
    }
    for (size_t j = 0; j < self->njobs; j++) {
        import_job_t *job = &self->jobs [j];
        size_t at = s_by_id_first (group_ids, self->ngroups, job->job_group);
        job->group = at < self->ngroups? &self->groups [group_ids [at].row]: NULL;
        if (job->state == IMPORT_SKIPPED)
            continue;
        if (job_ids [s_by_id_first (job_ids, self->njobs, job->id)].row != j) {
            job->state = IMPORT_SKIPPED;
            s_skip (self, "job %" PRId64 " '%s': a second row of that id", job->id,
                    s_shown (job->desc));
            continue;
        }
        const char *reason = s_judge_job (self, job, why, sizeof why);
        if (reason) {
            job->state = IMPORT_SKIPPED;
            s_skip (self, "job %" PRId64 " '%s': %s", job->id, s_shown (job->desc), reason);
            continue;
        }
        //  Already in xxl: same group, description and handler
        import_existing_t *found = s_existing_take (&existing, job);
        if (found) {
            job->state = IMPORT_REUSED;
            job->new_id = found->id;
            continue;
        }
        if (*job->alarm_email && !s_in_list (self->alarms, "email")) {
            s_skip (self, "job %" PRId64 " '%s': alarm e-mail '%s' dropped: the scheduler has"
                    " no email alarm plugin", job->id, s_shown (job->desc),
                    s_shown (job->alarm_email));
            job->alarm_email [0] = 0;
        }
        s_judge_glue (self, job, glue_jobs);
    }
    s_judge_children (self, job_ids);
done:
    free (group_ids);
    free (job_ids);
    free (glue_jobs);
    free (by_app);
    free (existing.sorted);
    free (existing.taken);
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
                     group->id, s_shown_all (group->appname), group->new_id);
        else
        if (dry)
            fprintf (out, "group %" PRId64 " %s: %s%s%s\n", group->id,
                     s_shown_all (group->appname), add, group->address_type == 1? ", manual: ": "",
                     group->address_type == 1? s_shown_all (group->address_list): "");
        else
            fprintf (out, "group %" PRId64 " %s: added as group %" PRId64 "\n", group->id,
                     s_shown_all (group->appname), group->new_id);
    }
    for (size_t j = 0; j < self->njobs; j++) {
        import_job_t *job = &self->jobs [j];
        if (job->state == IMPORT_SKIPPED)
            continue;
        if (job->state == IMPORT_REUSED) {
            fprintf (out, "job %" PRId64 " '%s': exists as job %" PRId64 ", not imported"
                     " again\n", job->id, s_shown_all (job->desc), job->new_id);
            continue;
        }
        char as [64] = "";
        if (!dry)
            snprintf (as, sizeof as, " as job %" PRId64, job->new_id);
        fprintf (out, "job %" PRId64 " '%s': %s%s (%s%s%s%s, %s, %s, %zu glue version(s),"
                 " %zu child(ren))%s\n", job->id, s_shown_all (job->desc), add, as,
                 s_shown_all (job->schedule_type), *job->schedule_conf? " '": "",
                 s_shown_all (job->schedule_conf), *job->schedule_conf? "'": "",
                 s_shown_all (job->route), s_shown_all (job->glue_type), job->nversions,
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
