/*  xxl_conf.c -- command-line flags over ZPL config keys.
*/

#include "xxl_conf.h"
#include "xxl_log.h"

#include <unistd.h>

const char *
xxl_conf_str (const char *flag, zconfig_t *config, const char *path, const char *dflt)
{
    if (flag)
        return flag;
    if (config) {
        const char *value = zconfig_get (config, path, NULL);
        if (value)
            return value;
    }
    return dflt;
}

int
xxl_conf_int (const char *flag, zconfig_t *config, const char *path, int dflt,
              int min, int max, int *value, char *err, size_t errlen)
{
    const char *text = xxl_conf_str (flag, config, path, NULL);
    if (!text) {
        *value = dflt;
        return 0;
    }
    char *end = NULL;
    long number = strtol (text, &end, 10);
    if (!*text || *end || number < min || number > max) {
        snprintf (err, errlen, "%s must be a number from %d to %d, not '%s'", path, min, max, text);
        return -1;
    }
    *value = (int) number;
    return 0;
}

const char *
xxl_conf_dir (void)
{
    const char *dir = getenv ("XXL_CONFIG_DIR");
    return dir && *dir? dir: XXL_SYSCONFDIR "/xxl";
}

int
xxl_conf_load (const char *file, const char *name, zconfig_t **config,
               char **path_p, char *err, size_t errlen)
{
    char *path = file? strdup (file): zsys_sprintf ("%s/%s", xxl_conf_dir (), name);
    *config = NULL;
    if (path_p)
        *path_p = NULL;
    if (!path) {
        snprintf (err, errlen, "out of memory");
        return -1;
    }
    if (!file && access (path, F_OK) != 0 && errno == ENOENT) {
        free (path);
        return 0;                       //  (no default file: the defaults)
    }
    *config = zconfig_load (path);
    if (!*config) {
        bool readable = access (path, R_OK) == 0;
        snprintf (err, errlen, "cannot read config file %s: %s", path,
                  readable? "not ZPL (the line above says where)": strerror (errno));
        free (path);
        return -1;
    }
    if (path_p)
        *path_p = path;
    else
        free (path);
    return 0;
}

int
xxl_conf_start (const char *prog, const char *file, const char *name,
                const char *level_flag, const char *level_path,
                zconfig_t **config, int *level)
{
    char err [512];
    if (xxl_conf_load (file, name, config, NULL, err, sizeof err)) {
        fprintf (stderr, "%s: %s\n", prog, err);
        return -1;
    }
    const char *level_name = xxl_conf_str (level_flag, *config, level_path, "info");
    *level = xxl_log_level (level_name);
    if (*level < 0) {
        fprintf (stderr, "%s: %s must be one of %s, not '%s'\n", prog, level_path,
                 XXL_LOG_LEVELS, level_name);
        zconfig_destroy (config);
        return -1;
    }
    return 0;
}
