#!/usr/bin/env bash
# bench/workflow.sh -- `make bench`'s workflow figure (DESIGN §7: a node
# starts <= 5 ms (p99) after its last parent's result is stored, with
# 1,000 workflow runs in flight).
#
# N runs (1,000; XXL_BENCH_QUICK=1: 200) of two-node workflows, a -> b,
# are triggered over N/100 seconds with 16 requests outstanding (the load
# of 16 clients, from one connection of bench/xxl_bench: a process per
# trigger, as xxl-ctl is, would load the two cores more than the
# scheduler does), so that most are in flight together (the peak is
# printed) while triggers still come: a is sleepJobHandler (its handleMsg
# "START END", µs), b is stampJobHandler (its handleMsg: its start, µs),
# on two agents.  An agent runs one run of a job at a time, so the N runs
# spread over 50 workflows, each with an a-job of its own (4 s, quick 2 s).
# For each run, measured from a's end on its agent (its result then goes
# to the scheduler, which stores it and decides b in the same turn):
#   row     b's row written (its triggerTime, ms)
#   start   b started on its agent (µs)
# Prints p50, p99 and max of each, writes bench/results-workflow.json in
# the build tree, and fails when a run did not end SUCCESS.
set -u
: "${XXL_BUILD:?run through make bench}"
: "${XXL_SRC:=$XXL_BUILD}"
. "$XXL_SRC/tests/lib.sh"
xxl_setup
N=1000
[ -n "${XXL_BENCH_QUICK:-}" ] && N=200
mkdir -p "$T/plugins"
cp "$XXL_BUILD/bench/.libs/bench_handlers.so" "$T/plugins/"
export AGENT_PLUGINS="$T/plugins"
start_scheduler || exit 1
start_agent bw1 bench-wf
start_agent bw2 bench-wf
wait_for 10 agent_registered bench-wf bw1 && wait_for 10 agent_registered bench-wf bw2 \
    || { echo "bench/workflow.sh: agents did not register"; exit 1; }
ctl group add bench-wf >/dev/null
B=$(ctl job add --group bench-wf --handler stampJobHandler --route ROUND | jq -r .id)
SLEEP=4000
[ -n "${XXL_BENCH_QUICK:-}" ] && SLEEP=2000
: > "$T/workflows"
for k in $(seq 50); do
    A=$(ctl job add --group bench-wf --handler sleepJobHandler --route ROUND --param "$SLEEP" | jq -r .id)
    echo "{\"nodes\": [{\"id\": \"a\", \"job\": $A}, {\"id\": \"b\", \"job\": $B}],
           \"edges\": [{\"from\": \"a\", \"to\": \"b\"}]}" > "$T/ab.json"
    ctl workflow add --name "bench-$k" --file "$T/ab.json" | jq -r .id >> "$T/workflows"
done
START=$(date +%s%3N)
"$XXL_BUILD/bench/xxl_bench" workflows "$API" "$T/workflows" "$N" 16 $(( N / 100 )) \
    > "$T/acked" || { echo "bench/workflow.sh: the triggers failed"; exit 1; }
TRIGGERED=$(( $(date +%s%3N) - START ))
PEAK=$(xxl_sql "SELECT COUNT(*) FROM xxl_workflow_run WHERE status = 'RUNNING'")
all_ended () { [ "$(xxl_sql "SELECT COUNT(*) FROM xxl_workflow_run WHERE status = 'RUNNING'")" = 0 ]; }
wait_for 300 all_ended || { echo "bench/workflow.sh: runs still running after 300 s"; exit 1; }
SUCCESS=$(xxl_sql "SELECT COUNT(*) FROM xxl_workflow_run WHERE status = 'SUCCESS'")
xxl_sql "SELECT a.handle_msg, b.trigger_time, b.handle_msg FROM xxl_job_log a JOIN xxl_job_log b
         ON b.flow_run_id = a.flow_run_id AND b.flow_node = 'b' WHERE a.flow_node = 'a'" \
    | awk -F'\t' -v calm=$((START + TRIGGERED)) '{ split($1, s, " "); end = s[2];
          printf "%.3f %.3f %d\n", $2 - end / 1000.0, ($3 - end) / 1000.0, (end / 1000 >= calm) }' \
    > "$T/lat"
stats () {      # stats COLUMN [CALM]: "p50 p99 max" in ms (CALM: of the runs whose
                #  a ended once every trigger was in)
    awk -v c="${2:-}" 'c == "" || $3 == 1' "$T/lat" | cut -d' ' -f"$1" | sort -g | awk '{ v[NR] = $1 } END {
        if (NR == 0) { print "- - -"; exit }
        i50 = int(NR * 0.50); if (i50 < 1) i50 = 1
        i99 = int(NR * 0.99 + 0.999999); if (i99 > NR) i99 = NR
        printf "%.2f %.2f %.2f\n", v[i50], v[i99], v[NR] }'
}
read -r ROW50 ROW99 ROWMAX <<< "$(stats 1)"
read -r ST50 ST99 STMAX <<< "$(stats 2)"
read -r CROW50 CROW99 CROWMAX <<< "$(stats 1 calm)"
CALM=$(awk '$3 == 1' "$T/lat" | wc -l)
printf 'workflow: %d runs of a -> b (%d in flight at the peak, triggered in %d ms), %d SUCCESS\n' \
    "$N" "$PEAK" "$TRIGGERED" "$SUCCESS"
printf '  b row written after a ended:  p50 %s ms  p99 %s ms  max %s ms\n' "$ROW50" "$ROW99" "$ROWMAX"
printf '  b started after a ended:      p50 %s ms  p99 %s ms  max %s ms\n' "$ST50" "$ST99" "$STMAX"
printf '  b row written, the %d runs whose a ended after the last trigger (no trigger load):' "$CALM"
printf ' p50 %s ms  p99 %s ms  max %s ms\n' "$CROW50" "$CROW99" "$CROWMAX"
cat > "$XXL_BUILD/bench/results-workflow.json" <<JSON
{"runs": $N, "peakInFlight": $PEAK, "success": $SUCCESS,
 "rowAfterParentMs": {"p50": $ROW50, "p99": $ROW99, "max": $ROWMAX},
 "startAfterParentMs": {"p50": $ST50, "p99": $ST99, "max": $STMAX},
 "rowAfterParentCalmMs": {"runs": $CALM, "p50": $CROW50, "p99": $CROW99, "max": $CROWMAX}}
JSON
[ "$SUCCESS" = "$N" ] || { echo "bench/workflow.sh: $((N - SUCCESS)) runs did not end SUCCESS"; FAILED=1; }
xxl_done
