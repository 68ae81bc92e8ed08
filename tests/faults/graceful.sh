#!/usr/bin/env bash
# graceful.sh -- clean stops (SIGTERM) of each side mid-load, restarted:
# first an agent of two (ROUND, in-process, isolated and GLUE runs in
# flight and queued), several rounds alternating agents; then the
# scheduler, under API load and one-second crons.
# Guarantees: a clean stop loses nothing: every acknowledged trigger runs
# exactly once (a stopping agent finishes or hands back what it was given;
# the scheduler answers or re-sends at its next start); no run twice; none
# unfinished; the stopping agent leaves no process behind.
. "$(dirname "$0")/lib.sh"
faults_setup graceful

ROUNDS=$(pick 2 10)
start_scheduler || exit 1
ctl group add gs >/dev/null
fagent g1 gs
fagent g2 gs
both () { ctl agent list | jq -e '[.agents[] | select(.app == "gs" and .connected)] | length == 2' >/dev/null; }
check "agents register" wait_until 10 both
JOBS="$(ctl --get .id job add --group gs --handler probeIn --route ROUND --param sleep=200)"
JOBS="$JOBS $(ctl --get .id job add --group gs --handler probe --route ROUND --param sleep=200)"
JOBS="$JOBS $(ctl --get .id job add --group gs --glue-type GLUE_SHELL --glue-source "$GLUE" --route ROUND --param sleep=200)"
load_start "$JOBS"
for round in $(seq "$ROUNDS"); do
    rsleep 800 2000
    A=g$(( (round % 2) + 1 ))
    say "round $round: SIGTERM to agent $A after $(acked_count) acknowledged triggers"
    kill_agent "$A" TERM
    no_orphans () { test -z "$(orphans "$1")"; }
    check "round $round: the stopped agent $A leaves no process behind" wait_until 2 no_orphans "$A"
    rsleep 0 1500
    fagent "$A" gs
    wait_until 10 both
done
load_stop
check "agent stops: all runs finish" wait_quiet 40
fcount "agents stopped cleanly mid-load"

MARK=$(sql "SELECT COALESCE(MAX(id), 0) FROM xxl_job_log")
CRONS="$(ctl --get .id job add --group gs --handler probeIn --route ROUND --cron '* * * * * ?' --param sleep=100 --start)"
CRONS="$CRONS $(ctl --get .id job add --group gs --handler probe --route FIRST --cron '* * * * * ?' --param sleep=100 --start)"
load_start "$JOBS"
for round in $(seq "$ROUNDS"); do
    rsleep 800 2000
    say "round $round: SIGTERM to the scheduler after $(acked_count) acknowledged triggers"
    kill_sched TERM
    rsleep 0 1500
    restart_sched
    wait_until 10 both
done
rsleep 1000 2000
load_stop
for j in $CRONS; do ctl job stop "$j" >/dev/null; done
check "scheduler stops: all runs finish" wait_quiet 40
fcount "the scheduler stopped cleanly mid-load" --min-id $((MARK + 1)) --cron "$CRONS"
xxl_done
