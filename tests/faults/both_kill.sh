#!/usr/bin/env bash
# both_kill.sh -- scheduler and agent both killed with results spooled: the
# scheduler is frozen (SIGSTOP) while runs end, so their results wait in the
# agent's spool; then the agent is SIGKILLed, the scheduler SIGKILLed, and
# both restarted (in a seeded order).  In-process, isolated and GLUE runs.
# Guarantees: no lost result (the spool delivers after both restarts); no
# run executes twice (the restarted scheduler does not re-send a row whose
# acceptance or result the agent holds; the agent remembers what it
# accepted); every acknowledged trigger ends.
. "$(dirname "$0")/lib.sh"
faults_setup both_kill

ROUNDS=$(pick 2 6)
start_scheduler || exit 1
ctl group add bk >/dev/null
fagent b1 bk
check "agent registers" wait_until 10 agent_registered bk b1
JOBS=""
for k in 1 2; do
    JOBS="$JOBS $(ctl --get .id job add --group bk --handler probeIn --param sleep=800)"
    JOBS="$JOBS $(ctl --get .id job add --group bk --handler probe --param sleep=800)"
    JOBS="$JOBS $(ctl --get .id job add --group bk --glue-type GLUE_SHELL --glue-source "$GLUE" --param sleep=800)"
done
# one-second crons too: their rows are planned ahead, sent, spooled
CRONS="$(ctl --get .id job add --group bk --handler probeIn --cron '* * * * * ?' --param sleep=300 --start)"
CRONS="$CRONS $(ctl --get .id job add --group bk --handler probe --cron '* * * * * ?' --param sleep=300 --start)"

for round in $(seq "$ROUNDS"); do
    wait_until 10 agent_registered bk b1
    rsleep 500 1500
    for j in $JOBS; do
        ctl job trigger "$j" | jq -r '.logIds[]' | sed "s/\$/ $j/" >> "$ACKED"
    done
    # frozen within the 500 ms in which an acceptance is not yet written
    rsleep 0 600
    say "round $round: SIGSTOP scheduler"
    kill -STOP "$SPID"
    rsleep 1500 3000                     # runs end; their results go to the spool
    # Runs that started 1.2 s before the agent's death ended, their result spooled
    ENDED_BEFORE=$(( $(now_ms) - 1200 ))
    say "round $round: SIGKILL agent, SIGKILL scheduler"
    kill_agent b1 KILL
    kill_sched KILL
    awk -v t="$ENDED_BEFORE" '$5 < t && $6 == "b1" { print $1 }' "$PROBE" >> "$T/ended"
    rnd 2
    if [ "$R" = 0 ]; then restart_sched; rsleep 0 1000; fagent b1 bk
    else fagent b1 bk; rsleep 0 1000; restart_sched; fi
done
AFTER=$(sql "SELECT COALESCE(MAX(id), 0) FROM xxl_job_log")
for j in $JOBS; do
    ctl job trigger "$j" | jq -r '.logIds[]' | sed "s/\$/ $j/" >> "$ACKED"
done
rsleep 1000 2000
for j in $CRONS; do ctl job stop "$j" >/dev/null; done
check "all runs finish" wait_quiet 30
check "the scheduler is alive" kill -0 "$SPID"
# No lost result: every run that had ended before the agent died is 200
sort -un "$T/ended" > "$T/ended.s"
LOST=$(for id in $(cat "$T/ended.s"); do
    [ "$(sql "SELECT handle_code FROM xxl_job_log WHERE id = $id")" = 200 ] || echo "$id"; done)
check "no lost result: the $(wc -l < "$T/ended.s") runs that ended before the kills are stored 200${LOST:+ (not: $(echo $LOST))}" \
    test -z "$LOST"
for id in $(echo "$LOST" | head -5); do
    say "logId $id: $(sql "SELECT trigger_code, handle_code, substr(handle_msg, 1, 200) FROM xxl_job_log WHERE id = $id")"
done
# (a planned second whose row never left and was past the pre-read window
# at the restart follows DO_NOTHING: recovery drops it and says how many;
# those seconds are the only gaps allowed)
MISFIRED=$(( $(grep -o '[0-9]* dropped as misfired' "$T/scheduler.log" | awk '{ n += $1 } END { print n + 0 }') \
            + $(grep -c 'misfired at .*DO_NOTHING' "$T/scheduler.log") \
            + $(grep -o 'DO_NOTHING (and [0-9]* lines like it' "$T/scheduler.log" | awk '{ n += $3 } END { print n + 0 }') \
            + $(grep -c 'never took it .*: dropped, as the misfire rule says' "$T/scheduler.log") ))
fcount "scheduler and agent killed with spooled results" --max-id "$AFTER" --cron "$CRONS" \
    --allow-gaps "$MISFIRED" \
    --excuse 'lost|agent|restart|previous|killed|timeout|time out|did not|no answer|not connected|address list is empty'
fcount "after both restarts" --min-id $((AFTER + 1))
xxl_done
