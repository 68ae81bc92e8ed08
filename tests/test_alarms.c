/*  test_alarms.c -- unit tests of the alarm registry and the shipped alarm kinds.

    Loads the built alarm plugins (email, webhook, script) from
    $XXL_TEST_ALARMS (default $XXL_BUILD/plugins/alarms/.libs, else
    plugins/alarms/.libs) through xxl_alarms_t with a fake host (config
    table, captured log lines) and checks: the alarm JSON; target parsing
    and validation (plain email = email, unknown kind lists the known
    ones, each kind's own check); the webhook allow-list
    (scheduler/alarm/webhook_allow: empty refuses all, scheme, host, port
    and path prefix must match, userinfo and prefix tricks refused, at
    save and at send); the webhook against a local HTTP listener (method,
    path, content type, body; HTTP 500 without the response body, a
    redirect not followed, connection refused, timeout; a target outside
    the list never contacted); the webhook's address check (names this
    test's getaddrinfo resolves to 169.254.169.254, 100.100.100.200,
    fd00:ec2::254, fe80::1, ::ffff:169.254.169.254 -- or to the metadata
    address and loopback both -- refused with nothing sent, unless an
    entry's host names the address; a literal metadata URL within its
    own entry not refused; a name resolving to loopback posted; webhook_proxy honoured); email against a local SMTP sink (sender,
    recipients, subject, body, AUTH, 550) and through a fake sendmail
    (and a missing one); the script kind (stdin JSON, environment, exit
    status, missing script, timeout with kill, folder confinement); one
    alarm to several targets; the queue (fd, take, full queue refused);
    shutdown with alarms queued; the loader's refusals with the test
    plugins from $XXL_TEST_ALARM_PLUGINS (default: tests/alarms/.libs
    next to $XXL_TEST_PLUGINS, else under $XXL_BUILD, else
    tests/alarms/.libs).  No fixed sleeps: every wait is on a condition
    with a bound.  The last output line is "N passed, M failed".
*/

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <netdb.h>
#include <fcntl.h>
#include <libgen.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "xxl_alarms.h"
#include "alarms/sinks.h"
#include "xxl_test.h"

#define WAIT_MS     15000               //  bound on any wait

//  --------------------------------------------------------------------------
//  The resolver, as the webhook plugin's libcurl calls it in this process
//  (the test exports it: -export-dynamic): names under xxl-test.invalid
//  resolve to the addresses below (two for a rebinding name, in order)

static const struct {
    const char *name;
    const char *first, *second;
} s_fake_names [] = {
    { "metadata.xxl-test.invalid",  "169.254.169.254", NULL },
    { "rebind.xxl-test.invalid",    "169.254.169.254", "127.0.0.1" },
    { "alibaba.xxl-test.invalid",   "100.100.100.200", NULL },
    { "aws6.xxl-test.invalid",      "fd00:ec2::254", NULL },
    { "linklocal6.xxl-test.invalid", "fe80::1", NULL },
    { "mapped.xxl-test.invalid",    "::ffff:169.254.169.254", NULL },
    { "loopback.xxl-test.invalid",  "127.0.0.1", NULL },
};

int
getaddrinfo (const char *node, const char *service, const struct addrinfo *hints,
             struct addrinfo **res)
{
    __typeof__ (getaddrinfo) *real;
    *(void **) &real = dlsym (RTLD_NEXT, "getaddrinfo");
    if (!real)
        return EAI_FAIL;
    for (size_t i = 0; node && i < sizeof s_fake_names / sizeof s_fake_names [0]; i++) {
        if (strcasecmp (node, s_fake_names [i].name))
            continue;
        int rc = real (s_fake_names [i].first, service, hints, res);
        struct addrinfo *more = NULL;
        if (rc == 0 && s_fake_names [i].second
        &&  real (s_fake_names [i].second, service, hints, &more) == 0) {
            struct addrinfo *last = *res;
            while (last->ai_next)
                last = last->ai_next;
            last->ai_next = more;       //  freeaddrinfo frees the chain
        }
        return rc;
    }
    return real (node, service, hints, res);
}

//  --------------------------------------------------------------------------
//  Fake host: a config table and a log capture

#define S_KEYS 16
static struct { char key [64]; char value [1024]; } s_config [S_KEYS];
static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
static char s_log [32768];

//  Sets (value NULL: unsets) a config key.  Only called while no send runs.
static void
s_set (const char *key, const char *value)
{
    int free_slot = -1;
    for (int i = 0; i < S_KEYS; i++) {
        if (strcmp (s_config [i].key, key) == 0) {
            if (value)
                snprintf (s_config [i].value, sizeof s_config [i].value, "%s", value);
            else
                s_config [i].key [0] = 0;
            return;
        }
        if (!s_config [i].key [0] && free_slot < 0)
            free_slot = i;
    }
    if (value && free_slot >= 0) {
        snprintf (s_config [free_slot].key, sizeof s_config [free_slot].key, "%s", key);
        snprintf (s_config [free_slot].value, sizeof s_config [free_slot].value, "%s", value);
    }
}

static const char *
s_fake_config (void *ctx, const char *key)
{
    (void) ctx;
    for (int i = 0; i < S_KEYS; i++)
        if (s_config [i].key [0] && strcmp (s_config [i].key, key) == 0)
            return s_config [i].value;
    return NULL;
}

static int64_t
s_fake_now (void)
{
    return 1700000000000LL;
}

static void
s_fake_vlog (int level, const char *format, va_list args)
{
    (void) level;
    pthread_mutex_lock (&s_lock);
    size_t used = strlen (s_log);
    if (used + 2 < sizeof s_log) {
        vsnprintf (s_log + used, sizeof s_log - used - 1, format, args);
        strcat (s_log, "\n");
    }
    pthread_mutex_unlock (&s_lock);
}

static const xxl_alarm_host_t s_host = {
    XXL_ALARM_ABI_VERSION, sizeof (xxl_alarm_host_t),
    s_fake_now, s_fake_vlog, s_fake_config, NULL
};

static int
s_log_has (const char *part)
{
    pthread_mutex_lock (&s_lock);
    int has = strstr (s_log, part) != NULL;
    pthread_mutex_unlock (&s_lock);
    return has;
}

static void
s_log_clear (void)
{
    pthread_mutex_lock (&s_lock);
    s_log [0] = 0;
    pthread_mutex_unlock (&s_lock);
}

//  --------------------------------------------------------------------------
//  Helpers

static char s_tmp [256];                //  the test's temporary folder
static char s_scripts [300];            //  its alarm script folder

static xxl_alarm_t
s_alarm (void)
{
    xxl_alarm_t alarm = {
        sizeof (xxl_alarm_t), 42, "nightly \"report\"\nline2", "demo-app", 1001,
        1700000000123LL, 200, "trigger ok", 500, "handler said: boom\n.\nend",
        "tcp://10.0.0.5:7071", 1, NULL
    };
    return alarm;
}

static int64_t
s_mono_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

//  Waits up to WAIT_MS for a result and takes it; -1 on timeout
static int
s_result (xxl_alarms_t *alarms, int64_t *tag, int *ok, char **report)
{
    struct pollfd item = { xxl_alarms_fd (alarms), POLLIN, 0 };
    if (poll (&item, 1, WAIT_MS) != 1) {
        fprintf (stderr, "no alarm result within %d ms\n", WAIT_MS);
        *report = NULL;
        return -1;
    }
    return xxl_alarms_take (alarms, tag, ok, report);
}

//  Submits one alarm and waits for its result; returns ok (or -1), report set
static int
s_submit_wait (xxl_alarms_t *alarms, const char *targets, char **report)
{
    xxl_alarm_t alarm = s_alarm ();
    *report = NULL;
    if (xxl_alarms_submit (alarms, &alarm, targets, 7) != 0)
        return -1;
    int64_t tag = 0;
    int ok = -1;
    if (s_result (alarms, &tag, &ok, report) != 0)
        return -1;
    XXL_CHECK (tag == 7);
    if (getenv ("XXL_TEST_VERBOSE"))
        fprintf (stderr, "%s -> %s\n", targets, *report? *report: "(null)");
    return ok;
}

static void
s_write_file (const char *path, const char *text, int mode)
{
    FILE *file = fopen (path, "w");
    if (!file) {
        perror (path);
        exit (2);
    }
    fputs (text, file);
    fclose (file);
    chmod (path, (mode_t) mode);
}

//  Whole file into a static buffer ("" when missing)
static const char *
s_read_file (const char *path)
{
    static char text [SINK_TEXT];
    text [0] = 0;
    FILE *file = fopen (path, "r");
    if (!file)
        return text;
    size_t n = fread (text, 1, sizeof text - 1, file);
    text [n] = 0;
    fclose (file);
    return text;
}

static const char *
s_dir (const char *env, const char *below_build, const char *dflt, char *buf, size_t len)
{
    const char *value = getenv (env);
    if (value && *value)
        return value;
    const char *build = getenv ("XXL_BUILD");
    if (build && *build) {
        snprintf (buf, len, "%s/%s", build, below_build);
        return buf;
    }
    return dflt;
}

//  --------------------------------------------------------------------------

static void
test_json (void)
{
    xxl_alarm_t alarm = s_alarm ();
    char *json = xxl_alarms_json (&alarm);
    XXL_CHECK_STR (json,
        "{\"title\":\"xxl job alarm\",\"jobId\":42,\"jobDesc\":\"nightly \\\"report\\\"\\nline2\","
        "\"appname\":\"demo-app\",\"logId\":1001,\"triggerTime\":1700000000123,"
        "\"triggerCode\":200,\"triggerMsg\":\"trigger ok\",\"handleCode\":500,"
        "\"handleMsg\":\"handler said: boom\\n.\\nend\",\"executorAddress\":\"tcp://10.0.0.5:7071\","
        "\"executorFailRetryCount\":1}");
    free (json);
    //  Control characters escaped, invalid UTF-8 replaced, valid kept, NULL as ""
    alarm.job_desc = "a\x01\tb\xff\xc3(\xe4\xb8\xad\\";
    alarm.app = NULL;
    json = xxl_alarms_json (&alarm);
    XXL_CHECK_HAS (json, "\"jobDesc\":\"a\\u0001\\tb\xef\xbf\xbd\xef\xbf\xbd(\xe4\xb8\xad\\\\\"");
    XXL_CHECK_HAS (json, "\"appname\":\"\"");
    free (json);
}

static void
test_loader (const char *dir, const char *test_dir)
{
    //  Refusals of the registry itself
    xxl_alarm_host_t wrong = s_host;
    wrong.abi_version = 2;
    XXL_CHECK (xxl_alarms_new (NULL, &wrong) == NULL);
    XXL_CHECK (xxl_alarms_new ("/nonexistent/alarms", &s_host) == NULL);
    XXL_CHECK (s_log_has ("cannot read alarms folder /nonexistent/alarms"));

    xxl_alarms_t *alarms = xxl_alarms_new (dir, &s_host);
    XXL_CHECK (alarms != NULL);
    if (!alarms)
        return;
    char *kinds = xxl_alarms_kinds (alarms);
    XXL_CHECK_STR (kinds, "email, script, webhook");
    free (kinds);
    XXL_CHECK (xxl_alarms_size (alarms) == 3);
    XXL_CHECK (xxl_alarms_has_kind (alarms, "webhook"));
    XXL_CHECK (!xxl_alarms_has_kind (alarms, "web"));

    struct { const char *file; const char *log; } bad [] = {
        { "bad_alarm_abi.so", "refused: wrong ABI version 99 (this scheduler speaks alarm ABI 1)" },
        { "bad_alarm_size.so", "refused: descriptor size 16 too small" },
        { "bad_alarm_nosym.so", "refused: missing symbol xxl_alarm_plugin (not an alarm plugin)" },
        { "bad_alarm_init.so", "refused: init failed: bad_alarm_init refuses to start" },
        { "bad_alarm_dup.so", "duplicate alarm kind webhook (already from " },
        { "no_such_plugin.so", "refused: cannot load" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++) {
        char path [4096];
        snprintf (path, sizeof path, "%s/%s", test_dir, bad [i].file);
        XXL_CHECK (xxl_alarms_load_file (alarms, path) == -1);
        if (!s_log_has (bad [i].log)) {
            xxl_test_failed++;
            fprintf (stderr, "FAIL %s:%d: no log line '%s' for %s\n",
                     __FILE__, __LINE__, bad [i].log, path);
        }
        else
            xxl_test_passed++;
    }
    kinds = xxl_alarms_kinds (alarms);
    XXL_CHECK_STR (kinds, "email, script, webhook");
    free (kinds);
    xxl_alarms_destroy (&alarms);
    XXL_CHECK (alarms == NULL);

    //  Loading the whole test folder: the bad ones are refused, the others
    //  still load (bad_alarm_dup's webhook is no duplicate when alone)
    alarms = xxl_alarms_new (test_dir, &s_host);
    XXL_CHECK (alarms != NULL);
    kinds = xxl_alarms_kinds (alarms);
    XXL_CHECK_STR (kinds, "webhook");
    free (kinds);
    xxl_alarms_destroy (&alarms);
}

static void
test_targets (xxl_alarms_t *alarms)
{
    char err [512];
    s_set ("script_dir", s_scripts);
    s_set ("webhook_allow", "https://chat.example/hook");
    XXL_CHECK (xxl_alarms_check_targets (alarms, NULL, err, sizeof err) == 0);
    XXL_CHECK (xxl_alarms_check_targets (alarms, "", err, sizeof err) == 0);
    XXL_CHECK (xxl_alarms_check_targets (alarms, " , ", err, sizeof err) == 0);
    XXL_CHECK (xxl_alarms_check_targets (alarms, "ops@example.com", err, sizeof err) == 0);
    XXL_CHECK (xxl_alarms_check_targets (alarms,
               "ops@example.com, email:dev@example.com ,webhook:https://chat.example/hook?a=1,"
               "script:notify.sh", err, sizeof err) == 0);
    XXL_CHECK_STR (err, "");

    XXL_CHECK (xxl_alarms_check_targets (alarms, "sms:+4912345", err, sizeof err) == -1);
    XXL_CHECK_STR (err, "unknown alarm kind 'sms' in target 'sms:+4912345'; known: email, script, webhook");
    XXL_CHECK (xxl_alarms_check_targets (alarms, "a@b.c,foo", err, sizeof err) == -1);
    XXL_CHECK_HAS (err, "'foo' is neither kind:destination nor an email address; known kinds: email, script, webhook");
    XXL_CHECK (xxl_alarms_check_targets (alarms, "webhook:ftp://x/y", err, sizeof err) == -1);
    XXL_CHECK_HAS (err, "http:// or https://");
    XXL_CHECK (xxl_alarms_check_targets (alarms, "webhook:", err, sizeof err) == -1);
    XXL_CHECK_HAS (err, "has no destination");
    XXL_CHECK (xxl_alarms_check_targets (alarms, "email:not-an-address", err, sizeof err) == -1);
    XXL_CHECK_HAS (err, "not an email address");
    XXL_CHECK (xxl_alarms_check_targets (alarms, "email:a<b@c.d", err, sizeof err) == -1);
    XXL_CHECK (xxl_alarms_check_targets (alarms, "script:../etc/x", err, sizeof err) == -1);
    XXL_CHECK_HAS (err, "'..'");
    XXL_CHECK (xxl_alarms_check_targets (alarms, "script:/bin/sh", err, sizeof err) == -1);
    XXL_CHECK_HAS (err, "outside the alarm script folder");
    char inside [512];
    snprintf (inside, sizeof inside, "script:%s/notify.sh", s_scripts);
    XXL_CHECK (xxl_alarms_check_targets (alarms, inside, err, sizeof err) == 0);
    s_set ("script_dir", NULL);
    XXL_CHECK (xxl_alarms_check_targets (alarms, "script:notify.sh", err, sizeof err) == -1);
    XXL_CHECK_HAS (err, "script alarms are disabled");
    s_set ("script_dir", s_scripts);

    //  Too many targets, too long a target
    char many [2048] = "";
    for (int i = 0; i < XXL_ALARMS_MAX_TARGETS + 1; i++)
        strcat (many, "a@b.c,");
    XXL_CHECK (xxl_alarms_check_targets (alarms, many, err, sizeof err) == -1);
    XXL_CHECK_HAS (err, "too many alarm targets");
    char *longest = (char *) malloc (XXL_ALARMS_MAX_TARGET_LEN + 64);
    strcpy (longest, "webhook:http://h/");
    memset (longest + 17, 'x', XXL_ALARMS_MAX_TARGET_LEN);
    longest [17 + XXL_ALARMS_MAX_TARGET_LEN] = 0;
    XXL_CHECK (xxl_alarms_check_targets (alarms, longest, err, sizeof err) == -1);
    XXL_CHECK_HAS (err, "is too long");
    free (longest);
    s_set ("webhook_allow", NULL);
}

#define S_NOT_ALLOWED "webhook target not in scheduler/alarm/webhook_allow"

//  check_targets on one webhook URL: 0, or -1 with err
static int
s_hook_check (xxl_alarms_t *alarms, const char *url, char *err, size_t errlen)
{
    char target [2100];
    snprintf (target, sizeof target, "webhook:%s", url);
    int rc = xxl_alarms_check_targets (alarms, target, err, errlen);
    if (getenv ("XXL_TEST_VERBOSE"))
        fprintf (stderr, "%s -> %d %s\n", target, rc, err);
    return rc;
}

//  The allow-list at save time: every refusal beside the case it allows
static void
test_allow (xxl_alarms_t *alarms)
{
    char err [512];
    //  Unset or empty: nothing is allowed
    s_set ("webhook_allow", NULL);
    XXL_CHECK (s_hook_check (alarms, "https://hooks.example.com/x", err, sizeof err) == -1);
    XXL_CHECK_HAS (err, S_NOT_ALLOWED);
    s_set ("webhook_allow", " , ");
    XXL_CHECK (s_hook_check (alarms, "https://hooks.example.com/x", err, sizeof err) == -1);
    XXL_CHECK_HAS (err, S_NOT_ALLOWED);
    s_set ("webhook_allow", "https://hooks.example.com/");
    XXL_CHECK (s_hook_check (alarms, "https://hooks.example.com/x", err, sizeof err) == 0);

    s_set ("webhook_allow", "https://hooks.example.com/, http://127.0.0.1:8080/xxl/ "
                            "https://[::1]:9443/");
    struct { const char *url; int ok; const char *why; } cases [] = {
        //  scheme and host case-insensitive, default port, query kept
        { "https://hooks.example.com/x", 0, NULL },
        { "HTTPS://Hooks.EXAMPLE.com/x", 0, NULL },
        { "https://hooks.example.com:443/x", 0, NULL },
        { "https://hooks.example.com", 0, NULL },
        { "http://127.0.0.1:8080/xxl/alarm?team=ops", 0, NULL },
        { "https://[::1]:9443/hook", 0, NULL },
        //  another host that starts or ends like an allowed one
        { "https://hooks.example.com.evil.org/", -1, S_NOT_ALLOWED },
        { "https://evil.org/https://hooks.example.com/", -1, S_NOT_ALLOWED },
        { "https://xhooks.example.com/", -1, S_NOT_ALLOWED },
        //  another scheme or port
        { "http://hooks.example.com/x", -1, S_NOT_ALLOWED },
        { "https://hooks.example.com:8443/x", -1, S_NOT_ALLOWED },
        { "http://127.0.0.1:8081/xxl/", -1, S_NOT_ALLOWED },
        { "https://[::1]:9444/hook", -1, S_NOT_ALLOWED },
        //  userinfo, which hides the real host
        { "https://hooks.example.com@evil.org/", -1, "user name or password" },
        { "https://user:pw@hooks.example.com/x", -1, "user name or password" },
        { "http://127.0.0.1:8080@127.0.0.1:9/xxl/", -1, "user name or password" },
        //  a port that is no port
        { "http://127.0.0.1:8080.evil/xxl/", -1, "not a valid URL" },
        //  out of the allowed path: beside it, above it by dot segments,
        //  by encoded ones
        { "http://127.0.0.1:8080/", -1, S_NOT_ALLOWED },
        { "http://127.0.0.1:8080/xxlx", -1, S_NOT_ALLOWED },
        { "http://127.0.0.1:8080/xxl/../admin", -1, S_NOT_ALLOWED },
        { "http://127.0.0.1:8080/xxl/./a", 0, NULL },
        { "http://127.0.0.1:8080/xxl/%2e%2e/admin", -1, "encoded" },
        { "http://127.0.0.1:8080/xxl/..%2Fadmin", -1, "encoded" },
        { "http://127.0.0.1:8080/xxl/..\\admin", -1, "backslash" },
        //  not http(s)
        { "ftp://hooks.example.com/x", -1, "http:// or https://" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        err [0] = 0;
        int rc = s_hook_check (alarms, cases [i].url, err, sizeof err);
        if (rc != cases [i].ok || (cases [i].why && !strstr (err, cases [i].why))) {
            xxl_test_failed++;
            fprintf (stderr, "FAIL %s:%d: %s: got %d '%s', want %d '%s'\n", __FILE__,
                     __LINE__, cases [i].url, rc, err, cases [i].ok,
                     cases [i].why? cases [i].why: "");
        }
        else
            xxl_test_passed++;
    }
    //  An entry without a path is the whole host, not a text prefix
    s_set ("webhook_allow", "https://hooks.example.com");
    XXL_CHECK (s_hook_check (alarms, "https://hooks.example.com/a/b", err, sizeof err) == 0);
    XXL_CHECK (s_hook_check (alarms, "https://hooks.example.com.evil.org/", err, sizeof err) == -1);
    XXL_CHECK_HAS (err, S_NOT_ALLOWED);
    //  Invalid entries never match; the valid one beside them does
    s_set ("webhook_allow", "ftp://hooks.example.com/ https://u@hooks.example.com/ "
                            "https://hooks.example.com/?q hooks.example.com https://ok.example/");
    XXL_CHECK (s_hook_check (alarms, "https://hooks.example.com/x", err, sizeof err) == -1);
    XXL_CHECK_HAS (err, S_NOT_ALLOWED);
    XXL_CHECK (s_hook_check (alarms, "https://ok.example/x", err, sizeof err) == 0);
    s_set ("webhook_allow", NULL);
}

//  The webhook plugin says at load what its list allows
static void
test_allow_log (const char *dir)
{
    s_log_clear ();
    s_set ("webhook_allow", NULL);
    xxl_alarms_t *alarms = xxl_alarms_new (dir, &s_host);
    XXL_CHECK (alarms != NULL);
    XXL_CHECK (s_log_has ("webhook: scheduler/alarm/webhook_allow is empty (or has no valid "
                          "entry): webhook alarms are disabled"));
    xxl_alarms_destroy (&alarms);

    s_log_clear ();
    s_set ("webhook_allow", "ftp://x/, https://u@h/, https://ok.example/");
    alarms = xxl_alarms_new (dir, &s_host);
    XXL_CHECK (alarms != NULL);
    XXL_CHECK (s_log_has ("webhook: scheduler/alarm/webhook_allow entry 'ftp://x/' ignored: "
                          "a webhook URL starts with http:// or https://"));
    XXL_CHECK (s_log_has ("entry 'https://u@h/' ignored: the webhook URL must not hold"));
    XXL_CHECK (s_log_has ("webhook: 1 allowed target prefix(es)"));
    XXL_CHECK (!s_log_has ("webhook alarms are disabled"));
    xxl_alarms_destroy (&alarms);
    s_set ("webhook_allow", NULL);
}

static void
test_webhook (xxl_alarms_t *alarms)
{
    sink_t *http = sink_http_new ();
    XXL_CHECK (http != NULL);
    if (!http)
        return;
    char target [256], report_want [300], allow [256];
    snprintf (target, sizeof target, "webhook:http://127.0.0.1:%d/hook/alarm", sink_port (http));
    snprintf (report_want, sizeof report_want, "webhook http://127.0.0.1:%d/hook/alarm: sent",
              sink_port (http));
    snprintf (allow, sizeof allow, "http://127.0.0.1:%d/hook/", sink_port (http));
    s_set ("webhook_allow", allow);

    char *report = NULL;
    XXL_CHECK (s_submit_wait (alarms, target, &report) == 1);
    XXL_CHECK_STR (report, report_want);
    free (report);
    sink_record_t *record = (sink_record_t *) calloc (1, sizeof (sink_record_t));
    XXL_CHECK (sink_wait (http, 1, WAIT_MS, record) == 0);
    XXL_CHECK_STR (record->method, "POST");
    XXL_CHECK_STR (record->path, "/hook/alarm");
    XXL_CHECK_STR (record->content_type, "application/json");
    xxl_alarm_t alarm = s_alarm ();
    char *json = xxl_alarms_json (&alarm);
    XXL_CHECK_STR (record->body, json);
    free (json);

    //  Non-2xx: failed with the status, and not a byte of the body
    sink_set_mode (http, SINK_HTTP_STATUS, 500);
    sink_set_error_body (http, SINK_HTTP_ERROR_BODY);
    XXL_CHECK (s_submit_wait (alarms, target, &report) == 0);
    snprintf (report_want, sizeof report_want,
              "webhook http://127.0.0.1:%d/hook/alarm: failed: HTTP 500", sink_port (http));
    XXL_CHECK_STR (report, report_want);
    XXL_CHECK_LACKS (report, SINK_BODY_MARKER);
    free (report);
    XXL_CHECK (sink_wait (http, 2, WAIT_MS, record) == 0);

    //  A redirect is not followed, not even to the same allowed sink
    sink_set_mode (http, SINK_HTTP_STATUS, 302);
    XXL_CHECK (s_submit_wait (alarms, target, &report) == 0);
    XXL_CHECK_HAS (report, ": failed: HTTP 302");
    XXL_CHECK_LACKS (report, SINK_BODY_MARKER);
    free (report);
    XXL_CHECK (sink_wait (http, 3, WAIT_MS, record) == 0);
    XXL_CHECK_STR (record->path, "/hook/alarm");
    sink_set_mode (http, SINK_HTTP_STATUS, 200);

    //  Outside the list: refused at send too (a job saved under a wider
    //  list), and the target is never contacted.  Beside each refusal,
    //  the same target allowed is POSTed to.
    sink_t *other = sink_http_new ();
    XXL_CHECK (other != NULL);
    if (other) {
        char outside [256], outside_allow [600];
        snprintf (outside, sizeof outside, "webhook:http://127.0.0.1:%d/x", sink_port (other));
        snprintf (outside_allow, sizeof outside_allow, "%s, http://127.0.0.1:%d/x",
                  allow, sink_port (other));
        char err [512];
        s_set ("webhook_allow", outside_allow);
        XXL_CHECK (xxl_alarms_check_targets (alarms, outside, err, sizeof err) == 0);
        s_set ("webhook_allow", allow);         //  narrowed, as by a restart
        XXL_CHECK (xxl_alarms_check_targets (alarms, outside, err, sizeof err) == -1);
        XXL_CHECK_HAS (err, S_NOT_ALLOWED);
        XXL_CHECK (s_submit_wait (alarms, outside, &report) == 0);
        XXL_CHECK_HAS (report, ": failed: " S_NOT_ALLOWED);
        free (report);
        //  Userinfo naming the allowed sink, the request going to the other
        char trick [300];
        snprintf (trick, sizeof trick, "webhook:http://127.0.0.1:%d@127.0.0.1:%d/hook/x",
                  sink_port (http), sink_port (other));
        XXL_CHECK (s_submit_wait (alarms, trick, &report) == 0);
        XXL_CHECK_HAS (report, "must not hold a user name or password");
        free (report);
        //  The empty list refuses the allowed sink too
        s_set ("webhook_allow", "");
        XXL_CHECK (s_submit_wait (alarms, target, &report) == 0);
        XXL_CHECK_HAS (report, ": failed: " S_NOT_ALLOWED);
        free (report);
        XXL_CHECK (sink_count (other) == 0);
        XXL_CHECK (sink_count (http) == 3);
        //  Allowed again: each gets its POST
        s_set ("webhook_allow", outside_allow);
        XXL_CHECK (s_submit_wait (alarms, outside, &report) == 1);
        XXL_CHECK_HAS (report, ": sent");
        free (report);
        XXL_CHECK (sink_wait (other, 1, WAIT_MS, record) == 0);
        XXL_CHECK_STR (record->path, "/x");
        XXL_CHECK (sink_count (other) == 1);
        XXL_CHECK (s_submit_wait (alarms, target, &report) == 1);
        free (report);
        XXL_CHECK (sink_wait (http, 4, WAIT_MS, NULL) == 0);
        s_set ("webhook_allow", allow);
        sink_destroy (&other);
    }

    //  Timeout: the listener never answers
    sink_set_mode (http, SINK_HTTP_HANG, 0);
    s_set ("webhook_timeout", "300");
    int64_t start = s_mono_ms ();
    XXL_CHECK (s_submit_wait (alarms, target, &report) == 0);
    XXL_CHECK_HAS (report, ": failed: ");
    XXL_CHECK_HAS (report, "timed out");
    XXL_CHECK (s_mono_ms () - start < 5000);
    free (report);
    s_set ("webhook_timeout", NULL);
    sink_set_mode (http, SINK_HTTP_STATUS, 200);
    free (record);
    sink_destroy (&http);

    //  Connection refused
    int dead = sink_dead_port ();
    snprintf (target, sizeof target, "webhook:http://127.0.0.1:%d/x", dead);
    snprintf (allow, sizeof allow, "http://127.0.0.1:%d/", dead);
    s_set ("webhook_allow", allow);
    XXL_CHECK (s_submit_wait (alarms, target, &report) == 0);
    XXL_CHECK_HAS (report, ": failed: ");
    XXL_CHECK_HAS (report, "onnect");
    free (report);
    s_set ("webhook_allow", NULL);
}

#define S_METADATA_WHY "a link-local or cloud metadata address; only a " \
                       "scheduler/alarm/webhook_allow entry whose host is that address allows it"

//  The address a webhook connects to, judged after resolution
static void
test_webhook_address (xxl_alarms_t *alarms)
{
    sink_t *http = sink_http_new ();
    XXL_CHECK (http != NULL);
    if (!http)
        return;
    int port = sink_port (http);
    char allow [1024], target [256], want [512], err [512];
    char *report = NULL;
    snprintf (allow, sizeof allow, "http://metadata.xxl-test.invalid:%d/, "
              "http://rebind.xxl-test.invalid:%d/, http://alibaba.xxl-test.invalid:%d/, "
              "http://aws6.xxl-test.invalid:%d/, http://linklocal6.xxl-test.invalid:%d/, "
              "http://mapped.xxl-test.invalid:%d/, http://loopback.xxl-test.invalid:%d/",
              port, port, port, port, port, port, port);
    s_set ("webhook_allow", allow);
    s_set ("webhook_timeout", "2000");

    //  The allowed case: a name that resolves to loopback is posted to
    //  (and this test's resolver is the one the plugin's libcurl calls)
    snprintf (target, sizeof target, "webhook:http://loopback.xxl-test.invalid:%d/hook", port);
    XXL_CHECK (s_submit_wait (alarms, target, &report) == 1);
    XXL_CHECK_HAS (report, ": sent");
    free (report);
    XXL_CHECK (sink_wait (http, 1, WAIT_MS, NULL) == 0);

    //  Names within the list resolving to a metadata address: saved (the
    //  list allows the URL), refused at send with nothing sent
    static const struct {
        const char *name, *shown;
    } names [] = {
        { "metadata",   "169.254.169.254" },
        { "rebind",     "169.254.169.254" },    //  loopback after it: not tried
        { "alibaba",    "100.100.100.200" },
        { "aws6",       "fd00:ec2::254" },
        { "linklocal6", "fe80::1" },
        { "mapped",     "::ffff:169.254.169.254" },
    };
    for (size_t i = 0; i < sizeof names / sizeof names [0]; i++) {
        snprintf (target, sizeof target, "webhook:http://%s.xxl-test.invalid:%d/hook",
                  names [i].name, port);
        XXL_CHECK (xxl_alarms_check_targets (alarms, target, err, sizeof err) == 0);
        XXL_CHECK (s_submit_wait (alarms, target, &report) == 0);
        snprintf (want, sizeof want, "webhook http://%s.xxl-test.invalid:%d/hook: failed: "
                  "refused: host %s.xxl-test.invalid resolves to %s, " S_METADATA_WHY,
                  names [i].name, port, names [i].name, names [i].shown);
        XXL_CHECK_STR (report, want);
        free (report);
    }
    XXL_CHECK (sink_count (http) == 1);

    //  An entry whose host is the address names it: the rebinding name
    //  then reaches the sink, through the metadata address's failure
    //  (nothing listens there) or directly -- never refused
    char named [1200];
    snprintf (named, sizeof named, "%s, http://169.254.169.254:%d/", allow, port);
    s_set ("webhook_allow", named);
    snprintf (target, sizeof target, "webhook:http://rebind.xxl-test.invalid:%d/hook", port);
    int ok = s_submit_wait (alarms, target, &report);
    XXL_CHECK (ok >= 0);
    XXL_CHECK_LACKS (report, "refused");
    free (report);
    if (ok == 1)
        XXL_CHECK (sink_wait (http, 2, WAIT_MS, NULL) == 0);

    //  A literal metadata URL within the list is refused by the list
    //  unless an entry has it; within its own entry, it is named by it:
    //  connected (and failing, nothing listens there), not refused
    s_set ("webhook_allow", allow);
    s_set ("webhook_timeout", "300");
    snprintf (target, sizeof target, "webhook:http://169.254.169.254:%d/hook", port);
    XXL_CHECK (s_submit_wait (alarms, target, &report) == 0);
    XXL_CHECK_HAS (report, ": failed: " S_NOT_ALLOWED);
    free (report);
    s_set ("webhook_allow", named);
    XXL_CHECK (s_submit_wait (alarms, target, &report) == 0);
    XXL_CHECK_HAS (report, ": failed: ");
    XXL_CHECK_LACKS (report, "refused");
    free (report);

    //  webhook_proxy is honoured: the connection goes to the proxy (a dead
    //  one here: the send fails to connect, nothing reaches the sink, and
    //  no refusal, since the address judged is the proxy's, on loopback)
    s_set ("webhook_allow", allow);
    s_set ("webhook_timeout", "2000");
    char proxy [64];
    snprintf (proxy, sizeof proxy, "http://127.0.0.1:%d/", sink_dead_port ());
    s_set ("webhook_proxy", proxy);
    int before = sink_count (http);
    snprintf (target, sizeof target, "webhook:http://loopback.xxl-test.invalid:%d/hook", port);
    XXL_CHECK (s_submit_wait (alarms, target, &report) == 0);
    XXL_CHECK_HAS (report, ": failed: ");
    XXL_CHECK_LACKS (report, "refused");
    free (report);
    XXL_CHECK (sink_count (http) == before);
    s_set ("webhook_proxy", NULL);
    //  ... and without it the same target is sent
    XXL_CHECK (s_submit_wait (alarms, target, &report) == 1);
    XXL_CHECK_HAS (report, ": sent");
    free (report);
    XXL_CHECK (sink_wait (http, before + 1, WAIT_MS, NULL) == 0);

    s_set ("webhook_timeout", NULL);
    s_set ("webhook_allow", NULL);
    sink_destroy (&http);
}

static void
test_email (xxl_alarms_t *alarms)
{
    sink_t *smtp = sink_smtp_new ();
    XXL_CHECK (smtp != NULL);
    if (!smtp)
        return;
    char url [128];
    snprintf (url, sizeof url, "smtp://127.0.0.1:%d", sink_port (smtp));
    s_set ("smtp_url", url);
    s_set ("smtp_from", "alarms@xxl.test");

    //  A plain address (XXL-JOB's alarmEmail) and an email: target
    char *report = NULL;
    XXL_CHECK (s_submit_wait (alarms, "ops@example.com, email:dev@example.com", &report) == 1);
    XXL_CHECK_STR (report, "email ops@example.com: sent\nemail dev@example.com: sent");
    free (report);
    sink_record_t *record = (sink_record_t *) calloc (1, sizeof (sink_record_t));
    XXL_CHECK (sink_wait (smtp, 1, WAIT_MS, record) == 0);
    XXL_CHECK_STR (record->mail_from, "<alarms@xxl.test>");
    XXL_CHECK_STR (record->rcpt, "<ops@example.com>");
    XXL_CHECK_STR (record->auth, "");
    XXL_CHECK_HAS (record->body, "\nSubject: xxl job alarm: job 42 (nightly \"report\" line2)\n");
    XXL_CHECK_HAS (record->body, "From: alarms@xxl.test\n");
    XXL_CHECK_HAS (record->body, "To: ops@example.com\n");
    XXL_CHECK_HAS (record->body, "Content-Type: text/plain; charset=UTF-8\n");
    XXL_CHECK_HAS (record->body, "Date: Tue, 14 Nov 2023 22:13:20 +0000\n");
    XXL_CHECK_HAS (record->body, "Job:              42\n");
    XXL_CHECK_HAS (record->body, "App:              demo-app\n");
    XXL_CHECK_HAS (record->body, "Log id:           1001\n");
    XXL_CHECK_HAS (record->body, "Trigger time:     2023-11-14 22:13:20 UTC\n");
    XXL_CHECK_HAS (record->body, "Executor address: tcp://10.0.0.5:7071\n");
    XXL_CHECK_HAS (record->body, "Handle code:      500\nHandle message:\n"
                                 "  handler said: boom\n  .\n  end\n");
    XXL_CHECK (sink_wait (smtp, 2, WAIT_MS, record) == 0);
    XXL_CHECK_STR (record->rcpt, "<dev@example.com>");
    XXL_CHECK_HAS (record->body, "To: dev@example.com\n");

    //  Non-ASCII description: RFC 2047 subject; login when configured
    s_set ("smtp_user", "alarm-user");
    s_set ("smtp_password", "secret");
    //  With a login, STARTTLS is required by default: the sink has none
    XXL_CHECK (s_submit_wait (alarms, "ops@example.com", &report) == 0);
    XXL_CHECK_HAS (report, "email ops@example.com: failed: ");
    free (report);
    s_set ("smtp_tls", "try");
    xxl_alarm_t alarm = s_alarm ();
    alarm.job_desc = "\xe5\xa4\x9c\xe9\x97\xb4\xe6\x8a\xa5\xe8\xa1\xa8";    //  夜间报表
    XXL_CHECK (xxl_alarms_submit (alarms, &alarm, "ops@example.com", 8) == 0);
    int64_t tag = 0;
    int ok = 0;
    XXL_CHECK (s_result (alarms, &tag, &ok, &report) == 0);
    XXL_CHECK (ok == 1 && tag == 8);
    free (report);
    XXL_CHECK (sink_wait (smtp, 3, WAIT_MS, record) == 0);      //  the refused one
    XXL_CHECK_STR (record->auth, "");
    XXL_CHECK_STR (record->body, "");
    XXL_CHECK (sink_wait (smtp, 4, WAIT_MS, record) == 0);
    XXL_CHECK_HAS (record->body, "\nSubject: =?UTF-8?B?");
    XXL_CHECK_HAS (record->auth, "AUTH PLAIN");
    //  base64 ("\0alarm-user\0secret")
    XXL_CHECK_HAS (record->auth, "AGFsYXJtLXVzZXIAc2VjcmV0");
    s_set ("smtp_user", NULL);
    s_set ("smtp_password", NULL);
    s_set ("smtp_tls", NULL);

    //  The server refuses the recipient
    sink_set_mode (smtp, SINK_SMTP_REJECT, 0);
    XXL_CHECK (s_submit_wait (alarms, "nobody@example.com", &report) == 0);
    XXL_CHECK_HAS (report, "email nobody@example.com: failed: ");
    XXL_CHECK_HAS (report, "550");
    free (report);
    free (record);
    sink_destroy (&smtp);

    //  Nothing listening
    snprintf (url, sizeof url, "smtp://127.0.0.1:%d", sink_dead_port ());
    s_set ("smtp_url", url);
    XXL_CHECK (s_submit_wait (alarms, "ops@example.com", &report) == 0);
    XXL_CHECK_HAS (report, "email ops@example.com: failed: ");
    free (report);

    //  No smtp_url: sendmail -t -i
    s_set ("smtp_url", NULL);
    char sendmail [512], script [2048], path [512];
    snprintf (sendmail, sizeof sendmail, "%s/fake-sendmail", s_tmp);
    snprintf (script, sizeof script,
              "#!/bin/sh\necho \"$@\" > '%s/sendmail.args'\ncat > '%s/sendmail.mail'\n",
              s_tmp, s_tmp);
    s_write_file (sendmail, script, 0755);
    s_set ("sendmail", sendmail);
    XXL_CHECK (s_submit_wait (alarms, "ops@example.com", &report) == 1);
    XXL_CHECK_STR (report, "email ops@example.com: sent");
    free (report);
    snprintf (path, sizeof path, "%s/sendmail.args", s_tmp);
    XXL_CHECK_STR (s_read_file (path), "-t -i\n");
    snprintf (path, sizeof path, "%s/sendmail.mail", s_tmp);
    XXL_CHECK_HAS (s_read_file (path), "\nTo: ops@example.com\nSubject: xxl job alarm: job 42 (");
    XXL_CHECK (strchr (s_read_file (path), '\r') == NULL);

    //  ... failing, and missing
    snprintf (script, sizeof script, "#!/bin/sh\ncat >/dev/null\necho 'no route to mx' >&2\nexit 75\n");
    s_write_file (sendmail, script, 0755);
    XXL_CHECK (s_submit_wait (alarms, "ops@example.com", &report) == 0);
    XXL_CHECK_HAS (report, "exit status 75: no route to mx");
    free (report);
    s_set ("sendmail", "/nonexistent/sendmail");
    XXL_CHECK (s_submit_wait (alarms, "ops@example.com", &report) == 0);
    XXL_CHECK_HAS (report, "failed: no SMTP server configured and /nonexistent/sendmail not found");
    free (report);
    s_set ("sendmail", NULL);
    s_set ("smtp_from", NULL);
}

//  Waits (bounded) until process pid is gone or a zombie (killed, not yet
//  reaped by its new parent); 0, or -1 when it still runs
static int
s_wait_dead (int pid)
{
    int64_t until = s_mono_ms () + WAIT_MS;
    char path [64];
    snprintf (path, sizeof path, "/proc/%d/stat", pid);
    while (s_mono_ms () < until) {
        const char *stat = s_read_file (path);
        const char *paren = strrchr (stat, ')');
        if (!*stat || (paren && paren [1] == ' ' && paren [2] == 'Z'))
            return 0;
        struct pollfd none;
        poll (&none, 0, 5);
    }
    return -1;
}

static void
test_script (xxl_alarms_t *alarms)
{
    char path [512], script [2048];
    s_set ("script_dir", s_scripts);
    snprintf (path, sizeof path, "%s/ok.sh", s_scripts);
    snprintf (script, sizeof script,
              "#!/bin/sh\ncat > '%s/stdin.json'\n"
              "echo \"$XXL_ALARM_JOB_ID|$XXL_ALARM_LOG_ID|$XXL_ALARM_APP|$XXL_ALARM_JOB_DESC|"
              "$XXL_ALARM_HANDLE_CODE|$XXL_ALARM_RETRY_COUNT|$XXL_ALARM_TITLE\" > '%s/env.txt'\n",
              s_tmp, s_tmp);
    s_write_file (path, script, 0755);
    snprintf (path, sizeof path, "%s/exit3.sh", s_scripts);
    s_write_file (path, "#!/bin/sh\necho 'first line'\necho 'pager unreachable' >&2\nexit 3\n", 0755);
    snprintf (path, sizeof path, "%s/slow.sh", s_scripts);
    snprintf (script, sizeof script, "#!/bin/sh\nsleep 30 &\necho $! > '%s/sleep.pid'\nwait\n", s_tmp);
    s_write_file (path, script, 0755);

    char *report = NULL;
    XXL_CHECK (s_submit_wait (alarms, "script:ok.sh", &report) == 1);
    XXL_CHECK_STR (report, "script ok.sh: sent");
    free (report);
    xxl_alarm_t alarm = s_alarm ();
    char *json = xxl_alarms_json (&alarm);
    snprintf (path, sizeof path, "%s/stdin.json", s_tmp);
    XXL_CHECK_STR (s_read_file (path), json);
    free (json);
    snprintf (path, sizeof path, "%s/env.txt", s_tmp);
    XXL_CHECK_STR (s_read_file (path), "42|1001|demo-app|nightly \"report\" line2|500|1|xxl job alarm\n");

    //  An absolute path inside the folder
    char target [600];
    snprintf (target, sizeof target, "script:%s/ok.sh", s_scripts);
    XXL_CHECK (s_submit_wait (alarms, target, &report) == 1);
    free (report);

    XXL_CHECK (s_submit_wait (alarms, "script:exit3.sh", &report) == 0);
    XXL_CHECK_STR (report, "script exit3.sh: failed: exit status 3: pager unreachable");
    free (report);

    XXL_CHECK (s_submit_wait (alarms, "script:missing.sh", &report) == 0);
    XXL_CHECK_HAS (report, "script missing.sh: failed: cannot run ");
    XXL_CHECK_HAS (report, "No such file or directory");
    free (report);

    s_set ("script_timeout", "300");
    int64_t start = s_mono_ms ();
    XXL_CHECK (s_submit_wait (alarms, "script:slow.sh", &report) == 0);
    XXL_CHECK_STR (report, "script slow.sh: failed: timed out after 300 ms (killed)");
    XXL_CHECK (s_mono_ms () - start < 5000);
    free (report);
    //  The whole process group went: the script's own child too
    snprintf (path, sizeof path, "%s/sleep.pid", s_tmp);
    int child = atoi (s_read_file (path));
    XXL_CHECK (child > 0);
    XXL_CHECK (child > 0 && s_wait_dead (child) == 0);
    s_set ("script_timeout", NULL);

    //  Confinement holds at send time too
    XXL_CHECK (s_submit_wait (alarms, "script:/bin/true", &report) == 0);
    XXL_CHECK_HAS (report, "script /bin/true: failed: script /bin/true is outside the alarm script folder");
    free (report);
}

static void
test_multi (xxl_alarms_t *alarms)
{
    sink_t *http = sink_http_new ();
    if (!http)
        return;
    char targets [256], allow [64];
    snprintf (targets, sizeof targets, "webhook:http://127.0.0.1:%d/a, script:exit3.sh, sms:1",
              sink_port (http));
    snprintf (allow, sizeof allow, "http://127.0.0.1:%d/", sink_port (http));
    s_set ("webhook_allow", allow);
    xxl_alarm_t alarm = s_alarm ();
    char *report = NULL;
    //  The synchronous form
    XXL_CHECK (xxl_alarms_send (alarms, &alarm, targets, &report) == 0);
    char want [512];
    snprintf (want, sizeof want,
              "webhook http://127.0.0.1:%d/a: sent\n"
              "script exit3.sh: failed: exit status 3: pager unreachable\n"
              "sms:1: failed: unknown alarm kind 'sms' in target 'sms:1'; known: email, script, webhook",
              sink_port (http));
    XXL_CHECK_STR (report, want);
    free (report);
    XXL_CHECK (sink_wait (http, 1, WAIT_MS, NULL) == 0);
    XXL_CHECK (xxl_alarms_send (alarms, &alarm, "", &report) == 1);
    XXL_CHECK_STR (report, "no alarm target");
    free (report);
    s_set ("webhook_allow", NULL);
    sink_destroy (&http);
}

//  Opens the FIFO for writing once the blocked script reads it; bounded
static int
s_release (const char *fifo)
{
    int64_t until = s_mono_ms () + WAIT_MS;
    while (s_mono_ms () < until) {
        int fd = open (fifo, O_WRONLY | O_NONBLOCK);
        if (fd >= 0) {
            int rc = write (fd, "go\n", 3) == 3? 0: -1;
            close (fd);
            return rc;
        }
        struct pollfd none;
        poll (&none, 0, 5);             //  not a fixed wait: a poll tick
    }
    return -1;
}

//  Waits until the queue holds count alarms; bounded
static int
s_wait_queued (xxl_alarms_t *alarms, size_t count)
{
    int64_t until = s_mono_ms () + WAIT_MS;
    while (xxl_alarms_queued (alarms) != count)
        if (s_mono_ms () > until)
            return -1;
        else {
            struct pollfd none;
            poll (&none, 0, 2);
        }
    return 0;
}

static void
test_queue (const char *dir)
{
    xxl_alarms_t *alarms = xxl_alarms_new (dir, &s_host);
    if (!alarms)
        return;
    char fifo [512], path [512], script [1024];
    snprintf (fifo, sizeof fifo, "%s/release", s_tmp);
    unlink (fifo);
    XXL_CHECK (mkfifo (fifo, 0600) == 0);
    snprintf (path, sizeof path, "%s/block.sh", s_scripts);
    snprintf (script, sizeof script, "#!/bin/sh\nread line < '%s'\n", fifo);
    s_write_file (path, script, 0755);

    xxl_alarms_set_queue_limit (alarms, 2);
    xxl_alarm_t alarm = s_alarm ();
    struct pollfd item = { xxl_alarms_fd (alarms), POLLIN, 0 };
    XXL_CHECK (poll (&item, 1, 0) == 0);
    XXL_CHECK (xxl_alarms_take (alarms, NULL, NULL, NULL) == -1);
    XXL_CHECK (xxl_alarms_submit (alarms, &alarm, "script:block.sh", 100) == 0);
    XXL_CHECK (s_wait_queued (alarms, 0) == 0);       //  the worker took it
    XXL_CHECK (xxl_alarms_submit (alarms, &alarm, "script:ok.sh", 101) == 0);
    XXL_CHECK (xxl_alarms_submit (alarms, &alarm, "script:ok.sh", 102) == 0);
    XXL_CHECK (xxl_alarms_queued (alarms) == 2);
    XXL_CHECK (xxl_alarms_submit (alarms, &alarm, "script:ok.sh", 103) == -1);    //  full
    XXL_CHECK (poll (&item, 1, 0) == 0);
    XXL_CHECK (s_release (fifo) == 0);
    for (int64_t want = 100; want <= 102; want++) {
        int64_t tag = 0;
        int ok = 0;
        char *report = NULL;
        XXL_CHECK (s_result (alarms, &tag, &ok, &report) == 0);
        XXL_CHECK (tag == want && ok == 1);
        free (report);
    }
    XXL_CHECK (poll (&item, 1, 0) == 0);
    XXL_CHECK (xxl_alarms_submit (alarms, &alarm, "script:ok.sh", 104) == 0);    //  room again
    int64_t tag = 0;
    int ok = 0;
    XXL_CHECK (s_result (alarms, &tag, &ok, NULL) == 0 && tag == 104);

    //  Shutdown with one alarm in flight (blocked until its timeout) and
    //  two queued: bounded by the script timeout, the queued ones dropped
    s_set ("script_timeout", "1500");
    XXL_CHECK (xxl_alarms_submit (alarms, &alarm, "script:block.sh", 200) == 0);
    XXL_CHECK (s_wait_queued (alarms, 0) == 0);
    XXL_CHECK (xxl_alarms_submit (alarms, &alarm, "script:ok.sh", 201) == 0);
    XXL_CHECK (xxl_alarms_submit (alarms, &alarm, "script:ok.sh", 202) == 0);
    int64_t start = s_mono_ms ();
    xxl_alarms_destroy (&alarms);
    XXL_CHECK (alarms == NULL);
    XXL_CHECK (s_mono_ms () - start < 5000);
    XXL_CHECK (s_log_has ("2 queued alarm(s) dropped at shutdown"));
    s_set ("script_timeout", NULL);
    unlink (fifo);
}

int
main (void)
{
    char buf1 [1024], buf2 [1024], buf3 [1024];
    const char *dir = s_dir ("XXL_TEST_ALARMS", "plugins/alarms/.libs",
                             "plugins/alarms/.libs", buf1, sizeof buf1);
    const char *test_dir = getenv ("XXL_TEST_ALARM_PLUGINS");
    if (!test_dir || !*test_dir) {
        const char *plugins = getenv ("XXL_TEST_PLUGINS");
        if (plugins && *plugins) {
            //  XXL_TEST_PLUGINS is .../tests/plugins/.libs
            snprintf (buf3, sizeof buf3, "%s", plugins);
            snprintf (buf2, sizeof buf2, "%s/alarms/.libs", dirname (dirname (buf3)));
            test_dir = buf2;
        }
        else
            test_dir = s_dir ("XXL_TEST_ALARM_PLUGINS", "tests/alarms/.libs",
                              "tests/alarms/.libs", buf2, sizeof buf2);
    }
    //  The HTTP and SMTP sinks are on loopback: no proxy in between
    unsetenv ("http_proxy");
    unsetenv ("HTTP_PROXY");
    unsetenv ("https_proxy");
    unsetenv ("HTTPS_PROXY");
    unsetenv ("all_proxy");
    unsetenv ("ALL_PROXY");
    const char *tmp = getenv ("TMPDIR");
    snprintf (s_tmp, sizeof s_tmp, "%s/xxl-alarms-XXXXXX", tmp && *tmp? tmp: "/tmp");
    if (!mkdtemp (s_tmp)) {
        perror ("mkdtemp");
        return 2;
    }
    snprintf (s_scripts, sizeof s_scripts, "%s/scripts", s_tmp);
    mkdir (s_scripts, 0700);

    test_json ();
    test_loader (dir, test_dir);
    test_allow_log (dir);
    xxl_alarms_t *alarms = xxl_alarms_new (dir, &s_host);
    XXL_CHECK (alarms != NULL);
    if (alarms) {
        test_targets (alarms);
        test_allow (alarms);
        test_webhook (alarms);
        test_webhook_address (alarms);
        test_email (alarms);
        test_script (alarms);
        test_multi (alarms);
        xxl_alarms_destroy (&alarms);
    }
    test_queue (dir);

    char command [600];
    snprintf (command, sizeof command, "rm -rf '%s'", s_tmp);
    if (system (command) != 0)
        fprintf (stderr, "cannot remove %s\n", s_tmp);
    return xxl_test_done ();
}
