# tests/faults/flow_lib.sh -- what the workflow scenarios share (sourced
# after lib.sh): the 10-node DAG, the client loop that triggers runs and
# records each runId it got, and the dump of runs and node rows that
# flow_check.py reads.

# flow_dag10 OK BAD N2_SLEEP: the DAG (all and any joins, success, failure
# and always edges, ${flow.param} and ${NODE.msg}) on stdout; OK and BAD
# are probe jobs (BAD's param says fail), n2 sleeps N2_SLEEP ms
flow_dag10 () {
    local ok=$1 bad=$2 n2=$3
    sed "s/@OK@/$ok/g; s/@BAD@/$bad/g; s/@N2@/$n2/g" <<'JSON'
{"nodes": [{"id": "n0", "job": @OK@, "param": "sleep=30"},
           {"id": "n1", "job": @OK@, "param": "${flow.param}"},
           {"id": "n2", "job": @OK@, "param": "sleep=@N2@"},
           {"id": "n3", "job": @OK@, "param": "sleep=10"},
           {"id": "n4", "job": @OK@, "param": "sleep=10"},
           {"id": "n5", "job": @OK@, "join": "all"},
           {"id": "n6", "job": @OK@, "join": "any", "param": "sleep=10"},
           {"id": "n7", "job": @OK@, "param": "sleep=10 from-n1=${n1.msg}"},
           {"id": "n8", "job": @BAD@},
           {"id": "n9", "job": @OK@, "join": "any", "param": "${flow.param}"}],
 "edges": [{"from": "n0", "to": "n1"}, {"from": "n0", "to": "n2"},
           {"from": "n1", "to": "n3"}, {"from": "n1", "to": "n4", "on": "failure"},
           {"from": "n2", "to": "n5"}, {"from": "n3", "to": "n5"},
           {"from": "n3", "to": "n6"}, {"from": "n4", "to": "n6"},
           {"from": "n5", "to": "n7", "on": "always"}, {"from": "n2", "to": "n8"},
           {"from": "n7", "to": "n9", "on": "always"}, {"from": "n8", "to": "n9", "on": "failure"},
           {"from": "n6", "to": "n9"}]}
JSON
}

# flow_load_start API "W ...": a client triggering runs of the workflows
# in turn through API, params cycling through a success, a failure of n1
# (handled) and of n1 and n9 (not handled); each runId it got is appended
# to $RUNS_ACKED; sets LOADPID; stops when $T/stop-load exists
flow_load_start () {
    rm -f "$T/stop-load"
    local via=$1 list=$2
    (
        set +e
        params=("sleep=20" "fail" "sleep=10 fail")
        ws=($list); i=0
        while [ ! -f "$T/stop-load" ]; do
            p=${params[$((i % 3))]}; w=${ws[$((i % ${#ws[@]}))]}; i=$((i + 1))
            out=$("$CTL" --api "$via" --json --timeout 2000 workflow trigger "$w" --param "$p" 2>/dev/null) \
                || continue
            printf '%s' "$out" | jq -r '.runId // empty' >> "$RUNS_ACKED"
            sleep 0.05
        done
    ) &
    LOADPID=$!
    BGPIDS="$BGPIDS $LOADPID"
}
flow_load_stop () {
    touch "$T/stop-load"
    timeout 20 tail --pid="$LOADPID" -f /dev/null
    return 0
}

flow_running () { [ "$(sql "SELECT COUNT(*) FROM xxl_workflow_run WHERE status = 'RUNNING'")" = 0 ]; }

# flow_wait_end SECONDS: waits until no run is RUNNING; fails once SECONDS
# pass with none ending, or after 600 s in all.  A backlog that still
# drains is not a hang: the node jobs are SERIAL_EXECUTION, so an agent
# runs their rows one at a time (about 17 a second with the DAG's sleeps),
# and a long form's open-loop load may leave hundreds queued at its end
flow_wait_end () {
    local n last end stop
    last=$(sql "SELECT COUNT(*) FROM xxl_workflow_run WHERE status = 'RUNNING'")
    end=$(( $(now_ms) + $1 * 1000 )); stop=$(( $(now_ms) + 600000 ))
    while :; do
        n=$(sql "SELECT COUNT(*) FROM xxl_workflow_run WHERE status = 'RUNNING'")
        [ "$n" = 0 ] && return 0
        if [ -n "$n" ] && [ -n "$last" ] && [ "$n" -lt "$last" ]; then
            end=$(( $(now_ms) + $1 * 1000 ))
        fi
        [ -n "$n" ] && last=$n
        [ "$(now_ms)" -lt "$end" ] && [ "$(now_ms)" -lt "$stop" ] || return 1
        sleep 0.2
    done
}

# flow_stuck: the rows of up to two runs still RUNNING that have not
# ended, indented (what a failed "every run ends" shows of its cause):
# node, log id, address, trigger and handle codes; and the schedulers'
# last lines about those log ids
flow_stuck () {
    local run id
    for run in $(sql "SELECT id FROM xxl_workflow_run WHERE status = 'RUNNING' ORDER BY id LIMIT 2"); do
        echo "    run $run, its rows not ended (node, log id, address, trigger, handle):"
        sql "SELECT flow_node, id, executor_address, trigger_code, handle_code FROM xxl_job_log
             WHERE flow_run_id = $run AND handle_code = 0 AND trigger_code IN (0, 200)
             ORDER BY id" | sed 's/^/      /'
        for id in $(sql "SELECT id FROM xxl_job_log WHERE flow_run_id = $run AND handle_code = 0
                         AND trigger_code IN (0, 200)"); do
            grep -h -e "log $id[^0-9]" -e "logId $id[^0-9]" "$T"/scheduler*.log 2>/dev/null \
                | tail -n 3 | cut -c 1-200 | sed 's/^/      /'
        done
    done
}

# flow_verdict DAG: every run and node row of the store dumped, and
# flow_check.py's verdict on them (a check, and its last lines)
flow_verdict () {
    sql "SELECT id, status FROM xxl_workflow_run ORDER BY id" > "$T/runs.txt"
    sql "SELECT flow_run_id, flow_node, id, trigger_time, COALESCE (handle_time, 0), trigger_code,
                handle_code FROM xxl_job_log WHERE flow_run_id IS NOT NULL ORDER BY id" > "$T/rows.txt"
    local lost
    lost=$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE flow_run_id IS NOT NULL AND handle_code = 500
                AND handle_msg NOT LIKE 'probe: failed%'")
    say "$(wc -l < "$T/runs.txt") runs, $(wc -l < "$T/rows.txt") node rows, $lost failed by a fault;" \
        "statuses: $(cut -d'|' -f2 "$T/runs.txt" | sort | uniq -c | tr '\n' ' ')"
    check "every node ran once or was skipped as the rules decide (flow_check.py)" \
        python3 "$FAULTS_DIR/flow_check.py" "$1" "$T/runs.txt" "$T/rows.txt" "$PROBE" "$RUNS_ACKED"
    python3 "$FAULTS_DIR/flow_check.py" "$1" "$T/runs.txt" "$T/rows.txt" "$PROBE" "$RUNS_ACKED" \
        | tail -n 25
}
