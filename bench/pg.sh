#!/usr/bin/env bash
# pg.sh -- `make bench`'s group P: the figures of issue 19 on a PostgreSQL
# store (docs/performance.md).
#
# Starts a throwaway PostgreSQL server of its own (tests/pg.sh, durable
# settings: fsync and synchronous_commit on, 256 MB of shared buffers,
# wal_compression lz4, max_wal_size 4 GB, checkpoint_timeout 15 min; a
# unix socket), then on a database of it:
#   P1  one scheduler + one agent: single-trigger latency, e2e no-op runs/s
#   P2  two schedulers on the store + one agent connected to both: e2e
#       no-op runs/s, one client whose triggers go to the two in turn
#       (CPU per run is the first scheduler's only)
#   P3  the takeover gap: two schedulers, 32 one-second crons; the
#       scheduler holding more shares is SIGKILLed; the gap is the time
#       from the kill until the survivor holds all 16 shares (the lease
#       table), and the cron fires planned in the 10 s after the kill are
#       counted (each second of each job once) with their lateness
# Prints a table and writes $XXL_BUILD/bench/results-pg.json.  Exits 1
# when a phase failed (a run without a final row, a fire missing or
# doubled), 0 otherwise; a missed target is reported, not a failure.
#
# Environment: XXL_BUILD, XXL_SRC (set by make), XXL_BENCH_QUICK=1 (short
# runs), XXL_KEEP=1 (keep the temporary folder), TMPDIR, XXL_BENCH_PG_OPTS
# (the server's settings past the durable ones); skipped (exit 0)
# when XXL_BENCH_ONLY is set without P, or when PostgreSQL's server is not
# installed.

set -u
: "${XXL_BUILD:?run through make bench (XXL_BUILD unset)}"
: "${XXL_SRC:=$XXL_BUILD}"
if [ -n "${XXL_BENCH_ONLY:-}" ] && [[ " $XXL_BENCH_ONLY " != *" P "* ]]; then exit 0; fi
SCHEDULER="$XXL_BUILD/scheduler/xxl-scheduler"
AGENT="$XXL_BUILD/agent/xxl-agent"
CTL="$XXL_BUILD/sdk/ctl/xxl-ctl"
BENCH="$XXL_BUILD/bench/xxl_bench"
ROUTERS="$XXL_BUILD/plugins/routers/.libs"
HANDLERS="$XXL_BUILD/bench/.libs"
OUT="$XXL_BUILD/bench/results-pg.json"
export XXL_RUNNER="$XXL_BUILD/agent/xxl-runner"

if [ -n "${XXL_BENCH_QUICK:-}" ]; then
    LAT_SAMPLES=300; E2E_S=4; CRON_WINDOW_S=10
else
    LAT_SAMPLES=1000; E2E_S=15; CRON_WINDOW_S=10
fi
E2E_JOBS=64; E2E_INFLIGHT=20000; CRON_JOBS=32; LEASE_MS=3000

for f in "$SCHEDULER" "$AGENT" "$CTL" "$BENCH"; do
    [ -x "$f" ] || { echo "bench: $f is missing: run make first" >&2; exit 2; }
done
command -v jq >/dev/null || { echo "bench: jq is needed" >&2; exit 2; }
PG_SOURCED=1 . "$XXL_SRC/tests/pg.sh"
if ! pg_bindir >/dev/null 2>&1; then
    echo "bench: group P skipped: no PostgreSQL server (Debian's postgresql)" >&2
    exit 0
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/xxl-bench-pg.XXXXXX")
export XXL_STATE_DIR="$T/state"      # (no local keys of this user's scheduler)
PIDS=""
FAILED=0
say () { echo "bench: $*" >&2; }
cleanup () {
    for pid in $PIDS; do kill -TERM "$pid" 2>/dev/null; done
    for pid in $PIDS; do
        for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null
    done
    PIDS=""
}
finish () {
    cleanup
    pg_cleanup
    if [ -n "${XXL_KEEP:-}" ] || [ "$FAILED" -gt 0 ]; then echo "bench: kept $T"
    else rm -rf "$T"; fi
}
trap finish EXIT
trap 'exit 130' INT TERM

cat > "$T/scheduler.cfg" <<CFG
scheduler
    registry
        beat = 5
        dead = 30
    ha
        lease_ms = $LEASE_MS
CFG
cat > "$T/agent.cfg" <<CFG
agent
    beat = 5
CFG

# Durable, with the write-heavy settings docs/operations.md recommends
# (XXL_BENCH_PG_OPTS replaces them: "" measures PostgreSQL's defaults)
PG_DURABLE=1 PG_EXTRA_OPTS="-c shared_buffers=256MB ${XXL_BENCH_PG_OPTS-"-c wal_compression=lz4 -c max_wal_size=4GB -c checkpoint_timeout=15min"}" \
    pg_start "$T/pg" >/dev/null \
    || { say "the PostgreSQL server did not start"; exit 1; }
say "working in $T; PostgreSQL $("$PG_BIN/postgres" --version | sed 's/.* //') (durable)"
sql () { "$PG_BIN/psql" -X -q -A -t -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d "$1" -c "$2"; }

# start_scheduler NAME DB: sets API_<NAME>, AGENTS_<NAME>, SPID_<NAME>
start_scheduler () {
    local ready="$T/ready-$1"
    rm -f "$ready"
    # (no keys: the bench's clients talk plain text)
    "$SCHEDULER" -c "$T/scheduler.cfg" --db "$2" --node "$1" --open \
        --api 'tcp://127.0.0.1:*' --agents 'tcp://127.0.0.1:*' \
        --plugins "$ROUTERS" --ready-file "$ready" >>"$T/scheduler-$1.log" 2>&1 &
    local pid=$!
    PIDS="$PIDS $pid"
    for _ in $(seq 600); do [ -f "$ready" ] && break; sleep 0.05; done
    [ -f "$ready" ] || { say "scheduler $1 did not start"; tail "$T/scheduler-$1.log" >&2; return 1; }
    printf -v "API_$1" '%s' "$(sed -n 's/^api=//p' "$ready")"
    printf -v "AGENTS_$1" '%s' "$(sed -n 's/^agents=//p' "$ready")"
    printf -v "SPID_$1" '%s' "$pid"
}

# start_agent NAME APP SCHEDULERS API: sets APID once it is connected
start_agent () {
    "$AGENT" -c "$T/agent.cfg" --app "$2" --scheduler "$3" --address "$1" \
        --plugins "$HANDLERS" --logdir "$T/logs-$1" >>"$T/agent-$1.log" 2>&1 &
    APID=$!
    PIDS="$PIDS $APID"
    for _ in $(seq 200); do
        "$CTL" --api "$4" --json agent list 2>/dev/null | jq -e --arg a "$2" --arg n "$1" \
            '.agents | any(.app == $a and .address == $n and .connected)' >/dev/null && return 0
        sleep 0.05
    done
    say "agent $1 did not register"; return 1
}

# phase NAME command...: runs xxl_bench, keeps its JSON in $T/NAME.json
phase () {
    local name="$1"; shift
    say "$name ..."
    if "$BENCH" "$@" > "$T/$name.json"; then :; else
        say "$name FAILED (exit $?): $(cat "$T/$name.json")"
        FAILED=$((FAILED + 1))
    fi
    jq -e 'type == "object"' "$T/$name.json" >/dev/null 2>&1 || echo '{}' > "$T/$name.json"
    say "$name: $(cat "$T/$name.json")"
}
for name in latency e2e e2e_two takeover; do echo '{}' > "$T/$name.json"; done
START=$(date +%s)

# ---- P1: one scheduler
DB1=$(pg_newdb p1) || exit 1
start_scheduler one "$DB1" || exit 1
"$BENCH" group "$API_one" bench >/dev/null || exit 1
start_agent a1 bench "$AGENTS_one" "$API_one" || exit 1
phase latency latency "$API_one" "$DB1" bench "$LAT_SAMPLES"
phase e2e e2e "$API_one" "$DB1" bench noop "$E2E_JOBS" "$E2E_S" "$E2E_INFLIGHT" "$SPID_one" "$APID"
cleanup

# ---- P2: two schedulers, one agent connected to both
DB2=$(pg_newdb p2) || exit 1
start_scheduler left "$DB2" || exit 1
start_scheduler right "$DB2" || exit 1
"$BENCH" group "$API_left" bench >/dev/null || exit 1
start_agent a2 bench "$AGENTS_left,$AGENTS_right" "$API_left" || exit 1
# (the agent registers with each; wait until the second lists it too)
for _ in $(seq 200); do
    "$CTL" --api "$API_right" --json agent list 2>/dev/null \
        | jq -e '.agents | any(.address == "a2" and .connected)' >/dev/null && break
    sleep 0.05
done
# (one client whose requests go to the two in turn)
phase e2e_two e2e "$API_left,$API_right" "$DB2" bench noop "$E2E_JOBS" "$E2E_S" "$E2E_INFLIGHT" \
    "$SPID_left" "$APID"
cleanup

# ---- P3: the takeover gap
DB3=$(pg_newdb p3) || exit 1
start_scheduler left "$DB3" || exit 1
start_scheduler right "$DB3" || exit 1
"$BENCH" group "$API_left" bench >/dev/null || exit 1
start_agent a3 bench "$AGENTS_left,$AGENTS_right" "$API_left" || exit 1
now_ms () { date +%s%3N; }
held () { sql p3 "SELECT COUNT(*) FROM xxl_lease WHERE owner = '$1' AND expires > $(now_ms)"; }
for i in $(seq "$CRON_JOBS"); do
    "$CTL" --api "$API_left" --json job add --group bench --handler noopJobHandler \
        --cron '* * * * * ?' --desc "takeover $i" --start >/dev/null || exit 1
done
# Both hold shares (the planning is shared) before the kill
for _ in $(seq 300); do
    l=$(held left); r=$(held right)
    [ "${l:-0}" -gt 0 ] && [ "${r:-0}" -gt 0 ] && [ $((l + r)) -eq 16 ] && break
    sleep 0.05
done
sleep 2        # (a few seconds of fires under both: the planners' windows are full)
if [ "$(held left)" -ge "$(held right)" ]; then VICTIM=left; SURVIVOR=right; VPID=$SPID_left
else VICTIM=right; SURVIVOR=left; VPID=$SPID_right; fi
VSHARES=$(held "$VICTIM")
KILLED=$(now_ms)
{ kill -KILL "$VPID"; wait "$VPID"; } 2>/dev/null
GAP=null
while [ $(($(now_ms) - KILLED)) -lt $((LEASE_MS * 5)) ]; do
    if [ "$(held "$SURVIVOR")" -eq 16 ]; then GAP=$(($(now_ms) - KILLED)); break; fi
    sleep 0.01
done
# The fires planned in the window after the kill: each second of each job
# once, and how late
FROM=$(( (KILLED / 1000 + 1) * 1000 )); UNTIL=$((FROM + CRON_WINDOW_S * 1000 - 1000))
while [ "$(now_ms)" -lt $((UNTIL + 3000)) ]; do sleep 0.2; done
STATS=$(sql p3 "SELECT COUNT(*), COUNT(DISTINCT (job_id, schedule_time)),
    COALESCE(MAX(trigger_time - schedule_time), -1),
    COALESCE(percentile_disc(0.99) WITHIN GROUP (ORDER BY trigger_time - schedule_time), -1),
    SUM(CASE WHEN handle_code = 200 THEN 1 ELSE 0 END)
    FROM xxl_job_log WHERE schedule_time BETWEEN $FROM AND $UNTIL")
IFS='|' read -r ROWS DISTINCT MAXLATE P99LATE OK <<<"$STATS"
EXPECTED=$((CRON_JOBS * CRON_WINDOW_S))
jq -n --argjson gap "$GAP" --argjson shares "${VSHARES:-0}" --argjson rows "$ROWS" \
    --argjson distinct "$DISTINCT" --argjson expected "$EXPECTED" --argjson ok "${OK:-0}" \
    --argjson max_late "$MAXLATE" --argjson p99_late "$P99LATE" --argjson lease "$LEASE_MS" \
    '{lease_ms: $lease, victim_shares: $shares, gap_ms: $gap, fires_expected: $expected,
      fires_rows: $rows, fires_distinct: $distinct, fires_ok: $ok,
      lateness_p99_ms: $p99_late, lateness_max_ms: $max_late}' > "$T/takeover.json"
say "takeover: $(cat "$T/takeover.json")"
if [ "$GAP" = null ] || [ "$ROWS" -ne "$EXPECTED" ] || [ "$DISTINCT" -ne "$EXPECTED" ]; then
    say "takeover FAILED: gap $GAP ms, $ROWS rows ($DISTINCT distinct) for $EXPECTED fires"
    FAILED=$((FAILED + 1))
fi
cleanup

# ---- results
j () { jq -r "$2 // \"null\"" "$T/$1.json"; }
TWO=$(j e2e_two .runs_per_s)
jq -n --argjson e2e "$(j e2e .runs_per_s)" --argjson two "${TWO:-null}" \
    --argjson p50 "$(j latency .p50_us)" --argjson p99 "$(j latency .p99_us)" \
    --argjson gap "$(j takeover .gap_ms)" --argjson failed "$FAILED" \
    --argjson elapsed $(($(date +%s) - START)) \
    --slurpfile d_e2e "$T/e2e.json" --slurpfile d_lat "$T/latency.json" \
    --slurpfile d_two "$T/e2e_two.json" \
    --slurpfile d_t "$T/takeover.json" \
    '{pg_e2e_runs_per_s: $e2e, pg_e2e_two_schedulers_runs_per_s: $two,
      pg_trigger_latency_p50_us: $p50, pg_trigger_latency_p99_us: $p99,
      pg_two_schedulers_ratio: (if $two == null or $e2e == null or $e2e == 0 then null
                                else $two / $e2e * 100 | round / 100 end),
      pg_takeover_gap_ms: $gap, failed_phases: $failed, elapsed_s: $elapsed,
      details: {e2e: $d_e2e[0], latency: $d_lat[0], e2e_two: $d_two[0],
                takeover: $d_t[0]}}' > "$OUT"
verdict () {
    [ "$1" = null ] && { echo "n/a"; return; }
    if jq -e -n "$1 $3 $2" >/dev/null; then echo met; else echo "NOT MET"; fi
}
row () { printf '%-46s %14s %14s  %s\n' "$1" "$2" "$3" "$4"; }
echo
row "PostgreSQL (group P)" "target" "measured" ""
row "e2e no-op runs/s, one scheduler" ">= 25000" "$(j e2e .runs_per_s)" \
    "$(verdict "$(j e2e .runs_per_s)" 25000 '>=')"
RATIO2=$(jq -r '.pg_two_schedulers_ratio // "null"' "$OUT")
row "e2e no-op runs/s, two schedulers" "-" "$TWO" ""
row "  two schedulers / one (DESIGN §7)" ">= 0.9" "$RATIO2" "$(verdict "$RATIO2" 0.9 '>=')"
row "trigger -> handler start p50 / p99 (us)" "-" "$(j latency .p50_us) / $(j latency .p99_us)" ""
row "takeover gap (ms)" "<= $((LEASE_MS + 1000))" "$(j takeover .gap_ms)" \
    "$(verdict "$(j takeover .gap_ms)" $((LEASE_MS + 1000)) '<=')"
row "fires after the kill: rows / expected" "=" "$(j takeover .fires_rows) / $(j takeover .fires_expected)" ""
row "fire lateness after the kill p99 / max (ms)" "-" "$(j takeover .lateness_p99_ms) / $(j takeover .lateness_max_ms)" ""
echo "bench: group P wrote $OUT"
[ "$FAILED" -eq 0 ] || { echo "bench: group P FAILED: $FAILED phase(s)"; exit 1; }
exit 0
