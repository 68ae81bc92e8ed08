#!/usr/bin/env bash
# sched_kill.sh -- the scheduler killed (SIGKILL or SIGTERM, chosen by the
# seed) at random instants under load, and restarted on the same store and
# endpoints: a client loop triggering three jobs (in-process BEAN, isolated
# BEAN, GLUE_SHELL) and recording every logId it got back, and five
# one-second cron jobs.  Outages stay under the pre-read window (5 s), so
# no misfire rule applies, save to a planned second that several restarts
# in quick succession kept from leaving until it was past the window
# (recovery drops it as DO_NOTHING says, and logs it).
# Guarantees: every acknowledged trigger runs exactly once (also those
# acknowledged just after a restart); every planned second has one row and
# one run; no run twice; no row left unfinished.
. "$(dirname "$0")/lib.sh"
faults_setup sched_kill

ROUNDS=$(pick 4 14)
start_scheduler || exit 1
fagent a1 fk-app
fagent a2 fk-app
check "agents register" wait_until 10 bash -c "
    $CTL --api $API --json agent list | jq -e '[.agents[] | select(.app == \"fk-app\" and .connected)] | length == 2' >/dev/null"
ctl group add fk-app >/dev/null

# API jobs: in-process, isolated, GLUE
J_IN=$(ctl --get .id job add --group fk-app --handler probeIn --route ROUND --param sleep=50)
J_ISO=$(ctl --get .id job add --group fk-app --handler probe --route FIRST --param sleep=50)
J_GLUE=$(ctl --get .id job add --group fk-app --glue-type GLUE_SHELL --glue-source "$GLUE" --route LAST \
         --param sleep=50)
# Cron jobs: every second, several routes
CRONS=""
for r in ROUND FIRST LAST RANDOM CONSISTENT_HASH; do
    CRONS="$CRONS $(ctl --get .id job add --group fk-app --handler probeIn --route $r --cron '* * * * * ?' \
                    --param sleep=200 --start)"
done
check "jobs added" test -n "$J_IN" -a -n "$J_ISO" -a -n "$J_GLUE" -a "$(echo $CRONS | wc -w)" = 5

load_start "$J_IN $J_ISO $J_GLUE $J_IN"
rsleep 1000 2000
for i in $(seq "$ROUNDS"); do
    rnd 2; if [ "$R" = 0 ]; then SIG=KILL; else SIG=TERM; fi
    rsleep 300 2500                          # load runs
    say "round $i: SIG$SIG to the scheduler after $(acked_count) acknowledged triggers"
    kill_sched "$SIG"
    rsleep 0 1500                            # the outage
    restart_sched || { check "scheduler restarts (round $i)" false; break; }
done
rsleep 1000 2000
load_stop
for j in $CRONS; do ctl job stop "$j" >/dev/null; done
say "$(acked_count) triggers acknowledged"
check "the client got acknowledgements throughout ($(acked_count))" test "$(acked_count)" -ge $((ROUNDS * 3))
check "all runs finish" wait_quiet 40
check "the scheduler is alive" kill -0 "$SPID"
# (each outage stays under the pre-read window, but a planned second held
# through restarts in quick succession, waiting for agents that were still
# reconnecting, can be past it at the next start: recovery then applies
# DO_NOTHING and logs how many it dropped -- a second it may have sent,
# once its agent answered that it never took it; those are the only gaps
# allowed)
MISFIRED=$(( $(grep -o '[0-9]* dropped as misfired' "$T/scheduler.log" | awk '{ n += $1 } END { print n + 0 }') \
            + $(grep -c 'misfired at .*DO_NOTHING' "$T/scheduler.log") \
            + $(grep -o 'DO_NOTHING (and [0-9]* lines like it' "$T/scheduler.log" | awk '{ n += $3 } END { print n + 0 }') \
            + $(grep -c 'never took it .*: dropped, as the misfire rule says' "$T/scheduler.log") ))
fcount "scheduler kills under API and cron load" --cron "$CRONS" --allow-gaps "$MISFIRED"

# An outage longer than the pre-read window (5 s): the misfire rules.  A
# FIRE_ONCE_NOW job fires once per outage, a DO_NOTHING one skips it.  An
# outage ends when the agents are back: a scheduler stopped again before
# any of them reconnected ran nothing, and its next start's recovery keeps
# one MISFIRE (the latest late row) for the whole time the job could not
# run; the earlier outage's (a row kept, or a row asked about that its
# agent had not refused yet) goes with the other late rows.  So each
# outage starts once the agents are back.
MARK=$(sql "SELECT COALESCE(MAX(id), 0) FROM xxl_job_log")
FN=$(ctl --get .id job add --group fk-app --handler probeIn --cron '* * * * * ?' --misfire FIRE_ONCE_NOW --param sleep=10 --start)
DN=$(ctl --get .id job add --group fk-app --handler probeIn --cron '* * * * * ?' --misfire DO_NOTHING --param sleep=10 --start)
OUTAGES=$(pick 1 3)
for i in $(seq "$OUTAGES"); do
    check "agents back before outage $i" wait_until 15 both_registered "$API" fk-app
    rsleep 1500 2500
    rnd 2; if [ "$R" = 0 ]; then SIG=KILL; else SIG=TERM; fi
    say "outage $i: SIG$SIG, down 7-9 s"
    kill_sched "$SIG"
    rsleep 7000 9000
    restart_sched
done
misfired () { [ "$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = $FN AND trigger_type = 'MISFIRE' AND handle_code != 0")" -ge "$OUTAGES" ]; }
wait_until 20 misfired
rsleep 2000 3000
ctl job stop "$FN" >/dev/null; ctl job stop "$DN" >/dev/null
check "misfire: all runs finish" wait_quiet 30
MIS_FN=$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = $FN AND trigger_type = 'MISFIRE'")
MIS_DN=$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = $DN AND trigger_type = 'MISFIRE'")
check "FIRE_ONCE_NOW fires exactly once per outage ($MIS_FN MISFIRE rows for $OUTAGES outages)" test "$MIS_FN" = "$OUTAGES"
[ "$MIS_FN" = "$OUTAGES" ] || sql "SELECT id, schedule_time, trigger_time, trigger_code, handle_code FROM xxl_job_log
    WHERE job_id = $FN AND trigger_type = 'MISFIRE'" | sed 's/^/    MISFIRE row: /'
check "DO_NOTHING fires no MISFIRE row ($MIS_DN)" test "$MIS_DN" = 0
fcount "outages past the pre-read window" --min-id $((MARK + 1)) --cron "$FN $DN" --allow-gaps $((OUTAGES * 10 * 2))
xxl_done
