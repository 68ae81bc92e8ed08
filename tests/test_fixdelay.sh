#!/usr/bin/env bash
# test_fixdelay.sh -- a FIX_DELAY job keeps its chain going when a minute
# boundary passes while its run is in flight (the engine's per-minute
# housekeeping once forgot the jobs waiting for their run's end).
. "$(dirname "$0")/lib.sh"
xxl_setup

start_scheduler || exit 1
start_agent fd-a fd-app
check "agent registers" wait_for 10 agent_registered fd-app fd-a
ctl group add fd-app >/dev/null

# Start the job 53-55 s into a minute: its first run (due a second later,
# lasting 8 s) is in flight when the minute ends
sec () { echo $((10#$(date -u +%S))); }
in_window () { s=$(sec); [ "$s" -ge 53 ] && [ "$s" -le 55 ]; }
check "the clock reaches 53-55 s into a minute" wait_for 70 in_window
printf 'sleep 8\n' > "$T/sleep8.sh"
FD=$(ctl job add --group fd-app --glue-type GLUE_SHELL --glue-source "$T/sleep8.sh" \
        --fix-delay 1 --start | jq -r .id)
ran () { [ "$(ctl log list --job "$FD" | jq '[.logs[] | select(.handleCode == 200)] | length')" -ge "$1" ]; }
check "the first run ends after the minute boundary" wait_for 20 ran 1
check "the next run follows a second after it" wait_for 10 ran 2
ctl job stop "$FD" >/dev/null
check "the second run started after the first ended, across the boundary" bash -c "
    $CTL --api $API --json log list --job $FD | jq -e '
        [.logs[] | select(.handleCode == 200)] | sort_by(.scheduleTime) as \$r
        | (\$r[1].scheduleTime >= \$r[0].handleTime + 990)
        and ((\$r[0].handleTime / 60000 | floor) > (\$r[0].triggerTime / 60000 | floor))' >/dev/null"
xxl_done
