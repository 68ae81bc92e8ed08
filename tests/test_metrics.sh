#!/usr/bin/env bash
# test_metrics.sh -- /metrics' labelled series after real runs: per app
# (agents connected, runs by code), per job (runs by code, last result,
# failures in a row; at most http/metrics_jobs jobs, those whose runs ended
# last), per agent address the figures its REGISTER carries (running,
# queued, spooled, last result); the exposition parsed by Prometheus' own
# parser (tests/test_metrics.py).  An agent that sends no figures (xxl_peer,
# as an outside agent) registers and is counted, without agent series.
. "$(dirname "$0")/lib.sh"
xxl_setup
PY=/usr/bin/python3
"$PY" -c 'import prometheus_client.parser' 2>/dev/null || {
    echo "FAIL - python3-prometheus-client is not installed (scripts/deps)"; FAILED=1; exit 1; }
cat >> "$T/scheduler.cfg" <<CFG
    http
        metrics_jobs = 2
CFG
export XXL_SCHEDULER_ARGS="--http 127.0.0.1:0"
start_scheduler || exit 1
ctl group add metrics-app >/dev/null
ctl group add peer-app >/dev/null
start_agent m1 metrics-app
check "the agent registers" wait_for 10 agent_registered metrics-app m1
URL="http://$HTTP_EP/metrics"
# has SECONDS EXPECT: the samples of EXPECT appear within SECONDS (the
# differences printed when they do not)
has () { "$PY" "$XXL_SRC/tests/test_metrics.py" "$URL" "$1" "$2"; }

printf 'exit 3\n' > "$T/fail.sh"
OK=$(ctl --get .id job add --group metrics-app --handler demoJobHandler)
BAD=$(ctl --get .id job add --group metrics-app --glue-type GLUE_SHELL --glue-source "$T/fail.sh")
for _ in 1 2; do
    L=$(ctl --get '.logIds[0]' job trigger "$OK"); wait_for 10 log_finished "$L"
    L=$(ctl --get '.logIds[0]' job trigger "$BAD"); wait_for 10 log_finished "$L"
done
check "per job: runs by code, last result, failures in a row" has 10 "[
    [\"xxl_job_runs_total\", {\"job\": \"$OK\", \"app\": \"metrics-app\", \"code\": \"200\"}, 2],
    [\"xxl_job_runs_total\", {\"job\": \"$BAD\", \"app\": \"metrics-app\", \"code\": \"500\"}, 2],
    [\"xxl_job_last_result\", {\"job\": \"$OK\", \"app\": \"metrics-app\"}, 200],
    [\"xxl_job_last_result\", {\"job\": \"$BAD\", \"app\": \"metrics-app\"}, 500],
    [\"xxl_job_failures_in_row\", {\"job\": \"$BAD\", \"app\": \"metrics-app\"}, 2],
    [\"xxl_job_failures_in_row\", {\"job\": \"$OK\", \"app\": \"metrics-app\"}, 0],
    [\"xxl_job_last_result_time_seconds\", {\"job\": \"$OK\", \"app\": \"metrics-app\"}, null]]"
check "per app: agents connected, runs by code" has 10 '[
    ["xxl_app_agents_connected", {"app": "metrics-app"}, 1],
    ["xxl_app_runs_total", {"app": "metrics-app", "code": "200"}, 2],
    ["xxl_app_runs_total", {"app": "metrics-app", "code": "500"}, 2]]'
check "per agent: the figures of its REGISTER (last result: the failing job's)" has 10 '[
    ["xxl_agent_runs_running", {"app": "metrics-app", "address": "m1"}, 0],
    ["xxl_agent_runs_queued", {"app": "metrics-app", "address": "m1"}, 0],
    ["xxl_agent_results_spooled", {"app": "metrics-app", "address": "m1"}, 0],
    ["xxl_agent_last_result", {"app": "metrics-app", "address": "m1"}, 500]]'

# A third job: http/metrics_jobs = 2, the job whose runs ended longest ago
# ($OK's) is no longer labelled
THIRD=$(ctl --get .id job add --group metrics-app --handler demoJobHandler)
L=$(ctl --get '.logIds[0]' job trigger "$BAD"); wait_for 10 log_finished "$L"
L=$(ctl --get '.logIds[0]' job trigger "$THIRD"); wait_for 10 log_finished "$L"
check "at most http/metrics_jobs jobs are labelled: the latest two" has 10 "[
    [\"xxl_job_runs_total\", {\"job\": \"$THIRD\", \"app\": \"metrics-app\", \"code\": \"200\"}, 1],
    [\"xxl_job_failures_in_row\", {\"job\": \"$BAD\", \"app\": \"metrics-app\"}, 3]]"
check "... the other one is gone" bash -c "! curl -s '$URL' | grep -q 'job=\"$OK\"'"
check "... and the app's counts go on" has 10 '[
    ["xxl_app_runs_total", {"app": "metrics-app", "code": "200"}, 3]]'

# An agent sending no figures (as one written from docs/protocol.md alone)
# or with one ill-typed (ignored, never refused)
REG="registryGroup=s:EXECUTOR registryKey=s:peer-app registryValue=s:peer-1"
# shellcheck disable=SC2086
"$XXL_PEER" "$AGENTS" --timeout 5000 -- send REGISTER $REG \
    -- send REGISTER $REG running=s:many -- expect NEVER >"$T/peer.json" 2>&1 &
PEER=$!
check "an agent without figures registers" wait_for 10 agent_registered peer-app peer-1
check "... both REGISTERs answered 200 (an ill-typed figure is ignored)" wait_for 10 bash -c \
    "jq -s -e '.[0].code == 200 and .[1].code == 200' '$T/peer.json' >/dev/null"
check "... is counted for its app" has 10 '[["xxl_app_agents_connected", {"app": "peer-app"}, 1]]'
check "... and has no agent series" bash -c "! curl -s '$URL' | grep -q 'address=\"peer-1\"'"
wait "$PEER"
kill "$APID_m1"
check "the agent series of a gone agent go" wait_for 15 bash -c \
    "! curl -s '$URL' | grep -q 'address=\"m1\"'"
check "... and its app shows 0 agents connected" has 15 '[
    ["xxl_app_agents_connected", {"app": "metrics-app"}, 0]]'

# Both 0: no labelled series (conf/xxl-scheduler.cfg); a job changed and
# runs end as before
kill "$SPID"; wait "$SPID" 2>/dev/null
sed -i 's/^        metrics_jobs = 2$/        metrics_jobs = 0\n        metrics_agents = 0/' "$T/scheduler.cfg"
start_scheduler || exit 1
URL="http://$HTTP_EP/metrics"
start_agent m2 metrics-app
check "no labels: the agent registers" wait_for 10 agent_registered metrics-app m2
ctl job update "$THIRD" --param changed >/dev/null
L=$(ctl --get '.logIds[0]' job trigger "$THIRD")
check "no labels: a changed job's run ends ok" wait_for 10 field_is "$L" handleCode 200
check "... the scheduler serves on" kill -0 "$SPID"
# (the counters reach /metrics within a second)
counted_unlabelled () {
    curl -s "$URL" > "$T/nolabels.txt" && grep -q '^xxl_runs_total{code="200"} 1$' "$T/nolabels.txt"
}
check "... the run is counted" wait_for 5 counted_unlabelled
check "... with no app, job or agent series" bash -c "! grep -E 'app=|job=|address=' '$T/nolabels.txt'"

# Triggers by type: a workflow's nodes (WORKFLOW: one that runs, one that
# fails at once, its param over 64 KiB once rendered) and a backfill's
# runs (BACKFILL) are counted as the other triggers are
printf '{"nodes": [{"id": "a", "job": %s}, {"id": "b", "job": %s, "param": "${flow.param}${flow.param}"}]}' \
    "$THIRD" "$THIRD" > "$T/flow.json"
FLOW=$(ctl --get .id workflow add --name counted --file "$T/flow.json")
RUN=$(ctl workflow trigger "$FLOW" --param "$(head -c 40000 /dev/zero | tr '\0' x)" | jq -r .runId)
flow_ended () { ctl workflow run show "$RUN" | jq -e '.status == "FAILURE"' >/dev/null; }
check "a workflow run ends (node b failed at once)" wait_for 10 flow_ended
CRON=$(ctl --get .id job add --group metrics-app --handler demoJobHandler --cron '0 0 * * * ?')
NOW=$(($(date +%s) * 1000))
ctl job backfill "$CRON" --from $((NOW - 7200000 + 1)) --to "$NOW" >/dev/null
check "triggers by type: WORKFLOW and BACKFILL too" has 10 '[
    ["xxl_triggers_total", {"type": "WORKFLOW"}, 2],
    ["xxl_triggers_total", {"type": "BACKFILL"}, 2],
    ["xxl_triggers_total", {"type": "MANUAL"}, 1]]'
xxl_done
