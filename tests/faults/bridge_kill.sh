#!/usr/bin/env bash
# bridge_kill.sh -- XXL-JOB executors through xxl-bridge (DESIGN §11) under
# steady ROUND load while, at seeded instants, the bridge is SIGKILLed and
# restarted on its port, the bridge is SIGSTOPped past the scheduler's dead
# time and resumed, and an executor is SIGKILLed and restarted (on its
# address, or on a new one).  Executors: tests/bridge/fake_executor.py in
# its probe mode (one O_APPEND write per run start, count.sh's format).
# Guarantees (DESIGN §5 through the bridge): a logId reaches an executor at
# most once (the bridge's journal across its restarts); a RUN the scheduler
# gave up on never starts later: the executor starts a run when the bridge
# calls its /run, before the bridge can REPLY, so a bridge killed or frozen
# between the two loses the REPLY of a run that started while the scheduler
# still waited (its row says 500, and shows the result that came later):
# each such run must have started before trigger_time + run_timeout; every
# acknowledged trigger runs once or fails visibly (the row says why: the
# bridge or the executor was gone); every run ends (results spooled across
# a bridge's death, an executor's lost runs failed); nothing runs twice.
. "$(dirname "$0")/lib.sh"
xxl_store_blind "the bridge"
F_LOST_AFTER=5 faults_setup bridge_kill
command -v python3 >/dev/null || { echo "# skipped: no python3"; exit 77; }

ROUNDS=$(pick 1 4)
NEXEC=$(pick 2 3)
FAKE="$XXL_SRC/tests/bridge/fake_executor.py"
start_scheduler || exit 1
ctl group add bk >/dev/null

# Without a token or --cert the bridge uses the scheduler's local agent key
# (XXL_STATE_DIR, tests/lib.sh): no token anywhere in this test
. "$XXL_SRC/tests/bridge/lib.sh"
bridge_cfg
# start_bridge [PORT]: the bridge (tests/bridge/lib.sh); sets BRPID, BPORT,
# ADMIN, and APID_bridge (kill_agent bridge SIGNAL)
start_bridge () {
    bridge_start "${1:-0}" || return 1
    APID_bridge=$BRPID
}
restart_bridge () {
    start_bridge "$BPORT" && return 0
    check "the bridge restarts on its port (see bridge.log)" false
    tail -n 20 "$T/bridge.log" | sed 's/^/    /'
    xxl_done
    exit 1
}
# start_exec NAME [PORT]: a probing executor of app bk; sets EPID_NAME, EURL_NAME
# (e2 answers in the 3.x shape with Go's header case, the others as 2.x)
start_exec () {
    local shape="--shape 2"
    [ "$1" = e2 ] && shape="--shape 3 --go-header"
    rm -f "$T/$1.port"
    python3 "$FAKE" --admin "$ADMIN" --app bk --runs "$T/runs" --probe "$PROBE" --tag "$1" \
        $shape --port-file "$T/$1.port" ${2:+--port "$2"} >>"$T/exec-$1.log" 2>&1 &
    eval "EPID_$1=$!"
    PIDS="$PIDS $!"
    wait_until 10 test -s "$T/$1.port" || { check "executor $1 starts (see exec-$1.log)" false; return 1; }
    eval "EURL_$1=http://127.0.0.1:$(cat "$T/$1.port")/"
}
epid () { eval "echo \$EPID_$1"; }
eurl () { eval "echo \$EURL_$1"; }
connected () {      # connected N: N addresses of bk are connected
    ctl agent list | jq -e --argjson n "$1" '[.agents[] | select(.app == "bk" and .connected)] | length >= $n' >/dev/null
}

start_bridge || { check "the bridge starts (see bridge.log)" false; xxl_done; exit 1; }
for i in $(seq "$NEXEC"); do start_exec "e$i" || { xxl_done; exit 1; }; done
check "$NEXEC executors register through the bridge" wait_until 15 connected "$NEXEC"

# Short runs (0.2 s) on two jobs, ROUND over the executors
JOBS=""
for _ in 1 2; do
    JOBS="$JOBS $(ctl --get .id job add --group bk --handler sleep --param 0.2 --route ROUND)"
done
load_start "$JOBS"
for round in $(seq "$ROUNDS"); do
    rsleep 1000 2500
    say "round $round: SIGKILL to the bridge after $(acked_count) acknowledged triggers"
    kill_agent bridge KILL
    rsleep 0 1000
    restart_bridge
    check "round $round: the executors register again through the restarted bridge" \
        wait_until 15 connected "$NEXEC"

    rsleep 1000 2500
    say "round $round: SIGSTOP to the bridge after $(acked_count) acknowledged triggers"
    kill -STOP "$BRPID"
    rsleep 3500 5500            # past the scheduler's dead time (3 s)
    kill -CONT "$BRPID"
    say "round $round: SIGCONT to the bridge"
    check "round $round: the executors are connected again after the freeze" \
        wait_until 15 connected "$NEXEC"

    rsleep 1000 2500
    rnd "$NEXEC"; E=e$((R + 1))
    rnd 2; SAME=$R
    say "round $round: SIGKILL to executor $E after $(acked_count) acknowledged triggers;" \
        "restarted on $([ "$SAME" = 1 ] && echo its address || echo a new address)"
    OLDPORT=$(cat "$T/$E.port")
    kill -KILL "$(epid $E)"
    wait "$(epid $E)" 2>/dev/null
    rsleep 0 1500
    if [ "$SAME" = 1 ]; then start_exec "$E" "$OLDPORT"; else start_exec "$E"; fi
    registered () { agent_registered bk "$(eurl "$E")"; }
    check "round $round: executor $E registers again" wait_until 15 registered
done
rsleep 1000 2000
load_stop
say "$(acked_count) triggers acknowledged"
check "every run ends" wait_quiet 40
check "the scheduler and the bridge are alive" kill -0 "$SPID" "$BRPID"
# Runs whose row says the trigger failed (500) but that started: each must
# have started while the scheduler still waited for its REPLY (3000 ms)
sql "SELECT id, trigger_time FROM xxl_job_log WHERE trigger_code = 500" > "$T/failed_rows"
awk 'FNR == NR { tt[$1] = $2; next } ($1 in tt) { print $1, $5 - tt[$1] }' \
    FS='|' "$T/failed_rows" FS=' ' "$PROBE" > "$T/late"
LATE_OK=$(awk '$2 <= 3000' "$T/late" | wc -l)
say "$LATE_OK run(s) lost their REPLY (started $(awk '{ printf "%s%d ms", s, $2; s = ", " }' "$T/late") after their row)"
check "a run whose REPLY the bridge's death or freeze lost had started before the scheduler gave up on it" \
    test -z "$(awk '$2 > 3000' "$T/late")"
awk '$2 > 3000 { print "    started late: logId " $1 ", " $2 " ms after its row" }' "$T/late"
fcount "the bridge killed, frozen, and an executor killed under load" \
    --excuse 'lost|bridge|executor|expired|gave up|not connected|no answer|did not|refus|connect|time ?out|agent|restart|killed|HTTP|address list is empty' \
    --allow-late "$LATE_OK"
check "no logId reached an executor twice (the fake's own record)" test -z "$(sort "$T/runs" | uniq -d)"
xxl_done
