#!/usr/bin/env bash
# test_http_guard.sh -- the HTTP server against clients that hold its
# connections: a slowloris from 5 addresses (16 connections each, a header
# line every second) cannot keep /healthz and /readyz from a sixth address
# from answering, and its connections are closed at http/request_timeout_s
# although bytes keep coming; a chunked body past http/max_body gets 413 at
# the limit, not at its end.  The checks are in tests/test_http_guard.py.
. "$(dirname "$0")/lib.sh"
xxl_store_blind "HTTP's connection limits"
xxl_setup
cat >> "$T/scheduler.cfg" <<CFG
    http
        max_body = 65536
        request_timeout_s = 4
CFG
export XXL_SCHEDULER_ARGS="--http 127.0.0.1:0"
start_scheduler || exit 1
HTTP=$HTTP_EP TIMEOUT=4 MAX_BODY=65536 python3 "$XXL_SRC/tests/test_http_guard.py" > "$T/py.out" 2>&1
rc=$?
cat "$T/py.out"
PASSED=$((PASSED + $(grep -c '^ok - ' "$T/py.out")))
FAILED=$((FAILED + $(grep -c '^FAIL - ' "$T/py.out")))
check "test_http_guard.py ran to its end" test "$rc" -eq 0 -a "$(grep -c '^done$' "$T/py.out")" -eq 1
xxl_done
