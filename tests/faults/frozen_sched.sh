#!/usr/bin/env bash
# frozen_sched.sh -- the scheduler frozen (SIGSTOP) past the agents' dead
# time (3 s) and past the pre-read window (5 s), then thawed, under API
# load and one-second crons (DO_NOTHING and FIRE_ONCE_NOW), a few rounds.
# Requests sent during the freeze are answered after it (their rows count
# whether or not the client waited for the reply).
# Guarantees: every row runs once; the agents' results made during the
# freeze are delivered (no lost result); a FIRE_ONCE_NOW job fires at most
# once per outage (one MISFIRE row), a DO_NOTHING job none; no run twice;
# none unfinished; the scheduler lives on.  Every second round (the long
# form's) is shorter: past the leases (3 s), not past the pre-read (5 s),
# so that the scheduler takes its own shares back while its timer still
# holds fires it planned before the freeze (each must still run once).
. "$(dirname "$0")/lib.sh"
faults_setup frozen_sched

ROUNDS=$(pick 1 6)
start_scheduler || exit 1
ctl group add fs >/dev/null
fagent f1 fs
fagent f2 fs
both () { ctl agent list | jq -e '[.agents[] | select(.app == "fs" and .connected)] | length == 2' >/dev/null; }
check "agents register" wait_until 10 both
J1=$(ctl --get .id job add --group fs --handler probeIn --route ROUND --param sleep=300)
J2=$(ctl --get .id job add --group fs --handler probe --route FIRST --param sleep=300)
DN=$(ctl --get .id job add --group fs --handler probeIn --route ROUND --cron '* * * * * ?' --misfire DO_NOTHING --param sleep=100 --start)
FN=$(ctl --get .id job add --group fs --handler probeIn --route LAST --cron '* * * * * ?' --misfire FIRE_ONCE_NOW --param sleep=100 --start)
load_start "$J1 $J2"
for round in $(seq "$ROUNDS"); do
    rsleep 1500 3000
    say "round $round: SIGSTOP scheduler after $(acked_count) acknowledged triggers"
    kill -STOP "$SPID"
    if [ $((round % 2)) = 1 ]; then
        rsleep 7000 9000         # past dead (3 s) and pre-read (5 s)
    else
        # Past its leases (3 s) but not the pre-read (5 s): the fires it
        # planned before the freeze for after it are still on its timer
        # when it takes its shares back and recovers their rows
        rsleep 3300 4500
    fi
    kill -CONT "$SPID"
    say "round $round: SIGCONT scheduler"
    check "round $round: both agents are registered again" wait_until 10 both
done
rsleep 2000 3000
load_stop
ctl job stop "$DN" >/dev/null; ctl job stop "$FN" >/dev/null
check "every run finishes" wait_quiet 40
check "the scheduler is alive" kill -0 "$SPID"
MIS_FN=$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = $FN AND trigger_type = 'MISFIRE'")
MIS_DN=$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = $DN AND trigger_type = 'MISFIRE'")
check "FIRE_ONCE_NOW fires at most once per outage ($MIS_FN MISFIRE rows, $ROUNDS outages)" test "$MIS_FN" -le "$ROUNDS"
check "DO_NOTHING fires no MISFIRE ($MIS_DN)" test "$MIS_DN" = 0
# The crons' seconds inside each freeze past the pre-read may be skipped
# (DO_NOTHING) or stand in one MISFIRE row (FIRE_ONCE_NOW): at most 9 a round
fcount "scheduler frozen past the agents' dead time" --cron "$DN $FN" --allow-gaps $((ROUNDS * 9 * 2))
xxl_done
