#!/usr/bin/env bash
# A scheduler started with no security flags makes local keys in its state
# folder and turns CURVE on: a plain client and a plain REGISTER are
# refused, while xxl-ctl and an agent of the same user find the keys by
# themselves; --open keeps the open behaviour with a warning; the store is
# made 0600 in the state folder, run logs 0640 in 0750 folders, whatever
# the umask (docs/operations.md, Security).
. "$(dirname "$0")/lib.sh"
xxl_store_blind "the local keys and the files' modes (the SQLite store's file among them)"
xxl_setup
xxl_sqlite_only "the store file's mode"
S="$XXL_STATE_DIR"

mode () { stat -c %a "$1"; }
# start_bare [flags...]: a scheduler with no security flags and no --db
# (the store goes to the state folder); sets API, AGENTS, SPID
start_bare () {
    local port=$((20000 + (RANDOM % 5000) * 2))
    rm -f "$T/ready"
    "$SCHEDULER" -c "$T/scheduler.cfg" --api "tcp://127.0.0.1:$port" \
        --agents "tcp://127.0.0.1:$((port + 1))" --plugins "$XXL_BUILD/plugins/routers/.libs" \
        --alarms "$XXL_BUILD/plugins/alarms/.libs" --ready-file "$T/ready" --http none "$@" \
        >>"$T/scheduler.log" 2>&1 &
    SPID=$!
    PIDS="$PIDS $SPID"
    wait_for 10 bash -c "test -f '$T/ready' || ! kill -0 $SPID"
    API=$(sed -n 's/^api=//p' "$T/ready")
    AGENTS=$(sed -n 's/^agents=//p' "$T/ready")
    [ -n "$API" ]
}
stop () { kill -TERM "$1"; wait "$1"; }
# files_mode MODE PATH...: each path has that mode (at least one path)
files_mode () {
    local want="$1"; shift
    [ $# -gt 0 ] && [ -e "$1" ] || return 1
    for f in "$@"; do [ "$(mode "$f")" = "$want" ] || return 1; done
}

# ---- (a) no flags: local keys, under umask 000
# (the agents' group: this user's own, so that its members may read the
# agent key: folder 0710, the agent's secret 0640)
printf 'scheduler\n    agent_group = %s\n    registry\n        beat = 1\n        dead = 3\n' \
    "$(id -gn)" > "$T/scheduler.cfg"
umask 000
check "a scheduler with no security flags starts" start_bare
check "... and says it made local keys" grep -q "local keys made in $S/local-keys" "$T/scheduler.log"
check "... and that CURVE is on" grep -q "CURVE on" "$T/scheduler.log"
K="$S/local-keys"
check "local-keys is 0710 (the agents' group may open known names)" test "$(mode "$K")" = 710
check "its keys folder is 0700" test "$(mode "$K/keys")" = 700
check "the scheduler's secret is 0600" test "$(mode "$K/scheduler.cert_secret")" = 600
check "the admin's secret is 0600" test "$(mode "$K/local-admin.cert_secret")" = 600
check "the agent's secret is 0640, of the agents' group" \
    test "$(stat -c '%a %G' "$K/local-agent.cert_secret")" = "640 $(id -gn)"
check "the store is made in the state folder, 0600 (umask 000)" test "$(mode "$S/xxl.db")" = 600
check "... its -wal and -shm too" test "$(mode "$S/xxl.db-wal") $(mode "$S/xxl.db-shm")" = "600 600"

# A plain client (no keys: another state folder) is refused at the handshake
XXL_STATE_DIR="$T/nowhere" "$CTL" --api "$API" --timeout 3000 group list > "$T/plain.out" 2>&1
check "a plain client is refused" test $? -ne 0
check "... at the handshake" grep -q "handshake" "$T/plain.out"
# ... and so is a plain REGISTER
XXL_STATE_DIR="$T/nowhere" start_agent intruder app1
check "a plain agent is refused at the handshake" \
    wait_for 10 grep -q "the handshake with $AGENTS failed" "$T/agent-intruder.log"
kill -TERM "$APID_intruder"

# The allowed case: xxl-ctl of the same user, with no flags, finds the
# admin key; the agent finds the agent key, registers and runs a job
check "xxl-ctl finds the local admin key" ctl group add app1
start_agent w1 app1
umask 022
check "the agent finds the local agent key" wait_for 10 grep -q "local agent key $K/local-agent.cert_secret" "$T/agent-w1.log"
check "... and registers" wait_for 15 agent_registered app1 w1
# xxl-bridge is an agent too: with no key and no token it takes the same
# local agent key (its executors then register through it)
"$XXL_BRIDGE" --scheduler "$AGENTS" --listen 127.0.0.1:0 \
    --logdir "$T/bridge" --ready-file "$T/bridge.ready" >"$T/bridge.log" 2>&1 &
PIDS="$PIDS $!"
check "xxl-bridge finds the local agent key" \
    wait_for 10 grep -q "local agent key $K/local-agent.cert_secret" "$T/bridge.log"
check "the intruder never registered" test "$(ctl agent list | jq '[.agents[] | select(.address == "intruder")] | length')" = 0
JOB=$(ctl --get .id job add --group app1 --handler demoJobHandler)
LOG=$(ctl --get '.logIds[0]' job trigger "$JOB")
check "a job runs on it" wait_for 15 field_is "$LOG" handleCode 200
check "the audit names the local admin key" test "$(ctl audit list | jq -r '.audit[0].who')" = local-admin
L="$T/logs-w1"
check "the run logs' folder and the day's are 0750 (umask 000)" files_mode 750 "$L" "$L"/20*
check "run logs are 0640 (umask 000)" files_mode 640 "$L"/20*/*

# A user who cannot read the keys is told who can
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    setpriv --reuid=65534 --regid=65534 --clear-groups "$CTL" --api "$API" --timeout 2000 \
        group list > "$T/nobody.out" 2>&1
    check "a user who cannot read the local keys is refused, and told who can" \
        grep -q "handshake.*cannot read the local keys in $K: run as root, or pass --cert" "$T/nobody.out"
fi

# The keys are made once: a restart reads them again
stop "$APID_w1"
cp "$K/scheduler.cert" "$T/first.cert"
stop "$SPID"
start_bare
check "a restart reuses the local keys" grep -q "local keys read in $K" "$T/scheduler.log"
check "... the same ones" cmp -s "$T/first.cert" "$K/scheduler.cert"
check "xxl-ctl still works" ctl group list
stop "$SPID"

# ---- (b) --open: the open behaviour, with a warning, under umask 022
xxl_store_empty
rm -rf "$S"
start_scheduler
check "--open logs a warning" grep -q "W:.*--open: no keys and no token: every process on this host is admin" "$T/scheduler.log"
check "... makes no keys" test ! -e "$S/local-keys"
check "... and a plain client is admin" ctl group add app2
start_agent w2 app2
check "... and a plain agent registers" wait_for 15 agent_registered app2 w2
JOB=$(ctl --get .id job add --group app2 --handler demoJobHandler)
LOG=$(ctl --get '.logIds[0]' job trigger "$JOB")
check "... and runs a job" wait_for 15 field_is "$LOG" handleCode 200
check "the store is 0600 under umask 022 (and its -wal, -shm)" \
    test "$(mode "$XXL_DB") $(mode "$XXL_DB-wal") $(mode "$XXL_DB-shm")" = "600 600 600"
L="$T/logs-w2"
check "run log folders are 0750 under umask 022" files_mode 750 "$L" "$L"/20*
check "run logs are 0640 under umask 022" files_mode 640 "$L"/20*/*

xxl_done
