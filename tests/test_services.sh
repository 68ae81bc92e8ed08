#!/usr/bin/env bash
# test_services.sh -- the scheduler's background services with short
# intervals: child jobs, cycle refusal, retries with backoff, the lost-run
# monitor, reports, retention and log clear, glue history, SIGTERM.
. "$(dirname "$0")/lib.sh"
XXL_RUN_LEASE=3 xxl_setup   # (the lost-run monitor waits out the agents' run lease)
cat >> "$T/scheduler.cfg" <<CFG
    monitor
        fail_check = 100
        lost_check = 200
        lost_after = 2
        report = 200
    stop_wait = 3000
CFG
start_scheduler || exit 1
start_agent s1 svc-app
check "agent registers" wait_for 10 agent_registered svc-app s1
ctl group add svc-app >/dev/null
finished () { [ "$(log_field "$1" handleCode)" != 0 ] || [ "$(log_field "$1" triggerCode)" = 500 ]; }
glue_job () {
    local f="$T/g-$RANDOM.sh"; printf '%s\n' "$1" > "$f"; shift
    ctl job add --group svc-app --glue-type GLUE_SHELL --glue-source "$f" "$@" | jq -r .id
}

# Child jobs fire with trigger type PARENT after a success
CHILD=$(ctl --get .id job add --group svc-app --handler demoJobHandler --param child)
PARENT=$(ctl --get .id job add --group svc-app --handler demoJobHandler --child "$CHILD")
PL=$(ctl --get '.logIds[0]' job trigger "$PARENT")
check "parent finishes" wait_for 10 finished "$PL"
child_ran () { ctl log list --job "$CHILD" | jq -e '[.logs[] | select(.triggerType == "PARENT" and .handleCode == 200)] | length == 1' >/dev/null; }
check "the child job ran as PARENT" wait_for 10 child_ran
check "the parent's handleMsg names the child" bash -c "
    $CTL --api $API --json log show $PL | jq -r .handleMsg | grep -q 'job $CHILD\\] triggered'"
FAILP=$(glue_job 'exit 1' --child "$CHILD")
FL=$(ctl --get '.logIds[0]' job trigger "$FAILP")
wait_for 10 finished "$FL"
sleep 0.5
check "a failed parent triggers no child" bash -c "
    $CTL --api $API --json log list --job $CHILD | jq -e '[.logs[] | select(.triggerType == \"PARENT\")] | length == 1' >/dev/null"

# A child cycle is refused when saved
A=$(ctl --get .id job add --group svc-app --handler demoJobHandler)
B=$(ctl --get .id job add --group svc-app --handler demoJobHandler --child "$A")
check "a cycle A -> B -> A is refused" bash -c "! $CTL --api $API --json job update $A --child $B > $T/cycle.json"
check "the refusal shows the cycle" grep -q "cycle: $A -> $B -> $A" "$T/cycle.json"
check "a job cannot be its own child" bash -c "! $CTL --api $API --json job update $A --child $A >/dev/null"
check "nothing changed" test "$(ctl --get .childJobId job show "$A")" = ""

# Retries: count - 1 each time, same param, waits growing by the backoff
RJ=$(glue_job 'echo "attempt with $1"; exit 1' --param P7 --retry 2 --retry-interval 1 --retry-backoff 2)
RL=$(ctl --get '.logIds[0]' job trigger "$RJ")
three_rows () { [ "$(ctl log list --job "$RJ" | jq '[.logs[] | select(.handleCode == 500)] | length')" = 3 ]; }
check "two retries after the failure" wait_for 15 three_rows
ctl log list --job "$RJ" > "$T/retries.json"
check "retries are RETRY with count 1 then 0" jq -e '
    [.logs[] | {t: .triggerType, c: .executorFailRetryCount}] | sort_by(-.c)
    == [{t: "MANUAL", c: 2}, {t: "RETRY", c: 1}, {t: "RETRY", c: 0}]' "$T/retries.json"
check "retries keep the param" jq -e '[.logs[].executorParam] | unique == ["P7"]' "$T/retries.json"
check "first retry waits >= 1 s, the second >= 2 s (backoff 2)" jq -e '
    [.logs[]] | sort_by(.id) as $r
    | ($r[1].triggerTime - $r[0].handleTime) >= 990
    and ($r[2].triggerTime - $r[1].handleTime) >= 1990' "$T/retries.json"
check "the failed row says it was retried" bash -c "
    $CTL --api $API --json log show $RL | jq -r .triggerMsg | grep -q 'Fail retry'"
check "no alarm target: alarmStatus 1 (none needed)" bash -c "
    sleep 0.5; $CTL --api $API --json log list --job $RJ | jq -e '[.logs[].alarmStatus] | all(. == 1)' >/dev/null"

# Lost-run monitor: the agent dies during a run and does not come back
start_agent s2 lost-app
ctl group add lost-app >/dev/null
check "second agent registers" wait_for 10 agent_registered lost-app s2
LJ=$(ctl job add --group lost-app --glue-type GLUE_SHELL --glue-source <(echo 'sleep 20.0517') | jq -r .id)
LL=$(ctl --get '.logIds[0]' job trigger "$LJ")
wait_for 5 field_is "$LL" triggerCode 200
kill -KILL "$APID_s2"
check "the lost run is marked failed" wait_for 20 field_is "$LL" handleCode 500
check "with the reason" bash -c "$CTL --api $API --json log show $LL | jq -r .handleMsg | grep -q 'lost'"
pkill -f 'sleep 20[.]0517' 2>/dev/null      # (its run, orphaned by the kill)

# Reports: today's row counts successes and failures
check "report counts today's runs" wait_for 5 bash -c "
    $CTL --api $API --json report | jq -e '.days[0].sucCount >= 2 and .days[0].failCount >= 4 and .jobCount >= 6' >/dev/null"
check "report prints a table" bash -c "$CTL --api $API report | grep -q 'success rate'"

# GLUE history: each change kept with its remark; agents run the new source
GJ=$(glue_job 'echo v1')
for v in 2 3; do
    printf 'echo v%s\n' "$v" > "$T/v$v.sh"
    ctl job update "$GJ" --glue-source "$T/v$v.sh" >/dev/null
done
check "glue history keeps the three versions, newest first" bash -c "
    $CTL --api $API --json glue history $GJ | jq -e '[.glues[].version] == [3, 2, 1]' >/dev/null &&
    for v in 1 2 3; do $CTL --api $API --json glue show $GJ --version \$v | jq -e --arg s \"echo v\$v\" '.glueSource == \$s + \"\\n\"' >/dev/null || exit 1; done"
GL=$(ctl --get '.logIds[0]' job trigger "$GJ")
wait_for 10 finished "$GL"
check "the agent runs the newest source" bash -c "$CTL --api $API --json log cat $GL | jq -r .logContent | grep -qx v3"

# log clear: keep the last N, then all; running rows are never removed
SJ=$(glue_job 'sleep 4')
SL=$(ctl --get '.logIds[0]' job trigger "$SJ")
wait_for 5 field_is "$SL" triggerCode 200
check "log clear --keep 3" ctl log clear --keep 3
check "three newest rows (and the running one) remain" test "$(ctl log list --limit 1000 | jq '.logs | length')" -le 4
check "log clear --all" ctl log clear --all
check "only the running row remains" test "$(ctl log list --limit 1000 | jq -r '[.logs[].id] | join(",")')" = "$SL"
check "log clear needs one mode" bash -c "! $CTL --api $API log clear >/dev/null 2>&1"
# A clear of many rows goes a batch a turn (2,000) and answers once done:
# 5,000 finished rows of one job (written behind the scheduler's back)
BJ=$(ctl --get .id job add --group svc-app --handler demoJobHandler)
BG=$(ctl --get .jobGroup job show "$BJ")
xxl_sql "INSERT INTO xxl_job_log (job_group, job_id, executor_handler, trigger_time, trigger_code,
           handle_code, trigger_type)
         WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 5000)
         SELECT $BG, $BJ, 'demoJobHandler', 1000 + n, 200, 200, 'MANUAL' FROM s" >/dev/null
check "5,000 rows of one job" test "$(xxl_sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = $BJ")" = 5000
check "log clear --job --all of them: deleted 5000" \
    test "$(ctl log clear --job "$BJ" --all | jq .deleted)" = 5000
check "... none is left" test "$(xxl_sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = $BJ")" = 0
check "... the running row of another job stays" test "$(log_field "$SL" id)" = "$SL"
# JOB_RM of a job with 4,501 rows (one still running): the job at once,
# its rows a batch a turn, the reply with the count once all are gone
RJ=$(ctl --get .id job add --group svc-app --handler demoJobHandler)
xxl_sql "INSERT INTO xxl_job_log (job_group, job_id, executor_handler, trigger_time, trigger_code,
           handle_code, trigger_type)
         WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 4501)
         SELECT $BG, $RJ, 'demoJobHandler', 1000 + n, 200, CASE WHEN n = 4501 THEN 0 ELSE 200 END,
                'MANUAL' FROM s" >/dev/null
check "job rm of a job with 4,501 rows (one running): deletedLogs 4501" \
    test "$(ctl job rm "$RJ" | jq -c '[.id, .deletedLogs]')" = "[$RJ,4501]"
check "... no row of it is left" test "$(xxl_sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = $RJ")" = 0
# ... with --force, the reply that comes after the batches carries the
# workflows' lists too (none here: [])
FJ=$(ctl --get .id job add --group svc-app --handler demoJobHandler)
xxl_sql "INSERT INTO xxl_job_log (job_group, job_id, executor_handler, trigger_time, trigger_code,
           handle_code, trigger_type)
         WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 2500)
         SELECT $BG, $FJ, 'demoJobHandler', 1000 + n, 200, 200, 'MANUAL' FROM s" >/dev/null
check "job rm --force of a job with 2,500 rows: deletedLogs and both workflow lists" \
    test "$(ctl job rm "$FJ" --force | jq -c '[.deletedLogs, .workflowsChanged, .workflowsRemoved]')" = "[2500,[],[]]"
check "... nor the job" bash -c "! '$CTL' --api '$API' --json job show $RJ >/dev/null 2>&1"
check "... the audit records the removal once" \
    test "$(ctl audit list | jq --argjson j "$RJ" '[.audit[] | select(.type == "JOB_RM" and .target == $j and .code == 200)] | length')" = 1
check "... the audit records it once, with its job" \
    test "$(ctl audit list | jq --argjson j "$BJ" '[.audit[] | select(.type == "LOG_CLEAR" and .target == $j and .code == 200)] | length')" = 1

# A LOG_CLEAR cut short by a stop (400,000 rows: 200 turns) is answered,
# 503 with what it deleted; the rest stay, and the same clear after the
# restart deletes them
CJ=$(ctl --get .id job add --group svc-app --handler demoJobHandler)
if [ "${XXL_STORE:-sqlite}" = pg ]; then
    # (the column's default: a block of the log ids' sequence per row,
    # which is cheap; the ids are the store's, never a scheduler's)
    xxl_sql "INSERT INTO xxl_job_log (job_group, job_id, executor_handler, trigger_time,
                                      trigger_code, handle_code, trigger_type)
             SELECT $BG, $CJ, 'demoJobHandler', 1000 + n, 200, 200, 'MANUAL'
             FROM generate_series (1, 400000) AS n" >/dev/null
else
    xxl_sql "INSERT INTO xxl_job_log (job_group, job_id, executor_handler, trigger_time, trigger_code,
               handle_code, trigger_type)
             WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 400000)
             SELECT $BG, $CJ, 'demoJobHandler', 1000 + n, 200, 200, 'MANUAL' FROM s" >/dev/null
fi
cj_rows () { xxl_sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = $CJ"; }
"$CTL" --api "$API" --json log clear --job "$CJ" --all > "$T/cut.out" 2>&1 &
CUT_PID=$!
begun () { [ "$(cj_rows)" -lt 400000 ]; }
check "a clear of 400,000 rows begins" wait_for 30 begun
kill -TERM "$SPID"; wait "$SPID"
wait "$CUT_PID"
CUT_RC=$?
LEFT=$(cj_rows)
check "the clear cut short by the stop is answered 503, with what it deleted" \
    bash -c "[ $CUT_RC != 0 ] && grep -q 'stopped while clearing: [0-9]* row(s) deleted, the rest remain' '$T/cut.out'"
check "... as many as went ($(grep -o '[0-9]* row(s)' "$T/cut.out"), $LEFT left)" \
    test "$(grep -o '[0-9]* row(s)' "$T/cut.out" | cut -d' ' -f1)" = "$((400000 - LEFT))"
check "... the rest of its rows remain" test "$LEFT" -gt 0
start_scheduler "$API" "$AGENTS"
check "the same clear after the restart deletes the rest" \
    test "$("$CTL" --api "$API" --json --timeout 300000 log clear --job "$CJ" --all | jq .deleted)" = "$LEFT"
check "the audit records the cut clear with 503, then the whole one with 200" \
    test "$(ctl audit list | jq -c --argjson j "$CJ" '[.audit[] | select(.type == "LOG_CLEAR" and .target == $j) | .code] | sort')" = "[200,503]"

# SIGTERM: nothing accepted is lost
QJ=$(ctl --get .id job add --group svc-app --handler demoJobHandler)
IDS=""
for _ in $(seq 40); do IDS="$IDS $(ctl --get '.logIds[0]' job trigger "$QJ")"; done
kill -TERM "$SPID"; wait "$SPID"
RC=$?
check "scheduler exits 0 on SIGTERM (it exited $RC)" test "$RC" -eq 0
start_scheduler "$API" "$AGENTS"
all_finished () { for l in $IDS; do [ "$(log_field "$l" handleCode)" = 200 ] || return 1; done; }
check "every trigger accepted before SIGTERM ran and was recorded" wait_for 20 all_finished
xxl_done
