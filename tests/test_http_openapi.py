#!/usr/bin/env python3
"""test_http_openapi.py -- XXL-JOB 3.5's job OpenAPI under /xxl-job-admin
(POST api/addJob, updateJob, removeJob, startJob, stopJob, triggerJob;
docs/migrating.md, "Scripts that call the admin") against the scheduler
tests/test_http.sh started (it exports HTTP1, ADMIN_TOKEN, VIEWER_TOKEN,
OPERATOR_TOKEN (an operator of http-app), XA_APP: a group with an agent
running demoJobHandler; XA3_USER and XA3_PW: an admin user for 3.x's
login paths auth/doLogin, auth/login, auth/logout, checked last).  A script's steps end to end, each refusal beside
the same call accepted.  Prints one line per check, then "done".  Waits
poll; no fixed sleeps."""

import http.client
import json
import os
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xxl_tap import check  # noqa: E402

H1 = os.environ["HTTP1"]
ADMIN = os.environ["ADMIN_TOKEN"]
VIEWER = os.environ["VIEWER_TOKEN"]
OPERATOR = os.environ["OPERATOR_TOKEN"]
APP = os.environ["XA_APP"]
ZONE = os.environ.get("XA_ZONE", "")      # http/xxl_admin_timezone
P = "/xxl-job-admin/api/"


def request(method, path, data, hdrs, ctype="application/json", source=None):
    """(status, parsed JSON or text, Set-Cookie) of one request to HTTP1"""
    name, port = H1.rsplit(":", 1)
    conn = http.client.HTTPConnection(name, int(port), timeout=30,
                                      source_address=(source, 0) if source else None)
    if data is not None:
        hdrs["Content-Type"] = ctype
    conn.request(method, path, body=data, headers=hdrs)
    resp = conn.getresponse()
    text = resp.read().decode("utf-8", "replace")
    conn.close()
    try:
        value = json.loads(text)
    except ValueError:
        value = text
    return resp.status, value, resp.getheader("Set-Cookie") or ""


def call(uri, body=None, token=ADMIN, app=APP, method="POST", raw=None, headers=None):
    """An OpenAPI call as XXL-JOB's AdminJobBizTest makes it: a JSON body,
    the two headers"""
    hdrs = dict(headers or {})
    if token is not None:
        hdrs["XXL-JOB-ACCESS-TOKEN"] = token
    if app is not None:
        hdrs["XXL-JOB-APPNAME"] = app
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    return request(method, P + uri, data, hdrs)[:2]


def rest(method, path, body=None, token=ADMIN):
    data = json.dumps(body).encode() if body is not None else None
    return request(method, "/api/v1/" + path, data, {"Authorization": "Bearer " + token})[:2]


def ok(v):
    return isinstance(v, dict) and v.get("code") == 200


def refused(v, text=""):
    return isinstance(v, dict) and v.get("code") == 500 and text in (v.get("msg") or "")


def wait(fn, seconds=20):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        got = fn()
        if got:
            return got
        time.sleep(0.05)
    return None


s, groups = rest("GET", "groups")
GROUP = [g["id"] for g in groups["groups"] if g["appname"] == APP][0]
s, other = rest("POST", "groups", {"appname": "openapi-other", "title": "OpenAPI other"})
check("a second group for the appname checks (201 or 200)", s in (200, 201), (s, other))

ADD = {"jobGroup": GROUP, "name": "openapi job", "author": "admin", "alarmEmail": "",
       "scheduleType": "CRON", "scheduleConf": "0 0 3 * * ?", "misfireStrategy": "DO_NOTHING",
       "executorRouteStrategy": "FIRST", "executorHandler": "demoJobHandler",
       "executorParam": "p0", "executorBlockStrategy": "SERIAL_EXECUTION",
       "executorTimeout": 0, "executorFailRetryCount": 1, "glueType": "BEAN",
       "glueSource": "", "glueRemark": ""}

# The headers: both needed, the token an xxl token, the appname a group of it
s, v = call("addJob", ADD, token=None)
check("addJob without XXL-JOB-ACCESS-TOKEN: HTTP 200, ReturnT 500, XXL-JOB's text to the letter",
      s == 200 and refused(v) and v["msg"] == "invalid request, accessToken or appname is empty.",
      (s, v))
s, v = call("addJob", ADD, app=None)
check("... without XXL-JOB-APPNAME: the same", s == 200 and refused(v, "is empty"), (s, v))
s, v = call("addJob", ADD, token=None, headers={"Authorization": "Bearer " + ADMIN})
check("... an Authorization: Bearer instead of the header: the same (only the header counts)",
      s == 200 and refused(v, "is empty"), (s, v))
s, v = call("addJob", ADD, token="xxl_" + "0" * 64)
check("... a token that is no xxl token: 'accessToken or appname invalid.'",
      s == 200 and refused(v, "invalid request, accessToken or appname invalid."), (s, v))
s, v = call("addJob", ADD, app="no-such-app")
check("... an appname that is no group: the same", s == 200 and refused(v, "invalid."), (s, v))
s, v = call("triggerJob", {"id": 1}, token=OPERATOR, app="openapi-other")
check("... an appname not among the token's apps (an operator of %s): the same" % APP,
      s == 200 and refused(v, "invalid."), (s, v))
s, v = call("addJob", ADD, method="GET")
check("a GET: 405, ReturnT 500, XXL-JOB's text to the letter",
      s == 405 and refused(v) and v["msg"] == "invalid request, HttpMethod not support.", (s, v))
conn = http.client.HTTPConnection(H1.rsplit(":", 1)[0], int(H1.rsplit(":", 1)[1]), timeout=30)
conn.request("GET", P + "addJob")
resp = conn.getresponse()
resp.read()
conn.close()
check("... its Allow: POST", resp.status == 405 and resp.getheader("Allow") == "POST",
      (resp.status, resp.getheader("Allow")))
s, v = call("addJob", None)
check("no body: 'invalid request, requestBody empty.'",
      s == 200 and refused(v, "requestBody empty"), (s, v))
s, v = call("addJob", raw=b"jobGroup=1")
check("a body that is not JSON: refused saying so", s == 200 and refused(v, "not JSON"), (s, v))
s, v = call("addJob", dict(ADD, executorTimeout=1.5))
check("a field of another type: refused naming it",
      s == 200 and refused(v, "executorTimeout must be a string or an integer"), (s, v))
s, v = call("registry", {"registryGroup": "EXECUTOR"})
check("api/registry stays an executor's call: 404 naming xxl-bridge",
      s == 404 and refused(v, "xxl-bridge"), (s, v))

# addJob: its id as text in content and data; the job as sent
s, v = call("addJob", ADD)
check("addJob with an admin token: ReturnT 200, the new id as text in content and data",
      s == 200 and ok(v) and isinstance(v.get("content"), str) and v["content"] == v["data"]
      and v["content"].isdigit(), (s, v))
JOB = int(v["content"]) if ok(v) else 0
s, job = rest("GET", "jobs/%d" % JOB)
check("... the job is as sent: name as jobDesc, schedule, route, handler, param, retry, stopped;"
      " its zone http/xxl_admin_timezone's",
      s == 200 and job.get("jobDesc") == "openapi job" and job.get("scheduleConf") == "0 0 3 * * ?"
      and ZONE and job.get("timezone") == ZONE
      and job.get("executorHandler") == "demoJobHandler" and job.get("executorParam") == "p0"
      and job.get("executorFailRetryCount") == 1 and job.get("author") == "admin"
      and job.get("jobGroup") == GROUP and job.get("triggerStatus") == 0, (s, job))
s, v = call("addJob", dict(ADD, scheduleConf="not a cron"))
check("addJob with a bad cron: ReturnT 500 with the api's reason",
      s == 200 and refused(v) and "cron" in v["msg"].lower(), (s, v))
s, v = call("addJob", ADD, token=OPERATOR)
check("addJob with an operator's token: refused, it needs the admin role",
      s == 200 and refused(v, "admin role"), (s, v))

# updateJob: the fields change, the glue stays (as XXL-JOB's update)
s, v = call("updateJob", {"id": JOB, "name": "openapi job 2", "author": "ops",
                          "scheduleType": "FIX_RATE", "scheduleConf": "60",
                          "executorParam": "p1", "glueType": "GLUE_SHELL",
                          "glueSource": "echo no"})
s2, job = rest("GET", "jobs/%d" % JOB)
check("updateJob: ReturnT 200; name, author, schedule and param changed, glue kept BEAN",
      s == 200 and ok(v) and job.get("jobDesc") == "openapi job 2" and job.get("author") == "ops"
      and job.get("scheduleType") == "FIX_RATE" and job.get("scheduleConf") == "60"
      and job.get("executorParam") == "p1" and job.get("glueType") == "BEAN", (s, v, job))
s, v = call("updateJob", {"id": JOB, "jobDesc": "openapi job 3", "name": "openapi job 4"})
s2, job2 = rest("GET", "jobs/%d" % JOB)
check("updateJob with jobDesc and name that differ: ReturnT 500 naming both, the job unchanged",
      s == 200 and refused(v, "jobDesc and name differ") and job2.get("jobDesc") == "openapi job 2",
      (s, v, job2))
s, v = call("updateJob", {"id": 999999, "name": "x"})
check("updateJob of a job that does not exist: ReturnT 500 'not found'",
      s == 200 and refused(v, "not found"), (s, v))

# startJob, stopJob
s, v = call("startJob", {"id": JOB})
s2, job = rest("GET", "jobs/%d" % JOB)
check("startJob: ReturnT 200, the job runs on its schedule (triggerStatus 1)",
      ok(v) and job.get("triggerStatus") == 1, (v, job))
s, v = call("stopJob", {"id": JOB})
s2, job = rest("GET", "jobs/%d" % JOB)
check("stopJob: ReturnT 200, triggerStatus 0", ok(v) and job.get("triggerStatus") == 0, (v, job))
s, v = call("startJob", {"id": JOB}, token=VIEWER)
check("startJob with a viewer's token: refused", refused(v), v)

# triggerJob: one run with the param given; an operator of the app may
s, v = call("triggerJob", {"id": JOB, "executorParam": "from-openapi", "addressList": ""},
            token=OPERATOR)
check("triggerJob with the app's operator token: ReturnT 200", s == 200 and ok(v), (s, v))


def finished():
    s, logs = rest("GET", "logs?jobId=%d" % JOB)
    rows = logs.get("logs", []) if isinstance(logs, dict) else []
    return rows if rows and all(r.get("handleCode") for r in rows) else None


rows = wait(finished)
check("... its run: param from-openapi, trigger type MANUAL (as XXL-JOB's), handled 200,"
      " triggerMsg naming the token",
      rows is not None and len(rows) == 1 and rows[0].get("executorParam") == "from-openapi"
      and rows[0].get("triggerType") == "MANUAL" and rows[0].get("handleCode") == 200
      and "Triggered by: key 'token:ci-op' (operator)" in (rows[0].get("triggerMsg") or ""),
      rows)
s, v = call("triggerJob", {"id": JOB}, token=VIEWER)
check("triggerJob with a viewer's token: refused, no run", refused(v)
      and len(rest("GET", "logs?jobId=%d" % JOB)[1].get("logs", [])) == 1, v)

# Audited as the token's changes
s, audit = rest("GET", "audit?limit=50")
mine = [a for a in audit.get("audit", []) if a.get("target") == JOB
        or str(a.get("target")) == str(JOB)]
check("the changes are audited as the tokens' (token:ci-admin JOB_ADD, JOB_UPDATE;"
      " token:ci-viewer's refused JOB_START 403)",
      any(a.get("who") == "token:ci-admin" and a.get("type") == "JOB_ADD"
          and a.get("code") == 200 for a in mine)
      and any(a.get("who") == "token:ci-admin" and a.get("type") == "JOB_UPDATE" for a in mine)
      and any(a.get("who") == "token:ci-viewer" and a.get("type") == "JOB_START"
              and a.get("code") == 403 for a in mine), mine)

# removeJob
s, v = call("removeJob", {"id": JOB}, token=OPERATOR)
check("removeJob with an operator's token: refused, the job stays",
      refused(v) and rest("GET", "jobs/%d" % JOB)[0] == 200, v)
s, v = call("removeJob", {"id": JOB})
check("removeJob: ReturnT 200, the job is gone (404)",
      ok(v) and rest("GET", "jobs/%d" % JOB)[0] == 404, v)
s, v = call("removeJob", {"id": JOB})
check("removeJob again: ReturnT 500 'not found' (XXL-JOB answers success)",
      s == 200 and refused(v, "not found"), (s, v))
s, v = call("pageList", {})
check("an uri XXL-JOB's OpenAPI does not have: 404",
      s == 404 and refused(v), (s, v))

# XXL-JOB 3.x's login paths (xxl-sso's): auth/doLogin, auth/login, auth/logout
def form(path, fields=None, cookie=None, method="POST"):
    """(status, parsed JSON, Set-Cookie) of a console form call (from an
    address of its own: the login limiter's counts)"""
    data = "&".join("%s=%s" % kv for kv in fields.items()).encode() if fields is not None else None
    return request(method, "/xxl-job-admin/" + path, data, {"Cookie": cookie} if cookie else {},
                   ctype="application/x-www-form-urlencoded", source="127.0.0.41")


USER, PW = os.environ["XA3_USER"], os.environ["XA3_PW"]
s, v, c = form("auth/doLogin", {"userName": USER, "password": "wrong-" + PW})
check("3.x auth/doLogin with a wrong password: ReturnT 500, no cookie",
      s == 200 and refused(v, "wrong user name or password") and "=;" not in c
      and "XXL_JOB_LOGIN_IDENTITY=" not in c, (s, v, c))
s, v, c = form("auth/doLogin", {"userName": USER, "password": PW})
sid = c.split(";")[0] if c.startswith("XXL_JOB_LOGIN_IDENTITY=") else None
check("3.x auth/doLogin with the right one: ReturnT 200 and the session cookie",
      s == 200 and ok(v) and sid is not None and "HttpOnly" in c, (s, v, c))
s, v, _ = form("jobinfo/pageList", {"jobGroup": "-1", "triggerStatus": "-1", "offset": "0",
                                    "pagesize": "10"}, cookie=sid)
check("... the session reads: jobinfo/pageList (3.x paging) ReturnT 200",
      s == 200 and ok(v) and "total" in (v.get("data") or {}), (s, v))
# 3.5's names: a group's title and a job's jobDesc are its name
s, v, _ = form("jobgroup/insert", {"appname": "openapi-named", "name": "Named+group"}, cookie=sid)
s2, v2, _ = form("jobgroup/pageList", {"name": "Named+group", "offset": "0", "pagesize": "10"}, cookie=sid)
rows = ((v2.get("data") or {}).get("data") or []) if isinstance(v2, dict) else []
check("3.5's jobgroup/insert with name: ReturnT 200; pageList by name finds it, name and title"
      " 'Named group'",
      ok(v) and len(rows) == 1 and rows[0].get("appname") == "openapi-named"
      and rows[0].get("name") == "Named group" and rows[0].get("title") == "Named group", (v, v2))
s, v, _ = form("jobinfo/pageList", {"jobGroup": str(GROUP), "offset": "0", "pagesize": "100"},
               cookie=sid)
jobs = ((v.get("data") or {}).get("data") or []) if isinstance(v, dict) else []
check("... a job's row carries 3.5's name (its jobDesc)",
      ok(v) and jobs and all(j.get("name") == j.get("jobDesc") for j in jobs), v)
s, v, _ = form("auth/login", method="GET", cookie=sid)
check("3.x auth/login (its login page) with the session: ReturnT 200", s == 200 and ok(v), (s, v))
s, v, c = form("auth/logout", {}, cookie=sid)
check("3.x auth/logout: ReturnT 200, the cookie cleared",
      s == 200 and ok(v) and "Max-Age=0" in c, (s, v, c))
s, v, _ = form("jobinfo/pageList", {"jobGroup": "-1"}, cookie=sid)
check("... the session ended: 302, ReturnT 500 'not logged in'",
      s == 302 and refused(v, "not logged in"), (s, v))
s, v, _ = form("auth/login", method="GET")
check("3.x auth/login without a session: ReturnT 500 'not logged in'",
      s == 200 and refused(v, "not logged in"), (s, v))
print("done")
