#!/usr/bin/env bash
# test_agent.sh -- the agent with real daemons: results survive a scheduler
# outage and an agent restart (spool), each stored once; timeout, kill,
# block strategies, crash isolation, log cat -f, hot reload, GLUE refusal,
# a missing interpreter.
. "$(dirname "$0")/lib.sh"
xxl_setup

mkdir -p "$T/plugins"
cp "$XXL_BUILD/plugins/handlers/.libs/demo.so" "$T/plugins/"
export AGENT_PLUGINS="$T/plugins"
start_scheduler || exit 1
start_agent w1 agent-app
check "agent registers" wait_for 10 agent_registered agent-app w1
ctl group add agent-app >/dev/null
glue_job () {   # glue_job SCRIPT [flags]: a GLUE_SHELL job running SCRIPT
    printf '%s\n' "$1" > "$T/job-$RANDOM.sh"
    local f; f=$(ls -t "$T"/job-*.sh | head -1); shift
    ctl job add --group agent-app --glue-type GLUE_SHELL --glue-source "$f" "$@" | jq -r .id
}
finished () { [ "$(log_field "$1" handleCode)" != 0 ]; }

# Hot reload: a plugin dropped in while the agent runs is picked up
cp "$XXL_TEST_PLUGINS/test_handlers.so" "$T/plugins/"
HJ=$(ctl job add --group agent-app --handler okJobHandler | jq -r .id)
runs_ok () { local l; l=$(ctl job trigger "$1" | jq -r '.logIds[0]'); wait_for 5 finished "$l" && [ "$(log_field "$l" handleCode)" = 200 ]; }
check "a plugin dropped in is loaded without a restart" wait_for 10 runs_ok "$HJ"

# A crashing handler fails its run; the agent serves on
CJ=$(ctl job add --group agent-app --handler crashJobHandler | jq -r .id)
CL=$(ctl job trigger "$CJ" | jq -r '.logIds[0]')
check "crash: the run ends" wait_for 10 finished "$CL"
check "crash: failed, naming the signal" bash -c "
    [ \"\$($CTL --api $API --json log show $CL | jq -r .handleCode)\" = 500 ] &&
    $CTL --api $API --json log show $CL | jq -r .handleMsg | grep -q SIGSEGV"
check "crash: the agent still serves" runs_ok "$HJ"

# Timeout: 502
TJ=$(glue_job 'sleep 30' --timeout 1)
TL=$(ctl job trigger "$TJ" | jq -r '.logIds[0]')
check "timeout: the run ends" wait_for 10 finished "$TL"
check "timeout: handleCode 502" test "$(log_field "$TL" handleCode)" = 502

# Kill from the scheduler: the whole process group stops
KJ=$(glue_job 'sleep 30.417 & sleep 30.417; wait')
KL=$(ctl job trigger "$KJ" | jq -r '.logIds[0]')
wait_for 5 field_is "$KL" triggerCode 200
sleep 0.3
check "log kill answers" ctl log kill "$KL"
check "kill: the run ends failed" wait_for 10 bash -c "[ \"\$($CTL --api $API --json log show $KL | jq -r .handleCode)\" = 500 ]"
check "kill: the whole process group ends" wait_for 5 bash -c "! pgrep -f 'sleep 30[.]417' >/dev/null"

# Block strategies
DJ=$(glue_job 'sleep 2' --block DISCARD_LATER)
D1=$(ctl job trigger "$DJ" | jq -r '.logIds[0]')
wait_for 5 field_is "$D1" triggerCode 200
D2=$(ctl job trigger "$DJ" | jq -r '.logIds[0]')
check "DISCARD_LATER refuses the second trigger" wait_for 5 field_is "$D2" triggerCode 500
check "DISCARD_LATER says why" bash -c "$CTL --api $API --json log show $D2 | jq -r .triggerMsg | grep -q 'Discard Later'"
OJ=$(glue_job 'sleep 3' --block COVER_EARLY)
O1=$(ctl job trigger "$OJ" | jq -r '.logIds[0]')
wait_for 5 field_is "$O1" triggerCode 200
sleep 0.3
O2=$(ctl job trigger "$OJ" | jq -r '.logIds[0]')
check "COVER_EARLY ends the running one" wait_for 10 finished "$O1"
check "COVER_EARLY says why" bash -c "$CTL --api $API --json log show $O1 | jq -r .handleMsg | grep -q 'Cover Early'"
check "COVER_EARLY runs the new one" wait_for 10 bash -c "[ \"\$($CTL --api $API --json log show $O2 | jq -r .handleCode)\" = 200 ]"

# log cat -f follows a running log until the run ends
FJ=$(glue_job 'for i in 1 2 3 4; do echo "line-$i"; sleep 0.4; done')
FL=$(ctl job trigger "$FJ" | jq -r '.logIds[0]')
timeout 20 "$CTL" --api "$API" log cat "$FL" -f > "$T/follow.out" 2>&1
check "log cat -f ends by itself after the run" test $? -eq 0
check "log cat -f saw every line" bash -c "grep -c '^line-' $T/follow.out | grep -qx 4"

# A missing interpreter: a failed run saying so
printf 'Write-Output hi\n' > "$T/ps.ps1"
PJ=$(ctl job add --group agent-app --glue-type GLUE_POWERSHELL --glue-source "$T/ps.ps1" | jq -r .id)
if ! command -v pwsh >/dev/null; then
    PL=$(ctl job trigger "$PJ" | jq -r '.logIds[0]')
    check "missing interpreter: the run ends" wait_for 10 bash -c "
        [ \"\$($CTL --api $API --json log show $PL | jq -r '.handleCode + .triggerCode')\" != 0 ]"
    check "missing interpreter: named" bash -c "
        $CTL --api $API --json log show $PL | jq -r '.handleMsg, .triggerMsg' | grep -q pwsh"
fi

# No result lost: the scheduler stops while runs finish, then comes back
SJ=""
for i in 1 2 3 4 5; do SJ="$SJ $(glue_job "sleep 3; echo done-$i")"; done
SL=""
for j in $SJ; do SL="$SL $(ctl job trigger "$j" | jq -r '.logIds[0]')"; done
for l in $SL; do wait_for 5 field_is "$l" triggerCode 200; done
kill -TERM "$SPID"; wait "$SPID"
check "the outage test's runs are still running" bash -c "
    sqlite3 $T/xxl.db 'SELECT COUNT(*) FROM xxl_job_log WHERE handle_code = 0' | grep -qv '^0\$'"
sleep 4                                     # the runs finish; nobody to call back
BACK=$(date +%s%3N)
start_scheduler "$API" "$AGENTS"
all_done () { for l in $SL; do finished "$l" || return 1; done; }
check "results from the outage are stored" wait_for 15 all_done
check "each with its own result, delivered after the outage" bash -c "
    for l in $SL; do $CTL --api $API --json log show \$l | jq -e '.handleCode == 200 and .handleTime >= $BACK' >/dev/null || exit 1; done"

# The spool: results outlive an agent restart
RJ=""
for i in 1 2 3; do RJ="$RJ $(glue_job "sleep 3; echo spool-$i")"; done
RL=""
for j in $RJ; do RL="$RL $(ctl job trigger "$j" | jq -r '.logIds[0]')"; done
for l in $RL; do wait_for 5 field_is "$l" triggerCode 200; done
kill -TERM "$SPID"; wait "$SPID"
sleep 4                                     # runs end, results spooled
kill -TERM "$APID_w1"; wait "$APID_w1"      # the agent stops with them undelivered
check "the stopping agent kept its results in the spool" grep -q "stay in the spool" "$T/agent-w1.log"
BACK=$(date +%s%3N)
start_scheduler "$API" "$AGENTS"
start_agent w1 agent-app
spool_done () { for l in $RL; do finished "$l" || return 1; done; }
check "spooled results arrive after the agent restarts" wait_for 15 spool_done
check "spooled results are the runs' own, delivered after the restart" bash -c "
    for l in $RL; do $CTL --api $API --json log show \$l | jq -e '.handleCode == 200 and .handleTime >= $BACK' >/dev/null || exit 1; done"
check "the agent said it had results to deliver" grep -q "from the spool" "$T/agent-w1.log"

# An agent that refuses GLUE
start_agent w2 noglue-app --no-glue
ctl group add noglue-app >/dev/null
check "no-glue agent registers" wait_for 10 agent_registered noglue-app w2
NJ=$(ctl job add --group noglue-app --glue-type GLUE_SHELL --glue-source "$T/ps.ps1" | jq -r .id)
NL=$(ctl job trigger "$NJ" | jq -r '.logIds[0]')
check "--no-glue refuses GLUE runs" wait_for 5 field_is "$NL" triggerCode 500
check "--no-glue says why" bash -c "$CTL --api $API --json log show $NL | jq -r .triggerMsg | grep -q 'not allowed'"
xxl_done
