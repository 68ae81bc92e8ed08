#!/usr/bin/env bash
# test_max_running.sh -- a job's maxRunning (DESIGN §13) on two real agents
# of one group (ROUND: each trigger goes to the other agent, so the limit is
# the scheduler's, not an agent's block strategy): --max-running judged
# (range, not with SHARDING_BROADCAST) and shown; under the limit runs go
# together; over it SERIAL_EXECUTION waits in order, DISCARD_LATER fails
# with "max running reached", COVER_EARLY kills the oldest run and starts
# the new one once it ended.  The probe handler records each run's start
# and end: no instant has more than N runs of a job.
. "$(dirname "$0")/lib.sh"
xxl_setup
PROBE_SO="$XXL_BUILD/tests/faults/.libs/probe.so"
mkdir -p "$T/plugins"
cp "$PROBE_SO" "$T/plugins/" || { echo "FAIL - $PROBE_SO not built"; exit 1; }
export AGENT_PLUGINS="$T/plugins" XXL_PROBE_FILE="$T/starts" XXL_PROBE_END_FILE="$T/ends"
: > "$T/starts"; : > "$T/ends"

start_scheduler || exit 1
XXL_PROBE_TAG=mr-a start_agent mr-a mr-app
XXL_PROBE_TAG=mr-b start_agent mr-b mr-app
for a in mr-a mr-b; do check "$a registers" wait_for 10 agent_registered mr-app "$a"; done
ctl group add mr-app >/dev/null

# The flag: judged, stored, shown
ctl job add --group mr-app --handler probeIn --max-running 1001 > "$T/bad" 2>&1
check "--max-running 1001: refused, the range named" \
    grep -q "max-running must be a whole number from 0 to 1000" "$T/bad"
ctl job add --group mr-app --handler probeIn --route SHARDING_BROADCAST --max-running 2 > "$T/bad" 2>&1
check "--max-running with SHARDING_BROADCAST: refused, saying why" \
    grep -q "maxRunning does not apply to route SHARDING_BROADCAST" "$T/bad"
add () {   # add N BLOCK SLEEP_MS: a ROUND probeIn job
    ctl job add --group mr-app --handler probeIn --route ROUND --block "$2" \
        --max-running "$1" --param "sleep=$3" | jq -r .id
}
J2=$(add 2 SERIAL_EXECUTION 1500)
check "job show: maxRunning 2" test "$(ctl job show "$J2" | jq .maxRunning)" = 2
"$XXL_REQ" "$API" JOB_UPDATE "jobId=$J2" maxRunning=-1 > "$T/req.json"
check "JOB_UPDATE maxRunning -1: 400 naming the field" jq -e '.code == 400 and (.msg | contains("maxRunning"))' "$T/req.json"
check "... and the job keeps maxRunning 2" test "$(ctl job show "$J2" | jq .maxRunning)" = 2
ctl job trigger "$J2" --address mr-a > "$T/bad" 2>&1
check "a trigger with --address of a job with maxRunning: refused, saying why" \
    grep -q "address cannot be given for a job with maxRunning" "$T/bad"
J0=$(add 5 SERIAL_EXECUTION 10)
ctl job update "$J0" --max-running 0 >/dev/null
check "job update --max-running 0: no limit" test "$(ctl job show "$J0" | jq .maxRunning)" = 0

trig () { ctl job trigger "$1" | jq -r '.logIds[0]'; }
started () { awk -v id="$1" '$1 == id { f = 1 } END { exit !f }' "$T/starts"; }
msg_has () { log_field "$1" "$2" | grep -qF "$3"; }
# most JOB: the most runs of JOB at one instant, from the probe's starts
# and ends (an end before a start at the same millisecond)
most () {
    awk -v job="$1" 'FNR == NR { if ($2 == job) mine [$1] = 1; next }
                     ($1 in mine) { print $2, 0 }' "$T/starts" "$T/ends" > "$T/ev.end"
    awk -v job="$1" '$2 == job { print $5, 1 }' "$T/starts" > "$T/ev.start"
    sort -n -k1,1 -k2,2 "$T/ev.end" "$T/ev.start" \
        | awk '{ n += ($2 == 1)? 1: -1; if (n > m) m = n } END { print m + 0 }'
}
ended () { for id in "$@"; do log_finished "$id" || return 1; done; }

# Under the limit: two runs of a job with maxRunning 2 run together
a=$(trig "$J2"); b=$(trig "$J2")
both_200 () { field_is "$1" handleCode 200 && field_is "$2" handleCode 200; }
check "maxRunning 2, two triggers: both end 200" wait_for 20 both_200 "$a" "$b"
check "... and ran at once (2 at one instant)" test "$(most "$J2")" = 2

# SERIAL_EXECUTION over the limit: the triggers wait, then run in order
J1=$(add 1 SERIAL_EXECUTION 600)
ids=""; for _ in 1 2 3 4; do ids="$ids $(trig "$J1")"; done
check "SERIAL_EXECUTION, maxRunning 1, 4 triggers: all end" wait_for 30 ended $ids
ok=0; for id in $ids; do [ "$(log_field "$id" handleCode)" = 200 ] && ok=$((ok + 1)); done
check "... all 4 succeeded" test "$ok" = 4
check "... never 2 at once ($(most "$J1"))" test "$(most "$J1")" = 1
order=$(awk -v job="$J1" '$2 == job { print $1 }' "$T/starts" | paste -sd' ')
check "... in the order of their triggers ($order)" test "$order" = "$(echo $ids)"
check "... on both agents (ROUND)" test "$(awk -v job="$J1" '$2 == job { print $6 }' "$T/starts" | sort -u | wc -l)" = 2

# SERIAL_EXECUTION's waiting triggers survive the scheduler's SIGKILL
JR=$(add 1 SERIAL_EXECUTION 1500)
ids=""; for _ in 1 2 3; do ids="$ids $(trig "$JR")"; done
wait_for 10 started "$(echo $ids | cut -d' ' -f1)"
kill -KILL "$SPID"; wait "$SPID" 2>/dev/null
start_scheduler "$API" "$AGENTS" || exit 1
check "SERIAL_EXECUTION across a scheduler SIGKILL: the 3 acknowledged triggers all end" \
    wait_for 40 ended $ids
ok=0; for id in $ids; do [ "$(log_field "$id" handleCode)" = 200 ] && ok=$((ok + 1)); done
check "... the 2 that waited ran ($ok of 3 succeeded; the first may be lost with its scheduler)" test "$ok" -ge 2
check "... never 2 at once ($(most "$JR"))" test "$(most "$JR")" = 1

# maxRunning set to 0 while triggers wait: they go at once
JZ=$(add 1 SERIAL_EXECUTION 3000)
ids=""; for _ in 1 2 3; do ids="$ids $(trig "$JZ")"; done
wait_for 10 started "$(echo $ids | cut -d' ' -f1)"
ctl job update "$JZ" --max-running 0 >/dev/null
# (ROUND: the second goes to the other agent; the third queues behind the
# first on its agent, the agent's own SERIAL_EXECUTION)
check "maxRunning set to 0: a waiting trigger starts while the first runs" \
    wait_for 2 started "$(echo $ids | cut -d' ' -f2)"
check "... and all end" wait_for 20 ended $ids

# A retry of such a job waits for its interval, then for a slot
JT=$(ctl --get .id job add --group mr-app --handler probeIn --route ROUND --max-running 1 --retry 1 \
     --retry-interval 2 --param "sleep=50 fail")
a=$(trig "$JT")
retried () { [ "$(ctl log list --job "$JT" | jq '[.logs[] | select(.handleCode != 0)] | length')" = 2 ]; }
check "a failed run of a job with maxRunning is retried" wait_for 20 retried
gap=$(awk -v j="$JT" '$2 == j { print $5 }' "$T/starts" | sort -n | awk 'NR == 1 { f = $1 } END { print $1 - f }')
check "... after its retry interval, not at once ($gap ms after the first start)" test "$gap" -ge 1900

# DISCARD_LATER over the limit: the later trigger fails
JD=$(add 1 DISCARD_LATER 1500)
a=$(trig "$JD")
wait_for 10 started "$a"
b=$(trig "$JD")
check "DISCARD_LATER: the second trigger fails" wait_for 10 field_is "$b" triggerCode 500
check "... with \"max running reached\"" \
    msg_has "$b" triggerMsg "trigger failed: max running reached (maxRunning 1, block strategy DISCARD_LATER)"
check "... the first runs on to 200" wait_for 20 field_is "$a" handleCode 200
c=$(trig "$JD")
check "... a trigger once it ended runs (the allowed case)" wait_for 20 field_is "$c" handleCode 200

# LOG_KILL of a trigger that waits for its slot: it ends as a failed
# trigger and never runs; the running run and the next waiting one go on
JK=$(add 1 SERIAL_EXECUTION 1500)
# (the running one sleeps 6 s: the two triggers and the kill below come
# while it runs, on a loaded machine too)
a=$(ctl --get '.logIds[0]' job trigger "$JK" --param sleep=6000)
wait_for 10 started "$a"
b=$(trig "$JK"); c=$(trig "$JK")
"$XXL_REQ" "$API" LOG_KILL "logId=$b" > "$T/req.json"
check "LOG_KILL of a waiting trigger: 200, killed before it was sent" \
    jq -e '.code == 200 and .msg == "killed before it was sent to an agent"' "$T/req.json"
check "... its row: trigger failed, saying why" field_is "$b" triggerCode 500
check "... \"killed by a user (log kill) before it was sent\"" \
    msg_has "$b" triggerMsg "trigger failed: killed by a user (log kill) before it was sent to an agent"
"$XXL_REQ" "$API" LOG_KILL "logId=$b" > "$T/req.json"
check "... killed again: 409" jq -e '.code == 409' "$T/req.json"
check "... the running one runs on to 200" wait_for 20 field_is "$a" handleCode 200
check "... the next waiting one is admitted and runs to 200" wait_for 20 field_is "$c" handleCode 200
check "... the killed one never started" bash -c "! awk -v id=$b '\$1 == id { f = 1 } END { exit !f }' '$T/starts'"
check "... never 2 at once ($(most "$JK"))" test "$(most "$JK")" = 1

# LOG_KILL of a planned fire not due yet: 409, nothing of the job is
# killed, and the fire runs at its time
JP=$(ctl --get .id job add --group mr-app --handler probeIn --route ROUND --cron '* * * * * ?' \
     --param sleep=3000)
ctl job start "$JP" >/dev/null
# (rows are written planner/ahead, 3 s, before their time: one 1.5 s ahead
# is there most of the time; the id is kept from the query that found it)
ahead () { xxl_sql "SELECT id FROM xxl_job_log WHERE job_id = $JP AND trigger_code = 0
                    AND schedule_time > $(( $(date +%s%3N) + 1500 )) ORDER BY id LIMIT 1"; }
has_ahead () { p=$(ahead); [ -n "$p" ]; }
running () { xxl_sql "SELECT id FROM xxl_job_log WHERE job_id = $JP AND trigger_code = 200
                      AND handle_code = 0 ORDER BY id LIMIT 1"; }
one_runs () { r=$(running); [ -n "$r" ] && started "$r"; }
check "a cron job's first run runs" wait_for 10 one_runs
running=$(running)
p=
wait_for 10 has_ahead
"$XXL_REQ" "$API" LOG_KILL "logId=$p" > "$T/req.json"
check "LOG_KILL of a planned fire not due yet ($p): 409, planned for its time" \
    jq -e '.code == 409 and (.msg | contains("planned for"))' "$T/req.json"
check "... it runs at its time" wait_for 15 started "$p"
ctl job stop "$JP" >/dev/null
check "... the run that was running then ($running) was not killed" \
    wait_for 15 field_is "$running" handleCode 200

# COVER_EARLY over the limit: the oldest run is killed, the new one starts
# after it ended
JC=$(add 1 COVER_EARLY 8000)
a=$(trig "$JC")
wait_for 10 started "$a"
ctl job update "$JC" --param sleep=300 >/dev/null
b=$(trig "$JC")
check "COVER_EARLY: the running run is killed" wait_for 15 field_is "$a" handleCode 500
check "... saying it was covered" \
    msg_has "$a" triggerMsg "killed: covered by a newer trigger (maxRunning 1, block strategy COVER_EARLY)"
check "... and its result too, not a user's kill (the KILL's reason)" \
    wait_for 10 msg_has "$a" handleMsg "killed: covered by a newer trigger (maxRunning 1, block strategy COVER_EARLY)"
check "... the new one runs to 200" wait_for 20 field_is "$b" handleCode 200
check "... never 2 at once ($(most "$JC"))" test "$(most "$JC")" = 1

# A job update (or stop) drops the planned fires that wait for a slot,
# whatever their age: their rows are deleted (docs/protocol.md, JOB_START /
# JOB_STOP); a client's trigger waiting so stays and runs
JW=$(ctl --get .id job add --group mr-app --handler probeIn --route ROUND --max-running 1 \
     --param sleep=20000 --cron '* * * * * ?' --start)
waiting_fires () {
    ctl log list --job "$JW" | jq -r '[.logs[] | select(.triggerType == "CRON" and
        .triggerCode == 0 and .executorAddress == null) | .id] | join(" ")'
}
two_waiting () { [ "$(waiting_fires | wc -w)" -ge 2 ]; }
check "the cron fires of a job at its maxRunning wait for the slot" wait_for 10 two_waiting
W=$(waiting_fires)
m=$(ctl --get '.logIds[0]' job trigger "$JW" --param sleep=10)
ctl job update "$JW" --desc "its description only" >/dev/null
gone () { for id in "$@"; do ctl log show "$id" >/dev/null 2>&1 && return 1; done; return 0; }
check "job update (its description only): the waiting planned fires are gone ($W)" gone $W
check "... the waiting manual trigger stays, and runs once the slot frees" \
    wait_for 30 field_is "$m" handleCode 200
ctl job stop "$JW" >/dev/null
xxl_done
