/*  xxl_test_agent.h -- the setup the agent's C tests share (test_runlog,
    test_runpack, test_spool, test_journal, test_handlers, test_executor,
    test_executor_stress), on top of xxl_test.h.  Needs -I agent.

    xxl_test_agent_start: stdout line-buffered (a test log reads in order),
    czmq up with its log silenced, and a fresh temp folder
    $TMPDIR/xxl-test-NAME-XXXXXX in dir; 0, or -1 with a failure counted
    (the caller returns xxl_test_done ()).

    xxl_test_agent_plugins: the built test plugins' folder
    (XXL_TEST_PLUGINS, else tests/plugins), and XXL_RUNNER set to the
    built xxl-runner (./xxl-runner, else ../agent/xxl-runner) unless set.

    xxl_test_agent_handlers: test_handlers.so alone, copied from plugins
    into DIR/plugins (the plugins folder also holds plugins that fail to
    load), and loaded from there; NULL if it cannot be loaded.
*/

#ifndef XXL_TEST_AGENT_H_INCLUDED
#define XXL_TEST_AGENT_H_INCLUDED

#include <czmq.h>
#include <unistd.h>
#include "xxl_handlers.h"
#include "xxl_test.h"

static inline int
xxl_test_agent_start (char *dir, size_t size, const char *name)
{
    setvbuf (stdout, NULL, _IOLBF, 0);
    zsys_init ();
    zsys_set_logstream (NULL);
    return xxl_test_tmpdir (dir, size, name);
}

static inline const char *
xxl_test_agent_plugins (void)
{
    if (!getenv ("XXL_RUNNER"))
        setenv ("XXL_RUNNER", access ("./xxl-runner", X_OK) == 0? "./xxl-runner":
                                                                  "../agent/xxl-runner", 1);
    const char *plugins = getenv ("XXL_TEST_PLUGINS");
    return plugins? plugins: "tests/plugins";
}

static inline xxl_handlers_t *
xxl_test_agent_handlers (const char *dir, const char *plugins)
{
    char plugin_dir [600], command [1600];
    snprintf (plugin_dir, sizeof plugin_dir, "%s/plugins", dir);
    snprintf (command, sizeof command, "mkdir -p '%s' && cp '%s/test_handlers.so' '%s/'",
              plugin_dir, plugins, plugin_dir);
    if (system (command))
        printf ("cannot copy %s/test_handlers.so\n", plugins);
    return xxl_handlers_new (plugin_dir);
}

#endif
