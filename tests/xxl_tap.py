"""xxl_tap.py -- what the Python test scripts run by the bash tests share:
the check line ("ok - WHAT" or "FAIL - WHAT DETAIL", one a line, flushed:
the bash side counts them), whether a socket's peer closed it, and one raw
exchange with a server."""

import socket
import sys


def check(what, cond, detail=""):
    if cond:
        print("ok - " + what)
    else:
        print("FAIL - %s %s" % (what, detail))
    sys.stdout.flush()


def closed(c):
    """True when the server closed connection c (reads at most a byte)"""
    try:
        c.settimeout(0.01)
        return c.recv(1) == b""
    except socket.timeout:
        return False
    except OSError:
        return True


def exchange(address, data, source=None, timeout=20):
    """sends data on a new connection to address ("HOST:PORT", from the
    address source) and returns what the server answers until it closes
    (or until timeout seconds pass without a byte)"""
    name, port = address.rsplit(":", 1)
    c = socket.create_connection((name, int(port)), timeout=timeout,
                                 source_address=(source, 0) if source else None)
    c.sendall(data)
    got = b""
    try:
        while True:
            chunk = c.recv(65536)
            if not chunk:
                break
            got += chunk
    except socket.timeout:
        pass
    c.close()
    return got
