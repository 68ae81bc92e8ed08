/*  webhook.c -- the "webhook" alarm kind: an HTTP POST of the alarm JSON.

    Target "webhook:http://host:port/path" (or https://) receives the
    alarm's JSON object as the body of a POST with Content-Type
    application/json, through libcurl.  A 2xx status means delivered; any
    other status fails with "HTTP <code>" and the start of the response
    body; a transport error fails with libcurl's reason.  No redirects
    are followed and only http and https are spoken.  The whole request
    is bounded by scheduler/alarm/webhook_timeout ms (10000 by default).
    Proxies: libcurl's usual environment variables (http_proxy, ...)
    apply, and scheduler/alarm/webhook_proxy overrides them ("" for none
    is not expressible; set no_proxy instead).
*/

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>
#include <xxl/alarm.h>

#define S_TIMEOUT_MS    10000
#define S_BODY_KEEP     200             //  response bytes kept for the reason

typedef struct {
    char body [S_BODY_KEEP + 1];
    size_t len;
} s_response_t;

static void *
s_init (const xxl_alarm_host_t *host, const char **error)
{
    (void) host;
    if (curl_global_init (CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        *error = "curl_global_init failed";
        return NULL;
    }
    static int s_state;
    return &s_state;
}

static void
s_destroy (void *state)
{
    (void) state;
    curl_global_cleanup ();
}

static int
s_check (void *state, const xxl_alarm_host_t *host, const char *target,
         char *err, size_t errlen)
{
    (void) state;
    (void) host;
    size_t scheme = strncmp (target, "http://", 7) == 0? 7
                  : strncmp (target, "https://", 8) == 0? 8: 0;
    if (!scheme) {
        xxl_alarm_error (err, errlen, "a webhook URL starts with http:// or https://");
        return -1;
    }
    if (!target [scheme] || target [scheme] == '/') {
        xxl_alarm_error (err, errlen, "the webhook URL has no host");
        return -1;
    }
    for (const char *c = target; *c; c++)
        if ((unsigned char) *c <= 0x20 || *c == 0x7f) {
            xxl_alarm_error (err, errlen, "the webhook URL contains a space or control character");
            return -1;
        }
    return 0;
}

static size_t
s_on_body (char *data, size_t size, size_t count, void *arg)
{
    s_response_t *response = (s_response_t *) arg;
    size_t len = size * count;
    size_t keep = S_BODY_KEEP - response->len;
    if (keep > len)
        keep = len;
    memcpy (response->body + response->len, data, keep);
    response->len += keep;
    response->body [response->len] = 0;
    return len;
}

static int
s_send (void *state, const xxl_alarm_host_t *host, const xxl_alarm_t *alarm,
        const char *target, char *err, size_t errlen)
{
    if (s_check (state, host, target, err, errlen) != 0)
        return -1;
    long timeout = xxl_alarm_config_long (host, "webhook_timeout", S_TIMEOUT_MS);
    if (timeout <= 0)
        timeout = S_TIMEOUT_MS;
    const char *proxy = xxl_alarm_config (host, "webhook_proxy", NULL);
    CURL *curl = curl_easy_init ();
    struct curl_slist *headers = NULL;
    struct curl_slist *more = curl_slist_append (headers, "Content-Type: application/json");
    if (more)
        headers = more;
    more = curl_slist_append (headers, "Expect:");      //  no 100-continue round trip
    if (more)
        headers = more;
    if (!curl || !headers) {
        curl_slist_free_all (headers);
        if (curl)
            curl_easy_cleanup (curl);
        xxl_alarm_error (err, errlen, "out of memory");
        return -1;
    }
    s_response_t response = { "", 0 };
    char curl_error [CURL_ERROR_SIZE] = "";
    curl_easy_setopt (curl, CURLOPT_URL, target);
    curl_easy_setopt (curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt (curl, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt (curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt (curl, CURLOPT_TIMEOUT_MS, timeout);
    curl_easy_setopt (curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt (curl, CURLOPT_POST, 1L);
    curl_easy_setopt (curl, CURLOPT_POSTFIELDS, alarm->json);
    curl_easy_setopt (curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) strlen (alarm->json));
    curl_easy_setopt (curl, CURLOPT_USERAGENT, "xxl-alarm/1.0");
    curl_easy_setopt (curl, CURLOPT_WRITEFUNCTION, s_on_body);
    curl_easy_setopt (curl, CURLOPT_WRITEDATA, &response);
    curl_easy_setopt (curl, CURLOPT_ERRORBUFFER, curl_error);
    if (proxy)
        curl_easy_setopt (curl, CURLOPT_PROXY, proxy);
    CURLcode code = curl_easy_perform (curl);
    long status = 0;
    curl_easy_getinfo (curl, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup (curl);
    curl_slist_free_all (headers);
    if (code != CURLE_OK) {
        xxl_alarm_error (err, errlen, "%s", curl_error [0]? curl_error: curl_easy_strerror (code));
        return -1;
    }
    if (status < 200 || status > 299) {
        for (size_t i = 0; i < response.len; i++)
            if ((unsigned char) response.body [i] < 0x20)
                response.body [i] = ' ';
        xxl_alarm_error (err, errlen, "HTTP %ld%s%s", status,
                         response.len? ": ": "", response.body);
        return -1;
    }
    return 0;
}

static const xxl_alarm_kind_t s_kinds [] = {
    { "webhook", s_send, s_check, 0 },
    { NULL, NULL, NULL, 0 }
};

XXL_ALARM_PLUGIN ("webhook", "1.0", s_init, s_destroy, s_kinds)
