#!/usr/bin/env bash
# workflow_shapes.sh -- the shapes of issue #33 under scheduler kills: a
# wide workflow (200 parallel nodes joined by one, `all`; a second join,
# `any`, of their failures) and a deep one (a chain of 100, every tenth
# node failing into a branch that rejoins), runs of both in flight while
# the scheduler is SIGKILLed at random instants and restarted.  Checked by
# tests/faults/flow_check.py per workflow: every acknowledged run ended
# with the rules' status; every node ran once or was skipped as the rules
# decide, never twice, never before its parents were final.
. "$(dirname "$0")/lib.sh"
faults_setup workflow_shapes

WIDE=$(pick 200 200)
DEEP=$(pick 100 100)
RUNS=$(pick 2 6)
ROUNDS=$(pick 2 6)
start_scheduler || exit 1
fagent s1 ws-app
fagent s2 ws-app
check "agents register" wait_until 10 bash -c "
    $CTL --api $API --json agent list | jq -e '[.agents[] | select(.app == \"ws-app\" and .connected)] | length == 2' >/dev/null"
ctl group add ws-app >/dev/null
OK=$(ctl --get .id job add --group ws-app --handler probeIn --route ROUND --param sleep=10)

# wide: w0 .. w(N-1) roots (every 50th fails), `join` (all) of their
# successes, `catch` (any) of their failures
jq -n --argjson n "$WIDE" --argjson j "$OK" '{
    nodes: ([range($n) | {id: "w\(.)", job: $j, param: (if . % 50 == 7 then "fail" else "sleep=20" end)}]
            + [{id: "join", job: $j, join: "all"}, {id: "catch", job: $j, join: "any"}]),
    edges: ([range($n) | {from: "w\(.)", to: "join"}]
            + [range($n) | {from: "w\(.)", to: "catch", on: "failure"}])}' > "$T/wide.json"
# deep: d0 -> d1 -> ... (success edges); d(10k+5) fails, its failure goes
# to a branch node b(k), which joins the chain again (any) at d(10k+6)
jq -n --argjson n "$DEEP" --argjson j "$OK" '{
    nodes: ([range($n) | {id: "d\(.)", job: $j,
                          param: (if . % 10 == 5 and . % 20 == 5 then "fail" else "sleep=5" end),
                          join: (if . % 10 == 6 then "any" else "all" end)}]
            + [range($n / 10 | floor) | {id: "b\(.)", job: $j, param: "sleep=5 from=${d\(. * 10 + 5).msg}"}]),
    edges: ([range(1; $n) | {from: "d\(. - 1)", to: "d\(.)"}]
            + [range($n / 10 | floor) | {from: "d\(. * 10 + 5)", to: "b\(.)", on: "failure"},
                                        {from: "b\(.)", to: "d\(. * 10 + 6)"}])}' > "$T/deep.json"
WW=$(ctl --get .id workflow add --name wide --file "$T/wide.json")
WD=$(ctl --get .id workflow add --name deep --file "$T/deep.json")
check "the wide ($WIDE + 2 nodes) and deep ($DEEP + $((DEEP / 10)) nodes) workflows are added" \
    test "$WW" != null -a "$WD" != null -a -n "$WW" -a -n "$WD"

: > "$T/acked_wide"
: > "$T/acked_deep"
trigger () {     # trigger WORKFLOW FILE: once, retried while the scheduler is down
    local out
    for _ in $(seq 100); do
        out=$("$CTL" --api "$API" --json --timeout 2000 workflow trigger "$1" 2>/dev/null) \
            && { printf '%s' "$out" | jq -r .runId >> "$2"; return 0; }
        sleep 0.1
    done
    return 1
}
for r in $(seq "$RUNS"); do trigger "$WW" "$T/acked_wide"; trigger "$WD" "$T/acked_deep"; done
for i in $(seq "$ROUNDS"); do
    rsleep 500 2500
    say "round $i: SIGKILL to the scheduler"
    kill_sched KILL
    rsleep 0 1500
    restart_sched || { check "scheduler restarts (round $i)" false; break; }
    trigger "$WW" "$T/acked_wide"; trigger "$WD" "$T/acked_deep"
done
running () { [ "$(sql "SELECT COUNT(*) FROM xxl_workflow_run WHERE status = 'RUNNING'")" = 0 ]; }
check "every run ends" wait_until 120 running
check "the scheduler is alive" kill -0 "$SPID"
for shape in wide deep; do
    W=$([ $shape = wide ] && echo "$WW" || echo "$WD")
    sql "SELECT id, status FROM xxl_workflow_run WHERE workflow_id = $W ORDER BY id" > "$T/runs-$shape.txt"
    sql "SELECT l.flow_run_id, l.flow_node, l.id, l.trigger_time, COALESCE (l.handle_time, 0),
                l.trigger_code, l.handle_code FROM xxl_job_log l
         JOIN xxl_workflow_run r ON r.id = l.flow_run_id WHERE r.workflow_id = $W
         ORDER BY l.id" > "$T/rows-$shape.txt"
    say "$shape: $(wc -l < "$T/runs-$shape.txt") runs, $(wc -l < "$T/rows-$shape.txt") node rows; statuses:" \
        "$(cut -d'|' -f2 "$T/runs-$shape.txt" | sort | uniq -c | tr '\n' ' ')"
    check "$shape: every node ran once or was skipped as the rules decide (flow_check.py)" \
        python3 "$FAULTS_DIR/flow_check.py" "$T/$shape.json" "$T/runs-$shape.txt" \
        "$T/rows-$shape.txt" "$PROBE" "$T/acked_$shape"
    python3 "$FAULTS_DIR/flow_check.py" "$T/$shape.json" "$T/runs-$shape.txt" \
        "$T/rows-$shape.txt" "$PROBE" "$T/acked_$shape" | tail -n 25
done
xxl_done
