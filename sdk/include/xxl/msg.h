/*  xxl/msg.h -- the wire codec: one msgpack map per ZeroMQ frame.

    Every xxl message is a msgpack map with `v` (protocol version), `t`
    (type) and `id` (request id) followed by the type's fields; a reply
    echoes `id` and carries `code`, `msg` and `content`.  This codec is
    strict: xxl_msg_decode refuses a frame over the size limit, malformed
    or trailing bytes, nesting deeper than XXL_MSG_MAX_DEPTH, a container
    declaring more items than the frame could hold, strings or keys over
    their limits, and a root that is not a map with valid v/t/id.  Typed
    getters check each field and latch the first problem, so a handler
    reads all its fields, then checks xxl_msg_error() once and answers
    with that reason.

    xxl_enc_t builds messages; container sizes are patched when a map or
    array is closed, so callers need not count ahead.
*/

#ifndef XXL_MSG_H_INCLUDED
#define XXL_MSG_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include <msgpack.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XXL_PROTOCOL_VERSION    1
#define XXL_MSG_MAX_FRAME       (4 * 1024 * 1024)   //  bytes in one frame
#define XXL_MSG_MAX_DEPTH       8                   //  container nesting
#define XXL_MSG_MAX_KEY         64                  //  bytes in a map key
#define XXL_MSG_MAX_STR         XXL_MSG_MAX_FRAME   //  bytes in any string (each
                                                    //  field's getter sets its own)
#define XXL_MSG_MAX_TYPE        32                  //  bytes in `t`
#define XXL_MSG_MAX_NAME        255                 //  names: handler, app, address
#define XXL_RUN_BATCH_MAX       1000                //  TriggerParams in one batch RUN

//  Reply codes on the wire (run results use 200/500/502 too)
#define XXL_OK              200
#define XXL_BAD_REQUEST     400
#define XXL_UNAUTHORIZED    401
#define XXL_FORBIDDEN       403
#define XXL_NOT_FOUND       404
#define XXL_CONFLICT        409
#define XXL_BUSY            429     //  an agent refused a RUN for back-pressure ("busy: ...")
#define XXL_FAILURE         500
#define XXL_TIMEOUT         502
#define XXL_UNAVAILABLE     503
#define XXL_NO_ANSWER       504
//  An agent's 500 to a KILL when nothing of the job runs or waits there
#define XXL_KILL_NOT_RUNNING    "job thread is not running"
//  Bytes of a KILL's `reason` (the killed runs' handleMsg)
#define XXL_KILL_REASON_MAX     1024

typedef struct _xxl_msg_t xxl_msg_t;

//  Decodes and validates one frame (copied: the caller may free it at
//  once).  Returns a new message, or NULL with a one-line reason in err
//  ("malformed message: …" for what the strict scan refuses).
//
//  On refusal, *id_out (if not NULL) still receives the frame's id when
//  one was readable, so the caller can answer with an error reply; ids
//  start at 1, and *id_out is 0 when none was readable.  For a frame the
//  strict scan refuses, the id is read by a lenient walk of the root map:
//  its pairs are read in order (the root's declared count is only an upper
//  bound) until the walk stops, and the value of the first key "id" (str
//  or bin) is taken if it is a positive integer (any integer encoding).
//  No id can be read, exactly, when:
//    - the frame is empty, or its first byte does not start a map (fixmap,
//      map 16, map 32), e.g. an array or a scalar at the root;
//    - the first key "id" holds anything but an integer >= 1 (nil, 0, a
//      negative number, a float, a string, a container);
//    - no key "id" comes before the point where the walk stops, which is
//      the first of: the byte 0xc1 (as a key, a value, or inside one); an
//      object cut off by the end of the frame (truncation; for a frame
//      over XXL_MSG_MAX_FRAME, by the end of its first XXL_MSG_MAX_FRAME
//      bytes); a map or array inside the root whose declared count of
//      items (2 per map pair) is larger than the bytes left after its
//      header.
//  Everything else the strict scan refuses leaves an id before or after
//  the fault readable: trailing bytes after the root map, ext values
//  (skipped by their length), non-string keys and keys over
//  XXL_MSG_MAX_KEY (skipped), nesting deeper than XXL_MSG_MAX_DEPTH (the
//  walk does not recurse), more than 262,144 objects, a root map declaring
//  more pairs than the frame holds.  So a sender puts `id` first (before
//  any value that could be malformed) to get an answer to any map frame.
//  The walk costs at most one pass over the frame, whatever its content.
xxl_msg_t *xxl_msg_decode (const void *data, size_t size, uint64_t *id_out,
                           char *err, size_t errlen);
void xxl_msg_destroy (xxl_msg_t **self_p);

const char *xxl_msg_type (xxl_msg_t *self);
uint64_t xxl_msg_id (xxl_msg_t *self);
//  The root map (for nested getters and generic conversion)
const msgpack_object *xxl_msg_root (xxl_msg_t *self);

//  Typed getters.  `map` is a map object inside this message, or NULL for
//  the root.  A missing optional field yields the default; a missing
//  required field, a wrong type, a string over maxlen or holding a NUL
//  byte, or an integer out of [min, max] latches an error naming the
//  field and returns the default.  Returned strings are NUL-terminated and
//  owned by the message.  `null` on the wire counts as missing.
//  xxl_msg_str takes str and bin values alike and refuses (latching
//  "field 'X' is not valid UTF-8") any that is not valid UTF-8 as RFC 3629
//  defines it: no overlong forms, no surrogates (U+D800..U+DFFF), nothing
//  over U+10FFFF, no truncated or stray continuation bytes.  The other
//  getters and xxl_msg_to_json do not check UTF-8: a string read through
//  xxl_msg_get is the sender's bytes.
const char *xxl_msg_str (xxl_msg_t *self, const msgpack_object *map,
                         const char *key, int required, size_t maxlen,
                         const char *dflt);
int64_t xxl_msg_int (xxl_msg_t *self, const msgpack_object *map,
                     const char *key, int required, int64_t min, int64_t max,
                     int64_t dflt);
//  An optional integer field whose absent, ill-typed or out-of-range value
//  means "not known": dflt then, and no error latched (a latched one
//  stays).
int64_t xxl_msg_int_lax (xxl_msg_t *self, const msgpack_object *map,
                         const char *key, int64_t min, int64_t max, int64_t dflt);
//  A number field (integer or float) within [min, max].
double xxl_msg_double (xxl_msg_t *self, const msgpack_object *map,
                       const char *key, int required, double min, double max,
                       double dflt);
int xxl_msg_bool (xxl_msg_t *self, const msgpack_object *map,
                  const char *key, int required, int dflt);
//  An array field: returns its items and count (NULL, 0 when missing).
const msgpack_object *xxl_msg_array (xxl_msg_t *self, const msgpack_object *map,
                                     const char *key, int required,
                                     size_t max_items, size_t *count);
//  A map field, or NULL when missing.
const msgpack_object *xxl_msg_map (xxl_msg_t *self, const msgpack_object *map,
                                   const char *key, int required);
//  Raw lookup: the value object or NULL.
const msgpack_object *xxl_msg_get (const msgpack_object *map, const char *key);
//  Latches an error (first one wins); returns -1.
int xxl_msg_fail (xxl_msg_t *self, const char *format, ...)
    __attribute__ ((format (printf, 2, 3)));
//  The first latched error, or NULL.
const char *xxl_msg_error (xxl_msg_t *self);
//  Forgets the latched error, so that the items of a batch are judged one
//  by one.
void xxl_msg_clear_error (xxl_msg_t *self);

//  Writes obj as JSON to a new string (caller frees).  Binary values are
//  written as base64 strings, non-string keys as their JSON text.
char *xxl_msg_to_json (const msgpack_object *obj, int pretty);

//  Copies a peer's text (an app name, an address) into out for a log
//  line, so that it can neither end the line nor forge another: a
//  backslash and the C0 controls and DEL become \\, \n, \r, \t or \xNN;
//  the C1 controls (U+0080..U+009F, U+0085 NEXT LINE among them) and the
//  line and paragraph separators U+2028 and U+2029 become \uNNNN; each
//  byte of an invalid UTF-8 sequence becomes \xNN.  Everything else is
//  copied as it is, so out is valid UTF-8.  A text too long for out is
//  cut between characters (never inside one or inside an escape); NULL
//  is written "(null)".  Returns out.
const char *xxl_printable (const char *text, char *out, size_t outlen);
//  The same for the n bytes at text (NUL bytes among them become \x00)
const char *xxl_printable_n (const char *text, size_t n, char *out, size_t outlen);

//  text made valid UTF-8 as the encoder makes strings (each invalid
//  sequence's maximal subpart becomes U+FFFD): NULL when text is valid
//  already (or on no memory), else a new string the caller frees.
char *xxl_utf8_repair (const char *text);

//  --------------------------------------------------------------------
//  Encoder

typedef struct _xxl_enc_t xxl_enc_t;

xxl_enc_t *xxl_enc_new (void);
void xxl_enc_destroy (xxl_enc_t **self_p);
//  Empties the encoder for reuse (keeps its buffer).
void xxl_enc_reset (xxl_enc_t *self);
//  Starts a message: opens the root map and writes v, t and id.
void xxl_enc_request (xxl_enc_t *self, const char *type, uint64_t id);
//  Starts a reply: opens the root map and writes v, t "REPLY", id, code, msg
//  (msg may be NULL).  The caller adds "content" (or nothing) and closes.
void xxl_enc_reply (xxl_enc_t *self, uint64_t id, int code, const char *msg);
void xxl_enc_map_begin (xxl_enc_t *self);
void xxl_enc_map_end (xxl_enc_t *self);
void xxl_enc_array_begin (xxl_enc_t *self);
void xxl_enc_array_end (xxl_enc_t *self);
//  A key is written as given (keys are the program's ASCII names).
void xxl_enc_key (xxl_enc_t *self, const char *key);
//  Strings are always written as valid UTF-8: each invalid sequence
//  (its maximal subpart, as Unicode recommends) is replaced with U+FFFD,
//  so script output or old stored bytes never reach the wire invalid.
//  Valid input is copied as it is (ASCII on a fast path); invalid input
//  may grow up to 3 times (one U+FFFD per byte): callers bound what they
//  send well below the frame (a LOG page is at most 64 KiB).
void xxl_enc_str (xxl_enc_t *self, const char *value);     //  NULL → nil
void xxl_enc_strn (xxl_enc_t *self, const char *value, size_t len);
void xxl_enc_int (xxl_enc_t *self, int64_t value);
void xxl_enc_bool (xxl_enc_t *self, int value);
void xxl_enc_double (xxl_enc_t *self, double value);
void xxl_enc_nil (xxl_enc_t *self);
//  Copies a decoded object (e.g. to forward a reply's content).  Its
//  strings are made valid UTF-8 as by xxl_enc_strn (a bin stays a bin):
//  the decoder only checks the fields a getter reads, so a forwarded
//  object may hold the sender's invalid bytes.  In map keys each invalid
//  sequence becomes '?' instead, so that a key never grows (U+FFFD takes
//  3 bytes) past XXL_MSG_MAX_KEY and the copy still decodes.
void xxl_enc_object (xxl_enc_t *self, const msgpack_object *obj);
//  Appends len bytes already encoded as msgpack (whole values, or the
//  start of one whose rest follows) and counts them as `items` items of
//  the open container.  The caller vouches for the bytes, UTF-8 included:
//  they are not checked (the scheduler appends what an xxl_enc_t wrote).
void xxl_enc_raw (xxl_enc_t *self, const void *data, size_t len, uint32_t items);
//  Bytes written so far.
size_t xxl_enc_size (xxl_enc_t *self);
//  Overwrites len bytes at offset with data (a value of the same encoded
//  size, e.g. an int64 in its 9-byte form); -1 when out of range.
int xxl_enc_patch (xxl_enc_t *self, size_t offset, const void *data, size_t len);
//  Key + value shorthands
void xxl_enc_kstr (xxl_enc_t *self, const char *key, const char *value);
void xxl_enc_kint (xxl_enc_t *self, const char *key, int64_t value);
void xxl_enc_kbool (xxl_enc_t *self, const char *key, int value);
//  Closes every open container and returns the bytes (owned by self).
const void *xxl_enc_finish (xxl_enc_t *self, size_t *size);
//  Closes every open container and hands over the bytes: the caller
//  frees them with free().  self is then empty, as after xxl_enc_reset.
//  NULL (self unchanged but finished) when nothing was written.
void *xxl_enc_take (xxl_enc_t *self, size_t *size);

#ifdef __cplusplus
}
#endif

#endif
