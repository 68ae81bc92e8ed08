#!/usr/bin/env bash
# test_run_expired.sh -- a RUN its agent reads past its expireTime and
# answers "expired: ..." while the scheduler still waits for the answer
# (as a RUN held by a cut link reaches the agent once the link mends: TCP
# carries what it had queued; tests/faults/ha_net.sh, net_cut.sh's short
# cuts).  The agent never took the run and never will, so the trigger is
# not failed for it: the run is routed again, as a doubt's ask answered
# "expired" is, up to 3 times.  xxl_peer is the agent that answers so.
#   - ROUND over the peer and a real agent: the trigger the peer refused
#     runs on the real agent (before: it failed "expired:", never run);
#   - FIRST, the peer first: the peer gets the RUN 4 times (once, then 3
#     routings again), and then the row fails saying "expired:" (bounded).
. "$(dirname "$0")/lib.sh"
xxl_setup
start_scheduler || exit 1
PEER="$XXL_PEER"
ctl group add ex-app >/dev/null
start_agent r1 ex-app
check "agent r1 registers" wait_for 10 agent_registered ex-app r1
REG="registryGroup=s:EXECUTOR registryKey=s:ex-app registryValue=s:a-peer"
EXPIRED="msg:expired: the scheduler gave up on this run 144 ms before the agent read it (expireTime 1)"
peer_gone () { ! agent_registered ex-app a-peer; }

# ROUND: trigger until a RUN reaches the peer, which refuses it expired
# shellcheck disable=SC2086
"$PEER" "$AGENTS" --timeout 15000 -- send REGISTER $REG -- expect RUN -- reply 500 "$EXPIRED" \
    -- wait 1500 -- send UNREGISTER $REG > "$T/round.json" &
PEER_PID=$!
check "the peer registers" wait_for 10 agent_registered ex-app a-peer
JR=$(ctl --get .id job add --group ex-app --handler demoJobHandler --route ROUND)
peer_got () { [ "$(jq -s '.[1].logId // -1' "$T/round.json" 2>/dev/null)" != -1 ] \
              && [ -n "$(jq -s '.[1].logId // empty' "$T/round.json" 2>/dev/null)" ]; }
IDS=""
for _ in 1 2 3 4 5 6; do
    id=$(ctl --get '.logIds[0]' job trigger "$JR")
    IDS="$IDS $id"
    wait_for 10 log_finished "$id"
    peer_got && break
done
wait "$PEER_PID"
PLOG=$(jq -s '.[1].logId' "$T/round.json")
check "a RUN of the ROUND job reached the peer (logId $PLOG), refused expired" \
    bash -c "case ' $IDS ' in *' $PLOG '*) true ;; *) false ;; esac"
check "... the refused trigger ran on r1 all the same: handleCode 200" \
    wait_for 10 field_is "$PLOG" handleCode 200
check "... its trigger succeeded, at r1" \
    test "$(log_field "$PLOG" triggerCode)/$(log_field "$PLOG" executorAddress)" = "200/r1"
for id in $IDS; do
    check "trigger $id ran once, 200" field_is "$id" handleCode 200
done
check "the scheduler logs the routing again" \
    grep -q "trigger: log $PLOG: a-peer, read its RUN past its expireTime; routed again (1 of 3)" \
    "$T/scheduler.log"
wait_for 10 peer_gone

# FIRST, the peer first (a-peer sorts before r1): every routing goes to it
# shellcheck disable=SC2086
"$PEER" "$AGENTS" --timeout 8000 -- send REGISTER $REG \
    -- expect RUN -- reply 500 "$EXPIRED" -- expect RUN -- reply 500 "$EXPIRED" \
    -- expect RUN -- reply 500 "$EXPIRED" -- expect RUN -- reply 500 "$EXPIRED" \
    -- send UNREGISTER $REG > "$T/first.json" &
PEER_PID=$!
check "the peer registers again" wait_for 10 agent_registered ex-app a-peer
JF=$(ctl --get .id job add --group ex-app --handler demoJobHandler --route FIRST)
FLOG=$(ctl --get '.logIds[0]' job trigger "$JF")
wait "$PEER_PID"
RUNS=$(jq -s --argjson id "$FLOG" '[.[] | select(.step == "expect RUN" and .logId == $id)] | length' "$T/first.json")
check "the FIRST job's RUN reached the peer 4 times: once, then routed again 3 times ($RUNS)" \
    test "$RUNS" = 4
check "... then its trigger failed, saying the agent read it expired (bounded)" \
    wait_for 10 field_is "$FLOG" triggerCode 500
check "... its triggerMsg says so" \
    bash -c "$CTL --api $API --json log show $FLOG | jq -r .triggerMsg | grep -q 'expired:'"
check "... and it never ran (handleCode 0)" test "$(log_field "$FLOG" handleCode)" = 0
xxl_done
