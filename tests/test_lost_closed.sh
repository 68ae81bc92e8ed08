#!/usr/bin/env bash
# test_lost_closed.sh -- a run whose agent's connection closed is declared
# lost `lost_after` past the close (within the agent's run lease), not at
# the registry's dead time; a closed connection whose agent lives on (a
# cut that closed it) never lets the row fail while its run still runs;
# a silent agent (frozen: its connection stays open) waits for `dead`.
# Prints the seconds from the kill and the cut to each failure.
. "$(dirname "$0")/lib.sh"
XXL_RUN_LEASE=4 xxl_setup
DEAD=60
# (the lost-run monitor's own period stays 60 s: what is due at a closed
# connection's lost_at wakes it)
sed -i "s/dead = 3/dead = $DEAD/" "$T/scheduler.cfg"
cat >> "$T/scheduler.cfg" <<CFG
    monitor
        lost_after = 3
CFG
start_scheduler || exit 1
RELAY="$XXL_RELAY"
"$RELAY" "$T/relay.port" 127.0.0.1 "${AGENTS##*:}" pass "$T/relay.bytes" &
RELAY_PID=$!
PIDS="$PIDS $RELAY_PID"
wait_for 5 test -s "$T/relay.port"
start_agent killed lc-app
start_agent frozen lc-frz
AGENTS_REAL=$AGENTS
AGENTS="tcp://127.0.0.1:$(cat "$T/relay.port")" start_agent cut lc-cut
AGENTS=$AGENTS_REAL
for a in killed:lc-app frozen:lc-frz cut:lc-cut; do
    ctl group add "${a#*:}" >/dev/null
    check "agent ${a%%:*} registers" wait_for 15 agent_registered "${a#*:}" "${a%%:*}"
done
job () {   # APP NAME: a GLUE job whose run writes its pid to $T/NAME.pid, then sleeps
    printf 'echo $$ > "%s/%s.pid"\nexec sleep 120\n' "$T" "$2" > "$T/$2.sh"
    ctl job add --group "$1" --glue-type GLUE_SHELL --glue-source "$T/$2.sh" | jq -r .id
}
start_run () {   # APP NAME: sets L (its log id) once its process runs
    L=$(ctl job trigger "$(job "$1" "$2")" | jq -r '.logIds[0]')
    wait_for 10 field_is "$L" triggerCode 200 && wait_for 10 test -s "$T/$2.pid"
}
failed () { [ "$(log_field "$1" handleCode)" = 500 ]; }
# running PID: the process exists and is not a zombie waiting to be reaped
running () { [ -r "/proc/$1/stat" ] && ! awk '{ exit $3 != "Z" }' "/proc/$1/stat"; }
now_ms () { date +%s%3N; }

start_run lc-app killed; LK=$L
start_run lc-frz frozen; LF=$L
start_run lc-cut cut; LC=$L
RUNPID_CUT=$(cat "$T/cut.pid")

# An agent SIGKILLed mid-run (its guardian ends the run): its connection
# closes; the run fails lost_after (3 s) past that, within its lease (4 s
# + 3 s), and well before the registry's dead time (60 s)
T0=$(now_ms)
kill -KILL "$APID_killed"
kill -STOP "$APID_frozen"
wait_for $((DEAD * 2)) failed "$LK"
T1=$(now_ms)
check "the killed agent's run fails" failed "$LK"
# (wait_for counts polls, not seconds: the bound is read on the clock)
check "... well before dead ($DEAD s)" test $((T1 - T0)) -lt $(( (DEAD - 15) * 1000 ))
echo "# kill -9 to failure: $(awk "BEGIN { printf \"%.1f\", ($T1 - $T0) / 1000 }") s (lost_after 3 s, run_lease 4 s, dead $DEAD s)"
check "... as lost" bash -c "$CTL --api $API --json log show $LK | jq -r .handleMsg | grep -q lost"
check "... not before its run lease (4 s + 3 s) passed" test $((T1 - T0)) -ge 6000
# A frozen agent's connection stays open: silence is not a close
check "the frozen agent's run is still open then" field_is "$LF" handleCode 0
kill -CONT "$APID_frozen"

# The link of a live agent cut (the relay closes both connections): the
# scheduler sees the connection close, but the agent runs on until its
# lease ends; the row fails only once that run stopped
T0=$(now_ms)
kill -USR1 "$RELAY_PID"
wait_for 5 grep -qx cut "$T/relay.port.state"
overlap=0
for _ in $(seq $((DEAD * 20))); do
    if failed "$LC"; then
        running "$RUNPID_CUT" && overlap=1
        break
    fi
    sleep 0.05
done
T1=$(now_ms)
check "the cut agent's run fails" failed "$LC"
check "... before dead ($DEAD s)" test $((T1 - T0)) -lt $((DEAD * 1000))
echo "# cut to failure: $(awk "BEGIN { printf \"%.1f\", ($T1 - $T0) / 1000 }") s"
check "... never while its process still runs (no overlap with a retry)" test "$overlap" = 0
check "... not before its run lease passed" test $((T1 - T0)) -ge 4000
xxl_done
