/*  dup_name.c -- a test plugin whose okJobHandler duplicates the one of
    test_handlers.so (loaded first, it keeps the name); its other handler,
    dupOnlyJobHandler, loads.  */

#include <xxl/handler.h>

static int s_other (xxl_run_t *run) { return xxl_run_success (run, "from dup_name"); }

static const xxl_handler_t s_handlers [] = {
    { "okJobHandler", s_other, 0 },
    { "dupOnlyJobHandler", s_other, 0 },
    { NULL, NULL, 0 }
};

XXL_HANDLER_PLUGIN ("dup_name", "1.0", NULL, NULL, s_handlers)
