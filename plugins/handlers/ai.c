/*  ai.c -- XXL-JOB 3.x's AI sample handlers (AIXxlJob of
    xxl-job-executor-sample-springboot-ai), one HTTP call each (libcurl,
    jansson), with the same names and params:

      ollamaJobHandler        {"input": "...", "prompt": "...", "model": "..."}
                              POST {base}/api/chat (Ollama), stream false
      openClawJobHandler      {"input": "...", "prompt": "..."}
                              POST {base}/v1/chat/completions (OpenAI-compatible,
                              as XXL-JOB's OpenAiChatModel; OpenClaw's gateway)
      difyWorkflowJobHandler  {"inputs": {...}, "user": "xxl-job",
                               "baseUrl": "http://dify/v1", "apiKey": "app-..."}
                              POST {baseUrl}/workflows/run, response_mode blocking

    input is required; prompt (the system message) and model have
    defaults.  What XXL-JOB reads from Spring properties comes from the
    agent's environment, and the param may name it too (it wins):

      XXL_OLLAMA_BASE_URL   http://localhost:11434   param "baseUrl"
      XXL_OLLAMA_MODEL      qwen3.5:0.8b             param "model"
      XXL_OPENAI_BASE_URL   http://127.0.0.1:18789   param "baseUrl"
      XXL_OPENAI_API_KEY    (none: no Authorization) param "apiKey"
      XXL_OPENAI_MODEL      openclaw                 param "model"
      XXL_OPENAI_COMPLETIONS_PATH  /v1/chat/completions
      XXL_DIFY_BASE_URL, XXL_DIFY_API_KEY  (none)    param "baseUrl", "apiKey"
      XXL_AI_TIMEOUT        180 (seconds)            param "timeout" (ms)

    A key of the environment is sent only to the base URL of the
    environment: a param that names its own baseUrl brings its own apiKey.

    Where it may connect: every connection is judged by XXL_HTTP_ALLOW, as
    httpJobHandler's (xxl_http_guard.h).  No redirects are followed.

    Outcome: the input and the answer's text go to the run's log (plain
    lines, the output at most 64 KiB of it).  The run fails, with the
    reason logged too, on an empty param, a param that is not a JSON
    object, a missing input (dify: baseUrl or apiKey), a refused or
    failed connection, a status not 2xx ("HTTP status 401: " and the
    first 256 bytes of the body), an answer that is not the JSON expected,
    an answer larger than 4 MiB (not read further), a dify run whose
    status is not "succeeded", and a timeout: the request's own limit, or
    the run's timeout or kill (the transfer is aborted within about a
    second of the run being cancelled).  Connecting gives up after 10 s.
*/

#define _GNU_SOURCE
#include "xxl_http_guard.h"
#include <jansson.h>
#include <pthread.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AI_ANSWER_MAX       (4 * 1024 * 1024)   //  bytes of an answer read
#define AI_LOGGED_MAX       (64 * 1024)         //  bytes of an output logged
#define AI_STATUS_BODY      256                 //  bytes of a non-2xx body in the message
#define AI_CONNECT_MS       10000
#define AI_TIMEOUT_S        180                 //  XXL-JOB's read timeout (180000 ms)
#define AI_USER_AGENT       "xxl-ai-handlers/1.0"

#define AI_OLLAMA_BASE_URL  "http://localhost:11434"
#define AI_OLLAMA_MODEL     "qwen3.5:0.8b"
#define AI_OLLAMA_PROMPT    "你是一个研发工程师，擅长解决技术类问题。"
#define AI_OPENAI_BASE_URL  "http://127.0.0.1:18789"
#define AI_OPENAI_MODEL     "openclaw"
#define AI_OPENAI_PATH      "/v1/chat/completions"
#define AI_OPENCLAW_PROMPT  "你是一个出游助手，擅长做旅游规划"
#define AI_DIFY_USER        "xxl-job"

//  --------------------------------------------------------------------
//  Results and the log

//  Logs msg and fails the run with it
static int
s_fail (xxl_run_t *run, const char *msg)
{
    xxl_run_log (run, "%s", msg);
    return xxl_run_fail (run, msg);
}

#if defined (__GNUC__)
__attribute__ ((format (printf, 2, 3)))
#endif
static int
s_failf (xxl_run_t *run, const char *format, ...)
{
    char msg [1024];
    va_list args;
    va_start (args, format);
    vsnprintf (msg, sizeof msg, format, args);
    va_end (args);
    return s_fail (run, msg);
}

//  Logs text line by line, the first line after label; at most
//  AI_LOGGED_MAX bytes, the rest counted
static void
s_log_text (xxl_run_t *run, const char *label, const char *text)
{
    size_t total = strlen (text);
    size_t shown = total > AI_LOGGED_MAX? AI_LOGGED_MAX: total;
    const char *line = text, *end = text + shown;
    int first = 1;
    do {
        const char *eol = memchr (line, '\n', (size_t) (end - line));
        size_t len = eol? (size_t) (eol - line): (size_t) (end - line);
        int cut = len && line [len - 1] == '\r';
        xxl_run_log (run, "%s%.*s", first? label: "", (int) (len - cut), line);
        first = 0;
        line = eol? eol + 1: end;
    } while (line < end);
    if (total > shown)
        xxl_run_log (run, "... %zu more bytes not logged", total - shown);
}

//  --------------------------------------------------------------------
//  The param

//  The param as a JSON object, or NULL after failing the run
static json_t *
s_param (xxl_run_t *run)
{
    const char *param = xxl_run_param (run);
    if (!param [strspn (param, " \t\r\n")]) {
        s_fail (run, "param is empty.");
        return NULL;
    }
    json_error_t error;
    json_t *root = json_loads (param, JSON_REJECT_DUPLICATES, &error);
    if (!root) {
        s_failf (run, "param invalid: not a JSON object (%s, line %d column %d)",
                 error.text, error.line, error.column);
        return NULL;
    }
    if (!json_is_object (root)) {
        json_decref (root);
        s_fail (run, "param invalid: not a JSON object");
        return NULL;
    }
    return root;
}

//  A string member: 0 with *value (NULL when absent, null or blank), or
//  -1 after failing the run when it is not a string
static int
s_member (xxl_run_t *run, json_t *object, const char *name, const char **value)
{
    json_t *member = json_object_get (object, name);
    *value = NULL;
    if (!member || json_is_null (member))
        return 0;
    if (!json_is_string (member)) {
        s_failf (run, "param invalid: \"%s\" is not a string", name);
        return -1;
    }
    const char *text = json_string_value (member);
    if (text [strspn (text, " \t\r\n")])
        *value = text;
    return 0;
}

//  The environment's value of name, NULL when unset or blank
static const char *
s_env (const char *name)
{
    const char *value = getenv (name);
    return value && value [strspn (value, " \t\r\n")]? value: NULL;
}

//  The request's limit in ms: the param's "timeout" (ms), else
//  XXL_AI_TIMEOUT (seconds), else AI_TIMEOUT_S; -1 after failing the run
static long
s_timeout_ms (xxl_run_t *run, json_t *param)
{
    json_t *timeout = json_object_get (param, "timeout");
    if (timeout && !json_is_null (timeout)) {
        if (!json_is_integer (timeout) || json_integer_value (timeout) <= 0
        ||  json_integer_value (timeout) > 86400000) {
            s_fail (run, "param invalid: \"timeout\" is not a number of ms (1 to 86400000)");
            return -1;
        }
        return (long) json_integer_value (timeout);
    }
    const char *env = s_env ("XXL_AI_TIMEOUT");
    if (env) {
        char *end = NULL;
        long seconds = strtol (env, &end, 10);
        if (end && !*end && seconds > 0 && seconds <= 86400)
            return seconds * 1000;
        xxl_run_log (run, "XXL_AI_TIMEOUT '%.40s' ignored: not a number of seconds"
                     " (1 to 86400); %d s", env, AI_TIMEOUT_S);
    }
    return AI_TIMEOUT_S * 1000L;
}

//  base (http or https) joined with path, one '/' between; malloc'd, or
//  NULL after failing the run
static char *
s_url (xxl_run_t *run, const char *base, const char *path)
{
    if (strncmp (base, "http://", 7) && strncmp (base, "https://", 8)) {
        s_failf (run, "baseUrl invalid: '%.200s' is not an http:// or https:// URL", base);
        return NULL;
    }
    size_t len = strlen (base);
    while (len && base [len - 1] == '/')
        len--;
    char *url = NULL;
    if (asprintf (&url, "%.*s/%s", (int) len, base, path + (*path == '/')) < 0) {
        s_fail (run, "out of memory");
        return NULL;
    }
    return url;
}

//  --------------------------------------------------------------------
//  The call

typedef struct {
    xxl_run_t *run;
    char *data;                         //  the answer, NUL-ended
    size_t size;
    size_t room;
    int too_big;                        //  1: more than AI_ANSWER_MAX
} answer_t;

static size_t
s_on_answer (char *data, size_t size, size_t count, void *arg)
{
    answer_t *answer = (answer_t *) arg;
    size_t bytes = size * count;
    if (bytes > AI_ANSWER_MAX - answer->size) {
        answer->too_big = 1;
        return 0;                       //  curl ends the transfer
    }
    if (answer->size + bytes + 1 > answer->room) {
        size_t room = answer->room? answer->room: 16384;
        while (room < answer->size + bytes + 1)
            room *= 2;
        char *grown = (char *) realloc (answer->data, room);
        if (!grown)
            return 0;
        answer->data = grown;
        answer->room = room;
    }
    memcpy (answer->data + answer->size, data, bytes);
    answer->size += bytes;
    answer->data [answer->size] = 0;
    return bytes;
}

static int
s_on_progress (void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
               curl_off_t ulnow)
{
    (void) dltotal; (void) dlnow; (void) ultotal; (void) ulnow;
    return xxl_run_cancelled (((answer_t *) arg)->run)? 1: 0;
}

//  libcurl is set up at the first run, not at load (see http.c)
static pthread_once_t s_curl_once = PTHREAD_ONCE_INIT;
static int s_curl_ready = 0;

static void
s_curl_setup (void)
{
    s_curl_ready = curl_global_init (CURL_GLOBAL_DEFAULT) == CURLE_OK;
}

//  POSTs body (JSON) to url, with "Authorization: Bearer key" when key is
//  set, and parses a 2xx answer.  Returns the answer's JSON, or NULL after
//  failing the run.
static json_t *
s_post (xxl_run_t *run, const char *url, const char *key, json_t *body, long timeout_ms)
{
    pthread_once (&s_curl_once, s_curl_setup);
    if (!s_curl_ready) {
        s_fail (run, "curl_global_init failed");
        return NULL;
    }
    char *text = json_dumps (body, JSON_COMPACT);
    CURL *curl = text? curl_easy_init (): NULL;
    xxl_http_guard_t *guard = curl? xxl_http_guard_new (run, curl): NULL;
    struct curl_slist *headers = NULL;
    char *bearer = NULL;
    int oom = !guard || (key && asprintf (&bearer, "Authorization: Bearer %s", key) < 0);
    const char *lines [] = { "Content-Type: application/json", "Accept: application/json",
                             "Expect:", key? bearer: NULL };
    for (size_t i = 0; i < sizeof lines / sizeof lines [0] && !oom; i++) {
        if (!lines [i])
            continue;
        struct curl_slist *more = curl_slist_append (headers, lines [i]);
        if (more)
            headers = more;
        else
            oom = 1;
    }
    if (bearer) {
        //  The slist holds its own copy
        memset (bearer, 0, strlen (bearer));
        free (bearer);
    }
    if (oom) {
        curl_slist_free_all (headers);
        xxl_http_guard_destroy (&guard);
        if (curl)
            curl_easy_cleanup (curl);
        free (text);
        s_fail (run, "out of memory");
        return NULL;
    }
    answer_t answer = { run, NULL, 0, 0, 0 };
    char curl_error [CURL_ERROR_SIZE] = "";
    curl_easy_setopt (curl, CURLOPT_URL, url);
    curl_easy_setopt (curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt (curl, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt (curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt (curl, CURLOPT_CONNECTTIMEOUT_MS, (long) AI_CONNECT_MS);
    curl_easy_setopt (curl, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt (curl, CURLOPT_USERAGENT, AI_USER_AGENT);
    curl_easy_setopt (curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt (curl, CURLOPT_POSTFIELDS, text);
    curl_easy_setopt (curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) strlen (text));
    curl_easy_setopt (curl, CURLOPT_WRITEFUNCTION, s_on_answer);
    curl_easy_setopt (curl, CURLOPT_WRITEDATA, &answer);
    curl_easy_setopt (curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt (curl, CURLOPT_XFERINFOFUNCTION, s_on_progress);
    curl_easy_setopt (curl, CURLOPT_XFERINFODATA, &answer);
    curl_easy_setopt (curl, CURLOPT_ERRORBUFFER, curl_error);
    xxl_run_log (run, "request: POST %s", url);
    CURLcode code = curl_easy_perform (curl);
    long status = 0;
    curl_easy_getinfo (curl, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup (curl);
    curl_slist_free_all (headers);
    free (text);
    json_t *root = NULL;
    if (xxl_http_guard_refusal (guard))
        //  Refused before its socket existed: nothing was sent there
        s_fail (run, xxl_http_guard_refusal (guard));
    else
    if (answer.too_big)
        s_failf (run, "answer too large: more than %d bytes (HTTP status %ld), not read further",
                 AI_ANSWER_MAX, status);
    else
    if (code == CURLE_ABORTED_BY_CALLBACK)
        s_fail (run, "request aborted: the run was cancelled");
    else
    if (code == CURLE_OPERATION_TIMEDOUT)
        s_failf (run, "request timed out (limit %ld ms): %s", timeout_ms,
                 curl_error [0]? curl_error: curl_easy_strerror (code));
    else
    if (code != CURLE_OK)
        s_failf (run, "request failed: %s",
                 curl_error [0]? curl_error: curl_easy_strerror (code));
    else
    if (status < 200 || status > 299) {
        //  The body, bounded, in the message; more of it in the log
        char part [AI_STATUS_BODY + 1] = "";
        size_t len = answer.size < AI_STATUS_BODY? answer.size: AI_STATUS_BODY;
        for (size_t i = 0; i < len; i++) {
            char c = answer.data [i];
            part [i] = c == '\n' || c == '\r' || c == '\t'? ' ': c;
        }
        part [len] = 0;
        if (answer.size)
            s_log_text (run, "Response: ", answer.data);
        s_failf (run, "HTTP status %ld: %s%s", status, part,
                 answer.size > AI_STATUS_BODY? "...": "");
    }
    else {
        json_error_t error;
        root = answer.data? json_loadb (answer.data, answer.size, 0, &error): NULL;
        if (!root) {
            if (answer.size)
                s_log_text (run, "Response: ", answer.data);
            s_failf (run, "answer malformed: not JSON (%s)",
                     answer.size? error.text: "an empty body");
        }
    }
    xxl_http_guard_destroy (&guard);
    free (answer.data);
    return root;
}

//  --------------------------------------------------------------------
//  The handlers

//  A chat: {"input", "prompt", "model", "baseUrl", "apiKey", "timeout"}
//  as a system message and a user message, the answer's text at answer_path
typedef struct {
    const char *base_env, *base_default;
    const char *key_env;                //  NULL: no key
    const char *model_env, *model_default;
    const char *path_env, *path_default;
    const char *prompt_default;
    int openai;                         //  0: Ollama's /api/chat
} chat_t;

static const chat_t s_ollama = {
    "XXL_OLLAMA_BASE_URL", AI_OLLAMA_BASE_URL, NULL,
    "XXL_OLLAMA_MODEL", AI_OLLAMA_MODEL, NULL, "/api/chat", AI_OLLAMA_PROMPT, 0
};
static const chat_t s_openclaw = {
    "XXL_OPENAI_BASE_URL", AI_OPENAI_BASE_URL, "XXL_OPENAI_API_KEY",
    "XXL_OPENAI_MODEL", AI_OPENAI_MODEL, "XXL_OPENAI_COMPLETIONS_PATH", AI_OPENAI_PATH,
    AI_OPENCLAW_PROMPT, 1
};

static int
s_chat (xxl_run_t *run, const chat_t *chat)
{
    json_t *param = s_param (run);
    if (!param)
        return 0;
    const char *input, *prompt, *model, *base, *key = NULL;
    if (s_member (run, param, "input", &input) || s_member (run, param, "prompt", &prompt)
    ||  s_member (run, param, "model", &model) || s_member (run, param, "baseUrl", &base)
    ||  (chat->key_env && s_member (run, param, "apiKey", &key))) {
        json_decref (param);
        return 0;
    }
    if (!input) {
        json_decref (param);
        return s_fail (run, "input is empty.");
    }
    long timeout_ms = s_timeout_ms (run, param);
    if (timeout_ms < 0) {
        json_decref (param);
        return 0;
    }
    //  The environment's key only with the environment's base URL
    if (!base) {
        base = s_env (chat->base_env);
        if (!base)
            base = chat->base_default;
        if (!key && chat->key_env)
            key = s_env (chat->key_env);
    }
    else
    if (!key && chat->key_env && s_env (chat->key_env))
        xxl_run_log (run, "no apiKey sent: the param names its own baseUrl, and %s goes"
                     " only to %s", chat->key_env, chat->base_env);
    if (!model)
        model = s_env (chat->model_env);
    if (!model)
        model = chat->model_default;
    if (!prompt)
        prompt = chat->prompt_default;
    const char *path = chat->path_env? s_env (chat->path_env): NULL;
    char *url = s_url (run, base, path? path: chat->path_default);
    if (!url) {
        json_decref (param);
        return 0;
    }
    json_t *body = json_pack ("{s:s, s:[{s:s, s:s}, {s:s, s:s}], s:b}",
                              "model", model,
                              "messages", "role", "system", "content", prompt,
                                          "role", "user", "content", input,
                              "stream", 0);
    xxl_run_log (run, "model: %s", model);
    s_log_text (run, "Input: ", input);
    json_t *answer = body? s_post (run, url, key, body, timeout_ms): NULL;
    if (!body)
        s_fail (run, "out of memory");
    json_decref (body);
    free (url);
    json_decref (param);
    if (!answer)
        return 0;
    //  Ollama: {"message": {"content"}}; OpenAI: {"choices": [{"message": {"content"}}]}
    json_t *message = chat->openai
                    ? json_object_get (json_array_get (json_object_get (answer, "choices"), 0),
                                       "message")
                    : json_object_get (answer, "message");
    json_t *content = json_object_get (message, "content");
    int rc = 0;
    if (!json_is_string (content)) {
        char *text = json_dumps (answer, JSON_COMPACT);
        if (text)
            s_log_text (run, "Response: ", text);
        free (text);
        rc = s_fail (run, chat->openai
                     ? "answer malformed: no choices[0].message.content string"
                     : "answer malformed: no message.content string");
    }
    else {
        s_log_text (run, "Output: ", json_string_value (content));
        rc = xxl_run_success (run, NULL);
    }
    json_decref (answer);
    return rc;
}

static int
s_ollama_run (xxl_run_t *run)
{
    return s_chat (run, &s_ollama);
}

static int
s_openclaw_run (xxl_run_t *run)
{
    return s_chat (run, &s_openclaw);
}

//  difyWorkflowJobHandler: {"inputs", "user", "baseUrl", "apiKey", "timeout"}
static int
s_dify_run (xxl_run_t *run)
{
    json_t *param = s_param (run);
    if (!param)
        return 0;
    const char *base, *key, *user = AI_DIFY_USER;
    if (s_member (run, param, "baseUrl", &base) || s_member (run, param, "apiKey", &key)) {
        json_decref (param);
        return 0;
    }
    //  XXL-JOB's default user for an absent one; a blank one is sent as is
    json_t *user_member = json_object_get (param, "user");
    if (user_member && !json_is_null (user_member)) {
        if (!json_is_string (user_member)) {
            json_decref (param);
            return s_fail (run, "param invalid: \"user\" is not a string");
        }
        user = json_string_value (user_member);
    }
    json_t *inputs = json_object_get (param, "inputs");
    if (inputs && !json_is_null (inputs) && !json_is_object (inputs)) {
        json_decref (param);
        return s_fail (run, "param invalid: \"inputs\" is not an object");
    }
    //  The environment's key only with the environment's base URL
    if (!base) {
        base = s_env ("XXL_DIFY_BASE_URL");
        if (!key)
            key = s_env ("XXL_DIFY_API_KEY");
    }
    if (!base || !key) {
        json_decref (param);
        return s_fail (run, "baseUrl or apiKey invalid.");
    }
    long timeout_ms = s_timeout_ms (run, param);
    char *url = timeout_ms < 0? NULL: s_url (run, base, "/workflows/run");
    if (!url) {
        json_decref (param);
        return 0;
    }
    json_t *body = json_pack ("{s:o, s:s, s:s}",
                              "inputs", json_is_object (inputs)? json_incref (inputs)
                                                               : json_object (),
                              "response_mode", "blocking",
                              "user", user);
    char *shown = body? json_dumps (json_object_get (body, "inputs"), JSON_COMPACT): NULL;
    if (shown)
        s_log_text (run, "inputs: ", shown);
    free (shown);
    json_t *answer = body? s_post (run, url, key, body, timeout_ms): NULL;
    if (!body)
        s_fail (run, "out of memory");
    json_decref (body);
    free (url);
    json_decref (param);
    if (!answer)
        return 0;
    //  {"workflow_run_id", "task_id", "data": {"status", "outputs", "error", ...}}
    json_t *data = json_object_get (answer, "data");
    json_t *status = json_object_get (data, "status");
    int rc = 0;
    if (!json_is_object (data)) {
        char *text = json_dumps (answer, JSON_COMPACT);
        if (text)
            s_log_text (run, "Response: ", text);
        free (text);
        rc = s_fail (run, "answer malformed: no data object");
    }
    else {
        char *outputs = json_dumps (json_object_get (data, "outputs"),
                                    JSON_COMPACT | JSON_ENCODE_ANY);
        s_log_text (run, "Output: ", outputs? outputs: "null");
        free (outputs);
        if (json_is_string (status) && strcmp (json_string_value (status), "succeeded")) {
            json_t *error = json_object_get (data, "error");
            rc = s_failf (run, "workflow %.40s: %.300s", json_string_value (status),
                          json_is_string (error)? json_string_value (error): "no error given");
        }
        else
            rc = xxl_run_success (run, NULL);
    }
    json_decref (answer);
    return rc;
}

static void *
s_init (const char **error)
{
    (void) error;
    static int s_state;
    return &s_state;
}

static void
s_destroy (void *state)
{
    (void) state;
    if (s_curl_ready)
        curl_global_cleanup ();
}

//  Isolated, as httpJobHandler: each call blocks for up to its timeout
static const xxl_handler_t s_handlers [] = {
    { "ollamaJobHandler", s_ollama_run, 0 },
    { "difyWorkflowJobHandler", s_dify_run, 0 },
    { "openClawJobHandler", s_openclaw_run, 0 },
    { NULL, NULL, 0 }
};

XXL_HANDLER_PLUGIN ("ai", "1.0", s_init, s_destroy, s_handlers)
