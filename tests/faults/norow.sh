#!/usr/bin/env bash
# norow.sh -- planned fires the scheduler sent in its last turn, then an
# outage longer than the pre-read window (5 s).  A prepared fire leaves
# at its instant with no store write; the commit after it raises its
# share's fired_sent.  A scheduler that dies between the two leaves a row
# whose run may have started but is not known sent, and by the time it is
# back the row is past the window: the misfire rule must not treat it as
# never sent (DO_NOTHING would delete the row of a run that happened, a
# run with no row).  Recovery asks the row's agent (a RUN already
# expired): an agent that took it answers 200, the row stays and its
# result ends it; one that never got it refuses it as expired, and only
# then does the misfire rule apply.
#
# Part 1, deterministic: a cron job's run starts, the scheduler is
# SIGKILLed at once (before the acceptance is written; the run lasts
# 12 s, so it is still running when the agent is asked), and its share's
# fired_sent is set just below the run's planned time: the store as a
# scheduler killed a moment earlier leaves it (after the send, before the
# commit that records it).  Down 9 s.  For DO_NOTHING and FIRE_ONCE_NOW:
# the run keeps its row and its result; the later seconds, never sent,
# are dropped (DO_NOTHING) or fire once as MISFIRE (FIRE_ONCE_NOW).
# Part 1 again with the run's agent frozen through the outage and past
# the ask's wait: the row counts as sent and stays.
# Part 2, seeded: DO_NOTHING and FIRE_ONCE_NOW crons on two agents,
# SIGKILLs at random instants, fired_sent rolled back by a random part of
# the last second or not, outages of 6-9 s.
# Guarantees: every run has its row (no run without a row), none twice,
# none unfinished; DO_NOTHING fires no MISFIRE; FIRE_ONCE_NOW at most one
# per outage.
. "$(dirname "$0")/lib.sh"
faults_setup norow
start_scheduler || exit 1
fagent w1 nr-app
fagent w2 nr-app
check "agents register" wait_until 10 bash -c "
    $CTL --api $API --json agent list | jq -e '[.agents[] | select(.app == \"nr-app\" and .connected)] | length == 2' >/dev/null"
ctl group add nr-app >/dev/null

# first_run JOB: the logId of the job's first run start in the probe file
first_run () { awk -v j="$1" '$2 == j { print $1; exit }' "$PROBE"; }
has_run () { [ -n "$(first_run "$1")" ]; }
row_field () { sql "SELECT $2 FROM xxl_job_log WHERE id = $1"; }
# unknown_sent LOGID JOB: the job's share's fired_sent just below the
# row's planned time (no scheduler runs: the store is ours)
unknown_sent () {
    local st; st=$(row_field "$1" schedule_time)
    xxl_sql "UPDATE xxl_lease SET fired_sent = $((st - 1)) WHERE share = $(($2 % 16)) AND fired_sent >= $((st - 1))" >/dev/null
}
row_done () { [ "$(row_field "$1" handle_code)" = 200 ]; }
why_noted () { [ "$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE id = $1 AND trigger_msg LIKE '%did not come back%'")" = 1 ]; }
JOBS=""

# Part 1
for misfire in DO_NOTHING FIRE_ONCE_NOW; do
    exercised=0
    for try in 1 2 3; do
        J=$(ctl --get .id job add --group nr-app --handler probeIn --route FIRST --cron '* * * * * ?' \
            --misfire "$misfire" --param sleep=12000 --start)
        JOBS="$JOBS $J"
        wait_until 10 has_run "$J"
        L=$(first_run "$J")
        kill_sched KILL
        if [ -z "$L" ] || [ "$(row_field "$L" trigger_code)" != 0 ]; then
            # (its acceptance was written before the kill: not the case)
            restart_sched
            ctl job stop "$J" >/dev/null
            continue
        fi
        ST=$(row_field "$L" schedule_time)
        unknown_sent "$L" "$J"
        say "$misfire: log $L (planned $ST) ran; the scheduler died before the commit that records it sent"
        # Down 9 s: the run's second and the three after it are past the
        # window at the restart
        wait_until 20 past $((ST + 9000))
        MARK_LINES=$(wc -l < "$T/scheduler.log")
        restart_sched
        # The job stops once the restarted scheduler has recovered it and
        # sent FIRE_ONCE_NOW's MISFIRE (its ready file comes before the
        # recovery: in a loaded run the stop came first and dropped it).
        # The MISFIRE is the planner's when the job's next time is past
        # the window too (its rows are written planner/ahead, 3 s, ahead):
        # a planned fire, which a stop before it is sent cancels as it
        # does any other, and it waits for the warm-up (the agents
        # registering again: up to its limit on a loaded machine), so
        # up to 30 s for it to be sent
        recovered () { tail -n +$((MARK_LINES + 1)) "$T/scheduler.log" | grep -q 'planner: recovery:'; }
        misfired () { [ "$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = $J AND trigger_type = 'MISFIRE'
                                AND trigger_code != 0")" != 0 ]; }
        wait_until 10 recovered
        [ "$misfire" = DO_NOTHING ] || wait_until 30 misfired
        ctl job stop "$J" >/dev/null
        check "$misfire: the run that went in the last turn keeps its row and its result" \
            wait_until 30 row_done "$L"
        # (the seconds from ST + 5 s on, inside the misfire window at the
        # restart, fire before the stop: up to 7 runs of 12 s, one at a time)
        check "$misfire: all runs finish" wait_quiet 120
        # The seconds after it were never sent (its agent refused them as
        # expired, or they were never covered): the misfire rule
        NEVER=$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = $J AND schedule_time > $ST
                     AND schedule_time <= $((ST + 3000)) AND trigger_type != 'MISFIRE'")
        MIS=$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = $J AND trigger_type = 'MISFIRE'")
        check "$misfire: the seconds never sent have no row ($NEVER)" test "$NEVER" = 0
        if [ "$misfire" = DO_NOTHING ]; then
            check "$misfire: no MISFIRE ($MIS)" test "$MIS" = 0
        else
            check "$misfire: one MISFIRE for the outage ($MIS)" test "$MIS" = 1
        fi
        tail -n +"$((MARK_LINES + 1))" "$T/scheduler.log" > "$T/since"
        ASKED=$(grep -c "log $L: .*took it before" "$T/since")
        grep -o "log $L: .*took it before.*" "$T/since" | sed 's/^/# /'
        grep -o "log [0-9]*: .*never took it.*" "$T/since" | sed 's/^/# /'
        REFUSED=$(grep -c "never took it" "$T/since")
        check "$misfire: recovery asked the agent about log $L ($ASKED)" test "$ASKED" = 1
        check "$misfire: a row its agent never took was refused as expired ($REFUSED)" \
            test "$REFUSED" -ge 1
        exercised=1
        break
    done
    check "$misfire: a run sent in the scheduler's last turn was caught" test "$exercised" = 1
done

# Part 1, its agent away: frozen (SIGSTOP) from the kill until past the
# ask's wait (planner/recovery_wait, 10 s here): the row counts as sent
# (it may have run: deleting it could leave a run with no row); once the
# agent is thawed it is asked still, and the seconds it never had are
# dropped instead of waiting for a result for ever
caught=0
for try in 1 2 3; do
    J=$(ctl --get .id job add --group nr-app --handler probeIn --route FIRST --cron '* * * * * ?' \
        --misfire DO_NOTHING --param sleep=1000 --start)
    JOBS="$JOBS $J"
    wait_until 10 has_run "$J"
    L=$(first_run "$J")
    kill_sched KILL
    if [ -z "$L" ] || [ "$(row_field "$L" trigger_code)" != 0 ]; then
        restart_sched
        ctl job stop "$J" >/dev/null
        continue
    fi
    AW=$(awk -v l="$L" '$1 == l { print $6; exit }' "$PROBE")
    kill -STOP "$(apid "$AW")"
    ST=$(row_field "$L" schedule_time)
    unknown_sent "$L" "$J"
    say "agent away: log $L (planned $ST) ran on $AW, frozen; the scheduler died before recording it sent"
    wait_until 20 past $((ST + 9000))
    MARK_LINES=$(wc -l < "$T/scheduler.log")
    restart_sched
    ctl job stop "$J" >/dev/null
    counted () { [ "$(row_field "$L" trigger_code)" = 200 ]; }
    check "agent away: past the wait, the row it may have run counts as sent" wait_until 30 counted
    check "agent away: the row says why" why_noted "$L"
    kill -CONT "$(apid "$AW")"
    check "agent away: all runs finish" wait_quiet 30
    check "agent away: the row is still there" test "$(row_field "$L" id)" = "$L"
    # The seconds after it, never sent, counted as sent too while it was
    # away: asked once it is back, refused as expired, dropped
    NEVER=$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = $J AND schedule_time > $ST
                 AND schedule_time <= $((ST + 3000))")
    check "agent away: once it is back, the seconds it never had are dropped ($NEVER)" \
        test "$NEVER" = 0
    caught=1
    break
done
check "agent away: a run sent in the scheduler's last turn was caught" test "$caught" = 1

# Part 2
DN=$(ctl --get .id job add --group nr-app --handler probeIn --route ROUND --cron '* * * * * ?' \
     --misfire DO_NOTHING --param sleep=300 --start)
FN=$(ctl --get .id job add --group nr-app --handler probeIn --route ROUND --cron '* * * * * ?' \
     --misfire FIRE_ONCE_NOW --param sleep=300 --start)
JOBS="$JOBS $DN $FN"
ROUNDS=$(pick 3 8)
for i in $(seq "$ROUNDS"); do
    rsleep 1500 3000
    kill_sched KILL
    rnd 3
    if [ "$R" != 0 ]; then
        rnd 1500; BACK=$R
        xxl_sql "UPDATE xxl_lease SET fired_sent = fired_sent - $BACK WHERE fired_sent > $BACK" >/dev/null
        say "round $i: SIGKILL, fired_sent $BACK ms back, down 6-9 s"
    else
        say "round $i: SIGKILL, down 6-9 s"
    fi
    rsleep 6000 9000
    restart_sched
done
rsleep 1500 2500
ctl job stop "$DN" >/dev/null; ctl job stop "$FN" >/dev/null
check "all runs finish" wait_quiet 40
MIS_DN=$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = $DN AND trigger_type = 'MISFIRE'")
MIS_FN=$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = $FN AND trigger_type = 'MISFIRE'")
check "DO_NOTHING fires no MISFIRE ($MIS_DN)" test "$MIS_DN" = 0
check "FIRE_ONCE_NOW fires at most one MISFIRE per outage ($MIS_FN for $ROUNDS)" test "$MIS_FN" -le "$ROUNDS"
say "asked: $(grep -c 'took it before' "$T/scheduler.log"), refused as expired: $(grep -c 'never took it' "$T/scheduler.log")"
fcount "planned fires sent in the last turn, outages past the window" --jobs "$JOBS"
xxl_done
