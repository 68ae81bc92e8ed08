#!/usr/bin/env bash
# test_routing.sh -- routing strategies on three real agents: distributions,
# SHARDING_BROADCAST, FAILOVER with a frozen agent, BUSYOVER with a busy one,
# a user's router plugin dropped into the routers folder, a bad one refused.
. "$(dirname "$0")/lib.sh"
xxl_store_blind "routing strategies and router plugins (the registry's agents; their rows' writes run on both stores in test_services.sh and the faults)"
xxl_setup

# The routers folder: the shipped ones, a user's own, and a broken one
mkdir -p "$T/routers"
cp "$XXL_BUILD"/plugins/routers/.libs/*.so "$T/routers/"
cp "$XXL_TEST_PLUGINS/custom_router.so" "$XXL_TEST_PLUGINS/bad_router_abi.so" "$T/routers/"
cat >> "$T/scheduler.cfg" <<CFG
    pools
        probe_timeout = 600
        slow_count = 3
CFG
#   A frozen agent stays registered through the FAILOVER tests (it misses
#   its beats while stopped)
sed -i 's/dead = 3$/dead = 60/' "$T/scheduler.cfg"
XXL_SCHEDULER_ARGS="--plugins $T/routers"
start_scheduler || exit 1
check "a router with a wrong ABI is refused with a log line" \
    grep -q "bad_router_abi.*ABI" "$T/scheduler.log"
for a in r1 r2-tag r3; do start_agent "$a" route-app; done
for a in r1 r2-tag r3; do check "$a registers" wait_for 10 agent_registered route-app "$a"; done
ctl group add route-app >/dev/null

# trigger_n JOB N: triggers N times, waits for all, prints the addresses in order
trigger_n () {
    local ids="" id
    for _ in $(seq "$2"); do
        id=$(ctl --get '.logIds[0]' job trigger "$1")
        ids="$ids $id"
        wait_for 10 log_finished "$id"
    done
    for id in $ids; do log_field "$id" executorAddress; done
}
job () { ctl job add --group route-app --handler demoJobHandler --route "$1" | jq -r .id; }
count_of () { grep -c "^$1\$" "$2" || true; }

trigger_n "$(job FIRST)" 4 > "$T/first"
check "FIRST: always the first address" test "$(sort -u "$T/first")" = r1
trigger_n "$(job LAST)" 4 > "$T/last"
check "LAST: always the last address" test "$(sort -u "$T/last")" = r3
trigger_n "$(job ROUND)" 9 > "$T/round"
check "ROUND: each agent three times in nine" test "$(sort "$T/round" | uniq -c | awk '{print $1}' | sort -u)" = 3
check "ROUND: a cycle never repeats an agent" bash -c "
    [ \"\$(sed -n 1,3p $T/round | sort -u | wc -l)\" = 3 ] && [ \"\$(sed -n 4,6p $T/round | sort -u | wc -l)\" = 3 ]"
trigger_n "$(job RANDOM)" 30 > "$T/random"
check "RANDOM: all three agents chosen in 30 triggers" test "$(sort -u "$T/random" | wc -l)" = 3
trigger_n "$(job CONSISTENT_HASH)" 6 > "$T/hash"
check "CONSISTENT_HASH: one job stays on one agent" test "$(sort -u "$T/hash" | wc -l)" = 1
#   LFU starts each address at a random count below the address count and
#   then always picks the least used: over 15 triggers every agent is used
#   and no two agents differ by more than the starting spread (2) plus one
trigger_n "$(job LEAST_FREQUENTLY_USED)" 15 > "$T/lfu"
check "LFU: all three agents used, evened out" bash -c "
    [ \$(sort -u $T/lfu | wc -l) = 3 ] &&
    sort $T/lfu | uniq -c | awk 'NR == 1 {lo = \$1; hi = \$1} {if (\$1 < lo) lo = \$1; if (\$1 > hi) hi = \$1} END {exit !(hi - lo <= 3)}'"
trigger_n "$(job LEAST_RECENTLY_USED)" 6 > "$T/lru"
check "LRU: each agent twice in six" test "$(sort "$T/lru" | uniq -c | awk '{print $1}' | sort -u)" = 2
trigger_n "$(job TAG_FIRST)" 3 > "$T/tag"
check "a user's router plugin routes by its name" test "$(sort -u "$T/tag")" = r2-tag

# SHARDING_BROADCAST: one run per agent, shard i/n on the i-th address
SB=$(job SHARDING_BROADCAST)
ctl job update "$SB" --handler shardingJobHandler >/dev/null
ctl job trigger "$SB" > "$T/sb.json"
check "broadcast: three log ids" test "$(jq '.logIds | length' "$T/sb.json")" = 3
for i in 0 1 2; do
    id=$(jq -r ".logIds[$i]" "$T/sb.json")
    wait_for 10 log_finished "$id"
    addr=$(sed -n "$((i + 1))p" <<< "$(printf 'r1\nr2-tag\nr3\n')")
    check "broadcast: shard $i/3 ran on $addr" bash -c "
        [ \"\$($CTL --api $API --json log show $id | jq -r '.executorShardingParam + \" \" + .executorAddress')\" = '$i/3 $addr' ]"
    check "broadcast: shard $i/3 handler saw its shard" bash -c "
        $CTL --api $API --json log cat $id | jq -r .logContent | grep -q 'index = $i, total = 3'"
done
ONE=$(ctl job trigger "$SB" --shard 1/3 | jq -r '.logIds | length')
check "--shard 1/3 sends a single shard" test "$ONE" = 1

# FAILOVER: the first agent frozen; the probe fails over to the next
FO=$(job FAILOVER)
kill -STOP "$APID_r1"
L=$(ctl --get '.logIds[0]' job trigger "$FO")
check "FAILOVER run finishes" wait_for 15 log_finished "$L"
check "FAILOVER skips the frozen agent" test "$(log_field "$L" executorAddress)" = r2-tag
check "FAILOVER's probe results are in triggerMsg" bash -c "
    $CTL --api $API --json log show $L | jq -r .triggerMsg | grep -q 'r1'"
#   Each probe's line ends before the next part: "address: r2-tag" on a line
#   of its own after the probe lines
check "FAILOVER's probe lines end with a new line" bash -c "
    $CTL --api $API --json log show $L | jq -r .triggerMsg | grep -qx 'address: r2-tag'"
#   Only the frozen agent to probe: the run fails, the failure on its own line
LF=$(ctl --get '.logIds[0]' job trigger "$FO" --address r1)
check "FAILOVER with no address answering fails" wait_for 15 field_is "$LF" triggerCode 500
check "its failure follows the probe lines on a line of its own" bash -c "
    $CTL --api $API --json log show $LF | jq -r .triggerMsg | grep -qx 'trigger failed: no address answered'"
# Each of these triggers waits 600 ms on the frozen agent's probe: over
# slow_ms (500) more than slow_count (here 3) times in the current minute
# moves the job to the slow pool (XXL-JOB's rule, 10 by default), where its
# triggers still succeed.  The count starts again at each minute, so trigger
# one at a time until the job moves: within 10 triggers (~7 s) at most one
# minute boundary passes, and the frozen agent is still within the 15 s
# heartbeat timeout after which the scheduler drops its connection
moved () { grep -q "job $FO is slow to trigger; it moves to the slow pool" "$T/scheduler.log"; }
SLOW_OK=1
for _ in $(seq 10); do
    S=$(ctl --get '.logIds[0]' job trigger "$FO")
    wait_for 5 field_is "$S" triggerCode 200 || SLOW_OK=0
    moved && break
done
check "triggers slower than 500 ms all go through" test "$SLOW_OK" = 1
check "the slow job moved to the slow pool" moved
L2=$(ctl --get '.logIds[0]' job trigger "$FO")
check "on the slow pool, FAILOVER still routes around the frozen agent" \
    wait_for 10 field_is "$L2" executorAddress r2-tag
kill -CONT "$APID_r1"
#   Had the heartbeat timeout dropped it, r1 reconnects and registers again
check "r1 is connected again after SIGCONT" wait_for 10 agent_registered route-app r1

# BUSYOVER: r1 busy with the job; the trigger goes to an idle agent
printf 'sleep 3\n' > "$T/sleep3.sh"
BO=$(ctl --get .id job add --group route-app --glue-type GLUE_SHELL --glue-source "$T/sleep3.sh" --route BUSYOVER)
B1=$(ctl --get '.logIds[0]' job trigger "$BO" --address r1)
wait_for 5 field_is "$B1" triggerCode 200
B2=$(ctl --get '.logIds[0]' job trigger "$BO")
check "BUSYOVER run is accepted" wait_for 10 field_is "$B2" triggerCode 200
check "BUSYOVER avoids the busy agent" test "$(log_field "$B2" executorAddress)" = r2-tag
check "BUSYOVER's idle checks are in triggerMsg" bash -c "
    $CTL --api $API --json log show $B2 | jq -r .triggerMsg | grep -qi 'idle'"
xxl_done
