/*  xxl_conf.c -- command-line flags over ZPL config keys.
*/

#include "xxl_conf.h"

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
