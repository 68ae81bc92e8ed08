#!/usr/bin/env bash
# recover_wait.sh -- a run its agent took just before the scheduler died,
# whose agent then stays away past planner/recovery_wait.  The scheduler
# is SIGKILLed right after the agent started the run (before the
# acceptance is written), the agent is frozen (SIGSTOP) before the
# scheduler comes back, so recovery can only wait for it; past the wait
# the row must not be marked failed: the job has a retry, which would run
# the trigger a second time.  Once the agent is thawed its result ends
# the row.  Guarantee: each trigger ran once, its retry never.
. "$(dirname "$0")/lib.sh"
F_RECOVERY_WAIT=2000 faults_setup recover_wait
start_scheduler || exit 1
S_API=$API; S_AGENTS=$AGENTS
fagent w1 rw-app
check "agent registers" wait_for 10 agent_registered rw-app w1
ctl group add rw-app >/dev/null
J=$(ctl --get .id job add --group rw-app --handler probeIn --route FIRST --retry 1)
row_done () { [ "$(sql "SELECT handle_code FROM xxl_job_log WHERE id = $1")" = 200 ]; }
exercised=0
for round in 1 2 3 4 5; do
    [ "$exercised" = 1 ] && break
    before=$(wc -l < "$PROBE")
    OUT=$(ctl job trigger "$J" --param "sleep=3000,round=$round") || { check "round $round: trigger" false; break; }
    # The scheduler frozen as soon as the trigger is acknowledged (the
    # agent's acceptance is written up to 500 ms after it comes: on a
    # loaded machine the wait for the run's start outlasted that), then
    # killed once the run started on the agent; then the agent frozen
    kill -STOP "$SPID"
    L=$(echo "$OUT" | jq -r '.logIds[0]')
    echo "$L $J $(now_ms)" >> "$ACKED"
    for _ in $(seq 500); do [ "$(wc -l < "$PROBE")" -gt "$before" ] && break; sleep 0.01; done
    kill -KILL "$SPID"
    kill_sched KILL
    kill -STOP "$(apid w1)"
    API=$S_API; AGENTS=$S_AGENTS
    start_scheduler "$API" "$AGENTS" || { check "round $round: scheduler restarts" false; break; }
    if grep -qE "[1-9][0-9]* to re-send to their agents when back" "$T/scheduler.log"; then exercised=1; fi
    # Past the recovery wait (2 s): the row is not failed
    sleep 3.5
    TC=$(sql "SELECT trigger_code FROM xxl_job_log WHERE id = $L")
    check "round $round: past the recovery wait, the row the agent may hold is not failed (triggerCode $TC)" \
        test "$TC" != 500
    kill -CONT "$(apid w1)"
    check "round $round: its result ends it" wait_until 20 row_done "$L"
done
check "the recovery wait was exercised (a row re-sent to an agent not back)" test "$exercised" = 1
check "all runs finish" wait_quiet 20
check "no retry was made" test "$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = $J AND trigger_type = 'RETRY'")" = 0
fcount "a run taken before the scheduler died, its agent away past the recovery wait" --chains
xxl_done
