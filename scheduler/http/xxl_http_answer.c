/*  xxl_http_answer.c -- the HTTP server's answers (xxl_http_int.h): a
    JSON body, or {"error": text} (made UTF-8), with its status.  Calls
    no other file of the server; runs on whichever connection thread
    makes the answer.
*/

#include "xxl_http_int.h"
#include "xxl/msg.h"

void
xxl_http_answer_json (answer_t *answer, int status, json_t *value)
{
    assert (answer);
    assert (status >= 100 && status <= 599);
    answer->status = status;
    answer->body = json_dumps (value, JSON_COMPACT);
    answer->size = answer->body? strlen (answer->body): 0;
    answer->type = "application/json";
    json_decref (value);
}

void
xxl_http_error (answer_t *answer, int status, const char *text)
{
    //  (a text quoting the caller's bytes may not be UTF-8: JSON must be)
    char *fixed = text? xxl_utf8_repair (text): NULL;
    xxl_http_answer_json (answer, status,
                          json_pack ("{s:s}", "error", fixed? fixed: text? text: ""));
    free (fixed);
}

void
xxl_http_errorf (answer_t *answer, int status, const char *format, ...)
{
    char text [512];
    va_list args;
    va_start (args, format);
    vsnprintf (text, sizeof text, format, args);
    va_end (args);
    xxl_http_error (answer, status, text);
}
