#!/usr/bin/env bash
# test_bridge.sh -- XXL-JOB executors through xxl-bridge (DESIGN §11), end to
# end: a real xxl-scheduler, xxl-bridge, and executors of our own written
# from the XXL-JOB protocol (tests/bridge/fake_executor.py: 2.x and 3.x
# answers, Go's header case, batched callbacks, odd refusals).  BEAN runs,
# failures, odd refusals, GLUE_GROOVY and GLUE_PYTHON2 passed through,
# sharding over two executors, FAILOVER past a frozen executor, BUSYOVER,
# kill, log cat, timeout, repeated and unknown callbacks, the admin's
# refusals (token, networks, sizes, shapes, user information in an
# executor's URL, next to the same registry taken with its own address), a
# flood of registry flips (bounded log lines), a slowloris on the admin
# (cut at bridge/admin_timeout), the bridge SIGKILLed mid-run
# and restarted (every logId executed once, every result delivered), an
# executor SIGKILLed mid-run (failed by the lost-run monitor).
. "$(dirname "$0")/lib.sh"
xxl_store_blind "the bridge"
xxl_setup
command -v python3 >/dev/null || { echo "# skipped: no python3"; trap - EXIT; xxl_cleanup; exit 77; }
BRIDGE="$XXL_BRIDGE"
FAKE="$XXL_SRC/tests/bridge/fake_executor.py"
TOKEN=bridge-test-token

cat >> "$T/scheduler.cfg" <<CFG
    access_token = $TOKEN
    pools
        probe_timeout = 1000
    monitor
        lost_check = 500
        lost_after = 2
CFG
start_scheduler || exit 1
ctl () { "$CTL" --api "$API" --token "$TOKEN" --json "$@"; }

echo "$TOKEN" > "$T/token"
# start_bridge [PORT]: the bridge on PORT (default: any free one): sets
# BPORT, BRPID, ADMIN (tests/bridge/lib.sh)
. "$XXL_SRC/tests/bridge/lib.sh"
bridge_cfg "executors_max = 12" "admin_timeout = 3"
start_bridge () { bridge_start "${1:-0}" --access-token-file "$T/token"; }
# start_exec NAME APP [flags]: a fake executor; sets EPID_NAME, EURL_NAME
start_exec () {
    local name="$1" app="$2"; shift 2
    rm -f "$T/$name.port"
    python3 "$FAKE" --admin "$ADMIN" --app "$app" --token "$TOKEN" --runs "$T/runs" \
        --port-file "$T/$name.port" "$@" >>"$T/exec-$name.log" 2>&1 &
    local pid=$!
    PIDS="$PIDS $pid"
    eval "EPID_$name=$pid"
    wait_for 10 test -s "$T/$name.port" || return 1
    cp "$T/$name.port" "$T/$name.port.last"
    eval "EURL_$name=http://127.0.0.1:$(cat "$T/$name.port")/"
}
trigger () { ctl job trigger "$1" | jq -r '.logIds[0]'; }
ran_once () { [ "$(grep -c "^$1\$" "$T/runs")" = 1 ]; }

start_bridge || { echo "FAIL - the bridge did not start"; exit 1; }
check "--help names the flags" bash -c "'$BRIDGE' --help | grep -q -- '--executors CIDR'"
# (both check that each /run comes after its route is in the bridge's file)
start_exec e1 app1 --shape 2 --routes "$T/bridge/bridge.routes"
start_exec e2 app1 --shape 3 --go-header --routes "$T/bridge/bridge.routes"
check "a 2.x executor registers through the bridge" wait_for 10 agent_registered app1 "$EURL_e1"
check "a 3.x executor with Go's header case registers" wait_for 10 agent_registered app1 "$EURL_e2"
ctl group add app1 >/dev/null

# --- an executor address with user information (SSRF past --executors) ----
# libcurl reads http://127.0.0.1:80@10.9.9.8:9999/ as user "127.0.0.1",
# password "80", host 10.9.9.8: each form is refused as carrying user
# information, logged once for the lot (rate-limited), never registered;
# the same registry with e1's own address is taken
registry () {   # registry KEY VALUE [remove]: the admin's answer
    curl -s -X POST -H "XXL-JOB-ACCESS-TOKEN: $TOKEN" \
        -d "{\"registryGroup\":\"EXECUTOR\",\"registryKey\":\"$1\",\"registryValue\":\"$2\"}" \
        "$ADMIN/api/registry${3:+Remove}"
}
for forged in 'http://127.0.0.1:80@10.9.9.8:9999/' 'http://[::1]@10.9.9.8:9999/' \
              'http://127.0.0.1@10.9.9.8/' 'http://[::1]:1@10.9.9.8/'; do
    for i in 1 2 3 4 5; do registry ssrf "$forged"; echo; done
done > "$T/forged"
check "a registry whose address carries user information is refused, saying so" \
    test "$(jq -r 'select(.code == 500 and (.msg | test("carries user information"))) | .code' "$T/forged" | wc -l)" = 20
check "... never an agent address in the scheduler" \
    bash -c "! $CTL --api $API --token $TOKEN --json agent list | grep -q 10.9.9.8"
check "... logged once for the lot, with why" \
    test "$(grep -c 'registry of ssrf at .*@10.9.9.8.* refused: the address carries user information' "$T/bridge.log")" = 1
check "the same registry with an allowed address is taken" \
    test "$(registry ssrf "$EURL_e1" | jq .code)" = 200
check "... and is an agent address of its app" wait_for 10 agent_registered ssrf "$EURL_e1"
registry ssrf "$EURL_e1" remove >/dev/null

# --- an executor flipping its registry: bounded log lines, state written at
# most once a second, and its last word kept ---------------------------------
for i in $(seq 40); do
    registry flip http://127.0.0.1:1/ >/dev/null
    registry flip http://127.0.0.1:1/ remove >/dev/null
done
registry flip http://127.0.0.1:1/ >/dev/null
check "a flood of registry flips logs a bounded number of lines" \
    test "$(grep -cE 'executor flip at http://127.0.0.1:1/ (removed itself|is back)' "$T/bridge.log")" -le 2
check "... the last one counted in a later line's tally or held (not 80 lines)" \
    test "$(grep -c 'executor flip at' "$T/bridge.log")" -le 3
check "... and bridge.executors ends with it registered" \
    wait_for 5 grep -qxF "$(printf 'flip\thttp://127.0.0.1:1/')" "$T/bridge/bridge.executors"
registry flip http://127.0.0.1:1/ remove >/dev/null

# --- runs -------------------------------------------------------------------
OK=$(ctl --get .id job add --group app1 --handler ok --route FIRST)
L=$(trigger "$OK")
check "a BEAN run succeeds (200)" wait_for 10 field_is "$L" handleCode 200
check "it ran once on the executor" ran_once "$L"
FAIL=$(ctl --get .id job add --group app1 --handler fail)
L=$(trigger "$FAIL")
check "a failed run is 500 with the executor's msg" bash -c "
    for i in \$(seq 100); do [ \"\$($CTL --api $API --token $TOKEN --json log show $L | jq -r .handleMsg)\" = 'failed on purpose' ] && exit 0; sleep 0.1; done; exit 1"
for h in refuse refuse2; do
    J=$(ctl --get .id job add --group app1 --handler $h)
    L=$(trigger "$J")
    wait_for 10 field_is "$L" triggerCode 500
    check "a /run refused in an odd shape ($h) fails the trigger, with what came" bash -c "
        $CTL --api $API --token $TOKEN --json log show $L | jq -r .triggerMsg | grep -Eq 'HTTP 500: <html>|refused, code as a string'"
done

# GLUE(Java) and XXL-JOB 3.2's GLUE(Python2) go to the executor as they are
printf 'package demo; // groovy\n' > "$T/GLUE_GROOVY"
printf 'print 42\n' > "$T/GLUE_PYTHON2"
for glue in GLUE_GROOVY GLUE_PYTHON2; do
    GJ=$(ctl --get .id job add --group app1 --glue-type $glue --glue-source "$T/$glue")
    L=$(trigger "$GJ")
    check "$glue runs on the XXL-JOB executor" wait_for 10 field_is "$L" handleCode 200
    check "  its glueType and glueSource reached the executor unchanged" bash -c "
        $CTL --api $API --token $TOKEN log cat $L |
        grep -q 'glueType:$glue glueUpdatetime:[1-9][0-9]* glueSource:$(head -1 "$T/$glue")'"
done

check "each /run came after its route was written (the bridge's flush)" \
    bash -c "! grep -h 'not in the routes file' '$T'/exec-*.log"

# --- sharding, FAILOVER, BUSYOVER ------------------------------------------
SH=$(ctl --get .id job add --group app1 --handler ok --route SHARDING_BROADCAST)
ctl job trigger "$SH" > "$T/shard.json"
check "sharding: one run per executor" test "$(jq '.logIds | length' "$T/shard.json")" = 2
for l in $(jq -r '.logIds[]' "$T/shard.json"); do wait_for 10 field_is "$l" handleCode 200; done
check "sharding: both ran, on two addresses" test "$(for l in $(jq -r '.logIds[]' "$T/shard.json"); do
    log_field "$l" executorAddress; done | sort -u | wc -l)" = 2
FIRST_ADDR=$(log_field "$(trigger "$OK")" executorAddress)
[ "$FIRST_ADDR" = "$EURL_e1" ] && FROZEN=$EPID_e1 OTHER=$EURL_e2 || FROZEN=$EPID_e2 OTHER=$EURL_e1
FO=$(ctl --get .id job add --group app1 --handler ok --route FAILOVER)
kill -STOP "$FROZEN"
L=$(trigger "$FO")
check "FAILOVER passes a frozen executor by (its beat times out)" bash -c "
    for i in \$(seq 100); do [ \"\$($CTL --api $API --token $TOKEN --json log show $L | jq -r .executorAddress)\" = '$OTHER' ] && exit 0; sleep 0.1; done; exit 1"
kill -CONT "$FROZEN"
check "FAILOVER's run succeeds" wait_for 10 field_is "$L" handleCode 200
BO=$(ctl --get .id job add --group app1 --handler sleep --param 3 --route BUSYOVER)
L1=$(trigger "$BO")
wait_for 5 field_is "$L1" triggerCode 200
L2=$(trigger "$BO")
wait_for 5 field_is "$L2" triggerCode 200
check "BUSYOVER passes the executor running the job (its idleBeat answers 500)" \
    test "$(log_field "$L2" executorAddress)" != "$(log_field "$L1" executorAddress)"

# --- kill, log cat, timeout -------------------------------------------------
LONG=$(ctl --get .id job add --group app1 --handler sleep --param 30 --route FIRST)
L=$(trigger "$LONG")
check "log cat shows a running run's lines" wait_for 10 bash -c "
    $CTL --api $API --token $TOKEN log cat $L | grep -q 'execute start'"
check "log kill is taken by the executor" bash -c "$CTL --api $API --token $TOKEN log kill $L"
check "the killed run ends 500" wait_for 10 field_is "$L" handleCode 500
TO=$(ctl --get .id job add --group app1 --handler sleep --param 10 --timeout 1)
L=$(trigger "$TO")
check "a run over its timeout ends 502" wait_for 10 field_is "$L" handleCode 502

# --- repeated and unknown callbacks ----------------------------------------
start_exec e3 app3 --repeat-callbacks
check "e3 registers" wait_for 10 agent_registered app3 "$EURL_e3"
ctl group add app3 >/dev/null
R=$(ctl --get .id job add --group app3 --handler fail)
L=$(trigger "$R")
check "repeated callbacks: the run ends once, as first told" wait_for 10 field_is "$L" handleCode 500
check "an unknown callback is ignored, with a log line" \
    wait_for 5 grep -q "callback(s) for runs the bridge did not send (e.g. logId 987654321)" "$T/bridge.log"
check "nothing else changed: run $L still 500 'failed on purpose'" field_is "$L" handleMsg "failed on purpose"
kill -TERM "$EPID_e3"

# --- the admin's refusals ---------------------------------------------------
post () { curl -s -o "$T/answer" -w '%{http_code}' -X POST -H "XXL-JOB-ACCESS-TOKEN: ${TK-$TOKEN}" \
    -H 'Content-Type: application/json' "$@"; }
check "a wrong token is refused (401)" test "$(TK=wrong post -d '{}' "$ADMIN/api/registry")" = 401
check "a registry outside --executors is refused, never called" bash -c "
    [ \"\$(TK=$TOKEN; curl -s -X POST -H 'XXL-JOB-ACCESS-TOKEN: $TOKEN' -d '{\"registryGroup\":\"EXECUTOR\",\"registryKey\":\"evil\",\"registryValue\":\"http://10.9.9.9:9999/\"}' $ADMIN/api/registry | jq .code)\" = 500 ] &&
    ! $CTL --api $API --token $TOKEN --json agent list | grep -q 10.9.9.9"
check "a malformed body is 400" test "$(post -d '{"registryKey":' "$ADMIN/api/registry")" = 400
head -c 100000 /dev/zero | tr '\0' 'a' > "$T/big"
check "an oversized registry body is 413" test "$(post --data-binary @"$T/big" "$ADMIN/api/registry")" = 413
check "an unknown path is 404" test "$(post -d '{}' "$ADMIN/api/nothing")" = 404
check "a callback that is not a list is 400" test "$(post -d '{"logId":1}' "$ADMIN/api/callback")" = 400
check "the bridge still answers after all that" agent_registered app1 "$EURL_e1"

# --- a slowloris on the admin: a header line every 0.5 s (never idle for
# libmicrohttpd's 10 s) is cut at bridge/admin_timeout (3 s here) of the
# accept; the executors' requests are served meanwhile ----------------------
cat > "$T/slowloris.py" <<'PY'
import socket, sys, time
port, conns = int(sys.argv[1]), int(sys.argv[2])
socks = []
for _ in range(conns):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"POST /xxl-job-admin/api/registry HTTP/1.1\r\nHost: x\r\n")
    socks.append(s)
start = time.monotonic()
open_ = set(range(conns))
closed_at = {}
while open_ and time.monotonic() - start < 10:
    for i in list(open_):
        try:
            socks[i].sendall(b"X-Slow: %d\r\n" % i)
            socks[i].settimeout(0.01)
            if socks[i].recv(1) == b"":
                raise OSError("closed")
        except socket.timeout:
            pass
        except OSError:
            open_.discard(i)
            closed_at[i] = time.monotonic() - start
    time.sleep(0.5)
print(len(open_), max(closed_at.values()) if closed_at else -1)
PY
python3 "$T/slowloris.py" "$BPORT" 8 > "$T/slowloris" &
SLOW=$!
check "an executor's registry is served while a slowloris holds connections" \
    test "$(registry app1 "$EURL_e1" | jq .code)" = 200
wait "$SLOW"
read -r slow_open slow_last < "$T/slowloris"
check "a slowloris's connections are all cut although bytes keep coming ($slow_open left open)" \
    test "$slow_open" = 0
check "... at the admin's deadline, not before it, nor long after (last at ${slow_last} s)" \
    python3 -c "import sys; sys.exit(0 if 2.5 <= $slow_last <= 5.5 else 1)"

# --- the bridge frozen past its executors' expiry (4 s here) ---------------
# (the executors' registry calls wait unread meanwhile: its own stall is no
# executor's silence, and it unregisters none)
EXPIRED=$(grep -c "not heard from for" "$T/bridge.log")
kill -STOP "$BRPID"
sleep 6                                 # (the fault: a freeze past the expiry)
kill -CONT "$BRPID"
check "frozen 6 s: the bridge says its loop stood still" \
    wait_for 10 grep -q "bridge: the loop stood still" "$T/bridge.log"
L=$(trigger "$OK")
check "... a run after the thaw succeeds" wait_for 10 field_is "$L" handleCode 200
check "... and no executor was unregistered for that time" \
    test "$(grep -c "not heard from for" "$T/bridge.log")" = "$EXPIRED"
check "off loopback in plain text without --insecure: refused at start" bash -c "
    ! '$BRIDGE' --scheduler '$AGENTS' --listen 0.0.0.0:0 --logdir '$T/b-plain' 2>'$T/plain.err' &&
    grep -q 'not a loopback address' '$T/plain.err'"
if command -v openssl >/dev/null; then
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
        -keyout "$T/tls.key" -out "$T/tls.crt" >/dev/null 2>&1
    "$BRIDGE" -c "$T/bridge.cfg" --scheduler "$AGENTS" --listen 0.0.0.0:0 --tls-cert "$T/tls.crt" \
        --tls-key "$T/tls.key" --access-token-file "$T/token" --logdir "$T/b-tls" \
        --ready-file "$T/tls.ready" >>"$T/bridge-tls.log" 2>&1 &
    PIDS="$PIDS $!"
    check "with --tls-cert it may listen off loopback" wait_for 10 test -s "$T/tls.ready"
    check "... and speaks HTTPS" bash -c "
        curl -sk -X POST -H 'XXL-JOB-ACCESS-TOKEN: $TOKEN' -d '{\"registryKey\":\"tls-app\",\"registryValue\":\"http://127.0.0.1:1/\"}' \
            https://127.0.0.1:\$(sed -n 's/^port=//p' '$T/tls.ready')/xxl-job-admin/api/registry | jq -e '.code == 200'"
fi

# --- the bridge SIGKILLed mid-run and restarted -----------------------------
# (e4 registers once only: XXL-JOB executors call every 30 s, and a
# restarted bridge must not leave them unregistered until then.  It
# registers right before the kill, once the runs are under way, and the
# kill waits until the bridge has written it down: the bridge expires it
# 4 s after its call, and on a loaded machine the triggers took longer)
MID=$(ctl --get .id job add --group app1 --handler sleep --param 4 --route ROUND)
: > "$T/mid"
for _ in 1 2 3 4; do trigger "$MID" >> "$T/mid"; done
for l in $(cat "$T/mid"); do wait_for 5 field_is "$l" triggerCode 200; done
start_exec e4 app4 --beat 3600
check "e4 registers" wait_for 10 grep -qF "$EURL_e4" "$T/bridge/bridge.executors"
kill -KILL "$BRPID"
wait "$BRPID" 2>/dev/null
RESTART_MS=$(date +%s%3N)
start_bridge "$BPORT" || echo "# the bridge did not restart"
# registered_since APP ADDRESS MS: a REGISTER of it came after MS
registered_since () {
    ctl agent list | jq -e --arg a "$1" --arg n "$2" --argjson t "$3" \
        '.agents | any(.app == $a and .address == $n and .connected and .updateTime > $t)' >/dev/null
}
check "after the bridge's restart the executors register again" \
    wait_for 10 agent_registered app1 "$EURL_e1"
check "... also one that has not called since (bridge.executors)" \
    wait_for 5 registered_since app4 "$EURL_e4" "$RESTART_MS"
for l in $(cat "$T/mid"); do
    check "run $l (bridge killed mid-run) ends 200" wait_for 20 field_is "$l" handleCode 200
    check "run $l executed once" ran_once "$l"
done
# ... and killed while RUNs are on their way: each run ends (200, or
# failed: not answered before the bridge died), none runs twice
: > "$T/mid2"
for _ in 1 2 3 4 5 6; do trigger "$MID" >> "$T/mid2"; done
kill -KILL "$BRPID"
wait "$BRPID" 2>/dev/null
start_bridge "$BPORT" || echo "# the bridge did not restart"
for l in $(cat "$T/mid2"); do
    check "run $l (bridge killed as it was sent) ends" wait_for 30 log_finished "$l"
    if [ "$(log_field "$l" handleCode)" = 200 ]; then check "run $l ended 200 and executed once" ran_once "$l"
    else check "run $l failed and executed at most once" test "$(grep -c "^$l\$" "$T/runs")" -le 1; fi
done
check "no logId ran twice" test -z "$(sort "$T/runs" | uniq -d)"

# --- an executor SIGKILLed mid-run and started again at its address ---------
# (its address stays registered, so the lost-run monitor never sees it: the
# bridge's idleBeat checks find the run's job idle and fail it "lost: ...")
start_exec e5 app5
check "e5 registers" wait_for 10 agent_registered app5 "$EURL_e5"
ctl group add app5 >/dev/null
RJ=$(ctl --get .id job add --group app5 --handler sleep --param 60)
L=$(trigger "$RJ")
wait_for 5 field_is "$L" triggerCode 200
sleep 1.5   # (a check or two find it running)
kill -KILL "$EPID_e5"; wait "$EPID_e5" 2>/dev/null
start_exec e5 app5 --port "$(cat "$T/e5.port.last")"
check "the restarted executor's lost run fails 'lost: ...'" wait_for 15 bash -c "
    $CTL --api $API --token $TOKEN --json log show $L | jq -r .handleMsg | grep -q '^lost: the XXL-JOB executor at $EURL_e5 no longer runs this job'"
check "... with 500" field_is "$L" handleCode 500
L=$(trigger "$RJ")
check "a run of the same job goes on meanwhile" wait_for 10 field_is "$L" triggerCode 200
sleep 3
check "a running run is not taken for lost" field_is "$L" handleCode 0

# --- an executor SIGKILLed mid-run ------------------------------------------
KJ=$(ctl --get .id job add --group app1 --handler sleep --param 30 --route FIRST)
L=$(trigger "$KJ")
wait_for 5 field_is "$L" triggerCode 200
ADDR=$(log_field "$L" executorAddress)
[ "$ADDR" = "$EURL_e1" ] && kill -KILL "$EPID_e1" || kill -KILL "$EPID_e2"
check "the dead executor's run is failed by the lost-run monitor" wait_for 30 bash -c "
    [ \"\$($CTL --api $API --token $TOKEN --json log show $L | jq -r .handleCode)\" = 500 ]"
check "the bridge unregistered the dead executor" grep -q "not heard from for 4 s: unregistered" "$T/bridge.log"
check "the bridge logged each address it called once a life" \
    test "$(grep -c "calling $EURL_e1 " "$T/bridge.log")" -le "$(grep -c "bridge: listening" "$T/bridge.log")"

# --- a registry flood: capped, one log line -------------------------------
for i in $(seq 20); do
    curl -s -X POST -H "XXL-JOB-ACCESS-TOKEN: $TOKEN" \
        -d "{\"registryKey\":\"flood\",\"registryValue\":\"http://127.0.0.1:$((61000 + i))/\"}" \
        "$ADMIN/api/registry" | jq -r .msg
done > "$T/flood"
check "a registry flood is capped at bridge/executors_max" \
    grep -q "the bridge holds its limit of 12 executors (bridge/executors_max)" "$T/flood"
check "... with one log line for the lot" \
    test "$(grep -c 'registry of flood at .* refused: the bridge holds its limit' "$T/bridge.log")" = 1
check "... and the bridge still serves its executors" agent_registered app5 "$EURL_e5"

xxl_done
