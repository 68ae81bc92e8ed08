#!/usr/bin/env bash
# fresh_agent.sh -- an agent killed mid-run whose address comes back at once
# WITHOUT its journal: (1) the same agent restarted with a fresh logdir (a
# new container with the same host name, a wiped disk), (2) another agent
# taking the dead one's address (a replacement host on its IP).  Neither
# knows the dead agent's runs, so neither reports them lost, and the
# lost-run monitor fails only runs whose address is no longer registered.
# Guarantee: an agent's death ends its runs -- every row gets a result.
#
# The scheduler asks the agent holding the address about each open run
# (a RUN of the logId, expired; docs/protocol.md): the agent back without
# its journal refuses it as expired, and the run is failed as lost.  And
# what the ask must leave alone: (3) a restarted scheduler asks every
# agent, which holds its runs; (4) a twin on a live agent's address (both
# connected) asks nobody; (5) nor when one of the twins stops mid-run and
# the other takes the address back.
. "$(dirname "$0")/lib.sh"
xxl_store_blind "an agent back on its address without its journal"
F_LOST_AFTER=5 F_RUN_LEASE=5 faults_setup fresh_agent

start_scheduler || exit 1
ctl group add fa >/dev/null
fagent f1 fa
fagent f2 fa
check "agents register" wait_until 10 agent_registered fa f1
wait_until 10 agent_registered fa f2
J=$(ctl --get .id job add --group fa --handler probeIn --param sleep=60000)
started () { grep -q "^$1 " "$PROBE"; }
# trigger_on ADDRESS: a run of J on that agent (the trigger's own address)
trigger_on () { ctl job trigger "$J" --address "$1" | jq -r '.logIds[0]'; }
ended () { [ "$(log_field "$1" handleCode)" != 0 ]; }
# trigger_failed ID PATTERN: the row's trigger failed (500), its
# triggerMsg matching the shell pattern
trigger_failed () {
    [ "$(log_field "$1" triggerCode)" = 500 ] || return 1
    case "$(log_field "$1" triggerMsg)" in $2) return 0 ;; esac; return 1
}

# twin_failed LOG: LOG's trigger failed as (5)'s race allows
twin_failed () {
    trigger_failed "$1" "*its connection closed and another agent holds its address*" ||
        trigger_failed "$1" "*agent 'f1' is not connected to this scheduler*"
}

# (1) f1 killed mid-run, back at once with the same address, a fresh logdir
L1=$(trigger_on f1)
check "(1) the run executes on f1" wait_until 10 started "$L1"
kill_agent f1 KILL
XXL_PROBE_TAG=f1-fresh "$AGENT" -c "$T/agent.cfg" --app fa --scheduler "$AGENTS" --address f1 \
    --plugins "$AGENT_PLUGINS" --logdir "$T/logs-f1-fresh" >>"$T/agent-f1-fresh.log" 2>&1 &
F1_PID=$!
PIDS="$PIDS $F1_PID"
check "(1) f1 is back (a fresh logdir)" wait_until 10 agent_registered fa f1

# (2) f2 killed mid-run; another agent (another logdir) takes its address
L2=$(trigger_on f2)
check "(2) the run executes on f2" wait_until 10 started "$L2"
kill_agent f2 KILL
"$AGENT" -c "$T/agent.cfg" --app fa --scheduler "$AGENTS" --address f2 --plugins "$AGENT_PLUGINS" \
    --logdir "$T/logs-f2-other" >>"$T/agent-f2-other.log" 2>&1 &
PIDS="$PIDS $!"
check "(2) another agent holds f2's address" wait_until 10 agent_registered fa f2

# lost_after is 5 s: well past it, the dead agent's runs must have ended
check "(1) the run of f1's earlier life ends (failed, lost)" wait_until 30 ended "$L1"
check "(2) the run of the dead f2 ends (failed, lost)" wait_until 5 ended "$L2"
for l in $L1 $L2; do say "log $l: $(ctl log show "$l" | jq -c '{triggerCode, handleCode, handleMsg}')"; done
ctl log kill "$L1" >/dev/null 2>&1
check "(1) LOG_KILL of it ends the row at least" wait_until 5 ended "$L1"

# What the ask must leave alone.  (3) A scheduler restarted while a run
# goes on: every agent registers on a new connection and is asked; the
# agent holds its run (200) and the run ends with its own result
J3=$(ctl --get .id job add --group fa --handler probeIn --param sleep=4000)
L3=$(ctl --get '.logIds[0]' job trigger "$J3" --address f1)
check "(3) a 4 s run executes on f1" wait_until 10 started "$L3"
check "(3) ... accepted (its triggerCode recorded)" wait_until 10 field_is "$L3" triggerCode 200
kill_sched KILL
restart_sched
check "(3) the restarted scheduler asked f1 about its open run" \
    wait_until 20 grep -q "registry: f1 registered on a new connection: asked it about its" "$T/scheduler.log"
check "(3) the run ends with its own result (200), not as lost" wait_until 20 ended "$L3"
check "(3) ... handleCode 200" test "$(log_field "$L3" handleCode)" = 200

# (4) A second agent on a live agent's address (both connected): the
# address moves while its old connection is open, so nobody is asked;
# the first agent's run ends with its own result
L4=$(ctl --get '.logIds[0]' job trigger "$J3" --address f1)
check "(4) a 4 s run executes on f1" wait_until 10 started "$L4"
XXL_PROBE_TAG=f1-twin "$AGENT" -c "$T/agent.cfg" --app fa --scheduler "$AGENTS" --address f1 \
    --plugins "$AGENT_PLUGINS" --logdir "$T/logs-f1-twin" >>"$T/agent-f1-twin.log" 2>&1 &
TWIN_PID=$!
PIDS="$PIDS $TWIN_PID"
check "(4) a twin registers f1 too" wait_until 10 grep -q "registered with .* as fa/f1" "$T/agent-f1-twin.log"
check "(4) the first agent's run ends with its own result (200), not as lost" \
    wait_until 20 field_is "$L4" handleCode 200
# (5) Of the two agents on f1, the one that runs the next run stops
# (SIGTERM: it unregisters, or tries to, and finishes its run); the other
# registers f1 again, also from the connection the address had moved
# from.  Nobody is asked: before, that agent was asked about the run it
# does not hold, and the run was failed as lost while it still ran.
# The trigger goes right after the stopped agent exits, so its RUN may go
# to that agent's connection before the scheduler finds it closed: then
# it never starts, and it must still end (the run lease from the close:
# the other agent's beats say nothing of it; before, it stayed open as
# long as the other agent lived)
TWIN_LOST=0
for i in 1 2 3; do
    L5=$(ctl --get '.logIds[0]' job trigger "$J3" --address f1)
    if ! wait_until 10 started "$L5"; then
        TWIN_LOST=$((TWIN_LOST + 1))
        # (its RUN went to the stopped agent's connection, or, in the
        # instant between that connection closing and the other agent's
        # next REGISTER, f1 had no route and the trigger failed at once)
        say "(5.$i) log $L5 did not start: its RUN went to the connection of the agent stopped before, or f1 had no route then"
        check "(5.$i) ... it ends, failed: that connection closed and its run lease passed, or f1 was not connected" \
            wait_until 30 twin_failed "$L5"
        say "(5.$i) log $L5: $(ctl log show "$L5" | jq -c '{triggerCode, triggerMsg}')"
        continue
    fi
    check "(5.$i) a 4 s run executes on one of f1's two agents" true
    RUNNER=$(awk -v l="$L5" '$1 == l {print $6}' "$PROBE")
    say "(5.$i) log $L5 runs on $RUNNER"
    if [ "$RUNNER" = f1-twin ]; then STOP_PID=$TWIN_PID; else STOP_PID=$F1_PID; fi
    kill -TERM "$STOP_PID"
    check "(5.$i) the run ends with its own result (200), not as lost" \
        wait_until 20 field_is "$L5" handleCode 200
    say "(5.$i) log $L5: $(ctl log show "$L5" | jq -c '{handleCode, handleMsg}')"
    wait "$STOP_PID" 2>/dev/null
    # the stopped one back, with its own logdir and tag, beside the other
    if [ "$RUNNER" = f1-twin ]; then
        XXL_PROBE_TAG=f1-twin "$AGENT" -c "$T/agent.cfg" --app fa --scheduler "$AGENTS" --address f1 \
            --plugins "$AGENT_PLUGINS" --logdir "$T/logs-f1-twin" >>"$T/agent-f1-twin.log" 2>&1 &
        TWIN_PID=$!; PIDS="$PIDS $TWIN_PID"
    else
        XXL_PROBE_TAG=f1-fresh "$AGENT" -c "$T/agent.cfg" --app fa --scheduler "$AGENTS" --address f1 \
            --plugins "$AGENT_PLUGINS" --logdir "$T/logs-f1-fresh" >>"$T/agent-f1-fresh.log" 2>&1 &
        F1_PID=$!; PIDS="$PIDS $F1_PID"
    fi
    wait_until 10 agent_registered fa f1
done
say "runs whose RUN went to a stopped agent's connection: $TWIN_LOST of 3"

# (6) The same, made sure of: both agents on f1 frozen, a third peer
# (xxl_peer, lease 5 s) registers f1, takes the RUN and goes away without
# an answer; the agents thawed, the address is shared by two live agents,
# and the run must still end once its lease has passed since the peer's
# connection closed (before: it stayed open while an agent held f1)
kill -STOP "$F1_PID" "$TWIN_PID"
"$XXL_PEER" "$AGENTS" --timeout 8000 -- send REGISTER registryGroup=s:EXECUTOR \
    registryKey=s:fa registryValue=s:f1 runLease=5 -- expect RUN >"$T/peer6.out" 2>&1 &
PEER6=$!
wait_until 10 grep -q '"send REGISTER", "code": 200' "$T/peer6.out"
L6=$(ctl --get '.logIds[0]' job trigger "$J3" --address f1)
wait "$PEER6"
kill -CONT "$F1_PID" "$TWIN_PID"
check "(6) the peer got the RUN and left without an answer" grep -q "\"logId\": $L6" "$T/peer6.out"
check "(6) the run ends, failed: its connection closed, its run lease passed" \
    wait_until 40 trigger_failed "$L6" "*its connection closed and another agent holds its address*"
say "(6) log $L6: $(ctl log show "$L6" | jq -c '{triggerCode, handleCode}')"
check "no run failed as lost but those of (1) and (2)" \
    test "$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE handle_msg LIKE 'lost: agent%registered again%'")" -le 2
check "no run started twice" test "$(cut -d' ' -f1 "$PROBE" | sort | uniq -d | wc -l)" = 0
xxl_done
