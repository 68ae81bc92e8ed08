/*  xxl_http_xxladmin_form.c -- XXL-JOB admin's request bodies into a
    form (xxl_http_xxladmin.h): a console form (urlencoded) or the job
    OpenAPI's JSON object, each into a JSON object of text values by
    field name, refused with the reason when malformed or over its limits.
    The fields, endpoints and answers: xxl_http_xxladmin_map.c.
*/

#include "xxl_http_xxladmin.h"

#include <assert.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
xxl_xxladmin_json_form (json_t *form, const char *text, size_t size, char *why, size_t whylen)
{
    assert (json_is_object (form) && text);
    json_error_t error;
    //  (jansson refuses \u0000 and text that is not UTF-8 unless told)
    json_t *body = json_loadb (text, size, JSON_REJECT_DUPLICATES, &error);
    if (!body) {
        snprintf (why, whylen, "the body is not JSON: %s (line %d)", error.text, error.line);
        return -1;
    }
    if (!json_is_object (body)) {
        json_decref (body);
        snprintf (why, whylen, "the body must be a JSON object, as XXL-JOB's OpenAPI takes");
        return -1;
    }
    if (json_object_size (body) > XXL_XXLADMIN_MAX_FIELDS) {
        json_decref (body);
        snprintf (why, whylen, "the body has more than %d fields", XXL_XXLADMIN_MAX_FIELDS);
        return -1;
    }
    const char *key;
    json_t *value;
    int rc = 0;
    json_object_foreach (body, key, value) {
        char number [32];
        const char *string = NULL;
        if (strlen (key) > XXL_XXLADMIN_MAX_KEY) {
            snprintf (why, whylen, "the body has a field name over %d bytes",
                      XXL_XXLADMIN_MAX_KEY);
            rc = -1;
        }
        else
        if (json_is_null (value))
            continue;                   //  (Gson leaves the field unset)
        else
        if (json_is_string (value))
            string = json_string_value (value);
        else
        if (json_is_integer (value)) {
            snprintf (number, sizeof number, "%" JSON_INTEGER_FORMAT, json_integer_value (value));
            string = number;
        }
        else {
            snprintf (why, whylen, "%.64s must be a string or an integer", key);
            rc = -1;
        }
        if (rc)
            break;
        json_object_set_new (form, key, json_string (string));
    }
    json_decref (body);
    return rc;
}


static int
s_hex (char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = (char) tolower ((unsigned char) c);
    return c >= 'a' && c <= 'f'? c - 'a' + 10: -1;
}

//  Decodes text [0..size) into a new string; NULL when an escape is bad
//  (*nul set when it is a %00)
static char *
s_decode (const char *text, size_t size, bool *nul)
{
    char *out = (char *) malloc (size + 1);
    if (!out)
        return NULL;
    size_t used = 0;
    for (size_t i = 0; i < size; i++) {
        if (text [i] == '+')
            out [used++] = ' ';
        else
        if (text [i] == '%') {
            int high = i + 2 < size? s_hex (text [i + 1]): -1;
            int low = high >= 0? s_hex (text [i + 2]): -1;
            if (high < 0 || low < 0 || (high == 0 && low == 0)) {
                *nul = high == 0 && low == 0;
                free (out);
                return NULL;
            }
            out [used++] = (char) (high * 16 + low);
            i += 2;
        }
        else
        if (text [i] == 0) {
            *nul = true;
            free (out);
            return NULL;
        }
        else
            out [used++] = text [i];
    }
    out [used] = 0;
    return out;
}

//  Whether text is UTF-8 (jansson judges it as it judges JSON's strings)
static bool
s_utf8 (const char *text)
{
    json_t *string = json_string (text);
    json_decref (string);
    return string != NULL;
}

int
xxl_xxladmin_form (json_t *form, const char *text, size_t size, char *why, size_t whylen)
{
    assert (json_is_object (form));
    size_t count = json_object_size (form);
    const char *end = text + size;
    for (const char *p = text; p < end; ) {
        const char *amp = memchr (p, '&', (size_t) (end - p));
        const char *stop = amp? amp: end;
        if (stop > p) {
            const char *eq = memchr (p, '=', (size_t) (stop - p));
            const char *key_end = eq? eq: stop;
            bool nul = false;
            char *key = s_decode (p, (size_t) (key_end - p), &nul);
            char *value = key && eq? s_decode (eq + 1, (size_t) (stop - eq - 1), &nul)
                                   : key? strdup (""): NULL;
            int rc = 0;
            if (!key || !value)
                snprintf (why, whylen, nul? "the form holds a NUL (%%00)"
                                          : "the form is malformed: a '%%' not followed by"
                                            " two hex digits"), rc = -1;
            else
            if (!*key)
                snprintf (why, whylen, "the form is malformed: a field with no name"), rc = -1;
            else
            if (strlen (key) > XXL_XXLADMIN_MAX_KEY)
                snprintf (why, whylen, "the form has a field name over %d bytes",
                          XXL_XXLADMIN_MAX_KEY), rc = -1;
            else
            if (!s_utf8 (key))
                snprintf (why, whylen, "the form has a field name that is not UTF-8"), rc = -1;
            else
            if (!s_utf8 (value))
                snprintf (why, whylen, "the form's %s is not UTF-8", key), rc = -1;
            else
            if (json_object_get (form, key))
                snprintf (why, whylen, "the form gives %s twice", key), rc = -1;
            else
            if (++count > XXL_XXLADMIN_MAX_FIELDS)
                snprintf (why, whylen, "the form has more than %d fields",
                          XXL_XXLADMIN_MAX_FIELDS), rc = -1;
            else
                json_object_set_new (form, key, json_string (value));
            free (key);
            free (value);
            if (rc)
                return rc;
        }
        p = amp? amp + 1: end;
    }
    return 0;
}

