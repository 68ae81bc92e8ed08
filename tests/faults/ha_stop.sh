#!/usr/bin/env bash
# ha_stop.sh -- two schedulers sharing one store; one-second crons, each
# removed or stopped (seeded) through the scheduler that does NOT plan it,
# just before a second's fire (5-85 ms ahead, seeded), while the planning
# scheduler holds that fire's prepared RUNs for the instant; then crons
# whose next fire is a minute away, cut through the other scheduler 2-5 s
# before their planned fire.  Last, FIX_DELAY jobs of every share: each
# keeps running (a run's result may reach the scheduler that did not plan
# it); then FIX_DELAY jobs waiting for long runs when one scheduler is
# killed: the survivor resumes every one of them.
# Guarantee: a job removed or stopped fires nothing planned after the
# reply: no row planned after the cut starts (to the millisecond: the
# job's rows are read just before the cut), and no row made after that
# read starts after the cut.
. "$(dirname "$0")/lib.sh"
# (rows written 5 s ahead, planner/ahead, not the default 3 s: the minute
# crons are cut 2-5 s before their fire, after it was planned)
F_AHEAD=5000
faults_setup ha_stop
REQ="$XXL_REQ"
S_API=(); S_AGENTS=()
for i in 0 1; do
    start_scheduler || exit 1
    S_API[$i]=$API; S_AGENTS[$i]=$AGENTS; S_PID[$i]=$SPID
done
ALL_AGENTS=$(IFS=,; echo "${S_AGENTS[*]}")
AGENTS="$ALL_AGENTS" fagent h1 hs-app
API=${S_API[0]}
one_agent () { "$CTL" --api "$1" --json agent list | jq -e '[.agents[] | select(.connected)] | length == 1' >/dev/null; }
for i in 0 1; do check "the agent registers with scheduler $i" wait_until 15 one_agent "${S_API[$i]}"; done
ctl group add hs-app >/dev/null
holds_some () { [ "$(shares_of "$1")" != "[]" ]; }
check "both schedulers hold shares" wait_until 30 bash -c "$(declare -f shares_of holds_some); REQ=$REQ; holds_some ${S_API[0]} && holds_some ${S_API[1]}"
say "shares: 0 $(shares_of "${S_API[0]}"), 1 $(shares_of "${S_API[1]}")"

job_starts () { awk -v j="$1" '$2 == j' "$PROBE"; }
j_ran () { [ "$(job_starts "$1" | wc -l)" -ge 1 ]; }
# at_boundary MS: returns MS ms before the next whole second
at_boundary () {
    local now; now=$(now_ms)
    local wait=$(( 1000 - now % 1000 - $1 ))
    [ "$wait" -gt 0 ] || wait=$((wait + 1000))
    sleep "0.$(printf '%03d' "$wait")"
}
: > "$T/cut"; : > "$T/cut-jobs"
# cut_job JOB rm|stop API: the cut through API; rows planned after it go to
# $T/cut ("logId scheduleTime cutMs"), the job to $T/cut-jobs ("job cutMs
# highest id read")
cut_job () {
    sql "SELECT id, COALESCE(schedule_time, 0) FROM xxl_job_log WHERE job_id = $1" > "$T/cut-rows-$1"
    "$CTL" --api "$3" --json job "$2" "$1" >/dev/null
    local done_ms; done_ms=$(now_ms)
    awk -F'|' -v t="$done_ms" '$2 > t { print $1, $2, t }' "$T/cut-rows-$1" >> "$T/cut"
    echo "$1 $done_ms $(cut -d'|' -f1 "$T/cut-rows-$1" | sort -n | tail -1)" >> "$T/cut-jobs"
}
CUTS=$(pick 12 40)
for i in $(seq "$CUTS"); do
    J=$(ctl --get .id job add --group hs-app --handler probeIn --cron '* * * * * ?' --param "cut-$i" --start)
    wait_until 10 j_ran "$J"
    if shares_of "${S_API[0]}" | jq -e --argjson s $((J % 16)) 'index($s) != null' >/dev/null
    then OTHER=${S_API[1]}; else OTHER=${S_API[0]}; fi
    rnd 80; at_boundary $((R + 5))
    rnd 2; if [ "$R" = 0 ]; then cut_job "$J" rm "$OTHER"; else cut_job "$J" stop "$OTHER"; fi
done
# Crons whose next fire is a minute away (their planner keeps no snapshot
# between fires): cut through the other scheduler 2-5 s before a planned
# fire, the six at once (one after the other, a loaded machine's ctl and
# sql calls of about a second each ended the cuts after the fire)
other_of () {
    if shares_of "${S_API[0]}" | jq -e --argjson s $(($1 % 16)) 'index($s) != null' >/dev/null
    then echo "${S_API[1]}"; else echo "${S_API[0]}"; fi
}
M_T=$(( ($(now_ms) / 1000 + 9) * 1000 ))
MJ=""
for i in 1 2 3 4 5 6; do
    MJ="$MJ $(ctl job add --group hs-app --handler probeIn --cron "$(( M_T / 1000 % 60 )) * * * * ?" --param "minute-$i" --start | jq -r .id)"
done
# (each job's cut and the scheduler it goes through, chosen while the
# fire is being planned)
M_CUT=()
for j in $MJ; do rnd 2; if [ "$R" = 0 ]; then M_CUT+=(rm); else M_CUT+=(stop); fi; M_CUT+=("$(other_of "$j")"); done
m_planned () { [ "$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id IN ($(echo $MJ | tr ' ' ,)) AND schedule_time = $M_T")" = 6 ]; }
check "the minute crons' fire is planned" wait_until 15 m_planned
# The fire is planned 5 s ahead (planner/ahead, F_AHEAD).  A loaded machine may
# see it less than 3 s before the fire: that fire runs and the next one, a
# minute on, is the one cut (at most twice)
for _ in 1 2; do
    [ "$(now_ms)" -gt $(( M_T - 3000 )) ] || break
    say "setup ended $(( M_T - $(now_ms) )) ms before the fire (under 3 s): the next minute's is cut"
    M_T=$(( M_T + 60000 ))
    check "the minute crons' next fire is planned" wait_until 75 m_planned
done
rnd 3000; wait_until 70 past $(( M_T - 5000 + R ))
k=0; CUT_PIDS=()
for j in $MJ; do cut_job "$j" "${M_CUT[$k]}" "${M_CUT[$((k + 1))]}" & CUT_PIDS+=($!); k=$((k + 2)); done
wait "${CUT_PIDS[@]}"
say "minute crons cut $(( M_T - $(now_ms) )) ms (the last) before their fire"
wait_until 10 past $(( $(now_ms) + 3000 ))
# (on a loaded machine the last cuts may end after the fire: those are
# judged by the late-start check below, as the one-second crons' are)
M_IN_TIME=$(for j in $MJ; do awk -v j="$j" -v t="$M_T" '$1 == j && $2 < t { print j }' "$T/cut-jobs"; done)
check "minute crons cut before their fire ($(echo $M_IN_TIME | wc -w) of $(echo $MJ | wc -w))" \
    test -n "$M_IN_TIME"
# (a run of the job that starts after its cut, the fire at M_T or any
# other: an earlier fire of it ran a minute before)
check "no minute cron cut before its planned fire runs" \
    test "$(for j in $M_IN_TIME; do awk 'FNR == NR { if ($1 == j) cut = $2; next }
        $2 == j && $5 > cut' j="$j" "$T/cut-jobs" "$PROBE"; done | wc -l)" = 0
late_starts () {
    awk 'FNR == NR { bad[$1] = 1; next } ($1 in bad)' "$T/cut" "$PROBE"
    awk 'FNR == NR { max[$1] = $3; cut[$1] = $2; next }
         ($2 in max) && $1 > max[$2] && $5 > cut[$2]' "$T/cut-jobs" "$PROBE"
}
say "$CUTS crons cut through the other scheduler; $(wc -l < "$T/cut") planned row(s) after the cuts"
check "no row planned after its job's removal or stop starts" test -z "$(late_starts)"
late_starts | head -5 | sed 's/^/    late: /'
check "every one-second cron had run before its cut" \
    test "$(cut -d' ' -f1 "$T/cut-jobs" | while read -r j; do case " $MJ " in *" $j "*) continue ;; esac; j_ran "$j" || echo "$j"; done | wc -l)" = 0
# FIX_DELAY jobs of both schedulers' shares: each run's result may reach
# the scheduler that did not plan it, which must resume the job all the
# same (before the fix, the jobs of one scheduler's shares ran once and
# then waited for ever)
FD=""
for i in $(seq 16); do FD="$FD $(ctl --get .id job add --group hs-app --handler probeIn --fix-delay 1 --param sleep=100 --start)"; done
fd_runs () { for j in $FD; do [ "$(job_starts "$j" | wc -l)" -ge 3 ] || return 1; done; }
check "FIX_DELAY jobs of every share run again and again (3 runs each)" wait_until 30 fd_runs
for j in $FD; do printf '%s:%s ' "$j" "$(job_starts "$j" | wc -l)"; done | sed 's/^/# FIX_DELAY runs by job: /'; echo
for j in $FD; do ctl job stop "$j" >/dev/null; done
for i in 0 1; do check "scheduler $i answers" bash -c "\"$REQ\" ${S_API[$i]} PING >/dev/null"; done
# Takeover: FIX_DELAY jobs of every share, each waiting for a 6 s run,
# when scheduler 1 is killed (SIGKILL); scheduler 0 takes its shares
# (3 s lease) before the runs end, and must resume every job once its
# run's result comes (before the fix, the jobs of the dead scheduler's
# shares waited for ever: holding every share, the survivor looked for
# waiting jobs only among those it had planned itself)
LD=""
for i in $(seq 16); do LD="$LD $(ctl --get .id job add --group hs-app --handler probeIn --fix-delay 1 --param sleep=6000 --start)"; done
ld_started () { for j in $LD; do j_ran "$j" || return 1; done; }
check "the long FIX_DELAY jobs start" wait_until 15 ld_started
kill -KILL "${S_PID[1]}"; wait "${S_PID[1]}" 2>/dev/null
say "scheduler 1 killed at $(now_ms)"
check "scheduler 0 takes every share" wait_until 30 all_held 0
ld_runs () { for j in $LD; do [ "$(job_starts "$j" | wc -l)" -ge 2 ] || return 1; done; }
check "every long FIX_DELAY job runs again after the takeover" wait_until 40 ld_runs
for j in $LD; do printf '%s:%s ' "$j" "$(job_starts "$j" | wc -l)"; done | sed 's/^/# long FIX_DELAY runs by job: /'; echo
for j in $LD; do ctl job stop "$j" >/dev/null; done
check "no logId started twice" test "$(cut -d' ' -f1 "$PROBE" | sort | uniq -d | wc -l)" = 0
xxl_done
