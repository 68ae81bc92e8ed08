#!/usr/bin/env bash
# test_fixdelay.sh -- a FIX_DELAY job keeps its chain going end to end: its
# next run starts a delay after the previous one ended, though the
# scheduler was killed and restarted while that run was in flight (the
# waiting job comes back from the store, and the run's result resumes it),
# or stood still past the next fire and the pre-read (a misfire skipped), or a
# user killed the run.  The decisions themselves (the walk plans one run
# and waits, a skipped misfire waits for no run, the release on a run's
# end, the store's resume at end + delay) are tests/test_rules_plan.c's; this test once waited for the wall clock to
# reach 53-55 s into a minute, to have a run straddle the per-minute
# housekeeping that forgot waiting jobs: the restart below loses the
# whole in-memory waiting set instead, at any second.
. "$(dirname "$0")/lib.sh"
xxl_setup

start_scheduler || exit 1
start_agent fd-a fd-app
check "agent registers" wait_for 10 agent_registered fd-app fd-a
ctl group add fd-app >/dev/null

printf 'sleep 3\n' > "$T/sleep3.sh"
printf 'true\n' > "$T/true.sh"
FD=$(ctl --get .id job add --group fd-app --glue-type GLUE_SHELL --glue-source "$T/sleep3.sh" \
        --fix-delay 1 --start)
ran () { [ "$(ctl log list --job "$FD" | jq '[.logs[] | select(.handleCode == 200)] | length')" -ge "$1" ]; }
in_flight () { ctl log list --job "$FD" | jq -e '[.logs[] | select(.triggerCode == 200 and .handleCode == 0)] | length == 1' >/dev/null; }
check "the first run is in flight" wait_for 10 in_flight
check "... and the job waits for it" bash -c "
    $CTL --api $API --json job show $FD | jq -e '.triggerNextTime == 253402300799000' >/dev/null"
kill -KILL "$SPID"; wait "$SPID" 2>/dev/null
start_scheduler "$API" "$AGENTS" || exit 1
check "the first run ends, the scheduler restarted meanwhile" wait_for 20 ran 1
check "the next run follows a second after it" wait_for 20 ran 2
ctl job stop "$FD" >/dev/null

# A FIX_DELAY job whose next fire comes while the scheduler stands still
# (frozen, as a VM paused or a wall clock stepped forward would have it),
# and is past the pre-read (5 s) when it moves again: DO_NOTHING skips that
# fire as a misfire, and the job goes on a delay later (before the fix it
# waited for ever for the end of a run the skip never made).  A delay of
# 8 s, so that the fire is not planned yet when the freeze comes (the
# window opens 3 s after the run's end), and a freeze until 14.5 s after
# the end was seen
FM=$(ctl --get .id job add --group fd-app --glue-type GLUE_SHELL --glue-source "$T/true.sh" \
        --fix-delay 8 --start)
runs_m () { [ "$(ctl log list --job "$FM" | jq '[.logs[] | select(.handleCode == 200)] | length')" -ge "$1" ]; }
check "misfire: the first run ends" wait_for 10 runs_m 1
SEEN=$(date +%s%3N)
kill -STOP "$SPID"
LEFT=$(( SEEN + 14500 - $(date +%s%3N) ))
[ "$LEFT" -le 0 ] || sleep "$((LEFT / 1000)).$(printf '%03d' $((LEFT % 1000)))"
kill -CONT "$SPID"
check "misfire: the fire past the pre-read is skipped (DO_NOTHING)" \
    wait_for 15 grep -q "planner: job $FM misfired at .*; DO_NOTHING" "$T/scheduler.log"
check "misfire: the job goes on, a run after the skipped fire" wait_for 20 runs_m 2
ctl job stop "$FM" >/dev/null

# A FIX_DELAY job whose run a user kills goes on: the kill ends the run
# (handleCode 500) and its next run follows the delay, as after a result
printf 'sleep 60\n' > "$T/sleep60.sh"
FK=$(ctl --get .id job add --group fd-app --glue-type GLUE_SHELL --glue-source "$T/sleep60.sh" \
        --fix-delay 1 --start)
running_k () { ctl log list --job "$FK" | jq -r '[.logs[] | select(.triggerCode == 200 and .handleCode == 0)] | .[0].id // empty'; }
in_flight_k () { [ -n "$(running_k)" ]; }
check "the killed job's first run is in flight" wait_for 10 in_flight_k
K1=$(running_k)
check "log kill of that run answers" ctl log kill "$K1"
second_k () { [ "$(ctl log list --job "$FK" | jq '[.logs[]] | length')" -ge 2 ]; }
check "the next run follows the killed one" wait_for 15 second_k
ctl job stop "$FK" >/dev/null
check "the killed run ended 500 'killed by a user'" bash -c "
    $CTL --api $API --json log show $K1 | jq -e '.handleCode == 500 and (.handleMsg | test(\"killed by a user\"))' >/dev/null"
check "the second run started after the first ended, across the restart" bash -c "
    $CTL --api $API --json log list --job $FD | jq -e '
        [.logs[] | select(.handleCode == 200)] | sort_by(.scheduleTime) as \$r
        | (\$r[1].scheduleTime >= \$r[0].handleTime + 990)' >/dev/null"
xxl_done
