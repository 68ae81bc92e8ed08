#!/usr/bin/env bash
# self_takeover.sh -- the scheduler frozen (SIGSTOP) past its own leases
# (3 s) but not past its pre-read (5 s), while rows wait on its timer, so
# that it drops every share when it thaws and takes them back itself at
# once, recovering rows it still holds: the timer then holds those rows
# twice (its own entry and the recovery's).
#   1. Triggers acknowledged while the agents are away after a restart
#      (SIGSTOPped agents, SIGKILLed scheduler, a 30 s warmup): they wait
#      on the timer for the agents, unrouted.
#   2. Retries waiting for their interval (8 s) when the freeze comes.
# Guarantees (DESIGN §5): every acknowledged trigger and every retry runs
# exactly once (a job routed ROUND over two agents: a row routed twice
# would run on both); no retry runs before its interval is over; none is
# left unfinished.  XXL_STORE=pg: on PostgreSQL.
F_WARMUP=30000
. "$(dirname "$0")/lib.sh"
faults_setup self_takeover

N=$(pick 20 100)
RETRY_S=8
start_scheduler || exit 1
ctl group add st >/dev/null
fagent s1 st
fagent s2 st
both () { ctl agent list | jq -e '[.agents[] | select(.app == "st" and .connected)] | length == 2' >/dev/null; }
check "agents register" wait_until 10 both
J=$(ctl job add --group st --handler probeIn --route ROUND | jq -r .id)
RJ=$(ctl job add --group st --handler probeIn --route ROUND --param fail --retry 1 \
    --retry-interval "$RETRY_S" | jq -r .id)
check "jobs added" test -n "$J" -a "$J" != null -a -n "$RJ" -a "$RJ" != null

# trigger JOB COUNT: COUNT acknowledged triggers, their logIds in $ACKED
trigger () {
    local i out
    for i in $(seq "$2"); do
        # (3: acknowledged, and its run failed at once: its id counts)
        out=$(ctl job trigger "$1") || [ $? = 3 ] || { say "trigger $1: $out"; continue; }
        printf '%s' "$out" | jq -r '.logIds[]?' | while read -r id; do
            echo "$id $1 $(now_ms)" >> "$ACKED"
        done
    done
}
lines () { grep -c "$1" "$T/scheduler.log"; }
# freeze LABEL: SIGSTOP past the leases, within the pre-read; then the
# scheduler must have lost its shares and taken them back
freeze () {
    local lost taken
    lost=$(lines "share(s) lost (not renewed in time)")
    taken=$(lines "share(s) taken")
    say "$1: SIGSTOP scheduler"
    kill -STOP "$SPID"
    rsleep 3300 4500
    kill -CONT "$SPID"
    say "$1: SIGCONT scheduler"
    check "$1: it dropped its shares and took them back" wait_until 10 bash -c "
        [ \$(grep -c 'share(s) lost (not renewed in time)' '$T/scheduler.log') -gt $lost ] &&
        [ \$(grep -c 'share(s) taken' '$T/scheduler.log') -gt $taken ]"
}

# 1. Held for the agents
say "stopping the agents, then SIGKILL and restart of the scheduler"
kill -STOP "$(apid s1)" "$(apid s2)"
kill_sched KILL
restart_sched
trigger "$J" "$N"
held () { [ "$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = $J AND trigger_code = 0
                    AND executor_address IS NULL")" = "$N" ]; }
check "1: $N triggers acknowledged while the agents are away wait for them" held
freeze "1"
kill -CONT "$(apid s1)" "$(apid s2)"
check "1: agents register again" wait_until 20 both
check "1: every run finishes" wait_quiet 40

# 2. Retries waiting for their interval
trigger "$RJ" "$N"
retries () { [ "$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = $RJ
                       AND trigger_type = 'RETRY'")" = "$N" ]; }
check "2: $N failed runs have their retry waiting" wait_until 20 retries
freeze "2"
check "2: every retry finishes" wait_quiet $((RETRY_S + 40))

# Each retry after its interval: none started before the first failure's
# time plus the interval
FIRST_FAIL=$(sql "SELECT MIN(handle_time) FROM xxl_job_log WHERE job_id = $RJ
                  AND trigger_type != 'RETRY'")
sql "SELECT id FROM xxl_job_log WHERE job_id = $RJ AND trigger_type = 'RETRY'" > "$T/retry_ids"
EARLY=$(awk -v due=$((FIRST_FAIL + RETRY_S * 1000)) 'FNR == NR { retry [$1] = 1; next }
    ($1 in retry) && $5 < due { n++ } END { print n + 0 }' "$T/retry_ids" "$PROBE")
check "2: no retry ran before its ${RETRY_S} s interval ($EARLY early)" test "$EARLY" = 0
check "the scheduler is alive" kill -0 "$SPID"
fcount "scheduler frozen past its own leases" --jobs "$J $RJ"
xxl_done
