#!/usr/bin/env bash
# frozen_agent.sh -- one of two agents frozen (SIGSTOP) past the scheduler's
# run-answer timeout (run_timeout 2 s here) under ROUND load with retries
# (--retry 1), then thawed; a few rounds at seeded instants, alternating
# agents.  Each trigger's param carries a number of its own, which its retry
# keeps, so count.sh --chains follows a trigger and its retry as one.
# Guarantees: a RUN the scheduler gave up on (no answer in time) never starts
# later, also when it was already queued towards the frozen agent; a retry
# never overlaps the run it replaces (no chain runs twice); every
# acknowledged trigger (with its retry) runs once unless every attempt timed
# out; nothing is left unfinished.
. "$(dirname "$0")/lib.sh"
xxl_store_blind "a frozen agent's runs, their doubts and retries"
F_RUN_TIMEOUT=2000 F_LOST_AFTER=30 faults_setup frozen_agent

ROUNDS=$(pick 3 10)
start_scheduler || exit 1
ctl group add fz >/dev/null
fagent z1 fz
fagent z2 fz
both () { ctl agent list | jq -e '[.agents[] | select(.app == "fz" and .connected)] | length == 2' >/dev/null; }
check "agents register" wait_until 10 both
JOBS=""
for k in 1 2 3; do
    JOBS="$JOBS $(ctl --get .id job add --group fz --handler probeIn --route ROUND --retry 1)"
done
JOBS="$JOBS $(ctl --get .id job add --group fz --handler probe --route ROUND --retry 1)"
load_start "$JOBS" "sleep=50 t=%n"
for round in $(seq "$ROUNDS"); do
    rsleep 1000 2500
    rnd 2; A=z$((R + 1))
    say "round $round: SIGSTOP $A after $(acked_count) acknowledged triggers"
    kill -STOP "$(apid $A)"
    rsleep 3500 6000             # past run_timeout (2 s) and the retries' timeouts
    kill -CONT "$(apid $A)"
    say "round $round: SIGCONT $A"
done
rsleep 1500 2500
load_stop
say "$(acked_count) triggers acknowledged"
check "every run finishes" wait_quiet 40
check "the scheduler is alive" kill -0 "$SPID"
fcount "agent frozen past the run timeout, ROUND with retries" --chains \
    --excuse 'did not answer|no answer|not connected|expire|refus'
xxl_done
