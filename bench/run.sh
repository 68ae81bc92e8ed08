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
# Each figure is written beside the reference DESIGN §7 judges it by, and
# as a ratio to it (the machine's speed moves 2x between hours; the ratio
# holds): the references are measured in the same run by bench/xxl_bare.
#
# Phases (each figure is explained in docs/performance.md):
#   A  the references first (the bare loop `e2e-bare`, its single round
#      trip); then one scheduler + one agent: trigger latency, end-to-end
#      no-op runs, concurrent sleeping runs, the same e2e right after them,
#      GLUE_SHELL runs, then a posix_spawn loop of `bash FILE` (GLUE's
#      reference), the store floor (xxl_floor: this build's store alone
#      writing what the e2e writes per run) and the bare loop and round
#      trip again (the reference is the mean of the two measures around
#      the group)
#   D  midnight's herd: a fresh store with 100,000 jobs due at the same
#      second, one agent: one run each? the last handler's start after
#      the second, against 100,000 / the e2e rate + 1 s
#   B  a fresh store: 50,000 jobs on one-second crons, one agent
#   C  a fresh store with 1,000,000 enabled jobs, no agent: RSS and idle CPU
#   M  1,000 agents (bench/xxl_emu, one process): registration time, the
#      scheduler's CPU for their heartbeats, a SHARDING_BROADCAST job
#      triggered by hand (a run on every agent per trigger)
#   H  e2e with /metrics polled every second and the console's dashboard
#      open (headless Chromium), beside the same scheduler's e2e without
#      them
#   K  group A's latency and e2e with CURVE on (keys from xxl-ctl keygen),
#      right after the same e2e in plain text on a scheduler of its own
#   X  e2e no-op runs through xxl-bridge to one XXL-JOB executor
#      (tests/bridge/fake_executor.py --fast): runs/s, and the CPU per run
#      of the bridge (and of the executor, to see which one limits)
#
# Environment: XXL_BUILD (build tree, set by make), XXL_BENCH_NO_DASHBOARD=1
# (group H without the browser), XXL_BENCH_QUICK=1 for
# short runs, XXL_KEEP=1 to keep the temporary folder, TMPDIR,
# XXL_BENCH_ONLY="A B C D H K M X" to run only some of the phase groups (the
# others' figures are null).  Sizes (each phase reports what it asked and
# what it got): XXL_BENCH_CRON_JOBS (50,000), XXL_BENCH_CRON_S (20),
# XXL_BENCH_CRON_HISTORY (0: finished runs of each cron job put in the store
# first, as a store that has run them a while holds),
# XXL_BENCH_CONC_RUNS (10,000 sleeping runs at once), XXL_BENCH_CONC_MS
# (8,000), XXL_BENCH_AGENTS (1,000), XXL_BENCH_SB_TRIGGERS (20),
# XXL_BENCH_DAEMONS (another build tree: its daemons, plugins and bench
# handlers are measured, with this tree's bench programs and references),
# XXL_BENCH_HERD_JOBS (100,000 jobs due at one second), XXL_BENCH_BARE_WINDOW
# (runs open at once in the bare loop: 2,000, the e2e client's window),
# XXL_BENCH_LATENCY_ONLY=1 (group A's latency phase and the bare round trip
# only: for bisecting), XXL_BENCH_HB_S (the agents' beat, and the window their heartbeats are
# measured over: one whole beat; 30 s, the default beat of xxl-agent and
# the scheduler); XXL_BENCH_BRIDGE_PARALLEL (group X's bridge/parallel, 64);
# XXL_BENCH_BRIDGE (the xxl-bridge group X runs: the build's by default;
# another one to compare two trees back to back);
# XXL_BENCH_QUICK=1 makes every default small.

set -u
: "${XXL_BUILD:?run through make bench (XXL_BUILD unset)}"
: "${XXL_SRC:=$(cd "$(dirname "$0")/.." && pwd)}"
# (XXL_BENCH_DAEMONS: another build tree whose daemons, plugins and bench
# handlers are measured by this one's bench, to compare two trees)
D="${XXL_BENCH_DAEMONS:-$XXL_BUILD}"
SCHEDULER="$D/scheduler/xxl-scheduler"
AGENT="$D/agent/xxl-agent"
CTL="$D/sdk/ctl/xxl-ctl"
BENCH="$XXL_BUILD/bench/xxl_bench"
BARE="$XXL_BUILD/bench/xxl_bare"
FLOOR="$XXL_BUILD/bench/xxl_floor"
EMU="$XXL_BUILD/bench/xxl_emu"
ROUTERS="$D/plugins/routers/.libs"
ALARMS="$D/plugins/alarms/.libs"
HANDLERS="$D/bench/.libs"
OUT="$XXL_BUILD/bench/results.json"
export XXL_RUNNER="$D/agent/xxl-runner"

if [ -n "${XXL_BENCH_QUICK:-}" ]; then
    LAT_SAMPLES=300; CONC_RUNS=500; CONC_MS=3000; E2E_S=4; GLUE_S=3; CRON_JOBS=2000; CRON_S=8
    MILLION=100000; IDLE_S=4; EMU_N=50; SB_TRIGGERS=5; HB_S=5; HERD_JOBS=10000
else
    LAT_SAMPLES=2000; CONC_RUNS=10000; CONC_MS=8000; E2E_S=15; GLUE_S=10; CRON_JOBS=50000
    CRON_S=20; MILLION=1000000; IDLE_S=10; EMU_N=1000; SB_TRIGGERS=20; HB_S=30; HERD_JOBS=100000
fi
HERD_JOBS=${XXL_BENCH_HERD_JOBS:-$HERD_JOBS}; BARE_WINDOW=${XXL_BENCH_BARE_WINDOW:-2000}
CRON_JOBS=${XXL_BENCH_CRON_JOBS:-$CRON_JOBS}; CRON_S=${XXL_BENCH_CRON_S:-$CRON_S}
CRON_HISTORY=${XXL_BENCH_CRON_HISTORY:-0}
CONC_RUNS=${XXL_BENCH_CONC_RUNS:-$CONC_RUNS}; CONC_MS=${XXL_BENCH_CONC_MS:-$CONC_MS}
EMU_N=${XXL_BENCH_AGENTS:-$EMU_N}; SB_TRIGGERS=${XXL_BENCH_SB_TRIGGERS:-$SB_TRIGGERS}
HB_S=${XXL_BENCH_HB_S:-$HB_S}
E2E_JOBS=64; E2E_INFLIGHT=20000; GLUE_INFLIGHT=2000; BRIDGE_INFLIGHT=2000

for f in "$SCHEDULER" "$AGENT" "$CTL" "$BENCH" "$BARE" "$FLOOR" "$EMU"; do
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

# phase NAME command...: runs xxl_bench (PROG: another program), keeps its
# JSON in $T/NAME.json
phase () {
    local name="$1"; shift
    say "$name ..."
    if "${PROG:-$BENCH}" "$@" > "$T/$name.json"; then :; else
        say "$name FAILED (exit $?): $(cat "$T/$name.json")"
        FAILED=$((FAILED + 1))
    fi
    jq -e 'type == "object"' "$T/$name.json" >/dev/null 2>&1 || echo '{}' > "$T/$name.json"
    say "$name: $(cat "$T/$name.json")"
}

# (group K sets these: CURVE keys for the daemons and the clients)
SCHED_ARGS=""; AGENT_ARGS=""; CTL_ARGS=""
START=$(date +%s)
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
say "working in $T (load average $LOAD_START)"
for name in latency concurrent e2e glue cron million latency_curve e2e_curve \
            hb_base hb sharding emu e2e_plain e2e_http e2e_plain2 bridge \
            bare_loop bare_loop2 bare_rt bare_rt2 spawn e2e_after herd e2e_k_plain store_floor; do
    echo '{}' > "$T/$name.json"
done
# only GROUP: true when the phase group is to run
only () { [ -z "${XXL_BENCH_ONLY:-}" ] || [[ " $XXL_BENCH_ONLY " == *" $1 "* ]]; }
JOBS_IN_STORE=0

# ---- A: the references, then one scheduler, one agent
# (bare: the references of DESIGN §7, each measured before and after the
# group's phases)
bare () {
    PROG="$BARE" phase "bare_rt$1" rt "$T/bare-rt$1.db" "$LAT_SAMPLES"
    [ -n "${XXL_BENCH_LATENCY_ONLY:-}" ] && return
    PROG="$BARE" phase "bare_loop$1" loop "$T/bare$1.db" "$E2E_S" "$BARE_WINDOW"
}
if only A; then
bare ""
start_scheduler a || exit 1
"$BENCH" group "$API" bench >/dev/null || exit 1
start_agent bench-a bench || exit 1
phase latency latency "$API" "$T/a.db" bench "$LAT_SAMPLES"
if [ -z "${XXL_BENCH_LATENCY_ONLY:-}" ]; then
phase e2e e2e "$API" "$T/a.db" bench noop "$E2E_JOBS" "$E2E_S" "$E2E_INFLIGHT" "$SPID" "$APID"
phase concurrent concurrent "$API" "$T/a.db" bench "$CONC_RUNS" "$CONC_MS"
phase e2e_after e2e "$API" "$T/a.db" bench noop "$E2E_JOBS" "$E2E_S" "$E2E_INFLIGHT" "$SPID" "$APID"
phase glue e2e "$API" "$T/a.db" bench glue "$E2E_JOBS" "$GLUE_S" "$GLUE_INFLIGHT" "$SPID" "$APID"
fi
cleanup
[ -n "${XXL_BENCH_LATENCY_ONLY:-}" ] || PROG="$BARE" phase spawn spawn "$GLUE_S"
# (the store's share of a run: xxl_floor writes what the engine writes per
# no-op run of the e2e, on the daemons' store code, and nothing else)
[ -n "${XXL_BENCH_LATENCY_ONLY:-}" ] || PROG="$FLOOR" phase store_floor "$T/floor.db" "$E2E_S" 1000 "$E2E_JOBS"
bare 2
fi

# ---- B: 10,000 one-second crons on a fresh store
if only B; then
start_scheduler b || exit 1
"$BENCH" group "$API" bench >/dev/null || exit 1
if [ "$CRON_HISTORY" -gt 0 ]; then
    # the history of a store that has run the crons a while: CRON_HISTORY
    # finished runs of each of the jobs to come (ids 1..CRON_JOBS), a
    # second apart two days ago, written in time order as they were made
    # (the scheduler stopped meanwhile, as for group C's jobs)
    say "writing $CRON_HISTORY runs of history for each of $CRON_JOBS jobs ..."
    stop_scheduler
    sqlite3 "$T/b.db" >/dev/null <<SQL || { say "history insert failed"; exit 1; }
PRAGMA journal_mode = WAL;
BEGIN;
WITH RECURSIVE j (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM j WHERE i < $CRON_JOBS),
    h (k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM h WHERE k < $CRON_HISTORY)
INSERT INTO xxl_job_log (job_group, job_id, executor_address, executor_handler, trigger_time,
    trigger_code, trigger_msg, trigger_type, schedule_time, handle_time, handle_code, handle_msg)
SELECT (SELECT id FROM xxl_job_group WHERE app_name = 'bench'), j.i, 'bench-b',
    'noopJobHandler', $(( ($(date +%s) - 172800) * 1000 )) + h.k * 1000, 200,
    printf ('%.264c', 'x'), 'CRON', $(( ($(date +%s) - 172800) * 1000 )) + h.k * 1000,
    $(( ($(date +%s) - 172800) * 1000 + 1 )) + h.k * 1000, 200, ''
FROM h, j;
COMMIT;
SQL
    start_scheduler b || exit 1
fi
start_agent bench-b bench || exit 1
phase cron cron "$API" "$T/b.db" bench "$CRON_JOBS" "$CRON_S"
cleanup
fi

# insert_jobs DB COUNT DESC CONF HANDLER NEXT_MS: COUNT enabled CRON jobs of
# the group bench (CONF, HANDLER, their next fire at NEXT_MS) put straight
# into the store DB with the sqlite3 shell, in one transaction (the
# scheduler stopped)
insert_jobs () {
    local now_ms=$(( $(date +%s) * 1000 ))
    sqlite3 "$1" >/dev/null <<SQL || { say "bulk insert failed"; return 1; }
PRAGMA journal_mode = WAL;
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $2)
INSERT INTO xxl_job_info (job_group, job_desc, add_time, update_time, schedule_type,
    schedule_conf, executor_handler, glue_updatetime, trigger_status, trigger_next_time)
SELECT (SELECT id FROM xxl_job_group WHERE app_name = 'bench'), '$3 ' || i,
    $now_ms, $now_ms, 'CRON', '$4', '$5', $now_ms, 1, $6
FROM n;
COMMIT;
SQL
}

# ---- C: a million enabled jobs (a yearly cron, next fire far ahead)
if only C; then
start_scheduler c || exit 1
"$BENCH" group "$API" bench >/dev/null || exit 1
stop_scheduler
say "inserting $MILLION jobs ..."
NEXT_MS=$(( $(date -u -d "$(( $(date -u +%Y) + 1 ))-01-01T00:00:00Z" +%s) * 1000 ))
insert_jobs "$T/c.db" "$MILLION" "bench job" '0 0 0 1 1 ?' noopJobHandler "$NEXT_MS" || exit 1
start_scheduler c || exit 1
sleep 3                                 # settle: first planner scans, page cache
phase million idle "$SPID" "$IDLE_S"
JOBS_IN_STORE=$(sqlite3 "$T/c.db" 'SELECT COUNT(*) FROM xxl_job_info WHERE trigger_status = 1')
cleanup
fi

# ---- D: midnight's herd: HERD_JOBS jobs put in a fresh store (the
# sqlite3 shell, the scheduler stopped) on a daily cron of one second,
# their next fire that second, HERD_LEAD s ahead: time for the scheduler
# to start and the agent to register
HERD_LEAD=${XXL_BENCH_HERD_LEAD:-15}
if only D; then
start_scheduler d || exit 1
"$BENCH" group "$API" bench >/dev/null || exit 1
stop_scheduler
AT=$(( $(date +%s) + HERD_LEAD ))
say "inserting $HERD_JOBS jobs due at $(date -d "@$AT" +%T) ..."
insert_jobs "$T/d.db" "$HERD_JOBS" "herd job" "$(date -d "@$AT" +'%-S %-M %-H') * * ?" \
    stampJobHandler $((AT * 1000)) || exit 1
HERD_FIRST=$(sqlite3 "$T/d.db" "SELECT MIN(id) FROM xxl_job_info WHERE job_desc LIKE 'herd job %'")
HERD_LAST=$(sqlite3 "$T/d.db" "SELECT MAX(id) FROM xxl_job_info WHERE job_desc LIKE 'herd job %'")
start_scheduler d || exit 1
start_agent bench-d bench || exit 1
if [ "$(date +%s%3N)" -gt $(( AT * 1000 - 500 )) ]; then
    say "herd: the scheduler and agent were not up 0.5 s before the second: XXL_BENCH_HERD_LEAD"
    FAILED=$((FAILED + 1))
else
    phase herd herd "$T/d.db" "$HERD_FIRST" "$HERD_LAST" $((AT * 1000))
fi
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

# ---- K: group A's latency and e2e over CURVE, after the same e2e in
# plain text on a scheduler of its own (the reference of the CURVE figure,
# measured beside it)
if only K; then
start_scheduler k0 || exit 1
"$BENCH" group "$API" bench >/dev/null || exit 1
start_agent bench-k0 bench || exit 1
phase e2e_k_plain e2e "$API" "$T/k0.db" bench noop "$E2E_JOBS" "$E2E_S" "$E2E_INFLIGHT" "$SPID" "$APID"
cleanup
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

# ---- The targets of DESIGN §7, each as a ratio to its reference
# mean A B: the mean of two measures (one when the other is null)
mean () {
    if [ "$1" = null ]; then echo "$2"; elif [ "$2" = null ]; then echo "$1"
    else jq -n "($1 + $2) / 2 | . * 10 | round / 10"; fi
}
BARE_LOOP=$(mean "$(j bare_loop .runs_per_s)" "$(j bare_loop2 .runs_per_s)")
BARE_P50=$(mean "$(j bare_rt .p50_us)" "$(j bare_rt2 .p50_us)")
BARE_P99=$(mean "$(j bare_rt .p99_us)" "$(j bare_rt2 .p99_us)")
SPAWN=$(j spawn .runs_per_s)
E2E=$(j e2e .runs_per_s)
TARGETS="$T/targets.jsonl"; TABLE="$T/table.txt"
: > "$TARGETS"; : > "$TABLE"
# judge KEY FIGURE MEASURED REFERENCE REFNAME OP TARGET: a row of the table
# and of results.json's "targets"; KEY (when not -) also a top-level key
# holding the ratio.  REFERENCE - : the target is absolute (the measure
# itself is judged).  OP is >= or <=.
judge () {
    local key="$1" figure="$2" value="$3" ref="$4" refname="$5" op="$6" target="$7"
    local ratio=null judged verdict
    if [ "$ref" != - ]; then
        if [ "$value" != null ] && [ "$ref" != null ] && [ "$(jq -n "$ref > 0")" = true ]; then
            ratio=$(jq -n "$value / $ref * 100 | round / 100")
        fi
        judged=$ratio
    else judged=$value; refname=""; fi
    if [ "$judged" = null ]; then verdict="n/a"
    elif [ "$(jq -n "$judged $op $target")" = true ]; then verdict="met"
    else verdict="NOT MET"; fi
    # (the table leaves out the figures of groups that did not run)
    [ "$value" = null ] && [ "$judged" = null ] \
        || printf '%-50s %10s %10s %6s %8s  %s\n' "$figure" "$value" "$([ "$ref" = - ] || echo "$ref")" \
            "$([ "$ref" = - ] || echo "$ratio")" "$op $target" "$verdict" >> "$TABLE"
    jq -cn --arg key "$key" --arg figure "$figure" --argjson value "$value" --arg refname "$refname" \
        --argjson ref "$([ "$ref" = - ] && echo null || echo "$ref")" --argjson ratio "$ratio" \
        --arg op "$op" --argjson target "$target" --arg verdict "$verdict" \
        '{key: $key, figure: $figure, measured: $value, reference: $ref, reference_is: $refname,
          ratio: $ratio, target: "\($op) \($target)", met: (if $verdict == "n/a" then null
          else $verdict == "met" end)}' >> "$TARGETS"
}
# (the column heads; "reference" and "ratio" are empty for absolute targets)
printf '%-50s %10s %10s %6s %8s  %s\n' "figure (DESIGN §7)" "measured" "reference" "ratio" \
    "target" "" >> "$TABLE"
judge e2e_ratio_to_bare "e2e no-op BEAN runs/s / bare loop" "$E2E" "$BARE_LOOP" \
    "bare loop runs/s (e2e-bare)" '>=' 0.6
judge trigger_latency_p50_ratio_to_bare "trigger -> handler start p50 us / bare rt p50" \
    "$(j latency .p50_us)" "$BARE_P50" "bare round trip p50 us" '<=' 1.5
judge trigger_latency_p99_ratio_to_bare "trigger -> handler start p99 us / bare rt p99" \
    "$(j latency .p99_us)" "$BARE_P99" "bare round trip p99 us" '<=' 3
judge e2e_after_burst_ratio "e2e after $CONC_RUNS sleeping runs / e2e before" \
    "$(j e2e_after .runs_per_s)" "$E2E" "e2e runs/s before them" '>=' 0.9
judge agent_concurrent_ratio "sleeping runs at once / asked ($CONC_RUNS)" \
    "$(j concurrent .max_at_once)" "$(jq -n "$CONC_RUNS")" "runs asked" '>=' 1
EXPECTED=$(j cron .expected_samples)
judge cron_fires_ratio "$CRON_JOBS one-second crons: fires run / planned" \
    "$(j cron .samples)" "$EXPECTED" "fires planned" '>=' 1
judge - "$CRON_JOBS one-second crons: lateness p99 (ms)" "$(j cron .p99_ms)" - "" '<=' 5
CRON_FAILED=null; [ "$(j cron .final)" = null ] || CRON_FAILED=$(( $(j cron .final) - $(j cron .ok) ))
judge - "$CRON_JOBS one-second crons: runs failed" "$CRON_FAILED" - "" '<=' 0
judge - "$CRON_JOBS one-second crons: runs unfinished" "$(j cron .lost)" - "" '<=' 0
HERD_ALLOWED=null
[ "$E2E" = null ] || [ "$(j herd .jobs)" = null ] \
    || HERD_ALLOWED=$(jq -n "$(j herd .jobs) / $E2E * 1000 + 1000 | round")
judge herd_last_start_ratio "$HERD_JOBS due at one second: last start (ms)" \
    "$(j herd .last_start_ms)" "$HERD_ALLOWED" "jobs / e2e rate + 1 s, ms" '<=' 1
HERD_ONCE=null
[ "$(j herd .jobs)" = null ] \
    || HERD_ONCE=$(( $(j herd .jobs) - $(j herd .jobs_without_run) - $(j herd .extra_runs) ))
judge herd_runs_once_ratio "$HERD_JOBS due at one second: jobs run once" "$HERD_ONCE" \
    "$(j herd .jobs)" "jobs due" '>=' 1
judge - "$JOBS_IN_STORE jobs: scheduler RSS (MB)" "$(j million .rss_mb)" - "" '<=' 300
judge - "$JOBS_IN_STORE jobs: idle CPU (%)" "$(j million .cpu_pct)" - "" '<=' 2
judge glue_shell_ratio_to_spawn "GLUE_SHELL true runs/s / bash spawn loop" "$(j glue .runs_per_s)" \
    "$SPAWN" "posix_spawn of bash FILE runs/s" '>=' 0.6
judge curve_e2e_ratio_to_plain "CURVE e2e runs/s / plaintext e2e" "$(j e2e_curve .runs_per_s)" \
    "$(j e2e_k_plain .runs_per_s)" "plaintext e2e runs/s (group K, just before)" '>=' 0.8
judge curve_latency_p50_ratio_to_bare "CURVE trigger -> handler p50 us / bare rt p50" \
    "$(j latency_curve .p50_us)" "$BARE_P50" "bare round trip p50 us" '<=' 1.5
judge - "$EMU_N agents: registration of all (ms)" "$REG_MS" - "" '<=' 5000
judge - "$EMU_N agents: heartbeat CPU (% of a core)" "$(jq -r '.heartbeat_cpu_pct // "null"' "$OUT")" \
    - "" '<=' 2
judge http_in_use_ratio "e2e, /metrics 1/s + dashboard / HTTP idle" "$(j e2e_http .runs_per_s)" \
    "$(jq -r '.http_e2e_plain_runs_per_s // "null"' "$OUT")" "e2e runs/s, HTTP idle" '>=' 0.95
judge - "bridge: no-op runs/s to one executor" "$(j bridge .runs_per_s)" - "" '>=' 2000
judge - "bridge: its CPU per run (us)" "$(j bridge .cpu_us_per_run.agent)" - "" '<=' 50
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
jq -s --slurpfile r "$OUT" --argjson loop "$BARE_LOOP" --argjson p50 "$BARE_P50" \
    --argjson p99 "$BARE_P99" --argjson spawn "$SPAWN" \
    --argjson after "$(j e2e_after .runs_per_s)" --argjson herd "$(j herd .last_start_ms)" \
    --arg l0 "$LOAD_START" --arg l1 "$LOAD_END" \
    --slurpfile d_bl "$T/bare_loop.json" --slurpfile d_bl2 "$T/bare_loop2.json" \
    --slurpfile d_rt "$T/bare_rt.json" --slurpfile d_rt2 "$T/bare_rt2.json" \
    --slurpfile d_sp "$T/spawn.json" --slurpfile d_af "$T/e2e_after.json" \
    --slurpfile d_herd "$T/herd.json" --slurpfile d_kp "$T/e2e_k_plain.json" \
    --slurpfile d_fl "$T/store_floor.json" \
    '$r[0] + {bare_loop_runs_per_s: $loop, bare_rt_p50_us: $p50, bare_rt_p99_us: $p99,
              spawn_runs_per_s: $spawn, e2e_after_burst_runs_per_s: $after,
              herd_last_start_ms: $herd, load_average_start: $l0, load_average_end: $l1}
     + ([.[] | select(.key != "-") | {(.key): .ratio}] | add)
     + {targets: [.[] | del(.key)]}
     | .details += {bare_loop: $d_bl[0], bare_loop_after: $d_bl2[0], bare_rt: $d_rt[0],
                    bare_rt_after: $d_rt2[0], spawn: $d_sp[0], e2e_after_burst: $d_af[0],
                    herd: $d_herd[0], e2e_plain_before_curve: $d_kp[0], store_floor: $d_fl[0]}' "$TARGETS" > "$OUT.tmp" && mv "$OUT.tmp" "$OUT"

echo
echo "bench: load average $LOAD_START at the start, $LOAD_END at the end"
echo "bench: references: bare loop $BARE_LOOP runs/s ($(j bare_loop .runs_per_s), $(j bare_loop2 .runs_per_s));" \
     "bare round trip p50 $BARE_P50 us, p99 $BARE_P99 us; bash spawn loop $SPAWN runs/s"
cat "$TABLE"
row () { printf '%-50s %10s  %s\n' "$1" "$2" "$3"; }
echo
row "other figures" "measured" ""
row "e2e CPU us/run: scheduler, agent" "$(j e2e .cpu_us_per_run.scheduler)" "$(j e2e .cpu_us_per_run.agent)"
row "bare loop CPU us/run: scheduler+client, agent" "$(j bare_loop .cpu_us_per_run.scheduler_and_client)" \
    "$(j bare_loop .cpu_us_per_run.agent)"
row "store floor: CPU us/run, runs/s (xxl_floor)" "$(j store_floor .cpu_us_per_run)" \
    "$(j store_floor .runs_per_s) runs/s: the store alone, one writer"
row "sleeping runs: all overlapped" "$(j concurrent .all_overlapped)" \
    "(start spread $(j concurrent .start_spread_ms) ms)"
row "$EMU_N agents: registered" "$(jq -r '.registered // "null"' "$T/emu.json")" ""
row "$EMU_N agents: SHARDING_BROADCAST runs/s" "$(j sharding .runs_per_s)" \
    "($(j sharding .final) of $(j sharding .rows) rows final, $(j sharding .addresses) agents)"
row "CURVE: trigger -> handler start p99 (us)" "$(j latency_curve .p99_us)" ""
row "e2e runs/s, HTTP idle (before, after)" "$(jq -r '.http_e2e_plain_runs_per_s // "null"' "$OUT")" \
    "($(j e2e_plain .runs_per_s), $(j e2e_plain2 .runs_per_s))"
row "  the browser's CPU in that phase (% of a core)" "$(j e2e_http .browser_cpu_pct)" ""
row "  the executor's CPU per run (us, Python)" "$(j bridge .executor_cpu_us_per_run)" ""
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
