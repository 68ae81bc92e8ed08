#!/usr/bin/env bash
# test_misfire.sh -- an outage longer than the pre-read window: a
# FIRE_ONCE_NOW job fires once for the whole outage (not once for its
# planned row and again for its next time), a DO_NOTHING job not at all;
# both go on at their next planned time; the DO_NOTHING misfire's log line
# reads as a date.
. "$(dirname "$0")/lib.sh"
xxl_setup
cat >> "$T/scheduler.cfg" <<CFG
    planner
        preread = 1000
        scan = 100
CFG
export XXL_SCHEDULER_ARGS="--http 127.0.0.1:0"
start_scheduler || exit 1
skipped () { curl -sf "http://$HTTP_EP/metrics" | sed -n 's/^xxl_fires_skipped_total //p'; }
ctl group add mf-app >/dev/null
start_agent m1 mf-app
wait_for 10 agent_registered mf-app m1
ONCE=$(ctl --get .id job add --group mf-app --handler demoJobHandler --cron '0/2 * * * * ?' \
       --misfire FIRE_ONCE_NOW --start)
SKIP=$(ctl --get .id job add --group mf-app --handler demoJobHandler --cron '0/2 * * * * ?' \
       --timezone Asia/Shanghai --start)
check "the FIRE_ONCE_NOW job runs" wait_for 10 job_ran "$ONCE" 1
check "/metrics counts no skipped fire before the outage" test "$(skipped)" = 0
# Stopped 1.3 s after a fire, with the next one (0.7 s on) planned already
sleep 1.3
kill -TERM "$SPID"; wait "$SPID" 2>/dev/null
down_at=$(date +%s%3N)
sleep 5
check "the scheduler starts again on its endpoints" start_scheduler "$API" "$AGENTS" || { xxl_done; exit 1; }
up_at=$(date +%s%3N)
types () { ctl log list --job "$1" --limit 1000 | jq -r '[.logs[] | select(.triggerType == "'"$2"'")] | length'; }
regular_after () {
    [ "$(ctl log list --job "$1" --limit 1000 | jq --argjson t "$up_at" \
        '[.logs[] | select(.triggerType == "CRON" and .scheduleTime > $t and .handleCode == 200)] | length')" -ge 2 ]
}
check "both jobs go on at their planned times after the restart" wait_for 15 regular_after "$ONCE"
wait_for 5 regular_after "$SKIP"
check "FIRE_ONCE_NOW fired once for the outage" test "$(types "$ONCE" MISFIRE)" = 1
check "... and that run succeeded" bash -c "[ \"\$($CTL --api $API --json log list --job $ONCE | jq '[.logs[] | select(.triggerType == \"MISFIRE\" and .handleCode == 200)] | length')\" = 1 ]"
check "DO_NOTHING did not fire for it" test "$(types "$SKIP" MISFIRE)" = 0
check "... and /metrics counts the fires it skipped (xxl_fires_skipped_total)" \
    test "$(skipped)" -ge 1
missed () {
    ctl log list --job "$1" --limit 1000 | jq --argjson a "$down_at" --argjson b "$up_at" \
        '[.logs[] | select(.triggerType == "CRON" and .scheduleTime > $a + 1500 and .scheduleTime < $b - 1500)] | length'
}
check "no missed instant ran late as CRON (FIRE_ONCE_NOW)" test "$(missed "$ONCE")" = 0
check "no missed instant ran late as CRON (DO_NOTHING)" test "$(missed "$SKIP")" = 0
# The log says when, readably: ISO 8601 in UTC and in the job's zone
check "a DO_NOTHING misfire's log line gives the instant in UTC and the job's zone" \
    grep -Eq "planner: job $SKIP misfired at [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]{12}Z \([0-9-]{10}T[0-9:.]{12}\+08:00 Asia/Shanghai\) \([0-9]+ ms late\); DO_NOTHING" "$T/scheduler.log"
check "... and no misfire line has a raw epoch" bash -c "! grep -Eq 'misfired at [0-9]{13}' '$T/scheduler.log'"
xxl_done
