#!/usr/bin/env bash
# run.sh -- `make bench`: the figures of DESIGN §7 on the real daemons.
#
# Starts xxl-scheduler and xxl-agent from the build tree on 127.0.0.1
# (ephemeral ports, a temporary folder), drives them with bench/xxl_bench,
# prints a table and writes $XXL_BUILD/bench/results.json.  Exits 1 when a
# triggered run has no final row in the store (or a phase failed), 0
# otherwise -- missing a target, or runs that ended failed, are reported
# (the table, a WARNING line), not a failure.
#
# Phases (each figure is explained in docs/performance.md):
#   A  one scheduler + one agent: trigger latency, concurrent sleeping runs,
#      end-to-end no-op runs, GLUE_SHELL runs
#   B  a fresh store: 50,000 jobs on one-second crons, one agent
#   C  a fresh store with 1,000,000 enabled jobs, no agent: RSS and idle CPU
#   M  1,000 agents (bench/xxl_emu, one process): registration time, the
#      scheduler's CPU for their heartbeats, a SHARDING_BROADCAST job
#      triggered by hand (a run on every agent per trigger)
#   H  e2e with /metrics polled every second and the console's dashboard
#      open (headless Chromium), beside the same scheduler's e2e without
#      them
#   K  group A's latency and e2e with CURVE on (keys from xxl-ctl keygen),
#      beside the plaintext figures
#   X  e2e no-op runs through xxl-bridge to one XXL-JOB executor
#      (tests/bridge/fake_executor.py --fast): runs/s, and the CPU per run
#      of the bridge (and of the executor, to see which one limits)
#
# Environment: XXL_BUILD (build tree, set by make), XXL_BENCH_NO_DASHBOARD=1
# (group H without the browser), XXL_BENCH_QUICK=1 for
# short runs, XXL_KEEP=1 to keep the temporary folder, TMPDIR,
# XXL_BENCH_ONLY="A B C H K M X" to run only some of the phase groups (the
# others' figures are null).  Sizes (each phase reports what it asked and
# what it got): XXL_BENCH_CRON_JOBS (50,000), XXL_BENCH_CRON_S (20),
# XXL_BENCH_CONC_RUNS (10,000 sleeping runs at once), XXL_BENCH_CONC_MS
# (8,000), XXL_BENCH_AGENTS (1,000), XXL_BENCH_SB_TRIGGERS (20),
# XXL_BENCH_HB_S (the agents' beat, and the window their heartbeats are
# measured over: one whole beat; 30 s, the default beat of xxl-agent and
# the scheduler); XXL_BENCH_BRIDGE_PARALLEL (group X's bridge/parallel, 64);
# XXL_BENCH_BRIDGE (the xxl-bridge group X runs: the build's by default;
# another one to compare two trees back to back);
# XXL_BENCH_QUICK=1 makes every default small.

set -u
: "${XXL_BUILD:?run through make bench (XXL_BUILD unset)}"
: "${XXL_SRC:=$(cd "$(dirname "$0")/.." && pwd)}"
SCHEDULER="$XXL_BUILD/scheduler/xxl-scheduler"
AGENT="$XXL_BUILD/agent/xxl-agent"
CTL="$XXL_BUILD/sdk/ctl/xxl-ctl"
BENCH="$XXL_BUILD/bench/xxl_bench"
EMU="$XXL_BUILD/bench/xxl_emu"
ROUTERS="$XXL_BUILD/plugins/routers/.libs"
ALARMS="$XXL_BUILD/plugins/alarms/.libs"
HANDLERS="$XXL_BUILD/bench/.libs"
OUT="$XXL_BUILD/bench/results.json"
export XXL_RUNNER="$XXL_BUILD/agent/xxl-runner"

if [ -n "${XXL_BENCH_QUICK:-}" ]; then
    LAT_SAMPLES=300; CONC_RUNS=500; CONC_MS=3000; E2E_S=4; GLUE_S=3; CRON_JOBS=2000; CRON_S=8
    MILLION=100000; IDLE_S=4; EMU_N=50; SB_TRIGGERS=5; HB_S=5
else
    LAT_SAMPLES=2000; CONC_RUNS=10000; CONC_MS=8000; E2E_S=15; GLUE_S=10; CRON_JOBS=50000
    CRON_S=20; MILLION=1000000; IDLE_S=10; EMU_N=1000; SB_TRIGGERS=20; HB_S=30
fi
CRON_JOBS=${XXL_BENCH_CRON_JOBS:-$CRON_JOBS}; CRON_S=${XXL_BENCH_CRON_S:-$CRON_S}
CONC_RUNS=${XXL_BENCH_CONC_RUNS:-$CONC_RUNS}; CONC_MS=${XXL_BENCH_CONC_MS:-$CONC_MS}
EMU_N=${XXL_BENCH_AGENTS:-$EMU_N}; SB_TRIGGERS=${XXL_BENCH_SB_TRIGGERS:-$SB_TRIGGERS}
HB_S=${XXL_BENCH_HB_S:-$HB_S}
E2E_JOBS=64; E2E_INFLIGHT=20000; GLUE_INFLIGHT=2000; BRIDGE_INFLIGHT=2000

for f in "$SCHEDULER" "$AGENT" "$CTL" "$BENCH" "$EMU"; do
    [ -x "$f" ] || { echo "bench: $f is missing: run make first" >&2; exit 2; }
done
command -v jq >/dev/null || { echo "bench: jq is needed" >&2; exit 2; }
command -v sqlite3 >/dev/null || { echo "bench: the sqlite3 shell is needed" >&2; exit 2; }

T=$(mktemp -d "${TMPDIR:-/tmp}/xxl-bench.XXXXXX")
export XXL_STATE_DIR="$T/state"      # (no local keys of this user's scheduler)
PIDS=""
FAILED=0

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
    if [ -n "${XXL_KEEP:-}${KEEP_T:-}" ] || [ "$FAILED" -gt 0 ]; then echo "bench: kept $T"
    else rm -rf "$T"; fi
}
trap finish EXIT
trap 'exit 130' INT TERM

cat > "$T/scheduler.cfg" <<CFG
scheduler
    registry
        beat = 5
        dead = 30
CFG
cat > "$T/agent.cfg" <<CFG
agent
    beat = 5
CFG

say () { echo "bench: $*" >&2; }

# tree_ticks PID: CPU ticks (user + system) of PID and its descendants
tree_ticks () {
    local total=0 pid child
    for pid in "$@"; do
        total=$(( total + $(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null || echo 0) ))
        for child in $(pgrep -P "$pid"); do total=$(( total + $(tree_ticks "$child") )); done
    done
    echo "$total"
}

# start_scheduler NAME: store $T/NAME.db; sets API, AGENTS, SPID
start_scheduler () {
    rm -f "$T/ready"
    local alarms=""
    if "$SCHEDULER" --help 2>/dev/null | grep -q -- --alarms; then
        [ -d "$ALARMS" ] || { ALARMS="$T/alarms"; mkdir -p "$ALARMS"; }   # none is fine
        alarms="--alarms $ALARMS"
    fi
    # (no keys: the bench's clients and emulated agents talk plain text)
    "$SCHEDULER" --help 2>/dev/null | grep -q -- --open && alarms="$alarms --open"
    # shellcheck disable=SC2086
    "$SCHEDULER" -c "${SCHED_CFG:-$T/scheduler.cfg}" --db "$T/$1.db" \
        --api 'tcp://127.0.0.1:*' --agents 'tcp://127.0.0.1:*' $alarms \
        --plugins "$ROUTERS" --ready-file "$T/ready" $SCHED_ARGS >>"$T/scheduler-$1.log" 2>&1 &
    SPID=$!
    PIDS="$PIDS $SPID"
    for _ in $(seq 600); do [ -f "$T/ready" ] && break; sleep 0.05; done
    [ -f "$T/ready" ] || { say "scheduler did not start"; tail "$T/scheduler-$1.log"; return 1; }
    API=$(sed -n 's/^api=//p' "$T/ready")
    AGENTS=$(sed -n 's/^agents=//p' "$T/ready")
}

stop_scheduler () {
    kill -TERM "$SPID"
    wait "$SPID" 2>/dev/null
    PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$SPID" | tr '\n' ' ')
}

# start_agent NAME APP: sets APID
start_agent () {
    "$AGENT" -c "$T/agent.cfg" --app "$2" --scheduler "$AGENTS" --address "$1" \
        --plugins "$HANDLERS" --logdir "$T/logs-$1" $AGENT_ARGS >>"$T/agent-$1.log" 2>&1 &
    APID=$!
    PIDS="$PIDS $APID"
    for _ in $(seq 200); do
        "$CTL" --api "$API" $CTL_ARGS --json agent list 2>/dev/null | jq -e --arg a "$2" --arg n "$1" \
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

# (group K sets these: CURVE keys for the daemons and the clients)
SCHED_ARGS=""; AGENT_ARGS=""; CTL_ARGS=""
START=$(date +%s)
say "working in $T"
for name in latency concurrent e2e glue cron million latency_curve e2e_curve \
            hb_base hb sharding emu e2e_plain e2e_http e2e_plain2 bridge; do
    echo '{}' > "$T/$name.json"
done
# only GROUP: true when the phase group is to run
only () { [ -z "${XXL_BENCH_ONLY:-}" ] || [[ " $XXL_BENCH_ONLY " == *" $1 "* ]]; }
JOBS_IN_STORE=0

# ---- A: one scheduler, one agent
if only A; then
start_scheduler a || exit 1
"$BENCH" group "$API" bench >/dev/null || exit 1
start_agent bench-a bench || exit 1
phase latency latency "$API" "$T/a.db" bench "$LAT_SAMPLES"
phase concurrent concurrent "$API" "$T/a.db" bench "$CONC_RUNS" "$CONC_MS"
phase e2e e2e "$API" "$T/a.db" bench noop "$E2E_JOBS" "$E2E_S" "$E2E_INFLIGHT" "$SPID" "$APID"
phase glue e2e "$API" "$T/a.db" bench glue "$E2E_JOBS" "$GLUE_S" "$GLUE_INFLIGHT" "$SPID" "$APID"
cleanup
fi

# ---- B: 10,000 one-second crons on a fresh store
if only B; then
start_scheduler b || exit 1
"$BENCH" group "$API" bench >/dev/null || exit 1
start_agent bench-b bench || exit 1
phase cron cron "$API" "$T/b.db" bench "$CRON_JOBS" "$CRON_S"
cleanup
fi

# ---- C: a million enabled jobs (a yearly cron, next fire far ahead)
if only C; then
start_scheduler c || exit 1
"$BENCH" group "$API" bench >/dev/null || exit 1
stop_scheduler
say "inserting $MILLION jobs ..."
NOW_MS=$(( $(date +%s) * 1000 ))
NEXT_MS=$(( $(date -u -d "$(( $(date -u +%Y) + 1 ))-01-01T00:00:00Z" +%s) * 1000 ))
sqlite3 "$T/c.db" >/dev/null <<SQL || { say "bulk insert failed"; exit 1; }
PRAGMA journal_mode = WAL;
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $MILLION)
INSERT INTO xxl_job_info (job_group, job_desc, add_time, update_time, schedule_type,
    schedule_conf, executor_handler, glue_updatetime, trigger_status, trigger_next_time)
SELECT (SELECT id FROM xxl_job_group WHERE app_name = 'bench'), 'bench job ' || i,
    $NOW_MS, $NOW_MS, 'CRON', '0 0 0 1 1 ?', 'noopJobHandler', $NOW_MS, 1, $NEXT_MS
FROM n;
COMMIT;
SQL
start_scheduler c || exit 1
sleep 3                                 # settle: first planner scans, page cache
phase million idle "$SPID" "$IDLE_S"
JOBS_IN_STORE=$(sqlite3 "$T/c.db" 'SELECT COUNT(*) FROM xxl_job_info WHERE trigger_status = 1')
cleanup
fi

# ---- M: 1,000 agents from the emulator, one SHARDING_BROADCAST job
REG_MS=null
if only M; then
# (the agents' beat as deployed: the scheduler's BEATs and dead time at
# the same beat, so the window holds one beat of each side per agent)
SCHED_CFG="$T/scheduler-m.cfg"
printf 'scheduler\n    registry\n        beat = %s\n        dead = %s\n' "$HB_S" $((HB_S * 3)) > "$SCHED_CFG"
start_scheduler m || exit 1
SCHED_CFG=""
"$BENCH" group "$API" bench >/dev/null || exit 1
phase hb_base idle "$SPID" "$HB_S"          # the scheduler alone, for the difference
say "starting $EMU_N emulated agents ..."
rm -f "$T/emu-ready"
"$EMU" "$AGENTS" bench "$EMU_N" "$HB_S" "$T/emu-ready" > "$T/emu.json" 2>>"$T/emu.log" &
EMUPID=$!
PIDS="$PIDS $EMUPID"
for _ in $(seq 1200); do [ -f "$T/emu-ready" ] && break; sleep 0.1; done
if [ -f "$T/emu-ready" ]; then
    REG_MS=$(sed -n 's/^registered_ms=//p' "$T/emu-ready")
    say "$EMU_N agents registered in $REG_MS ms"
    phase hb idle "$SPID" "$HB_S"           # a whole beat: each agent beats once in it
    phase sharding sharding "$API" "$T/m.db" bench "$SB_TRIGGERS"
else
    say "the $EMU_N emulated agents did not all register within 120 s"
    FAILED=$((FAILED + 1))
fi
kill -TERM "$EMUPID" 2>/dev/null
wait "$EMUPID" 2>/dev/null
jq -e 'type == "object"' "$T/emu.json" >/dev/null 2>&1 || echo '{}' > "$T/emu.json"
say "emulator: $(cat "$T/emu.json")"
cleanup
fi

# ---- K: group A's latency and e2e over CURVE
if only K; then
K="$T/keys"; mkdir -p "$K/certs"
for key in "scheduler admin" "bench-client admin" "bench-agent agent"; do
    set -- $key
    "$CTL" keygen "$1" --role "$2" --apps bench --dir "$K" >/dev/null || { say "keygen failed"; exit 1; }
done
cp "$K/bench-client.cert" "$K/bench-agent.cert" "$K/certs/"
SCHED_ARGS="--cert $K/scheduler.cert_secret --keys $K/certs"
AGENT_ARGS="--cert $K/bench-agent.cert_secret --scheduler-key $K/scheduler.cert"
CTL_ARGS="--cert $K/bench-client.cert_secret --scheduler-key $K/scheduler.cert"
export XXL_CERT="$K/bench-client.cert_secret" XXL_SCHEDULER_KEY="$K/scheduler.cert"
start_scheduler k || exit 1
"$BENCH" group "$API" bench >/dev/null || exit 1
start_agent bench-k bench || exit 1
phase latency_curve latency "$API" "$T/k.db" bench "$LAT_SAMPLES"
phase e2e_curve e2e "$API" "$T/k.db" bench noop "$E2E_JOBS" "$E2E_S" "$E2E_INFLIGHT" "$SPID" "$APID"
cleanup
unset XXL_CERT XXL_SCHEDULER_KEY
SCHED_ARGS=""; AGENT_ARGS=""; CTL_ARGS=""
fi

# ---- H: e2e while the HTTP side is in use: /metrics polled every second
# and the console's dashboard open in headless Chromium (skipped, with a
# note, without chromium, node and npm), beside the same scheduler's e2e
# without them (issue 20: within 5 %)
if only H; then
# (the console's files from the source tree, as test_console serves them;
# the last group: the config keeps them)
printf '    http\n        console = %s\n' "$XXL_SRC/console/dist" >> "$T/scheduler.cfg"
SCHED_ARGS="--http 127.0.0.1:0"
start_scheduler h || exit 1
SCHED_ARGS=""
HTTP_EP=$(sed -n 's/^http=//p' "$T/ready")
"$BENCH" group "$API" bench >/dev/null || exit 1
start_agent bench-h bench || exit 1
phase e2e_plain e2e "$API" "$T/h.db" bench noop "$E2E_JOBS" "$E2E_S" "$E2E_INFLIGHT" "$SPID" "$APID"
( while :; do curl -sf "http://$HTTP_EP/metrics" >/dev/null; sleep 1; done ) &
POLLER=$!
PIDS="$PIDS $POLLER"
DASHBOARD=none; DPID=""
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
NODEDIR="$XXL_BUILD/tests/console-node"
if [ -n "${XXL_BENCH_NO_DASHBOARD:-}" ]; then
    say "XXL_BENCH_NO_DASHBOARD: the dashboard is not opened"
elif [ -n "$CHROMIUM" ] && command -v node >/dev/null && command -v npm >/dev/null; then
    # (playwright-core as tests/console pins it, where test_console puts it)
    mkdir -p "$NODEDIR"
    if [ ! -f "$NODEDIR/node_modules/playwright-core/package.json" ]; then
        cp "$XXL_SRC/tests/console/package.json" "$XXL_SRC/tests/console/package-lock.json" "$NODEDIR/"
        chmod u+w "$NODEDIR"/package*.json
        npm ci --prefix "$NODEDIR" --no-audit --no-fund --loglevel=error >"$T/npm.log" 2>&1 \
            || say "npm ci of playwright-core failed: the dashboard is not opened"
    fi
    cp "$XXL_SRC/bench/dashboard.mjs" "$NODEDIR/dashboard.mjs"
    PASS=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
    printf '%s\n' "$PASS" | "$CTL" --api "$API" user add bench-admin --role admin --password-stdin >/dev/null
    TMPDIR="$T" XXL_URL="http://$HTTP_EP" XXL_USER=bench-admin XXL_PASSWORD="$PASS" CHROMIUM="$CHROMIUM" \
        node "$NODEDIR/dashboard.mjs" >"$T/dashboard.log" 2>&1 &
    DPID=$!
    PIDS="$PIDS $DPID"
    for _ in $(seq 600); do grep -q '^ready' "$T/dashboard.log" && break; sleep 0.1; done
    if grep -q '^ready' "$T/dashboard.log"; then
        DASHBOARD=open
        # (the page's first render and the browser's start-up work end
        # before the phase: at most 10 s for a second under 5 % of a core)
        for _ in $(seq 10); do
            t0=$(tree_ticks "$DPID"); sleep 1
            [ $(( $(tree_ticks "$DPID") - t0 )) -lt $(( $(getconf CLK_TCK) / 20 )) ] && break
        done
        BROWSER_T0=$(tree_ticks "$DPID")
    else say "the dashboard did not open: $(tail -n 3 "$T/dashboard.log")"; fi
else
    say "no chromium, node or npm: the dashboard is not opened"
fi
say "/metrics polled every second; dashboard: $DASHBOARD"
phase e2e_http e2e "$API" "$T/h.db" bench noop "$E2E_JOBS" "$E2E_S" "$E2E_INFLIGHT" "$SPID" "$APID"
# (the browser's CPU in the phase, % of a core: what it took from the others)
BROWSER_PCT=null
if [ "$DASHBOARD" = open ]; then
    BROWSER_PCT=$(awk -v t="$(( $(tree_ticks "$DPID") - BROWSER_T0 ))" -v hz="$(getconf CLK_TCK)" \
        -v s="$(jq -r '.seconds // 0' "$T/e2e_http.json")" 'BEGIN { printf "%.1f", (s > 0? t * 100 / hz / s: 0) }')
fi
jq --arg d "$DASHBOARD" --argjson b "$BROWSER_PCT" '. + {dashboard: $d, browser_cpu_pct: $b}' \
    "$T/e2e_http.json" > "$T/e2e_http.tmp" \
    && mv "$T/e2e_http.tmp" "$T/e2e_http.json"
# (HTTP idle again, for the drift of a store that grew by two phases: the
# in-use figure is judged against the mean of the idle ones around it)
kill -TERM $POLLER $DPID 2>/dev/null
wait $POLLER $DPID 2>/dev/null
phase e2e_plain2 e2e "$API" "$T/h.db" bench noop "$E2E_JOBS" "$E2E_S" "$E2E_INFLIGHT" "$SPID" "$APID"
cleanup
fi

# ---- X: XXL-JOB executors through xxl-bridge: no-op runs to one executor
# (DESIGN §7: >= 2,000 runs/s, <= 50 us of the bridge's CPU a run); the
# executor is Python (tests/bridge/fake_executor.py --fast): its CPU per run
# is reported too, as it may be what limits the rate
if only X; then
BRIDGE="${XXL_BENCH_BRIDGE:-$XXL_BUILD/bridge/xxl-bridge}"
if command -v python3 >/dev/null && [ -x "$BRIDGE" ]; then
start_scheduler x || exit 1
"$BENCH" group "$API" bench >/dev/null || exit 1
printf 'bridge\n    beat = 5\n    parallel = %s\n' "${XXL_BENCH_BRIDGE_PARALLEL:-64}" > "$T/bridge.cfg"
"$BRIDGE" -c "$T/bridge.cfg" --scheduler "$AGENTS" --listen 127.0.0.1:0 \
    --logdir "$T/bridge" --ready-file "$T/bridge.ready" >>"$T/bridge.log" 2>&1 &
BRPID=$!
PIDS="$PIDS $BRPID"
for _ in $(seq 200); do [ -s "$T/bridge.ready" ] && break; sleep 0.05; done
BPORT=$(sed -n 's/^port=//p' "$T/bridge.ready")
python3 "$XXL_SRC/tests/bridge/fake_executor.py" --admin "http://127.0.0.1:$BPORT/xxl-job-admin" \
    --app bench --runs "$T/bridge-runs" --fast >>"$T/executor.log" 2>&1 &
EXPID=$!
PIDS="$PIDS $EXPID"
for _ in $(seq 200); do
    "$CTL" --api "$API" --json agent list 2>/dev/null \
        | jq -e '.agents | any(.app == "bench" and .connected)' >/dev/null && break
    sleep 0.05
done
EX_T0=$(tree_ticks "$EXPID")
phase bridge e2e "$API" "$T/x.db" bench noop "$E2E_JOBS" "$E2E_S" "$BRIDGE_INFLIGHT" "$SPID" "$BRPID"
EX_US=$(jq -r --argjson t "$(( $(tree_ticks "$EXPID") - EX_T0 ))" --argjson hz "$(getconf CLK_TCK)" \
    'if (.ok // 0) > 0 then $t / $hz * 1e6 / .ok | floor else null end' "$T/bridge.json")
jq --argjson x "$EX_US" '. + {executor_cpu_us_per_run: $x}' "$T/bridge.json" > "$T/bridge.tmp" \
    && mv "$T/bridge.tmp" "$T/bridge.json"
cleanup
else
    say "no python3 or no xxl-bridge: group X skipped"
fi
fi

ELAPSED=$(( $(date +%s) - START ))

# ---- Results
j () { jq -r "$2 // \"null\"" "$T/$1.json"; }
jq -n \
    --argjson e2e "$(j e2e .runs_per_s)" \
    --argjson p50 "$(j latency .p50_us)" \
    --argjson p99 "$(j latency .p99_us)" \
    --argjson cron "$(j cron .p99_ms)" \
    --argjson rss "$(j million .rss_mb)" \
    --argjson cpu "$(j million .cpu_pct)" \
    --argjson glue "$(j glue .runs_per_s)" \
    --argjson conc "$(j concurrent .max_at_once)" \
    --argjson e2e_curve "$(j e2e_curve .runs_per_s)" \
    --argjson p50_curve "$(j latency_curve .p50_us)" \
    --argjson p99_curve "$(j latency_curve .p99_us)" \
    --argjson jobs "$JOBS_IN_STORE" \
    --argjson reg_ms "$REG_MS" \
    --argjson hb "$(j hb .cpu_pct)" --argjson hb_base "$(j hb_base .cpu_pct)" \
    --argjson sb "$(j sharding .runs_per_s)" \
    --argjson cron_jobs "$CRON_JOBS" --argjson conc_runs "$CONC_RUNS" --argjson agents "$EMU_N" \
    --slurpfile d_hb "$T/hb.json" --slurpfile d_hb0 "$T/hb_base.json" \
    --slurpfile d_sb "$T/sharding.json" --slurpfile d_emu "$T/emu.json" \
    --argjson elapsed "$ELAPSED" \
    --argjson failed "$FAILED" \
    --slurpfile d_e2e "$T/e2e.json" --slurpfile d_lat "$T/latency.json" \
    --slurpfile d_cron "$T/cron.json" --slurpfile d_mil "$T/million.json" \
    --slurpfile d_glue "$T/glue.json" --slurpfile d_conc "$T/concurrent.json" \
    --slurpfile d_e2ek "$T/e2e_curve.json" --slurpfile d_latk "$T/latency_curve.json" \
    --argjson e2e_plain "$(j e2e_plain .runs_per_s)" --argjson e2e_http "$(j e2e_http .runs_per_s)" \
    --argjson e2e_plain2 "$(j e2e_plain2 .runs_per_s)" \
    --slurpfile d_e2ep "$T/e2e_plain.json" --slurpfile d_e2eh "$T/e2e_http.json" \
    --slurpfile d_e2ep2 "$T/e2e_plain2.json" \
    --argjson bridge "$(j bridge .runs_per_s)" --argjson bridge_cpu "$(j bridge .cpu_us_per_run.agent)" \
    --slurpfile d_br "$T/bridge.json" \
    '{e2e_runs_per_s: $e2e, trigger_latency_p50_us: $p50, trigger_latency_p99_us: $p99,
      cron_lateness_p99_ms: $cron, jobs_1m_rss_mb: $rss, jobs_1m_idle_cpu_pct: $cpu,
      glue_shell_runs_per_s: $glue, agent_concurrent_runs: $conc,
      curve_e2e_runs_per_s: $e2e_curve, curve_trigger_latency_p50_us: $p50_curve,
      curve_trigger_latency_p99_us: $p99_curve,
      cron_jobs: $cron_jobs, concurrent_asked: $conc_runs,
      agents_asked: $agents, agents_registered: $d_emu[0].registered,
      agents_register_ms: $reg_ms,
      heartbeat_cpu_pct: (if $hb == null or $hb_base == null then null
                          else ($hb - $hb_base) * 100 | round / 100 end),
      sharding_runs_per_s: $sb,
      http_e2e_plain_runs_per_s: (if $e2e_plain == null or $e2e_plain2 == null then $e2e_plain
                                  else ($e2e_plain + $e2e_plain2) / 2 | floor end),
      http_e2e_in_use_runs_per_s: $e2e_http,
      bridge_runs_per_s: $bridge, bridge_cpu_us_per_run: $bridge_cpu,
      details: {e2e: $d_e2e[0], latency: $d_lat[0], cron: $d_cron[0],
                jobs_1m: ($d_mil[0] + {jobs: $jobs}), glue_shell: $d_glue[0],
                concurrent: $d_conc[0], e2e_curve: $d_e2ek[0], latency_curve: $d_latk[0],
                heartbeat: $d_hb[0], heartbeat_base: $d_hb0[0], sharding: $d_sb[0],
                emulator: $d_emu[0], e2e_http_plain: $d_e2ep[0], e2e_http_in_use: $d_e2eh[0],
                e2e_http_plain_after: $d_e2ep2[0], bridge: $d_br[0]},
      failed_phases: $failed, elapsed_s: $elapsed}' > "$OUT"

# verdict VALUE TARGET ge|le
verdict () {
    if [ "$1" = null ] || [ "$2" = null ]; then echo "n/a"
    elif [ "$(jq -n --argjson v "$1" --argjson t "$2" "\$v $3 \$t")" = true ]; then echo "met"
    else echo "MISSED"; fi
}
row () { printf '%-46s %14s %14s  %s\n' "$1" "$2" "$3" "$4"; }
echo
row "figure" "target" "measured" ""
row "e2e no-op BEAN runs/s (sustained)" ">= 50000" "$(j e2e .runs_per_s)" \
    "$(verdict "$(j e2e .runs_per_s)" 50000 '>=')"
row "trigger -> handler start p50 (us)" "<= 300" "$(j latency .p50_us)" \
    "$(verdict "$(j latency .p50_us)" 300 '<=')"
row "trigger -> handler start p99 (us)" "<= 1000" "$(j latency .p99_us)" \
    "$(verdict "$(j latency .p99_us)" 1000 '<=')"
row "$CRON_JOBS one-second crons: lateness p99 (ms)" "<= 5" "$(j cron .p99_ms)" \
    "$(verdict "$(j cron .p99_ms)" 5 '<=')"
CRON_FAILED=null; [ "$(j cron .final)" = null ] || CRON_FAILED=$(( $(j cron .final) - $(j cron .ok) ))
row "$CRON_JOBS one-second crons: runs failed" "0" "$CRON_FAILED" "$(verdict "$CRON_FAILED" 0 '<=')"
row "$CRON_JOBS one-second crons: runs unfinished" "0" "$(j cron .lost)" \
    "$(verdict "$(j cron .lost)" 0 '<=')"
row "$JOBS_IN_STORE jobs: scheduler RSS (MB)" "<= 300" "$(j million .rss_mb)" \
    "$(verdict "$(j million .rss_mb)" 300 '<=')"
row "$JOBS_IN_STORE jobs: idle CPU (%)" "<= 2" "$(j million .cpu_pct)" \
    "$(verdict "$(j million .cpu_pct)" 2 '<=')"
row "GLUE_SHELL true runs/s" ">= 1500" "$(j glue .runs_per_s)" \
    "$(verdict "$(j glue .runs_per_s)" 1500 '>=')"
row "sleeping runs at once, one agent ($CONC_RUNS asked)" ">= 10000" "$(j concurrent .max_at_once)" \
    "$(verdict "$(j concurrent .max_at_once)" 10000 '>=')"
row "$EMU_N agents: registered" "$EMU_N" "$(jq -r '.registered // "null"' "$T/emu.json")" ""
row "$EMU_N agents: registration of all (ms)" "<= 5000" "$REG_MS" "$(verdict "$REG_MS" 5000 '<=')"
HB=$(jq -r '.heartbeat_cpu_pct // "null"' "$OUT")
row "$EMU_N agents: heartbeat CPU (% of a core)" "<= 2" "$HB" "$(verdict "$HB" 2 '<=')"
row "$EMU_N agents: SHARDING_BROADCAST runs/s" "" "$(j sharding .runs_per_s)" \
    "($(j sharding .final) of $(j sharding .rows) rows final, $(j sharding .addresses) agents)"
# (CURVE: at least half the plaintext rate, issue #18's goal)
HALF=null
[ "$(j e2e .runs_per_s)" = null ] || HALF=$(jq -n "$(j e2e .runs_per_s) / 2 | floor")
row "CURVE: e2e no-op BEAN runs/s" ">= half: $HALF" "$(j e2e_curve .runs_per_s)" \
    "$(verdict "$(j e2e_curve .runs_per_s)" "$HALF" '>=')"
row "CURVE: trigger -> handler start p50 (us)" "" "$(j latency_curve .p50_us)" ""
row "CURVE: trigger -> handler start p99 (us)" "" "$(j latency_curve .p99_us)" ""
# (HTTP in use: within 5 % of the same scheduler's e2e without it, issue 20)
FLOOR=null
PLAIN=$(jq -r '.http_e2e_plain_runs_per_s // "null"' "$OUT")
[ "$PLAIN" = null ] || FLOOR=$(jq -n "$PLAIN * 0.95 | floor")
row "e2e runs/s, HTTP idle (before, after)" "" "$PLAIN" "($(j e2e_plain .runs_per_s), $(j e2e_plain2 .runs_per_s))"
row "e2e runs/s, /metrics 1/s + dashboard $(j e2e_http .dashboard)" ">= $FLOOR" "$(j e2e_http .runs_per_s)" \
    "$(verdict "$(j e2e_http .runs_per_s)" "$FLOOR" '>=')"
row "  the browser's CPU in that phase (% of a core)" "" "$(j e2e_http .browser_cpu_pct)" ""
row "bridge: no-op runs/s to one executor" ">= 2000" "$(j bridge .runs_per_s)" \
    "$(verdict "$(j bridge .runs_per_s)" 2000 '>=')"
row "bridge: its CPU per run (us)" "<= 50" "$(j bridge .cpu_us_per_run.agent)" \
    "$(verdict "$(j bridge .cpu_us_per_run.agent)" 50 '<=')"
row "  the executor's CPU per run (us, Python)" "" "$(j bridge .executor_cpu_us_per_run)" ""
echo
echo "bench: results in $OUT (${ELAPSED} s)"
LOST=$(jq '[.details[] | .lost? // 0] | add' "$OUT")
BAD=$(jq '[.details[] | select(.final? and .ok?) | .final - .ok] | add // 0' "$OUT")
if [ "$BAD" -gt 0 ]; then
    KEEP_T=1
    echo "bench: WARNING: $BAD run(s) ended failed (see details in $OUT)"
    jq -r '.details | to_entries[] | select(.value.final? and .value.ok? and .value.final > .value.ok)
        | "  \(.key): \(.value.final - .value.ok) of \(.value.final) failed"' "$OUT"
fi
if [ "$FAILED" -gt 0 ]; then
    echo "bench: FAILED: $FAILED phase(s) failed, $LOST run(s) without a final row"
    exit 1
fi
exit 0
