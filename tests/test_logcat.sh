#!/usr/bin/env bash
# test_logcat.sh -- a run's log read by byte offset (LOG_CAT's fromByte):
# a multi-MB log comes byte for byte through xxl-ctl in pages of up to
# 1 MiB, a line longer than a page cut between UTF-8 characters; the line
# form still answers; log cat -f follows a running log by bytes; and the
# scheduler's checks of an agent's page by byte (xxl_peer as the agent).
. "$(dirname "$0")/lib.sh"
xxl_store_blind "log paging"
xxl_setup
REQ="$XXL_REQ"
PEER="$XXL_PEER"
# jqf FILE [jq options] FILTER: FILE holds JSON and FILTER is true of it
# (jq -e alone passes an empty file)
jqf () { local f="$1"; shift; [ -s "$f" ] && jq -e "$@" "$f" >/dev/null; }
export XXL_SCHEDULER_ARGS="--http 127.0.0.1:0"
start_scheduler || exit 1
start_agent w1 cat-app
check "agent registers" wait_for 10 agent_registered cat-app w1
ctl group add cat-app >/dev/null
printf 'echo first\n' > "$T/j.sh"
J=$(ctl --get .id job add --group cat-app --glue-type GLUE_SHELL --glue-source "$T/j.sh")
L=$(ctl --get '.logIds[0]' job trigger "$J")
check "the run ends" wait_for 10 field_is "$L" handleCode 200
F=$(find "$T/logs-w1" -name "$L.log")
# The finished run's log made 3.4 MB: lines with 2-, 3- and 4-byte
# characters, a 1.5 MB line of 3-byte characters (a page holds no line
# end: cut between characters), and a last line without its end
python3 - "$F" <<'PY'
import sys
with open(sys.argv[1], 'ab') as f:
    for i in range(40000):
        f.write(("line %d h\u00e9llo \u20ac \U0001F600 %s\n" % (i, "x" * (i % 40))).encode())
    f.write(("\u20ac" * 500000 + "\n").encode())
    for i in range(8000):
        f.write(("after %d \u00e9\n" % i).encode())
    f.write("the end, no line end \u00e9".encode())
PY
SIZE=$(stat -c %s "$F")
check "the log is over 3 MB" test "$SIZE" -gt 3000000

"$CTL" --api "$API" log cat "$L" > "$T/cat.out"
check "log cat: the log byte for byte" cmp "$T/cat.out" "$F"
"$CTL" --api "$API" --json log cat "$L" > "$T/cat.json"
check "log cat --json: its content, nextByte the size, its lines, the end" jqf "$T/cat.json" \
    --rawfile f "$F" --argjson size "$SIZE" --argjson lines "$(wc -l < "$F")" \
    '.logContent == $f and .nextByte == $size and .toLineNum == $lines and .isEnd == true'

# The pages, one LOG_CAT each: up to 1 MiB, none splits a character, each
# starting where the last ended, about size / 1 MiB of them
walk_pages () {
    local from=0 n=0
    : > "$T/pages.out"
    while [ $n -lt 20 ]; do
        "$REQ" "$API" LOG_CAT logId="$L" fromByte="$from" > "$T/page.json" || return 1
        jq -e --argjson from "$from" '.code == 200 and .content.fromByte == $from
            and .content.nextByte > $from and .content.nextByte - $from <= 1048576' \
            "$T/page.json" >/dev/null || { cat "$T/page.json" | cut -c1-300; return 1; }
        jq -j .content.logContent "$T/page.json" >> "$T/pages.out"
        from=$(jq .content.nextByte "$T/page.json")
        n=$((n + 1))
        [ "$(jq .content.isEnd "$T/page.json")" = true ] && break
    done
    echo "$n" > "$T/pages.n"
}
check "LOG_CAT by byte: pages of up to 1 MiB, each from the last one's nextByte" walk_pages
check "... joined, the log byte for byte" cmp "$T/pages.out" "$F"
check "... in few pages (4 or 5 for 3.4 MB): $(cat "$T/pages.n" 2>/dev/null)" \
    test "$(cat "$T/pages.n" 2>/dev/null || echo 99)" -le 5

"$REQ" "$API" LOG_CAT logId="$L" fromByte="$((SIZE + 10))" > "$T/past.json"
check "past the end: empty, nextByte = fromByte, the end" jqf "$T/past.json" --argjson n "$((SIZE + 10))" \
    '.code == 200 and .content.logContent == "" and .content.nextByte == $n and .content.isEnd'
"$REQ" "$API" LOG_CAT logId="$L" fromByte=-1 > "$T/neg.json"
check "a negative fromByte: 400" jqf "$T/neg.json" '.code == 400 and (.msg | test("fromByte"))'
"$REQ" "$API" LOG_CAT logId="$L" fromLineNum=2 > "$T/line.json"
TO=$(jq .content.toLineNum "$T/line.json")
check "the line form still answers by line: lines 2 to $TO, at most 64 KiB" jqf "$T/line.json" \
    --rawfile want <(sed -n "2,${TO}p" "$F") '.code == 200 and .content.fromLineNum == 2
    and .content.toLineNum > 100 and (.content | has("nextByte") | not)
    and .content.logContent == $want and (.content.logContent | utf8bytelength) <= 65536'

# The HTTP route takes fromByte as a query key; `from` is still the line
TOKEN=$(ctl --get .token token add cat-viewer --role viewer)
curl -s -H "Authorization: Bearer $TOKEN" "http://$HTTP_EP/api/v1/logs/$L/cat?fromByte=0" > "$T/http.json"
check "GET /api/v1/logs/ID/cat?fromByte=0: a page by byte" jqf "$T/http.json" \
    '.fromByte == 0 and .nextByte > 900000 and .nextByte <= 1048576 and (has("toLineNum") | not)'
curl -s -H "Authorization: Bearer $TOKEN" "http://$HTTP_EP/api/v1/logs/$L/cat?from=2" > "$T/http-line.json"
check "... and ?from=2 a page by line" jqf "$T/http-line.json" '.fromLineNum == 2 and .toLineNum > 2'

# log cat -f follows a running run by bytes, to its end
printf 'for i in $(seq 1 8); do echo "tick $i \\u00e9"; sleep 0.2; done\n' > "$T/slow.sh"
SJ=$(ctl --get .id job add --group cat-app --glue-type GLUE_SHELL --glue-source "$T/slow.sh")
SL=$(ctl --get '.logIds[0]' job trigger "$SJ")
wait_for 5 field_is "$SL" triggerCode 200
timeout 30 "$CTL" --api "$API" log cat -f "$SL" > "$T/follow.out"
check "log cat -f ends by itself once the run ends" test $? -eq 0
check "... having written the log byte for byte" cmp "$T/follow.out" "$(find "$T/logs-w1" -name "$SL.log")"

# The scheduler's checks of an agent's page by byte
ctl group add peer-app >/dev/null
PJ=$(ctl --get .id job add --group peer-app --handler peerHandler)
"$PEER" "$AGENTS" --timeout 8000 \
    -- send REGISTER registryGroup=s:EXECUTOR registryKey=s:peer-app registryValue=s:peer-1 \
    -- expect RUN -- reply 200 \
    -- expect LOG -- reply 200 fromLineNum=1 toLineNum=1 logContent=s:x isEnd=true \
    -- expect LOG -- reply 200 fromByte=6 nextByte=9 logContent=s:x isEnd=true \
    -- expect LOG -- reply 200 fromByte=5 nextByte=1048582 logContent=s:x isEnd=true \
    -- expect LOG -- reply 200 fromByte=5 nextByte=9 logContent=hex:6869ff0a isEnd=true extra=1 \
    -- send UNREGISTER registryGroup=s:EXECUTOR registryKey=s:peer-app registryValue=s:peer-1 \
    > "$T/peer.json" &
PEER_PID=$!
wait_for 10 agent_registered peer-app peer-1
PL=$(ctl --get '.logIds[0]' job trigger "$PJ")
wait_for 10 field_is "$PL" triggerCode 200
for n in 1 2 3 4; do "$REQ" "$API" LOG_CAT logId="$PL" fromByte=5 > "$T/peer$n.out" 2>&1; done
wait "$PEER_PID"
check "a page by line for a fromByte: 502, an agent that does not know fromByte" jqf "$T/peer1.out" \
    '.code == 502 and (.msg | test("does not know fromByte"))'
check "a fromByte other than the one asked: 502" jqf "$T/peer2.out" \
    '.code == 502 and (.msg | test("fromByte is not the 5 asked"))'
check "a page over 1 MiB: 502" jqf "$T/peer3.out" '.code == 502 and (.msg | test("nextByte"))'
check "a page by byte: forwarded, its bad byte U+FFFD, other keys dropped" jqf "$T/peer4.out" \
    '.code == 200 and .content == {"fromByte": 5, "nextByte": 9, "logContent": "hi\ufffd\n",
     "isEnd": true}'
xxl_done
