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

ROUNDS=$(pick 3 15)
start_scheduler || exit 1
fagent a1 fw-app
fagent a2 fw-app
check "agents register" wait_until 10 bash -c "
    $CTL --api $API --json agent list | jq -e '[.agents[] | select(.app == \"fw-app\" and .connected)] | length == 2' >/dev/null"
ctl group add fw-app >/dev/null
OK=$(ctl job add --group fw-app --handler probeIn --route ROUND --param sleep=20 | jq -r .id)
BAD=$(ctl job add --group fw-app --handler probeIn --route ROUND --param "sleep=20 fail" | jq -r .id)
cat > "$T/dag.json" <<JSON
{"nodes": [{"id": "n0", "job": $OK, "param": "sleep=30"},
           {"id": "n1", "job": $OK, "param": "\${flow.param}"},
           {"id": "n2", "job": $OK, "param": "sleep=40"},
           {"id": "n3", "job": $OK, "param": "sleep=10"},
           {"id": "n4", "job": $OK, "param": "sleep=10"},
           {"id": "n5", "job": $OK, "join": "all"},
           {"id": "n6", "job": $OK, "join": "any", "param": "sleep=10"},
           {"id": "n7", "job": $OK, "param": "sleep=10 from-n1=\${n1.msg}"},
           {"id": "n8", "job": $BAD},
           {"id": "n9", "job": $OK, "join": "any", "param": "\${flow.param}"}],
 "edges": [{"from": "n0", "to": "n1"}, {"from": "n0", "to": "n2"},
           {"from": "n1", "to": "n3"}, {"from": "n1", "to": "n4", "on": "failure"},
           {"from": "n2", "to": "n5"}, {"from": "n3", "to": "n5"},
           {"from": "n3", "to": "n6"}, {"from": "n4", "to": "n6"},
           {"from": "n5", "to": "n7", "on": "always"}, {"from": "n2", "to": "n8"},
           {"from": "n7", "to": "n9", "on": "always"}, {"from": "n8", "to": "n9", "on": "failure"},
           {"from": "n6", "to": "n9"}]}
JSON
W=$(ctl workflow add --name dag10 --file "$T/dag.json" | jq -r .id)
check "the workflow is added" test -n "$W" -a "$W" != null

# The client: runs triggered one after another, params cycling through a
# success, a failure of n1 (handled) and of n1 and n9 (not handled)
RUNS_ACKED="$T/acked_runs"
: > "$RUNS_ACKED"
rm -f "$T/stop-load"
(
    set +e
    params=("sleep=20" "fail" "sleep=10 fail")
    i=0
    while [ ! -f "$T/stop-load" ]; do
        p=${params[$((i % 3))]}; i=$((i + 1))
        out=$("$CTL" --api "$API" --json --timeout 2000 workflow trigger "$W" --param "$p" 2>/dev/null) \
            || continue
        printf '%s' "$out" | jq -r '.runId // empty' >> "$RUNS_ACKED"
        sleep 0.05
    done
) &
LOADPID=$!
BGPIDS="$BGPIDS $LOADPID"

rsleep 1000 2000
for i in $(seq "$ROUNDS"); do
    rnd 2; if [ "$R" = 0 ]; then SIG=KILL; else SIG=TERM; fi
    rsleep 300 2500
    say "round $i: SIG$SIG to the scheduler after $(wc -l < "$RUNS_ACKED") acknowledged runs"
    kill_sched "$SIG"
    rsleep 0 1500
    restart_sched || { check "scheduler restarts (round $i)" false; break; }
done
rsleep 500 1500
touch "$T/stop-load"
timeout 20 tail --pid="$LOADPID" -f /dev/null
ACK=$(wc -l < "$RUNS_ACKED")
say "$ACK workflow runs acknowledged"
check "the client got acknowledgements throughout ($ACK)" test "$ACK" -ge $((ROUNDS * 3))
running () { [ "$(sql "SELECT COUNT(*) FROM xxl_workflow_run WHERE status = 'RUNNING'")" = 0 ]; }
check "every run ends" wait_until 60 running
check "the scheduler is alive" kill -0 "$SPID"
sql "SELECT id, status FROM xxl_workflow_run ORDER BY id" > "$T/runs.txt"
sql "SELECT flow_run_id, flow_node, id, trigger_time, COALESCE (handle_time, 0), trigger_code,
            handle_code FROM xxl_job_log WHERE flow_run_id IS NOT NULL ORDER BY id" > "$T/rows.txt"
say "$(wc -l < "$T/runs.txt") runs, $(wc -l < "$T/rows.txt") node rows; statuses:" \
    "$(cut -d'|' -f2 "$T/runs.txt" | sort | uniq -c | tr '\n' ' ')"
check "every node ran once or was skipped as the rules decide (flow_check.py)" \
    python3 "$FAULTS_DIR/flow_check.py" "$T/dag.json" "$T/runs.txt" "$T/rows.txt" "$PROBE" \
    "$RUNS_ACKED"
python3 "$FAULTS_DIR/flow_check.py" "$T/dag.json" "$T/runs.txt" "$T/rows.txt" "$PROBE" \
    "$RUNS_ACKED" | tail -n 25
xxl_done
