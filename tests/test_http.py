#!/usr/bin/env python3
"""test_http.py -- the REST api, sessions, errors, console files, metrics,
security headers and wrong-password limits of a running scheduler (started by tests/test_http.sh, which exports HTTP1,
HTTP2, ADMIN_TOKEN, VIEWER_TOKEN, OPERATOR_TOKEN and T).  Prints one line per
check ("ok - ..." / "FAIL - ..."), then "done".  Waits poll; no fixed sleeps."""

import concurrent.futures
import http.client
import json
import os
import re
import socket
import sys
import time

sys.dont_write_bytecode = True     # (no __pycache__ in the source tree)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xxl_tap import check, closed, exchange  # noqa: E402

from prometheus_client.parser import text_string_to_metric_families

H1 = os.environ["HTTP1"]
H2 = os.environ["HTTP2"]
ADMIN = os.environ["ADMIN_TOKEN"]
VIEWER = os.environ["VIEWER_TOKEN"]
OPERATOR = os.environ["OPERATOR_TOKEN"]


def req(method, path, body=None, token=None, cookie=None, csrf=None, host=H1, raw=None,
        ctype="application/json", headers=None, source=None):
    """(status, parsed JSON or text, response headers); source: the client's
    address (another loopback address than 127.0.0.1, for the login limits)"""
    host_name, port = host.rsplit(":", 1)
    conn = http.client.HTTPConnection(host_name, int(port), timeout=30,
                                      source_address=(source, 0) if source else None)
    hdrs = dict(headers or {})
    if token:
        hdrs["Authorization"] = "Bearer " + token
    if cookie:
        hdrs["Cookie"] = "xxl_session=" + cookie
    if csrf:
        hdrs["X-CSRF-Token"] = csrf
    data = raw
    if body is not None:
        data = json.dumps(body).encode()
    if data is not None and ctype:
        hdrs["Content-Type"] = ctype
    conn.request(method, path, body=data, headers=hdrs)
    resp = conn.getresponse()
    text = resp.read().decode("utf-8", "replace")
    conn.close()
    try:
        value = json.loads(text)
    except ValueError:
        value = text
    return resp.status, value, resp


def api(method, path, body=None, token=ADMIN, **kw):
    return req(method, "/api/v1/" + path, body, token=token, **kw)


def api_patient(method, path, body=None, token=ADMIN, seconds=10, **kw):
    """api() that tries again while the server closes the connection at once:
    a scheduler with a small http/per_address closes a new connection while
    the address's earlier ones, closed by this client, are not yet closed on
    its side (a loaded machine)"""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return api(method, path, body, token=token, **kw)
        except (ConnectionResetError, BrokenPipeError, http.client.RemoteDisconnected):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def wait(what, fn, seconds=20):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if fn():
                return True
        except Exception:
            pass
        time.sleep(0.05)
    return False


def metrics(host=H1):
    status, text, resp = req("GET", "/metrics", host=host)
    assert status == 200
    assert resp.getheader("Content-Type").startswith("text/plain; version=0.0.4")
    out = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            key = (sample.name, tuple(sorted(sample.labels.items())))
            out[key] = sample.value
    return out


def sample(m, name, **labels):
    return m.get((name, tuple(sorted(labels.items()))), 0)


# --- health, readiness, credentials -------------------------------------
s, v, _ = req("GET", "/healthz")
check("/healthz answers 200 ok", s == 200 and v.strip() == "ok", (s, v))
check("/readyz answers 200 once past the warm-up",
      wait("ready", lambda: req("GET", "/readyz")[0] == 200))
s, v, r = req("POST", "/healthz", raw=b"")
check("/healthz refuses POST (405)", s == 405 and "error" in v, (s, v))
check("the 405 names what /healthz takes (Allow)", r.getheader("Allow") == "GET, HEAD",
      r.getheader("Allow"))
s, v, _ = api("GET", "groups", token=None)
check("no credentials: 401 with {error}", s == 401 and "error" in v, (s, v))
s, v, _ = api("GET", "groups", token="xxl_" + "0" * 64)
check("an unknown bearer token: 401", s == 401, (s, v))
s, v, _ = api("GET", "ping")
check("GET ping with the admin token", s == 200 and isinstance(v, dict), (s, v))

# --- groups -------------------------------------------------------------
s, v, _ = api("POST", "groups", {"appname": "http-app", "title": "HTTP app"})
check("POST groups: 201 {id}", s == 201 and v.get("id", 0) > 0, (s, v))
GID = v.get("id")
s, v, _ = api("POST", "groups", {"appname": "other-app"})
check("POST groups (a second app)", s == 201, (s, v))
OTHER_GID = v.get("id")
s, v, _ = api("POST", "groups", {"appname": "http-app"})
check("POST groups of a taken app name: 409", s == 409 and "error" in v, (s, v))
s, v, _ = api("POST", "groups", {"appname": "tricky", "t": "GROUP_RM", "id": 1, "v": 9})
check("a body's t, id and v do not reach the envelope", s == 201 and
      api("GET", "groups/tricky")[0] == 200, (s, v))
api("DELETE", "groups/tricky")
s, v, _ = api("GET", "groups")
check("GET groups lists both", s == 200 and {g["appname"] for g in v["groups"]} >= {"http-app", "other-app"}, (s, v))
s, v, _ = api("GET", "groups/http-app")
check("GET groups/{app name}", s == 200 and v.get("appname") == "http-app" and "registryList" in v, (s, v))
s, v, _ = api("GET", "groups/%d" % GID)
check("GET groups/{id}", s == 200 and v.get("id") == GID, (s, v))
s, v, _ = api("PUT", "groups/%d" % GID, {"title": "renamed"})
check("PUT groups/{id}", s == 200 and v.get("id") == GID, (s, v))
s, v, _ = api("GET", "groups/no-such-app")
check("GET an unknown group: 404", s == 404 and "error" in v, (s, v))

# --- jobs ---------------------------------------------------------------
s, v, _ = api("POST", "jobs", {"jobGroup": GID, "executorHandler": "demoJobHandler",
                               "jobDesc": "rest job", "author": "ci", "executorParam": "p"})
check("POST jobs (jobGroup as an id number): 201 {id}", s == 201 and v.get("id", 0) > 0, (s, v))
JOB = v.get("id")
s, v, _ = api("POST", "jobs", {"jobGroup": "other-app", "executorHandler": "demoJobHandler",
                               "jobDesc": "other"})
OTHER_JOB = v.get("id")
check("POST jobs (jobGroup as an app name)", s == 201, (s, v))
s, v, _ = api("POST", "jobs", {"jobGroup": GID, "scheduleType": "CRON",
                               "scheduleConf": "0 0 3 * * ?", "executorHandler": "demoJobHandler"})
CRON_JOB = v.get("id")
check("POST jobs with a cron schedule", s == 201, (s, v))
s, v, _ = api("POST", "jobs", {"jobGroup": GID, "executorHandler": "x", "scheduleType": "NOPE"})
check("POST jobs with a bad field: 400 with the api's text", s == 400 and "schedule type" in v["error"], (s, v))
s, v, _ = api("GET", "jobs?group=http-app&limit=2&offset=0&unknownKey=1")
check("GET jobs with paging (unknown query keys ignored)",
      s == 200 and len(v["jobs"]) == 2 and v["total"] == 2 and v["truncated"] is False, (s, v))
s, v, _ = api("GET", "jobs?jobDesc=rest")
check("GET jobs filtered by jobDesc", s == 200 and [j["id"] for j in v["jobs"]] == [JOB], (s, v))
s, v, _ = api("GET", "jobs?limit=abc")
check("a bad query integer: 400", s == 400 and "limit" in v["error"], (s, v))
s, v, _ = api("GET", "jobs?limit=0")
check("an out-of-range query integer: 400 with the api's text", s == 400 and "limit" in v["error"], (s, v))
s, v, _ = api("GET", "jobs/%d" % JOB)
check("GET jobs/{id}", s == 200 and v.get("id") == JOB and v.get("executorHandler") == "demoJobHandler", (s, v))
s, v, _ = api("GET", "jobs/999999")
check("GET an unknown job: 404", s == 404, (s, v))
s, v, _ = api("GET", "jobs/abc")
check("GET jobs/abc: 400", s == 400, (s, v))
s, v, _ = api("PUT", "jobs/%d" % JOB, {"jobDesc": "rest job 2"})
check("PUT jobs/{id}", s == 200 and v.get("id") == JOB, (s, v))
check("the change shows", api("GET", "jobs/%d" % JOB)[1].get("jobDesc") == "rest job 2")
s, v, _ = api("POST", "jobs/%d/copy" % JOB, {"jobDesc": "copy"})
check("POST jobs/{id}/copy: 201 {id}", s == 201 and v.get("id", 0) > JOB, (s, v))
COPY = v.get("id")
s, v, _ = api("POST", "jobs/%d/start" % CRON_JOB)
check("POST jobs/{id}/start", s == 200 and v.get("id") == CRON_JOB, (s, v))
s, v, _ = api("POST", "jobs/%d/stop" % CRON_JOB)
check("POST jobs/{id}/stop", s == 200, (s, v))
s, v, _ = api("GET", "jobs/%d/next?count=3" % CRON_JOB)
check("GET jobs/{id}/next?count=3", s == 200 and len(v.get("next", [])) == 3, (s, v))
s, v, _ = api("DELETE", "jobs/%d" % COPY)
check("DELETE jobs/{id}: {id, deletedLogs}", s == 200 and v.get("id") == COPY and "deletedLogs" in v, (s, v))

# --- a run, its log, metrics that move ----------------------------------
before = metrics()
s, v, _ = api("POST", "jobs/%d/trigger" % JOB, {"executorParam": "from rest"})
check("POST jobs/{id}/trigger: {logIds}", s == 200 and len(v.get("logIds", [])) == 1, (s, v))
LOG = v["logIds"][0]
check("the run finishes 200",
      wait("run", lambda: api("GET", "logs/%d" % LOG)[1].get("handleCode") == 200))
s, v, _ = api("GET", "logs/%d" % LOG)
check("GET logs/{id}: the log object", s == 200 and v.get("jobId") == JOB and v.get("executorParam") == "from rest", (s, v))
s, v, _ = api("GET", "logs?jobId=%d&logStatus=1&limit=10" % JOB)
check("GET logs filtered by job and status", s == 200 and [l["id"] for l in v["logs"]] == [LOG], (s, v))
s, v, _ = api("GET", "logs?triggerTimeFrom=1&triggerTimeTo=2")
check("GET logs filtered by time (none then)", s == 200 and v["logs"] == [], (s, v))
s, v, _ = api("GET", "logs/%d/cat?from=1" % LOG)
check("GET logs/{id}/cat?from=1", s == 200 and "logContent" in v and v.get("fromLineNum") == 1, (s, v))
# a bad from is refused naming from, the query's key (not the api's fromLineNum)
for bad in ("abc", "0", "-3", "99999999999"):
    s, v, _ = api("GET", "logs/%d/cat?from=%s" % (LOG, bad))
    check("GET logs/{id}/cat?from=%s: 400 naming from" % bad,
          s == 400 and v.get("error", "").startswith("query from: ")
          and "fromLineNum" not in v["error"].split("(")[0], (s, v))
s, v, _ = api("POST", "logs/%d/kill" % LOG)
check("POST logs/{id}/kill of a finished run: the api's 409", s == 409 and "not running" in v["error"], (s, v))
check("/metrics: runs by code 200 moved",
      wait("runs", lambda: sample(metrics(), "xxl_runs_total", code="200") >= sample(before, "xxl_runs_total", code="200") + 1))
after = metrics()
check("/metrics: MANUAL triggers moved",
      sample(after, "xxl_triggers_total", type="MANUAL") >= sample(before, "xxl_triggers_total", type="MANUAL") + 1)
check("/metrics: the trigger-to-start histogram counted the run (xxl-agent's startTime)",
      sample(after, "xxl_trigger_start_seconds_count") >= sample(before, "xxl_trigger_start_seconds_count") + 1)
check("/metrics: so did the trigger-to-accept one",
      sample(after, "xxl_trigger_accept_seconds_count") >= sample(before, "xxl_trigger_accept_seconds_count") + 1)
check("/metrics: trigger-to-start is a histogram with +Inf",
      sample(after, "xxl_trigger_start_seconds_bucket", le="+Inf") == sample(after, "xxl_trigger_start_seconds_count"))
check("/metrics: commit times are a histogram with +Inf",
      sample(after, "xxl_store_commit_seconds_bucket", le="+Inf") == sample(after, "xxl_store_commit_seconds_count") > 0)
check("/metrics: one agent connected", sample(after, "xxl_agents_connected") == 1)
check("/metrics: the queues' depths", ("xxl_queue_depth", (("queue", "pool_fast"),)) in after)
check("/metrics: fire lateness present", ("xxl_fire_lateness_seconds_count", ()) in after)
if os.environ.get("XXL_STORE") != "pg":
    check("/metrics: the WAL's size (SQLite)", sample(after, "xxl_store_wal_bytes") >= 0
          and ("xxl_store_wal_bytes", ()) in after)

# --- glue ---------------------------------------------------------------
s, v, _ = api("POST", "jobs", {"jobGroup": GID, "glueType": "GLUE_SHELL", "glueSource": "echo one",
                               "glueRemark": "v1"})
GLUE = v.get("id")
api("PUT", "jobs/%d" % GLUE, {"glueSource": "echo two", "glueRemark": "v2"})
s, v, _ = api("GET", "jobs/%d/glue?limit=10" % GLUE)
check("GET jobs/{id}/glue: versions newest first", s == 200 and [g["version"] for g in v["glues"]] == [2, 1], (s, v))
s, v, _ = api("GET", "jobs/%d/glue/latest" % GLUE)
check("GET jobs/{id}/glue/latest", s == 200 and v.get("glueSource") == "echo two", (s, v))
s, v, _ = api("GET", "jobs/%d/glue/latest?version=1" % GLUE)
check("GET jobs/{id}/glue/latest?version=1: still the newest (the path wins)",
      s == 200 and v.get("glueSource") == "echo two", (s, v))
s, v, _ = api("GET", "jobs/%d/glue/1" % GLUE)
check("GET jobs/{id}/glue/1", s == 200 and v.get("glueSource") == "echo one", (s, v))
s, v, _ = api("POST", "jobs/%d/glue/1/rollback" % GLUE)
check("POST jobs/{id}/glue/1/rollback: {id, version}", s == 200 and v.get("version") == 3, (s, v))
check("the job's source is version 1's again", api("GET", "jobs/%d" % GLUE)[1].get("glueSource") == "echo one")

s, v, _ = api("POST", "jobs", {"jobGroup": GID, "glueType": "GLUE_SHELL",
                               "glueSource": "printf 'left \\377\\376 right\\n'"})
BYTES_JOB = v.get("id")
s, v, _ = api("POST", "jobs/%d/trigger" % BYTES_JOB)
BYTES_LOG = (v.get("logIds") or [0])[0]
check("a run that logs bytes that are not UTF-8 finishes",
      wait("bytes", lambda: api("GET", "logs/%d" % BYTES_LOG)[1].get("handleCode") == 200))
s, v, _ = api("GET", "logs/%d/cat" % BYTES_LOG)
check("its log reads as JSON, each bad byte U+FFFD", s == 200 and "left \ufffd\ufffd right" in v.get("logContent", ""),
      (s, v))

# --- status reads, cron -------------------------------------------------
s, v, _ = api("GET", "agents")
check("GET agents", s == 200 and any(a.get("address") == "h1" for a in v["agents"]), (s, v))
s, v, _ = api("GET", "report")
check("GET report (days for charts)", s == 200 and "days" in v and "successRate" in v, (s, v))


def midnight(year, month, day):
    """a local midnight, epoch ms (the scheduler's zone is this process's)"""
    return int(time.mktime((year, month, day, 0, 0, 0, 0, 0, -1))) * 1000


# REPORT by range: test_http.sh wrote the day rows of 2001-01-01 to -02-09
OLD = [midnight(2001, 1, 1 + k) for k in range(40)]
check("GET report without a range: the newest 30 day rows, as before",
      s == 200 and len(v["days"]) == 30 and OLD[9] not in [d["triggerDay"] for d in v["days"]], (s, v))
s, v, _ = api("GET", "report?from=%d&to=%d" % (OLD[0] + 5, OLD[4] + 3600000), token=VIEWER)
check("GET report?from=&to= (a viewer): the rows of the days holding them, newest first",
      s == 200 and [d["triggerDay"] for d in v["days"]] == OLD[4::-1], (s, v))
s, v, _ = api("GET", "report?to=%d" % OLD[39])
check("GET report?to= alone: the 30 days up to its day",
      s == 200 and [d["triggerDay"] for d in v["days"]] == OLD[39:9:-1], (s, v))
s, v, _ = api("GET", "report?from=%d&to=%d" % (OLD[0], OLD[0] + 365 * 86400000))
check("GET report over 366 days: 200", s == 200 and len(v["days"]) == 40, (s, v))
s, v, _ = api("GET", "report?from=%d&to=%d" % (OLD[0], OLD[0] + 366 * 86400000 + 7200000))
check("GET report over 367 days: 400, naming the limit",
      s == 400 and "spans 367 days" in v.get("error", "") and "at most 366" in v.get("error", ""), (s, v))
s, v, _ = api("GET", "report?from=%d" % OLD[0])
check("GET report?from= alone, years ago (to: now): 400", s == 400 and "at most 366" in v.get("error", ""), (s, v))
s, v, _ = api("GET", "report?from=%d&to=%d" % (OLD[4], OLD[0]))
check("GET report with to before from: 400", s == 400 and "from (%d) is after to (%d)" % (OLD[4], OLD[0])
      in v.get("error", ""), (s, v))
for bad in ("from=abc", "to=-1", "from=1.5", "to=99999999999999999999"):
    s, v, _ = api("GET", "report?" + bad)
    check("GET report?%s: 400" % bad, s == 400, (s, v))
# The first day of 1970 (a negative midnight east of UTC) and the 30 days
# up to it (negative midnights in any zone) are ranges too: no rows
for early in ("to=0", "from=0&to=0", "from=1&to=2"):
    s, v, _ = api("GET", "report?" + early)
    check("GET report?%s: a range of 1970's days, no rows (not the newest 30)" % early,
          s == 200 and v["days"] == [], (s, v))
    s, v, _ = api("GET", "report?" + early, token=OPERATOR)
    check("... an operator with apps: none of its three counted days", s == 200 and v["days"] == [], (s, v))
s, v, _ = api("GET", "report?to=253402300800000")
check("GET report past 9999-12-31: 400", s == 400 and "past 9999-12-31" in v.get("error", ""), (s, v))
s, v, _ = api("GET", "report?from=%d&to=%d" % (OLD[0], OLD[4]), token=OPERATOR)
check("GET report by range (an operator with apps): its three counted days in the range only",
      s == 200 and v["days"] == [], (s, v))
s, v, _ = api("GET", "report?from=%d" % (int(time.time() * 1000) - 86400000), token=OPERATOR)
check("GET report since yesterday (an operator with apps): yesterday's and today's rows",
      s == 200 and len(v["days"]) == 2, (s, v))
s, v, _ = api("GET", "plugins", token=VIEWER)
check("GET plugins (a viewer): the router plugins' names and alarm kinds, sorted",
      s == 200 and "FIRST" in v["routers"] and "SHARDING_BROADCAST" in v["routers"]
      and v["routers"] == sorted(v["routers"]) and "webhook" in v["alarms"], (s, v))
s, v, _ = api("GET", "plugins", token=None)
check("GET plugins without credentials: 401", s == 401, (s, v))
s, v, _ = api("POST", "plugins")
check("POST plugins: 405", s == 405, (s, v))
# --- meta: the commands as xxl_commands.def defines them, the lists -----
s, META, _ = api("GET", "meta", token=VIEWER)
check("GET meta as a viewer: 200 with commands and lists", s == 200 and "commands" in META and "lists" in META,
      (s, META))
DEF = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sdk", "src",
                        "xxl_commands.def")).read()
DEFINED = {}
for m in re.finditer(r'^XXL_COMMAND \((\w+),\s*\w+,\s*(\w+),[^;]*?\n?\s*(GET|POST|PUT|DELETE),\s*"([^"]*)",'
                     r'\s*(NULL|"\w+"),\s*(NULL|"\w+"),\s*(\d+)', DEF, re.M):
    name, role, method, pattern, p1, p2, status = m.groups()
    path = "/api/v1/" + pattern
    for key in (p1, p2):
        if key != "NULL":
            path = path.replace("*", "{%s}" % key.strip('"'), 1)
    DEFINED[name] = (role.lower(), method, path, int(status))
GOT = {c["name"]: (c["role"], c["method"], c["path"], c["status"]) for c in META.get("commands", [])}
check("meta lists every command of xxl_commands.def, with its role, method, path and status",
      len(DEFINED) >= 35 and GOT == DEFINED, (sorted(set(GOT.items()) ^ set(DEFINED.items()))))
CMD = {c["name"]: c for c in META.get("commands", [])}
TRIG = CMD.get("JOB_TRIGGER", {})
TF = {f["name"]: f for f in TRIG.get("fields", [])}
check("meta: JOB_TRIGGER's fields as the table has them",
      list(TF) == ["jobId", "executorParam", "address", "shard", "triggerType"]
      and TF["jobId"] == {"name": "jobId", "type": "int", "required": True, "in": "path", "min": 1}
      and TF["triggerType"].get("values") == ["MANUAL", "API"] and TF["triggerType"].get("default") == "MANUAL"
      and TF["executorParam"]["maxBytes"] == 65536 and TF["executorParam"]["in"] == "body"
      and TRIG.get("role") == "operator" and TRIG.get("audit") == "refusals" and TRIG.get("cli") == "job trigger",
      TRIG)
LL = {f["name"]: f for f in CMD.get("LOG_LIST", {}).get("fields", [])}
check("meta: LOG_LIST's limit (query, 1-1000, default 100); a read, never audited",
      LL.get("limit") == {"name": "limit", "type": "int", "required": False, "in": "query", "min": 1,
                          "max": 1000, "default": 100}
      and CMD["LOG_LIST"]["readOnly"] and CMD["LOG_LIST"]["audit"] == "none"
      and CMD["LOG_CAT"]["audit"] == "none" and CMD["LOG_CAT"]["readOnly"]
      and not CMD["LOG_KILL"]["readOnly"]
      and CMD["PING"]["cli"] is None and CMD["JOB_ADD"]["status"] == 201, (LL, CMD.get("LOG_CAT")))
L = META.get("lists", {})
_, PL, _ = api("GET", "plugins")
check("meta's lists: the job fields' closed lists, and the loaded plugins' routes and alarm kinds",
      L.get("scheduleTypes") == ["NONE", "CRON", "FIX_RATE", "FIX_DELAY"]
      and L.get("misfireStrategies") == ["DO_NOTHING", "FIRE_ONCE_NOW"]
      and L.get("blockStrategies") == ["SERIAL_EXECUTION", "DISCARD_LATER", "COVER_EARLY"]
      and "GLUE_SHELL" in L.get("glueTypes", []) and L.get("roles") == ["admin", "operator", "viewer"]
      and "FIRST" in L.get("routeStrategies", []) and "SHARDING_BROADCAST" in L["routeStrategies"]
      and L["routeStrategies"] == PL["routers"] and L.get("alarmKinds") == PL["alarms"]
      and "webhook" in L["alarmKinds"], L)
s, v, _ = api("GET", "meta", token=None)
check("GET meta without credentials: 401", s == 401, (s, v))
s, v, _ = api("PUT", "meta", {})
check("PUT meta: 405", s == 405, (s, v))

s, v, _ = api("GET", "audit?limit=5")
check("GET audit", s == 200 and len(v["audit"]) == 5 and "truncated" in v, (s, v))
s, v, _ = api("GET", "cron/next?expr=0%200%203%20*%20*%20%3F&n=3&tz=Asia/Shanghai&from=0")
check("GET cron/next?expr&n&tz&from", s == 200 and len(v["next"]) == 3 and v["next"][0] > 0, (s, v))
s, v, _ = api("GET", "cron/next?expr=0%200%203%20*%20*%20%3F", token=None)
check("GET cron/next without credentials: 401", s == 401, (s, v))
s, v, _ = api("GET", "cron/next?expr=0%200%203%20*%20*%20%3F&n=2", token=VIEWER)
check("GET cron/next as a viewer", s == 200 and len(v["next"]) == 2, (s, v))
s, v, _ = api("GET", "cron/next?expr=bogus")
check("GET cron/next with a bad expression: 400 with the reason", s == 400 and v["error"], (s, v))
s, v, _ = api("GET", "cron/next?expr=*%20*%20*%20*%20*%20%3F&n=101")
check("GET cron/next n over 100: 400", s == 400, (s, v))
s, v, _ = api("POST", "logs/clear", {"jobId": JOB, "all": True})
check("POST logs/clear", s == 200 and v.get("deleted", -1) >= 1, (s, v))

# --- roles --------------------------------------------------------------
s, v, _ = api("GET", "jobs", token=VIEWER)
check("viewer: GET jobs allowed", s == 200, (s, v))
s, v, _ = api("POST", "jobs/%d/trigger" % JOB, token=VIEWER)
check("viewer: trigger refused 403", s == 403 and "viewer" in v["error"], (s, v))
s, v, _ = api("GET", "audit", token=VIEWER)
check("viewer: audit refused 403", s == 403, (s, v))
s, v, _ = api("POST", "jobs/%d/trigger" % JOB, token=OPERATOR)
check("operator of http-app: trigger of its app's job allowed", s == 200 and v.get("logIds"), (s, v))
OP_LOG = (v.get("logIds") or [0])[0]
s, v, _ = api("GET", "logs/%d" % OP_LOG)
check("the run's triggerMsg names the REST caller (its audit record)",
      "token:ci-op" in v.get("triggerMsg", ""), (s, v))
s, v, _ = api("POST", "jobs/%d/trigger" % OTHER_JOB, token=OPERATOR)
check("operator of http-app: trigger of other-app's job refused 403", s == 403 and "other-app" in v["error"], (s, v))
# The path names the job acted on: a query or body jobId does not replace it
s, v, _ = api("POST", "jobs/%d/trigger?jobId=%d" % (OTHER_JOB, JOB), token=OPERATOR)
check("operator: trigger of other-app's job with its own job's id in the query: still 403",
      s == 403 and "other-app" in v.get("error", ""), (s, v))
s, v, _ = api("POST", "jobs/%d/trigger?jobId=%d" % (JOB, OTHER_JOB), {"jobId": OTHER_JOB}, token=OPERATOR)
path_log = (v.get("logIds") or [0])[0] if s == 200 else 0
check("operator: trigger of its own job with other-app's id in query and body: the path's job runs",
      s == 200 and api("GET", "logs/%d" % path_log)[1].get("jobId") == JOB, (s, v))
s, v, _ = api("POST", "jobs/%d/start" % CRON_JOB, token=OPERATOR)
check("operator: start of its app's job allowed", s == 200, (s, v))
api("POST", "jobs/%d/stop" % CRON_JOB, token=OPERATOR)
s, v, _ = api("POST", "jobs", {"jobGroup": GID, "executorHandler": "x"}, token=OPERATOR)
check("operator: POST jobs refused 403", s == 403, (s, v))
s, v, _ = api("GET", "users", token=OPERATOR)
check("operator: GET users refused 403", s == 403, (s, v))
s, v, _ = api("POST", "tokens", {"name": "t", "role": "admin"}, token=OPERATOR)
check("operator: POST tokens refused 403", s == 403, (s, v))

# --- users and tokens over REST -----------------------------------------
s, v, _ = api("POST", "users", {"username": "vic", "password": "vic-pass-123", "role": "viewer",
                                "apps": []})
check("POST users: 201 {username}", s == 201 and v.get("username") == "vic", (s, v))
s, v, _ = api("POST", "users", {"username": "vic", "password": "vic-pass-123", "role": "viewer"})
check("POST users again: 409", s == 409, (s, v))
s, v, _ = api("POST", "users", {"username": "x", "password": "short", "role": "viewer"})
check("POST users with a short password: 400", s == 400, (s, v))
s, v, _ = api("PUT", "users/vic", {"role": "operator", "apps": ["http-app", "other-app"]})
check("PUT users/{name}", s == 200 and v.get("username") == "vic", (s, v))
s, v, _ = api("GET", "users")
vic = [u for u in v.get("users", []) if u["username"] == "vic"]
check("GET users: apps as a list, no password",
      s == 200 and vic and vic[0]["apps"] == ["http-app", "other-app"] and vic[0]["role"] == "operator"
      and "password" not in vic[0] and "addTime" in vic[0], (s, v))
s, v, _ = api("PUT", "users/vic", {"apps": ["http-app,other-app"]})
check("PUT users/{name} with an app name holding a comma: 400", s == 400, (s, v))
s, v, _ = api("PUT", "users/nobody", {"role": "viewer"})
check("PUT an unknown user: 404", s == 404, (s, v))
s, v, _ = api("POST", "tokens", {"name": "rest-t", "role": "viewer", "apps": []})
check("POST tokens: 201 {name, token}", s == 201 and v.get("token", "").startswith("xxl_"), (s, v))
NEW_TOKEN = v.get("token", "")
check("the new token works", api("GET", "ping", token=NEW_TOKEN)[0] == 200)
s, v, _ = api("GET", "tokens")
check("GET tokens: never the token", s == 200 and "rest-t" in [t["name"] for t in v["tokens"]]
      and NEW_TOKEN not in json.dumps(v), (s, v))
s, v, _ = api("DELETE", "tokens/rest-t")
check("DELETE tokens/{name}", s == 200 and v.get("name") == "rest-t", (s, v))
check("the removed token gets 401", api("GET", "ping", token=NEW_TOKEN)[0] == 401)
s, v, _ = api("DELETE", "users/vic")
check("DELETE users/{name}", s == 200, (s, v))

# --- sessions, CSRF, password -------------------------------------------
s, v, _ = api("POST", "login", {"username": "alice", "password": "wrong-password"}, token=None)
check("login with a wrong password: 401", s == 401 and v.get("error") == "wrong user name or password", (s, v))
s, v, _ = api("POST", "login", {"username": "nobody", "password": "wrong-password"}, token=None)
check("login of an unknown user: the same 401", s == 401 and v.get("error") == "wrong user name or password", (s, v))
s, v, resp = api("POST", "login", {"username": "alice", "password": "alice-pass-1"}, token=None)
cookie_header = resp.getheader("Set-Cookie") or ""
check("login: 200 {username, role, apps, csrf}", s == 200 and v.get("username") == "alice"
      and v.get("role") == "admin" and v.get("apps") == [] and len(v.get("csrf", "")) == 64, (s, v))
check("the cookie is HttpOnly, SameSite=Strict, Path=/",
      "HttpOnly" in cookie_header and "SameSite=Strict" in cookie_header and "Path=/" in cookie_header, cookie_header)
SID = cookie_header.split(";")[0].split("=", 1)[1] if "=" in cookie_header else ""
CSRF = v.get("csrf", "")
s, v, _ = api("GET", "me", token=None, cookie=SID)
check("GET me with the session", s == 200 and v.get("username") == "alice" and v.get("csrf") == CSRF, (s, v))
s, v, _ = api("GET", "me", token=None)
check("GET me without one: 401", s == 401, (s, v))
s, v, _ = api("GET", "jobs", token=None, cookie=SID)
check("a session reads without CSRF", s == 200, (s, v))
s, v, _ = api("POST", "jobs/%d/start" % JOB, token=None, cookie=SID)
check("a session's change without X-CSRF-Token: 403", s == 403 and "CSRF" in v["error"], (s, v))
s, v, _ = api("POST", "jobs/%d/start" % JOB, token=None, cookie=SID, csrf="0" * 64)
check("with a wrong X-CSRF-Token: 403", s == 403, (s, v))
s, v, _ = api("POST", "jobs/%d/start" % CRON_JOB, token=None, cookie=SID, csrf=CSRF)
check("with the session's X-CSRF-Token: allowed", s == 200, (s, v))
api("POST", "jobs/%d/stop" % CRON_JOB, token=None, cookie=SID, csrf=CSRF)
s, v, _ = api("GET", "me", token=None, cookie=SID, host=H2)
check("the session holds on the second scheduler of the store", s == 200 and v.get("username") == "alice", (s, v))
s, v, _ = api("PUT", "me/password", {"oldPassword": "nope-nope", "newPassword": "alice-pass-2"},
              token=None, cookie=SID, csrf=CSRF)
check("a password change with a wrong old password: 403", s == 403, (s, v))
s, v, _ = api("PUT", "me/password", {"oldPassword": "alice-pass-1", "newPassword": "alice-pass-2"},
              token=None, cookie=SID)
check("a password change without CSRF: 403", s == 403, (s, v))
s, v, _ = api("PUT", "me/password", {"oldPassword": "alice-pass-1", "newPassword": "alice-pass-2"},
              token=None, cookie=SID, csrf=CSRF)
check("a password change: 200", s == 200, (s, v))
check("the old password no longer logs in",
      api("POST", "login", {"username": "alice", "password": "alice-pass-1"}, token=None)[0] == 401)
s, v, resp2 = api("POST", "login", {"username": "alice", "password": "alice-pass-2"}, token=None, host=H2)
check("the new one does (on the second scheduler)", s == 200, (s, v))
s, v, resp = api("POST", "logout", token=None, cookie=SID)
check("logout without CSRF: 403", s == 403, (s, v))
s, v, resp = api("POST", "logout", token=None, cookie=SID, csrf=CSRF)
check("logout: 200 {} and the cookie cleared", s == 200 and v == {}
      and "Max-Age=0" in (resp.getheader("Set-Cookie") or ""), (s, v))
s, v, _ = api("GET", "me", token=None, cookie=SID)
check("the session is over: 401", s == 401, (s, v))
s, v, _ = api("GET", "me", token=None, cookie=SID, host=H2)
check("on both schedulers", s == 401, (s, v))
s, v, _ = api("GET", "me", token=ADMIN)
check("GET me with a token: its name and role", s == 200 and v.get("username") == "ci-admin"
      and v.get("kind") == "token" and "csrf" not in v, (s, v))

# --- bad requests -------------------------------------------------------
s, v, _ = req("POST", "/api/v1/groups", token=ADMIN, raw=b'{"appname": "x",')
check("malformed JSON: 400", s == 400 and "JSON" in v["error"], (s, v))
s, v, _ = req("POST", "/api/v1/groups", token=ADMIN, raw=b'[1, 2]')
check("a body that is not an object: 400", s == 400, (s, v))
s, v, _ = req("POST", "/api/v1/groups", token=ADMIN, raw=b'appname=x', ctype="application/x-www-form-urlencoded")
check("a body that is not JSON (content type): 415", s == 415, (s, v))
s, v, _ = req("POST", "/api/v1/groups", token=ADMIN, raw=b'{"appname": "big", "title": "' + b"x" * 70000 + b'"}')
check("a body over http/max_body: 413", s == 413 and "limit" in v["error"], (s, v))
s, v, _ = req("POST", "/api/v1/jobs", token=ADMIN, raw=b'{"jobGroup": "http-app", "executorHandler": "demoJobHandler", "jobDesc": "' + b"x" * 60000 + b'"}')
check("one under it is accepted", s == 201, (s, v))
for bad in ("jobs/+%d" % JOB, "jobs/%%20%d" % JOB, "jobs/%d%%00x" % JOB, "jobs?limit=%2B1",
            "jobs?limit=1%00", "jobs?limit=%201", "cron/next?expr=*+*+*+*+*+%3F&n=%2B3"):
    s, v, _ = api("GET", bad)
    check("GET %s: 400 (decimal digits only, no NUL)" % bad, s == 400 and "error" in v, (s, v))
s, v, _ = api("GET", "jobs?limit=2")
check("... while plain digits pass", s == 200 and len(v.get("jobs", [])) == 2, (s, v))
host_name, port = H1.rsplit(":", 1)
raw = socket.create_connection((host_name, int(port)), timeout=20)
raw.sendall(b"PUT /api/v1/jobs/1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 100000000\r\nAuthorization: Bearer " + ADMIN.encode() + b"\r\n\r\n")
got = b""
try:
    while b"\r\n\r\n" not in got:
        chunk = raw.recv(65536)
        if not chunk:
            break
        got += chunk
except socket.timeout:
    pass
raw.close()
check("a Content-Length over http/max_body: 413 before any byte of the body is sent",
      got.startswith(b"HTTP/1.1 413"), got[:200])


def raw_request(data, host=None):
    return exchange(host or H1, data)


head = (b"PUT /api/v1/jobs/%d HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Connection: close\r\nAuthorization: Bearer " % JOB) + ADMIN.encode() + b"\r\n"
body = b'{"jobDesc": "smuggled"}'
chunked = b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n"
got = raw_request(head + b"Content-Length: %d\r\nContent-Length: 2\r\n\r\n" % len(body) + body)
check("two Content-Lengths: 400 (request smuggling past a proxy)", got.startswith(b"HTTP/1.1 400"), got[:200])
got = raw_request(head + b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked)
check("Content-Length with Transfer-Encoding: 400", got.startswith(b"HTTP/1.1 400"), got[:200])
check("... neither changed the job", api("GET", "jobs/%d" % JOB)[1].get("jobDesc") != "smuggled")
got = raw_request(head + b"Transfer-Encoding: chunked\r\n\r\n" + chunked)
check("a chunked body alone is taken", got.startswith(b"HTTP/1.1 200")
      and api("GET", "jobs/%d" % JOB)[1].get("jobDesc") == "smuggled", got[:200])
api("PUT", "jobs/%d" % JOB, {"jobDesc": "rest job 2"})
s, v, _ = api("GET", "nope")
check("an unknown path: 404 {error}", s == 404 and "error" in v, (s, v))
s, v, _ = api("GET", "jobs/1/nope")
check("an unknown sub-path: 404", s == 404, (s, v))
s, v, r = api("DELETE", "ping")
check("a wrong method: 405 {error}", s == 405 and "error" in v, (s, v))
check("its Allow names the path's methods", r.getheader("Allow") == "GET, HEAD",
      r.getheader("Allow"))
s, v, r = api("PATCH", "jobs/%d" % JOB, {})
check("PATCH: 405", s == 405, (s, v))
allow = sorted(m.strip() for m in (r.getheader("Allow") or "").split(","))
check("a job's Allow: GET, HEAD, PUT, DELETE", allow == ["DELETE", "GET", "HEAD", "PUT"],
      r.getheader("Allow"))
s, v, r = api("GET", "jobs/%d" % JOB)
check("(and a method it takes has none)", s == 200 and r.getheader("Allow") is None,
      (s, r.getheader("Allow")))
s, v, _ = api("GET", "groups", token=None, cookie="not-a-session")
check("a made-up session cookie: 401", s == 401, (s, v))
s, v, _ = api("DELETE", "groups/%d" % OTHER_GID)
check("DELETE a group that has jobs: 409", s == 409, (s, v))
api("DELETE", "jobs/%d" % OTHER_JOB)
s, v, _ = api("DELETE", "groups/%d" % OTHER_GID)
check("DELETE groups/{id} once empty", s == 200 and v.get("id") == OTHER_GID, (s, v))

# --- the console's files ------------------------------------------------
s, v, resp = req("GET", "/")
check("GET / serves the console's index.html", s == 200 and "xxl console" in v
      and resp.getheader("Content-Type").startswith("text/html"), (s, v))
s, v, resp = req("GET", "/assets/app.js")
check("GET /assets/app.js with its type", s == 200 and "console.log" in v
      and resp.getheader("Content-Type").startswith("text/javascript"), (s, v))
s, v, _ = req("GET", "/jobs/12/edit")
check("a console route with no file serves index.html", s == 200 and "xxl console" in v, (s, v))
s, v, _ = req("GET", "/.hidden")
check("hidden files are not served", s == 404, (s, v))
got = raw_request(b"GET /../outside.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
check("a path out of the console's folder is not served", b"outside" not in got, got[:200])
s, v, _ = req("GET", "/filelink")
check("a symbolic link to a file is not served", s == 200 and "outside" not in v and "xxl console" in v, (s, v))
s, v, _ = req("GET", "/dirlink/outside.txt")
check("nor a file under a symbolic link to a folder", s == 200 and "outside" not in v and "xxl console" in v,
      (s, v))
s, v, _ = req("POST", "/", raw=b"")
check("POST to a console path: 405", s == 405, (s, v))
s, v, _ = req("POST", "/%FF%FE", raw=b"")
check("an answer quoting a path that is not UTF-8 is still JSON", s == 405 and "\ufffd" in v.get("error", ""),
      (s, v))

# --- security headers on every answer ------------------------------------
def csp_of(resp):
    """The Content-Security-Policy as {directive: [sources]}"""
    out = {}
    for part in (resp.getheader("Content-Security-Policy") or "").split(";"):
        words = part.split()
        if words:
            out[words[0]] = words[1:]
    return out


def common_headers(resp):
    return (resp.getheader("X-Content-Type-Options") == "nosniff"
            and resp.getheader("X-Frame-Options") == "DENY"
            and resp.getheader("Referrer-Policy") == "no-referrer"
            and "'none'" in csp_of(resp).get("frame-ancestors", [])
            and resp.getheader("Strict-Transport-Security") is None)


s, v, resp = req("GET", "/")
csp = csp_of(resp)
check("the console's page: a CSP whose scripts come from its own files only",
      s == 200 and csp.get("script-src") == ["'self'"] and csp.get("default-src") == ["'none'"]
      and csp.get("connect-src") == ["'self'"] and csp.get("object-src", ["'none'"]) == ["'none'"],
      resp.getheader("Content-Security-Policy"))
check("... never framed, no type sniffing, no Referer (and no HSTS over plain HTTP)",
      common_headers(resp), resp.getheaders())
s, v, resp = req("GET", "/assets/app.js")
check("the console's other files carry the same policy", s == 200 and csp_of(resp) == csp
      and common_headers(resp), resp.getheaders())
for what, (method, path, token) in {
        "an api answer": ("GET", "/api/v1/ping", ADMIN),
        "an api refusal (401)": ("GET", "/api/v1/ping", None),
        "an unknown api path (404)": ("GET", "/api/v1/nope", ADMIN),
        "/metrics": ("GET", "/metrics", None),
        "/healthz": ("GET", "/healthz", None),
        "a method refused (405)": ("POST", "/", None)}.items():
    s, v, resp = req(method, path, token=token, raw=b"" if method == "POST" else None)
    c = csp_of(resp)
    check("%s: a CSP that lets nothing load, and the same headers" % what,
          c.get("default-src") == ["'none'"] and "script-src" not in c and common_headers(resp),
          (s, resp.getheaders()))

# --- login limits: per address and per user name --------------------------
# (test_http.sh: this scheduler limits to 5 wrong passwords, then one per
# hour; its table has 64 entries.  Addresses other than 127.0.0.1 are
# other loopback addresses the client binds.)
for name in ("rl-victim", "rl-other"):
    s, v, _ = api("POST", "users", {"username": name, "password": name + "-pass", "role": "viewer"})
    check("POST users %s" % name, s == 201, (s, v))


def login(name, password, source, host=H1):
    return api("POST", "login", {"username": name, "password": password}, token=None,
               source=source, host=host)


def checks(result, host=H1):
    return sample(metrics(host), "xxl_http_password_checks_total", result=result)


before = {r: checks(r) for r in ("ok", "wrong", "limited")}
codes = [login("rl-victim", "wrong-%d" % i, "127.0.0.3")[0] for i in range(5)]
check("5 wrong passwords from one address: 401 each", codes == [401] * 5, codes)
s, v, resp = login("rl-victim", "wrong-6", "127.0.0.3")
retry = resp.getheader("Retry-After") or ""
check("the 6th: 429 {error} with Retry-After (seconds)", s == 429 and "too many" in v.get("error", "")
      and retry.isdigit() and 1 <= int(retry) <= 3600, (s, v, retry))
check("... and the security headers", common_headers(resp), resp.getheaders())
s, v, _ = login("rl-victim", "rl-victim-pass", "127.0.0.3")
check("the right password from that address is refused too (429: nothing is checked)", s == 429, (s, v))
s, v, _ = login("rl-other", "rl-other-pass", "127.0.0.3")
check("another user from that address: 429 (the address is held back, whatever name it tries)",
      s == 429, (s, v))
s, v, _ = login("rl-victim", "rl-victim-pass", "127.0.0.4")
check("the user from another address: 429 (the name is held back, whatever address tries it)",
      s == 429, (s, v))
s, v, resp = login("rl-other", "rl-other-pass", "127.0.0.4")
check("another user from another address signs in (200)", s == 200 and v.get("username") == "rl-other",
      (s, v))
OTHER_SID = (resp.getheader("Set-Cookie") or "").split(";")[0].split("=", 1)[-1]
OTHER_CSRF = v.get("csrf", "") if isinstance(v, dict) else ""
after = {r: checks(r) for r in ("ok", "wrong", "limited")}
check("the refused attempts ran no password check (checks: 5 wrong, 1 ok, 4 limited)",
      (after["wrong"] - before["wrong"], after["ok"] - before["ok"],
       after["limited"] - before["limited"]) == (5, 1, 4), (before, after))
codes = [api("PUT", "me/password", {"oldPassword": "nope-%d" % i, "newPassword": "whatever-123"},
             token=None, cookie=OTHER_SID, csrf=OTHER_CSRF, source="127.0.0.4")[0] for i in range(5)]
check("a session's wrong old passwords count alike: 403 five times", codes == [403] * 5, codes)
s, v, resp = api("PUT", "me/password", {"oldPassword": "rl-other-pass", "newPassword": "whatever-123"},
                 token=None, cookie=OTHER_SID, csrf=OTHER_CSRF, source="127.0.0.4")
check("... then 429 with Retry-After, even for the right one", s == 429 and resp.getheader("Retry-After"),
      (s, v))
s, v, _ = login("alice", "alice-pass-2", "127.0.0.5")
check("meanwhile another user and address sign in", s == 200, (s, v))

# Many names from many addresses: the table stays at its size, and the
# name held back stays held back.  (The table is 8 sets of 8 ways, a key's
# set its keyed hash's: 400 keys fill every set but with odds below 1e-9;
# 120 left one short now and then)
def spray(i):
    source = "127.1.%d.%d" % (i // 200, i % 200 + 1)
    return [login("spray-%d-%d" % (i, k), "wrong-password", source)[0] for k in range(3)]


with concurrent.futures.ThreadPoolExecutor(4) as pool:
    results = [c for r in pool.map(spray, range(100)) for c in r]
check("300 names from 100 addresses: each a 401", results == [401] * 300, set(results))
m = metrics()
check("the limiter's table is full and no larger: entries = slots = 64",
      sample(m, "xxl_http_login_limit_entries") == sample(m, "xxl_http_login_limit_slots") == 64,
      (sample(m, "xxl_http_login_limit_entries"), sample(m, "xxl_http_login_limit_slots")))
s, v, _ = login("rl-victim", "rl-victim-pass", "127.0.0.6")
check("the name held back still is", s == 429, (s, v))

# The second scheduler limits to 5, then one a second: after the window
# the right password works (the limits are each scheduler's own)
codes = [login("rl-victim", "wrong-%d" % i, "127.0.0.7", host=H2)[0] for i in range(5)]
check("5 wrong passwords on the second scheduler: 401 each", codes == [401] * 5, codes)
seen = []


def right_password_works():
    s, v, resp = login("rl-victim", "rl-victim-pass", "127.0.0.7", host=H2)
    seen.append((s, resp.getheader("Retry-After")))
    return s == 200


check("the right password after the window signs in (each 429 meanwhile says Retry-After: 1)",
      wait("window", right_password_works) and all(r == "1" for c, r in seen if c == 429), seen)
s, v, _ = login("rl-victim", "rl-victim-pass", "127.0.0.3")
check("on the first scheduler it is still held back", s == 429, (s, v))

# --- sessions: a bound per user; none for a password changed meanwhile --
s, v, _ = api("POST", "users", {"username": "many", "password": "many-pass-1", "role": "viewer"})
check("POST users many", s == 201, (s, v))


def session_of(resp):
    return (resp.getheader("Set-Cookie") or "").split(";")[0].split("=", 1)[-1]


many = []
for i in range(66):
    s, v, resp = login("many", "many-pass-1", "127.0.0.8")
    if s != 200:
        break
    many.append(session_of(resp))
check("66 logins of one user: 200 each", len(many) == 66, len(many))
alive = [api("GET", "me", token=None, cookie=sid)[0] for sid in many]
check("a user keeps the newest 64 sessions: the 2 oldest ended (401), the others hold",
      alive == [401] * 2 + [200] * 64, alive)

# Logins with the old password racing an admin's new one: a login whose
# password was checked against the old hash makes no session once the new
# one is set (each round: 3 clients log in until refused, the password
# changes meanwhile; every session they got must be over)
s, v, _ = api("POST", "users", {"username": "racer", "password": "racer-pass-0", "role": "viewer"})
check("POST users racer", s == 201, (s, v))
survivors = []
for rnd in range(3):
    password = "racer-pass-%d" % rnd
    got = []

    def loop(source):
        while True:
            try:
                s, v, resp = login("racer", password, source, host=H2)
            except (ConnectionResetError, BrokenPipeError, http.client.RemoteDisconnected):
                time.sleep(0.1)     # (http/per_address: see api_patient)
                continue
            if s != 200:
                return s
            got.append(session_of(resp))

    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        futures = [pool.submit(loop, "127.0.2.%d" % (rnd * 3 + k + 1)) for k in range(3)]
        wait("logins", lambda: len(got) >= 6)
        s, v, _ = api("PUT", "users/racer", {"password": "racer-pass-%d" % (rnd + 1)})
        ends = [f.result() for f in futures]
    check("round %d: the password changed while logins ran (%d sessions made), each client then refused"
          % (rnd, len(got)), s == 200 and len(got) >= 6 and all(e in (401, 429) for e in ends), (s, v, ends))
    survivors += [sid for sid in got if api_patient("GET", "me", token=None, cookie=sid, host=H2)[0] != 401]
check("no session made with the old password outlives the new one", survivors == [], len(survivors))
s, v, _ = login("racer", "racer-pass-3", "127.0.2.20", host=H2)
check("... while the new password signs in", s == 200, (s, v))

# --- passwords up to 1024 bytes (libcrypt alone takes 511) ----------------
LONG = "L" * 1014 + "-long-pass"   # 1024 bytes
s, v, _ = api("POST", "users", {"username": "longpw", "password": LONG, "role": "viewer"})
check("POST users with a 1024-byte password: 201", s == 201, (s, v))
s, v, _ = login("longpw", LONG, "127.0.4.1")
check("... it signs in", s == 200 and v.get("username") == "longpw", (s, v))
s, v, _ = login("longpw", LONG[:1023] + "x", "127.0.4.1")
check("... its last byte different: 401", s == 401, (s, v))
s, v, _ = login("longpw", LONG[:1023], "127.0.4.1")
check("... one byte short: 401", s == 401, (s, v))
s, v, _ = api("POST", "users", {"username": "longpw2", "password": "p" * 1025, "role": "viewer"})
check("a 1025-byte password: 400", s == 400, (s, v))

# --- connections: one client address cannot take them all ---------------
# 70 connections from one address, each with half a request (a slowloris):
# at most 16 of them are served; /healthz from another address answers
def hold(host, source, count):
    """count connections to host from source, each with half a request"""
    host_name, port = host.rsplit(":", 1)
    held = []
    for i in range(count):
        try:
            c = socket.create_connection((host_name, int(port)), timeout=20, source_address=(source, 0))
            c.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            held.append(c)
        except OSError:
            pass
    return held


held = hold(H1, "127.0.3.1", 70)
try:
    s, v, _ = req("GET", "/healthz", source="127.0.3.2")
except OSError as e:
    s, v = 0, str(e)
check("70 half-sent requests from one address: another address is still served", s == 200, (s, v))


check("... the address's connections past 16 were closed at once",
      wait("closed", lambda: sum(closed(c) for c in held) == len(held) - 16), sum(closed(c) for c in held))
for c in held:
    c.close()
check("... and once they go, the address is served again",
      wait("served", lambda: req("GET", "/healthz", source="127.0.3.1")[0] == 200))

# The second scheduler has http/per_address = 4: of 10 from one address,
# 6 are closed at once
held = hold(H2, "127.0.3.3", 10)
check("http/per_address = 4: of 10 half-sent requests from one address, 6 are closed at once",
      wait("closed", lambda: sum(closed(c) for c in held) == len(held) - 4), sum(closed(c) for c in held))
for c in held:
    c.close()

# http/hosts (DNS rebinding): the second scheduler answers only for IP
# addresses, localhost, console.example and the subdomains of
# corp.example; the first (unset) for any name
def host_status(host, header):
    line = b"GET /healthz HTTP/1.1\r\n" if header is not None else b"GET /healthz HTTP/1.0\r\n"
    if header is not None:
        line += b"Host: " + header.encode() + b"\r\n"
    got = raw_request(line + b"Connection: close\r\n\r\n", host)
    return got.split(b"\r\n", 1)[0], got


port2 = H2.rsplit(":", 1)[1]
for header in ("evil.example", "evil.example:" + port2, "console.example.evil.example",
               "corp.example", "xcorp.example", "localhost.evil.example", "console.example:",
               "console.example:80x", "[::1", ""):
    first, got = host_status(H2, header)
    check("http/hosts: Host '%s' is refused (421, saying why)" % header,
          first.startswith(b"HTTP/1.1 421") and b"does not answer for the host" in got, got[:300])
for header in ("console.example", "CONSOLE.Example.:" + port2, "a.corp.example", "b.a.corp.example:1",
               "127.0.0.1:" + port2, "[::1]:" + port2, "localhost:" + port2, "10.1.2.3"):
    first, got = host_status(H2, header)
    check("http/hosts: Host '%s' is answered" % header, first.startswith(b"HTTP/1.1 200"), got[:300])
first, got = host_status(H2, None)
check("http/hosts: a request without Host (HTTP/1.0) is answered", b" 200 " in first, got[:300])
s, v, _ = api("GET", "me", token=ADMIN, host=H2)
check("http/hosts: a client naming the address it connected to is answered (REST)", s == 200, (s, v))
first, got = host_status(H1, "evil.example")
check("http/hosts unset: any Host is answered", first.startswith(b"HTTP/1.1 200"), got[:300])

print("done")
sys.exit(0)
