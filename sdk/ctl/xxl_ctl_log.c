/*  xxl_ctl_log.c -- xxl-ctl's log (run) commands: list, show, cat, kill,
    clear.
*/

#include "xxl_ctl_cmd.h"
#include "xxl_ctl_call.h"
#include "xxl_ctl_print.h"
#include "xxl_ctl_value.h"
#include "xxl_commands.h"

#include <czmq.h>
#include <inttypes.h>

static const ctl_pos_t s_log_pos [] = { { "log id", CTL_ID, "logId" } };

static const ctl_choice_t s_log_states [] = {
    { "success", 1 }, { "failure", 2 }, { "running", 3 }, { NULL, 0 }
};

static const ctl_opt_t s_log_list_opts [] = {
    { "--job", NULL, "ID", "only runs of this job", CTL_ID, 0, 0, "jobId", NULL },
    { "--group", NULL, "ID", "only runs of this group (its id)", CTL_ID, 0, 0, "jobGroup", NULL },
    { "--limit", NULL, "N", "at most N runs, newest first (default {limit.default}; over"
                            " {limit.max}:\n                         fetched {limit.max} at a"
                            " time)",
      CTL_INT, 1, 1000000, NULL, NULL },
    { "--offset", NULL, "N", "skip the newest N runs (default 0)",
      CTL_INT, 0, INT64_MAX, NULL, NULL },
    { "--status", NULL, "S", "only runs that are success, failure or running",
      CTL_ENUM, 0, 0, "logStatus", s_log_states },
    { "--from", NULL, "TIME", "only runs triggered at or after TIME (epoch ms, or local\n"
                              "                         YYYY-MM-DD[ HH:MM[:SS]])",
      CTL_TIME, 0, 0, "triggerTimeFrom", NULL },
    { "--to", NULL, "TIME", "only runs triggered at or before TIME",
      CTL_TIME, 0, 0, "triggerTimeTo", NULL },
    XXL_CTL_OPTS_END
};

//  Adds a run's row to the run table
static void
s_log_row (ctl_table_t *table, const msgpack_object *log)
{
    char buf [64];
    xxl_ctl_table_add (table, xxl_ctl_value_text_of (log, "id"));
    xxl_ctl_table_add (table, xxl_ctl_value_text_of (log, "jobId"));
    xxl_ctl_table_add (table, strdup (xxl_ctl_time_text (
                                          xxl_ctl_value_int_or (log, "triggerTime", 0),
                                          buf, sizeof buf)));
    xxl_ctl_table_add (table, xxl_ctl_value_text_of (log, "triggerCode"));
    int64_t handle = xxl_ctl_value_int_or (log, "handleCode", 0);
    xxl_ctl_table_add (table, handle? xxl_ctl_value_text_of (log, "handleCode"): strdup ("-"));
    xxl_ctl_table_add (table, xxl_ctl_value_text_of (log, "executorAddress"));
    //  MSG: the result's message; without one, a failed trigger's reason
    //  (the last line of its triggerMsg), else the trigger's first line
    char *text = xxl_ctl_value_text_of (log, "handleMsg");
    if (!text || !*text) {
        free (text);
        text = xxl_ctl_value_text_of (log, "triggerMsg");
        int64_t trigger = xxl_ctl_value_int_or (log, "triggerCode", 0);
        if (text && trigger != 0 && trigger != 200) {
            size_t end = strlen (text);
            while (end > 0 && strchr ("\r\n", text [end - 1]))
                text [--end] = 0;
            char *last = strrchr (text, '\n');
            if (last)
                memmove (text, last + 1, strlen (last + 1) + 1);
        }
    }
    xxl_ctl_table_add (table, xxl_ctl_first_line (text, XXL_CTL_CELL_MAX));
}

static int
s_log_list (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    //  The scheduler's default, and its most runs in one page
    const xxl_field_t *field = xxl_command_field (xxl_command_find (cmd->request), "limit");
    int64_t limit = xxl_ctl_args_num (cmd, args, "--limit", field->dflt);
    int64_t offset = xxl_ctl_args_num (cmd, args, "--offset", 0);
    //  Pages of at most its limit, each also cut by the frame limit
    //  (nextOffset), all below the newest id of the first page so that
    //  runs added meanwhile do not shift them
    //  --json: the rows of all pages packed one after the other, then
    //  printed as one {"logs": [...]} (xxl_ctl_print_json)
    msgpack_sbuffer rows;
    msgpack_sbuffer_init (&rows);
    msgpack_packer rows_pk;
    msgpack_packer_init (&rows_pk, &rows, msgpack_sbuffer_write);
    uint32_t row_count = 0;
    ctl_table_t table;
    const char *headers [] = { "ID", "JOB", "TRIGGER TIME", "TRIGGER", "HANDLE",
                               "ADDRESS", "MSG" };
    xxl_ctl_table_init (&table, 7, headers);
    int64_t got = 0, max_id = 0;
    int rc = XXL_CTL_OK;
    while (got < limit) {
        xxl_enc_t *enc = xxl_ctl_request_args (self, cmd->request, cmd, args, NULL);
        if (!enc) {
            rc = XXL_CTL_FAILED;
            break;
        }
        if (max_id > 0)
            xxl_enc_kint (enc, "maxId", max_id);
        int64_t page = limit - got < field->max? limit - got: field->max;
        xxl_enc_kint (enc, "limit", page);
        if (offset)
            xxl_enc_kint (enc, "offset", offset);
        xxl_msg_t *reply = xxl_ctl_call (self);
        const msgpack_object *content = reply? xxl_ctl_content (self, reply): NULL;
        const msgpack_object *logs = content? xxl_ctl_content_array (self, content, "logs"): NULL;
        if (!logs) {
            xxl_msg_destroy (&reply);
            rc = XXL_CTL_FAILED;
            break;
        }
        for (uint32_t i = 0; i < logs->via.array.size; i++) {
            const msgpack_object *log = &logs->via.array.ptr [i];
            if (max_id == 0)
                max_id = xxl_ctl_value_int_or (log, "id", 0);
            if (self->json) {
                if (msgpack_pack_object (&rows_pk, *log)) {
                    rc = xxl_ctl_fail (self, XXL_CTL_FAILED, "out of memory");
                    break;
                }
                row_count++;
            }
            else
            if (log->type == MSGPACK_OBJECT_MAP)
                s_log_row (&table, log);
        }
        int64_t next;
        uint32_t count = logs->via.array.size;
        got += count;
        if (xxl_ctl_value_int (content, "nextOffset", &next) == 0 && next > offset)
            offset = next;
        else {
            offset += count;
            if ((int64_t) count < page)
                got = limit;            //  (a short page: no more rows)
        }
        xxl_msg_destroy (&reply);
    }
    if (self->json && rc == XXL_CTL_OK)
        rc = xxl_ctl_print_json_rows (self, "logs", rows.data, rows.size, row_count);
    msgpack_sbuffer_destroy (&rows);
    if (rc == XXL_CTL_OK && !self->json)
        xxl_ctl_table_print (&table, self->out, "no runs");
    else
        xxl_ctl_table_free (&table);
    return rc;
}

const ctl_cmd_t xxl_ctl_log_list = {
    "log", "list", "[--job ID] [--group ID] [--status success|failure|running]\n"
    "        [--from TIME] [--to TIME] [--limit N] [--offset N]", "list runs, newest first",
    s_log_list_opts, NULL, 0, 0, NULL, s_log_list, "LOG_LIST", NULL
};

const ctl_cmd_t xxl_ctl_log_show = {
    "log", "show", "ID", "show a run", NULL, s_log_pos, 1, 1, NULL,
    xxl_ctl_cmd_show, "LOG_SHOW", NULL
};

static int
s_log_kill (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    int64_t id = args->pos_num [0];
    if (!xxl_ctl_request_args (self, "LOG_KILL", cmd, args, NULL))
        return XXL_CTL_FAILED;
    xxl_msg_t *reply = xxl_ctl_call (self);
    if (!reply)
        return XXL_CTL_FAILED;
    //  The agent's answer may carry no content
    const msgpack_object *content = xxl_reply_content (reply);
    if (self->json) {
        if (content && content->type == MSGPACK_OBJECT_MAP)
            xxl_ctl_print_json (self, content);
        else {
            msgpack_object_kv kv;
            xxl_ctl_value_str (&kv.key, "logId", 5);
            kv.val.type = MSGPACK_OBJECT_POSITIVE_INTEGER;
            kv.val.via.u64 = (uint64_t) id;
            msgpack_object root = { .type = MSGPACK_OBJECT_MAP,
                                    .via.map = { .size = 1, .ptr = &kv } };
            xxl_ctl_print_json (self, &root);
        }
    }
    else {
        const char *text = xxl_reply_msg (reply);
        fprintf (self->out, "log %" PRId64 " killed%s%s\n", id, *text? ": ": "", text);
    }
    xxl_msg_destroy (&reply);
    return XXL_CTL_OK;
}

const ctl_cmd_t xxl_ctl_log_kill = {
    "log", "kill", "ID", "kill a running run", NULL, s_log_pos, 1, 1, NULL, s_log_kill, NULL, NULL
};

static const ctl_opt_t s_log_cat_opts [] = {
    { "-f", "--follow", NULL, "keep reading until the run ends", CTL_BOOL, 0, 0, NULL, NULL },
    XXL_CTL_OPTS_END
};

//  Prints log cat's JSON document: the log's content read, how many lines
//  it holds (its line ends), where it ended in the file and whether the
//  run ended
static int
s_log_cat_json (ctl_t *self, int64_t id, const char *all, size_t size, int64_t lines,
                int64_t next_byte, int is_end)
{
    msgpack_object_kv kv [5];
    msgpack_object root;
    xxl_ctl_value_str (&kv [0].key, "logId", 5);
    kv [0].val.type = MSGPACK_OBJECT_POSITIVE_INTEGER;
    kv [0].val.via.u64 = (uint64_t) id;
    xxl_ctl_value_str (&kv [1].key, "logContent", 10);
    xxl_ctl_value_str (&kv [1].val, all? all: "", size);
    xxl_ctl_value_str (&kv [2].key, "toLineNum", 9);
    kv [2].val.type = MSGPACK_OBJECT_POSITIVE_INTEGER;
    kv [2].val.via.u64 = (uint64_t) lines;
    xxl_ctl_value_str (&kv [3].key, "nextByte", 8);
    kv [3].val.type = MSGPACK_OBJECT_POSITIVE_INTEGER;
    kv [3].val.via.u64 = (uint64_t) next_byte;
    xxl_ctl_value_str (&kv [4].key, "isEnd", 5);
    kv [4].val.type = MSGPACK_OBJECT_BOOLEAN;
    kv [4].val.via.boolean = is_end != 0;
    root.type = MSGPACK_OBJECT_MAP;
    root.via.map.size = 5;
    root.via.map.ptr = kv;
    if (xxl_ctl_print_json (self, &root))
        return xxl_ctl_fail (self, XXL_CTL_FAILED, "out of memory");
    return XXL_CTL_OK;
}

//  Reads the log by byte offset (LOG_CAT's fromByte), writing each page to
//  the output as it comes (--json: joined, then printed whole); -f polls
//  every 500 ms once the pages are empty, until the run ends
static int
s_log_cat (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    int64_t id = args->pos_num [0];
    int follow = xxl_ctl_args_get (cmd, args, "-f") != NULL;
    int64_t from = 0, lines = 0;
    int is_end = 0;
    char *all = NULL;                   //  --json: all pages joined
    size_t size = 0;
    int rc = XXL_CTL_OK;
    while (true) {
        xxl_enc_t *enc = xxl_ctl_request_args (self, "LOG_CAT", cmd, args, NULL);
        if (!enc) {
            rc = XXL_CTL_FAILED;
            break;
        }
        xxl_enc_kint (enc, "fromByte", from);
        xxl_msg_t *reply = xxl_ctl_call (self);
        if (!reply) {
            rc = XXL_CTL_FAILED;
            break;
        }
        const msgpack_object *content = xxl_ctl_content (self, reply);
        const msgpack_object *text = content? xxl_ctl_value_get (content, "logContent"): NULL;
        int64_t next;
        if (content && (xxl_ctl_value_int (content, "nextByte", &next) || next < from
                     || !text || text->type != MSGPACK_OBJECT_STR)) {
            xxl_ctl_fail (self, XXL_CTL_FAILED, "unexpected reply: no nextByte/logContent");
            content = NULL;
        }
        if (!content) {
            xxl_msg_destroy (&reply);
            rc = XXL_CTL_FAILED;
            break;
        }
        const msgpack_object *end = xxl_ctl_value_get (content, "isEnd");
        is_end = end && end->type == MSGPACK_OBJECT_BOOLEAN && end->via.boolean;
        const char *bytes = text->via.str.ptr;
        size_t length = text->via.str.size;
        for (const char *at = bytes;
             length > 0 && (at = memchr (at, '\n', length - (size_t) (at - bytes))); at++)
            lines++;
        if (length > 0 && self->json) {
            char *bigger = (char *) realloc (all, size + length + 1);
            if (!bigger) {
                xxl_msg_destroy (&reply);
                rc = xxl_ctl_fail (self, XXL_CTL_FAILED, "out of memory");
                break;
            }
            all = bigger;
            memcpy (all + size, bytes, length);
            size += length;
            all [size] = 0;
        }
        else
        if (length > 0) {
            fwrite (bytes, 1, length, self->out);
            fflush (self->out);
        }
        xxl_msg_destroy (&reply);
        int fresh = next > from;
        from = next;
        if (is_end || (!fresh && !follow))
            break;
        if (!fresh)
            zclock_sleep (500);         //  (following: the run goes on)
    }
    if (rc == XXL_CTL_OK && self->json)
        rc = s_log_cat_json (self, id, all, size, lines, from, is_end);
    free (all);
    return rc;
}

const ctl_cmd_t xxl_ctl_log_cat = {
    "log", "cat", "ID [-f]", "print a run's log (-f: follow until the run ends)",
    s_log_cat_opts, s_log_pos, 1, 1, NULL, s_log_cat, NULL, NULL
};

static const ctl_opt_t s_log_clear_opts [] = {
    { "--job", NULL, "ID", "only runs of this job", CTL_ID, 0, 0, "jobId", NULL },
    { "--group", NULL, "ID", "only runs of this group's jobs (its id; --keep: of each job)",
      CTL_ID, 0, 0, "jobGroup", NULL },
    { "--before", NULL, "DAYS", "remove runs older than DAYS days",
      CTL_INT, 0, 0, "beforeDays", NULL },
    { "--keep", NULL, "N", "keep only the newest N runs", CTL_INT, 0, 0, "keepLast", NULL },
    { "--all", NULL, NULL, "remove every finished run", CTL_BOOL, 0, 0, "all", NULL },
    XXL_CTL_OPTS_END
};

static int
s_log_clear_check (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    if (xxl_ctl_args_count (cmd, args, "--before", "--keep", "--all", NULL) != 1)
        return xxl_ctl_usage_error (self, cmd,
                                    "give exactly one of --before DAYS, --keep N, --all");
    return 0;
}

static int
s_log_clear (ctl_t *self, const ctl_cmd_t *cmd, ctl_args_t *args)
{
    if (!xxl_ctl_request_args (self, cmd->request, cmd, args, NULL))
        return XXL_CTL_FAILED;
    xxl_msg_t *reply;
    const msgpack_object *content;
    int rc = xxl_ctl_exchange (self, &reply, &content, NULL, CTL_ANY);
    if (rc == XXL_CTL_OK && !self->json)
        fprintf (self->out, "%" PRId64 " run(s) removed\n",
                 xxl_ctl_value_int_or (content, "deleted", 0));
    xxl_msg_destroy (&reply);
    return rc;
}

const ctl_cmd_t xxl_ctl_log_clear = {
    "log", "clear", "[--job ID] [--group ID] (--before DAYS | --keep N | --all)",
    "remove finished runs (never those still waiting or running)", s_log_clear_opts, NULL, 0, 0,
    s_log_clear_check, s_log_clear, "LOG_CLEAR", NULL
};
