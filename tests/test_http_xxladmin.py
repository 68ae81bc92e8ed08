#!/usr/bin/env python3
"""test_http_xxladmin.py -- XXL-JOB admin's console endpoints under
/xxl-job-admin (docs/migrating.md, "Scripts that call the admin") against
the scheduler tests/test_http.sh started (it exports HTTP1, ADMIN_TOKEN,
XA_ADMIN_PW, XA_VIEWER_PW, XA_APP: users xa-admin, admin, and xa-viewer,
viewer; an agent of app XA_APP running demoJobHandler).  A script's steps:
login, cookie, add, pageList, update, start/stop, trigger, joblog, remove,
logout; the refusals beside the allowed cases.  Prints one line per check,
then "done".  Waits poll; no fixed sleeps."""

import datetime
import http.client
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
from zoneinfo import ZoneInfo

sys.dont_write_bytecode = True
from zoneinfo import ZoneInfo
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xxl_tap import check  # noqa: E402

H1 = os.environ["HTTP1"]
ADMIN = os.environ["ADMIN_TOKEN"]
APP = os.environ["XA_APP"]
ZONE = os.environ.get("XA_ZONE", "")      # http/xxl_admin_timezone
SOURCE = "127.0.0.31"       # (an address of its own: the login limiter's counts)
P = "/xxl-job-admin"
JOB_KEYS = ["id", "jobGroup", "jobDesc", "addTime", "updateTime", "author", "alarmEmail",
            "scheduleType", "scheduleConf", "misfireStrategy", "executorRouteStrategy",
            "executorHandler", "executorParam", "executorBlockStrategy", "executorTimeout",
            "executorFailRetryCount", "glueType", "glueSource", "glueRemark",
            "glueUpdatetime", "childJobId", "triggerStatus", "triggerLastTime",
            "triggerNextTime"]
LOG_KEYS = ["id", "jobGroup", "jobId", "executorAddress", "executorHandler", "executorParam",
            "executorShardingParam", "executorFailRetryCount", "triggerTime", "triggerCode",
            "triggerMsg", "handleTime", "handleCode", "handleMsg", "alarmStatus"]


def post(path, form=None, cookie=None, token=None, raw=None, ctype=None, method="POST",
         headers=None):
    """(status, parsed JSON or text, response); form: a dict or a list of pairs"""
    name, port = H1.rsplit(":", 1)
    conn = http.client.HTTPConnection(name, int(port), timeout=30, source_address=(SOURCE, 0))
    hdrs = dict(headers or {})
    if cookie:
        hdrs["Cookie"] = cookie
    if token:
        hdrs["Authorization"] = "Bearer " + token
    data = raw
    if form is not None:
        data = urllib.parse.urlencode(form).encode()
    if data is not None:
        hdrs["Content-Type"] = ctype or "application/x-www-form-urlencoded"
    conn.request(method, P + "/" + path, body=data, headers=hdrs)
    resp = conn.getresponse()
    text = resp.read().decode("utf-8", "replace")
    conn.close()
    try:
        value = json.loads(text)
    except ValueError:
        value = text
    return resp.status, value, resp


def post_from(source, path, form):
    global SOURCE
    saved, SOURCE = SOURCE, source
    try:
        return post(path, form)
    finally:
        SOURCE = saved


def login(user, password):
    s, v, resp = post("login", {"userName": user, "password": password})
    cookie = resp.getheader("Set-Cookie") or ""
    m = re.match(r"XXL_JOB_LOGIN_IDENTITY=([0-9a-f]+);", cookie)
    return s, v, cookie, ("XXL_JOB_LOGIN_IDENTITY=" + m.group(1)) if m else None


def ok(v):
    return isinstance(v, dict) and v.get("code") == 200


def refused(v, text=""):
    return isinstance(v, dict) and v.get("code") == 500 and text in (v.get("msg") or "")


def wait(fn, seconds=20):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            got = fn()
            if got:
                return got
        except Exception:
            pass
        time.sleep(0.05)
    return None


# Login: the wrong password refused, the right one accepted with the cookie
s, v, _, c = login("xa-admin", "wrong-password")
check("xxl-job-admin login: a wrong password is refused (ReturnT 500, no cookie)",
      s == 200 and refused(v, "wrong user name or password") and c is None, (s, v))
s, v, setc, ADM = login("xa-admin", os.environ["XA_ADMIN_PW"])
check("xxl-job-admin login: the right password gets ReturnT 200 {code, msg, content, data}",
      s == 200 and v == {"code": 200, "msg": None, "content": None, "data": None}, (s, v))
check("... and cookie XXL_JOB_LOGIN_IDENTITY: HttpOnly, SameSite=Strict, Path=/xxl-job-admin",
      ADM is not None and "HttpOnly" in setc and "SameSite=Strict" in setc
      and "Path=/xxl-job-admin" in setc and "Max-Age" not in setc, setc)
s, v, _ = post("login", {"userName": "xa-admin"})
check("xxl-job-admin login without password: ReturnT 500 saying what it needs",
      s == 200 and refused(v, "userName"), (s, v))
s, v, setc, _ = login("xa-admin", os.environ["XA_ADMIN_PW"])
s, v, resp = post("login", {"userName": "xa-admin", "password": os.environ["XA_ADMIN_PW"],
                            "ifRemember": "on"})
check("xxl-job-admin login with ifRemember=on: a cookie with Max-Age",
      ok(v) and "Max-Age=" in (resp.getheader("Set-Cookie") or ""), resp.getheader("Set-Cookie"))

# Wrong passwords are limited as the console's logins are (test_http.sh:
# login_burst 5 per address and per user name): then 429 with Retry-After
got = [post_from("127.0.0.32", "login", {"userName": "xa-nobody", "password": "wrong-%d" % i})
       for i in range(6)]
s, v, resp = got[-1]
check("xxl-job-admin login: wrong passwords past login_burst are limited (429, Retry-After, ReturnT 500)",
      [g[0] for g in got[:5]] == [200] * 5 and all(refused(g[1], "wrong") for g in got[:5])
      and s == 429 and resp.getheader("Retry-After") and refused(v, "too many"), (s, v))
s, v, _ = post_from("127.0.0.33", "login", {"userName": "xa-admin",
                                             "password": os.environ["XA_ADMIN_PW"]})
check("... while another address's right password logs in", ok(v), (s, v))

# No login: XXL-JOB's answer (302 to toLogin), with a ReturnT saying so
s, v, resp = post("jobinfo/pageList", {"jobGroup": "-1"})
check("xxl-job-admin without a cookie: 302 to /xxl-job-admin/toLogin, ReturnT 500 'not logged in'",
      s == 302 and resp.getheader("Location") == P + "/toLogin" and refused(v, "not logged in"),
      (s, v))
s, v, _ = post("toLogin", method="GET")
check("xxl-job-admin toLogin: ReturnT 500 'not logged in'", s == 200 and refused(v, "not logged in"),
      (s, v))
s, v, _ = post("jobinfo/pageList", {"jobGroup": "-1"}, cookie="XXL_JOB_LOGIN_IDENTITY=" + "0" * 64)
check("xxl-job-admin with an unknown session: 302", s == 302, (s, v))
# toLogin with a live session keeps it (XXL-JOB sends a logged-in browser
# on); with a session gone it clears the cookie
s, v, resp = post("toLogin", method="GET", cookie=ADM)
check("xxl-job-admin toLogin with a session: ReturnT 200, the cookie not cleared",
      s == 200 and ok(v) and not resp.getheader("Set-Cookie"), (s, v, resp.getheader("Set-Cookie")))
s, v, _ = post("jobinfo/pageList", {"jobGroup": "-1"}, cookie=ADM)
check("... and the session still works after it",
      s == 200 and isinstance(v, dict) and "recordsTotal" in v, s)
s, v, resp = post("toLogin", method="GET", cookie="XXL_JOB_LOGIN_IDENTITY=" + "0" * 64)
check("xxl-job-admin toLogin with a session gone: ReturnT 500, the cookie cleared",
      s == 200 and refused(v, "not logged in")
      and "Max-Age=0" in (resp.getheader("Set-Cookie") or ""), (s, v))
s, v, _ = post("jobinfo/pageList", {"jobGroup": "-1"}, cookie=ADM.replace("XXL_JOB_LOGIN_IDENTITY",
                                                                          "xxl_session"))
check("xxl-job-admin does not take the console's xxl_session cookie (302)", s == 302, (s, v))

# jobgroup/pageList: the app's group, XXL-JOB's keys
s, v, _ = post("jobgroup/pageList", {"start": 0, "length": 10, "appname": APP, "title": ""},
               cookie=ADM)
groups = v.get("data") if isinstance(v, dict) else None
check("xxl-job-admin jobgroup/pageList finds the app's group {recordsTotal, recordsFiltered, data}",
      s == 200 and isinstance(groups, list) and len(groups) == 1 and groups[0]["appname"] == APP
      and v.get("recordsTotal") == 1 and v.get("recordsFiltered") == 1
      and all(k in groups[0] for k in ("id", "appname", "title", "addressType", "addressList",
                                       "updateTime", "registryList")), (s, v))
GID = groups[0]["id"] if groups else 0
# 3.x's paging names: 3.x's answer, ReturnT of {offset, pagesize, total, data}, paged by them
s, v, _ = post("jobgroup/pageList", {"offset": 0, "pagesize": 10, "appname": APP}, cookie=ADM)
s2, v2, _ = post("jobgroup/pageList", {"offset": 1, "pagesize": 10, "appname": APP}, cookie=ADM)
page = v.get("data") if isinstance(v, dict) else None
check("xxl-job-admin jobgroup/pageList with offset, pagesize (3.x): ReturnT of {total, data},"
      " paged by them",
      ok(v) and isinstance(page, dict) and page.get("total") == 1
      and [g["appname"] for g in page.get("data", [])] == [APP] and v.get("content") == page
      and ok(v2) and v2["data"]["total"] == 1 and v2["data"]["data"] == [], (v, v2))

# jobinfo/add, then pageList finds it with XXL-JOB's field names
JOB = {"jobGroup": GID, "jobDesc": "xa job", "author": "xa", "alarmEmail": "",
       "scheduleType": "CRON", "scheduleConf": "0 0 3 * * ?", "cronGen_display": "0 0 3 * * ?",
       "glueType": "BEAN", "executorHandler": "demoJobHandler", "executorParam": "p0",
       "executorRouteStrategy": "FIRST", "childJobId": "", "misfireStrategy": "DO_NOTHING",
       "executorBlockStrategy": "SERIAL_EXECUTION", "executorTimeout": "0",
       "executorFailRetryCount": "0", "glueRemark": "GLUE init", "glueSource": ""}
s, v, _ = post("jobinfo/add", JOB, cookie=ADM)
check("xxl-job-admin jobinfo/add: ReturnT 200, content the new id as text",
      ok(v) and isinstance(v.get("content"), str) and v["content"].isdigit()
      and v.get("data") == v.get("content"), (s, v))
JID = int(v["content"]) if ok(v) else 0
PAGE = {"jobGroup": GID, "triggerStatus": -1, "jobDesc": "xa job", "executorHandler": "",
        "author": "", "start": 0, "length": 10}
s, v, _ = post("jobinfo/pageList", PAGE, cookie=ADM)
jobs = v.get("data") if isinstance(v, dict) else []
check("xxl-job-admin jobinfo/pageList finds it, XXL-JOB's field names and values",
      s == 200 and v.get("recordsTotal") == 1 and len(jobs) == 1 and jobs[0]["id"] == JID
      and all(k in jobs[0] for k in JOB_KEYS) and jobs[0]["jobGroup"] == GID
      and jobs[0]["scheduleConf"] == "0 0 3 * * ?" and jobs[0]["triggerStatus"] == 0, (s, v))
PAGE3 = dict(PAGE, offset=0, pagesize=10)
del PAGE3["start"], PAGE3["length"]
s, v, _ = post("jobinfo/pageList", PAGE3, cookie=ADM)
page = v.get("data") if isinstance(v, dict) else None
check("xxl-job-admin jobinfo/pageList with offset, pagesize (3.x): ReturnT of {total, data}",
      ok(v) and isinstance(page, dict) and page.get("total") == 1
      and [j["id"] for j in page.get("data", [])] == [JID], (s, v))
s, v, _ = post("jobinfo/pageList", dict(PAGE, jobDesc="no such job"), cookie=ADM)
check("... and a jobDesc filter that matches none finds none",
      s == 200 and v.get("recordsTotal") == 0 and v.get("data") == [], (s, v))

# update, start, stop
s, v, _ = post("jobinfo/update", dict(JOB, id=JID, jobDesc="xa job 2", executorParam="p1"),
               cookie=ADM)
s2, v2, _ = post("jobinfo/pageList", dict(PAGE, jobDesc="xa job 2"), cookie=ADM)
check("xxl-job-admin jobinfo/update: ReturnT 200, the job changed",
      ok(v) and v2.get("recordsTotal") == 1 and v2["data"][0]["executorParam"] == "p1", (v, v2))
s, v, _ = post("jobinfo/update", dict(JOB, id=JID, scheduleType="NOPE"), cookie=ADM)
check("xxl-job-admin jobinfo/update with a bad schedule type: ReturnT 500 with the api's reason",
      s == 200 and refused(v, "NOPE"), (s, v))


def status_of():
    s, v, _ = post("jobinfo/pageList", dict(PAGE, jobDesc="xa job 2"), cookie=ADM)
    return v["data"][0]["triggerStatus"]


s, v, _ = post("jobinfo/start", {"id": JID}, cookie=ADM)
check("xxl-job-admin jobinfo/start: ReturnT 200, triggerStatus 1", ok(v) and status_of() == 1, v)
s, v, _ = post("jobinfo/stop", {"ids[]": JID}, cookie=ADM)
check("xxl-job-admin jobinfo/stop (3.x's ids[]): ReturnT 200, triggerStatus 0",
      ok(v) and status_of() == 0, v)

# trigger; the run in joblog/pageList; its log
s, v, _ = post("jobinfo/trigger", {"id": JID, "executorParam": "from-script", "addressList": ""},
               cookie=ADM)
check("xxl-job-admin jobinfo/trigger: ReturnT 200", ok(v), (s, v))
LOGQ = {"jobGroup": GID, "jobId": JID, "logStatus": -1, "filterTime": "", "start": 0,
        "length": 10}


def finished_run():
    s, v, _ = post("joblog/pageList", LOGQ, cookie=ADM)
    rows = v["data"]
    return v if rows and rows[0]["handleCode"] == 200 else None


v = wait(finished_run)
row = v["data"][0] if v else {}
check("xxl-job-admin joblog/pageList shows the run (XXL-JOB's keys), handleCode 200",
      v is not None and v.get("recordsTotal") == 1 and row.get("executorParam") == "from-script"
      and all(k in row for k in LOG_KEYS), v)
today = time.strftime("%Y-%m-%d")
s, v, _ = post("joblog/pageList", dict(LOGQ, filterTime="%s 00:00:00 - %s 23:59:59" % (today, today)),
               cookie=ADM)
s2, v2, _ = post("joblog/pageList", dict(LOGQ, filterTime="2001-01-01 00:00:00 - 2001-01-02 00:00:00"),
                 cookie=ADM)
check("xxl-job-admin joblog/pageList: filterTime today finds it, one in 2001 does not",
      v.get("recordsTotal") == 1 and v2.get("recordsTotal") == 0, (v, v2))
# past the end: the rows that exist (one here), not the start asked
s, v, _ = post("joblog/pageList", dict(LOGQ, start=100), cookie=ADM)
s2, v2, _ = post("joblog/pageList", dict(LOGQ, start=1), cookie=ADM)
s3, v3, _ = post("joblog/pageList", dict(LOGQ, start=5000), cookie=ADM)
check("xxl-job-admin joblog/pageList past the end (start 100, 1, 5000 with one run):"
      " recordsTotal the run's 1, no rows",
      all(x.get("recordsTotal") == 1 and x.get("data") == [] for x in (v, v2, v3)),
      (v, v2, v3))
s, v, _ = post("joblog/pageList", dict(LOGQ, filterTime="2001-01-01 00:00:00 - 2001-01-02 00:00:00",
                                       start=5000), cookie=ADM)
check("... and 0 when none matches (start 5000)", v.get("recordsTotal") == 0, v)
s, v, _ = post("joblog/pageList", dict(LOGQ, start=100001), cookie=ADM)
check("... past 100,000 the start asked, no rows (no probes that deep)",
      v.get("recordsTotal") == 100001 and v.get("data") == [], v)
s, v, _ = post("joblog/pageList", dict(LOGQ, filterTime="yesterday"), cookie=ADM)
check("xxl-job-admin joblog/pageList: a malformed filterTime is ReturnT 500 saying the format",
      refused(v, "yyyy-MM-dd HH:mm:ss"), (s, v))
s, v, _ = post("joblog/logDetailCat", {"logId": row.get("id", 0), "fromLineNum": 1}, cookie=ADM)
page = v.get("content") if isinstance(v, dict) else None
check("xxl-job-admin joblog/logDetailCat: LogResult {fromLineNum, toLineNum, logContent, end}",
      ok(v) and isinstance(page, dict) and page.get("fromLineNum") == 1
      and isinstance(page.get("logContent"), str) and "end" in page, (s, v))
s, v, _ = post("joblog/logKill", {"id": row.get("id", 0)}, cookie=ADM)
check("xxl-job-admin joblog/logKill of a finished run: ReturnT 500 with the reason",
      s == 200 and refused(v) and v.get("msg"), (s, v))

# nextTriggerTime
s, v, _ = post("jobinfo/nextTriggerTime", {"scheduleType": "CRON", "scheduleConf": "0 0 3 * * ?"},
               cookie=ADM)
times = v.get("content") if isinstance(v, dict) else None
check("xxl-job-admin jobinfo/nextTriggerTime: five times 'yyyy-MM-dd HH:mm:ss'",
      ok(v) and isinstance(times, list) and len(times) == 5
      and all(re.match(r"^\d{4}-\d\d-\d\d 03:00:00$", t) for t in times), (s, v))

# ... planned and shown in http/xxl_admin_timezone (ZONE), not the
# scheduler's own zone: 08:00 there each day (a process in UTC would show
# 00:00, or 08:00 of UTC's days)
s, v, _ = post("jobinfo/nextTriggerTime", {"scheduleType": "CRON", "scheduleConf": "0 0 8 * * ?"},
               cookie=ADM)
zone = ZoneInfo(ZONE or "UTC")
local_now = datetime.datetime.now(zone)
first = local_now.replace(hour=8, minute=0, second=0, microsecond=0)
if first <= local_now:
    first += datetime.timedelta(days=1)
want = [(first + datetime.timedelta(days=i)).strftime("%Y-%m-%d %H:%M:%S") for i in range(5)]
check("xxl-job-admin jobinfo/nextTriggerTime: the times of http/xxl_admin_timezone (%s)" % ZONE,
      ok(v) and v.get("content") == want, (want, v))
before = time.time()
s, v, _ = post("jobinfo/nextTriggerTime", {"scheduleType": "FIX_RATE", "scheduleConf": "3600"},
               cookie=ADM)
at = [datetime.datetime.strptime(t, "%Y-%m-%d %H:%M:%S").replace(tzinfo=zone).timestamp()
      for t in (v.get("content") or [])] if ok(v) else []
check("... FIX_RATE 3600: an hour apart from now, read as %s's wall time" % ZONE,
      len(at) == 5 and all(abs(at[i] - (before + 3600 * (i + 1))) < 120 for i in range(5)),
      (before, v))

for form in ({"scheduleType": "CRON", "scheduleConf": ""},
             {"scheduleType": "", "scheduleConf": "0 0 3 * * ?"},
             {"scheduleType": "NONE", "scheduleConf": ""},
             {"scheduleType": "FIX_DELAY", "scheduleConf": "5"}):
    s, v, _ = post("jobinfo/nextTriggerTime", form, cookie=ADM)
    check("xxl-job-admin jobinfo/nextTriggerTime of %s: ReturnT 200, no times (XXL-JOB's)"
          % urllib.parse.urlencode(form),
          s == 200 and v == {"code": 200, "msg": None, "content": [], "data": []}, (s, v))
s, v, _ = post("jobinfo/nextTriggerTime", {"scheduleType": "CRON", "scheduleConf": "0 0 3 * *"},
               cookie=ADM)
check("xxl-job-admin jobinfo/nextTriggerTime of a malformed cron: ReturnT 500 with the reason",
      s == 200 and refused(v, "cron"), (s, v))

# A viewer: pageList allowed, add refused
s, v, _, VIEW = login("xa-viewer", os.environ["XA_VIEWER_PW"])
s, v, _ = post("jobinfo/pageList", PAGE, cookie=VIEW)
check("xxl-job-admin: a viewer's jobinfo/pageList is answered", s == 200 and "data" in v, (s, v))
s, v, _ = post("jobinfo/add", JOB, cookie=VIEW)
check("xxl-job-admin: a viewer's jobinfo/add is refused (ReturnT 500: the admin role)",
      s == 200 and refused(v, "admin role"), (s, v))

# joblog/getJobsByGroup: the group's jobs as XXL-JOB lists them, to a viewer too
s, v, _ = post("joblog/getJobsByGroup", {"jobGroup": GID}, cookie=VIEW)
listed = v.get("content") if isinstance(v, dict) else None
check("xxl-job-admin joblog/getJobsByGroup: ReturnT of the group's jobs, XXL-JOB's keys but"
      " glueSource (a viewer's)",
      s == 200 and ok(v) and isinstance(listed, list) and JID in [j["id"] for j in listed]
      and all(j["jobGroup"] == GID and all(k in j for k in JOB_KEYS if k != "glueSource")
              and "glueSource" not in j for j in listed)
      and [j["id"] for j in listed] == sorted(j["id"] for j in listed)
      and v.get("data") == listed, (s, [j.get("id") for j in listed or []]))
s, v, _ = post("joblog/getJobsByGroup", {"jobGroup": 999999}, cookie=ADM)
check("xxl-job-admin joblog/getJobsByGroup of no group: ReturnT 500 'not found'",
      s == 200 and refused(v, "not found"), (s, v))

# chartInfo: REPORT's days of the range as XXL-JOB's chart lists, to a viewer too
CHART = {"startDate": "%s 00:00:00" % today, "endDate": "%s 23:59:59" % today}
s, v, _ = post("chartInfo", CHART, cookie=VIEW)
chart = v.get("content") if isinstance(v, dict) else None
LISTS = ("triggerDayList", "triggerDayCountRunningList", "triggerDayCountSucList",
         "triggerDayCountFailList")
check("xxl-job-admin chartInfo: ReturnT of XXL-JOB's chart, today's run among the successes"
      " (a viewer's)",
      s == 200 and ok(v) and isinstance(chart, dict) and chart.get("triggerDayList") == [today]
      and all(len(chart.get(k) or []) == 1 for k in LISTS)
      and chart.get("triggerCountSucTotal", 0) >= 1
      and chart["triggerCountSucTotal"] == chart["triggerDayCountSucList"][0]
      and all(isinstance(chart.get(k), int) for k in ("triggerCountRunningTotal",
                                                      "triggerCountFailTotal")), (s, v))
s, v, _ = post("chartInfo", {"startDate": "2001-01-01 00:00:00", "endDate": "2002-06-01 00:00:00"},
               cookie=ADM)
check("xxl-job-admin chartInfo over more than 366 days: ReturnT 500 with REPORT's reason",
      s == 200 and refused(v, "366"), (s, v))

# jobcode/save: a GLUE job's source and remark, a new glue version; a viewer refused
s, v, _ = post("jobinfo/add", dict(JOB, jobDesc="glue code", glueType="GLUE_SHELL",
                                   executorHandler="", glueSource="echo one",
                                   glueRemark="first"), cookie=ADM)
GLUE_ID = int(v["content"]) if ok(v) else 0
s, v, _ = post("jobcode/save", {"id": GLUE_ID, "glueSource": "echo two",
                                "glueRemark": "the second"}, cookie=VIEW)
check("xxl-job-admin: a viewer's jobcode/save is refused (ReturnT 500: the admin role)",
      s == 200 and refused(v, "admin role"), (s, v))
s, v, _ = post("jobcode/save", {"id": GLUE_ID, "glueSource": "echo two", "glueRemark": "abc"},
               cookie=ADM)
check("xxl-job-admin jobcode/save with a remark under 4 characters: ReturnT 500 (XXL-JOB's rule)",
      s == 200 and refused(v, "4 to 100"), (s, v))
s, v, _ = post("jobcode/save", {"id": GLUE_ID, "glueSource": "echo two",
                                "glueRemark": "the second"}, cookie=ADM)
s2, v2, _ = post("jobinfo/loadById", {"id": GLUE_ID}, cookie=VIEW)
name, port = H1.rsplit(":", 1)
conn = http.client.HTTPConnection(name, int(port), timeout=30)
conn.request("GET", "/api/v1/jobs/%d/glue" % GLUE_ID, headers={"Authorization": "Bearer " + ADMIN})
glues = json.loads(conn.getresponse().read()).get("glues", [])
conn.close()
job = v2.get("content") if isinstance(v2, dict) else None
check("xxl-job-admin jobcode/save: ReturnT 200, the job's source and remark, a new glue version",
      ok(v) and isinstance(job, dict) and job.get("glueSource") == "echo two"
      and job.get("glueRemark") == "the second" and len(glues) == 2
      and glues[0].get("glueRemark") == "the second", (v, v2, glues))
s, v, _ = post("jobcode/save", {"id": 999999, "glueSource": "echo", "glueRemark": "none here"},
               cookie=ADM)
check("xxl-job-admin jobcode/save of no job: ReturnT 500 'not found'", refused(v, "not found"),
      (s, v))
post("jobinfo/remove", {"id": GLUE_ID}, cookie=ADM)

# users: XXL-JOB's role 1/0 and permission (group ids) as xxl's roles and
# apps; USER_* are an admin's, so a viewer is refused a read as a write
USER = {"username": "xa-user", "password": "xa-user-pass-1", "role": 0, "permission": str(GID)}
s, v, _ = post("user/pageList", {"username": "", "role": -1}, cookie=VIEW)
s2, v2, _ = post("user/add", USER, cookie=VIEW)
check("xxl-job-admin: a viewer's user/pageList and user/add are refused (ReturnT 500: the admin role)",
      refused(v, "admin role") and refused(v2, "admin role"), (v, v2))
s, v, _ = post("user/add", dict(USER, permission=""), cookie=ADM)
check("xxl-job-admin user/add of role 0 without permission: ReturnT 500 (xxl's key would reach"
      " every app)", refused(v, "permission"), (s, v))
s, v, _ = post("user/add", USER, cookie=ADM)
s2, v2, _ = post("user/pageList", {"username": "xa-user", "role": -1, "start": 0, "length": 10},
                 cookie=ADM)
rows = v2.get("data") if isinstance(v2, dict) else None
check("xxl-job-admin user/add (role 0, permission the group): an operator of the group's app,"
      " user/pageList shows it as XXL-JOB's row",
      ok(v) and v2.get("recordsTotal") == 1 and rows[0]["username"] == "xa-user"
      and rows[0]["role"] == 0 and rows[0]["permission"] == str(GID) and rows[0]["apps"] == APP
      and rows[0]["xxlRole"] == "operator" and rows[0]["id"] is None
      and rows[0]["password"] is None, (v, v2))
s, v, _, USR = login("xa-user", "xa-user-pass-1")
s2, v2, _ = post("jobinfo/start", {"id": JID}, cookie=USR)
s3, v3, _ = post("jobinfo/stop", {"id": JID}, cookie=USR)
s4, v4, _ = post("jobinfo/add", JOB, cookie=USR)
check("... who logs in, starts and stops its group's job, and may not add one",
      ok(v) and ok(v2) and ok(v3) and refused(v4, "admin role"), (v, v2, v3, v4))
s, v, _ = post("user/updatePwd", {"oldPassword": "not-the-one", "password": "xa-user-pass-2"},
               cookie=USR)
s2, v2, _ = post("auth/updatePwd", {"oldPassword": "xa-user-pass-1",
                                    "password": "xa-user-pass-2"}, cookie=USR)
s3, v3, _, _ = login("xa-user", "xa-user-pass-2")
check("xxl-job-admin user/updatePwd: a wrong oldPassword refused; auth/updatePwd (3.3) changes"
      " it, the new one logs in", refused(v, "old password") and ok(v2) and ok(v3), (v, v2, v3))
s, v, _ = post("user/updatePwd", {"oldPassword": "x", "password": "xa-user-pass-3"}, token=ADMIN)
check("xxl-job-admin user/updatePwd with a bearer token: ReturnT 500 (a session's own password)",
      refused(v, "session"), (s, v))
# the logged-in user's own update and remove are refused, as XXL-JOB's
# (user_update_loginuser_limit); the session lives on; another user's
# update and remove (below) are done
s, v, _ = post("user/update", {"username": "xa-admin", "password": "", "role": 0,
                               "permission": str(GID)}, cookie=ADM)
s2, v2, _ = post("user/remove", {"username": "xa-admin"}, cookie=ADM)
s3, v3, _ = post("user/pageList", {"username": "xa-admin", "role": 1}, cookie=ADM)
check("xxl-job-admin user/update and user/remove of the logged-in user: ReturnT 500 saying why,"
      " the user still an admin and logged in",
      refused(v, "logged-in user") and refused(v2, "logged-in user") and s3 == 200
      and v3.get("recordsTotal") == 1 and v3["data"][0]["xxlRole"] == "admin", (v, v2, s3, v3))
s, v, _ = post("user/update", {"username": "xa-user", "password": "", "role": 1}, cookie=ADM)
s2, v2, _ = post("user/pageList", {"username": "xa-user", "role": 1}, cookie=ADM)
check("xxl-job-admin user/update to role 1: an admin (pageList role 1, permission null)",
      ok(v) and v2.get("recordsTotal") == 1 and v2["data"][0]["xxlRole"] == "admin"
      and v2["data"][0]["permission"] is None, (v, v2))
s, v, _ = post("user/remove", {"id": 3}, cookie=ADM)
s2, v2, _ = post("user/remove", {"username": "xa-user"}, cookie=ADM)
s3, v3, _ = post("user/pageList", {"username": "xa-user", "role": -1}, cookie=ADM)
check("xxl-job-admin user/remove: by id refused (no numeric ids), by username removed",
      refused(v, "username") and ok(v2) and v3.get("recordsTotal") == 0, (v, v2, v3))

# A bearer token
s, v, _ = post("jobinfo/pageList", PAGE, token=ADMIN)
check("xxl-job-admin takes Authorization: Bearer (a token's pageList)",
      s == 200 and v.get("recordsTotal") == 1, (s, v))
s, v, _ = post("jobinfo/pageList", PAGE, token="xxl_" + "0" * 64)
check("xxl-job-admin: an unknown bearer token is not logged in (302)", s == 302, (s, v))


def rest(method, path, token, body=None):
    """(status, parsed JSON) of a REST call"""
    name, port = H1.rsplit(":", 1)
    conn = http.client.HTTPConnection(name, int(port), timeout=30)
    hdrs = {"Authorization": "Bearer " + token}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        hdrs["Content-Type"] = "application/json"
    conn.request(method, path, body=data, headers=hdrs)
    resp = conn.getresponse()
    text = resp.read()
    conn.close()
    try:
        return resp.status, json.loads(text)
    except ValueError:
        return resp.status, text


# http/xxl_admin_timezone: the zone of the jobs jobinfo/add makes (XXL-JOB's
# form has none; its admin ran crons in its own zone), kept by jobinfo/update
s, job = rest("GET", "/api/v1/jobs/%d" % JID, ADMIN)
check("xxl-job-admin jobinfo/add: the job's zone is http/xxl_admin_timezone's (%s)" % ZONE,
      s == 200 and ZONE and job.get("timezone") == ZONE and job.get("jobDesc") == "xa job 2",
      (s, job))

# a token removed counts as none here (302, XXL-JOB's not logged in),
# while /api/v1 answers it 401
s, v = rest("POST", "/api/v1/tokens", ADMIN, {"name": "xa-gone", "role": "viewer", "apps": []})
GONE = v.get("token", "") if isinstance(v, dict) else ""
s1, v1, _ = post("jobinfo/pageList", PAGE, token=GONE)
rest("DELETE", "/api/v1/tokens/xa-gone", ADMIN)
s2, v2, resp = post("jobinfo/pageList", PAGE, token=GONE)
s3, v3 = rest("GET", "/api/v1/jobs", GONE)
check("xxl-job-admin: a token removed is not logged in (302 to toLogin; it was answered before),"
      " /api/v1 answers it 401",
      s == 201 and s1 == 200 and s2 == 302 and resp.getheader("Location") == P + "/toLogin"
      and s3 == 401, (s, v, s1, s2, s3))

# Malformed requests
for form, why in ((b"jobGroup=%zz", "malformed"), (b"jobDesc=a%00b", "NUL"),
                  (b"id=1&id=2", "twice"), (b"=x", "no name")):
    s, v, _ = post("jobinfo/update", raw=form, cookie=ADM)
    check("xxl-job-admin: a malformed form (%s) is ReturnT 500 '%s'" % (form.decode(), why),
          s == 200 and refused(v, why), (s, v))
s, v, _ = post("jobinfo/start", {"id": "abc"}, cookie=ADM)
check("xxl-job-admin: id=abc is ReturnT 500 'must be an integer'", refused(v, "integer"), (s, v))
s, v, _ = post("jobinfo/add", raw=b'{"jobGroup": 1}', ctype="application/json", cookie=ADM)
check("xxl-job-admin: a JSON body is refused (415, ReturnT 500: a form)",
      s == 415 and refused(v, "form"), (s, v))
def too_big(path):
    """(status, parsed body) of a POST whose Content-Length is over http/max_body
    (65536 here), its body not sent: answered before it"""
    name, port = H1.rsplit(":", 1)
    with socket.create_connection((name, int(port)), timeout=30) as sock:
        sock.sendall(("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/"
                      "x-www-form-urlencoded\r\nContent-Length: 70000\r\n\r\n"
                      % (path, H1)).encode())
        got = b""
        while True:
            part = sock.recv(65536)
            if not part:
                break
            got += part
    head, _, body = got.partition(b"\r\n\r\n")
    status = int(head.split(b" ")[1]) if head.startswith(b"HTTP/1.1 ") else 0
    try:
        return status, json.loads(body.decode("utf-8", "replace"))
    except ValueError:
        return status, body[:200]


s, v = too_big(P + "/login")
check("xxl-job-admin: a body over http/max_body is 413 with a ReturnT 500",
      s == 413 and refused(v, "limit"), (s, v))
s, v = too_big("/api/v1/jobs")
check("... and under /api/v1 413 with the REST error", s == 413 and "limit" in v.get("error", ""),
      (s, v))
s, v, r = post("jobinfo/add", method="GET", cookie=ADM)
check("xxl-job-admin: GET of a change is refused (405)", s == 405 and refused(v, "POST"), (s, v))
check("... its Allow: POST", r.getheader("Allow") == "POST", r.getheader("Allow"))
s, v, r = post("jobinfo/pageList", method="PUT", cookie=ADM)
check("... a read's Allow: GET, HEAD, POST", s == 405 and r.getheader("Allow") == "GET, HEAD, POST",
      (s, r.getheader("Allow")))
s, v, _ = post("jobinfo/nosuch", {}, cookie=ADM)
check("xxl-job-admin: an endpoint not served is 404 with a ReturnT", s == 404 and refused(v), (s, v))
s, v, _ = post("api/registry", raw=b"{}", ctype="application/json")
check("xxl-job-admin: an executor's api/registry is 404 naming xxl-bridge", s == 404
      and refused(v, "xxl-bridge"), (s, v))
s, v, _ = post("jobinfo/start", {"id": JID}, cookie=ADM, headers={"Origin": "http://evil.example"})
check("xxl-job-admin: a request from another site's page (Origin) is refused (403)",
      s == 403 and refused(v, "another site"), (s, v))
s, v, _ = post("jobinfo/stop", {"id": JID}, cookie=ADM, headers={"Sec-Fetch-Site": "cross-site"})
check("xxl-job-admin: Sec-Fetch-Site cross-site is refused (403)", s == 403, (s, v))
s, v, _ = post("jobinfo/stop", {"id": JID}, cookie=ADM,
               headers={"Origin": "http://" + H1, "Sec-Fetch-Site": "same-origin"})
check("xxl-job-admin: a same-origin request is answered", s == 200 and ok(v), (s, v))

# jobgroup save, update, remove
s, v, _ = post("jobgroup/save", {"appname": "xa-manual", "title": "Manual", "addressType": 1,
                                 "addressList": "http://10.0.0.9:9999/"}, cookie=ADM)
s2, v2, _ = post("jobgroup/pageList", {"appname": "xa-manual"}, cookie=ADM)
g = v2["data"][0] if isinstance(v2, dict) and v2.get("data") else {}
check("xxl-job-admin jobgroup/save: the group, its registryList the manual addresses",
      ok(v) and g.get("addressType") == 1 and g.get("registryList") == ["http://10.0.0.9:9999/"],
      (v, v2))
s, v, _ = post("jobgroup/update", {"id": g.get("id", 0), "appname": "xa-manual", "title": "Renamed",
                                   "addressType": 1, "addressList": "http://10.0.0.8:9999/"},
               cookie=ADM)
s2, v2, _ = post("jobgroup/loadById", {"id": g.get("id", 0)}, cookie=ADM)
check("xxl-job-admin jobgroup/update, loadById: the title changed",
      ok(v) and ok(v2) and v2["content"]["title"] == "Renamed", (v, v2))
s, v, _ = post("jobgroup/remove", {"id": GID}, cookie=ADM)
check("xxl-job-admin jobgroup/remove of a group with jobs: ReturnT 500 with the reason",
      refused(v) and v.get("msg"), v)
s, v, _ = post("jobgroup/remove", {"id": g.get("id", 0)}, cookie=ADM)
check("xxl-job-admin jobgroup/remove of an empty group: ReturnT 200", ok(v), v)

# clearLog, remove, the audit, logout
s0, v0, _ = post("joblog/pageList", LOGQ, cookie=ADM)
s, v, _ = post("joblog/clearLog", {"jobGroup": GID, "jobId": 0, "type": 5}, cookie=ADM)
s2, v2, _ = post("joblog/pageList", LOGQ, cookie=ADM)
check("xxl-job-admin joblog/clearLog of a group, type 5 (keep the last 1000): ReturnT 200,"
      " the job's runs stay",
      ok(v) and v0.get("recordsTotal", 0) > 0
      and v2.get("recordsTotal") == v0.get("recordsTotal"), (v0, v, v2))
s, v, _ = post("joblog/clearLog", {"jobGroup": GID, "jobId": 0, "type": 9}, cookie=ADM)
s2, v2, _ = post("joblog/pageList", LOGQ, cookie=ADM)
check("xxl-job-admin joblog/clearLog of a group (jobId 0), type 9: its jobs' runs are gone",
      ok(v) and v2.get("recordsTotal") == 0, (v, v2))
s, v, _ = post("jobinfo/remove", {"id": JID}, cookie=ADM)
s2, v2, _ = post("jobinfo/pageList", PAGE, cookie=ADM)
check("xxl-job-admin jobinfo/remove: ReturnT 200, pageList no longer finds it",
      ok(v) and v2.get("recordsTotal") == 0, (v, v2))
name, port = H1.rsplit(":", 1)
conn = http.client.HTTPConnection(name, int(port), timeout=30)
conn.request("GET", "/api/v1/audit?limit=200", headers={"Authorization": "Bearer " + ADMIN})
audit = json.loads(conn.getresponse().read())
conn.close()
mine = {(e.get("type"), e.get("code")) for e in audit.get("audit", [])
        if e.get("who") == "user:xa-admin"}
check("xxl-job-admin's changes are in the audit log (JOB_ADD, JOB_UPDATE, JOB_RM by user:xa-admin)",
      {("JOB_ADD", 200), ("JOB_UPDATE", 200), ("JOB_RM", 200), ("JOB_UPDATE", 400)} <= mine,
      sorted(mine))
# Lists over the scheduler's 4 MiB reply (docs/protocol.md, Large replies):
# every row asked for comes, in order (the scheduler is asked again from
# nextOffset), never fewer rows than recordsTotal says.  Jobs and runs
# made through the ZeroMQ api (xxl-ctl: no max_body there)
def ctl(*args, stdin=None):
    got = subprocess.run([os.environ["CTL"], "--api", os.environ["API"], "--json"] + list(args),
                         input=stdin, capture_output=True, check=True)
    return json.loads(got.stdout) if got.stdout.strip() else None


with tempfile.NamedTemporaryFile("w", suffix=".sh") as glue:
    glue.write("#!/bin/sh\n# " + "g" * 900000 + "\necho big\n")
    glue.flush()
    BIG = [ctl("job", "add", "--group", APP, "--desc", "xa big %d" % i, "--glue-type",
               "GLUE_SHELL", "--glue-source", glue.name, "--cron", "0 0 3 * * ?")["id"]
           for i in range(6)]
s, v, _ = post("jobinfo/pageList", dict(PAGE, jobDesc="xa big", length=100), token=ADMIN)
check("xxl-job-admin jobinfo/pageList of 6 jobs of 900 KB GLUE each (over one 4 MiB reply):"
      " all 6, whole, recordsTotal 6",
      s == 200 and v.get("recordsTotal") == 6
      and [j.get("id") for j in v.get("data", [])] == BIG
      and all(len(j.get("glueSource") or "") > 900000 for j in v["data"]),
      (s, {k: v[k] for k in v if k != "data"} if isinstance(v, dict) else v,
       [j.get("id") for j in v.get("data", [])] if isinstance(v, dict) else None))
s, v, _ = post("joblog/getJobsByGroup", {"jobGroup": GID}, token=ADMIN)
jobs = v.get("content") if isinstance(v, dict) else None
check("xxl-job-admin joblog/getJobsByGroup: the group's jobs, those 6 among them, without"
      " glueSource (XXL-JOB's list)",
      ok(v) and isinstance(jobs, list) and set(BIG) <= {j.get("id") for j in jobs}
      and all("glueSource" not in j for j in jobs) and all("jobDesc" in j for j in jobs),
      (s, v if not isinstance(jobs, list) else [sorted(j) for j in jobs[:1]]))
with tempfile.NamedTemporaryFile("w") as param:
    param.write("p" * 60000)
    param.flush()
    PJ = ctl("job", "add", "--group", APP, "--desc", "xa param", "--handler", "demoJobHandler",
             "--param-file", param.name, "--cron", "0 0 3 * * ?")["id"]
RUNS = [ctl("job", "trigger", str(PJ))["logIds"][0] for _ in range(72)]
s, v, _ = post("joblog/pageList", dict(LOGQ, jobId=PJ, length=100), token=ADMIN)
check("xxl-job-admin joblog/pageList of 72 runs of a 60 KB param (over one 4 MiB reply):"
      " all 72, newest first, recordsTotal 72",
      s == 200 and v.get("recordsTotal") == 72
      and [r.get("id") for r in v.get("data", [])] == sorted(RUNS, reverse=True)
      and all(len(r.get("executorParam") or "") == 60000 for r in v["data"]),
      (s, {k: v[k] for k in v if k != "data"} if isinstance(v, dict) else v,
       len(v.get("data", [])) if isinstance(v, dict) else None))
s, v, _ = post("joblog/pageList", dict(LOGQ, jobId=PJ, length=30, start=50), token=ADMIN)
check("... a page of 30 from 50: the 22 oldest, recordsTotal 72",
      s == 200 and v.get("recordsTotal") == 72
      and [r.get("id") for r in v.get("data", [])] == sorted(RUNS, reverse=True)[50:],
      (s, {k: v[k] for k in v if k != "data"} if isinstance(v, dict) else v))
for job in BIG + [PJ]:
    ctl("job", "rm", str(job), "--force")

# a bad bearer token beside a good cookie: 302 (the token is judged), but
# the cookie is not cleared (its session was not the one refused)
s, v, setc, SECOND = login("xa-admin", os.environ["XA_ADMIN_PW"])
s, v, resp = post("jobinfo/pageList", PAGE, cookie=SECOND, token="xxl_" + "0" * 64)
s2, v2, _ = post("jobinfo/pageList", PAGE, cookie=SECOND)
check("xxl-job-admin: a bad bearer token beside a good cookie: 302, the cookie not cleared,"
      " it still works", s == 302 and not resp.getheader("Set-Cookie") and s2 == 200,
      (s, resp.getheader("Set-Cookie"), s2))

# a logout sent with a bearer token beside the cookie ends the cookie's
# session all the same (the cookie is cleared: it must not live on)
s, v, setc, SECOND = login("xa-admin", os.environ["XA_ADMIN_PW"])
s, v, resp = post("logout", cookie=SECOND, token=ADMIN)
s2, v2, _ = post("jobinfo/pageList", PAGE, cookie=SECOND)
s3, v3, _ = post("jobinfo/pageList", PAGE, token=ADMIN)
check("xxl-job-admin logout with a bearer token beside the cookie: ReturnT 200, the cookie's"
      " session ended (then 302), the token still works",
      ok(v) and "Max-Age=0" in (resp.getheader("Set-Cookie") or "") and s2 == 302
      and s3 == 200 and "recordsTotal" in v3, (v, resp.getheader("Set-Cookie"), s2, s3))
s, v, resp = post("logout", cookie=ADM)
s2, v2, _ = post("jobinfo/pageList", PAGE, cookie=ADM)
check("xxl-job-admin logout: ReturnT 200, the cookie cleared, the session ended (then 302)",
      ok(v) and "Max-Age=0" in (resp.getheader("Set-Cookie") or "") and s2 == 302,
      (v, resp.getheader("Set-Cookie"), s2))

print("done")
sys.exit(0)
