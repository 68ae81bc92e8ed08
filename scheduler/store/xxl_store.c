/*  xxl_store.c -- the store's backends by name, and what every backend
    shares (freeing the row structs).  The calls themselves are inline in
    xxl_store.h: each goes through the handle's method table.
*/

#include "xxl_store.h"
#include "xxl_store_sqlite.h"
#include "xxl_store_pg.h"

#include <assert.h>
#include <czmq.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static xxl_store_t *
s_open (const char *url, bool side, char *err, size_t errlen)
{
    xxl_store_t *self = NULL;
    //  (the PostgreSQL backend never echoes the URL: it may hold a password)
    if (strncmp (url, "postgresql://", 13) == 0 || strncmp (url, "postgres://", 11) == 0)
        self = side? xxl_store_pg_side_new (url, err, errlen): xxl_store_pg_new (url, err, errlen);
    else
    if (side)
        self = xxl_store_sqlite_side_new (url, err, errlen);
    else
        self = xxl_store_sqlite_new (url, err, errlen);
    //  A backend fills a table of this version: no method may be missing
    assert (!self || (self->methods->version == XXL_STORE_METHODS_VERSION
                      && self->methods->size == sizeof (xxl_store_methods_t)
                      && self->methods->accounts && self->methods->log_open_ids_at
                      && self->methods->report_count && self->methods->report_set
                      && self->methods->job_rm_logs_some));
    return self;
}

xxl_store_t *
xxl_store_new (const char *url, char *err, size_t errlen)
{
    return s_open (url, false, err, errlen);
}

xxl_store_t *
xxl_store_side_new (const char *url, char *err, size_t errlen)
{
    return s_open (url, true, err, errlen);
}

const char *
xxl_store_describe (const char *url, char *buf, size_t len)
{
    bool pg = strncmp (url, "postgresql://", 13) == 0 || strncmp (url, "postgres://", 11) == 0;
    if (!pg) {
        snprintf (buf, len, "%s", url);
        return buf;
    }
    //  postgresql://user:secret@host/db?password=secret&...: each secret
    //  becomes ***
    const char *rest = strstr (url, "://") + 3;
    const char *at = strchr (rest, '@');
    const char *slash = strchr (rest, '/');
    const char *colon = strchr (rest, ':');
    size_t used = 0;
    if (at && (!slash || at < slash) && colon && colon < at)
        used = (size_t) snprintf (buf, len, "%.*s:***%s", (int) (colon - url), url, at);
    else
        used = (size_t) snprintf (buf, len, "%s", url);
    if (used >= len)
        return buf;
    char *password = strstr (buf, "password=");
    if (password) {
        password += 9;
        char *end = strchr (password, '&');
        char tail [512];
        snprintf (tail, sizeof tail, "%s", end? end: "");
        snprintf (password, len - (size_t) (password - buf), "***%s", tail);
    }
    return buf;
}

void
xxl_store_destroy (xxl_store_t **self_p)
{
    if (self_p && *self_p) {
        (*self_p)->methods->destroy (*self_p);
        *self_p = NULL;
    }
}

void
xxl_group_free (xxl_group_t *group)
{
    free (group->app_name);
    free (group->title);
    free (group->address_list);
    memset (group, 0, sizeof *group);
}

void
xxl_job_free (xxl_job_t *job)
{
    char **strings [] = {
        &job->job_desc, &job->author, &job->alarm_email, &job->schedule_type,
        &job->schedule_conf, &job->misfire_strategy, &job->executor_route_strategy,
        &job->executor_handler, &job->executor_param, &job->executor_block_strategy,
        &job->glue_type, &job->glue_source, &job->glue_remark, &job->child_jobid,
        &job->timezone
    };
    for (size_t i = 0; i < sizeof strings / sizeof strings [0]; i++)
        free (*strings [i]);
    memset (job, 0, sizeof *job);
}

void
xxl_log_free (xxl_log_t *log)
{
    free (log->executor_address);
    free (log->executor_handler);
    free (log->executor_param);
    free (log->executor_sharding_param);
    free (log->trigger_msg);
    free (log->trigger_type);
    free (log->handle_msg);
    memset (log, 0, sizeof *log);
}

void
xxl_store_log_error (xxl_store_logged_t *logged, const char *error)
{
    //  The slot of this cause, or the one written longest ago
    int64_t now = zclock_mono ();
    xxl_store_logged_t *slot = &logged [0];
    for (int i = 0; i < XXL_STORE_LOG_CAUSES; i++) {
        if (strcmp (logged [i].cause, error) == 0) {
            slot = &logged [i];
            break;
        }
        if (logged [i].at < slot->at)
            slot = &logged [i];
    }
    bool same = strcmp (slot->cause, error) == 0;
    if (same && slot->at && now - slot->at < XXL_STORE_LOG_MS) {
        slot->suppressed++;
        return;
    }
    if (same && slot->suppressed)
        zsys_error ("store: %s (and %" PRIu64 " more like it in the last %d s)", error,
                    slot->suppressed, (int) ((now - slot->at) / 1000));
    else
        zsys_error ("store: %s", error);
    snprintf (slot->cause, sizeof slot->cause, "%s", error);
    slot->at = now;
    slot->suppressed = 0;
}

void
xxl_account_free (xxl_account_t *account)
{
    free (account->name);
    free (account->hash);
    free (account->role);
    free (account->apps);
    memset (account, 0, sizeof *account);
}
