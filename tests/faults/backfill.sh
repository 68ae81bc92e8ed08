#!/usr/bin/env bash
# backfill.sh -- a day of one-second fire times (86,400 instants) backfilled
# twice at once (two backfills of the same range, --per-second at its
# maximum, or so that a shorter form lasts 6 s) on two agents, while the
# scheduler is SIGKILLed at random instants (the seed) and restarted on
# the same store.  Guarantees (DESIGN §13, §5): each backfill resumes
# from its committed cursor and ends DONE;
# every instant has exactly one row (scheduleTime, trigger type BACKFILL)
# and ran exactly once (the probe's lines counted per scheduleTime); the two
# backfills made 86,400 runs between them, the rest counted as had already.
# Prints the time the instants took.  XXL_STORE=pg: on PostgreSQL.
# backfill_ha.sh runs it with XXL_BACKFILL_HA=1: three schedulers share the
# store, and the one holding the job's share is the one SIGKILLed (another
# takes the share over after its lease and goes on from the cursor), then
# restarted.
. "$(dirname "$0")/lib.sh"
HA=${XXL_BACKFILL_HA:-0}
if [ "$HA" = 1 ]; then faults_setup backfill_ha; else faults_setup backfill; fi
REQ="$XXL_REQ"
LEASE=3000

# (PostgreSQL writes a run's row in a round trip of its own: its short
# forms backfill an hour, two under HA, its long forms the day; SQLite's
# short forms the day, eight hours under HA; XXL_BACKFILL_SECONDS=N sets
# it, XXL_BACKFILL_KILLS=0 measures the time with no kill)
if [ "${XXL_STORE:-sqlite}" = pg ]; then
    if [ "$HA" = 1 ]; then SECONDS_N=$(pick 7200 86400); else SECONDS_N=$(pick 3600 86400); fi
elif [ "$HA" = 1 ]; then SECONDS_N=$(pick 28800 86400)
else SECONDS_N=86400; fi
SECONDS_N=${XXL_BACKFILL_SECONDS:-$SECONDS_N}
KILLING=${XXL_BACKFILL_KILLS:-1}
# --per-second: its maximum (10,000), or less for the shorter forms, so that
# they last 6 s at least (at 10,000 PostgreSQL's hour ended in 0.4 s, before
# a loaded machine's ctl calls saw it running).  The first kill comes
# before the backfills could end on any machine: 0.8 of their least time
PER_S=$(( SECONDS_N / 6 )); [ "$PER_S" -le 10000 ] || PER_S=10000
FIRST_MAX=$(( SECONDS_N * 1000 / PER_S * 8 / 10 )); [ "$FIRST_MAX" -le 2000 ] || FIRST_MAX=2000
FIRST_MIN=$(( FIRST_MAX / 4 )); [ "$FIRST_MIN" -le 300 ] || FIRST_MIN=300
if [ "$HA" = 1 ]; then
    ha_three bf-app a1 a2
else
    start_scheduler || exit 1
    fagent a1 bf-app
    fagent a2 bf-app
    check "agents register" wait_until 10 bash -c "
        $CTL --api $API --json agent list | jq -e '[.agents[] | select(.app == \"bf-app\" and .connected)] | length == 2' >/dev/null"
    ctl group add bf-app >/dev/null
fi
# A one-second cron, never started: only the backfills make its runs
JOB=$(ctl --get .id job add --group bf-app --handler probeIn --route ROUND --cron '* * * * * ?' \
      --timezone UTC)
check "job added" test -n "$JOB" -a "$JOB" != null
# The day before today (UTC): all past
DAY=$(( ($(date -u +%s) / 86400 - 1) * 86400 * 1000 ))
FROM=$DAY
TO=$(( DAY + (SECONDS_N - 1) * 1000 ))
START=$(now_ms)
B1=$(ctl --get .id job backfill "$JOB" --from "$FROM" --to "$TO" --per-second "$PER_S")
B2=$(ctl --get .id job backfill "$JOB" --from "$FROM" --to "$TO" --per-second "$PER_S")
check "two backfills of $SECONDS_N instants start" bash -c "
    $CTL --api $API --json backfill list --job $JOB | jq -e '[.backfills[] | select(.total == $SECONDS_N and .state == \"RUNNING\")] | length == 2' >/dev/null"
running () { [ "$(sql "SELECT COUNT(*) FROM xxl_backfill WHERE state = 'RUNNING'")" != 0 ]; }
progress () { sql "SELECT id, made, skipped, state FROM xxl_backfill ORDER BY id" | tr '\n' ' '; }
KILLS=0
while running; do
    if [ "$KILLS" = 0 ]; then rsleep "$FIRST_MIN" "$FIRST_MAX"; else rsleep 500 4000; fi
    running || break
    [ "$KILLING" = 0 ] && continue
    if [ "$HA" = 1 ]; then
        # The scheduler that holds the job's share (it drives the backfills)
        V=-1
        for i in 0 1 2; do
            shares_of "${S_API[$i]}" | jq -e --argjson s $((JOB % 16)) 'index($s) != null' >/dev/null && V=$i
        done
        [ "$V" -ge 0 ] || continue
        OTHERS=$(for i in 0 1 2; do [ "$i" = "$V" ] || echo "$i"; done | paste -sd' ')
        say "SIGKILL to scheduler $V, which holds job $JOB's share, at $(progress)"
        SPID=${S_PID[$V]}
        kill_sched KILL
        KILLS=$((KILLS + 1))
        check "kill $KILLS: the others take the 16 shares over" wait_until $(( LEASE / 1000 + 5 )) all_held "$OTHERS"
        rsleep 0 2000
        API=${S_API[$V]}; AGENTS=${S_AGENTS[$V]}
        start_scheduler "$API" "$AGENTS" || { check "scheduler $V restarts" false; break; }
        S_PID[$V]=$SPID
    else
        say "SIGKILL to the scheduler at $(progress)"
        kill_sched KILL
        KILLS=$((KILLS + 1))
        rsleep 0 1000
        restart_sched || break
    fi
done
ELAPSED=$(( $(now_ms) - START ))
say "$SECONDS_N instants twice: $ELAPSED ms with $KILLS scheduler kills ($(progress))"
[ "$KILLING" = 0 ] || check "the scheduler was killed at least once ($KILLS)" test "$KILLS" -ge 1
check "both backfills end DONE" test "$(sql "SELECT COUNT(*) FROM xxl_backfill WHERE state = 'DONE' AND id IN ($B1, $B2)")" = 2
check "they made $SECONDS_N runs between them, every other instant counted as had" \
    test "$(sql "SELECT SUM(made) || ' ' || SUM(skipped) FROM xxl_backfill")" = "$SECONDS_N $SECONDS_N"
check "all runs finish" wait_quiet 300
# Every instant: one row, and that row ran once
sql "SELECT id, schedule_time, trigger_type, trigger_code, handle_code FROM xxl_job_log
     WHERE job_id = $JOB" | tr '|' ' ' > "$T/rows"
check "one row per instant, each a BACKFILL" awk -v n="$SECONDS_N" -v from="$FROM" '
    $3 != "BACKFILL" { bad++ } { seen [$2]++ }
    END { for (t in seen) { if (seen [t] != 1) dup++; if ((t - from) % 1000 || t < from) odd++ }
          if (bad || dup || odd || length (seen) != n) {
              printf "  %d types not BACKFILL, %d instants with more than one row, %d off the grid, %d instants (want %d)\n", bad, dup, odd, length (seen), n
              exit 1 } }' "$T/rows"
check "each instant ran exactly once (probe lines per scheduleTime)" awk -v n="$SECONDS_N" '
    FNR == NR { time [$1] = $2; next }
    ($1 in time) { runs [time [$1]]++ }
    END { for (t in runs) if (runs [t] != 1) twice++
          if (twice || length (runs) != n) {
              printf "  %d instants ran more than once; %d ran (want %d)\n", twice, length (runs), n
              exit 1 } }' "$T/rows" "$PROBE"
check "no run failed" test "$(awk '$4 != 200 || $5 != 200' "$T/rows" | wc -l)" = 0 || {
    sql "SELECT trigger_code, handle_code, COUNT(*) FROM xxl_job_log WHERE job_id = $JOB
         GROUP BY trigger_code, handle_code" | sed 's/^/    trigger|handle|rows: /'
    sql "SELECT id, trigger_code, handle_code, executor_address, substr(COALESCE(handle_msg, ''), 1, 200),
         substr(COALESCE(trigger_msg, ''), length(COALESCE(trigger_msg, '')) - 300) FROM xxl_job_log
         WHERE job_id = $JOB AND (trigger_code != 200 OR handle_code != 200) LIMIT 2" | sed 's/^/    row: /'; }
xxl_done
