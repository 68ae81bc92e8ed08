#!/usr/bin/env bash
# agent_kill.sh -- agents killed with SIGKILL mid-run: in-process BEAN,
# isolated BEAN (xxl-runner) and GLUE_SHELL runs in flight and queued behind
# them.  Agent r1 comes back at once (same address and logdir); agent n1
# stays away.  Repeated for a few rounds, at seeded instants.
# Guarantees: an agent's death ends its runs (no runner or GLUE process
# outlives it); a restarted agent reports the runs of its previous life
# lost and they are failed at once (not after lost_after); the runs of an
# agent that stays away are failed by the lost-run monitor; no run executes
# twice (a restarted agent remembers what it accepted); runs triggered after
# the restart all run once.
. "$(dirname "$0")/lib.sh"
F_LOST_AFTER=5 F_RUN_LEASE=5 faults_setup agent_kill

ROUNDS=$(pick 2 6)
start_scheduler || exit 1
ctl group add ak-r >/dev/null
ctl group add ak-n >/dev/null
fagent r1 ak-r
check "agent r1 registers" wait_until 10 agent_registered ak-r r1

# One job of each kind per group, SERIAL_EXECUTION: one run in flight, the
# others queued behind it on the agent
mkjobs () {     # mkjobs GROUP: three job ids
    echo "$(ctl --get .id job add --group "$1" --handler probeIn --param sleep=8000)" \
         "$(ctl --get .id job add --group "$1" --handler probe --param sleep=8000)" \
         "$(ctl --get .id job add --group "$1" --glue-type GLUE_SHELL --glue-source "$GLUE" --param sleep=8000)"
}
JR=$(mkjobs ak-r)
JN=$(mkjobs ak-n)
probe_lines () { grep -c " $1 " "$PROBE"; }      # probe_lines TAG
trigger_all () {    # trigger_all "JOBS" TIMES: records the acked ids
    local j
    for _ in $(seq "$2"); do
        for j in $1; do
            ctl job trigger "$j" | jq -r '.logIds[]' | sed "s/\$/ $j/" >> "$ACKED"
        done
    done
}

for round in $(seq "$ROUNDS"); do
    fagent n1 ak-n
    wait_until 10 agent_registered ak-n n1
    wait_until 10 agent_registered ak-r r1
    BEFORE_R=$(probe_lines r1); BEFORE_N=$(probe_lines n1)
    trigger_all "$JR $JN" 3
    # the first run of each job has started on both agents
    started () { [ "$(probe_lines r1)" -ge $((BEFORE_R + 3)) ] && [ "$(probe_lines n1)" -ge $((BEFORE_N + 3)) ]; }
    check "round $round: runs of the three kinds are in flight on both agents" wait_until 15 started
    rsleep 0 1500
    KILLED=$(now_ms)
    say "round $round: SIGKILL to agents r1 and n1"
    kill_agent r1 KILL
    kill_agent n1 KILL
    for a in r1 n1; do
        no_orphans () { test -z "$(orphans "$1")"; }
        check "round $round: an agent's death ends its runs: no process of $a outlives it" \
            wait_until 2 no_orphans $a
        orphans $a | sed "s/^/    orphan of $a: /"
    done
    # the survivors would finish their sleeps and write nothing more; gone
    for p in $(probe_procs r1) $(probe_procs n1); do kill -KILL "$p" 2>/dev/null; done
    fagent r1 ak-r
    RESTARTED=$(now_ms)
    check "round $round: a restarted agent's lost runs are failed at once (within 4 s of its restart)" \
        wait_until 4 quiet "job_id IN ($(echo $JR | tr ' ' ,))"
    say "round $round: r1's runs ended $(( $(now_ms) - KILLED )) ms after the kill, $(( $(now_ms) - RESTARTED )) ms after the restart"
    check "round $round: the runs of an agent that stays away are failed by the lost-run monitor" \
        wait_until 20 quiet "job_id IN ($(echo $JN | tr ' ' ,))"
done
AFTER=$(sql "SELECT COALESCE(MAX(id), 0) FROM xxl_job_log")

# After the last restart, r1 runs what it is given, once each
for j in $JR; do ctl job update "$j" --param sleep=100 >/dev/null; done
trigger_all "$JR" 3
check "runs after the restart finish" wait_quiet 30 "id > $AFTER"
check "every run finishes (also those queued on an agent when it died)" wait_quiet 15
# Up to the kills: a run that never started must have failed saying why
# (its agent died); none twice, none unfinished, none said to succeed
fcount "agent SIGKILL mid-run (runs before the kills)" --max-id "$AFTER" \
    --excuse 'lost|agent|restart|previous|killed|timeout|time out|did not|no answer|not connected|address list is empty'
# After the restart: every trigger runs exactly once
fcount "agent restarted after SIGKILL (runs after the restart)" --min-id $((AFTER + 1))
xxl_done
