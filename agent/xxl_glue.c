/*  xxl_glue.c -- GLUE scripts: their types, source files and interpreters
    (see xxl_glue.h).

    Its contract (ownership, threads, errors) is the header's.  Owns the
    glue type tables and the interpreters found at xxl_glue_new.  Used by
    xxl_executor.c (types, at accept) and xxl_runexec.c (sources and
    commands, on pool threads).
*/

#define _GNU_SOURCE
#include "xxl_glue.h"

#include <czmq.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

struct _xxl_glue_t {
    char *logdir;
    char *gluedir;
    char *interpreters [XXL_GLUE_COUNT];
};

static const char *s_glue_names [XXL_GLUE_COUNT] = {
    "BEAN", "GLUE_SHELL", "GLUE_PYTHON", "GLUE_NODEJS", "GLUE_PHP", "GLUE_POWERSHELL",
    "GLUE_PYTHON2"
};
static const char *s_glue_default [XXL_GLUE_COUNT] = {
    NULL, "bash", "python3", "node", "php", "pwsh", "python2"
};
static const char *s_glue_ext [XXL_GLUE_COUNT] = {
    NULL, "sh", "py", "js", "php", "ps1", "py"
};

//  The first executable file named name (no slash) in PATH, written to
//  found (when not NULL); 1 if there is one, 0 if not
static int
s_which (const char *name, char *found, size_t foundlen)
{
    const char *path = getenv ("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    char candidate [4096];
    while (*path) {
        size_t len = strcspn (path, ":");
        snprintf (candidate, sizeof candidate, "%.*s/%s", (int) len, len? path: ".", name);
        if (access (candidate, X_OK) == 0) {
            if (found)
                snprintf (found, foundlen, "%s", candidate);
            return 1;
        }
        path += len;
        if (*path == ':')
            path++;
    }
    return 0;
}

static int
s_in_path (const char *name)
{
    return s_which (name, NULL, 0);
}

xxl_glue_t *
xxl_glue_new (const char *logdir, const char *const interpreters [XXL_GLUE_COUNT])
{
    xxl_glue_t *self = (xxl_glue_t *) calloc (1, sizeof (xxl_glue_t));
    if (!self)
        return NULL;
    self->logdir = strdup (logdir);
    if (self->logdir && asprintf (&self->gluedir, "%s/gluesource", self->logdir) < 0)
        self->gluedir = NULL;
    int ok = self->logdir && self->gluedir;
    for (int i = 1; i < XXL_GLUE_COUNT && ok; i++) {
        const char *name = interpreters && interpreters [i]? interpreters [i]: s_glue_default [i];
        //  Found in PATH once, here (see xxl_glue.h)
        char found [4096];
        if (!strchr (name, '/') && s_which (name, found, sizeof found))
            name = found;
        self->interpreters [i] = strdup (name);
        ok = self->interpreters [i] != NULL;
    }
    if (!ok)
        xxl_glue_destroy (&self);
    return self;
}

void
xxl_glue_destroy (xxl_glue_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    xxl_glue_t *self = *self_p;
    *self_p = NULL;
    for (int i = 0; i < XXL_GLUE_COUNT; i++)
        free (self->interpreters [i]);
    free (self->gluedir);
    free (self->logdir);
    free (self);
}

int
xxl_glue_type (const char *name)
{
    if (!name || !*name)
        return XXL_GLUE_BEAN;
    for (int i = 0; i < XXL_GLUE_COUNT; i++)
        if (streq (name, s_glue_names [i]))
            return i;
    return -1;
}

const char *
xxl_glue_name (int type)
{
    return s_glue_names [type];
}

int
xxl_glue_write (xxl_glue_t *self, int type, int64_t job_id, int64_t glue_updatetime,
                const char *source, char *path, size_t pathlen, char *msg, size_t msglen)
{
    snprintf (path, pathlen, "%s/%lld_%lld.%s", self->gluedir, (long long) job_id,
              (long long) glue_updatetime, s_glue_ext [type]);
    if (access (path, R_OK) == 0)
        return 0;
    mkdir (self->logdir, 0750);          //  (XXL_RUNLOG_DIR_MODE)
    mkdir (self->gluedir, 0700);
    char tmp [4200];
    snprintf (tmp, sizeof tmp, "%s.%ld.tmp", path, (long) syscall (SYS_gettid));
    int fd = open (tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);
    if (fd < 0) {
        snprintf (msg, msglen, "cannot write glue source %.3000s: %s", tmp, strerror (errno));
        return -1;
    }
    if (!source)
        source = "";
    size_t len = strlen (source);
    ssize_t rc = write (fd, source, len);
    close (fd);
    if (rc != (ssize_t) len || rename (tmp, path)) {
        snprintf (msg, msglen, "cannot write glue source %.3000s: %s", path, strerror (errno));
        unlink (tmp);
        return -1;
    }
    return 0;
}

//  The interpreter line of a script that starts with "#!": its words
//  (split at blanks, as env -S would; Linux passes the rest of the line as
//  one argument, which breaks "#!/usr/bin/env python3 -u") into words, at
//  most max - 1 of them, NULL-terminated, pointing into line (a copy of the
//  first line, at most linelen - 1 bytes).  Returns the number of words, 0
//  when the source has no "#!" line or names nothing.
static int
s_shebang (const char *source, char *line, size_t linelen, char *words [], int max)
{
    if (!source || source [0] != '#' || source [1] != '!')
        return 0;
    const char *start = source + 2;
    size_t len = strcspn (start, "\n");
    if (len >= linelen)
        len = linelen - 1;
    memcpy (line, start, len);
    line [len] = 0;
    int count = 0;
    char *save = NULL;
    for (char *word = strtok_r (line, " \t\r", &save); word && count < max - 1;
         word = strtok_r (NULL, " \t\r", &save))
        words [count++] = word;
    words [count] = NULL;
    return count;
}

//  The program a shebang's words run, as far as it can be told before the
//  spawn: words [0], or for "env" the first word that is no option and no
//  NAME=VALUE.  1 if it is there (or cannot be told), 0 if not; *missing
//  names it then.
static int
s_shebang_found (char *words [], int count, const char **missing)
{
    const char *program = words [0];
    const char *base = strrchr (program, '/');
    base = base? base + 1: program;
    if (streq (base, "env")) {
        program = NULL;
        for (int i = 1; i < count && !program; i++)
            if (words [i][0] != '-' && !strchr (words [i], '='))
                program = words [i];
        if (!program)
            return 1;
    }
    *missing = program;
    if (strchr (program, '/'))
        return access (program, X_OK) == 0;
    return s_in_path (program);
}

int
xxl_glue_command (xxl_glue_t *self, int type, const char *source,
                  char *line, size_t linelen, char *words [],
                  char *msg, size_t msglen)
{
    //  A script that starts with "#!" runs with the interpreter it names
    //  (words of its first line, then the script and its arguments);
    //  others with their type's interpreter (GLUE_SHELL: bash, as XXL-JOB)
    int count = s_shebang (source, line, linelen, words, XXL_GLUE_WORDS + 1);
    if (count > 0) {
        const char *missing = words [0];
        if (!s_shebang_found (words, count, &missing)) {
            const char *first = source + 2;
            int len = (int) strcspn (first, "\r\n");
            snprintf (msg, msglen, "interpreter '%.200s' not found (the script's first"
                      " line: #!%.*s)", missing, len > 300? 300: len, first);
            return -1;
        }
    }
    else
        words [count++] = self->interpreters [type];
    return count;
}
