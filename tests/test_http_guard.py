#!/usr/bin/env python3
"""test_http_guard.py -- the HTTP server against clients that hold its
connections (started by tests/test_http_guard.sh, which exports HTTP, the
server's "HOST:PORT" with http/request_timeout_s = TIMEOUT and
http/max_body = MAX_BODY).  Prints one line per check ("ok - ..." /
"FAIL - ..."), then "done".  Timings are bounds, generous ones."""

import os
import socket
import sys
import threading
import time

sys.dont_write_bytecode = True     # (no __pycache__ in the source tree)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xxl_tap import check, closed, exchange  # noqa: E402

ADDRESS = os.environ["HTTP"]
HOST, PORT = ADDRESS.rsplit(":", 1)
PORT = int(PORT)
TIMEOUT = int(os.environ["TIMEOUT"])
MAX_BODY = int(os.environ["MAX_BODY"])


def request(path, source, method="GET", timeout=5.0):
    """(status line, seconds taken) of one request from source; status
    line "" when no answer came within timeout"""
    start = time.monotonic()
    try:
        c = socket.create_connection((HOST, PORT), timeout=timeout, source_address=(source, 0))
        c.sendall(b"%s %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                  % (method.encode(), path.encode()))
        got = b""
        while b"\r\n" not in got:
            chunk = c.recv(4096)
            if not chunk:
                break
            got += chunk
        c.close()
        return got.split(b"\r\n", 1)[0].decode(), time.monotonic() - start
    except OSError:
        return "", time.monotonic() - start


# --- the allowed case first ----------------------------------------------
line, _ = request("/healthz", "127.0.5.9")
check("/healthz answers 200 to a plain client", line.endswith("200 OK"), line)

# --- slowloris: 5 addresses x 16 connections, a header line every second -
ADDRESSES = ["127.0.5.%d" % i for i in range(1, 6)]
slow = []
for source in ADDRESSES:
    for i in range(16):
        try:
            c = socket.create_connection((HOST, PORT), timeout=5, source_address=(source, 0))
            c.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            slow.append(c)
        except OSError:
            pass
opened = time.monotonic()
stop = threading.Event()


def drip():
    """one more header line on each slow connection every second"""
    n = 0
    while not stop.wait(1.0):
        n += 1
        for c in slow:
            try:
                c.sendall(b"X-Drip-%d: %d\r\n" % (n, n))
            except OSError:
                pass


dripper = threading.Thread(target=drip, daemon=True)
dripper.start()
# (the slots taken: 64 of the 80 stay open, 16 past the total are closed)
time.sleep(0.5)
held = sum(not closed(c) for c in slow)
check("80 slow connections from 5 addresses: the 64 ordinary slots are taken", held >= 60, held)

answers = [request("/healthz", "127.0.5.9") for _ in range(3)]
check("... /healthz from a sixth address still answers 200, within 5 s, each time",
      all(line.endswith("200 OK") and took < 5 for line, took in answers), answers)
line, took = request("/readyz", "127.0.5.10")
check("... and /readyz (200 or 503, an answer)", (" 200 " in line or " 503 " in line) and took < 5,
      (line, took))
line, took = request("/api/v1/ping", "127.0.5.11")
check("... any other path in a kept slot: 503 at once", " 503 " in line and took < 5, (line, took))

# One kept slot per address: a second half-sent request from an address
# already in one is closed at once
a = socket.create_connection((HOST, PORT), timeout=5, source_address=("127.0.5.12", 0))
a.sendall(b"GET /healthz HTTP/1.1\r\n")
b = socket.create_connection((HOST, PORT), timeout=5, source_address=("127.0.5.12", 0))
b.sendall(b"GET /healthz HTTP/1.1\r\n")
deadline = time.monotonic() + 5
while time.monotonic() < deadline and not closed(b):
    time.sleep(0.05)
check("... a second kept slot for one address is refused (closed at once)", closed(b))
# ... and a kept slot's half request is closed within its 2 s
deadline = time.monotonic() + 8
while time.monotonic() < deadline and not closed(a):
    time.sleep(0.05)
check("... a kept slot's half-sent request is closed within a few seconds", closed(a))
a.close()
b.close()

# The slow connections are cut at their deadline although bytes keep coming
deadline = opened + TIMEOUT + 10
while time.monotonic() < deadline and sum(not closed(c) for c in slow) > 0:
    time.sleep(0.1)
left = sum(not closed(c) for c in slow)
took = time.monotonic() - opened
check("a header line every second does not stretch http/request_timeout_s: all closed"
      " within its %d s (and a margin)" % TIMEOUT, left == 0, (left, took))
check("... not before it", took >= TIMEOUT - 1, took)
stop.set()
dripper.join()
for c in slow:
    c.close()
line, took = request("/api/v1/ping", "127.0.5.1")
check("once they are gone, an address of theirs is served again (401: no credentials)",
      " 401 " in line, (line, took))

def metric(name):
    got = exchange(ADDRESS, b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    for line in got.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return -1


closed_at_deadline = metric('xxl_http_connections_closed_total{reason="deadline"}')
check("/metrics counts the connections closed at their deadline", closed_at_deadline >= 64,
      closed_at_deadline)
check("... and the one refused a health slot",
      metric('xxl_http_connections_closed_total{reason="no_slot"}') >= 1)

# --- a chunked body past http/max_body: 413 at the limit ----------------
c = socket.create_connection((HOST, PORT), timeout=10, source_address=("127.0.5.20", 0))
c.sendall(b"POST /api/v1/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
          b"Transfer-Encoding: chunked\r\n\r\n")
piece = b"x" * 65536
sent = 0
got = b""
start = time.monotonic()
c.setblocking(False)
# (sends up to 8 MiB, never the last chunk, reading as it goes)
while time.monotonic() - start < 5 and b"\r\n" not in got:
    try:
        if sent < 8 * 1024 * 1024:
            sent += c.send(b"%x\r\n" % len(piece) + piece + b"\r\n")
        else:
            time.sleep(0.05)
    except BlockingIOError:
        time.sleep(0.01)
    except OSError:
        pass
    try:
        chunk = c.recv(4096)
        if chunk:
            got += chunk
        elif chunk == b"":
            break
    except BlockingIOError:
        pass
    except OSError:
        break
took = time.monotonic() - start
check("a chunked body past http/max_body: 413 within 5 s", got.startswith(b"HTTP/1.1 413"),
      (got[:100], sent, took))
check("... before 8 MiB were read", sent < 8 * 1024 * 1024, sent)
c.setblocking(True)
c.settimeout(5)
end = time.monotonic() + 5
gone = False
while time.monotonic() < end:
    try:
        chunk = c.recv(65536)
        if not chunk:
            gone = True
            break
    except OSError:
        gone = True
        break
check("... and the connection closed", gone)
c.close()
line, _ = request("/healthz", "127.0.5.20")
check("... the server stays healthy", line.endswith("200 OK"), line)
# The allowed case: a chunked body under the limit is read and judged
body = b'{"username": "nobody", "password": "wrong-password"}'
got = exchange(ADDRESS, b"POST /api/v1/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
               b"Connection: close\r\nTransfer-Encoding: chunked\r\n\r\n"
               + b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n", "127.0.5.21")
check("a chunked body under the limit is read and judged (401: no such user)",
      got.startswith(b"HTTP/1.1 401"), got[:200])

print("done")
sys.exit(0)
