#!/usr/bin/env bash
# slots_step.sh -- a maxRunning job's triggers that wait for a slot are
# not held by a step back of the scheduler's wall clock.
#
# Waiting rows were taken in the order of their times up to "now": a row
# triggered before a step back of H carries a time up to H after the
# stepped clock, and waited that long although its slot had come
# (docs/faults.md, Known gaps, 2 December).  Now a trigger's row (stamped
# when it was made) is due at once; a planned row waits for its planned
# time and a retry's for its due time, on the wall clock as it is (a
# planned instant stays where the wall clock puts it; docs/design.md, the
# time model).
#
# Each round: a job with maxRunning 1 (the probe in-process, runs of
# 0.8 s), TRIGGERS manual triggers at once (one runs, the others wait in
# the store), the scheduler's clock stepped back STEP s (seeded, 30-60 s)
# right after them, then 2 more triggers after the step, which queue
# with the first ones.  Rounds: 2 (long: 5); the clock set right between
# rounds.
#
# Guarantees: every acknowledged trigger runs exactly once, none twice,
# none unfinished (count.sh); never two runs of a job at once (the probe's
# start and end times); a round's triggers all end well before the step's
# size has passed (each waits for the runs ahead of it, 0.8 s each: the
# round's runs take TRIGGERS + 2 slots, under 20 s, while a row held by
# the step would wait STEP s; before the fix, 2 of 2 rounds failed so).  Not checked: the order across the step
# (rows are taken by their times, and one made after a step back carries
# an earlier time than one made before it, so it may go first).  SQLite
# and PostgreSQL.
#
# Last, planned fires: a one-second cron of maxRunning 1 whose runs take
# 1.5 s, 4 of its fires due and waiting, the clock stepped back 30-60 s.
# The fires that had come due go on as the slot frees (3 start within
# 12 s; before, none for the step's length: a pass took rows due by the
# stepped clock only), and the job's stop right after deletes none of the
# runs already sent (before, the stop took the row just sent and not yet
# accepted, its time now ahead of the clock, for a fire planned ahead and
# deleted it: a run with no row).  Then the same for a cron's fires sent
# in a batch RUN to an agent frozen so that none is answered.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/faketime.sh"
faketime_setup slots_step
faketime_pair s1 ss
J=$(ctl --get .id job add --group ss --handler probeIn --max-running 1 --param sleep=800)
check "a job of maxRunning 1" test -n "$J"

TRIGGERS=$(pick 4 6)
ROUNDS=$(pick 2 5)
trig () {       # trig: one trigger of J, its logId recorded as acknowledged
    local id; id=$(ctl --get '.logIds[0]' job trigger "$J")
    [ -n "$id" ] && [ "$id" != null ] && echo "$id $J $(now_ms)" >> "$ACKED"
    echo "$id"
}
ended () { [ "$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE id IN ($1) AND handle_code != 0")" = "$2" ]; }

for r in $(seq "$ROUNDS"); do
    rnd 31; STEP=$((30 + R))
    BEFORE=""
    for _ in $(seq "$TRIGGERS"); do BEFORE="$BEFORE${BEFORE:+,}$(trig)"; done
    check "round $r: $TRIGGERS triggers acknowledged ($BEFORE)" \
        test "$(echo "$BEFORE" | tr ',' '\n' | grep -c '^[0-9][0-9]*$')" = "$TRIGGERS"
    setclock sched "-$STEP"
    T_STEP=$(now_ms)
    AFTER="$(trig),$(trig)"
    # (the round's runs are TRIGGERS + 2 of 0.8 s one after the other:
    # under 20 s; held by the step, the rows made before it would wait
    # STEP s)
    check "round $r: its $((TRIGGERS + 2)) triggers all end within 20 s of the step back of $STEP s" \
        wait_until 20 ended "$BEFORE,$AFTER" $((TRIGGERS + 2))
    say "$(elapsed): round $r ended $(( $(now_ms) - T_STEP )) ms after the step"
    setclock sched 0 1
done

# Planned fires waiting for the slot: a one-second cron of maxRunning 1
# whose runs take 1.5 s, so its fires come due and wait (SERIAL_EXECUTION);
# then the clock stepped back STEP s.  The fires that had come due run one
# after the other as the slot frees (a pass remembers the rows it found
# due), not once the stepped clock reaches their times again, STEP s later
# (before: no run started for STEP s)
JF=$(ctl --get .id job add --group ss --handler probeIn --max-running 1 --param sleep=1500 \
    --cron '* * * * * ?' --start)
check "planned: a one-second cron of maxRunning 1 ($JF)" test -n "$JF"
due_waiting () {
    [ "$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = $JF AND trigger_code = 0
              AND handle_code = 0 AND schedule_time > 0 AND schedule_time <= $(( $(now_ms) - 500 ))")" -ge 4 ]
}
check "planned: 4 of its fires due and waiting for the slot" wait_until 20 due_waiting
rnd 31; STEP=$((30 + R))
setclock sched "-$STEP"
T_STEP=$(now_ms)
starts_since () { [ "$(awk -v j="$JF" -v t="$T_STEP" '$2 == j && $5 > t' "$PROBE" | wc -l)" -ge "$1" ]; }
check "planned: 3 of its due fires start within 12 s of a step back of $STEP s" \
    wait_until 12 starts_since 3
say "$(elapsed): 3 planned fires started $(( $(now_ms) - T_STEP )) ms after the step"
ctl job stop "$JF" >/dev/null
setclock sched 0 1

# A cron's fires sent in a batch RUN and not answered yet (the agent
# frozen), the clock stepped back, the job stopped: their rows stay (the
# agent may run them once thawed).  Before, the stop took them for fires
# planned ahead (an address, a time past the stepped clock) and deleted
# them under the agent.
JB=$(ctl --get .id job add --group ss --handler probeIn --param sleep=100 --cron '* * * * * ?' --start)
runs_of_jb () { [ "$(awk -v j="$JB" '$2 == j' "$PROBE" | wc -l)" -ge 1 ]; }
check "batch: a one-second cron ($JB) runs" wait_until 10 runs_of_jb
kill -STOP "$(apid s1)"
T_FROZEN=$(now_ms)
sent_ids () { sql "SELECT id FROM xxl_job_log WHERE job_id = $JB AND executor_address IS NOT NULL
                   AND trigger_code = 0 AND schedule_time > $T_FROZEN
                   AND schedule_time < $(( $(now_ms) - 300 )) ORDER BY id" | tr '\n' ' '; }
some_sent () { [ -n "$(sent_ids)" ]; }
check "batch: a fire is sent to the frozen agent" wait_until 10 some_sent
SENT=$(sent_ids)
T_SEEN=$(now_ms)
rnd 31; STEP=$((30 + R))
setclock sched "-$STEP"
ctl job stop "$JB" >/dev/null
# (within run_timeout, 3 s, of the send the RUN still awaits its answer
# in its batch; past it, it is a row in doubt, which the stop keeps too)
say "$(elapsed): the job stopped $(( $(now_ms) - T_SEEN )) ms after its sent fire was seen"
kept () { [ "$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE id IN ($(echo $SENT | tr ' ' ','))")" = "$(echo $SENT | wc -w)" ]; }
check "batch: the fires sent before a step back of $STEP s keep their rows after the stop ($SENT)" kept
kill -CONT "$(apid s1)"
setclock sched 0 1

check "all runs finish" wait_quiet 60
# (no two runs of a job at once: a run spans its probe start to its end;
# at one millisecond an end comes before a start)
most () {
    awk -v job="$1" -v ends="$T/ends" '
        BEGIN { while ((getline l < ends) > 0) { split (l, f, " "); e [f [1]] = f [2] } }
        $2 == job { print $5, 1; print (($1 in e)? e [$1]: 9e15), 0 }' "$PROBE" \
        | sort -n -k1,1 -k2,2 | awk '{ n += $2? 1: -1; if (n > m) m = n } END { print m + 0 }'
}
check "never two runs of job $J at once ($(most "$J"))" test "$(most "$J")" = 1
check "never two runs of job $JF at once ($(most "$JF"))" test "$(most "$JF")" = 1
fcount "maxRunning rows across steps back"
xxl_done
