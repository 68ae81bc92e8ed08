/*  xxl_http_xxladmin.h -- XXL-JOB admin's console endpoints, the pure part
    (xxl_http_xxladmin_map.c, the bodies xxl_http_xxladmin_form.c;
    docs/migrating.md, "Scripts that call the admin"): a form read, an
    endpoint's form made the api request its REST route would make, and
    the api's reply made the answer XXL-JOB gives.
    No I/O, no state: xxl_http_xxladmin.c does the HTTP and the calls;
    tests/test_xxladmin.c checks these.

    Answers are XXL-JOB's ReturnT with both keys of its content:
    {"code", "msg", "content", "data"} (2.x reads content, 3.x data; their
    clients, Gson and untyped JSON, ignore the other).  A pageList paged
    by 3.x's names (offset, pagesize; no start or length) answers 3.x's
    ReturnT of {"offset", "pagesize", "total", "data"}; any other 2.x's
    {"recordsTotal", "recordsFiltered", "data"} (the two clash on data).
*/

#ifndef XXL_HTTP_XXLADMIN_H_INCLUDED
#define XXL_HTTP_XXLADMIN_H_INCLUDED

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XXL_XXLADMIN_MAX_FIELDS 64      //  fields in a form (more: refused)
#define XXL_XXLADMIN_MAX_KEY 64         //  bytes of a field's name

//  What an endpoint's api reply becomes
typedef enum {
    XA_NONE,                            //  ReturnT, content null
    XA_ID,                              //  ReturnT, content the reply's id as text
    XA_MSG,                             //  ReturnT, content the api's text (LOG_KILL)
    XA_OBJECT,                          //  ReturnT, content the reply as it is
    XA_JOBS,                            //  pageList of JOB_LIST's jobs
    XA_GROUPS,                          //  pageList of GROUP_LIST's groups (paged here)
    XA_LOGS,                            //  pageList of LOG_LIST's logs
    XA_NEXT,                            //  ReturnT, content times as "yyyy-MM-dd HH:mm:ss"
    XA_LOGCAT,                          //  ReturnT, content XXL-JOB's LogResult
    XA_JOBLIST,                         //  ReturnT, content JOB_LIST's jobs (all of
                                        //  them), without glueSource
    XA_CHART,                           //  ReturnT, content XXL-JOB's chartInfo map
    XA_USERS                            //  pageList of USER_LIST's users as XXL-JOB's
} xxl_xxladmin_shape_t;

//  An endpoint: its path under the prefix, whether it only reads (GET is
//  taken too), the api command it makes (NULL: login, logout, toLogin)
typedef struct {
    const char *path;
    const char *command;
    bool read;
    xxl_xxladmin_shape_t shape;
} xxl_xxladmin_endpoint_t;

//  The endpoint of path ("jobinfo/add"), NULL for none
const xxl_xxladmin_endpoint_t *xxl_xxladmin_endpoint (const char *path);

//  XXL-JOB 3.5's job OpenAPI (POST <prefix>/api/addJob, updateJob,
//  removeJob, startJob, stopJob, triggerJob): the console endpoint uri
//  acts as (jobinfo/add, ...), NULL for none
const xxl_xxladmin_endpoint_t *xxl_xxladmin_openapi_endpoint (const char *uri);

//  Its JSON body (an object of at most XXL_XXLADMIN_MAX_FIELDS fields)
//  into form, as the form's strings: a string as it is, an integer as
//  decimal text, null left out (Gson leaves such a field unset); 0, or -1
//  with why (not JSON, not an object, a key twice, another type, a name
//  too long, a \u0000 or text that is not UTF-8)
int xxl_xxladmin_json_form (json_t *form, const char *text, size_t size, char *why,
                            size_t whylen);

//  A form body (application/x-www-form-urlencoded: '+' a space, %HH a
//  byte) into a new object of strings, adding to form; 0, or -1 with why
//  (a bad escape, a %00, a name too long or given twice, too many fields)
int xxl_xxladmin_form (json_t *form, const char *text, size_t size, char *why, size_t whylen);

//  The api request of endpoint with form: a new object of its fields into
//  *fields; 0, or -1 with why (a number that is not one, a value out of
//  XXL-JOB's range, a field missing)
int xxl_xxladmin_request (const xxl_xxladmin_endpoint_t *endpoint, json_t *form,
                          json_t **fields, char *why, size_t whylen);

//  Whether endpoint needs GROUP_LIST's reply: XXL-JOB names a user's
//  groups by id (permission), xxl a key's apps by name (the user/ ones
//  but remove)
bool xxl_xxladmin_needs_groups (const xxl_xxladmin_endpoint_t *endpoint);

//  user/add (3.x insert), user/update: XXL-JOB's user form (username,
//  password, role 1 an admin, 0 a user of the groups whose ids
//  permission lists) as USER_ADD's or USER_UPDATE's fields, groups
//  GROUP_LIST's reply: role 1 is admin (every app), role 0 operator of
//  those groups' apps; 0, or -1 with why (a role 0 without permission:
//  a key without apps would reach every app; a group id not listed)
int xxl_xxladmin_user_request (const xxl_xxladmin_endpoint_t *endpoint, json_t *form,
                               json_t *groups, json_t **fields, char *why, size_t whylen);

//  user/pageList's answer: USER_LIST's users (users) as XXL-JOB's rows,
//  {id (null: xxl's users have none), username, password (null), role
//  (1 admin, 0 else), permission (the ids of the groups of its apps,
//  null for an admin or a key of every app), apps, xxlRole, addTime},
//  filtered by form's username (a substring) and role (-1 any), paged
json_t *xxl_xxladmin_users (json_t *form, int code, const char *text, json_t *users,
                            json_t *groups);

//  XXL-JOB's ReturnT: code, msg (NULL: null), content (taken; NULL: null)
json_t *xxl_xxladmin_returnt (int code, const char *msg, json_t *content);

//  The answer of endpoint for the api's reply (code, its text, its
//  content: not taken), form the request's (a pageList's paging).
//  joblog/pageList's total is the rows up to its page, plus one when more
//  follow (LOG_LIST counts nothing); for an empty page content's "count"
//  (the caller's count of the rows, when it asked past the end) is the
//  total when it is less than the page's start.  zone (an IANA name;
//  NULL or "": UTC) is the one nextTriggerTime's times are shown in: the
//  zone SCHEDULE_NEXT planned them in (http/xxl_admin_timezone)
json_t *xxl_xxladmin_answer (const xxl_xxladmin_endpoint_t *endpoint, json_t *form, int code,
                             const char *text, json_t *content, const char *zone);

//  The answer of endpoint for form that needs no api call (a new ReturnT),
//  NULL when it needs one: nextTriggerTime of a blank scheduleType or
//  scheduleConf, or of a type other than CRON and FIX_RATE, is success
//  with no times, as XXL-JOB answers it
json_t *xxl_xxladmin_settled (const xxl_xxladmin_endpoint_t *endpoint, json_t *form);

//  Whether text is a decimal integer in long long's range (digits, a '-'
//  before them at most: no '+', space or other text strtoll would let
//  pass), into *out.  Used by the REST routes too
bool xxl_http_decimal (const char *text, long long *out);

//  "yyyy-MM-dd HH:mm:ss - yyyy-MM-dd HH:mm:ss" (XXL-JOB's filterTime, the
//  scheduler's local time) into epoch ms; 0, or -1 when malformed
int xxl_xxladmin_range (const char *text, int64_t *from, int64_t *to);

#endif
