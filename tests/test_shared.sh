#!/usr/bin/env bash
# test_shared.sh -- two schedulers sharing one store.  One plans (and so
# routes and writes its triggers ahead); a job stopped through the other
# must fire nothing more: the planner sees the other scheduler's write
# (PRAGMA data_version) and checks its planned rows in the store before
# they go, so no run reaches an agent without its row.
. "$(dirname "$0")/lib.sh"
xxl_setup

# The second scheduler plans nothing here: its scans are an hour apart
# (its first, at start, finds no job yet)
cp "$T/scheduler.cfg" "$T/scheduler-1.cfg"
printf '    planner\n        scan = 3600000\n' >> "$T/scheduler.cfg"
start_scheduler || exit 1
API2=$API; AGENTS2=$AGENTS
cp "$T/scheduler-1.cfg" "$T/scheduler.cfg"
start_scheduler || exit 1
API1=$API; AGENTS1=$AGENTS
AGENTS="$AGENTS1,$AGENTS2" start_agent sh-a shared-app
check "agent registers with the first" wait_for 10 agent_registered shared-app sh-a
API=$API2
check "agent registers with the second" wait_for 10 agent_registered shared-app sh-a
API=$API1
ctl group add shared-app >/dev/null

J=$(ctl job add --group shared-app --handler demoJobHandler --cron '* * * * * ?' --start | jq -r .id)
check "a one-second job runs" wait_for 15 job_ran "$J" 3
# (log list shows no planned row before its time: log show the ids after
# the newest it lists)
check "the first scheduler planned it ahead (rows routed before their time)" bash -c "
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
xxl_done
