"""xxl_tap.py -- what the Python test scripts run by the bash tests share:
the check line ("ok - WHAT" or "FAIL - WHAT DETAIL", one a line, flushed:
the bash side counts them), and whether a socket's peer closed it."""

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
