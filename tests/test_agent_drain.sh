#!/usr/bin/env bash
# test_agent_drain.sh -- the agent's clean stop (SIGTERM drains), with the
# real daemons: a 3 s run in flight at SIGTERM ends 200 and the agent exits
# after it, its guardian too, and the per-job destroy of a handler's
# lifecycle (tests/plugins/lifecycle.so) ran once before the agent
# exited; with agent/drain_s = 1 a 30 s run is killed
# after ~1 s and its result says so.  Then the fake-scheduler half
# (test_agent_drain): a RUN sent during the drain is refused, a re-sent one
# and LOG are answered, stop_wait still works, a second SIGTERM stops at
# once.
. "$(dirname "$0")/lib.sh"
xxl_store_blind "the agent's drain"
xxl_setup

start_scheduler || exit 1
mkdir -p "$T/plugins-d1"
cp "$XXL_TEST_PLUGINS/lifecycle.so" "$T/plugins-d1/"
XXL_TEST_LIFE_LOG="$T/life.records" AGENT_PLUGINS="$T/plugins-d1" start_agent d1 drain-app
check "agent registers" wait_for 10 agent_registered drain-app d1
ctl group add drain-app >/dev/null
# A job whose handler has a per-job init and destroy: init before its run
JL=$(ctl --get .id job add --group drain-app --handler lifeJobHandler)
LL=$(ctl --get '.logIds[0]' job trigger "$JL")
check "the lifecycle job's run ends 200" wait_for 10 field_is "$LL" handleCode 200
check "... after its init, once" test "$(grep -cx "init $JL" "$T/life.records")" = 1
check "... and no destroy yet" test "$(grep -cx "destroy $JL" "$T/life.records")" = 0
glue_job () {   # glue_job SCRIPT: a GLUE_SHELL job running SCRIPT
    local f="$T/job-$RANDOM$RANDOM.sh"
    printf '%s\n' "$1" > "$f"
    ctl job add --group drain-app --glue-type GLUE_SHELL --glue-source "$f" | jq -r .id
}
trigger () { ctl job trigger "$@" | jq -r '.logIds[0]'; }
running () { [ -n "$(find "$T/logs-$1" -name "$2.log" 2>/dev/null)" ]; }

# A 3 s run in flight at SIGTERM: it ends 200, the agent exits after it
J3=$(glue_job 'sleep 3; echo slept-3')
L3=$(trigger "$J3")
wait_for 10 running d1 "$L3"
AP=$APID_d1
T0=$(date +%s%3N)
# (the pattern's [-] keeps it from matching a command line that holds it)
guardian () { pgrep -f -- "[-]-guard $T/logs-$1/" >/dev/null; }
no_guardian () { ! guardian "$1"; }
check "the agent has its guardian" guardian d1
kill -TERM "$AP"
check "the agent unregisters at once" wait_for 5 bash -c "! $CTL --api $API --json agent list | jq -e '.agents[] | select(.address == \"d1\")' >/dev/null"
check "... and is still there, draining" kill -0 "$AP"
check "... with its guardian" guardian d1
check "the agent exits by itself" wait_for 15 bash -c "! kill -0 $AP"
T1=$(date +%s%3N)
check "... after the run, not before ($((T1 - T0)) ms after SIGTERM)" test $((T1 - T0)) -ge 2400
check "the run in flight ended 200" wait_for 10 field_is "$L3" handleCode 200
check "the guardian ends after the clean stop" wait_for 5 no_guardian d1
check "the agent said it was draining" grep -q 'stopping; new runs refused; 1 run(s)' "$T/agent-d1.log"
check "the drain ran the lifecycle job's destroy, once" test "$(grep -cx "destroy $JL" "$T/life.records")" = 1
check "... and nothing broke its contract" bash -c "! grep -q '^bad ' '$T/life.records'"

# drain_s = 1: a 30 s run is killed after ~1 s, its result says so
# (and agent/idle_reap_s = 2: an idle job's queue is retired, its
# lifecycle's destroy run, without a stop)
cat > "$T/agent-short.cfg" <<CFG
agent
    beat = 1
    callback_timeout = 1000
    drain_s = 1
    idle_reap_s = 2
CFG
mkdir -p "$T/plugins-d2"
cp "$XXL_TEST_PLUGINS/lifecycle.so" "$T/plugins-d2/"
XXL_TEST_LIFE_LOG="$T/life2.records" AGENT_PLUGINS="$T/plugins-d2" AGENT_CFG="$T/agent-short.cfg" \
    start_agent d2 drain-app
check "short-drain agent registers" wait_for 10 agent_registered drain-app d2
printf 'agent\n    idle_reap_s = 0\n' > "$T/agent-noreap.cfg"
"$AGENT" -c "$T/agent-noreap.cfg" --app drain-app > "$T/noreap.out" 2>&1
check "an agent with idle_reap_s = 0 does not start (status 2)" test $? = 2
check "... naming the key" grep -q "idle_reap_s" "$T/noreap.out"
JL2=$(ctl --get .id job add --group drain-app --handler lifeJobHandler)
LL2=$(ctl --get '.logIds[0]' job trigger "$JL2" --address d2)
check "a lifecycle job's run on it ends 200" wait_for 10 field_is "$LL2" handleCode 200
check "... after its init" test "$(grep -cx "init $JL2" "$T/life2.records")" = 1
check "... and its destroy comes once its queue was idle 2 s (agent/idle_reap_s)" \
    wait_for 20 bash -c "[ \"\$(grep -cx 'destroy $JL2' '$T/life2.records')\" = 1 ]"
check "... while the agent runs on" kill -0 "$APID_d2"
J30=$(glue_job 'sleep 30.0733')
L30=$(trigger "$J30")
wait_for 10 running d2 "$L30"
AP=$APID_d2
T0=$(date +%s%3N)
kill -TERM "$AP"
check "the short-drain agent exits by itself" wait_for 10 bash -c "! kill -0 $AP"
T1=$(date +%s%3N)
check "... after about 1 s ($((T1 - T0)) ms)" bash -c "[ $((T1 - T0)) -ge 900 ] && [ $((T1 - T0)) -lt 5000 ]"
check "the 30 s run fails 500" wait_for 10 field_is "$L30" handleCode 500
check "... its handleMsg says the drain ended it" bash -c "
    $CTL --api $API --json log show $L30 | jq -r .handleMsg | grep -q 'not finished within the drain of 1000 ms (agent/drain_s) \[job running, killed\]'"
check "... and its process is gone" bash -c "! pgrep -f 'sleep 30[.]0733' >/dev/null"
check "... and the guardian too" wait_for 5 no_guardian d2

check "fake scheduler: refusal during the drain, stop_wait alias, second SIGTERM" \
    "$XXL_BUILD/tests/test_agent_drain" "$AGENT" "$HANDLERS" "$T"
xxl_done
