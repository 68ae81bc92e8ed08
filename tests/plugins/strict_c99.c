/*  strict_c99.c -- a plugin built with -std=c99 -pedantic-errors -Werror
    and no feature macro (Makefile.am): <xxl/handler.h> compiles in strict
    ISO C, its POSIX parts (xxl_run_sleep's own wait) left out.  Built by
    make check, never loaded.
*/

#include <xxl/handler.h>

static int
s_nap (xxl_run_t *run)
{
    if (xxl_run_sleep (run, 10))
        return xxl_run_fail (run, "cancelled");
    return xxl_run_success (run, "napped");
}

static const xxl_handler_t s_handlers [] = {
    { "strictJobHandler", s_nap, 0 },
    { NULL, NULL, 0 }
};

XXL_HANDLER_PLUGIN ("strict", "1.0", NULL, NULL, s_handlers)
