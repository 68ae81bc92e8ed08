#!/usr/bin/env bash
# test_callback.sh -- an agent's CALLBACK against the store, xxl_peer as
# the agent: a batch with a malformed item is refused whole (400, nothing
# stored), and a run whose trigger failed takes no result (200, nothing
# changed), while a well-formed result for an accepted run finishes it.
. "$(dirname "$0")/lib.sh"
xxl_setup
#   (an address stays registered between beats far apart: below; runs
#   of a peer that left are lost after 1 s: the end)
sed -i 's/dead = 3$/dead = 60/' "$T/scheduler.cfg"
printf '    monitor\n        lost_check = 200\n        lost_after = 1\n' >> "$T/scheduler.cfg"
start_scheduler || exit 1
START_S=$(date +%s)
PEER="$XXL_PEER"
ctl group add peer-app >/dev/null
PJOB=$(ctl --get .id job add --group peer-app --handler peerHandler --desc peer)
peer_gone () { ! agent_registered peer-app peer-1; }
# peer_run NAME REPLY-CODE STEP...: one RUN to the peer, answered
# REPLY-CODE, then the steps; its lines in $T/NAME.json: REGISTER, RUN,
# reply, the steps, UNREGISTER; the run's id in PLOG
peer_run () {
    local out="$T/$1.json" code="$2" reg="registryGroup=s:EXECUTOR registryKey=s:peer-app registryValue=s:peer-1"
    shift 2
    # shellcheck disable=SC2086
    "$PEER" "$AGENTS" --timeout 8000 -- send REGISTER $reg -- expect RUN -- reply "$code" "$@" \
        -- send UNREGISTER $reg >"$out" &
    local pid=$!
    wait_for 10 agent_registered peer-app peer-1
    PLOG=$(ctl --get '.logIds[0]' job trigger "$PJOB")
    wait "$pid"
    wait_for 10 peer_gone
    [ "$(jq -s '.[1].logId' "$out")" = "$PLOG" ] || { echo "# $out:"; cat "$out"; }
}
step_code () { jq -s ".[$2].code" "$T/$1.json"; }

# All or nothing: [result 500 for the run, a malformed item] is 400 and
# stores nothing; the run's result sent again alone (200) is the one kept
peer_run bad 200 -- send CALLBACK 'items=cbx:$LOG:500' -- send CALLBACK 'items=cb:$LOG:200'
check "a CALLBACK with a malformed item is answered 400" test "$(step_code bad 3)" = 400
check "... naming the item and the field" bash -c "jq -se '.[3].msg | test(\"^items\\\\[1\\\\]: .*logId\")' '$T/bad.json' >/dev/null"
check "the well-formed batch sent after it: 200" test "$(step_code bad 4)" = 200
check "... its result is the run's: the refused batch stored nothing" \
    test "$(log_field "$PLOG" handleCode)" = 200
LL0=$PLOG

# A run whose trigger failed (the agent answered its RUN 500) takes no
# result: the CALLBACK is acknowledged and changes nothing
peer_run late 500 -- send CALLBACK 'items=cb:$LOG:200'
check "a CALLBACK for a run whose trigger failed is acknowledged 200" test "$(step_code late 3)" = 200
check "... the run stays failed: triggerCode 500" test "$(log_field "$PLOG" triggerCode)" = 500
check "... with no result (handleCode 0)" test "$(log_field "$PLOG" handleCode)" = 0
check "... said once in the scheduler's log" \
    grep -q "callbacks ignored: their run had failed its trigger (the latest for logId $PLOG)" "$T/scheduler.log"
check "REPORT counts it as a failure only" bash -c "
    $CTL --api $API --json report | jq -e '.sucCount == 1 and .failCount == 1' >/dev/null"
"$XXL_REQ" "$API" LOG_KILL logId="$PLOG" > "$T/kill-failed.out" 2>&1
check "LOG_KILL of it: 409, its trigger failed" jq -e '.code == 409
    and .msg == "this run is not running: its trigger failed (see its triggerMsg)"' "$T/kill-failed.out"
"$XXL_REQ" "$API" LOG_KILL logId="$LL0" > "$T/kill-done.out" 2>&1
check "... of a finished run: 409, not running" jq -e '.code == 409
    and .msg == "this run is not running"' "$T/kill-done.out"

# LOG_CAT forwards the agent's LOG page only when it is one: a map with
# integer fromLineNum >= 1 and toLineNum >= fromLineNum - 1, a string (or
# bin) logContent made valid UTF-8 and cut at 192 KiB, a boolean isEnd;
# anything else reaches the client as 502
PAGE="fromLineNum=1 toLineNum=1 isEnd=true"
"$PEER" "$AGENTS" --timeout 8000 \
    -- send REGISTER registryGroup=s:EXECUTOR registryKey=s:peer-app registryValue=s:peer-1 \
    -- expect RUN -- reply 200 \
    -- expect LOG -- reply 200 =s:notamap \
    -- expect LOG -- reply 200 fromLineNum=s:one toLineNum=1 logContent=s:x isEnd=true \
    -- expect LOG -- reply 200 fromLineNum=1 toLineNum=-5 logContent=s:x isEnd=true \
    -- expect LOG -- reply 200 fromLineNum=1 toLineNum=1 logContent=7 isEnd=true \
    -- expect LOG -- reply 200 fromLineNum=1 toLineNum=1 logContent=s:x isEnd=s:yes \
    -- expect LOG -- reply 200 $PAGE logContent=x:300000:ab \
    -- expect LOG -- reply 200 $PAGE logContent=hex:6869ff0a extra=1 \
    -- send UNREGISTER registryGroup=s:EXECUTOR registryKey=s:peer-app registryValue=s:peer-1 \
    > "$T/pages.json" &
PAGES_PID=$!
wait_for 10 agent_registered peer-app peer-1
LL=$(ctl --get '.logIds[0]' job trigger "$PJOB")
wait_for 10 field_is "$LL" triggerCode 200
#   (one LOG_CAT each: xxl-ctl's log cat would ask for the next page)
for n in 1 2 3 4 5 6 7; do "$XXL_REQ" "$API" LOG_CAT logId="$LL" > "$T/page$n.out" 2>&1; done
wait "$PAGES_PID"
check "a page that is not a map: 502 saying so" grep -q "malformed: its content is not a map" "$T/page1.out"
check "fromLineNum not an integer: 502" grep -q "malformed: fromLineNum" "$T/page2.out"
check "a negative toLineNum: 502" grep -q "malformed: toLineNum" "$T/page3.out"
check "logContent not a string: 502" grep -q "malformed: logContent" "$T/page4.out"
check "isEnd not a boolean: 502" grep -q "malformed: isEnd" "$T/page5.out"
for n in 1 2 3 4 5; do
    check "... page $n answered 502" jq -e '.code == 502' "$T/page$n.out"
done
check "a page over the limit: 200, cut at 192 KiB" \
    jq -e '.code == 200 and (.content.logContent | length) == 196608' "$T/page6.out"
check "a bin logContent comes as text, its bad byte U+FFFD, other keys dropped" \
    jq -e '.code == 200 and .content.logContent == "hi\ufffd\n" and .content.isEnd == true
           and .content.toLineNum == 1 and (.content | has("extra") | not)' "$T/page7.out"
check "the malformed pages are logged" grep -q "the LOG reply of peer-1 is malformed" "$T/scheduler.log"

# Two xxl-agents with one address: the last to register holds it, and the
# first one's CALLBACK for a run it had is refused 401 (its connection has
# no address now).  That agent registers again at once and retries after a
# backoff: the run finishes, with a refusal line or two, not a flood
check "agents beating on their own connections gave no such warning" \
    bash -c "! grep -q 'moved to another connection' '$T/scheduler.log'"
ctl group add dup-app >/dev/null
printf 'while [ ! -f %s/go ]; do sleep 0.1; done\necho done\n' "$T" > "$T/wait.sh"
DJ=$(ctl --get .id job add --group dup-app --glue-type GLUE_SHELL --glue-source "$T/wait.sh")
#   The first agent beats every 30 s: its next beat cannot take the address
#   back before its CALLBACK goes (the second one beats every second)
sed 's/beat = 1$/beat = 30/; s/run_lease = [0-9]*$/run_lease = 60/' "$T/agent.cfg" > "$T/agent-slow.cfg"
AGENT_CFG="$T/agent-slow.cfg" start_agent same dup-app
check "the first agent registers the address" wait_for 10 agent_registered dup-app same
DL=$(ctl --get '.logIds[0]' job trigger "$DJ")
check "its run is accepted" wait_for 10 field_is "$DL" triggerCode 200
"$AGENT" -c "$T/agent.cfg" --app dup-app --scheduler "$AGENTS" --address same \
    --plugins "$HANDLERS" --logdir "$T/logs-same2" >>"$T/agent-same2.log" 2>&1 &
PIDS="$PIDS $!"
check "a second agent registers the same address" \
    wait_for 10 grep -q "registered with .* as dup-app/same" "$T/agent-same2.log"
check "the scheduler warns: two agents with one address" \
    wait_for 10 grep -q "registry: dup-app/same moved to another connection while its old one is open: two agents with one address" "$T/scheduler.log"
touch "$T/go"
check "the first agent's run finishes 200 all the same" wait_for 20 field_is "$DL" handleCode 200
refusals () { grep -c "callback batch refused" "$T/agent-same.log" || true; }
check "its CALLBACK was refused 401 and it said so" grep -q "callback batch refused by .* (401" "$T/agent-same.log"
check "... in two lines at most, not a flood" test "$(refusals)" -le 2
check "... at most a line per 10 s (the address flips at each 401 and beat)" \
    test "$(grep -c 'moved to another connection' "$T/scheduler.log")" -le $(( ( $(date +%s) - START_S ) / 10 + 1 ))
check "the scheduler still serves" kill -0 "$SPID"

# A result that comes after its run was declared lost is recorded beside
# the row, once, and only from the row's own address: peer-9 takes a run
# and leaves (it says no run lease: the lost-run monitor fails the run
# after lost_after, 1 s here); peer-8, another agent of the app, sends a
# result for it (a forger): nothing is written; peer-9 back sends its
# result twice (as after a lost ack): written once
REG9="registryGroup=s:EXECUTOR registryKey=s:peer-app registryValue=s:peer-9"
"$PEER" "$AGENTS" --timeout 8000 -- send REGISTER $REG9 -- expect RUN -- reply 200 \
    -- send UNREGISTER $REG9 > "$T/gone.json" &
GONE=$!
registered9 () { agent_registered peer-app peer-9; }
wait_for 10 registered9
LOST=$(ctl --get '.logIds[0]' job trigger "$PJOB")
wait "$GONE"
check "the leaving peer took the run" test "$(jq -s '.[1].logId' "$T/gone.json")" = "$LOST"
lost_row () { log_field "$LOST" handleMsg | grep -q '^lost:'; }
check "the run of a peer that left is failed as lost" wait_for 15 lost_row
REG8="registryGroup=s:EXECUTOR registryKey=s:peer-app registryValue=s:peer-8"
"$PEER" "$AGENTS" --timeout 8000 -- send REGISTER $REG8 \
    -- send CALLBACK "items=cb:$LOST:200" -- send UNREGISTER $REG8 > "$T/forged.json"
check "another address's result for it is acknowledged 200" test "$(step_code forged 1)" = 200
check "... and not written beside the row" bash -c "! $CTL --api $API --json log show $LOST | jq -r .handleMsg | grep -q 'came after'"
"$PEER" "$AGENTS" --timeout 8000 -- send REGISTER $REG9 \
    -- send CALLBACK "items=cb:$LOST:200" -- send CALLBACK "items=cb:$LOST:200" \
    -- send UNREGISTER $REG9 > "$T/lateown.json"
check "its own agent's late result is acknowledged 200, twice" \
    test "$(step_code lateown 1),$(step_code lateown 2)" = "200,200"
late_marks () { log_field "$LOST" handleMsg | grep -c 'a result came after the run was given up: 200 at '; }
check "... recorded beside the row, once" test "$(late_marks)" = 1
check "... the row keeps its outcome (500, lost)" bash -c "
    $CTL --api $API --json log show $LOST | jq -e '.handleCode == 500 and (.handleMsg | startswith(\"lost:\"))' >/dev/null"
check "... and no 'callbacks ignored' line for it" bash -c "! grep -q 'callbacks ignored.*logId $LOST)' '$T/scheduler.log'"

# A RUN its agent (no run lease) never answers fails at run_timeout; the
# agent's result after that is recorded beside the row, whose handleMsg
# was empty: no newline before the note
REG5="registryGroup=s:EXECUTOR registryKey=s:peer-app registryValue=s:peer-5"
"$PEER" "$AGENTS" --timeout 5000 -- send REGISTER $REG5 -- expect RUN -- wait 7000 \
    -- send CALLBACK 'items=cb:$LOG:200' -- send UNREGISTER $REG5 > "$T/noanswer.json" &
NPID=$!
registered5 () { agent_registered peer-app peer-5; }
wait_for 10 registered5
NOANS=$(ctl --get '.logIds[0]' job trigger "$PJOB")
wait "$NPID"
check "a RUN never answered fails, and the late result is noted at the start of handleMsg" bash -c "
    $CTL --api $API --json log show $NOANS | jq -e '.triggerCode == 500
        and (.handleMsg | startswith(\"[a result came after the run was given up: 200 at \"))' >/dev/null"

# A RUN unanswered past run_timeout (5 s here) by an agent with a run
# lease is held in doubt and asked about (a RUN of its logId, expireTime
# 1); the agent's 200 makes the row's trigger taken, and its result ends
# the run
REG6="registryGroup=s:EXECUTOR registryKey=s:peer-app registryValue=s:peer-6"
"$PEER" "$AGENTS" --timeout 9000 -- send REGISTER $REG6 runLease=60 -- expect RUN \
    -- expect RUN -- reply 200 -- send CALLBACK 'items=cb:$LOG:200' \
    -- send UNREGISTER $REG6 > "$T/doubt.json" &
DPID=$!
registered6 () { agent_registered peer-app peer-6; }
wait_for 10 registered6
DOUBT=$(ctl --get '.logIds[0]' job trigger "$PJOB")
wait "$DPID"
check "a RUN left unanswered is asked about again, by its logId with expireTime 1" \
    test "$(jq -sc '[.[1].logId, .[2].logId]' "$T/doubt.json")" = "[$DOUBT,$DOUBT]"
check "... the agent's 200 to the ask makes the trigger taken" wait_for 5 bash -c "
    $CTL --api $API --json log show $DOUBT | jq -e '.triggerCode == 200 and
        (.triggerMsg | contains(\"taken (its first answer was lost; asked again)\"))' >/dev/null"
check "... and its result ends the run" field_is "$DOUBT" handleCode 200

# An agent that, asked, answers that it never took the RUN (expired: it
# lost it, as one restarted or drained does) gets it routed again, a new
# RUN of the same logId; its 200 and result end the run.  An agent that
# loses it every time gets it 3 times, then the row fails (that agent
# answers nothing to the 4th RUN, so the row ends in doubt of it)
REG10="registryGroup=s:EXECUTOR registryKey=s:peer-app registryValue=s:peer-10"
"$PEER" "$AGENTS" --timeout 9000 -- send REGISTER $REG10 runLease=60 -- expect RUN \
    -- expect RUN -- reply 500 'msg:expired: never had it' -- expect RUN -- reply 200 \
    -- send CALLBACK 'items=cb:$LOG:200' -- send UNREGISTER $REG10 > "$T/unseen.json" &
DPID=$!
registered10 () { agent_registered peer-app peer-10; }
wait_for 10 registered10
UNSEEN=$(ctl --get '.logIds[0]' job trigger "$PJOB")
wait "$DPID"
check "a RUN the agent, asked, says it never took is sent again" bash -c "
    jq -se '[.[1].logId, .[2].logId, .[4].logId] == [$UNSEEN, $UNSEEN, $UNSEEN]
            and .[4].id != .[1].id' '$T/unseen.json' >/dev/null"
check "... and its result ends it" wait_for 5 field_is "$UNSEEN" handleCode 200
check "... the scheduler says it routed it again" \
    grep -q "log $UNSEEN: peer-10, asked again, never took it; routed again (1 of 3)" "$T/scheduler.log"
LOSE=()
for n in 1 2 3; do LOSE+=(-- expect RUN -- expect RUN -- reply 500 "msg:expired: lost again"); done
"$PEER" "$AGENTS" --timeout 9000 -- send REGISTER $REG10 runLease=60 "${LOSE[@]}" \
    -- expect RUN -- expect RUN -- reply 500 'msg:expired: and again' \
    -- send UNREGISTER $REG10 > "$T/unseen2.json" &
DPID=$!
wait_for 10 registered10
UNSEEN2=$(ctl --get '.logIds[0]' job trigger "$PJOB")
wait "$DPID"
check "a RUN lost at every try is sent 3 times more, then no more" bash -c "
    jq -se '[.[] | select(.step == \"expect RUN\") | .logId] | length == 8 and all(. == $UNSEEN2)' \
        '$T/unseen2.json' >/dev/null"
check "... and then fails: the agent never took it" wait_for 5 bash -c "
    $CTL --api $API --json log show $UNSEEN2 | jq -e '.triggerCode == 500 and
        (.triggerMsg | contains(\"asked again, the agent never took it\"))' >/dev/null"

# ... but not at once on the word of another connection while the RUN's is
# still open: host B registers the address while A's connection (which
# has the RUN, unanswered) stays open; B, asked, says it never took it.
# B may be another host (A's may hold the run) or the agent back before
# its old connection's close reached the scheduler (a cut link: the close
# comes once it mends): the row waits, neither failed nor sent again,
# until A's connection closes; then it goes again
# host_a_holds ADDRESS LEASE: host A registers ADDRESS saying LEASE, is
# given a trigger's RUN, answers nothing and holds its connection open
# (APID; killed by the caller); HELD is the run's logId
host_a_holds () {
    "$PEER" "$AGENTS" --timeout 30000 -- send REGISTER registryGroup=s:EXECUTOR \
        registryKey=s:peer-app "registryValue=s:$1" "runLease=$2" -- expect RUN \
        -- expect NOTHING > "$T/hostA-$1.json" &
    APID=$!
    wait_for 10 agent_registered peer-app "$1"
    HELD=$(ctl --get '.logIds[0]' job trigger "$PJOB")
    wait_for 5 bash -c "[ \"\$($CTL --api $API --json log show $HELD | jq -r .executorAddress)\" = $1 ]"
}
REG11="registryGroup=s:EXECUTOR registryKey=s:peer-app registryValue=s:peer-11"
host_a_holds peer-11 60
OTHER=$HELD
"$PEER" "$AGENTS" --timeout 20000 -- send REGISTER $REG11 runLease=60 -- expect RUN \
    -- reply 500 'msg:expired: not mine' -- expect RUN -- reply 200 \
    -- send CALLBACK 'items=cb:$LOG:200' -- send UNREGISTER $REG11 > "$T/hostB.json" &
BPID=$!
held11 () { grep -q "log $OTHER: peer-11, asked on another connection, never took it; the RUN's connection is still open: routed again once it closes or the run lease (60 s) has passed" "$T/scheduler.log"; }
check "another host on the address, asked (the RUN's connection still open), says it never took it" \
    wait_for 15 held11
check "... the row waits: not failed, not sent again" bash -c "
    $CTL --api $API --json log show $OTHER | jq -e '.triggerCode == 0 and .handleCode == 0' >/dev/null &&
    test \"\$(jq -sc '[.[1].logId, length]' '$T/hostB.json')\" = '[$OTHER,3]'"
kill "$APID" 2>/dev/null; wait "$APID" 2>/dev/null
wait "$BPID"
check "... once the RUN's connection closed, it goes again (to B) and runs" bash -c "
    test \"\$(jq -sc '.[3].logId' '$T/hostB.json')\" = $OTHER" && wait_for 5 field_is "$OTHER" handleCode 200
check "... the scheduler says it routed it again" \
    grep -q "log $OTHER: peer-11, asked again, never took it; routed again (1 of 3)" "$T/scheduler.log"

# The same while the RUN's connection stays open: once the run lease (4 s
# here, the longer of what the RUN's agent and the answering one said) and
# 3 s have passed since the answer, the agent behind it, silent there,
# holds no run: the row goes again (to B, which beats meanwhile)
REG14="registryGroup=s:EXECUTOR registryKey=s:peer-app registryValue=s:peer-14"
host_a_holds peer-14 4
OPEN=$HELD
BEATS=()
for n in $(seq 12); do BEATS+=(-- wait 1000 -- send REGISTER $REG14 runLease=2); done
"$PEER" "$AGENTS" --timeout 20000 -- send REGISTER $REG14 runLease=2 -- expect RUN \
    -- reply 500 'msg:expired: not mine' "${BEATS[@]}" -- expect RUN -- reply 200 \
    -- send CALLBACK 'items=cb:$LOG:200' -- send UNREGISTER $REG14 > "$T/hostB14.json"
check "the RUN's connection open, the row goes again once the lease has passed since the answer" \
    bash -c "kill -0 $APID && test \"\$(jq -sc '[.[1].logId, .[-4].logId]' '$T/hostB14.json')\" = '[$OPEN,$OPEN]'"
check "... and runs" wait_for 5 field_is "$OPEN" handleCode 200
check "... the scheduler waited the RUN's agent's lease (4 s), not the other's (2 s)" \
    grep -q "log $OPEN: peer-14, asked on another connection, never took it; the RUN's connection is still open: routed again once it closes or the run lease (4 s) has passed" "$T/scheduler.log"
kill "$APID" 2>/dev/null; wait "$APID" 2>/dev/null

# ... and on the word of the same agent back on a new connection once the
# RUN's has closed (it restarted: its journal answers): peer A takes the
# RUN and leaves; A', on the address, disowns it; it goes again
REG12="registryGroup=s:EXECUTOR registryKey=s:peer-app registryValue=s:peer-12"
"$PEER" "$AGENTS" --timeout 9000 -- send REGISTER $REG12 runLease=60 -- expect RUN \
    > "$T/gone12.json" &
GPID=$!
registered12 () { agent_registered peer-app peer-12; }
wait_for 10 registered12
BACK=$(ctl --get '.logIds[0]' job trigger "$PJOB")
wait "$GPID"
"$PEER" "$AGENTS" --timeout 9000 -- send REGISTER $REG12 runLease=60 -- expect RUN \
    -- reply 500 'msg:expired: restarted' -- expect RUN -- reply 200 \
    -- send CALLBACK 'items=cb:$LOG:200' -- send UNREGISTER $REG12 > "$T/back12.json"
check "the agent back on a new connection is asked about the RUN its old one took" \
    test "$(jq -s '.[1].logId' "$T/gone12.json"),$(jq -s '.[1].logId' "$T/back12.json")" \
        = "$BACK,$BACK"
check "... its 'never took it' (the old connection closed) sends the run again" \
    test "$(jq -s '.[3].logId' "$T/back12.json")" = "$BACK"
check "... and its result ends it" wait_for 5 field_is "$BACK" handleCode 200
check "... the scheduler says it routed it again" \
    grep -q "log $BACK: peer-12, asked again, never took it; routed again (1 of 3)" "$T/scheduler.log"

# A run being killed to cover a newer trigger (maxRunning 1, COVER_EARLY)
# is not routed again on its agent's 'never took it' (it must not start:
# its KILL went already): it fails as before
CJOB=$(ctl --get .id job add --group peer-app --handler peerHandler --desc cover --max-running 1 \
       --block COVER_EARLY)
REG13="registryGroup=s:EXECUTOR registryKey=s:peer-app registryValue=s:peer-13"
"$PEER" "$AGENTS" --timeout 9000 -- send REGISTER $REG13 runLease=60 -- expect RUN \
    -- expect RUN -- reply 500 'msg:expired: never had it' -- expect NOTHING \
    -- send UNREGISTER $REG13 > "$T/cover13.json" &
CPID=$!
registered13 () { agent_registered peer-app peer-13; }
wait_for 10 registered13
COVERED=$(ctl --get '.logIds[0]' job trigger "$CJOB")
wait_for 5 bash -c "[ \"\$($CTL --api $API --json log show $COVERED | jq -r .executorAddress)\" = peer-13 ]"
NEWER=$(ctl --get '.logIds[0]' job trigger "$CJOB")
wait "$CPID"
check "a covered run in doubt is asked about" test "$(jq -s '.[2].logId' "$T/cover13.json")" = "$COVERED"
check "... and fails on the agent's 'never took it'" wait_for 5 bash -c "
    $CTL --api $API --json log show $COVERED | jq -e '.triggerCode == 500
        and (.triggerMsg | contains(\"asked again, the agent never took it\"))' >/dev/null"
check "... and its log keeps the cover note, ahead of the answer's section" bash -c "
    $CTL --api $API --json log show $COVERED | jq -e '.triggerMsg
        | (index(\"killed: covered by a newer trigger (maxRunning 1, block strategy COVER_EARLY)\n\")
           // -1) as \$k | (index(\"asked again, the agent never took it\") // -1) as \$a
        | \$k >= 0 and \$a > \$k' >/dev/null"
check "... not routed again" bash -c "! grep -q 'log $COVERED: .*routed again' '$T/scheduler.log'"
check "... while the newer trigger was kept ($NEWER)" bash -c "
    [ \"\$($CTL --api $API --json log show $NEWER | jq -r .triggerCode)\" != null ]"

# handlers in REGISTER: each REGISTER replaces the list, absent clearing
# it as tags' absence does
REGH="registryGroup=s:EXECUTOR registryKey=s:hand-app registryValue=s:peer-h"
handlers_of () { $CTL --api $API --json agent list | jq -r '.agents[] | select(.address == "peer-h") | .handlers'; }
"$PEER" "$AGENTS" --timeout 5000 -- send REGISTER $REGH handlers=s:h1,h2 > "$T/hand1.json"
check "a REGISTER's handlers are listed" test "$(handlers_of)" = "h1,h2"
"$PEER" "$AGENTS" --timeout 5000 -- send REGISTER $REGH handlers=s:h3 > "$T/hand2.json"
check "... the next REGISTER's replace them" test "$(handlers_of)" = "h3"
"$PEER" "$AGENTS" --timeout 5000 -- send REGISTER $REGH > "$T/hand3.json"
check "... and one without handlers clears them" test "$(handlers_of)" = ""

# runLease (seconds, 0-86400) in REGISTER: a value past the range is 400
# naming the field, and the scheduler serves on; one inside it registers
REG7="registryGroup=s:EXECUTOR registryKey=s:peer-app registryValue=s:peer-7"
"$PEER" "$AGENTS" --timeout 8000 -- send REGISTER $REG7 runLease=100000 \
    -- send REGISTER $REG7 runLease=s:long -- send REGISTER $REG7 runLease=5 \
    -- send UNREGISTER $REG7 > "$T/lease.json"
check "a REGISTER with runLease 100000 is refused 400" test "$(step_code lease 0)" = 400
check "... naming runLease" bash -c "jq -se '.[0].msg | test(\"runLease\")' '$T/lease.json' >/dev/null"
check "... as is a runLease that is not an integer" test "$(step_code lease 1)" = 400
check "the same REGISTER with runLease 5 is taken" test "$(step_code lease 2)" = 200
xxl_done
