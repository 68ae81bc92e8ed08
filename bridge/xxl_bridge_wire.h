/*  xxl_bridge_wire.h -- the XXL-JOB HTTP wire, as the executors speak it.

    JSON shapes only (jansson; the common flat shapes, and the bodies the
    bridge sends, by hand): no sockets, no state.  What the executors
    send the admin (registry and callback bodies) is parsed into C values;
    what the bridge sends them (a TriggerParam from a scheduler's RUN, the
    bodies of kill, log, beat, idleBeat) is built from C values; their
    answers are read whichever way they come: 2.x `{code,msg,content}`,
    3.x `{code,msg,data}`, a code given as a string, no JSON at all.
    Called by xxl_bridge_admin.c and xxl_bridge.c; calls nothing of the
    bridge.
*/

#ifndef XXL_BRIDGE_WIRE_H_INCLUDED
#define XXL_BRIDGE_WIRE_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <jansson.h>
#include <msgpack.h>

#ifdef __cplusplus
extern "C" {
#endif

//  Longest registryKey / registryValue taken (the scheduler's limit)
#define XXL_WIRE_NAME_MAX   255
//  Most items of one callback batch
#define XXL_WIRE_BATCH_MAX  10000

//  A registry body: {registryGroup, registryKey, registryValue}
typedef struct {
    char key [XXL_WIRE_NAME_MAX + 1];       //  the app
    char value [XXL_WIRE_NAME_MAX + 1];     //  the executor's URL
} xxl_wire_registry_t;

//  One item of a callback body
typedef struct {
    int64_t log_id, log_date_time;
    int code;
    char *msg;                              //  malloc'd, may be NULL
} xxl_wire_callback_t;

//  Parses a registry body (len bytes, not NUL-terminated): 0, or -1 with
//  why.  registryGroup may be absent or "EXECUTOR"; key and value must be
//  non-empty strings of at most XXL_WIRE_NAME_MAX bytes without control
//  characters.
int xxl_wire_registry_parse (const char *body, size_t len, xxl_wire_registry_t *out,
                             char *why, size_t whylen);

//  Parses a callback body: a JSON array of items {logId, logDateTim (or
//  logDateTime), handleCode, handleMsg} (2.3+), or of the 2.0-2.2 form
//  {logId, logDateTim, executeResult: {code, msg}}.  Returns the number of
//  items with *items a malloc'd array (xxl_wire_callbacks_free), or -1
//  with why (nothing allocated).  An item without a positive logId or an
//  integer code makes the whole batch -1.
int xxl_wire_callback_parse (const char *body, size_t len, xxl_wire_callback_t **items,
                             char *why, size_t whylen);
void xxl_wire_callbacks_free (xxl_wire_callback_t *items, size_t count);

//  An executor's answer, read: code (500 when none could be read), msg
//  (malloc'd or NULL), content (the 2.x `content` or 3.x `data`, a new
//  reference or NULL)
typedef struct {
    int code;
    char *msg;
    json_t *content;
} xxl_wire_answer_t;

//  Reads an executor's answer to a call: status is the HTTP status (0
//  when no answer came: why then says what happened).  Anything that is
//  not HTTP 200 with a JSON object holding an integer (or numeric string)
//  code becomes code 500 with a msg that says what came.
void xxl_wire_answer_read (int status, const char *body, size_t len, const char *why,
                           xxl_wire_answer_t *out);
void xxl_wire_answer_free (xxl_wire_answer_t *answer);

//  The TriggerParam body of `run` from a RUN's msgpack map: its fields of
//  the TriggerParam (docs/protocol.md), copied when present with the
//  right type; anything else (expireTime, accessToken, ...) left out.
//  Strings are escaped as JSON wants; each byte of an invalid UTF-8
//  sequence in one becomes U+FFFD.  Malloc'd JSON text.
char *xxl_wire_trigger (const msgpack_object *map);

//  The admin's answers: {"code":200,"msg":null} or {"code":500,"msg":msg}
//  (malloc'd strings)
char *xxl_wire_ok (void);
char *xxl_wire_fail (int code, const char *msg);

#ifdef __cplusplus
}
#endif

#endif
