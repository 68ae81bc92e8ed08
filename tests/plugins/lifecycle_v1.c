/*  lifecycle_v1.c -- a plugin as built against the first descriptor
    (xxl/handler.h before `lifecycle` was appended): its size is
    XXL_HANDLER_PLUGIN_SIZE_V1.  What lies past that size is not the
    plugin's to say, so here it is a trap: a lifecycle table whose init and
    destroy record "trap J" in XXL_TEST_LIFE_LOG.  An agent that reads past
    `size` runs them; one that honours it loads the plugin and runs
    oldLifeJobHandler as before ("job_state=none").
*/

#define _GNU_SOURCE
#include <xxl/handler.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void
s_trap (int64_t job_id)
{
    const char *path = getenv ("XXL_TEST_LIFE_LOG");
    char line [64];
    int size = snprintf (line, sizeof line, "trap %lld\n", (long long) job_id);
    int fd = path? open (path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600): -1;
    if (fd >= 0) {
        ssize_t written = write (fd, line, (size_t) size);
        (void) written;
        close (fd);
    }
}

static int
s_trap_init (xxl_run_t *run, void **job_state)
{
    (void) job_state;
    s_trap (xxl_run_job_id (run));
    return -1;
}

static void
s_trap_destroy (int64_t job_id, void *plugin_state, void *job_state)
{
    (void) plugin_state;
    (void) job_state;
    s_trap (job_id);
}

static int
s_old (xxl_run_t *run)
{
    return xxl_run_success (run, xxl_run_job_state (run)? "job_state=set": "job_state=none");
}

static const xxl_handler_t s_handlers [] = {
    { "oldLifeJobHandler", s_old, XXL_HANDLER_IN_PROCESS },
    { NULL, NULL, 0 }
};

static const xxl_handler_lifecycle_t s_trap_table [] = {
    { "oldLifeJobHandler", s_trap_init, s_trap_destroy },
    { NULL, NULL, NULL }
};

__attribute__ ((visibility ("default")))
const xxl_handler_plugin_t *
xxl_handler_plugin (void)
{
    static const xxl_handler_plugin_t s_plugin = {
        XXL_HANDLER_ABI_VERSION, XXL_HANDLER_PLUGIN_SIZE_V1,
        "lifecycle_v1", "1.0", NULL, NULL, s_handlers, s_trap_table
    };
    return &s_plugin;
}
