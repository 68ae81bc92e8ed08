/*  test_handlers.c -- tests of agent/xxl_handlers: loading a folder with
    good and bad plugins (ABI mismatch, missing symbol, duplicate name, init
    failure, not an ELF file) with a clear log line for each, sorted names,
    hot reload through inotify (added, replaced, removed), and runs in
    flight keeping their code, in process and isolated.  A plugin written
    into the folder in pieces, as plain cp does, is refused at every cut
    (no crash) and loads once complete; a loaded plugin whose file is
    rewritten in place keeps working, in process and in a queued isolated
    run, and the new version loads; no fd is left behind.

    Environment: XXL_TEST_PLUGINS = folder with the built test plugins
    (test_handlers.so, bad_abi.so, dup_name.so, no_symbol.so,
    init_fail.so, reload_v1.so, reload_v2.so); XXL_RUNNER as for
    test_executor.  Last line: "N passed, M failed".
*/

#define _GNU_SOURCE
#include "xxl_handlers.h"
#include "xxl_executor.h"

#include <czmq.h>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "xxl_test_agent.h"

static const char *s_plugins;
static char s_dir [256];

//  Copies a built plugin into the test folder as name, atomically
static int
s_install (const char *built, const char *name)
{
    char command [1024];
    snprintf (command, sizeof command, "cp '%s/%s' '%s/.%s.tmp' && mv '%s/.%s.tmp' '%s/%s'",
              s_plugins, built, s_dir, name, s_dir, name, s_dir, name);
    return system (command);
}

//  A minimal host to call a handler directly
static char s_result [256];
static const char *h_param (xxl_run_t *run) { (void) run; return "0"; }
static int64_t h_id (xxl_run_t *run) { (void) run; return 1; }
static int h_int (xxl_run_t *run) { (void) run; return 0; }
static void h_vlog (xxl_run_t *run, const char *format, va_list args) { (void) run; (void) format; (void) args; }
static void h_set (xxl_run_t *run, int code, const char *msg)
{
    (void) run;
    snprintf (s_result, sizeof s_result, "%d %s", code, msg? msg: "");
}
static int64_t s_slept;
static int h_sleep_host (xxl_run_t *run, int64_t ms) { (void) run; s_slept = ms; return 0; }
static const xxl_handler_host_t s_host = {
    XXL_HANDLER_ABI_VERSION, sizeof (xxl_handler_host_t),
    h_param, h_id, h_id, h_int, h_int, h_vlog, h_set, h_int, NULL, NULL, NULL
};

static const char *
s_call (xxl_handler_ref_t *ref)
{
    xxl_run_t run = { &s_host, ref->plugin_state };
    s_result [0] = 0;
    ref->fn (&run);
    return s_result;
}

static int
s_wait_readable (int fd, int ms)
{
    struct pollfd item = { fd, POLLIN, 0 };
    return poll (&item, 1, ms) == 1;
}

static char *
s_slurp (const char *path)
{
    FILE *file = fopen (path, "r");
    if (!file)
        return strdup ("");
    char *text = (char *) calloc (1, 65536);
    size_t n = fread (text, 1, 65535, file);
    text [n] = 0;
    fclose (file);
    return text;
}

//  A whole file in memory, NULL if unreadable
static char *
s_read_all (const char *path, size_t *size)
{
    FILE *file = fopen (path, "rb");
    if (!file)
        return NULL;
    char *data = NULL;
    if (fseek (file, 0, SEEK_END) == 0) {
        long length = ftell (file);
        rewind (file);
        data = length > 0? (char *) malloc ((size_t) length): NULL;
        if (data && fread (data, 1, (size_t) length, file) != (size_t) length) {
            free (data);
            data = NULL;
        }
        *size = data? (size_t) length: 0;
    }
    fclose (file);
    return data;
}

static int
s_write_all (int fd, const char *data, size_t size)
{
    while (size > 0) {
        ssize_t n = write (fd, data, size);
        if (n <= 0)
            return -1;
        data += n;
        size -= (size_t) n;
    }
    return 0;
}

//  A writer copying a plugin into the folder in small pieces, as a slow
//  cp does, while the test thread scans
typedef struct {
    const char *path;
    const char *data;
    size_t size;
    size_t writing;                     //  atomic: no byte past it written yet
    int done;                           //  atomic
} writer_t;

static void *
s_writer (void *arg)
{
    writer_t *writer = (writer_t *) arg;
    int fd = open (writer->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    for (size_t at = 0; fd >= 0 && at < writer->size; at += 256) {
        size_t n = writer->size - at < 256? writer->size - at: 256;
        __atomic_store_n (&writer->writing, at + n, __ATOMIC_RELEASE);
        if (s_write_all (fd, writer->data + at, n))
            break;
        usleep (500);
    }
    if (fd >= 0)
        close (fd);
    __atomic_store_n (&writer->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

//  Open fds of this process
static int
s_fd_count (void)
{
    DIR *dir = opendir ("/proc/self/fd");
    if (!dir)
        return -1;
    int count = 0;
    struct dirent *entry;
    while ((entry = readdir (dir)))
        if (entry->d_name [0] != '.')
            count++;
    closedir (dir);
    return count - 1;                   //  not the one opendir holds
}

//  Results taken while waiting for another logId are kept here
static xxl_result_t s_taken [16];
static int s_taken_count = 0;

static int
s_wait_result (xxl_executor_t *executor, int64_t log_id, xxl_result_t *result, int ms)
{
    for (int waited = 0; waited < ms; waited += 10) {
        for (int i = 0; i < s_taken_count; i++)
            if (s_taken [i].log_id == log_id) {
                *result = s_taken [i];
                s_taken [i] = s_taken [--s_taken_count];
                return 0;
            }
        xxl_result_t taken;
        if (xxl_executor_take (executor, &taken) == 0) {
            if (s_taken_count < 16)
                s_taken [s_taken_count++] = taken;
            else
                free (taken.msg);
        }
        else
            usleep (10 * 1000);
    }
    result->msg = NULL;
    return -1;
}

//  xxl_run_sleep on a host table without sleep (an older agent): the
//  header waits itself, in slices, and still ends at a cancel
static int s_cancel_after;              //  cancelled() calls before it says 1
static int s_cancel_calls;
static int h_cancelled_late (xxl_run_t *run)
{
    (void) run;
    return ++s_cancel_calls > s_cancel_after;
}

static void
test_sleep_fallback (void)
{
    xxl_handler_host_t host = s_host;
    host.cancelled = h_cancelled_late;
    host.size = (uint32_t) offsetof (xxl_handler_host_t, sleep);
    xxl_run_t run = { &host, NULL };
    struct timespec a, b;
    s_cancel_after = 1000000;
    s_cancel_calls = 0;
    clock_gettime (CLOCK_MONOTONIC, &a);
    int rc = xxl_run_sleep (&run, 120);
    clock_gettime (CLOCK_MONOTONIC, &b);
    long took = (long) ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000);
    XXL_CHECK_MSG (rc == 0 && took >= 120, "sleep without the host's: the time passes (%d, %ld ms)",
                   rc, took);
    XXL_CHECK_MSG (s_cancel_calls >= 2, "sleep without the host's: cancelled() asked between slices"
                   " (%d)", s_cancel_calls);
    s_cancel_after = 1;
    s_cancel_calls = 0;
    clock_gettime (CLOCK_MONOTONIC, &a);
    rc = xxl_run_sleep (&run, 60000);
    clock_gettime (CLOCK_MONOTONIC, &b);
    took = (long) ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000);
    XXL_CHECK_MSG (rc == 1 && took < 1000, "sleep without the host's: a cancel ends it (%d, %ld ms)",
                   rc, took);
    //  A host's own sleep is called when its table has one
    host.size = sizeof host;
    host.sleep = h_sleep_host;
    s_slept = -1;
    XXL_CHECK_MSG (xxl_run_sleep (&run, 42) == 0 && s_slept == 42, "sleep: the host's own (%lld)",
                   (long long) s_slept);
}

int
main (void)
{
    if (xxl_test_agent_start (s_dir, sizeof s_dir, "handlers"))
        return xxl_test_done ();
    s_plugins = xxl_test_agent_plugins ();
    char logpath [512];
    snprintf (logpath, sizeof logpath, "%s.log", s_dir);
    FILE *logfile = fopen (logpath, "w");
    zsys_set_logstream (logfile);

    int fds_before = s_fd_count ();
    test_sleep_fallback ();

    //  No folder, missing folder
    xxl_handlers_t *handlers = xxl_handlers_new (NULL);
    XXL_CHECK_MSG (handlers && xxl_handlers_size (handlers) == 0, "NULL folder: empty set");
    char *names = xxl_handlers_names (handlers);
    XXL_CHECK_MSG (names && streq (names, ""), "no names");
    free (names);
    XXL_CHECK_MSG (xxl_handlers_watch_fd (handlers) == -1, "no watch fd");
    XXL_CHECK_MSG (xxl_handlers_rescan (handlers) == -1, "no rescan without folder");
    xxl_handlers_destroy (&handlers);
    XXL_CHECK_MSG (handlers == NULL, "destroy nulls");
    handlers = xxl_handlers_new ("/nonexistent/xxl/plugins");
    XXL_CHECK_MSG (handlers && xxl_handlers_size (handlers) == 0, "missing folder: empty set");
    xxl_handlers_destroy (&handlers);

    //  A folder of good and bad plugins
    s_install ("test_handlers.so", "a_test.so");
    s_install ("dup_name.so", "b_dup.so");
    s_install ("bad_abi.so", "c_bad_abi.so");
    s_install ("no_symbol.so", "d_no_symbol.so");
    s_install ("init_fail.so", "e_init_fail.so");
    char path [512];
    snprintf (path, sizeof path, "%s/f_junk.so", s_dir);
    xxl_test_write (path, "not an ELF file\n");
    snprintf (path, sizeof path, "%s/readme.txt", s_dir);
    xxl_test_write (path, "ignored\n");
    handlers = xxl_handlers_new (s_dir);
    XXL_CHECK_MSG (handlers != NULL, "new with bad plugins");
    XXL_CHECK_MSG (xxl_handlers_exists (handlers, "okJobHandler"), "okJobHandler loaded");
    XXL_CHECK_MSG (xxl_handlers_exists (handlers, "dupOnlyJobHandler"), "duplicate plugin's other handler loaded");
    XXL_CHECK_MSG (!xxl_handlers_exists (handlers, "badAbiJobHandler"), "bad ABI refused");
    XXL_CHECK_MSG (!xxl_handlers_exists (handlers, "initFailJobHandler"), "init failure refused");
    XXL_CHECK_MSG (xxl_handlers_size (handlers) == 19, "19 handlers (%zu)", xxl_handlers_size (handlers));
    names = xxl_handlers_names (handlers);
    XXL_CHECK_MSG (names && strncmp (names, "crashJobHandler,dupOnlyJobHandler,emptyInJobHandler,", 52) == 0,
                   "sorted names: %s", names? names: "");
    free (names);
    xxl_handler_ref_t ref;
    XXL_CHECK_MSG (xxl_handlers_acquire (handlers, "okJobHandler", &ref) == 0, "acquire");
    XXL_CHECK_MSG (strstr (ref.plugin_path, "a_test.so") && streq (s_call (&ref), "200 ok"),
                   "first loaded keeps the name");
    XXL_CHECK_MSG (ref.plugin_fd >= 0, "plugin fd for runners");
    xxl_handlers_release (&ref);
    XXL_CHECK_MSG (ref.plugin == NULL, "release zeroes the ref");
    xxl_handlers_release (&ref);                //  no-op
    XXL_CHECK_MSG (xxl_handlers_acquire (handlers, "nope", &ref) == -1, "acquire unknown -1");
    fflush (logfile);
    char *log = s_slurp (logpath);
    XXL_CHECK_MSG (strstr (log, "ABI version mismatch"), "log: ABI version mismatch");
    XXL_CHECK_MSG (strstr (log, "missing symbol xxl_handler_plugin"), "log: missing symbol");
    XXL_CHECK_MSG (strstr (log, "duplicate handler name 'okJobHandler'"), "log: duplicate name");
    XXL_CHECK_MSG (strstr (log, "init failed: no database here"), "log: init failure");
    XXL_CHECK_MSG (strstr (log, "f_junk.so: dlopen failed"), "log: dlopen error");
    free (log);

    //  Nothing changed: rescan loads nothing, and does not retry bad files
    XXL_CHECK_MSG (xxl_handlers_rescan (handlers) == 0, "rescan without changes");

    //  Hot reload
    int watch = xxl_handlers_watch_fd (handlers);
    XXL_CHECK_MSG (watch >= 0, "watch fd");
    s_install ("reload_v1.so", "reload.so");
    XXL_CHECK_MSG (s_wait_readable (watch, 2000), "inotify saw the new plugin");
    XXL_CHECK_MSG (xxl_handlers_rescan (handlers) == 1, "rescan loads it");
    XXL_CHECK_MSG (!s_wait_readable (watch, 0), "rescan drained the watch fd");
    xxl_handler_ref_t v1;
    XXL_CHECK_MSG (xxl_handlers_acquire (handlers, "versionJobHandler", &v1) == 0
        && streq (s_call (&v1), "200 v1"), "v1 loaded");

    //  A run in flight in an isolated runner keeps v1 too
    char logdir [300];
    snprintf (logdir, sizeof logdir, "%s/logs", s_dir);
    xxl_executor_config_t config = { 0 };
    config.logdir = logdir;
    xxl_executor_t *executor = xxl_executor_new (&config, handlers);
    xxl_trigger_t trigger = { 0 };
    trigger.job_id = 1;
    trigger.log_id = 1;
    trigger.handler = "versionIsoJobHandler";
    trigger.params = "700";
    char msg [256];
    XXL_CHECK_MSG (xxl_executor_run (executor, &trigger, msg, sizeof msg) == 0, "isolated v1 run");
    trigger.job_id = 2;
    trigger.log_id = 2;
    trigger.handler = "versionSleepJobHandler";
    XXL_CHECK_MSG (xxl_executor_run (executor, &trigger, msg, sizeof msg) == 0, "in-process v1 run");
    usleep (200 * 1000);

    s_install ("reload_v2.so", "reload.so");
    XXL_CHECK_MSG (s_wait_readable (watch, 2000), "inotify saw the replacement");
    XXL_CHECK_MSG (xxl_handlers_rescan (handlers) == 2, "rescan unloads v1 and loads v2");
    xxl_handler_ref_t v2;
    XXL_CHECK_MSG (xxl_handlers_acquire (handlers, "versionJobHandler", &v2) == 0
        && streq (s_call (&v2), "200 v2"), "v2 loaded");
    XXL_CHECK_MSG (streq (s_call (&v1), "200 v1"), "v1 still callable while referenced");
    XXL_CHECK_MSG (v1.generation != v2.generation, "new generation");
    xxl_handlers_release (&v1);
    xxl_handlers_release (&v2);

    xxl_result_t result;
    XXL_CHECK_MSG (s_wait_result (executor, 1, &result, 5000) == 0 && result.msg && streq (result.msg, "v1"),
                   "isolated run in flight kept v1");
    free (result.msg);
    XXL_CHECK_MSG (s_wait_result (executor, 2, &result, 5000) == 0 && result.msg && streq (result.msg, "v1"),
                   "in-process run in flight kept v1");
    free (result.msg);
    trigger.job_id = 3;
    trigger.log_id = 3;
    trigger.handler = "versionIsoJobHandler";
    trigger.params = "0";
    XXL_CHECK_MSG (xxl_executor_run (executor, &trigger, msg, sizeof msg) == 0, "isolated v2 run");
    XXL_CHECK_MSG (s_wait_result (executor, 3, &result, 5000) == 0 && result.msg && streq (result.msg, "v2"),
                   "new isolated run gets v2");
    free (result.msg);
    xxl_executor_destroy (&executor);

    //  Removal
    snprintf (path, sizeof path, "%s/reload.so", s_dir);
    unlink (path);
    XXL_CHECK_MSG (s_wait_readable (watch, 2000), "inotify saw the removal");
    XXL_CHECK_MSG (xxl_handlers_rescan (handlers) == 1, "rescan unloads it");
    XXL_CHECK_MSG (!xxl_handlers_exists (handlers, "versionJobHandler"), "removed handler gone");
    XXL_CHECK_MSG (xxl_handlers_exists (handlers, "okJobHandler"), "others stay");

    //  A fixed bad plugin loads on the next change
    s_install ("init_fail.so", "c_bad_abi.so");
    XXL_CHECK_MSG (xxl_handlers_rescan (handlers) == 0, "replacement still bad");

    //  A plugin copied in by plain cp is seen half-written: a scan at each
    //  cut refuses it with a log line (no SIGBUS in dlopen), and it loads
    //  once the copy ends (the close wakes the watch fd)
    size_t v1_size = 0, v2_size = 0;
    snprintf (path, sizeof path, "%s/reload_v1.so", s_plugins);
    char *v1_bytes = s_read_all (path, &v1_size);
    snprintf (path, sizeof path, "%s/reload_v2.so", s_plugins);
    char *v2_bytes = s_read_all (path, &v2_size);
    XXL_CHECK_MSG (v1_bytes && v2_bytes && v1_size > 4096 && v2_size > 4096, "built reload plugins read");
    if (!v1_bytes || !v2_bytes || v1_size <= 4096 || v2_size <= 4096) {
        return xxl_test_done ();
    }
    snprintf (path, sizeof path, "%s/g_copied.so", s_dir);
    int copy = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    XXL_CHECK_MSG (copy >= 0, "copy target created");
    size_t cuts [] = { 40, 100, v1_size / 4, v1_size / 2, v1_size - 1 };
    size_t written = 0;
    int refused = 0, fds_refusing = -1;
    for (size_t i = 0; i < sizeof cuts / sizeof cuts [0]; i++) {
        s_write_all (copy, v1_bytes + written, cuts [i] - written);
        written = cuts [i];
        if (xxl_handlers_rescan (handlers) == 0 && !xxl_handlers_exists (handlers, "versionJobHandler"))
            refused++;
        if (i == 0)
            fds_refusing = s_fd_count ();
    }
    XXL_CHECK_MSG (refused == 5, "a half-written plugin is refused at every cut (%d of 5)", refused);
    XXL_CHECK_MSG (s_fd_count () == fds_refusing, "refusals leave no fd behind (%d, then %d)",
                   fds_refusing, s_fd_count ());
    fflush (logfile);
    log = s_slurp (logpath);
    XXL_CHECK_MSG (strstr (log, "g_copied.so: incomplete file (still being written?): 40 bytes, cut in the ELF header (up to byte "),
                   "log: cut in the ELF header");
    XXL_CHECK_MSG (strstr (log, "g_copied.so: incomplete file (still being written?): 100 bytes, cut in the program headers"),
                   "log: cut in the program headers");
    XXL_CHECK_MSG (strstr (log, "bytes, cut in the section headers (up to byte "),
                   "log: cut in the section headers");
    XXL_CHECK_MSG (strstr (log, "plugin skipped until it changes again"), "log: skipped until it changes");
    XXL_CHECK_MSG (!strstr (log, "g_copied.so: dlopen failed") && !strstr (log, "g_copied.so (reload"),
                   "log: never handed to dlopen, never loaded");
    free (log);
    XXL_CHECK_MSG (xxl_handlers_rescan (handlers) == 0, "an unchanged half file is not retried");
    s_write_all (copy, v1_bytes + written, v1_size - written);
    close (copy);
    XXL_CHECK_MSG (s_wait_readable (watch, 2000), "inotify saw the copy end");
    XXL_CHECK_MSG (xxl_handlers_rescan (handlers) == 1, "the completed copy loads");
    xxl_handler_ref_t copied;
    XXL_CHECK_MSG (xxl_handlers_acquire (handlers, "versionJobHandler", &copied) == 0
        && streq (s_call (&copied), "200 v1"), "its handler runs");

    //  The loaded plugin's file rewritten in place (cp over it: same
    //  inode, truncated, written again): the loaded code stays intact, in
    //  process and for a queued isolated run accepted before the rewrite;
    //  the new version loads when the copy ends
    executor = xxl_executor_new (&config, handlers);
    trigger.job_id = 10;
    trigger.log_id = 10;
    trigger.handler = "versionIsoJobHandler";
    trigger.params = "600";
    XXL_CHECK_MSG (xxl_executor_run (executor, &trigger, msg, sizeof msg) == 0, "isolated run 10");
    trigger.log_id = 11;
    trigger.params = "0";
    XXL_CHECK_MSG (xxl_executor_run (executor, &trigger, msg, sizeof msg) == 0, "isolated run 11 queued behind it");
    usleep (200 * 1000);
    copy = open (path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    XXL_CHECK_MSG (copy >= 0, "rewrite in place");
    XXL_CHECK_MSG (streq (s_call (&copied), "200 v1"), "the loaded handler runs with its file truncated");
    s_write_all (copy, v2_bytes, v2_size / 2);
    XXL_CHECK_MSG (xxl_handlers_rescan (handlers) == 1 && !xxl_handlers_exists (handlers, "versionJobHandler"),
                   "the changed file retires v1, its half is refused");
    XXL_CHECK_MSG (streq (s_call (&copied), "200 v1"), "the loaded handler runs with its file half rewritten");
    s_write_all (copy, v2_bytes + v2_size / 2, v2_size - v2_size / 2);
    close (copy);
    XXL_CHECK_MSG (s_wait_readable (watch, 2000), "inotify saw the rewrite end");
    XXL_CHECK_MSG (xxl_handlers_rescan (handlers) == 1, "the rewritten file loads");
    xxl_handler_ref_t rewritten;
    XXL_CHECK_MSG (xxl_handlers_acquire (handlers, "versionJobHandler", &rewritten) == 0
        && streq (s_call (&rewritten), "200 v2"), "the new version runs");
    XXL_CHECK_MSG (streq (s_call (&copied), "200 v1"), "the old version still runs while referenced");
    xxl_handlers_release (&copied);
    xxl_handlers_release (&rewritten);
    XXL_CHECK_MSG (s_wait_result (executor, 10, &result, 5000) == 0 && result.msg && streq (result.msg, "v1"),
                   "isolated run 10 kept v1 (%s)", result.msg? result.msg: "no result");
    free (result.msg);
    XXL_CHECK_MSG (s_wait_result (executor, 11, &result, 5000) == 0 && result.msg && streq (result.msg, "v1"),
                   "queued isolated run 11 loaded v1's snapshot, not the rewritten file (%s)",
                   result.msg? result.msg: "no result");
    free (result.msg);
    trigger.log_id = 12;
    XXL_CHECK_MSG (xxl_executor_run (executor, &trigger, msg, sizeof msg) == 0, "isolated run 12");
    XXL_CHECK_MSG (s_wait_result (executor, 12, &result, 5000) == 0 && result.msg && streq (result.msg, "v2"),
                   "a new isolated run gets v2");
    free (result.msg);
    xxl_executor_destroy (&executor);

    //  Scans racing a copy in progress: none crashes or loads a partial
    //  file, and the finished copy loads
    unlink (path);
    XXL_CHECK_MSG (xxl_handlers_rescan (handlers) == 1, "g_copied.so removed");
    snprintf (path, sizeof path, "%s/h_racing.so", s_dir);
    writer_t writer = { path, v1_bytes, v1_size, 0, 0 };
    pthread_t thread;
    int scans = 0, loaded_early = 0;
    if (pthread_create (&thread, NULL, s_writer, &writer) == 0) {
        while (!__atomic_load_n (&writer.done, __ATOMIC_ACQUIRE)) {
            xxl_handlers_rescan (handlers);
            if (xxl_handlers_exists (handlers, "versionJobHandler")
            &&  __atomic_load_n (&writer.writing, __ATOMIC_ACQUIRE) < v1_size)
                loaded_early++;
            scans++;
        }
        pthread_join (thread, NULL);
    }
    XXL_CHECK_MSG (scans > 10 && loaded_early == 0,
                   "%d scans during the copy, none loaded it before its last byte (%d did)",
                   scans, loaded_early);
    s_wait_readable (watch, 2000);
    xxl_handlers_rescan (handlers);
    XXL_CHECK_MSG (xxl_handlers_exists (handlers, "versionJobHandler"), "the finished copy loads");
    xxl_handler_ref_t raced;
    XXL_CHECK_MSG (xxl_handlers_acquire (handlers, "versionJobHandler", &raced) == 0
        && streq (s_call (&raced), "200 v1"), "and runs");
    xxl_handlers_release (&raced);
    free (v1_bytes);
    free (v2_bytes);
    xxl_handlers_destroy (&handlers);
    XXL_CHECK_MSG (s_fd_count () == fds_before, "no fd left open (%d before, %d after)",
                   fds_before, s_fd_count ());

    zsys_set_logstream (stderr);
    fclose (logfile);
    unlink (logpath);
    if (xxl_test_rmtree (s_dir))
        {}
    return xxl_test_done ();
}
