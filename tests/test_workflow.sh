#!/usr/bin/env bash
# test_workflow.sh -- workflows end to end (DESIGN §12, docs/workflows.md):
# real daemons, the probe handlers (one line per run in a probe file).
# A diamond with `all` and `any` joins and a failure branch, ${NODE.msg}
# passed on, an unhandled failure and its retry, a kill, a schedule, a
# run across a scheduler SIGKILL, validation 400s, a job removal refused
# and then forced.  Also under XXL_STORE=pg.
. "$(dirname "$0")/lib.sh"
xxl_setup

PROBE_SO="$XXL_BUILD/tests/faults/.libs/probe.so"
if [ ! -f "$PROBE_SO" ]; then
    echo "FAIL - $PROBE_SO not built (make check builds it)"
    exit 1
fi
mkdir -p "$T/plugins"
cp "$PROBE_SO" "$HANDLERS/demo.so" "$T/plugins/"
export AGENT_PLUGINS="$T/plugins"
export XXL_PROBE_FILE="$T/probe.txt"
: > "$XXL_PROBE_FILE"

export XXL_SCHEDULER_ARGS="--http 127.0.0.1:0"
start_scheduler || exit 1
start_agent wf-a wf-app
check "agent registers" wait_for 10 agent_registered wf-app wf-a
ctl group add wf-app >/dev/null

OK=$(ctl --get .id job add --group wf-app --handler probeIn --param sleep=10)
BAD=$(ctl --get .id job add --group wf-app --handler probeIn --param fail)
SLOW=$(ctl --get .id job add --group wf-app --handler probeIn --param sleep=30000)
check "jobs added" test -n "$OK" -a -n "$BAD" -a -n "$SLOW"

# runs_of JOB: how many probe lines the job's runs wrote
runs_of () { awk -v j="$1" '$2 == j' "$XXL_PROBE_FILE" | wc -l; }
run_status () { ctl workflow run show "$1" | jq -r .status; }
run_ended () { [ "$(run_status "$1")" != RUNNING ]; }
node_status () { ctl workflow run show "$1" | jq -r --arg n "$2" '.nodes[] | select(.id == $n) | .status'; }
node_log () { ctl workflow run show "$1" | jq -r --arg n "$2" '.nodes[] | select(.id == $n) | .logId'; }

# -- A diamond: a -> b, a -> c (fails), b & c -> d (all), b | c -> e (any),
#    c -failure-> f; b takes a's message
cat > "$T/diamond.json" <<JSON
{"nodes": [{"id": "a", "job": $OK, "param": "\${flow.param} sleep=10"},
           {"id": "b", "job": $OK, "param": "from-a=\${a.msg}"},
           {"id": "c", "job": $BAD},
           {"id": "d", "job": $OK},
           {"id": "e", "job": $OK, "join": "any"},
           {"id": "f", "job": $OK, "param": "c-said=\${c.msg}"}],
 "edges": [{"from": "a", "to": "b"}, {"from": "a", "to": "c"},
           {"from": "b", "to": "d"}, {"from": "c", "to": "d"},
           {"from": "b", "to": "e"}, {"from": "c", "to": "e"},
           {"from": "c", "to": "f", "on": "failure"}]}
JSON
ADD=$(ctl workflow add --name diamond --file "$T/diamond.json" --desc "joins and a branch")
check "workflow add answers {\"id\": N}" bash -c "echo '$ADD' | jq -e 'keys == [\"id\"] and .id >= 1' >/dev/null"
W1=$(echo "$ADD" | jq -r .id)
check "the definition is stored canonical" bash -c "
    $CTL --api $API --json workflow show $W1 | jq -e '.definition | fromjson | .edges[0].on == \"success\" and .nodes[0].join == \"all\"' >/dev/null"
TRIG=$(ctl workflow trigger "$W1" --param p1)
check "workflow trigger answers {\"runId\": N}" bash -c "echo '$TRIG' | jq -e 'keys == [\"runId\"]' >/dev/null"
R1=$(echo "$TRIG" | jq -r .runId)
check "the diamond's run ends" wait_for 20 run_ended "$R1"
check "... SUCCESS: c's failure has a failure edge out" test "$(run_status "$R1")" = SUCCESS
check "a, b, e, f SUCCESS; c FAILURE; d (all) SKIPPED" bash -c "
    $CTL --api $API --json workflow run show $R1 | jq -e '[.nodes[] | .status] == [\"SUCCESS\", \"SUCCESS\", \"FAILURE\", \"SKIPPED\", \"SUCCESS\", \"SUCCESS\"]' >/dev/null"
check "run show has the shape of DESIGN §12" bash -c "
    $CTL --api $API --json workflow run show $R1 | jq -e '.id == $R1 and .workflowId == $W1 and (.nodes[3] | .id == \"d\" and .logId == null)' >/dev/null"
check "b's param is a's message (\${a.msg})" field_is "$(node_log "$R1" b)" executorParam "from-a=probe: ok"
check "f's param is c's message" field_is "$(node_log "$R1" f)" executorParam "c-said=probe: failed on request"
check "a's param is the run's (\${flow.param})" field_is "$(node_log "$R1" a)" executorParam "p1 sleep=10"
check "a node's row says its run and node" bash -c "
    $CTL --api $API --json log show $(node_log "$R1" e) | jq -e '.flowRunId == $R1 and .flowNode == \"e\" and .triggerType == \"WORKFLOW\"' >/dev/null"
check "each node that ran ran once (5 probe lines)" test "$(( $(runs_of "$OK") + $(runs_of "$BAD") ))" = 5
# e (any) started once, after both of its parents had ended
check "e started after b and c had ended" bash -c "
    e=\$($CTL --api $API --json log show $(node_log "$R1" e) | jq .triggerTime)
    b=\$($CTL --api $API --json log show $(node_log "$R1" b) | jq .handleTime)
    c=\$($CTL --api $API --json log show $(node_log "$R1" c) | jq .handleTime)
    [ \$e -ge \$b ] && [ \$e -ge \$c ]"

# -- An unhandled failure, then its retry once the job is fixed
cat > "$T/chain.json" <<JSON
{"nodes": [{"id": "x", "job": $BAD}, {"id": "y", "job": $OK}],
 "edges": [{"from": "x", "to": "y"}]}
JSON
W2=$(ctl --get .id workflow add --name chain --file "$T/chain.json")
R2=$(ctl --get .runId workflow trigger "$W2")
check "an unhandled failure ends the run FAILURE" wait_for 20 run_ended "$R2"
check "... FAILURE, y SKIPPED" bash -c "
    $CTL --api $API --json workflow run show $R2 | jq -e '.status == \"FAILURE\" and ([.nodes[] | .status] == [\"FAILURE\", \"SKIPPED\"])' >/dev/null"
# (the refusal names the state run show gives: y's skip is derived, not
# stored, and the refusal used to say the stored WAITING)
check "retry of a node that did not fail: 409 naming its state as run show does (SKIPPED)" bash -c "
    out=\$($CTL --api $API workflow run retry $R2 y 2>&1) && exit 1
    grep -qF 'node y is SKIPPED: only a FAILURE node can be retried' <<<\"\$out\" || { echo \"  got: \$out\"; exit 1; }"
check "retry of an unknown node: refused" bash -c "! $CTL --api $API workflow run retry $R2 nosuch >/dev/null 2>&1"
FIRST_X=$(node_log "$R2" x)
ctl job update "$BAD" --param sleep=10 >/dev/null
check "retry of the failed node answers" ctl workflow run retry "$R2" x
check "the retried run goes on to SUCCESS" wait_for 20 bash -c "[ \"\$($CTL --api $API --json workflow run show $R2 | jq -r .status)\" = SUCCESS ]"
check "x's retry is a new row (attempt 2), y ran" bash -c "
    $CTL --api $API --json workflow run show $R2 | jq -e '.nodes[0].attempt == 2 and .nodes[0].logId != $FIRST_X and .nodes[1].status == \"SUCCESS\"' >/dev/null"
ctl job update "$BAD" --param fail >/dev/null

# -- Kill: the running node is killed, the rest never start
cat > "$T/slow.json" <<JSON
{"nodes": [{"id": "s", "job": $SLOW}, {"id": "t", "job": $OK, "param": "tag=never"}],
 "edges": [{"from": "s", "to": "t", "on": "always"}]}
JSON
W3=$(ctl --get .id workflow add --name slow --file "$T/slow.json")
R3=$(ctl --get .runId workflow trigger "$W3")
s_running () { [ "$(runs_of "$SLOW")" -ge 1 ]; }
check "the slow node runs" wait_for 10 s_running
check "run kill answers" ctl workflow run kill "$R3"
check "the run is KILLED, both nodes KILLED" bash -c "
    $CTL --api $API --json workflow run show $R3 | jq -e '.status == \"KILLED\" and ([.nodes[] | .status] == [\"KILLED\", \"KILLED\"])' >/dev/null"
check "the killed node's row ended 500 'killed'" bash -c "
    $CTL --api $API --json log show $(node_log "$R3" s) | jq -e '.handleCode == 500 and (.handleMsg | test(\"killed\"))' >/dev/null"
check "a second kill: 409" bash -c "! $CTL --api $API workflow run kill $R3 >/dev/null 2>&1"
sleep 1
check "t never started" bash -c "! grep -q 'tag=never' $XXL_PROBE_FILE && [ \"\$($CTL --api $API --json log list --job $OK --limit 1000 | jq '[.logs[] | select(.flowRunId == $R3)] | length')\" = 0 ]"
check "a killed run cannot be retried: 409 saying so, for its KILLED node too" bash -c "
    out=\$($CTL --api $API workflow run retry $R3 s 2>&1) && exit 1
    grep -q 'the run was killed: its nodes cannot be retried' <<<\"\$out\""

# -- Across a scheduler SIGKILL: the run goes on after the restart
cat > "$T/restart.json" <<JSON
{"nodes": [{"id": "p", "job": $OK, "param": "sleep=1500"}, {"id": "q", "job": $OK, "param": "after-restart"}],
 "edges": [{"from": "p", "to": "q"}]}
JSON
W4=$(ctl --get .id workflow add --name restart --file "$T/restart.json")
R4=$(ctl --get .runId workflow trigger "$W4")
p_running () { grep -q "sleep=1500" <(ctl log list --job "$OK" --limit 20 | jq -r '.logs[] | select(.flowRunId == '"$R4"' and .triggerCode == 200) | .executorParam'); }
check "p runs" wait_for 10 p_running
kill -KILL "$SPID"; wait "$SPID" 2>/dev/null
start_scheduler "$API" "$AGENTS" || exit 1
check "the run ends SUCCESS after the restart" wait_for 30 bash -c "[ \"\$($CTL --api $API --json workflow run show $R4 | jq -r .status)\" = SUCCESS ]"
check "q ran once: one row, one probe line" bash -c "
    q=\$($CTL --api $API --json log list --job $OK --limit 1000 | jq -r '[.logs[] | select(.flowRunId == $R4 and .flowNode == \"q\")] | map(.id) | .[]')
    [ \$(echo \"\$q\" | wc -w) = 1 ] && [ \$(awk -v l=\$q '\$1 == l' $XXL_PROBE_FILE | wc -l) = 1 ]"

# -- A log clear while a run is in flight keeps its nodes' rows (its states):
#    a finished node is not run again (q sleeps 8 s: the clear comes while
#    it runs, on a loaded machine too)
cat > "$T/clear.json" <<JSON
{"nodes": [{"id": "p", "job": $OK, "param": "sleep=10"}, {"id": "q", "job": $OK, "param": "sleep=8000"},
           {"id": "r", "job": $OK, "param": "sleep=10"}],
 "edges": [{"from": "p", "to": "q"}, {"from": "q", "to": "r"}]}
JSON
W7=$(ctl --get .id workflow add --name clear --file "$T/clear.json")
R7=$(ctl --get .runId workflow trigger "$W7")
q_running () { [ "$(node_status "$R7" q)" = RUNNING ] && [ "$(node_status "$R7" p)" = SUCCESS ]; }
check "q runs after p" wait_for 10 q_running
P7=$(node_log "$R7" p)
ctl log clear --all >/dev/null
check "log clear --all keeps the rows of a running run's nodes" ctl log show "$P7"
check "... and the run ends SUCCESS" wait_for 20 bash -c "[ \"\$($CTL --api $API --json workflow run show $R7 | jq -r .status)\" = SUCCESS ]"
check "... p ran once" test "$(awk -v l="$P7" '$1 == l' "$XXL_PROBE_FILE" | wc -l)" = 1
check "... and no second row of p was made" bash -c "
    $CTL --api $API --json workflow run show $R7 | jq -e '.nodes[0].logId == $P7 and .nodes[0].attempt == 1' >/dev/null"
ctl workflow rm "$W7" >/dev/null

# -- A node whose job retries its failures (--retry 2, 1 s apart): its
#    three attempts, then its failure edge; the run's other node waits
FLAKY=$(ctl --get .id job add --group wf-app --handler probeIn --param fail --retry 2 --retry-interval 1 \
)
cat > "$T/retries.json" <<JSON
{"nodes": [{"id": "r", "job": $FLAKY}, {"id": "after", "job": $OK}],
 "edges": [{"from": "r", "to": "after", "on": "failure"}]}
JSON
W8=$(ctl --get .id workflow add --name retries --file "$T/retries.json")
R8=$(ctl --get .runId workflow trigger "$W8")
check "a retried node is RUNNING between its attempts" wait_for 10 bash -c "
    $CTL --api $API --json workflow run show $R8 | jq -e '.nodes[0] | .status == \"RUNNING\" and .attempt == 2' >/dev/null"
check "the run with a retried node ends" wait_for 30 run_ended "$R8"
check "... SUCCESS by the failure edge, once r's three attempts failed" bash -c "
    $CTL --api $API --json workflow run show $R8 | jq -e '.status == \"SUCCESS\"
        and (.nodes[0] | .status == \"FAILURE\" and .attempt == 3) and .nodes[1].status == \"SUCCESS\"' >/dev/null"
check "r's job ran three times" test "$(runs_of "$FLAKY")" = 3
check "each attempt started its retry interval (1 s) after the last one ended, 'after' once the last failed" bash -c "
    $CTL --api $API --json log list --job $FLAKY | jq -e '[.logs[]] | sort_by(.id) as \$l
        | (\$l | length) == 3 and all(\$l[]; .triggerType == \"WORKFLOW\" and .flowRunId == $R8)
        and ([range(1; 3) as \$i | \$l[\$i].triggerTime - \$l[\$i - 1].handleTime] | all(. >= 1000))' >/dev/null &&
    last=\$($CTL --api $API --json log list --job $FLAKY | jq '[.logs[].handleTime] | max')
    after=\$($CTL --api $API --json log show $(node_log "$R8" after 2>/dev/null || echo 0) | jq .triggerTime)
    [ \$after -ge \$last ]"

# -- A schedule: FIX_RATE 1 s, started
W5=$(ctl --get .id workflow add --name tick --file "$T/chain.json" --fix-rate 1 --start)
two_runs () { [ "$(ctl workflow runs "$W5" | jq '.runs | length')" -ge 2 ]; }
check "a FIX_RATE workflow fires by itself" wait_for 15 two_runs
check "workflow stop answers" ctl workflow stop "$W5"
check "its runs are CRON runs" bash -c "
    $CTL --api $API --json workflow runs $W5 | jq -e '.runs | all(.triggerType == \"CRON\")' >/dev/null"
check "a NONE workflow cannot be started (400)" bash -c "
    $CTL --api $API workflow start $W1 2>&1 | grep -q 'cannot be started'"
# (a schedule with no time to come is refused when it would be armed, as
# a job's is; before, the reply was 200 and the workflow stayed stopped)
check "a start of a cron with no time to come is 400, nothing stored" bash -c "
    $CTL --api $API workflow add --name past --file $T/chain.json --cron '0 0 12 * * ? 2020' --start 2>&1 \
        | grep -q '^xxl-ctl: the cron expression has no time after 20' \
    && [ \"\$($CTL --api $API --json workflow list | jq '[.workflows[] | select(.name == \"past\")] | length')\" = 0 ]"
check "... and so is an update that starts one, which changes nothing" bash -c "
    $CTL --api $API workflow update $W5 --cron '0 0 12 * * ? 2020' --start 2>&1 | grep -q 'has no time after' \
    && $CTL --api $API --json workflow show $W5 | jq -e '.scheduleType == \"FIX_RATE\"' >/dev/null"
check "... a workflow start of such a stored schedule is 400 too" bash -c "
    $CTL --api $API workflow update $W5 --cron '0 0 12 * * ? 2020' >/dev/null \
    && $CTL --api $API workflow start $W5 2>&1 | grep -q 'has no time after' \
    && $CTL --api $API --json workflow show $W5 | jq -e '.triggerStatus == 0' >/dev/null"
check "... a cron that has times still starts" bash -c "
    $CTL --api $API workflow update $W5 --cron '0 0 12 * * ?' --start >/dev/null \
    && $CTL --api $API --json workflow show $W5 | jq -e '.triggerStatus == 1' >/dev/null \
    && $CTL --api $API workflow stop $W5 >/dev/null"
check "a name empty or with a control character is 400; any other, repeated too, is taken" bash -c "
    $CTL --api $API workflow add --name '' --file $T/chain.json 2>&1 | grep -q '^xxl-ctl: name must not be empty' \
    && $CTL --api $API workflow add --name \$'a\\x1bb' --file $T/chain.json 2>&1 \
        | grep -q 'name must not hold control characters' \
    && $CTL --api $API workflow update $W5 --name \$'x\\ny' 2>&1 | grep -q 'name must not hold control' \
    && a=\$($CTL --api $API --json workflow add --name 'nightly étl' --file $T/chain.json | jq -e .id) \
    && b=\$($CTL --api $API --json workflow add --name 'nightly étl' --file $T/chain.json | jq -e .id) \
    && [ \"\$a\" != \"\$b\" ] && $CTL --api $API workflow rm \$a >/dev/null && $CTL --api $API workflow rm \$b >/dev/null"
check "a fix-rate with a space is 400, as a job's" bash -c "
    $CTL --api $API workflow add --name sp --file $T/chain.json --fix-rate ' 5' 2>&1 \
        | grep -qF \"FIX_RATE needs a whole number of seconds from 1 to 316224000 (ten years), not ' 5'\""
check "an unknown time zone is 400 'unknown time zone' (as a job's)" bash -c "
    $CTL --api $API workflow add --name tz --file $T/chain.json --cron '0 0 * * * ?' --timezone Bad/Zone 2>&1 \
        | grep -q \"^xxl-ctl: unknown time zone 'Bad/Zone'\""

# -- Validation: 400s with the model's texts, nothing stored
refused () {   # refused FILE TEXT
    local out
    out=$("$CTL" --api "$API" workflow add --name bad --file "$1" 2>&1) && return 1
    echo "$out" | grep -qF "$2"
}
echo "{\"nodes\": [{\"id\": \"a\", \"job\": $OK}, {\"id\": \"b\", \"job\": $OK}], \"edges\": [{\"from\": \"a\", \"to\": \"b\"}, {\"from\": \"b\", \"to\": \"a\"}]}" > "$T/cycle.json"
check "a cycle is refused, named" refused "$T/cycle.json" "cycle: a -> b -> a"
echo '{"nodes": [{"id": "a", "job": 999999}]}' > "$T/nojob.json"
check "an unknown job is refused" refused "$T/nojob.json" 'node "a": unknown job 999999'
echo "{\"nodes\": [{\"id\": \"a\", \"job\": $OK}, {\"id\": \"a\", \"job\": $OK}]}" > "$T/dup.json"
check "a duplicate node id is refused" refused "$T/dup.json" 'duplicate node id "a"'
echo "{\"nodes\": [{\"id\": \"a\", \"job\": $OK}], \"edges\": [{\"from\": \"a\", \"to\": \"z\"}]}" > "$T/nonode.json"
check "an unknown node is refused" refused "$T/nonode.json" 'unknown node "z"'
echo "{\"nodes\": [{\"id\": \"a\", \"job\": $OK, \"param\": \"\${b.msg}\"}, {\"id\": \"b\", \"job\": $OK}]}" > "$T/anc.json"
check "a \${X.msg} of a non-ancestor is refused" refused "$T/anc.json" "b is not an ancestor of a"
jq -n --argjson j "$OK" '{nodes: [range(1001) | {id: "n\(.)", job: $j}]}' > "$T/big.json"
check "more than 1000 nodes are refused" refused "$T/big.json" "more than 1000 nodes (1001)"
check "refused definitions stored nothing" test "$(ctl workflow list | jq '.workflows | length')" = 6
# The canonical form (every "join" and "on" written out) is what is stored
# and parsed for each run: one past 1 MiB is refused (it was stored, and
# every trigger then failed 500), one within it accepted.  1,000 nodes of
# 64-byte ids, each with edges to its next 7: 6,500 edges are about
# 1,044,000 bytes given, 1,154,000 canonical; 5,000 about 825,000, 910,000
wide () {   # wide EDGES: the definition, compact
    jq -c -n --argjson j "$OK" --argjson m "$1" '
        [range(1000) | ("000" + tostring)[-4:] + ("x" * 60)] as $ids
        | {nodes: [$ids[] | {id: ., job: $j}],
           edges: [range(1000) as $i | range($i + 1; [$i + 8, 1000] | min) | {from: $ids[$i], to: $ids[.]}][:$m]}'
}
wide 6500 > "$T/wide.json"
check "a definition within 1 MiB whose canonical form is not: refused" bash -c "
    [ \$(stat -c %s $T/wide.json) -le 1048576 ] || exit 1
    out=\$($CTL --api $API workflow add --name wide --file $T/wide.json 2>&1) && exit 1
    grep -qF 'definition over 1048576 bytes in its canonical form' <<<\"\$out\""
wide 5000 > "$T/wide.json"
check "... one whose canonical form fits: accepted, shown, and its canonical form accepted back" bash -c "
    w=\$($CTL --api $API --json workflow add --name wide --file $T/wide.json | jq -e .id) || exit 1
    $CTL --api $API --json workflow show \$w | jq -j .definition > $T/wide-canonical.json
    [ \$(stat -c %s $T/wide-canonical.json) -gt \$(stat -c %s $T/wide.json) ] || exit 1
    $CTL --api $API workflow update \$w --file $T/wide-canonical.json >/dev/null || exit 1
    $CTL --api $API workflow rm \$w >/dev/null"

# -- A job that workflows run: removed only with --force, which says so
check "job rm of a job workflows run: 409" bash -c "
    $CTL --api $API job rm $BAD 2>&1 | grep -q 'is run by 3 workflow(s) ($W1, $W2, $W5)'"
check "... the job is still there" ctl job show "$BAD"
FORCED=$(ctl job rm "$BAD" --force)
# (the chains keep y; the diamond's f takes \${c.msg}, so without c no
# valid definition is left: it goes)
check "job rm --force removes it from them (said in the reply)" bash -c "
    echo '$FORCED' | jq -e '.workflowsChanged == [$W2, $W5] and .workflowsRemoved == [$W1]' >/dev/null"
LONE=$(ctl --get .id job add --group wf-app --handler loneJobHandler)
check "job rm --force of a job no workflow runs: both lists, empty" bash -c "
    $CTL --api $API --json job rm $LONE --force | jq -e '.workflowsChanged == [] and .workflowsRemoved == []' >/dev/null"
check "the chain no longer names the job, y stays" bash -c "
    $CTL --api $API --json workflow show $W2 | jq -e '.definition | fromjson | [.nodes[].id] == [\"y\"] and .edges == []' >/dev/null"
# -- REST: the definition as the object itself; 400s with the model's text;
#    scope by the apps of every job a workflow names
ADMIN_TOKEN=$(ctl --get .token token add wf-admin --role admin)
OTHER_TOKEN=$(ctl --get .token token add wf-other --role viewer --apps other-app)
OPER_TOKEN=$(ctl --get .token token add wf-oper --role operator --apps wf-app)
rest () {     # rest TOKEN METHOD PATH [BODY]: prints "STATUS BODY"
    curl -s -o "$T/rest.out" -w '%{http_code}' -X "$2" -H "Authorization: Bearer $1" \
        -H 'Content-Type: application/json' ${4:+--data "$4"} "http://$HTTP_EP/api/v1/$3"
    printf ' '; cat "$T/rest.out"
}
BODY="{\"name\": \"rest\", \"definition\": {\"nodes\": [{\"id\": \"r\", \"job\": $OK, \"param\": \"via-rest\"}]}}"
OUT=$(rest "$ADMIN_TOKEN" POST workflows "$BODY")
check "POST /api/v1/workflows with the definition as an object: 201 {id}" \
    bash -c "[ '${OUT%% *}' = 201 ] && echo '${OUT#* }' | jq -e '.id >= 1' >/dev/null"
W6=$(echo "${OUT#* }" | jq -r .id)
OUT=$(rest "$ADMIN_TOKEN" POST workflows "{\"name\": \"c\", \"definition\": {\"nodes\": [{\"id\": \"a\", \"job\": $OK}], \"edges\": [{\"from\": \"a\", \"to\": \"a\"}]}}")
check "... a cycle: 400 with the model's text" bash -c "[ '${OUT%% *}' = 400 ] && echo '${OUT#* }' | grep -qF 'cycle: a -> a'"
OUT=$(rest "$OPER_TOKEN" POST "workflows/$W6/trigger" '{"param": "x"}')
check "an operator of the jobs' app triggers it: {runId}" \
    bash -c "[ '${OUT%% *}' = 200 ] && echo '${OUT#* }' | jq -e '.runId >= 1' >/dev/null"
R6=$(echo "${OUT#* }" | jq -r .runId)
check "GET /api/v1/workflow-runs/ID ends SUCCESS" wait_for 20 bash -c "
    curl -s -H 'Authorization: Bearer $ADMIN_TOKEN' http://$HTTP_EP/api/v1/workflow-runs/$R6 | jq -e '.status == \"SUCCESS\"'"
OUT=$(rest "$OTHER_TOKEN" GET "workflows/$W6")
check "a viewer of other apps may not see it (403)" test "${OUT%% *}" = 403
OUT=$(rest "$OTHER_TOKEN" GET workflows)
check "... nor list it" bash -c "echo '${OUT#* }' | jq -e '.workflows == [] and .total == 0' >/dev/null"
OUT=$(rest "$OTHER_TOKEN" GET "workflow-runs/$R6")
check "... nor its runs (403)" test "${OUT%% *}" = 403
OUT=$(rest "$OPER_TOKEN" POST workflows "$BODY")
check "an operator may not add one (403)" test "${OUT%% *}" = 403

# -- Older runs, page by page (`before`): 250 ended runs of a workflow, as
#    one that fires every minute leaves in four hours, among 50 of W6
#    (written to the store: triggering them would only be slower)
echo "{\"nodes\": [{\"id\": \"m\", \"job\": $OK}]}" > "$T/minutely.json"
W7=$(ctl --get .id workflow add --name minutely --file "$T/minutely.json")
xxl_sql "INSERT INTO xxl_workflow_run (workflow_id, status, param, trigger_type, trigger_time,
             end_time, definition)
         WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 300)
         SELECT CASE WHEN n % 6 = 0 THEN $W6 ELSE $W7 END, 'SUCCESS', '', 'CRON',
                1700000000000 + n * 60000, 1700000000000 + n * 60000 + 500,
                (SELECT definition FROM xxl_workflow WHERE id = $W7) FROM s"
xxl_sql "SELECT id FROM xxl_workflow_run WHERE workflow_id = $W7 ORDER BY id DESC" > "$T/runs.want"
id_pages runs 100 workflow runs "$W7" > "$T/runs.got"
check "250 runs in pages of 100 by --before: every id once, newest first" \
    diff <(grep -v '^page\|truncated' "$T/runs.got") "$T/runs.want"
check "... 100, 100, 50, none truncated" bash -c "
    [ \"\$(grep -c . '$T/runs.want')\" = 250 ] && [ \"\$(grep -c '^page' '$T/runs.got')\" = 3 ] &&
    ! grep -q truncated '$T/runs.got'"
BEFORE=$(sed -n 100p "$T/runs.want")
OUT=$(rest "$OPER_TOKEN" GET "workflows/$W7/runs?limit=100&before=$BEFORE")
check "REST ?before=ID: the next 100, below ID (an operator of the jobs' app)" bash -c "
    [ '${OUT%% *}' = 200 ] && diff <(jq -r '.runs[].id' '$T/rest.out') <(sed -n 101,200p '$T/runs.want')"
for bad in "0:field 'before' is 0, outside 1..9223372036854775807" "-1:field 'before' is -1, outside 1.." \
           "x:query before: not a valid value"; do
    OUT=$(rest "$ADMIN_TOKEN" GET "workflows/$W7/runs?before=${bad%%:*}")
    check "REST ?before=${bad%%:*}: 400 \"${bad#*:}\"" bash -c "[ '${OUT%% *}' = 400 ] && grep -qF \"${bad#*:}\" '$T/rest.out'"
done
check "xxl-ctl workflow runs --before 0 is refused" bash -c "
    out=\$($CTL --api $API workflow runs $W7 --before 0 2>&1) && exit 1
    grep -qF -- \"--before must be a positive number, not '0'\" <<<\"\$out\""
OUT=$(rest "$OTHER_TOKEN" GET "workflows/$W7/runs?before=$BEFORE")
check "a viewer of other apps may not page its runs (403)" test "${OUT%% *}" = 403
check "workflow changes are audited" bash -c "
    $CTL --api $API --json audit list --limit 200 | jq -e '[.audit[] | .type] | (index(\"WORKFLOW_ADD\") != null and index(\"WORKFLOW_TRIGGER\") != null and index(\"WORKFLOW_RUN_KILL\") != null)' >/dev/null"

# -- A SHARDING_BROADCAST node: one row per agent, all the node's; it is
#    final once every shard is, and FAILURE when any shard failed
start_agent wf-b wf-app
check "a second agent registers" wait_for 10 agent_registered wf-app wf-b
BC=$(ctl --get .id job add --group wf-app --handler probeIn --route SHARDING_BROADCAST)
cat > "$T/broadcast.json" <<JSON
{"nodes": [{"id": "bc", "job": $BC, "param": "\${flow.param}"},
           {"id": "ok", "job": $OK}, {"id": "bad", "job": $OK}],
 "edges": [{"from": "bc", "to": "ok"}, {"from": "bc", "to": "bad", "on": "failure"}]}
JSON
W9=$(ctl --get .id workflow add --name broadcast --file "$T/broadcast.json")
R9=$(ctl --get .runId workflow trigger "$W9" --param "sleep=300 fail=1")
check "a run whose broadcast node has a failed shard ends" wait_for 20 run_ended "$R9"
check "... the node FAILURE (shard 1 failed), its failure edge ran, its success edge skipped" bash -c "
    $CTL --api $API --json workflow run show $R9 | jq -e '.status == \"SUCCESS\"
        and [.nodes[] | .status] == [\"FAILURE\", \"SKIPPED\", \"SUCCESS\"]' >/dev/null"
check "both shards' rows are the node's, and 'bad' started once both had ended" bash -c "
    $CTL --api $API --json log list --job $BC | jq -e '[.logs[] | select(.flowRunId == $R9)] as \$l
        | (\$l | length) == 2 and all(\$l[]; .flowNode == \"bc\")
        and ([\$l[].executorShardingParam] | sort) == [\"0/2\", \"1/2\"]' >/dev/null &&
    last=\$($CTL --api $API --json log list --job $BC | jq '[.logs[] | select(.flowRunId == $R9) | .handleTime] | max')
    bad=\$($CTL --api $API --json log show $(node_log "$R9" bad) | jq .triggerTime)
    [ \$bad -ge \$last ]"
R10=$(ctl --get .runId workflow trigger "$W9" --param "sleep=300")
check "... and with every shard succeeding, the node SUCCESS and its success edge runs" wait_for 20 bash -c "
    $CTL --api $API --json workflow run show $R10 | jq -e '.status == \"SUCCESS\"
        and [.nodes[] | .status] == [\"SUCCESS\", \"SUCCESS\", \"SKIPPED\"]' >/dev/null"
check "each shard ran once per run (4 probe lines)" test "$(runs_of "$BC")" = 4

# A definition stored that does not parse (one stored before a check of
# today): a trigger makes no run and says why; once replaced, it runs
xxl_sql "UPDATE xxl_workflow SET definition = '{\"nodes\": [' WHERE id = $W7"
before=$(xxl_sql "SELECT COUNT(*) FROM xxl_workflow_run WHERE workflow_id = $W7")
"$XXL_REQ" "$API" WORKFLOW_TRIGGER "workflowId=$W7" > "$T/req.json"
check "a stored definition that does not parse: WORKFLOW_TRIGGER 409, saying why" \
    jq -e '.code == 409 and (.msg | startswith("workflow '"$W7"': its stored definition does not parse ("))' "$T/req.json"
check "... and no run is made" test "$(xxl_sql "SELECT COUNT(*) FROM xxl_workflow_run WHERE workflow_id = $W7")" = "$before"
ctl workflow update "$W7" --file "$T/minutely.json" >/dev/null
R11=$(ctl --get .runId workflow trigger "$W7")
check "... replaced, it runs (the allowed case)" wait_for 20 bash -c "
    $CTL --api $API --json workflow run show $R11 | jq -e '.status == \"SUCCESS\"' >/dev/null"

check "workflow rm answers" ctl workflow rm "$W3"
check "workflow show of a removed one: 404" bash -c "! $CTL --api $API workflow show $W3 >/dev/null 2>&1"
check "the scheduler is alive" kill -0 "$SPID"
xxl_done
