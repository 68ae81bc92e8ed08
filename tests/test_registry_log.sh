#!/usr/bin/env bash
# test_registry_log.sh -- the registry's info lines ("registered",
# "unregistered") are ones a peer can provoke at will: the scheduler
# writes a burst of 1,000, then 10 a second, and the next line that goes
# out counts those left out.  A flood of 2,400 (one connection registering
# and unregistering 1,200 new addresses) is logged in part, and every line
# is accounted for.
. "$(dirname "$0")/lib.sh"
xxl_store_blind "the registry's log lines"
xxl_setup
PEER="$XXL_PEER"
start_scheduler || exit 1
N=1200
args=()
for i in $(seq 1 $N); do
    args+=(-- send REGISTER registryGroup=s:EXECUTOR registryKey=s:app-f registryValue=s:f$i
           -- send UNREGISTER registryGroup=s:EXECUTOR registryKey=s:app-f registryValue=s:f$i)
done
"$PEER" "$AGENTS" --timeout 4000 "${args[@]}" > "$T/flood.json"
check "the flood's $((2 * N)) requests were all answered 200" \
    jq -se --argjson n $((2 * N)) 'length == $n and all(.code == 200)' "$T/flood.json"
lines () { grep -cE "registry: app-f/[a-z0-9]+ (un)?registered" "$T/scheduler.log"; }
printed=$(lines)
check "the scheduler wrote part of them: 1,000 and the refill ($printed lines)" \
    test "$printed" -ge 1000 -a "$printed" -lt $((2 * N))
# One more, once the bucket has a token again: its line counts the rest
left_out () { grep -oE "app-f/g[0-9]+ registered \(and [0-9]+ lines like it left out before\)" "$T/scheduler.log"; }
more=0
counted () {
    more=$((more + 1))
    "$PEER" "$AGENTS" --timeout 4000 -- send REGISTER registryGroup=s:EXECUTOR \
        registryKey=s:app-f registryValue=s:g$more > /dev/null
    left_out > /dev/null
}
check "a later line says how many were left out" wait_for 20 counted
skipped=$(grep -oE "registry: app-f/.* \(and [0-9]+ lines like it left out before\)" "$T/scheduler.log" \
          | grep -oE "and [0-9]+ lines" | grep -oE "[0-9]+" | awk '{ s += $1 } END { print s + 0 }')
total=$(lines)
# (every event is either a line or counted as left out: the lines written
# after the flood are the g registrations, the counting one among them)
check "... lines written + lines left out = every registration and unregistration ($total + $skipped = $((2 * N)) + $more)" \
    test $((total + skipped)) -eq $((2 * N + more))
check "the scheduler is alive" kill -0 "$SPID"
xxl_done
