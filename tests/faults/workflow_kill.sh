#!/usr/bin/env bash
# workflow_kill.sh -- workflow runs of a 10-node DAG (all and any joins,
# success, failure and always edges, ${flow.param} and ${NODE.msg}) while
# the scheduler is killed (SIGKILL or SIGTERM, by the seed) at random
# instants and restarted on the same store.  A client loop triggers runs
# with params that make some nodes fail, recording every runId it got.
# Guarantees (DESIGN §5, §12; docs/workflows.md "Runs under faults"), as
# tests/faults/flow_check.py computes them from the recorded results:
# every acknowledged run exists and ended, with the status the rules
# give; every node ran once or was SKIPPED exactly as the rules decide,
# never twice, never before its parents were final.
. "$(dirname "$0")/lib.sh"
faults_setup workflow_kill
. "$FAULTS_DIR/flow_lib.sh"

# The long form goes on past its 15 rounds until 1,000 runs were
# acknowledged (DESIGN §12's scenario), at most 200 rounds
ROUNDS=$(pick 3 15)
WANT=$(pick 0 1000)
start_scheduler || exit 1
fagent a1 fw-app
fagent a2 fw-app
check "agents register" wait_until 10 bash -c "
    $CTL --api $API --json agent list | jq -e '[.agents[] | select(.app == \"fw-app\" and .connected)] | length == 2' >/dev/null"
ctl group add fw-app >/dev/null
OK=$(ctl --get .id job add --group fw-app --handler probeIn --route ROUND --param sleep=20)
BAD=$(ctl --get .id job add --group fw-app --handler probeIn --route ROUND --param "sleep=20 fail")
flow_dag10 "$OK" "$BAD" 40 > "$T/dag.json"
W=$(ctl --get .id workflow add --name dag10 --file "$T/dag.json")
check "the workflow is added" test -n "$W" -a "$W" != null

# The client: runs triggered one after another (flow_lib.sh)
RUNS_ACKED="$T/acked_runs"
: > "$RUNS_ACKED"
flow_load_start "$API" "$W"

rsleep 1000 2000
i=0
while [ "$i" -lt "$ROUNDS" ] || { [ "$(wc -l < "$RUNS_ACKED")" -lt "$WANT" ] && [ "$i" -lt 200 ]; }; do
    i=$((i + 1))
    rnd 2; if [ "$R" = 0 ]; then SIG=KILL; else SIG=TERM; fi
    rsleep 300 2500
    say "round $i: SIG$SIG to the scheduler after $(wc -l < "$RUNS_ACKED") acknowledged runs"
    kill_sched "$SIG"
    rsleep 0 1500
    restart_sched || { check "scheduler restarts (round $i)" false; break; }
done
rsleep 500 1500
# (the client triggers one run at a time, about a second each on a loaded
# machine: the load goes on after the last round until it has its count)
enough_acks () { [ "$(wc -l < "$RUNS_ACKED")" -ge $((ROUNDS * 3)) ]; }
wait_until 30 enough_acks
flow_load_stop
ACK=$(wc -l < "$RUNS_ACKED")
say "$ACK workflow runs acknowledged"
check "the client got acknowledgements throughout ($ACK, $i rounds)" test "$ACK" -ge $((ROUNDS * 3)) -a "$ACK" -ge "$WANT"
check "every run ends" wait_until 60 flow_running
flow_running || flow_stuck
check "the scheduler is alive" kill -0 "$SPID"
flow_verdict "$T/dag.json"
xxl_done
