#!/usr/bin/env bash
# ask_late.sh -- planned fires routed ahead to an agent, the scheduler
# SIGKILLed before they were due and back a moment later, their agent
# away (frozen) past planner/recovery_wait, then back.  A planned row is
# routed ahead (its address written before its instant) and leaves at its
# instant with no store write; at the restart the rows that are due and
# still inside the pre-read window may have left in the last turn, so
# recovery re-sends them to the same agent, and once that agent stays
# away past recovery_wait they count as sent (triggerCode 200, a line
# saying so): the agent may hold the run.  Here it never had them (the
# scheduler died before their instants), so when it is back and asked it
# refuses them as expired.
# Deterministic: two cron jobs (every second, DO_NOTHING and
# FIRE_ONCE_NOW) on one agent; once each has run and has rows routed
# ahead, the scheduler is SIGKILLed and the agent frozen at once (SIGSTOP);
# the scheduler comes back 1.5 s after the kill, so the rows planned in
# between (an instant of each job at least, never sent: no scheduler ran)
# are due and inside the window (5 s) at the restart; the agent is thawed
# once they count as sent.
# Guarantees: a planned fire its agent never had, counted as sent while
# the agent was away, is judged by the misfire rule once the agent is back
# (docs/design.md, "A planned fire among them"): deleted (never a second
# MISFIRE for the outage, none at all here), not failed as lost; no run
# twice, every row ran once or is gone.
# Before 7079b6d (s_ask_late, scheduler/plan/xxl_recover.c): the agent,
# back, was asked about its open runs, answered 'expired' for those, and
# they were failed as lost ("lost: agent ... registered again and does not
# hold this run"): cron fires that never ran, recorded as failed
# (norow.sh seed 1040166098, 'agent away': count.sh never=1).
. "$(dirname "$0")/lib.sh"
faults_setup ask_late
start_scheduler || exit 1
fagent w1 al-app
check "agent registers" wait_for 10 agent_registered al-app w1
ctl group add al-app >/dev/null

has_run () { awk -v j="$1" '$2 == j { f = 1 } END { exit !f }' "$PROBE"; }
# ahead JOB: the job has rows routed ahead (an address, not sent) two
# seconds and more away
ahead () {
    [ "$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = $1 AND trigger_code = 0
              AND executor_address != '' AND schedule_time > $(( $(now_ms) + 2000 ))")" -ge 1 ]
}
JD=$(ctl --get .id job add --group al-app --handler probeIn --route FIRST --cron '* * * * * ?' \
     --misfire DO_NOTHING --param sleep=200 --start)
JF=$(ctl --get .id job add --group al-app --handler probeIn --route FIRST --cron '* * * * * ?' \
     --misfire FIRE_ONCE_NOW --param sleep=200 --start)
JOBS="$JD $JF"
both_run () { has_run "$JD" && has_run "$JF"; }
both_ahead () { ahead "$JD" && ahead "$JF"; }
check "both jobs run" wait_until 15 both_run
check "both jobs have rows routed ahead" wait_until 10 both_ahead

# The scheduler dies; its agent is frozen before anything else happens
kill_sched KILL
K=$(now_ms)
kill -STOP "$(apid w1)"
R=$((K + 1500))
# The rows routed ahead whose instants come before the restart: never
# sent (no scheduler ran then; 100 ms after the kill, not to count on
# how early a turn sends), due and inside the window at the restart (the
# restart may take up to 3.5 s)
TARGET=$(sql "SELECT id FROM xxl_job_log WHERE job_id IN ($JD, $JF) AND trigger_code = 0
              AND executor_address != '' AND schedule_time > $((K + 100)) AND schedule_time <= $R
              ORDER BY id" | tr '\n' ' ')
NT=$(echo $TARGET | wc -w)
say "scheduler SIGKILLed at $K, w1 frozen; rows routed ahead, due before the restart at $R: $TARGET"
check "rows routed ahead fall between the kill and the restart ($NT)" test "$NT" -ge 2
IDS=$(echo $TARGET | tr ' ' ',')
[ -n "$IDS" ] || IDS=0
wait_until 10 past "$R"
MARK_LINES=$(wc -l < "$T/scheduler.log")
restart_sched
recovered () { tail -n +$((MARK_LINES + 1)) "$T/scheduler.log" | grep -q 'planner: recovery:'; }
check "the restarted scheduler recovers" wait_until 10 recovered
tail -n +$((MARK_LINES + 1)) "$T/scheduler.log" | grep -o 'planner: recovery:.*' | sed 's/^/# /'
ctl job stop "$JD" >/dev/null
ctl job stop "$JF" >/dev/null

# Past recovery_wait (10 s) with the agent away: counted as sent
counted () { [ "$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE id IN ($IDS) AND trigger_code = 200
                       AND trigger_msg LIKE '%did not come back%'")" = "$NT" ]; }
check "agent away past recovery_wait: the re-sent rows count as sent, saying why" wait_until 30 counted
# Every planned row counted so, planned after the kill (the targets, and
# rows whose instants the restart itself took past)
ASKED=$(sql "SELECT id FROM xxl_job_log WHERE job_id IN ($JD, $JF) AND trigger_code = 200
             AND handle_code = 0 AND trigger_msg LIKE '%did not come back%'
             AND schedule_time > $((K + 100)) ORDER BY id" | tr '\n' ' ')
NA=$(echo $ASKED | wc -w)
say "counted as sent while w1 was away, never sent: $ASKED"
AIDS=$(echo $ASKED | tr ' ' ',')
[ -n "$AIDS" ] || AIDS=0
kill -CONT "$(apid w1)"
check "agent back: it registers again" wait_for 10 agent_registered al-app w1
# Each of them: gone, or with a result
judged () { [ "$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE id IN ($AIDS) AND handle_code = 0")" = 0 ]; }
check "agent back: the rows it never had are judged" wait_until 30 judged
check "all runs finish" wait_quiet 30
sql "SELECT id, job_id, schedule_time, trigger_code, handle_code, substr(replace(handle_msg, char(10), ' '), 1, 120)
     FROM xxl_job_log WHERE id IN ($AIDS)" | sed 's/^/# left: /'
FAILED_ROWS=$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id IN ($JD, $JF) AND handle_code = 500")
LEFT=$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE id IN ($AIDS)")
check "no planned fire its agent never had is failed as lost (failed rows: $FAILED_ROWS)" \
    test "$FAILED_ROWS" = 0
check "each is dropped by the misfire rule (rows left: $LEFT of $NA)" test "$LEFT" = 0
tail -n +$((MARK_LINES + 1)) "$T/scheduler.log" > "$T/since"
grep -oE "log [0-9]+: .*(never took it|failed as lost).*" "$T/since" | sed 's/^/# /'
REFUSED=0
for id in $ASKED; do grep -q "log $id: .*never took it.*dropped, as the misfire rule says" "$T/since" \
    && REFUSED=$((REFUSED + 1)); done
check "each was asked once its agent was back and dropped as never taken ($REFUSED of $NA)" \
    test "$REFUSED" = "$NA"
MIS=$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id IN ($JD, $JF) AND trigger_type = 'MISFIRE'")
check "no MISFIRE (the outage was inside the window: $MIS)" test "$MIS" = 0
fcount "planned fires counted as sent while their agent was away" --jobs "$JOBS"
xxl_done
