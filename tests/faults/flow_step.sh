#!/usr/bin/env bash
# flow_step.sh -- a workflow node's retry keeps its delay when the
# scheduler's wall clock steps while it waits.
#
# A node whose job retries its failures stays RUNNING for the job's retry
# delay after its failure, which was due at the failure's end time plus
# the delay, on the wall clock: a step back of H held the retry (and its
# workflow run) H longer, a step ahead started it at once.  Now a step
# moves the waiting retries by the step (docs/design.md, the time model).
#
# A workflow of one node whose job always fails (the probe in-process),
# with 1 retry 6 s after a failure.  Each round: a run of it is
# triggered; 0.3-1.5 s (seeded) after its first attempt ended, the
# scheduler's clock steps back or ahead by 30-60 s (seeded; back first,
# then in turn).  The agent's clock stays true, and the gap from the
# first attempt's end to the retry's start (the probe's lines, on the
# agent's clock) is checked: at least 6 s less 0.1 s, at most 6 s plus
# 4 s.  Rounds: 2 (long: 4).  Then: every run once, none twice
# (count.sh), and each workflow run ended FAILURE with 2 attempts.
# SQLite and PostgreSQL.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/faketime.sh"
faketime_setup flow_step
faketime_pair w1 wfs
DELAY=6
FLAKY=$(ctl --get .id job add --group wfs --handler probeIn --param "sleep=100 fail" --retry 1 \
        --retry-interval "$DELAY")
check "a job that fails, retried once $DELAY s later ($FLAKY)" test -n "$FLAKY"
cat > "$T/flow.json" <<JSON
{"nodes": [{"id": "f", "job": $FLAKY}]}
JSON
W=$(ctl --get .id workflow add --name steps --file "$T/flow.json")
check "a workflow of that one node ($W)" test -n "$W"

ROUNDS=$(pick 2 4)
# runs_of JOB: JOB's probe lines, "logId start", oldest first
runs_of () { awk -v j="$FLAKY" '$2 == j { print $1, $5 }' "$PROBE" | sort -n -k2,2; }
end_of () { awk -v id="$1" '$1 == id { print $2 }' "$XXL_PROBE_END_FILE"; }
ended () { [ -n "$(end_of "$1")" ]; }
run_count () { runs_of | wc -l; }
more_runs () { [ "$(run_count)" -gt "$1" ]; }
run_ended () { ctl workflow run show "$1" | jq -e '.status != "RUNNING"' >/dev/null; }
OFFSET=0
RUN_IDS=""
for r in $(seq "$ROUNDS"); do
    n=$(run_count)
    RUN=$(ctl --get .runId workflow trigger "$W")
    RUN_IDS="$RUN_IDS $RUN"
    check "round $r: run $RUN's first attempt starts" wait_until 10 more_runs "$n"
    first=$(runs_of | sed -n "$((n + 1))p" | cut -d' ' -f1)
    check "round $r: ... and ends (logId $first)" wait_until 10 ended "$first"
    end=$(end_of "$first")
    # (0.3 s at least: the scheduler has taken the failure, whose wait a
    # step in that very turn would move once more)
    rnd 1200; wait_until 5 past $((end + 300 + R))
    rnd 31; step=$((30 + R))
    if [ $((r % 2)) = 1 ]; then OFFSET=$((OFFSET - step)); dir=back; else OFFSET=$((OFFSET + step)); dir=ahead; fi
    setclock sched "$OFFSET" >/dev/null
    say "$(elapsed): round $r: the clock stepped $dir $step s, $(( $(now_ms) - end )) ms after the failure's end"
    check "round $r: the retry starts" wait_until $((DELAY + 10)) more_runs $((n + 1))
    start=$(runs_of | sed -n "$((n + 2))p" | cut -d' ' -f2)
    gap=$((start - end))
    check "round $r (a step $dir of $step s): the retry starts $gap ms after the failure (>= $DELAY s - 100 ms)" \
        test "$gap" -ge $((DELAY * 1000 - 100))
    check "round $r (a step $dir of $step s): ... and <= $DELAY s + 4 s" \
        test "$gap" -le $((DELAY * 1000 + 4000))
    check "round $r: run $RUN ends" wait_until 15 run_ended "$RUN"
done
setclock sched 0 >/dev/null
failed_twice () { ctl workflow run show "$1" | jq -e '.status == "FAILURE" and .nodes[0].attempt == 2' >/dev/null; }
for RUN in $RUN_IDS; do
    check "run $RUN: FAILURE after 2 attempts" failed_twice "$RUN"
done
check "all runs finish" wait_quiet 30
fcount "workflow node retries across steps"
xxl_done
