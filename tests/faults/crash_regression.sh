#!/usr/bin/env bash
# crash_regression.sh -- everyday states that once crashed the scheduler: a
# started one-second cron job in a group with NO live agent while an agent
# of ANOTHER group is connected, for every route strategy; then the same
# after a SIGKILL and restart, and after a SIGTERM and restart; and a
# group's only agent stopping (SIGTERM, then SIGKILL of its restart) while
# its one-second crons of every strategy fire.  Manual triggers of the
# agentless jobs too.  Last, the agentless group's agent arrives: its crons
# of every strategy and its manual triggers run there.
# Guarantees: bad input and everyday states never crash a daemon; the rows
# of a group with no agent fail with a reason (none left unfinished).
. "$(dirname "$0")/lib.sh"
faults_setup crash_regression

STRATEGIES="FIRST LAST ROUND RANDOM CONSISTENT_HASH LEAST_FREQUENTLY_USED LEAST_RECENTLY_USED FAILOVER BUSYOVER SHARDING_BROADCAST"
start_scheduler || exit 1
ctl group add other >/dev/null
ctl group add empty >/dev/null
ctl group add solo >/dev/null
fagent o1 other
fagent s1 solo
check "agents register" wait_until 10 agent_registered other o1
wait_until 10 agent_registered solo s1
OJ=$(ctl --get .id job add --group other --handler probeIn --cron '* * * * * ?' --param sleep=10 --start)
alive () { kill -0 "$SPID" 2>/dev/null && ctl job show "$OJ" >/dev/null; }
EMPTY="" SOLO=""
for s in $STRATEGIES; do
    EMPTY="$EMPTY $(ctl --get .id job add --group empty --handler probeIn --route "$s" --cron '* * * * * ?' --start)"
    SOLO="$SOLO $(ctl --get .id job add --group solo --handler probeIn --route "$s" --cron '* * * * * ?' --param sleep=10 --start)"
done
check "20 jobs added and started" test "$(echo $EMPTY $SOLO | wc -w)" = 20
stays_alive () {    # stays_alive SECONDS WHAT
    local end=$(( $(now_ms) + $1 * 1000 ))
    while [ "$(now_ms)" -lt "$end" ]; do
        alive || { echo "scheduler died: $2"; return 1; }
        sleep 0.2
    done
}
check "the scheduler stays alive with crons of every strategy in an agentless group" stays_alive 4 "agentless crons"
for j in $EMPTY; do ctl job trigger "$j" >/dev/null 2>&1; done
check "... and through manual triggers of each" stays_alive 2 "manual triggers"
kill_sched KILL
check "restarts after SIGKILL" restart_sched
check "the scheduler stays alive after a SIGKILL restart" stays_alive 4 "after SIGKILL"
kill_sched TERM
check "restarts after SIGTERM" restart_sched
check "the scheduler stays alive after a SIGTERM restart" stays_alive 4 "after SIGTERM"
# The only agent of a group stops, cleanly, then dies after a restart
kill_agent s1 TERM
check "the scheduler stays alive when a group's only agent stops" stays_alive $((3 + 3)) "solo agent stopped"
fagent s1 solo
wait_until 10 agent_registered solo s1
rsleep 500 2000
kill_agent s1 KILL
check "the scheduler stays alive when a group's only agent is killed" stays_alive $((3 + 3)) "solo agent killed"
kill_sched KILL
check "restarts with the group's agent gone" restart_sched
check "the scheduler stays alive after that restart" stays_alive 4 "restart, solo gone"
# The agentless group's agent arrives: the crons of every strategy
# (SHARDING_BROADCAST too) and manual triggers run there from then on
ARRIVED=$(now_ms)
fagent e1 empty
check "the agentless group's agent arrives" wait_until 10 agent_registered empty e1
# ran_since JOB MS: a row of JOB triggered after MS ended 200 on e1
ran_since () {
    [ "$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = $1 AND trigger_time > $2
              AND handle_code = 200 AND executor_address = 'e1'")" -ge 1 ]
}
all_ran () { for j in $EMPTY; do ran_since "$j" "$ARRIVED" || return 1; done; }
check "... every strategy's cron runs on it (SHARDING_BROADCAST as shard 0/1)" wait_until 15 all_ran
for j in $EMPTY; do ran_since "$j" "$ARRIVED" || say "no run on e1 of job $j ($(ctl --get .executorRouteStrategy job show "$j"))"; done
MANUAL_AT=$(now_ms)
for j in $EMPTY; do ctl job trigger "$j" | jq -r ".logIds[]" | sed "s/\$/ $j/" >> "$T/acked-empty"; done
manual_ran () { [ "$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id IN ($(echo $EMPTY | tr ' ' ,))
                       AND trigger_type = 'MANUAL' AND trigger_time >= $MANUAL_AT AND handle_code = 200")" -ge 10 ]; }
check "... and its manual triggers" wait_until 15 manual_ran
check "the scheduler stays alive once the agent arrived" stays_alive 2 "agent arrived"
for j in $EMPTY $SOLO $OJ; do ctl job stop "$j" >/dev/null; done
check "every row ends (the agentless ones failed with a reason)" wait_quiet 30
fcount "crash regression, the other group's runs" --jobs "$OJ" --cron "$OJ"
# (BUSYOVER fails a trigger when its only agent is busy with the job:
# "idle beat check: … job thread is running … no address answered", XXL-JOB's
# rule; a load that delays a run past the next second makes it so)
fcount "crash regression, the solo group's runs" --jobs "$SOLO" \
    --excuse 'lost|agent|address list is empty|restart|previous|killed|timeout|did not|no answer|not connected|no address answered'
check "agentless rows failed saying why" test "$(sql "SELECT COUNT(*) FROM xxl_job_log
    WHERE job_id IN ($(echo $EMPTY | tr ' ' ,)) AND trigger_time < $ARRIVED
    AND (trigger_code != 500 OR trigger_msg IS NULL OR trigger_msg = '')")" = 0
ACKED="$T/acked-empty" fcount "crash regression, the agentless group's runs once its agent came" --jobs "$EMPTY" \
    --excuse 'address list is empty|not connected|no address answered' 
xxl_done
