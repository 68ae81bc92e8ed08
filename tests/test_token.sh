#!/usr/bin/env bash
# test_token.sh -- with an access token set, no one without it can
# register, trigger or read; with it, everything works.
. "$(dirname "$0")/lib.sh"
xxl_setup
XXL_SCHEDULER_ARGS="--token s3cret"
start_scheduler || exit 1
tctl () { "$CTL" --api "$API" --token s3cret --json "$@"; }

start_agent intruder tok-app
start_agent member tok-app --token s3cret
registered () { tctl agent list | jq -e --arg n "$1" '.agents | any(.address == $n)' >/dev/null; }
check "an agent with the token registers" wait_for 10 registered member
check "an agent without it is refused, with a log line" \
    wait_for 10 grep -q "refused registration: the access token is wrong" "$T/agent-intruder.log"
check "... and never registers" bash -c "! $CTL --api $API --token s3cret --json agent list | jq -e '.agents | any(.address == \"intruder\")' >/dev/null"

check "a client without the token cannot read" bash -c "
    ! $CTL --api $API --json agent list > $T/noread.json; grep -q 'access token' $T/noread.json"
check "a client with a wrong token cannot write" bash -c "
    ! $CTL --api $API --token nope --json group add tok-app >/dev/null"
check "nothing was written" test "$(tctl group list | jq '.groups | length')" = 0
tctl group add tok-app >/dev/null
J=$(tctl job add --group tok-app --handler demoJobHandler | jq -r .id)
check "a client without the token cannot trigger" bash -c "! $CTL --api $API --json job trigger $J >/dev/null"
check "no run was made" test "$(tctl log list | jq '.logs | length')" = 0
L=$(tctl job trigger "$J" | jq -r '.logIds[0]')
done_ok () { [ "$(tctl log show "$L" | jq .handleCode)" = 200 ]; }
check "with the token, a run goes through the agent that has it" wait_for 10 done_ok
check "the scheduler still serves" kill -0 "$SPID"
xxl_done
