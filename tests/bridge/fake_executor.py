#!/usr/bin/env python3
"""fake_executor.py -- an XXL-JOB executor written from its HTTP protocol,
for the bridge's tests (no third-party code, no JVM).

    fake_executor.py --admin URL --app APP --runs FILE [--shape 2|3]
                     [--token T] [--go-header] [--port-file F] [--beat S]
                     [--repeat-callbacks] [--probe FILE --tag TAG] [--fast]
                     [--routes FILE]

It registers at URL/api/registry every --beat seconds (registryRemove on
SIGTERM), serves run, kill, log, beat, idleBeat at http://127.0.0.1:PORT/,
answers in the 2.x shape {code,msg,content} or the 3.x {code,msg,data},
sends the token header as Java does (XXL-JOB-ACCESS-TOKEN) or canonicalised
as Go's net/http does (Xxl-Job-Access-Token), and sends its results in
batches to URL/api/callback (items spelled logDateTim), retrying until the
admin answers code 200.  Each run it starts appends "LOGID" to --runs
(the probe: a logId executed twice shows twice).  With --probe, each run
also appends, with ONE write() on an O_APPEND descriptor before it starts,
the fault suite's probe line (tests/faults/probe.c, count.sh):
"LOGID JOBID INDEX/TOTAL PID START-MS TAG bridge".  With --routes (the
bridge's bridge.routes), a /run whose "S LOGID ..." line is not in that
file yet is answered 500 "... not in the routes file ..." and logged: the
bridge writes a run's route (and journal entry) before it calls /run.

Handlers (executorHandler):
  ok         200 at once
  fail       500 "failed on purpose"
  sleep      sleeps executorParams seconds (killable), then 200
  refuse     /run answered HTTP 500 with an HTML body (an odd shape)
  refuse2    /run answered {"code":"500","msg":"refused, code as a string"}
Runs past executorTimeout end 502, a killed one 500 (as xxl-job-core).
With --fast (make bench), a run of any other handler ends 200 inside its
/run request (no thread, no log lines, no --runs line): the executor's own
cost per run is then one request and a share of a callback batch.
"""

import argparse
import json
import os
import signal
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ARGS = None
LOCK = threading.Lock()
RESULTS = []            # callbacks not yet acknowledged
RUNNING = {}            # jobId -> {"logId", "killed"}
LOGS = {}               # logId -> [lines]
STOP = threading.Event()


def token_header():
    return "Xxl-Job-Access-Token" if ARGS.go_header else "XXL-JOB-ACCESS-TOKEN"


def post(path, body):
    data = json.dumps(body).encode()
    req = urllib.request.Request(ARGS.admin.rstrip("/") + path, data=data, method="POST")
    req.add_header("Content-Type", "application/json")
    if ARGS.token:
        req.add_header(token_header(), ARGS.token)
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as e:
        try:
            return json.loads(e.read() or b"{}")
        except ValueError:
            return {"code": e.code}
    except Exception as e:          # noqa: BLE001 (admin down: try later)
        return {"code": 0, "msg": str(e)}


def answer(code, msg=None, content=None):
    key = "data" if ARGS.shape == 3 else "content"
    out = {"code": code, "msg": msg}
    if content is not None:
        out[key] = content
    return out


def log(log_id, line):
    with LOCK:
        LOGS.setdefault(log_id, []).append(line)


def finish(param, code, msg):
    log(param["logId"], "----------- xxl-job job execute end(finish) -----------")
    with LOCK:
        RESULTS.append({"logId": param["logId"], "logDateTim": param.get("logDateTime", 0),
                        "handleCode": code, "handleMsg": msg})
        if RUNNING.get(param["jobId"], {}).get("logId") == param["logId"]:
            del RUNNING[param["jobId"]]


def job(param, state):
    handler = param.get("executorHandler", "")
    log(param["logId"], "----------- xxl-job job execute start -----------")
    log(param["logId"], "----------- Param:" + str(param.get("executorParams", "")))
    if param.get("glueType", "BEAN") != "BEAN":
        log(param["logId"], "----------- glueType:%s glueUpdatetime:%s glueSource:%s" % (
            param["glueType"], param.get("glueUpdatetime"), param.get("glueSource")))
    if handler == "fail":
        finish(param, 500, "failed on purpose")
        return
    if handler == "sleep":
        end = time.time() + float(param.get("executorParams") or 1)
        timeout = param.get("executorTimeout") or 0
        deadline = time.time() + timeout if timeout > 0 else None
        while time.time() < end:
            if state["killed"]:
                finish(param, 500, "scheduling center kill job. [job running, killed]")
                return
            if deadline and time.time() > deadline:
                finish(param, 502, "job execute timeout ")
                return
            log(param["logId"], "working")
            time.sleep(0.1)
    finish(param, 200, None)


def callback_loop():
    while not STOP.is_set():
        time.sleep(0.2)
        with LOCK:
            batch = list(RESULTS)
        if not batch:
            continue
        body = list(batch)
        if ARGS.repeat_callbacks:
            body = body + body + [{"logId": 987654321, "logDateTim": 0, "handleCode": 200,
                                   "handleMsg": "nobody sent this run"}]
        if post("/api/callback", body).get("code") == 200:
            with LOCK:
                # (only this thread removes, others append: batch is a prefix)
                del RESULTS[:len(batch)]


def registry_loop():
    while not STOP.is_set():
        post("/api/registry", {"registryGroup": "EXECUTOR", "registryKey": ARGS.app,
                               "registryValue": ARGS.url})
        STOP.wait(ARGS.beat)


def probe(body):
    line = "%d %d %d/%d %d %d %s bridge\n" % (
        body["logId"], body.get("jobId", 0), body.get("broadcastIndex") or 0,
        body.get("broadcastTotal") or 1, os.getpid(), int(time.time() * 1000), ARGS.tag)
    fd = os.open(ARGS.probe, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body, ctype="application/json"):
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        # Headers and body in one write: two small writes on a kept-alive
        # connection meet Nagle and the caller's delayed ACK (40 ms a call)
        self._headers_buffer.append(b"\r\n" + data)
        self.flush_headers()

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if ARGS.token and self.headers.get("XXL-JOB-ACCESS-TOKEN") != ARGS.token:
            self.reply(200, answer(500, "The access token is wrong."))
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self.reply(200, answer(500, "bad body"))
            return
        path = self.path.rstrip("/").rsplit("/", 1)[-1]
        if path == "beat":
            self.reply(200, answer(200))
        elif path == "idleBeat":
            with LOCK:
                busy = body.get("jobId") in RUNNING
            self.reply(200, answer(500, "job thread is running or has trigger queue.")
                       if busy else answer(200))
        elif path == "kill":
            with LOCK:
                state = RUNNING.get(body.get("jobId"))
                if state:
                    state["killed"] = True
            self.reply(200, answer(200) if state else answer(500, "job thread already killed."))
        elif path == "log":
            with LOCK:
                lines = LOGS.get(body.get("logId"))
            if lines is None:
                self.reply(200, answer(500, "log file not found"))
                return
            start = max(int(body.get("fromLineNum") or 1), 1)
            part = lines[start - 1:]
            self.reply(200, answer(200, None, {
                "fromLineNum": start, "toLineNum": start + len(part) - 1,
                "logContent": "".join(l + "\n" for l in part), "isEnd": False}))
        elif path == "run":
            handler = body.get("executorHandler")
            if ARGS.routes and not routed(body.get("logId")):
                why = "logId %s: /run came and its route is not in the routes file %s" % (
                    body.get("logId"), ARGS.routes)
                print(why, file=sys.stderr, flush=True)
                self.reply(200, answer(500, why))
                return
            if handler == "refuse":
                self.reply(500, "<html><body>Internal Server Error</body></html>", "text/html")
                return
            if handler == "refuse2":
                self.reply(200, {"code": "500", "msg": "refused, code as a string"})
                return
            if ARGS.fast and handler not in ("fail", "sleep"):
                with LOCK:
                    RESULTS.append({"logId": body["logId"], "logDateTim": body.get("logDateTime", 0),
                                    "handleCode": 200, "handleMsg": None})
                self.reply(200, answer(200))
                return
            with open(ARGS.runs, "a") as f:
                f.write("%d\n" % body["logId"])
            if ARGS.probe:
                probe(body)
            state = {"logId": body["logId"], "killed": False}
            with LOCK:
                RUNNING[body["jobId"]] = state
            threading.Thread(target=job, args=(body, state), daemon=True).start()
            self.reply(200, answer(200))
        else:
            self.reply(404, answer(404, "not found"))


def routed(log_id):
    """True when the bridge's routes file holds log_id's "S" line"""
    try:
        with open(ARGS.routes) as f:
            return any(line.startswith("S %s " % log_id) for line in f)
    except OSError:
        return False


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--admin", required=True)
    p.add_argument("--app", required=True)
    p.add_argument("--runs", required=True)
    p.add_argument("--shape", type=int, default=2, choices=(2, 3))
    p.add_argument("--token", default="")
    p.add_argument("--go-header", action="store_true")
    p.add_argument("--port-file")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--beat", type=float, default=1.0)
    p.add_argument("--repeat-callbacks", action="store_true")
    p.add_argument("--probe")
    p.add_argument("--fast", action="store_true")
    p.add_argument("--routes")
    p.add_argument("--tag", default="-")
    ARGS = p.parse_args()
    ThreadingHTTPServer.request_queue_size = 128    # (a bridge opens up to 64 connections at once)
    server = ThreadingHTTPServer(("127.0.0.1", ARGS.port), Handler)
    server.daemon_threads = True
    ARGS.url = "http://127.0.0.1:%d/" % server.server_address[1]
    if ARGS.port_file:
        with open(ARGS.port_file + ".tmp", "w") as f:
            f.write("%d\n" % server.server_address[1])
        os.rename(ARGS.port_file + ".tmp", ARGS.port_file)

    def stop(*_):
        STOP.set()
        post("/api/registryRemove", {"registryGroup": "EXECUTOR", "registryKey": ARGS.app,
                                     "registryValue": ARGS.url})
        threading.Thread(target=server.shutdown, daemon=True).start()
    signal.signal(signal.SIGTERM, stop)
    threading.Thread(target=registry_loop, daemon=True).start()
    threading.Thread(target=callback_loop, daemon=True).start()
    server.serve_forever()
    sys.exit(0)


if __name__ == "__main__":
    main()
