#!/usr/bin/env bash
# test_keys.sh -- the client side of CURVE keys (DESIGN §8), against a
# stand-in scheduler socket in Python (tests/xxl_curve_peer.py: a CURVE
# server with a keygen'd key, no ZAP handler, so any client key gets in):
# xxl-ctl with --cert/--scheduler-key (or ctl/cert, XXL_CERT...) talks to
# it, and with another scheduler's key gets no answer and says why; bad
# key files and half a pair are refused.  An agent with keys registers
# there carrying its accessToken on every message, REPLYs too, and with a
# wrong scheduler key never sends it anything readable, logging why.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
if ! "$PY" -c 'import zmq, msgpack; assert zmq.has("curve")' 2>/dev/null; then
    echo "# test_keys: needs python3 with pyzmq (CURVE) and msgpack; skipped"
    exit 77
fi
xxl_store_blind "key files and CURVE"
xxl_setup
PEER="$XXL_SRC/tests/xxl_curve_peer.py"
K="$T/keys"
mkdir -p "$K"
for key in "scheduler --role admin" "impostor --role admin" "alice --role operator --apps app1" \
           "worker --apps app1"; do
    # shellcheck disable=SC2086
    "$CTL" keygen $key --dir "$K" >/dev/null || echo "keygen $key failed"
done

# start_peer NAME MODE CERT_SECRET: sets PEER_<NAME> (its endpoint)
start_peer () {
    "$PY" "$PEER" "$2" "$3" "$T/$1.ready" "$T/$1.msgs" >>"$T/peer-$1.log" 2>&1 &
    PIDS="$PIDS $!"
    wait_for 10 test -f "$T/$1.ready" || { echo "peer $1 did not start"; return 1; }
    eval "PEER_$1=$(sed -n 's/^endpoint=//p' "$T/$1.ready")"
}
start_peer api api "$K/scheduler.cert_secret" || exit 1
start_peer fake api "$K/impostor.cert_secret" || exit 1

kctl () { "$CTL" --api "$PEER_api" --json --timeout 3000 "$@" >/dev/null; }
check "xxl-ctl with --cert and --scheduler-key gets the CURVE scheduler's answer" bash -c "
    '$CTL' --api '$PEER_api' --json --cert '$K/alice.cert_secret' \
        --scheduler-key '$K/scheduler.cert' agent list | jq -e '.agents == []' >/dev/null"
check "... its request arrived with the type it sent" \
    grep -q '"t": "AGENT_LIST"' "$T/api.msgs"
check "the public NAME.cert names its secret pair NAME.cert_secret" \
    kctl --cert "$K/alice.cert" --scheduler-key "$K/scheduler.cert" agent list
cat > "$T/ctl.cfg" <<CFG
ctl
    cert = $K/alice.cert_secret
    scheduler_key = $K/scheduler.cert
CFG
check "ctl/cert and ctl/scheduler_key in -c FILE work the same" \
    kctl -c "$T/ctl.cfg" agent list
check "and so do XXL_CERT and XXL_SCHEDULER_KEY" bash -c "
    XXL_CERT='$K/alice.cert_secret' XXL_SCHEDULER_KEY='$K/scheduler.cert' \
        '$CTL' --api '$PEER_api' --timeout 3000 agent list >/dev/null"
check "without keys, the CURVE scheduler is not talked to, and xxl-ctl says why at once" bash -c "
    ! '$CTL' --api '$PEER_api' --timeout 30000 agent list 2>'$T/plain.err' &&
    [ \$SECONDS -lt 10 ] && grep -q 'the scheduler requires CURVE keys' '$T/plain.err'"
check "with keys and no scheduler, the timeout asks whether it knows this key" bash -c "
    ! '$CTL' --api tcp://127.0.0.1:1 --timeout 300 --cert '$K/alice.cert_secret' \
        --scheduler-key '$K/scheduler.cert' agent list 2>'$T/none.err' &&
    grep -q 'within 300 ms (is the scheduler up, and does it know this key?)' '$T/none.err'"

# Another scheduler's key: the handshake never completes, nothing is read
: > "$T/fake.msgs"
check "with a wrong --scheduler-key xxl-ctl fails" bash -c "
    ! '$CTL' --api '$PEER_fake' --timeout 1500 --cert '$K/alice.cert_secret' \
        --scheduler-key '$K/scheduler.cert' agent list 2>'$T/wrong.err'"
check "... saying the handshake failed and why" \
    grep -q "CURVE handshake with $PEER_fake failed: the server there closed it: it is not the scheduler" "$T/wrong.err"
check "... and the impostor read nothing" test ! -s "$T/fake.msgs"

# Bad files and half pairs are refused, with the file named, before any request
bad () {   # bad STATUS MESSAGE-PART FLAGS...
    local want="$1" part="$2"; shift 2
    local rc=0
    "$CTL" --api "$PEER_api" --timeout 3000 "$@" agent list >/dev/null 2>"$T/bad.err" || rc=$?
    [ "$rc" = "$want" ] && grep -qF -- "$part" "$T/bad.err"
}
echo "not a certificate" > "$K/junk.cert_secret"
# (awk, not sed: a Z85 key may hold '&')
awk -v line="$(grep public-key "$K/worker.cert")" '/public-key/ { print line; next } { print }' \
    "$K/alice.cert_secret" > "$K/mixed.cert_secret"
check "--cert alone is a usage error" bad 2 "--cert needs --scheduler-key" --cert "$K/alice.cert_secret"
check "--scheduler-key alone is a usage error" bad 2 "--scheduler-key needs --cert" \
    --scheduler-key "$K/scheduler.cert"
check "a missing cert file is named" bad 1 "cannot read certificate '$K/none.cert_secret'" \
    --cert "$K/none.cert_secret" --scheduler-key "$K/scheduler.cert"
check "a file that is no certificate is refused" bad 1 "'$K/junk.cert_secret' is not a certificate" \
    --cert "$K/junk.cert_secret" --scheduler-key "$K/scheduler.cert"
check "a secret file whose public key is another's is refused" bad 1 "its public key is not its secret key's" \
    --cert "$K/mixed.cert_secret" --scheduler-key "$K/scheduler.cert"
cp "$K/alice.cert" "$K/lonely.cert"
check "a public NAME.cert with no NAME.cert_secret is refused" bad 1 "there is no '$K/lonely.cert_secret'" \
    --cert "$K/lonely.cert" --scheduler-key "$K/scheduler.cert"
check "the scheduler's secret file is refused as --scheduler-key" bad 1 "holds a secret key" \
    --cert "$K/alice.cert_secret" --scheduler-key "$K/scheduler.cert_secret"
check "a folder is refused as a certificate" bad 1 "not a file" \
    --cert "$K" --scheduler-key "$K/scheduler.cert"

# The agent: CURVE to the scheduler of its key, the token on everything
start_peer agents agents "$K/scheduler.cert_secret" || exit 1
start_peer fakeagents agents "$K/impostor.cert_secret" || exit 1
"$AGENT" -c "$T/agent.cfg" --app app1 --address worker --scheduler "$PEER_agents,$PEER_fakeagents" \
    --plugins "$HANDLERS" --logdir "$T/logs-worker" --token s3cret \
    --cert "$K/worker.cert_secret" --scheduler-key "$K/scheduler.cert" >>"$T/agent-worker.log" 2>&1 &
APID=$!
PIDS="$PIDS $APID"
msgs_of () { "$PY" -c 'import json,sys
for line in open(sys.argv[1]): print(json.loads(line)["t"], json.loads(line).get("accessToken"))' "$1"; }
export -f msgs_of
export PY
registered () { msgs_of "$T/agents.msgs" | grep -q '^REGISTER s3cret$'; }
check "an agent with --cert/--scheduler-key registers over CURVE, with its token" wait_for 10 registered
check "... answers the scheduler's BEAT and RUN with REPLYs that carry the token" \
    wait_for 10 bash -c "[ \$(msgs_of '$T/agents.msgs' | grep -c '^REPLY s3cret\$') -ge 2 ]"
check "... and the run's CALLBACK carries it too" \
    wait_for 10 bash -c "msgs_of '$T/agents.msgs' | grep -q '^CALLBACK s3cret\$'"
check "every message it sent carried accessToken" bash -c "
    [ -n \"\$($PY -c 'import json,sys
print(all(json.loads(l).get(\"accessToken\") == \"s3cret\" for l in open(sys.argv[1])))' '$T/agents.msgs' | grep -x True)\" ]"
check "the agent logs the failed handshake with the impostor" wait_for 10 \
    grep -q "CURVE handshake with $PEER_fakeagents failed: the server there closed it" "$T/agent-worker.log"
check "... and the impostor read nothing from it" test ! -s "$T/fakeagents.msgs"
check "... logged once, not at every retry" \
    test "$(grep -c "handshake.* $PEER_fakeagents failed\|handshakes with $PEER_fakeagents" "$T/agent-worker.log")" = 1

# Agent start refusals
agent_refused () {   # agent_refused STATUS MESSAGE-PART FLAGS...
    local want="$1" part="$2"; shift 2
    local rc=0
    "$AGENT" -c "$T/agent.cfg" --app app1 --scheduler "$PEER_agents" --plugins "$HANDLERS" \
        --logdir "$T/logs-refused" "$@" >"$T/refused.log" 2>&1 || rc=$?
    [ "$rc" = "$want" ] && grep -qF -- "$part" "$T/refused.log"
}
check "an agent with --cert alone does not start" agent_refused 2 "--cert needs --scheduler-key" \
    --cert "$K/worker.cert_secret"
check "an agent with a bad cert file does not start" agent_refused 1 "is not a certificate" \
    --cert "$K/junk.cert_secret" --scheduler-key "$K/scheduler.cert"
check "an agent with a missing scheduler key does not start" agent_refused 1 \
    "cannot read certificate '$K/gone.cert'" --cert "$K/worker.cert_secret" --scheduler-key "$K/gone.cert"
cat > "$T/agent-keys.cfg" <<CFG
agent
    cert = $K/worker.cert_secret
CFG
check "agent/cert without agent/scheduler_key in the config is refused too" bash -c "
    '$AGENT' -c '$T/agent-keys.cfg' --app app1 --scheduler '$PEER_agents' --plugins '$HANDLERS' \
        --logdir '$T/logs-refused' >'$T/cfg.log' 2>&1; [ \$? = 2 ] &&
    grep -q -- '--cert needs --scheduler-key' '$T/cfg.log'"

# Without keys, a scheduler off this host gets a warning (TEST-NET-1: never
# reached)
"$AGENT" -c "$T/agent.cfg" --app app1 --address remote --scheduler tcp://192.0.2.1:7071 \
    --plugins "$HANDLERS" --logdir "$T/logs-remote" >>"$T/agent-remote.log" 2>&1 &
PIDS="$PIDS $!"
check "an agent without keys warns of a scheduler endpoint that is not loopback" wait_for 10 \
    grep -q "tcp://192.0.2.1:7071 is not a loopback endpoint and this agent has no keys" \
    "$T/agent-remote.log"
check "... but not of a loopback one" bash -c "! grep -q 'not a loopback' '$T/agent-worker.log'"
check "the agent with keys still runs" kill -0 "$APID"
xxl_done
