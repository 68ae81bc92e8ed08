/*  xxl_log.h -- the daemons' one logger, under czmq's zsys_error,
    zsys_warning, zsys_notice, zsys_info and zsys_debug.

    The code logs with zsys_*; xxl_log_open decides where those lines go
    and which are kept, for xxl-scheduler, xxl-agent and the agent's guard:
    - lines less urgent than the level are dropped (the default, info,
      drops debug lines);
    - on stderr when stderr is the journal's stream (systemd sets
      JOURNAL_STREAM to its device:inode), each line is "<P>text", P its
      syslog priority (sd-daemon(3)'s prefixes: 3 error, 4 warning, 5
      notice, 6 info, 7 debug), without czmq's level letter and time,
      which the journal records itself;
    - on any other stderr, czmq's lines ("W: (ident) yy-mm-dd hh:mm:ss
      text");
    - with syslog, syslog(3) at the line's priority, under setlogmask.
    Internal to libxxl (not installed).
*/

#ifndef XXL_LOG_H_INCLUDED
#define XXL_LOG_H_INCLUDED

#include <czmq.h>
#include <syslog.h>

//  The level names, for usage texts
#define XXL_LOG_LEVELS "error|warning|notice|info|debug"

//  The syslog priority of a level name (LOG_ERR .. LOG_DEBUG), or -1
int xxl_log_level (const char *name);

//  Sends every zsys_* line of this process through the logger: to syslog
//  when use_syslog, else to stderr; keeps those at level or more urgent.
//  Call once, after zsys_init.  0, or -1 when the stream cannot be made.
int xxl_log_open (const char *ident, int level, bool use_syslog);

//  True when stderr is the journal's stream (JOURNAL_STREAM)
bool xxl_log_journal (void);

//  Logs "tag: text" at a syslog priority through zsys_* (for the plugin
//  hosts' vlog, libmicrohttpd's error lines), without text's trailing new
//  lines
void xxl_log_vtag (int priority, const char *tag, const char *format, va_list args);

//  A rate limit for lines a peer can cause: at most `burst` lines a minute
//  pass; the first that passes after some were held back says how many.
//  Thread-safe.  Zero-initialise.
typedef struct {
    int64_t since;                      //  start of the minute, monotonic ms
    int lines;                          //  passed in this minute
    int64_t held;                       //  held back since the last pass
} xxl_log_limit_t;

//  0 when a line may be logged now (*held set to the lines held back
//  before it), -1 when it is held back
int xxl_log_limit_pass (xxl_log_limit_t *limit, int burst, int64_t *held);

#endif
