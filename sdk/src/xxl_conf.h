/*  xxl_conf.h -- command-line flags over ZPL config keys, for the daemons.

    Every flag of xxl-scheduler and xxl-agent has a config-file key; a flag
    given on the command line wins over the key, and the key over the
    default.  Internal to libxxl (not installed).

    The config file: `-c FILE` when given (it must be readable), else the
    default file NAME in the config folder when it exists (none is
    fine).  The config folder is $XXL_CONFIG_DIR when set (the tests
    point it at an empty folder, so that a config installed on the
    machine never changes them), else SYSCONFDIR/xxl as configured
    (/usr/local/etc/xxl by default, /etc/xxl with --sysconfdir=/etc).
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

//  The folder of the default config files
const char *xxl_conf_dir (void);

//  Loads FILE when given, else the default file NAME when it exists:
//  0 with *config set (NULL when there is none), or -1 with the reason
//  in err (FILE or an existing default file unreadable or not ZPL).
//  *path_p, when given, is set to the file read (NULL when none).
int xxl_conf_load (const char *file, const char *name, zconfig_t **config,
                   char **path_p, char *err, size_t errlen);

//  A daemon's start: its config (xxl_conf_load of FILE, else of the
//  default file NAME) and its log level (the flag, else the key at
//  level_path, else info; xxl_log.h's names).  0 with *config (NULL when
//  none) and *level set, or -1 having printed "PROG: reason" on stderr.
int xxl_conf_start (const char *prog, const char *file, const char *name,
                    const char *level_flag, const char *level_path,
                    zconfig_t **config, int *level);

#endif
