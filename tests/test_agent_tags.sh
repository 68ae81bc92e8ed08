#!/usr/bin/env bash
# test_agent_tags.sh -- agent tags (DESIGN §13) on two real agents of one
# group: xxl-agent --tag and agent/tags (bad ones refused at start), the
# tags in agent list, a job's --agent-tags (canonical, bad ones refused),
# routes choosing only among the matching agents (ROUND, FAILOVER,
# SHARDING_BROADCAST), a job no agent matches failing with the tags named,
# an explicit --address winning, an agent restarted with other tags
# taking the runs of its new tags only, and a tagged trigger made while
# the scheduler's agents reconnect after its start waiting for its agent.
. "$(dirname "$0")/lib.sh"
xxl_store_blind "agent tags: the registry and the routes (a job's tags in the store: test_store)"
xxl_setup
cat >> "$T/scheduler.cfg" <<CFG
    planner
        warmup = 15000
CFG

# Bad tags stop the agent at start, with the reason
timeout 10 "$AGENT" --app tag-app --scheduler tcp://127.0.0.1:1 --tag 'zone eu' > "$T/bad1" 2>&1
check "--tag without KEY=VALUE: exit 2" test $? = 2
check "... saying why" grep -q "xxl-agent: --tag: tag 'zone eu' must be KEY=VALUE" "$T/bad1"
timeout 10 "$AGENT" --app tag-app --scheduler tcp://127.0.0.1:1 --tag zone=eu --tag zone=us > "$T/bad2" 2>&1
check "a key given twice: exit 2, named" bash -c "[ $? = 2 ] && grep -q \"tag key 'zone' given twice\" $T/bad2"
printf 'agent\n    tags = "zone=eu,gpu=a b"\n' > "$T/bad.cfg"
timeout 10 "$AGENT" -c "$T/bad.cfg" --app tag-app --scheduler tcp://127.0.0.1:1 > "$T/bad3" 2>&1
check "agent/tags with a bad value: exit 2, named" bash -c "[ $? = 2 ] && grep -q \"agent/tags: tag 'gpu=a b'\" $T/bad3"

start_scheduler || exit 1
export CTL API
export -f ctl
# t-eu by flags, t-us by its config file
cp "$T/agent.cfg" "$T/agent-us.cfg"
printf '    tags = "zone=us"\n' >> "$T/agent-us.cfg"
start_agent t-eu tag-app --tag zone=eu --tag gpu=true
AGENT_CFG="$T/agent-us.cfg" start_agent t-us tag-app
for a in t-eu t-us; do check "$a registers" wait_for 10 agent_registered tag-app "$a"; done
ctl group add tag-app >/dev/null

tags_of () { ctl agent list | jq -r --arg a "$1" '.agents[] | select(.address == $a) | .tags'; }
check "agent list: t-eu's tags, sorted by key" test "$(tags_of t-eu)" = "gpu=true,zone=eu"
check "agent list: t-us's tags from agent/tags" test "$(tags_of t-us)" = "zone=us"
check "agent list's table has a TAGS column" bash -c "
    $CTL --api $API agent list | grep -E '^APP +ADDRESS +STATE +UPDATED +TAGS' &&
    $CTL --api $API agent list | grep -E '^tag-app +t-eu .*gpu=true,zone=eu'"

# A REGISTER with bad tags is refused (400) and registers nothing
"$XXL_REQ" "$AGENTS" REGISTER registryGroup=s:EXECUTOR registryKey=s:tag-app \
    registryValue=s:t-bad "tags=s:zone=eu,,x=1" > "$T/reg.json"
check "REGISTER with bad tags: 400 naming them" bash -c "
    jq -e '.code == 400 and (.msg | startswith(\"tags: tags '\''zone=eu,,x=1'\'': an empty tag\"))' $T/reg.json"
check "... and t-bad is not listed" bash -c "! ctl agent list | jq -e '.agents | any(.address == \"t-bad\")'"

# trigger_n JOB N: triggers N times, one after the other, printing where
# each ran
trigger_n () {
    local id
    for _ in $(seq "$2"); do
        id=$(ctl --get '.logIds[0]' job trigger "$1")
        wait_for 10 log_finished "$id"
        log_field "$id" executorAddress
    done
}
job () { ctl job add --group tag-app --handler demoJobHandler --route "$1" --agent-tags "$2" | jq -r .id; }

EU=$(job ROUND ' zone=eu , gpu=true ')
check "job show: agentTags canonical" test "$(ctl --get .agentTags job show "$EU")" = "gpu=true,zone=eu"
trigger_n "$EU" 4 > "$T/eu"
check "ROUND with gpu=true,zone=eu: only t-eu" test "$(sort -u "$T/eu")" = t-eu
US=$(job ROUND zone=us)
trigger_n "$US" 4 > "$T/us"
check "ROUND with zone=us: only t-us" test "$(sort -u "$T/us")" = t-us
ANY=$(job ROUND '')
trigger_n "$ANY" 4 > "$T/any"
check "ROUND without tags: both agents" test "$(sort -u "$T/any" | tr '\n' ' ')" = "t-eu t-us "
FO=$(job FAILOVER zone=us)
trigger_n "$FO" 2 > "$T/fo"
check "FAILOVER with zone=us: t-us (t-eu, first, not probed)" test "$(sort -u "$T/fo")" = t-us
SB=$(job SHARDING_BROADCAST gpu=true)
ctl job update "$SB" --handler shardingJobHandler >/dev/null
ctl job trigger "$SB" > "$T/sb.json"
check "broadcast with gpu=true: one shard" test "$(jq '.logIds | length' "$T/sb.json")" = 1
SB1=$(jq -r '.logIds[0]' "$T/sb.json")
wait_for 10 log_finished "$SB1"
check "... 0/1 on t-eu" test "$(ctl log show "$SB1" | jq -r '.executorShardingParam + " " + .executorAddress')" = "0/1 t-eu"

# No agent with the tags: the trigger fails, naming group and tags
AP=$(job FIRST zone=ap)
ID=$(ctl --get '.logIds[0]' job trigger "$AP")
wait_for 10 log_finished "$ID"
check "zone=ap: trigger failed (500)" test "$(log_field "$ID" triggerCode)" = 500
check "... saying no agent of group tag-app has tags zone=ap" bash -c "
    ctl log show $ID | jq -r .triggerMsg | grep -q 'trigger failed: no agent of group tag-app has tags zone=ap'"
check "... the trigger text lists the job's tags" bash -c "
    ctl log show $ID | jq -r .triggerMsg | grep -q '^Agent tags: zone=ap'"
# A group with no agent at all fails as ever
ctl group add tag-empty >/dev/null
EMPTY=$(ctl --get .id job add --group tag-empty --handler demoJobHandler --agent-tags zone=eu)
ID=$(ctl --get '.logIds[0]' job trigger "$EMPTY")
wait_for 10 log_finished "$ID"
check "a tagged job of a group with no agent: 'the address list is empty'" bash -c "
    ctl log show $ID | jq -r .triggerMsg | grep -q 'trigger failed: the address list is empty'"
# An explicit address wins over the job's tags
ID=$(ctl --get '.logIds[0]' job trigger "$AP" --address t-us)
wait_for 10 log_finished "$ID"
check "--address t-us runs a zone=ap job there" bash -c "
    [ \"\$($CTL --api $API --json log show $ID | jq -r '.executorAddress + \" \" + (.handleCode | tostring)')\" = 't-us 200' ]"
check "... the trigger text says the tags were not applied" bash -c "
    ctl log show $ID | jq -r .triggerMsg | grep -q 'Agent tags: zone=ap (not applied: addresses given with the trigger)'"

# Bad agentTags are refused, the job unchanged
check "job add with a bad tag: refused, named" bash -c "
    ctl job add --group tag-app --handler demoJobHandler --agent-tags 'zone' 2>&1 |
    grep -q \"agentTags: tag 'zone' must be KEY=VALUE\""
check "job update with a key twice: refused" bash -c "
    ! ctl job update $EU --agent-tags zone=eu,zone=us >/dev/null 2>&1"
check "... the job's tags unchanged" test "$(ctl --get .agentTags job show "$EU")" = "gpu=true,zone=eu"
check "job update --agent-tags '' clears them" bash -c "
    ctl job update $AP --agent-tags '' >/dev/null && [ \"\$($CTL --api $API --json job show $AP | jq -r .agentTags)\" = '' ]"
ctl job update "$AP" --agent-tags zone=ap >/dev/null

# t-us restarts as zone=ap: zone=ap jobs go to it, zone=us ones fail,
# also the fires of a FIX_RATE zone=us job planned (and routed) ahead
RATE=$(ctl --get .id job add --group tag-app --handler demoJobHandler --fix-rate 1 --agent-tags zone=us \
       --start)
check "a FIX_RATE 1 s zone=us job runs on t-us" wait_for 15 job_ran "$RATE" 3
check "... only there" test "$(ctl log list --job "$RATE" --limit 1000 |
    jq -r '[.logs[] | select(.handleCode == 200) | .executorAddress] | unique | join(",")')" = t-us
kill -TERM "$APID_t_us"
wait "$APID_t_us" 2>/dev/null
printf 'agent\n    beat = 1\n    tags = "zone=ap"\n' > "$T/agent-ap.cfg"
AGENT_CFG="$T/agent-ap.cfg" start_agent t-us tag-app
check "t-us back with zone=ap" wait_for 10 bash -c "[ \"\$($CTL --api $API --json agent list |
    jq -r '.agents[] | select(.address == \"t-us\" and .connected) | .tags')\" = zone=ap ]"
BACK=$(date +%s%3N)
# (its fires planned up to the pre-read, 5 s, ahead of t-us's return)
rate_failed_since () {
    ctl log list --job "$RATE" --limit 1000 | jq -e --argjson t "$((BACK + 6000))" \
        'any(.logs[]; .scheduleTime > $t and .triggerCode == 500)' >/dev/null
}
check "the FIX_RATE zone=us job's fires fail once t-us is zone=ap" wait_for 20 rate_failed_since
check "... none planned after t-us's return ran there" test "$(ctl log list --job "$RATE" --limit 1000 |
    jq --argjson t "$BACK" '[.logs[] | select(.scheduleTime > $t and .handleCode == 200)] | length')" = 0
ctl job stop "$RATE" >/dev/null
trigger_n "$AP" 2 > "$T/ap"
check "zone=ap now runs on t-us" test "$(sort -u "$T/ap")" = t-us
ID=$(ctl --get '.logIds[0]' job trigger "$US")
wait_for 10 log_finished "$ID"
check "zone=us now fails, naming its tags" bash -c "
    ctl log show $ID | jq -r .triggerMsg | grep -q 'no agent of group tag-app has tags zone=us'"
trigger_n "$EU" 2 > "$T/eu2"
check "gpu=true,zone=eu still only t-eu" test "$(sort -u "$T/eu2")" = t-eu

# The warm-up: restarted while t-eu is frozen, the scheduler holds a
# gpu=true,zone=eu trigger until t-eu is back (t-us back first does not
# end the wait, nor fail it: t-us lacks the tags)
kill -STOP "$APID_t_eu"
kill -KILL "$SPID"; wait "$SPID" 2>/dev/null
check "the scheduler starts again, t-eu frozen" start_scheduler "$API" "$AGENTS" || { xxl_done; exit 1; }
ID=$(ctl --get '.logIds[0]' job trigger "$EU")
check "a gpu=true,zone=eu trigger in the warm-up is acknowledged" test "${ID:-null}" != null
check "... t-us is back" wait_for 10 agent_registered tag-app t-us
check "... the trigger waits (not failed)" field_is "$ID" triggerCode 0
kill -CONT "$APID_t_eu"
check "... and runs on t-eu once it is back" wait_for 20 bash -c "
    [ \"\$($CTL --api $API --json log show $ID | jq -r '.executorAddress + \" \" + (.handleCode | tostring)')\" = 't-eu 200' ]"

xxl_done
