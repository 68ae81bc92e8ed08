/*  bad_abi.c -- a test plugin built against another ABI version: the
    agent must refuse it with a clear log line and keep running.  */

#include <xxl/handler.h>

static int s_never (xxl_run_t *run) { (void) run; return 0; }

static const xxl_handler_t s_handlers [] = {
    { "badAbiJobHandler", s_never, 0 },
    { NULL, NULL, 0 }
};

__attribute__ ((visibility ("default")))
const xxl_handler_plugin_t *xxl_handler_plugin (void)
{
    static const xxl_handler_plugin_t s_plugin = {
        XXL_HANDLER_ABI_VERSION + 98, sizeof (xxl_handler_plugin_t),
        "bad_abi", "1.0", NULL, NULL, s_handlers
    };
    return &s_plugin;
}
