#!/usr/bin/env bash
# test_security.sh -- a keyed scheduler (CURVE, --keys): who may connect,
# what each role may send, what an agent key may register, and that a
# peer cannot finish or unregister another agent's runs.  Every refusal
# is paired with the same setup accepting the allowed case.
. "$(dirname "$0")/lib.sh"
xxl_store_blind "CURVE keys and their roles (a --keys file)"
xxl_setup
PEER="$XXL_PEER"
C="$T/certs"; K="$T/keys"
mkdir -p "$C" "$K"
keygen () { "$CTL" keygen "$@" --dir "$C" >/dev/null; }
keygen scheduler --role admin
keygen boss --role admin
keygen op --role operator --apps app-a
keygen watcher --role viewer
keygen agent-a --role agent --apps app-a
keygen agent-b --role agent --apps app-b
keygen agent-a2 --role agent --apps app-a
keygen agent-g --role agent --apps app-g,app-t
keygen agent-m --role agent --apps app-m
keygen rogue --role admin                 # never put in the keys folder
for n in boss op watcher agent-a agent-b agent-a2 agent-g agent-m; do cp "$C/$n.cert" "$K/"; done
check "keygen wrote a public and a secret certificate per key" \
    test -f "$C/boss.cert" -a -f "$C/boss.cert_secret"

XXL_SCHEDULER_ARGS="--cert $C/scheduler.cert_secret --keys $K"
PEER="$XXL_PEER"
start_scheduler || exit 1
SK="$C/scheduler.cert"
as () { local who="$1"; shift; "$CTL" --api "$API" --cert "$C/$who.cert_secret" --scheduler-key "$SK" --timeout 3000 --json "$@"; }
code_of () { jq -r '.code // 200'; }

# Who may connect
check "an admin key is let in" bash -c "$(declare -f as); C=$C SK=$SK API=$API CTL=$CTL as boss group list >/dev/null"
check "a client without keys gets nothing from a keyed scheduler" \
    bash -c "! timeout 10 $CTL --api $API --timeout 2000 --json group list >/dev/null 2>&1"
check "a key not in the keys folder is refused at the handshake" \
    bash -c "! timeout 10 $CTL --api $API --cert $C/rogue.cert_secret --scheduler-key $SK --timeout 2000 --json group list >/dev/null 2>&1"

# Roles at the api
as boss group add app-a >/dev/null
as boss group add app-b >/dev/null
GA=$(as boss group list | jq -r '.groups[] | select(.appname == "app-a") | .id')
JA=$(as boss job add --group app-a --handler demoJobHandler | jq -r .id)
JB=$(as boss job add --group app-b --handler demoJobHandler | jq -r .id)
check "an admin adds groups and jobs" test -n "$GA" -a -n "$JA" -a -n "$JB"
as watcher job list > "$T/w-list.json"
check "a viewer reads" jq -e '.jobs | length == 2' "$T/w-list.json"
as watcher job trigger "$JA" > "$T/w-trig.json" 2>&1
check "a viewer may not trigger (403, with the reason)" \
    bash -c "grep -q 'may not' '$T/w-trig.json' && grep -q 'operator' '$T/w-trig.json'"
"$PEER" "$API" --cert "$C/watcher.cert_secret" --scheduler-key "$SK" -- send JOB_TRIGGER jobId="$JA" \
    -- send JOB_LIST > "$T/w-wire.json"
check "... its reply code is 403, while its reads are answered 200" \
    jq -se '.[0].code == 403 and .[1].code == 200' "$T/w-wire.json"
as watcher group add app-c > "$T/w-add.json" 2>&1
check "a viewer may not add groups (403)" grep -q 'may not' "$T/w-add.json"
as op job trigger "$JA" > "$T/o-trig.json"
check "an operator triggers a job of its app" jq -e '.logIds | length == 1' "$T/o-trig.json"
OL=$(jq -r '.logIds[0]' "$T/o-trig.json")
check "... and the run's row names the key that triggered it" bash -c "
    $(declare -f as); C=$C SK=$SK API=$API CTL=$CTL; as boss log show $OL | jq -r .triggerMsg | grep -q \"Triggered by: key 'op' (operator)\""
check "... which the audit leaves to the row, while it records the refusals" bash -c "
    $(declare -f as); C=$C SK=$SK API=$API CTL=$CTL; as boss audit list | jq -e '
        ([.audit[] | select(.type == \"JOB_TRIGGER\" and .code == 200)] | length) == 0
        and ([.audit[] | select(.who == \"watcher\" and .code == 403)] | length) >= 1' >/dev/null"
as op job trigger "$JB" > "$T/o-trigb.json" 2>&1
check "an operator may not trigger a job of another app (403)" \
    bash -c "grep -q 'may not' '$T/o-trigb.json' && grep -q app-b '$T/o-trigb.json'"
as op job stop "$JA" > "$T/o-stop.json" 2>&1
check "an operator stops a job of its app" bash -c "! grep -q 'may not' '$T/o-stop.json'"
as op job add --group app-a --handler demoJobHandler > "$T/o-add.json" 2>&1
check "an operator may not add jobs (403)" grep -q 'may not' "$T/o-add.json"
as op job update "$JA" --param changed > "$T/o-upd.json" 2>&1
check "an operator may not change a job (403)" grep -q 'may not' "$T/o-upd.json"
as op log clear --all > "$T/o-clear.json" 2>&1
check "an operator may not clear every job's logs (403)" grep -q 'only for one job' "$T/o-clear.json"
as op log clear --job "$JA" --keep-last 100 > "$T/o-clear1.json" 2>&1
check "an operator clears the logs of a job of its app" bash -c "! grep -q 'may not' '$T/o-clear1.json'"
as op job trigger "$JA" --address somewhere > "$T/o-addr.json" 2>&1
check "an operator may not choose a trigger's addresses (403)" grep -q 'may not' "$T/o-addr.json"
as agent-a group list > "$T/a-ping.json" 2>&1
check "an agent key may not use the api (403)" grep -q 'may not' "$T/a-ping.json"
as boss job update "$JA" --param changed > "$T/b-upd.json"
check "... where an admin may" bash -c "! grep -q 'may not' '$T/b-upd.json'"

# Agents: a real agent with its key registers and runs
mkdir -p "$T/plugins"
cp "$XXL_TEST_PLUGINS/test_handlers.so" "$HANDLERS/demo.so" "$T/plugins/"
export AGENT_PLUGINS="$T/plugins"
start_agent node-a app-a --cert "$C/agent-a.cert_secret" --scheduler-key "$SK"
registered () { as boss agent list | jq -e --arg a "$1" --arg n "$2" '.agents | any(.app == $a and .address == $n and .connected)' >/dev/null; }
check "an agent with its key registers for its app" wait_for 15 registered app-a node-a
LA=$(as boss job trigger "$JA" | jq -r '.logIds[0]')
ran () { [ "$(as boss log show "$1" | jq -r .handleCode)" = 200 ]; }
check "... and runs that app's jobs" wait_for 15 ran "$LA"

peer () { local who="$1"; shift; "$PEER" "$AGENTS" --cert "$C/$who.cert_secret" --scheduler-key "$SK" --timeout 4000 "$@"; }
reg () { echo -- send REGISTER registryGroup=s:EXECUTOR registryKey=s:"$1" registryValue=s:"$2"; }
peer agent-b $(reg app-a rogue-b) > "$T/p1.json"
check "an agent key may not register for another app (403)" \
    jq -se '.[0].code == 403' "$T/p1.json"
peer agent-b $(reg app-b node-b) > "$T/p2.json"
check "... and registers for its own" jq -se '.[0].code == 200' "$T/p2.json"
peer watcher $(reg app-a w-node) > "$T/p3.json"
check "a viewer key may not register as an agent (403)" jq -se '.[0].code == 403' "$T/p3.json"
peer agent-a2 $(reg app-a node-a) > "$T/p4.json"
check "another agent key may not take a connected agent's address (403)" \
    jq -se '.[0].code == 403' "$T/p4.json"
peer agent-a2 $(reg app-a node-a2) > "$T/p5.json"
check "... and registers an address of its own" jq -se '.[0].code == 200' "$T/p5.json"
peer agent-b $(reg app-b node-b) -- send UNREGISTER registryGroup=s:EXECUTOR registryKey=s:app-a \
    registryValue=s:node-a > "$T/p6.json"
check "a peer may not unregister another connection's address (403)" jq -se '.[1].code == 403' "$T/p6.json"
check "... which stays registered" registered app-a node-a
peer agent-b $(reg app-b node-b2) -- send UNREGISTER registryGroup=s:EXECUTOR registryKey=s:app-b \
    registryValue=s:node-b2 > "$T/p7.json"
check "... while it unregisters its own" jq -se '.[1].code == 200' "$T/p7.json"
# An address no connection holds (after a restart, before its agent is
# back, only the store's rows of the dead time name it): an agent key may
# unregister it only for its own apps
peer agent-b -- send UNREGISTER registryGroup=s:EXECUTOR registryKey=s:app-a \
    registryValue=s:node-gone -- send UNREGISTER registryGroup=s:EXECUTOR \
    registryKey=s:app-b registryValue=s:node-gone > "$T/p8.json"
check "an agent key may not unregister another app's unheld address (403), but its own app's (200)" \
    jq -se '.[0].code == 403 and (.[0].msg | test("app-a")) and .[1].code == 200' "$T/p8.json"

# An address stays its app's and its key's while the registry lists it:
# an agent of app-a that vanished (its connection closed, its route gone
# at the next beat), or one draining after UNREGISTER, cannot be replaced
# by another app's key, which would get app-a's runs and post their results
peer agent-a $(reg app-a node-h) > "$T/h1.json"
peer agent-b $(reg app-b node-h) > "$T/h2.json"
check "another app's key may not take the address of an agent of app-a that just left (403)" \
    jq -se '.[0].code == 403 and (.[0].msg | test("app-a"))' "$T/h2.json"
peer agent-a $(reg app-a node-h) > "$T/h3.json"
check "... while that agent's key takes it back" \
    jq -se '.[0].code == 200' "$T/h1.json" "$T/h3.json"
peer agent-a $(reg app-a node-p) -- send UNREGISTER registryGroup=s:EXECUTOR registryKey=s:app-a \
    registryValue=s:node-p -- send REGISTER registryGroup=s:EXECUTOR registryKey=s:app-a \
    registryValue=s:node-q -- expect RUN > "$T/p-drain.json" &
DRAIN_PID=$!
# (the draining peer holds its connection, waiting for a RUN that never comes)
wait_for 10 bash -c "[ \$(wc -l < '$T/p-drain.json') -ge 2 ]"
peer agent-b $(reg app-b node-p) > "$T/h4.json"
wait "$DRAIN_PID"
check "... nor the address of an agent draining after UNREGISTER (403)" \
    jq -se '.[0].code == 403' "$T/h4.json"
# A manual address list: an agent key of another app registered at a
# listed address gets none of the group's runs
as boss group add app-m --address-list node-m,node-m2 >/dev/null
JM=$(as boss job add --group app-m --handler demoJobHandler --route FIRST | jq -r .id)
# (both connected while the job is triggered: the key that registered an
# address counts while the registry holds it; node-m is FIRST's pick)
"$PEER" "$AGENTS" --cert "$C/agent-b.cert_secret" --scheduler-key "$SK" --timeout 6000 \
    $(reg app-b node-m) -- expect RUN > "$T/m1.json" &
M1=$!
wait_for 10 registered app-b node-m
"$PEER" "$AGENTS" --cert "$C/agent-m.cert_secret" --scheduler-key "$SK" --timeout 6000 \
    $(reg app-m node-m2) -- expect RUN -- reply 200 > "$T/m2.json" &
M2=$!
wait_for 10 registered app-m node-m2
LM=$(as boss job trigger "$JM" | jq -r '.logIds[0]')
wait "$M1"
wait "$M2"
check "a manual list's address registered by another app's key gets no RUN" \
    jq -se '.[0].code == 200 and .[1].id == -1' "$T/m1.json"
check "... while its own app's agent at a listed address does" \
    jq -se --argjson l "$LM" '.[1].logId == $l' "$T/m2.json"
# One connection registers at most 16 addresses
steps=""
for i in $(seq 17); do steps="$steps $(reg app-b many-$i)"; done
peer agent-b $steps > "$T/many.json"
check "one connection registers 16 addresses, not a 17th (403)" \
    jq -se '([.[0:16][] | .code] | all(. == 200)) and .[16].code == 403' "$T/many.json"

# Forged callbacks: a run of app-a in flight on node-a; a registered
# peer of app-b reports it failed.  The row keeps the real result
SLOW=$(as boss job add --group app-a --handler sleepInJobHandler --param 2500 | jq -r .id)
LS=$(as boss job trigger "$SLOW" | jq -r '.logIds[0]')
peer agent-b $(reg app-b node-b) -- send CALLBACK items=cb:"$LS":500 > "$T/p8.json"
check "a forged callback is answered as a repeat would be" jq -se '.[1].code == 200' "$T/p8.json"
check "... and does not change the run: it ends with its agent's result" wait_for 15 ran "$LS"
# The same peer's callback for a run that was sent to it counts
JBB=$(as boss job add --group app-b --handler demoJobHandler --route FIRST | jq -r .id)
"$PEER" "$AGENTS" --cert "$C/agent-b.cert_secret" --scheduler-key "$SK" --timeout 8000 \
    $(reg app-b node-b9) -- expect RUN -- reply 200 -- send CALLBACK 'items=cb:$LOG:200' \
    > "$T/p9.json" &
PEER_PID=$!
PIDS="$PIDS $PEER_PID"
wait_for 10 registered app-b node-b9
LB=$(as boss job trigger "$JBB" | jq -r '.logIds[0]')
wait "$PEER_PID"
check "a peer's callback for the run it was sent counts" wait_for 5 ran "$LB"
check "... (it got that run)" jq -se --argjson l "$LB" '.[1].logId == $l' "$T/p9.json"

# A relay between an agent and the scheduler sees only ciphertext, and
# what it rewrites is never run.  The GLUE source carries a marker and
# is over 4 KiB (the flipping relay leaves the first 4 KiB alone)
RELAY="$XXL_RELAY"
MARK="xxl-marker-$RANDOM$RANDOM"
{ echo "echo $MARK > \"\$XXL_OUT\""; for i in $(seq 80); do echo "# padding line $i ......................................................"; done; } > "$T/glue.sh"
relayed_agent () {   # NAME APP SCHEDULER_ENDPOINT [agent flags]
    local name="$1" app="$2" ep="$3"; shift 3
    XXL_OUT="$T/ran-$name" "$AGENT" -c "$T/agent.cfg" --app "$app" --scheduler "$ep" --address "$name" \
        --plugins "$T/plugins" --logdir "$T/logs-$name" "$@" >>"$T/agent-$name.log" 2>&1 &
    PIDS="$PIDS $!"
}
relay () {           # NAME TARGET_PORT MODE: sets RELAY_EP
    "$RELAY" "$T/$1.port" 127.0.0.1 "$2" "$3" "$T/$1.bytes" &
    PIDS="$PIDS $!"
    wait_for 5 test -s "$T/$1.port"
    RELAY_EP="tcp://127.0.0.1:$(cat "$T/$1.port")"
}
as boss group add app-g >/dev/null
as boss group add app-t >/dev/null
relay watch "${AGENTS##*:}" pass
relayed_agent node-g app-g "$RELAY_EP" --cert "$C/agent-g.cert_secret" --scheduler-key "$SK"
check "an agent works through a relay" wait_for 15 registered app-g node-g
JG=$(as boss job add --group app-g --glue-type GLUE_SHELL --glue-source "$T/glue.sh" | jq -r .id)
LG=$(as boss job trigger "$JG" | jq -r '.logIds[0]')
check "... its GLUE run goes through it" wait_for 15 ran "$LG"
check "... and ran the source as written" grep -q "$MARK" "$T/ran-node-g"
check "... while the relay saw none of it (ciphertext)" bash -c "! grep -q '$MARK' '$T/watch.bytes'"
relay tamper "${AGENTS##*:}" flip
relayed_agent node-t app-t "$RELAY_EP" --cert "$C/agent-g.cert_secret" --scheduler-key "$SK"
check "an agent registers through a relay that rewrites" wait_for 15 registered app-t node-t
JT=$(as boss job add --group app-t --glue-type GLUE_SHELL --glue-source "$T/glue.sh" | jq -r .id)
LT=$(as boss job trigger "$JT" | jq -r '.logIds[0]')
ended () { [ "$(as boss log show "$1" | jq -r '.handleCode != 0 or .triggerCode == 500')" = true ]; }
check "... the rewritten RUN ends without running (no answer)" wait_for 20 ended "$LT"
check "... and the agent never ran it" test ! -e "$T/ran-node-t"
check "... (the relay did rewrite bytes of it)" test "$(stat -c %s "$T/tamper.bytes")" -gt 4096

# A key added to the folder is let in, without a restart
keygen late --role viewer
check "a key not yet in the folder is refused" \
    bash -c "! timeout 10 $CTL --api $API --cert $C/late.cert_secret --scheduler-key $SK --timeout 1500 --json group list >/dev/null 2>&1"
cp "$C/late.cert" "$K/"
late_in () { "$CTL" --api "$API" --cert "$C/late.cert_secret" --scheduler-key "$SK" --timeout 1500 --json group list >/dev/null 2>&1; }
check "... and let in once it is added" wait_for 10 late_in

# A key removed from the folder stops counting, without a restart
check "a viewer reads before its key is removed" bash -c "$(declare -f as); C=$C SK=$SK API=$API CTL=$CTL as watcher group list >/dev/null"
rm "$K/watcher.cert"
gone () { ! timeout 10 "$CTL" --api "$API" --cert "$C/watcher.cert_secret" --scheduler-key "$SK" --timeout 1500 --json group list >/dev/null 2>&1; }
check "... and not after" wait_for 10 gone
check "an admin key still reads" bash -c "$(declare -f as); C=$C SK=$SK API=$API CTL=$CTL as boss group list >/dev/null"

# An agent that knows the scheduler's key does not talk to another one
mkdir -p "$T/fake"
cp "$C/agent-a.cert" "$T/fake/"
"$CTL" keygen impostor --role admin --dir "$T/fake" >/dev/null
# (ports 32001-32764: above start_scheduler's 20000-29999 and
# test_install's 30000-31999, below the kernel's ephemeral range, 32768
# up, where a client's connection could hold one: CI's distcheck once
# found fake_port + 3 in use)
fake_port=$((32001 + (RANDOM % 380) * 2))
"$SCHEDULER" --db "$T/fake.db" --api "tcp://127.0.0.1:$((fake_port + 1))" --agents "tcp://127.0.0.1:$fake_port" \
    --cert "$T/fake/impostor.cert_secret" --keys "$T/fake" \
    --plugins "$XXL_BUILD/plugins/routers/.libs" --alarms "$XXL_BUILD/plugins/alarms/.libs" \
    --ready-file "$T/fake.ready" >>"$T/fake.log" 2>&1 &
PIDS="$PIDS $!"
wait_for 10 test -f "$T/fake.ready"
"$AGENT" -c "$T/agent.cfg" --app app-a --scheduler "tcp://127.0.0.1:$fake_port" --address lured \
    --plugins "$T/plugins" --logdir "$T/logs-lured" --cert "$C/agent-a.cert_secret" --scheduler-key "$SK" \
    >>"$T/agent-lured.log" 2>&1 &
PIDS="$PIDS $!"
"$AGENT" -c "$T/agent.cfg" --app app-a --scheduler "tcp://127.0.0.1:$fake_port" --address trusting \
    --plugins "$T/plugins" --logdir "$T/logs-trusting" --cert "$C/agent-a.cert_secret" \
    --scheduler-key "$T/fake/impostor.cert" >>"$T/agent-trusting.log" 2>&1 &
PIDS="$PIDS $!"
fake_sees () { "$CTL" --api "tcp://127.0.0.1:$((fake_port + 1))" --cert "$T/fake/impostor.cert_secret" \
    --scheduler-key "$T/fake/impostor.cert" --json agent list | jq -e --arg n "$1" '.agents | any(.address == $n)' >/dev/null; }
check "an agent given that scheduler's key talks to it" wait_for 15 fake_sees trusting
check "an agent given the real scheduler's key never registers with an impostor" bash -c "$(declare -f fake_sees); fake_port=$fake_port CTL=$CTL T=$T; ! fake_sees lured"
check "... and says why in its log" grep -q "handshake" "$T/agent-lured.log"

# Secure default: no certificate, no bind beyond loopback
"$SCHEDULER" --db "$T/open.db" --api "tcp://0.0.0.0:$((fake_port + 2))" --agents "tcp://127.0.0.1:$((fake_port + 3))" \
    --plugins "$XXL_BUILD/plugins/routers/.libs" --alarms "$XXL_BUILD/plugins/alarms/.libs" \
    --open > "$T/open.out" 2>&1
check "a bind beyond loopback without a certificate is refused at start" \
    bash -c "grep -q 'without a certificate' '$T/open.out'"
"$SCHEDULER" --db "$T/open2.db" --api "tcp://0.0.0.0:$((fake_port + 2))" --agents "tcp://127.0.0.1:$((fake_port + 3))" \
    --plugins "$XXL_BUILD/plugins/routers/.libs" --alarms "$XXL_BUILD/plugins/alarms/.libs" \
    --insecure --open --ready-file "$T/open2.ready" >>"$T/open2.log" 2>&1 &
OPID=$!
PIDS="$PIDS $OPID"
check "... and allowed with --insecure, with a warning" \
    bash -c "$(declare -f wait_for); wait_for 10 test -f '$T/open2.ready' && grep -q 'insecure' '$T/open2.log'"
kill -TERM "$OPID" 2>/dev/null
# A keyed start needs both halves, and a secret certificate (the keyed
# scheduler above started with them)
refused_start () {   # REASON flags...
    local reason="$1"; shift
    timeout 10 "$SCHEDULER" --db "$T/bad.db" --api "tcp://127.0.0.1:$((fake_port + 4))" \
        --agents "tcp://127.0.0.1:$((fake_port + 5))" --plugins "$XXL_BUILD/plugins/routers/.libs" \
        "$@" > "$T/bad.out" 2>&1 && return 1
    grep -q "$reason" "$T/bad.out"
}
check "--keys without --cert is refused at start" refused_start "needs the scheduler's certificate" --keys "$K"
check "--cert without --keys is refused at start" refused_start "needs the keys folder" --cert "$C/scheduler.cert_secret"
mkdir -p "$T/lonely"; cp "$C/scheduler.cert" "$T/lonely/"
check "a public certificate without its secret as --cert is refused, naming the file" \
    refused_start "lonely/scheduler.cert" --cert "$T/lonely/scheduler.cert" --keys "$K"

xxl_done
