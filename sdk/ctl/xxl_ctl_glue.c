/*  xxl_ctl_glue.c -- xxl-ctl's glue commands: a GLUE job's source versions
    (history, show, diff, rollback).
*/

#include "xxl_ctl_cmd.h"
#include "xxl_ctl_call.h"
#include "xxl_ctl_diff.h"
#include "xxl_ctl_print.h"
#include "xxl_ctl_value.h"

#include <czmq.h>
#include <inttypes.h>

static const ctl_pos_t s_job_pos [] = { { "job id", CTL_ID, "jobId" } };

//  Fetches a glue version (0: the newest) of a job: its source into
//  *source (caller frees) and its number into *got; the exit status
static int
s_glue_fetch (ctl_t *self, int64_t job, int64_t version, char **source, int64_t *got)
{
    *source = NULL;
    xxl_enc_t *enc = xxl_ctl_request (self, "GLUE_SHOW");
    if (!enc)
        return XXL_CTL_FAILED;
    xxl_enc_kint (enc, "jobId", job);
    if (version > 0)
        xxl_enc_kint (enc, "version", version);
    xxl_msg_t *reply = xxl_ctl_call (self);
    const msgpack_object *content = reply? xxl_ctl_content (self, reply): NULL;
    const msgpack_object *text = content? xxl_ctl_value_get (content, "glueSource"): NULL;
    if (content && (!text || text->type != MSGPACK_OBJECT_STR
                    || xxl_ctl_value_int (content, "version", got))) {
        xxl_msg_destroy (&reply);
        return xxl_ctl_fail (self, XXL_CTL_FAILED, "unexpected reply: no glueSource or version");
    }
    if (text)
        *source = xxl_ctl_strndup (text->via.str.ptr, text->via.str.size);
    xxl_msg_destroy (&reply);
    return *source? XXL_CTL_OK: XXL_CTL_FAILED;
}

//  A diff of two versions of a job to out; the exit status
static int
s_glue_diff_to (ctl_t *self, FILE *out, int64_t job, int64_t v1, int64_t v2)
{
    char *a = NULL, *b = NULL;
    int64_t got1 = 0, got2 = 0;
    int rc = s_glue_fetch (self, job, v1, &a, &got1);
    if (!rc)
        rc = s_glue_fetch (self, job, v2, &b, &got2);
    if (!rc) {
        char a_name [64], b_name [64];
        snprintf (a_name, sizeof a_name, "job %" PRId64 " version %" PRId64, job, got1);
        snprintf (b_name, sizeof b_name, "job %" PRId64 " version %" PRId64, job, got2);
        if (xxl_ctl_diff (out, a_name, a, b_name, b) < 0)
            rc = xxl_ctl_fail (self, XXL_CTL_FAILED, "out of memory");
        }
    free (a);
    free (b);
    return rc;
}

static const ctl_opt_t s_glue_history_opts [] = {
    { "--limit", NULL, "N", "at most N versions, newest first ({min}-{max}, default {default})",
      CTL_INT, 0, 0, "limit", NULL },
    { "--offset", NULL, "N", "skip the newest N versions (default {default})",
      CTL_INT, 0, 0, "offset", NULL },
    { "--diff", NULL, NULL, "show each version as a diff against the one before it",
      CTL_BOOL, 0, 0, NULL, NULL },
    XXL_CTL_OPTS_END
};

//  Prints the version table, the listed versions into versions; how many
static size_t
s_glue_table (ctl_t *self, const msgpack_object *glues, int64_t *versions)
{
    size_t listed = 0;
    ctl_table_t table;
    const char *headers [] = { "VERSION", "TYPE", "SAVED", "SIZE", "REMARK" };
    xxl_ctl_table_init (&table, 5, headers);
    for (uint32_t i = 0; i < glues->via.array.size; i++) {
        const msgpack_object *glue = &glues->via.array.ptr [i];
        if (glue->type != MSGPACK_OBJECT_MAP)
            continue;                   //  not a row: skip it
        char buf [64];
        int64_t saved = xxl_ctl_value_int_or (glue, "updateTime", 0);
        if (saved <= 0)
            saved = xxl_ctl_value_int_or (glue, "addTime", 0);
        versions [listed++] = xxl_ctl_value_int_or (glue, "version", 0);
        xxl_ctl_table_add (&table, xxl_ctl_value_text_of (glue, "version"));
        xxl_ctl_table_add (&table, xxl_ctl_value_text_of (glue, "glueType"));
        xxl_ctl_table_add (&table, strdup (xxl_ctl_time_text (saved, buf, sizeof buf)));
        xxl_ctl_table_add (&table, xxl_ctl_value_text_of (glue, "size"));
        xxl_ctl_table_add (&table, xxl_ctl_first_line (xxl_ctl_value_text_of (glue, "glueRemark"),
                                                       40));
    }
    xxl_ctl_table_print (&table, self->out, "no glue versions");
    return listed;
}

static int
s_glue_history (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    int64_t job = args->pos_num [0];
    int64_t offset = xxl_ctl_args_num (cmd, args, "--offset", 0);
    int diff = xxl_ctl_args_get (cmd, args, "--diff") != NULL;
    if (diff && self->json)
        return xxl_ctl_usage_error (self, cmd, self->get
                                    ? "--diff prints text: use it without --get"
                                    : "--diff prints text: use it without --json");
    if (!xxl_ctl_request_args (self, cmd->request, cmd, args, NULL))
        return XXL_CTL_FAILED;
    xxl_msg_t *reply;
    const msgpack_object *content;
    int rc;
    const msgpack_object *glues = xxl_ctl_list (self, &reply, &content, "glues", CTL_LIST, &rc);
    if (!glues)
        return rc;
    int64_t *versions = (int64_t *) calloc (glues->via.array.size + 1, sizeof (int64_t));
    size_t listed = 0;
    int64_t total = 0;
    if (versions) {
        listed = s_glue_table (self, glues, versions);
        if (xxl_ctl_value_int (content, "total", &total) == 0
        &&  total > (int64_t) (offset + listed))
            fprintf (self->out, "(%zu of %" PRId64 " versions shown; use --limit, --offset)\n",
                     listed, total);
    }
    else
        rc = xxl_ctl_fail (self, XXL_CTL_FAILED, "out of memory");
    xxl_msg_destroy (&reply);
    //  Each listed version against the one before it, when that is kept:
    //  the kept versions are consecutive, listed newest first from offset
    int64_t oldest = listed? versions [0] + offset - total + 1: 0;
    for (size_t i = 0; diff && rc == XXL_CTL_OK && i < listed; i++) {
        if (versions [i] - 1 < oldest || versions [i] <= 1)
            continue;
        fprintf (self->out, "\n");
        rc = s_glue_diff_to (self, self->out, job, versions [i] - 1, versions [i]);
    }
    free (versions);
    return rc;
}

const ctl_cmd_t xxl_ctl_glue_history = {
    "glue", "history", "JOB [--limit N] [--offset N] [--diff]",
    "a GLUE job's source versions, newest first", s_glue_history_opts, s_job_pos, 1, 1,
    NULL, s_glue_history, "GLUE_HISTORY", NULL
};

static const ctl_opt_t s_glue_show_opts [] = {
    { "--version", NULL, "N", "this version (default: the newest)", CTL_ID, 0, 0, "version", NULL },
    XXL_CTL_OPTS_END
};

static int
s_glue_show (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    if (!xxl_ctl_request_args (self, "GLUE_SHOW", cmd, args, NULL))
        return XXL_CTL_FAILED;
    xxl_msg_t *reply;
    const msgpack_object *content;
    int rc = xxl_ctl_exchange (self, &reply, &content, NULL, CTL_ANY);
    if (rc || self->json) {
        xxl_msg_destroy (&reply);
        return rc;
    }
    char buf [64];
    int64_t saved = xxl_ctl_value_int_or (content, "updateTime", 0);
    char *remark = xxl_ctl_value_text_of (content, "glueRemark");
    char *type = xxl_ctl_value_text_of (content, "glueType");
    char *source = xxl_ctl_value_text_of (content, "glueSource");
    fprintf (self->out, "# job %" PRId64 " glue version %" PRId64 ", %s, saved %s%s%s\n",
             args->pos_num [0], xxl_ctl_value_int_or (content, "version", 0), type? type: "",
             xxl_ctl_time_text (saved, buf, sizeof buf), remark && *remark? ": ": "",
             remark? remark: "");
    if (source)
        fprintf (self->out, "%s%s", source,
                 *source && source [strlen (source) - 1] != '\n'? "\n": "");
    free (remark);
    free (type);
    free (source);
    xxl_msg_destroy (&reply);
    return XXL_CTL_OK;
}

const ctl_cmd_t xxl_ctl_glue_show = {
    "glue", "show", "JOB [--version N]", "a glue version's source (default: the newest)",
    s_glue_show_opts, s_job_pos, 1, 1, NULL, s_glue_show, NULL, NULL
};

static const ctl_pos_t s_glue_diff_pos [] = {
    { "job id", CTL_ID, NULL }, { "version", CTL_ID, NULL }, { "version", CTL_ID, NULL }
};

static int
s_glue_diff (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    (void) cmd;
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream (&text, &size);
    if (!out)
        return xxl_ctl_fail (self, XXL_CTL_FAILED, "out of memory");
    int rc = s_glue_diff_to (self, out, args->pos_num [0], args->pos_num [1],
                             args->npos > 2? args->pos_num [2]: 0);
    fclose (out);
    if (rc == XXL_CTL_OK) {
        if (self->json)
            xxl_ctl_print_json_str (self, "diff", text, size);
        else
            fprintf (self->out, "%s", size? text: "(no difference)\n");
    }
    free (text);
    return rc;
}

const ctl_cmd_t xxl_ctl_glue_diff = {
    "glue", "diff", "JOB V1 [V2]", "a unified diff from version V1 to V2 (default: the newest)",
    NULL, s_glue_diff_pos, 2, 3, NULL, s_glue_diff, NULL, NULL
};

static const ctl_pos_t s_glue_rollback_pos [] = {
    { "job id", CTL_ID, "jobId" }, { "version", CTL_ID, "version" }
};

static int
s_glue_rollback (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    if (!xxl_ctl_request_args (self, "GLUE_ROLLBACK", cmd, args, NULL))
        return XXL_CTL_FAILED;
    xxl_msg_t *reply;
    const msgpack_object *content;
    int rc = xxl_ctl_exchange (self, &reply, &content, "version", CTL_NUMBER);
    if (rc)
        return rc;
    if (!self->json)
        fprintf (self->out, "job %" PRId64 ": glue version %" PRId64 " is current again,"
                 " as version %" PRId64 "\n", args->pos_num [0], args->pos_num [1],
                 xxl_ctl_value_int_or (content, "version", 0));
    xxl_msg_destroy (&reply);
    return XXL_CTL_OK;
}

const ctl_cmd_t xxl_ctl_glue_rollback = {
    "glue", "rollback", "JOB N", "make version N the job's glue again (as a new version)",
    NULL, s_glue_rollback_pos, 2, 2, NULL, s_glue_rollback, NULL, NULL
};
