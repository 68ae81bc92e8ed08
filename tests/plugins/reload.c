/*  reload.c: the same handler name, versionJobHandler,
    answering "v1" or "v2" (RELOAD_VERSION), for hot reload tests; built
    twice: -DRELOAD_VERSION='"v1"' and '"v2"'.  versionSleepJobHandler
    sleeps param ms then answers the version, to show a run in flight keeps
    its code.  */

#include <xxl/handler.h>
#include <stdlib.h>
#include <time.h>

#ifndef RELOAD_VERSION
#define RELOAD_VERSION "v1"
#endif

static int s_version (xxl_run_t *run) { return xxl_run_success (run, RELOAD_VERSION); }

static int
s_version_sleep (xxl_run_t *run)
{
    long ms = atol (xxl_run_param (run));
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
    nanosleep (&ts, NULL);
    return xxl_run_success (run, RELOAD_VERSION);
}

static const xxl_handler_t s_handlers [] = {
    { "versionJobHandler", s_version, XXL_HANDLER_IN_PROCESS },
    { "versionSleepJobHandler", s_version_sleep, XXL_HANDLER_IN_PROCESS },
    { "versionIsoJobHandler", s_version_sleep, 0 },
    { NULL, NULL, 0 }
};

XXL_HANDLER_PLUGIN ("reload", RELOAD_VERSION, NULL, NULL, s_handlers)
