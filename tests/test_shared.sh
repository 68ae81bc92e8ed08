#!/usr/bin/env bash
# test_shared.sh -- two schedulers sharing one store.  Each plans the jobs
# of the shares it holds (leases, xxl_lease.c): the two split the 16
# shares between them.  A job stopped through the scheduler that does not
# plan it must fire nothing more: its planner sees the other scheduler's
# write (data_version) and checks its planned rows in the store before
# they go, so no run reaches an agent without its row.
# Last, a RUN sent by the scheduler that does not hold its job's share,
# to an agent frozen then killed: its answer never comes, so that
# scheduler holds it in doubt, and fails it once the agent's run lease
# (5 s here) has passed unheard (before: its doubt was dropped at once,
# the share being another's, and the row stayed unanswered for good).
XXL_RUN_LEASE=5
. "$(dirname "$0")/lib.sh"
xxl_setup
REQ="$XXL_REQ"

start_scheduler || exit 1
API1=$API; AGENTS1=$AGENTS
start_scheduler || exit 1
API2=$API; AGENTS2=$AGENTS
shares () { "$REQ" "$1" PING | jq -c '[.content.shares[]]'; }
balanced () {
    local a b; a=$(shares "$API1") && b=$(shares "$API2") || return 1
    [ "$(jq -n --argjson a "$a" --argjson b "$b" '($a | length) == 8 and ($b | length) == 8
        and (($a + $b) | unique | length) == 16')" = true ]
}
check "the schedulers split the 16 shares, 8 each" wait_for 15 balanced
AGENTS="$AGENTS1,$AGENTS2" start_agent sh-a shared-app
check "agent registers with the first" wait_for 10 agent_registered shared-app sh-a
API=$API2
check "agent registers with the second" wait_for 10 agent_registered shared-app sh-a
API=$API1
ctl group add shared-app >/dev/null

J=$(ctl --get .id job add --group shared-app --handler demoJobHandler --cron '* * * * * ?' --start)
# The scheduler that holds the job's share plans it: it is API1 below
if shares "$API2" | jq -e --argjson s $((J % 16)) 'index($s) != null' >/dev/null; then
    X=$API1; API1=$API2; API2=$X; API=$API1
fi
check "a one-second job runs" wait_for 15 job_ran "$J" 3
# (log list shows no planned row before its time: log show the ids after
# the newest it lists)
check "the scheduler holding its share planned it ahead (rows routed before their time)" bash -c "
    top=\$($CTL --api $API1 --json log list --job $J --limit 1 | jq '.logs[0].id');
    for id in \$(seq \$((top + 1)) \$((top + 8))); do
        $CTL --api $API1 --json log show \$id 2>/dev/null | jq -e --argjson j $J '
            .jobId == \$j and .handleCode == 0 and .scheduleTime > (now * 1000)
            and .executorAddress != null' >/dev/null && exit 0;
    done; exit 1"
"$CTL" --api "$API2" --json job stop "$J" >/dev/null
STOPPED=$(date +%s%3N)
check "the pre-read window passes (a witness job runs seven times)" past_preread shared-app
check "the job stopped through the other scheduler fired nothing planned after" bash -c "
    $CTL --api $API1 --json log list --job $J --limit 100 | jq -e --argjson s $STOPPED '
        all(.logs[]; .scheduleTime <= \$s + 1000)' >/dev/null"
finished () { [ "$(ctl log list --job "$J" --limit 100 | jq '[.logs[] | select(.handleCode == 0)] | length')" = 0 ]; }
check "its rows all ended" wait_for 10 finished
check "every run log on the agent belongs to a row in the store" \
    test -z "$(orphan_logs "$T/logs-sh-a")"

# (API1 holds J's share: the trigger goes through API2)
J2=$(ctl --get .id job add --group shared-app --handler demoJobHandler)
until [ $((J2 % 16)) = $((J % 16)) ]; do
    J2=$(ctl --get .id job add --group shared-app --handler demoJobHandler)
done
AP=$APID_sh_a
kill -STOP "$AP"
L=$("$CTL" --api "$API2" --json job trigger "$J2" | jq -r '.logIds[0]')
check "the trigger through the scheduler without the job's share gives a log id" \
    test "${L:-0}" -gt 0 2>/dev/null
in_doubt () { grep -q "log $L: no answer from sh-a within 5000 ms; asking it again" "$T/scheduler.log"; }
# explain: after a failed check below, the scheduler's lines about the
# row and its agent, then the row (indented: scripts/test's digest shows
# the first 4 lines after a failure)
explain () {
    { grep -E "log $L[:, ]" "$T/scheduler.log"
      echo "trigger through $API2 gave log id '$L'; its row:"
      ctl log show "$L" 2>&1 | jq -c '{triggerCode, triggerMsg, handleCode}' 2>&1
      grep -F "sh-a" "$T/scheduler.log" | tail -n 6; } | sed 's/^/    /'
}
check "a RUN unanswered, sent by the scheduler without its share, is held in doubt" wait_for 20 in_doubt
in_doubt || explain
kill -KILL "$AP"
ended () { ctl log show "$L" | jq -e '.triggerCode == 500 and (.triggerMsg | test("no answer from the agent"))' >/dev/null; }
check "its agent gone, the row fails once the agent's run lease has passed" wait_for 30 ended
ended || explain
xxl_done
