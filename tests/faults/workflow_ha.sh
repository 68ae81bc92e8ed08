#!/usr/bin/env bash
# workflow_ha.sh -- workflow runs of workflow_kill.sh's 10-node DAG on
# three schedulers sharing one store (a run's result may reach any of
# them; the holder of its workflow's share recovers it), while one
# scheduler at a time is SIGKILLed (chosen by the seed), stays down past
# its lease or not, and comes back; and an agent is SIGKILLed under its
# nodes and restarted (they fail through the lost-run path, and their
# failure edges fire).  Guarantees as workflow_kill.sh's, checked by
# tests/faults/flow_check.py: every acknowledged run ended with the
# rules' status; every node ran once or was skipped as the rules decide,
# never twice, never before its parents were final.
. "$(dirname "$0")/lib.sh"
faults_setup workflow_ha
. "$FAULTS_DIR/flow_lib.sh"
REQ="$XXL_REQ"
LEASE=3000

# The long form goes on past its 8 rounds until 1,000 runs were
# acknowledged (DESIGN §12's scenario), at most 100 rounds
ROUNDS=$(pick 2 8)
WANT=$(pick 0 1000)
ha_three wh-app w1 w2

OK=$(ctl --get .id job add --group wh-app --handler probeIn --route ROUND --param sleep=20)
BAD=$(ctl --get .id job add --group wh-app --handler probeIn --route ROUND --param "sleep=20 fail")
flow_dag10 "$OK" "$BAD" 300 > "$T/dag.json"
# Several workflows of the same DAG: their ids fall in different shares
WS=""
for k in 1 2 3 4; do WS="$WS $(ctl --get .id workflow add --name "dag10-$k" --file "$T/dag.json")"; done
check "the workflows are added" test "$(echo $WS | wc -w)" = 4

RUNS_ACKED="$T/acked_runs"
: > "$RUNS_ACKED"
# The client, through scheduler $1 (flow_lib.sh)
wf_load_start () { flow_load_start "${S_API[$1]}" "$WS"; }
wf_load_stop () { flow_load_stop; }
LOADVIA=0
wf_load_start 0
rsleep 1500 3000
round=0
while [ "$round" -lt "$ROUNDS" ] || { [ "$(wc -l < "$RUNS_ACKED")" -lt "$WANT" ] && [ "$round" -lt 100 ]; }; do
    round=$((round + 1))
    rnd 3; V=$R
    if [ "$V" = "$LOADVIA" ]; then
        wf_load_stop; LOADVIA=$(( (V + 1) % 3 )); wf_load_start "$LOADVIA"
    fi
    SPID=${S_PID[$V]}
    OTHERS=$(for i in 0 1 2; do [ "$i" = "$V" ] || echo "$i"; done | paste -sd' ')
    say "round $round: SIGKILL scheduler $V (holding $(shares_of "${S_API[$V]}")) after $(wc -l < "$RUNS_ACKED") acknowledged runs"
    kill_sched KILL
    check "round $round: the others take the 16 shares over" wait_until $(( LEASE / 1000 + 5 )) all_held "$OTHERS"
    rsleep 0 3000
    API=${S_API[$V]}; AGENTS=${S_AGENTS[$V]}
    start_scheduler "$API" "$AGENTS" || { check "round $round: scheduler $V restarts" false; break; }
    S_PID[$V]=$SPID
    API=${S_API[$LOADVIA]}
    check "round $round: the three hold the 16 shares again" wait_until 15 all_held "0 1 2"
    rsleep 500 2000
done
# An agent killed under its nodes, then restarted: the runs it lost fail
rnd 2; A=w$((R + 1))
say "SIGKILL agent $A after $(wc -l < "$RUNS_ACKED") acknowledged runs"
kill_agent "$A" KILL
rsleep 500 1500
AGENTS="$ALL_AGENTS" fagent "$A" wh-app
rsleep 1500 2500
wf_load_stop
ACK=$(wc -l < "$RUNS_ACKED")
say "$ACK workflow runs acknowledged"
check "the client got acknowledgements throughout ($ACK, $round rounds)" test "$ACK" -ge $((ROUNDS * 3)) -a "$ACK" -ge "$WANT"
check "every run ends (none left RUNNING once 60 s pass with none ending)" flow_wait_end 60
flow_running || flow_stuck
for i in 0 1 2; do check "scheduler $i is alive" kill -0 "${S_PID[$i]}"; done
flow_verdict "$T/dag.json"
xxl_done
