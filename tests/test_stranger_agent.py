"""test_stranger_agent.py -- an agent written from docs/protocol.md alone,
as an outside team's would be: what it sees on the wire.

Usage: test_stranger_agent.py API AGENTS JOB_BATCH JOB_CRON JOB_DOUBT
  JOB_BATCH: a job of app "stranger-b" (no schedule); JOB_CRON: a started
  one-second CRON job of app "stranger-c"; JOB_DOUBT: a job of app
  "stranger-d" (no schedule, no retries).
- A batch answer whose item's msg is msgpack bin counts as the same text
  in str: "expired: ..." sends the run again (protocol.md, Strings).
- LOG's logDateTime is the one the RUN carried, also for a planned fire
  whose acceptance is not written yet (the agent finds its log by both)."""

import os
import random
import sys
import time

import msgpack
import zmq

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xxl_tap import check  # noqa: E402

API, AGENTS = sys.argv[1], sys.argv[2]
JOB_BATCH, JOB_CRON, JOB_DOUBT = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
ctx = zmq.Context()


def pk(m):
    return msgpack.packb(m, use_bin_type=True)


def up(b):
    return msgpack.unpackb(b, raw=False, strict_map_key=False)


class Agent:
    def __init__(self, app, address, batch=0):
        self.s = ctx.socket(zmq.DEALER)
        self.s.setsockopt(zmq.LINGER, 0)
        self.s.connect(AGENTS)
        self.app, self.address, self.batch = app, address, batch
        self.next_beat = 0
        self.id = random.randint(1, 1 << 30)

    def beat(self):
        if time.time() < self.next_beat:
            return
        self.id += 1
        m = {"v": 1, "t": "REGISTER", "id": self.id, "registryKey": self.app,
             "registryValue": self.address, "runLease": 10}
        if self.batch:
            m["runBatch"] = self.batch
        self.s.send(pk(m))
        self.next_beat = time.time() + 2

    def recv(self, timeout_ms):
        self.beat()
        if not self.s.poll(timeout_ms):
            return None
        return up(self.s.recv())

    def reply(self, m, code, msg):
        self.s.send(pk({"v": 1, "t": "REPLY", "id": m["id"], "code": code, "msg": msg}))


client = ctx.socket(zmq.DEALER)
client.setsockopt(zmq.LINGER, 0)
client.connect(API)
cid = [1000]


def call(t, **fields):
    cid[0] += 1
    m = {"v": 1, "t": t, "id": cid[0]}
    m.update(fields)
    client.send(pk(m))
    while client.poll(10000):
        r = up(client.recv())
        if r.get("id") == cid[0]:
            return r
    return {"code": 0, "msg": "no reply"}


def until(agent, seconds, fn):
    """feeds agent's messages to fn until it returns True or time is up"""
    end = time.time() + seconds
    while time.time() < end:
        m = agent.recv(100)
        if m is not None and fn(m):
            return True
    return False


# 1. A batch item's msg in bin: "expired: ..." is heard, the run goes again
b = Agent("stranger-b", "stranger-b1", batch=10)
until(b, 1.5, lambda m: False)          # registered (its REPLY read)
r = call("JOB_TRIGGER", jobId=JOB_BATCH)
log = (r.get("content") or {}).get("logIds", [0])[0]
check("a trigger of the batch agent's job gives a log id", r.get("code") == 200 and log > 0, r)
sends = []


def on_batch(m):
    if m.get("t") != "RUN" or "runs" not in m:
        return False
    items = [i for i in m["runs"] if i.get("logId") == log]
    if not items:
        return False
    sends.append(m)
    answers = []
    for i in m["runs"]:
        if len(sends) == 1:
            answers.append({"code": 500, "msg": b"expired: a stranger's bin text"})
        else:
            answers.append({"code": 200, "msg": None})
    b.s.send(pk({"v": 1, "t": "REPLY", "id": m["id"], "code": 200, "content": answers}))
    return len(sends) >= 2


check("an item answered 'expired: ...' in bin: the run is sent again",
      until(b, 20, on_batch), "%d send(s)" % len(sends))
# (the acceptance is written within seconds of the 200)
end = time.time() + 10
shown = {}
while time.time() < end:
    until(b, 0.2, lambda m: False)
    shown = call("LOG_SHOW", logId=log)
    if (shown.get("content") or {}).get("triggerCode") == 200:
        break
check("... and taken the second time (triggerCode 200)",
      (shown.get("content") or {}).get("triggerCode") == 200, shown)

# 2. LOG's logDateTime is the RUN's, for a planned fire just accepted
c = Agent("stranger-c", "stranger-c1")
pairs = []


def on_cron(m):
    if m.get("t") == "RUN" and "runs" not in m and m.get("jobId") == JOB_CRON:
        c.reply(m, 200, None)
        pairs.append([m["logId"], m["logDateTime"], None])
        # at once: the acceptance is written 0.5 s after the answer at the
        # earliest, so the row still holds the time it was planned
        cid[0] += 1
        client.send(pk({"v": 1, "t": "LOG_CAT", "id": cid[0], "logId": m["logId"],
                        "fromLineNum": 1}))
        return False
    if m.get("t") == "LOG":
        for p in pairs:
            if p[0] == m.get("logId") and p[2] is None:
                p[2] = m.get("logDateTime")
        c.reply(m, 200, None)
        while client.poll(0):
            client.recv()
        return sum(1 for p in pairs if p[2] is not None) >= 3
    if m.get("t") in ("RUN", "KILL", "BEAT", "IDLE_BEAT"):
        c.reply(m, 200, None)
    return False


got = until(c, 25, on_cron)
seen = [p for p in pairs if p[2] is not None]
check("three planned fires: a LOG_CAT right after each RUN's 200 reached the agent",
      got and len(seen) >= 3, pairs)
check("... each LOG's logDateTime is its RUN's",
      seen and all(p[1] == p[2] for p in seen), pairs)

# 3. A row in doubt whose agent answers its asks with neither 200 nor
# "expired: ...": it stays in doubt while the agent registers, and a
# LOG_KILL that the agent answers "job thread is not running" ends it
d = Agent("stranger-d", "stranger-d1")
until(d, 1.5, lambda m: False)
r = call("JOB_TRIGGER", jobId=JOB_DOUBT)
dlog = (r.get("content") or {}).get("logIds", [0])[0]
check("a trigger of the doubting agent's job gives a log id", r.get("code") == 200 and dlog > 0, r)
runs, asks = [], []


def is_ask(m):
    return m.get("t") == "RUN" and m.get("logId") == dlog and "jobId" not in m


def on_doubt(m):
    if m.get("t") == "RUN" and m.get("logId") == dlog and "jobId" in m:
        runs.append(m)                  # the RUN itself: never answered
    elif is_ask(m):
        asks.append(m)
        d.reply(m, 400, "jobId: missing")   # checks its fields before expireTime
        return len(asks) >= 2
    elif m.get("t") in ("BEAT", "IDLE_BEAT"):
        d.reply(m, 200, None)
    return False


check("the RUN left unanswered is asked about twice (expireTime 1), each answered 400",
      until(d, 25, on_doubt) and len(runs) == 1 and all(a.get("expireTime") == 1 for a in asks),
      {"runs": runs, "asks": asks})
row = call("LOG_SHOW", logId=dlog).get("content") or {}
check("... the row stays in doubt: triggerCode 0, handleCode 0",
      row.get("triggerCode") == 0 and row.get("handleCode") == 0, row)


def kill_answered(code, msg):
    """a LOG_KILL of dlog whose KILL the agent answers code/msg: (KILLs, reply)"""
    cid[0] += 1
    kid = cid[0]
    client.send(pk({"v": 1, "t": "LOG_KILL", "id": kid, "logId": dlog}))
    kills = []

    def on_kill(m):
        if m.get("t") == "KILL":
            kills.append(m)
            d.reply(m, code, msg)
            return True
        if is_ask(m):
            d.reply(m, 400, "jobId: missing")
        return False

    until(d, 10, on_kill)
    end = time.time() + 10
    while time.time() < end:
        until(d, 0.1, lambda m: is_ask(m) and d.reply(m, 400, "jobId: missing"))
        while client.poll(0):
            x = up(client.recv())
            if x.get("id") == kid:
                return kills, x
    return kills, None


kills, r = kill_answered(500, "no thread of that job here")
check("a LOG_KILL whose KILL the agent refuses with another text: its answer as it came",
      len(kills) == 1 and kills[0].get("jobId") == JOB_DOUBT and r is not None
      and r.get("code") == 500 and r.get("msg") == "no thread of that job here", [kills, r])
row = call("LOG_SHOW", logId=dlog).get("content") or {}
check("... the row still in doubt", row.get("triggerCode") == 0 and row.get("handleCode") == 0, row)
kills, r = kill_answered(500, "job thread is not running")
check("a LOG_KILL the agent answers 'job thread is not running': 200, killed",
      len(kills) == 1 and r is not None and r.get("code") == 200
      and "killed" in (r.get("msg") or ""), [kills, r])
row = call("LOG_SHOW", logId=dlog).get("content") or {}
check("... the row ends as a failed trigger, killed by a user",
      row.get("triggerCode") == 500 and row.get("handleCode") == 0
      and "killed by a user (log kill)" in (row.get("triggerMsg") or ""), row)
later = []
until(d, 5, lambda m: (is_ask(m) or (m.get("t") == "RUN" and m.get("logId") == dlog))
      and later.append(m) is None and False)
check("... and is neither asked about nor sent again (5 s)", not later, later)

# 4. A LOG_KILL while an ask is in flight: the ask's "expired: ..." does
# not route the run again before the KILL's answer ends it
r = call("JOB_TRIGGER", jobId=JOB_DOUBT)
dlog2 = (r.get("content") or {}).get("logIds", [0])[0]
held = []


def on_ask2(m):
    if m.get("t") == "RUN" and m.get("logId") == dlog2 and "jobId" not in m:
        held.append(m)                  # the ask: held unanswered
        return True
    if m.get("t") in ("BEAT", "IDLE_BEAT"):
        d.reply(m, 200, None)
    return False


check("a second row's RUN left unanswered is asked about", until(d, 25, on_ask2), held)
cid[0] += 1
kid = cid[0]
client.send(pk({"v": 1, "t": "LOG_KILL", "id": kid, "logId": dlog2}))
kills = []
until(d, 10, lambda m: m.get("t") == "KILL" and kills.append(m) is None)
resent = []
if held and kills:
    d.reply(held[0], 500, "expired: never took it")
    d.reply(kills[0], 500, "job thread is not running")
r = None
end = time.time() + 10
while r is None and time.time() < end:
    until(d, 0.1, lambda m: m.get("t") == "RUN" and m.get("logId") == dlog2
          and resent.append(m) is None and False)
    while client.poll(0):
        x = up(client.recv())
        if x.get("id") == kid:
            r = x
check("the ask answered 'expired:' while the KILL waits, then the KILL: 200, killed",
      len(kills) == 1 and r is not None and r.get("code") == 200, [kills, r])
until(d, 5, lambda m: m.get("t") == "RUN" and m.get("logId") == dlog2
      and resent.append(m) is None and False)
row = call("LOG_SHOW", logId=dlog2).get("content") or {}
check("... the row a failed trigger, killed, and its run never sent again",
      row.get("triggerCode") == 500 and "killed by a user (log kill)" in (row.get("triggerMsg") or "")
      and not resent, [row, resent])
print("done")
