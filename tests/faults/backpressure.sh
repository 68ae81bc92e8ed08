#!/usr/bin/env bash
# backpressure.sh -- agents that cannot take every run at once: two agents
# of one group, each with a pool of 2 threads and 1 run allowed to wait for
# one (agent/threads_max = 2, agent/waiting_max = 1), and a burst of manual
# triggers of 16 jobs (3 rounds of one each, a round from 4 clients at once, the next once it ended; 2 s in-process sleeps) routed FIRST,
# ROUND and BUSYOVER.  The agents refuse what they cannot take with 429
# "busy: ..." and the scheduler sends it again later or elsewhere.
# Guarantees: every acknowledged logId runs exactly once, none fails,
# none is left unfinished; the agents did refuse (the burst exceeded them).
. "$(dirname "$0")/lib.sh"
xxl_store_blind "agents refusing what they cannot take (429) and the routes around them"
faults_setup backpressure

JOBS=$(pick 16 48)
cat >> "$T/agent.cfg" <<CFG
    threads_max = 2
    waiting_max = 1
CFG
start_scheduler || exit 1
ctl group add bp >/dev/null
fagent b1 bp
fagent b2 bp
connected () { [ "$(ctl agent list | jq '[.agents[] | select(.app == "bp" and .connected)] | length')" = 2 ]; }
check "2 agents register" wait_until 60 connected
routes=(FIRST ROUND BUSYOVER)
ids=""
for i in $(seq "$JOBS"); do
    id=$(ctl job add --group bp --handler probeIn --route "${routes[$((i % 3))]}" --param sleep=2000 | jq -r .id)
    ids="$ids $id"
done
# A round triggers each job once, from 4 clients at once: a burst even
# where one trigger takes a client 200 ms, as under ASan on a loaded
# machine (the 6 places fill within 2 s).  The next round waits for it to
# end: a BUSYOVER job whose own runs still ran on both agents would fail
# its trigger, as in XXL-JOB (its idle beat answers "job thread is running")
for round in 1 2 3; do
    echo $ids | tr ' ' '\n' | grep . |
        xargs -P 4 -I{} sh -c "'$CTL' --api '$API' --json job trigger {} | jq -r '.logIds[]' | sed 's/\$/ {}/' >> '$ACKED'"
    wait_quiet 120
done
check "each trigger acknowledged ($(wc -l < "$ACKED") logIds for $((JOBS * 3)) triggers)" \
    test "$(wc -l < "$ACKED")" = $((JOBS * 3))
check "all runs finish" wait_quiet 120
refused=$(cat "$T/agent-b1.log" "$T/agent-b2.log" | grep -c "refused: busy:")
say "RUN messages with busy refusals: $refused"
check "the agents refused runs busy (the burst exceeded 2 threads + 1 waiting each)" test "$refused" -gt 0
failed=$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE trigger_code = 500 OR (handle_code != 0 AND handle_code != 200)")
check "no run failed ($failed)" test "$failed" = 0
fcount "back-pressure: busy refusals routed again" --jobs "$ids"
xxl_done
