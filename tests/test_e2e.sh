#!/usr/bin/env bash
# test_e2e.sh -- scheduler and agents end to end on loopback: registration,
# BEAN and GLUE runs with their logs, bad input, agent and scheduler restarts.
. "$(dirname "$0")/lib.sh"
xxl_setup

start_scheduler || exit 1
check "scheduler answers" wait_for 5 ctl agent list
# agent-a takes one run per RUN message (the single form, as an agent
# that does not batch); agent-b takes batches
sed 's/^agent$/agent\n    run_batch = 0/' "$T/agent.cfg" > "$T/agent-single.cfg"
AGENT_CFG="$T/agent-single.cfg" start_agent agent-a demo-app
start_agent agent-b demo-app
check "agent-a registers" wait_for 10 agent_registered demo-app agent-a
check "agent-b registers" wait_for 10 agent_registered demo-app agent-b

GID=$(ctl --get .id group add demo-app --title "Demo")
check "group add returns an id" test "$GID" -gt 0
check "group show lists both agents, sorted" \
    test "$(ctl group show demo-app | jq -c .registryList)" = '["agent-a","agent-b"]'
check "a duplicate group is refused" bash -c "! $CTL --api $API --json group add demo-app >/dev/null"

# BEAN success
JID=$(ctl --get .id job add --group demo-app --handler demoJobHandler --param "hello-bean" --desc bean)
check "job add returns an id" test "$JID" -gt 0
LID=$(ctl --get '.logIds[0]' job trigger "$JID")
check "trigger returns a log id" test "$LID" -gt 0
check "BEAN run finishes" wait_for 10 log_finished "$LID"
check "BEAN triggerCode 200" test "$(log_field "$LID" triggerCode)" = 200
check "BEAN handleCode 200" test "$(log_field "$LID" handleCode)" = 200
check "routed to the FIRST address" test "$(log_field "$LID" executorAddress)" = agent-a
check "triggerMsg explains the trigger" bash -c \
    "$CTL --api $API --json log show $LID | jq -r .triggerMsg | grep -q 'Trigger type: Manual trigger'"
check "triggerMsg: XXL-JOB's lines, in order, then the answer" bash -c \
    "$CTL --api $API --json log show $LID | jq -e '.triggerMsg | test(\"^Trigger type: Manual trigger\\nAdmin address: [^\\n]+\\nExecutor registry type: automatic\\nExecutor addresses: \\\\[agent-a, agent-b\\\\]\\nRoute strategy: FIRST\\nBlock strategy: SERIAL_EXECUTION\\nTimeout: 0\\nFail retry count: 0\\n\\n>>>>>>>>>>> Trigger <<<<<<<<<<<\\naddress: agent-a\\ncode: 200\\nmsg: null\\n$\")' >/dev/null"
check "triggerMsg ends with the agent's answer, once" bash -c \
    "$CTL --api $API --json log show $LID | jq -e '.triggerMsg | endswith(\"address: agent-a\\ncode: 200\\nmsg: null\\n\") and ([match(\">>>>>>>>>>> Trigger\"; \"g\")] | length == 1)' >/dev/null"
check "log row has the log keys" bash -c "$CTL --api $API --json log show $LID | jq -e \
    'has(\"jobId\") and has(\"jobGroup\") and has(\"triggerTime\") and has(\"executorHandler\") and has(\"executorParam\") and has(\"executorShardingParam\") and has(\"executorFailRetryCount\") and has(\"handleTime\") and has(\"handleMsg\") and has(\"scheduleTime\") and has(\"triggerType\")' >/dev/null"
check "log cat shows the handler's output" bash -c \
    "$CTL --api $API --json log cat $LID | jq -r .logContent | grep -q hello-bean"
check "--param overrides the job's param" bash -c "
    L=\$($CTL --api $API --json job trigger $JID --param other-param | jq -r '.logIds[0]');
    for i in \$(seq 100); do [ \"\$($CTL --api $API --json log show \$L | jq -r .handleCode)\" = 200 ] && break; sleep 0.05; done;
    $CTL --api $API --json log cat \$L | jq -r .logContent | grep -q other-param"
check "--address sends to that agent" bash -c "
    L=\$($CTL --api $API --json job trigger $JID --address agent-b | jq -r '.logIds[0]');
    [ \"\$($CTL --api $API --json log show \$L | jq -r .executorAddress)\" = agent-b ]"

# GLUE_SHELL success and failure
printf 'echo "glue says $1"\n' > "$T/ok.sh"
GJ=$(ctl --get .id job add --group demo-app --glue-type GLUE_SHELL --glue-source "$T/ok.sh" --param p1)
GL=$(ctl --get '.logIds[0]' job trigger "$GJ")
check "GLUE_SHELL run finishes" wait_for 10 log_finished "$GL"
check "GLUE_SHELL success" test "$(log_field "$GL" handleCode)" = 200
check "GLUE_SHELL output in log cat" bash -c \
    "$CTL --api $API --json log cat $GL | jq -r .logContent | grep -q 'glue says p1'"
printf 'echo "about to fail" >&2\nexit 3\n' > "$T/fail.sh"
FJ=$(ctl --get .id job add --group demo-app --glue-type GLUE_SHELL --glue-source "$T/fail.sh")
FL=$(ctl --get '.logIds[0]' job trigger "$FJ")
check "failing GLUE finishes" wait_for 10 log_finished "$FL"
check "failing GLUE is 500" test "$(log_field "$FL" handleCode)" = 500
check "failing GLUE names the exit code" bash -c \
    "$CTL --api $API --json log show $FL | jq -r .handleMsg | grep -q 3"
check "failing GLUE's stderr in log cat" bash -c \
    "$CTL --api $API --json log cat $FL | jq -r .logContent | grep -q 'about to fail'"

# Unknown handler: a failed run with the reason
UJ=$(ctl --get .id job add --group demo-app --handler noSuchHandler)
UL=$(ctl --get '.logIds[0]' job trigger "$UJ")
check "unknown handler fails the run" wait_for 10 field_is "$UL" triggerCode 500
check "unknown handler is named" bash -c \
    "$CTL --api $API --json log show $UL | jq -r .triggerMsg | grep -q noSuchHandler"
check "a refused RUN's triggerMsg has the refusal, not an accepting answer" bash -c \
    "$CTL --api $API --json log show $UL | jq -e '.triggerMsg | (contains(\"code: 500\") and (contains(\"code: 200\") | not))' >/dev/null"

# A group with no agents: a failed run saying so
ctl group add lonely-app >/dev/null
LJ=$(ctl --get .id job add --group lonely-app --handler demoJobHandler)
LL=$(ctl --get '.logIds[0]' job trigger "$LJ")
check "no agents: trigger fails" test "$(log_field "$LL" triggerCode)" = 500
check "no agents: reason given" bash -c \
    "$CTL --api $API --json log show $LL | jq -r .triggerMsg | grep -q 'address list is empty'"

# Bad input at job add: clear error, nothing stored
BEFORE=$(ctl job list | jq '.jobs | length')
check "invalid cron refused" bash -c "! $CTL --api $API --json job add --group demo-app --handler demoJobHandler --cron 'not a cron' > $T/err.json"
check "invalid cron reason" grep -q 'cron' "$T/err.json"
check "unknown route refused with the known names, ', '-separated" bash -c \
    "out=\$($CTL --api $API --json job add --group demo-app --handler demoJobHandler --route NOPE 2>&1) && exit 1; \
     grep -qF \"unknown route 'NOPE' (known: BUSYOVER, CONSISTENT_HASH, FAILOVER, FIRST, \" <<<\"\$out\""
check "zero fix-rate refused" bash -c "! $CTL --api $API --json job add --group demo-app --handler demoJobHandler --fix-rate 0 >/dev/null"
# (decimal digits only: ' 5' was taken, and stored with its space)
check "a fix-rate with a space or a sign refused (add and update), digits taken" bash -c "
    for s in ' 5' '+5' '5 '; do
        out=\$($CTL --api $API --json job add --group demo-app --handler demoJobHandler --fix-rate \"\$s\" 2>&1) && exit 1
        grep -qF \"FIX_RATE needs a whole number of seconds from 1 to 316224000 (ten years), not '\$s'\" <<<\"\$out\" || exit 1
    done
    id=\$($CTL --api $API --json job add --group demo-app --handler demoJobHandler --fix-rate 5 | jq -e .id) || exit 1
    out=\$($CTL --api $API --json job update \$id --fix-delay ' 5' 2>&1) && exit 1
    grep -qF \"FIX_DELAY needs a whole number of seconds\" <<<\"\$out\" \
    && $CTL --api $API --json job show \$id | jq -e '.scheduleType == \"FIX_RATE\" and .scheduleConf == \"5\"' >/dev/null \
    && $CTL --api $API job rm \$id >/dev/null"
check "unknown group refused" bash -c "! $CTL --api $API --json job add --group nope --handler demoJobHandler >/dev/null"
check "nothing stored by refused adds" test "$(ctl job list | jq '.jobs | length')" = "$BEFORE"
check "trigger of a missing job fails" bash -c "! $CTL --api $API --json job trigger 999999 >/dev/null"
check "show of a missing log fails with error JSON" bash -c \
    "$CTL --api $API --json log show 999999 | jq -e .error >/dev/null; [ \${PIPESTATUS[0]} -ne 0 ]"

# Malformed frames on both sockets; the scheduler serves on
check "bad frames get clear errors" "$XXL_BUILD/tests/test_badinput" "$API" "$AGENTS"
check "scheduler still alive" kill -0 "$SPID"

# Agent restart re-registers
kill -KILL "$APID_agent_a"
wait "$APID_agent_a" 2>/dev/null
start_agent agent-a demo-app
new_registration () { [ "$(grep -c 'agent: registered' "$T/agent-agent-a.log")" -ge 2 ]; }
check "restarted agent is back" wait_for 10 new_registration
check "a run on the restarted agent works" bash -c "
    L=\$($CTL --api $API --json job trigger $JID --address agent-a | jq -r '.logIds[0]');
    for i in \$(seq 100); do [ \"\$($CTL --api $API --json log show \$L | jq -r .handleCode)\" = 200 ] && exit 0; sleep 0.05; done; exit 1"

# A kill right after the trigger: the agent's acceptance may not be
# recorded yet (triggerCode 0 for up to 500 ms), the run is killed anyway
printf 'sleep 30.731\n' > "$T/long.sh"
KJ=$(ctl --get .id job add --group demo-app --glue-type GLUE_SHELL --glue-source "$T/long.sh")
KL=$(ctl --get '.logIds[0]' job trigger "$KJ" --address agent-a)
check "log kill right after the trigger answers" ctl log kill "$KL"
check "the killed run ends failed" wait_for 10 field_is "$KL" handleCode 500
check "its script is gone" wait_for 5 bash -c "! pgrep -f 'sleep 30[.]731' >/dev/null"

# Scheduler restart on the same endpoints: agents reconnect and re-register
kill -TERM "$SPID"
wait "$SPID"
check "scheduler exits 0 on SIGTERM" test $? -eq 0
start_scheduler "$API" "$AGENTS"
check "agents re-register after a scheduler restart" wait_for 10 agent_registered demo-app agent-b
check "data survived the restart" test "$(log_field "$LID" handleCode)" = 200
check "runs work after the restart" bash -c "
    L=\$($CTL --api $API --json job trigger $JID | jq -r '.logIds[0]');
    for i in \$(seq 100); do [ \"\$($CTL --api $API --json log show \$L | jq -r .handleCode)\" = 200 ] && exit 0; sleep 0.05; done; exit 1"

xxl_done
