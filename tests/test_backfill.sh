#!/usr/bin/env bash
# test_backfill.sh -- backfills end to end (DESIGN §13): xxl-ctl job backfill
# over a small past range makes exactly one run per planned fire time (its
# scheduleTime, trigger type BACKFILL), skipping a calendar's excluded
# times; a repeated and an overlapping backfill add nothing for instants
# made; list/show give progress and who started it; stop ends a running
# one; REST; the refusals (each beside the allowed case) change nothing.
. "$(dirname "$0")/lib.sh"
xxl_setup

export XXL_SCHEDULER_ARGS="--http 127.0.0.1:0"
start_scheduler || exit 1
start_agent agent-a bf-app
check "agent registers" wait_for 10 agent_registered bf-app agent-a
ctl group add bf-app >/dev/null

refused () {    # refused "reason part" ctl-args...: non-zero exit, reason in the error
    local want="$1"; shift
    local out
    out=$("$CTL" --api "$API" --json "$@" 2>&1) && return 1
    grep -qF -- "$want" <<<"$out" || { echo "  got: $out"; return 1; }
}
backfills () { xxl_sql "SELECT COUNT(*) FROM xxl_backfill"; }

# A one-second cron job, stopped: only backfills make its runs.  Its
# calendar excludes the seconds divisible by 5.
ctl calendar add five --exclude-cron '*/5 * * * * ?' >/dev/null
JOB=$(ctl --get .id job add --group bf-app --handler demoJobHandler --cron '* * * * * ?' --calendar five \
)
NONE=$(ctl --get .id job add --group bf-app --handler demoJobHandler)
DELAY=$(ctl --get .id job add --group bf-app --handler demoJobHandler --fix-delay 5)
# 20 s of the past, on whole seconds: 16 instants (4 excluded)
NOW=$(date +%s)
FROM=$(( (NOW - 100) * 1000 ))
TO=$(( FROM + 19000 ))

# Refusals, each with the allowed case beside it
check "a job without fire times (NONE) is refused" refused "schedule type NONE has no planned fire times" \
    job backfill "$NONE" --from "$FROM" --to "$TO"
check "a FIX_DELAY job is refused" refused "schedule type FIX_DELAY has no planned fire times" \
    job backfill "$DELAY" --from "$FROM" --to "$TO"
check "from after to is refused" refused "is after to" job backfill "$JOB" --from "$TO" --to "$FROM"
check "a range into the future is refused" refused "is in the future" \
    job backfill "$JOB" --from "$FROM" --to "$(( (NOW + 3600) * 1000 ))"
check "over 100,000 instants is refused" refused "holds more than 100000 fire times" \
    job backfill "$JOB" --from "$(( (NOW - 86400 * 2) * 1000 ))" --to "$TO"
check "a range without fire times is refused" refused "has no planned fire time" \
    job backfill "$JOB" --from "$(( FROM + 1 ))" --to "$(( FROM + 999 ))"
check "--per-second over its maximum is refused" refused "10000" \
    job backfill "$JOB" --from "$FROM" --to "$TO" --per-second 10001
check "--from and --to are needed" refused "give --from TIME and --to TIME" job backfill "$JOB" --from "$FROM"
check "an unknown job is 404" refused "job 999 not found" job backfill 999 --from "$FROM" --to "$TO"
check "... and none of them made a backfill" test "$(backfills)" = 0

# The allowed case: 16 runs, each once, with its scheduleTime and BACKFILL
B1=$(ctl --get .id job backfill "$JOB" --from "$FROM" --to "$TO" --per-second 50)
check "a backfill starts with its total counted" test "$(ctl --get .total backfill show "$B1")" = 16
done_state () { [ "$(ctl --get .state backfill show "$1")" = DONE ]; }
check "it ends DONE" wait_for 20 done_state "$B1"
expected () {   # the whole seconds in [FROM, TO] that are not multiples of 5, as ms
    for ((s = FROM / 1000; s <= TO / 1000; s++)); do
        (( s % 5 )) && echo "$((s * 1000))"
    done
}
expected > "$T/want"
made () { ctl log list --job "$JOB" --limit 1000 | jq -r '.logs[] | .scheduleTime' | sort -n > "$T/made"; }
made
check "its runs are exactly the planned fire times, once each" diff "$T/made" "$T/want"
ctl log list --job "$JOB" --limit 1000 > "$T/logs.json"
check "each run is a BACKFILL" jq -e '[.logs[] | .triggerType] | unique == ["BACKFILL"]' "$T/logs.json"
ctl log show "$(jq -r '.logs[0].id' "$T/logs.json")" > "$T/log.json"
check "... naming its backfill and who started it" jq -e --arg b "backfill $B1 (key 'local'" \
    '.triggerMsg | contains("Trigger type: Backfill trigger") and contains($b)' "$T/log.json"
check "show: made 16, skipped 0, by the key that started it" bash -c "
    $CTL --api $API --json backfill show $B1 | jq -e '.made == 16 and .skipped == 0 and .perSecond == 50
        and .from == $FROM and .to == $TO and (.by | test(\"local\"))' >/dev/null"
finished () { [ "$(ctl log list --job "$JOB" --limit 1000 | jq '[.logs[] | select(.handleCode == 0)] | length')" = 0 ]; }
check "its runs finish" wait_for 30 finished

# A repeated and an overlapping backfill: nothing new for instants made
B2=$(ctl --get .id job backfill "$JOB" --from "$FROM" --to "$TO")
check "a repeated backfill ends DONE" wait_for 20 done_state "$B2"
check "... having made nothing (16 skipped)" bash -c "
    $CTL --api $API --json backfill show $B2 | jq -e '.made == 0 and .skipped == 16' >/dev/null"
TO3=$(( TO + 10000 ))
B3=$(ctl job backfill "$JOB" --from "$(( FROM + 10000 ))" --to "$TO3" | jq -r .id)
check "an overlapping backfill ends DONE" wait_for 20 done_state "$B3"
for ((s = TO / 1000 + 1; s <= TO3 / 1000; s++)); do (( s % 5 )) && echo "$((s * 1000))"; done >> "$T/want"
check "... making only the new instants (8 made, 8 skipped)" bash -c "
    $CTL --api $API --json backfill show $B3 | jq -e '.made == 8 and .skipped == 8' >/dev/null"
made
check "every instant has exactly one run" diff "$T/made" "$T/want"

# Stop: a slow backfill (1 a second over 60 s) stops where it is
B4=$(ctl job backfill "$JOB" --from "$(( FROM - 60000 ))" --to "$(( FROM - 1000 ))" --per-second 1 | jq -r .id)
check "stop ends a running backfill" bash -c "$CTL --api $API --json backfill stop $B4 | jq -e '.state == \"STOPPED\"' >/dev/null"
sleep 1.5
M4=$(ctl backfill show "$B4" | jq '.made + .skipped')
check "... which makes no more runs" bash -c "sleep 1.5; test \$($CTL --api $API --json backfill show $B4 | jq '.made + .skipped') = $M4 && test $M4 -lt 5"
check "a second stop is refused (409)" refused "is STOPPED, not RUNNING" backfill stop "$B4"
check "stop of an unknown backfill is 404" refused "backfill 999 not found" backfill stop 999
check "list shows the four, newest first, with progress" bash -c "
    $CTL --api $API --json backfill list --job $JOB | jq -e '[.backfills[].id] == [$B4, $B3, $B2, $B1]
        and .backfills[3].made == 16 and .backfills[0].state == \"STOPPED\"' >/dev/null"
check "the text list has its columns" bash -c "$CTL --api $API backfill list | grep -q '^$B1 .*16/16 .*DONE'"

# REST (docs/protocol.md): POST /api/v1/jobs/{id}/backfills, GET /api/v1/backfills[/{id}],
# POST /api/v1/backfills/{id}/stop
TOKEN=$(ctl --get .token token add bf-admin --role admin)
V=$(ctl --get .token token add bf-viewer --role viewer)
rest () { curl -s -o "$T/rest.out" -w '%{http_code}' -H "Authorization: Bearer $1" "${@:2}"; }
check "REST: a viewer may not start a backfill (403)" test "$(rest "$V" -X POST "http://$HTTP_EP/api/v1/jobs/$JOB/backfills" \
    -H 'Content-Type: application/json' -d "{\"from\": $FROM, \"to\": $TO}")" = 403
check "REST: an admin starts one (201)" test "$(rest "$TOKEN" -X POST "http://$HTTP_EP/api/v1/jobs/$JOB/backfills" \
    -H 'Content-Type: application/json' -d "{\"from\": $FROM, \"to\": $TO, \"perSecond\": 100}")" = 201
B5=$(jq -r .id "$T/rest.out")
check "REST: a viewer reads it (200)" test "$(rest "$V" "http://$HTTP_EP/api/v1/backfills/$B5")" = 200
check "REST: the list (200)" test "$(rest "$V" "http://$HTTP_EP/api/v1/backfills?jobId=$JOB")" = 200
check "REST: a bad range is 400 with its reason" bash -c "
    test \"\$(curl -s -o $T/bad.out -w '%{http_code}' -H 'Authorization: Bearer $TOKEN' -X POST http://$HTTP_EP/api/v1/jobs/$JOB/backfills -H 'Content-Type: application/json' -d '{\"from\": $TO, \"to\": $FROM}')\" = 400 && grep -q 'is after to' $T/bad.out"

# Older backfills, page by page (`before`): 250 ended ones of the job among
# 50 of another (written to the store: each made at once would only be
# slower), read by 100 over xxl-ctl and REST
xxl_sql "INSERT INTO xxl_backfill (id, job_id, from_time, to_time, per_second, cursor_time, total,
             made, skipped, state, started_by, msg, add_time, update_time)
         WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 300)
         SELECT (SELECT MAX (id) FROM xxl_backfill) + n, CASE WHEN n % 6 = 0 THEN $NONE ELSE $JOB END,
                $FROM, $FROM, 1, $FROM, 1, 1, 0, 'DONE', 'test', '', 1, 1 FROM s"
xxl_sql "SELECT id FROM xxl_backfill WHERE job_id = $JOB ORDER BY id DESC" > "$T/job.want"
xxl_sql "SELECT id FROM xxl_backfill ORDER BY id DESC" > "$T/all.want"
id_pages backfills 100 backfill list --job "$JOB" > "$T/job.got"
check "the job's 255 backfills in pages of 100 by --before: every id once, newest first" \
    diff <(grep -v '^page\|truncated' "$T/job.got") "$T/job.want"
check "... 100, 100, 55, none truncated" bash -c "
    [ \"\$(grep -c . '$T/job.want')\" = 255 ] && [ \"\$(grep -c '^page' '$T/job.got')\" = 3 ] && ! grep -q truncated '$T/job.got'"
id_pages backfills 100 backfill list > "$T/all.got"
check "every job's 305, the same way (no --job: by id)" bash -c "
    diff <(grep -v '^page\|truncated' '$T/all.got') '$T/all.want' && [ \"\$(grep -c '^page' '$T/all.got')\" = 4 ] &&
    ! grep -q truncated '$T/all.got'"
BEFORE=$(sed -n 100p "$T/job.want")
check "REST ?jobId&before=ID: the next 100, below ID (a viewer)" bash -c "
    [ \"\$(curl -s -o $T/page.out -w '%{http_code}' -H 'Authorization: Bearer $V' 'http://$HTTP_EP/api/v1/backfills?jobId=$JOB&limit=100&before=$BEFORE')\" = 200 ] &&
    diff <(jq -r '.backfills[].id' $T/page.out) <(sed -n 101,200p '$T/job.want')"
for bad in "0:field 'before' is 0, outside 1..9223372036854775807" "x:query before: not a valid value"; do
    check "REST ?before=${bad%%:*}: 400 \"${bad#*:}\"" test "$(rest "$V" "http://$HTTP_EP/api/v1/backfills?before=${bad%%:*}"):$(cat "$T/rest.out")" = "400:{\"error\":\"${bad#*:}\"}"
done
check "xxl-ctl backfill list --before 0 is refused" refused "--before must be a positive number, not '0'" \
    backfill list --before 0
OTHER=$(ctl --get .token token add bf-other --role viewer --apps other-app)
check "a viewer of other apps may not page the job's backfills (403)" \
    test "$(rest "$OTHER" "http://$HTTP_EP/api/v1/backfills?jobId=$JOB&before=$BEFORE")" = 403
check "... nor every job's (403)" test "$(rest "$OTHER" "http://$HTTP_EP/api/v1/backfills?before=$BEFORE")" = 403
check "the audit records the backfill and the stop" bash -c "
    $CTL --api $API --json audit list | jq -e '[.audit[].type] | index(\"JOB_BACKFILL\") and index(\"BACKFILL_STOP\")' >/dev/null"
xxl_done
