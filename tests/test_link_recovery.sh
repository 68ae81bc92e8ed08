#!/usr/bin/env bash
# test_link_recovery.sh -- an agent's link to the scheduler when its
# connection breaks without closing: bytes rewritten on the way (a CURVE
# message that does not decrypt: libzmq 4.3.4 stops reading that
# connection, or never reconnects), or a network that drops everything
# while the connection stays open (no ZMTP heartbeats find it).  The agent
# gives the link a new connection and registers again; an agent whose link
# is well keeps its connection; and no stop (the agent's, the scheduler's,
# the relay's, all at once) aborts a daemon (lib.sh fails a crash).
. "$(dirname "$0")/lib.sh"
xxl_store_blind "an agent's link to the scheduler"
xxl_setup
C="$T/certs"; K="$T/keys"
mkdir -p "$C" "$K"
keygen () { "$CTL" keygen "$@" --dir "$C" >/dev/null; }
keygen scheduler --role admin
keygen boss --role admin
keygen agent --role agent --apps app-t,app-k,app-h,app-w
cp "$C/boss.cert" "$C/agent.cert" "$K/"
XXL_SCHEDULER_ARGS="--cert $C/scheduler.cert_secret --keys $K"
start_scheduler || exit 1
SK="$C/scheduler.cert"
as () { "$CTL" --api "$API" --cert "$C/boss.cert_secret" --scheduler-key "$SK" --timeout 3000 --json "$@"; }
mkdir -p "$T/plugins"
cp "$XXL_TEST_PLUGINS/test_handlers.so" "$HANDLERS/demo.so" "$T/plugins/"
registered () { as agent list | jq -e --arg a "$1" --arg n "$2" '.agents | any(.app == $a and .address == $n and .connected)' >/dev/null; }
registrations () { [ "$(grep -c 'agent: registered with' "$T/agent-$1.log")" -ge "$2" ]; }
ran () { [ "$(as log show "$1" | jq -r .handleCode)" = 200 ]; }
ended () { [ "$(as log show "$1" | jq -r '.handleCode != 0 or .triggerCode == 500')" = true ]; }
RELAY="$XXL_RELAY"
relay () {           # NAME MODE: starts a relay to the agents socket, sets RELAY_EP and RELAY_PID
    "$RELAY" "$T/$1.port" 127.0.0.1 "${AGENTS##*:}" "$2" "$T/$1.bytes" &
    RELAY_PID=$!
    PIDS="$PIDS $RELAY_PID"
    wait_for 5 test -s "$T/$1.port"
    RELAY_EP="tcp://127.0.0.1:$(cat "$T/$1.port")"
}
relayed_agent () {   # NAME APP ENDPOINT
    XXL_OUT="$T/ran-$1" "$AGENT" -c "$T/agent.cfg" --app "$2" --scheduler "$3" --address "$1" \
        --plugins "$T/plugins" --logdir "$T/logs-$1" --cert "$C/agent.cert_secret" \
        --scheduler-key "$SK" >>"$T/agent-$1.log" 2>&1 &
    AGENT_PID=$!
    PIDS="$PIDS $!"
}
# A GLUE source over 4 KiB (the flipping relay rewrites what the scheduler
# sends past the first 4 KiB of a connection)
{ echo "echo ran > \"\$XXL_OUT\""; for i in $(seq 80); do echo "# padding line $i ......................................................"; done; } > "$T/glue.sh"
as group add app-t >/dev/null
as group add app-h >/dev/null
as group add app-k >/dev/null
as group add app-w >/dev/null

# Rewritten bytes: the RUN does not decrypt; the agent connects again
relay tamper flip
relayed_agent node-t app-t "$RELAY_EP"
check "an agent registers through a relay that rewrites" wait_for 15 registered app-t node-t
JT=$(as job add --group app-t --glue-type GLUE_SHELL --glue-source "$T/glue.sh" | jq -r .id)
LT=$(as job trigger "$JT" | jq -r '.logIds[0]')
check "the rewritten RUN ends without running" wait_for 20 ended "$LT"
check "... and the agent never ran it" test ! -e "$T/ran-node-t"
check "the agent gives the broken link a new connection" \
    wait_for 15 grep -q 'failed for good; connecting again' "$T/agent-node-t.log"
check "... and registers on it" wait_for 15 registrations node-t 2
check "... and is listed connected" wait_for 15 registered app-t node-t

# The same, and the relay then closes the stalled connection: the agent
# lives on (libzmq 4.3.4 with ZMTP heartbeats aborted within 5 s)
relay cut flip
CUT_PID=$RELAY_PID
relayed_agent node-k app-k "$RELAY_EP"
K_PID=$AGENT_PID
check "an agent registers through another relay that rewrites" wait_for 15 registered app-k node-k
JK=$(as job add --group app-k --glue-type GLUE_SHELL --glue-source "$T/glue.sh" | jq -r .id)
as job trigger "$JK" >/dev/null
check "... whose RUN does not decrypt" wait_for 20 grep -q 'ZMTP protocol error' "$T/agent-node-k.log"
kill -TERM "$CUT_PID"
check "... and once the relay closed, the agent gives up the connection" \
    wait_for 15 grep -q 'failed for good; connecting again' "$T/agent-node-k.log"
check "... and lives on" kill -0 "$K_PID"

# An agent whose link is well keeps its one connection
relay watch pass
relayed_agent node-w app-w "$RELAY_EP"
check "an agent registers through a relay that passes" wait_for 15 registered app-w node-w
JW=$(as job add --group app-w --glue-type GLUE_SHELL --glue-source "$T/glue.sh" | jq -r .id)
LW=$(as job trigger "$JW" | jq -r '.logIds[0]')
check "... runs through it" wait_for 15 ran "$LW"

# A black hole: the connection stays open and nothing passes; the agent
# gives up on it (its REGISTER unanswered, nothing heard for 15 s) and
# connects again, which gets through once the network is mended
relay hole pass
HOLE_PID=$RELAY_PID
relayed_agent node-h app-h "$RELAY_EP"
check "an agent registers through a relay" wait_for 15 registered app-h node-h
kill -USR2 "$HOLE_PID"
check "... which then drops everything (the relay says so)" \
    wait_for 10 grep -qx hole "$T/hole.port.state"
check "... and the agent connects again" \
    wait_for 40 grep -q 'nothing from .* connecting again' "$T/agent-node-h.log"
kill -HUP "$HOLE_PID"
check "... and registers once the network is mended" wait_for 20 registrations node-h 2
check "... and is listed connected" wait_for 15 registered app-h node-h
check "the agent through the passing relay kept its connection" \
    bash -c "! grep -q 'connecting again' '$T/agent-node-w.log' && [ \$(grep -c 'agent: registered with' '$T/agent-node-w.log') = 1 ]"
# (xxl_done stops the scheduler, the relays and the agents at once; a crash
# of any of them fails the test)
xxl_done
