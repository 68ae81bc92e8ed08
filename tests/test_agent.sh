#!/usr/bin/env bash
# test_agent.sh -- the agent with real daemons: results survive a scheduler
# outage and an agent restart (spool), each stored once; 2,000 results with
# several CALLBACK batches in flight and a stalled scheduler; log cat of an
# in-process run that has not logged yet; timeout, kill, block strategies,
# crash isolation, log cat -f, hot reload, GLUE refusal, a missing
# interpreter, GLUE_PYTHON2 with and without a python2; the bounded queue
# of its link (test_agent_queue).
. "$(dirname "$0")/lib.sh"
xxl_store_blind "the agent's own behaviour (runs, strategies, logs, spool)"
xxl_setup

mkdir -p "$T/plugins"
cp "$XXL_BUILD/plugins/handlers/.libs/demo.so" "$T/plugins/"
export AGENT_PLUGINS="$T/plugins"
start_scheduler || exit 1
# GLUE_PYTHON2 runs with the python2 in the agent's PATH: here a python3
# behind that name (Debian 12 has no python2); the agent's restart below
# has a PATH without any python2
mkdir -p "$T/py2bin"
PY3=$(command -v python3 >/dev/null && python3 -c 'import sys; print(sys.executable)')
printf '#!/bin/sh\nexec "%s" "$@"\n' "$PY3" > "$T/py2bin/python2"
chmod +x "$T/py2bin/python2"
path_without () {   # path_without NAME: PATH without the folders holding NAME
    local d out=""; local IFS=:
    for d in $PATH; do [ -x "$d/$1" ] || out="$out${out:+:}$d"; done
    echo "$out"
}
PATH="$T/py2bin:$PATH" start_agent w1 agent-app
check "agent registers" wait_for 10 agent_registered agent-app w1
ctl group add agent-app >/dev/null
glue_job () {   # glue_job SCRIPT [flags]: a GLUE_SHELL job running SCRIPT
    printf '%s\n' "$1" > "$T/job-$RANDOM.sh"
    local f; f=$(ls -t "$T"/job-*.sh | head -1); shift
    ctl job add --group agent-app --glue-type GLUE_SHELL --glue-source "$f" "$@" | jq -r .id
}
finished () { [ "$(log_field "$1" handleCode)" != 0 ]; }

# Hot reload: a plugin dropped in while the agent runs is picked up.  Plain
# cp straight into the watched folder, as operators do: the agent may scan
# the file half-written and must refuse it, not crash, then load it
cp "$XXL_TEST_PLUGINS/test_handlers.so" "$T/plugins/"
HJ=$(ctl --get .id job add --group agent-app --handler okJobHandler)
runs_ok () { local l; l=$(ctl --get '.logIds[0]' job trigger "$1"); wait_for 5 finished "$l" && [ "$(log_field "$l" handleCode)" = 200 ]; }
check "a plugin dropped in is loaded without a restart" wait_for 10 runs_ok "$HJ"

# log cat of a running in-process run that has not written a line yet: its
# start lines are held in memory until its first write, and a LOG request
# has them written, so the reader sees them while the run still runs
LJ=$(ctl --get .id job add --group agent-app --handler sleepInJobHandler --param 5000)
LL=$(ctl --get '.logIds[0]' job trigger "$LJ")
wait_for 5 field_is "$LL" triggerCode 200
shows_start () {
    "$CTL" --api "$API" log cat "$LL" > "$T/held.out" 2>&1
    grep -q 'xxl-job job execute start' "$T/held.out" &&
    grep -q 'Handler: sleepInJobHandler (BEAN, in process), Param: 5000' "$T/held.out" &&
    ! grep -q 'execute end' "$T/held.out"
}
check "log cat of a running in-process run shows its start lines" wait_for 3 shows_start
check "... while the run is still running" field_is "$LL" handleCode 0
check "the run then ends ok" wait_for 10 field_is "$LL" handleCode 200
check "... with its start lines once" bash -c "
    [ \"\$($CTL --api $API log cat $LL | grep -c 'xxl-job job execute start')\" = 1 ]"

# A short in-process run's log goes to its day's pack, not a file of its
# own (agent/log_pack); log cat shows it whole once its result is stored
PJ=$(ctl --get .id job add --group agent-app --handler sleepInJobHandler --param 10)
PL=$(ctl --get '.logIds[0]' job trigger "$PJ")
check "pack: the short in-process run ends ok" wait_for 10 field_is "$PL" handleCode 200
check "pack: log cat shows its start and end lines, in order" bash -c "
    $CTL --api $API log cat $PL > $T/packed.out &&
    grep -q 'Handler: sleepInJobHandler (BEAN, in process), Param: 10' $T/packed.out &&
    [ \"\$(grep -n 'execute start' $T/packed.out | cut -d: -f1)\" -lt \"\$(grep -n 'handleCode=200' $T/packed.out | cut -d: -f1)\" ]"
check "pack: no file of its own, a record in the day's runs.pack" bash -c "
    [ -z \"\$(find $T/logs-w1 -name $PL.log)\" ] && grep -q '^### logId $PL, ' $T/logs-w1/20*/runs.pack"
check "pack: log cat -f of the ended run ends" timeout 10 "$CTL" --api "$API" log cat -f "$PL"

# A crashing handler fails its run; the agent serves on
CJ=$(ctl --get .id job add --group agent-app --handler crashJobHandler)
CL=$(ctl --get '.logIds[0]' job trigger "$CJ")
check "crash: the run ends" wait_for 10 finished "$CL"
check "crash: failed, naming the signal" bash -c "
    [ \"\$($CTL --api $API --json log show $CL | jq -r .handleCode)\" = 500 ] &&
    $CTL --api $API --json log show $CL | jq -r .handleMsg | grep -q SIGSEGV"
check "crash: the agent still serves" runs_ok "$HJ"

# The shipped sample handlers through the daemons (more in
# test_sample_handlers): commandJobHandler's output in the run's log,
# httpJobHandler refused a closed port
cp "$HANDLERS/command.so" "$HANDLERS/http.so" "$T/plugins/"
XJ=$(ctl --get .id job add --group agent-app --handler commandJobHandler --param 'echo hi-from-command')
cmd_ok () { XL=$(ctl --get '.logIds[0]' job trigger "$XJ"); wait_for 5 finished "$XL" && [ "$(log_field "$XL" handleCode)" = 200 ]; }
check "commandJobHandler: echo succeeds" wait_for 10 cmd_ok
check "commandJobHandler: its output in the run's log" bash -c "$CTL --api $API log cat $XL | grep -q '] hi-from-command\$'"
WJ=$(ctl --get .id job add --group agent-app --handler httpJobHandler --param "url: http://127.0.0.1:1/
method: GET")
WL=$(ctl --get '.logIds[0]' job trigger "$WJ")
check "httpJobHandler: a refused connection fails the run" wait_for 10 field_is "$WL" handleCode 500
check "... saying why" bash -c "$CTL --api $API --json log show $WL | jq -r .handleMsg | grep -q '^request failed: '"

# Timeout: 502
TJ=$(glue_job 'sleep 30' --timeout 1)
TL=$(ctl --get '.logIds[0]' job trigger "$TJ")
check "timeout: the run ends" wait_for 10 finished "$TL"
check "timeout: handleCode 502" test "$(log_field "$TL" handleCode)" = 502

# Kill from the scheduler: the whole process group stops
KJ=$(glue_job 'sleep 30.417 & sleep 30.417; wait')
KL=$(ctl --get '.logIds[0]' job trigger "$KJ")
wait_for 5 field_is "$KL" triggerCode 200
wait_for 5 pgrep -f 'sleep 30[.]417'          # (its processes started)
check "log kill answers" ctl log kill "$KL"
check "kill: the run ends failed" wait_for 10 bash -c "[ \"\$($CTL --api $API --json log show $KL | jq -r .handleCode)\" = 500 ]"
check "kill: the whole process group ends" wait_for 5 bash -c "! pgrep -f 'sleep 30[.]417' >/dev/null"

# Block strategies
# (long enough that the second trigger finds it running on a loaded machine)
DJ=$(glue_job 'sleep 20' --block DISCARD_LATER)
D1=$(ctl --get '.logIds[0]' job trigger "$DJ")
wait_for 5 field_is "$D1" triggerCode 200
D2=$(ctl --get '.logIds[0]' job trigger "$DJ")
check "DISCARD_LATER refuses the second trigger" wait_for 5 field_is "$D2" triggerCode 500
check "DISCARD_LATER says why" bash -c "$CTL --api $API --json log show $D2 | jq -r .triggerMsg | grep -q 'Discard Later'"
# (the first sleeps 30 s, the one that covers it 1 s: its param)
OJ=$(glue_job 'sleep ${1:-30.529}' --block COVER_EARLY)
O1=$(ctl --get '.logIds[0]' job trigger "$OJ")
wait_for 5 field_is "$O1" triggerCode 200
wait_for 5 pgrep -f 'sleep 30[.]529'          # (it runs)
O2=$(ctl --get '.logIds[0]' job trigger "$OJ" --param 1)
check "COVER_EARLY ends the running one" wait_for 10 finished "$O1"
check "COVER_EARLY says why" bash -c "$CTL --api $API --json log show $O1 | jq -r .handleMsg | grep -q 'Cover Early'"
check "COVER_EARLY runs the new one" wait_for 10 bash -c "[ \"\$($CTL --api $API --json log show $O2 | jq -r .handleCode)\" = 200 ]"

# log cat -f follows a running log until the run ends
FJ=$(glue_job 'for i in 1 2 3 4; do echo "line-$i"; sleep 0.4; done')
FL=$(ctl --get '.logIds[0]' job trigger "$FJ")
timeout 20 "$CTL" --api "$API" log cat "$FL" -f > "$T/follow.out" 2>&1
check "log cat -f ends by itself after the run" test $? -eq 0
check "log cat -f saw every line" bash -c "grep -c '^line-' $T/follow.out | grep -qx 4"

# A missing interpreter: a failed run saying so
printf 'Write-Output hi\n' > "$T/ps.ps1"
PJ=$(ctl --get .id job add --group agent-app --glue-type GLUE_POWERSHELL --glue-source "$T/ps.ps1")
if ! command -v pwsh >/dev/null; then
    PL=$(ctl --get '.logIds[0]' job trigger "$PJ")
    check "missing interpreter: the run ends" wait_for 10 bash -c "
        [ \"\$($CTL --api $API --json log show $PL | jq -r '.handleCode + .triggerCode')\" != 0 ]"
    check "missing interpreter: named" bash -c "
        $CTL --api $API --json log show $PL | jq -r '.handleMsg, .triggerMsg' | grep -q pwsh"
fi

# GLUE_PYTHON2 (XXL-JOB 3.2's GLUE(Python2)): a python2-compatible source,
# its param and shard in argv, run with the agent's python2
printf 'import sys\nprint("py2-ok " + " ".join(sys.argv[1:]))\n' > "$T/py2.py"
P2J=$(ctl --get .id job add --group agent-app --glue-type GLUE_PYTHON2 --glue-source "$T/py2.py" --param p1)
P2L=$(ctl --get '.logIds[0]' job trigger "$P2J")
if [ -n "$PY3" ]; then
    check "GLUE_PYTHON2 runs with the agent's python2" wait_for 10 field_is "$P2L" handleCode 200
    check "  its param and shard in argv" bash -c "$CTL --api $API log cat $P2L | grep -qx 'py2-ok p1 0 1'"
fi

# Many results: 300 jobs on a one-second cron (in-process runs of 300 ms)
# until 2,000 runs ended, so that several CALLBACK batches are in flight at
# once.  Midway the scheduler stalls (SIGSTOP) past the callback timeout:
# the batches in flight go back to the queue and are sent again, and the
# late acks of the first sends are ignored.  Every run ends stored with its
# own result, none left without one.
BULK=300
seq "$BULK" | xargs -P 4 -I{} sh -c "'$CTL' --api '$API' --json job add --group agent-app \
    --handler sleepInJobHandler --param 300 --cron '* * * * * ?' --start | jq -r .id" > "$T/bulk.ids"
BFIRST=$(sort -n "$T/bulk.ids" | head -1)
BLAST=$(sort -n "$T/bulk.ids" | tail -1)
check "bulk: $BULK jobs added" test "$(grep -c '^[0-9]' "$T/bulk.ids")" = "$BULK"
bulk_count () {     # bulk_count [CONDITION]: rows of the bulk jobs
    xxl_sql "SELECT COUNT(*) FROM xxl_job_log
             WHERE job_id BETWEEN $BFIRST AND $BLAST ${1:+AND $1}"
}
bulk_ended_at_least () { [ "$(bulk_count 'handle_code != 0')" -ge "$1" ]; }
check "bulk: 600 runs ended" wait_for 60 bulk_ended_at_least 600
# A run that ends while the scheduler is stalled, so that its result goes
# out in a batch that gets no ack in time (the RUN left with the answer)
SLOW=$(ctl --get '.logIds[0]' job trigger "$LJ" --param 400)
NOACK=$(grep -c 'no ack from' "$T/agent-w1.log")
more_noack () { [ "$(grep -c 'no ack from' "$T/agent-w1.log")" -gt "$NOACK" ]; }
kill -STOP "$SPID"
check "bulk: a stalled scheduler's batches time out" wait_for 10 more_noack
kill -CONT "$SPID"
check "bulk: 2,000 runs ended" wait_for 90 bulk_ended_at_least 2000
for i in $(seq "$BFIRST" "$BLAST"); do echo "$i"; done |
    xargs -P 4 -I{} "$CTL" --api "$API" job stop {} >/dev/null
no_open_bulk () { [ "$(bulk_count)" -gt 0 ] && [ "$(bulk_count 'handle_code = 0')" = 0 ]; }
check "bulk: no run is left without its result" wait_for 30 no_open_bulk
check "bulk: the run that ended during the stall is stored" field_is "$SLOW" handleCode 200
BROWS=$(bulk_count)
BOK=$(bulk_count 'handle_code = 200')
check "bulk: every run stored with its own result ($BOK of $BROWS rows, >= 2000)" \
    bash -c "[ $BROWS -ge 2000 ] && [ $BOK = $BROWS ]"
check "bulk: no callback batch refused" bash -c "! grep -q 'callback batch refused' $T/agent-w1.log"

# No result lost: the scheduler stops while runs finish, then comes back
SJ=""
for i in 1 2 3 4 5; do SJ="$SJ $(glue_job "sleep 5; echo done-$i")"; done
SL=""
for j in $SJ; do SL="$SL $(ctl --get '.logIds[0]' job trigger "$j")"; done
#   Started: each run's log file exists (an acceptance is recorded up to
#   500 ms late, so triggerCode is not the thing to wait on here)
started () { for l in $SL; do [ -n "$(find "$T" -name "$l.log" 2>/dev/null)" ] || return 1; done; }
wait_for 10 started
kill -TERM "$SPID"; wait "$SPID"
still_running () { xxl_sql 'SELECT COUNT(*) FROM xxl_job_log WHERE handle_code = 0' | grep -qv '^0$'; }
check "the outage test's runs are still running" still_running
#   The runs finish while nobody can take their results
ended () { for l in $SL; do grep -qs 'execute end' $(find "$T" -name "$l.log") || return 1; done; }
check "the outage test's runs end during the outage" wait_for 20 ended
BACK=$(date +%s%3N)
start_scheduler "$API" "$AGENTS"
all_done () { for l in $SL; do finished "$l" || return 1; done; }
check "results from the outage are stored" wait_for 15 all_done
check "each with its own result, delivered after the outage" bash -c "
    for l in $SL; do $CTL --api $API --json log show \$l | jq -e '.handleCode == 200 and .handleTime >= $BACK' >/dev/null || exit 1; done"

# The spool: results outlive an agent restart (runs of 8 s: in a loaded run
# the triggers and their checks took longer than runs of 3 s, which ended
# and were delivered before the scheduler stopped)
RJ=""
for i in 1 2 3; do RJ="$RJ $(glue_job "sleep 8.187; echo spool-$i")"; done
RL=""
for j in $RJ; do RL="$RL $(ctl --get '.logIds[0]' job trigger "$j")"; done
for l in $RL; do wait_for 5 field_is "$l" triggerCode 200; done
kill -TERM "$SPID"; wait "$SPID"
# (the runs end, their results spooled)
wait_for 10 pgrep -f 'sleep 8[.]187'
wait_for 20 bash -c "! pgrep -f 'sleep 8[.]187'"
kill -TERM "$APID_w1"; wait "$APID_w1"      # the agent stops with them undelivered
check "the stopping agent kept its results in the spool" grep -q "stay in the spool" "$T/agent-w1.log"
BACK=$(date +%s%3N)
start_scheduler "$API" "$AGENTS"
PATH="$(path_without python2)" start_agent w1 agent-app
spool_done () { for l in $RL; do finished "$l" || return 1; done; }
check "spooled results arrive after the agent restarts" wait_for 15 spool_done
check "spooled results are the runs' own, delivered after the restart" bash -c "
    for l in $RL; do $CTL --api $API --json log show \$l | jq -e '.handleCode == 200 and .handleTime >= $BACK' >/dev/null || exit 1; done"
check "the agent said it had results to deliver" grep -q "from the spool" "$T/agent-w1.log"
check "... only those 3: every result delivered before was acked" \
    grep -q "agent: 3 result(s) from the spool to deliver" "$T/agent-w1.log"
# GLUE_PYTHON2 on an agent with no python2 in its PATH: a failed run, saying so
P2L=$(ctl --get '.logIds[0]' job trigger "$P2J")
check "GLUE_PYTHON2 without python2: the run fails" wait_for 10 field_is "$P2L" handleCode 500
check "  naming the interpreter" bash -c "
    $CTL --api $API --json log show $P2L | jq -r .handleMsg | grep -qx \"interpreter 'python2' not found\""

# An agent that refuses GLUE
start_agent w2 noglue-app --no-glue
ctl group add noglue-app >/dev/null
check "no-glue agent registers" wait_for 10 agent_registered noglue-app w2
NJ=$(ctl --get .id job add --group noglue-app --glue-type GLUE_SHELL --glue-source "$T/ps.ps1")
NL=$(ctl --get '.logIds[0]' job trigger "$NJ")
check "--no-glue refuses GLUE runs" wait_for 5 field_is "$NL" triggerCode 500
check "--no-glue says why" bash -c "$CTL --api $API --json log show $NL | jq -r .triggerMsg | grep -q 'not allowed'"
# The batch form of RUN, against a fake scheduler
check "batch RUN: one answer per item, in order; bad batches refused whole" \
    "$XXL_BUILD/tests/test_agent_batch" "$AGENT" "$HANDLERS" "$T/logs-batch"
# The link's queue, against a fake scheduler that stops reading
check "the agent's queue is bounded; dropped REPLYs are counted, a CALLBACK goes later" \
    "$XXL_BUILD/tests/test_agent_queue" "$AGENT" "$HANDLERS" "$T/logs-queue"
# Two schedulers, each sent a RUN: each gets its own run's result
check "a run's result goes to the scheduler whose RUN started it" \
    "$XXL_BUILD/tests/test_agent_origin" "$AGENT" "$HANDLERS" "$T/logs-origin"
xxl_done
