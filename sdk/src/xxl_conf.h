/*  xxl_conf.h -- command-line flags over ZPL config keys, for the daemons.

    Every flag of xxl-scheduler and xxl-agent has a config-file key; a flag
    given on the command line wins over the key, and the key over the
    default.  Internal to libxxl (not installed).
*/

#ifndef XXL_CONF_H_INCLUDED
#define XXL_CONF_H_INCLUDED

#include <czmq.h>

//  The flag's value if given, else the key's at path, else dflt.
const char *xxl_conf_str (const char *flag, zconfig_t *config, const char *path,
                          const char *dflt);
//  The same as a number in [min, max]: 0 and *value set, or -1 with the
//  reason in err (the key and what was wrong).
int xxl_conf_int (const char *flag, zconfig_t *config, const char *path, int dflt,
                  int min, int max, int *value, char *err, size_t errlen);

#endif
