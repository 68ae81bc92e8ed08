#!/usr/bin/env bash
# fixdelay_step.sh -- a FIX_DELAY job's delay keeps its length when the
# scheduler's wall clock steps.
#
# A FIX_DELAY job's next time is its run's end plus the delay, written on
# the wall clock.  It used to stay as written across a step: a step back
# of H held the job H longer (it waited for the stepped clock to reach the
# old time), a step ahead shortened its delay by up to H (its next run
# came at once).  Now a step moves the next times of the waiting FIX_DELAY
# jobs of the scheduler's shares by the step (docs/design.md, the time
# model), as the timer's entries move.
#
# FIX_DELAY jobs of 3 s and 8 s (the probe in-process, runs of 0.2 s):
# the 3 s job's next fire is planned (on the timer, its row written) when
# its run ends (planner/ahead, 3 s), the 8 s job's is not yet when the
# clock steps (the test waits for the 3 s job's row first).  Each round:
# right after a run of one job ended, at a seeded instant 0.3-1.5 s into
# the delay, the scheduler's clock steps back
# or ahead by 30-60 s (seeded; the rounds alternate, back first).  The
# agent's clock stays true, and the gap from that run's end to the job's
# next start (both on the agent's clock, the probe's lines) is checked: at
# least the delay less 0.1 s (a step ahead used to make it ~0 s) and at
# most the delay plus 4 s (a step back used to make it the step's size).
# Rounds: 2 of each job (long: 4).  Then: every run once, no run twice
# (count.sh).  SQLite and PostgreSQL.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/faketime.sh"
faketime_setup fixdelay_step
faketime_pair d1 fd
# (J's fire is planned when its run ends: planner/ahead is 3 s; J2's is
# not planned yet when the clock steps, 6.5-8 s before it)
J=$(ctl --get .id job add --group fd --handler probeIn --fix-delay 3 --param sleep=200 --start)
J2=$(ctl --get .id job add --group fd --handler probeIn --fix-delay 8 --param sleep=200 --start)
check "FIX_DELAY jobs of 3 s and 8 s" test -n "$J" -a -n "$J2"

ROUNDS=$(pick 2 4)
# ends JOB: how many runs of JOB ended (the probe's end lines)
ends () { awk -v j="$1" 'NR == FNR { job [$1] = $2; next } job [$1] == j' "$PROBE" "$XXL_PROBE_END_FILE" | wc -l; }
more_ends () { [ "$(ends "$1")" -gt "$2" ]; }
last_end () { awk -v j="$1" 'NR == FNR { job [$1] = $2; next } job [$1] == j { e = $2 } END { print e }' "$PROBE" "$XXL_PROBE_END_FILE"; }
# start_after JOB MS: JOB's first start after MS (the probe's lines)
start_after () { awk -v j="$1" -v t="$2" '$2 == j && $5 > t { print $5 }' "$PROBE" | sort -n | head -1; }
started_after () { [ -n "$(start_after "$1" "$2")" ]; }
OFFSET=0
N=0
# planned JOB MS: JOB's next fire after MS (on the scheduler's clock) has
# its row (the planner's)
# (sent already on a slow machine: then the step comes after the fire,
# and the round checks the delay without it)
planned () { [ "$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = $1
                      AND schedule_time > $2")" -ge 1 ]; }
# round JOB DELAY [planned]: right after a run of JOB ends (with
# `planned`: once its next fire's row is written too), the clock steps
# (back and ahead in turn); the next run starts a delay after that end
round () {
    local job="$1" delay="$2" n end at step dir gap
    N=$((N + 1))
    n=$(ends "$job")
    check "round $N: a run of job $job ends" wait_until $((delay + 10)) more_ends "$job" "$n"
    end=$(last_end "$job")
    # (0.3 s at least: the scheduler has taken the run's result, whose
    # next time a step in that very turn would move once more)
    rnd 1200; at=$((end + 300 + R))
    [ -n "${3:-}" ] && check "round $N: job $job's next fire is planned before the step" \
        wait_until "$delay" planned "$job" $((end + OFFSET * 1000))
    wait_until 5 past "$at"
    rnd 31; step=$((30 + R))
    if [ $((N % 2)) = 1 ]; then OFFSET=$((OFFSET - step)); dir=back; else OFFSET=$((OFFSET + step)); dir=ahead; fi
    setclock sched "$OFFSET" >/dev/null
    say "$(elapsed): round $N: the clock stepped $dir $step s, $(( $(now_ms) - end )) ms after the end of a run of job $job"
    check "round $N: the next run of job $job starts" wait_until $((delay + 10)) started_after "$job" "$end"
    gap=$(( $(start_after "$job" "$end") - end ))
    check "round $N (job $job, delay $delay s, a step $dir of $step s): the next run starts $gap ms after the end (>= delay - 100)" \
        test "$gap" -ge $((delay * 1000 - 100))
    check "round $N (job $job, delay $delay s, a step $dir of $step s): ... and <= delay + 4000" \
        test "$gap" -le $((delay * 1000 + 4000))
}
check "the first runs end" wait_until 15 more_ends "$J" 0
for _ in $(seq "$ROUNDS"); do round "$J" 3 planned; done
for _ in $(seq "$ROUNDS"); do round "$J2" 8; done
ctl job stop "$J2" >/dev/null
ctl job stop "$J" >/dev/null
setclock sched 0 >/dev/null

check "all runs finish" wait_quiet 30
fcount "FIX_DELAY runs across steps"
xxl_done
