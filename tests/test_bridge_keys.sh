#!/usr/bin/env bash
# test_bridge_keys.sh -- xxl-bridge keyed as an agent (DESIGN §8, §11): a
# CURVE scheduler with --keys, the bridge with an agent key for app-k:
# executors of app-k register through it (one connection each, so an agent
# key's limit of 16 addresses per connection never binds: 18 executors),
# run, and executors of an app the key does not list are refused by the
# scheduler (403), logged by the bridge; a bridge without keys gets
# nothing through.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "# skipped: no python3"; exit 77; }
xxl_store_blind "the bridge's keys"
xxl_setup
BRIDGE="$XXL_BRIDGE"
FAKE="$XXL_SRC/tests/bridge/fake_executor.py"
C="$T/certs"; K="$T/keys"
mkdir -p "$C" "$K"
for key in "scheduler --role admin" "boss --role admin" "bridge --role agent --apps app-k" \
           "late --role agent --apps app-l"; do
    # shellcheck disable=SC2086
    "$CTL" keygen $key --dir "$C" >/dev/null
done
cp "$C/boss.cert" "$C/bridge.cert" "$K/"
XXL_SCHEDULER_ARGS="--cert $C/scheduler.cert_secret --keys $K"
start_scheduler || exit 1
ctl () { "$CTL" --api "$API" --cert "$C/boss.cert_secret" --scheduler-key "$C/scheduler.cert" --json "$@"; }
printf 'bridge\n    beat = 1\n    expire = 10\n' > "$T/bridge.cfg"

"$BRIDGE" -c "$T/bridge.cfg" --scheduler "$AGENTS" --listen 127.0.0.1:0 --logdir "$T/b" \
    --cert "$C/bridge.cert_secret" --scheduler-key "$C/scheduler.cert" \
    --ready-file "$T/b.ready" >>"$T/bridge.log" 2>&1 &
PIDS="$PIDS $!"
echo $! > "$T/b.pid"
wait_for 10 test -s "$T/b.ready" || { echo "FAIL - the bridge did not start"; exit 1; }
ADMIN="http://127.0.0.1:$(sed -n 's/^port=//p' "$T/b.ready")/xxl-job-admin"
for i in $(seq 18); do
    python3 "$FAKE" --admin "$ADMIN" --app app-k --runs "$T/runs" --port-file "$T/k$i.port" \
        >>"$T/exec-k$i.log" 2>&1 &
    PIDS="$PIDS $!"
done
python3 "$FAKE" --admin "$ADMIN" --app app-x --runs "$T/runs" --port-file "$T/x.port" \
    >>"$T/exec-x.log" 2>&1 &
PIDS="$PIDS $!"
connected () { [ "$(ctl agent list | jq --arg a "$1" '[.agents[] | select(.app == $a and .connected)] | length')" = "$2" ]; }
check "18 executors of app-k register through the keyed bridge" wait_for 20 connected app-k 18
check "an executor of an app the key does not list is refused by the scheduler" \
    wait_for 10 grep -q "refused executor app-x at .* 403" "$T/bridge.log"
check "... and is not registered" connected app-x 0
ctl group add app-k >/dev/null
J=$(ctl --get .id job add --group app-k --handler ok --route SHARDING_BROADCAST)
ctl job trigger "$J" > "$T/ids.json"
check "a broadcast runs on all 18" test "$(jq '.logIds | length' "$T/ids.json")" = 18
all_done () { for l in $(jq -r '.logIds[]' "$T/ids.json"); do
    [ "$(ctl --get .handleCode log show "$l")" = 200 ] || return 1; done; }
check "... and all 18 succeed" wait_for 20 all_done

# Past FD_SETSIZE: 300 more executors (of an app the key lacks: refused by
# the scheduler, but each holds its connection) take the bridge past 1,024
# descriptors; it still serves the executors' calls and calls them.  One
# curl sends the 300 (--next), well within the bridge's expire (10 s) even
# on a loaded machine: a curl per executor took longer there, and the first
# ones were forgotten before the last came
BPID=$(cat "$T/b.pid")
many=()
for i in $(seq 300); do
    [ "$i" = 1 ] || many+=(--next)
    many+=(-s -o /dev/null -X POST
           -d "{\"registryKey\":\"many\",\"registryValue\":\"http://127.0.0.1:$((40000 + i))/\"}"
           "$ADMIN/api/registry")
done
curl "${many[@]}"
fds () { [ "$(ls /proc/"$BPID"/fd | wc -l)" -gt 1024 ]; }
check "the bridge holds more than 1,024 descriptors" wait_for 5 fds
ctl job trigger "$J" > "$T/ids.json"
check "... and a broadcast on the 18 still succeeds" wait_for 30 all_done

# Without keys, nothing gets through
"$BRIDGE" -c "$T/bridge.cfg" --scheduler "$AGENTS" --listen 127.0.0.1:0 --logdir "$T/b2" \
    --ready-file "$T/b2.ready" >>"$T/bridge2.log" 2>&1 &
PIDS="$PIDS $!"
wait_for 10 test -s "$T/b2.ready"
ADMIN2="http://127.0.0.1:$(sed -n 's/^port=//p' "$T/b2.ready")/xxl-job-admin"
curl -s -X POST -d '{"registryKey":"app-k","registryValue":"http://127.0.0.1:1/"}' "$ADMIN2/api/registry" >/dev/null
check "a bridge without the key: its handshake fails, logged" \
    wait_for 10 grep -q "handshake with $AGENTS (executor http://127.0.0.1:1/) failed" "$T/bridge2.log"
check "... and it registers nothing" bash -c "! $CTL --api $API --cert $C/boss.cert_secret --scheduler-key $C/scheduler.cert --json agent list | grep -q 'http://127.0.0.1:1/'"

# A key put in the keys folder after the bridge started: its refused
# connections (a final handshake failure: libzmq does not retry it) are
# replaced at a beat, and the executor registers without a restart
"$BRIDGE" -c "$T/bridge.cfg" --scheduler "$AGENTS" --listen 127.0.0.1:0 --logdir "$T/b3" \
    --cert "$C/late.cert_secret" --scheduler-key "$C/scheduler.cert" \
    --ready-file "$T/b3.ready" >>"$T/bridge3.log" 2>&1 &
PIDS="$PIDS $!"
wait_for 10 test -s "$T/b3.ready"
python3 "$FAKE" --admin "http://127.0.0.1:$(sed -n 's/^port=//p' "$T/b3.ready")/xxl-job-admin" \
    --app app-l --runs "$T/runs" --port-file "$T/l.port" >>"$T/exec-l.log" 2>&1 &
PIDS="$PIDS $!"
check "a key not (yet) in the keys folder: refused at the handshake" \
    wait_for 10 grep -q "handshake with $AGENTS .* failed" "$T/bridge3.log"
cp "$C/late.cert" "$K/"
check "once it is there, the bridge's executor registers (a new connection)" \
    wait_for 30 connected app-l 1
check "... logged" grep -q "a new connection to $AGENTS" "$T/bridge3.log"

xxl_done
