#!/usr/bin/env bash
# test_stranger_agent.sh -- an agent written from docs/protocol.md alone
# (tests/test_stranger_agent.py speaks the wire itself): a batch answer's
# msg in msgpack bin is heard as str is; LOG carries the RUN's logDateTime
# for a planned fire whose acceptance is not written yet; a row in doubt
# whose agent answers asks with neither 200 nor "expired:" is logged, and
# ended by a LOG_KILL the agent answers "job thread is not running".
. "$(dirname "$0")/lib.sh"
xxl_setup
start_scheduler || exit 1
ctl group add stranger-b >/dev/null
ctl group add stranger-c >/dev/null
ctl group add stranger-d >/dev/null
JB=$(ctl --get .id job add --group stranger-b --handler anyHandler)
JC=$(ctl --get .id job add --group stranger-c --handler anyHandler --cron '* * * * * ?' --start)
JD=$(ctl --get .id job add --group stranger-d --handler anyHandler)
/usr/bin/python3 "$XXL_SRC/tests/test_stranger_agent.py" "$API" "$AGENTS" "$JB" "$JC" "$JD" > "$T/py.out" 2>&1
rc=$?
cat "$T/py.out"
PASSED=$((PASSED + $(grep -c '^ok - ' "$T/py.out")))
FAILED=$((FAILED + $(grep -c '^FAIL - ' "$T/py.out")))
check "the scheduler logs the agent's answer that says neither" \
    grep -q "answered 400 'jobId: missing', which says neither" "$T/scheduler.log"
check "test_stranger_agent.py ran to its end" test "$rc" -eq 0 -a "$(grep -c '^done$' "$T/py.out")" -eq 1
xxl_done
