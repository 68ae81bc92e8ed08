#!/usr/bin/env bash
# max_running.sh -- a job's maxRunning (DESIGN §13) held across schedulers
# and agents under faults.  Two schedulers share the store (three under
# XXL_STORE=pg), four agents connected to all of them; two SERIAL_EXECUTION
# jobs on ROUND, maxRunning 1 (in-process probe) and 3 (isolated probe),
# triggered through a live scheduler at a steady pace, more than they can
# run at once.  At seeded instants one daemon is hit: a scheduler SIGKILLed
# (down a while, restarted) or frozen past its lease (SIGSTOP, then
# SIGCONT); an agent SIGKILLed (restarted soon) or frozen shorter than the
# registry's dead time (a frozen agent past it counts as gone: its runs are
# failed and their slots freed, docs/operations.md).
# Guarantees: from the probe's start and end times (a run whose process
# died has no end: its row's end counts, when its slot freed), no instant
# has more than N runs of a job; every acknowledged trigger ran once or
# failed saying its agent died (none lost, none twice, none unfinished).
. "$(dirname "$0")/lib.sh"
F_LOST_AFTER=5 faults_setup max_running
export XXL_PROBE_END_FILE="$T/ends"
: > "$XXL_PROBE_END_FILE"
LEASE=3000
REQ="$XXL_REQ"
NS=2
[ "${XXL_STORE:-sqlite}" = pg ] && NS=3
ROUNDS=$(pick 8 30)
LAST=$((NS - 1))
ALLS=$(seq -s' ' 0 "$LAST")

S_API=(); S_AGENTS=(); S_PID=()
for i in $ALLS; do
    start_scheduler || exit 1
    S_API[$i]=$API; S_AGENTS[$i]=$AGENTS; S_PID[$i]=$SPID
done
ALL_AGENTS=$(IFS=,; echo "${S_AGENTS[*]}")
AG="m1 m2 m3 m4"
for a in $AG; do AGENTS="$ALL_AGENTS" fagent "$a" mr-app; done
API=${S_API[0]}
four_registered () {
    "$CTL" --api "$1" --json agent list \
        | jq -e '[.agents[] | select(.app == "mr-app" and .connected)] | length == 4' >/dev/null
}
for i in $ALLS; do check "four agents register with scheduler $i" wait_until 15 four_registered "${S_API[$i]}"; done
ctl group add mr-app >/dev/null
check "the $NS schedulers hold the 16 shares" wait_until 15 all_held "$ALLS"
J1=$(ctl --get .id job add --group mr-app --handler probeIn --route ROUND --max-running 1 --param sleep=700)
J3=$(ctl --get .id job add --group mr-app --handler probe --route ROUND --max-running 3 --param sleep=900)
check "jobs with maxRunning 1 and 3 added" test -n "$J1" -a -n "$J3"
say "jobs: $J1 (maxRunning 1, share $((J1 % 16))), $J3 (maxRunning 3, share $((J3 % 16)))"

# Load: J3 twice and J1 once every 400 ms, through scheduler LOADVIA (more
# than the slots take: triggers wait in the store), acked ids to $ACKED.
# The three triggers of a round go at once (one after the other, a loaded
# machine's ctl calls of about a second each spaced J3's runs of 0.9 s
# apart, and none went together)
load_paced () {
    rm -f "$T/stop-load"
    (
        set +e
        while [ ! -f "$T/stop-load" ]; do
            for j in "$J3" "$J1" "$J3"; do
                (
                    out=$("$CTL" --api "$API" --json --timeout 2000 job trigger "$j" 2>/dev/null) \
                        || [ $? = 3 ] || exit 0
                    for id in $(printf '%s' "$out" | jq -r '.logIds[]?' 2>/dev/null); do
                        echo "$id $j $(date +%s%3N)" >> "$ACKED"
                    done
                ) &
            done
            wait
            sleep 0.4
        done
    ) &
    LOADPID=$!
    BGPIDS="$BGPIDS $LOADPID"
}
load_via () { LOADVIA=$1; API=${S_API[$1]}; load_paced; }
load_via 0
rsleep 1000 2000
for round in $(seq "$ROUNDS"); do
    rnd 4; KIND=$R
    if [ "$KIND" -lt 2 ]; then
        rnd "$NS"; V=$R
        if [ "$V" = "$LOADVIA" ]; then load_stop; load_via $(( (V + 1) % NS )); fi
        SPID=${S_PID[$V]}
        if [ "$KIND" = 0 ]; then
            say "round $round: SIGKILL scheduler $V after $(acked_count) acknowledged triggers"
            kill_sched KILL
            rsleep 500 4000
            start_scheduler "${S_API[$V]}" "${S_AGENTS[$V]}" \
                || { check "round $round: scheduler $V restarts" false; break; }
            S_PID[$V]=$SPID
            API=${S_API[$LOADVIA]}
        else
            say "round $round: SIGSTOP scheduler $V past its lease after $(acked_count) acknowledged triggers"
            kill -STOP "$SPID"
            rsleep $((LEASE + 300)) $((LEASE + 1500))
            kill -CONT "$SPID"
        fi
        check "round $round: the $NS schedulers hold the 16 shares again" wait_until 20 all_held "$ALLS"
    else
        rnd 4; A=m$((R + 1))
        if [ "$KIND" = 2 ]; then
            say "round $round: SIGKILL agent $A"
            kill_agent "$A" KILL
            for p in $(probe_procs "$A"); do kill -KILL "$p" 2>/dev/null; done
            rsleep 0 2000
            AGENTS="$ALL_AGENTS" fagent "$A" mr-app
        else
            say "round $round: SIGSTOP agent $A"
            P=$(apid "$A")
            kill -STOP "$P"
            rsleep 300 1500
            kill -CONT "$P"
        fi
    fi
    rsleep 1000 2500
done
load_stop
say "$(acked_count) acknowledged triggers"
check "every run finishes" wait_quiet 120
for i in $ALLS; do check "scheduler $i is alive" kill -0 "${S_PID[$i]}"; done

# The most runs of each job at one instant: a run spans its probe start to
# its probe end, or to its row's end (handle_time) when its process died
# first; at one millisecond an end comes before a start
sql "SELECT id || ' ' || COALESCE(handle_time, 0) FROM xxl_job_log WHERE job_id IN ($J1, $J3)" \
    > "$T/rowend"
most_at_once () {
    awk -v job="$1" -v ends="$T/ends" -v rows="$T/rowend" '
        BEGIN { while ((getline l < ends) > 0) { split (l, f, " "); e [f [1]] = f [2] }
                while ((getline l < rows) > 0) { split (l, f, " "); r [f [1]] = f [2] } }
        $2 == job { end = ($1 in e)? e [$1]: (r [$1] > 0? r [$1]: 9e15)
                    print $5, 1; print end, 0 }' "$PROBE" \
        | sort -n -k1,1 -k2,2 | awk '{ n += $2? 1: -1; if (n > m) m = n } END { print m + 0 }'
}
M1=$(most_at_once "$J1"); M3=$(most_at_once "$J3")
R1=$(awk -v j="$J1" '$2 == j' "$PROBE" | wc -l); R3=$(awk -v j="$J3" '$2 == j' "$PROBE" | wc -l)
say "job $J1: $R1 runs, at most $M1 at once; job $J3: $R3 runs, at most $M3 at once"
check "maxRunning 1: never 2 runs at once ($M1, of $R1 runs)" test "$M1" -le 1
check "maxRunning 3: never 4 runs at once ($M3, of $R3 runs)" test "$M3" -le 3
check "maxRunning 3: runs did go together (the limit is not 1)" test "$M3" -ge 2
fcount "maxRunning under scheduler and agent faults" --jobs "$J1 $J3" \
    --excuse 'lost|agent|restart|previous|killed|timeout|time out|did not|no answer|not connected|address list is empty'
xxl_done
