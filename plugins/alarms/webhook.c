/*  webhook.c -- the "webhook" alarm kind: an HTTP POST of the alarm JSON.

    Target "webhook:http://host:port/path" (or https://) receives the
    alarm's JSON object as the body of a POST with Content-Type
    application/json, through libcurl.  A 2xx status means delivered; any
    other status fails with "HTTP <code>" and nothing else: the response
    body is never read into the reason, so a target cannot put text of
    its own into a run's handleMsg.  A transport error fails with
    libcurl's reason (control characters as spaces, at most 200 bytes).
    No redirects are followed and only http and https are spoken.  The
    whole request is bounded by scheduler/alarm/webhook_timeout ms (10000
    by default).  Proxies: libcurl's usual environment variables
    (http_proxy, ...) apply, and scheduler/alarm/webhook_proxy overrides
    them ("" for none is not expressible; set no_proxy instead).  Through
    a proxy, the address judged (below) is the proxy's: the proxy resolves
    the target, and keeping it off metadata addresses is then the proxy's.

    Allow-list: a target is accepted only when it lies within an entry of
    scheduler/alarm/webhook_allow, a list of URL prefixes separated by
    commas or spaces ("https://hooks.example.com/, http://10.0.0.7:8080/xxl/").
    Unset or empty, no target is: webhook alarms are off, and init logs
    that once.  An entry is an http(s) URL with a host, an optional port
    and an optional path (none means "/"), without user, query or
    fragment; an invalid entry is logged at init and never matches.  A
    target lies within an entry when both, as libcurl parses them (the
    parse the request then uses), have the same scheme and host (both
    compared case-insensitively), the same port (80/443 when not given)
    and IPv6 zone, and the target's path -- dot segments removed, as
    libcurl sends it -- starts with the entry's path (case-sensitively:
    end an entry's path with '/' to allow one folder).  Whatever the
    list, a target is refused when it has a user name or password (an
    '@' before the host), or a path holding a backslash or a
    percent-encoded '.', '/' or '\' (servers decode those differently).
    The check runs when a job is saved and again before every send, so a
    list narrowed by a restart holds for jobs saved before it.

    Addresses: the connection itself is judged too, in curl's socket
    opener, on the very address connected -- after resolution, so a name
    that resolves (or rebinds) to a refused address is refused.  Refused
    are link-local and cloud metadata addresses (169.254.0.0/16,
    100.100.100.200, fe80::/10, fd00:ec2::254, and their IPv4-mapped
    IPv6 forms) unless an entry of the list names that address: its host
    is that literal address (http://169.254.169.254/ names 169.254.169.254,
    also for a target whose name resolves there).  Once one address of a
    send is refused, no socket is opened for it (curl's other addresses
    for the host included): nothing is sent, and the send fails "refused:
    ...", naming the host, the address and why.
*/

#define _GNU_SOURCE                     //  strcasestr
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <curl/curl.h>
#include <xxl/alarm.h>

#define S_TIMEOUT_MS    10000
#define S_ENTRY_MAX     2048            //  longest allow-list entry
#define S_REASON_MAX    200             //  bytes of libcurl's reason kept
#define S_SEPARATORS    ", \t\r\n"      //  between allow-list entries
#define S_NOT_ALLOWED   "webhook target not in scheduler/alarm/webhook_allow"
#define S_REFUSAL_MAX   400             //  bytes of a refusal's reason

//  Where a URL sends a request, as libcurl parses it
typedef struct {
    CURLU *handle;
    char *scheme, *host, *zone, *port, *path;
} s_url_t;

static void
s_url_free (s_url_t *url)
{
    curl_free (url->scheme);
    curl_free (url->host);
    curl_free (url->zone);
    curl_free (url->port);
    curl_free (url->path);
    if (url->handle)
        curl_url_cleanup (url->handle);
    memset (url, 0, sizeof *url);
}

//  1 when part of url is set
static int
s_url_has (CURLU *handle, CURLUPart part)
{
    char *value = NULL;
    if (curl_url_get (handle, part, &value, 0) != CURLUE_OK)
        return 0;
    curl_free (value);
    return 1;
}

//  Parses text into url: 0, or -1 with the reason in err (url then holds
//  nothing to free).  Refuses what is not an absolute http(s) URL with a
//  host, and any user name or password.
static int
s_url_parse (const char *text, s_url_t *url, char *err, size_t errlen)
{
    memset (url, 0, sizeof *url);
    size_t scheme = strncasecmp (text, "http://", 7) == 0? 7
                  : strncasecmp (text, "https://", 8) == 0? 8: 0;
    if (!scheme) {
        xxl_alarm_error (err, errlen, "a webhook URL starts with http:// or https://");
        return -1;
    }
    if (!text [scheme] || strchr ("/?#", text [scheme])) {
        xxl_alarm_error (err, errlen, "the webhook URL has no host");
        return -1;
    }
    for (const char *c = text; *c; c++)
        if ((unsigned char) *c <= 0x20 || *c == 0x7f) {
            xxl_alarm_error (err, errlen, "the webhook URL contains a space or control character");
            return -1;
        }
    //  Userinfo: an '@' anywhere in the authority (before the path)
    if (memchr (text + scheme, '@', strcspn (text + scheme, "/?#"))) {
        xxl_alarm_error (err, errlen, "the webhook URL must not hold a user name or "
                         "password ('@' before the host)");
        return -1;
    }
    url->handle = curl_url ();
    if (!url->handle) {
        xxl_alarm_error (err, errlen, "out of memory");
        return -1;
    }
    CURLUcode rc = curl_url_set (url->handle, CURLUPART_URL, text, 0);
    if (rc != CURLUE_OK) {
        xxl_alarm_error (err, errlen, "not a valid URL: %s", curl_url_strerror (rc));
        s_url_free (url);
        return -1;
    }
    if (s_url_has (url->handle, CURLUPART_USER)
    ||  s_url_has (url->handle, CURLUPART_PASSWORD)
    ||  s_url_has (url->handle, CURLUPART_OPTIONS)) {
        xxl_alarm_error (err, errlen, "the webhook URL must not hold a user name or "
                         "password ('@' before the host)");
        s_url_free (url);
        return -1;
    }
    if (curl_url_get (url->handle, CURLUPART_SCHEME, &url->scheme, 0) != CURLUE_OK
    ||  curl_url_get (url->handle, CURLUPART_HOST, &url->host, 0) != CURLUE_OK
    ||  curl_url_get (url->handle, CURLUPART_PORT, &url->port, CURLU_DEFAULT_PORT) != CURLUE_OK
    ||  curl_url_get (url->handle, CURLUPART_PATH, &url->path, 0) != CURLUE_OK) {
        xxl_alarm_error (err, errlen, "not a valid URL: no scheme, host, port or path");
        s_url_free (url);
        return -1;
    }
    //  No zone: stays NULL
    curl_url_get (url->handle, CURLUPART_ZONEID, &url->zone, 0);
    return 0;
}

//  1 when url lies within entry (see the allow-list above)
static int
s_url_within (const s_url_t *url, const s_url_t *entry)
{
    int same_zone = (!url->zone && !entry->zone)
                 || (url->zone && entry->zone && strcmp (url->zone, entry->zone) == 0);
    return strcasecmp (url->scheme, entry->scheme) == 0
        && strcasecmp (url->host, entry->host) == 0
        && same_zone
        && strcmp (url->port, entry->port) == 0
        && strncmp (url->path, entry->path, strlen (entry->path)) == 0;
}

//  Calls fn for every entry of scheduler/alarm/webhook_allow, with the
//  entry parsed (NULL when invalid, with the reason) until fn returns
//  nonzero.  Returns what fn returned last, 0 when the list is empty.
typedef int (s_entry_fn) (const char *text, const s_url_t *entry, const char *why,
                          void *arg);

static int
s_entries (const xxl_alarm_host_t *host, s_entry_fn *fn, void *arg)
{
    const char *at = xxl_alarm_config (host, "webhook_allow", "");
    int rc = 0;
    while (rc == 0 && *(at += strspn (at, S_SEPARATORS))) {
        size_t len = strcspn (at, S_SEPARATORS);
        char text [S_ENTRY_MAX + 1];
        char why [256] = "";
        s_url_t entry;
        int valid = 0;
        if (len > S_ENTRY_MAX) {
            snprintf (text, sizeof text, "%.60s...", at);
            snprintf (why, sizeof why, "longer than %d bytes", S_ENTRY_MAX);
        }
        else {
            memcpy (text, at, len);
            text [len] = 0;
            if (s_url_parse (text, &entry, why, sizeof why) != 0)
                ;
            else
            if (s_url_has (entry.handle, CURLUPART_QUERY)
            ||  s_url_has (entry.handle, CURLUPART_FRAGMENT)) {
                snprintf (why, sizeof why, "an entry has no query or fragment");
                s_url_free (&entry);
            }
            else
                valid = 1;
        }
        rc = fn (text, valid? &entry: NULL, why, arg);
        if (valid)
            s_url_free (&entry);
        at += len;
    }
    return rc;
}

//  s_entries callbacks: the first entry the URL lies within; logging
static int
s_entry_match (const char *text, const s_url_t *entry, const char *why, void *arg)
{
    (void) text;
    (void) why;
    return entry && s_url_within ((const s_url_t *) arg, entry);
}

typedef struct {
    const xxl_alarm_host_t *host;
    int valid;
} s_census_t;

static int
s_entry_log (const char *text, const s_url_t *entry, const char *why, void *arg)
{
    s_census_t *census = (s_census_t *) arg;
    if (entry)
        census->valid++;
    else
        xxl_alarm_log (census->host, XXL_ALARM_LOG_WARNING,
                       "webhook: scheduler/alarm/webhook_allow entry '%s' ignored: %s",
                       text, why);
    return 0;
}

//  --------------------------------------------------------------------------
//  The address a send connects to (see "Addresses" above)

//  An IP address, IPv4-mapped IPv6 ones held as IPv4
typedef struct {
    int family;                         //  AF_INET or AF_INET6
    unsigned char bytes [16];           //  network order; 4 used for IPv4
} s_addr_t;

static void
s_addr_unmap (s_addr_t *addr)
{
    static const unsigned char v4_mapped [12] = { [10] = 0xff, [11] = 0xff };
    if (addr->family == AF_INET6 && memcmp (addr->bytes, v4_mapped, 12) == 0) {
        addr->family = AF_INET;
        memmove (addr->bytes, addr->bytes + 12, 4);
        memset (addr->bytes + 4, 0, 12);
    }
}

//  A URL host that is a literal address ("10.0.0.7", "[fd00::1]") into
//  addr: 0, or -1 when host is a name
static int
s_addr_literal (const char *host, s_addr_t *addr)
{
    char text [INET6_ADDRSTRLEN + 2];
    int bracketed = host [0] == '[';
    if (snprintf (text, sizeof text, "%s", host + bracketed) >= (int) sizeof text)
        return -1;
    char *close = strchr (text, ']');
    if (bracketed != (close != NULL) || (close && close [1]))
        return -1;
    if (close)
        *close = 0;
    memset (addr, 0, sizeof *addr);
    if (inet_pton (AF_INET, text, addr->bytes) == 1)
        addr->family = AF_INET;
    else
    if (inet_pton (AF_INET6, text, addr->bytes) == 1)
        addr->family = AF_INET6;
    else
        return -1;
    s_addr_unmap (addr);
    return 0;
}

static int
s_addr_equal (const s_addr_t *a, const s_addr_t *b)
{
    return a->family == b->family
        && memcmp (a->bytes, b->bytes, a->family == AF_INET? 4: 16) == 0;
}

//  1 when addr (unmapped) is link-local or a cloud metadata service's
static int
s_addr_metadata (const s_addr_t *addr)
{
    const unsigned char *b = addr->bytes;
    static const unsigned char aws_v6 [16] = {
        0xfd, 0x00, 0x0e, 0xc2, [14] = 0x02, [15] = 0x54       //  fd00:ec2::254
    };
    if (addr->family == AF_INET)
        return (b [0] == 169 && b [1] == 254)                   //  169.254.0.0/16
            || (b [0] == 100 && b [1] == 100 && b [2] == 100 && b [3] == 200);
    return (b [0] == 0xfe && (b [1] & 0xc0) == 0x80)            //  fe80::/10
        || memcmp (b, aws_v6, 16) == 0;
}

//  s_entries callback: 1 when the entry's host is the literal address arg
static int
s_entry_names (const char *text, const s_url_t *entry, const char *why, void *arg)
{
    (void) text;
    (void) why;
    s_addr_t named;
    return entry && s_addr_literal (entry->host, &named) == 0
        && s_addr_equal (&named, (const s_addr_t *) arg);
}

//  What curl's socket opener judges with: the send's host and list
typedef struct {
    const xxl_alarm_host_t *host;
    const char *name;                   //  the target URL's host
    char refusal [S_REFUSAL_MAX];       //  the first refusal, "" while none
} s_guard_t;

//  curl's socket opener: every connection of a send is judged here on
//  the address it is made to.  After one refusal none is opened.
static curl_socket_t
s_open_socket (void *arg, curlsocktype purpose, struct curl_sockaddr *address)
{
    s_guard_t *guard = (s_guard_t *) arg;
    assert (guard && guard->host && guard->name);
    if (guard->refusal [0])
        return CURL_SOCKET_BAD;
    s_addr_t addr;
    memset (&addr, 0, sizeof addr);
    addr.family = address->family;
    if (addr.family == AF_INET)
        memcpy (addr.bytes, &((struct sockaddr_in *) &address->addr)->sin_addr, 4);
    else
    if (addr.family == AF_INET6)
        memcpy (addr.bytes, &((struct sockaddr_in6 *) &address->addr)->sin6_addr, 16);
    char shown [INET6_ADDRSTRLEN] = "?";
    if (addr.family == AF_INET || addr.family == AF_INET6)
        inet_ntop (addr.family, addr.bytes, shown, sizeof shown);
    const char *why = NULL;
    if (purpose != CURLSOCKTYPE_IPCXN || (addr.family != AF_INET && addr.family != AF_INET6))
        why = "not an IP connection";
    else {
        s_addr_unmap (&addr);
        if (s_addr_metadata (&addr) && !s_entries (guard->host, s_entry_names, &addr))
            why = "a link-local or cloud metadata address; only a "
                  "scheduler/alarm/webhook_allow entry whose host is that address allows it";
    }
    if (why) {
        s_addr_t literal;
        if (s_addr_literal (guard->name, &literal) == 0)
            snprintf (guard->refusal, sizeof guard->refusal, "refused: %s is %s", shown, why);
        else
            snprintf (guard->refusal, sizeof guard->refusal,
                      "refused: host %.120s resolves to %s, %s", guard->name, shown, why);
        return CURL_SOCKET_BAD;
    }
    return socket (address->family, address->socktype, address->protocol);
}

//  --------------------------------------------------------------------------

static void *
s_init (const xxl_alarm_host_t *host, const char **error)
{
    if (curl_global_init (CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        *error = "curl_global_init failed";
        return NULL;
    }
    s_census_t census = { host, 0 };
    s_entries (host, s_entry_log, &census);
    if (census.valid == 0)
        xxl_alarm_log (host, XXL_ALARM_LOG_WARNING,
                       "webhook: scheduler/alarm/webhook_allow is empty (or has no valid "
                       "entry): webhook alarms are disabled, every webhook target is refused");
    else
        xxl_alarm_log (host, XXL_ALARM_LOG_INFO,
                       "webhook: %d allowed target prefix(es) in scheduler/alarm/webhook_allow",
                       census.valid);
    static int s_state;
    return &s_state;
}

static void
s_destroy (void *state)
{
    (void) state;
    curl_global_cleanup ();
}

//  Parses target and checks it against the allow-list: 0 with url
//  filled (the caller frees it), or -1 with the reason in err
static int
s_target (const xxl_alarm_host_t *host, const char *target, s_url_t *url,
          char *err, size_t errlen)
{
    if (s_url_parse (target, url, err, errlen) != 0)
        return -1;
    const char *path = url->path;
    if (strchr (path, '\\') || strcasestr (path, "%2e") || strcasestr (path, "%2f")
    ||  strcasestr (path, "%5c")) {
        xxl_alarm_error (err, errlen, "the webhook URL's path holds a backslash or an "
                         "encoded '.', '/' or '\\'");
        s_url_free (url);
        return -1;
    }
    if (!s_entries (host, s_entry_match, url)) {
        xxl_alarm_error (err, errlen, S_NOT_ALLOWED);
        s_url_free (url);
        return -1;
    }
    return 0;
}

static int
s_check (void *state, const xxl_alarm_host_t *host, const char *target,
         char *err, size_t errlen)
{
    (void) state;
    s_url_t url;
    if (s_target (host, target, &url, err, errlen) != 0)
        return -1;
    s_url_free (&url);
    return 0;
}

//  The response body is read and dropped: none of it reaches the reason
static size_t
s_on_body (char *data, size_t size, size_t count, void *arg)
{
    (void) data;
    (void) arg;
    return size * count;
}

static int
s_send (void *state, const xxl_alarm_host_t *host, const xxl_alarm_t *alarm,
        const char *target, char *err, size_t errlen)
{
    (void) state;
    //  Checked again here: the list may have changed since the job was saved
    s_url_t url;
    if (s_target (host, target, &url, err, errlen) != 0)
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
        s_url_free (&url);
        xxl_alarm_error (err, errlen, "out of memory");
        return -1;
    }
    char curl_error [CURL_ERROR_SIZE] = "";
    s_guard_t guard = { host, url.host, "" };
    curl_easy_setopt (curl, CURLOPT_OPENSOCKETFUNCTION, s_open_socket);
    curl_easy_setopt (curl, CURLOPT_OPENSOCKETDATA, &guard);
    //  The very parse the allow-list judged is what libcurl connects to
    curl_easy_setopt (curl, CURLOPT_CURLU, url.handle);
    curl_easy_setopt (curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt (curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt (curl, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt (curl, CURLOPT_MAXREDIRS, 0L);
    curl_easy_setopt (curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt (curl, CURLOPT_TIMEOUT_MS, timeout);
    curl_easy_setopt (curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt (curl, CURLOPT_POST, 1L);
    curl_easy_setopt (curl, CURLOPT_POSTFIELDS, alarm->json);
    curl_easy_setopt (curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) strlen (alarm->json));
    curl_easy_setopt (curl, CURLOPT_USERAGENT, "xxl-alarm/1.0");
    curl_easy_setopt (curl, CURLOPT_WRITEFUNCTION, s_on_body);
    curl_easy_setopt (curl, CURLOPT_ERRORBUFFER, curl_error);
    if (proxy)
        curl_easy_setopt (curl, CURLOPT_PROXY, proxy);
    CURLcode code = curl_easy_perform (curl);
    long status = 0;
    curl_easy_getinfo (curl, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup (curl);
    curl_slist_free_all (headers);
    s_url_free (&url);
    if (guard.refusal [0]) {
        xxl_alarm_error (err, errlen, "%s", guard.refusal);
        return -1;
    }
    if (code != CURLE_OK) {
        curl_error [sizeof curl_error - 1] = 0;
        char *reason = curl_error [0]? curl_error: (char *) curl_easy_strerror (code);
        char line [S_REASON_MAX + 1];
        snprintf (line, sizeof line, "%s", reason);
        for (char *c = line; *c; c++)
            if ((unsigned char) *c < 0x20 || *c == 0x7f)
                *c = ' ';
        xxl_alarm_error (err, errlen, "%s", line);
        return -1;
    }
    if (status < 200 || status > 299) {
        xxl_alarm_error (err, errlen, "HTTP %ld", status);
        return -1;
    }
    return 0;
}

static const xxl_alarm_kind_t s_kinds [] = {
    { "webhook", s_send, s_check, 0 },
    { NULL, NULL, NULL, 0 }
};

XXL_ALARM_PLUGIN ("webhook", "1.0", s_init, s_destroy, s_kinds)
