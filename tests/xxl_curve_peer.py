#!/usr/bin/python3
# xxl_curve_peer.py -- a stand-in scheduler socket that speaks CURVE, for
# the client side of keys (tests/test_keys.sh): a ROUTER that is a CURVE
# server with the keys of a certificate made by `xxl-ctl keygen`, and no
# ZAP handler (so it takes any client key).  It writes every message it
# reads, as one JSON line, to LOG, and answers:
#   api     every request: REPLY 200 with content {"agents": []}
#   agents  REGISTER: REPLY 200 with content {"now"}; after the first one
#           it sends the agent a BEAT (id 7) and a RUN of demoJobHandler
#           (id 8, logId 1), whose REPLYs it logs, as the run's CALLBACK
# Usage: xxl_curve_peer.py api|agents CERT_SECRET READY LOG
# It binds tcp://127.0.0.1 on a free port and writes "endpoint=EP" to READY.
import json
import os
import re
import sys
import time

import msgpack
import zmq


def secret_cert(path):
    text = open(path).read()
    public = re.search(r'public-key\s*=\s*"([^"]{40})"', text).group(1)
    secret = re.search(r'secret-key\s*=\s*"([^"]{40})"', text).group(1)
    return public.encode(), secret.encode()


def main():
    mode, cert, ready, log = sys.argv[1:5]
    public, secret = secret_cert(cert)
    ctx = zmq.Context()
    sock = ctx.socket(zmq.ROUTER)
    sock.curve_publickey = public
    sock.curve_secretkey = secret
    sock.curve_server = True
    sock.linger = 0
    port = sock.bind_to_random_port("tcp://127.0.0.1")
    beat_sent = False
    with open(log, "a") as out:
        with open(ready + ".tmp", "w") as f:
            f.write("endpoint=tcp://127.0.0.1:%d\n" % port)
        os.rename(ready + ".tmp", ready)
        while True:
            frames = sock.recv_multipart()
            if len(frames) != 2:
                continue
            who, data = frames
            msg = msgpack.unpackb(data, raw=False)
            out.write(json.dumps(msg, default=str) + "\n")
            out.flush()
            if msg.get("t") == "REPLY":
                continue
            reply = {"v": 1, "t": "REPLY", "id": msg.get("id"), "code": 200, "msg": None}
            if mode == "api":
                reply["content"] = {"agents": []}
            else:
                reply["content"] = {"now": int(time.time() * 1000)}
            sock.send_multipart([who, msgpack.packb(reply)])
            if mode == "agents" and msg.get("t") == "REGISTER" and not beat_sent:
                now = int(time.time() * 1000)
                sock.send_multipart([who, msgpack.packb({"v": 1, "t": "BEAT", "id": 7})])
                sock.send_multipart([who, msgpack.packb({
                    "v": 1, "t": "RUN", "id": 8, "jobId": 1, "logId": 1, "logDateTime": now,
                    "executorHandler": "demoJobHandler", "glueType": "BEAN",
                    "expireTime": now + 60000})])
                beat_sent = True


if __name__ == "__main__":
    main()
