#!/usr/bin/env bash
# burst.sh -- the agent after a burst (DESIGN §7): one scheduler, one agent;
# e2e no-op runs/s, then XXL_BENCH_CONC_RUNS (10,000) sleeping runs of
# XXL_BENCH_CONC_MS (8,000) ms at once, then the same e2e right after them.
# Prints one JSON object: both e2e figures, their ratio (target >= 0.9),
# the burst's overlap, and the agent's threads and RSS (VmRSS) before the
# burst, at its peak, right after it and after the second e2e.
#
#   XXL_BUILD=build bench/burst.sh          (after make bench/xxl_bench
#                                            bench/bench_handlers.la)
# XXL_BENCH_E2E_S (15) sets each e2e's length; XXL_BURST_PERF=FILE records
# the machine with `perf record -a -g` (read it with perf report --pid,
# agent_pid) during the second e2e, XXL_BURST_PERF_BURST
# during the burst's first XXL_BENCH_CONC_MS; XXL_BURST_LATER=1 adds a third
# e2e once the agent is back under 100 threads; XXL_BURST_PERF_BEFORE during the
# first e2e; XXL_BURST_AGENT
# runs another xxl-agent binary (to compare two trees back to back).
# Not part of `make bench` (bench/run.sh): a measurement of its own.

set -u
: "${XXL_BUILD:?XXL_BUILD: the build tree}"
XXL_BUILD=$(cd "$XXL_BUILD" && pwd)
SCHEDULER="$XXL_BUILD/scheduler/xxl-scheduler"
AGENT="${XXL_BURST_AGENT:-$XXL_BUILD/agent/xxl-agent}"
CTL="$XXL_BUILD/sdk/ctl/xxl-ctl"
BENCH="$XXL_BUILD/bench/xxl_bench"
HANDLERS="$XXL_BUILD/bench/.libs"
ROUTERS="$XXL_BUILD/plugins/routers/.libs"
export XXL_RUNNER="$XXL_BUILD/agent/xxl-runner"
RUNS=${XXL_BENCH_CONC_RUNS:-10000}; MS=${XXL_BENCH_CONC_MS:-8000}; E2E_S=${XXL_BENCH_E2E_S:-15}
for f in "$SCHEDULER" "$AGENT" "$CTL" "$BENCH"; do
    [ -x "$f" ] || { echo "burst: $f is missing" >&2; exit 2; }
done

T=$(mktemp -d "${TMPDIR:-/tmp}/xxl-burst.XXXXXX")
export XXL_STATE_DIR="$T/state"
PIDS=""
finish () {
    for pid in $PIDS; do kill -TERM "$pid" 2>/dev/null; done
    for pid in $PIDS; do
        for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null
    done
    if [ -n "${XXL_KEEP:-}" ]; then echo "burst: kept $T" >&2; else rm -rf "$T"; fi
}
trap finish EXIT
trap 'exit 130' INT TERM
say () { echo "burst: $*" >&2; }

printf 'scheduler\n    registry\n        beat = 5\n        dead = 30\n' > "$T/scheduler.cfg"
printf 'agent\n    beat = 5\n' > "$T/agent.cfg"
"$SCHEDULER" -c "$T/scheduler.cfg" --db "$T/a.db" --api 'tcp://127.0.0.1:*' \
    --agents 'tcp://127.0.0.1:*' --open --plugins "$ROUTERS" --ready-file "$T/ready" \
    >>"$T/scheduler.log" 2>&1 &
SPID=$!; PIDS="$SPID"
for _ in $(seq 600); do [ -f "$T/ready" ] && break; sleep 0.05; done
[ -f "$T/ready" ] || { say "scheduler did not start"; exit 1; }
API=$(sed -n 's/^api=//p' "$T/ready"); AGENTS=$(sed -n 's/^agents=//p' "$T/ready")
"$BENCH" group "$API" bench >/dev/null || exit 1
"$AGENT" -c "$T/agent.cfg" --app bench --scheduler "$AGENTS" --address bench-a \
    --plugins "$HANDLERS" --logdir "$T/logs" >>"$T/agent.log" 2>&1 &
APID=$!; PIDS="$PIDS $APID"
for _ in $(seq 200); do
    "$CTL" --api "$API" --json agent list 2>/dev/null | jq -e \
        '.agents | any(.app == "bench" and .connected)' >/dev/null && break
    sleep 0.05
done

# state: {"threads": N, "rss_kb": N} of the agent now
state () {
    awk '/^Threads:/ { t = $2 } /^VmRSS:/ { r = $2 }
         END { printf "{\"threads\": %d, \"rss_kb\": %d}", t, r }' "/proc/$APID/status"
}
e2e () { "$BENCH" e2e "$API" "$T/a.db" bench noop 64 "$E2E_S" 20000 "$SPID" "$APID"; }

S0=$(state)
if [ -n "${XXL_BURST_PERF_BEFORE:-}" ]; then
    perf record -a -g -o "$XXL_BURST_PERF_BEFORE" -- sleep "$E2E_S" >/dev/null 2>&1 &
fi
say "e2e before ..."
BEFORE=$(e2e) || { say "e2e before failed: $BEFORE"; exit 1; }
say "before: $BEFORE"
PEAK=0
( while kill -0 "$APID" 2>/dev/null; do
      awk '/^Threads:/ { print $2 }' "/proc/$APID/status"; sleep 0.2
  done ) > "$T/threads" &
WATCH=$!
if [ -n "${XXL_BURST_PERF_BURST:-}" ]; then
    perf record -a -g -o "$XXL_BURST_PERF_BURST" -- sleep "$((MS / 1000))" >/dev/null 2>&1 &
fi
say "burst of $RUNS x $MS ms ..."
CONC=$("$BENCH" concurrent "$API" "$T/a.db" bench "$RUNS" "$MS") || { say "burst failed: $CONC"; exit 1; }
kill "$WATCH" 2>/dev/null; wait "$WATCH" 2>/dev/null
PEAK=$(sort -n "$T/threads" | tail -1)
say "burst: $CONC"
S1=$(state)
if [ -n "${XXL_BURST_PERF:-}" ]; then
    perf record -a -g -o "$XXL_BURST_PERF" -- sleep "$E2E_S" >/dev/null 2>&1 &
    PERF=$!
fi
say "e2e after ..."
AFTER=$(e2e) || { say "e2e after failed: $AFTER"; exit 1; }
[ -n "${XXL_BURST_PERF:-}" ] && wait "$PERF"
say "after: $AFTER"
S2=$(state)
LATER=null
if [ -n "${XXL_BURST_LATER:-}" ]; then
    # a third e2e once the agent's threads are back under 100 (60 s at most)
    for _ in $(seq 600); do
        [ "$(awk '/^Threads:/ { print $2 }' "/proc/$APID/status")" -lt 100 ] && break
        sleep 0.1
    done
    say "e2e later ..."
    LATER=$(e2e) || { say "e2e later failed: $LATER"; exit 1; }
    say "later: $LATER"
fi
jq -n --argjson before "$BEFORE" --argjson after "$AFTER" --argjson conc "$CONC" \
    --argjson s0 "$S0" --argjson s1 "$S1" --argjson s2 "$S2" --argjson peak "${PEAK:-0}" --argjson apid "$APID" --argjson later "$LATER" '
    { e2e_before: $before.runs_per_s, e2e_after: $after.runs_per_s,
      ratio: (if $before.runs_per_s > 0 then ($after.runs_per_s / $before.runs_per_s * 1000 | round) / 1000 else null end),
      max_at_once: $conc.max_at_once, all_overlapped: $conc.all_overlapped,
      trigger_s: $conc.trigger_s, start_spread_ms: $conc.start_spread_ms,
      agent_pid: $apid, agent: { before: $s0, threads_peak: $peak, after_burst: $s1, after_e2e: $s2 },
      e2e_later: (if $later then $later.runs_per_s else null end),
      details: { before: $before, burst: $conc, after: $after, later: $later } }'
