#!/usr/bin/env bash
# test_restart.sh -- what a scheduler restart must not lose or break:
# triggers acknowledged while agents reconnect wait for them and run, a
# SHARDING_BROADCAST cron fire is one row per agent (before and after the
# restart), and a started cron job whose group has no live agent, while
# another group's agent is connected, never takes the scheduler down.
. "$(dirname "$0")/lib.sh"
xxl_setup
# (the warm-up ends once the agents are back: 30 s only bounds it; 8 s was
# shorter than the 11 triggers made while they are away in a loaded run,
# and the last ones failed "the address list is empty")
cat >> "$T/scheduler.cfg" <<CFG
    planner
        warmup = 30000
CFG
start_scheduler || exit 1
ctl group add rs-app >/dev/null
ctl group add rs-empty >/dev/null
for a in r1 r2 r3; do start_agent "$a" rs-app; done
for a in r1 r2 r3; do wait_for 10 agent_registered rs-app "$a"; done

# Every route strategy, a 1-second cron job in a group with no agent
for r in FIRST LAST ROUND RANDOM CONSISTENT_HASH LEAST_FREQUENTLY_USED LEAST_RECENTLY_USED \
         FAILOVER BUSYOVER SHARDING_BROADCAST; do
    ctl job add --group rs-empty --handler demoJobHandler --cron '* * * * * ?' --route "$r" --start >/dev/null
done
B=$(ctl --get .id job add --group rs-app --handler demoJobHandler --cron '* * * * * ?' \
    --route SHARDING_BROADCAST --start)
P=$(ctl --get .id job add --group rs-app --handler demoJobHandler)
Q=$(ctl --get .id job add --group rs-app --handler demoJobHandler --route SHARDING_BROADCAST)

# rows_per_second JOB: "scheduleTime count" of the job's planned rows
rows_per_second () {
    ctl log list --job "$1" --limit 10000 \
        | jq -r '[.logs[] | select(.scheduleTime != null)] | group_by(.scheduleTime)[]
                 | "\(.[0].scheduleTime) \(length) \([.[] | .executorShardingParam] | sort | join(","))"'
}
fired_thrice () { [ "$(rows_per_second "$B" | awk '$2 == 3' | wc -l)" -ge "$1" ]; }
check "a cron SHARDING_BROADCAST fire makes one row per agent" wait_for 15 fired_thrice 3
first_shards () { [ "$(rows_per_second "$B" | awk '$2 == 3' | head -1 | cut -d' ' -f3)" = 0/3,1/3,2/3 ]; }
check "... the shards are 0/3, 1/3, 2/3" first_shards
empty_failed () {
    [ "$(ctl log list --limit 10000 | jq '[.logs[] | select(.triggerCode == 500
        and (.triggerMsg | test("address list is empty")))] | length')" -ge 20 ]
}
check "cron jobs of a group with no agent fail their triggers (every strategy)" wait_for 15 empty_failed
check "... and the scheduler lives" kill -0 "$SPID"

# Restart with the agents frozen, so that they reconnect only later
for a in r1 r2 r3; do eval "kill -STOP \$APID_$a"; done
kill -KILL "$SPID"; wait "$SPID" 2>/dev/null
check "the scheduler starts again on its endpoints" start_scheduler "$API" "$AGENTS" || { xxl_done; exit 1; }
check "the scheduler restarts with the empty group's jobs started" kill -0 "$SPID"
# ... and stops again before they are back, once their beats are older
# than the dead time (its registry check has run since): the next start
# must still wait for them (their registry rows stay through a warm-up)
beats_old () {
    [ "$(xxl_sql "SELECT COUNT(*) FROM xxl_job_registry
         WHERE update_time > $(( $(date +%s) * 1000 - 5000 ))")" = 0 ]
}
check "the agents' last beats pass the dead time while they are frozen" wait_for 15 beats_old
kill -KILL "$SPID"; wait "$SPID" 2>/dev/null
check "the scheduler starts a third time, its agents still frozen" \
    start_scheduler "$API" "$AGENTS" || { xxl_done; exit 1; }
check "... and waits for the agents of the run before the last (3 awaited)" \
    test "$(xxl_sql "SELECT COUNT(*) FROM xxl_job_registry")" = 3
ids=""
for _ in $(seq 10); do ids="$ids $(ctl --get '.logIds[0]' job trigger "$P")"; done
qids=$(ctl job trigger "$Q" | jq -r '.logIds | join(" ")')
check "triggers made while agents reconnect are acknowledged" bash -c "[ \$(echo $ids $qids | wc -w) -eq 11 ]"
for a in r1 r2 r3; do eval "kill -CONT \$APID_$a"; done
all_ok () { for l in $ids; do field_is "$l" handleCode 200 || return 1; done; }
check "... and run once the agents are back (not failed: empty address list)" wait_for 20 all_ok
q_rows () { [ "$(ctl log list --job "$Q" | jq '[.logs[] | select(.handleCode == 200)] | length')" = 3 ]; }
check "... a broadcast one runs once per agent" wait_for 20 q_rows
q_shards () { [ "$(ctl log list --job "$Q" | jq -r '[.logs[].executorShardingParam] | sort | join(",")')" = 0/3,1/3,2/3 ]; }
check "... its rows are 0/3, 1/3, 2/3" q_shards
restart_ms=$(($(date +%s%3N) + 1000))
# (a row planned while agents reconnect is made one per agent when it
# fires: only seconds past are counted)
past_restart () { rows_per_second "$B" | awk -v t="$restart_ms" -v n="$(($(date +%s%3N) - 1500))" '$1 > t && $1 < n'; }
after_restart () { [ "$(past_restart | awk '$2 == 3' | wc -l)" -ge 3 ]; }
check "cron broadcast fires after the restart are one row per agent" wait_for 20 after_restart
not_three () { past_restart | awk '$2 != 3'; }
check "no planned second after the restart has another count of rows" test -z "$(not_three)"

# An agent stopping cleanly (SIGTERM: it unregisters) while cron jobs fire
# every second: what was planned for it goes to the other agent, nothing
# fails for want of it
ctl group add st-app >/dev/null
start_agent s1 st-app
start_agent s2 st-app
wait_for 10 agent_registered st-app s1
wait_for 10 agent_registered st-app s2
jobs=""
for _ in $(seq 40); do
    jobs="$jobs $(ctl --get .id job add --group st-app --handler demoJobHandler --cron '* * * * * ?' --route ROUND --start)"
done
on_s1 () { [ "$(ctl log list --limit 10000 | jq '[.logs[] | select(.executorAddress == "s1" and .handleCode == 200)] | length')" -ge 40 ]; }
wait_for 15 on_s1
kill -TERM "$APID_s1"
stopped_at=$(date +%s%3N)
wait_for 10 bash -c "! kill -0 $APID_s1"
later_on_s2 () {
    [ "$(ctl log list --limit 10000 | jq --argjson t "$stopped_at" \
        '[.logs[] | select(.executorAddress == "s2" and .scheduleTime > $t + 2000 and .handleCode == 200)] | length')" -ge 80 ]
}
check "after one agent stops, its share of the fires goes to the other" wait_for 15 later_on_s2
for j in $jobs; do ctl job stop "$j" >/dev/null; done
first_job=${jobs# }; first_job=${first_job%% *}
failed_rows () {
    ctl log list --limit 10000 | jq --argjson t "$stopped_at" --argjson j "$first_job" \
        '[.logs[] | select(.jobId >= $j and .scheduleTime != null and .scheduleTime > $t
                           and (.triggerCode == 500 or .handleCode == 500))] | length'
}
check "no fire planned after the stop failed (none went to the stopped agent)" test "$(failed_rows)" = 0
check "the scheduler lives" kill -0 "$SPID"

# A second SIGTERM while the scheduler waits for an agent's answer
# (scheduler/stop_wait, 3 s): it still ends its stop and exits 0 (it used
# to exit under the engine, which then failed czmq's assertion)
kill -STOP "$APID_s2"
LF=$(ctl --get '.logIds[0]' job trigger "$first_job" --address s2)
check "a run is triggered on the frozen agent" test -n "$LF" -a "$LF" != null
kill -TERM "$SPID"
check "the scheduler waits for the frozen agent's answer" \
    wait_for 5 grep -q 'server: stopping; 1 request(s) to agents in flight' "$T/scheduler.log"
kill -TERM "$SPID"
wait "$SPID"
status=$?
PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$SPID" | tr '\n' ' ')
check "after a second SIGTERM it exits 0 (status $status)" test "$status" = 0
check "... with no assertion" bash -c "! grep -q 'Assertion' '$T/scheduler.log'"
check "... once its engine had stopped" bash -c \
    "tail -1 '$T/scheduler.log' | grep -q 'xxl-scheduler stopped'"
kill -CONT "$APID_s2"
xxl_done
