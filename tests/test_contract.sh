#!/usr/bin/env bash
# test_contract.sh -- what docs/protocol.md promises, as a stranger's client
# sees it: the raw-wire checks of test_contract, an agent's death as LOG_CAT,
# LOG_KILL and AGENT_LIST report it, a burst of registrations, names with
# control characters and Unicode line breaks kept out of the log.
. "$(dirname "$0")/lib.sh"
xxl_setup
TC="$XXL_BUILD/tests/test_contract"

start_scheduler || exit 1
check "scheduler answers" wait_for 5 ctl agent list

check "raw wire: REQ, ranges, types, codes" "$TC" wire "$API" "$AGENTS"
check "a name's CR LF never starts a log line" bash -c "! grep -q '^FORGED LOG LINE' '$T/scheduler.log'"
check "the refusal is logged (escaped) or silent, never raw" \
    bash -c "! grep -q 'evil\$' '$T/scheduler.log'"
check "a name's U+2028, U+0085 and U+2029 are logged escaped" \
    grep -qF 'registry: uni\u2028app/ok\u2028x\u0085y\u2029z registered' "$T/scheduler.log"
check "... and so does the registry's expiry of that address (dead time 3 s here)" \
    wait_for 10 grep -qF 'registry: uni\u2028app/ok\u2028x\u0085y\u2029z missed its beats, removed' \
    "$T/scheduler.log"
check "... and never reach the log raw" \
    bash -c "! LC_ALL=C grep -qP '\xe2\x80[\xa8\xa9]|\xc2\x85' '$T/scheduler.log'"

# An agent SIGKILLed: the next LOG_CAT and LOG_KILL say 503 (not connected),
# the first one too; AGENT_LIST stops calling it connected well before the
# dead time (3 s here, 90 s by default: the liveness beat finds it in 5 s)
cat > "$T/scheduler.cfg" <<CFG
scheduler
    registry
        beat = 30
        dead = 90
    run_timeout = 5000
    request_timeout = 3000
CFG
kill -TERM "$SPID"; wait "$SPID" 2>/dev/null
start_scheduler || exit 1
start_agent doomed contract-app
check "agent registers" wait_for 10 agent_registered contract-app doomed
ctl group add contract-app >/dev/null
printf 'sleep 30.4711\n' > "$T/long.sh"
JID=$(ctl --get .id job add --group contract-app --glue-type GLUE_SHELL --glue-source "$T/long.sh")
LID=$(ctl --get '.logIds[0]' job trigger "$JID")
check "the long run is accepted" wait_for 10 field_is "$LID" triggerCode 200
connected () { ctl agent list | jq -e ".agents[] | select(.address == \"$1\") | .connected == $2" >/dev/null; }
check "AGENT_LIST: connected while alive" connected doomed true
kill -KILL "$APID_doomed"
pkill -KILL -f 'sleep 30[.]4711' 2>/dev/null
check "AGENT_LIST: not connected within 10 s of a SIGKILL (dead time 90 s)" \
    wait_for 10 connected doomed false
code_of () { "$CTL" --api "$API" --json "$@" 2>&1 | jq -r '.error // "ok"'; }
check "LOG_CAT after the agent died: not connected (503), the first time too" \
    bash -c "$CTL --api $API --json log cat $LID 2>&1 | grep -q 'not connected'"
check "LOG_KILL after the agent died: not connected (503)" \
    bash -c "$CTL --api $API --json log kill $LID 2>&1 | grep -q 'not connected'"

# A burst of registrations over 4 apps: every REGISTER answered, another
# connection answered meanwhile, and each automatic group's address list
# ends up exactly its registered addresses.  A REGISTER writes only its own
# app's groups: a fifth app's group is not written at all (its updateTime
# stays as GROUP_ADD set it).  A fresh store, so that no address expires
# meanwhile (an expiry rewrites every automatic group)
# (and a dead time of 10 minutes: on a loaded machine the burst's first
# addresses, which never beat again, were past 90 s before the checks)
kill -TERM "$SPID"; wait "$SPID" 2>/dev/null
rm -f "$T"/xxl.db*
sed -i 's/dead = 90/dead = 600/' "$T/scheduler.cfg"
start_scheduler || exit 1
for i in 0 1 2 3; do ctl group add "burst-$i" >/dev/null; done
ctl group add bystander >/dev/null
BY=$(ctl --get .updateTime group show bystander)
clock_past () { [ "$(date +%s%3N)" -gt "$1" ]; }
wait_for 5 clock_past "$BY"
mkfifo "$T/burst.in"
"$TC" burst "$AGENTS" 4000 4 < "$T/burst.in" > "$T/burst.out" 2>&1 &
BPID=$!
exec 4> "$T/burst.in"
BURST0=$(date +%s%3N)
check "burst: all 4000 REGISTERs answered" wait_for 180 grep -q '^registered 4000' "$T/burst.out"
echo "# burst: answered within $(( $(date +%s%3N) - BURST0 )) ms"
group_ok () {
    local want
    want=$(seq 0 3999 | awk -v a="$1" '$1 % 4 == a { printf "%sburst-%06d", (n++ ? "," : ""), $1 }')
    [ "$(ctl --get .addressList group show "burst-$1")" = "$want" ]
}
for i in 0 1 2 3; do
    check "burst: group burst-$i lists its 1000 addresses, sorted" wait_for 10 group_ok "$i"
done
exec 4>&-
wait "$BPID"
check "burst: the tool's own checks passed" grep -q '^[0-9]* passed, 0 failed' "$T/burst.out"
check "burst: the group of an app no REGISTER named is not rewritten (updateTime $BY stays)" \
    test "$(ctl --get .updateTime group show bystander)" = "$BY"
check "... in GROUP_LIST too" \
    test "$(ctl group list | jq -r '.groups[] | select(.appname == "bystander") | .updateTime')" = "$BY"
check "... while the burst's groups were (updateTime past it)" \
    test "$(ctl --get .updateTime group show burst-0)" -gt "$BY"
# Nor does a GROUP_ADD or GROUP_UPDATE of another group write it
ctl group add late-app >/dev/null
ctl group update late-app --title late --auto >/dev/null
check "GROUP_ADD and GROUP_UPDATE of another app leave the group alone (updateTime $BY)" \
    test "$(ctl --get .updateTime group show bystander)" = "$BY"
check "... while the group they name is written (automatic: its address list is set, empty)" \
    bash -c "$CTL --api $API --json group show late-app | jq -e '.title == \"late\" and .addressList == \"\" and .updateTime > $BY' >/dev/null"

# Big replies: a client that asks and never reads costs a bounded amount
# of memory (a reply of 64 KiB or more enters ZeroMQ's queue only while
# less than 64 KiB waits there, 64 MiB more wait in the scheduler; the rest
# are dropped and logged), and no reply passes the 4 MiB frame limit
kill -TERM "$SPID"; wait "$SPID" 2>/dev/null
xxl_store_empty
# (under ASan, freed memory sits in a 256 MiB quarantine: keep it small so
# that RSS shows what is held)
ASAN_OPTIONS="${ASAN_OPTIONS:-}:quarantine_size_mb=16" start_scheduler || exit 1
ctl group add big-app >/dev/null
head -c 1000000 /dev/zero | tr '\0' 'x' > "$T/big.sh"
for i in 1 2 3; do
    ctl job add --group big-app --glue-type GLUE_SHELL --glue-source "$T/big.sh" >/dev/null
done
rss_mib () { echo $(( $(awk '/^VmRSS/ { print $2 }' "/proc/$SPID/status") / 1024 )); }
BEFORE=$(rss_mib)
mkfifo "$T/flood.in"
"$TC" flood "$API" 300 3 < "$T/flood.in" > "$T/flood.out" 2>&1 &
FPID=$!
exec 5> "$T/flood.in"
check "flood: replies the client does not read are dropped, and logged" \
    wait_for 60 grep -q 'a reply was dropped: the client has not read' "$T/scheduler.log"
AFTER=$(rss_mib)
echo "# scheduler RSS $BEFORE MiB before, $AFTER MiB with 300 unread 3 MB replies asked for"
check "flood: the scheduler's memory stays bounded (< 500 MiB more, not 900)" \
    test $((AFTER - BEFORE)) -lt 500
check "flood: other clients are answered" ctl agent list
exec 5>&-
wait "$FPID"
for i in 4 5; do
    ctl job add --group big-app --glue-type GLUE_SHELL --glue-source "$T/big.sh" >/dev/null
done
check "a list of 5 MB of jobs: answered within the frame limit" "$TC" big "$API"

# A scheduler frozen past the dead time (SIGSTOP) judges no agent dead for
# the beats it could not hear: at the thaw they are still registered
kill -TERM "$SPID"; wait "$SPID" 2>/dev/null
cat > "$T/scheduler.cfg" <<CFG
scheduler
    registry
        beat = 1
        dead = 3
    run_timeout = 5000
    request_timeout = 3000
CFG
start_scheduler || exit 1
start_agent steady steady-app
check "frozen: the agent registers" wait_for 10 agent_registered steady-app steady
ctl group add steady-app >/dev/null
SJ=$(ctl --get .id job add --group steady-app --handler demoJobHandler)
for round in 1 2 3; do
    kill -STOP "$SPID"; sleep 4.5; kill -CONT "$SPID"
    check "frozen $round: the scheduler answers after the thaw" wait_for 10 ctl agent list
    SL=$(ctl --get '.logIds[0]' job trigger "$SJ")
    check "frozen $round: a trigger right after the thaw runs" wait_for 10 field_is "$SL" handleCode 200
done
check "frozen: the agent was never dropped for the beats it sent while the scheduler stood still" \
    bash -c "! grep -q 'steady missed its beats' '$T/scheduler.log'"

xxl_done
