/*  xxl_ctl_import.h -- an XXL-JOB database read from its dump, mapped onto
    xxl's api and judged (xxl_ctl_import_map.c); xxl_ctl_import.c asks the
    scheduler what it has and creates what was judged importable.

    import_read keeps the rows of xxl_job_group, xxl_job_info and
    xxl_job_logglue (by column name; bounded: XXL_IMPORT_MAX_ROWS rows and
    XXL_IMPORT_MAX_BYTES of text in all).  The caller then marks the
    groups that exist (IMPORT_REUSED, new_id) and adds the jobs of those
    groups (import_existing_add).  import_judge decides every row's fate:
    new, reused, or skipped with its reason, the glue versions to create,
    and the children that will be linked (kids: jobs that are in xxl once
    the import is done; their new ids are known only then).
*/

#ifndef XXL_CTL_IMPORT_H_INCLUDED
#define XXL_CTL_IMPORT_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <msgpack.h>

#define XXL_IMPORT_MAX_ROWS     1000000
#define XXL_IMPORT_MAX_BYTES    (512 * 1024 * 1024)
#define XXL_IMPORT_MAX_KIDS     200     //  a job's children: 200 ids of up to
                                        //  19 digits fit childJobId's 4096 bytes

typedef enum { IMPORT_NEW, IMPORT_REUSED, IMPORT_SKIPPED } import_state_t;

typedef struct {
    int64_t id;                         //  in the dump
    char *appname, *title, *address_list;
    int address_type;
    size_t line;
    import_state_t state;
    int64_t new_id;                     //  in xxl (0: not yet)
} import_group_t;

typedef struct {
    int64_t id, job_id;
    char *type, *source, *remark;
} import_glue_t;

typedef struct _import_job_t {
    int64_t id, job_group;
    char *desc, *author, *alarm_email, *schedule_type, *schedule_conf, *misfire, *route,
         *handler, *param, *block, *glue_type, *glue_source, *glue_remark, *child;
    int64_t timeout, retry;
    bool running;                       //  trigger_status 1 in XXL-JOB
    size_t line;
    import_group_t *group;
    import_state_t state;
    int64_t new_id;
    import_glue_t *versions;            //  to create, oldest first (not owned
    size_t nversions;                   //  strings: they are the glue rows')
    struct _import_job_t **kids;        //  its children that are in xxl (NEW
    size_t nkids;                       //  or REUSED jobs)
    bool started;
} import_job_t;

typedef struct {
    int64_t group_id, id;
    char *desc, *handler;
    bool taken;
} import_existing_t;

typedef struct {
    import_group_t *groups;
    size_t ngroups;
    import_job_t *jobs;
    size_t njobs;
    import_glue_t *glues;
    size_t nglues;
    import_existing_t *existing;
    size_t nexisting;
    char **skipped;                     //  "job 4 'x': why", in order
    size_t nskipped;
    char *routers, *alarms;             //  the scheduler's (comma-separated)
    bool start;                         //  --start: jobs that ran will start
    const char *timezone;               //  --timezone: every added job's zone (NULL: UTC;
                                        //  not owned: the command line's)
    size_t bytes;                       //  text kept
} import_t;

import_t *import_new (void);
void import_destroy (import_t **self_p);

//  Reads the dump; 0, or -1 with why ("line N: ...")
int import_read (import_t *self, FILE *file, char *why, size_t whylen);

//  An existing job of a reused group
void import_existing_add (import_t *self, import_group_t *group, int64_t id, const char *desc,
                          const char *handler);

//  The groups sorted by (appname, row), for import_groups_app_first; NULL
//  when out of memory, else the caller frees the array (not the groups)
import_group_t **import_groups_by_app (import_t *self);

//  The position in sorted (n groups, as import_groups_by_app sorts them)
//  of the first row with appname, or n for none; O(log n)
size_t import_groups_app_first (import_group_t *const *sorted, size_t n, const char *appname);

//  Decides every row's fate (see above); O(n log n) in the rows (lookups in
//  sorted indexes, the cycle check one walk of the child links).  Text of
//  the dump quoted in a skip reason is escaped with xxl_printable and cut.
//  Out of memory: every row skipped, the reason said.
void import_judge (import_t *self);

//  Prints the mapping as lines
void import_print (import_t *self, FILE *out, bool dry);

//  Packs the mapping into buf as one msgpack map: groups, jobs, glues
//  (counts added), skipped (the reasons), reused {groups, jobs}, started,
//  dryRun, groupIds and jobIds (each old id's text to its new id); 0, or -1
//  when out of memory
int import_pack (import_t *self, bool dry, msgpack_sbuffer *buf);

#endif
