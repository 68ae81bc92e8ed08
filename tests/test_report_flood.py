#!/usr/bin/python3
# test_report_flood.py API COUNT -- sends COUNT REPORT requests on one
# DEALER without waiting, then reads every reply; prints one JSON line:
# {"replies": N, "codes": {"200": a, "429": b, ...}, "msg429": "..."}
import json
import sys
import time

import msgpack
import zmq

api, count = sys.argv[1], int(sys.argv[2])
ctx = zmq.Context()
sock = ctx.socket(zmq.DEALER)
sock.linger = 0
sock.sndhwm = 0
sock.rcvhwm = 0
sock.connect(api)
for i in range(1, count + 1):
    sock.send(msgpack.packb({"v": 1, "t": "REPORT", "id": i}))
codes, msg429, seen = {}, "", set()
deadline = time.time() + 60
while len(seen) < count and time.time() < deadline:
    if not sock.poll(1000):
        continue
    reply = msgpack.unpackb(sock.recv(), raw=False)
    seen.add(reply.get("id"))
    code = str(reply.get("code"))
    codes[code] = codes.get(code, 0) + 1
    if code == "429" and not msg429:
        msg429 = reply.get("msg") or ""
print(json.dumps({"replies": len(seen), "codes": codes, "msg429": msg429}))
