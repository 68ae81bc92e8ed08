/*  xxl_store.c -- the top of the store: the factory that picks a backend
    by URL, the completeness check of the table it returns, and freeing
    the row structs.  The calls themselves are inline in xxl_store.h: each
    goes through the handle's method table.

    Owns: xxl_store_new / xxl_store_side_new / xxl_store_describe /
    xxl_store_destroy and the xxl_*_free helpers of the row types.
    MAY call the backends (scheduler/store/sqlite, scheduler/store/pg);
    MUST NOT be called by them, nor by the shared SQL (scheduler/store/sql):
    what every backend shares (xxl_store_log_error, the driver check) lives
    in scheduler/store/sql, below the backends.
    MUST: return a handle whose method table is of this version with no
    slot empty (asserted), or NULL with the reason in err.
    Errors: NULL from the constructors, err filled; the URL's password is
    never echoed (xxl_store_describe masks it).
*/

#include "xxl_store.h"
#include "xxl_store_sqlite.h"
#include "xxl_store_pg.h"

#include <assert.h>
#include <czmq.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  Every slot after version and size is a pointer (a method, or the
//  accounts or calendars table, whose slots are all methods).  Designated initializers
//  leave a slot a backend forgot all zero bytes: each slot is checked but
//  the one xxl_store.h lets a table leave NULL, and the first empty one
//  is named by its offset.
#define XXL_SLOT sizeof (void (*) (void))
_Static_assert (sizeof (void *) == XXL_SLOT, "a method table's slots are all one size");
_Static_assert ((sizeof (xxl_store_methods_t) - offsetof (xxl_store_methods_t, destroy))
                % XXL_SLOT == 0, "xxl_store_methods_t: only pointers after size");
_Static_assert (offsetof (xxl_store_methods_t, job_delay_shift) + XXL_SLOT
                == sizeof (xxl_store_methods_t), "xxl_store_methods_t: its last slot");
_Static_assert (sizeof (xxl_store_accounts_t) % XXL_SLOT == 0
                && offsetof (xxl_store_accounts_t, session_expire) + XXL_SLOT
                   == sizeof (xxl_store_accounts_t), "xxl_store_accounts_t: only methods");
_Static_assert (sizeof (xxl_store_calendars_t) % XXL_SLOT == 0
                && offsetof (xxl_store_calendars_t, calendar_job_ids) + XXL_SLOT
                   == sizeof (xxl_store_calendars_t), "xxl_store_calendars_t: only methods");
_Static_assert (sizeof (xxl_store_backfills_t) % XXL_SLOT == 0
                && offsetof (xxl_store_backfills_t, backfill_made_times) + XXL_SLOT
                   == sizeof (xxl_store_backfills_t), "xxl_store_backfills_t: only methods");

//  skip: the offset of the one slot xxl_store.h lets a table leave NULL
//  (log_handle_done_many), or SIZE_MAX
static bool
s_slots_filled (const char *table, const void *slots, size_t from, size_t size, size_t skip)
{
    static const unsigned char empty [XXL_SLOT];
    for (size_t offset = from; offset + XXL_SLOT <= size; offset += XXL_SLOT)
        if (offset != skip
        &&  memcmp ((const unsigned char *) slots + offset, empty, XXL_SLOT) == 0) {
            zsys_error ("store: %s: the slot at offset %zu is empty", table, offset);
            return false;
        }
    return true;
}

static bool
s_methods_complete (const xxl_store_methods_t *methods)
{
    return methods->version == XXL_STORE_METHODS_VERSION
        && methods->size == sizeof (xxl_store_methods_t)
        && s_slots_filled ("xxl_store_methods_t", methods,
                           offsetof (xxl_store_methods_t, destroy), sizeof *methods,
                           offsetof (xxl_store_methods_t, log_handle_done_many))
        && s_slots_filled ("xxl_store_accounts_t", methods->accounts, 0,
                           sizeof (xxl_store_accounts_t), SIZE_MAX)
        && s_slots_filled ("xxl_store_calendars_t", methods->calendars, 0,
                           sizeof (xxl_store_calendars_t), SIZE_MAX)
        && s_slots_filled ("xxl_store_backfills_t", methods->backfills, 0,
                           sizeof (xxl_store_backfills_t), SIZE_MAX);
}

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
    assert (!self || s_methods_complete (self->methods));
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
        &job->timezone,
        &job->calendar,
        &job->agent_tags
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
xxl_store_calendar_free (xxl_store_calendar_t *calendar)
{
    free (calendar->name);
    free (calendar->dates);
    free (calendar->exclude_cron);
    free (calendar->timezone);
    memset (calendar, 0, sizeof *calendar);
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

void
xxl_store_backfill_free (xxl_store_backfill_t *backfill)
{
    free (backfill->state);
    free (backfill->by);
    free (backfill->msg);
    memset (backfill, 0, sizeof *backfill);
}
