/*  script.c -- the "script" alarm kind: runs a command per alarm.

    Target "script:NAME" runs NAME from the folder scheduler/alarm/script_dir
    (NAME may also be an absolute path inside that folder; no ".."), with
    no shell and no arguments, the alarm's JSON on stdin and its fields in
    the environment (XXL_ALARM_JOB_ID, XXL_ALARM_JOB_DESC, XXL_ALARM_APP,
    XXL_ALARM_LOG_ID, XXL_ALARM_TRIGGER_TIME, XXL_ALARM_TRIGGER_CODE,
    XXL_ALARM_HANDLE_CODE, XXL_ALARM_EXECUTOR_ADDRESS,
    XXL_ALARM_RETRY_COUNT, XXL_ALARM_TITLE).  Exit status 0 means
    delivered; anything else fails with the status and the last line the
    command printed.  After scheduler/alarm/script_timeout ms (30000 by
    default) its whole process group is killed.  Without script_dir the
    kind refuses every target: whoever can save a job must not be able to
    run any program on the scheduler's host.
*/

#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxl/alarm.h>
#include "xxl_spawn.h"

extern char **environ;

#define S_TIMEOUT_MS    30000
#define S_PATH_MAX      4096

//  Resolves target to the command's path in script_dir: 0, or -1 with err
static int
s_resolve (const xxl_alarm_host_t *host, const char *target, char *path, size_t pathlen,
           char *err, size_t errlen)
{
    const char *dir = xxl_alarm_config (host, "script_dir", NULL);
    if (!dir) {
        xxl_alarm_error (err, errlen, "script alarms are disabled: "
                         "set scheduler/alarm/script_dir to the folder of alarm scripts");
        return -1;
    }
    if (!*target) {
        xxl_alarm_error (err, errlen, "no script name");
        return -1;
    }
    //  No ".." component anywhere
    for (const char *at = target; *at; ) {
        const char *end = strchr (at, '/');
        size_t len = end? (size_t) (end - at): strlen (at);
        if (len == 2 && at [0] == '.' && at [1] == '.') {
            xxl_alarm_error (err, errlen, "script path must not contain '..'");
            return -1;
        }
        at += len;
        if (*at == '/')
            at++;
    }
    size_t dirlen = strlen (dir);
    while (dirlen > 1 && dir [dirlen - 1] == '/')
        dirlen--;
    if (target [0] == '/') {
        if (strncmp (target, dir, dirlen) != 0 || target [dirlen] != '/') {
            xxl_alarm_error (err, errlen, "script %s is outside the alarm script folder %.*s",
                             target, (int) dirlen, dir);
            return -1;
        }
        snprintf (path, pathlen, "%s", target);
    }
    else
        snprintf (path, pathlen, "%.*s/%s", (int) dirlen, dir, target);
    if (strlen (path) + 1 >= pathlen) {
        xxl_alarm_error (err, errlen, "script path too long");
        return -1;
    }
    return 0;
}

static int
s_check (void *state, const xxl_alarm_host_t *host, const char *target,
         char *err, size_t errlen)
{
    (void) state;
    char path [S_PATH_MAX];
    return s_resolve (host, target, path, sizeof path, err, errlen);
}

//  "NAME=value" with control characters turned into spaces
static char *
s_env (const char *name, const char *value)
{
    size_t len = strlen (name) + strlen (value) + 2;
    char *item = (char *) malloc (len);
    if (!item)
        return NULL;
    snprintf (item, len, "%s=%s", name, value);
    for (char *c = item; *c; c++)
        if ((unsigned char) *c < 0x20)
            *c = ' ';
    return item;
}

static int
s_send (void *state, const xxl_alarm_host_t *host, const xxl_alarm_t *alarm,
        const char *target, char *err, size_t errlen)
{
    (void) state;
    char path [S_PATH_MAX];
    if (s_resolve (host, target, path, sizeof path, err, errlen) != 0)
        return -1;
    long timeout = xxl_alarm_config_long (host, "script_timeout", S_TIMEOUT_MS);
    if (timeout <= 0 || timeout > 24L * 3600 * 1000)
        timeout = S_TIMEOUT_MS;

    //  The scheduler's environment without XXL_ALARM_*, then the alarm's
    size_t count = 0;
    for (char **e = environ; e && *e; e++)
        count++;
    char **envp = (char **) calloc (count + 16, sizeof (char *));
    char **owned = (char **) calloc (16, sizeof (char *));
    if (!envp || !owned) {
        free (envp);
        free (owned);
        xxl_alarm_error (err, errlen, "out of memory");
        return -1;
    }
    size_t n = 0, nowned = 0;
    for (char **e = environ; e && *e; e++)
        if (strncmp (*e, "XXL_ALARM_", 10) != 0)
            envp [n++] = *e;
    char number [32];
#define S_ADD(name, value) do { char *item_ = s_env ((name), (value)); \
        if (item_) { owned [nowned++] = item_; envp [n++] = item_; } } while (0)
    snprintf (number, sizeof number, "%lld", (long long) alarm->job_id);
    S_ADD ("XXL_ALARM_JOB_ID", number);
    S_ADD ("XXL_ALARM_JOB_DESC", alarm->job_desc);
    S_ADD ("XXL_ALARM_APP", alarm->app);
    snprintf (number, sizeof number, "%lld", (long long) alarm->log_id);
    S_ADD ("XXL_ALARM_LOG_ID", number);
    snprintf (number, sizeof number, "%lld", (long long) alarm->trigger_time);
    S_ADD ("XXL_ALARM_TRIGGER_TIME", number);
    snprintf (number, sizeof number, "%d", alarm->trigger_code);
    S_ADD ("XXL_ALARM_TRIGGER_CODE", number);
    snprintf (number, sizeof number, "%d", alarm->handle_code);
    S_ADD ("XXL_ALARM_HANDLE_CODE", number);
    S_ADD ("XXL_ALARM_EXECUTOR_ADDRESS", alarm->executor_address);
    snprintf (number, sizeof number, "%d", alarm->retry_count);
    S_ADD ("XXL_ALARM_RETRY_COUNT", number);
    S_ADD ("XXL_ALARM_TITLE", "xxl job alarm");
#undef S_ADD
    envp [n] = NULL;

    char *argv [] = { path, NULL };
    char output [2048];
    char reason [256];
    int rc = xxl_spawn_run (argv, envp, alarm->json, strlen (alarm->json), (int) timeout,
                            output, sizeof output, reason, sizeof reason);
    for (size_t i = 0; i < nowned; i++)
        free (owned [i]);
    free (owned);
    free (envp);
    if (rc == 0)
        return 0;
    const char *line = xxl_spawn_last_line (output);
    if (rc > 0)
        xxl_alarm_error (err, errlen, "exit status %d%s%.300s", rc, *line? ": ": "", line);
    else
        xxl_alarm_error (err, errlen, "%s%s%.300s", reason, *line? ": ": "", line);
    return -1;
}

static const xxl_alarm_kind_t s_kinds [] = {
    { "script", s_send, s_check, 0 },
    { NULL, NULL, NULL, 0 }
};

XXL_ALARM_PLUGIN ("script", "1.0", NULL, NULL, s_kinds)
