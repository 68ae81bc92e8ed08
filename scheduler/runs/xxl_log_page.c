/*  xxl_log_page.c -- the agent's LOG page checked and made the client's
    LOG_CAT answer (docs/protocol.md, Log pages): by line or by byte
    offset.  An engine fragment called from xxl_agents.c when a LOG reply
    comes; it calls nothing of the engine but its encoder.
*/

#include "xxl_engine.h"

//  The most bytes of logContent a LOG page carries (docs/protocol.md, Log
//  pages): by line 64 KiB of the log file, by byte (nextByte - fromByte)
//  XXL_LOG_BYTES_MAX, each byte of it that is not UTF-8 sent as U+FFFD (3
//  bytes); well within the 4 MiB frame
#define XXL_LOG_PAGE_MAX (3 * 64 * 1024)
#define XXL_LOG_BYTES_MAX (1024 * 1024)

//  Checks a LOG page's first keys: by line (from_byte -1) fromLineNum and
//  toLineNum, by byte fromByte (the one asked) and nextByte; writes the
//  reason into why when they are not a page's
static void
s_log_page_check (const msgpack_object *content, int64_t from_byte, char *why, size_t whylen)
{
    const msgpack_object *from = xxl_msg_get (content, from_byte < 0? "fromLineNum": "fromByte");
    const msgpack_object *to = xxl_msg_get (content, from_byte < 0? "toLineNum": "nextByte");
    bool from_ok = from && from->type == MSGPACK_OBJECT_POSITIVE_INTEGER;
    bool to_ok = to && to->type == MSGPACK_OBJECT_POSITIVE_INTEGER;
    if (from_byte < 0 && (!from_ok || from->via.u64 < 1 || from->via.u64 > INT32_MAX))
        snprintf (why, whylen, "fromLineNum is not an integer 1-2147483647");
    else
    if (from_byte < 0 && (!to_ok || to->via.u64 > INT32_MAX || to->via.u64 + 1 < from->via.u64))
        snprintf (why, whylen, "toLineNum is not an integer from fromLineNum - 1 to 2147483647");
    else
    if (from_byte >= 0 && (!from_ok || from->via.u64 != (uint64_t) from_byte))
        snprintf (why, whylen, "fromByte is not the %" PRId64 " asked%s", from_byte,
                  xxl_msg_get (content, "toLineNum")
                  ? " (a page by line: an agent that does not know fromByte)": "");
    else
    if (from_byte >= 0 && (!to_ok || to->via.u64 < from->via.u64
                           || to->via.u64 - from->via.u64 > XXL_LOG_BYTES_MAX))
        snprintf (why, whylen, "nextByte is not an integer from fromByte to fromByte + %d",
                  XXL_LOG_BYTES_MAX);
}

//  (xxl_runs.h says what it writes)
int
engine_log_page_encode (server_t *self, uint64_t client_id, int code, const char *text,
                        xxl_msg_t *msg, int64_t from_byte, char *why, size_t whylen)
{
    if (code != XXL_OK) {
        xxl_enc_reply (self->enc, client_id, code, text);
        return 0;
    }
    const msgpack_object *content = xxl_msg_get (xxl_msg_root (msg), "content");
    if (!content || content->type != MSGPACK_OBJECT_MAP) {
        snprintf (why, whylen, "its content is %s", content? "not a map": "missing");
        return -1;
    }
    const msgpack_object *body = xxl_msg_get (content, "logContent");
    const msgpack_object *end = xxl_msg_get (content, "isEnd");
    why [0] = 0;
    s_log_page_check (content, from_byte, why, whylen);
    if (!*why
    &&  (!body || (body->type != MSGPACK_OBJECT_STR && body->type != MSGPACK_OBJECT_BIN)))
        snprintf (why, whylen, "logContent is not a string");
    else
    if (!*why && (!end || end->type != MSGPACK_OBJECT_BOOLEAN))
        snprintf (why, whylen, "isEnd is not a boolean");
    if (*why)
        return -1;
    //  (str and bin hold their bytes alike)
    const char *bytes = body->type == MSGPACK_OBJECT_STR? body->via.str.ptr: body->via.bin.ptr;
    size_t size = body->type == MSGPACK_OBJECT_STR? body->via.str.size: body->via.bin.size;
    if (memchr (bytes, 0, size)) {
        snprintf (why, whylen, "logContent holds a NUL byte");
        return -1;
    }
    char *page = (char *) malloc (size + 1);
    assert (page);
    memcpy (page, bytes, size);
    page [size] = 0;
    char *repaired = xxl_utf8_repair (page);
    if (repaired) {
        free (page);
        page = repaired;
    }
    size_t length = strlen (page);
    if (from_byte >= 0 && length > 3 * XXL_LOG_BYTES_MAX) {
        snprintf (why, whylen, "logContent is over %d bytes", 3 * XXL_LOG_BYTES_MAX);
        free (page);
        return -1;
    }
    if (from_byte < 0 && length > XXL_LOG_PAGE_MAX) {
        length = XXL_LOG_PAGE_MAX;
        while (length > 0 && ((unsigned char) page [length] & 0xc0) == 0x80)
            length--;
    }
    const char *from_key = from_byte < 0? "fromLineNum": "fromByte";
    const char *to_key = from_byte < 0? "toLineNum": "nextByte";
    xxl_enc_reply (self->enc, client_id, code, text);
    xxl_enc_key (self->enc, "content");
    xxl_enc_map_begin (self->enc);
    xxl_enc_kint (self->enc, from_key, (int64_t) xxl_msg_get (content, from_key)->via.u64);
    xxl_enc_kint (self->enc, to_key, (int64_t) xxl_msg_get (content, to_key)->via.u64);
    xxl_enc_key (self->enc, "logContent");
    xxl_enc_strn (self->enc, page, length);
    xxl_enc_kbool (self->enc, "isEnd", end->via.boolean);
    xxl_enc_map_end (self->enc);
    free (page);
    return 0;
}
