#!/usr/bin/env bash
# bench/register.sh -- `make bench`'s figure of agents registering while
# the store holds open runs (a scheduler restart with runs in flight: every
# agent registers on a new connection, and the scheduler asks each address
# about the runs the store has open there).
#
# For OPEN in 0, 10,000 and 50,000 (XXL_BENCH_QUICK=1: 0 and 10,000): a
# store whose xxl_job_log holds OPEN accepted runs without a result (at 500
# addresses no agent holds, all of one trigger time: the burst of one
# instant; monitor/lost_after 3,600 s keeps them open), a scheduler started
# on it, then 1,000 agents of bench/xxl_emu registering at once.  Measured:
#   register_ms  from the first REGISTER sent to the last answer (xxl_emu)
#   cpu_ms       the scheduler's CPU time (user + system) from just before
#                the agents start until 2 s after the last answer (what
#                its asks about open runs cost comes after the answers)
# OPEN = 0 is the reference of the same run: each figure is printed with
# its ratio to it.  Writes bench/results-register.json in the build tree.
set -u
: "${XXL_BUILD:?run through make bench}"
: "${XXL_SRC:=$XXL_BUILD}"
. "$XXL_SRC/tests/lib.sh"
xxl_setup
EMU="$XXL_BUILD/bench/xxl_emu"
AGENTS_N=1000
SIZES="0 10000 50000"
[ -n "${XXL_BENCH_QUICK:-}" ] && SIZES="0 10000"
cat >> "$T/scheduler.cfg" <<CFG
    monitor
        lost_after = 3600
CFG
ticks () { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
HZ=$(getconf CLK_TCK)
RESULTS=""
REF_CPU="" REF_REG=""
for OPEN in $SIZES; do
    xxl_store_empty
    start_scheduler || exit 1
    ctl group add bench-reg >/dev/null
    JOB=$(ctl job add --group bench-reg --handler benchHandler | jq -r .id)
    kill -TERM "$SPID"; wait "$SPID" 2>/dev/null
    NOW=$(date +%s%3N)
    if [ "$OPEN" -gt 0 ]; then
        xxl_sql "INSERT INTO xxl_job_log (job_group, job_id, executor_address, trigger_time,
                     trigger_code, handle_code, trigger_type)
                 SELECT 1, $JOB, 'gone-' || (i % 500), $NOW, 200, 0, 'MANUAL'
                 FROM (WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c
                       WHERE i < $OPEN) SELECT i FROM c) n" || exit 1
    fi
    start_scheduler || exit 1
    rm -f "$T/emu-ready"
    C0=$(ticks "$SPID")
    "$EMU" "$AGENTS" bench-reg "$AGENTS_N" 30 "$T/emu-ready" > "$T/emu.json" 2>>"$T/emu.log" &
    EMUPID=$!
    PIDS="$PIDS $EMUPID"
    wait_for 120 test -f "$T/emu-ready" \
        || { echo "bench/register.sh: the agents did not register within 120 s"; exit 1; }
    # (2 s after the last answer: the asks a pass makes come after it)
    sleep 2
    C1=$(ticks "$SPID")
    REG=$(sed -n 's/^registered_ms=//p' "$T/emu-ready")
    CPU=$(( (C1 - C0) * 1000 / HZ ))
    OPENED=$(xxl_sql "SELECT COUNT(*) FROM xxl_job_log WHERE trigger_code = 200 AND handle_code = 0")
    kill -TERM "$EMUPID"; wait "$EMUPID" 2>/dev/null
    kill -TERM "$SPID"; wait "$SPID" 2>/dev/null
    [ -z "$REF_CPU" ] && REF_CPU=$(( CPU > 0? CPU: 1 )) REF_REG=$(( REG > 0? REG: 1 ))
    RATIO_CPU=$(awk -v a="$CPU" -v b="$REF_CPU" 'BEGIN { printf "%.2f", a / b }')
    RATIO_REG=$(awk -v a="$REG" -v b="$REF_REG" 'BEGIN { printf "%.2f", a / b }')
    echo "bench: register: $AGENTS_N agents, $OPEN open runs ($OPENED still open after):" \
         "register ${REG} ms (${RATIO_REG}x), scheduler cpu ${CPU} ms (${RATIO_CPU}x)" >&2
    RESULTS="$RESULTS${RESULTS:+, }{\"open\": $OPEN, \"registerMs\": $REG, \"cpuMs\": $CPU,
  \"registerRatio\": $RATIO_REG, \"cpuRatio\": $RATIO_CPU}"
done
echo "[$RESULTS]" | jq . > "$XXL_BUILD/bench/results-register.json"
xxl_done
