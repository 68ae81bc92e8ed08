#!/usr/bin/env bash
# sweep_step.sh -- rows a failed commit left behind go again, also when the
# scheduler's wall clock steps back before the sweep looks for them.
#
# A run of the probe handler that sleeps 60 s is sent and accepted; the
# turn that writes its acceptance fails (an SQLite trigger on xxl_job_log
# rolls that transaction back, RAISE(ROLLBACK)), so its row stays unsent
# (triggerCode 0) and nothing in the scheduler's memory tracks it any more.
# The trigger is dropped once the commit failed.  The sweep (twice
# run_timeout and 1 s after the failure) sends the row to its agent again,
# whose answer writes the acceptance: triggerCode 200 while the handler
# still sleeps, and the run starts once.  Round 1 has no step; round 2
# steps the scheduler's clock back 60 s between the failure and the sweep
# (the sweep used to look back from the wall clock: it found nothing, and
# the row stayed unsent until the run's own result, or for good had the
# agent died).  SQLite only: the refusal is an SQLite trigger.
. "$(dirname "$0")/lib.sh"
if [ "${XXL_STORE:-sqlite}" != sqlite ]; then
    echo "# skipped: the refused commit is an SQLite trigger"
    exit 77
fi
. "$(dirname "$0")/faketime.sh"
faketime_setup sweep_step
setclock sched 0 >/dev/null; setclock a1 0 >/dev/null

XXL_CLOCK=sched start_scheduler || exit 1
XXL_CLOCK=a1 fagent a1 sw
check "agent registers" wait_until 10 agent_registered sw a1
ctl group add sw >/dev/null
J=$(ctl --get .id job add --group sw --handler probe --param "sleep=60000")
check "a job of the probe handler" test -n "$J"

accepted () { [ "$(sql "SELECT trigger_code FROM xxl_job_log WHERE id = $1")" = 200 ]; }
probed () { awk -v id="$1" '$1 == id' "$PROBE" | wc -l; }
started () { [ "$(probed "$1")" -ge 1 ]; }
ended () { [ "$(sql "SELECT handle_code FROM xxl_job_log WHERE id = $1")" != 0 ]; }
failed_commits () { grep -c "commit failed: .*test: acceptance refused" "$T/scheduler.log"; }
swept () { grep -c "trigger(s) a failed commit had left behind go again" "$T/scheduler.log"; }

# round STEP_S: a run whose acceptance's commit fails, the clock stepped
# STEP_S s back after the failure (0: none); its row accepted by the sweep
round () {
    local step="$1" fails swept_before id
    fails=$(failed_commits); swept_before=$(swept)
    xxl_sql "CREATE TRIGGER xxl_test_refuse_accept BEFORE UPDATE OF trigger_code ON xxl_job_log
         WHEN OLD.trigger_code = 0 AND NEW.trigger_code = 200 AND NEW.job_id = $J
         BEGIN SELECT RAISE (ROLLBACK, 'test: acceptance refused'); END;" >/dev/null
    id=$(ctl --get '.logIds[0]' job trigger "$J")
    check "step ${step} s: the trigger is acknowledged ($id)" test -n "$id"
    more_fails () { [ "$(failed_commits)" -gt "$fails" ]; }
    check "step ${step} s: the commit writing its acceptance fails" wait_until 10 more_fails
    xxl_sql "DROP TRIGGER xxl_test_refuse_accept" >/dev/null
    check "step ${step} s: the run started (its probe line)" wait_until 10 started "$id"
    check "step ${step} s: its row is left unsent (triggerCode 0)" \
        test "$(sql "SELECT trigger_code FROM xxl_job_log WHERE id = $id")" = 0
    [ "$step" -gt 0 ] && setclock sched "-$step"
    local t=$(now_ms)
    # (the sweep: 2 x run_timeout (3 s) + 1 s after the failure; 15 s)
    local f0=$FAILED
    check "step ${step} s: the sweep sends the row again and its acceptance is written" \
        wait_until 15 accepted "$id"
    [ "$FAILED" = "$f0" ] && say "$(elapsed): accepted $(( $(now_ms) - t )) ms after the clock step (or its place)"
    more_swept () { [ "$(swept)" -gt "$swept_before" ]; }
    check "step ${step} s: the scheduler says it swept" more_swept
    check "step ${step} s: the run started once" test "$(probed "$id")" = 1
    ctl log kill "$id" >/dev/null
    check "step ${step} s: the run ends once killed" wait_until 10 ended "$id"
}

round 0
round 60
setclock sched 0
check "no logId ran twice" test "$(awk '{ print $1 }' "$PROBE" | sort | uniq -d | wc -l)" = 0
check "the scheduler is alive" kill -0 "$SPID"
check "the agent is alive" kill -0 "$(apid a1)"
xxl_done
