# lib.sh -- helpers for the integration tests: real daemons on 127.0.0.1,
# ephemeral ports, a temporary folder, readiness waits, cleanup on exit.
# Each test script sources this, calls xxl_setup, uses check/wait_for, and
# ends with xxl_done (prints "N passed, M failed").
#
# The daemons and xxl-ctl take $T/state as their state folder
# (XXL_STATE_DIR): local keys a scheduler makes stay in the test.
# start_scheduler passes --open (no keys: every local client is admin) unless
# XXL_SCHEDULER_ARGS or the test's own flags give keys; tests of the local
# keys start their scheduler themselves.
#
# The store is an SQLite file, $T/xxl.db; with XXL_STORE=pg in the
# environment it is a database on a PostgreSQL server of the test's own
# (tests/pg.sh, in $T/pg, stopped at exit).  XXL_DB is what the scheduler
# gets as --db; xxl_sql runs SQL on it whichever it is.

set -u
: "${XXL_BUILD:?run through make check (XXL_BUILD unset)}"
: "${XXL_SRC:=$XXL_BUILD}"
# xxl_exe VAR PATH: sets VAR to the program that libtool's wrapper script
# at PATH would run, DIR/.libs/NAME, or to PATH when PATH is no script (a
# build without shared libraries).  The wrapper only sets LD_LIBRARY_PATH,
# exported below, then runs the program; calling it costs 3 sed, an ls and
# a shell, 6 times the program's own start, and the tests call xxl-ctl,
# xxl_req and xxl_peer hundreds of times each.
xxl_exe () {
    local line=""
    if [ -x "${2%/*}/.libs/${2##*/}" ] && IFS= read -r line < "$2" 2>/dev/null \
            && [ "${line#\#!}" != "$line" ]; then
        printf -v "$1" '%s' "${2%/*}/.libs/${2##*/}"
    else
        printf -v "$1" '%s' "$2"
    fi
}
export LD_LIBRARY_PATH="$XXL_BUILD/sdk/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
xxl_exe SCHEDULER "$XXL_BUILD/scheduler/xxl-scheduler"
xxl_exe AGENT "$XXL_BUILD/agent/xxl-agent"
xxl_exe CTL "$XXL_BUILD/sdk/ctl/xxl-ctl"
xxl_exe XXL_REQ "$XXL_BUILD/tests/xxl_req"
xxl_exe XXL_PEER "$XXL_BUILD/tests/xxl_peer"
xxl_exe XXL_RELAY "$XXL_BUILD/tests/xxl_relay"
xxl_exe XXL_BRIDGE "$XXL_BUILD/bridge/xxl-bridge"
# sleep and seq as bash's loadable builtins (Debian's bash-builtins,
# scripts/deps), when there: the waits below poll every 50 ms, and on two
# CPUs the suite is bound by its processes' starts (a fork and an exec of
# sleep cost 4-7 ms here).  Without the package the programs run
enable -f /usr/lib/bash/sleep sleep 2>/dev/null || :
enable -f /usr/lib/bash/seq seq 2>/dev/null || :
HANDLERS="$XXL_BUILD/plugins/handlers/.libs"
PASSED=0
FAILED=0
PIDS=""

xxl_setup () {
    XXL_STARTED=$SECONDS
    T=$(mktemp -d /tmp/xxl-test.XXXXXX)
    trap xxl_cleanup EXIT
    XXL_DB="$T/xxl.db"
    export XXL_STATE_DIR="$T/state"
    if [ "${XXL_STORE:-sqlite}" = pg ]; then
        . "$XXL_SRC/tests/pg.sh"
        if ! pg_start "$T/pg" >/dev/null || ! XXL_DB=$(pg_newdb xxl); then
            echo "FAIL - the PostgreSQL server for XXL_STORE=pg did not start"
            FAILED=$((FAILED + 1))
            exit 1
        fi
    fi
    cat > "$T/scheduler.cfg" <<CFG
scheduler
    registry
        beat = 1
        dead = 3
    run_timeout = 5000
    request_timeout = 3000
CFG
    cat > "$T/agent.cfg" <<CFG
agent
    beat = 1
    callback_timeout = 1000
    run_lease = ${XXL_RUN_LEASE:-20}
CFG
}

# xxl_own PID: true while PID is one of this test's background jobs, still
# running or stopped.  A pid that exited was reaped and may be another
# test's process by now: cleanup never signals it.
xxl_own () {
    # (jobs in a command substitution sees the shell's table; in a pipeline
    # it would not)
    local nl=$'\n'
    case "$nl$(jobs -rp)$nl$(jobs -sp)$nl" in *"$nl$1$nl"*) return 0 ;; esac
    return 1
}

xxl_cleanup () {
    for pid in $PIDS; do xxl_own "$pid" && kill -TERM "$pid" 2>/dev/null; done
    for pid in $PIDS; do
        for _ in $(seq 50); do xxl_own "$pid" || break; sleep 0.1; done
        xxl_own "$pid" && kill -KILL "$pid" 2>/dev/null
    done
    # A daemon that died of a crash (SIGSEGV, SIGABRT, SIGBUS, SIGFPE), at
    # its stop or before, fails the test; a status the test already took
    # with its own wait is not seen again here (wait then answers 127)
    local rc
    for pid in $PIDS; do
        wait "$pid" 2>/dev/null
        rc=$?
        case $rc in 134|135|136|139)
            echo "FAIL - process $pid died of signal $((rc - 128)) (a crash)"
            FAILED=$((FAILED + 1))
            echo "$PASSED passed, $FAILED failed" ;;
        esac
    done
    # A sanitizer's report in a daemon's log, or in a file of ASan's
    # log_path ($T/sanitizer.PID), fails the test (a leak shows only once
    # the daemon has exited, after every check)
    local report
    for f in "$T"/*.log "$T"/sanitizer.*; do
        [ -f "$f" ] || continue
        report=$(grep -m1 -E 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$f") || continue
        echo "FAIL - a sanitizer report in $(basename "$f"): $report"
        grep -A25 -E 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$f" | head -60
        FAILED=$((FAILED + 1))
        echo "$PASSED passed, $FAILED failed"
    done
    if [ "$FAILED" -gt 0 ]; then
        for f in "$T"/*.log; do echo "---- $f"; tail -n 30 "$f"; done
    fi
    # (the daemons are gone: the PostgreSQL server of XXL_STORE=pg goes too)
    if declare -F pg_cleanup >/dev/null; then
        [ "$FAILED" -gt 0 ] && [ -f "$T/pg/server.log" ] \
            && { echo "---- $T/pg/server.log"; tail -n 30 "$T/pg/server.log"; }
        pg_cleanup
    fi
    if [ -n "${XXL_KEEP:-}" ]; then echo "kept $T"; else rm -rf "$T"; fi
    [ "$FAILED" -eq 0 ] || exit 1
}

check () {    # check "description" command...
    local what="$1"; shift
    if "$@"; then PASSED=$((PASSED + 1)); echo "ok - $what"
    else FAILED=$((FAILED + 1)); echo "FAIL - $what"; fi
}

# wait_for SECONDS command...: polls until the command succeeds, every
# 50 ms for the first second, every 100 ms to the third, every 250 ms after
# (a poll is often an xxl-ctl and a jq: at 50 ms a long wait would take half
# a CPU), up to SECONDS of those pauses (a loaded machine's slow tries get
# more time), but never past 2 x SECONDS + 5 s of wall time (a command
# that takes seconds and never succeeds must not hold a test for half an
# hour)
wait_for () {
    local budget=$(( $1 * 1000 )) spent=0
    local end=$(( ${EPOCHREALTIME/[.,]/} + ($1 * 2 + 5) * 1000000 )); shift
    while :; do
        if "$@" >/dev/null 2>&1; then return 0; fi
        [ "$spent" -lt "$budget" ] && [ "${EPOCHREALTIME/[.,]/}" -lt "$end" ] || return 1
        if [ "$spent" -lt 1000 ]; then sleep 0.05; spent=$((spent + 50))
        elif [ "$spent" -lt 3000 ]; then sleep 0.1; spent=$((spent + 100))
        else sleep 0.25; spent=$((spent + 250)); fi
    done
}

# start_scheduler [API AGENTS]: sets API, AGENTS, HTTP_EP (the ready file's http=:
# "none" unless XXL_SCHEDULER_ARGS gives --http), SPID.  Without endpoints
# it picks two random ports in 20000-29999: below the kernel's ephemeral
# range and away from libzmq's wildcard ports (49152 up, handed out in
# order), so a port freed by a kill is still free for the restart even
# while other suites run in parallel; a port taken already means a retry.
start_scheduler () {
    local api="${1:-}" agents="${2:-}" tries=1
    [ -n "$api" ] || tries=5
    for _ in $(seq "$tries"); do
        if [ -z "${1:-}" ]; then
            local port=$((20000 + (RANDOM % 5000) * 2))
            api="tcp://127.0.0.1:$port"
            agents="tcp://127.0.0.1:$((port + 1))"
        fi
        rm -f "$T/ready"
        "$SCHEDULER" -c "$T/scheduler.cfg" --db "$XXL_DB" --api "$api" --agents "$agents" \
            --plugins "$XXL_BUILD/plugins/routers/.libs" --alarms "$XXL_BUILD/plugins/alarms/.libs" \
            --ready-file "$T/ready" --http none --open ${XXL_SCHEDULER_ARGS:-} \
            >>"$T/scheduler.log" 2>&1 &
        SPID=$!
        PIDS="$PIDS $SPID"
        wait_for 10 bash -c "test -f '$T/ready' || ! kill -0 $SPID"
        if [ -f "$T/ready" ]; then
            API=$(sed -n 's/^api=//p' "$T/ready")
            AGENTS=$(sed -n 's/^agents=//p' "$T/ready")
            HTTP_EP=$(sed -n 's/^http=//p' "$T/ready")
            return 0
        fi
    done
    echo "scheduler did not start"
    return 1
}

# xxl_sql SQL: runs SQL on the test's store (XXL_DB: sqlite3 on the file,
# or psql on the PostgreSQL database); rows tab-separated, no header, no
# command tags.  Write SQL both take (COALESCE, not IFNULL; times computed
# in the shell, not by strftime).
xxl_sql () {
    if [ "${XXL_STORE:-sqlite}" = pg ]; then
        PGOPTIONS="-c client_min_messages=warning" "$PG_BIN/psql" -X -q -A -t -F $'\t' \
            -v ON_ERROR_STOP=1 -d "$XXL_DB" -c "$1"
    else
        sqlite3 -cmd ".timeout 30000" -separator $'\t' "$XXL_DB" "$1"
    fi
}

# xxl_sql_now: an SQL expression for the store's clock in milliseconds
# since the epoch, read when the statement runs (after an UPDATE's wait for
# the write lock, which a busy scheduler may hold for seconds under load):
# the time of a write the test makes, as the schedulers read it
xxl_sql_now () {
    if [ "${XXL_STORE:-sqlite}" = pg ]; then
        echo "(EXTRACT (EPOCH FROM clock_timestamp ()) * 1000)::bigint"
    else
        echo "CAST ((julianday ('now') - 2440587.5) * 86400000 AS INTEGER)"
    fi
}

# xxl_store_empty: the test's store starts over, empty (no scheduler may
# have it open): the SQLite file removed, or the database made again
xxl_store_empty () {
    if [ "${XXL_STORE:-sqlite}" = pg ]; then
        XXL_DB=$(pg_newdb xxl)
    else
        rm -f "$XXL_DB" "$XXL_DB-wal" "$XXL_DB-shm"
    fi
}

# xxl_sqlite_only WHAT: under XXL_STORE=pg, ends the test as skipped (77)
# saying that WHAT is SQLite's own
xxl_sqlite_only () {
    if [ "${XXL_STORE:-sqlite}" = pg ]; then
        echo "# skipped under XXL_STORE=pg: $1 is SQLite's own"
        trap - EXIT
        xxl_cleanup
        exit 77
    fi
}

# xxl_store_blind WHAT: under XXL_STORE=pg, ends the test as skipped (77)
# before xxl_setup starts a PostgreSQL server: WHAT (the bridge, the CLI's
# output, HTTP's connection limits, packaging) does not depend on the
# store, and the SQLite run of the suite covers it
xxl_store_blind () {
    if [ "${XXL_STORE:-sqlite}" = pg ]; then
        echo "# skipped under XXL_STORE=pg: $1 does not depend on the store"
        exit 77
    fi
}

# start_agent NAME APP [args...]: sets APID_<NAME>
start_agent () {
    local name="$1" app="$2"; shift 2
    "$AGENT" -c "${AGENT_CFG:-$T/agent.cfg}" --app "$app" --scheduler "$AGENTS" --address "$name" \
        --plugins "${AGENT_PLUGINS:-$HANDLERS}" --logdir "$T/logs-$name" "$@" \
        >>"$T/agent-$name.log" 2>&1 &
    local pid=$!
    PIDS="$PIDS $pid"
    eval "APID_${name//-/_}=$pid"
}

ctl () { "$CTL" --api "$API" --json "$@"; }

# id_pages KEY LIMIT CTL-ARGS...: a list that pages back by id (xxl-ctl
# ... --limit LIMIT, then --before the last id listed), read to its end:
# the ids of its array KEY one a line, a line "page N" after each page and
# "truncated" after one that says so
id_pages () {
    local key="$1" limit="$2" before="" out n=0; shift 2
    while :; do
        out=$(ctl "$@" --limit "$limit" ${before:+--before "$before"}) || return 1
        jq -r --arg k "$key" '.[$k][].id' <<<"$out"
        n=$((n + 1)); echo "page $n"
        jq -e '.truncated == false' <<<"$out" >/dev/null || echo truncated
        [ "$(jq --arg k "$key" '.[$k] | length' <<<"$out")" = "$limit" ] || break
        before=$(jq -r --arg k "$key" '.[$k][-1].id' <<<"$out")
    done
}

# job_ran JOB N: the job has at least N runs that ended 200
job_ran () {
    [ "$(ctl log list --job "$1" --limit 100 | jq '[.logs[] | select(.handleCode == 200)] | length')" -ge "$2" ]
}

# past_preread APP: returns once the planner's pre-read window (5 s) has
# passed, told by a FIX_RATE 1 s witness job in APP's group that ran seven times
past_preread () {
    local witness
    witness=$(ctl --get .id job add --group "$1" --handler demoJobHandler --fix-rate 1 --start)
    wait_for 30 job_ran "$witness" 7
    local rc=$?
    ctl job stop "$witness" >/dev/null
    return $rc
}

# run_log_starts LOGDIR: "logId starts" for each run log under LOGDIR, with
# the number of its "execute start" lines: the logs with a file of their own
# (yyyy-mm-dd/logId.log) and those in the days' packs (yyyy-mm-dd/runs.pack,
# a "### logId N, L bytes" header before each run's lines)
run_log_starts () {
    find "$1" -path '*/20*' -name '*.log' -exec grep -c 'execute start' {} + 2>/dev/null \
        | sed 's|.*/||; s|\.log:| |'
    for p in "$1"/20*/runs.pack; do
        [ -f "$p" ] || continue
        awk '/^### logId [0-9]+, [0-9]+ bytes$/ { if (id != "") print id, n; id = $3; sub(",", "", id); n = 0; next }
             /execute start/ { n++ }
             END { if (id != "") print id, n }' "$p"
    done
}

# orphan_logs LOGDIR: ids of the agent's run logs under LOGDIR that have no
# row in the store (nothing when every run has its row).  LOG_LIST gives at
# most 1,000 rows a request: xxl-ctl asks for --limit 10000 in pages of
# 1,000 (more rows than any test makes)
orphan_logs () {
    ctl log list --limit 10000 | jq -r '.logs[].id' | sort > "$T/ids"
    run_log_starts "$1" | cut -d' ' -f1 | sort -u > "$T/files"
    comm -13 "$T/ids" "$T/files"
}

# agent_registered APP ADDRESS
agent_registered () {
    ctl agent list | jq -e --arg a "$1" --arg n "$2" \
        '.agents | any(.app == $a and .address == $n and .connected)' >/dev/null
}

# log_field ID FIELD: the field as jq -r prints it (xxl-ctl --get: one
# process a poll, not two)
log_field () { ctl --get ".$2" log show "$1"; }
# field_is ID FIELD VALUE: the log row's field has that value (re-read on
# every call, so it can be polled: wait_for 5 field_is 12 handleCode 200)
field_is () { [ "$(log_field "$1" "$2")" = "$3" ]; }
log_finished () { [ "$(log_field "$1" handleCode)" != "0" ] || [ "$(log_field "$1" triggerCode)" = "500" ]; }

xxl_done () {
    echo "# took $((SECONDS - ${XXL_STARTED:-0})) s"
    echo "$PASSED passed, $FAILED failed"
    [ "$FAILED" -eq 0 ]
}
