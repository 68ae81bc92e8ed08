#!/usr/bin/env bash
# test_token.sh -- with an access token set, no one without it can
# register, trigger or read; with it, everything works.
. "$(dirname "$0")/lib.sh"
xxl_store_blind "the access token's checks"
xxl_setup
XXL_SCHEDULER_ARGS="--token s3cret"
start_scheduler || exit 1
tctl () { "$CTL" --api "$API" --token s3cret --json "$@"; }

mkdir -p "$T/plugins"
cp "$XXL_TEST_PLUGINS/test_handlers.so" "$HANDLERS/demo.so" "$T/plugins/"
export AGENT_PLUGINS="$T/plugins"
start_agent intruder tok-app
start_agent member tok-app --token s3cret
registered () { tctl agent list | jq -e --arg n "$1" '.agents | any(.address == $n)' >/dev/null; }
check "an agent with the token registers" wait_for 10 registered member
check "an agent without it is refused, with a log line saying where a token goes" \
    wait_for 10 grep -q "refused registration: the access token is wrong (this agent sends none: set agent/access_token, or --token)" "$T/agent-intruder.log"
check "... and never registers" bash -c "! $CTL --api $API --token s3cret --json agent list | jq -e '.agents | any(.address == \"intruder\")' >/dev/null"

check "a client without the token cannot read" bash -c "
    ! $CTL --api $API --json agent list > $T/noread.json; grep -q 'access token' $T/noread.json"
check "a client with a wrong token cannot write" bash -c "
    ! $CTL --api $API --token nope --json group add tok-app >/dev/null"
check "... told the token is wrong, and no more" bash -c "
    $CTL --api $API --token nope group list 2>&1 | grep -q 'the access token is wrong\$'"
check "a client without one is told where one goes" bash -c "
    $CTL --api $API group list 2>&1 | grep -q 'the access token is wrong (none was given: --token, XXL_TOKEN or ctl/token)\$'"
check "nothing was written" test "$(tctl group list | jq '.groups | length')" = 0
check "the scheduler's warning names the peer's address (one a 10 s: the agent's here)" \
    grep -q "server: agent REGISTER message from 127.0.0.1 with a missing or wrong access token refused (401)" "$T/scheduler.log"
tctl group add tok-app >/dev/null
J=$(tctl job add --group tok-app --handler demoJobHandler | jq -r .id)
check "a client without the token cannot trigger" bash -c "! $CTL --api $API --json job trigger $J >/dev/null"
check "no run was made" test "$(tctl log list | jq '.logs | length')" = 0
L=$(tctl job trigger "$J" | jq -r '.logIds[0]')
done_ok () { [ "$(tctl log show "$L" | jq .handleCode)" = 200 ]; }
check "with the token, a run goes through the agent that has it" wait_for 10 done_ok

# The agent's REPLYs carry the token too (test_keys checks that); the
# scheduler takes them from the connection its request went to.  A run longer than the RUN answer
# timeout (run_timeout, 5 s here) stays accepted, not failed
S=$(tctl job add --group tok-app --handler sleepInJobHandler --param 6500 --route FAILOVER | jq -r .id)
SL=$(tctl job trigger "$S" | jq -r '.logIds[0]')
accepted () { [ "$(tctl log show "$SL" | jq .triggerCode)" = 200 ]; }
check "FAILOVER's probe is answered and the run accepted" wait_for 5 accepted
check "log cat reads the run log from the agent" bash -c "
    $CTL --api $API --token s3cret --json log cat $SL | jq -e '.logContent | length > 0' >/dev/null"
wait_for 8 bash -c "[ \"\$($CTL --api $API --token s3cret --json log show $SL | jq .handleCode)\" != 0 ]"
check "the long run ends 200, its acceptance kept (not failed as unanswered)" bash -c "
    [ \"\$($CTL --api $API --token s3cret --json log show $SL | jq -r '[.triggerCode, .handleCode] | @tsv')\" = \"200	200\" ]"
KL=$(tctl job trigger "$S" --param 30000 | jq -r '.logIds[0]')
check "log kill reaches the agent and is answered" wait_for 5 bash -c "
    $CTL --api $API --token s3cret --json log kill $KL >/dev/null"
check "... the killed run ends 500" wait_for 5 bash -c "
    [ \"\$($CTL --api $API --token s3cret --json log show $KL | jq .handleCode)\" = 500 ]"

# A REPLY without the token is dropped, never answered (a REPLY answering a
# REPLY would be taken for the answer to a request of the agent's); other
# messages without it are answered 401.  The peer's REGISTER carries the
# token as a field, its REPLY and CALLBACK none
PEER="$XXL_PEER"
"$PEER" "$AGENTS" --timeout 2000 \
    -- send REGISTER registryGroup=s:EXECUTOR registryKey=s:tok-app registryValue=s:ghost accessToken=s:s3cret \
    -- send REPLY code=200 -- send CALLBACK 'items=cb:1:200' > "$T/reply.json"
step_code () { jq -s ".[$1].code" "$T/reply.json"; }
check "the peer registers with the token" test "$(step_code 0)" = 200
check "a REPLY without the token gets no answer" test "$(step_code 1)" = -1
check "a CALLBACK without the token is answered 401" test "$(step_code 2)" = 401
check "the scheduler still serves" kill -0 "$SPID"
xxl_done
