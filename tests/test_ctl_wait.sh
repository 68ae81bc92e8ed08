#!/usr/bin/env bash
# test_ctl_wait.sh -- xxl-ctl against a real scheduler and agent (outside
# findings #31, items 10, 11, 14): `job trigger` exits with its runs'
# result (--wait, --timeout; a run failed at once is non-zero without
# --wait too); --param-file takes a parameter from a file or stdin, up to
# the field's limit, refused past it with the limit named; `job next` and
# `cron next --tz` show times in the job's (the expression's) zone with the
# zone, whatever the client machine's.
# XXL_CTL runs the checks with another xxl-ctl (e.g. one built from main).
. "$(dirname "$0")/lib.sh"
xxl_store_blind "xxl-ctl's waits and formats"
xxl_setup
CTL="${XXL_CTL:-$CTL}"

start_scheduler || exit 1
start_agent agent-a demo-app
check "agent-a registers" wait_for 10 agent_registered demo-app agent-a
ctl group add demo-app >/dev/null
ctl group add empty-app >/dev/null

# trigger ARGS...: runs `xxl-ctl job trigger ARGS`; sets RC, OUT, ERR
trigger () {
    OUT=$("$CTL" --api "$API" job trigger "$@" 2>"$T/err")
    RC=$?
    ERR=$(cat "$T/err")
}

# --wait: a succeeding BEAN job exits 0
OK=$(ctl --get .id job add --group demo-app --handler demoJobHandler)
trigger "$OK" --wait --timeout 30
check "--wait: a succeeding run exits 0 ($RC)" test "$RC" = 0
check "... and says so" bash -c "grep -q 'succeeded' <<< '$OUT'"
L=$(ctl log list --job "$OK" | jq -r '.logs[0].id')
check "... once the run has ended" field_is "$L" handleCode 200

# --wait: an unknown handler: non-zero, with the agent's message
BAD=$(ctl --get .id job add --group demo-app --handler noSuchHandler)
trigger "$BAD" --wait --timeout 30
check "--wait: an unknown handler exits 3 ($RC)" test "$RC" = 3
check "... with the agent's message ($ERR)" \
    bash -c "grep -q 'job handler \[noSuchHandler\] not found' <<< '$ERR'"

# A run whose handler fails: its handle message
printf 'echo doomed\nexit 3\n' > "$T/fail.sh"
FAIL=$(ctl --get .id job add --group demo-app --glue-type GLUE_SHELL --glue-source "$T/fail.sh")
trigger "$FAIL" --wait --timeout 30
check "--wait: a failing script exits 3 ($RC)" test "$RC" = 3
check "... naming the handle code ($ERR)" bash -c "grep -q 'handle code 500' <<< '$ERR'"

# No agent in the group: the run fails at once; non-zero without --wait
NONE=$(ctl --get .id job add --group empty-app --handler demoJobHandler)
trigger "$NONE"
check "no agent: exits 3 without --wait ($RC)" test "$RC" = 3
check "... with the reason ($ERR)" \
    bash -c "grep -q 'failed to start (trigger code 500): the address list is empty' <<< '$ERR'"
check "... and the log id on out ($OUT)" bash -c "grep -Eq '^job $NONE triggered: log [0-9]+$' <<< '$OUT'"
J=$("$CTL" --api "$API" --json job trigger "$NONE")
RC=$?
check "--json: exit 3, logIds kept, the error and the run in the one document" \
    bash -c "[ $RC = 3 ] && jq -e '(.logIds | length) == 1 and .result == \"failure\"
             and (.error | test(\"address list is empty\")) and .runs[0].triggerCode == 500' <<< '$J' >/dev/null"

# A refused trigger (no such job) stays 1
trigger 999999
check "an unknown job exits 1 ($RC)" test "$RC" = 1

# --timeout: a run longer than the wait exits 4, soon after the timeout
printf 'sleep 4\n' > "$T/slow.sh"
SLOW=$(ctl --get .id job add --group demo-app --glue-type GLUE_SHELL --glue-source "$T/slow.sh")
START=$(date +%s%N)
trigger "$SLOW" --wait --timeout 1
MS=$(( ($(date +%s%N) - START) / 1000000 ))
check "--timeout: exits 4 ($RC)" test "$RC" = 4
check "... saying the run is still going ($ERR)" bash -c "grep -Eq 'log [0-9]+ still going after 1 s' <<< '$ERR'"
check "... within 2.5 s ($MS ms)" test "$MS" -lt 2500
J=$("$CTL" --api "$API" --json job trigger "$OK" --wait)
RC=$?
check "--json --wait: exit 0, result success, the run's row" \
    bash -c "[ $RC = 0 ] && jq -e '.result == \"success\" and .runs[0].handleCode == 200
             and .runs[0].id == .logIds[0]' <<< '$J' >/dev/null"
check "--timeout without --wait is a usage error" \
    bash -c "'$CTL' --api '$API' job trigger $OK --timeout 5 2>/dev/null; [ \$? = 2 ]"

# --param-file: from stdin, up to executorParam's 64 KiB; past it refused
# with the limit named, and nothing runs
BEFORE=$(ctl log list --job "$OK" | jq '.logs | length')
head -c 1048576 /dev/zero | tr '\0' x > "$T/1m"
"$CTL" --api "$API" job trigger "$OK" --param-file - < "$T/1m" 2>"$T/err"
RC=$?
check "a 1 MiB param through stdin: a usage error ($RC)" test "$RC" = 2
check "... naming the limit ($(cat "$T/err"))" \
    grep -q "longer than executorParam's limit of 65536 bytes" "$T/err"
check "... and nothing was triggered" test "$(ctl log list --job "$OK" | jq '.logs | length')" = "$BEFORE"
head -c 65536 "$T/1m" > "$T/64k"
J=$("$CTL" --api "$API" --json job trigger "$OK" --param-file - --wait < "$T/64k")
check "a 64 KiB param through stdin runs with it" \
    bash -c "jq -e '.result == \"success\" and (.runs[0].executorParam | length) == 65536' <<< '$J' >/dev/null"
printf 'line one\nline two' > "$T/param"
P=$(ctl --get .id job add --group demo-app --handler demoJobHandler --param-file "$T/param")
check "job add --param-file: the file's text is the job's param" \
    test "$(ctl --get .executorParam job show "$P")" = "$(cat "$T/param")"
printf 'other' > "$T/param2"
ctl job update "$P" --param-file "$T/param2" >/dev/null
check "job update --param-file likewise" test "$(ctl --get .executorParam job show "$P")" = other

# job next: a 10:00 Asia/Shanghai job shows 10:00 in its zone on a UTC host
SH=$(ctl --get .id job add --group demo-app --handler demoJobHandler --cron '0 0 10 * * ?' \
     --timezone Asia/Shanghai)
NEXT=$(TZ=UTC "$CTL" --api "$API" job next "$SH" -n 2)
check "job next under TZ=UTC: 10:00 +08:00 Asia/Shanghai (${NEXT//$'\n'/; })" \
    bash -c "[ \$(grep -Ec '^[0-9]{4}-[0-9]{2}-[0-9]{2} 10:00:00 \+08:00 Asia/Shanghai$' <<< '$NEXT') = 2 ]"
check "job next --json still gives epoch ms" \
    bash -c "TZ=UTC '$CTL' --api '$API' --json job next $SH -n 2 | jq -e '.next | length == 2 and all(type == \"number\")' >/dev/null"
UTCJ=$(ctl --get .id job add --group demo-app --handler demoJobHandler --cron '0 30 6 * * ?')
NEXT=$(TZ=Asia/Tokyo "$CTL" --api "$API" job next "$UTCJ" -n 1)
check "a job without a zone: UTC, labelled, on a Tokyo host ($NEXT)" \
    bash -c "grep -Eq '^[0-9-]{10} 06:30:00 \+00:00 UTC$' <<< '$NEXT'"
NEXT=$(TZ=UTC "$CTL" cron next '0 0 10 * * ?' --tz Asia/Shanghai -n 1 --from 1796000000000)
check "cron next --tz under TZ=UTC: in that zone, labelled ($NEXT)" \
    test "$NEXT" = "2026-11-30 10:00:00 +08:00 Asia/Shanghai"

xxl_done
