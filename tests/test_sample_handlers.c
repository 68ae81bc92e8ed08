/*  test_sample_handlers.c -- the shipped XXL-JOB sample handlers
    (plugins/handlers/http.c, command.c, demo.c), run by the agent's
    executor isolated (xxl-runner) and in process.

    demoJobHandler2 (a per-job lifecycle): its init's line in the job's
    first run's log only, the runs counted on the state it made, per job.

    commandJobHandler: `echo hi` succeeds with hi in the log; `false`
    fails "command exit value(1) is failed"; stderr is logged too; quoted
    words; a missing program and an empty param fail saying so; a long
    sleep is stopped by the run's timeout (502) and by a kill, and its
    process is gone.

    httpJobHandler, against a local HTTP listener on an ephemeral port
    (tests/alarms/sinks.c): GET 200 succeeds and logs the body; 404 fails;
    POST sends its data; the JSON form (method, data, headers); a refused
    connection fails; a server that never answers is cut by the run's
    timeout.

    httpJobHandler's XXL_HTTP_ALLOW, isolated and in process (an executor
    started with each value, as the runner gets the agent's environment):
    unset, loopback is called but 169.254.169.254, fe80::, fd00:ec2::254
    and their IPv4-mapped forms are refused, and a name the resolver
    gives 169.254.169.254 is refused (in process: this test's getaddrinfo
    answers for metadata.xxl-test.invalid); with "127.0.0.1" the listener
    is called, and redirects to it followed; with a list naming neither
    it nor localhost, both are refused and a bad entry is logged; with
    "localhost", http://localhost/ is called but its redirect to
    127.0.0.1 refused.  A refusal makes no request (the listener counts).

    The AI handlers (ai.so: ollamaJobHandler, openClawJobHandler,
    difyWorkflowJobHandler), isolated and in process, against a listener
    of their own that answers as Ollama, an OpenAI-compatible server and
    Dify would: the request (method, path, Content-Type, the Bearer key,
    the JSON body: model, system prompt and user input, stream false,
    inputs/user/response_mode blocking), the base URL, key and model from
    the environment or the param (the environment's key never sent to a
    param's base URL), the input and output logged; each failure: an
    empty param, bad JSON, no input, no baseUrl/apiKey, a refused
    connection, a status not 2xx (with the body's start), a malformed
    answer, a failed workflow, an answer over 4 MiB, the request's own
    timeout (the param's, XXL_AI_TIMEOUT) and the run's; XXL_HTTP_ALLOW
    refusing each handler's call and allowing it in the same setup.

    Needs XXL_BUILD (the plugins in $XXL_BUILD/plugins/handlers/.libs) and
    XXL_RUNNER, as make check sets them.
*/

#include "xxl_executor.h"
#include "xxl_handlers.h"
#include "xxl_logread.h"
#include "xxl_runlog.h"
#include "alarms/sinks.h"
#include "xxl_test.h"

#include <czmq.h>
#include <jansson.h>
#include <dlfcn.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#define S_METADATA_NAME "metadata.xxl-test.invalid"

//  The resolver, as libcurl in this process calls it (the test exports
//  it): S_METADATA_NAME resolves to the cloud metadata address
int
getaddrinfo (const char *node, const char *service, const struct addrinfo *hints,
             struct addrinfo **res)
{
    typedef int (real_fn) (const char *, const char *, const struct addrinfo *,
                           struct addrinfo **);
    real_fn *real = (real_fn *) dlsym (RTLD_NEXT, "getaddrinfo");
    if (node && strcasecmp (node, S_METADATA_NAME) == 0)
        node = "169.254.169.254";
    return real? real (node, service, hints, res): EAI_FAIL;
}

static char s_logdir [256];
static xxl_handlers_t *s_handlers;
static xxl_result_t s_results [256];
static int s_count = 0;
static int64_t s_next_log_id = 5000;

static xxl_result_t *
s_wait (xxl_executor_t *executor, int64_t log_id, int ms)
{
    int64_t until = zclock_mono () + ms;
    while (1) {
        xxl_result_t result;
        while (xxl_executor_take (executor, &result) == 0) {
            if (s_count < 256)
                s_results [s_count++] = result;
            else
                free (result.msg);
        }
        for (int i = 0; i < s_count; i++)
            if (s_results [i].log_id == log_id)
                return &s_results [i];
        if (zclock_mono () >= until)
            return NULL;
        struct pollfd item = { xxl_executor_fd (executor), POLLIN, 0 };
        poll (&item, 1, 50);
    }
}

static int64_t
s_trigger (xxl_executor_t *executor, int64_t job_id, const char *handler, const char *param,
           int timeout_s)
{
    xxl_trigger_t trigger = { 0 };
    trigger.job_id = job_id;
    trigger.log_id = s_next_log_id++;
    trigger.log_date_time = (int64_t) time (NULL) * 1000;
    trigger.handler = handler;
    trigger.params = param;
    trigger.glue_type = "BEAN";
    trigger.timeout_s = timeout_s;
    trigger.shard_total = 1;
    char msg [256];
    if (xxl_executor_run (executor, &trigger, msg, sizeof msg)) {
        printf ("FAIL: trigger refused: %s\n", msg);
        return -1;
    }
    return trigger.log_id;
}

static int
s_log_has (int64_t log_id, const char *text)
{
    int to_line;
    char err [256];
    char *content = xxl_logread_max (s_logdir, log_id, (int64_t) time (NULL) * 1000, 1,
                                         1024 * 1024, &to_line, err, sizeof err);
    int found = content && strstr (content, text);
    free (content);
    return found;
}

static int
s_msg_is (xxl_result_t *result, int code, const char *text)
{
    int ok = result && result->code == code
          && (!text || (result->msg && strstr (result->msg, text)));
    if (!ok)
        printf ("  got %d %s (want %d %s)\n", result? result->code: -1,
                result && result->msg? result->msg: "(null)", code, text? text: "");
    return ok;
}

//  The pid written to path, 0 if none
static int
s_pid_in (const char *path)
{
    FILE *file = fopen (path, "r");
    int pid = 0;
    if (file) {
        if (fscanf (file, "%d", &pid) != 1)
            pid = 0;
        fclose (file);
    }
    return pid;
}

//  1 if pid is gone (or a zombie)
static int
s_gone (int pid)
{
    char path [64], state = 'X';
    snprintf (path, sizeof path, "/proc/%d/stat", pid);
    FILE *file = fopen (path, "r");
    if (file) {
        int p;
        char comm [64];
        if (fscanf (file, "%d %63s %c", &p, comm, &state) != 3)
            state = '?';
        fclose (file);
    }
    return state == 'X' || state == 'Z';
}

//  Waits up to ms for path to hold a pid: the shell's "echo $$ > path"
//  makes the file before it writes to it, so a file seen empty is waited
//  on too (not taken for a run that never started)
static int
s_await_file (const char *path, int ms)
{
    int64_t until = zclock_mono () + ms;
    while (s_pid_in (path) <= 0 && zclock_mono () < until)
        zclock_sleep (20);
    return s_pid_in (path) > 0;
}

static void
test_command (xxl_executor_t *executor, const char *mode, int64_t job)
{
    printf ("  commandJobHandler (%s)\n", mode);
    int64_t id = s_trigger (executor, job, "commandJobHandler", "echo hi", 0);
    xxl_result_t *result = s_wait (executor, id, 10000);
    XXL_CHECK (s_msg_is (result, 200, NULL));
    XXL_CHECK (s_log_has (id, "] hi\n"));

    id = s_trigger (executor, job, "commandJobHandler", "false", 0);
    XXL_CHECK (s_msg_is (s_wait (executor, id, 10000), 500, "command exit value(1) is failed"));

    //  No shell unless asked for; quoted words; stderr logged
    id = s_trigger (executor, job, "commandJobHandler",
                    "sh -c 'echo out-$0; echo err-line >&2; exit 3' \"two words\"", 0);
    result = s_wait (executor, id, 10000);
    XXL_CHECK (s_msg_is (result, 500, "command exit value(3) is failed"));
    XXL_CHECK (s_log_has (id, "] out-two words\n") && s_log_has (id, "] err-line\n"));
    id = s_trigger (executor, job, "commandJobHandler", "echo $HOME|wc", 0);
    XXL_CHECK (s_msg_is (s_wait (executor, id, 10000), 200, NULL));
    XXL_CHECK (s_log_has (id, "] $HOME|wc\n"));

    id = s_trigger (executor, job, "commandJobHandler", "no-such-command-xxl --x", 0);
    XXL_CHECK (s_msg_is (s_wait (executor, id, 10000), 500,
                         "command 'no-such-command-xxl' not found"));
    id = s_trigger (executor, job, "commandJobHandler", "  ", 0);
    XXL_CHECK (s_msg_is (s_wait (executor, id, 10000), 500, "command empty."));

    //  Timeout: 502 in about a second, the command's process gone
    char pidfile [512], cmd [1024];
    snprintf (pidfile, sizeof pidfile, "%s/%" PRId64 "-timeout.pid", s_logdir, job);
    snprintf (cmd, sizeof cmd, "sh -c 'echo $$ > %s; exec sleep 30'", pidfile);
    int64_t start = zclock_mono ();
    id = s_trigger (executor, job, "commandJobHandler", cmd, 1);
    result = s_wait (executor, id, 10000);
    int64_t took = zclock_mono () - start;
    printf ("  timeout of 1 s: %d after %" PRId64 " ms\n", result? result->code: -1, took);
    XXL_CHECK (s_msg_is (result, 502, NULL) && took < 3000);
    int pid = s_pid_in (pidfile);
    zclock_sleep (100);
    XXL_CHECK (pid > 0 && s_gone (pid));

    //  Kill: the run fails with the reason, the command's process gone
    snprintf (pidfile, sizeof pidfile, "%s/%" PRId64 "-kill.pid", s_logdir, job);
    snprintf (cmd, sizeof cmd, "sh -c 'echo $$ > %s; exec sleep 30'", pidfile);
    id = s_trigger (executor, job + 1, "commandJobHandler", cmd, 0);
    XXL_CHECK (s_await_file (pidfile, 5000));
    start = zclock_mono ();
    XXL_CHECK (xxl_executor_kill (executor, job + 1, "stop it") == 0);
    result = s_wait (executor, id, 5000);
    took = zclock_mono () - start;
    printf ("  kill: %d after %" PRId64 " ms\n", result? result->code: -1, took);
    XXL_CHECK (s_msg_is (result, 500, "stop it") && took < 2000);
    pid = s_pid_in (pidfile);
    zclock_sleep (100);
    XXL_CHECK (pid > 0 && s_gone (pid));
}

static void
test_demo2 (xxl_executor_t *executor, const char *mode, int64_t job)
{
    printf ("  demoJobHandler2 (%s)\n", mode);
    int64_t first = s_trigger (executor, job, "demoJobHandler2", "", 0);
    XXL_CHECK (s_msg_is (s_wait (executor, first, 10000), 200, NULL));
    int64_t second = s_trigger (executor, job, "demoJobHandler2", "", 0);
    XXL_CHECK (s_msg_is (s_wait (executor, second, 10000), 200, NULL));
    int64_t other = s_trigger (executor, job + 1, "demoJobHandler2", "", 0);
    XXL_CHECK (s_msg_is (s_wait (executor, other, 10000), 200, NULL));
    char line [64];
    snprintf (line, sizeof line, "] init: job %" PRId64 "\n", job);
    XXL_CHECK (s_log_has (first, line) && s_log_has (first, "] run 1 of this job since its init\n"));
    XXL_CHECK (!s_log_has (second, "] init: job") && s_log_has (second, "] run 2 of this job since its init\n"));
    XXL_CHECK (s_log_has (other, "] init: job") && s_log_has (other, "] run 1 of this job since its init\n"));
}

static void
test_http (xxl_executor_t *executor, const char *mode, int64_t job, sink_t *sink, int *seen)
{
    printf ("  httpJobHandler (%s)\n", mode);
    char param [1024];
    sink_record_t record;
    int port = sink_port (sink);

    //  GET 200: success, the body logged
    sink_set_mode (sink, SINK_HTTP_STATUS, 200);
    snprintf (param, sizeof param, "url: http://127.0.0.1:%d/get-me\nmethod: GET", port);
    int64_t id = s_trigger (executor, job, "httpJobHandler", param, 0);
    XXL_CHECK (s_msg_is (s_wait (executor, id, 10000), 200, "HTTP status 200"));
    XXL_CHECK (s_log_has (id, "StatusCode: 200") && s_log_has (id, "] ok\n"));
    XXL_CHECK (sink_wait (sink, ++*seen, 2000, &record) == 0
               && streq (record.method, "GET") && streq (record.path, "/get-me"));

    //  404: failure
    sink_set_mode (sink, SINK_HTTP_STATUS, 404);
    snprintf (param, sizeof param, "url: http://127.0.0.1:%d/missing\nmethod: get\n", port);
    id = s_trigger (executor, job, "httpJobHandler", param, 0);
    XXL_CHECK (s_msg_is (s_wait (executor, id, 10000), 500, "HTTP status 404"));
    XXL_CHECK (s_log_has (id, "StatusCode: 404") && s_log_has (id, "] boom\n"));
    ++*seen;

    //  POST sends its data
    sink_set_mode (sink, SINK_HTTP_STATUS, 200);
    snprintf (param, sizeof param, "url: http://127.0.0.1:%d/post\nmethod: POST\n"
              "data: {\"k\": \"v1\"}\n", port);
    id = s_trigger (executor, job, "httpJobHandler", param, 0);
    XXL_CHECK (s_msg_is (s_wait (executor, id, 10000), 200, NULL));
    XXL_CHECK (sink_wait (sink, ++*seen, 2000, &record) == 0 && streq (record.method, "POST")
               && streq (record.body, "{\"k\": \"v1\"}")
               && strstr (record.content_type, "application/json"));

    //  The JSON form (XXL-JOB 3.x)
    snprintf (param, sizeof param, "{\"url\": \"http://127.0.0.1:%d/json\", \"method\": \"put\","
              " \"data\": \"caf\\u00e9 \\\"q\\\"\", \"contentType\": \"text/plain\","
              " \"headers\": {\"X-T\": \"1\"}, \"timeout\": 5000}", port);
    id = s_trigger (executor, job, "httpJobHandler", param, 0);
    XXL_CHECK (s_msg_is (s_wait (executor, id, 10000), 200, NULL));
    XXL_CHECK (sink_wait (sink, ++*seen, 2000, &record) == 0 && streq (record.method, "PUT")
               && streq (record.path, "/json") && streq (record.body, "caf\xc3\xa9 \"q\"")
               && streq (record.content_type, "text/plain"));
    id = s_trigger (executor, job, "httpJobHandler", "{\"url\": 1,", 0);
    XXL_CHECK (s_msg_is (s_wait (executor, id, 10000), 500, "not a valid JSON object"));
    id = s_trigger (executor, job, "httpJobHandler", "method: GET", 0);
    XXL_CHECK (s_msg_is (s_wait (executor, id, 10000), 500, "no url"));

    //  A transport error fails the run: nothing listens on that port (a
    //  plain socket, closed at once; a ZeroMQ listener closes later, in its
    //  I/O thread, and could still take the request: libzmq 4.3 aborts on
    //  a peer that speaks HTTP)
    int closed = 1;
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
    socklen_t addrlen = sizeof addr;
    if (fd >= 0 && bind (fd, (struct sockaddr *) &addr, sizeof addr) == 0
    &&  getsockname (fd, (struct sockaddr *) &addr, &addrlen) == 0)
        closed = ntohs (addr.sin_port);
    if (fd >= 0)
        close (fd);
    snprintf (param, sizeof param, "http://127.0.0.1:%d/", closed);
    id = s_trigger (executor, job, "httpJobHandler", param, 0);
    XXL_CHECK (s_msg_is (s_wait (executor, id, 10000), 500, "request failed"));

    //  A server that never answers: the run's timeout ends it
    sink_set_mode (sink, SINK_HTTP_HANG, 0);
    snprintf (param, sizeof param, "url: http://127.0.0.1:%d/hang\nmethod: GET", port);
    int64_t start = zclock_mono ();
    id = s_trigger (executor, job, "httpJobHandler", param, 1);
    xxl_result_t *result = s_wait (executor, id, 10000);
    int64_t took = zclock_mono () - start;
    printf ("  hanging server, timeout 1 s: %d after %" PRId64 " ms\n",
            result? result->code: -1, took);
    XXL_CHECK (s_msg_is (result, 502, NULL) && took < 3500);
    ++*seen;
    sink_set_mode (sink, SINK_HTTP_STATUS, 200);
}

//  An executor whose runs see XXL_HTTP_ALLOW = list (NULL: unset): the
//  isolated runner gets the environment the executor started with
static xxl_executor_t *
s_executor (int in_process, const char *list)
{
    if (list)
        setenv ("XXL_HTTP_ALLOW", list, 1);
    else
        unsetenv ("XXL_HTTP_ALLOW");
    xxl_executor_config_t config = { 0 };
    config.logdir = s_logdir;
    config.in_process = in_process;
    config.allow_glue = 1;
    config.idle_reap_s = 90;
    return xxl_executor_new (&config, s_handlers);
}

//  httpJobHandler's calls under XXL_HTTP_ALLOW, in order: the executor
//  starts again when the list changes
#define S_LOOP          "http://127.0.0.1:%d/allowed"
#define S_BY_NAME       "http://localhost:%d/by-name"
#define S_NOT_LISTED    "is not allowed (not in XXL_HTTP_ALLOW)"
#define S_METADATA      "is not allowed (a link-local or cloud metadata address"
#define S_NEITHER       "10.0.0.0/8, *.example.com fd00::/8 300.1.2.3/8"
static const struct {
    const char *list;                   //  XXL_HTTP_ALLOW; NULL: unset
    const char *url;                    //  %d: the listener's port
    int status;                         //  what the listener answers
    int code;                           //  the run's result
    const char *text;                   //  in the run's message (and log if a refusal)
    int requests;                       //  how many the listener gets
    int in_process;                     //  1: only there (this getaddrinfo)
} s_calls [] = {
    //  Unset: loopback is called; link-local and metadata addresses never,
    //  nor a name that resolves to one
    { NULL, S_LOOP, 200, 200, "HTTP status 200", 1, 0 },
    { NULL, "http://169.254.169.254/latest/meta-data/", 200, 500,
      "refused: host 169.254.169.254 is not allowed (a link-local or cloud metadata"
      " address; XXL_HTTP_ALLOW may name it)", 0, 0 },
    { NULL, "http://169.254.0.1:8080/", 200, 500, S_METADATA, 0, 0 },
    { NULL, "http://[fe80::1]/", 200, 500, "refused: host fe80::1 " S_METADATA, 0, 0 },
    { NULL, "http://[::ffff:169.254.169.254]/", 200, 500, S_METADATA, 0, 0 },
    { NULL, "http://[fd00:ec2::254]/", 200, 500, S_METADATA, 0, 0 },
    { NULL, "http://100.100.100.200/", 200, 500, S_METADATA, 0, 0 },
    { NULL, "http://" S_METADATA_NAME "/latest/", 200, 500,
      "refused: host " S_METADATA_NAME " (169.254.169.254) " S_METADATA, 0, 1 },
    //  127.0.0.1: called, and its redirects to itself followed
    { "127.0.0.1", S_LOOP, 200, 200, "HTTP status 200", 1, 0 },
    { "127.0.0.1", S_LOOP, 302, 500, "Maximum (5) redirects followed", 6, 0 },
    //  A list naming neither 127.0.0.1 nor localhost: no request at all;
    //  its bad entry logged
    { S_NEITHER, S_LOOP, 200, 500, "refused: host 127.0.0.1 " S_NOT_LISTED, 0, 0 },
    { S_NEITHER, S_BY_NAME, 200, 500, "refused: host localhost (", 0, 0 },
    { S_NEITHER, "http://169.254.169.254/", 200, 500,
      "refused: host 169.254.169.254 " S_NOT_LISTED, 0, 0 },
    { S_NEITHER, "http://" S_METADATA_NAME "/", 200, 500, S_NOT_LISTED, 0, 1 },
    //  "localhost": that name is called, its redirect to 127.0.0.1 refused
    //  after the first answer; a metadata address needs an address entry,
    //  even under a name listed
    { "localhost *.xxl-test.invalid", S_BY_NAME, 200, 200, "HTTP status 200", 1, 0 },
    { "localhost *.xxl-test.invalid", S_BY_NAME, 302, 500,
      "refused: host 127.0.0.1 " S_NOT_LISTED, 1, 0 },
    { "localhost *.xxl-test.invalid", S_LOOP, 200, 500, "refused: host 127.0.0.1", 0, 0 },
    { "localhost *.xxl-test.invalid", "http://" S_METADATA_NAME "/", 200, 500,
      S_METADATA ": only an address entry", 0, 1 },
};

static void
test_http_allow (int in_process, int64_t job, sink_t *sink, int *seen)
{
    printf ("  httpJobHandler XXL_HTTP_ALLOW (%s)\n", in_process? "in process": "isolated");
    xxl_executor_t *executor = NULL;
    const char *last = NULL;            //  the executor's list
    for (size_t i = 0; i < sizeof s_calls / sizeof s_calls [0]; i++) {
        if (s_calls [i].in_process && !in_process)
            continue;
        const char *list = s_calls [i].list;
        if (!executor || !(list? last && streq (list, last): !last)) {
            xxl_executor_destroy (&executor);
            executor = s_executor (in_process, list);
            last = list;
            XXL_CHECK (executor != NULL);
            if (!executor)
                return;
        }
        char url [256];
        snprintf (url, sizeof url, s_calls [i].url, sink_port (sink));
        sink_set_mode (sink, SINK_HTTP_STATUS, s_calls [i].status);
        int64_t id = s_trigger (executor, job, "httpJobHandler", url, 10);
        int ok = s_msg_is (s_wait (executor, id, 15000), s_calls [i].code, s_calls [i].text);
        if (!ok)
            printf ("  (%s with XXL_HTTP_ALLOW=%s)\n", url,
                    list? list: "(unset)");
        XXL_CHECK (ok);
        if (s_calls [i].code != 200)    //  a failure's message is logged too
            XXL_CHECK (s_log_has (id, s_calls [i].text));
        if (list && streq (list, S_NEITHER))
            XXL_CHECK (s_log_has (id, "XXL_HTTP_ALLOW entry '300.1.2.3/8' ignored: not an"
                                      " IPv4 or IPv6 address"));
        //  The listener records a request before it answers
        *seen += s_calls [i].requests;
        XXL_CHECK (sink_count (sink) == *seen);
    }
    xxl_executor_destroy (&executor);
    //  A proxy of the agent's environment is used (here a dead one: the
    //  run fails to connect and the listener gets nothing), and judged as
    //  the connection: a loopback proxy is no metadata address
    char proxy [64];
    snprintf (proxy, sizeof proxy, "http://127.0.0.1:%d", sink_dead_port ());
    setenv ("ALL_PROXY", proxy, 1);
    executor = s_executor (in_process, NULL);
    XXL_CHECK (executor != NULL);
    if (executor) {
        char url [256];
        snprintf (url, sizeof url, S_LOOP, sink_port (sink));
        int64_t id = s_trigger (executor, job, "httpJobHandler", url, 10);
        XXL_CHECK (s_msg_is (s_wait (executor, id, 15000), 500, "request failed: "));
        XXL_CHECK (!s_log_has (id, "refused"));
        XXL_CHECK (sink_count (sink) == *seen);
        xxl_executor_destroy (&executor);
    }
    unsetenv ("ALL_PROXY");
    sink_set_mode (sink, SINK_HTTP_STATUS, 200);
    unsetenv ("XXL_HTTP_ALLOW");
}

//  --------------------------------------------------------------------
//  The AI handlers (ai.so)

#define S_OLLAMA_ANSWER "{\"model\": \"m\", \"message\": {\"role\": \"assistant\", " \
                        "\"content\": \"line one\\nline two\"}, \"done\": true}"
#define S_OPENAI_ANSWER "{\"id\": \"c1\", \"choices\": [{\"index\": 0, \"message\": " \
                        "{\"role\": \"assistant\", \"content\": \"go to Hangzhou\"}}]}"
#define S_DIFY_ANSWER   "{\"workflow_run_id\": \"w1\", \"task_id\": \"t1\", \"data\": " \
                        "{\"id\": \"w1\", \"status\": \"succeeded\", \"outputs\": " \
                        "{\"text\": \"top three\"}, \"error\": null}}"

//  Runs handler with param (the listener answering status and body) and
//  checks its result; returns the log id
static int64_t
s_ai_run (xxl_executor_t *executor, int64_t job, sink_t *sink, const char *handler,
          const char *param, int status, const char *body, int code, const char *text)
{
    sink_set_mode (sink, SINK_HTTP_STATUS, status);
    if (status >= 200 && status < 300)
        sink_set_body (sink, body);
    else
        sink_set_error_body (sink, body? body: "boom");
    int64_t id = s_trigger (executor, job, handler, param, 10);
    int ok = s_msg_is (s_wait (executor, id, 15000), code, text);
    if (!ok)
        printf ("  (%s with %s)\n", handler, param);
    XXL_CHECK (ok);
    if (code != 200 && text)            //  a failure's message is logged too
        XXL_CHECK (s_log_has (id, text));
    return id;
}

//  The count-th request the listener got, its body parsed (NULL if none)
static json_t *
s_ai_request (sink_t *sink, int count, sink_record_t *record)
{
    if (sink_wait (sink, count, 5000, record))
        return NULL;
    return json_loads (record->body, 0, NULL);
}

//  1 when the request is a chat of model with (system, user) as its messages
static int
s_ai_chat_is (json_t *body, const char *model, const char *system, const char *user)
{
    const char *role0 = NULL, *content0 = NULL, *role1 = NULL, *content1 = NULL;
    const char *got = NULL;
    int stream = 1, more = 1;
    json_t *messages = NULL;
    if (!body || json_unpack (body, "{s:s, s:o, s:b}", "model", &got, "messages", &messages,
                              "stream", &stream)
    ||  json_unpack (messages, "[{s:s, s:s}, {s:s, s:s}]", "role", &role0, "content", &content0,
                     "role", &role1, "content", &content1))
        return 0;
    more = json_array_size (messages) != 2;
    int ok = streq (got, model) && !stream && !more && streq (role0, "system")
          && streq (content0, system) && streq (role1, "user") && streq (content1, user);
    if (!ok) {
        char *text = json_dumps (body, 0);
        printf ("  request body: %s\n", text? text: "?");
        free (text);
    }
    return ok;
}

static void
test_ai (int in_process, int64_t job)
{
    printf ("  AI handlers (%s)\n", in_process? "in process": "isolated");
    sink_t *sink = sink_http_new ();
    XXL_CHECK (sink != NULL);
    if (!sink)
        return;
    int port = sink_port (sink), seen = 0;
    char base [64], param [1024];
    snprintf (base, sizeof base, "http://127.0.0.1:%d", port);
    //  The environment the agent started with: Ollama's and the OpenAI
    //  server's base URL, the OpenAI key
    setenv ("XXL_OLLAMA_BASE_URL", base, 1);
    setenv ("XXL_OPENAI_BASE_URL", base, 1);
    setenv ("XXL_OPENAI_API_KEY", "env-key", 1);
    xxl_executor_t *executor = s_executor (in_process, NULL);
    XXL_CHECK (executor != NULL);
    if (!executor) {
        sink_destroy (&sink);
        return;
    }
    sink_record_t record;
    json_t *body;

    //  ollamaJobHandler: the environment's base URL, the default model and
    //  prompt; the input and output logged line by line
    int64_t id = s_ai_run (executor, job, sink, "ollamaJobHandler",
                           "{\"input\": \"hello\\nworld\"}", 200, S_OLLAMA_ANSWER, 200, NULL);
    body = s_ai_request (sink, ++seen, &record);
    XXL_CHECK (streq (record.method, "POST") && streq (record.path, "/api/chat")
               && streq (record.content_type, "application/json") && !*record.authorization);
    XXL_CHECK (s_ai_chat_is (body, "qwen3.5:0.8b", "你是一个研发工程师，擅长解决技术类问题。",
                             "hello\nworld"));
    json_decref (body);
    XXL_CHECK (s_log_has (id, "] Input: hello\n") && s_log_has (id, "] world\n")
               && s_log_has (id, "] Output: line one\n") && s_log_has (id, "] line two\n"));
    //  The param's model, prompt and base URL (a trailing '/' is fine)
    snprintf (param, sizeof param, "{\"input\": \"x\", \"prompt\": \"be brief\", \"model\":"
              " \"llama3\", \"baseUrl\": \"%s/\"}", base);
    s_ai_run (executor, job, sink, "ollamaJobHandler", param, 200, S_OLLAMA_ANSWER, 200, NULL);
    body = s_ai_request (sink, ++seen, &record);
    XXL_CHECK (streq (record.path, "/api/chat") && s_ai_chat_is (body, "llama3", "be brief", "x"));
    json_decref (body);

    //  The param's failures: nothing sent
    s_ai_run (executor, job, sink, "ollamaJobHandler", "  ", 200, NULL, 500, "param is empty.");
    s_ai_run (executor, job, sink, "ollamaJobHandler", "{\"input\": ", 200, NULL, 500,
              "param invalid: not a JSON object (");
    s_ai_run (executor, job, sink, "ollamaJobHandler", "[1]", 200, NULL, 500,
              "param invalid: not a JSON object");
    s_ai_run (executor, job, sink, "ollamaJobHandler", "{\"prompt\": \"p\", \"input\": \" \"}",
              200, NULL, 500, "input is empty.");
    s_ai_run (executor, job, sink, "ollamaJobHandler", "{\"input\": 7}", 200, NULL, 500,
              "param invalid: \"input\" is not a string");
    s_ai_run (executor, job, sink, "ollamaJobHandler", "{\"input\": \"x\", \"baseUrl\": \"ftp://h\"}",
              200, NULL, 500, "baseUrl invalid");
    XXL_CHECK (sink_count (sink) == seen);

    //  The answer's failures: a status not 2xx (its body's start in the
    //  message), not JSON, JSON without the text, too large
    s_ai_run (executor, job, sink, "ollamaJobHandler", "{\"input\": \"x\"}", 404,
              "{\"error\": \"model 'x' not found\"}", 500,
              "HTTP status 404: {\"error\": \"model 'x' not found\"}");
    s_ai_run (executor, job, sink, "ollamaJobHandler", "{\"input\": \"x\"}", 200, "not json",
              500, "answer malformed: not JSON");
    s_ai_run (executor, job, sink, "ollamaJobHandler", "{\"input\": \"x\"}", 200,
              "{\"done\": true}", 500, "answer malformed: no message.content string");
    size_t big = 4 * 1024 * 1024 + 100;
    char *huge = (char *) malloc (big + 1);
    if (huge) {
        memset (huge, 'a', big);
        huge [big] = 0;
        s_ai_run (executor, job, sink, "ollamaJobHandler", "{\"input\": \"x\"}", 200, huge,
                  500, "answer too large: more than 4194304 bytes");
        free (huge);
    }
    seen += 4;
    XXL_CHECK (sink_count (sink) == seen);

    //  Time: the request's own limit (the param's "timeout", ms), and the
    //  run's timeout
    sink_set_mode (sink, SINK_HTTP_HANG, 0);
    id = s_trigger (executor, job, "ollamaJobHandler", "{\"input\": \"x\", \"timeout\": 300}", 10);
    XXL_CHECK (s_msg_is (s_wait (executor, id, 15000), 500, "request timed out (limit 300 ms)"));
    id = s_trigger (executor, job, "ollamaJobHandler", "{\"input\": \"x\"}", 1);
    XXL_CHECK (s_msg_is (s_wait (executor, id, 15000), 502, NULL));
    seen += 2;
    //  A refused connection
    snprintf (param, sizeof param, "{\"input\": \"x\", \"baseUrl\": \"http://127.0.0.1:%d\"}",
              sink_dead_port ());
    s_ai_run (executor, job, sink, "ollamaJobHandler", param, 200, NULL, 500, "request failed: ");

    //  openClawJobHandler: the environment's base URL and key, the
    //  default model and prompt
    id = s_ai_run (executor, job, sink, "openClawJobHandler", "{\"input\": \"plan a trip\"}",
                   200, S_OPENAI_ANSWER, 200, NULL);
    body = s_ai_request (sink, ++seen, &record);
    XXL_CHECK (streq (record.method, "POST") && streq (record.path, "/v1/chat/completions")
               && streq (record.content_type, "application/json")
               && streq (record.authorization, "Bearer env-key"));
    XXL_CHECK (s_ai_chat_is (body, "openclaw", "你是一个出游助手，擅长做旅游规划", "plan a trip"));
    json_decref (body);
    XXL_CHECK (s_log_has (id, "] Input: plan a trip\n") && s_log_has (id, "] Output: go to Hangzhou\n"));
    //  A param's base URL gets no key of the environment, only its own
    snprintf (param, sizeof param, "{\"input\": \"x\", \"baseUrl\": \"%s\"}", base);
    id = s_ai_run (executor, job, sink, "openClawJobHandler", param, 200, S_OPENAI_ANSWER, 200, NULL);
    XXL_CHECK (sink_wait (sink, ++seen, 5000, &record) == 0 && !*record.authorization);
    XXL_CHECK (s_log_has (id, "no apiKey sent: the param names its own baseUrl"));
    snprintf (param, sizeof param, "{\"input\": \"x\", \"baseUrl\": \"%s\", \"apiKey\": \"p-key\","
              " \"model\": \"gpt-x\", \"prompt\": \"sys\"}", base);
    s_ai_run (executor, job, sink, "openClawJobHandler", param, 200, S_OPENAI_ANSWER, 200, NULL);
    body = s_ai_request (sink, ++seen, &record);
    XXL_CHECK (streq (record.authorization, "Bearer p-key") && s_ai_chat_is (body, "gpt-x", "sys", "x"));
    json_decref (body);
    s_ai_run (executor, job, sink, "openClawJobHandler", "{\"input\": \"x\"}", 200,
              "{\"choices\": []}", 500, "answer malformed: no choices[0].message.content string");
    s_ai_run (executor, job, sink, "openClawJobHandler", "{\"input\": \"x\"}", 401,
              "{\"error\": {\"message\": \"bad key\"}}", 500, "HTTP status 401: {\"error\"");
    s_ai_run (executor, job, sink, "openClawJobHandler", "{\"prompt\": \"x\"}", 200, NULL, 500,
              "input is empty.");
    seen += 2;

    //  difyWorkflowJobHandler: POST {baseUrl}/workflows/run, the key,
    //  blocking, the default user; the inputs and outputs logged
    snprintf (param, sizeof param, "{\"inputs\": {\"input\": \"q\"}, \"baseUrl\": \"%s/v1\","
              " \"apiKey\": \"app-k\"}", base);
    id = s_ai_run (executor, job, sink, "difyWorkflowJobHandler", param, 200, S_DIFY_ANSWER,
                   200, NULL);
    body = s_ai_request (sink, ++seen, &record);
    const char *input = NULL, *mode = NULL, *user = NULL;
    XXL_CHECK (streq (record.method, "POST") && streq (record.path, "/v1/workflows/run")
               && streq (record.content_type, "application/json")
               && streq (record.authorization, "Bearer app-k"));
    XXL_CHECK (body && json_unpack (body, "{s:{s:s}, s:s, s:s}", "inputs", "input", &input,
                                    "response_mode", &mode, "user", &user) == 0
               && streq (input, "q") && streq (mode, "blocking") && streq (user, "xxl-job"));
    json_decref (body);
    XXL_CHECK (s_log_has (id, "] inputs: {\"input\":\"q\"}\n")
               && s_log_has (id, "] Output: {\"text\":\"top three\"}\n"));
    snprintf (param, sizeof param, "{\"user\": \"zhangsan\", \"baseUrl\": \"%s/v1\","
              " \"apiKey\": \"app-k\"}", base);
    s_ai_run (executor, job, sink, "difyWorkflowJobHandler", param, 200, S_DIFY_ANSWER, 200, NULL);
    body = s_ai_request (sink, ++seen, &record);
    XXL_CHECK (body && json_unpack (body, "{s:s}", "user", &user) == 0
               && json_is_object (json_object_get (body, "inputs"))
               && json_object_size (json_object_get (body, "inputs")) == 0
               && streq (user, "zhangsan"));
    json_decref (body);
    snprintf (param, sizeof param, "{\"inputs\": {}, \"baseUrl\": \"%s/v1\"}", base);
    s_ai_run (executor, job, sink, "difyWorkflowJobHandler", param, 200, NULL, 500,
              "baseUrl or apiKey invalid.");
    snprintf (param, sizeof param, "{\"inputs\": 3, \"baseUrl\": \"%s/v1\", \"apiKey\": \"k\"}", base);
    s_ai_run (executor, job, sink, "difyWorkflowJobHandler", param, 200, NULL, 500,
              "param invalid: \"inputs\" is not an object");
    snprintf (param, sizeof param, "{\"inputs\": {}, \"baseUrl\": \"%s/v1\", \"apiKey\": \"k\"}", base);
    s_ai_run (executor, job, sink, "difyWorkflowJobHandler", param, 200,
              "{\"data\": {\"status\": \"failed\", \"outputs\": null, \"error\": \"node x failed\"}}",
              500, "workflow failed: node x failed");
    s_ai_run (executor, job, sink, "difyWorkflowJobHandler", param, 200, "{\"result\": 1}",
              500, "answer malformed: no data object");
    s_ai_run (executor, job, sink, "difyWorkflowJobHandler", param, 500, "internal", 500,
              "HTTP status 500: internal");
    seen += 3;
    XXL_CHECK (sink_count (sink) == seen);
    xxl_executor_destroy (&executor);

    //  XXL_HTTP_ALLOW judges each handler's connection: a list without
    //  127.0.0.1 refuses all three (nothing sent), one with it allows them
    const char *lists [] = { "10.0.0.0/8", "127.0.0.1" };
    for (int allowed = 0; allowed <= 1; allowed++) {
        executor = s_executor (in_process, lists [allowed]);
        XXL_CHECK (executor != NULL);
        if (!executor)
            break;
        const char *refused = allowed? NULL: "refused: host 127.0.0.1 " S_NOT_LISTED;
        s_ai_run (executor, job, sink, "ollamaJobHandler", "{\"input\": \"x\"}", 200,
                  S_OLLAMA_ANSWER, allowed? 200: 500, refused);
        s_ai_run (executor, job, sink, "openClawJobHandler", "{\"input\": \"x\"}", 200,
                  S_OPENAI_ANSWER, allowed? 200: 500, refused);
        snprintf (param, sizeof param, "{\"baseUrl\": \"%s/v1\", \"apiKey\": \"k\"}", base);
        s_ai_run (executor, job, sink, "difyWorkflowJobHandler", param, 200,
                  S_DIFY_ANSWER, allowed? 200: 500, refused);
        seen += allowed? 3: 0;
        XXL_CHECK (sink_count (sink) == seen);
        xxl_executor_destroy (&executor);
    }
    //  Unset, a metadata address stays refused.  Dify's base URL and key
    //  from the environment (the key never sent to a param's base URL);
    //  XXL_AI_TIMEOUT (s) limits a request
    setenv ("XXL_AI_TIMEOUT", "1", 1);
    snprintf (param, sizeof param, "%s/v1/", base);
    setenv ("XXL_DIFY_BASE_URL", param, 1);
    setenv ("XXL_DIFY_API_KEY", "env-dify-key", 1);
    executor = s_executor (in_process, NULL);
    XXL_CHECK (executor != NULL);
    if (executor) {
        s_ai_run (executor, job, sink, "ollamaJobHandler",
                  "{\"input\": \"x\", \"baseUrl\": \"http://169.254.169.254\"}", 200, NULL, 500,
                  "refused: host 169.254.169.254 " S_METADATA);
        s_ai_run (executor, job, sink, "difyWorkflowJobHandler", "{\"inputs\": {\"a\": 1}}", 200,
                  S_DIFY_ANSWER, 200, NULL);
        XXL_CHECK (sink_wait (sink, ++seen, 5000, &record) == 0
                   && streq (record.path, "/v1/workflows/run")
                   && streq (record.authorization, "Bearer env-dify-key"));
        snprintf (param, sizeof param, "{\"baseUrl\": \"%s/v1\"}", base);
        s_ai_run (executor, job, sink, "difyWorkflowJobHandler", param, 200, NULL, 500,
                  "baseUrl or apiKey invalid.");
        sink_set_mode (sink, SINK_HTTP_HANG, 0);
        id = s_trigger (executor, job, "openClawJobHandler", "{\"input\": \"x\"}", 30);
        XXL_CHECK (s_msg_is (s_wait (executor, id, 15000), 500, "request timed out (limit 1000 ms)"));
        seen++;
        XXL_CHECK (sink_count (sink) == seen);
        xxl_executor_destroy (&executor);
    }
    const char *names [] = { "XXL_OLLAMA_BASE_URL", "XXL_OPENAI_BASE_URL", "XXL_OPENAI_API_KEY",
                             "XXL_AI_TIMEOUT", "XXL_DIFY_BASE_URL", "XXL_DIFY_API_KEY" };
    for (size_t i = 0; i < sizeof names / sizeof names [0]; i++)
        unsetenv (names [i]);
    sink_destroy (&sink);
}

int
main (void)
{
    const char *build = getenv ("XXL_BUILD");
    if (!build) {
        fprintf (stderr, "test_sample_handlers: XXL_BUILD is not set (run it through make check)\n");
        return 2;
    }
    zsys_init ();
    snprintf (s_logdir, sizeof s_logdir, "/tmp/xxl-samples-%d", (int) getpid ());
    char *plugins = zsys_sprintf ("%s/plugins/handlers/.libs", build);
    unsetenv ("XXL_HTTP_ALLOW");
    //  (the listeners are on loopback: no proxy of the caller's in between)
    const char *proxies [] = { "http_proxy", "https_proxy", "HTTPS_PROXY", "ALL_PROXY",
                               "all_proxy" };
    for (size_t i = 0; i < sizeof proxies / sizeof proxies [0]; i++)
        unsetenv (proxies [i]);
    xxl_handlers_t *handlers = s_handlers = xxl_handlers_new (plugins);
    zstr_free (&plugins);
    XXL_CHECK (handlers != NULL);
    sink_t *sink = sink_http_new ();
    XXL_CHECK (sink != NULL);
    int seen = 0;
    for (int in_process = 0; in_process <= 1 && handlers && sink; in_process++) {
        xxl_executor_config_t config = { 0 };
        config.logdir = s_logdir;
        config.in_process = in_process;
        config.allow_glue = 1;
        config.idle_reap_s = 90;
        xxl_executor_t *executor = xxl_executor_new (&config, handlers);
        XXL_CHECK (executor != NULL);
        if (!executor)
            break;
        const char *mode = in_process? "in process": "isolated";
        test_command (executor, mode, 100 + 10 * in_process);
        test_demo2 (executor, mode, 400 + 10 * in_process);
        test_http (executor, mode, 200 + 10 * in_process, sink, &seen);
        xxl_executor_destroy (&executor);
        test_http_allow (in_process, 300 + 10 * in_process, sink, &seen);
        test_ai (in_process, 500 + 10 * in_process);
    }
    for (int i = 0; i < s_count; i++)
        free (s_results [i].msg);
    sink_destroy (&sink);
    xxl_handlers_destroy (&handlers);
    char *rm = zsys_sprintf ("rm -rf '%s'", s_logdir);
    if (getenv ("XXL_KEEP"))
        printf ("kept %s\n", s_logdir);
    else
    if (system (rm) != 0)
        printf ("cannot remove %s\n", s_logdir);
    zstr_free (&rm);
    return xxl_test_done ();
}
