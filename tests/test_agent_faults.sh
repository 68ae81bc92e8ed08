#!/usr/bin/env bash
# test_agent_faults.sh -- the agent's guarantees under faults, with the real
# daemons:
#  (a) an agent SIGKILLed with runs running and queued (in-process BEAN,
#      isolated BEAN, GLUE with a background child) and restarted at once:
#      none of their processes survives (the guardian), each comes back
#      failed "lost: xxl-agent restarted ...", none runs again; again with
#      the guardian killed first (the restarted agent ends them);
#  (b) the scheduler frozen, the agent killed with results spooled, the
#      scheduler killed, both restarted: the scheduler's recovery re-sends
#      the RUNs whose acceptance it never stored, the agent's journal
#      refuses them, every run executed once;
#  (c) an agent frozen (SIGSTOP) past the scheduler's run_timeout with RUNs
#      queued to it: after the thaw none of them starts (answered
#      "expired: ...").  Needs a scheduler that sends expireTime;
#  (e) the run lease of an agent frozen past it: its guardian kills the
#      run's processes while the agent is still frozen (a GLUE script is
#      not frozen with it), and the thawed agent ends the run 500 and
#      takes runs again once a scheduler answers;
#  (f) the run lease, not the dead time, ends a frozen agent's unanswered
#      RUN: with the registry's dead time (60 s) far past the agent's lease
#      (2 s) plus 3 s, the row held in doubt fails "nor any word from it for
#      its run lease (2 s) since" while the agent is still registered; an
#      agent that answers runs the same job; thawed, the agent refuses the
#      RUN (expired), which never runs, and the row keeps its one outcome.
# Executions are counted by GLUE scripts appending their parameter (a
# token given at the trigger) to a file, and by the runs' "execute start"
# log lines.
. "$(dirname "$0")/lib.sh"
xxl_store_blind "the agent's journal, guardian and spool"
xxl_setup

mkdir -p "$T/plugins"
cp "$XXL_BUILD/plugins/handlers/.libs/demo.so" "$XXL_TEST_PLUGINS/test_handlers.so" "$T/plugins/"
export AGENT_PLUGINS="$T/plugins"
start_scheduler || exit 1
start_agent w1 faults-app
check "agent registers" wait_for 10 agent_registered faults-app w1
ctl group add faults-app >/dev/null

glue_job () {   # glue_job SCRIPT: a GLUE_SHELL job running SCRIPT
    local f="$T/job-$RANDOM$RANDOM.sh"
    printf '%s\n' "$1" > "$f"
    ctl job add --group faults-app --glue-type GLUE_SHELL --glue-source "$f" | jq -r .id
}
trigger () { ctl job trigger "$@" | jq -r '.logIds[0]'; }
# triggers_at_once JOB N PREFIX: N triggers together (params PREFIX1..N),
# their logIds printed
triggers_at_once () {
    seq "$2" | xargs -P "$2" -I{} sh -c \
        "'$CTL' --api '$API' --json job trigger $1 --param $3{} | jq -r '.logIds[0]'"
}
# no_address FILE: how many of the rows of FILE's logIds found no agent
no_address () {
    local ids; ids=$(grep '^[0-9]' "$1" | paste -sd, -)
    xxl_sql "SELECT COUNT(*) FROM xxl_job_log WHERE id IN (${ids:-0})
             AND trigger_msg LIKE '%the address list is empty%'"
}
# marked PREFIX: pids of processes with XXL_AGENT_RUN=PREFIX... in their
# environment (the runs of an agent life are PID.STARTMS.LOGID)
marked () { grep -lsaz "^XXL_AGENT_RUN=$1" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3; }
none_marked () { [ -z "$(marked "$1")" ]; }
some_marked () { [ -n "$(marked "$1")" ]; }
# run_alive AGENTPID LOGID: a process of that run of that agent
run_alive () { some_marked "$1[.][0-9]*[.]$2\$"; }
# lost_back ID...: each run failed with the agent's lost report
lost_back () {
    local id
    for id in "$@"; do
        [ "$(log_field "$id" handleCode)" = 500 ] || return 1
        log_field "$id" handleMsg | grep -q '^lost: xxl-agent restarted' || return 1
    done
}
in_file () { grep -qx "$1" "$2" 2>/dev/null; }
# no_proc REGEX: no live (not zombie) process whose command line matches
no_proc () { ! ps -eo stat=,args= | grep -v '^Z' | grep -q -- "$1"; }
# starts ID: "execute start" lines in the run's log(s)
starts () { run_log_starts "$T/logs-w1" | awk -v id="$1" '$1 == id { n += $2 } END { print n + 0 }'; }
agent_pid () { eval "echo \$APID_w1"; }

# (a) SIGKILL with runs running and queued, restarted at once
JIN=$(ctl --get .id job add --group faults-app --handler sleepInJobHandler --param 30000)
JISO=$(ctl --get .id job add --group faults-app --handler sleepJobHandler --param 30000)
JGLUE=$(glue_job 'echo "$1" >> '"$T"'/glue.runs; sleep 600.4242 & sleep 60.4242; wait')
IN1=$(trigger "$JIN"); IN2=$(trigger "$JIN")
ISO1=$(trigger "$JISO"); ISO2=$(trigger "$JISO")
GL1=$(trigger "$JGLUE" --param g1); GL2=$(trigger "$JGLUE" --param g2)
OLD=$(agent_pid)
check "a: the GLUE run runs" wait_for 10 in_file g1 "$T/glue.runs"
check "a: its background child runs" wait_for 5 pgrep -f 'sleep 600[.]4242'
check "a: the isolated run runs" wait_for 10 run_alive "$OLD" "$ISO1"
for id in $IN1 $IN2 $ISO2 $GL2; do wait_for 5 field_is "$id" triggerCode 200; done
check "a: all six accepted" bash -c "for id in $IN1 $IN2 $ISO1 $ISO2 $GL1 $GL2; do
    [ \"\$($CTL --api $API --json log show \$id | jq -r .triggerCode)\" = 200 ] || exit 1; done"
kill -KILL "$OLD"
check "a: no process of the dead agent's runs survives (guardian)" wait_for 5 none_marked "$OLD."
check "a: the GLUE run's background child too" wait_for 5 no_proc 'sleep 600[.]4242'
check "a: ... nor the isolated runner" wait_for 5 no_proc "xxl-runne[r] sleepJobHandler $JISO "
start_agent w1 faults-app
check "a: all six come back failed as lost by the agent" wait_for 15 lost_back $IN1 $IN2 $ISO1 $ISO2 $GL1 $GL2
check "a: the lost message names the previous pid" bash -c "
    $CTL --api $API --json log show $GL2 | jq -r .handleMsg | grep -q 'previous pid $OLD'"
check "a: the restarted agent said so" grep -q 'run(s) of an earlier life lost' "$T/agent-w1.log"
check "a: the agent serves on" wait_for 10 agent_registered faults-app w1
NEW=$(agent_pid)
check "a: the GLUE run executed once, the queued one never" bash -c "
    [ \"\$(grep -cx g1 $T/glue.runs)\" = 1 ] && ! grep -qx g2 $T/glue.runs"
check "a: isolated: $ISO1 started once, $ISO2 never" test "$(starts "$ISO1"):$(starts "$ISO2")" = "1:0"
check "a: in-process: neither started again" test "$(starts "$IN1"):$(starts "$IN2")" = "0:0"
check "a: nothing of theirs runs in the new life" none_marked "$NEW."

# (a') the same with the guardian killed first: the restarted agent ends
# what the dead one left
ISO3=$(trigger "$JISO"); GL3=$(trigger "$JGLUE" --param g3)
check "a': the GLUE run runs" wait_for 10 in_file g3 "$T/glue.runs"
check "a': the isolated run runs" wait_for 10 run_alive "$NEW" "$ISO3"
GUARD=$(pgrep -P "$NEW" -f -- '--guard')
check "a': the agent has a guardian" test -n "$GUARD"
kill -KILL $GUARD "$NEW"
check "a': without the guardian, the runs outlive the agent" some_marked "$NEW."
start_agent w1 faults-app
check "a': the restarted agent ends them" wait_for 10 none_marked "$NEW."
check "a': and reports them lost" wait_for 15 lost_back "$ISO3" "$GL3"
check "a': the background child is gone" wait_for 5 no_proc 'sleep 600[.]4242'
check "a': agent registers again" wait_for 10 agent_registered faults-app w1

# (b) scheduler frozen; agent killed with results spooled; scheduler
# killed; both restarted: RUNs re-sent by the recovery are refused by the
# journal, each run executed once.  The agent is frozen while the RUNs go
# out, and thawed once the scheduler is frozen, so that the scheduler
# cannot have stored its answers (well within the RUNs' expireTime).
# The 20 triggers must go out before the frozen agent is judged dead: the
# scheduler again, with a dead time of 15 s (on a loaded machine the
# triggers took longer than 3 s, and the rest found no address).  A setup
# where some found none all the same is made again (a new job, up to 3
# times)
kill -TERM "$SPID"
wait "$SPID" 2>/dev/null
sed -i 's/dead = [0-9]*/dead = 15/' "$T/scheduler.cfg"
start_scheduler "$API" "$AGENTS" || exit 1
check "b: agent registers again" wait_for 10 agent_registered faults-app w1
for attempt in 1 2 3; do
    COUNT="$T/count$attempt.runs"
    JCOUNT=$(glue_job 'echo "$1" >> '"$COUNT")
    kill -STOP "$(agent_pid)"
    triggers_at_once "$JCOUNT" 20 b > "$T/count.ids"
    kill -STOP "$SPID"
    kill -CONT "$(agent_pid)"
    empty=$(no_address "$T/count.ids")
    [ "$empty" = 0 ] || [ "$attempt" = 3 ] && break
    echo "# b: attempt $attempt: $empty of the 20 found no address (the frozen agent judged dead while they went out); made again"
    kill -CONT "$SPID"
    wait_for 10 agent_registered faults-app w1
done
check "b: 20 triggered" test "$(grep -c '^[0-9]' "$T/count.ids")" = 20
lines () { [ "$(wc -l < "$2" 2>/dev/null || echo 0)" -ge "$1" ]; }
check "b: the agent ran all 20 (the scheduler frozen)" wait_for 30 lines 20 "$COUNT"
kill -KILL "$(agent_pid)"
kill -KILL "$SPID"
wait "$SPID" 2>/dev/null
# The agent first (it waits for its scheduler), as after a host's restart
REPEATED=$(grep -c 'already accepted, not run again' "$T/agent-w1.log")
start_agent w1 faults-app
start_scheduler "$API" "$AGENTS" || exit 1
all_ok () { local id; for id in $(cat "$T/count.ids"); do field_is "$id" handleCode 200 || return 1; done; }
check "b: all 20 end ok" wait_for 30 all_ok
check "b: each run executed exactly once" bash -c "
    [ \"\$(wc -l < $COUNT)\" = 20 ] && [ -z \"\$(sort $COUNT | uniq -d)\" ]"
# Whether a re-sent RUN reached the agent before its spooled results
# reached the scheduler (else the scheduler drops the re-send) is a race;
# the agent's refusal of re-sent logIds is tested for sure by
# test_agent_batch (tests/test_agent.sh)
if [ "$(grep -c 'already accepted, not run again' "$T/agent-w1.log")" -gt "$REPEATED" ]; then
    echo "# b: re-sent RUNs reached the restarted agent, which did not run them again"
else
    echo "# b: the spooled results won the race: no RUN was re-sent this time"
fi

# (c) agent frozen past run_timeout with RUNs queued to it: none of those
# RUNs starts after the thaw.  The scheduler again, with a short
# run_timeout.  The agent says a run lease (20 s here): a RUN it did not
# answer may have been taken, so the scheduler holds it in doubt and asks
# again; once the thawed agent says it never took it, the run is routed
# again (a new RUN of the same logId), and runs once.
kill -TERM "$SPID"
wait "$SPID" 2>/dev/null
sed -i -e 's/run_timeout = [0-9]*/run_timeout = 1000/' -e 's/dead = [0-9]*/dead = 3/' "$T/scheduler.cfg"
start_scheduler "$API" "$AGENTS" || exit 1
check "c: agent registers again" wait_for 10 agent_registered faults-app w1
# The agent is past the dead time (3 s) while frozen, so the 5 triggers go
# at once; a setup where some found no address all the same (a loaded
# machine) is made again, with a new job (up to 3 times)
for attempt in 1 2 3; do
    RUNS="$T/expired$attempt.runs"
    JEXP=$(glue_job 'echo "$1" >> '"$RUNS")
    WARM=$(trigger "$JEXP" --param warm)
    wait_for 10 field_is "$WARM" handleCode 200 || break
    EXPIRED=$(grep -c 'not taken: expired: ' "$T/agent-w1.log")
    AP=$(agent_pid)
    kill -STOP "$AP"
    triggers_at_once "$JEXP" 5 c > "$T/exp.ids"
    empty=$(no_address "$T/exp.ids")
    [ "$empty" = 0 ] || [ "$attempt" = 3 ] && break
    echo "# c: attempt $attempt: $empty of the 5 found no address (the frozen agent judged dead while they went out); made again"
    kill -CONT "$AP"
    wait_for 10 agent_registered faults-app w1
done
check "c: a run goes through" field_is "$WARM" handleCode 200
check "c: 5 triggered" test "$(grep -c '^[0-9]' "$T/exp.ids")" = 5
in_doubt () { local id; for id in $(cat "$T/exp.ids"); do
    grep -q "log $id: no answer from w1 within 1000 ms; asking it again" "$T/scheduler.log" || return 1; done; }
check "c: unanswered, the 5 are held in doubt (the agent may have taken them)" wait_for 10 in_doubt
still_open () { local id; for id in $(cat "$T/exp.ids"); do field_is "$id" triggerCode 0 || return 1; done; }
check "c: not failed while the agent is silent and its lease holds" still_open
kill -CONT "$AP"
expired_read () { [ "$(grep -c 'not taken: expired: ' "$T/agent-w1.log")" -gt "$EXPIRED" ]; }
check "c: the thawed agent reads the RUNs it was frozen with and answers expired" \
    wait_for 10 expired_read
all_done () { local id; for id in $(cat "$T/exp.ids"); do field_is "$id" handleCode 200 || return 1; done; }
check "c: the scheduler, asking again, learns it never took them: it sends them again, they run" \
    wait_for 20 all_done
rerouted () { local id; for id in $(cat "$T/exp.ids"); do
    grep -q "log $id: w1, asked again, never took it; routed again (1 of 3)" "$T/scheduler.log" || return 1; done; }
check "c: the scheduler says so" rerouted
check "c: each of the 5 ran exactly once" bash -c "
    [ \"\$(grep -c '^c[1-5]\$' $RUNS)\" = 5 ] && [ \"\$(grep '^c[1-5]\$' $RUNS | sort -u | wc -l)\" = 5 ]"
AFTER=$(trigger "$JEXP" --param after)
check "c: a run after the thaw goes through" wait_for 10 field_is "$AFTER" handleCode 200

# (d) a clean stop (SIGTERM) with runs running and queued on one job's
# serial queue: the agent says goodbye, lets them finish (agent/drain_s),
# delivers their results and exits; none is killed
JSER=$(glue_job 'sleep 0.4; echo "$1" >> '"$T"'/drained.runs')
for i in 1 2 3 4 5; do trigger "$JSER" --param "d$i"; done > "$T/drain.ids"
AP=$(agent_pid)
# (all five accepted by the agent: the last one's acceptance is written)
wait_for 5 field_is "$(tail -1 "$T/drain.ids")" triggerCode 200
kill -TERM "$AP"
check "d: the agent exits by itself after a clean stop" wait_for 15 bash -c "! kill -0 $AP"
check "d: every queued run ran to its end" test "$(sort -u "$T/drained.runs" | grep -c '^d[1-5]$')" = 5
drained_ok () { local id; for id in $(cat "$T/drain.ids"); do field_is "$id" handleCode 200 || return 1; done; }
check "d: their results reached the scheduler (200, not 'executor stopped')" wait_for 10 drained_ok

# (e) the run lease (2 s) of a frozen agent: the guardian holds it
printf 'agent\n    beat = 1\n    callback_timeout = 1000\n    run_lease = 2\n' > "$T/agent-lease.cfg"
AGENT_CFG="$T/agent-lease.cfg" start_agent w1 faults-app
check "e: agent registers" wait_for 10 agent_registered faults-app w1
JLEASE=$(glue_job 'sleep 600.4343')
LEASED=$(trigger "$JLEASE")
has_proc () { ! no_proc "$1"; }
check "e: its run starts" wait_for 10 has_proc 'sleep 600[.]4343'
AP=$(agent_pid)
kill -STOP "$AP"
FROZEN=$(date +%s%3N)
check "e: the guardian kills the run's processes while the agent is frozen" \
    wait_for 8 no_proc 'sleep 600[.]4343'
echo "# e: the run's process was gone $(( $(date +%s%3N) - FROZEN )) ms after the freeze (lease 2 s, grace 1 s)"
# (it kills, then writes its line: the line may come a moment after)
check "e: the guardian says why" wait_for 5 grep -q "guard: the agent's run lease ran out" "$T/agent-w1.log"
kill -CONT "$AP"
check "e: the thawed agent ends the run failed" wait_for 15 field_is "$LEASED" handleCode 500
AFTER=$(trigger "$JLEASE" --param after)
check "e: once a scheduler answers again, runs are taken" wait_for 15 bash -c "
    $CTL --api $API --json log show $AFTER | jq -e '.triggerCode == 200' >/dev/null"
ctl log kill "$AFTER" >/dev/null 2>&1

# (f) a frozen agent's unanswered RUN fails at its run lease (the agent of
# (e): 2 s), not at the registry's dead time (60 s here): the scheduler
# again, with that dead time.  Its own registry row, written at the
# agent's last REGISTER, is no other scheduler's word of the agent.
kill -TERM "$SPID"
wait "$SPID" 2>/dev/null
sed -i 's/dead = [0-9]*/dead = 60/' "$T/scheduler.cfg"
start_scheduler "$API" "$AGENTS" || exit 1
check "f: agent registers again" wait_for 10 agent_registered faults-app w1
JSIL=$(glue_job 'echo "$1" >> '"$T"'/silent.runs')
OKRUN=$(trigger "$JSIL" --param ok)
check "f: an agent that answers runs the job" wait_for 10 field_is "$OKRUN" handleCode 200
AP=$(agent_pid)
kill -STOP "$AP"
SIL=$(trigger "$JSIL" --param silent)
check "f: the frozen agent's RUN, unanswered, is held in doubt" wait_for 10 \
    grep -q "log $SIL: no answer from w1 within 1000 ms; asking it again" "$T/scheduler.log"
check "f: it fails once the agent's run lease has passed" wait_for 30 field_is "$SIL" triggerCode 500
LEASE_MSG='no answer from the agent within 1000 ms, nor any word from it for its run lease (2 s) since: it holds no run now'
check "f: ... for that reason" bash -c "
    $CTL --api $API --json log show $SIL | jq -r .triggerMsg | grep -qF '$LEASE_MSG'"
check "f: ... while the agent is still registered (not past the dead time)" \
    agent_registered faults-app w1
w1_heard () { ctl agent list | jq -r '.agents[] | select(.address == "w1") | .updateTime'; }
HEARD=$(w1_heard)
EXPIRED=$(grep -c 'not taken: expired: ' "$T/agent-w1.log")
kill -CONT "$AP"
check "f: the thawed agent reads the RUN past its expireTime and refuses it" wait_for 10 \
    bash -c "[ \$(grep -c 'not taken: expired: ' $T/agent-w1.log) -gt $EXPIRED ]"
heard_again () { [ "$(w1_heard)" -gt "$HEARD" ]; }
check "f: the thawed agent registers again" wait_for 10 heard_again
AFTER=$(trigger "$JSIL" --param after)
# (the job's runs are serial on the agent: one taken before runs before it)
check "f: a run after the thaw goes through" wait_for 10 field_is "$AFTER" handleCode 200
check "f: the given-up RUN never ran: one run each of the two others" \
    test "$(sort "$T/silent.runs" | tr '\n' ' ')" = "after ok "
check "f: ... nor started on the agent" test "$(starts "$SIL")" = 0
check "f: the row keeps its one outcome: failed by the lease, no result" bash -c "
    $CTL --api $API --json log show $SIL | jq -e --arg m '$LEASE_MSG' \
        '.triggerCode == 500 and .handleCode == 0 and (.triggerMsg | contains(\$m))
         and ((.handleMsg // \"\") | contains(\"a result came after\") | not)' >/dev/null"
xxl_done
