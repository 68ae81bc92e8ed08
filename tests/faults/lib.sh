# tests/faults/lib.sh -- helpers of the fault suite, on top of tests/lib.sh
# (real daemons on 127.0.0.1, a temporary folder, check/wait_for/xxl_done).
#
# A scenario sources this, calls faults_setup NAME, and gets:
#   - a seed (XXL_FAULT_SEED, else random), printed first, from which every
#     random instant and choice comes (rnd, rsleep): a failure replays;
#   - XXL_FAULTS: short (make check, the default) or long (make faults);
#     `pick SHORT LONG` chooses between two values;
#   - a plugins folder with the probe handlers (probe.so) and demo.so, a
#     probe file ($PROBE) every agent's runs append to, the GLUE probe
#     ($GLUE), a scheduler config with short beats and monitors;
#   - helpers to start agents (fagent), kill/freeze/restart daemons, wait
#     for quiet, find a dead agent's orphans, run the checker (fcount);
#   - a cleanup on every exit: load loops stopped, frozen daemons thawed,
#     every daemon and every process an agent of this test started killed
#     by pid, tmpfs mounts unmounted, then tests/lib.sh's own cleanup.

FAULTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$FAULTS_DIR/../lib.sh"
: "${XXL_FAULTS:=short}"
COUNT="$FAULTS_DIR/count.sh"
export XXL_RUNNER="${XXL_RUNNER:-$XXL_BUILD/agent/xxl-runner}"
PROBE_SO="$XXL_BUILD/tests/faults/.libs/probe.so"
BGPIDS=""
MOUNTS=""

# faults_setup NAME: the temporary folder, the seed, the plugins, the configs
faults_setup () {
    FNAME="$1"
    if [ "$XXL_FAULTS" = off ]; then
        echo "# $FNAME: skipped (XXL_FAULTS=off)"
        exit 77
    fi
    SEED="${XXL_FAULT_SEED:-$((RANDOM * 32768 + RANDOM))}"
    FSTATE=$SEED
    echo "# $FNAME: seed $SEED, form $XXL_FAULTS (replay: XXL_FAULT_SEED=$SEED XXL_FAULTS=$XXL_FAULTS" \
         "XXL_BUILD=$XXL_BUILD bash tests/faults/$FNAME.sh)"
    # (the helpers scenarios call: without xxl_req the shares every
    # scheduler holds read as none, and waits for them run out)
    for need in "$PROBE_SO" "$XXL_BUILD/tests/xxl_req" "$XXL_BUILD/tests/xxl_relay" \
                "$XXL_BUILD/tests/xxl_peer"; do
        if [ ! -f "$need" ]; then
            echo "FAIL - $need not built (make check or make faults builds it)"
            echo "0 passed, 1 failed"
            exit 1
        fi
    done
    xxl_setup
    trap faults_cleanup EXIT
    mkdir -p "$T/plugins"
    cp "$PROBE_SO" "$XXL_BUILD/plugins/handlers/.libs/demo.so" "$T/plugins/"
    export AGENT_PLUGINS="$T/plugins"
    export XXL_PROBE_FILE="$T/probe.txt"
    : > "$XXL_PROBE_FILE"
    PROBE="$XXL_PROBE_FILE"
    cp "$FAULTS_DIR/probe_glue.sh" "$T/probe_glue.sh"
    GLUE="$T/probe_glue.sh"
    ACKED="$T/acked"
    FDB="$XXL_DB"            # the store (a scenario may move it: XXL_SCHEDULER_ARGS="--db ...")
    : > "$ACKED"
    # Short beats and dead times, monitors every second, runs lost after 5 s
    cat > "$T/scheduler.cfg" <<CFG
scheduler
    run_timeout = ${F_RUN_TIMEOUT:-3000}
    request_timeout = 3000
    stop_wait = 3000
    registry
        beat = 1
        dead = ${F_DEAD:-3}
    planner
        recovery_wait = ${F_RECOVERY_WAIT:-10000}
        warmup = ${F_WARMUP:-3000}
        ahead = ${F_AHEAD:-3000}
    monitor
        fail_check = 500
        lost_check = 1000
        lost_after = ${F_LOST_AFTER:-5}
CFG
    cat > "$T/agent.cfg" <<CFG
agent
    beat = 1
    callback_timeout = 1000
    run_lease = ${F_RUN_LEASE:-20}
CFG
}

# rnd N: sets R to a number in [0, N) from the seeded sequence
rnd () {
    FSTATE=$(( (FSTATE * 6364136223846793005 + 1442695040888963407) & 0x7fffffffffffffff ))
    R=$(( (FSTATE >> 20) % $1 ))
}
# rsleep MIN_MS MAX_MS: sleeps a seeded random time (load runs meanwhile)
rsleep () {
    rnd $(( $2 - $1 + 1 ))
    local ms=$(( $1 + R ))
    sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
}
# pick SHORT LONG: the value for this form
pick () { if [ "$XXL_FAULTS" = long ]; then echo "$2"; else echo "$1"; fi; }
now_ms () { local t=${EPOCHREALTIME/[.,]/}; echo $(( t / 1000 )); }
# past MS: the wall clock is at or past MS (no process: polled every 50 ms)
past () { local t=${EPOCHREALTIME/[.,]/}; [ $(( t / 1000 )) -ge "$1" ]; }
say () { echo "# $*"; }

# fagent NAME APP [agent flags]: an agent whose runs' probe lines carry NAME
fagent () {
    local name="$1"
    XXL_PROBE_TAG="$name" start_agent "$@"
}
apid () { eval "echo \${APID_${1//-/_}:-}"; }

# wait_until SECONDS command...: polls every 50 ms until the command
# succeeds or SECONDS of wall time passed (tests/lib.sh's wait_for counts
# polls, so a slow command stretches its limit)
wait_until () {
    local end=$(( ${EPOCHREALTIME/[.,]/} + $1 * 1000000 )); shift
    while :; do
        if "$@" >/dev/null 2>&1; then return 0; fi
        [ "${EPOCHREALTIME/[.,]/}" -lt "$end" ] || return 1
        sleep 0.05
    done
}

# Daemons: signals, restarts
kill_sched () {     # kill_sched SIGNAL: and wait for it to be gone
    kill -CONT "$SPID" 2>/dev/null
    kill "-$1" "$SPID" 2>/dev/null
    timeout 30 tail --pid="$SPID" -f /dev/null
    wait "$SPID" 2>/dev/null
    return 0
}
# restart_sched: on the same endpoints; a scheduler that does not come back
# ends the scenario (a FAIL, and the counts so far)
restart_sched () {
    start_scheduler "$API" "$AGENTS" && return 0
    check "the scheduler restarts (see scheduler.log)" false
    tail -n 20 "$T/scheduler.log" | sed 's/^/    /'
    xxl_done
    exit 1
}
kill_agent () {     # kill_agent NAME SIGNAL
    local pid; pid=$(apid "$1")
    kill -CONT "$pid" 2>/dev/null
    kill "-$2" "$pid" 2>/dev/null
    timeout 30 tail --pid="$pid" -f /dev/null
    wait "$pid" 2>/dev/null
    return 0
}

# sql QUERY: the store, read-only (the scheduler may be writing it),
# columns separated by |.  SQL both stores take (COALESCE, not IFNULL);
# char() is PostgreSQL's chr() under XXL_STORE=pg (tests/lib.sh).
sql () {
    if [ "${XXL_STORE:-sqlite}" = pg ]; then
        PGOPTIONS="-c default_transaction_read_only=on -c client_min_messages=warning" \
            "$PG_BIN/psql" -X -q -A -t -F '|' -d "$FDB" -c "${1//char(/chr(}"
    else
        sqlite3 -readonly -batch -noheader "$FDB" ".timeout 5000" "$1"
    fi
}
# unfinished_rows [WHERE]: rows with no result yet (not failed at trigger)
unfinished_rows () { sql "SELECT COUNT(*) FROM xxl_job_log WHERE handle_code = 0 AND trigger_code != 500 ${1:+AND $1}"; }
quiet () { [ "$(unfinished_rows "${1:-}")" = 0 ]; }
# wait_quiet SECONDS [WHERE]: every row has its result (or failed trigger)
wait_quiet () { wait_until "$1" quiet "${2:-}"; }

# Load: a client loop triggering jobs, each logId it got back appended to
# $ACKED ("logId jobId ms"); it stops when $T/stop-load exists.  A trigger
# every 50 ms at most (XXL_LOAD_PAUSE seconds between them): unpaced, each
# loop took a whole CPU, and the scenarios beside it on a two-CPU machine
# waited for it
# load_start "JOB ..." [PARAM]: sets LOADPID; %n in PARAM becomes a number
# unique to the trigger (count.sh --chains follows a trigger's retries by it)
load_start () {
    rm -f "$T/stop-load"
    (
        set +e
        jobs=($1); n=${#jobs[@]}; i=0
        while [ ! -f "$T/stop-load" ]; do
            j=${jobs[$((i % n))]}; i=$((i + 1))
            p="${2:-}"; p="${p//%n/$BASHPID.$i}"
            # (3: acknowledged, and a run failed at once: its ids count;
            # xxl-ctl --json prints {"logIds":[ID,...]...)
            out=$("$CTL" --api "$API" --json --timeout 2000 job trigger "$j" ${2:+--param "$p"} 2>/dev/null) \
                || [ $? = 3 ] || continue
            if [[ $out =~ \"logIds\":\[([0-9,]*)\] ]]; then
                t=${EPOCHREALTIME/[.,]/}
                for id in ${BASH_REMATCH[1]//,/ }; do echo "$id $j $(( t / 1000 ))" >> "$ACKED"; done
            fi
            sleep "${XXL_LOAD_PAUSE:-0.05}"
        done
    ) &
    LOADPID=$!
    BGPIDS="$BGPIDS $LOADPID"
}
load_stop () {
    touch "$T/stop-load"
    [ -n "${LOADPID:-}" ] && timeout 20 tail --pid="$LOADPID" -f /dev/null
    wait "${LOADPID:-}" 2>/dev/null
    return 0
}
acked_count () { wc -l < "$ACKED"; }

# probe_procs [TAG]: pids of processes holding this test's probe file in
# their environment (agents and what they spawned), with XXL_PROBE_TAG=TAG
probe_procs () {
    local files
    files=$(grep -lzx "XXL_PROBE_FILE=$XXL_PROBE_FILE" /proc/[0-9]*/environ 2>/dev/null)
    [ -z "${1:-}" ] || [ -z "$files" ] || files=$(grep -lzx "XXL_PROBE_TAG=$1" $files 2>/dev/null)
    for f in $files; do f=${f#/proc/}; echo "${f%/environ}"; done
}
# orphans NAME: processes an agent NAME started that outlive it (the agent
# itself excluded, should it be running)
orphans () {
    local me; me=$(apid "$1")
    probe_procs "$1" | while read -r p; do
        [ "$p" = "$me" ] && kill -0 "$me" 2>/dev/null && continue
        echo "$p $(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | cut -c1-120)"
    done
}

# fcount LABEL [count.sh flags]: the checker on this test's store, probe file
# and acknowledged ids; one check named after the guarantee
fcount () {
    local label="$1"; shift
    "$COUNT" --db "$FDB" --probe "$PROBE" --acked "$ACKED" --label "$label:" "$@" \
        > "$T/count.out" 2>&1
    local rc=$?
    sed 's/^/    /' "$T/count.out"
    check "$label: every acknowledged trigger ran exactly once, none twice, none unfinished ($(grep -m1 '^counts:' "$T/count.out" | cut -c9-))" \
        test "$rc" = 0
}

# mount_tmpfs DIR SIZE: a small filesystem (root only; unmounted at exit)
mount_tmpfs () {
    mkdir -p "$1"
    mount -t tmpfs -o "size=$2" tmpfs "$1" || return 1
    MOUNTS="$1 $MOUNTS"
}

faults_cleanup () {
    local rc=$?
    touch "$T/stop-load" 2>/dev/null
    for pid in $BGPIDS; do xxl_own "$pid" && kill -TERM "$pid" 2>/dev/null; done
    # A stopped process ignores TERM until continued (only this test's own:
    # xxl_own, tests/lib.sh)
    for pid in $PIDS; do xxl_own "$pid" && kill -CONT "$pid" 2>/dev/null; done
    for pid in $BGPIDS; do timeout 10 tail --pid="$pid" -f /dev/null 2>/dev/null; done
    # Processes the agents started that outlived them (by pid, never by name)
    local p
    for p in $(probe_procs); do
        case " $PIDS " in *" $p "*) continue ;; esac
        kill -KILL "$p" 2>/dev/null
    done
    # lib.sh's cleanup kills the daemons and scans logs; it removes $T,
    # so the mounts go first, once nothing holds them
    for pid in $PIDS; do xxl_own "$pid" && kill -TERM "$pid" 2>/dev/null; done
    for pid in $PIDS; do
        for _ in $(seq 50); do xxl_own "$pid" || break; sleep 0.1; done
        xxl_own "$pid" && kill -KILL "$pid" 2>/dev/null
    done
    for p in $(probe_procs); do kill -KILL "$p" 2>/dev/null; done
    for m in $MOUNTS; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; done
    xxl_cleanup
    exit "$rc"
}

# Several schedulers sharing one store (ha_kill, ha_cut): S_API holds their
# api endpoints, REQ is tests/xxl_req.
# shares_of API: the shares it holds, as a JSON array ([] when it is down)
shares_of () { "$REQ" "$1" PING 2>/dev/null | jq -c '[.content.shares[]?]' 2>/dev/null || echo '[]'; }
# held_by "I ...": how many shares the schedulers I... hold between them
held_by () {
    local all='[]' s
    for i in $1; do s=$(shares_of "${S_API[$i]}"); all=$(jq -nc --argjson a "$all" --argjson b "${s:-[]}" '$a + $b'); done
    jq -n --argjson a "$all" '$a | unique | length'
}
all_held () { [ "$(held_by "$1")" = 16 ]; }
# both_registered API APP: two agents of APP connected to that scheduler
both_registered () {
    "$CTL" --api "$1" --json agent list \
        | jq -e --arg app "$2" '[.agents[] | select(.app == $app and .connected)] | length == 2' >/dev/null
}
# ha_three APP A1 A2: three schedulers on the test's store (S_API, S_AGENTS,
# S_PID), agents A1 and A2 of APP connected to all three (ALL_AGENTS),
# API the first's, APP's group added; checks that both agents registered
# with each and that the three hold the 16 shares
ha_three () {
    S_API=(); S_AGENTS=(); S_PID=()
    for i in 0 1 2; do
        start_scheduler || exit 1
        S_API[$i]=$API; S_AGENTS[$i]=$AGENTS; S_PID[$i]=$SPID
    done
    ALL_AGENTS=$(IFS=,; echo "${S_AGENTS[*]}")
    AGENTS="$ALL_AGENTS" fagent "$2" "$1"
    AGENTS="$ALL_AGENTS" fagent "$3" "$1"
    API=${S_API[0]}
    for i in 0 1 2; do check "agents register with scheduler $i" wait_until 15 both_registered "${S_API[$i]}" "$1"; done
    ctl group add "$1" >/dev/null
    check "the three schedulers hold the 16 shares" wait_until 15 all_held "0 1 2"
}
