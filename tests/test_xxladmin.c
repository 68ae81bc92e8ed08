/*  test_xxladmin.c -- XXL-JOB admin's endpoints, the pure part
    (scheduler/http/xxl_http_xxladmin_map.c): forms read and refused,
    XXL-JOB's fields made the api's (ids, group ids, empty values, 3.x's
    names, paging, filterTime, clearLog's types), and the answers' shapes
    (ReturnT with content and data, pageLists, LogResult, times).
*/

#include "xxl_http_xxladmin.h"
#include "xxl_test.h"

#include <jansson.h>
#include <stdlib.h>
#include <time.h>

//  The request of endpoint for its body text (a form; a JSON object when
//  json, as XXL-JOB 3.5's job OpenAPI sends it): its fields as compact
//  JSON (sorted keys), or "ERR: why"
static char *
s_request_of (const xxl_xxladmin_endpoint_t *endpoint, bool json, const char *text)
{
    char why [256] = "";
    json_t *form = json_object (), *fields = NULL;
    char *out;
    if (!endpoint)
        out = strdup ("ERR: no endpoint");
    else
    if ((json? xxl_xxladmin_json_form (form, text, strlen (text), why, sizeof why)
             : xxl_xxladmin_form (form, text, strlen (text), why, sizeof why))
    ||  xxl_xxladmin_request (endpoint, form, &fields, why, sizeof why)) {
        out = (char *) malloc (strlen (why) + 6);
        sprintf (out, "ERR: %s", why);
    }
    else
        out = json_dumps (fields, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref (fields);
    json_decref (form);
    return out;
}

static char *
s_request (const char *path, const char *text)
{
    return s_request_of (xxl_xxladmin_endpoint (path), false, text);
}

#define CHECK_REQUEST(path, form, want) do { \
    char *got_ = s_request (path, form); \
    XXL_CHECK_STR (got_, want); \
    free (got_); \
} while (0)

//  The request XXL-JOB 3.5's job OpenAPI uri makes of a JSON body
static char *
s_openapi_request (const char *uri, const char *body)
{
    return s_request_of (xxl_xxladmin_openapi_endpoint (uri), true, body);
}

#define CHECK_OPENAPI(uri, body, want) do { \
    char *got_ = s_openapi_request (uri, body); \
    XXL_CHECK_STR (got_, want); \
    free (got_); \
} while (0)

//  (jansson's texts: the start only, their "near ..." varies by version)
#define CHECK_OPENAPI_HAS(uri, body, want) do { \
    char *got_ = s_openapi_request (uri, body); \
    XXL_CHECK_MSG (strncmp (got_, want, strlen (want)) == 0, "got '%s', want '%s...'", \
                   got_, want); \
    free (got_); \
} while (0)

//  The answer of path (form text) for an api reply, compact and sorted
static char *
s_answer (const char *path, const char *form_text, int code, const char *text,
          const char *content_json)
{
    json_t *form = json_object ();
    char why [256];
    xxl_xxladmin_form (form, form_text, strlen (form_text), why, sizeof why);
    json_t *content = content_json? json_loads (content_json, JSON_DECODE_ANY, NULL): NULL;
    json_t *answer = xxl_xxladmin_answer (xxl_xxladmin_endpoint (path), form, code, text,
                                          content, NULL);
    char *out = json_dumps (answer, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref (answer);
    json_decref (content);
    json_decref (form);
    return out;
}

#define CHECK_ANSWER(path, form, code, text, content, want) do { \
    char *got_ = s_answer (path, form, code, text, content); \
    XXL_CHECK_STR (got_, want); \
    free (got_); \
} while (0)

//  GROUP_LIST's reply the user checks see: groups 1 (app-a), 2 (app-b)
static const char *s_groups =
    "{\"groups\":[{\"id\":1,\"appname\":\"app-a\"},{\"id\":2,\"appname\":\"app-b\"}]}";

//  The user request of path for form text, as s_request
static char *
s_user_request (const char *path, const char *text)
{
    char why [256] = "";
    json_t *form = json_object (), *fields = NULL;
    json_t *groups = json_loads (s_groups, 0, NULL);
    const xxl_xxladmin_endpoint_t *endpoint = xxl_xxladmin_endpoint (path);
    char *out;
    if (!endpoint || !xxl_xxladmin_needs_groups (endpoint))
        out = strdup ("ERR: no user endpoint");
    else
    if (xxl_xxladmin_form (form, text, strlen (text), why, sizeof why)
    ||  xxl_xxladmin_user_request (endpoint, form, groups, &fields, why, sizeof why)) {
        out = (char *) malloc (strlen (why) + 6);
        sprintf (out, "ERR: %s", why);
    }
    else
        out = json_dumps (fields, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref (fields);
    json_decref (groups);
    json_decref (form);
    return out;
}

#define CHECK_USER_REQUEST(path, form, want) do { \
    char *got_ = s_user_request (path, form); \
    XXL_CHECK_STR (got_, want); \
    free (got_); \
} while (0)

//  user/pageList's answer for form text and USER_LIST's reply
static char *
s_users (const char *form_text, const char *users_json)
{
    json_t *form = json_object ();
    char why [256];
    xxl_xxladmin_form (form, form_text, strlen (form_text), why, sizeof why);
    json_t *users = json_loads (users_json, 0, NULL);
    json_t *groups = json_loads (s_groups, 0, NULL);
    json_t *answer = xxl_xxladmin_users (form, 200, "", users, groups);
    char *out = json_dumps (answer, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref (answer);
    json_decref (groups);
    json_decref (users);
    json_decref (form);
    return out;
}

#define CHECK_USERS(form, users, want) do { \
    char *got_ = s_users (form, users); \
    XXL_CHECK_STR (got_, want); \
    free (got_); \
} while (0)

int
main (void)
{
    //  (filterTime is the scheduler's local time)
    setenv ("TZ", "UTC", 1);
    tzset ();

    //  Forms
    CHECK_REQUEST ("jobinfo/start", "id=7", "{\"jobId\":7}");
    CHECK_REQUEST ("jobinfo/start", "id=%37", "{\"jobId\":7}");
    CHECK_REQUEST ("jobinfo/start", "&&id=7&", "{\"jobId\":7}");
    CHECK_REQUEST ("jobinfo/start", "id=7&unknown=x&cronGen_display=y", "{\"jobId\":7}");
    CHECK_REQUEST ("jobinfo/start", "id=%zz",
                   "ERR: the form is malformed: a '%' not followed by two hex digits");
    CHECK_REQUEST ("jobinfo/start", "id=7%", "ERR: the form is malformed: a '%' not followed"
                   " by two hex digits");
    CHECK_REQUEST ("jobinfo/start", "id=7%4", "ERR: the form is malformed: a '%' not followed"
                   " by two hex digits");
    CHECK_REQUEST ("jobinfo/start", "id=7%00", "ERR: the form holds a NUL (%00)");
    CHECK_REQUEST ("jobinfo/start", "id=1&id=2", "ERR: the form gives id twice");
    CHECK_REQUEST ("jobinfo/start", "=1", "ERR: the form is malformed: a field with no name");
    {
        char many [2048] = "";
        for (int i = 0; i <= XXL_XXLADMIN_MAX_FIELDS; i++)
            sprintf (many + strlen (many), "f%d=1&", i);
        CHECK_REQUEST ("jobinfo/start", many, "ERR: the form has more than 64 fields");
        char key [200];
        memset (key, 'k', 65);
        strcpy (key + 65, "=1");
        CHECK_REQUEST ("jobinfo/start", key, "ERR: the form has a field name over 64 bytes");
    }
    //  Text that is not UTF-8 (XXL-JOB's forms are; REST's JSON must be)
    CHECK_REQUEST ("jobinfo/add", "jobGroup=1&jobDesc=%ff", "ERR: the form's jobDesc is not UTF-8");
    CHECK_REQUEST ("jobinfo/add", "jobGroup=1&%ff=1", "ERR: the form has a field name that is not UTF-8");
    CHECK_REQUEST ("jobinfo/add", "jobGroup=1&jobDesc=%e4%b8%ad", "{\"jobDesc\":\"\xe4\xb8\xad\",\"jobGroup\":\"1\"}");
    //  ids
    CHECK_REQUEST ("jobinfo/start", "", "ERR: id is required");
    CHECK_REQUEST ("jobinfo/start", "id=", "ERR: id is required");
    CHECK_REQUEST ("jobinfo/start", "id=abc", "ERR: id must be an integer, not 'abc'");
    CHECK_REQUEST ("jobinfo/start", "id=0", "ERR: id must be 1 or more, not 0");
    CHECK_REQUEST ("jobinfo/start", "id=+7", "ERR: id must be an integer, not ' 7'");
    CHECK_REQUEST ("jobinfo/stop", "ids%5B%5D=9", "{\"jobId\":9}");
    CHECK_REQUEST ("jobinfo/delete", "ids[]=9", "{\"jobId\":9}");
    CHECK_REQUEST ("jobinfo/remove", "id=9", "{\"jobId\":9}");
    CHECK_REQUEST ("joblog/logKill", "id=12", "{\"logId\":12}");
    CHECK_REQUEST ("jobgroup/remove", "id=3", "{\"group\":\"3\"}");
    //  A job's fields: names kept, ints typed, a group's id as the api's
    //  group text, empty closed-list values and ints absent, 3.x's name
    CHECK_REQUEST ("jobinfo/add",
                   "jobGroup=3&jobDesc=a+b&author=me&alarmEmail=&scheduleType=CRON"
                   "&scheduleConf=0+0+*+*+*+%3F&misfireStrategy=&executorRouteStrategy=FIRST"
                   "&executorHandler=h&executorParam=&executorBlockStrategy=SERIAL_EXECUTION"
                   "&executorTimeout=&executorFailRetryCount=2&glueType=BEAN&glueSource="
                   "&glueRemark=GLUE+init&childJobId=",
                   "{\"alarmEmail\":\"\",\"author\":\"me\",\"childJobId\":\"\","
                   "\"executorBlockStrategy\":\"SERIAL_EXECUTION\",\"executorFailRetryCount\":2,"
                   "\"executorHandler\":\"h\",\"executorParam\":\"\","
                   "\"executorRouteStrategy\":\"FIRST\",\"glueRemark\":\"GLUE init\","
                   "\"glueSource\":\"\",\"glueType\":\"BEAN\",\"jobDesc\":\"a b\","
                   "\"jobGroup\":\"3\",\"scheduleConf\":\"0 0 * * * ?\",\"scheduleType\":\"CRON\"}");
    CHECK_REQUEST ("jobinfo/insert", "jobGroup=3&name=three", "{\"jobDesc\":\"three\",\"jobGroup\":\"3\"}");
    CHECK_REQUEST ("jobinfo/add", "jobDesc=x", "ERR: jobGroup is required");
    CHECK_REQUEST ("jobinfo/add", "jobGroup=0", "ERR: jobGroup must be a group's id (1 or more), not 0");
    CHECK_REQUEST ("jobinfo/add", "jobGroup=3&executorTimeout=1.5",
                   "ERR: executorTimeout must be an integer, not '1.5'");
    //  An update keeps the job's glue (XXL-JOB's update does)
    CHECK_REQUEST ("jobinfo/update", "id=4&jobGroup=3&glueType=GLUE_SHELL&glueSource=x&jobDesc=d",
                   "{\"jobDesc\":\"d\",\"jobGroup\":\"3\",\"jobId\":4}");
    //  trigger: the param always (XXL-JOB's "" replaces the job's), the
    //  address list only when given
    CHECK_REQUEST ("jobinfo/trigger", "id=4", "{\"executorParam\":\"\",\"jobId\":4}");
    CHECK_REQUEST ("jobinfo/trigger", "id=4&executorParam=p&addressList=",
                   "{\"executorParam\":\"p\",\"jobId\":4}");
    CHECK_REQUEST ("jobinfo/trigger", "id=4&executorParam=p&addressList=http%3A%2F%2Fa%3A1",
                   "{\"address\":\"http://a:1\",\"executorParam\":\"p\",\"jobId\":4}");
    //  XXL-JOB 3.5's job OpenAPI: a JSON body as the console endpoint's form
    CHECK_OPENAPI ("updateJob", "{\"id\":4,\"jobDesc\":\"old\",\"name\":\"new\"}",
                   "ERR: jobDesc and name differ (name is XXL-JOB 3.5's jobDesc): give one of them");
    CHECK_OPENAPI ("addJob", "{\"jobGroup\":3,\"name\":\"\u6d4b\u8bd5\",\"author\":\"admin\","
                   "\"alarmEmail\":\"\",\"scheduleType\":\"CRON\",\"scheduleConf\":\"0 0/1 * * * ?\","
                   "\"misfireStrategy\":\"DO_NOTHING\",\"executorRouteStrategy\":\"FIRST\","
                   "\"executorHandler\":\"demoJobHandler\",\"executorParam\":\"\","
                   "\"executorBlockStrategy\":\"SERIAL_EXECUTION\",\"executorTimeout\":0,"
                   "\"executorFailRetryCount\":2,\"glueType\":\"BEAN\",\"glueSource\":\"\","
                   "\"glueRemark\":\"\",\"childJobId\":null}",
                   "{\"alarmEmail\":\"\",\"author\":\"admin\",\"executorBlockStrategy\":"
                   "\"SERIAL_EXECUTION\",\"executorFailRetryCount\":2,\"executorHandler\":"
                   "\"demoJobHandler\",\"executorParam\":\"\",\"executorRouteStrategy\":\"FIRST\","
                   "\"executorTimeout\":0,\"glueRemark\":\"\",\"glueSource\":\"\",\"glueType\":"
                   "\"BEAN\",\"jobDesc\":\"\xe6\xb5\x8b\xe8\xaf\x95\",\"jobGroup\":\"3\","
                   "\"misfireStrategy\":\"DO_NOTHING\",\"scheduleConf\":\"0 0/1 * * * ?\","
                   "\"scheduleType\":\"CRON\"}");
    CHECK_OPENAPI ("updateJob", "{\"id\":4,\"name\":\"d\",\"glueType\":\"GLUE_SHELL\","
                   "\"glueSource\":\"x\"}", "{\"jobDesc\":\"d\",\"jobId\":4}");
    CHECK_OPENAPI ("removeJob", "{\"id\":4}", "{\"jobId\":4}");
    CHECK_OPENAPI ("startJob", "{\"id\":4}", "{\"jobId\":4}");
    CHECK_OPENAPI ("stopJob", "{\"id\":\"4\"}", "{\"jobId\":4}");
    CHECK_OPENAPI ("triggerJob", "{\"id\":4,\"executorParam\":\"p\",\"addressList\":\"\"}",
                   "{\"executorParam\":\"p\",\"jobId\":4}");
    CHECK_OPENAPI ("triggerJob", "{\"id\":4}", "{\"executorParam\":\"\",\"jobId\":4}");
    CHECK_OPENAPI ("registry", "{}", "ERR: no endpoint");
    CHECK_OPENAPI ("pageList", "{}", "ERR: no endpoint");
    CHECK_OPENAPI ("startJob", "{}", "ERR: id is required");
    CHECK_OPENAPI ("startJob", "{\"id\":0}", "ERR: id must be 1 or more, not 0");
    CHECK_OPENAPI ("startJob", "[4]",
                   "ERR: the body must be a JSON object, as XXL-JOB's OpenAPI takes");
    CHECK_OPENAPI ("startJob", "{\"id\":4", "ERR: the body is not JSON: '}' expected near end"
                   " of file (line 1)");
    CHECK_OPENAPI_HAS ("startJob", "{\"id\":4,\"id\":5}",
                       "ERR: the body is not JSON: duplicate object key");
    CHECK_OPENAPI ("startJob", "{\"id\":4.5}", "ERR: id must be a string or an integer");
    CHECK_OPENAPI ("startJob", "{\"id\":true}", "ERR: id must be a string or an integer");
    CHECK_OPENAPI ("startJob", "{\"id\":{\"a\":1}}", "ERR: id must be a string or an integer");
    CHECK_OPENAPI_HAS ("addJob", "{\"jobGroup\":3,\"name\":\"a\\u0000b\"}",
                       "ERR: the body is not JSON: \\u0000 is not allowed");
    CHECK_OPENAPI_HAS ("addJob", "{\"jobGroup\":3,\"name\":\"\xff\"}",
                       "ERR: the body is not JSON: unable to decode byte 0xff");
    {
        char many [2048] = "{";
        for (int i = 0; i <= XXL_XXLADMIN_MAX_FIELDS; i++)
            sprintf (many + strlen (many), "%s\"f%d\":1", i? ",": "", i);
        strcat (many, "}");
        CHECK_OPENAPI ("startJob", many, "ERR: the body has more than 64 fields");
        char key [200] = "{\"";
        memset (key + 2, 'k', 65);
        strcpy (key + 67, "\":1}");
        CHECK_OPENAPI ("startJob", key, "ERR: the body has a field name over 64 bytes");
    }
    //  pageList: filters, -1 any; start/length (2.x), offset/pagesize (3.x)
    CHECK_REQUEST ("jobinfo/pageList", "jobGroup=-1&triggerStatus=-1&jobDesc=&executorHandler="
                   "&author=&start=20&length=10",
                   "{\"author\":\"\",\"executorHandler\":\"\",\"jobDesc\":\"\",\"limit\":10,"
                   "\"offset\":20,\"triggerStatus\":-1}");
    CHECK_REQUEST ("jobinfo/pageList", "jobGroup=2&triggerStatus=1",
                   "{\"group\":\"2\",\"limit\":10,\"offset\":0,\"triggerStatus\":1}");
    CHECK_REQUEST ("jobinfo/pageList", "offset=5&pagesize=50&name=x",
                   "{\"jobDesc\":\"x\",\"limit\":50,\"offset\":5,\"triggerStatus\":-1}");
    CHECK_REQUEST ("jobinfo/pageList", "length=0",
                   "ERR: length must be an integer from 1 to 10000, not '0'");
    CHECK_REQUEST ("jobinfo/pageList", "start=-1",
                   "ERR: start must be an integer from 0 to 2147483647, not '-1'");
    //  joblog/pageList: one row more than asked (whether more follow),
    //  filterTime's local range, the last second whole
    CHECK_REQUEST ("joblog/pageList", "jobGroup=0&jobId=0&logStatus=-1&filterTime=&start=0&length=10",
                   "{\"limit\":11,\"offset\":0}");
    CHECK_REQUEST ("joblog/pageList", "jobGroup=2&jobId=5&logStatus=2&filterTime="
                   "2024-01-02+00%3A00%3A00+-+2024-01-02+23%3A59%3A59&start=10&length=5",
                   "{\"jobGroup\":2,\"jobId\":5,\"limit\":6,\"logStatus\":2,\"offset\":10,"
                   "\"triggerTimeFrom\":1704153600000,\"triggerTimeTo\":1704239999999}");
    CHECK_REQUEST ("joblog/pageList", "filterTime=2024-01-02",
                   "ERR: filterTime must be 'yyyy-MM-dd HH:mm:ss - yyyy-MM-dd HH:mm:ss',"
                   " not '2024-01-02'");
    CHECK_REQUEST ("joblog/pageList", "filterTime=2024-01-03+00:00:00+-+2024-01-02+00:00:00",
                   "ERR: filterTime must be 'yyyy-MM-dd HH:mm:ss - yyyy-MM-dd HH:mm:ss',"
                   " not '2024-01-03 00:00:00 - 2024-01-02 00:00:00'");
    CHECK_REQUEST ("joblog/pageList", "length=1000",
                   "ERR: length must be an integer from 1 to 999, not '1000'");
    CHECK_REQUEST ("joblog/logDetailCat", "logId=3", "{\"fromLineNum\":1,\"logId\":3}");
    CHECK_REQUEST ("joblog/logDetailCat", "logId=3&fromLineNum=40", "{\"fromLineNum\":40,\"logId\":3}");
    //  clearLog's types
    CHECK_REQUEST ("joblog/clearLog", "jobGroup=0&jobId=0&type=1", "{\"beforeDays\":30}");
    CHECK_REQUEST ("joblog/clearLog", "jobGroup=1&jobId=4&type=4",
                   "{\"beforeDays\":365,\"jobGroup\":1,\"jobId\":4}");
    CHECK_REQUEST ("joblog/clearLog", "jobId=4&type=6", "{\"jobId\":4,\"keepLast\":10000}");
    CHECK_REQUEST ("joblog/clearLog", "jobId=4&type=9", "{\"all\":true,\"jobId\":4}");
    CHECK_REQUEST ("joblog/clearLog", "jobId=4&type=10",
                   "ERR: type must be an integer from 1 to 9, not '10'");
    CHECK_REQUEST ("joblog/clearLog", "jobId=4", "ERR: type is required (1-9, XXL-JOB's clear types)");
    //  (a group's jobs: jobId 0 is any job, as jobGroup 0 any group)
    CHECK_REQUEST ("joblog/clearLog", "jobGroup=2&jobId=0&type=9", "{\"all\":true,\"jobGroup\":2}");
    CHECK_REQUEST ("joblog/clearLog", "jobGroup=-1&jobId=0&type=5", "{\"keepLast\":1000}");
    CHECK_REQUEST ("joblog/clearLog", "jobGroup=x&type=5",
                   "ERR: jobGroup must be an integer, not 'x'");
    //  Groups, the schedule preview
    CHECK_REQUEST ("jobgroup/save", "appname=a&title=T&addressType=1&addressList=h%3A1",
                   "{\"addressList\":\"h:1\",\"addressType\":1,\"appname\":\"a\",\"title\":\"T\"}");
    CHECK_REQUEST ("jobgroup/save", "title=T", "ERR: appname is required");
    CHECK_REQUEST ("jobgroup/update", "id=2&appname=&title=T2",
                   "{\"group\":\"2\",\"title\":\"T2\"}");
    CHECK_REQUEST ("jobinfo/nextTriggerTime", "scheduleType=CRON&scheduleConf=0+0+3+*+*+%3F",
                   "{\"count\":5,\"scheduleConf\":\"0 0 3 * * ?\",\"scheduleType\":\"CRON\"}");
    //  joblog/getJobsByGroup: every job of the group, whatever its status
    CHECK_REQUEST ("joblog/getJobsByGroup", "jobGroup=3",
                   "{\"group\":\"3\",\"limit\":10000,\"triggerStatus\":-1}");
    CHECK_REQUEST ("joblog/getJobsByGroup", "", "ERR: jobGroup is required");
    CHECK_REQUEST ("joblog/getJobsByGroup", "jobGroup=0",
                   "ERR: jobGroup must be a group's id (1 or more), not 0");
    XXL_CHECK (xxl_xxladmin_endpoint ("joblog/getJobsByGroup")->read);
    //  chartInfo: the dates, local time, as REPORT's range
    CHECK_REQUEST ("chartInfo", "startDate=2024-01-01+00%3A00%3A00&endDate=2024-01-07+23%3A59%3A59",
                   "{\"from\":1704067200000,\"to\":1704671999000}");
    CHECK_REQUEST ("chartInfo", "startDate=2024-01-01&endDate=2024-01-07",
                   "{\"from\":1704067200000,\"to\":1704585600000}");
    CHECK_REQUEST ("chartInfo", "endDate=2024-01-07",
                   "ERR: startDate is required ('yyyy-MM-dd HH:mm:ss')");
    CHECK_REQUEST ("chartInfo", "startDate=2024-01-01&endDate=last+week",
                   "ERR: endDate must be 'yyyy-MM-dd HH:mm:ss' (or 'yyyy-MM-dd'), not 'last week'");
    CHECK_REQUEST ("chartInfo", "startDate=2024-01-08&endDate=2024-01-07",
                   "ERR: startDate (2024-01-08) is after endDate (2024-01-07)");
    XXL_CHECK (xxl_xxladmin_endpoint ("chartInfo")->read);
    //  jobcode/save: the job's GLUE source and remark, XXL-JOB's rules
    CHECK_REQUEST ("jobcode/save", "id=4&glueSource=echo+hi&glueRemark=second+one",
                   "{\"glueRemark\":\"second one\",\"glueSource\":\"echo hi\",\"jobId\":4}");
    CHECK_REQUEST ("jobcode/save", "id=4&glueSource=echo+hi&glueRemark=%e4%b8%ad%e6%96%87%e5%a4%87%e6%b3%a8",
                   "{\"glueRemark\":\"\xe4\xb8\xad\xe6\x96\x87\xe5\xa4\x87\xe6\xb3\xa8\","
                   "\"glueSource\":\"echo hi\",\"jobId\":4}");
    CHECK_REQUEST ("jobcode/save", "id=4&glueSource=echo+hi&glueRemark=abc",
                   "ERR: glueRemark must be 4 to 100 characters (XXL-JOB's limit), not 3");
    CHECK_REQUEST ("jobcode/save", "id=4&glueSource=+%0A&glueRemark=abcd",
                   "ERR: glueSource is required (not blank)");
    CHECK_REQUEST ("jobcode/save", "id=4&glueSource=x", "ERR: glueRemark is required");
    CHECK_REQUEST ("jobcode/save", "glueSource=x&glueRemark=abcd", "ERR: id is required");
    XXL_CHECK (!xxl_xxladmin_endpoint ("jobcode/save")->read);
    //  users: role 1 an admin of every app, role 0 an operator of the
    //  apps of permission's groups; what cannot be mapped refused
    CHECK_USER_REQUEST ("user/add", "username=+ana+&password=secret-pw-1&role=1&permission=2",
                        "{\"apps\":\"\",\"password\":\"secret-pw-1\",\"role\":\"admin\","
                        "\"username\":\"ana\"}");
    CHECK_USER_REQUEST ("user/insert", "username=bo&password=secret-pw-1&role=0&permission=2%2C1",
                        "{\"apps\":\"app-b,app-a\",\"password\":\"secret-pw-1\",\"role\":"
                        "\"operator\",\"username\":\"bo\"}");
    CHECK_USER_REQUEST ("user/update", "id=3&username=bo&password=&role=0&permission=1",
                        "{\"apps\":\"app-a\",\"role\":\"operator\",\"username\":\"bo\"}");
    CHECK_USER_REQUEST ("user/add", "username=bo&password=secret-pw-1&role=0",
                        "ERR: role 0 needs permission (the ids of the user's groups): an xxl user"
                        " without apps reaches every app (role 1 for an admin)");
    CHECK_USER_REQUEST ("user/add", "username=bo&password=secret-pw-1&role=0&permission=9",
                        "ERR: permission names group 9, which does not exist (or is not among"
                        " your apps)");
    CHECK_USER_REQUEST ("user/add", "username=bo&password=secret-pw-1&role=0&permission=1%2Cx",
                        "ERR: permission must be group ids separated by commas, not '1,x'");
    CHECK_USER_REQUEST ("user/add", "username=bo&password=secret-pw-1&role=2",
                        "ERR: role must be an integer from 0 to 1, not '2'");
    CHECK_USER_REQUEST ("user/add", "username=bo&role=1", "ERR: password is required");
    CHECK_USER_REQUEST ("user/update", "username=&role=1", "ERR: username is required");
    CHECK_USER_REQUEST ("user/remove", "username=bo", "ERR: no user endpoint");
    CHECK_REQUEST ("user/remove", "username=bo", "{\"username\":\"bo\"}");
    CHECK_REQUEST ("user/delete", "ids[]=3",
                   "ERR: user/delete needs username: xxl's users have no numeric id (user/pageList"
                   " shows id null)");
    CHECK_REQUEST ("user/pageList", "username=&role=-1", "{}");
    XXL_CHECK (xxl_xxladmin_needs_groups (xxl_xxladmin_endpoint ("user/pageList")));
    XXL_CHECK (xxl_xxladmin_endpoint ("user/updatePwd")
               && !xxl_xxladmin_endpoint ("user/updatePwd")->command);
    XXL_CHECK (xxl_xxladmin_endpoint ("auth/updatePwd") != NULL);
    //  user/pageList: XXL-JOB's rows, filtered by username and role, paged
    {
        const char *users = "{\"users\":[{\"username\":\"admin\",\"role\":\"admin\","
            "\"apps\":\"\",\"addTime\":5},{\"username\":\"bo\",\"role\":\"operator\","
            "\"apps\":\"app-b,gone\",\"addTime\":6},{\"username\":\"cy\",\"role\":"
            "\"viewer\",\"apps\":\"\",\"addTime\":7}]}";
        CHECK_USERS ("username=&role=0&start=0&length=10", users,
                     "{\"data\":[{\"addTime\":6,\"apps\":\"app-b,gone\",\"id\":null,"
                     "\"password\":null,\"permission\":\"2\",\"role\":0,\"username\":\"bo\","
                     "\"xxlRole\":\"operator\"},{\"addTime\":7,\"apps\":\"\",\"id\":null,"
                     "\"password\":null,\"permission\":null,\"role\":0,\"username\":\"cy\","
                     "\"xxlRole\":\"viewer\"}],\"recordsFiltered\":2,\"recordsTotal\":2}");
        CHECK_USERS ("username=ADM&role=-1", users,
                     "{\"data\":[{\"addTime\":5,\"apps\":\"\",\"id\":null,\"password\":null,"
                     "\"permission\":null,\"role\":1,\"username\":\"admin\",\"xxlRole\":"
                     "\"admin\"}],\"recordsFiltered\":1,\"recordsTotal\":1}");
        //  (3.x's paging names: 3.x's ReturnT of its PageModel)
        CHECK_USERS ("offset=2&pagesize=5", users,
                     "{\"code\":200,\"content\":{\"data\":[{\"addTime\":7,\"apps\":\"\","
                     "\"id\":null,\"password\":null,\"permission\":null,\"role\":0,\"username\":"
                     "\"cy\",\"xxlRole\":\"viewer\"}],\"offset\":2,\"pagesize\":5,\"total\":3},"
                     "\"data\":{\"data\":[{\"addTime\":7,\"apps\":\"\",\"id\":null,\"password\":"
                     "null,\"permission\":null,\"role\":0,\"username\":\"cy\",\"xxlRole\":"
                     "\"viewer\"}],\"offset\":2,\"pagesize\":5,\"total\":3},\"msg\":null}");
        CHECK_USERS ("role=5", users, "{\"code\":500,\"content\":null,\"data\":null,\"msg\":"
                     "\"role must be an integer from -1 to 1, not '5'\"}");
    }
    XXL_CHECK (xxl_xxladmin_endpoint ("jobinfo/nosuch") == NULL);
    XXL_CHECK (xxl_xxladmin_endpoint ("login") && !xxl_xxladmin_endpoint ("login")->command);

    //  Answers: ReturnT with content and data; a refusal's reason
    CHECK_ANSWER ("jobinfo/add", "", 200, "", "{\"id\":42}",
                  "{\"code\":200,\"content\":\"42\",\"data\":\"42\",\"msg\":null}");
    CHECK_ANSWER ("jobinfo/start", "", 200, "", "{\"id\":42}",
                  "{\"code\":200,\"content\":null,\"data\":null,\"msg\":null}");
    CHECK_ANSWER ("jobinfo/add", "", 403, "it needs the admin role", NULL,
                  "{\"code\":500,\"content\":null,\"data\":null,\"msg\":\"it needs the admin role\"}");
    //  logKill: the agent's message where XXL-JOB puts it (2.x content, 3.x data)
    CHECK_ANSWER ("joblog/logKill", "", 200, "killed", NULL,
                  "{\"code\":200,\"content\":\"killed\",\"data\":\"killed\",\"msg\":null}");
    CHECK_ANSWER ("joblog/logKill", "", 200, "", NULL,
                  "{\"code\":200,\"content\":null,\"data\":null,\"msg\":null}");
    CHECK_ANSWER ("jobinfo/pageList", "", 200, "", "{\"jobs\":[{\"id\":1}],\"total\":31}",
                  "{\"data\":[{\"id\":1}],\"recordsFiltered\":31,\"recordsTotal\":31}");
    //  a pageList's shape follows the request's paging names: 3.x's
    //  (offset, pagesize) its ReturnT of PageModel, 2.x's (or none) the map
    CHECK_ANSWER ("jobinfo/pageList", "offset=30&pagesize=10", 200, "",
                  "{\"jobs\":[{\"id\":1}],\"total\":31}",
                  "{\"code\":200,\"content\":{\"data\":[{\"id\":1}],\"offset\":30,\"pagesize\":10,"
                  "\"total\":31},\"data\":{\"data\":[{\"id\":1}],\"offset\":30,\"pagesize\":10,"
                  "\"total\":31},\"msg\":null}");
    CHECK_ANSWER ("jobinfo/pageList", "start=30&length=10", 200, "",
                  "{\"jobs\":[{\"id\":1}],\"total\":31}",
                  "{\"data\":[{\"id\":1}],\"recordsFiltered\":31,\"recordsTotal\":31}");
    CHECK_ANSWER ("jobinfo/pageList", "start=30&offset=10", 200, "",
                  "{\"jobs\":[{\"id\":1}],\"total\":31}",
                  "{\"data\":[{\"id\":1}],\"recordsFiltered\":31,\"recordsTotal\":31}");
    CHECK_ANSWER ("joblog/pageList", "pagesize=2", 200, "",
                  "{\"logs\":[{\"id\":9},{\"id\":8},{\"id\":7}]}",
                  "{\"code\":200,\"content\":{\"data\":[{\"id\":9},{\"id\":8}],\"offset\":0,"
                  "\"pagesize\":2,\"total\":3},\"data\":{\"data\":[{\"id\":9},{\"id\":8}],"
                  "\"offset\":0,\"pagesize\":2,\"total\":3},\"msg\":null}");
    //  a group's jobs: ReturnT of the list; refused past JOB_LIST's 10000
    CHECK_ANSWER ("joblog/getJobsByGroup", "jobGroup=3", 200, "",
                  "{\"jobs\":[{\"id\":1},{\"id\":4}],\"total\":2}",
                  "{\"code\":200,\"content\":[{\"id\":1},{\"id\":4}],\"data\":[{\"id\":1},"
                  "{\"id\":4}],\"msg\":null}");
    CHECK_ANSWER ("joblog/getJobsByGroup", "jobGroup=3", 200, "",
                  "{\"jobs\":[{\"id\":1}],\"total\":10001}",
                  "{\"code\":500,\"content\":null,\"data\":null,\"msg\":\"the group has 10001"
                  " jobs, more than getJobsByGroup's 10000: page them with jobinfo/pageList\"}");
    CHECK_ANSWER ("joblog/getJobsByGroup", "jobGroup=3", 404, "group '3' not found", NULL,
                  "{\"code\":500,\"content\":null,\"data\":null,\"msg\":\"group '3' not"
                  " found\"}");
    //  chartInfo: REPORT's days (newest first) oldest first, with their sums
    CHECK_ANSWER ("chartInfo", "", 200, "",
                  "{\"days\":[{\"triggerDay\":1704153600000,\"runningCount\":1,\"sucCount\":2,"
                  "\"failCount\":3},{\"triggerDay\":1704067200000,\"runningCount\":0,"
                  "\"sucCount\":5,\"failCount\":1}],\"runCount\":99}",
                  "{\"code\":200,\"content\":{\"triggerCountFailTotal\":4,"
                  "\"triggerCountRunningTotal\":1,\"triggerCountSucTotal\":7,"
                  "\"triggerDayCountFailList\":[1,3],\"triggerDayCountRunningList\":[0,1],"
                  "\"triggerDayCountSucList\":[5,2],\"triggerDayList\":[\"2024-01-01\","
                  "\"2024-01-02\"]},\"data\":{\"triggerCountFailTotal\":4,"
                  "\"triggerCountRunningTotal\":1,\"triggerCountSucTotal\":7,"
                  "\"triggerDayCountFailList\":[1,3],\"triggerDayCountRunningList\":[0,1],"
                  "\"triggerDayCountSucList\":[5,2],\"triggerDayList\":[\"2024-01-01\","
                  "\"2024-01-02\"]},\"msg\":null}");
    {
        //  no day counted: XXL-JOB's seven days up to today, zeros
        json_t *form = json_object ();
        json_t *content = json_pack ("{s:[]}", "days");
        json_t *answer = xxl_xxladmin_answer (xxl_xxladmin_endpoint ("chartInfo"), form, 200,
                                              "", content, NULL);
        json_t *chart = json_object_get (answer, "content");
        json_t *list = json_object_get (chart, "triggerDayList");
        char today [32];
        time_t now = time (NULL);
        struct tm tm;
        strftime (today, sizeof today, "%Y-%m-%d", localtime_r (&now, &tm));
        XXL_CHECK_INT (json_array_size (list), 7);
        XXL_CHECK_STR (json_string_value (json_array_get (list, 6)), today);
        XXL_CHECK_INT (json_array_size (json_object_get (chart, "triggerDayCountSucList")), 7);
        XXL_CHECK_INT (json_integer_value (json_object_get (chart, "triggerCountSucTotal")), 0);
        json_decref (answer);
        json_decref (content);
        json_decref (form);
    }
    //  logs: no count; those up to the page, one more when more follow
    CHECK_ANSWER ("joblog/pageList", "start=20&length=2", 200, "",
                  "{\"logs\":[{\"id\":9},{\"id\":8},{\"id\":7}]}",
                  "{\"data\":[{\"id\":9},{\"id\":8}],\"recordsFiltered\":23,\"recordsTotal\":23}");
    CHECK_ANSWER ("joblog/pageList", "start=20&length=5", 200, "",
                  "{\"logs\":[{\"id\":9},{\"id\":8}]}",
                  "{\"data\":[{\"id\":9},{\"id\":8}],\"recordsFiltered\":22,\"recordsTotal\":22}");
    //  a page past the end: the count of the rows, never the start asked
    CHECK_ANSWER ("joblog/pageList", "start=100&length=10", 200, "",
                  "{\"logs\":[],\"count\":5}",
                  "{\"data\":[],\"recordsFiltered\":5,\"recordsTotal\":5}");
    CHECK_ANSWER ("joblog/pageList", "offset=100&pagesize=10", 200, "",
                  "{\"logs\":[],\"count\":0}",
                  "{\"code\":200,\"content\":{\"data\":[],\"offset\":100,\"pagesize\":10,"
                  "\"total\":0},\"data\":{\"data\":[],\"offset\":100,\"pagesize\":10,"
                  "\"total\":0},\"msg\":null}");
    //  groups: filtered and paged here, registryList from the addresses
    CHECK_ANSWER ("jobgroup/pageList", "appname=APP&start=1&length=1", 200, "",
                  "{\"groups\":[{\"id\":1,\"appname\":\"app-a\",\"addressList\":\"h:1,h:2\"},"
                  "{\"id\":2,\"appname\":\"other\",\"addressList\":\"\"},"
                  "{\"id\":3,\"appname\":\"my-app\",\"addressList\":\"\"}]}",
                  "{\"data\":[{\"addressList\":\"\",\"appname\":\"my-app\",\"id\":3,"
                  "\"registryList\":null}],\"recordsFiltered\":2,\"recordsTotal\":2}");
    //  (3.x's offset and pagesize page them too)
    CHECK_ANSWER ("jobgroup/pageList", "appname=APP&offset=1&pagesize=1", 200, "",
                  "{\"groups\":[{\"id\":1,\"appname\":\"app-a\",\"addressList\":\"\"},"
                  "{\"id\":2,\"appname\":\"other\",\"addressList\":\"\"},"
                  "{\"id\":3,\"appname\":\"my-app\",\"addressList\":\"\"}]}",
                  "{\"code\":200,\"content\":{\"data\":[{\"addressList\":\"\",\"appname\":"
                  "\"my-app\",\"id\":3,\"registryList\":null}],\"offset\":1,\"pagesize\":1,"
                  "\"total\":2},\"data\":{\"data\":[{\"addressList\":\"\",\"appname\":"
                  "\"my-app\",\"id\":3,\"registryList\":null}],\"offset\":1,\"pagesize\":1,"
                  "\"total\":2},\"msg\":null}");
    CHECK_ANSWER ("jobgroup/pageList", "pagesize=0", 200, "", "{\"groups\":[]}",
                  "{\"code\":500,\"content\":null,\"data\":null,\"msg\":\"pagesize must be an"
                  " integer from 1 to 10000, not '0'\"}");
    CHECK_ANSWER ("jobgroup/pageList", "", 200, "",
                  "{\"groups\":[{\"id\":1,\"appname\":\"app-a\",\"addressList\":\"h:1,h:2\"}]}",
                  "{\"data\":[{\"addressList\":\"h:1,h:2\",\"appname\":\"app-a\",\"id\":1,"
                  "\"registryList\":[\"h:1\",\"h:2\"]}],\"recordsFiltered\":1,\"recordsTotal\":1}");
    //  3.5's names: a group's name is its title (a form's name sets the
    //  title, filters by it), a job's name its jobDesc
    CHECK_ANSWER ("jobgroup/pageList", "name=B", 200, "",
                  "{\"groups\":[{\"id\":1,\"appname\":\"a\",\"title\":\"Alpha\"},"
                  "{\"id\":2,\"appname\":\"b\",\"title\":\"Beta\"}]}",
                  "{\"data\":[{\"appname\":\"b\",\"id\":2,\"name\":\"Beta\","
                  "\"registryList\":null,\"title\":\"Beta\"}],\"recordsFiltered\":1,"
                  "\"recordsTotal\":1}");
    CHECK_ANSWER ("jobgroup/loadById", "id=2", 200, "",
                  "{\"id\":2,\"appname\":\"b\",\"title\":\"Beta\"}",
                  "{\"code\":200,\"content\":{\"appname\":\"b\",\"id\":2,\"name\":\"Beta\","
                  "\"registryList\":null,\"title\":\"Beta\"},\"data\":{\"appname\":\"b\","
                  "\"id\":2,\"name\":\"Beta\",\"registryList\":null,\"title\":\"Beta\"},"
                  "\"msg\":null}");
    CHECK_ANSWER ("jobinfo/loadById", "id=4", 200, "", "{\"id\":4,\"jobDesc\":\"nightly\"}",
                  "{\"code\":200,\"content\":{\"id\":4,\"jobDesc\":\"nightly\",\"name\":"
                  "\"nightly\"},\"data\":{\"id\":4,\"jobDesc\":\"nightly\",\"name\":"
                  "\"nightly\"},\"msg\":null}");
    CHECK_ANSWER ("jobinfo/pageList", "offset=0&pagesize=10", 200, "",
                  "{\"jobs\":[{\"id\":4,\"jobDesc\":\"nightly\"}],\"total\":1}",
                  "{\"code\":200,\"content\":{\"data\":[{\"id\":4,\"jobDesc\":\"nightly\","
                  "\"name\":\"nightly\"}],\"offset\":0,\"pagesize\":10,\"total\":1},"
                  "\"data\":{\"data\":[{\"id\":4,\"jobDesc\":\"nightly\",\"name\":"
                  "\"nightly\"}],\"offset\":0,\"pagesize\":10,\"total\":1},\"msg\":null}");
    CHECK_REQUEST ("jobgroup/insert", "appname=a&name=Alpha",
                   "{\"appname\":\"a\",\"title\":\"Alpha\"}");
    CHECK_REQUEST ("jobgroup/update", "id=2&name=Beta", "{\"group\":\"2\",\"title\":\"Beta\"}");
    //  name beside the field it stands for: the same value is taken, two
    //  values are refused (neither silently wins)
    CHECK_REQUEST ("jobgroup/insert", "appname=a&title=Alpha&name=Alpha",
                   "{\"appname\":\"a\",\"title\":\"Alpha\"}");
    CHECK_REQUEST ("jobgroup/insert", "appname=a&title=Alpha&name=Beta",
                   "ERR: title and name differ (name is XXL-JOB 3.5's title): give one of them");
    CHECK_REQUEST ("jobgroup/update", "id=2&title=Alpha&name=Beta",
                   "ERR: title and name differ (name is XXL-JOB 3.5's title): give one of them");
    CHECK_REQUEST ("jobinfo/add", "jobGroup=3&jobDesc=d&name=d", "{\"jobDesc\":\"d\",\"jobGroup\":\"3\"}");
    CHECK_REQUEST ("jobinfo/add", "jobGroup=3&jobDesc=d&name=e",
                   "ERR: jobDesc and name differ (name is XXL-JOB 3.5's jobDesc): give one of them");
    CHECK_REQUEST ("jobinfo/update", "id=4&jobDesc=d&name=e",
                   "ERR: jobDesc and name differ (name is XXL-JOB 3.5's jobDesc): give one of them");
    CHECK_REQUEST ("jobinfo/pageList", "jobDesc=d&name=e",
                   "ERR: jobDesc and name differ (name is XXL-JOB 3.5's jobDesc): give one of them");
    CHECK_ANSWER ("jobgroup/pageList", "title=Al&name=Be", 200, "",
                  "{\"groups\":[{\"id\":1,\"appname\":\"a\",\"title\":\"Alpha\"}]}",
                  "{\"code\":500,\"content\":null,\"data\":null,\"msg\":\"title and name differ"
                  " (name is XXL-JOB 3.5's title): give one of them\"}");
    CHECK_ANSWER ("jobgroup/pageList", "title=Al&name=Al", 200, "",
                  "{\"groups\":[{\"id\":1,\"appname\":\"a\",\"title\":\"Alpha\"}]}",
                  "{\"data\":[{\"appname\":\"a\",\"id\":1,\"name\":\"Alpha\",\"registryList\":null,"
                  "\"title\":\"Alpha\"}],\"recordsFiltered\":1,\"recordsTotal\":1}");
    //  a log page: XXL-JOB's LogResult, its text HTML-escaped as XXL-JOB's
    CHECK_ANSWER ("joblog/logDetailCat", "", 200, "",
                  "{\"fromLineNum\":1,\"toLineNum\":2,\"logContent\":\"<b>&'\\\"\",\"isEnd\":true}",
                  "{\"code\":200,\"content\":{\"end\":true,\"fromLineNum\":1,\"isEnd\":true,"
                  "\"logContent\":\"&lt;b&gt;&amp;&#39;&quot;\",\"toLineNum\":2},\"data\":{\"end\""
                  ":true,\"fromLineNum\":1,\"isEnd\":true,\"logContent\":\"&lt;b&gt;&amp;&#39;"
                  "&quot;\",\"toLineNum\":2},\"msg\":null}");
    //  times: in http/xxl_admin_timezone, UTC when it is unset (NULL)
    CHECK_ANSWER ("jobinfo/nextTriggerTime", "", 200, "", "{\"next\":[1704164400000]}",
                  "{\"code\":200,\"content\":[\"2024-01-02 03:00:00\"],\"data\":"
                  "[\"2024-01-02 03:00:00\"],\"msg\":null}");
    {
        //  a zone set: its wall time, whatever the process's TZ (here UTC);
        //  across a daylight-saving change each time gets its own offset
        json_t *form = json_object ();
        json_t *content = json_pack ("{s:[I, I, I]}", "next", (json_int_t) 1704164400000,
                                     (json_int_t) 1710054000000, (json_int_t) 1710140400000);
        const xxl_xxladmin_endpoint_t *next = xxl_xxladmin_endpoint ("jobinfo/nextTriggerTime");
        json_t *answer = xxl_xxladmin_answer (next, form, 200, "", content, "Asia/Shanghai");
        char *got = json_dumps (json_object_get (answer, "content"), JSON_COMPACT);
        XXL_CHECK_STR (got, "[\"2024-01-02 11:00:00\",\"2024-03-10 15:00:00\","
                       "\"2024-03-11 15:00:00\"]");
        free (got);
        json_decref (answer);
        answer = xxl_xxladmin_answer (next, form, 200, "", content, "America/New_York");
        got = json_dumps (json_object_get (answer, "content"), JSON_COMPACT);
        XXL_CHECK_STR (got, "[\"2024-01-01 22:00:00\",\"2024-03-10 03:00:00\","
                       "\"2024-03-11 03:00:00\"]");
        free (got);
        json_decref (answer);
        json_decref (content);
        json_decref (form);
    }
    //  nextTriggerTime without times (XXL-JOB's): a blank type or conf
    //  (3.3+), a type it plans none of (2.x NONE, FIX_DELAY; unknown);
    //  CRON and FIX_RATE go to SCHEDULE_NEXT, which judges the conf
    {
        const char *empty = "{\"code\":200,\"content\":[],\"data\":[],\"msg\":null}";
        const char *forms [] = {
            "scheduleType=CRON&scheduleConf=", "scheduleType=CRON&scheduleConf=+",
            "scheduleType=&scheduleConf=0+0+3+*+*+%3F", "scheduleConf=5", "",
            "scheduleType=NONE&scheduleConf=x", "scheduleType=FIX_DELAY&scheduleConf=5",
            "scheduleType=cron&scheduleConf=0+0+3+*+*+%3F", "scheduleType=FIX_RATE", NULL
        };
        for (int i = 0; forms [i]; i++) {
            json_t *form = json_object ();
            char why [256];
            xxl_xxladmin_form (form, forms [i], strlen (forms [i]), why, sizeof why);
            json_t *answer = xxl_xxladmin_settled (xxl_xxladmin_endpoint (
                                                   "jobinfo/nextTriggerTime"), form);
            char *got = answer? json_dumps (answer, JSON_COMPACT | JSON_SORT_KEYS): NULL;
            XXL_CHECK_STR (got? got: "(a call)", empty);
            free (got);
            json_decref (answer);
            json_decref (form);
        }
        const char *calls [] = {
            "scheduleType=CRON&scheduleConf=0+0+3+*+*+%3F", "scheduleType=CRON&scheduleConf=bad",
            "scheduleType=FIX_RATE&scheduleConf=5", NULL
        };
        for (int i = 0; calls [i]; i++) {
            json_t *form = json_object ();
            char why [256];
            xxl_xxladmin_form (form, calls [i], strlen (calls [i]), why, sizeof why);
            json_t *answer = xxl_xxladmin_settled (xxl_xxladmin_endpoint (
                                                   "jobinfo/nextTriggerTime"), form);
            XXL_CHECK (answer == NULL);
            json_decref (answer);
            json_decref (form);
        }
        json_t *form = json_object ();
        XXL_CHECK (xxl_xxladmin_settled (xxl_xxladmin_endpoint ("jobinfo/pageList"), form)
                   == NULL);
        json_decref (form);
    }
    //  a reason cut inside a character is made UTF-8
    {
        json_t *answer = xxl_xxladmin_returnt (500, "bad '\xe4\xb8'", NULL);
        char *text = json_dumps (answer, JSON_COMPACT | JSON_SORT_KEYS);
        XXL_CHECK_STR (text, "{\"code\":500,\"content\":null,\"data\":null,\"msg\":"
                       "\"bad '\xef\xbf\xbd'\"}");
        free (text);
        json_decref (answer);
    }
    int64_t from, to;
    XXL_CHECK (xxl_xxladmin_range ("2024-01-02 00:00:00 - 2024-01-02 00:00:00", &from, &to) == 0);
    XXL_CHECK_INT (from, 1704153600000LL);
    XXL_CHECK_INT (to, 1704153600999LL);
    XXL_CHECK (xxl_xxladmin_range ("2024-13-02 00:00:00 - 2024-01-02 00:00:00", &from, &to) == -1);
    XXL_CHECK (xxl_xxladmin_range ("2024-01-02 00:00:00-2024-01-02 00:00:00", &from, &to) == -1);
    XXL_CHECK (xxl_xxladmin_range ("2024-01-02 00:00:00x - 2024-01-02 00:00:00", &from, &to) == -1);
    return xxl_test_done ();
}
