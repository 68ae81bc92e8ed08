/*  test_plugins.c -- unit tests of the scheduler's plugin loader (xxl_plugins).

    Describes a plugin ABI of its own (tests/loader/sample.h) to the loader
    and loads the variants of tests/loader/sample.c, found in
    $XXL_TEST_LOADER_PLUGINS (default $XXL_BUILD/tests/loader/.libs, else
    tests/loader/.libs) and copied into folders of a temporary directory.
    Checks: files load in name order, and the first file keeps a name
    another registers too; dot files and files not ending in ".so" are
    left alone; bad items are ignored and the plugin's others register;
    a missing entry symbol, a wrong ABI version, a too small descriptor, a
    NULL descriptor, validate's refusal, a plugin whose only item is taken,
    a failing init and a file dlopen cannot load are each refused with
    their log line while the good plugin of the same folder loads; a
    folder that cannot be read fails the load, and the same loader then
    loads it once readable; lookups by name and length; init in load
    order and destroy in reverse.  The last output line is
    "N passed, M failed".
*/

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "xxl_plugins.h"
#include "loader/sample.h"
#include "xxl_test.h"

//  --------------------------------------------------------------------------
//  The host: log capture, and the plugins' notes of init and destroy

static char s_log [16384];
static char s_notes [1024];
static char s_tmp [512];                //  the temporary directory
static const char *s_plugins;           //  where the built variants are

static void
s_vlog (int level, const char *format, va_list args)
{
    (void) level;
    size_t used = strlen (s_log);
    if (used + 2 < sizeof s_log) {
        vsnprintf (s_log + used, sizeof s_log - used - 1, format, args);
        strcat (s_log, "\n");
    }
}

static void
s_note (const char *what)
{
    size_t used = strlen (s_notes);
    snprintf (s_notes + used, sizeof s_notes - used, "%s;", what);
}

static const sample_host_t s_host = { s_note };

//  Resets the captures
static void
s_reset (void)
{
    s_log [0] = 0;
    s_notes [0] = 0;
}

//  Position of part in the log, -1 when absent
static long
s_log_at (const char *part)
{
    const char *at = strstr (s_log, part);
    return at? at - s_log: -1;
}

//  --------------------------------------------------------------------------
//  The sample ABI, described to the loader

static const char *
s_validate (void *ctx, const void *desc_, xxl_plugins_about_t *about)
{
    (void) ctx;
    const sample_plugin_t *desc = (const sample_plugin_t *) desc_;
    if (!desc->items)
        return "it lists no items";
    about->name = desc->name;
    about->version = desc->version;
    about->items = desc->items;
    return NULL;
}

static int
s_check_item (void *ctx, const void *item_, char *why, size_t whylen)
{
    (void) ctx;
    const sample_item_t *item = (const sample_item_t *) item_;
    int letters = item->name [0] != 0;
    for (const char *c = item->name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z')))
            letters = 0;
    if (!letters) {
        snprintf (why, whylen, "item name '%s' is invalid (letters only)", item->name);
        return -1;
    }
    if (item->value <= 0) {
        snprintf (why, whylen, "item %s has no value", item->name);
        return -1;
    }
    return 0;
}

static int
s_init (void *ctx, const void *desc_, void **state, const char **error)
{
    const sample_plugin_t *desc = (const sample_plugin_t *) desc_;
    if (desc->init && !(*state = desc->init ((const sample_host_t *) ctx, error)))
        return -1;
    return 0;
}

static void
s_destroy (void *ctx, const void *desc_, void *state)
{
    (void) ctx;
    const sample_plugin_t *desc = (const sample_plugin_t *) desc_;
    if (desc->destroy)
        desc->destroy (state);
}

#define S_MIN_SIZE  (offsetof (sample_plugin_t, items) + sizeof (const sample_item_t *))

static const xxl_plugins_abi_t s_abi = {
    .entry = SAMPLE_ENTRY,
    .abi_version = SAMPLE_ABI_VERSION,
    .min_size = S_MIN_SIZE,
    .item_size = sizeof (sample_item_t),
    .plugin = "sample plugin",
    .not_one = "not a sample plugin",
    .abi = "sample ABI",
    .folder = "sample folder",
    .duplicate = "item name",
    .usable = "item",
    .loaded = "item",
    .validate = s_validate,
    .check_item = s_check_item,
    .init = s_init,
    .destroy = s_destroy
};

static xxl_plugins_t *
s_new (void)
{
    return xxl_plugins_new (&s_abi, (void *) &s_host, s_vlog);
}

//  --------------------------------------------------------------------------
//  Folders

//  Makes folder name under the temporary directory; its path goes to path
static void
s_folder (const char *name, char *path, size_t len)
{
    snprintf (path, len, "%s/%s", s_tmp, name);
    if (mkdir (path, 0700) != 0)
        fprintf (stderr, "cannot create %s: %s\n", path, strerror (errno));
}

//  Copies a built variant (variant.so) into folder as file (a copy, not a
//  link: dlopen tells loaded objects apart by file)
static void
s_copy (const char *variant, const char *folder, const char *file)
{
    char from [1024], to [1024];
    snprintf (from, sizeof from, "%s/%s.so", s_plugins, variant);
    snprintf (to, sizeof to, "%s/%s", folder, file);
    int in = open (from, O_RDONLY);
    int out = open (to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int ok = in >= 0 && out >= 0;
    char buf [65536];
    ssize_t n;
    while (ok && (n = read (in, buf, sizeof buf)) != 0)
        ok = n > 0 && write (out, buf, (size_t) n) == n;
    if (in >= 0)
        close (in);
    if (out >= 0)
        close (out);
    if (!ok) {
        fprintf (stderr, "cannot copy %s to %s\n", from, to);
        xxl_test_failed++;
    }
}

static void
s_write (const char *folder, const char *file, const char *text)
{
    char path [1024];
    snprintf (path, sizeof path, "%s/%s", folder, file);
    FILE *handle = fopen (path, "w");
    if (handle) {
        fputs (text, handle);
        fclose (handle);
    }
}

//  --------------------------------------------------------------------------

static void
test_api (void)
{
    XXL_CHECK (xxl_plugins_new (NULL, NULL, s_vlog) == NULL);
    xxl_plugins_t *plugins = s_new ();
    XXL_CHECK (plugins != NULL);
    XXL_CHECK_INT (xxl_plugins_size (plugins), 0);
    char *names = xxl_plugins_names (plugins);
    XXL_CHECK_STR (names, "");
    free (names);
    XXL_CHECK (xxl_plugins_find (plugins, "alpha", 5, NULL) == NULL);
    XXL_CHECK (xxl_plugins_find (plugins, NULL, 0, NULL) == NULL);
    XXL_CHECK_INT (xxl_plugins_load (plugins, NULL), -1);
    XXL_CHECK_INT (xxl_plugins_load (NULL, s_tmp), -1);
    XXL_CHECK_INT (xxl_plugins_load_file (plugins, NULL), -1);
    XXL_CHECK_INT (xxl_plugins_size (NULL), 0);
    xxl_plugins_destroy (&plugins);
    XXL_CHECK (plugins == NULL);
    xxl_plugins_destroy (&plugins);     //  no-op
    xxl_plugins_destroy (NULL);
}

//  Name order, ignored files, bad items, duplicates, lookups, unload order
static void
test_order (void)
{
    char dir [600];
    s_folder ("order", dir, sizeof dir);
    //  Made in the reverse of name order: 9-alpha.so to 3-alpha.so,
    //  copies of alpha, are refused (all their names are taken), each with
    //  a line, in name order.  A copy of alpha among the files left alone
    //  would take alpha's names if it loaded first, or be refused
    for (int i = 9; i >= 2; i--) {
        char file [32];
        snprintf (file, sizeof file, "%d-alpha.so", i);
        s_copy ("alpha", dir, file);
    }
    s_copy ("beta", dir, "1-beta.so");
    s_copy ("alpha", dir, ".0-alpha.so");
    s_copy ("alpha", dir, "0-alpha.txt");
    s_copy ("alpha", dir, "0-alpha.so.1");
    s_copy ("alpha", dir, "0-alpha_so");
    s_write (dir, ".so", "not a plugin\n");

    s_reset ();
    xxl_plugins_t *plugins = s_new ();
    XXL_CHECK (plugins != NULL);
    if (!plugins)
        return;
    XXL_CHECK_INT (xxl_plugins_load (plugins, dir), 2);
    char *names = xxl_plugins_names (plugins);
    XXL_CHECK_STR (names, "alpha, beta, shared");
    free (names);
    XXL_CHECK_INT (xxl_plugins_size (plugins), 3);
    //  1-beta.so before 2-alpha.so, so beta keeps "shared"
    XXL_CHECK_STR (s_notes, "init beta;init alpha;");
    char line [2048];
    snprintf (line, sizeof line, "item beta loaded from %s/1-beta.so (beta 1.0)", dir);
    long beta_at = s_log_at (line);
    snprintf (line, sizeof line, "item shared loaded from %s/1-beta.so (beta 1.0)", dir);
    XXL_CHECK_HAS (s_log, line);
    snprintf (line, sizeof line, "item alpha loaded from %s/2-alpha.so (alpha 1.0)", dir);
    long alpha_at = s_log_at (line);
    XXL_CHECK (beta_at >= 0 && alpha_at > beta_at);
    snprintf (line, sizeof line,
              "sample plugin %s/2-alpha.so (alpha): duplicate item name shared "
              "(already from %s/1-beta.so); ignored", dir, dir);
    XXL_CHECK_HAS (s_log, line);
    //  Bad items are ignored, the plugin's others register
    snprintf (line, sizeof line,
              "sample plugin %s/1-beta.so (beta): item name 'b2' is invalid (letters only); ignored",
              dir);
    XXL_CHECK_HAS (s_log, line);
    snprintf (line, sizeof line,
              "sample plugin %s/1-beta.so (beta): item zero has no value; ignored", dir);
    XXL_CHECK_HAS (s_log, line);
    //  The copies, in name order
    long last_at = alpha_at;
    for (int i = 3; i <= 9; i++) {
        snprintf (line, sizeof line,
                  "sample plugin %s/%d-alpha.so (alpha) refused: no usable item", dir, i);
        long at = s_log_at (line);
        if (at > last_at)
            xxl_test_passed++;
        else {
            xxl_test_failed++;
            fprintf (stderr, "FAIL %s:%d: '%s' not after the line of the file before\n",
                     __FILE__, __LINE__, line);
        }
        last_at = at;
    }
    //  Dot files and other names are not even tried
    XXL_CHECK (strstr (s_log, "0-alpha") == NULL);
    XXL_CHECK (strstr (s_log, "/.so") == NULL);
    if (xxl_test_failed)
        printf ("-- log of loading %s:\n%s--\n", dir, s_log);

    //  Lookups: exact names, the first len bytes of a longer string
    void *alpha_state = NULL, *beta_state = NULL, *shared_state = NULL;
    const sample_item_t *alpha =
        (const sample_item_t *) xxl_plugins_find (plugins, "alphabet", 5, &alpha_state);
    XXL_CHECK (alpha && strcmp (alpha->name, "alpha") == 0 && alpha->value == 1);
    const sample_item_t *beta =
        (const sample_item_t *) xxl_plugins_find (plugins, "beta", 4, &beta_state);
    XXL_CHECK (beta && beta->value == 2);
    const sample_item_t *shared =
        (const sample_item_t *) xxl_plugins_find (plugins, "shared", 6, &shared_state);
    XXL_CHECK (shared && shared->value == 2);
    XXL_CHECK (alpha_state && beta_state && alpha_state != beta_state);
    XXL_CHECK (shared_state == beta_state);
    void *state = &state;
    XXL_CHECK (xxl_plugins_find (plugins, "alp", 3, &state) == NULL);
    XXL_CHECK (state == NULL);
    XXL_CHECK (xxl_plugins_find (plugins, "alphabet", 8, NULL) == NULL);
    XXL_CHECK (xxl_plugins_find (plugins, "", 0, NULL) == NULL);
    XXL_CHECK (xxl_plugins_find (plugins, "b2", 2, NULL) == NULL);
    XXL_CHECK (xxl_plugins_find (plugins, "zero", 4, NULL) == NULL);
    XXL_CHECK (xxl_plugins_find (plugins, "Alpha", 5, NULL) == NULL);

    //  Loading a file again registers nothing twice
    snprintf (line, sizeof line, "%s/2-alpha.so", dir);
    s_log [0] = 0;
    XXL_CHECK_INT (xxl_plugins_load_file (plugins, line), -1);
    snprintf (line, sizeof line, "sample plugin %s/2-alpha.so (alpha) refused: no usable item", dir);
    XXL_CHECK_HAS (s_log, line);
    XXL_CHECK_INT (xxl_plugins_size (plugins), 3);

    //  Unloaded in reverse load order
    s_notes [0] = 0;
    xxl_plugins_destroy (&plugins);
    XXL_CHECK (plugins == NULL);
    XXL_CHECK_STR (s_notes, "destroy alpha;destroy beta;");
}

//  Each refusal, next to a good plugin that loads
static void
test_refusals (void)
{
    char dir [600];
    s_folder ("bad", dir, sizeof dir);
    const char *bad [] = { "nosym", "version", "small", "null", "noitems", "dup", "init" };
    for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++) {
        char file [64];
        snprintf (file, sizeof file, "%s.so", bad [i]);
        s_copy (bad [i], dir, file);
    }
    s_copy ("alpha", dir, "a.so");
    s_write (dir, "junk.so", "not an ELF file\n");

    s_reset ();
    xxl_plugins_t *plugins = s_new ();
    XXL_CHECK (plugins != NULL);
    if (!plugins)
        return;
    XXL_CHECK_INT (xxl_plugins_load (plugins, dir), 1);
    //  The good one loaded
    char *names = xxl_plugins_names (plugins);
    XXL_CHECK_STR (names, "alpha, shared");
    free (names);
    XXL_CHECK_STR (s_notes, "init alpha;");
    //  The others are refused, each with its line
    char lines [9][2048];
    snprintf (lines [0], sizeof lines [0], "sample plugin %s/nosym.so refused: "
              "missing symbol xxl_sample_plugin (not a sample plugin)", dir);
    snprintf (lines [1], sizeof lines [1], "sample plugin %s/version.so refused: "
              "wrong ABI version 99 (this scheduler speaks sample ABI 1)", dir);
    snprintf (lines [2], sizeof lines [2], "sample plugin %s/small.so refused: "
              "descriptor size 8 too small (ABI 1 needs at least %zu)", dir, S_MIN_SIZE);
    snprintf (lines [3], sizeof lines [3], "sample plugin %s/null.so refused: "
              "its entry point returned NULL", dir);
    snprintf (lines [4], sizeof lines [4], "sample plugin %s/noitems.so refused: "
              "it lists no items", dir);
    snprintf (lines [5], sizeof lines [5], "sample plugin %s/dup.so (dup): "
              "duplicate item name alpha (already from %s/a.so); ignored", dir, dir);
    snprintf (lines [6], sizeof lines [6], "sample plugin %s/dup.so (dup) refused: "
              "no usable item", dir);
    snprintf (lines [7], sizeof lines [7], "sample plugin %s/init.so (init) refused: "
              "init failed: sample init refuses to start", dir);
    snprintf (lines [8], sizeof lines [8], "sample plugin %s/junk.so refused: "
              "cannot load: ", dir);
    for (int i = 0; i < 9; i++)
        XXL_CHECK_HAS (s_log, lines [i]);
    if (xxl_test_failed)
        printf ("-- log of loading %s:\n%s--\n", dir, s_log);

    //  One file at a time: the same refusals
    for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++) {
        char path [1024];
        snprintf (path, sizeof path, "%s/%s.so", dir, bad [i]);
        s_log [0] = 0;
        XXL_CHECK_INT (xxl_plugins_load_file (plugins, path), -1);
        XXL_CHECK (strstr (s_log, "refused") != NULL);
    }
    s_log [0] = 0;
    XXL_CHECK_INT (xxl_plugins_load_file (plugins, "/nonexistent/x.so"), -1);
    XXL_CHECK_HAS (s_log, "sample plugin /nonexistent/x.so refused: cannot load: ");
    XXL_CHECK_INT (xxl_plugins_size (plugins), 2);
    s_notes [0] = 0;
    xxl_plugins_destroy (&plugins);
    XXL_CHECK_STR (s_notes, "destroy alpha;");    //  nothing for the refused ones

    //  dup.so is no duplicate on its own, in the same folder setup
    s_reset ();
    plugins = s_new ();
    char path [1024];
    snprintf (path, sizeof path, "%s/dup.so", dir);
    XXL_CHECK_INT (xxl_plugins_load_file (plugins, path), 0);
    names = xxl_plugins_names (plugins);
    XXL_CHECK_STR (names, "alpha");
    free (names);
    xxl_plugins_destroy (&plugins);
}

//  A folder that cannot be read, then can
static void
test_unreadable (void)
{
    char dir [600];
    s_folder ("locked", dir, sizeof dir);
    s_copy ("alpha", dir, "a.so");
    s_reset ();
    xxl_plugins_t *plugins = s_new ();
    XXL_CHECK (plugins != NULL);
    if (!plugins)
        return;
    XXL_CHECK_INT (xxl_plugins_load (plugins, "/nonexistent/sample"), -1);
    XXL_CHECK_HAS (s_log, "cannot read sample folder /nonexistent/sample: No such file or directory");
    char file [1024];
    snprintf (file, sizeof file, "%s/a.so", dir);
    s_log [0] = 0;
    XXL_CHECK_INT (xxl_plugins_load (plugins, file), -1);
    char line [2048];
    snprintf (line, sizeof line, "cannot read sample folder %s: Not a directory", file);
    XXL_CHECK_HAS (s_log, line);
    if (geteuid () != 0) {
        chmod (dir, 0);
        s_log [0] = 0;
        XXL_CHECK_INT (xxl_plugins_load (plugins, dir), -1);
        snprintf (line, sizeof line, "cannot read sample folder %s: Permission denied", dir);
        XXL_CHECK_HAS (s_log, line);
        chmod (dir, 0700);
    }
    else
        printf ("running as root: the folder without permissions is not tried\n");
    XXL_CHECK_INT (xxl_plugins_size (plugins), 0);
    XXL_CHECK (s_notes [0] == 0);
    //  The same loader loads it once it can be read
    XXL_CHECK_INT (xxl_plugins_load (plugins, dir), 1);
    XXL_CHECK_INT (xxl_plugins_size (plugins), 2);
    xxl_plugins_destroy (&plugins);
    XXL_CHECK_STR (s_notes, "init alpha;destroy alpha;");
}

int
main (void)
{
    char buf [1024];
    s_plugins = getenv ("XXL_TEST_LOADER_PLUGINS");
    if (!s_plugins || !*s_plugins) {
        const char *build = getenv ("XXL_BUILD");
        if (build && *build) {
            snprintf (buf, sizeof buf, "%s/tests/loader/.libs", build);
            s_plugins = buf;
        }
        else
            s_plugins = "tests/loader/.libs";
    }
    setvbuf (stdout, NULL, _IOLBF, 0);
    const char *variants [] = { "alpha", "beta", "nosym", "version", "small", "null",
                                "noitems", "dup", "init" };
    for (size_t i = 0; i < sizeof variants / sizeof variants [0]; i++) {
        char path [1200];
        snprintf (path, sizeof path, "%s/%s.so", s_plugins, variants [i]);
        if (access (path, R_OK) != 0) {
            printf ("no %s (set XXL_TEST_LOADER_PLUGINS)\n", path);
            XXL_CHECK (0);
            return xxl_test_done ();
        }
    }
    const char *tmp = getenv ("TMPDIR");
    snprintf (s_tmp, sizeof s_tmp, "%s/xxl-plugins-XXXXXX", tmp && *tmp? tmp: "/tmp");
    if (!mkdtemp (s_tmp)) {
        perror ("mkdtemp");
        return 2;
    }
    test_api ();
    test_order ();
    test_refusals ();
    test_unreadable ();

    char command [600];
    snprintf (command, sizeof command, "rm -rf '%s'", s_tmp);
    if (system (command) != 0)
        fprintf (stderr, "cannot remove %s\n", s_tmp);
    return xxl_test_done ();
}
