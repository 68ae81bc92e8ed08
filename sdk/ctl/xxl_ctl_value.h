/*  xxl_ctl_value.h -- reading msgpack reply objects in xxl-ctl.

    Replies are never trusted: every reader checks the type it expects
    and answers "missing" (NULL, -1, the default) instead of failing.
    Maps are searched by key; a nil value counts as missing.  Texts
    returned as char * are new strings the caller frees; they are NULL
    only when memory runs out.
*/

#ifndef XXL_CTL_VALUE_H_INCLUDED
#define XXL_CTL_VALUE_H_INCLUDED

#include "xxl/msg.h"

#include <stddef.h>
#include <stdint.h>

//  A copy of size bytes of text and a terminating NUL
char *xxl_ctl_strndup (const char *text, size_t size);

//  Makes obj a string object pointing at text (not copied)
void xxl_ctl_value_str (msgpack_object *obj, const char *text, size_t size);

//  Packs text (NUL-ended) as a msgpack string; 0, or -1 when out of memory
int xxl_ctl_pack_str (msgpack_packer *pk, const char *text);

//  map [key], or NULL when map is no map, the key is missing or nil
const msgpack_object *xxl_ctl_value_get (const msgpack_object *map, const char *key);

//  0 and *value when map [key] is an integer that fits int64, else -1
int xxl_ctl_value_int (const msgpack_object *map, const char *key, int64_t *value);

//  map [key] as an integer, or dflt
int64_t xxl_ctl_value_int_or (const msgpack_object *map, const char *key, int64_t dflt);

//  A scalar as new text: strings as they are, numbers in decimal, arrays
//  of scalars comma-joined, anything else as JSON; "" when obj is NULL
char *xxl_ctl_value_text (const msgpack_object *obj);

//  map [key] as new text (see xxl_ctl_value_text)
char *xxl_ctl_value_text_of (const msgpack_object *map, const char *key);

#endif
