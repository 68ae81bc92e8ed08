#!/usr/bin/env bash
# test_ctl.sh -- everyday xxl-ctl use against a real scheduler and agent
# (issue 16): job rm takes its runs and leaves no dangling child ids; an
# impossible cron names a date; automatic groups list their live agents.
. "$(dirname "$0")/lib.sh"
xxl_setup
REQ="${XXL_REQ:-$XXL_BUILD/tests/xxl_req}"
req () { "$REQ" "$API" "$@"; }

start_scheduler || exit 1
start_agent agent-a demo-app
check "agent-a registers" wait_for 10 agent_registered demo-app agent-a

# 3. An automatic group lists the live registry, not a manual list it had
ctl group add demo-app --address-list m1,m2 >/dev/null
check "a manual group lists its addresses" \
    test "$(ctl group list | jq -r '.groups[] | select(.appname == "demo-app") | .addressList')" = m1,m2
ctl group update demo-app --auto >/dev/null
check "group list: after --auto, addressList is the registry's" \
    test "$(ctl group list | jq -r '.groups[] | select(.appname == "demo-app") | .addressList')" = agent-a
check "group show: the same" test "$(ctl group show demo-app | jq -r .addressList)" = agent-a
ctl group add late-app >/dev/null
check "an automatic group added with no agent lists none" \
    test "$(ctl group show late-app | jq -r '.addressList // ""')" = ""

# 1. job rm deletes the job's runs and drops it from parents' children
J1=$(ctl job add --group demo-app --handler demoJobHandler --desc child-one --author alice | jq -r .id)
C2=$(ctl job add --group demo-app --handler demoJobHandler --desc child-two --author bob | jq -r .id)
P=$(ctl job add --group demo-app --handler demoJobHandler --desc parent --child "$J1,$C2" | jq -r .id)
L1=$(ctl job trigger "$J1" | jq -r '.logIds[0]')
L2=$(ctl job trigger "$J1" | jq -r '.logIds[0]')
check "the child's runs finish" wait_for 10 bash -c "$CTL --api $API --json log show $L1 | jq -e '.handleCode == 200' && $CTL --api $API --json log show $L2 | jq -e '.handleCode == 200'"
check "job rm reports the runs it deleted" test "$(ctl job rm "$J1" | jq -r .deletedLogs)" = 2
check "the removed job's runs are gone" bash -c "! $CTL --api $API --json log show $L1 >/dev/null 2>&1"
check "log list has none of them" test "$(ctl log list --job "$J1" | jq '.logs | length')" = 0
check "the parent no longer names the removed child" \
    test "$(ctl job show "$P" | jq -r .childJobId)" = "$C2"
check "the parent can be updated after its child was removed" ctl job update "$P" --desc parent2
OUT=$(ctl job add --group demo-app --handler demoJobHandler --child 999999 2>&1)
check "a dangling child id is refused with how to fix it" \
    bash -c "echo '$OUT' | grep -q 'child job 999999 does not exist' && echo '$OUT' | grep -q -- '--child'"
# A run still on an agent when its job is removed finishes there; its
# callback is acknowledged and ignored; nothing runs again
printf 'sleep 1\ntouch %s/slow-done\n' "$T" > "$T/slow.sh"
SJ=$(ctl job add --group demo-app --glue-type GLUE_SHELL --glue-source "$T/slow.sh" | jq -r .id)
SL=$(ctl job trigger "$SJ" | jq -r '.logIds[0]')
check "the slow run is accepted" wait_for 10 field_is "$SL" triggerCode 200
check "job rm while it runs" test "$(ctl job rm "$SJ" | jq -r .id)" = "$SJ"
check "the run finishes on the agent" wait_for 10 test -f "$T/slow-done"
AFTER=$(ctl job add --group demo-app --handler demoJobHandler | jq -r .id)
AL=$(ctl job trigger "$AFTER" | jq -r '.logIds[0]')
check "the scheduler goes on (a later run finishes)" wait_for 10 field_is "$AL" handleCode 200
check "the agent's callback was acknowledged (nothing left to resend)" \
    wait_for 10 bash -c "! grep -q 'callback.*retry\|callback.*failed' '$T/agent-agent-a.log'"
check "no row of the removed job came back" \
    test "$(ctl log list --limit 1000 | jq --argjson j "$SJ" '[.logs[] | select(.jobId == $j)] | length')" = 0

# 2. An impossible cron names the date, not an epoch
OUT=$(ctl job add --group demo-app --handler demoJobHandler --cron '0 0 0 1 1 ? 2020' --start 2>&1)
check "an impossible cron names an ISO date in UTC" \
    bash -c "echo '$OUT' | grep -Eq 'no time after [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z'"
check "... and no raw epoch" bash -c "! echo '$OUT' | grep -Eq '[0-9]{13}'"
OUT=$(ctl job add --group demo-app --handler demoJobHandler --cron '0 0 0 1 1 ? 2020' \
      --timezone Asia/Shanghai --start 2>&1)
check "... and in the job's time zone" \
    bash -c "echo '$OUT' | grep -Eq 'Z \([0-9-]{10}T[0-9:.]{12}\+08:00 Asia/Shanghai\)'"

xxl_done
