/*  init_fail.c -- a test plugin whose init refuses to start.  */

#include <xxl/handler.h>

static void *s_init (const char **error) { *error = "no database here"; return NULL; }
static int s_never (xxl_run_t *run) { (void) run; return 0; }

static const xxl_handler_t s_handlers [] = {
    { "initFailJobHandler", s_never, 0 },
    { NULL, NULL, 0 }
};

XXL_HANDLER_PLUGIN ("init_fail", "1.0", s_init, NULL, s_handlers)
