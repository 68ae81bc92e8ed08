#!/usr/bin/env bash
# many_agents.sh -- 100 agents (200 in the long form) in one group, small
# config, and SHARDING_BROADCAST jobs: manual triggers and a one-second cron.
# Guarantees: one row and one run per agent per fire (shards 0..N-1 of N,
# each on its own agent); every acknowledged logId runs exactly once; none
# unfinished; the scheduler lives on.
. "$(dirname "$0")/lib.sh"
xxl_store_blind "100 agents in a group and SHARDING_BROADCAST's fan-out"
faults_setup many_agents

N=$(pick 100 200)
start_scheduler || exit 1
ctl group add ma >/dev/null
for i in $(seq "$N"); do fagent "m$i" ma; done
connected () { [ "$(ctl agent list | jq '[.agents[] | select(.app == "ma" and .connected)] | length')" = "$N" ]; }
check "$N agents register" wait_until 60 connected
say "agent processes running: $(for i in $(seq "$N"); do kill -0 "$(apid "m$i")" 2>/dev/null && echo; done | wc -l)"
SB=$(ctl --get .id job add --group ma --handler probeIn --route SHARDING_BROADCAST --param sleep=10)
FIRES=$(pick 3 10)
for f in $(seq "$FIRES"); do
    ctl job trigger "$SB" | jq -r '.logIds[]' | sed "s/\$/ $SB fire$f/" >> "$ACKED"
    rsleep 200 800
done
check "each manual fire acknowledged $N logIds ($(wc -l < "$ACKED") for $FIRES fires)" \
    test "$(wc -l < "$ACKED")" = $((N * FIRES))
CR=$(ctl --get .id job add --group ma --handler probeIn --route SHARDING_BROADCAST --cron '* * * * * ?' --param sleep=10 --start)
rsleep 2000 3000
# and across a scheduler restart: fires planned while the agents reconnect
say "SIGKILL and restart of the scheduler during the cron"
kill_sched KILL
rsleep 0 1000
restart_sched
check "$N agents register again" wait_until 60 connected
rsleep 3000 4000
ctl job stop "$CR" >/dev/null
check "all runs finish" wait_quiet 60
check "the scheduler is alive" kill -0 "$SPID"
# Manual fires: each has N runs, on N distinct agents, shards 0..N-1 of N
awk 'NR == FNR { fire[$1] = $3; next } ($1 in fire) { print fire[$1], $6, $3 }' "$ACKED" "$PROBE" |
    sort > "$T/manual-runs"
bad_fires () {
    awk -v n="$N" '{ runs[$1]++; ag[$1 SUBSEP $2]++; sh[$1 SUBSEP $3]++; if (ag[$1 SUBSEP $2] == 1) nag[$1]++; if (sh[$1 SUBSEP $3] == 1) nsh[$1]++
                     split($3, s, "/"); if (s[2] != n) wrong[$1]++ }
         END { for (f in runs) if (runs[f] != n || nag[f] != n || nsh[f] != n || wrong[f]) print f, runs[f], nag[f], nsh[f], wrong[f] + 0 }' "$T/manual-runs"
}
check "manual SHARDING_BROADCAST: each fire ran once on each of the $N agents, shards 0..$((N - 1))/$N" test -z "$(bad_fires)"
bad_fires | head -5 | sed 's/^/    fire runs agents shards wrong-total: /'
# Cron fires: N rows per planned second
sql "SELECT schedule_time, COUNT(*), COUNT(DISTINCT executor_address), COUNT(DISTINCT executor_sharding_param)
     FROM xxl_job_log WHERE job_id = $CR AND trigger_type = 'CRON' GROUP BY schedule_time" > "$T/cron-fires"
say "cron fires: $(wc -l < "$T/cron-fires"); rows per fire: $(cut -d'|' -f2 "$T/cron-fires" | sort -n | uniq -c | tr '\n' ' ')"
check "cron SHARDING_BROADCAST: one row per agent per fire ($N rows, $N addresses, $N shards each)" \
    test -n "$(cat "$T/cron-fires")" -a -z "$(awk -F'|' -v n="$N" '$2 != n || $3 != n || $4 != n' "$T/cron-fires")"
awk -F'|' -v n="$N" '$2 != n || $3 != n || $4 != n' "$T/cron-fires" | head -5 |
    sed 's/^/    fire (scheduleTime|rows|addresses|shards): /'
fcount "many agents, SHARDING_BROADCAST manual and cron" --jobs "$SB $CR"
xxl_done
