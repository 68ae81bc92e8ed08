#!/usr/bin/env bash
# accept_kill.sh -- the scheduler SIGKILLed while more than 1,000 of its
# agent's acceptances wait to be written, then restarted.  While more than
# 1,000 accepted runs wait for their results, an acceptance is written
# alone only 5 s after it came (docs/design.md, *Dispatch*), so a kill in
# those 5 s leaves over 1,000 rows that an agent took and that still read
# triggerCode 0: recovery sends each again, and the agent, which holds
# it, answers "already accepted".  1,100 jobs (imported from an XXL-JOB
# schema file, one command) fire at the same second of a minute, each run
# sleeping 6 s; the kill comes once over 1,000 of those runs have started
# on the agent while their rows still read triggerCode 0.
# Guarantees: each planned run ran exactly once; none is left unfinished;
# none failed.
. "$(dirname "$0")/lib.sh"
F_LOST_AFTER=30 faults_setup accept_kill
N=1100

start_scheduler || exit 1
fagent w1 ak-app
check "agent registers" wait_until 10 agent_registered ak-app w1

# The jobs fire at second S of each minute, S at least 20 s away (the
# import and the planner's pre-read come first; an import slower than
# that, on a loaded machine, meets the next minute's: the wait below
# covers it); the scenario ends before the fire after the one it uses
S=$(( ($(date +%s) + 25) % 60 ))
{
    echo "INSERT INTO \`xxl_job_group\`(\`id\`, \`app_name\`, \`title\`, \`address_type\`, \`address_list\`, \`update_time\`) VALUES (1, 'ak-app', 'ak', 0, NULL, now());"
    for i in $(seq "$N"); do
        echo "INSERT INTO \`xxl_job_info\`(\`id\`, \`job_group\`, \`job_desc\`, \`add_time\`, \`update_time\`, \`author\`, \`alarm_email\`, \`schedule_type\`, \`schedule_conf\`, \`misfire_strategy\`, \`executor_route_strategy\`, \`executor_handler\`, \`executor_param\`, \`executor_block_strategy\`, \`executor_timeout\`, \`executor_fail_retry_count\`, \`glue_type\`, \`glue_source\`, \`glue_remark\`, \`glue_updatetime\`, \`child_jobid\`, \`trigger_status\`) VALUES ($i, 1, 'ak $i', now(), now(), 'faults', '', 'CRON', '$S * * * * ?', 'DO_NOTHING', 'FIRST', 'probeIn', 'sleep=6000', 'SERIAL_EXECUTION', 0, 0, 'BEAN', '', '', now(), '', 1);"
    done
    echo "commit;"
} > "$T/jobs.sql"
"$CTL" --api "$API" import xxl-job "$T/jobs.sql" --start > "$T/import.out" 2>&1
check "$N jobs imported, started, firing at second $S" test $? = 0
JOBS=$(sql "SELECT COUNT(*) FROM xxl_job_info WHERE trigger_status = 1")
check "$N jobs running ($JOBS)" test "$JOBS" = "$N"

# Runs started on the agent whose rows still read triggerCode 0: the
# probe's lines against the store
taken_unwritten () {
    local ids
    ids=$(awk '{ print $1 }' "$PROBE" | sort -u | paste -sd, -)
    [ -n "$ids" ] || { echo 0; return; }
    sql "SELECT COUNT(*) FROM xxl_job_log WHERE trigger_code = 0 AND id IN ($ids)"
}
over_1000 () { [ "$(taken_unwritten)" -gt 1000 ]; }
check "over 1,000 runs started with their acceptance not yet written" wait_until 90 over_1000
TAKEN=$(taken_unwritten)
STARTED=$(wc -l < "$PROBE")
kill_sched KILL
say "scheduler SIGKILLed: $STARTED runs started, $TAKEN of them still triggerCode 0 in the store"
restart_sched
# (recovery runs once the restarted scheduler holds its shares; rows
# within the pre-read window are sent again, older ones asked about: on a
# loaded machine the restart can take longer than the window)
resent () { grep -oE "[0-9]+ (to re-send to their agents when back|past the window to ask their agents about)" \
                 "$T/scheduler.log" | awk '{ n += $1 } END { print n + 0 }'; }
resent_over_1000 () { [ "$(resent)" -gt 1000 ]; }
wait_until 20 resent_over_1000
check "recovery sends the rows again or asks the agent about them ($(resent), over 1,000)" \
    resent_over_1000
check "all runs finish" wait_quiet 60
check "the scheduler is alive" kill -0 "$SPID"
ROWS=$(sql "SELECT COUNT(*) FROM xxl_job_log")
BAD=$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE trigger_code NOT IN (0, 200) OR handle_code NOT IN (0, 200)")
check "one row a job ($ROWS), none failed ($BAD)" test "$ROWS" = "$N" -a "$BAD" = 0
fcount "runs taken while their acceptance waited, the scheduler killed"
xxl_done
