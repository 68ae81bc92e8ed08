#!/usr/bin/env bash
# test_apps_scope.sh -- a viewer or operator whose key, user or token
# lists apps reads only those apps: over ZeroMQ and HTTP, every read of a
# group, job, GLUE source or run of another app is refused (403) and every
# list, and REPORT, holds only its apps' rows (a key of several apps: of
# them all, paged), while its own app's are answered; an admin and a key
# without apps read everything.  And an agent key's
# address held by a live connection is not taken by a second connection
# of the same key, while a restarted agent gets it back at once.
. "$(dirname "$0")/lib.sh"
xxl_setup
# Keys (C: every pair; K: the scheduler's keys folder): an admin, a viewer
# and an operator of appa, a viewer of every app, one of appa and appb, one
# of appz (which has no group), and an agent key per app
C="$T/certs"; K="$T/keys"
mkdir -p "$C" "$K"
"$CTL" keygen scheduler --role admin --dir "$C" >/dev/null
for key in "boss --role admin" "va --role viewer --apps appa" "oa --role operator --apps appa" \
           "vall --role viewer" "vab --role viewer --apps appa,appb" "vz --role viewer --apps appz" \
           "agent-a --role agent --apps appa" "agent-b --role agent --apps appb"; do
    # shellcheck disable=SC2086
    "$CTL" keygen $key --dir "$C" >/dev/null
    cp "$C/${key%% *}.cert" "$K/"
done
PEER="$XXL_PEER"
XXL_SCHEDULER_ARGS="--cert $C/scheduler.cert_secret --keys $K --http 127.0.0.1:0"
start_scheduler || exit 1
SK="$C/scheduler.cert"
as () { local who="$1"; shift; "$CTL" --api "$API" --cert "$C/$who.cert_secret" --scheduler-key "$SK" --timeout 5000 --json "$@"; }
wire () { local who="$1"; shift; "$PEER" "$API" --cert "$C/$who.cert_secret" --scheduler-key "$SK" --timeout 5000 "$@"; }

# Two apps, each a GLUE job whose source and param are its secrets, and a
# run of each through an agent of its app
mkdir -p "$T/plugins"
cp "$XXL_TEST_PLUGINS/test_handlers.so" "$HANDLERS/demo.so" "$T/plugins/"
export AGENT_PLUGINS="$T/plugins"
as boss group add appa >/dev/null
as boss group add appb >/dev/null
GA=$(as boss group show appa | jq -r .id)
GB=$(as boss group show appb | jq -r .id)
echo 'echo source-of-a-7731' > "$T/a.sh"
echo 'echo source-of-b-9924' > "$T/b.sh"
JA=$(as boss job add --group appa --glue-type GLUE_SHELL --glue-source "$T/a.sh" --param param-of-a \
    --cron '0 0 3 * * ?' | jq -r .id)
JB=$(as boss job add --group appb --glue-type GLUE_SHELL --glue-source "$T/b.sh" --param param-of-b \
    --cron '0 0 3 * * ?' | jq -r .id)
start_agent node-a appa --cert "$C/agent-a.cert_secret" --scheduler-key "$SK"
start_agent node-b appb --cert "$C/agent-b.cert_secret" --scheduler-key "$SK"
registered () { as boss agent list | jq -e --arg a "$1" --arg n "$2" '.agents | any(.app == $a and .address == $n and .connected)' >/dev/null; }
wait_for 15 registered appa node-a
wait_for 15 registered appb node-b
LA=$(as boss job trigger "$JA" | jq -r '.logIds[0]')
LB=$(as boss job trigger "$JB" | jq -r '.logIds[0]')
ran () { [ "$(as boss log show "$1" | jq -r .handleCode)" = 200 ]; }
check "an admin sets up two apps, each with a GLUE job and a run" \
    bash -c "$(declare -f as ran); C=$C SK=$SK API=$API CTL=$CTL; $(declare -f wait_for); wait_for 15 ran $LA && wait_for 15 ran $LB"

# Every read command about app B, over ZeroMQ, for a key limited to appa
# (viewer, operator): 403, and nothing of B's in the reply
b_reads () {
    echo -- send GROUP_SHOW group=s:appb -- send JOB_SHOW jobId="$JB" -- send JOB_NEXT jobId="$JB" \
        -- send JOB_LIST group=s:appb -- send LOG_LIST jobId="$JB" -- send LOG_LIST jobGroup="$GB" \
        -- send LOG_SHOW logId="$LB" -- send LOG_CAT logId="$LB" -- send GLUE_HISTORY jobId="$JB" \
        -- send GLUE_SHOW jobId="$JB" -- send GLUE_SHOW jobId="$JB" version=1
}
a_reads () {
    echo -- send GROUP_SHOW group=s:appa -- send GROUP_SHOW group=s:"$GA" -- send JOB_SHOW jobId="$JA" \
        -- send JOB_NEXT jobId="$JA" -- send JOB_LIST group=s:appa -- send LOG_LIST jobId="$JA" \
        -- send LOG_LIST jobGroup="$GA" -- send LOG_SHOW logId="$LA" -- send LOG_CAT logId="$LA" \
        -- send GLUE_HISTORY jobId="$JA" -- send GLUE_SHOW jobId="$JA" -- send GLUE_SHOW jobId="$JA" version=1 \
        -- send JOB_LIST -- send LOG_LIST -- send GROUP_LIST -- send AGENT_LIST -- send PING -- send PLUGIN_LIST \
        -- send REPORT
}
for who in va oa; do
    # shellcheck disable=SC2046
    wire "$who" $(b_reads) > "$T/$who-b.json"
    check "$who: each of the 11 reads of app B is refused (403), naming the app" \
        jq -se 'length == 11 and all(.code == 403 and (.msg | test("appb")))' "$T/$who-b.json"
    check "$who: ... and none carries B's source or param" \
        bash -c "! grep -q 'source-of-b\|param-of-b' '$T/$who-b.json'"
    # shellcheck disable=SC2046
    wire "$who" $(a_reads) > "$T/$who-a.json"
    check "$who: the same reads of app A, the lists and REPORT, are answered (200)" \
        jq -se 'length == 19 and all(.code == 200)' "$T/$who-a.json" || cat "$T/$who-a.json"
    as "$who" job show "$JA" > "$T/$who-ja.json"
    check "$who: ... A's job with its GLUE source" grep -q 'source-of-a' "$T/$who-ja.json"
    as "$who" log cat "$LA" > "$T/$who-cat.json"
    check "$who: ... A's run log, read from A's agent" jq -e '.logContent | length > 0' "$T/$who-cat.json"
    as "$who" group list > "$T/$who-groups.json"
    check "$who: lists hold only app A's rows: groups" \
        jq -e '[.groups[].appname] == ["appa"]' "$T/$who-groups.json"
    as "$who" job list > "$T/$who-jobs.json"
    check "$who: ... jobs" jq -e --argjson a "$JA" '[.jobs[].id] == [$a] and .total == 1' "$T/$who-jobs.json"
    as "$who" log list > "$T/$who-logs.json"
    check "$who: ... runs" jq -e --argjson a "$JA" '(.logs | length) >= 1 and all(.logs[]; .jobId == $a)' "$T/$who-logs.json"
    as "$who" agent list > "$T/$who-agents.json"
    check "$who: ... agents" jq -e '(.agents | length) >= 1 and all(.agents[]; .app == "appa")' "$T/$who-agents.json"
    # shellcheck disable=SC2046
    wire "$who" -- send AUDIT_LIST -- send USER_LIST -- send TOKEN_LIST > "$T/$who-admin.json"
    check "$who: the admin's reads stay refused (403)" jq -se 'all(.code == 403)' "$T/$who-admin.json"
done
wire oa -- send LOG_KILL logId="$LB" -- send JOB_TRIGGER jobId="$JB" > "$T/oa-w.json"
check "oa: an operator acts on no run or job of app B (403)" jq -se 'all(.code == 403)' "$T/oa-w.json"

# A key with several apps (vab: appa, appb) lists all of them when it names
# none, pages across them, and its REPORT counts their runs only.  A third
# app, appc, with no agent: its job's id lies between appb's two, and its
# 3 runs (failed: no agent) between appb's runs.  Runs: appa 1 (LA), appb
# 3 (LB, LB2, LB3), appc 3, all before any other.
as boss group add appc >/dev/null
GC=$(as boss group show appc | jq -r .id)
JC=$(as boss job add --group appc --glue-type GLUE_SHELL --glue-source "$T/a.sh" --cron '0 0 3 * * ?' | jq -r .id)
JB2=$(as boss job add --group appb --glue-type GLUE_SHELL --glue-source "$T/b.sh" --cron '0 0 3 * * ?' | jq -r .id)
ended () { [ "$(as boss log show "$1" | jq -r '.triggerCode != 0 and .triggerCode != 200')" = true ] || ran "$1"; }
LC1=$(as boss job trigger "$JC" | jq -r '.logIds[0]')
LB2=$(as boss job trigger "$JB" | jq -r '.logIds[0]')
LC2=$(as boss job trigger "$JC" | jq -r '.logIds[0]')
LB3=$(as boss job trigger "$JB" | jq -r '.logIds[0]')
LC3=$(as boss job trigger "$JC" | jq -r '.logIds[0]')
check "appb's two more runs succeed, appc's three fail (no agent)" \
    bash -c "$(declare -f as ran ended wait_for); C=$C SK=$SK API=$API CTL=$CTL
        wait_for 15 ran $LB2 && wait_for 15 ran $LB3 && wait_for 15 ended $LC1 && wait_for 15 ended $LC2 \
        && wait_for 15 ended $LC3 && ! ran $LC3"
wire vab -- send JOB_LIST group=s:appa -- send JOB_LIST group=s:appb -- send JOB_LIST \
    -- send LOG_LIST -- send REPORT -- send JOB_LIST group=s:appc -- send LOG_LIST jobId="$JC" \
    -- send LOG_LIST jobGroup="$GC" > "$T/vab.json"
check "a key of appa,appb lists each app it names and both when it names none (200); not appc (403)" \
    jq -se '[.[].code] == [200, 200, 200, 200, 200, 403, 403, 403]' "$T/vab.json" || cat "$T/vab.json"
# (jobs: JSON lines, one a call)
{ as vab job list; as vab job list --group appb; as vab job list --limit 2
  as vab job list --limit 2 --offset 2; as vab job list --desc nothing-matches; } > "$T/vab-jobs.json"
check "... its jobs: appa's and appb's ($JA $JB $JB2), total 3, not appc's ($JC)" \
    jq -se --argjson a "$JA" --argjson b "$JB" --argjson b2 "$JB2" '[.[0].jobs[].id] == [$a, $b, $b2]
        and .[0].total == 3 and [.[1].jobs[].id] == [$b, $b2]' "$T/vab-jobs.json" || cat "$T/vab-jobs.json"
check "... in pages of 2 that skip appc's: $JA $JB, then $JB2 (total 3 each)" \
    jq -se --argjson a "$JA" --argjson b "$JB" --argjson b2 "$JB2" '[.[2].jobs[].id] == [$a, $b]
        and .[2].total == 3 and [.[3].jobs[].id] == [$b2] and .[3].total == 3' "$T/vab-jobs.json"
check "... with its other filters (none matches)" jq -se '.[4].total == 0 and (.[4].jobs | length) == 0' "$T/vab-jobs.json"
{ as vab log list; as vab log list --limit 2; as vab log list --limit 2 --offset 2
  as vab log list --limit 2 --offset 4; as vab log list --status success; as vab log list --status failure
  as vab log list --group "$GB"; } > "$T/vab-logs.json"
check "its runs: appa's and appb's, newest first ($LB3 $LB2 $LB $LA), none of appc's" \
    jq -se --argjson a "$LA" --argjson b "$LB" --argjson b2 "$LB2" --argjson b3 "$LB3" \
        '[.[0].logs[].id] == [$b3, $b2, $b, $a]' "$T/vab-logs.json" || cat "$T/vab-logs.json"
check "... in pages of 2 across appc's rows ($LB3 $LB2, $LB $LA, none)" \
    jq -se --argjson a "$LA" --argjson b "$LB" --argjson b2 "$LB2" --argjson b3 "$LB3" \
        '[.[1].logs[].id] == [$b3, $b2] and [.[2].logs[].id] == [$b, $a] and (.[3].logs | length) == 0' \
        "$T/vab-logs.json"
check "... with its other filters: 4 succeeded, none failed, appb's 3" \
    jq -se '(.[4].logs | length) == 4 and (.[5].logs | length) == 0 and (.[6].logs | length) == 3' \
        "$T/vab-logs.json"
{ as boss log list --status failure; as boss report; } > "$T/boss-report.json"
check "an admin lists appc's 3 failed runs and counts all 7 runs of the 3 apps" \
    jq -se '(.[0].logs | length) == 3 and (.[1] | .runCount == 7 and .failCount == 3 and .sucCount == 4
        and .groupCount == 3 and .jobCount == 4)' "$T/boss-report.json" || cat "$T/boss-report.json"
as vab report > "$T/vab-report.json"
check "REPORT of the key of appa,appb: its 4 runs, all succeeded, its 2 groups, 3 jobs, 2 agents" \
    jq -e '.runCount == 4 and .sucCount == 4 and .failCount == 0 and .successRate == 1
        and .groupCount == 2 and .jobCount == 3 and .agentCount == 2 and (.days | length) == 3
        and ([.days[].sucCount] | add) == 4 and .days[0].triggerDay > .days[1].triggerDay' \
        "$T/vab-report.json" || cat "$T/vab-report.json"
as va report > "$T/va-report.json"
check "REPORT of the viewer of appa: its 1 run, 1 group, 1 job, 1 agent" \
    jq -e '.runCount == 1 and .sucCount == 1 and .failCount == 0 and .groupCount == 1
        and .jobCount == 1 and .agentCount == 1' "$T/va-report.json" || cat "$T/va-report.json"
{ as vz job list; as vz log list; as vz report; } > "$T/vz.json"
check "a key of an app with no group lists no job and no run, and counts none" \
    jq -se '.[0].total == 0 and (.[0].jobs | length) == 0 and (.[1].logs | length) == 0
        and (.[2] | .runCount == 0 and .jobCount == 0 and .groupCount == 0 and .agentCount == 0)' \
        "$T/vz.json" || cat "$T/vz.json"
VABT=$(as boss token add vabt --role viewer --apps appa,appb | jq -r .token)
curl -s -H "Authorization: Bearer $VABT" "http://$HTTP_EP/api/v1/jobs?limit=2&offset=2" > "$T/vabt-jobs.json"
check "HTTP a token of appa,appb: the console's 'all' jobs page 2 holds appb's second job" \
    jq -e --argjson b2 "$JB2" '[.jobs[].id] == [$b2] and .total == 3' "$T/vabt-jobs.json"
curl -s -H "Authorization: Bearer $VABT" "http://$HTTP_EP/api/v1/logs" > "$T/vabt-logs.json"
check "... its 'all' logs: its apps' 4 runs" jq -e '(.logs | length) == 4' "$T/vabt-logs.json"
curl -s -H "Authorization: Bearer $VABT" "http://$HTTP_EP/api/v1/report" > "$T/vabt-report.json"
check "... its dashboard's REPORT: its 4 runs" jq -e '.runCount == 4 and .failCount == 0' "$T/vabt-report.json"
as vab group list > "$T/vab-groups.json"
check "... its group list holds both of its apps" jq -e '[.groups[].appname] == ["appa", "appb"]' "$T/vab-groups.json"

# An admin and a viewer without apps read everything, as before
for who in boss vall; do
    # shellcheck disable=SC2046
    wire "$who" $(b_reads) > "$T/$who-b.json"
    check "$who: reads app B (200)" jq -se 'length == 11 and all(.code == 200)' "$T/$who-b.json"
    as "$who" job list > "$T/$who-jobs.json"
    check "$who: ... and lists every app's jobs" jq -e '.total == 4' "$T/$who-jobs.json"
done

# HTTP: a user (session) and tokens limited to appa
echo 'vu-pass-1234' | as boss user add vu --role viewer --apps appa --password-stdin >/dev/null
VT=$(as boss token add vt --role viewer --apps appa | jq -r .token)
OT=$(as boss token add ot --role operator --apps appa | jq -r .token)
AT=$(as boss token add at --role viewer | jq -r .token)
# An operator without apps would act on nothing: never made so
says_400 () {   # says_400 ARGS...: the command is refused 400 "an operator needs apps"
    ! as boss "$@" >"$T/op0.out" 2>&1 && grep -q "an operator needs apps" "$T/op0.out"
}
check "an operator token without apps is refused (400)" says_400 token add op0 --role operator
check "... as is one with empty apps" says_400 token add op0 --role operator --apps ''
check "... and an operator user without apps" says_400 user add op0 --role operator \
    --password-stdin <<<'op0-pass-1234'
echo 'va0-pass-1234' | as boss user add va0 --role viewer --password-stdin >/dev/null
check "a viewer user without apps made operator is refused" says_400 user update va0 --role operator
check "... nothing was written: no op0 token or user, va0 still a viewer" bash -c "
    $(declare -f as); T='$T' CTL='$CTL' API='$API' C='$C' SK='$SK'
    as boss token list | jq -e '[.tokens[].name] | index(\"op0\") == null' >/dev/null &&
    as boss user list | jq -e '[.users[] | select(.username == \"op0\")] == [] and
        [.users[] | select(.username == \"va0\") | .role] == [\"viewer\"]' >/dev/null"
check "... with apps the same update is taken" as boss user update va0 --role operator --apps appa
check "... and an operator token with apps is made" as boss token add op1 --role operator --apps appa
curl -s -c "$T/jar" -H 'Content-Type: application/json' \
    -d '{"username": "vu", "password": "vu-pass-1234"}' "http://$HTTP_EP/api/v1/login" > "$T/login.json"
check "the viewer user logs in" jq -e '.username == "vu"' "$T/login.json"
B_ROUTES="groups/appb jobs/$JB jobs/$JB/next jobs?group=appb logs?jobId=$JB logs?jobGroup=$GB logs/$LB
    logs/$LB/cat jobs/$JB/glue jobs/$JB/glue/latest jobs/$JB/glue/1"
A_ROUTES="groups/appa jobs/$JA jobs/$JA/next jobs?group=appa logs?jobId=$JA logs?jobGroup=$GA logs/$LA
    logs/$LA/cat jobs/$JA/glue jobs/$JA/glue/latest jobs/$JA/glue/1 groups jobs logs agents ping plugins
    report"
get () {   # AUTH ROUTE: status, body in $T/body
    local auth="$1" route="$2"
    if [ "$auth" = session ]; then
        curl -s -b "$T/jar" -o "$T/body" -w '%{http_code}' "http://$HTTP_EP/api/v1/$route"
    else
        curl -s -H "Authorization: Bearer $auth" -o "$T/body" -w '%{http_code}' "http://$HTTP_EP/api/v1/$route"
    fi
}
routes_give () {   # AUTH WANT ROUTES...: each route's status is WANT (200! or 403: B's secrets never shown)
    local auth="$1" want="$2" route status; shift 2
    for route in "$@"; do
        status=$(get "$auth" "$route")
        if [ "$status" != "${want%!}" ] || { [ "$want" != 200 ] && grep -q 'source-of-b\|param-of-b' "$T/body"; }; then
            echo "# GET $route: $status $(head -c 300 "$T/body")"; return 1
        fi
    done
}
for who in session:session token-viewer:$VT token-operator:$OT; do
    name=${who%%:*} auth=${who#*:}
    # shellcheck disable=SC2086
    check "HTTP $name of appa: every route of app B is 403" routes_give "$auth" 403 $B_ROUTES
    # shellcheck disable=SC2086
    check "HTTP $name of appa: ... those of app A are 200, its lists without B's" routes_give "$auth" '200!' $A_ROUTES
    get "$auth" jobs >/dev/null
    check "HTTP $name of appa: ... its job list holds app A's job only" \
        jq -e --argjson a "$JA" '[.jobs[].id] == [$a]' "$T/body"
    get "$auth" groups >/dev/null
    check "HTTP $name of appa: ... its group list app A only" jq -e '[.groups[].appname] == ["appa"]' "$T/body"
done
# shellcheck disable=SC2086
check "HTTP a viewer token without apps reads app B (200)" routes_give "$AT" 200 groups/appb jobs/$JB/next logs/$LB
check "... its GLUE source too" bash -c "
    curl -s -H 'Authorization: Bearer $AT' 'http://$HTTP_EP/api/v1/jobs/$JB/glue/latest' | grep -q source-of-b"

# Item 5 of the outside findings: one agent key, two connections, one
# address.  The first connection holds node-x (it waits for a RUN); a
# second connection of the same key may neither take node-x nor
# unregister it while the first is open
reg () { echo -- send REGISTER registryGroup=s:EXECUTOR registryKey=s:appa registryValue=s:"$1"; }
apeer () { "$PEER" "$AGENTS" --cert "$C/agent-a.cert_secret" --scheduler-key "$SK" "$@"; }
# shellcheck disable=SC2046
apeer --timeout 6000 $(reg node-x) -- expect RUN -- send UNREGISTER registryGroup=s:EXECUTOR \
    registryKey=s:appa registryValue=s:node-x > "$T/x1.json" &
X1=$!
check "a first connection of agent-a registers node-x" wait_for 10 registered appa node-x
# shellcheck disable=SC2046
apeer --timeout 3000 $(reg node-x) -- send UNREGISTER registryGroup=s:EXECUTOR registryKey=s:appa \
    registryValue=s:node-x > "$T/x2.json"
check "a second connection of the same key may not take node-x while the first is open (403)" \
    jq -se '.[0].code == 403 and (.[0].msg | test("node-x"))' "$T/x2.json"
check "... nor unregister it (403)" jq -se '.[1].code == 403' "$T/x2.json"
check "... with a log line" grep -q "REGISTER refused (403): address 'node-x'" "$T/scheduler.log"
check "... node-x stays registered on the first" registered appa node-x
wait "$X1"
check "the first connection's own UNREGISTER still counts (200)" jq -se '.[0].code == 200 and .[2].code == 200' "$T/x1.json"
# shellcheck disable=SC2046
apeer --timeout 3000 $(reg node-x) > "$T/x3.json"
check "once it unregistered (and closed), another connection registers node-x (200)" \
    jq -se '.[0].code == 200' "$T/x3.json"
# A restarted agent: killed, back at once from a new connection (the old
# one closed with the process, before the scheduler noticed)
kill -KILL "$APID_node_a"
start_agent node-a appa --cert "$C/agent-a.cert_secret" --scheduler-key "$SK"
back () { [ "$(grep -c 'registered with' "$T/agent-node-a.log")" -ge 2 ]; }
check "a restarted agent registers its address again at once" wait_for 10 back
check "... never refused" bash -c "! grep -q 'refused registration' '$T/agent-node-a.log'"
L2=$(as boss job trigger "$JA" | jq -r '.logIds[0]')
check "... and runs its app's jobs" wait_for 15 ran "$L2"
# (the scheduler may see the old connection close before the new REGISTER
# comes, or learn it then from the BEAT it sends at once: either is logged)
check "... the old connection's close is logged (as a takeover, or as seen first)" \
    grep -Eq "registry: appa/node-a registered again on a new connection: its old one had closed|registry: node-a is not connected \(its connection closed\)" "$T/scheduler.log"
xxl_done
