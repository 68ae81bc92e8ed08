/*  xxl_local.h -- the state folder and the local keys: a scheduler started
    with no security settings is safe on a shared host with no setup.

    A scheduler given no certificate, no keys folder, no access token and
    not --open makes, once, the CURVE certificates of its host in
    STATE/local-keys and turns CURVE on with them (docs/operations.md,
    Security):
        scheduler.cert, scheduler.cert_secret   its own (the secret 0600)
        local-admin.cert_secret                 an admin client's (0600)
        local-agent.cert_secret                 an agent's, role agent for
                                                every app (apps "*"; 0640,
                                                the agents' group)
        keys/local-admin.cert, local-agent.cert the keys folder it loads
    The folder is 0710 (its group, the agents', may open known names, not
    list them).  xxl-ctl and a same-host xxl-agent with no certificate and
    no token, talking to a loopback endpoint, find their certificate and
    the scheduler's public one there by themselves when they can read it:
    root and the scheduler's user for the admin key, and the agents' group
    for the agent key.

    The state folder (STATE): a configured one (scheduler/state_dir,
    agent/state_dir, ctl/state_dir); else $XXL_STATE_DIR; else, for the
    scheduler under systemd, $STATE_DIRECTORY (the unit's StateDirectory=);
    else /var/lib/xxl for root and $XDG_STATE_HOME/xxl or
    ~/.local/state/xxl for other users.  xxl-ctl and xxl-agent look in the
    configured folder, or $XXL_STATE_DIR, alone; else in this user's
    default and then /var/lib/xxl.

    Contracts: files are written whole (a temporary name, then rename) with
    their modes set whatever the umask; nothing here asserts on the file
    system's state: every failure is -1 with the reason in err.  In libxxl,
    not installed.
*/

#ifndef XXL_LOCAL_H_INCLUDED
#define XXL_LOCAL_H_INCLUDED

#include <czmq.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XXL_LOCAL_DIR_MAX       200     //  bytes of a state folder's path
#define XXL_LOCAL_SYSTEM_DIR    "/var/lib/xxl"
#define XXL_LOCAL_KEYS          "local-keys"
#define XXL_LOCAL_ADMIN         "local-admin"
#define XXL_LOCAL_AGENT         "local-agent"
#define XXL_LOCAL_GROUP         "xxl-agent"     //  the agents' group, by default

//  The scheduler's state folder (above) into dir; 0, or -1 with the reason
int xxl_local_state_dir (const char *configured, char *dir, size_t dirlen, char *err,
                         size_t errlen);

//  Makes the folder dir and its missing parents, those with mode (under
//  the umask); 0, or -1 (errno set) when one cannot be made or dir is not
//  a folder
int xxl_local_mkdirs (const char *dir, mode_t mode);

//  The scheduler's local keys in STATE/local-keys, made at the first call
//  and reused after; cert gets its secret certificate's path, keys its
//  keys folder's.  group (NULL or "": XXL_LOCAL_GROUP) is the agents':
//  the folder and the agent's secret are given it when it exists and this
//  process may (root, or a member), else they keep this process's group.
//  1 when made now, 0 when reused, -1 with the reason.
int xxl_local_keys_make (const char *state_dir, const char *group, char *cert,
                         size_t certlen, char *keys, size_t keyslen, char *err, size_t errlen);

//  Finds the local certificate `name` (XXL_LOCAL_ADMIN or XXL_LOCAL_AGENT)
//  and the scheduler's public one in the folders above (configured: the
//  program's state_dir key, or NULL).  1 found (cert, server set); 0 none
//  there; -1 when a local keys folder exists that this user cannot read:
//  err then says who can ("run as root or as user xxl, or pass --cert").
int xxl_local_keys_find (const char *configured, const char *name, char *cert,
                         size_t certlen, char *server, size_t serverlen, char *err,
                         size_t errlen);

//  An agent's (xxl-agent's, xxl-bridge's) local key: when it has no
//  certificate and no token and every one of its schedulers (a
//  comma-separated list) is on this host, xxl_local_keys_find of
//  XXL_LOCAL_AGENT, logging what it found, or as a warning why it cannot
//  read it.  1 found (cert, server set); 0 otherwise (go without keys).
int xxl_local_agent_key (const char *configured, bool has_cert, bool has_token,
                         const char *schedulers, char *cert, size_t certlen,
                         char *server, size_t serverlen);

#ifdef __cplusplus
}
#endif

#endif
