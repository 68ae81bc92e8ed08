#!/usr/bin/env bash
# test_registry_limit.sh -- scheduler/registry/agents bounds the agents the
# registry holds: a REGISTER past it is answered 429 (and logged), a
# refresh and a draining address's return are taken, and an address
# frees its place once it leaves: unregistered with no connection at
# once, unregistered while draining when its connection closes.  Distinct
# addresses over time are not bounded by the limit, only those held.
. "$(dirname "$0")/lib.sh"
xxl_store_blind "the registry's bound"
xxl_setup
PEER="$XXL_PEER"
# (a long dead time: nothing expires here, places free up only as said)
cat > "$T/scheduler.cfg" <<CFG
scheduler
    registry
        beat = 1
        dead = 600
        agents = 3
    run_timeout = 5000
    request_timeout = 3000
CFG
start_scheduler || exit 1

peer () { "$PEER" "$AGENTS" --timeout 4000 "$@"; }
reg () { echo -- send REGISTER registryGroup=s:EXECUTOR registryKey=s:"$1" registryValue=s:"$2"; }
unreg () { echo -- send UNREGISTER registryGroup=s:EXECUTOR registryKey=s:"$1" registryValue=s:"$2"; }
codes () { jq -sc '[.[].code]' "$1"; }
listed () { ctl agent list | jq -c '[.agents[] | .app + "/" + .address] | sort'; }
connected () { ctl agent list | jq -e --arg n "$1" '.agents | any(.address == $n and .connected)' >/dev/null; }
gone () { ctl agent list | jq -e --arg n "$1" '.agents | any(.address == $n and (.connected | not))' >/dev/null; }

# One connection: three agents fit, a fourth does not, nor another app of
# a held address; a refresh does; r3 unregistered on this open connection
# (draining) still holds its place, and takes it back
peer $(reg app-r r1) $(reg app-r r2) $(reg app-r r3) $(reg app-r r4) $(reg app-s r1) \
     $(reg app-r r1) $(unreg app-r r3) $(reg app-r r4) $(reg app-r r3) > "$T/p1.json"
check "3 agents register, a 4th and another app of a held address are refused (429), a refresh is taken, a draining address holds its place and takes it back" \
    test "$(codes "$T/p1.json")" = "[200,200,200,429,429,200,200,429,200]"
check "... the refusal says why" \
    jq -se '.[3].msg | test("registry holds its limit of 3 agents")' "$T/p1.json"
check "... the registry lists the three" \
    test "$(listed)" = '["app-r/r1","app-r/r2","app-r/r3"]'
check "... and the scheduler logged a refusal" \
    grep -q "registry: REGISTER refused (429): the registry holds its limit of 3" "$T/scheduler.log"

# p1's connection closed: its addresses stay listed (for the dead time) and
# hold their places, not connected
check "the closed connection's addresses are shown not connected" \
    wait_for 20 gone r1
peer $(reg app-r r4) > "$T/p2.json"
check "a listed address that lost its connection holds its place (429)" \
    test "$(codes "$T/p2.json")" = "[429]"
# r1 unregistered (it has no connection): its place is free at once
peer $(unreg app-r r1) $(reg app-r r4) > "$T/p3.json"
check "an address unregistered with no connection frees its place at once" \
    test "$(codes "$T/p3.json")" = "[200,200]"

# Draining: a new address unregisters on its open connection and holds
# its place until the connection closes; then, within the liveness beat,
# the place is free.  In cycles, each with an address never seen before
register_d () { peer $(reg app-r "$1") > "$T/d.json"; test "$(codes "$T/d.json")" = "[200]"; }
peer $(unreg app-r r2) > "$T/p4.json"
check "r2 unregistered (no connection)" test "$(codes "$T/p4.json")" = "[200]"
for c in 1 2 3; do
    peer $(reg app-r "d$c") $(unreg app-r "d$c") $(reg app-r "x$c") > "$T/c$c.json"
    check "cycle $c: d$c registers and unregisters; while it drains x$c is refused (429)" \
        test "$(codes "$T/c$c.json")" = "[200,200,429]"
    check "... d$c's connection closed: its place frees, x$c registers" \
        wait_for 20 register_d "x$c"
    wait_for 20 gone "x$c"
    peer $(unreg app-r "x$c") > "$T/u$c.json"
    check "... and x$c leaves (unregistered, its connection closed)" \
        test "$(codes "$T/u$c.json")" = "[200]"
done
check "the registry holds what is live: r3 and r4" \
    test "$(listed)" = '["app-r/r3","app-r/r4"]'

# AGENT_LIST in pages: limit, offset, truncated and nextOffset
page () { ctl agent list "$@" | jq -c '[(.agents | map(.address)), .truncated, .nextOffset]'; }
first_page () { page --limit 1 | jq -e '(.[0] | length == 1) and .[1] == true and .[2] == 1' >/dev/null; }
last_page () { page --offset 1 | jq -e '(.[0] | length == 1) and .[1] == false and .[2] == null' >/dev/null; }
check "agent list --limit 1: one agent, truncated, nextOffset 1" first_page
check "... --offset 1: the other one, not truncated" last_page
check "... the two pages are the two agents" \
    test "$( (page --limit 1 | jq -r '.[0][]'; page --offset 1 | jq -r '.[0][]') | sort | tr '\n' ' ')" = "r3 r4 "
check "... the table names the next offset" \
    bash -c "'$CTL' --api '$API' agent list --limit 1 | grep -q 'more agents: from --offset 1'"
check "the scheduler is alive" kill -0 "$SPID"
xxl_done
